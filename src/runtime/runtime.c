/* runtime.c - see runtime.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static const char *const ts_runtime_default_names[] = {"runc", "crun", NULL};
static const char *const ts_runtime_default_dirs[] = {
	"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin", NULL,
};

/* A growing string for messages. */
struct ts_runtime_buf {
	char *s;
	bool oom;
};

static void ts_runtime_buf_add(struct ts_runtime_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ts_runtime_buf_add(struct ts_runtime_buf *b, const char *fmt, ...)
{
	char *add = NULL, *s = NULL;
	va_list ap;
	int r;

	if (b->oom)
		return;
	va_start(ap, fmt);
	r = vasprintf(&add, fmt, ap);
	va_end(ap);
	if (r < 0 || asprintf(&s, "%s%s", b->s != NULL ? b->s : "", add) < 0) {
		free(add);
		b->oom = true;
		return;
	}
	free(add);
	free(b->s);
	b->s = s;
}

/* 0 when path is an executable regular file, else -errno. */
static int ts_runtime_usable(const char *path, struct stat *st)
{
	if (stat(path, st) < 0)
		return -errno;
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	if (!S_ISREG(st->st_mode))
		return -EACCES;
	if (faccessat(AT_FDCWD, path, X_OK, AT_EACCESS) < 0)
		return -errno;
	return 0;
}

/* The files that are toposhim itself: the running program and, for the
 * core, its front (struct ts_runtime_lookup). */
struct ts_runtime_self {
	struct stat st[2];
	int n;
};

/* true when st is one of the files of self (NULL: unknown, never). */
static bool ts_runtime_is_self(const struct stat *st, const struct ts_runtime_self *self)
{
	for (int i = 0; self != NULL && i < self->n; i++)
		if (st->st_dev == self->st[i].st_dev && st->st_ino == self->st[i].st_ino)
			return true;
	return false;
}

static int ts_runtime_explicit(const char *path, const char *origin,
			       const struct ts_runtime_self *self, char **ret_path,
			       struct ts_error **err)
{
	struct stat st;
	char *p;
	int r;

	r = ts_runtime_usable(path, &st);
	if (r < 0)
		return ts_error_set(err, -r, "runtime '%s' (from %s): not an executable file", path,
				    origin);
	if (ts_runtime_is_self(&st, self))
		return ts_error_set(err, 0, "recursion: runtime '%s' (from %s) is toposhim itself",
				    path, origin);
	p = strdup(path);
	if (p == NULL)
		return ts_error_set(err, ENOMEM, "cannot find the runtime");
	*ret_path = p;
	return 0;
}

/*
 * Look for name in one directory.
 * @return 1 and *ret_path set when found; 0 when absent or skipped (the
 *         skip is noted in *skipped); -ENOMEM.
 */
static int ts_runtime_try(const char *dir, const char *name, const struct ts_runtime_self *self,
			  struct ts_runtime_buf *skipped, char **ret_path)
{
	cleanup_free char *p = NULL;
	struct stat st;

	if (strchr(name, '/') != NULL)
		p = strdup(name);
	else if (asprintf(&p, "%s/%s", dir, name) < 0)
		p = NULL;
	if (p == NULL)
		return -ENOMEM;
	if (ts_runtime_usable(p, &st) < 0)
		return 0;
	if (ts_runtime_is_self(&st, self)) {
		ts_runtime_buf_add(skipped, "; skipped '%s' (toposhim itself)", p);
		return 0;
	}
	*ret_path = TAKE_PTR(p);
	return 1;
}

/* Try name in each directory of $PATH (empty entries skipped), then dirs. */
static int ts_runtime_search_name(const char *name, const char *path_env, const char *const *dirs,
				  const struct ts_runtime_self *self,
				  struct ts_runtime_buf *skipped, char **ret_path)
{
	cleanup_free char *copy = NULL;
	char *save = NULL;
	int r;

	if (strchr(name, '/') != NULL) /* a path, not a name: no directory applies */
		return ts_runtime_try(NULL, name, self, skipped, ret_path);
	if (path_env != NULL) {
		copy = strdup(path_env);
		if (copy == NULL)
			return -ENOMEM;
		for (char *d = strtok_r(copy, ":", &save); d != NULL;
		     d = strtok_r(NULL, ":", &save)) {
			r = ts_runtime_try(d, name, self, skipped, ret_path);
			if (r != 0)
				return r;
		}
	}
	for (const char *const *d = dirs; *d != NULL; d++) {
		r = ts_runtime_try(*d, name, self, skipped, ret_path);
		if (r != 0)
			return r;
	}
	return 0;
}

static int ts_runtime_not_found(const struct ts_runtime_lookup *lookup, const char *const *names,
				const char *const *dirs, struct ts_runtime_buf *skipped,
				struct ts_error **err)
{
	struct ts_runtime_buf msg = {NULL, false};
	int r;

	ts_runtime_buf_add(&msg, "no OCI runtime found: tried ");
	for (const char *const *n = names; *n != NULL; n++)
		ts_runtime_buf_add(&msg, "%s%s", n == names ? "" : ", ", *n);
	if (names[0] == NULL)
		ts_runtime_buf_add(&msg, "no names");
	ts_runtime_buf_add(&msg, " in PATH (%s) and ",
			   lookup->path_env != NULL ? lookup->path_env : "unset");
	for (const char *const *d = dirs; *d != NULL; d++)
		ts_runtime_buf_add(&msg, "%s%s", d == dirs ? "" : ":", *d);
	if (skipped->s != NULL)
		ts_runtime_buf_add(&msg, "%s", skipped->s);
	if (msg.oom)
		r = ts_error_set(err, ENOMEM, "no OCI runtime found");
	else
		r = ts_error_set(err, ENOENT, "%s", msg.s);
	free(msg.s);
	return r;
}

int ts_runtime_find(const struct ts_runtime_lookup *lookup, char **ret_path, struct ts_error **err)
{
	const char *const *names = lookup->names ? lookup->names : ts_runtime_default_names;
	const char *const *dirs = lookup->dirs ? lookup->dirs : ts_runtime_default_dirs;
	const char *explicit = NULL, *origin = NULL, *one[2] = {NULL, NULL};
	struct ts_runtime_buf skipped = {NULL, false};
	struct ts_runtime_self self = {.n = 0};
	char *found = NULL;
	int r = 0;

	if (stat(lookup->self_exe ? lookup->self_exe : "/proc/self/exe", &self.st[self.n]) == 0)
		self.n++;
	if (lookup->front_exe != NULL && stat(lookup->front_exe, &self.st[self.n]) == 0)
		self.n++;
	if (lookup->override != NULL && lookup->override[0] != '\0') {
		explicit = lookup->override;
		origin = "TOPOSHIM_RUNTIME";
	} else if (lookup->path != NULL) {
		explicit = lookup->path;
		origin = lookup->path_origin ? lookup->path_origin : "runtime.path";
	}
	if (explicit != NULL && strchr(explicit, '/') != NULL)
		return ts_runtime_explicit(explicit, origin, &self, ret_path, err);
	if (explicit != NULL) {
		one[0] = explicit;
		names = one;
	}
	for (const char *const *n = names; *n != NULL && r == 0; n++)
		r = ts_runtime_search_name(*n, lookup->path_env, dirs, &self, &skipped, &found);
	if (r < 0 || skipped.oom) {
		free(skipped.s);
		free(found);
		return ts_error_set(err, ENOMEM, "cannot find the runtime");
	}
	if (r == 0) {
		r = ts_runtime_not_found(lookup, names, dirs, &skipped, err);
		free(skipped.s);
		return r;
	}
	free(skipped.s);
	*ret_path = found;
	return 0;
}

int ts_runtime_check_depth(const char *value, const char *runtime_path, struct ts_error **err)
{
	unsigned long depth;
	char *end = NULL;

	if (value == NULL || value[0] == '\0')
		return 0;
	errno = 0;
	depth = strtoul(value, &end, 10);
	if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || depth > INT_MAX)
		return ts_error_set(err, 0, "environment: '%s': invalid depth '%s'",
				    TS_RUNTIME_DEPTH_ENV, value);
	if (depth >= 1)
		return ts_error_set(err, 0, "recursion: toposhim called itself through '%s'",
				    runtime_path);
	return 0;
}

