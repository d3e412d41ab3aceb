/*
 * toposhim-cdi-hook - generic OCI hooks that CDI specs can reference
 * (CDI spec "Container Edits": hooks, typically createContainer):
 *
 *   toposhim-cdi-hook create-symlinks --link TARGET::LINK [--link ...]
 *   toposhim-cdi-hook update-ldcache --folder DIR [--folder ...]
 *   toposhim-cdi-hook chmod --mode MODE --path PATH [--path ...]
 *
 * The OCI state (runtime-spec runtime.md "State": pid, bundle) is read from
 * stdin.  Every path is resolved inside the container's root with openat2()
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so no symlink in the image leads
 * out of it; a LINK, DIR or PATH with a ".." component is refused outright.
 * The root is /proc/<pid>/root when that is not our own root; before
 * pivot_root (createContainer in runc, which runs the hook in the
 * container's mount namespace with the container's pid 1 in the state) it
 * is the bundle's root.path.
 *
 * The environment is hostile.  runc 1.1 runs a createContainer or
 * startContainer hook whose entry has no "env" with the *container's*
 * environment (the image's ENV) and the rootfs as cwd, so an image's
 * LD_PRELOAD=/proc/self/cwd/evil.so would be loaded by a dynamic loader
 * before main().  This binary is therefore a static PIE (no loader reads
 * LD_PRELOAD, LD_LIBRARY_PATH or LD_AUDIT); main() still clears the
 * environment first, and ldconfig runs with an empty one.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/json.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define PROG "toposhim-cdi-hook"
#define LDSO_CONF "/etc/ld.so.conf.d/00-toposhim-cdi.conf"

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

/* The pid and the container root path from the OCI state on stdin. */
static int read_state(pid_t *ret_pid, char **ret_rootfs, struct ts_error **err)
{
	cleanup_free char *text = NULL, *cfgtext = NULL, *cfgpath = NULL;
	cleanup_json struct ts_json *state = NULL, *config = NULL;
	const char *bundle, *root;
	int64_t pid;
	size_t len;
	int r;

	r = ts_read_fd(STDIN_FILENO, "stdin", 1024 * 1024, &text, &len, err);
	if (r < 0)
		return r;
	r = ts_json_parse(text, len, "state", &state, err);
	if (r < 0)
		return r;
	if (ts_json_get_int64(ts_json_get(state, "pid"), &pid) < 0 || pid <= 0 || pid > INT32_MAX)
		return ts_error_set(err, 0, "state: '/pid': missing or invalid");
	*ret_pid = (pid_t)pid;
	*ret_rootfs = NULL;
	bundle = ts_json_get_string(state, "bundle");
	if (bundle == NULL || bundle[0] != '/')
		return 0;
	if (asprintf(&cfgpath, "%s/config.json", bundle) < 0)
		return ts_error_set(err, ENOMEM, "state");
	if (ts_read_file_at(AT_FDCWD, cfgpath, 0, &cfgtext, &len, err) < 0 ||
	    ts_json_parse(cfgtext, len, cfgpath, &config, err) < 0) {
		ts_error_clear(err); /* no bundle to read: /proc/<pid>/root it is */
		return 0;
	}
	root = ts_json_get_string(ts_json_get(config, "root"), "path");
	if (root == NULL)
		return 0;
	if (root[0] == '/')
		*ret_rootfs = strdup(root);
	else if (asprintf(ret_rootfs, "%s/%s", bundle, root) < 0)
		*ret_rootfs = NULL;
	return *ret_rootfs ? 0 : ts_error_set(err, ENOMEM, "state");
}

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
 *  - inside the container after pivot_root (startContainer): our own root.
 */
