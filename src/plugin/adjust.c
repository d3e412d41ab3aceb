/*
 * adjust.c - the "adjust" a pre-create plugin may return: checked against
 * what a plugin may change, then merged into config.json.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oci/spec.h"
#include "plugin/internal.h"
#include "util/cleanup.h"

/* OCI runtime-spec v1.2.0 config-linux.md, members of /linux/resources. */
static const char *const resource_keys[] = {"devices",	      "memory",	 "cpu",	 "blockIO",
					    "hugepageLimits", "network", "pids", "rdma",
					    "unified",	      NULL};

static bool in_list(const char *const *list, const char *s)
{
	for (size_t i = 0; list[i] != NULL; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* "0-3,8,10-11": numbers and ascending ranges, comma-separated. */
static bool cpu_list_valid(const char *s)
{
	if (*s == '\0')
		return false;
	while (*s != '\0') {
		unsigned long a, b;
		char *end;

		if (!isdigit((unsigned char)*s))
			return false;
		a = strtoul(s, &end, 10);
		b = a;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return false;
			b = strtoul(end + 1, &end, 10);
		}
		if (b < a || b >= 1u << 20)
			return false;
		if (*end == ',' && end[1] != '\0')
			end++;
		else if (*end != '\0')
			return false;
		s = end;
	}
	return true;
}

static int expect(const struct ts_json *v, enum ts_json_type t, const char *what,
		  const char *pointer, struct ts_error **err)
{
	if (v->type == t)
		return 0;
	return ts_error_set(err, 0, "%s: '%s': expected %s, got %s", what, pointer,
			    ts_json_type_name(t), ts_json_type_name(v->type));
}

static int validate_cpu(const struct ts_json *cpu, const char *what, struct ts_error **err)
{
	static const char *const fields[] = {"cpus", "mems"};
	int r;

	r = expect(cpu, TS_JSON_OBJECT, what, "/linux/resources/cpu", err);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(fields); i++) {
		struct ts_json *v = ts_json_get(cpu, fields[i]);
		cleanup_free char *pointer = NULL;

		if (v == NULL)
			continue;
		if (asprintf(&pointer, "/linux/resources/cpu/%s", fields[i]) < 0)
			return ts_error_set(err, ENOMEM, "%s", what);
		r = expect(v, TS_JSON_STRING, what, pointer, err);
		if (r >= 0 && !cpu_list_valid(v->u.string))
			r = ts_error_set(err, 0, "%s: '%s': invalid cpu list '%s'", what, pointer,
					 v->u.string);
	}
	return r;
}

static int validate_linux(const struct ts_json *linux_, const char *what, struct ts_error **err)
{
	struct ts_json *v, *res = NULL;
	const char *key;
	size_t i;
	int r;

	r = expect(linux_, TS_JSON_OBJECT, what, "/linux", err);
	if (r < 0)
		return r;
	ts_json_object_foreach (linux_, i, key, v) {
		cleanup_free char *esc = ts_json_pointer_escape(key);

		if (strcmp(key, "resources") != 0)
			return ts_error_set(err, 0, "%s: '/linux/%s': not allowed", what,
					    esc != NULL ? esc : "?");
		res = v;
	}
	if (res == NULL)
		return 0;
	r = expect(res, TS_JSON_OBJECT, what, "/linux/resources", err);
	ts_json_object_foreach (res, i, key, v) {
		cleanup_free char *esc = ts_json_pointer_escape(key);

		if (r < 0)
			break;
		if (!in_list(resource_keys, key))
			return ts_error_set(err, 0, "%s: '/linux/resources/%s': not allowed", what,
					    esc != NULL ? esc : "?");
		if (strcmp(key, "cpu") == 0)
			r = validate_cpu(v, what, err);
	}
	return r;
}

