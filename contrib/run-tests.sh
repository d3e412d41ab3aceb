#!/bin/sh
# Build toposhim from scratch and run the whole test suite, as root on
# Debian 12 (install the packages first: contrib/setup-debian.sh).
#
#  1. build-check/ -Werror build; make check: cmocka unit tests, lint, bats
#                  integration tests with real runc, crun, containerd and
#                  podman, and the qemu guest tests (tests/vm).
#  2. build-check/ the unit tests again under valgrind (leaks are errors).
#  3. build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer build;
#                  make check without the qemu guest and the engine tests.
#  4. build-fuzz/  clang libFuzzer build (--enable-fuzz): every fuzz target
#                  (tests/fuzz) for 12 s, two at a time, one TAP result each
#                  (make fuzz FUZZ_SECONDS=600 is the long run).
#  5. build-check/ the Debian package (tests/deb.sh): dpkg-buildpackage in
#                  a copy of the tree, lintian, dpkg -x and the file lists.
#
# The suite builds in its own directories: build/ (the README's main job,
# contrib/demo.sh) is left alone, so both work in either order.  A source
# tree configured in place (./configure at the top) cannot also be built
# out of tree: it is cleaned first (make distclean).
#
# TS_QUICK=1: step 1 only, without the qemu guest (unit tests, lint and
# the integration tests).  TS_QUICK=2: step 1 with only the unit tests,
# lint and the integration files that read the shared corpus (which must
# skip, naming it, where it is absent): CI runs the whole suite once and
# this one in a second clone without ../shared.  TS_SHARED_DIR (or configure --with-shared-dir) points the
# tests at the optional shared corpus, default ../shared beside the tree.
#
# Every test result is a TAP line counted by automake's tap-driver; the last
# line printed is "N passed, N failed, N skipped" over all the runs.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2
jobs=${JOBS:-2}
quick=${TS_QUICK:-0}
# The qemu guest must run the toposhim tests, never skip them.
export TS_VM_REQUIRE_TOPOSHIM=1
status=0

# step NAME: a heading, with the seconds since the start (to see where the
# time goes when CI nears its limit).
t_start=$(date +%s)
step() { printf '\n===== %s (at %d s) =====\n' "$*" $(($(date +%s) - t_start)); }

# failed_step NAME LOG: a step's make failed.  When its test-suite log
# (LOG) counts no failed test, the step broke outside the tests (a build
# error, a killed run): it counts as one failure in the closing line, which
# would otherwise say 0 failed.
broken=0
failed_step() {
	status=1
	if ! grep -qE '^# (FAIL|ERROR|XPASS): +[1-9]' "$2" 2>/dev/null; then
		echo "toposhim: step '$1' failed outside its tests (see its output above)" >&2
		broken=$((broken + 1))
	fi
}

# bounded LIMIT CMD...: run CMD, killing it and everything in its process
# group after LIMIT seconds, so a hung test fails the run with a message
# instead of holding CI until its own timeout.  The limits are several
# times what each step takes on a 2-core machine (about 5, 1 and 3 min).
bounded() {
	limit=$1
	shift
	timeout -k 30 "$limit" "$@"
	rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "toposhim: '$*' did not finish within $limit s; killed (a test hangs: see the .log files)" >&2
	fi
	return "$rc"
}

if [ -f config.status ]; then
	step "make distclean (the source tree was configured in place)"
	make distclean >/dev/null 2>&1 || rm -f config.status
fi

step "autogen"
./autogen.sh >/dev/null 2>&1 || { ./autogen.sh; exit 2; }

step "build (werror)"
rm -rf build-check build-asan build-fuzz
mkdir build-check && cd build-check || exit 2
if [ "$quick" != 0 ]; then
	../configure --enable-werror --disable-vm-tests --quiet || exit 2
else
	../configure --enable-werror --quiet || exit 2
fi
make -j"$jobs" --quiet >/dev/null || { make; exit 2; }
step "make check"
if [ "$quick" = 2 ]; then
	# shellcheck disable=SC2046,SC2086 # the test lists are meant to be split
	bounded 1800 make -j"$jobs" check TESTS="$(make -s print-unit-tests) tests/lint.sh \
		$(cd "$top" && grep -l 'TS_SHARED_DIR\|require_corpus' tests/integration/*.bats)" ||
		failed_step "make check" test-suite.log
else
	bounded 1800 make -j"$jobs" check || failed_step "make check" test-suite.log
fi

if [ "$quick" != 0 ]; then
	cd "$top" || exit 2
	step "TS_QUICK=$quick: no valgrind rerun, no sanitizer build"
