#!/usr/bin/env bats
# toposhimctl nrt: the node as a NodeResourceTopology object, from what
# creates left in a state dir.  The machine is the sysfs tree of
# tests/fixtures/sysfs/make-tree.sh (2 packages, NUMA nodes 0 and 1 with 4
# CPUs and 4 GiB each, memory-only node 2 with 16 GiB, a latency matrix;
# an InfiniBand card on node 1, an NVMe disk whose numa_node is -1); the
# allocations are made by `toposhim create` with a stand-in runtime that
# leaves <root>/<id> behind as runc does (so none is stale).

load helpers
bats_require_minimum_version 1.5.0

SCHEMA="$TS_SRCDIR/tests/fixtures/k8s/nrt-v1alpha2.schema.json"
CHECK="$TS_SRCDIR/tests/integration/k8s-check.py"

setup() {
	ts_setup_env
	command -v jq >/dev/null || skip "jq is not installed"
	W=$BATS_TEST_TMPDIR
	sh "$TS_SRCDIR/tests/fixtures/sysfs/make-tree.sh" "$W/tree"
	export TOPOSHIM_SYSFS_ROOT="$W/tree/sys" TOPOSHIM_PROC_ROOT="$W/tree/proc"
	mkdir -p "$W/cdi"
	cat >"$W/toposhim.json" <<CONF
{ "state_dir": "$W/state", "gc_grace_seconds": 3600,
  "cdi": { "spec_dirs": ["$W/cdi"], "require_root_owned": false, "index_path": null },
  "placement": { "reserved": { "cpus": "0" } }, $TS_TEST_POLICY }
CONF
	export TOPOSHIM_CONFIG="$W/toposhim.json"
	cat >"$W/runtime" <<RUNTIME
#!/bin/sh
# argv: --root ROOT create --bundle B ID
eval "id=\\\${\$#}"
mkdir -p "\$2/\$id"
exec "$FAKE_RUNTIME" "\$@"
RUNTIME
	chmod 0755 "$W/runtime"
}

# create ID CPUS [DEVICE]: a critical container of CPUS exclusive CPUs,
# with the CDI device DEVICE, through toposhim and the stand-in runtime.
create() {
	mkdir -p "$W/$1/rootfs"
	jq -n --arg cpus "$2" --arg dev "${3:-}" '{ociVersion: "1.0.2", root: {path: "rootfs"},
		process: {args: ["true"], cwd: "/"}, linux: {},
		annotations: ({"toposhim.io/class": "critical", "toposhim.io/cpus": $cpus}
			+ (if $dev == "" then {} else {"cdi.k8s.io/dev": $dev} end))}' \
		>"$W/$1/config.json"
	TOPOSHIM_RUNTIME="$W/runtime" TS_FAKE_RECORD="$W/$1.rec" \
		"$TOPOSHIM" --root "$W/root" create --bundle "$W/$1" "$1" </dev/null \
		>"$W/$1.out" 2>&1 || fail "create $1: $(cat "$W/$1.out")"
}

# The host's device nodes of the CDI spec: the InfiniBand verbs device and
# the NVMe disk of the tree (by number: the kernel's sysfs links).
device_spec() {
	mknod "$W/uverbs0" c 231 192
	mknod "$W/nvme0n1" b 259 0
	cat >"$W/cdi/devices.yaml" <<SPEC
cdiVersion: "0.6.0"
kind: example.com/ib
devices:
  - name: ib0
    containerEdits:
      deviceNodes: [{path: /dev/infiniband/uverbs0, hostPath: "$W/uverbs0"}]
  - name: nvme0
    containerEdits:
      deviceNodes: [{path: /dev/nvme0n1, hostPath: "$W/nvme0n1"}]
SPEC
}

@test "nrt: zones, costs, allocations and devices of the tree, exactly" {
	require_root # mknod of the device nodes
	device_spec
	create c1 2 example.com/ib=ib0
	create c2 1
	# c1 next to its device (node 1), c2 beside it: the busiest node first
	run jq -c '[.allocations[] | [.container_id, .cpus, .mems, .devices]]' "$W/state/allocations.json"
	assert_output '[["c1","4-5","1",["example.com/ib=ib0"]],["c2","6","1",[]]]'
	cp "$W/state/allocations.json" "$W/before.json"
	"$TOPOSHIMCTL" nrt --format yaml --name worker-1 >"$W/nrt.yaml" 2>"$W/nrt.err"
	diff -u "$TS_SRCDIR/tests/fixtures/nrt/sysfs-tree.yaml" "$W/nrt.yaml"
	# the NVMe disk has numa_node -1: no placement hint, so in no zone
	[ "$(cat "$W/nrt.err")" = "toposhimctl: nrt: warning: example.com/ib=nvme0: numa node unknown, not listed" ]
	# read only: the store is as the creates left it
	cmp "$W/before.json" "$W/state/allocations.json"
	# the JSON form is the same object
	"$TOPOSHIMCTL" nrt --format json --name worker-1 >"$W/nrt.json" 2>/dev/null
	python3 -c 'import json, sys, yaml; sys.exit(json.load(open(sys.argv[1])) != yaml.safe_load(open(sys.argv[2])))' \
		"$W/nrt.json" "$W/nrt.yaml"
}

