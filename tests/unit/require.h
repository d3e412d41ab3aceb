/*
 * require.h - what a unit test needs, and an honest skip when it is absent.
 *
 * Include it (#include "../require.h") in a test that may skip.  Then:
 *
 *   ts_test_skip("needs root (uid %u)", geteuid());
 *	ends the running test as a TAP skip with that one reason line:
 *	"ok 3 # SKIP test_name: needs root (uid 1000)".  cmocka 1.1.5 (Debian
 *	12) prints a skip() as "not ok 3 # SKIP test_name", which automake's
 *	TAP driver counts as a failure; this header rewrites such lines of
 *	stdout to "ok" (TAP's skip) before they reach the driver, so a plain
 *	skip() is also counted as a skip, but without a reason.
 *   ts_test_require_root();
 *	skips unless the test runs as root.
 *   char *path = ts_test_corpus_path("topology", "01-x.xml");
 *	the file of the optional shared corpus ($TS_SHARED_DIR/corpus/...,
 *	which make check exports: configure --with-shared-dir, default
 *	../shared beside the source tree), or a skip naming the missing path.
 *	Caller frees.
 *   char *path = ts_test_fixture_path("topology/4c2t.xml");
 *	a file of tests/fixtures/ (the project's own test data, always there).
 *	Caller frees.
 *   unsigned n = ts_test_rounds(300);
 *	how many rounds (seeds) a randomised test runs: 300, or a tenth
 *	(at least 1) under valgrind or in an AddressSanitizer build, where a
 *	step costs ~30 (valgrind) or ~3 times as much and the memory checks
 *	need few rounds (the plain run has the many; said in a TAP comment).
 *
 * A skip leaves the test by longjmp(), as every cmocka failure does: call
 * these before the test allocates anything, or the memory is lost (and
 * valgrind and LeakSanitizer say so).  Data a test can make itself (hwloc
 * synthetic topologies, tests/fixtures/) never needs the corpus: only tests
 * that are about real machines' or other projects' files use it.
 */
#ifndef TS_TESTS_UNIT_REQUIRE_H
#define TS_TESTS_UNIT_REQUIRE_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The diagnostic line that carries a reason to the next skip line; the
 * filter below folds it into that line and drops it. */
#define TS_TEST_SKIP_REASON "# ts-skip-reason: "

/* The reason of the coming skip line (the filter is installed once per
 * program, so one buffer serves every file that includes this header). */
struct ts_test_tap {
	char reason[512];
};

static inline bool ts_test_starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(s, prefix, k) == 0;
}

/* Write to fd 1 as it is now: tests that capture stdout point fd 1
 * elsewhere for a while (dup2), and what is printed must follow. */
