/*
 * Unit tests of src/placement/place.c: pools, classes, reserved CPUs, the
 * kubelet's static-policy Allocate cases (placement-cases.md section 6),
 * NUMA policies, memory tiers and CPU kinds on the project's topologies
 * (tests/fixtures/topology, tests/fixtures/sysfs, hwloc synthetic), and on
 * the real machines of the shared corpus when it is there (skipped without).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../require.h"
#include "fixtures.h"
#include "placement/placement.h"
#include "topogen.h"
#include "util/cleanup.h"

#define CPUS_FIELD "config.json: '/annotations/toposhim.io~1cpus': "

/* A topology of the shared corpus, or the test is skipped. */
static struct ts_topology *corpus(const char *file)
{
	cleanup_free char *path = ts_test_corpus_path("topology", file);
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *t = NULL;

	if (ts_topology_load_xml(path, &t, &err) < 0)
		fail_msg("%s", err->msg);
	return t;
}

/* One kubelet Allocate case: reserved (count or list), the exclusive
 * allocations that make the state's "assigned" set, and the request. */
struct alloc_case {
	const char *name;
	enum fixture_id topo;
	unsigned reserved_count;
	const char *reserved_list;
	const char *assigned[2];
	unsigned n;
	bool full_cores;
	const char *want;
	int want_ret;
	const char *want_msg;
	const char *default_set; /* T6 rows: the rest of the machine is assigned */
};

/* T6 socket 1 (kubelet's comment in policy_test.go) */
#define T6_SOCKET1                                                                                 \
	"3-4,11-12,15-16,23-24,27-28,35-36,40-41,48-49,51-52,59-60,65-66,73-74,81-82,89-90,97-98," \
	"111-112,119-120,125-126,133-134,141-142,149-150,157-158,171-172,179-180,185-186,193-194," \
	"201-202,209-210,217-218,231-232,239-240,245-246,253-254,261-262,269-270,277-278"
#define T6_SOCKET0                                                                                 \
	"0-2,9-10,13-14,21-22,25-26,33-34,38-39,46-47,50,57-58,71-72,79-80,87-88,95-96,103-104,"   \
	"109-110,117-118,131-132,139-140,147-148,155-156,163-164,169-170,177-178,191-192,199-200," \
	"207-208,215-216,223-224,229-230,237-238,251-252,259-260,267-268,275-276,283-284"

static const struct alloc_case alloc_cases[] = {
	{"A1", T1, 1, NULL, {"2,3,6,7"}, 2, false, "1,5", 0, NULL, NULL},
	{"A1-full", T1, 1, NULL, {"2,3,6,7"}, 2, true, "1,5", 0, NULL, NULL},
	{"A2", T2, 1, NULL, {"2"}, 6, false, "1,3,5,7,9,11", 0, NULL, NULL},
	{"A3", T2, 1, NULL, {"1,5"}, 6, false, "2,3,4,8,9,10", 0, NULL, NULL},
	{"A4", T4, 1, NULL, {"2"}, 4, false, "4-7", 0, NULL, NULL},
	{"A5", T4, 1, NULL, {"4,5", "2"}, 4, false, "1,3,6,7", 0, NULL, NULL},
	{"A6", T2, 1, NULL, {"2"}, 8, false, "1,3,4,5,7,9,10,11", 0, NULL, NULL},
	{"B1", T1, 1, NULL, {NULL}, 1, false, "4", 0, NULL, NULL},
	{"B3",
	 T1,
	 1,
	 NULL,
	 {NULL},
	 8,
	 false,
	 NULL,
	 -ENOSPC,
	 CPUS_FIELD "not enough cpus available to satisfy request: requested=8, available=7",
	 NULL},
	{"B5",
	 T2,
	 1,
	 NULL,
	 {"1,2,3", NULL},
	 10,
	 false,
	 NULL,
	 -ENOSPC,
	 CPUS_FIELD "not enough cpus available to satisfy request: requested=10, available=8: "
		    "cpus 1-3 held by container 'other0'",
	 NULL},
	{"B6",
	 T1,
	 1,
	 NULL,
	 {"1-6", NULL},
	 2,
	 false,
	 NULL,
	 -ENOSPC,
	 CPUS_FIELD "not enough cpus available to satisfy request: requested=2, available=1: "
		    "cpus 1-6 held by container 'other0'",
	 NULL},
	{"R6",
	 T1,
	 0,
	 "0",
	 {NULL},
	 8,
	 false,
	 NULL,
	 -ENOSPC,
	 CPUS_FIELD "not enough cpus available to satisfy request: requested=8, available=7",
	 NULL},
	{"R7", T1, 0, "0,1", {NULL}, 1, false, "4", 0, NULL, NULL},
	{"R8", T1, 0, "0,1", {"2,3,6,7"}, 2, false, "4,5", 0, NULL, NULL},
	{"E1",
	 T1,
	 1,
	 NULL,
	 {NULL},
	 1,
	 true,
	 NULL,
	 -EINVAL,
	 CPUS_FIELD "smt alignment error: requested 1 cpus not a multiple of cpus per core = 2",
	 NULL},
	{"E3",
	 T2,
	 0,
	 "1,6",
	 {NULL},
	 10,
	 true,
	 NULL,
	 -ENOSPC,
	 CPUS_FIELD "smt alignment error: not enough free physical cpus: available physical "
		    "cpus = 8, requested cpus = 10, cpus per core = 2",
	 NULL},
	{"E4", T2, 2, NULL, {NULL}, 10, true, "1-5,7-11", 0, NULL, NULL},
	{"E5", T2, 0, "0,6", {NULL}, 10, true, "1-5,7-11", 0, NULL, NULL},
	{"A9", T6, 0, NULL, {"3,11,4,5,6,7"}, 72, false, T6_SOCKET0, 0, NULL, NULL},
	{"A11",
	 T6,
	 0,
	 NULL,
	 {NULL},
	 76,
	 false,
	 T6_SOCKET1 ",10,34,22,47",
	 0,
	 NULL,
	 T6_SOCKET1 ",10,34,22,47,53,173,61,181,108,228,115,235"},
	{"B7",
	 T6,
	 0,
	 NULL,
	 {NULL},
	 76,
	 false,
	 NULL,
	 -ENOSPC,
	 CPUS_FIELD "not enough cpus available to satisfy request: requested=76, available=7: "
		    "cpus 0-9,12-36,38-51,54,56-66,68-287 held by container 'rest'",
	 "10,11,37,52,53,55,67"},
	{"E2",
	 T6,
	 8,
	 NULL,
	 {NULL},
	 15,
	 true,
	 NULL,
	 -EINVAL,
	 CPUS_FIELD "smt alignment error: requested 15 cpus not a multiple of cpus per core = 4",
	 NULL},
	/* ours: taking every CPU would leave no CPU for shared containers */
	{"empty-shared",
	 T1,
	 0,
	 NULL,
	 {NULL},
	 8,
	 false,
	 NULL,
	 -ENOSPC,
	 CPUS_FIELD "taking cpus 0-7 would leave the shared pool empty",
	 NULL},
};

static void request(struct ts_placement_request *req, const char *id, const char *cls, unsigned n)
{
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_placement_request_init(req, id, &err), 0);
	free(req->class_name);
	req->class_name = strdup(cls);
	req->cpus = n;
}

static void run_alloc_case(const struct alloc_case *c)
{
	cleanup_topology struct ts_topology *topo = fixture_load(c->topo);
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	struct ts_allocation allocs[2];
	hwloc_bitmap_t sets[2] = {NULL, NULL};
	cleanup_error struct ts_error *err = NULL;
	size_t n = 0;
	int r;

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	cfg.reserved_count = c->reserved_count;
	cfg.reserved_cpus = c->reserved_list ? fixture_set(c->reserved_list) : NULL;
	cfg.full_cores_only = c->full_cores;
	if (c->default_set != NULL) {
		cleanup_hwloc_bitmap hwloc_bitmap_t def = fixture_set(c->default_set);
		sets[0] = hwloc_bitmap_dup(topo->online);
		hwloc_bitmap_andnot(sets[0], sets[0], def);
		allocs[0] = (struct ts_allocation){
			.container_id = "rest",
			.pool = TS_PLACEMENT_POOL_EXCLUSIVE,
			.cpus = sets[0],
		};
		n = 1;
	}
	for (; n < 2 && c->assigned[n] != NULL; n++) {
		sets[n] = fixture_set(c->assigned[n]);
		allocs[n] = (struct ts_allocation){
			.container_id = n == 0 ? "other0" : "other1",
			.class_name = "critical",
			.pool = TS_PLACEMENT_POOL_EXCLUSIVE,
			.cpus = sets[n],
		};
	}
	request(&req, "new", "critical", c->n);
	r = ts_placement_place(&cfg, topo, allocs, n, &req, &res, &err);
	if (c->want == NULL) {
		if (r != c->want_ret)
			fail_msg("%s: ret %d, want %d", c->name, r, c->want_ret);
		if (strcmp(err->msg, c->want_msg) != 0)
			fail_msg("%s: message '%s'", c->name, err->msg);
	} else {
		if (r < 0)
			fail_msg("%s: %s", c->name, err->msg);
		fixture_assert_set(c->name, res.cpus, c->want);
		assert_int_equal(res.pool, TS_PLACEMENT_POOL_EXCLUSIVE);
	}
	for (size_t i = 0; i < n; i++)
		hwloc_bitmap_free(sets[i]);
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

static void test_kubelet_allocate(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(alloc_cases); i++)
		run_alloc_case(&alloc_cases[i]);
}

