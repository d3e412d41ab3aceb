/* proc.c - is a container still there?  procfs and runtime state dirs; see state.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "state/internal.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/testpoint.h"
#include "util/fileio.h"

/* /proc/<pid>/stat and /cgroup are short; anything bigger is not procfs */
#define PROC_FILE_MAX_BYTES 65536u

int ts_state_proc_start_ticks(const char *proc_root, pid_t pid, uint64_t *ret_ticks,
			      bool *ret_alive, struct ts_error **err)
{
	cleanup_free char *path = NULL;
	cleanup_free char *buf = NULL;
	char *p, *end;
	char state_char = 0;
	unsigned long long ticks;
	int r;

	if (asprintf(&path, "%s/%d/stat", proc_root ? proc_root : "/proc", (int)pid) < 0)
		return ts_error_set(err, ENOMEM, "/proc/%d/stat: cannot read", (int)pid);
	r = ts_read_file_at(AT_FDCWD, path, PROC_FILE_MAX_BYTES, &buf, NULL, err);
	if (r < 0)
		return r;
	/* comm (field 2) may hold spaces and ')': the last ')' ends it */
	p = strrchr(buf, ')');
	if (p == NULL)
		goto bad;
	p++;
	for (int field = 3; field <= 22; field++) {
		size_t skip = strspn(p, " ");

		if (skip == 0 || p[skip] == '\0' || p[skip] == '\n')
			goto bad;
		p += skip;
		if (field == 3)
			state_char = *p;
		if (field < 22)
			p += strcspn(p, " \n");
	}
	if (*p < '0' || *p > '9')
		goto bad;
	errno = 0;
	ticks = strtoull(p, &end, 10);
	if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0'))
		goto bad;
	*ret_ticks = ticks;
	if (ret_alive != NULL)
		*ret_alive = state_char != 'Z' && state_char != 'X' && state_char != 'x';
	return 0;
bad:
	buf[strcspn(buf, "\n")] = '\0';
	return ts_error_set(err, 0, "%s: cannot parse '%s'", path, buf);
}

int ts_state_proc_cgroup(const char *proc_root, pid_t pid, char **ret_path, struct ts_error **err)
{
	cleanup_free char *path = NULL;
	cleanup_free char *buf = NULL;
	const char *v2 = NULL, *cpuset = NULL;
	char *line, *save = NULL;
	char *found;
	int r;

	if (asprintf(&path, "%s/%d/cgroup", proc_root ? proc_root : "/proc", (int)pid) < 0)
		return ts_error_set(err, ENOMEM, "/proc/%d/cgroup: cannot read", (int)pid);
	r = ts_read_file_at(AT_FDCWD, path, PROC_FILE_MAX_BYTES, &buf, NULL, err);
	if (r < 0)
		return r;
	/* "hierarchy-id:controller,controller:path"; the path may hold ':' */
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (c2 == NULL)
			continue;
		*c1 = '\0';
		*c2 = '\0';
		if (strcmp(line, "0") == 0 && c1[1] == '\0') {
			v2 = c2 + 1;
			continue;
		}
		for (char *tok_save = NULL, *ctl = strtok_r(c1 + 1, ",", &tok_save); ctl != NULL;
		     ctl = strtok_r(NULL, ",", &tok_save))
			if (strcmp(ctl, "cpuset") == 0)
				cpuset = c2 + 1;
	}
	if (cpuset == NULL && v2 == NULL)
		return ts_error_set(err, ENODATA, "%s: no cpuset or '0::' line", path);
	found = strdup(cpuset ? cpuset : v2);
	if (found == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot read", path);
	*ret_path = found;
	return 0;
}

/* 1: the runtime still keeps state of the container; 0: it does not;
 * -1: cannot tell. */
