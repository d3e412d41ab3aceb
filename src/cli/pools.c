/* pools.c - see pools.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cdi/cdi.h"
#include "cli/config.h"
#include "cli/log.h"
#include "cli/plain.h"
#include "cli/pools.h"
#include "oci/spec.h"
#include "policy/policy.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/testpoint.h"
#include "util/text.h"

int ts_pools_init(const struct ts_json *config, const char *config_path, struct ts_pools *ret,
		  struct ts_error **err)
{
	struct ts_pools p = {.config = config, .config_path = config_path};
	const struct ts_json *placement = ts_json_get(config, "placement");
	int r;

	r = ts_placement_config_parse(placement, config_path, &p.placement, err);
	if (r < 0)
		return r;
	r = ts_cgroup_config_read(config, config_path, &p.cgroup, err);
	if (r < 0) {
		ts_placement_config_release(&p.placement);
		return r;
	}
	r = ts_cgroup_config_resolve(&p.cgroup, &p.cgroup_root, &p.cgroup_mode, err);
	if (r < 0) {
		ts_pools_release(&p);
		return r;
	}
	*ret = p;
	return 0;
}

int ts_pools_config_topology(const struct ts_json *config, const char *config_path,
			     const char *state_dir, bool may_write, struct ts_topology **ret,
			     struct ts_error **err)
{
	const struct ts_json *topology = ts_json_get(config, "topology");
	const struct ts_json *xml = ts_json_get(topology, "xml");
	const char *env;
	int r;

	if (topology != NULL && topology->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/topology': expected object, got %s", config_path,
				    ts_json_type_name(topology->type));
	if (topology != NULL &&
	    (topology->u.object.len > 1 || (topology->u.object.len == 1 && xml == NULL)))
		return ts_error_set(err, 0, "%s: '/topology/%s': unknown key", config_path,
				    strcmp(topology->u.object.keys[0], "xml") != 0
					    ? topology->u.object.keys[0]
					    : topology->u.object.keys[1]);
	if (xml != NULL && xml->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "%s: '/topology/xml': expected string, got %s",
				    config_path, ts_json_type_name(xml->type));
	/* the runtime and the hooks run toposhim from other directories */
	if (xml != NULL && xml->u.string[0] != '/')
		return ts_error_set(err, 0, "%s: '/topology/xml': not absolute '%s'", config_path,
				    xml->u.string);
	/* placement only: the cache's snapshot will do */
	r = ts_topology_load_for_placement(xml != NULL ? xml->u.string : NULL, state_dir, may_write,
					   ret, err);
	/* the file the config names (not the variable's, which wins): say
	 * where it was named (helper-7) */
	env = secure_getenv("TOPOSHIM_TOPOLOGY_XML");
	if (r < 0 && xml != NULL && (env == NULL || env[0] == '\0'))
		return ts_error_prefix(err, "%s: '/topology/xml'", config_path);
	return r;
}

int ts_pools_load_topology(struct ts_pools *p, const char *state_dir, struct ts_error **err)
{
	/* once per process: the create and each settle round share it */
	if (p->topo != NULL)
		return 0;
	return ts_pools_config_topology(p->config, p->config_path, state_dir, true, &p->topo, err);
}

void ts_pools_release(struct ts_pools *p)
{
	ts_placement_config_release(&p->placement);
	ts_cgroup_config_release(&p->cgroup);
	p->topo = ts_topology_free(p->topo);
	ts_alloc_array_free(p->released, p->n_released);
	p->released = NULL;
	p->n_released = 0;
}

/* Whether a's cpus are held by it alone: an exclusive, NUMA-exclusive or
 * reserved record. */
static bool holds_exclusively(const struct ts_pools *p, const struct ts_alloc *a)
{
	enum ts_placement_pool pool = ts_pools_pool_of(p, a);

	return pool == TS_PLACEMENT_POOL_EXCLUSIVE || pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE ||
	       pool == TS_PLACEMENT_POOL_RESERVED;
}

/* Keep a copy of a in p->released unless an entry of its id and cpus is
 * there; best effort. */
static void remember_released(struct ts_pools *p, const struct ts_alloc *a)
{
	struct ts_alloc **grown, *copy;

	for (size_t i = 0; i < p->n_released; i++)
		if (strcmp(p->released[i]->container_id, a->container_id) == 0 &&
		    strcmp(p->released[i]->cpus_str, a->cpus_str) == 0)
			return;
	grown = realloc(p->released, (p->n_released + 1) * sizeof(*grown));
	if (grown == NULL)
		return;
	p->released = grown;
	copy = ts_alloc_dup(a);
	if (copy != NULL)
		p->released[p->n_released++] = copy;
}

void ts_pools_note_released(struct ts_pools *p, struct ts_state *s, struct ts_alloc *const *v,
			    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i] == NULL || v[i]->cpus_str == NULL || v[i]->cpus_str[0] == '\0' ||
		    !holds_exclusively(p, v[i]))
			continue;
		remember_released(p, v[i]);
		ts_state_released_add(s, v[i]->container_id, v[i]->cpus_str);
	}
}

/* Take in what the store's released file holds (another process's drops,
 * ts_state_released_add()).  @return how many it held; -ENOMEM. */
static int read_released(struct ts_pools *p, const struct ts_state *s, struct ts_error **err)
{
	struct ts_alloc **v = NULL;
	size_t n = 0;

	if (ts_state_released_read(s, &v, &n) < 0)
		return ts_error_set(err, ENOMEM, "resize");
	for (size_t i = 0; i < n; i++)
		remember_released(p, v[i]);
	ts_alloc_array_free(v, n);
	return (int)n;
}

enum ts_placement_pool ts_pools_pool_of(const struct ts_pools *p, const struct ts_alloc *a)
{
	return ts_placement_allocation_pool(&p->placement, a->class_name, a->pinned,
					    a->numa_exclusive,
					    a->cpus_str != NULL && a->cpus_str[0] != '\0');
}

void ts_pools_views_free(struct ts_allocation *allocs, hwloc_bitmap_t *bitmaps, size_t n)
{
	if (bitmaps != NULL)
		for (size_t i = 0; i < 2 * n; i++)
			if (i < 2 || bitmaps[i] != bitmaps[i - 2]) /* shared with the previous */
				hwloc_bitmap_free(bitmaps[i]);
	free(bitmaps);
	free(allocs);
}

static int parse_set(const struct ts_state *s, const struct ts_alloc *a, const char *str,
		     hwloc_bitmap_t *ret, struct ts_error **err)
{
	if (str == NULL || str[0] == '\0') {
		*ret = hwloc_bitmap_alloc();
		return *ret != NULL ? 0 : ts_error_set(err, ENOMEM, "allocation");
	}
	if (ts_cpulist_parse(str, ret, err) < 0)
		return ts_error_prefix(err, "%s: allocation '%s'", ts_state_dir(s),
				       a->container_id);
	return 0;
}

int ts_pools_views(const struct ts_pools *p, const struct ts_state *s,
		   struct ts_allocation **ret_allocs, hwloc_bitmap_t **ret_bitmaps,
		   struct ts_error **err)
{
	size_t n = ts_state_count(s);
	struct ts_allocation *allocs = calloc(n ? n : 1, sizeof(*allocs));
	hwloc_bitmap_t *bitmaps = calloc(2 * n + 1, sizeof(*bitmaps));

	if (allocs == NULL || bitmaps == NULL) {
		free(allocs);
		free(bitmaps);
		return ts_error_set(err, ENOMEM, "allocations");
	}
	for (size_t i = 0; i < n; i++) {
		const struct ts_alloc *a = ts_state_at(s, i);
		const struct ts_alloc *prev = i > 0 ? ts_state_at(s, i - 1) : NULL;
		int r;

		/* the shared pool's containers mostly share one list: they
		 * share the previous record's sets (the views are read-only) */
		if (prev != NULL && !ts_text_differs(a->cpus_str, prev->cpus_str) &&
		    !ts_text_differs(a->mems_str, prev->mems_str)) {
			bitmaps[2 * i] = bitmaps[2 * i - 2];
			bitmaps[2 * i + 1] = bitmaps[2 * i - 1];
			r = 0;
		} else {
			r = parse_set(s, a, a->cpus_str, &bitmaps[2 * i], err);
			if (r >= 0)
				r = parse_set(s, a, a->mems_str, &bitmaps[2 * i + 1], err);
		}
		if (r < 0) {
			ts_pools_views_free(allocs, bitmaps, n);
			return r;
		}
		allocs[i] = (struct ts_allocation){
			.container_id = a->container_id,
			.runtime_root = a->runtime_root,
			.class_name = a->class_name,
			.pool = ts_pools_pool_of(p, a),
			.cpus = bitmaps[2 * i],
			.mems = bitmaps[2 * i + 1],
			.numa_exclusive = a->numa_exclusive,
			.pinned = a->pinned,
		};
	}
	*ret_allocs = allocs;
	*ret_bitmaps = bitmaps;
	return (int)n;
}

/* The shared pool as a cpu list. */
static int shared_pool(struct ts_pools *p, const struct ts_state *s, hwloc_bitmap_t *ret,
		       struct ts_error **err)
{
	struct ts_allocation *allocs = NULL;
	hwloc_bitmap_t *bitmaps = NULL;
	int n, r;

	n = ts_pools_views(p, s, &allocs, &bitmaps, err);
	if (n < 0)
		return n;
	r = ts_placement_shared_pool(&p->placement, p->topo, allocs, (size_t)n, ret, err);
	ts_pools_views_free(allocs, bitmaps, (size_t)n);
	return r;
}

/* The memory tier a shared-pool record was placed with (the record keeps
 * mems, not the request): the tier of a node among its mems that the home
 * mems of its cpus do not hold, else DRAM. */
static enum ts_memory_tier tier_of_record(const struct ts_topology *topo, const struct ts_alloc *a)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t mems = NULL, cpus = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t home = hwloc_bitmap_alloc();
	cleanup_error struct ts_error *ignored = NULL;
	unsigned n;

	if (home == NULL || a->mems_str == NULL || a->cpus_str == NULL ||
	    ts_cpulist_parse(a->mems_str, &mems, &ignored) < 0 ||
	    ts_cpulist_parse(a->cpus_str, &cpus, &ignored) < 0)
		return TS_MEMORY_TIER_DRAM;
	(void)ts_topology_mems_for(topo, cpus, TS_MEMORY_TIER_DRAM, home); /* empty: none */
	hwloc_bitmap_foreach_begin(n, mems)
		{
			const struct ts_numa_node *nd = ts_topology_numa_node(topo, n);

			if (nd != NULL && nd->tier != TS_MEMORY_TIER_DRAM &&
			    !hwloc_bitmap_isset(home, n))
				return nd->tier;
		}
	hwloc_bitmap_foreach_end();
	return TS_MEMORY_TIER_DRAM;
}

