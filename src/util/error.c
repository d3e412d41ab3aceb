/* error.c - see error.h for the contract. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/error.h"

static struct ts_error ts_error_oom = {.errnum = ENOMEM, .msg = (char *)"out of memory"};

int ts_error_code(const struct ts_error *e)
{
	if (e == NULL || e->errnum == 0)
		return -EINVAL;
	return -e->errnum;
}

int ts_error_setv(struct ts_error **err, int errnum, const char *fmt, va_list ap)
{
	int ret = errnum > 0 ? -errnum : -EINVAL;
	struct ts_error *e;

	if (err == NULL || *err != NULL)
		return ret;
	e = calloc(1, sizeof(*e));
	if (e == NULL || vasprintf(&e->msg, fmt, ap) < 0) {
		free(e);
		*err = &ts_error_oom;
		return ret;
	}
	e->errnum = errnum > 0 ? errnum : 0;
	*err = e;
	return ret;
}

int ts_error_set(struct ts_error **err, int errnum, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = ts_error_setv(err, errnum, fmt, ap);
	va_end(ap);
	return ret;
}

int ts_error_set_plain(struct ts_error **err, int errnum, const char *fmt, ...)
{
	bool was_set = err != NULL && *err != NULL;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = ts_error_setv(err, errnum, fmt, ap);
	va_end(ap);
	/* never touch an error that was already there, nor the static OOM one */
	if (!was_set && err != NULL && *err != NULL && *err != &ts_error_oom)
		(*err)->plain = true;
	return ret;
}

int ts_error_prefix(struct ts_error **err, const char *fmt, ...)
{
	char *ctx = NULL, *msg = NULL;
	va_list ap;
	int r;

	if (err == NULL || *err == NULL)
		return -EINVAL;
	if (*err == &ts_error_oom)
		return -ENOMEM;
	va_start(ap, fmt);
	r = vasprintf(&ctx, fmt, ap);
	va_end(ap);
	if (r < 0)
		return ts_error_code(*err);
	if (asprintf(&msg, "%s: %s", ctx, (*err)->msg) >= 0) {
		free((*err)->msg);
		(*err)->msg = msg;
	}
	free(ctx);
	return ts_error_code(*err);
}

char *ts_error_format(const struct ts_error *e)
{
	char *s = NULL;

	if (e == NULL)
		return strdup("unknown error");
	if (e->errnum == 0 || e->plain)
		return strdup(e->msg);
	if (asprintf(&s, "%s: %s", e->msg, strerror(e->errnum)) < 0)
		return NULL;
	return s;
}

struct ts_error *ts_error_free(struct ts_error *e)
{
	if (e == NULL || e == &ts_error_oom)
		return NULL;
	free(e->msg);
	free(e);
	return NULL;
}

void ts_error_clear(struct ts_error **err)
{
	if (err == NULL)
		return;
	*err = ts_error_free(*err);
}