/* B4: a container that already has an allocation keeps it. */
static void test_existing_kept(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T1);
	cleanup_hwloc_bitmap hwloc_bitmap_t mine = fixture_set("2,3,6,7");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	struct ts_allocation a = {.container_id = "c1",
				  .class_name = "critical",
				  .pool = TS_PLACEMENT_POOL_EXCLUSIVE,
				  .cpus = mine};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	cfg.reserved_count = 1;
	request(&req, "c1", "critical", 4);
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
	assert_true(res.existing);
	fixture_assert_set("B4", res.cpus, "2,3,6,7");
	fixture_assert_set("B4 pool", res.shared_pool, "0,1,4,5");
	assert_string_equal(res.reasons[0], "existing allocation of 'c1' kept");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* Reserved CPUs as a count are the lowest cores' PUs (kubelet: T2 n=2 ->
 * {0,6}; T1 n=1 -> {0}). */
static void test_reserved_count(void **state)
{
	cleanup_topology struct ts_topology *t2 = fixture_load(T2);
	cleanup_topology struct ts_topology *t1 = fixture_load(T1);
	cleanup_error struct ts_error *err = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t a = NULL, b = NULL;
	struct ts_placement_config cfg;

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	cfg.reserved_count = 2;
	assert_int_equal(ts_placement_reserved(&cfg, t2, &a, &err), 0);
	fixture_assert_set("T2 count 2", a, "0,6");
	cfg.reserved_count = 1;
	assert_int_equal(ts_placement_reserved(&cfg, t1, &b, &err), 0);
	fixture_assert_set("T1 count 1", b, "0");
	cfg.reserved_count = 8;
	assert_int_equal(ts_placement_reserved(&cfg, t1, &b, &err), -EINVAL);
	assert_string_equal(err->msg,
			    "placement: '/placement/reserved/count': cannot reserve 8 of 8 cpus");
	ts_error_clear(&err);
	/* R5: count 1 with the list {0,1} */
	cfg.reserved_count = 1;
	cfg.reserved_cpus = fixture_set("0,1");
	assert_int_equal(ts_placement_reserved(&cfg, t2, &b, &err), -EINVAL);
	assert_string_equal(err->msg,
			    "placement: '/placement/reserved': count 1 does not match cpus '0-1'");
	ts_error_clear(&err);
	/* every online cpu as a list, as the count of all of them: refused */
	cfg.reserved_count = 0;
	hwloc_bitmap_free(cfg.reserved_cpus);
	cfg.reserved_cpus = fixture_set("0-7");
	assert_int_equal(ts_placement_reserved(&cfg, t1, &b, &err), -EINVAL);
	assert_string_equal(
		err->msg,
		"placement: '/placement/reserved/cpus': cannot reserve all 8 cpus ('0-7')");
	ts_error_clear(&err);
	hwloc_bitmap_free(cfg.reserved_cpus);
	cfg.reserved_cpus = fixture_set("0-6");
	hwloc_bitmap_free(b); /* (T1 count 1's) */
	b = NULL;
	assert_int_equal(ts_placement_reserved(&cfg, t1, &b, &err), 0);
	fixture_assert_set("T1 list 0-6", b, "0-6");
	ts_placement_config_release(&cfg);

	/* read from a file, the messages name it */
	{
		static const char text[] = "{\"reserved\":{\"cpus\":\"64-65\"}}";
		cleanup_json struct ts_json *j = NULL;

		assert_int_equal(ts_json_parse(text, strlen(text), "t.json", &j, &err), 0);
		assert_int_equal(
			ts_placement_config_parse(j, "/etc/toposhim/config.json", &cfg, &err), 0);
		assert_int_equal(ts_placement_reserved(&cfg, t1, &b, &err), -EINVAL);
		assert_string_equal(err->msg,
				    "/etc/toposhim/config.json: '/placement/reserved/cpus': "
				    "'64-65' names cpus that are not online: 64-65 (online: 0-7)");
		ts_placement_config_release(&cfg);
	}
}

static void test_allocation_pool(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	assert_int_equal(ts_placement_allocation_pool(&cfg, "critical", false, false, true),
			 TS_PLACEMENT_POOL_EXCLUSIVE);
	assert_int_equal(ts_placement_allocation_pool(&cfg, "batch", false, false, true),
			 TS_PLACEMENT_POOL_SHARED);
	assert_int_equal(ts_placement_allocation_pool(&cfg, "critical", true, false, true),
			 TS_PLACEMENT_POOL_PINNED);
	assert_int_equal(ts_placement_allocation_pool(&cfg, "standard", false, true, true),
			 TS_PLACEMENT_POOL_NUMA_EXCLUSIVE);
	assert_int_equal(ts_placement_allocation_pool(&cfg, "gone", false, false, true),
			 TS_PLACEMENT_POOL_EXCLUSIVE);
	assert_int_equal(ts_placement_allocation_pool(&cfg, "gone", false, false, false),
			 TS_PLACEMENT_POOL_SHARED);
	ts_placement_config_release(&cfg);
}

/* Section 8 (X1-X4, T1, reserved {0} strict): the shared pool after a
 * container is removed is recomputed from the allocations that remain. */
static void test_release(void **state)
{
	static const struct {
		const char *name;
		const char *after[2]; /* exclusive allocations left */
		const char *want;
	} rows[] = {
		{"X1", {NULL}, "1-7"},
		{"X2", {"4-7"}, "1-3"},
		{"X3", {"2,4"}, "1,3,5-7"},
		{"X4", {"1,3,5"}, "2,4,6,7"},
	};
	cleanup_topology struct ts_topology *topo = fixture_load(T1);
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	cfg.reserved_cpus = fixture_set("0");
	cfg.shared_may_use_reserved = false;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ts_allocation allocs[2];
		hwloc_bitmap_t sets[2] = {NULL, NULL};
		cleanup_hwloc_bitmap hwloc_bitmap_t pool = NULL;
		size_t n = 0;

		for (; n < 2 && rows[i].after[n] != NULL; n++) {
			sets[n] = fixture_set(rows[i].after[n]);
			allocs[n] = (struct ts_allocation){.container_id = "c",
							   .pool = TS_PLACEMENT_POOL_EXCLUSIVE,
							   .cpus = sets[n]};
		}
		assert_int_equal(ts_placement_shared_pool(&cfg, topo, allocs, n, &pool, &err), 0);
		fixture_assert_set(rows[i].name, pool, rows[i].want);
		for (size_t k = 0; k < n; k++)
			hwloc_bitmap_free(sets[k]);
	}
	ts_placement_config_release(&cfg);
}

/* Shared pool = online - exclusive (- reserved when strict); a new
 * exclusive allocation names the shared containers that must move. */
/* Section 7, R1/R2 (T2, reserved {0,1}, nothing allocated): the shared pool
 * ("default cpuset") is 0-11 when shared containers may use the reserved
 * CPUs, 2-11 with strict reservation.  R3/R4 (a stored default set that
 * disagrees) cannot happen here: the pool is computed, never stored. */
static void test_reserved_shared_pool(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T2);
	cleanup_hwloc_bitmap hwloc_bitmap_t pool = NULL, strict = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	cfg.reserved_cpus = fixture_set("0,1");
	assert_int_equal(ts_placement_shared_pool(&cfg, topo, NULL, 0, &pool, &err), 0);
	fixture_assert_set("R1", pool, "0-11");
	cfg.shared_may_use_reserved = false;
	assert_int_equal(ts_placement_shared_pool(&cfg, topo, NULL, 0, &strict, &err), 0);
	fixture_assert_set("R2", strict, "2-11");
	ts_placement_config_release(&cfg);
}