/* The cpus a shared-pool container of a class gets from the pool, as at
 * its create (ts_placement_pool_cpus()): a batch container stays on the
 * efficiency cores.  *ret is a cpu list. */
static int class_cpus(const struct ts_pools *p, hwloc_const_bitmap_t pool, const char *class_name,
		      char **ret, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t cpus = NULL;
	int r = ts_placement_pool_cpus(&p->placement, p->topo, pool, class_name, &cpus, err);

	if (r < 0)
		return r;
	return ts_cpulist_format(cpus, ret, err);
}

/* The mems of those cpus, as at the create (ts_placement_mems()). */
static int pool_mems(const struct ts_pools *p, const char *cpus_str, enum ts_memory_tier tier,
		     char **ret, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t cpus = NULL, mems = NULL;
	int r = ts_cpulist_parse(cpus_str, &cpus, err);

	if (r >= 0)
		r = ts_placement_mems(p->topo, cpus, tier, &mems, err);
	if (r < 0)
		return ts_error_prefix(err, "shared pool");
	return ts_cpulist_format(mems, ret, err);
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* ts_log() a line about a container other than the caller's, and keep it
 * in the store's resizes.log (ts_state_note_resize()): the caller's own log
 * goes with its bundle.  Warnings are kept as "warning: <msg>". */
__attribute__((format(printf, 3, 4))) static void
resize_log(const struct ts_state *s, enum ts_log_level level, const char *fmt, ...)
{
	cleanup_free char *msg = NULL, *line = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	ts_log(level, "%s", msg);
	if (level <= TS_LOG_WARNING && asprintf(&line, "warning: %s", msg) < 0)
		return;
	ts_state_note_resize(s, line != NULL ? line : msg);
}

/* Record a as running on cpus and mems now: a copy put in its place. */
static int record_cpus(struct ts_state *s, const struct ts_alloc *a, const char *cpus,
		       const char *mems, struct ts_error **err)
{
	struct ts_alloc *copy = ts_alloc_dup(a);

	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "allocation");
	free(copy->cpus_str);
	free(copy->mems_str);
	copy->cpus_str = strdup(cpus);
	copy->mems_str = strdup(mems);
	if (copy->cpus_str == NULL || copy->mems_str == NULL) {
		ts_alloc_free(copy);
		return ts_error_set(err, ENOMEM, "allocation");
	}
	return ts_state_put(s, copy, err); /* replaces a, in place */
}

/* Record the outcome of one resize in the store. */
static int record_resize(const struct ts_pools *p, struct ts_state *s, const struct ts_alloc *a,
			 const struct ts_cgroup_resize_result *res, const char *cpus,
			 const char *mems, struct ts_error **err)
{
	cleanup_free char *now = NULL;
	enum ts_cgroup_resize_status status = res->status;

	/* a failed `update` that wrote the cpus all the same (killed at its
	 * timeout after the write): the record follows the cgroup, or the
	 * next resize would take them for someone else's (changed_outside()) */
	if (status == TS_CGROUP_RESIZE_FAILED &&
	    ts_cgroup_read_cpus(p->cgroup_root, p->cgroup_mode, a->cgroup_path, &now) > 0 &&
	    strcmp(now, cpus) == 0) {
		resize_log(s, TS_LOG_WARNING,
			   "cannot resize container '%s': %s; its cpus are %s all the same",
			   a->container_id, res->message != NULL ? res->message : "failed", cpus);
		status = TS_CGROUP_RESIZE_OK;
	}
	switch (status) {
	case TS_CGROUP_RESIZE_DEAD:
		resize_log(s, TS_LOG_INFO, "container '%s' is gone, releasing its allocation",
			   a->container_id);
		(void)ts_state_remove(s, a->runtime_root, a->container_id, NULL);
		return 0;
	case TS_CGROUP_RESIZE_OK:
	case TS_CGROUP_RESIZE_MISMATCH:
		if (status == TS_CGROUP_RESIZE_MISMATCH)
			resize_log(s, TS_LOG_WARNING, "%s", res->message);
		return record_cpus(s, a, cpus, mems, err);
	default:
		resize_log(s, TS_LOG_WARNING, "cannot resize container '%s': %s, ignoring",
			   a->container_id, res->message != NULL ? res->message : "failed");
		return 0;
	}
}

/* A rebalance's work: planned on the open store, applied without it (a
 * `<runtime> update` may take seconds), recorded on the store again. */
struct pools_plan {
	struct ts_alloc **which; /* copies of the records to resize, owned */
	char **cpus, **mems;	 /* what each gets; owned */
	char **runtimes;	 /* the runtime that updates each (not the record's); owned */
	struct ts_cgroup_resize_target *targets; /* borrowing from the above */
	size_t n;
	/* shared-pool containers whose create is still running and whose
	 * cpus the pool no longer gives: copies, owned */
	struct ts_alloc **pending;
	size_t npending;
	/* running shared-pool containers whose cpuset someone else changed:
	 * copies made pinned to it (plan_pin()), owned */
	struct ts_alloc **pins;
	size_t npins;
};

static void plan_release(struct pools_plan *pl)
{
	ts_alloc_array_free(pl->which, pl->n);
	for (size_t i = 0; i < pl->n; i++) {
		free(pl->cpus != NULL ? pl->cpus[i] : NULL);
		free(pl->mems != NULL ? pl->mems[i] : NULL);
		free(pl->runtimes != NULL ? pl->runtimes[i] : NULL);
	}
	free(pl->runtimes);
	free(pl->cpus);
	free(pl->mems);
	free(pl->targets);
	ts_alloc_array_free(pl->pending, pl->npending);
	ts_alloc_array_free(pl->pins, pl->npins);
	*pl = (struct pools_plan){0};
}

/* Whether a, by (root, id), is among the n records of v. */
static bool among(struct ts_alloc *const *v, size_t n, const struct ts_alloc *a)
{
	for (size_t i = 0; i < n; i++)
		if (ts_alloc_is(v[i], a->runtime_root, a->container_id))
			return true;
	return false;
}

/* Whether dir is a directory that only root (or this user) can change. */
static bool owned_dir(const char *dir)
{
	struct stat st;

	return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	       (st.st_uid == 0 || st.st_uid == geteuid()) && !(st.st_mode & (S_IWGRP | S_IWOTH));
}

/* Whether path ends with the path suffix, at a component boundary:
 * "/sys/fs/cgroup/cpuset/default/web" ends with "/default/web" and with
 * "default/web", "/x/ab/c" does not end with "b/c", nothing ends with "". */
static bool ends_with_path(const char *path, const char *suffix)
{
	size_t n = strlen(path), k = strlen(suffix);

	while (k > 1 && suffix[k - 1] == '/')
		k--;
	if (k == 0 || k > n || strncmp(path + n - k, suffix, k) != 0)
		return false;
	return k == n || suffix[0] == '/' || path[n - k - 1] == '/';
}

/* Whether a resize of record a may act on its pid and cgroup: only when
 * the container's runtime state confirms them, never on the record alone
 * (issue 10: the state file is trusted only as far as it can be
 * re-derived).  runc's and crun's state must name the same init (pid and
 * start time) and a cgroup the record's cgroup path is the end of; a
 * runtime of another layout must at least keep a state dir <root>/<id>
 * that only root can change.  A container refused is logged, not resized. */
static bool confirmed_target(const struct ts_state *s, const struct ts_alloc *a)
{
	cleanup_free char *dir = NULL, *cgroup = NULL;
	pid_t pid = 0;
	uint64_t start = 0;
	int r;

	r = ts_state_runtime_init(a->runtime_root, a->container_id, &pid, &start, &cgroup);
	if (r == 1 && (pid != a->pid || (a->pid_start_ticks != 0 && start != a->pid_start_ticks))) {
		resize_log(s, TS_LOG_WARNING,
			   "container '%s': its record names init pid %d, its runtime %d: not "
			   "resized, ignoring",
			   a->container_id, (int)a->pid, (int)pid);
		return false;
	}
	if (r == 1 && cgroup != NULL && a->cgroup_path != NULL &&
	    strcmp(a->cgroup_path, "/") != 0 && !ends_with_path(cgroup, a->cgroup_path)) {
		resize_log(s, TS_LOG_WARNING,
			   "container '%s': its record names cgroup '%s', its runtime '%s': not "
			   "resized, ignoring",
			   a->container_id, a->cgroup_path, cgroup);
		return false;
	}
	if (r != 1 && (a->runtime_root == NULL ||
		       asprintf(&dir, "%s/%s", a->runtime_root, a->container_id) < 0 ||
		       !owned_dir(a->runtime_root) || !owned_dir(dir))) {
		resize_log(s, TS_LOG_WARNING,
			   "container '%s': no runtime state that only root can change under '%s': "
			   "not resized, ignoring",
			   a->container_id, a->runtime_root ? a->runtime_root : "");
		return false;
	}
	return true;
}

/* Whether a "creating" shared-pool record's create is still running and
 * the pool no longer gives it the cpus it was created with: once its
 * runtime names the init, it must be resized (what the createRuntime hook's
 * catch-up did). */
static bool creating_outside(const struct ts_pools *p, hwloc_const_bitmap_t pool,
			     const struct ts_alloc *a, const struct ts_state *s)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *cpus = NULL;
	uint64_t ticks = 0;
	bool alive = false;

	if (a->pid <= 0 ||
	    ts_state_proc_start_ticks(ts_state_proc_root(s), a->pid, &ticks, &alive, &ignored) <
		    0 ||
	    !alive || ticks != a->pid_start_ticks)
		return false;
	return class_cpus(p, pool, a->class_name, &cpus, &ignored) >= 0 &&
	       !str_eq(a->cpus_str, cpus);
}

/* Wait, without any lock, until the runtime of each pending record names
 * its init (or its create is over), at most until deadline_usec
 * (CLOCK_REALTIME); polls every 10 ms. */
static void wait_for_inits(const struct ts_state_options *opts, const struct pools_plan *pl,
			   uint64_t deadline_usec)
{
	const char *proc_root = opts != NULL && opts->proc_root ? opts->proc_root : "/proc";

	for (size_t i = 0; i < pl->npending; i++) {
		const struct ts_alloc *a = pl->pending[i];

		while (ts_state_now_usec() < deadline_usec) {
			cleanup_error struct ts_error *ignored = NULL;
			uint64_t start = 0, ticks = 0;
			bool alive = false;
			pid_t pid = 0;

			if (ts_state_runtime_init(a->runtime_root, a->container_id, &pid, &start,
						  NULL) == 1)
				break;
			if (ts_state_proc_start_ticks(proc_root, a->pid, &ticks, &alive, &ignored) <
				    0 ||
			    !alive || ticks != a->pid_start_ticks)
				break;
			usleep(10000);
		}
	}
}

