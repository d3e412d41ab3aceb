/*
 * bench-lifecycle - full container lifecycles (and passthrough calls)
 * through several commands, paired: each round runs every command in turn,
 * starting with a different one each round (A B C, B C A, ...), and the
 * ratios are the medians of the per-round ratios to the first command.
 *
 *   bench-lifecycle -r ROUNDS -k K -b BUNDLE [-p OP -i ID] -- LABEL=CMD...
 *
 * CMD is "[VAR=VALUE ...] PATH": the assignments (no spaces inside) go to
 * the child's environment only, so a row measures the program itself; but
 * BENCH_BUNDLE=DIR is the bench's own: this row's lifecycles use the bundle
 * DIR instead of -b's (e.g. the runtime alone with the config.json a wrapper
 * wrote, to tell the runtime's extra work from the wrapper's).
 *
 * Lifecycle mode (no -p): K times per command and round: restore
 * BUNDLE/config.json from BUNDLE/config.json.orig, then `CMD create --bundle
 * BUNDLE ID`, `CMD start ID`, `CMD state ID` until it reports "stopped",
 * `CMD delete ID` (the container's process must exit by itself).
 * Passthrough mode (-p state|kill|list|exec, -i a running container): K
 * calls of `CMD state ID`, `CMD kill ID CONT`, `CMD list` or
 * `CMD exec ID true`.
 *
 * Prints per command: the median over rounds of the wall time of one
 * lifecycle (or call) in ms, the median per-round wall ratio to the first
 * command, the same for CPU time (user + system of the children, from
 * wait4), and the largest peak RSS of any child in KiB (after an exec the
 * kernel keeps the larger of the two images, so this is the wrapper or the
 * runtime, whichever is bigger).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_CMDS 8
#define MAX_ROUNDS 64

struct cmd {
	char *label;
	char *path;
	char *bundle; /* BENCH_BUNDLE=, or NULL for -b's */
	char *env[16];
	double wall[MAX_ROUNDS], cpu[MAX_ROUNDS];
	long maxrss;
	int failures;
};

/* Run argv with env added; stdout into out (up to cap bytes) when out is
 * not NULL, else /dev/null.  Adds the child's CPU ms to *cpu. */
