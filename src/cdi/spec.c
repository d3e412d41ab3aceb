/*
 * spec.c - load and validate one CDI spec file.
 *
 * One strict validator runs over the JSON tree of both formats: every key
 * known (CDI main's schema), every value of the right type, names and
 * versions checked, and the minimum cdiVersion a feature needs compared with
 * the declared one.  Messages: "<file>: '<json-pointer>': <problem>".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi/internal.h"
#include "oci/role.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define SPEC_MAX_BYTES (16u << 20)
#define ANNOTATIONS_MAX_BYTES (256u << 10)

/* Known versions, oldest first; index 2 (0.3.0) is the earliest supported. */
static const char *const versions[] = {"0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0",
				       "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0"};
enum {
	V030 = 2,
	V040 = 3,
	V050 = 4,
	V060 = 5,
	V070 = 6,
	V110 = 9,
};

struct vctx {
	const char *file;
	struct ts_cdi_ptr ptr;
	struct ts_error **err;
	int need;		 /* index in versions[] the features used need */
	struct ts_cdi_ptr where; /* first field that needs it */
	const char *what;	 /* and its description */
};

static int fail(struct vctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct vctx *c, const char *fmt, ...)
{
	cleanup_free char *msg = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return ts_error_set(c->err, ENOMEM, "out of memory");
	return ts_error_set(c->err, 0, "%s: '%s': %s", c->file, ts_cdi_ptr_str(&c->ptr), msg);
}

static int oom(struct vctx *c)
{
	return ts_error_set(c->err, ENOMEM, "out of memory");
}

static void require(struct vctx *c, int version, const char *what)
{
	if (version > c->need) {
		c->need = version;
		c->where = c->ptr;
		c->what = what;
	}
}

/* Index of the first repeated key of obj (sorted once: objects may hold
 * 60,000 keys); SIZE_MAX when none, SIZE_MAX - 1 when out of memory. */
static size_t first_duplicate(const struct ts_json *obj)
{
	size_t dup;
	int r = ts_json_object_find_duplicate(obj, &dup);

	if (r < 0)
		return SIZE_MAX - 1;
	return r > 0 ? dup : SIZE_MAX;
}

struct str_at {
	const char *s;
	size_t index;
};

