/* Unit tests of src/oci/spec.c: every helper, with the exact resulting JSON or error text. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "oci/spec.h"
#include "util/cleanup.h"

/* Each op makes one call; getters print what they read into got. */
typedef int (*op_fn)(struct ts_json *c, char *got, size_t size, struct ts_error **err);

static int print_str(int r, const char *v, char *got, size_t size)
{
	if (r == 1)
		snprintf(got, size, "%s", v);
	return r;
}

static int op_annotation_get(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const char *v = NULL;

	int r = ts_oci_annotation_get(c, "toposhim.io/cpus", &v, err);

	return print_str(r, v, got, size);
}

static int op_annotation_set(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_annotation_set(c, "toposhim.io/cpus", "4", err);
}

static int op_annotation_set_empty_key(struct ts_json *c, char *got, size_t size,
				       struct ts_error **err)
{
	return ts_oci_annotation_set(c, "", "4", err);
}

static int op_annotation_remove(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_annotation_remove(c, "toposhim.io/cpus", err);
}

static int op_env_set_foo(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_env_set(c, "FOO=bar=baz", err);
}

static int op_env_set_empty_value(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_env_set(c, "FOO=", err);
}

static int op_env_set_no_eq(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_env_set(c, "FOO", err);
}

static int op_env_set_no_name(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_env_set(c, "=x", err);
}

static int op_env_get_foo(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const char *v = NULL;

	int r = ts_oci_env_get(c, "FOO", &v, err);

	return print_str(r, v, got, size);
}

static int op_uid(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	uint32_t uid = 0;
	int r = ts_oci_process_get_uid(c, &uid, err);

	if (r == 1)
		snprintf(got, size, "%" PRIu32, uid);
	return r;
}

static int op_hook_full(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	static const char *const args[] = {"toposhim", "hook", "create-runtime", NULL};
	static const char *const env[] = {"A=1", NULL};
	const struct ts_oci_hook hook = {
		.path = "/usr/libexec/toposhim", .args = args, .env = env, .timeout_sec = 10};

	return ts_oci_hook_append(c, "createRuntime", &hook, err);
}

static int op_hook_minimal(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const struct ts_oci_hook hook = {.path = "/bin/true"};

	return ts_oci_hook_append(c, "poststop", &hook, err);
}

static int op_hook_unknown(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const struct ts_oci_hook hook = {.path = "/bin/true"};

	return ts_oci_hook_append(c, "postStop", &hook, err);
}

static int op_hook_relative(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const struct ts_oci_hook hook = {.path = "bin/true"};

	return ts_oci_hook_append(c, "prestart", &hook, err);
}

static int op_hook_negative_timeout(struct ts_json *c, char *got, size_t size,
				    struct ts_error **err)
{
	const struct ts_oci_hook hook = {.path = "/bin/true", .timeout_sec = -5};

	return ts_oci_hook_append(c, "startContainer", &hook, err);
}

static int op_cgroups_path(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const char *v = NULL;

	int r = ts_oci_linux_get_cgroups_path(c, &v, err);

	return print_str(r, v, got, size);
}

static int op_userns(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_linux_has_user_namespace(c, err);
}

static int op_cpus_get(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const char *v = NULL;

	int r = ts_oci_cpu_get_cpus(c, &v, err);

	return print_str(r, v, got, size);
}

static int op_cpus_set(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_cpu_set_cpus(c, "2-3", err);
}

static int op_cpus_set_null(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_cpu_set_cpus(c, NULL, err);
}

static int op_mems_get(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	const char *v = NULL;

	int r = ts_oci_cpu_get_mems(c, &v, err);

	return print_str(r, v, got, size);
}

static int op_mems_set(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_cpu_set_mems(c, "1", err);
}

static int op_shares_get(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	uint64_t v = 0;
	int r = ts_oci_cpu_get_shares(c, &v, err);

	if (r == 1)
		snprintf(got, size, "%" PRIu64, v);
	return r;
}

static int op_shares_set(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_cpu_set_shares(c, UINT64_MAX, err);
}

static int op_quota_get(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	int64_t v = 0;
	int r = ts_oci_cpu_get_quota(c, &v, err);

	if (r == 1)
		snprintf(got, size, "%" PRId64, v);
	return r;
}

static int op_quota_set(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_cpu_set_quota(c, -1, err);
}

static int op_period_get(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	uint64_t v = 0;
	int r = ts_oci_cpu_get_period(c, &v, err);

	if (r == 1)
		snprintf(got, size, "%" PRIu64, v);
	return r;
}

static int op_period_set(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_cpu_set_period(c, 100000, err);
}

