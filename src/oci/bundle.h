/*
 * bundle.h - open an OCI bundle, load its config.json, write it back atomically.
 *
 * Implements: OCI runtime-spec v1.1/v1.2 bundle.md (a directory holding the
 * configuration file, config.json by default) and crun's `-f/--config FILE`
 * (a configuration file named relative to the bundle, or absolute).
 *
 * A bundle is opened once per invocation: the directory fd (O_DIRECTORY |
 * O_CLOEXEC) stays open so that the config is read and replaced relative to
 * it.  The config is parsed into a struct ts_json tree the caller edits in
 * place; ts_oci_bundle_save() writes the tree back only if it differs from
 * what was read, as a new file renamed over the old one (readers see the old
 * or the new config, never a mix), keeping the original permission bits and
 * owner.
 *
 * Ownership: the bundle owns every field; the caller frees it with
 * ts_oci_bundle_free().  The caller may replace `config` (freeing the old
 * tree) but must leave the other fields alone.
 */
#ifndef TS_OCI_BUNDLE_H
#define TS_OCI_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "oci/json.h"
#include "util/error.h"

/* Largest config file ts_oci_bundle_open() reads, in bytes (16 MiB). */
#define TS_OCI_CONFIG_MAX_BYTES (16u << 20)

struct ts_oci_bundle {
	int bundle_fd;	   /* the bundle directory, O_DIRECTORY|O_CLOEXEC */
	char *bundle_dir;  /* absolute, lexically cleaned ("/run/b", no "..", no "//") */
	char *config_path; /* absolute path of the config, for messages ("/run/b/config.json") */
	struct ts_json *config; /* the parsed config, root is an object; edit in place */
	char *original;		/* the config's bytes as read (NUL-terminated) */
	size_t original_len;	/* their length in bytes, without the NUL */
	mode_t config_mode;	/* st_mode of the config as read (type and permission bits) */

	/* private to bundle.c */
	char *config_name; /* the config as given: relative to bundle_fd, or absolute */
	uid_t config_uid;  /* owner of the config as read */
	gid_t config_gid;
	struct ts_json *saved; /* tree as it is on disk: the parse of original; NULL after a save */
	char *saved_text; /* after a save: the bytes it wrote (the serialization of config then) */
	size_t saved_text_len;
};

/**
 * Open a bundle and load its configuration file.
 * @param[in]  bundle_dir   bundle directory, relative to the working directory
 *                          or absolute; NULL means ".".
 * @param[in]  config_name  configuration file, relative to the bundle or
 *                          absolute; NULL means "config.json".
 * @param[out] ret          the bundle; caller frees with ts_oci_bundle_free().
 *                          Written only on success.
 * @param[out] err          set iff the return value is negative.
 * @return 0;
 *         -errno of open(2) with "bundle '<abs dir>': cannot open" (-ENOENT,
 *         -ENOTDIR, -EACCES);
 *         -errno of open(2)/read(2) with "<config_path>: cannot open" or
 *         "cannot read" (-ENOENT for a missing config.json);
 *         -EISDIR "<config_path>: cannot read" for a directory;
 *         -EINVAL "<config_path>: not a regular file" (FIFOs, devices: never
 *         blocks on them);
 *         -EFBIG "<config_path>: larger than 16777216 bytes";
 *         -EINVAL "<config_path>: line L column C: <reason>" or
 *         "<config_path>: empty document" (see ts_json_parse());
 *         -EINVAL "<config_path>: expected a JSON object, got <type>";
 *         -ENOMEM.
 */
int ts_oci_bundle_open(const char *bundle_dir, const char *config_name, struct ts_oci_bundle **ret,
		       struct ts_error **err);

/**
 * Whether the config tree differs from the file on disk (as read by
 * ts_oci_bundle_open() or written by the last ts_oci_bundle_save()).
 * Comparison is structural (ts_json_equal): key order and number text count;
 * after a save, the config's serialization against the bytes that save
 * wrote (the same outcome: the serializer keeps key order and number text).
 * A config that cannot be serialized (-ENOMEM) counts as changed.
 */
bool ts_oci_bundle_changed(const struct ts_oci_bundle *b);

/**
 * The config as ts_oci_bundle_open() read it, whatever was edited since
 * (the copy ts_oci_bundle_changed() compares with).
 * @return borrowed, valid until the next ts_oci_bundle_save() or free;
 *         NULL after a save.
 */
const struct ts_json *ts_oci_bundle_as_read(const struct ts_oci_bundle *b);

/**
 * Write the config tree back, if it changed.  The text is the pretty form of
 * ts_json_serialize() (4-space indent, final newline).  The file is replaced
 * atomically (temp file in the config's directory, fchmod to the original
 * permission bits, fsync, renameat, fsync of the directory), then given the
 * original owner back when it differs from ours.
 * @param[in,out] b  the bundle; on success its on-disk state is updated, so a
 *                   second save without edits writes nothing.
 * @return 1 when the file was replaced; 0 when the tree is unchanged and
 *         nothing was written; -EINVAL "<config_path>: cannot serialise JSON:
 *         ..." (see ts_json_serialize()); -errno "<config_path>: cannot
 *         replace" (the old file is untouched) or "<config_path>: cannot
 *         restore owner <uid>:<gid>" (the new file is in place); -ENOMEM.
 * @note A config that was a symlink is replaced by a regular file.
 */
int ts_oci_bundle_save(struct ts_oci_bundle *b, struct ts_error **err);

/** Close the fds and free everything (NULL accepted). @return NULL. */
struct ts_oci_bundle *ts_oci_bundle_free(struct ts_oci_bundle *b);

static inline void ts_oci_bundle_freep(struct ts_oci_bundle **b)
{
	*b = ts_oci_bundle_free(*b);
}
#define cleanup_oci_bundle __attribute__((cleanup(ts_oci_bundle_freep)))

#endif
