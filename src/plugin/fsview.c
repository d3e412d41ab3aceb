/*
 * fsview.c - what of the host's file systems a plugin may write: nothing
 * but sandbox.writable (and /dev/null).
 *
 * Two layers, both set up in the forked child before it drops root:
 *  1. A mount namespace of its own (run as root only): every mount made
 *     private and read-only (mount_setattr(2) AT_RECURSIVE, Linux 5.12),
 *     then each writable path put back as a clone of the host's mounts
 *     there, made before the read-only pass (open_tree(2) OPEN_TREE_CLONE,
 *     move_mount(2), Linux 5.2), so it keeps the host's own flags.  Where
 *     mount_setattr is missing (older kernels, valgrind), mount(2) does the
 *     same: each writable path bind-mounted onto itself first, then every
 *     other mount point of /proc/self/mountinfo remounted read-only with
 *     its own flags kept (MS_REMOUNT | MS_BIND | MS_RDONLY).
 *  2. Landlock (Documentation/userspace-api/landlock.rst), when the kernel
 *     has it: every write access the kernel's ABI knows (write, truncate,
 *     create, remove, rename, device ioctl) is denied outside the writable
 *     paths and /dev/null, which also covers device nodes (a read-only
 *     mount does not stop writes to them), and from ABI 6 the plugin may
 *     neither signal nor connect to an abstract unix socket outside its
 *     own domain.  Landlock needs no privilege: it applies when toposhim
 *     runs as another user too.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plugin/internal.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* linux/mount.h, kept here: glibc's sys/mount.h and the kernel's header
 * clash on the older toolchains we build on. */
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
struct fs_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* Landlock's ABI (include/uapi/linux/landlock.h, Linux 6.12); Debian 12's
 * headers stop at ABI 2. */
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)		  /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)		  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)		  /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)		  /* ABI 6 */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif
struct ll_ruleset_attr {
	uint64_t handled_access_fs, handled_access_net, scoped;
};
struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* The write accesses Landlock ABI abi knows. */
static uint64_t ll_write_access(int abi)
{
	uint64_t a = LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR |
		     LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO |
		     LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM;

	if (abi >= 2)
		a |= LL_FS_REFER;
	if (abi >= 3)
		a |= LL_FS_TRUNCATE;
	if (abi >= 5)
		a |= LL_FS_IOCTL_DEV;
	return a;
}

int ts_plugin_landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	/* ENOSYS: not built in; EOPNOTSUPP: not enabled at boot (lsm=). */
	return abi < 0 ? 0 : (int)abi;
}

/* mountinfo escapes blanks and backslashes in paths as \ooo. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s != '\0'; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* The mount points of our mount namespace, in mountinfo's order (parents
 * before children): the fifth field of each line. */
int ts_plugin_fsview_parse_mounts(char *text, char ***ret, struct ts_error **err)
{
	cleanup_strv char **v = NULL;
	size_t n = 0;

	for (char *line = text, *next; line != NULL && *line != '\0'; line = next) {
		char *field = line, **nv;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		for (int i = 0; i < 4 && field != NULL; i++) {
			field = strchr(field, ' ');
			if (field != NULL)
				field++;
		}
		if (field == NULL)
			continue;
		field[strcspn(field, " ")] = '\0';
		unescape(field);
		nv = reallocarray(v, n + 2, sizeof(*v));
		if (nv == NULL)
			return ts_error_set(err, ENOMEM, "cannot sandbox");
		v = nv;
		v[n] = strdup(field);
		v[++n] = NULL;
		if (v[n - 1] == NULL)
			return ts_error_set(err, ENOMEM, "cannot sandbox");
	}
	if (v == NULL)
		return ts_error_set(err, ENOENT,
				    "cannot sandbox: no mount in /proc/self/mountinfo");
	*ret = TAKE_PTR(v);
	return 0;
}

int ts_plugin_fsview_read_mounts(char ***ret, struct ts_error **err)
{
	cleanup_free char *text = NULL;
	size_t len;
	int r;

	r = ts_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 16 * 1024 * 1024, &text, &len, err);
	if (r < 0)
		return ts_error_prefix(err, "cannot sandbox");
	return ts_plugin_fsview_parse_mounts(text, ret, err);
}

int ts_plugin_fsview_prepare(const struct ts_plugin_sandbox *s, struct ts_plugin_fsview *ret,
			     struct ts_error **err)
{
	struct ts_plugin_fsview v = {
		.writable = (const char *const *)s->writable,
		.mount_ns = geteuid() == 0,
		.landlock_abi = ts_plugin_landlock_abi(),
		.ruleset_fd = -EBADF,
	};

	for (size_t i = 0; s->writable != NULL && s->writable[i] != NULL; i++)
		v.n_writable++;
	if (v.n_writable > 0) {
		v.tree_fds = calloc(v.n_writable, sizeof(*v.tree_fds));
		if (v.tree_fds == NULL)
			return ts_error_set(err, ENOMEM, "cannot sandbox");
	}
	/* An invalid fd tells a kernel that has the call (EBADF) from one
	 * that has not (ENOSYS). */
	if (v.mount_ns && syscall(SYS_mount_setattr, -1, "", 0, NULL, (size_t)0) < 0 &&
	    errno == ENOSYS) {
		int r = ts_plugin_fsview_read_mounts(&v.mounts, err);

		if (r < 0) {
			ts_plugin_fsview_release(&v);
			return r;
		}
	}
	*ret = v;
	return 0;
}

void ts_plugin_fsview_release(struct ts_plugin_fsview *v)
{
	if (v == NULL)
		return;
	free(v->tree_fds);
	v->tree_fds = NULL;
	ts_strv_freep(&v->mounts);
}

