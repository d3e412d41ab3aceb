/* spec.c - see spec.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/spec.h"
#include "util/cleanup.h"

/* A field: the object keys leading to it from the root of config.json. */
struct field {
	const char *const *keys;
	size_t n;
};

#define KEYS(...)             \
	(const char *const[]) \
	{                     \
		__VA_ARGS__   \
	}
#define FIELD(...) ((struct field){KEYS(__VA_ARGS__), ARRAY_SIZE(KEYS(__VA_ARGS__))})

/* The JSON pointer of the first n keys of f ("" for the root), or NULL on OOM. */
static char *field_pointer(struct field f, size_t n)
{
	char *out = strdup("");

	for (size_t i = 0; i < n && out != NULL; i++) {
		cleanup_free char *esc = ts_json_pointer_escape(f.keys[i]);
		char *next = NULL;

		if (esc == NULL || asprintf(&next, "%s/%s", out, esc) < 0)
			next = NULL;
		free(out);
		out = next;
	}
	return out;
}

/* "'<pointer of f's first n keys>[/index]': expected <want>, got <type of got>" */
static int type_error(struct field f, size_t n, ssize_t index, const char *want,
		      const struct ts_json *got, struct ts_error **err)
{
	cleanup_free char *ptr = field_pointer(f, n);

	if (ptr == NULL)
		return ts_error_set(err, ENOMEM, "cannot describe a type error");
	if (index >= 0)
		return ts_error_set(err, 0, "'%s/%zd': expected %s, got %s", ptr, index, want,
				    ts_json_type_name(got->type));
	return ts_error_set(err, 0, "'%s': expected %s, got %s", ptr, want,
			    ts_json_type_name(got->type));
}

static bool is_unset(const struct ts_json *j)
{
	return j == NULL || j->type == TS_JSON_NULL;
}

/*
 * Find field f with the given type.
 * @return 1 and *ret; 0 when it or an object on the way is absent or null; -EINVAL on a type
 *         mismatch anywhere on the way.
 */
static int lookup(const struct ts_json *config, struct field f, enum ts_json_type type,
		  struct ts_json **ret, struct ts_error **err)
{
	struct ts_json *cur = (struct ts_json *)(uintptr_t)config;

	for (size_t i = 0; i < f.n; i++) {
		struct ts_json *next;

		if (cur->type != TS_JSON_OBJECT)
			return type_error(f, i, -1, "object", cur, err);
		next = ts_json_get(cur, f.keys[i]);
		if (is_unset(next))
			return 0;
		cur = next;
	}
	if (cur->type != type)
		return type_error(f, f.n, -1, ts_json_type_name(type), cur, err);
	*ret = cur;
	return 1;
}

/*
 * Get field f as a container of the given type, creating it and the objects on the way (also in
 * place of a null).  @return 0 and *ret (borrowed); -EINVAL on a type mismatch; -ENOMEM.
 */
static int ensure(struct ts_json *config, struct field f, enum ts_json_type type,
		  struct ts_json **ret, struct ts_error **err)
{
	struct ts_json *cur = config;
	int r;

	if (cur->type != TS_JSON_OBJECT)
		return type_error(f, 0, -1, "object", cur, err);
	for (size_t i = 0; i < f.n; i++) {
		enum ts_json_type want = i + 1 == f.n ? type : TS_JSON_OBJECT;
		struct ts_json *next = ts_json_get(cur, f.keys[i]);

		if (is_unset(next)) {
			next = want == TS_JSON_OBJECT ? ts_json_new_object() : ts_json_new_array();
			r = ts_json_object_set(cur, f.keys[i], next, err);
			if (r < 0)
				return r;
		} else if (next->type != want) {
			return type_error(f, i + 1, -1, ts_json_type_name(want), next, err);
		}
		cur = next;
	}
	*ret = cur;
	return 0;
}

/* Set field f (the last key) to value, creating the objects on the way; takes value. */
static int set_field(struct ts_json *config, struct field f, struct ts_json *value,
		     struct ts_error **err)
{
	cleanup_json struct ts_json *val = value;
	struct ts_json *parent = NULL;
	int r;

	r = ensure(config, (struct field){f.keys, f.n - 1}, TS_JSON_OBJECT, &parent, err);
	if (r < 0)
		return r;
	return ts_json_object_set(parent, f.keys[f.n - 1], TAKE_PTR(val), err);
}

