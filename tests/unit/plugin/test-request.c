/* Unit tests of src/plugin/request.c: the request written, the result read. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

static struct ts_json *parse(const char *text)
{
	struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_json_parse(text, strlen(text), "t", &j, &err) < 0)
		fail_msg("%s", err->msg);
	return j;
}

static char *build(const struct ts_plugin *p, enum ts_plugin_stage stage,
		   const struct ts_plugin_event *ev, const char *results)
{
	cleanup_json struct ts_json *req = NULL, *res = results ? parse(results) : NULL;
	cleanup_error struct ts_error *err = NULL;
	char *text = NULL;

	if (ts_plugin_request_build(p, stage, ev, res, &req, &err) < 0)
		fail_msg("%s", err->msg);
	assert_int_equal(ts_json_serialize(req, false, &text, NULL, &err), 0);
	return text;
}

static void test_request_full(void **state)
{
	cleanup_json struct ts_json *config = parse(
		"{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"]},"
		" \"annotations\": {\"io.kubernetes.cri.sandbox-id\": \"sb1\","
		" \"io.kubernetes.cri-o.Labels\": \"{\\\"app\\\":\\\"web\\\"}\"},"
		" \"linux\": {\"cgroupsPath\": \"/pod/c1\", \"namespaces\": [{\"type\": \"pid\"},"
		" {\"type\": \"network\", \"path\": \"/var/run/netns/x\"}, {\"path\": \"/y\"}],"
		" \"resources\": {\"cpu\": {\"cpus\": \"0-1\"}}}}");
	static const char *const devices[] = {"vendor.com/gpu=0", "vendor.com/gpu=1", NULL};
	struct ts_plugin_event ev = {
		.container_id = "c1",
		.pid = 1234,
		.config = config,
		.class_name = "exclusive",
		.cpus_str = "2-3",
		.mems_str = "0",
		.devices = devices,
		.cgroup_path = "/sys/fs/cgroup/pod/c1",
	};
	struct ts_plugin p = {.type = (char *)"t", .path = (char *)"/t"};
	cleanup_json struct ts_json *conf = parse("{\"reserved\": \"0\"}");
	cleanup_free char *text = NULL;

	(void)state;
	p.conf = conf;
	text = build(
		&p, TS_PLUGIN_STAGE_CREATE, &ev,
		"[{\"plugin\": \"a\", \"version\": \"1\", \"error\": \"\", \"metadata\": {}}]");
	assert_string_equal(
		text,
		"{\"version\":\"0.1\",\"state\":\"create\",\"id\":\"c1\",\"sandboxID\":\"sb1\","
		"\"pid\":1234,\"spec\":{\"resources\":{\"cpu\":{\"cpus\":\"0-1\"}},"
		"\"namespaces\":{\"pid\":\"\",\"network\":\"/var/run/netns/x\"},\"cgroupsPath\":\"/"
		"pod/c1\","
		"\"annotations\":{\"io.kubernetes.cri.sandbox-id\":\"sb1\","
		"\"io.kubernetes.cri-o.Labels\":\"{\\\"app\\\":\\\"web\\\"}\"}},"
		"\"labels\":{\"app\":\"web\"},\"conf\":{\"reserved\":\"0\"},"
		"\"results\":[{\"plugin\":\"a\",\"version\":\"1\",\"error\":\"\",\"metadata\":{}}],"
		"\"toposhim\":{\"class\":\"exclusive\",\"cpus\":\"2-3\",\"mems\":\"0\","
		"\"devices\":[\"vendor.com/gpu=0\",\"vendor.com/gpu=1\"],"
		"\"cgroupPath\":\"/sys/fs/cgroup/pod/c1\"}}");
}

static void test_request_minimal(void **state)
{
	struct ts_plugin_event ev = {.container_id = "gone"};
	struct ts_plugin p = {.type = (char *)"t", .path = (char *)"/t"};
	cleanup_json struct ts_json *config =
		parse("{\"annotations\": {\"io.kubernetes.cri-o.SandboxID\": \"s2\","
		      " \"io.kubernetes.cri-o.Labels\": \"not json\"}}");
	cleanup_free char *text = NULL, *text2 = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_json *req = NULL;

	(void)state;
	text = build(&p, TS_PLUGIN_STAGE_DELETE, &ev, NULL);
	assert_string_equal(text, "{\"version\":\"0.1\",\"state\":\"delete\",\"id\":\"gone\","
				  "\"spec\":{},\"results\":[],\"toposhim\":{}}");
	ev.config = config;
	text2 = build(&p, TS_PLUGIN_STAGE_PRE_CREATE, &ev, NULL);
	assert_string_equal(text2, "{\"version\":\"0.1\",\"state\":\"pre-create\",\"id\":\"gone\","
				   "\"sandboxID\":\"s2\",\"spec\":{\"annotations\":{"
				   "\"io.kubernetes.cri-o.SandboxID\":\"s2\","
				   "\"io.kubernetes.cri-o.Labels\":\"not json\"}},\"results\":[],"
				   "\"toposhim\":{}}");
	ev.container_id = NULL;
	assert_int_equal(ts_plugin_request_build(&p, TS_PLUGIN_STAGE_CREATE, &ev, NULL, &req, &err),
			 -EINVAL);
	assert_null(req);
}

static const struct result_row {
	const char *name;
	enum ts_plugin_stage stage;
	int wait_status;
	bool timed_out;
	const char *out, *errout;
	int want_ret;
	const char *want_msg;
} result_rows[] = {
	{"ok", TS_PLUGIN_STAGE_CREATE, 0, false,
	 "{\"plugin\":\"a\",\"version\":\"0.1\",\"error\":\"\",\"metadata\":{\"k\":\"v\"}}", "", 0,
	 NULL},
	{"nulls as Go writes them", TS_PLUGIN_STAGE_CREATE, 0, false,
	 "{\"plugin\":\"a\",\"version\":\"\",\"error\":null,\"metadata\":null}", "", 0, NULL},
	{"exit 1 with valid JSON", TS_PLUGIN_STAGE_CREATE, 1 << 8, false,
	 "{\"plugin\":\"a\",\"error\":\"\"}", "", -EINVAL, "exited with status 1"},
	{"exit with stderr", TS_PLUGIN_STAGE_CREATE, 2 << 8, false, "",
	 "first line\nno such file\n\n", -EINVAL, "exited with status 2: stderr: 'no such file'"},
	{"v0.1 PluginError", TS_PLUGIN_STAGE_CREATE, 1 << 8, false,
	 "{\"plugin\":\"a\",\"message\":\"no such device\"}", "", -EINVAL,
	 "exited with status 1: message 'no such device'"},
	{"signal", TS_PLUGIN_STAGE_CREATE, SIGSEGV, false, "", "", -EINVAL, "killed by signal 11"},
	{"timeout", TS_PLUGIN_STAGE_CREATE, SIGKILL, true, "", "", -ETIMEDOUT,
	 "timed out after 100 ms"},
	{"empty stdout", TS_PLUGIN_STAGE_CREATE, 0, false, "", "", -EINVAL,
	 "invalid result: <stdout>: empty document"},
	{"truncated", TS_PLUGIN_STAGE_CREATE, 0, false, "{\"plugin\":", "", -EINVAL,
	 "invalid result: <stdout>: line 1 column 11: parse error: premature EOF"},
	{"array", TS_PLUGIN_STAGE_CREATE, 0, false, "[]", "", -EINVAL,
	 "result: '': expected object, got array"},
	{"error type", TS_PLUGIN_STAGE_CREATE, 0, false, "{\"error\": 1}", "", -EINVAL,
	 "result: '/error': expected string, got number"},
	{"metadata value", TS_PLUGIN_STAGE_CREATE, 0, false, "{\"metadata\": {\"a/b\": 1}}", "",
	 -EINVAL, "result: '/metadata/a~1b': expected string, got number"},
	{"reported error", TS_PLUGIN_STAGE_CREATE, 0, false, "{\"error\": \"no cpus\"}", "",
	 -EINVAL, "reported error 'no cpus'"},
	{"adjust at create", TS_PLUGIN_STAGE_CREATE, 0, false, "{\"adjust\": {}}", "", -EINVAL,
	 "result: '/adjust': only allowed at pre-create"},
	{"adjust at pre-create", TS_PLUGIN_STAGE_PRE_CREATE, 0, false,
	 "{\"adjust\": {\"process\": {\"env\": [\"a=b\"]}}}", "", 0, NULL},
	{"widening adjust without the opt-in", TS_PLUGIN_STAGE_PRE_CREATE, 0, false,
	 "{\"adjust\": {\"annotations\": {\"a\": \"b\"}}}", "", -EINVAL,
	 "adjust: '/annotations/a': not allowed without \"annotations\" in sandbox.adjust 'b'"},
	{"bad adjust", TS_PLUGIN_STAGE_PRE_CREATE, 0, false, "{\"adjust\": {\"hooks\": {}}}", "",
	 -EINVAL, "adjust: '/hooks': not allowed"},
};

static void test_result_rows(void **state)
{
	struct ts_plugin p = {.type = (char *)"t", .path = (char *)"/t", .timeout_ms = 100};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(result_rows); i++) {
		const struct result_row *row = &result_rows[i];
		cleanup_free char *out = strdup(row->out), *errout = strdup(row->errout);
		struct ts_plugin_output o = {
			.wait_status = row->wait_status,
			.timed_out = row->timed_out,
			.out = out,
			.out_len = strlen(row->out),
			.errout = errout,
			.errout_len = strlen(row->errout),
		};
		cleanup_json struct ts_json *res = NULL;
		cleanup_error struct ts_error *err = NULL;
		int r = ts_plugin_result_check(&p, row->stage, &o, &res, &err);

		if (r != row->want_ret)
			fail_msg("%s: got %d (%s)", row->name, r, err ? err->msg : "");
		if (row->want_msg != NULL && strcmp(err->msg, row->want_msg) != 0)
			fail_msg("%s:\n got  %s\n want %s", row->name, err->msg, row->want_msg);
		if (r == 0)
			assert_non_null(res);
		else
			assert_null(res);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_full),
		cmocka_unit_test(test_request_minimal),
		cmocka_unit_test(test_result_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
