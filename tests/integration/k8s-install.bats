#!/usr/bin/env bats
# contrib/kubernetes: the manifests (k8s-check.py manifests) and the
# DaemonSet's installer, install.sh, run against a scratch root directory
# standing in for the node: SRC laid out as contrib/Containerfile lays out
# the image (the programs of this build, contrib/containerd), kubectl and
# the containerd restart replaced by commands that record their calls.
# containerd 1.6 reads the configs the installer writes (config dump).

load helpers

INSTALL="$TS_SRCDIR/contrib/kubernetes/install.sh"
CHECK="$TS_SRCDIR/tests/integration/k8s-check.py"

setup() {
	command -v python3 >/dev/null || skip "python3 is not installed"
	W=$BATS_TEST_TMPDIR
	H=$W/host
	mkdir -p "$H" "$W/src/bin" "$W/src/libexec/toposhim/plugins" "$W/src/lib/toposhim"
	for f in toposhim toposhimctl hooks/toposhim-cdi-hook; do
		cp "$TS_BUILDDIR/$f" "$W/src/bin/"
	done
	cp "$TS_BUILDDIR/hooks/confine" "$W/src/libexec/toposhim/plugins/"
	cp "$TS_BUILDDIR/toposhim-core" "$W/src/libexec/toposhim/"
	echo "a library" >"$W/src/lib/toposhim/libexample.so.1"
	cp -r "$TS_SRCDIR/contrib/containerd" "$W/src/containerd"
	python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["config.json"], end="")' \
		"$TS_SRCDIR/contrib/kubernetes/configmap.yaml" >"$W/config.json"
	cat >"$W/kubectl" <<STUB
#!/bin/sh
echo "kubectl \$*" >>"$W/calls"
[ "\$1" != apply ] || cat >"$W/applied"
STUB
	chmod 0755 "$W/kubectl"
	export HOST_ROOT=$H SRC=$W/src CONFIG_SRC=$W/config.json NODE_NAME=worker-1 \
		KUBECTL=$W/kubectl RESTART_CONTAINERD="echo restart >>'$W/calls'"
	: >"$W/calls"
}

# A kubeadm-like containerd 1.6 config: CRI settings, runc with the systemd
# cgroup driver.
kubeadm_config() {
	mkdir -p "$H/etc/containerd"
	cat >"$H/etc/containerd/config.toml" <<'CONF'
version = 2

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.9"

  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = true
CONF
	cp "$H/etc/containerd/config.toml" "$W/orig.toml"
}

# files ROOT: the files under ROOT, one path a line.
files() {
	(cd "$1" && find . -type f | sed 's,^\./,/,' | sort)
}

@test "manifests: required fields, names, and the values that must agree" {
	run python3 "$CHECK" manifests "$TS_SRCDIR/contrib"
	assert_success
	assert_output ""
	# and the check does see a disagreement
	cp -r "$TS_SRCDIR/contrib" "$W/contrib"
	sed -i 's/^handler: toposhim$/handler: toposhim-x/' "$W/contrib/kubernetes/runtimeclass.yaml"
	sed -i 's/toposhim.io\/class.sidecar:/toposhim.io\/class.sidecr:/' "$W/contrib/kubernetes/example-pod.yaml"
	sed -i 's/^      serviceAccountName: toposhim-node$/      serviceAccountName: nobody/' \
		"$W/contrib/kubernetes/daemonset.yaml"
	run python3 "$CHECK" manifests "$W/contrib"
	assert_failure
	assert_output - <<'OUT'
runtimeclass.yaml: RuntimeClass/toposhim: handler 'toposhim-x', but containerd's handler is 'toposhim'
daemonset.yaml: DaemonSet/toposhim-node: serviceAccountName 'nobody' is no ServiceAccount of namespace toposhim-system
daemonset.yaml: ClusterRoleBinding/toposhim-node: does not bind ServiceAccount toposhim-system/nobody
example-pod.yaml: Pod/toposhim-example: annotation toposhim.io/class.sidecr names no container of the pod
OUT
}

