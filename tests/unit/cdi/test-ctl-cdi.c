/* Unit tests of src/cli/ctl-cdi.c: `toposhimctl cdi list|validate|resolve`. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/cleanup.h"
#include "util/fileio.h"

int ts_ctl_cdi(int argc, char **argv);

static char root[] = "/tmp/ts-ctl-cdi-XXXXXX";
static char dir[64], bundle[64], config_path[64];

static void write_file(const char *d, const char *name, const char *text)
{
	cleanup_close int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_error struct ts_error *err = NULL;

	assert_true(dfd >= 0);
	assert_int_equal(ts_write_file_atomic_at(dfd, name, text, strlen(text), 0644, &err), 0);
}

static int setup(void **state)
{
	if (mkdtemp(root) == NULL)
		return -1;
	snprintf(dir, sizeof(dir), "%s/cdi", root);
	snprintf(bundle, sizeof(bundle), "%s/bundle", root);
	snprintf(config_path, sizeof(config_path), "%s/toposhim.json", root);
	if (mkdir(dir, 0755) < 0 || mkdir(bundle, 0755) < 0)
		return -1;
	write_file(root, "toposhim.json",
		   "{\"cdi\":{\"require_root_owned\":false,\"index_path\":null}}");
	write_file(dir, "a.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/c\ncontainerEdits: {env: [SPEC=1]}\n"
		   "devices:\n- {name: d0, containerEdits: {env: [D0=1]}}\n"
		   "- {name: d1, containerEdits: {mounts: [{hostPath: /h, containerPath: /c}]}}\n");
	write_file(dir, "b.json",
		   "{\"cdiVersion\":\"0.3.0\",\"kind\":\"v.com/c\",\"devices\":[{\"name\":\"x\","
		   "\"containerEdits\":{\"deviceNodes\":[{\"path\":\"dev/x0\"}]}}]}");
	write_file(bundle, "config.json",
		   "{\"ociVersion\":\"1.0.2\",\"process\":{\"env\":[\"PATH=/bin\"]}}");
	setenv("TOPOSHIM_CONFIG", config_path, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) == 0 ? 0 : -1;
}

/* Run ts_ctl_cdi with stdout captured; *ret_out gets the text (caller frees). */
static int run(char **ret_out, char *first, ...)
{
	char *argv[16] = {(char *)"cdi", (char *)"--spec-dir", dir};
	int argc = 3, saved, fd, r;
	char tmp[] = "/tmp/ts-ctl-cdi-out-XXXXXX";
	cleanup_error struct ts_error *err = NULL;
	va_list ap;

	va_start(ap, first);
	for (char *a = first; a != NULL; a = va_arg(ap, char *))
		argv[argc++] = a;
	va_end(ap);
	fd = mkstemp(tmp);
	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(dup2(fd, STDOUT_FILENO) >= 0);
	r = ts_ctl_cdi(argc, argv);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	close(fd);
	assert_int_equal(ts_read_file_at(AT_FDCWD, tmp, 0, ret_out, NULL, &err), 0);
	unlink(tmp);
	return r;
}

static void test_list(void **state)
{
	cleanup_free char *out = NULL, *want = NULL;

	assert_int_equal(run(&out, "list", NULL), 0);
	assert_true(
		asprintf(&want,
			 "v.com/c=d0\t%1$s/a.yaml\nv.com/c=d1\t%1$s/a.yaml\n"
			 "rejected\t%1$s/b.json: '/devices/0/containerEdits/deviceNodes/0/path': "
			 "not absolute 'dev/x0'\n",
			 dir) > 0);
	assert_string_equal(out, want);
}

static void test_list_json(void **state)
{
	cleanup_free char *out = NULL, *want = NULL;

	assert_int_equal(run(&out, "list", "--json", NULL), 0);
	assert_true(
		asprintf(&want,
			 "{\n    \"devices\": [\n        {\n            \"name\": \"v.com/c=d0\",\n"
			 "            \"spec\": \"%1$s/a.yaml\"\n        },\n        {\n"
			 "            \"name\": \"v.com/c=d1\",\n            \"spec\": "
			 "\"%1$s/a.yaml\"\n        }\n    ],\n    \"rejected\": [\n        "
			 "\"%1$s/b.json: '/devices/0/containerEdits/deviceNodes/0/path': not "
			 "absolute 'dev/x0'\"\n    ]\n}\n",
			 dir) > 0);
	assert_string_equal(out, want);
}

