/*
 * Unit tests of src/cdi/yaml.c (and the validator's duplicate checks in
 * src/cdi/spec.c) against hostile spec files, generated here (issue 10,
 * findings 7 and "smaller"): an alias bomb, 60,000 mapping keys, 20,000
 * devices, a NUL in a scalar.  The bombs have a generous time bound (the
 * fixed code takes milliseconds, the old one 34 s); the quadratic checks are
 * told by how their time grows (assert_not_quadratic()).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cdi/cdi.h"
#include "cdi/internal.h"
#include "util/cleanup.h"

#define TIME_BOUND_SEC 10.0

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A growing text buffer (open_memstream). */
struct text {
	char *buf;
	size_t len;
	FILE *f;
};

static void text_open(struct text *t)
{
	t->buf = NULL;
	t->len = 0;
	t->f = open_memstream(&t->buf, &t->len);
	assert_non_null(t->f);
}

static void text_close(struct text *t)
{
	assert_int_equal(fclose(t->f), 0);
}

/* Parse buf as spec_path; want_msg NULL: must be valid, else the exact
 * message after "<spec_path>: ".  Returns the seconds it took. */
static double parse_expect(const char *buf, size_t len, const char *spec_path, const char *want_msg)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_spec *spec = NULL;
	cleanup_free char *want = NULL;
	double t0 = now_sec();
	int r = ts_cdi_spec_parse(buf, len, spec_path, 0, &spec, &err);
	double dt = now_sec() - t0;

	if (want_msg == NULL) {
		if (r < 0)
			fail_msg("%s: %s", spec_path, err->msg);
		ts_cdi_spec_free(spec);
		return dt;
	}
	assert_int_equal(r, -EINVAL);
	assert_true(asprintf(&want, "%s: %s", spec_path, want_msg) > 0);
	assert_string_equal(err->msg, want);
	return dt;
}

/* One 64 KiB anchored scalar aliased 200,000 times: 665 KB of text, 13 GB
 * expanded.  Before: 34 s, 12.8 GB RSS, then "out of memory". */
static void test_alias_bomb(void **state)
{
	struct text t;
	double dt;

	(void)state;
	text_open(&t);
	fputs("cdiVersion: \"0.6.0\"\nkind: evil.test/bomb\nx: &a \"", t.f);
	for (int i = 0; i < 65536; i++)
		fputc('A', t.f);
	fputs("\"\ndevices: [", t.f);
	for (int i = 0; i < 200000; i++)
		fputs(i ? ",*a" : "*a", t.f);
	fputs("]\n", t.f);
	text_close(&t);
	dt = parse_expect(
		t.buf, t.len, "bomb.yaml",
		"line 3 column 4: document expands to more than 16777216 bytes (aliases)");
	assert_true(dt < TIME_BOUND_SEC);
	free(t.buf);
}

/* Nested aliases ("billion laughs"): each level a list of ten of the one before. */
static void test_nested_alias_bomb(void **state)
{
	struct text t;
	double dt;

	(void)state;
	text_open(&t);
	fputs("cdiVersion: \"0.6.0\"\nkind: evil.test/bomb\nl0: &l0 [\"", t.f);
	for (int i = 0; i < 1000; i++)
		fputc('B', t.f);
	fputs("\"]\n", t.f);
	for (int l = 1; l < 10; l++) {
		fprintf(t.f, "l%d: &l%d [", l, l);
		for (int i = 0; i < 10; i++)
			fprintf(t.f, "%s*l%d", i ? ", " : "", l - 1);
		fputs("]\n", t.f);
	}
	fputs("devices: *l9\n", t.f);
	text_close(&t);
	dt = parse_expect(t.buf, t.len, "laughs.yaml",
			  "line 3 column 10: document expands to more than 16777216 bytes "
			  "(aliases)");
	assert_true(dt < TIME_BOUND_SEC);
	free(t.buf);
}

/* Aliases within the bound are still expanded. */
static void test_small_aliases_expand(void **state)
{
	static const char doc[] = "cdiVersion: \"0.6.0\"\n"
				  "kind: vendor.com/dev\n"
				  "x: &edits {env: [A=1]}\n"
				  "devices:\n"
				  "- {name: a, containerEdits: *edits}\n"
				  "- {name: b, containerEdits: *edits}\n";

	(void)state;
	/* x is not a spec key: the aliases expanded, validation got to it */
	parse_expect(doc, sizeof(doc) - 1, "ok.yaml", "'/x': unknown key 'x'");
}

