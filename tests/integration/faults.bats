#!/usr/bin/env bats
# A create, a resize and the hooks killed (SIGKILL) at each of their steps
# in turn (issue 17): the test build of toposhim (tests/toposhim-test,
# src/util/testpoint.h) kills itself at the point TOPOSHIM_TEST_KILL_AT
# names.  After each kill: no config.json is torn (the original bytes, or a
# whole rewrite), the store parses, every live container has exactly one
# record, a stale one is collected, and the next create gets CPUs no live
# container holds.

load helpers

TEST_SHIM="$TS_BUILDDIR/tests/toposhim-test"

setup() {
	ts_setup_env
	command -v jq >/dev/null || skip "jq is not installed"
	[ -x "$TEST_SHIM" ] || fail "the test build is not built: $TEST_SHIM"
	WORK=$(mktemp -d "${BATS_TMPDIR:-/tmp}/toposhim-faults.XXXXXX")
	chmod 0755 "$WORK"
	ts_synthetic_xml "pack:1 core:4 pu:1" "$WORK/topo.xml"
	export TOPOSHIM_TOPOLOGY_XML="$WORK/topo.xml"
	export TOPOSHIM_CONFIG="$WORK/toposhim.json"
	echo "{\"state_dir\": \"$WORK/state\", $TS_TEST_POLICY}" >"$TOPOSHIM_CONFIG"
	export TOPOSHIM_RUNTIME="$TS_BUILDDIR/tests/soak/stand-in-runtime"
}

teardown() {
	for p in $(cat "$WORK"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
	if [ -n "${RUNC_ROOT:-}" ]; then
		for id in $(ls "$RUNC_ROOT" 2>/dev/null); do
			runc --root "$RUNC_ROOT" delete --force "$id" >/dev/null 2>&1 || true
		done
	fi
	rm -rf "$WORK"
}

# bundle NAME CLASS [CPUS]
bundle() {
	mkdir -p "$WORK/$1/rootfs"
	jq -n --arg c "$2" --arg n "${3:-}" '{ociVersion: "1.0.2", root: {path: "rootfs"},
		process: {args: ["true"], cwd: "/"}, linux: {},
		annotations: ({"toposhim.io/class": $c} + if $n != "" then {"toposhim.io/cpus": $n} else {} end)}' \
		>"$WORK/$1/config.json"
	cp "$WORK/$1/config.json" "$WORK/$1.orig"
}

# killed_create POINT NAME: create NAME with the test build, killed at POINT.
killed_create() {
	run env TOPOSHIM_TEST_KILL_AT="$1" "$TEST_SHIM" --root "$WORK/root" create \
		--bundle "$WORK/$2" "$2"
	[ "$status" = 137 ] || fail "$1: the create was not killed there (exit $status): $output"
}

