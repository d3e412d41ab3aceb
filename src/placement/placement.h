/*
 * placement.h - the CPU/NUMA placement policy: which PUs and memory nodes a
 * container gets, given the topology, the live allocations and the request.
 *
 * Pure functions: nothing here reads state, takes locks or writes files.  The
 * caller (create path, `toposhimctl plan`) loads the topology, reads the
 * allocations under the state lock, calls ts_placement_place(), records the
 * result and writes linux.resources.cpu.{cpus,mems}.
 *
 * Pools (all sets of PU OS indexes):
 *   reserved   config "reserved" (list, or count = PUs of the lowest cores);
 *              never handed out as exclusive CPUs.
 *   exclusive  union of the cpus of live allocations in the exclusive or
 *              NUMA-exclusive pool.
 *   shared     online − exclusive − (reserved unless reserved.shared_may_use);
 *              every shared-pool container gets the whole pool.
 *   pinned     containers whose config.json already names cpus: honoured as
 *              given; their PUs stay in the shared pool but are never given
 *              as exclusive CPUs.
 *
 * Exclusive allocation follows the kubelet CPU manager's static policy
 * (pkg/kubelet/cm/cpumanager/cpu_assignment.go, takeByTopologyNUMAPacked):
 * whole packages/NUMA nodes (the level with fewer objects first) when the
 * request is at least that big, whole L3 groups (then one partly used L3
 * that can hold the rest: the kubelet's prefer-align-cpus-by-uncorecache),
 * whole cores, then single PUs.  At each level the domain with the fewest
 * free PUs comes first ("busiest first"), ties by OS index.  Before that
 * walk, an exclusive request (numa "prefer") is confined to one NUMA domain
 * (topology.h "NUMA domains") whenever one can hold it: device-local first
 * (devices on one node), then enough PUs of the class's CPU kind, then
 * memory of its own, then the fullest that fits; across domains only when
 * none can, or when its devices are on several (the kubelet's merged
 * hint).  Every placement gives exactly the count asked for or fails.  An
 * exclusive request that would leave the shared pool empty fails (-ENOSPC).
 * With "distribute_across_numa" exclusive requests follow the kubelet's
 * distribute-cpus-across-numa (takeByTopologyNUMADistributed) instead: the
 * fewest NUMA nodes that can hold the request, the combination of them whose
 * even share (in groups of the SMT width when full_cores_only, else 1 PU)
 * plus remainder leaves the free PUs of all nodes most balanced, each share
 * taken packed as above.  With "align_by_socket" (the kubelet's
 * align-by-socket) the device-local PUs taken first widen to the packages
 * of the devices' NUMA nodes.  Not implemented from the kubelet: its
 * state-file validation (src/state owns the records).
 *
 * Config object ("placement" in the toposhim config; every key optional):
 *   "enabled": true              false: CDI injection only; no placement,
 *                                no allocation record, no hooks
 *   "reserved": {"cpus": "0-1"} or {"count": 2},
 *               "shared_may_use": true        (default true)
 *   "full_cores_only": false     fail requests that are not a multiple of
 *                                the SMT width (kubelet full-pcpus-only)
 *   "align_l3": true             take whole / one L3 group before cores
 *   "distribute_across_numa": false
 *                                spread exclusive requests that need more
 *                                than one NUMA node evenly over the nodes
 *                                (kubelet distribute-cpus-across-numa)
 *   "distribute_across_cores": false
 *                                take single PUs spread over cores instead
 *                                of whole cores (kubelet
 *                                distribute-cpus-across-cores)
 *   "align_by_socket": false     device-local PUs first means the devices'
 *                                packages, not only their NUMA nodes
 *                                (kubelet align-by-socket)
 *   "manage_all": false          true: explicit cpus in config.json are
 *                                replaced instead of honoured as pinned
 *   "performance_threshold": 0.5 number from 0 to 1: CPU kinds scoring at
 *                                least this are "performance", the others
 *                                "efficiency" (topology.h "CPU kinds")
 *   "classes": {"<name>": {"pool": "exclusive"|"shared"|"reserved",
 *                          "cpu_kind": "performance"|"efficiency"|"any"}}
 *               added to / overriding the built-ins: critical (exclusive,
 *               performance), standard (shared, any), batch (shared,
 *               efficiency).
 *
 * Requests come from config.json (OCI runtime-spec v1.x config.md
 * "annotations", config-linux.md "CPU"): toposhim.io/class, toposhim.io/cpus,
 * toposhim.io/numa (prefer|single|exclusive), toposhim.io/memory-tier
 * (dram|hbm|cxl|pmem|gpu), linux.resources.cpu.{shares,quota,period,cpus,mems}.
 * toposhim.io/cpus sets the count only; the class still comes from
 * toposhim.io/class or the quota rule.
 */
