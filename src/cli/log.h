/*
 * log.h - runc-compatible error and diagnostic lines, written before exec.
 *
 * Engines read a failing runtime's last error line, so toposhim reports in
 * the shape runc does (runc 1.1 with logrus 1.8, crun 1.8):
 *  - without --log, every line goes to stderr as "toposhim: <msg>" for an
 *    error and "toposhim: <level>: <msg>" otherwise (plain text: stderr is
 *    read by people and shown verbatim by podman and ctr);
 *  - with --log FILE, every line is appended to FILE in the engine's
 *    format (O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC, mode 0644, one write()
 *    per line), and an error is also written to stderr as above, as runc's
 *    fatal() does.  --log-format json gives
 *      {"level":"error","msg":"...","time":"2026-11-30T01:02:03Z"}
 *    (keys sorted as logrus writes them, built with ts_json and
 *    ts_json_serialize; invalid UTF-8 becomes U+FFFD as Go's encoder
 *    does), anything else logrus's text form
 *      time="2026-11-30T01:02:03Z" level=error msg="..."
 *    where a value is quoted with Go's %q rules only when it holds a
 *    character outside [A-Za-z0-9-._/@^+].
 *  - times are RFC 3339 in UTC, to the second.
 * Levels: error, warning, info, debug.  Written by default: info and above
 * to a --log file, warning and above when stderr is the only target (it is
 * what `toposhim run` prints next to the container's output);
 * --log-level sets the threshold, --debug adds debug.
 * Nothing here writes to stdout: stdout belongs to the runtime.
 *
 * The settings are the one global of this module (STYLE.md 2.4 allows log
 * settings); ts_log_setup() fills them from the scanned argv.
 */
#ifndef TS_CLI_LOG_H
#define TS_CLI_LOG_H

#include <errno.h>
#include <time.h>

#include "cli/scan.h"
#include "util/error.h"

enum ts_log_level {
	TS_LOG_ERROR,
	TS_LOG_WARNING,
	TS_LOG_INFO,
	TS_LOG_DEBUG,
	_TS_LOG_LEVEL_MAX,
	TS_LOG_LEVEL_INVALID = -EINVAL,
};

enum ts_log_format {
	TS_LOG_FORMAT_TEXT,
	TS_LOG_FORMAT_JSON,
	_TS_LOG_FORMAT_MAX,
	TS_LOG_FORMAT_INVALID = -EINVAL,
};

struct ts_log_settings {
	const char *path;	   /* --log FILE; NULL: stderr only. Borrowed. */
	enum ts_log_format format; /* --log-format, for FILE */
	enum ts_log_level level;   /* most verbose level written */
};

/**
 * Parse a level name as runc/logrus accept it.
 * @return TS_LOG_ERROR for "panic", "fatal", "error"; TS_LOG_WARNING for
 *         "warn", "warning"; TS_LOG_INFO for "info"; TS_LOG_DEBUG for
 *         "debug", "trace"; TS_LOG_LEVEL_INVALID otherwise (NULL included).
 */
enum ts_log_level ts_log_level_from_string(const char *s);

/** Name of a level as written in lines: "error", "warning", "info", "debug". */
const char *ts_log_level_to_string(enum ts_log_level level);

/**
 * Escape what would break a one-line stderr message: newline, tab and CR
 * as \n, \t, \r, other C0 control characters and DEL (and bytes that are
 * not UTF-8) as \xNN, the C1 controls U+0080..U+009F (U+009B is a CSI) as
 * \uNNNN; everything else, quotes and backslashes included, as is.
 * @param[in]  s    NUL-terminated; borrowed.
 * @param[out] ret  the escaped text; caller frees.
 * @return 0; -ENOMEM.
 */
int ts_log_escape_controls(const char *s, char **ret);

/**
 * Quote s with Go's %q rules (strconv.Quote): \a \b \f \n \r \t \v \\ \"
 * escapes, \xNN for other ASCII controls, DEL and each byte of invalid
 * UTF-8, \uNNNN for C1 controls, non-ASCII spaces and format characters;
 * other valid UTF-8 is kept as is (Go would also escape unassigned code
 * points; we do not carry Unicode tables).
 * @param[out] ret  the quoted string with its double quotes; caller frees.
 * @return 0; -ENOMEM (no error object: callers add context).
 */
int ts_log_quote(const char *s, char **ret);

