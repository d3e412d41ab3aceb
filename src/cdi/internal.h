/*
 * internal.h - shared inside src/cdi only.
 */
#ifndef TS_CDI_INTERNAL_H
#define TS_CDI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cdi/cdi.h"

struct ts_cdi_spec {
	char *path;	     /* spec file name */
	char *kind;	     /* "vendor/class" */
	struct ts_json *doc; /* validated document; NULL until loaded for a spec from the index */
	unsigned priority;   /* spec dir index, higher wins */
	char **device_names; /* the names of /devices, in order */
	size_t n_devices;
	/* a spec from the index (ts_cdi_spec_new_lazy()): the struct, its
	 * names array and every string are one allocation */
	bool packed;
};

struct ts_cdi_entry {
	char *qualified_name;
	struct ts_cdi_spec *spec; /* borrowed from the registry */
	size_t index;		  /* in the spec's /devices */
};

/* A spec dir or file as seen by a scan; what the persistent index is checked against. */
struct ts_cdi_scanned {
	char *path;
	bool exists; /* false: a spec dir that does not exist */
	/* what a scan saw; of a record read from the index, only st_mode's
	 * file type (S_IFDIR or S_IFREG) and the digest are known */
	struct stat st;
	uint64_t digest;	  /* ts_cdi_stat_digest(&st); set by the index's reader */
	char *problem;		  /* what was wrong with this dir or file, or NULL */
	struct ts_cdi_spec *spec; /* the spec it holds, or NULL; borrowed from the registry */
};

struct ts_cdi_registry {
	struct ts_cdi_spec **specs;
	size_t n_specs;
	struct ts_cdi_entry *devices; /* resolvable, sorted by qualified_name */
	size_t n_devices;
	const char **names; /* the same names, for ts_cdi_registry_devices() */
	char **problems;
	size_t n_problems;
	struct ts_cdi_scanned *scanned; /* dirs and files, in scan order */
	size_t n_scanned;
	bool scan_incomplete; /* something could not be stat'ed: do not save an index */
	char *spec_dirs;      /* "/etc/cdi, /var/run/cdi": the dirs, for messages */
};

/* Read all of fd (at most 16 MiB), a regular file the caller fstat'ed as st
 * (its size sizes the buffer). @return 0; -EFBIG; -ENOMEM; -errno. */
int ts_cdi_read_fd(int fd, const struct stat *st, char **ret_buf, size_t *ret_len);

