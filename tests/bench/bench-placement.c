/*
 * bench-placement - speed of the placement path (issue 4 targets):
 *   placement on the 384-PU topology with 500 live allocations  <= 5 ms
 *   warm topology load (host topology from the cached XML)       <= 2 ms
 *   (and from the cache's snapshot, what placement reads)
 *   peak RSS                                                      <= 16 MiB
 * and issue 13's:
 *   placement step at 1024 PUs (8 NUMA nodes, 16 L3 groups, SMT2,
 *   a synthetic machine) with 1000 live allocations              <= 0.5 ms
 *
 * Usage: bench-placement [SHARED_DIR]  (default $TS_SHARED_DIR, then ../shared)
 * Prints one table row per measurement: median, p99 and max over the runs,
 * in thread CPU time.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "placement/placement.h"
#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define RUNS 200
#define NALLOCS 500
#define NEXCL 90 /* exclusive allocations of 2 PUs; the rest are shared */

/* CPU time of this thread: what the code costs, unaffected by other load
 * on a shared CI machine (wall time there varies tenfold). */
static void row(const char *what, double *t, size_t n, double target)
{
	qsort(t, n, sizeof(*t), bench_cmp_double);
	printf("%-44s %9.3f %9.3f %9.3f %9.1f  %s\n", what, t[n / 2], t[n * 99 / 100], t[n - 1],
	       target, t[n / 2] <= target ? "ok" : "SLOW");
}

static int die(const char *what, struct ts_error *err)
{
	fprintf(stderr, "bench-placement: %s: %s\n", what, err != NULL ? err->msg : "failed");
	return 1;
}

static int write_at(const char *dir, const char *name, const char *text)
{
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_error struct ts_error *err = NULL;

	return ts_write_file_atomic_at(dfd, name, text, strlen(text), 0644, &err);
}

/* A state dir whose cache holds the corpus machine as toposhim caches it
 * (loaded, then exported: caches below L3 filtered out) under the key of a
 * fake sysfs/proc, so that ts_topology_load_cached() takes the warm path. */
static int bench_warm_load(const char *xml_path, double *t)
{
	char dir[] = "/tmp/ts-bench-XXXXXX";
	cleanup_free char *xml = NULL, *sys = NULL, *proc = NULL, *key = NULL, *cmd = NULL;
	cleanup_error struct ts_error *err = NULL;

	struct ts_topology *corpus = NULL;
	int r;

	if (mkdtemp(dir) == NULL || ts_topology_load_xml(xml_path, &corpus, &err) < 0)
		return die("setup", err);
	r = ts_topology_export_xml(corpus, &xml, &err);
	ts_topology_free(corpus);
	if (r < 0)
		return die("setup", err);
	if (asprintf(&cmd,
		     "mkdir -p %s/sys/devices/system/cpu %s/sys/devices/system/node "
		     "%s/proc/sys/kernel/random",
		     dir, dir, dir) < 0 ||
	    system(cmd) != 0 || asprintf(&sys, "%s/sys", dir) < 0 ||
	    asprintf(&proc, "%s/proc", dir) < 0)
		return die("setup", NULL);
	if (write_at(sys, "devices/system/cpu/online", "0-383\n") < 0 ||
	    write_at(sys, "devices/system/node/online", "0\n") < 0 ||
	    write_at(proc, "sys/kernel/random/boot_id", "bench\n") < 0 ||
	    ts_topology_host_key(sys, proc, &key, &err) < 0 ||
	    write_at(dir, "topology.xml", xml) < 0 || write_at(dir, "topology.key", key) < 0)
		return die("setup", err);
	for (int i = 0; i < RUNS; i++) {
		struct ts_topology *topo = NULL;
		bool cached = false;
		double t0 = bench_ms(CLOCK_THREAD_CPUTIME_ID);

		if (ts_topology_load_cached(dir, sys, proc, &topo, &cached, &err) < 0 || !cached)
			return die("warm load", err);
		t[i] = bench_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
		ts_topology_free(topo);
	}
	free(cmd);
	cmd = NULL;
	if (asprintf(&cmd, "rm -rf '%s'", dir) > 0)
		(void)!system(cmd);
	return 0;
}

/* n live allocations placed by the policy itself: nexcl exclusive ones of
 * excl_cpus PUs, the rest shared; then RUNS placements of an 8-CPU critical
 * container among them. */
static int bench_place_n(struct ts_topology *topo, int nallocs, int nexcl, unsigned excl_cpus,
			 unsigned reserved, double *t);

/* The same machine from its snapshot, as the create path and plan load it
 * once a create wrote the cache. */
static int bench_snapshot_load(const struct ts_topology *topo, double *t)
{
	cleanup_free char *text = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_topology_snapshot_export(topo, &text, &err) < 0)
		return die("snapshot", err);
	for (int i = 0; i < RUNS; i++) {
		struct ts_topology *s = NULL;
		double t0 = bench_ms(CLOCK_THREAD_CPUTIME_ID);

		if (ts_topology_snapshot_load(text, "snapshot", &s, &err) < 0)
			return die("snapshot load", err);
		t[i] = bench_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
		ts_topology_free(s);
	}
	return 0;
}

