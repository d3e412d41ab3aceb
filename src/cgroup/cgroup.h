/*
 * cgroup.h - cgroup mode awareness, cgroup limits per QoS class, and live
 * cpuset resizing of running containers.
 *
 * Implements:
 *  - Linux Documentation/admin-guide/cgroup-v2.rst (kernel 6.x): the
 *    interface files cpu.weight, cpu.max, cpu.idle, memory.high, memory.low,
 *    memory.min, memory.oom.group, io.weight, pids.max, cpuset.cpus,
 *    cpuset.mems, cpuset.cpus.effective;
 *  - OCI runtime-spec v1.1.0/v1.2.0 config-linux.md "CPU" (shares, quota,
 *    period), "Memory" (limit, reservation), "PIDs" (limit) and "Unified"
 *    (linux.resources.unified: object of string values, cgroup v2 only);
 *  - the runc/crun command line "update --cpuset-cpus X --cpuset-mems Y ID".
 *
 * Three parts:
 *
 * 1. Mode.  ts_cgroup_detect_mode() tells unified (pure cgroup v2), hybrid
 *    (v1 hierarchies on a tmpfs plus a cgroup2 mount at <root>/unified) and
 *    legacy (v1 only).  The root is "/sys/fs/cgroup", or env
 *    TOPOSHIM_CGROUP_ROOT, or config "cgroup": {"root": ...} (env first).
 *    A fake tree cannot carry a filesystem magic, so the mode can be forced:
 *    config "cgroup": {"mode": "unified"|"hybrid"|"legacy"|"auto"}, or a file
 *    named TS_CGROUP_MODE_FILE (".toposhim-cgroup-mode") at the root of the
 *    tree holding one of those words (config wins over the file, the file
 *    over statfs; ts_cgroup_config_resolve() applies that order).
 *
 * 2. Class limits.  The toposhim config names, per QoS class, the cgroup v2
 *    values its containers get:
 *
 *      "cgroup": {
 *        "root": "/sys/fs/cgroup",            optional
 *        "mode": "auto",                      optional
 *        "classes": {
 *          "critical": {"cpu.weight": 1000, "memory.min": "request"},
 *          "batch":    {"cpu.weight": 1, "cpu.idle": 1, "pids.max": 512},
 *          "web":      {"cpu.max": "50000 100000", "memory.high": "0.9",
 *                       "memory.oom.group": true, "io.weight": 50,
 *                       "override_engine": true}
 *        }
 *      }
 *
 *    Keys of a class (each optional; null removes a built-in default):
 *      cpu.weight        integer 1..10000
 *      cpu.max           string "max", "max PERIOD", "QUOTA" or "QUOTA PERIOD"
 *                        (microseconds; QUOTA >= 1000, PERIOD 1000..1000000)
 *      cpu.idle          0 or 1
 *      memory.high, memory.low, memory.min
 *                        integer bytes; "max" (memory.high only); a fraction
 *                        string "0.9" (0 < f <= 1) of the container's
 *                        linux.resources.memory.limit; or "request": the
 *                        container's memory.reservation, else its limit
 *      memory.oom.group  boolean (or 0/1)
 *      io.weight         integer 1..10000
 *      pids.max          integer > 0, or "max"
 *      override_engine   boolean, default false: whether the class value
 *                        replaces a value the engine set in config.json
 *    Built-in classes (a configured class is merged over its built-in):
 *      critical  cpu.weight 1000, memory.min "request"
 *      standard  cpu.weight 100 (the kernel's default)
 *      batch     cpu.weight 1, cpu.idle 1
 *    Other class names may be configured freely; an unknown class has no limits.
 *    A unified key whose controller or file the host lacks (io.weight without
 *    the io controller enabled, cpu.idle before Linux 5.15) makes the runtime
 *    fail the create: configure only what the hosts have.
 *
 *    Mapping onto config.json (see ts_cgroup_apply_class()):
 *
 *      key               unified (cgroup v2)                 hybrid/legacy (v1)
 *      cpu.weight W      cpu.shares = S(W), unified          cpu.shares = S(W)
 *                        "cpu.weight" = "W"
 *      cpu.max Q P       cpu.quota = Q (-1 for max),         same
 *                        cpu.period = P
 *      cpu.idle          unified "cpu.idle"                  skipped
 *      memory.high       unified "memory.high"               skipped
 *      memory.low        memory.reservation                  memory.reservation
 *                        (runc and crun write it to          (memory.soft_limit_in_bytes)
 *                        memory.low on v2)
 *      memory.min        unified "memory.min"                skipped
 *      memory.oom.group  unified "memory.oom.group" "0"/"1"  skipped
 *      io.weight         unified "io.weight" = "default W"   skipped
 *      pids.max          pids.limit (-1 for max)             pids.limit
 *
 *    With cpu.idle 1 (on unified) the class weight goes into cpu.shares only,
 *    never unified "cpu.weight": the kernel refuses cpu.weight writes to an
 *    idle group (EINVAL), and runc writes the unified keys in Go map order,
 *    so "cpu.idle" before "cpu.weight" failed creates at random (1 of 6 in
 *    the qemu guest, runc 1.1.5).  An idle group's weight is the kernel's
 *    idle weight anyway (cpu.weight reads 0); both runtimes write the
 *    shares before any unified key.
 *
 *    S(W) = round(W * 1024 / 100) clamped to 2..262144 is the kernel's own
 *    equivalence (kernel/sched: a cgroup v2 weight W and a v1 cpu.shares
 *    value S give the same scheduler weight when S = W * 1024 / 100).  The
 *    runtimes convert shares to weight differently: runc <= 1.3.1 and crun
 *    before containers/crun PR #1767 (2025) use the linear
 *        W = 1 + ((S - 2) * 9999) / 262142       (1024 -> 39)
 *    while runc >= 1.3.2/1.4.0 (opencontainers/cgroups PR #20) and newer
 *    crun use the quadratic-in-log one
 *        W = ceil(10 ^ (L^2/612 + 125*L/612 - 7/34)),  L = log2(S)  (1024 -> 100).
 *    Since the result depends on the runtime's version, on cgroup v2 the
 *    weight goes into unified["cpu.weight"] as well (idle classes aside),
 *    which both runtimes write after (and so over) the converted shares.
 *    ts_cgroup_shares_to_weight_linear()/_quadratic() compute both formulas,
 *    for callers that need to tell which weight an engine's shares became.
 *
 * 3. Live resizing (ts_cgroup_resize()): new cpus/mems for running
 *    containers, by direct writes to their cgroup v2 cpuset files, or by
 *    `<runtime> --root R update` for systemd-managed cgroups and cgroup v1.
 *
 * 4. Parents (ts_cgroup_parent_cpuset()): the cpuset a container's cgroup
 *    parent allows (kubelet's reserved CPUs on kubepods, a systemd slice's
 *    AllowedCPUs, an operator's narrowing).  The kernel refuses a child
 *    cpuset outside its parent's (cgroup v1: EINVAL/EACCES on cpuset.cpus;
 *    v2: the effective cpuset is clipped), so what toposhim writes must lie
 *    inside it.
 *
 * Layering: cgroup includes util and oci (for the config.json tree, as cdi
 * does) and nothing else; callers pass plain values (cpulist strings,
 * cgroup paths, pids), never placement or state objects.
 * Nothing here prints, exits or execs in the calling process: the runtime is
 * executed inside a forked child, which calls only async-signal-safe
 * functions and ends in _exit().
 */