@test "nrt: the object carries every field the CRD schema requires, and no other" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	create c1 3
	"$TOPOSHIMCTL" nrt --name worker-1 >"$W/nrt.json"
	"$TOPOSHIMCTL" nrt --format yaml --name worker-1 >"$W/nrt.yaml"
	run python3 "$CHECK" schema "$SCHEMA" "$W/nrt.json" "$W/nrt.yaml"
	assert_success
	assert_output ""
	# the checker does refuse what the API server would
	jq 'del(.zones[1].type) | .zones[0].resources[0].available = "x" | .zones[0].spare = 1' \
		"$W/nrt.json" >"$W/bad.json"
	run python3 "$CHECK" schema "$SCHEMA" "$W/bad.json"
	assert_failure
	assert_output - <<OUT
$W/bad.json: \$.zones[0].resources[0].available: 'x' is not a quantity
$W/bad.json: \$.zones[0].spare: unknown field (the API server prunes it)
$W/bad.json: \$.zones[1]: missing required field 'type'
OUT
}

@test "nrt: cpu available counts exclusive CPUs out, the shared pool in" {
	create c1 3
	run --separate-stderr "$TOPOSHIMCTL" nrt --name worker-1
	assert_success
	# node 0: PUs 0-3, 0 reserved, c1 took 1-3 (one node when it can: the
	# busiest first); node 1 untouched; node 2 has no PU
	run jq -c '[.zones[] | [.name, (.resources[] | select(.name == "cpu") |
		[.capacity, .allocatable, .available])]]' <<<"$output"
	assert_output '[["node-0",["4","3","0"]],["node-1",["4","4","4"]],["node-2",["0","0","0"]]]'
}

@test "nrt: without a state dir there are no allocations, and none is created" {
	run --separate-stderr "$TOPOSHIMCTL" nrt --name worker-1
	assert_success
	[ ! -e "$W/state" ]
	run jq -c '[.zones[] | .resources[0].available]' <<<"$output"
	assert_output '["3","4","0"]'
}

@test "nrt: the node name is --name, else \$NODE_NAME, else the host name in lower case" {
	run --separate-stderr "$TOPOSHIMCTL" nrt --name worker-1
	[ "$(jq -r .metadata.name <<<"$output")" = worker-1 ]
	run --separate-stderr env NODE_NAME=worker-2 "$TOPOSHIMCTL" nrt
	[ "$(jq -r .metadata.name <<<"$output")" = worker-2 ]
	run --separate-stderr env -u NODE_NAME "$TOPOSHIMCTL" nrt
	[ "$(jq -r .metadata.name <<<"$output")" = "$(hostname | tr 'A-Z' 'a-z')" ]
}

@test "nrt: usage errors exit 2 and say why" {
	run "$TOPOSHIMCTL" nrt --format xml
	[ "$status" -eq 2 ]
	assert_output - <<'OUT'
toposhimctl: nrt: --format: unknown format 'xml'
usage: toposhimctl nrt [--format json|yaml] [--name NODE]
OUT
	run "$TOPOSHIMCTL" nrt extra
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: nrt: unexpected argument 'extra'"
	run "$TOPOSHIMCTL" nrt --name ''
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: nrt: --name: empty node name"
	# getopt's own words, in the tool's form (helper-16: "nrt: option
	# '--format' requires an argument", without "toposhimctl:")
	run "$TOPOSHIMCTL" nrt --format
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: nrt: option '--format' requires an argument"
	run "$TOPOSHIMCTL" nrt --bogus
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: nrt: unrecognized option '--bogus'"
	run "$TOPOSHIMCTL" topology -x
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: topology: unrecognized option '-x'"
	run "$TOPOSHIMCTL" plan -b
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: plan: option '-b' requires an argument"
	# and a line before the usage where it stood alone
	run "$TOPOSHIMCTL" plan
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: plan: missing --bundle"
	run "$TOPOSHIMCTL" topology extra
	[ "$status" -eq 2 ]
	assert_line --index 0 "toposhimctl: topology: unexpected argument 'extra'"
	# --state-dir as TOPOSHIM_STATE_DIR (helper-22: any value was taken)
	run "$TOPOSHIMCTL" topology --state-dir rel
	[ "$status" -eq 2 ]
	assert_output "toposhimctl: topology: --state-dir: not absolute 'rel'"
	run "$TOPOSHIMCTL" topology --state-dir "$BATS_TEST_TMPDIR/none"
	[ "$status" -eq 1 ]
	assert_output "toposhimctl: topology: --state-dir '$BATS_TEST_TMPDIR/none': No such file or directory"
	touch "$BATS_TEST_TMPDIR/file"
	run "$TOPOSHIMCTL" topology --state-dir "$BATS_TEST_TMPDIR/file"
	[ "$status" -eq 1 ]
	assert_output "toposhimctl: topology: --state-dir '$BATS_TEST_TMPDIR/file': Not a directory"
}

