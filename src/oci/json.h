/*
 * json.h - an editable JSON document tree, parsed and written with yajl.
 *
 * The tree keeps what an OCI runtime needs to see unchanged after a rewrite:
 *  - object keys in document order (duplicates are kept as they are);
 *  - numbers as their raw text ("18446744073709551615", "-1", "1e3"), so a
 *    value that does not fit a C integer round-trips byte-exact;
 *  - unknown keys of every object.
 * It is the one representation of JSON inside toposhim: config.json, the
 * toposhim config file, CDI spec files (YAML specs are converted to it by the
 * cdi module) and plugin requests/results.  Only this module includes yajl.
 *
 * Ownership: every node owns its children.  Setters and appenders take
 * ownership of the node they are given, also when they fail.  Getters return
 * borrowed pointers valid until the parent is modified or freed.
 *
 * Implements: RFC 8259 (JSON) as yajl 2.1 accepts it (no comments, UTF-8
 * validated).
 */
#ifndef TS_OCI_JSON_H
#define TS_OCI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

enum ts_json_type {
	TS_JSON_NULL,
	TS_JSON_BOOL,
	TS_JSON_NUMBER,
	TS_JSON_STRING,
	TS_JSON_ARRAY,
	TS_JSON_OBJECT,
	_TS_JSON_TYPE_MAX,
	TS_JSON_TYPE_INVALID = -22, /* -EINVAL */
};

struct ts_json {
	enum ts_json_type type;
	union {
		bool boolean;
		char *number; /* raw text as written in the document */
		char *string; /* NUL-terminated UTF-8 (embedded NULs are refused) */
		struct {
			struct ts_json **items;
			size_t len, cap;
		} array;
		struct {
			char **keys;
			struct ts_json **values;
			size_t len, cap;
		} object;
	} u;
};

/* Iterate an array: for (size_t i ...) with `item` bound to each element. */
#define ts_json_array_foreach(arr, i, item)                                                       \
	for ((i) = 0; (arr) != NULL && (arr)->type == TS_JSON_ARRAY && (i) < (arr)->u.array.len && \
		      (((item) = (arr)->u.array.items[(i)]), 1);                                   \
	     (i)++)

/* Iterate an object's members in document order. */
#define ts_json_object_foreach(obj, i, key, val)                                                   \
	for ((i) = 0; (obj) != NULL && (obj)->type == TS_JSON_OBJECT &&                            \
		      (i) < (obj)->u.object.len &&                                                 \
		      (((key) = (obj)->u.object.keys[(i)]), ((val) = (obj)->u.object.values[(i)]),   \
		       1);                                                                         \
	     (i)++)

/**
 * Parse a JSON text.
 * @param[in]  buf       the text; need not be NUL-terminated.
 * @param[in]  len       its length in bytes.
 * @param[in]  filename  name used in error messages (e.g. "config.json").
 * @param[out] ret       the root; caller frees with ts_json_free().
 * @param[out] err       set iff the return value is negative.
 * @return 0; -EINVAL on a syntax error, with the message
 *         "<filename>: line L column C: <yajl's reason>" (1-based); -EINVAL
 *         "<filename>: empty document" for an empty/whitespace-only text;
 *         -ENOMEM.
 */
int ts_json_parse(const char *buf, size_t len, const char *filename, struct ts_json **ret,
		  struct ts_error **err);

/**
 * Serialise a tree.
 * @param[in]  j        the root; borrowed.
 * @param[in]  pretty   true: one member per line, indented by 4 spaces
 *                      (yajl_gen_beautify); false: one compact line.
 * @param[out] ret_buf  NUL-terminated text (a trailing '\n' when pretty);
 *                      caller frees.
 * @param[out] ret_len  its length without the NUL; may be NULL.
 * @return 0; -EINVAL when the tree holds a number whose raw text is not a
 *         JSON number or a string that is not valid UTF-8; -ENOMEM.
 */
int ts_json_serialize(const struct ts_json *j, bool pretty, char **ret_buf, size_t *ret_len,
		      struct ts_error **err);

/** Free a tree (NULL accepted). @return NULL. */
struct ts_json *ts_json_free(struct ts_json *j);

/** Deep copy. @return the copy (caller frees), or NULL on OOM. */
struct ts_json *ts_json_dup(const struct ts_json *j);

/** Structural equality (numbers compared by raw text, key order significant). */
bool ts_json_equal(const struct ts_json *a, const struct ts_json *b);

