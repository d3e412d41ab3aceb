/* Unit tests of src/state/proc.c and ts_state_gc(): procfs parsing and staleness. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "state/state.h"
#include "util/cleanup.h"
#include "helpers.h"

#define SEC 1000000ull

static void test_start_ticks_fake(void **state)
{
	cleanup_free char *proc = th_tmpdir("proc");
	cleanup_error struct ts_error *err = NULL;
	uint64_t ticks = 0;
	bool alive = false;

	assert_non_null(proc);
	/* a comm with spaces and a ')' must not shift the fields */
	assert_int_equal(th_fake_proc(proc, 4242, "we ird) (x", 'S', 987654), 0);
	assert_int_equal(ts_state_proc_start_ticks(proc, 4242, &ticks, &alive, &err), 0);
	assert_int_equal(ticks, 987654);
	assert_true(alive);
	assert_int_equal(th_fake_proc(proc, 4243, "sh", 'Z', 11), 0);
	assert_int_equal(ts_state_proc_start_ticks(proc, 4243, &ticks, &alive, &err), 0);
	assert_int_equal(ticks, 11);
	assert_false(alive);
	th_rm_rf(proc);
}

static void test_start_ticks_errors(void **state)
{
	cleanup_free char *proc = th_tmpdir("proc");
	cleanup_free char *want = NULL;
	cleanup_error struct ts_error *err = NULL;
	uint64_t ticks = 0;

	assert_non_null(proc);
	assert_int_equal(ts_state_proc_start_ticks(proc, 77, &ticks, NULL, &err), -ENOENT);
	assert_true(asprintf(&want, "%s/77/stat: cannot open", proc) > 0);
	assert_string_equal(err->msg, want);
	ts_error_clear(&err);
	free(TAKE_PTR(want));

	assert_int_equal(th_write(proc, "78/stat", "78 (sh) S 1 2 3\n"), 0);
	assert_int_equal(ts_state_proc_start_ticks(proc, 78, &ticks, NULL, &err), -EINVAL);
	assert_true(asprintf(&want, "%s/78/stat: cannot parse '78 (sh) S 1 2 3'", proc) > 0);
	assert_string_equal(err->msg, want);
	assert_int_equal(ticks, 0);
	ts_error_clear(&err);
	free(TAKE_PTR(want));

	/* 4096 bytes without a newline: not procfs, never read past 2047 */
	{
		char big[4097];

		memset(big, '7', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(th_write(proc, "79/stat", big), 0);
		assert_int_equal(ts_state_proc_start_ticks(proc, 79, &ticks, NULL, &err), -EINVAL);
		assert_non_null(strstr(err->msg, "/79/stat: cannot parse '777"));
		assert_int_equal(strlen(strstr(err->msg, "'")), 2047 + 2);
	}
	th_rm_rf(proc);
}

static void test_start_ticks_self(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_fclose FILE *f = fopen("/proc/self/stat", "re");
	unsigned long long want = 0;
	uint64_t ticks = 0;
	bool alive = false;
	char line[1024];
	char *p;

	/* compare with an independent sscanf of our own stat (comm is "test-gc") */
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	p = strrchr(line, ')');
	assert_non_null(p);
	assert_int_equal(sscanf(p + 2,
				"%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
				"%*d %*d %*d %*d %*d %llu",
				&want),
			 1);
	assert_int_equal(ts_state_proc_start_ticks(NULL, getpid(), &ticks, &alive, &err), 0);
	assert_int_equal(ticks, want);
	assert_true(alive);
}

static void test_cgroup_lines(void **state)
{
	cleanup_free char *proc = th_tmpdir("proc");
	cleanup_free char *want = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *path = NULL;

	assert_non_null(proc);
	/* cgroup v2 */
	assert_int_equal(th_write(proc, "10/cgroup", "0::/system.slice/ctr-a.scope\n"), 0);
	assert_int_equal(ts_state_proc_cgroup(proc, 10, &path, &err), 0);
	assert_string_equal(path, "/system.slice/ctr-a.scope");
	free(path);
	/* hybrid: the cpuset line wins over "0::", wherever it is */
	assert_int_equal(
		th_write(proc, "11/cgroup",
			 "12:pids:/default/b\n0::/default/b-unified\n"
			 "5:cpu,cpuset,cpuacct:/default/b:with:colons\n1:name=systemd:/x\n"),
		0);
	assert_int_equal(ts_state_proc_cgroup(proc, 11, &path, &err), 0);
	assert_string_equal(path, "/default/b:with:colons");
	free(path);
	/* "cpusetx" is not "cpuset" */
	assert_int_equal(th_write(proc, "12/cgroup", "3:cpusetx:/a\n"), 0);
	assert_int_equal(ts_state_proc_cgroup(proc, 12, &path, &err), -ENODATA);
	assert_true(asprintf(&want, "%s/12/cgroup: no cpuset or '0::' line", proc) > 0);
	assert_string_equal(err->msg, want);
	ts_error_clear(&err);
	assert_int_equal(ts_state_proc_cgroup(proc, 13, &path, &err), -ENOENT);
	th_rm_rf(proc);
}

/* A record with the given pid/start (pid 0: none), state and age. */
static struct ts_alloc *mk(const char *id, const char *root, pid_t pid, uint64_t start,
			   enum ts_alloc_status st, uint64_t created)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_alloc *a = ts_alloc_new(id, &err);

	assert_non_null(a);
	a->runtime_root = strdup(root);
	assert_non_null(a->runtime_root);
	a->pid = pid;
	a->pid_start_ticks = start;
	a->status = st;
	a->created_usec = created;
	return a;
}