/**
 * Format one log line for a --log file.
 * @param[in]  format  text or json.
 * @param[in]  level   a valid level.
 * @param[in]  msg     the message (any bytes, NUL-terminated); written as
 *                     "toposhim: <msg>", as on stderr: engines show it as
 *                     the runtime's own; for json with its control
 *                     characters and invalid UTF-8 bytes escaped as on
 *                     stderr (ts_log_escape_controls()), so that the msg an
 *                     engine decodes is one line.
 * @param[in]  now     the time to write (seconds since the epoch, UTC).
 * @param[out] ret_line  the line with its trailing '\n'; caller frees.
 * @param[out] err     set iff the return value is negative.
 * @return 0; -EINVAL for an invalid format or level; -ENOMEM.
 */
int ts_log_format_line(enum ts_log_format format, enum ts_log_level level, const char *msg,
		       time_t now, char **ret_line, struct ts_error **err);

/**
 * Write one message where the settings say (see the top of this file).
 * @param[in] settings   where and how; borrowed.
 * @param[in] stderr_fd  the fd standing for stderr (STDERR_FILENO; tests
 *                       pass a file).
 * @param[in] level      a valid level; lines above settings->level are dropped.
 * @param[in] msg        the message.
 * @param[in] now        the time for the --log line.
 * @return 0 (also when the level is filtered out); -errno of open() or
 *         write() of the log file, in which case the line went to
 *         stderr_fd instead with "(cannot write log file '<path>': <strerror>)"
 *         appended; -ENOMEM.  No error object: there is nowhere left to
 *         report one.
 */
int ts_log_emit(const struct ts_log_settings *settings, int stderr_fd, enum ts_log_level level,
		const char *msg, time_t now);

/**
 * Settings for a scanned argv:
 *  - path: --log, except none for "/dev/stderr" (runc's default) and for
 *    crun's "journald:..." and "syslog:..." targets; crun's "file:PATH"
 *    means PATH;
 *  - format json when --log-format is "json", else text;
 *  - level debug with --debug, else --log-level when valid, else info.
 * @param[in]  args  scanned argv; borrowed, ret->path points into it.
 * @param[out] ret   filled.
 */
void ts_log_settings_from_args(const struct ts_cli_args *args, struct ts_log_settings *ret);

/** Set the global settings with ts_log_settings_from_args(). */
void ts_log_setup(const struct ts_cli_args *args);

/** Log a printf-formatted message at level with the global settings, now.
 * An error also releases what ts_log_hold_stderr() held for the --log
 * file, after itself, and drops what it held for stderr (but with
 * --debug, which writes it after itself too). */
void ts_log(enum ts_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * From now on, hold the lines ts_log() writes (to stderr, or with --log to
 * the log file) until ts_log_release_stderr() or an error: in the log file
 * the error line comes first, then what was held, each line with its own
 * time; on stderr the error line is the only one (what was held for it is
 * dropped), but with --debug, which a person asks for.  For create and run: an engine shows the
 * runtime's first line as the failure (podman decodes the first JSON object of its --log file:
 * "Error: OCI runtime error: <msg>"), podman without a --log file every
 * line of stderr (helper-24 saw a refusal followed by ten warnings), and
 * containerd the last error-level line of the log; so the refusal must
 * come first and be the only error.  helper-7 saw podman head its failure
 * with a CDI registry warning while the refusal was the fourth line.  The
 * lines wait in memfds made at the first one (none when nothing is held;
 * when one cannot be made, the line is written at once).
 */
void ts_log_hold_stderr(void);

/** Write what ts_log_hold_stderr() held to stderr and to the --log file,
 * in order, and stop holding; nothing when nothing was held.  Call before
 * exec'ing the runtime: its own lines come after ours. */
void ts_log_release_stderr(void);

/**
 * Like ts_log(), but only into the --log file: nothing when there is none
 * (stderr is then the runtime's alone).  For notes that are not the
 * user's business, such as the scanner's reason for a passthrough.
 */
void ts_log_file_only(enum ts_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/**
 * Start (true) or stop (false) keeping a copy of the message of every
 * ts_log() at level warning, whatever the log level lets through: a create
 * keeps its warnings for <state dir>/creates.log (ts_state_note_create()).
 * At most 32 are kept; later ones are counted.
 */
void ts_log_keep_warnings(bool on);

/**
 * The warnings kept so far, oldest first, then "and N more warnings, not
 * kept" when more came, and forget them.
 * @return a NULL-terminated array the caller frees (ts_strv_freep()); NULL
 *         when none were kept, or out of memory (they are then dropped).
 */
char **ts_log_take_warnings(void);

/** Log an error value (ts_error_format()) at level error. */
void ts_log_error(const struct ts_error *e);

#endif
