/* core.c - see core.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/core.h"
#include "util/cleanup.h"

/* dir/name, dir being the directory part of path (absolute). */
static int sibling(const char *path, const char *name, char **ret, struct ts_error **err)
{
	const char *slash;
	char *p;

	if (path == NULL || path[0] != '/')
		return ts_error_set(err, 0, "'%s': not an absolute path", path ? path : "");
	slash = strrchr(path, '/');
	if (asprintf(&p, "%.*s/%s", (int)(slash - path), path, name) < 0)
		return ts_error_set(err, ENOMEM, "cannot name '%s' beside '%s'", name, path);
	*ret = p;
	return 0;
}

static int copy_path(const char *path, char **ret, struct ts_error **err)
{
	char *p = strdup(path);

	if (p == NULL)
		return ts_error_set(err, ENOMEM, "cannot name '%s'", path);
	*ret = p;
	return 0;
}

/* Length of the prefix P of path when path is P/<dir>/<one name>; -1 when
 * it is not. */
static int prefix_before(const char *path, const char *dir)
{
	const char *last = strrchr(path, '/');
	size_t n = strlen(dir);

	if (last == NULL || (size_t)(last - path) < n + 1)
		return -1;
	if (strncmp(last - n, dir, n) != 0 || last[-(int)n - 1] != '/')
		return -1;
	return (int)(last - n - 1 - path);
}

int ts_cli_core_path(const char *front, char **ret, struct ts_error **err)
{
	int n = -1;
	char *p;

	if (front != NULL && strcmp(front, TS_BINDIR "/" TS_CLI_FRONT_NAME) == 0)
		return copy_path(TS_LIBEXECDIR "/toposhim/" TS_CLI_CORE_NAME, ret, err);
	if (front != NULL && front[0] == '/') {
		n = prefix_before(front, "bin");
		if (n < 0)
			n = prefix_before(front, "sbin");
	}
	if (n < 0)
		return sibling(front, TS_CLI_CORE_NAME, ret, err);
	if (asprintf(&p, "%.*s/libexec/toposhim/%s", n, front, TS_CLI_CORE_NAME) < 0)
		return ts_error_set(err, ENOMEM, "cannot name the core of '%s'", front);
	*ret = p;
	return 0;
}

int ts_cli_front_path(const char *core, char **ret, struct ts_error **err)
{
	size_t len = core != NULL ? strlen(core) : 0;
	const char *tail = "/libexec/toposhim/" TS_CLI_CORE_NAME;
	size_t tn = strlen(tail);
	char *p;

	if (core != NULL && strcmp(core, TS_LIBEXECDIR "/toposhim/" TS_CLI_CORE_NAME) == 0)
		return copy_path(TS_BINDIR "/" TS_CLI_FRONT_NAME, ret, err);
	if (core == NULL || core[0] != '/' || len < tn || strcmp(core + len - tn, tail) != 0)
		return sibling(core, TS_CLI_FRONT_NAME, ret, err);
	if (asprintf(&p, "%.*s/bin/%s", (int)(len - tn), core, TS_CLI_FRONT_NAME) < 0)
		return ts_error_set(err, ENOMEM, "cannot name the front of '%s'", core);
	*ret = p;
	return 0;
}

int ts_cli_core_open(const char *path, const struct stat *front_st, int *ret_fd,
		     struct ts_error **err)
{
	cleanup_close int fd = -1;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return ts_error_set(err, errno, "core '%s': cannot open", path);
	if (fstat(fd, &st) < 0)
		return ts_error_set(err, errno, "core '%s': cannot stat", path);
	if (!S_ISREG(st.st_mode))
		return ts_error_set_plain(err, EACCES, "core '%s': not a regular file", path);
	if (st.st_uid != 0 && st.st_uid != front_st->st_uid)
		return ts_error_set_plain(err, EACCES,
					  "core '%s': owned by uid %u, neither root nor the "
					  "front's owner %u",
					  path, (unsigned)st.st_uid, (unsigned)front_st->st_uid);
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
		return ts_error_set_plain(err, EACCES,
					  "core '%s': writable by group or others (mode %04o)",
					  path, (unsigned)(st.st_mode & 07777));
	*ret_fd = fd;
	fd = -1;
	return 0;
}
