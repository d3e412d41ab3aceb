/* Unit tests of src/cli/config.c. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/config.h"
#include "cli/passthrough.h"
#include "util/cleanup.h"

/* Write text to a fresh temporary file; returns its path (caller frees). */
static char *write_tmp(const char *text)
{
	char *path = strdup("/tmp/ts-config-XXXXXX");
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void test_load_absent_is_empty(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL;

	/* a file named by TOPOSHIM_CONFIG must exist */
	assert_int_equal(ts_cli_config_load("/nonexistent/toposhim.json", &j, &err), -ENOENT);
	assert_string_equal(err->msg, "/nonexistent/toposhim.json: cannot open");
	ts_error_clear(&err);
	/* the default file may be absent: the defaults apply */
	if (access(TS_CLI_CONFIG_DEFAULT, F_OK) == 0) {
		print_message("# %s exists here: its absence is not tested\n",
			      TS_CLI_CONFIG_DEFAULT);
		return;
	}
	assert_int_equal(ts_cli_config_load(TS_CLI_CONFIG_DEFAULT, &j, &err), 0);
	assert_int_equal(j->type, TS_JSON_OBJECT);
	assert_int_equal(j->u.object.len, 0);
}

static void test_load_errors(void **state)
{
	static const struct {
		const char *text, *want_suffix;
	} rows[] = {
		{"{\n  \"runtime\": {\"path\": }\n}\n",
		 ": line 2 column 23: parse error: unallowed token at this point in JSON text"},
		{"  \n", ": empty document"},
		{"[1]", ": '/': expected object, got array"},
		/* a member given twice (helper-9: the last state_dir counted) */
		{"{\"state_dir\": \"/run/a\", \"state_dir\": \"/run/b\"}",
		 ": '/state_dir': duplicate key"},
		{"{\"cdi\": {\"spec_dirs\": [\"/etc/cdi\"]}, \"plugins\": [{\"name\": \"a\"}, "
		 "{\"name\": \"b\", \"sandbox\": {\"x\": 1, \"x\": 2}}]}",
		 ": '/plugins/1/sandbox/x': duplicate key"},
		{"{\"placement\": {\"a/b\": {\"k\": 1, \"k~\": 2, \"k\": 3}}}",
		 ": '/placement/a~1b/k': duplicate key"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *j = NULL;
		cleanup_free char *path = write_tmp(rows[i].text), *want = NULL;

		assert_int_equal(ts_cli_config_load(path, &j, &err), -EINVAL);
		assert_true(asprintf(&want, "%s%s", path, rows[i].want_suffix) > 0);
		assert_string_equal(err->msg, want);
		assert_null(j);
		unlink(path);
	}
}

static void test_load_directory(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL;

	assert_int_equal(ts_cli_config_load("/tmp", &j, &err), -EISDIR);
	assert_string_equal(err->msg, "/tmp: cannot read");
}

static void test_runtime_read(void **state)
{
	const char *text =
		"{\"runtime\": {\"path\": \"/opt/crun\", \"search\": [\"crun\", \"runc\"]}}";
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL;
	struct ts_cli_runtime_config rc;

	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &j, &err), 0);
	assert_int_equal(ts_cli_runtime_config_read(j, "c.json", &rc, &err), 0);
	assert_string_equal(rc.path, "/opt/crun");
	assert_string_equal(rc.path_origin, "c.json: '/runtime/path'");
	assert_string_equal(rc.search[0], "crun");
	assert_string_equal(rc.search[1], "runc");
	assert_null(rc.search[2]);
	ts_cli_runtime_config_release(&rc);
	assert_null(rc.search);
}

static void test_runtime_absent(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL;
	struct ts_cli_runtime_config rc;

	assert_int_equal(ts_json_parse("{\"runtime\": {}}", 15, "c.json", &j, &err), 0);
	assert_int_equal(ts_cli_runtime_config_read(j, "c.json", &rc, &err), 0);
	assert_null(rc.path);
	assert_null(rc.search);
	ts_cli_runtime_config_release(&rc);
}