static int validate_process(const struct ts_json *process, const char *what, struct ts_error **err)
{
	struct ts_json *v, *item;
	const char *key;
	size_t i, k;
	int r;

	r = expect(process, TS_JSON_OBJECT, what, "/process", err);
	if (r < 0)
		return r;
	ts_json_object_foreach (process, i, key, v) {
		cleanup_free char *esc = ts_json_pointer_escape(key);

		if (strcmp(key, "env") != 0)
			return ts_error_set(err, 0, "%s: '/process/%s': not allowed", what,
					    esc != NULL ? esc : "?");
		r = expect(v, TS_JSON_ARRAY, what, "/process/env", err);
		if (r < 0)
			return r;
		ts_json_array_foreach (v, k, item) {
			if (item->type != TS_JSON_STRING)
				return ts_error_set(
					err, 0, "%s: '/process/env/%zu': expected string, got %s",
					what, k, ts_json_type_name(item->type));
			if (item->u.string[0] == '=' || strchr(item->u.string, '=') == NULL)
				return ts_error_set(err, 0,
						    "%s: '/process/env/%zu': invalid entry '%s' "
						    "(expected NAME=VALUE)",
						    what, k, item->u.string);
		}
	}
	return 0;
}

static int validate_annotations(const struct ts_json *a, const char *what, struct ts_error **err)
{
	struct ts_json *v;
	const char *key;
	size_t i;
	int r;

	r = expect(a, TS_JSON_OBJECT, what, "/annotations", err);
	if (r < 0)
		return r;
	ts_json_object_foreach (a, i, key, v) {
		cleanup_free char *esc = ts_json_pointer_escape(key);

		if (key[0] == '\0')
			return ts_error_set(err, 0, "%s: '/annotations': empty key", what);
		if (v->type != TS_JSON_STRING)
			return ts_error_set(err, 0,
					    "%s: '/annotations/%s': expected string, got %s", what,
					    esc != NULL ? esc : "?", ts_json_type_name(v->type));
	}
	return 0;
}

int ts_plugin_adjust_validate(const struct ts_json *adjust, const char *what, struct ts_error **err)
{
	struct ts_json *v;
	const char *key;
	size_t i;
	int r;

	r = expect(adjust, TS_JSON_OBJECT, what, "", err);
	if (r < 0)
		return r;
	ts_json_object_foreach (adjust, i, key, v) {
		cleanup_free char *esc = ts_json_pointer_escape(key);

		if (strcmp(key, "linux") == 0)
			r = validate_linux(v, what, err);
		else if (strcmp(key, "process") == 0)
			r = validate_process(v, what, err);
		else if (strcmp(key, "annotations") == 0)
			r = validate_annotations(v, what, err);
		else
			r = ts_error_set(err, 0, "%s: '/%s': not allowed", what,
					 esc != NULL ? esc : "?");
		if (r < 0)
			return r;
	}
	return 0;
}

/* Annotations of toposhim's own (oci/spec.h TS_OCI_ANNOTATION_*): what
 * toposhim placed, which its hooks read back.  No plugin writes them. */
#define OWN_ANNOTATION_PREFIX "toposhim.io/"
/* Longest value a refusal quotes. */
#define QUOTE_MAX 200

/* v, bounded and printable, for a message: a string as it is, anything
 * else as compact JSON; malloc'd, NULL on OOM. */
static char *quote(const struct ts_json *v)
{
	cleanup_free char *text = NULL, *clean = NULL;
	size_t len;
	cleanup_error struct ts_error *ignored = NULL;

	if (v->type == TS_JSON_STRING)
		text = strdup(v->u.string);
	else if (ts_json_serialize(v, false, &text, &len, &ignored) < 0)
		return NULL;
	if (text == NULL)
		return NULL;
	if (strlen(text) > QUOTE_MAX)
		strcpy(text + QUOTE_MAX - 3, "...");
	clean = ts_json_utf8_sanitize(text);
	return TAKE_PTR(clean);
}

static int refuse(const char *pointer, const char *key, const char *name, const struct ts_json *v,
		  struct ts_error **err)
{
	cleanup_free char *esc = key != NULL ? ts_json_pointer_escape(key) : NULL;
	cleanup_free char *value = quote(v);

