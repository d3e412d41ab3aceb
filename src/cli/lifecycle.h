/*
 * lifecycle.h - running the plugin chain (src/plugin) at the container's
 * lifecycle stages, from the create path and from the injected hooks:
 *   pre-create     in `toposhim create`, after placement, before
 *                  config.json is written (may adjust the config);
 *   create         in the createRuntime hook (init pid known, cgroup set,
 *                  user process not started);
 *   delete         in the poststop hook, and for every allocation that the
 *                  garbage collection of a later create finds stale.
 */
#ifndef TS_CLI_LIFECYCLE_H
#define TS_CLI_LIFECYCLE_H

#include "oci/json.h"
#include "plugin/plugin.h"
#include "state/state.h"
#include "util/error.h"

/**
 * The plugin event of a container from its allocation record.
 * @param[in]  a       the record, or NULL (fields left unset); borrowed,
 *                     must outlive ret.
 * @param[in]  config  the container's config.json tree or NULL; borrowed.
 * @param[out] ret     filled; every pointer borrowed.
 */
void ts_lifecycle_event_from_alloc(const char *container_id, const struct ts_alloc *a,
				   const struct ts_json *config, struct ts_plugin_event *ret);

/**
 * Run one stage of the chain and log what on_error "ignore" plugins
 * reported (warnings).
 * @param[out] ret_adjust  pre-create: the merged adjust (caller frees with
 *                         ts_json_free()), NULL when none; may be NULL.
 * @return 0; the failure of an on_error "fail" plugin (ts_plugin_chain_run()).
 */
int ts_lifecycle_run(struct ts_plugin_chain *chain, enum ts_plugin_stage stage,
		     const struct ts_plugin_event *ev, struct ts_json **ret_adjust,
		     struct ts_error **err);

/**
 * ts_lifecycle_run(), handing back the whole report (the adjust and which
 * plugin set cpus and mems).
 * @param[out] ret  filled (zeroed when no plugin ran); release with
 *                  ts_plugin_report_release().
 */
int ts_lifecycle_run_report(struct ts_plugin_chain *chain, enum ts_plugin_stage stage,
			    const struct ts_plugin_event *ev, struct ts_plugin_report *ret,
			    struct ts_error **err);

/**
 * Read a bundle's config.json for a hook's event.
 * @param[in] bundle_dir  the bundle of the hook's state; NULL or "" (a
 *                        state without one) means none: nothing is opened.
 * @return the tree (caller frees) or NULL when there is no bundle, the
 *         bundle is gone or the file cannot be read or parsed (the delete
 *         stage must still run).
 */
struct ts_json *ts_lifecycle_read_config(const char *bundle_dir);

/**
 * The delete stage for allocations collected as stale: each gets its event
 * from its record (no pid, no config); failures are logged, never returned.
 */
void ts_lifecycle_delete_collected(struct ts_plugin_chain *chain, struct ts_alloc *const *v,
				   size_t n);

#endif
