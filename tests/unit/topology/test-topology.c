/*
 * Unit tests of src/topology: cpu lists, loads of the project's own
 * topologies (hwloc synthetic descriptions, tests/fixtures/topology, the
 * sysfs tree of tests/fixtures/sysfs/make-tree.sh), memory tiers, the XML
 * cache and device locality; and, when the shared corpus is there, the
 * real machines' topologies and sysfs trees (skipped without it).
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
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../require.h"
#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static void test_cpulist(void **state)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{"", ""},	    {"0", "0"},
		{"0-3,8", "0-3,8"}, {"1,3-5,4", "1,3-5"},
		{"7-7", "7"},	    {"0,2,4,6", "0,2,4,6"},
	};
	static const char *const bad[] = {"0-3,x", "3-1",   "0-",  "-1", "1,,2", " 1",
					  "1 ",	   "65536", "0x1", ",",	 "1,"};

	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		cleanup_hwloc_bitmap hwloc_bitmap_t b = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *s = NULL;

		assert_int_equal(ts_cpulist_parse(ok[i].in, &b, &err), 0);
		assert_int_equal(ts_cpulist_format(b, &s, &err), 0);
		if (strcmp(s, ok[i].out) != 0)
			fail_msg("'%s' -> '%s', want '%s'", ok[i].in, s, ok[i].out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_hwloc_bitmap hwloc_bitmap_t b = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *want = NULL;

		assert_int_equal(ts_cpulist_parse(bad[i], &b, &err), -EINVAL);
		assert_true(asprintf(&want, "invalid cpu list '%s'", bad[i]) > 0);
		assert_string_equal(err->msg, want);
		assert_null(b);
	}
}

/* A corpus file, or the test is skipped (call before allocating). */
static char *corpus_path(const char *sub, const char *file)
{
	return ts_test_corpus_path(sub, file);
}

/* Every corpus file loads with hwloc 2.9 (all are XML v2); counts match
 * INDEX.md (PUs online, NUMA nodes including memory-only ones). */
