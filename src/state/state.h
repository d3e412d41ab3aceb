/*
 * state.h - the allocation store: what toposhim must remember between two
 * short-lived invocations, kept in a state directory without any daemon.
 *
 * Layout of the state directory (default /run/toposhim, a tmpfs that dies
 * with the containers at reboot; created 0700 when missing):
 *   lock               empty file; an exclusive flock(2) on it serialises
 *                      every reader and writer of the store.
 *   allocations.json   the allocations, replaced atomically (same-directory
 *                      temporary file, rename; no fsync: what it describes
 *                      dies at a reboot too, and a file a crash damaged is
 *                      rebuilt, see ts_state_load(); ts_write_file_replace_at())
 *                      while the lock is held.
 *
 * Format of allocations.json (version 1):
 *   {
 *       "version": 1,
 *       "checksum": "fnv1a64-sum:<16 lowercase hex digits>",
 *       "allocations": [ <allocation>, ... ]
 *   }
 * The checksum is the sum, modulo 2^64, of one hash per record: FNV-1a (64
 * bit; offset basis 0xcbf29ce484222325, prime 0x100000001b3) of a
 * canonical byte stream of that record, independent of JSON whitespace and
 * escaping (so a yajl upgrade that escapes differently does not invalidate
 * the file) and of the other records (so a commit hashes only the records
 * it changed; their order is not covered).  Each member below that is
 * present contributes, in order, "<name>:<byte length>:<value>;" with
 * numbers in decimal and booleans as "true"/"false", except "devices",
 * which contributes "devices:<n>:<count>;" followed by
 * "device:<len>:<name>;" for each name; the stream ends with "\n".  E.g. a
 * record {"container_id": "a", "cpus": "", "mems": "", "devices": [],
 * "pinned": false, "numa_exclusive": false, "state": "creating",
 * "created_usec": 5} streams as
 *   container_id:1:a;cpus:0:;mems:0:;devices:1:0;pinned:5:false;
 *   numa_exclusive:5:false;state:8:creating;created_usec:1:5;\n
 * (one line).  Files written before 2026-12-06 state "fnv1a64:<16 hex
 * digits>": one FNV-1a over every record's stream in order; they are
 * verified that way and the next commit writes the sum (a toposhim older
 * than that finds the sum a mismatch, and rebuilds the store from the live
 * containers).  One allocation is an object with, in this order:
 *   "container_id"     string, non-empty; with runtime_root unique in the
 *                      file (one id under two roots is two containers)
 *   "runtime_root"     string: the runtime's --root; the runtime keeps its
 *                      state of the container in <runtime_root>/<container_id>
 *   "runtime"          string, optional: the runtime binary that created it,
 *                      for the operator's eye (`toposhimctl alloc list`);
 *                      never executed: the runtime of a container is
 *                      derived from the config and the runtime's own state
 *                      dir (cli/config.h ts_cli_runtime_for_container())
 *   "bundle"           string: absolute bundle directory
 *   "class"            string: QoS class name ("critical", "standard", ...)
 *   "cpus"             string: cpuset as a list ("0-3,8"), "" for none
 *   "mems"             string: NUMA node list ("0"), "" for none
 *   "devices"          array of strings: qualified device names
 *   "pinned"           boolean: cpus came from the user, not from placement
 *   "numa_exclusive"   boolean: the NUMA nodes in mems are held whole
 *   "state"            string: "creating" (written by create before the
 *                      runtime runs) or "created" (the createRuntime hook saw
 *                      the init process)
 *   "created_usec"     integer: CLOCK_REALTIME of the create, microseconds
 *   "pid"              integer > 0, only once known: the container's init pid
 *   "pid_start_ticks"  integer, with pid: field 22 of /proc/<pid>/stat (clock
 *                      ticks since boot), which tells a recycled pid apart
 *   "cgroup_path"      string, with pid: the init process's cgroup (the
 *                      cpuset line of /proc/<pid>/cgroup on cgroup v1 and
 *                      hybrid hosts, else the "0::" line)
 * Unknown members are refused (a record is trusted only when fully
 * understood).  A file that cannot be read, does not parse, has another
 * version, a wrong checksum or an invalid record is never fatal: the store is
 * rebuilt from the records whose containers are provably alive (see
 * ts_state_load()) and a warning is handed to the caller to log.
 *
 * A rebuild also adopts, from every runtime root the candidate records name
 * or the file runtime-roots lists (every root a committed record ever named,
 * kept at commit time), the running containers whose bundle holds a placement
 * file for that container id (TS_STATE_PLACEMENT_FILE; runc: "bundle=" label
 * in <root>/<id>/state.json; crun: "bundle" in <root>/<id>/status) and that
 * no record covers: class, cpus, mems, pinned and numa_exclusive come from
 * that file.  A root
 * no record ever named is not searched (a state dir serves one host's
 * runtimes, but tests run several side by side).
 *
 * allocations.json.prev is the last sound allocations.json before the
 * current one: a commit over a file that loaded sound writes the new text
 * into the copy's file and exchanges the two names (renameat2(2)
 * RENAME_EXCHANGE: no file created, allocations.json never missing); where
 * the filesystem cannot exchange, it hard-links the current file there and
 * renames the new one over it.  A commit over a damaged file replaces it
 * and leaves the copy alone.  A rebuild adds the copy's records that the
 * damaged file lacks, so a file damaged beyond parsing loses at most one
 * commit.
 *
 * allocations.cache holds the records of the current allocations.json as
 * this host decoded them (state/internal.h, cache.c): a load takes them
 * when the cache names the exact text it read, instead of parsing it;
 * anything else about the cache only means the JSON is parsed.
 *
 * Ownership: struct ts_state owns its records; pointers returned by
 * ts_state_find()/ts_state_at() are borrowed until the next put, remove, gc
 * or close.  To change a record, put a changed copy (ts_alloc_dup()): only
 * put, remove, gc and a rebuilding load mark the store for ts_state_commit().
 * Nothing here prints, exits or keeps global state.
 *
 * The lock belongs to the open file description of the lock file: it is
 * released when the store is closed or the process execs (O_CLOEXEC) or
 * exits.  A child forked while the store is open shares it and keeps the
 * lock held until it closes its copy (ts_state_close() in the child) or
 * execs.
 *
 * Lifecycle of a record: create puts it as "creating" under the lock, commits
 * and execs the runtime (the lock fd is O_CLOEXEC, so exec releases it); the
 * next store session that collects or settles learns pid, start time and
 * cgroup from the runtime's state and sets "created" (ts_state_learn_inits(),
 * or the createRuntime hook when plugins need one); the engine's `delete`
 * through toposhim, or the first collection after the init exited, removes
 * it (the poststop hook too, when injected).  A crash anywhere leaves a
 * record that ts_state_gc() collects at a later create.  A plain container
 * (no request, nothing needed from it) has no record until the shared pool
 * shrinks: state/plain.h.
 */