int ts_cdi_registry_add_problem(struct ts_cdi_registry *reg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record a scanned dir or file (st NULL: a missing dir). @return 0 or -ENOMEM. */
int ts_cdi_registry_add_scanned(struct ts_cdi_registry *reg, const char *path,
				const struct stat *st);

/* Fill the registry's tables (after the scan, or from the index): names[]. @return 0/-ENOMEM. */
int ts_cdi_registry_finish(struct ts_cdi_registry *reg);

/* Add a problem and attach it to the last scanned dir or file. @return 0 or -ENOMEM. */
int ts_cdi_registry_scanned_problem(struct ts_cdi_registry *reg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Append spec (taking it, also on failure) and attach it to the last scanned file. */
int ts_cdi_registry_add_spec(struct ts_cdi_registry *reg, struct ts_cdi_spec *spec);

/* The persistent index as read from disk. */
struct ts_cdi_index;

/* What the index recorded about one dir or file. */
struct ts_cdi_index_file {
	struct ts_cdi_scanned rec; /* rec.spec unused */
	char *kind;		   /* the spec's kind, NULL when the file held no spec */
	unsigned priority;
	char **names; /* its device names: n_names lines of the index, borrowed */
	size_t n_names;
};

/**
 * Read the index at path when it was written for the same options (dirs,
 * require_root_owned) and, with require_root_owned, is root-owned and not
 * group/other-writable.
 * @return 1 with *ret (free with ts_cdi_index_free()); 0 absent/unusable; -ENOMEM.
 */
int ts_cdi_index_read(const struct ts_cdi_options *opts, const char *path,
		      struct ts_cdi_index **ret);
struct ts_cdi_index *ts_cdi_index_free(struct ts_cdi_index *idx);

/* True when every recorded dir and file still has the recorded stat. */
bool ts_cdi_index_fresh(const struct ts_cdi_index *idx);

/*
 * Fill an empty registry from a fresh index (no dir is read).
 * @param wanted  NULL: everything the index records (every scanned dir and
 *                file, every spec, every resolvable device); else only the
 *                n_wanted qualified names (those the index resolves, with
 *                their specs), the scanned files that have a problem, and
 *                every problem: what a create needs, without building 1000
 *                spec entries it does not use.
 * A "dev" line used must name a recorded spec and device and spell that
 * device's qualified name (their order was checked at read).
 * @return 0; -EINVAL when the index is inconsistent (reg is then half
 *         filled: the caller discards it and scans); -ENOMEM.
 */
int ts_cdi_index_fill(const struct ts_cdi_index *idx, const char *const *wanted, size_t n_wanted,
		      struct ts_cdi_registry *reg);

/* Sort the records by path for ts_cdi_index_lookup(), which a scan needs and
 * the fresh path does not.  @return 0; -ENOMEM. */
int ts_cdi_index_sort(struct ts_cdi_index *idx);

/* The record of a file, NULL when the index does not know it (or was not
 * sorted by ts_cdi_index_sort()). */
const struct ts_cdi_index_file *ts_cdi_index_lookup(const struct ts_cdi_index *idx,
						    const char *path);

/* Write the index of a freshly scanned reg (best effort: failures are ignored). */
void ts_cdi_index_save(const struct ts_cdi_registry *reg, const struct ts_cdi_options *opts,
		       const char *path);

/*
 * A 64-bit digest of a dir's or file's dev, inode, size, mtime, ctime,
 * mode, uid and gid (every change a scan must see): what the index
 * records of each dir and file instead of the eleven numbers (parsing them
 * was half of a warm create's index read at 1000 files).  Equal stats give
 * equal digests; a changed stat gives the same digest with probability
 * 2^-64 (a change also moves ctime, which nobody sets at will).
 */
uint64_t ts_cdi_stat_digest(const struct stat *st);

/* Does rec, a record read from the index, describe st (its digest's)? */
bool ts_cdi_scanned_matches(const struct ts_cdi_scanned *rec, const struct stat *st);

/* The integer member key of obj (an object, or NULL); dflt when it is
 * absent or not an integer in int64 range.  For validated containerEdits. */
int64_t ts_cdi_int_member(const struct ts_json *obj, const char *key, int64_t dflt);

/* The CDI/OCI type letter of a host file of mode st_mode: 'c', 'b', 'p'
 * (a FIFO), or '\0' for anything that is no device node.  What
 * ts_cdi_edits_apply() fills a deviceNode's missing type with. */
char ts_cdi_node_type_of(mode_t st_mode);

/*
 * Whether an owner uid (gid) may have written a spec file, dir or index
 * under require_root_owned: root; run by a user, that user (euid/egid);
 * in a user namespace (rootless podman: /proc/self/uid_map is not the
 * identity), whatever the euid there (podman runs its runtime as the
 * namespace's root), also the overflow uid (gid) of
 * /proc/sys/kernel/overflowuid (overflowgid), as which the host's
 * root-owned files appear there.
 * NEEDSWORK: inside the namespace, files of other unmapped host users
 * look the same; the mode bits (no group/world write) still apply.
 */
bool ts_cdi_trusted_uid(uid_t uid);
bool ts_cdi_trusted_gid(gid_t gid);

/* A spec from the index has no document until first use: load it. @return 0, <0 with *err. */
int ts_cdi_spec_ensure_loaded(struct ts_cdi_spec *spec, struct ts_error **err);

/* A spec known by the index only (document not loaded). NULL on OOM. */
struct ts_cdi_spec *ts_cdi_spec_new_lazy(const char *path, const char *kind, unsigned priority,
					 char *const *names, size_t n_names);

/* A JSON pointer under construction, for messages ("/devices/0/name"). */
struct ts_cdi_ptr {
	char buf[1024];
	size_t len;
};

/* Append "/<key>" (escaped per RFC 6901); returns the old length for ts_cdi_ptr_pop(). */
size_t ts_cdi_ptr_push(struct ts_cdi_ptr *p, const char *key);
size_t ts_cdi_ptr_push_index(struct ts_cdi_ptr *p, size_t index);
void ts_cdi_ptr_pop(struct ts_cdi_ptr *p, size_t old_len);
/* The pointer text; "/" for the root. */
const char *ts_cdi_ptr_str(const struct ts_cdi_ptr *p);

/**
 * Convert the first document of a YAML text into a JSON tree (YAML 1.1
 * plain scalar resolution; aliases expanded, at most 200,000 nodes, 64
 * levels and 16 MiB of JSON text once expanded).
 * @return 0; -EINVAL with "<name>: line L column C: <problem>" (syntax,
 *         "duplicate key 'k'", "NUL character in a string", "document too
 *         large or too deep", "document expands to more than 16777216 bytes
 *         (aliases)"), or "<name>: empty document" for an empty or null
 *         document; -ENOMEM.
 */
int ts_cdi_yaml_parse(const char *buf, size_t len, const char *name, struct ts_json **ret,
		      struct ts_error **err);

/**
 * Validate a spec document in place (converting booleans/numbers in string
 * fields to strings).
 * @param[out] ret_kind  "vendor/class", caller frees.
 * @return 0; -EINVAL naming spec_path, the field's pointer and the value; -ENOMEM.
 */
int ts_cdi_spec_validate(struct ts_json *doc, const char *spec_path, char **ret_kind,
			 struct ts_error **err);

/**
 * The "kind" a spec file's text names, valid or not, without validating
 * anything else: for messages about a file the registry ignored.
 * @param[in]  buf, len, spec_path  as for ts_cdi_spec_parse().
 * @param[out] ret_kind  the "kind" member when the text parses and it is a
 *                       string, else NULL; caller frees.
 * @return 0 (also when there is no kind); -ENOMEM.
 */
int ts_cdi_spec_peek_kind(const char *buf, size_t len, const char *spec_path, char **ret_kind);

/* Validate k8s-style annotations (keys and total size) in place. */
int ts_cdi_annotations_validate(struct ts_json *annotations, const char *spec_path,
				struct ts_cdi_ptr *ptr, struct ts_error **err);

#endif
