/* describe.c - placement facts as JSON trees, for toposhimctl. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/internal.h"
#include "util/cleanup.h"

struct report {
	struct ts_json *root;
	bool oom;
};

static void put(struct report *r, struct ts_json *obj, const char *key, struct ts_json *v)
{
	cleanup_error struct ts_error *err = NULL;

	if (ts_json_object_set(obj, key, v, &err) < 0)
		r->oom = true;
}

static struct ts_json *list_str(hwloc_const_bitmap_t set)
{
	cleanup_free char *s = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_cpulist_format(set, &s, &err) < 0)
		return NULL;
	return ts_json_new_string(s);
}

static struct ts_json *append_obj(struct report *r, struct ts_json *arr)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_json *o = ts_json_new_object();

	if (ts_json_array_append(arr, o, &err) < 0) {
		r->oom = true;
		return NULL;
	}
	return o;
}

static void add_objects(struct report *r, const struct ts_topology *t, const char *key,
			hwloc_obj_type_t type, bool logical)
{
	struct ts_json *arr = ts_json_new_array();
	hwloc_obj_t o = NULL;

	put(r, r->root, key, arr);
	if (r->oom)
		return;
	while ((o = hwloc_get_next_obj_by_type(t->hwloc, type, o)) != NULL) {
		struct ts_json *e = append_obj(r, arr);
		cleanup_hwloc_bitmap hwloc_bitmap_t cpus = hwloc_bitmap_alloc();

		if (e == NULL || cpus == NULL) {
			r->oom = true;
			return;
		}
		hwloc_bitmap_and(cpus, o->cpuset, t->online);
		put(r, e, logical ? "logical_index" : "os_index",
		    ts_json_new_uint(logical ? o->logical_index : o->os_index));
		put(r, e, "cpus", list_str(cpus));
	}
}

static void add_numa(struct report *r, const struct ts_topology *t)
{
	struct ts_json *arr = ts_json_new_array();

	put(r, r->root, "numa_nodes", arr);
	for (size_t i = 0; !r->oom && i < t->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &t->numa_nodes[i];
		struct ts_json *e = append_obj(r, arr);

		if (e == NULL)
			return;
		put(r, e, "os_index", ts_json_new_uint(n->os_index));
		put(r, e, "cpus", list_str(n->cpus));
		put(r, e, "local_cpus", list_str(n->local_cpus));
		put(r, e, "memory_bytes", ts_json_new_uint(n->memory_bytes));
		put(r, e, "tier", ts_json_new_string(ts_memory_tier_to_string(n->tier)));
		put(r, e, "memory_only", ts_json_new_bool(n->memory_only));
	}
}

static bool interesting_pci(hwloc_obj_t o)
{
	unsigned cls = o->attr->pcidev.class_id;

	/* GPUs, InfiniBand, NVMe, processing accelerators */
	return (cls >> 8) == 0x03 || cls == 0x0207 || cls == 0x0108 || (cls >> 8) == 0x12;
}

static void add_device(struct report *r, struct ts_json *arr, const char *name, const char *pci,
		       hwloc_obj_t o)
{
	hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(NULL, o);
	struct ts_json *e = append_obj(r, arr);

	if (e == NULL)
		return;
	put(r, e, "name", ts_json_new_string(name));
	put(r, e, "pci", pci != NULL ? ts_json_new_string(pci) : ts_json_new_null());
	put(r, e, "numa_nodes", anc != NULL ? list_str(anc->nodeset) : ts_json_new_string(""));
}

static void pci_address(hwloc_obj_t p, char *buf, size_t len)
{
	snprintf(buf, len, "%04x:%02x:%02x.%01x", p->attr->pcidev.domain, p->attr->pcidev.bus,
		 p->attr->pcidev.dev, p->attr->pcidev.func);
}

static void add_devices(struct report *r, const struct ts_topology *t)
{
	struct ts_json *arr = ts_json_new_array();
	hwloc_obj_t o = NULL;
	char buf[32];

	put(r, r->root, "devices", arr);
	while (!r->oom && (o = hwloc_get_next_osdev(t->hwloc, o)) != NULL) {
		hwloc_obj_t p = o->parent;
		const char *pci = NULL;

		if (p != NULL && p->type == HWLOC_OBJ_PCI_DEVICE) {
			pci_address(p, buf, sizeof(buf));
			pci = buf;
		}
		add_device(r, arr, o->name != NULL ? o->name : "?", pci, o);
	}
	/* PCI devices that matter for placement but have no OS device (GPUs
	 * seen only on the bus, as in the JURECA-DC dump) */
	while (!r->oom && (o = hwloc_get_next_pcidev(t->hwloc, o)) != NULL) {
		if (o->io_first_child != NULL || !interesting_pci(o))
			continue;
		pci_address(o, buf, sizeof(buf));
		add_device(r, arr, "pci", buf, o);
	}
}

static struct ts_json *number(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.2f", v);
	return ts_json_new_number_raw(buf);
}

