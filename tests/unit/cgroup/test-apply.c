/* Unit tests of src/cgroup/apply.c: class limits -> config.json, exact JSON and messages. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

struct row {
	const char *name;
	const char *toposhim_config; /* the toposhim config text */
	const char *class_name;
	enum ts_cgroup_mode mode;
	const char *in;	       /* config.json before */
	int want_ret;	       /* messages, or -errno */
	const char *want_json; /* compact, after (NULL: unchanged / error) */
	const char *want_msgs; /* messages joined by '\n', or the error text */
};

#define GIB "1073741824"

static const struct row rows[] = {
	{"standard on unified: weight as shares and unified", "{}", "standard",
	 TS_CGROUP_MODE_UNIFIED, "{}", 0,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":1024},\"unified\":{\"cpu.weight\":\"100\"}"
	 "}}}",
	 ""},
	{"standard over a null resources", "{}", "standard", TS_CGROUP_MODE_UNIFIED,
	 "{\"ociVersion\":\"1.0.2\",\"linux\":{\"resources\":null,\"cgroupsPath\":\"/a\"}}", 0,
	 "{\"ociVersion\":\"1.0.2\",\"linux\":{\"resources\":{\"cpu\":{\"shares\":1024},"
	 "\"unified\":{\"cpu.weight\":\"100\"}},\"cgroupsPath\":\"/a\"}}",
	 ""},
	{"critical on unified: memory.min is the limit without a reservation", "{}", "critical",
	 TS_CGROUP_MODE_UNIFIED, "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB "}}}}", 0,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB "},\"cpu\":{\"shares\":10240},"
	 "\"unified\":{\"cpu.weight\":\"1000\",\"memory.min\":\"" GIB "\"}}}}",
	 ""},
	{"critical on unified: memory.min is the reservation", "{}", "critical",
	 TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB ",\"reservation\":536870912}}}}",
	 0,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB ",\"reservation\":536870912},"
	 "\"cpu\":{\"shares\":10240},"
	 "\"unified\":{\"cpu.weight\":\"1000\",\"memory.min\":\"536870912\"}}}}",
	 ""},
	{"batch on unified: idle, so no unified cpu.weight", "{}", "batch", TS_CGROUP_MODE_UNIFIED,
	 "{}", 0,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":10},\"unified\":{"
	 "\"cpu.idle\":\"1\"}}}}",
	 ""},
	{"batch on hybrid: no unified, the built-in cpu.idle skipped quietly", "{}", "batch",
	 TS_CGROUP_MODE_HYBRID, "{\"linux\":{\"resources\":{}}}", 0,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":10}}}}", ""},
	{"batch on hybrid: a configured cpu.idle is skipped with a message",
	 "{\"cgroup\":{\"classes\":{\"batch\":{\"cpu.idle\":1}}}}", "batch", TS_CGROUP_MODE_HYBRID,
	 "{\"linux\":{\"resources\":{}}}", 1,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":10}}}}",
	 "config.json: class 'batch': cgroup v1 (hybrid): skipped cpu.idle (no v1 equivalent)"},
	{"engine shares win, engine unified keys kept", "{}", "critical", TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":2},\"unified\":{\"memory.swap.max\":\"0\","
	 "\"memory.oom.group\":\"1\"}}}}",
	 2,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":2},\"unified\":{\"memory.swap.max\":\"0\","
	 "\"memory.oom.group\":\"1\"}}}}",
	 "config.json: '/linux/resources/cpu/shares': engine value '2' kept over class 'critical' "
	 "value '10240' (cpu.weight 1000)\n"
	 "config.json: class 'critical': memory.min 'request' skipped: no "
	 "'/linux/resources/memory/reservation' or '/linux/resources/memory/limit'"},
	{"override_engine replaces shares, merges into unified",
	 "{\"cgroup\":{\"classes\":{\"critical\":{\"override_engine\":true,\"memory.min\":null}}}}",
	 "critical", TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":2},\"unified\":{\"memory.swap.max\":\"0\","
	 "\"memory.oom.group\":\"1\"}}}}",
	 1,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":10240},\"unified\":{\"memory.swap.max\":"
	 "\"0\",\"memory.oom.group\":\"1\",\"cpu.weight\":\"1000\"}}}}",
	 "config.json: '/linux/resources/cpu/shares': engine value '2' replaced by class "
	 "'critical' value '10240' (cpu.weight 1000)"},
	{"engine values equal to the class: no conflict, unified added", "{}", "standard",
	 TS_CGROUP_MODE_UNIFIED, "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":1024}}}}", 0,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":1024},\"unified\":{\"cpu.weight\":\"100\"}"
	 "}}}",
	 ""},
	{"engine unified cpu.weight wins", "{}", "standard", TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"unified\":{\"cpu.weight\":\"50\"}}}}", 1,
	 "{\"linux\":{\"resources\":{\"unified\":{\"cpu.weight\":\"50\"}}}}",
	 "config.json: '/linux/resources/unified/cpu.weight': engine value '50' kept over class "
	 "'standard' value '100' (cpu.weight 100)"},
	{"every key on unified",
	 "{\"cgroup\":{\"classes\":{\"web\":{\"cpu.max\":\"50000 100000\",\"memory.high\":\"0.9\","
	 "\"memory.low\":268435456,\"memory.oom.group\":true,\"io.weight\":50,\"pids.max\":512}}}}",
	 "web", TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB "}}}}", 0,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB ",\"reservation\":268435456},"
	 "\"cpu\":{\"quota\":50000,\"period\":100000},\"unified\":{\"memory.high\":\"966367641\","
	 "\"memory.oom.group\":\"1\",\"io.weight\":\"default 50\"},\"pids\":{\"limit\":512}}}}",
	 ""},
	{"every key on legacy: one message for the skipped ones",
	 "{\"cgroup\":{\"classes\":{\"web\":{\"cpu.max\":\"50000 100000\",\"memory.high\":\"0.9\","
	 "\"memory.low\":268435456,\"memory.oom.group\":true,\"io.weight\":50,\"pids.max\":512}}}}",
	 "web", TS_CGROUP_MODE_LEGACY,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB "}}}}", 1,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":" GIB ",\"reservation\":268435456},"
	 "\"cpu\":{\"quota\":50000,\"period\":100000},\"pids\":{\"limit\":512}}}}",
	 "config.json: class 'web': cgroup v1 (legacy): skipped memory.high, memory.oom.group, "
	 "io.weight (no v1 equivalent)"},
	{"override replaces an engine unified cpu.max",
	 "{\"cgroup\":{\"classes\":{\"x\":{\"cpu.max\":\"max\",\"override_engine\":true}}}}", "x",
	 TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"unified\":{\"cpu.max\":\"20000 100000\"}}}}", 1,
	 "{\"linux\":{\"resources\":{\"unified\":{\"cpu.max\":\"max\"},\"cpu\":{\"quota\":-1}}}}",
	 "config.json: '/linux/resources/unified/cpu.max': engine value '20000 100000' replaced by "
	 "class 'x' value 'max' (cpu.max 'max')"},
	{"engine quota wins over cpu.max, period untouched",
	 "{\"cgroup\":{\"classes\":{\"x\":{\"cpu.max\":\"max 50000\"}}}}", "x",
	 TS_CGROUP_MODE_HYBRID, "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":20000}}}}", 1,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":20000}}}}",
	 "config.json: '/linux/resources/cpu/quota': engine value '20000' kept over class 'x' "
	 "value "
	 "'-1' (cpu.max 'max 50000')"},
	{"pids.max max", "{\"cgroup\":{\"classes\":{\"p\":{\"pids.max\":\"max\"}}}}", "p",
	 TS_CGROUP_MODE_UNIFIED, "{}", 0, "{\"linux\":{\"resources\":{\"pids\":{\"limit\":-1}}}}",
	 ""},
	{"memory.high max", "{\"cgroup\":{\"classes\":{\"h\":{\"memory.high\":\"max\"}}}}", "h",
	 TS_CGROUP_MODE_UNIFIED, "{}", 0,
	 "{\"linux\":{\"resources\":{\"unified\":{\"memory.high\":\"max\"}}}}", ""},
	{"fraction without a limit is skipped",
	 "{\"cgroup\":{\"classes\":{\"h\":{\"memory.high\":\"0.5\"}}}}", "h",
	 TS_CGROUP_MODE_UNIFIED, "{\"linux\":{\"resources\":{\"memory\":{\"limit\":-1}}}}", 1,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":-1}}}}",
	 "config.json: class 'h': memory.high '0.5' skipped: no '/linux/resources/memory/limit'"},
	{"unknown class: nothing", "{}", "gold", TS_CGROUP_MODE_UNIFIED, "{\"a\":1}", 0,
	 "{\"a\":1}", ""},
	{"error: unified is an array", "{}", "standard", TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"unified\":[]}}}", -EINVAL, NULL,
	 "config.json: '/linux/resources/unified': expected object, got array"},
	{"error: unified value is a number", "{}", "standard", TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"unified\":{\"cpu.weight\":100}}}}", -EINVAL, NULL,
	 "config.json: '/linux/resources/unified/cpu.weight': expected string, got number"},
	{"error: memory limit not an integer", "{}", "critical", TS_CGROUP_MODE_UNIFIED,
	 "{\"linux\":{\"resources\":{\"memory\":{\"limit\":1.5}}}}", -EINVAL, NULL,
	 "config.json: '/linux/resources/memory/limit': not an integer '1.5'"},
	{"error: shares is a string", "{}", "standard", TS_CGROUP_MODE_HYBRID,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"shares\":\"1024\"}}}}", -EINVAL, NULL,
	 "config.json: '/linux/resources/cpu/shares': expected number, got string"},
	{"error: linux is a string", "{}", "standard", TS_CGROUP_MODE_HYBRID, "{\"linux\":\"x\"}",
	 -EINVAL, NULL, "config.json: '/linux': expected object, got string"},
};

