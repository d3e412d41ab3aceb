# shellcheck shell=bash
# The setup and checks of live-runc.bats and live-crun.bats (one file
# per runtime, so that each layout runs one: see default.list).
# Live resizing of running shared-pool containers (issue 5 "NUMA-exclusive",
# issue 6 "the live shrink/grow scenario"), through toposhim with runc and
# crun.  When an exclusive or NUMA-exclusive allocation is added (create) or
# removed (the engine's delete through toposhim), toposhim writes the new shared pool
# into the cpuset.cpus/cpuset.mems of every running "standard" container's
# cgroup at once.  Each check reads the running container three ways: its
# cgroup's cpuset.{cpus,mems}.effective, its init's /proc/<pid>/status, and
# /proc/self/status of a new process started with `<runtime> exec`.
# Expectations come from the layout variables (see helpers.bash).

# shellcheck disable=SC2016 # $names in single quotes are jq variables
load helpers

setup_file()
{
	ts_cdi_disk_install
}

teardown_file()
{
	ts_cdi_disk_remove
}

setup()
{
	ts_require_layout
	declare -g -A IDS=() PIDS=()
}

teardown()
{
	ts_cleanup_containers
}

# live_start NAME VARIANT ANNOTATIONS: start a container through toposhim and
# remember its id and init pid under NAME.  Sets CPUS and MEMS to what it
# reported at start.
live_start()
{
	local name=$1 variant=$2 annotations=$3
	ts_bundle_new "$variant" "$name"
	ts_config '.annotations = ((.annotations // {}) + $a)' --argjson a "$annotations"
	ts_start_reporting "$variant"
	CPUS=$(ts_reported Cpus_allowed_list)
	MEMS=$(ts_reported Mems_allowed_list)
	IDS[$name]=$CONTAINER_ID
	PIDS[$name]=$(ts_container_pid "$variant")
}

# live_stop NAME VARIANT: delete the container through toposhim, as an engine
# does; that delete gives the CPUs back.
live_stop()
{
	local name=$1 variant=$2
	ts_runtime "$variant"
	run "${RT[@]}" delete -f "${IDS[$name]}"
	assert_success
}

# assert_live NAME VARIANT CPUS MEMS [noexec]: the running container NAME
# is on exactly CPUS and MEMS now.  "noexec" leaves out the runtime exec
# (seconds under emulation) where nothing has changed since the start.
assert_live()
{
	local name=$1 variant=$2 cpus=$3 mems=$4 noexec=${5:-} runtime cgroup want
	runtime=$(ts_runtime_path "$variant")
	cgroup=$(ts_cgroup_of "${PIDS[$name]}")
	[ -n "$cgroup" ] || fail "container '$name' (pid ${PIDS[$name]}) is not running"
	run cat "/sys/fs/cgroup$cgroup/cpuset.cpus.effective"
	assert_output "$cpus"
	run cat "/sys/fs/cgroup$cgroup/cpuset.mems.effective"
	assert_output "$mems"
	want=$(printf 'Cpus_allowed_list:\t%s\nMems_allowed_list:\t%s' "$cpus" "$mems")
	run grep -E '^(Cpus|Mems)_allowed_list:' "/proc/${PIDS[$name]}/status"
	assert_output "$want"
	[ "$noexec" != noexec ] || return 0
	run "$runtime" exec "${IDS[$name]}" grep -E '^(Cpus|Mems)_allowed_list:' /proc/self/status
	assert_success
	assert_output "$want"
}

# Every NUMA node as a list: "0-1" on the default layout, "0" on one node.
all_nodes()
{
	ts_nodes_of "$TS_VM_CPU_LIST"
}

