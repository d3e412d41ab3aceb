/* Unit tests of src/plugin/config.c: the "plugins" list and the NRI v0.1 reader. */
#include <errno.h>
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

#include "plugin/internal.h"
#include "util/cleanup.h"

static const struct config_row {
	const char *name;
	const char *config;
	int want_ret;
	const char *want_msg;
} rows[] = {
	{"no plugins", "{}", 0, NULL},
	{"null plugins", "{\"plugins\": null}", 0, NULL},
	{"plugins not a list", "{\"plugins\": {}}", -EINVAL,
	 "c.json: '/plugins': expected array, got object"},
	{"entry not an object", "{\"plugins\": [1]}", -EINVAL,
	 "c.json: '/plugins/0': expected object, got number"},
	{"missing type", "{\"plugins\": [{\"path\": \"/bin/true\"}]}", -EINVAL,
	 "c.json: '/plugins/0': missing 'type'"},
	{"type with slash", "{\"plugins\": [{\"type\": \"../x\"}]}", -EINVAL,
	 "c.json: '/plugins/0/type': invalid plugin name '../x'"},
	{"type dot-dot", "{\"plugins\": [{\"type\": \"..\"}]}", -EINVAL,
	 "c.json: '/plugins/0/type': invalid plugin name '..'"},
	{"relative path", "{\"plugins\": [{\"type\": \"a\", \"path\": \"bin/a\"}]}", -EINVAL,
	 "c.json: '/plugins/0/path': not absolute 'bin/a'"},
	{"unknown key", "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"timeout\": 3}]}",
	 -EINVAL, "c.json: '/plugins/0': unknown key 'timeout'"},
	{"timeout zero", "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"timeout_ms\": 0}]}",
	 -EINVAL, "c.json: '/plugins/0/timeout_ms': invalid timeout '0' (expected 1 to 600000)"},
	{"timeout fraction",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"timeout_ms\": 1.5}]}", -EINVAL,
	 "c.json: '/plugins/0/timeout_ms': invalid timeout '1.5' (expected 1 to 600000)"},
	{"timeout string",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"timeout_ms\": \"1\"}]}", -EINVAL,
	 "c.json: '/plugins/0/timeout_ms': expected number, got string"},
	{"on_error",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"on_error\": \"maybe\"}]}", -EINVAL,
	 "c.json: '/plugins/0/on_error': invalid value 'maybe' (expected fail or ignore)"},
	{"stage", "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"stages\": [\"start\"]}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/stages/0': unknown stage 'start' (expected pre-create, create or "
	 "delete)"},
	{"no stages", "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"stages\": []}]}",
	 -EINVAL, "c.json: '/plugins/0/stages': empty list"},
	{"capability",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"capabilities\": "
	 "[\"CAP_CHOWN\", \"CAP_FOO\"]}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/capabilities/1': unknown capability 'CAP_FOO'"},
	{"capability without prefix",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"capabilities\": "
	 "[\"chown\"]}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/capabilities/0': unknown capability 'chown'"},
	{"allow",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"allow\": "
	 "[\"fork\"]}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/allow/0': unknown call or group 'fork'"},
	{"sandbox key",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"seccomp\": {}}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox': unknown key 'seccomp'"},
	{"uid negative",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"uid\": -1}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/uid': invalid id '-1'"},
	{"second entry", "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\"}, {\"type\": \"\"}]}",
	 -EINVAL, "c.json: '/plugins/1/type': invalid plugin name ''"},
	{"not found",
	 "{\"plugin_dirs\": [\"/nonexistent/a\", \"/nonexistent/b\"], \"plugins\": [{\"type\": "
	 "\"x\"}]}",
	 -ENOENT,
	 "c.json: '/plugins/0/type': plugin 'x' not found in /nonexistent/a:/nonexistent/b"},
	{"plugin_dirs relative", "{\"plugin_dirs\": [\"lib\"]}", -EINVAL,
	 "c.json: '/plugin_dirs/0': not absolute 'lib'"},
	{"nri_conf type", "{\"nri_conf\": 1}", -EINVAL,
	 "c.json: '/nri_conf': expected string or boolean, got number"},
	{"nri_conf absent file", "{\"nri_conf\": \"/nonexistent/conf.json\"}", 0, NULL},
	{"user and uid",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"uid\": 5, "
	 "\"user\": \"nobody\"}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/user': conflicts with 'uid' 'nobody'"},
	{"user name",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"user\": \"a/b\"}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/user': invalid user name 'a/b'"},
	{"writable relative",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"writable\": "
	 "[\"tmp\"]}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/writable/0': not absolute 'tmp'"},
	{"writable missing",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"writable\": "
	 "[\"/nonexistent/x\"]}}]}",
	 -ENOENT, "c.json: '/plugins/0/sandbox/writable/0': cannot resolve '/nonexistent/x'"},
	{"writable holds the state dir",
	 "{\"state_dir\": \"/nonexistent/state\", \"plugins\": [{\"type\": \"a\", \"path\": "
	 "\"/a\", \"sandbox\": {\"writable\": [\"/proc/..\"]}}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/sandbox/writable/0': overlaps the state dir /nonexistent/state '/'"},
	{"writable inside the state dir",
	 "{\"state_dir\": \"/usr\", \"plugins\": [{\"type\": \"a\", \"path\": \"/a\", "
	 "\"sandbox\": {\"writable\": [\"/usr/share\"]}}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/sandbox/writable/0': overlaps the state dir /usr '/usr/share'"},
	{"writable holds a plugin dir",
	 "{\"state_dir\": \"/nonexistent/state\", \"plugin_dirs\": [\"/usr/bin\"], \"plugins\": "
	 "[{\"type\": \"true\", \"sandbox\": {\"writable\": [\"/usr\"]}}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/sandbox/writable/0': overlaps the plugin dir /usr/bin '/usr'"},
	{"writable holds a binary",
	 "{\"state_dir\": \"/nonexistent/state\", \"plugins\": [{\"type\": \"a\", \"path\": "
	 "\"/usr/lib/a\"}, {\"type\": \"b\", \"path\": \"/b\", \"sandbox\": {\"writable\": "
	 "[\"/usr/lib\"]}}]}",
	 -EINVAL,
	 "c.json: '/plugins/1/sandbox/writable/0': overlaps the plugin binary dir /usr/lib "
	 "'/usr/lib'"},
	{"adjust field",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"adjust\": "
	 "[\"devices\", \"cpus\"]}}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/sandbox/adjust/1': unknown field 'cpus' (expected devices, unified, "
	 "annotations or annotations:PREFIX)"},
	{"adjust empty prefix",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"adjust\": "
	 "[\"annotations:\"]}}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/sandbox/adjust/0': unknown field 'annotations:' (expected devices, "
	 "unified, annotations or annotations:PREFIX)"},
	{"pids_max zero",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"pids_max\": 0}}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/sandbox/pids_max': invalid limit '0' (expected 1 to 4194304)"},
	{"memory_max_bytes small",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"memory_max_bytes\": "
	 "4096}}]}",
	 -EINVAL,
	 "c.json: '/plugins/0/sandbox/memory_max_bytes': invalid limit '4096' (expected 4194304 to "
	 "1125899906842624)"},
	{"writable more than 16",
	 "{\"plugins\": [{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"writable\": "
	 "[\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/\",\"/"
	 "\",\"/\",\"/\"]}}]}",
	 -EINVAL, "c.json: '/plugins/0/sandbox/writable': more than 16 entries"},
};