#ifndef TS_CGROUP_CGROUP_H
#define TS_CGROUP_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/json.h"
#include "util/error.h"

#define TS_CGROUP_ROOT_DEFAULT "/sys/fs/cgroup"
#define TS_CGROUP_ROOT_ENV "TOPOSHIM_CGROUP_ROOT"
#define TS_CGROUP_MODE_FILE ".toposhim-cgroup-mode"

/* ---- mode ---------------------------------------------------------------------------------- */

enum ts_cgroup_mode {
	TS_CGROUP_MODE_UNIFIED, /* cgroup v2 only */
	TS_CGROUP_MODE_HYBRID,	/* v1 controllers + a cgroup2 mount at <root>/unified */
	TS_CGROUP_MODE_LEGACY,	/* v1 only */
	_TS_CGROUP_MODE_MAX,
	TS_CGROUP_MODE_INVALID = -22, /* -EINVAL */
};

/** "unified", "hybrid", "legacy"; NULL for anything else. */
const char *ts_cgroup_mode_to_string(enum ts_cgroup_mode mode);

/** Inverse of ts_cgroup_mode_to_string(); TS_CGROUP_MODE_INVALID if unknown or NULL. */
enum ts_cgroup_mode ts_cgroup_mode_from_string(const char *s);

/**
 * Classify filesystem magics as statfs(2) reports them (f_type).
 * @param[in] root_magic     f_type of the cgroup root.
 * @param[in] unified_magic  f_type of <root>/unified, 0 when it does not exist.
 * @return UNIFIED when root_magic is CGROUP2_SUPER_MAGIC; HYBRID when the
 *         root is TMPFS_MAGIC and unified_magic is CGROUP2_SUPER_MAGIC;
 *         LEGACY otherwise.
 */