static void test_gc_cases(void **state)
{
	cleanup_free char *top = th_tmpdir("gc");
	cleanup_free char *proc = NULL, *runtime = NULL, *sdir = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_alloc **got = NULL;
	const uint64_t now = 1700000000ull * SEC;
	const uint64_t grace = 60 * SEC;
	size_t n = 99;
	struct ts_state_options opts = {0};
	static const char *const kept[] = {"alive",
					   "garbled-stat",
					   "creating-in-grace",
					   "creating-late-but-runtime-dir",
					   "clock-went-back",
					   "learned-running"};
	/* an exited init is gone although its runtime state stays until the
	 * engine deletes it (kubelet keeps exited containers) */
	static const char *const gone[] = {"dead",   "restarted",     "dead-but-runtime-dir",
					   "zombie", "creating-late", "learned-exited"};

	assert_non_null(top);
	assert_true(asprintf(&proc, "%s/proc", top) > 0);
	assert_true(asprintf(&runtime, "%s/runc", top) > 0);
	assert_true(asprintf(&sdir, "%s/state", top) > 0);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(runtime, 0700), 0);
	assert_int_equal(th_fake_proc(proc, 100, "sh", 'S', 5000), 0);
	assert_int_equal(th_fake_proc(proc, 102, "sh", 'S', 7000), 0);
	assert_int_equal(th_fake_proc(proc, 104, "sh", 'Z', 5000), 0);
	assert_int_equal(th_write(proc, "105/stat", "garbage\n"), 0);
	assert_int_equal(th_write(runtime, "dead-but-runtime-dir/state.json", "{}"), 0);
	assert_int_equal(th_write(runtime, "creating-late-but-runtime-dir/state.json", "{}"), 0);
	/* runc's state of two containers whose create is over: one runs
	 * (pid 100, start 5000), one has exited (pid 101 is gone) */
	assert_int_equal(th_write(runtime, "learned-running/state.json",
				  "{\"init_process_pid\": 100, \"init_process_start\": 5000}"),
			 0);
	assert_int_equal(th_write(runtime, "learned-exited/state.json",
				  "{\"init_process_pid\": 101, \"init_process_start\": 5000}"),
			 0);

	opts.state_dir = sdir;
	opts.proc_root = proc;
	assert_int_equal(ts_state_open(&opts, &s, &err), 0);
	assert_string_equal(ts_state_proc_root(s), proc);
	assert_string_equal(ts_state_dir(s), sdir);
	/* insertion order is the order of the collected list */
	assert_int_equal(
		ts_state_put(s, mk("alive", runtime, 100, 5000, TS_ALLOC_CREATED, 1), &err), 0);
	assert_int_equal(ts_state_put(s, mk("dead", runtime, 101, 5000, TS_ALLOC_CREATED, 1), &err),
			 0);
	assert_int_equal(
		ts_state_put(s, mk("restarted", runtime, 102, 5000, TS_ALLOC_CREATED, 1), &err), 0);
	assert_int_equal(
		ts_state_put(s, mk("dead-but-runtime-dir", runtime, 103, 5000, TS_ALLOC_CREATED, 1),
			     &err),
		0);
	assert_int_equal(
		ts_state_put(s, mk("zombie", runtime, 104, 5000, TS_ALLOC_CREATED, 1), &err), 0);
	assert_int_equal(
		ts_state_put(s, mk("garbled-stat", runtime, 105, 5000, TS_ALLOC_CREATED, 1), &err),
		0);
	assert_int_equal(ts_state_put(s,
				      mk("creating-in-grace", runtime, 0, 0, TS_ALLOC_CREATING,
					 now - 59 * SEC),
				      &err),
			 0);
	assert_int_equal(
		ts_state_put(s,
			     mk("creating-late", runtime, 0, 0, TS_ALLOC_CREATING, now - 61 * SEC),
			     &err),
		0);
	assert_int_equal(ts_state_put(s,
				      mk("creating-late-but-runtime-dir", runtime, 0, 0,
					 TS_ALLOC_CREATING, now - 3600 * SEC),
				      &err),
			 0);
	assert_int_equal(ts_state_put(s,
				      mk("clock-went-back", runtime, 0, 0, TS_ALLOC_CREATING,
					 now + 3600 * SEC),
				      &err),
			 0);

	assert_int_equal(ts_state_put(s,
				      mk("learned-running", runtime, 0, 0, TS_ALLOC_CREATING,
					 now - 3600 * SEC),
				      &err),
			 0);
	assert_int_equal(
		ts_state_put(s,
			     mk("learned-exited", runtime, 0, 0, TS_ALLOC_CREATING, now - 1 * SEC),
			     &err),
		0);

	assert_int_equal(ts_state_gc(s, now, grace, &got, &n, &err), 0);
	assert_null(err);
	{
		const struct ts_alloc *l = ts_state_find(s, runtime, "learned-running");

		assert_non_null(l);
		assert_int_equal(l->status, TS_ALLOC_CREATED);
		assert_int_equal(l->pid, 100);
		assert_int_equal(l->pid_start_ticks, 5000);
	}
	assert_int_equal(n, ARRAY_SIZE(gone));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got[i]->container_id, gone[i]);
	assert_int_equal(ts_state_count(s), ARRAY_SIZE(kept));
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++)
		assert_string_equal(ts_state_at(s, i)->container_id, kept[i]);
	ts_alloc_array_free(got, n);

	/* nothing left to collect: NULL and 0 */
	assert_int_equal(ts_state_gc(s, now, grace, &got, &n, &err), 0);
	assert_null(got);
	assert_int_equal(n, 0);
	s = ts_state_close(s);
	th_rm_rf(top);
}

