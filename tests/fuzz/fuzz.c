/* fuzz.c - helpers of the fuzz targets; see fuzz.h. */
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

void fuzz_check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz: %s\n", what);
		abort();
	}
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	fuzz_check(s != NULL, "out of memory");
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static char tmpdir[4096];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	(void)remove(path);
	return 0;
}

/* a target may have chmod'ed a dir to 0: make every dir listable first (pre-order) */
static int open_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D || flag == FTW_DNR)
		(void)chmod(path, 0755);
	(void)st;
	return 0;
}

void fuzz_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISDIR(st.st_mode))
		(void)chmod(path, 0755);
	(void)nftw(path, open_one, 16, FTW_PHYS);
	(void)nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void remove_tmpdir(void)
{
	if (tmpdir[0] != '\0')
		fuzz_rmtree(tmpdir);
}

const char *fuzz_tmpdir(void)
{
	const char *base = getenv("TMPDIR");

	if (tmpdir[0] != '\0')
		return tmpdir;
	if (base == NULL || base[0] != '/')
		base = "/tmp";
	fuzz_check(snprintf(tmpdir, sizeof(tmpdir), "%s/toposhim-fuzz.XXXXXX", base) <
			   (int)sizeof(tmpdir),
		   "TMPDIR too long");
	fuzz_check(mkdtemp(tmpdir) != NULL, "cannot make a temporary directory");
	atexit(remove_tmpdir);
	return tmpdir;
}

const char *fuzz_path(const char *rel)
{
	static char path[8192];

	fuzz_check(snprintf(path, sizeof(path), "%s/%s", fuzz_tmpdir(), rel) < (int)sizeof(path),
		   "path too long");
	return path;
}

void fuzz_write(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "we");

	fuzz_check(f != NULL, "cannot create a temporary file");
	fuzz_check(size == 0 || fwrite(data, 1, size, f) == size, "cannot write a temporary file");
	fuzz_check(fclose(f) == 0, "cannot write a temporary file");
}

void fuzz_mkdir(const char *path)
{
	char buf[8192];

	fuzz_check(strlen(path) < sizeof(buf), "path too long");
	strcpy(buf, path);
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		fuzz_check(mkdir(buf, 0755) == 0 || errno == EEXIST, "cannot make a directory");
		*p = '/';
	}
	fuzz_check(mkdir(buf, 0755) == 0 || errno == EEXIST, "cannot make a directory");
}

size_t fuzz_split(const uint8_t *data, size_t size, char **parts, size_t max)
{
	const size_t seplen = strlen(FUZZ_SEP);
	size_t n = 0, start = 0;

	while (n + 1 < max) {
		const uint8_t *hit = NULL;

		for (size_t i = start; i + seplen <= size; i++)
			if (memcmp(data + i, FUZZ_SEP, seplen) == 0) {
				hit = data + i;
				break;
			}
		if (hit == NULL)
			break;
		parts[n++] = fuzz_strndup(data + start, (size_t)(hit - data) - start);
		start = (size_t)(hit - data) + seplen;
	}
	parts[n++] = fuzz_strndup(data + start, size - start);
	for (size_t i = n; i < max; i++)
		parts[i] = fuzz_strndup(NULL, 0);
	return n;
}

void fuzz_parts_free(char **parts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(parts[i]);
}
