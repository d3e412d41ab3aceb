/*
 * cmd-create.c - the create/run rewrite, top to bottom:
 *
 *   open the bundle (oci)
 *   → inject the requested CDI devices (cdi)
 *   → reserve, under the state lock and only for this step: collect stale
 *     allocations (state), place the container (topology, placement), write
 *     cpus/mems and the class's cgroup limits into the tree (cgroup), record
 *     the allocation ("creating") and commit
 *   → without the lock: the plugins' delete stage for what was collected,
 *     the pre-create stage (plugin), which may adjust the tree; cpus and
 *     mems a plugin set pass the allocator's checks and are recorded
 *   → inject the lifecycle hooks, save config.json atomically (oci); a
 *     failure from here on releases the reservation
 *   → resize the running shared-pool containers (pools: ts_pools_settle(),
 *     which holds the store's lock only to plan and to record)
 *   → return to main, which execs the runtime.
 *
 * Nothing slow or external runs under the state lock (issue 10, finding
 * 8): a plugin may take its whole timeout and a `runc update` seconds,
 * while other creates go on.  Everything is decided on the in-memory tree
 * and config.json is written once, last: a failure leaves config.json
 * byte-identical and the store without the reservation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi/cdi.h"
#include "cli/cmd-create.h"
#include "cli/cmd-hook.h"
#include "cli/config.h"
#include "cli/lifecycle.h"
#include "cli/log.h"
#include "cli/passthrough.h"
#include "cli/pools.h"
#include "oci/bundle.h"
#include "oci/role.h"
#include "oci/spec.h"
#include "policy/policy.h"
#include "runtime/runtime.h"
#include "util/cleanup.h"
#include "util/text.h"
#include "util/fileio.h"
#include "util/testpoint.h"

static void registry_freep(struct ts_cdi_registry **r)
{
	*r = ts_cdi_registry_free(*r);
}
#define cleanup_registry __attribute__((cleanup(registry_freep)))

static void injection_freep(struct ts_cdi_injection **i)
{
	*i = ts_cdi_injection_free(*i);
}
#define cleanup_injection __attribute__((cleanup(injection_freep)))

static void pools_releasep(struct ts_pools *p)
{
	ts_pools_release(p);
}
#define cleanup_pools __attribute__((cleanup(pools_releasep)))

static void request_releasep(struct ts_placement_request *r)
{
	ts_placement_request_release(r);
}
#define cleanup_request __attribute__((cleanup(request_releasep)))

static void result_releasep(struct ts_placement_result *r)
{
	ts_placement_result_release(r);
}
#define cleanup_result __attribute__((cleanup(result_releasep)))

static void chain_freep(struct ts_plugin_chain **c)
{
	*c = ts_plugin_chain_free(*c);
}
#define cleanup_chain __attribute__((cleanup(chain_freep)))

/* The pre-create stage: plugins see the config as it will be written (with
 * toposhim's placement) and may adjust a limited part of it. */
static int pre_create(struct ts_plugin_chain *chain, const struct ts_cli_args *args,
		      struct ts_oci_bundle *b, const struct ts_placement_result *res,
		      const struct ts_cdi_injection *injected, struct ts_plugin_report *ret_report,
		      struct ts_error **err)
{
	cleanup_free char *cpus = NULL, *mems = NULL;
	cleanup_free const char **devices = NULL;
	struct ts_plugin_event ev = {.container_id = args->container_id, .config = b->config};
	struct ts_plugin_report rep = {0};
	size_t n = injected != NULL ? injected->n_devices : 0;
	int r;

	*ret_report = rep;
	if (ts_plugin_chain_count(chain, TS_PLUGIN_STAGE_PRE_CREATE) == 0)
		return 0;
	devices = calloc(n + 1, sizeof(*devices));
	if (devices == NULL)
		return ts_error_set(err, ENOMEM, "plugins");
	for (size_t i = 0; i < n; i++)
		devices[i] = injected->devices[i].qualified_name;
	ev.devices = devices;
	if (res != NULL) {
		ev.class_name = res->class_name;
		if (ts_cpulist_format(res->cpus, &cpus, err) < 0 ||
		    ts_cpulist_format(res->mems, &mems, err) < 0)
			return ts_error_code(*err);
		ev.cpus_str = cpus;
		ev.mems_str = mems;
	}
	r = ts_lifecycle_run_report(chain, TS_PLUGIN_STAGE_PRE_CREATE, &ev, &rep, err);
	if (r >= 0 && rep.adjust != NULL)
		r = ts_plugin_adjust_apply(b->config, rep.adjust, "plugins: adjust", err);
	if (r < 0) {
		ts_plugin_report_release(&rep);
		return r;
	}
	*ret_report = rep;
	return 0;
}

/* Whether the config names any plugin (every create runs their stages). */
static bool plugins_configured(const struct ts_plugin_chain *chain)
{
	for (int st = 0; st < _TS_PLUGIN_STAGE_MAX; st++)
		if (ts_plugin_chain_count(chain, (enum ts_plugin_stage)st) > 0)
			return true;
	return false;
}

/* Whether the plugins need the lifecycle hooks: only their create and
 * delete stages do.  Without them no hook is injected (issue 15): the
 * store learns the init from the runtime's state and releases at the
 * engine's delete or once the init is gone (state.h). */
static bool hooks_needed(const struct ts_plugin_chain *chain)
{
	return ts_plugin_chain_count(chain, TS_PLUGIN_STAGE_CREATE) > 0 ||
	       ts_plugin_chain_count(chain, TS_PLUGIN_STAGE_DELETE) > 0;
}

static int inject_hooks(struct ts_oci_bundle *b, const char *state_dir, const char *config_path,
			const char *root, struct ts_error **err)
{
	cleanup_free char *self = NULL;
	struct ts_hook_env he = {
		.state_dir = state_dir, .config_path = config_path, .runtime_root = root};
	int r;

	r = ts_hook_self_exe(&self, err);
	if (r < 0)
		return r;
	return ts_hook_inject(b->config, self, &he, err);
}

/* The CDI index lives in the state dir: unless the config names its own
 * index_path, follow a configured state dir there (and create it, as the
 * state store would, so that the first create already writes the index). */
static int index_in_state_dir(const struct ts_json *config, const char *config_path,
			      struct ts_cdi_options *opts, struct ts_error **err)
{
	struct ts_cli_state_config sc = {0};
	const char *dir;
	char *path = NULL;
	int r;

