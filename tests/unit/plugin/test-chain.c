/* Unit tests of src/plugin/chain.c and exec.c: real plugin processes (the
 * fixtures tests/fixtures/plugins/scripted and probe) run through the chain. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <pwd.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/internal.h"
#include "select.h"
#include "util/cleanup.h"

static char *scripted, *probe;
static char dir[] = "/tmp/ts-chain-XXXXXX";

/* Copy a fixture into dir: the chain runs only binaries that nobody but
 * root (or the user running the tests) can change, and a checkout may be
 * another user's. */
static int install(const char *from, const char *name, mode_t mode, char **ret)
{
	char cmd[1024];

	if (asprintf(ret, "%s/%s", dir, name) < 0)
		return -1;
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && chmod %o '%s'", from, *ret, (unsigned)mode,
		 *ret);
	return system(cmd) == 0 ? 0 : -1;
}

static int setup(void **state)
{
	const char *src = getenv("TS_SRCDIR"), *build = getenv("TS_BUILDDIR");
	char from[512];

	(void)state;
	if (mkdtemp(dir) == NULL || chmod(dir, 0755) < 0)
		return -1;
	snprintf(from, sizeof(from), "%s/tests/fixtures/plugins/scripted", src ? src : ".");
	if (install(from, "scripted", 0755, &scripted) < 0)
		return -1;
	snprintf(from, sizeof(from), "%s/tests/fixtures/plugins/probe", build ? build : ".");
	return install(from, "probe", 0755, &probe);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	free(scripted);
	free(probe);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Load a chain from config text in which every "@S" is the scripted
 * fixture's path and "@P" the probe's. */
static struct ts_plugin_chain *load(const char *text)
{
	char buf[8192];
	size_t o = 0;
	struct ts_plugin_chain *c = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;

	for (const char *s = text; *s != '\0' && o < sizeof(buf) - 512; s++) {
		if (s[0] == '@' && (s[1] == 'S' || s[1] == 'P')) {
			o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s",
					      s[1] == 'S' ? scripted : probe);
			s++;
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = '\0';
	assert_int_equal(ts_json_parse(buf, o, "config.json", &config, &err), 0);
	if (ts_plugin_chain_load(config, "config.json", &c, &err) < 0)
		fail_msg("load: %s", err->msg);
	return c;
}

static const struct ts_plugin_event event = {
	.container_id = "c1",
	.pid = 4242,
	.cpus_str = "2-3",
};

static const char *meta(const struct ts_plugin_report *rep, size_t i, const char *key)
{
	struct ts_json *res = rep->results->u.array.items[i];

	return ts_json_get_string(ts_json_get(res, "metadata"), key);
}

static void test_chain_sees_earlier_results(void **state)
{
	struct ts_plugin_chain *c = load("{\"plugins\": ["
					 "{\"type\": \"a\", \"path\": \"@S\", \"timeout_ms\": "
					 "30000, \"conf\": {\"name\": \"first\"}},"
					 "{\"type\": \"b\", \"path\": \"@S\", \"timeout_ms\": "
					 "30000, \"conf\": {\"name\": \"second\"}},"
					 "{\"type\": \"c\", \"path\": \"@S\", \"timeout_ms\": "
					 "30000, \"conf\": {\"name\": \"third\"}}]}");
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;

	(void)state;
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err), 0);
	assert_int_equal(rep.results->u.array.len, 3);
	assert_string_equal(meta(&rep, 0, "seen"), "");
	assert_string_equal(meta(&rep, 1, "seen"), "first");
	assert_string_equal(meta(&rep, 2, "seen"), "first,second");
	assert_string_equal(meta(&rep, 2, "state"), "create");
	assert_string_equal(meta(&rep, 2, "id"), "c1");
	assert_null(rep.adjust);
	assert_null(rep.ignored);
	ts_plugin_report_release(&rep);
	ts_plugin_chain_free(c);
}

static void test_stages_filter(void **state)
{
	struct ts_plugin_chain *c = load("{\"plugins\": ["
					 "{\"type\": \"a\", \"path\": \"@S\", \"timeout_ms\": "
					 "30000, \"conf\": {\"name\": \"a\"}, \"stages\": "
					 "[\"delete\"]},"
					 "{\"type\": \"b\", \"path\": \"@S\", \"timeout_ms\": "
					 "30000, \"conf\": {\"name\": \"b\"}}]}");
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;

	(void)state;
	assert_int_equal(ts_plugin_chain_count(c, TS_PLUGIN_STAGE_CREATE), 1);
	assert_int_equal(ts_plugin_chain_count(c, TS_PLUGIN_STAGE_DELETE), 2);
	assert_int_equal(ts_plugin_chain_count(c, TS_PLUGIN_STAGE_PRE_CREATE), 0);
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err), 0);
	assert_int_equal(rep.results->u.array.len, 1);
	assert_string_equal(ts_json_get_string(rep.results->u.array.items[0], "plugin"), "b");
	ts_plugin_report_release(&rep);
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_DELETE, &event, &rep, &err), 0);
	assert_int_equal(rep.results->u.array.len, 2);
	assert_string_equal(meta(&rep, 1, "state"), "delete");
	ts_plugin_report_release(&rep);
	ts_plugin_chain_free(c);
}

