/* topology.c - hwloc loading, derived facts, cpu lists. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

#include <hwloc.h>
#include <hwloc/export.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/text.h"

static const char *const tier_names[_TS_MEMORY_TIER_MAX] = {
	[TS_MEMORY_TIER_DRAM] = "dram", [TS_MEMORY_TIER_HBM] = "hbm", [TS_MEMORY_TIER_CXL] = "cxl",
	[TS_MEMORY_TIER_PMEM] = "pmem", [TS_MEMORY_TIER_GPU] = "gpu",
};

const char *ts_memory_tier_to_string(enum ts_memory_tier tier)
{
	if ((int)tier < 0 || tier >= _TS_MEMORY_TIER_MAX)
		return NULL;
	return tier_names[tier];
}

enum ts_memory_tier ts_memory_tier_from_string(const char *s)
{
	for (int i = 0; s != NULL && i < _TS_MEMORY_TIER_MAX; i++)
		if (strcmp(s, tier_names[i]) == 0)
			return (enum ts_memory_tier)i;
	return TS_MEMORY_TIER_INVALID;
}

static void groups_free(struct ts_cpu_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		hwloc_bitmap_free(g[i].cpus);
		hwloc_bitmap_free(g[i].mems);
	}
	free(g);
}

struct ts_topology *ts_topology_free(struct ts_topology *topo)
{
	if (topo == NULL)
		return NULL;
	for (size_t i = 0; i < topo->n_numa_nodes; i++) {
		hwloc_bitmap_free(topo->numa_nodes[i].cpus);
		hwloc_bitmap_free(topo->numa_nodes[i].local_cpus);
	}
	free(topo->numa_nodes);
	for (int l = 0; l < _TS_CPU_LEVEL_MAX; l++)
		groups_free(topo->groups[l], topo->n_groups[l]);
	free(topo->numa_group_of_pu);
	free(topo->latency_os);
	free(topo->latency);
	for (size_t i = 0; i < topo->n_cpu_kinds; i++)
		hwloc_bitmap_free(topo->cpu_kinds[i].cpus);
	free(topo->cpu_kinds);
	hwloc_bitmap_free(topo->online);
	hwloc_bitmap_free(topo->performance_cpus);
	hwloc_bitmap_free(topo->efficiency_cpus);
	if (topo->hwloc != NULL)
		hwloc_topology_destroy(topo->hwloc);
	free(topo->source);
	free(topo);
	return NULL;
}

/* Tier from hwloc's subtype, else from shape: a CPU-less node without any
 * local PU is device memory (POWER9 + V100 coherent memory); a CPU-less node
 * near CPU nodes is on-package memory when smaller than they are (KNL
 * MCDRAM: 4 GiB next to 24 GiB) and persistent or expander memory when
 * larger (NVDIMM: 124 GiB next to 31 GiB). */
static enum ts_memory_tier tier_of(hwloc_obj_t node, bool memory_only, uint64_t cpu_node_bytes)
{
	const char *st = node->subtype;

	if (st != NULL) {
		if (strcasecmp(st, "HBM") == 0 || strcasecmp(st, "MCDRAM") == 0)
			return TS_MEMORY_TIER_HBM;
		if (strcasecmp(st, "NVM") == 0 || strcasecmp(st, "SPM") == 0)
			return TS_MEMORY_TIER_PMEM;
		if (strncasecmp(st, "CXL", 3) == 0)
			return TS_MEMORY_TIER_CXL;
		if (strcasecmp(st, "GPUMemory") == 0)
			return TS_MEMORY_TIER_GPU;
		return TS_MEMORY_TIER_DRAM;
	}
	if (!memory_only)
		return TS_MEMORY_TIER_DRAM;
	/* the complete cpuset keeps offline and disallowed PUs: a node whose
	 * PUs are all offline is still a CPU node */
	if (hwloc_bitmap_iszero(node->complete_cpuset))
		return TS_MEMORY_TIER_GPU;
	if (node->attr->numanode.local_memory > cpu_node_bytes && cpu_node_bytes > 0)
		return TS_MEMORY_TIER_PMEM;
	return TS_MEMORY_TIER_HBM;
}