static int cmp_str_at(const void *a, const void *b)
{
	const struct str_at *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	if (c != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The first element of arr, in order, whose string member key an earlier
 * element has too (sorted once: a pairwise check is quadratic in 60,000
 * devices).  Elements without that string member are skipped.
 * @return 1 with *ret_index and *ret_first (the earlier one); 0; -ENOMEM.
 */
static int first_repeat(const struct ts_json *arr, const char *key, size_t *ret_index,
			size_t *ret_first)
{
	cleanup_free struct str_at *v = NULL;
	size_t n = 0, best = SIZE_MAX, first = 0;
	const struct ts_json *item;
	size_t i;

	if (arr == NULL || arr->type != TS_JSON_ARRAY || arr->u.array.len < 2)
		return 0;
	v = reallocarray(NULL, arr->u.array.len, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	ts_json_array_foreach (arr, i, item) {
		const char *str = ts_json_get_string(item, key);

		if (str != NULL)
			v[n++] = (struct str_at){str, i};
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_str_at);
	for (size_t k = 1, run = 0; k < n; k++) {
		if (strcmp(v[k - 1].s, v[k].s) != 0) {
			run = k;
			continue;
		}
		if (k == run + 1 && v[k].index < best) {
			best = v[k].index;
			first = v[run].index;
		}
	}
	if (best == SIZE_MAX)
		return 0;
	*ret_index = best;
	*ret_first = first;
	return 1;
}

/* Check obj is an object whose keys are all in allowed[] and not repeated. */
static int check_object(struct vctx *c, const struct ts_json *obj, const char *const *allowed)
{
	size_t i, dup;
	const char *key;
	struct ts_json *val;

	if (obj->type != TS_JSON_OBJECT)
		return fail(c, "expected object, got %s", ts_json_type_name(obj->type));
	dup = first_duplicate(obj);
	if (dup == SIZE_MAX - 1)
		return oom(c);
	ts_json_object_foreach (obj, i, key, val) {
		const char *const *a;
		size_t old;
		int r = 0;

		(void)val; /* keys only */
		for (a = allowed; *a != NULL; a++)
			if (strcmp(*a, key) == 0)
				break;
		old = ts_cdi_ptr_push(&c->ptr, key);
		if (*a == NULL)
			r = fail(c, "unknown key '%s'", key);
		else if (i == dup)
			r = fail(c, "duplicate key '%s'", key);
		ts_cdi_ptr_pop(&c->ptr, old);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Make node a string: strings pass, booleans and numbers become their text
 * (as the reference's YAML-to-JSON step does).  @return 0 or <0.
 */
static int as_string(struct vctx *c, struct ts_json *node)
{
	char *s;

	switch (node->type) {
	case TS_JSON_STRING:
		return 0;
	case TS_JSON_NUMBER:
		/* same char * in the union: only the tag changes */
		s = node->u.number;
		node->type = TS_JSON_STRING;
		node->u.string = s;
		return 0;
	case TS_JSON_BOOL:
		s = strdup(node->u.boolean ? "true" : "false");
		if (s == NULL)
			return oom(c);
		node->type = TS_JSON_STRING;
		node->u.string = s;
		return 0;
	default:
		return fail(c, "expected string, got %s", ts_json_type_name(node->type));
	}
}

/*
 * Look up obj[key] with c->ptr pointing at obj; null counts as absent.
 * @return the member or NULL; *r < 0 when required and absent.
 */
static struct ts_json *member(struct vctx *c, const struct ts_json *obj, const char *key,
			      bool required, int *r)
{
	struct ts_json *v = ts_json_get(obj, key);
	bool null = v != NULL && v->type == TS_JSON_NULL;

	*r = 0;
	if (null)
		v = NULL;
	if (v == NULL && required) {
		size_t old = ts_cdi_ptr_push(&c->ptr, key);

		/* there, but null (YAML's "name:" or "name: null"): said so
		 * (helper-21 read "missing" of a field it had written) */
		*r = fail(c, null ? "required field is null" : "required field missing");
		ts_cdi_ptr_pop(&c->ptr, old);
	}
	return v;
}

/* String member: *ret is NULL when absent.  @return 0 or <0. */
static int string_member(struct vctx *c, const struct ts_json *obj, const char *key, bool required,
			 const char **ret)
{
	int r;
	struct ts_json *v = member(c, obj, key, required, &r);
	size_t old;

	*ret = NULL;
	if (v == NULL)
		return r;
	old = ts_cdi_ptr_push(&c->ptr, key);
	r = as_string(c, v);
	if (r >= 0 && required && v->u.string[0] == '\0')
		r = fail(c, "empty value");
	ts_cdi_ptr_pop(&c->ptr, old);
	if (r < 0)
		return r;
	*ret = v->u.string;
	return 0;
}

/* Absolute path member (a '/' first). */
static int path_member(struct vctx *c, const struct ts_json *obj, const char *key, bool required,
		       const char **ret)
{
	int r = string_member(c, obj, key, required, ret);
	size_t old;

	if (r < 0 || *ret == NULL || (*ret)[0] == '/')
		return r;
	old = ts_cdi_ptr_push(&c->ptr, key);
	r = (*ret)[0] == '\0' ? fail(c, "empty path") : fail(c, "not absolute '%s'", *ret);
	ts_cdi_ptr_pop(&c->ptr, old);
	return r;
}

/* Absolute path in the container, without a ".." component: runc and crun
 * resolve one inside the rootfs, so "/dev/../etc/passwd" made a device
 * node at the image's /etc/passwd, left on its disk (helper-19). */
static int container_path_member(struct vctx *c, const struct ts_json *obj, const char *key,
				 const char **ret)
{
	int r = path_member(c, obj, key, true, ret);
	size_t old;

	if (r < 0 || *ret == NULL)
		return r;
	for (const char *p = *ret; (p = strstr(p, "..")) != NULL; p += 2) {
		if (p[-1] == '/' && (p[2] == '/' || p[2] == '\0')) {
			old = ts_cdi_ptr_push(&c->ptr, key);
			r = fail(c, "'..' in container path '%s'", *ret);
			ts_cdi_ptr_pop(&c->ptr, old);
			return r;
		}
	}
	return 0;
}

/* Integer member in [min, max]. @return 1 present, 0 absent, <0 error. */
static int int_member(struct vctx *c, const struct ts_json *obj, const char *key, int64_t min,
		      int64_t max, int64_t *ret)
{
	int r;
	struct ts_json *v = member(c, obj, key, false, &r);
	int64_t val = 0;
	size_t old;

	if (v == NULL)
		return 0;
	old = ts_cdi_ptr_push(&c->ptr, key);
	if (v->type == TS_JSON_STRING)
		/* a YAML number beyond a double's range stays a string (yaml.h) */
		r = fail(c, "expected integer, got string '%.64s'", v->u.string);
	else if (v->type != TS_JSON_NUMBER)
		r = fail(c, "expected integer, got %s", ts_json_type_name(v->type));
	else if (ts_json_get_int64(v, &val) < 0 || val < min || val > max)
		r = fail(c, "expected an integer from %lld to %lld, got '%s'", (long long)min,
			 (long long)max, v->u.number);
	ts_cdi_ptr_pop(&c->ptr, old);
	if (r < 0)
		return r;
	*ret = val;
	return 1;
}

/* Array of strings, each checked by check (may be NULL).  @return count or <0. */
static int strv_member(struct vctx *c, const struct ts_json *obj, const char *key,
		       int (*check)(struct vctx *, const char *))
{
	int r;
	struct ts_json *v = member(c, obj, key, false, &r), *item;
	size_t old, i;

	if (v == NULL)
		return 0;
	old = ts_cdi_ptr_push(&c->ptr, key);
	if (v->type != TS_JSON_ARRAY)
		r = fail(c, "expected array, got %s", ts_json_type_name(v->type));
	ts_json_array_foreach (v, i, item) {
		size_t o = ts_cdi_ptr_push_index(&c->ptr, i);

		r = as_string(c, item);
		if (r >= 0 && check != NULL)
			r = check(c, item->u.string);
		ts_cdi_ptr_pop(&c->ptr, o);
		if (r < 0)
			break;
	}
	ts_cdi_ptr_pop(&c->ptr, old);
	return r < 0 ? r : (int)v->u.array.len;
}

static int check_env(struct vctx *c, const char *s)
{
	const char *eq = strchr(s, '=');

	if (eq == NULL || eq == s)
		return fail(c, "invalid environment variable '%s'", s);
	return 0;
}

/* Iterate the objects of an array member; fn validates one element. */
static int objects_member(struct vctx *c, const struct ts_json *obj, const char *key,
			  int (*fn)(struct vctx *, struct ts_json *), size_t *ret_len)
{
	int r;
	struct ts_json *v = member(c, obj, key, false, &r), *item;
	size_t old, i;

	*ret_len = 0;
	if (v == NULL)
		return 0;
	old = ts_cdi_ptr_push(&c->ptr, key);
	if (v->type != TS_JSON_ARRAY)
		r = fail(c, "expected array, got %s", ts_json_type_name(v->type));
	ts_json_array_foreach (v, i, item) {
		size_t o = ts_cdi_ptr_push_index(&c->ptr, i);

		r = fn(c, item);
		ts_cdi_ptr_pop(&c->ptr, o);
		if (r < 0)
			break;
	}
	ts_cdi_ptr_pop(&c->ptr, old);
	if (r >= 0)
		*ret_len = v->u.array.len;
	return r;
}

static int validate_device_node(struct vctx *c, struct ts_json *dn)
{
	static const char *const keys[] = {"path",     "hostPath",    "type", "major", "minor",
					   "fileMode", "permissions", "uid",  "gid",   NULL};
	const char *s;
	int64_t v;
	int r;

	r = check_object(c, dn, keys);
	if (r >= 0)
		r = container_path_member(c, dn, "path", &s);
	if (r >= 0)
		r = path_member(c, dn, "hostPath", false, &s);
	if (r >= 0 && s != NULL) {
		size_t old = ts_cdi_ptr_push(&c->ptr, "hostPath");

		require(c, V050, "deviceNodes hostPath");
		ts_cdi_ptr_pop(&c->ptr, old);
	}
	if (r >= 0)
		r = string_member(c, dn, "type", false, &s);
	if (r >= 0 && s != NULL && s[0] != '\0' && strcmp(s, "b") != 0 && strcmp(s, "c") != 0 &&
	    strcmp(s, "u") != 0 && strcmp(s, "p") != 0) {
		size_t old = ts_cdi_ptr_push(&c->ptr, "type");

		r = fail(c, "invalid device type '%s' (want b, c, u or p)", s);
		ts_cdi_ptr_pop(&c->ptr, old);
	}
	/* negative numbers are refused: -1 is a wildcard in a cgroup rule; and
	 * a Linux device number has a 12-bit major and a 20-bit minor (the
	 * kernel's MINORBITS): a larger one names no device (mknod(2) would
	 * drop its high bits), so the runtime would fail or make another node */
	if (r >= 0)
		r = int_member(c, dn, "major", 0, TS_CDI_MAJOR_MAX, &v);
	if (r >= 0)
		r = int_member(c, dn, "minor", 0, TS_CDI_MINOR_MAX, &v);
	if (r >= 0)
		r = int_member(c, dn, "fileMode", 0, 07777, &v);
	if (r >= 0)
		r = int_member(c, dn, "uid", 0, UINT32_MAX, &v);
	if (r >= 0)
		r = int_member(c, dn, "gid", 0, UINT32_MAX, &v);
	if (r >= 0)
		r = string_member(c, dn, "permissions", false, &s);
	/* as the reference: "" means rwm, and letters may repeat ("rrw") */
	if (r >= 0 && s != NULL && strcmp(s, "none") != 0) {
		bool bad = false;

		for (const char *p = s; *p != '\0'; p++)
			if (*p != 'r' && *p != 'w' && *p != 'm')
				bad = true;
		if (bad) {
			size_t old = ts_cdi_ptr_push(&c->ptr, "permissions");

			r = fail(c,
				 "invalid permissions '%s' (want a combination of r, w, m, "
				 "or none)",
				 s);
			ts_cdi_ptr_pop(&c->ptr, old);
		}
	}
	return r;
}

static int validate_mount(struct vctx *c, struct ts_json *m)
{
	static const char *const keys[] = {"hostPath", "containerPath", "options", "type", NULL};
	const char *s;
	int r;

	r = check_object(c, m, keys);
	if (r >= 0)
		r = string_member(c, m, "hostPath", true, &s);
	if (r >= 0)
		r = container_path_member(c, m, "containerPath", &s);
	if (r >= 0)
		r = strv_member(c, m, "options", NULL);
	if (r >= 0)
		r = string_member(c, m, "type", false, &s);
	if (r >= 0 && s != NULL && s[0] != '\0') {
		size_t old = ts_cdi_ptr_push(&c->ptr, "type");

		require(c, V040, "mount type");
		ts_cdi_ptr_pop(&c->ptr, old);
	}
	return r;
}

static int validate_hook(struct vctx *c, struct ts_json *h)
{
	static const char *const keys[] = {"hookName", "path", "args", "env", "timeout", NULL};
	static const char *const names[] = {"prestart",
					    "createRuntime",
					    "createContainer",
					    "startContainer",
					    "poststart",
					    "poststop",
					    NULL};
	const char *s;
	const char *const *n;
	int64_t v;
	int r;

	r = check_object(c, h, keys);
	if (r >= 0)
		r = string_member(c, h, "hookName", true, &s);
	if (r >= 0) {
		for (n = names; *n != NULL; n++)
			if (strcmp(*n, s) == 0)
				break;
		if (*n == NULL) {
			size_t old = ts_cdi_ptr_push(&c->ptr, "hookName");

			r = fail(c, "invalid hook name '%s'", s);
			ts_cdi_ptr_pop(&c->ptr, old);
		}
	}
	if (r >= 0)
		r = path_member(c, h, "path", true, &s);
	if (r >= 0)
		r = strv_member(c, h, "args", NULL);
	if (r >= 0)
		r = strv_member(c, h, "env", check_env);
	if (r >= 0)
		r = int_member(c, h, "timeout", 1, INT32_MAX, &v);
	return r;
}

static int check_closid(struct vctx *c, const char *s)
{
	/* "/" is the root CLOS (the reference accepts it); otherwise a name */
	if (strcmp(s, "/") == 0)
		return 0;
	if (strlen(s) >= 4096 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0 ||
	    strpbrk(s, "/\n") != NULL)
		return fail(c, "invalid closID '%s'", s);
	return 0;
}

static int validate_intel_rdt(struct vctx *c, const struct ts_json *edits)
{
	static const char *const keys[] = {"closID",   "l3CacheSchema",	   "memBwSchema",
					   "schemata", "enableMonitoring", NULL};
	int r;
	struct ts_json *rdt = member(c, edits, "intelRdt", false, &r), *mon;
	const char *s;
	size_t old;

	if (rdt == NULL)
		return 0;
	old = ts_cdi_ptr_push(&c->ptr, "intelRdt");
	require(c, V070, "intelRdt");
	r = check_object(c, rdt, keys);
	if (r >= 0)
		r = string_member(c, rdt, "closID", false, &s);
	if (r >= 0 && s != NULL) {
		size_t o = ts_cdi_ptr_push(&c->ptr, "closID");

		r = check_closid(c, s);
		ts_cdi_ptr_pop(&c->ptr, o);
	}
	if (r >= 0)
		r = string_member(c, rdt, "l3CacheSchema", false, &s);
	if (r >= 0)
		r = string_member(c, rdt, "memBwSchema", false, &s);
	if (r >= 0 && ts_json_get(rdt, "schemata") != NULL &&
	    ts_json_get(rdt, "schemata")->type != TS_JSON_NULL) {
		size_t o = ts_cdi_ptr_push(&c->ptr, "schemata");

		require(c, V110, "intelRdt schemata");
		ts_cdi_ptr_pop(&c->ptr, o);
		r = strv_member(c, rdt, "schemata", NULL);
	}
	mon = r >= 0 ? member(c, rdt, "enableMonitoring", false, &r) : NULL;
	if (mon != NULL) {
		size_t o = ts_cdi_ptr_push(&c->ptr, "enableMonitoring");

		if (mon->type != TS_JSON_BOOL)
			r = fail(c, "expected boolean, got %s", ts_json_type_name(mon->type));
		else if (mon->u.boolean)
			require(c, V110, "intelRdt enableMonitoring");
		ts_cdi_ptr_pop(&c->ptr, o);
	}
	ts_cdi_ptr_pop(&c->ptr, old);
	return r;
}

static int check_ifname(struct vctx *c, const char *s)
{
	/* Linux dev_valid_name(): 1..15 bytes, not . or .., no '/', ':' or space */
	if (s[0] == '\0' || strlen(s) > 15 || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return fail(c, "invalid network interface name '%s'", s);
	for (const char *p = s; *p != '\0'; p++)
		if (*p == '/' || *p == ':' || *p == ' ' || *p == '\t' || *p == '\n')
			return fail(c, "invalid network interface name '%s'", s);
	return 0;
}

static int validate_net_device(struct vctx *c, struct ts_json *nd)
{
	static const char *const keys[] = {"hostInterfaceName", "name", NULL};
	const char *s;
	int r;

	r = check_object(c, nd, keys);
	for (size_t k = 0; r >= 0 && k < 2; k++) {
		r = string_member(c, nd, keys[k], true, &s);
		if (r >= 0) {
			size_t old = ts_cdi_ptr_push(&c->ptr, keys[k]);

			r = check_ifname(c, s);
			ts_cdi_ptr_pop(&c->ptr, old);
		}
	}
	return r;
}

/* No host interface moved twice, no container name given twice (the
 * reference refuses both: one would silently win). */
static int check_net_duplicates(struct vctx *c, const struct ts_json *nds)
{
	static const char *const keys[] = {"hostInterfaceName", "name"};

	size_t best = SIZE_MAX, best_k = 0, index, first, old;
	int r;

	for (size_t k = 0; k < 2; k++) {
		r = first_repeat(nds, keys[k], &index, &first);
		if (r < 0)
			return oom(c);
		if (r > 0 && index < best) {
			best = index;
			best_k = k;
		}
	}
	if (best == SIZE_MAX)
		return 0;
	old = ts_cdi_ptr_push_index(&c->ptr, best);
	ts_cdi_ptr_push(&c->ptr, keys[best_k]);
	r = fail(c, "duplicate %s '%s'", keys[best_k],
		 ts_json_get_string(nds->u.array.items[best], keys[best_k]));
	ts_cdi_ptr_pop(&c->ptr, old);
	return r;
}

static int validate_gids(struct vctx *c, const struct ts_json *edits)
{
	int r;
	struct ts_json *v = member(c, edits, "additionalGids", false, &r), *item;
	size_t old, i;
	uint64_t gid;

	if (v == NULL)
		return 0;
	old = ts_cdi_ptr_push(&c->ptr, "additionalGids");
	if (v->type != TS_JSON_ARRAY)
		r = fail(c, "expected array, got %s", ts_json_type_name(v->type));
	else if (v->u.array.len > 0)
		require(c, V070, "additionalGids");
	ts_json_array_foreach (v, i, item) {
		size_t o = ts_cdi_ptr_push_index(&c->ptr, i);

		if (item->type != TS_JSON_NUMBER || ts_json_get_uint64(item, &gid) < 0 ||
		    gid > UINT32_MAX)
			r = fail(c, "invalid group id '%s'",
				 item->type == TS_JSON_NUMBER ? item->u.number
							      : ts_json_type_name(item->type));
		ts_cdi_ptr_pop(&c->ptr, o);
		if (r < 0)
			break;
	}
	ts_cdi_ptr_pop(&c->ptr, old);
	return r;
}

/*
 * Validate a containerEdits object (c->ptr points at it).
 * @return 1 if it holds at least one edit, 0 if empty, <0 on error.
 */
static int validate_edits(struct vctx *c, struct ts_json *edits)
{
	static const char *const keys[] = {"env",      "deviceNodes",	 "hooks",      "mounts",
					   "intelRdt", "additionalGids", "netDevices", NULL};
	size_t n_nodes = 0, n_hooks = 0, n_mounts = 0, n_net = 0;
	int n_env = 0, r;
	const struct ts_json *gids;

	r = check_object(c, edits, keys);
	if (r >= 0)
		r = n_env = strv_member(c, edits, "env", check_env);
	if (r >= 0)
		r = objects_member(c, edits, "deviceNodes", validate_device_node, &n_nodes);
	if (r >= 0)
		r = objects_member(c, edits, "hooks", validate_hook, &n_hooks);
	if (r >= 0)
		r = objects_member(c, edits, "mounts", validate_mount, &n_mounts);
	if (r >= 0)
		r = validate_intel_rdt(c, edits);
	if (r >= 0)
		r = validate_gids(c, edits);
	if (r >= 0)
		r = objects_member(c, edits, "netDevices", validate_net_device, &n_net);
	if (r >= 0 && n_net > 0) {
		size_t old = ts_cdi_ptr_push(&c->ptr, "netDevices");

		require(c, V110, "netDevices");
		r = check_net_duplicates(c, ts_json_get(edits, "netDevices"));
		ts_cdi_ptr_pop(&c->ptr, old);
	}
	if (r < 0)
		return r;
	gids = ts_json_get(edits, "additionalGids");
	return n_env > 0 || n_nodes > 0 || n_hooks > 0 || n_mounts > 0 || n_net > 0 ||
	       (ts_json_get(edits, "intelRdt") != NULL &&
		ts_json_get(edits, "intelRdt")->type != TS_JSON_NULL) ||
	       (gids != NULL && gids->type == TS_JSON_ARRAY && gids->u.array.len > 0);
}

/* k8s name part of a key: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63 bytes. */
static bool is_k8s_name(const char *s, size_t len)
{
	if (len == 0 || len > 63)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9');

		if (!alnum && ((i == 0 || i == len - 1) || (ch != '-' && ch != '_' && ch != '.')))
			return false;
	}
	return true;
}

int ts_cdi_annotations_validate(struct ts_json *annotations, const char *spec_path,
				struct ts_cdi_ptr *ptr, struct ts_error **err)
{
	struct vctx c = {.file = spec_path, .ptr = *ptr, .err = err};
	size_t i, total = 0, dup;
	const char *key;
	struct ts_json *val;
	int r = 0;

	if (annotations->type != TS_JSON_OBJECT)
		return fail(&c, "expected object, got %s", ts_json_type_name(annotations->type));
	dup = first_duplicate(annotations);
	if (dup == SIZE_MAX - 1)
		return oom(&c);
	ts_json_object_foreach (annotations, i, key, val) {
		const char *slash = strchr(key, '/');
		const char *name = slash ? slash + 1 : key;
		size_t old = ts_cdi_ptr_push(&c.ptr, key);

		if (i == dup)
			r = fail(&c, "duplicate key '%s'", key);
		if (r == 0 &&
		    ((slash != NULL && !ts_oci_dns_subdomain(key, (size_t)(slash - key))) ||
		     !is_k8s_name(name, strlen(name))))
			r = fail(&c, "invalid annotation key '%s'", key);
		if (r == 0)
			r = as_string(&c, val);
		if (r == 0) {
			total += strlen(key) + strlen(val->u.string);
			if (total > ANNOTATIONS_MAX_BYTES)
				r = fail(&c, "annotations larger than %u bytes in total",
					 ANNOTATIONS_MAX_BYTES);
		}
		ts_cdi_ptr_pop(&c.ptr, old);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Annotations member: validated, and a non-empty one needs 0.6.0. */
static int annotations_member(struct vctx *c, const struct ts_json *obj)
{
	int r;
	struct ts_json *a = member(c, obj, "annotations", false, &r);
	size_t old;

	if (a == NULL)
		return r;
	old = ts_cdi_ptr_push(&c->ptr, "annotations");
	r = ts_cdi_annotations_validate(a, c->file, &c->ptr, c->err);
	if (r >= 0 && a->u.object.len > 0)
		require(c, V060, "annotations");
	ts_cdi_ptr_pop(&c->ptr, old);
	return r;
}

static int validate_device(struct vctx *c, struct ts_json *dev)
{
	static const char *const keys[] = {"name", "annotations", "containerEdits", NULL};
	struct ts_error *sub = NULL;
	struct ts_json *edits;
	const char *name;
	size_t old;
	int r;

	r = check_object(c, dev, keys);
	if (r >= 0)
		r = string_member(c, dev, "name", true, &name);
	if (r < 0)
		return r;
	old = ts_cdi_ptr_push(&c->ptr, "name");
	if (ts_cdi_device_name_validate(name, &sub) < 0) {
		r = fail(c, "%s", sub->msg);
		ts_error_free(sub);
	} else if (!(name[0] >= 'a' && name[0] <= 'z') && !(name[0] >= 'A' && name[0] <= 'Z')) {
		require(c, V050, "a device name starting with a digit");
	}
	ts_cdi_ptr_pop(&c->ptr, old);
	if (r >= 0)
		r = annotations_member(c, dev);
	if (r < 0)
		return r;
	edits = member(c, dev, "containerEdits", true, &r);
	if (edits == NULL)
		return r;
	old = ts_cdi_ptr_push(&c->ptr, "containerEdits");
	r = validate_edits(c, edits);
	if (r == 0)
		r = fail(c, "invalid device, empty device edits");
	ts_cdi_ptr_pop(&c->ptr, old);
	return r < 0 ? r : 0;
}

static int validate_kind(struct vctx *c, const char *kind, char **ret_kind)
{
	const char *slash = strchr(kind, '/');
	cleanup_free char *vendor = NULL;
	struct ts_error *sub = NULL;
	size_t old = ts_cdi_ptr_push(&c->ptr, "kind");
	int r = 0;

	if (slash == NULL) {
		r = fail(c, "invalid kind '%s': missing '/' between vendor and class", kind);
	} else {
		vendor = strndup(kind, (size_t)(slash - kind));
		if (vendor == NULL)
			r = oom(c);
		else if (ts_cdi_vendor_validate(vendor, &sub) < 0 ||
			 ts_cdi_class_validate(slash + 1, &sub) < 0)
			r = fail(c, "invalid kind '%s': %s", kind, sub->msg);
		else if (strchr(slash + 1, '.') != NULL)
			require(c, V060, "a '.' in the class");
		ts_error_free(sub);
	}
	ts_cdi_ptr_pop(&c->ptr, old);
	if (r >= 0) {
		*ret_kind = strdup(kind);
		if (*ret_kind == NULL)
			r = oom(c);
	}
	return r;
}

static int parse_version(struct vctx *c, const char *v)
{
	const char *s = v[0] == 'v' ? v + 1 : v;
	size_t old = ts_cdi_ptr_push(&c->ptr, "cdiVersion");
	int r = -1;

	for (size_t i = 0; i < ARRAY_SIZE(versions); i++)
		if (strcmp(s, versions[i]) == 0)
			r = (int)i;
	if (r < 0)
		r = fail(c, "invalid version '%s'", v);
	else if (r < V030)
		r = fail(c, "unsupported version '%s': the spec version must be at least 0.3.0", v);
	ts_cdi_ptr_pop(&c->ptr, old);
	return r;
}

static int validate_devices(struct vctx *c, const struct ts_json *doc)
{
	int r;
	struct ts_json *devs = member(c, doc, "devices", true, &r), *dev;
	size_t old, i, first;

	if (devs == NULL)
		return r;
	old = ts_cdi_ptr_push(&c->ptr, "devices");
	if (devs->type != TS_JSON_ARRAY)
		r = fail(c, "expected array, got %s", ts_json_type_name(devs->type));
	else if (devs->u.array.len == 0)
		r = fail(c, "invalid spec, no devices");
	ts_json_array_foreach (devs, i, dev) {
		size_t o = ts_cdi_ptr_push_index(&c->ptr, i);

		if (r >= 0)
			r = validate_device(c, dev);
		ts_cdi_ptr_pop(&c->ptr, o);
		if (r < 0)
			break;
	}
	/* every name is a valid string now */
	if (r >= 0) {
		r = first_repeat(devs, "name", &i, &first);
		if (r < 0)
			r = oom(c);
	}
	if (r > 0) {
		ts_cdi_ptr_push_index(&c->ptr, i);
		ts_cdi_ptr_push(&c->ptr, "name");
		r = fail(c, "duplicate device name '%s' (also /devices/%zu)",
			 ts_json_get_string(devs->u.array.items[i], "name"), first);
	}
	ts_cdi_ptr_pop(&c->ptr, old);
	return r < 0 ? r : 0;
}

int ts_cdi_spec_validate(struct ts_json *doc, const char *spec_path, char **ret_kind,
			 struct ts_error **err)
{
	static const char *const keys[] = {"cdiVersion", "kind",	   "annotations",
					   "devices",	 "containerEdits", NULL};
	struct vctx c = {.file = spec_path, .err = err, .need = V030};
	cleanup_free char *kind = NULL;
	struct ts_json *edits;
	const char *version, *kind_str;
	int declared, r;

	r = check_object(&c, doc, keys);
	if (r >= 0)
		r = string_member(&c, doc, "cdiVersion", false, &version);
	if (r >= 0 && version == NULL)
		(void)member(&c, doc, "cdiVersion", true, &r); /* reports it missing */
	if (r < 0)
		return r;
	declared = parse_version(&c, version);
	if (declared < 0)
		return declared;
	r = string_member(&c, doc, "kind", true, &kind_str);
	if (r >= 0)
		r = validate_kind(&c, kind_str, &kind);
	if (r >= 0)
		r = annotations_member(&c, doc);
	if (r < 0)
		return r;
	edits = member(&c, doc, "containerEdits", false, &r);
	if (edits != NULL) {
		size_t old = ts_cdi_ptr_push(&c.ptr, "containerEdits");

		r = validate_edits(&c, edits);
		ts_cdi_ptr_pop(&c.ptr, old);
		if (r < 0)
			return r;
	}
	r = validate_devices(&c, doc);
	if (r < 0)
		return r;
	if (c.need > declared) {
		c.ptr = c.where;
		return fail(&c, "%s requires cdiVersion %s or later, the spec declares '%s'",
			    c.what, versions[c.need], version);
	}
	*ret_kind = TAKE_PTR(kind);
	return 0;
}

static bool is_yaml_name(const char *path)
{
	size_t len = strlen(path);

	return len >= 5 && strcmp(path + len - 5, ".yaml") == 0;
}

/* A JSON spec file's text without a UTF-8 byte order mark: the reference
 * reads .json specs through its YAML decoder, which skips one (helper-22:
 * "line 1 column 1: lexical error: invalid char in json text"). */
static int parse_json_text(const char *buf, size_t len, const char *spec_path, struct ts_json **ret,
			   struct ts_error **err)
{
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
		buf += 3;
		len -= 3;
	}
	return ts_json_parse(buf, len, spec_path, ret, err);
}

int ts_cdi_spec_peek_kind(const char *buf, size_t len, const char *spec_path, char **ret_kind)
{
	cleanup_json struct ts_json *doc = NULL;
	cleanup_error struct ts_error *err = NULL;
	const char *kind;
	int r;

	*ret_kind = NULL;
	if (is_yaml_name(spec_path))
		r = ts_cdi_yaml_parse(buf, len, spec_path, &doc, &err);
	else
		r = parse_json_text(buf, len, spec_path, &doc, &err);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || doc->type != TS_JSON_OBJECT ||
	    (kind = ts_json_get_string(doc, "kind")) == NULL)
		return 0;
	*ret_kind = strdup(kind);
	return *ret_kind != NULL ? 0 : -ENOMEM;
}

/* Fill device_names from the validated document. */
static int collect_names(struct ts_cdi_spec *spec)
{
	const struct ts_json *devs = ts_json_get(spec->doc, "devices"), *dev;
	size_t i;

	spec->device_names = calloc(devs->u.array.len + 1, sizeof(char *));
	if (spec->device_names == NULL)
		return -ENOMEM;
	ts_json_array_foreach (devs, i, dev) {
		spec->device_names[i] = strdup(ts_json_get_string(dev, "name"));
		if (spec->device_names[i] == NULL)
			return -ENOMEM;
		spec->n_devices = i + 1;
	}
	return 0;
}

int ts_cdi_spec_parse(const char *buf, size_t len, const char *spec_path, unsigned priority,
		      struct ts_cdi_spec **ret, struct ts_error **err)
{
	cleanup_json struct ts_json *doc = NULL;
	cleanup_free char *kind = NULL;
	struct ts_cdi_spec *spec;
	int r;

	if (is_yaml_name(spec_path))
		r = ts_cdi_yaml_parse(buf, len, spec_path, &doc, err);
	else
		r = parse_json_text(buf, len, spec_path, &doc, err);
	if (r < 0)
		return r;
	r = ts_cdi_spec_validate(doc, spec_path, &kind, err);
	if (r < 0)
		return r;
	spec = calloc(1, sizeof(*spec));
	if (spec == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	spec->path = strdup(spec_path);
	if (spec->path == NULL) {
		free(spec);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	spec->kind = TAKE_PTR(kind);
	spec->doc = TAKE_PTR(doc);
	spec->priority = priority;
	r = collect_names(spec);
	if (r < 0) {
		ts_cdi_spec_free(spec);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	*ret = spec;
	return 0;
}

int ts_cdi_spec_load(const char *spec_path, unsigned priority, struct ts_cdi_spec **ret,
		     struct ts_error **err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r;

	r = ts_read_file_at(AT_FDCWD, spec_path, SPEC_MAX_BYTES, &buf, &len, err);
	if (r < 0)
		return r;
	return ts_cdi_spec_parse(buf, len, spec_path, priority, ret, err);
}

struct ts_cdi_spec *ts_cdi_spec_free(struct ts_cdi_spec *spec)
{
	if (spec == NULL)
		return NULL;
	ts_json_free(spec->doc);
	if (!spec->packed) {
		free(spec->path);
		free(spec->kind);
		for (size_t i = 0; i < spec->n_devices; i++)
			free(spec->device_names[i]);
		free(spec->device_names);
	}
	free(spec);
	return NULL;
}

const char *ts_cdi_spec_path(const struct ts_cdi_spec *spec)
{
	return spec->path;
}

const char *ts_cdi_spec_kind(const struct ts_cdi_spec *spec)
{
	return spec->kind;
}

const struct ts_json *ts_cdi_spec_json(const struct ts_cdi_spec *spec)
{
	return spec->doc;
}

/* Append the string s at *at (NUL included); returns where it went. */
static char *pack_string(char **at, const char *s, size_t len)
{
	char *start = *at;

	memcpy(start, s, len + 1);
	*at += len + 1;
	return start;
}

struct ts_cdi_spec *ts_cdi_spec_new_lazy(const char *path, const char *kind, unsigned priority,
					 char *const *names, size_t n_names)
{
	/* one allocation (struct, names array, strings): the index makes one
	 * for every spec file, 1000 of them at a large spec dir, and five
	 * allocations each were a fifth of the fresh path's instructions */
	size_t path_len = strlen(path), kind_len = strlen(kind), size;
	size_t head = sizeof(struct ts_cdi_spec) + (n_names + 1) * sizeof(char *);
	struct ts_cdi_spec *spec;
	char *at;

	size = head + path_len + 1 + kind_len + 1;
	for (size_t i = 0; i < n_names; i++)
		size += strlen(names[i]) + 1;
	spec = calloc(1, size);
	if (spec == NULL)
		return NULL;
	spec->packed = true;
	spec->priority = priority;
	spec->device_names = (char **)(spec + 1);
	at = (char *)spec + head;
	spec->path = pack_string(&at, path, path_len);
	spec->kind = pack_string(&at, kind, kind_len);
	for (size_t i = 0; i < n_names; i++)
		spec->device_names[i] = pack_string(&at, names[i], strlen(names[i]));
	spec->n_devices = n_names;
	return spec;
}

int ts_cdi_spec_ensure_loaded(struct ts_cdi_spec *spec, struct ts_error **err)
{
	struct ts_cdi_spec *fresh = NULL;
	bool same;
	int r;

	if (spec->doc != NULL)
		return 0;
	r = ts_cdi_spec_load(spec->path, spec->priority, &fresh, err);
	if (r < 0)
		return r;
	/* the index matched the file's stat; check anyway that it says what the index says */
	same = strcmp(fresh->kind, spec->kind) == 0 && fresh->n_devices == spec->n_devices;
	for (size_t i = 0; same && i < spec->n_devices; i++)
		same = strcmp(fresh->device_names[i], spec->device_names[i]) == 0;
	if (!same) {
		ts_cdi_spec_free(fresh);
		return ts_error_set(err, ESTALE, "%s: changed while being read", spec->path);
	}
	spec->doc = TAKE_PTR(fresh->doc);
	ts_cdi_spec_free(fresh);
	return 0;
}
