/* Unit tests of src/cli/lifecycle.c: the config a hook reads (issue 14). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "../require.h"
#include "cli/lifecycle.h"
#include "util/cleanup.h"

/*
 * Every path the library opens with openat() while recording is on: the
 * test executable's openat preempts libc's for libtoposhim's calls, and
 * goes on to the system call itself.
 */
static bool recording;
static char opened[16][4096];
static size_t n_opened;

static int record_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	if (recording && n_opened < ARRAY_SIZE(opened))
		snprintf(opened[n_opened++], sizeof(opened[0]), "%s", path);
	return (int)syscall(SYS_openat, dirfd, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...);
int openat64(int dirfd, const char *path, int flags, ...);

int openat(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	return record_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	va_list ap;
	mode_t mode;

	va_start(ap, flags);
	mode = (flags & (O_CREAT | O_TMPFILE)) != 0 ? va_arg(ap, mode_t) : 0;
	va_end(ap);
	return record_openat(dirfd, path, flags, mode);
}

static void start_recording(void)
{
	n_opened = 0;
	recording = true;
}

/* An empty bundle (a hook's state without one) is no bundle: nothing is
 * opened, least of all /config.json. */
static void test_read_config_empty_bundle(void **state)
{
	struct ts_json *config;

	(void)state;
	start_recording();
	config = ts_lifecycle_read_config("");
	recording = false;
	assert_null(config);
	for (size_t i = 0; i < n_opened; i++)
		if (strstr(opened[i], "config.json") != NULL)
			fail_msg("opened '%s' for an empty bundle", opened[i]);
	assert_null(ts_lifecycle_read_config(NULL));
}

/* The control: a bundle's config.json is read, through openat. */
static void test_read_config_bundle(void **state)
{
	char dir[] = "/tmp/ts-lifecycle-XXXXXX";
	cleanup_free char *path = NULL;
	cleanup_json struct ts_json *config = NULL;
	bool seen = false;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&path, "%s/config.json", dir) > 0);
	f = fopen(path, "we");
	assert_non_null(f);
	fputs("{\"ociVersion\": \"1.0.2\"}", f);
	assert_int_equal(fclose(f), 0);
	start_recording();
	config = ts_lifecycle_read_config(dir);
	recording = false;
	assert_non_null(config);
	assert_string_equal(ts_json_get(config, "ociVersion")->u.string, "1.0.2");
	for (size_t i = 0; i < n_opened; i++)
		seen = seen || strcmp(opened[i], path) == 0;
	if (!seen)
		fail_msg("'%s' was not opened through openat (%zu opens seen)", path, n_opened);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_config_bundle),
		cmocka_unit_test(test_read_config_empty_bundle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
