/* policy.c - see policy.h. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/spec.h"
#include "policy/policy.h"
#include "util/cleanup.h"

static const char *const grant_keys[] = {"classes", "numa", "memory_tiers", "devices"};
static const char *const numa_modes[] = {"prefer", "single", "exclusive"};
static const char *const tiers[] = {"dram", "hbm", "cxl", "pmem", "gpu"};

static bool in_list(const char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

static bool is_pattern(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* One grant object at field (a JSON path for messages). */
static int check_grant(const struct ts_json *g, const char *file, const char *field,
		       struct ts_error **err)
{
	const char *key;
	const struct ts_json *val, *item;
	size_t k, i;

	if (g->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '%s': expected object, got %s", file, field,
				    ts_json_type_name(g->type));
	ts_json_object_foreach (g, k, key, val) {
		if (!in_list(grant_keys, ARRAY_SIZE(grant_keys), key))
			return ts_error_set(err, 0, "%s: '%s/%s': unknown key", file, field, key);
		if (val->type != TS_JSON_ARRAY)
			return ts_error_set(err, 0,
					    "%s: '%s/%s': expected array of strings, got %s", file,
					    field, key, ts_json_type_name(val->type));
		ts_json_array_foreach (val, i, item) {
			if (item->type != TS_JSON_STRING)
				return ts_error_set(
					err, 0, "%s: '%s/%s/%zu': expected string, got %s", file,
					field, key, i, ts_json_type_name(item->type));
			if (strcmp(key, "numa") == 0 && !is_pattern(item->u.string) &&
			    !in_list(numa_modes, ARRAY_SIZE(numa_modes), item->u.string))
				return ts_error_set(err, 0,
						    "%s: '%s/numa/%zu': invalid numa mode '%s'",
						    file, field, i, item->u.string);
			if (strcmp(key, "memory_tiers") == 0 && !is_pattern(item->u.string) &&
			    !in_list(tiers, ARRAY_SIZE(tiers), item->u.string))
				return ts_error_set(
					err, 0,
					"%s: '%s/memory_tiers/%zu': invalid memory tier "
					"'%s'",
					file, field, i, item->u.string);
		}
	}
	return 0;
}

int ts_policy_parse(const struct ts_json *config, const char *config_path, struct ts_policy *ret,
		    struct ts_error **err)
{
	const struct ts_json *p = ts_json_get(config, "policy");
	const struct ts_json *val, *ns;
	const char *key;
	size_t k;
	int r;

	*ret = (struct ts_policy){.config_path = config_path};
	if (p == NULL)
		return 0;
	if (p->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/policy': expected object, got %s", config_path,
				    ts_json_type_name(p->type));
	ts_json_object_foreach (p, k, key, val) {
		if (strcmp(key, "unscoped") == 0) {
			r = check_grant(val, config_path, "/policy/unscoped", err);
		} else if (strcmp(key, "namespaces") == 0) {
			const char *name;
			size_t j;

			if (val->type != TS_JSON_OBJECT)
				return ts_error_set(err, 0,
						    "%s: '/policy/namespaces': expected object, "
						    "got %s",
						    config_path, ts_json_type_name(val->type));
			r = 0;
			ts_json_object_foreach (val, j, name, ns) {
				cleanup_free char *field = NULL;

				if (asprintf(&field, "/policy/namespaces/%s", name) < 0)
					return ts_error_set(err, ENOMEM, "policy");
				r = check_grant(ns, config_path, field, err);
				if (r < 0)
					break;
			}
		} else {
			r = ts_error_set(err, 0, "%s: '/policy/%s': unknown key", config_path, key);
		}
		if (r < 0)
			return r;
	}
	ret->policy = p;
	return 0;
}

/* One namespace annotation: 1 with *ret set, 0 absent, -EINVAL. */
static int namespace_annotation(const struct ts_json *config, const char *config_name,
				const char *key, const char **ret, struct ts_error **err)
{
	int r = ts_oci_annotation_get(config, key, ret, err);

	if (r < 0)
		return ts_error_prefix(err, "%s", config_name);
	if (r == 1 && **ret == '\0')
		return ts_error_set(err, 0, "%s: '/annotations/%s': empty namespace", config_name,
				    key);
	return r;
}

int ts_policy_namespace(const struct ts_json *config, const char *config_name, const char **ret_ns,
			struct ts_error **err)
{
	const char *cri = NULL, *pod = NULL;
	int r;

	*ret_ns = NULL;
	r = namespace_annotation(config, config_name, TS_POLICY_CRI_NAMESPACE_ANNOTATION, &cri,
				 err);
	if (r < 0)
		return r;
	r = namespace_annotation(config, config_name, TS_POLICY_NAMESPACE_ANNOTATION, &pod, err);
	if (r < 0)
		return r;
	if (cri != NULL && pod != NULL && strcmp(cri, pod) != 0)
		return ts_error_set(err, 0,
				    "%s: '/annotations/%s': '%s' is not the pod's namespace '%s' "
				    "(%s, set by containerd's CRI)",
				    config_name, TS_POLICY_NAMESPACE_ANNOTATION, pod, cri,
				    TS_POLICY_CRI_NAMESPACE_ANNOTATION);
	*ret_ns = cri != NULL ? cri : pod;
	return 0;
}

