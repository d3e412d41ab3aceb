/*
 * resize.c - new cpus/mems for running containers: direct cgroup v2 writes,
 * or `<runtime> update` run in a forked child.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define UPDATE_TIMEOUT_MS_DEFAULT 10000
#define OUTPUT_KEEP 4096

static const char *const status_names[_TS_CGROUP_RESIZE_STATUS_MAX] = {
	[TS_CGROUP_RESIZE_OK] = "ok",
	[TS_CGROUP_RESIZE_DEAD] = "dead",
	[TS_CGROUP_RESIZE_MISMATCH] = "mismatch",
	[TS_CGROUP_RESIZE_FAILED] = "failed",
};

const char *ts_cgroup_resize_status_to_string(enum ts_cgroup_resize_status s)
{
	if (s < 0 || s >= _TS_CGROUP_RESIZE_STATUS_MAX)
		return NULL;
	return status_names[s];
}

struct ts_cgroup_resize_result *ts_cgroup_resize_results_free(struct ts_cgroup_resize_result *r,
							      size_t n)
{
	for (size_t i = 0; r != NULL && i < n; i++) {
		free(r[i].message);
		free(r[i].effective_cpus);
	}
	free(r);
	return NULL;
}

/* Sets a result's status and message; on OOM the message stays NULL. */
static void set_result(struct ts_cgroup_resize_result *res, enum ts_cgroup_resize_status status,
		       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void set_result(struct ts_cgroup_resize_result *res, enum ts_cgroup_resize_status status,
		       const char *fmt, ...)
{
	va_list ap;
	char *m = NULL;

	va_start(ap, fmt);
	if (vasprintf(&m, fmt, ap) < 0)
		m = NULL;
	va_end(ap);
	free(res->message);
	res->message = m;
	res->status = status;
}

/* "/a//b/" -> "a/b"; NULL when empty or with a "." or ".." component. */
static char *normalize_path(const char *p)
{
	char *out = malloc(strlen(p) + 1);
	size_t len = 0;

	if (out == NULL)
		return NULL;
	while (*p) {
		while (*p == '/')
			p++;
		size_t n = strcspn(p, "/");
		if (n == 0)
			break;
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			free(out);
			return NULL;
		}
		if (len > 0)
			out[len++] = '/';
		memcpy(out + len, p, n);
		len += n;
		p += n;
	}
	out[len] = '\0';
	if (len == 0) {
		free(out);
		return NULL;
	}
	return out;
}

static bool is_systemd_path(const char *normalized)
{
	const char *last = strrchr(normalized, '/');
	size_t n;

	last = last ? last + 1 : normalized;
	n = strlen(last);
	return n > 6 && strcmp(last + n - 6, ".scope") == 0;
}

/*
 * Read a small kernel file (cgroupfs, procfs) into buf (NUL-terminated):
 * open, read, close.  These files end in a newline and seq_file hands the
 * whole text to one read(2) when it fits, so a read ending in '\n' ends
 * the loop without the extra read(2) that would return 0.
 * @return the length; -errno; -EFBIG when it does not fit in size - 1 bytes.
 */
static ssize_t read_small(int dirfd, const char *file, char *buf, size_t size)
{
	cleanup_close int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len = 0;

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
		if (buf[len - 1] == '\n')
			break;
		if (len == size - 1)
			return -EFBIG;
	}
	buf[len] = '\0';
	return (ssize_t)len;
}

/*
 * 1 alive (or not checkable: pid 0), 0 dead (result set).  A /proc read
 * error other than absence counts as alive: when in doubt, resize.
 */
static int check_alive(const struct ts_cgroup_resize_target *t, const char *proc_root,
		       struct ts_cgroup_resize_result *res)
{
	char path[64 + 4096];
	char buf[4096];

