/* Unit tests of src/cli/ctl-alloc.c: `toposhimctl alloc list|gc|unpin` output. */
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
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../require.h"
#include "cli/ctl.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "helpers.h"

struct run {
	int status;
	char *out, *err;
};

static void run_release(struct run *r)
{
	free(r->out);
	free(r->err);
}

/* Run ts_ctl_alloc(argv) in a child with stdout/stderr captured. */
static struct run ctl(const char *dir, char **argv)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *out_path = NULL, *err_path = NULL;
	struct run r = {0};
	int argc = 0, status = 0;
	pid_t pid;

	while (argv[argc] != NULL)
		argc++;
	assert_true(asprintf(&out_path, "%s/stdout", dir) > 0);
	assert_true(asprintf(&err_path, "%s/stderr", dir) > 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int rc;

		if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0)
			_exit(99);
		rc = ts_ctl_alloc(argc, argv);
		fflush(stdout);
		fflush(stderr);
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	r.status = WEXITSTATUS(status);
	assert_int_equal(ts_read_file_at(AT_FDCWD, out_path, 0, &r.out, NULL, &err), 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, err_path, 0, &r.err, NULL, &err), 0);
	return r;
}

struct fixture {
	char *top, *sdir, *config, *topology;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->top = th_tmpdir("ctl")) == NULL)
		return -1;
	if (asprintf(&f->sdir, "%s/state", f->top) < 0)
		return -1;
	/* ctl takes the state dir from the environment, as operators do, and
	 * the config from an empty file (defaults) */
	if (setenv("TOPOSHIM_STATE_DIR", f->sdir, 1) < 0 ||
	    asprintf(&f->config, "%s/config.json", f->top) < 0 ||
	    setenv("TOPOSHIM_CONFIG", f->config, 1) < 0 ||
	    th_write(f->top, "config.json", "{}") < 0)
		return -1;
	/* gc grows the shared pool: a fixed topology, not the host's (whose
	 * discovery under valgrind prints a notice on stderr) */
	f->topology = ts_test_fixture_path("topology/4c2t.xml");
	if (setenv("TOPOSHIM_TOPOLOGY_XML", f->topology, 1) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unsetenv("TOPOSHIM_STATE_DIR");
	unsetenv("TOPOSHIM_CONFIG");
	unsetenv("TOPOSHIM_TOPOLOGY_XML");
	th_rm_rf(f->top);
	free(f->top);
	free(f->topology);
	free(f->sdir);
	free(f->config);
	free(f);
	return 0;
}

/* Two records: a live one (this process as init) and one that never got a pid. */
static void put_two(uint64_t ticks)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_alloc *a = ts_alloc_new("web-1", &err);
	struct ts_alloc *b = ts_alloc_new("old", &err);

	assert_non_null(a);
	assert_non_null(b);
	a->class_name = strdup("critical");
	a->cpus_str = strdup("2-3");
	a->mems_str = strdup("0");
	a->devices = calloc(3, sizeof(char *));
	assert_non_null(a->devices);
	a->devices[0] = strdup("nvidia.com/gpu=0");
	a->devices[1] = strdup("nvidia.com/gpu=1");
	a->status = TS_ALLOC_CREATED;
	a->created_usec = 10;
	a->pid = 4242;
	a->pid_start_ticks = ticks;
	b->created_usec = 20;
	assert_int_equal(ts_state_open(NULL, &s, &err), 0);
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_put(s, b, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
}

static void test_list_empty(void **state)
{
	struct fixture *f = *state;
	char *argv[] = {(char *)"alloc", (char *)"list", NULL};
	struct run r = ctl(f->top, argv);
	struct stat st;
	char *want = NULL;

	/* a state dir that does not exist is not created (a typo) */
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_true(asprintf(&want,
			     "toposhimctl: alloc: %s: no state directory: No such file or "
			     "directory\n",
			     f->sdir) > 0);
	assert_string_equal(r.err, want);
	free(want);
	assert_int_equal(stat(f->sdir, &st), -1);
	run_release(&r);

	assert_int_equal(mkdir(f->sdir, 0700), 0);
	r = ctl(f->top, argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
			    "CONTAINER ID  RECORD  CLASS  CPUS  PINNED  MEMS  PID  DEVICES\n");
	assert_string_equal(r.err, "");
	run_release(&r);
}

