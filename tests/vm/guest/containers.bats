#!/usr/bin/env bats
# Real containers on pure cgroup v2, started by runc and crun directly and
# through toposhim: an explicit cpuset/mems is applied (seen from inside the
# container and in its cgroup), and linux.resources.unified is accepted and
# lands in the container's cgroup files.

# shellcheck disable=SC2016 # $names in single quotes are jq variables
load helpers

setup()
{
	ts_require_layout
}

teardown()
{
	ts_cleanup_containers
}

# cpus "2-3" (two PUs of the first package in every layout with >= 4 PUs)
# and mems = the last NUMA node ("1" on the default layout, "0" on a
# single-node one): both set explicitly in config.json.
check_cpuset()
{
	local variant=$1 cpus=2-3 mems=$((TS_VM_NUMA_NODES - 1)) pid cgroup
	[ "$TS_VM_CPUS" -ge 4 ] || fail "layout $TS_VM_LAYOUT has fewer than 4 PUs"
	ts_bundle_new "$variant"
	ts_config '.linux.resources.cpu = {cpus: $c, mems: $m}' --arg c "$cpus" --arg m "$mems"
	ts_start_reporting "$variant"

	run cat "$BUNDLE/out"
	assert_output "$(printf 'Cpus_allowed_list:\t%s\nMems_allowed_list:\t%s\nready' "$cpus" "$mems")"

	pid=$(ts_container_pid "$variant")
	cgroup=$(ts_cgroup_of "$pid")
	[ "$cgroup" = "$TS_CGROUP_PARENT/$CONTAINER_ID" ] ||
		fail "container cgroup is '$cgroup', want '$TS_CGROUP_PARENT/$CONTAINER_ID'"
	run cat "/sys/fs/cgroup$cgroup/cpuset.cpus.effective"
	assert_output "$cpus"
	run cat "/sys/fs/cgroup$cgroup/cpuset.mems.effective"
	assert_output "$mems"
}

# memory.high is kept in whole pages: 50000000 reads back rounded down to
# a multiple of the page size (49999872 with 4 KiB pages).
check_unified()
{
	local variant=$1 page pid cgroup
	ts_bundle_new "$variant"
	ts_config '.linux.resources.unified = {"memory.high": "50000000", "pids.max": "20"}'
	ts_start_reporting "$variant"

	pid=$(ts_container_pid "$variant")
	cgroup=$(ts_cgroup_of "$pid")
	[ "$cgroup" = "$TS_CGROUP_PARENT/$CONTAINER_ID" ] ||
		fail "container cgroup is '$cgroup', want '$TS_CGROUP_PARENT/$CONTAINER_ID'"
	page=$(stat -f -c %S /)
	run cat "/sys/fs/cgroup$cgroup/memory.high"
	assert_output "$((50000000 / page * page))"
	run cat "/sys/fs/cgroup$cgroup/pids.max"
	assert_output 20
}

@test "cpuset: runc applies cpus 2-3 and the last NUMA node as mems" {
	check_cpuset runc
}

@test "cpuset: crun applies cpus 2-3 and the last NUMA node as mems" {
	check_cpuset crun
}

@test "cpuset: toposhim keeps explicit cpus and mems (runc)" {
	check_cpuset toposhim-runc
}

@test "cpuset: toposhim keeps explicit cpus and mems (crun)" {
	check_cpuset toposhim-crun
}

@test "unified: runc writes memory.high and pids.max" {
	check_unified runc
}

@test "unified: crun writes memory.high and pids.max" {
	check_unified crun
}

@test "unified: toposhim passes unified through (runc)" {
	check_unified toposhim-runc
}

@test "unified: toposhim passes unified through (crun)" {
	check_unified toposhim-crun
}
