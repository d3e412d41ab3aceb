/*
 * cmd-create.h - the create/run rewrite: what main calls before it execs
 * the runtime for `create` and `run`.
 */
#ifndef TS_CLI_CMD_CREATE_H
#define TS_CLI_CMD_CREATE_H

#include "cli/scan.h"
#include "oci/json.h"
#include "util/error.h"

/**
 * Rewrite the bundle's config.json for a create/run.
 * @param[in]  args    the scanned argv (args->rewrite is true; bundle,
 *                     config_file, container_id set as scan.h says);
 *                     borrowed.
 * @param[in]  config  the toposhim config object (empty when the file is
 *                     absent); borrowed.
 * @param[in]  config_path   the file config was read from, for messages and
 *                           for the TOPOSHIM_CONFIG of the injected hooks.
 * @param[in]  runtime_path  the runtime main will exec (recorded with the
 *                           allocation for `<runtime> update`).
 * @param[out] err     set iff the return value is negative.
 * @return 0 when the runtime may be exec'd; a negative errno with *err set
 *         when the create must fail (main logs *err and exits 1).
 */
int ts_cmd_create(const struct ts_cli_args *args, const struct ts_json *config,
		  const char *config_path, const char *runtime_path, struct ts_error **err);

/**
 * The engine's `delete` of a container: release its allocation before the
 * runtime deletes it, when `--force` (or `-f`) is given or its init is gone
 * (a delete of a running container without --force fails in the runtime,
 * and the container keeps its CPUs).  Opens the store only when
 * allocations.json exists, learns the container's init from the runtime's
 * state, drops the record of (runtime root, container id), commits, then
 * gives the freed CPUs back to the shared pool (ts_pools_settle()).  When
 * plugins have a delete stage the injected poststop hook does this instead,
 * with the record still there for the plugins.  Never fails the delete: a
 * problem is logged as a warning (", ignoring") and the runtime runs.
 * @param[in] argc, argv   the engine's argv (for --force).
 * @param[in] args         the scan of argv; borrowed.
 * @param[in] config, config_path, runtime_path  as for ts_cmd_create().
 */
void ts_cmd_delete(int argc, char **argv, const struct ts_cli_args *args,
		   const struct ts_json *config, const char *config_path, const char *runtime_path);

#endif
