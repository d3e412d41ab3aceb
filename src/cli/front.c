/*
 * front.c - toposhim, the front of the OCI runtime wrapper (cli/core.h).
 *
 * A static PIE: no dynamic loader runs, so a passthrough command (`state`,
 * `kill`, `list`, `exec`, `start`, `ps`, `events`, `features`, ...) costs
 * about what a static program that only execs the runtime does, and no
 * LD_PRELOAD, LD_LIBRARY_PATH or LD_AUDIT of the caller's is loaded into
 * it.  It runs those itself (ts_cli_passthrough(), the same code as the
 * core's) and execs the core, with argv and the environment unchanged, for
 * `create`, `run`, `delete` and `toposhim hook <stage>`: the commands that
 * need the topology, the CDI registry, the state and the plugins.  A
 * create or run of a plain container, and a delete of a container without
 * a record, it runs itself too (cli/plain.h, state/plain.h).
 *
 * The core is found by the front's own path alone (ts_cli_core_path()),
 * checked and executed through one descriptor (ts_cli_core_open()).
 *
 * This and main.c are the only files that exit or exec.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/config.h"
#include "cli/core.h"
#include "cli/log.h"
#include "cli/passthrough.h"
#include "cli/plain.h"
#include "cli/scan.h"
#include "runtime/runtime.h"
#include "util/cleanup.h"

extern char **environ;

/* Exec the core with argv and environ unchanged; returns only on error. */
static int exec_core(char **argv, struct ts_error **err)
{
	cleanup_free char *core = NULL;
	cleanup_close int fd = -1;
	char self[4096];
	struct stat self_st;
	ssize_t n;
	int r;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		return ts_error_set(err, errno, "/proc/self/exe: cannot read link");
	if ((size_t)n >= sizeof(self) - 1)
		return ts_error_set(err, ENAMETOOLONG, "/proc/self/exe: cannot read link");
	self[n] = '\0';
	if (stat("/proc/self/exe", &self_st) < 0)
		return ts_error_set(err, errno, "/proc/self/exe: cannot stat");
	r = ts_cli_core_path(self, &core, err);
	if (r < 0)
		return r;
	r = ts_cli_core_open(core, &self_st, &fd, err);
	if (r < 0)
		return r;
	fexecve(fd, argv, environ);
	return ts_error_set(err, errno, "cannot exec the core '%s'", core);
}

static bool is_command(const struct ts_cli_args *args, const char *name)
{
	return args->command != NULL && strcmp(args->command, name) == 0;
}

/* A create or run of a plain container, or a delete of a container with
 * no record: the runtime's vectors, built here (cli/plain.h).  false: the
 * core's work (it reports every problem, so none is reported here). */
static bool plain(int argc, char **argv, const struct ts_cli_args *args, char **ret_path,
		  char ***ret_argv, char ***ret_envp)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_free char *runtime_path = NULL;
	const char *config_path = ts_cli_config_path();
	bool delete = is_command(args, "delete");
	int depth;

	if (ts_cli_config_load(config_path, &config, &err) < 0)
		return false;
	if (delete &&!ts_cli_plain_delete(argc, argv, args, config))
		return false;
	/* create: the configured runtime; delete: the one that keeps it */
	if (ts_cli_runtime_for_command(args, config, config_path, &runtime_path, &depth, &err) < 0)
		return false;
	if (!delete &&!ts_cli_plain_create(args, config, config_path, runtime_path))
		return false;
	if (!delete) {
		cleanup_error struct ts_error *affinity_err = NULL;

		/* (void): as the core's create (main.c) */
		(void)ts_runtime_reset_affinity(NULL, &affinity_err);
	}
	return ts_runtime_build_exec(runtime_path, argc, argv, environ, depth, ret_path, ret_argv,
				     ret_envp, &err) >= 0;
}

int main(int argc, char **argv)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *runtime_path = NULL;
	cleanup_strv char **runtime_argv = NULL;
	cleanup_strv char **runtime_envp = NULL;
	struct ts_cli_args args;
	int r;

	/* the hooks' path is the core's own: this is a hook run by hand */
	if (argc >= 2 && strcmp(argv[1], "hook") == 0) {
		(void)exec_core(argv, &err);
		ts_log_error(err);
		return EXIT_FAILURE;
	}
	r = ts_cli_scan(argc, argv, &args, &err);
	if (r < 0) {
		ts_log_error(err);
		return EXIT_FAILURE;
	}
	ts_log_setup(&args);
	if ((args.rewrite || is_command(&args, "delete")) &&
	    plain(argc, argv, &args, &runtime_path, &runtime_argv, &runtime_envp)) {
		ts_cli_args_release(&args);
		execve(runtime_path, runtime_argv, runtime_envp);
		ts_log(TS_LOG_ERROR, "cannot exec runtime '%s': %s", runtime_path, strerror(errno));
		return EXIT_FAILURE;
	}
	if (is_command(&args, "create") || is_command(&args, "run") ||
	    is_command(&args, "delete")) {
		(void)exec_core(argv, &err);
		ts_log_error(err);
		ts_cli_args_release(&args);
		return EXIT_FAILURE;
	}
	r = ts_cli_passthrough(argc, argv, &args, &runtime_path, &runtime_argv, &runtime_envp,
			       &err);
	ts_cli_args_release(&args);
	if (r < 0) {
		ts_log_error(err);
		return EXIT_FAILURE;
	}
	execve(runtime_path, runtime_argv, runtime_envp);
	ts_log(TS_LOG_ERROR, "cannot exec runtime '%s': %s", runtime_path, strerror(errno));
	return EXIT_FAILURE;
}