	if (opts->index_path == NULL || strcmp(opts->index_path, TS_CDI_DEFAULT_INDEX) != 0)
		return 0;
	r = ts_cli_state_config_read(config, config_path, &sc, err);
	if (r < 0)
		return r;
	dir = ts_state_dir_resolve(sc.state_dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		/* no index then (not the default one in /run/toposhim: the
		 * state dir named is this node's): the store reports why */
		free(opts->index_path);
		opts->index_path = NULL;
		return 0;
	}
	if (asprintf(&path, "%s/cdi-index", dir) < 0)
		return ts_error_set(err, ENOMEM, "cdi index");
	free(opts->index_path);
	opts->index_path = path;
	return 0;
}

/* Resolve the requested CDI devices and apply their edits to the tree.
 * *ret_record: the devices toposhim injected, now or in an earlier create
 * of this bundle (its placement file says so), comma-joined, for the
 * placement file (save_placement()); NULL when none (the engine's own are
 * not ours to record). */
static int inject_cdi(struct ts_oci_bundle *b, const char *container_id,
		      const struct ts_json *config, const char *config_path,
		      struct ts_cdi_injection **ret, char **ret_record, struct ts_error **err)
{
	struct ts_cdi_options opts = {0};
	cleanup_free char *recorded = NULL;
	cleanup_registry struct ts_cdi_registry *reg = NULL;
	cleanup_strv char **names = NULL;
	const char *const *problems = NULL;
	size_t n;
	int r;

	r = ts_cdi_options_from_config(config, config_path, &opts, err);
	if (r < 0)
		goto out;
	/* No request, no registry: a create without devices reads no spec
	 * file, and makes no state dir for an index */
	r = ts_cdi_requests_from_config(b->config, b->config_path, opts.env_requests, &names, err);
	if (r <= 0)
		goto out;
	n = (size_t)r;
	r = index_in_state_dir(config, config_path, &opts, err);
	if (r < 0)
		goto out;
	r = ts_cdi_registry_load_devices(&opts, (const char *const *)names, n, &reg, err);
	if (r < 0)
		goto out;
	r = ts_cdi_inject_requested(reg, b->config, b->config_path, opts.env_requests, ret, err);
	if (r < 0) {
		/* a device the policy does not grant is refused as such, judged
		 * on config.json as read (the injection edits b->config in
		 * place, and may have left it partly edited) */
		const struct ts_json *as_read = ts_oci_bundle_as_read(b);

		if (as_read != NULL)
			r = ts_pools_policy_over_cdi_error(config, config_path, as_read,
							   b->config_path, reg, opts.env_requests,
							   r, err);
		goto out;
	}
	/* (after the resolution: a refusal is one line, the ignored files
	 * it names are in it) */
	n = ts_cdi_registry_problems(reg, &problems);
	for (size_t i = 0; i < n; i++)
		ts_log(TS_LOG_WARNING, "CDI registry: %s, ignoring", problems[i]);
	if (*ret == NULL)
		goto out;
	for (size_t i = 0; i < (*ret)->n_devices; i++) {
		const struct ts_cdi_injected_device *d = &(*ret)->devices[i];

		if (d->engine_injected)
			ts_log(TS_LOG_INFO, "CDI device '%s' was injected by the engine already",
			       d->qualified_name);
		else
			ts_log(TS_LOG_DEBUG, "CDI device '%s' resolved by '%s'", d->qualified_name,
			       d->spec_path);
	}
	/* what toposhim injected goes to its own file, not into config.json:
	 * the placement file, written with config.json */
	if ((*ret)->applied) {
		*ret_record = strdup((*ret)->names != NULL ? (*ret)->names : "");
		if (*ret_record == NULL)
			r = ts_error_set(err, ENOMEM, "%s", b->config_path);
	} else if (ts_state_placement_devices(b->bundle_fd, ".", container_id, &recorded) == 1 &&
		   ts_cdi_injection_retried(*ret, recorded)) {
		ts_log(TS_LOG_INFO, "CDI devices already injected (retried create)");
		*ret_record = TAKE_PTR(recorded);
	}
out:
	ts_cdi_options_release(&opts);
	return r;
}

/* The request: annotations and resources of config.json (without what an
 * earlier create of the bundle wrote there: *ret_forgotten tells whether
 * config.json was changed for that), plus the NUMA locality of the
 * injected device nodes. */
static int read_request(struct ts_oci_bundle *b, const struct ts_cli_args *args,
			const struct ts_pools *pools, const struct ts_cdi_injection *injected,
			struct ts_placement_request *ret, bool *ret_forgotten,
			struct ts_error **err)
{
	const char *container_id = args->container_id;
	struct ts_devloc_roots roots = ts_devloc_roots_from_env();
	cleanup_free const char **paths = NULL;
	struct ts_state_placement earlier = {0};
	bool has_earlier;
	size_t n = 0, cap = 0;
	int r;

	has_earlier = ts_state_placement_read(b->bundle_fd, ".", &earlier) == 1;
	r = has_earlier ? ts_pools_forget_earlier_class(b->config, b->config_path, &earlier, err)
			: 0;
	*ret_forgotten = r > 0;
	if (r >= 0)
		r = ts_placement_request_from_config(b->config, b->config_path, container_id,
						     &pools->placement, ret, err);
	if (r >= 0 && has_earlier)
		ts_pools_forget_earlier_cpus(b->config, &earlier, ret);
	ts_state_placement_release(&earlier);
	if (r < 0)
		return r;
	/* what toposhim writes must lie in the cgroup parent's cpuset */
	r = ts_pools_parent_cpuset(pools, b->config, b->config_path, args->systemd_cgroup, ret,
				   err);
	/* devices the engine injected (its own CDI) steer placement too */
	if (r >= 0)
		r = ts_placement_request_add_config_devices(ret, &roots, b->config, err);
	if (r < 0 || injected == NULL)
		return r;
	for (size_t i = 0; i < injected->n_devices; i++)
		cap += injected->devices[i].n_nodes;
	paths = calloc(cap ? cap : 1, sizeof(*paths));
	if (paths == NULL)
		return ts_error_set(err, ENOMEM, "placement request");
	/* A fully specified CDI node need not exist on the host (CDI only
	 * stats it when type or numbers are missing); it gives no hint then. */
	for (size_t i = 0; i < injected->n_devices; i++)
		for (size_t j = 0; j < injected->devices[i].n_nodes; j++) {
			const char *path = injected->devices[i].nodes[j].host_path;
			struct stat st;

			/* (helper-18: a regular file there, which a spec with
			 * numbers never has CDI stat, failed the create) */
			if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
				paths[n++] = path;
			else
				ts_log(TS_LOG_DEBUG,
				       "device '%s' is no device node on the host: no NUMA hint",
				       path);
		}
	return ts_placement_request_add_devices(ret, &roots, paths, n, err);
}