/* Constructors: return a new node the caller owns, or NULL on OOM (or on a
 * NULL string argument).  ts_json_new_number_raw() does not validate. */
struct ts_json *ts_json_new_null(void);
struct ts_json *ts_json_new_bool(bool v);
struct ts_json *ts_json_new_int(int64_t v);
struct ts_json *ts_json_new_uint(uint64_t v);
struct ts_json *ts_json_new_number_raw(const char *raw);
struct ts_json *ts_json_new_string(const char *s);
struct ts_json *ts_json_new_string_len(const char *s, size_t len);
struct ts_json *ts_json_new_array(void);
struct ts_json *ts_json_new_object(void);

/** Name of a type for messages: "null", "boolean", "number", "string", "array", "object". */
const char *ts_json_type_name(enum ts_json_type t);

/**
 * Member of an object.
 * @return the value of the *last* member named key (as Go's encoding/json
 *         and runc do), borrowed; NULL if obj is NULL, not an object, or has
 *         no such key.
 */
struct ts_json *ts_json_get(const struct ts_json *obj, const char *key);

/**
 * Follow a path of object keys: ts_json_get_path(root, "linux", "resources",
 * "cpu", NULL).  @return the value, borrowed, or NULL when any step is missing
 * or not an object.
 */
struct ts_json *ts_json_get_path(const struct ts_json *root, ...) __attribute__((sentinel));

/** Type-checked getters: NULL unless the member exists with that type. */
const char *ts_json_get_string(const struct ts_json *obj, const char *key);
struct ts_json *ts_json_get_array(const struct ts_json *obj, const char *key);
struct ts_json *ts_json_get_object(const struct ts_json *obj, const char *key);

/**
 * Set obj[key] = value.  An existing member keeps its position and is
 * replaced (all duplicates of it but the last are removed); a new one is
 * appended.  Takes ownership of value, also on failure.
 * @return 0; -EINVAL if obj is not an object or value is NULL (an earlier
 *         constructor ran out of memory: reported as -ENOMEM); -ENOMEM.
 */
int ts_json_object_set(struct ts_json *obj, const char *key, struct ts_json *value,
		       struct ts_error **err);

/**
 * Get obj[key] if it exists with the given type, else create it (an empty
 * object/array) at the end of obj.
 * @param[in] what  path of obj for the message, e.g. "config.json: '/linux'".
 * @return the member, borrowed; NULL with *err set (-EINVAL: the member exists
 *         with another type, message "<what>/<key>': expected <type>, got
 *         <type>"; -ENOMEM).
 */
struct ts_json *ts_json_object_ensure(struct ts_json *obj, const char *key,
				      enum ts_json_type type, const char *what,
				      struct ts_error **err);

/** Remove every member named key. @return how many were removed (0 if none). */
size_t ts_json_object_remove(struct ts_json *obj, const char *key);

/**
 * Append value to arr; takes ownership of value, also on failure.
 * @return 0; -EINVAL if arr is not an array or value is NULL; -ENOMEM.
 */
int ts_json_array_append(struct ts_json *arr, struct ts_json *value, struct ts_error **err);

/**
 * Insert value at index (0 ≤ index ≤ len); takes ownership of value.
 * @return 0; -EINVAL (not an array, index out of range, NULL value); -ENOMEM.
 */
int ts_json_array_insert(struct ts_json *arr, size_t index, struct ts_json *value,
			 struct ts_error **err);

/**
 * Replace arr[index] (freeing the old element); takes ownership of value.
 * @return 0; -EINVAL (not an array, index out of range, NULL value).
 */
int ts_json_array_replace(struct ts_json *arr, size_t index, struct ts_json *value,
			  struct ts_error **err);

/** Remove and free arr[index]; does nothing if out of range. */
void ts_json_array_remove(struct ts_json *arr, size_t index);

/** Remove arr[index] without freeing it. @return it (caller owns) or NULL. */
struct ts_json *ts_json_array_take(struct ts_json *arr, size_t index);

/**
 * Read a number as an integer.
 * @return 0 and *ret set; -EINVAL if j is not a number, or its raw text is
 *         not an integer (fraction or exponent); -ERANGE if it does not fit.
 *         No error object: callers name the file and field.
 */
int ts_json_get_int64(const struct ts_json *j, int64_t *ret);
int ts_json_get_uint64(const struct ts_json *j, uint64_t *ret);

static inline void ts_json_freep(struct ts_json **j)
{
	*j = ts_json_free(*j);
}
#define cleanup_json __attribute__((cleanup(ts_json_freep)))

#endif
