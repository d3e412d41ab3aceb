/*
 * topology.h - the machine as placement sees it: hwloc discovery, cached XML,
 * NUMA nodes with memory tiers, CPU kinds, cpuset strings, device locality.
 *
 * A struct ts_topology wraps one loaded hwloc topology plus facts derived from
 * it once at load time (online PUs, SMT width, NUMA node table, P/E cpusets),
 * so that placement never walks XML or sysfs.  It is immutable after load and
 * may be shared read-only.
 *
 * Invariants:
 *  - every cpuset holds PU *OS* indexes, every nodeset NUMA node OS indexes
 *    (hwloc "physical" indexes, what the kernel and linux.resources.cpu use);
 *  - `online` is the set of PUs that exist, are online and are allowed;
 *  - placement never puts a node without memory (has_memory false) into mems.
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
 * Implements: hwloc 2.x XML v2 (hwloc 2.9 cannot read v1 XML; every file of
 * the corpus is v2 and loads), Linux sysfs ABI
 * (Documentation/ABI/stable/sysfs-devices-system-cpu, sysfs-devices-node,
 * testing/sysfs-dev), OCI runtime-spec config-linux.md "CPU" (cpus/mems
 * list syntax).
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
	hwloc_bitmap_t cpus;	   /* online PUs of the node; empty if memory_only */
	hwloc_bitmap_t local_cpus; /* online PUs near it (its hwloc cpuset) */
	uint64_t memory_bytes;	   /* local memory; 0 = none or unknown */
	bool has_memory;	   /* memory_bytes > 0, or no node of the topology
				    * reports a size (synthetic, old XML): assumed */
	enum ts_memory_tier tier;
	bool memory_only; /* no PU of its own (CPU-less node) */
};

/* Read-only after load; fields may be read directly. */
struct ts_topology {
	hwloc_topology_t hwloc;
	hwloc_bitmap_t online;		 /* online, allowed PUs (OS indexes) */
	unsigned smt_width;		 /* most PUs per core (1 without SMT) */
	struct ts_numa_node *numa_nodes; /* sorted by os_index */
	size_t n_numa_nodes;
	hwloc_bitmap_t performance_cpus; /* P-cores on hybrid CPUs, else empty */
	hwloc_bitmap_t efficiency_cpus;	 /* E-cores on hybrid CPUs, else empty */
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
 * @return 0; -ENOENT/-EACCES "<path>: cannot read topology"; -EINVAL
 *         "<path>: not a regular file"; -EFBIG "<path>: larger than N bytes";
 *         -EINVAL "<path>: invalid hwloc xml topology" (also for v1 XML,
 *         which hwloc 2.9 refuses); -ENOMEM.
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

/** Free a topology (NULL accepted). @return NULL. */
struct ts_topology *ts_topology_free(struct ts_topology *topo);

/**
 * Export as hwloc XML v2.
 * @param[out] ret      NUL-terminated XML; caller frees with free().
 * @return 0; -errno "topology: xml export failed".
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
 * The NUMA nodes with PUs that hold any PU of cpus (memory-only nodes
 * excluded).  @param[out] nodes  cleared, then filled; caller-owned bitmap.
 */
void ts_topology_numa_of_cpus(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
			      hwloc_bitmap_t nodes);

/** Union of the PUs of the NUMA nodes in nodes (online only). @param[out] cpus filled. */
void ts_topology_cpus_of_numa(const struct ts_topology *topo, hwloc_const_bitmap_t nodes,
			      hwloc_bitmap_t cpus);

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
