/* Unit tests of src/cgroup/set.c: cpuset list strings. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup/internal.h"
#include "util/cleanup.h"

static void test_parse_format(void **state)
{
	static const struct {
		const char *in;
		int want_ret;
		const char *want;
	} rows[] = {
		{"0-3,8", 0, "0-3,8"},	 {"  1,2,3\n", 0, "1-3"},   {"", 0, ""},
		{"\n", 0, ""},		 {"5,0-1,4", 0, "0-1,4-5"}, {"8191", 0, "8191"},
		{"0-8191", 0, "0-8191"}, {"3-1", -EINVAL, NULL},    {"1,", -EINVAL, NULL},
		{",1", -EINVAL, NULL},	 {"1-", -EINVAL, NULL},	    {"a", -EINVAL, NULL},
		{"1 2", -EINVAL, NULL},	 {"8192", -EINVAL, NULL},   {"-1", -EINVAL, NULL},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ts_cgroup_set s;
		int r = ts_cgroup_set_parse(rows[i].in, &s);
		if (r != rows[i].want_ret)
			fail_msg("'%s': ret %d, want %d", rows[i].in, r, rows[i].want_ret);
		if (r < 0)
			continue;
		cleanup_free char *out = ts_cgroup_set_format(&s);
		assert_non_null(out);
		if (strcmp(out, rows[i].want) != 0)
			fail_msg("'%s': got '%s', want '%s'", rows[i].in, out, rows[i].want);
	}
}

static void test_ops(void **state)
{
	struct ts_cgroup_set a, b, c, and;

	(void)state;
	assert_int_equal(ts_cgroup_set_parse("0-3", &a), 0);
	assert_int_equal(ts_cgroup_set_parse("2-5", &b), 0);
	assert_int_equal(ts_cgroup_set_parse("2,3", &c), 0);
	ts_cgroup_set_and(&and, &a, &b);
	assert_true(ts_cgroup_set_equal(&and, &c));
	assert_false(ts_cgroup_set_equal(&a, &b));
	assert_true(ts_cgroup_set_is_subset(&c, &a));
	assert_false(ts_cgroup_set_is_subset(&a, &c));
	assert_false(ts_cgroup_set_is_empty(&c));
	assert_int_equal(ts_cgroup_set_parse("100", &b), 0);
	ts_cgroup_set_and(&and, &a, &b);
	assert_true(ts_cgroup_set_is_empty(&and));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_ops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
