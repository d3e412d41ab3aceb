/* Unit tests of src/cdi/name.c: qualified device names and annotation requests. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cdi/cdi.h"
#include "util/cleanup.h"

static const struct name_row {
	const char *name;
	const char *want_err; /* NULL: valid */
	const char *vendor, *class, *device_name;
} names[] = {
	{"vendor.com/device=dev1", NULL, "vendor.com", "device", "dev1"},
	{"v/c=0", NULL, "v", "c", "0"},
	{"nvidia.com/gpu=all", NULL, "nvidia.com", "gpu", "all"},
	{"a_b-c.d/e.f_g-h=i:j.k_l-m", NULL, "a_b-c.d", "e.f_g-h", "i:j.k_l-m"},
	{"vendor1.com/device=dev1=x",
	 "invalid qualified device name 'vendor1.com/device=dev1=x': "
	 "invalid device name 'dev1=x': invalid character '='",
	 NULL, NULL, NULL},
	{"foobar", "invalid qualified device name 'foobar': missing '='", NULL, NULL, NULL},
	{"vendor.com=dev", "invalid qualified device name 'vendor.com=dev': missing '/'", NULL,
	 NULL, NULL},
	{"/dev/null", "invalid qualified device name '/dev/null': missing '='", NULL, NULL, NULL},
	{"/c=d", "invalid qualified device name '/c=d': invalid vendor '': empty", NULL, NULL,
	 NULL},
	{"v/=d", "invalid qualified device name 'v/=d': invalid class '': empty", NULL, NULL, NULL},
	{"v/c=", "invalid qualified device name 'v/c=': invalid device name '': empty", NULL, NULL,
	 NULL},
	{"1v/c=d",
	 "invalid qualified device name '1v/c=d': invalid vendor '1v': should start with a letter",
	 NULL, NULL, NULL},
	{"vendor.com-/c=d",
	 "invalid qualified device name 'vendor.com-/c=d': invalid vendor "
	 "'vendor.com-': should end with a letter or digit",
	 NULL, NULL, NULL},
	{"v/c:x=d",
	 "invalid qualified device name 'v/c:x=d': invalid class 'c:x': invalid character ':'",
	 NULL, NULL, NULL},
	{"v/c/x=d",
	 "invalid qualified device name 'v/c/x=d': invalid class 'c/x': invalid character '/'",
	 NULL, NULL, NULL},
	/* not a byte of it: the character (helper-16 saw '\xef' for U+FFFD) */
	{"v/c=a\xef\xbf\xbd"
	 "b",
	 "invalid qualified device name 'v/c=a\xef\xbf\xbd"
	 "b': invalid device name "
	 "'a\xef\xbf\xbd"
	 "b': invalid character U+FFFD",
	 NULL, NULL, NULL},
	{"v/c=a\tb",
	 "invalid qualified device name 'v/c=a\tb': invalid device name 'a\tb': invalid "
	 "character U+0009",
	 NULL, NULL, NULL},
	{"v/c=a\xff"
	 "b",
	 "invalid qualified device name 'v/c=a\xff"
	 "b': invalid device name 'a\xff"
	 "b': invalid "
	 "character byte 0xFF",
	 NULL, NULL, NULL},
	{"v/c=-d",
	 "invalid qualified device name 'v/c=-d': invalid device name '-d': should start "
	 "with a letter or digit",
	 NULL, NULL, NULL},
	{"v/c=d.",
	 "invalid qualified device name 'v/c=d.': invalid device name 'd.': should end "
	 "with a letter or digit",
	 NULL, NULL, NULL},
};

