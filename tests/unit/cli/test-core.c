/* Unit tests of src/cli/core.c: where the front finds its core. */
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
#include <unistd.h>
#include <cmocka.h>

#include "cli/core.h"
#include "util/cleanup.h"

static void test_core_path(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	char *p = NULL;

	/* the installed front: the installed core */
	assert_int_equal(ts_cli_core_path(TS_BINDIR "/toposhim", &p, &err), 0);
	assert_string_equal(p, TS_LIBEXECDIR "/toposhim/toposhim-core");
	free(p);
	/* any other front (the build tree, a copy, a copy named runc): beside it */
	assert_int_equal(ts_cli_core_path("/src/build/toposhim", &p, &err), 0);
	assert_string_equal(p, "/src/build/toposhim-core");
	free(p);
	assert_int_equal(ts_cli_core_path("/src/bin.d/toposhim", &p, &err), 0);
	assert_string_equal(p, "/src/bin.d/toposhim-core");
	free(p);
	assert_int_equal(ts_cli_core_path("/src/xbin/toposhim", &p, &err), 0);
	assert_string_equal(p, "/src/xbin/toposhim-core");
	free(p);
	/* a relocated install: P/bin or P/sbin, whatever the name */
	assert_int_equal(ts_cli_core_path("/opt/ts/bin/toposhim", &p, &err), 0);
	assert_string_equal(p, "/opt/ts/libexec/toposhim/toposhim-core");
	free(p);
	assert_int_equal(ts_cli_core_path("/usr/local/sbin/runc", &p, &err), 0);
	assert_string_equal(p, "/usr/local/libexec/toposhim/toposhim-core");
	free(p);
	assert_int_equal(ts_cli_core_path("/bin/toposhim", &p, &err), 0);
	assert_string_equal(p, "/libexec/toposhim/toposhim-core");
	free(p);
	assert_int_equal(ts_cli_core_path("/toposhim", &p, &err), 0);
	assert_string_equal(p, "/toposhim-core");
	free(p);
	assert_int_equal(ts_cli_core_path("build/toposhim", &p, &err), -EINVAL);
	assert_string_equal(err->msg, "'build/toposhim': not an absolute path");
}

static void test_front_path(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	char *p = NULL;

	assert_int_equal(ts_cli_front_path(TS_LIBEXECDIR "/toposhim/toposhim-core", &p, &err), 0);
	assert_string_equal(p, TS_BINDIR "/toposhim");
	free(p);
	assert_int_equal(ts_cli_front_path("/opt/ts/libexec/toposhim/toposhim-core", &p, &err), 0);
	assert_string_equal(p, "/opt/ts/bin/toposhim");
	free(p);
	assert_int_equal(ts_cli_front_path("/src/build/toposhim-core", &p, &err), 0);
	assert_string_equal(p, "/src/build/toposhim");
	free(p);
	assert_int_equal(ts_cli_front_path("", &p, &err), -EINVAL);
	assert_string_equal(err->msg, "'': not an absolute path");
}

static void test_core_open(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	char dir[] = "/tmp/ts-core-XXXXXX", file[64], msg[160];
	struct stat front = {0};
	int fd = -1;

	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/toposhim-core", dir);
	front.st_uid = getuid();

	/* absent */
	assert_int_equal(ts_cli_core_open(file, &front, &fd, &err), -ENOENT);
	snprintf(msg, sizeof(msg), "core '%s': cannot open", file);
	assert_string_equal(err->msg, msg);
	ts_error_clear(&err);
	/* a directory */
	assert_int_equal(ts_cli_core_open(dir, &front, &fd, &err), -EACCES);
	snprintf(msg, sizeof(msg), "core '%s': not a regular file", dir);
	assert_string_equal(err->msg, msg);
	ts_error_clear(&err);
	/* writable by group or others: anyone of them could choose the code */
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	assert_true(fd >= 0);
	close(fd);
	fd = -1;
	assert_int_equal(chmod(file, 0775), 0);
	assert_int_equal(ts_cli_core_open(file, &front, &fd, &err), -EACCES);
	snprintf(msg, sizeof(msg), "core '%s': writable by group or others (mode 0775)", file);
	assert_string_equal(err->msg, msg);
	ts_error_clear(&err);
	assert_int_equal(chmod(file, 0757), 0);
	assert_int_equal(ts_cli_core_open(file, &front, &fd, &err), -EACCES);
	ts_error_clear(&err);
	/* the front's owner (or root) owns it, mode 0755: opened */
	assert_int_equal(chmod(file, 0755), 0);
	assert_int_equal(ts_cli_core_open(file, &front, &fd, &err), 0);
	assert_null(err);
	assert_true(fd >= 0);
	assert_true((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
	close(fd);
	fd = -1;
	/* owned by someone else than root and the front's owner (as root:
	 * uid 4242's file; else: our file, a front of uid 4343's) */
	if (getuid() == 0)
		assert_int_equal(chown(file, 4242, 4242), 0);
	front.st_uid = 4343;
	assert_int_equal(ts_cli_core_open(file, &front, &fd, &err), -EACCES);
	snprintf(msg, sizeof(msg),
		 "core '%s': owned by uid %u, neither root nor the front's owner 4343", file,
		 getuid() == 0 ? 4242U : (unsigned)getuid());
	assert_string_equal(err->msg, msg);
	ts_error_clear(&err);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_path),
		cmocka_unit_test(test_front_path),
		cmocka_unit_test(test_core_open),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