/* Intersect the cpu list *list with parent (hwloc), or take parent when
 * nothing is left, as a create does (place.c).  @return 1 when it took the
 * parent, 0, or a negative errno. */
static int clip_list(char **list, hwloc_const_bitmap_t parent, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t set = NULL;
	char *out = NULL;
	bool whole = false;
	int r = ts_cpulist_parse(*list, &set, err);

	if (r < 0)
		return r;
	hwloc_bitmap_and(set, set, parent);
	if (hwloc_bitmap_iszero(set)) {
		hwloc_bitmap_copy(set, parent);
		whole = true;
	}
	r = ts_cpulist_format(set, &out, err);
	if (r < 0)
		return r;
	free(*list);
	*list = out;
	return whole;
}

/* The effective cpus of the cgroup parent of running container a: what
 * the kernel lets its cpuset hold (the root cgroup's, every online cpu,
 * for one right under it; *ret NULL when none was found).  A record's cpus
 * that lie outside them (a topology file of more cpus than the host's)
 * are no change from outside.  @return 0; a negative errno with *err set. */
static int parent_cpus_of(const struct ts_pools *p, const struct ts_alloc *a, hwloc_bitmap_t *ret,
			  struct ts_error **err)
{
	struct ts_cgroup_parent parent = {0};
	int r;

	*ret = NULL;
	r = ts_cgroup_parent_of_running(p->cgroup_root, p->cgroup_mode, a->cgroup_path, &parent,
					err);
	if (r < 0)
		return ts_error_prefix(err, "container '%s'", a->container_id);
	if (r > 0 && parent.cpus_str != NULL) {
		r = ts_cpulist_parse(parent.cpus_str, ret, err);
	} else {
		/* no parent (a container in the root cgroup itself): the
		 * root's cpus, every online one */
		cleanup_free char *root_cpus = NULL;

		r = ts_cgroup_read_cpus(p->cgroup_root, p->cgroup_mode, "/", &root_cpus);
		r = r > 0 ? ts_cpulist_parse(root_cpus, ret, err) : 0;
	}
	ts_cgroup_parent_release(&parent);
	return r < 0 ? r : 0;
}

/* What a running shared-pool container a gets of the pool's cpus *cpus
 * (replaced), and the mems of those (*mems, new): both inside the
 * effective cpuset of its cgroup parent, read now (a kubepods-like parent
 * narrowed to some cpus: a write outside it fails), as at its create. */
static int within_parent(const struct ts_pools *p, const struct ts_alloc *a, char **cpus,
			 char **mems, hwloc_bitmap_t *ret_parent_cpus, char **ret_outside,
			 struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t pcpus = NULL, pmems = NULL;
	struct ts_cgroup_parent parent = {0};
	cleanup_free char *pool = NULL;
	bool narrowed;
	int r;

	r = ts_cgroup_parent_of_running(p->cgroup_root, p->cgroup_mode, a->cgroup_path, &parent,
					err);
	if (r < 0)
		return ts_error_prefix(err, "container '%s'", a->container_id);
	/* the root cgroup's cpuset is every online cpu: nothing narrows */
	narrowed = r > 0 && strcmp(parent.existing, "/") != 0;
	if (narrowed && (ts_cpulist_parse(parent.cpus_str, &pcpus, err) < 0 ||
			 ts_cpulist_parse(parent.mems_str, &pmems, err) < 0)) {
		ts_cgroup_parent_release(&parent);
		return ts_error_code(*err);
	}
	if (narrowed)
		ts_log(TS_LOG_DEBUG, "container '%s': cgroup parent '%s': cpus %s, mems %s",
		       a->container_id, parent.existing, parent.cpus_str, parent.mems_str);
	if (narrowed && (pool = strdup(*cpus)) == NULL) {
		ts_cgroup_parent_release(&parent);
		return ts_error_set(err, ENOMEM, "resize");
	}
	r = narrowed ? clip_list(cpus, pcpus, err) : 0;
	/* nothing of the pool is in the parent (an exclusive create in it
	 * took its last shared cpu, or it holds reserved ones only): it runs
	 * on the parent's cpus, as at a create, which says so; the resize
	 * said nothing (helper-20) */
	if (r > 0 && ret_outside != NULL &&
	    asprintf(ret_outside,
		     "the shared pool (cpus %s) lies outside cgroup parent '%s' (cpuset %s): "
		     "running on the parent's cpus",
		     pool, parent.existing, parent.cpus_str) < 0)
		*ret_outside = NULL;
	ts_cgroup_parent_release(&parent);
	if (r < 0)
		return r;
	r = pool_mems(p, *cpus, tier_of_record(p->topo, a), mems, err);
	if (r >= 0 && narrowed)
		r = clip_list(mems, pmems, err);
	if (r >= 0 && ret_parent_cpus != NULL)
		*ret_parent_cpus = TAKE_PTR(pcpus);
	return r;
}

/* Whether the cpuset of a's cgroup was written by someone else since
 * toposhim recorded it (`docker update --cpuset-cpus`, `runc update`):
 * it is not what the record says (as the cgroup parent pcpus, NULL: none,
 * narrows it).  *ret_current: what it is, on 1.  0 when it cannot be told
 * (no record of the cpus: a rebuilt store; a cgroup not readable). */
static int changed_outside(const struct ts_pools *p, const struct ts_alloc *a,
			   hwloc_const_bitmap_t pcpus, char **ret_current)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t now = NULL, recorded = NULL;
	cleanup_free char *current = NULL;
	int r;

	if (a->cpus_str == NULL || a->cpus_str[0] == '\0')
		return 0;
	r = ts_cgroup_read_cpus(p->cgroup_root, p->cgroup_mode, a->cgroup_path, &current);
	if (r <= 0)
		return r;
	if (ts_cpulist_parse(current, &now, &ignored) < 0 ||
	    ts_cpulist_parse(a->cpus_str, &recorded, &ignored) < 0)
		return 0;
	/* not "what the pool gives now" either: a cpuset someone set that
	 * happens to be it (helper-12: taken as toposhim's own, and undone at
	 * the next growth) */
	if (hwloc_bitmap_isequal(now, recorded))
		return 0;
	/* a plain container recorded with every cpu runs on its parent's */
	if (pcpus != NULL) {
		hwloc_bitmap_and(recorded, recorded, pcpus);
		if (hwloc_bitmap_iszero(recorded))
			hwloc_bitmap_copy(recorded, pcpus);
		if (hwloc_bitmap_isequal(now, recorded))
			return 0;
	}
	*ret_current = TAKE_PTR(current);
	return 1;
}

/* The container holding one of the cpus of list exclusively (an
 * exclusive, NUMA-exclusive or reserved record of s, or one this process
 * released before the settle: ts_pools_note_released()), or NULL. */
static const struct ts_alloc *exclusive_owner(const struct ts_pools *p, const struct ts_state *s,
					      const char *list)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t set = NULL;
	size_t n = ts_state_count(s);

	if (ts_cpulist_parse(list, &set, &ignored) < 0)
		return NULL;
	for (size_t i = 0; i < n + p->n_released; i++) {
		const struct ts_alloc *b = i < n ? ts_state_at(s, i) : p->released[i - n];
		cleanup_hwloc_bitmap hwloc_bitmap_t held = NULL;

		/* the released ones were exclusive when noted */
		if ((i >= n || holds_exclusively(p, b)) && b->cpus_str != NULL &&
		    ts_cpulist_parse(b->cpus_str, &held, &ignored) >= 0 &&
		    hwloc_bitmap_intersects(held, set))
			return b;
	}
	return NULL;
}

/* How a warning names owner (exclusive_owner()): "holds", or, released by
 * this process, "held until it was deleted". */
static const char *owner_holds(const struct ts_pools *p, const struct ts_alloc *owner)
{
	for (size_t i = 0; i < p->n_released; i++)
		if (p->released[i] == owner)
			return "held exclusively until it was deleted";
	return "holds exclusively";
}

/* A record made pinned to the cpus its cgroup has now (changed_outside()):
 * the shared pool no longer resizes it, and an exclusive create that needs
 * one of its cpus is refused, naming it, as for a pin in config.json.
 * Takes current.  @return 0; -ENOMEM. */
/* a's record pinned to current (taken: freed on failure); NULL: -ENOMEM. */
static struct ts_alloc *pinned_copy(const struct ts_alloc *a, char *current)
{
	struct ts_alloc *pin = ts_alloc_dup(a);

	if (pin == NULL) {
		free(current);
		return NULL;
	}
	free(pin->cpus_str);
	pin->cpus_str = current;
	pin->pinned = true;
	return pin;
}

static int plan_pin(struct pools_plan *pl, const struct ts_alloc *a, char *current,
		    struct ts_error **err)
{
	struct ts_alloc *pin = pinned_copy(a, current);

	if (pin == NULL)
		return ts_error_set(err, ENOMEM, "allocation");
	pl->pins[pl->npins++] = pin;
	return 0;
}

/* A running pinned container (a cpuset from config.json, or one set from
 * outside and adopted, plan_pin()) whose cgroup's cpuset is no longer its
 * record's: set again from outside, it is pinned there (added to pl's
 * pins: 0); onto cpus a container holds exclusively, it is resized back to
 * its record's cpus and mems (*ret_cpus, *ret_mems: 1), with a warning.
 * @return 0 (nothing to resize), 1, or -ENOMEM. */
static int pinned_check(const struct ts_pools *p, const struct ts_state *s,
			const struct ts_alloc *a, struct pools_plan *pl, char **ret_cpus,
			char **ret_mems, struct ts_error **err)
{
	char *current = NULL;
	const struct ts_alloc *owner;
	int c = changed_outside(p, a, NULL, &current);

	if (c < 0)
		return ts_error_set(err, ENOMEM, "resize");
	if (c == 0)
		return 0;
	owner = exclusive_owner(p, s, current);
	if (owner == NULL)
		return plan_pin(pl, a, current, err);
	resize_log(s, TS_LOG_WARNING,
		   "container '%s': its cpuset was changed outside toposhim to %s, which container "
		   "'%s' %s: set back to its pinned cpus %s",
		   a->container_id, current, owner->container_id, owner_holds(p, owner),
		   a->cpus_str);
	free(current);
	/* "" mems: left as they are (the target's NULL) */
	*ret_cpus = strdup(a->cpus_str);
	*ret_mems = strdup(a->mems_str != NULL ? a->mems_str : "");
	if (*ret_cpus == NULL || *ret_mems == NULL) {
		free(*ret_cpus);
		free(*ret_mems);
		*ret_cpus = *ret_mems = NULL;
		return ts_error_set(err, ENOMEM, "resize");
	}
	return 1;
}

