#!/usr/bin/env bats
# The runtimes' systemd cgroup driver (--systemd-cgroup) against a real systemd
# (issue 14, "systemd driver"; src/cgroup/cgroup.h ts_cgroup_translate).
# runc turns a quota into the unit's CPUQuotaPerSecUSec, which systemd
# rounds up to 10 ms per second, and then writes the raw quota into cpu.max
# itself, so the cgroup and the unit disagree; through toposhim the quota
# is written as the value the unit holds, and an unlimited quota as
# unified "cpu.max" = "max <period>".  Values are read back from cgroupfs
# and from systemd (systemctl show).
#
# crun 1.8.1 (Debian 12) asks systemd for the scope only and writes the
# quota itself into a "container" cgroup below it, so there the unit stays
# unlimited and the container's own cgroup holds the value toposhim wrote.
#
# The guest has no init system: systemd runs here as PID 1 of a pid and
# mount namespace of its own (run.sh ships it, with systemctl, and a D-Bus
# system bus it starts, when the host has them).  runc reaches systemd over
# /run/systemd/private, crun over the bus; every runtime and systemctl call
# enters those namespaces: the pid a runtime hands systemd must be one
# systemd sees.  Killing systemd ends the namespace and every container in
# it; teardown_file removes the cgroups it made.

# shellcheck disable=SC2016 # $names in single quotes are jq variables
load helpers

SD_BIN=/usr/lib/systemd/systemd

setup_file()
{
	[ -x "$SD_BIN" ] || return 0
	find /sys/fs/cgroup -mindepth 1 -type d | sort >"$BATS_FILE_TMPDIR/cgroups.before"
	# systemd as PID 1 writes to /dev/console, which carries the TAP: in
	# its mount namespace a file stands in for the console (sd_ready
	# prints it on failure)
	: >"$BATS_FILE_TMPDIR/systemd.log"
	setsid unshare --mount --pid --fork --propagation private --mount-proc \
		sh -c 'mount --bind "$1" /dev/console && shift && exec "$@"' sh "$BATS_FILE_TMPDIR/systemd.log" \
		env container=ts-vm "$SD_BIN" --system --unit=ts-vm.target --log-target=console \
		</dev/null >"$BATS_FILE_TMPDIR/unshare.log" 2>&1 &
	echo $! >"$BATS_FILE_TMPDIR/unshare.pid"
}

teardown_file()
{
	local pid cg i children=()
	[ -f "$BATS_FILE_TMPDIR/unshare.pid" ] || return 0
	pid=$(cat "$BATS_FILE_TMPDIR/unshare.pid")
	# systemd (the namespace's PID 1) first: the kernel then kills the rest
	read -r -a children <"/proc/$pid/task/$pid/children" 2>/dev/null || true
	kill -KILL "${children[@]}" "$pid" 2>/dev/null || true
	for ((i = 0; i < 100; i++)); do
		[ -d "/proc/$pid" ] || break
		sleep 0.1
	done
	# the cgroups systemd made, deepest first, once their processes are gone
	for ((i = 0; i < 50; i++)); do
		for cg in $(find /sys/fs/cgroup -mindepth 1 -type d | sort | comm -13 "$BATS_FILE_TMPDIR/cgroups.before" - | sort -r); do
			rmdir "$cg" 2>/dev/null || true
		done
		[ -z "$(find /sys/fs/cgroup -mindepth 1 -type d | sort | comm -13 "$BATS_FILE_TMPDIR/cgroups.before" -)" ] && break
		sleep 0.1
	done
}