static void test_shared_pool_and_affected(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T2);
	cleanup_hwloc_bitmap hwloc_bitmap_t ex = fixture_set("0,6");
	cleanup_hwloc_bitmap hwloc_bitmap_t sh = fixture_set("1-5,7-11");
	cleanup_hwloc_bitmap hwloc_bitmap_t pool = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	struct ts_allocation allocs[] = {
		{.container_id = "ex", .pool = TS_PLACEMENT_POOL_EXCLUSIVE, .cpus = ex},
		{.container_id = "web", .pool = TS_PLACEMENT_POOL_SHARED, .cpus = sh},
	};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	cfg.reserved_cpus = fixture_set("1");
	assert_int_equal(ts_placement_shared_pool(&cfg, topo, allocs, 2, &pool, &err), 0);
	fixture_assert_set("pool", pool, "1-5,7-11");
	cfg.shared_may_use_reserved = false;
	hwloc_bitmap_free(pool);
	assert_int_equal(ts_placement_shared_pool(&cfg, topo, allocs, 2, &pool, &err), 0);
	fixture_assert_set("strict pool", pool, "2-5,7-11");

	request(&req, "db", "critical", 2);
	assert_int_equal(ts_placement_place(&cfg, topo, allocs, 2, &req, &res, &err), 0);
	fixture_assert_set("db", res.cpus, "2,8");
	fixture_assert_set("db mems", res.mems, "0");
	fixture_assert_set("new pool", res.shared_pool, "3-5,7,9-11");
	assert_string_equal(res.affected[0], "web");
	assert_null(res.affected[1]);
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);

	/* a standard container gets the whole shared pool */
	request(&req, "web2", "standard", 0);
	assert_int_equal(ts_placement_place(&cfg, topo, allocs, 2, &req, &res, &err), 0);
	assert_int_equal(res.pool, TS_PLACEMENT_POOL_SHARED);
	fixture_assert_set("web2", res.cpus, "2-5,7-11");
	fixture_assert_set("web2 mems", res.mems, "0,1");
	assert_null(res.affected[0]);
	assert_null(res.warnings[0]);
	ts_placement_result_release(&res);
	/* a cpu count on a shared class is ignored, and said so */
	req.cpus = 3;
	req.cpus_annotated = true;
	assert_int_equal(ts_placement_place(&cfg, topo, allocs, 2, &req, &res, &err), 0);
	fixture_assert_set("web2 counted", res.cpus, "2-5,7-11");
	assert_string_equal(res.warnings[0],
			    "config.json: '/annotations/toposhim.io~1cpus': 3 cpus "
			    "ignored: class 'standard' runs on the shared pool");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

static void test_numa_policies(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T5);
	cleanup_hwloc_bitmap hwloc_bitmap_t busy = fixture_set("0-5,10-15,20-25,30-35");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	struct ts_allocation a = {
		.container_id = "x", .pool = TS_PLACEMENT_POOL_EXCLUSIVE, .cpus = busy};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	/* single: 14 PUs free per node, so 12 fit in node 0 (fullest, lowest id) */
	request(&req, "s", "critical", 12);
	req.numa = TS_PLACEMENT_NUMA_SINGLE;
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
	fixture_assert_set("single", res.cpus, "6-9,40-43,46-49");
	fixture_assert_set("single mems", res.mems, "0");
	ts_placement_result_release(&res);
	/* ... and the device-local node wins */
	hwloc_bitmap_set(req.device_numa, 3);
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
	fixture_assert_set("single local", res.cpus, "36-39,70-73,76-79");
	assert_string_equal(res.reasons[1], "numa single: node 3 (local to the requested devices)");
	ts_placement_result_release(&res);
	/* 15 PUs fit in no node */
	req.cpus = 15;
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1numa': no numa node "
				      "has 15 free cpus for 'single'");
	ts_error_clear(&err);
	ts_placement_request_release(&req);

	/* exclusive: no node is wholly free with the allocation above */
	request(&req, "e", "critical", 0);
	req.numa = TS_PLACEMENT_NUMA_EXCLUSIVE;
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), -ENOSPC);
	ts_error_clear(&err);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	assert_int_equal(res.pool, TS_PLACEMENT_POOL_NUMA_EXCLUSIVE);
	fixture_assert_set("numa exclusive", res.cpus, "0-9,40-49");
	fixture_assert_set("numa exclusive pool", res.shared_pool, "10-39,50-79");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* Device-local NUMA preference in the default "prefer" mode (kubelet H3). */
static void test_device_preference(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T2);
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "gpu", "critical", 2);
	hwloc_bitmap_set(req.device_numa, 1);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("H3", res.cpus, "1,7");
	fixture_assert_set("H3 mems", res.mems, "1");
	assert_string_equal(res.reasons[0], "class critical");
	assert_string_equal(res.reasons[1], "numa prefer: node 1 (local to the requested devices)");
	assert_string_equal(res.reasons[2], "prefer numa nodes 1 (local to the requested devices)");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* The kubelet options through the whole placement, config keys as an
 * operator sets them: align_by_socket (cases G1/G2: devices on NUMA 0 and 2
 * of T5, free PUs 2,11,21,22), distribute_across_cores (S2) and
 * distribute_across_numa (case D10: 26 PUs
 * over two nodes in whole cores). */
static void test_kubelet_options(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T5);
	cleanup_hwloc_bitmap hwloc_bitmap_t busy = fixture_set("0-1,3-10,12-20,23-79");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	struct ts_allocation a = {
		.container_id = "x", .pool = TS_PLACEMENT_POOL_EXCLUSIVE, .cpus = busy};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "gpu", "critical", 2);
	hwloc_bitmap_set(req.device_numa, 0);
	hwloc_bitmap_set(req.device_numa, 2);
	/* G2: NUMA-aligned, the device-local PUs 2 and 21 */
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
	fixture_assert_set("G2", res.cpus, "2,21");
	fixture_assert_set("G2 mems", res.mems, "0,2");
	ts_placement_result_release(&res);
	/* G1: socket-aligned, both PUs from package 0 */
	cfg.align_by_socket = true;
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
	fixture_assert_set("G1", res.cpus, "2,11");
	fixture_assert_set("G1 mems", res.mems, "0-1");
	assert_string_equal(res.reasons[1], "numa prefer: the requested devices are on numa nodes "
					    "0,2: cpus from them first");
	assert_string_equal(res.reasons[2], "prefer the packages of numa nodes 0,2 (local to the "
					    "requested devices)");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);

	/* S2 through the config key: two PUs on two cores, not one core */
	cfg.align_by_socket = false;
	cfg.distribute_across_cores = true;
	{
		cleanup_topology struct ts_topology *t2 = fixture_load(T2);
		request(&req, "spread", "critical", 2);
		assert_int_equal(ts_placement_place(&cfg, t2, NULL, 0, &req, &res, &err), 0);
		fixture_assert_set("S2", res.cpus, "0,2");
		ts_placement_result_release(&res);
		ts_placement_request_release(&req);
	}
	cfg.distribute_across_cores = false;
	cfg.distribute_across_numa = true;
	cfg.full_cores_only = true;
	request(&req, "wide", "critical", 26);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("D10", res.cpus, "0-6,10-15,40-46,50-55");
	fixture_assert_set("D10 mems", res.mems, "0-1");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* Device locality from a sysfs tree (TOPOSHIM_SYSFS_ROOT layout): /dev/null
 * (1:3) is made to look like a PCI device on NUMA node 1. */
static void test_request_devices(void **state)
{
	char dir[] = "/tmp/ts-dev-XXXXXX";
	cleanup_free char *cmd = NULL, *sys = NULL;
	cleanup_topology struct ts_topology *topo = fixture_load(T2);
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	const char *paths[] = {"/dev/null"};
	const char *missing[] = {"/dev/nonexistent-gpu"};
	const char *dev_config = "{\"linux\": {\"devices\": [{\"path\": \"/dev/xnull\", "
				 "\"type\": \"c\", \"major\": 1, \"minor\": 3}]}}";
	cleanup_json struct ts_json *config = NULL;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&cmd,
			     "set -e; cd %s; d=sys/devices/pci0000:80/0000:80:02.0; mkdir -p $d "
			     "sys/dev/char; echo 1 > $d/numa_node; echo 1,3,5,7,9,11 > "
			     "$d/local_cpulist; ln -s ../../devices/pci0000:80/0000:80:02.0 "
			     "sys/dev/char/1:3",
			     dir) > 0);
	assert_int_equal(system(cmd), 0);
	assert_true(asprintf(&sys, "%s/sys", dir) > 0);
	struct ts_devloc_roots roots = {.sysfs_root = sys};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "gpu", "critical", 2);
	assert_int_equal(ts_placement_request_add_devices(&req, &roots, paths, 1, &err), 0);
	fixture_assert_set("device numa", req.device_numa, "1");
	assert_int_equal(req.n_devices, 1);
	assert_string_equal(req.devices[0], "/dev/null");
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("device-local cpus", res.cpus, "1,7");
	ts_placement_result_release(&res);
	/* the linux.devices entry the CDI device became (the same 1:3) takes
	 * the locality of that lookup: sysfs is not walked again (its link is
	 * gone, a walk would find nothing) */
	free(cmd);
	assert_true(asprintf(&cmd, "rm '%s/sys/dev/char/1:3'", dir) > 0);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(
		ts_json_parse(dev_config, strlen(dev_config), "config.json", &config, &err), 0);
	assert_int_equal(ts_placement_request_add_config_devices(&req, &roots, config, &err), 0);
	assert_int_equal(req.n_devices, 2);
	assert_string_equal(req.devices[1], "/dev/xnull");
	assert_int_equal(req.device_nodes[1], 1);
	assert_int_equal(req.n_seen, 1);
	assert_int_equal(ts_placement_request_add_devices(&req, &roots, missing, 1, &err), -ENOENT);
	assert_string_equal(err->msg, "/dev/nonexistent-gpu: cannot stat device");
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
	free(cmd);
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
}

