/* take.c - the exclusive CPU allocator in the kubelet's order. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/internal.h"
#include "util/cleanup.h"

/* A level of the walk: the topology's groups of one kind (borrowed). */
struct level {
	enum ts_cpu_level kind;
	const struct ts_cpu_group *doms;
	size_t n;
};

struct ctx {
	const struct ts_topology *topo;
	const struct ts_placement_take_opts *opts;
	hwloc_bitmap_t avail; /* what may still be taken */
	hwloc_bitmap_t result;
	unsigned need;
	struct level levels[_TS_CPU_LEVEL_MAX]; /* biggest first, cores last */
	int nlevels;				/* including the core level */
	hwloc_bitmap_t tmp;
	hwloc_bitmap_t took_cores, took_pus;
	struct ts_strv steps;
	bool oom;
};

/* The domain levels, biggest domains (fewest groups) first; on a tie
 * packages come before NUMA nodes before L3 groups, as the kubelet's
 * socketsFirst.  Each level covers every online PU (placeholder groups
 * hold the PUs no object covers), so the walk reaches them all. */
static void build_levels(struct ctx *c)
{
	static const enum ts_cpu_level kinds[] = {TS_CPU_LEVEL_PACKAGE, TS_CPU_LEVEL_NUMA,
						  TS_CPU_LEVEL_L3};
	struct level dom[3];
	int nd = 0;

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (kinds[i] == TS_CPU_LEVEL_L3 && !c->opts->align_l3)
			continue;
		if (c->topo->n_groups[kinds[i]] == 0)
			continue;
		dom[nd++] = (struct level){.kind = kinds[i],
					   .doms = c->topo->groups[kinds[i]],
					   .n = c->topo->n_groups[kinds[i]]};
	}
	for (int i = 1; i < nd; i++)
		for (int j = i; j > 0 && dom[j].n < dom[j - 1].n; j--) {
			struct level t = dom[j];
			dom[j] = dom[j - 1];
			dom[j - 1] = t;
		}
	for (int i = 0; i < nd; i++)
		c->levels[c->nlevels++] = dom[i];
	c->levels[c->nlevels++] = (struct level){.kind = TS_CPU_LEVEL_CORE,
						 .doms = c->topo->groups[TS_CPU_LEVEL_CORE],
						 .n = c->topo->n_groups[TS_CPU_LEVEL_CORE]};
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
	const struct level *l = &c->levels[level];
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
		const struct ts_cpu_group *d = &c->levels[lvl].doms[order[k]];
		int w = hwloc_bitmap_weight(d->cpus);

		if (!hwloc_bitmap_isincluded(d->cpus, c->avail) ||
		    !hwloc_bitmap_isincluded(d->cpus, scope) || (unsigned)w > c->need)
			continue;
		take_set(c, d->cpus);
		if (c->levels[lvl].kind == TS_CPU_LEVEL_CORE) {
			hwloc_bitmap_or(c->took_cores, c->took_cores, d->cpus);
			continue;
		}
		char what[64];
		if (d->placeholder)
			snprintf(what, sizeof(what), "whole %s of cpus without one",
				 ts_cpu_level_to_string(c->levels[lvl].kind));
		else
			snprintf(what, sizeof(what), "whole %s %u",
				 ts_cpu_level_to_string(c->levels[lvl].kind), d->id);
		step_set(c, what, d->cpus);
	}
	return 0;
}

/* Single PUs from the domains of level lvl, in their busiest-first order,
 * each domain's PUs by ascending OS index. */