#ifndef TS_PLACEMENT_PLACEMENT_H
#define TS_PLACEMENT_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <hwloc.h>

#include "oci/json.h"
#include "topology/topology.h"
#include "util/error.h"

enum ts_placement_pool {
	TS_PLACEMENT_POOL_SHARED,
	TS_PLACEMENT_POOL_EXCLUSIVE,
	TS_PLACEMENT_POOL_NUMA_EXCLUSIVE,
	TS_PLACEMENT_POOL_RESERVED,
	TS_PLACEMENT_POOL_PINNED,
	_TS_PLACEMENT_POOL_MAX,
	TS_PLACEMENT_POOL_INVALID = -22, /* -EINVAL */
};

/** "shared", "exclusive", "numa-exclusive", "reserved", "pinned"; NULL if invalid. */
const char *ts_placement_pool_to_string(enum ts_placement_pool pool);
/** Inverse of ts_placement_pool_to_string(); TS_PLACEMENT_POOL_INVALID if unknown. */
enum ts_placement_pool ts_placement_pool_from_string(const char *s);

enum ts_placement_numa {
	TS_PLACEMENT_NUMA_PREFER,
	TS_PLACEMENT_NUMA_SINGLE,
	TS_PLACEMENT_NUMA_EXCLUSIVE,
	_TS_PLACEMENT_NUMA_MAX,
	TS_PLACEMENT_NUMA_INVALID = -22,
};

enum ts_placement_kind {
	TS_PLACEMENT_KIND_ANY,
	TS_PLACEMENT_KIND_PERFORMANCE,
	TS_PLACEMENT_KIND_EFFICIENCY,
	_TS_PLACEMENT_KIND_MAX,
	TS_PLACEMENT_KIND_INVALID = -22,
};

struct ts_placement_class {
	char *name;
	enum ts_placement_pool pool; /* SHARED, EXCLUSIVE or RESERVED */
	enum ts_placement_kind cpu_kind;
};

/* Largest cpu count a request may name (annotation or quota/period). */
#define TS_PLACEMENT_MAX_CPUS 65535u

struct ts_placement_config {
	bool enabled; /* false: the create path places nothing and records nothing */
	hwloc_bitmap_t reserved_cpus; /* explicit list, or NULL */
	unsigned reserved_count;      /* used when reserved_cpus is NULL */
	bool shared_may_use_reserved;
	bool full_cores_only;
	bool align_l3;
	bool distribute_across_numa;
	bool align_by_socket;
	bool distribute_across_cores;
	bool manage_all;
	double performance_threshold; /* CPU kinds: see topology.h "CPU kinds" */
	struct ts_placement_class *classes;
	size_t n_classes;
	char *file; /* the config file, for messages; NULL: "placement" */
};

/**
 * Fill cfg with the defaults (no reserved CPUs, shared_may_use true,
 * align_l3 true, the three built-in classes).
 * @return 0; -ENOMEM.  Release with ts_placement_config_release().
 */
int ts_placement_config_init(struct ts_placement_config *cfg, struct ts_error **err);

