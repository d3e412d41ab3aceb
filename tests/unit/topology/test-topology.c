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
#include "../placement/topogen.h"
#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static void test_cpulist(void **state)
{
	static const struct {
		const char *in, *out;
	} ok[] = {
		{"", ""},
		{"0", "0"},
		{"0-3,8", "0-3,8"},
		{"1,3-5,4", "1,3-5"},
		{"7-7", "7"},
		{"0,2,4,6", "0,2,4,6"},
		/* decimal even with leading zeros (fuzz-cpulist: hwloc read "010" as 8) */
		{"010", "10"},
		{"08", "8"},
		{"007-010,0012", "7-10,12"},
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

/* ---- NUMA domains, home mems, levels (generated topologies) --------- */

static struct ts_topology *load_gen(const struct tg_topo *g)
{
	cleanup_free char *xml = tg_xml(g);
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *t = NULL;

	if (ts_topology_load_xml_buffer(xml, "generated", &t, &err) < 0)
		fail_msg("%s\n%s\n%s", err->msg, g->log, xml);
	return t;
}

static void assert_list(const char *what, hwloc_const_bitmap_t got, const char *want)
{
	cleanup_free char *s = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_cpulist_format(got, &s, &err), 0);
	if (strcmp(s, want) != 0)
		fail_msg("%s: got '%s', want '%s'", what, s, want);
}

static const struct ts_cpu_group *numa_group(const struct ts_topology *t, size_t i)
{
	assert_true(i < t->n_groups[TS_CPU_LEVEL_NUMA]);
	return &t->groups[TS_CPU_LEVEL_NUMA][i];
}

/* The desktop whose second die has CPUs and no memory: in hwloc the PUs of
 * that die are in no NUMA node.  They form a placeholder domain whose
 * memory is the nearest DRAM node's (here the machine's only one). */
static void test_cpus_without_numa_node(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] l3:1 core:4 pu:2");
	cleanup_topology struct ts_topology *t = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	const struct ts_cpu_group *d;

	tg_drop_memory(g, 1, true);
	t = load_gen(g);
	assert_int_equal(t->n_numa_nodes, 1);
	assert_int_equal(t->n_groups[TS_CPU_LEVEL_NUMA], 2);
	d = numa_group(t, 0);
	assert_false(d->placeholder);
	assert_int_equal(d->numa_node, 0);
	assert_list("node 0 cpus", d->cpus, "0-7");
	assert_string_equal(d->mems_how, "local");
	d = numa_group(t, 1);
	assert_true(d->placeholder);
	assert_int_equal(d->numa_node, -1);
	assert_list("no-node cpus", d->cpus, "8-15");
	assert_list("no-node mems", d->mems, "0");
	assert_string_equal(d->mems_how, "Machine");
	assert_ptr_equal(ts_topology_numa_group_of_pu(t, 12), d);
	assert_null(ts_topology_numa_group_of_pu(t, 16));
	/* every level still reaches PUs 8-15 */
	for (int l = 0; l < _TS_CPU_LEVEL_MAX; l++) {
		cleanup_hwloc_bitmap hwloc_bitmap_t all = hwloc_bitmap_alloc();
		for (size_t i = 0; i < t->n_groups[l]; i++)
			hwloc_bitmap_or(all, all, t->groups[l][i].cpus);
		assert_list(ts_cpu_level_to_string((enum ts_cpu_level)l), all, "0-15");
	}
	assert_int_equal(ts_topology_mems_for(t, d->cpus, TS_MEMORY_TIER_DRAM, mems), 0);
	assert_list("mems of 8-15", mems, "0");
	assert_int_equal(ts_topology_mems_for(t, d->cpus, TS_MEMORY_TIER_HBM, mems), -ENOENT);
	tg_free(g);
}

/* CPU nodes that exist with no memory: the nearest DRAM by distance (all on
 * a tie), else the DRAM nodes of the enclosing package, else the machine. */
