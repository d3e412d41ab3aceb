/* Unit tests of src/cli/scan.c: every example of issue 2, both directions. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cli/scan.h"
#include "util/cleanup.h"

/* Rows name only the fields they check; the rest are zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define W(...)                                \
	(char *[])                            \
	{                                     \
		"toposhim", __VA_ARGS__, NULL \
	}

struct scan_case {
	const char *name;
	char **argv;
	bool rewrite;
	const char *command;
	int command_index;
	const char *container_id;
	const char *bundle;
	const char *config_file;
	const char *root;
	const char *log;
	const char *log_format;
	bool debug;
	const char *warning;
	const char *candidates[2];
};

static const struct scan_case cases[] = {
	/* create and run: the rewrite direction */
	{"create plain", W("create", "id1"), true, "create", 1, "id1"},
	{"run plain", W("run", "id1"), true, "run", 1, "id1"},
	{"create --bundle", W("create", "--bundle", "/b", "id1"), true, "create", 1, "id1", "/b"},
	{"create -b", W("create", "-b", "/b", "id1"), true, "create", 1, "id1", "/b"},
	{"create --bundle=", W("create", "--bundle=/b", "id1"), true, "create", 1, "id1", "/b"},
	{"create -bundle", W("create", "-bundle", "/b", "id1"), true, "create", 1, "id1", "/b"},
	{"create -b=", W("create", "-b=/b", "id1"), true, "create", 1, "id1", "/b"},
	{"create --b", W("create", "--b", "/b", "id1"), true, "create", 1, "id1", "/b"},
	{"bundle last wins", W("create", "-b", "/1", "--bundle=/2", "-bundle", "/3", "id1"), true,
	 "create", 1, "id1", "/3"},
	{"empty bundle is cwd", W("create", "-b", "/1", "--bundle=", "id1"), true, "create", 1,
	 "id1", NULL},
	{"default bundle", W("run", "id1"), true, "run", 1, "id1", NULL},
	{"options after id", W("create", "id1", "--bundle", "/b", "--pid-file", "/p"), true,
	 "create", 1, "id1", "/b"},
	{"crun -f", W("create", "-f", "alt.json", "-b", "/b", "id1"), true, "create", 1, "id1",
	 "/b", "alt.json"},
	{"crun --config=", W("run", "--config=c.json", "id1"), true, "run", 1, "id1", NULL,
	 "c.json"},
	{"-- before id", W("create", "-b", "/b", "--", "id1"), true, "create", 1, "id1", "/b"},
	{"id named create", W("create", "--bundle", "/b", "create"), true, "create", 1, "create",
	 "/b"},
	{"id named -", W("create", "-"), true, "create", 1, "-"},
	{"run flags", W("run", "-d", "--keep", "--no-pivot", "--detach=true", "id1"), true, "run",
	 1, "id1"},
	{"create flags",
	 W("create", "--no-pivot", "--no-new-keyring", "--console-socket", "/s", "--preserve-fds=2",
	   "-no-subreaper", "id1"),
	 true, "create", 1, "id1"},
	{"runc 1.2 pidfd socket", W("create", "--bundle", "/b", "--pidfd-socket", "/x", "id1"),
	 true, "create", 1, "id1", "/b"},
	{"globals",
	 W("--root", "/r", "--log=/l", "-log-format", "json", "--debug", "create", "id1"), true,
	 "create", 7, "id1", NULL, NULL, "/r", "/l", "json", true},
	{"global values",
	 W("--criu", "c", "--rootless=true", "--cgroup-manager", "cgroupfs", "--log-level", "debug",
	   "--systemd-cgroup", "run", "id1"),
	 true, "run", 9, "id1"},
	{"--root create", W("--root", "create", "create", "id1"), true, "create", 3, "id1", NULL,
	 NULL, "create"},
	{"--log create", W("--log", "create", "run", "x"), true, "run", 3, "x", NULL, NULL, NULL,
	 "create"},
	{"global --", W("--root", "/r", "--", "create", "id1"), true, "create", 4, "id1", NULL,
	 NULL, "/r"},
	{"--debug=false", W("--debug=false", "create", "id1"), true, "create", 2, "id1"},

	/* what engines send, as recorded from containerd 1.6 and podman 4.3 here */
	{"containerd create",
	 W("--root", "/run/containerd/runc/default", "--log", "/run/c/t/log.json", "--log-format",
	   "json", "create", "--bundle", "/run/c/t", "--pid-file", "/run/c/t/init.pid", "t"),
	 true, "create", 7, "t", "/run/c/t", NULL, "/run/containerd/runc/default",
	 "/run/c/t/log.json", "json"},
	{"podman create",
	 W("create", "--bundle", "/v/userdata", "--pid-file", "/r/pidfile", "15e8"), true, "create",
	 1, "15e8", "/v/userdata"},
	{"docker-style create",
	 W("--root", "/var/run/docker/runtime-runc/moby", "--log", "/l", "--log-format", "json",
	   "--systemd-cgroup", "create", "--bundle", "/b", "--pid-file", "/p", "--console-socket",
	   "/s", "c1"),
	 true, "create", 8, "c1", "/b", NULL, "/var/run/docker/runtime-runc/moby", "/l", "json"},
	{"containerd start", W("--root", "/r", "--log", "/l", "--log-format", "json", "start", "t"),
	 false, "start", 7, "t", NULL, NULL, "/r", "/l", "json"},
	{"containerd delete --force",
	 W("--root", "/r", "--log", "/l", "--log-format", "json", "delete", "--force", "t"), false,
	 "delete", 7, "t", NULL, NULL, "/r", "/l", "json"},

	/* never a rewrite */
	{"state create", W("state", "create"), false, "state", 1, "create"},
	{"delete create", W("delete", "create"), false, "delete", 1, "create"},
	{"start create", W("start", "create"), false, "start", 1, "create"},
	{"exec ID create", W("exec", "id1", "create"), false, "exec", 1, "id1"},
	{"--root create state", W("--root", "create", "state", "id1"), false, "state", 3, "id1",
	 NULL, NULL, "create"},
	{"--log create list", W("--log", "create", "list"), false, "list", 3, NULL, NULL, NULL,
	 NULL, "create"},
	{"--log=create ps", W("--log=create", "ps", "id1"), false, "ps", 2, "id1", NULL, NULL, NULL,
	 "create"},
	{"ps ID -- create", W("ps", "id1", "--", "create"), false, "ps", 1, "id1"},
	{"kill create", W("kill", "create", "KILL"), false, "kill", 1, "create"},
	{"restore passes", W("restore", "-b", "/b", "id1"), false, "restore", 1, "id1"},
	{"no command", W("--root", "/r"), false, NULL, -1, NULL, NULL, NULL, "/r"},
	{"no id", W("create", "-b", "/b"), false, "create", 1, NULL, "/b"},
	{"two ids", W("create", "id1", "id2"), false, "create", 1, "id1"},
	{"-- makes options args", W("create", "--", "id1", "--bundle", "/b"), false, "create", 1,
	 "id1"},
	{"create --help", W("create", "--help", "id1"), false, "create", 1},
	{"create -h", W("create", "-h"), false, "create", 1},
	{"global --help", W("--help", "create", "id1"), false, NULL, -1},
	{"global -v", W("-v", "create", "id1"), false, NULL, -1},
	{"global --version", W("--version", "run", "id1"), false, NULL, -1},
	{"crun -V", W("-V"), false, NULL, -1},
	{"no arguments", (char *[]){"toposhim", NULL}, false, NULL, -1},

	/* unknown or malformed options: pass through with a warning */
	{"unknown global", W("--x", "create", "id1"), false, NULL, -1, NULL, NULL, NULL, NULL, NULL,
	 NULL, false, "unknown option '--x', passing through unmodified"},
	{"unknown global =v", W("--x=v", "create", "id1"), false, "create", 2, "id1", NULL, NULL,
	 NULL, NULL, NULL, false, "unknown option '--x', passing through unmodified"},
	{"unknown =v in create", W("create", "--future-flag=1", "-b", "/b", "id1"), false, "create",
	 1, "id1", "/b", NULL, NULL, NULL, NULL, false,
	 "unknown option '--future-flag', passing through unmodified"},
	{"first reason wins", W("--x=1", "create", "--y=2", "id1"), false, "create", 2, "id1", NULL,
	 NULL, NULL, NULL, NULL, false, "unknown option '--x', passing through unmodified"},
	{"unknown in create", W("create", "--x", "id1"), false, "create", 1, NULL, NULL, NULL, NULL,
	 NULL, NULL, false, "unknown option '--x', passing through unmodified"},
	{"unknown after id", W("run", "id1", "-z"), false, "run", 1, "id1", NULL, NULL, NULL, NULL,
	 NULL, false, "unknown option '-z', passing through unmodified"},
	{"global option in create", W("create", "--root", "/r", "id1"), false, "create", 1, NULL,
	 NULL, NULL, NULL, NULL, NULL, false,
	 "unknown option '--root', passing through unmodified"},
	{"run-only option in create", W("create", "-d", "id1"), false, "create", 1, NULL, NULL,
	 NULL, NULL, NULL, NULL, false, "unknown option '-d', passing through unmodified"},
	{"crun cluster -bDIR", W("create", "-b/b", "id1"), false, "create", 1, NULL, NULL, NULL,
	 NULL, NULL, NULL, false, "unknown option '-b/b', passing through unmodified"},
	{"triple dash", W("create", "---bundle", "/b", "id1"), false, "create", 1, NULL, NULL, NULL,
	 NULL, NULL, NULL, false, "unknown option '---bundle', passing through unmodified"},
	{"missing value", W("create", "id1", "--bundle"), false, "create", 1, "id1", NULL, NULL,
	 NULL, NULL, NULL, false,
	 "missing value for option '--bundle', passing through unmodified"},
	{"missing global value", W("--root"), false, NULL, -1, NULL, NULL, NULL, NULL, NULL, NULL,
	 false, "missing value for option '--root', passing through unmodified"},
	{"dash value", W("create", "--pid-file", "-x", "id1"), false, "create", 1, NULL, NULL, NULL,
	 NULL, NULL, NULL, false,
	 "ambiguous value for option '--pid-file', passing through unmodified"},
	{"bad boolean", W("--debug=maybe", "create", "id1"), false, NULL, -1, NULL, NULL, NULL,
	 NULL, NULL, NULL, false,
	 "invalid boolean in option '--debug=maybe', passing through unmodified"},

	/* the container id of the commands that do not rewrite (runc 1.1-1.3,
	 * crun 1.8-1.23 option tables) */
	{"exec values",
	 W("exec", "--cwd", "/", "-e", "A=1", "--env=B=2", "-u", "0:0", "-g", "10", "--cap",
	   "CAP_KILL", "-c", "CAP_CHOWN", "--process-label", "l", "--apparmor", "a", "--cgroup",
	   "sub", "--pid-file", "/p", "--console-socket", "/s", "--preserve-fds", "1",
	   "--pidfd-socket", "/q", "id1", "sh", "-c", "true"),
	 false, "exec", 1, "id1"},
	{"exec flags",
	 W("exec", "-t", "--tty=false", "-d", "--no-new-privs", "--ignore-paused", "id1", "sh"),
	 false, "exec", 1, "id1"},
	{"exec -p", W("exec", "-p", "/process.json", "id1"), false, "exec", 1, "id1"},
	{"exec words after id", W("exec", "id1", "--future-flag", "x"), false, "exec", 1, "id1"},
	{"delete -f", W("delete", "-f", "id1"), false, "delete", 1, "id1"},
	{"crun delete -r", W("delete", "--regex", "id.*"), false, "delete", 1, "id.*"},
	{"kill --all", W("kill", "--all", "id1", "KILL"), false, "kill", 1, "id1"},
	{"kill -a=true", W("kill", "-a=true", "id1"), false, "kill", 1, "id1"},
	{"ps -f json", W("ps", "-f", "json", "id1", "-ef"), false, "ps", 1, "id1"},
	{"ps --format=", W("ps", "--format=table", "id1"), false, "ps", 1, "id1"},
	{"events", W("events", "--stats", "--interval", "1s", "id1"), false, "events", 1, "id1"},
	{"update values",
	 W("update", "--cpu-share", "512", "--cpu-quota=1000", "--cpuset-cpus", "0-1", "--memory",
	   "1g", "--pids-limit", "10", "id1"),
	 false, "update", 1, "id1"},
	{"update -r -", W("update", "-r", "-", "id1"), false, "update", 1, "id1"},
	{"state", W("--root", "/r", "state", "id1"), false, "state", 3, "id1", NULL, NULL, "/r"},
	{"pause", W("pause", "id1"), false, "pause", 1, "id1"},
	{"resume", W("resume", "id1"), false, "resume", 1, "id1"},
	{"start --", W("start", "--", "-id"), false, "start", 1, "-id"},
	{"list has none", W("list", "-q"), false, "list", 1},
	{"delete -f is not ps -f", W("delete", "-f", "json"), false, "delete", 1, "json"},
	{"state --future-flag=1", W("state", "--future-flag=1", "id1"), false, "state", 1, "id1",
	 NULL, NULL, NULL, NULL, NULL, false,
	 "unknown option '--future-flag', passing through unmodified"},
	{"global --future-flag=1", W("--future-flag=1", "state", "id1"), false, "state", 2, "id1",
	 NULL, NULL, NULL, NULL, NULL, false,
	 "unknown option '--future-flag', passing through unmodified"},
	{"state --future-flag id",
	 W("state", "--future-flag", "id1"),
	 false,
	 "state",
	 1,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 false,
	 "unknown option '--future-flag', passing through unmodified",
	 {"id1", NULL}},
	/* an unknown option may take the next word: both words are candidates */
	{"kill --future v id",
	 W("kill", "--future", "v", "-a", "id1", "KILL"),
	 false,
	 "kill",
	 1,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 false,
	 "unknown option '--future', passing through unmodified",
	 {"v", "id1"}},
	{"state --future -- -id",
	 W("state", "--future", "--", "-id", "x"),
	 false,
	 "state",
	 1,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 false,
	 "unknown option '--future', passing through unmodified",
	 {"-id", NULL}},
	{"global unknown has none", W("--future", "state", "id1"), false, NULL, -1, NULL, NULL,
	 NULL, NULL, NULL, NULL, false, "unknown option '--future', passing through unmodified"},
	/* checkpoint and restore (runc 1.1.5's options) */
	{"checkpoint",
	 W("checkpoint", "--image-path", "/img", "--work-path=/w", "--leave-running",
	   "--tcp-established", "--manage-cgroups-mode", "soft", "--page-server", "h:1",
	   "--status-fd", "3", "--parent-path", "/p", "--pre-dump", "id1"),
	 false, "checkpoint", 1, "id1"},
	{"restore",
	 W("restore", "-d", "-b", "/b", "--image-path", "/img", "--console-socket", "/s",
	   "--pid-file", "/pid", "--lsm-profile", "apparmor:x", "--no-pivot", "--empty-ns",
	   "network", "id1"),
	 false, "restore", 1, "id1"},
	{"pre-dump is checkpoint's",
	 W("restore", "--pre-dump", "id1"),
	 false,
	 "restore",
	 1,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 false,
	 "unknown option '--pre-dump', passing through unmodified",
	 {"id1", NULL}},
	{"exec option in state",
	 W("state", "-e", "x", "id1"),
	 false,
	 "state",
	 1,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 NULL,
	 false,
	 "unknown option '-e', passing through unmodified",
	 {"x", "id1"}},
	{"state --help", W("state", "--help", "id1"), false, "state", 1},
};