/**
 * Defaults, then the keys of a "placement" object (documented above).
 * @param[in] placement  the object, or NULL for defaults only; borrowed.
 * @param[in] file       config file name for messages.
 * @param[out] ret       filled on success; release with ts_placement_config_release().
 * @return 0; -EINVAL "<file>: '/placement/<key>': <problem> '<value>'" for a
 *         wrong type, unknown key, invalid cpu list or pool; -ENOMEM.
 */
int ts_placement_config_parse(const struct ts_json *placement, const char *file,
			      struct ts_placement_config *ret, struct ts_error **err);

/** Free the members of cfg (the struct itself is the caller's). */
void ts_placement_config_release(struct ts_placement_config *cfg);

/** Class by name; borrowed from cfg; NULL if unknown. */
const struct ts_placement_class *ts_placement_config_class(const struct ts_placement_config *cfg,
							   const char *name);

/* A live allocation, as the state module records it.  All borrowed. */
struct ts_allocation {
	const char *container_id;
	const char *runtime_root; /* with container_id, names the container; may be NULL */
	const char *class_name;
	enum ts_placement_pool pool;
	hwloc_const_bitmap_t cpus;
	hwloc_const_bitmap_t mems; /* may be NULL */
	bool numa_exclusive;	   /* pool == NUMA_EXCLUSIVE */
	bool pinned;		   /* pool == PINNED */
};

/**
 * The pool of a recorded allocation (src/state keeps class, pinned and
 * numa_exclusive, not the pool): pinned -> PINNED, numa_exclusive ->
 * NUMA_EXCLUSIVE, else the pool of the class in cfg; an unknown class (the
 * config changed since) counts as EXCLUSIVE when it held cpus, so that its
 * PUs are never handed out twice.
 * @param[in] cpus_held  whether the record has a non-empty cpuset.
 */
enum ts_placement_pool ts_placement_allocation_pool(const struct ts_placement_config *cfg,
						    const char *class_name, bool pinned,
						    bool numa_exclusive, bool cpus_held);

struct ts_placement_request {
	char *container_id;
	const char *runtime_root; /* borrowed; set by the caller: an allocation of the same
				   * container (root and id) is an earlier attempt of this create */
	char *class_name;
	bool class_derived;   /* no toposhim.io/class: derived from quota */
	bool class_annotated; /* class came from toposhim.io/class (a request the policy judges) */
	unsigned cpus;	      /* exclusive PUs wanted (0: none / whole node) */
	bool cpus_annotated;  /* cpus came from toposhim.io/cpus */
	unsigned cpu_limit;   /* CPUs of cpu.quota/cpu.period rounded up; 0: no limit */
	bool guaranteed;      /* an integer limit equal to the request (shares = limit x 1024):
			       * the kubelet's rule for exclusive CPUs */
	enum ts_placement_numa numa;
	enum ts_memory_tier memory_tier;
	hwloc_bitmap_t user_cpus;   /* linux.resources.cpu.cpus, NULL if absent */
	hwloc_bitmap_t user_mems;   /* linux.resources.cpu.mems, NULL if absent */
	hwloc_bitmap_t device_numa; /* NUMA nodes local to requested devices; never NULL */
	char **devices;		    /* host paths with a known NUMA node (for reasons) */
	int *device_nodes;	    /* the sysfs numa_node of each of devices */
	size_t n_devices;
	/* private to request.c: the kernel devices whose locality was looked
	 * up and its numa_node (-1: unknown), so that a device given twice
	 * (a CDI host path and the linux.devices entry it became) is walked
	 * in sysfs once */
	struct ts_placement_device_seen {
		dev_t rdev;
		bool block;
		int numa_node;
	} * seen;
	size_t n_seen;
	const char *config_name; /* for messages, borrowed */
	bool sandbox;		 /* the pod's sandbox: takes none of the pod's requests */
	char *container_name;	 /* its name in the pod (oci/role.h); "" when none */
	/* JSON pointers of where class, cpus, numa and memory-tier came from,
	 * for messages: "/annotations/toposhim.io~1cpus.worker",
	 * "/linux/resources/cpu/quota"; NULL: the unscoped annotation */
	char *class_field, *cpus_field, *numa_field, *tier_field;
	/* The effective cpuset of the container's cgroup parent (cgroup.h,
	 * ts_cgroup_parent_cpuset()); NULL: nothing narrows the container.
	 * Exclusive cpus are taken inside it or refused; shared-pool cpus and
	 * mems are clipped to it.  Set by the caller. */
	hwloc_bitmap_t parent_cpus, parent_mems;
	char *parent_name; /* "'/kubepods' (cpuset 1)": the cgroup, for messages; a refusal
			    * reads "<file>: '/linux/cgroupsPath': cgroup parent '/kubepods'
			    * (cpuset 1) cannot hold 2 exclusive cpus (free in it: 1)" */
};