	if (t->pid <= 0)
		return 1;
	snprintf(path, sizeof(path), "%s/%d/stat", proc_root, (int)t->pid);
	ssize_t r = read_small(AT_FDCWD, path, buf, sizeof(buf));
	if (r == -ENOENT || r == -ESRCH) {
		set_result(res, TS_CGROUP_RESIZE_DEAD, "container '%s': init pid %d is gone",
			   t->container_id, (int)t->pid);
		return 0;
	}
	if (r < 0)
		return 1;
	const char *p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return 1;
	char state = p[2];
	if (state == 'Z' || state == 'X') {
		set_result(res, TS_CGROUP_RESIZE_DEAD, "container '%s': init pid %d is a zombie",
			   t->container_id, (int)t->pid);
		return 0;
	}
	if (t->pid_start_ticks == 0)
		return 1;
	/* starttime is field 22; the state after ')' is field 3. */
	p += 2;
	for (int field = 3; field < 22 && p != NULL; field++) {
		p = strchr(p, ' ');
		if (p != NULL)
			p++;
	}
	if (p == NULL)
		return 1;
	uint64_t ticks = strtoull(p, NULL, 10);
	if (ticks != t->pid_start_ticks) {
		set_result(res, TS_CGROUP_RESIZE_DEAD,
			   "container '%s': init pid %d was reused (start time %" PRIu64
			   ", recorded %" PRIu64 ")",
			   t->container_id, (int)t->pid, ticks, t->pid_start_ticks);
		return 0;
	}
	return 1;
}

/* ---- direct writes ------------------------------------------------------------------------- */

struct direct {
	size_t target; /* index into targets/results */
	char *path;    /* normalised cgroup path; owned */
	int dirfd;     /* the container's cgroup directory */
	bool failed;
};

/* Scratch space for reading cpuset files: a list of 8192 PUs fits. */
#define SET_TEXT_MAX 65536

static int read_set(int dirfd, const char *file, char *scratch, struct ts_cgroup_set *ret,
		    char **ret_text)
{
	ssize_t n = read_small(dirfd, file, scratch, SET_TEXT_MAX);

	if (n < 0)
		return (int)n;
	if (ts_cgroup_set_parse(scratch, ret) < 0)
		return -EINVAL;
	if (ret_text != NULL) {
		scratch[strcspn(scratch, "\n")] = '\0';
		*ret_text = strdup(scratch);
		if (*ret_text == NULL)
			return -ENOMEM;
	}
	return 0;
}

