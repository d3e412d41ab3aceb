/*
 * trust.c - who may change what toposhim executes as a plugin: the binary,
 * the directory holding it and every directory above, through every
 * symbolic link on the way, must be writable by root (or by the user
 * toposhim runs as) only.  Otherwise whoever can write there chooses the
 * code toposhim runs as root.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

/* Symbolic links followed on one walk at most, as the kernel's own limit
 * for a path lookup (fs/namei.c MAXSYMLINKS). */
#define LINKS_MAX 40

static bool owner_trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* strict: no exception for a sticky directory (the final entry: a plugin
 * directory itself).  Elsewhere a sticky world-writable directory such as
 * /tmp is fine: others can add names to it but cannot rename or remove an
 * entry of root's, and a name they added first is theirs, which fails the
 * owner check. */
static int check_entry(const char *path, const struct stat *st, bool strict, struct ts_error **err)
{
	bool writable = (st->st_mode & (S_IWGRP | S_IWOTH)) != 0;
	bool sticky_dir = S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX);

	if (owner_trusted(st->st_uid) && (!writable || (!strict && sticky_dir)))
		return 0;
	if (geteuid() == 0)
		return ts_error_set(err, 0,
				    "unsafe path '%s' (owner %u, mode %04o): must be owned by root "
				    "and not writable by group or others",
				    path, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
	return ts_error_set(err, 0,
			    "unsafe path '%s' (owner %u, mode %04o): must be owned by root or uid "
			    "%u and not writable by group or others",
			    path, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777),
			    (unsigned)geteuid());
}

/* Remove the last component of an absolute path in place ("/a/b" -> "/a",
 * "/a" -> "/"). */
static void drop_last(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash == path)
		path[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
}

struct walk {
	char cur[PATH_MAX];  /* resolved directory so far */
	char rest[PATH_MAX]; /* components still to walk, '/'-separated */
	struct stat cur_st;
	unsigned links;
};

/* Take the next component of w->rest into comp; false when none is left. */
static bool next_component(struct walk *w, char *comp, size_t size, bool *ret_last)
{
	char *p = w->rest + strspn(w->rest, "/");
	size_t len = strcspn(p, "/");

	if (len == 0)
		return false;
	snprintf(comp, size, "%.*s", (int)len, p);
	memmove(w->rest, p + len, strlen(p + len) + 1);
	*ret_last = w->rest[strspn(w->rest, "/")] == '\0';
	return true;
}

/* A symbolic link at path: its target goes in front of what is left. */
static int follow(struct walk *w, const char *path, struct ts_error **err)
{
	char target[PATH_MAX], joined[PATH_MAX];
	ssize_t n;

	if (++w->links > LINKS_MAX)
		return ts_error_set(err, ELOOP, "%s", path);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return ts_error_set(err, errno, "%s", path);
	target[n] = '\0';
	if (snprintf(joined, sizeof(joined), "%s/%s", target, w->rest) >= (int)sizeof(joined))
		return ts_error_set(err, ENAMETOOLONG, "%s", path);
	memcpy(w->rest, joined, sizeof(joined));
	if (target[0] == '/') {
		strcpy(w->cur, "/");
		if (lstat("/", &w->cur_st) < 0)
			return ts_error_set(err, errno, "/");
	}
	return 0;
}

/* Step into one component that is not a symbolic link. */
static int step(struct walk *w, const char *next, const struct stat *st, bool last,
		struct ts_error **err)
{
	int r;

	r = check_entry(next, st, last, err);
	if (r < 0)
		return r;
	if (!last && !S_ISDIR(st->st_mode))
		return ts_error_set(err, ENOTDIR, "%s", next);
	snprintf(w->cur, sizeof(w->cur), "%s", next);
	w->cur_st = *st;
	return 0;
}

int ts_plugin_path_check(const char *path, struct ts_error **err)
{
	struct walk w = {.cur = "/"};
	char comp[NAME_MAX + 1], next[PATH_MAX];
	bool last = false;
	int r;

	if (path[0] != '/')
		return ts_error_set(err, 0, "not absolute '%s'", path);
	if (snprintf(w.rest, sizeof(w.rest), "%s", path) >= (int)sizeof(w.rest))
		return ts_error_set(err, ENAMETOOLONG, "%s", path);
	if (lstat("/", &w.cur_st) < 0)
		return ts_error_set(err, errno, "/");
	r = check_entry("/", &w.cur_st, false, err);
	while (r >= 0 && next_component(&w, comp, sizeof(comp), &last)) {
		struct stat st;

		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			if (comp[1] == '.')
				drop_last(w.cur);
			if (lstat(w.cur, &w.cur_st) < 0)
				return ts_error_set(err, errno, "%s", w.cur);
			if (last)
				r = check_entry(w.cur, &w.cur_st, true, err);
			continue;
		}
		if (snprintf(next, sizeof(next), "%s%s%s", w.cur, strcmp(w.cur, "/") ? "/" : "",
			     comp) >= (int)sizeof(next))
			return ts_error_set(err, ENAMETOOLONG, "%s", path);
		if (lstat(next, &st) < 0)
			return ts_error_set(err, errno, "%s", next);
		if (S_ISLNK(st.st_mode)) {
			/* A link's mode means nothing, its owner made it. */
			if (!owner_trusted(st.st_uid))
				r = check_entry(next, &st, true, err);
			if (r >= 0)
				r = follow(&w, next, err);
			continue;
		}
		r = step(&w, next, &st, last, err);
	}
	return r < 0 ? r : 0;
}