/* Every running shared-pool container whose cpus or mems differ from what
 * the pool gives its class now, but those of skip (NULL: none). */
static int plan_rebalance(struct ts_pools *p, const struct ts_state *s, bool systemd_cgroup,
			  struct ts_alloc *const *skip, size_t nskip, struct pools_plan *ret,
			  struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t pool = NULL;
	struct pools_plan pl = {0};
	size_t n = ts_state_count(s);
	int r;

	r = shared_pool(p, s, &pool, err);
	if (r < 0)
		return r;
	pl.which = calloc(n + 1, sizeof(*pl.which));
	pl.cpus = calloc(n + 1, sizeof(*pl.cpus));
	pl.mems = calloc(n + 1, sizeof(*pl.mems));
	pl.targets = calloc(n + 1, sizeof(*pl.targets));
	pl.runtimes = calloc(n + 1, sizeof(*pl.runtimes));
	pl.pending = calloc(n + 1, sizeof(*pl.pending));
	pl.pins = calloc(n + 1, sizeof(*pl.pins));
	if (pl.which == NULL || pl.cpus == NULL || pl.mems == NULL || pl.targets == NULL ||
	    pl.runtimes == NULL || pl.pending == NULL || pl.pins == NULL) {
		plan_release(&pl);
		return ts_error_set(err, ENOMEM, "resize");
	}
	for (size_t i = 0; i < n; i++) {
		const struct ts_alloc *a = ts_state_at(s, i);
		char *cpus = NULL, *mems = NULL, *current = NULL;
		cleanup_hwloc_bitmap hwloc_bitmap_t pcpus = NULL;

		if (ts_pools_pool_of(p, a) == TS_PLACEMENT_POOL_SHARED &&
		    a->status == TS_ALLOC_CREATING && !among(skip, nskip, a) &&
		    creating_outside(p, pool, a, s)) {
			pl.pending[pl.npending] = ts_alloc_dup(a);
			if (pl.pending[pl.npending] != NULL)
				pl.npending++;
			continue;
		}
		if ((ts_pools_pool_of(p, a) != TS_PLACEMENT_POOL_SHARED &&
		     ts_pools_pool_of(p, a) != TS_PLACEMENT_POOL_PINNED) ||
		    a->status != TS_ALLOC_CREATED || a->pid <= 0 || a->cgroup_path == NULL ||
		    among(skip, nskip, a))
			continue;
		if (ts_pools_pool_of(p, a) == TS_PLACEMENT_POOL_PINNED) {
			/* its pin stands, as it is now; but exclusive cpus stay
			 * exclusive (helper-12: a second update onto them went
			 * unseen, since pinned ones were never looked at) */
			r = pinned_check(p, s, a, &pl, &cpus, &mems, err);
			if (r <= 0) {
				if (r < 0) {
					plan_release(&pl);
					return r;
				}
				continue;
			}
		} else {
			cleanup_free char *outside = NULL;

			r = class_cpus(p, pool, a->class_name, &cpus, err);
			if (r >= 0)
				r = within_parent(p, a, &cpus, &mems, &pcpus, &outside, err);
			if (r >= 0 && str_eq(a->cpus_str, cpus) && str_eq(a->mems_str, mems)) {
				free(cpus);
				free(mems);
				continue;
			}
			if (r >= 0 && outside != NULL)
				resize_log(s, TS_LOG_WARNING, "container '%s': %s", a->container_id,
					   outside);
			/* helper-11: an operator's `docker update --cpuset-cpus`
			 * was undone at the next resize, without a word */
			if (r >= 0) {
				int c = changed_outside(p, a, pcpus, &current);
				const struct ts_alloc *owner =
					c > 0 ? exclusive_owner(p, s, current) : NULL;

				if (c < 0) {
					r = ts_error_set(err, ENOMEM, "resize");
				} else if (owner != NULL) {
					/* exclusive cpus stay exclusive: resized as planned */
					resize_log(s, TS_LOG_WARNING,
						   "container '%s': its cpuset was changed outside "
						   "toposhim to %s, which container '%s' %s: "
						   "resized to %s",
						   a->container_id, current, owner->container_id,
						   owner_holds(p, owner), cpus);
					free(current);
				} else if (c > 0 && (r = plan_pin(&pl, a, current, err)) >= 0) {
					free(cpus);
					free(mems);
					continue;
				}
			}
		}
		pl.cpus[pl.n] = cpus;
		pl.mems[pl.n] = mems;
		pl.which[pl.n] = ts_alloc_dup(a);
		pl.n++;
		if (r >= 0 && pl.which[pl.n - 1] == NULL)
			r = ts_error_set(err, ENOMEM, "allocation");
		if (r < 0) {
			plan_release(&pl);
			return r;
		}
		a = pl.which[pl.n - 1];
		/* the record's "runtime" is not trusted with an exec: the runtime
		 * that keeps the container, from the config and its state dir */
		r = ts_cli_runtime_for_container(p->config, p->config_path, a->runtime_root,
						 a->container_id, &pl.runtimes[pl.n - 1], err);
		if (r < 0) {
			resize_log(s, TS_LOG_WARNING, "cannot resize container '%s': %s, ignoring",
				   a->container_id, (*err)->msg);
			ts_error_clear(err);
			pl.n--;
			free(pl.cpus[pl.n]);
			free(pl.mems[pl.n]);
			pl.which[pl.n] = ts_alloc_free(pl.which[pl.n]);
			pl.cpus[pl.n] = pl.mems[pl.n] = NULL;
			continue;
		}
		if (!confirmed_target(s, a)) {
			pl.n--;
			free(pl.cpus[pl.n]);
			free(pl.mems[pl.n]);
			free(pl.runtimes[pl.n]);
			pl.which[pl.n] = ts_alloc_free(pl.which[pl.n]);
			pl.cpus[pl.n] = pl.mems[pl.n] = pl.runtimes[pl.n] = NULL;
			continue;
		}
		pl.targets[pl.n - 1] = (struct ts_cgroup_resize_target){
			.container_id = a->container_id,
			.cgroup_path = a->cgroup_path,
			.cpus_str = cpus,
			.mems_str = mems != NULL && mems[0] != '\0' ? mems : NULL,
			.pid = a->pid,
			.pid_start_ticks = a->pid_start_ticks,
			.runtime_path = pl.runtimes[pl.n - 1],
			.runtime_root = a->runtime_root,
			.driver = systemd_cgroup ? TS_CGROUP_DRIVER_SYSTEMD : TS_CGROUP_DRIVER_AUTO,
		};
	}
	*ret = pl;
	return 0;
}

/* Record the outcomes in the store: a container's record says what it
 * runs with.  A record gone (released) or replaced (recreated) since the
 * plan was made is left alone.  @return how many were resized. */
/* A container whose bundle holds no readable placement file of its id (a
 * plain container just recorded, or recorded before they got one, a file
 * removed or garbled) gets one when it is recorded or resized, so that a
 * rebuild after the loss of the whole store still adopts it and resizes
 * it (helper-5, helper-6).  A file that names it
 * is left as it is: its cpus are what was written into config.json, which
 * a later create of the bundle compares with.  Best effort. */
static void ensure_placement_file(const struct ts_alloc *a, const char *cpus, const char *mems,
				  const char *state_dir)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_close int fd = -EBADF;
	struct ts_state_placement old = {0};
	struct ts_state_placement p = {0};
	bool ours;

	if (a->bundle == NULL || a->bundle[0] != '/')
		return;
	fd = open(a->bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	ours = ts_state_placement_read(fd, ".", &old) == 1 &&
	       strcmp(old.container_id, a->container_id) == 0;
	ts_state_placement_release(&old);
	if (ours)
		return;
	p.container_id = a->container_id;
	p.class_name = a->class_name;
	p.cpus_str = (char *)(uintptr_t)cpus;
	p.mems_str = (char *)(uintptr_t)mems;
	p.pinned = a->pinned;
	p.state_dir = (char *)(uintptr_t)state_dir;
	(void)ts_state_placement_write(fd, &p, &ignored); /* borrowed strings: no release */
}

static int record_results(const struct ts_pools *p, struct ts_state *s, const struct pools_plan *pl,
			  const struct ts_cgroup_resize_result *results, struct ts_error **err)
{
	int resized = 0;

	for (size_t i = 0; i < pl->n; i++) {
		const struct ts_alloc *planned = pl->which[i];
		const struct ts_alloc *now =
			ts_state_find(s, planned->runtime_root, planned->container_id);
		int r;

		if (now == NULL || now->pid != planned->pid ||
		    now->created_usec != planned->created_usec)
			continue;
		r = record_resize(p, s, now, &results[i], pl->cpus[i], pl->mems[i], err);
		if (r < 0)
			return r;
		if (results[i].status == TS_CGROUP_RESIZE_OK) {
			ts_log(TS_LOG_DEBUG,
			       "container '%s' follows the shared pool: cpus %s mems %s",
			       planned->container_id, pl->cpus[i], pl->mems[i]);
			ensure_placement_file(planned, pl->cpus[i], pl->mems[i], ts_state_dir(s));
			resized++;
		}
	}
	return resized;
}

/* The pin in the container's placement file too (ts_state_placement_pin()):
 * a rebuild of a lost store keeps it.  Best effort: a bundle that cannot
 * be written leaves the pin in the store alone, with a note in the log. */
static void pin_placement_file(const struct ts_alloc *pin, const char *state_dir)
{
	cleanup_error struct ts_error *err = NULL;

	if (ts_state_placement_pin(pin->bundle, pin->container_id, state_dir, pin->cpus_str, &err) <
	    0) {
		cleanup_free char *why = ts_error_format(err);

		ts_log(TS_LOG_DEBUG, "container '%s': the pin is not in its placement file: %s",
		       pin->container_id, why != NULL ? why : "out of memory");
	}
}

/* The line of a container found pinned from outside (cpus), recorded with
 * other cpus. */
static void log_pinned(const struct ts_state *s, const char *id, const char *cpus,
		       const char *recorded)
{
	resize_log(s, TS_LOG_INFO,
		   "container '%s': its cpuset was changed outside toposhim (cpus %s, "
		   "recorded %s): now pinned there, the shared pool no longer resizes it",
		   id, cpus, recorded != NULL ? recorded : "");
}

/* Record the pins of the plan (plan_pin()) in the store, whose lock the
 * plan was made under, and in the containers' placement files.
 * @return how many; -ENOMEM. */
