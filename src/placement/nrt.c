/*
 * nrt.c - the node as a NodeResourceTopology object (topology.node.k8s.io
 * v1alpha2) for the topology-aware scheduler: see placement.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/internal.h"
#include "util/cleanup.h"

struct nrt {
	bool oom;
};

static void put(struct nrt *n, struct ts_json *obj, const char *key, struct ts_json *v)
{
	cleanup_error struct ts_error *err = NULL;

	if (ts_json_object_set(obj, key, v, &err) < 0)
		n->oom = true;
}

static void push(struct nrt *n, struct ts_json *arr, struct ts_json *v)
{
	cleanup_error struct ts_error *err = NULL;

	if (ts_json_array_append(arr, v, &err) < 0)
		n->oom = true;
}

static struct ts_json *quantity(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return ts_json_new_string(buf);
}

/* {"name": name, "capacity", "allocatable", "available"} appended to arr. */
static void add_resource(struct nrt *n, struct ts_json *arr, const char *name, uint64_t capacity,
			 uint64_t allocatable, uint64_t available)
{
	struct ts_json *r = ts_json_new_object();

	push(n, arr, r);
	if (n->oom)
		return;
	put(n, r, "name", ts_json_new_string(name));
	put(n, r, "capacity", quantity(capacity));
	put(n, r, "allocatable", quantity(allocatable));
	put(n, r, "available", quantity(available));
}

/* {"name": name, "value": value} appended to arr. */
static void add_pair(struct nrt *n, struct ts_json *arr, const char *name, struct ts_json *value)
{
	struct ts_json *p = ts_json_new_object();

	push(n, arr, p);
	if (n->oom) {
		ts_json_free(value);
		return;
	}
	put(n, p, "name", ts_json_new_string(name));
	put(n, p, "value", value);
}

static struct ts_json *zone_name(unsigned os_index)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "node-%u", os_index);
	return ts_json_new_string(buf);
}

static struct ts_json *cpu_list(hwloc_const_bitmap_t set)
{
	cleanup_free char *s = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_cpulist_format(set, &s, &err) < 0)
		return NULL;
	return ts_json_new_string(s);
}

/* The costs of one zone: its row of hwloc's NUMA latency matrix. */
static void add_costs(struct nrt *n, const struct ts_topology *topo, struct ts_json *zone,
		      unsigned os_index)
{
	struct ts_json *costs;
	size_t row = topo->n_latency;

	for (size_t i = 0; i < topo->n_latency; i++)
		if (topo->latency_os[i] == os_index)
			row = i;
	if (row == topo->n_latency)
		return;
	costs = ts_json_new_array();
	put(n, zone, "costs", costs);
	for (size_t c = 0; !n->oom && c < topo->n_latency; c++) {
		struct ts_json *name = zone_name(topo->latency_os[c]);
		struct ts_json *p = ts_json_new_object();

		push(n, costs, p);
		if (n->oom) {
			ts_json_free(name);
			return;
		}
		put(n, p, "name", name);
		put(n, p, "value", ts_json_new_uint(topo->latency[row * topo->n_latency + c]));
	}
}

/* Device kinds local to a NUMA node, sorted, each once. */
static int kinds_of_node(const struct ts_placement_nrt_input *in, unsigned os_index,
			 const char ***ret, size_t *ret_n)
{
	const char **kinds = calloc(in->n_devices + 1, sizeof(*kinds));
	size_t n = 0;

	if (kinds == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < in->n_devices; i++) {
		const struct ts_placement_nrt_device *d = &in->devices[i];
		size_t j = 0;

		if (d->numa_node < 0 || (unsigned)d->numa_node != os_index)
			continue;
		while (j < n && strcmp(kinds[j], d->kind) < 0)
			j++;
		if (j < n && strcmp(kinds[j], d->kind) == 0)
			continue;
		memmove(kinds + j + 1, kinds + j, (n - j) * sizeof(*kinds));
		kinds[j] = d->kind;
		n++;
	}
	*ret = kinds;
	*ret_n = n;
	return 0;
}