static int write_value(int dirfd, const char *file, const char *value)
{
	cleanup_close int fd = openat(dirfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return -errno;
	/* The kernel takes one write(2) per value; an empty set is written as "\n". */
	cleanup_free char *buf = NULL;
	int len = asprintf(&buf, "%s\n", value);
	if (len < 0)
		return -ENOMEM;
	return ts_write_all(fd, buf, (size_t)len);
}

/* Current sets of one direct target; an empty cpuset.cpus means "the parent's". */
static int read_current(struct direct *d, const struct ts_cgroup_resize_target *t,
			struct ts_cgroup_plan_input *in, const char *root, char *scratch,
			struct ts_cgroup_resize_result *res)
{
	static const char *const files[2][2] = {{"cpuset.cpus", "cpuset.cpus.effective"},
						{"cpuset.mems", "cpuset.mems.effective"}};

	for (int m = 0; m < 2; m++) {
		bool has = m ? in->has_mems : in->has_cpus;
		struct ts_cgroup_set *old = m ? &in->old_mems : &in->old_cpus;
		if (!has)
			continue;
		int r = read_set(d->dirfd, files[m][0], scratch, old, NULL);
		if (r >= 0 && ts_cgroup_set_is_empty(old))
			r = read_set(d->dirfd, files[m][1], scratch, old, NULL);
		if (r < 0) {
			set_result(res, TS_CGROUP_RESIZE_FAILED,
				   "container '%s': '%s/%s/%s': cannot read: %s", t->container_id,
				   root, d->path, files[m][0], strerror(-r));
			return r;
		}
	}
	return 0;
}

static void read_back(struct direct *d, const struct ts_cgroup_resize_target *t,
		      const struct ts_cgroup_plan_input *in, const char *root, char *scratch,
		      struct ts_cgroup_resize_result *res)
{
	struct ts_cgroup_set eff;
	char *text = NULL;

	if (!in->has_cpus)
		return;
	int r = read_set(d->dirfd, "cpuset.cpus.effective", scratch, &eff, &text);
	if (r < 0) {
		set_result(res, TS_CGROUP_RESIZE_FAILED,
			   "container '%s': '%s/%s/cpuset.cpus.effective': cannot read: %s",
			   t->container_id, root, d->path, strerror(-r));
		return;
	}
	res->effective_cpus = text;
	if (!ts_cgroup_set_equal(&eff, &in->new_cpus))
		set_result(res, TS_CGROUP_RESIZE_MISMATCH,
			   "container '%s': '%s/%s/cpuset.cpus.effective': expected '%s', kernel "
			   "applied '%s'",
			   t->container_id, root, d->path, t->cpus_str, text);
}

static int resize_direct(const struct ts_cgroup_resize_target *targets, struct direct *ds,
			 size_t nd, const struct ts_cgroup_resize_options *opts,
			 struct ts_cgroup_resize_result *results, struct ts_error **err)
{
	cleanup_close int rootfd = open(opts->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_free struct ts_cgroup_plan_input *in = calloc(nd + 1, sizeof(*in));
	cleanup_free char *scratch = malloc(SET_TEXT_MAX);
	struct ts_cgroup_write *w = NULL;
	size_t nw = 0;

	if (rootfd < 0)
		return ts_error_set(err, errno, "%s: cannot open", opts->root);
	if (in == NULL || scratch == NULL)
		return ts_error_set(err, ENOMEM, "resize: cannot plan writes");
	for (size_t i = 0; i < nd; i++) {
		struct direct *d = &ds[i];
		const struct ts_cgroup_resize_target *t = &targets[d->target];
		in[i].cgroup_path = d->path;
		in[i].has_cpus = t->cpus_str != NULL;
		in[i].has_mems = t->mems_str != NULL;
		/* Already validated by the caller. */
		if (in[i].has_cpus)
			(void)ts_cgroup_set_parse(t->cpus_str, &in[i].new_cpus);
		if (in[i].has_mems)
			(void)ts_cgroup_set_parse(t->mems_str, &in[i].new_mems);
		d->dirfd = openat(rootfd, d->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (d->dirfd < 0) {
			d->failed = true;
			if (errno == ENOENT)
				set_result(&results[d->target], TS_CGROUP_RESIZE_DEAD,
					   "container '%s': cgroup '%s/%s' is gone",
					   t->container_id, opts->root, d->path);
			else
				set_result(&results[d->target], TS_CGROUP_RESIZE_FAILED,
					   "container '%s': '%s/%s': cannot open: %s",
					   t->container_id, opts->root, d->path, strerror(errno));
			in[i].has_cpus = in[i].has_mems = false;
			continue;
		}
		if (read_current(d, t, &in[i], opts->root, scratch, &results[d->target]) < 0) {
			d->failed = true;
			in[i].has_cpus = in[i].has_mems = false;
		}
	}
	if (ts_cgroup_plan(in, nd, &w, &nw) < 0)
		return ts_error_set(err, ENOMEM, "resize: cannot plan writes");
	for (size_t k = 0; k < nw; k++) {
		struct direct *d = &ds[w[k].target];
		const struct ts_cgroup_resize_target *t = &targets[d->target];
		const char *file = w[k].mems ? "cpuset.mems" : "cpuset.cpus";
		if (d->failed)
			continue;
		int r = write_value(d->dirfd, file, w[k].value);
		if (r < 0) {
			d->failed = true;
			set_result(&results[d->target], TS_CGROUP_RESIZE_FAILED,
				   "container '%s': '%s/%s/%s': cannot write '%s': %s",
				   t->container_id, opts->root, d->path, file, w[k].value,
				   strerror(-r));
		}
	}
	ts_cgroup_writes_free(w, nw);
	for (size_t i = 0; i < nd; i++)
		if (!ds[i].failed)
			read_back(&ds[i], &targets[ds[i].target], &in[i], opts->root, scratch,
				  &results[ds[i].target]);
	return 0;
}

/* ---- runtime update ------------------------------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec ts;

	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An fd >= 3, so that dup2 onto 0..2 in the child always clears close-on-exec. */
static int fd_above_stdio(int fd)
{
	if (fd < 0 || fd > 2)
		return fd;
	int nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	int saved = errno;
	close(fd);
	errno = saved;
	return nfd;
}

/* Appends n (< OUTPUT_KEEP) bytes, dropping the oldest beyond OUTPUT_KEEP. */
static void keep_output(char *out, size_t *len, const char *buf, size_t n)
{
	if (*len + n > OUTPUT_KEEP) {
		size_t drop = *len + n - OUTPUT_KEEP;
		memmove(out, out + drop, *len - drop);
		*len -= drop;
	}
	memcpy(out + *len, buf, n);
	*len += n;
	out[*len] = '\0';
}

/* The last non-empty line of the output, at most 300 bytes. */
static const char *last_line(char *out, size_t len)
{
	while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' '))
		out[--len] = '\0';
	char *nl = strrchr(out, '\n');
	char *line = nl ? nl + 1 : out;
	if (strlen(line) > 300)
		line[300] = '\0';
	return line;
}

/* One `<runtime> update` of a target, run in a child of its own. */
struct update_job {
	const struct ts_cgroup_resize_target *t;
	struct ts_cgroup_resize_result *res;
	const char *argv[12];
	pid_t pid;	  /* > 0 while it runs */
	int rd;		  /* its stdout and stderr; -EBADF after EOF */
	int64_t deadline; /* now_ms() value it is killed at */
	int start_err;	  /* -errno when it could not be started */
	int status;	  /* waitpid status once reaped */
	bool timed_out;
	char out[OUTPUT_KEEP + 1];
	size_t out_len;
};

static void job_argv(struct update_job *j)
{
	const struct ts_cgroup_resize_target *t = j->t;
	size_t n = 0;

	j->argv[n++] = t->runtime_path;
	if (t->runtime_root != NULL) {
		j->argv[n++] = "--root";
		j->argv[n++] = t->runtime_root;
	}
	j->argv[n++] = "update";
	if (t->cpus_str != NULL) {
		j->argv[n++] = "--cpuset-cpus";
		j->argv[n++] = t->cpus_str;
	}
	if (t->mems_str != NULL) {
		j->argv[n++] = "--cpuset-mems";
		j->argv[n++] = t->mems_str;
	}
	j->argv[n++] = t->container_id;
	j->argv[n] = NULL;
}

/*
 * Fork and exec the job's argv with stdin /dev/null and stdout+stderr into
 * a pipe.  The child calls only async-signal-safe functions before execv().
 * Sets j->pid and j->rd, or j->start_err.
 */
static void job_start(struct update_job *j, int devnull, unsigned timeout_ms)
{
	int pipefd[2];

	j->pid = 0;
	j->rd = -EBADF;
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		j->start_err = -errno;
		return;
	}
	int rd = fd_above_stdio(pipefd[0]);
	cleanup_close int wr = fd_above_stdio(pipefd[1]);
	if (rd < 0 || wr < 0) {
		if (rd >= 0)
			close(rd);
		j->start_err = -EMFILE;
		return;
	}
	pid_t pid = fork();
	if (pid < 0) {
		j->start_err = -errno;
		close(rd);
		return;
	}
	if (pid == 0) {
		sigset_t all;
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		if (dup2(devnull, 0) < 0 || dup2(wr, 1) < 0 || dup2(wr, 2) < 0)
			_exit(126);
		execv(j->argv[0], (char *const *)(uintptr_t)j->argv);
		_exit(127);
	}
	j->pid = pid;
	j->rd = rd;
	j->deadline = now_ms() + timeout_ms;
}

