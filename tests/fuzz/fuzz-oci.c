/*
 * fuzz-oci.c - what toposhim reads and writes in a container's config.json (src/oci/spec.c
 * and the hook injection of src/cli/cmd-hook.c).  The engine writes config.json, but from
 * what others chose: the image's env, the pod's annotations and resources.
 *
 * Input: config.json.  For an object: every getter, then on a copy every setter toposhim
 * uses (cpus, mems, shares, quota, period, memory limit, an env entry, an annotation) and
 * the hook injection; when a setter succeeds its getter must give back the value, the
 * tree must still serialise and parse, and a second injection must not add hooks (a
 * retried create).  Failures carry a message.  The front's verdict that a config.json is
 * plain (src/cli/plain.c) must be one the core agrees with: no request annotation, no cpu
 * quota or cpuset, and a translation of its cgroup values (src/cgroup/translate.c) on this
 * kind of host that changes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "cli/cmd-hook.h"
#include "cli/plain.h"
#include "fuzz.h"
#include "oci/json.h"
#include "oci/spec.h"
#include "util/cleanup.h"

#define FAILED(e, what) fuzz_check((e) != NULL && (e)->msg != NULL, what)

static void getters(const struct ts_json *c)
{
	cleanup_error struct ts_error *err = NULL;
	const char *s;
	uint64_t u;
	int64_t i;
	uint32_t uid;

	if (ts_oci_cpu_get_cpus(c, &s, &err) < 0)
		FAILED(err, "get cpus: no message");
	ts_error_clear(&err);
	if (ts_oci_cpu_get_mems(c, &s, &err) < 0)
		FAILED(err, "get mems: no message");
	ts_error_clear(&err);
	if (ts_oci_cpu_get_shares(c, &u, &err) < 0)
		FAILED(err, "get shares: no message");
	ts_error_clear(&err);
	if (ts_oci_cpu_get_quota(c, &i, &err) < 0)
		FAILED(err, "get quota: no message");
	ts_error_clear(&err);
	if (ts_oci_cpu_get_period(c, &u, &err) < 0)
		FAILED(err, "get period: no message");
	ts_error_clear(&err);
	if (ts_oci_memory_get_limit(c, &i, &err) < 0)
		FAILED(err, "get limit: no message");
	ts_error_clear(&err);
	if (ts_oci_process_get_uid(c, &uid, &err) < 0)
		FAILED(err, "get uid: no message");
	ts_error_clear(&err);
	if (ts_oci_linux_get_cgroups_path(c, &s, &err) < 0)
		FAILED(err, "get cgroupsPath: no message");
	ts_error_clear(&err);
	if (ts_oci_linux_has_user_namespace(c, &err) < 0)
		FAILED(err, "user namespace: no message");
	ts_error_clear(&err);
	if (ts_oci_env_get(c, "PATH", &s, &err) < 0)
		FAILED(err, "get env: no message");
	ts_error_clear(&err);
	if (ts_oci_annotation_get(c, "toposhim.io/class", &s, &err) < 0)
		FAILED(err, "get annotation: no message");
}

static void setters(struct ts_json *c)
{
	cleanup_error struct ts_error *err = NULL;
	const char *s = NULL;
	uint64_t u = 0;
	int64_t i = 0;

	if (ts_oci_cpu_set_cpus(c, "2-3", &err) == 0)
		fuzz_check(ts_oci_cpu_get_cpus(c, &s, &err) == 1 && strcmp(s, "2-3") == 0,
			   "cpus set but not got");
	ts_error_clear(&err);
	if (ts_oci_cpu_set_mems(c, "0", &err) == 0)
		fuzz_check(ts_oci_cpu_get_mems(c, &s, &err) == 1 && strcmp(s, "0") == 0,
			   "mems set but not got");
	ts_error_clear(&err);
	if (ts_oci_cpu_set_shares(c, 2048, &err) == 0)
		fuzz_check(ts_oci_cpu_get_shares(c, &u, &err) == 1 && u == 2048,
			   "shares set but not got");
	ts_error_clear(&err);
	if (ts_oci_cpu_set_quota(c, -1, &err) == 0)
		fuzz_check(ts_oci_cpu_get_quota(c, &i, &err) == 1 && i == -1,
			   "quota set but not got");
	ts_error_clear(&err);
	if (ts_oci_cpu_set_period(c, 100000, &err) == 0)
		fuzz_check(ts_oci_cpu_get_period(c, &u, &err) == 1 && u == 100000,
			   "period set but not got");
	ts_error_clear(&err);
	if (ts_oci_memory_set_limit(c, 1 << 30, &err) == 0)
		fuzz_check(ts_oci_memory_get_limit(c, &i, &err) == 1 && i == 1 << 30,
			   "limit set but not got");
	ts_error_clear(&err);
	if (ts_oci_env_set(c, "TOPOSHIM_FUZZ=a=b", &err) == 0)
		fuzz_check(ts_oci_env_get(c, "TOPOSHIM_FUZZ", &s, &err) == 1 &&
				   strcmp(s, "a=b") == 0,
			   "env set but not got");
	ts_error_clear(&err);
	if (ts_oci_annotation_set(c, "toposhim.io/placed-cpus", "2-3", &err) == 0)
		fuzz_check(ts_oci_annotation_get(c, "toposhim.io/placed-cpus", &s, &err) == 1 &&
				   strcmp(s, "2-3") == 0,
			   "annotation set but not got");
	ts_error_clear(&err);
	if (ts_oci_annotation_remove(c, "toposhim.io/placed-cpus", &err) >= 0)
		fuzz_check(ts_oci_annotation_get(c, "toposhim.io/placed-cpus", &s, &err) == 0,
			   "annotation removed but still there");
}

static size_t count_hooks(const struct ts_json *c)
{
	static const char *const names[] = {"createRuntime", "poststop"};
	const struct ts_json *hooks = ts_json_get(c, "hooks");
	size_t n = 0;

	if (hooks == NULL || hooks->type != TS_JSON_OBJECT)
		return 0;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		const struct ts_json *list = ts_json_get(hooks, names[k]);

		if (list != NULL && list->type == TS_JSON_ARRAY)
			n += list->u.array.len;
	}
	return n;
}

/* When the front calls c plain, the core would leave it as it is. */
static void plain_agrees(const struct ts_json *c, bool unified)
{
	static const struct ts_cgroup_translate_options hosts[] = {
		{.mode = TS_CGROUP_MODE_HYBRID},
		{.mode = TS_CGROUP_MODE_LEGACY, .systemd = true},
		{.mode = TS_CGROUP_MODE_UNIFIED, .runtime_is_crun = true},
		{.mode = TS_CGROUP_MODE_UNIFIED, .systemd = true},
	};
	cleanup_error struct ts_error *err = NULL;
	const char *why = NULL, *s = NULL;
	int64_t quota = 0;

	if (!ts_cli_plain_config(c, unified, &why)) {
		fuzz_check(why != NULL, "not plain without a reason");
		return;
	}
	fuzz_check(ts_oci_annotation_get(c, "toposhim.io/class", &s, &err) == 0 &&
			   ts_oci_annotation_get(c, "toposhim.io/cpus", &s, &err) == 0,
		   "plain with a request annotation");
	fuzz_check(ts_oci_cpu_get_quota(c, &quota, &err) >= 0 && quota == 0, "plain with a quota");
	fuzz_check(ts_oci_cpu_get_cpus(c, &s, &err) == 0 || (s != NULL && s[0] == '\0'),
		   "plain with cpus");
	for (size_t i = 0; i < ARRAY_SIZE(hosts); i++) {
		cleanup_json struct ts_json *copy = NULL;
		cleanup_strv char **msgs = NULL;

		if ((hosts[i].mode == TS_CGROUP_MODE_UNIFIED) != unified)
			continue;
		copy = ts_json_dup(c);
		fuzz_check(copy != NULL, "out of memory");
		fuzz_check(ts_cgroup_translate(copy, "config.json", &hosts[i], &msgs, &err) >= 0,
			   "plain, but the translation fails");
		fuzz_check(ts_json_equal(copy, c), "plain, but the translation changes it");
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL, *copy = NULL, *again = NULL;
	cleanup_free char *text = NULL;
	struct ts_hook_env he = {.state_dir = "/run/toposhim", .runtime_root = "/run/runc"};
	size_t len = 0, n;

	if (ts_json_parse((const char *)data, size, "config.json", &config, &err) < 0 ||
	    config->type != TS_JSON_OBJECT)
		return 0;
	getters(config);
	plain_agrees(config, false);
	plain_agrees(config, true);
	copy = ts_json_dup(config);
	fuzz_check(copy != NULL, "out of memory");
	setters(copy);
	if (ts_hook_inject(copy, "/usr/bin/toposhim", &he, &err) == 0) {
		n = count_hooks(copy);
		fuzz_check(ts_hook_inject(copy, "/usr/bin/toposhim", &he, &err) == 0,
			   "second injection failed");
		fuzz_check(count_hooks(copy) == n, "a retried injection added hooks");
	} else {
		FAILED(err, "inject: no message");
		ts_error_clear(&err);
	}
	fuzz_check(ts_json_serialize(copy, false, &text, &len, &err) == 0, "cannot serialise");
	fuzz_check(ts_json_parse(text, len, "again", &again, &err) == 0, "cannot parse our output");
	return 0;
}