static void test_corpus_loads(void **state)
{
	static const struct {
		const char *file;
		int pus;
		size_t numa;
		unsigned smt;
		const char *memory_only;
	} rows[] = {
		{"01-hwloc-linux-8em64t-4c2t.xml", 8, 1, 2, ""},
		{"02-hwloc-linux-20em64t-hybrid-raptorlake.xml", 20, 1, 2, ""},
		{"04-hwloc-xml-16em64t-4s2c2t.xml", 16, 1, 2, ""},
		{"05-hwloc-xml-16em64t-4s2c2t-offlines.xml", 7, 1, 2, ""},
		{"06-hwloc-xml-32em64t-2n8c2t-pci-gpu-ib.xml", 32, 2, 2, ""},
		{"07-hwloc-linux-32em64t-2n8c-nvme-pmem-ib-mic.xml", 16, 2, 1, ""},
		{"08-hwloc-xml-28intel64-2p2g7c-cluster-on-die.xml", 28, 4, 1, ""},
		{"09-hwloc-xml-80em64t-snc2-memorysidecaches.xml", 80, 4, 2, ""},
		{"10-hwloc-linux-64amd64-4s2n4ca2co.xml", 64, 8, 1, ""},
		{"12-hwloc-linux-256ppc-8n8s4t-smt4.xml", 256, 8, 4, ""},
		{"13-hwloc-x86cpuid-zen4-2xepyc9654-384pu.xml", 384, 1, 2, ""},
		{"14-hwloc-linux-fakeheteromemtiers-dram-hbm-nvm.xml", 6, 7, 1, "4,6,8-9"},
		{"15-hwloc-xml-cxlmem-dax.xml", 4, 1, 1, ""},
		{"17-hwloc-xml-nvidia-dgx2.xml", 4, 2, 1, ""},
		{"18-flux-ipa20-xe8640-spr-snc4-4xh100.xml", 224, 8, 2, ""},
		{"20-flux-sierra-power9-4xv100.v2.xml", 176, 6, 4, "252-255"},
		{"23-psmgmt-jrc0323-2xepyc7742-nps4-4xa100.xml", 256, 8, 2, ""},
		{"24-psmgmt-knl05-snc4-flat-mcdram.xml", 256, 8, 4, "4-7"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *path = corpus_path("topology", rows[i].file);
		cleanup_topology struct ts_topology *t = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_hwloc_bitmap hwloc_bitmap_t mo = hwloc_bitmap_alloc();
		cleanup_free char *mo_str = NULL;

		if (ts_topology_load_xml(path, &t, &err) < 0)
			fail_msg("%s: %s", rows[i].file, err->msg);
		for (size_t k = 0; k < t->n_numa_nodes; k++)
			if (t->numa_nodes[k].memory_only)
				hwloc_bitmap_set(mo, t->numa_nodes[k].os_index);
		assert_int_equal(ts_cpulist_format(mo, &mo_str, &err), 0);
		if (hwloc_bitmap_weight(t->online) != rows[i].pus ||
		    t->n_numa_nodes != rows[i].numa || t->smt_width != rows[i].smt ||
		    strcmp(mo_str, rows[i].memory_only) != 0)
			fail_msg("%s: pus %d numa %zu smt %u memory-only '%s'", rows[i].file,
				 hwloc_bitmap_weight(t->online), t->n_numa_nodes, t->smt_width,
				 mo_str);
	}
}

/* KNL flat mode (corpus 24): the CPU-less MCDRAM nodes 4-7 are HBM. */
static void test_tiers_knl(void **state)
{
	cleanup_free char *path = corpus_path("topology", "24-psmgmt-knl05-snc4-flat-mcdram.xml");
	cleanup_topology struct ts_topology *t = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_topology_load_xml(path, &t, &err), 0);
	assert_int_equal(ts_topology_numa_node(t, 0)->tier, TS_MEMORY_TIER_DRAM);
	assert_int_equal(ts_topology_numa_node(t, 4)->tier, TS_MEMORY_TIER_HBM);
	assert_int_equal(ts_topology_numa_node(t, 4)->memory_bytes, 4227596288ull);
	assert_true(hwloc_bitmap_iszero(ts_topology_numa_node(t, 4)->cpus));
	assert_true(hwloc_bitmap_isequal(ts_topology_numa_node(t, 4)->local_cpus,
					 ts_topology_numa_node(t, 0)->cpus));
	assert_string_equal(ts_memory_tier_to_string(TS_MEMORY_TIER_PMEM), "pmem");
	assert_int_equal(ts_memory_tier_from_string("cxl"), TS_MEMORY_TIER_CXL);
	assert_int_equal(ts_memory_tier_from_string("ssd"), TS_MEMORY_TIER_INVALID);
}

/* The project's own topologies load with the counts they were made with:
 * synthetic descriptions (a second NUMA node of a package is memory-only)
 * and tests/fixtures/topology (README.md there describes each file). */
