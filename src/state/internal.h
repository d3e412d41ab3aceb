/*
 * internal.h - shared inside src/state only: the store's layout, the file
 * format codec (format.c) and the liveness checks (proc.c).
 */
#ifndef TS_STATE_INTERNAL_H
#define TS_STATE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "state/state.h"

#define TS_STATE_LOCK_FILE "lock"
/* the last sound allocations.json before the current one */
#define TS_STATE_PREV_FILE "allocations.json.prev"
#define TS_STATE_PREV_TMP ".allocations.json.prev.tmp"
/* every runtime root a record ever named, one per line: where a rebuild
 * looks for running containers when no record survives */
#define TS_STATE_ROOTS_FILE "runtime-roots"
#define TS_STATE_ROOTS_MAX_BYTES (64u << 10)
/* allocations.json larger than this is treated as corrupt */
#define TS_STATE_ALLOC_FILE_MAX_BYTES (16u << 20)
/* the records of the current allocations.json, decoded (cache.c) */
#define TS_STATE_CACHE_FILE "allocations.cache"
#define TS_STATE_CACHE_FILE_MAX_BYTES (32u << 20)
/* allocations.json shorter than this is parsed, its cache neither read nor
 * written: parsing 16 KiB (about 60 records) costs less than the cache's
 * own system calls */
#define TS_STATE_CACHE_MIN_JSON_BYTES (16u << 10)
/* one line per rebuild, for the operator (the warning itself goes to the
 * caller's log, which an engine may delete with the bundle); moved to
 * rebuilds.log.1 when over the bound */
#define TS_STATE_REBUILDS_FILE "rebuilds.log"
#define TS_STATE_REBUILDS_OLD_FILE "rebuilds.log.1"
/* the same for what a resize did to, or found about, containers other than
 * the caller's (ts_state_note_resize()) */
#define TS_STATE_RESIZES_FILE "resizes.log"
#define TS_STATE_RESIZES_OLD_FILE "resizes.log.1"
/* a create's warnings: ts_state_note_create() */
#define TS_STATE_CREATES_FILE "creates.log"
#define TS_STATE_CREATES_OLD_FILE "creates.log.1"
/* the bound of each */
#define TS_STATE_NOTES_MAX_BYTES (64u << 10)
/* exclusive cpus dropped from the store that no settle has planned with
 * yet (ts_state_released_add()); bounded as the notes */
#define TS_STATE_RELEASED_FILE "released"

/* Has a commit ever written the store in dir_fd?  Every commit leaves the
 * roots file, and all but a first one the previous copy: a store with
 * either that lacks allocations.json lost it (ts_state_load() rebuilds it;
 * the plain delete and ts_state_dir_has_store() hand it to the core). */
bool ts_state_dir_fd_written(int dir_fd);

struct ts_state {
	char *dir_path;	    /* absolute state directory */
	char *proc_root;    /* "/proc" or a fake tree */
	char *runtime_root; /* ts_state_options.runtime_root, or NULL */
	int dir_fd;	    /* O_DIRECTORY of dir_path */
	int lock_fd;	    /* holds the exclusive flock */
	struct ts_alloc **allocs;
	size_t n_allocs, cap_allocs;
	bool dirty;   /* differs from allocations.json */
	bool sound;   /* allocations.json on disk was loaded (or written) sound */
	bool rebuilt; /* this load rebuilt the store; cleared when a commit writes it */
	/* that rebuild had no runtime root to look in (no record, roots file
	 * or command's root names one): it found nothing because it could not
	 * look, and is never written (ts_state_commit()) */
	bool rebuilt_blind;
	/* the bytes of allocations.json that allocs were decoded from or
	 * written as (while !dirty); NULL when unknown: what ts_state_close()
	 * hands to the next load of this process */
	char *file_buf;
	size_t file_len;
	/* the first ids_checked records are known to name distinct
	 * containers (loaded sound or committed): a removal lowers it, a put
	 * that appends leaves it; the commit compares only the records after
	 * them (ts_state_format_encode_from()) */
	size_t ids_checked;
};

/**
 * A 64-bit hash of len bytes, 8 bytes a step (not FNV-1a: not the
 * checksum allocations.json states); what allocations.cache keys on.
 * Not cryptographic: it tells texts apart, nobody who could forge it
 * lacks the right to write the state dir.
 */
uint64_t ts_state_hash64(const void *buf, size_t len);

/**
 * The bytes of allocations.cache for records v (n of them) decoded from,
 * or written as, the allocations.json text json (json_len bytes): a
 * header naming that text (length and ts_state_hash64()) and the records
 * as a parse of it gives them (ts_state_format_normalize()), text spans
 * included.  Layout in cache.c.
 * @return 0 with *ret_buf (caller frees) and *ret_len; -ENOMEM.
 */
int ts_state_cache_encode(struct ts_alloc *const *v, size_t n, const char *json, size_t json_len,
			  char **ret_buf, size_t *ret_len);

/**
 * The records a cache holds, when it is the image of exactly the text
 * json: its header names json's length and hash, its body hashes to what
 * the header says and decodes to the number of records stated, every
 * string without a NUL, every flag in range.
 * @param[out] ret_v, ret_n  on 1: the records (caller frees).
 * @return 1; 0 when cache is not json's image (another text, another
 *         build's layout, truncated, damaged): parse json; -ENOMEM.
 */
int ts_state_cache_decode(const char *cache, size_t cache_len, const char *json, size_t json_len,
			  struct ts_alloc ***ret_v, size_t *ret_n);

/** FNV-1a, 64 bit, of len bytes (offset basis 0xcbf29ce484222325, prime 0x100000001b3). */
uint64_t ts_state_fnv1a64(const void *buf, size_t len);