static bool ts_runtime_is_depth(const char *entry)
{
	size_t n = strlen(TS_RUNTIME_DEPTH_ENV);

	return strncmp(entry, TS_RUNTIME_DEPTH_ENV, n) == 0 && entry[n] == '=';
}

static int ts_runtime_build_envp(char *const *envp, int depth, char ***ret_envp)
{
	cleanup_strv char **out = NULL;
	cleanup_free char *depth_entry = NULL;
	size_t n = 0, k = 0;
	bool replaced = false;

	if (asprintf(&depth_entry, "%s=%d", TS_RUNTIME_DEPTH_ENV, depth + 1) < 0) {
		depth_entry = NULL;
		return -ENOMEM;
	}
	while (envp != NULL && envp[n] != NULL)
		n++;
	out = calloc(n + 2, sizeof(*out));
	if (out == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool is_depth = ts_runtime_is_depth(envp[i]);

		out[k] = strdup(is_depth ? depth_entry : envp[i]);
		if (out[k++] == NULL)
			return -ENOMEM;
		replaced = replaced || is_depth;
	}
	if (!replaced)
		out[k] = TAKE_PTR(depth_entry);
	*ret_envp = TAKE_PTR(out);
	return 0;
}

int ts_runtime_build_exec(const char *runtime_path, int argc, char *const *argv, char *const *envp,
			  int depth, char **ret_path, char ***ret_argv, char ***ret_envp,
			  struct ts_error **err)
{
	cleanup_free char *path = NULL;
	cleanup_strv char **out = NULL;
	cleanup_strv char **env = NULL;
	const char *name = runtime_path;

