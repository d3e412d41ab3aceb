/*
 * The garbage collection against a create that finishes while it looks
 * (issue 17): the runtime makes <root>/<id> and exits between the two
 * checks of ts_state_alloc_is_stale().  Built with the test points
 * (libtoposhim-test.la): the callback at "gc-between-pid-and-dir" plays the
 * runtime, turning the recorded process into a zombie and making its dir.
 * Checking the dir before the process lost such records; the order the
 * checks now have keeps them.
 */
#include <errno.h>
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
#include "util/testpoint.h"
#include "helpers.h"

#define SEC 1000000ull

struct race {
	const char *proc;
	const char *runtime;
	const char *id;
	int pid;
	unsigned hits;
};

/* The runtime finishes its create: <root>/<id> appears, the process exits. */
static void runtime_finishes(const char *name, void *data)
{
	struct race *r = data;
	char dir[4096];

	if (strcmp(name, "gc-between-pid-and-dir") != 0)
		return;
	r->hits++;
	snprintf(dir, sizeof(dir), "%s/%s", r->runtime, r->id);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(th_fake_proc(r->proc, r->pid, "runc", 'Z', 5000), 0);
}

static void test_gc_race(void **state)
{
	static const struct {
		const char *id;
		int pid;
		char st; /* the process as the GC first sees it */
	} cases[] = {
		/* still running when looked at: kept, whatever happens next */
		{"running", 300, 'S'},
		/* already a zombie: its dir, made before it exited, is found */
		{"exited", 301, 'Z'},
	};
	cleanup_free char *top = th_tmpdir("gcrace");
	cleanup_free char *proc = NULL, *runtime = NULL, *sdir = NULL;
	const uint64_t now = 1700000000ull * SEC;

	assert_non_null(top);
	assert_true(asprintf(&proc, "%s/proc", top) > 0);
	assert_true(asprintf(&runtime, "%s/runc", top) > 0);
	assert_true(asprintf(&sdir, "%s/state", top) > 0);
	assert_int_equal(mkdir(proc, 0755), 0);
	assert_int_equal(mkdir(runtime, 0700), 0);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_state struct ts_state *s = NULL;
		struct ts_state_options opts = {.state_dir = sdir, .proc_root = proc};
		struct ts_alloc **got = NULL;
		struct ts_alloc *a;
		size_t n = 99;
		struct race r = {proc, runtime, cases[i].id, cases[i].pid, 0};

		assert_int_equal(th_fake_proc(proc, cases[i].pid, "runc", cases[i].st, 5000), 0);
		assert_int_equal(ts_state_open(&opts, &s, &err), 0);
		a = ts_alloc_new(cases[i].id, &err);
		assert_non_null(a);
		a->runtime_root = strdup(runtime);
		a->pid = cases[i].pid;
		a->pid_start_ticks = 5000;
		assert_int_equal(ts_state_put(s, a, &err), 0);

		ts_test_point_set(runtime_finishes, &r);
		assert_int_equal(ts_state_gc(s, now, 60 * SEC, &got, &n, &err), 0);
		ts_test_point_set(NULL, NULL);
		if (n != 0)
			fail_msg("%s: collected although its runtime dir exists", cases[i].id);
		assert_int_equal(ts_state_count(s), 1);
		/* the zombie is looked at only once it is one */
		assert_int_equal(r.hits, cases[i].st == 'Z' ? 1 : 0);
	}
	th_rm_rf(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gc_race),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
