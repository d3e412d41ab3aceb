/*
 * pools.h - what the create path and the poststop hook share: the
 * placement context (placement config, topology, cgroup config) and the
 * rebalancing of running shared-pool containers when the pools change.
 *
 * The shared pool is online − reserved (unless shared_may_use) − every
 * exclusive, NUMA-exclusive allocation (placement.h).  Whenever an
 * allocation is added or removed, every *running* shared-pool container
 * whose recorded cpuset differs from the new pool is resized (cgroup.h:
 * direct cgroup v2 writes, or `<runtime> update`) by ts_pools_settle(),
 * outside the store's lock, and its record updated.  A container found
 * dead on the way is dropped from the store.
 */
#ifndef TS_CLI_POOLS_H
#define TS_CLI_POOLS_H

#include <stdbool.h>

#include "cgroup/cgroup.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "state/plain.h"
#include "state/state.h"
#include "topology/topology.h"
#include "util/error.h"

struct ts_pools {
	struct ts_placement_config placement;
	struct ts_cgroup_config cgroup;
	const char *cgroup_root; /* borrowed from cgroup or static */
	enum ts_cgroup_mode cgroup_mode;
	struct ts_topology *topo;     /* NULL until ts_pools_load_topology() */
	const char *config_path;      /* the toposhim config file, for messages; borrowed */
	const struct ts_json *config; /* the toposhim config root; borrowed */
	bool plain_warned;	      /* the journal could not be taken, said once */
	/* records dropped before a settle whose cpus were held exclusively,
	 * by this process or another (ts_pools_note_released()); owned */
	struct ts_alloc **released;
	size_t n_released;
};

/**
 * Read the "placement", "cgroup" and "topology" members of the toposhim
 * config and detect the cgroup mode.  The topology is not loaded yet.
 * @param[in]  config       the toposhim config root; borrowed for the life of ret.
 * @param[in]  config_path  its file name, for messages; borrowed likewise.
 * @param[out] ret          filled; release with ts_pools_release().
 * @return 0; errors of ts_placement_config_parse(), ts_cgroup_config_read()
 *         and ts_cgroup_config_resolve().
 */
int ts_pools_init(const struct ts_json *config, const char *config_path, struct ts_pools *ret,
		  struct ts_error **err);

/**
 * Load the topology: TOPOSHIM_TOPOLOGY_XML, else the config's
 * "topology": {"xml": FILE}, else the host, through the cache in state_dir
 * (ts_topology_load_for_placement(): from its snapshot when it is current,
 * so p->topo may have no hwloc tree).  Once per ts_pools: with p->topo
 * already loaded it returns 0 at once (a create and each settle round of
 * the same process share one topology).
 * @return 0; -EINVAL "<file>: '/topology/xml': expected string, got <type>";
 *         errors of the topology loader.
 */
int ts_pools_load_topology(struct ts_pools *p, const char *state_dir, struct ts_error **err);

/**
 * The topology placement uses, as the config gives it: "topology": {"xml":
 * "<absolute path>"} (TOPOSHIM_TOPOLOGY_XML wins), else the host's through
 * the state dir's cache (topology.h ts_topology_load_for_placement()).
 * Shared by a create and toposhimctl plan, so both refuse and name the
 * same things.
 * @param[in]  config       the toposhim config root (may be NULL); borrowed.
 * @param[in]  config_path  for messages.
 * @param[in]  state_dir    the cache's dir, or NULL (no cache).
 * @param[in]  may_write    the cache may be written (a create) or not (plan).
 * @param[out] ret          the topology; free with ts_topology_free().
 * @return 0; -EINVAL "<config_path>: '/topology': expected object, got
 *         <type>", "...: '/topology/<key>': unknown key", "...:
 *         '/topology/xml': expected string, got <type>", "...:
 *         '/topology/xml': not absolute '<path>'"; the errors of
 *         ts_topology_load_for_placement(), prefixed "<config_path>:
 *         '/topology/xml': " when the config named the file.
 */
int ts_pools_config_topology(const struct ts_json *config, const char *config_path,
			     const char *state_dir, bool may_write, struct ts_topology **ret,
			     struct ts_error **err);

