/*
 * topology.h - the machine as placement sees it: hwloc discovery, cached XML,
 * NUMA nodes with memory tiers, CPU kinds, cpuset strings, device locality.
 *
 * A struct ts_topology wraps one loaded hwloc topology plus facts derived from
 * it once at load time (online PUs, SMT width, NUMA node table, the PU groups
 * of every level, ranked CPU kinds), so that placement never walks XML or
 * sysfs.  It is immutable after load and may be shared read-only.
 *
 * Invariants:
 *  - every cpuset holds PU *OS* indexes, every nodeset NUMA node OS indexes
 *    (hwloc "physical" indexes, what the kernel and linux.resources.cpu use);
 *  - `online` is the set of PUs that exist, are online and are allowed;
 *  - the groups of each level (packages, NUMA domains, L3 groups, cores)
 *    partition `online`: every online PU is in exactly one group of each
 *    level, PUs that no hwloc object of the level covers in a placeholder
 *    group (a die without memory has PUs outside every NUMA node); a level
 *    of which the machine has no object at all (no L3 in the XML) has no
 *    groups, NUMA domains and cores always have;
 *  - every NUMA domain has home mems: NUMA nodes with memory, of the DRAM
 *    tier when the machine has DRAM (see "Memory" below); placement never
 *    puts a node without memory (has_memory false) into mems.
 *
 * NUMA domains.  A NUMA node owns the online PUs for which it is the
 * smallest covering node (hwloc cpuset), ties going to a node without a
 * subtype or of subtype DRAM, then to the lowest OS index; a node that owns
 * no PU is memory-only (a CPU-less node: HBM, NVDIMM, CXL or GPU memory
 * next to CPU nodes with the same cpuset, or with an empty cpuset).  Each
 * node that owns PUs is one NUMA domain; the online PUs that no node covers
 * form one placeholder domain per largest hwloc subtree without a NUMA node.
 *
 * Memory.  The home mems of a domain are its own node when that node has
 * memory of the DRAM tier; else (a CPU node without memory, or whose memory
 * is HBM) the DRAM nodes nearest to it in hwloc's NUMA latency matrix (all
 * of them on a tie); else, and for placeholder domains, the DRAM nodes of
 * the closest enclosing object (the package, then upwards to the machine).
 * A machine without DRAM nodes with memory uses nodes with memory of any
 * tier instead.  ts_topology_mems_for() adds the nodes of a requested tier.
 *
 * CPU kinds.  Every kind hwloc reports is ranked: by hwloc's efficiency
 * (which hwloc takes from the OS, Linux cpu_capacity, or frequencies) when
 * known, else by the kinds' LinuxCapacity, then FrequencyMaxMHz, then
 * FrequencyBaseMHz infos.  Each kind gets a score in [0, 1]: its place
 * between the slowest kind (0) and the fastest (1), by the first of
 * capacity, maximum frequency, base frequency known for every kind and
 * ordered like the ranking, else by rank.  "performance" = the kinds whose
 * score is at least a threshold (default 0.5), "efficiency" = the others;
 * with fewer than two ranked kinds there is neither.
 *
 * Sources (first match wins, see ts_topology_load_default()):
 *  env TOPOSHIM_TOPOLOGY_XML, config "topology": {"xml": FILE}, the host;
 *  each through the XML cache in the state dir when one is given.
 *
 * Every loader drops the L1 and L2 caches (data and instruction) and the
 * L3 instruction caches: placement uses packages, NUMA nodes, L3 groups,
 * cores and PUs only, and without them the cached XML of a 384-PU machine
 * is a third of the size and loads in under half the time.
 *
 * Implements: hwloc 2.x XML (v2, and v1 which hwloc 2.9 still imports;
 * exports are v2), hwloc CPU kinds (hwloc/cpukinds.h) and NUMA distances,
 * Linux sysfs ABI (Documentation/ABI/stable/sysfs-devices-system-cpu,
 * sysfs-devices-node, testing/sysfs-dev), OCI runtime-spec config-linux.md
 * "CPU" (cpus/mems list syntax).
 */
