/*
 * apply.c - write a QoS class's cgroup limits into a config.json tree (the
 * mapping table is in cgroup.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

/* One config.json field a class key maps to: an integer OCI field
 * /linux/resources/<group>/<name>, or (group NULL) unified[<name>]. */
struct field {
	const char *group;
	const char *name;
	int64_t ival;	 /* OCI fields */
	char sval[48];	 /* unified values, and ival as text for comparisons */
	bool if_present; /* write only over an engine value (keeps unified consistent) */
};

struct apply_ctx {
	struct ts_json *config;
	const char *file;
	const struct ts_cgroup_class_limits *limits;
	bool v2;
	char **msgs;
	size_t n_msgs;
	struct ts_error **err;
};

static int add_msg(struct apply_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_msg(struct apply_ctx *c, const char *fmt, ...)
{
	char *m = NULL;
	va_list ap;

	va_start(ap, fmt);
	int r = vasprintf(&m, fmt, ap);
	va_end(ap);
	if (r < 0)
		return ts_error_set(c->err, ENOMEM, "%s: cannot apply class '%s'", c->file,
				    c->limits->name);
	char **v = realloc(c->msgs, (c->n_msgs + 2) * sizeof(*v));
	if (v == NULL) {
		free(m);
		return ts_error_set(c->err, ENOMEM, "%s: cannot apply class '%s'", c->file,
				    c->limits->name);
	}
	c->msgs = v;
	c->msgs[c->n_msgs++] = m;
	c->msgs[c->n_msgs] = NULL;
	return 0;
}

static void field_ptr(const struct field *f, char *buf, size_t size)
{
	if (f->group != NULL)
		snprintf(buf, size, "/linux/resources/%s/%s", f->group, f->name);
	else
		snprintf(buf, size, "/linux/resources/unified/%s", f->name);
}

/* The engine's value of f as text: 1 present (written to buf), 0 absent or null. */
static int field_get(struct apply_ctx *c, const struct field *f, char *buf, size_t size)
{
	char ptr[128];
	const struct ts_json *v;

	field_ptr(f, ptr, sizeof(ptr));
	if (f->group != NULL)
		v = ts_json_get_path(c->config, "linux", "resources", f->group, f->name, NULL);
	else
		v = ts_json_get_path(c->config, "linux", "resources", "unified", f->name, NULL);
	if (v == NULL || v->type == TS_JSON_NULL)
		return 0;
	if (f->group == NULL) {
		if (v->type != TS_JSON_STRING)
			return ts_error_set(c->err, 0, "%s: '%s': expected string, got %s", c->file,
					    ptr, ts_json_type_name(v->type));
		snprintf(buf, size, "%s", v->u.string);
		return 1;
	}
	int64_t x;
	if (v->type != TS_JSON_NUMBER)
		return ts_error_set(c->err, 0, "%s: '%s': expected number, got %s", c->file, ptr,
				    ts_json_type_name(v->type));
	if (ts_json_get_int64(v, &x) < 0)
		return ts_error_set(c->err, 0, "%s: '%s': not an integer '%s'", c->file, ptr,
				    v->u.number);
	snprintf(buf, size, "%" PRId64, x);
	return 1;
}

/* Hand a local error on to the caller's err (which may be NULL). @return its code. */
static int pass_error(struct apply_ctx *c, struct ts_error *e)
{
	int r = ts_error_code(e);

	if (c->err != NULL && *c->err == NULL)
		*c->err = e;
	else
		ts_error_free(e);
	return r;
}

/* Member key of parent as an object, created (or replacing a null) when missing. */
static int ensure_object(struct apply_ctx *c, struct ts_json *parent, const char *key,
			 const char *parent_ptr, struct ts_json **ret)
{
	cleanup_free char *what = NULL;
	struct ts_error *e = NULL;
	const struct ts_json *v = ts_json_get(parent, key);

	if (v != NULL && v->type == TS_JSON_NULL &&
	    ts_json_object_set(parent, key, ts_json_new_object(), &e) < 0)
		return pass_error(c, e);
	if (asprintf(&what, "%s: '%s'", c->file, parent_ptr) < 0)
		return ts_error_set(c->err, ENOMEM, "%s: cannot apply class '%s'", c->file,
				    c->limits->name);
	*ret = ts_json_object_ensure(parent, key, TS_JSON_OBJECT, what, &e);
	return *ret == NULL ? pass_error(c, e) : 0;
}

static int field_set(struct apply_ctx *c, const struct field *f)
{
	struct ts_json *linux_obj, *res, *grp;

	int r = ensure_object(c, c->config, "linux", "", &linux_obj);
	if (r >= 0)
		r = ensure_object(c, linux_obj, "resources", "/linux", &res);
	if (r >= 0)
		r = ensure_object(c, res, f->group ? f->group : "unified", "/linux/resources",
				  &grp);
	if (r < 0)
		return r;
	struct ts_json *v = f->group ? ts_json_new_int(f->ival) : ts_json_new_string(f->sval);
	return ts_json_object_set(grp, f->name, v, c->err);
}

/*
 * Apply the fields of one class key.  The engine owns the key when a field
 * it set differs from the class value; then its values stay unless
 * override_engine, and each difference gets a message.
 */
static int apply_fields(struct apply_ctx *c, const char *desc, struct field *f, size_t n)
{
	bool present[8] = {false}, owned = false;
	char engine[8][64];

	for (size_t i = 0; i < n; i++) {
		int r = field_get(c, &f[i], engine[i], sizeof(engine[i]));
		if (r < 0)
			return r;
		present[i] = r > 0;
		if (present[i] && strcmp(engine[i], f[i].sval) != 0)
			owned = true;
	}
	for (size_t i = 0; owned && i < n; i++) {
		char ptr[128];
		if (!present[i] || strcmp(engine[i], f[i].sval) == 0)
			continue;
		field_ptr(&f[i], ptr, sizeof(ptr));
		int r = add_msg(c, "%s: '%s': engine value '%s' %s class '%s' value '%s' (%s)",
				c->file, ptr, engine[i],
				c->limits->override_engine ? "replaced by" : "kept over",
				c->limits->name, f[i].sval, desc);
		if (r < 0)
			return r;
	}
	if (owned && !c->limits->override_engine)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (f[i].if_present && !present[i])
			continue;
		int r = field_set(c, &f[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static struct field oci_field(const char *group, const char *name, int64_t v)
{
	struct field f = {.group = group, .name = name, .ival = v};

	snprintf(f.sval, sizeof(f.sval), "%" PRId64, v);
	return f;
}

static struct field unified_field(const char *name, bool if_present, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct field unified_field(const char *name, bool if_present, const char *fmt, ...)
{
	struct field f = {.name = name, .if_present = if_present};
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(f.sval, sizeof(f.sval), fmt, ap);
	va_end(ap);
	return f;
}

static int apply_cpu(struct apply_ctx *c)
{
	const struct ts_cgroup_class_limits *l = c->limits;
	struct field f[3];
	char desc[64];
	int r;

	if (l->cpu_weight > 0) {
		size_t n = 0;
		f[n++] = oci_field("cpu", "shares",
				   (int64_t)ts_cgroup_weight_to_shares(l->cpu_weight));
		/* The kernel refuses cpu.weight on a group with cpu.idle 1
		 * (EINVAL), and runc writes unified keys in random order: an
		 * idle class gets the weight through cpu.shares only, which
		 * the runtimes write before any unified key. */
		if (c->v2 && l->cpu_idle != 1)
			f[n++] = unified_field("cpu.weight", false, "%" PRIu32, l->cpu_weight);
		snprintf(desc, sizeof(desc), "cpu.weight %" PRIu32, l->cpu_weight);
		if ((r = apply_fields(c, desc, f, n)) < 0)
			return r;
	}
	if (l->has_cpu_max) {
		size_t n = 0;
		char q[24] = "max", p[24] = "";
		if (l->cpu_max_quota_usec >= 0)
			snprintf(q, sizeof(q), "%" PRId64, l->cpu_max_quota_usec);
		if (l->cpu_max_period_usec > 0)
			snprintf(p, sizeof(p), " %" PRIu64, l->cpu_max_period_usec);
		f[n++] = oci_field("cpu", "quota", l->cpu_max_quota_usec);
		if (l->cpu_max_period_usec > 0)
			f[n++] = oci_field("cpu", "period", (int64_t)l->cpu_max_period_usec);
		if (c->v2)
			f[n++] = unified_field("cpu.max", true, "%s%s", q, p);
		snprintf(desc, sizeof(desc), "cpu.max '%s%s'", q, p);
		if ((r = apply_fields(c, desc, f, n)) < 0)
			return r;
	}
	if (l->cpu_idle >= 0 && c->v2) {
		f[0] = unified_field("cpu.idle", false, "%d", l->cpu_idle);
		snprintf(desc, sizeof(desc), "cpu.idle %d", l->cpu_idle);
		if ((r = apply_fields(c, desc, f, 1)) < 0)
			return r;
	}
	return 0;
}

static void fmt_ppm(uint32_t ppm, char *buf, size_t size)
{
	if (ppm == 1000000) {
		snprintf(buf, size, "1");
		return;
	}
	snprintf(buf, size, "0.%06" PRIu32, ppm);
	for (size_t len = strlen(buf); len > 2 && buf[len - 1] == '0'; len--)
		buf[len - 1] = '\0';
}

/*
 * Turn a memory value into bytes (-1 = "max"): 1 resolved, 0 not resolvable
 * (message added), <0 error.
 */
static int resolve_mem(struct apply_ctx *c, const char *key, const struct ts_cgroup_mem_value *m,
		       int64_t limit, int64_t reservation, int64_t *ret)
{
	char frac[16];

	switch (m->kind) {
	case TS_CGROUP_MEM_BYTES:
		*ret = (int64_t)m->bytes;
		return 1;
	case TS_CGROUP_MEM_MAX:
		*ret = -1;
		return 1;
	case TS_CGROUP_MEM_FRACTION:
		fmt_ppm(m->fraction_ppm, frac, sizeof(frac));
		if (limit <= 0) {
			int r = add_msg(c,
					"%s: class '%s': %s '%s' skipped: no "
					"'/linux/resources/memory/limit'",
					c->file, c->limits->name, key, frac);
			return r < 0 ? r : 0;
		}
		uint64_t u = (uint64_t)limit;
		*ret = (int64_t)((u / 1000000) * m->fraction_ppm +
				 (u % 1000000) * m->fraction_ppm / 1000000);
		return 1;
	case TS_CGROUP_MEM_REQUEST:
		if (reservation > 0 || limit > 0) {
			*ret = reservation > 0 ? reservation : limit;
			return 1;
		}
		int r = add_msg(
			c,
			"%s: class '%s': %s 'request' skipped: no "
			"'/linux/resources/memory/reservation' or '/linux/resources/memory/limit'",
			c->file, c->limits->name, key);
		return r < 0 ? r : 0;
	default:
		return 0;
	}
}

static int read_engine_int(struct apply_ctx *c, const char *name, int64_t *ret)
{
	struct field f = {.group = "memory", .name = name};
	char buf[64];

	int r = field_get(c, &f, buf, sizeof(buf));
	if (r <= 0)
		return r;
	*ret = strtoll(buf, NULL, 10);
	return 1;
}

static int apply_memory_key(struct apply_ctx *c, const char *key,
			    const struct ts_cgroup_mem_value *m, int64_t limit, int64_t reservation)
{
	struct field f[2];
	char desc[80], val[24];
	int64_t bytes;
	size_t n = 0;

	if (m->kind == TS_CGROUP_MEM_UNSET)
		return 0;
	int r = resolve_mem(c, key, m, limit, reservation, &bytes);
	if (r <= 0)
		return r;
	if (bytes < 0)
		snprintf(val, sizeof(val), "max");
	else
		snprintf(val, sizeof(val), "%" PRId64, bytes);
	if (strcmp(key, "memory.low") == 0) {
		f[n++] = oci_field("memory", "reservation", bytes);
		if (c->v2)
			f[n++] = unified_field(key, true, "%s", val);
	} else {
		f[n++] = unified_field(key, false, "%s", val);
	}
	snprintf(desc, sizeof(desc), "%s %s", key, val);
	return apply_fields(c, desc, f, n);
}

static int apply_memory(struct apply_ctx *c)
{
	const struct ts_cgroup_class_limits *l = c->limits;
	int64_t limit = 0, reservation = 0;

	int r = read_engine_int(c, "limit", &limit);
	if (r >= 0)
		r = read_engine_int(c, "reservation", &reservation);
	if (r < 0)
		return r;
	/* Resolve every value against the engine's numbers before writing any. */
	if (c->v2 &&
	    (r = apply_memory_key(c, "memory.high", &l->memory_high, limit, reservation)) < 0)
		return r;
	if ((r = apply_memory_key(c, "memory.low", &l->memory_low, limit, reservation)) < 0)
		return r;
	if (c->v2 &&
	    (r = apply_memory_key(c, "memory.min", &l->memory_min, limit, reservation)) < 0)
		return r;
	if (l->memory_oom_group >= 0 && c->v2) {
		struct field f =
			unified_field("memory.oom.group", false, "%d", l->memory_oom_group);
		char desc[32];
		snprintf(desc, sizeof(desc), "memory.oom.group %d", l->memory_oom_group);
		if ((r = apply_fields(c, desc, &f, 1)) < 0)
			return r;
	}
	return 0;
}

static int apply_io_pids(struct apply_ctx *c)
{
	const struct ts_cgroup_class_limits *l = c->limits;
	struct field f[2];
	char desc[48];
	int r;

	if (l->io_weight > 0 && c->v2) {
		f[0] = unified_field("io.weight", false, "default %" PRIu32, l->io_weight);
		snprintf(desc, sizeof(desc), "io.weight %" PRIu32, l->io_weight);
		if ((r = apply_fields(c, desc, f, 1)) < 0)
			return r;
	}
	if (l->pids_max != 0) {
		size_t n = 0;
		f[n++] = oci_field("pids", "limit", l->pids_max);
		if (c->v2) {
			if (l->pids_max < 0)
				f[n++] = unified_field("pids.max", true, "max");
			else
				f[n++] = unified_field("pids.max", true, "%" PRId64, l->pids_max);
		}
		if (l->pids_max < 0)
			snprintf(desc, sizeof(desc), "pids.max max");
		else
			snprintf(desc, sizeof(desc), "pids.max %" PRId64, l->pids_max);
		if ((r = apply_fields(c, desc, f, n)) < 0)
			return r;
	}
	return 0;
}

/* On cgroup v1 the keys without an equivalent are named in one message. */
static int note_v1_skipped(struct apply_ctx *c, enum ts_cgroup_mode mode)
{
	const struct ts_cgroup_class_limits *l = c->limits;
	char list[128] = "";
	const char *names[5];
	size_t n = 0;

	/* a built-in default the host cannot honour is not worth a warning at
	 * every create; a configured value is */
	unsigned quiet = l->builtin_v1less;

	if (l->cpu_idle >= 0 && !(quiet & TS_CGROUP_V1LESS_CPU_IDLE))
		names[n++] = "cpu.idle";
	if (l->memory_high.kind != TS_CGROUP_MEM_UNSET && !(quiet & TS_CGROUP_V1LESS_MEMORY_HIGH))
		names[n++] = "memory.high";
	if (l->memory_min.kind != TS_CGROUP_MEM_UNSET && !(quiet & TS_CGROUP_V1LESS_MEMORY_MIN))
		names[n++] = "memory.min";
	if (l->memory_oom_group >= 0 && !(quiet & TS_CGROUP_V1LESS_OOM_GROUP))
		names[n++] = "memory.oom.group";
	if (l->io_weight > 0 && !(quiet & TS_CGROUP_V1LESS_IO_WEIGHT))
		names[n++] = "io.weight";
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		strcat(list, i ? ", " : "");
		strcat(list, names[i]);
	}
	return add_msg(c, "%s: class '%s': cgroup v1 (%s): skipped %s (no v1 equivalent)", c->file,
		       l->name, ts_cgroup_mode_to_string(mode), list);
}

int ts_cgroup_apply_class(struct ts_json *oci_config, const char *config_name,
			  const struct ts_cgroup_class_limits *limits, enum ts_cgroup_mode mode,
			  char ***ret_messages, struct ts_error **err)
{
	struct apply_ctx c = {
		.config = oci_config,
		.file = config_name,
		.limits = limits,
		.v2 = mode == TS_CGROUP_MODE_UNIFIED,
		.err = err,
	};
	int r = 0;

	if (ts_cgroup_mode_to_string(mode) == NULL)
		return ts_error_set(err, 0, "%s: invalid cgroup mode", config_name);
	if (oci_config == NULL || oci_config->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '': expected object, got %s", config_name,
				    oci_config ? ts_json_type_name(oci_config->type) : "nothing");
	if (limits != NULL) {
		if (!c.v2)
			r = note_v1_skipped(&c, mode);
		if (r >= 0)
			r = apply_cpu(&c);
		if (r >= 0)
			r = apply_memory(&c);
		if (r >= 0)
			r = apply_io_pids(&c);
	}
	if (r < 0) {
		ts_strv_freep(&c.msgs);
		return r;
	}
	*ret_messages = c.msgs;
	return (int)c.n_msgs;
}
