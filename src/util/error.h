/*
 * error.h - the one error type of toposhim.
 *
 * Every fallible function takes `struct ts_error **err` as its last
 * parameter and returns an int: >= 0 on success, a negative errno on
 * failure.  `*err` is set if and only if the return value is negative, and
 * is left untouched on success.  Pointer-returning constructors return NULL
 * and set `*err`.
 *
 * Messages are lowercase, without a trailing period, and name the file, the
 * field (as a JSON path) and the value:
 *   config.json: '/linux/resources/cpu/cpus': invalid cpu list '0-3,x'
 * The printer appends strerror(errnum) only when errnum != 0 and the error
 * is not plain (ts_error_set_plain(): the errno is for callers to test,
 * the message already says everything, e.g. "... would leave the shared
 * pool empty", where ": No space left on device" would add nothing).
 *
 * Ownership: an error is a heap object owned by whoever holds the pointer;
 * release it with ts_error_free().  When memory runs out while building an
 * error, a static "out of memory" error is stored instead; ts_error_free()
 * knows it and never frees it, so reporting OOM never allocates.
 */
#ifndef TS_UTIL_ERROR_H
#define TS_UTIL_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

struct ts_error {
	int errnum; /* positive errno, or 0 for a pure validation failure */
	char *msg;  /* formatted message, never NULL */
	bool plain; /* the printer appends no strerror(errnum) */
};

/**
 * Create an error and store it in *err.
 * @param[out] err     where to store it; if *err is already set, the old
 *                     error is kept and the new one dropped (never replace
 *                     an error, only add to it); err may be NULL.
 * @param[in]  errnum  positive errno (ENOENT, ...) or 0 for validation.
 * @param[in]  fmt     printf format of the message.
 * @return -errnum, or -EINVAL when errnum is 0.
 */
int ts_error_set(struct ts_error **err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * Same as ts_error_set(), for a message that says everything: errnum is
 * kept for callers (the return value is -errnum), but ts_error_format()
 * appends no strerror(errnum) to it.
 * @return -errnum, or -EINVAL when errnum is 0.
 */
int ts_error_set_plain(struct ts_error **err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Same as ts_error_set() with a va_list. */
int ts_error_setv(struct ts_error **err, int errnum, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/**
 * Put context in front of an existing message ("<context>: <old message>"),
 * keeping errnum.  Does nothing when err or *err is NULL.
 * @return -errnum of the error (or -EINVAL when errnum is 0), so that
 *         `return ts_error_prefix(err, ...)` propagates.
 */
int ts_error_prefix(struct ts_error **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Return the negative errno that an error stands for (-EINVAL for 0). */
int ts_error_code(const struct ts_error *e);

/**
 * Format the full message: msg, and ": strerror(errnum)" when errnum != 0
 * and the error is not plain.
 * @return a newly allocated string the caller frees, or NULL on OOM.
 */
char *ts_error_format(const struct ts_error *e);

/** Free an error (NULL and the static OOM error are accepted). @return NULL. */
struct ts_error *ts_error_free(struct ts_error *e);

/** Free *err and set it to NULL. */
void ts_error_clear(struct ts_error **err);

#endif
