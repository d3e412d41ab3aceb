#!/usr/bin/env bats
# 50 parallel creates through toposhim never hand out overlapping exclusive
# CPUs (issue 4, "State without a daemon"): a recording fake runtime that
# leaves <root>/<id> behind as runc does for a created container (it runs no
# hooks, so every allocation stays and none is stale), a topology of the
# shape of a 2 x EPYC 9654 (384 PUs, 192 cores of 2 SMT threads, PU n's
# sibling n + 192, 24 L3 groups of 8 cores, one NUMA node): made with hwloc's
# synthetic description, and the real machine's from the shared corpus when
# it is there; 50 background `toposhim create` asking for critical 2 CPUs.

load helpers

N=50

setup() {
	ts_setup_env
	command -v jq >/dev/null || skip "jq is not installed"
	WORK=$(mktemp -d "${BATS_TMPDIR:-/tmp}/toposhim-conc.XXXXXX")
	cat >"$WORK/toposhim.json" <<CONF
{ "state_dir": "$WORK/state", "gc_grace_seconds": 3600, $TS_TEST_POLICY }
CONF
}

teardown() {
	rm -rf "$WORK"
}

# expand LIST: a cpu list ("0,192" or "0-3,8") as one number a line.
expand() {
	tr ',' '\n' <<<"$1" | awk -F- '{ hi = NF > 1 ? $2 : $1; for (i = $1; i <= hi; i++) print i }'
}

# fifty_creates TOPO_XML: the 50 creates on that topology, and the checks.
fifty_creates() {
	local TOPO_XML=$1 i
	for i in $(seq "$N"); do
		mkdir -p "$WORK/b$i/rootfs"
		jq -n '{ociVersion: "1.0.2", root: {path: "rootfs"},
			process: {args: ["true"], cwd: "/"}, linux: {},
			annotations: {"toposhim.io/class": "critical", "toposhim.io/cpus": "2"}}' \
			>"$WORK/b$i/config.json"
	done
	cat >"$WORK/runtime" <<RUNTIME
#!/bin/sh
# argv: --root ROOT create --bundle B ID
eval "id=\\\${\$#}"
mkdir -p "\$2/\$id"
exec "$FAKE_RUNTIME" "\$@"
RUNTIME
	chmod 0755 "$WORK/runtime"
	for i in $(seq "$N"); do
		(
			env TOPOSHIM_CONFIG="$WORK/toposhim.json" TOPOSHIM_RUNTIME="$WORK/runtime" \
				TOPOSHIM_TOPOLOGY_XML="$TOPO_XML" TS_FAKE_RECORD="$WORK/rec$i" \
				"$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/b$i" "c$i" </dev/null \
				>"$WORK/out$i" 2>"$WORK/err$i"
			echo $? >"$WORK/rc$i"
		) &
	done
	wait

	local all="" cpus
	for i in $(seq "$N"); do
		[ "$(cat "$WORK/rc$i")" = 0 ] || fail "create c$i: exit $(cat "$WORK/rc$i"): $(cat "$WORK/err$i")"
		# the runtime was exec'd with the rewritten config.json
		[ "$(cat "$WORK/out$i")" = "fake-runtime stdout" ] || fail "c$i: stdout $(cat "$WORK/out$i")"
		cmp "$WORK/b$i/config.json" "$WORK/rec$i.config.json" || fail "c$i: runtime saw another config"
		cpus=$(jq -r '.linux.resources.cpu.cpus' "$WORK/b$i/config.json")
		# one whole core: PU n and its SMT sibling n + 192
		[[ "$cpus" =~ ^([0-9]+),([0-9]+)$ ]] || fail "c$i: cpus '$cpus'"
		[ $((BASH_REMATCH[2] - BASH_REMATCH[1])) -eq 192 ] || fail "c$i: cpus '$cpus' is not one core"
		[ "$(jq -r '.linux.resources.cpu.mems' "$WORK/b$i/config.json")" = 0 ] || fail "c$i: mems"
		all+="$(expand "$cpus")"$'\n'
	done
	# no PU twice, and together the 50 lowest cores (the busiest L3 first:
	# L3 groups 0-5 whole, then 2 cores of L3 group 6)
	[ "$(sort -n <<<"$all" | sed '/^$/d' | uniq -d)" = "" ] || fail "shared PUs: $(sort -n <<<"$all" | uniq -d | tr '\n' ' ')"
	[ "$(sort -n <<<"$all" | sed '/^$/d' | wc -l)" -eq 100 ]
	[ "$(sort -n <<<"$all" | sed '/^$/d' | paste -sd,)" = "$( (seq 0 49; seq 192 241) | paste -sd,)" ]

	# the state file has the same 50 records: "creating", or "created" with
	# no init where a later create learned that the fake runtime's create
	# was over (it leaves a state dir toposhim cannot read)
	run jq -r '.allocations | length' "$WORK/state/allocations.json"
	[ "$output" = "$N" ]
	run jq -r '[.allocations[] | select((.state == "creating" or (.state == "created" and .pid == null))
		and .class == "critical")] | length' \
		"$WORK/state/allocations.json"
	[ "$output" = "$N" ]
	for i in $(seq "$N"); do
		cpus=$(jq -r '.linux.resources.cpu.cpus' "$WORK/b$i/config.json")
		run jq -r --arg id "c$i" '.allocations[] | select(.container_id == $id) | .cpus' \
			"$WORK/state/allocations.json"
		[ "$output" = "$cpus" ] || fail "c$i: state has '$output', config.json '$cpus'"
	done
}

@test "concurrency: 50 parallel critical creates get 50 disjoint whole cores" {
	local c idx=""
	for c in $(seq 0 191); do idx+="$c,$((c + 192)),"; done
	ts_synthetic_xml "pack:2 l3:12 core:8 pu:2(indexes=${idx%,})" "$WORK/384pu.xml"
	fifty_creates "$WORK/384pu.xml"
}

@test "concurrency: the same on the real 2 x EPYC 9654 topology (shared corpus)" {
	require_corpus topology/13-hwloc-x86cpuid-zen4-2xepyc9654-384pu.xml
	fifty_creates "$CORPUS_PATH"
}