enum ts_cgroup_mode ts_cgroup_mode_from_magic(int64_t root_magic, int64_t unified_magic);

/**
 * The cgroup root to use: env TOPOSHIM_CGROUP_ROOT (when set and not
 * empty, read with secure_getenv), else config_root, else
 * TS_CGROUP_ROOT_DEFAULT.
 * @param[in] config_root  config "/cgroup/root" or NULL; borrowed.
 * @return a borrowed string (from the environment, config_root or a literal).
 */
const char *ts_cgroup_root(const char *config_root);

/**
 * Detect the cgroup mode of the tree at root.
 * Order: the file <root>/TS_CGROUP_MODE_FILE when it exists (its content,
 * surrounding whitespace ignored, must be a mode word), else statfs(2) of
 * root and of <root>/unified, classified by ts_cgroup_mode_from_magic().
 * @param[in]  root      directory; borrowed.
 * @param[out] ret_mode  the mode; written only on success.
 * @param[out] err       set iff the return value is negative.
 * @return 0; -errno of statfs on root ("<root>: cannot statfs");
 *         -EINVAL "<root>/.toposhim-cgroup-mode: invalid cgroup mode '<word>'";
 *         -errno of reading that file other than ENOENT.
 */
int ts_cgroup_detect_mode(const char *root, enum ts_cgroup_mode *ret_mode, struct ts_error **err);

/* ---- class limits -------------------------------------------------------------------------- */

enum ts_cgroup_mem_kind {
	TS_CGROUP_MEM_UNSET,
	TS_CGROUP_MEM_BYTES,	/* bytes */
	TS_CGROUP_MEM_MAX,	/* "max" (no limit) */
	TS_CGROUP_MEM_FRACTION, /* ppm of linux.resources.memory.limit */
	TS_CGROUP_MEM_REQUEST,	/* memory.reservation, else memory.limit */
	_TS_CGROUP_MEM_KIND_MAX,
	TS_CGROUP_MEM_KIND_INVALID = -22,
};

struct ts_cgroup_mem_value {
	enum ts_cgroup_mem_kind kind;
	uint64_t bytes;	       /* with TS_CGROUP_MEM_BYTES */
	uint32_t fraction_ppm; /* with TS_CGROUP_MEM_FRACTION: 1..1000000 (0.9 = 900000) */
};

/* The limits of one class.  A zero-filled struct means "no limits". */
struct ts_cgroup_class_limits {
	char name[64];		      /* class name, NUL-terminated */
	uint32_t cpu_weight;	      /* 1..10000; 0 = unset */
	bool has_cpu_max;	      /* cpu.max set */
	int64_t cpu_max_quota_usec;   /* > 0, or -1 for "max" */
	uint64_t cpu_max_period_usec; /* 0 = not given (runtime default 100000) */
	int cpu_idle;		      /* 0 or 1; -1 = unset */
	struct ts_cgroup_mem_value memory_high, memory_low, memory_min;
	int memory_oom_group; /* 0 or 1; -1 = unset */
	uint32_t io_weight;   /* 1..10000; 0 = unset */
	int64_t pids_max;     /* > 0, -1 for "max"; 0 = unset */
	bool override_engine; /* class values replace the engine's */
	/* keys without a v1 equivalent (TS_CGROUP_V1LESS_*) whose value is a
	 * built-in default, not configured: skipped on v1 without a message */
	unsigned builtin_v1less;
};

#define TS_CGROUP_V1LESS_CPU_IDLE 1u
#define TS_CGROUP_V1LESS_MEMORY_HIGH 2u
#define TS_CGROUP_V1LESS_MEMORY_MIN 4u
#define TS_CGROUP_V1LESS_OOM_GROUP 8u
#define TS_CGROUP_V1LESS_IO_WEIGHT 16u