static void test_qualified_names(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *vendor = NULL, *class = NULL, *device_name = NULL;
		int r = ts_cdi_qualified_name_parse(names[i].name, &vendor, &class, &device_name,
						    &err);

		if (names[i].want_err == NULL) {
			if (r != 0)
				fail_msg("%s: %s", names[i].name, err->msg);
			assert_string_equal(vendor, names[i].vendor);
			assert_string_equal(class, names[i].class);
			assert_string_equal(device_name, names[i].device_name);
			assert_true(ts_cdi_qualified_name_is_valid(names[i].name));
			continue;
		}
		if (r != -EINVAL || strcmp(err->msg, names[i].want_err) != 0)
			fail_msg("%s: want '%s', got %d '%s'", names[i].name, names[i].want_err, r,
				 err ? err->msg : "(none)");
		assert_null(vendor);
		assert_false(ts_cdi_qualified_name_is_valid(names[i].name));
	}
}

static struct ts_json *parse(const char *text)
{
	struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_json_parse(text, strlen(text), "config.json", &j, &err), 0);
	return j;
}

static char *joined(char **v)
{
	size_t len = 1;
	char *s;

	for (char **p = v; *p; p++)
		len += strlen(*p) + 1;
	s = calloc(1, len);
	for (char **p = v; *p; p++) {
		if (p != v)
			strcat(s, "|");
		strcat(s, *p);
	}
	return s;
}

static const struct req_row {
	const char *config;
	bool env;
	int want;
	const char *want_names; /* '|'-joined, or the error message */
} reqs[] = {
	{"{}", false, 0, ""},
	{"{\"annotations\":{\"other\":\"a/b=c\"}}", false, 0, ""},
	/* keys sorted, values split, duplicates once, first one wins */
	{"{\"annotations\":{\"cdi.k8s.io/z\":\"v/c=1,v/c=2\",\"cdi.k8s.io/a\":\"v/c=3,v/c=1\","
	 "\"cdi.k8s.io/m\":\"v/c=2\"}}",
	 false, 3, "v/c=3|v/c=1|v/c=2"},
	/* every part must be a qualified name (E4's "foobar"; an empty one) */
	{"{\"annotations\":{\"cdi.k8s.io/devices\":\"foobar,,v/c=1\"}}", false, -EINVAL,
	 "config.json: '/annotations/cdi.k8s.io~1devices': invalid qualified device name 'foobar': "
	 "missing '='"},
	{"{\"annotations\":{\"cdi.k8s.io/devices\":\"v/c=1,,\"}}", false, -EINVAL,
	 "config.json: '/annotations/cdi.k8s.io~1devices': empty device name at position 2 of "
	 "the list (a ',' too many)"},
	{"{\"annotations\":{\"cdi.k8s.io/devices\":\"\"}}", false, -EINVAL,
	 "config.json: '/annotations/cdi.k8s.io~1devices': empty, no device named"},
	{"{\"annotations\":{\"cdi.k8s.io/x\":1}}", false, -EINVAL,
	 "config.json: '/annotations/cdi.k8s.io~1x': expected string, got number"},
	{"{\"annotations\":{\"cdi.k8s.io/x\":\"v/c=1\"},\"process\":{\"env\":[\"TOPOSHIM_CDI_"
	 "DEVICES=v/c=2,v/c=1\"]}}",
	 false, 1, "v/c=1"},
	{"{\"annotations\":{\"cdi.k8s.io/x\":\"v/c=1\"},\"process\":{\"env\":[\"TOPOSHIM_CDI_"
	 "DEVICES=v/c=2,v/c=1\"]}}",
	 true, 2, "v/c=1|v/c=2"},
	/* the env's names are checked as the annotations' (helper-7: an
	 * unresolvable "v/c", a list of empty names for ",,,") */
	{"{\"process\":{\"env\":[\"A=b\",\"TOPOSHIM_CDI_DEVICES=vendor.com/class\"]}}", true,
	 -EINVAL,
	 "config.json: '/process/env/1': invalid qualified device name 'vendor.com/class': "
	 "missing '='"},
	{"{\"process\":{\"env\":[\"TOPOSHIM_CDI_DEVICES=,,,\"]}}", true, -EINVAL,
	 "config.json: '/process/env/0': empty device name at position 1 of the list (a ',' too "
	 "many)"},
	/* not read without env_requests */
	{"{\"process\":{\"env\":[\"TOPOSHIM_CDI_DEVICES=,,,\"]}}", false, 0, ""},
	/* an empty one is an unset one (helper-24 asked); an empty
	 * annotation is refused */
	{"{\"process\":{\"env\":[\"TOPOSHIM_CDI_DEVICES=\"]}}", true, 0, ""},
	{"{\"annotations\":{\"cdi.k8s.io/x\":\"\"}}", true, -EINVAL,
	 "config.json: '/annotations/cdi.k8s.io~1x': empty, no device named"},
	/* oci/role.h: a pod's sandbox takes none of the pod's devices, not
	 * even from the env; an app container the unscoped and its own scoped
	 * ones (after them, duplicates once), not another container's */
	{"{\"annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\","
	 "\"cdi.k8s.io/x\":\"v/c=1\",\"toposhim.io/cdi\":\"v/c=4\"},"
	 "\"process\":{\"env\":[\"TOPOSHIM_CDI_DEVICES=v/c=2\"]}}",
	 true, 0, ""},
	{"{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
	 "\"cdi.k8s.io/x\":\"not a name\"}}",
	 false, 0, ""},
	{"{\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
	 "\"io.kubernetes.cri.container-name\":\"worker\",\"cdi.k8s.io/x\":\"v/c=1\","
	 "\"toposhim.io/cdi.worker\":\"v/c=2,v/c=1\",\"toposhim.io/cdi.web\":\"v/c=3\"}}",
	 false, 2, "v/c=1|v/c=2"},
	{"{\"annotations\":{\"io.kubernetes.cri.container-name\":\"web\","
	 "\"toposhim.io/cdi.worker\":\"v/c=2\",\"toposhim.io/cdi.web\":\"v/c=3\"}}",
	 false, 1, "v/c=3"},
	{"{\"annotations\":{\"io.kubernetes.cri.container-name\":\"web\","
	 "\"toposhim.io/cdi.web\":\"v/c=3,gpu0\"}}",
	 false, -EINVAL,
	 "config.json: '/annotations/toposhim.io~1cdi.web': invalid qualified device name 'gpu0': "
	 "missing '='"},
	{"{\"annotations\":{\"io.kubernetes.cri.container-name\":\"web\","
	 "\"toposhim.io/cdi.Web\":\"v/c=3\"}}",
	 false, -EINVAL,
	 "config.json: '/annotations/toposhim.io~1cdi.Web': invalid container name 'Web' (a DNS "
	 "label: lowercase letters, digits and '-')"},
};