/* Whether the engine's own cgroup values are already what this host,
 * runtime and driver apply (ts_cgroup_translate() would change nothing:
 * shares in range and no weight to pin, no systemd quota to round, no
 * hugetlb reservation to add).  Tried on a copy; a copy that cannot be
 * made or translated counts as a change (the full path then reports it). */
static bool translation_changes_nothing(const struct ts_json *oci_config,
					const struct ts_cgroup_translate_options *tr)
{
	cleanup_json struct ts_json *copy = NULL;
	cleanup_strv char **messages = NULL;
	cleanup_error struct ts_error *ignored = NULL;

	if (ts_json_get(oci_config, "linux") == NULL ||
	    ts_json_get_path(oci_config, "linux", "resources", NULL) == NULL)
		return true;
	copy = ts_json_dup(oci_config);
	if (copy == NULL || ts_cgroup_translate(copy, "config.json", tr, &messages, &ignored) < 0)
		return false;
	return ts_json_equal(copy, oci_config);
}

/* A plain container on a node whose policy needs nothing from it (issue 14):
 * no request (no class or cpus annotation, no cpu limit, no explicit cpus,
 * no NUMA or memory-tier wish, no device) and no cpuset in config.json at
 * all (one an earlier create of this bundle wrote is no request, see
 * forget_earlier_cpus(), but the runtime would apply it: it must be
 * overwritten; nor cgroup values of an earlier class just taken out of the
 * tree, forget_earlier_class()), the shared pool it gets is every
 * online cpu (nothing reserved, nothing held exclusively; a cgroup parent
 * narrower than that gives it the parent's cpus as it would without
 * toposhim), its class sets no cgroup value, and the engine's cgroup values
 * are what the runtime applies.  Its config.json is left byte-identical and
 * it is not recorded: the journal of plain containers names it
 * (state/plain.h), for the day an exclusive allocation shrinks the pool.
 * *probe is what the probe of such a container gets (filled on true). */
static int leave_untouched(struct ts_pools *pools, const struct ts_state *s,
			   const struct ts_placement_request *req,
			   const struct ts_placement_result *res,
			   const struct ts_cdi_injection *injected,
			   const struct ts_json *oci_config,
			   const struct ts_cgroup_translate_options *tr, bool forgotten,
			   struct ts_plain_summary *probe, struct ts_error **err)
{
	const char *cpus = NULL, *mems = NULL;
	bool ok = false;
	int r;

	/* forgotten: the tree is no longer what config.json holds */
	if (forgotten || res->pool != TS_PLACEMENT_POOL_SHARED || req->class_annotated ||
	    req->cpus_annotated || req->cpu_limit != 0 || req->guaranteed ||
	    /* the user's cpus or mems (req->user_*), or an earlier create's */
	    ts_oci_cpu_get_cpus(oci_config, &cpus, NULL) != 0 ||
	    ts_oci_cpu_get_mems(oci_config, &mems, NULL) != 0 ||
	    req->numa != TS_PLACEMENT_NUMA_PREFER || req->memory_tier != TS_MEMORY_TIER_DRAM ||
	    (injected != NULL && injected->n_devices > 0) ||
	    !translation_changes_nothing(oci_config, tr))
		return 0;
	r = ts_pools_plain_probe(pools, s, &ok, probe, err);
	if (r < 0)
		return r;
	/* the probe is this container without its cgroup parent */
	if (ok && strcmp(probe->class_name, res->class_name) != 0) {
		ts_plain_summary_release(probe);
		ok = false;
	}
	return ok ? 1 : 0;
}

/* A plain container's create under the store's lock: its journal entry,
 * and the summary that lets the next one skip the core (when allowed).
 * Never fails the create: a journal that cannot take the entry (a full
 * disk, a file put in its place) leaves the container to be recorded as
 * any other (*ret_recorded), a summary that cannot be written only costs
 * the next plain create the core; each said in one warning. */
static void note_plain(const struct ts_cli_args *args, const char *root,
		       const struct ts_oci_bundle *b, const struct ts_state *s,
		       const struct ts_pools *pools, const struct ts_plain_summary *probe,
		       bool allowed, bool *ret_recorded)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *root_copy = strdup(root), *id = strdup(args->container_id);
	struct ts_plain_entry e = {
		.runtime_root = root_copy,
		.container_id = id,
		.bundle = b->bundle_dir,
		.class_name = probe->class_name,
		.cpus = probe->cpus,
		.mems = probe->mems,
		.pid = getpid(),
		.created_usec = ts_state_now_usec(),
	};
	int r = 0;

	*ret_recorded = false;
	if (root_copy == NULL || id == NULL)
		r = ts_error_set(&err, ENOMEM, "plain container");
	if (r >= 0)
		r = ts_state_proc_start_ticks(NULL, e.pid, &e.pid_start_ticks, NULL, &err);
	if (r >= 0)
		r = ts_plain_journal_append(ts_state_dir_fd(s), &e, NULL, &err);
	if (r < 0) {
		cleanup_free char *msg = ts_error_format(err);

		ts_log(TS_LOG_WARNING,
		       "cannot name plain container '%s' in %s: %s; recorded instead",
		       args->container_id, ts_state_dir(s), msg != NULL ? msg : err->msg);
		*ret_recorded = true;
		return;
	}
	if (!allowed)
		return;
	r = ts_pools_plain_write(pools, s, probe, &err);
	if (r < 0) {
		cleanup_free char *msg = ts_error_format(err);

		ts_log(TS_LOG_WARNING, "%s: %s, ignoring", ts_state_dir(s),
		       msg != NULL ? msg : err->msg);
	}
}

/* Whether an allocation from this pool shrinks the shared pool. */
static bool shrinks_shared(enum ts_placement_pool pool)
{
	return pool == TS_PLACEMENT_POOL_EXCLUSIVE || pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE ||
	       pool == TS_PLACEMENT_POOL_RESERVED;
}

/* Write the placement and the class's cgroup limits into config.json, then
 * the values as this host, runtime and driver will apply them.
 * *ret_written: what the class and the translation changed in
 * linux.resources (ts_json_diff() entries; NULL: nothing), for the
 * placement file. */
static int apply_placement(struct ts_oci_bundle *b, const struct ts_pools *pools,
			   const struct ts_placement_result *res,
			   const struct ts_cgroup_translate_options *tr,
			   struct ts_json **ret_written, struct ts_error **err)
{
	cleanup_free char *cpus = NULL, *mems = NULL;
	cleanup_strv char **messages = NULL;
	cleanup_json struct ts_json *before = NULL, *written = NULL;
	const struct ts_json *resources;
	int r;