static void test_config_rows(void **state)
{
	(void)state;
	/* the rows name their state dir; the environment would win */
	unsetenv("TOPOSHIM_STATE_DIR");
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_plugin_chain *c = NULL;
		int r;

		assert_int_equal(ts_json_parse(rows[i].config, strlen(rows[i].config), "c.json",
					       &config, &err),
				 0);
		r = ts_plugin_chain_load(config, "c.json", &c, &err);
		if (r != rows[i].want_ret)
			fail_msg("%s: got %d (%s)", rows[i].name, r, err ? err->msg : "");
		if (rows[i].want_msg != NULL && strcmp(err->msg, rows[i].want_msg) != 0)
			fail_msg("%s:\n got  %s\n want %s", rows[i].name, err->msg,
				 rows[i].want_msg);
		if (r == 0)
			assert_int_equal(c->len, 0);
		ts_plugin_chain_free(c);
	}
}

static void test_config_fields(void **state)
{
	static const char text[] =
		"{\"plugin_dirs\": [\"/nonexistent\", \"/bin\"], \"plugins\": ["
		"{\"type\": \"true\", \"conf\": {\"reserved\": \"0-1\"}, \"timeout_ms\": 50,"
		" \"on_error\": \"ignore\", \"stages\": [\"pre-create\", \"delete\"],"
		" \"sandbox\": {\"capabilities\": [\"CAP_CHOWN\", \"cap_sys_admin\"],"
		" \"allow\": [\"mount\", \"ptrace\"], \"uid\": 1000, \"gid\": 100}},"
		"{\"type\": \"mine\", \"path\": \"/opt/mine\"}]}";
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *conf = NULL;
	struct ts_plugin_chain *c = NULL;
	const struct ts_plugin *p;
	uint64_t want_allow = 0;

	(void)state;
	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &config, &err), 0);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, &err), 0);
	assert_int_equal(c->len, 2);
	p = &c->plugins[0];
	assert_string_equal(p->type, "true");
	assert_string_equal(p->path, "/bin/true");
	assert_int_equal(ts_json_serialize(p->conf, false, &conf, NULL, &err), 0);
	assert_string_equal(conf, "{\"reserved\":\"0-1\"}");
	assert_int_equal(p->timeout_ms, 50);
	assert_true(p->ignore_errors);
	assert_int_equal(p->stages,
			 (1u << TS_PLUGIN_STAGE_PRE_CREATE) | (1u << TS_PLUGIN_STAGE_DELETE));
	assert_int_equal(p->sandbox.caps, (UINT64_C(1) << 0) | (UINT64_C(1) << 21));
	for (size_t i = 0; ts_plugin_denied_calls[i].name != NULL; i++)
		if (strcmp(ts_plugin_denied_calls[i].group, "mount") == 0 ||
		    strcmp(ts_plugin_denied_calls[i].name, "ptrace") == 0)
			want_allow |= UINT64_C(1) << i;
	assert_int_equal(p->sandbox.allow, want_allow);
	assert_int_equal(p->sandbox.uid, 1000);
	assert_int_equal(p->sandbox.gid, 100);
	p = &c->plugins[1];
	assert_string_equal(p->path, "/opt/mine");
	assert_null(p->conf);
	assert_int_equal(p->timeout_ms, 2000);
	assert_false(p->ignore_errors);
	assert_int_equal(p->stages,
			 (1u << TS_PLUGIN_STAGE_CREATE) | (1u << TS_PLUGIN_STAGE_DELETE));
	assert_int_equal(p->sandbox.caps, 0);
	assert_int_equal(p->sandbox.allow, 0);
	assert_int_equal(p->sandbox.uid, -1);
	ts_plugin_chain_free(c);
}