/* The ranked kinds, slowest first, and the split at the threshold. */
static void add_kinds(struct report *r, const struct ts_topology *t, double threshold,
		      struct ts_json *kinds)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t perf = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t eff = hwloc_bitmap_alloc();
	struct ts_json *arr = ts_json_new_array();
	bool split;

	put(r, r->root, "cpu_kinds", kinds);
	if (perf == NULL || eff == NULL || r->oom) {
		ts_json_free(arr);
		r->oom = true;
		return;
	}
	split = ts_topology_kinds_split(t, threshold, perf, eff);
	put(r, kinds, "performance", list_str(perf));
	put(r, kinds, "efficiency", list_str(eff));
	put(r, kinds, "ranked_by",
	    t->kinds_ranked_by != NULL ? ts_json_new_string(t->kinds_ranked_by)
				       : ts_json_new_null());
	put(r, kinds, "scored_by",
	    t->kinds_scored_by != NULL ? ts_json_new_string(t->kinds_scored_by)
				       : ts_json_new_null());
	put(r, kinds, "threshold", number(threshold));
	put(r, kinds, "kinds", arr);
	for (size_t i = 0; !r->oom && i < t->n_cpu_kinds; i++) {
		const struct ts_cpu_kind *k = &t->cpu_kinds[i];
		struct ts_json *e = append_obj(r, arr);
		const char *cls = !split				   ? "any"
				  : hwloc_bitmap_intersects(k->cpus, perf) ? "performance"
									   : "efficiency";

		if (e == NULL)
			return;
		put(r, e, "cpus", list_str(k->cpus));
		put(r, e, "efficiency", ts_json_new_int(k->efficiency));
		put(r, e, "capacity", ts_json_new_uint(k->capacity));
		put(r, e, "frequency_mhz", ts_json_new_uint(k->frequency_mhz));
		put(r, e, "score",
		    t->kinds_scored_by != NULL ? number(k->score) : ts_json_new_null());
		put(r, e, "class", ts_json_new_string(cls));
	}
}

/* NUMA domains: the PUs placement keeps together, with their memory. */
static void add_domains(struct report *r, const struct ts_topology *t)
{
	struct ts_json *arr = ts_json_new_array();

	put(r, r->root, "numa_domains", arr);
	for (size_t i = 0; !r->oom && i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++) {
		const struct ts_cpu_group *g = &t->groups[TS_CPU_LEVEL_NUMA][i];
		struct ts_json *e = append_obj(r, arr);

		if (e == NULL)
			return;
		put(r, e, "numa_node",
		    g->numa_node >= 0 ? ts_json_new_int(g->numa_node) : ts_json_new_null());
		put(r, e, "cpus", list_str(g->cpus));
		put(r, e, "mems", list_str(g->mems));
		put(r, e, "mems_from", ts_json_new_string(g->mems_how));
	}
}

int ts_placement_describe_topology(const struct ts_topology *t, double performance_threshold,
				   struct ts_json **ret, struct ts_error **err)
{
	struct report r = {.root = ts_json_new_object()};
	struct ts_json *kinds = ts_json_new_object();

	if (r.root == NULL) {
		ts_json_free(kinds);
		return ts_error_set(err, ENOMEM, "topology: out of memory");
	}
	put(&r, r.root, "source", ts_json_new_string(t->source));
	put(&r, r.root, "online", list_str(t->online));
	put(&r, r.root, "pus", ts_json_new_uint((uint64_t)hwloc_bitmap_weight(t->online)));
	put(&r, r.root, "smt_width", ts_json_new_uint(t->smt_width));
	add_objects(&r, t, "packages", HWLOC_OBJ_PACKAGE, false);
	add_numa(&r, t);
	add_domains(&r, t);
	add_objects(&r, t, "l3_groups", HWLOC_OBJ_L3CACHE, true);
	put(&r, r.root, "cores",
	    ts_json_new_uint((uint64_t)hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_CORE)));
	add_kinds(&r, t, performance_threshold, kinds);
	add_devices(&r, t);
	if (r.oom) {
		ts_json_free(r.root);
		return ts_error_set(err, ENOMEM, "topology: out of memory");
	}
	*ret = r.root;
	return 0;
}

static struct ts_json *strv_json(char **v)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_json *arr = ts_json_new_array();

	for (size_t i = 0; arr != NULL && v != NULL && v[i] != NULL; i++)
		if (ts_json_array_append(arr, ts_json_new_string(v[i]), &err) < 0)
			return ts_json_free(arr);
	return arr;
}

int ts_placement_result_to_json(const struct ts_placement_result *res, const char *container_id,
				struct ts_json **ret, struct ts_error **err)
{
	struct report r = {.root = ts_json_new_object()};

	if (r.root == NULL)
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	put(&r, r.root, "container_id", ts_json_new_string(container_id));
	put(&r, r.root, "class", ts_json_new_string(res->class_name));
	put(&r, r.root, "pool", ts_json_new_string(ts_placement_pool_to_string(res->pool)));
	put(&r, r.root, "cpus", list_str(res->cpus));
	put(&r, r.root, "mems", list_str(res->mems));
	put(&r, r.root, "shared_pool", list_str(res->shared_pool));
	put(&r, r.root, "existing", ts_json_new_bool(res->existing));
	put(&r, r.root, "affected", strv_json(res->affected));
	put(&r, r.root, "reasons", strv_json(res->reasons));
	if (r.oom) {
		ts_json_free(r.root);
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	*ret = r.root;
	return 0;
}