	if (res->pool != TS_PLACEMENT_POOL_PINNED) {
		r = ts_cpulist_format(res->cpus, &cpus, err);
		if (r >= 0)
			r = ts_cpulist_format(res->mems, &mems, err);
		if (r >= 0)
			r = ts_oci_cpu_set_cpus(b->config, cpus, err);
		if (r >= 0 && mems[0] != '\0')
			r = ts_oci_cpu_set_mems(b->config, mems, err);
		if (r < 0)
			return ts_error_prefix(err, "%s", b->config_path);
	}
	resources = ts_json_get_path(b->config, "linux", "resources", NULL);
	if (resources != NULL && (before = ts_json_dup(resources)) == NULL)
		return ts_error_set(err, ENOMEM, "%s", b->config_path);
	r = ts_cgroup_apply_class(b->config, b->config_path,
				  ts_cgroup_config_class(&pools->cgroup, res->class_name),
				  pools->cgroup_mode, &messages, err);
	if (r < 0)
		return r;
	/* info, not warning: the engine's value winning over the class's is
	 * the configured behaviour, and kubelet sets one on every pod's
	 * sandbox (cpu.shares 2): a warning per pod nobody can act on */
	for (char **m = messages; m != NULL && *m != NULL; m++)
		ts_log(TS_LOG_INFO, "%s", *m);
	ts_strv_freep(&messages);
	r = ts_cgroup_translate(b->config, b->config_path, tr, &messages, err);
	if (r < 0)
		return r;
	for (char **m = messages; m != NULL && *m != NULL; m++)
		ts_log(TS_LOG_INFO, "%s", *m);
	written = ts_json_new_array();
	if (written == NULL)
		return ts_error_set(err, ENOMEM, "%s", b->config_path);
	r = ts_json_diff(before, ts_json_get_path(b->config, "linux", "resources", NULL),
			 "/linux/resources", written, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", b->config_path);
	if (r > 0)
		*ret_written = TAKE_PTR(written);
	return 0;
}

static int set_string(char **dst, const char *src, struct ts_error **err)
{
	if (src == NULL)
		return 0;
	*dst = strdup(src);
	return *dst != NULL ? 0 : ts_error_set(err, ENOMEM, "allocation");
}

/* The record of a new allocation; ownership goes to the store. */
static int record_allocation(struct ts_state *s, const struct ts_cli_args *args,
			     const char *runtime_path, const char *root,
			     const struct ts_oci_bundle *b, const struct ts_placement_result *res,
			     const struct ts_cdi_injection *injected, bool untouched,
			     uint64_t *ret_created_usec, struct ts_error **err)
{
	cleanup_alloc struct ts_alloc *a = ts_alloc_new(args->container_id, err);
	const char *cpus = NULL, *mems = NULL;
	size_t n = injected != NULL ? injected->n_devices : 0;
	int r;

	if (a == NULL)
		return ts_error_code(*err);
	r = set_string(&a->runtime_root, root, err);
	if (r >= 0)
		r = set_string(&a->runtime_path, runtime_path, err);
	if (r >= 0)
		r = set_string(&a->bundle, b->bundle_dir, err);
	if (r >= 0)
		r = set_string(&a->class_name, res->class_name, err);
	if (r < 0)
		return r;
	/* What config.json says now: a pre-create plugin may have adjusted it;
	 * an untouched container (recorded when plugins are configured) runs
	 * on what it was given without it. */
	if (untouched) {
		r = ts_cpulist_format(res->cpus, &a->cpus_str, err);
		if (r >= 0)
			r = ts_cpulist_format(res->mems, &a->mems_str, err);
	} else if (ts_oci_cpu_get_cpus(b->config, &cpus, err) < 0 ||
		   ts_oci_cpu_get_mems(b->config, &mems, err) < 0) {
		return ts_error_prefix(err, "%s", b->config_path);
	} else {
		r = set_string(&a->cpus_str, cpus != NULL ? cpus : "", err);
		if (r >= 0)
			r = set_string(&a->mems_str, mems != NULL ? mems : "", err);
	}
	if (r < 0)
		return r;
	/* Until the container's init is learned from the runtime's state (or
	 * recorded by the createRuntime hook), the pid is ours, and stays the
	 * runtime's across the exec: once it is gone with no <root>/<id> left
	 * behind, the create failed and the record is stale at once
	 * (ts_state_gc()), without waiting for the grace period. */
	a->pid = getpid();
	if (ts_state_proc_start_ticks(NULL, a->pid, &a->pid_start_ticks, NULL, err) < 0)
		return ts_error_code(*err);
	a->pinned = res->pool == TS_PLACEMENT_POOL_PINNED;
	a->numa_exclusive = res->pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE;
	a->devices = calloc(n + 1, sizeof(char *));
	if (a->devices == NULL)
		return ts_error_set(err, ENOMEM, "allocation");
	for (size_t i = 0; i < n; i++) {
		r = set_string(&a->devices[i], injected->devices[i].qualified_name, err);
		if (r < 0)
			return r;
	}
	*ret_created_usec = a->created_usec;
	return ts_state_put(s, TAKE_PTR(a), err);
}

/* Which of the store's records is this create's own: (root, id), made by
 * this process at that time (a later create of the same container, after
 * this one failed, has its own). */
struct reservation {
	const char *runtime_root;
	const char *container_id;
	uint64_t created_usec;
	bool made;			   /* a record was put and committed by this create */
	bool untouched;			   /* a plain container: config.json left as it is */
	struct ts_json *resources_written; /* apply_placement()'s; owned */
	bool journal;			   /* ... and named by the journal, not recorded */
	bool plugins;	    /* the config names plugins: plain containers are recorded */
	bool plain_allowed; /* the summary may be kept (ts_pools_plain_allowed()) */
	bool rebuilt;	    /* the store was rebuilt: shared containers to resize */
};

static void reservation_release(struct reservation *rv)
{
	rv->resources_written = ts_json_free(rv->resources_written);
}

static const struct ts_alloc *own_record(const struct ts_state *s, const struct reservation *rv)
{
	const struct ts_alloc *a = ts_state_find(s, rv->runtime_root, rv->container_id);

	return a != NULL && a->created_usec == rv->created_usec && a->pid == getpid() ? a : NULL;
}

/* Does req ask for cpus of the shared pool to be its own (an exclusive
 * class's count, or a whole NUMA node)? */
static bool takes_exclusively(const struct ts_pools *pools, const struct ts_placement_request *req)
{
	const struct ts_placement_class *c =
		ts_placement_config_class(&pools->placement, req->class_name);

	return req->numa == TS_PLACEMENT_NUMA_EXCLUSIVE ||
	       (c != NULL && c->pool == TS_PLACEMENT_POOL_EXCLUSIVE && req->user_cpus == NULL);
}

/* Reserve: under the state lock, collect stale allocations, place the
 * container, write the placement into the tree and record it ("creating").
 * The lock is held for this step only: nothing slow or external runs
 * under it (the plugins and the resizes come after, issue 10 finding 8). */
static int reserve(const struct ts_cli_args *args, const struct ts_cli_state_config *sc,
		   const char *runtime_path, const char *root, struct ts_pools *pools,
		   struct ts_oci_bundle *b, const struct ts_cdi_injection *injected,
		   struct ts_placement_result *res, struct reservation *rv,
		   struct ts_alloc ***ret_collected, size_t *ret_ncollected, struct ts_error **err)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_free char *warning = NULL;
	cleanup_request struct ts_placement_request req = {0};
	cleanup_plain_summary struct ts_plain_summary probe = {0};
	struct ts_allocation *allocs = NULL;
	hwloc_bitmap_t *bitmaps = NULL;
	bool forgotten = false;
	int n, r;