static const struct nri_row {
	const char *name;
	const char *text;
	int want_ret;
	const char *want_msg;
} nri_rows[] = {
	{"not json", "{", -EINVAL,
	 "/etc/nri/conf.json: line 1 column 2: parse error: premature EOF"},
	{"not an object", "[]", -EINVAL, "/etc/nri/conf.json: '': expected object, got array"},
	{"version type", "{\"version\": 1}", -EINVAL,
	 "/etc/nri/conf.json: '/version': expected string, got number"},
	{"unknown key", "{\"version\": \"0.1\", \"plugin\": []}", -EINVAL,
	 "/etc/nri/conf.json: '': unknown key 'plugin'"},
	{"plugins type", "{\"plugins\": {}}", -EINVAL,
	 "/etc/nri/conf.json: '/plugins': expected array, got object"},
	{"toposhim keys refused", "{\"plugins\": [{\"type\": \"true\", \"timeout_ms\": 5}]}",
	 -EINVAL, "/etc/nri/conf.json: '/plugins/0': unknown key 'timeout_ms'"},
	{"not found", "{\"plugins\": [{\"type\": \"toposhim-none\"}]}", -ENOENT,
	 "/etc/nri/conf.json: '/plugins/0/type': plugin 'toposhim-none' not found in /bin"},
};