	if (name == NULL)
		return ts_error_set(err, 0,
				    "adjust: '%s/%s': toposhim's own annotation, never from a "
				    "plugin '%s'",
				    pointer, esc != NULL ? esc : "?", value != NULL ? value : "?");
	return ts_error_set(err, 0,
			    "adjust: '%s%s%s': not allowed without \"%s\" in sandbox.adjust '%s'",
			    pointer, key != NULL ? "/" : "", esc != NULL ? esc : "", name,
			    value != NULL ? value : "?");
}

static bool annotation_allowed(const struct ts_plugin_sandbox *sb, const char *key)
{
	if (sb->adjust & TS_PLUGIN_ADJUST_ANNOTATIONS)
		return true;
	for (char **p = sb->annotation_prefixes; p != NULL && *p != NULL; p++)
		if (strncmp(key, *p, strlen(*p)) == 0)
			return true;
	return false;
}

int ts_plugin_adjust_check_privileges(const struct ts_json *adjust,
				      const struct ts_plugin_sandbox *sb, struct ts_error **err)
{
	struct ts_json *res = ts_json_get_path(adjust, "linux", "resources", NULL);
	struct ts_json *devices = ts_json_get(res, "devices");
	struct ts_json *unified = ts_json_get(res, "unified");
	struct ts_json *ann = ts_json_get(adjust, "annotations"), *v;
	const char *key;
	size_t i;

	if (devices != NULL && !(sb->adjust & TS_PLUGIN_ADJUST_DEVICES))
		return refuse("/linux/resources/devices", NULL, "devices", devices, err);
	if (unified != NULL && unified->type == TS_JSON_OBJECT &&
	    !(sb->adjust & TS_PLUGIN_ADJUST_UNIFIED)) {
		ts_json_object_foreach (unified, i, key, v)
			return refuse("/linux/resources/unified", key, "unified", v, err);
	} else if (unified != NULL && !(sb->adjust & TS_PLUGIN_ADJUST_UNIFIED)) {
		return refuse("/linux/resources/unified", NULL, "unified", unified, err);
	}
	ts_json_object_foreach (ann, i, key, v) {
		if (strncmp(key, OWN_ANNOTATION_PREFIX, strlen(OWN_ANNOTATION_PREFIX)) == 0)
			return refuse("/annotations", key, NULL, v, err);
		if (!annotation_allowed(sb, key))
			return refuse("/annotations", key, "annotations", v, err);
	}
	return 0;
}

unsigned ts_plugin_adjust_fields(const struct ts_json *adjust)
{
	struct ts_json *res = ts_json_get_path(adjust, "linux", "resources", NULL), *v;
	unsigned fields = 0;
	const char *key;
	size_t i;

	if (ts_json_get(adjust, "annotations") != NULL)
		fields |= TS_PLUGIN_ADJUST_ANNOTATIONS;
	if (ts_json_get_path(adjust, "process", "env", NULL) != NULL)
		fields |= TS_PLUGIN_ADJUST_ENV;
	ts_json_object_foreach (res, i, key, v) {
		if (strcmp(key, "devices") == 0)
			fields |= TS_PLUGIN_ADJUST_DEVICES;
		else if (strcmp(key, "unified") == 0)
			fields |= TS_PLUGIN_ADJUST_UNIFIED;
		else if (strcmp(key, "cpu") != 0)
			fields |= TS_PLUGIN_ADJUST_LIMITS;
	}
	ts_json_object_foreach (ts_json_get(res, "cpu"), i, key, v) {
		if (strcmp(key, "cpus") == 0)
			fields |= TS_PLUGIN_ADJUST_CPUS;
		else if (strcmp(key, "mems") == 0)
			fields |= TS_PLUGIN_ADJUST_MEMS;
		else
			fields |= TS_PLUGIN_ADJUST_LIMITS;
	}
	(void)v; /* the loops name members only */
	return fields;
}