static void test_list_text_and_json(void **state)
{
	struct fixture *f = *state;
	char *text_argv[] = {(char *)"alloc", (char *)"list", NULL};
	char *json_argv[] = {(char *)"alloc", (char *)"list", (char *)"--json", NULL};
	struct run r;

	put_two(77);
	r = ctl(f->top, text_argv);
	assert_int_equal(r.status, 0);
	/* both are what a create would collect: web-1's init 4242 with start
	 * time 77 is no live process, old never got a pid and is older than
	 * the grace period (helper-7: a 'creating' record of a dead create
	 * looked like one in progress) */
	assert_string_equal(r.out,
			    "CONTAINER ID  RECORD  CLASS     CPUS  PINNED  MEMS  PID   DEVICES\n"
			    "web-1         gone    critical  2-3   no      0     4242  "
			    "nvidia.com/gpu=0,nvidia.com/gpu=1\n"
			    "old           gone    -         -     no      -     -     -\n");
	assert_string_equal(r.err, "");
	run_release(&r);
	r = ctl(f->top, json_argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "[\n"
				   "    {\n"
				   "        \"container_id\": \"web-1\",\n"
				   "        \"class\": \"critical\",\n"
				   "        \"cpus\": \"2-3\",\n"
				   "        \"mems\": \"0\",\n"
				   "        \"devices\": [\n"
				   "            \"nvidia.com/gpu=0\",\n"
				   "            \"nvidia.com/gpu=1\"\n"
				   "        ],\n"
				   "        \"pinned\": false,\n"
				   "        \"numa_exclusive\": false,\n"
				   "        \"state\": \"created\",\n"
				   "        \"created_usec\": 10,\n"
				   "        \"pid\": 4242,\n"
				   "        \"pid_start_ticks\": 77\n"
				   "    },\n"
				   "    {\n"
				   "        \"container_id\": \"old\",\n"
				   "        \"cpus\": \"\",\n"
				   "        \"mems\": \"\",\n"
				   "        \"devices\": [],\n"
				   "        \"pinned\": false,\n"
				   "        \"numa_exclusive\": false,\n"
				   "        \"state\": \"creating\",\n"
				   "        \"created_usec\": 20\n"
				   "    }\n"
				   "]\n");
	run_release(&r);
	/* web-1 made this test's own process, old young again: their states */
	{
		cleanup_error struct ts_error *err = NULL;
		cleanup_state struct ts_state *w = NULL;
		cleanup_free char *want = NULL;
		uint64_t ticks = 0;
		struct ts_alloc *a, *b;

		assert_int_equal(ts_state_proc_start_ticks(NULL, getpid(), &ticks, NULL, &err), 0);
		assert_int_equal(ts_state_open(NULL, &w, &err), 0);
		assert_int_equal(ts_state_load(w, NULL, &err), 0);
		a = ts_alloc_dup(ts_state_find(w, NULL, "web-1"));
		b = ts_alloc_dup(ts_state_find(w, NULL, "old"));
		assert_non_null(a);
		assert_non_null(b);
		a->pid = getpid();
		a->pid_start_ticks = ticks;
		b->created_usec = ts_state_now_usec();
		assert_int_equal(ts_state_put(w, a, &err), 0);
		assert_int_equal(ts_state_put(w, b, &err), 0);
		assert_int_equal(ts_state_commit(w, &err), 0);
		w = ts_state_close(w);
		r = ctl(f->top, text_argv);
		assert_int_equal(r.status, 0);
		assert_true(
			asprintf(&want,
				 "CONTAINER ID  RECORD    CLASS     CPUS  PINNED  MEMS  PID%*s  "
				 "DEVICES\n"
				 "web-1         created   critical  2-3   no      0     %d  "
				 "nvidia.com/gpu=0,nvidia.com/gpu=1\n"
				 "old           creating  -         -     no      -     -%*s  -\n",
				 (int)snprintf(NULL, 0, "%d", getpid()) - 3, "", getpid(),
				 (int)snprintf(NULL, 0, "%d", getpid()) - 1, "") > 0);
		assert_string_equal(r.out, want);
		run_release(&r);
	}
}