static void test_own_topologies_load(void **state)
{
	static const struct {
		const char *synthetic, *fixture;
		int pus;
		size_t numa;
		unsigned smt;
		const char *memory_only;
	} rows[] = {
		{"pack:1 numa:1 core:4 pu:2", NULL, 8, 1, 2, ""},
		{"pack:2 numa:2 core:4 pu:1", NULL, 16, 4, 1, ""},
		{"pack:2 [numa(memory=4294967296)] [numa(memory=1073741824)] core:2 pu:4", NULL, 16,
		 4, 4, "1,3"},
		{NULL, "topology/4c2t.xml", 8, 1, 2, ""},
		{NULL, "topology/tiers-io.xml", 8, 5, 2, "1,3-4"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const char *name = rows[i].synthetic ? rows[i].synthetic : rows[i].fixture;
		cleanup_free char *path =
			rows[i].fixture ? ts_test_fixture_path(rows[i].fixture) : NULL;
		cleanup_topology struct ts_topology *t = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_hwloc_bitmap hwloc_bitmap_t mo = hwloc_bitmap_alloc();
		cleanup_free char *mo_str = NULL;
		int r = path != NULL ? ts_topology_load_xml(path, &t, &err)
				     : ts_topology_load_synthetic(rows[i].synthetic, &t, &err);

		if (r < 0)
			fail_msg("%s: %s", name, err->msg);
		for (size_t k = 0; k < t->n_numa_nodes; k++)
			if (t->numa_nodes[k].memory_only)
				hwloc_bitmap_set(mo, t->numa_nodes[k].os_index);
		assert_int_equal(ts_cpulist_format(mo, &mo_str, &err), 0);
		if (hwloc_bitmap_weight(t->online) != rows[i].pus ||
		    t->n_numa_nodes != rows[i].numa || t->smt_width != rows[i].smt ||
		    strcmp(mo_str, rows[i].memory_only) != 0)
			fail_msg("%s: pus %d numa %zu smt %u memory-only '%s'", name,
				 hwloc_bitmap_weight(t->online), t->n_numa_nodes, t->smt_width,
				 mo_str);
	}
}

/* Tiers by hwloc subtype (tests/fixtures/topology/tiers-io.xml: DRAM, HBM,
 * NVM, GPUMemory) and, without one, by shape (synthetic: per package a CPU
 * node of 4 GiB, a smaller CPU-less node = HBM, a larger one = PMEM). */
static void test_tiers_own(void **state)
{
	cleanup_free char *path = ts_test_fixture_path("topology/tiers-io.xml");
	cleanup_topology struct ts_topology *t = NULL;
	cleanup_topology struct ts_topology *shape = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_topology_load_xml(path, &t, &err), 0);
	assert_int_equal(ts_topology_numa_node(t, 0)->tier, TS_MEMORY_TIER_DRAM);
	assert_int_equal(ts_topology_numa_node(t, 1)->tier, TS_MEMORY_TIER_HBM);
	assert_int_equal(ts_topology_numa_node(t, 2)->tier, TS_MEMORY_TIER_DRAM);
	assert_int_equal(ts_topology_numa_node(t, 3)->tier, TS_MEMORY_TIER_PMEM);
	assert_int_equal(ts_topology_numa_node(t, 4)->tier, TS_MEMORY_TIER_GPU);
	assert_int_equal(ts_topology_numa_node(t, 3)->memory_bytes, 17179869184ull);
	/* memory-only nodes lend no PUs; their locality is the package's */
	assert_true(hwloc_bitmap_iszero(ts_topology_numa_node(t, 1)->cpus));
	assert_true(hwloc_bitmap_isequal(ts_topology_numa_node(t, 1)->local_cpus,
					 ts_topology_numa_node(t, 0)->cpus));
	assert_true(hwloc_bitmap_iszero(ts_topology_numa_node(t, 4)->local_cpus));

	assert_int_equal(ts_topology_load_synthetic("pack:2 [numa(memory=4294967296)] "
						    "[numa(memory=1073741824)] "
						    "[numa(memory=17179869184)] core:2 pu:1",
						    &shape, &err),
			 0);
	assert_int_equal(shape->n_numa_nodes, 6);
	for (unsigned n = 0; n < 6; n++) {
		static const enum ts_memory_tier want[3] = {TS_MEMORY_TIER_DRAM, TS_MEMORY_TIER_HBM,
							    TS_MEMORY_TIER_PMEM};

		if (ts_topology_numa_node(shape, n)->tier != want[n % 3])
			fail_msg("synthetic node %u: tier %s", n,
				 ts_memory_tier_to_string(ts_topology_numa_node(shape, n)->tier));
	}
}