static int record_pins(struct ts_state *s, const struct pools_plan *pl, struct ts_error **err)
{
	int pinned = 0;

	for (size_t i = 0; i < pl->npins; i++) {
		const struct ts_alloc *pin = pl->pins[i];
		const struct ts_alloc *now = ts_state_find(s, pin->runtime_root, pin->container_id);
		struct ts_alloc *copy;

		if (now == NULL || now->pid != pin->pid || now->created_usec != pin->created_usec)
			continue;
		log_pinned(s, pin->container_id, pin->cpus_str, now->cpus_str);
		copy = ts_alloc_dup(pin);
		if (copy == NULL || ts_state_put(s, copy, err) < 0)
			return ts_error_set(err, ENOMEM, "allocation");
		pin_placement_file(pin, ts_state_dir(s));
		pinned++;
	}
	return pinned;
}

/* Write the plan's targets to the resizing file (TS_POOLS_RESIZING_FILE),
 * under the store's lock, before they are applied without it.  Best
 * effort: without the file a settle killed while resizing leaves what it
 * moved to be taken for moved from outside, as before it existed. */
static void write_resizing(struct ts_state *s, const struct pools_plan *pl)
{
	cleanup_json struct ts_json *arr = ts_json_new_array();
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	size_t len = 0;

	for (size_t i = 0; arr != NULL && i < pl->n; i++) {
		const struct ts_alloc *a = pl->which[i];
		struct ts_json *o = ts_json_new_object();

		if (ts_json_array_append(arr, o, &err) < 0 ||
		    ts_json_object_set(o, "runtime_root",
				       ts_json_new_string(a->runtime_root ? a->runtime_root : ""),
				       &err) < 0 ||
		    ts_json_object_set(o, "container_id", ts_json_new_string(a->container_id),
				       &err) < 0 ||
		    ts_json_object_set(o, "pid", ts_json_new_int(a->pid), &err) < 0 ||
		    ts_json_object_set(o, "cpus", ts_json_new_string(pl->cpus[i]), &err) < 0 ||
		    ts_json_object_set(o, "mems",
				       ts_json_new_string(pl->mems[i] ? pl->mems[i] : ""),
				       &err) < 0)
			break;
	}
	if (arr == NULL || err != NULL || ts_json_serialize(arr, false, &text, &len, &err) < 0 ||
	    ts_write_file_replace_at(ts_state_dir_fd(s), TS_POOLS_RESIZING_FILE, text, len, 0600,
				     &err) < 0) {
		cleanup_free char *why = err != NULL ? ts_error_format(err) : NULL;

		/* helper-23: a directory there turned the record off unseen */
		resize_log(s, TS_LOG_WARNING,
			   "%s/%s: not written (%s): a resize this settle does not finish "
			   "may later be taken for one made outside toposhim",
			   ts_state_dir(s), TS_POOLS_RESIZING_FILE,
			   why != NULL ? why : "out of memory");
	}
}

/* The entries of the resizing file, or NULL (none, unreadable: nothing
 * is known of resizes in flight).  *ret_present: whether there is a file
 * (may be NULL). */
static struct ts_json *read_resizing(const struct ts_state *s, bool *ret_present)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	struct ts_json *j = NULL;
	size_t len = 0;
	int r;

	r = ts_read_file_at(ts_state_dir_fd(s), TS_POOLS_RESIZING_FILE, 1u << 20, &buf, &len, &err);
	if (ret_present != NULL)
		*ret_present = r != -ENOENT;
	if (r < 0 || ts_json_parse(buf, len, TS_POOLS_RESIZING_FILE, &j, &err) < 0)
		return NULL;
	if (j->type != TS_JSON_ARRAY)
		return ts_json_free(j);
	return j;
}

/* The entry of the resizing file for a (the same container: root, id and
 * init pid) whose target cpus are current, or NULL. */
static const struct ts_json *resizing_to(const struct ts_json *entries, const struct ts_alloc *a,
					 const char *current)
{
	const struct ts_json *e;
	size_t i;
	int64_t pid;

	ts_json_array_foreach (entries, i, e) {
		const char *root = ts_json_get_string(e, "runtime_root");
		const char *id = ts_json_get_string(e, "container_id");
		const char *cpus = ts_json_get_string(e, "cpus");

		if (root != NULL && id != NULL && cpus != NULL &&
		    strcmp(id, a->container_id) == 0 &&
		    strcmp(root, a->runtime_root ? a->runtime_root : "") == 0 &&
		    ts_json_get_int64(ts_json_get(e, "pid"), &pid) == 0 && pid == a->pid &&
		    strcmp(cpus, current) == 0 && ts_json_get_string(e, "mems") != NULL)
			return e;
	}
	return NULL;
}

/* A settle killed between its resizes and their record (the resizing file
 * it left): each container whose cpuset is its target is recorded there,
 * as the record would have been; the others are left as they are.  Run by
 * a settle (it holds the resize lock: no other is resizing) under the
 * store's lock; the file is then removed.  @return how many records
 * changed; -ENOMEM. */
static int finish_resizes(const struct ts_pools *p, struct ts_state *s, struct ts_error **err)
{
	bool present = false;
	cleanup_json struct ts_json *entries = read_resizing(s, &present);
	int done = 0;

	if (!present)
		return 0;
	for (size_t i = 0; entries != NULL && i < ts_state_count(s); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);
		cleanup_free char *current = NULL;
		const struct ts_json *e;

		if (a->status != TS_ALLOC_CREATED || a->pid <= 0 || a->cgroup_path == NULL ||
		    ts_cgroup_read_cpus(p->cgroup_root, p->cgroup_mode, a->cgroup_path, &current) <=
			    0 ||
		    str_eq(a->cpus_str, current) || (e = resizing_to(entries, a, current)) == NULL)
			continue;
		resize_log(s, TS_LOG_INFO,
			   "container '%s': a resize to cpus %s was not recorded (its settle was "
			   "stopped): recorded now",
			   a->container_id, current);
		if (record_cpus(s, a, current, ts_json_get_string(e, "mems"), err) < 0)
			return ts_error_code(*err);
		done++;
	}
	if (unlinkat(ts_state_dir_fd(s), TS_POOLS_RESIZING_FILE, 0) < 0 && errno != ENOENT)
		resize_log(s, TS_LOG_WARNING, "%s/%s: cannot remove: %s", ts_state_dir(s),
			   TS_POOLS_RESIZING_FILE, strerror(errno));
	return done;
}

int ts_pools_adopt_outside_pins(const struct ts_pools *p, struct ts_state *s, struct ts_error **err)
{
	cleanup_json struct ts_json *resizing = read_resizing(s, NULL);
	int pinned = 0;

	for (size_t i = 0; i < ts_state_count(s); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);
		enum ts_placement_pool pool = ts_pools_pool_of(p, a);
		cleanup_hwloc_bitmap hwloc_bitmap_t pcpus = NULL;
		cleanup_error struct ts_error *ignored = NULL;
		char *current = NULL;
		struct ts_alloc *pin;
		int c;

		if ((pool != TS_PLACEMENT_POOL_SHARED && pool != TS_PLACEMENT_POOL_PINNED) ||
		    a->status != TS_ALLOC_CREATED || a->pid <= 0 || a->cgroup_path == NULL)
			continue;
		/* a parent that cannot be read: as the settle, nothing known;
		 * a pinned one is compared with its pin alone (pinned_check()) */
		if (pool == TS_PLACEMENT_POOL_SHARED && parent_cpus_of(p, a, &pcpus, &ignored) < 0)
			continue;
		c = changed_outside(p, a, pcpus, &current);
		if (c < 0)
			return ts_error_set(err, ENOMEM, "allocation");
		if (c == 0)
			continue;
		/* onto cpus a container holds exclusively: the settle after
		 * this create sets it back, with a warning; onto the target of a
		 * settle's resize (one running now, or one that was stopped):
		 * toposhim's own, recorded by that settle or the next */
		if (exclusive_owner(p, s, current) != NULL ||
		    (resizing != NULL && resizing_to(resizing, a, current) != NULL)) {
			free(current);
			continue;
		}
		log_pinned(s, a->container_id, current, a->cpus_str);
		pin = pinned_copy(a, current);
		if (pin == NULL)
			return ts_error_set(err, ENOMEM, "allocation");
		pin_placement_file(pin, ts_state_dir(s));
		if (ts_state_put(s, pin, err) < 0) /* replaces a, in place */
			return ts_error_code(*err);
		pinned++;
	}
	return pinned;
}

static int apply_plan(struct ts_pools *p, const char *proc_root, const struct pools_plan *pl,
		      struct ts_cgroup_resize_result **ret_results, struct ts_error **err)
{
	struct ts_cgroup_resize_options opts = {
		.root = p->cgroup_root,
		.mode = p->cgroup_mode,
		.proc_root = proc_root,
	};

	return ts_cgroup_resize(pl->targets, pl->n, &opts, ret_results, err);
}

int ts_pools_rebalance(struct ts_pools *p, struct ts_state *s, bool systemd_cgroup,
		       struct ts_error **err)
{
	struct pools_plan pl = {0};
	struct ts_cgroup_resize_result *results = NULL;
	int r;

	r = plan_rebalance(p, s, systemd_cgroup, NULL, 0, &pl, err);
	if (r >= 0 && pl.npins > 0)
		r = record_pins(s, &pl, err);
	if (r < 0 || pl.n == 0) {
		plan_release(&pl);
		return r < 0 ? r : 0;
	}
	r = apply_plan(p, ts_state_proc_root(s), &pl, &results, err);
	if (r >= 0)
		r = record_results(p, s, &pl, results, err);
	ts_cgroup_resize_results_free(results, pl.n);
	plan_release(&pl);
	return r;
}

int ts_pools_forget_shared_cpus(const struct ts_pools *p, struct ts_state *s, struct ts_error **err)
{
	int forgotten = 0;

	for (size_t i = 0; i < ts_state_count(s); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);
		struct ts_alloc *copy;
		int r;

		if (ts_pools_pool_of(p, a) != TS_PLACEMENT_POOL_SHARED ||
		    (a->cpus_str == NULL && a->mems_str == NULL))
			continue;
		copy = ts_alloc_dup(a);
		if (copy == NULL)
			return ts_error_set(err, ENOMEM, "allocation");
		free(copy->cpus_str);
		free(copy->mems_str);
		copy->cpus_str = copy->mems_str = NULL;
		r = ts_state_put(s, copy, err); /* replaces a, in place */
		if (r < 0)
			return r;
		forgotten++;
	}
	return forgotten;
}

