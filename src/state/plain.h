/*
 * plain.h - plain containers: the ones toposhim leaves untouched and does
 * not record in allocations.json (issues 14 and 15).
 *
 * A plain container asks for nothing (no CDI device, no class, cpus, NUMA
 * or memory-tier annotation, no cpu limit or cpuset of its own) on a node
 * whose policy needs nothing from it: nothing reserved, nothing held
 * exclusively, no plugin, and a class that sets no cgroup value.  Its
 * config.json stays byte-identical, and the front (src/cli/front.c) runs
 * its create without the core: no dynamic loading, no store lock, no
 * rewrite.  Two files in the state directory make that safe:
 *
 *   plain.json        the summary: written by the core, under the store
 *                     lock, whenever it finds that a plain container would
 *                     be left untouched, and withdrawn (its "valid" byte set
 *                     to 0 in place, under the same lock) before it commits
 *                     any allocation that changes that (an exclusive,
 *                     NUMA-exclusive or reserved one).  It holds what the verdict depends on that
 * can change without the core knowing: the config file's identity (path, device, inode, size,
 * mtime, ctime, or its absence), the boot id and the online cpus; and what a plain container gets
 * (class, cpus, mems) and whether the host is cgroup v2 (where engine-set shares are translated, so
 * a config.json with shares is not plain).  The front trusts it only when all of those still match
 * (ts_plain_summary_current()).
 *
 *   plain-containers  the journal: one line (a JSON object) per plain
 *                     container created, appended with O_APPEND under a
 *                     shared flock of the file (appends never wait for each
 *                     other).  It is how the core finds plain containers
 *                     when the shared pool shrinks: each settle takes every
 *                     live entry into the store as a "creating" record (the
 *                     create process's pid and start time), so that the
 *                     resize machinery waits for a create still in flight
 *                     and resizes a running container, exactly as for a
 *                     recorded one (cli/pools.h), then empties the journal
 *                     (ts_plain_journal_take(), under an exclusive flock).
 *                     Entries of containers that are gone (no runtime
 *                     state dir, create process gone) are dropped there and
 *                     by ts_plain_journal_compact().
 *
 * The protocol that keeps a plain create from slipping past an exclusive
 * allocation: the front appends its entry *before* it checks that the
 * summary is still valid (the same file, its byte still 1); the core
 * withdraws the summary *before* it commits the allocation, and takes the
 * journal after that.  A front that saw the summary valid appended before
 * the withdrawal, so the take sees its entry; a front that comes later
 * sees it withdrawn and hands the create to the core.
 *
 * Deletes: a plain container has no record, so the engine's `delete` needs
 * nothing of the core; the front tells by ts_plain_maybe_recorded() whether
 * allocations.json can hold a record of that container id at all.  Journal
 * entries of deleted containers are garbage, dropped as above.
 *
 * Everything here is best effort for its callers (a file that cannot be
 * read means "go the slow way"), needs only util and oci, and is linked
 * into the static front.  Every fd is O_CLOEXEC.
 */
#ifndef TS_STATE_PLAIN_H
#define TS_STATE_PLAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "util/error.h"

/** The summary, in the state directory. */
#define TS_PLAIN_SUMMARY_FILE "plain.json"
/** The journal of plain containers, in the state directory. */
#define TS_PLAIN_JOURNAL_FILE "plain-containers"
/** A journal larger than this is compacted by the create that finds it so. */
#define TS_PLAIN_JOURNAL_COMPACT_BYTES (256u << 10)
/** A journal larger than this is refused (not read; compacted away). */
#define TS_PLAIN_JOURNAL_MAX_BYTES (16u << 20)
/** Where the kernel lists the online cpus. */
#define TS_PLAIN_ONLINE_FILE "/sys/devices/system/cpu/online"
/** Where the kernel gives this boot's id. */
#define TS_PLAIN_BOOT_ID_FILE "/proc/sys/kernel/random/boot_id"

/* What the verdict "a plain container is left untouched" depends on, and
 * what such a container gets.  Strings are owned. */
struct ts_plain_summary {
	char *config_path;     /* the toposhim config file, as the core named it */
	bool config_present;   /* false: the file was absent (built-in defaults) */
	struct stat config_st; /* with config_present: dev, ino, size, mtime, ctime */
	char *boot_id;	       /* TS_PLAIN_BOOT_ID_FILE, without the newline */
	char *online;	       /* TS_PLAIN_ONLINE_FILE as the kernel wrote it, no newline */
	bool unified;	       /* cgroup v2: shares in config.json are translated */
	char *class_name;      /* the class a plain container is in */
	char *cpus;	       /* the cpus it runs on (the whole shared pool), a list */
	char *mems;	       /* the NUMA nodes of those, a list */
};