#ifndef TS_TOPOLOGY_TOPOLOGY_H
#define TS_TOPOLOGY_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <hwloc.h>

#include "util/error.h"

/* Kind of memory behind a NUMA node. */
enum ts_memory_tier {
	TS_MEMORY_TIER_DRAM,
	TS_MEMORY_TIER_HBM,
	TS_MEMORY_TIER_CXL,
	TS_MEMORY_TIER_PMEM,
	TS_MEMORY_TIER_GPU,
	_TS_MEMORY_TIER_MAX,
	TS_MEMORY_TIER_INVALID = -22, /* -EINVAL */
};

/** "dram", "hbm", "cxl", "pmem", "gpu"; NULL for an invalid value. */
const char *ts_memory_tier_to_string(enum ts_memory_tier tier);

/** Inverse of ts_memory_tier_to_string(); TS_MEMORY_TIER_INVALID if unknown. */
enum ts_memory_tier ts_memory_tier_from_string(const char *s);

struct ts_numa_node {
	unsigned os_index;
	hwloc_bitmap_t cpus;	   /* online PUs the node owns; empty if memory_only */
	hwloc_bitmap_t local_cpus; /* online PUs near it (its hwloc cpuset) */
	uint64_t memory_bytes;	   /* local memory; 0 = none or unknown */
	bool has_memory;	   /* memory_bytes > 0, or no node of the topology
				    * reports a size (synthetic, old XML): assumed */
	enum ts_memory_tier tier;
	bool memory_only; /* owns no PU (CPU-less node) */
};

/* The levels placement walks, each a partition of the online PUs. */
enum ts_cpu_level {
	TS_CPU_LEVEL_PACKAGE,
	TS_CPU_LEVEL_NUMA,
	TS_CPU_LEVEL_L3,
	TS_CPU_LEVEL_CORE,
	_TS_CPU_LEVEL_MAX,
	TS_CPU_LEVEL_INVALID = -22,
};

/* One group of online PUs of a level. */
struct ts_cpu_group {
	unsigned id;	     /* package, NUMA node or core OS index; L3 logical index;
			      * a placeholder: its lowest PU */
	bool placeholder;    /* no hwloc object of the level holds these PUs */
	hwloc_bitmap_t cpus; /* online PUs, never empty */
	/* NUMA level only (NULL/-1 elsewhere): */
	int numa_node;	      /* the owning node's OS index; -1 for a placeholder */
	hwloc_bitmap_t mems;  /* home mems (see "Memory"): never empty */
	const char *mems_how; /* static: "local", "distance", or the hwloc type
			       * of the enclosing object that gave them */
};

/* One CPU kind, ranked (see "CPU kinds"). */
struct ts_cpu_kind {
	hwloc_bitmap_t cpus;	/* its online PUs */
	int efficiency;		/* hwloc's rank, -1 unknown */
	uint64_t capacity;	/* LinuxCapacity info, 0 unknown */
	unsigned frequency_mhz; /* FrequencyMaxMHz, else FrequencyBaseMHz; 0 unknown */
	double score;		/* 0 = slowest kind ... 1 = fastest */
};

/* Default share of the span between the slowest and the fastest CPU kind
 * from which a kind counts as "performance". */
#define TS_TOPOLOGY_KIND_THRESHOLD_DEFAULT 0.5