static int number_error(struct field f, const struct ts_json *j, int r, struct ts_error **err)
{
	cleanup_free char *ptr = field_pointer(f, f.n);

	if (ptr == NULL)
		return ts_error_set(err, ENOMEM, "cannot describe a number error");
	if (r == -ERANGE)
		return ts_error_set_plain(err, ERANGE, "'%s': out of range '%s'", ptr, j->u.number);
	return ts_error_set(err, 0, "'%s': not an integer '%s'", ptr, j->u.number);
}

static int get_u64(const struct ts_json *config, struct field f, uint64_t *ret,
		   struct ts_error **err)
{
	struct ts_json *j = NULL;
	uint64_t v;
	int r;

	r = lookup(config, f, TS_JSON_NUMBER, &j, err);
	if (r <= 0)
		return r;
	r = ts_json_get_uint64(j, &v);
	if (r < 0)
		return number_error(f, j, r, err);
	*ret = v;
	return 1;
}

static int get_i64(const struct ts_json *config, struct field f, int64_t *ret,
		   struct ts_error **err)
{
	struct ts_json *j = NULL;
	int64_t v;
	int r;

	r = lookup(config, f, TS_JSON_NUMBER, &j, err);
	if (r <= 0)
		return r;
	r = ts_json_get_int64(j, &v);
	if (r < 0)
		return number_error(f, j, r, err);
	*ret = v;
	return 1;
}

static int get_str(const struct ts_json *config, struct field f, const char **ret,
		   struct ts_error **err)
{
	struct ts_json *j = NULL;
	int r;

	r = lookup(config, f, TS_JSON_STRING, &j, err);
	if (r <= 0)
		return r;
	*ret = j->u.string;
	return 1;
}

static int set_str(struct ts_json *config, struct field f, const char *s, struct ts_error **err)
{
	if (s == NULL) {
		cleanup_free char *ptr = field_pointer(f, f.n);

		return ts_error_set(err, 0, "'%s': no value given", ptr ? ptr : "");
	}
	return set_field(config, f, ts_json_new_string(s), err);
}

/* ---- annotations -------------------------------------------------------------------------- */

int ts_oci_annotation_get(const struct ts_json *config, const char *key, const char **ret_value,
			  struct ts_error **err)
{
	return get_str(config, FIELD("annotations", key), ret_value, err);
}

int ts_oci_annotation_set(struct ts_json *config, const char *key, const char *value,
			  struct ts_error **err)
{
	if (key == NULL || key[0] == '\0')
		return ts_error_set(err, 0, "'/annotations': empty key");
	return set_str(config, FIELD("annotations", key), value, err);
}

int ts_oci_annotation_remove(struct ts_json *config, const char *key, struct ts_error **err)
{
	struct ts_json *annotations = NULL;
	int r;

	r = lookup(config, FIELD("annotations"), TS_JSON_OBJECT, &annotations, err);
	if (r <= 0)
		return r;
	return (int)ts_json_object_remove(annotations, key);
}

/* ---- process ------------------------------------------------------------------------------ */

/* Index of the first env entry named like the "NAME=" prefix of len bytes, -1 if none. */
static int env_find(const struct ts_json *env, const char *prefix, size_t len, ssize_t *ret,
		    struct ts_error **err)
{
	struct ts_json *item;
	size_t i;

	*ret = -1;
	ts_json_array_foreach (env, i, item) {
		if (item->type != TS_JSON_STRING)
			return type_error(FIELD("process", "env"), 2, (ssize_t)i, "string", item,
					  err);
		if (*ret < 0 && strncmp(item->u.string, prefix, len) == 0)
			*ret = (ssize_t)i;
	}
	return 0;
}