static int bench_place(struct ts_topology *topo, double *t)
{
	return bench_place_n(topo, NALLOCS, NEXCL, 2, 4, t);
}

static int bench_place_n(struct ts_topology *topo, int nallocs, int nexcl, unsigned excl_cpus,
			 unsigned reserved, double *t)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_allocation *allocs = calloc((size_t)nallocs, sizeof(*allocs));
	hwloc_bitmap_t *sets = calloc((size_t)nallocs, sizeof(*sets));
	char(*ids)[16] = calloc((size_t)nallocs, sizeof(*ids));
	cleanup_hwloc_bitmap hwloc_bitmap_t pool = NULL;
	int rc = 0;

	if (allocs == NULL || sets == NULL || ids == NULL ||
	    ts_placement_config_init(&cfg, &err) < 0)
		return die("setup", err);
	cfg.reserved_count = reserved;
	for (int i = 0; i < nallocs; i++) {
		struct ts_placement_request req;
		struct ts_placement_result res = {0};

		snprintf(ids[i], sizeof(ids[i]), "c%d", i);
		if (ts_placement_request_init(&req, ids[i], &err) < 0)
			return die("request", err);
		free(req.class_name);
		req.class_name = strdup(i < nexcl ? "critical" : "standard");
		req.cpus = excl_cpus;
		if (ts_placement_place(&cfg, topo, allocs, (size_t)i, &req, &res, &err) < 0)
			return die("fill", err);
		sets[i] = TAKE_PTR(res.cpus);
		allocs[i] =
			(struct ts_allocation){.container_id = ids[i],
					       .class_name = i < nexcl ? "critical" : "standard",
					       .pool = res.pool,
					       .cpus = sets[i]};
		ts_placement_result_release(&res);
		ts_placement_request_release(&req);
	}
	for (int i = 0; i < RUNS; i++) {
		struct ts_placement_request req;
		struct ts_placement_result res = {0};
		double t0;

		if (ts_placement_request_init(&req, "new", &err) < 0)
			return die("request", err);
		free(req.class_name);
		req.class_name = strdup("critical");
		req.cpus = 8;
		t0 = bench_ms(CLOCK_THREAD_CPUTIME_ID);
		if (ts_placement_place(&cfg, topo, allocs, (size_t)nallocs, &req, &res, &err) < 0) {
			rc = die("place", err);
			break;
		}
		t[i] = bench_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
		ts_placement_result_release(&res);
		ts_placement_request_release(&req);
	}
	for (int i = 0; i < nallocs; i++)
		hwloc_bitmap_free(sets[i]);
	free(allocs);
	free(sets);
	free(ids);
	ts_placement_config_release(&cfg);
	return rc;
}

int main(int argc, char **argv)
{
	const char *shared = argc > 1 ? argv[1] : getenv("TS_SHARED_DIR");
	cleanup_free char *xml = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *topo = NULL;
	static double t_load[RUNS], t_snap[RUNS], t_place[RUNS], t_big[RUNS];
	struct rusage ru;

	if (shared == NULL)
		shared = "../shared";
	if (asprintf(&xml, "%s/corpus/topology/13-hwloc-x86cpuid-zen4-2xepyc9654-384pu.xml",
		     shared) < 0)
		return 1;
	/* the warm load goes first: hwloc picks its XML parser at the first
	 * import of the process, as in toposhim's create path */
	if (bench_warm_load(xml, t_load) != 0)
		return 1;
	if (ts_topology_load_xml(xml, &topo, &err) < 0)
		return die("load", err);
	if (bench_snapshot_load(topo, t_snap) != 0 || bench_place(topo, t_place) != 0)
		return 1;
	ts_topology_free(topo);
	topo = NULL;
	/* 1024 PUs, 1000 live allocations: 300 exclusive of 2 PUs, 700 shared */
	if (ts_topology_load_synthetic("pack:2 group:4 [numa(memory=17179869184)] l3:2 core:32 "
				       "pu:2",
				       &topo, &err) < 0)
		return die("load", err);
	if (bench_place_n(topo, 1000, 300, 2, 8, t_big) != 0)
		return 1;
	ts_topology_free(topo);
	getrusage(RUSAGE_SELF, &ru);
	printf("%-44s %9s %9s %9s %9s\n", "measurement (cpu ms, 384 PUs)", "median", "p99", "max",
	       "target");
	row("warm topology load (cached xml)", t_load, RUNS, 2.0);
	row("warm topology load (snapshot)", t_snap, RUNS, 2.0);
	row("placement, 500 live allocations, 8 cpus", t_place, RUNS, 5.0);
	row("placement, 1024 pus, 1000 live allocations", t_big, RUNS, 0.5);
	printf("%-44s %9.1f %29s  %s\n", "peak rss (MiB)", (double)ru.ru_maxrss / 1024.0, "16.0",
	       ru.ru_maxrss <= 16 * 1024 ? "ok" : "BIG");
	return 0;
}