static void add_devices(struct nrt *n, const struct ts_placement_nrt_input *in,
			struct ts_json *resources, unsigned os_index)
{
	const char **kinds = NULL;
	size_t nk = 0;

	if (kinds_of_node(in, os_index, &kinds, &nk) < 0) {
		n->oom = true;
		return;
	}
	for (size_t k = 0; !n->oom && k < nk; k++) {
		uint64_t total = 0, held = 0;

		for (size_t i = 0; i < in->n_devices; i++) {
			const struct ts_placement_nrt_device *d = &in->devices[i];

			if (d->numa_node < 0 || (unsigned)d->numa_node != os_index ||
			    strcmp(d->kind, kinds[k]) != 0)
				continue;
			total++;
			held += d->held;
		}
		add_resource(n, resources, kinds[k], total, total, total - held);
	}
	free(kinds);
}

/* The PUs a new exclusive request cannot get (see placement.h): every
 * allocation of the exclusive, NUMA-exclusive and pinned pools; and the
 * NUMA nodes NUMA-exclusive allocations hold whole. */
static int held_sets(const struct ts_placement_nrt_input *in, hwloc_bitmap_t cpus,
		     hwloc_bitmap_t whole_nodes)
{
	for (size_t i = 0; i < in->n_allocs; i++) {
		const struct ts_allocation *a = &in->allocs[i];
		bool numa_exclusive =
			a->numa_exclusive || a->pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE;

		if (a->cpus != NULL &&
		    (numa_exclusive || a->pool == TS_PLACEMENT_POOL_EXCLUSIVE ||
		     a->pool == TS_PLACEMENT_POOL_PINNED) &&
		    hwloc_bitmap_or(cpus, cpus, a->cpus) < 0)
			return -ENOMEM;
		if (numa_exclusive && a->mems != NULL &&
		    hwloc_bitmap_or(whole_nodes, whole_nodes, a->mems) < 0)
			return -ENOMEM;
	}
	return 0;
}

static void add_zone(struct nrt *n, const struct ts_placement_nrt_input *in, struct ts_json *zones,
		     const struct ts_numa_node *node, hwloc_const_bitmap_t reserved,
		     hwloc_const_bitmap_t held, hwloc_const_bitmap_t whole_nodes)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t allocatable = hwloc_bitmap_dup(node->cpus);
	cleanup_hwloc_bitmap hwloc_bitmap_t available = hwloc_bitmap_alloc();
	struct ts_json *zone = ts_json_new_object(), *resources, *attrs;
	uint64_t memory_available = node->memory_bytes;

	push(n, zones, zone);
	if (n->oom || allocatable == NULL || available == NULL ||
	    hwloc_bitmap_andnot(allocatable, allocatable, reserved) < 0 ||
	    hwloc_bitmap_andnot(available, allocatable, held) < 0) {
		n->oom = true;
		return;
	}
	put(n, zone, "name", zone_name(node->os_index));
	put(n, zone, "type", ts_json_new_string("Node"));
	add_costs(n, in->topo, zone, node->os_index);
	attrs = ts_json_new_array();
	put(n, zone, "attributes", attrs);
	if (!hwloc_bitmap_iszero(node->cpus))
		add_pair(n, attrs, "toposhim.io/cpus", cpu_list(node->cpus));
	add_pair(n, attrs, "toposhim.io/memory-tier",
		 ts_json_new_string(ts_memory_tier_to_string(node->tier)));
	resources = ts_json_new_array();
	put(n, zone, "resources", resources);
	if (n->oom)
		return;
	add_resource(n, resources, "cpu", (uint64_t)hwloc_bitmap_weight(node->cpus),
		     (uint64_t)hwloc_bitmap_weight(allocatable),
		     (uint64_t)hwloc_bitmap_weight(available));
	if (hwloc_bitmap_isset(whole_nodes, node->os_index))
		memory_available = 0;
	if (node->memory_bytes > 0)
		add_resource(n, resources, "memory", node->memory_bytes, node->memory_bytes,
			     memory_available);
	add_devices(n, in, resources, node->os_index);
}

