/*
 * translate.c - cgroup values of config.json rewritten into what the
 * kernel, the runtime and its cgroup driver will actually apply (see
 * ts_cgroup_translate() in cgroup.h for each rule and its source).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

#define SHARES_MIN 2
#define SHARES_MAX 262144
#define PERIOD_DEFAULT_USEC 100000
#define USEC_PER_SEC 1000000
/* systemd's CPUQuota= has a resolution of 1% of a CPU: 10 ms per second */
#define SYSTEMD_QUOTA_STEP_USEC 10000

struct tr_ctx {
	struct ts_json *config;
	const char *file;
	char **msgs;
	size_t n_msgs;
	struct ts_error **err;
};

static int tr_msg(struct tr_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int tr_msg(struct tr_ctx *c, const char *fmt, ...)
{
	char *m = NULL, **v;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (r < 0)
		return ts_error_set(c->err, ENOMEM, "%s: cannot translate cgroup values", c->file);
	v = realloc(c->msgs, (c->n_msgs + 2) * sizeof(*v));
	if (v == NULL) {
		free(m);
		return ts_error_set(c->err, ENOMEM, "%s: cannot translate cgroup values", c->file);
	}
	c->msgs = v;
	c->msgs[c->n_msgs++] = m;
	c->msgs[c->n_msgs] = NULL;
	return 0;
}

/* linux.resources.cpu.<name> as an integer: 1 present, 0 absent or null, <0 error. */
static int tr_cpu_int(struct tr_ctx *c, const char *name, int64_t *ret)
{
	const struct ts_json *v =
		ts_json_get_path(c->config, "linux", "resources", "cpu", name, NULL);

	if (v == NULL || v->type == TS_JSON_NULL)
		return 0;
	if (v->type != TS_JSON_NUMBER)
		return ts_error_set(c->err, 0,
				    "%s: '/linux/resources/cpu/%s': expected number, got %s",
				    c->file, name, ts_json_type_name(v->type));
	if (ts_json_get_int64(v, ret) < 0)
		return ts_error_set(c->err, 0, "%s: '/linux/resources/cpu/%s': not an integer '%s'",
				    c->file, name, v->u.number);
	return 1;
}

/* The unified object, when there is one (NULL: none); <0 when it is not an object. */
static int tr_unified(struct tr_ctx *c, bool create, struct ts_json **ret)
{
	struct ts_json *res = ts_json_get_path(c->config, "linux", "resources", NULL);
	struct ts_json *u = res != NULL ? ts_json_get(res, "unified") : NULL;

	*ret = NULL;
	if (u != NULL && u->type == TS_JSON_NULL) {
		if (!create)
			return 0;
		if (ts_json_object_set(res, "unified", ts_json_new_object(), c->err) < 0)
			return -ENOMEM;
		u = ts_json_get(res, "unified");
	}
	if (u != NULL && u->type != TS_JSON_OBJECT)
		return ts_error_set(c->err, 0,
				    "%s: '/linux/resources/unified': expected object, got %s",
				    c->file, ts_json_type_name(u->type));
	if (u == NULL && create) {
		char what[256];

		snprintf(what, sizeof(what), "%s: '/linux/resources'", c->file);
		u = ts_json_object_ensure(res, "unified", TS_JSON_OBJECT, what, c->err);
		if (u == NULL)
			return -EINVAL;
	}
	*ret = u;
	return 0;
}

/* unified[key] as a string: 1 present (*ret borrowed), 0 absent, <0 not a string. */
static int tr_unified_get(struct tr_ctx *c, const char *key, const char **ret)
{
	struct ts_json *u, *v;
	int r = tr_unified(c, false, &u);

	if (r < 0 || u == NULL)
		return r;
	v = ts_json_get(u, key);
	if (v == NULL || v->type == TS_JSON_NULL)
		return 0;
	if (v->type != TS_JSON_STRING)
		return ts_error_set(c->err, 0,
				    "%s: '/linux/resources/unified/%s': expected string, got %s",
				    c->file, key, ts_json_type_name(v->type));
	*ret = v->u.string;
	return 1;
}

static int tr_unified_set(struct tr_ctx *c, const char *key, const char *value)
{
	struct ts_json *u;
	int r = tr_unified(c, true, &u);

	if (r < 0)
		return r;
	return ts_json_object_set(u, key, ts_json_new_string(value), c->err);
}

static int tr_cpu_set(struct tr_ctx *c, const char *name, int64_t value)
{
	struct ts_json *cpu = ts_json_get_path(c->config, "linux", "resources", "cpu", NULL);

	return ts_json_object_set(cpu, name, ts_json_new_int(value), c->err);
}

/* kubelet's clamp of shares to the kernel's range, then (v2) the weight pinned. */
static int tr_shares(struct tr_ctx *c, bool v2)
{
	const char *idle = NULL, *weight = NULL;
	char buf[24];
	int64_t shares;
	int r = tr_cpu_int(c, "shares", &shares);

	/* 0 is "not set" to runc and crun */
	if (r <= 0 || shares == 0)
		return r;
	if (shares < SHARES_MIN || shares > SHARES_MAX) {
		int64_t to = shares < SHARES_MIN ? SHARES_MIN : SHARES_MAX;

		r = tr_msg(c,
			   "%s: '/linux/resources/cpu/shares': '%" PRId64 "' clamped to '%" PRId64
			   "' (the kernel's range %d..%d)",
			   c->file, shares, to, SHARES_MIN, SHARES_MAX);
		if (r >= 0)
			r = tr_cpu_set(c, "shares", to);
		if (r < 0)
			return r;
		shares = to;
	}
	if (!v2)
		return 0;
	r = tr_unified_get(c, "cpu.weight", &weight);
	if (r != 0)
		return r < 0 ? r : 0; /* a weight the engine or the class pinned stays */
	r = tr_unified_get(c, "cpu.idle", &idle);
	if (r < 0)
		return r;
	/* the kernel refuses cpu.weight on an idle group (see cgroup.h) */
	if (r > 0 && strcmp(idle, "1") == 0)
		return 0;
	snprintf(buf, sizeof(buf), "%" PRIu64,
		 ts_cgroup_shares_to_weight_quadratic((uint64_t)shares));
	return tr_unified_set(c, "cpu.weight", buf);
}

uint64_t ts_cgroup_systemd_quota(uint64_t quota_usec, uint64_t period_usec)
{
	uint64_t per_sec;

	if (period_usec == 0)
		period_usec = PERIOD_DEFAULT_USEC;
	per_sec = quota_usec * USEC_PER_SEC / period_usec;
	if (per_sec % SYSTEMD_QUOTA_STEP_USEC != 0)
		per_sec = (per_sec / SYSTEMD_QUOTA_STEP_USEC + 1) * SYSTEMD_QUOTA_STEP_USEC;
	return per_sec * period_usec / USEC_PER_SEC;
}

/* With --systemd-cgroup: the quota systemd gives; "max <period>" for no quota (v2). */
static int tr_systemd_quota(struct tr_ctx *c, bool v2)
{
	char buf[48];
	int64_t quota = 0, period = 0;
	int r = tr_cpu_int(c, "quota", &quota);

	if (r >= 0)
		r = tr_cpu_int(c, "period", &period);
	if (r < 0)
		return r;
	if (period <= 0)
		period = PERIOD_DEFAULT_USEC;
	if (quota > 0) {
		int64_t got = (int64_t)ts_cgroup_systemd_quota((uint64_t)quota, (uint64_t)period);

		if (got == quota)
			return 0;
		r = tr_msg(c,
			   "%s: '/linux/resources/cpu/quota': '%" PRId64 "' written as '%" PRId64
			   "', the quota systemd applies (1%% steps of a CPU) for period %" PRId64,
			   c->file, quota, got, period);
		if (r >= 0)
			r = tr_cpu_set(c, "quota", got);
		if (r >= 0 && v2) {
			const char *engine = NULL;

			r = tr_unified_get(c, "cpu.max", &engine);
			if (r > 0) {
				snprintf(buf, sizeof(buf), "%" PRId64 " %" PRId64, got, period);
				r = tr_unified_set(c, "cpu.max", buf);
			}
		}
		return r < 0 ? r : 0;
	}
	if (quota < 0 && v2) {
		const char *engine = NULL;
		struct ts_json *cpu;

		r = tr_unified_get(c, "cpu.max", &engine);
		if (r != 0)
			return r < 0 ? r : 0;
		/* no quota: said in the one form that no driver rounds */
		snprintf(buf, sizeof(buf), "max %" PRId64, period);
		r = tr_unified_set(c, "cpu.max", buf);
		if (r < 0)
			return r;
		cpu = ts_json_get_path(c->config, "linux", "resources", "cpu", NULL);
		ts_json_object_remove(cpu, "quota");
	}
	return 0;
}

/* crun on v2: each hugepageLimits entry also limits reservations. */
static int tr_hugetlb_rsvd(struct tr_ctx *c)
{
	const struct ts_json *limits =
		ts_json_get_path(c->config, "linux", "resources", "hugepageLimits", NULL);
	const struct ts_json *item;
	size_t i;

	if (limits == NULL || limits->type != TS_JSON_ARRAY)
		return 0;
	ts_json_array_foreach (limits, i, item) {
		const char *size = ts_json_get_string(item, "pageSize"), *engine = NULL;
		const struct ts_json *limit = ts_json_get(item, "limit");
		char key[96], val[24];
		uint64_t bytes;
		int r;

		if (size == NULL || size[0] == '\0' || strchr(size, '/') != NULL || limit == NULL ||
		    limit->type != TS_JSON_NUMBER || ts_json_get_uint64(limit, &bytes) < 0)
			return ts_error_set(c->err, 0,
					    "%s: '/linux/resources/hugepageLimits/%zu': expected "
					    "pageSize and an integer limit",
					    c->file, i);
		if ((size_t)snprintf(key, sizeof(key), "hugetlb.%s.rsvd.max", size) >= sizeof(key))
			return ts_error_set(c->err, 0,
					    "%s: '/linux/resources/hugepageLimits/%zu/pageSize': "
					    "too long '%.32s...'",
					    c->file, i, size);
		r = tr_unified_get(c, key, &engine);
		if (r < 0)
			return r;
		if (r > 0)
			continue; /* the engine's own reservation limit */
		snprintf(val, sizeof(val), "%" PRIu64, bytes);
		r = tr_unified_set(c, key, val);
		if (r < 0)
			return r;
	}
	return 0;
}

int ts_cgroup_translate(struct ts_json *oci_config, const char *config_name,
			const struct ts_cgroup_translate_options *opts, char ***ret_messages,
			struct ts_error **err)
{
	struct tr_ctx c = {.config = oci_config, .file = config_name, .err = err};
	bool v2 = opts->mode == TS_CGROUP_MODE_UNIFIED;
	int r = 0;

	if (ts_cgroup_mode_to_string(opts->mode) == NULL)
		return ts_error_set(err, 0, "%s: invalid cgroup mode", config_name);
	if (oci_config == NULL || oci_config->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '': expected object, got %s", config_name,
				    oci_config ? ts_json_type_name(oci_config->type) : "nothing");
	if (ts_json_get_path(oci_config, "linux", "resources", NULL) == NULL) {
		*ret_messages = NULL;
		return 0;
	}
	r = tr_shares(&c, v2);
	if (r >= 0 && opts->systemd)
		r = tr_systemd_quota(&c, v2);
	if (r >= 0 && v2 && opts->runtime_is_crun)
		r = tr_hugetlb_rsvd(&c);
	if (r < 0) {
		ts_strv_freep(&c.msgs);
		return r;
	}
	*ret_messages = c.msgs;
	return (int)c.n_msgs;
}