# Set SD_PID to systemd's pid (as this shell sees it) once it serves
# /run/systemd/private in its mount namespace, and SD to the command prefix
# that enters its namespaces.
sd_ready()
{
	local upid i
	[ -x "$SD_BIN" ] || skip "systemd is not in the guest: the host has no /lib/systemd/systemd and systemctl (apt-get install systemd)"
	upid=$(cat "$BATS_FILE_TMPDIR/unshare.pid")
	for ((i = 0; i < 600; i++)); do
		SD_PID=$(cat "/proc/$upid/task/$upid/children" 2>/dev/null) || SD_PID=
		SD_PID=${SD_PID% }
		if [ -n "$SD_PID" ] && [ -S "/proc/$SD_PID/root/run/systemd/private" ] &&
			[ -d "/proc/$SD_PID/root/run/systemd/system" ]; then
			SD=(nsenter -t "$SD_PID" -m -p --)
			return 0
		fi
		[ -d "/proc/$upid" ] || break
		sleep 0.1
	done
	cat "$BATS_FILE_TMPDIR/unshare.log" "$BATS_FILE_TMPDIR/systemd.log"
	fail "systemd did not serve /run/systemd/private within 60s"
}

setup()
{
	ts_require_layout
	sd_ready
	echo "{\"policy\": $TS_TEST_POLICY, \"cgroup\": {\"classes\": {\"web\": {\"cpu.max\": \"123456 100000\", \"override_engine\": true}}}, \"placement\": {\"classes\": {\"web\": {\"pool\": \"shared\"}}}}" \
		>"$BATS_TEST_TMPDIR/toposhim.json"
	SD_STARTED=()
}

teardown()
{
	local entry
	for entry in "${SD_STARTED[@]}"; do
		"${SD[@]}" timeout 60 "${entry%% *}" --systemd-cgroup delete -f "${entry#* }" \
			</dev/null >/dev/null 2>&1 || true
	done
}