static const struct fail_row {
	const char *name;
	const char *mode;
	int want_ret;
	const char *want_msg; /* after "plugin 'x' (<path>): " */
} fail_rows[] = {
	{"non-zero exit with valid JSON", "fail-exit", -EINVAL,
	 "exited with status 3: stderr: 'scripted: failing on purpose'"},
	{"invalid JSON", "invalid", -EINVAL,
	 "invalid result: <stdout>: line 1 column 1: lexical error: invalid string in json text"},
	{"error field", "error", -EINVAL, "reported error 'no capacity left'"},
	{"stdout bound", "big", -EFBIG, "output exceeds 1048576 bytes"},
	{"unknown mode", "nothing", -EINVAL, "exited with status 2"},
};

static void test_failures_name_the_plugin(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(fail_rows); i++) {
		const struct fail_row *row = &fail_rows[i];
		char cfg[512], want[1024];
		struct ts_plugin_report rep = {0};
		cleanup_error struct ts_error *err = NULL;
		struct ts_plugin_chain *c;
		int r;

		snprintf(cfg, sizeof(cfg),
			 "{\"plugins\": [{\"type\": \"x\", \"path\": \"@S\", "
			 "\"conf\": {\"mode\": \"%s\"}},"
			 "{\"type\": \"never\", \"path\": \"/nonexistent/never\"}]}",
			 row->mode);
		c = load(cfg);
		r = ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err);
		if (r != row->want_ret)
			fail_msg("%s: got %d (%s)", row->name, r, err ? err->msg : "no error");
		snprintf(want, sizeof(want), "plugin 'x' (%s): %s", scripted, row->want_msg);
		if (strcmp(err->msg, want) != 0)
			fail_msg("%s:\n got  %s\n want %s", row->name, err->msg, want);
		assert_null(rep.results);
		ts_plugin_chain_free(c);
	}
}

static void test_ignore_continues(void **state)
{
	struct ts_plugin_chain *c = load("{\"plugins\": ["
					 "{\"type\": \"bad\", \"path\": \"@S\", \"timeout_ms\": "
					 "30000, \"conf\": {\"mode\": \"invalid\"}, "
					 "\"on_error\": \"ignore\"},"
					 "{\"type\": \"good\", \"path\": \"@S\", \"timeout_ms\": "
					 "30000, \"conf\": {\"name\": \"good\"}}]}");
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	char want[1024];

	(void)state;
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err), 0);
	assert_int_equal(rep.results->u.array.len, 1);
	assert_string_equal(meta(&rep, 0, "seen"), "");
	assert_non_null(rep.ignored);
	snprintf(want, sizeof(want),
		 "plugin 'bad' (%s): invalid result: <stdout>: line 1 column 1: lexical error: "
		 "invalid string in json text",
		 scripted);
	assert_string_equal(rep.ignored[0], want);
	assert_null(rep.ignored[1]);
	ts_plugin_report_release(&rep);
	ts_plugin_chain_free(c);
}

static void test_timeout_kills_process_group(void **state)
{
	char want[512];
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c;
	struct timespec t0, t1;
	const char *tail;
	int pid = 0, alive = 1;

	(void)state;
	c = load("{\"plugins\": [{\"type\": \"hang\", \"path\": \"@S\", \"timeout_ms\": 3000, "
		 "\"conf\": {\"mode\": \"hang\"}}]}");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err),
			 -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	snprintf(want, sizeof(want),
		 "plugin 'hang' (%s): timed out after 3000 ms: stderr: 'hang: pid ", scripted);
	assert_int_equal(strncmp(err->msg, want, strlen(want)), 0);
	tail = err->msg + strlen(want);
	assert_int_equal(sscanf(tail, "%d'", &pid), 1);
	/* Returned at the timeout, not when sleep 1000 ends. */
	assert_true(t1.tv_sec - t0.tv_sec < 20);
	assert_true(pid > 1);
	/* The background sleep was in the plugin's group: the whole group is
	 * gone once init has reaped the orphan. */
	for (int i = 0; i < 200 && alive; i++) {
		alive = kill(-pid, 0) == 0;
		if (alive)
			usleep(10000);
	}
	assert_false(alive);
	ts_plugin_chain_free(c);
}