/* The "cgroup" member of the toposhim config. */
struct ts_cgroup_config {
	char *root;				/* "/cgroup/root" or NULL; owned */
	enum ts_cgroup_mode mode;		/* forced mode, TS_CGROUP_MODE_INVALID = auto */
	struct ts_cgroup_class_limits *classes; /* built-ins first, then new names; owned */
	size_t n_classes;
};

/**
 * Read config "cgroup" (see the top of this file), merging configured
 * classes over the built-in ones.
 * @param[in]  config       the toposhim config root object (NULL = no config:
 *                          built-ins only); borrowed.
 * @param[in]  config_path  file name for messages.
 * @param[out] ret          filled; release with ts_cgroup_config_release().
 *                          Untouched on failure.
 * @param[out] err          set iff the return value is negative.
 * @return 0; -EINVAL with "<file>: '<pointer>': <problem>", e.g.
 *         "<file>: '/cgroup': expected object, got array",
 *         "<file>: '/cgroup/root': expected string, got number",
 *         "<file>: '/cgroup/root': not absolute 'x'",
 *         "<file>: '/cgroup/mode': invalid cgroup mode 'v3'",
 *         "<file>: '/cgroup/classes/batch/cpu.weight': out of range '0' (1..10000)",
 *         "<file>: '/cgroup/classes/batch/cpu.max': invalid cpu.max '5 x'",
 *         "<file>: '/cgroup/classes/batch/memory.high': invalid memory value '1.5'",
 *         "<file>: '/cgroup/classes/batch/foo': unknown key",
 *         "<file>: '/cgroup/classes/<name>': class name too long";
 *         -ENOMEM.
 */
int ts_cgroup_config_read(const struct ts_json *config, const char *config_path,
			  struct ts_cgroup_config *ret, struct ts_error **err);

/**
 * The cgroup root and mode to use: root from ts_cgroup_root(c->root); mode
 * c->mode when the config forces one, else ts_cgroup_detect_mode() on root.
 * @param[in]  c         read config (NULL = defaults); borrowed.
 * @param[out] ret_root  borrowed from c or the environment, or a literal.
 * @param[out] ret_mode  the mode.  Both written only on success.
 * @return 0; the errors of ts_cgroup_detect_mode().
 */
int ts_cgroup_config_resolve(const struct ts_cgroup_config *c, const char **ret_root,
			     enum ts_cgroup_mode *ret_mode, struct ts_error **err);

/** Free what ts_cgroup_config_read() allocated and zero *c (NULL accepted). */
void ts_cgroup_config_release(struct ts_cgroup_config *c);

/**
 * Limits of a class.
 * @return borrowed from c (valid until it is released), or NULL when the
 *         class has none (unknown name, NULL name).
 */
const struct ts_cgroup_class_limits *ts_cgroup_config_class(const struct ts_cgroup_config *c,
							    const char *class_name);

/**
 * Write a class's limits into a config.json tree (mapping table above).
 * Each key is handled on its own:
 *  - when the engine already set the field it maps to (the OCI field or the
 *    unified key: for cpu.weight the shares or unified "cpu.weight", for
 *    cpu.max quota/period or unified "cpu.max", for memory.low the
 *    reservation or unified "memory.low", for pids.max pids.limit or unified
 *    "pids.max"), the engine's value is kept unless limits->override_engine;
 *    a differing value gives a message either way;
 *  - a memory fraction or "request" that cannot be resolved (no limit /
 *    reservation in config.json) is skipped with a message;
 *  - on HYBRID/LEGACY, linux.resources.unified is never written, and the
 *    keys without a v1 equivalent are skipped with one message naming the
 *    configured ones (built-in defaults, critical's memory.min and batch's
 *    cpu.idle, are skipped silently).
 * Every other member of config.json, unified keys the engine set included,
 * is kept in place.
 * Messages (one line each, lowercase, caller logs them as warnings):
 *   "config.json: '/linux/resources/cpu/shares': engine value '2' kept over
 *    class 'critical' value '10240' (cpu.weight 1000)"  ("replaced by" with
 *    override_engine)
 *   "config.json: class 'batch': cgroup v1 (hybrid): skipped cpu.idle,
 *    memory.min (no v1 equivalent)"
 *   "config.json: class 'web': memory.high '0.9' skipped: no
 *    '/linux/resources/memory/limit'"
 *   "config.json: class 'critical': memory.min 'request' skipped: no
 *    '/linux/resources/memory/reservation' or '/linux/resources/memory/limit'"
 * @param[in,out] oci_config    config.json root object; edited in place.
 * @param[in]     config_name   file name for messages ("config.json" or a path).
 * @param[in]     limits        the class; borrowed; NULL = nothing to do.
 * @param[in]     mode          the host's cgroup mode.
 * @param[out]    ret_messages  NULL-terminated vector of messages, or NULL when
 *                              there are none; caller frees (cleanup_strv).
 *                              Written only on success.
 * @param[out]    err           set iff the return value is negative.
 * @return the number of messages (>= 0); -EINVAL when a field on the way has
 *         the wrong type ("config.json: '/linux/resources/unified': expected
 *         object, got array", "config.json: '/linux/resources/unified/cpu.weight':
 *         expected string, got number", "config.json:
 *         '/linux/resources/memory/limit': not an integer '1.5'") or mode is
 *         invalid; -ENOMEM.  On failure the tree may be partly edited.
 */