/* n keys in one mapping, the last repeating the first; returns the seconds. */
static double yaml_keys(int n)
{
	cleanup_free char *want = NULL;
	struct text t;
	double dt;

	text_open(&t);
	fputs("cdiVersion: \"0.6.0\"\nkind: evil.test/keys\ndevices:\n- name: d\n"
	      "  containerEdits: {env: [A=1]}\n  annotations:\n",
	      t.f);
	for (int i = 0; i < n; i++)
		fprintf(t.f, "    k%d: v\n", i);
	fputs("    k0: again\n", t.f);
	text_close(&t);
	assert_true(asprintf(&want, "line %d column 5: duplicate key 'k0'", n + 7) > 0);
	dt = parse_expect(t.buf, t.len, "keys.yaml", want);
	free(t.buf);
	return dt;
}

/*
 * The quadratic checks are told by how their time grows: four times the
 * input takes 16 times as long (before: 12.7 s for 60,000 keys), sorting
 * about 4.5 times, and 10 times under AddressSanitizer on a loaded
 * 2-core machine (0.349 s and 3.467 s, one parse each).  The bound, 12
 * times plus half a second, holds under valgrind and ASan, where an
 * absolute one does not.  A loaded machine only adds time: the small
 * input is parsed three times (its least counts), the large one again
 * only when the first is over the bound.
 */
static void assert_not_quadratic(double (*parse)(int), int n)
{
	double small = parse(n), large;

	for (int i = 0; i < 2; i++) {
		double t = parse(n);

		small = t < small ? t : small;
	}
	large = parse(4 * n);
	if (!(large < 12 * small + 0.5)) {
		double again = parse(4 * n);

		large = again < large ? again : large;
	}
	if (!(large < 12 * small + 0.5))
		fail_msg("%d: %.3f s, %d: %.3f s", n, small, 4 * n, large);
}

/* 60,000 keys in one mapping (one linear lookup per key before). */
static void test_60000_keys(void **state)
{
	(void)state;
	assert_not_quadratic(yaml_keys, 15000);
}

/* Annotation key i, three characters of [0-9A-Za-z]: 60,000 of them stay
 * below the annotations' 256 KiB bound. */
static void key3(char out[4], int i)
{
	static const char digits[] =
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

	out[0] = digits[i / (62 * 62)];
	out[1] = digits[i / 62 % 62];
	out[2] = digits[i % 62];
	out[3] = '\0';
}

/* n annotations in a JSON spec, the last key repeating the n-th; returns
 * the seconds the parse took. */
static double json_annotations(int n)
{
	cleanup_free char *want = NULL;
	struct text t;
	char k[4];
	double dt;

	text_open(&t);
	fputs("{\"cdiVersion\": \"0.6.0\", \"kind\": \"evil.test/keys\", \"devices\": [{\"name\": "
	      "\"d\", \"containerEdits\": {\"env\": [\"A=1\"]}, \"annotations\": {",
	      t.f);
	for (int i = 0; i < n; i++) {
		key3(k, i);
		fprintf(t.f, "\"%s\": \"\", ", k);
	}
	key3(k, n - 1);
	fprintf(t.f, "\"%s\": \"again\"}}]}", k);
	text_close(&t);
	assert_true(asprintf(&want, "'/devices/0/annotations/%s': duplicate key '%s'", k, k) > 0);
	dt = parse_expect(t.buf, t.len, "keys.json", want);
	free(t.buf);
	return dt;
}

/* The same in a JSON spec (yajl keeps duplicates, the validator finds
 * them): 60,000 annotations (before: 6.5 s). */
static void test_60000_keys_json(void **state)
{
	(void)state;
	assert_not_quadratic(json_annotations, 15000);
}

