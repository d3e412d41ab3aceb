/* place.c - pools, classes and the placement decision for one container. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

#include "placement/internal.h"
#include "util/cleanup.h"

#define ANNOTATION_PATH "/annotations/toposhim.io~1"
/* Where a request value came from (placement.h): the scoped annotation or
 * the cpu quota it was read from, else the unscoped annotation. */
#define FIELD(req, member, key) ((req)->member != NULL ? (req)->member : ANNOTATION_PATH key)

static const char *const pool_names[_TS_PLACEMENT_POOL_MAX] = {
	[TS_PLACEMENT_POOL_SHARED] = "shared",
	[TS_PLACEMENT_POOL_EXCLUSIVE] = "exclusive",
	[TS_PLACEMENT_POOL_NUMA_EXCLUSIVE] = "numa-exclusive",
	[TS_PLACEMENT_POOL_RESERVED] = "reserved",
	[TS_PLACEMENT_POOL_PINNED] = "pinned",
};

const char *ts_placement_pool_to_string(enum ts_placement_pool pool)
{
	if ((int)pool < 0 || pool >= _TS_PLACEMENT_POOL_MAX)
		return NULL;
	return pool_names[pool];
}

enum ts_placement_pool ts_placement_pool_from_string(const char *s)
{
	for (int i = 0; s != NULL && i < _TS_PLACEMENT_POOL_MAX; i++)
		if (strcmp(s, pool_names[i]) == 0)
			return (enum ts_placement_pool)i;
	return TS_PLACEMENT_POOL_INVALID;
}

static int add_class(struct ts_placement_config *cfg, const char *name, enum ts_placement_pool pool,
		     enum ts_placement_kind kind)
{
	struct ts_placement_class *c = NULL;

	for (size_t i = 0; i < cfg->n_classes; i++)
		if (strcmp(cfg->classes[i].name, name) == 0)
			c = &cfg->classes[i];
	if (c == NULL) {
		c = realloc(cfg->classes, (cfg->n_classes + 1) * sizeof(*c));
		if (c == NULL)
			return -ENOMEM;
		cfg->classes = c;
		c = &cfg->classes[cfg->n_classes];
		c->name = strdup(name);
		if (c->name == NULL)
			return -ENOMEM;
		cfg->n_classes++;
	}
	c->pool = pool;
	c->cpu_kind = kind;
	return 0;
}

int ts_placement_config_add_class(struct ts_placement_config *cfg, const char *name,
				  enum ts_placement_pool pool, enum ts_placement_kind kind)
{
	return add_class(cfg, name, pool, kind);
}