	/* the caller's form: "toposhim" -> "runc", "/x/toposhim" -> "/usr/sbin/runc" */
	if (argc > 0 && argv[0] != NULL && strchr(argv[0], '/') == NULL &&
	    strrchr(runtime_path, '/') != NULL && strrchr(runtime_path, '/')[1] != '\0')
		name = strrchr(runtime_path, '/') + 1;
	path = strdup(runtime_path);
	out = calloc((size_t)(argc > 0 ? argc : 1) + 1, sizeof(*out));
	if (path == NULL || out == NULL)
		return ts_error_set(err, ENOMEM, "cannot build the runtime's argv");
	out[0] = strdup(name);
	if (out[0] == NULL)
		return ts_error_set(err, ENOMEM, "cannot build the runtime's argv");
	for (int i = 1; i < argc; i++) {
		out[i] = strdup(argv[i]);
		if (out[i] == NULL)
			return ts_error_set(err, ENOMEM, "cannot build the runtime's argv");
	}
	if (ts_runtime_build_envp(envp, depth, &env) < 0)
		return ts_error_set(err, ENOMEM, "cannot build the runtime's environment");
	*ret_path = TAKE_PTR(path);
	*ret_argv = TAKE_PTR(out);
	*ret_envp = TAKE_PTR(env);
	return 0;
}

static const char *const ts_runtime_family_names[_TS_RUNTIME_FAMILY_MAX] = {
	[TS_RUNTIME_FAMILY_RUNC] = "runc",
	[TS_RUNTIME_FAMILY_CRUN] = "crun",
};

const char *ts_runtime_family_name(enum ts_runtime_family f)
{
	return f > TS_RUNTIME_FAMILY_UNKNOWN && f < _TS_RUNTIME_FAMILY_MAX
		       ? ts_runtime_family_names[f]
		       : NULL;
}

enum ts_runtime_family ts_runtime_family_of_container(const char *root, const char *container_id)
{
	char path[PATH_MAX];
	struct stat st;