static void test_cpu_node_without_memory(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:4 [numa(memory=1073741824)] core:2 pu:1");
	cleanup_topology struct ts_topology *t = NULL;
	/* node 3 is 20 from nodes 1 and 2, 30 from node 0 */
	static const uint64_t lat[16] = {10, 20, 20, 30, 20, 10, 20, 20,
					 20, 20, 10, 20, 30, 20, 20, 10};

	tg_default_distances(g);
	memcpy(g->dist, lat, sizeof(lat));
	tg_drop_memory(g, 3, false);
	t = load_gen(g);
	assert_int_equal(t->n_numa_nodes, 4);
	assert_false(ts_topology_numa_node(t, 3)->has_memory);
	assert_false(ts_topology_numa_node(t, 3)->memory_only);
	assert_int_equal(numa_group(t, 3)->numa_node, 3);
	assert_list("node 3 mems", numa_group(t, 3)->mems, "1-2");
	assert_string_equal(numa_group(t, 3)->mems_how, "distance");
	ts_topology_free(t);
	tg_free(g);

	/* two nodes per package, no latency matrix: the package's other node */
	g = tg_synthetic("pack:2 group:2 [numa(memory=1073741824)] core:2 pu:1");
	tg_drop_memory(g, 1, false);
	t = load_gen(g);
	assert_list("node 1 mems", numa_group(t, 1)->mems, "0");
	assert_string_equal(numa_group(t, 1)->mems_how, "Package");
	tg_free(g);
}

/* Memory-only nodes own no PU even with a lower OS index than the CPU node
 * of their locality; a node near no PU is GPU memory. */
static void test_memory_only_nodes(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:1 [numa(memory=8589934592)] core:4 pu:1");
	cleanup_topology struct ts_topology *t = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t mems = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t cpus = hwloc_bitmap_alloc();

	tg_numa(g, 0)->os = 3;
	tg_add_memory_only(g, g->root->kids[0], 1, "HBM", 1u << 30);
	tg_add_memory_only(g, NULL, 7, "GPUMemory", 1u << 30);
	t = load_gen(g);
	assert_false(ts_topology_numa_node(t, 3)->memory_only);
	assert_list("node 3", ts_topology_numa_node(t, 3)->cpus, "0-3");
	assert_true(ts_topology_numa_node(t, 1)->memory_only);
	assert_int_equal(ts_topology_numa_node(t, 1)->tier, TS_MEMORY_TIER_HBM);
	assert_int_equal(ts_topology_numa_node(t, 7)->tier, TS_MEMORY_TIER_GPU);
	assert_int_equal(t->n_groups[TS_CPU_LEVEL_NUMA], 1);
	hwloc_bitmap_set_range(cpus, 0, 1);
	assert_int_equal(ts_topology_mems_for(t, cpus, TS_MEMORY_TIER_HBM, mems), 0);
	assert_list("hbm", mems, "1,3");
	assert_int_equal(ts_topology_mems_for(t, cpus, TS_MEMORY_TIER_GPU, mems), 0);
	assert_list("gpu (no local one: every gpu node)", mems, "3,7");
	tg_free(g);
}

static void check_levels(const char *name, const struct ts_topology *t)
{
	for (int l = 0; l < _TS_CPU_LEVEL_MAX; l++) {
		cleanup_hwloc_bitmap hwloc_bitmap_t all = hwloc_bitmap_alloc();

		if (t->n_groups[l] == 0 && (l == TS_CPU_LEVEL_NUMA || l == TS_CPU_LEVEL_CORE))
			fail_msg("%s: no %s groups", name, ts_cpu_level_to_string(l));
		for (size_t i = 0; i < t->n_groups[l]; i++) {
			const struct ts_cpu_group *g = &t->groups[l][i];

			if (hwloc_bitmap_iszero(g->cpus) || hwloc_bitmap_intersects(all, g->cpus))
				fail_msg("%s: %s %zu empty or overlapping", name,
					 ts_cpu_level_to_string(l), i);
			hwloc_bitmap_or(all, all, g->cpus);
			if (l != TS_CPU_LEVEL_NUMA)
				continue;
			if (g->mems == NULL || hwloc_bitmap_iszero(g->mems))
				fail_msg("%s: numa group %zu has no mems", name, i);
			unsigned n;
			hwloc_bitmap_foreach_begin(n, g->mems)
				{
					const struct ts_numa_node *nd = ts_topology_numa_node(t, n);
					if (nd == NULL || !nd->has_memory)
						fail_msg("%s: numa group %zu: mems node %u has no "
							 "memory",
							 name, i, n);
				}
			hwloc_bitmap_foreach_end();
		}
		if (t->n_groups[l] > 0 && !hwloc_bitmap_isequal(all, t->online))
			fail_msg("%s: %s groups do not cover the online cpus", name,
				 ts_cpu_level_to_string(l));
	}
}