static void test_nri_conf(void **state)
{
	static const char *const dirs[] = {"/bin", NULL};
	static const char good[] =
		"{\"version\": \"0.1\", \"plugins\": ["
		"{\"type\": \"true\", \"conf\": {\"a\": 1}}, {\"type\": \"false\"}]}";
	struct ts_plugin_chain chain = {0};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *conf = NULL;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(nri_rows); i++) {
		cleanup_error struct ts_error *e = NULL;
		struct ts_plugin_chain c = {0};
		int r = ts_plugin_nri_conf_parse(nri_rows[i].text, strlen(nri_rows[i].text),
						 "/etc/nri/conf.json", dirs, &c, &e);

		if (r != nri_rows[i].want_ret || strcmp(e->msg, nri_rows[i].want_msg) != 0)
			fail_msg("%s: got %d '%s'", nri_rows[i].name, r, e ? e->msg : "");
		for (size_t k = 0; k < c.len; k++)
			ts_plugin_release(&c.plugins[k]);
		free(c.plugins);
	}
	assert_int_equal(ts_plugin_nri_conf_parse(good, strlen(good), "/etc/nri/conf.json", dirs,
						  &chain, &err),
			 0);
	assert_int_equal(chain.len, 2);
	assert_string_equal(chain.plugins[0].path, "/bin/true");
	assert_int_equal(ts_json_serialize(chain.plugins[0].conf, false, &conf, NULL, &err), 0);
	assert_string_equal(conf, "{\"a\":1}");
	assert_string_equal(chain.plugins[1].path, "/bin/false");
	assert_null(chain.plugins[1].conf);
	/* v0.1 semantics: create and delete, failures fail, default timeout. */
	assert_int_equal(chain.plugins[1].stages,
			 (1u << TS_PLUGIN_STAGE_CREATE) | (1u << TS_PLUGIN_STAGE_DELETE));
	assert_false(chain.plugins[1].ignore_errors);
	assert_int_equal(chain.plugins[1].timeout_ms, 2000);
	for (size_t k = 0; k < chain.len; k++)
		ts_plugin_release(&chain.plugins[k]);
	free(chain.plugins);
}

/* "nri_conf" appends the NRI chain after "plugins". */
static void test_nri_conf_from_config(void **state)
{
	char path[] = "/tmp/ts-nri-conf-XXXXXX", text[512];
	static const char nri[] = "{\"version\": \"0.1\", \"plugins\": [{\"type\": \"false\"}]}";
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, nri, strlen(nri)), (ssize_t)strlen(nri));
	close(fd);
	snprintf(text, sizeof(text),
		 "{\"plugin_dirs\": [\"/bin\"], \"plugins\": [{\"type\": \"true\"}], \"nri_conf\": "
		 "\"%s\"}",
		 path);
	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &config, &err), 0);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, &err), 0);
	unlink(path);
	assert_int_equal(c->len, 2);
	assert_string_equal(c->plugins[0].path, "/bin/true");
	assert_string_equal(c->plugins[1].path, "/bin/false");
	ts_plugin_chain_free(c);
}

/* writable paths are kept resolved: the kernel's view is what counts. */
static void test_writable_resolved(void **state)
{
	static const char text[] =
		"{\"state_dir\": \"/nonexistent/state\", \"plugins\": ["
		"{\"type\": \"a\", \"path\": \"/a\", \"sandbox\": {\"user\": "
		"\"nobody\", \"writable\": [\"/proc/../tmp/\", \"/dev/shm\"]}}]}";
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c = NULL;

	(void)state;
	unsetenv("TOPOSHIM_STATE_DIR");
	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &config, &err), 0);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, &err), 0);
	assert_string_equal(c->plugins[0].sandbox.writable[0], "/tmp");
	assert_string_equal(c->plugins[0].sandbox.writable[1], "/dev/shm");
	assert_null(c->plugins[0].sandbox.writable[2]);
	assert_string_equal(c->plugins[0].sandbox.user, "nobody");
	ts_plugin_chain_free(c);
}

/* "must be owned by root" and, run as another user, " or uid N". */
static void unsafe_msg(char *buf, size_t size, const char *prefix, const char *path,
		       const char *mode)
{
	char uid[32] = "";

	if (geteuid() != 0)
		snprintf(uid, sizeof(uid), " or uid %u", (unsigned)geteuid());
	snprintf(buf, size,
		 "%sunsafe path '%s' (owner %u, mode %s): must be owned by root%s and not writable "
		 "by group or others",
		 prefix, path, (unsigned)geteuid(), mode, uid);
}