/* Close the job's pipe for good (ts_closep() leaves the number). */
static void job_close(struct update_job *j)
{
	ts_closep(&j->rd);
	j->rd = -EBADF;
}

/* Kill and reap a job that ran out of time (or could not be watched). */
static void job_kill(struct update_job *j, bool timed_out)
{
	(void)kill(j->pid, SIGKILL);
	(void)waitpid(j->pid, NULL, 0);
	j->pid = 0;
	j->timed_out = timed_out;
	if (!timed_out)
		j->start_err = -EIO;
	job_close(j);
}

/* Up to this many updates run at once: about one per online cpu (a
 * `runc update` is mostly its own start-up, 8-10 ms of cpu here), at
 * least 2, at most 8.  One after the other, a settle that resized 30
 * shared containers through runc took 30 times that inside the create
 * (issue 15). */
static size_t parallel_updates(size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t k = cpus < 2 ? 2 : cpus > 8 ? 8 : (size_t)cpus;

	return n < k ? n : k;
}

/*
 * Run every job, at most parallel_updates() at a time, each killed after
 * timeout_ms of its own; their outputs are read as they come (a child
 * that fills its pipe would block).  Jobs end with status, timed_out or
 * start_err set.
 */
static void run_updates(struct update_job *jobs, size_t n, unsigned timeout_ms)
{
	cleanup_close int devnull = fd_above_stdio(open("/dev/null", O_RDONLY | O_CLOEXEC));
	size_t max = parallel_updates(n), next = 0, running = 0;
	struct pollfd pfds[8];
	size_t owner[8];

	if (devnull < 0) {
		for (size_t i = 0; i < n; i++)
			jobs[i].start_err = -errno;
		return;
	}
	while (next < n || running > 0) {
		int64_t now, wait_ms = -1;
		size_t np = 0;
		bool reap = false;

		while (running < max && next < n) {
			job_start(&jobs[next], devnull, timeout_ms);
			running += jobs[next].pid > 0;
			next++;
		}
		now = now_ms();
		for (size_t i = 0; i < next; i++) {
			struct update_job *j = &jobs[i];

			if (j->pid <= 0)
				continue;
			if (now >= j->deadline) {
				job_kill(j, true);
				running--;
				continue;
			}
			if (wait_ms < 0 || j->deadline - now < wait_ms)
				wait_ms = j->deadline - now;
			if (j->rd < 0) {
				reap = true; /* output closed: look for its exit */
				continue;
			}
			pfds[np] = (struct pollfd){.fd = j->rd, .events = POLLIN};
			owner[np++] = i;
		}
		if (running == 0)
			continue;
		/* a child past EOF is looked for every millisecond */
		if (reap && (wait_ms < 0 || wait_ms > 1))
			wait_ms = 1;
		int r = poll(pfds, np, (int)wait_ms);
		if (r < 0 && errno != EINTR) {
			for (size_t i = 0; i < next; i++)
				if (jobs[i].pid > 0)
					job_kill(&jobs[i], false);
			running = 0;
			continue;
		}
		for (size_t k = 0; r > 0 && k < np; k++) {
			struct update_job *j = &jobs[owner[k]];
			char buf[1024];
			ssize_t got;

			if (pfds[k].revents == 0)
				continue;
			got = read(j->rd, buf, sizeof(buf));
			if (got > 0)
				keep_output(j->out, &j->out_len, buf, (size_t)got);
			else if (got == 0 || errno != EINTR)
				job_close(j);
		}
		for (size_t i = 0; i < next; i++) {
			struct update_job *j = &jobs[i];
			pid_t w;

			if (j->pid <= 0 || j->rd >= 0)
				continue;
			w = waitpid(j->pid, &j->status, WNOHANG);
			if (w == j->pid || (w < 0 && errno != EINTR)) {
				if (w < 0)
					j->start_err = -errno;
				j->pid = 0;
				running--;
			}
		}
	}
}