/* Every generated topology: each level partitions the online PUs and every
 * NUMA domain has mems with memory; from the corpus too when present. */
static void test_levels_partition(void **state)
{
	const char *dir = getenv("TS_SHARED_DIR");
	const unsigned rounds = ts_test_rounds(300), corpus_rounds = ts_test_rounds(20);

	for (uint64_t seed = 1; seed <= rounds; seed++) {
		struct tg_topo *g = tg_random(seed, NULL);
		cleanup_topology struct ts_topology *t = load_gen(g);
		char name[64];

		snprintf(name, sizeof(name), "seed %llu", (unsigned long long)seed);
		check_levels(name, t);
		tg_free(g);
	}
	if (dir == NULL || access(dir, R_OK) < 0) {
		printf("# skip corpus part: TS_SHARED_DIR is not set or not readable\n");
		return;
	}
	static const char *const files[] = {"10-hwloc-linux-64amd64-4s2n4ca2co.xml",
					    "14-hwloc-linux-fakeheteromemtiers-dram-hbm-nvm.xml",
					    "20-flux-sierra-power9-4xv100.v2.xml",
					    "24-psmgmt-knl05-snc4-flat-mcdram.xml"};
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		cleanup_free char *path = corpus_path("topology", files[i]);
		struct tg_topo *base = tg_from_xml_file(path);

		assert_non_null(base);
		for (uint64_t seed = 1; seed <= corpus_rounds; seed++) {
			struct tg_topo *g = tg_random(seed, base);
			cleanup_topology struct ts_topology *t = load_gen(g);

			check_levels(files[i], t);
			tg_free(g);
		}
		tg_free(base);
	}
}

/* hwloc 2.9 imports v1 XML (what hwloc 1.x wrote). */
static void test_v1_xml(void **state)
{
	char path[] = "/tmp/ts-v1-XXXXXX";
	int fd = mkstemp(path);
	hwloc_topology_t h;
	cleanup_topology struct ts_topology *t = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(hwloc_topology_init(&h), 0);
	assert_int_equal(hwloc_topology_set_synthetic(h, "pack:2 [numa(memory=1073741824)] core:2 "
							 "pu:2"),
			 0);
	assert_int_equal(hwloc_topology_load(h), 0);
	assert_int_equal(hwloc_topology_export_xml(h, path, HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1), 0);
	hwloc_topology_destroy(h);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &text, NULL, &err), 0);
	assert_null(strstr(text, "version=\"2.0\""));
	assert_non_null(strstr(text, "hwloc.dtd"));
	if (ts_topology_load_xml(path, &t, &err) < 0)
		fail_msg("%s", err->msg);
	unlink(path);
	assert_int_equal(hwloc_bitmap_weight(t->online), 8);
	assert_int_equal(t->n_numa_nodes, 2);
}

/* Kinds as an ARM big.LITTLE machine reports them: five by capacity.  The
 * big ones (within half the span of the fastest) are performance. */
