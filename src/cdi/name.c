/* name.c - qualified device names, annotation requests, JSON pointers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi/internal.h"
#include "oci/role.h"
#include "util/cleanup.h"

static bool is_letter(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_alnum(char c)
{
	return is_letter(c) || (c >= '0' && c <= '9');
}

/* How a message names the character at s: 'x' when printable ASCII, else
 * its code point (U+0001, U+FFFD: a byte of a UTF-8 sequence read as a
 * character was named by its first byte, helper-16), or the byte when s
 * is no UTF-8 there.  buf holds at least 16 bytes. */
static const char *describe_char(const char *s, char *buf, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned cp = 0;
	int more = 0;

	if (u[0] >= 0x20 && u[0] < 0x7f) {
		snprintf(buf, len, "'%c'", u[0]);
		return buf;
	}
	if (u[0] < 0x80) {
		snprintf(buf, len, "U+%04X", u[0]);
		return buf;
	}
	if ((u[0] & 0xe0) == 0xc0)
		cp = u[0] & 0x1f, more = 1;
	else if ((u[0] & 0xf0) == 0xe0)
		cp = u[0] & 0x0f, more = 2;
	else if ((u[0] & 0xf8) == 0xf0)
		cp = u[0] & 0x07, more = 3;
	else
		more = -1;
	for (int i = 1; i <= more; i++) {
		if ((u[i] & 0xc0) != 0x80) {
			more = -1;
			break;
		}
		cp = cp << 6 | (u[i] & 0x3f);
	}
	if (more < 0)
		snprintf(buf, len, "byte 0x%02X", u[0]);
	else
		snprintf(buf, len, "U+%04X", cp);
	return buf;
}

/*
 * Shared rule: first character checked by `first`, middle ones alnum or one
 * of `extra`, last alnum.  what: "vendor", "class", "device name".
 */
static int check_name(const char *what, const char *s, bool (*first)(char), const char *first_desc,
		      const char *extra, struct ts_error **err)
{
	size_t len = strlen(s);

	if (len == 0)
		return ts_error_set(err, 0, "invalid %s '': empty", what);
	if (!first(s[0]))
		return ts_error_set(err, 0, "invalid %s '%s': should start with %s", what, s,
				    first_desc);
	for (size_t i = 1; i + 1 < len; i++) {
		char buf[16];

		if (!is_alnum(s[i]) && strchr(extra, s[i]) == NULL)
			return ts_error_set(err, 0, "invalid %s '%s': invalid character %s", what,
					    s, describe_char(s + i, buf, sizeof(buf)));
	}
	if (!is_alnum(s[len - 1]))
		return ts_error_set(err, 0, "invalid %s '%s': should end with a letter or digit",
				    what, s);
	return 0;
}

int ts_cdi_vendor_validate(const char *vendor, struct ts_error **err)
{
	return check_name("vendor", vendor, is_letter, "a letter", "_-.", err);
}

int ts_cdi_class_validate(const char *class, struct ts_error **err)
{
	return check_name("class", class, is_letter, "a letter", "_-.", err);
}

int ts_cdi_device_name_validate(const char *device_name, struct ts_error **err)
{
	return check_name("device name", device_name, is_alnum, "a letter or digit", "_-.:", err);
}

