/* Unit tests of src/util/text.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "util/cleanup.h"
#include "util/text.h"

static void test_split_lines(void **state)
{
	static const struct {
		const char *name, *text;
		size_t n;
		const char *lines[4];
	} rows[] = {
		{"empty", "", 0, {NULL}},
		{"one, no newline", "a", 1, {"a"}},
		{"one with newline", "a\n", 1, {"a"}},
		{"blank line kept", "a\n\nb", 3, {"a", "", "b"}},
		{"two", "x y\nz\n", 2, {"x y", "z"}},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *text = strdup(rows[i].text);
		cleanup_free char **v = NULL;
		size_t n = 99;

		assert_non_null(text);
		v = ts_split_lines(text, &n);
		assert_non_null(v);
		if (n != rows[i].n)
			fail_msg("%s: %zu lines, want %zu", rows[i].name, n, rows[i].n);
		for (size_t k = 0; k < n; k++)
			if (strcmp(v[k], rows[i].lines[k]) != 0)
				fail_msg("%s: line %zu '%s', want '%s'", rows[i].name, k, v[k],
					 rows[i].lines[k]);
	}
}

/* The cpuset list syntax: what the kernel writes, nothing hwloc's parser
 * would also take. */
static void test_cpulist_valid(void **state)
{
	static const char *const good[] = {"", "0", "0-3", "0-3,8", "1,17", "0-0", "65535"};
	static const char *const bad[] = {"8-0",	   " 0", "0,,8", "-1", "0x1",	"1-3:1",
					  "0-99999999999", "0-", "zz",	 "0,", "65536", "1 ,2"};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (!ts_cpulist_valid(good[i]))
			fail_msg("'%s' refused", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ts_cpulist_valid(bad[i]))
			fail_msg("'%s' accepted", bad[i]);
}

/* One number of a list: digits, leading zeros decimal, below 65536. */
static void test_cpulist_number(void **state)
{
	unsigned v = 7;
	const char *end;

	(void)state;
	end = ts_cpulist_number("010-3", &v);
	assert_non_null(end);
	assert_string_equal(end, "-3");
	assert_int_equal(v, 10);
	end = ts_cpulist_number("65535", &v);
	assert_non_null(end);
	assert_string_equal(end, "");
	assert_int_equal(v, 65535);
	v = 7;
	assert_null(ts_cpulist_number("65536", &v));
	assert_null(ts_cpulist_number("99999999999999999999", &v));
	assert_null(ts_cpulist_number("-1", &v));
	assert_null(ts_cpulist_number("", &v));
	assert_int_equal(v, 7); /* untouched on failure */
}

static void test_text_differs(void **state)
{
	(void)state;
	assert_false(ts_text_differs(NULL, NULL));
	assert_false(ts_text_differs(NULL, ""));
	assert_false(ts_text_differs("0-3", "0-3"));
	assert_true(ts_text_differs("0-3", "0-2"));
	assert_true(ts_text_differs(NULL, "0"));
}

/* Go's path.Clean() of "/" + path, runc's CleanPath() of a cgroup path */
static void test_path_clean_absolute(void **state)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{"", "/"},
		{"/", "/"},
		{"//", "/"},
		{"/a/b/c", "/a/b/c"},
		{"/a/b/c/", "/a/b/c"},
		{"a/b", "/a/b"},
		{"/a//b/./c", "/a/b/c"},
		{"/a/b/..", "/a"},
		{"/a/..", "/"},
		{"/..", "/"},
		{"/../../../../tmp/x/p/c", "/tmp/x/p/c"},
		{"/kubepods/../../etc", "/etc"},
		{"/a/../b/../c", "/c"},
		{"/a/b/../../..", "/"},
		{"/.../a", "/.../a"},
		{"/..a/b..", "/..a/b.."},
		{"./a/./", "/a"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *out = ts_path_clean_absolute(rows[i].in);

		print_message("'%s'\n", rows[i].in);
		assert_non_null(out);
		assert_string_equal(out, rows[i].out);
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_lines),	    cmocka_unit_test(test_cpulist_valid),
		cmocka_unit_test(test_cpulist_number),	    cmocka_unit_test(test_text_differs),
		cmocka_unit_test(test_path_clean_absolute),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