static int runtime_dir_exists(const struct ts_alloc *a)
{
	char path[PATH_MAX];
	size_t root_len, id_len;
	struct stat st;

	if (a->runtime_root == NULL || a->runtime_root[0] == '\0')
		return 0;
	/* an id that is not a single path component has no dir of its own */
	if (strchr(a->container_id, '/') != NULL || strcmp(a->container_id, ".") == 0 ||
	    strcmp(a->container_id, "..") == 0)
		return 0;
	/* on the stack: the collection asks this of every record at every
	 * create (asprintf was 0.3 M instructions at 500 records) */
	root_len = strlen(a->runtime_root);
	id_len = strlen(a->container_id);
	if (root_len + 1 + id_len >= sizeof(path))
		return -1;
	memcpy(path, a->runtime_root, root_len);
	path[root_len] = '/';
	memcpy(path + root_len + 1, a->container_id, id_len + 1);
	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? 1 : 0;
	return errno == ENOENT || errno == ENOTDIR ? 0 : -1;
}

/* 1: the recorded process runs (same start time); 0: it is gone or the pid
 * was recycled; -1: cannot tell. */
static int init_alive(const char *proc_root, const struct ts_alloc *a)
{
	cleanup_error struct ts_error *err = NULL;
	uint64_t ticks = 0;
	bool alive = false;
	int r;

	r = ts_state_proc_start_ticks(proc_root, a->pid, &ticks, &alive, &err);
	if (r == -ENOENT || r == -ESRCH)
		return 0;
	if (r < 0)
		return -1;
	return alive && ticks == a->pid_start_ticks ? 1 : 0;
}

bool ts_state_alloc_is_stale(const char *proc_root, const struct ts_alloc *a, uint64_t now_usec,
			     uint64_t grace_usec)
{
	/* The process first, its runtime dir second.  Until the create (the
	 * recorded pid: toposhim exec'd into the runtime) ends, the runtime
	 * may still make <root>/<id>; once it is seen gone, whatever it made
	 * is there to be seen.  Checking the dir first lost live containers:
	 * the dir was looked for just before the runtime made it, and the
	 * process was gone when looked for just after (issue 17). */
	/* The init (learned from the runtime's state, or recorded by the
	 * createRuntime hook) is gone: the container has exited, and what it
	 * held is free although its runtime state stays until the engine's
	 * delete (kubelet keeps exited containers). */
	if (a->status == TS_ALLOC_CREATED && a->pid > 0)
		return init_alive(proc_root, a) == 0;
	if (a->pid > 0 && init_alive(proc_root, a) != 0)
		return false;
	ts_test_point("gc-between-pid-and-dir");
	if (runtime_dir_exists(a) != 0)
		return false;
	if (a->pid > 0)
		return true;
	/* no pid yet: a create still running, or one that died before the
	 * createRuntime hook; a clock step backwards keeps the record */
	return now_usec >= a->created_usec && now_usec - a->created_usec > grace_usec;
}

size_t ts_state_learn_inits(struct ts_state *s)
{
	size_t learned = 0;

	for (size_t i = 0; i < s->n_allocs; i++) {
		struct ts_alloc *a = s->allocs[i];
		cleanup_error struct ts_error *ignored = NULL;
		char *cgroup = NULL;
		uint64_t start = 0;
		pid_t pid = 0;

		if (a->status != TS_ALLOC_CREATING)
			continue;
		if (ts_state_runtime_init(a->runtime_root, a->container_id, &pid, &start, NULL) !=
		    1) {
			/* The create is over and left a runtime dir without a state
			 * toposhim can read (another runtime's layout): created,
			 * with no init known; it lives as long as its dir does. */
			if (a->pid > 0 && init_alive(s->proc_root, a) == 0 &&
			    runtime_dir_exists(a) == 1) {
				a->pid = 0;
				a->pid_start_ticks = 0;
				a->status = TS_ALLOC_CREATED;
				a->text_len = 0; /* its text in the file is stale */
				learned++;
			}
			continue;
		}
		/* gone already (a short-lived init): no cgroup, stale at once */
		if (ts_state_proc_cgroup(s->proc_root, pid, &cgroup, &ignored) < 0)
			cgroup = NULL;
		free(a->cgroup_path);
		a->cgroup_path = cgroup;
		a->pid = pid;
		a->pid_start_ticks = start;
		a->status = TS_ALLOC_CREATED;
		a->text_len = 0;
		learned++;
	}
	if (learned > 0) {
		s->dirty = true;
		s->sum.n = 0; /* records changed in place */
	}
	return learned;
}
