/* Unit tests of src/plugin/fsview.c: the read-only view, both with
 * mount_setattr(2) and with the mount(2) fallback that kernels before 5.12
 * (and valgrind) need, each built in a forked child as the plugin's would
 * be.  Mount namespaces need root: without it the rows skip. */
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/internal.h"
#include "select.h"
#include "util/cleanup.h"

static char base[64];

static int setup(void **state)
{
	char p[128];

	(void)state;
	snprintf(base, sizeof(base), "/tmp/ts-fsview-XXXXXX");
	if (mkdtemp(base) == NULL)
		return -1;
	snprintf(p, sizeof(p), "%s/rw", base);
	return mkdir(p, 0755);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

/* errno of creating dir/name in the child (0: created). */
static int try_create(const char *dir, const char *name)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* Build the view in a child (legacy: the mount(2) path) and report, as
 * its exit status, 0 when base is read-only and base/rw writable, or a
 * code naming what went wrong. */
static int run_view(bool legacy)
{
	char rw[128];
	char *writable[] = {rw, NULL};
	struct ts_plugin_sandbox sb = {.writable = writable};
	struct ts_plugin_fsview v;
	cleanup_error struct ts_error *err = NULL;
	bool shm = access("/dev/shm", W_OK) == 0;
	int status;
	pid_t pid;

	snprintf(rw, sizeof(rw), "%s/rw", base);
	assert_int_equal(ts_plugin_fsview_prepare(&sb, &v, &err), 0);
	assert_true(v.mount_ns);
	if (legacy && v.mounts == NULL)
		assert_int_equal(ts_plugin_fsview_read_mounts(&v.mounts, &err), 0);
	if (!legacy && v.mounts != NULL) {
		ts_plugin_fsview_release(&v);
		return -1; /* no mount_setattr here */
	}
	pid = fork();
	if (pid == 0) {
		const char *step = NULL, *arg = NULL;

		if (ts_plugin_fsview_mounts(&v, &step, &arg) < 0)
			_exit(10);
		if (try_create(base, "ro") != EROFS)
			_exit(11);
		if (try_create(rw, "ok") != 0)
			_exit(12);
		/* another mount of the host's is read-only too */
		if (shm && try_create("/dev/shm", "ts-fsview") != EROFS)
			_exit(13);
		_exit(0);
	}
	ts_plugin_fsview_release(&v);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void check_host(void)
{
	char p[128];
	struct stat st;

	/* Nothing of the child's namespace reached the host. */
	snprintf(p, sizeof(p), "%s/ro", base);
	assert_int_equal(stat(p, &st), -1);
	snprintf(p, sizeof(p), "%s/rw/ok", base);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(try_create(base, "host"), 0);
}

static const char *needs_root(void)
{
	return geteuid() == 0 ? NULL : "mount namespaces need root";
}

static const char *needs_mount_setattr(void)
{
	if (needs_root() != NULL)
		return needs_root();
	if (syscall(SYS_mount_setattr, -1, "", 0, NULL, (size_t)0) < 0 && errno == ENOSYS)
		return "no mount_setattr (Linux < 5.12, or valgrind)";
	return NULL;
}

static void test_view_mount_setattr(void **state)
{
	(void)state;
	assert_int_equal(run_view(false), 0);
	check_host();
}

static void test_view_mount_fallback(void **state)
{
	(void)state;
	assert_int_equal(run_view(true), 0);
	check_host();
}

static void test_read_mounts(void **state)
{
	cleanup_strv char **v = NULL;
	cleanup_error struct ts_error *err = NULL;
	bool proc = false;

	(void)state;
	assert_int_equal(ts_plugin_fsview_read_mounts(&v, &err), 0);
	assert_non_null(v[0]);
	for (char **m = v; *m != NULL; m++) {
		assert_int_equal((*m)[0], '/');
		proc = proc || strcmp(*m, "/proc") == 0;
	}
	assert_true(proc);
}

int main(void)
{
	static const struct ts_plugin_test tests[] = {
		{cmocka_unit_test(test_view_mount_setattr), needs_mount_setattr},
		{cmocka_unit_test(test_view_mount_fallback), needs_root},
		{cmocka_unit_test(test_read_mounts), NULL},
	};

	return ts_plugin_run_selected("test-fsview", tests, ARRAY_SIZE(tests), setup, teardown);
}
