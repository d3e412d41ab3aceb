/* json.c - see json.h.  The only file besides the oci module's own that may include yajl. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#include "oci/json.h"
#include "util/cleanup.h"

#define TS_JSON_STR_(x) #x
#define TS_JSON_STRINGIFY(x) TS_JSON_STR_(x)

/* Everything we parse must be writable again: yajl_gen refuses to open a
 * container at depth YAJL_MAX_DEPTH. */
_Static_assert(TS_JSON_MAX_DEPTH < YAJL_MAX_DEPTH, "yajl_gen could not write a parsed tree");

static void yajl_handle_freep(yajl_handle *h)
{
	if (*h != NULL)
		yajl_free(*h);
}
#define cleanup_yajl_handle __attribute__((cleanup(yajl_handle_freep)))

static void yajl_gen_freep(yajl_gen *g)
{
	if (*g != NULL)
		yajl_gen_free(*g);
}
#define cleanup_yajl_gen __attribute__((cleanup(yajl_gen_freep)))

/* ---- nodes ---------------------------------------------------------------------------------- */

static struct ts_json *json_new(enum ts_json_type type)
{
	struct ts_json *j = calloc(1, sizeof(*j));

	if (j != NULL)
		j->type = type;
	return j;
}

struct ts_json *ts_json_free(struct ts_json *j)
{
	if (j == NULL)
		return NULL;
	switch (j->type) {
	case TS_JSON_NUMBER:
		free(j->u.number);
		break;
	case TS_JSON_STRING:
		free(j->u.string);
		break;
	case TS_JSON_ARRAY:
		for (size_t i = 0; i < j->u.array.len; i++)
			ts_json_free(j->u.array.items[i]);
		free(j->u.array.items);
		break;
	case TS_JSON_OBJECT:
		for (size_t i = 0; i < j->u.object.len; i++) {
			free(j->u.object.keys[i]);
			ts_json_free(j->u.object.values[i]);
		}
		free(j->u.object.keys);
		free(j->u.object.values);
		break;
	default:
		break;
	}
	free(j);
	return NULL;
}

struct ts_json *ts_json_new_null(void)
{
	return json_new(TS_JSON_NULL);
}

struct ts_json *ts_json_new_bool(bool v)
{
	struct ts_json *j = json_new(TS_JSON_BOOL);

	if (j != NULL)
		j->u.boolean = v;
	return j;
}

struct ts_json *ts_json_new_number_raw(const char *raw)
{
	struct ts_json *j;

	if (raw == NULL)
		return NULL;
	j = json_new(TS_JSON_NUMBER);
	if (j == NULL)
		return NULL;
	j->u.number = strdup(raw);
	if (j->u.number == NULL)
		return ts_json_free(j);
	return j;
}

struct ts_json *ts_json_new_int(int64_t v)
{
	char buf[32];

	(void)snprintf(buf, sizeof(buf), "%" PRId64, v);
	return ts_json_new_number_raw(buf);
}

struct ts_json *ts_json_new_uint(uint64_t v)
{
	char buf[32];

	(void)snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return ts_json_new_number_raw(buf);
}

struct ts_json *ts_json_new_string_len(const char *s, size_t len)
{
	struct ts_json *j;

	if (s == NULL)
		return NULL;
	j = json_new(TS_JSON_STRING);
	if (j == NULL)
		return NULL;
	j->u.string = strndup(s, len);
	if (j->u.string == NULL)
		return ts_json_free(j);
	return j;
}

struct ts_json *ts_json_new_string(const char *s)
{
	if (s == NULL)
		return NULL;
	return ts_json_new_string_len(s, strlen(s));
}

struct ts_json *ts_json_new_array(void)
{
	return json_new(TS_JSON_ARRAY);
}

struct ts_json *ts_json_new_object(void)
{
	return json_new(TS_JSON_OBJECT);
}

const char *ts_json_type_name(enum ts_json_type t)
{
	switch (t) {
	case TS_JSON_NULL:
		return "null";
	case TS_JSON_BOOL:
		return "boolean";
	case TS_JSON_NUMBER:
		return "number";
	case TS_JSON_STRING:
		return "string";
	case TS_JSON_ARRAY:
		return "array";
	case TS_JSON_OBJECT:
		return "object";
	default:
		return "invalid";
	}
}

/* Make room for one more element; returns false on OOM (nothing changed). */
static bool array_grow(struct ts_json *arr)
{
	struct ts_json **items;
	size_t cap;

	if (arr->u.array.len < arr->u.array.cap)
		return true;
	cap = arr->u.array.cap ? arr->u.array.cap * 2 : 4;
	items = reallocarray(arr->u.array.items, cap, sizeof(*items));
	if (items == NULL)
		return false;
	arr->u.array.items = items;
	arr->u.array.cap = cap;
	return true;
}

static bool object_grow(struct ts_json *obj)
{
	struct ts_json **values;
	char **keys;
	size_t cap;

	if (obj->u.object.len < obj->u.object.cap)
		return true;
	cap = obj->u.object.cap ? obj->u.object.cap * 2 : 4;
	keys = reallocarray(obj->u.object.keys, cap, sizeof(*keys));
	if (keys == NULL)
		return false;
	obj->u.object.keys = keys;
	values = reallocarray(obj->u.object.values, cap, sizeof(*values));
	if (values == NULL)
		return false;
	obj->u.object.values = values;
	obj->u.object.cap = cap;
	return true;
}

