/* Unit tests of src/cgroup/parent.c: the cgroup parent of cgroupsPath and its cpuset, on fake
 * trees. */
#include <errno.h>
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
#include "cgroup/cgroup.h"
#include "util/cleanup.h"

static const struct {
	const char *path;
	bool systemd;
	int want_ret;
	const char *want; /* or the message */
} parent_rows[] = {
	{"/kubepods/burstable/pod1/c1", false, 0, "/kubepods/burstable/pod1"},
	{"/kubepods/c1/", false, 0, "/kubepods"},
	{"/c1", false, 0, "/"},
	{NULL, false, 0, "/"},
	{"kubepods/c1", false, 0, "/kubepods"},
	/* cleaned as runc cleans it (helper-7: "/../../../../tmp/x/p/c" read the
	 * cpuset of /tmp/x/p, outside the hierarchy) */
	{"/../../../../tmp/x/p/c", false, 0, "/tmp/x/p"},
	{"/kubepods/../c1", false, 0, "/"},
	{"../x//./c", false, 0, "/x"},
	{"/kubepods/./pod1/../pod2/c1", false, 0, "/kubepods/pod2"},
	{"kubepods-burstable-pod1.slice:cri-containerd:abc", true, 0,
	 "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice"},
	{"kubepods.slice:cri-containerd:abc", true, 0, "/kubepods.slice"},
	{"-.slice:p:n", true, 0, "/"},
	{":p:n", true, 0, "/"},
	{NULL, true, 0, "/system.slice"},
	{"machine.slice:libpod", true, -EINVAL,
	 "'/linux/cgroupsPath': not a systemd slice:prefix:name 'machine.slice:libpod'"},
	{"kubepods:cri:x", true, -EINVAL,
	 "'/linux/cgroupsPath': not a systemd slice:prefix:name 'kubepods:cri:x'"},
	{"a--b.slice:p:n", true, -EINVAL,
	 "'/linux/cgroupsPath': not a systemd slice:prefix:name 'a--b.slice:p:n'"},
};

static void test_parent_of(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(parent_rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *got = NULL;
		int r = ts_cgroup_parent_of(parent_rows[i].path, parent_rows[i].systemd, &got,
					    &err);

		if (r != parent_rows[i].want_ret)
			fail_msg("row %zu: ret %d", i, r);
		if (strcmp(r < 0 ? err->msg : got, parent_rows[i].want) != 0)
			fail_msg("row %zu: '%s'", i, r < 0 ? err->msg : got);
	}
}

static void put(const char *dir, const char *file, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p != '\0'; p++)
		if (*p == '/') {
			*p = '\0';
			(void)mkdir(path, 0755);
			*p = '/';
		}
	(void)mkdir(path, 0755);
}

/* A hybrid (v1 cpuset) tree: root 0-3, kubepods 1-3, an empty v1 cpuset
 * (not set up yet) below it; and a unified one: kubepods.slice 2-3. */