int ts_cgroup_apply_class(struct ts_json *oci_config, const char *config_name,
			  const struct ts_cgroup_class_limits *limits, enum ts_cgroup_mode mode,
			  char ***ret_messages, struct ts_error **err);

/** The kernel's equivalence of a v2 weight and v1 shares: round(W*1024/100), 2..262144. */
uint64_t ts_cgroup_weight_to_shares(uint64_t weight);
/** runc <= 1.3.1 / older crun: 1 + ((S-2)*9999)/262142; 0 for 0; S clamped to 2..262144. */
uint64_t ts_cgroup_shares_to_weight_linear(uint64_t shares);
/** runc >= 1.3.2 / newer crun: ceil(10^(L^2/612 + 125L/612 - 7/34)), L = log2(S); 0 for 0. */
uint64_t ts_cgroup_shares_to_weight_quadratic(uint64_t shares);

/* ---- translations ------------------------------------------------------------------------ */

/* What ts_cgroup_translate() needs to know of the host and the runtime. */
struct ts_cgroup_translate_options {
	enum ts_cgroup_mode mode; /* the host's cgroup mode */
	bool systemd;		  /* --systemd-cgroup: the runtime's systemd driver */
	bool runtime_is_crun;	  /* the runtime is crun (its family, runtime.h) */
};

/**
 * Rewrite config.json's cgroup values into the values the host will
 * actually apply, so that the result does not depend on the runtime's
 * version or cgroup driver.  After ts_cgroup_apply_class(); each rule:
 *  - cpu.shares outside the kernel's range [2, 262144] (0 is "unset" and
 *    stays) is clamped into it, as kubelet does (MilliCPUToShares): runc
 *    <= 1.3.1 fails the create on v2 ("numerical result out of range", its
 *    linear conversion underflows) and on v1 (the read-back check of
 *    cpu.shares), crun writes whatever the kernel makes of it.  Message:
 *    "<file>: '/linux/resources/cpu/shares': '1' clamped to '2' (the
 *    kernel's range 2..262144)";
 *  - UNIFIED, shares set and no unified "cpu.weight" (and no unified
 *    "cpu.idle" "1": the kernel refuses a weight on an idle group):
 *    unified "cpu.weight" = ts_cgroup_shares_to_weight_quadratic(shares),
 *    the conversion of runc >= 1.3.2 (opencontainers/cgroups) and crun >=
 *    1.23 (1024 -> 100), which corrects the linear one of older runtimes
 *    (1024 -> 39) and pins it: a runtime upgrade changes no weight.  No
 *    message;
 *  - systemd: a quota Q > 0 with period P (0/absent: 100000) is written as
 *    ts_cgroup_systemd_quota(Q, P), the value systemd puts into cpu.max
 *    (runc's systemd driver turns it into CPUQuotaPerSecUSec rounded up to
 *    10 ms, 1% of a CPU), with a message "<file>:
 *    '/linux/resources/cpu/quota': '123456' written as '124000', ..."; an
 *    engine's unified "cpu.max" follows.  On UNIFIED, a quota of -1
 *    becomes unified "cpu.max" = "max <P>" and the quota member is removed
 *    (crun's systemd path mistakes -1; a unified "cpu.max" the engine set
 *    stays);
 *  - UNIFIED with crun: each linux.resources.hugepageLimits entry
 *    {pageSize S, limit L} adds unified "hugetlb.<S>.rsvd.max" = "L"
 *    unless present: crun writes only hugetlb.<S>.max, so reservations
 *    (MAP_NORESERVE-less mmap, shmget) escape the limit (kernel >= 5.7 has
 *    the rsvd files).
 * Nothing happens without linux.resources.  Every other member is kept.
 * @param[in,out] oci_config    config.json root; edited in place.
 * @param[in]     config_name   file name for messages.
 * @param[in]     opts          host and runtime; borrowed.
 * @param[out]    ret_messages  NULL-terminated, or NULL when none; caller
 *                              frees (cleanup_strv); written on success only.
 * @return the number of messages (>= 0); -EINVAL for a field of the wrong
 *         type ("<file>: '/linux/resources/cpu/shares': expected number,
 *         got string", "<file>: '/linux/resources/unified': expected object,
 *         got array", "<file>: '/linux/resources/hugepageLimits/0': expected
 *         pageSize and an integer limit") or an invalid mode; -ENOMEM.  On
 *         failure the tree may be partly edited.
 */
