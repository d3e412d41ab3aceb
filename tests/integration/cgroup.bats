#!/usr/bin/env bats
# QoS class cgroup limits and live cpuset resizing with a real runc on this
# host.  On the CI machine (hybrid cgroups) the limits must come out as v1
# values runc accepts (a non-empty unified map makes runc fail there), and
# resizing goes through `runc update`.  The drivers are test programs built
# by make check: tests/unit/cgroup/apply-class and resize-one.

load containers

APPLY="$TS_BUILDDIR/tests/unit/cgroup/apply-class"
RESIZE="$TS_BUILDDIR/tests/unit/cgroup/resize-one"

setup() {
	require_root
	require_cmd runc
	require_cmd jq
	containers_setup
	RUNC_ROOT="$WORK/runc-root"

	# batch's cpu.idle is configured (not only the built-in): v1 says it skips it
	echo '{"cgroup":{"classes":{"batch":{"pids.max":64,"cpu.max":"50000 100000","memory.low":268435456,"cpu.idle":1}}}}' >"$WORK/toposhim.json"
}

teardown() {
	runc --root "$RUNC_ROOT" delete --force "$ID" >/dev/null 2>&1 || true
	containers_teardown
}

# Mode of this host, from the shim's own detection (apply-class prints it).
host_mode() {
	echo '{}' >"$WORK/probe.json"
	"$APPLY" "$WORK/probe.json" "$WORK/toposhim.json" none detect 2>/dev/null
}

require_v1() {
	case "$(host_mode)" in
	hybrid | legacy) ;;
	*) skip "cgroup mode is '$(host_mode)', these cases need cgroup v1 or hybrid" ;;
	esac
}

@test "cgroup: the shim detects this host's mode like stat -f does" {
	run host_mode
	[ "$status" -eq 0 ]
	case "$(stat -fc %T /sys/fs/cgroup)" in
	cgroup2fs) [ "$output" = unified ] ;;
	tmpfs) if [ "$(stat -fc %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
		[ "$output" = hybrid ]
	else
		[ "$output" = legacy ]
	fi ;;
	*) [ "$output" = legacy ] ;;
	esac
}

@test "cgroup: batch limits reach runc as v1 values it accepts" {
	require_v1
	make_bundle "$WORK/b" '["sh","-c","cat /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/cpu/cpu.cfs_quota_us /sys/fs/cgroup/cpu/cpu.cfs_period_us /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/memory/memory.soft_limit_in_bytes"]'
	run "$APPLY" "$WORK/b/config.json" "$WORK/toposhim.json" batch detect
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "$(host_mode)" ]
	[ "${lines[1]}" = "$WORK/b/config.json: class 'batch': cgroup v1 ($(host_mode)): skipped cpu.idle (no v1 equivalent)" ]
	[ "$(jq -c '.linux.resources | del(.devices)' "$WORK/b/config.json")" = '{"cpu":{"shares":10,"quota":50000,"period":100000},"memory":{"reservation":268435456},"pids":{"limit":64}}' ]
	cd "$WORK/b"
	run runc --root "$RUNC_ROOT" run "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = "10
50000
100000
64
268435456" ]
}

@test "cgroup: critical keeps the engine's shares and never writes unified on v1" {
	require_v1
	make_bundle "$WORK/b" '["cat","/sys/fs/cgroup/cpu/cpu.shares"]'
	jq '.linux.resources.cpu = {"shares": 512} | .linux.resources.memory = {"limit": 536870912}' \
		"$WORK/b/config.json" >"$WORK/c.json" && mv "$WORK/c.json" "$WORK/b/config.json"
	run "$APPLY" "$WORK/b/config.json" "$WORK/toposhim.json" critical detect
	[ "$status" -eq 0 ]
	# the built-in memory.min has no v1 file: skipped without a message
	[ "${lines[1]}" = "$WORK/b/config.json: '/linux/resources/cpu/shares': engine value '512' kept over class 'critical' value '10240' (cpu.weight 1000)" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -c '.linux.resources.unified' "$WORK/b/config.json")" = null ]
	cd "$WORK/b"
	run runc --root "$RUNC_ROOT" run "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = 512 ]
}

@test "cgroup: a running container is shrunk and grown back through runc update" {
	require_v1
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
	make_bundle "$WORK/b" '["sleep","600"]'
	cd "$WORK/b"
	runc --root "$RUNC_ROOT" run -d "$ID" </dev/null >/dev/null 2>&1
	pid=$(runc --root "$RUNC_ROOT" state "$ID" | jq .pid)
	cgpath=$(awk -F: '$2 == "cpuset" { print $3 }' "/proc/$pid/cgroup")
	[ -n "$cgpath" ]
	run "$RESIZE" "$(host_mode)" "$(command -v runc)" "$RUNC_ROOT" "$ID" "$cgpath" "$pid" 1 0
	[ "$status" -eq 0 ]
	[ "$output" = "ok via runtime" ]
	[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status")" = 1 ]
	[ "$(runc --root "$RUNC_ROOT" exec "$ID" cat /sys/fs/cgroup/cpuset/cpuset.cpus)" = 1 ]
	run "$RESIZE" "$(host_mode)" "$(command -v runc)" "$RUNC_ROOT" "$ID" "$cgpath" "$pid" 0-1 ""
	[ "$status" -eq 0 ]
	[ "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$pid/status")" = 0-1 ]
}

@test "cgroup: a container that died is skipped, not updated" {
	require_v1
	make_bundle "$WORK/b" '["true"]'
	cd "$WORK/b"
	runc --root "$RUNC_ROOT" run "$ID"
	# A pid that cannot exist (above pid_max) stands for the recorded, now gone, init.
	run "$RESIZE" "$(host_mode)" "$(command -v runc)" "$RUNC_ROOT" "$ID" /x 99999999 0 ""
	[ "$status" -eq 1 ]
	[ "$output" = "dead via runtime: container '$ID': init pid 99999999 is gone" ]
}