static void test_clean_environment(void **state)
{
	struct ts_plugin_chain *c = load("{\"plugins\": [{\"type\": \"env\", \"path\": \"@S\", "
					 "\"conf\": {\"mode\": \"env\"}}]}");
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;

	(void)state;
	setenv("TOPOSHIM_SECRET", "leak", 1);
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err), 0);
	/* sh adds PWD (and dash nothing else); the rest is ours: PATH only. */
	assert_string_equal(meta(&rep, 0, "env"),
			    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
			    "PWD=/ ");
	ts_plugin_report_release(&rep);
	ts_plugin_chain_free(c);
}

/* With our stdin closed (engines may start us so), the request pipe's own
 * end takes fd 0: the plugin must still get its request on its fd 0. */
static void test_closed_stdio(void **state)
{
	struct ts_plugin_chain *c = load("{\"plugins\": [{\"type\": \"a\", \"path\": \"@S\", "
					 "\"timeout_ms\": 30000, \"conf\": {\"name\": \"a\"}}]}");
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	int saved = fcntl(0, F_DUPFD_CLOEXEC, 3), r;

	(void)state;
	assert_true(saved >= 3);
	close(0);
	r = ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err);
	assert_int_equal(dup2(saved, 0), 0);
	close(saved);
	if (r < 0)
		fail_msg("%s", err->msg);
	assert_string_equal(meta(&rep, 0, "id"), "c1");
	ts_plugin_report_release(&rep);
	ts_plugin_chain_free(c);
}

static void test_exec_failure(void **state)
{
	struct ts_plugin_chain *c =
		load("{\"plugins\": [{\"type\": \"gone\", \"path\": \"/nonexistent/gone\"}]}");
	cleanup_error struct ts_error *err = NULL;

	(void)state;
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, NULL, &err),
			 -ENOENT);
	assert_string_equal(err->msg, "plugin 'gone' (/nonexistent/gone): cannot execute");
	ts_plugin_chain_free(c);
}

/* A binary others may write is not run: they would choose what runs. */
static void test_unsafe_binary(void **state)
{
	cleanup_free char *loose = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c;
	char cfg[512], want[1024], uid[32] = "";

	(void)state;
	assert_int_equal(install(scripted, "loose", 0777, &loose), 0);
	snprintf(cfg, sizeof(cfg), "{\"plugins\": [{\"type\": \"loose\", \"path\": \"%s\"}]}",
		 loose);
	c = load(cfg);
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, NULL, &err),
			 -EINVAL);
	if (geteuid() != 0)
		snprintf(uid, sizeof(uid), " or uid %u", (unsigned)geteuid());
	snprintf(want, sizeof(want),
		 "plugin 'loose' (%s): unsafe path '%s' (owner %u, mode 0777): must be owned by "
		 "root%s and not writable by group or others",
		 loose, loose, (unsigned)geteuid(), uid);
	assert_string_equal(err->msg, want);
	ts_plugin_chain_free(c);
}

static void test_pre_create_adjust_merged(void **state)
{
	struct ts_plugin_chain *c = load(
		"{\"plugins\": ["
		"{\"type\": \"a\", \"path\": \"@S\", \"timeout_ms\": 30000, \"stages\": "
		"[\"pre-create\"], \"sandbox\": {\"adjust\": [\"annotations\"]}, \"conf\": "
		"{\"mode\": \"adjust\","
		" \"adjust\": {\"process\": {\"env\": [\"A=1\"]}, \"annotations\": {\"k\": "
		"\"1\"}}}},"
		"{\"type\": \"b\", \"path\": \"@S\", \"timeout_ms\": 30000, \"stages\": "
		"[\"pre-create\"], \"sandbox\": {\"adjust\": [\"annotations:k\"]}, \"conf\": "
		"{\"mode\": \"adjust\","
		" \"adjust\": {\"process\": {\"env\": [\"B=2\"]}, \"annotations\": {\"k\": \"2\"},"
		" \"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"1-2\"}}}}}}]}");
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	char want[512];

	(void)state;
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_PRE_CREATE, &event, &rep, &err), 0);
	assert_int_equal(ts_json_serialize(rep.adjust, false, &text, NULL, &err), 0);
	assert_string_equal(
		text, "{\"annotations\":{\"k\":\"2\"},\"process\":{\"env\":[\"A=1\",\"B=2\"]},"
		      "\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"1-2\"}}}}");
	/* What the create must check before config.json gets it. */
	assert_int_equal(rep.adjust_fields, TS_PLUGIN_ADJUST_CPUS | TS_PLUGIN_ADJUST_ENV |
						    TS_PLUGIN_ADJUST_ANNOTATIONS);
	assert_string_equal(ts_plugin_adjust_cpus(rep.adjust), "1-2");
	assert_null(ts_plugin_adjust_mems(rep.adjust));
	snprintf(want, sizeof(want), "plugin 'b' (%s)", scripted);
	assert_string_equal(rep.cpus_from, want);
	assert_null(rep.mems_from);
	ts_plugin_report_release(&rep);
	ts_plugin_chain_free(c);
}