int ts_cdi_qualified_name_parse(const char *qualified_name, char **ret_vendor, char **ret_class,
				char **ret_device_name, struct ts_error **err)
{
	cleanup_free char *vendor = NULL, *class = NULL, *device_name = NULL;
	const char *eq = strchr(qualified_name, '='), *slash;
	int r;

	if (eq == NULL)
		return ts_error_set(err, 0, "invalid qualified device name '%s': missing '='",
				    qualified_name);
	slash = memchr(qualified_name, '/', (size_t)(eq - qualified_name));
	if (slash == NULL)
		return ts_error_set(err, 0, "invalid qualified device name '%s': missing '/'",
				    qualified_name);
	vendor = strndup(qualified_name, (size_t)(slash - qualified_name));
	class = strndup(slash + 1, (size_t)(eq - slash - 1));
	device_name = strdup(eq + 1);
	if (vendor == NULL || class == NULL || device_name == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	r = ts_cdi_vendor_validate(vendor, err);
	if (r >= 0)
		r = ts_cdi_class_validate(class, err);
	if (r >= 0)
		r = ts_cdi_device_name_validate(device_name, err);
	if (r < 0)
		return ts_error_prefix(err, "invalid qualified device name '%s'", qualified_name);
	if (ret_vendor != NULL)
		*ret_vendor = TAKE_PTR(vendor);
	if (ret_class != NULL)
		*ret_class = TAKE_PTR(class);
	if (ret_device_name != NULL)
		*ret_device_name = TAKE_PTR(device_name);
	return 0;
}

bool ts_cdi_qualified_name_is_valid(const char *qualified_name)
{
	cleanup_error struct ts_error *err = NULL;

	return ts_cdi_qualified_name_parse(qualified_name, NULL, NULL, NULL, &err) == 0;
}

/* A growable NULL-terminated string vector without duplicates, of at most
 * TS_CDI_MAX_REQUESTS names: the duplicate check is then linear in the
 * request's text however many names it repeats.  where[i] is the JSON
 * pointer of what asked for v[i] first (NULL-terminated too). */
struct strv {
	char **v, **where;
	size_t n, cap;
};

static int strv_add_unique(struct strv *s, const char *str, size_t len, const char *where)
{
	char *copy, *where_copy;

	for (size_t i = 0; i < s->n; i++)
		if (strncmp(s->v[i], str, len) == 0 && s->v[i][len] == '\0')
			return 0;
	if (s->n == TS_CDI_MAX_REQUESTS)
		return -E2BIG;
	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		char **v = realloc(s->v, cap * sizeof(*v)), **w;

		if (v == NULL)
			return -ENOMEM;
		s->v = v;
		v[s->n] = NULL;
		w = realloc(s->where, cap * sizeof(*w));
		if (w == NULL)
			return -ENOMEM;
		s->where = w;
		w[s->n] = NULL;
		s->cap = cap;
	}
	copy = strndup(str, len);
	where_copy = strdup(where);
	if (copy == NULL || where_copy == NULL) {
		free(copy);
		free(where_copy);
		return -ENOMEM;
	}
	s->v[s->n] = copy;
	s->where[s->n++] = where_copy;
	s->v[s->n] = NULL;
	s->where[s->n] = NULL;
	return 0;
}

/*
 * Add the comma-separated names of value (where: its JSON pointer, for
 * messages), each checked a qualified name in list order (helper-7: the
 * env's "vendor.com/class" was an unresolvable device, ",,," a list of
 * empty names).  @return 0; -EINVAL for more than TS_CDI_MAX_REQUESTS names,
 * a name longer than TS_CDI_MAX_NAME_BYTES (shown cut to 64 bytes), an
 * empty value or entry, an invalid qualified name; -ENOMEM.
 */
static int split_into(struct strv *s, const char *value, const char *config_name, const char *where,
		      struct ts_error **err)
{
	for (size_t pos = 1;; pos++) {
		const char *comma = strchr(value, ',');
		size_t len = comma ? (size_t)(comma - value) : strlen(value);
		int r;

		char name[TS_CDI_MAX_NAME_BYTES + 1];

		if (len > TS_CDI_MAX_NAME_BYTES)
			return ts_error_set(err, 0,
					    "%s: '%s': device name longer than %u bytes '%.64s...'",
					    config_name, where, TS_CDI_MAX_NAME_BYTES, value);
		/* "a/b=c," or "a/b=c,,d/e=f": say where, not "'': missing '='" */
		if (len == 0 && pos == 1 && comma == NULL)
			return ts_error_set(err, 0, "%s: '%s': empty, no device named", config_name,
					    where);
		if (len == 0)
			return ts_error_set(err, 0,
					    "%s: '%s': empty device name at position %zu of the "
					    "list (a ',' too many)",
					    config_name, where, pos);
		/* each must be a qualified name, the first bad one told (E4's
		 * "foobar"; " a/b=c"): the field's fault, not a missing device */
		memcpy(name, value, len);
		name[len] = '\0';
		if (ts_cdi_qualified_name_parse(name, NULL, NULL, NULL, err) < 0)
			return ts_error_prefix(err, "%s: '%s'", config_name, where);
		r = strv_add_unique(s, value, len, where);
		if (r == -E2BIG)
			return ts_error_set(err, 0,
					    "%s: '%s': more than %u CDI device names requested",
					    config_name, where, TS_CDI_MAX_REQUESTS);
		if (r < 0)
			return ts_error_set(err, ENOMEM, "out of memory");
		if (comma == NULL)
			return 0;
		value = comma + 1;
	}
}

/* toposhim.io/cdi.<name> (or toposhim.io/cdi): devices for this container. */
static int scoped_into(struct strv *s, const struct ts_json *config,
		       const struct ts_oci_container *c, const char *config_name,
		       struct ts_error **err)
{
	cleanup_free char *field = NULL;
	const char *value = NULL;
	int r = ts_oci_request_get(config, c, "toposhim.io/cdi", &value, &field, err);

	if (r < 0)
		return ts_error_prefix(err, "%s", config_name);
	if (r == 0)
		return 0;
	return split_into(s, value, config_name, field, err);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ts_cdi_requests_collect(const struct ts_json *config, const char *config_name,
			    bool env_requests, char ***ret_names, char ***ret_where,
			    struct ts_error **err)
{
	const struct ts_json *ann = ts_json_get_object(config, "annotations");
	struct strv names = {0};
	cleanup_free const char **keys = NULL;
	size_t nkeys = 0, i;
	const char *key;
	struct ts_json *val;
	struct ts_oci_container c;
	int r = -ENOMEM;

