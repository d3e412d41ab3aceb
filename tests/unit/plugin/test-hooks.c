/* Unit tests of hooks/: the plugin author's library (hooks/lib) and the
 * plugins confine, clearcfs, log and example, run through the real chain
 * against a fake cgroup tree. */
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

#include "plugin/internal.h"
#include "toposhim-plugin.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static const struct cpulist_row {
	const char *in;
	const char *want; /* formatted back; NULL: error */
	const char *want_msg;
} cpulist_rows[] = {
	{"", "", NULL},
	{"0", "0", NULL},
	{"0-3,8", "0-3,8", NULL},
	{"3,2,1,0", "0-3", NULL},
	{"0-1,1-2\n", "0-2", NULL},
	{"8191", "8191", NULL},
	{"8192", NULL, "cpu list '8192': cpu beyond 8191"},
	{"0-3,x", NULL, "invalid cpu list '0-3,x'"},
	{"3-1", NULL, "invalid cpu list '3-1'"},
	{"1,", NULL, "invalid cpu list '1,'"},
	{",1", NULL, "invalid cpu list ',1'"},
	{"1 ", NULL, "invalid cpu list '1 '"},
	{"-1", NULL, "invalid cpu list '-1'"},
};

static void test_cpulist(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cpulist_rows); i++) {
		const struct cpulist_row *row = &cpulist_rows[i];
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *out = NULL;
		struct tsp_cpuset set;
		int r = tsp_cpulist_parse(row->in, &set, &err);

		if (row->want == NULL) {
			if (r >= 0 || strcmp(err->msg, row->want_msg) != 0)
				fail_msg("'%s': got %d '%s'", row->in, r, err ? err->msg : "");
			continue;
		}
		if (r < 0)
			fail_msg("'%s': %s", row->in, err->msg);
		out = tsp_cpulist_format(&set);
		if (strcmp(out, row->want) != 0)
			fail_msg("'%s': got '%s' want '%s'", row->in, out, row->want);
	}
}

static void test_cpuset_subtract(void **state)
{
	struct tsp_cpuset a, b;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *out = NULL;

	(void)state;
	assert_int_equal(tsp_cpulist_parse("0-7,64-65", &a, &err), 0);
	assert_int_equal(tsp_cpulist_parse("0-1,65,100", &b, &err), 0);
	tsp_cpuset_subtract(&a, &b);
	out = tsp_cpulist_format(&a);
	assert_string_equal(out, "2-7,64");
	assert_int_equal(tsp_cpuset_count(&a), 7);
}

static int pipe_with(const char *text)
{
	int fds[2];

	assert_int_equal(pipe2(fds, O_CLOEXEC), 0);
	assert_int_equal(write(fds[1], text, strlen(text)), (ssize_t)strlen(text));
	close(fds[1]);
	return fds[0];
}

static const struct request_row {
	const char *text;
	const char *want_msg;
} request_rows[] = {
	{"[]", "request: '': expected object, got array"},
	{"{\"id\": \"c\"}", "request: missing 'state'"},
	{"{\"state\": \"create\"}", "request: missing 'id'"},
	{"{\"state\": 1, \"id\": \"c\"}", "request: '/state': expected string, got number"},
	{"{\"state\": \"create\", \"id\": \"c\", \"pid\": -3}",
	 "request: '/pid': invalid pid '-3'"},
	{"{\"state\": \"create\", \"id\": \"c\", \"toposhim\": {\"cpus\": 3}}",
	 "request: '/toposhim/cpus': expected string, got number"},
	{"{\"state\"", "request: line 1 column 9: parse error: premature EOF"},
};

static void test_request_read(void **state)
{
	struct tsp_request req;
	cleanup_error struct ts_error *err = NULL;
	int fd = pipe_with(
		"{\"version\": \"0.1.0\", \"state\": \"create\", \"id\": \"c1\", \"pid\": 7,"
		" \"conf\": {\"reserved\": \"0\"}, \"toposhim\": {\"class\": \"exclusive\","
		" \"cpus\": \"2-3\", \"mems\": \"0\", \"cgroupPath\": \"/cg\"}}");

	(void)state;
	assert_int_equal(tsp_request_read(fd, &req, &err), 0);
	close(fd);
	assert_string_equal(req.state, "create");
	assert_string_equal(req.container_id, "c1");
	assert_int_equal(req.pid, 7);
	assert_string_equal(ts_json_get_string(req.conf, "reserved"), "0");
	assert_string_equal(req.class_name, "exclusive");
	assert_string_equal(req.cpus_str, "2-3");
	assert_string_equal(req.mems_str, "0");
	assert_string_equal(req.cgroup_path, "/cg");
	tsp_request_release(&req);
	for (size_t i = 0; i < ARRAY_SIZE(request_rows); i++) {
		cleanup_error struct ts_error *e = NULL;

		fd = pipe_with(request_rows[i].text);
		if (tsp_request_read(fd, &req, &e) != -EINVAL ||
		    strcmp(e->msg, request_rows[i].want_msg) != 0)
			fail_msg("'%s': got '%s'", request_rows[i].text, e ? e->msg : "");
		close(fd);
	}
}

