/* log.c - see log.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/log.h"
#include "oci/json.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static struct ts_log_settings ts_log_settings = {NULL, TS_LOG_FORMAT_TEXT, TS_LOG_INFO};

static const char *const ts_log_level_names[_TS_LOG_LEVEL_MAX] = {
	[TS_LOG_ERROR] = "error",
	[TS_LOG_WARNING] = "warning",
	[TS_LOG_INFO] = "info",
	[TS_LOG_DEBUG] = "debug",
};

enum ts_log_level ts_log_level_from_string(const char *s)
{
	static const struct {
		const char *name;
		enum ts_log_level level;
	} names[] = {
		{"panic", TS_LOG_ERROR},  {"fatal", TS_LOG_ERROR},     {"error", TS_LOG_ERROR},
		{"warn", TS_LOG_WARNING}, {"warning", TS_LOG_WARNING}, {"info", TS_LOG_INFO},
		{"debug", TS_LOG_DEBUG},  {"trace", TS_LOG_DEBUG},
	};

	for (size_t i = 0; s != NULL && i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].level;
	return TS_LOG_LEVEL_INVALID;
}

const char *ts_log_level_to_string(enum ts_log_level level)
{
	if (level < 0 || level >= _TS_LOG_LEVEL_MAX)
		return "invalid";
	return ts_log_level_names[level];
}

/*
 * Decode one UTF-8 sequence as Go does (no overlongs, no surrogates, at
 * most U+10FFFF).  @return the code point and *len its byte length, or -1
 * with *len = 1 for an invalid byte.
 */
static int32_t ts_log_utf8_decode(const unsigned char *s, size_t *len)
{
	static const struct {
		unsigned char mask, lead;
		int32_t min;
	} forms[] = {{0xe0, 0xc0, 0x80}, {0xf0, 0xe0, 0x800}, {0xf8, 0xf0, 0x10000}};
	int32_t cp;

	*len = 1;
	if (s[0] < 0x80)
		return s[0];
	for (size_t n = 0; n < ARRAY_SIZE(forms); n++) {
		if ((s[0] & forms[n].mask) != forms[n].lead)
			continue;
		cp = s[0] & (unsigned char)~forms[n].mask;
		for (size_t k = 1; k <= n + 1; k++) {
			if ((s[k] & 0xc0) != 0x80)
				return -1;
			cp = (cp << 6) | (s[k] & 0x3f);
		}
		if (cp < forms[n].min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return -1;
		*len = n + 2;
		return cp;
	}
	return -1;
}

/* Non-ASCII code points Go's strconv.IsPrint rejects that we know of. */
static bool ts_log_unprintable(int32_t cp)
{
	static const int32_t ranges[][2] = {
		{0x80, 0xa0},	  {0xad, 0xad},	    {0x600, 0x605},   {0x61c, 0x61c},
		{0x1680, 0x1680}, {0x180e, 0x180e}, {0x2000, 0x200f}, {0x2028, 0x202f},
		{0x205f, 0x2064}, {0x2066, 0x206f}, {0x3000, 0x3000}, {0xe000, 0xf8ff},
		{0xfeff, 0xfeff}, {0xfff9, 0xfffb}, {0xfffe, 0xffff}, {0xf0000, 0x10ffff},
	};

	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
		if (cp >= ranges[i][0] && cp <= ranges[i][1])
			return true;
	return (cp & 0xfffe) == 0xfffe; /* noncharacters U+nFFFE, U+nFFFF */
}

/* Append the %q form of one code point (or invalid byte) to f. */
static void ts_log_quote_one(FILE *f, const unsigned char *s, int32_t cp, size_t len)
{
	static const char simple[] = "\a\b\f\n\r\t\v\\\"";
	static const char letter[] = "abfnrtv\\\"";
	const char *p;

	if (cp < 0) {
		fprintf(f, "\\x%02x", s[0]);
		return;
	}
	if (cp < 0x80 && cp != 0 && (p = strchr(simple, (int)cp)) != NULL) {
		fprintf(f, "\\%c", letter[p - simple]);
		return;
	}
	if (cp < 0x20 || cp == 0x7f) {
		fprintf(f, "\\x%02x", (unsigned)cp);
		return;
	}
	if (cp >= 0x80 && ts_log_unprintable(cp)) {
		if (cp > 0xffff)
			fprintf(f, "\\U%08x", (unsigned)cp);
		else
			fprintf(f, "\\u%04x", (unsigned)cp);
		return;
	}
	fwrite(s, 1, len, f);
}

/* Write s through one(), code point by code point, between wrap and wrap,
 * into a new string. @return 0; -ENOMEM. */
static int ts_log_map(const char *s, const char *wrap,
		      void (*one)(FILE *f, const unsigned char *s, int32_t cp, size_t len),
		      char **ret)
{
	const unsigned char *u = (const unsigned char *)s;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return -ENOMEM;
	fputs(wrap, f);
	while (*u != '\0') {
		size_t len;
		int32_t cp = ts_log_utf8_decode(u, &len);

		one(f, u, cp, len);
		u += len;
	}
	fputs(wrap, f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	*ret = buf;
	return 0;
}

int ts_log_quote(const char *s, char **ret)
{
	return ts_log_map(s, "\"", ts_log_quote_one, ret);
}

/* logrus's needsQuoting(): any byte outside [A-Za-z0-9-._/@^+]. */
static bool ts_log_needs_quoting(const char *s)
{
	for (; *s != '\0'; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("-._/@^+", c) != NULL))
			return true;
	}
	return false;
}