static int cmp_numa(const void *a, const void *b)
{
	const struct ts_numa_node *x = a, *y = b;

	return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

/* A node without a subtype or of subtype DRAM: the one that owns PUs when
 * several nodes have the same cpuset. */
static bool plain_memory(hwloc_obj_t o)
{
	return o->subtype == NULL || strcasecmp(o->subtype, "DRAM") == 0;
}

/* Claim order: smallest cpuset first, plain memory first, lowest OS index. */
static int cmp_claim(const void *a, const void *b)
{
	hwloc_obj_t x = *(hwloc_obj_t const *)a, y = *(hwloc_obj_t const *)b;
	int wx = hwloc_bitmap_weight(x->cpuset), wy = hwloc_bitmap_weight(y->cpuset);

	if (wx != wy)
		return wx < wy ? -1 : 1;
	if (plain_memory(x) != plain_memory(y))
		return plain_memory(x) ? -1 : 1;
	return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

/* The table of NUMA nodes: each claims the online PUs no smaller node holds
 * (see "NUMA domains" in topology.h). */
static int build_numa_table(struct ts_topology *t)
{
	int n = hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_NUMANODE);
	cleanup_free hwloc_obj_t *order = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t claimed = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t claimed_all = hwloc_bitmap_alloc();
	cleanup_free bool *cpuless = NULL;

	if (n < 0)
		n = 0;
	t->numa_nodes = calloc((size_t)n + 1, sizeof(*t->numa_nodes));
	order = calloc((size_t)n + 1, sizeof(*order));
	cpuless = calloc((size_t)n + 1, sizeof(*cpuless));
	if (t->numa_nodes == NULL || order == NULL || claimed == NULL || claimed_all == NULL ||
	    cpuless == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		order[i] = hwloc_get_obj_by_type(t->hwloc, HWLOC_OBJ_NUMANODE, (unsigned)i);
	qsort(order, (size_t)n, sizeof(*order), cmp_claim);
	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = order[i];
		struct ts_numa_node *e = &t->numa_nodes[t->n_numa_nodes];

		e->cpus = hwloc_bitmap_alloc();
		e->local_cpus = hwloc_bitmap_alloc();
		t->n_numa_nodes++;
		if (e->cpus == NULL || e->local_cpus == NULL)
			return -ENOMEM;
		hwloc_bitmap_and(e->local_cpus, o->cpuset, t->online);
		hwloc_bitmap_andnot(e->cpus, e->local_cpus, claimed);
		hwloc_bitmap_or(claimed, claimed, e->cpus);
		/* the same claim over every PU, offline ones too, tells a
		 * CPU-less node from one whose PUs are all offline */
		cpuless[i] = hwloc_bitmap_isincluded(o->complete_cpuset, claimed_all);
		hwloc_bitmap_or(claimed_all, claimed_all, o->complete_cpuset);
		e->os_index = o->os_index;
		e->memory_bytes = o->attr != NULL ? o->attr->numanode.local_memory : 0;
		e->memory_only = hwloc_bitmap_iszero(e->cpus);
	}
	for (int i = 0; i < n; i++) {
		struct ts_numa_node *e = &t->numa_nodes[i];
		uint64_t near_bytes = 0;

		/* the largest CPU node near a memory-only one tells HBM from NVM */
		for (int j = 0; e->memory_only && j < n; j++)
			if (!t->numa_nodes[j].memory_only &&
			    hwloc_bitmap_intersects(t->numa_nodes[j].cpus, e->local_cpus) &&
			    t->numa_nodes[j].memory_bytes > near_bytes)
				near_bytes = t->numa_nodes[j].memory_bytes;
		e->tier = tier_of(order[i], e->memory_only && cpuless[i], near_bytes);
	}
	bool sizes_known = false;
	for (size_t i = 0; i < t->n_numa_nodes; i++)
		sizes_known |= t->numa_nodes[i].memory_bytes > 0;
	for (size_t i = 0; i < t->n_numa_nodes; i++)
		t->numa_nodes[i].has_memory = !sizes_known || t->numa_nodes[i].memory_bytes > 0;
	qsort(t->numa_nodes, t->n_numa_nodes, sizeof(*t->numa_nodes), cmp_numa);
	return 0;
}

/* ---- groups of PUs per level ---------------------------------------- */

struct group_list {
	struct ts_cpu_group *v;
	size_t n;
};

static struct ts_cpu_group *group_add(struct group_list *l, unsigned id, bool placeholder,
				      hwloc_const_bitmap_t cpus)
{
	struct ts_cpu_group *v = realloc(l->v, (l->n + 1) * sizeof(*v));

	if (v == NULL)
		return NULL;
	l->v = v;
	v[l->n] = (struct ts_cpu_group){.id = id, .placeholder = placeholder, .numa_node = -1};
	v[l->n].cpus = hwloc_bitmap_dup(cpus);
	if (v[l->n].cpus == NULL)
		return NULL;
	return &v[l->n++];
}

static int cmp_group(const void *a, const void *b)
{
	const struct ts_cpu_group *x = a, *y = b;
	int fx = hwloc_bitmap_first(x->cpus), fy = hwloc_bitmap_first(y->cpus);

	return (fx > fy) - (fx < fy);
}

/* The online PUs of each object of a type; the PUs none holds form
 * placeholder groups, one per group of `split` they meet (or one).  A
 * machine without any object of the type has no groups of it. */
static int build_type_groups(struct ts_topology *t, hwloc_obj_type_t type,
			     const struct group_list *split, struct group_list *out)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t rest = hwloc_bitmap_dup(t->online);
	hwloc_obj_t o = NULL;

	if (cpus == NULL || rest == NULL)
		return -ENOMEM;
	while ((o = hwloc_get_next_obj_by_type(t->hwloc, type, o)) != NULL) {
		hwloc_bitmap_and(cpus, o->cpuset, rest);
		if (hwloc_bitmap_iszero(cpus))
			continue;
		unsigned id = type == HWLOC_OBJ_L3CACHE ? o->logical_index : o->os_index;
		if (group_add(out, id, false, cpus) == NULL)
			return -ENOMEM;
		hwloc_bitmap_andnot(rest, rest, cpus);
	}
	if (out->n == 0)
		return 0;
	for (size_t i = 0; split != NULL && i < split->n && !hwloc_bitmap_iszero(rest); i++) {
		hwloc_bitmap_and(cpus, rest, split->v[i].cpus);
		if (hwloc_bitmap_iszero(cpus))
			continue;
		if (group_add(out, (unsigned)hwloc_bitmap_first(cpus), true, cpus) == NULL)
			return -ENOMEM;
		hwloc_bitmap_andnot(rest, rest, cpus);
	}
	if (!hwloc_bitmap_iszero(rest) &&
	    group_add(out, (unsigned)hwloc_bitmap_first(rest), true, rest) == NULL)
		return -ENOMEM;
	qsort(out->v, out->n, sizeof(*out->v), cmp_group);
	return 0;
}