/* An edit that widens privileges needs the plugin's own opt-in; a later
 * plugin's opt-in does not cover an earlier one. */
static void test_pre_create_adjust_widening(void **state)
{
	struct ts_plugin_chain *c = load(
		"{\"plugins\": ["
		"{\"type\": \"ok\", \"path\": \"@S\", \"timeout_ms\": 30000, \"stages\": "
		"[\"pre-create\"], \"sandbox\": {\"adjust\": [\"devices\"]}, \"conf\": {\"mode\": "
		"\"ok\"}},"
		"{\"type\": \"wide\", \"path\": \"@S\", \"timeout_ms\": 30000, \"stages\": "
		"[\"pre-create\"], \"conf\": {\"mode\": \"adjust\", \"adjust\": {\"linux\": "
		"{\"resources\": {\"devices\": [{\"allow\": true, \"access\": \"rwm\"}]}}}}}]}");
	cleanup_error struct ts_error *err = NULL;
	char want[512];

	(void)state;
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_PRE_CREATE, &event, NULL, &err),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "plugin 'wide' (%s): adjust: '/linux/resources/devices': not allowed without "
		 "\"devices\" in sandbox.adjust '[{\"allow\":true,\"access\":\"rwm\"}]'",
		 scripted);
	assert_string_equal(err->msg, want);
	ts_plugin_chain_free(c);
}

static void test_pre_create_adjust_refused(void **state)
{
	struct ts_plugin_chain *c =
		load("{\"plugins\": [{\"type\": \"a\", \"path\": \"@S\", \"timeout_ms\": 30000, "
		     "\"stages\": [\"pre-create\"],"
		     " \"conf\": {\"mode\": \"adjust\", \"adjust\": {\"process\": {\"args\": "
		     "[\"/bin/sh\"]}}}}]}");
	cleanup_error struct ts_error *err = NULL;
	char want[512];

	(void)state;
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_PRE_CREATE, &event, NULL, &err),
			 -EINVAL);
	snprintf(want, sizeof(want), "plugin 'a' (%s): adjust: '/process/args': not allowed",
		 scripted);
	assert_string_equal(err->msg, want);
	ts_plugin_chain_free(c);
}

/* ---- sandbox: the probe reports what it may do ---- */

static struct ts_plugin_report run_probe(const char *sandbox)
{
	char cfg[1024];
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c;

	snprintf(cfg, sizeof(cfg),
		 "{\"plugins\": [{\"type\": \"probe\", \"path\": \"@P\", \"timeout_ms\": 30000, "
		 "\"sandbox\": %s}]}",
		 sandbox);
	c = load(cfg);
	if (ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err) < 0)
		fail_msg("probe: %s", err->msg);
	ts_plugin_chain_free(c);
	return rep;
}

/* Requirements (select.h): NULL when met, else why not. */
static const char *needs_root(void)
{
	return geteuid() == 0 ? NULL : "the sandbox tests need root";
}

static const char *needs_user(void)
{
	if (needs_root() != NULL)
		return needs_root();
	return getpwnam(TS_PLUGIN_USER_DEFAULT) != NULL ? NULL
							: "no user " TS_PLUGIN_USER_DEFAULT
							  " (contrib/plugin-user.sh creates it)";
}

static const char *needs_landlock_scope(void)
{
	if (needs_root() != NULL)
		return needs_root();
	return ts_plugin_landlock_abi() >= 6 ? NULL : "Landlock has no signal scoping (ABI 6) here";
}

static const char *needs_landlock(void)
{
	if (needs_root() != NULL)
		return needs_root();
	return ts_plugin_landlock_abi() > 0 ? NULL
					    : "the kernel has no Landlock (or it is not enabled)";
}