/* Copy of s with every invalid UTF-8 byte replaced by U+FFFD. */
static char *ts_log_valid_utf8(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out = malloc(strlen(s) * 3 + 1), *o = out;

	if (out == NULL)
		return NULL;
	while (*u != '\0') {
		size_t len;

		if (ts_log_utf8_decode(u, &len) < 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
		} else {
			memcpy(o, u, len);
			o += len;
		}
		u += len;
	}
	*o = '\0';
	return out;
}

static int ts_log_json_line(const char *level, const char *msg, const char *time_str,
			    char **ret_line, struct ts_error **err)
{
	cleanup_json struct ts_json *obj = ts_json_new_object();
	cleanup_free char *valid = ts_log_valid_utf8(msg);
	cleanup_free char *text = NULL;
	size_t len = 0;
	int r;

	if (obj == NULL || valid == NULL)
		return ts_error_set(err, ENOMEM, "cannot format a log line");
	r = ts_json_object_set(obj, "level", ts_json_new_string(level), err);
	if (r >= 0)
		r = ts_json_object_set(obj, "msg", ts_json_new_string(valid), err);
	if (r >= 0)
		r = ts_json_object_set(obj, "time", ts_json_new_string(time_str), err);
	if (r >= 0)
		r = ts_json_serialize(obj, false, &text, &len, err);
	if (r < 0)
		return r;
	if (asprintf(ret_line, "%s\n", text) < 0)
		return ts_error_set(err, ENOMEM, "cannot format a log line");
	return 0;
}

static int ts_log_text_line(const char *level, const char *msg, const char *time_str,
			    char **ret_line, struct ts_error **err)
{
	cleanup_free char *quoted = NULL;

	if (ts_log_needs_quoting(msg)) {
		if (ts_log_quote(msg, &quoted) < 0)
			return ts_error_set(err, ENOMEM, "cannot format a log line");
	}
	if (asprintf(ret_line, "time=\"%s\" level=%s msg=%s\n", time_str, level,
		     quoted != NULL ? quoted : msg) < 0)
		return ts_error_set(err, ENOMEM, "cannot format a log line");
	return 0;
}

int ts_log_format_line(enum ts_log_format format, enum ts_log_level level, const char *msg,
		       time_t now, char **ret_line, struct ts_error **err)
{
	cleanup_free char *full = NULL, *safe = NULL;
	char time_str[64];
	struct tm tm;

	if (level < 0 || level >= _TS_LOG_LEVEL_MAX)
		return ts_error_set(err, 0, "invalid log level %d", (int)level);
	/* one line for whoever shows msg, as on stderr: JSON keeps a newline
	 * of a value as \n, which containerd decodes into the CRI error
	 * (helper-14: an annotation "crit\nical" split it; an escape
	 * sequence reached kubectl describe).  The text format's quoting
	 * keeps the line whole for its readers, as logrus's does. */
	if (format == TS_LOG_FORMAT_JSON && msg != NULL && ts_log_escape_controls(msg, &safe) == 0)
		msg = safe;
	/* the engine shows this msg as the runtime's ("OCI runtime create
	 * failed: ..."): without the name, nothing says toposhim wrote it */
	if (asprintf(&full, "toposhim: %s", msg != NULL ? msg : "") < 0)
		return ts_error_set(err, ENOMEM, "log line");
	msg = full;
	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(time_str, sizeof(time_str), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return ts_error_set(err, EOVERFLOW, "cannot format time %lld", (long long)now);
	switch (format) {
	case TS_LOG_FORMAT_JSON:
		return ts_log_json_line(ts_log_level_names[level], msg, time_str, ret_line, err);
	case TS_LOG_FORMAT_TEXT:
		return ts_log_text_line(ts_log_level_names[level], msg, time_str, ret_line, err);
	default:
		return ts_error_set(err, 0, "invalid log format %d", (int)format);
	}
}

/* One code point of ts_log_escape_controls(). */
static void ts_log_escape_one(FILE *f, const unsigned char *s, int32_t cp, size_t len)
{
	if (cp == '\n')
		fputs("\\n", f);
	else if (cp == '\t')
		fputs("\\t", f);
	else if (cp == '\r')
		fputs("\\r", f);
	else if (cp < 0x20 || cp == 0x7f)
		fprintf(f, "\\x%02x", s[0]); /* also an invalid UTF-8 byte (cp < 0) */
	else if (cp >= 0x80 && cp <= 0x9f)
		/* the C1 controls: U+009B is a CSI of its own (helper-15) */
		fprintf(f, "\\u%04x", (unsigned)cp);
	else
		fwrite(s, 1, len, f);
}

int ts_log_escape_controls(const char *s, char **ret)
{
	return ts_log_map(s, "", ts_log_escape_one, ret);
}

static int ts_log_stderr(int fd, enum ts_log_level level, const char *msg, const char *note)
{
	cleanup_free char *line = NULL, *safe = NULL;
	int r;

	/* one line, whatever the values in the message hold: a newline or an
	 * escape sequence from config.json must not forge a second line or
	 * drive the terminal */
	if (ts_log_escape_controls(msg, &safe) == 0)
		msg = safe;
	if (level == TS_LOG_ERROR)
		r = asprintf(&line, "toposhim: %s%s\n", msg, note);
	else
		r = asprintf(&line, "toposhim: %s: %s%s\n", ts_log_level_to_string(level), msg,
			     note);
	if (r < 0)
		return -ENOMEM;
	return ts_write_all(fd, line, (size_t)r);
}

/* Append one line to the --log file. @return 0 or -errno. */
static int ts_log_append(const char *path, const char *line)
{
	cleanup_close int fd =
		open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);

	if (fd < 0)
		return -errno;
	return ts_write_all(fd, line, strlen(line));
}

