/* parse.c - placement requests from config.json and the "placement" config object. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/role.h"
#include "oci/spec.h"
#include "placement/internal.h"
#include "util/cleanup.h"
#include "util/text.h"

/* Strict positive decimal: -EINVAL for anything else, -ERANGE for one
 * past TS_PLACEMENT_MAX_CPUS. */
static int parse_count(const char *s, unsigned *ret)
{
	unsigned long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (*end != '\0' || (errno == 0 && v == 0))
		return -EINVAL;
	if (errno != 0 || v > TS_PLACEMENT_MAX_CPUS)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

/* The request annotation toposhim.io/<key> for this container (oci/role.h);
 * *ret_field, the JSON pointer it came from, replaces the old one. */
static int get_annotation(const struct ts_json *config, const struct ts_oci_container *c,
			  const char *file, const char *key, const char **ret, char **ret_field,
			  struct ts_error **err)
{
	cleanup_free char *full = NULL, *field = NULL;
	int r;

	if (asprintf(&full, "toposhim.io/%s", key) < 0)
		return ts_error_set(err, ENOMEM, "out of memory");
	*ret = NULL;
	r = ts_oci_request_get(config, c, full, ret, &field, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", file);
	if (r == 1 && ret_field != NULL) {
		free(*ret_field);
		*ret_field = TAKE_PTR(field);
	}
	return r;
}

static int parse_set(const char *s, const char *file, const char *field, hwloc_bitmap_t *ret,
		     struct ts_error **err)
{
	int r = ts_cpulist_parse(s, ret, err);

	if (r < 0)
		return ts_error_prefix(err, "%s: '%s'", file, field);
	return 0;
}

static int set_field(char **field, const char *value, struct ts_error **err)
{
	free(*field);
	*field = strdup(value);
	return *field != NULL ? 0 : ts_error_set(err, ENOMEM, "out of memory");
}

/* The kubelet's rule: Guaranteed with an integer CPU limit -> exclusive. */
static int derive_from_cpu(const struct ts_json *config, const char *file,
			   struct ts_placement_request *req, unsigned *ret_limit,
			   struct ts_error **err)
{
	int64_t quota = 0;
	uint64_t period = 0, shares = 0;
	int hq, hp, hs;

	*ret_limit = 0;
	hq = ts_oci_cpu_get_quota(config, &quota, err);
	hp = hq < 0 ? 0 : ts_oci_cpu_get_period(config, &period, err);
	hs = hp < 0 ? 0 : ts_oci_cpu_get_shares(config, &shares, err);
	if (hq < 0 || hp < 0 || hs < 0)
		return ts_error_prefix(err, "%s", file);
	if (hq == 0 || hp == 0 || quota <= 0 || period == 0)
		return 0;
	uint64_t q = (uint64_t)quota;
	uint64_t limit = q / period + (q % period != 0);
	/* hwloc and the kernel count far fewer CPUs; also keeps unsigned exact */
	if (limit > TS_PLACEMENT_MAX_CPUS)
		return ts_error_set(err, 0,
				    "%s: '/linux/resources/cpu/quota': cpu limit of %" PRIu64
				    " cpus (quota %" PRId64 ", period %" PRIu64 ") is more than %u",
				    file, limit, quota, period, TS_PLACEMENT_MAX_CPUS);
	*ret_limit = (unsigned)limit;
	req->class_derived = true;
	req->cpu_limit = (unsigned)limit;
	req->guaranteed = q % period == 0 && hs == 1 && shares == (q / period) * 1024;
	if (req->guaranteed) {
		free(req->class_name);
		req->class_name = strdup("critical");
		if (req->class_name == NULL)
			return ts_error_set(err, ENOMEM, "out of memory");
		return set_field(&req->class_field, "/linux/resources/cpu/quota", err);
	}
	return 0;
}

static int read_class(const struct ts_json *config, const struct ts_oci_container *c,
		      const char *file, const struct ts_placement_config *cfg,
		      struct ts_placement_request *req, unsigned *ret_limit, struct ts_error **err)
{
	const char *v = NULL;
	int r;

	/* a sandbox runs in the shared pool whatever the pod asks for */
	if (c->role == TS_OCI_ROLE_SANDBOX)
		return 0;
	r = get_annotation(config, c, file, "class", &v, &req->class_field, err);
	if (r < 0)
		return r;
	if (r == 0)
		return derive_from_cpu(config, file, req, ret_limit, err);
	if (ts_placement_config_class(cfg, v) == NULL)
		return ts_error_set(err, 0, "%s: '%s': unknown class '" TS_CLIP_FMT "'", file,
				    req->class_field, TS_CLIP_ARGS(v));
	req->class_annotated = true;
	free(req->class_name);
	req->class_name = strdup(v);
	if (req->class_name == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	/* the limit still gives the default cpu count */
	{
		struct ts_placement_request tmp = {0};
		r = derive_from_cpu(config, file, &tmp, ret_limit, err);
		req->cpu_limit = tmp.cpu_limit;
		req->guaranteed = tmp.guaranteed;
		free(tmp.class_name);
		free(tmp.class_field);
	}
	return r;
}

static int read_numa_and_tier(const struct ts_json *config, const struct ts_oci_container *c,
			      const char *file, struct ts_placement_request *req,
			      struct ts_error **err)
{
	static const char *const numa_names[] = {"prefer", "single", "exclusive"};
	const char *v = NULL;
	int r = get_annotation(config, c, file, "numa", &v, &req->numa_field, err);

	if (r < 0)
		return r;
	if (r == 1) {
		req->numa = TS_PLACEMENT_NUMA_INVALID;
		for (size_t i = 0; i < ARRAY_SIZE(numa_names); i++)
			if (strcmp(v, numa_names[i]) == 0)
				req->numa = (enum ts_placement_numa)i;
		if ((int)req->numa < 0)
			return ts_error_set(err, 0,
					    "%s: '%s': invalid numa policy '" TS_CLIP_FMT
					    "' (prefer, "
					    "single or exclusive)",
					    file, req->numa_field, TS_CLIP_ARGS(v));
	}
	r = get_annotation(config, c, file, "memory-tier", &v, &req->tier_field, err);
	if (r < 0)
		return r;
	if (r == 1) {
		req->memory_tier = ts_memory_tier_from_string(v);
		if ((int)req->memory_tier < 0)
			return ts_error_set(err, 0,
					    "%s: '%s': invalid memory tier '" TS_CLIP_FMT "' "
					    "(dram, hbm, cxl, pmem or gpu)",
					    file, req->tier_field, TS_CLIP_ARGS(v));
	}
	return 0;
}

static int read_user_sets(const struct ts_json *config, const char *file,
			  struct ts_placement_request *req, struct ts_error **err)
{
	const char *s = NULL;
	int r = ts_oci_cpu_get_cpus(config, &s, err);

	if (r < 0)
		return ts_error_prefix(err, "%s", file);
	if (r == 1 && *s != '\0') {
		r = parse_set(s, file, "/linux/resources/cpu/cpus", &req->user_cpus, err);
		if (r < 0)
			return r;
	}
	r = ts_oci_cpu_get_mems(config, &s, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", file);
	if (r == 1 && *s != '\0') {
		cleanup_error struct ts_error *e = NULL;

		if (ts_cpulist_parse(s, &req->user_mems, &e) < 0)
			return ts_error_set(
				err, 0,
				"%s: '/linux/resources/cpu/mems': invalid mems list '" TS_CLIP_FMT
				"'",
				file, TS_CLIP_ARGS(s));
	}
	return 0;
}

int ts_placement_request_from_config(const struct ts_json *config, const char *config_name,
				     const char *container_id,
				     const struct ts_placement_config *cfg,
				     struct ts_placement_request *ret, struct ts_error **err)
{
	struct ts_placement_request req;
	struct ts_oci_container c;
	const char *file = config_name != NULL ? config_name : "config.json";
	const char *v = NULL;
	unsigned limit = 0;
	int r;

	r = ts_placement_request_init(&req, container_id, err);
	if (r < 0)
		return r;
	req.config_name = file;
	ts_oci_container_identify(config, &c);
	req.sandbox = c.role == TS_OCI_ROLE_SANDBOX;
	req.container_name = strdup(c.name);
	r = req.container_name != NULL ? 0 : ts_error_set(err, ENOMEM, "out of memory");
	if (r >= 0 && !req.sandbox) {
		r = ts_oci_request_check(config, &c, NULL, err);
		if (r < 0)
			(void)ts_error_prefix(err, "%s", file);
	}
	if (r >= 0)
		r = read_class(config, &c, file, cfg, &req, &limit, err);
	if (r == 0)
		r = get_annotation(config, &c, file, "cpus", &v, &req.cpus_field, err);
	if (r == 1) {
		int count = parse_count(v, &req.cpus);

		if (count == -ERANGE)
			r = ts_error_set(
				err, 0, "%s: '%s': cpu count '" TS_CLIP_FMT "' is more than %u",
				file, req.cpus_field, TS_CLIP_ARGS(v), TS_PLACEMENT_MAX_CPUS);
		else if (count < 0)
			r = ts_error_set(err, 0, "%s: '%s': invalid cpu count '" TS_CLIP_FMT "'",
					 file, req.cpus_field, TS_CLIP_ARGS(v));
		else
			req.cpus_annotated = true;
	} else if (r == 0 && limit > 0) {
		req.cpus = limit;
		r = set_field(&req.cpus_field, "/linux/resources/cpu/quota", err);
	}
	if (r >= 0)
		r = read_numa_and_tier(config, &c, file, &req, err);
	if (r >= 0)
		r = read_user_sets(config, file, &req, err);
	if (r < 0) {
		ts_placement_request_release(&req);
		return r;
	}
	*ret = req;
	return 0;
}

/* ---- the "placement" config object ---------------------------------- */

static int expect(const struct ts_json *v, enum ts_json_type type, const char *file,
		  const char *path, struct ts_error **err)
{
	if (v->type == type)
		return 0;
	return ts_error_set(err, 0, "%s: '/placement/%s': expected %s, got %s", file, path,
			    ts_json_type_name(type), ts_json_type_name(v->type));
}

static int parse_reserved(const struct ts_json *obj, const char *file,
			  struct ts_placement_config *cfg, struct ts_error **err)
{
	const char *key;
	struct ts_json *val;
	size_t i;
	int r = expect(obj, TS_JSON_OBJECT, file, "reserved", err);

	if (r < 0)
		return r;
	ts_json_object_foreach (obj, i, key, val) {
		if (strcmp(key, "cpus") == 0) {
			r = expect(val, TS_JSON_STRING, file, "reserved/cpus", err);
			if (r == 0 && cfg->reserved_cpus != NULL)
				hwloc_bitmap_free(cfg->reserved_cpus);
			cfg->reserved_cpus = NULL;
			if (r == 0)
				r = parse_set(val->u.string, file, "/placement/reserved/cpus",
					      &cfg->reserved_cpus, err);
		} else if (strcmp(key, "count") == 0) {
			uint64_t n = 0;
			r = expect(val, TS_JSON_NUMBER, file, "reserved/count", err);
			if (r == 0 && (ts_json_get_uint64(val, &n) < 0 || n > 65535))
				r = ts_error_set(
					err, 0,
					"%s: '/placement/reserved/count': invalid cpu count "
					"'%s'",
					file, val->u.number);
			cfg->reserved_count = (unsigned)n;
		} else if (strcmp(key, "shared_may_use") == 0) {
			r = expect(val, TS_JSON_BOOL, file, "reserved/shared_may_use", err);
			cfg->shared_may_use_reserved = r == 0 && val->u.boolean;
		} else {
			r = ts_error_set(err, 0, "%s: '/placement/reserved/%s': unknown key", file,
					 key);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_class(const char *name, const struct ts_json *obj, const char *file,
		       struct ts_placement_config *cfg, struct ts_error **err)
{
	static const char *const kinds[] = {"any", "performance", "efficiency"};
	const struct ts_placement_class *old = ts_placement_config_class(cfg, name);
	enum ts_placement_pool pool = old ? old->pool : TS_PLACEMENT_POOL_SHARED;
	enum ts_placement_kind kind = old ? old->cpu_kind : TS_PLACEMENT_KIND_ANY;
	const char *s;

	if (obj->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/placement/classes/%s': expected object, got %s",
				    file, name, ts_json_type_name(obj->type));
	if ((s = ts_json_get_string(obj, "pool")) != NULL) {
		pool = ts_placement_pool_from_string(s);
		if (pool != TS_PLACEMENT_POOL_SHARED && pool != TS_PLACEMENT_POOL_EXCLUSIVE &&
		    pool != TS_PLACEMENT_POOL_RESERVED)
			return ts_error_set(err, 0,
					    "%s: '/placement/classes/%s/pool': invalid pool '%s' "
					    "(shared, exclusive or reserved)",
					    file, name, s);
	}
	if ((s = ts_json_get_string(obj, "cpu_kind")) != NULL) {
		kind = TS_PLACEMENT_KIND_INVALID;
		for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
			if (strcmp(s, kinds[i]) == 0)
				kind = (enum ts_placement_kind)i;
		if ((int)kind < 0)
			return ts_error_set(
				err, 0,
				"%s: '/placement/classes/%s/cpu_kind': invalid cpu kind "
				"'%s' (any, performance or efficiency)",
				file, name, s);
	}
	if (ts_placement_config_add_class(cfg, name, pool, kind) < 0)
		return ts_error_set(err, ENOMEM, "out of memory");
	return 0;
}

static int parse_bool(const struct ts_json *val, const char *file, const char *key, bool *out,
		      struct ts_error **err)
{
	int r = expect(val, TS_JSON_BOOL, file, key, err);

	if (r == 0)
		*out = val->u.boolean;
	return r;
}

/* A number from 0 to 1 (JSON number syntax is checked by the parser). */
static int parse_threshold(const struct ts_json *val, const char *file,
			   struct ts_placement_config *cfg, struct ts_error **err)
{
	int r = expect(val, TS_JSON_NUMBER, file, "performance_threshold", err);
	char *end = NULL;
	double v;

	if (r < 0)
		return r;
	errno = 0;
	v = strtod(val->u.number, &end);
	if (errno != 0 || end == val->u.number || *end != '\0' || !(v >= 0.0 && v <= 1.0))
		return ts_error_set(
			err, 0,
			"%s: '/placement/performance_threshold': not a number from 0 to "
			"1 '%s'",
			file, val->u.number);
	cfg->performance_threshold = v;
	return 0;
}

static int parse_member(const char *key, const struct ts_json *val, const char *file,
			struct ts_placement_config *cfg, struct ts_error **err)
{
	const char *ckey;
	struct ts_json *cval;
	size_t i;
	int r;

	if (strcmp(key, "reserved") == 0)
		return parse_reserved(val, file, cfg, err);
	if (strcmp(key, "enabled") == 0)
		return parse_bool(val, file, key, &cfg->enabled, err);
	if (strcmp(key, "full_cores_only") == 0)
		return parse_bool(val, file, key, &cfg->full_cores_only, err);
	if (strcmp(key, "align_l3") == 0)
		return parse_bool(val, file, key, &cfg->align_l3, err);
	if (strcmp(key, "distribute_across_numa") == 0)
		return parse_bool(val, file, key, &cfg->distribute_across_numa, err);
	if (strcmp(key, "distribute_across_cores") == 0)
		return parse_bool(val, file, key, &cfg->distribute_across_cores, err);
	if (strcmp(key, "align_by_socket") == 0)
		return parse_bool(val, file, key, &cfg->align_by_socket, err);
	if (strcmp(key, "manage_all") == 0)
		return parse_bool(val, file, key, &cfg->manage_all, err);
	if (strcmp(key, "performance_threshold") == 0)
		return parse_threshold(val, file, cfg, err);
	if (strcmp(key, "classes") != 0)
		return ts_error_set(err, 0, "%s: '/placement/%s': unknown key", file, key);
	r = expect(val, TS_JSON_OBJECT, file, key, err);
	if (r < 0)
		return r;
	ts_json_object_foreach (val, i, ckey, cval) {
		r = parse_class(ckey, cval, file, cfg, err);
		if (r < 0)
			return r;
	}
	return 0;
}

int ts_placement_config_parse(const struct ts_json *placement, const char *file,
			      struct ts_placement_config *ret, struct ts_error **err)
{
	struct ts_placement_config cfg;
	const char *key;
	struct ts_json *val;
	size_t i;
	int r;

	file = file != NULL ? file : "config.json";
	r = ts_placement_config_init(&cfg, err);
	if (r < 0)
		return r;
	cfg.file = strdup(file);
	if (cfg.file == NULL) {
		ts_placement_config_release(&cfg);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	if (placement != NULL && placement->type != TS_JSON_OBJECT)
		r = ts_error_set(err, 0, "%s: '/placement': expected object, got %s", file,
				 ts_json_type_name(placement->type));
	ts_json_object_foreach (placement, i, key, val) {
		if (r < 0)
			break;
		r = parse_member(key, val, file, &cfg, err);
	}
	if (r < 0) {
		ts_placement_config_release(&cfg);
		return r;
	}
	*ret = cfg;
	return 0;
}
