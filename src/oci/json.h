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
 * Limits: strings holding NUL ("\u0000") and nesting deeper than
 * TS_JSON_MAX_DEPTH are refused by the parser, so every parsed tree can be
 * written again and walked recursively.
 *
 * Implements: RFC 8259 (JSON) as yajl 2.1 accepts it (no comments, one
 * top-level value), with strict RFC 3629 UTF-8 and paired surrogate escapes
 * (RFC 8259 section 8.2); RFC 6901 (JSON Pointer) reference
 * tokens for the field paths in error messages; RFC 3629 (UTF-8) in
 * ts_json_utf8_sanitize().
 */
#ifndef TS_OCI_JSON_H
#define TS_OCI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

/* Deepest nesting of arrays/objects that ts_json_parse() accepts; deeper
 * documents are refused rather than overflowing the stack or yajl_gen. */
#define TS_JSON_MAX_DEPTH 100

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
#define ts_json_array_foreach(arr, i, item)                                                        \
	for ((i) = 0; (arr) != NULL && (arr)->type == TS_JSON_ARRAY && (i) < (arr)->u.array.len && \
		      (((item) = (arr)->u.array.items[(i)]), 1);                                   \
	     (i)++)

/* Iterate an object's members in document order. */
#define ts_json_object_foreach(obj, i, key, val)                                              \
	for ((i) = 0;                                                                         \
	     (obj) != NULL && (obj)->type == TS_JSON_OBJECT && (i) < (obj)->u.object.len &&   \
	     (((key) = (obj)->u.object.keys[(i)]), ((val) = (obj)->u.object.values[(i)]), 1); \
	     (i)++)

/**
 * What ts_json_parse_events() calls for each token, in document order.
 * Each returns true to go on, false to stop the parse.  Strings and keys
 * are their decoded bytes: len bytes, not NUL-terminated, never holding a
 * NUL; numbers are their raw text as written.  Every member may be NULL
 * (the token is then skipped).
 */
struct ts_json_events {
	bool (*null)(void *ctx);
	bool (*boolean)(void *ctx, bool v);
	bool (*number)(void *ctx, const char *raw, size_t len);
	bool (*string)(void *ctx, const char *s, size_t len);
	bool (*start_map)(void *ctx);
	bool (*map_key)(void *ctx, const char *s, size_t len);
	bool (*end_map)(void *ctx);
	bool (*start_array)(void *ctx);
	bool (*end_array)(void *ctx);
	/* When non-NULL: set, before start_map and end_map are called, to the
	 * offset in the text of the '{' or '}' (state/format.c keeps where
	 * each record's text is, to copy it when it writes the file again). */
	size_t *offset;
};

/**
 * Walk a JSON text without building a tree: the tokens go to ev, for a
 * reader that decodes straight into its own structures (state/format.c
 * reads allocations.json this way at every create).  The text is held to
 * exactly the rules of ts_json_parse() (the same byte checks, NUL and
 * nesting limits, strict yajl), so a text this accepts parses there too;
 * it says no more than that a text is refused: parse it with
 * ts_json_parse() for the message.
 * @param[in] buf, len  the text (len bytes, need not be NUL-terminated).
 * @param[in] ev, ctx   the callbacks and what they get as ctx.
 * @return 0 when the whole text was valid and every callback went on;
 *         -ECANCELED when a callback stopped it; -EINVAL when the text is
 *         empty or not valid as ts_json_parse() defines it; -ENOMEM.
 */
int ts_json_parse_events(const char *buf, size_t len, const struct ts_json_events *ev, void *ctx);

/**
 * Parse a JSON text.
 * @param[in]  buf       the text; need not be NUL-terminated, only len bytes are read.
 * @param[in]  len       its length in bytes.
 * @param[in]  filename  name used in error messages (e.g. "config.json"); NULL
 *                       is written as "<json>".
 * @param[out] ret       the root; caller frees with ts_json_free().  Untouched
 *                       on failure.
 * @param[out] err       set iff the return value is negative.
 * @return 0; -EINVAL on a syntax error, with the message
 *         "<filename>: line L column C: <yajl's reason>" (1-based, columns
 *         count bytes; the position is the byte where yajl stopped, or the end
 *         of the text when the text ends early; yajl's trailing ".\n" is
 *         dropped), e.g. "config.json: line 1 column 7: lexical error:
 *         invalid char in json text"; the same shape with the reason "strings
 *         must not contain NUL (\u0000)" for a "\u0000" escape in a string or
 *         key, and "nesting deeper than 100 levels" beyond TS_JSON_MAX_DEPTH;
 *         -EINVAL "<filename>: empty document" for an empty/whitespace-only
 *         text; -EINVAL "<filename>: line L column C: invalid UTF-8 byte
 *         0xc0 (malformed, overlong or surrogate sequence)" for text that is
 *         not RFC 3629 UTF-8, and "...: lone UTF-16 surrogate escape
 *         '\ud800'" for a \u escape of a surrogate without its pair (yajl
 *         accepts both, as bytes and as '?'; runc's Go decoder reads U+FFFD:
 *         refused so that toposhim, runc and crun never read different
 *         values; Go engines never write either); -ENOMEM "<filename>:
 *         cannot parse".  Comments, several top-level values and trailing
 *         garbage are refused.
 */
