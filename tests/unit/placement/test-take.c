/*
 * Unit tests of src/placement/take.c: the kubelet's cpu_assignment_test.go
 * and policy_static_test.go cases (../shared/cases/placement-cases.md), on
 * the same topologies with the same numbering.
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

#include "fixtures.h"
#include "placement/placement.h"
#include "util/cleanup.h"

enum { PACKED = 0, L3 = 1, SPREAD = 2, FULL = 4, DIST = 8, G2 = 16, SOCKET = 32 };

struct take_case {
	const char *name;
	enum fixture_id topo;
	const char *avail;
	unsigned n;
	unsigned opts;
	const char *preferred; /* NULL: no hint */
	const char *want;      /* NULL when an error is expected */
	int want_ret;
	const char *want_msg;
};

static const struct take_case cases[] = {
	/* section 2: NUMA-packed */
	{"C1", T1, "0,2,4,6", 5, 0, NULL, NULL, -ENOSPC,
	 "not enough cpus available to satisfy request: requested=5, available=4"},
	{"C2", T1, "0-7", 0, 0, NULL, "", 0, NULL},
	{"C3", T1, "0-7", 1, 0, NULL, "0", 0, NULL},
	{"C4", T1, "1,3,5,6,7", 1, 0, NULL, "6", 0, NULL},
	{"C5", T1, "0-7", 2, 0, NULL, "0,4", 0, NULL},
	{"C6", T1, "0-7", 8, 0, NULL, "0-7", 0, NULL},
	{"C7", T1, "0,1,2,3,6", 2, 0, NULL, "2,6", 0, NULL},
	{"C8", T2, "0-11", 6, 0, NULL, "0,2,4,6,8,10", 0, NULL},
	{"C9", T5, "0-79", 40, 0, NULL, "0-19,40-59", 0, NULL},
	{"C10", T5, "0-79", 20, 0, NULL, "0-9,40-49", 0, NULL},
	{"C11", T5, "10-39,50-79", 20, 0, NULL, "10-19,50-59", 0, NULL},
	{"C12", T5, "0-79", 60, 0, NULL, "0-29,40-69", 0, NULL},
	{"C13", T5, "1-39,41-79", 60, 0, NULL, "10-39,50-79", 0, NULL},
	{"P1", T2, "1-5,7-11", 1, 0, NULL, "2", 0, NULL},
	{"P2", T2, "0-11", 8, 0, NULL, "0-2,4,6-8,10", 0, NULL},
	{"P3", T5, "0-79", 64, 0, NULL, "0-31,40-71", 0, NULL},
	/* uncore (L3) alignment */
	{"U1", T8, "1-15", 10, L3, NULL, "1,2,4-11", 0, NULL},
	/* U2: the kubelet gives {1}.  Its result is the lowest free PU of one
	 * uncore cache holding both sockets' PUs (the only reading of its T2
	 * fixture that yields 1; the case file omits the ids).  No machine,
	 * and no hwloc tree, has a cache above its packages; with one L3 per
	 * package ours is P1's answer, the busiest package first. */
	{"U2", T2, "1-5,7-11", 1, L3, NULL, "2", 0, NULL},
	{"U3", T9, "0-15", 4, L3, NULL, "0-3", 0, NULL},
	{"U4", T9, "2-15", 6, L3, NULL, "2-7", 0, NULL},
	{"U5", T9, "8-15", 4, L3, NULL, "8-11", 0, NULL},
	{"U6", T10, "3,4-8,12", 2, L3, NULL, "4,5", 0, NULL},
	{"U7", T11, "2-3,10-11,4-7,12-15", 6, L3, NULL, "4-6,12-14", 0, NULL},
	{"U8", T11, "1-7,9-15", 10, L3, NULL, "1,4-7,9,12-15", 0, NULL},
	/* section 3: distribute-cpus-across-cores (spread) */
	{"S1", T1, "0-7", 3, SPREAD, NULL, "0-2", 0, NULL},
	{"S2", T2, "0-11", 2, SPREAD, NULL, "0,2", 0, NULL},
	{"S3", T2, "0-11", 3, SPREAD, NULL, "0,2,4", 0, NULL},
	{"S4", T2, "0-11", 6, SPREAD, NULL, "0,2,4,6,8,10", 0, NULL},
	{"S5", T2, "0-11", 8, SPREAD, NULL, "0-4,6,8,10", 0, NULL},
	{"S6", T4, "0-7", 2, SPREAD, NULL, "0,1", 0, NULL},
	{"S7", T5, "0-79", 8, SPREAD, NULL, "0-7", 0, NULL},
	{"S8", T6, "0-287", 12, SPREAD, NULL, "0-2,9-10,13-14,21-22,25-26,33", 0, NULL},
	/* section 4: distribute-cpus-across-numa (G2: cpuGroupSize 2) */
	{"D1", T2, "0-11", 8, DIST, NULL, "0-3,6-9", 0, NULL},
	{"D2", T5, "0-79", 64, DIST, NULL, "0-7,10-17,20-27,30-37,40-47,50-57,60-67,70-77", 0,
	 NULL},
	{"D3", T5, "0-79", 48, DIST, NULL, "0-7,10-17,20-27,40-47,50-57,60-67", 0, NULL},
	{"D4", T5, "1-29,32-39,41-69,72-79", 48, DIST, NULL, "1-8,10-17,20-27,41-48,50-57,60-67", 0,
	 NULL},
	{"D5", T5, "2-29,31-39,42-69,71-79", 48, DIST, NULL, "10-17,20-27,31-38,50-57,60-67,71-78",
	 0, NULL},
	{"D6", T5, "0-2,10-12,20-22,30-32,40-41,50-51,60-61,70-71", 16, DIST, NULL,
	 "0-1,10-11,20-21,30-31,40-41,50-51,60-61,70-71", 0, NULL},
	{"D7", T2, "1-5,7-11", 1, DIST, NULL, "1", 0, NULL},
	{"D8", T2, "1-5,7-11", 1, DIST | G2, NULL, "2", 0, NULL},
	{"D9", T5, "0-79", 26, DIST, NULL, "0-6,10-16,40-45,50-55", 0, NULL},
	{"D10", T5, "0-79", 26, DIST | G2, NULL, "0-6,10-15,40-46,50-55", 0, NULL},
	{"D11", T5, "0-79", 62, DIST, NULL, "0-7,10-17,20-27,30-37,40-47,50-57,60-66,70-76", 0,
	 NULL},
	{"D12", T5, "0-79", 62, DIST | G2, NULL, "0-7,10-17,20-27,30-36,40-47,50-57,60-67,70-76", 0,
	 NULL},
	{"D13", T5, "0-8,10-18,20-39,40-48,50-58,60-79", 62, DIST, NULL,
	 "0-7,10-17,20-27,30-37,40-46,50-56,60-67,70-77", 0, NULL},
	{"D14", T5, "0-8,10-18,20-39,40-48,50-58,60-79", 62, DIST | G2, NULL,
	 "0-7,10-16,20-27,30-37,40-47,50-56,60-67,70-77", 0, NULL},
	{"D15", T5, "0-3,10-13,20-23,30-36,40-43,50-53,60-63,70-76", 34, DIST, NULL,
	 "0-3,10-13,20-23,30-34,40-43,50-53,60-63,70-74", 0, NULL},
	/* D10/D12/D14 again with the group from full_cores_only (SMT width 2) */
	{"D10 full", T5, "0-79", 26, DIST | FULL, NULL, "0-6,10-15,40-46,50-55", 0, NULL},
	{"D12 full", T5, "0-79", 62, DIST | FULL, NULL,
	 "0-7,10-17,20-27,30-36,40-47,50-57,60-67,70-76", 0, NULL},
	{"D14 full", T5, "0-8,10-18,20-39,40-48,50-58,60-79", 62, DIST | FULL, NULL,
	 "0-7,10-16,20-27,30-37,40-47,50-56,60-67,70-77", 0, NULL},
	/* section 4: C1-C13 give the same results with the option on */
	{"C1 dist", T1, "0,2,4,6", 5, DIST, NULL, NULL, -ENOSPC,
	 "not enough cpus available to satisfy request: requested=5, available=4"},
	{"C2 dist", T1, "0-7", 0, DIST, NULL, "", 0, NULL},
	{"C3 dist", T1, "0-7", 1, DIST, NULL, "0", 0, NULL},
	{"C4 dist", T1, "1,3,5,6,7", 1, DIST, NULL, "6", 0, NULL},
	{"C5 dist", T1, "0-7", 2, DIST, NULL, "0,4", 0, NULL},
	{"C6 dist", T1, "0-7", 8, DIST, NULL, "0-7", 0, NULL},
	{"C7 dist", T1, "0,1,2,3,6", 2, DIST, NULL, "2,6", 0, NULL},
	{"C8 dist", T2, "0-11", 6, DIST, NULL, "0,2,4,6,8,10", 0, NULL},
	{"C9 dist", T5, "0-79", 40, DIST, NULL, "0-19,40-59", 0, NULL},
	{"C10 dist", T5, "0-79", 20, DIST, NULL, "0-9,40-49", 0, NULL},
	{"C11 dist", T5, "10-39,50-79", 20, DIST, NULL, "10-19,50-59", 0, NULL},
	{"C12 dist", T5, "0-79", 60, DIST, NULL, "0-29,40-69", 0, NULL},
	{"C13 dist", T5, "1-39,41-79", 60, DIST, NULL, "10-39,50-79", 0, NULL},
	/* section 5, F9-F11 (which NUMA nodes and sockets are wholly free),
	 * observed through a request of exactly one such domain */
	{"F9", T5, "1-9,11-79", 20, 0, NULL, "20-29,60-69", 0, NULL},
	{"F10", T5, "1-59,61-79", 40, 0, NULL, "10-19,30-39,50-59,70-79", 0, NULL},
	{"F11", T2, "0-9,11", 6, 0, NULL, "1,3,5,7,9,11", 0, NULL},
	/* section 6 on T6 (KNL SNC4 numbering, SMT4) */
	{"A10", T6, "1,25,13,38,2,9,11,35,23,48,12,51,53,173,113,233,54,61", 12, 0, NULL,
	 "1,25,13,38,11,35,23,48,53,173,113,233", 0, NULL},
	{"B2", T6, "10,11,52,53,67", 5, 0, NULL, "10,11,52,53,67", 0, NULL},
	/* section 6: topology hints (H) and NUMA- (G2) or socket-aligned (G1)
	 * subsets; the hint is NUMA{0,2}, its packages 0 and 1 */
	{"H1", T2, "0-11", 2, 0, NULL, "0,6", 0, NULL},
	{"H2", T2, "0-11", 2, 0, "0,2,4,6,8,10", "0,6", 0, NULL},
	{"H3", T2, "0-11", 2, 0, "1,3,5,7,9,11", "1,7", 0, NULL},
	{"H4", T2, "0-11", 8, 0, "0,2,4,6,8,10", "0-2,4,6-8,10", 0, NULL},
	{"H5", T2, "0-11", 8, 0, "1,3,5,7,9,11", "0,1,3,5-7,9,11", 0, NULL},
	{"G1", T5, "2,11,21,22", 2, SOCKET, "0-9,20-29,40-49,60-69", "2,11", 0, NULL},
	{"G2", T5, "2,11,21,22", 2, 0, "0-9,20-29,40-49,60-69", "2,21", 0, NULL},
	/* full-pcpus-only (E1: 1 cpu on SMT2; E3: reserved {1,6} break two cores) */
	{"E1", T1, "1-7", 1, FULL, NULL, NULL, -EINVAL,
	 "smt alignment error: requested 1 cpus not a multiple of cpus per core = 2"},
	{"E3", T2, "0,2,3,4,5,7-11", 10, FULL, NULL, NULL, -ENOSPC,
	 "smt alignment error: not enough free physical cpus: available physical cpus = 8, "
	 "requested cpus = 10, cpus per core = 2"},
	{"E5", T2, "1-5,7-11", 10, FULL, NULL, "1-5,7-11", 0, NULL},
	/* section 6 K1: 16 full-core cpus with uncore alignment land in LLC 1 */
	{"K1", T12, "2-95,98-191,194-287,290-383", 16, FULL | L3, NULL, "8-15,200-207", 0, NULL},
};

