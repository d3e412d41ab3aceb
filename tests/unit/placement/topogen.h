/*
 * topogen.h - generated hwloc topologies for the placement tests.
 *
 * A topology is read into a small tree model from hwloc (a synthetic
 * description, or any hwloc XML such as the corpus files), changed by
 * transformations, and written back as hwloc XML v2 with every cpuset and
 * nodeset recomputed from the tree.  The transformations are the shapes
 * real machines have and the loaders must survive: CPU NUMA nodes without
 * memory (the node removed, so that its PUs are in no node, or kept with no
 * memory), memory-only nodes of every tier, sparse and non-contiguous OS
 * indexes, offline PUs, 1 to 5 CPU kinds, a cgroup parent's cpuset
 * (allowed_cpuset) and a NUMA latency matrix.
 *
 * tg_random() makes one from a seed: a random synthetic description (1-4
 * packages, 1-4 NUMA nodes each, SMT 1/2/4/8, up to 1024 PUs and 64 NUMA
 * nodes) or a given base topology, then random transformations; every step
 * is logged in t->log so that a failing test can say what it ran on.
 *
 * Test code only: aborts on out of memory.
 */
#ifndef TS_TESTS_PLACEMENT_TOPOGEN_H
#define TS_TESTS_PLACEMENT_TOPOGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hwloc.h>

struct tg_obj {
	char *type; /* hwloc XML type name: "Machine", "Package", "NUMANode", ... */
	long os;    /* os_index, -1 for none */
	char *subtype;
	uint64_t memory; /* NUMANode local_memory, bytes (0: none given) */
	bool offline;	 /* PU: in complete_cpuset only */
	bool cpu_node;	 /* NUMANode: the generator meant it to own PUs */
	char *attrs;	 /* more XML attributes, verbatim (caches, groups) */
	struct tg_obj **kids, **mem;
	size_t nkids, nmem;
	struct tg_obj *parent;
};

struct tg_kind {
	hwloc_bitmap_t cpus;
	int efficiency; /* forced_efficiency, -1: not given */
	uint64_t capacity;
	unsigned frequency_mhz;
};

struct tg_topo {
	struct tg_obj *root;
	struct tg_kind *kinds;
	size_t nkinds;
	long *dist_os; /* NUMA latency matrix over these node OS indexes */
	uint64_t *dist;
	size_t ndist;
	hwloc_bitmap_t allowed; /* NULL: every online PU */
	char *log;		/* one line per step */
};

/** From an hwloc synthetic description; NULL if hwloc refuses it. */
struct tg_topo *tg_synthetic(const char *desc);

/** From an hwloc XML file (v1 or v2); NULL if hwloc refuses it. */
struct tg_topo *tg_from_xml_file(const char *path);

/** From a loaded hwloc topology (I/O and Misc objects are left out). */
struct tg_topo *tg_from_hwloc(hwloc_topology_t h);

/** hwloc XML v2 text; caller frees. */
char *tg_xml(const struct tg_topo *t);

void tg_free(struct tg_topo *t);

/* ---- queries -------------------------------------------------------- */

/** The NUMANode of an OS index, or NULL. */
struct tg_obj *tg_numa(const struct tg_topo *t, long os);

/** OS indexes of every NUMA node, of the online PUs (new bitmaps). */
hwloc_bitmap_t tg_numa_set(const struct tg_topo *t);
hwloc_bitmap_t tg_online(const struct tg_topo *t);

/* ---- transformations (each appends to t->log) ----------------------- */

/** A CPU node without memory: removed (its PUs in no node) or with 0 bytes. */
void tg_drop_memory(struct tg_topo *t, long numa_os, bool remove_node);

/** A memory-only node attached beside the objects of `near` (an object of
 * the tree: its locality), or, with near NULL, a GPU-style node with no PU
 * near it.  subtype NULL, "HBM", "NVM", "CXL-DRAM", "GPUMemory". */
void tg_add_memory_only(struct tg_topo *t, struct tg_obj *near, long os, const char *subtype,
			uint64_t bytes);

/** Renumber PUs and NUMA nodes: gaps, SMT siblings numbered apart
 * (c + k * ncores), NUMA nodes out of order; seeded. */
void tg_renumber(struct tg_topo *t, uint64_t seed);

/** Take a PU offline. */
void tg_offline(struct tg_topo *t, long pu_os);

/** Replace the CPU kinds: n kinds (1-5) over the cores, efficiencies
 * given or not, capacities or frequencies as infos; seeded. */
void tg_set_kinds(struct tg_topo *t, unsigned n, bool efficiency_known, bool by_capacity,
		  uint64_t seed);

/** A latency matrix from the tree (10 local, more per level apart). */
void tg_default_distances(struct tg_topo *t);

/** Restrict the allowed PUs (the cgroup parent's cpuset). */
void tg_set_allowed(struct tg_topo *t, hwloc_const_bitmap_t allowed);

/* ---- random topologies ---------------------------------------------- */

/* A small deterministic PRNG (splitmix64). */
struct tg_rng {
	uint64_t s;
};
uint64_t tg_next(struct tg_rng *r);
/** Uniform in [0, n). */
unsigned tg_below(struct tg_rng *r, unsigned n);

/**
 * A random topology: base NULL for a random synthetic description, else
 * a copy of base (a corpus file); then random transformations.
 */
struct tg_topo *tg_random(uint64_t seed, const struct tg_topo *base);

/** A deep copy. */
struct tg_topo *tg_dup(const struct tg_topo *t);

#endif