static void add_attributes(struct nrt *n, const struct ts_placement_nrt_input *in,
			   struct ts_json *root, hwloc_const_bitmap_t reserved)
{
	const struct ts_placement_config *cfg = in->cfg;
	struct ts_json *attrs = ts_json_new_array();

	put(n, root, "attributes", attrs);
	if (n->oom)
		return;
	add_pair(n, attrs, "topologyManagerPolicy",
		 ts_json_new_string(cfg->enabled ? "best-effort" : "none"));
	add_pair(n, attrs, "topologyManagerScope", ts_json_new_string("container"));
	add_pair(n, attrs, "toposhim.io/placement",
		 ts_json_new_string(cfg->enabled ? "enabled" : "disabled"));
	add_pair(n, attrs, "toposhim.io/reserved-cpus", cpu_list(reserved));
	add_pair(n, attrs, "toposhim.io/full-cores-only",
		 ts_json_new_string(cfg->full_cores_only ? "true" : "false"));
	add_pair(n, attrs, "toposhim.io/distribute-across-numa",
		 ts_json_new_string(cfg->distribute_across_numa ? "true" : "false"));
	add_pair(n, attrs, "toposhim.io/align-by-socket",
		 ts_json_new_string(cfg->align_by_socket ? "true" : "false"));
}

int ts_placement_nrt(const struct ts_placement_nrt_input *in, struct ts_json **ret,
		     struct ts_error **err)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t reserved = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t held = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t whole_nodes = hwloc_bitmap_alloc();
	cleanup_json struct ts_json *root = ts_json_new_object();
	struct ts_json *metadata, *policies, *zones;
	struct nrt n = {0};
	int r;

	if (in->node_name == NULL || in->node_name[0] == '\0')
		return ts_error_set(err, 0, "nodeResourceTopology: empty node name");
	if (root == NULL || held == NULL || whole_nodes == NULL ||
	    held_sets(in, held, whole_nodes) < 0)
		return ts_error_set(err, ENOMEM, "out of memory");
	if (in->cfg->enabled) {
		r = ts_placement_reserved(in->cfg, in->topo, &reserved, err);
		if (r < 0)
			return r;
	} else {
		/* no placement: nothing is reserved or held by toposhim */
		reserved = hwloc_bitmap_alloc();
		hwloc_bitmap_zero(held);
		hwloc_bitmap_zero(whole_nodes);
		if (reserved == NULL)
			return ts_error_set(err, ENOMEM, "out of memory");
	}
	put(&n, root, "apiVersion", ts_json_new_string("topology.node.k8s.io/v1alpha2"));
	put(&n, root, "kind", ts_json_new_string("NodeResourceTopology"));
	metadata = ts_json_new_object();
	put(&n, root, "metadata", metadata);
	if (!n.oom)
		put(&n, metadata, "name", ts_json_new_string(in->node_name));
	/* deprecated in v1alpha2 (the attributes say it), still required by
	 * the CRD of NRT API releases before v0.1 */
	policies = ts_json_new_array();
	put(&n, root, "topologyPolicies", policies);
	if (!n.oom)
		push(&n, policies,
		     ts_json_new_string(in->cfg->enabled ? "BestEffortContainerLevel" : "None"));
	zones = ts_json_new_array();
	put(&n, root, "zones", zones);
	for (size_t i = 0; !n.oom && i < in->topo->n_numa_nodes; i++)
		add_zone(&n, in, zones, &in->topo->numa_nodes[i], reserved, held, whole_nodes);
	if (!n.oom)
		add_attributes(&n, in, root, reserved);
	if (n.oom)
		return ts_error_set(err, ENOMEM, "out of memory");
	*ret = TAKE_PTR(root);
	return 0;
}