int ts_oci_env_set(struct ts_json *config, const char *name_value, struct ts_error **err)
{
	const char *eq = name_value ? strchr(name_value, '=') : NULL;
	struct ts_json *env = NULL;
	ssize_t at;
	int r;

	if (eq == NULL || eq == name_value)
		return ts_error_set(err, 0,
				    "'/process/env': invalid entry '%s' (expected NAME=VALUE)",
				    name_value ? name_value : "");
	r = ensure(config, FIELD("process", "env"), TS_JSON_ARRAY, &env, err);
	if (r < 0)
		return r;
	r = env_find(env, name_value, (size_t)(eq - name_value) + 1, &at, err);
	if (r < 0)
		return r;
	if (at >= 0)
		return ts_json_array_replace(env, (size_t)at, ts_json_new_string(name_value), err);
	return ts_json_array_append(env, ts_json_new_string(name_value), err);
}

int ts_oci_env_get(const struct ts_json *config, const char *name, const char **ret_value,
		   struct ts_error **err)
{
	cleanup_free char *prefix = NULL;
	struct ts_json *env = NULL;
	ssize_t at;
	int r;

	r = lookup(config, FIELD("process", "env"), TS_JSON_ARRAY, &env, err);
	if (r <= 0)
		return r;
	if (asprintf(&prefix, "%s=", name) < 0)
		return ts_error_set(err, ENOMEM, "'/process/env': cannot look up '%s'", name);
	r = env_find(env, prefix, strlen(prefix), &at, err);
	if (r < 0)
		return r;
	if (at < 0)
		return 0;
	*ret_value = env->u.array.items[at]->u.string + strlen(prefix);
	return 1;
}

int ts_oci_process_get_uid(const struct ts_json *config, uint32_t *ret_uid, struct ts_error **err)
{
	struct field f = FIELD("process", "user", "uid");
	struct ts_json *j = NULL;
	uint64_t v = 0;
	int r;

	r = lookup(config, f, TS_JSON_NUMBER, &j, err);
	if (r <= 0)
		return r;
	r = ts_json_get_uint64(j, &v);
	if (r == 0 && v > UINT32_MAX)
		r = -ERANGE;
	if (r < 0)
		return number_error(f, j, r, err);
	*ret_uid = (uint32_t)v;
	return 1;
}

/* ---- hooks -------------------------------------------------------------------------------- */

static const char *const hook_names[] = {
	"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
};

bool ts_oci_hook_name_valid(const char *name)
{
	for (size_t i = 0; name != NULL && i < ARRAY_SIZE(hook_names); i++)
		if (strcmp(name, hook_names[i]) == 0)
			return true;
	return false;
}

/* A JSON array of the strings of a NULL-terminated vector, or NULL on OOM. */
static struct ts_json *strv_to_json(const char *const *v)
{
	cleanup_json struct ts_json *arr = ts_json_new_array();

	if (arr == NULL)
		return NULL;
	for (; *v != NULL; v++)
		if (ts_json_array_append(arr, ts_json_new_string(*v), NULL) < 0)
			return NULL;
	return TAKE_PTR(arr);
}