int ts_log_emit(const struct ts_log_settings *settings, int stderr_fd, enum ts_log_level level,
		const char *msg, time_t now)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *line = NULL, *note = NULL;
	int r;

	if (level < 0 || level > settings->level)
		return 0;
	if (settings->path == NULL)
		return ts_log_stderr(stderr_fd, level, msg, "");
	r = ts_log_format_line(settings->format, level, msg, now, &line, &err);
	if (r >= 0)
		r = ts_log_append(settings->path, line);
	if (r >= 0)
		return level == TS_LOG_ERROR ? ts_log_stderr(stderr_fd, level, msg, "") : 0;
	if (asprintf(&note, " (cannot write log file '%s': %s)", settings->path,
		     err != NULL ? err->msg : strerror(-r)) < 0)
		note = NULL;
	(void)ts_log_stderr(stderr_fd, level, msg, note != NULL ? note : "");
	return r;
}

void ts_log_settings_from_args(const struct ts_cli_args *args, struct ts_log_settings *ret)
{
	enum ts_log_level level = ts_log_level_from_string(args->log_level);
	const char *path = args->log;

	if (path != NULL && strncmp(path, "file:", 5) == 0)
		path += 5;
	if (path != NULL &&
	    (strcmp(path, "/dev/stderr") == 0 || path[0] == '\0' ||
	     strncmp(path, "journald:", 9) == 0 || strncmp(path, "syslog:", 7) == 0))
		path = NULL;
	ret->path = path;
	ret->format = args->log_format != NULL && strcmp(args->log_format, "json") == 0
			      ? TS_LOG_FORMAT_JSON
			      : TS_LOG_FORMAT_TEXT;
	if (args->debug)
		ret->level = TS_LOG_DEBUG;
	else if (level != TS_LOG_LEVEL_INVALID)
		ret->level = level;
	else if (path != NULL)
		ret->level = TS_LOG_INFO;
	else
		/* stderr is what `toposhim run` prints next to the container's
		 * own output: only what needs the operator's attention */
		ret->level = TS_LOG_WARNING;
}

void ts_log_setup(const struct ts_cli_args *args)
{
	ts_log_settings_from_args(args, &ts_log_settings);
}

/* ts_log_hold_stderr(): holding, and the memfds of the held lines: those
 * for stderr and those for the --log file (-1 until the first) */
static bool ts_log_holding;
static int ts_log_held_fd[2] = {-1, -1};

void ts_log_hold_stderr(void)
{
	ts_log_holding = true;
}

/* Copy what memfd fd holds to out_fd, and close it. */
static void ts_log_put_back(int *fd, int out_fd)
{
	char buf[4096];
	ssize_t n;

	if (*fd < 0)
		return;
	if (out_fd >= 0 && lseek(*fd, 0, SEEK_SET) == 0)
		while ((n = read(*fd, buf, sizeof(buf))) > 0)
			if (ts_write_all(out_fd, buf, (size_t)n) < 0)
				break;
	ts_closep(fd);
	*fd = -1;
}

