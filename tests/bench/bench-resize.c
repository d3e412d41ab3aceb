/*
 * bench-resize - cost of resizing N running shared-pool containers by direct
 * cgroup v2 writes, as after an exclusive create takes CPUs from the pool.
 *
 *   bench-resize [-n CONTAINERS] [-i ITERATIONS] [-r CGROUP_ROOT]
 *
 * Without -r it builds a fake cgroupfs tree in a temporary directory under
 * /dev/shm (tmpfs, in memory like cgroupfs; on ext4 every O_TRUNC rewrite
 * costs a block-allocation flush on close that cgroupfs never pays), or /tmp
 * when there is no /dev/shm (kubepods/pod<i>/ctr with cpuset.cpus 0-15, and cpuset.cpus.effective
 * written beforehand as the kernel would after the shrink) and removes it
 * afterwards.  Each iteration shrinks every container to 2-15 and grows it
 * back to 0-15 (two ts_cgroup_resize() calls, liveness checked against this
 * process's own /proc entry), and prints the median of the shrink calls:
 * total milliseconds and microseconds per container.  The target is 10 ms for
 * 200 containers; the exit status is 1 when the median exceeds it (only with
 * the default -n 200).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static int put(const char *dir, const char *file, const char *content)
{
	char path[512];
	cleanup_error struct ts_error *e = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (ts_write_file_atomic_at(AT_FDCWD, path, content, strlen(content), 0644, &e) < 0) {
		fprintf(stderr, "bench-resize: %s\n", e->msg);
		return -1;
	}
	return 0;
}

static int build_tree(const char *root, int n, char **paths)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/kubepods", root);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	for (int i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/kubepods/pod%d", root, i);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -1;
		snprintf(dir, sizeof(dir), "%s/kubepods/pod%d/ctr", root, i);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -1;
		if (put(dir, "cgroup.controllers", "cpuset cpu memory pids\n") < 0 ||
		    put(dir, "cpuset.cpus", "0-15\n") < 0 || put(dir, "cpuset.mems", "0\n") < 0 ||
		    put(dir, "cpuset.cpus.effective", "2-15\n") < 0)
			return -1;
		if (asprintf(&paths[i], "/kubepods/pod%d/ctr", i) < 0)
			return -1;
	}
	return 0;
}

static int resize_all(struct ts_cgroup_resize_target *t, int n, const char *cpus,
		      const struct ts_cgroup_resize_options *opts, int *ret_not_ok)
{
	struct ts_cgroup_resize_result *res = NULL;
	cleanup_error struct ts_error *e = NULL;

	for (int i = 0; i < n; i++)
		t[i].cpus_str = cpus;
	int r = ts_cgroup_resize(t, (size_t)n, opts, &res, &e);
	if (r < 0) {
		fprintf(stderr, "bench-resize: %s\n", e->msg);
		return r;
	}
	*ret_not_ok = r;
	ts_cgroup_resize_results_free(res, (size_t)n);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 200, iters = 21, opt, not_ok = 0;
	const char *root = NULL;
	struct stat st;
	char tmp[64];

	while ((opt = getopt(argc, argv, "n:i:r:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'i')
			iters = atoi(optarg);
		else if (opt == 'r')
			root = optarg;
		else
			return 2;
	}
	if (n <= 0 || iters <= 0)
		return 2;
	if (root == NULL) {
		bool shm = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode);
		snprintf(tmp, sizeof(tmp), "%s/ts-bench-resize-XXXXXX", shm ? "/dev/shm" : "/tmp");
		if (mkdtemp(tmp) == NULL)
			return 1;
		root = tmp;
	}
	char **paths = calloc((size_t)n, sizeof(*paths));
	struct ts_cgroup_resize_target *t = calloc((size_t)n, sizeof(*t));
	double *ms = calloc((size_t)iters, sizeof(*ms));
	if (paths == NULL || t == NULL || ms == NULL || build_tree(root, n, paths) < 0) {
		fprintf(stderr, "bench-resize: cannot build the tree under %s\n", root);
		return 1;
	}
	for (int i = 0; i < n; i++)
		t[i] = (struct ts_cgroup_resize_target){.container_id = paths[i] + 10,
							.cgroup_path = paths[i],
							.mems_str = "0",
							.pid = getpid()};
	const struct ts_cgroup_resize_options opts = {.root = root, .mode = TS_CGROUP_MODE_UNIFIED};
	for (int k = 0; k < iters; k++) {
		double start = bench_ms(CLOCK_MONOTONIC);
		if (resize_all(t, n, "2-15", &opts, &not_ok) < 0)
			return 1;
		ms[k] = bench_ms(CLOCK_MONOTONIC) - start;
		int grow_not_ok;
		if (resize_all(t, n, "0-15", &opts, &grow_not_ok) < 0)
			return 1;
	}
	qsort(ms, (size_t)iters, sizeof(*ms), bench_cmp_double);
	double median = ms[iters / 2];
	printf("bench-resize: %d containers, %d iterations: median %.3f ms total, %.1f us per "
	       "container (max %.3f ms); %d not ok; target 10 ms for 200\n",
	       n, iters, median, median * 1000.0 / n, ms[iters - 1], not_ok);
	if (root == tmp) {
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		if (system(cmd) != 0)
			fprintf(stderr, "bench-resize: cannot remove %s\n", tmp);
	}
	for (int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(t);
	free(ms);
	return not_ok != 0 || (n == 200 && median > 10.0) ? 1 : 0;
}
