/*
 * config.h - the toposhim config file (/etc/toposhim/config.json).
 *
 * The file is one JSON object; env TOPOSHIM_CONFIG names another file.
 * An absent file means "all defaults" and reads as an empty object; a
 * malformed one is an error naming line and column.  Each module reads
 * its own member of the object; this file reads "runtime":
 *   "runtime": {"path": "/usr/bin/crun", "search": ["crun", "runc"]}
 * and turns it into the plain strings src/runtime takes (runtime may not
 * include oci, see contrib/check-layering.sh).
 */
#ifndef TS_CLI_CONFIG_H
#define TS_CLI_CONFIG_H

#include "oci/json.h"
#include "runtime/runtime.h"
#include "util/error.h"

/* Used when TOPOSHIM_CONFIG is unset or empty.  Fixed rather than
 * $(sysconfdir): engines and docs name this path whatever the prefix. */
#define TS_CLI_CONFIG_DEFAULT "/etc/toposhim/config.json"

/**
 * Load the config file.
 * @param[in]  path  the file (TOPOSHIM_CONFIG or TS_CLI_CONFIG_DEFAULT).
 * @param[out] ret   the root object; caller frees with ts_json_free().
 * @param[out] err   set iff the return value is negative.
 * @return 0 (an absent TS_CLI_CONFIG_DEFAULT gives an empty object); -errno
 *         of open/read ("<path>: cannot open: ...", -ENOENT included for any
 *         other path); -EINVAL for bad
 *         JSON ("<path>: line L column C: <reason>", "<path>: empty
 *         document"), a root that is not an object ("<path>: '/':
 *         expected object, got array") or a member given twice in one
 *         object ("<path>: '/state_dir': duplicate key", the JSON pointer of
 *         the first repeat, depth first); -ENOMEM.
 */
int ts_cli_config_load(const char *path, struct ts_json **ret, struct ts_error **err);

/**
 * Refuse members of the config root that no module reads: a misspelt key
 * ("placment") would otherwise be ignored without a word.  Known: runtime,
 * cdi, placement, cgroup, topology, state_dir, gc_grace_seconds, plugins,
 * plugin_dirs, nri_conf.
 * @return 0; -EINVAL "<config_path>: '/<key>': unknown key".
 */
int ts_cli_config_check_keys(const struct ts_json *config, const char *config_path,
			     struct ts_error **err);

/* The "runtime" member, as src/runtime wants it.  Strings borrow from the
 * config tree; the vector and origin are owned. */
struct ts_cli_runtime_config {
	const char *path;    /* "/runtime/path", NULL when absent */
	char *path_origin;   /* "<file>: '/runtime/path'", for messages */
	const char **search; /* "/runtime/search" NULL-terminated, NULL when absent */
};

/**
 * Read and validate config "runtime".
 * @param[in]  config       the loaded root; borrowed, must outlive ret.
 * @param[in]  config_path  file name for messages.
 * @param[out] ret          filled; release with ts_cli_runtime_config_release().
 * @param[out] err          set iff the return value is negative.
 * @return 0; -EINVAL "<file>: '/runtime': expected object, got <type>",
 *         "<file>: '/runtime/path': expected string, got <type>",
 *         "<file>: '/runtime/path': empty path ''",
 *         "<file>: '/runtime/search': expected array, got <type>",
 *         "<file>: '/runtime/search': empty list",
 *         "<file>: '/runtime/search/<i>': expected string, got <type>",
 *         "<file>: '/runtime/search/<i>': empty name ''",
 *         "<file>: '/runtime/<key>': unknown key" (a member but path and
 *         search); -ENOMEM.
 */
int ts_cli_runtime_config_read(const struct ts_json *config, const char *config_path,
			       struct ts_cli_runtime_config *ret, struct ts_error **err);

/** Free what ts_cli_runtime_config_read() allocated; the strings stay. */
void ts_cli_runtime_config_release(struct ts_cli_runtime_config *rc);

/**
 * The runtime to exec: TOPOSHIM_RUNTIME, else the config's "runtime"
 * (path, else the search list), else runc or crun in $PATH and the system
 * dirs (runtime.h, ts_runtime_find()).
 * @param[in]  config  the loaded root, or NULL (no config).
 * @param[in]  names   NULL for the above; else look up only these names
 *                     (NULL-terminated) in $PATH and the system dirs,
 *                     ignoring the override and the config.
 * @param[out] ret_path  caller frees.
 * @return 0; errors of ts_cli_runtime_config_read() and ts_runtime_find().
 */
int ts_cli_runtime_find(const struct ts_json *config, const char *config_path,
			const char *const *names, char **ret_path, struct ts_error **err);

/**
 * The runtime that keeps a container: one container, one runtime, whatever
 * the config says now (a switch from runc to crun leaves the containers
 * runc created to runc, those made before toposhim was installed too).
 *  - the configured one (ts_cli_runtime_find()) when its family is unknown
 *    (a wrapper script of the operator's: it always wins), when the
 *    container's runtime state is that family's, or when it cannot be told;
 *  - else the runtime of the family its state shows (runtime.h,
 *    ts_runtime_family_of_container()), looked up by name in $PATH and the
 *    system dirs.
 * The path is derived from the config, the runtime's own state and $PATH,
 * never from toposhim's state file (issue 10: nothing named only there is
 * executed).
 * @param[in]  runtime_root  the --root the runtime gets, or NULL: then the
 *                           configured family's default root is asked
 *                           first, then the other's (runtime.h
 *                           ts_runtime_family_default_root(): /run/runc,
 *                           /run/crun as root, $XDG_RUNTIME_DIR/<name>
 *                           rootless).
 * @param[in]  container_id  the container.
 * @param[out] ret_path  caller frees.
 * @return 0; errors of ts_cli_runtime_find(); for a container of the other
 *         family whose runtime is not installed, ts_runtime_find()'s
 *         -ENOENT prefixed "container '<id>' is <family>'s (its state is in
 *         <root>): ".
 */
int ts_cli_runtime_for_container(const struct ts_json *config, const char *config_path,
				 const char *runtime_root, const char *container_id,
				 char **ret_path, struct ts_error **err);

/**
 * Whether a runtime keeps a container of that id: its state is in
 * runtime_root, or with runtime_root NULL in runc's or crun's default root
 * for this caller (as ts_cli_runtime_for_container() asks).  Only lstat()s.
 */
bool ts_cli_container_known(const char *runtime_root, const char *container_id);

/** The config file: $TOPOSHIM_CONFIG (secure_getenv) when set and not
 *  empty, else TS_CLI_CONFIG_DEFAULT.  A static or environment string. */
const char *ts_cli_config_path(void);

#endif
