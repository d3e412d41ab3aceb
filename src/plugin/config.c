/*
 * config.c - the "plugins" list of the toposhim config and the NRI v0.1
 * /etc/nri/conf.json reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/internal.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* Where `make install` put our plugins (differs from the first fixed entry
 * under another prefix), then the fixed defaults. */
static const char *const default_dirs[] = {TS_LIBEXECDIR "/toposhim/plugins",
					   "/usr/libexec/toposhim/plugins", "/opt/nri/bin", NULL};

/* Largest timeout accepted: a hook that blocks a create for minutes is a mistake. */
#define TIMEOUT_MS_MAX 600000
/* Most entries of sandbox.writable. */
#define WRITABLE_MAX 16
/* Bounds of the cgroup limits: below 4 MiB no dynamic binary starts; the
 * pids bound is the kernel's PID_MAX_LIMIT. */
#define MEMORY_MIN_BYTES (4ULL * 1024 * 1024)
#define MEMORY_MAX_BYTES (1ULL << 50)
#define PIDS_MAX 4194304

static int type_error(struct ts_error **err, const char *what, const char *key, const char *want,
		      const struct ts_json *got)
{
	return ts_error_set(err, 0, "%s/%s': expected %s, got %s", what, key, want,
			    ts_json_type_name(got->type));
}

/* Look name up in dirs; *ret_path is malloc'd.  Every directory of the
 * list that exists is checked (ts_plugin_path_check()), not only the one
 * holding the plugin: a directory earlier in the list that others can
 * write lets them put a plugin of the same name in front. */
static int lookup(const char *name, const char *const *dirs, const char *what, char **ret_path,
		  struct ts_error **err)
{
	size_t list_len = 1;
	int r;

	for (size_t i = 0; dirs[i] != NULL; i++) {
		struct stat st;

		if (i > 0 && strcmp(dirs[i], dirs[i - 1]) == 0)
			continue;
		if (stat(dirs[i], &st) < 0)
			continue;
		r = ts_plugin_path_check(dirs[i], err);
		if (r < 0)
			return ts_error_prefix(err, "%s/type': plugin directory", what);
	}
	for (size_t i = 0; dirs[i] != NULL; i++) {
		cleanup_free char *p = NULL;
		struct stat st;

		if (i > 0 && strcmp(dirs[i], dirs[i - 1]) == 0)
			continue;

		if (asprintf(&p, "%s/%s", dirs[i], name) < 0)
			return ts_error_set(err, ENOMEM, "%s/type'", what);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
			*ret_path = TAKE_PTR(p);
			return 0;
		}
		list_len += strlen(dirs[i]) + 1;
	}
	cleanup_free char *list = calloc(1, list_len);
	if (list == NULL)
		return ts_error_set(err, ENOMEM, "%s/type'", what);
	for (size_t i = 0; dirs[i] != NULL; i++) {
		if (i > 0 && strcmp(dirs[i], dirs[i - 1]) == 0)
			continue;
		if (i > 0)
			strcat(list, ":");
		strcat(list, dirs[i]);
	}
	return ts_error_set(err, ENOENT, "%s/type': plugin '%s' not found in %s", what, name, list);
}