static void test_sandbox_denies_calls(void **state)
{
	struct ts_plugin_report rep;

	(void)state;
	/* With the capabilities these calls check kept, EPERM can only come
	 * from the seccomp filter. */
	rep = run_probe("{\"capabilities\": [\"CAP_SYS_ADMIN\", \"CAP_SYS_BOOT\", "
			"\"CAP_SYS_PTRACE\", \"CAP_SYS_MODULE\"]}");
	for (size_t i = 0; i < ts_plugin_denied_calls_count(); i++) {
		const char *name = ts_plugin_denied_calls[i].name, *got;
		const char *want =
			ts_plugin_denied_calls[i].errnum == ENOSYS ? "errno 38" : "EPERM";

		if (strcmp(name, "umount") == 0)
			continue; /* x86-64 has umount2 only; the probe tries that */
		got = meta(&rep, 0, name);
		assert_non_null(got);
		if (strcmp(got, want) != 0)
			fail_msg("%s: got %s, want %s", name, got, want);
	}
	/* clone and unshare are denied by their namespace flags only. */
	assert_string_equal(meta(&rep, 0, "unshare_net"), "EPERM");
	assert_string_equal(meta(&rep, 0, "unshare_mnt"), "EPERM");
	assert_string_equal(meta(&rep, 0, "clone_pid"), "EPERM");
	assert_string_equal(meta(&rep, 0, "clone_plain"), "ok");
	assert_string_equal(meta(&rep, 0, "unshare_files"), "ok");
#if defined(__x86_64__)
	/* The i386 table of the same process is filtered as well. */
	assert_string_equal(meta(&rep, 0, "ia32_mount"), "EPERM");
	assert_string_equal(meta(&rep, 0, "ia32_umount2"), "EPERM");
	assert_string_equal(meta(&rep, 0, "ia32_ptrace"), "EPERM");
#endif
	assert_string_equal(meta(&rep, 0, "seccomp"), "2");
	assert_string_equal(meta(&rep, 0, "nonewprivs"), "1");
	ts_plugin_report_release(&rep);
}

static void test_sandbox_allow(void **state)
{
	static const char *const allowed[] = {"ptrace",	       "mount",	 "umount2",   "keyctl",
					      "reboot",	       "fsopen", "open_tree", "unshare",
					      "unshare_net",   "clone",	 "clone3",    "setns",
					      "io_uring_setup"};
	struct ts_plugin_report rep;

	(void)state;
	rep = run_probe("{\"capabilities\": [\"CAP_SYS_ADMIN\", \"CAP_SYS_BOOT\", "
			"\"CAP_SYS_PTRACE\"], \"allow\": [\"ptrace\", \"mount\", \"keyring\", "
			"\"reboot\", \"namespaces\", \"io_uring_setup\"]}");
	for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
		const char *got = meta(&rep, 0, allowed[i]);

		assert_non_null(got);
		if (strcmp(got, "EPERM") == 0)
			fail_msg("%s: EPERM although allowed", allowed[i]);
	}
#if defined(__x86_64__)
	assert_string_not_equal(meta(&rep, 0, "ia32_mount"), "EPERM");
	assert_string_not_equal(meta(&rep, 0, "ia32_ptrace"), "EPERM");
#endif
	/* Not named in allow: still denied. */
	assert_string_equal(meta(&rep, 0, "bpf"), "EPERM");
	assert_string_equal(meta(&rep, 0, "init_module"), "EPERM");
	assert_string_equal(meta(&rep, 0, "io_uring_enter"), "EPERM");
	assert_string_equal(meta(&rep, 0, "userfaultfd"), "EPERM");
	ts_plugin_report_release(&rep);
}