#ifndef TS_STATE_STATE_H
#define TS_STATE_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

/** Default state directory, used when neither the environment nor the config names one. */
#define TS_STATE_DIR_DEFAULT "/run/toposhim"
/** Environment variable that names the state directory (wins over the config). */
#define TS_STATE_DIR_ENV "TOPOSHIM_STATE_DIR"
/** The allocations file, in the state directory. */
#define TS_STATE_ALLOC_FILE "allocations.json"
/** Version written to and accepted from allocations.json. */
#define TS_STATE_FORMAT_VERSION 1
/** Default bounded wait for the lock: 10 s. */
#define TS_STATE_LOCK_TIMEOUT_USEC_DEFAULT (10ull * 1000 * 1000)
/** Default grace period of a "creating" record without a runtime state dir: 60 s. */
#define TS_STATE_GC_GRACE_USEC_DEFAULT (60ull * 1000 * 1000)

enum ts_alloc_status {
	TS_ALLOC_CREATING,
	TS_ALLOC_CREATED,
	_TS_ALLOC_STATUS_MAX,
	TS_ALLOC_STATUS_INVALID = -22, /* -EINVAL */
};

/** One container's allocation.  Every pointer is owned by the record. */
struct ts_alloc {
	char *container_id; /* never NULL in a stored record */
	char *runtime_root; /* runtime --root (absolute); NULL = unknown */
	char *runtime_path; /* the runtime binary that created it (shown, never run); NULL = unknown
			     */
	char *bundle;	    /* absolute bundle directory; NULL = unknown */
	char *class_name;   /* QoS class; NULL = none */
	char *cpus_str;	    /* PU OS indexes as a list ("0-3,8"); NULL = none */
	char *mems_str;	    /* NUMA node OS indexes as a list; NULL = none */
	char **devices;	    /* NULL-terminated qualified device names; NULL = none */
	bool pinned;
	bool numa_exclusive;
	enum ts_alloc_status status;
	uint64_t created_usec;	  /* CLOCK_REALTIME, microseconds */
	pid_t pid;		  /* init pid in the runtime's pid namespace; 0 = not yet known */
	uint64_t pid_start_ticks; /* field 22 of /proc/<pid>/stat; valid when pid > 0 */
	char *cgroup_path;	  /* valid when pid > 0; may be NULL */
	/* The state module's own: where this record's JSON object is in the
	 * text of allocations.json the store last read or wrote (text_len 0:
	 * nowhere, or changed since), and the record's share of that file's
	 * checksum (valid with text_len); a commit copies that text instead
	 * of generating it again, and adds text_sum instead of hashing it.
	 * Zero in a new record and in a copy. */
	size_t text_at, text_len;
	uint64_t text_sum;
};

