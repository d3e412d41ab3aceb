/* role.c - the sandbox/app role of a container and its scoped requests (role.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/role.h"
#include "oci/spec.h"
#include "util/cleanup.h"

#define OWN_PREFIX "toposhim.io/"

const char *const TS_OCI_REQUEST_KEYS[] = {"class", "cpus", "numa", "memory-tier", "cdi", NULL};

bool ts_oci_dns_label(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

bool ts_oci_dns_subdomain(const char *s, size_t len)
{
	size_t label = 0;

	if (len == 0 || len > 253)
		return false;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');

		if (ch == '.') {
			if (label == 0 || s[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!alnum && (ch != '-' || label == 0))
			return false;
		label++;
	}
	return label > 0 && s[len - 1] != '-';
}

/* A string annotation, NULL when absent or of another type. */
static const char *annotation(const struct ts_json *config, const char *key)
{
	return ts_json_get_string(ts_json_get_object(config, "annotations"), key);
}

static bool args_are(const struct ts_json *config, const char *const *want)
{
	const struct ts_json *args = ts_json_get_path(config, "process", "args", NULL);
	size_t n = 0;

	while (want[n] != NULL)
		n++;
	if (args == NULL || args->type != TS_JSON_ARRAY || args->u.array.len != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct ts_json *a = args->u.array.items[i];

		if (a->type != TS_JSON_STRING || strcmp(a->u.string, want[i]) != 0)
			return false;
	}
	return true;
}

static bool podman_infra(const struct ts_json *config)
{
	static const char *const catatonit[] = {"/catatonit", "-P", NULL};
	static const char *const pause[] = {"/pause", NULL};
	const char *manager = annotation(config, "io.container.manager");

	return manager != NULL && strcmp(manager, "libpod") == 0 &&
	       (args_are(config, catatonit) || args_are(config, pause));
}

/* The <name> of CRI-O's "k8s_<name>_<pod>_..." (or the whole value). */
static void crio_name(const char *v, char *buf, size_t size)
{
	const char *start = v, *end;

	if (strncmp(v, "k8s_", 4) == 0)
		start = v + 4;
	end = strchr(start, '_');
	if (end == NULL)
		end = start + strlen(start);
	snprintf(buf, size, "%.*s", (int)(end - start), start);
}

void ts_oci_container_identify(const struct ts_json *config, struct ts_oci_container *ret)
{
	static const char *const type_keys[] = {TS_OCI_ANNOTATION_CRI_TYPE,
						TS_OCI_ANNOTATION_CRIO_TYPE};
	const char *v;

	*ret = (struct ts_oci_container){.role = TS_OCI_ROLE_CONTAINER};
	for (size_t i = 0; i < ARRAY_SIZE(type_keys) && ret->role_from == NULL; i++) {
		v = annotation(config, type_keys[i]);
		if (v != NULL && (strcmp(v, "sandbox") == 0 || strcmp(v, "container") == 0)) {
			ret->role = strcmp(v, "sandbox") == 0 ? TS_OCI_ROLE_SANDBOX
							      : TS_OCI_ROLE_CONTAINER;
			ret->role_from = type_keys[i];
		}
	}
	if (ret->role_from == NULL && podman_infra(config)) {
		ret->role = TS_OCI_ROLE_SANDBOX;
		ret->role_from = "/process/args";
	}
	if (ret->role == TS_OCI_ROLE_SANDBOX)
		return;
	v = annotation(config, TS_OCI_ANNOTATION_CRI_NAME);
	if (v != NULL) {
		snprintf(ret->name, sizeof(ret->name), "%s", v);
		ret->name_from = TS_OCI_ANNOTATION_CRI_NAME;
	} else if ((v = annotation(config, TS_OCI_ANNOTATION_CRIO_NAME)) != NULL) {
		crio_name(v, ret->name, sizeof(ret->name));
		ret->name_from = TS_OCI_ANNOTATION_CRIO_NAME;
	}
	if (!ts_oci_dns_label(ret->name)) {
		ret->name[0] = '\0';
		ret->name_from = NULL;
	}
}

