/*
 * Tests of src/placement/nrt.c (ts_placement_nrt(): the node as a
 * NodeResourceTopology object) on the project's topologies
 * (tests/fixtures/topology) with live allocations and CDI devices, against
 * the exact objects in tests/fixtures/nrt/ (pretty JSON, as `toposhimctl
 * nrt` prints them), and on real machines' topologies of the shared corpus
 * when it is there.
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
#include <cmocka.h>

#include "../require.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* One allocation of a case: cpus and mems as lists. */
struct alloc_row {
	const char *id;
	enum ts_placement_pool pool;
	const char *cpus;
	const char *mems;
};

struct nrt_case {
	const char *name;
	const char *topology;  /* tests/fixtures/topology/<file> */
	const char *placement; /* the "placement" config object, JSON */
	struct alloc_row allocs[8];
	struct ts_placement_nrt_device devices[8];
	const char *want; /* tests/fixtures/nrt/<file> */
};

/* 4n-latency.xml: node n = PUs 4n..4n+3, 8 GiB each, a latency matrix.
 * Reserved 0-1; exclusive 2-3 (node 0) and 4-7 (node 1 whole), NUMA-
 * exclusive 8-11 with mems 2 (node 2 held whole: no memory left), pinned
 * 12, a shared-pool container on 12-15 (takes nothing away).  Devices
 * given out of order: two kinds on node 0 (listed sorted), one held
 * there; a held nic on node 1; a gpu on node 3; one of unknown locality
 * (in no zone). */
static const struct nrt_case cases[] = {
	{
		.name = "4n-latency: reserved, exclusive, numa-exclusive, pinned, devices",
		.topology = "4n-latency.xml",
		.placement = "{\"reserved\": {\"cpus\": \"0-1\"}}",
		.allocs =
			{
				{"c1", TS_PLACEMENT_POOL_EXCLUSIVE, "2-3", "0"},
				{"c2", TS_PLACEMENT_POOL_EXCLUSIVE, "4-7", "1"},
				{"c3", TS_PLACEMENT_POOL_NUMA_EXCLUSIVE, "8-11", "2"},
				{"c4", TS_PLACEMENT_POOL_PINNED, "12", "3"},
				{"c5", TS_PLACEMENT_POOL_SHARED, "12-15", "3"},
			},
		.devices =
			{
				{"example.com/nic", 0, false},
				{"example.com/gpu", 0, true},
				{"example.com/gpu", 0, false},
				{"example.com/nic", 1, true},
				{"example.com/gpu", 3, false},
				{"example.com/gpu", -1, false},
			},
		.want = "4n-latency.json",
	},
	/* 2n8c2t.xml: node 0 = PUs 0-7,16-23, node 1 = 8-15,24-31, no memory
	 * sizes, no latency matrix.  Reserved count 2 = the lowest core (0,16);
	 * exclusive 1-2,17-18 on node 0 and 7-8 across both nodes. */
	{
		.name = "2n8c2t: reserved count, an allocation across nodes",
		.topology = "2n8c2t.xml",
		.placement = "{\"reserved\": {\"count\": 2}}",
		.allocs =
			{
				{"c1", TS_PLACEMENT_POOL_EXCLUSIVE, "1-2,17-18", "0"},
				{"c2", TS_PLACEMENT_POOL_EXCLUSIVE, "7-8", "0-1"},
				{"c3", TS_PLACEMENT_POOL_SHARED, "3-6,9-15,19-31", "0-1"},
			},
		.want = "2n8c2t.json",
	},
	/* placement off: nothing reserved or held, policy none */
	{
		.name = "2n8c2t: placement disabled",
		.topology = "2n8c2t.xml",
		.placement = "{\"enabled\": false, \"reserved\": {\"count\": 2}}",
		.allocs =
			{
				{"c1", TS_PLACEMENT_POOL_EXCLUSIVE, "1-2,17-18", "0"},
			},
		.want = "2n8c2t-disabled.json",
	},
};

static char *read_fixture(const char *dir, const char *file)
{
	cleanup_free char *rel = NULL, *path = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *buf = NULL;

	assert_true(asprintf(&rel, "%s/%s", dir, file) > 0);
	path = ts_test_fixture_path(rel);
	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err) < 0)
		fail_msg("%s", err->msg);
	return buf;
}