struct ts_state;

struct ts_state_options {
	/* State directory from the config ("state_dir"), or NULL.  The
	 * environment variable TOPOSHIM_STATE_DIR wins over it, so that the
	 * hooks, which receive that variable, agree with the create that
	 * injected them; without either, /run/toposhim. */
	const char *state_dir;
	/* Root of procfs, NULL = "/proc" (tests point it at a fake tree). */
	const char *proc_root;
	/* Longest wait for the lock in microseconds; 0 = the default (10 s). */
	uint64_t lock_timeout_usec;
	/* Do not create a missing state directory: fail with -ENOENT "<dir>:
	 * no state directory" (readers such as toposhimctl, where a missing
	 * directory is a typo or a host where nothing was placed yet). */
	bool must_exist;
	/* The runtime root of the command (the create's --root, absolute), or
	 * NULL.  A store with nothing on disk (no allocations.json, no copy,
	 * no roots file: a first create, or a state dir removed with all
	 * it held) looks there for live containers toposhim placed (their
	 * placement files) and is rebuilt from them (ts_state_load());
	 * every rebuild looks there too.  helper-8: rm -rf of the state dir
	 * let the next critical create take the cpu a running one held. */
	const char *runtime_root;
};

/**
 * Name of an allocation status as stored in the file.
 * @return "creating", "created", or NULL for a value out of range.
 */
const char *ts_alloc_status_to_string(enum ts_alloc_status s);

/** Parse "creating"/"created". @return the status, or TS_ALLOC_STATUS_INVALID. */
enum ts_alloc_status ts_alloc_status_from_string(const char *s);

/**
 * A new record in state "creating", created_usec = now.
 * @param[in] container_id  copied.
 * @return the record (caller frees with ts_alloc_free()); NULL with *err
 *         set: -EINVAL for a NULL or empty container id, -ENOMEM.
 */
struct ts_alloc *ts_alloc_new(const char *container_id, struct ts_error **err);

/** Free a record and everything it owns (NULL accepted). @return NULL. */
struct ts_alloc *ts_alloc_free(struct ts_alloc *a);

/** Deep copy of a record. @return the copy (caller frees), or NULL on OOM. */
struct ts_alloc *ts_alloc_dup(const struct ts_alloc *a);

/** Free n records and the array holding them (NULL accepted). */
void ts_alloc_array_free(struct ts_alloc **v, size_t n);

static inline void ts_alloc_freep(struct ts_alloc **a)
{
	*a = ts_alloc_free(*a);
}
#define cleanup_alloc __attribute__((cleanup(ts_alloc_freep)))

/**
 * The state directory that ts_state_open() will use.
 * @param[in] config_state_dir  "state_dir" from the config, or NULL.
 * @return $TOPOSHIM_STATE_DIR when set and non-empty, else config_state_dir
 *         when non-NULL and non-empty, else, when not root (euid != 0),
 *         or root of a user namespace with $USER unset or not "root" (as
 *         rootless podman runs its runtime; runc's rule for its own root),
 *         and $XDG_RUNTIME_DIR is absolute, "$XDG_RUNTIME_DIR/toposhim"
 *         (/run is not the user's), else
 *         TS_STATE_DIR_DEFAULT; borrowed (from the environment, the
 *         argument, a buffer of this module valid for the process's life,
 *         or a literal).
 */
const char *ts_state_dir_resolve(const char *config_state_dir);

/**
 * Whether a store was ever written in the state directory: its
 * allocations.json, its previous copy or its roots file is there (every
 * commit leaves the roots file).  With allocations.json missing but one of
 * the others there, the store was lost, and a load rebuilds it from the
 * runtime roots: a delete must not take the missing file for "nothing
 * recorded on this node" (helper-14).
 * @param[in] config_state_dir  as ts_state_dir_resolve()'s.
 */
bool ts_state_dir_has_store(const char *config_state_dir);