/* A runc or crun dir without the runtime's state file is a create that
 * died (a killed runc leaves exec.fifo alone; the runtime says the
 * container does not exist): collected, not kept "created" for as long as
 * the dir stays (helper-22: it held an exclusive CPU for good).  Another
 * runtime's dir, whose layout toposhim does not know, still keeps its
 * record. */
static void test_gc_dir_without_state(void **state)
{
	cleanup_free char *top = th_tmpdir("gc-half");
	cleanup_free char *proc = NULL, *runtime = NULL, *sdir = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_alloc **got = NULL;
	const uint64_t now = 1700000000ull * SEC;
	const uint64_t grace = 60 * SEC;
	size_t n = 99;
	struct ts_state_options opts = {0};
	static const struct {
		const char *id, *runtime, *file;
		pid_t pid;
		enum ts_alloc_status status;
		uint64_t age;
	} recs[] = {
		/* the creates (pids 106-110, all gone) left these dirs */
		{"runc-half", "/usr/sbin/runc", "exec.fifo", 106, TS_ALLOC_CREATING, 1},
		{"crun-half", "/usr/bin/crun", "config.json", 107, TS_ALLOC_CREATING, 1},
		{"other-runtime", "/opt/bin/kata-runtime", "exec.fifo", 108, TS_ALLOC_CREATING, 1},
		{"runc-state-unreadable", "/usr/sbin/runc", "state.json", 109, TS_ALLOC_CREATING,
		 1},
		{"crun-status-unreadable", "/usr/bin/crun", "status", 110, TS_ALLOC_CREATING, 1},
		/* recorded "created" with no pid by an earlier toposhim */
		{"runc-nopid-old", "/usr/sbin/runc", "exec.fifo", 0, TS_ALLOC_CREATED, 61},
		{"runc-nopid-young", "/usr/sbin/runc", "exec.fifo", 0, TS_ALLOC_CREATED, 1},
	};
	static const char *const gone[] = {"runc-half", "crun-half", "runc-nopid-old"};
	static const char *const kept[] = {"other-runtime", "runc-state-unreadable",
					   "crun-status-unreadable", "runc-nopid-young"};

	assert_non_null(top);
	assert_true(asprintf(&proc, "%s/proc", top) > 0);
	assert_true(asprintf(&runtime, "%s/runc", top) > 0);
	assert_true(asprintf(&sdir, "%s/state", top) > 0);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(runtime, 0700), 0);
	opts.state_dir = sdir;
	opts.proc_root = proc;
	assert_int_equal(ts_state_open(&opts, &s, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(recs); i++) {
		cleanup_free char *file = NULL;
		struct ts_alloc *a = mk(recs[i].id, runtime, recs[i].pid, 5000, recs[i].status,
					now - recs[i].age * SEC);

		a->runtime_path = strdup(recs[i].runtime);
		assert_true(asprintf(&file, "%s/%s", recs[i].id, recs[i].file) > 0);
		assert_int_equal(th_write(runtime, file, "{}"), 0);
		assert_int_equal(ts_state_put(s, a, &err), 0);
	}
	assert_int_equal(ts_state_gc(s, now, grace, &got, &n, &err), 0);
	assert_int_equal(n, ARRAY_SIZE(gone));
	for (size_t i = 0; i < n; i++)
		assert_string_equal(got[i]->container_id, gone[i]);
	ts_alloc_array_free(got, n);
	assert_int_equal(ts_state_count(s), ARRAY_SIZE(kept));
	for (size_t i = 0; i < ARRAY_SIZE(kept); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);

		assert_string_equal(a->container_id, kept[i]);
		/* learned: the create is over, its dir stays */
		assert_int_equal(a->status, TS_ALLOC_CREATED);
		assert_int_equal(a->pid, 0);
	}
	s = ts_state_close(s);
	th_rm_rf(top);
}

