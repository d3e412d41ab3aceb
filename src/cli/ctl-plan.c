/* ctl-plan.c - `toposhimctl plan`: the placement toposhim would make, explained. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi/cdi.h"
#include "cli/cmd-hook.h"
#include "cli/ctl-placement.h"
#include "cli/ctl.h"
#include "cli/pools.h"
#include "state/state.h"
#include "oci/bundle.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#ifndef TS_SYSCONFDIR
#define TS_SYSCONFDIR "/etc"
#endif

struct plan_args {
	const char *bundle;
	const char *topology;
	const char *config;
	const char *container_id;
	bool id_given; /* --id: else a created bundle's own container's id */
	bool json;
};

/* The toposhim config: explicit, $TOPOSHIM_CONFIG, or the default file
 * when it exists.  *ret stays NULL when there is none. */
static int load_config(const char *explicit_path, struct ts_json **ret, const char **ret_path,
		       struct ts_error **err)
{
	static const char def[] = TS_SYSCONFDIR "/toposhim/config.json";
	const char *path = explicit_path;
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r;

	if (path == NULL)
		path = secure_getenv("TOPOSHIM_CONFIG");
	if (path == NULL) {
		if (access(def, F_OK) < 0)
			return 0;
		path = def;
	}
	r = ts_read_file_at(AT_FDCWD, path, 1u << 20, &buf, &len, err);
	if (r < 0)
		return r;
	*ret_path = path;
	return ts_json_parse(buf, len, path, ret, err);
}

/* "-" for an empty list, as alloc list prints it */
static const char *or_dash(const char *s)
{
	return s != NULL && s[0] != '\0' ? s : "-";
}

static void print_text(const struct ts_json *plan, const char *bundle, const char *source)
{
	struct ts_json *e;
	size_t i;

	printf("bundle: %s\n", bundle);
	printf("topology: %s\n", source);
	printf("class: %s\n", ts_json_get_string(plan, "class"));
	printf("pool: %s\n", ts_json_get_string(plan, "pool"));
	printf("cpus: %s\n", or_dash(ts_json_get_string(plan, "cpus")));
	printf("mems: %s\n", or_dash(ts_json_get_string(plan, "mems")));
	printf("shared pool after: %s\n", ts_json_get_string(plan, "shared_pool"));
	printf("why:\n");
	ts_json_array_foreach (ts_json_get_array(plan, "reasons"), i, e) {
		printf("  - %s\n", e->u.string);
	}
}

/* The NUMA hint of the CDI devices the bundle requests: resolve them on a
 * copy of its config (nothing is written) and add their host nodes; then
 * the policy on the request and those devices, as a create checks it. */
static int add_cdi_devices(const struct ts_json *config, const char *config_path,
			   const struct ts_oci_bundle *bundle,
			   const struct ts_placement_config *cfg, struct ts_placement_request *req,
			   struct ts_error **err)
{
	struct ts_cdi_options opts = {0};
	struct ts_cdi_registry *reg = NULL;
	struct ts_cdi_injection *inj = NULL;
	struct ts_devloc_roots roots = ts_devloc_roots_from_env();
	cleanup_json struct ts_json *copy = ts_json_dup(bundle->config);
	int r;

	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "plan");
	cleanup_strv char **names = NULL;

	r = ts_cdi_options_from_config(config, config_path, &opts, err);
	if (r < 0)
		return r;
	/* a reader: the creates' index is not rewritten (ctl-nrt.c) */
	free(opts.index_path);
	opts.index_path = NULL;
	/* no request, no registry: as the create, read no spec file then */
	r = ts_cdi_requests_from_config(bundle->config, bundle->config_path, opts.env_requests,
					&names, err);
	if (r <= 0) {
		ts_cdi_options_release(&opts);
		return r < 0 ? r
			     : ts_pools_check_policy(config, config_path, bundle->config,
						     bundle->config_path, cfg, req, NULL, err);
	}
	r = ts_cdi_registry_load(&opts, &reg, err);
	if (r >= 0) {
		r = ts_cdi_inject_requested(reg, copy, bundle->config_path, opts.env_requests, &inj,
					    err);
		/* as the create: a device the policy does not grant is refused
		 * as such (helper-25: plan told its spec path and host node) */
		if (r < 0)
			r = ts_pools_policy_over_cdi_error(config, config_path, bundle->config,
							   bundle->config_path, reg,
							   opts.env_requests, r, err);
	}
	for (size_t i = 0; r >= 0 && inj != NULL && i < inj->n_devices; i++)
		for (size_t j = 0; r >= 0 && j < inj->devices[i].n_nodes; j++) {
			const char *path = inj->devices[i].nodes[j].host_path;

			r = ts_placement_request_add_devices(req, &roots, &path, 1, err);
		}
	if (r >= 0)
		r = ts_pools_check_policy(config, config_path, bundle->config, bundle->config_path,
					  cfg, req, inj, err);
	ts_cdi_injection_free(inj);
	ts_cdi_registry_free(reg);
	ts_cdi_options_release(&opts);
	return r;
}

