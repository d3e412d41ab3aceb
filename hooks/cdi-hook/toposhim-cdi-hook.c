/*
 * toposhim-cdi-hook - generic OCI hooks that CDI specs can reference
 * (CDI spec "Container Edits": hooks, typically createContainer):
 *
 *   toposhim-cdi-hook create-symlinks --link TARGET::LINK [--link ...]
 *   toposhim-cdi-hook update-ldcache --folder DIR [--folder ...] [--timeout SEC]
 *   toposhim-cdi-hook chmod --mode MODE --path PATH [--path ...]
 *
 * The OCI state (runtime-spec runtime.md "State": pid, bundle) is read from
 * stdin.  Every path is resolved inside the container's root with openat2()
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so no symlink in the image leads
 * out of it; a LINK, DIR or PATH with a ".." component is refused outright.
 * The root is /proc/<pid>/root when that is not our own root; before
 * pivot_root it is the bundle's root.path: createContainer in runc (run in
 * the container's mount namespace with the host's /proc, state pid 1) and
 * in crun (state pid 0, cwd the bundle).
 *
 * The environment is hostile.  runc 1.1 runs a createContainer or
 * startContainer hook whose entry has no "env" with the *container's*
 * environment (the image's ENV) and the rootfs as cwd, so an image's
 * LD_PRELOAD=/proc/self/cwd/evil.so would be loaded by a dynamic loader
 * before main().  This binary is therefore a static PIE (no loader reads
 * LD_PRELOAD, LD_LIBRARY_PATH or LD_AUDIT); main() still clears the
 * environment first, and ldconfig runs with an empty one.
 *
 * The root file system is hostile too (the image's files): nothing in it is
 * opened except through openat2() in the root; a file we write is a new one
 * (O_CREAT | O_EXCL) renamed over the old name, so a device node or FIFO
 * planted there is replaced, never opened.  update-ldcache runs the host's
 * ldconfig chrooted into a detached nodev,nosuid copy of the root's mount
 * tree, writing its cache into a fresh private directory; the result is then
 * renamed over /etc/ld.so.cache.  The files ldconfig reads at fixed names
 * (/etc/ld.so.conf, /etc/ld.so.conf.d/ *.conf, its aux cache) must be absent
 * or regular files, and ldconfig is killed after --timeout seconds (default
 * 30) for the FIFOs no fixed name can find.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cdi-hook.h"
#include "oci/json.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define PROG "toposhim-cdi-hook"
#define LDSO_CONF "/etc/ld.so.conf.d/00-toposhim-cdi.conf"
#define LDCONFIG_TIMEOUT_SEC 30

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000 /* include/uapi/linux/fcntl.h, Linux 5.12 */
#endif

static int open_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));

	return fd < 0 ? -errno : fd;
}

/* Absolute, and no ".." component: a path that stays in the root lexically. */
static int check_path(const char *what, const char *path, struct ts_error **err)
{
	const char *p = path;

	if (path[0] != '/')
		return ts_error_set(err, 0, "%s: not absolute '%s'", what, path);
	while ((p = strstr(p, "..")) != NULL) {
		if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return ts_error_set(err, 0, "%s: escapes the container root '%s'", what,
					    path);
		p += 2;
	}
	return 0;
}

