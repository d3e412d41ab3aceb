# shellcheck shell=bash
# The setup and checks of placement-runc.bats and placement-crun.bats (one file
# per runtime, so that each layout runs one: see default.list).
# Placement and CDI device locality with real containers, written against
# the documented behaviour (issue 4 and the man page's annotations):
#   toposhim.io/class  critical = exclusive CPUs, NUMA aligned; standard = shared pool
#   toposhim.io/cpus   exclusive CPU count
#   toposhim.io/numa   single = all CPUs and memory in one NUMA node, or fail
#   cdi.k8s.io/<key>   CDI qualified device names; placement prefers their NUMA node
# Alone: tests/vm/run.sh [--layout NAME] placement-runc.bats placement-crun.bats
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
}

teardown()
{
	ts_cleanup_containers
}

# ts_set LIST: a cpu/node list as sorted, space-separated numbers.
ts_set()
{
	ts_list_expand "$1" | sort -n | tr '\n' ' '
}

# The NUMA node whose CPUs contain every PU of LIST; fails when they span
# more than one.
node_holding()
{
	local list=$1 n var pu
	for ((n = 0; n < TS_VM_NUMA_NODES; n++)); do
		var=TS_VM_NODE${n}_CPUS
		local -A in_node=()
		for pu in $(ts_list_expand "${!var}"); do
			in_node[$pu]=1
		done
		for pu in $(ts_list_expand "$list"); do
			[ -n "${in_node[$pu]:-}" ] || continue 2
		done
		echo "$n"
		return 0
	done
	fail "cpus '$list' span more than one NUMA node"
}

# Assert that LIST is made of whole cores: each PU's SMT siblings are in it.
assert_whole_cores()
{
	local list=$1 pu sib
	local -A have=()
	for pu in $(ts_list_expand "$list"); do
		have[$pu]=1
	done
	for pu in $(ts_list_expand "$list"); do
		for sib in $(ts_list_expand "$(cat "/sys/devices/system/cpu/cpu$pu/topology/thread_siblings_list")"); do
			[ -n "${have[$sib]:-}" ] || fail "cpus '$list' hold PU $pu but not its sibling $sib"
		done
	done
}

# Start a container through toposhim with the given annotations (JSON
# object) and check what it reports against its cgroup.  Sets CPUS, MEMS.
start_annotated()
{
	local variant=$1 name=$2 annotations=$3 extra=${4:-} pid cgroup
	ts_bundle_new "$variant" "$name"
	ts_config '.annotations = ((.annotations // {}) + $a)' --argjson a "$annotations"
	ts_start_reporting "$variant" "$extra"
	CPUS=$(ts_reported Cpus_allowed_list)
	MEMS=$(ts_reported Mems_allowed_list)
	pid=$(ts_container_pid "$variant")
	cgroup=$(ts_cgroup_of "$pid")
	run cat "/sys/fs/cgroup$cgroup/cpuset.cpus.effective"
	assert_output "$CPUS"
	run cat "/sys/fs/cgroup$cgroup/cpuset.mems.effective"
	assert_output "$MEMS"
}

critical_annotations()
{
	jq -n -c --arg cpus "$1" '{"toposhim.io/class": "critical", "toposhim.io/cpus": $cpus,
		"toposhim.io/numa": "single"}'
}

check_critical_whole_core()
{
	local variant=$1 node
	ts_runtime "$variant"
	start_annotated "$variant" a "$(critical_annotations 2)"
	[ "$(ts_set "$CPUS" | wc -w)" -eq 2 ] || fail "critical container got '$CPUS', want 2 PUs"
	[ "$TS_VM_THREADS" -ne 2 ] || assert_whole_cores "$CPUS"
	node=$(node_holding "$CPUS")
	[ "$MEMS" = "$node" ] || fail "mems '$MEMS' for cpus '$CPUS' on NUMA node $node"
	# Busiest domain first, ties by OS index: on an empty machine that is
	# the first core of NUMA node 0 in every layout.
	[ "$CPUS" = 0-1 ] || fail "got cpus '$CPUS', want '0-1' (first core, ties by OS index)"
}

check_second_critical()
{
	local variant=$1 first
	ts_runtime "$variant"
	start_annotated "$variant" a "$(critical_annotations 2)"
	first=$CPUS
	start_annotated "$variant" b "$(critical_annotations 2)"
	[ "$TS_VM_THREADS" -ne 2 ] || assert_whole_cores "$CPUS"
	local pu
	for pu in $(ts_list_expand "$CPUS"); do
		case " $(ts_set "$first")" in
		*" $pu "*) fail "second critical container got '$CPUS', overlapping the first's '$first'" ;;
		esac
	done
	# Busiest first: node 0 now has fewer free PUs, so its next core.
	[ "$CPUS" = 2-3 ] || fail "got cpus '$CPUS', want '2-3' (next core of the busiest node)"
	[ "$MEMS" = 0 ] || fail "got mems '$MEMS', want '0'"
}

