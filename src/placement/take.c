/* take.c - the exclusive CPU allocator in the kubelet's order. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/internal.h"
#include "util/cleanup.h"

enum { LVL_PACKAGE, LVL_NUMA, LVL_L3, LVL_CORE };

struct domain {
	unsigned id;	     /* OS index (logical index for caches) */
	hwloc_bitmap_t cpus; /* online PUs */
};

struct level {
	int kind;
	struct domain *doms;
	size_t n;
};

struct ctx {
	const struct ts_topology *topo;
	const struct ts_placement_take_opts *opts;
	hwloc_bitmap_t avail; /* what may still be taken */
	hwloc_bitmap_t result;
	unsigned need;
	struct level levels[4]; /* domain levels, biggest first, cores last */
	int nlevels;		/* including the core level */
	hwloc_bitmap_t tmp;
	hwloc_bitmap_t took_cores, took_pus;
	struct ts_strv steps;
	bool oom;
};

static const char *const level_names[] = {
	[LVL_PACKAGE] = "package",
	[LVL_NUMA] = "numa node",
	[LVL_L3] = "l3 group",
	[LVL_CORE] = "core",
};

static void level_free(struct level *l)
{
	for (size_t i = 0; i < l->n; i++)
		hwloc_bitmap_free(l->doms[i].cpus);
	free(l->doms);
	l->doms = NULL;
	l->n = 0;
}

static int level_add(struct ctx *c, struct level *l, unsigned id, hwloc_const_bitmap_t cpus)
{
	struct domain *d = realloc(l->doms, (l->n + 1) * sizeof(*d));

	if (d == NULL)
		return -ENOMEM;
	l->doms = d;
	d[l->n].id = id;
	d[l->n].cpus = hwloc_bitmap_alloc();
	if (d[l->n].cpus == NULL)
		return -ENOMEM;
	hwloc_bitmap_and(d[l->n].cpus, cpus, c->topo->online);
	if (hwloc_bitmap_iszero(d[l->n].cpus)) {
		hwloc_bitmap_free(d[l->n].cpus);
		return 0;
	}
	l->n++;
	return 0;
}