static void config_of(const char *placement, struct ts_placement_config *ret)
{
	cleanup_json struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_json_parse(placement, strlen(placement), "case", &j, &err), 0);
	if (ts_placement_config_parse(j, "config.json", ret, &err) < 0)
		fail_msg("%s", err->msg);
}

/* The object of a case as pretty JSON (the bitmaps are freed here). */
static char *run_case(const struct nrt_case *c, struct ts_topology *topo,
		      const struct ts_placement_config *cfg, int *ret_r, char **ret_msg)
{
	struct ts_allocation allocs[8] = {0};
	hwloc_bitmap_t sets[16] = {0};
	size_t n_allocs = 0, n_devices = 0;
	cleanup_json struct ts_json *obj = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *text = NULL;

	for (; n_allocs < 8 && c->allocs[n_allocs].id != NULL; n_allocs++) {
		const struct alloc_row *a = &c->allocs[n_allocs];

		assert_int_equal(ts_cpulist_parse(a->cpus, &sets[2 * n_allocs], &err), 0);
		assert_int_equal(ts_cpulist_parse(a->mems, &sets[2 * n_allocs + 1], &err), 0);
		allocs[n_allocs] = (struct ts_allocation){
			.container_id = a->id,
			.class_name = a->pool == TS_PLACEMENT_POOL_SHARED ? "standard" : "critical",
			.pool = a->pool,
			.cpus = sets[2 * n_allocs],
			.mems = sets[2 * n_allocs + 1],
			.numa_exclusive = a->pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE,
			.pinned = a->pool == TS_PLACEMENT_POOL_PINNED,
		};
	}
	while (n_devices < 8 && c->devices[n_devices].kind != NULL)
		n_devices++;
	*ret_r = ts_placement_nrt(
		&(struct ts_placement_nrt_input){
			.node_name = "worker-1",
			.cfg = cfg,
			.topo = topo,
			.allocs = allocs,
			.n_allocs = n_allocs,
			.devices = c->devices,
			.n_devices = n_devices,
		},
		&obj, &err);
	for (size_t i = 0; i < 2 * n_allocs; i++)
		hwloc_bitmap_free(sets[i]);
	if (*ret_r < 0) {
		*ret_msg = strdup(err->msg);
		return NULL;
	}
	assert_int_equal(ts_json_serialize(obj, true, &text, NULL, &err), 0);
	return text;
}

/* Run a case on the topology file xml and compare with its object. */
static void check_case(const struct nrt_case *c, const char *xml)
{
	cleanup_free char *got = NULL, *want = NULL, *msg = NULL;
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg = {0};
	int r;

	assert_int_equal(ts_topology_load_xml(xml, &topo, &err), 0);
	config_of(c->placement, &cfg);
	got = run_case(c, topo, &cfg, &r, &msg);
	ts_placement_config_release(&cfg);
	if (r < 0)
		fail_msg("%s: %s", c->name, msg);
	want = read_fixture("nrt", c->want);
	if (strcmp(got, want) != 0) {
		/* the whole object, to diff: longer than a cmocka message */
		cleanup_free char *out = NULL;

		assert_true(asprintf(&out, "test-nrt-%s.got", c->want) > 0);
		(void)ts_write_file_atomic_at(AT_FDCWD, out, got, strlen(got), 0644, NULL);
		fail_msg("%s: differs from tests/fixtures/nrt/%s (written: %s)", c->name, c->want,
			 out);
	}
}

static void test_cases(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cleanup_free char *rel = NULL, *xml = NULL;

		assert_true(asprintf(&rel, "topology/%s", cases[i].topology) > 0);
		xml = ts_test_fixture_path(rel);
		check_case(&cases[i], xml);
	}
}

/* A real machine of the corpus: 4 packages of 2 NUMA nodes of 8 PUs (node
 * n = PUs 8n..8n+7), node 5 with half the memory, an AMD latency matrix
 * (10 local, 16 one hop, 22 two).  Reserved 0; exclusive 1-7 (node 0 full);
 * NUMA-exclusive 40-47 (node 5 whole); pinned 63; a held GPU on node 5 and
 * a free one on node 7. */
