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
bats_require_minimum_version 1.5.0

CONTRIB="${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}/contrib/containerd"
CRI_CLIENT="${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}/tests/cri/cri.py"
CRI_IMAGE=docker.io/toposhim-test/pause:1

# oci_image ROOTFS TAR NAME: an OCI image archive of ROOTFS (one layer,
# entrypoint sleep) named NAME, for `ctr -n k8s.io images import`.
oci_image() {
	python3 - "$@" <<'PY'
import hashlib, io, json, sys, tarfile
root, out, name = sys.argv[1:4]
def put(tf, path, data):
    ti = tarfile.TarInfo(path)
    ti.size = len(data)
    tf.addfile(ti, io.BytesIO(data))
def blob(tf, data, media):
    digest = hashlib.sha256(data).hexdigest()
    put(tf, f"blobs/sha256/{digest}", data)
    return {"mediaType": media, "digest": f"sha256:{digest}", "size": len(data)}
layer = io.BytesIO()
with tarfile.open(fileobj=layer, mode="w") as lt:
    lt.add(root, arcname=".")
layer = layer.getvalue()
config = json.dumps({"architecture": "amd64", "os": "linux",
                     "config": {"Entrypoint": ["/bin/sleep", "1000000"], "Env": ["PATH=/bin"]},
                     "rootfs": {"type": "layers",
                                "diff_ids": ["sha256:" + hashlib.sha256(layer).hexdigest()]}}).encode()
with tarfile.open(out, "w") as tf:
    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": blob(tf, config, "application/vnd.oci.image.config.v1+json"),
                "layers": [blob(tf, layer, "application/vnd.oci.image.layer.v1.tar")]}
    m = blob(tf, json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json")
    m["annotations"] = {"io.containerd.image.name": name,
                        "org.opencontainers.image.ref.name": name.rsplit(":", 1)[1]}
    put(tf, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
    put(tf, "index.json", json.dumps({"schemaVersion": 2, "manifests": [m]}).encode())
PY
}

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
		# what the CRI pod test needs on this machine (ENVIRONMENT.md): the VM
		# refuses oom_score_adj writes; no registry, so a local sandbox image
		printf '\n[plugins."io.containerd.grpc.v1.cri"]\n  restrict_oom_score_adj = true\n'
		printf '  sandbox_image = "%s"\n' "$CRI_IMAGE"
		printf '[grpc]\n  address = "%s/containerd.sock"\n' "$d"
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
	# never a daemon on the host's sockets: it would take over
	# /run/containerd/containerd.sock from the system's containerd
	if ! grep -qxF "  address = \"$CTRD/containerd.sock\"" "$CTRD/config.toml" ||
		! grep -qxF "  address = \"$CTRD/containerd.sock.ttrpc\"" "$CTRD/config.toml"; then
		echo "broken the test's containerd config has no private socket" >"$CTRD/info"
		return 0
	fi
	write_containerd_stop "$CTRD"
	trap 'sh "$CTRD/stop"; exit 143' TERM
	start_daemon "$CTRD/containerd.log" env -i PATH="$TS_DAEMON_PATH" \
		sh -c 'echo $$ >"$1/pid"; exec containerd --config "$1/config.toml"' sh "$CTRD"
	start_daemon /dev/null env -i PATH="$TS_DAEMON_PATH" sh -c \
		'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
		[ ! -d "$2" ] || sh "$2/stop"' sh "$$" "$CTRD"
	for _ in $(seq 100); do
		# (ctr waits 10 s for a socket that is not there)
		[ -S "$CTRD/containerd.sock" ] && ctr --address "$CTRD/containerd.sock" version >/dev/null 2>&1 && {
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
	[ "${info%% *}" != broken ] || fail "${info#broken }"
	export CONTAINERD_ADDRESS="$CTRD/containerd.sock"
	containers_setup
	write_demo_spec
	write_config
	cp "$WORK/toposhim.json" "$CTRD/toposhim.json"
	: >"$CTRD/calls"
}

teardown() {
	local c
	ctr tasks kill -s SIGKILL "$ID" >/dev/null 2>&1 || true
	ctr containers delete "$ID" >/dev/null 2>&1 || true
	# the CRI cases' pods, and a test's narrowed cgroup parent
	for c in $(cri pods-of "$ID" 2>/dev/null); do
		cri stopp "$c" >/dev/null 2>&1 || true
		cri rmp "$c" >/dev/null 2>&1 || true
	done
	if [ -n "${PARENT:-}" ]; then
		for c in /sys/fs/cgroup/*/"$PARENT"; do
			[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
		done
	fi
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
	# the bundle is containerd's (its state dir); the line names the
	# annotation and where toposhim looked
	[[ "$output" == "ctr: failed to create shim task: OCI runtime create failed: toposhim: /"*"/default/$ID/config.json: '/annotations/cdi.k8s.io~1test': unresolvable CDI devices toposhim.test/dev=nope (no spec file in $WORK/cdi defines it): unknown" ]] ||
		fail "output: $output"
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

# The CRI pod tests: tests/cri/cri.py, a CRI v1 client of the project's
# own (tests/cri/cri.proto, compiled at the first run with Debian's
# python3-grpc-tools), drives this file's containerd as kubelet does:
# RunPodSandbox with kubelet's labels and annotations, CreateContainer,
# StartContainer, ExecSync, StopContainer, RemoveContainer, StopPodSandbox,
# RemovePodSandbox.  Debian's python3 (its grpc modules), whatever python3
# comes first in PATH.
CRI_PYTHON=${CRI_PYTHON:-/usr/bin/python3}
cri() {
	CRI_PY_CACHE="$CTRD/cri-py" "$CRI_PYTHON" "$CRI_CLIENT" --endpoint "unix://$CTRD/containerd.sock" "$@"
}

# cri_image: the sandbox (and app) image, imported into k8s.io once; and
# CPU 0 reserved (as kubelet's --reserved-cpus would be): on this 2-CPU
# host CPU 1 is the one a critical container can have.
cri_image() {
	[ -f "$CRI_CLIENT" ] || fail "the CRI test client $CRI_CLIENT is missing"
	"$CRI_PYTHON" -c 'import grpc, grpc_tools' 2>/dev/null ||
		skip "$CRI_PYTHON lacks grpc/grpc_tools (python3-grpcio, python3-grpc-tools)"
	[ "$(nproc --all)" -eq 2 ] || skip "the CRI cases are written for a 2-CPU host ($(nproc --all) CPUs)"
	write_config '"placement": {"reserved": {"cpus": "0"}}'
	cp "$WORK/toposhim.json" "$CTRD/toposhim.json"
	ctr -n k8s.io images ls -q | grep -qxF "$CRI_IMAGE" && return 0
	make_rootfs "$WORK/image"
	oci_image "$WORK/image" "$WORK/image.tar" "$CRI_IMAGE"
	ctr -n k8s.io images import "$WORK/image.tar" >/dev/null
}

# pod_json NAME ANNOTATIONS_JSON [CGROUP_PARENT [NAMESPACE]]: a
# PodSandboxConfig as kubelet sends it: metadata, kubelet's labels (pod
# name, namespace, uid) and the pod's annotations; host network (no CNI
# here), so the hostname is empty.  NAMESPACE: "default".
pod_json() {
	jq -n --arg name "$1" --arg uid "$ID-$1" --argjson ann "$2" --arg cg "${3:-}" \
		--arg ns "${4:-default}" '{
		metadata: {name: $name, namespace: $ns, uid: $uid, attempt: 0},
		labels: {"io.kubernetes.pod.name": $name, "io.kubernetes.pod.namespace": $ns,
			"io.kubernetes.pod.uid": $uid},
		annotations: ($ann + {"kubernetes.io/config.source": "api"}),
		log_directory: "/tmp",
		linux: {cgroup_parent: $cg, security_context: {namespace_options: {network: 2, pid: 1, ipc: 0}}}}'
}

# ctr_json NAME POD [QUOTA]: a ContainerConfig (kubelet's labels) that shows
# its cpuset and /dev/xzero, then sleeps; QUOTA (of period 100000, shares
# QUOTA*1024/100000) makes it Guaranteed.
ctr_json() {
	local q=${3:-0}
	jq -n --arg image "$CRI_IMAGE" --arg name "$1" --arg pod "$2" --argjson q "$q" '{
		metadata: {name: $name, attempt: 0}, image: {image: $image},
		command: ["/bin/sleep", "1000"],
		labels: {"io.kubernetes.container.name": $name, "io.kubernetes.pod.name": $pod,
			"io.kubernetes.pod.namespace": "default"},
		log_path: ($name + ".log"),
		linux: {resources: (if $q > 0 then {cpu_period: 100000, cpu_quota: $q,
			cpu_shares: ($q * 1024 / 100000)} else {cpu_shares: 2} end),
			security_context: {namespace_options: {network: 2, pid: 1, ipc: 0}}}}'
}

# inside CTR: the container's cpuset and device, and XZERO of its init
# (an exec'd process gets the engine's env, not the one CDI edited)
inside() {
	cri exec "$1" sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2
		stat -c "%F %t:%T" /dev/xzero 2>&1
		tr "\0" "\n" </proc/1/environ | grep "^XZERO=" || echo "XZERO unset"'
}

# classes: the classes of the live allocations, sorted
classes() {
	jq -r '[.allocations[] | .class] | sort | join(",")' "$WORK/state/allocations.json"
}

@test "CRI: a pod-level critical class and device go to the app container, never the sandbox" {
	cri_image
	# the pod asks for the device and the critical class (a pod annotation
	# reaches every container, the sandbox too); a Guaranteed app of 1 CPU
	pod_json web '{"cdi.k8s.io/test": "toposhim.test/dev=zero", "toposhim.io/class": "critical"}' >"$WORK/pod.json"
	ctr_json app web 100000 >"$WORK/app.json"
	local pod app sandbox_cfg
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	# the sandbox ran through toposhim, in the shared pool, without the device
	run grep -c " create --bundle " "$CTRD/calls"
	assert_output 1
	sandbox_cfg=$(ls /run/containerd/io.containerd.runtime.v2.task/k8s.io/"$pod"/config.json 2>/dev/null ||
		ls "$CTRD"/state/io.containerd.runtime.v2.task/k8s.io/"$pod"/config.json)
	# a plain sandbox: its config.json is left as containerd wrote it (no
	# cpus), it has no placement file and no record, and the journal of
	# plain containers names it with what it runs on
	run jq -c '{type: .annotations["io.kubernetes.cri.container-type"],
		cpus: .linux.resources.cpu.cpus}' "$sandbox_cfg"
	assert_output '{"type":"sandbox","cpus":null}'
	[ ! -e "${sandbox_cfg%/config.json}/toposhim-placement.json" ]
	run jq -c --arg id "$pod" 'select(.id == $id) | {class, cpus}' "$WORK/state/plain-containers"
	assert_output '{"class":"standard","cpus":"0-1"}'
	# and no CDI device was injected into it
	[ "$(jq -c '.linux.devices // [] | map(select(.path == "/dev/xzero"))' "$sandbox_cfg")" = '[]' ]
	app=$(cri create "$pod" "$WORK/app.json" "$WORK/pod.json")
	cri start "$app"
	run inside "$app"
	assert_success
	assert_output $'1\ncharacter special file 1:5\nXZERO=present'
	run classes
	assert_output "critical,standard"
	cri stop "$app"
	cri rm "$app"
	cri stopp "$pod"
	cri rmp "$pod"
	run jq -c '.allocations' "$WORK/state/allocations.json"
	assert_output '[]'
}

@test "CRI: a two-container pod with scoped requests: worker critical with the device, sidecar shared" {
	cri_image
	pod_json duo '{"toposhim.io/class.worker": "critical", "toposhim.io/cpus.worker": "1",
		"toposhim.io/cdi.worker": "toposhim.test/dev=zero"}' >"$WORK/pod.json"
	ctr_json worker duo >"$WORK/worker.json"
	ctr_json sidecar duo >"$WORK/sidecar.json"
	local pod worker sidecar
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	worker=$(cri create "$pod" "$WORK/worker.json" "$WORK/pod.json")
	cri start "$worker"
	sidecar=$(cri create "$pod" "$WORK/sidecar.json" "$WORK/pod.json")
	cri start "$sidecar"
	run inside "$worker"
	assert_output $'1\ncharacter special file 1:5\nXZERO=present'
	run inside "$sidecar"
	assert_output $'0\nstat: can\'t stat \'/dev/xzero\': No such file or directory\nXZERO unset'
	run classes
	assert_output "critical,standard,standard"
	cri stop "$sidecar"
	cri rm "$sidecar"
	cri stop "$worker"
	cri rm "$worker"
	cri stopp "$pod"
	cri rmp "$pod"
}

@test "CRI: the operator's policy judges a pod by its namespace, as containerd's CRI tells it" {
	cri_image
	# only namespace team-a may ask for the critical class and the test
	# devices; containerd 1.6 writes the namespace as its own annotation
	# io.kubernetes.cri.sandbox-namespace (kubelet's label stays a label)
	write_config '"placement": {"reserved": {"cpus": "0"}},
  "policy": {"namespaces": {"team-a": {"classes": ["critical"], "devices": ["toposhim.test/*"]}}}'
	cp "$WORK/toposhim.json" "$CTRD/toposhim.json"
	local ann='{"toposhim.io/class.worker": "critical", "toposhim.io/cpus.worker": "1",
		"toposhim.io/cdi.worker": "toposhim.test/dev=zero"}'
	local pod worker cfg
	# a Burstable worker (no CPU limit): only the grant lets it have CPU 1
	ctr_json worker a >"$WORK/worker.json"
	pod_json a "$ann" "" team-a >"$WORK/pod-a.json"
	pod=$(cri runp --runtime toposhim "$WORK/pod-a.json")
	worker=$(cri create "$pod" "$WORK/worker.json" "$WORK/pod-a.json")
	cri start "$worker"
	run inside "$worker"
	assert_output $'1\ncharacter special file 1:5\nXZERO=present'
	cfg=$(ls /run/containerd/io.containerd.runtime.v2.task/k8s.io/"$worker"/config.json 2>/dev/null ||
		ls "$CTRD"/state/io.containerd.runtime.v2.task/k8s.io/"$worker"/config.json)
	run jq -r '.annotations["io.kubernetes.cri.sandbox-namespace"] + " " +
		(.annotations["io.kubernetes.pod.namespace"] // "none")' "$cfg"
	assert_output "team-a none"
	cri stop "$worker"
	cri rm "$worker"
	cri stopp "$pod"
	cri rmp "$pod"
	# the same pod in namespace team-b: refused, by name and namespace
	pod_json b "$ann" "" team-b >"$WORK/pod-b.json"
	pod=$(cri runp --runtime toposhim "$WORK/pod-b.json")
	worker=$(cri create "$pod" "$WORK/worker.json" "$WORK/pod-b.json")
	run --separate-stderr cri start "$worker"
	assert_failure 1
	[[ "$stderr" == "StartContainer: UNKNOWN: failed to create containerd task: failed to create shim task: OCI runtime create failed: toposhim: /"*"/k8s.io/$worker/config.json: '/annotations/toposhim.io~1class.worker': class 'critical' (exclusive cpus) is not allowed for namespace 'team-b': it needs an integer cpu limit equal to its request (the kubelet's rule), or the class in '/policy/namespaces/team-b/classes' of $CTRD/toposhim.json: unknown" ]] ||
		fail "stderr: $stderr"
	cri rm "$worker"
	cri stopp "$pod"
	cri rmp "$pod"
	run classes
	assert_output ""
}

@test "CRI: a failing CDI request fails StartContainer with toposhim's line as the gRPC status" {
	cri_image
	pod_json bad '{"cdi.k8s.io/test": "toposhim.test/dev=nope"}' >"$WORK/pod.json"
	ctr_json app bad >"$WORK/app.json"
	local pod app
	# the sandbox takes no device: it runs; CreateContainer only records the
	# container, StartContainer runs the runtime
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	app=$(cri create "$pod" "$WORK/app.json" "$WORK/pod.json")
	run --separate-stderr cri start "$app"
	assert_failure 1
	[ "$output" = "" ]
	[[ "$stderr" == "StartContainer: UNKNOWN: failed to create containerd task: failed to create shim task: OCI runtime create failed: toposhim: /"*"/k8s.io/$app/config.json: '/annotations/cdi.k8s.io~1test': unresolvable CDI devices toposhim.test/dev=nope (no spec file in $WORK/cdi defines it): unknown" ]] ||
		fail "stderr: $stderr"
	cri rm "$app"
	cri stopp "$pod"
	cri rmp "$pod"
}

# A create's warning went to the runtime's log.json only, which containerd
# deletes with the container, and StartContainer says nothing: the state
# dir's creates.log keeps it, one line per container (the pod annotation
# reaches the sandbox and the app container both).
@test "CRI: a create's warning stays in the state dir's creates.log after containerd deletes the container" {
	cri_image
	pod_json typo '{"toposhim.io/cpu": "1"}' >"$WORK/pod.json"
	ctr_json app typo >"$WORK/app.json"
	local pod app bundles
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	app=$(cri create "$pod" "$WORK/app.json" "$WORK/pod.json")
	cri start "$app"
	cri stop "$app"
	cri rm "$app"
	cri stopp "$pod"
	cri rmp "$pod"
	[ ! -e "$CTRD/state/io.containerd.runtime.v2.task/k8s.io/$app" ]
	bundles=$CTRD/state/io.containerd.runtime.v2.task/k8s.io
	run sed -E 's/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z pid [0-9]+: //' "$WORK/state/creates.log"
	assert_output "container '$pod': warning: $bundles/$pod/config.json: '/annotations/toposhim.io~1cpu': not a toposhim request (class, cpus, numa, memory-tier, cdi), ignoring
container '$app': warning: $bundles/$app/config.json: '/annotations/toposhim.io~1cpu': not a toposhim request (class, cpus, numa, memory-tier, cdi), ignoring"
}

# helper-17 D2: what kubelet's static CPU manager sends for a Guaranteed
# container of 1 CPU (toposhim(1) asks for its policy none): the cpuset is
# kept, pinned, and the count given up is said, in creates.log too.
@test "CRI: a Guaranteed container with a cpuset (kubelet's static CPU manager) runs pinned, the count given up said" {
	cri_image
	pod_json pinned '{}' >"$WORK/pod.json"
	ctr_json app pinned 100000 | jq '.linux.resources.cpuset_cpus = "1"' >"$WORK/app.json"
	local pod app burst
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	app=$(cri create "$pod" "$WORK/app.json" "$WORK/pod.json")
	cri start "$app"
	run inside "$app"
	assert_line --index 0 1
	run jq -r --arg id "$app" '.allocations[] | select(.container_id == $id) | "\(.class) \(.cpus) \(.pinned)"' \
		"$WORK/state/allocations.json"
	assert_output "critical 1 true"
	run sed -nE "s/^[0-9T:-]{19}Z pid [0-9]+: container '$app': //p" "$WORK/state/creates.log"
	assert_output "warning: $CTRD/state/io.containerd.runtime.v2.task/k8s.io/$app/config.json: '/linux/resources/cpu/quota': 1 cpus ignored: the cpus 1 in '/linux/resources/cpu/cpus' are kept, pinned"
	# a Burstable container (quota of 1.5 CPUs) with the static manager's
	# cpuset of the shared CPUs asked for no count: no line (helper-18)
	ctr_json burst pinned 150000 | jq '.linux.resources.cpuset_cpus = "0-1"' >"$WORK/burst.json"
	burst=$(cri create "$pod" "$WORK/burst.json" "$WORK/pod.json")
	cri start "$burst"
	run jq -r --arg id "$burst" '.allocations[] | select(.container_id == $id) | "\(.class) \(.cpus) \(.pinned)"' \
		"$WORK/state/allocations.json"
	assert_output "standard 0-1 true"
	run grep -c "container '$burst'" "$WORK/state/creates.log"
	assert_output 0
	cri stop "$burst"
	cri rm "$burst"
	cri stop "$app"
	cri rm "$app"
	cri stopp "$pod"
	cri rmp "$pod"
}

@test "CRI: a Guaranteed container without annotations gets its CPU, the sandbox the shared pool" {
	cri_image
	pod_json guaranteed '{}' >"$WORK/pod.json"
	ctr_json app guaranteed 100000 >"$WORK/app.json"
	local pod app
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	app=$(cri create "$pod" "$WORK/app.json" "$WORK/pod.json")
	cri start "$app"
	run inside "$app"
	assert_output $'1\nstat: can\'t stat \'/dev/xzero\': No such file or directory\nXZERO unset'
	run classes
	assert_output "critical,standard"
	cri stop "$app"
	cri rm "$app"
	cri stopp "$pod"
	cri rmp "$pod"
}

@test "CRI: a pod under a kubepods parent narrowed to CPU 1 runs there" {
	cri_image
	[ -d /sys/fs/cgroup/cpuset ] || skip "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset"
	# kubelet's reserved CPU 0 leaves kubepods CPU 1 (cgroupfs driver)
	PARENT=ts-kubepods-$$-$BATS_TEST_NUMBER
	mkdir "/sys/fs/cgroup/cpuset/$PARENT"
	cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$PARENT/cpuset.mems"
	echo 1 >"/sys/fs/cgroup/cpuset/$PARENT/cpuset.cpus"
	pod_json narrow '{}' "/$PARENT/pod$ID" >"$WORK/pod.json"
	ctr_json app narrow >"$WORK/app.json"
	local pod app
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	app=$(cri create "$pod" "$WORK/app.json" "$WORK/pod.json")
	cri start "$app"
	run inside "$app"
	assert_output $'1\nstat: can\'t stat \'/dev/xzero\': No such file or directory\nXZERO unset'
	cri stop "$app"
	cri rm "$app"
	cri stopp "$pod"
	cri rmp "$pod"
}

# cgroup_cpus ID: the cpuset.cpus of container (or sandbox) ID's cgroup, by
# the cgroupsPath containerd wrote into its config.json (cgroup v1)
cgroup_cpus() {
	local cfg
	cfg=$(ls "$CTRD"/state/io.containerd.runtime.v2.task/k8s.io/"$1"/config.json)
	cat "/sys/fs/cgroup/cpuset$(jq -r .linux.cgroupsPath "$cfg")/cpuset.cpus"
}

# cpus_are ID CPUS: whether ID's cgroup has cpuset.cpus CPUS
cpus_are() {
	[ "$(cgroup_cpus "$1")" = "$2" ]
}

# has_exited ID: whether the CRI reports container ID exited
has_exited() {
	cri status "$1" | grep -q '^CONTAINER_EXITED '
}

# wait_for SECONDS CMD...: until CMD (a function too) succeeds, at most SECONDS
wait_for() {
	local n=$(($1 * 10))
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.1
	done
}

@test "CRI: an init container's exclusive CPU comes back when it exits; the app container takes it" {
	cri_image
	[ -d /sys/fs/cgroup/cpuset ] || skip "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset"
	# both critical with CPU 1 through scoped pod annotations: on this host
	# (CPU 0 reserved) the app can only have it once the init gave it back
	pod_json init '{"toposhim.io/class.setup": "critical", "toposhim.io/cpus.setup": "1",
		"toposhim.io/class.app": "critical", "toposhim.io/cpus.app": "1"}' |
		jq --arg d "$WORK/logs" '.log_directory = $d' >"$WORK/pod.json"
	mkdir "$WORK/logs"
	# the init shows its cpuset, then lives 2 s more (the sandbox is seen
	# shrunk meanwhile) and exits 0, as an init container does
	ctr_json setup init |
		jq '.command = ["/bin/sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2; sleep 2"]' \
			>"$WORK/setup.json"
	ctr_json app init >"$WORK/app.json"
	local pod setup app
	pod=$(cri runp --runtime toposhim "$WORK/pod.json")
	run cgroup_cpus "$pod"
	assert_output "0-1"
	setup=$(cri create "$pod" "$WORK/setup.json" "$WORK/pod.json")
	cri start "$setup"
	# kubelet's log file: "<time> stdout F <line>"
	wait_for 10 grep -q ' stdout F ' "$WORK/logs/setup.log" || fail "no log line from the init"
	run cut -d' ' -f2- "$WORK/logs/setup.log"
	assert_output "stdout F 1"
	run cgroup_cpus "$pod"
	assert_output "0"
	run classes
	assert_output "critical,standard"
	# kubelet waits for the init to exit; containerd deletes its task then,
	# and keeps the container (EXITED) until the pod goes
	wait_for 15 has_exited "$setup" ||
		fail "the init did not exit: $(cri status "$setup")"
	run cri status "$setup"
	assert_output "CONTAINER_EXITED 0 Completed"
	wait_for 10 grep -q " delete $setup\$" "$CTRD/calls" || fail "calls: $(cat "$CTRD/calls")"
	# its CPU is back: the shared pool (the sandbox) grows back to 0-1
	wait_for 10 cpus_are "$pod" 0-1 ||
		fail "the sandbox stayed on $(cgroup_cpus "$pod")"
	run classes
	assert_output "standard"
	# the app (critical too) gets CPU 1, the sandbox shrinks to 0 again
	app=$(cri create "$pod" "$WORK/app.json" "$WORK/pod.json")
	cri start "$app"
	run inside "$app"
	assert_output $'1\nstat: can\'t stat \'/dev/xzero\': No such file or directory\nXZERO unset'
	run cgroup_cpus "$app"
	assert_output "1"
	run cgroup_cpus "$pod"
	assert_output "0"
	run classes
	assert_output "critical,standard"
	cri stop "$app"
	cri rm "$app"
	run cgroup_cpus "$pod"
	assert_output "0-1"
	cri rm "$setup"
	cri stopp "$pod"
	cri rmp "$pod"
	run jq -c '.allocations' "$WORK/state/allocations.json"
	assert_output '[]'
}

# What kubelet's CPU manager (or an operator's crictl update) does to a
# running container: UpdateContainerResources with a cpuset.  The next
# resize of the shared pool finds the cpuset changed outside toposhim and
# leaves it there, pinned, saying so in the state dir's resizes.log (the
# log of the create that resized is the other container's); alloc unpin
# gives the container back to the pool.
@test "CRI: a cpuset set by UpdateContainerResources stays, pinned; alloc unpin gives it the pool again" {
	cri_image
	# nothing reserved: either CPU can be exclusive
	write_config '"gc_grace_seconds": 1'
	cp "$WORK/toposhim.json" "$CTRD/toposhim.json"
	pod_json shared '{"toposhim.io/class": "standard"}' >"$WORK/spod.json"
	ctr_json app shared >"$WORK/sapp.json"
	pod_json crit '{"toposhim.io/class": "critical"}' >"$WORK/cpod.json"
	ctr_json app crit 100000 >"$WORK/capp.json"
	local spod sapp cpod capp
	spod=$(cri runp --runtime toposhim "$WORK/spod.json")
	sapp=$(cri create "$spod" "$WORK/sapp.json" "$WORK/spod.json")
	cri start "$sapp"
	run cgroup_cpus "$sapp"
	assert_output "0-1"
	cri update "$sapp" 1
	run cgroup_cpus "$sapp"
	assert_output "1"
	# the critical container takes CPU 0; the resize after it leaves the
	# shared one on CPU 1, pinned there
	cpod=$(cri runp --runtime toposhim "$WORK/cpod.json")
	capp=$(cri create "$cpod" "$WORK/capp.json" "$WORK/cpod.json")
	cri start "$capp"
	run cgroup_cpus "$capp"
	assert_output "0"
	run cgroup_cpus "$sapp"
	assert_output "1"
	run jq -c --arg id "$sapp" '.allocations[] | select(.container_id == $id) | {class, cpus, pinned}' \
		"$WORK/state/allocations.json"
	assert_output '{"class":"standard","cpus":"1","pinned":true}'
	grep -Eq "pid [0-9]+: container '$sapp': its cpuset was changed outside toposhim \(cpus 1, recorded 0-1\): now pinned there" \
		"$WORK/state/resizes.log" || fail "resizes.log: $(cat "$WORK/state/resizes.log")"
	run "$TOPOSHIMCTL" alloc unpin "$sapp"
	assert_success
	assert_output "unpinned $sapp"
	# unpinned, it follows the pool: the critical pod goes, it grows back
	cri stop "$capp"
	cri rm "$capp"
	cri stopp "$cpod"
	cri rmp "$cpod"
	wait_for 10 cpus_are "$sapp" 0-1 || fail "the shared container stayed on $(cgroup_cpus "$sapp")"
	run jq -c --arg id "$sapp" '.allocations[] | select(.container_id == $id) | {cpus, pinned}' \
		"$WORK/state/allocations.json"
	assert_output '{"cpus":"0-1","pinned":false}'
	cri stop "$sapp"
	cri rm "$sapp"
	cri stopp "$spod"
	cri rmp "$spod"
}
