#!/usr/bin/env bats
# The injected hooks under a real runc and crun: createRuntime records the
# init pid, poststop (delete) releases the allocation.  Needs root.

load /usr/lib/bats/bats-support/load
load /usr/lib/bats/bats-assert/load

setup() {
	[ "$(id -u)" = 0 ] || skip "needs root to run runc"
	command -v runc >/dev/null || skip "runc not installed (runc spec writes the bundle)"
	command -v busybox >/dev/null || skip "busybox not installed"
	DRIVER="$TS_BUILDDIR/tests/unit/state/hook-driver"
	WORK=$(mktemp -d /tmp/ts-state-bats-XXXXXX)
	export TOPOSHIM_STATE_DIR="$WORK/state"
	ROOT="$WORK/runc"
	# the root the hooks get, with the id, names the container's record
	export TOPOSHIM_RUNTIME_ROOT="$ROOT"
	BUNDLE="$WORK/bundle"
	ID="ts-hooks-$$-$BATS_TEST_NUMBER"
	mkdir -p "$BUNDLE/rootfs/bin" "$ROOT"
	cp "$(command -v busybox)" "$BUNDLE/rootfs/bin/"
	for c in sh sleep; do ln -s busybox "$BUNDLE/rootfs/bin/$c"; done
	(cd "$BUNDLE" && runc spec)
	jq '.process.terminal = false | .process.args = ["sleep", "300"]' \
		"$BUNDLE/config.json" >"$BUNDLE/config.tmp"
	mv "$BUNDLE/config.tmp" "$BUNDLE/config.json"
}

teardown() {
	[ -n "$WORK" ] || return 0
	runc --root "$ROOT" delete --force "$ID" >/dev/null 2>&1 || true
	command -v crun >/dev/null && crun_here --root "$ROOT" delete --force "$ID" >/dev/null 2>&1
	rm -rf "$WORK"
}

# crun refuses hybrid cgroups: run it where the cgroup2 mount of a hybrid
# host is hidden (docs ENVIRONMENT.md); on other hosts run it as it is.
crun_here() {
	if mountpoint -q /sys/fs/cgroup/unified; then
		unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified && exec crun "$@"' crun "$@"
	else
		crun "$@"
	fi
}

@test "createRuntime records the init pid, runc delete releases it" {
	run "$DRIVER" inject "$BUNDLE/config.json"
	assert_success
	# the entries are absolute and carry a clean env
	run jq -c '.hooks.createRuntime[-1]' "$BUNDLE/config.json"
	assert_output "{\"path\":\"$DRIVER\",\"args\":[\"toposhim\",\"hook\",\"create-runtime\"],\"env\":[\"PATH=/usr/sbin:/usr/bin:/sbin:/bin\",\"TOPOSHIM_STATE_DIR=$TOPOSHIM_STATE_DIR\",\"TOPOSHIM_RUNTIME_ROOT=$ROOT\"]}"
	run "$DRIVER" put "$ID" "$ROOT"
	assert_success
	# a retried create does not add the hooks twice
	"$DRIVER" inject "$BUNDLE/config.json"
	run jq '.hooks.poststop | length' "$BUNDLE/config.json"
	assert_output 1

	# the hooks run with the env of config.json, not this one
	env -u TOPOSHIM_STATE_DIR -u TOPOSHIM_RUNTIME_ROOT runc --root "$ROOT" create --bundle "$BUNDLE" "$ID" \
		</dev/null >"$WORK/create.log" 2>&1
	pid=$(runc --root "$ROOT" state "$ID" | jq .pid)
	[ "$pid" -gt 0 ]
	start=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d' ' -f20)
	run jq -c ".[0] | [.container_id, .state, .pid, .pid_start_ticks]" \
		< <("$DRIVER" alloc list --json)
	assert_output "[\"$ID\",\"created\",$pid,$start]"
	run jq -r '.[0].cgroup_path' < <("$DRIVER" alloc list --json)
	# the cpuset hierarchy on cgroup v1/hybrid, else the v2 "0::" line
	assert_output "$(awk -F: '$2 ~ /(^|,)cpuset(,|$)/ { c = $3 } $1 == "0" && $2 == "" { v = $3 }
		END { print (c != "" ? c : v) }' "/proc/$pid/cgroup")"

	runc --root "$ROOT" delete --force "$ID"
	run "$DRIVER" alloc list --json
	assert_output "[]"
}

@test "crun runs the same hooks" {
	command -v crun >/dev/null || skip "crun not installed"
	"$DRIVER" inject "$BUNDLE/config.json"
	"$DRIVER" put "$ID" "$ROOT"
	(unset TOPOSHIM_STATE_DIR TOPOSHIM_RUNTIME_ROOT && crun_here --root "$ROOT" create --bundle "$BUNDLE" "$ID") \
		</dev/null >"$WORK/create.log" 2>&1 || { cat "$WORK/create.log"; false; }
	pid=$(crun_here --root "$ROOT" state "$ID" | jq .pid)
	[ "$pid" -gt 0 ]
	run jq -c ".[0] | [.container_id, .state, .pid]" < <("$DRIVER" alloc list --json)
	assert_output "[\"$ID\",\"created\",$pid]"
	crun_here --root "$ROOT" delete --force "$ID"
	run "$DRIVER" alloc list --json
	assert_output "[]"
}