/* A topology of tests/fixtures/topology (README.md there describes it). */
static struct ts_topology *own(const char *file)
{
	cleanup_free char *rel = NULL, *path = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *t = NULL;

	assert_true(asprintf(&rel, "topology/%s", file) > 0);
	path = ts_test_fixture_path(rel);
	if (ts_topology_load_xml(path, &t, &err) < 0)
		fail_msg("%s", err->msg);
	return t;
}

/* place ROW: one request on topo; its cpus and mems, or its error. */
struct tier_row {
	const char *name;
	const char *cls;
	unsigned n;
	enum ts_memory_tier tier;
	const char *device_numa; /* NULL: none */
	const char *cpus, *mems; /* NULL cpus: want_err */
	const char *want_err;
};

static void place_rows(struct ts_topology *topo, const struct tier_row *rows, size_t n)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	for (size_t i = 0; i < n; i++) {
		struct ts_placement_request req;
		struct ts_placement_result res = {0};
		int r;

		request(&req, "c", rows[i].cls, rows[i].n);
		req.memory_tier = rows[i].tier;
		if (rows[i].device_numa != NULL) {
			cleanup_hwloc_bitmap hwloc_bitmap_t dn = fixture_set(rows[i].device_numa);
			hwloc_bitmap_copy(req.device_numa, dn);
		}
		r = ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err);
		if (rows[i].cpus == NULL) {
			if (r != -EINVAL || strcmp(err->msg, rows[i].want_err) != 0)
				fail_msg("%s: want '%s', got %d '%s'", rows[i].name,
					 rows[i].want_err, r, r < 0 ? err->msg : "");
			ts_error_clear(&err);
		} else {
			if (r < 0)
				fail_msg("%s: %s", rows[i].name, err->msg);
			fixture_assert_set(rows[i].name, res.cpus, rows[i].cpus);
			fixture_assert_set(rows[i].name, res.mems, rows[i].mems);
			ts_placement_result_release(&res);
		}
		ts_placement_request_release(&req);
	}
	ts_placement_config_release(&cfg);
}

/* Memory tiers on tests/fixtures/topology/tiers-io.xml: package 0 = cpus
 * 0-3 with DRAM node 0 and HBM node 1, package 1 = cpus 4-7 with DRAM node 2
 * and NVM node 3, GPU memory node 4 near no cpu; no latency matrix.  A tier
 * adds its nodes local to the cpus, else (no distances) every node of it;
 * a standard container's mems are the CPU nodes only. */
static void test_memory_tiers_own(void **state)
{
	cleanup_topology struct ts_topology *topo = own("tiers-io.xml");
	static const struct tier_row rows[] = {
		{"hbm local", "critical", 2, TS_MEMORY_TIER_HBM, NULL, "0,1", "0-1", NULL},
		{"pmem local", "critical", 2, TS_MEMORY_TIER_PMEM, "2", "4,5", "2-3", NULL},
		{"hbm, none local", "critical", 2, TS_MEMORY_TIER_HBM, "2", "4,5", "1-2", NULL},
		{"gpu memory", "critical", 2, TS_MEMORY_TIER_GPU, NULL, "0,1", "0,4", NULL},
		{"standard", "standard", 0, TS_MEMORY_TIER_DRAM, NULL, "0-7", "0,2", NULL},
		{"cxl", "critical", 2, TS_MEMORY_TIER_CXL, NULL, NULL, NULL,
		 "config.json: '/annotations/toposhim.io~1memory-tier': no memory node of tier "
		 "'cxl' on this machine"},
	};

	place_rows(topo, rows, ARRAY_SIZE(rows));
}

/* The sysfs tree of tests/fixtures/sysfs/make-tree.sh loaded through
 * TOPOSHIM_SYSFS_ROOT as the create path would: node 2 (PMEM, no cpus)
 * is local to node 1's cpus; from node 0 it is the nearest PMEM node by the
 * tree's latency matrix. */
static void test_sysfs_tree_own(void **state)
{
	char dir[] = "/tmp/ts-owntree-XXXXXX";
	cleanup_free char *script = ts_test_fixture_path("sysfs/make-tree.sh");
	cleanup_free char *cmd = NULL, *sys = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *topo = NULL;
	static const struct tier_row rows[] = {
		{"pmem by latency", "critical", 3, TS_MEMORY_TIER_PMEM, NULL, "0-2", "0,2", NULL},
		{"pmem local", "critical", 3, TS_MEMORY_TIER_PMEM, "1", "4-6", "1-2", NULL},
		{"dram", "critical", 4, TS_MEMORY_TIER_DRAM, NULL, "0-3", "0", NULL},
	};

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&cmd, "sh '%s' '%s'", script, dir) > 0);
	assert_int_equal(system(cmd), 0);
	assert_true(asprintf(&sys, "%s/sys", dir) > 0);
	setenv("TOPOSHIM_SYSFS_ROOT", sys, 1);
	assert_int_equal(ts_topology_load_default(NULL, NULL, &topo, &err), 0);
	unsetenv("TOPOSHIM_SYSFS_ROOT");
	assert_int_equal(hwloc_bitmap_weight(topo->online), 8);
	place_rows(topo, rows, ARRAY_SIZE(rows));
	ts_topology_free(topo);
	free(cmd);
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
}

/* CPU kinds on tests/fixtures/topology/hybrid-4p4e.xml: cpus 0-3 are the
 * faster kind, 4-7 the slower; critical lands on the first, batch on the
 * second. */
static void test_hybrid_own(void **state)
{
	cleanup_topology struct ts_topology *topo = own("hybrid-4p4e.xml");
	static const struct tier_row rows[] = {
		{"critical on P", "critical", 2, TS_MEMORY_TIER_DRAM, NULL, "0-1", "0", NULL},
		{"batch on E", "batch", 0, TS_MEMORY_TIER_DRAM, NULL, "4-7", "0", NULL},
	};

	fixture_assert_set("P", topo->performance_cpus, "0-3");
	fixture_assert_set("E", topo->efficiency_cpus, "4-7");
	place_rows(topo, rows, ARRAY_SIZE(rows));
}

/* 4 exclusive PUs on synthetic machines land inside one NUMA node. */
static void test_own_placements(void **state)
{
	static const struct {
		const char *desc, *cpus, *mems;
	} rows[] = {
		{"pack:2 numa:2 core:4 pu:2", "0-3", "0"},
		{"pack:2 l3:2 core:4 pu:1", "0-3", "0"},
		{"pack:1 numa:4 core:2 pu:4", "0-3", "0"},
		{"pack:4 numa:1 core:1 pu:4", "0-3", "0"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_topology struct ts_topology *topo = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct tier_row row = {rows[i].desc, "critical",   4,	TS_MEMORY_TIER_DRAM, NULL,
				       rows[i].cpus, rows[i].mems, NULL};

		if (ts_topology_load_synthetic(rows[i].desc, &topo, &err) < 0)
			fail_msg("%s: %s", rows[i].desc, err->msg);
		place_rows(topo, &row, 1);
	}
}

/* Memory tiers on the fake heterogeneous-memory machine (corpus 14): cpus
 * 2-3 sit on DRAM node 1, whose locality also holds HBM node 4 and NVM
 * node 6; cpus 0-1 on DRAM node 0 with NVM node 8. */
static void test_memory_tiers(void **state)
{
	cleanup_topology struct ts_topology *topo =
		corpus("14-hwloc-linux-fakeheteromemtiers-dram-hbm-nvm.xml");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	assert_int_equal(ts_topology_numa_node(topo, 4)->tier, TS_MEMORY_TIER_HBM);
	assert_true(ts_topology_numa_node(topo, 4)->memory_only);
	assert_int_equal(ts_topology_numa_node(topo, 8)->tier, TS_MEMORY_TIER_PMEM);
	assert_false(ts_topology_numa_node(topo, 2)->memory_only);
	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "hbm", "critical", 2);
	req.memory_tier = TS_MEMORY_TIER_HBM;
	hwloc_bitmap_set(req.device_numa, 1);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("hbm cpus", res.cpus, "2,3");
	fixture_assert_set("hbm mems", res.mems, "1,4");
	ts_placement_result_release(&res);
	req.memory_tier = TS_MEMORY_TIER_PMEM;
	hwloc_bitmap_zero(req.device_numa);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("pmem cpus", res.cpus, "0,1");
	fixture_assert_set("pmem mems", res.mems, "0,8");
	ts_placement_result_release(&res);
	req.memory_tier = TS_MEMORY_TIER_CXL;
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -EINVAL);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1memory-tier': no "
				      "memory node of tier 'cxl' on this machine");
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* nri-plugins' "server" sysfs tree (placement-cases.md section 9), loaded
 * through TOPOSHIM_SYSFS_ROOT as the create path would: exclusive CPUs land
 * in one NUMA node and the pmem tier adds that socket's PMEM node. */