/* Read-only after load; fields may be read directly. */
struct ts_topology {
	hwloc_topology_t hwloc;		 /* NULL when loaded from a snapshot */
	hwloc_bitmap_t online;		 /* online, allowed PUs (OS indexes) */
	unsigned smt_width;		 /* most PUs per core (1 without SMT) */
	struct ts_numa_node *numa_nodes; /* sorted by os_index */
	size_t n_numa_nodes;
	struct ts_cpu_group *groups[_TS_CPU_LEVEL_MAX]; /* each sorted by lowest PU */
	size_t n_groups[_TS_CPU_LEVEL_MAX];
	int *numa_group_of_pu; /* NUMA group index by PU OS index (-1 offline) */
	unsigned n_pu_slots;   /* entries of numa_group_of_pu */
	unsigned *latency_os;  /* hwloc's NUMA latency matrix over these nodes */
	uint64_t *latency;     /* n_latency x n_latency, row major; NULL: none */
	size_t n_latency;
	struct ts_cpu_kind *cpu_kinds; /* slowest first */
	size_t n_cpu_kinds;
	const char *kinds_ranked_by;	 /* "efficiency", "capacity", "frequency", NULL: unranked */
	const char *kinds_scored_by;	 /* "capacity", "frequency", "rank", NULL */
	hwloc_bitmap_t performance_cpus; /* kinds at or above the default threshold
					  * on a machine with ranked kinds, else empty */
	hwloc_bitmap_t efficiency_cpus;	 /* the other kinds, else empty */
	char *source;			 /* "host", "cache:<dir>", or the XML path */
};

/* Largest topology XML loaded from a file (64 MiB: a 4096-PU machine with
 * its I/O devices takes a few MiB). */
#define TS_TOPOLOGY_XML_MAX_BYTES (64u << 20)

/**
 * Load a topology from an hwloc XML (v2) file.
 * @param[in]  path  file name; borrowed.
 * @param[out] ret   the topology; caller frees with ts_topology_free().
 * @param[out] err   set iff the return value is negative.
 * hwloc 2.9 imports both XML formats: v2 (what hwloc 2.x exports) and v1
 * (hwloc 1.x, converted on import).
 * @return 0; -ENOENT/-EACCES "<path>: cannot read topology"; -EINVAL
 *         "<path>: not a regular file"; -EFBIG "<path>: larger than N bytes";
 *         -EINVAL "<path>: invalid hwloc xml topology"; -ENOMEM.
 */
int ts_topology_load_xml(const char *path, struct ts_topology **ret, struct ts_error **err);

/**
 * Load a topology from XML text in memory.
 * @param[in] buf   XML text, NUL-terminated; borrowed.
 * @param[in] name  name used in error messages.
 * @return as ts_topology_load_xml().
 */
int ts_topology_load_xml_buffer(const char *buf, const char *name, struct ts_topology **ret,
				struct ts_error **err);

/**
 * Load an hwloc synthetic topology (e.g. "pack:2 numa:1 core:4 pu:2").
 * @return 0; -EINVAL "synthetic topology: invalid description '<desc>'"; -ENOMEM.
 */
int ts_topology_load_synthetic(const char *desc, struct ts_topology **ret, struct ts_error **err);

/**
 * Load the topology recorded in a Linux sysfs/procfs tree (a directory
 * holding sys/ and optionally proc/, as in ../shared/corpus/sysfs), with
 * hwloc's Linux backend.
 * @param[in] root  the tree; borrowed.
 * @return 0; -errno "<root>: no sysfs tree (sys/devices/system/cpu)";
 *         -errno "<root>: cannot read the sysfs tree"; -ENOMEM.
 */
int ts_topology_load_sysfs(const char *root, struct ts_topology **ret, struct ts_error **err);

/**
 * Discover the host with hwloc (I/O objects included), without any cache.
 * @return 0; -errno "host topology: <step> failed" when hwloc fails.
 */
int ts_topology_load_host(struct ts_topology **ret, struct ts_error **err);