static void test_cpu_kinds(void **state)
{
	static const struct {
		unsigned first, last, capacity, freq;
	} kinds[] = {{13, 14, 230, 1800},
		     {10, 12, 400, 2000},
		     {5, 9, 880, 2800},
		     {1, 4, 930, 3000},
		     {0, 0, 1024, 3200}};
	struct tg_topo *g = tg_synthetic("pack:1 core:15 pu:1");
	cleanup_hwloc_bitmap hwloc_bitmap_t perf = hwloc_bitmap_alloc();
	cleanup_hwloc_bitmap hwloc_bitmap_t eff = hwloc_bitmap_alloc();
	struct ts_topology *t;

	for (int pass = 0; pass < 3; pass++) {
		tg_set_kinds(g, 0, false, false, 0);
		g->kinds = calloc(ARRAY_SIZE(kinds), sizeof(*g->kinds));
		g->nkinds = ARRAY_SIZE(kinds);
		for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
			g->kinds[i].cpus = hwloc_bitmap_alloc();
			hwloc_bitmap_set_range(g->kinds[i].cpus, kinds[i].first, kinds[i].last);
			/* pass 0: efficiency and capacity; 1: capacity; 2: frequency */
			g->kinds[i].efficiency = pass == 0 ? (int)i : -1;
			g->kinds[i].capacity = pass < 2 ? kinds[i].capacity : 0;
			g->kinds[i].frequency_mhz = pass == 2 ? kinds[i].freq : 0;
		}
		t = load_gen(g);
		assert_int_equal(t->n_cpu_kinds, 5);
		/* hwloc ranks kinds by their frequencies itself, not by capacity */
		assert_string_equal(t->kinds_ranked_by, pass == 1 ? "capacity" : "efficiency");
		assert_string_equal(t->kinds_scored_by, pass < 2 ? "capacity" : "frequency");
		assert_list("slowest", t->cpu_kinds[0].cpus, "13-14");
		assert_list("fastest", t->cpu_kinds[4].cpus, "0");
		assert_true(t->cpu_kinds[0].score == 0.0 && t->cpu_kinds[4].score == 1.0);
		assert_list("performance", t->performance_cpus, "0-9");
		assert_list("efficiency", t->efficiency_cpus, "10-14");
		assert_true(ts_topology_kinds_split(t, 0.95, perf, eff));
		assert_list("performance at 0.95", perf, "0");
		assert_true(ts_topology_kinds_split(t, 0.1, perf, eff));
		assert_list("efficiency at 0.1", eff, "13-14");
		assert_false(ts_topology_kinds_split(t, 0.0, perf, eff));
		assert_true(hwloc_bitmap_iszero(perf) && hwloc_bitmap_iszero(eff));
		ts_topology_free(t);
	}
	/* kinds hwloc cannot rank (no efficiency, no info): no preference */
	for (size_t i = 0; i < g->nkinds; i++)
		g->kinds[i].frequency_mhz = 0;
	t = load_gen(g);
	assert_null(t->kinds_ranked_by);
	assert_true(hwloc_bitmap_iszero(t->performance_cpus));
	ts_topology_free(t);
	/* ranks only: the score is the rank */
	for (size_t i = 0; i < g->nkinds; i++)
		g->kinds[i].efficiency = (int)i;
	t = load_gen(g);
	assert_string_equal(t->kinds_scored_by, "rank");
	assert_true(t->cpu_kinds[2].score == 0.5);
	assert_list("performance by rank", t->performance_cpus, "0-9");
	ts_topology_free(t);
	tg_free(g);
}

/* A snapshot holds every table placement uses: exported again after
 * loading it gives the same text, over generated topologies and the
 * corpus; damaged snapshots are refused. */
static void test_snapshot(void **state)
{
	const unsigned rounds = ts_test_rounds(200);
	const char *dir = getenv("TS_SHARED_DIR");

	for (uint64_t seed = 1; seed <= rounds; seed++) {
		struct tg_topo *g = tg_random(seed, NULL);
		cleanup_topology struct ts_topology *t = load_gen(g), *u = NULL;
		cleanup_free char *a = NULL, *b = NULL;
		cleanup_error struct ts_error *err = NULL;

		assert_int_equal(ts_topology_snapshot_export(t, &a, &err), 0);
		if (ts_topology_snapshot_load(a, "snap", &u, &err) < 0)
			fail_msg("seed %llu: %s\n%s", (unsigned long long)seed, err->msg, a);
		assert_null(u->hwloc);
		assert_int_equal(ts_topology_snapshot_export(u, &b, &err), 0);
		if (strcmp(a, b) != 0)
			fail_msg("seed %llu: snapshot changed:\n%s\n---\n%s",
				 (unsigned long long)seed, a, b);
		assert_true(hwloc_bitmap_isequal(t->performance_cpus, u->performance_cpus));
		tg_free(g);
	}
	if (dir != NULL && access(dir, R_OK) == 0) {
		cleanup_free char *path = corpus_path("topology", "18-flux-ipa20-xe8640-spr-snc4-"
								  "4xh100.xml");
		cleanup_topology struct ts_topology *t = NULL, *u = NULL;
		cleanup_free char *a = NULL, *b = NULL;
		cleanup_error struct ts_error *err = NULL;

		assert_int_equal(ts_topology_load_xml(path, &t, &err), 0);
		assert_int_equal(ts_topology_snapshot_export(t, &a, &err), 0);
		assert_int_equal(ts_topology_snapshot_load(a, "snap", &u, &err), 0);
		assert_int_equal(ts_topology_snapshot_export(u, &b, &err), 0);
		assert_string_equal(a, b);
		assert_int_equal(u->n_latency, 8);
	} else {
		printf("# skip corpus part: TS_SHARED_DIR is not set or not readable\n");
	}
	static const char *const bad[] = {
		"",
		"toposhim-topology-snapshot 2\nend\n",
		"toposhim-topology-snapshot 1\nonline 0-3\nsmt 1\n", /* no end */
		"toposhim-topology-snapshot 1\nonline 0-3\nsmt 1\ngroup 1 0 0 0 0-3 0 local\n"
		"group 3 0 0 -1 0-2 - -\nend\n", /* cores miss PU 3 */
		"toposhim-topology-snapshot 1\nonline 0-3\nsmt 1\ngroup 1 0 0 0 0-3 - local\n"
		"group 3 0 0 -1 0-3 - -\nend\n", /* numa group without mems */
		"toposhim-topology-snapshot 1\nonline 0-3\nsmt 1\nbogus 1\nend\n",
		"toposhim-topology-snapshot 1\nonline 0-3\nsmt x\nend\n",
		/* no online line (fuzz-topology: hwloc_bitmap_last(NULL) crashed) */
		"toposhim-topology-snapshot 1\nsmt 1\ngroup 1 0 0 0 0-3 0 local\n"
		"group 3 0 0 -1 0-3 - -\nend\n",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_topology struct ts_topology *t = NULL;
		cleanup_error struct ts_error *err = NULL;

		assert_int_equal(ts_topology_snapshot_load(bad[i], "snap", &t, &err), -EINVAL);
		if (strcmp(err->msg, i < 2 ? "snap: not a topology snapshot"
					   : "snap: invalid topology snapshot") != 0)
			fail_msg("bad %zu: %s", i, err->msg);
	}
}