static void check_str(const char *name, const char *field, const char *want, const char *got)
{
	if (want == NULL && got == NULL)
		return;
	if (want == NULL || got == NULL || strcmp(want, got) != 0)
		fail_msg("%s: %s: want '%s', got '%s'", name, field, want ? want : "(null)",
			 got ? got : "(null)");
}

static void test_scan_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct scan_case *c = &cases[i];
		cleanup_error struct ts_error *err = NULL;
		struct ts_cli_args args;
		int argc = 0;

		while (c->argv[argc] != NULL)
			argc++;
		memset(&args, 0xa5, sizeof(args));
		if (ts_cli_scan(argc, c->argv, &args, &err) != 0)
			fail_msg("%s: scan failed", c->name);
		if (args.rewrite != c->rewrite)
			fail_msg("%s: rewrite: want %d, got %d", c->name, c->rewrite, args.rewrite);
		if (args.debug != c->debug)
			fail_msg("%s: debug: want %d, got %d", c->name, c->debug, args.debug);
		if (args.command_index != c->command_index)
			fail_msg("%s: command_index: want %d, got %d", c->name, c->command_index,
				 args.command_index);
		check_str(c->name, "command", c->command, args.command);
		check_str(c->name, "container_id", c->container_id, args.container_id);
		check_str(c->name, "bundle", c->bundle, args.bundle);
		check_str(c->name, "config_file", c->config_file, args.config_file);
		check_str(c->name, "root", c->root, args.root);
		check_str(c->name, "log", c->log, args.log);
		check_str(c->name, "log_format", c->log_format, args.log_format);
		check_str(c->name, "warning", c->warning, args.warning);
		check_str(c->name, "candidates[0]", c->candidates[0],
			  args.container_id_candidates[0]);
		check_str(c->name, "candidates[1]", c->candidates[1],
			  args.container_id_candidates[1]);
		assert_null(err);
		ts_cli_args_release(&args);
		assert_null(args.warning);
	}
}

static void test_scan_fields(void **state)
{
	char *argv[] = {"toposhim",
			"--systemd-cgroup",
			"--log-level",
			"warning",
			"run",
			"--pid-file",
			"/p",
			"id9",
			"--console-socket=/s",
			"--preserve-fds",
			"3",
			NULL};
	cleanup_error struct ts_error *err = NULL;
	struct ts_cli_args args;

	assert_int_equal(ts_cli_scan(11, argv, &args, &err), 0);
	assert_true(args.rewrite);
	assert_true(args.systemd_cgroup);
	assert_string_equal(args.log_level, "warning");
	assert_string_equal(args.pid_file, "/p");
	assert_string_equal(args.console_socket, "/s");
	assert_string_equal(args.preserve_fds, "3");
	assert_string_equal(args.container_id, "id9");
	/* argv is borrowed, never copied */
	assert_ptr_equal(args.container_id, argv[7]);
	ts_cli_args_release(&args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scan_table),
		cmocka_unit_test(test_scan_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