static void test_load_errors(void **state)
{
	cleanup_topology struct ts_topology *t = NULL;
	cleanup_error struct ts_error *err = NULL;
	char path[] = "/tmp/ts-topo-XXXXXX";
	int fd = mkstemp(path);

	assert_int_equal(ts_topology_load_xml("/nonexistent/t.xml", &t, &err), -ENOENT);
	assert_string_equal(err->msg, "/nonexistent/t.xml: cannot read topology");
	ts_error_clear(&err);
	assert_true(fd >= 0);
	assert_int_equal(ts_write_all(fd, "<topology>", 10), 0);
	close(fd);
	assert_int_equal(ts_topology_load_xml(path, &t, &err), -EINVAL);
	assert_true(strstr(err->msg, ": invalid hwloc xml topology") != NULL);
	ts_error_clear(&err);
	unlink(path);
	assert_int_equal(ts_topology_load_synthetic("pack:2 bogus:3", &t, &err), -EINVAL);
	assert_string_equal(err->msg, "synthetic topology: invalid description 'pack:2 bogus:3'");
	ts_error_clear(&err);
	assert_int_equal(ts_topology_load_synthetic("pack:2 core:2 pu:2", &t, &err), 0);
	assert_int_equal(hwloc_bitmap_weight(t->online), 8);
	assert_int_equal(t->smt_width, 2);
}

static void write_text(const char *dir, const char *rel, const char *text)
{
	cleanup_free char *path = NULL;
	cleanup_free char *cmd = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_true(asprintf(&path, "%s/%s", dir, rel) > 0);
	assert_true(asprintf(&cmd, "mkdir -p \"$(dirname '%s')\"", path) > 0);
	assert_int_equal(system(cmd), 0);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ts_write_all(fd, text, strlen(text)), 0);
	close(fd);
}

/* The cache is reused while the key holds and rebuilt when the boot id
 * (or the online CPUs) change. */
static void test_cache(void **state)
{
	char dir[] = "/tmp/ts-cache-XXXXXX";
	cleanup_free char *sys = NULL, *proc = NULL, *state_dir = NULL, *key = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *t = NULL;
	bool cached = true;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&sys, "%s/sys", dir) > 0);
	assert_true(asprintf(&proc, "%s/proc", dir) > 0);
	assert_true(asprintf(&state_dir, "%s/state", dir) > 0);
	assert_int_equal(mkdir(state_dir, 0700), 0);
	write_text(sys, "devices/system/cpu/online", "0-1\n");
	write_text(proc, "sys/kernel/random/boot_id", "b1\n");

	assert_int_equal(ts_topology_host_key(sys, proc, &key, &err), 0);
	assert_string_equal(key, "online=0-1\nnodes=0\nboot_id=b1\n");
	assert_int_equal(ts_topology_load_cached(state_dir, sys, proc, &t, &cached, &err), 0);
	assert_false(cached);
	t = ts_topology_free(t);
	assert_int_equal(ts_topology_load_cached(state_dir, sys, proc, &t, &cached, &err), 0);
	assert_true(cached);
	assert_true(strncmp(t->source, "cache:", 6) == 0);
	t = ts_topology_free(t);
	write_text(proc, "sys/kernel/random/boot_id", "b2\n");
	assert_int_equal(ts_topology_load_cached(state_dir, sys, proc, &t, &cached, &err), 0);
	assert_false(cached);
	t = ts_topology_free(t);
	write_text(sys, "devices/system/node/online", "0-1\n");
	assert_int_equal(ts_topology_load_cached(state_dir, sys, proc, &t, &cached, &err), 0);
	assert_false(cached);
	t = ts_topology_free(t);

	free(key);
	key = NULL;
	assert_int_equal(ts_topology_host_key(sys, "/nonexistent", &key, &err), -ENOENT);
	assert_string_equal(err->msg, "/nonexistent/sys/kernel/random/boot_id: cannot read");
	ts_error_clear(&err);

	/* TOPOSHIM_TOPOLOGY_XML wins over everything */
	cleanup_free char *xml = ts_test_fixture_path("topology/4c2t.xml");
	setenv("TOPOSHIM_TOPOLOGY_XML", xml, 1);
	assert_int_equal(ts_topology_load_default(NULL, state_dir, &t, &err), 0);
	assert_string_equal(t->source, xml);
	t = ts_topology_free(t);
	unsetenv("TOPOSHIM_TOPOLOGY_XML");

	cleanup_free char *rm = NULL;
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(rm), 0);
}