static bool name_valid(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

static int parse_stages(const struct ts_json *v, const char *what, unsigned *ret,
			struct ts_error **err)
{
	struct ts_json *item;
	unsigned stages = 0;
	size_t i;

	if (v->type != TS_JSON_ARRAY)
		return type_error(err, what, "stages", "array", v);
	ts_json_array_foreach (v, i, item) {
		enum ts_plugin_stage s;

		if (item->type != TS_JSON_STRING)
			return ts_error_set(err, 0, "%s/stages/%zu': expected string, got %s", what,
					    i, ts_json_type_name(item->type));
		s = ts_plugin_stage_from_string(item->u.string);
		if (s == TS_PLUGIN_STAGE_INVALID)
			return ts_error_set(err, 0,
					    "%s/stages/%zu': unknown stage '%s' (expected "
					    "pre-create, create or delete)",
					    what, i, item->u.string);
		stages |= 1u << s;
	}
	if (stages == 0)
		return ts_error_set(err, 0, "%s/stages': empty list", what);
	*ret = stages;
	return 0;
}

static int parse_id(const struct ts_json *v, const char *what, const char *key, int64_t *ret,
		    struct ts_error **err)
{
	int64_t id;

	if (v->type != TS_JSON_NUMBER)
		return type_error(err, what, key, "number", v);
	if (ts_json_get_int64(v, &id) < 0 || id < 0 || id > UINT32_MAX - 1)
		return ts_error_set(err, 0, "%s/%s': invalid id '%s'", what, key, v->u.number);
	*ret = id;
	return 0;
}

static int parse_allow(const struct ts_json *v, const char *what, uint64_t *ret,
		       struct ts_error **err)
{
	struct ts_json *item;
	uint64_t allow = 0;
	size_t i;

	if (v->type != TS_JSON_ARRAY)
		return type_error(err, what, "sandbox/allow", "array", v);
	ts_json_array_foreach (v, i, item) {
		bool found = false;

		if (item->type != TS_JSON_STRING)
			return ts_error_set(err, 0,
					    "%s/sandbox/allow/%zu': expected string, got %s", what,
					    i, ts_json_type_name(item->type));
		for (size_t k = 0; ts_plugin_denied_calls[k].name != NULL; k++) {
			if (strcmp(ts_plugin_denied_calls[k].group, item->u.string) == 0 ||
			    strcmp(ts_plugin_denied_calls[k].name, item->u.string) == 0) {
				allow |= UINT64_C(1) << k;
				found = true;
			}
		}
		if (!found)
			return ts_error_set(err, 0,
					    "%s/sandbox/allow/%zu': unknown call or group '%s'",
					    what, i, item->u.string);
	}
	*ret = allow;
	return 0;
}

static int parse_caps(const struct ts_json *v, const char *what, uint64_t *ret,
		      struct ts_error **err)
{
	struct ts_json *item;
	uint64_t caps = 0;
	size_t i;

	if (v->type != TS_JSON_ARRAY)
		return type_error(err, what, "sandbox/capabilities", "array", v);
	ts_json_array_foreach (v, i, item) {
		int cap;

		if (item->type != TS_JSON_STRING)
			return ts_error_set(err, 0,
					    "%s/sandbox/capabilities/%zu': expected string, got %s",
					    what, i, ts_json_type_name(item->type));
		cap = ts_plugin_cap_from_name(item->u.string);
		if (cap < 0)
			return ts_error_set(err, 0,
					    "%s/sandbox/capabilities/%zu': unknown capability '%s'",
					    what, i, item->u.string);
		caps |= UINT64_C(1) << cap;
	}
	*ret = caps;
	return 0;
}

static int parse_user(const struct ts_json *v, const char *what, struct ts_plugin_sandbox *sb,
		      struct ts_error **err)
{
	if (v->type != TS_JSON_STRING)
		return type_error(err, what, "sandbox/user", "string", v);
	if (!name_valid(v->u.string))
		return ts_error_set(err, 0, "%s/sandbox/user': invalid user name '%s'", what,
				    v->u.string);
	free(sb->user);
	sb->user = strdup(v->u.string);
	if (sb->user == NULL)
		return ts_error_set(err, ENOMEM, "%s/sandbox/user'", what);
	return 0;
}

#define ANNOTATIONS_PREFIX "annotations:"

/* sandbox.adjust: "devices", "unified", "annotations",
 * "annotations:<prefix>". */
static int parse_adjust(const struct ts_json *v, const char *what, struct ts_plugin_sandbox *sb,
			struct ts_error **err)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {{"devices", TS_PLUGIN_ADJUST_DEVICES},
		     {"unified", TS_PLUGIN_ADJUST_UNIFIED},
		     {"annotations", TS_PLUGIN_ADJUST_ANNOTATIONS}};
	struct ts_json *item;
	size_t i, n = 0;

	if (v->type != TS_JSON_ARRAY)
		return type_error(err, what, "sandbox/adjust", "array", v);
	ts_strv_freep(&sb->annotation_prefixes);
	sb->annotation_prefixes = calloc(v->u.array.len + 1, sizeof(char *));
	if (sb->annotation_prefixes == NULL)
		return ts_error_set(err, ENOMEM, "%s/sandbox/adjust'", what);
	sb->adjust = 0;
	ts_json_array_foreach (v, i, item) {
		const char *s = item->type == TS_JSON_STRING ? item->u.string : NULL;
		bool found = false;

		if (s == NULL)
			return ts_error_set(err, 0,
					    "%s/sandbox/adjust/%zu': expected string, got %s", what,
					    i, ts_json_type_name(item->type));
		for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
			if (strcmp(s, names[k].name) == 0) {
				sb->adjust |= names[k].bit;
				found = true;
			}
		}
		if (!found && strncmp(s, ANNOTATIONS_PREFIX, strlen(ANNOTATIONS_PREFIX)) == 0 &&
		    s[strlen(ANNOTATIONS_PREFIX)] != '\0') {
			sb->annotation_prefixes[n] = strdup(s + strlen(ANNOTATIONS_PREFIX));
			if (sb->annotation_prefixes[n++] == NULL)
				return ts_error_set(err, ENOMEM, "%s/sandbox/adjust'", what);
			found = true;
		}
		if (!found)
			return ts_error_set(err, 0,
					    "%s/sandbox/adjust/%zu': unknown field '%s' (expected "
					    "devices, unified, annotations or annotations:PREFIX)",
					    what, i, s);
	}
	return 0;
}