@test "install on a containerd 1.6 node: programs, config, the handler, one restart, the label" {
	kubeadm_config
	run sh "$INSTALL" install
	assert_success
	run files "$H"
	assert_output - <<'OUT'
/etc/containerd/config.toml
/etc/toposhim/config.json
/usr/local/bin/toposhim
/usr/local/bin/toposhim-cdi-hook
/usr/local/bin/toposhimctl
/usr/local/lib/toposhim/libexample.so.1
/usr/local/libexec/toposhim/plugins/confine
/usr/local/libexec/toposhim/toposhim-core
/var/lib/toposhim-install/containerd.installed
/var/lib/toposhim-install/containerd.orig
/var/lib/toposhim-install/files
OUT
	cmp "$W/src/bin/toposhim" "$H/usr/local/bin/toposhim"
	cmp "$W/config.json" "$H/etc/toposhim/config.json"
	# the original config, then the handler of contrib/containerd/config-v2.toml
	run sh -c "diff '$W/orig.toml' '$H/etc/containerd/config.toml' | sed 's/ *\$//'"
	assert_output - <<'OUT'
13a14,23
> # BEGIN toposhim (contrib/kubernetes/install.sh; removed by its uninstall)
>   [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim]
>     runtime_type = "io.containerd.runc.v2"
>     pod_annotations = ["cdi.k8s.io/*", "toposhim.io/*"]
>     container_annotations = ["cdi.k8s.io/*", "toposhim.io/*"]
>
>     [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim.options]
>       BinaryName = "/usr/local/bin/toposhim"
>       SystemdCgroup = true
> # END toposhim
OUT
	run cat "$W/calls"
	assert_output $'restart\nkubectl label node worker-1 toposhim.io/installed=true --overwrite'
	# containerd reads it: both handlers, the CRI settings kept
	if command -v containerd >/dev/null; then
		run containerd --config "$H/etc/containerd/config.toml" config dump
		assert_success
		assert_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc\]$'
		assert_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim\]$'
		assert_line --regexp '^ +BinaryName = "/usr/local/bin/toposhim"$'
		assert_line --regexp '^ +sandbox_image = "registry.k8s.io/pause:3.9"$'
		[ "$(grep -c '^ *SystemdCgroup = true$' <<<"$output")" = 2 ]
	fi
}

@test "install twice: nothing changes, no restart" {
	kubeadm_config
	sh "$INSTALL" install >/dev/null
	cp "$H/etc/containerd/config.toml" "$W/first.toml"
	: >"$W/calls"
	run sh "$INSTALL" install
	assert_success
	assert_line "toposhim-install: containerd's config is unchanged: no restart"
	cmp "$W/first.toml" "$H/etc/containerd/config.toml"
	run cat "$W/calls"
	assert_output "kubectl label node worker-1 toposhim.io/installed=true --overwrite"
}

@test "uninstall restores the node: the label, containerd's config byte for byte, no files" {
	kubeadm_config
	mkdir -p "$H/etc/toposhim"
	echo '{"state_dir": "/run/toposhim"}' >"$H/etc/toposhim/config.json"
	cp "$H/etc/toposhim/config.json" "$W/orig-config.json"
	files "$H" >"$W/before"
	sh "$INSTALL" install >/dev/null
	: >"$W/calls"
	run sh "$INSTALL" uninstall
	assert_success
	assert_line "toposhim-install: done: node worker-1 is restored"
	cmp "$W/orig.toml" "$H/etc/containerd/config.toml"
	cmp "$W/orig-config.json" "$H/etc/toposhim/config.json"
	run files "$H"
	assert_output "$(cat "$W/before")"
	run cat "$W/calls"
	assert_output $'kubectl label node worker-1 toposhim.io/installed-\nrestart'
}

@test "a node without containerd config: a version 2 file with both handlers, removed again" {
	sh "$INSTALL" install >/dev/null
	run head -n 4 "$H/etc/containerd/config.toml"
	assert_output - <<'OUT'
version = 2
# BEGIN toposhim (contrib/kubernetes/install.sh; removed by its uninstall)
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
OUT
	if command -v containerd >/dev/null; then
		run containerd --config "$H/etc/containerd/config.toml" config dump
		assert_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc\]$'
		assert_line --regexp '^ +\[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.toposhim\]$'
		refute_line --regexp 'SystemdCgroup = true'
	fi
	sh "$INSTALL" uninstall >/dev/null
	[ ! -e "$H/etc/containerd/config.toml" ]
	run files "$H"
	assert_output ""
}

