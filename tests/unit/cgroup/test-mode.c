/* Unit tests of src/cgroup/mode.c: mode names, magics, root override, fake trees. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ts_cgroup_mode_to_string(TS_CGROUP_MODE_UNIFIED), "unified");
	assert_string_equal(ts_cgroup_mode_to_string(TS_CGROUP_MODE_HYBRID), "hybrid");
	assert_string_equal(ts_cgroup_mode_to_string(TS_CGROUP_MODE_LEGACY), "legacy");
	assert_null(ts_cgroup_mode_to_string(TS_CGROUP_MODE_INVALID));
	assert_null(ts_cgroup_mode_to_string(_TS_CGROUP_MODE_MAX));
	assert_int_equal(ts_cgroup_mode_from_string("hybrid"), TS_CGROUP_MODE_HYBRID);
	assert_int_equal(ts_cgroup_mode_from_string("v2"), TS_CGROUP_MODE_INVALID);
	assert_int_equal(ts_cgroup_mode_from_string(NULL), TS_CGROUP_MODE_INVALID);
}

static void test_magic(void **state)
{
	(void)state;
	assert_int_equal(ts_cgroup_mode_from_magic(0x63677270, 0), TS_CGROUP_MODE_UNIFIED);
	assert_int_equal(ts_cgroup_mode_from_magic(0x01021994, 0x63677270), TS_CGROUP_MODE_HYBRID);
	assert_int_equal(ts_cgroup_mode_from_magic(0x01021994, 0), TS_CGROUP_MODE_LEGACY);
	assert_int_equal(ts_cgroup_mode_from_magic(0x01021994, 0x27e0eb), TS_CGROUP_MODE_LEGACY);
	assert_int_equal(ts_cgroup_mode_from_magic(0xEF53, 0x63677270), TS_CGROUP_MODE_LEGACY);
}

static void test_root(void **state)
{
	(void)state;
	assert_int_equal(unsetenv(TS_CGROUP_ROOT_ENV), 0);
	assert_string_equal(ts_cgroup_root(NULL), "/sys/fs/cgroup");
	assert_string_equal(ts_cgroup_root(""), "/sys/fs/cgroup");
	assert_string_equal(ts_cgroup_root("/cfg"), "/cfg");
	assert_int_equal(setenv(TS_CGROUP_ROOT_ENV, "/env", 1), 0);
	assert_string_equal(ts_cgroup_root("/cfg"), "/env");
	assert_int_equal(setenv(TS_CGROUP_ROOT_ENV, "", 1), 0);
	assert_string_equal(ts_cgroup_root("/cfg"), "/cfg");
	assert_int_equal(unsetenv(TS_CGROUP_ROOT_ENV), 0);
}

static void test_fake_tree(void **state)
{
	char dir[] = "/tmp/ts-cgroup-mode-XXXXXX";
	cleanup_error struct ts_error *e = NULL;
	enum ts_cgroup_mode mode = TS_CGROUP_MODE_INVALID;
	char path[128];

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* No mode file: a plain directory has neither magic. */
	assert_int_equal(ts_cgroup_detect_mode(dir, &mode, &e), 0);
	assert_int_equal(mode, TS_CGROUP_MODE_LEGACY);
	static const struct {
		const char *content;
		enum ts_cgroup_mode want;
	} rows[] = {
		{"unified\n", TS_CGROUP_MODE_UNIFIED},
		{"  hybrid", TS_CGROUP_MODE_HYBRID},
		{"legacy", TS_CGROUP_MODE_LEGACY},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		snprintf(path, sizeof(path), "%s/" TS_CGROUP_MODE_FILE, dir);
		assert_int_equal(ts_write_file_atomic_at(AT_FDCWD, path, rows[i].content,
							 strlen(rows[i].content), 0644, &e),
				 0);
		assert_int_equal(ts_cgroup_detect_mode(dir, &mode, &e), 0);
		assert_int_equal(mode, rows[i].want);
	}
	assert_int_equal(ts_write_file_atomic_at(AT_FDCWD, path, "v3\n", 3, 0644, &e), 0);
	mode = TS_CGROUP_MODE_UNIFIED;
	assert_int_equal(ts_cgroup_detect_mode(dir, &mode, &e), -EINVAL);
	assert_int_equal(mode, TS_CGROUP_MODE_UNIFIED);
	char want[160];
	snprintf(want, sizeof(want), "%s: invalid cgroup mode 'v3'", path);
	assert_string_equal(e->msg, want);
	ts_error_clear(&e);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(ts_cgroup_detect_mode(dir, &mode, &e), -ENOENT);
	snprintf(want, sizeof(want), "%s: cannot statfs", dir);
	assert_string_equal(e->msg, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_magic),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_fake_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
