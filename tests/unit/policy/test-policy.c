/* Unit tests of src/policy: the operator's policy on requests (issue 10,
 * finding 4), each row a request as a pod or an engine makes it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy/policy.h"
#include "util/cleanup.h"

static const char config_text[] =
	"{\"policy\": {"
	"\"unscoped\": {\"devices\": [\"vendor.com/gpu=*\"]},"
	"\"namespaces\": {"
	"\"ml-*\": {\"classes\": [\"critical\"], \"numa\": [\"exclusive\"],"
	"          \"memory_tiers\": [\"hbm\"], \"devices\": [\"vendor.com/gpu=*\"]},"
	"\"ml-prod\": {\"classes\": [\"system\"]}"
	"}}}";

#define DEV(...) ((const char *const[]){__VA_ARGS__})

static const struct {
	const char *name;
	struct ts_policy_request req;
	const char *want; /* NULL: allowed; else the exact message */
} rows[] = {
	/* the kubelet's rule: Guaranteed, integer cpus, no grant needed */
	{"guaranteed critical",
	 {.namespace = "team-a",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 2,
	  .cpu_limit = 2,
	  .guaranteed = true},
	 NULL},
	{"derived critical (no annotation)",
	 {.namespace = "team-a",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 4,
	  .cpu_limit = 4,
	  .guaranteed = true},
	 NULL},
	{"critical without limit",
	 {.namespace = "team-a",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 28,
	  .cpus_annotated = true},
	 "config.json: '/annotations/toposhim.io~1class': class 'critical' (exclusive cpus) is not "
	 "allowed for namespace 'team-a': it needs an integer cpu limit equal to its request (the "
	 "kubelet's rule), or the class in '/policy/namespaces/team-a/classes' of t.json"},
	{"critical, limit not equal to the request",
	 {.namespace = "team-a",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 2,
	  .cpu_limit = 2,
	  .guaranteed = false},
	 "config.json: '/annotations/toposhim.io~1class': class 'critical' (exclusive cpus) is not "
	 "allowed for namespace 'team-a': it needs an integer cpu limit equal to its request (the "
	 "kubelet's rule), or the class in '/policy/namespaces/team-a/classes' of t.json"},
	{"more cpus than the limit",
	 {.namespace = "team-a",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 4,
	  .cpus_annotated = true,
	  .cpu_limit = 2,
	  .guaranteed = true},
	 "config.json: '/annotations/toposhim.io~1cpus': 4 exclusive cpus are more than the "
	 "container's cpu limit of 2"},
	{"more cpus than the limit, even granted",
	 {.namespace = "ml-dev",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 4,
	  .cpus_annotated = true,
	  .cpu_limit = 2},
	 "config.json: '/annotations/toposhim.io~1cpus': 4 exclusive cpus are more than the "
	 "container's cpu limit of 2"},
	{"critical granted by pattern, no limit",
	 {.namespace = "ml-dev",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 8,
	  .cpus_annotated = true},
	 NULL},
	/* an exact name wins over a pattern: ml-prod gets its own grant only */
	{"exact namespace over pattern",
	 {.namespace = "ml-prod",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 8},
	 "config.json: '/annotations/toposhim.io~1class': class 'critical' (exclusive cpus) is not "
	 "allowed for namespace 'ml-prod': it needs an integer cpu limit equal to its request (the "
	 "kubelet's rule), or the class in '/policy/namespaces/ml-prod/classes' of t.json"},
	{"reserved class",
	 {.namespace = "team-a", .class_name = "system", .pool = TS_POLICY_POOL_RESERVED},
	 "config.json: '/annotations/toposhim.io~1class': class 'system' (reserved cpus) is not "
	 "allowed for namespace 'team-a': it needs the class in "
	 "'/policy/namespaces/team-a/classes' of t.json"},
	{"reserved class, guaranteed is no help",
	 {.namespace = "team-a",
	  .class_name = "system",
	  .pool = TS_POLICY_POOL_RESERVED,
	  .cpu_limit = 1,
	  .guaranteed = true},
	 "config.json: '/annotations/toposhim.io~1class': class 'system' (reserved cpus) is not "
	 "allowed for namespace 'team-a': it needs the class in "
	 "'/policy/namespaces/team-a/classes' of t.json"},
	{"reserved class granted",
	 {.namespace = "ml-prod", .class_name = "system", .pool = TS_POLICY_POOL_RESERVED},
	 NULL},
	{"shared classes are no privilege",
	 {.namespace = "team-a", .class_name = "batch", .pool = TS_POLICY_POOL_SHARED},
	 NULL},
	{"numa exclusive",
	 {.namespace = "team-a", .numa = "exclusive"},
	 "config.json: '/annotations/toposhim.io~1numa': numa 'exclusive' (a whole numa node) is "
	 "not "
	 "allowed for namespace 'team-a': it needs 'exclusive' in "
	 "'/policy/namespaces/team-a/numa' of t.json"},
	{"numa single is no privilege", {.namespace = "team-a", .numa = "single"}, NULL},
	{"numa exclusive granted", {.namespace = "ml-x", .numa = "exclusive"}, NULL},
	{"hbm",
	 {.namespace = "team-a", .memory_tier = "hbm"},
	 "config.json: '/annotations/toposhim.io~1memory-tier': memory tier 'hbm' is not allowed "
	 "for "
	 "namespace 'team-a': it needs the tier in '/policy/namespaces/team-a/memory_tiers' of "
	 "t.json"},
	{"dram is no privilege", {.namespace = "team-a", .memory_tier = "dram"}, NULL},
	{"hbm granted", {.namespace = "ml-x", .memory_tier = "hbm"}, NULL},
	{"a device",
	 {.namespace = "team-a", .devices = DEV("vendor.com/gpu=0"), .n_devices = 1},
	 "config.json: '/annotations': cdi device 'vendor.com/gpu=0' is not allowed for namespace "
	 "'team-a': it needs a pattern matching it in '/policy/namespaces/team-a/devices' of "
	 "t.json"},
	{"a device granted, another not",
	 {.namespace = "ml-x",
	  .devices = DEV("vendor.com/gpu=0", "vendor.com/nic=1"),
	  .n_devices = 2},
	 "config.json: '/annotations': cdi device 'vendor.com/nic=1' is not allowed for namespace "
	 "'ml-x': it needs a pattern matching it in '/policy/namespaces/ml-*/devices' of t.json"},
	{"a device named by where it was asked for",
	 {.namespace = "ml-x",
	  .devices = DEV("vendor.com/gpu=0", "vendor.com/nic=1"),
	  .device_fields =
		  DEV("/annotations/cdi.k8s.io~1gpu", "/annotations/toposhim.io~1cdi.worker"),
	  .n_devices = 2},
	 "config.json: '/annotations/toposhim.io~1cdi.worker': cdi device 'vendor.com/nic=1' is "
	 "not "
	 "allowed for namespace 'ml-x': it needs a pattern matching it in "
	 "'/policy/namespaces/ml-*/devices' of t.json"},
	{"a scoped class",
	 {.namespace = "team-a",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 1,
	  .class_field = "/annotations/toposhim.io~1class.worker"},
	 "config.json: '/annotations/toposhim.io~1class.worker': class 'critical' (exclusive cpus) "
	 "is not allowed for namespace 'team-a': it needs an integer cpu limit equal to its "
	 "request "
	 "(the kubelet's rule), or the class in '/policy/namespaces/team-a/classes' of t.json"},
	{"scoped cpus over the limit",
	 {.namespace = "ml-x",
	  .class_name = "critical",
	  .pool = TS_POLICY_POOL_EXCLUSIVE,
	  .cpus = 3,
	  .cpu_limit = 2,
	  .cpus_field = "/annotations/toposhim.io~1cpus.worker"},
	 "config.json: '/annotations/toposhim.io~1cpus.worker': 3 exclusive cpus are more than the "
	 "container's cpu limit of 2"},
	{"a scoped numa and tier",
	 {.namespace = "team-a",
	  .numa = "exclusive",
	  .numa_field = "/annotations/toposhim.io~1numa.db"},
	 "config.json: '/annotations/toposhim.io~1numa.db': numa 'exclusive' (a whole numa node) "
	 "is "
	 "not allowed for namespace 'team-a': it needs 'exclusive' in "
	 "'/policy/namespaces/team-a/numa' of t.json"},
	{"a scoped tier",
	 {.namespace = "team-a",
	  .memory_tier = "hbm",
	  .tier_field = "/annotations/toposhim.io~1memory-tier.db"},
	 "config.json: '/annotations/toposhim.io~1memory-tier.db': memory tier 'hbm' is not "
	 "allowed "
	 "for namespace 'team-a': it needs the tier in '/policy/namespaces/team-a/memory_tiers' of "
	 "t.json"},
	{"unscoped device granted", {.devices = DEV("vendor.com/gpu=3"), .n_devices = 1}, NULL},
	{"unscoped critical without limit",
	 {.class_name = "critical", .pool = TS_POLICY_POOL_EXCLUSIVE, .cpus = 1},
	 "config.json: '/annotations/toposhim.io~1class': class 'critical' (exclusive cpus) is not "
	 "allowed for unscoped containers: it needs an integer cpu limit equal to its request (the "
	 "kubelet's rule), or the class in '/policy/unscoped/classes' of t.json"},
};