static void run_case(const struct take_case *c)
{
	cleanup_topology struct ts_topology *topo = fixture_load(c->topo);
	cleanup_hwloc_bitmap hwloc_bitmap_t avail = fixture_set(c->avail);
	cleanup_hwloc_bitmap hwloc_bitmap_t pref = c->preferred ? fixture_set(c->preferred) : NULL;
	cleanup_hwloc_bitmap hwloc_bitmap_t got = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_strv char **steps = NULL;
	struct ts_placement_take_opts opts = {
		.align_l3 = c->opts & L3,
		.spread = c->opts & SPREAD,
		.full_cores_only = c->opts & FULL,
		.distribute_across_numa = c->opts & DIST,
		.numa_group_size = c->opts & G2 ? 2 : 0,
		.align_by_socket = c->opts & SOCKET,
	};
	int r;

	/* K1: the whole LLC 0 and LLC 12 are in use, as in the kubelet test */
	if (c->topo == T12) {
		cleanup_hwloc_bitmap hwloc_bitmap_t used =
			fixture_set("0-7,192-199,96-103,288-295");
		hwloc_bitmap_andnot(avail, avail, used);
	}
	r = ts_placement_take(topo, avail, c->n, pref, &opts, &got, &steps, &err);
	if (c->want == NULL) {
		if (r != c->want_ret)
			fail_msg("%s: ret %d, want %d", c->name, r, c->want_ret);
		if (strcmp(err->msg, c->want_msg) != 0)
			fail_msg("%s: message '%s'", c->name, err->msg);
		return;
	}
	if (r < 0)
		fail_msg("%s: %s", c->name, err->msg);
	fixture_assert_set(c->name, got, c->want);
}