static void test_requests(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(reqs); i++) {
		cleanup_json struct ts_json *config = parse(reqs[i].config);
		cleanup_error struct ts_error *err = NULL;
		cleanup_strv char **v = NULL;
		cleanup_free char *got = NULL;
		int r = ts_cdi_requests_from_config(config, "config.json", reqs[i].env, &v, &err);

		if (r != reqs[i].want)
			fail_msg("row %zu: want %d, got %d (%s)", i, reqs[i].want, r,
				 err ? err->msg : "");
		if (r < 0) {
			assert_string_equal(err->msg, reqs[i].want_names);
			continue;
		}
		got = joined(v);
		if (strcmp(got, reqs[i].want_names) != 0)
			fail_msg("row %zu: want '%s', got '%s'", i, reqs[i].want_names, got);
	}
}

/* ts_cdi_requests_collect(): each name with where it was asked for first
 * (a pod-wide annotation, the container's scoped one, the env). */
static void test_requests_where(void **state)
{
	cleanup_json struct ts_json *config =
		parse("{\"annotations\":{\"io.kubernetes.cri.container-name\":\"worker\","
		      "\"cdi.k8s.io/gpu\":\"v/c=1\",\"toposhim.io/cdi.worker\":\"v/c=2,v/c=1\"},"
		      "\"process\":{\"env\":[\"A=b\",\"TOPOSHIM_CDI_DEVICES=v/c=3\"]}}");
	cleanup_error struct ts_error *err = NULL;
	cleanup_strv char **v = NULL, **where = NULL;
	cleanup_free char *got_names = NULL, *got_where = NULL;

	(void)state;
	assert_int_equal(ts_cdi_requests_collect(config, "config.json", true, &v, &where, &err), 3);
	got_names = joined(v);
	got_where = joined(where);
	assert_string_equal(got_names, "v/c=1|v/c=2|v/c=3");
	assert_string_equal(got_where, "/annotations/cdi.k8s.io~1gpu|"
				       "/annotations/toposhim.io~1cdi.worker|/process/env/1");
}

