#!/bin/sh
# run.sh NAME...: run libFuzzer targets (built by configure --enable-fuzz
# CC=clang) and report TAP, one line per target.
#   FUZZ_SECONDS  how long each runs (-max_total_time), default 30
#   FUZZ_JOBS     how many run at once, default 2
#   FUZZ_NICE     their nice level, default 0
# Each target starts from its committed seeds (tests/fuzz/corpus-NAME), its
# regression inputs (tests/fuzz/regress-NAME) and the seeds seeds.sh makes,
# and keeps what it finds in $TS_BUILDDIR/tests/fuzz/work-NAME/corpus (kept
# across runs).  A target passes when libFuzzer exits 0 and left no crash,
# leak, timeout or out-of-memory input in work-NAME/; its line gives the
# executions and seconds, e.g.
#   ok 3 - fuzz-state: 1234567 runs in 30 s, 0 crashes
# Run inside make (make fuzz) or with TS_SRCDIR and TS_BUILDDIR set.
set -u
src=${TS_SRCDIR:?}
build=${TS_BUILDDIR:?}
seconds=${FUZZ_SECONDS:-30}
jobs=${FUZZ_JOBS:-2}
nice_level=${FUZZ_NICE:-0}

if [ "${1:-}" = --one ]; then
	name=$2
	work=$build/tests/fuzz/work-$name
	mkdir -p "$work/corpus"
	rm -rf "$work/artifacts" "$work/result"
	mkdir -p "$work/artifacts"
	sh "$src/tests/fuzz/seeds.sh" "$name" "$work/seeds"
	set -- "$work/corpus" "$work/seeds"
	[ -d "$src/tests/fuzz/corpus-$name" ] && set -- "$@" "$src/tests/fuzz/corpus-$name"
	[ -d "$src/tests/fuzz/regress-$name" ] && set -- "$@" "$src/tests/fuzz/regress-$name"
	# The targets write small files for every input: keep them in memory.
	tmp=${TMPDIR:-/tmp}
	[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
	start=$(date +%s)
	# HWLOC_COMPONENTS=-pci: see contrib/run-tests.sh (libpciaccess's cache)
	TMPDIR=$tmp HWLOC_COMPONENTS=-pci \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
		LSAN_OPTIONS=suppressions=$src/contrib/lsan.supp:print_suppressions=0 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		nice -n "$nice_level" "$build/tests/fuzz/fuzz-$name" -max_total_time="$seconds" \
		-timeout=25 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$work/artifacts/" "$@" >"$work/log" 2>&1
	rc=$?
	end=$(date +%s)
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
	found=$(ls "$work/artifacts" | wc -l)
	echo "$rc ${runs:-0} $((end - start)) $found" >"$work/result"
	exit 0
fi

[ $# -gt 0 ] || { echo "usage: run.sh NAME..." >&2; exit 2; }
for name in "$@"; do
	[ -x "$build/tests/fuzz/fuzz-$name" ] || {
		echo "toposhim: $build/tests/fuzz/fuzz-$name: not built (make fuzz-build in an --enable-fuzz CC=clang build)" >&2
		exit 2
	}
done
echo "1..$#"
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh "$0" --one {}
i=0
status=0
for name in "$@"; do
	i=$((i + 1))
	work=$build/tests/fuzz/work-$name
	read -r rc runs secs found <"$work/result" || { rc=1 runs=0 secs=0 found=0; }
	if [ "$rc" -eq 0 ] && [ "$found" -eq 0 ]; then
		echo "ok $i - fuzz-$name: $runs runs in $secs s, 0 crashes"
	else
		status=1
		echo "not ok $i - fuzz-$name: exit $rc after $runs runs in $secs s, $found inputs in $work/artifacts"
		for a in "$work"/artifacts/*; do
			[ -e "$a" ] && echo "# $a"
		done
		grep -E 'ERROR|SUMMARY|fuzz: |runtime error|#[0-9]+ 0x' "$work/log" | head -n 30 | sed 's/^/# /'
	fi
done
exit $status
