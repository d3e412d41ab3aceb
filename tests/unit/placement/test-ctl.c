/*
 * Tests of src/cli/ctl-topology.c and src/cli/ctl-plan.c (toposhimctl
 * topology / plan), run in-process with stdout captured, on the project's
 * topologies (tests/fixtures/topology) and, when the shared corpus is
 * there, on real machines' (skipped without it).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../require.h"
#include "cli/ctl-placement.h"
#include "topogen.h"
#include "oci/json.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* Run fn(argc, argv) with out_fd (stdout, stderr) going to a file; return
 * what it wrote there. */
static char *capture_fd(int (*fn)(int, char **), int argc, char **argv, int *ret_status, int out_fd)
{
	char path[] = "/tmp/ts-ctl-XXXXXX";
	int fd = mkstemp(path);
	int saved = dup(out_fd);
	char *buf = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_true(fd >= 0 && saved >= 0);
	fflush(stdout);
	fflush(stderr);
	assert_true(dup2(fd, out_fd) >= 0);
	*ret_status = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	assert_true(dup2(saved, out_fd) >= 0);
	close(saved);
	close(fd);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err), 0);
	unlink(path);
	return buf;
}

static char *capture(int (*fn)(int, char **), int argc, char **argv, int *ret_status)
{
	return capture_fd(fn, argc, argv, ret_status, STDOUT_FILENO);
}

/* The policy a create needs to grant an unscoped container the critical
 * class (policy.h: by default only the kubelet's rule grants it). */
#define ALLOW_CRITICAL "\"policy\": {\"unscoped\": {\"classes\": [\"*\"]}}"

/* A topology of the shared corpus, or the test is skipped. */
static char *corpus(const char *file)
{
	return ts_test_corpus_path("topology", file);
}

/* A topology of tests/fixtures/topology (README.md there describes it). */
static char *own(const char *file)
{
	cleanup_free char *rel = NULL;

	assert_true(asprintf(&rel, "topology/%s", file) > 0);
	return ts_test_fixture_path(rel);
}

/* tiers-io.xml: two packages with a DRAM node each, an HBM and an NVM node
 * beside them, a GPU memory node near no cpu, a GPU and a DAX device on
 * package 1. */
static void test_topology_text_own(void **state)
{
	cleanup_free char *xml = own("tiers-io.xml");
	cleanup_free char *want = NULL, *out = NULL;
	char *argv[] = {"topology", "--topology", xml, NULL};
	int status;

	out = capture(ts_ctl_topology, 3, argv, &status);
	assert_int_equal(status, 0);
	assert_true(
		asprintf(&want,
			 "topology: %s\n"
			 "online: 0-7 (8 pus, 4 cores, smt 2)\n"
			 "package 0: cpus 0-3\n"
			 "package 1: cpus 4-7\n"
			 "numa node 0: cpus 0-3, memory 4096 MiB, tier dram\n"
			 "numa node 1: memory-only, near cpus 0-3, memory 1024 MiB, tier hbm\n"
			 "numa node 2: cpus 4-7, memory 4096 MiB, tier dram\n"
			 "numa node 3: memory-only, near cpus 4-7, memory 16384 MiB, tier pmem\n"
			 "numa node 4: memory-only, near cpus ",
			 xml) > 0);
	if (strncmp(out, want, strlen(want)) != 0)
		fail_msg("got:\n%s", out);
	assert_non_null(strstr(out, ", memory 16384 MiB, tier gpu\n"));
	assert_non_null(strstr(out, "device card1 pci 0000:81:00.0: numa nodes 2-3\n"));
	assert_non_null(strstr(out, "device dax3.0: numa nodes 2-3\n"));
}

static void test_topology_json_own(void **state)
{
	cleanup_free char *xml = own("tiers-io.xml");
	cleanup_free char *out = NULL;
	cleanup_json struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *argv[] = {"topology", "--json", "--topology", xml, NULL};
	struct ts_json *dev;
	size_t i;
	bool found = false;
	int status;

	out = capture(ts_ctl_topology, 4, argv, &status);
	assert_int_equal(status, 0);
	assert_int_equal(ts_json_parse(out, strlen(out), "out", &j, &err), 0);
	assert_string_equal(ts_json_get_string(j, "online"), "0-7");
	assert_int_equal(ts_json_get_array(j, "numa_nodes")->u.array.len, 5);
	ts_json_array_foreach (ts_json_get_array(j, "devices"), i, dev) {
		const char *pci = ts_json_get_string(dev, "pci");
		if (pci == NULL || strcmp(pci, "0000:81:00.0") != 0)
			continue;
		found = true;
		assert_string_equal(ts_json_get_string(dev, "name"), "card1");
		assert_string_equal(ts_json_get_string(dev, "numa_nodes"), "2-3");
	}
	assert_true(found);
}