/* The job's outcome in its result (nothing for a clean exit). */
static void job_result(const struct update_job *j, unsigned timeout_ms)
{
	const struct ts_cgroup_resize_target *t = j->t;
	struct ts_cgroup_resize_result *res = j->res;
	char out[OUTPUT_KEEP + 1];
	int status = j->status;

	memcpy(out, j->out, j->out_len + 1);
	if (j->start_err < 0)
		set_result(res, TS_CGROUP_RESIZE_FAILED, "container '%s': cannot run '%s': %s",
			   t->container_id, t->runtime_path, strerror(-j->start_err));
	else if (j->timed_out)
		set_result(res, TS_CGROUP_RESIZE_FAILED,
			   "container '%s': '%s update' timed out after %u ms", t->container_id,
			   t->runtime_path, timeout_ms);
	else if (WIFSIGNALED(status))
		set_result(res, TS_CGROUP_RESIZE_FAILED,
			   "container '%s': '%s update' killed by signal %d", t->container_id,
			   t->runtime_path, WTERMSIG(status));
	else if (WEXITSTATUS(status) == 127 && j->out_len == 0)
		set_result(res, TS_CGROUP_RESIZE_FAILED, "container '%s': cannot execute '%s'",
			   t->container_id, t->runtime_path);
	else if (WEXITSTATUS(status) != 0)
		set_result(res, TS_CGROUP_RESIZE_FAILED,
			   "container '%s': '%s update' failed with exit status %d: %s",
			   t->container_id, t->runtime_path, WEXITSTATUS(status),
			   last_line(out, j->out_len));
}

