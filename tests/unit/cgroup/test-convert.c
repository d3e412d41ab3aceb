/* Unit tests of src/cgroup/convert.c: shares <-> weight, exact values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

struct row {
	uint64_t in, want;
};

static void test_weight_to_shares(void **state)
{
	static const struct row rows[] = {
		{0, 2},	       {1, 10},		{39, 399},	 {100, 1024},
		{1000, 10240}, {10000, 102400}, {20000, 102400},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (ts_cgroup_weight_to_shares(rows[i].in) != rows[i].want)
			fail_msg("weight %lu: got %lu, want %lu", (unsigned long)rows[i].in,
				 (unsigned long)ts_cgroup_weight_to_shares(rows[i].in),
				 (unsigned long)rows[i].want);
}

static void test_linear(void **state)
{
	/* runc <= 1.3.1: 1024 -> 39 (runc issue #4772), 2000 -> 77 (runc issue #4896). */
	static const struct row rows[] = {
		{0, 0}, {1, 1}, {2, 1}, {1024, 39}, {2000, 77}, {262144, 10000}, {1000000, 10000},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (ts_cgroup_shares_to_weight_linear(rows[i].in) != rows[i].want)
			fail_msg("shares %lu: got %lu, want %lu", (unsigned long)rows[i].in,
				 (unsigned long)ts_cgroup_shares_to_weight_linear(rows[i].in),
				 (unsigned long)rows[i].want);
}

static void test_quadratic(void **state)
{
	/* Reference values from Python's math.log2/pow; 2000 -> 170 as in runc issue #4896. */
	static const struct row rows[] = {
		{0, 0},	      {1, 1},	      {2, 1},	       {3, 2},
		{10, 4},      {512, 59},      {1024, 100},     {2000, 170},
		{10240, 639}, {102400, 4429}, {262143, 10000}, {262144, 10000},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (ts_cgroup_shares_to_weight_quadratic(rows[i].in) != rows[i].want)
			fail_msg("shares %lu: got %lu, want %lu", (unsigned long)rows[i].in,
				 (unsigned long)ts_cgroup_shares_to_weight_quadratic(rows[i].in),
				 (unsigned long)rows[i].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weight_to_shares),
		cmocka_unit_test(test_linear),
		cmocka_unit_test(test_quadratic),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
