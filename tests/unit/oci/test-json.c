/* Unit tests of src/oci/json.c. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "oci/json.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* Parse text that must be valid. */
static struct ts_json *parse_ok(const char *text)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_json *j = NULL;
	int r = ts_json_parse(text, strlen(text), "test.json", &j, &err);

	if (r < 0)
		fail_msg("parse of '%s' failed: %s", text, err->msg);
	assert_null(err);
	return j;
}

/* Serialise j compactly; the caller frees. */
static char *compact(const struct ts_json *j)
{
	cleanup_error struct ts_error *err = NULL;
	char *out = NULL;
	size_t len = 0;

	if (ts_json_serialize(j, false, &out, &len, &err) < 0)
		fail_msg("serialise failed: %s", err->msg);
	assert_int_equal(len, strlen(out));
	return out;
}

static void assert_compact(const struct ts_json *j, const char *expected)
{
	cleanup_free char *out = compact(j);

	assert_string_equal(out, expected);
}

static char *read_fixture(const char *name, size_t *ret_len)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL;
	const char *srcdir = getenv("TS_SRCDIR");
	char *buf = NULL;

	assert_true(asprintf(&path, "%s/tests/fixtures/bundles/%s", srcdir ? srcdir : ".", name) >
		    0);
	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, ret_len, &err) < 0)
		fail_msg("%s", err->msg);
	return buf;
}

/* Replace each tab of s by four spaces. */
static char *tabs_to_spaces(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 2), *p = out;

	assert_non_null(out);
	for (; *s != '\0'; s++) {
		if (*s == '\t') {
			memcpy(p, "    ", 4);
			p += 4;
		} else {
			*p++ = *s;
		}
	}
	*p = '\0';
	return out;
}

/* runc writes Go's MarshalIndent with tabs; ours is the same shape with four spaces and a final
 * newline.  The compact form is what `jq -c .` writes for the same file. */
static void test_roundtrip_runc_spec(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *expected_compact = NULL, *expected_pretty = NULL;
	cleanup_free char *pretty = NULL, *out = NULL;
	cleanup_json struct ts_json *j = NULL, *again = NULL, *copy = NULL;
	size_t len = 0, pretty_len = 0;

	text = read_fixture("runc-spec.json", &len);
	expected_compact = read_fixture("runc-spec.compact.json", NULL);
	assert_int_equal(ts_json_parse(text, len, "runc-spec.json", &j, &err), 0);
	assert_int_equal(ts_json_serialize(j, true, &pretty, &pretty_len, &err), 0);
	expected_pretty = tabs_to_spaces(text);
	strcat(expected_pretty, "\n");
	assert_string_equal(pretty, expected_pretty);
	assert_int_equal(pretty_len, strlen(expected_pretty));
	out = compact(j);
	assert_string_equal(out, expected_compact);
	assert_int_equal(ts_json_parse(pretty, pretty_len, "pretty", &again, &err), 0);
	assert_true(ts_json_equal(j, again));
	copy = ts_json_dup(j);
	assert_non_null(copy);
	assert_true(ts_json_equal(j, copy));
	assert_string_equal(
		ts_json_get_string(ts_json_get_path(j, "linux", NULL), "rootfsPropagation")
			?: "absent",
		"absent");
	assert_string_equal(ts_json_get_string(ts_json_get_path(j, "process", "user", NULL), "uid")
				    ?: "not a string",
			    "not a string");
	assert_string_equal(ts_json_get_string(j, "ociVersion"), "1.0.2-dev");
}

/* Documents whose compact form must come back exactly as given or as expected. */
static void test_compact_roundtrip_table(void **state)
{
	static const struct {
		const char *name, *in, *out;
	} rows[] = {
		{"raw numbers", "[18446744073709551615,-1,1e3,0.50,-0,1E+2,2.5e-3]", NULL},
		{"huge integer", "123456789012345678901234567890123456789", NULL},
		{"key order and unknown keys", "{\"z\":1,\"a\":{\"y\":null,\"x\":true},\"m\":[]}",
		 NULL},
		{"duplicates kept", "{\"a\":1,\"b\":2,\"a\":3}", NULL},
		{"empty containers", "[[],{},[{}]]", NULL},
		{"whitespace dropped", " \n{ \"a\" :\t[ 1 , 2 ] }\r\n", "{\"a\":[1,2]}"},
		{"solidus not escaped", "\"a/b\\/c\"", "\"a/b/c\""},
		{"escapes", "\"t\\tn\\nq\\\"b\\\\\"", NULL},
		{"unicode escapes decoded", "\"\\u003c\\u00e9\\ud83d\\ude00\"",
		 "\"<\xc3\xa9\xf0\x9f\x98\x80\""},
		{"control char", "\"\\u0001\"", NULL},
		{"scalars", "[true,false,null,\"\"]", NULL},
		{"top-level scalar", "false", NULL},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *j = NULL;
		cleanup_free char *out = NULL;

		print_message("row %s\n", rows[i].name);
		j = parse_ok(rows[i].in);
		out = compact(j);
		assert_string_equal(out, rows[i].out ? rows[i].out : rows[i].in);
	}
}

