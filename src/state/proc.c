/* proc.c - is a container still there?  procfs and runtime state dirs; see state.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state/internal.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/testpoint.h"
#include "util/fileio.h"
#include "util/text.h"

/* /proc/<pid>/stat and /cgroup are short; anything bigger is not procfs */
#define PROC_FILE_MAX_BYTES 65536u

/* /proc/<pid>/stat is one line of at most about 700 bytes (comm is 16,
 * 52 numeric fields); procfs hands it over in one read */
#define PROC_STAT_MAX_BYTES 2048u

int ts_state_proc_start_ticks(const char *proc_root, pid_t pid, uint64_t *ret_ticks,
			      bool *ret_alive, struct ts_error **err)
{
	/* Three system calls and no allocation: every create and delete asks
	 * this of every live record (the collection, the shared pool's
	 * settle); ts_read_file_at() was five (fstat, a read to see EOF) and
	 * two mallocs (issue 15). */
	char path[PATH_MAX], buf[PROC_STAT_MAX_BYTES];
	cleanup_close int fd = -EBADF;
	char *p, *end;
	char state_char = 0;
	unsigned long long ticks;
	size_t len = 0;
	int n;

	n = snprintf(path, sizeof(path), "%s/%d/stat", proc_root ? proc_root : "/proc", (int)pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return ts_error_set(err, ENAMETOOLONG, "%s/%d/stat: cannot open",
				    proc_root ? proc_root : "/proc", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ts_error_set(err, errno, "%s: cannot open", path);
	/* one read returns the whole line; a file that is not procfs may
	 * need more, and ends at EOF or the first newline */
	while (len < sizeof(buf) - 1) {
		ssize_t got = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return ts_error_set(err, errno, "%s: cannot read", path);
		if (got == 0)
			break;
		len += (size_t)got;
		if (memchr(buf + len - (size_t)got, '\n', (size_t)got) != NULL)
			break;
	}
	buf[len] = '\0';
	if (len == sizeof(buf) - 1 && memchr(buf, '\n', len) == NULL)
		goto bad; /* not procfs */
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

/* An id that is not a single path component has no dir of its own. */
static bool has_own_dir(const struct ts_alloc *a)
{
	return a->runtime_root != NULL && a->runtime_root[0] != '\0' &&
	       strchr(a->container_id, '/') == NULL && strcmp(a->container_id, ".") != 0 &&
	       strcmp(a->container_id, "..") != 0;
}

/* 1: the runtime still keeps state of the container; 0: it does not;
 * -1: cannot tell. */
static int runtime_dir_exists(const struct ts_alloc *a)
{
	char path[PATH_MAX];
	size_t root_len, id_len;
	struct stat st;

	if (!has_own_dir(a))
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

/* The file a runtime of a known family writes in <root>/<id> before its
 * create returns (runc: state.json, crun: status), told by the recorded
 * runtime's name (ts_runtime_family_of_path()); NULL for another runtime,
 * whose layout toposhim does not know. */
static const char *state_file_of(const struct ts_alloc *a)
{
	return ts_runtime_family_state_file(ts_runtime_family_of_path(a->runtime_path));
}

/* 1: <root>/<id> of a runc or crun record lacks the runtime's state file:
 * the create that made the dir died before the runtime wrote it (a killed
 * runc leaves exec.fifo alone), and the runtime itself says the container
 * does not exist.  0: it has it, the runtime is another, or nothing can be
 * told (kept, as when in doubt). */
static int dir_without_state(const struct ts_alloc *a)
{
	const char *file = state_file_of(a);
	char path[PATH_MAX];
	struct stat st;

	if (file == NULL || !has_own_dir(a) ||
	    snprintf(path, sizeof(path), "%s/%s/%s", a->runtime_root, a->container_id, file) >=
		    (int)sizeof(path))
		return 0;
	return lstat(path, &st) < 0 && errno == ENOENT ? 1 : 0;
}

/* A runtime root holding this many records to look up is listed once
 * rather than stat'ed for each: one getdents64 returns ~400 entries of
 * 64-character ids, a stat costs one path walk (1.7 us here); below it
 * the open and the sort cost more than they save. */
#define LISTING_MIN_RECORDS 16

/* The entries of one runtime root, sorted by name: each name is kept in
 * one buffer after a byte that says what it is ('d' a directory, '?' a
 * symlink or of unknown type: stat it, '-' anything else). */
struct listing {
	const char *root; /* borrowed from the records */
	char *names;	  /* "<type><name>\0" one after the other */
	size_t *at;	  /* offsets into names, sorted by name */
	size_t n;
	bool failed; /* could not be read: ask each record by stat */
};

static int listing_cmp(const void *x, const void *y, void *names)
{
	return strcmp((const char *)names + *(const size_t *)x + 1,
		      (const char *)names + *(const size_t *)y + 1);
}

static void listing_read(struct listing *l)
{
	size_t len = 0, cap = 0, cap_at = 0;
	struct dirent *e;
	DIR *d = opendir(l->root);

	if (d == NULL) {
		/* a root that is gone holds no container's dir */
		l->failed = errno != ENOENT && errno != ENOTDIR;
		return;
	}
	while ((errno = 0, e = readdir(d)) != NULL) {
		size_t name_len = strlen(e->d_name);

		if (e->d_name[0] == '.' &&
		    (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
			continue;
		if (len + name_len + 2 > cap) {
			size_t want = cap > 0 ? cap * 2 : 16384;
			char *grown;

			while (want < len + name_len + 2)
				want *= 2;
			grown = realloc(l->names, want);
			if (grown == NULL)
				goto fail;
			l->names = grown;
			cap = want;
		}
		if (l->n == cap_at) {
			size_t *grown =
				reallocarray(l->at, cap_at > 0 ? cap_at * 2 : 256, sizeof(*l->at));

			if (grown == NULL)
				goto fail;
			l->at = grown;
			cap_at = cap_at > 0 ? cap_at * 2 : 256;
		}
		l->at[l->n++] = len;
		l->names[len] = e->d_type == DT_DIR				 ? 'd'
				: e->d_type == DT_LNK || e->d_type == DT_UNKNOWN ? '?'
										 : '-';
		memcpy(l->names + len + 1, e->d_name, name_len + 1);
		len += name_len + 2;
	}
	if (errno != 0)
		goto fail;
	closedir(d);
	if (l->n > 1)
		qsort_r(l->at, l->n, sizeof(*l->at), listing_cmp, l->names);
	return;
fail:
	closedir(d);
	l->failed = true;
}

/* runtime_dir_exists() answered from the listing of a's root. */
static int listing_has_dir(const struct listing *l, const struct ts_alloc *a)
{
	size_t lo = 0, hi = l->n;

	if (l->failed || !has_own_dir(a))
		return runtime_dir_exists(a);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *entry = l->names + l->at[mid];
		int c = strcmp(a->container_id, entry + 1);

		if (c == 0)
			return entry[0] == 'd' ? 1 : entry[0] == '-' ? 0 : runtime_dir_exists(a);
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
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

/* What the process alone says of a record. */
enum verdict { KEEP, STALE, ASK_DIR };

static enum verdict by_process(const char *proc_root, const struct ts_alloc *a)
{
	/* The init (learned from the runtime's state, or recorded by the
	 * createRuntime hook) is gone: the container has exited, and what it
	 * held is free although its runtime state stays until the engine's
	 * delete (kubelet keeps exited containers). */
	if (a->status == TS_ALLOC_CREATED && a->pid > 0)
		return init_alive(proc_root, a) == 0 ? STALE : KEEP;
	if (a->pid > 0 && init_alive(proc_root, a) != 0)
		return KEEP;
	return ASK_DIR;
}

/* What the runtime dir says (dir: runtime_dir_exists()'s answer). */
static bool stale_by_dir(const struct ts_alloc *a, int dir, uint64_t now_usec, uint64_t grace_usec)
{
	if (dir != 0)
		return false;
	if (a->pid > 0)
		return true;
	/* no pid yet: a create still running, or one that died before the
	 * createRuntime hook; a clock step backwards keeps the record */
	return now_usec >= a->created_usec && now_usec - a->created_usec > grace_usec;
}

int ts_state_mark_stale(const char *proc_root, const struct ts_alloc *const *v, size_t n,
			uint64_t now_usec, uint64_t grace_usec, bool *ret_stale)
{
	enum verdict one[1];
	cleanup_free enum verdict *many = NULL;
	cleanup_free struct listing *listings = NULL;
	enum verdict *verdict = one;
	size_t n_ask = 0, n_listings = 0;

	if (n > 1) {
		verdict = many = calloc(n, sizeof(*verdict));
		if (verdict == NULL)
			return -ENOMEM;
	}
	/* The processes first, the runtime dirs second.  Until the create
	 * (the recorded pid: toposhim exec'd into the runtime) ends, the
	 * runtime may still make <root>/<id>; once it is seen gone, whatever
	 * it made is there to be seen.  Checking the dir first lost live
	 * containers: the dir was looked for just before the runtime made it,
	 * and the process was gone when looked for just after (issue 17).
	 * So every process is looked at before any dir (a root's listing is
	 * one look at all its dirs). */
	for (size_t i = 0; i < n; i++) {
		verdict[i] = by_process(proc_root, v[i]);
		n_ask += verdict[i] == ASK_DIR;
	}
	if (n_ask > 0)
		ts_test_point("gc-between-pid-and-dir");
	if (n_ask >= LISTING_MIN_RECORDS) {
		listings = calloc(n_ask, sizeof(*listings));
		if (listings == NULL)
			return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ts_alloc *a = v[i];
		struct listing *l = NULL;
		int dir;

		ret_stale[i] = verdict[i] == STALE;
		if (verdict[i] != ASK_DIR)
			continue;
		for (size_t k = 0; listings != NULL && has_own_dir(a) && k < n_listings; k++)
			if (strcmp(listings[k].root, a->runtime_root) == 0)
				l = &listings[k];
		if (l == NULL && listings != NULL && has_own_dir(a)) {
			size_t same = 0;

			for (size_t j = i; j < n && same < LISTING_MIN_RECORDS; j++)
				same += verdict[j] == ASK_DIR && v[j]->runtime_root != NULL &&
					strcmp(v[j]->runtime_root, a->runtime_root) == 0;
			if (same >= LISTING_MIN_RECORDS) {
				l = &listings[n_listings++];
				l->root = a->runtime_root;
				listing_read(l);
			}
		}
		dir = l != NULL ? listing_has_dir(l, a) : runtime_dir_exists(a);
		/* a dir whose runtime keeps no state in it holds no container */
		if (dir == 1 && dir_without_state(a) == 1)
			dir = 0;
		ret_stale[i] = stale_by_dir(a, dir, now_usec, grace_usec);
	}
	for (size_t k = 0; k < n_listings; k++) {
		free(listings[k].names);
		free(listings[k].at);
	}
	return 0;
}

bool ts_state_alloc_is_stale(const char *proc_root, const struct ts_alloc *a, uint64_t now_usec,
			     uint64_t grace_usec)
{
	const struct ts_alloc *const v[1] = {a};
	bool stale = false;

	/* one record needs no memory: never -ENOMEM */
	(void)ts_state_mark_stale(proc_root, v, 1, now_usec, grace_usec, &stale);
	return stale;
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
			 * with no init known; it lives as long as its dir does.
			 * runc's or crun's dir without its state file is a create
			 * that died: it stays "creating", and is collected. */
			if (a->pid > 0 && init_alive(s->proc_root, a) == 0 &&
			    runtime_dir_exists(a) == 1 && dir_without_state(a) == 0) {
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
	if (learned > 0)
		s->dirty = true; /* (each changed record's text_len is 0) */
	return learned;
}