static void test_kubelet_cases(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(&cases[i]);
}

/* Section 5 (F1-F8): the kubelet's candidate order, observed by taking one
 * core (step 2) or one PU (step 1) at a time. */
struct order_case {
	const char *name;
	enum fixture_id topo;
	const char *avail;
	unsigned step;
	const char *want[12];
};

static const struct order_case orders[] = {
	{"F1", T2, "0-11", 2, {"0,6", "2,8", "4,10", "1,7", "3,9", "5,11"}},
	{"F2", T2, "1-5,7-11", 2, {"2,8", "4,10", "1,7", "3,9", "5,11"}},
	{"F3", T2, "2,3,4,5,8,9,10,11", 2, {"2,8", "4,10", "3,9", "5,11"}},
	{"F4", T1, "0-7", 1, {"0", "4", "1", "5", "2", "6", "3", "7"}},
	{"F5", T1, "3-7", 1, {"4", "5", "6", "3", "7"}},
	{"F6", T2, "0-11", 1, {"0", "6", "2", "8", "4", "10", "1", "7", "3", "9", "5", "11"}},
	{"F7", T2, "1-11", 1, {"6", "2", "8", "4", "10", "1", "7", "3", "9", "5", "11"}},
	{"F8", T3, "0-3,6-13", 1, {"12", "13", "0", "1", "2", "3", "6", "7", "8", "9", "10", "11"}},
};