static int take_pus_at(struct ctx *c, int lvl, hwloc_const_bitmap_t scope)
{
	cleanup_free size_t *order = NULL;
	size_t n = 0;
	int r = ordered(c, lvl, scope, &order, &n);

	if (r < 0)
		return r;
	for (size_t k = 0; k < n && c->need > 0; k++) {
		const struct ts_cpu_group *d = &c->levels[lvl].doms[order[k]];
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

/* Single PUs, packed: core by core in the busiest-first core order. */
static int take_pus_packed(struct ctx *c, hwloc_const_bitmap_t scope)
{
	return take_pus_at(c, c->nlevels - 1, scope);
}

/* Single PUs, spread (kubelet distribute-cpus-across-cores): the smallest
 * domains busiest first, and inside each the PUs by ascending OS index,
 * which puts SMT siblings (numbered apart) last. */
static int take_pus_spread(struct ctx *c, hwloc_const_bitmap_t scope)
{
	if (c->nlevels < 2)
		return take_pus_packed(c, scope);
	return take_pus_at(c, c->nlevels - 2, scope);
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
		if (c->levels[i].kind == TS_CPU_LEVEL_L3)
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
		const struct ts_cpu_group *d = &c->levels[lvl].doms[order[k]];

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

/* Distribution state of the kubelet's NUMA-distributed allocator. */
struct dist {
	size_t nn;	  /* NUMA nodes with available PUs */
	size_t *node;	  /* their level indexes, in the kubelet's sort order */
	long long *free;  /* available PUs per node (parallel to node) */
	long long *after; /* scratch: free after a trial allocation */
	size_t *combo, *best_combo, *best_sub;
	size_t k, best_nsub;
	long long best_score; /* -1: none yet */
	unsigned group;
	unsigned n;
};

/* Next k-combination of 0..n-1 in lexicographic order; false at the end. */
static bool next_combo(size_t *idx, size_t k, size_t n)
{
	size_t i = k;

	while (i > 0 && idx[i - 1] == n - k + i - 1)
		i--;
	if (i == 0)
		return false;
	idx[i - 1]++;
	for (size_t j = i; j < k; j++)
		idx[j] = idx[j - 1] + 1;
	return true;
}

/* The balance of the free counts in d->after: n * sum(x^2) - (sum x)^2,
 * which orders like the standard deviation the kubelet compares. */
static long long balance(const struct dist *d)
{
	long long s = 0, sq = 0;

	for (size_t i = 0; i < d->nn; i++) {
		s += d->after[i];
		sq += d->after[i] * d->after[i];
	}
	return (long long)d->nn * sq - s * s;
}

/* Hand the remainder out in groups over the subset positions pos[0..m)
 * (into d->after); false when the subset cannot take it. */
static bool spread_remainder(struct dist *d, const size_t *pos, size_t m, long long rem)
{
	long long sum = 0;

	for (size_t i = 0; i < m; i++)
		sum += d->after[pos[i]];
	if (sum < rem)
		return false;
	while (rem > 0) {
		bool progress = false;
		for (size_t i = 0; i < m && rem > 0; i++) {
			if (d->after[pos[i]] < (long long)d->group)
				continue;
			d->after[pos[i]] -= d->group;
			rem -= d->group;
			progress = true;
		}
		if (!progress)
			return false;
	}
	return true;
}

/* Score one combination d->combo (positions into d->node); updates the best. */
static void score_combo(struct dist *d)
{
	long long g = d->group, have = 0, groups = 0;
	long long share = (long long)(d->n / d->k / d->group) * g;
	size_t rc[64], nrc = 0, idx[64];
	long long best_local = -1;
	size_t best_local_n = 0, best_local_sub[64];

	for (size_t i = 0; i < d->k; i++) {
		long long f = d->free[d->combo[i]];
		have += f;
		groups += f / g;
		if (f < share)
			return;
	}
	if (have < (long long)d->n || groups * g < (long long)d->n)
		return;
	long long rem = (long long)d->n - share * (long long)d->k;
	for (size_t i = 0; i < d->k; i++)
		if (d->free[d->combo[i]] - share >= g)
			rc[nrc++] = d->combo[i];
	if (rem == 0) {
		memcpy(d->after, d->free, d->nn * sizeof(*d->after));
		for (size_t i = 0; i < d->k; i++)
			d->after[d->combo[i]] -= share;
		best_local = balance(d);
	}
	for (size_t m = nrc; rem > 0 && m >= 1; m--) {
		for (size_t j = 0; j < m; j++)
			idx[j] = j;
		do {
			size_t pos[64];
			for (size_t j = 0; j < m; j++)
				pos[j] = rc[idx[j]];
			memcpy(d->after, d->free, d->nn * sizeof(*d->after));
			for (size_t i = 0; i < d->k; i++)
				d->after[d->combo[i]] -= share;
			if (!spread_remainder(d, pos, m, rem))
				continue;
			long long b = balance(d);
			if (best_local < 0 || b < best_local) {
				best_local = b;
				best_local_n = m;
				memcpy(best_local_sub, pos, m * sizeof(*pos));
			}
		} while (next_combo(idx, m, nrc));
	}
	if (best_local < 0 || (d->best_score >= 0 && best_local >= d->best_score))
		return;
	d->best_score = best_local;
	memcpy(d->best_combo, d->combo, d->k * sizeof(*d->combo));
	d->best_nsub = best_local_n;
	memcpy(d->best_sub, best_local_sub, best_local_n * sizeof(*best_local_sub));
}

/* Packed allocation of `count` PUs inside one NUMA node (level index). */
static int take_in_numa(struct ctx *c, int lvl, size_t dom, unsigned count)
{
	unsigned rest = c->need - count;
	int r;

	c->need = count;
	r = run(c, c->levels[lvl].doms[dom].cpus);
	if (r == 0 && c->need != 0)
		r = -EIO;
	c->need += rest;
	return r;
}

static void dist_free(struct dist *d)
{
	free(d->node);
	free(d->free);
	free(d->after);
	free(d->combo);
	free(d->best_combo);
	free(d->best_sub);
}

/*
 * The kubelet's distribute-cpus-across-numa (takeByTopologyNUMADistributed):
 * for k NUMA nodes from the fewest that could hold the request upwards, the
 * combination (in the busiest-first node order) whose even share in groups
 * of d.group PUs, plus the remainder handed out group by group over the
 * best subset, leaves the most balanced free counts on all nodes; each
 * share is then taken with the packed allocator.  Falls back to the packed
 * allocator when n is not a multiple of the group, no combination fits or
 * more than 16 NUMA nodes have available PUs.
 * *done is false when the caller must run the packed allocator.
 */
static int take_distributed(struct ctx *c, unsigned group, bool *done)
{
	cleanup_free size_t *order = NULL;
	struct dist d = {.group = group, .n = c->need, .best_score = -1};
	size_t total;
	int lvl = -1, r = 0;

	*done = false;
	for (int i = 0; i < c->nlevels - 1; i++)
		if (c->levels[i].kind == TS_CPU_LEVEL_NUMA)
			lvl = i;
	if (lvl < 0 || group == 0 || c->need == 0 || c->need % group != 0)
		return 0;
	r = ordered(c, lvl, c->topo->online, &order, &d.nn);
	if (r < 0)
		return r;
	/* the combinations grow as 2^nodes: beyond 16 nodes, packed */
	if (d.nn == 0 || d.nn > 16)
		return 0;
	d.node = order;
	d.free = calloc(d.nn, sizeof(*d.free));
	d.after = calloc(d.nn, sizeof(*d.after));
	d.combo = calloc(d.nn, sizeof(*d.combo));
	d.best_combo = calloc(d.nn, sizeof(*d.best_combo));
	d.best_sub = calloc(d.nn, sizeof(*d.best_sub));
	order = NULL;
	if (d.free == NULL || d.after == NULL || d.combo == NULL || d.best_combo == NULL ||
	    d.best_sub == NULL) {
		dist_free(&d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < d.nn; i++) {
		hwloc_bitmap_and(c->tmp, c->levels[lvl].doms[d.node[i]].cpus, c->avail);
		d.free[i] = hwloc_bitmap_weight(c->tmp);
	}
	/* the kubelet's rangeNUMANodesNeededToSatisfy() */
	total = c->levels[lvl].n;
	unsigned sys = (unsigned)hwloc_bitmap_weight(c->topo->online);
	unsigned groups = (sys - 1) / group + 1;
	unsigned per_node = (groups - 1) / (unsigned)total + 1;
	unsigned needed = (c->need - 1) / group + 1;
	size_t kmin = (needed - 1) / per_node + 1;
	size_t kmax = needed < d.nn ? needed : d.nn;

	for (d.k = kmin; d.k <= kmax && d.best_score < 0; d.k++) {
		for (size_t j = 0; j < d.k; j++)
			d.combo[j] = j;
		do {
			if (d.best_score == 0)
				break;
			score_combo(&d);
		} while (next_combo(d.combo, d.k, d.nn));
		if (d.best_score >= 0)
			break;
	}
	if (d.best_score < 0) {
		dist_free(&d);
		return 0;
	}
	unsigned share = d.n / (unsigned)d.k / group * group;
	unsigned rem = d.n - share * (unsigned)d.k;
	cleanup_free char *nodes = NULL;
	for (size_t i = 0; i < d.k; i++) {
		char *s = NULL;
		if (asprintf(&s, "%s%s%u", nodes ? nodes : "", nodes ? "," : "",
			     c->levels[lvl].doms[d.node[d.best_combo[i]]].id) < 0) {
			dist_free(&d);
			return -ENOMEM;
		}
		free(nodes);
		nodes = s;
	}
	step(c, "distributed across numa nodes %s: %u each, %u more", nodes, share, rem);
	for (size_t i = 0; i < d.k && r == 0; i++)
		r = take_in_numa(c, lvl, d.node[d.best_combo[i]], share);
	while (r == 0 && rem > 0) {
		bool progress = false;
		for (size_t i = 0; i < d.best_nsub && rem > 0 && r == 0; i++) {
			size_t dom = d.node[d.best_sub[i]];
			hwloc_bitmap_and(c->tmp, c->levels[lvl].doms[dom].cpus, c->avail);
			if ((unsigned)hwloc_bitmap_weight(c->tmp) < group)
				continue;
			r = take_in_numa(c, lvl, dom, group);
			rem -= group;
			progress = true;
		}
		if (!progress)
			r = -EIO;
	}
	dist_free(&d);
	*done = r == 0;
	return r;
}

static void ctx_release(struct ctx *c)
{
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
	const struct level *l = &c->levels[c->nlevels - 1];

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
		return ts_error_set_plain(
			err, ENOSPC,
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

/* ret = the PUs of every package that holds one of cpus (the kubelet's
 * getAlignedCPUs with align-by-socket, which takes the packages of the hint's
 * NUMA nodes). */
static void widen_to_packages(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
			      hwloc_bitmap_t ret)
{
	const struct ts_cpu_group *pkg = topo->groups[TS_CPU_LEVEL_PACKAGE];

	hwloc_bitmap_zero(ret);
	for (size_t i = 0; i < topo->n_groups[TS_CPU_LEVEL_PACKAGE]; i++)
		if (!pkg[i].placeholder && hwloc_bitmap_intersects(pkg[i].cpus, cpus))
			hwloc_bitmap_or(ret, ret, pkg[i].cpus);
	/* no package objects (some XML): the NUMA alignment stands */
	if (hwloc_bitmap_iszero(ret))
		hwloc_bitmap_copy(ret, cpus);
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
	    c.took_pus == NULL) {
		ctx_release(&c);
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	build_levels(&c);
	hwloc_bitmap_and(c.avail, avail, topo->online);
	have = hwloc_bitmap_weight(c.avail);
	if (have < 0 || (unsigned)have < n) {
		ctx_release(&c);
		return ts_error_set_plain(
			err, ENOSPC,
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
		if (c.opts->align_by_socket)
			widen_to_packages(topo, preferred, scope);
		else
			hwloc_bitmap_copy(scope, preferred);
		hwloc_bitmap_and(scope, scope, c.avail);
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
	if (r == 0 && c.need > 0 && c.opts->distribute_across_numa && preferred == NULL) {
		unsigned group = c.opts->numa_group_size;
		bool done = false;

		if (group == 0)
			group = c.opts->full_cores_only ? topo->smt_width : 1;
		r = take_distributed(&c, group, &done);
	}
	if (r == 0 && c.need > 0)
		r = run(&c, topo->online);
	/* every level covers every online PU, so the walk always ends with the
	 * count; a shortfall is a bug that must not reach config.json */
	if (r == 0 && c.need > 0) {
		ctx_release(&c);
		return ts_error_set(err, EIO, "placement: the walk found %u of %u cpus", n - c.need,
				    n);
	}
	if (r == 0)
		r = finish_steps(&c);
	if (r < 0) {
		ctx_release(&c);
		if (r == -EIO)
			return ts_error_set(
				err, EIO, "placement: numa distribution did not add up to %u cpus",
				n);
		return ts_error_set(err, -r, "placement: out of memory");
	}
	*ret = TAKE_PTR(c.result);
	if (ret_steps != NULL)
		*ret_steps = ts_strv_take(&c.steps);
	ctx_release(&c);
	return 0;
}