# check_after: the invariants, after a kill.
check_after() {
	local point=$1 f id n live
	for f in "$WORK"/*.orig; do
		id=$(basename "$f" .orig)
		cmp -s "$f" "$WORK/$id/config.json" && continue
		jq -e '.linux.resources.cpu.cpus and .annotations' "$WORK/$id/config.json" >/dev/null ||
			fail "$point: $id/config.json is torn: $(head -c 200 "$WORK/$id/config.json")"
	done
	if [ -e "$WORK/state/allocations.json" ]; then
		jq -e '.allocations | type == "array"' "$WORK/state/allocations.json" >/dev/null ||
			fail "$point: allocations.json does not parse"
	fi
	# a stale record goes at the next create; live containers keep theirs
	bundle next critical 1
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/next" next
	[ "$status" = 0 ] || fail "$point: the next create failed: $output"
	for id in $(ls "$WORK/root"); do
		n=$(jq --arg id "$id" '[.allocations[] | select(.container_id == $id)] | length' \
			"$WORK/state/allocations.json")
		[ "$n" = 1 ] || fail "$point: live container '$id' has $n records"
	done
	n=$(jq '[.allocations[] | select(.class == "critical") | .cpus] | length' "$WORK/state/allocations.json")
	live=$(jq -r '[.allocations[] | select(.class == "critical") | .cpus] | unique | length' "$WORK/state/allocations.json")
	[ "$n" = "$live" ] || fail "$point: two critical records share cpus: $(cat "$WORK/state/allocations.json")"
	# the end: every init gone, every container deleted, nothing left
	for f in "$WORK"/*.pid; do
		[ -e "$f" ] || continue
		kill "$(cat "$f")" 2>/dev/null || true
		wait "$(cat "$f")" 2>/dev/null || true
		rm -f "$f"
	done
	for id in $(ls "$WORK/root"); do
		run "$TOPOSHIM" --root "$WORK/root" delete "$id"
	done
	run "$TOPOSHIMCTL" alloc gc --grace 0
	[ "$status" = 0 ] || fail "$point: gc: $output"
	[ "$(jq '.allocations | length' "$WORK/state/allocations.json")" = 0 ] ||
		fail "$point: records left after deleting everything: $(cat "$WORK/state/allocations.json")"
	# a killed writer's temporary file is swept by the next write
	f=$(ls -A "$WORK/state" | grep '\.tmp\.' || true)
	[ -z "$f" ] || fail "$point: temporary files left: $f"
}

@test "faults: a create killed at each of its steps" {
	local point
	for point in create-before-reserve state-commit-before-swap atomic-write-before-rename@1 \
		create-after-reserve \
		create-after-plugins atomic-write-before-rename@2 create-after-save; do
		rm -rf "$WORK/state" "$WORK/root" "$WORK"/*.orig
		mkdir -p "$WORK/root"
		bundle keep critical 1
		run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/keep" keep
		[ "$status" = 0 ] || fail "$point: $output"
		bundle victim critical 1
		killed_create "$point" victim
		check_after "$point"
	done
}

# a running shared container (its init a sleep, recorded by the hook)
shared_running() {
	bundle web standard
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/web" web
	[ "$status" = 0 ] || fail "$output"
	sleep 1000 &
	echo $! >"$WORK/init.pid"
	printf '{"ociVersion":"1.0.2","id":"web","status":"creating","pid":%d,"bundle":"%s"}' \
		"$(cat "$WORK/init.pid")" "$WORK/web" |
		env TOPOSHIM_RUNTIME_ROOT="$WORK/root" "$TOPOSHIM" hook create-runtime
}

@test "faults: a resize killed before and after it resized" {
	local point
	for point in settle-before-resize settle-after-resize; do
		rm -rf "$WORK/state" "$WORK/root" "$WORK"/*.orig
		mkdir -p "$WORK/root"
		shared_running
		bundle victim critical 1
		killed_create "$point" victim
		# the shared container still has its record; the next settle fixes it
		[ "$(jq '[.allocations[] | select(.container_id == "web")] | length' \
			"$WORK/state/allocations.json")" = 1 ] || fail "$point: web lost its record"
		check_after "$point"
	done
}

@test "faults: the hooks under real runc killed at each of their steps" {
	require_runc
	getent passwd toposhim-plugin >/dev/null ||
		skip "no user toposhim-plugin, which plugins run as (contrib/plugin-user.sh creates it)"
	RUNC_ROOT="$WORK/runc"
	unset TOPOSHIM_RUNTIME
	# the hooks are injected only for plugins with a create or delete stage:
	# the log plugin, from a copy only root can change
	install -d -m 0755 "$WORK/plugins"
	install -m 0755 "$TS_BUILDDIR/hooks/log" "$WORK/plugins/"
	install -d -m 0755 -o toposhim-plugin "$WORK/plugin-out"
	echo "{\"state_dir\": \"$WORK/state\", $TS_TEST_POLICY, \"plugins\": [{\"type\": \"log\",
		\"path\": \"$WORK/plugins/log\", \"conf\": {\"path\": \"$WORK/plugin-out/events.jsonl\"},
		\"stages\": [\"create\", \"delete\"], \"sandbox\": {\"writable\": [\"$WORK/plugin-out\"]}}]}" \
		>"$TOPOSHIM_CONFIG"
	make_bundle "$WORK/c" sleep 1000
	jq '.annotations = {"toposhim.io/class": "critical", "toposhim.io/cpus": "1"}' \
		"$WORK/c/config.json" >"$WORK/c.json" && mv "$WORK/c.json" "$WORK/c/config.json"
	cp "$WORK/c/config.json" "$WORK/c.pristine"
	local point id
	for point in hook-create-runtime-before-commit hook-create-runtime-after-commit; do
		cp "$WORK/c.pristine" "$WORK/c/config.json"
		id="ts-fault-$RANDOM"
		# the hook is the test build too: /proc/self/exe of the create; the
		# container's stdio goes to a file, never to bats' pipes
		status=0
		env TOPOSHIM_TEST_KILL_AT="$point" "$TEST_SHIM" --root "$RUNC_ROOT" create \
			--bundle "$WORK/c" "$id" </dev/null >"$WORK/out" 2>&1 3>&- || status=$?
		output=$(cat "$WORK/out")
		# runc reports the killed hook and destroys the container
		[ "$status" = 1 ] || fail "$point: create exit $status: $output"
		[[ "$output" == *"signal: killed"* ]] || fail "$point: $output"
		run runc --root "$RUNC_ROOT" state "$id"
		[ "$status" != 0 ] || fail "$point: the container is still there"
		run "$TOPOSHIMCTL" alloc gc --grace 0
		[ "$status" = 0 ] || fail "$point: gc: $output"
		[ "$(jq '.allocations | length' "$WORK/state/allocations.json")" = 0 ] ||
			fail "$point: a record outlives the container: $(cat "$WORK/state/allocations.json")"
	done
	for point in hook-poststop-before-commit hook-poststop-after-commit; do
		cp "$WORK/c.pristine" "$WORK/c/config.json"
		id="ts-fault-$RANDOM"
		env TOPOSHIM_TEST_KILL_AT="$point" "$TEST_SHIM" --root "$RUNC_ROOT" create \
			--bundle "$WORK/c" "$id" </dev/null >"$WORK/out" 2>&1 3>&- ||
			fail "$point: create: $(cat "$WORK/out")"
		run runc --root "$RUNC_ROOT" delete --force "$id"
		# a killed poststop: runc goes on deleting; the record is collected
		run "$TOPOSHIMCTL" alloc gc --grace 0
		[ "$status" = 0 ] || fail "$point: gc: $output"
		[ "$(jq '.allocations | length' "$WORK/state/allocations.json")" = 0 ] ||
			fail "$point: a record outlives the container: $(cat "$WORK/state/allocations.json")"
		# and its CPU can be had again
		cp "$WORK/c.pristine" "$WORK/c/config.json"
		"$TOPOSHIM" --root "$RUNC_ROOT" create --bundle "$WORK/c" "$id-again" \
			</dev/null >"$WORK/out" 2>&1 3>&- || fail "$point: the next create: $(cat "$WORK/out")"
		[ "$(jq -r .linux.resources.cpu.cpus "$WORK/c/config.json")" = 0 ] || fail "$point: cpus"
		runc --root "$RUNC_ROOT" delete --force "$id-again"
		"$TOPOSHIMCTL" alloc gc --grace 0 >/dev/null
	done
}

# Every test point of the sources is one this file aims at.
@test "faults: every test point is covered here" {
	local src=$TS_SRCDIR/src names p
	names=$(grep -rhoE --include='*.c' 'ts_test_point\("[a-z-]+"\)' "$src" |
		sed 's/.*("\(.*\)")/\1/' | sort -u)
	for p in $names; do
		[ "$p" = gc-between-pid-and-dir ] && continue # tests/unit/state/test-gc-race.c
		grep -q -- "$p" "$BATS_TEST_FILENAME" || fail "test point '$p' is not covered by faults.bats"
	done
}

@test "settle: a commit made while another settle holds the resize lock is settled by the holder" {
	mkdir -p "$WORK/root"
	shared_running
	bundle crit1 critical 1
	bundle crit2 critical 1
	# crit1's create settles (web leaves its CPU), then holds the resize
	# lock 3 s after its rounds
	env TOPOSHIM_TEST_SLEEP_AT="settle-before-unlock:3000" "$TEST_SHIM" --root "$WORK/root" \
		create --bundle "$WORK/crit1" crit1 >"$WORK/crit1.out" 2>&1 &
	local holder=$! i
	for i in $(seq 50); do
		[ "$(jq -r '.allocations[] | select(.container_id == "web") | .cpus' \
			"$WORK/state/allocations.json" 2>/dev/null)" = 1-3 ] && break
		sleep 0.1
	done
	[ "$(jq -r '.allocations[] | select(.container_id == "web") | .cpus' \
		"$WORK/state/allocations.json")" = 1-3 ] || fail "crit1's settle did not resize web: $(cat "$WORK/state/allocations.json")"
	# crit2 commits meanwhile; its settle finds the lock taken and leaves
	# the resize to the holder
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/crit2" crit2
	[ "$status" = 0 ] || fail "crit2: $output"
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/crit2/config.json")" = 1 ]
	[ "$(jq -r '.allocations[] | select(.container_id == "web") | .cpus' \
		"$WORK/state/allocations.json")" = 1-3 ]
	# the holder looks again once it lets go of the lock: the store is not
	# as its last session left it
	wait "$holder" || fail "crit1: $(cat "$WORK/crit1.out")"
	[ "$(jq -r '.allocations[] | select(.container_id == "web") | .cpus' \
		"$WORK/state/allocations.json")" = 2-3 ]
}