static void test_topology_text(void **state)
{
	cleanup_free char *xml = corpus("14-hwloc-linux-fakeheteromemtiers-dram-hbm-nvm.xml");
	cleanup_free char *want = NULL, *out = NULL;
	char *argv[] = {"topology", "--topology", xml, NULL};
	int status;

	out = capture(ts_ctl_topology, 3, argv, &status);
	assert_int_equal(status, 0);
	assert_true(asprintf(&want,
			     "topology: %s\n"
			     "online: 0-5 (6 pus, 6 cores, smt 1)\n"
			     "package 0: cpus 0-5\n"
			     "numa node 0: cpus 0-1, memory 2934 MiB, tier dram\n"
			     "numa node 1: cpus 2-3, memory 978 MiB, tier dram\n"
			     "numa node 2: cpus 4-5, memory 512 MiB, tier hbm\n"
			     "numa node 4: memory-only, near cpus 2-3, memory 512 MiB, tier hbm\n"
			     "numa node 6: memory-only, near cpus 2-3, memory 384 MiB, tier pmem\n"
			     "numa node 8: memory-only, near cpus 0-1, memory 384 MiB, tier pmem\n"
			     "numa node 9: memory-only, near cpus 4-5, memory 384 MiB, tier pmem\n",
			     xml) > 0);
	if (strncmp(out, want, strlen(want)) != 0)
		fail_msg("got:\n%s", out);
	assert_non_null(strstr(out, "device dax0.0: numa nodes 0,8\n"));
	assert_non_null(strstr(out, "device dax2.0: numa nodes 1,4,6\n"));
}

static void test_topology_json(void **state)
{
	cleanup_free char *xml = corpus("06-hwloc-xml-32em64t-2n8c2t-pci-gpu-ib.xml");
	cleanup_free char *out = NULL;
	cleanup_json struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *argv[] = {"topology", "--json", "--topology", xml, NULL};
	struct ts_json *dev;
	size_t i;
	bool found = false;
	int status;

	out = capture(ts_ctl_topology, 4, argv, &status);
	assert_int_equal(status, 0);
	assert_int_equal(ts_json_parse(out, strlen(out), "out", &j, &err), 0);
	assert_string_equal(ts_json_get_string(j, "online"), "0-31");
	assert_int_equal(ts_json_get_array(j, "numa_nodes")->u.array.len, 2);
	ts_json_array_foreach (ts_json_get_array(j, "devices"), i, dev) {
		const char *pci = ts_json_get_string(dev, "pci");
		if (pci == NULL || strcmp(pci, "0000:83:00.0") != 0)
			continue;
		found = true;
		assert_string_equal(ts_json_get_string(dev, "numa_nodes"), "1");
	}
	assert_true(found);
}

static void test_topology_errors(void **state)
{
	char *argv[] = {"topology", "--topology", "/nonexistent.xml", NULL};
	char *bad[] = {"topology", "--bogus", NULL};
	cleanup_free char *a = NULL, *b = NULL;
	int status;

	a = capture(ts_ctl_topology, 3, argv, &status);
	assert_int_equal(status, 1);
	assert_string_equal(a, "");
	b = capture(ts_ctl_topology, 2, bad, &status);
	assert_int_equal(status, 2);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_write_file_atomic_at(dfd, name, text, strlen(text), 0644, &err), 0);
}

/* Without --topology, the topology a create would use: the config's
 * topology.xml; a config named but missing is an error. */
static void topology_from_config(const char *xml, const char *want_online)
{
	char dir[] = "/tmp/ts-ctltopo-XXXXXX";
	cleanup_free char *text = NULL, *cfg = NULL, *out = NULL, *missing = NULL;
	char *argv[] = {"topology", NULL};
	int status;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&text, "{\"topology\": {\"xml\": \"%s\"}}", xml) > 0);
	write_file(dir, "c.json", text);
	assert_true(asprintf(&cfg, "%s/c.json", dir) > 0);
	setenv("TOPOSHIM_CONFIG", cfg, 1);
	out = capture(ts_ctl_topology, 1, argv, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, want_online));
	free(out);
	assert_true(asprintf(&missing, "%s/missing.json", dir) > 0);
	setenv("TOPOSHIM_CONFIG", missing, 1);
	out = capture(ts_ctl_topology, 1, argv, &status);
	assert_int_equal(status, 1);
	assert_string_equal(out, "");
	unsetenv("TOPOSHIM_CONFIG");
	unlink(cfg);
	rmdir(dir);
}

