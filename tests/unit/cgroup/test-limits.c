/* Unit tests of src/cgroup/limits.c: the "cgroup" member of the toposhim config. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

static struct ts_json *parse(const char *text)
{
	struct ts_json *j = NULL;
	struct ts_error *e = NULL;

	if (ts_json_parse(text, strlen(text), "t.json", &j, &e) < 0)
		fail_msg("parse: %s", e->msg);
	return j;
}

static void test_builtins(void **state)
{
	struct ts_cgroup_config c;
	cleanup_error struct ts_error *e = NULL;
	cleanup_json struct ts_json *j = parse("{\"cgroup\":null}");

	(void)state;
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(ts_cgroup_config_read(pass ? j : NULL, "t.json", &c, &e), 0);
		assert_null(c.root);
		assert_int_equal(c.mode, TS_CGROUP_MODE_INVALID);
		assert_int_equal(c.n_classes, 3);
		const struct ts_cgroup_class_limits *l = ts_cgroup_config_class(&c, "critical");
		assert_non_null(l);
		assert_int_equal(l->cpu_weight, 1000);
		assert_int_equal(l->memory_min.kind, TS_CGROUP_MEM_REQUEST);
		assert_int_equal(l->cpu_idle, -1);
		assert_int_equal(l->memory_oom_group, -1);
		assert_false(l->override_engine);
		l = ts_cgroup_config_class(&c, "standard");
		assert_int_equal(l->cpu_weight, 100);
		assert_int_equal(l->memory_min.kind, TS_CGROUP_MEM_UNSET);
		l = ts_cgroup_config_class(&c, "batch");
		assert_int_equal(l->cpu_weight, 1);
		assert_int_equal(l->cpu_idle, 1);
		assert_null(ts_cgroup_config_class(&c, "gold"));
		assert_null(ts_cgroup_config_class(&c, NULL));
		ts_cgroup_config_release(&c);
	}
}

static void test_values(void **state)
{
	struct ts_cgroup_config c;
	cleanup_error struct ts_error *e = NULL;
	cleanup_json struct ts_json *j = parse(
		"{\"cgroup\":{\"root\":\"/tmp/cg\",\"mode\":\"unified\",\"classes\":{"
		"\"batch\":{\"cpu.weight\":5,\"cpu.idle\":null,\"pids.max\":\"max\"},"
		"\"web\":{\"cpu.max\":\"max 50000\",\"memory.high\":\"0.25\",\"memory.low\":\"1\","
		"\"memory.min\":\"0.000001\",\"memory.oom.group\":1,\"io.weight\":10000,"
		"\"pids.max\":64,\"override_engine\":true},"
		"\"q\":{\"cpu.max\":\"20000\",\"memory.high\":4096,\"memory.oom.group\":false}}}}");

	(void)state;
	assert_int_equal(ts_cgroup_config_read(j, "t.json", &c, &e), 0);
	assert_string_equal(c.root, "/tmp/cg");
	assert_int_equal(c.mode, TS_CGROUP_MODE_UNIFIED);
	assert_int_equal(c.n_classes, 5);
	const struct ts_cgroup_class_limits *l = ts_cgroup_config_class(&c, "batch");
	assert_int_equal(l->cpu_weight, 5);
	assert_int_equal(l->cpu_idle, -1);
	assert_int_equal(l->pids_max, -1);
	l = ts_cgroup_config_class(&c, "web");
	assert_string_equal(l->name, "web");
	assert_int_equal(l->cpu_weight, 0);
	assert_true(l->has_cpu_max);
	assert_int_equal(l->cpu_max_quota_usec, -1);
	assert_int_equal(l->cpu_max_period_usec, 50000);
	assert_int_equal(l->memory_high.kind, TS_CGROUP_MEM_FRACTION);
	assert_int_equal(l->memory_high.fraction_ppm, 250000);
	assert_int_equal(l->memory_low.kind, TS_CGROUP_MEM_FRACTION);
	assert_int_equal(l->memory_low.fraction_ppm, 1000000);
	assert_int_equal(l->memory_min.fraction_ppm, 1);
	assert_int_equal(l->memory_oom_group, 1);
	assert_int_equal(l->io_weight, 10000);
	assert_int_equal(l->pids_max, 64);
	assert_true(l->override_engine);
	l = ts_cgroup_config_class(&c, "q");
	assert_int_equal(l->cpu_max_quota_usec, 20000);
	assert_int_equal(l->cpu_max_period_usec, 0);
	assert_int_equal(l->memory_high.kind, TS_CGROUP_MEM_BYTES);
	assert_int_equal(l->memory_high.bytes, 4096);
	assert_int_equal(l->memory_oom_group, 0);
	ts_cgroup_config_release(&c);
	assert_null(c.classes);

	cleanup_json struct ts_json *a = parse("{\"cgroup\":{\"mode\":\"auto\"}}");
	assert_int_equal(ts_cgroup_config_read(a, "t.json", &c, &e), 0);
	assert_int_equal(c.mode, TS_CGROUP_MODE_INVALID);
	ts_cgroup_config_release(&c);
}

static void test_errors(void **state)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
		{"{\"cgroup\":[]}", "t.json: '/cgroup': expected object, got array"},
		{"{\"cgroup\":{\"root\":1}}",
		 "t.json: '/cgroup/root': expected string, got number"},
		{"{\"cgroup\":{\"root\":\"x\"}}", "t.json: '/cgroup/root': not absolute 'x'"},
		{"{\"cgroup\":{\"mode\":\"v3\"}}",
		 "t.json: '/cgroup/mode': invalid cgroup mode 'v3'"},
		{"{\"cgroup\":{\"bogus\":1}}", "t.json: '/cgroup/bogus': unknown key"},
		{"{\"cgroup\":{\"classes\":1}}",
		 "t.json: '/cgroup/classes': expected object, got number"},
		{"{\"cgroup\":{\"classes\":{\"a\":[]}}}",
		 "t.json: '/cgroup/classes/a': expected object, got array"},
		{"{\"cgroup\":{\"classes\":{\"\":{}}}}",
		 "t.json: '/cgroup/classes/': invalid class name"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.weight\":0}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.weight': out of range '0' (1..10000)"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.weight\":10001}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.weight': out of range '10001' (1..10000)"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.weight\":1.5}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.weight': not an integer '1.5'"},
		{"{\"cgroup\":{\"classes\":{\"a/b\":{\"cpu.weight\":\"x\"}}}}",
		 "t.json: '/cgroup/classes/a~1b/cpu.weight': expected number, got string"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.max\":\"5 x\"}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.max': invalid cpu.max '5 x'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.max\":\"500 100000\"}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.max': invalid cpu.max '500 100000'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.max\":\"max 10\"}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.max': invalid cpu.max 'max 10'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.max\":50000}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.max': expected string, got number"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.idle\":2}}}}",
		 "t.json: '/cgroup/classes/batch/cpu.idle': out of range '2' (0..1)"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"memory.high\":\"1.5\"}}}}",
		 "t.json: '/cgroup/classes/batch/memory.high': invalid memory value '1.5'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"memory.high\":\"0\"}}}}",
		 "t.json: '/cgroup/classes/batch/memory.high': invalid memory value '0'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"memory.min\":\"0.0000001\"}}}}",
		 "t.json: '/cgroup/classes/batch/memory.min': invalid memory value '0.0000001'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"memory.low\":\"max\"}}}}",
		 "t.json: '/cgroup/classes/batch/memory.low': invalid memory value 'max'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"memory.low\":-1}}}}",
		 "t.json: '/cgroup/classes/batch/memory.low': out of range '-1' "
		 "(0..9223372036854775807)"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"memory.low\":true}}}}",
		 "t.json: '/cgroup/classes/batch/memory.low': expected number or string, got "
		 "boolean"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"memory.oom.group\":\"yes\"}}}}",
		 "t.json: '/cgroup/classes/batch/memory.oom.group': expected boolean, got string"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"pids.max\":\"lots\"}}}}",
		 "t.json: '/cgroup/classes/batch/pids.max': invalid pids.max 'lots'"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"pids.max\":0}}}}",
		 "t.json: '/cgroup/classes/batch/pids.max': out of range '0' "
		 "(1..9223372036854775807)"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"override_engine\":1}}}}",
		 "t.json: '/cgroup/classes/batch/override_engine': expected boolean, got number"},
		{"{\"cgroup\":{\"classes\":{\"batch\":{\"foo\":1}}}}",
		 "t.json: '/cgroup/classes/batch/foo': unknown key"},
	};
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *j = parse(rows[i].in);
		cleanup_error struct ts_error *e = NULL;
		struct ts_cgroup_config c = {.root = (char *)1};
		int r = ts_cgroup_config_read(j, "t.json", &c, &e);
		if (r != -EINVAL)
			fail_msg("%s: ret %d", rows[i].in, r);
		if (strcmp(e->msg, rows[i].want) != 0)
			fail_msg("%s:\n  got  %s\n  want %s", rows[i].in, e->msg, rows[i].want);
		assert_ptr_equal(c.root, (char *)1);
	}
}

static void test_resolve(void **state)
{
	char dir[] = "/tmp/ts-cgroup-resolve-XXXXXX";
	char file[128];
	struct ts_cgroup_config c;
	cleanup_error struct ts_error *e = NULL;
	const char *root = NULL;
	enum ts_cgroup_mode mode = TS_CGROUP_MODE_INVALID;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/" TS_CGROUP_MODE_FILE, dir);
	FILE *f = fopen(file, "we");
	assert_non_null(f);
	fputs("hybrid\n", f);
	fclose(f);
	assert_int_equal(setenv(TS_CGROUP_ROOT_ENV, dir, 1), 0);
	/* Auto: the mode file of the tree the environment names. */
	assert_int_equal(ts_cgroup_config_read(NULL, "t.json", &c, &e), 0);
	assert_int_equal(ts_cgroup_config_resolve(&c, &root, &mode, &e), 0);
	assert_string_equal(root, dir);
	assert_int_equal(mode, TS_CGROUP_MODE_HYBRID);
	/* The config's mode wins over the file. */
	c.mode = TS_CGROUP_MODE_UNIFIED;
	assert_int_equal(ts_cgroup_config_resolve(&c, &root, &mode, &e), 0);
	assert_int_equal(mode, TS_CGROUP_MODE_UNIFIED);
	ts_cgroup_config_release(&c);
	assert_int_equal(unsetenv(TS_CGROUP_ROOT_ENV), 0);
	assert_int_equal(unlink(file), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_resolve),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