static inline void ts_test_tap_out(const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static inline void ts_test_tap_line(struct ts_test_tap *t, const char *s, size_t n)
{
	size_t body = n > 0 && s[n - 1] == '\n' ? n - 1 : n;

	if (ts_test_starts(s, body, TS_TEST_SKIP_REASON)) {
		size_t k = strlen(TS_TEST_SKIP_REASON);
		size_t len = body - k < sizeof(t->reason) - 1 ? body - k : sizeof(t->reason) - 1;

		memcpy(t->reason, s + k, len);
		t->reason[len] = '\0';
		return;
	}
	if (ts_test_starts(s, body, "not ok ") && memmem(s, body, " # SKIP", 7) != NULL) {
		ts_test_tap_out(s + 4, body - 4);
		if (t->reason[0] != '\0') {
			ts_test_tap_out(": ", 2);
			ts_test_tap_out(t->reason, strlen(t->reason));
		}
		ts_test_tap_out("\n", 1);
		t->reason[0] = '\0';
		return;
	}
	ts_test_tap_out(s, n);
}

/* stdout is line buffered: each call gets whole lines, except a line longer
 * than the buffer, which passes unchanged (cmocka's skip lines are short). */
static inline ssize_t ts_test_tap_write(void *cookie, const char *buf, size_t size)
{
	size_t off = 0;

	while (off < size) {
		const char *nl = memchr(buf + off, '\n', size - off);
		size_t n = nl != NULL ? (size_t)(nl - (buf + off)) + 1 : size - off;

		ts_test_tap_line(cookie, buf + off, n);
		off += n;
	}
	return (ssize_t)size;
}

/* Runs before main(): stdout becomes the filter.  Idempotent: a cookie
 * stream has no fd. */
__attribute__((constructor)) static void ts_test_tap_install(void)
{
	static const cookie_io_functions_t io = {.write = ts_test_tap_write};
	static struct ts_test_tap tap;
	FILE *f;

	if (fileno(stdout) < 0)
		return;
	fflush(stdout);
	f = fopencookie(&tap, "w", io);
	if (f == NULL)
		return;
	setvbuf(f, NULL, _IOLBF, BUFSIZ);
	stdout = f;
}

__attribute__((format(printf, 1, 2))) static inline void ts_test_skip_reason(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	printf("%s", TS_TEST_SKIP_REASON);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Skip the running test, saying why (printf-style). */
#define ts_test_skip(...)                         \
	do {                                      \
		ts_test_skip_reason(__VA_ARGS__); \
		skip();                           \
	} while (0)

#define ts_test_require_root()                                                    \
	do {                                                                      \
		if (geteuid() != 0)                                               \
			ts_test_skip("needs root (uid %u)", (unsigned)geteuid()); \
	} while (0)

/* $TS_SHARED_DIR/corpus/<sub>/<file>, or NULL with why[] saying what is
 * missing. */
static inline char *ts_test_corpus_try(const char *sub, const char *file, char *why, size_t n)
{
	const char *shared = getenv("TS_SHARED_DIR");
	char *path = NULL;

	if (shared == NULL || shared[0] == '\0') {
		snprintf(why, n, "no shared corpus: TS_SHARED_DIR is not set");
		return NULL;
	}
	if (asprintf(&path, "%s/corpus/%s%s%s", shared, sub, file[0] != '\0' ? "/" : "", file) <
	    0) {
		snprintf(why, n, "out of memory");
		return NULL;
	}
	if (access(path, R_OK) != 0) {
		snprintf(why, n,
			 "no shared corpus at %s (configure --with-shared-dir or set "
			 "TS_SHARED_DIR)",
			 path);
		free(path);
		return NULL;
	}
	return path;
}

/* The corpus file (file "" for the directory sub itself), or a skip. */
#define ts_test_corpus_path(sub, file)                                                        \
	({                                                                                    \
		char ts_why_[1024];                                                           \
		char *ts_path_ = ts_test_corpus_try((sub), (file), ts_why_, sizeof(ts_why_)); \
		if (ts_path_ == NULL)                                                         \
			ts_test_skip("%s", ts_why_);                                          \
		ts_path_;                                                                     \
	})

/* $TS_SRCDIR/tests/fixtures/<rel>; caller frees.  make check exports
 * TS_SRCDIR; run by hand, export it (the top of the source tree). */
static inline char *ts_test_fixture_path(const char *rel)
{
	const char *src = getenv("TS_SRCDIR");
	char *path = NULL;

	if (src == NULL || src[0] == '\0')
		fail_msg("TS_SRCDIR is not set: run through make check or export it");
	if (asprintf(&path, "%s/tests/fixtures/%s", src, rel) < 0)
		fail_msg("out of memory");
	return path;
}

/* Under valgrind: its preload library is in LD_PRELOAD. */
static inline bool ts_test_under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p != NULL && strstr(p, "vgpreload") != NULL;
}

/* Whether this binary was built with AddressSanitizer (configure
 * --enable-sanitizers, gcc; or the clang fuzz build). */
#if defined(__SANITIZE_ADDRESS__)
#define TS_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_TEST_ASAN 1
#endif
#endif

/* Why a randomised test runs a tenth of its rounds here ("valgrind",
 * "AddressSanitizer"), or NULL for the plain run that runs them all. */
static inline const char *ts_test_reduced(void)
{
	if (ts_test_under_valgrind())
		return "valgrind";
#ifdef TS_TEST_ASAN
	return "AddressSanitizer";
#else
	return NULL;
#endif
}

static inline unsigned ts_test_rounds(unsigned n)
{
	const char *why = ts_test_reduced();

	if (why == NULL)
		return n;
	printf("# under %s: %u of %u rounds\n", why, n / 10 > 0 ? n / 10 : 1, n);
	return n / 10 > 0 ? n / 10 : 1;
}

#endif
