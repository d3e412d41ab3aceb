#!/usr/bin/env bats
# The live checks (live.bash) through toposhim with crun.

load live

@test "live: a critical container shrinks a running standard one, delete grows it (crun)" {
	check_critical_shrink_grow toposhim-crun
}

@test "live: numa=exclusive moves a running standard container off its node and back, refused with one node (crun)" {
	check_numa_exclusive_live toposhim-crun
}

@test "live: a standard container created meanwhile catches up once its runtime names its init (crun)" {
	check_hook_catch_up toposhim-crun
}
