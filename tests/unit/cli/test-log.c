/* Unit tests of src/cli/log.c: exact lines, with an injected time. */
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

#include "cli/log.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* 2026-11-30T01:02:03Z */
#define T0 ((time_t)1796000523)

static void test_level_names(void **state)
{
	static const struct {
		const char *s;
		enum ts_log_level want;
	} rows[] = {
		{"error", TS_LOG_ERROR},	 {"fatal", TS_LOG_ERROR},
		{"panic", TS_LOG_ERROR},	 {"warn", TS_LOG_WARNING},
		{"warning", TS_LOG_WARNING},	 {"info", TS_LOG_INFO},
		{"debug", TS_LOG_DEBUG},	 {"trace", TS_LOG_DEBUG},
		{"Debug", TS_LOG_LEVEL_INVALID}, {"", TS_LOG_LEVEL_INVALID},
		{NULL, TS_LOG_LEVEL_INVALID},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		if (ts_log_level_from_string(rows[i].s) != rows[i].want)
			fail_msg("level '%s': want %d", rows[i].s, rows[i].want);
	assert_string_equal(ts_log_level_to_string(TS_LOG_WARNING), "warning");
	assert_string_equal(ts_log_level_to_string(TS_LOG_LEVEL_INVALID), "invalid");
}

static void test_quote(void **state)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
		{"", "\"\""},
		{"plain", "\"plain\""},
		{"a \"b\" \\c", "\"a \\\"b\\\" \\\\c\""},
		{"l1\nl2\tx\r\a\b\f\v", "\"l1\\nl2\\tx\\r\\a\\b\\f\\v\""},
		{"\x01\x1f\x7f", "\"\\x01\\x1f\\x7f\""},
		{"caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\""},
		{"bad \xff \xc3", "\"bad \\xff \\xc3\""},
		{"overlong \xc0\xaf", "\"overlong \\xc0\\xaf\""},
		{"surrogate \xed\xa0\x80", "\"surrogate \\xed\\xa0\\x80\""},
		{"nbsp \xc2\xa0 c1 \xc2\x85 bom \xef\xbb\xbf",
		 "\"nbsp \\u00a0 c1 \\u0085 bom \\ufeff\""},
		{"astral \xf0\x9f\x98\x80 pua \xf3\xb0\x80\x80",
		 "\"astral \xf0\x9f\x98\x80 pua \\U000f0000\""},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *got = NULL;

		assert_int_equal(ts_log_quote(rows[i].in, &got), 0);
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("row %zu: want %s, got %s", i, rows[i].want, got);
	}
}