int ts_cgroup_translate(struct ts_json *oci_config, const char *config_name,
			const struct ts_cgroup_translate_options *opts, char ***ret_messages,
			struct ts_error **err);

/**
 * The cpu.max quota systemd applies for an OCI quota (runc's systemd
 * driver): CPUQuotaPerSecUSec = Q * 1000000 / P, rounded up to a multiple of
 * 10000 (1% of a CPU), then back to P: per_sec * P / 1000000.
 * @param quota_usec   > 0.
 * @param period_usec  0 for the default 100000.
 * @return the quota in microseconds per period (123456/100000 -> 124000).
 */
uint64_t ts_cgroup_systemd_quota(uint64_t quota_usec, uint64_t period_usec);

/* ---- live resizing ------------------------------------------------------------------------- */

enum ts_cgroup_driver {
	TS_CGROUP_DRIVER_AUTO,	   /* systemd when the path's last component ends in ".scope" */
	TS_CGROUP_DRIVER_CGROUPFS, /* direct writes (cgroup v2 only) */
	TS_CGROUP_DRIVER_SYSTEMD,  /* always `runtime update` */
	_TS_CGROUP_DRIVER_MAX,
	TS_CGROUP_DRIVER_INVALID = -22,
};

/* One container to resize.  All strings borrowed. */
struct ts_cgroup_resize_target {
	const char *container_id;
	const char *cgroup_path;  /* from /proc/<pid>/cgroup, e.g. "/kubepods/pod1/ctr"
				   * (relative to the cgroup root; must not contain "..") */
	const char *cpus_str;	  /* new cpuset, e.g. "0-3,8"; NULL = unchanged */
	const char *mems_str;	  /* new mems, e.g. "0"; NULL = unchanged */
	pid_t pid;		  /* init pid; 0 = unknown (liveness not checked) */
	uint64_t pid_start_ticks; /* field 22 of /proc/<pid>/stat; 0 = not checked */
	const char *runtime_path; /* runc/crun for the update path */
	const char *runtime_root; /* its --root; NULL = omitted */
	enum ts_cgroup_driver driver;
};

struct ts_cgroup_resize_options {
	const char *root;	  /* cgroup root (ts_cgroup_root()); borrowed */
	enum ts_cgroup_mode mode; /* the host's mode */
	const char *proc_root;	  /* "/proc" or a fake tree; NULL = "/proc" */
	unsigned timeout_ms;	  /* per `runtime update`; 0 = 10000 */
};

enum ts_cgroup_resize_status {
	TS_CGROUP_RESIZE_OK,	   /* applied (and read back where written directly) */
	TS_CGROUP_RESIZE_DEAD,	   /* container gone: skipped; collect its allocation */
	TS_CGROUP_RESIZE_MISMATCH, /* written, but cpuset.cpus.effective differs */
	TS_CGROUP_RESIZE_FAILED,   /* write or update failed */
	_TS_CGROUP_RESIZE_STATUS_MAX,
	TS_CGROUP_RESIZE_STATUS_INVALID = -22,
};

/** "ok", "dead", "mismatch", "failed"; NULL if invalid. */
const char *ts_cgroup_resize_status_to_string(enum ts_cgroup_resize_status s);

