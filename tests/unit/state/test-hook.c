/* Unit tests of src/cli/cmd-hook.c: the state on stdin, both stages, the injected entries. */
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
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/cmd-hook.h"
#include "oci/json.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "helpers.h"

/* What runc 1.1 writes to a createRuntime hook's stdin. */
static char empty_config[] = "/tmp/ts-hook-config-XXXXXX";

static const char runc_state[] =
	"{\"ociVersion\":\"1.0.2-dev\",\"id\":\"web-1\",\"status\":\"creating\",\"pid\":4242,"
	"\"bundle\":\"/run/containerd/io.containerd.runtime.v2.task/default/web-1\","
	"\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
	"\"toposhim.io/class\":\"critical\"}}";

static void test_parse_runc_state(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_hook_state st = {0};
	static const char stopped[] = "{\"id\":\"x\",\"status\":\"stopped\"}";

	assert_int_equal(ts_hook_state_parse(runc_state, strlen(runc_state), &st, &err), 0);
	assert_string_equal(st.oci_version, "1.0.2-dev");
	assert_string_equal(st.container_id, "web-1");
	assert_string_equal(st.status, "creating");
	assert_int_equal(st.pid, 4242);
	assert_string_equal(st.bundle,
			    "/run/containerd/io.containerd.runtime.v2.task/default/web-1");
	ts_hook_state_release(&st);
	assert_null(st.container_id);
	/* poststop of a stopped container: no pid */
	assert_int_equal(ts_hook_state_parse(stopped, strlen(stopped), &st, &err), 0);
	assert_string_equal(st.container_id, "x");
	assert_int_equal(st.pid, 0);
	assert_null(st.bundle);
	ts_hook_state_release(&st);
}

static void test_parse_malformed(void **state)
{
	static const struct {
		const char *text, *msg;
	} rows[] = {
		{"", "stdin: empty document"},
		{"{\"id\": \"a\"", "stdin: line 1 column 11: parse error: premature EOF"},
		{"[\"id\"]", "stdin: '/': expected object, got array"},
		{"{\"pid\": 1}", "stdin: '/id': missing"},
		{"{\"id\": 7}", "stdin: '/id': expected string, got number"},
		{"{\"id\": \"\"}", "stdin: '/id': empty"},
		{"{\"id\": \"a\", \"pid\": -5}", "stdin: '/pid': invalid pid '-5'"},
		{"{\"id\": \"a\", \"pid\": 1.5}", "stdin: '/pid': invalid pid '1.5'"},
		{"{\"id\": \"a\", \"pid\": 4294967296}", "stdin: '/pid': invalid pid '4294967296'"},
		{"{\"id\": \"a\", \"pid\": \"12\"}", "stdin: '/pid': expected number, got string"},
		{"{\"id\": \"a\", \"bundle\": null}",
		 "stdin: '/bundle': expected string, got null"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		struct ts_hook_state st = {0};

		assert_int_equal(ts_hook_state_parse(rows[i].text, strlen(rows[i].text), &st, &err),
				 -EINVAL);
		assert_string_equal(err->msg, rows[i].msg);
		assert_null(st.container_id);
	}
}

struct fixture {
	char *top, *sdir, *proc;
	struct ts_state_options opts;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->top = th_tmpdir("hook")) == NULL)
		return -1;
	if (asprintf(&f->sdir, "%s/state", f->top) < 0 || asprintf(&f->proc, "%s/proc", f->top) < 0)
		return -1;
	if (mkdir(f->proc, 0755) < 0)
		return -1;
	f->opts.state_dir = f->sdir;
	f->opts.proc_root = f->proc;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	th_rm_rf(f->top);
	free(f->top);
	free(f->sdir);
	free(f->proc);
	free(f);
	return 0;
}

/* Put a "creating" record for container_id, as create does before the exec. */
static void put_creating(const struct fixture *f, const char *container_id)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_alloc *a = ts_alloc_new(container_id, &err);

	assert_non_null(a);
	a->cpus_str = strdup("1");
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
}