/* dir when it exists, else NULL (plan creates no state dir). */
static const char *existing_dir(const char *dir)
{
	return access(dir, F_OK) == 0 ? dir : NULL;
}

/* The live allocations of the state dir (read under its lock; a missing
 * state dir means none, and is not created). */
static int live_allocations(const struct ts_json *config, const char *config_path,
			    struct ts_pools *pools, struct ts_state **ret_state,
			    struct ts_allocation **ret_allocs, hwloc_bitmap_t **ret_bitmaps,
			    struct ts_error **err)
{
	struct ts_cli_state_config sc = {0};
	cleanup_free char *warning = NULL;
	const char *dir;
	int r;

	r = ts_cli_state_config_read(config, config_path, &sc, err);
	if (r < 0)
		return r;
	dir = ts_state_dir_resolve(sc.state_dir);
	if (access(dir, F_OK) < 0)
		return 0;
	r = ts_state_open(&(struct ts_state_options){.state_dir = sc.state_dir}, ret_state, err);
	if (r >= 0)
		r = ts_state_load(*ret_state, &warning, err);
	/* what a create would see: the stale records collected first, as its
	 * collection does (in memory only: plan commits nothing).  helper-7:
	 * after a `toposhim run` container had exited, plan refused what the
	 * next create granted. */
	if (r >= 0) {
		struct ts_alloc **collected = NULL;
		size_t n = 0;

		r = ts_state_gc(*ret_state, ts_state_now_usec(), sc.gc_grace_usec, &collected, &n,
				err);
		ts_alloc_array_free(collected, n);
	}
	if (r >= 0)
		r = ts_pools_views(pools, *ret_state, ret_allocs, ret_bitmaps, err);
	return r;
}

/* The runtime root of the record of container_id whose bundle is the
 * directory bundle_fd is open on (the same directory by device and inode:
 * the engine's path and the one given here may differ, as /var/run and
 * /run do); NULL when there is none. */
static const char *own_root(const struct ts_state *state, const char *container_id, int bundle_fd)
{
	struct stat here, there;

	if (state == NULL || fstat(bundle_fd, &here) < 0)
		return NULL;
	for (size_t i = 0; i < ts_state_count(state); i++) {
		const struct ts_alloc *o = ts_state_at(state, i);

		if (strcmp(o->container_id, container_id) == 0 && o->bundle != NULL &&
		    stat(o->bundle, &there) == 0 && there.st_dev == here.st_dev &&
		    there.st_ino == here.st_ino)
			return o->runtime_root;
	}
	return NULL;
}

