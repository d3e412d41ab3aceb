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
	[ -x "$APPLY" ] && [ -x "$RESIZE" ] || fail "$APPLY and $RESIZE are missing: make check builds them"
	containers_setup
	RUNC_ROOT="$WORK/runc-root"

	# batch's cpu.idle is configured (not only the built-in): v1 says it skips it
	echo '{"cgroup":{"classes":{"batch":{"pids.max":64,"cpu.max":"50000 100000","memory.low":268435456,"cpu.idle":1}}}}' >"$WORK/toposhim.json"
}

# The crun test's container shares $RUNC_ROOT with the runc ones.  Each
# runtime deletes its own: runc's forced delete of a container it cannot
# load (crun's, without state.json) removes the directory and nothing
# else, and crun then finds nothing to kill (its init ran on, in the
# test's cgroups, until the sleep ended).
teardown() {
	if [ -e "$RUNC_ROOT/$ID/status" ] && command -v crun >/dev/null; then
		unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh \
			crun --root "$RUNC_ROOT" delete --force "$ID" >/dev/null 2>&1 || true
	fi
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

# --- translations of the create path, with real containers (issue 14) ---

# fail MSG: end the test with MSG (bats-support's, for this file's own use)
fail() {
	echo "$*" >&2
	return 1
}

# ts_run NAME [ARG...]: `toposhim --root R [ARG...] run` of bundle $WORK/NAME
# as $ID-NAME; stdout to $WORK/NAME.out, stderr to $WORK/NAME.err.
ts_run() {
	local name=$1
	shift
	"$TOPOSHIM" --root "$RUNC_ROOT" "$@" run --bundle "$WORK/$name" "$ID-$name" </dev/null \
		>"$WORK/$name.out" 2>"$WORK/$name.err"
}

@test "cgroup: taskset -c 0 toposhim run and exec: the container gets its whole cpuset" {
	affinity_reset runc
}

@test "cgroup: crun: taskset -c 0 toposhim run and exec: the container gets its whole cpuset" {
	require_cmd crun
	affinity_reset crun
}

# affinity_reset RUNTIME: the runtime alone passes a narrowed affinity on
# to the container's init and to exec'd processes; through toposhim both
# get the container's whole cpuset.  crun runs in a mount namespace of
# its own without this hybrid host's cgroup2 mount (crun refuses one with
# a controller on it).
affinity_reset() {
	local rt=$1
	local -a pfx=()
	require_cmd taskset
	[ "$(nproc --all)" -ge 2 ] || skip "needs 2 CPUs to narrow the mask ($(nproc --all))"
	if [ "$rt" = crun ]; then
		pfx=(unshare -m --propagation private sh -c
			'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh)
		write_config '"runtime": {"path": "'"$(command -v crun)"'"}'
	else
		write_config
	fi
	make_bundle "$WORK/a" '["grep","Cpus_allowed_list","/proc/self/status"]'
	jq '.linux.resources.cpu = {"cpus": "0-1"}' "$WORK/a/config.json" >"$WORK/c.json" &&
		mv "$WORK/c.json" "$WORK/a/config.json"
	cp -a "$WORK/a" "$WORK/plain"
	# the runtime alone keeps the caller's mask: the case is real here
	(cd "$WORK/plain" && taskset -c 0 "${pfx[@]}" "$rt" --root "$RUNC_ROOT" run "$ID-plain" </dev/null) \
		>"$WORK/plain.out" 2>&1 || fail "$rt: $(cat "$WORK/plain.out")"
	[ "$(cut -f2 "$WORK/plain.out")" = 0 ] || skip "$rt resets the affinity itself here: $(cat "$WORK/plain.out")"

	taskset -c 0 "${pfx[@]}" "$TOPOSHIM" --root "$RUNC_ROOT" run --bundle "$WORK/a" "$ID-a" </dev/null \
		>"$WORK/a.out" 2>"$WORK/a.err" || fail "run: $(cat "$WORK/a.err")"
	[ "$(cut -f2 "$WORK/a.out")" = "$(jq -r .linux.resources.cpu.cpus "$WORK/a/config.json")" ] ||
		fail "run: $(cat "$WORK/a.out") for cpuset $(jq -c .linux.resources.cpu "$WORK/a/config.json")"
	[ "$(cut -f2 "$WORK/a.out")" = 0-1 ] || fail "run: $(cat "$WORK/a.out")"

	make_bundle "$WORK/s" '["sleep","100"]'
	"${pfx[@]}" "$TOPOSHIM" --root "$RUNC_ROOT" create --bundle "$WORK/s" "$ID" </dev/null >"$WORK/s.out" 2>&1 ||
		fail "create: $(cat "$WORK/s.out")"
	"${pfx[@]}" "$TOPOSHIM" --root "$RUNC_ROOT" start "$ID"
	run taskset -c 0 "${pfx[@]}" "$rt" --root "$RUNC_ROOT" exec "$ID" grep Cpus_allowed_list /proc/self/status
	[ "$(cut -f2 <<<"$output")" = 0 ] || fail "$rt exec: $output"
	run taskset -c 0 "${pfx[@]}" "$TOPOSHIM" --root "$RUNC_ROOT" exec "$ID" grep Cpus_allowed_list /proc/self/status
	[ "$status" -eq 0 ] || fail "exec: $output"
	[ "$(cut -f2 <<<"$output")" = 0-1 ] || fail "exec: $output"
}

@test "cgroup: shares 1 and 300000 are clamped to the kernel's range and runc accepts them" {
	write_config
	local mode n v
	mode=$(host_mode)
	for n in 1 300000; do
		make_bundle "$WORK/s$n" '["sh","-c","cat /sys/fs/cgroup/cpu/cpu.shares 2>/dev/null || cat /sys/fs/cgroup/cpu.weight"]'
		jq --argjson n "$n" '.linux.resources.cpu = {"shares": $n}' "$WORK/s$n/config.json" \
			>"$WORK/c.json" && mv "$WORK/c.json" "$WORK/s$n/config.json"
		cp -a "$WORK/s$n" "$WORK/plain$n"
	done
	if [ "$mode" != unified ]; then
		# runc 1.1 alone refuses the value on v1 (it reads cpu.shares back)
		(cd "$WORK/plain1" && runc --root "$RUNC_ROOT" run "$ID-plain1" </dev/null) \
			>"$WORK/plain1.out" 2>&1 && fail "runc accepted shares 1: $(cat "$WORK/plain1.out")"
		grep -q "the minimum allowed cpu-shares is 2" "$WORK/plain1.out" ||
			fail "runc: $(cat "$WORK/plain1.out")"
	fi
	for n in 1 300000; do
		ts_run "s$n" --log "$WORK/s$n.log" || fail "run shares $n: $(cat "$WORK/s$n.err")"
		case "$n:$mode" in
		1:unified) v='{"shares":2} 2 1' ;;
		1:*) v='{"shares":2} 2 2' ;;
		300000:unified) v='{"shares":262144} 262144 10000' ;;
		*) v='{"shares":262144} 262144 262144' ;;
		esac
		[ "$(jq -c '.linux.resources.cpu | {shares}' "$WORK/s$n/config.json") $(jq -r .linux.resources.cpu.shares "$WORK/s$n/config.json") $(cat "$WORK/s$n.out")" = "$v" ] ||
			fail "shares $n: $(jq -c .linux.resources "$WORK/s$n/config.json"), read back $(cat "$WORK/s$n.out")"
		grep -q "'/linux/resources/cpu/shares': '$n' clamped to" "$WORK/s$n.log" ||
			fail "log: $(cat "$WORK/s$n.log")"
	done
	# the note is for the log file: nothing on stderr
	[ ! -s "$WORK/s1.err" ] || fail "stderr: $(cat "$WORK/s1.err")"
}