@test "a containerd 2.x node (version 3): the drop-in of contrib, imports added, restored" {
	mkdir -p "$H/etc/containerd"
	printf 'version = 3\n\n[plugins.%s]\n  sandbox = "registry.k8s.io/pause:3.10"\n' \
		"'io.containerd.cri.v1.images'.pinned_images" >"$H/etc/containerd/config.toml"
	cp "$H/etc/containerd/config.toml" "$W/orig.toml"
	run sh "$INSTALL" install
	assert_success
	run diff "$W/orig.toml" "$H/etc/containerd/config.toml"
	assert_output $'1a2\n> imports = ["/etc/containerd/conf.d/*.toml"]'
	run diff "$TS_SRCDIR/contrib/containerd/conf.d/toposhim-v3.toml" "$H/etc/containerd/conf.d/toposhim.toml"
	assert_output - <<'OUT'
19c19
<     BinaryName = '/usr/bin/toposhim'
---
>     BinaryName = '/usr/local/bin/toposhim'
OUT
	sh "$INSTALL" uninstall >/dev/null
	cmp "$W/orig.toml" "$H/etc/containerd/config.toml"
	[ ! -e "$H/etc/containerd/conf.d/toposhim.toml" ]
}

@test "version 3 with imports: conf.d/*.toml joins the list" {
	mkdir -p "$H/etc/containerd"
	printf 'version = 3\nimports = ["/etc/containerd/other.toml"]\n' >"$H/etc/containerd/config.toml"
	sh "$INSTALL" install >/dev/null
	run cat "$H/etc/containerd/config.toml"
	assert_output $'version = 3\nimports = ["/etc/containerd/other.toml", "/etc/containerd/conf.d/*.toml"]'
}

@test "uninstall while allocations are live: the programs stay" {
	kubeadm_config
	sh "$INSTALL" install >/dev/null
	# a create's record in the host's state dir
	mkdir -p "$W/b/rootfs" "$H/run"
	jq -n '{ociVersion: "1.0.2", root: {path: "rootfs"}, process: {args: ["true"], cwd: "/"},
		linux: {}}' >"$W/b/config.json"
	cat >"$W/runtime" <<RUNTIME
#!/bin/sh
eval "id=\\\${\$#}"
mkdir -p "\$2/\$id"
exec "$FAKE_RUNTIME" "\$@"
RUNTIME
	chmod 0755 "$W/runtime"
	TOPOSHIM_STATE_DIR=$H/run/toposhim TOPOSHIM_RUNTIME=$W/runtime TS_FAKE_RECORD=$W/rec \
		"$TOPOSHIM" --root "$W/root" create --bundle "$W/b" c1 </dev/null >/dev/null 2>&1
	run sh "$INSTALL" uninstall
	assert_success
	assert_line "toposhim-install: allocations are still live: the programs stay until their pods are gone"
	cmp "$W/orig.toml" "$H/etc/containerd/config.toml"
	[ -x "$H/usr/local/bin/toposhim" ]
	[ ! -e "$H/etc/toposhim/config.json" ]
}

@test "containerd's config edited after install: uninstall takes out only the block" {
	kubeadm_config
	sh "$INSTALL" install >/dev/null
	echo '# added by the operator' >>"$H/etc/containerd/config.toml"
	run sh "$INSTALL" uninstall
	assert_success
	assert_line "toposhim-install: /etc/containerd/config.toml changed since install: only the toposhim block removed"
	run diff "$W/orig.toml" "$H/etc/containerd/config.toml"
	assert_output $'13a14\n> # added by the operator'
}

@test "nrt-once: toposhimctl nrt of this node, through kubectl apply" {
	run sh "$INSTALL" nrt-once
	assert_success
	run cat "$W/calls"
	assert_output "kubectl apply -f -"
	run jq -r '.kind + " " + .metadata.name' "$W/applied"
	assert_output "NodeResourceTopology worker-1"
}

@test "install without NODE_NAME or without the ConfigMap fails and says why" {
	run env -u NODE_NAME sh "$INSTALL" install
	assert_failure
	assert_output "toposhim-install: NODE_NAME is not set (the DaemonSet sets it from spec.nodeName)"
	run env CONFIG_SRC="$W/none.json" sh "$INSTALL" install
	assert_failure
	assert_output "toposhim-install: $W/none.json: not found (the ConfigMap toposhim-config)"
	run files "$H"
	assert_output ""
}