static void test_nri_server(void **state)
{
	char dir[] = "/tmp/ts-nri-XXXXXX";

	free(ts_test_corpus_path("sysfs", "nri-plugins-sysfs.tar.bz2"));

	cleanup_free char *cmd = NULL, *sys = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *topo = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&cmd, "tar xjf '%s/corpus/sysfs/nri-plugins-sysfs.tar.bz2' -C '%s'",
			     getenv("TS_SHARED_DIR"), dir) > 0);
	assert_int_equal(system(cmd), 0);
	assert_true(asprintf(&sys, "%s/sysfs/server/sys", dir) > 0);
	setenv("TOPOSHIM_SYSFS_ROOT", sys, 1);
	assert_int_equal(ts_topology_load_default(NULL, NULL, &topo, &err), 0);
	unsetenv("TOPOSHIM_SYSFS_ROOT");
	assert_int_equal(hwloc_bitmap_weight(topo->online), 112);

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "db", "critical", 3);
	req.memory_tier = TS_MEMORY_TIER_PMEM;
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	/* NUMA 0 = PUs 0,4,...,108; core {0,56} whole, then PU 4 */
	fixture_assert_set("nri cpus", res.cpus, "0,4,56");
	fixture_assert_set("nri mems", res.mems, "0,4");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);

	/* nri-plugins' pool choices (section 9), as NUMA nodes of our cpus.
	 * N7: nri picks NUMA #2 for 3 CPUs; we pack the busiest/lowest node
	 * as the kubelet does, which keeps whole nodes free for numa=exclusive
	 * and device-local requests.  Affinities here are the NUMA nodes of
	 * the requested devices, without nri's weights or socket affinities:
	 * N12-N14 (nodes 1 and 3, one socket) land in node 1, inside nri's
	 * socket #1 (N14: exactly nri's answer); N15-N16 (nodes 0 and 3,
	 * across sockets) land packed in node 0 where nri widens to the root
	 * pool: 3 CPUs fit in one device-local node, so ours crosses no
	 * socket. */
	static const struct {
		const char *name;
		unsigned n;
		const char *device_nodes; /* NULL: none */
		const char *nodes;
	} rows[] = {
		{"N5 (25: a leaf)", 25, NULL, "0"},
		{"N6 (29: not a leaf, one socket)", 29, NULL, "0,2"},
		{"N7 (ours: node 0)", 3, NULL, "0"},
		{"N9 (affinity NUMA 1)", 3, "1", "1"},
		{"N12-N14 (affinity NUMA 1 and 3)", 3, "1,3", "1"},
		{"N15-N16 (affinity NUMA 0 and 3; nri: root)", 3, "0,3", "0"},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_hwloc_bitmap hwloc_bitmap_t nodes = hwloc_bitmap_alloc();

		request(&req, "n", "critical", rows[i].n);
		if (rows[i].device_nodes != NULL) {
			cleanup_hwloc_bitmap hwloc_bitmap_t dn = fixture_set(rows[i].device_nodes);
			hwloc_bitmap_copy(req.device_numa, dn);
		}
		assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
		ts_topology_numa_of_cpus(topo, res.cpus, nodes);
		fixture_assert_set(rows[i].name, nodes, rows[i].nodes);
		ts_placement_result_release(&res);
		ts_placement_request_release(&req);
	}
	ts_placement_config_release(&cfg);
	ts_topology_free(topo);
	free(cmd);
	assert_true(asprintf(&cmd, "chmod -R u+rwx '%s'; rm -rf '%s'", dir, dir) > 0);
	assert_int_equal(system(cmd), 0);
}

/* POWER9 + V100 (corpus 20): GPU memory nodes 252-255 have no PU. */
static void test_gpu_memory_nodes(void **state)
{
	cleanup_topology struct ts_topology *topo = corpus("20-flux-sierra-power9-4xv100.v2.xml");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	assert_int_equal(topo->n_numa_nodes, 6);
	assert_int_equal(ts_topology_numa_node(topo, 252)->tier, TS_MEMORY_TIER_GPU);
	assert_int_equal(ts_topology_numa_node(topo, 0)->tier, TS_MEMORY_TIER_DRAM);
	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "s", "standard", 0);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("sierra mems", res.mems, "0,8");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* Raptor Lake (corpus 02): P-cores 0-11, E-cores 12-19. */
static void test_hybrid(void **state)
{
	cleanup_topology struct ts_topology *topo =
		corpus("02-hwloc-linux-20em64t-hybrid-raptorlake.xml");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	fixture_assert_set("P", topo->performance_cpus, "0-11");
	fixture_assert_set("E", topo->efficiency_cpus, "12-19");
	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "crit", "critical", 4);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("critical on P", res.cpus, "0-3");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	request(&req, "b", "batch", 0);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("batch on E", res.cpus, "12-19");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* An empty shared pool for a container that asked for no class names the
 * config's reserved cpus, not an annotation it does not have (helper-19). */
static void test_empty_shared_pool(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T1);
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	cleanup_free char *msg = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t held = fixture_set("7");
	struct ts_allocation a = {.container_id = "c1",
				  .class_name = "critical",
				  .pool = TS_PLACEMENT_POOL_EXCLUSIVE,
				  .cpus = held};

	(void)state;
	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	/* (every cpu reserved is refused: ts_placement_reserved()) */
	cfg.reserved_cpus = fixture_set("0-6");
	cfg.shared_may_use_reserved = false;
	request(&req, "p", "standard", 0);
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), -ENOSPC);
	msg = ts_error_format(err);
	assert_string_equal(msg,
			    "config.json: the shared pool of class 'standard' (no class "
			    "requested) is empty: '/placement/reserved' of the toposhim config "
			    "and the exclusive cpus held leave it none");
	ts_error_clear(&err);
	free(msg);
	req.class_field = strdup("/annotations/toposhim.io~1class");
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), -ENOSPC);
	msg = ts_error_format(err);
	assert_string_equal(
		msg, "config.json: '/annotations/toposhim.io~1class': the shared pool is empty");
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

static void test_pinned_and_classes(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T1);
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "p", "critical", 0);
	req.user_cpus = fixture_set("3");
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	assert_int_equal(res.pool, TS_PLACEMENT_POOL_PINNED);
	fixture_assert_set("pinned", res.cpus, "3");
	fixture_assert_set("pinned mems", res.mems, "0");
	assert_null(res.warnings[0]);
	ts_placement_result_release(&res);
	/* a count given by annotation is not honoured: said */
	req.cpus = 2;
	req.cpus_annotated = true;
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("pinned, counted", res.cpus, "3");
	assert_string_equal(res.warnings[0],
			    "config.json: '/annotations/toposhim.io~1cpus': 2 cpus "
			    "ignored: the cpus 3 in '/linux/resources/cpu/cpus' "
			    "are kept, pinned");
	assert_null(res.warnings[1]);
	ts_placement_result_release(&res);
	/* nor one from the cpu quota (a Guaranteed container with the cpuset
	 * of kubelet's static CPU manager: helper-17) */
	req.cpus_annotated = false;
	req.cpus_field = strdup("/linux/resources/cpu/quota");
	assert_non_null(req.cpus_field);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("pinned, quota", res.cpus, "3");
	assert_string_equal(res.warnings[0], "config.json: '/linux/resources/cpu/quota': 2 cpus "
					     "ignored: the cpus 3 in '/linux/resources/cpu/cpus' "
					     "are kept, pinned");
	assert_null(res.warnings[1]);
	ts_placement_result_release(&res);
	/* a quota's count on a shared class asks for nothing (helper-18: a
	 * Burstable container with a cpuset was told 2 cpus ignored) */
	free(req.class_name);
	req.class_name = strdup("standard");
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("pinned, standard", res.cpus, "3");
	assert_null(res.warnings[0]);
	ts_placement_result_release(&res);
	free(req.class_name);
	req.class_name = strdup("critical");
	free(req.cpus_field);
	req.cpus_field = NULL;
	req.cpus = 0;
	/* honoured over another container's exclusive cpus, with a warning */
	{
		cleanup_hwloc_bitmap hwloc_bitmap_t db = fixture_set("3,7");
		struct ts_allocation a = {
			.container_id = "db", .pool = TS_PLACEMENT_POOL_EXCLUSIVE, .cpus = db};

		assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
		fixture_assert_set("pinned over db", res.cpus, "3");
		assert_string_equal(
			res.warnings[0],
			"config.json: '/linux/resources/cpu/cpus': pinned cpus 3 overlap "
			"the exclusive cpus of container 'db'");
		assert_null(res.warnings[1]);
		assert_string_equal(
			res.reasons[2],
			"warning: config.json: '/linux/resources/cpu/cpus': pinned cpus "
			"3 overlap the exclusive cpus of container 'db'");
		ts_placement_result_release(&res);
	}
	req.user_mems = fixture_set("0");
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	assert_string_equal(res.reasons[2], "mems 0 given in config.json are honoured");
	ts_placement_result_release(&res);
	/* T1 has one NUMA node */
	hwloc_bitmap_set(req.user_mems, 2);
	hwloc_bitmap_set(req.user_mems, 3);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -EINVAL);
	assert_string_equal(
		err->msg,
		"config.json: '/linux/resources/cpu/mems': no memory node '2-3' on this machine");
	ts_error_clear(&err);
	hwloc_bitmap_only(req.user_mems, 0);
	hwloc_bitmap_set(req.user_cpus, 9);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -EINVAL);
	assert_string_equal(err->msg, "config.json: '/linux/resources/cpu/cpus': '3,9' names cpus "
				      "that are not online: 9 (online: 0-7)");
	ts_error_clear(&err);
	/* manage_all: explicit cpus are replaced by the policy's choice */
	req.cpus = 2;
	cfg.manage_all = true;
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("managed", res.cpus, "0,4");
	ts_placement_result_release(&res);
	free(req.class_name);
	req.class_name = strdup("gold");
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -EINVAL);
	assert_string_equal(err->msg,
			    "config.json: '/annotations/toposhim.io~1class': unknown class 'gold'");
	ts_error_clear(&err);
	free(req.class_name);
	req.class_name = strdup("critical");
	req.cpus = 0;
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -EINVAL);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1class': class "
				      "'critical' needs a cpu count (toposhim.io/cpus or an "
				      "integer cpu limit)");
	ts_error_clear(&err);
	/* a class given by a pod's scoped annotation: that one is named */
	req.class_field = strdup("/annotations/toposhim.io~1class.web");
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -EINVAL);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1class.web': class "
				      "'critical' needs a cpu count (toposhim.io/cpus or an "
				      "integer cpu limit)");
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* Placements on every corpus topology: 4 exclusive PUs (2 below 8
 * machines) land inside one NUMA node, with that node as mems. */