/**
 * Load the host topology through the XML cache in state_dir.
 *
 * The cache is "<state_dir>/topology.xml" plus "<state_dir>/topology.key",
 * whose text is the host key (ts_topology_host_key()).  A missing, unreadable
 * or stale cache (key differs: online CPUs, NUMA nodes or boot id changed) is
 * rebuilt by discovering the host and written atomically; a failure to write
 * it is not an error (the topology is still returned).
 * @param[in] state_dir  existing directory; borrowed.
 * @param[in] sysfs_root NULL for "/sys" (key inputs); borrowed.
 * @param[in] proc_root  NULL for "/proc"; borrowed.
 * @param[out] ret_from_cache  may be NULL; true when the cache was used.
 * @return 0; errors of ts_topology_host_key() and ts_topology_load_host().
 */
int ts_topology_load_cached(const char *state_dir, const char *sysfs_root, const char *proc_root,
			    struct ts_topology **ret, bool *ret_from_cache, struct ts_error **err);

/**
 * Compute the cache key of the host: "online=<cpu list>\nnodes=<node
 * list>\nboot_id=<id>\n" from <sysfs>/devices/system/cpu/online,
 * <sysfs>/devices/system/node/online (absent: "0") and
 * <proc>/sys/kernel/random/boot_id.
 * @param[out] ret  the key; caller frees.
 * @return 0; -errno "<file>: cannot read" for the CPU list or boot id.
 */
int ts_topology_host_key(const char *sysfs_root, const char *proc_root, char **ret,
			 struct ts_error **err);

/**
 * Load an XML topology file through the cache in state_dir: the key is
 * "xml=<path>\ndev=..\nino=..\nsize=..\nmtime=<s>.<ns>\n" of the file, so
 * an edited or replaced file is loaded again; the cache holds what
 * ts_topology_load_xml() made of it (caches filtered), and the topology's
 * source is the path either way.  Writing the cache may fail silently.
 * @param[in] path       the XML file; borrowed.
 * @param[in] state_dir  existing directory; borrowed.
 * @param[out] ret_from_cache  may be NULL; true when the cache was used.
 * @return as ts_topology_load_xml().
 */
int ts_topology_load_xml_cached(const char *path, const char *state_dir, struct ts_topology **ret,
				bool *ret_from_cache, struct ts_error **err);

/**
 * Load the topology toposhim uses: env TOPOSHIM_TOPOLOGY_XML, else
 * config_xml (both through the cache when state_dir is given), else the
 * recorded tree when TOPOSHIM_SYSFS_ROOT names a
 * directory ".../sys" (ts_topology_load_sysfs() on its parent, so that the
 * CPUs match the devices), else the host through the cache in state_dir
 * (no cache when state_dir is NULL).  Sysfs/proc roots come from
 * TOPOSHIM_SYSFS_ROOT / TOPOSHIM_PROC_ROOT (read with secure_getenv).
 * @param[in] config_xml  the config's "topology": {"xml"} or NULL; borrowed.
 * @param[in] state_dir   state directory or NULL; borrowed.
 * @return as the loader used.
 */
int ts_topology_load_default(const char *config_xml, const char *state_dir,
			     struct ts_topology **ret, struct ts_error **err);

/**
 * ts_topology_load_default() for placement (the create path, the resize of
 * the shared pool, `toposhimctl plan`): a cache under the current key is
 * read from its snapshot (ts_topology_snapshot_load(): no hwloc parse; the
 * topology then has no hwloc tree, which placement does not use), else
 * from its XML.
 * @param[in] may_write  false for readers that write nothing (plan): a
 *                       missing or stale cache is not rebuilt.
 * @return as ts_topology_load_default().
 */
int ts_topology_load_for_placement(const char *config_xml, const char *state_dir, bool may_write,
				   struct ts_topology **ret, struct ts_error **err);

/**
 * The derived tables of a topology (online PUs, SMT width, NUMA nodes,
 * level groups with home mems, ranked CPU kinds, the NUMA latency matrix)
 * as text: one line per item, lists in cpu-list syntax ("-" for empty),
 * opened by "toposhim-topology-snapshot 1", closed by "end".  What the
 * cache keeps next to the XML, so that placement loads in microseconds.
 * @param[out] ret  the text; caller frees.
 * @return 0; -ENOMEM.
 */