/* Put a record of (root, id) with a bundle and cpus. */
static void put_rooted(const struct fixture *f, const char *root, const char *id,
		       const char *bundle, const char *cpus)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_alloc *a = ts_alloc_new(id, &err);

	assert_non_null(a);
	a->runtime_root = strdup(root);
	a->bundle = strdup(bundle);
	a->cpus_str = strdup(cpus);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
}

/* Issue 10, finding 5: the same id under two runtime roots.  Each hook
 * finds its own container's record: by the root its entry carries, or,
 * for an entry without one (an older toposhim), by its bundle. */
static void test_same_id_two_roots(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_alloc struct ts_alloc *removed = NULL;
	cleanup_alloc struct ts_alloc *removed2 = NULL;
	struct ts_hook_state k8s = {.container_id = (char *)"c",
				    .bundle = (char *)"/b/k8s.io/c",
				    .runtime_root = "/run/containerd/runc/k8s.io"};
	struct ts_hook_state old = {.container_id = (char *)"c", .bundle = (char *)"/b/default/c"};

	put_rooted(f, "/run/containerd/runc/k8s.io", "c", "/b/k8s.io/c", "1");
	put_rooted(f, "/run/containerd/runc/default", "c", "/b/default/c", "2");
	assert_int_equal(ts_hook_poststop(&k8s, &f->opts, &removed, NULL, &err), 1);
	assert_string_equal(removed->runtime_root, "/run/containerd/runc/k8s.io");
	assert_string_equal(removed->cpus_str, "1");
	/* the other container's record stays */
	assert_int_equal(ts_hook_poststop(&k8s, &f->opts, NULL, NULL, &err), 0);
	assert_int_equal(ts_hook_poststop(&old, &f->opts, &removed2, NULL, &err), 1);
	assert_string_equal(removed2->runtime_root, "/run/containerd/runc/default");
	assert_string_equal(removed2->cpus_str, "2");
	assert_null(err);
}

static void test_create_runtime_then_poststop(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_alloc struct ts_alloc *removed = NULL;
	struct ts_hook_state st = {.container_id = (char *)"web-1", .pid = 4242};
	char *warning = NULL;

	put_creating(f, "web-1");
	assert_int_equal(th_fake_proc(f->proc, 4242, "runc:[2:INIT]", 'S', 123456), 0);
	assert_int_equal(th_write(f->proc, "4242/cgroup",
				  "12:pids:/default/web-1\n3:cpuset:/default/web-1\n0::/\n"),
			 0);
	assert_int_equal(ts_hook_create_runtime(&st, &f->opts, &warning, &err), 1);
	assert_null(warning);
	{
		cleanup_state struct ts_state *s = NULL;
		const struct ts_alloc *a;

		assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
		assert_int_equal(ts_state_load(s, &warning, &err), 0);
		assert_null(warning);
		a = ts_state_find(s, NULL, "web-1");
		assert_non_null(a);
		assert_int_equal(a->status, TS_ALLOC_CREATED);
		assert_int_equal(a->pid, 4242);
		assert_int_equal(a->pid_start_ticks, 123456);
		assert_string_equal(a->cgroup_path, "/default/web-1");
		assert_string_equal(a->cpus_str, "1");
	}
	assert_int_equal(ts_hook_poststop(&st, &f->opts, &removed, &warning, &err), 1);
	assert_string_equal(removed->container_id, "web-1");
	assert_int_equal(removed->pid, 4242);
	/* the second poststop (already released or collected) is fine */
	assert_int_equal(ts_hook_poststop(&st, &f->opts, NULL, &warning, &err), 0);
	assert_null(err);
}

