/*
 * Unit tests of src/cgroup/resize.c on fake trees: a fake cgroupfs where the
 * test writes cpuset.cpus.effective to play the kernel, a fake /proc for
 * liveness, and a fake runtime script that records its argv.
 */
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

#include "cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static char tmp[] = "/tmp/ts-cgroup-resize-XXXXXX";

static void mkdirs(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	for (char *p = path + strlen(tmp) + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		(void)mkdir(path, 0755);
		*p = '/';
	}
	(void)mkdir(path, 0755);
}

static void put(const char *rel, const char *content)
{
	char path[512];
	cleanup_error struct ts_error *e = NULL;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	if (ts_write_file_atomic_at(AT_FDCWD, path, content, strlen(content), 0755, &e) < 0)
		fail_msg("%s", e->msg);
}

static char *get(const char *rel)
{
	char path[512];
	char *buf = NULL;
	cleanup_error struct ts_error *e = NULL;

	snprintf(path, sizeof(path), "%s/%s", tmp, rel);
	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &e) < 0)
		fail_msg("%s", e->msg);
	return buf;
}

static void fake_container(const char *rel, const char *cpus, const char *effective)
{
	char f[256];

	mkdirs(rel);
	snprintf(f, sizeof(f), "%s/cgroup.controllers", rel);
	put(f, "cpuset cpu io memory pids\n");
	snprintf(f, sizeof(f), "%s/cpuset.cpus", rel);
	put(f, cpus);
	snprintf(f, sizeof(f), "%s/cpuset.mems", rel);
	put(f, "0\n");
	snprintf(f, sizeof(f), "%s/cpuset.cpus.effective", rel);
	put(f, effective);
}

static void fake_stat(int pid, char state, unsigned long start)
{
	char rel[64], line[256];

	snprintf(rel, sizeof(rel), "proc/%d", pid);
	mkdirs(rel);
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(line, sizeof(line),
		 "%d (sleep) x) %c 1 %d %d 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 %lu 1000 0\n", pid,
		 state, pid, pid, start);
	put(rel, line);
}

static int setup(void **state)
{
	(void)state;
	if (mkdtemp(tmp) == NULL)
		return -1;
	mkdirs("cg");
	put("cg/cgroup.subtree_control", "cpuset cpu\n");
	mkdirs("proc");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	return system(cmd) == 0 ? 0 : -1;
}