int ts_topology_snapshot_export(const struct ts_topology *topo, char **ret, struct ts_error **err);

/**
 * A topology from a snapshot, without hwloc: topo->hwloc is NULL, and
 * what needs hwloc objects (ts_topology_export_xml(), describing devices
 * and caches) is not available.  The text is checked: every level must
 * partition the online PUs, every NUMA group have mems.
 * @param[in] text    from ts_topology_snapshot_export(); borrowed.
 * @param[in] source  the topology's source (copied), for messages.
 * @return 0; -EINVAL "<source>: not a topology snapshot" or "<source>:
 *         invalid topology snapshot"; -ENOMEM.
 */
int ts_topology_snapshot_load(const char *text, const char *source, struct ts_topology **ret,
			      struct ts_error **err);

/** Free a topology (NULL accepted). @return NULL. */
struct ts_topology *ts_topology_free(struct ts_topology *topo);

/**
 * Export as hwloc XML v2.
 * @param[out] ret      NUL-terminated XML; caller frees with free().
 * @return 0; -errno "topology: xml export failed"; -EINVAL "<source>: xml
 *         export failed: no hwloc tree (a snapshot)".
 */
int ts_topology_export_xml(const struct ts_topology *topo, char **ret, struct ts_error **err);

/**
 * Parse a Linux cpu list ("0-3,8", "" = empty) strictly: only decimal
 * numbers, '-' ranges with first <= last, and ',' separators; no spaces, no
 * empty items, numbers below 65536.
 * @param[in]  s    the list; borrowed.
 * @param[out] ret  new bitmap; caller frees with hwloc_bitmap_free().
 * @return 0; -EINVAL "invalid cpu list '<s>'" (callers prefix file and
 *         field with ts_error_prefix()); -ENOMEM.
 */
int ts_cpulist_parse(const char *s, hwloc_bitmap_t *ret, struct ts_error **err);

/**
 * Format a bitmap as a Linux cpu list ("0-3,8"; "" when empty).
 * @param[out] ret  caller frees.
 * @return 0; -ENOMEM; -EINVAL for an infinite bitmap.
 */
int ts_cpulist_format(hwloc_const_bitmap_t set, char **ret, struct ts_error **err);

/**
 * NUMA node entry by OS index. @return borrowed pointer, NULL if absent.
 */
const struct ts_numa_node *ts_topology_numa_node(const struct ts_topology *topo, unsigned os_index);

/**
 * The NUMA nodes that own any PU of cpus (memory-only nodes and
 * placeholder domains add nothing).
 * @param[out] nodes  cleared, then filled; caller-owned bitmap.
 */
void ts_topology_numa_of_cpus(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
			      hwloc_bitmap_t nodes);

/** Union of the PUs the NUMA nodes in nodes own (online only). @param[out] cpus filled. */
void ts_topology_cpus_of_numa(const struct ts_topology *topo, hwloc_const_bitmap_t nodes,
			      hwloc_bitmap_t cpus);

/** "package", "numa node", "l3 group", "core"; NULL for an invalid level. */
const char *ts_cpu_level_to_string(enum ts_cpu_level level);

/**
 * The NUMA domain (group of TS_CPU_LEVEL_NUMA) holding an online PU.
 * @return a borrowed group; NULL when pu is not online.
 */
const struct ts_cpu_group *ts_topology_numa_group_of_pu(const struct ts_topology *topo,
							unsigned pu);

/**
 * The mems a container on cpus gets: the home mems of every NUMA domain
 * holding one of cpus, plus, for a tier other than DRAM, the nodes with
 * memory of that tier nearest to them: those whose local cpus meet cpus,
 * else the nearest to the home mems in the NUMA latency matrix (all on a
 * tie), else every node of the tier.  The one computation of mems for a
 * placement, the shared pool at create, its resize and `toposhimctl plan`.
 * @param[in]  cpus  PU OS indexes; offline ones are ignored.
 * @param[in]  tier  TS_MEMORY_TIER_DRAM for the home mems only.
 * @param[out] mems  cleared, then filled (NUMA node OS indexes); caller-owned.
 * @return 0; -ENOENT when no node with memory has the tier (mems then holds
 *         the home mems); -ENODATA when cpus hold no online PU (mems empty).
 */