static void test_topology_from_config(void **state)
{
	cleanup_free char *xml = corpus("04-hwloc-xml-16em64t-4s2c2t.xml");

	topology_from_config(xml, "online: 0-15 (16 pus, 8 cores, smt 2)\n");
}

static void test_topology_from_config_own(void **state)
{
	cleanup_free char *xml = own("4c2t.xml");

	topology_from_config(xml, "online: 0-7 (8 pus, 4 cores, smt 2)\n");
}

/* plan on a machine of 2 NUMA nodes of 8 cores x 2 threads, PU n's
 * sibling n + 16 (corpus 06, and tests/fixtures/topology/2n8c2t.xml). */
static void plan_on(char *xml)
{
	char dir[] = "/tmp/ts-plan-XXXXXX";
	cleanup_free char *cfgpath = NULL, *out = NULL, *jout = NULL, *before = NULL, *after = NULL;
	cleanup_json struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;
	int status;
	static const char config[] =
		"{\"ociVersion\":\"1.0.2\",\"annotations\":{\"toposhim.io/numa\":\"single\"},"
		"\"linux\":{\"resources\":{\"cpu\":{\"quota\":400000,\"period\":100000,"
		"\"shares\":4096}}}}";

	assert_non_null(mkdtemp(dir));
	write_file(dir, "config.json", config);
	write_file(dir, "toposhim.json", "{\"placement\":{\"reserved\":{\"count\":2}}}");
	assert_true(asprintf(&cfgpath, "%s/toposhim.json", dir) > 0);
	char *argv[] = {"plan", "--bundle", dir, "--topology", xml, "--config", cfgpath, NULL};
	out = capture(ts_ctl_plan, 7, argv, &status);
	assert_int_equal(status, 0);
	/* reserved = core {0,16}; 4 PUs in one NUMA node: the fuller node 0 */
	assert_non_null(strstr(out, "class: critical\npool: exclusive\ncpus: 1-2,17-18\n"
				    "mems: 0\nshared pool after: 0,3-16,19-31\nwhy:\n"
				    "  - class critical (derived from the cpu limit and request)\n"
				    "  - numa single: node 0 (fullest node that fits)\n"));
	char *jargv[] = {"plan", "--json", "--bundle", dir,	"--topology", xml,
			 "--id", "c1",	   "--config", cfgpath, NULL};
	jout = capture(ts_ctl_plan, 10, jargv, &status);
	assert_int_equal(status, 0);
	assert_int_equal(ts_json_parse(jout, strlen(jout), "out", &j, &err), 0);
	assert_string_equal(ts_json_get_string(j, "container_id"), "c1");
	assert_string_equal(ts_json_get_string(j, "cpus"), "1-2,17-18");
	assert_string_equal(ts_json_get_string(j, "pool"), "exclusive");

	/* plan writes nothing: config.json is byte-identical */
	assert_true(asprintf(&before, "%s/config.json", dir) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, before, 0, &after, NULL, &err), 0);
	assert_string_equal(after, config);

	/* errors name the file and field, exit status 1 */
	write_file(dir, "config.json", "{\"annotations\":{\"toposhim.io/cpus\":\"x\"}}");
	free(out);
	out = capture(ts_ctl_plan, 7, argv, &status);
	assert_int_equal(status, 1);

	cleanup_free char *rm = NULL;
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(rm), 0);
}

static void test_plan(void **state)
{
	cleanup_free char *xml = corpus("06-hwloc-xml-32em64t-2n8c2t-pci-gpu-ib.xml");

	plan_on(xml);
}

static void test_plan_own(void **state)
{
	cleanup_free char *xml = own("2n8c2t.xml");

	plan_on(xml);
}

/* The ranked CPU kinds and the CPUs whose memory comes from elsewhere, in
 * the text and the JSON output; the threshold is the config's. */