int ts_placement_config_init(struct ts_placement_config *cfg, struct ts_error **err)
{
	*cfg = (struct ts_placement_config){
		.enabled = true,
		.shared_may_use_reserved = true,
		.align_l3 = true,
		.performance_threshold = TS_TOPOLOGY_KIND_THRESHOLD_DEFAULT,
	};
	if (add_class(cfg, "critical", TS_PLACEMENT_POOL_EXCLUSIVE, TS_PLACEMENT_KIND_PERFORMANCE) <
		    0 ||
	    add_class(cfg, "standard", TS_PLACEMENT_POOL_SHARED, TS_PLACEMENT_KIND_ANY) < 0 ||
	    add_class(cfg, "batch", TS_PLACEMENT_POOL_SHARED, TS_PLACEMENT_KIND_EFFICIENCY) < 0) {
		ts_placement_config_release(cfg);
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	return 0;
}

void ts_placement_config_release(struct ts_placement_config *cfg)
{
	for (size_t i = 0; i < cfg->n_classes; i++)
		free(cfg->classes[i].name);
	free(cfg->classes);
	free(cfg->file);
	if (cfg->reserved_cpus != NULL)
		hwloc_bitmap_free(cfg->reserved_cpus);
	*cfg = (struct ts_placement_config){0};
}

const struct ts_placement_class *ts_placement_config_class(const struct ts_placement_config *cfg,
							   const char *name)
{
	for (size_t i = 0; name != NULL && i < cfg->n_classes; i++)
		if (strcmp(cfg->classes[i].name, name) == 0)
			return &cfg->classes[i];
	return NULL;
}

void ts_placement_result_release(struct ts_placement_result *res)
{
	ts_strv_freep(&res->affected);
	ts_strv_freep(&res->reasons);
	ts_strv_freep(&res->warnings);
	free(res->class_name);
	if (res->cpus != NULL)
		hwloc_bitmap_free(res->cpus);
	if (res->mems != NULL)
		hwloc_bitmap_free(res->mems);
	if (res->shared_pool != NULL)
		hwloc_bitmap_free(res->shared_pool);
	*res = (struct ts_placement_result){0};
}

/* PUs of the lowest cores (by lowest PU) until count PUs are collected. */
static int reserved_by_count(const struct ts_topology *topo, const char *file, unsigned count,
			     hwloc_bitmap_t out, struct ts_error **err)
{
	int total = hwloc_bitmap_weight(topo->online);

	if (total < 0 || count >= (unsigned)total)
		return ts_error_set(err, 0,
				    "%s: '/placement/reserved/count': cannot reserve %u of %d "
				    "cpus",
				    file, count, total);
	while ((unsigned)hwloc_bitmap_weight(out) < count) {
		cleanup_hwloc_bitmap hwloc_bitmap_t rest = hwloc_bitmap_alloc();
		if (rest == NULL)
			return ts_error_set(err, ENOMEM, "placement: out of memory");
		hwloc_bitmap_andnot(rest, topo->online, out);
		int first = hwloc_bitmap_first(rest);
		hwloc_const_bitmap_t set = NULL;
		unsigned i;

		/* the core of the lowest PU left (a PU under no core is one) */
		for (size_t k = 0; set == NULL && k < topo->n_groups[TS_CPU_LEVEL_CORE]; k++)
			if (hwloc_bitmap_isset(topo->groups[TS_CPU_LEVEL_CORE][k].cpus,
					       (unsigned)first))
				set = topo->groups[TS_CPU_LEVEL_CORE][k].cpus;
		if (set == NULL) {
			hwloc_bitmap_set(out, (unsigned)first);
			continue;
		}
		hwloc_bitmap_foreach_begin(i, set)
			{
				if ((unsigned)hwloc_bitmap_weight(out) < count)
					hwloc_bitmap_set(out, i);
			}
		hwloc_bitmap_foreach_end();
	}
	return 0;
}

int ts_placement_not_online(const char *file, const char *field, hwloc_const_bitmap_t set,
			    hwloc_const_bitmap_t online, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t off = hwloc_bitmap_alloc();
	cleanup_free char *all = NULL, *offline = NULL, *on = NULL;

	if (off == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	hwloc_bitmap_andnot(off, set, online);
	if (ts_cpulist_format(set, &all, err) < 0 || ts_cpulist_format(off, &offline, err) < 0 ||
	    ts_cpulist_format(online, &on, err) < 0)
		return ts_error_code(*err);
	return ts_error_set(err, 0,
			    "%s: '%s': '%s' names cpus that are not online: %s (online: %s)", file,
			    field, all, offline, on);
}

int ts_placement_reserved(const struct ts_placement_config *cfg, const struct ts_topology *topo,
			  hwloc_bitmap_t *ret, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t out = hwloc_bitmap_alloc();
	const char *file = cfg->file != NULL ? cfg->file : "placement";
	int r;

	if (out == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	if (cfg->reserved_cpus != NULL && cfg->reserved_count > 0 &&
	    (unsigned)hwloc_bitmap_weight(cfg->reserved_cpus) != cfg->reserved_count) {
		cleanup_free char *s = NULL;
		(void)ts_cpulist_format(cfg->reserved_cpus, &s, NULL);
		/* the kubelet refuses this too (unable to reserve the required amount) */
		return ts_error_set(err, 0,
				    "%s: '/placement/reserved': count %u does not match cpus "
				    "'%s'",
				    file, cfg->reserved_count, s != NULL ? s : "?");
	}
	if (cfg->reserved_cpus != NULL) {
		if (!hwloc_bitmap_isincluded(cfg->reserved_cpus, topo->online))
			return ts_placement_not_online(file, "/placement/reserved/cpus",
						       cfg->reserved_cpus, topo->online, err);
		/* as a count of all of them is: nothing would be left to place
		 * a container on (the list was taken) */
		if (hwloc_bitmap_isequal(cfg->reserved_cpus, topo->online)) {
			cleanup_free char *s = NULL;

			if (ts_cpulist_format(cfg->reserved_cpus, &s, err) < 0)
				return ts_error_code(*err);
			return ts_error_set(err, 0,
					    "%s: '/placement/reserved/cpus': cannot reserve all %d "
					    "cpus ('%s')",
					    file, hwloc_bitmap_weight(topo->online), s);
		}
		hwloc_bitmap_copy(out, cfg->reserved_cpus);
	} else if (cfg->reserved_count > 0) {
		r = reserved_by_count(topo, file, cfg->reserved_count, out, err);
		if (r < 0)
			return r;
	}
	*ret = TAKE_PTR(out);
	return 0;
}

enum ts_placement_pool ts_placement_allocation_pool(const struct ts_placement_config *cfg,
						    const char *class_name, bool pinned,
						    bool numa_exclusive, bool cpus_held)
{
	const struct ts_placement_class *cls = ts_placement_config_class(cfg, class_name);

	if (pinned)
		return TS_PLACEMENT_POOL_PINNED;
	if (numa_exclusive)
		return TS_PLACEMENT_POOL_NUMA_EXCLUSIVE;
	if (cls != NULL)
		return cls->pool;
	return cpus_held ? TS_PLACEMENT_POOL_EXCLUSIVE : TS_PLACEMENT_POOL_SHARED;
}

static bool alloc_is_exclusive(const struct ts_allocation *a)
{
	return a->pool == TS_PLACEMENT_POOL_EXCLUSIVE ||
	       a->pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE || a->numa_exclusive;
}

/* Whether a's cpus are no other container's to take: exclusive or pinned. */
static bool alloc_holds_cpus(const struct ts_allocation *a)
{
	return a->cpus != NULL &&
	       (alloc_is_exclusive(a) || a->pool == TS_PLACEMENT_POOL_PINNED || a->pinned);
}

int ts_placement_shared_pool(const struct ts_placement_config *cfg, const struct ts_topology *topo,
			     const struct ts_allocation *allocs, size_t nallocs,
			     hwloc_bitmap_t *ret, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t reserved = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t pool = hwloc_bitmap_dup(topo->online);
	int r;

	if (pool == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	r = ts_placement_reserved(cfg, topo, &reserved, err);
	if (r < 0)
		return r;
	if (!cfg->shared_may_use_reserved)
		hwloc_bitmap_andnot(pool, pool, reserved);
	for (size_t i = 0; i < nallocs; i++)
		if (alloc_is_exclusive(&allocs[i]) && allocs[i].cpus != NULL)
			hwloc_bitmap_andnot(pool, pool, allocs[i].cpus);
	*ret = TAKE_PTR(pool);
	return 0;
}

/* ---- the decision ---------------------------------------------------- */

struct placer {
	const struct ts_placement_config *cfg;
	const struct ts_topology *topo;
	const struct ts_allocation *allocs;
	size_t nallocs;
	const struct ts_placement_request *req;
	const struct ts_placement_class *cls;
	const char *file;
	hwloc_bitmap_t reserved;
	hwloc_bitmap_t avail;	    /* free for exclusive use */
	hwloc_bitmap_t free_cores;  /* full_cores_only: the PUs of whole free cores */
	hwloc_bitmap_t perf, eff;   /* CPU kinds at the configured threshold */
	hwloc_bitmap_t device_cpus; /* PUs of the NUMA domains local to the devices */
	size_t n_device_domains;    /* how many domains those are */
	struct ts_strv reasons;
	struct ts_strv warnings;
	bool oom;
};

static void reason(struct placer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason(struct placer *p, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL) {
		p->oom = true;
		return;
	}
	/* a step taken twice (the preferred PUs, then the rest) is said once */
	for (size_t i = 0; i < p->reasons.n; i++)
		if (strcmp(p->reasons.v[i], s) == 0) {
			free(s);
			return;
		}
	if (ts_strv_push(&p->reasons, s) < 0)
		p->oom = true;
}

/* A warning: logged by the caller, and a reason too ("warning: ..."). */
static void warn(struct placer *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(struct placer *p, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s == NULL) {
		p->oom = true;
		return;
	}
	reason(p, "warning: %s", s);
	if (ts_strv_push(&p->warnings, s) < 0)
		p->oom = true;
}

static const char *list_of(hwloc_const_bitmap_t set, char *buf, size_t len)
{
	if (hwloc_bitmap_iszero(set))
		snprintf(buf, len, "none");
	else
		hwloc_bitmap_list_snprintf(buf, len, set);
	return buf;
}

int ts_placement_mems(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
		      enum ts_memory_tier tier, hwloc_bitmap_t *ret, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	char buf[256];
	int r;

	if (mems == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	r = ts_topology_mems_for(topo, cpus, tier, mems);
	if (r == -ENOENT)
		return ts_error_set(err, 0, "no memory node of tier '%s' on this machine",
				    ts_memory_tier_to_string(tier));
	if (r < 0)
		return ts_error_set(err, 0, "no online cpu in '%s'",
				    list_of(cpus, buf, sizeof(buf)));
	*ret = TAKE_PTR(mems);
	return 0;
}

/* Where the memory of cpus comes from, when not from their own nodes. */
static void mems_reasons(struct placer *p, hwloc_const_bitmap_t cpus)
{
	const struct ts_topology *t = p->topo;
	char a[256], b[256];
	int said = 0;

	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA] && said < 4; i++) {
		const struct ts_cpu_group *g = &t->groups[TS_CPU_LEVEL_NUMA][i];

		if (strcmp(g->mems_how, "local") == 0 || !hwloc_bitmap_intersects(g->cpus, cpus))
			continue;
		said++;
		if (g->placeholder)
			reason(p, "cpus %s are in no numa node: their memory is numa node %s (%s)",
			       list_of(g->cpus, a, sizeof(a)), list_of(g->mems, b, sizeof(b)),
			       strcmp(g->mems_how, "distance") == 0 ? "nearest by distance"
								    : "of the enclosing object");
		else
			reason(p, "numa node %d has no dram: its cpus use numa node %s (%s)",
			       g->numa_node, list_of(g->mems, b, sizeof(b)),
			       strcmp(g->mems_how, "distance") == 0 ? "nearest by distance"
								    : "of the enclosing object");
	}
}

static int compute_mems(struct placer *p, hwloc_const_bitmap_t cpus, hwloc_bitmap_t *ret,
			struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	enum ts_memory_tier tier = p->req->memory_tier;
	char buf[256];
	int r;

	if (mems == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	r = ts_topology_mems_for(p->topo, cpus, tier, mems);
	if (r == -ENOENT)
		return ts_error_set(err, 0,
				    "%s: '%s': no memory node of "
				    "tier '%s' on this machine",
				    p->file, FIELD(p->req, tier_field, "memory-tier"),
				    ts_memory_tier_to_string(tier));
	if (r < 0)
		return ts_error_set(err, 0,
				    "%s: '/linux/resources/cpu/cpus': no online cpu in '%s'",
				    p->file, list_of(cpus, buf, sizeof(buf)));
	mems_reasons(p, cpus);
	if (tier != TS_MEMORY_TIER_DRAM)
		reason(p, "memory tier %s: mems %s", ts_memory_tier_to_string(tier),
		       list_of(mems, buf, sizeof(buf)));
	*ret = TAKE_PTR(mems);
	return 0;
}

static int take_into(struct placer *p, hwloc_const_bitmap_t scope, hwloc_bitmap_t *ret,
		     struct ts_error **err);

/* PUs of the preferred CPU kind, or NULL when the machine has no kinds to
 * choose from. */
static hwloc_const_bitmap_t kind_cpus(struct placer *p)
{
	if (p->cls->cpu_kind == TS_PLACEMENT_KIND_PERFORMANCE && !hwloc_bitmap_iszero(p->perf))
		return p->perf;
	if (p->cls->cpu_kind == TS_PLACEMENT_KIND_EFFICIENCY && !hwloc_bitmap_iszero(p->eff))
		return p->eff;
	return NULL;
}

/* Exclusive PUs from scope: device-local NUMA nodes first, else the class's
 * CPU kind first; the allocator's steps become reasons. */
static int take_into(struct placer *p, hwloc_const_bitmap_t scope, hwloc_bitmap_t *ret,
		     struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	struct ts_placement_take_opts opts = {
		.align_l3 = p->cfg->align_l3,
		.full_cores_only = p->cfg->full_cores_only,
		.distribute_across_numa = p->cfg->distribute_across_numa,
		.align_by_socket = p->cfg->align_by_socket,
		.spread = p->cfg->distribute_across_cores,
	};
	cleanup_hwloc_bitmap hwloc_bitmap_t pref = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
	cleanup_strv char **steps = NULL;
	hwloc_const_bitmap_t kind = kind_cpus(p);
	char buf[256];
	int r;

	if (pref == NULL || nodes == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	hwloc_bitmap_and(pref, p->device_cpus, scope);
	if (!hwloc_bitmap_iszero(pref)) {
		ts_topology_numa_of_cpus(p->topo, pref, nodes);
		reason(p, "prefer %snuma nodes %s (local to the requested devices)",
		       p->cfg->align_by_socket ? "the packages of " : "",
		       list_of(nodes, buf, sizeof(buf)));
	} else if (kind != NULL && hwloc_bitmap_intersects(kind, scope)) {
		hwloc_bitmap_copy(pref, kind);
		reason(p, "prefer %s cores: cpus %s",
		       p->cls->cpu_kind == TS_PLACEMENT_KIND_PERFORMANCE ? "performance"
									 : "efficiency",
		       list_of(kind, buf, sizeof(buf)));
	}
	r = ts_placement_take(p->topo, scope, req->cpus, hwloc_bitmap_iszero(pref) ? NULL : pref,
			      &opts, ret, &steps, err);
	if (r < 0)
		return ts_error_prefix(err, "%s: '%s'", p->file, FIELD(p->req, cpus_field, "cpus"));
	for (size_t i = 0; steps[i] != NULL; i++)
		reason(p, "%s", steps[i]);
	return 0;
}

/* "node 3" or "cpus 4-7 (no numa node)". */
static const char *domain_name(const struct ts_cpu_group *g, char *buf, size_t len)
{
	char list[200];

	if (g->placeholder)
		snprintf(buf, len, "cpus %s (no numa node)", list_of(g->cpus, list, sizeof(list)));
	else
		snprintf(buf, len, "node %d", g->numa_node);
	return buf;
}

/* What one NUMA domain offers a request: its usable free PUs and the
 * preferences that order the domains that can hold it. */
struct offer {
	int free;
	bool local, kind_fits, own_memory;
};

static void offer_of(struct placer *p, const struct ts_cpu_group *g, unsigned n, hwloc_bitmap_t tmp,
		     struct offer *o)
{
	hwloc_const_bitmap_t kind = kind_cpus(p);

	hwloc_bitmap_and(tmp, g->cpus, p->free_cores != NULL ? p->free_cores : p->avail);
	o->free = hwloc_bitmap_weight(tmp);
	o->local = hwloc_bitmap_intersects(g->cpus, p->device_cpus);
	o->own_memory = strcmp(g->mems_how, "local") == 0;
	if (kind != NULL) {
		hwloc_bitmap_and(tmp, tmp, kind);
		o->kind_fits = (unsigned)hwloc_bitmap_weight(tmp) >= n;
	}
}

/* Whether offer a beats the best so far: device-local, then enough PUs of
 * the class's kind, then memory of its own, then the fullest (fewest free:
 * whole domains stay free), then the lowest PU. */
static bool better(const struct offer *a, const struct offer *best)
{
	if (a->local != best->local)
		return a->local;
	if (a->kind_fits != best->kind_fits)
		return a->kind_fits;
	if (a->own_memory != best->own_memory)
		return a->own_memory;
	return a->free < best->free;
}

/* The NUMA domain that holds a request of n PUs (whole: a wholly free
 * domain of at least n PUs), or -ENOSPC. */
static int pick_domain(struct placer *p, unsigned n, bool whole, const struct ts_cpu_group **ret)
{
	const struct ts_topology *t = p->topo;
	cleanup_hwloc_bitmap hwloc_bitmap_t tmp = hwloc_bitmap_alloc();
	const struct ts_cpu_group *best = NULL;
	struct offer best_offer = {0};

	if (tmp == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++) {
		const struct ts_cpu_group *g = &t->groups[TS_CPU_LEVEL_NUMA][i];
		struct offer o = {0};

		if (whole && !hwloc_bitmap_isincluded(g->cpus, p->avail))
			continue;
		offer_of(p, g, n, tmp, &o);
		if (o.free == 0 || (unsigned)o.free < n)
			continue;
		if (best == NULL || better(&o, &best_offer)) {
			best = g;
			best_offer = o;
		}
	}
	if (best == NULL)
		return -ENOSPC;
	*ret = best;
	return 0;
}

/* Why a domain was picked, for the reasons. */
static const char *pick_why(struct placer *p, const struct ts_cpu_group *g)
{
	if (hwloc_bitmap_intersects(g->cpus, p->device_cpus))
		return "local to the requested devices";
	return "fullest node that fits";
}

static int place_numa(struct placer *p, bool whole, hwloc_bitmap_t *ret, struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	const char *what = whole ? "exclusive" : "single";
	const struct ts_cpu_group *g;
	char buf[256], name[256];
	int r = pick_domain(p, req->cpus, whole, &g);

	if (r == -ENOMEM)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	if (r < 0 && whole && req->cpus == 0)
		return ts_error_set_plain(err, ENOSPC,
					  "%s: '%s': no numa node is wholly free "
					  "for 'exclusive'",
					  p->file, FIELD(p->req, numa_field, "numa"));
	if (r < 0 && whole)
		return ts_error_set_plain(err, ENOSPC,
					  "%s: '%s': no wholly free numa node has "
					  "%u cpus for 'exclusive'",
					  p->file, FIELD(p->req, numa_field, "numa"), req->cpus);
	if (r < 0)
		return ts_error_set_plain(err, ENOSPC,
					  "%s: '%s': no numa node has %u free cpus "
					  "for 'single'",
					  p->file, FIELD(p->req, numa_field, "numa"), req->cpus);
	reason(p, "numa %s: %s (%s)", what, domain_name(g, name, sizeof(name)), pick_why(p, g));
	if (whole) {
		*ret = hwloc_bitmap_dup(g->cpus);
		if (*ret == NULL)
			return ts_error_set(err, ENOMEM, "placement: out of memory");
		reason(p, "whole numa %s: cpus %s", domain_name(g, name, sizeof(name)),
		       list_of(g->cpus, buf, sizeof(buf)));
		return 0;
	}
	cleanup_hwloc_bitmap hwloc_bitmap_t scope = hwloc_bitmap_alloc();
	if (scope == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	hwloc_bitmap_and(scope, g->cpus, p->avail);
	return take_into(p, scope, ret, err);
}

/* The default: one NUMA domain whenever one can hold the request (the
 * kubelet's and nri's preference), across domains only when none can, or
 * when the requested devices sit on several (the kubelet's merged hint). */
static int place_prefer(struct placer *p, hwloc_bitmap_t *ret, struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	const struct ts_cpu_group *g = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
	char buf[256], name[256];
	int r;

	if (nodes == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	if (p->n_device_domains > 1) {
		ts_topology_numa_of_cpus(p->topo, p->device_cpus, nodes);
		reason(p,
		       "numa prefer: the requested devices are on numa nodes %s: cpus from "
		       "them first",
		       list_of(nodes, buf, sizeof(buf)));
		return take_into(p, p->avail, ret, err);
	}
	r = pick_domain(p, req->cpus, false, &g);
	if (r == -ENOMEM)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	if (r == 0) {
		cleanup_hwloc_bitmap hwloc_bitmap_t scope = hwloc_bitmap_alloc();

		if (scope == NULL)
			return ts_error_set(err, ENOMEM, "placement: out of memory");
		reason(p, "numa prefer: %s (%s)", domain_name(g, name, sizeof(name)),
		       pick_why(p, g));
		hwloc_bitmap_and(scope, g->cpus, p->avail);
		return take_into(p, scope, ret, err);
	}
	r = take_into(p, p->avail, ret, err);
	if (r < 0)
		return r;
	ts_topology_numa_of_cpus(p->topo, *ret, nodes);
	reason(p, "numa prefer: no numa node has %u free cpus: across numa nodes %s", req->cpus,
	       list_of(nodes, buf, sizeof(buf)));
	return 0;
}

/* "container 'a'", "containers 'a', 'b'" or "containers 'a', 'b', 'c' and
 * 2 more": the allocations holding any of the cpus held. */
static void held_by(const struct placer *p, hwloc_const_bitmap_t held, char *buf, size_t len)
{
	size_t n = 0, named = 0, at;

	for (size_t i = 0; i < p->nallocs; i++)
		n += alloc_holds_cpus(&p->allocs[i]) &&
		     hwloc_bitmap_intersects(p->allocs[i].cpus, held);
	at = (size_t)snprintf(buf, len, "container%s", n == 1 ? "" : "s");
	for (size_t i = 0; i < p->nallocs && named < 3 && at < len; i++) {
		const struct ts_allocation *a = &p->allocs[i];

		if (!alloc_holds_cpus(a) || !hwloc_bitmap_intersects(a->cpus, held))
			continue;
		at += (size_t)snprintf(buf + at, len - at, "%s '%s'", named > 0 ? "," : "",
				       a->container_id != NULL ? a->container_id : "");
		named++;
	}
	if (n > named && at < len)
		snprintf(buf + at, len - at, " and %zu more", n - named);
}

/* The node's online cpus outside the reserved ones (NULL: out of memory):
 * what an exclusive request could ever have, other containers and the
 * cgroup parent aside. */
static hwloc_bitmap_t node_room(const struct placer *p)
{
	hwloc_bitmap_t room = hwloc_bitmap_dup(p->topo->online);

	if (room != NULL)
		hwloc_bitmap_andnot(room, room, p->reserved);
	return room;
}

/* Refuse a count the free cpus cannot hold when other containers are why:
 * the room the request has without them (online, not reserved, inside the
 * cgroup parent) would hold it.  The message names them, not the parent
 * (whose cpuset is not the limit then).  0 when they are not why. */
static int refuse_held(struct placer *p, struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	cleanup_hwloc_bitmap hwloc_bitmap_t room = node_room(p);
	char list[256], who[512], parent[320] = "";

	if (room == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	if (req->parent_cpus != NULL)
		hwloc_bitmap_and(room, room, req->parent_cpus);
	if ((unsigned)hwloc_bitmap_weight(room) < req->cpus)
		return 0;
	/* what is left of it: the cpus others hold */
	hwloc_bitmap_andnot(room, room, p->avail);
	held_by(p, room, who, sizeof(who));
	if (req->parent_cpus != NULL && req->parent_name != NULL)
		snprintf(parent, sizeof(parent), " of cgroup parent %s", req->parent_name);
	return ts_error_set_plain(err, ENOSPC,
				  "%s: '%s': not enough cpus available to satisfy request: "
				  "requested=%u, available=%d: cpus %s%s held by %s",
				  p->file, FIELD(req, cpus_field, "cpus"), req->cpus,
				  hwloc_bitmap_weight(p->avail), list_of(room, list, sizeof(list)),
				  parent, who);
}

/* Refuse, with a cgroup parent, a count larger than the node's cpus
 * outside the reserved ones: neither the parent nor another container is
 * why, the request is (helper-16: toposhim.io/cpus=65535 named the
 * parent's cpuset).  Without a parent the kubelet's refusal (take.c)
 * says so already.  0 when it fits. */
static int refuse_beyond_node(struct placer *p, struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	cleanup_hwloc_bitmap hwloc_bitmap_t room = NULL;
	char list[256];
	int n;

	if (req->parent_cpus == NULL)
		return 0;
	room = node_room(p);
	if (room == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	n = hwloc_bitmap_weight(room);
	if (n < 0 || (unsigned)n >= req->cpus)
		return 0;
	/* "outside the reserved ones" only when some are (helper-21 read
	 * "2 cpus outside the reserved ones (0-1)" with none reserved) */
	return ts_error_set_plain(
		err, ENOSPC,
		"%s: '%s': not enough cpus available to satisfy request: "
		"requested=%u, available=%d: the node has %d cpus%s (%s)",
		p->file, FIELD(req, cpus_field, "cpus"), req->cpus, hwloc_bitmap_weight(p->avail),
		n, hwloc_bitmap_iszero(p->reserved) ? "" : " outside the reserved ones",
		n == 0 ? "none" : list_of(room, list, sizeof(list)));
}

static int place_exclusive(struct placer *p, hwloc_bitmap_t *ret, struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	int r;

	if (req->numa == TS_PLACEMENT_NUMA_EXCLUSIVE)
		return place_numa(p, true, ret, err);
	if (req->cpus > 0 && (unsigned)hwloc_bitmap_weight(p->avail) < req->cpus) {
		r = refuse_beyond_node(p, err);
		if (r < 0)
			return r;
		r = refuse_held(p, err);
		if (r < 0)
			return r;
	}
	/* the parent itself is the limit */
	if (req->cpus > 0 && req->parent_cpus != NULL &&
	    (unsigned)hwloc_bitmap_weight(p->avail) < req->cpus) {
		char buf[256];

		return ts_error_set_plain(
			err, ENOSPC,
			"%s: '/linux/cgroupsPath': cgroup parent %s cannot hold %u "
			"exclusive cpus (free in it: %s)",
			p->file, req->parent_name, req->cpus,
			hwloc_bitmap_iszero(p->avail) ? "none"
						      : list_of(p->avail, buf, sizeof(buf)));
	}
	/* the class is what asks (helper-20: a pod with a class and no count
	 * was told of a toposhim.io/cpus annotation it never set) */
	if (req->cpus == 0)
		return ts_error_set(err, 0,
				    "%s: '%s': class '%s' needs a cpu count "
				    "(toposhim.io/cpus or an integer cpu limit)",
				    p->file,
				    p->req->cpus_field != NULL
					    ? p->req->cpus_field
					    : FIELD(p->req, class_field, "class"),
				    p->cls->name);
	if (req->numa == TS_PLACEMENT_NUMA_SINGLE)
		r = place_numa(p, false, ret, err);
	else
		r = place_prefer(p, ret, err);
	if (r == 0 && (unsigned)hwloc_bitmap_weight(*ret) != req->cpus) {
		int got = hwloc_bitmap_weight(*ret);

		hwloc_bitmap_free(*ret);
		*ret = NULL;
		return ts_error_set(err, EIO, "%s: '%s': placement found %d of %u cpus", p->file,
				    FIELD(p->req, cpus_field, "cpus"), got, req->cpus);
	}
	return r;
}

int ts_placement_pool_cpus(const struct ts_placement_config *cfg, const struct ts_topology *topo,
			   hwloc_const_bitmap_t pool, const char *class_name, hwloc_bitmap_t *ret,
			   struct ts_error **err)
{
	const struct ts_placement_class *cls = ts_placement_config_class(cfg, class_name);
	cleanup_hwloc_bitmap hwloc_bitmap_t perf = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t eff = hwloc_bitmap_alloc();
	hwloc_bitmap_t cpus = hwloc_bitmap_dup(pool);

	if (cpus == NULL || perf == NULL || eff == NULL) {
		if (cpus != NULL)
			hwloc_bitmap_free(cpus);
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	if (cls != NULL && cls->cpu_kind != TS_PLACEMENT_KIND_ANY &&
	    ts_topology_kinds_split(topo, cfg->performance_threshold, perf, eff)) {
		hwloc_const_bitmap_t kind =
			cls->cpu_kind == TS_PLACEMENT_KIND_PERFORMANCE ? perf : eff;

		if (hwloc_bitmap_intersects(cpus, kind))
			hwloc_bitmap_and(cpus, cpus, kind);
	}
	*ret = cpus;
	return 0;
}

static int place_pooled(struct placer *p, hwloc_const_bitmap_t pool, hwloc_bitmap_t *ret,
			struct ts_error **err)
{
	hwloc_bitmap_t cpus;
	char buf[256];

	if (p->req->cpus_annotated)
		warn(p,
		     "%s: '%s': %u cpus ignored: class '%s' runs on the %s "
		     "pool",
		     p->file, FIELD(p->req, cpus_field, "cpus"), p->req->cpus, p->cls->name,
		     p->cls->pool == TS_PLACEMENT_POOL_RESERVED ? "reserved" : "shared");
	if (p->cls->pool == TS_PLACEMENT_POOL_RESERVED) {
		if (hwloc_bitmap_iszero(p->reserved))
			return ts_error_set(err, 0,
					    "%s: '%s': class '%s' uses the "
					    "reserved pool, but no cpus are reserved",
					    p->file, FIELD(p->req, class_field, "class"),
					    p->cls->name);
		cpus = hwloc_bitmap_dup(p->reserved);
	} else {
		/* what the resize of the pool gives it later too */
		int r = ts_placement_pool_cpus(p->cfg, p->topo, pool, p->cls->name, &cpus, err);

		if (r < 0)
			return r;
		if (!hwloc_bitmap_isequal(cpus, pool))
			reason(p, "prefer %s cores of the shared pool",
			       p->cls->cpu_kind == TS_PLACEMENT_KIND_PERFORMANCE ? "performance"
										 : "efficiency");
	}
	if (cpus == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	if (p->req->parent_cpus != NULL && !hwloc_bitmap_iszero(cpus) &&
	    !hwloc_bitmap_isincluded(cpus, p->req->parent_cpus)) {
		char from[256];

		list_of(cpus, from, sizeof(from));
		hwloc_bitmap_and(cpus, cpus, p->req->parent_cpus);
		if (hwloc_bitmap_iszero(cpus)) {
			/* all the parent allows is held exclusively: run there anyway,
			 * as the runtime alone would */
			hwloc_bitmap_copy(cpus, p->req->parent_cpus);
			warn(p,
			     "%s: '/linux/cgroupsPath': the %s pool (cpus %s) lies outside "
			     "cgroup parent %s: running on the parent's cpus",
			     p->file, ts_placement_pool_to_string(p->cls->pool), from,
			     p->req->parent_name);
		} else {
			reason(p, "the %s pool (cpus %s) clipped to cgroup parent %s",
			       ts_placement_pool_to_string(p->cls->pool), from,
			       p->req->parent_name);
		}
	}
	if (hwloc_bitmap_iszero(cpus)) {
		hwloc_bitmap_free(cpus);
		/* no class asked for: no annotation to name (helper-19) */
		if (p->req->class_field == NULL)
			return ts_error_set_plain(
				err, ENOSPC,
				"%s: the %s pool of class '%s' (no class requested) is empty: "
				"'/placement/reserved' of the toposhim config and the exclusive "
				"cpus "
				"held leave it none",
				p->file, ts_placement_pool_to_string(p->cls->pool), p->cls->name);
		return ts_error_set_plain(err, ENOSPC, "%s: '%s': the %s pool is empty", p->file,
					  p->req->class_field,
					  ts_placement_pool_to_string(p->cls->pool));
	}
	reason(p, "%s pool: cpus %s", ts_placement_pool_to_string(p->cls->pool),
	       list_of(cpus, buf, sizeof(buf)));
	*ret = cpus;
	return 0;
}

static int place_pinned(struct placer *p, hwloc_bitmap_t *ret, struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	char buf[256];

	if (!hwloc_bitmap_isincluded(req->user_cpus, p->topo->online))
		return ts_placement_not_online(p->file, "/linux/resources/cpu/cpus", req->user_cpus,
					       p->topo->online, err);
	*ret = hwloc_bitmap_dup(req->user_cpus);
	if (*ret == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	reason(p, "pinned: cpus %s given in config.json are honoured",
	       list_of(req->user_cpus, buf, sizeof(buf)));
	/* a count asked for is not what it gets: said, as on a shared class
	 * (helper-16: critical with cpus=1 and podman's --cpuset-cpus 0 ran
	 * pinned on 0 without a word; helper-17: a Guaranteed container's
	 * count from its quota, with the cpuset kubelet's static CPU manager
	 * gives, the same).  A quota's count on a class of the shared pool
	 * asks for nothing (helper-18: a Burstable container was told) */
	if (req->cpus_annotated ||
	    (req->cpus > 0 && p->cls != NULL && p->cls->pool == TS_PLACEMENT_POOL_EXCLUSIVE))
		warn(p,
		     "%s: '%s': %u cpus ignored: the cpus %s in '/linux/resources/cpu/cpus' "
		     "are kept, pinned",
		     p->file, FIELD(req, cpus_field, "cpus"), req->cpus,
		     list_of(req->user_cpus, buf, sizeof(buf)));
	/* honoured, but the exclusive containers it lands on should be known */
	for (size_t i = 0; i < p->nallocs; i++) {
		const struct ts_allocation *a = &p->allocs[i];
		cleanup_hwloc_bitmap hwloc_bitmap_t both = NULL;

		if (a->cpus == NULL || !alloc_is_exclusive(a) ||
		    !hwloc_bitmap_intersects(a->cpus, req->user_cpus))
			continue;
		both = hwloc_bitmap_alloc();
		if (both == NULL)
			return ts_error_set(err, ENOMEM, "placement: out of memory");
		hwloc_bitmap_and(both, a->cpus, req->user_cpus);
		warn(p,
		     "%s: '/linux/resources/cpu/cpus': pinned cpus %s overlap the exclusive cpus "
		     "of "
		     "container '%s'",
		     p->file, list_of(both, buf, sizeof(buf)),
		     a->container_id != NULL ? a->container_id : "");
	}
	return 0;
}

/* Explicit mems must name NUMA nodes that have memory. */
static int check_user_mems(struct placer *p, struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t bad = hwloc_bitmap_dup(p->req->user_mems);
	char buf[256];

	if (bad == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	for (size_t i = 0; i < p->topo->n_numa_nodes; i++)
		if (p->topo->numa_nodes[i].has_memory)
			hwloc_bitmap_clr(bad, p->topo->numa_nodes[i].os_index);
	if (hwloc_bitmap_iszero(bad))
		return 0;
	return ts_error_set(err, 0,
			    "%s: '/linux/resources/cpu/mems': no memory node '%s' on this machine",
			    p->file, list_of(bad, buf, sizeof(buf)));
}

/* Two runtime roots are the same root (NULL only equals NULL). */
static bool same_root(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

static int copy_existing(const struct ts_allocation *a, struct ts_placement_result *res)
{
	struct ts_strv rs = {0};
	char *line = NULL;

	res->existing = true;
	res->pool = a->pool;
	res->class_name = strdup(a->class_name != NULL ? a->class_name : "");
	res->cpus = hwloc_bitmap_dup(a->cpus);
	res->mems = a->mems != NULL ? hwloc_bitmap_dup(a->mems) : hwloc_bitmap_alloc();
	if (asprintf(&line, "existing allocation of '%s' kept", a->container_id) < 0)
		line = NULL;
	if (ts_strv_push(&rs, line) < 0)
		return -ENOMEM;
	res->reasons = ts_strv_take(&rs);
	res->affected = calloc(1, sizeof(char *));
	if (res->class_name == NULL || res->cpus == NULL || res->mems == NULL ||
	    res->reasons == NULL || res->affected == NULL)
		return -ENOMEM;
	return 0;
}

static int affected_ids(const struct ts_allocation *allocs, size_t n, hwloc_const_bitmap_t taken,
			char ***ret)
{
	struct ts_strv sv = {0};

	for (size_t i = 0; taken != NULL && i < n; i++) {
		const struct ts_allocation *a = &allocs[i];
		if (a->pool != TS_PLACEMENT_POOL_SHARED || a->cpus == NULL ||
		    !hwloc_bitmap_intersects(a->cpus, taken))
			continue;
		if (ts_strv_push(&sv, strdup(a->container_id)) < 0) {
			ts_strv_release(&sv);
			return -ENOMEM;
		}
	}
	*ret = ts_strv_take(&sv);
	return *ret == NULL ? -ENOMEM : 0;
}

static int decide(struct placer *p, hwloc_bitmap_t pool, struct ts_placement_result *res,
		  struct ts_error **err)
{
	const struct ts_placement_request *req = p->req;
	int r;

	if (req->user_cpus != NULL && !p->cfg->manage_all) {
		res->pool = TS_PLACEMENT_POOL_PINNED;
		return place_pinned(p, &res->cpus, err);
	}
	if (req->numa == TS_PLACEMENT_NUMA_EXCLUSIVE)
		res->pool = TS_PLACEMENT_POOL_NUMA_EXCLUSIVE;
	else
		res->pool = p->cls->pool;
	if (res->pool == TS_PLACEMENT_POOL_SHARED || res->pool == TS_PLACEMENT_POOL_RESERVED)
		return place_pooled(p, pool, &res->cpus, err);
	r = place_exclusive(p, &res->cpus, err);
	if (r < 0)
		return r;
	hwloc_bitmap_andnot(pool, pool, res->cpus);
	if (hwloc_bitmap_iszero(pool)) {
		char buf[256];
		return ts_error_set_plain(err, ENOSPC,
					  "%s: '%s': taking cpus %s would leave the "
					  "shared pool empty",
					  p->file,
					  /* a whole node's cpus come from the numa
					   * request, not the count (helper-17) */
					  res->pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE
						  ? FIELD(p->req, numa_field, "numa")
						  : FIELD(p->req, cpus_field, "cpus"),
					  list_of(res->cpus, buf, sizeof(buf)));
	}
	return 0;
}

/* The name of the device behind a NUMA node of the request, for messages. */
static const char *device_on(const struct ts_placement_request *req, unsigned node)
{
	for (size_t i = 0; req->device_nodes != NULL && i < req->n_devices; i++)
		if (req->device_nodes[i] == (int)node)
			return req->devices[i];
	return NULL;
}

/* The NUMA domains local to the requested devices: a node that owns PUs
 * gives its own; a memory-only node (a device whose sysfs numa_node is a
 * CPU-less node: CXL memory, GPU memory) the domains of the cpus near it;
 * a node that is not on this machine nothing, with a warning. */
static int resolve_devices(struct placer *p)
{
	const struct ts_topology *t = p->topo;
	cleanup_hwloc_bitmap hwloc_bitmap_t near = hwloc_bitmap_alloc();
	char buf[256], list[256];
	unsigned node;

	p->device_cpus = hwloc_bitmap_alloc();
	if (near == NULL || p->device_cpus == NULL)
		return -ENOMEM;
	hwloc_bitmap_foreach_begin(node, p->req->device_numa)
		{
			const struct ts_numa_node *n = ts_topology_numa_node(t, node);
			const char *dev = device_on(p->req, node);

			if (dev != NULL)
				snprintf(buf, sizeof(buf), "device '%s'", dev);
			else
				snprintf(buf, sizeof(buf), "a requested device");
			if (n == NULL) {
				warn(p,
				     "%s: %s is on numa node %u, which this machine does not have: "
				     "no numa hint",
				     p->file, buf, node);
				continue;
			}
			if (!n->memory_only) {
				hwloc_bitmap_or(p->device_cpus, p->device_cpus, n->cpus);
				continue;
			}
			hwloc_bitmap_zero(near);
			for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++)
				if (hwloc_bitmap_intersects(t->groups[TS_CPU_LEVEL_NUMA][i].cpus,
							    n->local_cpus))
					hwloc_bitmap_or(near, near,
							t->groups[TS_CPU_LEVEL_NUMA][i].cpus);
			if (hwloc_bitmap_iszero(near)) {
				warn(p,
				     "%s: %s is on numa node %u, which has memory only and no cpus "
				     "near it: no numa hint",
				     p->file, buf, node);
				continue;
			}
			reason(p, "%s is on memory-only numa node %u: prefer the cpus near it, %s",
			       buf, node, list_of(near, list, sizeof(list)));
			hwloc_bitmap_or(p->device_cpus, p->device_cpus, near);
		}
	hwloc_bitmap_foreach_end();
	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++)
		p->n_device_domains += hwloc_bitmap_intersects(t->groups[TS_CPU_LEVEL_NUMA][i].cpus,
							       p->device_cpus);
	return p->oom ? -ENOMEM : 0;
}

/* The PUs of avail that form whole free cores. */
static int whole_free_cores(struct placer *p)
{
	const struct ts_topology *t = p->topo;

	p->free_cores = hwloc_bitmap_alloc();
	if (p->free_cores == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_CORE]; i++)
		if (hwloc_bitmap_isincluded(t->groups[TS_CPU_LEVEL_CORE][i].cpus, p->avail))
			hwloc_bitmap_or(p->free_cores, p->free_cores,
					t->groups[TS_CPU_LEVEL_CORE][i].cpus);
	return 0;
}

static int placer_init(struct placer *p, hwloc_bitmap_t *ret_pool, struct ts_error **err)
{
	int r = ts_placement_reserved(p->cfg, p->topo, &p->reserved, err);

	if (r < 0)
		return r;
	r = ts_placement_shared_pool(p->cfg, p->topo, p->allocs, p->nallocs, ret_pool, err);
	if (r < 0)
		return r;
	p->avail = hwloc_bitmap_dup(p->topo->online);
	p->perf = hwloc_bitmap_alloc();
	p->eff = hwloc_bitmap_alloc();
	if (p->avail == NULL || p->perf == NULL || p->eff == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	hwloc_bitmap_andnot(p->avail, p->avail, p->reserved);
	if (p->req->parent_cpus != NULL)
		hwloc_bitmap_and(p->avail, p->avail, p->req->parent_cpus);
	for (size_t i = 0; i < p->nallocs; i++)
		if (alloc_holds_cpus(&p->allocs[i]))
			hwloc_bitmap_andnot(p->avail, p->avail, p->allocs[i].cpus);
	(void)ts_topology_kinds_split(p->topo, p->cfg->performance_threshold, p->perf, p->eff);
	if ((p->cfg->full_cores_only && whole_free_cores(p) < 0) || resolve_devices(p) < 0)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	return 0;
}

static void placer_release(struct placer *p)
{
	ts_strv_release(&p->reasons);
	ts_strv_release(&p->warnings);
	ts_hwloc_bitmap_freep(&p->reserved);
	ts_hwloc_bitmap_freep(&p->avail);
	ts_hwloc_bitmap_freep(&p->free_cores);
	ts_hwloc_bitmap_freep(&p->perf);
	ts_hwloc_bitmap_freep(&p->eff);
	ts_hwloc_bitmap_freep(&p->device_cpus);
}

int ts_placement_place(const struct ts_placement_config *cfg, const struct ts_topology *topo,
		       const struct ts_allocation *allocs, size_t nallocs,
		       const struct ts_placement_request *req, struct ts_placement_result *ret,
		       struct ts_error **err)
{
	struct placer p = {
		.cfg = cfg,
		.topo = topo,
		.allocs = allocs,
		.nallocs = nallocs,
		.req = req,
		.file = req->config_name != NULL ? req->config_name : "config.json",
	};
	struct ts_placement_result res = {0};
	cleanup_hwloc_bitmap hwloc_bitmap_t pool = NULL;
	char buf[256];
	int r;

	for (size_t i = 0; req->container_id != NULL && i < nallocs; i++) {
		if (allocs[i].container_id == NULL ||
		    strcmp(allocs[i].container_id, req->container_id) != 0 ||
		    !same_root(allocs[i].runtime_root, req->runtime_root))
			continue;
		r = copy_existing(&allocs[i], &res);
		if (r == 0)
			r = ts_placement_shared_pool(cfg, topo, allocs, nallocs, &res.shared_pool,
						     err);
		else
			r = ts_error_set(err, ENOMEM, "placement: out of memory");
		if (r < 0) {
			ts_placement_result_release(&res);
			return r;
		}
		*ret = res;
		return 0;
	}
	p.cls = ts_placement_config_class(cfg, req->class_name);
	if (p.cls == NULL)
		return ts_error_set(err, 0, "%s: '%s': unknown class '%s'", p.file,
				    FIELD(p.req, class_field, "class"),
				    req->class_name != NULL ? req->class_name : "");
	reason(&p, "class %s%s", p.cls->name,
	       req->class_derived ? " (derived from the cpu limit and request)" : "");
	r = placer_init(&p, &pool, err);
	if (r == 0)
		r = decide(&p, pool, &res, err);
	if (r == 0)
		r = compute_mems(&p, res.cpus, &res.mems, err);
	if (r == 0 && req->parent_mems != NULL && !hwloc_bitmap_iszero(req->parent_mems) &&
	    !hwloc_bitmap_isincluded(res.mems, req->parent_mems)) {
		hwloc_bitmap_and(res.mems, res.mems, req->parent_mems);
		if (hwloc_bitmap_iszero(res.mems))
			hwloc_bitmap_copy(res.mems, req->parent_mems);
		reason(&p, "mems clipped to cgroup parent %s", req->parent_name);
	}
	/* explicit mems (podman --cpuset-mems) are honoured like explicit cpus,
	 * when every node exists and has memory: the kernel would refuse the
	 * cpuset.mems write later, with a message naming no field */
	if (r == 0 && req->user_mems != NULL && !p.cfg->manage_all)
		r = check_user_mems(&p, err);
	if (r == 0 && req->user_mems != NULL && !p.cfg->manage_all) {
		hwloc_bitmap_copy(res.mems, req->user_mems);
		reason(&p, "mems %s given in config.json are honoured",
		       list_of(req->user_mems, buf, sizeof(buf)));
	}
	if (r == 0) {
		reason(&p, "mems %s", list_of(res.mems, buf, sizeof(buf)));
		res.class_name = strdup(p.cls->name);
		res.shared_pool = TAKE_PTR(pool);
		if (res.class_name == NULL || res.shared_pool == NULL || p.oom ||
		    affected_ids(allocs, nallocs,
				 res.pool == TS_PLACEMENT_POOL_SHARED ||
						 res.pool == TS_PLACEMENT_POOL_PINNED ||
						 res.pool == TS_PLACEMENT_POOL_RESERVED
					 ? NULL
					 : res.cpus,
				 &res.affected) < 0)
			r = ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	if (r == 0 && (res.reasons = ts_strv_take(&p.reasons)) == NULL)
		r = ts_error_set(err, ENOMEM, "placement: out of memory");
	if (r == 0 && (res.warnings = ts_strv_take(&p.warnings)) == NULL)
		r = ts_error_set(err, ENOMEM, "placement: out of memory");
	placer_release(&p);
	if (r < 0) {
		ts_placement_result_release(&res);
		return r;
	}
	*ret = res;
	return 0;
}