/* n devices, the last repeating the name of the 18th; returns the seconds. */
static double yaml_devices(int n)
{
	cleanup_free char *want = NULL;
	struct text t;
	double dt;

	text_open(&t);
	fputs("cdiVersion: \"0.6.0\"\nkind: evil.test/devs\ndevices:\n", t.f);
	for (int i = 0; i < n; i++)
		fprintf(t.f, "- {name: d%d, containerEdits: {env: [A=1]}}\n", i);
	fputs("- {name: d17, containerEdits: {env: [A=1]}}\n", t.f);
	text_close(&t);
	assert_true(asprintf(&want,
			     "'/devices/%d/name': duplicate device name 'd17' (also /devices/17)",
			     n) > 0);
	dt = parse_expect(t.buf, t.len, "devs.yaml", want);
	free(t.buf);
	return dt;
}

/* n netDevices, the last repeating the 6th's interface; returns the seconds. */
static double yaml_net_devices(int n)
{
	cleanup_free char *want = NULL;
	struct text t;
	double dt;

	text_open(&t);
	fputs("cdiVersion: \"1.1.0\"\nkind: evil.test/net\ndevices:\n- name: d\n"
	      "  containerEdits:\n    netDevices:\n",
	      t.f);
	for (int i = 0; i < n; i++)
		fprintf(t.f, "    - {hostInterfaceName: h%d, name: n%d}\n", i, i);
	fputs("    - {hostInterfaceName: h5, name: other}\n", t.f);
	text_close(&t);
	assert_true(asprintf(&want,
			     "'/devices/0/containerEdits/netDevices/%d/hostInterfaceName': "
			     "duplicate hostInterfaceName 'h5'",
			     n) > 0);
	dt = parse_expect(t.buf, t.len, "net.yaml", want);
	free(t.buf);
	return dt;
}

/* 20,000 devices, 20,000 netDevices: the pairwise checks took 12 s and 13.8 s
 * for 30,000 and 20,000 before. */
static void test_many_devices_and_net_devices(void **state)
{
	(void)state;
	assert_not_quadratic(yaml_devices, 5000);
	assert_not_quadratic(yaml_net_devices, 5000);
}

/* A NUL in a scalar would cut the C string short: "a\0evil" became the
 * device name "a" without a word. */
static void test_nul_in_scalar(void **state)
{
	static const char name[] = "cdiVersion: \"0.6.0\"\n"
				   "kind: vendor.com/dev\n"
				   "devices:\n"
				   "- name: \"a\\0evil\"\n"
				   "  containerEdits: {env: [A=1]}\n";
	static const char key[] =
		"cdiVersion: \"0.6.0\"\n"
		"kind: vendor.com/dev\n"
		"devices:\n"
		"- {name: a, containerEdits: {env: [A=1]}, \"annotations\\x00\": {}}\n";
	static const char env[] =
		"cdiVersion: \"0.6.0\"\n"
		"kind: vendor.com/dev\n"
		"devices:\n"
		"- {name: a, containerEdits: {env: [\"A=1\\x00LD_PRELOAD=/x\"]}}\n";

	(void)state;
	parse_expect(name, sizeof(name) - 1, "nul.yaml",
		     "line 4 column 9: NUL character in a string");
	parse_expect(key, sizeof(key) - 1, "nul.yaml",
		     "line 4 column 43: NUL character in a string");
	parse_expect(env, sizeof(env) - 1, "nul.yaml",
		     "line 4 column 36: NUL character in a string");
}

/* libyaml's reader errors name where they are (helper-18: a control
 * character on line 3 was "line 1 column 1") and what. */
static void test_reader_errors(void **state)
{
	static const char ctl[] = "cdiVersion: \"0.6.0\"\nkind: vendor.com/dev\nde\avices: []\n";
	static const char utf8[] = "cdiVersion: \"0.6.0\"\nkind: v\xff\n";

	(void)state;
	parse_expect(ctl, sizeof(ctl) - 1, "ctl.yaml",
		     "line 3 column 3: control characters are not allowed (U+0007)");
	parse_expect(utf8, sizeof(utf8) - 1, "utf8.yaml",
		     "line 2 column 8: invalid leading UTF-8 octet (byte 0xFF)");
}

/* Plain scalars resolve as go-yaml v2 resolves them; a float beyond a
 * double's range stays a string (it was written to JSON as "inf", and the
 * fuzzer's round trip read it back as a string: "20e0650"). */