static int op_memory_get(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	int64_t v = 0;
	int r = ts_oci_memory_get_limit(c, &v, err);

	if (r == 1)
		snprintf(got, size, "%" PRId64, v);
	return r;
}

static int op_memory_set(struct ts_json *c, char *got, size_t size, struct ts_error **err)
{
	return ts_oci_memory_set_limit(c, 536870912, err);
}

struct row {
	const char *name;
	const char *in;
	op_fn op;
	int ret;
	/* ret < 0: the error message; a getter (ret 1): the value read; otherwise the compact
	 * config after the call (NULL: unchanged) */
	const char *expect;
};

#define RES "{\"linux\":{\"resources\":{\"cpu\":"

static const struct row rows[] = {
	/* annotations */
	{"annotation get", "{\"annotations\":{\"a\":\"b\",\"toposhim.io/cpus\":\"2\"}}",
	 op_annotation_get, 1, "2"},
	{"annotation get absent", "{\"annotations\":{\"a\":\"b\"}}", op_annotation_get, 0, NULL},
	{"annotation get no object", "{}", op_annotation_get, 0, NULL},
	{"annotation get null object", "{\"annotations\":null}", op_annotation_get, 0, NULL},
	{"annotation get not string", "{\"annotations\":{\"toposhim.io/cpus\":2}}",
	 op_annotation_get, -EINVAL,
	 "'/annotations/toposhim.io~1cpus': expected string, got number"},
	{"annotation get bad object", "{\"annotations\":[]}", op_annotation_get, -EINVAL,
	 "'/annotations': expected object, got array"},
	{"annotation set new", "{\"ociVersion\":\"1.0.2\"}", op_annotation_set, 0,
	 "{\"ociVersion\":\"1.0.2\",\"annotations\":{\"toposhim.io/cpus\":\"4\"}}"},
	{"annotation set replaces in place",
	 "{\"annotations\":{\"toposhim.io/cpus\":\"2\",\"z\":\"y\"},\"x\":1}", op_annotation_set, 0,
	 "{\"annotations\":{\"toposhim.io/cpus\":\"4\",\"z\":\"y\"},\"x\":1}"},
	{"annotation set over null", "{\"annotations\":null,\"x\":1}", op_annotation_set, 0,
	 "{\"annotations\":{\"toposhim.io/cpus\":\"4\"},\"x\":1}"},
	{"annotation set bad object", "{\"annotations\":\"s\"}", op_annotation_set, -EINVAL,
	 "'/annotations': expected object, got string"},
	{"annotation set empty key", "{}", op_annotation_set_empty_key, -EINVAL,
	 "'/annotations': empty key"},
	{"annotation remove", "{\"annotations\":{\"toposhim.io/cpus\":\"2\",\"a\":\"b\"}}",
	 op_annotation_remove, 1, "{\"annotations\":{\"a\":\"b\"}}"},
	{"annotation remove absent", "{\"annotations\":{\"a\":\"b\"}}", op_annotation_remove, 0,
	 NULL},
	{"annotation remove no object", "{}", op_annotation_remove, 0, NULL},
	{"annotation remove bad object", "{\"annotations\":1}", op_annotation_remove, -EINVAL,
	 "'/annotations': expected object, got number"},
	/* environment */
	{"env set creates process", "{\"ociVersion\":\"1\"}", op_env_set_foo, 0,
	 "{\"ociVersion\":\"1\",\"process\":{\"env\":[\"FOO=bar=baz\"]}}"},
	{"env set creates env", "{\"process\":{\"args\":[\"sh\"]}}", op_env_set_foo, 0,
	 "{\"process\":{\"args\":[\"sh\"],\"env\":[\"FOO=bar=baz\"]}}"},
	{"env set appends", "{\"process\":{\"env\":[\"PATH=/bin\",\"FOOD=x\"]}}", op_env_set_foo, 0,
	 "{\"process\":{\"env\":[\"PATH=/bin\",\"FOOD=x\",\"FOO=bar=baz\"]}}"},
	{"env set replaces first in place",
	 "{\"process\":{\"env\":[\"A=1\",\"FOO=old\",\"B=2\",\"FOO=older\"]}}", op_env_set_foo, 0,
	 "{\"process\":{\"env\":[\"A=1\",\"FOO=bar=baz\",\"B=2\",\"FOO=older\"]}}"},
	{"env set empty value", "{\"process\":{\"env\":[\"FOO=x\"]}}", op_env_set_empty_value, 0,
	 "{\"process\":{\"env\":[\"FOO=\"]}}"},
	{"env set over null env", "{\"process\":{\"env\":null}}", op_env_set_foo, 0,
	 "{\"process\":{\"env\":[\"FOO=bar=baz\"]}}"},
	{"env set no equals", "{}", op_env_set_no_eq, -EINVAL,
	 "'/process/env': invalid entry 'FOO' (expected NAME=VALUE)"},
	{"env set no name", "{}", op_env_set_no_name, -EINVAL,
	 "'/process/env': invalid entry '=x' (expected NAME=VALUE)"},
	{"env set bad process", "{\"process\":[]}", op_env_set_foo, -EINVAL,
	 "'/process': expected object, got array"},
	{"env set bad env", "{\"process\":{\"env\":\"FOO=1\"}}", op_env_set_foo, -EINVAL,
	 "'/process/env': expected array, got string"},
	{"env set bad entry", "{\"process\":{\"env\":[\"A=1\",7]}}", op_env_set_foo, -EINVAL,
	 "'/process/env/1': expected string, got number"},
	{"env get", "{\"process\":{\"env\":[\"FOOD=1\",\"FOO=a=b\",\"FOO=c\"]}}", op_env_get_foo, 1,
	 "a=b"},
	{"env get absent", "{\"process\":{\"env\":[\"FOOD=1\",\"FO=2\"]}}", op_env_get_foo, 0,
	 NULL},
	{"env get no env", "{\"process\":{}}", op_env_get_foo, 0, NULL},
	{"env get bad entry", "{\"process\":{\"env\":[null]}}", op_env_get_foo, -EINVAL,
	 "'/process/env/0': expected string, got null"},
	/* uid */
	{"uid", "{\"process\":{\"user\":{\"uid\":1000,\"gid\":0}}}", op_uid, 1, "1000"},
	{"uid max", "{\"process\":{\"user\":{\"uid\":4294967295}}}", op_uid, 1, "4294967295"},
	{"uid absent", "{\"process\":{\"user\":{}}}", op_uid, 0, NULL},
	{"uid too big", "{\"process\":{\"user\":{\"uid\":4294967296}}}", op_uid, -ERANGE,
	 "'/process/user/uid': out of range '4294967296'"},
	{"uid negative", "{\"process\":{\"user\":{\"uid\":-1}}}", op_uid, -ERANGE,
	 "'/process/user/uid': out of range '-1'"},
	{"uid fraction", "{\"process\":{\"user\":{\"uid\":1.5}}}", op_uid, -EINVAL,
	 "'/process/user/uid': not an integer '1.5'"},
	{"uid string", "{\"process\":{\"user\":{\"uid\":\"0\"}}}", op_uid, -EINVAL,
	 "'/process/user/uid': expected number, got string"},
	{"uid bad user", "{\"process\":{\"user\":true}}", op_uid, -EINVAL,
	 "'/process/user': expected object, got boolean"},
	/* hooks */
	{"hook full", "{\"ociVersion\":\"1\"}", op_hook_full, 0,
	 "{\"ociVersion\":\"1\",\"hooks\":{\"createRuntime\":[{\"path\":\"/usr/libexec/toposhim\","
	 "\"args\":[\"toposhim\",\"hook\",\"create-runtime\"],\"env\":[\"A=1\"],\"timeout\":10}]}"
	 "}"},
	{"hook appended after existing",
	 "{\"hooks\":{\"prestart\":[],\"poststop\":[{\"path\":\"/a\"}]}}", op_hook_minimal, 0,
	 "{\"hooks\":{\"prestart\":[],\"poststop\":[{\"path\":\"/a\"},{\"path\":\"/bin/true\"}]}}"},
	{"hook new list", "{\"hooks\":{\"prestart\":[]}}", op_hook_minimal, 0,
	 "{\"hooks\":{\"prestart\":[],\"poststop\":[{\"path\":\"/bin/true\"}]}}"},
	{"hook null list", "{\"hooks\":{\"poststop\":null}}", op_hook_minimal, 0,
	 "{\"hooks\":{\"poststop\":[{\"path\":\"/bin/true\"}]}}"},
	{"hook unknown list", "{}", op_hook_unknown, -EINVAL, "unknown hook list 'postStop'"},
	{"hook relative path", "{}", op_hook_relative, -EINVAL,
	 "'/hooks/prestart': path not absolute 'bin/true'"},
	{"hook negative timeout", "{}", op_hook_negative_timeout, -EINVAL,
	 "'/hooks/startContainer': timeout must be positive '-5'"},
	{"hook bad hooks", "{\"hooks\":[]}", op_hook_minimal, -EINVAL,
	 "'/hooks': expected object, got array"},
	{"hook bad list", "{\"hooks\":{\"poststop\":{}}}", op_hook_minimal, -EINVAL,
	 "'/hooks/poststop': expected array, got object"},
	/* cgroupsPath, namespaces */
	{"cgroupsPath", "{\"linux\":{\"cgroupsPath\":\"system.slice:ctr:abc\"}}", op_cgroups_path,
	 1, "system.slice:ctr:abc"},
	{"cgroupsPath absent", "{\"linux\":{}}", op_cgroups_path, 0, NULL},
	{"cgroupsPath no linux", "{}", op_cgroups_path, 0, NULL},
	{"cgroupsPath bad", "{\"linux\":{\"cgroupsPath\":[]}}", op_cgroups_path, -EINVAL,
	 "'/linux/cgroupsPath': expected string, got array"},
	{"cgroupsPath bad linux", "{\"linux\":\"x\"}", op_cgroups_path, -EINVAL,
	 "'/linux': expected object, got string"},
	{"userns yes",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"user\",\"path\":\"/proc/1/ns/"
	 "user\"}]}}",
	 op_userns, 1, NULL},
	{"userns no", "{\"linux\":{\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"mount\"}]}}",
	 op_userns, 0, NULL},
	{"userns no list", "{\"linux\":{}}", op_userns, 0, NULL},
	{"userns bad list", "{\"linux\":{\"namespaces\":{}}}", op_userns, -EINVAL,
	 "'/linux/namespaces': expected array, got object"},
	{"userns bad entry", "{\"linux\":{\"namespaces\":[{\"type\":\"pid\"},\"user\"]}}",
	 op_userns, -EINVAL, "'/linux/namespaces/1': expected object, got string"},
	{"userns bad type", "{\"linux\":{\"namespaces\":[{\"type\":1}]}}", op_userns, -EINVAL,
	 "'/linux/namespaces/0/type': expected string, got number"},
	/* cpu */
	{"cpus get", RES "{\"cpus\":\"0-3,8\",\"mems\":\"0\"}}}}", op_cpus_get, 1, "0-3,8"},
	{"cpus get absent", RES "{}}}}", op_cpus_get, 0, NULL},
	{"cpus get no resources", "{\"linux\":{}}", op_cpus_get, 0, NULL},
	{"cpus get null cpu", RES "null}}}", op_cpus_get, 0, NULL},
	{"cpus get bad", RES "{\"cpus\":3}}}}", op_cpus_get, -EINVAL,
	 "'/linux/resources/cpu/cpus': expected string, got number"},
	{"cpus get bad cpu", RES "[]}}}", op_cpus_get, -EINVAL,
	 "'/linux/resources/cpu': expected object, got array"},
	{"cpus set creates", "{\"linux\":{\"namespaces\":[]}}", op_cpus_set, 0,
	 "{\"linux\":{\"namespaces\":[],\"resources\":{\"cpu\":{\"cpus\":\"2-3\"}}}}"},
	{"cpus set from nothing", "{}", op_cpus_set, 0,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"2-3\"}}}}"},
	{"cpus set replaces in place", RES "{\"shares\":1024,\"cpus\":\"0\",\"mems\":\"0\"}}}}",
	 op_cpus_set, 0, RES "{\"shares\":1024,\"cpus\":\"2-3\",\"mems\":\"0\"}}}}"},
	{"cpus set over null resources", "{\"linux\":{\"resources\":null}}", op_cpus_set, 0,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"2-3\"}}}}"},
	{"cpus set bad resources", "{\"linux\":{\"resources\":[]}}", op_cpus_set, -EINVAL,
	 "'/linux/resources': expected object, got array"},
	{"cpus set null", "{}", op_cpus_set_null, -EINVAL,
	 "'/linux/resources/cpu/cpus': no value given"},
	{"mems get", RES "{\"mems\":\"0-1\"}}}}", op_mems_get, 1, "0-1"},
	{"mems set", RES "{\"cpus\":\"1\"}}}}", op_mems_set, 0,
	 RES "{\"cpus\":\"1\",\"mems\":\"1\"}}}}"},
	{"shares get", RES "{\"shares\":1024}}}}", op_shares_get, 1, "1024"},
	{"shares get max", RES "{\"shares\":18446744073709551615}}}}", op_shares_get, 1,
	 "18446744073709551615"},
	{"shares get negative", RES "{\"shares\":-2}}}}", op_shares_get, -ERANGE,
	 "'/linux/resources/cpu/shares': out of range '-2'"},
	{"shares get exponent", RES "{\"shares\":1e3}}}}", op_shares_get, -EINVAL,
	 "'/linux/resources/cpu/shares': not an integer '1e3'"},
	{"shares get null", RES "{\"shares\":null}}}}", op_shares_get, 0, NULL},
	{"shares set", RES "{\"shares\":2}}}}", op_shares_set, 0,
	 RES "{\"shares\":18446744073709551615}}}}"},
	{"quota get unlimited", RES "{\"quota\":-1}}}}", op_quota_get, 1, "-1"},
	{"quota get too big", RES "{\"quota\":9223372036854775808}}}}", op_quota_get, -ERANGE,
	 "'/linux/resources/cpu/quota': out of range '9223372036854775808'"},
	{"quota set", "{}", op_quota_set, 0,
	 "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":-1}}}}"},
	{"period get", RES "{\"period\":100000}}}}", op_period_get, 1, "100000"},
	{"period get string", RES "{\"period\":\"100000\"}}}}", op_period_get, -EINVAL,
	 "'/linux/resources/cpu/period': expected number, got string"},
	{"period set", RES "{\"quota\":50000}}}}", op_period_set, 0,
	 RES "{\"quota\":50000,\"period\":100000}}}}"},
	/* memory */
	{"memory get", "{\"linux\":{\"resources\":{\"memory\":{\"limit\":-1}}}}", op_memory_get, 1,
	 "-1"},
	{"memory get absent", "{\"linux\":{\"resources\":{\"memory\":{}}}}", op_memory_get, 0,
	 NULL},
	{"memory get bad", "{\"linux\":{\"resources\":{\"memory\":{\"limit\":\"1G\"}}}}",
	 op_memory_get, -EINVAL, "'/linux/resources/memory/limit': expected number, got string"},
	{"memory set next to cpu", RES "{\"cpus\":\"0\"}}}}", op_memory_set, 0,
	 RES "{\"cpus\":\"0\"},\"memory\":{\"limit\":536870912}}}}"},
	{"memory set bad memory", "{\"linux\":{\"resources\":{\"memory\":0}}}", op_memory_set,
	 -EINVAL, "'/linux/resources/memory': expected object, got number"},
	/* the root itself */
	{"root not object", "[]", op_cpus_get, -EINVAL, "'': expected object, got array"},
	{"root not object set", "[]", op_env_set_foo, -EINVAL, "'': expected object, got array"},
};

