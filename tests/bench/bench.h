/*
 * bench.h - what the benchmark programs (tests/bench/bench-*.c, each one C
 * file) share: a clock in milliseconds and the qsort(3) order of doubles.
 * Header-only (static inline), so that each program stays one source.
 */
#ifndef TS_TESTS_BENCH_H
#define TS_TESTS_BENCH_H

#include <time.h>

/** Milliseconds on clock (CLOCK_MONOTONIC for wall time,
 *  CLOCK_PROCESS_CPUTIME_ID or CLOCK_THREAD_CPUTIME_ID for CPU time). */
static inline double bench_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/** qsort(3) comparison of two doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

#endif