static void test_parent_cpuset(void **state)
{
	char root[] = "/tmp/ts-parent.XXXXXX";
	char dir[600];
	struct ts_cgroup_parent p = {0};
	cleanup_error struct ts_error *err = NULL;

	assert_non_null(mkdtemp(root));
	mkdirs(root, "cpuset/kubepods/burstable");
	snprintf(dir, sizeof(dir), "%s/cpuset", root);
	put(dir, "cpuset.effective_cpus", "0-3\n");
	put(dir, "cpuset.effective_mems", "0-1\n");
	snprintf(dir, sizeof(dir), "%s/cpuset/kubepods", root);
	put(dir, "cpuset.effective_cpus", "1-3\n");
	put(dir, "cpuset.effective_mems", "1\n");
	snprintf(dir, sizeof(dir), "%s/cpuset/kubepods/burstable", root);
	put(dir, "cpuset.effective_cpus", "\n");
	put(dir, "cpuset.effective_mems", "\n");

	/* the pod's cgroup does not exist yet; burstable has no cpuset yet */
	assert_int_equal(ts_cgroup_parent_cpuset(root, TS_CGROUP_MODE_HYBRID,
						 "/kubepods/burstable/pod1/c1", false, &p, &err),
			 1);
	assert_string_equal(p.path, "/kubepods/burstable/pod1");
	assert_string_equal(p.existing, "/kubepods");
	assert_string_equal(p.cpus_str, "1-3");
	assert_string_equal(p.mems_str, "1");
	ts_cgroup_parent_release(&p);
	assert_int_equal(
		ts_cgroup_parent_cpuset(root, TS_CGROUP_MODE_LEGACY, "/c1", false, &p, &err), 1);
	assert_string_equal(p.existing, "/");
	assert_string_equal(p.cpus_str, "0-3");
	ts_cgroup_parent_release(&p);

	/* ".." never leaves the hierarchy: not the cpuset of <root>/outside/p */
	mkdirs(root, "outside/p");
	snprintf(dir, sizeof(dir), "%s/outside/p", root);
	put(dir, "cpuset.effective_cpus", "1\n");
	put(dir, "cpuset.effective_mems", "0\n");
	assert_int_equal(ts_cgroup_parent_cpuset(root, TS_CGROUP_MODE_HYBRID, "/../outside/p/c",
						 false, &p, &err),
			 1);
	assert_string_equal(p.path, "/outside/p");
	assert_string_equal(p.existing, "/");
	assert_string_equal(p.cpus_str, "0-3");
	ts_cgroup_parent_release(&p);

	/* a running container's cgroup, as /proc/<pid>/cgroup and as runc's
	 * state name it: the same parent */
	snprintf(dir, sizeof(dir), "%s/cpuset/kubepods/burstable/c2", root);
	assert_int_equal(ts_cgroup_parent_of_running(root, TS_CGROUP_MODE_HYBRID, dir, &p, &err),
			 1);
	assert_string_equal(p.path, "/kubepods/burstable");
	assert_string_equal(p.existing, "/kubepods");
	assert_string_equal(p.cpus_str, "1-3");
	ts_cgroup_parent_release(&p);
	assert_int_equal(ts_cgroup_parent_of_running(root, TS_CGROUP_MODE_HYBRID,
						     "/kubepods/burstable/c2", &p, &err),
			 1);
	assert_string_equal(p.path, "/kubepods/burstable");
	assert_string_equal(p.cpus_str, "1-3");
	ts_cgroup_parent_release(&p);

	/* unified: the slice path, v2 file names */
	mkdirs(root, "kubepods.slice/kubepods-besteffort.slice");
	snprintf(dir, sizeof(dir), "%s/kubepods.slice", root);
	put(dir, "cpuset.cpus.effective", "2-3\n");
	put(dir, "cpuset.mems.effective", "0\n");
	assert_int_equal(ts_cgroup_parent_cpuset(root, TS_CGROUP_MODE_UNIFIED,
						 "kubepods-besteffort-pod2.slice:cri-containerd:x",
						 true, &p, &err),
			 1);
	assert_string_equal(p.path, "/kubepods.slice/kubepods-besteffort.slice/"
				    "kubepods-besteffort-pod2.slice");
	assert_string_equal(p.existing, "/kubepods.slice");
	assert_string_equal(p.cpus_str, "2-3");
	assert_string_equal(p.mems_str, "0");
	ts_cgroup_parent_release(&p);

	/* a bad value is an error naming the file */
	put(dir, "cpuset.cpus.effective", "2-x\n");
	assert_int_equal(ts_cgroup_parent_cpuset(root, TS_CGROUP_MODE_UNIFIED,
						 "kubepods.slice:cri-containerd:x", true, &p, &err),
			 -EINVAL);
	snprintf(dir, sizeof(dir),
		 "%s: kubepods.slice/cpuset.cpus.effective: invalid cpu list '2-x'", root);
	assert_string_equal(err->msg, dir);
	ts_error_clear(&err);

	/* no cpuset controller at all: nothing narrows the container */
	assert_int_equal(ts_cgroup_parent_cpuset("/nonexistent-ts-root", TS_CGROUP_MODE_HYBRID,
						 "/kubepods/c1", false, &p, &err),
			 0);
	assert_null(err);
	{
		char cmd[700];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parent_of),
		cmocka_unit_test(test_parent_cpuset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