static struct ts_json *parse(const char *text)
{
	struct ts_json *j = NULL;
	struct ts_error *e = NULL;

	if (ts_json_parse(text, strlen(text), "t.json", &j, &e) < 0)
		fail_msg("parse: %s", e->msg);
	return j;
}

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *row = &rows[i];
		cleanup_json struct ts_json *tcfg = parse(row->toposhim_config);
		cleanup_json struct ts_json *oci = parse(row->in);
		struct ts_cgroup_config cfg;
		cleanup_error struct ts_error *e = NULL;
		cleanup_strv char **msgs = NULL;
		cleanup_free char *out = NULL;
		char joined[2048] = "";

		assert_int_equal(ts_cgroup_config_read(tcfg, "t.json", &cfg, &e), 0);
		const struct ts_cgroup_class_limits *l =
			ts_cgroup_config_class(&cfg, row->class_name);
		int r = ts_cgroup_apply_class(oci, "config.json", l, row->mode, &msgs, &e);
		ts_cgroup_config_release(&cfg);
		if (r != row->want_ret)
			fail_msg("%s: ret %d, want %d (%s)", row->name, r, row->want_ret,
				 e ? e->msg : "");
		if (r < 0) {
			if (strcmp(e->msg, row->want_msgs) != 0)
				fail_msg("%s: error\n  got  %s\n  want %s", row->name, e->msg,
					 row->want_msgs);
			continue;
		}
		for (size_t k = 0; msgs != NULL && msgs[k] != NULL; k++) {
			strcat(joined, k ? "\n" : "");
			strcat(joined, msgs[k]);
		}
		if (strcmp(joined, row->want_msgs) != 0)
			fail_msg("%s: messages\n  got  %s\n  want %s", row->name, joined,
				 row->want_msgs);
		assert_int_equal(ts_json_serialize(oci, false, &out, NULL, &e), 0);
		if (strcmp(out, row->want_json) != 0)
			fail_msg("%s: json\n  got  %s\n  want %s", row->name, out, row->want_json);
	}
}

static void test_null_limits_and_bad_mode(void **state)
{
	(void)state;
	cleanup_json struct ts_json *oci = parse("{}");
	cleanup_error struct ts_error *e = NULL;
	char **msgs = (char **)1;

	assert_int_equal(
		ts_cgroup_apply_class(oci, "config.json", NULL, TS_CGROUP_MODE_UNIFIED, &msgs, &e),
		0);
	assert_null(msgs);
	struct ts_cgroup_class_limits l = {.name = "x", .cpu_idle = -1, .memory_oom_group = -1};
	assert_int_equal(
		ts_cgroup_apply_class(oci, "config.json", &l, TS_CGROUP_MODE_INVALID, &msgs, &e),
		-EINVAL);
	assert_string_equal(e->msg, "config.json: invalid cgroup mode");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_null_limits_and_bad_mode),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