static void test_result_write(void **state)
{
	char path[] = "/tmp/ts-hook-result-XXXXXX";
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *m = ts_json_new_object();
	cleanup_free char *text = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ts_json_object_set(m, "k", ts_json_new_string("v"), &err), 0);
	assert_int_equal(tsp_result_write(fd, "p", NULL, m, &err), 0);
	assert_int_equal(tsp_result_write(fd, "p", "bad \"thing\"", NULL, &err), 0);
	close(fd);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &text, NULL, &err), 0);
	unlink(path);
	assert_string_equal(text,
			    "{\"plugin\":\"p\",\"version\":\"0.1\",\"error\":\"\","
			    "\"metadata\":{\"k\":\"v\"}}\n"
			    "{\"plugin\":\"p\",\"version\":\"0.1\",\"error\":\"bad \\\"thing\\\"\","
			    "\"metadata\":{}}\n");
}

/* ---- the shipped plugins, through the chain ---- */

static char tmpdir[64];

static void write_file(const char *name, const char *text)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static char *read_back(const char *name)
{
	char p[256];
	char *text = NULL;
	cleanup_error struct ts_error *err = NULL;

	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	if (ts_read_file_at(AT_FDCWD, p, 0, &text, NULL, &err) < 0)
		fail_msg("%s", err->msg);
	return text;
}

static int setup_tree(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ts-hooks-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tree(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Run one shipped plugin (hooks/<name>) with conf at stage; returns the
 * chain's return value, with the result or error in *ret_rep / *err. */
static int run_plugin(const char *name, const char *conf, enum ts_plugin_stage stage,
		      const struct ts_plugin_event *ev, struct ts_plugin_report *rep,
		      struct ts_error **err)
{
	const char *build = getenv("TS_BUILDDIR");
	char text[1024];
	cleanup_json struct ts_json *config = NULL;
	struct ts_plugin_chain *c = NULL;
	int r;

	/* The sandbox these plugins' docs ask for: they write files (the
	 * fake cgroup tree is tmpdir), root's ones when toposhim is root. */
	snprintf(text, sizeof(text),
		 "{\"plugins\": [{\"type\": \"%s\", \"path\": \"%s/hooks/%s\", \"timeout_ms\": "
		 "30000,"
		 " \"stages\": [\"create\", \"delete\"], \"conf\": %s,"
		 " \"sandbox\": {%s\"writable\": [\"%s\"]}}]}",
		 name, build ? build : ".", name, conf, geteuid() == 0 ? "\"uid\": 0, " : "",
		 tmpdir);
	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &config, err), 0);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, err), 0);
	r = ts_plugin_chain_run(c, stage, ev, rep, err);
	ts_plugin_chain_free(c);
	return r;
}

static const char *meta(const struct ts_plugin_report *rep, const char *key)
{
	return ts_json_get_string(ts_json_get(rep->results->u.array.items[0], "metadata"), key);
}

/* The fake cgroup directory lives under /tmp: conf "cgroup_root": "/tmp"
 * makes the plugins take the event's cgroup path (tmpdir) as it is. */
static void test_confine(void **state)
{
	struct ts_plugin_event ev = {.container_id = "c1", .cgroup_path = tmpdir};
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL, *err2 = NULL;
	cleanup_free char *cpus = NULL, *cpus2 = NULL;
	char want[256];

	(void)state;
	write_file("cpuset.cpus", "0-7\n");
	assert_int_equal(run_plugin("confine",
				    "{\"reserved\": \"0-1,4\", \"cgroup_root\": \"/tmp\"}",
				    TS_PLUGIN_STAGE_CREATE, &ev, &rep, &err),
			 0);
	cpus = read_back("cpuset.cpus");
	assert_string_equal(cpus, "2-3,5-7");
	assert_string_equal(meta(&rep, "cpus"), "2-3,5-7");
	ts_plugin_report_release(&rep);
	/* Nothing left: the create fails, naming the plugin and the container. */
	write_file("cpuset.cpus", "0-1\n");
	assert_int_equal(run_plugin("confine", "{\"reserved\": \"0-1\", \"cgroup_root\": \"/tmp\"}",
				    TS_PLUGIN_STAGE_CREATE, &ev, &rep, &err2),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "plugin 'confine' (%s/hooks/confine): exited with status 1: stderr: 'confine: "
		 "container 'c1': no cpu left in '0-1' outside reserved '0-1''",
		 getenv("TS_BUILDDIR"));
	assert_string_equal(err2->msg, want);
	cpus2 = read_back("cpuset.cpus");
	assert_string_equal(cpus2, "0-1\n");
}