static void test_format_line(void **state)
{
	static const struct {
		enum ts_log_format format;
		enum ts_log_level level;
		const char *msg, *want;
	} rows[] = {
		{TS_LOG_FORMAT_JSON, TS_LOG_ERROR, "config.json: '/x': bad \"v\"",
		 "{\"level\":\"error\",\"msg\":\"toposhim: config.json: '/x': bad \\\"v\\\"\","
		 "\"time\":\"2026-11-30T01:02:03Z\"}\n"},
		{TS_LOG_FORMAT_JSON, TS_LOG_WARNING, "w",
		 "{\"level\":\"warning\",\"msg\":\"toposhim: "
		 "w\",\"time\":\"2026-11-30T01:02:03Z\"}\n"},
		{TS_LOG_FORMAT_JSON, TS_LOG_DEBUG, "tab\there \xff",
		 "{\"level\":\"debug\",\"msg\":\"toposhim: tab\\\\there \\\\xff\","
		 "\"time\":\"2026-11-30T01:02:03Z\"}\n"},
		/* helper-14: what an engine decodes is one line, no escape sequence */
		{TS_LOG_FORMAT_JSON, TS_LOG_ERROR, "class 'crit\nical \x1b[31m'",
		 "{\"level\":\"error\",\"msg\":\"toposhim: class 'crit\\\\nical "
		 "\\\\x1b[31m'\",\"time\":\"2026-11-30T01:02:03Z\"}\n"},
		{TS_LOG_FORMAT_TEXT, TS_LOG_ERROR, "no OCI runtime found",
		 "time=\"2026-11-30T01:02:03Z\" level=error msg=\"toposhim: no OCI runtime "
		 "found\"\n"},
		{TS_LOG_FORMAT_TEXT, TS_LOG_INFO, "plain-word_1.2/x@y^z+",
		 "time=\"2026-11-30T01:02:03Z\" level=info msg=\"toposhim: "
		 "plain-word_1.2/x@y^z+\"\n"},
		{TS_LOG_FORMAT_TEXT, TS_LOG_WARNING, "say \"hi\"\n",
		 "time=\"2026-11-30T01:02:03Z\" level=warning msg=\"toposhim: say "
		 "\\\"hi\\\"\\n\"\n"},
		{TS_LOG_FORMAT_TEXT, TS_LOG_DEBUG, "",
		 "time=\"2026-11-30T01:02:03Z\" level=debug msg=\"toposhim: \"\n"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *line = NULL;

		assert_int_equal(ts_log_format_line(rows[i].format, rows[i].level, rows[i].msg, T0,
						    &line, &err),
				 0);
		if (strcmp(line, rows[i].want) != 0)
			fail_msg("row %zu: want %s, got %s", i, rows[i].want, line);
	}
}

static void test_format_line_errors(void **state)
{
	cleanup_error struct ts_error *err = NULL, *err2 = NULL;
	cleanup_free char *line = NULL;

	assert_int_equal(
		ts_log_format_line(TS_LOG_FORMAT_TEXT, TS_LOG_LEVEL_INVALID, "m", T0, &line, &err),
		-EINVAL);
	assert_string_equal(err->msg, "invalid log level -22");
	assert_int_equal(
		ts_log_format_line(_TS_LOG_FORMAT_MAX, TS_LOG_ERROR, "m", T0, &line, &err2),
		-EINVAL);
	assert_string_equal(err2->msg, "invalid log format 2");
	assert_null(line);
}

/* A temporary directory with "stderr" (opened for us) and a log path. */
struct sink {
	char dir[32];
	char log[64];
	char err_path[64];
	int err_fd;
};

static void sink_open(struct sink *s)
{
	strcpy(s->dir, "/tmp/ts-log-XXXXXX");
	assert_non_null(mkdtemp(s->dir));
	snprintf(s->log, sizeof(s->log), "%s/log.json", s->dir);
	snprintf(s->err_path, sizeof(s->err_path), "%s/stderr", s->dir);
	s->err_fd = open(s->err_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(s->err_fd >= 0);
}

static char *sink_read(const char *path)
{
	cleanup_error struct ts_error *err = NULL;
	char *buf = NULL;

	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err) < 0)
		return NULL;
	return buf;
}

static void sink_close(struct sink *s)
{
	close(s->err_fd);
	unlink(s->err_path);
	unlink(s->log);
	assert_int_equal(rmdir(s->dir), 0);
}

static void test_emit_stderr_only(void **state)
{
	struct sink s;
	struct ts_log_settings settings = {NULL, TS_LOG_FORMAT_JSON, TS_LOG_INFO};
	cleanup_free char *got = NULL, *log = NULL;

	sink_open(&s);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_ERROR, "boom 'x'", T0), 0);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_WARNING, "careful", T0), 0);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_INFO, "fyi", T0), 0);
	/* debug is filtered out at level info */
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_DEBUG, "hidden", T0), 0);
	got = sink_read(s.err_path);
	assert_string_equal(got, "toposhim: boom 'x'\ntoposhim: warning: careful\n"
				 "toposhim: info: fyi\n");
	log = sink_read(s.log);
	assert_null(log);
	sink_close(&s);
}

/* Values from config.json reach messages: on stderr they stay one line
 * and cannot drive the terminal; quotes, backslashes and UTF-8 are kept. */
