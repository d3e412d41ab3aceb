#!/bin/sh
# replay.sh: make check's run of the fuzz targets without libFuzzer (TAP).
# Each tests/fuzz/replay-<name> runs its target once on every committed seed
# (tests/fuzz/corpus-<name>), every input of a crash found and fixed
# (tests/fuzz/regress-<name>) and the seeds seeds.sh derives from the fixtures,
# the shared corpus and this host.  A broken check aborts, a sanitizer report
# (build-asan) or valgrind error fails it.
set -u
src=${TS_SRCDIR:?}
build=${TS_BUILDDIR:?}
names=$(cat "$src/tests/fuzz/targets")
set -- $names
echo "1..$#"
i=0
for name in $names; do
	i=$((i + 1))
	seeds=$build/tests/fuzz/replay-seeds-$name
	sh "$src/tests/fuzz/seeds.sh" "$name" "$seeds"
	set -- "$seeds"
	[ -d "$src/tests/fuzz/corpus-$name" ] && set -- "$@" "$src/tests/fuzz/corpus-$name"
	[ -d "$src/tests/fuzz/regress-$name" ] && set -- "$@" "$src/tests/fuzz/regress-$name"
	log=$build/tests/fuzz/replay-$name.out
	if ${TS_REPLAY_WRAPPER:-} "$build/tests/fuzz/replay-$name" "$@" >"$log" 2>&1; then
		echo "ok $i - fuzz target $name: $(tail -n 1 "$log")"
	else
		echo "not ok $i - fuzz target $name"
		sed 's/^/# /' "$log" | tail -n 40
	fi
	rm -rf "$seeds"
done