static void test_topology_kinds(void **state)
{
	char dir[] = "/tmp/ts-ctlkinds-XXXXXX";
	cleanup_free char *xml = NULL, *path = NULL, *cfg = NULL, *out = NULL, *text = NULL;
	cleanup_json struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] core:4 pu:1");
	int status;

	tg_drop_memory(g, 1, true);
	g->kinds = calloc(2, sizeof(*g->kinds));
	g->nkinds = 2;
	g->kinds[0] = (struct tg_kind){.efficiency = 0, .capacity = 400};
	g->kinds[1] = (struct tg_kind){.efficiency = 1, .capacity = 1024};
	g->kinds[0].cpus = hwloc_bitmap_alloc();
	g->kinds[1].cpus = hwloc_bitmap_alloc();
	hwloc_bitmap_set_range(g->kinds[0].cpus, 4, 7);
	hwloc_bitmap_set_range(g->kinds[1].cpus, 0, 3);
	xml = tg_xml(g);
	tg_free(g);
	assert_non_null(mkdtemp(dir));
	write_file(dir, "t.xml", xml);
	write_file(dir, "c.json", "{\"placement\": {\"performance_threshold\": 0.75}}");
	assert_true(asprintf(&path, "%s/t.xml", dir) > 0);
	assert_true(asprintf(&cfg, "%s/c.json", dir) > 0);
	setenv("TOPOSHIM_CONFIG", cfg, 1);
	char *argv[] = {"topology", "--topology", path, NULL};
	out = capture(ts_ctl_topology, 3, argv, &status);
	assert_int_equal(status, 0);
	if (strstr(out, "cpus 4-7: in no numa node, memory from numa node 0 (Machine)\n") == NULL ||
	    strstr(out, "cpu kinds: performance 0-3, efficiency 4-7 (ranked by efficiency, scored "
			"by capacity, performance from 0.75)\n") == NULL ||
	    strstr(out, "cpu kind 0: cpus 4-7, efficiency 0, capacity 400, 0 MHz, score 0.00: "
			"efficiency\n") == NULL ||
	    strstr(out, "cpu kind 1: cpus 0-3, efficiency 1, capacity 1024, 0 MHz, score 1.00: "
			"performance\n") == NULL)
		fail_msg("got:\n%s", out);
	char *jargv[] = {"topology", "--json", "--topology", path, NULL};
	text = capture(ts_ctl_topology, 4, jargv, &status);
	assert_int_equal(status, 0);
	assert_int_equal(ts_json_parse(text, strlen(text), "out", &j, &err), 0);
	const struct ts_json *kinds = ts_json_get_object(j, "cpu_kinds");
	assert_string_equal(ts_json_get_string(kinds, "performance"), "0-3");
	assert_string_equal(ts_json_get_string(kinds, "scored_by"), "capacity");
	assert_string_equal(ts_json_get(kinds, "threshold")->u.number, "0.75");
	assert_int_equal(ts_json_get_array(kinds, "kinds")->u.array.len, 2);
	const struct ts_json *dom = ts_json_get_array(j, "numa_domains")->u.array.items[1];
	assert_int_equal(ts_json_get(dom, "numa_node")->type, TS_JSON_NULL);
	assert_string_equal(ts_json_get_string(dom, "cpus"), "4-7");
	assert_string_equal(ts_json_get_string(dom, "mems"), "0");
	unsetenv("TOPOSHIM_CONFIG");
	cleanup_free char *rm = NULL;
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(rm), 0);
}

/* A bundle in dir (a mkdtemp template, filled in) asking for 2 exclusive
 * cpus of class critical, beside t.xml: 2 packages of 4 PUs, one NUMA node
 * each.  @return the path of t.xml; the caller frees. */
static char *plan_bundle(char *dir)
{
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] core:4 pu:1");
	cleanup_free char *xml = tg_xml(g);
	char *path = NULL;

	tg_free(g);
	assert_non_null(mkdtemp(dir));
	write_file(dir, "t.xml", xml);
	write_file(dir, "config.json",
		   "{\"ociVersion\":\"1.0.2\",\"annotations\":{\"toposhim.io/class\":"
		   "\"critical\",\"toposhim.io/cpus\":\"2\"}}");
	assert_true(asprintf(&path, "%s/t.xml", dir) > 0);
	return path;
}

/* Without --topology, plan uses the topology the creates cached in the
 * state dir, and writes no cache itself. */