static void test_sandbox_capabilities_fds_env(void **state)
{
	struct ts_plugin_report rep;

	(void)state;
	rep = run_probe("{}");
	assert_string_equal(meta(&rep, 0, "capeff"), "0000000000000000");
	assert_string_equal(meta(&rep, 0, "capprm"), "0000000000000000");
	assert_string_equal(meta(&rep, 0, "capbnd"), "0000000000000000");
	assert_string_equal(meta(&rep, 0, "capamb"), "0000000000000000");
	assert_string_equal(meta(&rep, 0, "fds"), "0 1 2");
	assert_string_equal(meta(&rep, 0, "env"),
			    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	ts_plugin_report_release(&rep);
	/* CAP_CHOWN is 0, CAP_NET_RAW 13. */
	rep = run_probe("{\"capabilities\": [\"CAP_CHOWN\", \"cap_net_raw\"]}");
	assert_string_equal(meta(&rep, 0, "capeff"), "0000000000002001");
	assert_string_equal(meta(&rep, 0, "capprm"), "0000000000002001");
	assert_string_equal(meta(&rep, 0, "capbnd"), "0000000000002001");
	assert_string_equal(meta(&rep, 0, "capamb"), "0000000000002001");
	ts_plugin_report_release(&rep);
}

/* Run as root, a plugin is never root unless the config says so. */
static void test_sandbox_default_user(void **state)
{
	struct passwd *pw = getpwnam(TS_PLUGIN_USER_DEFAULT);
	struct ts_plugin_report rep;
	char uid[32], gid[32];

	(void)state;
	assert_non_null(pw);
	snprintf(uid, sizeof(uid), "%u", (unsigned)pw->pw_uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)pw->pw_gid);
	rep = run_probe("{}");
	assert_string_equal(meta(&rep, 0, "uid"), uid);
	assert_string_equal(meta(&rep, 0, "gid"), gid);
	assert_string_equal(meta(&rep, 0, "groups"), gid);
	assert_string_equal(meta(&rep, 0, "capeff"), "0000000000000000");
	ts_plugin_report_release(&rep);
	/* "user" names another; uid 0 is an explicit opt-in. */
	rep = run_probe("{\"user\": \"nobody\"}");
	assert_string_equal(meta(&rep, 0, "uid"), "65534");
	ts_plugin_report_release(&rep);
	rep = run_probe("{\"uid\": 0}");
	assert_string_equal(meta(&rep, 0, "uid"), "0");
	assert_string_equal(meta(&rep, 0, "gid"), "0");
	assert_string_equal(meta(&rep, 0, "capeff"), "0000000000000000");
	ts_plugin_report_release(&rep);
}

static void test_sandbox_missing_user(void **state)
{
	struct ts_plugin_chain *c = load("{\"plugins\": [{\"type\": \"probe\", \"path\": \"@P\", "
					 "\"sandbox\": {\"user\": \"toposhim-no-such-user\"}}]}");
	cleanup_error struct ts_error *err = NULL;
	char want[512];

	(void)state;
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, NULL, &err),
			 -ENOENT);
	snprintf(want, sizeof(want),
		 "plugin 'probe' (%s): cannot sandbox: user 'toposhim-no-such-user' does not exist "
		 "(create it with useradd --system toposhim-no-such-user, or set sandbox.uid)",
		 probe);
	assert_string_equal(err->msg, want);
	ts_plugin_chain_free(c);
}

static void test_sandbox_ids(void **state)
{
	struct ts_plugin_report rep;

	(void)state;
	if (access(probe, X_OK) != 0)
		ts_test_skip("the probe plugin %s is not built", probe);
	/* the plugin runs as uid 65534, which cannot reach the build tree when
	 * a directory above it is 0700 (a home, a mktemp -d): run a copy */
	char probe_dir[] = "/tmp/ts-probe-XXXXXX";
	cleanup_free char *copy = NULL, *cmd = NULL;
	char *built = probe;

	assert_non_null(mkdtemp(probe_dir));
	assert_int_equal(chmod(probe_dir, 0755), 0);
	assert_true(asprintf(&copy, "%s/probe", probe_dir) > 0);
	assert_true(asprintf(&cmd, "cp '%s' '%s'", built, copy) > 0);
	assert_int_equal(system(cmd), 0);
	probe = copy;
	rep = run_probe("{\"uid\": 65534, \"gid\": 65533, \"capabilities\": [\"CAP_CHOWN\"]}");
	probe = built;
	(void)unlink(copy);
	(void)rmdir(probe_dir);
	assert_string_equal(meta(&rep, 0, "uid"), "65534");
	assert_string_equal(meta(&rep, 0, "gid"), "65533");
	assert_string_equal(meta(&rep, 0, "groups"), "65533");
	/* Kept across setuid as asked, through the ambient set. */
	assert_string_equal(meta(&rep, 0, "capeff"), "0000000000000001");
	ts_plugin_report_release(&rep);
}

/* ---- the file system view ---- */

/* Run the scripted fixture once with sandbox and conf; the metadata value
 * of key. */
static char *run_scripted(const char *sandbox, const char *conf, const char *key)
{
	char cfg[2048];
	struct ts_plugin_report rep = {0};
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c;
	char *v;

	snprintf(cfg, sizeof(cfg),
		 "{\"plugins\": [{\"type\": \"s\", \"path\": \"@S\", \"timeout_ms\": 30000, "
		 "\"sandbox\": %s, \"conf\": %s}]}",
		 sandbox, conf);
	c = load(cfg);
	if (ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, &rep, &err) < 0)
		fail_msg("scripted: %s", err->msg);
	v = strdup(meta(&rep, 0, key));
	assert_non_null(v);
	ts_plugin_report_release(&rep);
	ts_plugin_chain_free(c);
	return v;
}