	if (root == NULL || container_id == NULL || container_id[0] == '\0' ||
	    strchr(container_id, '/') != NULL || strcmp(container_id, ".") == 0 ||
	    strcmp(container_id, "..") == 0)
		return TS_RUNTIME_FAMILY_UNKNOWN;
	/* runc first, as before */
	for (int f = TS_RUNTIME_FAMILY_RUNC; f < _TS_RUNTIME_FAMILY_MAX; f++)
		if (snprintf(path, sizeof(path), "%s/%s/%s", root, container_id,
			     ts_runtime_family_state_file((enum ts_runtime_family)f)) <
			    (int)sizeof(path) &&
		    lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			return (enum ts_runtime_family)f;
	return TS_RUNTIME_FAMILY_UNKNOWN;
}

int ts_runtime_family_default_root(enum ts_runtime_family f, const struct ts_runtime_caller *caller,
				   char **ret)
{
	struct ts_runtime_caller self;
	const char *name = ts_runtime_family_name(f);
	bool xdg;

	*ret = NULL;
	if (name == NULL)
		return -EINVAL;
	if (caller == NULL) {
		self = (struct ts_runtime_caller){
			.xdg_runtime_dir = getenv("XDG_RUNTIME_DIR"),
			.euid = geteuid(),
			.user = getenv("USER"),
		};
		self.in_userns = f == TS_RUNTIME_FAMILY_RUNC && self.euid == 0 &&
				 self.xdg_runtime_dir != NULL && self.xdg_runtime_dir[0] != '\0' &&
				 ts_in_user_namespace();
		caller = &self;
	}
	xdg = caller->xdg_runtime_dir != NULL && caller->xdg_runtime_dir[0] != '\0';
	if (xdg && f == TS_RUNTIME_FAMILY_RUNC)
		xdg = ts_rootless_caller(caller->euid, caller->in_userns, caller->user);
	if (xdg ? asprintf(ret, "%s/%s", caller->xdg_runtime_dir, name) < 0
		: asprintf(ret, "/run/%s", name) < 0) {
		*ret = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* Parse the kernel's cpu list ("0-3,8\n") into set (of setsize bytes).
 * @return 0; -EINVAL on anything else or a CPU beyond the set. */
static int ts_runtime_cpulist_to_set(const char *s, cpu_set_t *set, size_t setsize)
{
	const char *p = s;

	CPU_ZERO_S(setsize, set);
	while (*p != '\0' && *p != '\n') {
		unsigned long lo, hi;
		char *end;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = strtoul(p, &end, 10);
		hi = lo;
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return -EINVAL;
			hi = strtoul(end + 1, &end, 10);
		}
		if (hi < lo || hi >= setsize * 8)
			return -EINVAL;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET_S(c, setsize, set);
		p = end;
		if (*p == ',')
			p++;
		else if (*p != '\0' && *p != '\n')
			return -EINVAL;
	}
	return CPU_COUNT_S(setsize, set) > 0 ? 0 : -EINVAL;
}

int ts_runtime_reset_affinity(const char *online_path, struct ts_error **err)
{
	cleanup_free char *text = NULL;
	const char *path = online_path != NULL ? online_path : TS_RUNTIME_CPUS_ONLINE;
	cpu_set_t *set;
	size_t len = 0, setsize;
	int r;

	r = ts_read_file_at(AT_FDCWD, path, 4096, &text, &len, err);
	if (r < 0)
		return r;
	/* Linux's NR_CPUS is at most 8192 (x86_64 MAXSMP) */
	setsize = CPU_ALLOC_SIZE(8192);
	set = CPU_ALLOC(8192);
	if (set == NULL)
		return ts_error_set(err, ENOMEM, "cannot set the CPU affinity");
	r = ts_runtime_cpulist_to_set(text, set, setsize);
	if (r < 0) {
		CPU_FREE(set);
		text[strcspn(text, "\n")] = '\0';
		return ts_error_set(err, 0, "%s: invalid cpu list '%.64s'", path, text);
	}
	r = sched_setaffinity(0, setsize, set) < 0 ? -errno : 0;
	CPU_FREE(set);
	if (r < 0) {
		text[strcspn(text, "\n")] = '\0';
		return ts_error_set(err, -r, "cannot set the CPU affinity to '%.64s'", text);
	}
	return 0;
}