	/* with its root: a store that lost its whole dir finds the
	 * containers toposhim placed there (state.h) */
	r = ts_state_open(
		&(struct ts_state_options){.state_dir = sc->state_dir, .runtime_root = root}, &s,
		err);
	if (r >= 0)
		r = ts_state_load(s, &warning, err);
	if (r < 0)
		return r;
	if (warning != NULL) {
		ts_log(TS_LOG_WARNING, "%s", warning);
		/* the shared containers are resized to the pool after this
		 * create (place_and_save()): what they run on is not known */
		r = ts_pools_forget_shared_cpus(pools, s, err);
		rv->rebuilt = r > 0;
		/* the rebuilt store stands whatever this create does next */
		if (r >= 0)
			r = ts_state_commit(s, err);
		if (r < 0)
			return r;
	}
	r = ts_state_gc(s, ts_state_now_usec(), sc->gc_grace_usec, ret_collected, ret_ncollected,
			err);
	if (r < 0)
		return r;
	for (size_t i = 0; i < *ret_ncollected; i++)
		ts_log(TS_LOG_INFO, "container '%s' is gone, releasing its allocation",
		       (*ret_collected)[i]->container_id);
	/* their cpus count as held in the settle after this create (pools.h) */
	ts_pools_note_released(pools, s, *ret_collected, *ret_ncollected);

	r = ts_pools_load_topology(pools, ts_state_dir(s), err);
	if (r >= 0)
		r = read_request(b, args, pools, injected, &req, &forgotten, err);
	if (r >= 0)
		r = ts_pools_check_policy(pools->config, pools->config_path, b->config,
					  b->config_path, &pools->placement, &req, injected, err);
	if (r < 0)
		return r;
	/* a cpuset an operator (or kubelet's CPU manager) set since the last
	 * resize is a pin before an exclusive create places (helper-20: it
	 * took the very cpu a container had just been pinned to); committed
	 * now, whether this create gets its cpus or not */
	if (takes_exclusively(pools, &req)) {
		/* the plain containers too, whose inits are learnt as the
		 * settle after this create would */
		r = ts_pools_take_plain(pools, s, true, err);
		if (r >= 0 && ts_state_learn_inits(s) > 0)
			r = ts_state_commit(s, err);
		if (r >= 0)
			r = ts_pools_adopt_outside_pins(pools, s, err);
		if (r > 0)
			r = ts_state_commit(s, err);
		if (r < 0)
			return r;
	}
	req.runtime_root = root;
	n = ts_pools_views(pools, s, &allocs, &bitmaps, err);
	if (n < 0)
		return n;
	r = ts_placement_place(&pools->placement, pools->topo, allocs, (size_t)n, &req, res, err);
	ts_pools_views_free(allocs, bitmaps, (size_t)n);
	if (r < 0)
		return r;
	for (char **reason = res->reasons; reason != NULL && *reason != NULL; reason++)
		ts_log(TS_LOG_DEBUG, "placement of '%s': %s", args->container_id, *reason);
	for (char **w = res->warnings; w != NULL && *w != NULL; w++)
		ts_log(TS_LOG_WARNING, "%s", *w);

	const struct ts_cgroup_translate_options tr = {
		.mode = pools->cgroup_mode,
		.systemd = args->systemd_cgroup,
		.runtime_is_crun =
			ts_runtime_family_of_path(runtime_path) == TS_RUNTIME_FAMILY_CRUN,
	};

	r = leave_untouched(pools, s, &req, res, injected, b->config, &tr, forgotten, &probe, err);
	if (r < 0)
		return r;
	rv->untouched = r > 0;
	/* with plugins, whose delete stage wants a record, it is recorded */
	rv->journal = rv->untouched && !rv->plugins;
	r = 0;
	if (rv->untouched) {
		ts_log(TS_LOG_DEBUG, "placement of '%s': no request, config.json left as it is",
		       args->container_id);
		if (rv->journal) {
			bool recorded = false;

			note_plain(args, root, b, s, pools, &probe, rv->plain_allowed, &recorded);
			rv->journal = !recorded;
		}
	} else {
		r = apply_placement(b, pools, res, &tr, &rv->resources_written, err);
		/* before the commit: a plain create that saw the summary has
		 * its journal entry in by now (state/plain.h) */
		if (r >= 0 && shrinks_shared(res->pool) &&
		    ts_plain_summary_invalidate(ts_state_dir_fd(s), err) < 0)
			r = ts_error_prefix(err, "%s", ts_state_dir(s));
	}
	if (r >= 0 && !res->existing && !rv->journal)
		r = record_allocation(s, args, runtime_path, root, b, res, injected, rv->untouched,
				      &rv->created_usec, err);
	if (r >= 0)
		r = ts_state_commit(s, err);
	if (r >= 0)
		rv->made = !res->existing && !rv->journal;
	ts_test_point("create-after-reserve");
	return r;
}

