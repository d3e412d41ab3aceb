/*
 * plain.h - the front's own create and delete of plain containers
 * (state/plain.h): what lets `toposhim create` of a container that asks
 * for nothing, and the engine's `delete` of one, exec the runtime without
 * the core (no dynamic loading, no store lock, no rewrite; issue 15).
 *
 * Everything here answers "may the front do it alone?"; any doubt (a file
 * that cannot be read, a config.json the core would judge, a test's
 * TOPOSHIM_* override) answers no, and the core does what it always did.
 * Nothing here fails: the core reports every problem.
 */
#ifndef TS_CLI_PLAIN_H
#define TS_CLI_PLAIN_H

#include <stdbool.h>

#include "cli/scan.h"
#include "oci/json.h"

/**
 * Whether an OCI config asks for nothing toposhim acts on, in a form the
 * core would leave byte-identical.  A conservative subset of the core's
 * verdict (cmd-create.c leave_untouched()): the root, "annotations",
 * "process", "linux", "linux.resources" and its "cpu" are objects without
 * duplicate keys where present; no annotation key starts with
 * "cdi.k8s.io/" or "toposhim.io/"; no process.env entry starts with
 * "TOPOSHIM_" (the env request channel); linux.resources has no "unified"
 * and no non-empty "hugepageLimits"; linux.resources.cpu has only
 * "shares" (null, 0, or an integer in the kernel's range 2..262144, and
 * none at all on cgroup v2, where the core pins the weight), "period"
 * (an integer), "quota" (null or 0), and "cpus"/"mems" (null or "").
 * @param[in]  oci      the parsed config.json.
 * @param[in]  unified  the host is cgroup v2 (the summary's "unified").
 * @param[out] ret_why  may be NULL; when false, a short reason for the
 *                      debug log ("annotation 'toposhim.io/class'"); static
 *                      or borrowed from oci.
 */
bool ts_cli_plain_config(const struct ts_json *oci, bool unified, const char **ret_why);

/**
 * Whether a TOPOSHIM_* variable is set that the core reads differently
 * from the summary's host: TOPOSHIM_TOPOLOGY_XML, TOPOSHIM_CGROUP_ROOT,
 * TOPOSHIM_SYSFS_ROOT, TOPOSHIM_PROC_ROOT, TOPOSHIM_TEST_KILL_AT,
 * TOPOSHIM_TEST_SLEEP_AT (tests).  The front then leaves every create to
 * the core, and the core keeps no summary.
 */
bool ts_cli_plain_overridden(void);

/**
 * The front's create and run of a plain container: when the state dir's
 * summary is valid and current (state/plain.h ts_plain_summary_current())
 * and the bundle's config is plain (ts_cli_plain_config()), append the
 * journal entry, check the summary is still valid, and remove a placement file an
 * earlier create of this bundle left.  The caller then resets the CPU
 * affinity and execs the runtime with argv unchanged.
 * A config.json whose text names "toposhim.io/" or "cdi.k8s.io/" anywhere
 * goes to the core unparsed (the common request costs the front one read).
 * Not taken when TOPOSHIM_TOPOLOGY_XML, TOPOSHIM_CGROUP_ROOT,
 * TOPOSHIM_SYSFS_ROOT, TOPOSHIM_PROC_ROOT or a TOPOSHIM_TEST_* variable is
 * set (what the core would read differently from the summary's host).
 * @param[in] args          the scan of a create or run with args->rewrite.
 * @param[in] config        the toposhim config (ts_cli_config_load()).
 * @param[in] config_path   its path, as the summary names it.
 * @param[in] runtime_path  the runtime to exec (its default --root).
 * @return true when the front may exec the runtime; false: exec the core.
 */
bool ts_cli_plain_create(const struct ts_cli_args *args, const struct ts_json *config,
			 const char *config_path, const char *runtime_path);

/**
 * The front's delete: true when the core has nothing to do, because the
 * state dir does not exist or its allocations.json cannot hold a record of
 * the container id (ts_plain_maybe_recorded()): the core's delete of a
 * container without a record changes nothing either (with plugins, the
 * poststop hook releases, not the delete).  The argv must name exactly
 * one container ("delete [-f|--force] ID", a runc id), else the core
 * decides.
 * @param[in] argc, argv  toposhim's command line.
 * @param[in] args        its scan; args->command is "delete".
 * @param[in] config      the toposhim config (ts_cli_config_load()).
 */
bool ts_cli_plain_delete(int argc, char **argv, const struct ts_cli_args *args,
			 const struct ts_json *config);

#endif