/**
 * Initialise an empty request (class "standard", numa prefer, tier dram).
 * @return 0; -ENOMEM.
 */
int ts_placement_request_init(struct ts_placement_request *req, const char *container_id,
			      struct ts_error **err);

/** Free the members of req. */
void ts_placement_request_release(struct ts_placement_request *req);

/**
 * Read a request from an OCI config tree.
 *
 * The container's role and name (oci/role.h) scope the annotations: a
 * pod's sandbox takes none of them and no class derived from its quota
 * (class "standard", the shared pool); an app container named N takes
 * toposhim.io/<key>.N before toposhim.io/<key>.
 *
 * Class: toposhim.io/class (must name a class of cfg); without it an integer
 * CPU limit equal to the request (cpu.quota % cpu.period == 0, quota > 0,
 * shares == limit * 1024) derives "critical", anything else "standard" (the
 * kubelet's Guaranteed-with-integer-CPUs rule).  CPU count:
 * toposhim.io/cpus, else quota/period rounded up.
 * @param[in] config       config.json tree; borrowed.
 * @param[in] config_name  for messages ("config.json"); borrowed, must
 *                         outlive ret.
 * @param[in] container_id borrowed (copied).
 * @param[in] cfg          placement config; borrowed.
 * @param[out] ret         filled on success; release with
 *                         ts_placement_request_release().
 * @return 0; -EINVAL with "<config_name>: '/annotations/toposhim.io~1cpus':
 *         invalid cpu count 'x'", or "...: cpu count '70000' is more than
 *         65535" (TS_PLACEMENT_MAX_CPUS) (the scoped key when it was the one used,
 *         "'/annotations/toposhim.io~1cpus.worker'"; "<config_name>:
 *         '/annotations/toposhim.io~1class.Web': invalid container name
 *         'Web' (a DNS label: lowercase letters, digits and '-')" for a
 *         malformed scope; and likewise for class, numa,
 *         memory-tier, '/linux/resources/cpu/cpus' invalid cpu list, ...);
 *         -ENOMEM.
 */
int ts_placement_request_from_config(const struct ts_json *config, const char *config_name,
				     const char *container_id,
				     const struct ts_placement_config *cfg,
				     struct ts_placement_request *ret, struct ts_error **err);

/**
 * Add the locality of requested devices (CDI device nodes' host paths) to
 * req->device_numa.  Devices whose locality is unknown add nothing (not an
 * error: they give no hint).
 * @param[in] roots  sysfs/proc roots (ts_devloc_roots_from_env()).
 * @param[in] paths  n host paths; borrowed.
 * @return 0; -errno "<path>: cannot stat device" (a device that does not
 *         exist on the host); -ENOMEM.
 */
int ts_placement_request_add_devices(struct ts_placement_request *req,
				     const struct ts_devloc_roots *roots, const char *const *paths,
				     size_t n, struct ts_error **err);