# A standard container runs on the whole shared pool (every PU: nothing is
# reserved by default).  A critical one asking for 2 PUs with numa=single
# then takes the first core (0-1: busiest node first, ties by OS index, as
# placement.bash checks), and the standard one shrinks to the rest while it
# runs: 2-7 on both layouts, mems still every node holding those PUs.
# Deleting the critical one gives its core back and the standard one grows
# to every PU again.
check_critical_shrink_grow()
{
	local variant=$1 rest
	ts_runtime "$variant"
	live_start s "$variant" '{"toposhim.io/class": "standard"}'
	[ "$CPUS" = "$TS_VM_CPU_LIST" ] || fail "standard got cpus '$CPUS', want '$TS_VM_CPU_LIST'"
	[ "$MEMS" = "$(all_nodes)" ] || fail "standard got mems '$MEMS', want '$(all_nodes)'"
	assert_live s "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)" noexec

	live_start c "$variant" '{"toposhim.io/class": "critical", "toposhim.io/cpus": "2",
		"toposhim.io/numa": "single"}'
	[ "$CPUS" = 0-1 ] || fail "critical got cpus '$CPUS', want '0-1'"
	[ "$MEMS" = 0 ] || fail "critical got mems '$MEMS', want '0'"
	rest=$(ts_list_minus "$TS_VM_CPU_LIST" 0-1)
	assert_live s "$variant" "$rest" "$(ts_nodes_of "$rest")"
	assert_live c "$variant" 0-1 0 noexec

	live_stop c "$variant"
	assert_live s "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)"
}

# Two plain containers (no request) on pure cgroup v2 with nothing held:
# config.json byte-identical, no record, the journal of plain containers
# names each with every PU (the first create is the core's and writes the
# summary, the second the front's alone).  A critical container withdraws
# the summary, takes them into the store and shrinks them to the rest; its
# delete grows them back to every PU and makes the summary valid again.
check_plain_shrink_grow()
{
	local variant=$1 rest n
	ts_runtime "$variant"
	for n in p q; do
		ts_bundle_new "$variant" "$n"
		# the args ts_start_reporting writes, written first (jq writes the
		# same bytes again): the copy is what toposhim is given
		ts_config '.process.args = ["sh", "-c", $script]' --arg script \
			"grep -E '^(Cpus|Mems)_allowed_list:' /proc/self/status; echo ready; exec sleep 600"
		cp "$BUNDLE/config.json" "$BUNDLE/config.json.before"
		ts_start_reporting "$variant"
		cmp "$BUNDLE/config.json.before" "$BUNDLE/config.json" || fail "$n: config.json changed"
		[ ! -e "$BUNDLE/toposhim-placement.json" ] || fail "$n: a placement file"
		IDS[$n]=$CONTAINER_ID
		PIDS[$n]=$(ts_container_pid "$variant")
		run jq -r --arg id "$CONTAINER_ID" 'select(.id == $id) | .cpus' /run/toposhim/plain-containers
		assert_output "$TS_VM_CPU_LIST"
		run jq -r .valid /run/toposhim/plain.json
		assert_output 1
	done
	[ ! -e /run/toposhim/allocations.json ] ||
		[ "$(jq --arg p "${IDS[p]}" --arg q "${IDS[q]}" \
			'[.allocations[] | select(.container_id == $p or .container_id == $q)] | length' \
			/run/toposhim/allocations.json)" = 0 ] || fail "a plain container was recorded"
	assert_live p "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)" noexec

	live_start c "$variant" '{"toposhim.io/class": "critical", "toposhim.io/cpus": "2",
		"toposhim.io/numa": "single"}'
	[ "$CPUS" = 0-1 ] || fail "critical got cpus '$CPUS', want '0-1'"
	run jq -r .valid /run/toposhim/plain.json
	assert_output 0
	rest=$(ts_list_minus "$TS_VM_CPU_LIST" 0-1)
	assert_live p "$variant" "$rest" "$(ts_nodes_of "$rest")"
	assert_live q "$variant" "$rest" "$(ts_nodes_of "$rest")" noexec

	live_stop c "$variant"
	assert_live p "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)" noexec
	assert_live q "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)" noexec
	run jq -r .valid /run/toposhim/plain.json
	assert_output 1
}