/* Undo a reservation: a later step of the create failed. */
static void unreserve(const struct ts_cli_state_config *sc, const struct reservation *rv)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	const struct ts_alloc *a;

	if (!rv->made)
		return;
	if (ts_state_open(&(struct ts_state_options){.state_dir = sc->state_dir}, &s, &err) < 0 ||
	    ts_state_load(s, NULL, &err) < 0) {
		/* left to the garbage collection: our pid is gone with no runtime dir */
		ts_log(TS_LOG_WARNING, "cannot release the allocation of '%s': %s, ignoring",
		       rv->container_id, err->msg);
		return;
	}
	a = own_record(s, rv);
	if (a != NULL)
		(void)ts_state_remove(s, a->runtime_root, a->container_id, NULL);
	if (ts_state_commit(s, &err) < 0)
		ts_log(TS_LOG_WARNING, "cannot release the allocation of '%s': %s, ignoring",
		       rv->container_id, err->msg);
}

/* The other containers' exclusive cpus that cpus overlaps, as a message;
 * NULL when none. */
static int overlap_of_others(struct ts_pools *pools, const struct ts_state *s,
			     const struct ts_alloc *own, hwloc_const_bitmap_t cpus, char **ret,
			     struct ts_error **err)
{
	*ret = NULL;
	for (size_t i = 0; i < ts_state_count(s); i++) {
		const struct ts_alloc *o = ts_state_at(s, i);
		cleanup_hwloc_bitmap hwloc_bitmap_t theirs = NULL;
		cleanup_error struct ts_error *ignored = NULL;
		enum ts_placement_pool pool = ts_pools_pool_of(pools, o);

		if (o == own || o->cpus_str == NULL || o->cpus_str[0] == '\0' ||
		    (pool != TS_PLACEMENT_POOL_EXCLUSIVE &&
		     pool != TS_PLACEMENT_POOL_NUMA_EXCLUSIVE &&
		     pool != TS_PLACEMENT_POOL_RESERVED) ||
		    ts_cpulist_parse(o->cpus_str, &theirs, &ignored) < 0)
			continue;
		if (hwloc_bitmap_intersects(cpus, theirs)) {
			if (asprintf(ret, "overlap the exclusive cpus %s of container '%s'",
				     o->cpus_str, o->container_id) < 0)
				return ts_error_set(err, ENOMEM, "plugins: adjust");
			return 0;
		}
	}
	return 0;
}

static bool numa_nodes_exist(const struct ts_topology *topo, hwloc_const_bitmap_t mems)
{
	unsigned n;

	hwloc_bitmap_foreach_begin(n, mems)
		{
			if (ts_topology_numa_node(topo, n) == NULL)
				return false;
		}
	hwloc_bitmap_foreach_end();
	return true;
}

/* cpus and mems a pre-create plugin set go through the allocator's checks
 * before they are recorded (issue 10, finding 6): online cpus that no other
 * container holds exclusively, mems that are NUMA nodes of the topology.
 * What is accepted is recorded as the container's allocation; cpus a
 * plugin gave a shared-pool container pin it (its pool no longer moves it). */
static int adopt_adjusted(struct ts_pools *pools, const struct ts_cli_state_config *sc,
			  const struct ts_oci_bundle *b, const struct ts_plugin_report *rep,
			  const struct reservation *rv, bool *ret_pinned, struct ts_error **err)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t cpus = NULL, mems = NULL;
	cleanup_free char *overlap = NULL;
	const char *cpus_str = NULL, *mems_str = NULL;
	const struct ts_alloc *own;
	struct ts_alloc *copy;
	int r;

	if (!rv->made || !(rep->adjust_fields & (TS_PLUGIN_ADJUST_CPUS | TS_PLUGIN_ADJUST_MEMS)))
		return 0;
	if (ts_oci_cpu_get_cpus(b->config, &cpus_str, err) < 0 ||
	    ts_oci_cpu_get_mems(b->config, &mems_str, err) < 0)
		return ts_error_prefix(err, "%s", b->config_path);
	r = ts_state_open(&(struct ts_state_options){.state_dir = sc->state_dir}, &s, err);
	if (r >= 0)
		r = ts_state_load(s, NULL, err);
	if (r < 0)
		return r;
	own = own_record(s, rv);
	if (own == NULL || (!ts_text_differs(own->cpus_str, cpus_str) &&
			    !ts_text_differs(own->mems_str, mems_str)))
		return 0;
	if (cpus_str != NULL && cpus_str[0] != '\0') {
		r = ts_cpulist_parse(cpus_str, &cpus, err);
		if (r < 0)
			return ts_error_prefix(err, "%s: adjust", rep->cpus_from);
		if (!hwloc_bitmap_isincluded(cpus, pools->topo->online)) {
			cleanup_free char *who = NULL;

			if (asprintf(&who, "%s: adjust", rep->cpus_from) < 0)
				return ts_error_set(err, ENOMEM, "%s: adjust", rep->cpus_from);
			return ts_placement_not_online(who, "/linux/resources/cpu/cpus", cpus,
						       pools->topo->online, err);
		}
		r = overlap_of_others(pools, s, own, cpus, &overlap, err);
		if (r < 0)
			return r;
		if (overlap != NULL)
			return ts_error_set(err, 0,
					    "%s: adjust: '/linux/resources/cpu/cpus': cpus '%s' %s",
					    rep->cpus_from, cpus_str, overlap);
	}
	if (mems_str != NULL && mems_str[0] != '\0') {
		r = ts_cpulist_parse(mems_str, &mems, err);
		if (r < 0)
			return ts_error_prefix(err, "%s: adjust", rep->mems_from);
		if (!numa_nodes_exist(pools->topo, mems))
			return ts_error_set(
				err, 0,
				"%s: adjust: '/linux/resources/cpu/mems': not numa nodes "
				"of this machine '%s'",
				rep->mems_from, mems_str);
	}
	copy = ts_alloc_dup(own);
	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "allocation");
	free(copy->cpus_str);
	free(copy->mems_str);
	copy->cpus_str = strdup(cpus_str != NULL ? cpus_str : "");
	copy->mems_str = strdup(mems_str != NULL ? mems_str : "");
	if (ts_pools_pool_of(pools, own) == TS_PLACEMENT_POOL_SHARED &&
	    ts_text_differs(own->cpus_str, cpus_str))
		copy->pinned = true;
	if (copy->cpus_str == NULL || copy->mems_str == NULL) {
		ts_alloc_free(copy);
		return ts_error_set(err, ENOMEM, "allocation");
	}
	*ret_pinned = copy->pinned;
	r = ts_state_put(s, copy, err);
	if (r >= 0)
		r = ts_state_commit(s, err);
	return r;
}

/* The placement file (state.h): what the store records of this container,
 * kept in the bundle for a rebuild and a retried create, never in
 * config.json, whose annotations the runtime publishes.  A plain container
 * named by the journal has none (no record to rebuild): one an earlier
 * create of this bundle left goes. */