static int hook_to_json(const struct ts_oci_hook *hook, struct ts_json **ret, struct ts_error **err)
{
	cleanup_json struct ts_json *obj = ts_json_new_object();
	int r;

	if (obj == NULL)
		return ts_error_set(err, ENOMEM, "cannot build hook");
	r = ts_json_object_set(obj, "path", ts_json_new_string(hook->path), err);
	if (r == 0 && hook->args != NULL)
		r = ts_json_object_set(obj, "args", strv_to_json(hook->args), err);
	if (r == 0 && hook->env != NULL)
		r = ts_json_object_set(obj, "env", strv_to_json(hook->env), err);
	if (r == 0 && hook->timeout_sec > 0)
		r = ts_json_object_set(obj, "timeout", ts_json_new_int(hook->timeout_sec), err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(obj);
	return 0;
}

int ts_oci_hook_append(struct ts_json *config, const char *hook_name,
		       const struct ts_oci_hook *hook, struct ts_error **err)
{
	struct ts_json *list = NULL, *entry = NULL;
	int r;

	if (!ts_oci_hook_name_valid(hook_name))
		return ts_error_set(err, 0, "unknown hook list '%s'", hook_name ? hook_name : "");
	if (hook == NULL || hook->path == NULL || hook->path[0] != '/')
		return ts_error_set(err, 0, "'/hooks/%s': path not absolute '%s'", hook_name,
				    hook && hook->path ? hook->path : "");
	if (hook->timeout_sec < 0)
		return ts_error_set(err, 0, "'/hooks/%s': timeout must be positive '%d'", hook_name,
				    hook->timeout_sec);
	r = ensure(config, FIELD("hooks", hook_name), TS_JSON_ARRAY, &list, err);
	if (r < 0)
		return r;
	r = hook_to_json(hook, &entry, err);
	if (r < 0)
		return r;
	return ts_json_array_append(list, entry, err);
}

/* ---- linux -------------------------------------------------------------------------------- */

int ts_oci_linux_get_cgroups_path(const struct ts_json *config, const char **ret,
				  struct ts_error **err)
{
	return get_str(config, FIELD("linux", "cgroupsPath"), ret, err);
}

int ts_oci_linux_has_user_namespace(const struct ts_json *config, struct ts_error **err)
{
	struct field f = FIELD("linux", "namespaces");
	struct ts_json *list = NULL, *ns;
	size_t i;
	int r;

	r = lookup(config, f, TS_JSON_ARRAY, &list, err);
	if (r <= 0)
		return r;
	ts_json_array_foreach (list, i, ns) {
		struct ts_json *type;

		if (ns->type != TS_JSON_OBJECT)
			return type_error(f, 2, (ssize_t)i, "object", ns, err);
		type = ts_json_get(ns, "type");
		if (is_unset(type))
			continue;
		if (type->type != TS_JSON_STRING) {
			cleanup_free char *ptr = field_pointer(f, 2);

			return ts_error_set(err, 0, "'%s/%zu/type': expected string, got %s",
					    ptr ? ptr : "", i, ts_json_type_name(type->type));
		}
		if (strcmp(type->u.string, "user") == 0)
			return 1;
	}
	return 0;
}

#define CPU_FIELD(name) FIELD("linux", "resources", "cpu", name)

int ts_oci_cpu_get_cpus(const struct ts_json *config, const char **ret_cpus_str,
			struct ts_error **err)
{
	return get_str(config, CPU_FIELD("cpus"), ret_cpus_str, err);
}

int ts_oci_cpu_set_cpus(struct ts_json *config, const char *cpus_str, struct ts_error **err)
{
	return set_str(config, CPU_FIELD("cpus"), cpus_str, err);
}

int ts_oci_cpu_get_mems(const struct ts_json *config, const char **ret_mems_str,
			struct ts_error **err)
{
	return get_str(config, CPU_FIELD("mems"), ret_mems_str, err);
}

int ts_oci_cpu_set_mems(struct ts_json *config, const char *mems_str, struct ts_error **err)
{
	return set_str(config, CPU_FIELD("mems"), mems_str, err);
}

int ts_oci_cpu_get_shares(const struct ts_json *config, uint64_t *ret, struct ts_error **err)
{
	return get_u64(config, CPU_FIELD("shares"), ret, err);
}

int ts_oci_cpu_set_shares(struct ts_json *config, uint64_t shares, struct ts_error **err)
{
	return set_field(config, CPU_FIELD("shares"), ts_json_new_uint(shares), err);
}

int ts_oci_cpu_get_quota(const struct ts_json *config, int64_t *ret_usec, struct ts_error **err)
{
	return get_i64(config, CPU_FIELD("quota"), ret_usec, err);
}

int ts_oci_cpu_set_quota(struct ts_json *config, int64_t quota_usec, struct ts_error **err)
{
	return set_field(config, CPU_FIELD("quota"), ts_json_new_int(quota_usec), err);
}

int ts_oci_cpu_get_period(const struct ts_json *config, uint64_t *ret_usec, struct ts_error **err)
{
	return get_u64(config, CPU_FIELD("period"), ret_usec, err);
}

int ts_oci_cpu_set_period(struct ts_json *config, uint64_t period_usec, struct ts_error **err)
{
	return set_field(config, CPU_FIELD("period"), ts_json_new_uint(period_usec), err);
}

int ts_oci_memory_get_limit(const struct ts_json *config, int64_t *ret_bytes, struct ts_error **err)
{
	return get_i64(config, FIELD("linux", "resources", "memory", "limit"), ret_bytes, err);
}

int ts_oci_memory_set_limit(struct ts_json *config, int64_t limit_bytes, struct ts_error **err)
{
	return set_field(config, FIELD("linux", "resources", "memory", "limit"),
			 ts_json_new_int(limit_bytes), err);
}