static void test_emit_stderr_escapes_controls(void **state)
{
	struct sink s;
	struct ts_log_settings settings = {NULL, TS_LOG_FORMAT_JSON, TS_LOG_INFO};
	cleanup_free char *got = NULL, *esc = NULL;

	sink_open(&s);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_ERROR,
				     "invalid cpu count '2\ntoposhim: fake'", T0),
			 0);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_WARNING,
				     "numa 'x\x1b[31mRED\t\r' \"q\" \\ \xc3\xa9 \xff", T0),
			 0);
	got = sink_read(s.err_path);
	assert_string_equal(got, "toposhim: invalid cpu count '2\\ntoposhim: fake'\n"
				 "toposhim: warning: numa 'x\\x1b[31mRED\\t\\r' \"q\" \\ \xc3\xa9 "
				 "\\xff\n");
	sink_close(&s);
	assert_int_equal(ts_log_escape_controls("plain 'a' \\n", &esc), 0);
	assert_string_equal(esc, "plain 'a' \\n");
	free(esc);
	/* the C1 controls (U+009B is a one-character CSI) and DEL; U+00A0 as is */
	assert_int_equal(ts_log_escape_controls("x\x7fy\xc2\x9b"
						"31mz\xc2\x80\xc2\xa0",
						&esc),
			 0);
	assert_string_equal(esc, "x\\x7fy\\u009b31mz\\u0080\xc2\xa0");
}

static void test_emit_log_file(void **state)
{
	struct sink s;
	struct ts_log_settings settings = {NULL, TS_LOG_FORMAT_JSON, TS_LOG_DEBUG};
	cleanup_free char *got = NULL, *log = NULL;
	struct stat st;

	umask(022);
	sink_open(&s);
	settings.path = s.log;
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_DEBUG, "d", T0), 0);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_WARNING, "w", T0), 0);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_ERROR, "e", T0 + 1), 0);
	got = sink_read(s.err_path);
	/* only the error also goes to stderr, as runc's fatal() does */
	assert_string_equal(got, "toposhim: e\n");
	log = sink_read(s.log);
	assert_string_equal(
		log,
		"{\"level\":\"debug\",\"msg\":\"toposhim: d\",\"time\":\"2026-11-30T01:02:03Z\"}\n"
		"{\"level\":\"warning\",\"msg\":\"toposhim: "
		"w\",\"time\":\"2026-11-30T01:02:03Z\"}\n"
		"{\"level\":\"error\",\"msg\":\"toposhim: "
		"e\",\"time\":\"2026-11-30T01:02:04Z\"}\n");
	assert_int_equal(stat(s.log, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	sink_close(&s);
}

static void test_emit_appends_text(void **state)
{
	struct sink s;
	struct ts_log_settings settings = {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_INFO};
	cleanup_free char *log = NULL;
	int fd;

	sink_open(&s);
	settings.path = s.log;
	fd = open(s.log, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "runc line\n", 10), 10);
	close(fd);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_WARNING, "a b", T0), 0);
	log = sink_read(s.log);
	assert_string_equal(
		log,
		"runc line\ntime=\"2026-11-30T01:02:03Z\" level=warning msg=\"toposhim: a b\"\n");
	sink_close(&s);
}

static void test_emit_unwritable_log(void **state)
{
	struct sink s;
	struct ts_log_settings settings = {"/nonexistent-dir/log.json", TS_LOG_FORMAT_JSON,
					   TS_LOG_INFO};
	cleanup_free char *got = NULL;

	sink_open(&s);
	assert_int_equal(ts_log_emit(&settings, s.err_fd, TS_LOG_WARNING, "w", T0), -ENOENT);
	got = sink_read(s.err_path);
	assert_string_equal(got, "toposhim: warning: w (cannot write log file "
				 "'/nonexistent-dir/log.json': No such file or directory)\n");
	sink_close(&s);
}