/* A config whose annotation cdi.k8s.io/x is value. */
static struct ts_json *config_with(const char *value)
{
	struct ts_json *config = ts_json_new_object(), *ann = ts_json_new_object();

	assert_int_equal(ts_json_object_set(ann, "cdi.k8s.io/x", ts_json_new_string(value), NULL),
			 0);
	assert_int_equal(ts_json_object_set(config, "annotations", ann, NULL), 0);
	return config;
}

/*
 * 40,000 and 200,000 names in one annotation (issue 10, finding 7): before,
 * 9 s and 216 s of duplicate checks, then a 1 to 5.5 MB "unresolvable"
 * line.  Now the 257th distinct name ends it; repeats of one name cost a
 * comparison each; a name longer than 1024 bytes is refused, shown cut.
 */
static void test_requests_bounded(void **state)
{
	static const char name[] = "vendor.com/class=dev";
	size_t cap = 200000 * (sizeof(name) + 8);
	cleanup_free char *value = malloc(cap), *big = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_json *config;
	char **v = NULL;
	size_t len = 0;

	assert_non_null(value);
	for (int i = 0; i < 40000; i++)
		len += (size_t)snprintf(value + len, cap - len, "%s%s%d", i ? "," : "", name, i);
	config = config_with(value);
	assert_int_equal(ts_cdi_requests_from_config(config, "config.json", false, &v, &err),
			 -EINVAL);
	assert_string_equal(err->msg, "config.json: '/annotations/cdi.k8s.io~1x': more than 256 "
				      "CDI device names requested");
	ts_error_clear(&err);
	ts_json_free(config);

	/* exactly 256 distinct names, then 200,000 repeats of them: accepted */
	len = 0;
	for (int i = 0; i < 200000; i++)
		len += (size_t)snprintf(value + len, cap - len, "%s%s%d", i ? "," : "", name,
					i % 256);
	config = config_with(value);
	assert_int_equal(ts_cdi_requests_from_config(config, "config.json", false, &v, &err), 256);
	assert_string_equal(v[255], "vendor.com/class=dev255");
	ts_strv_freep(&v);
	ts_json_free(config);

	big = malloc(2048);
	assert_non_null(big);
	memset(big, 'a', 2047);
	big[2047] = '\0';
	memcpy(big, "vendor.com/class=", 17);
	config = config_with(big);
	assert_int_equal(ts_cdi_requests_from_config(config, "config.json", false, &v, &err),
			 -EINVAL);
	assert_string_equal(err->msg,
			    "config.json: '/annotations/cdi.k8s.io~1x': device name "
			    "longer than 1024 bytes 'vendor.com/class=aaaaaaaaaaaaaaaaaaaa"
			    "aaaaaaaaaaaaaaaaaaaaaaaaaaa...'");
	ts_json_free(config);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qualified_names),
		cmocka_unit_test(test_requests),
		cmocka_unit_test(test_requests_where),
		cmocka_unit_test(test_requests_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