/** Continue an FNV-1a hash h over len more bytes. */
uint64_t ts_state_fnv1a64_update(uint64_t h, const void *buf, size_t len);

/** FNV-1a of one record's canonical stream (state.h): its share of the checksum. */
uint64_t ts_state_record_hash(const struct ts_alloc *a);

/**
 * The checksum of records, as defined in state.h (before the
 * "fnv1a64-sum:" tag): the sum, modulo 2^64, of ts_state_record_hash()
 * of each, so that a change to one record needs only its own hash.
 */
uint64_t ts_state_checksum(struct ts_alloc *const *v, size_t n);

/**
 * The checksum of files written before 2026-12-06 (tag "fnv1a64:"): one
 * FNV-1a over the records' streams in order.  Only read, to verify such
 * a file; the next commit writes ts_state_checksum().
 */
uint64_t ts_state_checksum_chained(struct ts_alloc *const *v, size_t n);

/**
 * Serialise records into the text of allocations.json: compact JSON on one
 * line, '\n' at the end (toposhim before 2026-12-05 indented it; the
 * decoders read either).
 * @param[in] path  file name for messages.
 * @return 0; -EINVAL for a record with an empty container id or a duplicate
 *         ("<path>: '/allocations/<i>/container_id': ..."); -ENOMEM.
 */
int ts_state_format_encode(struct ts_alloc *const *v, size_t n, const char *path, char **ret_buf,
			   size_t *ret_len, struct ts_error **err);

/** Where a record's text is in a text of allocations.json (ts_alloc.text_at), and its hash. */
struct ts_state_span {
	size_t at, len;
	uint64_t sum; /* ts_state_record_hash() of the record (ts_alloc.text_sum) */
};

/**
 * ts_state_format_encode(), copying the text of each record that has one
 * in src (ts_alloc.text_at/text_len, checked to be in bounds and braced)
 * instead of generating it, and adding its text_sum to the checksum
 * instead of hashing it: the caller vouches that such a record is
 * unchanged since src was decoded or written.  The result is the same
 * text when src is a compact file this code wrote.
 * @param[in] src, src_len  the text the records' spans refer to; NULL: none.
 * @param[out] spans        n entries, or NULL: where each record is in the
 *                          new text and its hash, for the caller to set on
 *                          the records once the text is written.
 * @param[in] ids_checked   the first ids_checked records are known to name
 *                          distinct containers (the caller vouches): the
 *                          others are compared with every record when they
 *                          are few; 0 sorts them all.
 * @return 0; the errors of ts_state_format_encode().
 */
int ts_state_format_encode_from(struct ts_alloc *const *v, size_t n, const char *path,
				const char *src, size_t src_len, struct ts_state_span *spans,
				size_t ids_checked, char **ret_buf, size_t *ret_len,
				struct ts_error **err);

/**
 * Parse the text of allocations.json.
 * @param[out] ret_v, ret_n   every record that is individually valid (all of
 *                            them for a sound file); caller frees.  Records
 *                            of a sound compact file carry where their
 *                            text is in buf (text_at, text_len) and its
 *                            hash (text_sum); others text_len 0.
 * @param[out] ret_problem    NULL for a sound file, else why it cannot be
 *                            trusted, e.g. "checksum mismatch (stored 'x',
 *                            computed 'y')"; caller frees.
 * @return 0; -ENOMEM.
 */
int ts_state_format_decode(const char *buf, size_t len, const char *path, struct ts_alloc ***ret_v,
			   size_t *ret_n, char **ret_problem, struct ts_error **err);

/**
 * ts_state_format_decode() through a ts_json tree of the whole file: what
 * it does for every file that is not plainly sound (a member twice, an
 * unknown one, a bad value, a wrong checksum: anything that stops its
 * token-by-token fast path), and the one that words the problems.  Same
 * arguments and results; for tests that hold the two to the same answer.
 */
int ts_state_format_decode_tree(const char *buf, size_t len, const char *path,
				struct ts_alloc ***ret_v, size_t *ret_n, char **ret_problem,
				struct ts_error **err);

/**
 * Make a record what decoding its own encoded form gives: the encoder
 * writes "" for no cpus or mems and [] for no devices, and pid_start_ticks
 * and cgroup_path only with a pid.  Used where records stand in for a
 * parse of the file they were written to (state.c's load cache).
 * @return 0; -ENOMEM (the record is then partly normalised, still valid).
 */
int ts_state_format_normalize(struct ts_alloc *a);

/**
 * Whether a record's container is gone (see ts_state_gc()).
 * @param[in] grace_usec  grace period of records without a pid.
 */
bool ts_state_alloc_is_stale(const char *proc_root, const struct ts_alloc *a, uint64_t now_usec,
			     uint64_t grace_usec);

/**
 * ts_state_alloc_is_stale() of each of v[0..n), the same answers, with
 * every process looked at before any runtime dir (the order issue 17
 * needs, kept across records), and a runtime root that holds 16 or more
 * of the records left to look up listed once (opendir/readdir) instead of
 * one stat(2) each: 500 records in one root were 500 path walks per
 * create (issue 15).  An entry whose type the listing does not give (a
 * symlink, DT_UNKNOWN) is stat'ed; a root that cannot be listed for a
 * reason other than its absence falls back to stat'ing each record.
 * @param[in]  proc_root   "/proc" or a fake tree; NULL = "/proc".
 * @param[in]  v           the records, borrowed; n of them.
 * @param[out] ret_stale   n answers, true for a stale record.
 * @return 0; -ENOMEM (ret_stale is then undefined).
 */
int ts_state_mark_stale(const char *proc_root, const struct ts_alloc *const *v, size_t n,
			uint64_t now_usec, uint64_t grace_usec, bool *ret_stale);

#endif
