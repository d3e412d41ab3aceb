/*
 * Unit tests of src/cdi/yaml.c (and the validator's duplicate checks in
 * src/cdi/spec.c) against hostile spec files, generated here (issue 10,
 * findings 7 and "smaller"): an alias bomb, 60,000 mapping keys, 30,000
 * devices, a NUL in a scalar.  The time bounds are generous (the fixed code
 * takes milliseconds, valgrind included; the old one took 6 to 34 s).
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

/* 60,000 keys in one mapping, the last one repeating the first.  Before:
 * 29 s (one linear lookup per key). */
static void test_60000_keys(void **state)
{
	struct text t;
	double dt;

	(void)state;
	text_open(&t);
	fputs("cdiVersion: \"0.6.0\"\nkind: evil.test/keys\ndevices:\n- name: d\n"
	      "  containerEdits: {env: [A=1]}\n  annotations:\n",
	      t.f);
	for (int i = 0; i < 60000; i++)
		fprintf(t.f, "    k%d: v\n", i);
	fputs("    k0: again\n", t.f);
	text_close(&t);
	dt = parse_expect(t.buf, t.len, "keys.yaml", "line 60007 column 5: duplicate key 'k0'");
	assert_true(dt < TIME_BOUND_SEC);
	free(t.buf);
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
 * them): 60,000 annotations.  Before: 6.5 s, 16 times the 15,000 case;
 * the bound allows 8 times plus noise, where n log n gives 4.5. */
static void test_60000_keys_json(void **state)
{
	double small, large;

	(void)state;
	small = json_annotations(15000);
	large = json_annotations(60000);
	assert_true(large < 8 * small + 0.5);
}

/* 30,000 devices with one repeated name, 20,000 netDevices with one repeated
 * interface: the pairwise checks were quadratic (13.9 s for the second). */
static void test_many_devices_and_net_devices(void **state)
{
	struct text t;
	double dt;

	(void)state;
	text_open(&t);
	fputs("cdiVersion: \"0.6.0\"\nkind: evil.test/devs\ndevices:\n", t.f);
	for (int i = 0; i < 30000; i++)
		fprintf(t.f, "- {name: d%d, containerEdits: {env: [A=1]}}\n", i);
	fputs("- {name: d17, containerEdits: {env: [A=1]}}\n", t.f);
	text_close(&t);
	dt = parse_expect(t.buf, t.len, "devs.yaml",
			  "'/devices/30000/name': duplicate device name 'd17' (also /devices/17)");
	assert_true(dt < TIME_BOUND_SEC);
	free(t.buf);

	text_open(&t);
	fputs("cdiVersion: \"1.1.0\"\nkind: evil.test/net\ndevices:\n- name: d\n"
	      "  containerEdits:\n    netDevices:\n",
	      t.f);
	for (int i = 0; i < 20000; i++)
		fprintf(t.f, "    - {hostInterfaceName: h%d, name: n%d}\n", i, i);
	fputs("    - {hostInterfaceName: h5, name: other}\n", t.f);
	text_close(&t);
	dt = parse_expect(t.buf, t.len, "net.yaml",
			  "'/devices/0/containerEdits/netDevices/20000/hostInterfaceName': "
			  "duplicate hostInterfaceName 'h5'");
	assert_true(dt < TIME_BOUND_SEC);
	free(t.buf);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