# sd_run VARIANT NAME [JQ_FILTER]: start a sleeping container in the scope
# system.slice:toposhim:<id> with --systemd-cgroup, by the runtime alone
# (VARIANT runc) or through toposhim (toposhim-runc, toposhim-crun; its
# config has a class "web" with the limit 123456/100000), after JQ_FILTER
# on its config.json.  Sets BUNDLE, CONTAINER_ID, UNIT, SCOPE (the scope's
# cgroup directory) and CG (the container's own: the scope for runc, crun's
# sub-cgroup of it for crun).
sd_run()
{
	local variant=$1 name=$2 filter=${3:-.} runtime rt pid
	runtime=$(ts_runtime_path "$variant")
	rt=("$runtime")
	BUNDLE=$BATS_TEST_TMPDIR/$name
	CONTAINER_ID=ts-$BATS_TEST_NUMBER-$variant-$name
	UNIT=toposhim-$CONTAINER_ID.scope
	SCOPE=/sys/fs/cgroup/system.slice/$UNIT
	mkdir -p "$BUNDLE"
	cp "$TS_TEMPLATE/config.json" "$BUNDLE/config.json"
	ts_config '.linux.cgroupsPath = $p | .process.args = ["sleep", "600"]' \
		--arg p "system.slice:toposhim:$CONTAINER_ID"
	ts_config "$filter"
	case $variant in
	toposhim-*)
		ts_require_toposhim "$runtime"
		rt=(env "TOPOSHIM_RUNTIME=$runtime" "TOPOSHIM_CONFIG=$BATS_TEST_TMPDIR/toposhim.json" /usr/bin/toposhim)
		;;
	esac
	SD_STARTED+=("$runtime $CONTAINER_ID")
	# never bats' pipes, which the detached container would hold open
	"${SD[@]}" timeout 120 "${rt[@]}" --systemd-cgroup run -d --bundle "$BUNDLE" "$CONTAINER_ID" \
		</dev/null >"$BUNDLE/out" 2>"$BUNDLE/err" || fail "$variant --systemd-cgroup run -d exited $?: $(cat "$BUNDLE/err")"
	[ -d "$SCOPE" ] || fail "no scope cgroup $SCOPE: $(find /sys/fs/cgroup -name '*.scope')"
	pid=$("${SD[@]}" "$runtime" state "$CONTAINER_ID" | jq -r .pid)
	CG=/sys/fs/cgroup$("${SD[@]}" sed -n 's/^0:://p' "/proc/$pid/cgroup")
	case $CG in
	"$SCOPE" | "$SCOPE"/*) ;;
	*) fail "container cgroup $CG is not in the scope $SCOPE" ;;
	esac
}

# sd_show PROPERTY: the unit's PROPERTY as systemd holds it.
sd_show()
{
	"${SD[@]}" timeout 60 systemctl show --value -p "$1" "$UNIT" </dev/null 2>&1
}

@test "systemd driver, runc alone: a quota of 123456 leaves cpu.max and the unit apart (the case toposhim corrects)" {
	sd_run runc alone '.linux.resources.cpu = {quota: 123456, period: 100000}'
	[ "$CG" = "$SCOPE" ] || fail "runc's container cgroup $CG is not its scope"
	[ "$(cat "$CG/cpu.max")" = "123456 100000" ] || fail "cpu.max: $(cat "$CG/cpu.max")"
	[ "$(sd_show CPUQuotaPerSecUSec)" = 1.240000s ] || fail "unit: $(sd_show CPUQuotaPerSecUSec)"
}

# check_web VARIANT: the class quota 123456/100000 written as 124000, in
# config.json and in the container's cgroup
check_web()
{
	sd_run "$1" web '.annotations = ((.annotations // {}) + {"toposhim.io/class": "web"})'
	[ "$(jq -c '.linux.resources.cpu | {quota, period}' "$BUNDLE/config.json")" = '{"quota":124000,"period":100000}' ] ||
		fail "config.json cpu: $(jq -c .linux.resources.cpu "$BUNDLE/config.json")"
	[ "$(cat "$CG/cpu.max")" = "124000 100000" ] || fail "cpu.max: $(cat "$CG/cpu.max")"
}

# check_unlimited VARIANT: quota -1 written as unified "max 100000", in
# config.json and in the container's cgroup, the unit unlimited
check_unlimited()
{
	sd_run "$1" unlimited '.linux.resources.cpu = {quota: -1, period: 100000}'
	[ "$(jq -c '.linux.resources.cpu | [has("quota"), .period]' "$BUNDLE/config.json")" = '[false,100000]' ] ||
		fail "config.json cpu: $(jq -c .linux.resources.cpu "$BUNDLE/config.json")"
	[ "$(jq -r '.linux.resources.unified["cpu.max"]' "$BUNDLE/config.json")" = "max 100000" ] ||
		fail "unified: $(jq -c .linux.resources.unified "$BUNDLE/config.json")"
	[ "$(cat "$CG/cpu.max")" = "max 100000" ] || fail "cpu.max: $(cat "$CG/cpu.max")"
	[ "$(sd_show CPUQuotaPerSecUSec)" = infinity ] || fail "unit: $(sd_show CPUQuotaPerSecUSec)"
}

@test "systemd driver through toposhim (runc): a class cpu.max 123456/100000 is written as the 124000 the unit holds" {
	check_web toposhim-runc
	[ "$CG" = "$SCOPE" ] || fail "runc's container cgroup $CG is not its scope"
	[ "$(sd_show CPUQuotaPerSecUSec)" = 1.240000s ] || fail "unit: $(sd_show CPUQuotaPerSecUSec)"
}

@test "systemd driver through toposhim (runc): an unlimited quota (-1) is unified cpu.max \"max 100000\", the unit unlimited" {
	check_unlimited toposhim-runc
}

# crun's systemd driver talks to systemd over the system bus
require_bus()
{
	[ -x /usr/bin/dbus-daemon ] ||
		skip "dbus-daemon is not in the guest: the host has none (apt-get install dbus-daemon); crun's systemd driver needs a system bus"
}

@test "systemd driver through toposhim (crun): a class cpu.max 123456/100000 is 124000 in the container's cgroup" {
	require_bus
	check_web toposhim-crun
	[ "$CG" = "$SCOPE/container" ] || fail "crun's container cgroup is $CG, want $SCOPE/container"
	[ "$(sd_show CPUQuotaPerSecUSec)" = infinity ] || fail "unit: $(sd_show CPUQuotaPerSecUSec)"
}

@test "systemd driver through toposhim (crun): an unlimited quota (-1) is unified cpu.max \"max 100000\", the unit unlimited" {
	require_bus
	check_unlimited toposhim-crun
}