struct ts_cgroup_resize_result {
	enum ts_cgroup_resize_status status;
	bool via_runtime;     /* true: `runtime update` was (or would have been) used */
	char *message;	      /* NULL with OK; else one line naming the container; owned */
	char *effective_cpus; /* cpuset.cpus.effective as read back (direct writes); owned */
};

/**
 * Apply new cpus/mems to running containers, each independently: a dead
 * container or a failing one does not stop the others.
 *
 * Liveness: with pid > 0, a container whose <proc_root>/<pid>/stat is gone,
 * names a zombie, or (with pid_start_ticks) another start time is DEAD and
 * skipped.  With direct writes, a missing cgroup directory is DEAD too; a
 * `<runtime> update` that fails while the container goes away (its init is
 * then dead, or <runtime_root>/<container_id> no longer exists: a racing
 * `delete --force`) is DEAD, "container '<id>': deleted while it was
 * resized", not FAILED.
 *
 * Direct writes (mode UNIFIED and a cgroupfs driver): cpuset.cpus and
 * cpuset.mems of <root>/<cgroup_path>.  Targets nested in each other are
 * ordered: first every target whose new set drops cpus writes old∩new,
 * deepest cgroups first (children shrink before parents); then every target
 * writes its final value, shallowest first (parents grow before children).
 * Afterwards cpuset.cpus.effective is read back and compared with the new
 * cpus as a set; a difference is MISMATCH.  Ancestors that are not targets
 * are never written: a narrower ancestor shows up as MISMATCH.
 *
 * Otherwise (systemd driver, HYBRID, LEGACY): runs
 *   <runtime_path> [--root <runtime_root>] update [--cpuset-cpus X] [--cpuset-mems Y] <id>
 * in a forked child (no shell; stdin /dev/null, stdout and stderr to a
 * pipe whose last line goes into the message), killed after timeout_ms
 * of its own.  Up to min(8, max(2, online cpus)) such updates run at
 * once; the results are in target order whatever order they end in.
 *
 * @param[in]  targets      n targets; borrowed.
 * @param[in]  opts         options; borrowed.
 * @param[out] ret_results  n results in target order; caller frees with
 *                          ts_cgroup_resize_results_free(); written only on success.
 * @param[out] err          set iff the return value is negative.
 * @return how many targets are not OK (>= 0); -EINVAL "resize: container
 *         'ID': invalid cgroup path '<p>'" (empty, or with a ".." component),
 *         "resize: container 'ID': invalid cpu list '<s>'", "resize: container
 *         'ID': no runtime for update", "resize: invalid cgroup mode";
 *         -errno "<root>: cannot open" when the root cannot be opened for
 *         direct writes; -ENOMEM.  Per-container failures are not errors.
 */
int ts_cgroup_resize(const struct ts_cgroup_resize_target *targets, size_t n,
		     const struct ts_cgroup_resize_options *opts,
		     struct ts_cgroup_resize_result **ret_results, struct ts_error **err);

/** Free n results (NULL accepted). @return NULL. */
struct ts_cgroup_resize_result *ts_cgroup_resize_results_free(struct ts_cgroup_resize_result *r,
							      size_t n);

/* ---- parents ------------------------------------------------------------------------------- */

struct ts_cgroup_parent {
	char *path;	/* the parent's cgroup path, "/kubepods/burstable/pod1" */
	char *existing; /* its nearest existing ancestor, whose cpuset was read ("/" for the root)
			 */
	char *cpus_str; /* that cgroup's effective cpus, "1" */
	char *mems_str; /* and mems, "0" */
};

/** Free the members of p (a zeroed p is accepted). */
void ts_cgroup_parent_release(struct ts_cgroup_parent *p);

/**
 * The cgroup path of a container's parent, from linux.cgroupsPath
 * (OCI runtime-spec config-linux.md "Control groups").
 * cgroupfs form: the path's directory ("/kubepods/pod1/c1" -> "/kubepods/pod1";
 * a relative path counts from the root; no path -> "/"), of the path
 * cleaned as runc cleans it ("/../../x/c1" -> "/x": ts_path_clean_absolute(),
 * so the cpuset read is the one of the cgroup runc makes, never one outside
 * the hierarchy).  systemd form
 * (systemd true, runc's --systemd-cgroup): "slice:prefix:name" -> the slice
 * as a path, each '-' a level ("kubepods-burstable.slice:cri-containerd:x" ->
 * "/kubepods.slice/kubepods-burstable.slice"; "" and "-.slice" -> "/"; no
 * path -> "/system.slice", runc's default).
 * @param[out] ret  the path; the caller frees it.
 * @return 0; -EINVAL "'/linux/cgroupsPath': not a systemd slice:prefix:name
 *         '<path>'"; -ENOMEM.
 */