static void test_kubelet_order(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(orders); i++) {
		const struct order_case *c = &orders[i];
		cleanup_topology struct ts_topology *topo = fixture_load(c->topo);
		cleanup_hwloc_bitmap hwloc_bitmap_t avail = fixture_set(c->avail);

		for (size_t k = 0; k < ARRAY_SIZE(c->want) && c->want[k] != NULL; k++) {
			cleanup_hwloc_bitmap hwloc_bitmap_t got = NULL;
			cleanup_error struct ts_error *err = NULL;

			if (ts_placement_take(topo, avail, c->step, NULL, NULL, &got, NULL, &err) <
			    0)
				fail_msg("%s[%zu]: %s", c->name, k, err->msg);
			fixture_assert_set(c->name, got, c->want[k]);
			hwloc_bitmap_andnot(avail, avail, got);
		}
	}
}

/* K2: 12 then 2 cpus, both inside LLC 1. */
static void test_kubelet_k2(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T12);
	cleanup_hwloc_bitmap hwloc_bitmap_t avail = fixture_set("0-383");
	cleanup_hwloc_bitmap hwloc_bitmap_t a = NULL, b = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_take_opts opts = {.align_l3 = true, .full_cores_only = true};

	cleanup_hwloc_bitmap hwloc_bitmap_t used = fixture_set("0-7,192-199,96-103,288-295");

	hwloc_bitmap_andnot(avail, avail, used);
	assert_int_equal(ts_placement_take(topo, avail, 12, NULL, &opts, &a, NULL, &err), 0);
	fixture_assert_set("K2 first", a, "8-13,200-205");
	hwloc_bitmap_andnot(avail, avail, a);
	assert_int_equal(ts_placement_take(topo, avail, 2, NULL, &opts, &b, NULL, &err), 0);
	fixture_assert_set("K2 second", b, "14,206");
}