/* An update that failed because the container went away while it ran (a
 * `delete --force` racing the resize: "container does not exist") is no
 * failure: the container is gone, and its record with it. */
static void gone_meanwhile(const struct ts_cgroup_resize_target *t, const char *proc_root,
			   struct ts_cgroup_resize_result *res)
{
	char path[8192];
	struct stat st;

	if (check_alive(t, proc_root, res) == 0)
		return;
	if (t->runtime_root == NULL || strchr(t->container_id, '/') != NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s", t->runtime_root, t->container_id);
	/* runc's word for a state dir that a delete is removing; the dir
	 * itself may still be there (RemoveAll takes its files first) */
	if ((stat(path, &st) < 0 && errno == ENOENT) ||
	    (res->message != NULL &&
	     strstr(res->message, "msg=\"container does not exist\"") != NULL))
		set_result(res, TS_CGROUP_RESIZE_DEAD,
			   "container '%s': deleted while it was resized", t->container_id);
}

/* ---- entry point --------------------------------------------------------------------------- */

static int validate(const struct ts_cgroup_resize_target *t, const char *normalized, bool direct,
		    struct ts_error **err)
{
	struct ts_cgroup_set s;
	const char *id = t->container_id;

	if (direct && normalized == NULL)
		return ts_error_set(err, 0, "resize: container '%s': invalid cgroup path '%s'", id,
				    t->cgroup_path ? t->cgroup_path : "");
	if (t->cpus_str != NULL && ts_cgroup_set_parse(t->cpus_str, &s) < 0)
		return ts_error_set(err, 0, "resize: container '%s': invalid cpu list '%s'", id,
				    t->cpus_str);
	if (t->mems_str != NULL && ts_cgroup_set_parse(t->mems_str, &s) < 0)
		return ts_error_set(err, 0, "resize: container '%s': invalid mems list '%s'", id,
				    t->mems_str);
	if (!direct && (t->runtime_path == NULL || t->runtime_path[0] == '\0'))
		return ts_error_set(err, 0, "resize: container '%s': no runtime for update", id);
	return 0;
}

static bool use_direct(const struct ts_cgroup_resize_target *t, const char *normalized,
		       enum ts_cgroup_mode mode)
{
	if (mode != TS_CGROUP_MODE_UNIFIED || t->driver == TS_CGROUP_DRIVER_SYSTEMD)
		return false;
	if (t->driver == TS_CGROUP_DRIVER_AUTO && normalized != NULL && is_systemd_path(normalized))
		return false;
	return true;
}

static void directs_free(struct direct *ds, size_t n)
{
	for (size_t i = 0; ds != NULL && i < n; i++) {
		free(ds[i].path);
		ts_closep(&ds[i].dirfd);
	}
	free(ds);
}

int ts_cgroup_resize(const struct ts_cgroup_resize_target *targets, size_t n,
		     const struct ts_cgroup_resize_options *opts,
		     struct ts_cgroup_resize_result **ret_results, struct ts_error **err)
{
	const char *proc_root = opts->proc_root ? opts->proc_root : "/proc";
	unsigned timeout_ms = opts->timeout_ms ? opts->timeout_ms : UPDATE_TIMEOUT_MS_DEFAULT;
	struct ts_cgroup_resize_result *results = calloc(n + 1, sizeof(*results));
	struct direct *ds = calloc(n + 1, sizeof(*ds));
	bool *direct = calloc(n + 1, sizeof(*direct));
	struct update_job *jobs = NULL;
	size_t nd = 0, nj = 0;
	int r = 0;

