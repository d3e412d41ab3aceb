#!/usr/bin/env bats
# toposhim's own view of the guest: toposhimctl topology --json (hwloc
# discovery, src/placement/placement.h ts_placement_describe_topology) must
# match the layout qemu was given, I/O locality of the virtio disk included.

load helpers

setup()
{
	ts_require_layout
}

# The PCI function behind /dev/vda, e.g. 0000:09:03.0.
vda_pci_address()
{
	local dev
	dev=$(readlink -f "/sys/dev/block/$(cat /sys/block/vda/dev)")
	while [ ! -e "$dev/numa_node" ] && [ "$dev" != /sys/devices ]; do
		dev=${dev%/*}
	done
	echo "${dev##*/}"
}

@test "topology: toposhimctl topology --json shows the layout and vda's node" {
	[ -x /usr/bin/toposhimctl ] || skip "toposhimctl is not built on this branch"
	local topo=$BATS_TEST_TMPDIR/topology.json want n var
	/usr/bin/toposhimctl topology --json >"$topo"
	run jq -c '[.online, .pus, .cores, .smt_width, (.packages | length)]' "$topo"
	assert_output "[\"$TS_VM_CPU_LIST\",$TS_VM_CPUS,$((TS_VM_SOCKETS * TS_VM_CORES)),$TS_VM_THREADS,$TS_VM_SOCKETS]"
	want=
	for ((n = 0; n < TS_VM_NUMA_NODES; n++)); do
		var=TS_VM_NODE${n}_CPUS
		want="$want${want:+,}[$n,\"${!var}\",false]"
	done
	run jq -c '[.numa_nodes[] | [.os_index, .cpus, .memory_only]]' "$topo"
	assert_output "[$want]"
	run jq -c '[.devices[] | select(.name == "vda") | [.pci, .numa_nodes]]' "$topo"
	assert_output "[[\"$(vda_pci_address)\",\"$TS_VM_DISK_NODE\"]]"
}