static void test_corpus_placements(void **state)
{
	static const struct {
		const char *file;
		const char *cpus;
		const char *mems;
	} rows[] = {
		{"01-hwloc-linux-8em64t-4c2t.xml", "0-1,4-5", "0"},
		{"04-hwloc-xml-16em64t-4s2c2t.xml", "0,4,8,12", "0"},
		{"05-hwloc-xml-16em64t-4s2c2t-offlines.xml", "1,6", "0"},
		{"06-hwloc-xml-32em64t-2n8c2t-pci-gpu-ib.xml", "0-1,16-17", "0"},
		{"07-hwloc-linux-32em64t-2n8c-nvme-pmem-ib-mic.xml", "0-3", "0"},
		{"08-hwloc-xml-28intel64-2p2g7c-cluster-on-die.xml", "0-3", "0"},
		{"09-hwloc-xml-80em64t-snc2-memorysidecaches.xml", "0,4,40,44", "0"},
		{"10-hwloc-linux-64amd64-4s2n4ca2co.xml", "0-3", "0"},
		{"12-hwloc-linux-256ppc-8n8s4t-smt4.xml", "0-3", "0"},
		{"13-hwloc-x86cpuid-zen4-2xepyc9654-384pu.xml", "0-1,192-193", "0"},
		{"15-hwloc-xml-cxlmem-dax.xml", "0-1", "0"},
		{"17-hwloc-xml-nvidia-dgx2.xml", "0-1", "0"},
		{"18-flux-ipa20-xe8640-spr-snc4-4xh100.xml", "0-1,112-113", "0"},
		{"23-psmgmt-jrc0323-2xepyc7742-nps4-4xa100.xml", "0-1,128-129", "0"},
		{"24-psmgmt-knl05-snc4-flat-mcdram.xml", "0,64,128,192", "0"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_topology struct ts_topology *topo = corpus(rows[i].file);
		cleanup_error struct ts_error *err = NULL;
		cleanup_hwloc_bitmap hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
		struct ts_placement_config cfg;
		struct ts_placement_request req;
		struct ts_placement_result res = {0};

		assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
		unsigned n = hwloc_bitmap_weight(topo->online) >= 8 ? 4 : 2;
		request(&req, "c", "critical", n);
		if (ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err) < 0)
			fail_msg("%s: %s", rows[i].file, err->msg);
		printf("# %s: cpus %s", rows[i].file, fixture_str(res.cpus));
		printf(" mems %s\n", fixture_str(res.mems));
		if (rows[i].cpus != NULL)
			fixture_assert_set(rows[i].file, res.cpus, rows[i].cpus);
		if (rows[i].mems != NULL)
			fixture_assert_set(rows[i].file, res.mems, rows[i].mems);
		assert_int_equal(hwloc_bitmap_weight(res.cpus), n);
		ts_topology_numa_of_cpus(topo, res.cpus, nodes);
		assert_int_equal(hwloc_bitmap_weight(nodes), 1);
		assert_true(hwloc_bitmap_isequal(nodes, res.mems));
		ts_placement_result_release(&res);
		ts_placement_request_release(&req);
		ts_placement_config_release(&cfg);
	}
}

/* ---- issue 13: machines the kubelet fixtures do not have ------------- */

static struct ts_topology *gen_load(struct tg_topo *g)
{
	cleanup_free char *xml = tg_xml(g);
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *t = NULL;

	if (ts_topology_load_xml_buffer(xml, "generated", &t, &err) < 0)
		fail_msg("%s\n%s", err->msg, g->log);
	tg_free(g);
	return t;
}

/* The result as an allocation the next placement sees (owns nothing). */
static struct ts_allocation as_alloc(const char *id, const struct ts_placement_result *res)
{
	return (struct ts_allocation){.container_id = id,
				      .class_name = res->class_name,
				      .pool = res->pool,
				      .cpus = res->cpus,
				      .mems = res->mems,
				      .numa_exclusive =
					      res->pool == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE,
				      .pinned = res->pool == TS_PLACEMENT_POOL_PINNED};
}

/* A die with CPUs and no memory: in hwloc its PUs are in no NUMA node.
 * Before: the walk package -> NUMA -> L3 -> core never reached them, so 9
 * CPUs gave 8, and a critical container after the first node was full got
 * an empty cpuset; the count was not checked.  Now the PUs are a NUMA
 * domain of their own whose memory is the nearest DRAM node's. */
static void test_cpus_without_numa_node(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] l3:1 core:4 pu:2");
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result first = {0}, res = {0};
	struct ts_allocation a;
	/* Guaranteed with 4 integer CPUs and no annotation: critical */
	static const char guaranteed[] =
		"{\"linux\":{\"resources\":{\"cpu\":{\"quota\":400000,\"period\":100000,"
		"\"shares\":4096}}}}";

	tg_drop_memory(g, 1, true);
	topo = gen_load(g);
	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "nine", "critical", 9);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	assert_int_equal(hwloc_bitmap_weight(res.cpus), 9);
	fixture_assert_set("nine mems", res.mems, "0");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);

	/* node 0's 8 PUs taken, then a Guaranteed container without annotations */
	request(&req, "first", "critical", 8);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &first, &err), 0);
	fixture_assert_set("first", first.cpus, "0-7");
	ts_placement_request_release(&req);
	a = as_alloc("first", &first);
	assert_int_equal(
		ts_json_parse(guaranteed, strlen(guaranteed), "config.json", &config, &err), 0);
	assert_int_equal(
		ts_placement_request_from_config(config, "config.json", "g", &cfg, &req, &err), 0);
	assert_string_equal(req.class_name, "critical");
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
	fixture_assert_set("guaranteed", res.cpus, "8-11");
	fixture_assert_set("guaranteed mems", res.mems, "0");
	assert_string_equal(res.reasons[1], "numa prefer: cpus 8-15 (no numa node) (fullest node "
					    "that fits)");
	assert_string_equal(res.reasons[4], "cpus 8-15 are in no numa node: their memory is numa "
					    "node 0 (of the enclosing object)");
	fixture_assert_set("pool", res.shared_pool, "12-15");
	ts_placement_result_release(&res);
	ts_placement_result_release(&first);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* Five CPU kinds by capacity, little cores first as ARM numbers them.
 * Before: "performance" was the single fastest core and "efficiency" the
 * slowest kind: critical got little cores beside the fastest one while the
 * big ones were free, batch only the slowest kind.  Now the kinds are
 * ranked and split at the threshold. */