/* Cores; a PU under no core is a core of its own (single-PU pseudo-core). */
static int build_core_groups(struct ts_topology *t, struct group_list *out)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t rest = hwloc_bitmap_dup(t->online);
	hwloc_obj_t o = NULL;
	unsigned pu;

	if (cpus == NULL || rest == NULL)
		return -ENOMEM;
	while ((o = hwloc_get_next_obj_by_type(t->hwloc, HWLOC_OBJ_CORE, o)) != NULL) {
		hwloc_bitmap_and(cpus, o->cpuset, rest);
		if (hwloc_bitmap_iszero(cpus))
			continue;
		if (group_add(out, o->os_index, false, cpus) == NULL)
			return -ENOMEM;
		hwloc_bitmap_andnot(rest, rest, cpus);
	}
	hwloc_bitmap_foreach_begin(pu, rest)
		{
			hwloc_bitmap_only(cpus, pu);
			if (group_add(out, pu, true, cpus) == NULL)
				return -ENOMEM;
		}
	hwloc_bitmap_foreach_end();
	qsort(out->v, out->n, sizeof(*out->v), cmp_group);
	return 0;
}

/* Nodes whose memory a container may be given by default: DRAM nodes with
 * memory, else any node with memory, else every node. */
static void default_memory_nodes(const struct ts_topology *t, hwloc_bitmap_t out)
{
	hwloc_bitmap_zero(out);
	for (size_t i = 0; i < t->n_numa_nodes; i++)
		if (t->numa_nodes[i].has_memory && t->numa_nodes[i].tier == TS_MEMORY_TIER_DRAM)
			hwloc_bitmap_set(out, t->numa_nodes[i].os_index);
	for (size_t i = 0; hwloc_bitmap_iszero(out) && i < t->n_numa_nodes; i++)
		if (t->numa_nodes[i].has_memory)
			hwloc_bitmap_set(out, t->numa_nodes[i].os_index);
	for (size_t i = 0; hwloc_bitmap_iszero(out) && i < t->n_numa_nodes; i++)
		hwloc_bitmap_set(out, t->numa_nodes[i].os_index);
}

/* Keep hwloc's NUMA latency matrix (the first one) in the topology, so
 * that the mems of a tier need no hwloc at placement time. */
static int keep_latencies(struct ts_topology *t)
{
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1;

	if (hwloc_distances_get_by_type(t->hwloc, HWLOC_OBJ_NUMANODE, &nr, &d,
					HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) < 0 ||
	    nr < 1 || d == NULL)
		return 0;
	t->latency_os = calloc(d->nbobjs + 1, sizeof(*t->latency_os));
	t->latency = calloc((size_t)d->nbobjs * d->nbobjs + 1, sizeof(*t->latency));
	if (t->latency_os == NULL || t->latency == NULL) {
		hwloc_distances_release(t->hwloc, d);
		return -ENOMEM;
	}
	t->n_latency = d->nbobjs;
	for (unsigned i = 0; i < d->nbobjs; i++)
		t->latency_os[i] = d->objs[i]->os_index;
	for (size_t i = 0; i < (size_t)d->nbobjs * d->nbobjs; i++)
		t->latency[i] = d->values[i];
	hwloc_distances_release(t->hwloc, d);
	return 0;
}

/* Into out, the nodes of cand nearest to any node of from in the latency
 * matrix (all on a tie).  @return false when it relates none of them. */
static bool nearest_by_distance(const struct ts_topology *t, hwloc_const_bitmap_t from,
				hwloc_const_bitmap_t cand, hwloc_bitmap_t out)
{
	uint64_t best = UINT64_MAX;
	size_t n = t->n_latency;

	hwloc_bitmap_zero(out);
	for (size_t i = 0; i < n; i++) {
		if (!hwloc_bitmap_isset(from, t->latency_os[i]))
			continue;
		for (size_t j = 0; j < n; j++) {
			uint64_t v = t->latency[i * n + j];

			if (!hwloc_bitmap_isset(cand, t->latency_os[j]) || v > best)
				continue;
			if (v < best)
				hwloc_bitmap_zero(out);
			best = v;
			hwloc_bitmap_set(out, t->latency_os[j]);
		}
	}
	return !hwloc_bitmap_iszero(out);
}

/* Home mems of a domain whose own node gives none: by distance from its
 * node, else the memory nodes of the closest enclosing object. */
