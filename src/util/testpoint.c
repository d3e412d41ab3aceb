/* testpoint.c - see testpoint.h; compiled only into the test build. */
#ifdef TS_TEST_POINTS
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/testpoint.h"

static ts_test_point_fn *point_fn;
static void *point_data;

void ts_test_point_set(ts_test_point_fn *fn, void *data)
{
	point_fn = fn;
	point_data = data;
}

/* Whether spec ("name" or "name@N") names this point at its hits-th hit. */
static int point_matches(const char *spec, const char *name, unsigned long hits)
{
	size_t n = strlen(name);
	char *end;
	unsigned long want;

	if (strncmp(spec, name, n) != 0)
		return 0;
	if (spec[n] == '\0')
		return 1;
	if (spec[n] != '@')
		return 0;
	want = strtoul(spec + n + 1, &end, 10);
	return *end == '\0' && want == hits;
}

void ts_test_point(const char *name)
{
	/* one counter for all points is enough: a test aims at one point */
	static unsigned long hits;
	const char *kill_at = getenv("TOPOSHIM_TEST_KILL_AT");
	const char *sleep_at = getenv("TOPOSHIM_TEST_SLEEP_AT");
	size_t n = strlen(name);

	if (point_fn != NULL) {
		point_fn(name, point_data);
		return;
	}
	if (kill_at != NULL && strncmp(kill_at, name, n) == 0 &&
	    point_matches(kill_at, name, ++hits))
		raise(SIGKILL);
	if (sleep_at != NULL && strncmp(sleep_at, name, n) == 0 && sleep_at[n] == ':') {
		long ms = strtol(sleep_at + n + 1, NULL, 10);
		struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};

		while (ms > 0 && nanosleep(&ts, &ts) < 0)
			;
	}
}
#endif