static void test_plain_scalars(void **state)
{
	static const char yaml[] = "[20e0650, -1e999, 1e-999, 1e3, .5, 0x10, 0o17, 017, 1_000, "
				   "~, yes, Off, 1.2.3, 0x, 18446744073709551616, 0.6]\n";
	static const char want[] =
		"[\"20e0650\", \"-1e999\", 0, 1000, 0.5, 16, 15, 15, 1000, "
		"null, true, false, \"1.2.3\", \"0x\", 1.8446744073709552e+19, 0.6]";
	cleanup_json struct ts_json *got = NULL, *exp = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;

	(void)state;
	if (ts_cdi_yaml_parse(yaml, sizeof(yaml) - 1, "scalars.yaml", &got, &err) < 0)
		fail_msg("%s", err->msg);
	assert_int_equal(ts_json_parse(want, sizeof(want) - 1, "want", &exp, &err), 0);
	assert_int_equal(ts_json_serialize(got, false, &text, NULL, &err), 0);
	if (!ts_json_equal(got, exp))
		fail_msg("got %s", text);
	/* the shortest spelling (helper-19: 0.6 read "0.59999999999999998") */
	assert_non_null(strstr(text, ",0.6]"));
}

/* libyaml's loader registers anchors quadratically (helper-23: 60,000
 * anchors, 81 s before the node bound refused the file): more than 1000
 * are refused first, at the 1001st, in a linear pass (3000 here: enough
 * to be refused, cheap for CI); 1000 are read.  A '&' in text is no
 * anchor. */
static void test_many_anchors(void **state)
{
	struct text t;
	char *amps;
	double dt;

	(void)state;
	for (int n = 1000; n <= 3000; n += 2000) {
		text_open(&t);
		fputs("cdiVersion: \"0.6.0\"\nkind: a.com/b\ndevices:\n", t.f);
		for (int i = 0; i < n; i++)
			fprintf(t.f, "- {name: d%d, containerEdits: &l%d {env: [\"A=%d\"]}}\n", i,
				i, i);
		text_close(&t);
		dt = parse_expect(t.buf, t.len, "anchors.yaml",
				  n == 1000 ? NULL : "line 1004 column 33: more than 1000 anchors");
		if (dt > 2.0)
			fail_msg("%d anchors took %.2f s", n, dt);
		free(t.buf);
	}
	/* 5000 '&' in strings, one anchor: counted, read */
	amps = malloc(5001);
	assert_non_null(amps);
	memset(amps, '&', 5000);
	amps[5000] = '\0';
	text_open(&t);
	fprintf(t.f,
		"cdiVersion: \"0.6.0\"\nkind: a.com/b\nannotations: {a.b/c: \"%s\"}\n"
		"devices: [{name: x, containerEdits: &e {env: [A=1]}}]\n",
		amps);
	text_close(&t);
	parse_expect(t.buf, t.len, "amps.yaml", NULL);
	free(t.buf);
	free(amps);
}

/* YAML 1.1's merge key, as go-yaml applies it (helper-22: refused as an
 * unknown key '<<'): the mapping's own keys win wherever "<<" stands, then
 * the earlier of a sequence's mappings; a quoted "<<" is a plain key; a
 * merge of anything but mappings is refused with its place; a duplicate
 * key after a merge key is named at its own line. */
static void test_merge_keys(void **state)
{
	static const char yaml[] = "base: &b {p: 1, q: 1}\n"
				   "more: &m {q: 2, r: 2}\n"
				   "one: {q: 0, <<: *b}\n"
				   "two: {<<: [*m, *b]}\n"
				   "three: {\"<<\": 5}\n";
	static const char want[] =
		"{\"base\": {\"p\": 1, \"q\": 1}, \"more\": {\"q\": 2, \"r\": 2},"
		" \"one\": {\"q\": 0, \"p\": 1},"
		" \"two\": {\"q\": 2, \"r\": 2, \"p\": 1}, \"three\": {\"<<\": 5}}";
	static const char scalar[] = "a: {<<: 5}\n";
	static const char seq_scalar[] = "b: &b {p: 1}\na: {<<: [*b, 5]}\n";
	static const char dup[] = "a:\n  <<: {p: 1}\n  q: 1\n  q: 2\n";
	cleanup_json struct ts_json *got = NULL, *exp = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;

	(void)state;
	if (ts_cdi_yaml_parse(yaml, sizeof(yaml) - 1, "merge.yaml", &got, &err) < 0)
		fail_msg("%s", err->msg);
	assert_int_equal(ts_json_parse(want, sizeof(want) - 1, "want", &exp, &err), 0);
	assert_int_equal(ts_json_serialize(got, false, &text, NULL, &err), 0);
	if (!ts_json_equal(got, exp))
		fail_msg("got %s", text);
	parse_expect(scalar, sizeof(scalar) - 1, "m.yaml",
		     "line 1 column 9: merge key '<<' needs a mapping or a sequence of mappings");
	parse_expect(seq_scalar, sizeof(seq_scalar) - 1, "m.yaml",
		     "line 2 column 14: merge key '<<' needs a mapping or a sequence of mappings");
	parse_expect(dup, sizeof(dup) - 1, "m.yaml", "line 4 column 3: duplicate key 'q'");
}