int ts_json_parse(const char *buf, size_t len, const char *filename, struct ts_json **ret,
		  struct ts_error **err);

/**
 * Serialise a tree.  Numbers are written as their raw text, strings with
 * JSON escapes for '"', '\\' and control characters only (no "\/", UTF-8
 * written as is); an empty object or array is written "{}" / "[]".
 * @param[in]  j        the root; borrowed.
 * @param[in]  pretty   true: one member per line, indented by 4 spaces
 *                      (yajl_gen_beautify), "key": value; false: one
 *                      compact line without spaces.
 * @param[out] ret_buf  NUL-terminated text (a trailing '\n' when pretty,
 *                      none when compact); caller frees.  Untouched on failure.
 * @param[out] ret_len  its length without the NUL; may be NULL.
 * @return 0; -EINVAL "cannot serialise JSON: '<json pointer>': invalid number
 *         '<raw>'" when a number's raw text is not a JSON number, "...: string
 *         is not valid UTF-8", "...: key is not valid UTF-8" (pointer of the
 *         object holding the key), "...: nesting deeper than 100 levels" (a
 *         built tree deeper than yajl_gen allows); -ENOMEM.
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
 * @return 0; -EINVAL "cannot set '<key>': expected object, got <type>" if obj
 *         is not an object; -ENOMEM "cannot set '<key>'" if value is NULL (an
 *         earlier constructor ran out of memory) or memory runs out.
 */
int ts_json_object_set(struct ts_json *obj, const char *key, struct ts_json *value,
		       struct ts_error **err);

/**
 * Get obj[key] if it exists with the given type, else create it (an empty
 * object/array) at the end of obj.  With duplicate keys the last one counts.
 * @param[in] what  location of obj for messages: file, then the JSON pointer
 *                  in single quotes, e.g. "config.json: '/linux'" ("config.json: ''"
 *                  for the root), and the key is put inside the closing quote;
 *                  or the same with the quote left open ("config.json: '/linux",
 *                  "config.json: '" for the root), and "/key'" is appended.
 *                  NULL is written as "''".
 * @return the member, borrowed; NULL with *err set: -EINVAL when the member
 *         exists with another type, e.g. "config.json: '/linux/resources':
 *         expected object, got array" (key escaped as a JSON pointer token:
 *         '/' -> "~1", '~' -> "~0"); -EINVAL "<what>: expected object, got
 *         <type>" when obj is not an object (an open quote closed); -EINVAL when a missing member
 *         would have to be a scalar (only containers are created); -ENOMEM.
 */
struct ts_json *ts_json_object_ensure(struct ts_json *obj, const char *key, enum ts_json_type type,
				      const char *what, struct ts_error **err);

/**
 * Append the member key: value at the end of obj without looking for an
 * existing one (a duplicate is kept, as the parser keeps one): O(1), for
 * converters that check duplicates once with ts_json_object_find_duplicate().
 * Takes ownership of value, also on failure.
 * @return 0; -EINVAL "cannot append '<key>': expected object, got <type>";
 *         -ENOMEM "cannot append '<key>'" (NULL value, OOM).
 */
int ts_json_object_append(struct ts_json *obj, const char *key, struct ts_json *value,
			  struct ts_error **err);

/**
 * Find a repeated key in O(n log n) (sorting a copy of the keys), for
 * objects too large for a pairwise comparison.
 * @param[out] ret_index  the index of the first member, in document order,
 *                        whose key an earlier member has; written only when
 *                        one is found.
 * @return 1 found; 0 none (or obj is not an object); -ENOMEM.
 */
int ts_json_object_find_duplicate(const struct ts_json *obj, size_t *ret_index);

/** Remove every member named key. @return how many were removed (0 if none). */
size_t ts_json_object_remove(struct ts_json *obj, const char *key);

/**
 * Append value to arr; takes ownership of value, also on failure.
 * @return 0; -EINVAL "cannot append: expected array, got <type>"; -ENOMEM
 *         "cannot append" when value is NULL or memory runs out.
 */
