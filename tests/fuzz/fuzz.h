/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz share.
 *
 * Each tests/fuzz/fuzz-<name>.c defines LLVMFuzzerTestOneInput() for one parser family
 * (see tests/fuzz/Makefile.inc).  It is linked twice: with libFuzzer (configure
 * --enable-fuzz CC=clang; `make fuzz`) as tests/fuzz/fuzz-<name>, and with replay.c as
 * tests/fuzz/replay-<name>, which make check runs over the committed seeds and the
 * regression inputs of every crash found (tests/fuzz/regress-<name>/).
 *
 * A target aborts (fuzz_check) when a parser breaks one of its documented promises: an
 * error without a message, a success with one, a round trip that changes the data.
 * ASan, UBSan and LeakSanitizer report the rest.
 */
#ifndef TS_FUZZ_H
#define TS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with "fuzz: <what>" unless ok. */
void fuzz_check(bool ok, const char *what);

/* A NUL-terminated copy of data[0..size); never NULL (aborts on OOM). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/*
 * A private directory for this process, made on first use under $TMPDIR (else /tmp) and
 * removed with everything in it at exit.  Borrowed; never NULL.
 */
const char *fuzz_tmpdir(void);

/* Path "<fuzz_tmpdir()>/<rel>" in a static buffer (valid until the next call). */
const char *fuzz_path(const char *rel);

/* Write size bytes to path (created or truncated, mode 0644); aborts on failure. */
void fuzz_write(const char *path, const void *data, size_t size);

/* mkdir -p path (0755); aborts on failure. */
void fuzz_mkdir(const char *path);

/* Remove path and everything under it (no error when absent). */
void fuzz_rmtree(const char *path);

/*
 * Split data at every FUZZ_SEP ("\n%%\n") into at most max parts, each a NUL-terminated
 * copy put in parts[] (the last part takes the rest, separators included).  Parts not
 * present are "" (never NULL).  Free with fuzz_parts_free().
 * @return the number of parts present (>= 1).
 */
#define FUZZ_SEP "\n%%\n"
size_t fuzz_split(const uint8_t *data, size_t size, char **parts, size_t max);
void fuzz_parts_free(char **parts, size_t n);

#endif