/**
 * Create the state directory if missing (mode 0700, parents 0755) and take
 * the exclusive lock, waiting at most opts->lock_timeout_usec.  The store is
 * empty until ts_state_load().  On a read-only filesystem the existing lock
 * file is locked through a read-only descriptor, or, where there is none
 * (no writer ever locked the store: a read-only copy), the directory
 * itself: the store can be read, a commit fails with the write's error.
 * @param[in]  opts  options; borrowed for the call only; NULL = defaults.
 * @param[out] ret   the locked store; release with ts_state_close().
 * @return 0; -ETIMEDOUT "<dir>/lock: still held by another process after
 *         <n> ms"; -errno of mkdir/open/flock with "<path>: cannot create
 *         state directory" / "cannot open lock file" / "cannot lock";
 *         -EINVAL for a relative state directory; -ENOMEM.
 */
int ts_state_open(const struct ts_state_options *opts, struct ts_state **ret,
		  struct ts_error **err);

/**
 * Read allocations.json into the store (replacing what it holds).  A missing
 * file is an empty store when no commit ever wrote one (neither
 * allocations.json.prev nor runtime-roots exists); otherwise its loss (or a
 * dangling symlink in its place) is treated as damage.  A file that cannot
 * be read or trusted (see the header comment) is not an error: the records
 * that can still be parsed and whose containers are provably alive
 * (recorded pid alive with the same start time, or
 * <runtime_root>/<container_id> exists) are kept, together with the live
 * records of a sound allocations.json.prev whose container ids the file
 * lacks; a kept record takes its class, cpus, mems and pinning from its
 * bundle's toposhim-placement.json when that names its id, and its init pid
 * from the runtime's state when that names one; the rest are dropped, and
 * *ret_warning explains, e.g.
 *   "/run/toposhim/allocations.json: checksum mismatch (stored
 *   'fnv1a64-sum:0000000000000000', computed 'fnv1a64-sum:...'): store rebuilt from
 *   live containers, kept 1 of 2 allocations"
 *   "/run/toposhim/allocations.json: does not parse (...): store rebuilt
 *   from live containers and allocations.json.prev, kept 3 of 4 allocations"
 *   "/run/toposhim/allocations.json: missing: store rebuilt from ..."
 * The rebuilt store is written at the next ts_state_commit(), which does not
 * make the damaged file the new allocations.json.prev.
 * @param[out] ret_warning  NULL when the file was sound, else a message the
 *                          caller logs and frees; may be NULL to ignore it.
 * @return 0; -EISDIR "<dir>/allocations.json: a directory where the
 *         allocations file belongs: remove it or move it away" (no commit
 *         could replace it); -ENOMEM.
 */
int ts_state_load(struct ts_state *s, char **ret_warning, struct ts_error **err);

/**
 * Append "<UTC time> pid <pid>: <msg>" to <state dir>/resizes.log: what a
 * resize of the shared pool did to, or found about, a container other
 * than the caller's (pinned where an operator set its cpuset, set back off
 * exclusive cpus, not resized, released).  The same line goes to the
 * caller's log, which an engine deletes with the caller's bundle: this is
 * where an operator finds it.  A line the file ends with already is not
 * added again; over 64 KiB the file is moved to resizes.log.1 first.  Best
 * effort, nothing reported: written only as a plain file of the store's
 * owner with one name.  Call with the store's lock held (between
 * ts_state_load() and ts_state_close()).
 * @param[in] s    the store.
 * @param[in] msg  one line, without '\n'.
 */
void ts_state_note_resize(const struct ts_state *s, const char *msg);

/**
 * Append "<UTC time> pid <pid>: container '<container_id>': warning: <msg>"
 * to <state dir>/creates.log: a warning of the create of that container
 * (an annotation that is no request, a CPU count ignored for a cpuset,
 * placement skipped rootless, ...).  Such a warning goes to the runtime's
 * log, which engines show nobody (podman keeps it in its oci-log, containerd
 * deletes log.json with the container, neither says it at a successful
 * create): this is where an operator finds it.  Same rules as
 * ts_state_note_resize(): a repeated last line is not added, over 64 KiB
 * the file is moved to creates.log.1 first, best effort, under the store's
 * lock (after ts_state_open()).
 * @param[in] s             the store.
 * @param[in] container_id  the created container.
 * @param[in] msg           one line, without '\n' or the "warning: " prefix.
 */
void ts_state_note_create(const struct ts_state *s, const char *container_id, const char *msg);

