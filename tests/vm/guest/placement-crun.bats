#!/usr/bin/env bats
# The placement checks (placement.bash) through toposhim with crun.

load placement

@test "placement: critical 2 PUs numa=single is one whole core in one node (crun)" {
	check_critical_whole_core toposhim-crun
}

@test "placement: a second critical container gets a different core (crun)" {
	check_second_critical toposhim-crun
}

@test "placement: a standard container gets every PU not held exclusively (crun)" {
	check_standard_gets_rest toposhim-crun
}

@test "placement: CDI /dev/vda pulls a critical container to the disk's node (crun)" {
	check_cdi_locality toposhim-crun
}

@test "placement: without a device the lowest free cores are used (crun)" {
	check_no_device_default toposhim-crun
}

@test "placement: numa=exclusive takes one whole NUMA node, refused with one node (crun)" {
	check_numa_exclusive toposhim-crun
}