/* sandbox.memory_max_bytes, pids_max: an integer in [min, max]. */
static int parse_limit(const struct ts_json *v, const char *what, const char *key, uint64_t min,
		       uint64_t max, uint64_t *ret, struct ts_error **err)
{
	uint64_t n;

	if (v->type != TS_JSON_NUMBER)
		return ts_error_set(err, 0, "%s/sandbox/%s': expected number, got %s", what, key,
				    ts_json_type_name(v->type));
	if (ts_json_get_uint64(v, &n) < 0 || n < min || n > max)
		return ts_error_set(
			err, 0, "%s/sandbox/%s': invalid limit '%s' (expected %llu to %llu)", what,
			key, v->u.number, (unsigned long long)min, (unsigned long long)max);
	*ret = n;
	return 0;
}

/* "writable": existing absolute paths, kept resolved (realpath): the mount
 * namespace and Landlock work on what the kernel resolves, and the overlap
 * checks of check_writable() compare resolved paths. */
static int parse_writable(const struct ts_json *v, const char *what, struct ts_plugin_sandbox *sb,
			  struct ts_error **err)
{
	struct ts_json *item;
	size_t i;

	if (v->type != TS_JSON_ARRAY)
		return type_error(err, what, "sandbox/writable", "array", v);
	if (v->u.array.len > WRITABLE_MAX)
		return ts_error_set(err, 0, "%s/sandbox/writable': more than %d entries", what,
				    WRITABLE_MAX);
	ts_strv_freep(&sb->writable);
	sb->writable = calloc(v->u.array.len + 1, sizeof(*sb->writable));
	if (sb->writable == NULL)
		return ts_error_set(err, ENOMEM, "%s/sandbox/writable'", what);
	ts_json_array_foreach (v, i, item) {
		if (item->type != TS_JSON_STRING)
			return ts_error_set(err, 0,
					    "%s/sandbox/writable/%zu': expected string, got %s",
					    what, i, ts_json_type_name(item->type));
		if (item->u.string[0] != '/')
			return ts_error_set(err, 0, "%s/sandbox/writable/%zu': not absolute '%s'",
					    what, i, item->u.string);
		sb->writable[i] = realpath(item->u.string, NULL);
		if (sb->writable[i] == NULL)
			return ts_error_set(err, errno,
					    "%s/sandbox/writable/%zu': cannot resolve '%s'", what,
					    i, item->u.string);
	}
	return 0;
}