void ts_log_release_stderr(void)
{
	ts_log_holding = false;
	ts_log_put_back(&ts_log_held_fd[0], STDERR_FILENO);
	if (ts_log_held_fd[1] >= 0) {
		cleanup_close int out = -EBADF;

		if (ts_log_settings.path != NULL)
			out = open(ts_log_settings.path,
				   O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
		ts_log_put_back(&ts_log_held_fd[1], out);
	}
}

/* Hold one line of ts_log() (not an error) while ts_log_holding: into the
 * memfd of its destination.  @return true when held. */
static bool ts_log_hold(enum ts_log_level level, const char *msg, time_t now)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *line = NULL;
	int *fd = &ts_log_held_fd[ts_log_settings.path != NULL];

	if (*fd < 0)
		*fd = memfd_create("toposhim-log", MFD_CLOEXEC);
	if (*fd < 0)
		return false;
	if (ts_log_settings.path == NULL)
		return ts_log_emit(&ts_log_settings, *fd, level, msg, now) >= 0;
	if (ts_log_format_line(ts_log_settings.format, level, msg, now, &line, &err) < 0)
		return false;
	return ts_write_all(*fd, line, strlen(line)) >= 0;
}

/* ts_log_keep_warnings(): copies of the warnings, at most TS_LOG_KEPT_MAX */
#define TS_LOG_KEPT_MAX 32
static bool ts_log_keeping;
static char *ts_log_kept[TS_LOG_KEPT_MAX];
static size_t ts_log_n_kept, ts_log_n_dropped;

void ts_log_keep_warnings(bool on)
{
	ts_log_keeping = on;
}

char **ts_log_take_warnings(void)
{
	char **v;

	if (ts_log_n_kept == 0)
		return NULL;
	v = calloc(ts_log_n_kept + 2, sizeof(*v));
	if (v != NULL) {
		memcpy(v, ts_log_kept, ts_log_n_kept * sizeof(*v));
		if (ts_log_n_dropped > 0 &&
		    asprintf(&v[ts_log_n_kept], "and %zu more warnings, not kept",
			     ts_log_n_dropped) < 0)
			v[ts_log_n_kept] = NULL;
	} else {
		for (size_t i = 0; i < ts_log_n_kept; i++)
			free(ts_log_kept[i]);
	}
	memset(ts_log_kept, 0, sizeof(ts_log_kept));
	ts_log_n_kept = 0;
	ts_log_n_dropped = 0;
	return v;
}

static void ts_log_keep(enum ts_log_level level, const char *msg)
{
	char *copy;

	if (!ts_log_keeping || level != TS_LOG_WARNING || msg == NULL)
		return;
	if (ts_log_n_kept >= TS_LOG_KEPT_MAX) {
		ts_log_n_dropped++;
		return;
	}
	copy = strdup(msg);
	if (copy != NULL)
		ts_log_kept[ts_log_n_kept++] = copy;
}

void ts_log(enum ts_log_level level, const char *fmt, ...)
{
	cleanup_free char *msg = NULL;
	time_t now = time(NULL);
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		msg = NULL; /* vasprintf leaves it undefined */
	ts_log_keep(level, msg);
	if (ts_log_holding && level != TS_LOG_ERROR && level >= 0 &&
	    level <= ts_log_settings.level &&
	    ts_log_hold(level, r < 0 ? "out of memory" : msg, now))
		return;
	/* (void): a failed log write has nowhere else to go */
	(void)ts_log_emit(&ts_log_settings, STDERR_FILENO, level, r < 0 ? "out of memory" : msg,
			  now);
	if (level == TS_LOG_ERROR) {
		/* the refusal is the one stderr line: podman without a --log
		 * file shows every line after it too (helper-24); the lines
		 * held for the --log file follow it there, and with --debug
		 * (asked for by hand) on stderr too (helper-25) */
		if (ts_log_settings.level < TS_LOG_DEBUG) {
			ts_closep(&ts_log_held_fd[0]);
			ts_log_held_fd[0] = -1;
		}
		ts_log_release_stderr();
	}
}

void ts_log_file_only(enum ts_log_level level, const char *fmt, ...)
{
	cleanup_free char *msg = NULL;
	va_list ap;
	int r;

	if (ts_log_settings.path == NULL || level == TS_LOG_ERROR)
		return; /* an error goes to stderr too: not for this function */
	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		return;
	(void)ts_log_emit(&ts_log_settings, STDERR_FILENO, level, msg, time(NULL));
}

void ts_log_error(const struct ts_error *e)
{
	cleanup_free char *msg = ts_error_format(e);

	ts_log(TS_LOG_ERROR, "%s", msg != NULL ? msg : "out of memory");
}
