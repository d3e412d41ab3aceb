/*
 * exec.c - run one plugin: fork, sandbox, exec "<path> invoke", feed the
 * request, collect bounded output, enforce the timeout on the whole process
 * group.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

/* What a child that could not exec reports through its status pipe.  step
 * points into the program's read-only data, which fork keeps at the same
 * address in the parent. */
struct child_status {
	int errnum;
	const char *step;
	const char *arg; /* a path of the sandbox config, or NULL */
};

struct child_args {
	int in_fd, out_fd, err_fd, status_fd;
	unsigned max_fd;
	const char *path;
	char *const *argv;
	char *const *envp;
	struct ts_plugin_sandbox_prep *prep;
	const struct ts_plugin_cgroup *cgroup;
	sigset_t empty_mask;
};

void ts_plugin_output_release(struct ts_plugin_output *o)
{
	if (o == NULL)
		return;
	free(o->out);
	free(o->errout);
	*o = (struct ts_plugin_output){0};
}

static void child_fail(int fd, int errnum, const char *step, const char *arg)
{
	struct child_status st;

	/* no padding byte of our stack goes through the pipe uninitialised */
	memset(&st, 0, sizeof(st));
	st.errnum = errnum;
	st.step = step;
	st.arg = arg;

	(void)!write(fd, &st, sizeof(st));
	_exit(127);
}

/* Between fork and exec: async-signal-safe calls only. */
static void child_main(const struct child_args *a)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	const char *step = NULL, *arg = NULL;
	int status_fd = a->status_fd;
	int r;

	/* First: whatever it becomes is in its cgroup, and the fds of the
	 * cgroup files are where the parent opened them. */
	r = ts_plugin_cgroup_join(a->cgroup, &arg);
	if (r < 0)
		child_fail(status_fd, -r, "join cgroup", arg);
	if (setpgid(0, 0) < 0)
		child_fail(status_fd, errno, "setpgid", NULL);
	if (chdir("/") < 0)
		child_fail(status_fd, errno, "chdir", NULL);
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &dfl, NULL); /* fails for SIGKILL/SIGSTOP and RT internals */
	if (sigprocmask(SIG_SETMASK, &a->empty_mask, NULL) < 0)
		child_fail(status_fd, errno, "sigprocmask", NULL);
	/* When we were started with fds 0-2 closed, our pipes may sit there:
	 * move every one above 2 first, so that no dup2() below can land on a
	 * pipe still needed or keep a close-on-exec flag (dup2(fd, fd) does). */
	int fds[4] = {a->in_fd, a->out_fd, a->err_fd, status_fd};
	for (size_t i = 0; i < 4; i++) {
		if (fds[i] < 3 && (fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3)) < 0)
			child_fail(status_fd, errno, "fcntl(F_DUPFD_CLOEXEC)", NULL);
	}
	status_fd = fds[3];
	if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 2) < 0)
		child_fail(status_fd, errno, "dup2", NULL);
	if (status_fd != 3) {
		if (dup3(status_fd, 3, O_CLOEXEC) < 0)
			child_fail(status_fd, errno, "dup3", NULL);
		status_fd = 3;
	}
	if (syscall(SYS_close_range, 4U, ~0U, 0U) < 0) {
		for (unsigned fd = 4; fd <= a->max_fd; fd++)
			(void)close((int)fd);
	}
	r = ts_plugin_sandbox_apply(a->prep, &step, &arg);
	if (r < 0)
		child_fail(status_fd, -r, step, arg);
	execve(a->path, a->argv, a->envp);
	child_fail(status_fd, errno, NULL, NULL);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Append what fd has to *buf, keeping at most max bytes.  Returns 1 while
 * open, 0 at EOF, -1 when more than max bytes came and strict is set. */
static int drain(int fd, char **buf, size_t *len, size_t max, bool strict)
{
	char chunk[16384];
	ssize_t n = read(fd, chunk, sizeof(chunk));

	if (n < 0)
		return (errno == EINTR || errno == EAGAIN) ? 1 : 0;
	if (n == 0)
		return 0;
	size_t keep = (size_t)n;
	if (*len + keep > max) {
		if (strict)
			return -1;
		keep = max - *len;
	}
	if (keep > 0) {
		char *nb = realloc(*buf, *len + keep + 1);

		if (nb == NULL)
			return -1;
		memcpy(nb + *len, chunk, keep);
		*len += keep;
		nb[*len] = '\0';
		*buf = nb;
	}
	return 1;
}