static int plan(const struct plan_args *a, struct ts_error **err)
{
	struct ts_state *state = NULL;
	struct ts_pools pools = {0};
	struct ts_allocation *allocs = NULL;
	hwloc_bitmap_t *bitmaps = NULL;
	int nallocs = 0;
	cleanup_json struct ts_json *config = NULL, *out = NULL;
	cleanup_topology struct ts_topology *topo = NULL;
	struct ts_oci_bundle *bundle = NULL;
	struct ts_placement_config cfg = {0};
	struct ts_placement_request req = {0};
	struct ts_placement_result res = {0};
	const char *cfg_path = "config.json";
	struct ts_cli_state_config sc = {0};
	struct ts_state_placement earlier = {0};
	const char *container_id = a->container_id;
	bool has_earlier = false;
	int r;

	r = load_config(a->config, &config, &cfg_path, err);
	if (r >= 0)
		r = ts_placement_config_parse(ts_json_get(config, "placement"), cfg_path, &cfg,
					      err);
	/* the topology a create would use, through the cache the creates keep
	 * in the state dir (read only: plan writes nothing) */
	if (r >= 0 && a->topology == NULL)
		r = ts_cli_state_config_read(config, cfg_path, &sc, err);
	/* the config's file as a create takes it (helper-8: plan read a
	 * relative one and named no field) */
	if (r >= 0)
		r = a->topology != NULL ? ts_topology_load_xml(a->topology, &topo, err)
					: ts_pools_config_topology(
						  config, cfg_path,
						  existing_dir(ts_state_dir_resolve(sc.state_dir)),
						  false, &topo, err);
	if (r >= 0)
		r = ts_oci_bundle_open(a->bundle, NULL, &bundle, err);
	/* A bundle toposhim created (a running container's): its config.json
	 * holds what that create wrote, which is no request, as a create of it
	 * again would judge (cmd-create.c's read_request()); and without --id,
	 * its container's own record is what a create again would find
	 * (helper-17: plan reported a running container pinned on its own cpus
	 * and overlapping itself). */
	if (r >= 0) {
		has_earlier = ts_state_placement_read(bundle->bundle_fd, ".", &earlier) == 1;
		/* (one there that is not toposhim's, or damaged: said, as the
		 * plan then takes what config.json holds for a request) */
		if (!has_earlier && faccessat(bundle->bundle_fd, TS_STATE_PLACEMENT_FILE, F_OK,
					      AT_SYMLINK_NOFOLLOW) == 0)
			fprintf(stderr,
				"toposhimctl: plan: warning: %s/%s: not a placement file toposhim "
				"wrote, ignoring\n",
				bundle->bundle_dir, TS_STATE_PLACEMENT_FILE);
	}
	if (has_earlier) {
		r = ts_pools_forget_earlier_class(bundle->config, bundle->config_path, &earlier,
						  err);
		if (r >= 0 && !a->id_given && earlier.container_id != NULL &&
		    earlier.container_id[0] != '\0')
			container_id = earlier.container_id;
	}
	if (r >= 0)
		r = ts_placement_request_from_config(bundle->config, bundle->config_path,
						     container_id, &cfg, &req, err);
	if (r >= 0 && has_earlier)
		ts_pools_forget_earlier_cpus(bundle->config, &earlier, &req);
	if (r >= 0)
		r = add_cdi_devices(config, cfg_path, bundle, &cfg, &req, err);
	/* Around the containers running here, unless planning for another
	 * machine's topology (--topology). */
	if (r >= 0 && a->topology == NULL) {
		r = ts_pools_init(config, cfg_path, &pools, err);
		if (r >= 0)
			nallocs = r = live_allocations(config, cfg_path, &pools, &state, &allocs,
						       &bitmaps, err);
	}
	/* that container's record (its id, given or not, and this bundle):
	 * its runtime root names it */
	if (r >= 0 && has_earlier && earlier.container_id != NULL &&
	    strcmp(container_id, earlier.container_id) == 0)
		req.runtime_root = own_root(state, container_id, bundle->bundle_fd);
	if (r >= 0)
		r = ts_placement_place(&cfg, topo, allocs, (size_t)nallocs, &req, &res, err);
	if (r >= 0)
		r = ts_placement_result_to_json(&res, container_id, &out, err);
	if (r >= 0 && a->json) {
		cleanup_free char *text = NULL;
		r = ts_json_serialize(out, true, &text, NULL, err);
		if (r >= 0)
			fputs(text, stdout);
	} else if (r >= 0) {
		print_text(out, bundle->bundle_dir, topo->source);
	}
	ts_pools_views_free(allocs, bitmaps, nallocs > 0 ? (size_t)nallocs : 0);
	ts_state_close(state);
	ts_pools_release(&pools);
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
	ts_oci_bundle_free(bundle);
	ts_state_placement_release(&earlier);
	return r;
}

static void usage(void)
{
	fprintf(stderr, "usage: toposhimctl plan --bundle DIR [--topology FILE] [--config FILE] "
			"[--id ID] [--json]\n");
}

int ts_ctl_plan(int argc, char **argv)
{
	static const struct option opts[] = {
		{"bundle", required_argument, NULL, 'b'},
		{"topology", required_argument, NULL, 't'},
		{"config", required_argument, NULL, 'c'},
		{"id", required_argument, NULL, 'i'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct plan_args a = {.container_id = "plan"};
	cleanup_error struct ts_error *err = NULL;
	int c;

	optind = 0;
	while ((c = ts_ctl_getopt(argc, argv, "b:h", opts)) != -1) {
		switch (c) {
		case 'b':
			a.bundle = optarg;
			break;
		case 't':
			a.topology = optarg;
			break;
		case 'c':
			a.config = optarg;
			break;
		case 'i':
			a.container_id = optarg;
			a.id_given = true;
			break;
		case 'j':
			a.json = true;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (a.bundle == NULL || optind != argc) {
		if (optind != argc)
			fprintf(stderr, "toposhimctl: plan: unexpected argument '%s'\n",
				argv[optind]);
		else
			fprintf(stderr, "toposhimctl: plan: missing --bundle\n");
		usage();
		return 2;
	}
	if (plan(&a, &err) < 0) {
		cleanup_free char *msg = ts_error_format(err);
		fprintf(stderr, "toposhimctl: plan: %s\n", msg != NULL ? msg : "out of memory");
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
