/* passthrough.c - see passthrough.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/config.h"
#include "cli/log.h"
#include "cli/passthrough.h"
#include "runtime/runtime.h"
#include "util/cleanup.h"

extern char **environ;

/* The container the command names: the scanned id, else the first
 * candidate some runtime keeps. */
static const char *named_container(const struct ts_cli_args *args)
{
	if (args->container_id != NULL)
		return args->container_id;
	for (size_t i = 0; i < ARRAY_SIZE(args->container_id_candidates); i++) {
		const char *id = args->container_id_candidates[i];

		if (id != NULL && ts_cli_container_known(args->root, id))
			return id;
	}
	return NULL;
}

void ts_cli_config_unusable(const struct ts_cli_args *args, const struct ts_error *why)
{
	cleanup_free char *text = ts_error_format(why);
	const char *id = named_container(args);
	const char *command = args->command != NULL ? args->command : "";

	if (id != NULL)
		ts_log(TS_LOG_WARNING,
		       "%s; '%s' of container '%s' goes to the runtime keeping it, without the "
		       "config",
		       text != NULL ? text : why->msg, command, id);
	else if (args->command != NULL)
		ts_log(TS_LOG_WARNING, "%s; '%s' goes to runc or crun, without the config",
		       text != NULL ? text : why->msg, command);
	else /* no command: --version, --help, no argument at all */
		ts_log(TS_LOG_WARNING, "%s; the call goes to runc or crun, without the config",
		       text != NULL ? text : why->msg);
}

void ts_cli_delete_held(const char *id, const struct ts_error *why)
{
	ts_log(TS_LOG_WARNING,
	       "%s%sdelete '%s': the allocation is not released now (the config is unusable)",
	       why != NULL ? why->msg : "", why != NULL ? "; " : "", id);
}

int ts_cli_runtime_for_command(const struct ts_cli_args *args, const struct ts_json *config,
			       const char *config_path, char **ret_path, int *ret_depth,
			       struct ts_error **err)
{
	cleanup_free char *path = NULL;
	const char *id = args->rewrite ? NULL : named_container(args);
	bool without = false;
	int r;

	/* a command on one container goes to the runtime that keeps it */
	if (id != NULL)
		r = ts_cli_runtime_for_container(config, config_path, args->root, id, &path, err);
	else
		r = ts_cli_runtime_find(config, config_path, NULL, &path, err);
	/* a runtime section that cannot be read, a runtime it names that is
	 * not there (a typo, a moved binary: helper-8) or is toposhim itself
	 * must not strand the running containers: every command but a create
	 * or run goes on without the config */
	if (r < 0 && config != NULL && !args->rewrite && ts_error_code(*err) != -ENOMEM) {
		ts_cli_config_unusable(args, *err);
		ts_error_clear(err);
		config = NULL;
		without = true;
		if (id != NULL)
			r = ts_cli_runtime_for_container(NULL, config_path, args->root, id, &path,
							 err);
		else
			r = ts_cli_runtime_find(NULL, config_path, NULL, &path, err);
	}
	if (r < 0)
		return r;
	r = ts_runtime_check_depth(getenv(TS_RUNTIME_DEPTH_ENV), path, err);
	if (r < 0)
		return r;
	*ret_depth = r;
	*ret_path = TAKE_PTR(path);
	return without ? 1 : 0;
}

int ts_cli_passthrough(int argc, char **argv, const struct ts_cli_args *args, char **ret_path,
		       char ***ret_argv, char ***ret_envp, struct ts_error **err)
{
	cleanup_json struct ts_json *config = NULL;
	cleanup_free char *runtime_path = NULL;
	const char *config_path = ts_cli_config_path();
	const char *override = secure_getenv("TOPOSHIM_RUNTIME");
	int depth, r;

	if (override == NULL || override[0] == '\0') {
		cleanup_error struct ts_error *why = NULL;

		/* a broken config stops new containers, not the running ones */
		if (ts_cli_config_load(config_path, &config, &why) < 0) {
			if (why->errnum == ENOMEM)
				return ts_error_set(err, ENOMEM, "%s", why->msg);
			ts_cli_config_unusable(args, why);
		}
	}
	r = ts_cli_runtime_for_command(args, config, config_path, &runtime_path, &depth, err);
	if (r < 0)
		return r;
	if (args->command != NULL &&
	    (strcmp(args->command, "create") == 0 || strcmp(args->command, "run") == 0 ||
	     strcmp(args->command, "exec") == 0)) {
		cleanup_error struct ts_error *affinity_err = NULL;

		/* (void): the runtime runs either way; a narrowed mask only
		 * costs the container CPUs, as it would without toposhim */
		(void)ts_runtime_reset_affinity(NULL, &affinity_err);
	}
	return ts_runtime_build_exec(runtime_path, argc, argv, environ, depth, ret_path, ret_argv,
				     ret_envp, err);
}

/* passthrough.h: the runtime root of a container. */
int ts_cli_runtime_root(const struct ts_cli_args *args, const char *runtime_path, char **ret,
			struct ts_error **err)
{
	enum ts_runtime_family family = ts_runtime_family_of_path(runtime_path);
	const char *root = args->root;
	cleanup_free char *cwd = NULL, *fallback = NULL;

	if (root == NULL) {
		/* a wrapper of unknown family: runc's default, as before */
		if (ts_runtime_family_default_root(
			    family == TS_RUNTIME_FAMILY_UNKNOWN ? TS_RUNTIME_FAMILY_RUNC : family,
			    NULL, &fallback) < 0)
			return ts_error_set(err, ENOMEM, "--root");
		root = fallback;
	}
	if (root[0] == '/')
		*ret = strdup(root);
	else if ((cwd = getcwd(NULL, 0)) == NULL)
		return ts_error_set(err, errno, "--root '%s': cannot tell the current directory",
				    root);
	else if (asprintf(ret, "%s/%s", cwd, root) < 0)
		*ret = NULL;
	return *ret != NULL ? 0 : ts_error_set(err, ENOMEM, "--root");
}