/**
 * Add the locality of the device nodes config.json already carries
 * (linux.devices entries of type c, u or b with major and minor): those an
 * engine injected itself (podman --device vendor/class=name, containerd's
 * CRI with enable_cdi, CRI-O), which leave the nodes' container path and
 * numbers but neither a CDI annotation nor the host path.  The kernel
 * device of major:minor is looked up in sysfs (ts_device_locality_rdev());
 * unknown locality, and entries without numbers, add nothing.  Nothing
 * is added for a container whose process.capabilities.bounding holds
 * CAP_SYS_ADMIN: privileged containers get every host device from the
 * engine (docker/podman --privileged, a CRI privileged pod), not the ones
 * they use.  A node also given by ts_placement_request_add_devices() (the
 * same kernel device) adds its node again (no harm: device_numa is a set)
 * from that lookup: sysfs is walked once per kernel device.
 * @param[in] roots   sysfs/proc roots (ts_devloc_roots_from_env()).
 * @param[in] config  the OCI config root; borrowed.
 * @return 0; -ENOMEM.
 */
int ts_placement_request_add_config_devices(struct ts_placement_request *req,
					    const struct ts_devloc_roots *roots,
					    const struct ts_json *config, struct ts_error **err);

struct ts_placement_result {
	char *class_name;
	enum ts_placement_pool pool;
	hwloc_bitmap_t cpus;	    /* what linux.resources.cpu.cpus gets */
	hwloc_bitmap_t mems;	    /* what linux.resources.cpu.mems gets */
	hwloc_bitmap_t shared_pool; /* the shared pool once this is recorded */
	char **affected;	    /* NULL-terminated container ids of shared-pool
				     * containers that must leave PUs this takes */
	char **reasons;		    /* NULL-terminated human-readable lines */
	char **warnings;	    /* NULL-terminated lines the caller logs as
				     * warnings (also among the reasons), e.g.
				     * pinned cpus that overlap exclusive ones */
	bool existing;		    /* container_id already had an allocation */
};

/** Free the members of a result. */
void ts_placement_result_release(struct ts_placement_result *res);

/**
 * The error of a cpu list that names PUs this machine does not have online:
 * "<file>: '<field>': '<set>' names cpus that are not online: <the ones
 * not online> (online: <online>)", each list as ts_cpulist_format() writes
 * it.  The one form of that refusal, wherever the list came from.
 * @param[in] file    the file that holds the list (config.json, the
 *                    toposhim config, a plugin's output), for the message.
 * @param[in] field   the list's JSON pointer in it.
 * @param[in] set     the list; some of it is not in online.
 * @param[in] online  the online PUs.
 * @return -EINVAL with err set; -ENOMEM.
 */
int ts_placement_not_online(const char *file, const char *field, hwloc_const_bitmap_t set,
			    hwloc_const_bitmap_t online, struct ts_error **err);

/**
 * Compute the reserved PUs of cfg on topo.
 * @param[out] ret  new bitmap; caller frees.
 * @return 0; -EINVAL "<config file>: '/placement/reserved/cpus': ..."
 *         (ts_placement_not_online(); cfg->file, or "placement" for a
 *         config not read from a file); -EINVAL when count reaches the online PUs
 *         ("...: '/placement/reserved/count': cannot reserve 8 of 8 cpus") or the
 *         cpus are every online PU ("...: '/placement/reserved/cpus': cannot
 *         reserve all 8 cpus ('0-7')"), or when both cpus and count are given
 *         and disagree (kubelet R5); -ENOMEM.
 */
int ts_placement_reserved(const struct ts_placement_config *cfg, const struct ts_topology *topo,
			  hwloc_bitmap_t *ret, struct ts_error **err);

/**
 * The shared pool for the given allocations (see the pool table above).
 * @param[out] ret  new bitmap; caller frees.
 * @return 0; errors of ts_placement_reserved(); -ENOMEM.
 */
