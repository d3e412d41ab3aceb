#!/usr/bin/env bats
# The allocation store under churn (issue 17): 8 workers create critical
# (1-4 CPUs), standard and batch containers on a 384-PU topology, delete
# half of them at once and SIGKILL one create in ten at a random moment;
# afterwards every live container must have exactly one record that says
# what the container has, no two live exclusive cpusets may overlap, no
# config.json may be torn, stderr may hold only capacity refusals, and
# after deleting everything and one gc no record may be left.  The CI runs
# are short (SOAK_SECONDS); `make check-long` runs tests/soak/soak-long.sh.

load helpers

setup() {
	ts_setup_env
	command -v jq >/dev/null || skip "jq is not installed"
	command -v lstopo-no-graphics >/dev/null || skip "hwloc (lstopo-no-graphics) is not installed"
	load ../soak/soak
	WORK=$(mktemp -d "${BATS_TMPDIR:-/tmp}/toposhim-soak.XXXXXX")
}

teardown() {
	local id
	if [ -n "${SOAK_RUNTIME:-}" ] && [ "$(basename "$SOAK_RUNTIME")" = runc ]; then
		for id in $(ls "$WORK/root" 2>/dev/null); do
			runc --root "$WORK/root" delete --force "$id" >/dev/null 2>&1 || true
		done
	fi
	rm -rf "$WORK"
}

@test "soak: a stand-in runtime, 8 workers, kills: no live container loses its record" {
	soak_prepare "$WORK" "$TS_BUILDDIR/tests/soak/stand-in-runtime"
	soak_template_standin
	run soak_run "${SOAK_SECONDS:-20}" "${SOAK_SEED:-$RANDOM}"
	sed 's/^/# stand-in: /' <<<"$output" >&3
	[ "$status" = 0 ]
	run soak_check
	echo "$output"
	sed -n 's/^soak: \(.* live containers.*\)/# \1/p' <<<"$output" >&3
	[ "$status" = 0 ]
	run soak_drain
	echo "$output"
	[ "$status" = 0 ]
}

@test "soak: real runc, 8 workers, kills: no live container loses its record" {
	require_runc
	soak_prepare "$WORK" "$RUNC"
	# the host's own CPUs: runc applies the cpusets for real
	rm "$WORK/topo.xml"
	soak_template_runc
	run soak_run "${SOAK_RUNC_SECONDS:-12}" "${SOAK_SEED:-$RANDOM}" --start --max-cpus 1
	sed 's/^/# runc: /' <<<"$output" >&3
	[ "$status" = 0 ]
	run soak_check
	echo "$output"
	sed -n 's/^soak: \(.* live containers.*\)/# \1/p' <<<"$output" >&3
	[ "$status" = 0 ]
	run soak_drain
	echo "$output"
	[ "$status" = 0 ]
}