static int open_container_root(pid_t pid, const char *rootfs, struct ts_error **err)
{
	cleanup_free char *proc = NULL;
	cleanup_close int procroot = -EBADF, self = -EBADF, bundle_root = -EBADF;

	if (asprintf(&proc, "/proc/%d/root", (int)pid) < 0)
		return ts_error_set(err, ENOMEM, "root");
	procroot = open(proc, O_PATH | O_DIRECTORY | O_CLOEXEC);
	self = open("/proc/self/root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (procroot >= 0 && self >= 0 && !same_dir(procroot, self))
		return TAKE_FD(procroot);
	if (rootfs != NULL) {
		bundle_root = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (bundle_root >= 0)
			return TAKE_FD(bundle_root);
	}
	if (procroot >= 0)
		return TAKE_FD(procroot);
	return ts_error_set(err, errno, "%s: cannot open", proc);
}

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

static int run_ldconfig(int rootfd, struct ts_error **err)
{
	static char *const candidates[] = {"/sbin/ldconfig.real", "/sbin/ldconfig",
					   "/usr/sbin/ldconfig", NULL};
	char root[64], dash_r[] = "-r";
	char *ldconfig = NULL;
	int status;
	pid_t child;

	for (size_t i = 0; candidates[i] != NULL && ldconfig == NULL; i++)
		if (access(candidates[i], X_OK) == 0)
			ldconfig = candidates[i];
	if (ldconfig == NULL)
		return ts_error_set(err, ENOENT, "update-ldcache: no ldconfig on the host");
	/* ldconfig -r chroots into the container root we resolved, by fd. */
	snprintf(root, sizeof(root), "/proc/self/fd/%d", rootfd);
	child = fork();
	if (child < 0)
		return ts_error_set(err, errno, "update-ldcache: fork");
	if (child == 0) {
		char *const argv[] = {ldconfig, dash_r, root, NULL};
		char *const envp[] = {NULL};

		if (fcntl(rootfd, F_SETFD, 0) < 0)
			_exit(127);
		execve(ldconfig, argv, envp);
		_exit(127);
	}
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return ts_error_set(err, errno, "update-ldcache: waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return ts_error_set(err, 0,
				    "update-ldcache: %s -r <container root> failed (status %d)",
				    ldconfig, status);
	return 0;
}

static int update_ldcache(int rootfd, char **folders, size_t n, struct ts_error **err)
{
	cleanup_free char *text = NULL, *dir = NULL;
	cleanup_close int dfd = -EBADF, fd = -EBADF;
	const char *base;
	size_t len = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		r = check_path("--folder", folders[i], err);
		if (r < 0)
			return r;
		len += strlen(folders[i]) + 1;
	}
	text = calloc(1, len + 1);
	if (text == NULL || split(LDSO_CONF, &dir, &base) < 0)
		return ts_error_set(err, ENOMEM, "update-ldcache");
	for (size_t i = 0; i < n; i++) {
		strcat(text, folders[i]);
		strcat(text, "\n");
	}
	dfd = mkdir_in_root(rootfd, dir, err);
	if (dfd < 0)
		return ts_error_prefix(err, "update-ldcache");
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || ts_write_all(fd, text, len) < 0)
		return ts_error_set(err, errno, "update-ldcache: cannot write '%s'", LDSO_CONF);
	return run_ldconfig(rootfd, err);
}

static int usage(void)
{
	fprintf(stderr, "usage: " PROG " create-symlinks --link TARGET::LINK...\n"
			"       " PROG " update-ldcache --folder DIR...\n"
			"       " PROG " chmod --mode MODE --path PATH...\n"
			"the OCI state is read from stdin\n");
	return 2;
}

static int run(int argc, char **argv, struct ts_error **err)
{
	const char *cmd = argv[1], *mode = NULL, *want = NULL;
	cleanup_free char **values = calloc((size_t)argc, sizeof(char *));
	cleanup_free char *rootfs = NULL;
	cleanup_close int rootfd = -EBADF;
	size_t n = 0;
	pid_t pid = 0;
	int r;

	if (values == NULL)
		return ts_error_set(err, ENOMEM, PROG);
	if (strcmp(cmd, "create-symlinks") == 0)
		want = "--link";
	else if (strcmp(cmd, "update-ldcache") == 0)
		want = "--folder";
	else if (strcmp(cmd, "chmod") == 0)
		want = "--path";
	else
		return ts_error_set(err, 0, "unknown command '%s'", cmd);
	for (int i = 2; i < argc; i++) {
		if (i + 1 >= argc)
			return ts_error_set(err, 0, "%s: option '%s' needs a value", cmd, argv[i]);
		if (strcmp(argv[i], want) == 0)
			values[n++] = argv[++i];
		else if (strcmp(cmd, "chmod") == 0 && strcmp(argv[i], "--mode") == 0)
			mode = argv[++i];
		else
			return ts_error_set(err, 0, "%s: unknown option '%s'", cmd, argv[i]);
	}
	if (strcmp(cmd, "chmod") == 0 && mode == NULL)
		return ts_error_set(err, 0, "chmod: missing --mode");
	r = read_state(&pid, &rootfs, err);
	if (r < 0)
		return r;
	rootfd = open_container_root(pid, rootfs, err);
	if (rootfd < 0)
		return rootfd;
	if (strcmp(cmd, "update-ldcache") == 0)
		return n ? update_ldcache(rootfd, values, n, err) : 0;
	for (size_t i = 0; i < n; i++) {
		r = strcmp(cmd, "chmod") == 0 ? do_chmod(rootfd, mode, values[i], err)
					      : create_symlink(rootfd, values[i], err);
		if (r < 0)
			return r;
	}
	return 0;
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
