/* Unit tests of src/util/error.c. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "util/cleanup.h"
#include "util/error.h"

static void test_set_returns_negative_errno(void **state)
{
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_error_set(&err, ENOENT, "%s: cannot open", "x.json"), -ENOENT);
	assert_string_equal(err->msg, "x.json: cannot open");
	assert_int_equal(err->errnum, ENOENT);
}

static void test_validation_error_is_einval(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *s = NULL;

	assert_int_equal(ts_error_set(&err, 0, "bad '%s'", "v"), -EINVAL);
	assert_int_equal(ts_error_code(err), -EINVAL);
	s = ts_error_format(err);
	assert_string_equal(s, "bad 'v'");
}

static void test_first_error_is_kept(void **state)
{
	cleanup_error struct ts_error *err = NULL;

	ts_error_set(&err, EIO, "first");
	assert_int_equal(ts_error_set(&err, ENOENT, "second"), -ENOENT);
	assert_string_equal(err->msg, "first");
}

static void test_prefix_and_format(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *s = NULL;

	ts_error_set(&err, ENOENT, "config.json: cannot open");
	assert_int_equal(ts_error_prefix(&err, "bundle '%s'", "/b"), -ENOENT);
	s = ts_error_format(err);
	assert_string_equal(s, "bundle '/b': config.json: cannot open: No such file or directory");
}

/* A plain error keeps its errno for callers but prints no strerror. */
static void test_plain(void **state)
{
	struct ts_error *err = NULL;
	char *s;

	assert_int_equal(ts_error_set_plain(&err, ENOSPC, "the %s pool is empty", "shared"),
			 -ENOSPC);
	assert_int_equal(ts_error_code(err), -ENOSPC);
	assert_int_equal(ts_error_prefix(&err, "config.json: '%s'", "/x"), -ENOSPC);
	s = ts_error_format(err);
	assert_string_equal(s, "config.json: '/x': the shared pool is empty");
	free(s);
	/* an error already set is kept as it was, strerror and all */
	assert_int_equal(ts_error_set_plain(&err, EIO, "other"), -EIO);
	s = ts_error_format(err);
	assert_string_equal(s, "config.json: '/x': the shared pool is empty");
	free(s);
	ts_error_clear(&err);
	assert_int_equal(ts_error_set(&err, ENOSPC, "full"), -ENOSPC);
	s = ts_error_format(err);
	assert_string_equal(s, "full: No space left on device");
	free(s);
	ts_error_clear(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_returns_negative_errno),
		cmocka_unit_test(test_validation_error_is_einval),
		cmocka_unit_test(test_first_error_is_kept),
		cmocka_unit_test(test_prefix_and_format),
		cmocka_unit_test(test_plain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