static void test_create_runtime_errors(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *want = NULL;
	struct ts_hook_state st = {.container_id = (char *)"web-2", .pid = 0};

	assert_int_equal(ts_hook_create_runtime(&st, &f->opts, NULL, &err), -EINVAL);
	assert_string_equal(err->msg, "stdin: '/pid': missing");
	ts_error_clear(&err);
	st.pid = 999;
	assert_int_equal(ts_hook_create_runtime(&st, &f->opts, NULL, &err), -ENOENT);
	assert_true(asprintf(&want, "container 'web-2': %s/999/stat: cannot open", f->proc) > 0);
	assert_string_equal(err->msg, want);
	ts_error_clear(&err);
	/* a container toposhim did not place: nothing to record, no file written */
	assert_int_equal(th_fake_proc(f->proc, 999, "sh", 'S', 1), 0);
	assert_int_equal(th_write(f->proc, "999/cgroup", "1:name=systemd:/x\n"), 0);
	assert_int_equal(ts_hook_create_runtime(&st, &f->opts, NULL, &err), 0);
	assert_null(err);
	assert_int_equal(th_exists(f->sdir, "allocations.json"), 0);
}

/* Run `toposhim hook <stage>` in a child with text on stdin; returns the
 * child's exit status (0 ok, 1 error) and writes the error message to msg. */
