#!/usr/bin/env bats
# cgroup v2 class limits (issue 6, src/cgroup/cgroup.h "Class limits"),
# read back from each container's own cgroup files on the guest's pure
# cgroup v2 hierarchy, through toposhim with runc and crun.  A toposhim
# config sets every key for the three built-in classes; toposhim turns them
# into OCI fields and linux.resources.unified, which the runtime writes.
# Nothing here depends on the CPU layout, so default.list runs this file on
# one layout only: 1s, which has less else to run than the default one.

# shellcheck disable=SC2016 # $names in single quotes are jq variables
load helpers

MIB=1048576

# The io controller's io.weight exists only with the kernel's iocost
# (CONFIG_BLK_CGROUP_IOCOST): probe a scratch cgroup below the root, which
# has io enabled in its subtree_control (see tests/vm/init), and configure
# io.weight only where the file exists.
setup_file()
{
	local probe=/sys/fs/cgroup/ts-vm-io-probe
	mkdir "$probe"
	TS_IO_WEIGHT=0
	[ ! -e "$probe/io.weight" ] || TS_IO_WEIGHT=1
	rmdir "$probe"
	export TS_IO_WEIGHT
	export TS_TOPOSHIM_CONFIG=$BATS_FILE_TMPDIR/toposhim.json
	jq -n --argjson io "$TS_IO_WEIGHT" --argjson policy "$TS_TEST_POLICY" '{policy: $policy, cgroup: {classes: {
		critical: ({"cpu.weight": 800, "cpu.max": "300000 100000", "memory.min": "request",
			"memory.high": "0.75", "pids.max": 200} + if $io == 1 then {"io.weight": 300} else {} end),
		standard: {"cpu.weight": 150, "cpu.max": "150000 100000", "memory.high": 134217728,
			"memory.low": 33554432, "pids.max": 100},
		batch: {"cpu.max": "50000 100000", "memory.high": "max", "pids.max": 50}
	}}}' >"$TS_TOPOSHIM_CONFIG"
}

setup()
{
	ts_require_layout
}

teardown()
{
	ts_cleanup_containers
}