/**
 * Set req->parent_cpus, parent_mems and parent_name from the effective
 * cpuset of the container's cgroup parent (ts_cgroup_parent_cpuset() on
 * the pools' cgroup root and mode, config's /linux/cgroupsPath).  Nothing
 * is set when no cpuset controller can be read, when the nearest existing
 * ancestor is the root cgroup (its cpuset is every online cpu), or when
 * the topology comes from XML (TOPOSHIM_TOPOLOGY_XML, "topology": {"xml"}:
 * another machine's, which the host's cgroups do not describe).
 * @param[in] systemd  the engine passed --systemd-cgroup.
 * @return 0; -EINVAL "<config_name>: '/linux/cgroupsPath': ..." (not a
 *         string, not a systemd slice:prefix:name); the read errors of
 *         ts_cgroup_parent_cpuset(); -ENOMEM.
 */
/**
 * Whether toposhim's cpus and mems can be applied to this container: as
 * root (of the initial user namespace) always; otherwise (runc --rootless,
 * rootless podman, which runs its runtime as root of the user's
 * namespace) only when the
 * cpuset controller's cgroup of the container's parent (its nearest
 * existing ancestor, ts_cgroup_parent_cpuset()) is writable by us, as in a
 * delegated cgroup v2 subtree.  Cannot fail: what cannot be read counts as
 * not writable.
 * @param[out] ret_why  when false is returned, why, for one warning
 *                      ("no cpuset controller at '/sys/fs/cgroup/cpuset'",
 *                      "cgroup '/sys/fs/cgroup/cpuset/user' is not
 *                      writable"); the caller frees it; may be NULL on OOM.
 */
bool ts_pools_placement_applicable(const struct ts_pools *p, const struct ts_json *config,
				   bool systemd, char **ret_why);

int ts_pools_parent_cpuset(const struct ts_pools *p, const struct ts_json *config,
			   const char *config_name, bool systemd, struct ts_placement_request *req,
			   struct ts_error **err);

/**
 * After a rebuild (ts_state_load() gave a warning): the cpus and mems of
 * every shared-pool record are unknown (put as NULL), so that the next
 * settle resizes each such container to the shared pool.  What the
 * damaged file or the bundle's placement file says of them is not what
 * they run on: the pool changed since their create, and a settle that
 * found the record equal to the pool left a container on cpus another
 * one holds exclusively (helper-5 on the CRI path, 2026-12-05).
 * Exclusive, NUMA-exclusive and pinned records keep theirs.  The caller
 * commits.
 * @return how many records were changed (>= 0); -ENOMEM.
 */
int ts_pools_forget_shared_cpus(const struct ts_pools *p, struct ts_state *s,
				struct ts_error **err);

/**
 * Take the cpusets that were changed from outside toposhim (`docker update
 * --cpuset-cpus`, `podman update`, `runc update`, a kubelet's CPU manager
 * through the CRI) for pins before an exclusive create places: each running
 * shared-pool container of s whose cgroup's cpuset.cpus is not what its
 * record says (nor what the kernel makes of it: the record inside its
 * parent's effective cpus, the root's for one in the root cgroup), and
 * each pinned one whose cpuset was set again, is
 * recorded as pinned there, its placement file too, with a line in
 * resizes.log; exactly what the settle after a resize
 * would record (docs/toposhim.1, the resize of the shared pool).  Before,
 * the create placed first: it took the very cpu an operator had just
 * pinned a container to, and the settle after it moved that container
 * away (helper-20).  A cpuset changed onto cpus a container holds
 * exclusively is left to the settle, which sets it back.  A container
 * whose cgroup cannot be read is left as it is.  The caller commits.
 * @return how many records were pinned (>= 0); -ENOMEM, or the errno of
 *         ts_state_put().
 */
int ts_pools_adopt_outside_pins(const struct ts_pools *p, struct ts_state *s,
				struct ts_error **err);

/**
 * Open the store (its lock held) and load it; a rebuild warning is logged,
 * and with p the shared-pool records' cpus are forgotten
 * (ts_pools_forget_shared_cpus(); the caller commits, then settles: what
 * those containers run on is not known, and until a settle resizes them
 * their records say nothing, which the next settle's check for cpusets
 * changed from outside needs: a rebuild's cpus from the placement files,
 * committed unsettled, made it take shrunk ones for pins, helper-14).
 * @param[in]  p     the pools, or NULL (nothing forgotten)
 * @param[in]  opts  where the store is (ts_state_open())
 * @param[out] ret   the loaded store, the caller's (ts_state_close())
 * @return how many records' cpus were forgotten (0 for a sound store: > 0
 *         means the caller must settle), or a negative errno with *err set
 *         (ts_state_open(), ts_state_load()).
 */