static int save_placement(const struct ts_cli_args *args, const struct ts_oci_bundle *b,
			  const struct ts_placement_result *res, bool pinned,
			  const struct reservation *rv, const char *devices, const char *state_dir,
			  struct ts_error **err)
{
	const char *cpus = NULL, *mems = NULL;
	struct ts_state_placement p = {
		.cpus_written = res->pool != TS_PLACEMENT_POOL_PINNED && !rv->untouched,
		.pinned = pinned,
		.numa_exclusive = res->pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE,
	};
	int r;

	if (rv->journal) {
		if (unlinkat(b->bundle_fd, TS_STATE_PLACEMENT_FILE, 0) < 0 && errno != ENOENT)
			return ts_error_set(err, errno, "%s/%s: cannot remove", b->bundle_dir,
					    TS_STATE_PLACEMENT_FILE);
		return 0;
	}
	if (rv->untouched) {
		if (ts_cpulist_format(res->cpus, &p.cpus_str, err) < 0 ||
		    ts_cpulist_format(res->mems, &p.mems_str, err) < 0) {
			ts_state_placement_release(&p);
			return ts_error_code(*err);
		}
	} else if (ts_oci_cpu_get_cpus(b->config, &cpus, err) < 0 ||
		   ts_oci_cpu_get_mems(b->config, &mems, err) < 0) {
		return ts_error_prefix(err, "%s", b->config_path);
	} else {
		p.cpus_str = strdup(cpus != NULL ? cpus : "");
		p.mems_str = strdup(mems != NULL ? mems : "");
	}
	p.container_id = strdup(args->container_id);
	p.class_name = strdup(res->class_name);
	p.devices = devices != NULL ? strdup(devices) : NULL;
	p.state_dir = strdup(state_dir);
	if (p.container_id == NULL || p.class_name == NULL || p.cpus_str == NULL ||
	    p.mems_str == NULL || (devices != NULL && p.devices == NULL) || p.state_dir == NULL)
		r = ts_error_set(err, ENOMEM, "%s", TS_STATE_PLACEMENT_FILE);
	else {
		p.resources_written = rv->resources_written; /* borrowed */
		r = ts_state_placement_write(b->bundle_fd, &p, err);
		p.resources_written = NULL;
		/* which bundle (helper-19: an immutable one was not named) */
		if (r < 0)
			r = ts_error_prefix(err, "%s", b->bundle_dir);
	}
	ts_state_placement_release(&p);
	return r;
}

/* Without placement: the placement file holds only the CDI devices
 * toposhim injected (class "": never adopted by a rebuild); none, none. */
static int save_devices(const struct ts_cli_args *args, const struct ts_oci_bundle *b,
			const char *devices, struct ts_error **err)
{
	struct ts_state_placement p = {0};
	int r;

	if (devices == NULL)
		return 0;
	p.container_id = strdup(args->container_id);
	p.devices = strdup(devices);
	if (p.container_id == NULL || p.devices == NULL)
		r = ts_error_set(err, ENOMEM, "%s", TS_STATE_PLACEMENT_FILE);
	else if ((r = ts_state_placement_write(b->bundle_fd, &p, err)) < 0)
		r = ts_error_prefix(err, "%s", b->bundle_dir);
	ts_state_placement_release(&p);
	return r;
}

/* Place the container (reserve), run the pre-create plugins, save
 * config.json, then resize the running shared-pool containers (settle),
 * each step taking the state lock only for itself. */
/*
 * The create's warnings (ts_log_keep_warnings()) into the state dir's
 * creates.log, where an operator finds them: engines show nobody the
 * runtime's log of a create that worked.  Stops the keeping: what comes
 * after (a resize's lines about other containers) goes to resizes.log.
 * Best effort; nothing when the state dir does not exist.
 */
static void note_warnings(const struct ts_json *config, const char *config_path,
			  const char *container_id)
{
	cleanup_strv char **warnings = NULL;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_cli_state_config sc = {0};

	ts_log_keep_warnings(false);
	warnings = ts_log_take_warnings();
	/* (the store only when there is something to say; not made for
	 * them: placement off, a create keeps no state) */
	if (warnings == NULL || ts_cli_state_config_read(config, config_path, &sc, &err) < 0 ||
	    ts_state_open(&(struct ts_state_options){.state_dir = sc.state_dir, .must_exist = true},
			  &s, &err) < 0)
		return;
	for (char **w = warnings; *w != NULL; w++) {
		cleanup_free char *line = NULL;

		/* one line each: a value quoted in a warning may hold a newline */
		if (ts_log_escape_controls(*w, &line) >= 0)
			ts_state_note_create(s, container_id, line);
	}
}

static int place_and_save(const struct ts_cli_args *args, const char *config_path,
			  const char *runtime_path, const char *root, struct ts_pools *pools,
			  struct ts_plugin_chain *chain, struct ts_oci_bundle *b,
			  const struct ts_cdi_injection *injected, const char *devices,
			  struct ts_error **err)
{
	struct ts_cli_state_config sc = {0};
	cleanup_result struct ts_placement_result res = {0};
	struct ts_plugin_report rep = {0};
	__attribute__((cleanup(reservation_release))) struct reservation rv = {
		.runtime_root = root, .container_id = args->container_id};
	struct ts_alloc **collected = NULL;
	size_t ncollected = 0;
	bool pinned, released;
	int r;

	r = ts_cli_state_config_read(pools->config, config_path, &sc, err);
	if (r < 0)
		return r;
	rv.plugins = plugins_configured(chain);
	rv.plain_allowed = ts_pools_plain_allowed(pools, rv.plugins);
	ts_test_point("create-before-reserve");
	r = reserve(args, &sc, runtime_path, root, pools, b, injected, &res, &rv, &collected,
		    &ncollected, err);
	/* the delete stage of what the collection released, without the lock */
	ts_lifecycle_delete_collected(chain, collected, ncollected);
	released = ncollected > 0;
	ts_alloc_array_free(collected, ncollected);
	pinned = res.pool == TS_PLACEMENT_POOL_PINNED;
	if (r >= 0 && !res.existing)
		r = pre_create(chain, args, b, &res, injected, &rep, err);
	if (r >= 0)
		r = adopt_adjusted(pools, &sc, b, &rep, &rv, &pinned, err);
	ts_plugin_report_release(&rep);
	ts_test_point("create-after-plugins");
	if (r >= 0 && hooks_needed(chain))
		r = inject_hooks(b, ts_state_dir_resolve(sc.state_dir), config_path, root, err);
	if (r >= 0)
		r = save_placement(args, b, &res, pinned, &rv, devices,
				   ts_state_dir_resolve(sc.state_dir), err);
	if (r >= 0)
		r = ts_oci_bundle_save(b, err);
	if (r < 0) {
		unreserve(&sc, &rv);
		/* a store this create rebuilt stands: its shared containers
		 * are resized to the pool whatever became of this one */
		if (rv.rebuilt)
			ts_pools_settle_or_warn(
				pools, &(struct ts_state_options){.state_dir = sc.state_dir},
				args->systemd_cgroup);
		return r;
	}
	ts_test_point("create-after-save");
	note_warnings(pools->config, config_path, args->container_id);
	/* the new container is placed; the others follow now, or at the next
	 * change.  A shared-pool (or pinned) create leaves the shared pool as
	 * it was: nothing to resize, no second and third store session; unless
	 * its collection released containers (exited ones among them), whose
	 * cpus the shared pool gets back now. */
	if (released || rv.rebuilt || (rv.made && shrinks_shared(res.pool)))
		ts_pools_settle_or_warn(pools,
					&(struct ts_state_options){.state_dir = sc.state_dir},
					args->systemd_cgroup);
	return 0;
}