static void test_pretty_output(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j =
		parse_ok("{\"a\":{},\"b\":[],\"c\":[1,{\"d\":0.50}],\"e\":{\"f\":null}}");
	cleanup_free char *out = NULL;
	size_t len = 0;

	assert_int_equal(ts_json_serialize(j, true, &out, &len, &err), 0);
	assert_string_equal(out, "{\n"
				 "    \"a\": {},\n"
				 "    \"b\": [],\n"
				 "    \"c\": [\n"
				 "        1,\n"
				 "        {\n"
				 "            \"d\": 0.50\n"
				 "        }\n"
				 "    ],\n"
				 "    \"e\": {\n"
				 "        \"f\": null\n"
				 "    }\n"
				 "}\n");
	assert_int_equal(len, strlen(out));
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *name, *in, *msg;
	} rows[] = {
		{"empty", "", "config.json: empty document"},
		{"blank", " \n\t\r ", "config.json: empty document"},
		{"bad char", "{\"a\": x}",
		 "config.json: line 1 column 7: lexical error: invalid char in json text"},
		{"missing colon", "{\n  \"a\" 1\n}",
		 "config.json: line 2 column 7: parse error: object key and value must be "
		 "separated by a "
		 "colon (':')"},
		{"trailing comma", "[1,]",
		 "config.json: line 1 column 4: parse error: unallowed token at this point in JSON "
		 "text"},
		{"bad close", "{\n\t\"a\": [\n\t\t1,\n\t\t2\n\t}\n}",
		 "config.json: line 5 column 2: parse error: after array element, I expect ',' or "
		 "']'"},
		{"trailing garbage", "{\"a\":1} x",
		 "config.json: line 1 column 9: parse error: trailing garbage"},
		{"second value", "{} {}",
		 "config.json: line 1 column 4: parse error: trailing garbage"},
		{"truncated",
		 "{\"a\":", "config.json: line 1 column 6: parse error: premature EOF"},
		{"truncated after newline", "[1,\n",
		 "config.json: line 2 column 1: parse error: premature EOF"},
		{"bad number at end", "1.",
		 "config.json: line 1 column 3: lexical error: malformed number, a digit is "
		 "required "
		 "after the decimal point"},
		{"comment", "// c\n{}",
		 "config.json: line 1 column 1: lexical error: probable comment found in input "
		 "text, "
		 "comments are not enabled"},
		{"invalid utf-8", "[\"\xff\"]",
		 "config.json: line 1 column 3: invalid UTF-8 byte 0xff (malformed, overlong or "
		 "surrogate sequence)"},
		/* yajl accepts these; runc (Go) reads U+FFFD, crun (yajl) the bytes or '?' */
		{"overlong '/'", "{\"a\":\"x\xc0\xafy\"}",
		 "config.json: line 1 column 8: invalid UTF-8 byte 0xc0 (malformed, overlong or "
		 "surrogate sequence)"},
		{"utf-8 surrogate", "[\"\xed\xa0\x80\"]",
		 "config.json: line 1 column 3: invalid UTF-8 byte 0xed (malformed, overlong or "
		 "surrogate sequence)"},
		{"above U+10FFFF", "[\"\xf4\x90\x80\x80\"]",
		 "config.json: line 1 column 3: invalid UTF-8 byte 0xf4 (malformed, overlong or "
		 "surrogate sequence)"},
		{"truncated sequence", "[\"\xe2\x82",
		 "config.json: line 1 column 3: invalid UTF-8 byte 0xe2 (malformed, overlong or "
		 "surrogate sequence)"},
		{"lone high surrogate", "{\"a\":\"\\ud800\"}",
		 "config.json: line 1 column 7: lone UTF-16 surrogate escape '\\ud800'"},
		{"high surrogate then not a low one", "[\"\\ud83d\\u0041\"]",
		 "config.json: line 1 column 3: lone UTF-16 surrogate escape '\\ud83d'"},
		{"lone low surrogate in a key", "{\"\\uDC00\":1}",
		 "config.json: line 1 column 3: lone UTF-16 surrogate escape '\\uDC00'"},
		{"nul in string", "[\"\\u0000\"]",
		 "config.json: line 1 column 9: strings must not contain NUL (\\u0000)"},
		{"nul in key", "{\"k\\u0000\":1}",
		 "config.json: line 1 column 10: strings must not contain NUL (\\u0000)"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		struct ts_json *j = NULL;

		print_message("row %s\n", rows[i].name);
		assert_int_equal(
			ts_json_parse(rows[i].in, strlen(rows[i].in), "config.json", &j, &err),
			-EINVAL);
		assert_null(j);
		assert_non_null(err);
		assert_string_equal(err->msg, rows[i].msg);
		assert_int_equal(err->errnum, 0);
	}
}

/* What the validity check must let through: pairs, escaped backslashes,
 * well-formed multi-byte text, the text "\\ud800" outside strings' escapes. */
static void test_parse_valid_text(void **state)
{
	cleanup_json struct ts_json *j =
		parse_ok("{\"e\":\"\\ud83d\\ude00\",\"b\":\"\\\\ud800\",\"u\":\"\xe2\x82\xac "
			 "\xf0\x9f\x98\x80\",\"q\":\"\\\"\\\\ud800\"}");

	assert_string_equal(ts_json_get_string(j, "e"), "\xf0\x9f\x98\x80");
	assert_string_equal(ts_json_get_string(j, "b"), "\\ud800");
	assert_string_equal(ts_json_get_string(j, "q"), "\"\\ud800");
}

static void test_parse_depth_limit(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL;
	char deep[2 * TS_JSON_MAX_DEPTH + 3];

	/* exactly TS_JSON_MAX_DEPTH levels parse and serialise again */
	memset(deep, '[', TS_JSON_MAX_DEPTH);
	memset(deep + TS_JSON_MAX_DEPTH, ']', TS_JSON_MAX_DEPTH);
	deep[2 * TS_JSON_MAX_DEPTH] = '\0';
	j = parse_ok(deep);
	assert_compact(j, deep);
	/* one more is refused where it opens */
	memset(deep, '[', TS_JSON_MAX_DEPTH + 1);
	memset(deep + TS_JSON_MAX_DEPTH + 1, ']', TS_JSON_MAX_DEPTH + 1);
	deep[2 * TS_JSON_MAX_DEPTH + 2] = '\0';
	j = ts_json_free(j);
	assert_int_equal(ts_json_parse(deep, strlen(deep), "deep.json", &j, &err), -EINVAL);
	assert_string_equal(err->msg,
			    "deep.json: line 1 column 101: nesting deeper than 100 levels");
	assert_null(j);
}

/* A text that is not NUL-terminated is read only up to len. */
static void test_parse_len_bounded(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL;
	const char text[] = "{\"a\":1}garbage";

	assert_int_equal(ts_json_parse(text, 7, "x", &j, &err), 0);
	assert_compact(j, "{\"a\":1}");
}