/* Append a member, taking ownership of key and value only on success. */
static bool object_push(struct ts_json *obj, char *key, struct ts_json *value)
{
	if (!object_grow(obj))
		return false;
	obj->u.object.keys[obj->u.object.len] = key;
	obj->u.object.values[obj->u.object.len] = value;
	obj->u.object.len++;
	return true;
}

static void object_delete_at(struct ts_json *obj, size_t i)
{
	size_t tail = obj->u.object.len - i - 1;

	free(obj->u.object.keys[i]);
	ts_json_free(obj->u.object.values[i]);
	memmove(&obj->u.object.keys[i], &obj->u.object.keys[i + 1], tail * sizeof(char *));
	memmove(&obj->u.object.values[i], &obj->u.object.values[i + 1],
		tail * sizeof(struct ts_json *));
	obj->u.object.len--;
}

struct ts_json *ts_json_dup(const struct ts_json *j)
{
	cleanup_json struct ts_json *copy = NULL;

	if (j == NULL)
		return NULL;
	switch (j->type) {
	case TS_JSON_NULL:
		return ts_json_new_null();
	case TS_JSON_BOOL:
		return ts_json_new_bool(j->u.boolean);
	case TS_JSON_NUMBER:
		return ts_json_new_number_raw(j->u.number);
	case TS_JSON_STRING:
		return ts_json_new_string(j->u.string);
	case TS_JSON_ARRAY:
		copy = ts_json_new_array();
		if (copy == NULL)
			return NULL;
		for (size_t i = 0; i < j->u.array.len; i++) {
			struct ts_json *item = ts_json_dup(j->u.array.items[i]);

			if (item == NULL || !array_grow(copy)) {
				ts_json_free(item);
				return NULL;
			}
			copy->u.array.items[copy->u.array.len++] = item;
		}
		return TAKE_PTR(copy);
	case TS_JSON_OBJECT:
		copy = ts_json_new_object();
		if (copy == NULL)
			return NULL;
		for (size_t i = 0; i < j->u.object.len; i++) {
			struct ts_json *value = ts_json_dup(j->u.object.values[i]);
			char *key = strdup(j->u.object.keys[i]);

			if (value == NULL || key == NULL || !object_push(copy, key, value)) {
				ts_json_free(value);
				free(key);
				return NULL;
			}
		}
		return TAKE_PTR(copy);
	default:
		return NULL;
	}
}

bool ts_json_equal(const struct ts_json *a, const struct ts_json *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case TS_JSON_NULL:
		return true;
	case TS_JSON_BOOL:
		return a->u.boolean == b->u.boolean;
	case TS_JSON_NUMBER:
		return strcmp(a->u.number, b->u.number) == 0;
	case TS_JSON_STRING:
		return strcmp(a->u.string, b->u.string) == 0;
	case TS_JSON_ARRAY:
		if (a->u.array.len != b->u.array.len)
			return false;
		for (size_t i = 0; i < a->u.array.len; i++)
			if (!ts_json_equal(a->u.array.items[i], b->u.array.items[i]))
				return false;
		return true;
	case TS_JSON_OBJECT:
		if (a->u.object.len != b->u.object.len)
			return false;
		for (size_t i = 0; i < a->u.object.len; i++) {
			if (strcmp(a->u.object.keys[i], b->u.object.keys[i]) != 0)
				return false;
			if (!ts_json_equal(a->u.object.values[i], b->u.object.values[i]))
				return false;
		}
		return true;
	default:
		return false;
	}
}

/* ---- getters -------------------------------------------------------------------------------- */

/* Index of the last member named key, or -1. */
static ssize_t object_find_last(const struct ts_json *obj, const char *key)
{
	if (obj == NULL || obj->type != TS_JSON_OBJECT || key == NULL)
		return -1;
	for (size_t i = obj->u.object.len; i > 0; i--)
		if (strcmp(obj->u.object.keys[i - 1], key) == 0)
			return (ssize_t)(i - 1);
	return -1;
}

struct ts_json *ts_json_get(const struct ts_json *obj, const char *key)
{
	ssize_t i = object_find_last(obj, key);

	return i < 0 ? NULL : obj->u.object.values[i];
}

struct ts_json *ts_json_get_path(const struct ts_json *root, ...)
{
	struct ts_json *cur = (struct ts_json *)(uintptr_t)root;
	const char *key;
	va_list ap;

	va_start(ap, root);
	while (cur != NULL && (key = va_arg(ap, const char *)) != NULL)
		cur = ts_json_get(cur, key);
	va_end(ap);
	return cur;
}

const char *ts_json_get_string(const struct ts_json *obj, const char *key)
{
	struct ts_json *v = ts_json_get(obj, key);

	return v != NULL && v->type == TS_JSON_STRING ? v->u.string : NULL;
}

struct ts_json *ts_json_get_array(const struct ts_json *obj, const char *key)
{
	struct ts_json *v = ts_json_get(obj, key);

	return v != NULL && v->type == TS_JSON_ARRAY ? v : NULL;
}

struct ts_json *ts_json_get_object(const struct ts_json *obj, const char *key)
{
	struct ts_json *v = ts_json_get(obj, key);

	return v != NULL && v->type == TS_JSON_OBJECT ? v : NULL;
}

/* -?(0|[1-9][0-9]*) : the integer subset of the JSON number grammar. */
static bool is_json_integer(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		return s[1] == '\0';
	if (*s < '1' || *s > '9')
		return false;
	while (*s >= '0' && *s <= '9')
		s++;
	return *s == '\0';
}

