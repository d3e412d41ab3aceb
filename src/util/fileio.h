/*
 * fileio.h - whole-file reads and atomic replacement, relative to a
 * directory fd (openat family).  Every fd opened here is O_CLOEXEC.
 */
#ifndef TS_UTIL_FILEIO_H
#define TS_UTIL_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

/**
 * Read a whole regular file.
 * @param[in]  dirfd     directory fd, or AT_FDCWD.
 * @param[in]  path      file name relative to dirfd (or absolute).
 * @param[in]  max_bytes refuse files larger than this (bytes); 0 = 64 MiB.
 * @param[out] ret_buf   NUL-terminated contents; caller frees.
 * @param[out] ret_len   length in bytes without the NUL; may be NULL.
 * @param[out] err       set iff the return value is negative.
 * @return 0; -errno of open/read (message "<path>: cannot open"/"cannot
 *         read"); -EISDIR for a directory; -EINVAL "<path>: not a regular
 *         file" for a FIFO, device or socket (never blocks on them); -EFBIG
 *         when the file is larger than max_bytes; -ENOMEM.
 */
int ts_read_file_at(int dirfd, const char *path, size_t max_bytes, char **ret_buf, size_t *ret_len,
		    struct ts_error **err);

/**
 * Read fd to its end (a pipe, stdin, a regular file).
 * @param[in]  fd         borrowed; read from its current offset.
 * @param[in]  name       for messages ("stdin").
 * @param[in]  max_bytes  refuse more than this (bytes); 0 = 64 MiB.
 * @param[out] ret_buf, ret_len  as for ts_read_file_at().
 * @return 0; -errno of read(2) "<name>: cannot read"; -EFBIG "<name>:
 *         larger than N bytes"; -ENOMEM.
 */
int ts_read_fd(int fd, const char *name, size_t max_bytes, char **ret_buf, size_t *ret_len,
	       struct ts_error **err);

/**
 * ts_read_fd() with the buffer sized for a file of size_hint bytes (st_size
 * of the caller's fstat(2) of fd; 0 when unknown: it then grows by
 * doubling from 8 KiB).  The hint only sizes the first allocation: a file
 * that grew or shrank since is still read to its end.  With a hint, fd
 * must be a regular file: a read that returns less than it asked for is
 * taken as the end (what read(2) does for one), saving the read that
 * would return 0.  Same results and errors as ts_read_fd().
 */
int ts_read_fd_sized(int fd, const char *name, size_t max_bytes, size_t size_hint, char **ret_buf,
		     size_t *ret_len, struct ts_error **err);

/**
 * Replace dirfd/name atomically with buf: write a temporary file in the same
 * directory, fchmod it to mode, fsync, renameat over name, fsync the
 * directory.  Readers see either the old or the new file, never a mix; on
 * any failure the temporary file is removed and name is untouched.  The
 * temporary name is ".<name>.tmp.<pid>"; one already there is a leftover of
 * a killed process that had this pid, and is replaced.  After a successful
 * write, the ".<name>.tmp.<pid>" files of pids that no longer exist are
 * removed (best effort).
 * @param[in] mode permission bits of the new file (e.g. the old file's).
 * @return 0; -errno of the failing system call, message naming name.
 */
int ts_write_file_atomic_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
			    struct ts_error **err);

/**
 * ts_write_file_atomic_at(), and the new file gets the owner uid:gid before
 * it is renamed over name, so it never appears with ours (for a file that
 * belongs to someone else, e.g. a bundle's config.json).  (uid_t)-1 and
 * (gid_t)-1 keep the writer's, as for fchown(2).  One fsync, of the new
 * file before the rename, not of the directory after it: after a crash
 * name is the old file or the whole new one, never an empty or partial
 * one, though the rename itself may be lost (a create's config.json is
 * read by the runtime at once; issue 15 asks one fsync'd write per create).
 * @return 0; -errno of the failing system call (fchown included), message
 *         naming name; name is then untouched.
 */
int ts_write_file_atomic_owned_at(int dirfd, const char *name, const void *buf, size_t len,
				  mode_t mode, uid_t uid, gid_t gid, struct ts_error **err);

/**
 * ts_write_file_atomic_at() without the two fsyncs: atomic for every other
 * process (the rename), but after a kernel crash or power loss the file
 * may hold either version, or nothing.  For files that describe running
 * containers only and are in a directory that lives no longer than they
 * do (toposhim's state dir, /run/toposhim by default, a tmpfs; the
 * bookkeeping files it keeps in a bundle): after a reboot every container
 * they describe is gone, and a damaged store is rebuilt from the live
 * ones (state.h).  Each create and delete saves two to four fsyncs, about
 * 0.5 ms each on a disk (issue 15).
 * @return as ts_write_file_atomic_at().
 */
int ts_write_file_replace_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
			     struct ts_error **err);

/**
 * Write all of buf to fd, retrying on EINTR and short writes.
 * @return 0, or -errno (no error object: callers add context).
 */
int ts_write_all(int fd, const void *buf, size_t len);

/**
 * Whether this process runs in a user namespace, as runc's
 * userns.RunningInUserNS() tells it: /proc/self/uid_map is anything but
 * the one line "0 0 4294967295" (unreadable: not in one).  Rootless
 * podman runs its runtime as uid 0 of such a namespace.  Read once per
 * process (toposhim never enters another user namespace).
 */
bool ts_in_user_namespace(void);

/**
 * runc's rule for a rootless caller (1.1's libcontainer/userns and
 * utils.GetRuntimeDir: $XDG_RUNTIME_DIR/runc instead of /run/runc): not
 * root, or uid 0 of a user namespace whose $USER is not "root" (rootless
 * podman's runtime).  Pure: the caller reads the three facts.
 * @param[in] euid       the effective uid.
 * @param[in] in_userns  ts_in_user_namespace() (may be false when euid != 0).
 * @param[in] user       $USER, or NULL when unset.
 */
bool ts_rootless_caller(uid_t euid, bool in_userns, const char *user);

#endif