int ts_cgroup_parent_of(const char *cgroups_path, bool systemd, char **ret, struct ts_error **err);

/**
 * The effective cpuset of a container's cgroup parent: walks up from the
 * parent (ts_cgroup_parent_of()) to the nearest existing cgroup whose
 * cpuset files can be read, since the parent may not exist yet (the
 * runtime creates it).  Files: <root>/cpuset/<path>/cpuset.effective_cpus
 * and cpuset.effective_mems (cgroup v1, legacy and hybrid), or
 * <root>/<path>/cpuset.cpus.effective and cpuset.mems.effective (unified).
 * @param[in]  root          cgroup root ("/sys/fs/cgroup").
 * @param[in]  mode          the host's cgroup mode.
 * @param[in]  cgroups_path  linux.cgroupsPath; NULL when absent.
 * @param[in]  systemd       the systemd form (--systemd-cgroup).
 * @param[out] ret           filled when 1 is returned; release with
 *                           ts_cgroup_parent_release().
 * @return 1; 0 when there is no cpuset controller to read (nothing narrows
 *         the container); -EINVAL "<controller dir>: <file>: invalid cpu list
 *         '<value>'" and the errors of ts_cgroup_parent_of(); -errno of a
 *         read other than ENOENT; -ENOMEM.
 */
int ts_cgroup_parent_cpuset(const char *root, enum ts_cgroup_mode mode, const char *cgroups_path,
			    bool systemd, struct ts_cgroup_parent *ret, struct ts_error **err);

/**
 * The cpuset a running container's own cgroup is configured with now
 * (cpuset.cpus, not the effective one): what toposhim last wrote, unless
 * someone else wrote it since (`docker update --cpuset-cpus`, `runc
 * update`, a kubelet's CPU manager).  Files:
 * <root>/cpuset/<path>/cpuset.cpus (cgroup v1, legacy and hybrid), or
 * <root>/<path>/cpuset.cpus (unified).
 * @param[in]  root         cgroup root ("/sys/fs/cgroup").
 * @param[in]  mode         the host's cgroup mode.
 * @param[in]  cgroup_path  as for ts_cgroup_parent_of_running(); one with a
 *                          ".." component is not read.
 * @param[out] ret          the cpu list, as the kernel writes it ("0-1"), no
 *                          newline; caller frees; written on 1 only.
 * @return 1 when read; 0 when it cannot be told (no such file, not
 *         readable, empty: a v2 cgroup that inherits its parent's, a
 *         value that is not a cpu list, a bad path); -ENOMEM.
 */
int ts_cgroup_read_cpus(const char *root, enum ts_cgroup_mode mode, const char *cgroup_path,
			char **ret);

/**
 * The effective cpuset of a running container's cgroup parent, for a live
 * resize: as ts_cgroup_parent_cpuset() (cgroupfs form), from the cgroup
 * its init runs in rather than from linux.cgroupsPath, since the parent of
 * a systemd scope is its slice either way.
 * @param[in]  root         cgroup root ("/sys/fs/cgroup").
 * @param[in]  mode         the host's cgroup mode.
 * @param[in]  cgroup_path  the container's cgroup as the state records it:
 *                          relative to the cpuset hierarchy ("/kubepods/c1",
 *                          /proc/<pid>/cgroup's form) or the absolute path of
 *                          the mounted hierarchy ("<root>/cpuset/kubepods/c1"
 *                          on v1, "<root>/kubepods/c1" on v2: runc's).
 * @param[out] ret          filled when 1 is returned; release with
 *                          ts_cgroup_parent_release().
 * @return 1; 0 when there is no cpuset controller to read; the errors of
 *         ts_cgroup_parent_cpuset().
 */
int ts_cgroup_parent_of_running(const char *root, enum ts_cgroup_mode mode, const char *cgroup_path,
				struct ts_cgroup_parent *ret, struct ts_error **err);

#endif