static void test_spec_rows(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *c = NULL;
		cleanup_free char *before = NULL, *after = NULL;
		char got[128] = "";
		int r;

		print_message("row %s\n", rows[i].name);
		assert_int_equal(ts_json_parse(rows[i].in, strlen(rows[i].in), "t", &c, &err), 0);
		assert_int_equal(ts_json_serialize(c, false, &before, NULL, &err), 0);
		r = rows[i].op(c, got, sizeof(got), &err);
		assert_int_equal(r, rows[i].ret);
		assert_int_equal(ts_json_serialize(c, false, &after, NULL, &err), 0);
		if (r < 0) {
			assert_non_null(err);
			assert_string_equal(err->msg, rows[i].expect);
			assert_string_equal(after, before); /* failures change nothing */
			continue;
		}
		assert_null(err);
		if (r == 1 && got[0] != '\0') {
			assert_string_equal(got, rows[i].expect);
			assert_string_equal(after, before); /* getters change nothing */
		} else {
			assert_string_equal(after, rows[i].expect ? rows[i].expect : before);
		}
	}
}

static void test_hook_names(void **state)
{
	static const struct {
		const char *name;
		bool valid;
	} names[] = {
		{"prestart", true},
		{"createRuntime", true},
		{"createContainer", true},
		{"startContainer", true},
		{"poststart", true},
		{"poststop", true},
		{"CreateRuntime", false},
		{"", false},
		{NULL, false},
		{"createRuntime ", false},
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		assert_int_equal(ts_oci_hook_name_valid(names[i].name), names[i].valid);
}

/* Getters leave their output alone when the field is unset. */
static void test_getters_leave_output(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *c = NULL;
	const char *s = "untouched";
	uint64_t u = 7;
	int64_t i = 7;
	uint32_t uid = 7;

	assert_int_equal(ts_json_parse("{}", 2, "t", &c, &err), 0);
	assert_int_equal(ts_oci_cpu_get_cpus(c, &s, &err), 0);
	assert_int_equal(ts_oci_cpu_get_shares(c, &u, &err), 0);
	assert_int_equal(ts_oci_memory_get_limit(c, &i, &err), 0);
	assert_int_equal(ts_oci_process_get_uid(c, &uid, &err), 0);
	assert_string_equal(s, "untouched");
	assert_true(u == 7 && i == 7 && uid == 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_rows),
		cmocka_unit_test(test_hook_names),
		cmocka_unit_test(test_getters_leave_output),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