static void test_settings_from_args(void **state)
{
	static const struct {
		struct ts_cli_args args;
		struct ts_log_settings want;
	} rows[] = {
		{{.log = "/l.json", .log_format = "json"},
		 {"/l.json", TS_LOG_FORMAT_JSON, TS_LOG_INFO}},
		{{.log = "/l", .log_format = "text"}, {"/l", TS_LOG_FORMAT_TEXT, TS_LOG_INFO}},
		{{.log_format = "json", .debug = true}, {NULL, TS_LOG_FORMAT_JSON, TS_LOG_DEBUG}},
		{{.log = "/dev/stderr"}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_WARNING}},
		{{.log = "file:/x/log"}, {"/x/log", TS_LOG_FORMAT_TEXT, TS_LOG_INFO}},
		{{.log = "journald:id"}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_WARNING}},
		{{.log = "syslog:id"}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_WARNING}},
		{{.log = ""}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_WARNING}},
		{{.log_level = "warn"}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_WARNING}},
		{{.log_level = "info"}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_INFO}},
		{{.log_level = "bogus"}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_WARNING}},
		{{.log_level = "error", .debug = true}, {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_DEBUG}},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ts_log_settings got;

		ts_log_settings_from_args(&rows[i].args, &got);
		if ((got.path == NULL) != (rows[i].want.path == NULL) ||
		    (got.path != NULL && strcmp(got.path, rows[i].want.path) != 0) ||
		    got.format != rows[i].want.format || got.level != rows[i].want.level)
			fail_msg("row %zu: got path '%s' format %d level %d", i,
				 got.path ? got.path : "(null)", got.format, got.level);
	}
}