/* ts_cdi_yaml_serialize(): the exact text of a small document, and every
 * scalar a plain style would change read back as it was written. */
static void test_serialize(void **state)
{
	static const char json[] =
		"{\"kind\": \"NodeResourceTopology\", \"metadata\": {\"name\": \"w1\"},"
		" \"zones\": [{\"name\": \"node-0\", \"costs\": [{\"name\": \"node-0\","
		" \"value\": 10}], \"resources\": [{\"name\": \"cpu\", \"capacity\": \"8\"}]}],"
		" \"empty\": [], \"none\": {}, \"cpus\": \"0-3\", \"reserved\": \"\"}";
	static const char want[] = "kind: NodeResourceTopology\n"
				   "metadata:\n"
				   "  name: w1\n"
				   "zones:\n"
				   "- name: node-0\n"
				   "  costs:\n"
				   "  - name: node-0\n"
				   "    value: 10\n"
				   "  resources:\n"
				   "  - name: cpu\n"
				   "    capacity: \"8\"\n"
				   "empty: []\n"
				   "none: {}\n"
				   "cpus: 0-3\n"
				   "reserved: \"\"\n";
	static const char tricky[] =
		"{\"s\": [\"8\", \"true\", \"yes\", \"off\", \"null\", \"~\", \"\", \"0x10\", "
		"\"0640\","
		" \"1e3\", \".5\", \"-1\", \"a: b\", \"- x\", \"#c\", \"x #y\", \"two\\nlines\","
		" \"\\u00e9t\\u00e9\", \" pad \", \"[1]\", \"{a}\", \"*ref\", \"&a\", \"!tag\", "
		"\"%p\","
		" \"@x\", \"`x\", \"'q'\", \"\\\"d\\\"\", \"tab\\there\"],"
		" \"n\": [0, -7, 3.25, 18446744073709551615], \"b\": [true, false], \"z\": null,"
		" \"8\": \"key that reads as a number\", \"true\": 1}";
	cleanup_json struct ts_json *in = NULL, *back = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *text2 = NULL;

	(void)state;
	assert_int_equal(ts_json_parse(json, sizeof(json) - 1, "in", &in, &err), 0);
	assert_int_equal(ts_cdi_yaml_serialize(in, &text, &err), 0);
	assert_string_equal(text, want);
	ts_json_free(in);
	in = NULL;
	assert_int_equal(ts_json_parse(tricky, sizeof(tricky) - 1, "in", &in, &err), 0);
	assert_int_equal(ts_cdi_yaml_serialize(in, &text2, &err), 0);
	if (ts_cdi_yaml_parse(text2, strlen(text2), "out.yaml", &back, &err) < 0)
		fail_msg("%s\n%s", err->msg, text2);
	if (!ts_json_equal(in, back))
		fail_msg("read back differs:\n%s", text2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alias_bomb),
		cmocka_unit_test(test_nested_alias_bomb),
		cmocka_unit_test(test_small_aliases_expand),
		cmocka_unit_test(test_60000_keys),
		cmocka_unit_test(test_60000_keys_json),
		cmocka_unit_test(test_many_devices_and_net_devices),
		cmocka_unit_test(test_nul_in_scalar),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_plain_scalars),
		cmocka_unit_test(test_merge_keys),
		cmocka_unit_test(test_many_anchors),
		cmocka_unit_test(test_serialize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