static void test_check_rows(void **state)
{
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_policy pol;

	(void)state;
	assert_int_equal(ts_json_parse(config_text, strlen(config_text), "t.json", &config, &err),
			 0);
	assert_int_equal(ts_policy_parse(config, "t.json", &pol, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ts_policy_request req = rows[i].req;
		int r;

		req.config_name = "config.json";
		r = ts_policy_check(&pol, &req, &err);
		if (rows[i].want == NULL && r != 0)
			fail_msg("%s: refused: %s", rows[i].name, err->msg);
		if (rows[i].want != NULL) {
			if (r != -EINVAL)
				fail_msg("%s: %d, want -EINVAL", rows[i].name, r);
			if (strcmp(err->msg, rows[i].want) != 0 || err->errnum != 0)
				fail_msg("%s:\n  got  %s\n  want %s", rows[i].name, err->msg,
					 rows[i].want);
			ts_error_clear(&err);
		}
	}
}

/* No policy: nothing privileged is granted, the kubelet's rule still holds. */
static void test_no_policy(void **state)
{
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_policy pol;
	struct ts_policy_request ok = {.config_name = "c",
				       .class_name = "critical",
				       .pool = TS_POLICY_POOL_EXCLUSIVE,
				       .cpus = 1,
				       .cpu_limit = 1,
				       .guaranteed = true};
	struct ts_policy_request dev = {
		.config_name = "c", .devices = DEV("a.com/b=c"), .n_devices = 1};

	(void)state;
	assert_int_equal(ts_json_parse("{}", 2, "t.json", &config, &err), 0);
	assert_int_equal(ts_policy_parse(config, "t.json", &pol, &err), 0);
	assert_int_equal(ts_policy_check(&pol, &ok, &err), 0);
	assert_int_equal(ts_policy_check(&pol, &dev, &err), -EINVAL);
	assert_string_equal(err->msg,
			    "c: '/annotations': cdi device 'a.com/b=c' is not allowed for unscoped "
			    "containers: it needs a pattern matching it in "
			    "'/policy/unscoped/devices' of t.json");
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"{\"policy\": []}", "t.json: '/policy': expected object, got array"},
		{"{\"policy\": {\"namespace\": {}}}", "t.json: '/policy/namespace': unknown key"},
		{"{\"policy\": {\"unscoped\": {\"class\": []}}}",
		 "t.json: '/policy/unscoped/class': unknown key"},
		{"{\"policy\": {\"unscoped\": {\"classes\": \"critical\"}}}",
		 "t.json: '/policy/unscoped/classes': expected array of strings, got string"},
		{"{\"policy\": {\"namespaces\": {\"a\": {\"devices\": [1]}}}}",
		 "t.json: '/policy/namespaces/a/devices/0': expected string, got number"},
		{"{\"policy\": {\"namespaces\": {\"a\": {\"numa\": [\"whole\"]}}}}",
		 "t.json: '/policy/namespaces/a/numa/0': invalid numa mode 'whole'"},
		{"{\"policy\": {\"unscoped\": {\"memory_tiers\": [\"ssd\"]}}}",
		 "t.json: '/policy/unscoped/memory_tiers/0': invalid memory tier 'ssd'"},
		{"{\"policy\": {\"namespaces\": []}}",
		 "t.json: '/policy/namespaces': expected object, got array"},
		{"{\"policy\": {\"unscoped\": 3}}",
		 "t.json: '/policy/unscoped': expected object, got number"},
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_policy pol;

		assert_int_equal(
			ts_json_parse(bad[i].text, strlen(bad[i].text), "t.json", &config, &err),
			0);
		assert_int_equal(ts_policy_parse(config, "t.json", &pol, &err), -EINVAL);
		assert_string_equal(err->msg, bad[i].want);
	}
}

