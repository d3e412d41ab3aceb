/*
 * bench-exec - the cost of whole commands against the process floor,
 * measured in the same run.
 *
 *   bench-exec -n ITER [-t RATIO] LABEL=CMD [LABEL=CMD...]
 *
 * CMD is "[VAR=VALUE ...] PATH [ARG ...]", words split at spaces (no
 * spaces inside a word); the assignments go to the child's environment
 * only.  Each command runs ITER times with stdio on /dev/null (fork, exec,
 * wait4); the first command is the floor.  Prints one row per command:
 * median and 90th percentile wall time in milliseconds, the ratio of the
 * median to the floor's, the median CPU time (user + system, from wait4)
 * and its ratio.  With -t, every later row whose wall ratio exceeds RATIO
 * is marked SLOW (the exit status stays 0: timings are not assertions on a
 * shared machine).  A command that exits non-zero is reported as failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_WORDS 64

static int run(char *const argv[], char *const env[], double *ret_cpu_ms)
{
	struct rusage ru;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd < 0 || dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(126);
		for (size_t i = 0; env[i] != NULL; i++)
			if (putenv(env[i]) != 0)
				_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	*ret_cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
		      (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	double base_wall = 0, base_cpu = 0, limit = 0;
	int iter = 20, c;

	while ((c = getopt(argc, argv, "n:t:")) != -1) {
		switch (c) {
		case 'n':
			iter = atoi(optarg);
			break;
		case 't':
			limit = atof(optarg);
			break;
		default:
			return 2;
		}
	}
	if (optind >= argc || iter < 1 || iter > 100000) {
		fprintf(stderr, "usage: bench-exec -n ITER [-t RATIO] LABEL=CMD...\n");
		return 2;
	}
	printf("%-40s %9s %8s %7s %9s %7s\n", "command", "wall ms", "p90 ms", "ratio", "cpu ms",
	       "ratio");
	for (int a = optind; a < argc; a++) {
		char *label = strdup(argv[a]), *cmd = label != NULL ? strchr(label, '=') : NULL;
		char *words[MAX_WORDS], *env[MAX_WORDS], *w, *save = NULL;
		size_t nw = 0, ne = 0;
		double *t = calloc((size_t)iter, sizeof(double));
		double *cpu = calloc((size_t)iter, sizeof(double));
		int failures = 0;

		if (cmd == NULL || t == NULL || cpu == NULL) {
			fprintf(stderr, "bench-exec: expected LABEL=CMD, got '%s'\n", argv[a]);
			return 2;
		}
		*cmd++ = '\0';
		for (w = strtok_r(cmd, " ", &save); w != NULL && nw < MAX_WORDS - 1;
		     w = strtok_r(NULL, " ", &save)) {
			if (nw == 0 && w[0] != '/' && strchr(w, '=') != NULL && ne < MAX_WORDS - 1)
				env[ne++] = w;
			else
				words[nw++] = w;
		}
		words[nw] = NULL;
		env[ne] = NULL;
		if (nw == 0) {
			fprintf(stderr, "bench-exec: no command in '%s'\n", argv[a]);
			return 2;
		}
		for (int i = 0; i < iter; i++) {
			double t0 = bench_ms(CLOCK_MONOTONIC);

			if (run(words, env, &cpu[i]) != 0)
				failures++;
			t[i] = bench_ms(CLOCK_MONOTONIC) - t0;
		}
		qsort(t, (size_t)iter, sizeof(double), bench_cmp_double);
		qsort(cpu, (size_t)iter, sizeof(double), bench_cmp_double);
		double wall = t[iter / 2],
		       p90 = t[(iter * 9) / 10 < iter ? (iter * 9) / 10 : iter - 1];
		double cpum = cpu[iter / 2];
		if (a == optind) {
			base_wall = wall;
			base_cpu = cpum;
		}
		double ratio = base_wall > 0 ? wall / base_wall : 0;
		printf("%-40s %9.2f %8.2f %7.2f %9.2f %7.2f%s%s\n", label, wall, p90, ratio, cpum,
		       base_cpu > 0 ? cpum / base_cpu : 0,
		       limit > 0 && a > optind ? (ratio <= limit ? "  ok" : "  SLOW") : "",
		       failures ? "  (some runs failed)" : "");
		free(t);
		free(cpu);
		free(label);
	}
	return 0;
}