/**
 * Note that container_id held cpus exclusively until the caller dropped
 * its record from the store: one line "<cpus> <container_id>" appended to
 * <state dir>/released, for the next settle of the shared pool, which may
 * run in another process (the resize lock's holder, when the dropper
 * found it taken: helper-17).  A cpuset that settle finds changed from
 * outside onto those cpus was changed while they were held, and is no pin
 * (pools.h, ts_pools_note_released()).  Call with the store's lock held,
 * before the commit that drops the record, so that no settle plans
 * between the two.  Best effort: nothing is written past 64 KiB, or where
 * the file is not a plain file of the store's owner with one name.
 */
void ts_state_released_add(const struct ts_state *s, const char *container_id, const char *cpus);

/**
 * The entries of <state dir>/released (ts_state_released_add()), as
 * records that carry only container_id and cpus_str.  A line that does
 * not parse is skipped.  Under the store's lock.
 * @param[out] ret, ret_n  the records (caller frees: ts_alloc_array_free());
 *                         none when the file is absent or unreadable.
 * @return 0; -ENOMEM.
 */
int ts_state_released_read(const struct ts_state *s, struct ts_alloc ***ret, size_t *ret_n);

/**
 * Remove <state dir>/released: a settle planned with every entry it holds
 * (read under the same lock).  Best effort.
 */
void ts_state_released_clear(const struct ts_state *s);

/** Number of records in the store. */
size_t ts_state_count(const struct ts_state *s);

/**
 * Record at index i (0 ≤ i < count), in insertion order; borrowed. NULL when
 * out of range.  The records this and ts_state_find()/ts_state_lookup()
 * lend are read-only, strings included: a change goes through a copy
 * (ts_alloc_dup()) and ts_state_put(), which marks the store dirty.  A store
 * closed unchanged hands its records to the next load of the same bytes in
 * this process as they are, without checking them against the file again.
 */
const struct ts_alloc *ts_state_at(const struct ts_state *s, size_t i);

/**
 * Whether a is the record of the container (runtime_root, container_id).
 * A container is named by both: runtimes keep their containers apart by
 * root (containerd's "k8s.io" and "default" namespaces use one id under
 * two roots), so the same id under two roots is two containers.  A NULL
 * root matches only a record without a root.
 */
bool ts_alloc_is(const struct ts_alloc *a, const char *runtime_root, const char *container_id);

/** Record of the container (runtime_root, container_id), borrowed; NULL when there is none. */
const struct ts_alloc *ts_state_find(const struct ts_state *s, const char *runtime_root,
				     const char *container_id);

/**
 * The record of a container as a hook names it: ts_state_find() when
 * runtime_root is non-NULL; else (a hook entry written before the root was
 * passed to hooks) the record of container_id without a root, else the one
 * whose bundle is bundle — two containers of one id under two roots have
 * two bundles.
 * @return the record, borrowed; NULL when none matches.
 */
const struct ts_alloc *ts_state_lookup(const struct ts_state *s, const char *runtime_root,
				       const char *container_id, const char *bundle);

/**
 * Insert a record, replacing (and freeing) any record of the same container
 * (runtime root and container id) in place.  Takes ownership of a, also on
 * failure.
 * @return 0; -EINVAL when a or its container id is NULL/empty; -ENOMEM.
 */
int ts_state_put(struct ts_state *s, struct ts_alloc *a, struct ts_error **err);

/**
 * Remove the record of the container (runtime_root, container_id).
 * @param[out] ret_removed  the removed record (caller frees); may be NULL,
 *                          then the record is freed.  Untouched when absent.
 * @return 1 when a record was removed, 0 when there was none.
 */
int ts_state_remove(struct ts_state *s, const char *runtime_root, const char *container_id,
		    struct ts_alloc **ret_removed);

/**
 * Write the store to allocations.json (atomically, mode 0600) if it changed
 * since it was loaded or last committed; the lock stays held.  A file that
 * loaded sound becomes allocations.json.prev (the exchange above; best
 * effort: a failure there loses only the copy).
 * @return 0; -EINVAL "<dir>/allocations.json: '/allocations/<i>': ..." when
 *         a record is not storable (empty container id, duplicate); -ESRCH
 *         "<dir>/allocations.json: rebuilt with no runtime root to look in
 *         (...): not written; ..." when the load rebuilt the store with no
 *         runtime root to look for containers in (no record, no roots file,
 *         no ts_state_options.runtime_root): the empty store it found is
 *         not trusted with the cpus of containers it could not see;
 *         -errno of the write ("<dir>/allocations.json: cannot replace");
 *         -ENOMEM.
 */
int ts_state_commit(struct ts_state *s, struct ts_error **err);