check_standard_gets_rest()
{
	local variant=$1 exclusive want pu
	ts_runtime "$variant"
	start_annotated "$variant" a "$(critical_annotations 2)"
	exclusive=" $(ts_set "$CPUS")"
	want=
	for pu in $(ts_list_expand "$TS_VM_CPU_LIST"); do
		case $exclusive in
		*" $pu "*) ;;
		*) want="$want$pu " ;;
		esac
	done
	start_annotated "$variant" b '{"toposhim.io/class": "standard"}'
	[ "$(ts_set "$CPUS")" = "$want" ] ||
		fail "standard container got '$CPUS', want the shared pool '$want'"
}

# The disk's NUMA node holds TS_VM_DISK_CPUS.  Ask for 4 PUs: on the
# default layout that is all of node 1, so the answer is exactly 4-7.
check_cdi_locality()
{
	local variant=$1 annotations
	ts_runtime "$variant"
	annotations=$(critical_annotations 4 | jq -c --arg d "$TS_CDI_DEVICE" '. + {"cdi.k8s.io/disk": $d}')
	start_annotated "$variant" a "$annotations" '[ -b /dev/vda ] && echo vda: block'
	run ts_reported vda
	assert_output block
	[ "$(ts_set "$CPUS" | wc -w)" -eq 4 ] || fail "got cpus '$CPUS', want 4 PUs"
	local pu disk
	disk=" $(ts_set "$TS_VM_DISK_CPUS")"
	for pu in $(ts_list_expand "$CPUS"); do
		case $disk in
		*" $pu "*) ;;
		*) fail "cpus '$CPUS' are not all on the disk's NUMA node ($TS_VM_DISK_CPUS)" ;;
		esac
	done
	if [ "$(ts_set "$TS_VM_DISK_CPUS" | wc -w)" -eq 4 ]; then
		[ "$CPUS" = "$TS_VM_DISK_CPUS" ] || fail "got cpus '$CPUS', want '$TS_VM_DISK_CPUS'"
	fi
	[ "$MEMS" = "$TS_VM_DISK_NODE" ] || fail "got mems '$MEMS', want '$TS_VM_DISK_NODE'"
}

# Without a device, on an empty machine, the kubelet's rule applies
# (src/placement/placement.h: busiest domain first, ties by OS index): on
# the default layout 4 PUs are all of NUMA node 0, on the one-node layout
# its first two cores; 0-3 and mems 0 either way.
check_no_device_default()
{
	local variant=$1
	ts_runtime "$variant"
	start_annotated "$variant" a "$(critical_annotations 4)"
	[ "$CPUS" = 0-3 ] || fail "got cpus '$CPUS', want '0-3' (lowest free cores)"
	[ "$MEMS" = 0 ] || fail "got mems '$MEMS', want '0'"
}

# numa=exclusive takes a whole NUMA node out of the shared pool: the
# container gets exactly that node's PUs and mems, and a standard container
# started next gets every other PU.  On one node it would empty the shared
# pool, which toposhim refuses: that is what the one-node layout asserts.
check_numa_exclusive()
{
	local variant=$1 node var want pu
	if [ "$TS_VM_NUMA_NODES" -lt 2 ]; then
		ts_assert_numa_exclusive_refused "$variant" a
		return
	fi
	ts_runtime "$variant"
	start_annotated "$variant" a "$(jq -n -c --arg cpus "$((TS_VM_CPUS / TS_VM_NUMA_NODES))" \
		'{"toposhim.io/class": "critical", "toposhim.io/cpus": $cpus,
		  "toposhim.io/numa": "exclusive"}')"
	node=$(node_holding "$CPUS")
	var=TS_VM_NODE${node}_CPUS
	[ "$CPUS" = "${!var}" ] || fail "got cpus '$CPUS', want all of NUMA node $node ('${!var}')"
	[ "$MEMS" = "$node" ] || fail "got mems '$MEMS', want '$node'"
	want=
	for pu in $(ts_list_expand "$TS_VM_CPU_LIST"); do
		case " $(ts_set "$CPUS")" in
		*" $pu "*) ;;
		*) want="$want$pu " ;;
		esac
	done
	start_annotated "$variant" b '{"toposhim.io/class": "standard"}'
	[ "$(ts_set "$CPUS")" = "$want" ] ||
		fail "standard container got '$CPUS', want the PUs outside node $node: '$want'"
}