/* hwloc's export of a synthetic topology, every level kept (the loader
 * would drop the L1 and L2 caches that test_xml_cache counts). */
static void write_synthetic_xml(const char *desc, const char *path)
{
	hwloc_topology_t h;

	assert_int_equal(hwloc_topology_init(&h), 0);
	assert_int_equal(hwloc_topology_set_synthetic(h, desc), 0);
	assert_int_equal(hwloc_topology_load(h), 0);
	assert_int_equal(hwloc_topology_export_xml(h, path, 0), 0);
	hwloc_topology_destroy(h);
}

/* An XML file through the cache: reused while the file is unchanged, loaded
 * again once it is replaced; the source stays the path; L1/L2 caches are
 * gone (the file has 192 of each, the shape of a 2 x EPYC 9654) and the L3
 * groups are kept. */
static void test_xml_cache(void **state)
{
	char dir[] = "/tmp/ts-xmlcache-XXXXXX";
	cleanup_free char *other = ts_test_fixture_path("topology/4c2t.xml");
	cleanup_free char *xml = NULL, *cmd = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *t = NULL;
	bool cached = true;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&xml, "%s/t.xml", dir) > 0);
	write_synthetic_xml("pack:2 l3:12 l2:8 l1d:1 core:1 pu:2", xml);

	assert_int_equal(ts_topology_load_xml_cached(xml, dir, &t, &cached, &err), 0);
	assert_false(cached);
	assert_string_equal(t->source, xml);
	assert_int_equal(hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_L2CACHE), 0);
	assert_int_equal(hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_L1CACHE), 0);
	assert_int_equal(hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_L3CACHE), 24);
	t = ts_topology_free(t);
	assert_int_equal(ts_topology_load_xml_cached(xml, dir, &t, &cached, &err), 0);
	assert_true(cached);
	assert_string_equal(t->source, xml);
	assert_int_equal(hwloc_bitmap_weight(t->online), 384);
	assert_int_equal(hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_L3CACHE), 24);
	t = ts_topology_free(t);

	/* replaced by another machine's file: loaded again, not the cache */
	assert_true(asprintf(&cmd, "cp '%s' '%s.new' && mv '%s.new' '%s'", other, xml, xml, xml) >
		    0);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ts_topology_load_xml_cached(xml, dir, &t, &cached, &err), 0);
	assert_false(cached);
	assert_int_equal(hwloc_bitmap_weight(t->online), 8);
	t = ts_topology_free(t);

	/* a missing file is the loader's error, cache or not */
	free(xml);
	assert_true(asprintf(&xml, "%s/missing.xml", dir) > 0);
	assert_int_equal(ts_topology_load_xml_cached(xml, dir, &t, &cached, &err), -ENOENT);
	assert_true(strstr(err->msg, "missing.xml: cannot read topology") != NULL);

	free(cmd);
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
}