/**
 * Learn the init process of every "creating" record from its runtime's own
 * state (ts_state_runtime_init(): runc's state.json, crun's status): its
 * pid, start time and cgroup (read from <proc>/<pid>/cgroup while it runs;
 * none when it is gone already), and mark it "created".  This is what the
 * createRuntime hook did, without a hook execution on every create.  A
 * record whose create process is gone and left a runtime dir without a state
 * toposhim can read becomes "created" with no pid (it lives as long as that
 * dir); but a runc or crun record (by its "runtime" name) whose dir lacks
 * the runtime's state file (state.json, status) stays "creating": that
 * create died before the runtime wrote it, and the runtime says the
 * container does not exist.  Records are changed in place; the store is marked for commit.
 * @return how many records were learned.
 */
size_t ts_state_learn_inits(struct ts_state *s);

/**
 * Collect stale records and remove them from the store (the caller commits);
 * ts_state_learn_inits() runs first.  A "created" record with an init pid
 * is stale as soon as that init is gone (the container exited: its runtime
 * state may stay until the engine deletes it, its CPUs do not).  Any other
 * record is stale when <runtime_root>/<container_id> does not exist (or, for
 * a runc or crun record, holds no state.json or status) and
 * either its recorded pid is gone (no /proc/<pid>, a zombie, or a start time
 * other than the recorded one: a recycled pid) or it has no pid and is older
 * than grace_usec.  The process is looked at before the runtime dir: a
 * create (the recorded pid, toposhim exec'd into the runtime) that ends
 * between the two looks has made its dir by then.  When in doubt (procfs or
 * the runtime dir cannot be read for a reason other than absence) the record
 * is kept: handing out CPUs that are still used is worse than holding them a
 * while longer.
 * @param[in]  now_usec       CLOCK_REALTIME now, microseconds (ts_state_now_usec()).
 * @param[in]  grace_usec     grace period of records without a pid.
 * @param[out] ret_collected  the removed records, in store order; caller
 *                            frees with ts_alloc_array_free(); NULL when none.
 * @param[out] ret_n          how many.
 * @return 0; -ENOMEM (the store is then unchanged).
 */
int ts_state_gc(struct ts_state *s, uint64_t now_usec, uint64_t grace_usec,
		struct ts_alloc ***ret_collected, size_t *ret_n, struct ts_error **err);

/**
 * Which records ts_state_gc() would collect now, the same answers, without
 * collecting them (nothing changes): for a listing that tells the records
 * of containers that are gone from the others.  Run ts_state_learn_inits()
 * first, as ts_state_gc() does.
 * @param[in]  now_usec    as ts_state_gc()'s.
 * @param[in]  grace_usec  as ts_state_gc()'s.
 * @param[out] ret_stale   ts_state_count(s) answers in store order, true
 *                         for a record whose container is gone; the caller
 *                         frees it; NULL when the store is empty.
 * @return 0; -ENOMEM.
 */
int ts_state_stale(const struct ts_state *s, uint64_t now_usec, uint64_t grace_usec,
		   bool **ret_stale, struct ts_error **err);

/** Unlock and free the store without writing (NULL accepted). @return NULL. */
struct ts_state *ts_state_close(struct ts_state *s);

static inline void ts_state_closep(struct ts_state **s)
{
	*s = ts_state_close(*s);
}
#define cleanup_state __attribute__((cleanup(ts_state_closep)))

/**
 * The init process of a container as its runtime's own state dir records
 * it (owned by root, unlike anything a container or plugin controls):
 * runc's <root>/<id>/state.json "init_process_pid" and "init_process_start",
 * crun's <root>/<id>/status "pid" and "process-start-time" (clock ticks
 * after boot, as field 22 of /proc/<pid>/stat), and its cgroup: runc's
 * "cgroup_paths" "cpuset" member (else ""), an absolute path of the
 * mounted hierarchy ("/sys/fs/cgroup/cpuset/default/web"), crun's
 * "cgroup-path", relative to it ("/default/web").
 * @param[out] ret_pid, ret_start_ticks  written only when found.
 * @param[out] ret_cgroup  when found: the cgroup, or NULL when the state
 *                         names none; caller frees; may be NULL.
 * @return 1 when found; 0 when there is no such state (no container of that
 *         id under that root, a runtime of another layout, a file that does
 *         not parse or lacks the members).  Never an error: callers fall
 *         back to what else they know.
 */
int ts_state_runtime_init(const char *runtime_root, const char *container_id, pid_t *ret_pid,
			  uint64_t *ret_start_ticks, char **ret_cgroup);

