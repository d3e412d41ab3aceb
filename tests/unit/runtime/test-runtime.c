/* Unit tests of src/runtime/runtime.c, with temporary directories. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
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

#include "../require.h"
#include "runtime/runtime.h"
#include "util/cleanup.h"

/* Layout made for every test under a fresh temporary directory T:
 *   T/a/runc   executable          T/b/runc  executable
 *   T/b/crun   executable          T/c/runc  not executable
 *   T/d/runc   a directory         T/self    "our" binary
 *   T/e/runc   symlink to T/self   T/f/crun  hard link of T/self */
struct fixture {
	char dir[64];
	char path[PATH_MAX];
};

static char *fx_path(const struct fixture *fx, const char *rel)
{
	char *p = NULL;

	assert_true(asprintf(&p, "%s/%s", fx->dir, rel) > 0);
	return p;
}

static void fx_file(const struct fixture *fx, const char *rel, mode_t mode)
{
	cleanup_free char *p = fx_path(fx, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	assert_int_equal(chmod(p, mode), 0);
}

static void fx_mkdir(const struct fixture *fx, const char *rel)
{
	cleanup_free char *p = fx_path(fx, rel);

	assert_int_equal(mkdir(p, 0755), 0);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	cleanup_free char *self = NULL, *e = NULL, *f = NULL;

	assert_non_null(fx);
	strcpy(fx->dir, "/tmp/ts-runtime-XXXXXX");
	assert_non_null(mkdtemp(fx->dir));
	for (const char *d = "abcdef"; *d != '\0'; d++) {
		char rel[2] = {*d, '\0'};
		fx_mkdir(fx, rel);
	}
	fx_file(fx, "a/runc", 0755);
	fx_file(fx, "b/runc", 0755);
	fx_file(fx, "b/crun", 0755);
	fx_file(fx, "c/runc", 0644);
	fx_mkdir(fx, "d/runc");
	fx_file(fx, "self", 0755);
	self = fx_path(fx, "self");
	e = fx_path(fx, "e/runc");
	f = fx_path(fx, "f/crun");
	assert_int_equal(symlink(self, e), 0);
	assert_int_equal(link(self, f), 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	cleanup_free char *cmd = NULL;

	assert_true(asprintf(&cmd, "rm -rf '%s'", fx->dir) > 0);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* Run a lookup whose PATH is the listed subdirectories of T. */
static int find(const struct fixture *fx, const char *path_dirs, const char *override,
		const char *path, const char *const *names, char **ret, struct ts_error **err)
{
	static const char *const no_dirs[] = {NULL};
	cleanup_free char *self = fx_path(fx, "self");
	char path_env[512] = "";
	struct ts_runtime_lookup lookup = {
		.override = override,
		.path = path,
		.path_origin = "config.json: '/runtime/path'",
		.names = names,
		.path_env = path_env,
		.dirs = no_dirs,
		.self_exe = self,
	};

	for (const char *d = path_dirs; *d != '\0'; d++) {
		size_t n = strlen(path_env);
		snprintf(path_env + n, sizeof(path_env) - n, "%s%s/%c", n ? ":" : "", fx->dir, *d);
	}
	return ts_runtime_find(&lookup, ret, err);
}

static void expect_found(const struct fixture *fx, const char *path_dirs, const char *override,
			 const char *path, const char *const *names, const char *want_rel)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *got = NULL, *want = fx_path(fx, want_rel);

	if (find(fx, path_dirs, override, path, names, &got, &err) != 0)
		fail_msg("PATH %s: unexpected error: %s", path_dirs, err->msg);
	assert_string_equal(got, want);
}

static void test_search_order(void **state)
{
	const struct fixture *fx = *state;
	static const char *const crun_first[] = {"crun", "runc", NULL};

	expect_found(fx, "ab", NULL, NULL, NULL, "a/runc");
	expect_found(fx, "ba", NULL, NULL, NULL, "b/runc");
	/* names are tried in order, each through all of PATH */
	expect_found(fx, "ab", NULL, NULL, crun_first, "b/crun");
	/* not executable, a directory: skipped */
	expect_found(fx, "cdb", NULL, NULL, NULL, "b/runc");
}

static void test_search_paths(void **state)
{
	const struct fixture *fx = *state;
	cleanup_free char *self = fx_path(fx, "self"), *b = fx_path(fx, "b/crun");
	cleanup_free char *want = NULL, *got = NULL;
	cleanup_error struct ts_error *err = NULL;
	const char *names[] = {self, b, NULL};
	const char *only_self[] = {self, NULL};

	/* a search entry with a '/' is a path: tried once, ourselves skipped */
	expect_found(fx, "a", NULL, NULL, names, "b/crun");
	assert_int_equal(find(fx, "ab", NULL, NULL, only_self, &got, &err), -ENOENT);
	assert_true(asprintf(&want,
			     "no OCI runtime found: tried %s in PATH (%s/a:%s/b) and ; skipped "
			     "'%s' (toposhim itself)",
			     self, fx->dir, fx->dir, self) > 0);
	assert_string_equal(err->msg, want);
}

static void test_search_skips_self(void **state)
{
	const struct fixture *fx = *state;
	static const char *const crun[] = {"crun", NULL};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *got = NULL, *want = NULL;

	/* e/runc is a symlink to ourselves, f/crun a hard link */
	expect_found(fx, "eb", NULL, NULL, NULL, "b/runc");
	expect_found(fx, "fb", NULL, NULL, crun, "b/crun");
	assert_int_equal(find(fx, "ef", NULL, NULL, crun, &got, &err), -ENOENT);
	assert_true(asprintf(&want,
			     "no OCI runtime found: tried crun in PATH (%s/e:%s/f) and ; "
			     "skipped '%s/f/crun' (toposhim itself)",
			     fx->dir, fx->dir, fx->dir) > 0);
	assert_string_equal(err->msg, want);
	assert_null(got);
}

static void test_not_found_message(void **state)
{
	static const char *const dirs[] = {"/nonexistent-1", "/nonexistent-2", NULL};
	struct ts_runtime_lookup lookup = {.path_env = "/x:/y", .dirs = dirs};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *got = NULL, *full = NULL;

	assert_int_equal(ts_runtime_find(&lookup, &got, &err), -ENOENT);
	assert_string_equal(err->msg, "no OCI runtime found: tried runc, crun in PATH (/x:/y) and "
				      "/nonexistent-1:/nonexistent-2");
	full = ts_error_format(err);
	assert_string_equal(full, "no OCI runtime found: tried runc, crun in PATH (/x:/y) and "
				  "/nonexistent-1:/nonexistent-2: No such file or directory");
}

static void test_default_dirs(void **state)
{
	static const char *const names[] = {"no-such-runtime-xyz", NULL};
	struct ts_runtime_lookup lookup = {.names = names};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *got = NULL;

	assert_int_equal(ts_runtime_find(&lookup, &got, &err), -ENOENT);
	assert_string_equal(err->msg, "no OCI runtime found: tried no-such-runtime-xyz in PATH "
				      "(unset) and /usr/local/sbin:/usr/local/bin:/usr/sbin:"
				      "/usr/bin:/sbin:/bin");
}

static void test_override_and_path(void **state)
{
	const struct fixture *fx = *state;
	static const char *const crun[] = {"crun", NULL};
	cleanup_free char *a = fx_path(fx, "a/runc"), *b = fx_path(fx, "b/crun");

	/* TOPOSHIM_RUNTIME wins over runtime.path, which wins over search */
	expect_found(fx, "b", a, b, NULL, "a/runc");
	expect_found(fx, "a", NULL, b, NULL, "b/crun");
	expect_found(fx, "a", "", b, NULL, "b/crun");
	/* a bare name is searched */
	expect_found(fx, "ab", "crun", NULL, NULL, "b/crun");
	expect_found(fx, "ab", NULL, "crun", crun, "b/crun");
}

static void test_explicit_errors(void **state)
{
	const struct fixture *fx = *state;
	cleanup_free char *self = fx_path(fx, "self"), *e = fx_path(fx, "e/runc");
	cleanup_free char *c = fx_path(fx, "c/runc"), *d = fx_path(fx, "d/runc");
	cleanup_free char *want = NULL, *got = NULL;
	struct ts_error *err = NULL;

	assert_int_equal(find(fx, "a", e, NULL, NULL, &got, &err), -EINVAL);
	assert_true(asprintf(&want,
			     "recursion: runtime '%s' (from TOPOSHIM_RUNTIME) is toposhim "
			     "itself",
			     e) > 0);
	assert_string_equal(err->msg, want);
	err = ts_error_free(err);
	want = (free(want), NULL);

	assert_int_equal(find(fx, "a", NULL, self, NULL, &got, &err), -EINVAL);
	assert_true(asprintf(&want,
			     "recursion: runtime '%s' (from config.json: '/runtime/path') "
			     "is toposhim itself",
			     self) > 0);
	assert_string_equal(err->msg, want);
	err = ts_error_free(err);
	want = (free(want), NULL);

	assert_int_equal(find(fx, "a", c, NULL, NULL, &got, &err), -EACCES);
	assert_true(asprintf(&want, "runtime '%s' (from TOPOSHIM_RUNTIME): not an executable file",
			     c) > 0);
	assert_string_equal(err->msg, want);
	err = ts_error_free(err);
	want = (free(want), NULL);

	assert_int_equal(find(fx, "a", d, NULL, NULL, &got, &err), -EISDIR);
	err = ts_error_free(err);
	assert_int_equal(find(fx, "a", "/nonexistent/runc", NULL, NULL, &got, &err), -ENOENT);
	assert_string_equal(err->msg, "runtime '/nonexistent/runc' (from TOPOSHIM_RUNTIME): not "
				      "an executable file");
	err = ts_error_free(err);
	assert_null(got);
}

static void test_check_depth(void **state)
{
	static const struct {
		const char *value;
		int want;
		const char *msg;
	} rows[] = {
		{NULL, 0, NULL},
		{"", 0, NULL},
		{"0", 0, NULL},
		{"1", -EINVAL, "recursion: toposhim called itself through '/w/runc'"},
		{"7", -EINVAL, "recursion: toposhim called itself through '/w/runc'"},
		{"x", -EINVAL, "environment: 'TOPOSHIM_DEPTH': invalid depth 'x'"},
		{"-1", -EINVAL, "environment: 'TOPOSHIM_DEPTH': invalid depth '-1'"},
		{"1x", -EINVAL, "environment: 'TOPOSHIM_DEPTH': invalid depth '1x'"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		int r = ts_runtime_check_depth(rows[i].value, "/w/runc", &err);

		if (r != rows[i].want)
			fail_msg("depth '%s': want %d, got %d", rows[i].value, rows[i].want, r);
		if (rows[i].msg == NULL)
			assert_null(err);
		else
			assert_string_equal(err->msg, rows[i].msg);
	}
}

static void check_strv(char **got, const char *const *want)
{
	size_t i = 0;

	for (; want[i] != NULL; i++) {
		assert_non_null(got[i]);
		assert_string_equal(got[i], want[i]);
	}
	assert_null(got[i]);
}

static void test_build_exec(void **state)
{
	char *argv[] = {"toposhim", "--root", "/r", "create", "", "id 1", NULL};
	char *argv_path[] = {"/usr/local/bin/toposhim", "state", NULL};
	char *envp[] = {"A=1", "TOPOSHIM_DEPTH=0", "B=", "TOPOSHIM_DEPTH=", NULL};
	char *envp2[] = {"PATH=/bin", NULL};
	static const char *const want_argv[] = {"runc", "--root", "/r", "create", "", "id 1", NULL};
	static const char *const want_argv_path[] = {"/usr/sbin/runc", "state", NULL};
	static const char *const want_env[] = {"A=1", "TOPOSHIM_DEPTH=1", "B=", "TOPOSHIM_DEPTH=1",
					       NULL};
	static const char *const want_env2[] = {"PATH=/bin", "TOPOSHIM_DEPTH=1", NULL};
	static const char *const want_env3[] = {"TOPOSHIM_DEPTH=1", NULL};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL, *path2 = NULL, *path3 = NULL, *path4 = NULL;
	cleanup_strv char **out_argv = NULL, **out_env = NULL;
	cleanup_strv char **out_argv2 = NULL, **out_env2 = NULL;
	cleanup_strv char **out_argv3 = NULL, **out_env3 = NULL;
	cleanup_strv char **out_argv4 = NULL, **out_env4 = NULL;

	/* called by name: the runtime by its name; argv[1..] byte for byte */
	assert_int_equal(ts_runtime_build_exec("/usr/sbin/runc", 6, argv, envp, 0, &path, &out_argv,
					       &out_env, &err),
			 0);
	assert_string_equal(path, "/usr/sbin/runc");
	check_strv(out_argv, want_argv);
	check_strv(out_env, want_env);
	/* copies, not borrowed pointers */
	assert_ptr_not_equal(out_argv[1], argv[1]);

	/* called by a path: the runtime by its path */
	assert_int_equal(ts_runtime_build_exec("/usr/sbin/runc", 2, argv_path, envp2, 0, &path4,
					       &out_argv4, &out_env4, &err),
			 0);
	assert_string_equal(path4, "/usr/sbin/runc");
	check_strv(out_argv4, want_argv_path);

	assert_int_equal(ts_runtime_build_exec("/bin/crun", 6, argv, envp2, 0, &path2, &out_argv2,
					       &out_env2, &err),
			 0);
	assert_string_equal(out_argv2[0], "crun");
	check_strv(out_env2, want_env2);
	/* no arguments at all (argc 0): the path */
	assert_int_equal(ts_runtime_build_exec("/bin/crun", 0, argv, NULL, 0, &path3, &out_argv3,
					       &out_env3, &err),
			 0);
	assert_string_equal(path3, "/bin/crun");
	assert_string_equal(out_argv3[0], "/bin/crun");
	assert_null(out_argv3[1]);
	check_strv(out_env3, want_env3);
}

/* Which runtime keeps a container: its own state file says (issue 14:
 * one runtime per container; issue 10: never the records' word). */
static void test_family(void **state)
{
	struct fixture *fx = *state;
	static const struct {
		const char *path;
		enum ts_runtime_family want;
	} names[] = {
		{"/usr/sbin/runc", TS_RUNTIME_FAMILY_RUNC},
		{"runc.amd64", TS_RUNTIME_FAMILY_RUNC},
		{"/opt/crun-1.8/bin/crun", TS_RUNTIME_FAMILY_CRUN},
		{"/usr/bin/youki", TS_RUNTIME_FAMILY_UNKNOWN},
		{"/tmp/stand-in-runtime", TS_RUNTIME_FAMILY_UNKNOWN},
		{NULL, TS_RUNTIME_FAMILY_UNKNOWN},
	};
	cleanup_free char *root = fx_path(fx, "root");

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (ts_runtime_family_of_path(names[i].path) != names[i].want)
			fail_msg("%s: family %d", names[i].path ? names[i].path : "NULL",
				 ts_runtime_family_of_path(names[i].path));
	assert_string_equal(ts_runtime_family_state_file(TS_RUNTIME_FAMILY_RUNC), "state.json");
	assert_string_equal(ts_runtime_family_state_file(TS_RUNTIME_FAMILY_CRUN), "status");
	assert_null(ts_runtime_family_state_file(TS_RUNTIME_FAMILY_UNKNOWN));
	assert_null(ts_runtime_family_state_file(_TS_RUNTIME_FAMILY_MAX));
	fx_mkdir(fx, "root");
	fx_mkdir(fx, "root/by-runc");
	fx_file(fx, "root/by-runc/state.json", 0600);
	fx_mkdir(fx, "root/by-crun");
	fx_file(fx, "root/by-crun/status", 0600);
	fx_mkdir(fx, "root/other");
	fx_mkdir(fx, "root/linked");
	{
		cleanup_free char *target = fx_path(fx, "root/by-runc/state.json");
		cleanup_free char *link_path = fx_path(fx, "root/linked/state.json");

		assert_int_equal(symlink(target, link_path), 0);
	}
	assert_int_equal(ts_runtime_family_of_container(root, "by-runc"), TS_RUNTIME_FAMILY_RUNC);
	assert_int_equal(ts_runtime_family_of_container(root, "by-crun"), TS_RUNTIME_FAMILY_CRUN);
	assert_int_equal(ts_runtime_family_of_container(root, "other"), TS_RUNTIME_FAMILY_UNKNOWN);
	assert_int_equal(ts_runtime_family_of_container(root, "none"), TS_RUNTIME_FAMILY_UNKNOWN);
	/* a symlink is no runtime's state file; ids are one path component */
	assert_int_equal(ts_runtime_family_of_container(root, "linked"), TS_RUNTIME_FAMILY_UNKNOWN);
	assert_int_equal(ts_runtime_family_of_container(root, "../root/by-runc"),
			 TS_RUNTIME_FAMILY_UNKNOWN);
	assert_int_equal(ts_runtime_family_of_container(root, ".."), TS_RUNTIME_FAMILY_UNKNOWN);
	assert_string_equal(ts_runtime_family_name(TS_RUNTIME_FAMILY_CRUN), "crun");
	assert_null(ts_runtime_family_name(TS_RUNTIME_FAMILY_UNKNOWN));
}

/* Where runc 1.1.5 and crun 1.8.1 keep their state without --root (strace:
 * `XDG_RUNTIME_DIR=/tmp/x crun list` as root mkdirs /tmp/x/crun, runc
 * opens /run/runc; as uid 65534 both use /tmp/x/<name>). */
static void test_family_default_root(void **state)
{
	static const struct {
		enum ts_runtime_family f;
		struct ts_runtime_caller caller;
		const char *want;
	} cases[] = {
		{TS_RUNTIME_FAMILY_RUNC, {NULL, 0, false, "root"}, "/run/runc"},
		{TS_RUNTIME_FAMILY_CRUN, {NULL, 0, false, "root"}, "/run/crun"},
		{TS_RUNTIME_FAMILY_RUNC, {"", 1000, false, "u"}, "/run/runc"},
		{TS_RUNTIME_FAMILY_CRUN, {"", 1000, false, "u"}, "/run/crun"},
		/* root outside a user namespace: runc ignores /run/user/0 */
		{TS_RUNTIME_FAMILY_RUNC, {"/run/user/0", 0, false, "root"}, "/run/runc"},
		{TS_RUNTIME_FAMILY_CRUN, {"/run/user/0", 0, false, "root"}, "/run/user/0/crun"},
		{TS_RUNTIME_FAMILY_RUNC,
		 {"/run/user/1000", 1000, false, "u"},
		 "/run/user/1000/runc"},
		{TS_RUNTIME_FAMILY_CRUN,
		 {"/run/user/1000", 1000, false, "u"},
		 "/run/user/1000/crun"},
		/* uid 0 in rootless podman's user namespace */
		{TS_RUNTIME_FAMILY_RUNC, {"/run/user/1000", 0, true, "u"}, "/run/user/1000/runc"},
		{TS_RUNTIME_FAMILY_RUNC, {"/run/user/1000", 0, true, NULL}, "/run/user/1000/runc"},
		{TS_RUNTIME_FAMILY_RUNC, {"/run/user/1000", 0, true, "root"}, "/run/runc"},
	};
	char *root = NULL;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(
			ts_runtime_family_default_root(cases[i].f, &cases[i].caller, &root), 0);
		if (strcmp(root, cases[i].want) != 0)
			fail_msg("case %zu: got %s, want %s", i, root, cases[i].want);
		free(root);
	}
	assert_int_equal(
		ts_runtime_family_default_root(TS_RUNTIME_FAMILY_UNKNOWN, &cases[0].caller, &root),
		-EINVAL);
	assert_null(root);
	/* this process: the test's own environment decides */
	assert_int_equal(ts_runtime_family_default_root(TS_RUNTIME_FAMILY_CRUN, NULL, &root), 0);
	if (getenv("XDG_RUNTIME_DIR") == NULL || getenv("XDG_RUNTIME_DIR")[0] == '\0')
		assert_string_equal(root, "/run/crun");
	free(root);
}

/* A file in the kernel's cpu list format, in a new temp dir (caller removes both). */
static char *cpulist_file(char *dir, const char *text)
{
	char *path = NULL;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&path, "%s/online", dir) > 0);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* taskset -c 0 before toposhim: the mask is widened to every online CPU. */
static void test_reset_affinity(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	char dir[] = "/tmp/ts-affinity-XXXXXX";
	cleanup_free char *path = NULL;
	cpu_set_t one, got;
	int first = -1;

	(void)state;
	if (online < 2)
		ts_test_skip("needs 2 online CPUs to narrow the mask (%ld online)", online);
	assert_int_equal(sched_getaffinity(0, sizeof(got), &got), 0);
	for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
		if (CPU_ISSET(c, &got))
			first = c;
	CPU_ZERO(&one);
	CPU_SET(first, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
	assert_int_equal(ts_runtime_reset_affinity(NULL, &err), 0);
	assert_int_equal(sched_getaffinity(0, sizeof(got), &got), 0);
	assert_int_equal(CPU_COUNT(&got), (int)online);

	/* the list read is the one used: "F" narrows it again */
	{
		char text[16];

		snprintf(text, sizeof(text), "%d\n", first);
		path = cpulist_file(dir, text);
	}
	assert_int_equal(ts_runtime_reset_affinity(path, &err), 0);
	assert_int_equal(sched_getaffinity(0, sizeof(got), &got), 0);
	assert_int_equal(CPU_COUNT(&got), 1);
	assert_true(CPU_ISSET(first, &got));
	assert_int_equal(ts_runtime_reset_affinity(NULL, &err), 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_reset_affinity_errors(void **state)
{
	static const char *const bad[] = {"x\n", "", "3-1", "0,,1", "0-", "99999"};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *path = NULL, *want = NULL;
		char dir[] = "/tmp/ts-affinity-XXXXXX";
		char shown[16];

		path = cpulist_file(dir, bad[i]);
		snprintf(shown, sizeof(shown), "%s", bad[i]);
		shown[strcspn(shown, "\n")] = '\0';
		assert_true(asprintf(&want, "%s: invalid cpu list '%s'", path, shown) > 0);
		assert_int_equal(ts_runtime_reset_affinity(path, &err), -EINVAL);
		assert_string_equal(err->msg, want);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(rmdir(dir), 0);
	}
	{
		cleanup_error struct ts_error *err = NULL;

		assert_int_equal(ts_runtime_reset_affinity("/nonexistent/online", &err), -ENOENT);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_search_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_skips_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_search_paths, setup, teardown),
		cmocka_unit_test(test_not_found_message),
		cmocka_unit_test(test_default_dirs),
		cmocka_unit_test_setup_teardown(test_override_and_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_explicit_errors, setup, teardown),
		cmocka_unit_test(test_check_depth),
		cmocka_unit_test(test_build_exec),
		cmocka_unit_test_setup_teardown(test_family, setup, teardown),
		cmocka_unit_test(test_family_default_root),
		cmocka_unit_test(test_reset_affinity),
		cmocka_unit_test(test_reset_affinity_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