/* Extract a corpus sysfs tarball into dir (fork/exec of tar). */
static void extract(const char *tarball, const char *dir)
{
	cleanup_free char *path = corpus_path("sysfs", tarball);
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("tar", "tar", "xjf", path, "-C", dir, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void link_at(const char *root, const char *target, const char *rel)
{
	cleanup_free char *path = NULL, *cmd = NULL;

	assert_true(asprintf(&path, "%s/%s", root, rel) > 0);
	assert_true(asprintf(&cmd, "mkdir -p \"$(dirname '%s')\"", path) > 0);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(symlink(target, path), 0);
}

static void check_loc(const struct ts_devloc_roots *roots, const char *path, bool block, dev_t rdev,
		      int numa, const char *cpus, const char *pci, const char *how)
{
	struct ts_device_locality loc;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *s = NULL;

	assert_int_equal(ts_device_locality_rdev(roots, path, block, rdev, &loc, &err), 0);
	if (loc.local_cpus != NULL)
		assert_int_equal(ts_cpulist_format(loc.local_cpus, &s, &err), 0);
	if (loc.numa_node != numa || strcmp(loc.how, how) != 0 ||
	    strcmp(s != NULL ? s : "(none)", cpus) != 0 ||
	    strcmp(loc.pci_address != NULL ? loc.pci_address : "(none)", pci) != 0)
		fail_msg("%s: numa %d cpus %s pci %s how %s", path, loc.numa_node,
			 s != NULL ? s : "(none)", loc.pci_address ? loc.pci_address : "(none)",
			 loc.how);
	ts_device_locality_release(&loc);
}

static void test_device_locality(void **state)
{
	char dir[] = "/tmp/ts-sysfs-XXXXXX";

	free(corpus_path("sysfs", "32em64t-2n8c+1mic.tar.bz2"));
	free(corpus_path("sysfs", "nvidiagpunumanodes.tar.bz2"));

	cleanup_free char *sys = NULL, *nvsys = NULL, *nvproc = NULL, *rm = NULL;

	assert_non_null(mkdtemp(dir));
	extract("32em64t-2n8c+1mic.tar.bz2", dir);
	extract("nvidiagpunumanodes.tar.bz2", dir);
	assert_true(asprintf(&sys, "%s/32em64t-2n8c+1mic/sys", dir) > 0);
	/* the tarballs hold no /sys/dev links: add the kernel's ones */
	link_at(sys, "../../devices/pci0000:00/0000:00:02.0/block/nvme0n1", "dev/block/259:0");
	link_at(sys, "../../devices/pci0000:80/0000:80:02.2/0000:82:00.0/infiniband_verbs/uverbs0",
		"dev/char/231:192");
	link_at(sys, "../../../../devices/pci0000:80/0000:80:02.2/0000:82:00.0",
		"kernel/iommu_groups/7/devices/0000:82:00.0");

	struct ts_devloc_roots roots = {.sysfs_root = sys, .proc_root = "/nonexistent"};
	check_loc(&roots, "/dev/nvme0n1", true, makedev(259, 0), -1, "0-3", "0000:00:02.0",
		  "sysfs");
	check_loc(&roots, "/dev/infiniband/uverbs0", false, makedev(231, 192), 1, "8-15",
		  "0000:82:00.0", "sysfs");
	check_loc(&roots, "/dev/vfio/7", false, makedev(243, 0), 1, "8-15", "0000:82:00.0", "vfio");
	check_loc(&roots, "/dev/sda", true, makedev(8, 0), -1, "(none)", "(none)", "unknown");

	/* NVIDIA: minor 2 is the GPU whose information file says so */
	assert_true(asprintf(&nvsys, "%s/nvidiagpunumanodes/sys", dir) > 0);
	assert_true(asprintf(&nvproc, "%s/nvidiagpunumanodes/proc", dir) > 0);
	write_text(nvproc, "driver/nvidia/gpus/0004:05:00.0/information",
		   "Model: \t\t Tesla V100\nDevice Minor: \t 2\nBus Location: \t 0004:05:00.0\n");
	write_text(nvproc, "driver/nvidia/gpus/0004:06:00.0/information", "Device Minor: \t 3\n");
	roots = (struct ts_devloc_roots){.sysfs_root = nvsys, .proc_root = nvproc};
	check_loc(&roots, "/dev/nvidia2", false, makedev(195, 2), -1, "0-15", "0004:05:00.0",
		  "nvidia");
	check_loc(&roots, "/dev/nvidia1", false, makedev(195, 1), -1, "(none)", "(none)",
		  "unknown");

	struct ts_device_locality loc;
	cleanup_error struct ts_error *err = NULL;
	assert_int_equal(ts_device_locality(&roots, "/nonexistent/dev", &loc, &err), -ENOENT);
	assert_string_equal(err->msg, "/nonexistent/dev: cannot stat device");
	ts_error_clear(&err);
	assert_int_equal(ts_device_locality(&roots, "/etc/hostname", &loc, &err), -EINVAL);
	assert_string_equal(err->msg, "/etc/hostname: not a device node");

	assert_true(asprintf(&rm, "chmod -R u+rwx '%s'; rm -rf '%s'", dir, dir) > 0);
	assert_int_equal(system(rm), 0);
}

/* The same kinds of locality from the made-up tree of
 * tests/fixtures/sysfs/make-tree.sh: a /sys/dev link to a device with
 * numa_node -1 and a cpu list, one with a mask only, an IOMMU group, and an
 * NVIDIA node found through /proc/driver/nvidia. */
static void test_device_locality_own(void **state)
{
	char dir[] = "/tmp/ts-ownsysfs-XXXXXX";
	cleanup_free char *script = ts_test_fixture_path("sysfs/make-tree.sh");
	cleanup_free char *cmd = NULL, *sys = NULL, *proc = NULL;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&cmd, "sh '%s' '%s'", script, dir) > 0);
	assert_int_equal(system(cmd), 0);
	assert_true(asprintf(&sys, "%s/sys", dir) > 0);
	assert_true(asprintf(&proc, "%s/proc", dir) > 0);

	struct ts_devloc_roots roots = {.sysfs_root = sys, .proc_root = "/nonexistent"};
	check_loc(&roots, "/dev/nvme0n1", true, makedev(259, 0), -1, "0-3", "0000:00:02.0",
		  "sysfs");
	check_loc(&roots, "/dev/infiniband/uverbs0", false, makedev(231, 192), 1, "4-7",
		  "0000:82:00.0", "sysfs");
	check_loc(&roots, "/dev/vfio/7", false, makedev(243, 0), 1, "4-7", "0000:82:00.0", "vfio");
	check_loc(&roots, "/dev/vfio/8", false, makedev(243, 1), -1, "(none)", "(none)", "unknown");
	check_loc(&roots, "/dev/sda", true, makedev(8, 0), -1, "(none)", "(none)", "unknown");
	/* without /proc/driver/nvidia the node is unknown; with it, minor 2 */
	check_loc(&roots, "/dev/nvidia2", false, makedev(195, 2), -1, "(none)", "(none)",
		  "unknown");
	roots.proc_root = proc;
	check_loc(&roots, "/dev/nvidia2", false, makedev(195, 2), -1, "0-7", "0004:05:00.0",
		  "nvidia");
	check_loc(&roots, "/dev/nvidia1", false, makedev(195, 1), -1, "(none)", "(none)",
		  "unknown");

	free(cmd);
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
}

