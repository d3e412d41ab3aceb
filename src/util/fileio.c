/* fileio.c - see fileio.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/testpoint.h"

int ts_read_fd_sized(int fd, const char *name, size_t max_bytes, size_t size_hint, char **ret_buf,
		     size_t *ret_len, struct ts_error **err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0, cap = 0;

	if (max_bytes == 0)
		max_bytes = 64u << 20;
	/* the size the caller's fstat saw sizes the buffer: doubling from
	 * 8 KiB copied a 126 KB allocations.json four times */
	if (size_hint > 0 && size_hint <= max_bytes) {
		cap = size_hint + 4096;
		buf = malloc(cap + 1);
		if (buf == NULL)
			return ts_error_set(err, ENOMEM, "%s: cannot read", name);
	}
	for (;;) {
		size_t want;
		ssize_t n;

		if (cap - len < 4096) {
			char *nbuf;

			cap = cap ? cap * 2 : 8192;
			nbuf = realloc(buf, cap + 1);
			if (nbuf == NULL)
				return ts_error_set(err, ENOMEM, "%s: cannot read", name);
			buf = nbuf;
		}
		want = cap - len;
		n = read(fd, buf + len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ts_error_set(err, errno, "%s: cannot read", name);
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max_bytes)
			return ts_error_set(err, EFBIG, "%s: larger than %zu bytes", name,
					    max_bytes);
		/* A regular file (the only kind a caller gives a size for)
		 * returns less than asked only at its end: no read to see
		 * EOF (one system call per file; sysfs attributes, regular
		 * files of 4096 bytes, come whole in one read too).  procfs
		 * and cgroupfs files say size 0 and are read to EOF. */
		if (size_hint > 0 && (size_t)n < want)
			break;
	}
	buf[len] = '\0';
	*ret_buf = TAKE_PTR(buf);
	if (ret_len != NULL)
		*ret_len = len;
	return 0;
}

int ts_read_fd(int fd, const char *name, size_t max_bytes, char **ret_buf, size_t *ret_len,
	       struct ts_error **err)
{
	return ts_read_fd_sized(fd, name, max_bytes, 0, ret_buf, ret_len, err);
}

int ts_read_file_at(int dirfd, const char *path, size_t max_bytes, char **ret_buf, size_t *ret_len,
		    struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	struct stat st;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ts_error_set(err, errno, "%s: cannot open", path);
	if (fstat(fd, &st) < 0)
		return ts_error_set(err, errno, "%s: cannot stat", path);
	if (S_ISDIR(st.st_mode))
		return ts_error_set(err, EISDIR, "%s: cannot read", path);
	if (!S_ISREG(st.st_mode))
		return ts_error_set(err, 0, "%s: not a regular file", path);
	return ts_read_fd_sized(fd, path, max_bytes, (size_t)st.st_size, ret_buf, ret_len, err);
}

int ts_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Remove the ".<base>.tmp.<pid>" files in dfd whose writer is gone (killed
 * mid-write); best effort. */
static void sweep_stale(int dfd, const char *base)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	size_t blen = strlen(base);
	struct dirent *e;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		const char *n = e->d_name;
		char *end;
		long pid;

		if (n[0] != '.' || strncmp(n + 1, base, blen) != 0 ||
		    strncmp(n + 1 + blen, ".tmp.", 5) != 0)
			continue;
		errno = 0;
		pid = strtol(n + 1 + blen + 5, &end, 10);
		if (errno != 0 || *end != '\0' || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
			(void)unlinkat(dfd, n, 0);
	}
	closedir(d);
}

/* How much of a replacement survives a crash (the writers below). */
enum durability {
	DURABLE_NONE, /* the rename only */
	DURABLE_DATA, /* the file's data before the rename */
	DURABLE_ALL,  /* that, and the directory after the rename */
};

static int write_replacing(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
			   uid_t uid, gid_t gid, enum durability durable, struct ts_error **err)
{
	cleanup_free char *tmp = NULL;
	cleanup_close int fd = -EBADF;
	cleanup_close int dfd = -EBADF;
	const char *slash = strrchr(name, '/');
	int r;

	if (asprintf(&tmp, "%.*s.%s.tmp.%d", slash ? (int)(slash - name + 1) : 0, name,
		     slash ? slash + 1 : name, (int)getpid()) < 0)
		return ts_error_set(err, ENOMEM, "%s: cannot write", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	/* A file of that name is what a process with this pid left when it was
	 * killed mid-write (no other live process has our pid): remove it. */
	if (fd < 0 && errno == EEXIST && unlinkat(dirfd, tmp, 0) == 0)
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return ts_error_set(err, errno, "%s: cannot create temporary file '%s'", name, tmp);
	r = ts_write_all(fd, buf, len);
	/* owner first: chown clears set-id bits that fchmod then sets */
	if (r == 0 && (uid != (uid_t)-1 || gid != (gid_t)-1) && fchown(fd, uid, gid) < 0)
		r = -errno;
	if (r == 0 && fchmod(fd, mode & 07777) < 0)
		r = -errno;
	if (r == 0 && durable != DURABLE_NONE && fsync(fd) < 0)
		r = -errno;
	/* a writer killed here leaves its temporary file behind */
	ts_test_point("atomic-write-before-rename");
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		(void)unlinkat(dirfd, tmp, 0); /* best effort: the original is untouched */
		return ts_error_set(err, -r, "%s: cannot replace", name);
	}
	/* Make the rename itself durable. */
	if (slash != NULL) {
		cleanup_free char *dir = strndup(name, (size_t)(slash - name) + 1);

		if (dir != NULL)
			dfd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (dfd >= 0) {
		/* the data is in place; a failed dir sync only weakens durability */
		if (durable == DURABLE_ALL)
			(void)fsync(dfd);
		sweep_stale(dfd, slash ? slash + 1 : name);
	}
	return 0;
}

int ts_write_file_atomic_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
			    struct ts_error **err)
{
	return write_replacing(dirfd, name, buf, len, mode, (uid_t)-1, (gid_t)-1, DURABLE_ALL, err);
}

int ts_write_file_atomic_owned_at(int dirfd, const char *name, const void *buf, size_t len,
				  mode_t mode, uid_t uid, gid_t gid, struct ts_error **err)
{
	return write_replacing(dirfd, name, buf, len, mode, uid, gid, DURABLE_DATA, err);
}

int ts_write_file_replace_at(int dirfd, const char *name, const void *buf, size_t len, mode_t mode,
			     struct ts_error **err)
{
	return write_replacing(dirfd, name, buf, len, mode, (uid_t)-1, (gid_t)-1, DURABLE_NONE,
			       err);
}

static bool read_in_user_namespace(void)
{
	cleanup_free char *buf = NULL;
	unsigned long inside, outside, count;
	char extra;

	if (ts_read_file_at(AT_FDCWD, "/proc/self/uid_map", 4096, &buf, NULL, NULL) < 0)
		return false;
	if (sscanf(buf, "%lu %lu %lu %c", &inside, &outside, &count, &extra) == 3)
		return !(inside == 0 && outside == 0 && count == 4294967295UL);
	return true;
}

bool ts_in_user_namespace(void)
{
	/* a process cannot leave its user namespace, only enter a new one
	 * (unshare, setns), which toposhim never does: read it once */
	static int cached = -1;

	if (cached < 0)
		cached = read_in_user_namespace();
	return cached != 0;
}

bool ts_rootless_caller(uid_t euid, bool in_userns, const char *user)
{
	return euid != 0 || (in_userns && (user == NULL || strcmp(user, "root") != 0));
}