static void home_mems(const struct ts_topology *t, struct ts_cpu_group *g,
		      hwloc_const_bitmap_t cand, hwloc_bitmap_t tmp)
{
	hwloc_obj_t o;

	if (g->numa_node >= 0 && hwloc_bitmap_isset(cand, (unsigned)g->numa_node)) {
		hwloc_bitmap_only(g->mems, (unsigned)g->numa_node);
		g->mems_how = "local";
		return;
	}
	if (g->numa_node >= 0) {
		hwloc_bitmap_only(tmp, (unsigned)g->numa_node);
		if (nearest_by_distance(t, tmp, cand, g->mems)) {
			g->mems_how = "distance";
			return;
		}
		o = hwloc_get_numanode_obj_by_os_index(t->hwloc, (unsigned)g->numa_node);
	} else {
		o = hwloc_get_pu_obj_by_os_index(t->hwloc, (unsigned)hwloc_bitmap_first(g->cpus));
	}
	for (o = o != NULL ? o->parent : NULL; o != NULL; o = o->parent) {
		hwloc_bitmap_and(g->mems, o->nodeset, cand);
		if (!hwloc_bitmap_iszero(g->mems)) {
			g->mems_how = hwloc_obj_type_string(o->type);
			return;
		}
	}
	hwloc_bitmap_copy(g->mems, cand);
	g->mems_how = "Machine";
}

/* NUMA domains: one per node that owns PUs, placeholders for the rest (one
 * per largest subtree without a NUMA node), each with its home mems. */
static int build_numa_groups(struct ts_topology *t, struct group_list *out)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t rest = hwloc_bitmap_dup(t->online);
	cleanup_hwloc_bitmap hwloc_bitmap_t cand = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t tmp = hwloc_bitmap_alloc();
	int r = 0;

	if (rest == NULL || cand == NULL || tmp == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < t->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &t->numa_nodes[i];
		struct ts_cpu_group *g;

		if (n->memory_only)
			continue;
		g = group_add(out, n->os_index, false, n->cpus);
		if (g == NULL)
			return -ENOMEM;
		g->numa_node = (int)n->os_index;
		hwloc_bitmap_andnot(rest, rest, n->cpus);
	}
	while (!hwloc_bitmap_iszero(rest)) {
		hwloc_obj_t o =
			hwloc_get_pu_obj_by_os_index(t->hwloc, (unsigned)hwloc_bitmap_first(rest));

		while (o != NULL && o->parent != NULL && hwloc_bitmap_iszero(o->parent->nodeset))
			o = o->parent;
		if (o == NULL)
			hwloc_bitmap_copy(tmp, rest);
		else
			hwloc_bitmap_and(tmp, o->cpuset, rest);
		if (hwloc_bitmap_iszero(tmp))
			hwloc_bitmap_only(tmp, (unsigned)hwloc_bitmap_first(rest));
		if (group_add(out, (unsigned)hwloc_bitmap_first(tmp), true, tmp) == NULL)
			return -ENOMEM;
		hwloc_bitmap_andnot(rest, rest, tmp);
	}
	qsort(out->v, out->n, sizeof(*out->v), cmp_group);
	default_memory_nodes(t, cand);
	for (size_t i = 0; i < out->n && r == 0; i++) {
		out->v[i].mems = hwloc_bitmap_alloc();
		if (out->v[i].mems == NULL)
			r = -ENOMEM;
		else
			home_mems(t, &out->v[i], cand, tmp);
	}
	return r;
}

static int build_groups(struct ts_topology *t)
{
	struct group_list l[_TS_CPU_LEVEL_MAX] = {{0}};
	int r;

	r = build_numa_groups(t, &l[TS_CPU_LEVEL_NUMA]);
	if (r == 0)
		r = build_type_groups(t, HWLOC_OBJ_PACKAGE, NULL, &l[TS_CPU_LEVEL_PACKAGE]);
	if (r == 0)
		r = build_type_groups(t, HWLOC_OBJ_L3CACHE, &l[TS_CPU_LEVEL_NUMA],
				      &l[TS_CPU_LEVEL_L3]);
	if (r == 0)
		r = build_core_groups(t, &l[TS_CPU_LEVEL_CORE]);
	for (int i = 0; i < _TS_CPU_LEVEL_MAX; i++) {
		t->groups[i] = l[i].v;
		t->n_groups[i] = l[i].n;
	}
	if (r < 0)
		return r;
	int last = hwloc_bitmap_last(t->online);
	t->n_pu_slots = last < 0 ? 0 : (unsigned)last + 1;
	t->numa_group_of_pu = malloc((t->n_pu_slots + 1) * sizeof(*t->numa_group_of_pu));
	if (t->numa_group_of_pu == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < t->n_pu_slots; i++)
		t->numa_group_of_pu[i] = -1;
	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++) {
		unsigned pu;
		hwloc_bitmap_foreach_begin(pu, t->groups[TS_CPU_LEVEL_NUMA][i].cpus)
			{
				t->numa_group_of_pu[pu] = (int)i;
			}
		hwloc_bitmap_foreach_end();
	}
	return 0;
}

/* ---- CPU kinds -------------------------------------------------------- */

static uint64_t info_number(const struct hwloc_info_s *infos, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(infos[i].name, name) == 0)
			return strtoull(infos[i].value, NULL, 10);
	return 0;
}

/* Order: hwloc's efficiency when every kind has one, else capacity, then
 * frequency. */
static int cmp_kind(const void *a, const void *b)
{
	const struct ts_cpu_kind *x = a, *y = b;

	if (x->efficiency != y->efficiency)
		return x->efficiency < y->efficiency ? -1 : 1;
	if (x->capacity != y->capacity)
		return x->capacity < y->capacity ? -1 : 1;
	if (x->frequency_mhz != y->frequency_mhz)
		return x->frequency_mhz < y->frequency_mhz ? -1 : 1;
	return hwloc_bitmap_compare_first(x->cpus, y->cpus);
}

