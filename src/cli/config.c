/* config.c - see config.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/config.h"
#include "cli/core.h"
#include "runtime/runtime.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* The JSON pointer of the first repeated key in j (depth first, document
 * order), made on the way back up only when there is one.  @return 1 with
 * *ret (owned); 0 none; -ENOMEM. */
static int find_duplicate_key(const struct ts_json *j, char **ret)
{
	const char *key = NULL;
	char index[24];
	size_t i, dup;
	int r;

	if (j->type == TS_JSON_OBJECT) {
		r = ts_json_object_find_duplicate(j, &dup);
		if (r != 0) {
			cleanup_free char *esc =
				r > 0 ? ts_json_pointer_escape(j->u.object.keys[dup]) : NULL;

			if (esc == NULL || asprintf(ret, "/%s", esc) < 0)
				return -ENOMEM;
			return 1;
		}
	}
	for (i = 0; j->type == TS_JSON_OBJECT && i < j->u.object.len; i++) {
		r = find_duplicate_key(j->u.object.values[i], ret);
		if (r != 0) {
			key = j->u.object.keys[i];
			break;
		}
	}
	for (i = 0; key == NULL && j->type == TS_JSON_ARRAY && i < j->u.array.len; i++) {
		r = find_duplicate_key(j->u.array.items[i], ret);
		if (r != 0) {
			snprintf(index, sizeof(index), "%zu", i);
			key = index;
			break;
		}
	}
	if (key == NULL)
		return 0;
	if (r > 0) {
		cleanup_free char *esc = ts_json_pointer_escape(key), *inner = *ret;

		*ret = NULL;
		if (esc == NULL || asprintf(ret, "/%s%s", esc, inner) < 0)
			return -ENOMEM;
	}
	return r;
}

int ts_cli_config_load(const char *path, struct ts_json **ret, struct ts_error **err)
{
	cleanup_error struct ts_error *read_err = NULL;
	cleanup_free char *buf = NULL;
	cleanup_json struct ts_json *root = NULL;
	size_t len = 0;
	int r;

	r = ts_read_file_at(AT_FDCWD, path, 0, &buf, &len, &read_err);
	/* only the default file may be absent: one named by TOPOSHIM_CONFIG
	 * that is not there is a typo, not a wish for the defaults */
	if (r == -ENOENT && strcmp(path, TS_CLI_CONFIG_DEFAULT) == 0) {
		root = ts_json_new_object();
		if (root == NULL)
			return ts_error_set(err, ENOMEM, "%s: cannot load", path);
		*ret = TAKE_PTR(root);
		return 0;
	}
	if (r < 0) {
		*err = TAKE_PTR(read_err);
		return r;
	}
	r = ts_json_parse(buf, len, path, &root, err);
	if (r < 0)
		return r;
	if (root->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/': expected object, got %s", path,
				    ts_json_type_name(root->type));
	/* a member given twice: the last would count without a word (two
	 * state_dir, one a typo, split the store) */
	{
		cleanup_free char *dup = NULL;

		r = find_duplicate_key(root, &dup);
		if (r < 0)
			return ts_error_set(err, ENOMEM, "%s: cannot load", path);
		if (r > 0)
			return ts_error_set(err, 0, "%s: '%s': duplicate key", path, dup);
	}
	*ret = TAKE_PTR(root);
	return 0;
}