/* The placement loader reads the cache's snapshot once a create wrote it,
 * and never writes when told not to. */
static void test_placement_load(void **state)
{
	char dir[] = "/tmp/ts-snapcache-XXXXXX";
	cleanup_free char *xml = NULL, *path = NULL, *snap = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] core:4 pu:2");
	struct ts_topology *t = NULL;

	assert_non_null(mkdtemp(dir));
	xml = tg_xml(g);
	tg_free(g);
	assert_true(asprintf(&path, "%s/m.xml", dir) > 0);
	assert_true(asprintf(&snap, "%s/topology.snapshot", dir) > 0);
	assert_int_equal(ts_write_file_atomic_at(AT_FDCWD, path, xml, strlen(xml), 0644, &err), 0);
	/* read only: nothing written, hwloc tree loaded */
	assert_int_equal(ts_topology_load_for_placement(path, dir, false, &t, &err), 0);
	assert_non_null(t->hwloc);
	assert_int_equal(access(snap, F_OK), -1);
	t = ts_topology_free(t);
	/* writing: the cache and its snapshot */
	assert_int_equal(ts_topology_load_for_placement(path, dir, true, &t, &err), 0);
	assert_non_null(t->hwloc);
	assert_int_equal(access(snap, F_OK), 0);
	t = ts_topology_free(t);
	/* then the snapshot, with the source the XML's path */
	assert_int_equal(ts_topology_load_for_placement(path, dir, false, &t, &err), 0);
	assert_null(t->hwloc);
	assert_string_equal(t->source, path);
	assert_int_equal(hwloc_bitmap_weight(t->online), 16);
	assert_int_equal(t->n_groups[TS_CPU_LEVEL_NUMA], 2);
	t = ts_topology_free(t);
	/* a full load still parses the XML */
	assert_int_equal(ts_topology_load_default(path, dir, &t, &err), 0);
	assert_non_null(t->hwloc);
	t = ts_topology_free(t);
	/* a snapshot of another key is not used */
	assert_int_equal(
		ts_write_file_atomic_at(AT_FDCWD, snap, "xml=other\n--\nend\n", 17, 0644, &err), 0);
	assert_int_equal(ts_topology_load_for_placement(path, dir, false, &t, &err), 0);
	assert_non_null(t->hwloc);
	t = ts_topology_free(t);
	cleanup_free char *rm = NULL;
	assert_true(asprintf(&rm, "rm -rf '%s'", dir) > 0);
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
		cmocka_unit_test(test_cpus_without_numa_node),
		cmocka_unit_test(test_cpu_node_without_memory),
		cmocka_unit_test(test_memory_only_nodes),
		cmocka_unit_test(test_levels_partition),
		cmocka_unit_test(test_v1_xml),
		cmocka_unit_test(test_cpu_kinds),
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_placement_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