static void test_runtime_errors(void **state)
{
	static const struct {
		const char *text, *want;
	} rows[] = {
		{"{\"runtime\": []}", "c.json: '/runtime': expected object, got array"},
		{"{\"runtime\": {\"path\": 1}}",
		 "c.json: '/runtime/path': expected string, got number"},
		{"{\"runtime\": {\"path\": \"\"}}", "c.json: '/runtime/path': empty path ''"},
		{"{\"runtime\": {\"search\": \"runc\"}}",
		 "c.json: '/runtime/search': expected array, got string"},
		{"{\"runtime\": {\"search\": []}}", "c.json: '/runtime/search': empty list"},
		{"{\"runtime\": {\"search\": [\"runc\", null]}}",
		 "c.json: '/runtime/search/1': expected string, got null"},
		{"{\"runtime\": {\"search\": [\"\"]}}",
		 "c.json: '/runtime/search/0': empty name ''"},
		/* helper-8: a misspelt member was a setting silently ignored */
		{"{\"runtime\": {\"path\": \"runc\", \"extra\": 1}}",
		 "c.json: '/runtime/extra': unknown key"},
		{"{\"runtime\": {\"serach\": [\"crun\"]}}",
		 "c.json: '/runtime/serach': unknown key"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *j = NULL;
		struct ts_cli_runtime_config rc = {NULL, NULL, NULL};

		assert_int_equal(
			ts_json_parse(rows[i].text, strlen(rows[i].text), "c.json", &j, &err), 0);
		assert_int_equal(ts_cli_runtime_config_read(j, "c.json", &rc, &err), -EINVAL);
		assert_string_equal(err->msg, rows[i].want);
		assert_null(rc.path_origin);
	}
}

/* A container keeps the runtime that created it, whatever the config says
 * now (issue 14); the path comes from the config and $PATH, never from a
 * record (issue 10). */
static void test_runtime_for_container(void **state)
{
	char dir[] = "/tmp/ts-rtfc-XXXXXX";
	cleanup_free char *cmd = NULL, *cfg_text = NULL, *path_env = NULL, *old_path = NULL;
	cleanup_free char *root = NULL, *want_runc = NULL, *want_crun = NULL;
	cleanup_json struct ts_json *cfg = NULL;
	cleanup_error struct ts_error *err = NULL;
	const char *p = getenv("PATH");

	assert_non_null(mkdtemp(dir));
	old_path = p != NULL ? strdup(p) : NULL;
	assert_true(asprintf(&cmd,
			     "set -e; cd %s; mkdir bin root root/r1 root/c1 root/x;"
			     "printf '#!/bin/sh\n' >bin/runc; printf '#!/bin/sh\n' >bin/crun;"
			     "printf '#!/bin/sh\n' >bin/wrapper;"
			     "chmod 0755 bin/runc bin/crun bin/wrapper; : >root/r1/state.json;"
			     ": >root/c1/status",
			     dir) > 0);
	assert_int_equal(system(cmd), 0);
	assert_true(asprintf(&path_env, "%s/bin", dir) > 0);
	assert_true(asprintf(&root, "%s/root", dir) > 0);
	assert_true(asprintf(&want_runc, "%s/bin/runc", dir) > 0);
	assert_true(asprintf(&want_crun, "%s/bin/crun", dir) > 0);
	setenv("PATH", path_env, 1);
	unsetenv("TOPOSHIM_RUNTIME");
	unsetenv("TOPOSHIM_DEPTH");
	/* the config now says crun */
	assert_true(asprintf(&cfg_text, "{\"runtime\": {\"path\": \"%s\"}}", want_crun) > 0);
	assert_int_equal(ts_json_parse(cfg_text, strlen(cfg_text), "c.json", &cfg, &err), 0);
	static const struct {
		const char *id;
		int want; /* 0 runc, 1 crun */
	} rows[] = {
		{"r1", 0}, /* created by runc before the switch: runc */
		{"c1", 1}, /* crun's */
		{"x", 1},  /* cannot tell: the configured one */
		{"gone", 1},
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *got = NULL;

		assert_int_equal(
			ts_cli_runtime_for_container(cfg, "c.json", root, rows[i].id, &got, &err),
			0);
		assert_string_equal(got, rows[i].want ? want_crun : want_runc);
	}
	/* a wrapper of unknown family is trusted with every container */
	{
		cleanup_json struct ts_json *wcfg = NULL;
		cleanup_free char *wtext = NULL, *want_wrapper = NULL, *got = NULL;

		assert_true(asprintf(&want_wrapper, "%s/bin/wrapper", dir) > 0);
		assert_true(asprintf(&wtext, "{\"runtime\": {\"path\": \"%s\"}}", want_wrapper) >
			    0);
		assert_int_equal(ts_json_parse(wtext, strlen(wtext), "c.json", &wcfg, &err), 0);
		assert_int_equal(
			ts_cli_runtime_for_container(wcfg, "c.json", root, "r1", &got, &err), 0);
		assert_string_equal(got, want_wrapper);
	}
	/* and the other way round: runc configured, a container of crun's */
	{
		cleanup_json struct ts_json *rcfg = NULL;
		cleanup_free char *rtext = NULL, *got_c = NULL, *got_r = NULL;

		assert_true(asprintf(&rtext, "{\"runtime\": {\"path\": \"%s\"}}", want_runc) > 0);
		assert_int_equal(ts_json_parse(rtext, strlen(rtext), "c.json", &rcfg, &err), 0);
		assert_int_equal(
			ts_cli_runtime_for_container(rcfg, "c.json", root, "c1", &got_c, &err), 0);
		assert_string_equal(got_c, want_crun);
		assert_int_equal(
			ts_cli_runtime_for_container(rcfg, "c.json", root, "r1", &got_r, &err), 0);
		assert_string_equal(got_r, want_runc);
	}
	/* an unknown option hid the id: the first candidate a runtime keeps */
	{
		struct ts_cli_args args = {.root = root,
					   .container_id_candidates = {"value", "r1"}};
		cleanup_free char *got = NULL, *got2 = NULL;
		int depth = -1;

		assert_false(ts_cli_container_known(root, "value"));
		assert_true(ts_cli_container_known(root, "r1"));
		assert_int_equal(
			ts_cli_runtime_for_command(&args, cfg, "c.json", &got, &depth, &err), 0);
		assert_string_equal(got, want_runc);
		assert_int_equal(depth, 0); /* TOPOSHIM_DEPTH unset */
		args.container_id_candidates[1] = "gone";
		assert_int_equal(
			ts_cli_runtime_for_command(&args, cfg, "c.json", &got2, &depth, &err), 0);
		assert_string_equal(got2, want_crun);
	}
	/* no --root: crun's default root is $XDG_RUNTIME_DIR/crun when set */
	{
		cleanup_json struct ts_json *rcfg = NULL;
		cleanup_free char *rtext = NULL, *xdg = NULL, *got = NULL, *mk = NULL;
		const char *old_xdg = getenv("XDG_RUNTIME_DIR");
		cleanup_free char *saved_xdg = old_xdg != NULL ? strdup(old_xdg) : NULL;

		assert_true(asprintf(&xdg, "%s/xdg", dir) > 0);
		assert_true(asprintf(&mk, "/bin/mkdir -p %s/crun/c2 && : >%s/crun/c2/status", xdg,
				     xdg) > 0);
		assert_int_equal(system(mk), 0);
		setenv("XDG_RUNTIME_DIR", xdg, 1);
		assert_true(asprintf(&rtext, "{\"runtime\": {\"path\": \"%s\"}}", want_runc) > 0);
		assert_int_equal(ts_json_parse(rtext, strlen(rtext), "c.json", &rcfg, &err), 0);
		assert_true(ts_cli_container_known(NULL, "c2"));
		assert_int_equal(
			ts_cli_runtime_for_container(rcfg, "c.json", NULL, "c2", &got, &err), 0);
		assert_string_equal(got, want_crun);
		if (saved_xdg != NULL)
			setenv("XDG_RUNTIME_DIR", saved_xdg, 1);
		else
			unsetenv("XDG_RUNTIME_DIR");
	}
	if (old_path != NULL)
		setenv("PATH", old_path, 1);
	free(cmd);
	assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_absent_is_empty),  cmocka_unit_test(test_load_errors),
		cmocka_unit_test(test_load_directory),	      cmocka_unit_test(test_runtime_read),
		cmocka_unit_test(test_runtime_absent),	      cmocka_unit_test(test_runtime_errors),
		cmocka_unit_test(test_runtime_for_container),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
