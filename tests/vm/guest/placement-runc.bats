#!/usr/bin/env bats
# The placement checks (placement.bash) through toposhim with runc.

load placement

@test "placement: critical 2 PUs numa=single is one whole core in one node (runc)" {
	check_critical_whole_core toposhim-runc
}

@test "placement: a second critical container gets a different core (runc)" {
	check_second_critical toposhim-runc
}

@test "placement: a standard container gets every PU not held exclusively (runc)" {
	check_standard_gets_rest toposhim-runc
}

@test "placement: CDI /dev/vda pulls a critical container to the disk's node (runc)" {
	check_cdi_locality toposhim-runc
}

@test "placement: without a device the lowest free cores are used (runc)" {
	check_no_device_default toposhim-runc
}

@test "placement: numa=exclusive takes one whole NUMA node, refused with one node (runc)" {
	check_numa_exclusive toposhim-runc
}