static int field_of(const char *key, char **ret, struct ts_error **err)
{
	cleanup_free char *esc = ts_json_pointer_escape(key);

	if (esc == NULL || asprintf(ret, "/annotations/%s", esc) < 0)
		return ts_error_set(err, ENOMEM, "out of memory");
	return 0;
}

int ts_oci_request_get(const struct ts_json *config, const struct ts_oci_container *c,
		       const char *key, const char **ret_value, char **ret_field,
		       struct ts_error **err)
{
	cleanup_free char *scoped = NULL;
	const char *use = key, *v = NULL;
	int r = 0;

	if (c->role == TS_OCI_ROLE_SANDBOX)
		return 0;
	if (c->name[0] != '\0') {
		if (asprintf(&scoped, "%s.%s", key, c->name) < 0)
			return ts_error_set(err, ENOMEM, "out of memory");
		r = ts_oci_annotation_get(config, scoped, &v, err);
		if (r == 1)
			use = scoped;
	}
	if (r == 0)
		r = ts_oci_annotation_get(config, key, &v, err);
	if (r <= 0)
		return r;
	if (ret_field != NULL && field_of(use, ret_field, err) < 0)
		return ts_error_code(*err);
	*ret_value = v;
	return 1;
}

/* Whether key is "toposhim.io/<k>" or "toposhim.io/<k>.<name>" for a k of
 * TS_OCI_REQUEST_KEYS; *ret_scope: the <name>, NULL for the unscoped form.
 * @return 1 such a key; 0 another under toposhim.io/; -1 not under it. */
static int request_key(const char *key, const char **ret_scope)
{
	*ret_scope = NULL;
	if (strncmp(key, OWN_PREFIX, strlen(OWN_PREFIX)) != 0)
		return -1;
	key += strlen(OWN_PREFIX);
	for (const char *const *k = TS_OCI_REQUEST_KEYS; *k != NULL; k++) {
		size_t n = strlen(*k);

		if (strncmp(key, *k, n) != 0 || (key[n] != '\0' && key[n] != '.'))
			continue;
		*ret_scope = key[n] == '.' ? key + n + 1 : NULL;
		return 1;
	}
	return 0;
}

/* The <name> of a scoped request key, NULL when key is not one. */
static const char *scope_of(const char *key)
{
	const char *scope;

	return request_key(key, &scope) == 1 ? scope : NULL;
}

int ts_oci_request_check(const struct ts_json *config, const struct ts_oci_container *c,
			 const char ***ret_others, struct ts_error **err)
{
	const struct ts_json *ann = ts_json_get_object(config, "annotations");
	cleanup_free const char **others = NULL;
	const char *key;
	struct ts_json *val;
	size_t i, n = 0;

	others = calloc((ann != NULL ? ann->u.object.len : 0) + 1, sizeof(*others));
	if (others == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	ts_json_object_foreach (ann, i, key, val) {
		const char *name = scope_of(key);

		(void)val; /* only the keys matter here */
		if (name == NULL)
			continue;
		if (!ts_oci_dns_label(name)) {
			cleanup_free char *field = NULL;

			if (field_of(key, &field, err) < 0)
				return ts_error_code(*err);
			return ts_error_set(err, 0,
					    "'%s': invalid container name '%s' (a DNS label: "
					    "lowercase letters, digits and '-')",
					    field, name);
		}
		if (c->role == TS_OCI_ROLE_SANDBOX || strcmp(name, c->name) != 0)
			others[n++] = key;
	}
	if (ret_others != NULL)
		*ret_others = TAKE_PTR(others);
	return (int)n;
}

int ts_oci_request_unknown(const struct ts_json *config, const char ***ret)
{
	const struct ts_json *ann = ts_json_get_object(config, "annotations");
	const char *key;
	struct ts_json *val;
	size_t i, n = 0;
	const char **v = calloc((ann != NULL ? ann->u.object.len : 0) + 1, sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	ts_json_object_foreach (ann, i, key, val) {
		const char *scope;

		(void)val;
		if (request_key(key, &scope) == 0)
			v[n++] = key;
	}
	*ret = v;
	return (int)n;
}
