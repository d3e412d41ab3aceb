/*
 * testpoint.h - named places in the code where a test build can stop.
 *
 * The crash-safety claims of toposhim (a killed create, hook or garbage
 * collection loses no live container's allocation and tears no file) are
 * only worth what their tests show, and a kill at a random moment rarely
 * lands in the window that matters.  A test point names such a window:
 *
 *   ts_test_point("create-after-commit");
 *
 * In a normal build (libtoposhim.la, the installed programs) this is an
 * empty inline function: nothing is read, nothing is compiled in.  In the
 * test build (libtoposhim-test.la and tests/toposhim-test, compiled with
 * -DTS_TEST_POINTS; never installed) a point reached by the running process:
 *   - calls the callback set with ts_test_point_set() (unit tests), else
 *   - when $TOPOSHIM_TEST_KILL_AT names it ("name" or "name@N" for its N-th
 *     hit in this process, N >= 1), raises SIGKILL;
 *   - when $TOPOSHIM_TEST_SLEEP_AT is "name:MS", sleeps MS milliseconds
 *     there (to widen a race window on purpose).
 * Point names are lowercase words joined by '-', "<module-or-command>-<where>";
 * each point's place is documented at the call.
 */
#ifndef TS_UTIL_TESTPOINT_H
#define TS_UTIL_TESTPOINT_H

#ifdef TS_TEST_POINTS

/**
 * Callback run at every test point while set.
 * @param name  the point's name; borrowed for the call.
 * @param data  what ts_test_point_set() was given.
 */
typedef void ts_test_point_fn(const char *name, void *data);

/**
 * Set (fn non-NULL) or clear (NULL) the callback of this process.
 * Not thread-safe; unit tests only.
 */
void ts_test_point_set(ts_test_point_fn *fn, void *data);

/** A test point (see the header comment). Async-signal-safe unless a callback is set. */
void ts_test_point(const char *name);

#else

static inline void ts_test_point(const char *name)
{
	(void)name;
}

#endif

#endif