/* Score from one measure when every kind has it and it grows with the
 * ranking (a measure that contradicts hwloc's order is not used).
 * @return false when the measure cannot score the kinds. */
static bool score_by(struct ts_cpu_kind *k, size_t n, uint64_t (*get)(const struct ts_cpu_kind *))
{
	uint64_t lo = get(&k[0]), hi = get(&k[n - 1]);

	for (size_t i = 0; i < n; i++)
		if (get(&k[i]) == 0 || (i > 0 && get(&k[i]) < get(&k[i - 1])))
			return false;
	if (hi == lo)
		return false;
	for (size_t i = 0; i < n; i++)
		k[i].score = (double)(get(&k[i]) - lo) / (double)(hi - lo);
	return true;
}

static uint64_t get_capacity(const struct ts_cpu_kind *k)
{
	return k->capacity;
}

static uint64_t get_frequency(const struct ts_cpu_kind *k)
{
	return k->frequency_mhz;
}

static bool same_rank(const struct ts_cpu_kind *x, const struct ts_cpu_kind *y)
{
	return x->efficiency == y->efficiency && x->capacity == y->capacity &&
	       x->frequency_mhz == y->frequency_mhz;
}

/* Rank every kind hwloc reports and score it (see "CPU kinds"). */
static int build_kinds(struct ts_topology *t)
{
	int nr = hwloc_cpukinds_get_nr(t->hwloc, 0);
	bool eff_known = true, cap_known = true, freq_known = true;
	size_t n = 0;

	if (nr <= 0)
		return 0;
	t->cpu_kinds = calloc((size_t)nr, sizeof(*t->cpu_kinds));
	if (t->cpu_kinds == NULL)
		return -ENOMEM;
	for (int i = 0; i < nr; i++) {
		struct ts_cpu_kind *k = &t->cpu_kinds[n];
		struct hwloc_info_s *infos = NULL;
		unsigned ninfos = 0;
		int eff = -1;

		k->cpus = hwloc_bitmap_alloc();
		if (k->cpus == NULL)
			return -ENOMEM;
		if (hwloc_cpukinds_get_info(t->hwloc, (unsigned)i, k->cpus, &eff, &ninfos, &infos,
					    0) < 0) {
			hwloc_bitmap_free(k->cpus);
			continue;
		}
		hwloc_bitmap_and(k->cpus, k->cpus, t->online);
		if (hwloc_bitmap_iszero(k->cpus)) {
			hwloc_bitmap_free(k->cpus);
			continue;
		}
		k->efficiency = eff;
		k->capacity = info_number(infos, ninfos, "LinuxCapacity");
		k->frequency_mhz = (unsigned)info_number(infos, ninfos, "FrequencyMaxMHz");
		if (k->frequency_mhz == 0)
			k->frequency_mhz = (unsigned)info_number(infos, ninfos, "FrequencyBaseMHz");
		eff_known &= eff >= 0;
		cap_known &= k->capacity > 0;
		freq_known &= k->frequency_mhz > 0;
		n++;
	}
	t->n_cpu_kinds = n;
	if (n < 2)
		return 0;
	if (!eff_known)
		for (size_t i = 0; i < n; i++)
			t->cpu_kinds[i].efficiency = -1;
	if (!eff_known && !cap_known && !freq_known)
		return 0; /* kinds hwloc cannot tell apart: no preference */
	qsort(t->cpu_kinds, n, sizeof(*t->cpu_kinds), cmp_kind);
	t->kinds_ranked_by = eff_known ? "efficiency" : cap_known ? "capacity" : "frequency";
	if (cap_known && score_by(t->cpu_kinds, n, get_capacity)) {
		t->kinds_scored_by = "capacity";
	} else if (freq_known && score_by(t->cpu_kinds, n, get_frequency)) {
		t->kinds_scored_by = "frequency";
	} else {
		size_t rank = 0, ranks = 0;

		for (size_t i = 1; i < n; i++)
			ranks += !same_rank(&t->cpu_kinds[i], &t->cpu_kinds[i - 1]);
		for (size_t i = 0; i < n; i++) {
			rank += i > 0 && !same_rank(&t->cpu_kinds[i], &t->cpu_kinds[i - 1]);
			t->cpu_kinds[i].score = ranks > 0 ? (double)rank / (double)ranks : 1.0;
		}
		t->kinds_scored_by = "rank";
	}
	(void)ts_topology_kinds_split(t, TS_TOPOLOGY_KIND_THRESHOLD_DEFAULT, t->performance_cpus,
				      t->efficiency_cpus);
	return 0;
}

bool ts_topology_kinds_split(const struct ts_topology *topo, double threshold, hwloc_bitmap_t perf,
			     hwloc_bitmap_t eff)
{
	hwloc_bitmap_zero(perf);
	hwloc_bitmap_zero(eff);
	if (topo->kinds_scored_by == NULL)
		return false;
	for (size_t i = 0; i < topo->n_cpu_kinds; i++) {
		const struct ts_cpu_kind *k = &topo->cpu_kinds[i];
		hwloc_bitmap_or(k->score >= threshold ? perf : eff,
				k->score >= threshold ? perf : eff, k->cpus);
	}
	if (hwloc_bitmap_iszero(perf) || hwloc_bitmap_iszero(eff)) {
		hwloc_bitmap_zero(perf);
		hwloc_bitmap_zero(eff);
		return false;
	}
	return true;
}