#define STEP(name, arg_, expr)              \
	do {                                \
		if ((expr) < 0) {           \
			*ret_step = (name); \
			*ret_arg = (arg_);  \
			return -errno;      \
		}                           \
	} while (0)

/* path is a, or lies below it. */
static bool below(const char *path, const char *a)
{
	size_t la = strlen(a);

	if (strcmp(a, "/") == 0)
		return true;
	return strncmp(path, a, la) == 0 && (path[la] == '\0' || path[la] == '/');
}

/* statfs(2) ST_* flags to the MS_* ones a remount must repeat; only
 * ST_RELATIME differs in value. */
static unsigned long remount_flags(const struct statfs *st)
{
	unsigned long keep = ST_NOSUID | ST_NODEV | ST_NOEXEC | ST_SYNCHRONOUS | ST_MANDLOCK |
			     ST_NOATIME | ST_NODIRATIME;
	unsigned long f = (unsigned long)st->f_flags & keep;

	if (st->f_flags & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

/* The same view with mount(2) only. */
static int mounts_legacy(struct ts_plugin_fsview *v, const char **ret_step, const char **ret_arg)
{
	for (size_t i = 0; i < v->n_writable; i++)
		STEP("mount(MS_BIND)", v->writable[i],
		     mount(v->writable[i], v->writable[i], "none", MS_BIND | MS_REC, NULL));
	for (char **m = v->mounts; *m != NULL; m++) {
		bool skip = false;
		struct statfs st;

		for (size_t i = 0; i < v->n_writable && !skip; i++)
			skip = below(*m, v->writable[i]);
		if (skip)
			continue;
		if (syscall(SYS_statfs, *m, &st) < 0 && errno == ENOENT)
			continue; /* hidden or gone: nothing reaches it by that path */
		STEP("statfs", *m, syscall(SYS_statfs, *m, &st));
		STEP("mount(MS_REMOUNT)", *m,
		     mount("none", *m, "none",
			   MS_REMOUNT | MS_BIND | MS_RDONLY | remount_flags(&st), NULL));
	}
	return 0;
}

int ts_plugin_fsview_mounts(struct ts_plugin_fsview *v, const char **ret_step, const char **ret_arg)
{
	struct fs_mount_attr priv = {.propagation = MS_PRIVATE};
	struct fs_mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};

	if (!v->mount_ns)
		return 0;
	STEP("unshare(CLONE_NEWNS)", NULL, unshare(CLONE_NEWNS));
	if (v->mounts != NULL) {
		STEP("mount(MS_PRIVATE)", NULL,
		     mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL));
		return mounts_legacy(v, ret_step, ret_arg);
	}
	/* Nothing we do here reaches the host, nothing the host mounts
	 * later reaches the plugin. */
	STEP("mount_setattr(MS_PRIVATE)", NULL,
	     syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &priv, sizeof(priv)));
	for (size_t i = 0; i < v->n_writable; i++) {
		int fd = (int)syscall(SYS_open_tree, AT_FDCWD, v->writable[i],
				      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);

		STEP("open_tree", v->writable[i], fd);
		v->tree_fds[i] = fd;
	}
	STEP("mount_setattr(MOUNT_ATTR_RDONLY)", NULL,
	     syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof(ro)));
	for (size_t i = 0; i < v->n_writable; i++) {
		STEP("move_mount", v->writable[i],
		     syscall(SYS_move_mount, v->tree_fds[i], "", AT_FDCWD, v->writable[i],
			     MOVE_MOUNT_F_EMPTY_PATH));
		(void)close(v->tree_fds[i]);
	}
	return 0;
}

static int add_rule(int ruleset, const char *path, uint64_t access)
{
	struct ll_path_beneath_attr pb = {.allowed_access = access};
	int fd = open(path, O_PATH | O_CLOEXEC);
	long r;

	if (fd < 0)
		return -1;
	pb.parent_fd = fd;
	r = syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
	(void)close(fd);
	return r < 0 ? -1 : 0;
}

int ts_plugin_fsview_landlock(struct ts_plugin_fsview *v, const char **ret_step,
			      const char **ret_arg)
{
	uint64_t write = ll_write_access(v->landlock_abi);
	struct ll_ruleset_attr attr = {.handled_access_fs = write};
	size_t size = sizeof(attr.handled_access_fs);
	int fd;

	if (v->landlock_abi <= 0)
		return 0;
	if (v->landlock_abi >= 4)
		size = offsetof(struct ll_ruleset_attr, scoped);
	if (v->landlock_abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	fd = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
	STEP("landlock_create_ruleset", NULL, fd);
	v->ruleset_fd = fd;
	for (size_t i = 0; i < v->n_writable; i++)
		STEP("landlock_add_rule", v->writable[i], add_rule(fd, v->writable[i], write));
	/* Scripts send their chatter there: it discards what it is given. */
	STEP("landlock_add_rule", "/dev/null",
	     add_rule(fd, "/dev/null", write & (LL_FS_WRITE_FILE | LL_FS_TRUNCATE)));
	return 0;
}

int ts_plugin_fsview_restrict(struct ts_plugin_fsview *v, const char **ret_step,
			      const char **ret_arg)
{
	if (v->ruleset_fd < 0)
		return 0;
	STEP("landlock_restrict_self", NULL,
	     syscall(__NR_landlock_restrict_self, v->ruleset_fd, 0));
	(void)close(v->ruleset_fd);
	v->ruleset_fd = -EBADF;
	return 0;
}