int ts_json_get_int64(const struct ts_json *j, int64_t *ret)
{
	long long v;
	char *end;

	if (j == NULL || j->type != TS_JSON_NUMBER || !is_json_integer(j->u.number))
		return -EINVAL;
	errno = 0;
	v = strtoll(j->u.number, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*ret = (int64_t)v;
	return 0;
}

int ts_json_get_uint64(const struct ts_json *j, uint64_t *ret)
{
	unsigned long long v;
	const char *s;
	char *end;

	if (j == NULL || j->type != TS_JSON_NUMBER || !is_json_integer(j->u.number))
		return -EINVAL;
	s = j->u.number;
	if (*s == '-') {
		/* "-0" is zero; any other negative integer does not fit */
		if (strcmp(s, "-0") != 0)
			return -ERANGE;
		*ret = 0;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	*ret = (uint64_t)v;
	return 0;
}

/* ---- mutators ------------------------------------------------------------------------------- */

int ts_json_object_set(struct ts_json *obj, const char *key, struct ts_json *value,
		       struct ts_error **err)
{
	cleanup_json struct ts_json *val = value;
	cleanup_free char *k = NULL;
	ssize_t last;

	if (key == NULL)
		return ts_error_set(err, 0, "cannot set a member without a key");
	if (obj == NULL || obj->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "cannot set '%s': expected object, got %s", key,
				    obj == NULL ? "nothing" : ts_json_type_name(obj->type));
	if (val == NULL)
		return ts_error_set(err, ENOMEM, "cannot set '%s'", key);
	last = object_find_last(obj, key);
	if (last >= 0) {
		ts_json_free(obj->u.object.values[last]);
		obj->u.object.values[last] = TAKE_PTR(val);
		/* drop earlier duplicates; the survivor keeps its place among the other keys */
		for (size_t i = (size_t)last; i > 0; i--)
			if (strcmp(obj->u.object.keys[i - 1], key) == 0)
				object_delete_at(obj, i - 1);
		return 0;
	}
	k = strdup(key);
	if (k == NULL || !object_push(obj, k, val))
		return ts_error_set(err, ENOMEM, "cannot set '%s'", key);
	TAKE_PTR(k);
	TAKE_PTR(val);
	return 0;
}

int ts_json_object_append(struct ts_json *obj, const char *key, struct ts_json *value,
			  struct ts_error **err)
{
	cleanup_json struct ts_json *val = value;
	cleanup_free char *k = NULL;

	if (key == NULL)
		return ts_error_set(err, 0, "cannot append a member without a key");
	if (obj == NULL || obj->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "cannot append '%s': expected object, got %s", key,
				    obj == NULL ? "nothing" : ts_json_type_name(obj->type));
	k = strdup(key);
	if (val == NULL || k == NULL || !object_push(obj, k, val))
		return ts_error_set(err, ENOMEM, "cannot append '%s'", key);
	TAKE_PTR(k);
	TAKE_PTR(val);
	return 0;
}

struct key_at {
	const char *key;
	size_t index;
};

static int cmp_key_at(const void *a, const void *b)
{
	const struct key_at *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

int ts_json_object_find_duplicate(const struct ts_json *obj, size_t *ret_index)
{
	cleanup_free struct key_at *order = NULL;
	size_t n, best = SIZE_MAX;

	if (obj == NULL || obj->type != TS_JSON_OBJECT || obj->u.object.len < 2)
		return 0;
	n = obj->u.object.len;
	order = reallocarray(NULL, n, sizeof(*order));
	if (order == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		order[i] = (struct key_at){obj->u.object.keys[i], i};
	/* sorted by (key, index), each run of equal keys starts with its first
	 * member: the second of a run is the first repeat of that key */
	qsort(order, n, sizeof(*order), cmp_key_at);
	for (size_t i = 1; i < n; i++)
		if (strcmp(order[i - 1].key, order[i].key) == 0 &&
		    (i < 2 || strcmp(order[i - 2].key, order[i].key) != 0) && order[i].index < best)
			best = order[i].index;
	if (best == SIZE_MAX)
		return 0;
	*ret_index = best;
	return 1;
}

char *ts_json_pointer_escape(const char *key)
{
	size_t n = 0;
	char *esc;

	if (key == NULL)
		return NULL;
	esc = malloc(strlen(key) * 2 + 1);
	if (esc == NULL)
		return NULL;
	for (const char *c = key; *c != '\0'; c++) {
		if (*c == '~' || *c == '/') {
			esc[n++] = '~';
			esc[n++] = *c == '~' ? '0' : '1';
		} else {
			esc[n++] = *c;
		}
	}
	esc[n] = '\0';
	return esc;
}

/* Whether what holds an even number of single quotes, i.e. its last quote closes one. */
static bool quotes_closed(const char *what)
{
	size_t count = 0;

	for (; *what != '\0'; what++)
		if (*what == '\'')
			count++;
	return count % 2 == 0;
}

struct ts_json *ts_json_object_ensure(struct ts_json *obj, const char *key, enum ts_json_type type,
				      const char *what, struct ts_error **err)
{
	cleanup_free char *esc = NULL;
	struct ts_json *cur, *fresh;
	size_t n;

	if (what == NULL)
		what = "''";
	if (obj == NULL || obj->type != TS_JSON_OBJECT || key == NULL) {
		(void)ts_error_set(err, 0, "%s%s: expected object, got %s", what,
				   quotes_closed(what) ? "" : "'",
				   obj == NULL ? "nothing" : ts_json_type_name(obj->type));
		return NULL;
	}
	cur = ts_json_get(obj, key);
	if (cur == NULL && (type == TS_JSON_OBJECT || type == TS_JSON_ARRAY)) {
		fresh = json_new(type);
		if (ts_json_object_set(obj, key, fresh, err) < 0)
			return NULL;
		return fresh;
	}
	if (cur != NULL && cur->type == type)
		return cur;
	/* what is "file: '/path'" (closed: put "/key" inside its closing quote) or
	 * "file: '/path" (left open: append "/key" and close it) */
	n = strlen(what);
	if (n > 0 && what[n - 1] == '\'' && quotes_closed(what))
		n--;
	esc = ts_json_pointer_escape(key);
	if (esc == NULL) {
		(void)ts_error_set(err, ENOMEM, "%s", what);
		return NULL;
	}
	if (cur == NULL) /* only containers can be created empty: a programmer error */
		(void)ts_error_set(err, 0, "%.*s/%s': cannot create a member of type %s", (int)n,
				   what, esc, ts_json_type_name(type));
	else
		(void)ts_error_set(err, 0, "%.*s/%s': expected %s, got %s", (int)n, what, esc,
				   ts_json_type_name(type), ts_json_type_name(cur->type));
	return NULL;
}

size_t ts_json_object_remove(struct ts_json *obj, const char *key)
{
	size_t removed = 0;

	if (obj == NULL || obj->type != TS_JSON_OBJECT || key == NULL)
		return 0;
	for (size_t i = obj->u.object.len; i > 0; i--)
		if (strcmp(obj->u.object.keys[i - 1], key) == 0) {
			object_delete_at(obj, i - 1);
			removed++;
		}
	return removed;
}

static int array_check(const struct ts_json *arr, const struct ts_json *value, const char *verb,
		       struct ts_error **err)
{
	if (arr == NULL || arr->type != TS_JSON_ARRAY)
		return ts_error_set(err, 0, "cannot %s: expected array, got %s", verb,
				    arr == NULL ? "nothing" : ts_json_type_name(arr->type));
	if (value == NULL)
		return ts_error_set(err, ENOMEM, "cannot %s", verb);
	return 0;
}

int ts_json_array_insert(struct ts_json *arr, size_t index, struct ts_json *value,
			 struct ts_error **err)
{
	cleanup_json struct ts_json *val = value;
	int r;

	r = array_check(arr, val, "insert", err);
	if (r < 0)
		return r;
	if (index > arr->u.array.len)
		return ts_error_set(err, 0, "cannot insert at index %zu: array has %zu elements",
				    index, arr->u.array.len);
	if (!array_grow(arr))
		return ts_error_set(err, ENOMEM, "cannot insert");
	memmove(&arr->u.array.items[index + 1], &arr->u.array.items[index],
		(arr->u.array.len - index) * sizeof(struct ts_json *));
	arr->u.array.items[index] = TAKE_PTR(val);
	arr->u.array.len++;
	return 0;
}

int ts_json_array_append(struct ts_json *arr, struct ts_json *value, struct ts_error **err)
{
	cleanup_json struct ts_json *val = value;
	int r;

	r = array_check(arr, val, "append", err);
	if (r < 0)
		return r;
	return ts_json_array_insert(arr, arr->u.array.len, TAKE_PTR(val), err);
}

int ts_json_array_replace(struct ts_json *arr, size_t index, struct ts_json *value,
			  struct ts_error **err)
{
	cleanup_json struct ts_json *val = value;
	int r;

	r = array_check(arr, val, "replace", err);
	if (r < 0)
		return r;
	if (index >= arr->u.array.len)
		return ts_error_set(err, 0, "cannot replace index %zu: array has %zu elements",
				    index, arr->u.array.len);
	ts_json_free(arr->u.array.items[index]);
	arr->u.array.items[index] = TAKE_PTR(val);
	return 0;
}

struct ts_json *ts_json_array_take(struct ts_json *arr, size_t index)
{
	struct ts_json *item;

	if (arr == NULL || arr->type != TS_JSON_ARRAY || index >= arr->u.array.len)
		return NULL;
	item = arr->u.array.items[index];
	memmove(&arr->u.array.items[index], &arr->u.array.items[index + 1],
		(arr->u.array.len - index - 1) * sizeof(struct ts_json *));
	arr->u.array.len--;
	return item;
}

void ts_json_array_remove(struct ts_json *arr, size_t index)
{
	ts_json_free(ts_json_array_take(arr, index));
}

/* ---- parsing -------------------------------------------------------------------------------- */

struct parse_ctx {
	struct ts_json *root;
	struct ts_json *stack[TS_JSON_MAX_DEPTH]; /* open containers, innermost last */
	size_t depth;
	char *key;	    /* key of the member whose value comes next */
	const char *reason; /* why a callback stopped the parse */
	int errnum;
};

/* Attach a finished or freshly opened node to the innermost container. */
static int parse_add(struct parse_ctx *ctx, struct ts_json *node)
{
	struct ts_json *parent;

	if (node == NULL) {
		ctx->errnum = ENOMEM;
		return 0;
	}
	if (ctx->depth == 0) {
		ctx->root = node;
		return 1;
	}
	parent = ctx->stack[ctx->depth - 1];
	if (parent->type == TS_JSON_OBJECT) {
		if (!object_push(parent, ctx->key, node))
			goto oom;
		ctx->key = NULL;
		return 1;
	}
	if (!array_grow(parent))
		goto oom;
	parent->u.array.items[parent->u.array.len++] = node;
	return 1;
oom:
	ts_json_free(node);
	ctx->errnum = ENOMEM;
	return 0;
}

static int parse_null(void *c)
{
	return parse_add(c, ts_json_new_null());
}

static int parse_boolean(void *c, int v)
{
	return parse_add(c, ts_json_new_bool(v != 0));
}

static int parse_number(void *c, const char *s, size_t len)
{
	struct ts_json *j = json_new(TS_JSON_NUMBER);

	if (j != NULL) {
		j->u.number = strndup(s, len);
		if (j->u.number == NULL)
			j = ts_json_free(j);
	}
	return parse_add(c, j);
}

static bool has_nul(struct parse_ctx *ctx, const unsigned char *s, size_t len)
{
	if (memchr(s, '\0', len) == NULL)
		return false;
	ctx->reason = "strings must not contain NUL (\\u0000)";
	return true;
}

static int parse_string(void *c, const unsigned char *s, size_t len)
{
	if (has_nul(c, s, len))
		return 0;
	return parse_add(c, ts_json_new_string_len((const char *)s, len));
}

static int parse_key(void *c, const unsigned char *s, size_t len)
{
	struct parse_ctx *ctx = c;

	if (has_nul(ctx, s, len))
		return 0;
	free(ctx->key);
	ctx->key = strndup((const char *)s, len);
	if (ctx->key == NULL) {
		ctx->errnum = ENOMEM;
		return 0;
	}
	return 1;
}

static int parse_open(struct parse_ctx *ctx, enum ts_json_type type)
{
	struct ts_json *j;

	if (ctx->depth == TS_JSON_MAX_DEPTH) {
		ctx->reason = "nesting deeper than " TS_JSON_STRINGIFY(TS_JSON_MAX_DEPTH) " levels";
		return 0;
	}
	j = json_new(type);
	if (!parse_add(ctx, j))
		return 0;
	ctx->stack[ctx->depth++] = j;
	return 1;
}

static int parse_start_map(void *c)
{
	return parse_open(c, TS_JSON_OBJECT);
}

static int parse_start_array(void *c)
{
	return parse_open(c, TS_JSON_ARRAY);
}

static int parse_close(void *c)
{
	struct parse_ctx *ctx = c;

	ctx->depth--;
	return 1;
}

static const yajl_callbacks parse_callbacks = {
	.yajl_null = parse_null,
	.yajl_boolean = parse_boolean,
	.yajl_number = parse_number,
	.yajl_string = parse_string,
	.yajl_start_map = parse_start_map,
	.yajl_map_key = parse_key,
	.yajl_end_map = parse_close,
	.yajl_start_array = parse_start_array,
	.yajl_end_array = parse_close,
};

/* 1-based line and column of byte offset pos (columns count bytes). */
static void offset_to_line_col(const char *buf, size_t pos, size_t *line, size_t *col)
{
	size_t line_start = 0;

	*line = 1;
	for (size_t i = 0; i < pos; i++)
		if (buf[i] == '\n') {
			(*line)++;
			line_start = i + 1;
		}
	*col = pos - line_start + 1;
}

static int parse_error(yajl_handle h, struct parse_ctx *ctx, const char *buf, size_t len,
		       size_t pos, const char *filename, struct ts_error **err)
{
	cleanup_free char *reason = NULL;
	size_t line, col, n;
	unsigned char *msg;

	if (ctx->errnum != 0)
		return ts_error_set(err, ctx->errnum, "%s: cannot parse", filename);
	if (ctx->reason != NULL) {
		reason = strdup(ctx->reason);
	} else {
		msg = yajl_get_error(h, 0, (const unsigned char *)buf, len);
		reason = msg != NULL ? strdup((const char *)msg) : NULL;
		yajl_free_error(h, msg);
	}
	if (reason == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot parse", filename);
	/* yajl ends its reasons with ".\n"; house style wants neither */
	n = strlen(reason);
	while (n > 0 && (reason[n - 1] == '\n' || reason[n - 1] == '.'))
		reason[--n] = '\0';
	offset_to_line_col(buf, pos, &line, &col);
	return ts_error_set(err, 0, "%s: line %zu column %zu: %s", filename, line, col, reason);
}

static bool is_blank(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r')
			return false;
	return true;
}

/* Length of the well-formed UTF-8 sequence at s, of at most left bytes (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF); 0 if there is none. */
static size_t utf8_sequence_in(const unsigned char *s, size_t left)
{
	unsigned char c = s[0];
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (n > left)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) ||
	    (c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

/* The value of the 4 hex digits at s, or -1. */
static long hex4(const char *s, size_t left)
{
	long v = 0;

	if (left < 4)
		return -1;
	for (size_t i = 0; i < 4; i++) {
		char ch = s[i];
		int d = ch >= '0' && ch <= '9'	 ? ch - '0'
			: ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
			: ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
						 : -1;

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* Whether some byte of the 8 in w is zero (exact for the word, not per byte). */
static inline bool word_has_zero(uint64_t w)
{
	return ((w - 0x0101010101010101u) & ~w & 0x8080808080808080u) != 0;
}

/* The offset of the first byte from i on that is not plain ASCII text
 * (0x80 and above, '"' or '\\'), or len: 8 bytes a step, then bytewise. */
static size_t skip_plain(const unsigned char *u, size_t i, size_t len)
{
	uint64_t w;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, u + i, sizeof(w));
		if ((w & 0x8080808080808080u) != 0 || word_has_zero(w ^ 0x2222222222222222u) ||
		    word_has_zero(w ^ 0x5c5c5c5c5c5c5c5cu))
			break;
	}
	while (i < len && u[i] < 0x80 && u[i] != '"' && u[i] != '\\')
		i++;
	return i;
}

/*
 * What yajl accepts but should not be read: malformed UTF-8 (it takes
 * overlong forms such as C0 AF for '/', UTF-8-encoded surrogates and code
 * points above U+10FFFF as they are) and a \u escape of a lone UTF-16
 * surrogate (it makes '?' of it).  runc's Go decoder reads U+FFFD for both,
 * so the text would mean three things to toposhim, runc and crun; no engine
 * writes it.  @return the offset of the first such byte, or len; *ret_what
 * is then NULL for bad UTF-8, else what is wrong with the escape there.
 */
static size_t find_bad_text(const char *buf, size_t len, const char **ret_what)
{
	const unsigned char *u = (const unsigned char *)buf;
	bool in_string = false;
	size_t i = 0;
	uint64_t w;

	/* Most texts are ASCII without a backslash: nothing in them can be
	 * bad, and they need not be walked quote by quote (the store's 126 KB
	 * at 500 records cost 1.9 M instructions that way). */
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, u + i, sizeof(w));
		if ((w & 0x8080808080808080u) != 0 || word_has_zero(w ^ 0x5c5c5c5c5c5c5c5cu))
			break;
	}
	while (i < len && u[i] < 0x80 && u[i] != '\\')
		i++;
	if (i == len)
		return len;

	for (i = 0; i < len;) {
		size_t n;
		long cp, low;

		/* the common bytes, plain ASCII text, start and end nothing */
		i = skip_plain(u, i, len);
		if (i == len)
			break;
		n = utf8_sequence_in(u + i, len - i);
		if (n == 0) {
			*ret_what = NULL; /* a UTF-8 problem */
			return i;
		}
		if (buf[i] == '"') {
			in_string = !in_string;
		} else if (in_string && buf[i] == '\\' && i + 1 < len) {
			if (buf[i + 1] != 'u') {
				i += 2; /* \" and \\ do not end or start anything */
				continue;
			}
			cp = hex4(buf + i + 2, len - i - 2);
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				*ret_what = "lone UTF-16 surrogate escape";
				return i;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				low = i + 11 < len && buf[i + 6] == '\\' && buf[i + 7] == 'u'
					      ? hex4(buf + i + 8, len - i - 8)
					      : -1;
				if (low < 0xdc00 || low > 0xdfff) {
					*ret_what = "lone UTF-16 surrogate escape";
					return i;
				}
				i += 12;
				continue;
			}
			i += 2;
			continue;
		}
		i += n;
	}
	return len;
}

/* A yajl handle for cb/ctx in *ret_h, configured strictly (RFC 8259,
 * spelled out although these are yajl's defaults), run over the whole
 * text.  *ret_pos is where it stopped: the byte yajl failed at, or len
 * when the text ended early.  @return 0; -EINVAL when yajl refused the
 * text (or a callback stopped it); -ENOTSUP when yajl could not be
 * configured; -ENOMEM when no handle could be made. */
static int run_yajl(const yajl_callbacks *cb, void *ctx, const char *buf, size_t len,
		    yajl_handle *ret_h, size_t *ret_pos)
{
	yajl_handle h = yajl_alloc(cb, NULL, ctx);
	yajl_status st;
	size_t pos;

	*ret_h = h;
	*ret_pos = 0;
	if (h == NULL)
		return -ENOMEM;
	if (!yajl_config(h, yajl_allow_comments, 0) ||
	    !yajl_config(h, yajl_dont_validate_strings, 0) ||
	    !yajl_config(h, yajl_allow_trailing_garbage, 0) ||
	    !yajl_config(h, yajl_allow_multiple_values, 0) ||
	    !yajl_config(h, yajl_allow_partial_values, 0))
		return -ENOTSUP;
	st = yajl_parse(h, (const unsigned char *)buf, len);
	/* yajl reports the offset just past the byte where it stopped */
	pos = yajl_get_bytes_consumed(h);
	pos = pos > 0 ? pos - 1 : 0;
	if (st == yajl_status_ok) {
		st = yajl_complete_parse(h);
		pos = len; /* whatever fails now fails at the end of the text */
	}
	*ret_pos = pos;
	return st == yajl_status_ok ? 0 : -EINVAL;
}

int ts_json_parse(const char *buf, size_t len, const char *filename, struct ts_json **ret,
		  struct ts_error **err)
{
	cleanup_yajl_handle yajl_handle h = NULL;
	struct parse_ctx ctx = {0};
	const char *bad = NULL;
	size_t pos;
	int r;

	if (filename == NULL)
		filename = "<json>";
	if (buf == NULL || is_blank(buf, len))
		return ts_error_set(err, 0, "%s: empty document", filename);
	pos = find_bad_text(buf, len, &bad);
	if (pos < len) {
		size_t line, col;

		offset_to_line_col(buf, pos, &line, &col);
		if (bad == NULL)
			return ts_error_set(err, 0,
					    "%s: line %zu column %zu: invalid UTF-8 byte 0x%02x "
					    "(malformed, overlong or surrogate sequence)",
					    filename, line, col, (unsigned char)buf[pos]);
		return ts_error_set(err, 0, "%s: line %zu column %zu: %s '%.6s'", filename, line,
				    col, bad, buf + pos);
	}
	r = run_yajl(&parse_callbacks, &ctx, buf, len, &h, &pos);
	if (r == -ENOMEM)
		return ts_error_set(err, ENOMEM, "%s: cannot parse", filename);
	if (r == -ENOTSUP)
		return ts_error_set(err, 0, "%s: cannot configure the yajl parser", filename);
	if (r < 0) {
		r = parse_error(h, &ctx, buf, len, pos, filename, err);
		free(ctx.key);
		ts_json_free(ctx.root);
		return r;
	}
	free(ctx.key);
	*ret = ctx.root;
	return 0;
}

/* ts_json_parse_events(): the caller's callbacks behind the limits
 * ts_json_parse() keeps (NUL in strings, nesting depth). */
struct events_ctx {
	const struct ts_json_events *ev;
	void *ctx;
	yajl_handle h; /* for the offsets */
	size_t depth;
	bool stopped; /* a callback said stop */
};

static int ev_null(void *c)
{
	struct events_ctx *e = c;

	if (e->ev->null == NULL || e->ev->null(e->ctx))
		return 1;
	e->stopped = true;
	return 0;
}

static int ev_boolean(void *c, int v)
{
	struct events_ctx *e = c;

	if (e->ev->boolean == NULL || e->ev->boolean(e->ctx, v != 0))
		return 1;
	e->stopped = true;
	return 0;
}

static int ev_number(void *c, const char *s, size_t len)
{
	struct events_ctx *e = c;

	if (e->ev->number == NULL || e->ev->number(e->ctx, s, len))
		return 1;
	e->stopped = true;
	return 0;
}

static int ev_text(struct events_ctx *e, bool (*cb)(void *, const char *, size_t),
		   const unsigned char *s, size_t len)
{
	if (memchr(s, '\0', len) != NULL)
		return 0; /* refused, as ts_json_parse() refuses it */
	if (cb == NULL || cb(e->ctx, (const char *)s, len))
		return 1;
	e->stopped = true;
	return 0;
}

static int ev_string(void *c, const unsigned char *s, size_t len)
{
	struct events_ctx *e = c;

	return ev_text(e, e->ev->string, s, len);
}

static int ev_key(void *c, const unsigned char *s, size_t len)
{
	struct events_ctx *e = c;

	return ev_text(e, e->ev->map_key, s, len);
}

static int ev_open(struct events_ctx *e, bool (*cb)(void *))
{
	if (e->depth == TS_JSON_MAX_DEPTH)
		return 0;
	e->depth++;
	if (cb == NULL || cb(e->ctx))
		return 1;
	e->stopped = true;
	return 0;
}

static int ev_close(struct events_ctx *e, bool (*cb)(void *))
{
	e->depth--;
	if (cb == NULL || cb(e->ctx))
		return 1;
	e->stopped = true;
	return 0;
}

/* The offset of the token yajl just read: it counts the bytes consumed
 * through that token, whitespace before it included. */
static void ev_offset(struct events_ctx *e)
{
	if (e->ev->offset != NULL && e->h != NULL)
		*e->ev->offset = yajl_get_bytes_consumed(e->h) - 1;
}

static int ev_start_map(void *c)
{
	struct events_ctx *e = c;

	ev_offset(e);
	return ev_open(e, e->ev->start_map);
}

static int ev_end_map(void *c)
{
	struct events_ctx *e = c;

	ev_offset(e);
	return ev_close(e, e->ev->end_map);
}

static int ev_start_array(void *c)
{
	struct events_ctx *e = c;

	return ev_open(e, e->ev->start_array);
}

static int ev_end_array(void *c)
{
	struct events_ctx *e = c;

	return ev_close(e, e->ev->end_array);
}

static const yajl_callbacks event_callbacks = {
	.yajl_null = ev_null,
	.yajl_boolean = ev_boolean,
	.yajl_number = ev_number,
	.yajl_string = ev_string,
	.yajl_start_map = ev_start_map,
	.yajl_map_key = ev_key,
	.yajl_end_map = ev_end_map,
	.yajl_start_array = ev_start_array,
	.yajl_end_array = ev_end_array,
};

int ts_json_parse_events(const char *buf, size_t len, const struct ts_json_events *ev, void *ctx)
{
	struct events_ctx e = {.ev = ev, .ctx = ctx};
	const char *bad = NULL;
	size_t pos;
	int r;

	if (buf == NULL || is_blank(buf, len) || find_bad_text(buf, len, &bad) < len)
		return -EINVAL;
	/* the handle is in e before the first callback (run_yajl() sets it
	 * first) */
	r = run_yajl(&event_callbacks, &e, buf, len, &e.h, &pos);
	if (e.h != NULL)
		yajl_free(e.h);
	if (r == 0 || r == -ENOMEM)
		return r;
	return e.stopped ? -ECANCELED : -EINVAL;
}

/* ---- serialising ---------------------------------------------------------------------------- */

/* JSON number grammar (RFC 8259 section 6): -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)? */
static bool is_json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (*s < '0' || *s > '9')
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

/* Grow the JSON pointer of a failing node as the recursion unwinds: "/a/0/b". */
static void path_prepend(char **path, const char *key, size_t index)
{
	cleanup_free char *esc = NULL;
	char *p = NULL;
	int r;

	if (key != NULL) {
		esc = ts_json_pointer_escape(key);
		if (esc == NULL)
			return;
		r = asprintf(&p, "/%s%s", esc, *path ? *path : "");
	} else {
		r = asprintf(&p, "/%zu%s", index, *path ? *path : "");
	}
	if (r < 0)
		return;
	free(*path);
	*path = p;
}

struct gen_ctx {
	yajl_gen g;
	char *path;	    /* JSON pointer of the failing node */
	const char *reason; /* what is wrong with it */
	const char *value;  /* the offending number's text, for the message */
	int errnum;
};

static int gen_fail(struct gen_ctx *ctx, yajl_gen_status st, const char *invalid_reason)
{
	if (st == yajl_gen_status_ok)
		return 0;
	if (st == yajl_gen_invalid_string) {
		ctx->reason = invalid_reason;
	} else if (st == yajl_max_depth_exceeded) {
		ctx->reason = "nesting deeper than " TS_JSON_STRINGIFY(TS_JSON_MAX_DEPTH) " levels";
	} else {
		ctx->reason = "internal generator error";
	}
	return -1;
}

static int gen_value(struct gen_ctx *ctx, const struct ts_json *j);

static int gen_container(struct gen_ctx *ctx, const struct ts_json *j)
{
	bool obj = j->type == TS_JSON_OBJECT;
	size_t len = obj ? j->u.object.len : j->u.array.len;
	yajl_gen_status st;

	/* yajl_gen_beautify writes an empty container over three lines; emit it as one atom */
	if (len == 0)
		return gen_fail(ctx, yajl_gen_number(ctx->g, obj ? "{}" : "[]", 2), NULL);
	st = obj ? yajl_gen_map_open(ctx->g) : yajl_gen_array_open(ctx->g);
	if (gen_fail(ctx, st, NULL) < 0)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (obj) {
			const char *key = j->u.object.keys[i];

			st = yajl_gen_string(ctx->g, (const unsigned char *)key, strlen(key));
			/* the path stops at the object: an invalid key must not reach a log line */
			if (gen_fail(ctx, st, "key is not valid UTF-8") < 0)
				return -1;
		}
		if (gen_value(ctx, obj ? j->u.object.values[i] : j->u.array.items[i]) < 0) {
			path_prepend(&ctx->path, obj ? j->u.object.keys[i] : NULL, i);
			return -1;
		}
	}
	st = obj ? yajl_gen_map_close(ctx->g) : yajl_gen_array_close(ctx->g);
	return gen_fail(ctx, st, NULL);
}

static int gen_value(struct gen_ctx *ctx, const struct ts_json *j)
{
	if (j == NULL) {
		ctx->reason = "missing value";
		return -1;
	}
	switch (j->type) {
	case TS_JSON_NULL:
		return gen_fail(ctx, yajl_gen_null(ctx->g), NULL);
	case TS_JSON_BOOL:
		return gen_fail(ctx, yajl_gen_bool(ctx->g, j->u.boolean), NULL);
	case TS_JSON_NUMBER:
		if (j->u.number == NULL || !is_json_number(j->u.number)) {
			ctx->reason = "invalid number";
			ctx->value = j->u.number != NULL ? j->u.number : "";
			return -1;
		}
		return gen_fail(ctx, yajl_gen_number(ctx->g, j->u.number, strlen(j->u.number)),
				NULL);
	case TS_JSON_STRING:
		return gen_fail(ctx,
				yajl_gen_string(ctx->g, (const unsigned char *)j->u.string,
						strlen(j->u.string)),
				"string is not valid UTF-8");
	case TS_JSON_ARRAY:
	case TS_JSON_OBJECT:
		return gen_container(ctx, j);
	default:
		ctx->reason = "invalid node type";
		return -1;
	}
}

static int gen_error(struct gen_ctx *ctx, struct ts_error **err)
{
	const char *path = ctx->path != NULL ? ctx->path : "";

	if (ctx->errnum != 0)
		return ts_error_set(err, ctx->errnum, "cannot serialise JSON");
	if (ctx->value != NULL)
		return ts_error_set(err, 0, "cannot serialise JSON: '%s': %s '%s'", path,
				    ctx->reason, ctx->value);
	return ts_error_set(err, 0, "cannot serialise JSON: '%s': %s", path, ctx->reason);
}

int ts_json_serialize(const struct ts_json *j, bool pretty, char **ret_buf, size_t *ret_len,
		      struct ts_error **err)
{
	cleanup_yajl_gen yajl_gen g = NULL;
	struct gen_ctx ctx = {0};
	const unsigned char *out;
	size_t out_len;
	char *copy;
	int r;

	g = yajl_gen_alloc(NULL);
	if (g == NULL)
		return ts_error_set(err, ENOMEM, "cannot serialise JSON");
	if (!yajl_gen_config(g, yajl_gen_validate_utf8, 1) ||
	    !yajl_gen_config(g, yajl_gen_beautify, pretty ? 1 : 0) ||
	    (pretty && !yajl_gen_config(g, yajl_gen_indent_string, "    ")))
		return ts_error_set(err, 0, "cannot configure yajl_gen");
	ctx.g = g;
	if (gen_value(&ctx, j) < 0) {
		r = gen_error(&ctx, err);
		free(ctx.path);
		return r;
	}
	if (yajl_gen_get_buf(g, &out, &out_len) != yajl_gen_status_ok)
		return ts_error_set(err, 0, "cannot serialise JSON: incomplete document");
	copy = malloc(out_len + 1);
	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "cannot serialise JSON");
	memcpy(copy, out, out_len);
	copy[out_len] = '\0';
	*ret_buf = copy;
	if (ret_len != NULL)
		*ret_len = out_len;
	return 0;
}

/* The same for a NUL-terminated s (a NUL is never a continuation byte). */
static size_t utf8_sequence(const unsigned char *s)
{
	return utf8_sequence_in(s, 4);
}

char *ts_json_utf8_sanitize(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;

	if (s == NULL)
		return NULL;
	/* each invalid byte becomes the 3-byte U+FFFD */
	out = malloc(strlen(s) * 3 + 1);
	if (out == NULL)
		return NULL;
	o = out;
	while (*p != '\0') {
		size_t n = utf8_sequence(p);

		if (n == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p++;
			continue;
		}
		memcpy(o, p, n);
		o += n;
		p += n;
	}
	*o = '\0';
	return out;
}
