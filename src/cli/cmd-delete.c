/* cmd-delete.c - the release of an allocation at the engine's delete; see cmd-create.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cmd-create.h"
#include "cli/cmd-hook.h"
#include "cli/config.h"
#include "cli/log.h"
#include "cli/passthrough.h"
#include "cli/pools.h"
#include "cdi/cdi.h"
#include "oci/bundle.h"
#include "plugin/plugin.h"
#include "state/state.h"
#include "util/cleanup.h"

/* Whether dropping a changes what the shared pool holds: a record of a
 * pool other than the shared one (its cpus go back to the shared pool);
 * true when the pools are unknown (p NULL). */
static bool frees_cpus(const struct ts_pools *p, const struct ts_alloc *a)
{
	return p == NULL || ts_pools_pool_of(p, a) != TS_PLACEMENT_POOL_SHARED;
}

/* Whether the bundle's config.json carries toposhim's poststop hook, which
 * the runtime's delete runs (and which releases the allocation then); true
 * when that cannot be told (no bundle recorded, no readable config.json):
 * the hook, if any, keeps the record for the delete stage's plugins. */
static bool poststop_releases(const char *bundle)
{
	cleanup_error struct ts_error *ignored = NULL;
	struct ts_oci_bundle *b = NULL;
	bool injected;

	if (bundle == NULL || ts_oci_bundle_open(bundle, NULL, &b, &ignored) < 0)
		return true;
	injected = ts_hook_poststop_injected(b->config);
	ts_oci_bundle_free(b);
	return injected;
}

/* Drop the record; *ret_settle tells whether a dropped record (the
 * container's or an exited one the GC took with it) gave cpus back, or
 * the store was rebuilt, so that the shared containers must be resized.
 * p: the pools, or NULL.
 * hooks: the config has plugins with create or delete stages, whose
 * poststop hook releases a container created with them (left to it).
 * @return 1 when one was dropped, 0 none, < 0 error. */
static int drop_record(const struct ts_state_options *opts, struct ts_pools *p, const char *root,
		       const char *id, bool force, bool hooks, bool *ret_settle,
		       struct ts_error **err)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_alloc struct ts_alloc *removed = NULL;
	struct ts_alloc **collected = NULL;
	const struct ts_alloc *a;
	size_t n = 0;
	int r;

	/* a rebuilt store: its shared containers are resized whatever
	 * becomes of this one (helper-14: a delete that found its container
	 * already gone from the rebuilt store left them unsettled) */
	r = ts_pools_open_store(p, opts, &s, err);
	if (r < 0)
		return r;
	*ret_settle = r > 0;
	a = ts_state_find(s, root, id);
	/* helper-11: a container created before the plugins were configured
	 * has no hook; left to one, it was never released */
	if (a == NULL || (hooks && poststop_releases(a->bundle)))
		return ts_state_commit(s, err); /* writes only a rebuilt store */
	if (force) {
		r = ts_state_remove(s, root, id, &removed);
		*ret_settle = *ret_settle || (removed != NULL && frees_cpus(p, removed));
		/* their cpus count as held in the settle after (pools.h) */
		if (p != NULL)
			ts_pools_note_released(p, s, &removed, removed != NULL ? 1 : 0);
	} else {
		/* learns the init, drops it with every other exited one */
		r = ts_state_gc(s, ts_state_now_usec(), UINT64_MAX, &collected, &n, err);
		for (size_t i = 0; r >= 0 && i < n; i++)
			*ret_settle = *ret_settle || frees_cpus(p, collected[i]);
		if (p != NULL && r >= 0)
			ts_pools_note_released(p, s, collected, n);
		ts_alloc_array_free(collected, n);
		if (r >= 0)
			r = ts_state_find(s, root, id) == NULL ? 1 : 0;
	}
	if (r >= 0) {
		int c = ts_state_commit(s, err);

		r = c < 0 ? c : r;
	}
	return r;
}

/* The config as a create checks it, but for the sections the delete
 * loads itself (plugins, pools): unknown members of the root, the cdi
 * section.  @return 0; -EINVAL/-ENOMEM with the create's message. */
static int check_config(const struct ts_json *config, const char *config_path,
			struct ts_error **err)
{
	struct ts_cdi_options cdi = {0};
	int r = ts_cli_config_check_keys(config, config_path, err);

	if (r >= 0)
		r = ts_cdi_options_from_config(config, config_path, &cdi, err);
	ts_cdi_options_release(&cdi);
	return r;
}

void ts_cmd_delete(int argc, char **argv, const struct ts_cli_args *args,
		   const struct ts_json *config, const char *config_path, const char *runtime_path)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *root = NULL;
	struct ts_cli_state_config sc = {0};
	struct ts_plugin_chain *chain = NULL;
	struct ts_pools pools = {0};
	struct ts_state_options opts;
	const char *id = NULL;
	bool hooks, plugins, force = false, settle = false;
	int r;

	if (args->command_index < 0 || ts_cli_scan_delete(argc, argv, args, &id, &force) != 1)
		return;
	r = ts_cli_state_config_read(config, config_path, &sc, &err);
	if (r < 0)
		goto out;
	opts = (struct ts_state_options){.state_dir = sc.state_dir};
	/* nothing recorded on this node; but a lost store is rebuilt */
	if (!ts_state_dir_has_store(sc.state_dir))
		return;
	r = check_config(config, config_path, &err);
	if (r >= 0)
		r = ts_plugin_chain_load(config, config_path, &chain, &err);
	if (r >= 0)
		r = ts_pools_init(config, config_path, &pools, &err);
	if (r < 0) {
		ts_plugin_chain_free(chain);
		ts_pools_release(&pools);
		goto unusable;
	}
	hooks = ts_plugin_chain_count(chain, TS_PLUGIN_STAGE_CREATE) > 0 ||
		ts_plugin_chain_count(chain, TS_PLUGIN_STAGE_DELETE) > 0;
	plugins = hooks || ts_plugin_chain_count(chain, TS_PLUGIN_STAGE_PRE_CREATE) > 0;
	ts_plugin_chain_free(chain);
	/* with hooks, the poststop hook of a container created with them
	 * releases it, with the record for the plugins (drop_record()) */
	r = ts_cli_runtime_root(args, runtime_path, &root, &err);
	/* with its root, as a create's: a lost store's rebuild looks there
	 * even without the roots file (helper-15) */
	opts.runtime_root = root;
	if (r >= 0)
		r = drop_record(&opts, &pools, root, id, force, hooks, &settle, &err);
	if (r > 0)
		ts_log(TS_LOG_DEBUG, "delete '%s': allocation released", id);
	if (r >= 0 && settle) {
		/* only cpus given back change the shared pool */
		ts_pools_settle_or_warn(&pools, &opts, args->systemd_cgroup);
		/* and may give plain containers every cpu again: the next
		 * plain create needs no core (state/plain.h) */
		ts_pools_plain_refresh(&pools, &opts, ts_pools_plain_allowed(&pools, plugins));
	}
	ts_pools_release(&pools);
out:
	if (r < 0) {
		/* with the errno (helper-19: a full state dir said no why) */
		cleanup_free char *msg = ts_error_format(err);

		ts_log(TS_LOG_WARNING, "delete '%s': cannot release the allocation: %s, ignoring",
		       id, msg != NULL ? msg : err->msg);
	}
	return;
unusable:
	/* as for a config that does not parse (main.c): nothing is released
	 * under a config that a create refuses, and no summary is written for
	 * it that would let the plain creates after it skip the core */
	ts_cli_delete_held(id, err);
}
