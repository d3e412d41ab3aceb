/*
 * limits.c - cgroup limits per QoS class: the "cgroup" member of the
 * toposhim config, and writing a class's limits into config.json.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

#define WEIGHT_MIN 1
#define WEIGHT_MAX 10000
#define PERIOD_MIN 1000
#define PERIOD_MAX 1000000
#define QUOTA_MIN 1000

/* ---- config -------------------------------------------------------------------------------- */

static void class_init(struct ts_cgroup_class_limits *c, const char *name)
{
	*c = (struct ts_cgroup_class_limits){.cpu_idle = -1, .memory_oom_group = -1};
	snprintf(c->name, sizeof(c->name), "%s", name);
}

static void builtin_classes(struct ts_cgroup_class_limits c[3])
{
	class_init(&c[0], "critical");
	c[0].cpu_weight = 1000;
	c[0].memory_min.kind = TS_CGROUP_MEM_REQUEST;
	c[0].builtin_v1less = TS_CGROUP_V1LESS_MEMORY_MIN;
	class_init(&c[1], "standard");
	c[1].cpu_weight = 100;
	class_init(&c[2], "batch");
	c[2].cpu_weight = 1;
	c[2].cpu_idle = 1;
	c[2].builtin_v1less = TS_CGROUP_V1LESS_CPU_IDLE;
}

/* Reads an integer member; "what" is "<file>: '<pointer>'". */
static int read_int(const struct ts_json *v, const char *what, int64_t min, int64_t max,
		    int64_t *ret, struct ts_error **err)
{
	int64_t x = 0;

	if (v->type != TS_JSON_NUMBER)
		return ts_error_set(err, 0, "%s: expected number, got %s", what,
				    ts_json_type_name(v->type));
	if (ts_json_get_int64(v, &x) < 0)
		return ts_error_set(err, 0, "%s: not an integer '%s'", what, v->u.number);
	if (x < min || x > max)
		return ts_error_set(err, 0, "%s: out of range '%s' (%" PRId64 "..%" PRId64 ")",
				    what, v->u.number, min, max);
	*ret = x;
	return 0;
}

static int read_flag(const struct ts_json *v, const char *what, int *ret, struct ts_error **err)
{
	int64_t x = 0;

	if (v->type == TS_JSON_BOOL) {
		*ret = v->u.boolean ? 1 : 0;
		return 0;
	}
	if (v->type != TS_JSON_NUMBER)
		return ts_error_set(err, 0, "%s: expected boolean, got %s", what,
				    ts_json_type_name(v->type));
	int r = read_int(v, what, 0, 1, &x, err);
	if (r < 0)
		return r;
	*ret = (int)x;
	return 0;
}

/* Parses a decimal "N" or "N.DDDDDD" into parts per million; -EINVAL otherwise. */
static int parse_fraction_ppm(const char *s, uint32_t *ret)
{
	uint64_t whole = 0, frac = 0, scale = 1000000;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 1)
			return -EINVAL;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (scale == 1)
				return -EINVAL; /* more than six decimals */
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p != '\0')
		return -EINVAL;
	uint64_t ppm = whole * 1000000 + frac;
	if (ppm == 0 || ppm > 1000000)
		return -EINVAL;
	*ret = (uint32_t)ppm;
	return 0;
}

static int read_mem(const struct ts_json *v, const char *what, bool allow_max,
		    struct ts_cgroup_mem_value *ret, struct ts_error **err)
{
	int64_t x = 0;