/* Which container of a pod this is (oci/role.h), and the scoped requests
 * it ignores as another container's: a debug record of the decision. */
static void log_role(const struct ts_oci_bundle *b)
{
	cleanup_free const char **others = NULL, **unknown = NULL;
	struct ts_oci_container c;

	ts_oci_container_identify(b->config, &c);
	if (c.role == TS_OCI_ROLE_SANDBOX)
		ts_log(TS_LOG_DEBUG, "a pod's sandbox (%s): it takes none of the pod's requests",
		       c.role_from);
	else if (c.name[0] != '\0')
		ts_log(TS_LOG_DEBUG, "container '%s' of a pod (%s)", c.name, c.name_from);
	if (ts_oci_request_unknown(b->config, &unknown) > 0)
		for (size_t i = 0; unknown[i] != NULL; i++) {
			cleanup_free char *esc = ts_json_pointer_escape(unknown[i]);

			ts_log(TS_LOG_WARNING,
			       "%s: '/annotations/%s': not a toposhim request (class, cpus, numa, "
			       "memory-tier, cdi), ignoring",
			       b->config_path, esc != NULL ? esc : unknown[i]);
		}
	if (ts_oci_request_check(b->config, &c, &others, NULL) <= 0)
		return;
	for (size_t i = 0; others[i] != NULL; i++)
		ts_log(TS_LOG_DEBUG, "annotation '%s' is another container's request, ignoring",
		       others[i]);
}

/* runc's rule for container ids (one path component: its state lives in
 * <root>/<id>): letters, digits and "_+-.", not "." or "..", at most
 * NAME_MAX bytes.  Refusing the others here keeps a create that the
 * runtime would reject from holding CPUs. */
static int check_container_id(const char *id, struct ts_error **err)
{
	if (id == NULL || id[0] == '\0')
		return ts_error_set(err, 0, "container id: missing");
	if (!ts_plain_container_id_valid(id))
		return ts_error_set(err, 0, "container id: invalid '" TS_CLIP_FMT "'",
				    TS_CLIP_ARGS(id));
	return 0;
}

int ts_cmd_create(const struct ts_cli_args *args, const struct ts_json *config,
		  const char *config_path, const char *runtime_path, struct ts_error **err)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_injection struct ts_cdi_injection *injected = NULL;
	cleanup_pools struct ts_pools pools = {0};
	cleanup_chain struct ts_plugin_chain *chain = NULL;
	cleanup_free char *root = NULL, *why = NULL, *devices = NULL;
	int r;

	ts_log_keep_warnings(true);
	r = check_container_id(args->container_id, err);
	if (r >= 0)
		r = ts_cli_runtime_root(args, runtime_path, &root, err);
	if (r >= 0)
		r = ts_cli_config_check_keys(config, config_path, err);
	/* the policy read before anything is made: a config the create
	 * refuses left the state dir, its lock and the topology cache behind
	 * (helper-21: /run/toposhim, for a config without "state_dir") */
	if (r >= 0)
		r = ts_pools_policy_valid(config, config_path, err);
	if (r >= 0)
		r = ts_oci_bundle_open(args->bundle, args->config_file, &b, err);
	if (r < 0)
		return r;
	log_role(b);
	r = inject_cdi(b, args->container_id, config, config_path, &injected, &devices, err);
	if (r < 0)
		return r;
	r = ts_pools_init(config, config_path, &pools, err);
	if (r >= 0)
		r = ts_plugin_chain_load(config, config_path, &chain, err);
	if (r >= 0)
		r = ts_plugin_chain_check_users(chain, err);
	if (r < 0)
		return r;
	struct ts_placement_request req = {0};
	bool checked = false;

	if (pools.placement.enabled &&
	    !ts_pools_placement_applicable(&pools, b->config, args->systemd_cgroup, &why)) {
		/* rootless without a writable cpuset: the runtime could not apply
		 * cpus and mems; the devices still go in.  The request is still
		 * read and held to the policy (helper-7: a class 'bogus' and a
		 * numa policy the policy does not grant ran, rootless) */
		r = ts_placement_request_from_config(b->config, b->config_path, args->container_id,
						     &pools.placement, &req, err);
		if (r < 0)
			return r;
		checked = true;
		pools.placement.enabled = false;
	}
	if (pools.placement.enabled)
		return place_and_save(args, config_path, runtime_path, root, &pools, chain, b,
				      injected, devices, err);
	struct ts_plugin_report rep = {0};

	r = ts_pools_check_policy(config, config_path, b->config, b->config_path,
				  checked ? &pools.placement : NULL, checked ? &req : NULL,
				  injected, err);
	ts_placement_request_release(&req);
	/* (after the policy: a refused request is not "not placed") */
	if (r >= 0 && checked)
		ts_log(TS_LOG_WARNING, "%s and %s: cpus and mems are not placed, ignoring",
		       geteuid() == 0 ? "root of a user namespace" : "not root",
		       why != NULL ? why : "no writable cpuset controller");
	if (r >= 0)
		r = pre_create(chain, args, b, NULL, injected, &rep, err);
	ts_plugin_report_release(&rep);
	if (r >= 0 && hooks_needed(chain))
		r = inject_hooks(b, NULL, config_path, root, err);
	if (r >= 0)
		r = save_devices(args, b, devices, err);
	if (r >= 0)
		r = ts_oci_bundle_save(b, err);
	if (r >= 0)
		note_warnings(pools.config, config_path, args->container_id);
	return r < 0 ? r : 0;
}