static void test_plan_uses_cache(void **state)
{
	char dir[] = "/tmp/ts-plancache-XXXXXX";
	cleanup_free char *path = NULL, *cfg = NULL, *out = NULL, *text = NULL, *sdir = NULL,
			  *cache = NULL;
	int status;

	path = plan_bundle(dir);
	assert_true(asprintf(&sdir, "%s/state", dir) > 0);
	assert_int_equal(mkdir(sdir, 0700), 0);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s\", %s}", sdir, ALLOW_CRITICAL) > 0);
	write_file(dir, "c.json", text);
	assert_true(asprintf(&cfg, "%s/c.json", dir) > 0);
	setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
	char *argv[] = {"plan", "--bundle", dir, "--config", cfg, NULL};
	out = capture(ts_ctl_plan, 5, argv, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "cpus: 0-1\nmems: 0\n"));
	assert_true(asprintf(&cache, "%s/topology.xml", sdir) > 0);
	assert_int_equal(access(cache, F_OK), -1);
	unsetenv("TOPOSHIM_TOPOLOGY_XML");
	cleanup_free char *rm = NULL;
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(rm), 0);
}

/* plan judges the request by the policy, as a create does (helper-11:
 * plan granted a critical class and a cpu count past the cpu limit that
 * the create then refused). */
static void test_plan_checks_policy(void **state)
{
	char dir[] = "/tmp/ts-planpol-XXXXXX";
	cleanup_free char *path = NULL, *cfg = NULL, *out = NULL, *err_out = NULL, *text = NULL,
			  *want = NULL;
	int status;
	(void)state;

	path = plan_bundle(dir);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s/state\"}", dir) > 0);
	write_file(dir, "c.json", text);
	assert_true(asprintf(&cfg, "%s/c.json", dir) > 0);
	char *argv[] = {"plan", "--bundle", dir, "--config", cfg, "--topology", path, NULL};
	err_out = capture_fd(ts_ctl_plan, 7, argv, &status, STDERR_FILENO);
	assert_int_equal(status, 1);
	assert_true(
		asprintf(&want,
			 "toposhimctl: plan: %s/config.json: '/annotations/toposhim.io~1class': "
			 "class 'critical' (exclusive cpus) is not allowed for unscoped "
			 "containers: it needs an integer cpu limit equal to its request (the "
			 "kubelet's rule), or the class in '/policy/unscoped/classes' of %s\n",
			 dir, cfg) > 0);
	assert_string_equal(err_out, want);
	/* allowed, but more exclusive cpus than the cpu limit */
	free(text);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s/state\", %s}", dir, ALLOW_CRITICAL) > 0);
	write_file(dir, "c.json", text);
	write_file(dir, "config.json",
		   "{\"ociVersion\":\"1.0.2\",\"annotations\":{\"toposhim.io/class\":"
		   "\"critical\",\"toposhim.io/cpus\":\"3\"},\"linux\":{\"resources\":{\"cpu\":"
		   "{\"quota\":50000,\"period\":100000}}}}");
	free(err_out);
	err_out = capture_fd(ts_ctl_plan, 7, argv, &status, STDERR_FILENO);
	assert_int_equal(status, 1);
	free(want);
	assert_true(
		asprintf(&want,
			 "toposhimctl: plan: %s/config.json: '/annotations/toposhim.io~1cpus': 3 "
			 "exclusive cpus are more than the container's cpu limit of 1\n",
			 dir) > 0);
	assert_string_equal(err_out, want);
	/* within the limit: planned */
	write_file(dir, "config.json",
		   "{\"ociVersion\":\"1.0.2\",\"annotations\":{\"toposhim.io/class\":"
		   "\"critical\",\"toposhim.io/cpus\":\"2\"}}");
	out = capture(ts_ctl_plan, 7, argv, &status);
	assert_int_equal(status, 0);
	assert_non_null(strstr(out, "cpus: 0-1\n"));
	cleanup_free char *rm = NULL;
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(rm), 0);
}

/* plan sees what a create would: a record whose container is gone (a
 * `toposhim run` that exited: "creating", its pid dead, no runtime dir) is
 * collected first, in memory; plan writes nothing.  helper-7: plan refused
 * the cpus the next create then granted. */
