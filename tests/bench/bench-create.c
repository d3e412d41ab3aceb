/*
 * bench-create - cost of a create through toposhim, against the runtime
 * alone, measured in the same run.
 *
 *   bench-create -n ITER -b BUNDLE -r RUNTIME -- LABEL=CMD [LABEL=CMD...]
 *
 * CMD is "[VAR=VALUE ...] PATH": the assignments (space-separated, no
 * spaces inside) are set in the child's environment only, so that a row
 * measures toposhim itself rather than a shell wrapper around it.
 *
 * For each command (an absolute path of toposhim, or of the runtime itself)
 * and each iteration: restore BUNDLE/config.json from BUNDLE/config.json.orig,
 * run `CMD create --bundle BUNDLE ID` with stdio on /dev/null, wait for it
 * (wait4: wall time and the child's peak RSS), then `RUNTIME delete --force
 * ID`.  Prints one row per command: median and 90th percentile wall time in
 * milliseconds, the ratio of the median to the first command's, the median
 * CPU time (user + system of the child and what it waited for, from wait4:
 * stable on a loaded machine, unlike wall time) with its ratio, and the
 * largest peak RSS in KiB.  Environment is inherited (TOPOSHIM_CONFIG ...).
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

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static int run(char *const argv[], char *const env[], long *ret_maxrss_kib, double *ret_cpu_ms)
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
		for (size_t i = 0; env != NULL && env[i] != NULL; i++)
			if (putenv(env[i]) != 0)
				_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return -errno;
	if (ret_maxrss_kib != NULL)
		*ret_maxrss_kib = ru.ru_maxrss;
	if (ret_cpu_ms != NULL)
		*ret_cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
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

int main(int argc, char **argv)
{
	char *bundle = NULL, *runtime = NULL;
	char orig[4096], conf[4096], id[64];
	double base_median = 0, base_cpu = 0;
	int iter = 20, c;

	while ((c = getopt(argc, argv, "n:b:r:")) != -1) {
		switch (c) {
		case 'n':
			iter = atoi(optarg);
			break;
		case 'b':
			bundle = optarg;
			break;
		case 'r':
			runtime = optarg;
			break;
		default:
			return 2;
		}
	}
	if (runtime == NULL)
		runtime = (char *)"/usr/sbin/runc"; /* never written through */
	if (bundle == NULL || optind >= argc || iter < 1 || iter > 10000) {
		fprintf(stderr, "usage: bench-create -n ITER -b BUNDLE -r RUNTIME LABEL=CMD...\n");
		return 2;
	}
	snprintf(orig, sizeof(orig), "%s/config.json.orig", bundle);
	snprintf(conf, sizeof(conf), "%s/config.json", bundle);
	printf("%-26s %10s %8s %7s %10s %7s %12s\n", "create through", "wall ms", "p90 ms", "ratio",
	       "cpu ms", "ratio", "peak RSS KiB");
	for (int a = optind; a < argc; a++) {
		char *label = strdup(argv[a]), *cmd = strchr(label, '=');
		double *t = calloc((size_t)iter, sizeof(double));
		double *cpu = calloc((size_t)iter, sizeof(double));
		long maxrss = 0;
		int failures = 0;

		if (cmd == NULL || t == NULL || cpu == NULL) {
			fprintf(stderr, "bench-create: expected LABEL=CMD, got '%s'\n", argv[a]);
			return 2;
		}
		*cmd++ = '\0';
		/* leading VAR=VALUE words go to the child's environment */
		char *env[32];
		size_t nenv = 0;
		char *word;
		while ((word = strchr(cmd, ' ')) != NULL && strchr(cmd, '=') != NULL &&
		       strchr(cmd, '=') < word && nenv < ARRAY_LEN(env) - 1) {
			*word = '\0';
			env[nenv++] = cmd;
			cmd = word + 1;
		}
		env[nenv] = NULL;
		for (int i = 0; i < iter; i++) {
			char *create[] = {cmd, (char *)"create", (char *)"--bundle", bundle, id,
					  NULL};
			char *del[] = {runtime, (char *)"delete", (char *)"--force", id, NULL};
			long rss = 0;
			double t0;

			snprintf(id, sizeof(id), "bench-%d-%d-%d", (int)getpid(), a, i);
			if (copy_file(orig, conf) < 0) {
				fprintf(stderr, "bench-create: cannot restore %s\n", conf);
				return 1;
			}
			t0 = bench_ms(CLOCK_MONOTONIC);
			if (run(create, env, &rss, &cpu[i]) != 0)
				failures++;
			t[i] = bench_ms(CLOCK_MONOTONIC) - t0;
			if (rss > maxrss)
				maxrss = rss;
			(void)run(del, NULL, NULL, NULL);
		}
		qsort(t, (size_t)iter, sizeof(double), bench_cmp_double);
		qsort(cpu, (size_t)iter, sizeof(double), bench_cmp_double);
		double median = t[iter / 2],
		       p90 = t[(iter * 9) / 10 < iter ? (iter * 9) / 10 : iter - 1];
		double cpu_median = cpu[iter / 2];
		if (a == optind) {
			base_median = median;
			base_cpu = cpu_median;
		}
		printf("%-26s %10.2f %8.2f %7.2f %10.2f %7.2f %12ld%s\n", label, median, p90,
		       base_median > 0 ? median / base_median : 0, cpu_median,
		       base_cpu > 0 ? cpu_median / base_cpu : 0, maxrss,
		       failures ? "  (some creates failed)" : "");
		free(t);
		free(cpu);
		free(label);
	}
	return 0;
}
