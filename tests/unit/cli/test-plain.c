/* Unit tests of src/cli/plain.c: which config.json the front may leave alone. */
#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cli/plain.h"
#include "oci/json.h"
#include "util/cleanup.h"

/* Whether text (a config.json) is plain; *why as the predicate gives it. */
static bool plain(const char *text, bool unified, const char **why)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL;
	static char reason[256];
	const char *w = NULL;
	bool r;

	assert_int_equal(ts_json_parse(text, strlen(text), "config.json", &j, &err), 0);
	r = ts_cli_plain_config(j, unified, &w);
	reason[0] = '\0';
	if (w != NULL)
		snprintf(reason, sizeof(reason), "%s", w);
	if (why != NULL)
		*why = reason;
	return r;
}

static void test_plain_configs(void **state)
{
	(void)state;
	/* what `runc spec` writes, and what engines add that toposhim leaves */
	assert_true(plain("{\"ociVersion\": \"1.0.2\", \"process\": {\"args\": [\"sh\"], \"env\": "
			  "[\"PATH=/bin\", \"TERM=xterm\"]}, \"root\": {\"path\": \"rootfs\"}, "
			  "\"linux\": {\"resources\": {\"devices\": [{\"allow\": false, "
			  "\"access\": \"rwm\"}]}}}",
			  false, NULL));
	assert_true(plain("{\"annotations\": {\"io.kubernetes.cri.container-type\": \"sandbox\", "
			  "\"io.container.manager\": \"libpod\"}}",
			  false, NULL));
	/* containerd's CRI for a BestEffort and a Burstable container */
	assert_true(plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 2}}}}", false, NULL));
	assert_true(plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 512, \"period\": "
			  "100000, \"quota\": 0}, \"memory\": {\"limit\": 1073741824}}}}",
			  false, NULL));
	assert_true(plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 262144, \"cpus\": "
			  "\"\", \"mems\": \"\", \"quota\": null}}}}",
			  false, NULL));
	assert_true(plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 0}}}}", true, NULL));
	assert_true(plain("{\"linux\": {\"resources\": {\"cpu\": {}, \"hugepageLimits\": []}}}",
			  true, NULL));
	assert_true(plain("{\"linux\": {\"devices\": [{\"path\": \"/dev/fuse\", \"type\": \"c\", "
			  "\"major\": 10, \"minor\": 229}]}}",
			  false, NULL));
}

static void test_not_plain(void **state)
{
	const char *why = NULL;

	(void)state;
	assert_false(
		plain("{\"annotations\": {\"toposhim.io/class\": \"standard\"}}", false, &why));
	assert_string_equal(why, "toposhim.io/class");
	assert_false(plain("{\"annotations\": {\"toposhim.io/cpus.web\": \"1\"}}", false, &why));
	assert_string_equal(why, "toposhim.io/cpus.web");
	assert_false(plain("{\"annotations\": {\"cdi.k8s.io/gpu\": \"vendor.com/gpu=0\"}}", false,
			   &why));
	assert_string_equal(why, "cdi.k8s.io/gpu");
	assert_false(plain("{\"process\": {\"env\": [\"TOPOSHIM_CDI_DEVICES=vendor.com/gpu=0\"]}}",
			   false, &why));
	assert_string_equal(why, "a TOPOSHIM_ variable in process.env");
	/* what the core translates */
	assert_false(
		plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 1024}}}}", true, &why));
	assert_string_equal(why, "cpu shares the core translates");
	assert_false(
		plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 1}}}}", false, &why));
	assert_false(plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": 300000}}}}", false,
			   &why));
	assert_false(
		plain("{\"linux\": {\"resources\": {\"cpu\": {\"shares\": \"2\"}}}}", false, &why));
	assert_false(plain("{\"linux\": {\"resources\": {\"unified\": {}}}}", false, &why));
	assert_string_equal(why, "linux.resources.unified");
	assert_false(
		plain("{\"linux\": {\"resources\": {\"hugepageLimits\": [{\"pageSize\": \"2MB\", "
		      "\"limit\": 1}]}}}",
		      false, &why));
	assert_string_equal(why, "linux.resources.hugepageLimits");
	/* a request of its own */
	assert_false(plain("{\"linux\": {\"resources\": {\"cpu\": {\"quota\": 100000, \"period\": "
			   "100000, \"shares\": 1024}}}}",
			   false, &why));
	assert_string_equal(why, "a cpu quota");
	assert_false(
		plain("{\"linux\": {\"resources\": {\"cpu\": {\"quota\": -1}}}}", false, &why));
	assert_false(
		plain("{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"0-1\"}}}}", false, &why));
	assert_string_equal(why, "a cpuset of its own");
	assert_false(
		plain("{\"linux\": {\"resources\": {\"cpu\": {\"mems\": \"0\"}}}}", false, &why));
	assert_false(plain("{\"linux\": {\"resources\": {\"cpu\": {\"realtimeRuntime\": 5}}}}",
			   false, &why));
	assert_string_equal(why, "a cpu member toposhim does not judge here");
	/* shapes the core judges (and reports) */
	assert_false(plain("[]", false, &why));
	assert_false(plain("{\"annotations\": []}", false, &why));
	assert_false(plain("{\"annotations\": {\"a\": \"1\", \"a\": \"2\"}}", false, &why));
	assert_false(plain("{\"linux\": 1}", false, &why));
	assert_false(plain("{\"linux\": {}, \"linux\": {}}", false, &why));
	assert_false(plain("{\"linux\": {\"resources\": {\"cpu\": []}}}", false, &why));
	assert_false(plain("{\"process\": {\"env\": {}}}", false, &why));
	assert_false(plain("{\"process\": {\"env\": [1]}}", false, &why));
	assert_false(ts_cli_plain_config(NULL, false, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_configs),
		cmocka_unit_test(test_not_plain),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