/* What the summary is checked against: this boot and this config file. */
struct ts_plain_host {
	char *boot_id;
	char *online;
	const char *config_path; /* borrowed */
	bool config_present;
	struct stat config_st;
};

/** Free what s owns and zero it (a zeroed s accepted). */
void ts_plain_summary_release(struct ts_plain_summary *s);
#define cleanup_plain_summary __attribute__((cleanup(ts_plain_summary_release)))

/**
 * Read this boot's id, the online cpus and the config file's identity.
 * @param[in]  config_path  the toposhim config file; borrowed by ret.
 * @param[out] ret          filled; release with ts_plain_host_release().
 * @return 0; -errno of a read ("<file>: cannot open"), or of a stat of the
 *         config other than ENOENT (an absent config is config_present
 *         false); -ENOMEM.
 */
int ts_plain_host_read(const char *config_path, struct ts_plain_host *ret, struct ts_error **err);

/** Free what h owns and zero it. */
void ts_plain_host_release(struct ts_plain_host *h);

/**
 * Whether the summary still describes this host and config: same config
 * path, same presence, and for a present file the same device, inode,
 * size, mtime and ctime (any edit, rename over or chmod changes one), same
 * boot id, same online cpus.
 */
bool ts_plain_summary_current(const struct ts_plain_summary *s, const struct ts_plain_host *h);

/**
 * Write the summary: in place when the file holds this very summary,
 * withdrawn (its validity byte set back to 1, no file created), else
 * atomically (temp file, rename; mode 0600).  Its text starts with
 * {"valid":1, so that ts_plain_summary_invalidate() can withdraw it with
 * one byte.
 * @param[in] state_dir_fd  the state directory.
 * @param[in] s             class_name, cpus, mems and unified are taken
 *                          from it; the rest from h.
 * @return 0; -errno of the write ("plain.json: ..."); -ENOMEM.
 */
int ts_plain_summary_write(int state_dir_fd, const struct ts_plain_host *h,
			   const struct ts_plain_summary *s, struct ts_error **err);

/**
 * Withdraw the summary (before a commit that makes plain containers need
 * the core): its validity byte set to 0 in place; a file that is not one
 * of ours is removed.  An absent file is fine.
 * @return 0; -errno of unlinkat ("plain.json: cannot remove").
 */
int ts_plain_summary_invalidate(int state_dir_fd, struct ts_error **err);

/**
 * Read the summary.
 * @param[out] ret     filled on 1; release with ts_plain_summary_release().
 * @param[out] ret_fd  may be NULL; on 1, the file read, still open (for
 *                     ts_plain_summary_still_valid()); the caller closes it.
 * @return 1 when a sound, valid summary was read; 0 when there is none, it
 *         is withdrawn, it is not a regular file owned by this euid and
 *         writable by no one else, or it does not parse, has another
 *         version or lacks a member (never an error: the caller goes the
 *         slow way).
 */
int ts_plain_summary_read(int state_dir_fd, struct ts_plain_summary *ret, int *ret_fd);

/**
 * Whether the summary fd (from ts_plain_summary_read()) is still the
 * state dir's summary and still valid: the name leads to the same file and
 * its validity byte is 1.
 */
bool ts_plain_summary_still_valid(int state_dir_fd, int fd);

/* One journal entry: a plain container's create.  Strings owned. */
struct ts_plain_entry {
	char *runtime_root; /* absolute --root of the runtime */
	char *container_id;
	char *bundle;			/* absolute bundle directory */
	char *class_name, *cpus, *mems; /* what it was given (the summary's) */
	pid_t pid;			/* the create process (the runtime after the exec) */
	uint64_t pid_start_ticks;	/* field 22 of /proc/<pid>/stat */
	uint64_t created_usec;		/* CLOCK_REALTIME, microseconds */
};

/** Free what e owns and zero it. */
void ts_plain_entry_release(struct ts_plain_entry *e);

/** Free n entries and the array (NULL accepted). */
void ts_plain_entries_free(struct ts_plain_entry *v, size_t n);