/* The made-up tree loads through hwloc's Linux backend: 8 PUs, SMT 2, and
 * node 2 without CPUs attached to package 1 (its initiators) as PMEM,
 * being larger than node 1. */
static void test_sysfs_tree_own(void **state)
{
	char dir[] = "/tmp/ts-owntree-XXXXXX";
	cleanup_free char *script = ts_test_fixture_path("sysfs/make-tree.sh");
	cleanup_free char *cmd = NULL, *s = NULL;
	cleanup_topology struct ts_topology *t = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&cmd, "sh '%s' '%s'", script, dir) > 0);
	assert_int_equal(system(cmd), 0);
	if (ts_topology_load_sysfs(dir, &t, &err) < 0)
		fail_msg("%s", err->msg);
	assert_int_equal(hwloc_bitmap_weight(t->online), 8);
	assert_int_equal(t->smt_width, 2);
	assert_int_equal(t->n_numa_nodes, 3);
	assert_int_equal(hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_PACKAGE), 2);
	assert_false(ts_topology_numa_node(t, 1)->memory_only);
	assert_true(ts_topology_numa_node(t, 2)->memory_only);
	assert_int_equal(ts_topology_numa_node(t, 2)->tier, TS_MEMORY_TIER_PMEM);
	assert_int_equal(ts_topology_numa_node(t, 2)->memory_bytes, 17179869184ull);
	assert_int_equal(ts_cpulist_format(ts_topology_numa_node(t, 2)->local_cpus, &s, &err), 0);
	assert_string_equal(s, "4-7");
	assert_null(getenv("HWLOC_FSROOT"));

	free(cmd);
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
}

