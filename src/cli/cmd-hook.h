/*
 * cmd-hook.h - `toposhim hook <stage>`: the lifecycle hooks toposhim injects
 * into the config.json it rewrites, and the code that injects them.
 *
 * The runtime runs them with the container's state on stdin (OCI
 * runtime-spec v1.0+ runtime.md "State": ociVersion, id, status, pid, bundle,
 * annotations; config.md "POSIX-platform Hooks": createRuntime, poststop):
 *   createRuntime  `toposhim hook create-runtime`: records the init pid, its
 *                  start time and its cgroup in the allocation, which turns
 *                  "created";
 *   poststop       `toposhim hook poststop`: removes the allocation.
 * The hook entries carry an absolute path (the running toposhim, from
 * /proc/self/exe) and a clean environment: PATH, TOPOSHIM_STATE_DIR and
 * TOPOSHIM_CONFIG, and every other variable that changes toposhim's
 * configuration (TOPOSHIM_TOPOLOGY_XML, TOPOSHIM_SYSFS_ROOT,
 * TOPOSHIM_PROC_ROOT, TOPOSHIM_CGROUP_ROOT) when the create saw it, a
 * relative path made absolute: every hook runs with the configuration of
 * the create; nothing from the image.
 *
 * main calls ts_cmd_hook() when argv[1] is exactly "hook" (runc has no such
 * command, so an engine never sends it).
 */
#ifndef TS_CLI_CMD_HOOK_H
#define TS_CLI_CMD_HOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/json.h"
#include "state/state.h"
#include "util/error.h"

struct ts_pools;

/** argv[2] of the two hooks. */
#define TS_HOOK_STAGE_CREATE_RUNTIME "create-runtime"
#define TS_HOOK_STAGE_POSTSTOP "poststop"
/** The hooks' environment variable naming the container's runtime root. */
#define TS_HOOK_ROOT_ENV "TOPOSHIM_RUNTIME_ROOT"
/** PATH given to the hooks. */
#define TS_HOOK_PATH_ENV "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
/** Largest state document read from stdin (1 MiB). */
#define TS_HOOK_STDIN_MAX_BYTES (1u << 20)

/*
 * The config members of the state store (/etc/toposhim/config.json, or
 * $TOPOSHIM_CONFIG):
 *   "state_dir": "/run/toposhim"   absolute path; TOPOSHIM_STATE_DIR wins
 *   "gc_grace_seconds": 60         integer >= 0: how long a create may take
 *                                  before its allocation counts as stale
 */
struct ts_cli_state_config {
	const char *state_dir;	/* borrowed from the config tree; NULL when absent */
	uint64_t gc_grace_usec; /* TS_STATE_GC_GRACE_USEC_DEFAULT when absent */
};

/**
 * Read "state_dir" and "gc_grace_seconds" from the loaded config, and check
 * the state dir that wins (ts_state_dir_resolve()): $TOPOSHIM_STATE_DIR when
 * set and not empty (empty counts as unset), else "state_dir".  Every
 * command that uses the store reads it here first, so that a bad value is
 * refused, naming its source, before anything is opened or created.  Only
 * stat()s; the built-in default is left to the store.
 * @param[in]  config       root object from ts_cli_config_load(); borrowed, must
 *                          outlive ret.
 * @param[in]  config_path  file name for messages.
 * @param[out] ret          filled on success.
 * @return 0; -EINVAL "<file>: '/state_dir': expected string, got <type>",
 *         "<file>: '/state_dir': not absolute '<v>'", "<file>: '/state_dir':
 *         not a directory '<v>'" (it exists and is something else),
 *         "environment: 'TOPOSHIM_STATE_DIR': not absolute '<v>'",
 *         "environment: 'TOPOSHIM_STATE_DIR': not a directory '<v>'", "<file>:
 *         '/gc_grace_seconds': expected number, got <type>", "<file>:
 *         '/gc_grace_seconds': invalid seconds '<v>'".
 */
int ts_cli_state_config_read(const struct ts_json *config, const char *config_path,
			     struct ts_cli_state_config *ret, struct ts_error **err);

/** The container state a hook reads on stdin. */
struct ts_hook_state {
	char *oci_version;  /* "ociVersion"; NULL when absent */
	char *container_id; /* "id"; never NULL after a successful parse */
	char *status;	    /* "status"; NULL when absent */
	pid_t pid;	    /* "pid"; 0 when absent or 0 (poststop of a dead container) */
	char *bundle;	    /* "bundle"; NULL when absent */
	/* Not part of the OCI state: the runtime root the create was given,
	 * from the hook entry's TOPOSHIM_RUNTIME_ROOT; borrowed from the
	 * environment; NULL for a hook entry without it (an older toposhim),
	 * found then by container id and bundle. */
	const char *runtime_root;
};

/**
 * Parse the state document.
 * Implements: OCI runtime-spec runtime.md "State" (id: string, required;
 * pid: integer; ociVersion, status, bundle: strings; annotations ignored).
 * @param[in]  buf, len  the text read from stdin; need not be NUL-terminated.
 * @param[out] ret       filled on success; release with ts_hook_state_release().
 * @return 0; -EINVAL with "stdin: line L column C: <reason>", "stdin: empty
 *         document", "stdin: '/': expected object, got <type>", "stdin:
 *         '/id': missing", "stdin: '/<key>': expected string, got <type>" or
 *         "stdin: '/pid': invalid pid '<text>'"; -ENOMEM.
 */
int ts_hook_state_parse(const char *buf, size_t len, struct ts_hook_state *ret,
			struct ts_error **err);