static void test_plan_collects_stale(void **state)
{
	char dir[] = "/tmp/ts-planstale-XXXXXX";
	cleanup_free char *path = NULL, *cfg = NULL, *out = NULL, *text = NULL, *sdir = NULL,
			  *rroot = NULL, *file = NULL, *before = NULL, *after = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_state_options opts = {0};
	struct ts_state *s = NULL;
	struct ts_alloc *a;
	pid_t child;
	int status;

	path = plan_bundle(dir);
	assert_true(asprintf(&sdir, "%s/state", dir) > 0);
	assert_true(asprintf(&rroot, "%s/runc-root", dir) > 0);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s\", %s}", sdir, ALLOW_CRITICAL) > 0);
	write_file(dir, "c.json", text);
	assert_true(asprintf(&cfg, "%s/c.json", dir) > 0);

	/* a dead pid: a child that has exited and been reaped */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, &status, 0), child);
	opts.state_dir = sdir;
	assert_int_equal(ts_state_open(&opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	a = ts_alloc_new("gone", &err);
	assert_non_null(a);
	a->runtime_root = strdup(rroot);
	a->bundle = strdup(dir);
	a->class_name = strdup("critical");
	a->cpus_str = strdup("0-1");
	a->mems_str = strdup("0");
	a->status = TS_ALLOC_CREATING;
	a->created_usec = ts_state_now_usec();
	a->pid = child;
	a->pid_start_ticks = 1;
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);
	assert_true(asprintf(&file, "%s/allocations.json", sdir) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, file, 0, &before, NULL, &err), 0);

	setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
	char *argv[] = {"plan", "--bundle", dir, "--config", cfg, NULL};
	out = capture(ts_ctl_plan, 5, argv, &status);
	unsetenv("TOPOSHIM_TOPOLOGY_XML");
	assert_int_equal(status, 0);
	/* with the record counted the cpus would be 2-3 */
	if (strstr(out, "cpus: 0-1\nmems: 0\n") == NULL)
		fail_msg("got:\n%s", out);
	assert_int_equal(ts_read_file_at(AT_FDCWD, file, 0, &after, NULL, &err), 0);
	assert_string_equal(after, before);
	assert_non_null(strstr(after, "\"container_id\":\"gone\""));
	cleanup_free char *rm = NULL;
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(rm), 0);
}

/* The config's topology file as a create takes it: absolute, and named
 * with its field when it cannot be read (helper-8: plan read a relative
 * path from its working directory, and named no field). */
static void test_plan_topology_field(void **state)
{
	char dir[] = "/tmp/ts-plantopo-XXXXXX";
	cleanup_free char *cfg = NULL, *err1 = NULL, *err2 = NULL, *want = NULL, *rm = NULL;
	int status;

	assert_non_null(mkdtemp(dir));
	write_file(dir, "config.json", "{\"ociVersion\":\"1.0.2\"}");
	assert_true(asprintf(&cfg, "%s/c.json", dir) > 0);
	char *argv[] = {"plan", "--bundle", dir, "--config", cfg, NULL};
	write_file(dir, "c.json", "{\"topology\": {\"xml\": \"rel/t.xml\"}}");
	err1 = capture_fd(ts_ctl_plan, 5, argv, &status, STDERR_FILENO);
	assert_int_equal(status, 1);
	assert_true(asprintf(&want,
			     "toposhimctl: plan: %s: '/topology/xml': not absolute 'rel/t.xml'\n",
			     cfg) > 0);
	assert_string_equal(err1, want);
	free(want);
	write_file(dir, "c.json", "{\"topology\": {\"xml\": \"/nonexistent/t.xml\"}}");
	err2 = capture_fd(ts_ctl_plan, 5, argv, &status, STDERR_FILENO);
	assert_int_equal(status, 1);
	assert_true(
		asprintf(&want,
			 "toposhimctl: plan: %s: '/topology/xml': /nonexistent/t.xml: cannot read "
			 "topology: No such file or directory\n",
			 cfg) > 0);
	assert_string_equal(err2, want);
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(rm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_topology_text_own),
		cmocka_unit_test(test_topology_json_own),
		cmocka_unit_test(test_topology_errors),
		cmocka_unit_test(test_topology_from_config_own),
		cmocka_unit_test(test_plan_own),
		/* the shared corpus: real machines (skipped without it) */
		cmocka_unit_test(test_topology_text),
		cmocka_unit_test(test_topology_json),
		cmocka_unit_test(test_topology_from_config),
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_topology_kinds),
		cmocka_unit_test(test_plan_uses_cache),
		cmocka_unit_test(test_plan_collects_stale),
		cmocka_unit_test(test_plan_checks_policy),
		cmocka_unit_test(test_plan_topology_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