int ts_pools_open_store(const struct ts_pools *p, const struct ts_state_options *opts,
			struct ts_state **ret, struct ts_error **err)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_free char *warning = NULL;
	int r;

	r = ts_state_open(opts, &s, err);
	if (r >= 0)
		r = ts_state_load(s, &warning, err);
	if (r < 0)
		return r;
	if (warning != NULL) {
		ts_log(TS_LOG_WARNING, "%s", warning);
		if (p != NULL && (r = ts_pools_forget_shared_cpus(p, s, err)) < 0)
			return r;
	}
	*ret = TAKE_PTR(s);
	return r; /* how many were forgotten: a settle must follow */
}

/* One round of ts_pools_settle(): plan under the store lock, resize
 * without it, record under it.  Failed containers join *skip (they are
 * tried again at the next pool change, not in this settle).
 * @return how many were resized; 0 with *ret_done when nothing was left. */
static int settle_round(struct ts_pools *p, const struct ts_state_options *opts,
			bool systemd_cgroup, struct ts_alloc ***skip, size_t *nskip,
			uint64_t wait_deadline_usec, bool *ret_done, struct ts_state_mark *ret_mark,
			bool *ret_marked, struct ts_error **err)
{
	struct pools_plan pl = {0};
	struct ts_cgroup_resize_result *results = NULL;
	struct ts_state *s = NULL;
	cleanup_free char *proc_root = NULL;
	int r, released = 0;

	r = ts_pools_open_store(p, opts, &s, err);
	/* what others dropped while it held cpus exclusively, planned with
	 * below and then cleared: the next settle has seen every cpuset */
	if (r >= 0 && (released = read_released(p, s, err)) < 0)
		r = released;
	if (r >= 0)
		r = ts_pools_load_topology(p, ts_state_dir(s), err);
	/* the plain containers the pool no longer gives what they run on */
	if (r >= 0)
		r = ts_pools_take_plain(p, s, false, err);
	/* the inits the runtime started since (no hook records them): the
	 * resizes need their cgroups, and the outcomes are recorded by pid */
	if (r >= 0 && ts_state_learn_inits(s) > 0)
		r = ts_state_commit(s, err);
	/* what a settle stopped while resizing moved, before anything is
	 * taken for moved from outside */
	if (r >= 0 && (r = finish_resizes(p, s, err)) > 0)
		r = ts_state_commit(s, err);
	if (r >= 0)
		r = plan_rebalance(p, s, systemd_cgroup, *skip, *nskip, &pl, err);
	if (r >= 0 && pl.npins > 0 && (r = record_pins(s, &pl, err)) > 0)
		r = ts_state_commit(s, err);
	if (r >= 0 && pl.n > 0)
		write_resizing(s, &pl);
	if (r >= 0 && released > 0)
		ts_state_released_clear(s);
	if (r >= 0 && (proc_root = strdup(ts_state_proc_root(s))) == NULL)
		r = ts_error_set(err, ENOMEM, "resize");
	*ret_marked = r >= 0 && ts_state_mark_at(ts_state_dir_fd(s), ret_mark) >= 0;
	s = ts_state_close(s);
	*ret_done = r >= 0 && pl.n == 0;
	if (r >= 0 && pl.n == 0 && pl.npending > 0 && ts_state_now_usec() < wait_deadline_usec) {
		/* a container created meanwhile: resized once its init exists */
		wait_for_inits(opts, &pl, wait_deadline_usec);
		*ret_done = false;
	}
	if (r < 0 || pl.n == 0) {
		plan_release(&pl);
		return r;
	}
	ts_test_point("settle-before-resize");
	r = apply_plan(p, proc_root, &pl, &results, err);
	ts_test_point("settle-after-resize");
	if (r >= 0)
		r = ts_pools_open_store(p, opts, &s, err);
	if (r >= 0)
		r = record_results(p, s, &pl, results, err);
	if (r >= 0) {
		int c = ts_state_commit(s, err);

		r = c < 0 ? c : r;
	}
	/* recorded: nothing of this settle is in flight any more */
	if (r >= 0 && unlinkat(ts_state_dir_fd(s), TS_POOLS_RESIZING_FILE, 0) < 0 &&
	    errno != ENOENT)
		ts_log(TS_LOG_DEBUG, "%s/%s: cannot remove: %s", ts_state_dir(s),
		       TS_POOLS_RESIZING_FILE, strerror(errno));
	*ret_marked = r >= 0 && ts_state_mark_at(ts_state_dir_fd(s), ret_mark) >= 0;
	s = ts_state_close(s);
	for (size_t i = 0; r >= 0 && i < pl.n; i++) {
		struct ts_alloc **grown;

		if (results[i].status != TS_CGROUP_RESIZE_FAILED)
			continue;
		grown = reallocarray(*skip, *nskip + 1, sizeof(**skip));
		if (grown == NULL)
			break; /* only means it may be tried again in this settle */
		*skip = grown;
		(*skip)[(*nskip)++] = TAKE_PTR(pl.which[i]);
	}
	ts_cgroup_resize_results_free(results, pl.n);
	plan_release(&pl);
	return r;
}

/* Whether a settle would find work now (*ret_done false). */
static int settle_pending(struct ts_pools *p, const struct ts_state_options *opts,
			  bool systemd_cgroup, struct ts_alloc *const *skip, size_t nskip,
			  bool *ret_done, struct ts_error **err)
{
	struct pools_plan pl = {0};
	struct ts_state *s = NULL;
	int r;

	r = ts_pools_open_store(p, opts, &s, err);
	if (r >= 0)
		r = read_released(p, s, err);
	if (r >= 0)
		r = ts_pools_take_plain(p, s, false, err);
	if (r >= 0 && ts_state_learn_inits(s) > 0)
		r = ts_state_commit(s, err);
	if (r >= 0)
		r = plan_rebalance(p, s, systemd_cgroup, skip, nskip, &pl, err);
	ts_state_close(s);
	*ret_done = pl.n == 0;
	plan_release(&pl);
	return r;
}

/* Whether the store is as the mark, taken under its lock, says: nothing
 * was committed, released or journaled since (state.h). */
static bool store_unchanged(const struct ts_state_options *opts, const struct ts_state_mark *mark)
{
	cleanup_close int dir_fd = open(ts_state_dir_resolve(opts != NULL ? opts->state_dir : NULL),
					O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct ts_state_mark now;

	return dir_fd >= 0 && ts_state_mark_at(dir_fd, &now) >= 0 &&
	       ts_state_mark_equal(mark, &now);
}

int ts_pools_settle(struct ts_pools *p, const struct ts_state_options *opts, bool systemd_cgroup,
		    struct ts_error **err)
{
	struct ts_alloc **skip = NULL;
	size_t nskip = 0;
	cleanup_free char *path = NULL;
	uint64_t wait_deadline = ts_state_now_usec() + TS_POOLS_CREATE_WAIT_USEC;
	int total = 0, r = 0;

	if (!p->placement.enabled)
		return 0;
	if (asprintf(&path, "%s/" TS_POOLS_RESIZE_LOCK,
		     ts_state_dir_resolve(opts != NULL ? opts->state_dir : NULL)) < 0)
		return ts_error_set(err, ENOMEM, "resize");
	/* A second pass only when a change was committed while this process
	 * held the resize lock: its maker found the lock taken and left the
	 * work to the holder. */
	for (int pass = 0; pass < 4 && r >= 0; pass++) {
		cleanup_close int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		struct ts_state_mark mark;
		bool done = false, marked = false;

		if (fd < 0) {
			r = ts_error_set(err, errno, "%s: cannot open", path);
			break;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK && errno != EINTR)
				r = ts_error_set(err, errno, "%s: cannot lock", path);
			break; /* the holder sees our change when it looks again */
		}
		for (int round = 0; round < 16 && r >= 0 && !done; round++) {
			r = settle_round(p, opts, systemd_cgroup, &skip, &nskip, wait_deadline,
					 &done, &mark, &marked, err);
			if (r > 0)
				total += r;
		}
		/* the resize lock still held, the rounds done: a commit now is
		 * left to this process */
		ts_test_point("settle-before-unlock");
		ts_closep(&fd);
		fd = -EBADF;
		if (r < 0 || !done)
			break;
		/* released: look again, for what was committed meanwhile; the
		 * store left as the last round's session left it holds nothing
		 * new (one store session less per settle: at 500 records its
		 * load, collection and plan) */
		if (marked && store_unchanged(opts, &mark))
			break;
		r = settle_pending(p, opts, systemd_cgroup, skip, nskip, &done, err);
		if (r < 0 || done)
			break;
	}
	ts_alloc_array_free(skip, nskip);
	return r < 0 ? r : total;
}

bool ts_pools_class_needs_nothing(const struct ts_cgroup_class_limits *l)
{
	return l == NULL || ((l->cpu_weight == 0 || l->cpu_weight == 100) && !l->has_cpu_max &&
			     l->cpu_idle <= 0 && l->memory_high.kind == TS_CGROUP_MEM_UNSET &&
			     l->memory_low.kind == TS_CGROUP_MEM_UNSET &&
			     l->memory_min.kind == TS_CGROUP_MEM_UNSET &&
			     l->memory_oom_group <= 0 && l->io_weight == 0 && l->pids_max == 0);
}

bool ts_pools_plain_allowed(const struct ts_pools *p, bool plugins)
{
	return p->placement.enabled && !plugins && geteuid() == 0 && !ts_in_user_namespace() &&
	       ts_json_get_path(p->config, "topology", "xml", NULL) == NULL &&
	       !ts_cli_plain_overridden();
}

int ts_pools_plain_probe(struct ts_pools *p, const struct ts_state *s, bool *ret_ok,
			 struct ts_plain_summary *ret, struct ts_error **err)
{
	struct ts_placement_request req = {0};
	struct ts_placement_result res = {0};
	struct ts_allocation *allocs = NULL;
	hwloc_bitmap_t *bitmaps = NULL;
	struct ts_plain_summary sum = {0};
	int n, r;

	*ret_ok = false;
	n = ts_pools_views(p, s, &allocs, &bitmaps, err);
	if (n < 0)
		return n;
	r = ts_placement_request_init(&req, "", err);
	if (r >= 0)
		r = ts_placement_place(&p->placement, p->topo, allocs, (size_t)n, &req, &res, err);
	ts_pools_views_free(allocs, bitmaps, (size_t)n);
	ts_placement_request_release(&req);
	if (r < 0)
		return r;
	if (res.pool == TS_PLACEMENT_POOL_SHARED && !res.existing &&
	    hwloc_bitmap_isequal(res.cpus, p->topo->online) &&
	    ts_pools_class_needs_nothing(ts_cgroup_config_class(&p->cgroup, res.class_name))) {
		sum.unified = p->cgroup_mode == TS_CGROUP_MODE_UNIFIED;
		sum.class_name = strdup(res.class_name);
		r = sum.class_name != NULL ? 0 : ts_error_set(err, ENOMEM, "plain containers");
		if (r >= 0)
			r = ts_cpulist_format(res.cpus, &sum.cpus, err);
		if (r >= 0)
			r = ts_cpulist_format(res.mems, &sum.mems, err);
		if (r >= 0) {
			*ret = sum;
			*ret_ok = true;
		} else {
			ts_plain_summary_release(&sum);
		}
	}
	ts_placement_result_release(&res);
	return r;
}