/** Free what ts_hook_state_parse() filled and zero it (idempotent). */
void ts_hook_state_release(struct ts_hook_state *st);

/**
 * The createRuntime stage: record st->pid (its start time and cgroup from
 * opts->proc_root) in the allocation of the container (st->runtime_root,
 * st->container_id; without a root, the record of that id whose bundle is
 * st->bundle), state "created".
 * @param[in]  st           parsed state; st->pid must be > 0.
 * @param[in]  opts         state store options; borrowed.
 * @param[out] ret_warning  a store-rebuild warning to log, or NULL; caller
 *                          frees; may be NULL to drop it.
 * @return 1 when an allocation was updated; 0 when the container has none
 *         (not placed by toposhim, or already collected); -EINVAL "stdin:
 *         '/pid': missing" when st->pid is 0; -ENOENT when the process is
 *         gone; errors of the store (lock timeout, write).
 */
int ts_hook_create_runtime(const struct ts_hook_state *st, const struct ts_state_options *opts,
			   char **ret_warning, struct ts_error **err);

/**
 * ts_hook_create_runtime(), and also hand back a copy of the updated record.
 * @param[in,out] pools    NULL, or the pools of the config: then, before the
 *                         commit, ts_pools_catch_up() for this container.
 * @param[out] ret_record  may be NULL; the record (caller frees with
 *                         ts_alloc_free()), NULL when there was none.
 */
int ts_hook_create_runtime_record(const struct ts_hook_state *st,
				  const struct ts_state_options *opts, struct ts_pools *pools,
				  struct ts_alloc **ret_record, char **ret_warning,
				  struct ts_error **err);

/**
 * The poststop stage: remove the allocation of the container (found as by
 * ts_hook_create_runtime()).  A missing
 * allocation is not an error (GC collected it, or it never existed).
 * @param[out] ret_removed  the removed record, for the caller to release its
 *                          CPUs elsewhere (caller frees); may be NULL.
 * @param[out] ret_warning  as for ts_hook_create_runtime().
 * @return 1 when removed; 0 when there was none; errors of the store.
 */
int ts_hook_poststop(const struct ts_hook_state *st, const struct ts_state_options *opts,
		     struct ts_alloc **ret_removed, char **ret_warning, struct ts_error **err);

/**
 * `toposhim hook <stage>`: read the state from stdin, run the stage on the
 * store in $TOPOSHIM_STATE_DIR, else the config's "state_dir", else
 * /run/toposhim; log a store-rebuild warning (ts_log, level warning).
 * @param[in] argc, argv  argv[0] is "hook", argv[1] the stage; nothing after.
 * @return 0; -EINVAL "hook: unknown stage '<s>' (expected 'create-runtime' or
 *         'poststop')", "hook: missing stage ...", "hook: unexpected
 *         argument '<a>'"; -EFBIG for more than 1 MiB on stdin; errors of
 *         ts_hook_state_parse() and of the stage, prefixed "hook <stage>";
 *         errors of ts_cli_config_load()/ts_cli_state_config_read().
 */
int ts_cmd_hook(int argc, char **argv, struct ts_error **err);

/**
 * Path of the running executable (readlink of /proc/self/exe).
 * @param[out] ret  absolute path; caller frees.
 * @return 0; -errno "/proc/self/exe: cannot read link"; -ENOMEM.
 */
int ts_hook_self_exe(char **ret, struct ts_error **err);

/** What the injected hooks get in their environment besides PATH; NULL/"" leaves one out. */
struct ts_hook_env {
	const char *state_dir;	  /* TOPOSHIM_STATE_DIR: pass what the create itself saw */
	const char *config_path;  /* TOPOSHIM_CONFIG */
	const char *runtime_root; /* TOPOSHIM_RUNTIME_ROOT: the create's --root (absolute) */
};

/**
 * Add the createRuntime and poststop hooks to a config.json tree.  An entry
 * already there from an earlier attempt of the same create (args
 * ["toposhim", "hook", <stage>]) is replaced in place, so a retried create
 * never runs a hook twice; other hooks are left as they are, ours go last.
 * Implements: OCI runtime-spec config.md "POSIX-platform Hooks" (path, args, env).
 * @param[in,out] config     the config.json root; edited in place.
 * @param[in]     self_exe   absolute path of toposhim (ts_hook_self_exe()).
 * @param[in]     he         the hooks' environment; borrowed.
 * The other configuration variables (see the top of this file) are copied
 * from this process's environment (secure_getenv) in that order, after
 * TOPOSHIM_RUNTIME_ROOT.
 * @return 0; -EINVAL "config.json: '/hooks': expected object, got <type>"
 *         (likewise for '/hooks/createRuntime' and '/hooks/poststop' that
 *         are not arrays) or "hook: not an absolute path '<p>'"; -errno
 *         "hook: env: <name>: cannot resolve '<value>'" when a relative path
 *         cannot be made absolute (no working directory); -ENOMEM.
 */
/**
 * Whether a config.json tree carries the poststop hook ts_hook_inject()
 * adds (a "hooks.poststop" entry with args ["toposhim", "hook",
 * "poststop"]): the runtime's delete will run it, and it releases the
 * allocation.  A container created before plugins were configured has
 * none: its engine's delete must release it (cmd-delete.c).
 * @param[in] config  the config.json root; borrowed; NULL: false.
 */
bool ts_hook_poststop_injected(const struct ts_json *config);

int ts_hook_inject(struct ts_json *config, const char *self_exe, const struct ts_hook_env *he,
		   struct ts_error **err);

#endif