static void assert_ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	if (ls < lx || strcmp(s + ls - lx, suffix) != 0)
		fail_msg("'%s' does not end with '%s'", s, suffix);
}

/* Run as root: a mount namespace where all is read-only but "writable". */
static void test_fsview_read_only(void **state)
{
	char out[256], file[300], conf[512], sandbox[512], want[512];
	cleanup_free char *got = NULL;

	(void)state;
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(file, sizeof(file), "%s/f", out);
	/* Writable for everyone by its mode: only the sandbox stops a write. */
	assert_int_equal(mkdir(out, 0777), 0);
	assert_int_equal(chmod(out, 0777), 0);
	snprintf(conf, sizeof(conf), "{\"mode\": \"write\", \"path\": \"%s\"}", file);
	snprintf(want, sizeof(want), "cannot create %s: Read-only file system", file);
	got = run_scripted("{}", conf, "write");
	assert_ends_with(got, want);
	free(got);
	/* root, without capabilities, owns the host's files: read-only still */
	got = run_scripted("{\"uid\": 0}", conf, "write");
	assert_ends_with(got, want);
	free(got);
	assert_int_equal(access(file, F_OK), -1);
	snprintf(sandbox, sizeof(sandbox), "{\"writable\": [\"%s\"]}", out);
	got = run_scripted(sandbox, conf, "write");
	assert_string_equal(got, "ok");
	assert_int_equal(access(file, F_OK), 0);
	unlink(file);
	rmdir(out);
}

/* Landlock: device nodes, which a read-only mount leaves writable, and
 * signals to processes outside the sandbox. */
static void test_fsview_landlock(void **state)
{
	cleanup_free char *got = NULL;

	(void)state;
	got = run_scripted("{\"uid\": 0}", "{\"mode\": \"write\", \"path\": \"/dev/full\"}",
			   "write");
	assert_ends_with(got, "cannot create /dev/full: Permission denied");
	free(got);
	/* /dev/null takes what scripts throw away */
	got = run_scripted("{\"uid\": 0}", "{\"mode\": \"write\", \"path\": \"/dev/null\"}",
			   "write");
	assert_string_equal(got, "ok");
}

/* This test runs as root: only Landlock's scoping (ABI 6) stops a uid 0
 * plugin from signalling it. */
static void test_fsview_landlock_signal(void **state)
{
	cleanup_free char *got = NULL;
	char conf[256];

	(void)state;
	snprintf(conf, sizeof(conf), "{\"mode\": \"signal\", \"pid\": %d}", (int)getpid());
	got = run_scripted("{\"uid\": 0}", conf, "signal");
	assert_ends_with(got, "kill: Operation not permitted");
}

/* ---- the cgroup of a run ---- */

/* Whether pid is gone (or a zombie, all that is left until init reaps it). */
static bool gone(pid_t pid)
{
	char path[64], stat[512];
	FILE *f;
	bool zombie = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return true;
	if (fgets(stat, sizeof(stat), f) != NULL) {
		const char *p = strrchr(stat, ')');

		zombie = p != NULL && p[1] == ' ' && p[2] == 'Z';
	}
	fclose(f);
	return zombie;
}

/* The directories this process left under the plugins' cgroup parents. */
static size_t cgroups_left(void)
{
	static const char *const bases[] = {
		"/sys/fs/cgroup/toposhim-plugins", "/sys/fs/cgroup/unified/toposhim-plugins",
		"/sys/fs/cgroup/memory/toposhim-plugins", "/sys/fs/cgroup/pids/toposhim-plugins"};
	char prefix[32];
	size_t n = 0;

	snprintf(prefix, sizeof(prefix), "%d.", (int)getpid());
	for (size_t i = 0; i < ARRAY_SIZE(bases); i++) {
		cleanup_closedir DIR *d = opendir(bases[i]);
		struct dirent *e;

		while (d != NULL && (e = readdir(d)) != NULL)
			n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	}
	return n;
}

/* A child that leaves the process group (setsid) dies with the plugin. */
static void test_cgroup_kills_setsid_child(void **state)
{
	cleanup_free char *pid = NULL;
	pid_t p;

	(void)state;
	pid = run_scripted("{}", "{\"mode\": \"setsid\"}", "pid");
	p = (pid_t)atoi(pid);
	assert_true(p > 1);
	for (int i = 0; i < 200 && !gone(p); i++)
		usleep(10000);
	assert_true(gone(p));
	assert_int_equal(cgroups_left(), 0);
}