static const struct nrt_case corpus_case = {
	.name = "corpus 10-hwloc-linux-64amd64-4s2n4ca2co",
	.placement = "{\"reserved\": {\"cpus\": \"0\"}}",
	.allocs =
		{
			{"c1", TS_PLACEMENT_POOL_EXCLUSIVE, "1-7", "0"},
			{"c2", TS_PLACEMENT_POOL_NUMA_EXCLUSIVE, "40-47", "5"},
			{"c3", TS_PLACEMENT_POOL_PINNED, "63", "7"},
		},
	.devices =
		{
			{"example.com/gpu", 5, true},
			{"example.com/gpu", 7, false},
		},
	.want = "corpus-10-4s2n.json",
};

static void test_corpus_exact(void **state)
{
	cleanup_free char *xml =
		ts_test_corpus_path("topology", "10-hwloc-linux-64amd64-4s2n4ca2co.xml");

	check_case(&corpus_case, xml);
}

static void test_errors(void **state)
{
	cleanup_free char *xml = ts_test_fixture_path("topology/4c2t.xml");
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *obj = NULL;
	struct ts_placement_config cfg = {0};
	struct ts_placement_nrt_input in = {.node_name = "", .cfg = &cfg};

	assert_int_equal(ts_topology_load_xml(xml, &topo, &err), 0);
	in.topo = topo;
	config_of("{}", &cfg);
	assert_int_equal(ts_placement_nrt(&in, &obj, &err), -EINVAL);
	assert_string_equal(err->msg, "nodeResourceTopology: empty node name");
	assert_null(obj);
	ts_error_clear(&err);
	ts_placement_config_release(&cfg);
	/* reserved cpus the machine lacks: ts_placement_reserved()'s message */
	config_of("{\"reserved\": {\"cpus\": \"6-9\"}}", &cfg);
	in.node_name = "worker-1";
	assert_int_equal(ts_placement_nrt(&in, &obj, &err), -EINVAL);
	assert_string_equal(err->msg, "config.json: '/placement/reserved/cpus': '6-9' names cpus "
				      "that are not online: 8-9 (online: 0-7)");
	assert_null(obj);
	ts_placement_config_release(&cfg);
}

/* A real machine of the corpus (two packages of one NUMA node each, a GPU
 * and an InfiniBand card): one zone per node, costs from its matrix when it
 * has one, every PU in a zone. */
static void test_corpus(void **state)
{
	cleanup_free char *xml =
		ts_test_corpus_path("topology", "06-hwloc-xml-32em64t-2n8c2t-pci-gpu-ib.xml");
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *obj = NULL;
	struct ts_placement_config cfg = {0};
	struct ts_json *zone;
	size_t i, pus = 0;

	assert_int_equal(ts_topology_load_xml(xml, &topo, &err), 0);
	config_of("{}", &cfg);
	assert_int_equal(ts_placement_nrt(&(struct ts_placement_nrt_input){.node_name = "worker-1",
									   .cfg = &cfg,
									   .topo = topo},
					  &obj, &err),
			 0);
	ts_placement_config_release(&cfg);
	assert_int_equal(ts_json_get_array(obj, "zones")->u.array.len, topo->n_numa_nodes);
	ts_json_array_foreach (ts_json_get_array(obj, "zones"), i, zone) {
		struct ts_json *cpu = ts_json_get_array(zone, "resources")->u.array.items[0];
		char want[16];

		snprintf(want, sizeof(want), "node-%u", topo->numa_nodes[i].os_index);
		assert_string_equal(ts_json_get_string(zone, "name"), want);
		assert_string_equal(ts_json_get_string(cpu, "name"), "cpu");
		pus += strtoul(ts_json_get_string(cpu, "capacity"), NULL, 10);
		assert_string_equal(ts_json_get_string(cpu, "capacity"),
				    ts_json_get_string(cpu, "available"));
		if (topo->n_latency > 0)
			assert_int_equal(ts_json_get_array(zone, "costs")->u.array.len,
					 topo->n_latency);
	}
	assert_int_equal(pus, (size_t)hwloc_bitmap_weight(topo->online));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_corpus_exact),
		cmocka_unit_test(test_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