static int build_type_level(struct ctx *c, struct level *l, int kind, hwloc_obj_type_t type)
{
	hwloc_obj_t o = NULL;

	l->kind = kind;
	while ((o = hwloc_get_next_obj_by_type(c->topo->hwloc, type, o)) != NULL) {
		unsigned id = type == HWLOC_OBJ_L3CACHE ? o->logical_index : o->os_index;
		if (level_add(c, l, id, o->cpuset) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Cores, plus PUs that sit under no core (single-PU pseudo-cores). */
static int build_core_level(struct ctx *c, struct level *l)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t covered = hwloc_bitmap_alloc();
	int r;

	if (covered == NULL)
		return -ENOMEM;
	r = build_type_level(c, l, LVL_CORE, HWLOC_OBJ_CORE);
	if (r < 0)
		return r;
	for (size_t i = 0; i < l->n; i++)
		hwloc_bitmap_or(covered, covered, l->doms[i].cpus);
	unsigned pu;
	hwloc_bitmap_foreach_begin(pu, c->topo->online)
		{
			if (hwloc_bitmap_isset(covered, pu))
				continue;
			hwloc_bitmap_only(c->tmp, pu);
			if (level_add(c, l, pu, c->tmp) < 0)
				return -ENOMEM;
		}
	hwloc_bitmap_foreach_end();
	return 0;
}

static int build_levels(struct ctx *c)
{
	struct level dom[3] = {{0}};
	int nd = 0, r = 0;

	r = build_type_level(c, &dom[nd++], LVL_PACKAGE, HWLOC_OBJ_PACKAGE);
	if (r == 0) {
		dom[nd].kind = LVL_NUMA;
		for (size_t i = 0; i < c->topo->n_numa_nodes && r == 0; i++)
			if (!c->topo->numa_nodes[i].memory_only)
				r = level_add(c, &dom[nd], c->topo->numa_nodes[i].os_index,
					      c->topo->numa_nodes[i].cpus);
		nd++;
	}
	if (r == 0 && c->opts->align_l3)
		r = build_type_level(c, &dom[nd++], LVL_L3, HWLOC_OBJ_L3CACHE);
	if (r < 0) {
		for (int i = 0; i < nd; i++)
			level_free(&dom[i]);
		return r;
	}
	/* Biggest domains (fewest objects) first; on a tie packages come
	 * before NUMA nodes before L3 groups, as the kubelet's socketsFirst. */
	for (int i = 1; i < nd; i++)
		for (int j = i; j > 0 && dom[j].n < dom[j - 1].n; j--) {
			struct level t = dom[j];
			dom[j] = dom[j - 1];
			dom[j - 1] = t;
		}
	for (int i = 0; i < nd; i++)
		if (dom[i].n > 0)
			c->levels[c->nlevels++] = dom[i];
		else
			level_free(&dom[i]);
	r = build_core_level(c, &c->levels[c->nlevels]);
	c->nlevels++;
	return r;
}

struct sortkey {
	int free;
	unsigned id;
	size_t idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct sortkey *x = a, *y = b;

	if (x->free != y->free)
		return x->free < y->free ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Append to out the domains of level `target` that hold available PUs in
 * scope, walking the bigger levels busiest-first; seen dedupes domains that
 * overlap several parents. */
static int order_level(struct ctx *c, int target, int level, hwloc_const_bitmap_t scope,
		       size_t *out, size_t *nout, bool *seen)
{
	struct level *l = &c->levels[level];
	cleanup_free struct sortkey *keys = calloc(l->n + 1, sizeof(*keys));
	cleanup_hwloc_bitmap hwloc_bitmap_t sub = hwloc_bitmap_alloc();
	size_t nk = 0;

	if (keys == NULL || sub == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		if (level == target && seen[i])
			continue;
		hwloc_bitmap_and(sub, l->doms[i].cpus, scope);
		hwloc_bitmap_and(sub, sub, c->avail);
		int w = hwloc_bitmap_weight(sub);
		if (w <= 0)
			continue;
		keys[nk++] = (struct sortkey){.free = w, .id = l->doms[i].id, .idx = i};
	}
	qsort(keys, nk, sizeof(*keys), cmp_key);
	for (size_t k = 0; k < nk; k++) {
		size_t i = keys[k].idx;
		if (level == target) {
			seen[i] = true;
			out[(*nout)++] = i;
			continue;
		}
		hwloc_bitmap_and(sub, l->doms[i].cpus, scope);
		int r = order_level(c, target, level + 1, sub, out, nout, seen);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Ordered domain indexes of a level within scope; *ret freed by caller. */
static int ordered(struct ctx *c, int target, hwloc_const_bitmap_t scope, size_t **ret,
		   size_t *ret_n)
{
	size_t n = c->levels[target].n;
	cleanup_free bool *seen = calloc(n + 1, sizeof(*seen));
	size_t *out = calloc(n + 1, sizeof(*out));

	*ret_n = 0;
	if (seen == NULL || out == NULL) {
		free(out);
		return -ENOMEM;
	}
	int r = order_level(c, target, 0, scope, out, ret_n, seen);
	if (r < 0) {
		free(out);
		return r;
	}
	*ret = out;
	return 0;
}

static void take_set(struct ctx *c, hwloc_const_bitmap_t set)
{
	hwloc_bitmap_or(c->result, c->result, set);
	hwloc_bitmap_andnot(c->avail, c->avail, set);
	c->need -= (unsigned)hwloc_bitmap_weight(set);
}

static void step(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void step(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0 || ts_strv_push(&c->steps, s) < 0)
		c->oom = true;
	va_end(ap);
}

static void step_set(struct ctx *c, const char *what, hwloc_const_bitmap_t set)
{
	cleanup_free char *list = NULL;

	if (hwloc_bitmap_list_asprintf(&list, set) < 0) {
		c->oom = true;
		return;
	}
	step(c, "%s: cpus %s", what, list);
}

/* Whole domains of one level, when the request is at least that big. */
static int take_whole(struct ctx *c, int lvl, hwloc_const_bitmap_t scope)
{
	cleanup_free size_t *order = NULL;
	size_t n = 0;
	int r = ordered(c, lvl, scope, &order, &n);

	if (r < 0)
		return r;
	for (size_t k = 0; k < n && c->need > 0; k++) {
		struct domain *d = &c->levels[lvl].doms[order[k]];
		int w = hwloc_bitmap_weight(d->cpus);

		if (!hwloc_bitmap_isincluded(d->cpus, c->avail) ||
		    !hwloc_bitmap_isincluded(d->cpus, scope) || (unsigned)w > c->need)
			continue;
		take_set(c, d->cpus);
		if (c->levels[lvl].kind == LVL_CORE) {
			hwloc_bitmap_or(c->took_cores, c->took_cores, d->cpus);
			continue;
		}
		char what[64];
		snprintf(what, sizeof(what), "whole %s %u", level_names[c->levels[lvl].kind],
			 d->id);
		step_set(c, what, d->cpus);
	}
	return 0;
}

/* Single PUs, packed: core by core in the busiest-first core order. */
static int take_pus_packed(struct ctx *c, hwloc_const_bitmap_t scope)
{
	cleanup_free size_t *order = NULL;
	size_t n = 0;
	int core_lvl = c->nlevels - 1;
	int r = ordered(c, core_lvl, scope, &order, &n);

	if (r < 0)
		return r;
	for (size_t k = 0; k < n && c->need > 0; k++) {
		struct domain *d = &c->levels[core_lvl].doms[order[k]];
		int pu;

		hwloc_bitmap_and(c->tmp, d->cpus, c->avail);
		hwloc_bitmap_and(c->tmp, c->tmp, scope);
		hwloc_bitmap_foreach_begin(pu, c->tmp)
			{
				if (c->need == 0)
					break;
				hwloc_bitmap_set(c->took_pus, (unsigned)pu);
				hwloc_bitmap_set(c->result, (unsigned)pu);
				hwloc_bitmap_clr(c->avail, (unsigned)pu);
				c->need--;
			}
		hwloc_bitmap_foreach_end();
	}
	return 0;
}

/* Single PUs, spread (kubelet distribute-cpus-across-cores): the smallest
 * domains busiest first, and inside each the PUs by ascending OS index,
 * which puts SMT siblings (numbered apart) last. */
static int take_pus_spread(struct ctx *c, hwloc_const_bitmap_t scope)
{
	cleanup_free size_t *order = NULL;
	size_t n = 0;
	int lvl = c->nlevels - 2;
	int r;

	if (lvl < 0)
		return take_pus_packed(c, scope);
	r = ordered(c, lvl, scope, &order, &n);
	if (r < 0)
		return r;
	for (size_t k = 0; k < n && c->need > 0; k++) {
		struct domain *d = &c->levels[lvl].doms[order[k]];
		int pu;

		hwloc_bitmap_and(c->tmp, d->cpus, c->avail);
		hwloc_bitmap_and(c->tmp, c->tmp, scope);
		hwloc_bitmap_foreach_begin(pu, c->tmp)
			{
				if (c->need == 0)
					break;
				hwloc_bitmap_set(c->took_pus, (unsigned)pu);
				hwloc_bitmap_set(c->result, (unsigned)pu);
				hwloc_bitmap_clr(c->avail, (unsigned)pu);
				c->need--;
			}
		hwloc_bitmap_foreach_end();
	}
	return 0;
}

static int take_pus(struct ctx *c, hwloc_const_bitmap_t scope)
{
	return c->opts->spread ? take_pus_spread(c, scope) : take_pus_packed(c, scope);
}

static int take_cores_then_pus(struct ctx *c, hwloc_const_bitmap_t scope)
{
	int r = 0;

	if (!c->opts->spread)
		r = take_whole(c, c->nlevels - 1, scope);
	if (r == 0 && c->need > 0)
		r = take_pus(c, scope);
	return r;
}

/* One partly used L3 group that can hold the rest (busiest first). */
static int take_partial_l3(struct ctx *c, hwloc_const_bitmap_t scope)
{
	int lvl = -1;

	for (int i = 0; i < c->nlevels - 1; i++)
		if (c->levels[i].kind == LVL_L3)
			lvl = i;
	if (lvl < 0 || c->need == 0)
		return 0;
	cleanup_free size_t *order = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t sub = hwloc_bitmap_alloc();
	size_t n = 0;
	int r = sub == NULL ? -ENOMEM : ordered(c, lvl, scope, &order, &n);

	if (r < 0)
		return r;
	for (size_t k = 0; k < n; k++) {
		struct domain *d = &c->levels[lvl].doms[order[k]];

		hwloc_bitmap_and(sub, d->cpus, c->avail);
		hwloc_bitmap_and(sub, sub, scope);
		if ((unsigned)hwloc_bitmap_weight(sub) < c->need)
			continue;
		step(c, "rest inside l3 group %u", d->id);
		return take_cores_then_pus(c, sub);
	}
	return 0;
}

static int run(struct ctx *c, hwloc_const_bitmap_t scope)
{
	int r = 0;

	for (int i = 0; i < c->nlevels - 1 && r == 0 && c->need > 0; i++)
		r = take_whole(c, i, scope);
	if (r == 0 && c->opts->align_l3)
		r = take_partial_l3(c, scope);
	if (r == 0 && c->need > 0)
		r = take_cores_then_pus(c, scope);
	return r;
}

static void ctx_release(struct ctx *c)
{
	for (int i = 0; i < c->nlevels; i++)
		level_free(&c->levels[i]);
	hwloc_bitmap_free(c->avail);
	hwloc_bitmap_free(c->result);
	hwloc_bitmap_free(c->tmp);
	hwloc_bitmap_free(c->took_cores);
	hwloc_bitmap_free(c->took_pus);
	ts_strv_release(&c->steps);
}

/* PUs of avail that form whole free cores. */
static void free_cores(struct ctx *c, hwloc_bitmap_t out)
{
	struct level *l = &c->levels[c->nlevels - 1];

	hwloc_bitmap_zero(out);
	for (size_t i = 0; i < l->n; i++)
		if (hwloc_bitmap_isincluded(l->doms[i].cpus, c->avail))
			hwloc_bitmap_or(out, out, l->doms[i].cpus);
}

static int check_full_cores(struct ctx *c, unsigned n, struct ts_error **err)
{
	unsigned w = c->topo->smt_width;
	int phys;

	if (n % w != 0)
		return ts_error_set(
			err, 0,
			"smt alignment error: requested %u cpus not a multiple of cpus per "
			"core = %u",
			n, w);
	free_cores(c, c->tmp);
	phys = hwloc_bitmap_weight(c->tmp);
	if ((unsigned)phys < n)
		return ts_error_set(err, ENOSPC,
				    "smt alignment error: not enough free physical cpus: available "
				    "physical cpus = %d, requested cpus = %u, cpus per core = %u",
				    phys, n, w);
	hwloc_bitmap_copy(c->avail, c->tmp);
	return 0;
}

static int finish_steps(struct ctx *c)
{
	if (!hwloc_bitmap_iszero(c->took_cores))
		step_set(c, "whole cores", c->took_cores);
	if (!hwloc_bitmap_iszero(c->took_pus))
		step_set(c, "single pus", c->took_pus);
	return c->oom ? -ENOMEM : 0;
}

int ts_placement_take(const struct ts_topology *topo, hwloc_const_bitmap_t avail, unsigned n,
		      hwloc_const_bitmap_t preferred, const struct ts_placement_take_opts *opts,
		      hwloc_bitmap_t *ret, char ***ret_steps, struct ts_error **err)
{
	static const struct ts_placement_take_opts defaults = {.align_l3 = true};
	struct ctx c = {.topo = topo, .opts = opts != NULL ? opts : &defaults};
	int r, have;

	c.avail = hwloc_bitmap_alloc();
	c.result = hwloc_bitmap_alloc();
	c.tmp = hwloc_bitmap_alloc();
	c.took_cores = hwloc_bitmap_alloc();
	c.took_pus = hwloc_bitmap_alloc();
	if (c.avail == NULL || c.result == NULL || c.tmp == NULL || c.took_cores == NULL ||
	    c.took_pus == NULL || build_levels(&c) < 0) {
		ctx_release(&c);
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	hwloc_bitmap_and(c.avail, avail, topo->online);
	have = hwloc_bitmap_weight(c.avail);
	if (have < 0 || (unsigned)have < n) {
		ctx_release(&c);
		return ts_error_set(err, ENOSPC,
				    "not enough cpus available to satisfy request: requested=%u, "
				    "available=%d",
				    n, have);
	}
	r = n > 0 && c.opts->full_cores_only ? check_full_cores(&c, n, err) : 0;
	if (r < 0) {
		ctx_release(&c);
		return r;
	}
	c.need = n;
	if (preferred != NULL && n > 0) {
		cleanup_hwloc_bitmap hwloc_bitmap_t scope = hwloc_bitmap_alloc();
		if (scope == NULL) {
			ctx_release(&c);
			return ts_error_set(err, ENOMEM, "placement: out of memory");
		}
		hwloc_bitmap_and(scope, c.avail, preferred);
		unsigned k = (unsigned)hwloc_bitmap_weight(scope);
		if (k > n)
			k = n;
		if (c.opts->full_cores_only)
			k -= k % topo->smt_width;
		if (k > 0) {
			unsigned rest = n - k;
			c.need = k;
			r = run(&c, scope);
			c.need += rest;
		}
	}
	if (r == 0 && c.need > 0)
		r = run(&c, hwloc_topology_get_complete_cpuset(topo->hwloc));
	if (r == 0)
		r = finish_steps(&c);
	if (r < 0) {
		ctx_release(&c);
		return ts_error_set(err, -r, "placement: out of memory");
	}
	*ret = TAKE_PTR(c.result);
	if (ret_steps != NULL)
		*ret_steps = ts_strv_take(&c.steps);
	ctx_release(&c);
	return 0;
}