static bool starts_with(const char *s, const char *prefix)
{
	return s != NULL && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Run ts_log() (the global settings of args) with stderr on the sink. */
static void with_stderr_on(struct sink *s, int *saved)
{
	fflush(stderr);
	*saved = dup(STDERR_FILENO);
	assert_true(*saved >= 0);
	assert_int_equal(dup2(s->err_fd, STDERR_FILENO), STDERR_FILENO);
}

static void stderr_back(int saved)
{
	assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
	close(saved);
}

/* A create holds its lines until the exec, or until an error, which comes
 * first (helper-7: podman showed a warning as the failure). */
static void test_hold(void **state)
{
	struct sink s;
	cleanup_free char *got = NULL, *log = NULL;
	struct ts_cli_args args = {.log_format = "json"};
	char *line2;
	int saved;

	/* stderr: held, then released in order before the exec */
	sink_open(&s);
	ts_log_setup(&args);
	with_stderr_on(&s, &saved);
	ts_log_hold_stderr();
	ts_log(TS_LOG_WARNING, "w1");
	ts_log(TS_LOG_DEBUG, "filtered");
	ts_log(TS_LOG_WARNING, "w2");
	got = sink_read(s.err_path);
	assert_string_equal(got, "");
	ts_log_release_stderr();
	ts_log(TS_LOG_WARNING, "w3"); /* not held any more */
	free(got);
	got = sink_read(s.err_path);
	assert_string_equal(got, "toposhim: warning: w1\ntoposhim: warning: w2\n"
				 "toposhim: warning: w3\n");
	/* an error: the only line of what was held (helper-24: podman
	 * without a --log file shows every line); not held after it */
	assert_int_equal(ftruncate(s.err_fd, 0), 0);
	assert_int_equal(lseek(s.err_fd, 0, SEEK_SET), 0);
	ts_log_hold_stderr();
	ts_log(TS_LOG_WARNING, "w");
	ts_log(TS_LOG_ERROR, "refused");
	ts_log(TS_LOG_WARNING, "after");
	free(got);
	got = sink_read(s.err_path);
	assert_string_equal(got, "toposhim: refused\ntoposhim: warning: after\n");
	/* with --debug, what was held follows the error (helper-25) */
	args.debug = true;
	ts_log_setup(&args);
	assert_int_equal(ftruncate(s.err_fd, 0), 0);
	assert_int_equal(lseek(s.err_fd, 0, SEEK_SET), 0);
	ts_log_hold_stderr();
	ts_log(TS_LOG_DEBUG, "d");
	ts_log(TS_LOG_ERROR, "refused");
	free(got);
	got = sink_read(s.err_path);
	assert_string_equal(got, "toposhim: refused\ntoposhim: debug: d\n");
	args.debug = false;
	ts_log_setup(&args);
	stderr_back(saved);
	sink_close(&s);

	/* --log: the file gets the error first too; stderr the error only */
	sink_open(&s);
	args.log = s.log;
	ts_log_setup(&args);
	with_stderr_on(&s, &saved);
	ts_log_hold_stderr();
	ts_log(TS_LOG_WARNING, "w");
	ts_log(TS_LOG_INFO, "i");
	log = sink_read(s.log);
	assert_null(log); /* nothing written yet */
	ts_log(TS_LOG_ERROR, "refused");
	stderr_back(saved);
	free(got);
	got = sink_read(s.err_path);
	assert_string_equal(got, "toposhim: refused\n");
	log = sink_read(s.log);
	assert_non_null(log);
	assert_true(starts_with(log, "{\"level\":\"error\",\"msg\":\"toposhim: refused\","));
	line2 = strchr(log, '\n');
	assert_non_null(line2);
	assert_true(starts_with(line2 + 1, "{\"level\":\"warning\",\"msg\":\"toposhim: w\","));
	line2 = strchr(line2 + 1, '\n');
	assert_non_null(line2);
	assert_true(starts_with(line2 + 1, "{\"level\":\"info\",\"msg\":\"toposhim: i\","));
	sink_close(&s);
	args.log = NULL;
	ts_log_setup(&args);
}

/* ts_log_keep_warnings(): warnings only, whatever the level lets through,
 * while on, at most 32, taken once. */
static void test_keep_warnings(void **state)
{
	struct sink s;
	struct ts_cli_args args = {.log_level = "error"};
	cleanup_strv char **kept = NULL;
	int saved;

	sink_open(&s);
	ts_log_setup(&args);
	with_stderr_on(&s, &saved);
	assert_null(ts_log_take_warnings());
	ts_log(TS_LOG_WARNING, "before");
	ts_log_keep_warnings(true);
	ts_log(TS_LOG_WARNING, "w1 %d", 1);
	ts_log(TS_LOG_INFO, "info");
	ts_log(TS_LOG_ERROR, "error");
	ts_log(TS_LOG_WARNING, "w2");
	ts_log_keep_warnings(false);
	ts_log(TS_LOG_WARNING, "after");
	kept = ts_log_take_warnings();
	assert_non_null(kept);
	assert_string_equal(kept[0], "w1 1");
	assert_string_equal(kept[1], "w2");
	assert_null(kept[2]);
	assert_null(ts_log_take_warnings());
	ts_strv_freep(&kept);
	ts_log_keep_warnings(true);
	for (int i = 0; i < 40; i++)
		ts_log(TS_LOG_WARNING, "w%d", i);
	ts_log_keep_warnings(false);
	kept = ts_log_take_warnings();
	for (int i = 0; i < 32; i++) {
		char want[8];

		snprintf(want, sizeof(want), "w%d", i);
		assert_string_equal(kept[i], want);
	}
	assert_string_equal(kept[32], "and 8 more warnings, not kept");
	assert_null(kept[33]);
	stderr_back(saved);
	sink_close(&s);
	args.log_level = NULL;
	ts_log_setup(&args);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_names),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_format_line),
		cmocka_unit_test(test_format_line_errors),
		cmocka_unit_test(test_emit_stderr_only),
		cmocka_unit_test(test_emit_stderr_escapes_controls),
		cmocka_unit_test(test_emit_log_file),
		cmocka_unit_test(test_emit_appends_text),
		cmocka_unit_test(test_emit_unwritable_log),
		cmocka_unit_test(test_settings_from_args),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_keep_warnings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