int ts_placement_shared_pool(const struct ts_placement_config *cfg, const struct ts_topology *topo,
			     const struct ts_allocation *allocs, size_t nallocs,
			     hwloc_bitmap_t *ret, struct ts_error **err);

/**
 * The mems of a set of cpus: ts_topology_mems_for() with its errors as
 * messages.  The one computation of mems: the create path (every class),
 * the resize of the shared pool (src/cli/pools.c) and `toposhimctl plan`
 * all come here, so that a pool never gets mems a create would not.
 * @param[in]  cpus  PU OS indexes; borrowed.
 * @param[in]  tier  TS_MEMORY_TIER_DRAM: the home mems of the cpus' NUMA
 *                   domains; another tier adds its nearest nodes.
 * @param[out] ret   new bitmap of NUMA node OS indexes (never empty);
 *                   caller frees.
 * @return 0; -EINVAL "no memory node of tier '<tier>' on this machine";
 *         -EINVAL "no online cpu in '<list>'"; -ENOMEM.  Callers prefix
 *         the file and field.
 */
int ts_placement_mems(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
		      enum ts_memory_tier tier, hwloc_bitmap_t *ret, struct ts_error **err);

/**
 * The cpus a shared-pool container of a class gets from the pool: the pool,
 * narrowed to the class's CPU kind (at cfg's threshold) when the pool holds
 * PUs of that kind.  What a create gives it and what the resize of the pool
 * gives it later (src/cli/pools.c), so that a batch container stays on the
 * efficiency cores when the pool changes.
 * @param[in]  class_name  borrowed; an unknown class gets the whole pool.
 * @param[out] ret         new bitmap; caller frees.
 * @return 0; -ENOMEM.
 */
int ts_placement_pool_cpus(const struct ts_placement_config *cfg, const struct ts_topology *topo,
			   hwloc_const_bitmap_t pool, const char *class_name, hwloc_bitmap_t *ret,
			   struct ts_error **err);

/* Options of the exclusive allocator. */
struct ts_placement_take_opts {
	bool align_l3;
	bool full_cores_only;
	bool spread; /* kubelet distribute-cpus-across-cores: skip whole cores */
	/* kubelet distribute-cpus-across-numa; applies when no preferred set
	 * is given */
	bool distribute_across_numa;
	/* PUs per distribution group; 0: the SMT width when full_cores_only,
	 * else 1 (the kubelet's cpuGroupSize) */
	unsigned numa_group_size;
	/* kubelet align-by-socket: the preferred PUs widen to the whole
	 * packages they are in before they are taken first */
	bool align_by_socket;
};

/**
 * The kubelet-order exclusive allocator on its own: choose n PUs from avail.
 * @param[in] avail      PUs that may be taken; borrowed.
 * @param[in] n          PUs wanted.
 * @param[in] preferred  PUs to take first (device-local NUMA, CPU kind), or
 *                       NULL; the rest comes from avail as usual.  With
 *                       opts->align_by_socket, the packages that hold them.
 * @param[out] ret       new bitmap; caller frees.
 * @param[out] ret_steps may be NULL; a NULL-terminated list of the steps
 *                       ("whole package 0", ...) the caller frees with
 *                       the strv cleanup.
 * @return 0; -ENOSPC "not enough cpus available to satisfy request:
 *         requested=N, available=M"; -EINVAL "smt alignment error: requested
 *         N cpus not a multiple of cpus per core = W" or "smt alignment
 *         error: not enough free physical cpus: available physical cpus = A,
 *         requested cpus = N, cpus per core = W" (full_cores_only); -EIO
 *         "placement: numa distribution did not add up to N cpus" (a
 *         distribute_across_numa accounting error) or "placement: the walk
 *         found M of N cpus" (neither expected: the levels cover every
 *         online PU); -ENOMEM.
 */
int ts_placement_take(const struct ts_topology *topo, hwloc_const_bitmap_t avail, unsigned n,
		      hwloc_const_bitmap_t preferred, const struct ts_placement_take_opts *opts,
		      hwloc_bitmap_t *ret, char ***ret_steps, struct ts_error **err);