# numa=exclusive with the CDI disk takes every PU and the memory of the
# disk's NUMA node (node 1 on the default layout: the device pulls it there;
# without a device the tie would go to node 0).  A standard container
# started before it shrinks to the other nodes (node 0, PUs 0-3 on the
# default layout) while it runs, and grows back to every PU and node when
# the exclusive one is deleted.  One NUMA node cannot be given away without
# emptying the shared pool: there toposhim refuses, and the running standard
# container keeps every PU.
check_numa_exclusive_live()
{
	local variant=$1 rest
	ts_runtime "$variant"
	live_start s "$variant" '{"toposhim.io/class": "standard"}'
	assert_live s "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)" noexec
	if [ "$TS_VM_NUMA_NODES" -lt 2 ]; then
		ts_assert_numa_exclusive_refused "$variant" x
		assert_live s "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)"
		return
	fi

	live_start x "$variant" "$(jq -n -c --arg d "$TS_CDI_DEVICE" '{"toposhim.io/class": "critical",
		"toposhim.io/numa": "exclusive", "cdi.k8s.io/disk": $d}')"
	[ "$CPUS" = "$TS_VM_DISK_CPUS" ] || fail "numa=exclusive got cpus '$CPUS', want '$TS_VM_DISK_CPUS'"
	[ "$MEMS" = "$TS_VM_DISK_NODE" ] || fail "numa=exclusive got mems '$MEMS', want '$TS_VM_DISK_NODE'"
	rest=$(ts_list_minus "$TS_VM_CPU_LIST" "$TS_VM_DISK_CPUS")
	assert_live s "$variant" "$rest" "$(ts_nodes_of "$rest")"

	live_stop x "$variant"
	assert_live s "$variant" "$TS_VM_CPU_LIST" "$(all_nodes)"
}




# A standard container whose runtime is slow to start has its allocation
# (every PU) recorded, but no init yet, when a critical container takes
# 0-1: that create's settle cannot resize a container that does not exist
# yet, so it waits (no hook records the init) until the runtime's state
# names it, then resizes it: the standard container starts on the rest.
check_hook_catch_up()
{
	local variant=$1 runtime slow sbundle sid bg rest i
	runtime=$(ts_runtime_path "$variant")
	# named as the runtime it wraps: without --root, toposhim tells the
	# runtime's state root (/run/runc or /run/crun) by the file's name
	mkdir "$BATS_TEST_TMPDIR/slow"
	slow=$BATS_TEST_TMPDIR/slow/${runtime##*/}
	printf '#!/bin/sh\ncase " $* " in *" create "*) sleep 3 ;; esac\nexec %s "$@"\n' \
		"$runtime" >"$slow"
	chmod 0755 "$slow"
	ts_bundle_new "$variant" s
	ts_config '.annotations = {"toposhim.io/class": "standard"}'
	ts_config '.process.args = ["sh", "-c", $script]' --arg script \
		"grep -E '^(Cpus|Mems)_allowed_list:' /proc/self/status; echo ready; exec sleep 600"
	sbundle=$BUNDLE
	sid=$CONTAINER_ID
	env TOPOSHIM_RUNTIME="$slow" /usr/bin/toposhim create --bundle "$sbundle" "$sid" \
		</dev/null >"$sbundle/out" 2>"$sbundle/err" 3>&- &
	bg=$!
	for ((i = 0; i < 200; i++)); do
		grep -q "\"$sid\"" /run/toposhim/allocations.json 2>/dev/null && break
		sleep 0.1
	done
	live_start c "$variant" '{"toposhim.io/class": "critical", "toposhim.io/cpus": "2",
		"toposhim.io/numa": "single"}'
	[ "$CPUS" = 0-1 ] || fail "critical got cpus '$CPUS', want '0-1'"
	wait "$bg" || { cat "$sbundle/err"; fail "the slow create failed"; }
	"$runtime" start "$sid"
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready$' "$sbundle/out" && break
		sleep 0.1
	done
	rest=$(ts_list_minus "$TS_VM_CPU_LIST" 0-1)
	run grep Cpus_allowed_list "$sbundle/out"
	assert_output "$(printf 'Cpus_allowed_list:\t%s' "$rest")"
}