int ts_cdi_hook_read_state(int fd, pid_t *ret_pid, char **ret_rootfs, struct ts_error **err)
{
	cleanup_free char *text = NULL, *cfgtext = NULL, *cfgpath = NULL;
	cleanup_json struct ts_json *state = NULL, *config = NULL;
	const char *bundle, *root;
	int64_t pid;
	size_t len;
	int r;

	r = ts_read_fd(fd, "stdin", 1024 * 1024, &text, &len, err);
	if (r < 0)
		return r;
	r = ts_json_parse(text, len, "state", &state, err);
	if (r < 0)
		return r;
	/* crun runs createContainer hooks before it knows the container's pid
	 * and says "pid": 0; the bundle's root.path is the root then */
	if (ts_json_get_int64(ts_json_get(state, "pid"), &pid) < 0 || pid < 0 || pid > INT32_MAX)
		return ts_error_set(err, 0, "state: '/pid': missing or invalid");
	*ret_pid = (pid_t)pid;
	*ret_rootfs = NULL;
	bundle = ts_json_get_string(state, "bundle");
	if (bundle != NULL && bundle[0] == '/') {
		if (asprintf(&cfgpath, "%s/config.json", bundle) < 0)
			return ts_error_set(err, ENOMEM, "state");
		if (ts_read_file_at(AT_FDCWD, cfgpath, 0, &cfgtext, &len, err) < 0 ||
		    ts_json_parse(cfgtext, len, cfgpath, &config, err) < 0)
			ts_error_clear(err); /* no bundle to read: /proc/<pid>/root it is */
	}
	root = ts_json_get_string(ts_json_get(config, "root"), "path");
	if (root == NULL && pid == 0)
		return ts_error_set(err, 0,
				    "state: '/pid': 0 and no root.path in the bundle's "
				    "config.json");
	if (root == NULL)
		return 0;
	if (root[0] == '/')
		*ret_rootfs = strdup(root);
	else if (asprintf(ret_rootfs, "%s/%s", bundle, root) < 0)
		*ret_rootfs = NULL;
	return *ret_rootfs ? 0 : ts_error_set(err, ENOMEM, "state");
}