	if (results == NULL || ds == NULL || direct == NULL) {
		r = ts_error_set(err, ENOMEM, "resize: cannot resize containers");
		goto out;
	}
	if (ts_cgroup_mode_to_string(opts->mode) == NULL) {
		r = ts_error_set(err, 0, "resize: invalid cgroup mode");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ts_cgroup_resize_target *t = &targets[i];
		cleanup_free char *p = t->cgroup_path ? normalize_path(t->cgroup_path) : NULL;
		direct[i] = use_direct(t, p, opts->mode);
		results[i].via_runtime = !direct[i];
		if ((r = validate(t, p, direct[i], err)) < 0)
			goto out;
		if (!direct[i] || check_alive(t, proc_root, &results[i]) == 0)
			continue;
		ds[nd++] = (struct direct){.target = i, .path = TAKE_PTR(p), .dirfd = -EBADF};
	}
	if (nd > 0 && (r = resize_direct(targets, ds, nd, opts, results, err)) < 0)
		goto out;
	jobs = calloc(n + 1, sizeof(*jobs));
	if (jobs == NULL) {
		r = ts_error_set(err, ENOMEM, "resize: cannot resize containers");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (direct[i] || check_alive(&targets[i], proc_root, &results[i]) == 0)
			continue;
		jobs[nj] = (struct update_job){.t = &targets[i], .res = &results[i], .rd = -EBADF};
		job_argv(&jobs[nj++]);
		results[i].via_runtime = true;
	}
	run_updates(jobs, nj, timeout_ms);
	for (size_t k = 0; k < nj; k++) {
		job_result(&jobs[k], timeout_ms);
		if (jobs[k].res->status == TS_CGROUP_RESIZE_FAILED)
			gone_meanwhile(jobs[k].t, proc_root, jobs[k].res);
	}
	r = 0;
	for (size_t i = 0; i < n; i++)
		if (results[i].status != TS_CGROUP_RESIZE_OK)
			r++;
	*ret_results = TAKE_PTR(results);
out:
	ts_cgroup_resize_results_free(results, n);
	directs_free(ds, nd);
	free(direct);
	free(jobs);
	return r;
}