int ts_pools_plain_write(const struct ts_pools *p, const struct ts_state *s,
			 const struct ts_plain_summary *probe, struct ts_error **err)
{
	struct ts_plain_host host = {0};
	int r = ts_plain_host_read(p->config_path, &host, err);

	if (r >= 0)
		r = ts_plain_summary_write(ts_state_dir_fd(s), &host, probe, err);
	ts_plain_host_release(&host);
	return r;
}

int ts_pools_plain_update(struct ts_pools *p, struct ts_state *s, bool allowed,
			  struct ts_error **err)
{
	struct ts_plain_summary sum = {0};
	bool ok = false;
	int r = 0;

	if (allowed)
		r = ts_pools_load_topology(p, ts_state_dir(s), err);
	if (r >= 0 && allowed)
		r = ts_pools_plain_probe(p, s, &ok, &sum, err);
	if (r >= 0 && ok)
		r = ts_pools_plain_write(p, s, &sum, err);
	else if (r >= 0)
		r = ts_plain_summary_invalidate(ts_state_dir_fd(s), err);
	ts_plain_summary_release(&sum);
	if (r < 0)
		return ts_error_prefix(err, "%s", ts_state_dir(s));
	return ok ? 1 : 0;
}

void ts_pools_plain_refresh(struct ts_pools *p, const struct ts_state_options *opts, bool allowed)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	int r;

	r = ts_pools_open_store(p, opts, &s, &err);
	if (r >= 0)
		r = ts_pools_plain_update(p, s, allowed, &err);
	if (r < 0)
		ts_log(TS_LOG_WARNING, "cannot note what plain containers get: %s, ignoring",
		       err->msg);
}

/* A "creating" record of a journal entry: what the create would have
 * recorded, with the create process as its pid.  NULL on ENOMEM. */
static struct ts_alloc *record_of_entry(const struct ts_plain_entry *e)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_alloc struct ts_alloc *a = ts_alloc_new(e->container_id, &ignored);

	if (a == NULL || (a->runtime_root = strdup(e->runtime_root)) == NULL ||
	    (a->bundle = strdup(e->bundle)) == NULL ||
	    (a->class_name = strdup(e->class_name)) == NULL ||
	    (a->cpus_str = strdup(e->cpus)) == NULL || (a->mems_str = strdup(e->mems)) == NULL ||
	    (a->devices = calloc(1, sizeof(*a->devices))) == NULL)
		return NULL;
	a->status = TS_ALLOC_CREATING;
	a->created_usec = e->created_usec;
	a->pid = e->pid;
	a->pid_start_ticks = e->pid_start_ticks;
	return TAKE_PTR(a);
}

/* A plain container now recorded gets the placement file the others have
 * (what it was created with; toposhim wrote no cpus into its config.json),
 * so that a rebuild of a lost store adopts it from the runtime's state
 * like any other: without one, helper-5 saw a pod's sandbox dropped by a
 * rebuild and left on the reserved cpu. */
static void placement_of_entry(const struct ts_plain_entry *e, const struct ts_state *s)
{
	const struct ts_alloc *a = ts_state_find(s, e->runtime_root, e->container_id);

	/* only the record made from this entry (not a later create's) */
	if (a != NULL && a->created_usec == e->created_usec && a->pid == e->pid)
		ensure_placement_file(a, a->cpus_str, a->mems_str, ts_state_dir(s));
}

/* Whether the pool gives some entry other cpus than it was created with. */
static int entries_outside(struct ts_pools *p, const struct ts_state *s,
			   const struct ts_plain_entry *v, size_t n, bool *ret,
			   struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t pool = NULL;
	int r = shared_pool(p, s, &pool, err);

	*ret = false;
	for (size_t i = 0; r >= 0 && i < n && !*ret; i++) {
		cleanup_free char *cpus = NULL;

		r = class_cpus(p, pool, v[i].class_name, &cpus, err);
		*ret = r >= 0 && !str_eq(cpus, v[i].cpus);
	}
	return r;
}

int ts_pools_take_plain(struct ts_pools *p, struct ts_state *s, bool all, struct ts_error **err)
{
	cleanup_error struct ts_error *done_err = NULL, *take_err = NULL;
	struct ts_plain_entry *v = NULL;
	size_t n = 0;
	int fd = -EBADF, made = 0, r;
	bool outside = false, commit = false;

	r = ts_pools_load_topology(p, ts_state_dir(s), err);
	if (r < 0)
		return r;
	r = ts_plain_journal_take(ts_state_dir_fd(s), ts_state_proc_root(s), &fd, &v, &n,
				  &take_err);
	if (r < 0) {
		/* what is in the journal stays out of this settle; the recorded
		 * containers are resized all the same */
		if (!p->plain_warned) {
			cleanup_free char *msg = ts_error_format(take_err);

			ts_log(TS_LOG_WARNING, "%s: %s, ignoring", ts_state_dir(s),
			       msg != NULL ? msg : take_err->msg);
		}
		p->plain_warned = true;
		return 0;
	}
	if (fd < 0)
		return 0;
	/* only gone containers: the journal empties */
	commit = n == 0;
	if (n > 0 && all)
		outside = true;
	else if (n > 0)
		r = entries_outside(p, s, v, n, &outside, err);
	for (size_t i = 0; r >= 0 && outside && i < n; i++) {
		struct ts_alloc *a;

		if (ts_state_find(s, v[i].runtime_root, v[i].container_id) != NULL)
			continue; /* recorded meanwhile (a later create of the same id) */
		a = record_of_entry(&v[i]);
		if (a == NULL)
			r = ts_error_set(err, ENOMEM, "plain container '%s'", v[i].container_id);
		else
			r = ts_state_put(s, a, err);
		if (r >= 0) {
			ts_log(TS_LOG_DEBUG,
			       "plain container '%s' recorded: the shared pool changes",
			       v[i].container_id);
			made++;
		}
	}
	if (r >= 0 && outside) {
		r = ts_state_commit(s, err);
		commit = r >= 0;
	}
	for (size_t i = 0; commit && outside && i < n; i++)
		placement_of_entry(&v[i], s);
	ts_plain_entries_free(v, n);
	if (ts_plain_journal_take_done(fd, commit, &done_err) < 0 && r >= 0)
		/* the entries are records now: taken again later, they are skipped */
		ts_log(TS_LOG_WARNING, "%s, ignoring", done_err->msg);
	return r < 0 ? r : made;
}

/* Whether a later non-shared record overlaps the cpus of shared record a. */
static bool overtaken(const struct ts_pools *p, const struct ts_state *s, const struct ts_alloc *a)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t mine = NULL;
	cleanup_error struct ts_error *ignored = NULL;
	bool hit = false;

	if (a->cpus_str == NULL || ts_cpulist_parse(a->cpus_str, &mine, &ignored) < 0)
		return false;
	for (size_t i = 0; i < ts_state_count(s) && !hit; i++) {
		const struct ts_alloc *o = ts_state_at(s, i);
		cleanup_hwloc_bitmap hwloc_bitmap_t theirs = NULL;

		if (o == a || o->created_usec < a->created_usec ||
		    ts_pools_pool_of(p, o) == TS_PLACEMENT_POOL_SHARED || o->cpus_str == NULL ||
		    ts_cpulist_parse(o->cpus_str, &theirs, &ignored) < 0)
			continue;
		hit = hwloc_bitmap_intersects(mine, theirs);
	}
	return hit;
}

bool ts_pools_catch_up(struct ts_pools *p, const struct ts_state *s, const char *runtime_root,
		       const char *container_id)
{
	const struct ts_alloc *a = ts_state_find(s, runtime_root, container_id);

	return p->placement.enabled && a != NULL &&
	       ts_pools_pool_of(p, a) == TS_PLACEMENT_POOL_SHARED && overtaken(p, s, a);
}

void ts_pools_settle_or_warn(struct ts_pools *p, const struct ts_state_options *opts,
			     bool systemd_cgroup)
{
	cleanup_error struct ts_error *err = NULL;

	if (ts_pools_settle(p, opts, systemd_cgroup, &err) < 0)
		ts_log(TS_LOG_WARNING, "cannot resize the shared pool: %s, ignoring", err->msg);
}

int ts_pools_release_container(const struct ts_json *config, const char *config_path,
			       const struct ts_state_options *opts, const char *runtime_root,
			       const char *container_id, const char *bundle,
			       struct ts_alloc **ret_removed, struct ts_error **err)
{
	cleanup_alloc struct ts_alloc *removed = NULL;
	struct ts_pools p = {0};
	cleanup_state struct ts_state *s = NULL;
	const struct ts_alloc *a;
	int r, found, forgot;

	r = ts_pools_init(config, config_path, &p, err);
	if (r < 0)
		return r;
	/* a rebuilt store's shared containers are resized whatever is found */
	forgot = ts_pools_open_store(&p, opts, &s, err);
	if (forgot < 0) {
		r = forgot;
		goto out;
	}
	a = ts_state_lookup(s, runtime_root, container_id, bundle);
	found = a != NULL ? ts_state_remove(s, a->runtime_root, a->container_id, &removed) : 0;
	/* its cpus count as held in the settle after (pools.h) */
	ts_pools_note_released(&p, s, &removed, removed != NULL ? 1 : 0);
	ts_test_point("hook-poststop-before-commit");
	r = ts_state_commit(s, err);
	s = ts_state_close(s);
	if (r < 0)
		goto out;
	ts_test_point("hook-poststop-after-commit");
	/* the CPUs are free again even if the others cannot grow yet */
	if (found > 0 || forgot > 0)
		ts_pools_settle_or_warn(&p, opts, false);
	r = found;
	if (ret_removed != NULL)
		*ret_removed = TAKE_PTR(removed);
out:
	ts_pools_release(&p);
	return r;
}

int ts_pools_parent_cpuset(const struct ts_pools *p, const struct ts_json *config,
			   const char *config_name, bool systemd, struct ts_placement_request *req,
			   struct ts_error **err)
{
	struct ts_cgroup_parent parent = {0};
	const char *path = NULL, *xml = secure_getenv("TOPOSHIM_TOPOLOGY_XML");
	int r;

