/* Unit tests of src/plugin/adjust.c: what a pre-create adjust may change. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

static struct ts_json *parse(const char *text)
{
	struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_json_parse(text, strlen(text), "t", &j, &err) < 0)
		fail_msg("%s: %s", text, err->msg);
	return j;
}

static const struct validate_row {
	const char *name;
	const char *adjust;
	const char *want_msg; /* NULL: valid */
} rows[] = {
	{"empty", "{}", NULL},
	{"all allowed",
	 "{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"0-3,8\", \"mems\": \"0\", \"quota\": "
	 "-1},"
	 " \"memory\": {\"limit\": 1024}, \"pids\": {\"limit\": 10}}},"
	 " \"process\": {\"env\": [\"A=1\", \"EMPTY=\"]}, \"annotations\": {\"k\": \"v\"}}",
	 NULL},
	{"not an object", "[]", "x: '': expected object, got array"},
	{"top-level key", "{\"hooks\": {}}", "x: '/hooks': not allowed"},
	{"root path", "{\"root\": {\"path\": \"/\"}}", "x: '/root': not allowed"},
	{"linux key", "{\"linux\": {\"namespaces\": []}}", "x: '/linux/namespaces': not allowed"},
	{"linux devices", "{\"linux\": {\"devices\": []}}", "x: '/linux/devices': not allowed"},
	{"resources type", "{\"linux\": {\"resources\": []}}",
	 "x: '/linux/resources': expected object, got array"},
	{"resources key", "{\"linux\": {\"resources\": {\"cpuset\": {}}}}",
	 "x: '/linux/resources/cpuset': not allowed"},
	{"cpus list", "{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"0-3,x\"}}}}",
	 "x: '/linux/resources/cpu/cpus': invalid cpu list '0-3,x'"},
	{"cpus reversed", "{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"3-1\"}}}}",
	 "x: '/linux/resources/cpu/cpus': invalid cpu list '3-1'"},
	{"cpus trailing comma", "{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"1,\"}}}}",
	 "x: '/linux/resources/cpu/cpus': invalid cpu list '1,'"},
	{"mems type", "{\"linux\": {\"resources\": {\"cpu\": {\"mems\": 0}}}}",
	 "x: '/linux/resources/cpu/mems': expected string, got number"},
	{"process args", "{\"process\": {\"args\": [\"sh\"]}}", "x: '/process/args': not allowed"},
	{"process user", "{\"process\": {\"user\": {\"uid\": 0}}}",
	 "x: '/process/user': not allowed"},
	{"env type", "{\"process\": {\"env\": \"A=1\"}}",
	 "x: '/process/env': expected array, got string"},
	{"env entry", "{\"process\": {\"env\": [\"A=1\", \"B\"]}}",
	 "x: '/process/env/1': invalid entry 'B' (expected NAME=VALUE)"},
	{"env empty name", "{\"process\": {\"env\": [\"=1\"]}}",
	 "x: '/process/env/0': invalid entry '=1' (expected NAME=VALUE)"},
	{"annotation value", "{\"annotations\": {\"a/b\": 1}}",
	 "x: '/annotations/a~1b': expected string, got number"},
	{"annotation key", "{\"annotations\": {\"\": \"v\"}}", "x: '/annotations': empty key"},
};

static void test_validate_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *adjust = parse(rows[i].adjust);
		cleanup_error struct ts_error *err = NULL;
		int r = ts_plugin_adjust_validate(adjust, "x", &err);

		if (rows[i].want_msg == NULL) {
			if (r != 0)
				fail_msg("%s: %s", rows[i].name, err->msg);
			continue;
		}
		if (r != -EINVAL || strcmp(err->msg, rows[i].want_msg) != 0)
			fail_msg("%s:\n got  %d %s\n want %s", rows[i].name, r, err ? err->msg : "",
				 rows[i].want_msg);
	}
}