int ts_pools_open_store(const struct ts_pools *p, const struct ts_state_options *opts,
			struct ts_state **ret, struct ts_error **err);

/** Free what p owns (NULL members accepted). */
void ts_pools_release(struct ts_pools *p);

/**
 * Note records the caller drops from the store s, under its lock and
 * before the commit that drops them (a delete's own, a collection's, a
 * poststop hook's): in the settles that follow, in this process and, by
 * the store's released file (ts_state_released_add()), in the one that
 * holds the resize lock when this one finds it taken, the cpus they held
 * in an exclusive, NUMA-exclusive or reserved pool still count as held
 * exclusively when a cpuset changed from outside toposhim is judged.
 * Such a cpuset was set while they were held (the settle before the drop
 * gave the shared containers none of them), so it is resized back like
 * one found while they ran, not adopted as a pin (helper-16: `podman
 * update --cpuset-cpus 0-1` of a shared container while a critical one
 * held CPU 0 became a pin at the critical one's delete, and its restart
 * found no CPU left; helper-17: the same when another process settled).
 * The first settle round that plans with the file's entries removes it.
 * Records of the other pools are skipped.  Best effort: out of memory or
 * a file that cannot be written leaves a record out, which only lets
 * such a cpuset stand as a pin.
 * @param[in] s  the store, locked; NULL: this process only.
 * @param[in] v  n records, borrowed (copied); NULL with n 0.
 */
void ts_pools_note_released(struct ts_pools *p, struct ts_state *s, struct ts_alloc *const *v,
			    size_t n);

/** The pool a stored allocation draws from (ts_placement_allocation_pool()). */
enum ts_placement_pool ts_pools_pool_of(const struct ts_pools *p, const struct ts_alloc *a);

/**
 * Views of every stored allocation for the placement functions.
 * @param[out] ret_allocs  n views borrowing the records' strings; the
 *                         bitmaps they point to are owned by ret_bitmaps.
 * @param[out] ret_bitmaps 2n bitmaps (cpus, mems per record), read-only: a
 *                         record whose lists are the previous record's
 *                         shares its bitmaps; free with ts_pools_views_free().
 * @return n (>= 0); -EINVAL "<state dir>: allocation '<id>': invalid cpu
 *         list '<s>'" (a hand-edited store); -ENOMEM.
 */
int ts_pools_views(const struct ts_pools *p, const struct ts_state *s,
		   struct ts_allocation **ret_allocs, hwloc_bitmap_t **ret_bitmaps,
		   struct ts_error **err);

/** Free what ts_pools_views() returned. */
void ts_pools_views_free(struct ts_allocation *allocs, hwloc_bitmap_t *bitmaps, size_t n);

/** Longest a settle waits for shared-pool containers whose create is in flight: 10 s. */
#define TS_POOLS_CREATE_WAIT_USEC (10ull * 1000 * 1000)

/** Name of the lock file, in the state dir, held while shared-pool containers are resized. */
#define TS_POOLS_RESIZE_LOCK "resize.lock"

/**
 * Name of the file, in the state dir, that holds the targets of the
 * resizes a settle is making: written under the store's lock before it
 * resizes, removed once their outcomes are recorded.  A settle killed in
 * between leaves it: the next settle records each container that reached
 * its target (its cpuset is toposhim's own, not an operator's), and an
 * exclusive create does not take such a one for pinned from outside.  A
 * JSON array of {"runtime_root", "container_id", "pid", "cpus", "mems"}.
 */
#define TS_POOLS_RESIZING_FILE "resizing"

/**
 * Give every running shared-pool container of the store the current shared
 * pool (the cpus of its class, and the NUMA nodes those cpus take memory
 * from), and update the records, on a store the caller holds open.  Logs
 * one warning per container that could not be resized and drops dead ones
 * from the store.  A container whose cgroup cpuset.cpus (ts_cgroup_read_cpus())
 * is neither its record's cpus (within its cgroup parent's) nor what the
 * pool gives it was changed by someone else: its record becomes pinned to
 * that cpuset, and it is not resized (one info line); unless that cpuset
 * takes cpus of an exclusive, NUMA-exclusive or reserved record: then it is
 * resized, with a warning naming that record's container.  The caller commits.  The create path and
 * the hooks use ts_pools_settle(), which does not hold the store while resizing.
 * @param[in] systemd_cgroup  the engine passed --systemd-cgroup.
 * @return how many containers were resized (>= 0); errors of
 *         ts_pools_views(), ts_placement_shared_pool() and ts_cgroup_resize()
 *         (bad input, out of memory); a container that fails is not an error.
 */
