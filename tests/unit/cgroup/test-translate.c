/* Unit tests of src/cgroup/translate.c: the written config.json, exactly. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

#define U TS_CGROUP_MODE_UNIFIED
#define H TS_CGROUP_MODE_HYBRID

/* Rows leave out the message when there is none. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

struct row {
	const char *name;
	enum ts_cgroup_mode mode;
	bool systemd, crun;
	const char *in, *want; /* linux.resources, compact JSON */
	const char *msg;       /* the one message, or NULL for none */
};

static const struct row rows[] = {
	/* the weight pinned with the corrected conversion (runc 1.3.2, crun 1.23) */
	{"v2 default shares", U, false, false, "{\"cpu\":{\"shares\":1024}}",
	 "{\"cpu\":{\"shares\":1024},\"unified\":{\"cpu.weight\":\"100\"}}"},
	{"v2 shares 2000", U, false, false, "{\"cpu\":{\"shares\":2000},\"unified\":{}}",
	 "{\"cpu\":{\"shares\":2000},\"unified\":{\"cpu.weight\":\"170\"}}"},
	{"v2 shares 512, unified kept", U, false, false,
	 "{\"cpu\":{\"shares\":512},\"unified\":{\"memory.high\":\"1000\"}}",
	 "{\"cpu\":{\"shares\":512},\"unified\":{\"memory.high\":\"1000\",\"cpu.weight\":\"59\"}}"},
	{"v2 weight already pinned", U, false, false,
	 "{\"cpu\":{\"shares\":10240},\"unified\":{\"cpu.weight\":\"1000\"}}",
	 "{\"cpu\":{\"shares\":10240},\"unified\":{\"cpu.weight\":\"1000\"}}"},
	{"v2 idle group: no weight", U, false, false,
	 "{\"cpu\":{\"shares\":10},\"unified\":{\"cpu.idle\":\"1\"}}",
	 "{\"cpu\":{\"shares\":10},\"unified\":{\"cpu.idle\":\"1\"}}"},
	{"v2 shares 0 is unset", U, false, false, "{\"cpu\":{\"shares\":0}}",
	 "{\"cpu\":{\"shares\":0}}"},
	{"v2 null unified", U, false, false, "{\"cpu\":{\"shares\":1024},\"unified\":null}",
	 "{\"cpu\":{\"shares\":1024},\"unified\":{\"cpu.weight\":\"100\"}}"},
	{"hybrid: no unified", H, false, false, "{\"cpu\":{\"shares\":1024}}",
	 "{\"cpu\":{\"shares\":1024}}"},
	/* kubelet's clamp */
	{"v2 shares 1", U, false, false, "{\"cpu\":{\"shares\":1}}",
	 "{\"cpu\":{\"shares\":2},\"unified\":{\"cpu.weight\":\"1\"}}",
	 "config.json: '/linux/resources/cpu/shares': '1' clamped to '2' (the kernel's range "
	 "2..262144)"},
	{"v2 shares 300000", U, false, false, "{\"cpu\":{\"shares\":300000}}",
	 "{\"cpu\":{\"shares\":262144},\"unified\":{\"cpu.weight\":\"10000\"}}",
	 "config.json: '/linux/resources/cpu/shares': '300000' clamped to '262144' (the kernel's "
	 "range 2..262144)"},
	{"hybrid shares 1", H, false, false, "{\"cpu\":{\"shares\":1,\"cpus\":\"0\"}}",
	 "{\"cpu\":{\"shares\":2,\"cpus\":\"0\"}}",
	 "config.json: '/linux/resources/cpu/shares': '1' clamped to '2' (the kernel's range "
	 "2..262144)"},
	/* systemd: the quota systemd applies */
	{"systemd class cpu.max", H, true, false, "{\"cpu\":{\"quota\":123456,\"period\":100000}}",
	 "{\"cpu\":{\"quota\":124000,\"period\":100000}}",
	 "config.json: '/linux/resources/cpu/quota': '123456' written as '124000', the quota "
	 "systemd applies (1% steps of a CPU) for period 100000"},
	{"systemd default period", H, true, false, "{\"cpu\":{\"quota\":1}}",
	 "{\"cpu\":{\"quota\":1000}}",
	 "config.json: '/linux/resources/cpu/quota': '1' written as '1000', the quota systemd "
	 "applies (1% steps of a CPU) for period 100000"},
	{"systemd exact quota", U, true, false, "{\"cpu\":{\"quota\":50000,\"period\":100000}}",
	 "{\"cpu\":{\"quota\":50000,\"period\":100000}}"},
	{"systemd v2 unified follows", U, true, false,
	 "{\"cpu\":{\"quota\":123456,\"period\":100000},\"unified\":{\"cpu.max\":\"123456 "
	 "100000\"}}",
	 "{\"cpu\":{\"quota\":124000,\"period\":100000},\"unified\":{\"cpu.max\":\"124000 "
	 "100000\"}}",
	 "config.json: '/linux/resources/cpu/quota': '123456' written as '124000', the quota "
	 "systemd applies (1% steps of a CPU) for period 100000"},
	{"systemd v2 unlimited", U, true, false, "{\"cpu\":{\"quota\":-1,\"period\":50000}}",
	 "{\"cpu\":{\"period\":50000},\"unified\":{\"cpu.max\":\"max 50000\"}}"},
	{"systemd v2 unlimited default period", U, true, false, "{\"cpu\":{\"quota\":-1}}",
	 "{\"cpu\":{},\"unified\":{\"cpu.max\":\"max 100000\"}}"},
	{"systemd v2 engine cpu.max kept", U, true, false,
	 "{\"cpu\":{\"quota\":-1},\"unified\":{\"cpu.max\":\"max 20000\"}}",
	 "{\"cpu\":{\"quota\":-1},\"unified\":{\"cpu.max\":\"max 20000\"}}"},
	{"systemd hybrid unlimited", H, true, false, "{\"cpu\":{\"quota\":-1}}",
	 "{\"cpu\":{\"quota\":-1}}"},
	{"cgroupfs keeps the quota", U, false, false, "{\"cpu\":{\"quota\":123456}}",
	 "{\"cpu\":{\"quota\":123456}}"},
	/* hugetlb reservations for crun on v2 */
	{"crun v2 hugetlb", U, false, true,
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":209715200},{\"pageSize\":\"1GB\","
	 "\"limit\":1073741824}]}",
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":209715200},{\"pageSize\":\"1GB\","
	 "\"limit\":1073741824}],\"unified\":{\"hugetlb.2MB.rsvd.max\":\"209715200\","
	 "\"hugetlb.1GB.rsvd.max\":\"1073741824\"}}"},
	{"crun v2 engine rsvd kept", U, false, true,
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],\"unified\":{\"hugetlb."
	 "2MB.rsvd.max\":\"0\"}}",
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}],\"unified\":{\"hugetlb."
	 "2MB.rsvd.max\":\"0\"}}"},
	{"runc v2 hugetlb untouched", U, false, false,
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}]}",
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}]}"},
	{"crun hybrid hugetlb untouched", H, false, true,
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}]}",
	 "{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":4194304}]}"},
};

