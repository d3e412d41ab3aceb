/*
 * cgroup.c - a cgroup of its own for each plugin run: memory and pids
 * limits, and a kill of everything in it when the plugin ends, so that no
 * child outlives it (a setsid(1) child leaves the process group, never the
 * cgroup; a plugin without root or a writable cgroupfs cannot move out).
 *
 * Where (Linux Documentation/admin-guide/cgroup-v2.rst, cgroup-v1/):
 *   unified  /sys/fs/cgroup/toposhim-plugins/<id>: memory.max,
 *            memory.swap.max 0, pids.max (the controllers are enabled in
 *            the root's and toposhim-plugins' cgroup.subtree_control);
 *   hybrid   /sys/fs/cgroup/unified/toposhim-plugins/<id> (cgroup2, to
 *            hold and kill), /sys/fs/cgroup/memory/toposhim-plugins/<id>
 *            (memory.limit_in_bytes, memory.memsw.limit_in_bytes) and
 *            /sys/fs/cgroup/pids/toposhim-plugins/<id> (pids.max);
 *   legacy   the two v1 ones.
 * A controller the host lacks (no v1 hierarchy, absent from the cgroup2
 * root's cgroup.controllers) is a limit not applied.  The kill writes
 * cgroup.kill (Linux 5.14) where there is a cgroup2 directory, and else
 * sends SIGKILL to every pid of cgroup.procs until it reads empty (the pids
 * limit bounds a fork race).  <id> is "<toposhim pid>.<monotonic ns>"; the
 * directories of a toposhim that died are swept (members killed, removed)
 * by the next run.  The real /sys/fs/cgroup is used whatever
 * TOPOSHIM_CGROUP_ROOT says: a fake tree cannot hold processes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "plugin/internal.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define CG_ROOT TS_CGROUP_ROOT_DEFAULT
#define CG_PARENT "toposhim-plugins"
/* How long a run waits for its cgroup to empty after the kill. */
#define EMPTY_WAIT_MS 2000
/* Rounds of the kill loop without cgroup.kill. */
#define KILL_ROUNDS 200

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static int write_str(const char *dir, const char *file, const char *value, struct ts_error **err)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -EBADF;
	size_t len = strlen(value);

	if (asprintf(&path, "%s/%s", dir, file) < 0)
		return ts_error_set(err, ENOMEM, "cannot sandbox: cgroup");
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || write(fd, value, len) != (ssize_t)len)
		return ts_error_set(err, errno, "cannot sandbox: cgroup: %s: cannot write '%s'",
				    path, value);
	return 0;
}

static int write_u64(const char *dir, const char *file, uint64_t v, struct ts_error **err)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	return write_str(dir, file, buf, err);
}

/* Whether the word w is in the space-separated list of file path. */
static bool listed(const char *path, const char *w)
{
	cleanup_free char *text = NULL;
	cleanup_error struct ts_error *ignored = NULL;
	size_t len, lw = strlen(w);

	if (ts_read_file_at(AT_FDCWD, path, 4096, &text, &len, &ignored) < 0)
		return false;
	for (char *p = text; (p = strstr(p, w)) != NULL; p += lw) {
		if ((p == text || p[-1] == ' ') && (p[lw] == '\0' || p[lw] == ' ' || p[lw] == '\n'))
			return true;
	}
	return false;
}

