#!/usr/bin/env bats
# contrib/containerd: the engine configurations, run by a containerd of
# this file's own (containerd 1.6 of Debian 12) started with exactly the
# contrib file: the only line the test changes is BinaryName, which names
# toposhim through a wrapper carrying this test's toposhim config (what
# /etc/toposhim/config.json is on a node); root, state and sockets are
# added as top-level keys and tables of their own.  The version 3 files
# (containerd 2.x, not in Debian 12) are checked against the version 2 ones.

load containers
bats_load_library bats-support
bats_load_library bats-assert

CONTRIB="${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}/contrib/containerd"
CRI_CLIENT="${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}/tests/cri/cri.py"

# The containerd config of a test: DIR's root, state and sockets around
# the contrib file FILE, whose BinaryName becomes DIR/toposhim-wrapper
# (DIR/snippet.toml).  Written to DIR/config.toml.
test_config() {
	local d=$1 file=$2
	sed "s|^\( *BinaryName = \)\"/usr/bin/toposhim\"|\1\"$d/toposhim-wrapper\"|" "$file" \
		>"$d/snippet.toml"
	{
		printf 'root = "%s/root"\nstate = "%s/state"\n' "$d" "$d"
		cat "$d/snippet.toml"
		printf '\n[grpc]\n  address = "%s/containerd.sock"\n' "$d"
		printf '[ttrpc]\n  address = "%s/containerd.sock.ttrpc"\n' "$d"
		printf '[plugins."io.containerd.internal.v1.opt"]\n  path = "%s/opt"\n' "$d"
	} >"$d/config.toml"
}

# changed_lines A B: the lines of A and B that differ, "- line" / "+ line".
changed_lines() {
	diff --unchanged-line-format= --old-line-format='- %L' --new-line-format='+ %L' "$1" "$2"
}

# toposhim for the engine: this test's config, and a record of each call.
write_wrapper() {
	cat >"$1/toposhim-wrapper" <<WRAP
#!/bin/sh
echo "\$*" >>"$1/calls"
export TOPOSHIM_CONFIG="$1/toposhim.json"
exec "$TOPOSHIM" "\$@"
WRAP
	chmod 0755 "$1/toposhim-wrapper"
}

setup_file() {
	CTRD=$(mktemp -d /tmp/ts-engine-ctrd.XXXXXX)
	export CTRD
	if [ "$(id -u)" -ne 0 ] || ! command -v containerd >/dev/null; then
		echo "skip needs root and containerd (uid $(id -u))" >"$CTRD/info"
		return 0
	fi
	chmod 0755 "$CTRD"
	write_wrapper "$CTRD"
	test_config "$CTRD" "$CONTRIB/config-v2.toml"
	write_containerd_stop "$CTRD"
	trap 'sh "$CTRD/stop"; exit 143' TERM
	start_daemon "$CTRD/containerd.log" env -i PATH="$TS_DAEMON_PATH" \
		sh -c 'echo $$ >"$1/pid"; exec containerd --config "$1/config.toml"' sh "$CTRD"
	start_daemon /dev/null env -i PATH="$TS_DAEMON_PATH" sh -c \
		'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
		[ ! -d "$2" ] || sh "$2/stop"' sh "$$" "$CTRD"
	for _ in $(seq 100); do
		ctr --address "$CTRD/containerd.sock" version >/dev/null 2>&1 && {
			echo "ok" >"$CTRD/info"
			return 0
		}
		sleep 0.1
	done
	echo "skip containerd did not start: $(tail -n 3 "$CTRD/containerd.log" | tr '\n' ' ')" >"$CTRD/info"
}

teardown_file() {
	[ -f "$CTRD/stop" ] && sh "$CTRD/stop"
	rm -rf "$CTRD"
}

setup() {
	local info
	info=$(cat "$CTRD/info")
	[ "${info%% *}" != skip ] || skip "${info#skip }"
	export CONTAINERD_ADDRESS="$CTRD/containerd.sock"
	containers_setup
	write_demo_spec
	write_config
	cp "$WORK/toposhim.json" "$CTRD/toposhim.json"
	: >"$CTRD/calls"
}

teardown() {
	ctr tasks kill -s SIGKILL "$ID" >/dev/null 2>&1 || true
	ctr containers delete "$ID" >/dev/null 2>&1 || true
	containers_teardown
}

@test "containerd 1.6 runs with config-v2.toml: the toposhim handler as written" {
	# the file as containerd started with it: only BinaryName differs
	run changed_lines "$CONTRIB/config-v2.toml" "$CTRD/snippet.toml"
	assert_output - <<OUT
-       BinaryName = "/usr/bin/toposhim"
+       BinaryName = "$CTRD/toposhim-wrapper"
OUT
	run ctr plugins ls
	assert_line --regexp '^io\.containerd\.grpc\.v1 +cri +linux/amd64 +ok'
	run containerd --config "$CTRD/config.toml" config dump
	assert_success
	run sed -n '/^ *\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim\]$/,/^ *\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim.options\]$/p' <<<"$output"
	assert_line --regexp '^ +runtime_type = "io.containerd.runc.v2"$'
	assert_line --regexp '^ +pod_annotations = \["cdi.k8s.io/\*", "toposhim.io/\*"\]$'
	assert_line --regexp '^ +container_annotations = \["cdi.k8s.io/\*", "toposhim.io/\*"\]$'
	run containerd --config "$CTRD/config.toml" config dump
	assert_line --regexp "^ +BinaryName = \"$CTRD/toposhim-wrapper\"$"
	assert_line --regexp '^ +default_runtime_name = "runc"$'
}