	/* a topology from XML is another machine's: the host's cgroups say
	 * nothing about its cpus */
	if ((xml != NULL && xml[0] != '\0') ||
	    ts_json_get_path(p->config, "topology", "xml", NULL) != NULL)
		return 0;
	r = ts_oci_linux_get_cgroups_path(config, &path, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", config_name);
	r = ts_cgroup_parent_cpuset(p->cgroup_root, p->cgroup_mode, r == 1 ? path : NULL, systemd,
				    &parent, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", config_name);
	if (r == 0)
		return 0;
	/* the root cgroup's cpuset is every online cpu: nothing narrows */
	if (strcmp(parent.existing, "/") == 0) {
		ts_cgroup_parent_release(&parent);
		return 0;
	}
	if (ts_cpulist_parse(parent.cpus_str, &req->parent_cpus, err) < 0 ||
	    ts_cpulist_parse(parent.mems_str, &req->parent_mems, err) < 0) {
		ts_cgroup_parent_release(&parent);
		return ts_error_code(*err);
	}
	if (strcmp(parent.path, parent.existing) == 0)
		r = asprintf(&req->parent_name, "'%s' (cpuset %s)", parent.path, parent.cpus_str);
	else
		r = asprintf(&req->parent_name, "'%s' (not there yet: '%s', cpuset %s)",
			     parent.path, parent.existing, parent.cpus_str);
	if (r < 0)
		req->parent_name = NULL;
	ts_log(TS_LOG_DEBUG, "cgroup parent '%s': cpus %s, mems %s (from '%s')", parent.path,
	       parent.cpus_str, parent.mems_str, parent.existing);
	ts_cgroup_parent_release(&parent);
	return req->parent_name != NULL ? 0 : ts_error_set(err, ENOMEM, "cgroup parent");
}

bool ts_pools_placement_applicable(const struct ts_pools *p, const struct ts_json *config,
				   bool systemd, char **ret_why)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *controller = NULL, *dir = NULL;
	struct ts_cgroup_parent parent = {0};
	const char *path = NULL;
	int r;

	*ret_why = NULL;
	/* root of a user namespace (rootless podman) is no more root than
	 * the user: the cgroup's own access decides */
	if (geteuid() == 0 && !ts_in_user_namespace())
		return true;
	if (asprintf(&controller, "%s%s", p->cgroup_root,
		     p->cgroup_mode == TS_CGROUP_MODE_UNIFIED ? "" : "/cpuset") < 0)
		return false;
	r = ts_oci_linux_get_cgroups_path(config, &path, &ignored);
	if (r >= 0)
		r = ts_cgroup_parent_cpuset(p->cgroup_root, p->cgroup_mode, r == 1 ? path : NULL,
					    systemd, &parent, &ignored);
	if (r <= 0) {
		if (asprintf(ret_why, "no cpuset controller at '%s'", controller) < 0)
			*ret_why = NULL;
		return false;
	}
	r = asprintf(&dir, "%s%s", controller,
		     strcmp(parent.existing, "/") == 0 ? "" : parent.existing);
	ts_cgroup_parent_release(&parent);
	if (r < 0)
		return false;
	if (access(dir, W_OK) == 0)
		return true;
	if (asprintf(ret_why, "cgroup '%s' is not writable", dir) < 0)
		*ret_why = NULL;
	return false;
}

/* The CDI devices a container's annotations (or env) asked for, not those
 * the engine injected itself, and where each was asked for (*ret_fields,
 * parallel); both borrowed from injected.  NULL on ENOMEM. */
static const char **requested_devices(const struct ts_cdi_injection *injected, size_t *ret_n,
				      const char ***ret_fields)
{
	size_t n = injected != NULL ? injected->n_devices : 0, k = 0;
	const char **v = calloc(n + 1, sizeof(*v)), **f = calloc(n + 1, sizeof(*f));

	if (v == NULL || f == NULL) {
		free(v);
		free(f);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (injected->devices[i].engine_injected)
			continue;
		f[k] = injected->devices[i].request_field;
		v[k++] = injected->devices[i].qualified_name;
	}
	*ret_n = k;
	*ret_fields = f;
	return v;
}

void ts_pools_policy_request_of(const struct ts_placement_config *cfg,
				const struct ts_placement_request *req,
				struct ts_policy_request *pr)
{
	static const char *const numa_names[] = {"prefer", "single", "exclusive"};
	const struct ts_placement_class *c = ts_placement_config_class(cfg, req->class_name);

	pr->pool = c == NULL || c->pool == TS_PLACEMENT_POOL_SHARED ? TS_POLICY_POOL_SHARED
		   : c->pool == TS_PLACEMENT_POOL_RESERVED	    ? TS_POLICY_POOL_RESERVED
								    : TS_POLICY_POOL_EXCLUSIVE;
	pr->class_name = req->class_annotated ? req->class_name : NULL;
	pr->cpus = pr->pool == TS_POLICY_POOL_EXCLUSIVE ? req->cpus : 0;
	pr->cpus_annotated = req->cpus_annotated;
	pr->cpu_limit = req->cpu_limit;
	pr->guaranteed = req->guaranteed;
	pr->class_field = req->class_field;
	pr->cpus_field = req->cpus_field;
	pr->numa_field = req->numa_field;
	pr->tier_field = req->tier_field;
	if ((int)req->numa >= 0 && (size_t)req->numa < ARRAY_SIZE(numa_names) &&
	    req->numa != TS_PLACEMENT_NUMA_PREFER)
		pr->numa = numa_names[req->numa];
	if (req->memory_tier != TS_MEMORY_TIER_DRAM)
		pr->memory_tier = ts_memory_tier_to_string(req->memory_tier);
}

int ts_pools_policy_valid(const struct ts_json *config, const char *config_path,
			  struct ts_error **err)
{
	struct ts_policy pol;

	return ts_policy_parse(config, config_path, &pol, err);
}

/* ts_policy_check() of pr, for the container of oci_config */
static int check_policy(const struct ts_json *config, const char *config_path,
			const struct ts_json *oci_config, struct ts_policy_request *pr,
			struct ts_error **err)
{
	struct ts_policy pol;
	int r;

	r = ts_policy_parse(config, config_path, &pol, err);
	if (r >= 0)
		r = ts_policy_namespace(oci_config, pr->config_name, &pr->namespace, err);
	if (r < 0)
		return r;
	return ts_policy_check(&pol, pr, err);
}

int ts_pools_check_policy(const struct ts_json *config, const char *config_path,
			  const struct ts_json *oci_config, const char *oci_config_path,
			  const struct ts_placement_config *cfg,
			  const struct ts_placement_request *req,
			  const struct ts_cdi_injection *injected, struct ts_error **err)
{
	cleanup_free const char **devices = NULL, **device_fields = NULL;
	struct ts_policy_request pr = {
		.config_name = oci_config_path,
	};

	devices = requested_devices(injected, &pr.n_devices, &device_fields);
	if (devices == NULL)
		return ts_error_set(err, ENOMEM, "policy");
	pr.devices = devices;
	pr.device_fields = device_fields;
	if (req != NULL)
		ts_pools_policy_request_of(cfg, req, &pr);
	return check_policy(config, config_path, oci_config, &pr, err);
}

int ts_pools_policy_over_cdi_error(const struct ts_json *config, const char *config_path,
				   const struct ts_json *oci_config, const char *oci_config_path,
				   const struct ts_cdi_registry *reg, bool env_requests, int r,
				   struct ts_error **err)
{
	cleanup_strv char **names = NULL, **where = NULL;
	cleanup_free const char **asked = NULL, **fields = NULL;
	cleanup_error struct ts_error *refused = NULL, *ignored = NULL;
	struct ts_policy_request pr = {
		.config_name = oci_config_path,
	};
	int k = ts_cdi_requests_collect(oci_config, oci_config_path, env_requests, &names, &where,
					&ignored);

	/* (a request that does not read is the injection's error already) */
	if (k <= 0)
		return r;
	asked = calloc((size_t)k + 1, sizeof(*asked));
	fields = calloc((size_t)k + 1, sizeof(*fields));
	if (asked == NULL || fields == NULL)
		return r;
	for (int i = 0; i < k; i++)
		if (!ts_cdi_engine_injected(reg, oci_config, names[i])) {
			asked[pr.n_devices] = names[i];
			fields[pr.n_devices++] = where[i];
		}
	pr.devices = asked;
	pr.device_fields = fields;
	if (pr.n_devices == 0 || check_policy(config, config_path, oci_config, &pr, &refused) >= 0)
		return r;
	ts_error_clear(err);
	*err = TAKE_PTR(refused);
	return ts_error_code(*err);
}

/* cpus written by an earlier create in this bundle (its placement file
 * says so, and config.json still holds exactly them) are not a request:
 * the request forgets them (and the mems that came with them); config.json
 * keeps them where they are, to be overwritten in place.  Whatever the
 * container id of that create: a bundle created again under another id
 * (a shell's `run`, a test harness) took the earlier container's cpus as
 * the user's own pin. */
void ts_pools_forget_earlier_cpus(const struct ts_json *config, const struct ts_state_placement *p,
				  struct ts_placement_request *req)
{
	const char *cpus = NULL;

	if (p->cpus_written && !p->pinned && ts_oci_cpu_get_cpus(config, &cpus, NULL) == 1 &&
	    strcmp(p->cpus_str, cpus) == 0) {
		hwloc_bitmap_free(req->user_cpus);
		hwloc_bitmap_free(req->user_mems);
		req->user_cpus = NULL;
		req->user_mems = NULL;
	}
}

/* The cgroup values an earlier create of this bundle wrote for its class
 * (the placement file's "resources_written") and config.json still holds
 * go back to the engine's values before the request is read: a bundle
 * created again under another class (a shell's) is not given the earlier
 * class's cpu.shares as the engine's own, which would win over its class
 * (helper-10: a standard container kept critical's shares 10240).  A value
 * changed since stays.  @return how many were put back; -ENOMEM. */
int ts_pools_forget_earlier_class(struct ts_json *config, const char *config_path,
				  const struct ts_state_placement *p, struct ts_error **err)
{
	const struct ts_json *e;
	int n = 0, r;
	size_t i;

	ts_json_array_foreach (p->resources_written, i, e) {
		r = ts_json_undo_entry(config, e);
		if (r < 0)
			return ts_error_set(err, ENOMEM, "%s", config_path);
		if (r > 0)
			ts_log(TS_LOG_DEBUG,
			       "%s: '%s': the value an earlier create wrote for class '%s' "
			       "is the engine's again",
			       config_path, ts_json_get_string(e, "pointer"), p->class_name);
		n += r;
	}
	return n;
}