/* A world-writable directory of plugin_dirs is refused even when the
 * plugin is found in a later one: whoever writes there could put one of
 * the same name in front. */
static void test_unsafe_plugin_dir(void **state)
{
	char dir[] = "/tmp/ts-plugin-dir-XXXXXX", text[512], want[512];
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c = NULL;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	snprintf(text, sizeof(text),
		 "{\"plugin_dirs\": [\"%s\", \"/bin\"], \"plugins\": [{\"type\": \"true\"}]}", dir);
	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &config, &err), 0);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, &err), -EINVAL);
	unsafe_msg(want, sizeof(want), "c.json: '/plugins/0/type': plugin directory: ", dir,
		   "0777");
	assert_string_equal(err->msg, want);
	assert_null(c);
	/* Once only root can write it, the lookup goes on to /bin. */
	assert_int_equal(chmod(dir, 0755), 0);
	ts_error_clear(&err);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, &err), 0);
	assert_string_equal(c->plugins[0].path, "/bin/true");
	ts_plugin_chain_free(c);
	rmdir(dir);
}

static void test_unsafe_nri_conf(void **state)
{
	char path[] = "/tmp/ts-nri-conf-XXXXXX", text[512], want[512];
	static const char nri[] = "{\"version\": \"0.1\", \"plugins\": []}";
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c = NULL;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, nri, strlen(nri)), (ssize_t)strlen(nri));
	close(fd);
	assert_int_equal(chmod(path, 0666), 0);
	snprintf(text, sizeof(text), "{\"nri_conf\": \"%s\"}", path);
	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &config, &err), 0);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, &err), -EINVAL);
	unlink(path);
	unsafe_msg(want, sizeof(want), "c.json: '/nri_conf': ", path, "0666");
	assert_string_equal(err->msg, want);
}

/* Without "plugin_dirs": the install dir, then the fixed defaults, once each. */
static void test_default_dirs(void **state)
{
	static const char text[] = "{\"plugins\": [{\"type\": \"toposhim-no-such-plugin\"}]}";
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c = NULL;
	char want[512];

	(void)state;
	if (strcmp(TS_LIBEXECDIR, "/usr/libexec") == 0)
		snprintf(want, sizeof(want), "%s", "");
	else
		snprintf(want, sizeof(want), "%s/toposhim/plugins:", TS_LIBEXECDIR);
	strcat(want, "/usr/libexec/toposhim/plugins:/opt/nri/bin");
	assert_int_equal(ts_json_parse(text, strlen(text), "c.json", &config, &err), 0);
	assert_int_equal(ts_plugin_chain_load(config, "c.json", &c, &err), -ENOENT);
	assert_string_equal(err->msg + strlen("c.json: '/plugins/0/type': plugin "
					      "'toposhim-no-such-plugin' not found in "),
			    want);
	assert_null(c);
}

static void test_stage_names(void **state)
{
	(void)state;
	assert_string_equal(ts_plugin_stage_to_string(TS_PLUGIN_STAGE_PRE_CREATE), "pre-create");
	assert_string_equal(ts_plugin_stage_to_string(TS_PLUGIN_STAGE_DELETE), "delete");
	assert_null(ts_plugin_stage_to_string(_TS_PLUGIN_STAGE_MAX));
	assert_int_equal(ts_plugin_stage_from_string("create"), TS_PLUGIN_STAGE_CREATE);
	assert_int_equal(ts_plugin_stage_from_string("Create"), TS_PLUGIN_STAGE_INVALID);
	assert_int_equal(ts_plugin_stage_from_string(NULL), TS_PLUGIN_STAGE_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_rows),
		cmocka_unit_test(test_config_fields),
		cmocka_unit_test(test_nri_conf),
		cmocka_unit_test(test_nri_conf_from_config),
		cmocka_unit_test(test_default_dirs),
		cmocka_unit_test(test_stage_names),
		cmocka_unit_test(test_unsafe_plugin_dir),
		cmocka_unit_test(test_unsafe_nri_conf),
		cmocka_unit_test(test_writable_resolved),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