static void test_five_cpu_kinds(void **state)
{
	static const struct {
		unsigned first, last, capacity;
	} kinds[] = {{0, 1, 230}, {2, 4, 400}, {5, 9, 880}, {10, 13, 930}, {14, 14, 1024}};
	struct tg_topo *g = tg_synthetic("pack:1 core:15 pu:1");
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	g->kinds = calloc(ARRAY_SIZE(kinds), sizeof(*g->kinds));
	g->nkinds = ARRAY_SIZE(kinds);
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		g->kinds[i].cpus = hwloc_bitmap_alloc();
		hwloc_bitmap_set_range(g->kinds[i].cpus, kinds[i].first, kinds[i].last);
		g->kinds[i].efficiency = (int)i;
		g->kinds[i].capacity = kinds[i].capacity;
	}
	topo = gen_load(g);
	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "crit", "critical", 4);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("critical on big cores", res.cpus, "5-8");
	assert_string_equal(res.reasons[2], "prefer performance cores: cpus 5-14");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	request(&req, "b", "batch", 0);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("batch on every little core", res.cpus, "0-4");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	/* the threshold is the operator's: 0.95 leaves the fastest core alone */
	cfg.performance_threshold = 0.95;
	request(&req, "crit", "critical", 1);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("critical at 0.95", res.cpus, "14");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* An empty 2-socket machine (48 PUs per node): a 47-CPU critical
 * container, then a 7-CPU one.  Before: busiest-first packing took the one
 * PU left in node 0 and six of node 1 (mems 0-1).  Now one node whenever
 * one holds the request, across nodes only when none can, said so. */
static void test_critical_single_numa(void **state)
{
	cleanup_topology struct ts_topology *topo =
		gen_load(tg_synthetic("pack:2 [numa(memory=1073741824)] core:24 pu:2"));
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result r47 = {0}, r7 = {0}, res = {0};
	struct ts_allocation a[3];
	cleanup_hwloc_bitmap hwloc_bitmap_t nodes = hwloc_bitmap_alloc();

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "c47", "critical", 47);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &r47, &err), 0);
	ts_topology_numa_of_cpus(topo, r47.cpus, nodes);
	fixture_assert_set("47 in one node", nodes, "0");
	ts_placement_request_release(&req);
	a[0] = as_alloc("c47", &r47);
	request(&req, "c7", "critical", 7);
	assert_int_equal(ts_placement_place(&cfg, topo, a, 1, &req, &r7, &err), 0);
	ts_topology_numa_of_cpus(topo, r7.cpus, nodes);
	fixture_assert_set("7 in node 1", nodes, "1");
	fixture_assert_set("7 mems", r7.mems, "1");
	assert_string_equal(r7.reasons[1], "numa prefer: node 1 (fullest node that fits)");
	ts_placement_request_release(&req);
	ts_placement_result_release(&r47);
	ts_placement_result_release(&r7);

	/* 46, 7 and 39 leave 2 PUs in node 0 and 2 in node 1: 3 fit in no node */
	static const unsigned sizes[] = {46, 7, 39};
	struct ts_placement_result rs[3] = {{0}};
	for (size_t i = 0; i < 3; i++) {
		request(&req, "c", "critical", sizes[i]);
		assert_int_equal(ts_placement_place(&cfg, topo, a, i, &req, &rs[i], &err), 0);
		ts_topology_numa_of_cpus(topo, rs[i].cpus, nodes);
		assert_int_equal(hwloc_bitmap_weight(nodes), 1);
		a[i] = as_alloc(i == 0 ? "a" : i == 1 ? "b" : "c", &rs[i]);
		ts_placement_request_release(&req);
	}
	request(&req, "d", "critical", 3);
	assert_int_equal(ts_placement_place(&cfg, topo, a, 3, &req, &res, &err), 0);
	assert_int_equal(hwloc_bitmap_weight(res.cpus), 3);
	fixture_assert_set("3 across mems", res.mems, "0-1");
	bool said = false;
	for (size_t i = 0; res.reasons[i] != NULL; i++)
		said |= strcmp(res.reasons[i], "numa prefer: no numa node has 3 free cpus: across "
					       "numa nodes 0-1") == 0;
	assert_true(said);
	ts_placement_result_release(&res);
	for (size_t i = 0; i < 3; i++)
		ts_placement_result_release(&rs[i]);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* The numa: exclusive failure named a count of 0 and "no exclusive user". */
static void test_numa_exclusive_message(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T5);
	cleanup_hwloc_bitmap hwloc_bitmap_t busy = fixture_set("0,10,20,30");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	struct ts_allocation a = {
		.container_id = "x", .pool = TS_PLACEMENT_POOL_EXCLUSIVE, .cpus = busy};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "e", "critical", 0);
	req.numa = TS_PLACEMENT_NUMA_EXCLUSIVE;
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1numa': no numa node "
				      "is wholly free for 'exclusive'");
	ts_error_clear(&err);
	req.cpus = 12;
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1numa': no wholly "
				      "free numa node has 12 cpus for 'exclusive'");
	ts_error_clear(&err);
	ts_placement_request_release(&req);
	/* the node is the machine's only one: the numa request is named, not
	 * the count (helper-17: '/linux/resources/cpu/quota') */
	{
		cleanup_topology struct ts_topology *one = fixture_load(T1);

		request(&req, "e1", "critical", 0);
		req.numa = TS_PLACEMENT_NUMA_EXCLUSIVE;
		assert_int_equal(ts_placement_place(&cfg, one, NULL, 0, &req, &res, &err), -ENOSPC);
		assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1numa': "
					      "taking cpus 0-7 would leave the shared pool empty");
	}
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

static void assert_no_repeat(char **reasons)
{
	for (size_t i = 0; reasons[i] != NULL; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(reasons[i], reasons[j]) == 0)
				fail_msg("reason %zu repeats reason %zu: '%s'", i, j, reasons[i]);
}

/* A hybrid desktop with one L3: 14 critical CPUs are the 12 P-core PUs,
 * then 2 more; both passes went "rest inside l3 group 0", and the plan
 * said it twice. */
static void test_reasons_once(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:1 l3:1 core:10 pu:2");
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	g->kinds = calloc(2, sizeof(*g->kinds));
	g->nkinds = 2;
	g->kinds[0] = (struct tg_kind){
		.cpus = fixture_set("12-19"), .frequency_mhz = 3900, .efficiency = -1};
	g->kinds[1] = (struct tg_kind){
		.cpus = fixture_set("0-11"), .frequency_mhz = 5000, .efficiency = -1};
	topo = gen_load(g);
	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "crit", "critical", 14);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	assert_int_equal(hwloc_bitmap_weight(res.cpus), 14);
	assert_no_repeat(res.reasons);
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
}

/* A device whose sysfs numa_node is a memory-only node (CXL memory,
 * GPU memory) or a node the machine lacks gave no hint and no warning.
 * Now: the CPUs near the memory-only node, and a warning for the other. */
static void test_device_on_odd_node(void **state)
{
	char dir[] = "/tmp/ts-odd-XXXXXX";
	cleanup_free char *cmd = NULL, *sys = NULL;
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] core:4 pu:1");
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	const char *paths[] = {"/dev/null", "/dev/zero"};

	/* node 5: CXL memory beside package 1 */
	tg_add_memory_only(g, g->root->kids[1], 5, "CXL-DRAM", 1u << 30);
	topo = gen_load(g);
	assert_non_null(mkdtemp(dir));
	assert_true(
		asprintf(&cmd,
			 "set -e; cd %s; mkdir -p sys/dev/char sys/devices/pci0000:00/a "
			 "sys/devices/pci0000:00/b; echo 5 > sys/devices/pci0000:00/a/numa_node; "
			 "echo 9 > sys/devices/pci0000:00/b/numa_node; "
			 "ln -s ../../devices/pci0000:00/a sys/dev/char/1:3; "
			 "ln -s ../../devices/pci0000:00/b sys/dev/char/1:5",
			 dir) > 0);
	assert_int_equal(system(cmd), 0);
	assert_true(asprintf(&sys, "%s/sys", dir) > 0);
	struct ts_devloc_roots roots = {.sysfs_root = sys};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	request(&req, "dev", "critical", 2);
	assert_int_equal(ts_placement_request_add_devices(&req, &roots, paths, 2, &err), 0);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("near the cxl node", res.cpus, "4-5");
	assert_string_equal(res.warnings[0],
			    "config.json: device '/dev/zero' is on numa node 9, which this machine "
			    "does not have: no numa hint");
	assert_null(res.warnings[1]);
	assert_string_equal(res.reasons[1], "device '/dev/null' is on memory-only numa node 5: "
					    "prefer the cpus near it, 4-7");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
	free(cmd);
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
}

/* mems are the one computation for every path: a shared pool that holds
 * CPUs of a die without memory gets the nearest DRAM node, never '' or a
 * node without memory. */
static void test_pool_mems(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:3 [numa(memory=1073741824)] core:2 pu:1");
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t mems = NULL, pool = fixture_set("4-5");
	cleanup_error struct ts_error *err = NULL;

	tg_drop_memory(g, 1, false); /* node 1 with no memory */
	tg_drop_memory(g, 2, true);  /* PUs 4-5 in no node */
	topo = gen_load(g);
	assert_int_equal(ts_placement_mems(topo, pool, TS_MEMORY_TIER_DRAM, &mems, &err), 0);
	fixture_assert_set("pool of the die without memory", mems, "0");
	hwloc_bitmap_free(mems);
	hwloc_bitmap_only(pool, 2);
	hwloc_bitmap_set(pool, 3);
	assert_int_equal(ts_placement_mems(topo, pool, TS_MEMORY_TIER_DRAM, &mems, &err), 0);
	fixture_assert_set("pool of the node without memory", mems, "0");
	hwloc_bitmap_free(mems);
	mems = NULL;
	assert_int_equal(ts_placement_mems(topo, pool, TS_MEMORY_TIER_HBM, &mems, &err), -EINVAL);
	assert_string_equal(err->msg, "no memory node of tier 'hbm' on this machine");
}

