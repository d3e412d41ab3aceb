/* helpers.h - scratch directories and fake procfs trees for the state tests. */
#ifndef TS_TESTS_STATE_HELPERS_H
#define TS_TESTS_STATE_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline int th_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm -rf path; ignores a missing path. */
static inline void th_rm_rf(const char *path)
{
	(void)nftw(path, th_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A new scratch directory "/tmp/ts-state-<tag>-XXXXXX"; caller frees and removes. */
static inline char *th_tmpdir(const char *tag)
{
	char *dir = NULL;

	if (asprintf(&dir, "/tmp/ts-state-%s-XXXXXX", tag) < 0)
		return NULL;
	if (mkdtemp(dir) == NULL) {
		free(dir);
		return NULL;
	}
	return dir;
}

/* Write text to dir/name (creating dir/name's parent when it is one level deep). */
static inline int th_write(const char *dir, const char *name, const char *text)
{
	char *path = NULL, *slash;
	FILE *f;
	int r = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -1;
	slash = strrchr(path, '/');
	*slash = '\0';
	(void)mkdir(path, 0755); /* may exist */
	*slash = '/';
	f = fopen(path, "we");
	if (f == NULL || fputs(text, f) < 0)
		r = -1;
	if (f != NULL && fclose(f) != 0)
		r = -1;
	free(path);
	return r;
}

/* Fake /proc/<pid>/stat of a process in state st_char started at start_ticks. */
static inline int th_fake_proc(const char *proc_root, int pid, const char *comm, char st_char,
			       unsigned long long start_ticks)
{
	char name[64], text[512];

	snprintf(name, sizeof(name), "%d/stat", pid);
	snprintf(text, sizeof(text),
		 "%d (%s) %c 1 %d %d 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 %llu 1056768 "
		 "150 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0\n",
		 pid, comm, st_char, pid, pid, start_ticks);
	return th_write(proc_root, name, text);
}

/* 1 when dir/name exists, 0 when it does not. */
static inline int th_exists(const char *dir, const char *name)
{
	char *path = NULL;
	struct stat st;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -1;
	r = stat(path, &st) == 0;
	free(path);
	return r;
}

#endif