static void test_get_duplicate_returns_last(void **state)
{
	cleanup_json struct ts_json *j = parse_ok("{\"a\":1,\"b\":{\"c\":\"x\"},\"a\":\"two\"}");

	assert_string_equal(ts_json_get_string(j, "a"), "two");
	assert_null(ts_json_get_array(j, "a"));
	assert_null(ts_json_get_object(j, "a"));
	assert_non_null(ts_json_get_object(j, "b"));
	assert_string_equal(ts_json_get_string(ts_json_get_path(j, "b", NULL), "c"), "x");
	assert_null(ts_json_get_path(j, "b", "c", "d", NULL));
	assert_null(ts_json_get_path(j, "missing", "c", NULL));
	assert_ptr_equal(ts_json_get_path(j, NULL), j);
	assert_null(ts_json_get(j, "nope"));
	assert_null(ts_json_get(NULL, "a"));
	assert_null(ts_json_get(ts_json_get(j, "a"), "a"));
}

static void test_object_set(void **state)
{
	static const struct {
		const char *name, *in, *key, *value, *out;
	} rows[] = {
		{"replace keeps position", "{\"a\":1,\"b\":2,\"c\":3}", "b", "5",
		 "{\"a\":1,\"b\":5,\"c\":3}"},
		{"new key appended", "{\"a\":1}", "z", "\"s\"", "{\"a\":1,\"z\":\"s\"}"},
		{"into empty", "{}", "k", "[]", "{\"k\":[]}"},
		{"duplicates collapse onto the last", "{\"a\":1,\"b\":2,\"a\":3,\"c\":4}", "a", "9",
		 "{\"b\":2,\"a\":9,\"c\":4}"},
		{"type change", "{\"a\":{\"x\":1}}", "a", "null", "{\"a\":null}"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *j = NULL;

		print_message("row %s\n", rows[i].name);
		j = parse_ok(rows[i].in);
		assert_int_equal(ts_json_object_set(j, rows[i].key, parse_ok(rows[i].value), &err),
				 0);
		assert_null(err);
		assert_compact(j, rows[i].out);
	}
}

static void test_object_set_errors(void **state)
{
	cleanup_json struct ts_json *arr = parse_ok("[]"), *obj = parse_ok("{}");
	cleanup_error struct ts_error *err = NULL;

	/* the value is consumed even on failure (no leak under ASan) */
	assert_int_equal(ts_json_object_set(arr, "k", ts_json_new_int(1), &err), -EINVAL);
	assert_string_equal(err->msg, "cannot set 'k': expected object, got array");
	ts_error_clear(&err);
	assert_int_equal(ts_json_object_set(obj, "k", NULL, &err), -ENOMEM);
	assert_string_equal(err->msg, "cannot set 'k'");
	assert_int_equal(err->errnum, ENOMEM);
	assert_compact(obj, "{}");
}

static void test_object_append_keeps_duplicates(void **state)
{
	cleanup_json struct ts_json *obj = parse_ok("{\"a\":1}"), *arr = parse_ok("[]");
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_json_object_append(obj, "b", ts_json_new_int(2), &err), 0);
	assert_int_equal(ts_json_object_append(obj, "a", ts_json_new_int(3), &err), 0);
	assert_compact(obj, "{\"a\":1,\"b\":2,\"a\":3}");
	assert_int_equal(ts_json_object_append(arr, "k", ts_json_new_int(1), &err), -EINVAL);
	assert_string_equal(err->msg, "cannot append 'k': expected object, got array");
	ts_error_clear(&err);
	assert_int_equal(ts_json_object_append(obj, "k", NULL, &err), -ENOMEM);
	assert_string_equal(err->msg, "cannot append 'k'");
}

static void test_object_find_duplicate(void **state)
{
	static const struct {
		const char *name, *in;
		int want_ret;
		size_t want_index;
	} rows[] = {
		{"none", "{\"a\":1,\"b\":2,\"c\":3}", 0, 0},
		{"empty", "{}", 0, 0},
		{"not an object", "[1,1]", 0, 0},
		{"one repeat", "{\"a\":1,\"b\":2,\"a\":3}", 1, 2},
		{"the earliest repeat wins", "{\"z\":1,\"a\":1,\"a\":2,\"z\":3,\"a\":4}", 1, 2},
		{"a later run's second", "{\"b\":1,\"a\":1,\"c\":1,\"b\":2,\"a\":2}", 1, 3},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *j = parse_ok(rows[i].in);
		size_t index = 99;

		print_message("row %s\n", rows[i].name);
		assert_int_equal(ts_json_object_find_duplicate(j, &index), rows[i].want_ret);
		assert_int_equal(index, rows[i].want_ret ? rows[i].want_index : 99);
	}
}

