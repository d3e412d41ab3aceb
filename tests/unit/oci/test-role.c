/* Unit tests of src/oci/role.c: container roles, names and scoped request annotations. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../require.h"
#include "oci/role.h"
#include "util/cleanup.h"

struct role_case {
	const char *name;
	const char *json;
	enum ts_oci_role want_role;
	const char *want_role_from; /* NULL: none */
	const char *want_name;
};

static const struct role_case role_cases[] = {
	{"no engine record", "{}", TS_OCI_ROLE_CONTAINER, NULL, ""},
	{"containerd sandbox",
	 "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\","
	 "\"io.kubernetes.cri.sandbox-name\":\"pod1\"}}",
	 TS_OCI_ROLE_SANDBOX, "io.kubernetes.cri.container-type", ""},
	{"containerd container",
	 "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
	 "\"io.kubernetes.cri.container-name\":\"worker\"}}",
	 TS_OCI_ROLE_CONTAINER, "io.kubernetes.cri.container-type", "worker"},
	{"cri-o sandbox", "{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\"}}",
	 TS_OCI_ROLE_SANDBOX, "io.kubernetes.cri-o.ContainerType", ""},
	{"cri-o container, kubelet name",
	 "{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"container\","
	 "\"io.kubernetes.cri-o.ContainerName\":\"k8s_app-1_pod_ns_uid_0\"}}",
	 TS_OCI_ROLE_CONTAINER, "io.kubernetes.cri-o.ContainerType", "app-1"},
	/* podman 4.3.1, measured: the infra container carries no ContainerType,
	 * the pod's other containers "container" */
	{"podman infra",
	 "{\"process\":{\"args\":[\"/catatonit\",\"-P\"]},"
	 "\"annotations\":{\"io.container.manager\":\"libpod\"}}",
	 TS_OCI_ROLE_SANDBOX, "/process/args", ""},
	{"podman infra, pause image",
	 "{\"process\":{\"args\":[\"/pause\"]},"
	 "\"annotations\":{\"io.container.manager\":\"libpod\"}}",
	 TS_OCI_ROLE_SANDBOX, "/process/args", ""},
	{"podman container in a pod",
	 "{\"process\":{\"args\":[\"/catatonit\",\"-P\"]},"
	 "\"annotations\":{\"io.container.manager\":\"libpod\","
	 "\"io.kubernetes.cri-o.ContainerType\":\"container\"}}",
	 TS_OCI_ROLE_CONTAINER, "io.kubernetes.cri-o.ContainerType", ""},
	{"catatonit outside podman",
	 "{\"process\":{\"args\":[\"/catatonit\",\"-P\"]},\"annotations\":{}}",
	 TS_OCI_ROLE_CONTAINER, NULL, ""},
	{"unknown type value",
	 "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"init\","
	 "\"io.kubernetes.cri.container-name\":\"w\"}}",
	 TS_OCI_ROLE_CONTAINER, NULL, "w"},
	{"name not a dns label",
	 "{\"annotations\":{\"io.kubernetes.cri.container-name\":\"Worker_1\"}}",
	 TS_OCI_ROLE_CONTAINER, NULL, ""},
	{"type not a string", "{\"annotations\":{\"io.kubernetes.cri.container-type\":1}}",
	 TS_OCI_ROLE_CONTAINER, NULL, ""},
};

static void test_identify(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(role_cases); i++) {
		const struct role_case *c = &role_cases[i];
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_oci_container got;

		assert_int_equal(
			ts_json_parse(c->json, strlen(c->json), "config.json", &config, &err), 0);
		ts_oci_container_identify(config, &got);
		if (got.role != c->want_role)
			fail_msg("%s: role %d", c->name, got.role);
		if ((got.role_from == NULL) != (c->want_role_from == NULL) ||
		    (got.role_from != NULL && strcmp(got.role_from, c->want_role_from) != 0))
			fail_msg("%s: role from '%s'", c->name,
				 got.role_from ? got.role_from : "(null)");
		if (strcmp(got.name, c->want_name) != 0)
			fail_msg("%s: name '%s'", c->name, got.name);
	}
}

struct get_case {
	const char *name;
	const char *json;
	const char *key;
	int want_ret;
	const char *want_value; /* or the error message */
	const char *want_field;
};

#define NAMED "\"io.kubernetes.cri.container-name\":\"worker\","

static const struct get_case get_cases[] = {
	{"unscoped", "{\"annotations\":{" NAMED "\"toposhim.io/cpus\":\"2\"}}", "toposhim.io/cpus",
	 1, "2", "/annotations/toposhim.io~1cpus"},
	{"scoped first",
	 "{\"annotations\":{" NAMED
	 "\"toposhim.io/cpus\":\"2\",\"toposhim.io/cpus.worker\":\"1\"}}",
	 "toposhim.io/cpus", 1, "1", "/annotations/toposhim.io~1cpus.worker"},
	{"other scope only", "{\"annotations\":{" NAMED "\"toposhim.io/cpus.web\":\"1\"}}",
	 "toposhim.io/cpus", 0, NULL, NULL},
	{"sandbox takes nothing",
	 "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\","
	 "\"toposhim.io/cpus\":\"2\"}}",
	 "toposhim.io/cpus", 0, NULL, NULL},
	{"scoped not a string", "{\"annotations\":{" NAMED "\"toposhim.io/cpus.worker\":1}}",
	 "toposhim.io/cpus", -EINVAL,
	 "'/annotations/toposhim.io~1cpus.worker': expected string, got number", NULL},
};