int ts_pools_rebalance(struct ts_pools *p, struct ts_state *s, bool systemd_cgroup,
		       struct ts_error **err);

/**
 * Bring every running shared-pool container to the current shared pool,
 * with no store open by the caller, without holding the store's lock while
 * a container is resized (a `<runtime> update` may take seconds, and
 * creates must not wait for it; issue 10, finding 8).
 *
 * Protocol: the resizes of a node are done by whoever holds
 * <state_dir>/resize.lock (flock, never waited for).  The holder repeats
 * rounds — plan under the store lock (ts_pools_rebalance()'s choice of
 * containers and values), resize with the lock released, record the
 * outcomes under the lock (a record released or replaced meanwhile is left
 * alone) — until nothing differs, releases the resize lock, and looks once
 * more.  A process that finds the resize lock taken returns at once: its
 * change is committed already, and the holder's next look finds it.  A
 * container whose resize failed is not tried again in the same settle.
 * A shared-pool container whose create is still running (no hook records
 * its init) and whose cpus the pool no longer gives is waited for, without
 * any lock, until its runtime's state names the init or its create is over
 * (at most TS_POOLS_CREATE_WAIT_USEC per settle), then resized: it never
 * starts on cpus another container now holds exclusively.
 * @param[in] opts            where the store is; borrowed.
 * @param[in] systemd_cgroup  the engine passed --systemd-cgroup.
 * @return how many containers this process resized (>= 0; 0 also when
 *         another process holds the resize lock, or placement is off);
 *         errors of the store and of ts_pools_rebalance()'s planning.
 */
int ts_pools_settle(struct ts_pools *p, const struct ts_state_options *opts, bool systemd_cgroup,
		    struct ts_error **err);

/** ts_pools_settle(), a failure logged as a warning ("..., ignoring"), not returned. */
void ts_pools_settle_or_warn(struct ts_pools *p, const struct ts_state_options *opts,
			     bool systemd_cgroup);

/**
 * The createRuntime hook's catch-up: whether an exclusive, pinned or
 * NUMA-exclusive allocation was recorded after this shared-pool container's
 * create and overlaps the cpus it was given (a create that raced ahead
 * between its exec and this hook, whose settle could not resize it yet:
 * it had no init process).  Cheap: no topology is loaded.  When true, the
 * hook commits, closes the store and calls ts_pools_settle().  On cgroup v2
 * the new cpuset is written into the container's cgroup at once; on v1 and
 * with systemd the resize is a `<runtime> update`, which the runtime
 * refuses for a container it is still creating, so there the container
 * follows at the next pool change.
 * @param[in] s  the locked, loaded store holding the container's updated record.
 */
bool ts_pools_catch_up(struct ts_pools *p, const struct ts_state *s, const char *runtime_root,
		       const char *container_id);

/**
 * Whether a class's cgroup limits ask for nothing the kernel does not give
 * every cgroup anyway (cpu.weight 100 is its default); NULL (no limits)
 * counts as nothing.
 */
bool ts_pools_class_needs_nothing(const struct ts_cgroup_class_limits *l);

/**
 * Whether the core may keep the plain-container summary (state/plain.h) at
 * all: placement on, no plugin (their stages run for every container), the
 * caller root of the initial user namespace (a rootless create judges its
 * cgroup parent each time), the host's own topology (no "topology": {"xml"}
 * and no TOPOSHIM_TOPOLOGY_XML) and none of the TOPOSHIM_* overrides the
 * front refuses (cli/plain.h).
 * @param[in] plugins  the config names any plugin.
 */
bool ts_pools_plain_allowed(const struct ts_pools *p, bool plugins);