/* A runtime root holding 16 or more records is listed once instead of
 * stat'ed for each (ts_state_mark_stale()): the answers must be those of
 * the stat, whatever the entry is. */
static void test_gc_listed_root(void **state)
{
	cleanup_free char *top = th_tmpdir("gclist");
	cleanup_free char *proc = NULL, *runtime = NULL, *few = NULL, *gone_root = NULL;
	cleanup_free char *sdir = NULL, *target = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_alloc **got = NULL;
	const uint64_t now = 1700000000ull * SEC;
	size_t n = 0, n_kept = 0, n_gone = 0;
	char *kept[64], *gone[64];
	struct ts_state_options opts = {0};

	assert_non_null(top);
	assert_true(asprintf(&proc, "%s/proc", top) > 0);
	assert_true(asprintf(&runtime, "%s/runc", top) > 0);
	assert_true(asprintf(&few, "%s/crun", top) > 0);
	assert_true(asprintf(&gone_root, "%s/absent", top) > 0);
	assert_true(asprintf(&sdir, "%s/state", top) > 0);
	assert_true(asprintf(&target, "%s/elsewhere", top) > 0);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(runtime, 0700), 0);
	assert_int_equal(mkdir(few, 0700), 0);
	assert_int_equal(mkdir(target, 0700), 0);
	opts.state_dir = sdir;
	opts.proc_root = proc;
	assert_int_equal(ts_state_open(&opts, &s, &err), 0);
	/* 40 "created" records without a pid in one root (listed), their
	 * entries by i % 5: a dir (kept), a plain file (gone), a symlink to a
	 * dir (kept: stat'ed), nothing (gone), a dangling symlink (gone);
	 * the same five in a root of 5 records (stat'ed one by one); and 20
	 * records in a root that does not exist (all gone) */
	for (int i = 0; i < 65; i++) {
		const char *root = i < 40 ? runtime : i < 45 ? few : gone_root;
		char id[32], path[4096];
		bool keep = i < 45 && (i % 5 == 0 || i % 5 == 2);

		snprintf(id, sizeof(id), "c%02d", i);
		snprintf(path, sizeof(path), "%s/%s", root, id);
		if (i < 45 && i % 5 == 0)
			assert_int_equal(mkdir(path, 0700), 0);
		else if (i < 45 && i % 5 == 1)
			assert_int_equal(th_write(root, id, "not a dir"), 0);
		else if (i < 45 && i % 5 == 2)
			assert_int_equal(symlink(target, path), 0);
		else if (i < 45 && i % 5 == 4)
			assert_int_equal(symlink("/nonexistent/toposhim", path), 0);
		assert_int_equal(
			ts_state_put(s, mk(id, root, 0, 0, TS_ALLOC_CREATED, now - 3600 * SEC),
				     &err),
			0);
		if (keep)
			kept[n_kept++] = strdup(id);
		else
			gone[n_gone++] = strdup(id);
	}
	assert_int_equal(ts_state_gc(s, now, 60 * SEC, &got, &n, &err), 0);
	assert_int_equal(n, n_gone);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(got[i]->container_id, gone[i]);
		free(gone[i]);
	}
	assert_int_equal(ts_state_count(s), n_kept);
	for (size_t i = 0; i < n_kept; i++) {
		assert_string_equal(ts_state_at(s, i)->container_id, kept[i]);
		free(kept[i]);
	}
	ts_alloc_array_free(got, n);
	s = ts_state_close(s);
	th_rm_rf(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_ticks_fake),
		cmocka_unit_test(test_start_ticks_errors),
		cmocka_unit_test(test_start_ticks_self),
		cmocka_unit_test(test_cgroup_lines),
		cmocka_unit_test(test_gc_cases),
		cmocka_unit_test(test_gc_dir_without_state),
		cmocka_unit_test(test_gc_listed_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