/* The cgroup parent (placement.h, parent_cpus): exclusive cpus inside it
 * or a refusal naming it; the shared pool and mems clipped to it. */
static void test_cgroup_parent(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] core:2 pu:1");
	cleanup_topology struct ts_topology *topo = gen_load(g);
	cleanup_hwloc_bitmap hwloc_bitmap_t busy = fixture_set("2-3");
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};
	struct ts_allocation a = {
		.container_id = "x", .pool = TS_PLACEMENT_POOL_EXCLUSIVE, .cpus = busy};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
#define PARENT(r)                                                     \
	do {                                                          \
		(r).parent_cpus = fixture_set("2-3");                 \
		(r).parent_mems = fixture_set("1");                   \
		(r).parent_name = strdup("'/kubepods' (cpuset 2-3)"); \
	} while (0)
	request(&req, "s", "standard", 0);
	PARENT(req);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("shared pool clipped", res.cpus, "2-3");
	fixture_assert_set("mems clipped", res.mems, "1");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);

	request(&req, "c", "critical", 1);
	PARENT(req);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), 0);
	fixture_assert_set("exclusive inside", res.cpus, "2");
	fixture_assert_set("its mems", res.mems, "1");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);

	request(&req, "c", "critical", 3);
	PARENT(req);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, "config.json: '/linux/cgroupsPath': cgroup parent "
				      "'/kubepods' (cpuset 2-3) cannot hold 3 exclusive cpus (free "
				      "in it: 2-3)");
	ts_error_clear(&err);
	ts_placement_request_release(&req);

	/* more than the node has: the request is named, not the parent
	 * (helper-16: toposhim.io/cpus=65535) */
	request(&req, "c", "critical", 65535);
	PARENT(req);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1cpus': not enough "
				      "cpus available to satisfy request: requested=65535, "
				      "available=2: the node has 4 cpus (0-3)");
	ts_error_clear(&err);
	ts_placement_request_release(&req);
	/* with cpus reserved, the room is what lies outside them (helper-21:
	 * "outside the reserved ones" was said with none reserved) */
	cfg.reserved_cpus = fixture_set("0");
	request(&req, "c", "critical", 65535);
	PARENT(req);
	assert_int_equal(ts_placement_place(&cfg, topo, NULL, 0, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, "config.json: '/annotations/toposhim.io~1cpus': not enough "
				      "cpus available to satisfy request: requested=65535, "
				      "available=2: the node has 3 cpus outside the reserved ones "
				      "(1-3)");
	ts_error_clear(&err);
	ts_placement_request_release(&req);
	hwloc_bitmap_free(cfg.reserved_cpus);
	cfg.reserved_cpus = NULL;

	/* the parent would hold it but another container holds its cpus:
	 * that container is named, not the parent */
	request(&req, "c", "critical", 1);
	PARENT(req);
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg,
			    "config.json: '/annotations/toposhim.io~1cpus': not enough "
			    "cpus available to satisfy request: requested=1, available=0: "
			    "cpus 2-3 of cgroup parent '/kubepods' (cpuset 2-3) held by "
			    "container 'x'");
	ts_error_clear(&err);
	ts_placement_request_release(&req);

	/* all of the parent held exclusively: a standard one runs there, warned */
	request(&req, "s", "standard", 0);
	PARENT(req);
	assert_int_equal(ts_placement_place(&cfg, topo, &a, 1, &req, &res, &err), 0);
	fixture_assert_set("parent's cpus", res.cpus, "2-3");
	assert_non_null(res.warnings[0]);
	assert_string_equal(res.warnings[0],
			    "config.json: '/linux/cgroupsPath': the shared pool (cpus 0-1) lies "
			    "outside cgroup parent '/kubepods' (cpuset 2-3): running on the "
			    "parent's cpus");
	ts_placement_result_release(&res);
	ts_placement_request_release(&req);
#undef PARENT
	ts_placement_config_release(&cfg);
}

/* Exclusive cpus held by other containers: the refusal names them (three,
 * then a count) and only them, not a container outside the request's room. */
static void test_held_by(void **state)
{
	struct tg_topo *g = tg_synthetic("pack:1 [numa(memory=1073741824)] core:8 pu:1");
	cleanup_topology struct ts_topology *topo = gen_load(g);
	static const char *const ids[] = {"h1", "h2", "h3", "h4", "h5", "pin"};
	static const char *const cpus[] = {"1", "2", "3", "4", "5", "6"};
	hwloc_bitmap_t sets[6];
	struct ts_allocation a[6];
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	struct ts_placement_result res = {0};

	assert_int_equal(ts_placement_config_init(&cfg, &err), 0);
	cfg.reserved_cpus = fixture_set("0");
	for (size_t i = 0; i < ARRAY_SIZE(a); i++) {
		sets[i] = fixture_set(cpus[i]);
		a[i] = (struct ts_allocation){.container_id = ids[i],
					      .class_name = "critical",
					      .pool = TS_PLACEMENT_POOL_EXCLUSIVE,
					      .cpus = sets[i]};
	}
	a[5].pool = TS_PLACEMENT_POOL_PINNED;
	a[5].pinned = true;
	/* one free cpu (7), two wanted */
	request(&req, "new", "critical", 2);
	assert_int_equal(ts_placement_place(&cfg, topo, a, 6, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, CPUS_FIELD "not enough cpus available to satisfy request: "
						 "requested=2, available=1: cpus 1-6 held by "
						 "containers 'h1', 'h2', 'h3' and 3 more");
	ts_error_clear(&err);
	ts_placement_request_release(&req);
	/* inside a parent of cpus 5-7, only the holders in it count */
	request(&req, "new", "critical", 2);
	req.parent_cpus = fixture_set("5-7");
	req.parent_name = strdup("'/kubepods' (cpuset 5-7)");
	assert_int_equal(ts_placement_place(&cfg, topo, a, 6, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg,
			    CPUS_FIELD "not enough cpus available to satisfy request: "
				       "requested=2, available=1: cpus 5-6 of cgroup "
				       "parent '/kubepods' (cpuset 5-7) held by containers "
				       "'h5', 'pin'");
	ts_error_clear(&err);
	ts_placement_request_release(&req);
	/* a request the room could not hold even when free: the parent's message */
	request(&req, "new", "critical", 4);
	req.parent_cpus = fixture_set("5-7");
	req.parent_name = strdup("'/kubepods' (cpuset 5-7)");
	assert_int_equal(ts_placement_place(&cfg, topo, a, 6, &req, &res, &err), -ENOSPC);
	assert_string_equal(err->msg, "config.json: '/linux/cgroupsPath': cgroup parent "
				      "'/kubepods' (cpuset 5-7) cannot hold 4 exclusive cpus (free "
				      "in it: 7)");
	ts_error_clear(&err);
	ts_placement_request_release(&req);
	for (size_t i = 0; i < ARRAY_SIZE(sets); i++)
		hwloc_bitmap_free(sets[i]);
	ts_placement_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_parent),
		cmocka_unit_test(test_held_by),
		cmocka_unit_test(test_kubelet_allocate),
		cmocka_unit_test(test_existing_kept),
		cmocka_unit_test(test_reserved_count),
		cmocka_unit_test(test_shared_pool_and_affected),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_allocation_pool),
		cmocka_unit_test(test_numa_policies),
		cmocka_unit_test(test_device_preference),
		cmocka_unit_test(test_kubelet_options),
		cmocka_unit_test(test_reserved_shared_pool),
		cmocka_unit_test(test_request_devices),
		cmocka_unit_test(test_memory_tiers_own),
		cmocka_unit_test(test_sysfs_tree_own),
		cmocka_unit_test(test_hybrid_own),
		cmocka_unit_test(test_own_placements),
		cmocka_unit_test(test_pinned_and_classes),
		cmocka_unit_test(test_empty_shared_pool),
		/* the shared corpus: real machines (skipped without it) */
		cmocka_unit_test(test_memory_tiers),
		cmocka_unit_test(test_gpu_memory_nodes),
		cmocka_unit_test(test_nri_server),
		cmocka_unit_test(test_hybrid),
		cmocka_unit_test(test_corpus_placements),
		cmocka_unit_test(test_cpus_without_numa_node),
		cmocka_unit_test(test_five_cpu_kinds),
		cmocka_unit_test(test_critical_single_numa),
		cmocka_unit_test(test_numa_exclusive_message),
		cmocka_unit_test(test_reasons_once),
		cmocka_unit_test(test_device_on_odd_node),
		cmocka_unit_test(test_pool_mems),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