static int parse_sandbox(const struct ts_json *v, const char *what, struct ts_plugin_sandbox *sb,
			 struct ts_error **err)
{
	const char *key;
	struct ts_json *val;
	size_t i;
	int r;

	if (v->type != TS_JSON_OBJECT)
		return type_error(err, what, "sandbox", "object", v);
	ts_json_object_foreach (v, i, key, val) {
		if (strcmp(key, "capabilities") == 0)
			r = parse_caps(val, what, &sb->caps, err);
		else if (strcmp(key, "allow") == 0)
			r = parse_allow(val, what, &sb->allow, err);
		else if (strcmp(key, "uid") == 0)
			r = parse_id(val, what, "sandbox/uid", &sb->uid, err);
		else if (strcmp(key, "gid") == 0)
			r = parse_id(val, what, "sandbox/gid", &sb->gid, err);
		else if (strcmp(key, "user") == 0)
			r = parse_user(val, what, sb, err);
		else if (strcmp(key, "writable") == 0)
			r = parse_writable(val, what, sb, err);
		else if (strcmp(key, "memory_max_bytes") == 0)
			r = parse_limit(val, what, key, MEMORY_MIN_BYTES, MEMORY_MAX_BYTES,
					&sb->memory_max_bytes, err);
		else if (strcmp(key, "pids_max") == 0)
			r = parse_limit(val, what, key, 1, PIDS_MAX, &sb->pids_max, err);
		else if (strcmp(key, "adjust") == 0)
			r = parse_adjust(val, what, sb, err);
		else
			r = ts_error_set(err, 0, "%s/sandbox': unknown key '%s'", what, key);
		if (r < 0)
			return r;
	}
	if (sb->user != NULL && sb->uid >= 0)
		return ts_error_set(err, 0, "%s/sandbox/user': conflicts with 'uid' '%s'", what,
				    sb->user);
	return 0;
}

static int parse_member(const char *key, const struct ts_json *val, const char *what,
			struct ts_plugin *p, const char **type, const char **path,
			struct ts_error **err)
{
	if (strcmp(key, "type") == 0) {
		if (val->type != TS_JSON_STRING)
			return type_error(err, what, key, "string", val);
		if (!name_valid(val->u.string))
			return ts_error_set(err, 0, "%s/type': invalid plugin name '%s'", what,
					    val->u.string);
		*type = val->u.string;
	} else if (strcmp(key, "path") == 0) {
		if (val->type != TS_JSON_STRING)
			return type_error(err, what, key, "string", val);
		if (val->u.string[0] != '/')
			return ts_error_set(err, 0, "%s/path': not absolute '%s'", what,
					    val->u.string);
		*path = val->u.string;
	} else if (strcmp(key, "conf") == 0) {
		p->conf = ts_json_free(p->conf);
		p->conf = ts_json_dup(val);
		if (p->conf == NULL)
			return ts_error_set(err, ENOMEM, "%s/conf'", what);
	} else if (strcmp(key, "timeout_ms") == 0) {
		int64_t ms;

		if (val->type != TS_JSON_NUMBER)
			return type_error(err, what, key, "number", val);
		if (ts_json_get_int64(val, &ms) < 0 || ms <= 0 || ms > TIMEOUT_MS_MAX)
			return ts_error_set(
				err, 0, "%s/timeout_ms': invalid timeout '%s' (expected 1 to %d)",
				what, val->u.number, TIMEOUT_MS_MAX);
		p->timeout_ms = (unsigned)ms;
	} else if (strcmp(key, "on_error") == 0) {
		if (val->type != TS_JSON_STRING)
			return type_error(err, what, key, "string", val);
		if (strcmp(val->u.string, "fail") == 0)
			p->ignore_errors = false;
		else if (strcmp(val->u.string, "ignore") == 0)
			p->ignore_errors = true;
		else
			return ts_error_set(
				err, 0,
				"%s/on_error': invalid value '%s' (expected fail or ignore)", what,
				val->u.string);
	} else if (strcmp(key, "stages") == 0) {
		return parse_stages(val, what, &p->stages, err);
	} else if (strcmp(key, "sandbox") == 0) {
		return parse_sandbox(val, what, &p->sandbox, err);
	} else {
		return ts_error_set(err, 0, "%s': unknown key '%s'", what, key);
	}
	return 0;
}

