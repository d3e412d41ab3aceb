/*
 * main.c - toposhim-core, the whole OCI runtime wrapper (cli/core.h).
 *
 * Called exactly as runc is: by the front (src/cli/front.c, `toposhim`)
 * for create, run, delete and `toposhim hook <stage>`, and by the runtime
 * for the hooks it injected (their path is this program's own, so a hook
 * costs no front).  It runs every other command too, as the front does
 * (ts_cli_passthrough()): tests/toposhim-test is this program alone.
 *
 * For `create` and `run` it rewrites the bundle's config.json
 * (ts_cmd_create); then it execve()s the real runtime with argv unchanged
 * but argv[0], the environment unchanged but TOPOSHIM_DEPTH=1 (see
 * runtime/runtime.h), and every inherited fd untouched (everything we
 * open is O_CLOEXEC).  Errors are logged (cli/log.h) and exit 1.
 *
 * Before the exec of create and run, the CPU affinity is widened to every
 * online CPU (ts_runtime_reset_affinity()): a pinned caller's mask must
 * not become the container's.
 *
 * `delete` also releases the container's allocation first
 * (ts_cmd_delete(); no poststop hook is injected unless plugins need
 * one), and so always reads the config.
 *
 * This and front.c are the only files that exit or exec.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd-create.h"
#include "cli/cmd-hook.h"
#include "cli/config.h"
#include "cli/log.h"
#include "cli/passthrough.h"
#include "cli/scan.h"
#include "runtime/runtime.h"
#include "util/cleanup.h"

extern char **environ;

/* Everything before the exec: returns the path and vectors to execve(). */
static int prepare(int argc, char **argv, const struct ts_cli_args *args, char **ret_path,
		   char ***ret_argv, char ***ret_envp, struct ts_error **err)
{
	cleanup_json struct ts_json *config = NULL;
	cleanup_free char *runtime_path = NULL;
	const char *config_path = ts_cli_config_path();
	bool delete = args->command != NULL && strcmp(args->command, "delete") == 0;
	bool unusable;
	int depth, r;

	if (!args->rewrite && !delete)
		return ts_cli_passthrough(argc, argv, args, ret_path, ret_argv, ret_envp, err);
	r = ts_cli_config_load(config_path, &config, err);
	if (r < 0 && (args->rewrite || ts_error_code(*err) == -ENOMEM))
		return r;
	unusable = r < 0;
	if (r < 0) {
		/* a delete goes on: a broken config must not leave the engine a
		 * container it cannot remove */
		ts_cli_config_unusable(args, *err);
		ts_error_clear(err);
	}
	/* create and run: the configured runtime; delete: the one that keeps
	 * the container */
	r = ts_cli_runtime_for_command(args, config, config_path, &runtime_path, &depth, err);
	if (r < 0)
		return r;
	if ((unusable || r > 0) && delete) {
		/* its settle would run the runtime the config names, its pools
		 * are the config's: the record stays until the next create's
		 * collection, which a fixed config lets run */
		ts_cli_delete_held(args->container_id != NULL ? args->container_id : "", NULL);
		delete = false;
	}
	if (args->rewrite) {
		cleanup_error struct ts_error *affinity_err = NULL;

		/* the effective config: the file, or the defaults when the
		 * default file is absent (ts_cli_config_load()) */
		ts_log(TS_LOG_DEBUG, "%s '%s': rewriting, runtime '%s', config '%s'%s",
		       args->command, args->container_id, runtime_path, config_path,
		       access(config_path, F_OK) == 0 ? "" : " (absent: built-in defaults)");
		r = ts_cmd_create(args, config, config_path, runtime_path, err);
		if (r < 0)
			return r;
		/* (void): the runtime runs either way; a narrowed mask only
		 * costs the container CPUs, as it would without toposhim */
		(void)ts_runtime_reset_affinity(NULL, &affinity_err);
	}
	/* the engine's delete releases the allocation (no poststop hook) */
	if (delete)
		ts_cmd_delete(argc, argv, args, config, config_path, runtime_path);
	return ts_runtime_build_exec(runtime_path, argc, argv, environ, depth, ret_path, ret_argv,
				     ret_envp, err);
}

int main(int argc, char **argv)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *runtime_path = NULL;
	cleanup_strv char **runtime_argv = NULL;
	cleanup_strv char **runtime_envp = NULL;
	struct ts_cli_args args;
	int r;

	/* `toposhim hook <stage>`: only ever run by the runtime, from the
	 * hooks ts_hook_inject() put into config.json; runc has no such
	 * command, so this never shadows one of the runtime's. */
	if (argc >= 2 && strcmp(argv[1], "hook") == 0) {
		r = ts_cmd_hook(argc - 1, argv + 1, &err);
		if (r < 0) {
			ts_log_error(err);
			return EXIT_FAILURE;
		}
		return EXIT_SUCCESS;
	}
	r = ts_cli_scan(argc, argv, &args, &err);
	if (r < 0) {
		ts_log_error(err);
		return EXIT_FAILURE;
	}
	ts_log_setup(&args);
	/* the runtime judges its own command line: stderr and, on every other
	 * command, the --log file stay exactly as the runtime leaves them */
	if (args.warning != NULL && args.command != NULL &&
	    (strcmp(args.command, "create") == 0 || strcmp(args.command, "run") == 0))
		ts_log_file_only(TS_LOG_DEBUG, "%s", args.warning);
	/* a refusal is the first stderr line an engine sees: the warnings of
	 * a create wait behind it (log.h) */
	if (args.rewrite)
		ts_log_hold_stderr();
	r = prepare(argc, argv, &args, &runtime_path, &runtime_argv, &runtime_envp, &err);
	ts_cli_args_release(&args);
	if (r < 0) {
		ts_log_error(err);
		return EXIT_FAILURE;
	}
	ts_log_release_stderr();
	execve(runtime_path, runtime_argv, runtime_envp);
	ts_log(TS_LOG_ERROR, "cannot exec runtime '%s': %s", runtime_path, strerror(errno));
	return EXIT_FAILURE;
}