static void test_apply(void **state)
{
	cleanup_json struct ts_json *config = parse(
		"{\"ociVersion\": \"1.0.2\", \"process\": {\"env\": [\"PATH=/bin\", \"A=0\"]},"
		" \"linux\": {\"resources\": {\"cpu\": {\"shares\": 1024, \"cpus\": \"0-7\"}},"
		" \"namespaces\": []}, \"annotations\": {\"x\": \"1\"}}");
	cleanup_json struct ts_json *adjust =
		parse("{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"2-3\", \"mems\": \"0\"},"
		      " \"pids\": {\"limit\": 64}}}, \"process\": {\"env\": [\"A=1\", \"B=2\"]},"
		      " \"annotations\": {\"x\": \"2\", \"y\": \"3\"}}");
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	struct ts_json *before = config;

	(void)state;
	assert_int_equal(ts_plugin_adjust_apply(config, adjust, "adjust", &err), 0);
	assert_ptr_equal(config, before);
	assert_int_equal(ts_json_serialize(config, false, &text, NULL, &err), 0);
	assert_string_equal(text, "{\"ociVersion\":\"1.0.2\",\"process\":{\"env\":[\"PATH=/bin\","
				  "\"A=1\",\"B=2\"]},\"linux\":{\"resources\":{\"cpu\":{"
				  "\"shares\":1024,\"cpus\":\"2-3\",\"mems\":\"0\"},\"pids\":{"
				  "\"limit\":64}},\"namespaces\":[]},\"annotations\":{\"x\":\"2\","
				  "\"y\":\"3\"}}");
}

static void test_apply_creates_and_refuses(void **state)
{
	cleanup_json struct ts_json *config = parse("{\"ociVersion\": \"1.0.2\"}");
	cleanup_json struct ts_json *adjust =
		parse("{\"linux\": {\"resources\": {\"memory\": {\"limit\": 8}}}}");
	cleanup_json struct ts_json *wrong = parse("{\"process\": {\"cwd\": \"/\"}}");
	cleanup_error struct ts_error *err = NULL, *err2 = NULL;
	cleanup_free char *text = NULL, *text2 = NULL;

	(void)state;
	assert_int_equal(ts_plugin_adjust_apply(config, adjust, "adjust", &err), 0);
	assert_int_equal(ts_json_serialize(config, false, &text, NULL, &err), 0);
	assert_string_equal(text, "{\"ociVersion\":\"1.0.2\",\"linux\":{\"resources\":{"
				  "\"memory\":{\"limit\":8}}}}");
	/* A refused adjust leaves the config as it was. */
	assert_int_equal(ts_plugin_adjust_apply(config, wrong, "plugin 'p' (/p): adjust", &err),
			 -EINVAL);
	assert_string_equal(err->msg, "plugin 'p' (/p): adjust: '/process/cwd': not allowed");
	assert_int_equal(ts_json_serialize(config, false, &text2, NULL, &err2), 0);
	assert_string_equal(text, text2);
	/* A config.json member of the wrong type is reported, config untouched. */
	ts_error_clear(&err2);
	ts_json_free(config);
	config = parse("{\"linux\": []}");
	assert_int_equal(ts_plugin_adjust_apply(config, adjust, "adjust", &err2), -EINVAL);
	assert_string_equal(err2->msg, "'/linux': expected object, got array");
}

static void test_merge(void **state)
{
	cleanup_json struct ts_json *acc = parse("{}");
	cleanup_json struct ts_json *a =
		parse("{\"process\": {\"env\": [\"A=1\"]}, \"linux\": {\"resources\": {\"cpu\": "
		      "{\"cpus\": \"0\", \"mems\": \"0\"}}}}");
	cleanup_json struct ts_json *b =
		parse("{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"1\"}}}, \"process\": "
		      "{\"env\": [\"A=2\"]}}");
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;

	(void)state;
	assert_int_equal(ts_plugin_adjust_merge(acc, a, &err), 0);
	assert_int_equal(ts_plugin_adjust_merge(acc, b, &err), 0);
	assert_int_equal(ts_json_serialize(acc, false, &text, NULL, &err), 0);
	assert_string_equal(text,
			    "{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"1\",\"mems\":\"0\"}}},"
			    "\"process\":{\"env\":[\"A=1\",\"A=2\"]}}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_rows),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_apply_creates_and_refuses),
		cmocka_unit_test(test_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