void ts_plugin_release(struct ts_plugin *p)
{
	if (p == NULL)
		return;
	free(p->type);
	free(p->path);
	ts_json_free(p->conf);
	free(p->sandbox.user);
	ts_strv_freep(&p->sandbox.writable);
	ts_strv_freep(&p->sandbox.annotation_prefixes);
	*p = (struct ts_plugin){0};
}

int ts_plugin_parse(const struct ts_json *entry, const char *what, bool nri,
		    const char *const *dirs, struct ts_plugin *ret, struct ts_error **err)
{
	struct ts_plugin p = {
		.timeout_ms = TS_PLUGIN_DEFAULT_TIMEOUT_MS,
		.stages = (1u << TS_PLUGIN_STAGE_CREATE) | (1u << TS_PLUGIN_STAGE_DELETE),
		.sandbox = {.uid = -1,
			    .gid = -1,
			    .memory_max_bytes = TS_PLUGIN_MEMORY_MAX_DEFAULT,
			    .pids_max = TS_PLUGIN_PIDS_MAX_DEFAULT},
	};
	const char *type = NULL, *path = NULL, *key;
	struct ts_json *val;
	size_t i;
	int r = 0;

	if (entry->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s': expected object, got %s", what,
				    ts_json_type_name(entry->type));
	ts_json_object_foreach (entry, i, key, val) {
		if (nri && strcmp(key, "type") != 0 && strcmp(key, "conf") != 0)
			r = ts_error_set(err, 0, "%s': unknown key '%s'", what, key);
		else
			r = parse_member(key, val, what, &p, &type, &path, err);
		if (r < 0)
			goto fail;
	}
	if (type == NULL) {
		r = ts_error_set(err, 0, "%s': missing 'type'", what);
		goto fail;
	}
	p.type = strdup(type);
	if (p.type == NULL) {
		r = ts_error_set(err, ENOMEM, "%s'", what);
		goto fail;
	}
	if (path != NULL)
		p.path = strdup(path);
	else
		r = lookup(type, dirs, what, &p.path, err);
	if (r < 0)
		goto fail;
	if (p.path == NULL) {
		r = ts_error_set(err, ENOMEM, "%s'", what);
		goto fail;
	}
	*ret = p;
	return 0;
fail:
	ts_plugin_release(&p);
	return r;
}

static int chain_append(struct ts_plugin_chain *c, struct ts_plugin *p, struct ts_error **err)
{
	struct ts_plugin *n = reallocarray(c->plugins, c->len + 1, sizeof(*n));

	if (n == NULL) {
		ts_plugin_release(p);
		return ts_error_set(err, ENOMEM, "cannot load plugin chain");
	}
	c->plugins = n;
	c->plugins[c->len++] = *p;
	return 0;
}

int ts_plugin_nri_conf_parse(const char *text, size_t len, const char *filename,
			     const char *const *dirs, struct ts_plugin_chain *chain,
			     struct ts_error **err)
{
	cleanup_json struct ts_json *root = NULL;
	struct ts_json *plugins = NULL, *val;
	const char *key;
	size_t i;
	int r;