/* Take a loaded hwloc topology and derive the tables. */
static int wrap(hwloc_topology_t h, const char *source, struct ts_topology **ret,
		struct ts_error **err)
{
	cleanup_topology struct ts_topology *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, ENOMEM, "%s: out of memory", source);
	}
	t->hwloc = h;
	t->online = hwloc_bitmap_alloc();
	t->performance_cpus = hwloc_bitmap_alloc();
	t->efficiency_cpus = hwloc_bitmap_alloc();
	t->source = strdup(source);
	if (t->online == NULL || t->performance_cpus == NULL || t->efficiency_cpus == NULL ||
	    t->source == NULL)
		return ts_error_set(err, ENOMEM, "%s: out of memory", source);
	hwloc_bitmap_and(t->online, hwloc_topology_get_topology_cpuset(h),
			 hwloc_topology_get_allowed_cpuset(h));
	t->smt_width = 1;
	hwloc_obj_t core = NULL;
	while ((core = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_CORE, core)) != NULL) {
		int w = hwloc_bitmap_weight(core->cpuset);
		if (w > (int)t->smt_width)
			t->smt_width = (unsigned)w;
	}
	if (build_numa_table(t) < 0 || keep_latencies(t) < 0 || build_groups(t) < 0 ||
	    build_kinds(t) < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", source);
	*ret = TAKE_PTR(t);
	return 0;
}

/* hwloc takes some choices only from the environment, read when its
 * components start.  An override is set around one load and restored, so
 * nothing leaks into the environment the runtime is executed with. */
struct env_override {
	const char *name;
	char *saved; /* previous value, NULL if unset */
};

static int env_push(struct env_override *o, const char *name, const char *value)
{
	const char *old = getenv(name);

	o->name = name;
	o->saved = NULL;
	if (old != NULL && (o->saved = strdup(old)) == NULL)
		return -ENOMEM;
	if (setenv(name, value, 1) < 0) {
		free(o->saved);
		return -errno;
	}
	return 0;
}

static void env_pop(struct env_override *o)
{
	if (o->saved != NULL)
		(void)setenv(o->name, o->saved, 1); /* restoring a value that fit before */
	else
		(void)unsetenv(o->name);
	free(o->saved);
	o->saved = NULL;
}

/* hwloc_topology_load() with hwloc's own stderr messages off ("hwloc:
 * Topology does not contain any NUMA node, aborting!"): toposhim reports
 * the failure in its one line, and engines read the runtime's stderr.
 * HWLOC_HIDE_ERRORS is honoured when the caller set it. */
static int quiet_load(hwloc_topology_t h)
{
	struct env_override o = {.name = NULL};
	bool pushed =
		getenv("HWLOC_HIDE_ERRORS") == NULL && env_push(&o, "HWLOC_HIDE_ERRORS", "2") == 0;
	int r = hwloc_topology_load(h);
	int e = errno;

	if (pushed)
		env_pop(&o);
	errno = e;
	return r;
}

/* No hwloc plugin is loaded (HWLOC_PLUGINS_PATH "" while hwloc's
 * components start, at the first topology of the process): the XML loads
 * need none (see ts_topology_load_xml()), and a host's PCI and OS devices
 * come from hwloc's built-in Linux backend, which reads them from sysfs as
 * the pci plugin (libpciaccess) does.  So every toposhim process sees the
 * same topology, whether its hwloc is a shared library or linked into a
 * static core (configure --enable-static-core), where loading a plugin
 * (itself linked against the shared libhwloc) cannot work; and a cache
 * miss costs no dlopen of four plugins (about 7 M instructions). */