static int ts_cli_runtime_search_read(const struct ts_json *search, const char *config_path,
				      const char ***ret, struct ts_error **err)
{
	cleanup_free const char **names = NULL;
	struct ts_json *item;
	size_t i;

	if (search->type != TS_JSON_ARRAY)
		return ts_error_set(err, 0, "%s: '/runtime/search': expected array, got %s",
				    config_path, ts_json_type_name(search->type));
	if (search->u.array.len == 0)
		return ts_error_set(err, 0, "%s: '/runtime/search': empty list", config_path);
	names = calloc(search->u.array.len + 1, sizeof(*names));
	if (names == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot read '/runtime/search'", config_path);
	ts_json_array_foreach (search, i, item) {
		if (item->type != TS_JSON_STRING)
			return ts_error_set(err, 0,
					    "%s: '/runtime/search/%zu': expected string, got %s",
					    config_path, i, ts_json_type_name(item->type));
		if (item->u.string[0] == '\0')
			return ts_error_set(err, 0, "%s: '/runtime/search/%zu': empty name ''",
					    config_path, i);
		names[i] = item->u.string;
	}
	*ret = TAKE_PTR(names);
	return 0;
}

int ts_cli_config_check_keys(const struct ts_json *config, const char *config_path,
			     struct ts_error **err)
{
	static const char *const known[] = {
		"runtime",	    "cdi",     "placement",   "cgroup",	  "topology", "state_dir",
		"gc_grace_seconds", "plugins", "plugin_dirs", "nri_conf", "policy",
	};
	const struct ts_json *val;
	const char *key;
	size_t i;

	ts_json_object_foreach (config, i, key, val) {
		bool found = false;

		(void)val; /* only the keys matter here */
		for (size_t k = 0; k < ARRAY_SIZE(known) && !found; k++)
			found = strcmp(key, known[k]) == 0;
		if (!found)
			return ts_error_set(err, 0, "%s: '/%s': unknown key", config_path, key);
	}
	return 0;
}

int ts_cli_runtime_config_read(const struct ts_json *config, const char *config_path,
			       struct ts_cli_runtime_config *ret, struct ts_error **err)
{
	struct ts_cli_runtime_config rc = {NULL, NULL, NULL};
	const struct ts_json *runtime = ts_json_get(config, "runtime");
	const struct ts_json *path, *search;
	int r;

	if (runtime == NULL)
		goto done;
	if (runtime->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/runtime': expected object, got %s", config_path,
				    ts_json_type_name(runtime->type));
	/* a misspelt member would be a setting silently ignored (helper-8) */
	for (size_t i = 0; i < runtime->u.object.len; i++)
		if (strcmp(runtime->u.object.keys[i], "path") != 0 &&
		    strcmp(runtime->u.object.keys[i], "search") != 0)
			return ts_error_set(err, 0, "%s: '/runtime/%s': unknown key", config_path,
					    runtime->u.object.keys[i]);
	path = ts_json_get(runtime, "path");
	if (path != NULL && path->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "%s: '/runtime/path': expected string, got %s",
				    config_path, ts_json_type_name(path->type));
	if (path != NULL && path->u.string[0] == '\0')
		return ts_error_set(err, 0, "%s: '/runtime/path': empty path ''", config_path);
	search = ts_json_get(runtime, "search");
	if (search != NULL) {
		r = ts_cli_runtime_search_read(search, config_path, &rc.search, err);
		if (r < 0)
			return r;
	}
	rc.path = path != NULL ? path->u.string : NULL;
done:
	if (asprintf(&rc.path_origin, "%s: '/runtime/path'", config_path) < 0) {
		free(rc.search);
		return ts_error_set(err, ENOMEM, "%s: cannot read '/runtime'", config_path);
	}
	*ret = rc;
	return 0;
}

void ts_cli_runtime_config_release(struct ts_cli_runtime_config *rc)
{
	if (rc == NULL)
		return;
	free(rc->path_origin);
	free(rc->search);
	rc->path_origin = NULL;
	rc->search = NULL;
}

/* The core's front (cli/core.h) when this program is the core, else NULL:
 * the runtime lookup skips it as toposhim itself. */
static char *front_of_self(void)
{
	cleanup_error struct ts_error *err = NULL;
	char self[4096], *front = NULL;
	const char *base;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0 || (size_t)n >= sizeof(self) - 1)
		return NULL;
	self[n] = '\0';
	base = strrchr(self, '/');
	if (base == NULL || strcmp(base + 1, TS_CLI_CORE_NAME) != 0)
		return NULL;
	/* (void): without a front the lookup skips the core alone */
	(void)ts_cli_front_path(self, &front, &err);
	return front;
}