static int run_cmd_hook(const char *sdir, const char *stage, const char *text, char *msg,
			size_t msg_size)
{
	int in[2], out[2];
	pid_t pid;
	int status = 0;
	ssize_t n;

	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *stage_copy = strdup(stage);
		char *argv[] = {(char *)"hook", stage_copy, NULL};
		struct ts_error *err = NULL;
		int r;

		/* our copy of the write end would keep stdin from ever ending */
		close(in[1]);
		close(out[0]);
		if (stage_copy == NULL || dup2(in[0], STDIN_FILENO) < 0 ||
		    (sdir != NULL ? setenv("TOPOSHIM_STATE_DIR", sdir, 1)
				  : unsetenv("TOPOSHIM_STATE_DIR")) < 0)
			_exit(3);
		r = ts_cmd_hook(2, argv, &err);
		if (r < 0 && ts_write_all(out[1], err->msg, strlen(err->msg)) < 0)
			_exit(4);
		_exit(r < 0 ? 1 : 0);
	}
	close(in[0]);
	close(out[1]);
	/* a child that refuses its argv exits without reading: EPIPE is fine */
	n = write(in[1], text, strlen(text));
	assert_true(n == (ssize_t)strlen(text) || (n < 0 && errno == EPIPE));
	close(in[1]);
	n = read(out[0], msg, msg_size - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(out[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_cmd_hook_stdin(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	cleanup_free char *text = NULL, *cgroup = NULL;
	const struct ts_alloc *a;
	uint64_t ticks = 0;
	char msg[512];

	/* this test process plays the container's init: real /proc */
	f->opts.proc_root = NULL;
	put_creating(f, "ctr-self");
	assert_true(asprintf(&text,
			     "{\"ociVersion\":\"1.0.2\",\"id\":\"ctr-self\",\"status\":"
			     "\"creating\",\"pid\":%d,\"bundle\":\"/b\"}",
			     (int)getpid()) > 0);
	assert_int_equal(run_cmd_hook(f->sdir, "create-runtime", text, msg, sizeof(msg)), 0);
	assert_int_equal(ts_state_proc_start_ticks(NULL, getpid(), &ticks, NULL, &err), 0);
	assert_int_equal(ts_state_proc_cgroup(NULL, getpid(), &cgroup, &err), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	a = ts_state_find(s, NULL, "ctr-self");
	assert_non_null(a);
	assert_int_equal(a->status, TS_ALLOC_CREATED);
	assert_int_equal(a->pid, getpid());
	assert_true(a->pid_start_ticks == ticks);
	assert_string_equal(a->cgroup_path, cgroup);
	s = ts_state_close(s);

	assert_int_equal(
		run_cmd_hook(f->sdir, "poststop", "{\"id\":\"ctr-self\"}", msg, sizeof(msg)), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	assert_int_equal(ts_state_count(s), 0);
	s = ts_state_close(s);

	assert_int_equal(run_cmd_hook(f->sdir, "poststop", "not json", msg, sizeof(msg)), 1);
	assert_string_equal(msg, "hook poststop: stdin: line 1 column 1: lexical error: invalid "
				 "string in json text");
	assert_int_equal(
		run_cmd_hook(f->sdir, "create-runtime", "{\"id\":\"x\"}", msg, sizeof(msg)), 1);
	assert_string_equal(msg, "hook create-runtime: stdin: '/pid': missing");
	assert_int_equal(run_cmd_hook(f->sdir, "prestart", "{}", msg, sizeof(msg)), 1);
	assert_string_equal(
		msg, "hook: unknown stage 'prestart' (expected 'create-runtime' or 'poststop')");
}

static void test_cmd_hook_config_state_dir(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	cleanup_free char *config = NULL, *text = NULL;
	char msg[512];

	put_creating(f, "ctr-cfg");
	assert_true(asprintf(&config, "%s/config.json", f->top) > 0);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s\"}", f->sdir) > 0);
	assert_int_equal(th_write(f->top, "config.json", text), 0);
	assert_int_equal(setenv("TOPOSHIM_CONFIG", config, 1), 0);
	/* no TOPOSHIM_STATE_DIR: the config names the store */
	assert_int_equal(run_cmd_hook(NULL, "poststop", "{\"id\":\"ctr-cfg\"}", msg, sizeof(msg)),
			 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	assert_int_equal(ts_state_count(s), 0);
	s = ts_state_close(s);
	assert_int_equal(th_write(f->top, "config.json", "{\"state_dir\": \"run/x\"}"), 0);
	assert_int_equal(run_cmd_hook(NULL, "poststop", "{\"id\":\"ctr-cfg\"}", msg, sizeof(msg)),
			 1);
	free(text);
	assert_true(asprintf(&text, "hook poststop: %s: '/state_dir': not absolute 'run/x'",
			     config) > 0);
	assert_string_equal(msg, text);
	assert_int_equal(setenv("TOPOSHIM_CONFIG", empty_config, 1), 0);
}

static void test_state_config_read(void **state)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{"{\"state_dir\": 1}", "c.json: '/state_dir': expected string, got number"},
		{"{\"state_dir\": \"\"}", "c.json: '/state_dir': not absolute ''"},
		{"{\"gc_grace_seconds\": \"60\"}",
		 "c.json: '/gc_grace_seconds': expected number, got string"},
		{"{\"gc_grace_seconds\": 1.5}",
		 "c.json: '/gc_grace_seconds': invalid seconds '1.5'"},
		{"{\"gc_grace_seconds\": 18446744073710}",
		 "c.json: '/gc_grace_seconds': invalid seconds '18446744073710'"},
	};
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *root = NULL;
	struct ts_cli_state_config sc;
	static const char good[] = "{\"state_dir\": \"/run/ts2\", \"gc_grace_seconds\": 0}";

	assert_int_equal(ts_json_parse("{}", 2, "c.json", &root, &err), 0);
	assert_int_equal(ts_cli_state_config_read(root, "c.json", &sc, &err), 0);
	assert_null(sc.state_dir);
	assert_true(sc.gc_grace_usec == 60000000u);
	root = ts_json_free(root);
	assert_int_equal(ts_json_parse(good, strlen(good), "c.json", &root, &err), 0);
	assert_int_equal(ts_cli_state_config_read(root, "c.json", &sc, &err), 0);
	assert_string_equal(sc.state_dir, "/run/ts2");
	assert_true(sc.gc_grace_usec == 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		root = ts_json_free(root);
		assert_int_equal(
			ts_json_parse(bad[i].text, strlen(bad[i].text), "c.json", &root, &err), 0);
		assert_int_equal(ts_cli_state_config_read(root, "c.json", &sc, &err), -EINVAL);
		assert_string_equal(err->msg, bad[i].msg);
		ts_error_clear(&err);
	}
}

/* The state dir that wins, checked before anything opens it: the message
 * names the variable or the config member it came from. */
static void test_state_config_read_dir(void **state)
{
	static const char config[] = "{\"state_dir\": \"/tmp\"}";
	char file[] = "/tmp/ts-hook-state-file-XXXXXX";
	cleanup_free char *want_env = NULL, *want_config = NULL, *file_config = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *root = NULL, *bad = NULL;
	struct ts_cli_state_config sc;
	int fd = mkstemp(file);

	assert_true(fd >= 0);
	close(fd);
	assert_true(asprintf(&want_env, "environment: 'TOPOSHIM_STATE_DIR': not a directory '%s'",
			     file) > 0);
	assert_true(asprintf(&want_config, "c.json: '/state_dir': not a directory '%s'", file) > 0);
	assert_true(asprintf(&file_config, "{\"state_dir\": \"%s\"}", file) > 0);
	assert_int_equal(ts_json_parse(config, strlen(config), "c.json", &root, &err), 0);
	assert_int_equal(ts_json_parse(file_config, strlen(file_config), "c.json", &bad, &err), 0);

	assert_int_equal(setenv("TOPOSHIM_STATE_DIR", "rel/dir", 1), 0);
	assert_int_equal(ts_cli_state_config_read(root, "c.json", &sc, &err), -EINVAL);
	assert_string_equal(err->msg, "environment: 'TOPOSHIM_STATE_DIR': not absolute 'rel/dir'");
	ts_error_clear(&err);
	assert_int_equal(setenv("TOPOSHIM_STATE_DIR", file, 1), 0);
	assert_int_equal(ts_cli_state_config_read(root, "c.json", &sc, &err), -EINVAL);
	assert_string_equal(err->msg, want_env);
	ts_error_clear(&err);
	/* the variable wins: the config's file is not looked at */
	assert_int_equal(setenv("TOPOSHIM_STATE_DIR", "/tmp", 1), 0);
	assert_int_equal(ts_cli_state_config_read(bad, "c.json", &sc, &err), 0);
	/* set but empty counts as unset: the config's value, checked */
	assert_int_equal(setenv("TOPOSHIM_STATE_DIR", "", 1), 0);
	assert_int_equal(ts_cli_state_config_read(bad, "c.json", &sc, &err), -EINVAL);
	assert_string_equal(err->msg, want_config);
	ts_error_clear(&err);
	assert_int_equal(ts_cli_state_config_read(root, "c.json", &sc, &err), 0);
	assert_string_equal(sc.state_dir, "/tmp");
	assert_int_equal(unsetenv("TOPOSHIM_STATE_DIR"), 0);
	assert_int_equal(ts_cli_state_config_read(bad, "c.json", &sc, &err), -EINVAL);
	assert_string_equal(err->msg, want_config);
	unlink(file);
}

static void test_cmd_hook_argv(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	char *only[] = {(char *)"hook", NULL};
	char *extra[] = {(char *)"hook", (char *)"poststop", (char *)"--x", NULL};

	assert_int_equal(ts_cmd_hook(1, only, &err), -EINVAL);
	assert_string_equal(err->msg,
			    "hook: missing stage (expected 'create-runtime' or 'poststop')");
	ts_error_clear(&err);
	assert_int_equal(ts_cmd_hook(3, extra, &err), -EINVAL);
	assert_string_equal(err->msg, "hook: unexpected argument '--x'");
}

static char *compact(const struct ts_json *j)
{
	cleanup_error struct ts_error *err = NULL;
	char *buf = NULL;

	assert_int_equal(ts_json_serialize(j, false, &buf, NULL, &err), 0);
	return buf;
}

static void test_inject(void **state)
{
	static const char config[] = "{\"ociVersion\":\"1.0.2\",\"hooks\":{\"createRuntime\":[{"
				     "\"path\":\"/usr/bin/other\"}],\"prestart\":[]}}";
	static const char want[] =
		"{\"ociVersion\":\"1.0.2\",\"hooks\":{\"createRuntime\":[{\"path\":\"/usr/bin/"
		"other\"},{\"path\":\"/usr/local/bin/toposhim\",\"args\":[\"toposhim\",\"hook\","
		"\"create-runtime\"],\"env\":[\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\","
		"\"TOPOSHIM_STATE_DIR=/tmp/s\"]}],\"prestart\":[],\"poststop\":[{\"path\":\"/usr/"
		"local/bin/toposhim\",\"args\":[\"toposhim\",\"hook\",\"poststop\"],\"env\":["
		"\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\",\"TOPOSHIM_STATE_DIR=/tmp/s\"]}]}}";
	static const char want_moved[] =
		"{\"ociVersion\":\"1.0.2\",\"hooks\":{\"createRuntime\":[{\"path\":\"/usr/bin/"
		"other\"},{\"path\":\"/opt/ts\",\"args\":[\"toposhim\",\"hook\","
		"\"create-runtime\"],\"env\":[\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\","
		"\"TOPOSHIM_CONFIG=/etc/t.json\",\"TOPOSHIM_RUNTIME_ROOT=/run/"
		"r\"]}],\"prestart\":[],"
		"\"poststop\":[{\"path\":\"/opt/ts\",\"args\":[\"toposhim\",\"hook\",\"poststop\"],"
		"\"env\":[\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\",\"TOPOSHIM_CONFIG=/etc/t.json\","
		"\"TOPOSHIM_RUNTIME_ROOT=/run/r\"]}]}}";
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *root = NULL;
	cleanup_free char *once = NULL, *twice = NULL, *moved = NULL;

	assert_int_equal(ts_json_parse(config, strlen(config), "config.json", &root, &err), 0);
	assert_int_equal(ts_hook_inject(root, "/usr/local/bin/toposhim",
					&(struct ts_hook_env){.state_dir = "/tmp/s"}, &err),
			 0);
	once = compact(root);
	assert_string_equal(once, want);
	/* a retried create: the same entries, not two of each */
	assert_int_equal(
		ts_hook_inject(root, "/usr/local/bin/toposhim",
			       &(struct ts_hook_env){.state_dir = "/tmp/s", .config_path = ""},
			       &err),
		0);
	twice = compact(root);
	assert_string_equal(twice, want);
	/* another toposhim binary and environment: replaced in place */
	assert_int_equal(ts_hook_inject(root, "/opt/ts",
					&(struct ts_hook_env){.config_path = "/etc/t.json",
							      .runtime_root = "/run/r"},
					&err),
			 0);
	moved = compact(root);
	assert_string_equal(moved, want_moved);
}

static void test_inject_errors(void **state)
{
	static const struct {
		const char *config, *self, *msg;
	} rows[] = {
		{"{\"hooks\":[]}", "/t", "config.json: '/hooks': expected object, got array"},
		{"{\"hooks\":{\"createRuntime\":{}}}", "/t",
		 "config.json: '/hooks/createRuntime': expected array, got object"},
		{"{\"hooks\":{\"poststop\":\"x\"}}", "/t",
		 "config.json: '/hooks/poststop': expected array, got string"},
		{"{}", "toposhim", "hook: not an absolute path 'toposhim'"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *root = NULL;

		assert_int_equal(ts_json_parse(rows[i].config, strlen(rows[i].config),
					       "config.json", &root, &err),
				 0);
		assert_int_equal(ts_hook_inject(root, rows[i].self, &(struct ts_hook_env){0}, &err),
				 -EINVAL);
		assert_string_equal(err->msg, rows[i].msg);
	}
}

static void test_self_exe(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *exe = NULL;
	const char *base;

	assert_int_equal(ts_hook_self_exe(&exe, &err), 0);
	assert_true(exe[0] == '/');
	base = strrchr(exe, '/') + 1;
	assert_string_equal(base, "test-hook");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_runc_state),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test_setup_teardown(test_same_id_two_roots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_runtime_then_poststop, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_runtime_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmd_hook_stdin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmd_hook_config_state_dir, setup, teardown),
		cmocka_unit_test(test_state_config_read),
		cmocka_unit_test(test_state_config_read_dir),
		cmocka_unit_test(test_cmd_hook_argv),
		cmocka_unit_test(test_inject),
		cmocka_unit_test(test_inject_errors),
		cmocka_unit_test(test_self_exe),
	};

	unsetenv("TOPOSHIM_STATE_DIR");
	/* the host's /etc/toposhim/config.json must not steer the tests: an
	 * empty config (a file named by TOPOSHIM_CONFIG must exist) */
	int fd = mkstemp(empty_config);
	if (fd < 0 || write(fd, "{}", 2) != 2 || close(fd) < 0)
		return 1;
	setenv("TOPOSHIM_CONFIG", empty_config, 1);
	signal(SIGPIPE, SIG_IGN);
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	unlink(empty_config);
	return r;
}