const char *ts_plugin_adjust_cpus(const struct ts_json *adjust)
{
	return ts_json_get_string(ts_json_get_path(adjust, "linux", "resources", "cpu", NULL),
				  "cpus");
}

const char *ts_plugin_adjust_mems(const struct ts_json *adjust)
{
	return ts_json_get_string(ts_json_get_path(adjust, "linux", "resources", "cpu", NULL),
				  "mems");
}

/* Merge src's members into dst: objects member by member, anything else replaced. */
static int merge(struct ts_json *dst, const struct ts_json *src, struct ts_error **err)
{
	struct ts_json *v;
	const char *key;
	size_t i;
	int r;

	ts_json_object_foreach (src, i, key, v) {
		struct ts_json *old = ts_json_get(dst, key);

		if (old != NULL && old->type == TS_JSON_OBJECT && v->type == TS_JSON_OBJECT)
			r = merge(old, v, err);
		else
			r = ts_json_object_set(dst, key, ts_json_dup(v), err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int apply(struct ts_json *config, const struct ts_json *adjust, struct ts_error **err)
{
	struct ts_json *res = ts_json_get_path(adjust, "linux", "resources", NULL);
	struct ts_json *env = ts_json_get_path(adjust, "process", "env", NULL);
	struct ts_json *ann = ts_json_get(adjust, "annotations"), *v;
	const char *key;
	size_t i;
	int r;

	if (res != NULL) {
		struct ts_json *linux_, *dst;

		linux_ = ts_json_object_ensure(config, "linux", TS_JSON_OBJECT, "''", err);
		if (linux_ == NULL)
			return -EINVAL;
		dst = ts_json_object_ensure(linux_, "resources", TS_JSON_OBJECT, "'/linux'", err);
		if (dst == NULL)
			return -EINVAL;
		r = merge(dst, res, err);
		if (r < 0)
			return r;
	}
	ts_json_array_foreach (env, i, v) {
		r = ts_oci_env_set(config, v->u.string, err);
		if (r < 0)
			return r;
	}
	ts_json_object_foreach (ann, i, key, v) {
		r = ts_oci_annotation_set(config, key, v->u.string, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int ts_plugin_adjust_apply(struct ts_json *config, const struct ts_json *adjust, const char *what,
			   struct ts_error **err)
{
	cleanup_json struct ts_json *copy = NULL;
	struct ts_json tmp;
	int r;

	r = ts_plugin_adjust_validate(adjust, what, err);
	if (r < 0)
		return r;
	copy = ts_json_dup(config);
	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot apply", what);
	r = apply(copy, adjust, err);
	if (r < 0)
		return r;
	/* Swap the contents so that config's address stays valid for the caller. */
	tmp = *config;
	*config = *copy;
	*copy = tmp;
	return 0;
}

int ts_plugin_adjust_merge(struct ts_json *acc, const struct ts_json *adjust, struct ts_error **err)
{
	struct ts_json *env = ts_json_get_path(adjust, "process", "env", NULL), *v;
	struct ts_json *proc, *acc_env;
	const char *key;
	size_t i;
	int r;

	ts_json_object_foreach (adjust, i, key, v) {
		if (strcmp(key, "process") == 0)
			continue;
		struct ts_json *old = ts_json_get(acc, key);

		if (old != NULL && old->type == TS_JSON_OBJECT)
			r = merge(old, v, err);
		else
			r = ts_json_object_set(acc, key, ts_json_dup(v), err);
		if (r < 0)
			return r;
	}
	if (env == NULL)
		return 0;
	proc = ts_json_object_ensure(acc, "process", TS_JSON_OBJECT, "adjust: ''", err);
	if (proc == NULL)
		return -EINVAL;
	acc_env = ts_json_object_ensure(proc, "env", TS_JSON_ARRAY, "adjust: '/process'", err);
	if (acc_env == NULL)
		return -EINVAL;
	ts_json_array_foreach (env, i, v) {
		r = ts_json_array_append(acc_env, ts_json_dup(v), err);
		if (r < 0)
			return r;
	}
	return 0;
}
