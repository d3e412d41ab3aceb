/* state.c - the locked allocation store; see state.h. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci/json.h"
#include "oci/spec.h"
#include "state/internal.h"
#include "state/plain.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/testpoint.h"
#include "util/text.h"

static const char *const status_names[_TS_ALLOC_STATUS_MAX] = {
	[TS_ALLOC_CREATING] = "creating",
	[TS_ALLOC_CREATED] = "created",
};

const char *ts_alloc_status_to_string(enum ts_alloc_status s)
{
	if (s < 0 || s >= _TS_ALLOC_STATUS_MAX)
		return NULL;
	return status_names[s];
}

enum ts_alloc_status ts_alloc_status_from_string(const char *s)
{
	for (int i = 0; s != NULL && i < _TS_ALLOC_STATUS_MAX; i++)
		if (strcmp(status_names[i], s) == 0)
			return (enum ts_alloc_status)i;
	return TS_ALLOC_STATUS_INVALID;
}

uint64_t ts_state_now_usec(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_REALTIME, &ts); /* cannot fail for CLOCK_REALTIME */
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

struct ts_alloc *ts_alloc_new(const char *container_id, struct ts_error **err)
{
	struct ts_alloc *a;

	if (container_id == NULL || container_id[0] == '\0') {
		ts_error_set(err, 0, "allocation: empty container id");
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL || (a->container_id = strdup(container_id)) == NULL) {
		free(a);
		ts_error_set(err, ENOMEM, "allocation '%s'", container_id);
		return NULL;
	}
	a->status = TS_ALLOC_CREATING;
	a->created_usec = ts_state_now_usec();
	return a;
}

struct ts_alloc *ts_alloc_free(struct ts_alloc *a)
{
	if (a == NULL)
		return NULL;
	free(a->container_id);
	free(a->runtime_root);
	free(a->runtime_path);
	free(a->bundle);
	free(a->class_name);
	free(a->cpus_str);
	free(a->mems_str);
	ts_strv_freep(&a->devices);
	free(a->cgroup_path);
	free(a);
	return NULL;
}

void ts_alloc_array_free(struct ts_alloc **v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		ts_alloc_free(v[i]);
	free(v);
}

/* strdup that maps NULL to NULL; *ok turns false on OOM. */
static char *dup_or_null(const char *s, bool *ok)
{
	char *d;

	if (s == NULL)
		return NULL;
	d = strdup(s);
	if (d == NULL)
		*ok = false;
	return d;
}

struct ts_alloc *ts_alloc_dup(const struct ts_alloc *a)
{
	cleanup_alloc struct ts_alloc *d = NULL;
	bool ok = true;
	size_t n = 0;

	if (a == NULL)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	*d = *a;
	d->text_at = d->text_len = 0; /* a copy is written from its members */
	d->container_id = dup_or_null(a->container_id, &ok);
	d->runtime_root = dup_or_null(a->runtime_root, &ok);
	d->runtime_path = dup_or_null(a->runtime_path, &ok);
	d->bundle = dup_or_null(a->bundle, &ok);
	d->class_name = dup_or_null(a->class_name, &ok);
	d->cpus_str = dup_or_null(a->cpus_str, &ok);
	d->mems_str = dup_or_null(a->mems_str, &ok);
	d->cgroup_path = dup_or_null(a->cgroup_path, &ok);
	d->devices = NULL;
	if (a->devices != NULL) {
		while (a->devices[n] != NULL)
			n++;
		d->devices = calloc(n + 1, sizeof(char *));
		if (d->devices == NULL)
			return NULL;
		for (size_t i = 0; i < n; i++)
			d->devices[i] = dup_or_null(a->devices[i], &ok);
	}
	if (!ok)
		return NULL;
	return TAKE_PTR(d);
}

/* runc's rule: not root, or root of a user namespace whose $USER is not "root". */
static bool rootless_caller(void)
{
	uid_t euid = geteuid();

	return ts_rootless_caller(euid, euid == 0 && ts_in_user_namespace(), secure_getenv("USER"));
}

const char *ts_state_dir_resolve(const char *config_state_dir)
{
	/* NEEDSWORK: the one piece of static state here: the rootless default
	 * is composed from the environment, which does not change while we
	 * run (single-threaded; the hooks get the result in their arguments) */
	static char rootless[PATH_MAX];
	const char *env = secure_getenv(TS_STATE_DIR_ENV), *xdg;

	if (env != NULL && env[0] != '\0')
		return env;
	if (config_state_dir != NULL && config_state_dir[0] != '\0')
		return config_state_dir;
	/* not root (runc --rootless), or root of a user namespace (rootless
	 * podman runs its runtime so, without $USER): /run/toposhim is not
	 * ours to write; the user's runtime dir is, as it is the runtimes'
	 * (runc's shouldHonorXDGRuntimeDir()) */
	xdg = secure_getenv("XDG_RUNTIME_DIR");
	if (xdg != NULL && xdg[0] == '/' && rootless_caller() &&
	    (size_t)snprintf(rootless, sizeof(rootless), "%s/toposhim", xdg) < sizeof(rootless))
		return rootless;
	return TS_STATE_DIR_DEFAULT;
}

/* What is stored here decides which CPUs containers get and which cgroups
 * are written: refuse a directory another user could have filled. */