/**
 * What a plain container gets now: the placement of a request that asks
 * for nothing (class "standard", no cgroup parent) on the store's
 * allocations.  *ret_ok tells whether that leaves it untouched: the shared
 * pool, every online cpu, and a class that sets no cgroup value.  On
 * *ret_ok, ret's class_name, cpus, mems and unified are filled (release
 * with ts_plain_summary_release()).  The topology must be loaded.
 * @return 0; errors of the placement (a hand-edited store); -ENOMEM.
 */
int ts_pools_plain_probe(struct ts_pools *p, const struct ts_state *s, bool *ret_ok,
			 struct ts_plain_summary *ret, struct ts_error **err);

/**
 * Write the summary of what a plain container gets (probe, from
 * ts_pools_plain_probe()) with this host's facts and the identity of
 * p->config_path (state/plain.h ts_plain_host_read()), on a store the
 * caller holds (the lock).
 * @return 0; errors of ts_plain_host_read() and ts_plain_summary_write().
 */
int ts_pools_plain_write(const struct ts_pools *p, const struct ts_state *s,
			 const struct ts_plain_summary *probe, struct ts_error **err);

/**
 * Keep the summary true, on a store the caller holds (the lock): write it
 * (ts_pools_plain_write()) when allowed (ts_pools_plain_allowed()) and the
 * probe says a plain container is left untouched, withdraw it otherwise.
 * Loads the topology.
 * @return 1 written, 0 withdrawn; errors of the probe, of reading the
 *         host's facts and of the write or withdrawal.
 */
int ts_pools_plain_update(struct ts_pools *p, struct ts_state *s, bool allowed,
			  struct ts_error **err);

/**
 * ts_pools_plain_update() in a store session of its own, a failure logged
 * as a warning: after a delete gave cpus back, so that the next plain
 * create needs no core again.
 */
void ts_pools_plain_refresh(struct ts_pools *p, const struct ts_state_options *opts, bool allowed);

/**
 * Take the journal's plain containers into the store (state/plain.h) when
 * the shared pool no longer gives one of them what it was created with:
 * each becomes a "creating" record with its create process, which the
 * resize machinery then waits for or resizes like any other; the journal
 * is emptied once the store is committed.  Entries of containers that are
 * gone are dropped.  Nothing is taken while the pool still gives every one
 * of them its cpus, unless all is true (an exclusive create, about to
 * change the pool, looks at their cpusets first: ts_pools_adopt_outside_pins()).
 * s is the caller's, locked.  A journal that cannot be
 * taken (not a file of ours, unreadable) is one warning per process and
 * no record: the recorded containers are resized all the same.
 * @return how many records were made (>= 0); errors of the topology, the
 *         store and the placement.
 */
int ts_pools_take_plain(struct ts_pools *p, struct ts_state *s, bool all, struct ts_error **err);

/**
 * The poststop stage: remove a container's allocation and give its CPUs
 * back to the shared pool, then resize the running shared-pool containers
 * (ts_pools_settle(), after the store is committed and closed).
 * @param[in] config, config_path  the toposhim config; borrowed.
 * @param[in] opts                 where the store is.
 * @param[in] runtime_root, container_id, bundle
 *                                 the container, found as ts_state_lookup()
 *                                 finds it (bundle matters only without a
 *                                 root); borrowed.
 * @param[out] ret_removed         may be NULL; the removed record (caller
 *                                 frees with ts_alloc_free()), NULL if none.
 * @return 1 when an allocation was removed; 0 when there was none (already
 *         collected: not an error); errors of ts_pools_init() and of the
 *         store.  A failed resize is logged, not returned.
 */
int ts_pools_release_container(const struct ts_json *config, const char *config_path,
			       const struct ts_state_options *opts, const char *runtime_root,
			       const char *container_id, const char *bundle,
			       struct ts_alloc **ret_removed, struct ts_error **err);

struct ts_cdi_injection;
struct ts_cdi_registry;
struct ts_policy_request;

/**
 * Fill the placement side of a policy request (policy.h) from a placement
 * request: the pool its class takes in cfg (shared, reserved, else
 * exclusive), the class when annotated, the exclusive cpu count, the cpu
 * limit and guaranteed flag, a NUMA mode other than prefer, a memory tier
 * other than DRAM, and the JSON pointers each came from.  Devices,
 * namespace and config name are the caller's.  Borrows from req (its
 * strings must outlive pr); writes only those members of *pr.
 */
void ts_pools_policy_request_of(const struct ts_placement_config *cfg,
				const struct ts_placement_request *req,
				struct ts_policy_request *pr);