static int run(struct cmd *c, char *const argv[], char *out, size_t cap, double *cpu)
{
	struct rusage ru;
	int status, pfd[2] = {-1, -1};
	pid_t pid;

	if (out != NULL && pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd < 0 || dup2(fd, 0) < 0 || dup2(out != NULL ? pfd[1] : fd, 1) < 0 ||
		    dup2(fd, 2) < 0)
			_exit(126);
		for (size_t i = 0; c->env[i] != NULL; i++)
			if (putenv(c->env[i]) != 0)
				_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (out != NULL) {
		size_t n = 0;
		ssize_t k;

		close(pfd[1]);
		while (n + 1 < cap && (k = read(pfd[0], out + n, cap - 1 - n)) > 0)
			n += (size_t)k;
		out[n] = '\0';
		close(pfd[0]);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	if (ru.ru_maxrss > c->maxrss)
		c->maxrss = ru.ru_maxrss;
	*cpu += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		(double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC), out;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
	return n == 0 ? 0 : -EIO;
}

static int lifecycle(struct cmd *c, char *bundle, char *id, double *cpu)
{
	char orig[4096], conf[4096], out[8192];
	char *create[] = {c->path, (char *)"create", (char *)"--bundle", bundle, id, NULL};
	char *start[] = {c->path, (char *)"start", id, NULL};
	char *state[] = {c->path, (char *)"state", id, NULL};
	char *del[] = {c->path, (char *)"delete", id, NULL};
	int bad = 0;

	snprintf(orig, sizeof(orig), "%s/config.json.orig", bundle);
	snprintf(conf, sizeof(conf), "%s/config.json", bundle);
	if (copy_file(orig, conf) < 0)
		return -1;
	bad |= run(c, create, NULL, 0, cpu) != 0;
	bad |= run(c, start, NULL, 0, cpu) != 0;
	for (int i = 0; i < 2000; i++) {
		if (run(c, state, out, sizeof(out), cpu) != 0) {
			bad = 1;
			break;
		}
		if (strstr(out, "\"status\": \"stopped\"") != NULL)
			break;
	}
	bad |= run(c, del, NULL, 0, cpu) != 0;
	return bad ? -1 : 0;
}

static int passthrough(struct cmd *c, const char *op, char *id, double *cpu)
{
	char *state[] = {c->path, (char *)"state", id, NULL};
	char *kill[] = {c->path, (char *)"kill", id, (char *)"CONT", NULL};
	char *list[] = {c->path, (char *)"list", NULL};
	char *exec[] = {c->path, (char *)"exec", id, (char *)"true", NULL};
	char *const *argv = strcmp(op, "state") == 0  ? state
			    : strcmp(op, "kill") == 0 ? kill
			    : strcmp(op, "list") == 0 ? list
						      : exec;

	return run(c, argv, NULL, 0, cpu) == 0 ? 0 : -1;
}

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS];

	memcpy(s, v, sizeof(double) * (size_t)n);
	qsort(s, (size_t)n, sizeof(double), bench_cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static int parse_cmd(char *arg, struct cmd *c)
{
	char *cmd = strchr(arg, '='), *word;
	size_t nenv = 0;

	if (cmd == NULL)
		return -1;
	*cmd++ = '\0';
	c->label = arg;
	while ((word = strchr(cmd, ' ')) != NULL && strchr(cmd, '=') != NULL &&
	       strchr(cmd, '=') < word && nenv < 15) {
		*word = '\0';
		if (strncmp(cmd, "BENCH_BUNDLE=", 13) == 0)
			c->bundle = cmd + 13;
		else
			c->env[nenv++] = cmd;
		cmd = word + 1;
	}
	c->env[nenv] = NULL;
	c->path = cmd;
	return 0;
}

int main(int argc, char **argv)
{
	static struct cmd cmds[MAX_CMDS];
	char *bundle = NULL, *live_id = NULL;
	const char *op = NULL;
	int rounds = 8, k = 10, ncmd = 0, opt;

	while ((opt = getopt(argc, argv, "r:k:b:p:i:")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 'k':
			k = atoi(optarg);
			break;
		case 'b':
			bundle = optarg;
			break;
		case 'p':
			op = optarg;
			break;
		case 'i':
			live_id = optarg;
			break;
		default:
			return 2;
		}
	}
	for (int a = optind; a < argc && ncmd < MAX_CMDS; a++)
		if (parse_cmd(argv[a], &cmds[ncmd++]) < 0) {
			fprintf(stderr, "bench-lifecycle: expected LABEL=CMD, got '%s'\n", argv[a]);
			return 2;
		}
	if (ncmd == 0 || rounds < 1 || rounds > MAX_ROUNDS || k < 1 ||
	    (op == NULL && bundle == NULL) || (op != NULL && live_id == NULL)) {
		fprintf(stderr, "usage: bench-lifecycle -r ROUNDS -k K (-b BUNDLE | -p OP -i ID) "
				"LABEL=CMD...\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++)
		for (int j = 0; j < ncmd; j++) {
			struct cmd *c = &cmds[(r + j) % ncmd];
			double cpu = 0, t0 = bench_ms(CLOCK_MONOTONIC);
			char id[64];

			for (int i = 0; i < k; i++) {
				int rc;

				snprintf(id, sizeof(id), "bench-%d-%d", (int)getpid(), i);
				rc = op != NULL ? passthrough(c, op, live_id, &cpu)
						: lifecycle(c, c->bundle ? c->bundle : bundle, id,
							    &cpu);
				if (rc < 0)
					c->failures++;
			}
			c->wall[r] = (bench_ms(CLOCK_MONOTONIC) - t0) / k;
			c->cpu[r] = cpu / k;
		}
	printf("%-34s %9s %7s %9s %7s %9s\n", op != NULL ? op : "lifecycle through", "wall ms",
	       "ratio", "cpu ms", "ratio", "RSS KiB");
	for (int j = 0; j < ncmd; j++) {
		double wr[MAX_ROUNDS], cr[MAX_ROUNDS];

		for (int r = 0; r < rounds; r++) {
			wr[r] = cmds[j].wall[r] / cmds[0].wall[r];
			cr[r] = cmds[0].cpu[r] > 0 ? cmds[j].cpu[r] / cmds[0].cpu[r] : 0;
		}
		printf("%-34s %9.2f %7.3f %9.2f %7.3f %9ld%s\n", cmds[j].label,
		       median(cmds[j].wall, rounds), median(wr, rounds),
		       median(cmds[j].cpu, rounds), median(cr, rounds), cmds[j].maxrss,
		       cmds[j].failures ? "  (failures)" : "");
	}
	return 0;
}