/* The grant of the subject, and the JSON path naming where it goes (for
 * the message); NULL grant when the policy gives none. */
static const struct ts_json *grant_of(const struct ts_policy *pol, const char *ns, char **ret_field)
{
	const struct ts_json *nss = ts_json_get(pol->policy, "namespaces");
	const struct ts_json *val, *hit = NULL;
	const char *key, *hit_key = NULL;
	size_t k;

	*ret_field = NULL;
	if (ns == NULL) {
		*ret_field = strdup("/policy/unscoped");
		return ts_json_get(pol->policy, "unscoped");
	}
	ts_json_object_foreach (nss, k, key, val) {
		if (strcmp(key, ns) == 0) {
			hit = val;
			hit_key = key;
			break;
		}
		if (hit == NULL && fnmatch(key, ns, 0) == 0) {
			hit = val;
			hit_key = key;
		}
	}
	if (asprintf(ret_field, "/policy/namespaces/%s", hit_key != NULL ? hit_key : ns) < 0)
		*ret_field = NULL;
	return hit;
}

static const char *or_default(const char *s, const char *dflt)
{
	return s != NULL ? s : dflt;
}

/* Whether grant g lists s under key (each member an fnmatch(3) pattern). */
static bool granted(const struct ts_json *g, const char *key, const char *s)
{
	const struct ts_json *item;
	size_t i;

	ts_json_array_foreach (ts_json_get(g, key), i, item) {
		if (item->type == TS_JSON_STRING && fnmatch(item->u.string, s, 0) == 0)
			return true;
	}
	return false;
}

static int refuse(const struct ts_policy *pol, const struct ts_policy_request *req,
		  const char *field, const char *what, const char *why, const char *grant_field,
		  const char *key, struct ts_error **err)
{
	cleanup_free char *subject = NULL;

	if (req->namespace != NULL && asprintf(&subject, "namespace '%s'", req->namespace) < 0)
		return ts_error_set(err, ENOMEM, "policy");
	return ts_error_set(err, 0, "%s: '%s': %s is not allowed for %s: %s'%s/%s' of %s",
			    req->config_name, field, what,
			    subject != NULL ? subject : "unscoped containers", why,
			    grant_field != NULL ? grant_field : "/policy", key, pol->config_path);
}

int ts_policy_check(const struct ts_policy *pol, const struct ts_policy_request *req,
		    struct ts_error **err)
{
	cleanup_free char *field = NULL, *what = NULL;
	const struct ts_json *g = grant_of(pol, req->namespace, &field);
	int r = 0;

	if (field == NULL)
		return ts_error_set(err, ENOMEM, "policy");
	if (req->pool == TS_POLICY_POOL_EXCLUSIVE && req->cpu_limit > 0 &&
	    req->cpus > req->cpu_limit)
		return ts_error_set(err, 0,
				    "%s: '%s': %u exclusive cpus are "
				    "more than the container's cpu limit of %u",
				    req->config_name,
				    or_default(req->cpus_field, "/annotations/toposhim.io~1cpus"),
				    req->cpus, req->cpu_limit);
	if (req->class_name != NULL && req->pool != TS_POLICY_POOL_SHARED &&
	    !granted(g, "classes", req->class_name)) {
		bool kubelet = req->pool == TS_POLICY_POOL_EXCLUSIVE && req->guaranteed;

		if (!kubelet) {
			if (asprintf(&what, "class '%s' (%s cpus)", req->class_name,
				     req->pool == TS_POLICY_POOL_EXCLUSIVE ? "exclusive"
									   : "reserved") < 0)
				return ts_error_set(err, ENOMEM, "policy");
			return refuse(
				pol, req,
				or_default(req->class_field, "/annotations/toposhim.io~1class"),
				what,
				req->pool == TS_POLICY_POOL_EXCLUSIVE
					? "it needs an integer cpu limit equal to its "
					  "request (the kubelet's rule), or the class in "
					: "it needs the class in ",
				field, "classes", err);
		}
	}
	if (req->numa != NULL && strcmp(req->numa, "exclusive") == 0 &&
	    !granted(g, "numa", "exclusive"))
		return refuse(pol, req,
			      or_default(req->numa_field, "/annotations/toposhim.io~1numa"),
			      "numa 'exclusive' (a whole numa node)", "it needs 'exclusive' in ",
			      field, "numa", err);
	if (req->memory_tier != NULL && strcmp(req->memory_tier, "dram") != 0 &&
	    !granted(g, "memory_tiers", req->memory_tier)) {
		if (asprintf(&what, "memory tier '%s'", req->memory_tier) < 0)
			return ts_error_set(err, ENOMEM, "policy");
		return refuse(pol, req,
			      or_default(req->tier_field, "/annotations/toposhim.io~1memory-tier"),
			      what, "it needs the tier in ", field, "memory_tiers", err);
	}
	for (size_t i = 0; r == 0 && i < req->n_devices; i++) {
		if (granted(g, "devices", req->devices[i]))
			continue;
		free(what);
		if (asprintf(&what, "cdi device '%s'", req->devices[i]) < 0)
			return ts_error_set(err, ENOMEM, "policy");
		r = refuse(pol, req,
			   or_default(req->device_fields != NULL ? req->device_fields[i] : NULL,
				      "/annotations"),
			   what, "it needs a pattern matching it in ", field, "devices", err);
	}
	return r;
}