@test "cgroup v2: the engine's shares become the corrected cpu.weight, read back from cgroupfs" {
	[ "$(host_mode)" = unified ] || skip "cgroup mode is '$(host_mode)': cpu.weight needs a pure cgroup v2 host (the qemu guest, the accelerator host)"
	write_config
	make_bundle "$WORK/w" '["cat","/sys/fs/cgroup/cpu.weight"]'
	jq '.linux.resources.cpu = {"shares": 1024}' "$WORK/w/config.json" >"$WORK/c.json" &&
		mv "$WORK/c.json" "$WORK/w/config.json"
	ts_run w || fail "run: $(cat "$WORK/w.err")"
	[ "$(jq -r '.linux.resources.unified["cpu.weight"]' "$WORK/w/config.json")" = 100 ]
	[ "$(cat "$WORK/w.out")" = 100 ] || fail "cpu.weight: $(cat "$WORK/w.out")"
}

@test "cgroup: --systemd-cgroup writes the class cpu.max systemd applies" {
	[ -d /run/systemd/system ] || skip "systemd is not running here: no systemd cgroup driver"
	write_config '"cgroup": {"classes": {"web": {"cpu.max": "123456 100000", "override_engine": true}}}, "placement": {"classes": {"web": {"pool": "shared"}}}'
	make_bundle "$WORK/q" '["sh","-c","cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cat /sys/fs/cgroup/cpu.max"]'
	set_annotation "$WORK/q" toposhim.io/class web
	jq --arg p "system.slice:toposhim:$ID-q" '.linux.cgroupsPath = $p' "$WORK/q/config.json" \
		>"$WORK/c.json" && mv "$WORK/c.json" "$WORK/q/config.json"
	ts_run q --systemd-cgroup || fail "run: $(cat "$WORK/q.err")"
	[ "$(jq -r .linux.resources.cpu.quota "$WORK/q/config.json")" = 124000 ]
	case "$(cat "$WORK/q.out")" in
	124000 | "124000 100000") ;;
	*) fail "cpu.max: $(cat "$WORK/q.out")" ;;
	esac
}

@test "cgroup v2: crun gets hugetlb reservation limits, read back from cgroupfs" {
	[ "$(host_mode)" = unified ] || skip "cgroup mode is '$(host_mode)': crun refuses hybrid hosts with hugetlb on v2; needs a pure cgroup v2 host"
	require_cmd crun
	grep -qw hugetlb /sys/fs/cgroup/cgroup.subtree_control || skip "the hugetlb controller is not enabled"
	ls /sys/fs/cgroup/hugetlb.2MB.rsvd.max >/dev/null 2>&1 ||
		ls /sys/fs/cgroup/*/hugetlb.2MB.rsvd.max >/dev/null 2>&1 || skip "no hugetlb.2MB.rsvd.max (kernel < 5.7 or no 2MB pages)"
	write_config
	make_bundle "$WORK/h" '["cat","/sys/fs/cgroup/hugetlb.2MB.rsvd.max"]'
	jq '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]' \
		"$WORK/h/config.json" >"$WORK/c.json" && mv "$WORK/c.json" "$WORK/h/config.json"
	TOPOSHIM_RUNTIME=$(command -v crun) ts_run h || fail "run: $(cat "$WORK/h.err")"
	[ "$(jq -r '.linux.resources.unified["hugetlb.2MB.rsvd.max"]' "$WORK/h/config.json")" = 4194304 ]
	[ "$(cat "$WORK/h.out")" = 4194304 ] || fail "rsvd.max: $(cat "$WORK/h.out")"
}
