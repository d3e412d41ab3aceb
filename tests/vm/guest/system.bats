#!/usr/bin/env bats
# The guest itself: the CPU/NUMA layout qemu was asked for, SMT siblings, a
# pure cgroup v2 hierarchy, and the virtio disk local to its NUMA node.  If
# these fail, the container tests cannot mean anything.

load helpers

setup()
{
	ts_require_layout
}

@test "system: online PUs and NUMA nodes match the layout" {
	run cat /sys/devices/system/cpu/online
	assert_output "$TS_VM_CPU_LIST"
	local want_nodes=0 n var
	if [ "$TS_VM_NUMA_NODES" -gt 1 ]; then
		want_nodes="0-$((TS_VM_NUMA_NODES - 1))"
	fi
	run cat /sys/devices/system/node/online
	assert_output "$want_nodes"
	for ((n = 0; n < TS_VM_NUMA_NODES; n++)); do
		var=TS_VM_NODE${n}_CPUS
		run cat "/sys/devices/system/node/node$n/cpulist"
		assert_output "${!var}"
	done
}

@test "system: packages and SMT siblings match the layout" {
	local cpu first want
	for ((cpu = 0; cpu < TS_VM_CPUS; cpu++)); do
		first=$((cpu - cpu % TS_VM_THREADS))
		want=$first
		if [ "$TS_VM_THREADS" -gt 1 ]; then
			want="$first-$((first + TS_VM_THREADS - 1))"
		fi
		run cat "/sys/devices/system/cpu/cpu$cpu/topology/thread_siblings_list"
		assert_output "$want"
		run cat "/sys/devices/system/cpu/cpu$cpu/topology/physical_package_id"
		assert_output "$((cpu / (TS_VM_CPUS / TS_VM_SOCKETS)))"
	done
}

@test "system: cgroup v2 only, with cpuset cpu io memory pids delegated" {
	run awk '$2 == "/sys/fs/cgroup" { print $3 }' /proc/mounts
	assert_output cgroup2
	# No v1 hierarchy anywhere: fields 3 of /proc/mounts are fs types.
	run awk '$3 == "cgroup" { print $2 }' /proc/mounts
	assert_output ""
	run cat /sys/fs/cgroup/cgroup.subtree_control
	assert_output "cpuset cpu io memory pids"
}

@test "system: /dev/vda sits on the layout's disk NUMA node" {
	[ -b /dev/vda ] || fail "/dev/vda missing: virtio modules not loaded?"
	local majmin dev
	majmin=$(cat /sys/block/vda/dev)
	dev=$(readlink -f "/sys/dev/block/$majmin")
	# The harness puts the disk behind the expander bridge with bus 8.
	case $dev in
	/sys/devices/pci0000:08/*) ;;
	*) fail "vda ($majmin) is at '$dev', not behind the pxb bridge pci0000:08" ;;
	esac
	# Walk up from the block device to the PCI function that carries numa_node.
	while [ ! -e "$dev/numa_node" ] && [ "$dev" != /sys/devices ]; do
		dev=${dev%/*}
	done
	run cat "$dev/numa_node"
	assert_output "$TS_VM_DISK_NODE"
	run cat "$dev/local_cpulist"
	assert_output "$TS_VM_DISK_CPUS"
}
