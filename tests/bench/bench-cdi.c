/*
 * bench-cdi - create-path CDI cost: registry load + injection of one device
 * with 1, 100 and 1000 spec files: cold (no index), warm (valid index), and
 * with one spec file rewritten since the index was written; printed as a
 * table with the cold and warm cases' peak RSS.  A program, not a test:
 * `make check` builds it; run ./tests/bench/bench-cdi.
 * Targets (issue 3): warm <= 2 ms and cold <= 50 ms at 1000 files, peak RSS
 * <= 16 MiB.  Each case runs in its own child so that RSS peaks do not mix;
 * times are medians of 11 runs, wall clock and process CPU time (the CPU
 * column is what to compare on a loaded machine).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cdi/cdi.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define RUNS 11 /* medians of 11 runs: the build machine is shared */

static const char spec_fmt[] =
	"cdiVersion: 0.6.0\n"
	"kind: vendor%1$d.example.com/gpu\n"
	"annotations: {vendor.example.com/driver: \"550.54\"}\n"
	"containerEdits:\n"
	"  env: [VENDOR%1$d_VISIBLE=void]\n"
	"  deviceNodes:\n"
	"  - {path: /dev/vendor%1$dctl, type: c, major: 195, minor: 255, permissions: rw}\n"
	"  mounts:\n"
	"  - {hostPath: /usr/lib/libvendor%1$d.so.1, containerPath: /usr/lib/libvendor%1$d.so.1,"
	" options: [ro, nosuid, nodev, bind]}\n"
	"  hooks:\n"
	"  - {hookName: createContainer, path: /usr/bin/vendor-hook, args: [vendor-hook, "
	"update-ldcache]}\n"
	"devices:\n"
	"- name: \"0\"\n"
	"  containerEdits:\n"
	"    deviceNodes: [{path: /dev/vendor%1$d-0, type: c, major: 195, minor: 0, fileMode: "
	"0666}]\n"
	"- name: \"1\"\n"
	"  containerEdits:\n"
	"    deviceNodes: [{path: /dev/vendor%1$d-1, type: c, major: 195, minor: 1, fileMode: "
	"0666}]\n"
	"- name: all\n"
	"  containerEdits:\n"
	"    deviceNodes:\n"
	"    - {path: /dev/vendor%1$d-0, type: c, major: 195, minor: 0}\n"
	"    - {path: /dev/vendor%1$d-1, type: c, major: 195, minor: 1}\n";

static const char config_text[] =
	"{\"ociVersion\":\"1.0.2\",\"process\":{\"user\":{\"uid\":0,\"gid\":0},\"args\":[\"sh\"],"
	"\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\","
	"\"TERM=xterm\"],\"cwd\":\"/\"},\"root\":{\"path\":\"rootfs\"},\"mounts\":[{"
	"\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},{\"destination\":"
	"\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"nosuid\",\"strictatime\","
	"\"mode=755\",\"size=65536k\"]}],\"annotations\":{\"cdi.k8s.io/bench\":"
	"\"vendor%d.example.com/gpu=0\"},\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":"
	"\"mount\"}]}}";

static int age(const char *path)
{
	struct timespec t[2];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 100;
	t[1] = t[0];
	return utimensat(AT_FDCWD, path, t, 0);
}

static int make_specs(const char *dir, int n)
{
	cleanup_close int dfd = -EBADF;

	if (mkdir(dir, 0755) < 0)
		return -errno;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		cleanup_free char *text = NULL;
		cleanup_error struct ts_error *err = NULL;
		char name[64], path[512];
		int len = asprintf(&text, spec_fmt, i);

		snprintf(name, sizeof(name), "vendor%d.yaml", i);
		if (len < 0 ||
		    ts_write_file_atomic_at(dfd, name, text, (size_t)len, 0644, &err) < 0)
			return -EIO;
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (age(path) < 0)
			return -errno;
	}
	return age(dir);
}