/* The sysfs tarballs load through hwloc's Linux backend: nri-plugins'
 * "server" has 2 sockets x 2 NUMA nodes with PUs and two CPU-less PMEM
 * nodes (4, 5: 124 GiB next to 31 GiB DRAM nodes). */
static void test_sysfs_trees(void **state)
{
	static const struct {
		const char *tarball, *dir;
		int pus;
		size_t numa;
		const char *memory_only;
	} rows[] = {
		{"nri-plugins-sysfs.tar.bz2", "sysfs/server", 112, 6, "4-5"},
		{"nri-plugins-sysfs.tar.bz2", "sysfs/desktop", 20, 1, ""},
		{"nri-plugins-sysfs.tar.bz2", "sysfs/4-socket-server-nosnc", 144, 4, ""},
		{"32em64t-2n8c+1mic.tar.bz2", "32em64t-2n8c+1mic", 16, 2, ""},
		/* no cpu/online file in this tree: hwloc sees the 12 PUs that have a
		 * topology directory (the XML of corpus 05 also applies a cpuset) */
		{"16em64t-4s2c2t-offlines.tar.bz2", "16em64t-4s2c2t-offlines", 12, 1, ""},
	};
	char dir[] = "/tmp/ts-trees-XXXXXX";

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		free(corpus_path("sysfs", rows[i].tarball));

	cleanup_free char *rm = NULL;

	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *root = NULL, *mo_str = NULL;
		cleanup_topology struct ts_topology *t = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_hwloc_bitmap hwloc_bitmap_t mo = hwloc_bitmap_alloc();

		if (i == 0 || strcmp(rows[i].tarball, rows[i - 1].tarball) != 0)
			extract(rows[i].tarball, dir);
		assert_true(asprintf(&root, "%s/%s", dir, rows[i].dir) > 0);
		if (ts_topology_load_sysfs(root, &t, &err) < 0)
			fail_msg("%s: %s", rows[i].dir, err->msg);
		for (size_t k = 0; k < t->n_numa_nodes; k++)
			if (t->numa_nodes[k].memory_only)
				hwloc_bitmap_set(mo, t->numa_nodes[k].os_index);
		assert_int_equal(ts_cpulist_format(mo, &mo_str, &err), 0);
		if (hwloc_bitmap_weight(t->online) != rows[i].pus ||
		    t->n_numa_nodes != rows[i].numa || strcmp(mo_str, rows[i].memory_only) != 0)
			fail_msg("%s: pus %d numa %zu memory-only '%s'", rows[i].dir,
				 hwloc_bitmap_weight(t->online), t->n_numa_nodes, mo_str);
		if (i == 0) {
			assert_int_equal(ts_topology_numa_node(t, 4)->tier, TS_MEMORY_TIER_PMEM);
			assert_int_equal(ts_topology_numa_node(t, 0)->tier, TS_MEMORY_TIER_DRAM);
		}
	}
	assert_null(getenv("HWLOC_FSROOT"));

	struct ts_topology *t = NULL;
	cleanup_error struct ts_error *err = NULL;
	assert_int_equal(ts_topology_load_sysfs(dir, &t, &err), -ENOENT);
	assert_true(strstr(err->msg, ": no sysfs tree (sys/devices/system/cpu)") != NULL);

	assert_true(asprintf(&rm, "chmod -R u+rwx '%s'; rm -rf '%s'", dir, dir) > 0);
	assert_int_equal(system(rm), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_own_topologies_load),
		cmocka_unit_test(test_tiers_own),
		cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_xml_cache),
		cmocka_unit_test(test_device_locality_own),
		cmocka_unit_test(test_sysfs_tree_own),
		/* the shared corpus: real machines (skipped without it) */
		cmocka_unit_test(test_corpus_loads),
		cmocka_unit_test(test_tiers_knl),
		cmocka_unit_test(test_device_locality),
		cmocka_unit_test(test_sysfs_trees),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
