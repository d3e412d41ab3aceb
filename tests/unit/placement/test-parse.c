/* Unit tests of src/placement/parse.c: requests from config.json, the "placement" config. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixtures.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "util/cleanup.h"

struct req_case {
	const char *name;
	const char *json;
	int want_ret;
	const char *want_class; /* or the error message */
	bool want_derived;
	unsigned want_cpus;
	enum ts_placement_numa want_numa;
	enum ts_memory_tier want_tier;
	const char *want_user_cpus; /* NULL: absent */
};

#define CPU(q, p, s)                                                                            \
	"{\"linux\":{\"resources\":{\"cpu\":{\"quota\":" #q ",\"period\":" #p ",\"shares\":" #s \
	"}}}}"

#define ERR(n, j, m)                                                       \
	{                                                                  \
		.name = n, .json = j, .want_ret = -EINVAL, .want_class = m \
	}

static const struct req_case req_cases[] = {
	{"guaranteed integer (kubelet A1-A6)", CPU(200000, 100000, 2048), 0, "critical", true, 2,
	 TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"burstable 1000m/2000m (A7)", CPU(200000, 100000, 1024), 0, "standard", true, 2,
	 TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"guaranteed fractional 977m (A8)", CPU(97700, 100000, 1000), 0, "standard", true, 1,
	 TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"no cpu limit", "{}", 0, "standard", false, 0, TS_PLACEMENT_NUMA_PREFER,
	 TS_MEMORY_TIER_DRAM, NULL},
	{"unlimited quota", CPU(-1, 100000, 1024), 0, "standard", false, 0,
	 TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"annotations",
	 "{\"annotations\":{\"toposhim.io/class\":\"batch\",\"toposhim.io/cpus\":\"3\","
	 "\"toposhim.io/numa\":\"single\",\"toposhim.io/memory-tier\":\"hbm\"}}",
	 0, "batch", false, 3, TS_PLACEMENT_NUMA_SINGLE, TS_MEMORY_TIER_HBM, NULL},
	{"explicit cpus",
	 "{\"annotations\":{\"toposhim.io/numa\":\"exclusive\"},"
	 "\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"2-3\",\"mems\":\"0\"}}}}",
	 0, "standard", false, 0, TS_PLACEMENT_NUMA_EXCLUSIVE, TS_MEMORY_TIER_DRAM, "2-3"},
	/* oci/role.h: a sandbox takes none of the pod's requests, not even a
	 * class its quota would derive; an app container its scoped ones */
	{"containerd sandbox",
	 "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\","
	 "\"toposhim.io/class\":\"critical\",\"toposhim.io/cpus\":\"2\","
	 "\"toposhim.io/numa\":\"bogus\"},"
	 "\"linux\":{\"resources\":{\"cpu\":{\"quota\":200000,\"period\":100000,"
	 "\"shares\":2048}}}}",
	 0, "standard", false, 0, TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"cri-o sandbox",
	 "{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
	 "\"toposhim.io/class\":\"gold\"}}",
	 0, "standard", false, 0, TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"scoped wins over unscoped",
	 "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
	 "\"io.kubernetes.cri.container-name\":\"worker\",\"toposhim.io/class\":\"batch\","
	 "\"toposhim.io/class.worker\":\"critical\",\"toposhim.io/cpus.worker\":\"1\","
	 "\"toposhim.io/cpus.sidecar\":\"x\",\"toposhim.io/cpus\":\"3\"}}",
	 0, "critical", false, 1, TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"scoped to another container",
	 "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
	 "\"io.kubernetes.cri.container-name\":\"sidecar\","
	 "\"toposhim.io/class.worker\":\"critical\",\"toposhim.io/cpus.worker\":\"1\"}}",
	 0, "standard", false, 0, TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"cri-o name",
	 "{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"container\","
	 "\"io.kubernetes.cri-o.ContainerName\":\"k8s_worker_pod1_default_1234_0\","
	 "\"toposhim.io/class.worker\":\"batch\"}}",
	 0, "batch", false, 0, TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	{"no name: scoped ignored", "{\"annotations\":{\"toposhim.io/class.worker\":\"batch\"}}", 0,
	 "standard", false, 0, TS_PLACEMENT_NUMA_PREFER, TS_MEMORY_TIER_DRAM, NULL},
	ERR("scoped bad count",
	    "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"worker\","
	    "\"toposhim.io/cpus.worker\":\"x\"}}",
	    "config.json: '/annotations/toposhim.io~1cpus.worker': invalid cpu count 'x'"),
	ERR("scoped unknown class",
	    "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"worker\","
	    "\"toposhim.io/class.worker\":\"gold\"}}",
	    "config.json: '/annotations/toposhim.io~1class.worker': unknown class 'gold'"),
	ERR("scope not a container name",
	    "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"worker\","
	    "\"toposhim.io/class.Web_1\":\"batch\"}}",
	    "config.json: '/annotations/toposhim.io~1class.Web_1': invalid container name 'Web_1' "
	    "(a DNS label: lowercase letters, digits and '-')"),
	ERR("bad count", "{\"annotations\":{\"toposhim.io/cpus\":\"x\"}}",
	    "config.json: '/annotations/toposhim.io~1cpus': invalid cpu count 'x'"),
	ERR("zero count", "{\"annotations\":{\"toposhim.io/cpus\":\"0\"}}",
	    "config.json: '/annotations/toposhim.io~1cpus': invalid cpu count '0'"),
	ERR("count past the most placed", "{\"annotations\":{\"toposhim.io/cpus\":\"65536\"}}",
	    "config.json: '/annotations/toposhim.io~1cpus': cpu count '65536' is more than 65535"),
	ERR("count past 64 bits",
	    "{\"annotations\":{\"toposhim.io/cpus\":\"99999999999999999999999\"}}",
	    "config.json: '/annotations/toposhim.io~1cpus': cpu count '99999999999999999999999' is "
	    "more than 65535"),
	ERR("signed count", "{\"annotations\":{\"toposhim.io/cpus\":\"+1\"}}",
	    "config.json: '/annotations/toposhim.io~1cpus': invalid cpu count '+1'"),
	ERR("count with a tail", "{\"annotations\":{\"toposhim.io/cpus\":\"2 \"}}",
	    "config.json: '/annotations/toposhim.io~1cpus': invalid cpu count '2 '"),
	ERR("limit past 32 bits", CPU(429496729800000, 100000, 1024),
	    "config.json: '/linux/resources/cpu/quota': cpu limit of 4294967298 cpus (quota "
	    "429496729800000, period 100000) is more than 65535"),
	ERR("largest quota", CPU(9223372036854775807, 100000, 1024),
	    "config.json: '/linux/resources/cpu/quota': cpu limit of 92233720368548 cpus (quota "
	    "9223372036854775807, period 100000) is more than 65535"),
	ERR("unknown class", "{\"annotations\":{\"toposhim.io/class\":\"gold\"}}",
	    "config.json: '/annotations/toposhim.io~1class': unknown class 'gold'"),
	ERR("bad numa", "{\"annotations\":{\"toposhim.io/numa\":\"both\"}}",
	    "config.json: '/annotations/toposhim.io~1numa': invalid numa policy 'both' (prefer, "
	    "single or exclusive)"),
	ERR("bad tier", "{\"annotations\":{\"toposhim.io/memory-tier\":\"ssd\"}}",
	    "config.json: '/annotations/toposhim.io~1memory-tier': invalid memory tier 'ssd' "
	    "(dram, "
	    "hbm, cxl, pmem or gpu)"),
	ERR("bad cpu list", "{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"0-3,x\"}}}}",
	    "config.json: '/linux/resources/cpu/cpus': invalid cpu list '0-3,x'"),
	ERR("bad mems list", "{\"linux\":{\"resources\":{\"cpu\":{\"mems\":\"1-\"}}}}",
	    "config.json: '/linux/resources/cpu/mems': invalid mems list '1-'"),
	ERR("shares not a number",
	    "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":100000,"
	    "\"period\":100000,\"shares\":\"x\"}}}}",
	    "config.json: '/linux/resources/cpu/shares': expected number, got string"),
};

static void test_request_from_config(void **state)
{
	struct ts_placement_config cfg;
	cleanup_error struct ts_error *cerr = NULL;

	assert_int_equal(ts_placement_config_init(&cfg, &cerr), 0);
	for (size_t i = 0; i < ARRAY_SIZE(req_cases); i++) {
		const struct req_case *c = &req_cases[i];
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_placement_request req;
		int r;

		assert_int_equal(
			ts_json_parse(c->json, strlen(c->json), "config.json", &config, &err), 0);
		r = ts_placement_request_from_config(config, "config.json", "id1", &cfg, &req,
						     &err);
		if (r != c->want_ret)
			fail_msg("%s: ret %d (%s)", c->name, r, err ? err->msg : "");
		if (r < 0) {
			if (strcmp(err->msg, c->want_class) != 0)
				fail_msg("%s: message '%s'", c->name, err->msg);
			continue;
		}
		if (strcmp(req.class_name, c->want_class) != 0)
			fail_msg("%s: class '%s'", c->name, req.class_name);
		if (req.class_derived != c->want_derived || req.cpus != c->want_cpus ||
		    req.numa != c->want_numa || req.memory_tier != c->want_tier)
			fail_msg("%s: derived %d cpus %u numa %d tier %d", c->name,
				 req.class_derived, req.cpus, req.numa, req.memory_tier);
		assert_string_equal(req.container_id, "id1");
		if (c->want_user_cpus == NULL)
			assert_null(req.user_cpus);
		else
			fixture_assert_set(c->name, req.user_cpus, c->want_user_cpus);
		ts_placement_request_release(&req);
	}
	ts_placement_config_release(&cfg);
}

static void test_config_parse(void **state)
{
	static const char text[] =
		"{\"reserved\":{\"cpus\":\"0-1\",\"shared_may_use\":false},"
		"\"full_cores_only\":true,\"align_l3\":false,\"manage_all\":true,"
		"\"distribute_across_numa\":true,\"align_by_socket\":true,\"distribute_across_"
		"cores\":true,\"enabled\":false,"
		"\"classes\":{\"gold\":{\"pool\":\"exclusive\",\"cpu_kind\":\"performance\"},"
		"\"standard\":{\"cpu_kind\":\"efficiency\"}}}";
	cleanup_json struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_placement_config cfg;
	const struct ts_placement_class *c;

	assert_int_equal(ts_json_parse(text, strlen(text), "toposhim.json", &j, &err), 0);
	assert_int_equal(ts_placement_config_parse(j, "toposhim.json", &cfg, &err), 0);
	fixture_assert_set("reserved", cfg.reserved_cpus, "0-1");
	assert_false(cfg.shared_may_use_reserved);
	assert_true(cfg.full_cores_only);
	assert_false(cfg.align_l3);
	assert_true(cfg.manage_all);
	assert_true(cfg.distribute_across_numa);
	assert_true(cfg.align_by_socket);
	assert_true(cfg.distribute_across_cores);
	assert_false(cfg.enabled);
	c = ts_placement_config_class(&cfg, "gold");
	assert_non_null(c);
	assert_int_equal(c->pool, TS_PLACEMENT_POOL_EXCLUSIVE);
	assert_int_equal(c->cpu_kind, TS_PLACEMENT_KIND_PERFORMANCE);
	c = ts_placement_config_class(&cfg, "standard");
	assert_int_equal(c->pool, TS_PLACEMENT_POOL_SHARED);
	assert_int_equal(c->cpu_kind, TS_PLACEMENT_KIND_EFFICIENCY);
	assert_non_null(ts_placement_config_class(&cfg, "critical"));
	assert_int_equal(cfg.n_classes, 4);
	ts_placement_config_release(&cfg);

	/* defaults */
	assert_int_equal(ts_placement_config_parse(NULL, "toposhim.json", &cfg, &err), 0);
	assert_null(cfg.reserved_cpus);
	assert_true(cfg.shared_may_use_reserved);
	assert_true(cfg.align_l3);
	ts_placement_config_release(&cfg);
}

static void test_config_errors(void **state)
{
	static const struct {
		const char *json, *msg;
	} rows[] = {
		{"{\"reserve\":{}}", "toposhim.json: '/placement/reserve': unknown key"},
		{"{\"reserved\":{\"cpus\":\"0-x\"}}",
		 "toposhim.json: '/placement/reserved/cpus': invalid cpu list '0-x'"},
		{"{\"reserved\":{\"count\":-1}}",
		 "toposhim.json: '/placement/reserved/count': invalid cpu count '-1'"},
		{"{\"full_cores_only\":1}",
		 "toposhim.json: '/placement/full_cores_only': expected boolean, got number"},
		{"{\"classes\":{\"x\":{\"pool\":\"pinned\"}}}",
		 "toposhim.json: '/placement/classes/x/pool': invalid pool 'pinned' (shared, "
		 "exclusive or reserved)"},
		{"[]", "toposhim.json: '/placement': expected object, got array"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *j = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_placement_config cfg;

		assert_int_equal(ts_json_parse(rows[i].json, strlen(rows[i].json), "t", &j, &err),
				 0);
		assert_int_equal(ts_placement_config_parse(j, "toposhim.json", &cfg, &err),
				 -EINVAL);
		if (strcmp(err->msg, rows[i].msg) != 0)
			fail_msg("row %zu: '%s'", i, err->msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_from_config),
		cmocka_unit_test(test_config_parse),
		cmocka_unit_test(test_config_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