/** The placement file of a bundle, next to its config.json. */
#define TS_STATE_PLACEMENT_FILE "toposhim-placement.json"

/*
 * The placement file: toposhim's own bookkeeping of a container it placed,
 * kept in the bundle next to config.json (never in config.json, whose
 * annotations the runtime publishes in `state` and on every hook's stdin).
 * One JSON object: "version" (TS_STATE_FORMAT_VERSION), "id" (the
 * container id), "class", "cpus" and "mems" (what the container runs
 * with, lists, "" for none), "cpus_written" (whether toposhim wrote cpus
 * into config.json: false for a recorded container left untouched),
 * "pinned" and "numa_exclusive" (as in allocations.json), "state_dir"
 * (the store's, when known), "pinned_cpus" (only when the container's
 * cpuset was changed outside toposhim and adopted as a pin: those cpus,
 * which a rebuild of the store gives it, pinned, over "cpus"), and, when
 * toposhim injected CDI devices,
 * "devices": their qualified names, sorted; and "resources_written": what
 * the class's cgroup limits and their translation changed in
 * linux.resources (ts_json_diff() entries, cpus and mems aside), so that a
 * later create of a bundle whose config.json still holds those values
 * (a shell's bundle created again under another class) starts from the
 * engine's own values (ts_json_undo_entry()).
 * Create writes it atomically before config.json; a rebuild of a damaged
 * store reads it to adopt running containers, and a retried create to
 * tell the cpus it wrote from a user's and the devices it injected from
 * the engine's.  Without placement (off, or rootless without a cpuset) it
 * names only the devices: class, cpus and mems "", cpus_written and pinned
 * false; never adopted.
 */
struct ts_json;

struct ts_state_placement {
	char *container_id;
	char *class_name;
	char *cpus_str;
	char *mems_str;
	char *devices; /* the CDI devices toposhim injected, comma-joined; NULL: none */
	/* the state dir of the store that recorded it (absolute); NULL in a
	 * file written before it was kept: a rebuild of another store does
	 * not adopt the container (tests and nodes that share a runtime root
	 * keep stores of their own) */
	char *state_dir;
	/* the cpus its cpuset was pinned to from outside toposhim after the
	 * create (ts_state_placement_pin()); NULL: none */
	char *pinned_cpus;
	/* "resources_written": an array of ts_json_diff() entries; NULL: none */
	struct ts_json *resources_written;
	bool cpus_written;
	bool pinned;
	bool numa_exclusive;
};

/**
 * Write the placement file atomically (temp file, rename, no fsync:
 * ts_write_file_replace_at(); mode 0644).
 * @param[in] bundle_fd  the bundle directory.
 * @param[in] p          what to write; NULL strings are written as "".
 * @return 0; -errno of the write with "<file>: ..."; -ENOMEM.
 */
int ts_state_placement_write(int bundle_fd, const struct ts_state_placement *p,
			     struct ts_error **err);

/**
 * Read <bundle>/toposhim-placement.json.
 * @param[in]  dirfd   what a relative bundle is relative to (AT_FDCWD).
 * @param[in]  bundle  the bundle directory; NULL reads nothing.
 * @param[out] ret     filled on 1; release with ts_state_placement_release().
 * @return 1 when a sound file was read; 0 when there is none, or it does not
 *         parse, has another version or an invalid member (never an error:
 *         callers fall back to what else they know).
 */
int ts_state_placement_read(int dirfd, const char *bundle, struct ts_state_placement *ret);

/** Free what a placement owns and zero it. */
void ts_state_placement_release(struct ts_state_placement *p);

/**
 * Record in the placement file of bundle that container_id's cpuset was
 * pinned to cpus from outside toposhim (an operator's `docker update
 * --cpuset-cpus`, adopted by a resize): "pinned_cpus", so that a rebuild
 * after the loss of the store keeps the pin rather than taking the
 * container for a shared one and resizing it back into the pool.  The
 * other members are kept as they are ("cpus" stays what was written into
 * config.json, which a later create of the bundle compares with).  With
 * cpus NULL, the other way (`toposhimctl alloc unpin`): "pinned_cpus"
 * removed and "pinned" false, so that a rebuild adopts the container as
 * one the shared pool resizes.
 * @param[in] bundle        the bundle directory, absolute.
 * @param[in] container_id  whose file it must be ("id").
 * @param[in] state_dir     the store's; a file naming another store's is
 *                          left alone (NULL: not checked).
 * @param[in] cpus          a cpulist, non-empty; NULL to unpin.
 * @return 1 when written (or already so); 0 when the bundle holds no sound
 *         placement file of this container of this store; -errno of the
 *         open or write with "<file>: ..."; -ENOMEM.
 */