static int check_state_dir(int dir_fd, const char *dir, struct ts_error **err)
{
	struct stat st;

	if (fstat(dir_fd, &st) < 0)
		return ts_error_set(err, errno, "%s: cannot stat state directory", dir);
	if (st.st_uid != geteuid())
		return ts_error_set_plain(err, EPERM, "%s: state directory owned by uid %u, not %u",
					  dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return ts_error_set_plain(err, EPERM,
					  "%s: state directory writable by others (mode %04o)", dir,
					  (unsigned)(st.st_mode & 07777));
	return 0;
}

/* mkdir -p: parents 0755, the last component 0700. */
static int make_state_dir(const char *path, struct ts_error **err)
{
	cleanup_free char *p = strdup(path);

	if (p == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot create state directory", path);
	for (char *slash = strchr(p + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (p[0] != '\0' && mkdir(p, 0755) < 0 && errno != EEXIST)
			return ts_error_set(err, errno, "%s: cannot create state directory", p);
		*slash = '/';
	}
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return ts_error_set(err, errno, "%s: cannot create state directory", path);
	return 0;
}

static void lock_alarm(int sig)
{
	(void)sig; /* only interrupts the flock(2) below */
}

/* Take the exclusive flock on fd, waiting at most timeout_usec.  The wait
 * is a blocking flock(2) that an interval timer interrupts: a waiter is
 * woken the moment the holder lets go (a poll with sleeps in between left
 * waiters asleep while the lock was free, and under churn some waited
 * seconds while others took it again and again).  The process's SIGALRM
 * disposition and timer are put back afterwards. */
static int lock_bounded(int fd, const char *dir, uint64_t timeout_usec, struct ts_error **err)
{
	struct sigaction sa = {.sa_handler = lock_alarm}, old_sa;
	struct itimerval it = {0}, old_it;
	int r = 0, saved;

	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return 0;
	if (errno != EWOULDBLOCK && errno != EINTR)
		return ts_error_set(err, errno, "%s/" TS_STATE_LOCK_FILE ": cannot lock", dir);
	sigemptyset(&sa.sa_mask); /* no SA_RESTART: the timer must interrupt flock */
	if (sigaction(SIGALRM, &sa, &old_sa) < 0)
		return ts_error_set(err, errno, "%s/" TS_STATE_LOCK_FILE ": cannot lock", dir);
	it.it_value.tv_sec = (time_t)(timeout_usec / 1000000u);
	it.it_value.tv_usec = (suseconds_t)(timeout_usec % 1000000u);
	if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
		it.it_value.tv_usec = 1;
	if (setitimer(ITIMER_REAL, &it, &old_it) < 0) {
		r = -errno;
	} else if (flock(fd, LOCK_EX) < 0) {
		r = errno == EINTR ? -ETIMEDOUT : -errno;
	}
	saved = errno;
	(void)setitimer(ITIMER_REAL, &old_it, NULL);
	(void)sigaction(SIGALRM, &old_sa, NULL);
	errno = saved;
	if (r == -ETIMEDOUT)
		return ts_error_set_plain(err, ETIMEDOUT,
					  "%s/" TS_STATE_LOCK_FILE
					  ": still held by another process after %llu ms",
					  dir, (unsigned long long)(timeout_usec / 1000));
	if (r < 0)
		return ts_error_set(err, -r, "%s/" TS_STATE_LOCK_FILE ": cannot lock", dir);
	return 0;
}

int ts_state_open(const struct ts_state_options *opts, struct ts_state **ret, struct ts_error **err)
{
	static const struct ts_state_options defaults;
	cleanup_state struct ts_state *s = NULL;
	const char *dir;
	uint64_t timeout;
	int r;

	if (opts == NULL)
		opts = &defaults;
	dir = ts_state_dir_resolve(opts->state_dir);
	timeout = opts->lock_timeout_usec ? opts->lock_timeout_usec
					  : TS_STATE_LOCK_TIMEOUT_USEC_DEFAULT;
	if (dir[0] != '/')
		return ts_error_set(err, 0, "state directory: not absolute '%s'", dir);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot open state", dir);
	s->dir_fd = -EBADF;
	s->lock_fd = -EBADF;
	s->dir_path = strdup(dir);
	s->proc_root = strdup(opts->proc_root ? opts->proc_root : "/proc");
	if (s->dir_path == NULL || s->proc_root == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot open state", dir);
	if (opts->runtime_root != NULL && opts->runtime_root[0] == '/' &&
	    (s->runtime_root = strdup(opts->runtime_root)) == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot open state", dir);
	if (opts->must_exist) {
		struct stat st;

		if (stat(dir, &st) < 0)
			return ts_error_set(err, errno, "%s: no state directory", dir);
		s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		/* made only when missing: a mkdir(2) per path component each
		 * session was 16 of a delete's 230 system calls */
		s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->dir_fd < 0) {
			/* (its messages, whatever the open's errno) */
			r = make_state_dir(dir, err);
			if (r < 0)
				return r;
			s->dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
	}
	if (s->dir_fd < 0)
		return ts_error_set(err, errno, "%s: cannot open state directory", dir);
	r = check_state_dir(s->dir_fd, dir, err);
	if (r < 0)
		return r;
	s->lock_fd = openat(s->dir_fd, TS_STATE_LOCK_FILE,
			    O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	/* a store on a read-only filesystem is still read under its lock
	 * (flock(2) needs no write access): `toposhimctl alloc list` there
	 * failed (helper-16); a commit then fails, naming the file */
	if (s->lock_fd < 0 && errno == EROFS) {
		s->lock_fd = openat(s->dir_fd, TS_STATE_LOCK_FILE,
				    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
		/* none there: no writer ever locked this store (a read-only
		 * copy, helper-17); the directory stands in for it */
		if (s->lock_fd < 0 && errno == ENOENT)
			s->lock_fd = fcntl(s->dir_fd, F_DUPFD_CLOEXEC, 3);
	}
	if (s->lock_fd < 0)
		return ts_error_set(err, errno, "%s/" TS_STATE_LOCK_FILE ": cannot open lock file",
				    dir);
	r = lock_bounded(s->lock_fd, dir, timeout, err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

static void store_clear(struct ts_state *s)
{
	ts_alloc_array_free(s->allocs, s->n_allocs);
	s->allocs = NULL;
	s->n_allocs = s->cap_allocs = 0;
	s->ids_checked = 0;
	free(s->file_buf);
	s->file_buf = NULL;
	s->file_len = 0;
}

static void load_cache_keep(struct ts_state *s);
static void disk_cache_write(struct ts_state *s, struct ts_alloc *const *v, size_t n,
			     const char *json, size_t json_len, size_t prev_len);

struct ts_state *ts_state_close(struct ts_state *s)
{
	if (s == NULL)
		return NULL;
	load_cache_keep(s);
	store_clear(s);
	/* closing the only fd of the open file description drops the flock */
	ts_closep(&s->lock_fd);
	ts_closep(&s->dir_fd);
	free(s->dir_path);
	free(s->proc_root);
	free(s->runtime_root);
	free(s);
	return NULL;
}

const char *ts_state_dir(const struct ts_state *s)
{
	return s->dir_path;
}

int ts_state_dir_fd(const struct ts_state *s)
{
	return s->dir_fd;
}

int ts_state_mark_at(int dir_fd, struct ts_state_mark *ret)
{
	static const char *const names[] = {TS_STATE_ALLOC_FILE, TS_STATE_RELEASED_FILE,
					    TS_PLAIN_JOURNAL_FILE};
	cleanup_close int fd = -1;
	ssize_t n;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct ts_state_mark_file *f = &ret->files[i];
		struct stat st;

		if (fstatat(dir_fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno != ENOENT)
				return -errno;
			continue;
		}
		f->exists = true;
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->size = st.st_size;
		f->mtime_sec = st.st_mtim.tv_sec;
		f->mtime_nsec = st.st_mtim.tv_nsec;
		f->ctime_sec = st.st_ctim.tv_sec;
		f->ctime_nsec = st.st_ctim.tv_nsec;
	}
	if (!ret->files[0].exists)
		return 0;
	/* the checksum too: two commits within one timestamp tick that swap
	 * the same inode back in at the same size differ there */
	fd = openat(dir_fd, TS_STATE_ALLOC_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) {
		ret->files[0].exists = false;
		return 0;
	}
	if (fd < 0)
		return -errno;
	n = pread(fd, ret->head, sizeof(ret->head), 0);
	if (n < 0)
		return -errno;
	ret->head_len = (size_t)n;
	return 0;
}

bool ts_state_mark_equal(const struct ts_state_mark *a, const struct ts_state_mark *b)
{
	for (size_t i = 0; i < sizeof(a->files) / sizeof(a->files[0]); i++) {
		const struct ts_state_mark_file *x = &a->files[i], *y = &b->files[i];

		if (x->exists != y->exists || x->dev != y->dev || x->ino != y->ino ||
		    x->size != y->size || x->mtime_sec != y->mtime_sec ||
		    x->mtime_nsec != y->mtime_nsec || x->ctime_sec != y->ctime_sec ||
		    x->ctime_nsec != y->ctime_nsec)
			return false;
	}
	return a->head_len == b->head_len && memcmp(a->head, b->head, a->head_len) == 0;
}

const char *ts_state_proc_root(const struct ts_state *s)
{
	return s->proc_root;
}

size_t ts_state_count(const struct ts_state *s)
{
	return s->n_allocs;
}

const struct ts_alloc *ts_state_at(const struct ts_state *s, size_t i)
{
	return i < s->n_allocs ? s->allocs[i] : NULL;
}

bool ts_alloc_is(const struct ts_alloc *a, const char *runtime_root, const char *container_id)
{
	if (a == NULL || container_id == NULL || strcmp(a->container_id, container_id) != 0)
		return false;
	if (a->runtime_root == NULL || runtime_root == NULL)
		return a->runtime_root == runtime_root;
	return strcmp(a->runtime_root, runtime_root) == 0;
}

static ssize_t find_index(const struct ts_state *s, const char *runtime_root,
			  const char *container_id)
{
	for (size_t i = 0; container_id != NULL && i < s->n_allocs; i++)
		if (ts_alloc_is(s->allocs[i], runtime_root, container_id))
			return (ssize_t)i;
	return -1;
}

const struct ts_alloc *ts_state_find(const struct ts_state *s, const char *runtime_root,
				     const char *container_id)
{
	ssize_t i = find_index(s, runtime_root, container_id);

	return i < 0 ? NULL : s->allocs[i];
}

const struct ts_alloc *ts_state_lookup(const struct ts_state *s, const char *runtime_root,
				       const char *container_id, const char *bundle)
{
	const struct ts_alloc *a = ts_state_find(s, runtime_root, container_id);

	if (a != NULL || runtime_root != NULL)
		return a;
	for (size_t i = 0; bundle != NULL && container_id != NULL && i < s->n_allocs; i++) {
		a = s->allocs[i];
		if (strcmp(a->container_id, container_id) == 0 && a->bundle != NULL &&
		    strcmp(a->bundle, bundle) == 0)
			return a;
	}
	return NULL;
}

int ts_state_put(struct ts_state *s, struct ts_alloc *a, struct ts_error **err)
{
	cleanup_alloc struct ts_alloc *owned = a;
	ssize_t i;

	if (a == NULL || a->container_id == NULL || a->container_id[0] == '\0')
		return ts_error_set(err, 0, "allocation: empty container id");
	a->text_at = a->text_len = 0; /* its text, if any, is another file's */
	i = find_index(s, a->runtime_root, a->container_id);
	if (i >= 0) {
		ts_alloc_free(s->allocs[i]);
		s->allocs[i] = TAKE_PTR(owned);
		s->dirty = true; /* (the same container: ids_checked holds) */
		return 0;
	}
	if (s->n_allocs == s->cap_allocs) {
		size_t cap = s->cap_allocs ? s->cap_allocs * 2 : 16;
		struct ts_alloc **v = reallocarray(s->allocs, cap, sizeof(*v));

		if (v == NULL)
			return ts_error_set(err, ENOMEM, "allocation '%s'", a->container_id);
		s->allocs = v;
		s->cap_allocs = cap;
	}
	s->allocs[s->n_allocs++] = TAKE_PTR(owned);
	s->dirty = true;
	return 0;
}

int ts_state_remove(struct ts_state *s, const char *runtime_root, const char *container_id,
		    struct ts_alloc **ret_removed)
{
	ssize_t i = find_index(s, runtime_root, container_id);
	struct ts_alloc *a;

	if (i < 0)
		return 0;
	a = s->allocs[i];
	memmove(&s->allocs[i], &s->allocs[i + 1],
		(s->n_allocs - (size_t)i - 1) * sizeof(*s->allocs));
	s->n_allocs--;
	s->dirty = true;
	if ((size_t)i < s->ids_checked)
		s->ids_checked--; /* the others still name distinct containers */
	if (ret_removed != NULL)
		*ret_removed = a;
	else
		ts_alloc_free(a);
	return 1;
}

/* The runtime roots file's lines (absolute paths), as a NULL-terminated
 * vector in buf (split in place); NULL when absent or unreadable. */
static char **read_roots(const struct ts_state *s, char **ret_buf)
{
	cleanup_error struct ts_error *ignored = NULL;
	char **v, **grown;
	size_t n = 0;

	*ret_buf = NULL;
	if (ts_read_file_at(s->dir_fd, TS_STATE_ROOTS_FILE, TS_STATE_ROOTS_MAX_BYTES, ret_buf, NULL,
			    &ignored) < 0)
		return NULL;
	v = ts_split_lines(*ret_buf, &n);
	if (v == NULL)
		return NULL;
	grown = realloc(v, (n + 1) * sizeof(*v)); /* NULL-terminated for the callers */
	if (grown == NULL) {
		free(v);
		return NULL;
	}
	grown[n] = NULL;
	return grown;
}

static bool strv_has(char *const *v, const char *s)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* Add the records' runtime roots the roots file lacks (rare: a new engine
 * or --root).  Best effort, like the previous copy. */
static void remember_roots(struct ts_state *s)
{
	cleanup_free char *buf = NULL, *text = NULL;
	cleanup_free char **known = read_roots(s, &buf);
	cleanup_error struct ts_error *ignored = NULL;
	size_t len = 0;
	bool grew = false;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return;
	for (size_t i = 0; known != NULL && known[i] != NULL; i++)
		if (known[i][0] == '/')
			fprintf(f, "%s\n", known[i]);
	for (size_t i = 0; i < s->n_allocs; i++) {
		const char *r = s->allocs[i]->runtime_root;
		bool dup = false;

		if (r == NULL || r[0] != '/' || strchr(r, '\n') != NULL || strv_has(known, r))
			continue;
		for (size_t j = 0; j < i && !dup; j++)
			dup = s->allocs[j]->runtime_root != NULL &&
			      strcmp(s->allocs[j]->runtime_root, r) == 0;
		if (!dup) {
			fprintf(f, "%s\n", r);
			grew = true;
		}
	}
	if (fclose(f) != 0 || !grew)
		return;
	(void)ts_write_file_replace_at(s->dir_fd, TS_STATE_ROOTS_FILE, text, len, 0600, &ignored);
}

/* Keep the sound allocations.json about to be replaced as
 * allocations.json.prev (a hard link renamed over the old one: the current
 * file is never missing).  Best effort: a failure only loses the backup. */
static void keep_previous(struct ts_state *s)
{
	(void)unlinkat(s->dir_fd, TS_STATE_PREV_TMP, 0);
	if (linkat(s->dir_fd, TS_STATE_ALLOC_FILE, s->dir_fd, TS_STATE_PREV_TMP, 0) < 0)
		return;
	if (renameat(s->dir_fd, TS_STATE_PREV_TMP, s->dir_fd, TS_STATE_PREV_FILE) < 0)
		(void)unlinkat(s->dir_fd, TS_STATE_PREV_TMP, 0);
}

/* Commit by swapping with allocations.json.prev: write the new text into
 * the previous copy's file and exchange the two names (renameat2(2)
 * RENAME_EXCHANGE), so that allocations.json is the new file and
 * allocations.json.prev the one it replaces, at once for every reader.
 * No file is created or freed (on a disk that is what a commit costs:
 * about 0.25 ms each here, against 0.02 ms for the swap; issue 15); the
 * copy is created once.  Only under the lock: the one unlocked reader,
 * the front's ts_plain_maybe_recorded(), reads allocations.json, never
 * the copy being written.  @return 1 swapped; 0 when it cannot be done
 * here (no sound current file, a copy that is not a plain file of ours,
 * a filesystem without the exchange): the caller replaces as before. */
static int commit_swap(struct ts_state *s, const char *buf, size_t len)
{
	cleanup_close int fd = -EBADF;
	struct stat st;
	size_t done = 0;

	if (!s->sound || faccessat(s->dir_fd, TS_STATE_ALLOC_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	/* O_NONBLOCK: a FIFO planted there must not block the create while
	 * it holds the lock (every other create would wait, then fail) */
	fd = openat(s->dir_fd, TS_STATE_PREV_FILE,
		    O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		fd = openat(s->dir_fd, TS_STATE_PREV_FILE,
			    O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
	    st.st_uid != geteuid())
		return 0;
	while (done < len) {
		ssize_t n = pwrite(fd, buf + done, len - done, (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		done += (size_t)n;
	}
	if (ftruncate(fd, (off_t)len) < 0 || fchmod(fd, 0600) < 0)
		return 0;
	ts_test_point("state-commit-before-swap");
	if (renameat2(s->dir_fd, TS_STATE_PREV_FILE, s->dir_fd, TS_STATE_ALLOC_FILE,
		      RENAME_EXCHANGE) < 0)
		return 0;
	return 1;
}

static void note_rebuild(const struct ts_state *s, const char *warning);

int ts_state_commit(struct ts_state *s, struct ts_error **err)
{
	cleanup_free char *path = NULL;
	cleanup_free char *buf = NULL;
	cleanup_free struct ts_state_span *spans = NULL;
	size_t len = 0, prev_len;
	int r;

	if (!s->dirty)
		return 0;
	if (asprintf(&path, "%s/%s", s->dir_path, TS_STATE_ALLOC_FILE) < 0)
		return ts_error_set(err, ENOMEM, "%s: cannot write", TS_STATE_ALLOC_FILE);
	/* helper-15: toposhimctl alloc gc wrote the empty store of a rebuild
	 * that had nowhere to look, which the creates then trusted: a second
	 * container got a running one's exclusive cpu */
	if (s->rebuilt && s->rebuilt_blind)
		return ts_error_set_plain(
			err, ESRCH,
			"%s: rebuilt with no runtime root to look in (no record, "
			"no root in %s, no --root names one): not written; the next "
			"create or delete, which names its runtime root, rebuilds it",
			path, TS_STATE_ROOTS_FILE);
	spans = calloc(s->n_allocs + 1, sizeof(*spans));
	if (spans == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot write", path);
	/* the records left as they were read are copied from file_buf (the
	 * bytes they were decoded from or last written as) */
	r = ts_state_format_encode_from(s->allocs, s->n_allocs, path, s->file_buf, s->file_len,
					spans, s->ids_checked, &buf, &len, err);
	if (r < 0)
		return r;
	if (commit_swap(s, buf, len) == 0) {
		if (s->sound)
			keep_previous(s);
		r = ts_write_file_replace_at(s->dir_fd, TS_STATE_ALLOC_FILE, buf, len, 0600, err);
		if (r < 0)
			return ts_error_prefix(err, "%s", s->dir_path);
	}
	/* a rebuilt store does not know what the file was: as if large */
	prev_len = s->file_buf != NULL ? s->file_len : TS_STATE_CACHE_MIN_JSON_BYTES;
	s->dirty = false;
	s->sound = true;
	free(s->file_buf);
	s->file_buf = TAKE_PTR(buf);
	s->file_len = len;
	for (size_t i = 0; i < s->n_allocs; i++) {
		s->allocs[i]->text_at = spans[i].at;
		s->allocs[i]->text_len = spans[i].len;
		s->allocs[i]->text_sum = spans[i].sum;
	}
	s->ids_checked = s->n_allocs;
	disk_cache_write(s, s->allocs, s->n_allocs, s->file_buf, s->file_len, prev_len);
	remember_roots(s);
	if (s->rebuilt) {
		/* the end of that rebuild: a later loss of the same kind is
		 * a line of its own (note_rebuild() skips a repeated one) */
		char done[PATH_MAX + 96];

		s->rebuilt = false;
		snprintf(done, sizeof(done), "%s: rebuilt store written, %zu allocations", path,
			 s->n_allocs);
		note_rebuild(s, done);
	}
	return 0;
}

/* dirfd/path (a runtime's state file, a bundle's config.json) parsed; NULL
 * when it cannot be read or parsed: the callers are best effort. */
static struct ts_json *read_json_at(int dirfd, const char *path)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *buf = NULL;
	struct ts_json *j = NULL;
	size_t len = 0;

	if (ts_read_file_at(dirfd, path, TS_STATE_ALLOC_FILE_MAX_BYTES, &buf, &len, &ignored) < 0 ||
	    ts_json_parse(buf, len, path, &j, &ignored) < 0)
		return NULL;
	return j;
}

/* <bundle>/config.json parsed, or NULL. */
static struct ts_json *read_bundle_config(const char *bundle)
{
	cleanup_free char *path = NULL;

	if (asprintf(&path, "%s/config.json", bundle) < 0)
		return NULL;
	return read_json_at(AT_FDCWD, path);
}

/* A salvaged record of a live container takes its class, cpus, mems and
 * pinning from its bundle's placement file (what toposhim gave it at
 * create) whatever the damaged file said: a value a rebuild found in a
 * file it could not trust is not kept over the one written for this
 * container (an edited class held cpus as if exclusive and emptied the
 * shared pool), or its "pinned_cpus" when its cpuset was pinned from
 * outside since.  Without a placement file of this id, what the record
 * lacks comes from its config.json.  Best effort: an unreadable bundle
 * leaves the record as it is.  A shared container's cpus may have been
 * resized since its create: the next settle compares them with the
 * shared pool again. */
static void fill_from_bundle(struct ts_alloc *a)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_state_placement p = {0};
	const char *value = NULL;

	a->text_len = 0; /* (a rebuild writes every record from its members) */
	if (a->bundle == NULL)
		return;
	if (ts_state_placement_read(AT_FDCWD, a->bundle, &p) == 1 &&
	    strcmp(p.container_id, a->container_id) == 0) {
		if (p.cpus_str != NULL) {
			free(a->cpus_str);
			a->cpus_str = TAKE_PTR(p.cpus_str);
		}
		if (p.mems_str != NULL) {
			free(a->mems_str);
			a->mems_str = TAKE_PTR(p.mems_str);
		}
		if (p.class_name != NULL) {
			free(a->class_name);
			a->class_name = TAKE_PTR(p.class_name);
		}
		a->pinned = p.pinned;
		a->numa_exclusive = p.numa_exclusive;
		if (p.pinned_cpus != NULL) {
			free(a->cpus_str);
			a->cpus_str = TAKE_PTR(p.pinned_cpus);
			a->pinned = true;
		}
	}
	ts_state_placement_release(&p);
	if (a->cpus_str != NULL && a->mems_str != NULL && a->class_name)
		return;
	config = read_bundle_config(a->bundle);
	if (config == NULL)
		return;
	if (a->cpus_str == NULL && ts_oci_cpu_get_cpus(config, &value, &ignored) == 1 &&
	    ts_cpulist_valid(value))
		a->cpus_str = strdup(value);
	if (a->mems_str == NULL && ts_oci_cpu_get_mems(config, &value, &ignored) == 1 &&
	    ts_cpulist_valid(value))
		a->mems_str = strdup(value);
	if (a->class_name == NULL &&
	    ts_oci_annotation_get(config, "toposhim.io/class", &value, &ignored) == 1)
		a->class_name = strdup(value);
}

/* The bundle of a container, from its runtime's state dir: runc keeps
 * "bundle=<dir>" among the labels of <id>/state.json, crun a "bundle" member
 * in <id>/status.  NULL when neither says (or out of memory). */
static char *runtime_bundle(int root_fd, const char *id)
{
	cleanup_free char *runc = NULL, *crun = NULL;
	cleanup_json struct ts_json *j = NULL;
	const struct ts_json *item;
	const char *bundle;
	size_t i;

	if (asprintf(&runc, "%s/%s", id, ts_runtime_family_state_file(TS_RUNTIME_FAMILY_RUNC)) <
		    0 ||
	    asprintf(&crun, "%s/%s", id, ts_runtime_family_state_file(TS_RUNTIME_FAMILY_CRUN)) < 0)
		return NULL;
	j = read_json_at(root_fd, runc);
	if (j != NULL) {
		ts_json_array_foreach (ts_json_get_path(j, "config", "labels", NULL), i, item)
			if (item->type == TS_JSON_STRING &&
			    strncmp(item->u.string, "bundle=", 7) == 0)
				return strdup(item->u.string + 7);
		return NULL;
	}
	j = read_json_at(root_fd, crun);
	bundle = ts_json_get_string(j, "bundle");
	return bundle != NULL ? strdup(bundle) : NULL;
}

int ts_state_runtime_init(const char *runtime_root, const char *container_id, pid_t *ret_pid,
			  uint64_t *ret_start_ticks, char **ret_cgroup)
{
	const char *cgroup = NULL;
	cleanup_close int root_fd = -EBADF;
	cleanup_free char *runc = NULL, *crun = NULL;
	cleanup_json struct ts_json *j = NULL;
	int64_t pid = 0, start = 0;
	const char *pid_key = "init_process_pid", *start_key = "init_process_start";

	if (runtime_root == NULL || container_id == NULL || strchr(container_id, '/') != NULL ||
	    strcmp(container_id, "..") == 0 || strcmp(container_id, ".") == 0)
		return 0;
	root_fd = open(runtime_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0 ||
	    asprintf(&runc, "%s/%s", container_id,
		     ts_runtime_family_state_file(TS_RUNTIME_FAMILY_RUNC)) < 0 ||
	    asprintf(&crun, "%s/%s", container_id,
		     ts_runtime_family_state_file(TS_RUNTIME_FAMILY_CRUN)) < 0)
		return 0;
	j = read_json_at(root_fd, runc);
	if (j == NULL) {
		j = read_json_at(root_fd, crun);
		pid_key = "pid";
		start_key = "process-start-time";
	}
	if (j == NULL || ts_json_get_int64(ts_json_get(j, pid_key), &pid) < 0 || pid <= 0 ||
	    pid > INT32_MAX || ts_json_get_int64(ts_json_get(j, start_key), &start) < 0 ||
	    start < 0)
		return 0;
	if (strcmp(pid_key, "pid") == 0) {
		cgroup = ts_json_get_string(j, "cgroup-path");
	} else {
		const struct ts_json *paths = ts_json_get(j, "cgroup_paths");

		cgroup = ts_json_get_string(paths, "cpuset");
		if (cgroup == NULL)
			cgroup = ts_json_get_string(paths, "");
	}
	if (ret_cgroup != NULL) {
		*ret_cgroup = cgroup != NULL ? strdup(cgroup) : NULL;
		if (cgroup != NULL && *ret_cgroup == NULL)
			return 0;
	}
	*ret_pid = (pid_t)pid;
	*ret_start_ticks = (uint64_t)start;
	return 1;
}

/* "a,b" as a NULL-terminated array of copies; NULL when out of memory
 * (the record then names no devices). */
static char **split_devices(const char *joined)
{
	size_t n = 1, k = 0;
	char **v;

	for (const char *c = joined; *c != '\0'; c++)
		n += *c == ',';
	v = calloc(n + 1, sizeof(*v));
	if (v == NULL)
		return NULL;
	for (const char *c = joined;; k++) {
		size_t len = strcspn(c, ",");

		v[k] = strndup(c, len);
		if (v[k] == NULL) {
			for (size_t i = 0; i < k; i++)
				free(v[i]);
			free(v);
			return NULL;
		}
		if (c[len] == '\0')
			break;
		c += len + 1;
	}
	return v;
}

/* A record for a running container that toposhim placed (its bundle holds
 * a placement file for this id) but the store has lost; NULL when it is not
 * one of ours. */
static struct ts_alloc *adopt_one(const char *root, const char *id, const char *bundle,
				  const char *state_dir)
{
	cleanup_error struct ts_error *ignored = NULL;
	struct ts_state_placement p = {0};
	cleanup_alloc struct ts_alloc *a = NULL;

	if (ts_state_placement_read(AT_FDCWD, bundle, &p) != 1)
		return NULL;
	/* not another store's container (one sharing the runtime root) */
	if (strcmp(p.container_id, id) == 0 &&
	    (p.state_dir == NULL || strcmp(p.state_dir, state_dir) == 0))
		a = ts_alloc_new(id, &ignored);
	if (a != NULL) {
		a->status = TS_ALLOC_CREATED;
		a->pinned = p.pinned;
		a->numa_exclusive = p.numa_exclusive;
		a->runtime_root = strdup(root);
		a->bundle = strdup(bundle);
		a->class_name = TAKE_PTR(p.class_name);
		a->cpus_str = TAKE_PTR(p.cpus_str);
		a->mems_str = TAKE_PTR(p.mems_str);
		if (p.pinned_cpus != NULL) {
			/* set from outside since the create, and kept there */
			free(a->cpus_str);
			a->cpus_str = TAKE_PTR(p.pinned_cpus);
			a->pinned = true;
		}
		if (p.devices != NULL && p.devices[0] != '\0')
			a->devices = split_devices(p.devices);
	}
	ts_state_placement_release(&p);
	if (a == NULL || a->runtime_root == NULL || a->bundle == NULL)
		return NULL;
	return TAKE_PTR(a);
}

/* Add a record for every container that toposhim placed and the store has
 * no record of (a record lost with a damaged file), looking in the runtime
 * roots the records name and those of the roots file.  @return how many
 * were added. */
static size_t adopt_live_containers(struct ts_state *s, size_t *ret_roots)
{
	cleanup_free char *buf = NULL;
	cleanup_free char **known = read_roots(s, &buf);
	size_t n_known = 0, added = 0, k = 0;

	while (known != NULL && known[n_known] != NULL)
		n_known++;
	cleanup_free const char **roots = calloc(s->n_allocs + n_known + 2, sizeof(*roots));
	*ret_roots = 1; /* out of memory: not known to be blind */
	if (roots == NULL)
		return 0;
	/* the records' roots, the roots file's, the command's own */
	for (size_t i = 0; i < s->n_allocs + n_known + 1; i++) {
		const char *r = i < s->n_allocs		    ? s->allocs[i]->runtime_root
				: i < s->n_allocs + n_known ? known[i - s->n_allocs]
							    : s->runtime_root;
		bool seen = r == NULL || r[0] != '/';

		for (size_t j = 0; j < k && !seen; j++)
			seen = strcmp(roots[j], r) == 0;
		if (!seen)
			roots[k++] = r;
	}
	*ret_roots = k;
	for (size_t j = 0; j < k; j++) {
		cleanup_free char *root = strdup(roots[j]); /* records move as we add */
		cleanup_close int root_fd = -EBADF;
		DIR *d;
		struct dirent *e;

		if (root == NULL)
			continue;
		root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (root_fd < 0)
			continue;
		d = fdopendir(dup(root_fd));
		if (d == NULL)
			continue;
		while ((e = readdir(d)) != NULL) {
			cleanup_free char *bundle = NULL;
			struct ts_alloc *a;
			cleanup_error struct ts_error *ignored = NULL;

			if (e->d_name[0] == '.' || ts_state_find(s, root, e->d_name) != NULL)
				continue;
			bundle = runtime_bundle(root_fd, e->d_name);
			a = bundle != NULL ? adopt_one(root, e->d_name, bundle, s->dir_path) : NULL;
			if (a != NULL && ts_state_put(s, a, &ignored) == 0)
				added++;
		}
		closedir(d);
	}
	return added;
}

/* Keep the records that are not provably gone; set *ret_kept. */
static void keep_live(struct ts_state *s, size_t *ret_kept)
{
	uint64_t now = ts_state_now_usec();
	size_t kept = 0;

	for (size_t i = 0; i < s->n_allocs; i++) {
		struct ts_alloc *a = s->allocs[i];
		uint64_t start = 0;
		pid_t pid = 0;

		/* the init the runtime's own state names wins over a pid read
		 * from a file that could not be trusted (an edited pid dropped
		 * a running container) */
		if (ts_state_runtime_init(a->runtime_root, a->container_id, &pid, &start, NULL) ==
			    1 &&
		    (pid != a->pid || start != a->pid_start_ticks)) {
			a->pid = pid;
			a->pid_start_ticks = start;
			a->status = TS_ALLOC_CREATED;
		}
		/* grace 0: a record without a pid must show its runtime dir */
		if (ts_state_alloc_is_stale(s->proc_root, a, now, 0)) {
			ts_alloc_free(s->allocs[i]);
			continue;
		}
		/* and its cgroup read again, as ts_state_learn_inits() does:
		 * a record without one is never resized (an adopted or
		 * salvaged record had none, and kept its cpus while a new
		 * exclusive container took them) */
		if (a->pid > 0) {
			cleanup_error struct ts_error *ignored = NULL;
			char *cgroup = NULL;

			if (ts_state_proc_cgroup(s->proc_root, a->pid, &cgroup, &ignored) == 0) {
				free(a->cgroup_path);
				a->cgroup_path = cgroup;
			}
		}
		fill_from_bundle(s->allocs[i]);
		s->allocs[kept++] = s->allocs[i];
	}
	*ret_kept = kept;
	s->n_allocs = kept;
}

/* Add the records of a sound allocations.json.prev whose container ids the
 * store lacks; *ret_added says how many.  A missing or unsound copy adds
 * nothing.  @return 0; -ENOMEM. */
static int merge_previous(struct ts_state *s, size_t *ret_added)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *buf = NULL, *problem = NULL;
	struct ts_alloc **v = NULL;
	size_t len = 0, n = 0, added = 0;
	int r;

	*ret_added = 0;
	if (ts_read_file_at(s->dir_fd, TS_STATE_PREV_FILE, TS_STATE_ALLOC_FILE_MAX_BYTES, &buf,
			    &len, &ignored) < 0)
		return 0;
	r = ts_state_format_decode(buf, len, TS_STATE_PREV_FILE, &v, &n, &problem, &ignored);
	if (r == -ENOMEM)
		return r;
	if (r < 0 || problem != NULL) {
		for (size_t i = 0; i < n; i++)
			ts_alloc_free(v[i]);
		free(v);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (ts_state_find(s, v[i]->runtime_root, v[i]->container_id) != NULL) {
			ts_alloc_free(v[i]);
			continue;
		}
		/* takes the record, also when it fails (out of memory) */
		if (ts_state_put(s, v[i], &ignored) < 0) {
			for (size_t k = i + 1; k < n; k++)
				ts_alloc_free(v[k]);
			free(v);
			return -ENOMEM;
		}
		added++;
	}
	free(v);
	*ret_added = added;
	return 0;
}

/* The records of the last sound allocations.json this process loaded or
 * wrote, handed over when its store was closed unchanged: its state
 * directory, its exact bytes and its records.  A later load of the same
 * directory that reads the same bytes (a create, and the settle after it,
 * open the store up to three times; nobody else wrote between) takes
 * these records instead of parsing again: a byte-for-byte comparison, so
 * a file anyone rewrote since is always parsed.  One entry; moved in and
 * out, never copied. */
static struct {
	char *dir_path;
	char *buf;
	size_t len;
	struct ts_alloc **v;
	size_t n;
} load_cache;

static void load_cache_drop(void)
{
	ts_alloc_array_free(load_cache.v, load_cache.n);
	free(load_cache.dir_path);
	free(load_cache.buf);
	load_cache = (typeof(load_cache)){0};
}

/* At close: move the records of an unchanged store (and the bytes they
 * are the decoding of) into the cache; best effort.  They are first made
 * what a parse of those bytes gives (ts_state_format_normalize()).  Only
 * this file changes records in place, and each such change marks the store
 * dirty: the accessors lend them const (a checksum of every record here
 * cost 1 M instructions per close at 500 records, three closes a create). */
static void load_cache_keep(struct ts_state *s)
{
	if (s->dirty || !s->sound || s->file_buf == NULL)
		return;
	for (size_t i = 0; i < s->n_allocs; i++)
		if (ts_state_format_normalize(s->allocs[i]) < 0)
			return;
	load_cache_drop();
	load_cache.dir_path = strdup(s->dir_path);
	if (load_cache.dir_path == NULL)
		return;
	load_cache.buf = TAKE_PTR(s->file_buf);
	load_cache.len = s->file_len;
	load_cache.v = TAKE_PTR(s->allocs);
	load_cache.n = s->n_allocs;
	s->n_allocs = s->cap_allocs = 0;
}

/* Write allocations.cache for records v decoded from (or written as) the
 * text json; best effort, no fsync: a cache that is not json's exact
 * image is never taken (ts_state_cache_decode()). */
static void disk_cache_write(struct ts_state *s, struct ts_alloc *const *v, size_t n,
			     const char *json, size_t json_len, size_t prev_len)
{
	cleanup_free char *buf = NULL;
	struct stat st;
	size_t len = 0;

	if (json_len < TS_STATE_CACHE_MIN_JSON_BYTES) {
		/* the store fell below the bound: its old cache goes */
		if (prev_len >= TS_STATE_CACHE_MIN_JSON_BYTES)
			(void)unlinkat(s->dir_fd, TS_STATE_CACHE_FILE, 0);
		return;
	}
	if (ts_state_cache_encode(v, n, json, json_len, &buf, &len) < 0)
		return;
	for (int attempt = 0; attempt < 2; attempt++) {
		/* O_NONBLOCK: a FIFO planted there must not block the create.
		 * Written into only when it is a plain file of ours with one
		 * name (a hard link would carry the bytes elsewhere), 0600. */
		cleanup_close int fd = openat(
			s->dir_fd, TS_STATE_CACHE_FILE,
			O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);

		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    st.st_uid == geteuid() && fchmod(fd, 0600) == 0 && ftruncate(fd, 0) == 0 &&
		    ts_write_all(fd, buf, len) == 0)
			return;
		/* an empty directory too (a non-empty one stays: the cache
		 * is then off, the JSON parsed as before) */
		if (unlinkat(s->dir_fd, TS_STATE_CACHE_FILE, 0) < 0 && errno == EISDIR)
			(void)unlinkat(s->dir_fd, TS_STATE_CACHE_FILE, AT_REMOVEDIR);
	}
}

/* The records allocations.cache holds when it is the image of the text
 * buf just read.  @return 1 with *ret_v, *ret_n; 0 when it is not (or
 * missing, unreadable); -ENOMEM. */
static int disk_cache_take(struct ts_state *s, const char *buf, size_t len,
			   struct ts_alloc ***ret_v, size_t *ret_n)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *cache = NULL;
	size_t cache_len = 0;
	int r;

	if (len < TS_STATE_CACHE_MIN_JSON_BYTES)
		return 0;
	r = ts_read_file_at(s->dir_fd, TS_STATE_CACHE_FILE, TS_STATE_CACHE_FILE_MAX_BYTES, &cache,
			    &cache_len, &ignored);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	return ts_state_cache_decode(cache, cache_len, buf, len, ret_v, ret_n);
}

/* The cached records when buf is the text they were kept with for dir
 * (moved out: the cache is then empty); @return 1 with *ret_v and *ret_n,
 * 0 when not cached. */
static int load_cache_take(const char *dir, const char *buf, size_t len, struct ts_alloc ***ret_v,
			   size_t *ret_n)
{
	if (load_cache.buf == NULL || load_cache.len != len ||
	    strcmp(load_cache.dir_path, dir) != 0 || memcmp(load_cache.buf, buf, len) != 0)
		return 0;
	*ret_v = TAKE_PTR(load_cache.v);
	*ret_n = load_cache.n;
	load_cache.n = 0;
	load_cache_drop();
	return 1;
}

/* Whether the last line of rebuilds.log (fd, size bytes) reports this
 * warning: a store that stays damaged (a create that fails before its
 * commit, `toposhimctl alloc list`, which never writes) is rebuilt at
 * every load, and the log says so once until something else happens. */
static bool last_line_says(int fd, off_t size, const char *warning)
{
	char tail[4096];
	size_t want = strlen(warning);
	off_t from = size > (off_t)sizeof(tail) - 1 ? size - (off_t)sizeof(tail) + 1 : 0;
	ssize_t n;
	char *end, *start;

	if (size <= 0 || want + 2 > sizeof(tail))
		return false;
	n = pread(fd, tail, (size_t)(size - from), from);
	if (n <= 1 || tail[n - 1] != '\n')
		return false;
	tail[n - 1] = '\0';
	end = tail + n - 1;
	start = memrchr(tail, '\n', (size_t)(end - tail));
	start = start != NULL ? start + 1 : tail;
	/* "<time> pid <pid>: <warning>" */
	start = strstr(start, ": ");
	return start != NULL && strcmp(start + 2, warning) == 0;
}

/* Append "<time> pid <pid>: <warning>" to file (rebuilds.log,
 * resizes.log) of the state dir, moving a file over the bound to old_file
 * first; best effort (only a plain file of ours with one name is written,
 * as the cache).  Under the store's lock: appends do not interleave. */
/* file of the state dir opened to append (O_RDWR: the last line is read
 * back), created 0600 when missing; -1 unless it is a plain file of the
 * store's owner with one name (nothing is written through a link or into
 * another's file).  *ret_st: its stat. */
static int open_own_append(const struct ts_state *s, const char *file, struct stat *ret_st)
{
	int fd = openat(
		s->dir_fd, file,
		O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);

	if (fd >= 0 && (fstat(fd, ret_st) < 0 || !S_ISREG(ret_st->st_mode) ||
			ret_st->st_nlink != 1 || ret_st->st_uid != geteuid())) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void note_line(const struct ts_state *s, const char *file, const char *old_file,
		      const char *warning)
{
	cleanup_free char *line = NULL;
	char when[32] = "";
	struct timespec now;
	struct tm tm;
	struct stat st;
	int len;

	if (clock_gettime(CLOCK_REALTIME, &now) == 0 && gmtime_r(&now.tv_sec, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	len = asprintf(&line, "%s pid %d: %s\n", when, (int)getpid(), warning);
	if (len < 0)
		return;
	for (int attempt = 0; attempt < 2; attempt++) {
		cleanup_close int fd = open_own_append(s, file, &st);

		if (fd < 0)
			return;
		if (last_line_says(fd, st.st_size, warning))
			return;
		if (st.st_size + len > (off_t)TS_STATE_NOTES_MAX_BYTES) {
			if (attempt == 0 && renameat(s->dir_fd, file, s->dir_fd, old_file) == 0)
				continue;
			/* the old file cannot be replaced (a directory):
			 * start over rather than grow past the bound */
			if (ftruncate(fd, 0) < 0)
				return;
			st.st_size = 0;
		}
		/* a write the file system cut short (full) leaves no half line
		 * for the next one to run on (helper-18); under the lock, the
		 * size at open is still the end of the last whole line */
		if (ts_write_all(fd, line, (size_t)len) < 0 && ftruncate(fd, st.st_size) < 0)
			return; /* nothing more to do: best effort */
		return;
	}
}

static void note_rebuild(const struct ts_state *s, const char *warning)
{
	note_line(s, TS_STATE_REBUILDS_FILE, TS_STATE_REBUILDS_OLD_FILE, warning);
}

void ts_state_note_resize(const struct ts_state *s, const char *msg)
{
	if (s != NULL && msg != NULL)
		note_line(s, TS_STATE_RESIZES_FILE, TS_STATE_RESIZES_OLD_FILE, msg);
}

void ts_state_note_create(const struct ts_state *s, const char *container_id, const char *msg)
{
	cleanup_free char *line = NULL;

	if (s != NULL && container_id != NULL && msg != NULL &&
	    asprintf(&line, "container '%s': warning: %s", container_id, msg) >= 0)
		note_line(s, TS_STATE_CREATES_FILE, TS_STATE_CREATES_OLD_FILE, line);
}

void ts_state_released_add(const struct ts_state *s, const char *container_id, const char *cpus)
{
	cleanup_close int fd = -EBADF;
	cleanup_free char *line = NULL;
	struct stat st;
	int len;

	if (s == NULL || container_id == NULL || cpus == NULL || cpus[0] == '\0' ||
	    strpbrk(container_id, " \n") != NULL || strpbrk(cpus, " \n") != NULL)
		return;
	len = asprintf(&line, "%s %s\n", cpus, container_id);
	if (len < 0)
		return;
	fd = open_own_append(s, TS_STATE_RELEASED_FILE, &st);
	if (fd < 0 || st.st_size + len > (off_t)TS_STATE_NOTES_MAX_BYTES)
		return;
	/* as note_line(): no half line left by a full file system */
	if (ts_write_all(fd, line, (size_t)len) < 0 && ftruncate(fd, st.st_size) < 0)
		return; /* best effort: a half line is skipped when read */
}

int ts_state_released_read(const struct ts_state *s, struct ts_alloc ***ret, size_t *ret_n)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *buf = NULL;
	struct ts_alloc **v = NULL;
	size_t n = 0, len = 0;
	char *line, *save = NULL;

	*ret = NULL;
	*ret_n = 0;
	if (ts_read_file_at(s->dir_fd, TS_STATE_RELEASED_FILE, TS_STATE_NOTES_MAX_BYTES, &buf, &len,
			    &ignored) < 0)
		return ts_error_code(ignored) == -ENOMEM ? -ENOMEM : 0;
	for (line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		struct ts_alloc **grown, *a;

		if (sp == NULL || sp == line || sp[1] == '\0')
			continue;
		*sp = '\0';
		grown = realloc(v, (n + 1) * sizeof(*v));
		a = grown != NULL ? ts_alloc_new(sp + 1, &ignored) : NULL;
		if (grown != NULL)
			v = grown;
		if (a == NULL || (a->cpus_str = strdup(line)) == NULL) {
			ts_alloc_free(a);
			ts_alloc_array_free(v, n);
			return -ENOMEM;
		}
		v[n++] = a;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

void ts_state_released_clear(const struct ts_state *s)
{
	(void)unlinkat(s->dir_fd, TS_STATE_RELEASED_FILE, 0);
}

bool ts_state_dir_fd_written(int dir_fd)
{
	return faccessat(dir_fd, TS_STATE_PREV_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
	       faccessat(dir_fd, TS_STATE_ROOTS_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

bool ts_state_dir_has_store(const char *config_state_dir)
{
	const char *dir = ts_state_dir_resolve(config_state_dir);
	cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd >= 0 && (faccessat(fd, TS_STATE_ALLOC_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
			   ts_state_dir_fd_written(fd));
}

int ts_state_load(struct ts_state *s, char **ret_warning, struct ts_error **err)
{
	cleanup_error struct ts_error *read_err = NULL;
	cleanup_free char *path = NULL;
	cleanup_free char *buf = NULL;
	cleanup_free char *problem = NULL;
	cleanup_free char *warning = NULL;
	struct ts_alloc **v = NULL;
	size_t len = 0, n = 0, kept = 0, roots = 1;
	bool new_store = false;
	int r;

	store_clear(s);
	s->dirty = false;
	s->sound = false;
	s->rebuilt = false;
	s->rebuilt_blind = false;
	if (asprintf(&path, "%s/%s", s->dir_path, TS_STATE_ALLOC_FILE) < 0)
		return ts_error_set(err, ENOMEM, "%s: cannot load", TS_STATE_ALLOC_FILE);
	r = ts_read_file_at(s->dir_fd, TS_STATE_ALLOC_FILE, TS_STATE_ALLOC_FILE_MAX_BYTES, &buf,
			    &len, &read_err);
	if (r == -ENOENT && !ts_state_dir_fd_written(s->dir_fd)) {
		/* a new store, or one whose whole dir went (nothing says
		 * which): what runs in the command's runtime root with a
		 * placement file is toposhim's; a rebuild below when any */
		if (ret_warning != NULL)
			*ret_warning = NULL;
		if (s->runtime_root == NULL)
			return 0;
		new_store = true;
	}
	if (r == -ENOMEM)
		return ts_error_set(err, ENOMEM, "%s: cannot load", path);
	if (r == -EISDIR)
		/* nothing can be renamed over it: every commit would fail
		 * after the rebuild (an operator's mkdir, a hostPath mount) */
		return ts_error_set_plain(err, EISDIR,
					  "%s: a directory where the allocations file belongs: "
					  "remove it or move it away",
					  path);
	if (r == -ENOENT) {
		/* the file went, its copy or the roots file did not: its
		 * records may still hold cpus (a delete by hand) */
		problem = strdup(
			faccessat(s->dir_fd, TS_STATE_ALLOC_FILE, F_OK, AT_SYMLINK_NOFOLLOW) == 0
				? "a dangling symbolic link"
			: new_store ? "missing, as is everything else of the store"
				    : "missing");
		if (problem == NULL)
			return ts_error_set(err, ENOMEM, "%s: cannot load", path);
	} else if (r < 0) {
		cleanup_free char *why = ts_error_format(read_err);

		if (asprintf(&problem, "unreadable (%s)", why ? why : "out of memory") < 0)
			return ts_error_set(err, ENOMEM, "%s: cannot load", path);
	} else if (load_cache_take(s->dir_path, buf, len, &v, &n) == 0) {
		r = disk_cache_take(s, buf, len, &v, &n);
		if (r == 0) {
			r = ts_state_format_decode(buf, len, path, &v, &n, &problem, err);
			if (r < 0)
				return r;
			if (problem == NULL)
				disk_cache_write(s, v, n, buf, len, 0);
		}
		if (r < 0)
			return ts_error_set(err, -r, "%s: cannot load", path);
	}
	s->allocs = v;
	s->n_allocs = s->cap_allocs = n;
	if (problem == NULL && buf != NULL) {
		s->file_buf = TAKE_PTR(buf);
		s->file_len = len;
	}
	if (problem != NULL) {
		size_t from_prev = 0, adopted;
		char found[96] = "";

		/* what the damaged file lost may still be in the last sound one */
		if (merge_previous(s, &from_prev) < 0)
			return ts_error_set(err, ENOMEM, "%s: cannot load", path);
		/* and what neither holds, in the runtimes' own state */
		adopted = adopt_live_containers(s, &roots);
		if (new_store && adopted == 0) {
			/* nothing of toposhim's runs there: a new store */
			s->dirty = false;
			return 0;
		}
		if (adopted > 0)
			snprintf(found, sizeof(found), " (%zu found in the runtime state)",
				 adopted);
		n += from_prev + adopted;
		keep_live(s, &kept);
		s->dirty = true;
		if (asprintf(&warning,
			     "%s: %s: store rebuilt from live containers%s, kept %zu of %zu "
			     "allocations%s",
			     path, problem, from_prev > 0 ? " and " TS_STATE_PREV_FILE : "", kept,
			     n, found) < 0)
			return ts_error_set(err, ENOMEM, "%s: cannot load", path);
		note_rebuild(s, warning);
		s->rebuilt = true;
		s->rebuilt_blind = roots == 0;
	} else {
		s->sound = true;
		/* a sound file names each container once */
		s->ids_checked = s->n_allocs;
	}
	if (ret_warning != NULL)
		*ret_warning = TAKE_PTR(warning);
	return 0;
}

int ts_state_stale(const struct ts_state *s, uint64_t now_usec, uint64_t grace_usec,
		   bool **ret_stale, struct ts_error **err)
{
	cleanup_free bool *stale = NULL;

	*ret_stale = NULL;
	if (s->n_allocs == 0)
		return 0;
	stale = calloc(s->n_allocs, sizeof(*stale));
	if (stale == NULL ||
	    ts_state_mark_stale(s->proc_root, (const struct ts_alloc *const *)s->allocs,
				s->n_allocs, now_usec, grace_usec, stale) < 0)
		return ts_error_set(err, ENOMEM, "%s: garbage collection", s->dir_path);
	*ret_stale = TAKE_PTR(stale);
	return 0;
}

int ts_state_gc(struct ts_state *s, uint64_t now_usec, uint64_t grace_usec,
		struct ts_alloc ***ret_collected, size_t *ret_n, struct ts_error **err)
{
	cleanup_free struct ts_alloc **collected = NULL;
	cleanup_free bool *stale = NULL;
	size_t n = 0, kept = 0;

	(void)ts_state_learn_inits(s); /* marks the store dirty when it learned */
	if (s->n_allocs > 0) {
		collected = calloc(s->n_allocs, sizeof(*collected));
		if (collected == NULL)
			return ts_error_set(err, ENOMEM, "%s: garbage collection", s->dir_path);
	}
	if (ts_state_stale(s, now_usec, grace_usec, &stale, err) < 0)
		return ts_error_code(*err);
	for (size_t i = 0, checked = s->ids_checked; i < s->n_allocs; i++) {
		struct ts_alloc *a = s->allocs[i];

		if (stale[i]) {
			collected[n++] = a;
			if (i < checked)
				s->ids_checked--;
		} else {
			s->allocs[kept++] = a;
		}
	}
	s->n_allocs = kept;
	if (n > 0)
		s->dirty = true;
	*ret_collected = n > 0 ? TAKE_PTR(collected) : NULL;
	*ret_n = n;
	return 0;
}