	if (v->type == TS_JSON_NUMBER) {
		int r = read_int(v, what, 0, INT64_MAX, &x, err);
		if (r < 0)
			return r;
		*ret = (struct ts_cgroup_mem_value){.kind = TS_CGROUP_MEM_BYTES,
						    .bytes = (uint64_t)x};
		return 0;
	}
	if (v->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "%s: expected number or string, got %s", what,
				    ts_json_type_name(v->type));
	const char *s = v->u.string;
	if (allow_max && strcmp(s, "max") == 0) {
		*ret = (struct ts_cgroup_mem_value){.kind = TS_CGROUP_MEM_MAX};
		return 0;
	}
	if (strcmp(s, "request") == 0) {
		*ret = (struct ts_cgroup_mem_value){.kind = TS_CGROUP_MEM_REQUEST};
		return 0;
	}
	uint32_t ppm;
	if (parse_fraction_ppm(s, &ppm) < 0)
		return ts_error_set(err, 0, "%s: invalid memory value '%s'", what, s);
	*ret = (struct ts_cgroup_mem_value){.kind = TS_CGROUP_MEM_FRACTION, .fraction_ppm = ppm};
	return 0;
}

/* Parses "max", "max P", "Q" or "Q P" (decimal microseconds). */
static int parse_cpu_max(const char *s, int64_t *ret_quota, uint64_t *ret_period)
{
	char *end;
	int64_t quota;
	uint64_t period = 0;

	if (strncmp(s, "max", 3) == 0) {
		quota = -1;
		end = (char *)(uintptr_t)(s + 3);
	} else {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		errno = 0;
		long long q = strtoll(s, &end, 10);
		if (errno != 0 || q < QUOTA_MIN)
			return -EINVAL;
		quota = q;
	}
	if (*end == ' ') {
		const char *p = end + 1;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		unsigned long long pr = strtoull(p, &end, 10);
		if (errno != 0 || pr < PERIOD_MIN || pr > PERIOD_MAX)
			return -EINVAL;
		period = pr;
	}
	if (*end != '\0')
		return -EINVAL;
	*ret_quota = quota;
	*ret_period = period;
	return 0;
}

static int read_class_key(struct ts_cgroup_class_limits *c, const char *key,
			  const struct ts_json *v, const char *what, struct ts_error **err)
{
	int64_t x = 0;
	int r = 0;

	if (strcmp(key, "cpu.weight") == 0) {
		if (v->type == TS_JSON_NULL)
			c->cpu_weight = 0;
		else if ((r = read_int(v, what, WEIGHT_MIN, WEIGHT_MAX, &x, err)) == 0)
			c->cpu_weight = (uint32_t)x;
	} else if (strcmp(key, "cpu.max") == 0) {
		if (v->type == TS_JSON_NULL) {
			c->has_cpu_max = false;
		} else if (v->type != TS_JSON_STRING) {
			r = ts_error_set(err, 0, "%s: expected string, got %s", what,
					 ts_json_type_name(v->type));
		} else if (parse_cpu_max(v->u.string, &c->cpu_max_quota_usec,
					 &c->cpu_max_period_usec) < 0) {
			r = ts_error_set(err, 0, "%s: invalid cpu.max '%s'", what, v->u.string);
		} else {
			c->has_cpu_max = true;
		}
	} else if (strcmp(key, "cpu.idle") == 0) {
		c->builtin_v1less &= ~TS_CGROUP_V1LESS_CPU_IDLE;
		c->cpu_idle = -1;
		if (v->type != TS_JSON_NULL)
			r = read_flag(v, what, &c->cpu_idle, err);
	} else if (strcmp(key, "memory.high") == 0 || strcmp(key, "memory.low") == 0 ||
		   strcmp(key, "memory.min") == 0) {
		struct ts_cgroup_mem_value *m = key[7] == 'h'	? &c->memory_high
						: key[7] == 'l' ? &c->memory_low
								: &c->memory_min;
		c->builtin_v1less &= key[7] == 'h'   ? ~TS_CGROUP_V1LESS_MEMORY_HIGH
				     : key[7] == 'm' ? ~TS_CGROUP_V1LESS_MEMORY_MIN
						     : ~0u;
		*m = (struct ts_cgroup_mem_value){0};
		if (v->type != TS_JSON_NULL)
			r = read_mem(v, what, key[7] == 'h', m, err);
	} else if (strcmp(key, "memory.oom.group") == 0) {
		c->builtin_v1less &= ~TS_CGROUP_V1LESS_OOM_GROUP;
		c->memory_oom_group = -1;
		if (v->type != TS_JSON_NULL)
			r = read_flag(v, what, &c->memory_oom_group, err);
	} else if (strcmp(key, "io.weight") == 0) {
		c->builtin_v1less &= ~TS_CGROUP_V1LESS_IO_WEIGHT;
		if (v->type == TS_JSON_NULL)
			c->io_weight = 0;
		else if ((r = read_int(v, what, WEIGHT_MIN, WEIGHT_MAX, &x, err)) == 0)
			c->io_weight = (uint32_t)x;
	} else if (strcmp(key, "pids.max") == 0) {
		if (v->type == TS_JSON_NULL)
			c->pids_max = 0;
		else if (v->type == TS_JSON_STRING && strcmp(v->u.string, "max") == 0)
			c->pids_max = -1;
		else if (v->type == TS_JSON_STRING)
			r = ts_error_set(err, 0, "%s: invalid pids.max '%s'", what, v->u.string);
		else if ((r = read_int(v, what, 1, INT64_MAX, &x, err)) == 0)
			c->pids_max = x;
	} else if (strcmp(key, "override_engine") == 0) {
		if (v->type != TS_JSON_BOOL)
			r = ts_error_set(err, 0, "%s: expected boolean, got %s", what,
					 ts_json_type_name(v->type));
		else
			c->override_engine = v->u.boolean;
	} else {
		r = ts_error_set(err, 0, "%s: unknown key", what);
	}
	return r;
}

