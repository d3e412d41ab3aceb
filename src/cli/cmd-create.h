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

#endif
