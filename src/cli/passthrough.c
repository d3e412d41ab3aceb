/* passthrough.c - see passthrough.h. */
#include <stdlib.h>
#include <string.h>

#include "cli/config.h"
#include "cli/passthrough.h"
#include "runtime/runtime.h"
#include "util/cleanup.h"

extern char **environ;

int ts_cli_passthrough(int argc, char **argv, const struct ts_cli_args *args, char ***ret_argv,
		       char ***ret_envp, struct ts_error **err)
{
	cleanup_json struct ts_json *config = NULL;
	cleanup_free char *runtime_path = NULL;
	const char *config_path = secure_getenv("TOPOSHIM_CONFIG");
	const char *override = secure_getenv("TOPOSHIM_RUNTIME");
	int depth, r;

	if (config_path == NULL || config_path[0] == '\0')
		config_path = TS_CLI_CONFIG_DEFAULT;
	if (override == NULL || override[0] == '\0') {
		r = ts_cli_config_load(config_path, &config, err);
		if (r < 0)
			return r;
	}
	/* a command on one container goes to the runtime that keeps it */
	if (args->container_id != NULL)
		r = ts_cli_runtime_for_container(config, config_path, args->root,
						 args->container_id, &runtime_path, err);
	else
		r = ts_cli_runtime_find(config, config_path, NULL, &runtime_path, err);
	if (r < 0)
		return r;
	depth = ts_runtime_check_depth(getenv(TS_RUNTIME_DEPTH_ENV), runtime_path, err);
	if (depth < 0)
		return depth;
	if (args->command != NULL &&
	    (strcmp(args->command, "create") == 0 || strcmp(args->command, "run") == 0 ||
	     strcmp(args->command, "exec") == 0)) {
		cleanup_error struct ts_error *affinity_err = NULL;

		/* (void): the runtime runs either way; a narrowed mask only
		 * costs the container CPUs, as it would without toposhim */
		(void)ts_runtime_reset_affinity(NULL, &affinity_err);
	}
	return ts_runtime_build_exec(runtime_path, argc, argv, environ, depth, ret_argv, ret_envp,
				     err);
}