/* The steps name what was taken, for `toposhimctl plan`. */
static void test_steps(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T5);
	cleanup_hwloc_bitmap hwloc_bitmap_t avail = fixture_set("0-79");
	cleanup_hwloc_bitmap hwloc_bitmap_t got = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_strv char **steps = NULL;

	assert_int_equal(ts_placement_take(topo, avail, 64, NULL, NULL, &got, &steps, &err), 0);
	assert_string_equal(steps[0], "whole package 0: cpus 0-19,40-59");
	assert_string_equal(steps[1], "whole numa node 2: cpus 20-29,60-69");
	assert_string_equal(steps[2], "whole cores: cpus 30-31,70-71");
	assert_null(steps[3]);
}

/* D10 with its steps: the chosen nodes, the share and the remainder. */
static void test_steps_distributed(void **state)
{
	cleanup_topology struct ts_topology *topo = fixture_load(T5);
	cleanup_hwloc_bitmap hwloc_bitmap_t avail = fixture_set("0-79");
	cleanup_hwloc_bitmap hwloc_bitmap_t got = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_strv char **steps = NULL;
	struct ts_placement_take_opts opts = {.distribute_across_numa = true,
					      .full_cores_only = true};

	assert_int_equal(ts_placement_take(topo, avail, 26, NULL, &opts, &got, &steps, &err), 0);
	fixture_assert_set("D10 steps", got, "0-6,10-15,40-46,50-55");
	assert_string_equal(steps[0], "distributed across numa nodes 0,1: 12 each, 2 more");
	assert_string_equal(steps[1], "whole cores: cpus 0-6,10-15,40-46,50-55");
	assert_null(steps[2]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kubelet_cases),	  cmocka_unit_test(test_kubelet_order),
		cmocka_unit_test(test_kubelet_k2),	  cmocka_unit_test(test_steps),
		cmocka_unit_test(test_steps_distributed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