/**
 * Whether the config's "policy" reads (ts_policy_parse()): checked by a
 * create before it makes anything (the state dir, its lock, the topology
 * cache), so that a config it refuses leaves nothing behind.
 * @return 0; -EINVAL with the line of ts_policy_parse().
 */
int ts_pools_policy_valid(const struct ts_json *config, const char *config_path,
			  struct ts_error **err);

/**
 * The operator's policy (policy.h, the config's "policy") on what a
 * container asks for: its class, cpu count, NUMA and memory-tier wishes
 * and the CDI devices its annotations (or env) requested, not those the
 * engine injected itself.  What a create checks, and `toposhimctl plan`
 * with it (helper-11: plan granted what the create then refused).
 * @param[in] config, config_path          the toposhim config (NULL: none).
 * @param[in] oci_config, oci_config_path  the container's config.json.
 * @param[in] cfg       the placement config; NULL with req.
 * @param[in] req       the placement request; NULL without placement (only
 *                      the devices are judged then).
 * @param[in] injected  the CDI injection (NULL: no device).
 * @return 0 allowed; -EINVAL with ts_policy_check()'s line naming the
 *         config.json field and the rule (a refusal), or ts_policy_parse()'s
 *         (a policy that does not parse), or the namespace's; -ENOMEM.
 */
int ts_pools_check_policy(const struct ts_json *config, const char *config_path,
			  const struct ts_json *oci_config, const char *oci_config_path,
			  const struct ts_placement_config *cfg,
			  const struct ts_placement_request *req,
			  const struct ts_cdi_injection *injected, struct ts_error **err);

/**
 * After a failed CDI injection (ts_cdi_inject_requested()): the policy on
 * the devices the container asked for, so that a device the policy does
 * not grant is refused as such, not with what its resolution told (spec
 * files and their paths, host device nodes: helper-24).  A device the
 * engine injected itself (ts_cdi_engine_injected() against oci_config) is
 * no request and is not judged (helper-25: the refusal named such a device
 * and asked for a grant it does not need).  What a create and `toposhimctl
 * plan` do alike.
 * @param[in] oci_config     the container's config.json as the engine wrote
 *                           it, not as a failed injection left it.
 * @param[in] reg            the registry the injection used (NULL: none).
 * @param[in] env_requests   the cdi options' env_requests.
 * @param[in] r              the injection's result (< 0).
 * @param[in,out] err        the injection's error: replaced by the policy's
 *                           refusal when there is one.
 * @return r with *err as it was; or the refusal's -EINVAL (ts_policy_check()'s
 *         line naming the field and the rule, or the namespace's).
 */
int ts_pools_policy_over_cdi_error(const struct ts_json *config, const char *config_path,
				   const struct ts_json *oci_config, const char *oci_config_path,
				   const struct ts_cdi_registry *reg, bool env_requests, int r,
				   struct ts_error **err);

/**
 * The values an earlier create of this bundle wrote into config.json for
 * its class (its placement file's "resources_written") and config.json
 * still holds go back to the engine's, before the request is read: a
 * bundle created again (or planned, `toposhimctl plan`) under another class
 * is not given the earlier class's values as the engine's own (helper-10).
 * A value changed since stays.  Logs each at debug level.
 * @param[in,out] config       the bundle's config.json tree.
 * @param[in]     config_path  for messages.
 * @param[in]     p            the bundle's placement file
 *                             (ts_state_placement_read()).
 * @return how many were put back; -ENOMEM "<config_path>".
 */
int ts_pools_forget_earlier_class(struct ts_json *config, const char *config_path,
				  const struct ts_state_placement *p, struct ts_error **err);

/**
 * CPUs an earlier create of this bundle wrote (p->cpus_written, not pinned,
 * and config.json's cpus are exactly p->cpus_str) are no request: req's
 * user_cpus and user_mems are dropped.  Whatever that create's container
 * id: a bundle created again under another id took the earlier container's
 * cpus as the user's pin.  config.json is not changed.
 * @param[in]     config  the bundle's config.json tree.
 * @param[in]     p       the bundle's placement file.
 * @param[in,out] req     the request read from config.
 */
void ts_pools_forget_earlier_cpus(const struct ts_json *config, const struct ts_state_placement *p,
				  struct ts_placement_request *req);

#endif