/**
 * Place one container.
 *
 * An allocation with the same container id is returned unchanged (existing
 * = true).  Pinned requests (explicit cpus, manage_all false) get their cpus.
 * Shared classes get the pool (ts_placement_pool_cpus()), reserved ones
 * the reserved PUs.  Exclusive classes get cpus from online − reserved −
 * exclusive − pinned PUs: numa "single" within one NUMA domain (or fail),
 * "exclusive" a whole free NUMA domain (at least cpus PUs when cpus is
 * given: the count asked for is the whole domain), "prefer" one domain
 * whenever one can hold it (see above); critical prefers the performance
 * CPU kinds and batch the efficiency ones (cfg->performance_threshold).
 * Requested devices on a memory-only NUMA node point at the domains near
 * it (a reason says so); on a node the machine lacks, nothing (a warning).
 * mems: ts_placement_mems() of the cpus with the requested tier.
 * @param[in] cfg, topo, allocs, req  borrowed.
 * @param[out] ret  filled on success; release with ts_placement_result_release().
 * @return 0; -ENOSPC (not enough free cpus, no free NUMA node, would leave
 *         the shared pool empty; "...: '/annotations/toposhim.io~1numa': no
 *         numa node is wholly free for 'exclusive'"); -EINVAL
 *         (full_cores_only alignment, user cpus not online, explicit mems
 *         naming a node without memory, no memory node of the requested
 *         tier); -EIO ("...: placement found M of N cpus": not expected);
 *         -ENOMEM.
 *         Messages name the config file and annotation, e.g.
 *         "config.json: '/annotations/toposhim.io~1cpus': not enough cpus
 *         available to satisfy request: requested=8, available=7"; when
 *         the request would fit but for other allocations' exclusive or
 *         pinned cpus, followed by ": cpus 1-3[ of cgroup parent <name>]
 *         held by container 'a'" (up to three ids, then "and N more").
 */
int ts_placement_place(const struct ts_placement_config *cfg, const struct ts_topology *topo,
		       const struct ts_allocation *allocs, size_t nallocs,
		       const struct ts_placement_request *req, struct ts_placement_result *ret,
		       struct ts_error **err);

/**
 * Describe a topology for `toposhimctl topology --json`: an object with
 * "source", "online" (cpu list), "pus", "smt_width", "packages"
 * [{"os_index","cpus"}], "numa_nodes" [{"os_index","cpus","local_cpus",
 * "memory_bytes","tier","memory_only"}], "numa_domains" [{"numa_node" (or
 * null: PUs in no NUMA node),"cpus","mems","mems_from"}], "l3_groups"
 * [{"logical_index","cpus"}], "cores", "cpu_kinds" {"performance",
 * "efficiency" (cpu lists at the threshold), "ranked_by", "scored_by" (or
 * null), "threshold", "kinds" [{"cpus","efficiency","capacity",
 * "frequency_mhz","score","class"}] slowest first} and "devices" [{"name",
 * "pci" (or null),"numa_nodes"}] (hwloc OS devices, plus
 * GPU/InfiniBand/NVMe/accelerator PCI devices that have none).
 * @param[in]  performance_threshold  the placement config's (topology.h "CPU kinds").
 * @param[out] ret  new tree; caller frees with ts_json_free().
 * @return 0; -ENOMEM.
 */
int ts_placement_describe_topology(const struct ts_topology *topo, double performance_threshold,
				   struct ts_json **ret, struct ts_error **err);

/**
 * A placement result as JSON for `toposhimctl plan --json`: {"container_id",
 * "class", "pool", "cpus", "mems", "shared_pool" (cpu lists), "existing",
 * "affected" [ids], "reasons" [lines]}.
 * @param[out] ret  new tree; caller frees with ts_json_free().
 * @return 0; -ENOMEM.
 */