@test "containerd 1.6: config.toml importing conf.d/toposhim-v2.toml has both handlers" {
	local d=$WORK/dropin
	mkdir -p "$d/conf.d"
	printf 'version = 2\nimports = ["%s/conf.d/*.toml"]\n' "$d" >"$d/config.toml"
	sed "s|\"/usr/bin/toposhim\"|\"$CTRD/toposhim-wrapper\"|" "$CONTRIB/conf.d/toposhim-v2.toml" \
		>"$d/conf.d/toposhim.toml"
	run containerd --config "$d/config.toml" config dump
	assert_success
	assert_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc\]$'
	assert_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim\]$'
	assert_line --regexp '^ +pod_annotations = \["cdi.k8s.io/\*", "toposhim.io/\*"\]$'
	assert_line --regexp "^ +BinaryName = \"$CTRD/toposhim-wrapper\"$"
	# why the drop-in carries the whole CRI section on 1.6: one with the
	# toposhim handler alone replaces the main config's section, runc and
	# sandbox_image with it (containerd 2.x merges instead)
	printf 'version = 2\nimports = ["%s/conf.d/*.toml"]\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "local/pause:1"\n' "$d" >"$d/config.toml"
	printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim]\n  runtime_type = "io.containerd.runc.v2"\n' >"$d/conf.d/toposhim.toml"
	run containerd --config "$d/config.toml" config dump
	assert_success
	refute_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc\]$'
	refute_line --regexp '^ +sandbox_image = "local/pause:1"$'
	assert_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim\]$'
}

@test "ctr run: the CRI handler is not ctr's: plain runc runs, toposhim is never called" {
	make_rootfs "$WORK/rootfs"
	run ctr run --rm --rootfs --annotation cdi.k8s.io/test=toposhim.test/dev=zero \
		--env PATH=/bin "$WORK/rootfs" "$ID" /bin/sh -c 'echo "XZERO=$XZERO"'
	assert_success
	assert_output "XZERO="
	[ ! -s "$CTRD/calls" ]
}

@test "ctr run --runc-binary with the handler's BinaryName: toposhim injects the device" {
	local bin
	bin=$(sed -n 's/^ *BinaryName = "\(.*\)"$/\1/p' "$CTRD/config.toml")
	[ "$bin" = "$CTRD/toposhim-wrapper" ]
	make_rootfs "$WORK/rootfs"
	DEVCHECK='stat -c "%F %t:%T" /dev/xzero; echo "XZERO=$XZERO"; cat /etc/mounted.txt'
	run ctr run --rm --rootfs --runc-binary "$bin" \
		--annotation cdi.k8s.io/test=toposhim.test/dev=zero --env PATH=/bin \
		"$WORK/rootfs" "$ID" /bin/sh -c "$DEVCHECK"
	assert_success
	assert_output $'character special file 1:5\nXZERO=present\ntoposhim test mount'
	run grep -c " create --bundle .* $ID\$" "$CTRD/calls"
	assert_output 1
}

@test "ctr run: an unknown device fails with toposhim's message" {
	make_rootfs "$WORK/rootfs"
	run ctr run --rm --rootfs --runc-binary "$CTRD/toposhim-wrapper" \
		--annotation cdi.k8s.io/test=toposhim.test/dev=nope --env PATH=/bin \
		"$WORK/rootfs" "$ID" /bin/true
	assert_failure
	assert_output "ctr: failed to create shim task: OCI runtime create failed: unresolvable CDI devices toposhim.test/dev=nope: unknown"
}

@test "config-v3.toml and conf.d/toposhim-v3.toml (containerd 2.x) say what the v2 files say" {
	command -v python3 >/dev/null || skip "python3 is not installed"
	run python3 - "$CONTRIB" <<'PY'
import sys, tomllib
d = sys.argv[1]
load = lambda f: tomllib.load(open(f"{d}/{f}", "rb"))
v2, v2d, v3, v3d = (load(f) for f in ("config-v2.toml", "conf.d/toposhim-v2.toml",
                                      "config-v3.toml", "conf.d/toposhim-v3.toml"))
cri2 = v2["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]
cri3 = v3["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]
assert v2["version"] == 2 and v2d["version"] == 2 and v3["version"] == 3 and v3d["version"] == 3
assert v2d == v2, "the v2 drop-in carries the whole CRI section of config-v2.toml"
assert cri3 == cri2, (cri3, cri2)
h3 = v3d["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]
assert list(v3d["plugins"]) == ["io.containerd.cri.v1.runtime"] and list(h3) == ["toposhim"]
assert h3["toposhim"] == cri2["runtimes"]["toposhim"]
print(cri2["runtimes"]["toposhim"])
PY
	assert_success
	assert_output "{'runtime_type': 'io.containerd.runc.v2', 'pod_annotations': ['cdi.k8s.io/*', 'toposhim.io/*'], 'container_annotations': ['cdi.k8s.io/*', 'toposhim.io/*'], 'options': {'BinaryName': '/usr/bin/toposhim'}}"
}

@test "CRI: a pod through the toposhim handler of config-v2.toml gets its device and CPUs" {
	[ -x "$CRI_CLIENT" ] || skip "the CRI test client tests/cri/cri.py (issue 11) is not in this tree yet"
	fail "tests/cri/cri.py is there: write this test against it"
}
