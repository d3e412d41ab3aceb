/* json-diff.c - what changed between two JSON values, and its undo; see json.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/json.h"
#include "util/cleanup.h"

/* Whether obj's member at index i is the last one with its key (the one
 * ts_json_get() reads). */
static bool last_of_key(const struct ts_json *obj, size_t i)
{
	for (size_t j = i + 1; j < obj->u.object.len; j++)
		if (strcmp(obj->u.object.keys[j], obj->u.object.keys[i]) == 0)
			return false;
	return true;
}

static int append_entry(const struct ts_json *before, const struct ts_json *after,
			const char *pointer, struct ts_json *ret, struct ts_error **err)
{
	struct ts_json *e = ts_json_new_object();
	int r;

	if (e == NULL)
		return ts_error_set(err, ENOMEM, "json diff");
	r = ts_json_array_append(ret, e, err);
	if (r >= 0)
		r = ts_json_object_set(e, "pointer", ts_json_new_string(pointer), err);
	if (r >= 0 && before != NULL)
		r = ts_json_object_set(e, "before", ts_json_dup(before), err);
	if (r >= 0 && after != NULL)
		r = ts_json_object_set(e, "after", ts_json_dup(after), err);
	return r < 0 ? r : 1;
}

/* The member key of before and after, at "<pointer>/<key>". */
static int diff_member(const struct ts_json *before, const struct ts_json *after, const char *key,
		       const char *pointer, struct ts_json *ret, struct ts_error **err)
{
	const struct ts_json *b = ts_json_get(before, key), *a = ts_json_get(after, key);
	cleanup_free char *esc = NULL, *child = NULL;

	/* most members are the same: no pointer made for them */
	if (ts_json_equal(b, a))
		return 0;
	esc = ts_json_pointer_escape(key);
	if (esc == NULL || asprintf(&child, "%s/%s", pointer, esc) < 0) {
		child = NULL;
		return ts_error_set(err, ENOMEM, "json diff");
	}
	return ts_json_diff(b, a, child, ret, err);
}

int ts_json_diff(const struct ts_json *before, const struct ts_json *after, const char *pointer,
		 struct ts_json *ret, struct ts_error **err)
{
	const struct ts_json *v __attribute__((unused));
	const char *key;
	int n = 0, r;
	size_t i;

	if (ret == NULL || ret->type != TS_JSON_ARRAY)
		return ts_error_set(err, EINVAL, "json diff: expected array");
	if (before == NULL && after == NULL)
		return 0;
	if (before == NULL || after == NULL || before->type != TS_JSON_OBJECT ||
	    after->type != TS_JSON_OBJECT)
		return ts_json_equal(before, after)
			       ? 0
			       : append_entry(before, after, pointer, ret, err);
	ts_json_object_foreach (before, i, key, v) {
		if (!last_of_key(before, i))
			continue;
		r = diff_member(before, after, key, pointer, ret, err);
		if (r < 0)
			return r;
		n += r;
	}
	ts_json_object_foreach (after, i, key, v) {
		if (!last_of_key(after, i) || ts_json_get(before, key) != NULL)
			continue;
		r = diff_member(NULL, after, key, pointer, ret, err);
		if (r < 0)
			return r;
		n += r;
	}
	return n;
}

/* The reference tokens of a JSON pointer, unescaped, in a vector; NULL for
 * a pointer that is none (or the root), *oom set when memory ran out. */
static char **pointer_tokens(const char *pointer, size_t *ret_n, bool *oom)
{
	size_t n = 0;
	char **tokens;

	*oom = false;
	if (pointer == NULL || pointer[0] != '/')
		return NULL;
	for (const char *c = pointer; *c != '\0'; c++)
		n += *c == '/';
	tokens = calloc(n + 1, sizeof(*tokens));
	if (tokens == NULL) {
		*oom = true;
		return NULL;
	}
	const char *c = pointer + 1;
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(c, "/"), k = 0;
		char *t = malloc(len + 1);

		tokens[i] = t;
		if (t == NULL) {
			*oom = true;
			goto fail;
		}
		for (size_t j = 0; j < len; j++) {
			if (c[j] != '~') {
				t[k++] = c[j];
				continue;
			}
			if (j + 1 >= len || (c[j + 1] != '0' && c[j + 1] != '1'))
				goto fail;
			t[k++] = c[++j] == '0' ? '~' : '/';
		}
		t[k] = '\0';
		c += len + (c[len] == '/');
	}
	*ret_n = n;
	return tokens;
fail:
	ts_strv_freep(&tokens);
	return NULL;
}

int ts_json_undo_entry(struct ts_json *root, const struct ts_json *entry)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_strv char **tokens = NULL;
	const struct ts_json *before, *after;
	struct ts_json *parent = root, *current;
	size_t n = 0;
	bool oom;

	if (root == NULL || root->type != TS_JSON_OBJECT || entry == NULL ||
	    entry->type != TS_JSON_OBJECT)
		return 0;
	tokens = pointer_tokens(ts_json_get_string(entry, "pointer"), &n, &oom);
	if (tokens == NULL)
		return oom ? -ENOMEM : 0;
	before = ts_json_get(entry, "before");
	after = ts_json_get(entry, "after");
	/* the value now; a missing object on the way: none */
	for (size_t i = 0; i + 1 < n && parent != NULL; i++) {
		parent = ts_json_get(parent, tokens[i]);
		if (parent != NULL && parent->type != TS_JSON_OBJECT)
			return 0;
	}
	current = parent != NULL ? ts_json_get(parent, tokens[n - 1]) : NULL;
	if (!ts_json_equal(current, after))
		return 0;
	if (before == NULL) {
		if (parent == NULL || current == NULL)
			return 0;
		ts_json_object_remove(parent, tokens[n - 1]);
		return 1;
	}
	parent = root;
	for (size_t i = 0; i + 1 < n; i++) {
		parent = ts_json_object_ensure(parent, tokens[i], TS_JSON_OBJECT, NULL, &err);
		if (parent == NULL)
			return -ENOMEM; /* every value on the way is an object or none */
	}
	if (ts_json_object_set(parent, tokens[n - 1], ts_json_dup(before), &err) < 0)
		return -ENOMEM;
	return 1;
}