/* One create's worth of CDI work. @return wall ms (*cpu_ms: CPU ms), or < 0 on error. */
static double one_create(char **dirs, const char *index, int n, double *cpu_ms)
{
	struct ts_cdi_options opts = {.spec_dirs = dirs, .index_path = (char *)(uintptr_t)index};
	struct ts_cdi_registry *reg = NULL;
	struct ts_cdi_injection *inj = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_free char *text = NULL;
	double t0, t1, c0;
	int len = asprintf(&text, config_text, n / 2);

	if (len < 0 || ts_json_parse(text, (size_t)len, "config.json", &config, &err) < 0)
		return -1;
	t0 = bench_ms(CLOCK_MONOTONIC);
	c0 = bench_ms(CLOCK_PROCESS_CPUTIME_ID);
	if (ts_cdi_registry_load(&opts, &reg, &err) < 0 ||
	    ts_cdi_inject_requested(reg, config, "config.json", false, &inj, &err) != 1) {
		fprintf(stderr, "bench-cdi: %s\n", err ? err->msg : "nothing injected");
		ts_cdi_registry_free(reg);
		return -1;
	}
	t1 = bench_ms(CLOCK_MONOTONIC);
	*cpu_ms = bench_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
	ts_cdi_injection_free(inj);
	ts_cdi_registry_free(reg);
	return t1 - t0;
}

/* Run a case in a child; write "<wall ms> <cpu ms> <maxrss KiB>" (medians) back through a pipe. */
enum mode {
	COLD,	 /* no index */
	WARM,	 /* valid index */
	CHANGED, /* index valid but for one rewritten spec file */
};

/* Rewrite spec file 0 (new inode, same text), out of the index's racy window. */
static int touch_one(const char *dir)
{
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	char path[512];
	int len = asprintf(&text, spec_fmt, 0);

	if (dfd < 0 || len < 0 ||
	    ts_write_file_atomic_at(dfd, "vendor0.yaml", text, (size_t)len, 0644, &err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/vendor0.yaml", dir);
	if (age(path) < 0)
		return -1;
	return age(dir);
}

static int run_case(char **dirs, const char *index, int n, enum mode mode, double ms[2],
		    long *rss_kib)
{
	int fds[2];
	pid_t pid;
	char buf[96] = "";
	ssize_t got;
	int status;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		double t[RUNS], c[RUNS];
		struct rusage ru;

		close(fds[0]);
		for (int i = 0; i < RUNS; i++) {
			if (mode == COLD)
				unlink(index);
			if (mode == CHANGED && touch_one(dirs[0]) < 0)
				_exit(1);
			if ((t[i] = one_create(dirs, index, n, &c[i])) < 0)
				_exit(1);
		}
		qsort(t, RUNS, sizeof(t[0]), bench_cmp_double);
		qsort(c, RUNS, sizeof(c[0]), bench_cmp_double);
		getrusage(RUSAGE_SELF, &ru);
		dprintf(fds[1], "%.3f %.3f %ld", t[RUNS / 2], c[RUNS / 2], ru.ru_maxrss);
		_exit(0);
	}
	close(fds[1]);
	got = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    got <= 0 || sscanf(buf, "%lf %lf %ld", &ms[0], &ms[1], rss_kib) != 3)
		return -EIO;
	return 0;
}

int main(void)
{
	static const int sizes[] = {1, 100, 1000};
	char root[] = "/tmp/ts-bench-cdi-XXXXXX";
	char cmd[128];
	int ret = 0;

	if (mkdtemp(root) == NULL) {
		perror("bench-cdi: mkdtemp");
		return 1;
	}
	printf("%-6s %10s %10s %10s %10s %12s %12s %9s %9s\n", "files", "cold ms", "cold cpu",
	       "warm ms", "warm cpu", "1 changed ms", "1 changed cpu", "cold MiB", "warm MiB");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		char dir[96], index[96];
		char *dirs[2] = {dir, NULL};
		double cold[2], warm[2], changed[2];
		long cold_rss, warm_rss, changed_rss;

		snprintf(dir, sizeof(dir), "%s/cdi-%d", root, sizes[s]);
		snprintf(index, sizeof(index), "%s/cdi-index-%d", root, sizes[s]);
		if (make_specs(dir, sizes[s]) < 0 ||
		    run_case(dirs, index, sizes[s], COLD, cold, &cold_rss) < 0 ||
		    run_case(dirs, index, sizes[s], WARM, warm, &warm_rss) < 0 ||
		    run_case(dirs, index, sizes[s], CHANGED, changed, &changed_rss) < 0) {
			fprintf(stderr, "bench-cdi: case %d files failed\n", sizes[s]);
			ret = 1;
			break;
		}
		printf("%-6d %10.3f %10.3f %10.3f %10.3f %12.3f %12.3f %9.1f %9.1f\n", sizes[s],
		       cold[0], cold[1], warm[0], warm[1], changed[0], changed[1],
		       (double)cold_rss / 1024, (double)warm_rss / 1024);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		ret = 1;
	return ret;
}
