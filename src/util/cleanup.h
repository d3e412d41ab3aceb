/*
 * cleanup.h - scope-bound release of resources (GNU cleanup attribute).
 *
 * Initialise every cleanup variable where it is declared (NULL, -EBADF) and
 * hand ownership on with TAKE_PTR()/TAKE_FD(), which reset the variable so
 * that the cleanup does nothing.  Modules that wrap a library define that
 * library's cleanups next to the wrapper (cleanup_json, cleanup_hwloc_bitmap).
 */
#ifndef TS_UTIL_CLEANUP_H
#define TS_UTIL_CLEANUP_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/error.h"

static inline void ts_freep(void *p)
{
	free(*(void **)p);
}

static inline void ts_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd); /* Linux always releases the fd, even on EINTR */
		errno = saved;
	}
}

static inline void ts_fclosep(FILE **f)
{
	if (*f != NULL)
		(void)fclose(*f);
}

static inline void ts_closedirp(DIR **d)
{
	if (*d != NULL)
		(void)closedir(*d);
}

static inline void ts_errorp(struct ts_error **e)
{
	*e = ts_error_free(*e);
}

/* Frees a NULL-terminated vector of strings and the vector itself. */
static inline void ts_strv_freep(char ***v)
{
	if (*v == NULL)
		return;
	for (char **p = *v; *p != NULL; p++)
		free(*p);
	free(*v);
}

#define cleanup_free __attribute__((cleanup(ts_freep)))
#define cleanup_close __attribute__((cleanup(ts_closep)))
#define cleanup_fclose __attribute__((cleanup(ts_fclosep)))
#define cleanup_closedir __attribute__((cleanup(ts_closedirp)))
#define cleanup_error __attribute__((cleanup(ts_errorp)))
#define cleanup_strv __attribute__((cleanup(ts_strv_freep)))

#define TAKE_PTR(p)                        \
	({                                 \
		__typeof__(p) _ptr_ = (p); \
		(p) = NULL;                \
		_ptr_;                     \
	})

#define TAKE_FD(fd)              \
	({                       \
		int _fd_ = (fd); \
		(fd) = -EBADF;   \
		_fd_;            \
	})

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