static void want_result(const struct ts_cgroup_resize_result *r, enum ts_cgroup_resize_status s,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void want_result(const struct ts_cgroup_resize_result *r, enum ts_cgroup_resize_status s,
			const char *fmt, ...)
{
	char want[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	if (r->status != s)
		fail_msg("status %s, want %s (%s)", ts_cgroup_resize_status_to_string(r->status),
			 ts_cgroup_resize_status_to_string(s), r->message ? r->message : "");
	if (want[0] == '\0')
		assert_null(r->message);
	else if (r->message == NULL || strcmp(r->message, want) != 0)
		fail_msg("message\n  got  %s\n  want %s", r->message ? r->message : "(null)", want);
}

static void test_direct(void **state)
{
	char root[256], proc[256];
	cleanup_error struct ts_error *e = NULL;
	struct ts_cgroup_resize_result *res = NULL;

	(void)state;
	snprintf(root, sizeof(root), "%s/cg", tmp);
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	/* The kernel's answer is written beforehand: c1 gets what it asks, c2's parent is narrower.
	 */
	fake_container("cg/kubepods/pod1/c1", "0-7\n", "0-3\n");
	fake_container("cg/kubepods/pod1/c2", "0-7\n", "0-1\n");
	fake_container("cg/kubepods/c7", "\n", "0-3\n");
	mkdirs("cg/kubepods/c8/cpuset.cpus");
	fake_stat(200, 'S', 5555);
	fake_stat(300, 'Z', 5555);
	fake_stat(400, 'S', 5555);
	const struct ts_cgroup_resize_target t[] = {
		{.container_id = "c1",
		 .cgroup_path = "/kubepods/pod1/c1",
		 .cpus_str = "0-3",
		 .mems_str = "0-1"},
		{.container_id = "c2", .cgroup_path = "/kubepods/pod1/c2", .cpus_str = "0-3"},
		{.container_id = "c3", .cgroup_path = "/kubepods/pod1/c3", .cpus_str = "0-3"},
		{.container_id = "c4",
		 .cgroup_path = "/kubepods/pod1/c1",
		 .cpus_str = "0-3",
		 .pid = 100},
		{.container_id = "c5",
		 .cgroup_path = "/kubepods/pod1/c1",
		 .cpus_str = "0-3",
		 .pid = 200,
		 .pid_start_ticks = 4444},
		{.container_id = "c6",
		 .cgroup_path = "/kubepods/pod1/c1",
		 .cpus_str = "0-3",
		 .pid = 300},
		{.container_id = "c7",
		 .cgroup_path = "kubepods//c7/",
		 .cpus_str = "0-3",
		 .pid = 400,
		 .pid_start_ticks = 5555},
		{.container_id = "c8", .cgroup_path = "/kubepods/c8", .cpus_str = "1"},
	};
	const struct ts_cgroup_resize_options opts = {
		.root = root, .mode = TS_CGROUP_MODE_UNIFIED, .proc_root = proc};

	assert_int_equal(ts_cgroup_resize(t, ARRAY_SIZE(t), &opts, &res, &e), 6);
	want_result(&res[0], TS_CGROUP_RESIZE_OK, "%s", "");
	assert_string_equal(res[0].effective_cpus, "0-3");
	assert_false(res[0].via_runtime);
	cleanup_free char *c1_cpus = get("cg/kubepods/pod1/c1/cpuset.cpus");
	cleanup_free char *c1_mems = get("cg/kubepods/pod1/c1/cpuset.mems");
	assert_string_equal(c1_cpus, "0-3\n");
	assert_string_equal(c1_mems, "0-1\n");
	want_result(&res[1], TS_CGROUP_RESIZE_MISMATCH,
		    "container 'c2': '%s/kubepods/pod1/c2/cpuset.cpus.effective': expected '0-3', "
		    "kernel applied '0-1'",
		    root);
	assert_string_equal(res[1].effective_cpus, "0-1");
	cleanup_free char *c2_cpus = get("cg/kubepods/pod1/c2/cpuset.cpus");
	assert_string_equal(c2_cpus, "0-3\n");
	want_result(&res[2], TS_CGROUP_RESIZE_DEAD,
		    "container 'c3': cgroup '%s/kubepods/pod1/c3' is gone", root);
	want_result(&res[3], TS_CGROUP_RESIZE_DEAD, "container 'c4': init pid 100 is gone");
	want_result(&res[4], TS_CGROUP_RESIZE_DEAD,
		    "container 'c5': init pid 200 was reused (start time 5555, recorded 4444)");
	want_result(&res[5], TS_CGROUP_RESIZE_DEAD, "container 'c6': init pid 300 is a zombie");
	/* An empty cpuset.cpus inherits: old = effective = new, so nothing is written. */
	want_result(&res[6], TS_CGROUP_RESIZE_OK, "%s", "");
	cleanup_free char *c7_cpus = get("cg/kubepods/c7/cpuset.cpus");
	assert_string_equal(c7_cpus, "\n");
	want_result(&res[7], TS_CGROUP_RESIZE_FAILED,
		    "container 'c8': '%s/kubepods/c8/cpuset.cpus': cannot read: Is a directory",
		    root);
	ts_cgroup_resize_results_free(res, ARRAY_SIZE(t));
}

static void test_nested_grow(void **state)
{
	char root[256];
	cleanup_error struct ts_error *e = NULL;
	struct ts_cgroup_resize_result *res = NULL;

	(void)state;
	snprintf(root, sizeof(root), "%s/cg", tmp);
	fake_container("cg/pods/p", "0-3\n", "0-7\n");
	fake_container("cg/pods/p/c", "0-3\n", "0-7\n");
	const struct ts_cgroup_resize_target t[] = {
		{.container_id = "c",
		 .cgroup_path = "/pods/p/c",
		 .cpus_str = "0-7",
		 .mems_str = "0"},
		{.container_id = "p", .cgroup_path = "/pods/p", .cpus_str = "0-7", .mems_str = "0"},
	};
	const struct ts_cgroup_resize_options opts = {.root = root, .mode = TS_CGROUP_MODE_UNIFIED};

	assert_int_equal(ts_cgroup_resize(t, ARRAY_SIZE(t), &opts, &res, &e), 0);
	cleanup_free char *p = get("cg/pods/p/cpuset.cpus");
	cleanup_free char *c = get("cg/pods/p/c/cpuset.cpus");
	assert_string_equal(p, "0-7\n");
	assert_string_equal(c, "0-7\n");
	ts_cgroup_resize_results_free(res, ARRAY_SIZE(t));
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text sorted (updates run in parallel: their order in a log
 * is the order they started in, which is not fixed); caller frees. */
static char *sorted_lines(const char *text)
{
	cleanup_free char *copy = strdup(text);
	char *lines[64], *save = NULL, *out;
	size_t n = 0, len = 0;

	assert_non_null(copy);
	for (char *l = strtok_r(copy, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		assert_true(n < 64);
		lines[n++] = l;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	out = calloc(strlen(text) + 2, 1);
	assert_non_null(out);
	for (size_t i = 0; i < n; i++)
		len += (size_t)sprintf(out + len, "%s\n", lines[i]);
	return out;
}

static const char fake_runtime[] =
	"#!/bin/sh\n"
	"printf '%s\\n' \"$*\" >> \"$(dirname \"$0\")/argv.log\"\n"
	"for last; do :; done\n"
	"case \"$last\" in\n"
	"fail) echo 'level=error msg=\"container not running\"' >&2; exit 1 ;;\n"
	"deleted|removing) echo 'level=error msg=\"container does not exist\"' >&2; exit 1 ;;\n"
	"slow) exec sleep 5 ;;\n"
	"esac\n"
	"echo ok\n"
	"exit 0\n";

static void test_runtime_update(void **state)
{
	char rt[256];
	cleanup_error struct ts_error *e = NULL;
	struct ts_cgroup_resize_result *res = NULL;

	(void)state;
	mkdirs("rt");
	put("rt/runc", fake_runtime);
	snprintf(rt, sizeof(rt), "%s/rt/runc", tmp);
	char rtroot[256];
	mkdirs("rt/root");
	mkdirs("rt/root/removing");
	snprintf(rtroot, sizeof(rtroot), "%s/rt/root", tmp);
	const struct ts_cgroup_resize_target t[] = {
		{.container_id = "a",
		 .cgroup_path = "/kubepods/a",
		 .cpus_str = "0-1",
		 .mems_str = "0",
		 .runtime_path = rt,
		 .runtime_root = "/run/r"},
		{.container_id = "fail", .cpus_str = "0-1", .runtime_path = rt},
		{.container_id = "slow", .cpus_str = "0-1", .runtime_path = rt},
		{.container_id = "b", .cpus_str = "2", .runtime_path = rt},
		{.container_id = "nort", .cpus_str = "2", .runtime_path = "/nonexistent/runc"},
		{.container_id = "gone", .cpus_str = "2", .runtime_path = rt, .pid = 100},
		/* runc's answer while a delete removes the state dir's files: gone */
		{.container_id = "removing",
		 .cpus_str = "2",
		 .runtime_path = rt,
		 .runtime_root = rtroot},
		/* deleted by a racing `delete --force` while the update ran: gone */
		{.container_id = "deleted",
		 .cpus_str = "2",
		 .runtime_path = rt,
		 .runtime_root = rtroot},
	};
	char proc[256];
	snprintf(proc, sizeof(proc), "%s/proc", tmp);
	const struct ts_cgroup_resize_options opts = {.root = "/nonexistent",
						      .mode = TS_CGROUP_MODE_HYBRID,
						      .proc_root = proc,
						      .timeout_ms = 300};

	assert_int_equal(ts_cgroup_resize(t, ARRAY_SIZE(t), &opts, &res, &e), 6);
	want_result(&res[0], TS_CGROUP_RESIZE_OK, "%s", "");
	assert_true(res[0].via_runtime);
	assert_null(res[0].effective_cpus);
	want_result(&res[1], TS_CGROUP_RESIZE_FAILED,
		    "container 'fail': '%s update' failed with exit status 1: level=error "
		    "msg=\"container not running\"",
		    rt);
	want_result(&res[2], TS_CGROUP_RESIZE_FAILED,
		    "container 'slow': '%s update' timed out after 300 ms", rt);
	want_result(&res[3], TS_CGROUP_RESIZE_OK, "%s", "");
	want_result(&res[4], TS_CGROUP_RESIZE_FAILED,
		    "container 'nort': cannot execute '/nonexistent/runc'");
	want_result(&res[5], TS_CGROUP_RESIZE_DEAD, "container 'gone': init pid 100 is gone");
	assert_true(res[5].via_runtime);
	want_result(&res[6], TS_CGROUP_RESIZE_DEAD,
		    "container 'removing': deleted while it was resized");
	want_result(&res[7], TS_CGROUP_RESIZE_DEAD,
		    "container 'deleted': deleted while it was resized");
	cleanup_free char *log = get("rt/argv.log");
	cleanup_free char *got = sorted_lines(log);
	cleanup_free char *want = NULL, *want_sorted = NULL;
	assert_true(asprintf(&want,
			     "--root /run/r update --cpuset-cpus 0-1 --cpuset-mems 0 a\n"
			     "update --cpuset-cpus 0-1 fail\n"
			     "update --cpuset-cpus 0-1 slow\n"
			     "update --cpuset-cpus 2 b\n"
			     "--root %s update --cpuset-cpus 2 removing\n"
			     "--root %s update --cpuset-cpus 2 deleted\n",
			     rtroot, rtroot) > 0);
	want_sorted = sorted_lines(want);
	assert_string_equal(got, want_sorted);
	ts_cgroup_resize_results_free(res, ARRAY_SIZE(t));
}

/* Updates run side by side, never more than about one per online cpu
 * (2..8): each fake update logs "+" when it starts and "-" when it ends
 * (an append of one short line is atomic), and the log says how many ran
 * at once. */
static const char counting_runtime[] = "#!/bin/sh\n"
				       "log=\"$(dirname \"$0\")/par.log\"\n"
				       "echo + >> \"$log\"\n"
				       "sleep 0.3\n"
				       "echo - >> \"$log\"\n"
				       "echo ok\n";

static void test_runtime_updates_in_parallel(void **state)
{
	struct ts_cgroup_resize_target t[10];
	char rt[256], ids[10][8];
	cleanup_error struct ts_error *e = NULL;
	struct ts_cgroup_resize_result *res = NULL;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int limit = cpus < 2 ? 2 : cpus > 8 ? 8 : (int)cpus, now = 0, most = 0;

	(void)state;
	mkdirs("par");
	put("par/runc", counting_runtime);
	snprintf(rt, sizeof(rt), "%s/par/runc", tmp);
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(ids[i], sizeof(ids[i]), "c%zu", i);
		t[i] = (struct ts_cgroup_resize_target){
			.container_id = ids[i], .cpus_str = "0", .runtime_path = rt};
	}
	const struct ts_cgroup_resize_options opts = {.root = "/nonexistent",
						      .mode = TS_CGROUP_MODE_HYBRID};

	assert_int_equal(ts_cgroup_resize(t, ARRAY_SIZE(t), &opts, &res, &e), 0);
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		want_result(&res[i], TS_CGROUP_RESIZE_OK, "%s", "");
	cleanup_free char *log = get("par/par.log");
	for (const char *c = log; *c != '\0'; c++) {
		if (*c == '+')
			now++;
		else if (*c == '-')
			now--;
		if (now > most)
			most = now;
	}
	assert_int_equal(now, 0);
	assert_int_equal(strlen(log), 2 * 2 * ARRAY_SIZE(t));
	/* 0.3 s each: the next starts only when one ends */
	assert_int_equal(most, limit);
	ts_cgroup_resize_results_free(res, ARRAY_SIZE(t));
}

static void test_systemd_on_unified(void **state)
{
	char rt[256];
	cleanup_error struct ts_error *e = NULL;
	struct ts_cgroup_resize_result *res = NULL;

	(void)state;
	snprintf(rt, sizeof(rt), "%s/rt/runc", tmp);
	put("rt/argv.log", "");
	const struct ts_cgroup_resize_target t[] = {
		{.container_id = "s",
		 .cgroup_path = "/system.slice/toposhim-s.scope",
		 .cpus_str = "3",
		 .runtime_path = rt},
		{.container_id = "d",
		 .cgroup_path = "/kubepods/d",
		 .cpus_str = "3",
		 .runtime_path = rt,
		 .driver = TS_CGROUP_DRIVER_SYSTEMD},
	};
	const struct ts_cgroup_resize_options opts = {.root = "/nonexistent",
						      .mode = TS_CGROUP_MODE_UNIFIED};

	assert_int_equal(ts_cgroup_resize(t, ARRAY_SIZE(t), &opts, &res, &e), 0);
	assert_true(res[0].via_runtime);
	assert_true(res[1].via_runtime);
	cleanup_free char *log = get("rt/argv.log");
	cleanup_free char *got = sorted_lines(log);
	assert_string_equal(got, "update --cpuset-cpus 3 d\nupdate --cpuset-cpus 3 s\n");
	ts_cgroup_resize_results_free(res, ARRAY_SIZE(t));
}

static void test_errors(void **state)
{
	static const struct {
		struct ts_cgroup_resize_target t;
		enum ts_cgroup_mode mode;
		const char *root;
		int want_ret;
		const char *want;
	} rows[] = {
		{{.container_id = "x", .cgroup_path = "/a/../b", .cpus_str = "1"},
		 TS_CGROUP_MODE_UNIFIED,
		 "/sys/fs/cgroup",
		 -EINVAL,
		 "resize: container 'x': invalid cgroup path '/a/../b'"},
		{{.container_id = "x", .cgroup_path = "/", .cpus_str = "1"},
		 TS_CGROUP_MODE_UNIFIED,
		 "/sys/fs/cgroup",
		 -EINVAL,
		 "resize: container 'x': invalid cgroup path '/'"},
		{{.container_id = "x", .cgroup_path = "/a", .cpus_str = "1-x"},
		 TS_CGROUP_MODE_UNIFIED,
		 "/sys/fs/cgroup",
		 -EINVAL,
		 "resize: container 'x': invalid cpu list '1-x'"},
		{{.container_id = "x", .cgroup_path = "/a", .mems_str = ","},
		 TS_CGROUP_MODE_UNIFIED,
		 "/sys/fs/cgroup",
		 -EINVAL,
		 "resize: container 'x': invalid mems list ','"},
		{{.container_id = "x", .cpus_str = "1"},
		 TS_CGROUP_MODE_LEGACY,
		 "/sys/fs/cgroup",
		 -EINVAL,
		 "resize: container 'x': no runtime for update"},
		{{.container_id = "x", .cpus_str = "1"},
		 TS_CGROUP_MODE_INVALID,
		 "/sys/fs/cgroup",
		 -EINVAL,
		 "resize: invalid cgroup mode"},
		{{.container_id = "x", .cgroup_path = "/a", .cpus_str = "1"},
		 TS_CGROUP_MODE_UNIFIED,
		 "/nonexistent-root",
		 -ENOENT,
		 "/nonexistent-root: cannot open"},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *e = NULL;
		struct ts_cgroup_resize_result *res = (struct ts_cgroup_resize_result *)1;
		const struct ts_cgroup_resize_options opts = {.root = rows[i].root,
							      .mode = rows[i].mode};
		int r = ts_cgroup_resize(&rows[i].t, 1, &opts, &res, &e);
		if (r != rows[i].want_ret)
			fail_msg("row %zu: ret %d, want %d", i, r, rows[i].want_ret);
		assert_string_equal(e->msg, rows[i].want);
		assert_ptr_equal(res, (struct ts_cgroup_resize_result *)1);
	}
	assert_string_equal(ts_cgroup_resize_status_to_string(TS_CGROUP_RESIZE_MISMATCH),
			    "mismatch");
	assert_null(ts_cgroup_resize_status_to_string(_TS_CGROUP_RESIZE_STATUS_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_direct),
		cmocka_unit_test(test_nested_grow),
		cmocka_unit_test(test_runtime_update),
		cmocka_unit_test(test_runtime_updates_in_parallel),
		cmocka_unit_test(test_systemd_on_unified),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