static struct ts_json *parse(const char *resources)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	struct ts_json *j = NULL;

	assert_true(asprintf(&text, "{\"ociVersion\":\"1.0.2\",\"linux\":{\"resources\":%s}}",
			     resources) > 0);
	assert_int_equal(ts_json_parse(text, strlen(text), "config.json", &j, &err), 0);
	return j;
}

static void test_translate_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *w = &rows[i];
		struct ts_cgroup_translate_options opts = {w->mode, w->systemd, w->crun};
		cleanup_json struct ts_json *cfg = parse(w->in);
		cleanup_error struct ts_error *err = NULL;
		cleanup_strv char **msgs = NULL;
		cleanup_free char *got = NULL;
		size_t len = 0;
		int r = ts_cgroup_translate(cfg, "config.json", &opts, &msgs, &err);

		if (r < 0)
			fail_msg("%s: failed: %s", w->name, err->msg);
		if (r != (w->msg != NULL ? 1 : 0))
			fail_msg("%s: %d messages, first '%s'", w->name, r,
				 msgs != NULL ? msgs[0] : "");
		if (w->msg != NULL && strcmp(msgs[0], w->msg) != 0)
			fail_msg("%s: message\n got '%s'\nwant '%s'", w->name, msgs[0], w->msg);
		assert_int_equal(
			ts_json_serialize(ts_json_get_path(cfg, "linux", "resources", NULL), false,
					  &got, &len, &err),
			0);
		if (strcmp(got, w->want) != 0)
			fail_msg("%s:\n got %s\nwant %s", w->name, got, w->want);
		assert_string_equal(ts_json_get_string(cfg, "ociVersion"), "1.0.2");
	}
}

static void test_translate_errors(void **state)
{
	static const struct {
		const char *in, *want;
	} bad[] = {
		{"{\"cpu\":{\"shares\":\"1024\"}}",
		 "config.json: '/linux/resources/cpu/shares': expected number, got string"},
		{"{\"cpu\":{\"shares\":1024},\"unified\":[]}",
		 "config.json: '/linux/resources/unified': expected object, got array"},
		{"{\"hugepageLimits\":[{\"pageSize\":\"2MB\"}]}",
		 "config.json: '/linux/resources/hugepageLimits/0': expected pageSize and an "
		 "integer limit"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct ts_cgroup_translate_options opts = {U, true, true};
		cleanup_json struct ts_json *cfg = parse(bad[i].in);
		cleanup_error struct ts_error *err = NULL;
		char **msgs = NULL;

		assert_int_equal(ts_cgroup_translate(cfg, "config.json", &opts, &msgs, &err),
				 -EINVAL);
		assert_string_equal(err->msg, bad[i].want);
		assert_null(msgs);
	}
}

static void test_systemd_quota(void **state)
{
	static const uint64_t rows_q[][3] = {
		{123456, 100000, 124000}, {50000, 100000, 50000},    {1, 0, 1000},
		{10001, 10000, 10100},	  {250000, 1000000, 250000}, {1550, 10000, 1600},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows_q); i++)
		if (ts_cgroup_systemd_quota(rows_q[i][0], rows_q[i][1]) != rows_q[i][2])
			fail_msg("quota %lu period %lu: got %lu, want %lu",
				 (unsigned long)rows_q[i][0], (unsigned long)rows_q[i][1],
				 (unsigned long)ts_cgroup_systemd_quota(rows_q[i][0], rows_q[i][1]),
				 (unsigned long)rows_q[i][2]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translate_table),
		cmocka_unit_test(test_translate_errors),
		cmocka_unit_test(test_systemd_quota),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
