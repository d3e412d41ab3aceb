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

static const struct privilege_row {
	const char *name;
	const char *adjust;
	unsigned allow;	      /* sandbox.adjust bits */
	const char *prefix;   /* one "annotations:<prefix>" entry, or NULL */
	const char *want_msg; /* NULL: accepted */
} privilege_rows[] = {
	{"limits and env need nothing",
	 "{\"linux\": {\"resources\": {\"memory\": {\"limit\": 8}, \"cpu\": {\"cpus\": \"1\"}}},"
	 " \"process\": {\"env\": [\"A=1\"]}}",
	 0, NULL, NULL},
	{"allow-all devices",
	 "{\"linux\": {\"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rwm\"}]}}}", 0,
	 NULL,
	 "adjust: '/linux/resources/devices': not allowed without \"devices\" in sandbox.adjust "
	 "'[{\"allow\":true,\"access\":\"rwm\"}]'"},
	{"a deny-only device list replaces the list too",
	 "{\"linux\": {\"resources\": {\"devices\": [{\"allow\": false, \"access\": \"rwm\"}]}}}",
	 TS_PLUGIN_ADJUST_UNIFIED | TS_PLUGIN_ADJUST_ANNOTATIONS, NULL,
	 "adjust: '/linux/resources/devices': not allowed without \"devices\" in sandbox.adjust "
	 "'[{\"allow\":false,\"access\":\"rwm\"}]'"},
	{"devices allowed",
	 "{\"linux\": {\"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rwm\"}]}}}",
	 TS_PLUGIN_ADJUST_DEVICES, NULL, NULL},
	{"unified key", "{\"linux\": {\"resources\": {\"unified\": {\"memory.max\": \"max\"}}}}", 0,
	 NULL,
	 "adjust: '/linux/resources/unified/memory.max': not allowed without \"unified\" in "
	 "sandbox.adjust 'max'"},
	{"unified allowed",
	 "{\"linux\": {\"resources\": {\"unified\": {\"memory.max\": \"max\"}}}}",
	 TS_PLUGIN_ADJUST_UNIFIED, NULL, NULL},
	{"seccomp receiver annotation",
	 "{\"annotations\": {\"run.oci.seccomp.receiver\": \"/run/evil.sock\"}}", 0, NULL,
	 "adjust: '/annotations/run.oci.seccomp.receiver': not allowed without \"annotations\" in "
	 "sandbox.adjust '/run/evil.sock'"},
	{"annotation outside the prefix",
	 "{\"annotations\": {\"example.com/a\": \"1\", \"run.oci.handler\": \"krun\"}}", 0,
	 "example.com/",
	 "adjust: '/annotations/run.oci.handler': not allowed without \"annotations\" in "
	 "sandbox.adjust 'krun'"},
	{"annotation in the prefix", "{\"annotations\": {\"example.com/a\": \"1\"}}", 0,
	 "example.com/", NULL},
	{"any annotation", "{\"annotations\": {\"run.oci.handler\": \"krun\"}}",
	 TS_PLUGIN_ADJUST_ANNOTATIONS, NULL, NULL},
	{"toposhim's own annotation, even allowed",
	 "{\"annotations\": {\"toposhim.io/placed-cpus\": \"0-31\"}}", TS_PLUGIN_ADJUST_ANNOTATIONS,
	 "toposhim.io/",
	 "adjust: '/annotations/toposhim.io~1placed-cpus': toposhim's own annotation, never from a "
	 "plugin '0-31'"},
};

static void test_privilege_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(privilege_rows); i++) {
		const struct privilege_row *row = &privilege_rows[i];
		cleanup_free char *prefix = row->prefix != NULL ? strdup(row->prefix) : NULL;
		char *prefixes[2] = {prefix, NULL};
		struct ts_plugin_sandbox sb = {.adjust = row->allow,
					       .annotation_prefixes =
						       prefix != NULL ? prefixes : NULL};
		cleanup_json struct ts_json *adjust = parse(row->adjust);
		cleanup_error struct ts_error *err = NULL;
		int r;

		assert_int_equal(ts_plugin_adjust_validate(adjust, "adjust", &err), 0);
		r = ts_plugin_adjust_check_privileges(adjust, &sb, &err);
		if (row->want_msg == NULL) {
			if (r != 0)
				fail_msg("%s: %s", row->name, err->msg);
			continue;
		}
		if (r != -EINVAL || strcmp(err->msg, row->want_msg) != 0)
			fail_msg("%s:\n got  %d %s\n want %s", row->name, r, err ? err->msg : "",
				 row->want_msg);
	}
}

/* A refusal quotes at most 200 bytes of the value. */
static void test_privilege_quote_bounded(void **state)
{
	char text[4200];
	cleanup_json struct ts_json *adjust = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_sandbox sb = {0};
	size_t o;

	(void)state;
	o = (size_t)snprintf(text, sizeof(text), "{\"annotations\": {\"k\": \"");
	memset(text + o, 'v', 4000);
	o += 4000;
	snprintf(text + o, sizeof(text) - o, "\"}}");
	adjust = parse(text);
	assert_int_equal(ts_plugin_adjust_check_privileges(adjust, &sb, &err), -EINVAL);
	assert_true(strlen(err->msg) < 300);
	assert_non_null(strstr(err->msg, "vvv...'"));
}

static const struct fields_row {
	const char *name;
	const char *adjust;
	unsigned want;
} fields_rows[] = {
	{"empty", "{}", 0},
	{"cpus and mems",
	 "{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"1\", \"mems\": \"0\"}}}}",
	 TS_PLUGIN_ADJUST_CPUS | TS_PLUGIN_ADJUST_MEMS},
	{"cpu shares are limits", "{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 2}}}}",
	 TS_PLUGIN_ADJUST_LIMITS},
	{"everything",
	 "{\"linux\": {\"resources\": {\"devices\": [], \"unified\": {}, \"pids\": {\"limit\": 1},"
	 " \"cpu\": {\"mems\": \"0\"}}}, \"process\": {\"env\": []}, \"annotations\": {}}",
	 TS_PLUGIN_ADJUST_MEMS | TS_PLUGIN_ADJUST_DEVICES | TS_PLUGIN_ADJUST_UNIFIED |
		 TS_PLUGIN_ADJUST_LIMITS | TS_PLUGIN_ADJUST_ENV | TS_PLUGIN_ADJUST_ANNOTATIONS},
};

static void test_fields(void **state)
{
	cleanup_json struct ts_json *a = parse("{\"linux\": {\"resources\": {\"cpu\": "
					       "{\"cpus\": \"2-3\", \"mems\": \"1\"}}}}");

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(fields_rows); i++) {
		cleanup_json struct ts_json *adjust = parse(fields_rows[i].adjust);
		unsigned got = ts_plugin_adjust_fields(adjust);

		if (got != fields_rows[i].want)
			fail_msg("%s: got %#x, want %#x", fields_rows[i].name, got,
				 fields_rows[i].want);
	}
	assert_int_equal(ts_plugin_adjust_fields(NULL), 0);
	assert_string_equal(ts_plugin_adjust_cpus(a), "2-3");
	assert_string_equal(ts_plugin_adjust_mems(a), "1");
	assert_null(ts_plugin_adjust_cpus(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_validate_rows),
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_apply_creates_and_refuses),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_privilege_rows),
		cmocka_unit_test(test_privilege_quote_bounded),
		cmocka_unit_test(test_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