# start_class VARIANT CLASS [JQ_FILTER]: start a container of CLASS (critical
# asks for 2 PUs) with a 256 MiB memory limit and a 64 MiB reservation,
# after JQ_FILTER on its config.json.  Sets CG to its cgroup directory.
start_class()
{
	local variant=$1 class=$2 filter=${3:-.} annotations pid
	annotations=$(jq -n -c --arg c "$class" '{"toposhim.io/class": $c} +
		if $c == "critical" then {"toposhim.io/cpus": "2"} else {} end')
	ts_bundle_new "$variant" "$class"
	ts_config '.annotations = ((.annotations // {}) + $a) |
		.linux.resources.memory = {limit: (256 * $mib), reservation: (64 * $mib)}' \
		--argjson a "$annotations" --argjson mib "$MIB"
	ts_config "$filter"
	ts_start_reporting "$variant"
	pid=$(ts_container_pid "$variant")
	CG=/sys/fs/cgroup$(ts_cgroup_of "$pid")
	[ "$CG" = "/sys/fs/cgroup$TS_CGROUP_PARENT/$CONTAINER_ID" ] ||
		fail "container cgroup is '$CG', want '/sys/fs/cgroup$TS_CGROUP_PARENT/$CONTAINER_ID'"
}

# assert_cg FILE VALUE: the container's cgroup FILE holds exactly VALUE.
assert_cg()
{
	run cat "$CG/$1"
	assert_success
	assert_output "$2"
}

# critical: the configured weight, quota, memory.min = the reservation
# ("request"), memory.high = 0.75 of the 256 MiB limit (192 MiB, whole
# pages), pids.max, io.weight "default 300" where the kernel has it; not idle.
check_critical()
{
	local variant=$1
	start_class "$variant" critical
	assert_cg cpu.weight 800
	assert_cg cpu.max "300000 100000"
	assert_cg cpu.idle 0
	assert_cg memory.min $((64 * MIB))
	assert_cg memory.high $((192 * MIB))
	assert_cg memory.max $((256 * MIB))
	assert_cg pids.max 200
	if [ "$TS_IO_WEIGHT" = 1 ]; then
		assert_cg io.weight "default 300"
	fi
}

# standard: the configured weight, quota, memory.high in bytes and
# pids.max; no memory.min, not idle.  The class's memory.low (32 MiB) does
# not replace the engine's 64 MiB reservation (override_engine is false),
# so memory.low is 64 MiB.
check_standard()
{
	local variant=$1
	start_class "$variant" standard
	assert_cg cpu.weight 150
	assert_cg cpu.max "150000 100000"
	assert_cg cpu.idle 0
	assert_cg memory.high $((128 * MIB))
	assert_cg memory.low $((64 * MIB))
	assert_cg memory.min 0
	assert_cg pids.max 100
}

# batch: the built-in cpu.idle 1 with the configured quota, memory.high
# "max" and pids.max.  The built-in cpu.weight 1 cannot be read back: an
# idle group's weight is the kernel's idle weight (cpu.weight reads 0), and
# the kernel refuses cpu.weight writes to it, so toposhim passes the weight
# as cpu.shares only (runc wrote unified cpu.idle before cpu.weight at
# random and failed the create; src/cgroup/cgroup.h).
check_batch()
{
	local variant=$1
	start_class "$variant" batch
	assert_cg cpu.idle 1
	assert_cg cpu.weight 0
	assert_cg cpu.max "50000 100000"
	assert_cg memory.high max
	assert_cg pids.max 50
}

# The engine's own linux.resources.unified keys (memory.max 200 MiB and
# memory.swap.max 0 here) and the class's unified keys (cpu.weight,
# memory.high) together: the runtime accepts the merged object and writes
# both.  Without an engine reservation the class's memory.low (32 MiB) goes
# into memory.reservation, which the runtime writes to memory.low.
check_engine_unified()
{
	local variant=$1
	start_class "$variant" standard \
		'.linux.resources.unified = {"memory.max": "209715200", "memory.swap.max": "0"} |
		del(.linux.resources.memory.reservation)'
	assert_cg memory.max $((200 * MIB))
	assert_cg memory.swap.max 0
	assert_cg cpu.weight 150
	assert_cg memory.high $((128 * MIB))
	assert_cg memory.low $((32 * MIB))
}

@test "cgroup: critical class limits in the container's cgroup (runc)" {
	check_critical toposhim-runc
}

@test "cgroup: critical class limits in the container's cgroup (crun)" {
	check_critical toposhim-crun
}

@test "cgroup: standard class limits in the container's cgroup (runc)" {
	check_standard toposhim-runc
}

@test "cgroup: standard class limits in the container's cgroup (crun)" {
	check_standard toposhim-crun
}

@test "cgroup: batch class limits in the container's cgroup (runc)" {
	check_batch toposhim-runc
}

@test "cgroup: batch class limits in the container's cgroup (crun)" {
	check_batch toposhim-crun
}

@test "cgroup: engine and class unified keys together, class memory.low (runc)" {
	check_engine_unified toposhim-runc
}

@test "cgroup: engine and class unified keys together, class memory.low (crun)" {
	check_engine_unified toposhim-crun
}

# The engine's shares, not the class's weight (standard's 150 does not
# replace them: override_engine is false): toposhim pins unified cpu.weight
# with the conversion of runc >= 1.3.2 / crun >= 1.23 (2000 -> 170), where
# runc 1.1.5 and crun 1.8.1 alone write their linear one (2000 -> 77).
check_engine_shares()
{
	local variant=$1
	start_class "$variant" standard '.linux.resources.cpu.shares = 2000'
	[ "$(jq -r '.linux.resources.unified["cpu.weight"]' "$BUNDLE/config.json")" = 170 ] ||
		fail "unified: $(jq -c .linux.resources.unified "$BUNDLE/config.json")"
	assert_cg cpu.weight 170
}

# Out-of-range shares are clamped as kubelet does, then pinned: 1 -> 2 ->
# weight 1, 300000 -> 262144 -> weight 10000.
# check_clamped_shares VARIANT SHARES CLAMPED WEIGHT
check_clamped_shares()
{
	local variant=$1
	start_class "$variant" standard ".linux.resources.cpu.shares = $2"
	[ "$(jq -c '.linux.resources.cpu.shares' "$BUNDLE/config.json")" = "$3" ] ||
		fail "shares: $(jq -c .linux.resources.cpu "$BUNDLE/config.json")"
	assert_cg cpu.weight "$4"
}

@test "cgroup: the engine's shares become the corrected cpu.weight (runc)" {
	check_engine_shares toposhim-runc
}

@test "cgroup: the engine's shares become the corrected cpu.weight (crun)" {
	check_engine_shares toposhim-crun
}

@test "cgroup: runc alone gives shares 2000 the old linear weight 77" {
	ts_bundle_new runc plain
	ts_config '.linux.resources.cpu = {"shares": 2000}'
	ts_start_reporting runc
	CG=/sys/fs/cgroup$(ts_cgroup_of "$(ts_container_pid runc)")
	assert_cg cpu.weight 77
}

@test "cgroup: shares 1 is clamped to 2, weight 1 (runc)" {
	check_clamped_shares toposhim-runc 1 2 1
}

@test "cgroup: shares 1 is clamped to 2, weight 1 (crun)" {
	check_clamped_shares toposhim-crun 1 2 1
}

@test "cgroup: shares 300000 is clamped to 262144, weight 10000 (runc)" {
	check_clamped_shares toposhim-runc 300000 262144 10000
}

@test "cgroup: shares 300000 is clamped to 262144, weight 10000 (crun)" {
	check_clamped_shares toposhim-crun 300000 262144 10000
}

# hugetlb is not among the controllers tests/vm/init enables (system.bats
# asserts that list): enable it for one test, from the root down to the
# test parent, and take it away again.
hugetlb_on()
{
	grep -qw hugetlb /sys/fs/cgroup/cgroup.controllers || skip "no hugetlb controller in this kernel"
	mkdir -p "/sys/fs/cgroup$TS_CGROUP_PARENT"
	echo +hugetlb >/sys/fs/cgroup/cgroup.subtree_control || fail "cannot enable hugetlb"
	echo +hugetlb >"/sys/fs/cgroup$TS_CGROUP_PARENT/cgroup.subtree_control" ||
		fail "cannot enable hugetlb below $TS_CGROUP_PARENT"
}

hugetlb_off()
{
	echo -hugetlb >"/sys/fs/cgroup$TS_CGROUP_PARENT/cgroup.subtree_control" 2>/dev/null || true
	echo -hugetlb >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
}

# check_hugetlb VARIANT RSVD: a 4 MiB limit of 2 MB pages; RSVD is what
# hugetlb.2MB.rsvd.max must read.
check_hugetlb()
{
	local variant=$1 rc=0
	hugetlb_on
	ts_bundle_new "$variant" huge
	ts_config '.linux.resources.hugepageLimits = [{"pageSize": "2MB", "limit": 4194304}]'
	ts_start_reporting "$variant" || rc=$?
	if [ "$rc" = 0 ]; then
		CG=/sys/fs/cgroup$(ts_cgroup_of "$(ts_container_pid "${variant#toposhim-}")")
		[ "$(cat "$CG/hugetlb.2MB.max")" = 4194304 ] || rc=1
		[ "$(cat "$CG/hugetlb.2MB.rsvd.max")" = "$2" ] || rc=2
	fi
	ts_cleanup_containers
	hugetlb_off
	case $rc in
	0) ;;
	1) fail "hugetlb.2MB.max: $(cat "$CG/hugetlb.2MB.max")" ;;
	2) fail "hugetlb.2MB.rsvd.max: $(cat "$CG/hugetlb.2MB.rsvd.max"), want $2" ;;
	*) fail "the container did not start" ;;
	esac
}

@test "cgroup: crun alone leaves hugetlb reservations unlimited" {
	check_hugetlb crun max
}

@test "cgroup: through toposhim crun limits hugetlb reservations too" {
	check_hugetlb toposhim-crun 4194304
	[ "$(jq -r '.linux.resources.unified["hugetlb.2MB.rsvd.max"]' "$BUNDLE/config.json")" = 4194304 ]
}