static void test_object_ensure(void **state)
{
	cleanup_json struct ts_json *j = parse_ok("{\"linux\":{\"resources\":[]},\"a\":1}");
	cleanup_error struct ts_error *err = NULL;
	struct ts_json *linux_obj = ts_json_get(j, "linux"), *p, *q;

	/* wrong type: the message puts the key inside the quoted path */
	assert_null(ts_json_object_ensure(linux_obj, "resources", TS_JSON_OBJECT,
					  "config.json: '/linux'", &err));
	assert_non_null(err);
	assert_int_equal(ts_error_code(err), -EINVAL);
	assert_string_equal(err->msg,
			    "config.json: '/linux/resources': expected object, got array");
	ts_error_clear(&err);
	/* the root is the empty pointer '' */
	assert_null(ts_json_object_ensure(j, "a", TS_JSON_ARRAY, "config.json: ''", &err));
	assert_string_equal(err->msg, "config.json: '/a': expected array, got number");
	ts_error_clear(&err);
	/* the path may also be left open: "/key'" is appended */
	assert_null(ts_json_object_ensure(linux_obj, "resources", TS_JSON_OBJECT,
					  "config.json: '/linux", &err));
	assert_string_equal(err->msg,
			    "config.json: '/linux/resources': expected object, got array");
	ts_error_clear(&err);
	assert_null(ts_json_object_ensure(j, "a", TS_JSON_OBJECT, "config.json: '", &err));
	assert_string_equal(err->msg, "config.json: '/a': expected object, got number");
	ts_error_clear(&err);
	assert_null(ts_json_object_ensure(j, "a", TS_JSON_OBJECT, NULL, &err));
	assert_string_equal(err->msg, "'/a': expected object, got number");
	ts_error_clear(&err);
	/* keys are escaped as JSON pointer tokens */
	assert_non_null(ts_json_object_set(j, "x/y~", ts_json_new_null(), &err) == 0 ? j : NULL);
	assert_null(ts_json_object_ensure(j, "x/y~", TS_JSON_OBJECT, "f: ''", &err));
	assert_string_equal(err->msg, "f: '/x~1y~0': expected object, got null");
	ts_error_clear(&err);
	/* not an object at all */
	assert_null(ts_json_object_ensure(ts_json_get(j, "a"), "b", TS_JSON_OBJECT,
					  "config.json: '/a'", &err));
	assert_string_equal(err->msg, "config.json: '/a': expected object, got number");
	ts_error_clear(&err);
	assert_null(ts_json_object_ensure(ts_json_get(j, "a"), "b", TS_JSON_OBJECT,
					  "config.json: '/a", &err));
	assert_string_equal(err->msg, "config.json: '/a': expected object, got number");
	ts_error_clear(&err);
	/* existing member of the right type is returned as is */
	p = ts_json_object_ensure(j, "linux", TS_JSON_OBJECT, "config.json: ''", &err);
	assert_ptr_equal(p, linux_obj);
	/* missing members are created empty at the end */
	p = ts_json_object_ensure(linux_obj, "devices", TS_JSON_ARRAY, "config.json: '/linux'",
				  &err);
	assert_non_null(p);
	q = ts_json_object_ensure(j, "hooks", TS_JSON_OBJECT, "config.json: ''", &err);
	assert_non_null(q);
	assert_null(err);
	assert_compact(j, "{\"linux\":{\"resources\":[],\"devices\":[]},\"a\":1,\"x/y~\":null,"
			  "\"hooks\":{}}");
}

static void test_object_remove(void **state)
{
	cleanup_json struct ts_json *j = parse_ok("{\"a\":1,\"b\":2,\"a\":3,\"c\":{\"a\":4}}");

	assert_int_equal(ts_json_object_remove(j, "a"), 2);
	assert_compact(j, "{\"b\":2,\"c\":{\"a\":4}}");
	assert_int_equal(ts_json_object_remove(j, "missing"), 0);
	assert_int_equal(ts_json_object_remove(j, "c"), 1);
	assert_compact(j, "{\"b\":2}");
	assert_int_equal(ts_json_object_remove(NULL, "b"), 0);
}

static void test_array_mutators(void **state)
{
	cleanup_json struct ts_json *arr = parse_ok("[1,2]"), *taken = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_json_array_append(arr, ts_json_new_string("x"), &err), 0);
	assert_compact(arr, "[1,2,\"x\"]");
	assert_int_equal(ts_json_array_insert(arr, 0, ts_json_new_bool(true), &err), 0);
	assert_compact(arr, "[true,1,2,\"x\"]");
	assert_int_equal(ts_json_array_insert(arr, 2, ts_json_new_null(), &err), 0);
	assert_compact(arr, "[true,1,null,2,\"x\"]");
	assert_int_equal(ts_json_array_insert(arr, 5, ts_json_new_int(-7), &err), 0);
	assert_compact(arr, "[true,1,null,2,\"x\",-7]");
	assert_int_equal(ts_json_array_replace(arr, 1, ts_json_new_object(), &err), 0);
	assert_compact(arr, "[true,{},null,2,\"x\",-7]");
	taken = ts_json_array_take(arr, 4);
	assert_non_null(taken);
	assert_string_equal(taken->u.string, "x");
	assert_compact(arr, "[true,{},null,2,-7]");
	assert_null(ts_json_array_take(arr, 5));
	ts_json_array_remove(arr, 0);
	assert_compact(arr, "[{},null,2,-7]");
	ts_json_array_remove(arr, 3);
	assert_compact(arr, "[{},null,2]");
	ts_json_array_remove(arr, 9); /* out of range: nothing happens */
	assert_compact(arr, "[{},null,2]");
	assert_null(err);
}