	/* the pod's sandbox takes none of the pod's devices (oci/role.h) */
	ts_oci_container_identify(config, &c);
	if (c.role == TS_OCI_ROLE_SANDBOX)
		goto done;
	r = ts_oci_request_check(config, &c, NULL, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", config_name);
	r = -ENOMEM;
	if (ann != NULL && ann->u.object.len > 0) {
		keys = calloc(ann->u.object.len, sizeof(*keys));
		if (keys == NULL)
			goto fail;
	}
	ts_json_object_foreach (ann, i, key, val) {
		if (strncmp(key, TS_CDI_ANNOTATION_PREFIX, strlen(TS_CDI_ANNOTATION_PREFIX)) != 0)
			continue;
		if (val->type != TS_JSON_STRING) {
			struct ts_cdi_ptr p = {0};

			ts_cdi_ptr_push(&p, "annotations");
			ts_cdi_ptr_push(&p, key);
			r = ts_error_set(err, 0, "%s: '%s': expected string, got %s", config_name,
					 ts_cdi_ptr_str(&p), ts_json_type_name(val->type));
			goto fail_set;
		}
		keys[nkeys++] = key;
	}
	if (nkeys > 0)
		qsort(keys, nkeys, sizeof(*keys), cmp_strp);
	for (i = 0; i < nkeys; i++) {
		struct ts_cdi_ptr p = {0};

		ts_cdi_ptr_push(&p, "annotations");
		ts_cdi_ptr_push(&p, keys[i]);
		r = split_into(&names, ts_json_get_string(ann, keys[i]), config_name,
			       ts_cdi_ptr_str(&p), err);
		if (r < 0)
			goto fail_set;
	}
	r = scoped_into(&names, config, &c, config_name, err);
	if (r < 0)
		goto fail_set;
	if (env_requests) {
		const struct ts_json *env = ts_json_get_path(config, "process", "env", NULL);
		const size_t plen = strlen(TS_CDI_ENV_REQUEST);
		struct ts_json *item;

		ts_json_array_foreach (env, i, item) {
			char where[64];

			/* an empty one is an unset one (an image's ENV, docker's
			 * -e NAME= clear a variable so); an empty annotation is
			 * refused: nobody writes one to ask for nothing */
			if (item->type != TS_JSON_STRING ||
			    strncmp(item->u.string, TS_CDI_ENV_REQUEST, plen) != 0 ||
			    item->u.string[plen] != '=' || item->u.string[plen + 1] == '\0')
				continue;

			snprintf(where, sizeof(where), "/process/env/%zu", i);
			r = split_into(&names, item->u.string + plen + 1, config_name, where, err);
			if (r < 0)
				goto fail_set;
		}
	}
done:
	if (names.v == NULL) {
		names.v = calloc(1, sizeof(char *));
		names.where = calloc(1, sizeof(char *));
		if (names.v == NULL || names.where == NULL)
			goto fail;
	}
	*ret_names = names.v;
	if (ret_where != NULL)
		*ret_where = names.where;
	else
		ts_strv_freep(&names.where);
	return (int)names.n;
fail:
	r = ts_error_set(err, ENOMEM, "out of memory");
fail_set:
	ts_strv_freep(&names.v);
	ts_strv_freep(&names.where);
	return r;
}

int ts_cdi_requests_from_config(const struct ts_json *config, const char *config_name,
				bool env_requests, char ***ret_names, struct ts_error **err)
{
	return ts_cdi_requests_collect(config, config_name, env_requests, ret_names, NULL, err);
}

size_t ts_cdi_ptr_push(struct ts_cdi_ptr *p, const char *key)
{
	size_t old = p->len;

	if (p->len + 1 < sizeof(p->buf))
		p->buf[p->len++] = '/';
	for (const char *c = key; *c != '\0' && p->len + 3 < sizeof(p->buf); c++) {
		if (*c == '~' || *c == '/') {
			p->buf[p->len++] = '~';
			p->buf[p->len++] = *c == '~' ? '0' : '1';
		} else {
			p->buf[p->len++] = *c;
		}
	}
	p->buf[p->len] = '\0';
	return old;
}

size_t ts_cdi_ptr_push_index(struct ts_cdi_ptr *p, size_t index)
{
	char num[32];

	snprintf(num, sizeof(num), "%zu", index);
	return ts_cdi_ptr_push(p, num);
}

void ts_cdi_ptr_pop(struct ts_cdi_ptr *p, size_t old_len)
{
	p->len = old_len;
	p->buf[old_len] = '\0';
}

const char *ts_cdi_ptr_str(const struct ts_cdi_ptr *p)
{
	return p->len == 0 ? "/" : p->buf;
}