static void test_gc(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	char *argv[] = {(char *)"alloc", (char *)"gc", (char *)"--grace", (char *)"5", NULL};
	uint64_t ticks = 0;
	struct run r;

	/* "web-1" is this test's own process (pid and start time rewritten), "old"
	 * is decades past any grace period */
	put_two(0);
	assert_int_equal(ts_state_proc_start_ticks(NULL, getpid(), &ticks, NULL, &err), 0);
	{
		cleanup_state struct ts_state *w = NULL;
		struct ts_alloc *a;

		assert_int_equal(ts_state_open(NULL, &w, &err), 0);
		assert_int_equal(ts_state_load(w, NULL, &err), 0);
		a = ts_alloc_dup(ts_state_find(w, NULL, "web-1"));
		assert_non_null(a);
		a->pid = getpid();
		a->pid_start_ticks = ticks;
		assert_int_equal(ts_state_put(w, a, &err), 0);
		assert_int_equal(ts_state_commit(w, &err), 0);
	}
	r = ctl(f->top, argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "collected old\n");
	assert_string_equal(r.err, "");
	run_release(&r);
	assert_int_equal(ts_state_open(NULL, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	assert_int_equal(ts_state_count(s), 1);
	assert_string_equal(ts_state_at(s, 0)->container_id, "web-1");
}

static void test_config(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *text = NULL, *want = NULL;
	char *gc_argv[] = {(char *)"alloc", (char *)"gc", NULL};
	char *list_argv[] = {(char *)"alloc", (char *)"list", NULL};
	struct run r;

	/* "old" was created at 20 us after the epoch: with a grace period of
	 * 2^63 s it is still young, with the default it is collected */
	put_two(0);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s\", \"gc_grace_seconds\": 9223372036854}",
			     f->sdir) > 0);
	assert_int_equal(th_write(f->top, "config.json", text), 0);
	/* the config names the store when the environment does not */
	assert_int_equal(unsetenv("TOPOSHIM_STATE_DIR"), 0);
	r = ctl(f->top, gc_argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	/* web-1's pid 4242 with start time 0 is no live process: collected */
	assert_string_equal(r.out, "collected web-1\n");
	run_release(&r);
	r = ctl(f->top, list_argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out,
			    "CONTAINER ID  RECORD    CLASS  CPUS  PINNED  MEMS  PID  DEVICES\n"
			    "old           creating  -      -     no      -     -    -\n");
	run_release(&r);
	/* a bad member is an error naming file, field and value */
	assert_int_equal(th_write(f->top, "config.json", "{\"gc_grace_seconds\": -1}"), 0);
	r = ctl(f->top, gc_argv);
	assert_int_equal(r.status, 1);
	assert_true(asprintf(&want,
			     "toposhimctl: alloc: %s: '/gc_grace_seconds': invalid seconds '-1'\n",
			     f->config) > 0);
	assert_string_equal(r.err, want);
	run_release(&r);
}

/* A record of container id under root, with class, cpus and pin. */
static struct ts_alloc *record(const char *id, const char *root, const char *cls, const char *cpus,
			       bool pinned, const char *bundle)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_alloc *a = ts_alloc_new(id, &err);

	assert_non_null(a);
	a->runtime_root = strdup(root);
	a->class_name = strdup(cls);
	a->cpus_str = strdup(cpus);
	a->mems_str = strdup("0");
	a->bundle = bundle != NULL ? strdup(bundle) : NULL;
	a->pinned = pinned;
	a->status = TS_ALLOC_CREATED;
	a->created_usec = 10;
	return a;
}

static void test_unpin(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *bundle = NULL, *placement = NULL, *text = NULL;
	char *std_argv[] = {(char *)"alloc", (char *)"unpin", (char *)"std", NULL};
	char *crit_argv[] = {(char *)"alloc", (char *)"unpin", (char *)"web-1", NULL};
	char *dup_argv[] = {(char *)"alloc", (char *)"unpin", (char *)"dup", NULL};
	char *crit2_argv[] = {(char *)"alloc", (char *)"unpin", (char *)"web-2", NULL};
	char *dup2_argv[] = {(char *)"alloc", (char *)"unpin", (char *)"--root",
			     (char *)"/r2",   (char *)"dup",   NULL};
	char *none_argv[] = {(char *)"alloc", (char *)"unpin", (char *)"nope", NULL};
	struct run r;

	assert_true(asprintf(&bundle, "%s/b", f->top) > 0);
	assert_true(asprintf(&placement,
			     "{\"version\":1,\"id\":\"std\",\"class\":\"standard\",\"cpus\":"
			     "\"0-3\",\"mems\":\"0\",\"cpus_written\":true,\"pinned\":false,"
			     "\"numa_exclusive\":false,\"state_dir\":\"%s\",\"pinned_cpus\":\"1\"}",
			     f->sdir) > 0);
	assert_int_equal(th_write(bundle, "toposhim-placement.json", placement), 0);
	{
		cleanup_state struct ts_state *s = NULL;

		assert_int_equal(ts_state_open(NULL, &s, &err), 0);
		assert_int_equal(
			ts_state_put(s, record("std", "/r1", "standard", "1", true, bundle), &err),
			0);
		assert_int_equal(
			ts_state_put(s, record("web-1", "/r1", "critical", "2", true, NULL), &err),
			0);
		assert_int_equal(
			ts_state_put(s, record("dup", "/r1", "standard", "1", true, NULL), &err),
			0);
		assert_int_equal(
			ts_state_put(s, record("dup", "/r2", "standard", "1", false, NULL), &err),
			0);
		assert_int_equal(
			ts_state_put(s, record("web-2", "/r1", "critical", "3", false, NULL), &err),
			0);
		assert_int_equal(ts_state_commit(s, &err), 0);
	}

	r = ctl(f->top, std_argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "unpinned std\n");
	assert_string_equal(r.err, "");
	run_release(&r);
	{
		cleanup_state struct ts_state *s = NULL;
		const struct ts_alloc *a;

		assert_int_equal(ts_state_open(NULL, &s, &err), 0);
		assert_int_equal(ts_state_load(s, NULL, &err), 0);
		a = ts_state_find(s, "/r1", "std");
		assert_non_null(a);
		assert_false(a->pinned);
		assert_string_equal(a->cpus_str, "1");
	}
	free(placement);
	assert_true(asprintf(&placement, "%s/toposhim-placement.json", bundle) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, placement, 0, &text, NULL, &err), 0);
	assert_null(strstr(text, "pinned_cpus"));
	assert_non_null(strstr(text, "\"pinned\":false"));
	/* the end of the pin is in resizes.log, as its start would be */
	free(TAKE_PTR(text));
	free(placement);
	assert_true(asprintf(&placement, "%s/resizes.log", f->sdir) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, placement, 0, &text, NULL, &err), 0);
	assert_non_null(strstr(text, " pid "));
	assert_non_null(strstr(text, ": container 'std': unpinned (toposhimctl alloc unpin), the "
				     "shared pool resizes it again\n"));
	/* again: nothing to do */
	r = ctl(f->top, std_argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "std is not pinned\n");
	run_release(&r);

	r = ctl(f->top, crit_argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "toposhimctl: alloc unpin: container 'web-1' (class 'critical') "
				   "does not take its cpus from the shared pool: its pin ends with "
				   "its delete\n");
	run_release(&r);
	/* exclusive, pinned or not: an error (helper-15: "not pinned", 0) */
	r = ctl(f->top, crit2_argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "toposhimctl: alloc unpin: container 'web-2' (class 'critical') "
				   "does not take its cpus from the shared pool: its pin ends with "
				   "its delete\n");
	run_release(&r);
	r = ctl(f->top, dup_argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, "toposhimctl: alloc unpin: container 'dup' is recorded under "
				   "several runtime roots ('/r1', '/r2'): name one with --root\n");
	run_release(&r);
	r = ctl(f->top, dup2_argv);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "dup is not pinned\n");
	run_release(&r);
	r = ctl(f->top, none_argv);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, "toposhimctl: alloc unpin: no allocation of container 'nope'\n");
	run_release(&r);
}