/* ns of config text, or the error message; asserts r. */
static void namespace_is(const char *text, int want_r, const char *want)
{
	cleanup_json struct ts_json *c = NULL;
	cleanup_error struct ts_error *err = NULL;
	const char *ns = "unset";

	assert_int_equal(ts_json_parse(text, strlen(text), "c", &c, &err), 0);
	assert_int_equal(ts_policy_namespace(c, "config.json", &ns, &err), want_r);
	if (want_r < 0) {
		assert_non_null(err);
		assert_string_equal(err->msg, want);
		assert_null(ns);
	} else if (want == NULL) {
		assert_null(ns);
	} else {
		assert_string_equal(ns, want);
	}
}

static void test_namespace(void **state)
{
	(void)state;
	/* CRI-O: kubelet's label, copied */
	namespace_is("{\"annotations\": {\"io.kubernetes.pod.namespace\": \"ml\"}}", 0, "ml");
	/* containerd's CRI sets only its own key */
	namespace_is("{\"annotations\": {\"io.kubernetes.cri.sandbox-namespace\": \"team-a\", "
		     "\"io.kubernetes.cri.container-type\": \"container\"}}",
		     0, "team-a");
	/* both, agreeing */
	namespace_is("{\"annotations\": {\"io.kubernetes.cri.sandbox-namespace\": \"team-a\", "
		     "\"io.kubernetes.pod.namespace\": \"team-a\"}}",
		     0, "team-a");
	/* none: unscoped */
	namespace_is("{}", 0, NULL);
	namespace_is("{\"annotations\": {\"x\": \"y\"}}", 0, NULL);
	/* a pod annotation passed through under containerd cannot pick another
	 * namespace's grant */
	namespace_is(
		"{\"annotations\": {\"io.kubernetes.cri.sandbox-namespace\": \"team-a\", "
		"\"io.kubernetes.pod.namespace\": \"kube-system\"}}",
		-EINVAL,
		"config.json: '/annotations/io.kubernetes.pod.namespace': 'kube-system' is not "
		"the pod's namespace 'team-a' (io.kubernetes.cri.sandbox-namespace, set by "
		"containerd's CRI)");
	namespace_is("{\"annotations\": {\"io.kubernetes.cri.sandbox-namespace\": 7}}", -EINVAL,
		     "config.json: '/annotations/io.kubernetes.cri.sandbox-namespace': expected "
		     "string, got number");
	namespace_is("{\"annotations\": {\"io.kubernetes.pod.namespace\": \"\"}}", -EINVAL,
		     "config.json: '/annotations/io.kubernetes.pod.namespace': empty namespace");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_rows),
		cmocka_unit_test(test_no_policy),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_namespace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