else
	step "unit tests under valgrind"
	unit=$(make -s print-unit-tests)
	# shellcheck disable=SC2086 # the test list is meant to be split
	bounded 900 make -j"$jobs" check TESTS="$unit" TEST_SUITE_LOG=test-suite-valgrind.log \
		LOG_COMPILER="valgrind --quiet --suppressions=$top/contrib/valgrind.supp --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect --error-exitcode=97" ||
		failed_step valgrind test-suite-valgrind.log
	cd "$top" || exit 2

	step "sanitizer build (ASan + UBSan)"
	mkdir build-asan && cd build-asan || exit 2
	../configure --enable-werror --enable-sanitizers --disable-vm-tests --quiet || exit 2
	make -j"$jobs" --quiet >/dev/null || { make; exit 2; }
	# HWLOC_COMPONENTS=-pci: libpciaccess, which hwloc's pci plugin loads,
	# keeps its PCI name cache for good; LeakSanitizer cannot name the plugin
	# once hwloc unloads it, so no suppression matches (valgrind's does).  PCI
	# names are not used by placement; the qemu guest tests run with them.
	# Without the engine tests (containerd, Docker, podman: 100 s of the gcc
	# run here): their daemons add start-up time, not toposhim code paths the
	# direct runc/crun tests miss; the gcc run above has them.  Without the
	# soak (58 s here): concurrency.bats runs the same store paths under
	# concurrent creates.  CI must stay under 30 minutes.
	sanitizer_tests=$(make -s print-sanitizer-tests)
	# shellcheck disable=SC2086 # the test list is meant to be split
	HWLOC_COMPONENTS=-pci ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		LSAN_OPTIONS=suppressions=$top/contrib/lsan.supp:print_suppressions=0 \
		UBSAN_OPTIONS=print_stacktrace=1 \
		bounded 1200 make -j"$jobs" check TESTS="$sanitizer_tests" || failed_step sanitizers test-suite.log
	cd "$top" || exit 2

	step "fuzzing (libFuzzer, each target ${FUZZ_SECONDS:-12} s, two at a time)"
	# about 20 s to build and 15 x 12 s / 2 to run; FUZZ_SECONDS and
	# FUZZ_JOBS override.  A crash, leak or sanitizer report fails its target.
	# 12 s, not make fuzz's 30: on the slower machines of this kind the
	# whole suite took 27.5 minutes with 30 s (2026-12-05) and 29.6 with 20 s
	# (2026-12-06, every step slower that day), and CI must stay under 30.
	# The long runs are make fuzz's.
	mkdir build-fuzz && cd build-fuzz || exit 2
	../configure CC=clang-14 --enable-werror --enable-fuzz --disable-vm-tests --quiet || exit 2
	make -j"$jobs" --quiet fuzz-build >/dev/null || { make fuzz-build; exit 2; }
	# check_PROGRAMS= check_LTLIBRARIES=: make check would first build every
	# unit test again with clang (5 min); this step needs only the fuzzers.
	bounded 900 make check TESTS=tests/fuzz/fuzz.sh TEST_SUITE_LOG=test-suite-fuzz.log \
		check_PROGRAMS= check_LTLIBRARIES= \
		FUZZ_SECONDS="${FUZZ_SECONDS:-12}" FUZZ_JOBS="${FUZZ_JOBS:-$jobs}" || failed_step fuzzing test-suite-fuzz.log
	cd "$top" || exit 2

	step "debian package"
	cd build-check || exit 2
	# about 1 min on 2 cores; JOBS is the build's parallel=
	JOBS=$jobs bounded 600 make check TESTS=tests/deb.sh TEST_SUITE_LOG=test-suite-deb.log ||
		failed_step "debian package" test-suite-deb.log
	cd "$top" || exit 2
fi

step "slowest tests"
# Each test's seconds: from its .log's birth (the driver opens it as the
# test starts) to its .trs's last write (as it ends), to see where CI's
# time goes.  Nothing where the file system keeps no birth time.
trs=$(find build-check build-asan build-fuzz -name '*.trs' 2>/dev/null)
for f in $trs; do
	stat -c '%W %n' "${f%.trs}.log" 2>/dev/null | {
		read -r born _ && [ "$born" -gt 0 ] 2>/dev/null &&
			echo "$(($(stat -c %Y "$f") - born)) s  ${f%.trs}"
	}
done | sort -rn | head -n 25

step "failed tests"
for f in $trs; do
	if grep -q ':test-result: \(FAIL\|ERROR\|XPASS\)' "$f"; then
		echo "--- ${f%.trs}.log"
		cat "${f%.trs}.log"
	fi
done

count() {
	# shellcheck disable=SC2086 # the list of files is meant to be split
	cat $trs /dev/null | grep -c "^:test-result: \($1\)"
}
passed=$(count 'PASS\|XFAIL')
failed=$(($(count 'FAIL\|ERROR\|XPASS') + broken))
skipped=$(count SKIP)
[ "$failed" -eq 0 ] || status=1
[ "$passed" -gt 0 ] || status=1
echo "took $(($(date +%s) - t_start)) s"
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
