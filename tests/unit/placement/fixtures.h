/*
 * fixtures.h - the kubelet's CPU topology fixtures (policy_test.go T1-T12)
 * rebuilt as hwloc topologies, with the kubelet's PU and core numbering.
 */
#ifndef TS_TESTS_PLACEMENT_FIXTURES_H
#define TS_TESTS_PLACEMENT_FIXTURES_H

#include "topology/topology.h"

enum fixture_id { T1, T2, T3, T4, T5, T6, T8, T9, T10, T11, T12, _FIXTURE_MAX };

/* Load a fixture (aborts the test on failure); caller frees. */
struct ts_topology *fixture_load(enum fixture_id id);

/* Parse a cpu list or fail the test; caller frees. */
hwloc_bitmap_t fixture_set(const char *list);

/* Format a bitmap as a list (static buffer, valid until the next call). */
const char *fixture_str(hwloc_const_bitmap_t set);

/* Fail the test unless got equals the cpu list want (named in the message). */
void fixture_assert_set(const char *name, hwloc_const_bitmap_t got, const char *want);

#endif