struct io {
	int in, out, err, pidfd;
	const char *req;
	size_t req_len, sent;
};

/* The group, and the cgroup, which holds what left the group (setsid). */
static void kill_group(pid_t pid, const struct ts_plugin_cgroup *cg)
{
	(void)kill(-pid, SIGKILL); /* ESRCH once every member is gone */
	(void)kill(pid, SIGKILL);
	ts_plugin_cgroup_kill(cg);
}

/* Poll until the plugin exited and closed its output, or the deadline. */
static void supervise(pid_t pid, struct io *io, unsigned timeout_ms,
		      const struct ts_plugin_cgroup *cg, struct ts_plugin_output *o)
{
	uint64_t deadline = now_ms() + timeout_ms;
	bool exited = false;

	while (!exited || io->out >= 0 || io->err >= 0) {
		struct pollfd fds[4];
		int nfds = 0, idx_in = -1, idx_out = -1, idx_err = -1, idx_pid = -1;
		uint64_t now = now_ms();

		if (now >= deadline) {
			kill_group(pid, cg);
			o->timed_out = true;
			break;
		}
		if (io->in >= 0) {
			idx_in = nfds;
			fds[nfds++] = (struct pollfd){io->in, POLLOUT, 0};
		}
		if (io->out >= 0) {
			idx_out = nfds;
			fds[nfds++] = (struct pollfd){io->out, POLLIN, 0};
		}
		if (io->err >= 0) {
			idx_err = nfds;
			fds[nfds++] = (struct pollfd){io->err, POLLIN, 0};
		}
		if (!exited && io->pidfd >= 0) {
			idx_pid = nfds;
			fds[nfds++] = (struct pollfd){io->pidfd, POLLIN, 0};
		}
		int wait = (int)(deadline - now);
		if (!exited && io->pidfd < 0 && wait > 10)
			wait = 10;
		if (poll(fds, nfds, wait) < 0 && errno != EINTR)
			break;
		if (idx_in >= 0 && fds[idx_in].revents != 0) {
			ssize_t n = send(io->in, io->req + io->sent, io->req_len - io->sent,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			if (n > 0)
				io->sent += (size_t)n;
			if ((n < 0 && errno != EAGAIN && errno != EINTR) ||
			    io->sent == io->req_len) {
				(void)shutdown(io->in, SHUT_WR);
				(void)close(TAKE_FD(io->in));
			}
		}
		if (idx_out >= 0 && fds[idx_out].revents != 0) {
			int r = drain(io->out, &o->out, &o->out_len, TS_PLUGIN_STDOUT_MAX, true);

			if (r < 0) {
				kill_group(pid, cg);
				o->overflow = true;
				break;
			}
			if (r == 0)
				(void)close(TAKE_FD(io->out));
		}
		if (idx_err >= 0 && fds[idx_err].revents != 0 &&
		    drain(io->err, &o->errout, &o->errout_len, TS_PLUGIN_STDERR_MAX, false) == 0)
			(void)close(TAKE_FD(io->err));
		if (!exited && (idx_pid < 0 || fds[idx_pid].revents != 0) &&
		    waitpid(pid, &o->wait_status, WNOHANG) == pid) {
			exited = true;
			/* Whatever it left behind goes with it: its group, and
			 * what left the group but not the cgroup. */
			(void)kill(-pid, SIGKILL);
			ts_plugin_cgroup_kill(cg);
		}
	}
	if (!exited)
		while (waitpid(pid, &o->wait_status, 0) < 0 && errno == EINTR)
			;
}

static int ensure_buffers(struct ts_plugin_output *o)
{
	if (o->out == NULL)
		o->out = calloc(1, 1);
	if (o->errout == NULL)
		o->errout = calloc(1, 1);
	return (o->out == NULL || o->errout == NULL) ? -ENOMEM : 0;
}

int ts_plugin_exec(const struct ts_plugin *p, const char *request, size_t request_len,
		   struct ts_plugin_output *ret, struct ts_error **err)
{
	struct ts_plugin_sandbox_prep prep = {0};
	struct ts_plugin_cgroup cg = {0};
	cleanup_close int in_p = -EBADF, in_c = -EBADF, out_p = -EBADF, out_c = -EBADF;
	cleanup_close int err_p = -EBADF, err_c = -EBADF, st_p = -EBADF, st_c = -EBADF;
	cleanup_close int pidfd = -EBADF;
	char *const argv[] = {(char *)p->path, (char *)"invoke", NULL};
	char *const envp[] = {(char *)TS_PLUGIN_ENV_PATH, NULL};
	struct ts_plugin_output o = {0};
	struct child_status st = {0, NULL, NULL};
	struct rlimit rl = {1024, 1024};
	int sv[2], fds[2];
	ssize_t n;
	pid_t pid;
	int r;

	/* Checked at each run, just before it: the binary is what runs. */
	r = ts_plugin_path_check(p->path, err);
	if (r == -ENOENT) {
		/* as execve would fail; the walk's message names a component */
		ts_error_clear(err);
		return ts_error_set(err, ENOENT, "cannot execute");
	}
	if (r < 0)
		return r;
	r = ts_plugin_sandbox_prepare(&p->sandbox, &prep, err);
	if (r < 0)
		return r;
	r = ts_plugin_cgroup_create(&p->sandbox, &cg, err);
	if (r < 0)
		goto out;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		r = ts_error_set(err, errno, "cannot execute: socketpair");
		goto out;
	}
	in_p = sv[0];
	in_c = sv[1];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = ts_error_set(err, errno, "cannot execute: pipe");
		goto out;
	}
	out_p = fds[0];
	out_c = fds[1];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = ts_error_set(err, errno, "cannot execute: pipe");
		goto out;
	}
	err_p = fds[0];
	err_c = fds[1];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = ts_error_set(err, errno, "cannot execute: pipe");
		goto out;
	}
	st_p = fds[0];
	st_c = fds[1];
	(void)getrlimit(RLIMIT_NOFILE, &rl);

	struct child_args a = {
		.in_fd = in_c,
		.out_fd = out_c,
		.err_fd = err_c,
		.status_fd = st_c,
		.max_fd = rl.rlim_cur > 65536 ? 65536 : (unsigned)rl.rlim_cur,
		.path = p->path,
		.argv = argv,
		.envp = envp,
		.prep = &prep,
		.cgroup = &cg,
	};
	sigemptyset(&a.empty_mask);
	pid = fork();
	if (pid < 0) {
		r = ts_error_set(err, errno, "cannot execute: fork");
		goto out;
	}
	if (pid == 0)
		child_main(&a);
	(void)setpgid(pid, pid); /* also from here: no window where kill(-pid) misses */
	(void)close(TAKE_FD(in_c));
	(void)close(TAKE_FD(out_c));
	(void)close(TAKE_FD(err_c));
	(void)close(TAKE_FD(st_c));
	do
		n = read(st_p, &st, sizeof(st));
	while (n < 0 && errno == EINTR);
	if (n == sizeof(st)) {
		int status;

		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (st.step != NULL && st.arg != NULL)
			r = ts_error_set(err, st.errnum, "cannot sandbox: %s '%s'", st.step,
					 st.arg);
		else if (st.step != NULL)
			r = ts_error_set(err, st.errnum, "cannot sandbox: %s", st.step);
		else
			r = ts_error_set(err, st.errnum, "cannot execute");
		goto out;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0)
		(void)fcntl(pidfd, F_SETFD, FD_CLOEXEC);
	if (request_len == 0)
		(void)close(TAKE_FD(in_p));
	struct io io = {in_p, out_p, err_p, pidfd, request, request_len, 0};
	supervise(pid, &io, p->timeout_ms, &cg, &o);
	/* supervise() closed what reached EOF; the cleanups close the rest once. */
	if (io.in < 0)
		in_p = -EBADF;
	if (io.out < 0)
		out_p = -EBADF;
	if (io.err < 0)
		err_p = -EBADF;
	if (ensure_buffers(&o) < 0) {
		ts_plugin_output_release(&o);
		r = ts_error_set(err, ENOMEM, "cannot execute");
		goto out;
	}
	*ret = o;
	r = 0;
out:
	ts_plugin_cgroup_destroy(&cg);
	ts_plugin_sandbox_prep_release(&prep);
	return r;
}
