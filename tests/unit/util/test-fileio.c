/* Unit tests of src/util/fileio.c. */
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/cleanup.h"
#include "util/fileio.h"

static void test_atomic_write_keeps_mode_and_content(void **state)
{
	char dir[] = "/tmp/ts-fileio-XXXXXX";
	cleanup_close int dfd = -EBADF;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	size_t len = 0;
	struct stat st;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(ts_write_file_atomic_at(dfd, "config.json", "{}\n", 3, 0640, &err), 0);
	assert_int_equal(fstatat(dfd, "config.json", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	assert_int_equal(ts_read_file_at(dfd, "config.json", 0, &buf, &len, &err), 0);
	assert_int_equal(len, 3);
	assert_string_equal(buf, "{}\n");
	/* a temporary file a killed writer with this pid left is replaced */
	{
		char stale[64];
		int fd;

		snprintf(stale, sizeof(stale), ".config.json.tmp.%d", (int)getpid());
		fd = openat(dfd, stale, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		close(fd);
		free(TAKE_PTR(buf));
		assert_int_equal(ts_write_file_atomic_at(dfd, "config.json", "[]\n", 3, 0640, &err),
				 0);
		assert_int_equal(ts_read_file_at(dfd, "config.json", 0, &buf, &len, &err), 0);
		assert_string_equal(buf, "[]\n");
	}
	/* a write sweeps the temporary files of writers that are gone, and
	 * leaves those of live ones (pid 1) */
	{
		char dead_name[64];
		pid_t dead = fork();
		int fd;

		assert_true(dead >= 0);
		if (dead == 0)
			_exit(0);
		assert_int_equal(waitpid(dead, NULL, 0), dead);
		snprintf(dead_name, sizeof(dead_name), ".config.json.tmp.%d", (int)dead);
		fd = openat(dfd, dead_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		close(fd);
		fd = openat(dfd, ".config.json.tmp.1", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    0600);
		assert_true(fd >= 0);
		close(fd);
		assert_int_equal(ts_write_file_atomic_at(dfd, "config.json", "{}\n", 3, 0640, &err),
				 0);
		assert_int_equal(faccessat(dfd, dead_name, F_OK, 0), -1);
		assert_int_equal(faccessat(dfd, ".config.json.tmp.1", F_OK, 0), 0);
		assert_int_equal(unlinkat(dfd, ".config.json.tmp.1", 0), 0);
	}
	assert_int_equal(unlinkat(dfd, "config.json", 0), 0);
	/* no temporary file may remain */
	assert_int_equal(rmdir(dir), 0);
}

/* The owner is the new file's before the rename: as root any uid:gid, set-id
 * bits kept; unprivileged, another owner fails and leaves the old file. */
/* ts_write_file_replace_at(): the same atomic replacement without the
 * fsyncs: a reader that opened the old file keeps reading it whole, the
 * new one has its mode, and a rename that fails leaves the name as it was
 * and no temporary file behind. */
static void test_replace_without_fsync(void **state)
{
	char dir[] = "/tmp/ts-fileio-XXXXXX";
	cleanup_close int dfd = -EBADF;
	cleanup_close int old = -EBADF;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	char got[8] = "";
	struct stat st;
	size_t len = 0;

	(void)state;
	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(ts_write_file_replace_at(dfd, "a.json", "old\n", 4, 0600, &err), 0);
	old = openat(dfd, "a.json", O_RDONLY | O_CLOEXEC);
	assert_true(old >= 0);
	assert_int_equal(ts_write_file_replace_at(dfd, "a.json", "newer\n", 6, 0644, &err), 0);
	assert_int_equal(read(old, got, sizeof(got) - 1), 4);
	assert_string_equal(got, "old\n");
	assert_int_equal(fstatat(dfd, "a.json", &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(ts_read_file_at(dfd, "a.json", 0, &buf, &len, &err), 0);
	assert_string_equal(buf, "newer\n");
	/* a directory in the way: the rename fails */
	assert_int_equal(mkdirat(dfd, "d", 0700), 0);
	assert_int_equal(mkdirat(dfd, "d/x", 0700), 0);
	assert_int_equal(ts_write_file_replace_at(dfd, "d", "x", 1, 0600, &err), -EISDIR);
	assert_string_equal(err->msg, "d: cannot replace");
	assert_int_equal(fstatat(dfd, "d/x", &st, 0), 0);
	{
		char tmp[64];

		snprintf(tmp, sizeof(tmp), ".d.tmp.%d", (int)getpid());
		assert_int_equal(fstatat(dfd, tmp, &st, 0), -1);
		assert_int_equal(errno, ENOENT);
	}
	assert_int_equal(unlinkat(dfd, "d/x", AT_REMOVEDIR), 0);
	assert_int_equal(unlinkat(dfd, "d", AT_REMOVEDIR), 0);
	assert_int_equal(unlinkat(dfd, "a.json", 0), 0);
	assert_int_equal(rmdir(dir), 0);
}

/* runc's rootless rule, case by case (runc 1.1.5, measured with strace:
 * test-runtime holds the runtime roots that follow from it). */
static void test_rootless_caller(void **state)
{
	(void)state;
	assert_true(ts_rootless_caller(1000, false, "alice"));
	assert_true(ts_rootless_caller(1000, true, "root")); /* not root: always */
	assert_false(ts_rootless_caller(0, false, "alice")); /* real root */
	assert_false(ts_rootless_caller(0, false, NULL));
	assert_true(ts_rootless_caller(0, true, "alice")); /* rootless podman */
	assert_true(ts_rootless_caller(0, true, NULL));
	assert_false(ts_rootless_caller(0, true, "root")); /* a root userns login */
}

static void test_atomic_write_owned(void **state)
{
	char dir[] = "/tmp/ts-fileio-XXXXXX";
	cleanup_close int dfd = -EBADF;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	struct stat st;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	assert_int_equal(
		ts_write_file_atomic_owned_at(dfd, "f", "old", 3, 0640, (uid_t)-1, (gid_t)-1, &err),
		0);
	assert_int_equal(fstatat(dfd, "f", &st, 0), 0);
	assert_int_equal(st.st_uid, geteuid());
	if (geteuid() == 0) {
		assert_int_equal(
			ts_write_file_atomic_owned_at(dfd, "f", "new", 3, 02750, 1234, 5678, &err),
			0);
		assert_int_equal(fstatat(dfd, "f", &st, 0), 0);
		assert_int_equal(st.st_uid, 1234);
		assert_int_equal(st.st_gid, 5678);
		assert_int_equal(st.st_mode & 07777, 02750);
	} else {
		assert_int_equal(
			ts_write_file_atomic_owned_at(dfd, "f", "new", 3, 0640, 0, 0, &err),
			-EPERM);
		assert_string_equal(err->msg, "f: cannot replace");
		assert_int_equal(ts_read_file_at(dfd, "f", 0, &buf, NULL, &err), 0);
		assert_string_equal(buf, "old");
	}
	assert_int_equal(unlinkat(dfd, "f", 0), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_read_missing_file(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	char *buf = NULL;

	assert_int_equal(ts_read_file_at(AT_FDCWD, "/nonexistent/x.json", 0, &buf, NULL, &err),
			 -ENOENT);
	assert_string_equal(err->msg, "/nonexistent/x.json: cannot open");
	assert_null(buf);
}

/* Regular files of every size around the buffer's steps come back whole
 * (the read stops at the first short read), and so do files whose size
 * fstat does not give (procfs: size 0) or gives as 4096 (sysfs). */
static void test_read_sizes(void **state)
{
	static const size_t sizes[] = {0, 1, 4095, 4096, 4097, 8191, 8192, 12289, 100000};
	char dir[] = "/tmp/ts-fileio-XXXXXX";
	cleanup_close int dfd = -EBADF;

	assert_non_null(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dfd >= 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *want = malloc(sizes[i] + 1), *buf = NULL;
		size_t len = 99;

		assert_non_null(want);
		for (size_t k = 0; k < sizes[i]; k++)
			want[k] = (char)('a' + k % 23);
		want[sizes[i]] = '\0';
		assert_int_equal(ts_write_file_replace_at(dfd, "f", want, sizes[i], 0600, &err), 0);
		assert_int_equal(ts_read_file_at(dfd, "f", 0, &buf, &len, &err), 0);
		assert_int_equal(len, sizes[i]);
		assert_memory_equal(buf, want, sizes[i]);
		assert_int_equal(buf[len], '\0');
		assert_int_equal(unlinkat(dfd, "f", 0), 0);
	}
	assert_int_equal(rmdir(dir), 0);
	{
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *proc = NULL, *sys = NULL;
		char line[256] = "";
		FILE *f;

		/* procfs, size 0: read to EOF */
		assert_int_equal(
			ts_read_file_at(AT_FDCWD, "/proc/self/status", 0, &proc, NULL, &err), 0);
		assert_non_null(strstr(proc, "\nCpus_allowed_list:"));
		/* sysfs, size 4096: what stdio reads */
		f = fopen("/sys/devices/system/cpu/online", "re");
		if (f != NULL) {
			assert_non_null(fgets(line, sizeof(line), f));
			fclose(f);
			assert_int_equal(ts_read_file_at(AT_FDCWD, "/sys/devices/system/cpu/online",
							 0, &sys, NULL, &err),
					 0);
			assert_string_equal(sys, line);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_atomic_write_keeps_mode_and_content),
		cmocka_unit_test(test_atomic_write_owned),
		cmocka_unit_test(test_replace_without_fsync),
		cmocka_unit_test(test_rootless_caller),
		cmocka_unit_test(test_read_missing_file),
		cmocka_unit_test(test_read_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