static int new_hwloc(hwloc_topology_t *ret, const char *what, struct ts_error **err)
{
	struct env_override o;
	hwloc_topology_t h;
	int r, e;

	if (env_push(&o, "HWLOC_PLUGINS_PATH", "") < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", what);
	r = hwloc_topology_init(&h);
	e = errno;
	env_pop(&o);
	if (r < 0)
		return ts_error_set(err, e ? e : ENOMEM, "%s: hwloc init failed", what);
	(void)hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	/* placement never looks below L3 (see topology.h) */
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L1CACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L2CACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L1ICACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L2ICACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L3ICACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	*ret = h;
	return 0;
}

static int finish_load(hwloc_topology_t h, const char *what, const char *msg,
		       struct ts_topology **ret, struct ts_error **err)
{
	if (quiet_load(h) < 0) {
		int e = errno ? errno : EINVAL;
		hwloc_topology_destroy(h);
		return ts_error_set(err, e == ENOSYS ? EINVAL : e, "%s: %s", what, msg);
	}
	return wrap(h, what, ret, err);
}

/* XML needs none of hwloc's plugins (GL, OpenCL, PCI, libxml2), and
 * loading them costs about 3 ms of CPU against 1.4 ms for the whole XML
 * load of the 384-PU corpus file (tests/bench/bench-placement): the 2 ms
 * warm-load target needs them off.  hwloc's built-in XML parser reads every
 * corpus file.  HWLOC_PLUGINS_PATH is read when hwloc's components start,
 * i.e. at the first topology of the process (toposhim holds one at a time). */
static int load_xml_file(const char *path, struct ts_topology **ret, struct ts_error **err);
static int load_xml_buffer(const char *buf, const char *name, struct ts_topology **ret,
			   struct ts_error **err);

int ts_topology_load_xml(const char *path, struct ts_topology **ret, struct ts_error **err)
{
	struct env_override o;
	int r;

	if (env_push(&o, "HWLOC_PLUGINS_PATH", "") < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", path);
	r = load_xml_file(path, ret, err);
	env_pop(&o);
	return r;
}

int ts_topology_load_xml_buffer(const char *buf, const char *name, struct ts_topology **ret,
				struct ts_error **err)
{
	struct env_override o;
	int r;

	if (env_push(&o, "HWLOC_PLUGINS_PATH", "") < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", name);
	r = load_xml_buffer(buf, name, ret, err);
	env_pop(&o);
	return r;
}

static int load_xml_file(const char *path, struct ts_topology **ret, struct ts_error **err)
{
	hwloc_topology_t h;
	int r;

	struct stat st;

	if (access(path, R_OK) < 0 || stat(path, &st) < 0)
		return ts_error_set(err, errno, "%s: cannot read topology", path);
	/* hwloc would read a FIFO or /dev/zero without end */
	if (!S_ISREG(st.st_mode))
		return ts_error_set(err, 0, "%s: not a regular file", path);
	if (st.st_size > (off_t)TS_TOPOLOGY_XML_MAX_BYTES)
		return ts_error_set(err, EFBIG, "%s: larger than %u bytes", path,
				    TS_TOPOLOGY_XML_MAX_BYTES);
	r = new_hwloc(&h, path, err);
	if (r < 0)
		return r;
	if (hwloc_topology_set_xml(h, path) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", path);
	}
	errno = 0;
	if (quiet_load(h) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", path);
	}
	return wrap(h, path, ret, err);
}

static int load_xml_buffer(const char *buf, const char *name, struct ts_topology **ret,
			   struct ts_error **err)
{
	hwloc_topology_t h;
	size_t len = strlen(buf);
	int r;

	r = new_hwloc(&h, name, err);
	if (r < 0)
		return r;
	if (len > INT32_MAX || hwloc_topology_set_xmlbuffer(h, buf, (int)len + 1) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", name);
	}
	if (quiet_load(h) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", name);
	}
	return wrap(h, name, ret, err);
}

int ts_topology_load_synthetic(const char *desc, struct ts_topology **ret, struct ts_error **err)
{
	hwloc_topology_t h;
	int r;

	r = new_hwloc(&h, "synthetic topology", err);
	if (r < 0)
		return r;
	if (hwloc_topology_set_synthetic(h, desc) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "synthetic topology: invalid description '%s'", desc);
	}
	return finish_load(h, "synthetic topology", "load failed", ret, err);
}

int ts_topology_load_sysfs(const char *root, struct ts_topology **ret, struct ts_error **err)
{
	cleanup_free char *probe = NULL;
	struct env_override o;
	hwloc_topology_t h;
	int r;

	if (asprintf(&probe, "%s/sys/devices/system/cpu", root) < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", root);
	if (access(probe, R_OK) < 0)
		return ts_error_set(err, errno, "%s: no sysfs tree (sys/devices/system/cpu)", root);
	r = new_hwloc(&h, root, err);
	if (r < 0)
		return r;
	/* the x86 backend would read this machine's CPUID into the fake tree */
	(void)hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
	/* hwloc takes the tree's root only from HWLOC_FSROOT, read when the
	 * Linux backend starts */
	r = env_push(&o, "HWLOC_FSROOT", root);
	if (r < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, -r, "%s: cannot select the sysfs root", root);
	}
	r = finish_load(h, root, "cannot read the sysfs tree", ret, err);
	env_pop(&o);
	return r;
}

int ts_topology_load_host(struct ts_topology **ret, struct ts_error **err)
{
	hwloc_topology_t h;
	int r;

	r = new_hwloc(&h, "host topology", err);
	if (r < 0)
		return r;
	/* no plugin (new_hwloc()): no gl (probes X servers) or opencl (runs the
	 * ICD loader), which cost milliseconds and leak (valgrind, hwloc 2.9);
	 * PCI and OS devices, which locality uses, come from the Linux backend */
	return finish_load(h, "host topology", "discovery failed", ret, err);
}

int ts_topology_export_xml(const struct ts_topology *topo, char **ret, struct ts_error **err)
{
	char *buf = NULL;
	int len = 0;
	char *copy;

	if (topo->hwloc == NULL)
		return ts_error_set(err, 0, "%s: xml export failed: no hwloc tree (a snapshot)",
				    topo->source);
	if (hwloc_topology_export_xmlbuffer(topo->hwloc, &buf, &len, 0) < 0)
		return ts_error_set(err, errno ? errno : EINVAL, "topology: xml export failed");
	copy = strdup(buf);
	hwloc_free_xmlbuffer(topo->hwloc, buf);
	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "topology: out of memory");
	*ret = copy;
	return 0;
}

/* The strict grammar (ts_cpulist_valid) first: hwloc's list parser accepts
 * things like "0-" (infinite) or "3-1" silently. */
int ts_cpulist_parse(const char *s, hwloc_bitmap_t *ret, struct ts_error **err)
{
	hwloc_bitmap_t b;

	if (s == NULL || !ts_cpulist_valid(s))
		return ts_error_set(err, 0, "invalid cpu list '%s'", s != NULL ? s : "(null)");
	b = hwloc_bitmap_alloc();
	if (b == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	/* Decimal, as ts_cpulist_valid() checked: not hwloc_bitmap_list_sscanf(),
	 * whose strtoul base 0 reads "010" as cpu 8 and "08" as cpu 0. */
	for (const char *p = s; *p != '\0';) {
		unsigned first = 0, last;

		p = ts_cpulist_number(p, &first);
		last = first;
		if (*p == '-')
			p = ts_cpulist_number(p + 1, &last);
		if (hwloc_bitmap_set_range(b, first, (int)last) < 0) {
			hwloc_bitmap_free(b);
			return ts_error_set(err, ENOMEM, "out of memory");
		}
		if (*p == ',')
			p++;
	}
	*ret = b;
	return 0;
}

int ts_cpulist_format(hwloc_const_bitmap_t set, char **ret, struct ts_error **err)
{
	char *s = NULL;

	if (hwloc_bitmap_weight(set) < 0)
		return ts_error_set(err, 0, "invalid cpu list: infinite set");
	if (hwloc_bitmap_iszero(set))
		s = strdup("");
	else if (hwloc_bitmap_list_asprintf(&s, set) < 0)
		s = NULL;
	if (s == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	*ret = s;
	return 0;
}

const struct ts_numa_node *ts_topology_numa_node(const struct ts_topology *topo, unsigned os_index)
{
	for (size_t i = 0; i < topo->n_numa_nodes; i++)
		if (topo->numa_nodes[i].os_index == os_index)
			return &topo->numa_nodes[i];
	return NULL;
}

void ts_topology_numa_of_cpus(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
			      hwloc_bitmap_t nodes)
{
	hwloc_bitmap_zero(nodes);
	for (size_t i = 0; i < topo->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &topo->numa_nodes[i];
		if (!n->memory_only && hwloc_bitmap_intersects(n->cpus, cpus))
			hwloc_bitmap_set(nodes, n->os_index);
	}
}

void ts_topology_cpus_of_numa(const struct ts_topology *topo, hwloc_const_bitmap_t nodes,
			      hwloc_bitmap_t cpus)
{
	hwloc_bitmap_zero(cpus);
	for (size_t i = 0; i < topo->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &topo->numa_nodes[i];
		if (hwloc_bitmap_isset(nodes, n->os_index))
			hwloc_bitmap_or(cpus, cpus, n->cpus);
	}
}

const char *ts_cpu_level_to_string(enum ts_cpu_level level)
{
	static const char *const names[_TS_CPU_LEVEL_MAX] = {
		[TS_CPU_LEVEL_PACKAGE] = "package",
		[TS_CPU_LEVEL_NUMA] = "numa node",
		[TS_CPU_LEVEL_L3] = "l3 group",
		[TS_CPU_LEVEL_CORE] = "core",
	};

	if ((int)level < 0 || level >= _TS_CPU_LEVEL_MAX)
		return NULL;
	return names[level];
}

const struct ts_cpu_group *ts_topology_numa_group_of_pu(const struct ts_topology *topo, unsigned pu)
{
	if (pu >= topo->n_pu_slots || topo->numa_group_of_pu[pu] < 0)
		return NULL;
	return &topo->groups[TS_CPU_LEVEL_NUMA][topo->numa_group_of_pu[pu]];
}

/* Nodes of a tier near cpus, added to mems (see ts_topology_mems_for()).
 * @return false when the machine has no node with memory of the tier. */
static bool add_tier_nodes(const struct ts_topology *t, hwloc_const_bitmap_t cpus,
			   enum ts_memory_tier tier, hwloc_bitmap_t mems)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t cand = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t near = hwloc_bitmap_alloc();

	if (cand == NULL || near == NULL)
		return false;
	for (size_t i = 0; i < t->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &t->numa_nodes[i];
		if (n->tier != tier || !n->has_memory)
			continue;
		hwloc_bitmap_set(cand, n->os_index);
		if (hwloc_bitmap_intersects(n->local_cpus, cpus))
			hwloc_bitmap_set(near, n->os_index);
	}
	if (hwloc_bitmap_iszero(cand))
		return false;
	if (hwloc_bitmap_iszero(near) && !nearest_by_distance(t, mems, cand, near))
		hwloc_bitmap_copy(near, cand);
	hwloc_bitmap_or(mems, mems, near);
	return true;
}

int ts_topology_mems_for(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
			 enum ts_memory_tier tier, hwloc_bitmap_t mems)
{
	const struct ts_cpu_group *g = topo->groups[TS_CPU_LEVEL_NUMA];

	hwloc_bitmap_zero(mems);
	for (size_t i = 0; i < topo->n_groups[TS_CPU_LEVEL_NUMA]; i++)
		if (hwloc_bitmap_intersects(g[i].cpus, cpus))
			hwloc_bitmap_or(mems, mems, g[i].mems);
	if (hwloc_bitmap_iszero(mems))
		return -ENODATA;
	if (tier != TS_MEMORY_TIER_DRAM && !add_tier_nodes(topo, cpus, tier, mems))
		return -ENOENT;
	return 0;
}