int ts_cli_runtime_find(const struct ts_json *config, const char *config_path,
			const char *const *names, char **ret_path, struct ts_error **err)
{
	struct ts_cli_runtime_config rc = {NULL, NULL, NULL};
	cleanup_free char *front = front_of_self();
	struct ts_runtime_lookup lookup = {
		.override = names == NULL ? secure_getenv("TOPOSHIM_RUNTIME") : NULL,
		.path_env = getenv("PATH"),
		.names = names,
		.front_exe = front,
	};
	int r;

	if (config != NULL && names == NULL) {
		r = ts_cli_runtime_config_read(config, config_path, &rc, err);
		if (r < 0)
			return r;
		lookup.path = rc.path;
		lookup.path_origin = rc.path_origin;
		lookup.names = rc.search;
	}
	r = ts_runtime_find(&lookup, ret_path, err);
	ts_cli_runtime_config_release(&rc);
	return r;
}

/* The family whose state names (root, id), or UNKNOWN; with no root, each
 * family's default root for this caller is asked, prefer's first. */
static enum ts_runtime_family keeper_family(const char *runtime_root, const char *container_id,
					    enum ts_runtime_family prefer)
{
	const enum ts_runtime_family ask[] = {prefer, prefer == TS_RUNTIME_FAMILY_CRUN
							      ? TS_RUNTIME_FAMILY_RUNC
							      : TS_RUNTIME_FAMILY_CRUN};

	if (runtime_root != NULL)
		return ts_runtime_family_of_container(runtime_root, container_id);
	/* a runtime's default root holds only its own containers: a crun
	 * status file under /run/runc is not runc's container */
	for (size_t i = 0; i < ARRAY_SIZE(ask); i++) {
		cleanup_free char *root = NULL;

		if (ts_runtime_family_default_root(ask[i], NULL, &root) == 0 &&
		    ts_runtime_family_of_container(root, container_id) == ask[i])
			return ask[i];
	}
	return TS_RUNTIME_FAMILY_UNKNOWN;
}

bool ts_cli_container_known(const char *runtime_root, const char *container_id)
{
	return keeper_family(runtime_root, container_id, TS_RUNTIME_FAMILY_RUNC) !=
	       TS_RUNTIME_FAMILY_UNKNOWN;
}

int ts_cli_runtime_for_container(const struct ts_json *config, const char *config_path,
				 const char *runtime_root, const char *container_id,
				 char **ret_path, struct ts_error **err)
{
	cleanup_free char *configured = NULL;
	enum ts_runtime_family family, configured_family;
	const char *names[2] = {NULL, NULL};
	int r;

	r = ts_cli_runtime_find(config, config_path, NULL, &configured, err);
	if (r < 0)
		return r;
	configured_family = ts_runtime_family_of_path(configured);
	/* a wrapper of the operator's (a script, a runtime of another
	 * family) is trusted to know its containers: it always wins */
	family = configured_family == TS_RUNTIME_FAMILY_UNKNOWN
			 ? TS_RUNTIME_FAMILY_UNKNOWN
			 : keeper_family(runtime_root, container_id, configured_family);
	if (family == TS_RUNTIME_FAMILY_UNKNOWN || family == configured_family) {
		*ret_path = TAKE_PTR(configured);
		return 0;
	}
	/* created by the other runtime (the config changed since): that one */
	names[0] = ts_runtime_family_name(family);
	r = ts_cli_runtime_find(NULL, config_path, names, ret_path, err);
	if (r < 0) {
		cleanup_free char *root = NULL;

		/* (void): without memory for the name, the message says less */
		if (runtime_root == NULL)
			(void)ts_runtime_family_default_root(family, NULL, &root);
		return ts_error_prefix(err, "container '%s' is %s's (its state is in %s)",
				       container_id, names[0],
				       runtime_root != NULL ? runtime_root
				       : root != NULL	    ? root
							    : "its default root");
	}
	return 0;
}

const char *ts_cli_config_path(void)
{
	const char *path = secure_getenv("TOPOSHIM_CONFIG");

	return path != NULL && path[0] != '\0' ? path : TS_CLI_CONFIG_DEFAULT;
}