int ts_placement_result_to_json(const struct ts_placement_result *res, const char *container_id,
				struct ts_json **ret, struct ts_error **err);

/* One CDI device, as ts_placement_nrt() counts it. */
struct ts_placement_nrt_device {
	const char *kind; /* "vendor.com/class"; borrowed */
	int numa_node;	  /* the NUMA node OS index it is local to; -1: unknown (not listed) */
	bool held;	  /* a live allocation names it */
};

/* What the node holds, for ts_placement_nrt().  All borrowed. */
struct ts_placement_nrt_input {
	const char *node_name; /* the Kubernetes node name: the object's metadata.name */
	const struct ts_placement_config *cfg;
	const struct ts_topology *topo;
	const struct ts_allocation *allocs; /* the live allocations */
	size_t n_allocs;
	const struct ts_placement_nrt_device *devices; /* the CDI devices of the node */
	size_t n_devices;
};

/**
 * The node as a NodeResourceTopology object, as the topology-aware
 * scheduler plugin (kubernetes-sigs/scheduler-plugins
 * NodeResourceTopologyMatch) and its exporters (nfd-topology-updater,
 * resource-topology-exporter) use it.
 * Implements: NodeResourceTopology API topology.node.k8s.io/v1alpha2
 * (k8stopologyawareschedwg/noderesourcetopology-api, its CRD's required
 * fields: zones; zone name and type; resource name, capacity, allocatable,
 * available; cost and attribute name and value).
 *
 * {"apiVersion": "topology.node.k8s.io/v1alpha2", "kind":
 * "NodeResourceTopology", "metadata": {"name": node_name},
 * "topologyPolicies": ["BestEffortContainerLevel"] ("None" when placement
 * is disabled), "zones": [...], "attributes": [...]}.
 *
 * One zone per NUMA node, in OS index order: name "node-<os index>" (the
 * name the scheduler plugin parses the NUMA id from), type "Node", costs
 * [{"name": "node-<j>", "value": <latency>}] from the row of hwloc's NUMA
 * latency matrix (none without a matrix), attributes "toposhim.io/cpus"
 * (the PUs it owns, absent for a memory-only node) and
 * "toposhim.io/memory-tier", and resources, all quantities as decimal
 * strings:
 *   cpu     capacity: the online PUs the node owns; allocatable: without
 *           the reserved PUs (config "reserved"); available: without the
 *           PUs of live exclusive, NUMA-exclusive and pinned allocations
 *           (what a new exclusive request can still get).
 *   memory  the node's memory in bytes (absent when the topology gives no
 *           size); toposhim does not count memory, so available is all of
 *           it, or 0 when a NUMA-exclusive allocation holds the node whole.
 *   <kind>  one resource per CDI device kind with devices local to the
 *           node, sorted: capacity and allocatable the devices, available
 *           those no live allocation names.
 * Devices of unknown locality and PUs in no NUMA node are in no zone.
 * With placement disabled nothing is reserved or held.
 *
 * Attributes: topologyManagerPolicy "best-effort" (toposhim keeps an
 * exclusive request on one NUMA node when one can hold it, and goes across
 * nodes otherwise) or "none" (placement disabled), topologyManagerScope
 * "container" (each container is placed on its own), and
 * "toposhim.io/placement" ("enabled"/"disabled"),
 * "toposhim.io/reserved-cpus" (list), "toposhim.io/full-cores-only",
 * "toposhim.io/distribute-across-numa", "toposhim.io/align-by-socket"
 * ("true"/"false").
 * @param[out] ret  new tree; caller frees with ts_json_free().
 * @return 0; -EINVAL "nodeResourceTopology: empty node name"; errors of
 *         ts_placement_reserved() (reserved cpus not online); -ENOMEM.
 */
int ts_placement_nrt(const struct ts_placement_nrt_input *in, struct ts_json **ret,
		     struct ts_error **err);

#endif