	r = ts_json_parse(text, len, filename, &root, err);
	if (r < 0)
		return r;
	if (root->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '': expected object, got %s", filename,
				    ts_json_type_name(root->type));
	ts_json_object_foreach (root, i, key, val) {
		if (strcmp(key, "version") == 0) {
			if (val->type != TS_JSON_STRING)
				return ts_error_set(err, 0,
						    "%s: '/version': expected string, got %s",
						    filename, ts_json_type_name(val->type));
		} else if (strcmp(key, "plugins") == 0) {
			if (val->type != TS_JSON_ARRAY && val->type != TS_JSON_NULL)
				return ts_error_set(err, 0,
						    "%s: '/plugins': expected array, got %s",
						    filename, ts_json_type_name(val->type));
			plugins = val;
		} else {
			return ts_error_set(err, 0, "%s: '': unknown key '%s'", filename, key);
		}
	}
	ts_json_array_foreach (plugins, i, val) {
		cleanup_free char *what = NULL;
		struct ts_plugin p;

		if (asprintf(&what, "%s: '/plugins/%zu", filename, i) < 0)
			return ts_error_set(err, ENOMEM, "%s", filename);
		r = ts_plugin_parse(val, what, true, dirs, &p, err);
		if (r < 0)
			return r;
		r = chain_append(chain, &p, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* "plugin_dirs": a NULL-terminated vector borrowing the config's strings. */
static int read_dirs(const struct ts_json *config, const char *config_path, const char ***ret,
		     struct ts_error **err)
{
	struct ts_json *v = ts_json_get(config, "plugin_dirs"), *item;
	const char **dirs;
	size_t i;

	if (v == NULL || v->type == TS_JSON_NULL) {
		*ret = NULL;
		return 0;
	}
	if (v->type != TS_JSON_ARRAY)
		return ts_error_set(err, 0, "%s: '/plugin_dirs': expected array, got %s",
				    config_path, ts_json_type_name(v->type));
	dirs = calloc(v->u.array.len + 1, sizeof(*dirs));
	if (dirs == NULL)
		return ts_error_set(err, ENOMEM, "%s: '/plugin_dirs'", config_path);
	ts_json_array_foreach (v, i, item) {
		int r = 0;

		if (item->type != TS_JSON_STRING)
			r = ts_error_set(err, 0, "%s: '/plugin_dirs/%zu': expected string, got %s",
					 config_path, i, ts_json_type_name(item->type));
		else if (item->u.string[0] != '/')
			r = ts_error_set(err, 0, "%s: '/plugin_dirs/%zu': not absolute '%s'",
					 config_path, i, item->u.string);
		if (r < 0) {
			free(dirs);
			return r;
		}
		dirs[i] = item->u.string;
	}
	*ret = dirs;
	return 0;
}

static int load_nri(const struct ts_json *config, const char *config_path, const char *const *dirs,
		    struct ts_plugin_chain *c, struct ts_error **err)
{
	struct ts_json *v = ts_json_get(config, "nri_conf");
	cleanup_free char *text = NULL;
	const char *path;
	size_t len;
	int r;

	if (v == NULL || v->type == TS_JSON_NULL || (v->type == TS_JSON_BOOL && !v->u.boolean))
		return 0;
	if (v->type == TS_JSON_BOOL)
		path = TS_PLUGIN_NRI_CONF_DEFAULT;
	else if (v->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "%s: '/nri_conf': expected string or boolean, got %s",
				    config_path, ts_json_type_name(v->type));
	else if (v->u.string[0] != '/')
		return ts_error_set(err, 0, "%s: '/nri_conf': not absolute '%s'", config_path,
				    v->u.string);
	else
		path = v->u.string;
	r = ts_read_file_at(AT_FDCWD, path, 1024 * 1024, &text, &len, err);
	if (r == -ENOENT) {
		/* No NRI conf installed means no NRI plugins, as containerd's v0.1 client did. */
		ts_error_clear(err);
		return 0;
	}
	if (r < 0)
		return r;
	/* It names the plugins to run: as much ours as the config file. */
	r = ts_plugin_path_check(path, err);
	if (r < 0)
		return ts_error_prefix(err, "%s: '/nri_conf'", config_path);
	return ts_plugin_nri_conf_parse(text, len, path, dirs, c, err);
}

/* What no plugin may write, resolved where it exists: toposhim's state and
 * config, and what decides which plugins run. */
struct guarded {
	char *path;
	const char *label;
	bool inside; /* no writable path inside it either (toposhim's own tree) */
};

static void guarded_free(struct guarded *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i].path);
	free(g);
}

static int guard(struct guarded **g, size_t *n, const char *path, bool parent, bool inside,
		 const char *label)
{
	cleanup_free char *copy = strdup(path);
	struct guarded *v;
	char *real;

	if (copy == NULL)
		return -ENOMEM;
	if (parent) {
		char *slash = strrchr(copy, '/');

		if (slash == NULL)
			return 0;
		if (slash == copy)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	real = realpath(copy, NULL);
	if (real == NULL && (real = strdup(copy)) == NULL)
		return -ENOMEM;
	v = reallocarray(*g, *n + 1, sizeof(*v));
	if (v == NULL) {
		free(real);
		return -ENOMEM;
	}
	*g = v;
	v[(*n)++] = (struct guarded){real, label, inside};
	return 0;
}

/* dir is a, or lies below it. */
static bool below(const char *dir, const char *a)
{
	size_t la = strlen(a);

	if (strcmp(a, "/") == 0)
		return true;
	return strncmp(dir, a, la) == 0 && (dir[la] == '\0' || dir[la] == '/');
}

/* A writable path w reaches what lies below it; guarded files are the
 * entries of g (or, inside set, its whole tree). */
static bool overlaps(const char *w, const struct guarded *g)
{
	return below(g->path, w) || (g->inside && below(w, g->path));
}

static int check_writable(const struct ts_json *config, const char *config_path,
			  const char *const *dirs, const struct ts_plugin_chain *c,
			  struct ts_error **err)
{
	const char *state_dir = ts_state_dir_resolve(ts_json_get_string(config, "state_dir"));
	const char *nri = ts_json_get_string(config, "nri_conf");
	struct guarded *g = NULL;
	bool any = false;
	size_t n = 0;
	int r;

	/* nothing writable, nothing to compare: no path is resolved (a
	 * realpath(3) is a readlink(2) per component, ~16 per create) */
	for (size_t i = 0; i < c->len && !any; i++)
		any = c->plugins[i].sandbox.writable != NULL &&
		      c->plugins[i].sandbox.writable[0] != NULL;
	if (!any)
		return 0;
	r = guard(&g, &n, state_dir, false, true, "the state dir");
	if (r >= 0 && config_path[0] == '/')
		r = guard(&g, &n, config_path, true, false, "the config dir");
	if (r >= 0 && (nri != NULL || ts_json_get(config, "nri_conf") != NULL))
		r = guard(&g, &n, nri != NULL ? nri : TS_PLUGIN_NRI_CONF_DEFAULT, true, false,
			  "the NRI conf dir");
	for (size_t i = 0; r >= 0 && dirs[i] != NULL; i++)
		r = guard(&g, &n, dirs[i], false, false, "the plugin dir");
	for (size_t i = 0; r >= 0 && i < c->len; i++)
		r = guard(&g, &n, c->plugins[i].path, true, false, "the plugin binary dir");
	if (r < 0) {
		guarded_free(g, n);
		return ts_error_set(err, -r, "%s: cannot load plugin chain", config_path);
	}
	/* Plugins from the config come first in the chain, at their own
	 * index; NRI ones have no sandbox. */
	for (size_t i = 0; i < c->len; i++) {
		char *const *w = c->plugins[i].sandbox.writable;

		for (size_t k = 0; w != NULL && w[k] != NULL; k++) {
			for (size_t j = 0; j < n; j++) {
				if (!overlaps(w[k], &g[j]))
					continue;
				r = ts_error_set(
					err, 0,
					"%s: '/plugins/%zu/sandbox/writable/%zu': overlaps "
					"%s %s '%s'",
					config_path, i, k, g[j].label, g[j].path, w[k]);
				guarded_free(g, n);
				return r;
			}
		}
	}
	guarded_free(g, n);
	return 0;
}

int ts_plugin_chain_load(const struct ts_json *config, const char *config_path,
			 struct ts_plugin_chain **ret, struct ts_error **err)
{
	struct ts_plugin_chain *c = calloc(1, sizeof(*c));
	cleanup_free const char **dirs = NULL;
	struct ts_json *list, *item;
	size_t i;
	int r;

	if (c == NULL)
		return ts_error_set(err, ENOMEM, "cannot load plugin chain");
	r = read_dirs(config, config_path, &dirs, err);
	if (r < 0)
		goto fail;
	const char *const *d = dirs != NULL ? dirs : default_dirs;

	list = ts_json_get(config, "plugins");
	if (list != NULL && list->type != TS_JSON_ARRAY && list->type != TS_JSON_NULL) {
		r = ts_error_set(err, 0, "%s: '/plugins': expected array, got %s", config_path,
				 ts_json_type_name(list->type));
		goto fail;
	}
	ts_json_array_foreach (list, i, item) {
		cleanup_free char *what = NULL;
		struct ts_plugin p;

		if (asprintf(&what, "%s: '/plugins/%zu", config_path, i) < 0) {
			r = ts_error_set(err, ENOMEM, "cannot load plugin chain");
			goto fail;
		}
		r = ts_plugin_parse(item, what, false, d, &p, err);
		if (r < 0)
			goto fail;
		r = chain_append(c, &p, err);
		if (r < 0)
			goto fail;
	}
	r = load_nri(config, config_path, d, c, err);
	if (r >= 0)
		r = check_writable(config, config_path, d, c, err);
	if (r < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	ts_plugin_chain_free(c);
	return r;
}

struct ts_plugin_chain *ts_plugin_chain_free(struct ts_plugin_chain *c)
{
	if (c == NULL)
		return NULL;
	for (size_t i = 0; i < c->len; i++)
		ts_plugin_release(&c->plugins[i]);
	free(c->plugins);
	free(c);
	return NULL;
}

int ts_plugin_chain_check_users(const struct ts_plugin_chain *c, struct ts_error **err)
{
	for (size_t i = 0; c != NULL && i < c->len; i++) {
		const struct ts_plugin *p = &c->plugins[i];
		int64_t uid = -1, gid = -1;

		if (!p->ignore_errors && ts_plugin_sandbox_ids(&p->sandbox, &uid, &gid, err) < 0)
			return ts_error_prefix(err, "plugin '%s' (%s)", p->type, p->path);
	}
	return 0;
}

size_t ts_plugin_chain_count(const struct ts_plugin_chain *c, enum ts_plugin_stage stage)
{
	size_t n = 0;

	if (c == NULL || stage < 0 || stage >= _TS_PLUGIN_STAGE_MAX)
		return 0;
	for (size_t i = 0; i < c->len; i++)
		if (c->plugins[i].stages & (1u << stage))
			n++;
	return n;
}

static const char *const stage_names[_TS_PLUGIN_STAGE_MAX] = {
	[TS_PLUGIN_STAGE_PRE_CREATE] = "pre-create",
	[TS_PLUGIN_STAGE_CREATE] = "create",
	[TS_PLUGIN_STAGE_DELETE] = "delete",
};

const char *ts_plugin_stage_to_string(enum ts_plugin_stage s)
{
	if (s < 0 || s >= _TS_PLUGIN_STAGE_MAX)
		return NULL;
	return stage_names[s];
}

enum ts_plugin_stage ts_plugin_stage_from_string(const char *s)
{
	for (int i = 0; i < _TS_PLUGIN_STAGE_MAX; i++)
		if (s != NULL && strcmp(s, stage_names[i]) == 0)
			return (enum ts_plugin_stage)i;
	return TS_PLUGIN_STAGE_INVALID;
}