@test "nrt: a node name Kubernetes would refuse is refused, naming where it came from" {
	local rule="lower case letters, digits, '-' and '.', at most 253, a letter or digit at each end"
	run "$TOPOSHIMCTL" nrt --name UPPER_case
	[ "$status" -eq 2 ]
	assert_output "toposhimctl: nrt: node name 'UPPER_case' (--name) is not a Kubernetes object name: $rule"
	# one line: a control character is escaped (helper-17)
	run "$TOPOSHIMCTL" nrt --name "$(printf 'a\nb')"
	[ "$status" -eq 2 ]
	assert_output "toposhimctl: nrt: node name 'a\\nb' (--name) is not a Kubernetes object name: $rule"
	run env NODE_NAME=node-.1 "$TOPOSHIMCTL" nrt
	[ "$status" -eq 1 ]
	assert_output "toposhimctl: nrt: node name 'node-.1' (NODE_NAME) is not a Kubernetes object name: $rule"
	run --separate-stderr "$TOPOSHIMCTL" nrt --name node-1.example.com
	[ "$status" -eq 0 ]
	[ "$(jq -r .metadata.name <<<"$output")" = node-1.example.com ]
}

@test "nrt: a broken config fails with its message" {
	echo '{"placment": {}}' >"$W/toposhim.json"
	run "$TOPOSHIMCTL" nrt --name worker-1
	[ "$status" -eq 1 ]
	assert_output "toposhimctl: nrt: $W/toposhim.json: '/placment': unknown key"
}

# What podman 4.3's `--device example.com/ib=ib0` (podman resolving CDI
# itself, from /etc/cdi and /var/run/cdi) leaves in config.json, as seen
# on this host: the node in linux.devices (container path, type, numbers;
# no host path), its cgroup rule, the spec's env; no annotation naming the
# device.  containerd's CRI with enable_cdi (1.7+, 2.x) writes the same
# edits; Debian 12's containerd 1.6 has no CDI support.
@test "nrt: a device the engine injected (podman's CDI) steers placement as a requested one does" {
	mkdir -p "$W/c1/rootfs"
	jq -n '{ociVersion: "1.0.2", root: {path: "rootfs"},
		process: {args: ["true"], cwd: "/", env: ["PATH=/bin", "IB=1"]},
		linux: {devices: [{path: "/dev/infiniband/uverbs0", type: "c", major: 231, minor: 192}],
			resources: {devices: [{allow: true, type: "c", major: 231, minor: 192, access: "rwm"}]}},
		annotations: {"toposhim.io/class": "critical", "toposhim.io/cpus": "2"}}' >"$W/c1/config.json"
	TOPOSHIM_RUNTIME="$W/runtime" TS_FAKE_RECORD="$W/c1.rec" \
		"$TOPOSHIM" --root "$W/root" create --bundle "$W/c1" c1 </dev/null \
		>"$W/c1.out" 2>&1 || fail "create c1: $(cat "$W/c1.out")"
	# node 1, the InfiniBand card's, as with cdi.k8s.io/dev=example.com/ib=ib0
	# (without the device: node 0, cpus 2-3)
	run jq -c '[.allocations[] | [.container_id, .cpus, .mems, .devices]]' "$W/state/allocations.json"
	assert_output '[["c1","4-5","1",[]]]'
	# (resources_written, the class's cgroup values, depends on the host's
	# cgroup mode: placement.bats checks it)
	run jq -c 'del(.resources_written)' "$W/c1/toposhim-placement.json"
	assert_output '{"version":1,"id":"c1","class":"critical","cpus":"4-5","mems":"1","cpus_written":true,"pinned":false,"numa_exclusive":false,"state_dir":"'"$W/state"'"}'
}

# A privileged container gets every host device from its engine: those
# say nothing of what it uses, so they do not steer it.
@test "nrt: the host devices of a privileged container (CAP_SYS_ADMIN) do not steer placement" {
	mkdir -p "$W/c1/rootfs"
	jq -n '{ociVersion: "1.0.2", root: {path: "rootfs"},
		process: {args: ["true"], cwd: "/", env: ["PATH=/bin"],
			capabilities: {bounding: ["CAP_CHOWN", "CAP_SYS_ADMIN"]}},
		linux: {devices: [{path: "/dev/infiniband/uverbs0", type: "c", major: 231, minor: 192}]},
		annotations: {"toposhim.io/class": "critical", "toposhim.io/cpus": "2"}}' >"$W/c1/config.json"
	TOPOSHIM_RUNTIME="$W/runtime" TS_FAKE_RECORD="$W/c1.rec" \
		"$TOPOSHIM" --root "$W/root" create --bundle "$W/c1" c1 </dev/null \
		>"$W/c1.out" 2>&1 || fail "create c1: $(cat "$W/c1.out")"
	run jq -c '[.allocations[] | [.container_id, .cpus, .mems]]' "$W/state/allocations.json"
	assert_output '[["c1","2-3","0"]]'
}