int ts_topology_mems_for(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
			 enum ts_memory_tier tier, hwloc_bitmap_t mems);

/**
 * Split the ranked CPU kinds at a threshold (see "CPU kinds").
 * @param[in]  threshold  in [0, 1]: kinds with a score >= threshold are performance.
 * @param[out] perf, eff  cleared, then filled with online PUs; caller-owned.
 * @return true when both sets are non-empty (a machine with kinds to choose
 *         from); false, with both sets cleared, otherwise.
 */
bool ts_topology_kinds_split(const struct ts_topology *topo, double threshold, hwloc_bitmap_t perf,
			     hwloc_bitmap_t eff);

/* ---- device locality ------------------------------------------------ */

/* Where to read kernel facts from; NULL members mean "/sys" and "/proc". */
struct ts_devloc_roots {
	const char *sysfs_root;
	const char *proc_root;
};

/** Roots from env TOPOSHIM_SYSFS_ROOT / TOPOSHIM_PROC_ROOT (borrowed from environ). */
struct ts_devloc_roots ts_devloc_roots_from_env(void);

struct ts_device_locality {
	int numa_node;		   /* NUMA node OS index, -1 = unknown */
	hwloc_bitmap_t local_cpus; /* local_cpulist, NULL = unknown */
	char *pci_address;	   /* "0000:83:00.0", NULL if none found */
	const char *how;	   /* static text: "sysfs", "nvidia", "vfio", "unknown" */
};

/** Release the members of a locality (keeps the struct). */
void ts_device_locality_release(struct ts_device_locality *loc);

/**
 * Locality of a device node given by its number.
 *
 * Walks <sysfs>/dev/{char,block}/MAJ:MIN up to the closest ancestor that has
 * numa_node or local_cpulist (a PCI device).  Families without such a link:
 * NVIDIA (major 195, /dev/nvidiaN: the GPU under <proc>/driver/nvidia/gpus/
 * whose "information" says "Device Minor: N", then its PCI device in
 * <sysfs>/bus/pci/devices), VFIO groups (path /dev/vfio/N: the first device
 * of <sysfs>/kernel/iommu_groups/N/devices).
 * @param[in] path      device path, used for messages and the vfio/nvidia
 *                      families; borrowed.
 * @param[in] is_block  true for a block device.
 * @param[in] rdev      st_rdev of the node.
 * @param[out] ret      filled on success; numa_node -1 and how "unknown"
 *                      when nothing is known (not an error).
 * @return 0; -ENOMEM.
 */
int ts_device_locality_rdev(const struct ts_devloc_roots *roots, const char *path, bool is_block,
			    dev_t rdev, struct ts_device_locality *ret, struct ts_error **err);

/**
 * Locality of a device node given by its host path: stat() it and call
 * ts_device_locality_rdev().
 * @return 0; -errno "<path>: cannot stat device"; -EINVAL "<path>: not a
 *         device node"; -ENOMEM.
 */
int ts_device_locality(const struct ts_devloc_roots *roots, const char *path,
		       struct ts_device_locality *ret, struct ts_error **err);

static inline void ts_topology_freep(struct ts_topology **t)
{
	*t = ts_topology_free(*t);
}
static inline void ts_hwloc_bitmap_freep(hwloc_bitmap_t *b)
{
	if (*b != NULL)
		hwloc_bitmap_free(*b);
	*b = NULL;
}
#define cleanup_topology __attribute__((cleanup(ts_topology_freep)))
#define cleanup_hwloc_bitmap __attribute__((cleanup(ts_hwloc_bitmap_freep)))

#endif