static void test_request_get(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(get_cases); i++) {
		const struct get_case *c = &get_cases[i];
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *field = NULL;
		const char *value = NULL;
		struct ts_oci_container who;
		int r;

		assert_int_equal(
			ts_json_parse(c->json, strlen(c->json), "config.json", &config, &err), 0);
		ts_oci_container_identify(config, &who);
		r = ts_oci_request_get(config, &who, c->key, &value, &field, &err);
		if (r != c->want_ret)
			fail_msg("%s: ret %d", c->name, r);
		if (r < 0 && strcmp(err->msg, c->want_value) != 0)
			fail_msg("%s: message '%s'", c->name, err->msg);
		if (r == 1 &&
		    (strcmp(value, c->want_value) != 0 || strcmp(field, c->want_field) != 0))
			fail_msg("%s: '%s' from '%s'", c->name, value, field);
	}
}

static void test_request_check(void **state)
{
	static const char ok[] =
		"{\"annotations\":{" NAMED "\"toposhim.io/class.worker\":\"critical\","
		"\"toposhim.io/cpus.web\":\"1\",\"toposhim.io/cdi.db\":\"a.com/b=c\","
		"\"toposhim.io/cdi-injected\":\"x\",\"toposhim.io/placed-cpus\":\"1\"}}";
	static const char bad[] = "{\"annotations\":{" NAMED "\"toposhim.io/numa.-web\":\"x\"}}";
	cleanup_json struct ts_json *config = NULL, *bad_config = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free const char **others = NULL;
	struct ts_oci_container who;

	assert_int_equal(ts_json_parse(ok, strlen(ok), "config.json", &config, &err), 0);
	ts_oci_container_identify(config, &who);
	assert_int_equal(ts_oci_request_check(config, &who, &others, &err), 2);
	assert_string_equal(others[0], "toposhim.io/cpus.web");
	assert_string_equal(others[1], "toposhim.io/cdi.db");
	assert_null(others[2]);
	assert_int_equal(ts_json_parse(bad, strlen(bad), "config.json", &bad_config, &err), 0);
	assert_int_equal(ts_oci_request_check(bad_config, &who, NULL, &err), -EINVAL);
	assert_string_equal(err->msg,
			    "'/annotations/toposhim.io~1numa.-web': invalid container "
			    "name '-web' (a DNS label: lowercase letters, digits and '-')");
}

/* helper-9: a misspelt request key was ignored without a word */
static void test_request_unknown(void **state)
{
	static const char text[] =
		"{\"annotations\":{\"toposhim.io/class\":\"critical\",\"toposhim.io/clas\":\"x\","
		"\"toposhim.io/cpus.web\":\"1\",\"toposhim.io/cpusx\":\"1\",\"other.io/"
		"clas\":\"y\","
		"\"toposhim.io/memory-tier\":\"dram\",\"toposhim.io/\":\"\",\"toposhim.io/cdi.db\":"
		"\"a.com/b=c\",\"toposhim.io/numa\":\"prefer\"}}";
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free const char **unknown = NULL;

	assert_int_equal(ts_json_parse(text, strlen(text), "config.json", &config, &err), 0);
	assert_int_equal(ts_oci_request_unknown(config, &unknown), 3);
	assert_string_equal(unknown[0], "toposhim.io/clas");
	assert_string_equal(unknown[1], "toposhim.io/cpusx");
	assert_string_equal(unknown[2], "toposhim.io/");
	assert_null(unknown[3]);
}

static void test_dns_label(void **state)
{
	assert_true(ts_oci_dns_label("a"));
	assert_true(ts_oci_dns_label("app-1"));
	assert_true(ts_oci_dns_label(
		"012345678901234567890123456789012345678901234567890123456789012"));
	assert_false(ts_oci_dns_label(
		"0123456789012345678901234567890123456789012345678901234567890123"));
	assert_false(ts_oci_dns_label(""));
	assert_false(ts_oci_dns_label("-a"));
	assert_false(ts_oci_dns_label("a-"));
	assert_false(ts_oci_dns_label("A"));
	assert_false(ts_oci_dns_label("a.b"));
	assert_false(ts_oci_dns_label(NULL));
}

static void test_dns_subdomain(void **state)
{
	static const char *const good[] = {"a", "node-1", "node-1.example.com", "0.0"};
	static const char *const bad[] = {"",	"A",	"a_b",	"-a",	"a-",  "a.",
					  ".a", "a..b", "a-.b", "a.-b", "a\nb"};
	char long_name[255];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(ts_oci_dns_subdomain(good[i], strlen(good[i])));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (ts_oci_dns_subdomain(bad[i], strlen(bad[i])))
			fail_msg("'%s' taken for a DNS subdomain", bad[i]);
	memset(long_name, 'a', sizeof(long_name));
	assert_true(ts_oci_dns_subdomain(long_name, 253));
	assert_false(ts_oci_dns_subdomain(long_name, 254));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identify),      cmocka_unit_test(test_request_get),
		cmocka_unit_test(test_request_check), cmocka_unit_test(test_request_unknown),
		cmocka_unit_test(test_dns_label),     cmocka_unit_test(test_dns_subdomain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
