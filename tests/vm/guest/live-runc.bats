#!/usr/bin/env bats
# The live checks (live.bash) through toposhim with runc.

load live

@test "live: a critical container shrinks a running standard one, delete grows it (runc)" {
	check_critical_shrink_grow toposhim-runc
}

@test "live: numa=exclusive moves a running standard container off its node and back, refused with one node (runc)" {
	check_numa_exclusive_live toposhim-runc
}

@test "live: a standard container created meanwhile catches up once its runtime names its init (runc)" {
	check_hook_catch_up toposhim-runc
}

@test "live: plain containers stay byte-identical and unrecorded, shrink for a critical one and grow back (runc)" {
	check_plain_shrink_grow toposhim-runc
}