int ts_json_array_append(struct ts_json *arr, struct ts_json *value, struct ts_error **err);

/**
 * Insert value at index (0 ≤ index ≤ len); takes ownership of value, also on failure.
 * @return 0; -EINVAL "cannot insert: expected array, got <type>", or "cannot
 *         insert at index I: array has N elements"; -ENOMEM (NULL value, OOM).
 */
int ts_json_array_insert(struct ts_json *arr, size_t index, struct ts_json *value,
			 struct ts_error **err);

/**
 * Replace arr[index] (freeing the old element); takes ownership of value, also on failure.
 * @return 0; -EINVAL "cannot replace: expected array, got <type>", or "cannot
 *         replace index I: array has N elements"; -ENOMEM for a NULL value.
 */
int ts_json_array_replace(struct ts_json *arr, size_t index, struct ts_json *value,
			  struct ts_error **err);

/** Remove and free arr[index]; does nothing if out of range. */
void ts_json_array_remove(struct ts_json *arr, size_t index);

/** Remove arr[index] without freeing it. @return it (caller owns) or NULL. */
struct ts_json *ts_json_array_take(struct ts_json *arr, size_t index);

/**
 * Read a number as an integer.
 * @param[out] ret  the value; written only on success.
 * @return 0 and *ret set; -EINVAL if j is NULL, not a number, or its raw text
 *         is not an integer (fraction or exponent: "1e3", "1.0" are refused);
 *         -ERANGE if it does not fit (uint64: any negative value but "-0").
 *         No error object: callers name the file and field.
 */
int ts_json_get_int64(const struct ts_json *j, int64_t *ret);
int ts_json_get_uint64(const struct ts_json *j, uint64_t *ret);

/**
 * Escape one object key as a JSON pointer reference token (RFC 6901):
 * '~' becomes "~0" and '/' becomes "~1", so "toposhim.io/cpus" is written
 * "toposhim.io~1cpus" in "'/annotations/toposhim.io~1cpus'".
 * @return a new string the caller frees, or NULL on OOM or a NULL key.
 */
char *ts_json_pointer_escape(const char *key);

/**
 * Copy s, replacing every byte that does not start a well-formed UTF-8
 * sequence (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF) with U+FFFD, so that the result can always be serialised.  For
 * text from outside JSON (paths, messages) that goes into a log line.
 * @return a new string the caller frees; NULL on OOM or a NULL s.
 */
char *ts_json_utf8_sanitize(const char *s);

/* --- Differences and their undo ------------------------------------------------ */

/**
 * Append to ret one entry per place where after differs from before:
 * {"pointer": "<JSON pointer>", "before": <value>, "after": <value>}, the
 * member "before" (or "after") left out where that side has none.  Objects
 * on both sides are compared member by member (a key repeated in one of
 * them counts with its last value, as ts_json_get() reads it); anything
 * else (a scalar, an array, an object on one side only) is one entry with
 * the whole value.  The values are copies; entries come in before's member
 * order, then after's new members.  Used to record what a create wrote into
 * config.json (a class's cgroup values), for ts_json_undo_entry().
 * @param[in]     before   the old value; NULL: none.
 * @param[in]     after    the new value; NULL: none.
 * @param[in]     pointer  where both sit in their document, as an RFC 6901
 *                         JSON pointer ("/linux/resources"); keys below are
 *                         escaped with ts_json_pointer_escape().
 * @param[in,out] ret      an array; entries are appended (on failure some may
 *                         have been).
 * @return the number of entries appended (>= 0); -EINVAL when ret is not an
 *         array; -ENOMEM.
 */
int ts_json_diff(const struct ts_json *before, const struct ts_json *after, const char *pointer,
		 struct ts_json *ret, struct ts_error **err);

/**
 * Undo one ts_json_diff() entry in root, where it still holds: when the
 * value at the entry's pointer is its "after" (both absent counts as
 * equal), it becomes "before" again (objects on the way are created), or is
 * removed when the entry has no "before".  A value that differs (someone
 * changed it since) is left as it is.
 * @param[in,out] root   the document, an object.
 * @param[in]     entry  one entry; borrowed.
 * @return 1 when root was changed; 0 when the value differs, or the entry is
 *         not one ts_json_diff() writes (no string "pointer" that starts
 *         with '/', a '~' not followed by '0' or '1', the root itself), or a
 *         value on the way is no object; -ENOMEM (root may then be partly
 *         edited: the member being set is missing).
 */
int ts_json_undo_entry(struct ts_json *root, const struct ts_json *entry);

static inline void ts_json_freep(struct ts_json **j)
{
	*j = ts_json_free(*j);
}
#define cleanup_json __attribute__((cleanup(ts_json_freep)))

#endif