static void test_array_mutator_errors(void **state)
{
	static const struct {
		const char *name;
		int op; /* 0 append, 1 insert, 2 replace */
		const char *target;
		size_t index;
		bool null_value;
		int ret;
		const char *msg;
	} rows[] = {
		{"append to object", 0, "{}", 0, false, -EINVAL,
		 "cannot append: expected array, got object"},
		{"append null", 0, "[]", 0, true, -ENOMEM, "cannot append"},
		{"insert past end", 1, "[1,2]", 3, false, -EINVAL,
		 "cannot insert at index 3: array has 2 elements"},
		{"insert into string", 1, "\"s\"", 0, false, -EINVAL,
		 "cannot insert: expected array, got string"},
		{"replace at len", 2, "[1,2]", 2, false, -EINVAL,
		 "cannot replace index 2: array has 2 elements"},
		{"replace in empty", 2, "[]", 0, false, -EINVAL,
		 "cannot replace index 0: array has 0 elements"},
		{"replace null", 2, "[1]", 0, true, -ENOMEM, "cannot replace"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *t = NULL;
		cleanup_free char *before = NULL;
		struct ts_json *v;
		int r;

		print_message("row %s\n", rows[i].name);
		t = parse_ok(rows[i].target);
		before = compact(t);
		v = rows[i].null_value ? NULL : ts_json_new_string("v");
		if (rows[i].op == 0)
			r = ts_json_array_append(t, v, &err);
		else if (rows[i].op == 1)
			r = ts_json_array_insert(t, rows[i].index, v, &err);
		else
			r = ts_json_array_replace(t, rows[i].index, v, &err);
		assert_int_equal(r, rows[i].ret);
		assert_string_equal(err->msg, rows[i].msg);
		assert_compact(t, before);
	}
}

static void test_int_getters(void **state)
{
	static const struct {
		const char *raw;
		int r64;
		int64_t v64;
		int ru64;
		uint64_t vu64;
	} rows[] = {
		{"0", 0, 0, 0, 0},
		{"-0", 0, 0, 0, 0},
		{"42", 0, 42, 0, 42},
		{"-1", 0, -1, -ERANGE, 0},
		{"9223372036854775807", 0, INT64_MAX, 0, 9223372036854775807ull},
		{"9223372036854775808", -ERANGE, 0, 0, 9223372036854775808ull},
		{"-9223372036854775808", 0, INT64_MIN, -ERANGE, 0},
		{"-9223372036854775809", -ERANGE, 0, -ERANGE, 0},
		{"18446744073709551615", -ERANGE, 0, 0, UINT64_MAX},
		{"18446744073709551616", -ERANGE, 0, -ERANGE, 0},
		{"1e3", -EINVAL, 0, -EINVAL, 0},
		{"0.50", -EINVAL, 0, -EINVAL, 0},
		{"1.0", -EINVAL, 0, -EINVAL, 0},
		{"-5E2", -EINVAL, 0, -EINVAL, 0},
		{"007", -EINVAL, 0, -EINVAL, 0}, /* only via ts_json_new_number_raw */
		{" 7", -EINVAL, 0, -EINVAL, 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *j = ts_json_new_number_raw(rows[i].raw);
		int64_t v64 = 12345;
		uint64_t vu64 = 12345;

		print_message("row '%s'\n", rows[i].raw);
		assert_int_equal(ts_json_get_int64(j, &v64), rows[i].r64);
		assert_true(v64 == (rows[i].r64 == 0 ? rows[i].v64 : 12345));
		assert_int_equal(ts_json_get_uint64(j, &vu64), rows[i].ru64);
		assert_true(vu64 == (rows[i].ru64 == 0 ? rows[i].vu64 : 12345));
	}
}

static void test_int_getters_wrong_type(void **state)
{
	cleanup_json struct ts_json *s = ts_json_new_string("1"), *b = ts_json_new_bool(true);
	int64_t v = 0;
	uint64_t u = 0;

	assert_int_equal(ts_json_get_int64(s, &v), -EINVAL);
	assert_int_equal(ts_json_get_uint64(b, &u), -EINVAL);
	assert_int_equal(ts_json_get_int64(NULL, &v), -EINVAL);
}

static void test_constructors(void **state)
{
	cleanup_json struct ts_json *arr = ts_json_new_array();
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_json_array_append(arr, ts_json_new_int(INT64_MIN), &err), 0);
	assert_int_equal(ts_json_array_append(arr, ts_json_new_uint(UINT64_MAX), &err), 0);
	assert_int_equal(ts_json_array_append(arr, ts_json_new_string_len("abcdef", 3), &err), 0);
	assert_int_equal(ts_json_array_append(arr, ts_json_new_number_raw("1.50"), &err), 0);
	assert_compact(arr, "[-9223372036854775808,18446744073709551615,\"abc\",1.50]");
	assert_null(ts_json_new_string(NULL));
	assert_null(ts_json_new_number_raw(NULL));
	assert_string_equal(ts_json_type_name(TS_JSON_NULL), "null");
	assert_string_equal(ts_json_type_name(TS_JSON_BOOL), "boolean");
	assert_string_equal(ts_json_type_name(TS_JSON_NUMBER), "number");
	assert_string_equal(ts_json_type_name(TS_JSON_STRING), "string");
	assert_string_equal(ts_json_type_name(TS_JSON_ARRAY), "array");
	assert_string_equal(ts_json_type_name(TS_JSON_OBJECT), "object");
}

static void test_serialize_errors(void **state)
{
	static const struct {
		const char *name, *number, *string, *key, *msg;
	} rows[] = {
		{"not a number", "abc", NULL, NULL,
		 "cannot serialise JSON: '/x/1': invalid number 'abc'"},
		{"leading zero", "01", NULL, NULL,
		 "cannot serialise JSON: '/x/1': invalid number '01'"},
		{"bare dot", "1.", NULL, NULL,
		 "cannot serialise JSON: '/x/1': invalid number '1.'"},
		{"bad utf-8 string", NULL, "\xc3(", NULL,
		 "cannot serialise JSON: '/x/1': string is not valid UTF-8"},
		{"bad utf-8 key", NULL, NULL, "k\xff",
		 "cannot serialise JSON: '': key is not valid UTF-8"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *j = parse_ok("{\"a/b\":0,\"x\":[true]}");
		cleanup_error struct ts_error *err = NULL;
		char *out = NULL;
		struct ts_json *v;

		print_message("row %s\n", rows[i].name);
		v = rows[i].number ? ts_json_new_number_raw(rows[i].number)
				   : ts_json_new_string(rows[i].string ? rows[i].string : "ok");
		if (rows[i].key)
			assert_int_equal(ts_json_object_set(j, rows[i].key, v, &err), 0);
		else
			assert_int_equal(ts_json_array_append(ts_json_get(j, "x"), v, &err), 0);
		assert_int_equal(ts_json_serialize(j, true, &out, NULL, &err), -EINVAL);
		assert_null(out);
		assert_string_equal(err->msg, rows[i].msg);
	}
}

static void test_serialize_path_escaped(void **state)
{
	cleanup_json struct ts_json *j = parse_ok("{\"a/b\":{\"~\":[0]}}");
	cleanup_error struct ts_error *err = NULL;
	char *out = NULL;

	assert_int_equal(ts_json_array_append(ts_json_get_path(j, "a/b", "~", NULL),
					      ts_json_new_number_raw("x"), &err),
			 0);
	assert_int_equal(ts_json_serialize(j, false, &out, NULL, &err), -EINVAL);
	assert_string_equal(err->msg, "cannot serialise JSON: '/a~1b/~0/1': invalid number 'x'");
}

static void test_equal_and_dup(void **state)
{
	static const struct {
		const char *a, *b;
		bool equal;
	} rows[] = {
		{"{\"a\":1,\"b\":2}", "{\"a\":1,\"b\":2}", true},
		{"{\"a\":1,\"b\":2}", "{\"b\":2,\"a\":1}", false}, /* order is significant */
		{"[1.0]", "[1]", false},			   /* raw text compared */
		{"[1,2]", "[1,2,3]", false},
		{"{\"a\":1}", "{\"a\":1,\"a\":1}", false},
		{"\"x\"", "\"x\"", true},
		{"null", "false", false},
		{"true", "true", true},
		{"true", "false", false},
		{"{\"a\":[{}]}", "{\"a\":[{}]}", true},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *a = parse_ok(rows[i].a), *b = parse_ok(rows[i].b);
		cleanup_json struct ts_json *copy = ts_json_dup(a);

		print_message("row %s vs %s\n", rows[i].a, rows[i].b);
		assert_int_equal(ts_json_equal(a, b), rows[i].equal);
		assert_true(ts_json_equal(a, copy));
		assert_ptr_not_equal(a, copy);
	}
	assert_true(ts_json_equal(NULL, NULL));
	assert_null(ts_json_dup(NULL));
}

/* A copy is deep: editing it leaves the original alone. */
static void test_dup_is_deep(void **state)
{
	cleanup_json struct ts_json *a = parse_ok("{\"l\":[1,{\"k\":\"v\"}]}"), *b = ts_json_dup(a);
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_json_object_set(ts_json_get_path(b, "l", NULL)->u.array.items[1], "k",
					    ts_json_new_string("w"), &err),
			 0);
	assert_compact(a, "{\"l\":[1,{\"k\":\"v\"}]}");
	assert_compact(b, "{\"l\":[1,{\"k\":\"w\"}]}");
}

static void test_foreach(void **state)
{
	cleanup_json struct ts_json *j = parse_ok("{\"a\":[10,20],\"b\":null}");
	struct ts_json *val, *item;
	const char *key;
	char seen[64] = "";
	size_t i, k;

	ts_json_object_foreach (j, i, key, val) {
		strcat(seen, key);
		ts_json_array_foreach (val, k, item) {
			strcat(seen, item->u.number);
		}
	}
	assert_string_equal(seen, "a1020b");
}

static void test_utf8_sanitize(void **state)
{
	static const struct {
		const char *name, *in, *out;
	} rows[] = {
		{"ascii", "abc/def", "abc/def"},
		{"empty", "", ""},
		{"valid multibyte", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", NULL},
		{"lone continuation",
		 "a\x80"
		 "b",
		 "a\xef\xbf\xbd"
		 "b"},
		{"invalid lead", "\xff", "\xef\xbf\xbd"},
		{"overlong slash", "\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},
		{"overlong 3-byte", "\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"surrogate", "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"above U+10FFFF", "\xf4\x90\x80\x80",
		 "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},
		{"truncated", "x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd"},
		{"max code point", "\xf4\x8f\xbf\xbf", NULL},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *j = NULL;
		cleanup_free char *out = NULL, *text = NULL;

		print_message("row %s\n", rows[i].name);
		out = ts_json_utf8_sanitize(rows[i].in);
		assert_string_equal(out, rows[i].out ? rows[i].out : rows[i].in);
		/* whatever comes out can be serialised */
		j = ts_json_new_string(out);
		assert_int_equal(ts_json_serialize(j, false, &text, NULL, &err), 0);
	}
	assert_null(ts_json_utf8_sanitize(NULL));
}

/* ts_json_parse_events(): what it hands the callbacks, and that it holds a
 * text to ts_json_parse()'s rules. */
struct ev_log {
	char buf[256];
	size_t len;
	int stop_at; /* stop at the n-th event (1-based); 0 never */
	int count;
};

static bool ev_put(struct ev_log *l, const char *tag, const char *s, size_t len)
{
	int w = snprintf(l->buf + l->len, sizeof(l->buf) - l->len, "%s%s%.*s", l->len ? " " : "",
			 tag, (int)len, s != NULL ? s : "");

	l->len += (size_t)w;
	return ++l->count != l->stop_at;
}

static bool ev_null_cb(void *c)
{
	return ev_put(c, "null", NULL, 0);
}
static bool ev_bool_cb(void *c, bool v)
{
	return ev_put(c, v ? "true" : "false", NULL, 0);
}
static bool ev_number_cb(void *c, const char *s, size_t len)
{
	return ev_put(c, "n:", s, len);
}
static bool ev_string_cb(void *c, const char *s, size_t len)
{
	return ev_put(c, "s:", s, len);
}
static bool ev_key_cb(void *c, const char *s, size_t len)
{
	return ev_put(c, "k:", s, len);
}
static bool ev_start_map_cb(void *c)
{
	return ev_put(c, "{", NULL, 0);
}
static bool ev_end_map_cb(void *c)
{
	return ev_put(c, "}", NULL, 0);
}
static bool ev_start_array_cb(void *c)
{
	return ev_put(c, "[", NULL, 0);
}
static bool ev_end_array_cb(void *c)
{
	return ev_put(c, "]", NULL, 0);
}

static void test_parse_events(void **state)
{
	static const struct ts_json_events ev = {
		.null = ev_null_cb,
		.boolean = ev_bool_cb,
		.number = ev_number_cb,
		.string = ev_string_cb,
		.start_map = ev_start_map_cb,
		.map_key = ev_key_cb,
		.end_map = ev_end_map_cb,
		.start_array = ev_start_array_cb,
		.end_array = ev_end_array_cb,
	};
	static const char *const refused[] = {
		"",
		"  \n",
		"{\"a\": \"\\u0000\"}",
		"{\"a\": \"\xc0\xaf\"}",
		"{\"a\": \"\\ud800\"}",
		"{\"a\": 1,}",
		"{\"a\": 1} {}",
		"/* c */ {}",
		"[1, 2",
	};
	const char *text = "{\"a\": [1e3, -0, true, null], \"b\\u00e9\": {\"c\": \"x\\ny\"}}";
	struct ev_log l = {0};
	char deep[2 * TS_JSON_MAX_DEPTH + 8];
	size_t k = 0;

	(void)state;
	assert_int_equal(ts_json_parse_events(text, strlen(text), &ev, &l), 0);
	assert_string_equal(l.buf, "{ k:a [ n:1e3 n:-0 true null ] k:b\xc3\xa9 { k:c s:x\ny } }");
	/* a callback that says stop */
	l = (struct ev_log){.stop_at = 4};
	assert_int_equal(ts_json_parse_events(text, strlen(text), &ev, &l), -ECANCELED);
	assert_string_equal(l.buf, "{ k:a [ n:1e3");
	/* no callbacks: a validity check */
	assert_int_equal(
		ts_json_parse_events(text, strlen(text), &(struct ts_json_events){0}, NULL), 0);
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		cleanup_error struct ts_error *err = NULL;
		struct ts_json *j = NULL;

		l = (struct ev_log){0};
		assert_int_equal(ts_json_parse_events(refused[i], strlen(refused[i]), &ev, &l),
				 -EINVAL);
		/* refused there too */
		assert_true(ts_json_parse(refused[i], strlen(refused[i]), "t", &j, &err) < 0);
	}
	/* one level deeper than ts_json_parse() takes */
	for (int i = 0; i <= TS_JSON_MAX_DEPTH; i++)
		deep[k++] = '[';
	for (int i = 0; i <= TS_JSON_MAX_DEPTH; i++)
		deep[k++] = ']';
	assert_int_equal(ts_json_parse_events(deep, k, &(struct ts_json_events){0}, NULL), -EINVAL);
	assert_int_equal(ts_json_parse_events(deep + 1, k - 2, &(struct ts_json_events){0}, NULL),
			 0);
}

/* ---- ts_json_diff / ts_json_undo_entry ------------------------------------------------------- */

/* The entries of diff(before, after) at pointer, compactly written. */
static char *diff_text(const char *before, const char *after, const char *pointer)
{
	cleanup_json struct ts_json *b = before != NULL ? parse_ok(before) : NULL;
	cleanup_json struct ts_json *a = after != NULL ? parse_ok(after) : NULL;
	cleanup_json struct ts_json *ret = ts_json_new_array();
	cleanup_error struct ts_error *err = NULL;
	int r = ts_json_diff(b, a, pointer, ret, &err);

	assert_true(r >= 0);
	assert_int_equal((size_t)r, ret->u.array.len);
	return compact(ret);
}

static void test_diff(void **state)
{
	static const struct {
		const char *before, *after, *entries;
	} rows[] = {
		/* same: nothing */
		{"{\"cpu\":{\"shares\":2}}", "{\"cpu\":{\"shares\":2}}", "[]"},
		{NULL, NULL, "[]"},
		/* a member set, one changed, one removed; objects member by member */
		{"{\"cpu\":{\"cpus\":\"1\"}}", "{\"cpu\":{\"cpus\":\"1\",\"shares\":10240}}",
		 "[{\"pointer\":\"/r/cpu/shares\",\"after\":10240}]"},
		{"{\"cpu\":{\"shares\":2,\"quota\":5}}", "{\"cpu\":{\"shares\":10}}",
		 "[{\"pointer\":\"/r/cpu/shares\",\"before\":2,\"after\":10},"
		 "{\"pointer\":\"/r/cpu/quota\",\"before\":5}]"},
		/* an object on one side only, an array, a type change: whole values */
		{"{}", "{\"pids\":{\"limit\":64}}",
		 "[{\"pointer\":\"/r/pids\",\"after\":{\"limit\":64}}]"},
		{"{\"h\":[1,2]}", "{\"h\":[1]}",
		 "[{\"pointer\":\"/r/h\",\"before\":[1,2],\"after\":[1]}]"},
		{"{\"cpu\":3}", "{\"cpu\":{\"shares\":3}}",
		 "[{\"pointer\":\"/r/cpu\",\"before\":3,\"after\":{\"shares\":3}}]"},
		{NULL, "{\"a\":1}", "[{\"pointer\":\"/r\",\"after\":{\"a\":1}}]"},
		/* keys escaped as pointer tokens; a repeated key counts with its last value */
		{"{\"u\":{\"a/b~c\":\"1\"}}", "{\"u\":{\"a/b~c\":\"2\"}}",
		 "[{\"pointer\":\"/r/u/a~1b~0c\",\"before\":\"1\",\"after\":\"2\"}]"},
		{"{\"x\":1,\"x\":2}", "{\"x\":2}", "[]"},
		/* numbers compare as written */
		{"{\"x\":1}", "{\"x\":1.0}", "[{\"pointer\":\"/r/x\",\"before\":1,\"after\":1.0}]"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cleanup_free char *got = diff_text(rows[i].before, rows[i].after, "/r");

		if (strcmp(got, rows[i].entries) != 0)
			fail_msg("row %zu: got %s, want %s", i, got, rows[i].entries);
	}
}

static void test_diff_not_an_array(void **state)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	cleanup_error struct ts_error *err = NULL;
	(void)state;

	assert_int_equal(ts_json_diff(NULL, o, "/r", o, &err), -EINVAL);
	assert_string_equal(err->msg, "json diff: expected array");
}

/* ts_json_undo_entry(doc, entry): its return and doc after it. */
static int undo_text(const char *doc, const char *entry, char **ret_doc)
{
	cleanup_json struct ts_json *d = parse_ok(doc), *e = parse_ok(entry);
	int r = ts_json_undo_entry(d, e);

	*ret_doc = compact(d);
	return r;
}

static void test_undo_entry(void **state)
{
	static const struct {
		const char *doc, *entry;
		int ret;
		const char *after;
	} rows[] = {
		/* still the value written: back to the one before, or gone */
		{"{\"c\":{\"s\":10240,\"q\":1}}",
		 "{\"pointer\":\"/c/s\",\"before\":2,\"after\":10240}", 1,
		 "{\"c\":{\"s\":2,\"q\":1}}"},
		{"{\"c\":{\"s\":10240,\"q\":1}}", "{\"pointer\":\"/c/s\",\"after\":10240}", 1,
		 "{\"c\":{\"q\":1}}"},
		/* removed by the create: set again, objects on the way made */
		{"{}", "{\"pointer\":\"/l/r/c/q\",\"before\":5}", 1,
		 "{\"l\":{\"r\":{\"c\":{\"q\":5}}}}"},
		{"{\"c\":{}}", "{\"pointer\":\"/c/s\",\"before\":5}", 1, "{\"c\":{\"s\":5}}"},
		/* changed since: left */
		{"{\"c\":{\"s\":2048}}", "{\"pointer\":\"/c/s\",\"after\":10240}", 0,
		 "{\"c\":{\"s\":2048}}"},
		{"{\"c\":{\"s\":7}}", "{\"pointer\":\"/c/s\",\"before\":5}", 0,
		 "{\"c\":{\"s\":7}}"},
		/* absent and meant absent: nothing to remove */
		{"{}", "{\"pointer\":\"/c/s\"}", 0, "{}"},
		/* a whole object, equal or not */
		{"{\"p\":{\"limit\":64}}", "{\"pointer\":\"/p\",\"after\":{\"limit\":64}}", 1,
		 "{}"},
		{"{\"p\":{\"limit\":64,\"x\":1}}", "{\"pointer\":\"/p\",\"after\":{\"limit\":64}}",
		 0, "{\"p\":{\"limit\":64,\"x\":1}}"},
		/* escaped tokens */
		{"{\"u\":{\"a/b~c\":\"2\"}}",
		 "{\"pointer\":\"/u/a~1b~0c\",\"before\":\"1\",\"after\":\"2\"}", 1,
		 "{\"u\":{\"a/b~c\":\"1\"}}"},
		/* not an entry ts_json_diff() writes, or no object on the way */
		{"{\"c\":1}", "{\"pointer\":\"\",\"after\":{\"c\":1}}", 0, "{\"c\":1}"},
		{"{\"c\":1}", "{\"pointer\":\"c\",\"after\":1}", 0, "{\"c\":1}"},
		{"{\"c\":1}", "{\"pointer\":\"/c~2\",\"after\":1}", 0, "{\"c\":1}"},
		{"{\"c\":1}", "{\"pointer\":\"/c~\",\"after\":1}", 0, "{\"c\":1}"},
		{"{\"c\":1}", "{\"pointer\":7,\"after\":1}", 0, "{\"c\":1}"},
		{"{\"c\":1}", "[]", 0, "{\"c\":1}"},
		{"{\"c\":[1]}", "{\"pointer\":\"/c/s\",\"before\":5}", 0, "{\"c\":[1]}"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cleanup_free char *got = NULL;
		int r = undo_text(rows[i].doc, rows[i].entry, &got);

		if (r != rows[i].ret || strcmp(got, rows[i].after) != 0)
			fail_msg("row %zu: got %d %s, want %d %s", i, r, got, rows[i].ret,
				 rows[i].after);
	}
}

/* What a diff records, undone entry by entry, gives back before. */
static void test_diff_then_undo(void **state)
{
	const char *before = "{\"l\":{\"r\":{\"cpu\":{\"cpus\":\"1\",\"shares\":2,\"quota\":5},"
			     "\"memory\":{\"limit\":9}}}}";
	const char *after = "{\"l\":{\"r\":{\"cpu\":{\"cpus\":\"1\",\"shares\":10240},"
			    "\"memory\":{\"limit\":9},\"pids\":{\"limit\":64}}}}";
	cleanup_json struct ts_json *b = parse_ok(before), *doc = parse_ok(after);
	cleanup_json struct ts_json *entries = ts_json_new_array();
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *got = NULL;
	const struct ts_json *e;
	size_t i;
	(void)state;

	assert_int_equal(ts_json_diff(ts_json_get_path(b, "l", "r", NULL),
				      ts_json_get_path(doc, "l", "r", NULL), "/l/r", entries, &err),
			 3);
	ts_json_array_foreach (entries, i, e)
		assert_int_equal(ts_json_undo_entry(doc, e), 1);
	got = compact(doc);
	/* the same members; quota, removed and set again, comes last */
	assert_string_equal(got, "{\"l\":{\"r\":{\"cpu\":{\"cpus\":\"1\",\"shares\":2,\"quota\":5},"
				 "\"memory\":{\"limit\":9}}}}");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_runc_spec),
		cmocka_unit_test(test_parse_events),
		cmocka_unit_test(test_compact_roundtrip_table),
		cmocka_unit_test(test_pretty_output),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_valid_text),
		cmocka_unit_test(test_parse_depth_limit),
		cmocka_unit_test(test_parse_len_bounded),
		cmocka_unit_test(test_get_duplicate_returns_last),
		cmocka_unit_test(test_object_set),
		cmocka_unit_test(test_object_set_errors),
		cmocka_unit_test(test_object_append_keeps_duplicates),
		cmocka_unit_test(test_object_find_duplicate),
		cmocka_unit_test(test_object_ensure),
		cmocka_unit_test(test_object_remove),
		cmocka_unit_test(test_array_mutators),
		cmocka_unit_test(test_array_mutator_errors),
		cmocka_unit_test(test_int_getters),
		cmocka_unit_test(test_int_getters_wrong_type),
		cmocka_unit_test(test_constructors),
		cmocka_unit_test(test_serialize_errors),
		cmocka_unit_test(test_serialize_path_escaped),
		cmocka_unit_test(test_equal_and_dup),
		cmocka_unit_test(test_dup_is_deep),
		cmocka_unit_test(test_foreach),
		cmocka_unit_test(test_utf8_sanitize),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_diff_not_an_array),
		cmocka_unit_test(test_undo_entry),
		cmocka_unit_test(test_diff_then_undo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