#ifndef TS_FUZZ /* the fuzz target opens its own root (tests/fuzz/fuzz-hook.c) */
static bool same_dir(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * Which directory is the container's root depends on when the hook runs:
 *  - in the runtime's namespaces (createRuntime, poststart): /proc/<pid>/root,
 *    a root other than ours;
 *  - createContainer in runc: in the container's mount namespace before
 *    pivot_root, with pid 1 of the container's pid namespace and the host's
 *    /proc; our root is still the host's, and the container root is the
 *    bundle's root.path, with the container's mounts on it;
 *  - createContainer in crun: the same, but the state says pid 0;
 *  - inside the container after pivot_root (startContainer): our own root.
 */
static int open_container_root(pid_t pid, const char *rootfs, struct ts_error **err)
{
	cleanup_free char *proc = NULL;
	cleanup_close int procroot = -EBADF, self = -EBADF, bundle_root = -EBADF;

	if (pid > 0) {
		if (asprintf(&proc, "/proc/%d/root", (int)pid) < 0)
			return ts_error_set(err, ENOMEM, "root");
		procroot = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
		self = open("/proc/self/root", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (procroot >= 0 && self >= 0 && !same_dir(procroot, self))
			return TAKE_FD(procroot);
	}
	if (rootfs != NULL) {
		bundle_root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (bundle_root >= 0)
			return TAKE_FD(bundle_root);
		if (pid == 0)
			return ts_error_set(err, errno, "%s: cannot open", rootfs);
	}
	if (procroot >= 0)
		return TAKE_FD(procroot);
	return ts_error_set(err, errno, "%s: cannot open", proc);
}

#endif

/* mkdir -p inside the root; returns an O_PATH fd of the directory. */
static int mkdir_in_root(int rootfd, const char *dir, struct ts_error **err)
{
	cleanup_free char *prefix = strdup(dir);
	char *slash;
	int fd;

	if (prefix == NULL)
		return ts_error_set(err, ENOMEM, "%s", dir);
	fd = open_in_root(rootfd, dir, O_PATH | O_DIRECTORY);
	if (fd >= 0 || fd != -ENOENT)
		return fd >= 0 ? fd : ts_error_set(err, -fd, "'%s': cannot open", dir);
	slash = strrchr(prefix, '/');
	*slash = '\0';
	cleanup_close int parent = mkdir_in_root(rootfd, prefix[0] ? prefix : "/", err);
	if (parent < 0)
		return parent;
	if (mkdirat(parent, slash + 1, 0755) < 0 && errno != EEXIST)
		return ts_error_set(err, errno, "'%s': cannot create", dir);
	fd = open_in_root(rootfd, dir, O_PATH | O_DIRECTORY);
	return fd >= 0 ? fd : ts_error_set(err, -fd, "'%s': cannot open", dir);
}

static int split(const char *path, char **ret_dir, const char **ret_base)
{
	const char *slash = strrchr(path, '/');

	*ret_dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	*ret_base = slash + 1;
	return *ret_dir ? 0 : -ENOMEM;
}

static int create_symlink(int rootfd, const char *spec, struct ts_error **err)
{
	const char *sep = strstr(spec, "::"), *base;
	cleanup_free char *target = NULL, *dir = NULL, *old = NULL;
	cleanup_close int dfd = -EBADF;
	const char *link;
	int r;

	if (sep == NULL || sep == spec || sep[2] == '\0')
		return ts_error_set(err, 0, "--link: expected TARGET::LINK '%s'", spec);
	target = strndup(spec, (size_t)(sep - spec));
	link = sep + 2;
	if (target == NULL)
		return ts_error_set(err, ENOMEM, "--link");
	r = check_path("--link", link, err);
	if (r < 0)
		return r;
	if (split(link, &dir, &base) < 0)
		return ts_error_set(err, ENOMEM, "--link");
	if (base[0] == '\0')
		return ts_error_set(err, 0, "--link: no link name in '%s'", link);
	dfd = mkdir_in_root(rootfd, dir, err);
	if (dfd < 0)
		return ts_error_prefix(err, "--link '%s'", spec);
	if (symlinkat(target, dfd, base) == 0)
		return 0;
	if (errno != EEXIST)
		return ts_error_set(err, errno, "--link '%s': cannot create", spec);
	/* An existing link to the same target is what we wanted anyway. */
	old = calloc(1, 4097);
	if (old != NULL && readlinkat(dfd, base, old, 4096) >= 0 && strcmp(old, target) == 0)
		return 0;
	return ts_error_set(err, EEXIST, "--link '%s': '%s' exists", spec, link);
}

static int do_chmod(int rootfd, const char *mode_str, const char *path, struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	char proc[64], *end;
	unsigned long mode;
	int r;

	errno = 0;
	mode = strtoul(mode_str, &end, 8);
	if (mode_str[0] == '\0' || *end != '\0' || errno != 0 || mode > 07777)
		return ts_error_set(err, 0, "--mode: invalid mode '%s'", mode_str);
	r = check_path("--path", path, err);
	if (r < 0)
		return r;
	fd = open_in_root(rootfd, path, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return ts_error_set(err, -fd, "--path '%s': cannot open", path);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (chmod(proc, (mode_t)mode) < 0)
		return ts_error_set(err, errno, "--path '%s': cannot chmod", path);
	return 0;
}

/* What ldconfig will read at path inside the root: absent, or a regular file (a FIFO
 * would block it, a device would be read).  Symlinks are followed in the root, as
 * ldconfig's chroot follows them. */
static int check_ldconfig_input(int rootfd, const char *path, struct ts_error **err)
{
	cleanup_close int fd = open_in_root(rootfd, path, O_PATH);
	struct stat st;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return ts_error_set(err, -fd, "'%s': cannot check", path);
	if (fstat(fd, &st) < 0)
		return ts_error_set(err, errno, "'%s': cannot stat", path);
	if (!S_ISREG(st.st_mode))
		return ts_error_set(err, 0,
				    "'%s' in the container is not a regular file "
				    "(mode %06o), refusing to run ldconfig",
				    path, (unsigned)st.st_mode);
	return 0;
}

/* The fixed names ldconfig reads (its config, the config dir Debian, Ubuntu and
 * RHEL include, its aux cache and the aux cache's temporary file). */
static int check_ldconfig_inputs(int rootfd, struct ts_error **err)
{
	static const char *const fixed[] = {"/etc/ld.so.conf", "/var/cache/ldconfig/aux-cache",
					    "/var/cache/ldconfig/aux-cache~"};
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;
	int fd, r;

	for (size_t i = 0; i < ARRAY_SIZE(fixed); i++) {
		r = check_ldconfig_input(rootfd, fixed[i], err);
		if (r < 0)
			return r;
	}
	fd = open_in_root(rootfd, "/etc/ld.so.conf.d", O_RDONLY | O_DIRECTORY | O_NONBLOCK);
	if (fd < 0)
		return 0; /* none, or not a directory: ldconfig's glob finds nothing either */
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return ts_error_set(err, errno, "'/etc/ld.so.conf.d': cannot read");
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		char path[512];

		if (de->d_name[0] == '.' || len < 5 || strcmp(de->d_name + len - 5, ".conf") != 0)
			continue;
		if (snprintf(path, sizeof(path), "/etc/ld.so.conf.d/%s", de->d_name) >=
		    (int)sizeof(path))
			continue; /* longer than any name ldconfig's glob could open either */
		r = check_ldconfig_input(rootfd, path, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A detached copy of the root's mount tree with nodev,nosuid on every mount: a
 * device node planted anywhere in the image cannot be opened through it.  Falls
 * back to rootfd itself (dup'ed) where the kernel lacks open_tree (5.2) or
 * mount_setattr (5.12); the checks above and the private cache dir still hold. */
static int open_nodev_tree(int rootfd)
{
	struct mount_attr attr = {.attr_set = MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID};
	cleanup_close int tree = -EBADF;

	tree = (int)syscall(SYS_open_tree, rootfd, "",
			    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	if (tree >= 0 && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
				 sizeof(attr)) == 0)
		return TAKE_FD(tree);
	return fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
}

/* Wait for child, killing it after timeout_sec. @return its status, or -ETIMEDOUT. */
static int wait_with_timeout(pid_t child, unsigned timeout_sec, int *ret_status)
{
	const struct timespec tick = {.tv_nsec = 10 * 1000 * 1000};
	unsigned long ticks = (unsigned long)timeout_sec * 100;

	for (unsigned long i = 0;; i++) {
		pid_t r = waitpid(child, ret_status, WNOHANG);

		if (r == child)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (i >= ticks) {
			(void)kill(child, SIGKILL); /* it may have exited just now */
			while (waitpid(child, ret_status, 0) < 0 && errno == EINTR)
				;
			return -ETIMEDOUT;
		}
		(void)nanosleep(&tick, NULL); /* interrupted: the next round checks again */
	}
}

static int run_ldconfig(int treefd, const char *cache, unsigned timeout_sec, struct ts_error **err)
{
	static char *const candidates[] = {"/sbin/ldconfig.real", "/sbin/ldconfig",
					   "/usr/sbin/ldconfig", NULL};
	char root[64], dash_r[] = "-r", dash_c[] = "-C", cache_arg[256];
	char *ldconfig = NULL;
	int status, r;
	pid_t child;

	for (size_t i = 0; candidates[i] != NULL && ldconfig == NULL; i++)
		if (access(candidates[i], X_OK) == 0)
			ldconfig = candidates[i];
	if (ldconfig == NULL)
		return ts_error_set(err, ENOENT, "no ldconfig on the host");
	/* ldconfig -r chroots into the container root we resolved, by fd. */
	snprintf(root, sizeof(root), "/proc/self/fd/%d", treefd);
	snprintf(cache_arg, sizeof(cache_arg), "%s", cache);
	child = fork();
	if (child < 0)
		return ts_error_set(err, errno, "fork");
	if (child == 0) {
		char *const argv[] = {ldconfig, dash_r, root, dash_c, cache_arg, NULL};
		char *const envp[] = {NULL};

		if (fcntl(treefd, F_SETFD, 0) < 0)
			_exit(127);
		execve(ldconfig, argv, envp);
		_exit(127);
	}
	r = wait_with_timeout(child, timeout_sec, &status);
	if (r == -ETIMEDOUT)
		return ts_error_set(err, 0,
				    "%s -r <container root> did not finish within "
				    "%u s (a FIFO in the image?), killed",
				    ldconfig, timeout_sec);
	if (r < 0)
		return ts_error_set(err, -r, "waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ts_error_set(err, 0, "%s -r <container root> failed (status %d)", ldconfig,
				    status);
	return 0;
}

/* A new empty directory /etc/.toposhim-ldcache.<random> for ldconfig's output. */
static int make_private_dir(int etcfd, char *name, size_t size, struct ts_error **err)
{
	for (int tries = 0; tries < 16; tries++) {
		unsigned long long rnd = 0;

		if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			rnd = (unsigned long long)getpid() * 1000003u + (unsigned)tries;
		snprintf(name, size, ".toposhim-ldcache.%016llx", rnd);
		if (mkdirat(etcfd, name, 0700) == 0)
			return 0;
		if (errno != EEXIST)
			return ts_error_set(err, errno, "cannot create '/etc/%s'", name);
	}
	return ts_error_set(err, EEXIST, "cannot create a private dir in /etc");
}

/* Run ldconfig with its cache in /etc/<private>, then rename it over /etc/ld.so.cache. */
static int rebuild_cache(int rootfd, unsigned timeout_sec, struct ts_error **err)
{
	cleanup_close int etcfd = -EBADF, privfd = -EBADF, treefd = -EBADF, cachefd = -EBADF;
	char name[64], cache[128];
	struct stat st;
	int r;

	r = check_ldconfig_inputs(rootfd, err);
	if (r < 0)
		return r;
	etcfd = mkdir_in_root(rootfd, "/etc", err);
	if (etcfd < 0)
		return etcfd;
	r = make_private_dir(etcfd, name, sizeof(name), err);
	if (r < 0)
		return r;
	privfd = openat(etcfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	treefd = privfd >= 0 ? open_nodev_tree(rootfd) : -EBADF;
	snprintf(cache, sizeof(cache), "/etc/%s/ld.so.cache", name);
	if (privfd < 0 || treefd < 0)
		r = ts_error_set(err, errno, "cannot open '/etc/%s'", name);
	else
		r = run_ldconfig(treefd, cache, timeout_sec, err);
	if (r >= 0) {
		/* ours, but check anyway: nothing in the root is opened unchecked */
		cachefd = openat(privfd, "ld.so.cache",
				 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (cachefd < 0 || fstat(cachefd, &st) < 0 || !S_ISREG(st.st_mode))
			r = ts_error_set(err, cachefd < 0 ? errno : 0,
					 "ldconfig wrote no cache file");
		else if (renameat(privfd, "ld.so.cache", etcfd, "ld.so.cache") < 0)
			r = ts_error_set(err, errno, "cannot replace '/etc/ld.so.cache'");
	}
	if (privfd >= 0) {
		(void)unlinkat(privfd, "ld.so.cache~", 0); /* best effort: a failed run's */
		(void)unlinkat(privfd, "ld.so.cache", 0);
	}
	(void)unlinkat(etcfd, name, AT_REMOVEDIR);
	return r;
}

static int update_ldcache(int rootfd, char **folders, size_t n, unsigned timeout_sec,
			  struct ts_error **err)
{
	cleanup_free char *text = NULL, *dir = NULL;
	cleanup_close int dfd = -EBADF;
	const char *base;
	size_t len = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		r = check_path("--folder", folders[i], err);
		if (r < 0)
			return r;
		if (strchr(folders[i], '\n') != NULL)
			return ts_error_set(err, 0, "--folder: newline in '%s'", folders[i]);
		len += strlen(folders[i]) + 1;
	}
	text = calloc(1, len + 1);
	if (text == NULL || split(LDSO_CONF, &dir, &base) < 0)
		return ts_error_set(err, ENOMEM, "%s", LDSO_CONF);
	for (size_t i = 0; i < n; i++) {
		strcat(text, folders[i]);
		strcat(text, "\n");
	}
	dfd = mkdir_in_root(rootfd, dir, err);
	if (dfd < 0)
		return dfd;
	/* a new file renamed over the name: whatever the image put there is not opened */
	r = ts_write_file_atomic_at(dfd, base, text, len, 0644, err);
	if (r < 0)
		return ts_error_prefix(err, "'%s'", LDSO_CONF);
	return rebuild_cache(rootfd, timeout_sec, err);
}

#ifndef TS_FUZZ
static int usage(void)
{
	fprintf(stderr, "usage: " PROG " create-symlinks --link TARGET::LINK...\n"
			"       " PROG " update-ldcache --folder DIR... [--timeout SEC]\n"
			"       " PROG " chmod --mode MODE --path PATH...\n"
			"the OCI state is read from stdin\n");
	return 2;
}
#endif

static int parse_timeout(const char *s, unsigned *ret, struct ts_error **err)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v == 0 || v > 3600)
		return ts_error_set(err, 0, "--timeout: expected seconds from 1 to 3600, got '%s'",
				    s);
	*ret = (unsigned)v;
	return 0;
}

void ts_cdi_hook_args_release(struct ts_cdi_hook_args *a)
{
	free(a->values);
	*a = (struct ts_cdi_hook_args){0};
}

int ts_cdi_hook_parse_args(int argc, char **argv, struct ts_cdi_hook_args *ret,
			   struct ts_error **err)
{
	struct ts_cdi_hook_args a = {.cmd = argv[1], .timeout_sec = LDCONFIG_TIMEOUT_SEC};
	const char *want = NULL;
	int r = 0;

	if (strcmp(a.cmd, "create-symlinks") == 0)
		want = "--link";
	else if (strcmp(a.cmd, "update-ldcache") == 0)
		want = "--folder";
	else if (strcmp(a.cmd, "chmod") == 0)
		want = "--path";
	else
		return ts_error_set(err, 0, "unknown command '%s'", a.cmd);
	a.values = calloc((size_t)argc, sizeof(char *));
	if (a.values == NULL)
		return ts_error_set(err, ENOMEM, PROG);
	for (int i = 2; i < argc; i++) {
		if (i + 1 >= argc)
			r = ts_error_set(err, 0, "%s: option '%s' needs a value", a.cmd, argv[i]);
		else if (strcmp(argv[i], want) == 0)
			a.values[a.n++] = argv[++i];
		else if (strcmp(a.cmd, "chmod") == 0 && strcmp(argv[i], "--mode") == 0)
			a.mode = argv[++i];
		else if (strcmp(a.cmd, "update-ldcache") == 0 && strcmp(argv[i], "--timeout") == 0)
			r = parse_timeout(argv[++i], &a.timeout_sec, err);
		else
			r = ts_error_set(err, 0, "%s: unknown option '%s'", a.cmd, argv[i]);
		if (r < 0) {
			ts_cdi_hook_args_release(&a);
			return r;
		}
	}
	if (strcmp(a.cmd, "chmod") == 0 && a.mode == NULL) {
		ts_cdi_hook_args_release(&a);
		return ts_error_set(err, 0, "chmod: missing --mode");
	}
	*ret = a;
	return 0;
}

int ts_cdi_hook_apply(int rootfd, const struct ts_cdi_hook_args *a, struct ts_error **err)
{
	int r;

	if (strcmp(a->cmd, "update-ldcache") == 0)
		return a->n ? update_ldcache(rootfd, a->values, a->n, a->timeout_sec, err) : 0;
	for (size_t i = 0; i < a->n; i++) {
		r = strcmp(a->cmd, "chmod") == 0 ? do_chmod(rootfd, a->mode, a->values[i], err)
						 : create_symlink(rootfd, a->values[i], err);
		if (r < 0)
			return r;
	}
	return 0;
}

#ifndef TS_FUZZ
static int run(int argc, char **argv, struct ts_error **err)
{
	struct ts_cdi_hook_args a;
	cleanup_free char *rootfs = NULL;
	cleanup_close int rootfd = -EBADF;
	pid_t pid = 0;
	int r;

	r = ts_cdi_hook_parse_args(argc, argv, &a, err);
	if (r < 0)
		return r;
	r = ts_cdi_hook_read_state(STDIN_FILENO, &pid, &rootfs, err);
	if (r >= 0)
		rootfd = r = open_container_root(pid, rootfs, err);
	if (r >= 0)
		r = ts_cdi_hook_apply(rootfd, &a, err);
	ts_cdi_hook_args_release(&a);
	return r;
}

int main(int argc, char **argv)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *msg = NULL;

	/* Nothing of the environment we were given decides anything here (and,
	 * static, no loader read it before us: see the top of this file). */
	(void)clearenv();
	if (argc < 2)
		return usage();
	if (run(argc, argv, &err) >= 0)
		return 0;
	msg = ts_error_format(err);
	fprintf(stderr, PROG ": %s: %s\n", argv[1], msg ? msg : "out of memory");
	return 1;
}
#endif /* TS_FUZZ */
