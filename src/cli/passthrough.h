/*
 * passthrough.h - every command but create, run, delete and hook: what the
 * front (src/cli/front.c) and the core (src/cli/main.c) do before they
 * exec the runtime.
 *
 * Loads nothing but the config's "runtime" object, and only when
 * TOPOSHIM_RUNTIME is unset.  A command on one container (`start`,
 * `state`, `kill`, `exec`, ...) reaches the runtime that keeps it, told by
 * where its runtime state lives (ts_cli_runtime_for_container()): the one
 * that created it, even after the configured runtime changed.  Before the
 * exec of `exec` (and of a `create` or `run` that ts_cli_scan() left
 * alone), the CPU affinity is widened to every online CPU
 * (ts_runtime_reset_affinity()).
 */
#ifndef TS_CLI_PASSTHROUGH_H
#define TS_CLI_PASSTHROUGH_H

#include "cli/scan.h"
#include "oci/json.h"
#include "util/error.h"

/**
 * Warn that the config cannot be used ("<why>; '<command>' of container
 * '<id>' goes to the runtime keeping it, without the config", or "...;
 * '<command>' goes to runc or crun, without the config" when it names no
 * container a runtime knows, "...; the call goes to runc or crun, without
 * the config" for no command: --version, --help): a command other than
 * create and run then
 * goes on as without a config, so that a typo in the config never stops
 * the engine from killing, exec'ing into or deleting a running container
 * (its runtime is told by its state, ts_cli_runtime_for_container()).
 * @param[in] why  the load's or the runtime section's error; borrowed.
 */
void ts_cli_config_unusable(const struct ts_cli_args *args, const struct ts_error *why);

/**
 * Warn that a delete releases nothing under a config it cannot use (the
 * state dir and pools are the config's; the first create with a sound
 * config collects the record): "delete '<id>': the allocation is not
 * released now (the config is unusable)", after "<why>; " when why is not
 * NULL (a config that parses but that a create refuses; for one that does
 * not parse, ts_cli_config_unusable() told why already).
 * @param[in] id   the container id ("" when unknown); borrowed.
 * @param[in] why  the config's error, or NULL; borrowed.
 */
void ts_cli_delete_held(const char *id, const struct ts_error *why);

/**
 * The runtime a command goes to, and the depth its exec carries
 * (runtime.h TS_RUNTIME_DEPTH_ENV).  A command that names a container and
 * does not rewrite (every one but the create and run ts_cli_scan() marks
 * args->rewrite) goes to the runtime that keeps the container
 * (ts_cli_runtime_for_container()); when the scan could not tell the id,
 * to the keeper of the first of args->container_id_candidates a runtime
 * knows (ts_cli_container_known()).  Any other command goes to the
 * configured runtime (ts_cli_runtime_find()).  A config whose "runtime"
 * section cannot be read, or names a runtime that cannot be found or is
 * toposhim itself, is, for any command but a rewriting create or run,
 * warned about (ts_cli_config_unusable()) and passed over: the runtime is
 * found as without a config.
 * @param[in]  config       the loaded config; NULL when TOPOSHIM_RUNTIME
 *                          is set (it wins, and the config is not read)
 *                          or when it could not be loaded.
 * @param[in]  config_path  for messages.
 * @param[out] ret_path     caller frees.
 * @param[out] ret_depth    the depth to pass to ts_runtime_build_exec().
 * @return 0; 1 when the config's runtime was passed over (the caller
 *         must not act on the config's other members as if it were sound:
 *         a delete then releases nothing, its settle would run the same
 *         missing runtime); the errors of ts_cli_runtime_for_container(),
 *         ts_cli_runtime_find() and ts_runtime_check_depth().
 */
int ts_cli_runtime_for_command(const struct ts_cli_args *args, const struct ts_json *config,
			       const char *config_path, char **ret_path, int *ret_depth,
			       struct ts_error **err);

/**
 * Build the runtime's vectors for a passthrough command.
 * @param[in]  argc, argv  toposhim's command line (borrowed).
 * @param[in]  args        ts_cli_scan() of it; args->rewrite is false and
 *                         the command is not delete (the core's).
 * @param[out] ret_path    path for execve(); caller frees.
 * @param[out] ret_argv    argv for execve(); caller frees (ts_strv_free).
 * @param[out] ret_envp    envp for execve(); caller frees.
 * @param[out] err         set iff the return value is negative.
 * A config that cannot be loaded (absent TOPOSHIM_CONFIG file, bad JSON)
 * is warned about (ts_cli_config_unusable()) and the command goes on
 * without it.
 * @return 0; -ENOMEM; the errors of ts_cli_runtime_for_command() and
 *         ts_runtime_build_exec().
 */
int ts_cli_passthrough(int argc, char **argv, const struct ts_cli_args *args, char **ret_path,
		       char ***ret_argv, char ***ret_envp, struct ts_error **err);

/**
 * The runtime root of a container, absolute (the runtime and its hooks run
 * from other directories): the engine's --root (made absolute against the
 * working directory), else the runtime's own default for this caller
 * (runtime.h ts_runtime_family_default_root(): /run/runc or /run/crun as
 * root, $XDG_RUNTIME_DIR/<name> for a rootless caller; runc's for a runtime
 * of unknown family).  With the container id it names the container in the
 * store (state.h).
 * @param[out] ret  a new string; caller frees.
 * @return 0; -errno of getcwd(3) "--root '<root>': cannot tell the current
 *         directory"; -ENOMEM.
 */
int ts_cli_runtime_root(const struct ts_cli_args *args, const char *runtime_path, char **ret,
			struct ts_error **err);

#endif