/**
 * Append an entry to the journal (created 0600 when missing), under a
 * shared flock: one write(2) of one line.  A journal that a compaction
 * replaced while we waited for the lock is opened again.
 * @param[out] ret_size  may be NULL; the journal's size after the append
 *                       (the caller compacts a large one).
 * @return 0; -errno of open/flock/write ("<file>: cannot append"); -EINVAL
 *         for an entry without root or id; -ENOMEM.
 */
int ts_plain_journal_append(int state_dir_fd, const struct ts_plain_entry *e, off_t *ret_size,
			    struct ts_error **err);

/**
 * Whether an entry's container may still exist: its create process still
 * runs (same start time), or its runtime keeps a dir <root>/<id> — the
 * store's test of a "creating" record (ts_state_gc()).  When in doubt (a
 * read fails for another reason than absence) it is kept.
 * @param[in] proc_root  "/proc" or a fake tree; NULL = "/proc".
 */
bool ts_plain_entry_alive(const char *proc_root, const struct ts_plain_entry *e);

/**
 * Keep, of n entries in journal order, those whose container may still
 * exist (ts_plain_entry_alive()), the last one of each (root, id), in
 * place; the others are released.
 * @return how many are kept (at the front of v).
 */
size_t ts_plain_entries_keep_live(const char *proc_root, struct ts_plain_entry *v, size_t n);

/**
 * Take the journal: every entry whose container may still exist, the last
 * one of each (root, id) only.  The journal stays locked (exclusive flock)
 * until ts_plain_journal_take_done(), so that no append lands between the
 * read and the truncation.
 * @param[in]  proc_root  for ts_plain_entry_alive().
 * @param[out] ret_fd     the locked journal, for ts_plain_journal_take_done();
 *                        -EBADF when there is none (nothing to take).
 * @param[out] ret_v, ret_n  the live entries (caller frees with
 *                        ts_plain_entries_free()); lines that do not parse are
 *                        skipped.
 * @return 0; -errno of open/flock/read ("<file>: cannot take"); -ENOMEM.
 */
int ts_plain_journal_take(int state_dir_fd, const char *proc_root, int *ret_fd,
			  struct ts_plain_entry **ret_v, size_t *ret_n, struct ts_error **err);

/**
 * End a take: empty the journal when commit is true (its entries are in
 * the store now), then unlock and close fd.  fd < 0 accepted.
 * @return 0; -errno of ftruncate.
 */
int ts_plain_journal_take_done(int fd, bool commit, struct ts_error **err);

/**
 * Rewrite the journal with only the entries whose containers may still
 * exist (temp file, rename, under an exclusive flock), so that it does not
 * grow on a node where the core never runs.  A missing journal is fine.
 * @param[out] ret_kept, ret_dropped  may be NULL.
 * @return 0; -errno ("<file>: cannot compact"); -ENOMEM.
 */
int ts_plain_journal_compact(int state_dir_fd, const char *proc_root, size_t *ret_kept,
			     size_t *ret_dropped, struct ts_error **err);

/**
 * Read the journal without locking or changing it (toposhimctl alloc list).
 * @param[out] ret_v, ret_n  every entry that parses (caller frees).
 * @return 0 (a missing journal gives none); -errno of the read; -ENOMEM.
 */
int ts_plain_journal_read(int state_dir_fd, struct ts_plain_entry **ret_v, size_t *ret_n,
			  struct ts_error **err);

/**
 * Whether allocations.json may hold a record of container_id, under any
 * runtime root: the file names it as a "container_id" value.  Cheap (one
 * read, no parse), so that the engine's delete of a plain container needs
 * no core.  The id must be a runc container id (letters, digits, "_+-.",
 * which JSON never escapes); for any other id, a file that cannot be read
 * for another reason than absence, or a file larger than the store's limit
 * it returns true (let the core look).  So it does for a missing file of a
 * store that was written before (its allocations.json.prev or runtime-roots
 * is there: a lost store, which the core rebuilds from the runtime roots),
 * and for a file that does not name the id and is not whole as a commit
 * writes it (compact, '{"version":1,' first, ']}' and a newline last: cut
 * short or edited), which the core rebuilds too.
 */
bool ts_plain_maybe_recorded(int state_dir_fd, const char *container_id);

/**
 * Whether id is a container id as runc accepts it (and toposhim's create
 * checks): 1 to NAME_MAX bytes of letters, digits and "_+-.", not "." or
 * "..".
 */
bool ts_plain_container_id_valid(const char *id);

/**
 * Whether a state directory may be trusted: owned by this euid and
 * writable by no one else (what ts_state_open() refuses otherwise).
 */
bool ts_plain_state_dir_trusted(int state_dir_fd);

#endif