/* Whether the host has the controller: a v1 hierarchy, or listed by the
 * cgroup2 root (the host's cgroup2 may sit at /sys/fs/cgroup or, hybrid,
 * hold no controller at /sys/fs/cgroup/unified). */
static bool controller_available(const char *name)
{
	char path[128], line[256] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cgroup.procs", name);
	if (access(path, F_OK) == 0)
		return true;
	f = fopen("/sys/fs/cgroup/cgroup.controllers", "re");
	if (f == NULL)
		return false;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	for (char *tok = strtok(line, " \n"); tok != NULL; tok = strtok(NULL, " \n"))
		if (strcmp(tok, name) == 0)
			return true;
	return false;
}

static const char *needs_controllers(void)
{
	if (needs_root() != NULL)
		return needs_root();
	return controller_available("pids") && controller_available("memory")
		       ? NULL
		       : "the host has no pids or memory cgroup controller";
}

static void test_cgroup_limits(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_plugin_chain *c;
	char want[512];

	(void)state;
	c = load("{\"plugins\": [{\"type\": \"s\", \"path\": \"@S\", \"timeout_ms\": 30000, "
		 "\"sandbox\": {\"pids_max\": 10}, \"conf\": {\"mode\": \"forks\", \"count\": "
		 "30}}]}");
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, NULL, &err),
			 -EINVAL);
	snprintf(want, sizeof(want),
		 "plugin 's' (%s): exited with status 2: stderr: '%s: ", scripted, scripted);
	assert_int_equal(strncmp(err->msg, want, strlen(want)), 0);
	assert_ends_with(err->msg, ": Cannot fork'");
	ts_plugin_chain_free(c);
	ts_error_clear(&err);
	/* 64 MiB in a 16 MiB cgroup: the kernel's OOM killer ends it. */
	c = load("{\"plugins\": [{\"type\": \"s\", \"path\": \"@S\", \"timeout_ms\": 30000, "
		 "\"sandbox\": {\"memory_max_bytes\": 16777216}, \"conf\": {\"mode\": \"hog\", "
		 "\"bytes\": 67108864}}]}");
	assert_int_equal(ts_plugin_chain_run(c, TS_PLUGIN_STAGE_CREATE, &event, NULL, &err),
			 -EINVAL);
	snprintf(want, sizeof(want), "plugin 's' (%s): killed by signal 9", scripted);
	assert_int_equal(strncmp(err->msg, want, strlen(want)), 0);
	ts_plugin_chain_free(c);
	assert_int_equal(cgroups_left(), 0);
}

int main(void)
{
	static const struct ts_plugin_test tests[] = {
		{cmocka_unit_test(test_chain_sees_earlier_results), NULL},
		{cmocka_unit_test(test_stages_filter), NULL},
		{cmocka_unit_test(test_failures_name_the_plugin), NULL},
		{cmocka_unit_test(test_ignore_continues), NULL},
		{cmocka_unit_test(test_timeout_kills_process_group), NULL},
		{cmocka_unit_test(test_clean_environment), NULL},
		{cmocka_unit_test(test_closed_stdio), NULL},
		{cmocka_unit_test(test_exec_failure), NULL},
		{cmocka_unit_test(test_unsafe_binary), NULL},
		{cmocka_unit_test(test_pre_create_adjust_merged), NULL},
		{cmocka_unit_test(test_pre_create_adjust_refused), NULL},
		{cmocka_unit_test(test_pre_create_adjust_widening), NULL},
		{cmocka_unit_test(test_sandbox_denies_calls), needs_root},
		{cmocka_unit_test(test_sandbox_allow), needs_root},
		{cmocka_unit_test(test_sandbox_capabilities_fds_env), needs_root},
		{cmocka_unit_test(test_sandbox_ids), needs_root},
		{cmocka_unit_test(test_sandbox_default_user), needs_user},
		{cmocka_unit_test(test_sandbox_missing_user), NULL},
		{cmocka_unit_test(test_fsview_read_only), needs_root},
		{cmocka_unit_test(test_fsview_landlock), needs_landlock},
		{cmocka_unit_test(test_fsview_landlock_signal), needs_landlock_scope},
		{cmocka_unit_test(test_cgroup_kills_setsid_child), needs_root},
		{cmocka_unit_test(test_cgroup_limits), needs_controllers},
	};

	return ts_plugin_run_selected("test-chain", tests, ARRAY_SIZE(tests), setup, teardown);
}