int ts_state_placement_pin(const char *bundle, const char *container_id, const char *state_dir,
			   const char *cpus, struct ts_error **err);

/**
 * The CDI devices the placement file of <bundle> says toposhim injected
 * into container_id, whether or not it placed the container.
 * @param[out] ret_names  comma-joined, sorted; caller frees.
 * @return 1 when a sound file of this container names devices; 0 when
 *         there is none, it is another container's, names none or does not
 *         parse (never an error: a retried create applies what is
 *         missing); -ENOMEM.
 */
int ts_state_placement_devices(int dirfd, const char *bundle, const char *container_id,
			       char **ret_names);

/**
 * The records as allocations.json holds them (its "allocations" array), e.g.
 * for `toposhimctl alloc list --json`.
 * @param[out] ret  a new array; caller frees with ts_json_free().
 * @return 0; -ENOMEM.
 */
int ts_state_to_json(const struct ts_state *s, struct ts_json **ret, struct ts_error **err);

/** Path of the state directory, borrowed from s. */
const char *ts_state_dir(const struct ts_state *s);

/** The state directory, opened (O_DIRECTORY), borrowed from s: for the
 *  other files it holds (state/plain.h) while the store's lock is held. */
int ts_state_dir_fd(const struct ts_state *s);

/** What ts_state_mark_at() notes of one file of the store. */
struct ts_state_mark_file {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_sec, mtime_nsec, ctime_sec, ctime_nsec;
};

/**
 * A mark of the files a settle plans from: allocations.json (its stat and
 * its first bytes, which hold the records' checksum), the released file
 * and the plain containers' journal (state/plain.h).  Two equal marks of
 * one state directory mean that no commit, release or plain create came
 * between them: every one of those writes one of the files (a commit
 * swaps in a rewritten allocations.json, the others append).
 */
struct ts_state_mark {
	struct ts_state_mark_file files[3];
	size_t head_len;
	char head[64];
};

/**
 * Take a mark of the store in a state directory.  Taken under the store's
 * lock (the directory of ts_state_dir_fd()), it is what the session left;
 * taken after, it tells whether anyone committed since
 * (ts_state_mark_equal()).  Used by the settle (cli/pools.h) to skip a
 * store session that would find nothing new.
 * @param[in]  dir_fd  the state directory (O_DIRECTORY).
 * @param[out] ret     filled; a missing file is marked as missing.
 * @return 0; -errno of an fstatat() or read that failed otherwise than
 *         with ENOENT (the mark is then not to be trusted).
 */
int ts_state_mark_at(int dir_fd, struct ts_state_mark *ret);

/** Whether two marks are the same, field by field. */
bool ts_state_mark_equal(const struct ts_state_mark *a, const struct ts_state_mark *b);

/** Root of procfs the store uses ("/proc" unless overridden), borrowed from s. */
const char *ts_state_proc_root(const struct ts_state *s);

/** CLOCK_REALTIME in microseconds. */
uint64_t ts_state_now_usec(void);

/**
 * Start time of a process: field 22 of <proc_root>/<pid>/stat.
 * @param[in]  proc_root  "/proc" or a fake tree; NULL = "/proc".
 * @param[out] ret_ticks  clock ticks after boot.
 * @param[out] ret_alive  false when the process is a zombie ('Z') or dead ('X'); may be NULL.
 * @return 0; -ENOENT "<proc>/<pid>/stat: cannot open" when there is no such
 *         process; -errno of the read; -EINVAL "<proc>/<pid>/stat: cannot
 *         parse '<text>'" for a malformed file.
 */
int ts_state_proc_start_ticks(const char *proc_root, pid_t pid, uint64_t *ret_ticks,
			      bool *ret_alive, struct ts_error **err);

/**
 * Cgroup of a process from <proc_root>/<pid>/cgroup: the path of the line
 * whose controller list holds "cpuset" (cgroup v1 or hybrid), else the path
 * of the "0::" line (cgroup v2).
 * @param[out] ret_path  the path, e.g. "/system.slice/x.scope"; caller frees.
 * @return 0; -ENOENT when the process is gone; -errno of the read; -ENODATA
 *         "<proc>/<pid>/cgroup: no cpuset or '0::' line" when neither exists.
 */
int ts_state_proc_cgroup(const char *proc_root, pid_t pid, char **ret_path, struct ts_error **err);

#endif
