#!/bin/sh
# fuzz.sh: every libFuzzer target for FUZZ_SECONDS (default 30), FUZZ_JOBS
# (default 2) at a time, as one TAP test file, so that each target counts as a
# test result (pass: libFuzzer found no crash, leak, timeout or sanitizer
# report).  Not part of make check: an --enable-fuzz CC=clang build runs
#   make fuzz-build
#   make check TESTS=tests/fuzz/fuzz.sh check_PROGRAMS= check_LTLIBRARIES=
# (contrib/run-tests.sh; the empty lists keep make check from building every
# unit test first).
set -u
# shellcheck disable=SC2046 # one target name a word
exec sh "${TS_SRCDIR:?}/tests/fuzz/run.sh" $(cat "$TS_SRCDIR/tests/fuzz/targets")