static void test_clearcfs(void **state)
{
	struct ts_plugin_event ev = {.container_id = "c1", .cgroup_path = tmpdir};
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *v1 = NULL, *v2 = NULL, *kept = NULL;

	(void)state;
	/* cgroup v1: cpu.cfs_quota_us */
	write_file("cpu.cfs_quota_us", "50000\n");
	ev.class_name = "critical";
	assert_int_equal(run_plugin("clearcfs", "{\"cgroup_root\": \"/tmp\"}",
				    TS_PLUGIN_STAGE_CREATE, &ev, &rep, &err),
			 0);
	assert_string_equal(meta(&rep, "cfs"), "cleared");
	ts_plugin_report_release(&rep);
	v1 = read_back("cpu.cfs_quota_us");
	assert_string_equal(v1, "-1");
	/* Not a critical (exclusive-CPU) container: untouched. */
	write_file("cpu.cfs_quota_us", "50000\n");
	ev.class_name = "standard";
	assert_int_equal(run_plugin("clearcfs", "{\"cgroup_root\": \"/tmp\"}",
				    TS_PLUGIN_STAGE_CREATE, &ev, &rep, &err),
			 0);
	assert_string_equal(meta(&rep, "cfs"), "kept");
	ts_plugin_report_release(&rep);
	kept = read_back("cpu.cfs_quota_us");
	assert_string_equal(kept, "50000\n");
	/* cgroup v2 (cgroup.controllers present), class from conf: cpu.max */
	write_file("cgroup.controllers", "cpuset cpu\n");
	write_file("cpu.max", "50000 100000\n");
	assert_int_equal(run_plugin("clearcfs",
				    "{\"classes\": [\"standard\"], \"cgroup_root\": \"/tmp\"}",
				    TS_PLUGIN_STAGE_CREATE, &ev, &rep, &err),
			 0);
	ts_plugin_report_release(&rep);
	v2 = read_back("cpu.max");
	assert_string_equal(v2, "max");
	unlink(strcat(strcpy((char[128]){0}, tmpdir), "/cgroup.controllers"));
}

static void test_log_and_example(void **state)
{
	static const char *const devices[] = {"vendor.com/gpu=0", NULL};
	struct ts_plugin_event ev = {
		.container_id = "c9", .pid = 77, .cpus_str = "2", .devices = devices};
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	char conf[256];
	const char *nl;

	(void)state;
	snprintf(conf, sizeof(conf), "{\"path\": \"%s/events.jsonl\"}", tmpdir);
	assert_int_equal(run_plugin("log", conf, TS_PLUGIN_STAGE_CREATE, &ev, &rep, &err), 0);
	ts_plugin_report_release(&rep);
	ev.pid = 0;
	assert_int_equal(run_plugin("log", conf, TS_PLUGIN_STAGE_DELETE, &ev, &rep, &err), 0);
	ts_plugin_report_release(&rep);
	text = read_back("events.jsonl");
	/* Two lines; the time varies, so compare what follows it. */
	nl = strchr(text, '\n');
	assert_non_null(nl);
	assert_non_null(strstr(text, "\"state\":\"create\",\"id\":\"c9\",\"pid\":77,\"cpus\":\"2\","
				     "\"results\":[]}\n"));
	assert_string_equal(strstr(nl + 1, "\"state\""),
			    "\"state\":\"delete\",\"id\":\"c9\",\"cpus\":\"2\",\"results\":[]}\n");
	assert_int_equal(strncmp(text, "{\"time\":\"20", 11), 0);

	assert_int_equal(run_plugin("example", "{}", TS_PLUGIN_STAGE_CREATE, &ev, &rep, &err), 0);
	assert_string_equal(meta(&rep, "greeting"), "hello c9");
	assert_string_equal(meta(&rep, "cpus"), "2");
	ts_plugin_report_release(&rep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpulist),
		cmocka_unit_test(test_cpuset_subtract),
		cmocka_unit_test(test_request_read),
		cmocka_unit_test(test_result_write),
		cmocka_unit_test_setup_teardown(test_confine, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_clearcfs, setup_tree, teardown_tree),
		cmocka_unit_test_setup_teardown(test_log_and_example, setup_tree, teardown_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