static void test_usage_errors(void **state)
{
	static const char usage[] =
		"usage: toposhimctl alloc list [--json] | toposhimctl alloc gc "
		"[--grace SECONDS] | toposhimctl alloc unpin [--root ROOT] ID\n";
	static const struct {
		const char *args[4];
		const char *err;
		bool alone; /* the line without the usage */
	} rows[] = {
		{{"alloc"}, "toposhimctl: alloc: missing command\n", false},
		{{"alloc", "rm"}, "toposhimctl: alloc: unknown command 'rm'\n", false},
		{{"alloc", "list", "--yaml"},
		 "toposhimctl: alloc list: unexpected argument '--yaml'\n",
		 false},
		{{"alloc", "gc", "--json"},
		 "toposhimctl: alloc gc: unexpected argument '--json'\n",
		 false},
		{{"alloc", "gc", "--grace"},
		 "toposhimctl: alloc gc: --grace needs a number of seconds\n",
		 true},
		{{"alloc", "gc", "--grace", "1m"},
		 "toposhimctl: alloc gc: --grace: invalid seconds '1m'\n",
		 true},
		{{"alloc", "unpin"}, "toposhimctl: alloc unpin: missing container id\n", false},
		{{"alloc", "unpin", "--json"},
		 "toposhimctl: alloc unpin: unexpected argument '--json'\n",
		 false},
		{{"alloc", "unpin", "a", "b"},
		 "toposhimctl: alloc unpin: unexpected argument 'b'\n",
		 false},
		{{"alloc", "unpin", "--root"},
		 "toposhimctl: alloc unpin: --root needs a directory\n",
		 true},
		{{"alloc", "unpin", "--root", ""},
		 "toposhimctl: alloc unpin: --root needs a directory\n",
		 true},
		{{"alloc", "unpin", ""}, "toposhimctl: alloc unpin: empty container id\n", true},
		{{"alloc", "unpin", "--root", "rel"},
		 "toposhimctl: alloc unpin: --root: not absolute 'rel'\n",
		 true},
	};
	struct fixture *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *want = NULL;
		char *argv[5] = {0};
		struct run r;

		for (size_t k = 0; k < 4 && rows[i].args[k] != NULL; k++)
			argv[k] = (char *)(uintptr_t)rows[i].args[k];
		r = ctl(f->top, argv);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.out, "");
		assert_true(asprintf(&want, "%s%s", rows[i].err, rows[i].alone ? "" : usage) > 0);
		assert_string_equal(r.err, want);
		run_release(&r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_list_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_text_and_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unpin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
