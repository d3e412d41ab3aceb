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

# The check itself: each invariant broken on purpose after a short soak
# must be reported, with the container named.
@test "soak: the check reports a lost, a doubled and a wrong record, shared PUs and a torn config.json" {
	soak_prepare "$WORK" "$TS_BUILDDIR/tests/soak/stand-in-runtime"
	soak_template_standin
	run soak_run 3 11
	[ "$status" = 0 ]
	run soak_check
	[ "$status" = 0 ] || { echo "$output"; false; }
	local records=$WORK/state/allocations.json root=$WORK/root lost doubled wrong c1 c2 crit
	# four live containers, two of them critical with disjoint CPUs
	local live
	live=$(ls "$root")
	crit=$(jq -r --arg root "$root" '.allocations[] | select(.runtime_root == $root and .class == "critical") | .container_id' "$records" |
		grep -Fx -f <(echo "$live") | head -n 2)
	c1=$(sed -n 1p <<<"$crit")
	c2=$(sed -n 2p <<<"$crit")
	read -r lost doubled wrong < <(jq -r --arg root "$root" --arg c1 "$c1" --arg c2 "$c2" \
		'[.allocations[] | select(.runtime_root == $root and .container_id != $c1 and .container_id != $c2) | .container_id] | .[0:3] | join(" ")' "$records")
	[ -n "$c2" ] && [ -n "$wrong" ] || skip "the 3 s soak left too few live containers"
	jq --arg lost "$lost" --arg doubled "$doubled" --arg wrong "$wrong" --arg c1 "$c1" --arg c2 "$c2" '
		(.allocations[] | select(.container_id == $c1) | .cpus) as $c1cpus
		| .allocations |= (map(select(.container_id != $lost))
			+ map(select(.container_id == $doubled)))
		| .allocations |= map(if .container_id == $wrong then .cpus = "383"
			elif .container_id == $c2 then .cpus = $c1cpus else . end)' \
		"$records" >"$records.new"
	mv "$records.new" "$records"
	printf '{"ociVersion": "1.0.2", "linux": {' >"$WORK/work/$lost/config.json"
	run soak_check
	echo "$output"
	[ "$status" = 1 ]
	grep -F "soak: live container '$lost' has 0 records (config: " <<<"$output"
	grep -F "soak: live container '$doubled' has 2 records" <<<"$output"
	grep -E "^soak: '$wrong': record \[\"383\"," <<<"$output"
	grep -E "^soak: '$c2': record " <<<"$output"
	grep -E "^soak: PUs given to two live critical containers: [0-9]" <<<"$output"
	grep -Fx "soak: torn $WORK/work/$lost/config.json" <<<"$output"
	[ "$(tail -n 1 <<<"$output")" = "soak: $(wc -l <<<"$live") live containers, $(jq '.allocations | length' "$records") records, 6 problems" ]
}