/* The pids listed in dir/cgroup.procs; *ret_n of them, malloc'd. */
static int read_pids(const char *dir, pid_t **ret, size_t *ret_n)
{
	cleanup_free char *path = NULL, *text = NULL;
	cleanup_error struct ts_error *ignored = NULL;
	pid_t *v = NULL;
	size_t len, n = 0;

	if (asprintf(&path, "%s/cgroup.procs", dir) < 0)
		return -ENOMEM;
	if (ts_read_file_at(AT_FDCWD, path, 1024 * 1024, &text, &len, &ignored) < 0)
		return ts_error_code(ignored);
	for (char *p = text, *end; *p != '\0'; p = end) {
		long pid = strtol(p, &end, 10);
		pid_t *nv;

		if (end == p)
			break;
		nv = reallocarray(v, n + 1, sizeof(*v));
		if (nv == NULL) {
			free(v);
			return -ENOMEM;
		}
		v = nv;
		v[n++] = (pid_t)pid;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* Kill every member of the cgroup at dir (cgroup.kill when it has one). */
static void kill_members(const char *dir)
{
	cleanup_free char *kill_file = NULL;

	if (asprintf(&kill_file, "%s/cgroup.kill", dir) >= 0 && exists(kill_file)) {
		cleanup_error struct ts_error *ignored = NULL;

		if (write_str(dir, "cgroup.kill", "1", &ignored) >= 0)
			return;
	}
	for (int round = 0; round < KILL_ROUNDS; round++) {
		cleanup_free pid_t *pids = NULL;
		size_t n = 0;

		if (read_pids(dir, &pids, &n) < 0 || n == 0)
			return;
		for (size_t i = 0; i < n; i++)
			(void)kill(pids[i], SIGKILL);
	}
}

static bool empty(const char *dir)
{
	cleanup_free pid_t *pids = NULL;
	size_t n = 0;

	return read_pids(dir, &pids, &n) < 0 || n == 0;
}

/* Kill, wait for the members to be gone, remove. */
static void remove_dir(const char *dir)
{
	for (int ms = 0; ms < EMPTY_WAIT_MS; ms += 5) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return;
		kill_members(dir);
		if (empty(dir) && rmdir(dir) == 0)
			return;
		usleep(5000);
	}
	/* Left for the sweep of a later run; nothing of the plugin's is
	 * known to run (or it would be killed again there). */
}

/* The directories of toposhim-plugins/ under base whose toposhim is gone. */
static void sweep(const char *base)
{
	cleanup_closedir DIR *d = opendir(base);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		cleanup_free char *dir = NULL;
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (end == e->d_name || *end != '.' || pid <= 0 || pid == getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (asprintf(&dir, "%s/%s", base, e->d_name) < 0)
			return;
		kill_members(dir);
		(void)rmdir(dir);
	}
}

/* Create base/CG_PARENT/name; on success it is appended to cg. */
static int make_dir(struct ts_plugin_cgroup *cg, const char *base, const char *name,
		    struct ts_error **err)
{
	cleanup_free char *parent = NULL, *dir = NULL;

	if (cg->n >= TS_PLUGIN_CGROUP_DIRS_MAX || asprintf(&parent, "%s/" CG_PARENT, base) < 0 ||
	    asprintf(&dir, "%s/%s", parent, name) < 0)
		return ts_error_set(err, ENOMEM, "cannot sandbox: cgroup");
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return ts_error_set(err, errno, "cannot sandbox: cgroup: cannot create %s", parent);
	sweep(parent);
	if (mkdir(dir, 0755) < 0)
		return ts_error_set(err, errno, "cannot sandbox: cgroup: cannot create %s", dir);
	cg->dirs[cg->n] = TAKE_PTR(dir);
	cg->procs_fds[cg->n] = -EBADF;
	cg->n++;
	return 0;
}

/* Enable controller (memory, pids) for the children of CG_ROOT/CG_PARENT
 * on cgroup2 when the host has it; false when it has not. */
static int v2_enable(const char *controller, bool *ret_has, struct ts_error **err)
{
	char word[32];
	int r;

	*ret_has = listed(CG_ROOT "/cgroup.controllers", controller);
	if (!*ret_has)
		return 0;
	snprintf(word, sizeof(word), "+%s", controller);
	if (!listed(CG_ROOT "/cgroup.subtree_control", controller)) {
		r = write_str(CG_ROOT, "cgroup.subtree_control", word, err);
		if (r < 0)
			return r;
	}
	if (listed(CG_ROOT "/" CG_PARENT "/cgroup.subtree_control", controller))
		return 0;
	return write_str(CG_ROOT "/" CG_PARENT, "cgroup.subtree_control", word, err);
}

static int setup_unified(struct ts_plugin_cgroup *cg, const struct ts_plugin_sandbox *s,
			 const char *name, struct ts_error **err)
{
	bool memory = false, pids = false;
	const char *dir;
	int r;

	r = make_dir(cg, CG_ROOT, name, err);
	if (r >= 0)
		r = v2_enable("memory", &memory, err);
	if (r >= 0)
		r = v2_enable("pids", &pids, err);
	if (r < 0)
		return r;
	dir = cg->dirs[cg->n - 1];
	cg->track = dir;
	if (memory) {
		r = write_u64(dir, "memory.max", s->memory_max_bytes, err);
		if (r >= 0 && exists(CG_ROOT "/" CG_PARENT "/memory.swap.max"))
			r = write_str(dir, "memory.swap.max", "0", err);
	}
	if (r >= 0 && pids)
		r = write_u64(dir, "pids.max", s->pids_max, err);
	return r;
}

static int setup_v1(struct ts_plugin_cgroup *cg, const struct ts_plugin_sandbox *s,
		    const char *name, struct ts_error **err)
{
	int r = 0;

	if (exists(CG_ROOT "/memory/cgroup.procs")) {
		char *dir;

		r = make_dir(cg, CG_ROOT "/memory", name, err);
		if (r < 0)
			return r;
		dir = cg->dirs[cg->n - 1];
		if (cg->track == NULL)
			cg->track = dir;
		r = write_u64(dir, "memory.limit_in_bytes", s->memory_max_bytes, err);
		/* memory plus swap: the same bound, so nothing goes to swap */
		if (r >= 0 && exists(CG_ROOT "/memory/memory.memsw.limit_in_bytes"))
			r = write_u64(dir, "memory.memsw.limit_in_bytes", s->memory_max_bytes, err);
		if (r < 0)
			return r;
	}
	if (exists(CG_ROOT "/pids/cgroup.procs")) {
		r = make_dir(cg, CG_ROOT "/pids", name, err);
		if (r < 0)
			return r;
		/* the pids cgroup holds every member; the kill loop reads it */
		cg->track = cg->dirs[cg->n - 1];
		r = write_u64(cg->track, "pids.max", s->pids_max, err);
	}
	return r;
}

static int open_procs(struct ts_plugin_cgroup *cg, struct ts_error **err)
{
	for (size_t i = 0; i < cg->n; i++) {
		cleanup_free char *path = NULL;

		if (asprintf(&path, "%s/cgroup.procs", cg->dirs[i]) < 0)
			return ts_error_set(err, ENOMEM, "cannot sandbox: cgroup");
		cg->procs_fds[i] = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (cg->procs_fds[i] < 0)
			return ts_error_set(err, errno, "cannot sandbox: cgroup: cannot open %s",
					    path);
	}
	return 0;
}

int ts_plugin_cgroup_create(const struct ts_plugin_sandbox *s, struct ts_plugin_cgroup *ret,
			    struct ts_error **err)
{
	struct ts_plugin_cgroup cg = {0};
	enum ts_cgroup_mode mode;
	struct timespec ts;
	char name[64];
	int r;

	if (geteuid() != 0) {
		/* Creating cgroups needs root; the plugin has our rights only. */
		*ret = cg;
		return 0;
	}
	r = ts_cgroup_detect_mode(CG_ROOT, &mode, err);
	if (r < 0)
		return ts_error_prefix(err, "cannot sandbox: cgroup");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(name, sizeof(name), "%d.%lld%09ld", (int)getpid(), (long long)ts.tv_sec,
		 ts.tv_nsec);
	if (mode == TS_CGROUP_MODE_UNIFIED) {
		r = setup_unified(&cg, s, name, err);
	} else {
		if (mode == TS_CGROUP_MODE_HYBRID)
			r = make_dir(&cg, CG_ROOT "/unified", name, err);
		if (r >= 0)
			r = setup_v1(&cg, s, name, err);
		/* the cgroup2 directory, where there is one, kills best */
		if (r >= 0 && mode == TS_CGROUP_MODE_HYBRID)
			cg.track = cg.dirs[0];
	}
	if (r >= 0 && cg.n == 0)
		r = ts_error_set(err, ENOENT, "cannot sandbox: cgroup: no hierarchy under %s",
				 CG_ROOT);
	if (r >= 0)
		r = open_procs(&cg, err);
	if (r < 0) {
		ts_plugin_cgroup_destroy(&cg);
		return r;
	}
	*ret = cg;
	return 0;
}

int ts_plugin_cgroup_join(const struct ts_plugin_cgroup *cg, const char **ret_arg)
{
	for (size_t i = 0; i < cg->n; i++) {
		/* "0": the writer itself (cgroup-v2.rst "cgroup.procs") */
		if (write(cg->procs_fds[i], "0", 1) != 1) {
			*ret_arg = cg->dirs[i];
			return -errno;
		}
		(void)close(cg->procs_fds[i]);
	}
	return 0;
}

void ts_plugin_cgroup_kill(const struct ts_plugin_cgroup *cg)
{
	if (cg->track != NULL)
		kill_members(cg->track);
}

void ts_plugin_cgroup_destroy(struct ts_plugin_cgroup *cg)
{
	if (cg == NULL)
		return;
	ts_plugin_cgroup_kill(cg);
	/* The tracking directory first: it empties when the kill is done. */
	for (size_t i = 0; i < cg->n; i++)
		if (cg->dirs[i] == cg->track)
			remove_dir(cg->dirs[i]);
	for (size_t i = 0; i < cg->n; i++) {
		if (cg->dirs[i] != cg->track)
			remove_dir(cg->dirs[i]);
		if (cg->procs_fds[i] >= 0)
			(void)close(cg->procs_fds[i]);
		free(cg->dirs[i]);
	}
	*cg = (struct ts_plugin_cgroup){0};
}