static struct ts_cgroup_class_limits *class_find(struct ts_cgroup_class_limits *classes, size_t n,
						 const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(classes[i].name, name) == 0)
			return &classes[i];
	return NULL;
}

static int read_class(struct ts_cgroup_config *c, const char *name, const struct ts_json *obj,
		      const char *config_path, struct ts_error **err)
{
	cleanup_free char *name_tok = ts_json_pointer_escape(name);
	size_t i;
	const char *key;
	struct ts_json *v;

	if (name_tok == NULL)
		return ts_error_set(err, ENOMEM, "%s: '/cgroup/classes'", config_path);
	if (strlen(name) >= sizeof(c->classes[0].name) || name[0] == '\0')
		return ts_error_set(err, 0, "%s: '/cgroup/classes/%s': invalid class name",
				    config_path, name_tok);
	if (obj->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/cgroup/classes/%s': expected object, got %s",
				    config_path, name_tok, ts_json_type_name(obj->type));
	struct ts_cgroup_class_limits *cl = class_find(c->classes, c->n_classes, name);
	if (cl == NULL) {
		struct ts_cgroup_class_limits *nc =
			realloc(c->classes, (c->n_classes + 1) * sizeof(*nc));
		if (nc == NULL)
			return ts_error_set(err, ENOMEM, "%s: '/cgroup/classes'", config_path);
		c->classes = nc;
		cl = &c->classes[c->n_classes++];
		class_init(cl, name);
	}
	ts_json_object_foreach (obj, i, key, v) {
		cleanup_free char *key_tok = ts_json_pointer_escape(key);
		cleanup_free char *what = NULL;
		if (key_tok == NULL || asprintf(&what, "%s: '/cgroup/classes/%s/%s'", config_path,
						name_tok, key_tok) < 0)
			return ts_error_set(err, ENOMEM, "%s: '/cgroup/classes'", config_path);
		int r = read_class_key(cl, key, v, what, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int read_cgroup(struct ts_cgroup_config *c, const struct ts_json *cg,
		       const char *config_path, struct ts_error **err)
{
	size_t i;
	const char *key;
	struct ts_json *v;

	if (cg->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/cgroup': expected object, got %s", config_path,
				    ts_json_type_name(cg->type));
	ts_json_object_foreach (cg, i, key, v) {
		if (strcmp(key, "root") == 0 || strcmp(key, "mode") == 0) {
			if (v->type != TS_JSON_STRING)
				return ts_error_set(err, 0,
						    "%s: '/cgroup/%s': expected string, got %s",
						    config_path, key, ts_json_type_name(v->type));
		}
		if (strcmp(key, "root") == 0) {
			if (v->u.string[0] != '/')
				return ts_error_set(err, 0, "%s: '/cgroup/root': not absolute '%s'",
						    config_path, v->u.string);
			free(c->root);
			c->root = strdup(v->u.string);
			if (c->root == NULL)
				return ts_error_set(err, ENOMEM, "%s: '/cgroup/root'", config_path);
		} else if (strcmp(key, "mode") == 0) {
			if (strcmp(v->u.string, "auto") == 0)
				c->mode = TS_CGROUP_MODE_INVALID;
			else if ((c->mode = ts_cgroup_mode_from_string(v->u.string)) < 0)
				return ts_error_set(err, 0,
						    "%s: '/cgroup/mode': invalid cgroup mode '%s'",
						    config_path, v->u.string);
		} else if (strcmp(key, "classes") == 0) {
			size_t j;
			const char *name;
			struct ts_json *cv;
			if (v->type != TS_JSON_OBJECT)
				return ts_error_set(
					err, 0, "%s: '/cgroup/classes': expected object, got %s",
					config_path, ts_json_type_name(v->type));
			ts_json_object_foreach (v, j, name, cv) {
				int r = read_class(c, name, cv, config_path, err);
				if (r < 0)
					return r;
			}
		} else {
			cleanup_free char *tok = ts_json_pointer_escape(key);
			return ts_error_set(err, 0, "%s: '/cgroup/%s': unknown key", config_path,
					    tok ? tok : "");
		}
	}
	return 0;
}

int ts_cgroup_config_read(const struct ts_json *config, const char *config_path,
			  struct ts_cgroup_config *ret, struct ts_error **err)
{
	struct ts_cgroup_config c = {.mode = TS_CGROUP_MODE_INVALID};

	c.classes = calloc(3, sizeof(*c.classes));
	if (c.classes == NULL)
		return ts_error_set(err, ENOMEM, "%s: '/cgroup'", config_path);
	c.n_classes = 3;
	builtin_classes(c.classes);
	const struct ts_json *cg = ts_json_get(config, "cgroup");
	if (cg != NULL && cg->type != TS_JSON_NULL) {
		int r = read_cgroup(&c, cg, config_path, err);
		if (r < 0) {
			ts_cgroup_config_release(&c);
			return r;
		}
	}
	*ret = c;
	return 0;
}

void ts_cgroup_config_release(struct ts_cgroup_config *c)
{
	if (c == NULL)
		return;
	free(c->root);
	free(c->classes);
	*c = (struct ts_cgroup_config){.mode = TS_CGROUP_MODE_INVALID};
}

const struct ts_cgroup_class_limits *ts_cgroup_config_class(const struct ts_cgroup_config *c,
							    const char *class_name)
{
	if (c == NULL || class_name == NULL)
		return NULL;
	return class_find(c->classes, c->n_classes, class_name);
}

int ts_cgroup_config_resolve(const struct ts_cgroup_config *c, const char **ret_root,
			     enum ts_cgroup_mode *ret_mode, struct ts_error **err)
{
	const char *root = ts_cgroup_root(c ? c->root : NULL);
	enum ts_cgroup_mode mode;

	if (c != NULL && ts_cgroup_mode_to_string(c->mode) != NULL) {
		mode = c->mode;
	} else {
		int r = ts_cgroup_detect_mode(root, &mode, err);
		if (r < 0)
			return r;
	}
	*ret_root = root;
	*ret_mode = mode;
	return 0;
}