static void test_validate(void **state)
{
	cleanup_free char *out = NULL, *out2 = NULL, *out3 = NULL, *want = NULL, *a = NULL,
			  *b = NULL;

	assert_int_equal(run(&out, "validate", NULL), 1);
	assert_true(asprintf(&want,
			     "%s/b.json: devices.0.containerEdits.deviceNodes.0.path: not absolute "
			     "'dev/x0'\n",
			     dir) > 0);
	assert_string_equal(out, want);
	assert_true(asprintf(&a, "%s/a.yaml", dir) > 0);
	assert_int_equal(run(&out2, "validate", a, NULL), 0);
	assert_string_equal(out2, "");
	assert_true(asprintf(&b, "%s/b.json", dir) > 0);
	assert_int_equal(run(&out3, "validate", a, b, NULL), 1);
	assert_string_equal(out3, want);
}

/* --spec-dir with a config that names an index: the index path opts owned
 * was never freed (24 bytes for the default one, issue 10); contrib/
 * run-tests.sh runs this under valgrind, where a leak fails it. */
static void test_spec_dir_with_index_path(void **state)
{
	cleanup_free char *out = NULL, *text = NULL;
	char path[96];

	assert_true(asprintf(&text,
			     "{\"cdi\":{\"require_root_owned\":false,\"index_path\":\"%s/"
			     "cdi-index\"}}",
			     root) > 0);
	write_file(root, "with-index.json", text);
	snprintf(path, sizeof(path), "%s/with-index.json", root);
	setenv("TOPOSHIM_CONFIG", path, 1);
	assert_int_equal(run(&out, "validate", NULL), 1);
	setenv("TOPOSHIM_CONFIG", config_path, 1);
	assert_non_null(strstr(out, "b.json: devices.0.containerEdits.deviceNodes.0.path"));
}

static void test_resolve(void **state)
{
	cleanup_free char *out = NULL;

	assert_int_equal(run(&out, "resolve", "v.com/c=d0", "v.com/c=d1", NULL), 0);
	assert_string_equal(out,
			    "{\n    \"process\": {\n        \"env\": [\n            "
			    "\"SPEC=1\",\n            \"D0=1\"\n        ]\n    },\n"
			    "    \"mounts\": [\n        {\n            \"destination\": \"/c\",\n"
			    "            \"type\": \"bind\",\n"
			    "            \"source\": \"/h\",\n"
			    "            \"options\": [\n                \"rbind\"\n            ]\n"
			    "        }\n    ]\n}\n");
}

static void test_resolve_bundle_diff(void **state)
{
	cleanup_free char *out = NULL, *want = NULL, *before = NULL;
	cleanup_error struct ts_error *err = NULL;
	char cfg[128];

	snprintf(cfg, sizeof(cfg), "%s/config.json", bundle);
	assert_int_equal(ts_read_file_at(AT_FDCWD, cfg, 0, &before, NULL, &err), 0);
	assert_int_equal(run(&out, "resolve", "v.com/c=d0", "--bundle", bundle, NULL), 0);
	assert_true(
		asprintf(&want,
			 "--- %1$s\n+++ %1$s (with CDI devices)\n {\n     \"ociVersion\": "
			 "\"1.0.2\",\n     \"process\": {\n         \"env\": [\n-            "
			 "\"PATH=/bin\"\n+            \"PATH=/bin\",\n+            \"SPEC=1\",\n"
			 "+            \"D0=1\"\n         ]\n     }\n }\n",
			 cfg) > 0);
	assert_string_equal(out, want);
	/* nothing written */
	{
		cleanup_free char *after = NULL;

		assert_int_equal(ts_read_file_at(AT_FDCWD, cfg, 0, &after, NULL, &err), 0);
		assert_string_equal(before, after);
	}
}

static void test_resolve_bundle_json(void **state)
{
	cleanup_free char *out = NULL;

	assert_int_equal(run(&out, "resolve", "--bundle", bundle, "v.com/c=d0", "--json", NULL), 0);
	assert_string_equal(out, "{\n    \"ociVersion\": \"1.0.2\",\n    \"process\": {\n"
				 "        \"env\": [\n            \"PATH=/bin\",\n            "
				 "\"SPEC=1\",\n            \"D0=1\"\n        ]\n    }\n}\n");
}

static void test_errors(void **state)
{
	cleanup_free char *out = NULL, *out2 = NULL, *out3 = NULL, *out4 = NULL;

	assert_int_equal(run(&out, "resolve", "v.com/c=nope", NULL), 1);
	assert_string_equal(out, "");
	assert_int_equal(run(&out2, "frobnicate", NULL), 2);
	assert_int_equal(run(&out3, "list", "--yaml", NULL), 2);
	assert_int_equal(run(&out4, "resolve", "v.com/c=d0", "--json", NULL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_list_json),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_spec_dir_with_index_path),
		cmocka_unit_test(test_resolve),
		cmocka_unit_test(test_resolve_bundle_diff),
		cmocka_unit_test(test_resolve_bundle_json),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
