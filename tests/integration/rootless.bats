#!/usr/bin/env bats
# Rootless (issue 11): toposhim run by an unprivileged user, as rootless
# podman and `runc --rootless` run it: its state goes under
# $XDG_RUNTIME_DIR/toposhim (/run/toposhim is root's), placement that the
# runtime could not apply (no writable cpuset controller: cgroup v1 here)
# is skipped with one warning, and CDI devices still go in.  The user is
# nobody (65534) through setpriv, with a clean environment as podman gives
# its runtime (HOME, PATH, XDG_RUNTIME_DIR).

load containers
bats_load_library bats-support
bats_load_library bats-assert
bats_require_minimum_version 1.5.0

ROOTLESS_UID=65534

setup() {
	require_root
	require_cmd runc
	require_cmd jq
	require_cmd setpriv
	getent passwd "$ROOTLESS_UID" >/dev/null || skip "no user $ROOTLESS_UID"
	containers_setup
	mkdir -p -m 0755 "$WORK/cdi"
	# a node whose container path is its host path: in a user namespace
	# runc bind-mounts device nodes from the host at the container path
	cat >"$WORK/cdi/tun.yaml" <<'SPEC'
cdiVersion: "0.6.0"
kind: toposhim.test/dev
devices:
  - name: tun
    containerEdits:
      deviceNodes:
        - path: /dev/net/tun
          hostPath: /dev/net/tun
      env:
        - TUN=present
  - name: tun-alias
    containerEdits:
      deviceNodes:
        - path: /dev/ts-tun
          hostPath: /dev/net/tun
SPEC
	chmod 0644 "$WORK/cdi/tun.yaml"
	[ -c /dev/net/tun ] || skip "no /dev/net/tun on this host"
	cat >"$WORK/toposhim.json" <<CONF
{ "cdi": {"spec_dirs": ["$WORK/cdi"]}, $TS_TEST_POLICY }
CONF
	chmod 0644 "$WORK/toposhim.json"
	mkdir -m 0700 "$WORK/xdg"
	chown "$ROOTLESS_UID:$ROOTLESS_UID" "$WORK/xdg"
	# The build tree may sit below a directory only root can enter (CI
	# clones into a mktemp -d, mode 0700): the user runs copies of the
	# same binaries from $WORK (0755).
	mkdir -m 0755 "$WORK/bin"
	# (the front in $WORK/bin runs $WORK/libexec/toposhim/toposhim-core:
	# src/cli/core.h)
	install -m 0755 "$TOPOSHIM" "$TOPOSHIMCTL" "$WORK/bin/"
	install -D -m 0755 "$TS_BUILDDIR/toposhim-core" "$WORK/libexec/toposhim/toposhim-core"
	TOPOSHIM=$WORK/bin/toposhim
	TOPOSHIMCTL=$WORK/bin/toposhimctl
}

teardown() {
	podman_user_remove
	containers_teardown
}

# rootless_bundle: a `runc spec --rootless` bundle mapping the user's uid
# and gid to root in the container, asking for the CDI device.
rootless_bundle() {
	make_bundle "$WORK/b" '["sh","-c","grep Cpus_allowed_list /proc/self/status | cut -f2; stat -c \"%F %t:%T\" /dev/net/tun; echo TUN=$TUN"]'
	(cd "$WORK/b" && rm config.json && runc spec --rootless)
	jq --argjson u "$ROOTLESS_UID" '.process.terminal = false
		| .process.args = ["sh","-c","grep Cpus_allowed_list /proc/self/status | cut -f2; stat -c \"%F %t:%T\" /dev/net/tun; echo TUN=$TUN"]
		| .linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}]
		| .linux.gidMappings = [{containerID: 0, hostID: $u, size: 1}]
		| .annotations["cdi.k8s.io/tun"] = "toposhim.test/dev=tun"' \
		"$WORK/b/config.json" >"$WORK/b/config.json.new"
	mv "$WORK/b/config.json.new" "$WORK/b/config.json"
	chown -R "$ROOTLESS_UID:$ROOTLESS_UID" "$WORK/b"
}

# as_user CMD...: CMD as the rootless user, stdio on files of that user
# (runc chowns them to the container's root), output in $WORK/xdg/out|err.
# With AS_USER_RUNTIME set, that runtime, in a mount namespace of its own
# without the cgroup2 mount (crun 1.8 runs nothing on hybrid cgroups).
as_user() {
	local wrap=()
	[ -z "${AS_USER_RUNTIME:-}" ] || wrap=(unshare -m --propagation private sh -c
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh)
	"${wrap[@]}" setpriv --reuid="$ROOTLESS_UID" --regid="$ROOTLESS_UID" --clear-groups \
		env -i PATH=/usr/sbin:/usr/bin:/bin HOME=/ XDG_RUNTIME_DIR="$WORK/xdg" \
		TOPOSHIM_CONFIG="$WORK/toposhim.json" ${AS_USER_RUNTIME:+TOPOSHIM_RUNTIME=$AS_USER_RUNTIME} \
		sh -c 'exec "$@" </dev/null >"$XDG_RUNTIME_DIR/out" 2>"$XDG_RUNTIME_DIR/err"' sh "$@"
}

@test "rootless: runc --rootless through toposhim: the device goes in, placement skipped with one warning" {
	rootless_bundle
	run as_user "$TOPOSHIM" --root "$WORK/xdg/runc" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { cat "$WORK/xdg/err"; false; }
	[ "$(cat "$WORK/xdg/out")" = "0-$(($(nproc --all) - 1))
character special file a:c8
TUN=present" ]
	run grep -c '^toposhim:' "$WORK/xdg/err"
	[ "$output" = 1 ]
	grep -Fx "toposhim: warning: not root and cgroup '/sys/fs/cgroup/cpuset' is not writable: cpus and mems are not placed, ignoring" "$WORK/xdg/err"
	# no cpus or mems written, no allocation: the state dir is the user's
	[ "$(jq -c '.linux.resources.cpu' "$WORK/b/config.json")" = null ]
	[ "$(stat -c '%u %a' "$WORK/xdg/toposhim")" = "$ROOTLESS_UID 700" ]
	[ ! -e "$WORK/xdg/toposhim/allocations.json" ]
}

# helper-16 D3: a node whose container path is not its host path.  runc in
# a user namespace binds the host's file at the container path (the host
# has no /dev/ts-tun: it failed to start); toposhim gives it a bind mount of
# hostPath instead, keeping the cgroup rule.  Arguments: the runtime's
# global options.
hostpath_alias() {
	rootless_bundle
	jq '.annotations["cdi.k8s.io/tun"] = "toposhim.test/dev=tun-alias"
		| .process.args = ["stat", "-c", "%F %t:%T", "/dev/ts-tun"]' \
		"$WORK/b/config.json" >"$WORK/b/config.json.new"
	mv "$WORK/b/config.json.new" "$WORK/b/config.json"
	chown "$ROOTLESS_UID:$ROOTLESS_UID" "$WORK/b/config.json"
	[ ! -e /dev/ts-tun ]
	run as_user "$TOPOSHIM" --root "$WORK/xdg/runc" "$@" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { cat "$WORK/xdg/err"; false; }
	[ "$(cat "$WORK/xdg/out")" = "character special file a:c8" ]
	run jq -c '[[.mounts[] | select(.destination == "/dev/ts-tun")], [.linux.devices[]? | select(.path == "/dev/ts-tun")],
		[.linux.resources.devices[]? | select(.major == 10 and .minor == 200)]]' \
		"$WORK/b/config.json"
	assert_output '[[{"destination":"/dev/ts-tun","type":"bind","source":"/dev/net/tun","options":["bind"]}],[],[{"allow":true,"type":"c","major":10,"minor":200,"access":"rwm"}]]'
	# the bundle run again: the device is found in, nothing doubles
	# (helper-18: its cgroup rule and hooks were added at every run)
	cp "$WORK/b/config.json" "$WORK/config.first"
	run as_user "$TOPOSHIM" --root "$WORK/xdg/runc" "$@" run --bundle "$WORK/b" "$ID-again"
	[ "$status" -eq 0 ] || { cat "$WORK/xdg/err"; false; }
	[ "$(cat "$WORK/xdg/out")" = "character special file a:c8" ]
	cmp "$WORK/config.first" "$WORK/b/config.json"
}

@test "rootless: runc --rootless, hostPath != path: the node is a bind mount of hostPath" {
	hostpath_alias
}

@test "rootless: crun as a user, hostPath != path: the node is a bind mount of hostPath" {
	require_cmd crun
	AS_USER_RUNTIME=$(command -v crun) hostpath_alias --cgroup-manager=disabled
}

# helper-7: rootless, a class 'bogus' and a numa policy the policy does not
# grant ran (exit 0), while as root both are refused: placement is skipped,
# the request is still checked.
@test "rootless: placement skipped, the request is still read and held to the policy" {
	rootless_bundle
	cat >"$WORK/toposhim.json" <<CONF
{ "cdi": {"spec_dirs": ["$WORK/cdi"]},
  "policy": {"unscoped": {"classes": ["*"], "devices": ["*"]}} }
CONF
	jq '.annotations["toposhim.io/class"] = "bogus"' "$WORK/b/config.json" >"$WORK/b/c.json"
	cp "$WORK/b/config.json" "$WORK/b/orig.json"
	cp "$WORK/b/c.json" "$WORK/b/config.json"
	run as_user "$TOPOSHIM" --root "$WORK/xdg/runc" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	run cat "$WORK/xdg/err"
	assert_output "toposhim: $WORK/b/config.json: '/annotations/toposhim.io~1class': unknown class 'bogus'"
	cmp "$WORK/b/config.json" "$WORK/b/c.json"
	jq '.annotations["toposhim.io/numa"] = "exclusive"' "$WORK/b/orig.json" >"$WORK/b/config.json"
	run as_user "$TOPOSHIM" --root "$WORK/xdg/runc" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	run cat "$WORK/xdg/err"
	assert_output "toposhim: $WORK/b/config.json: '/annotations/toposhim.io~1numa': numa 'exclusive' (a whole numa node) is not allowed for unscoped containers: it needs 'exclusive' in '/policy/unscoped/numa' of $WORK/toposhim.json"
	# the same bundle without them runs, unplaced
	cp "$WORK/b/orig.json" "$WORK/b/config.json"
	run as_user "$TOPOSHIM" --root "$WORK/xdg/runc" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { cat "$WORK/xdg/err"; false; }
}

@test "rootless: the state dir is \$XDG_RUNTIME_DIR/toposhim, not /run/toposhim" {
	rootless_bundle
	run as_user "$TOPOSHIMCTL" alloc list --json
	[ "$status" -eq 1 ]
	[ "$(cat "$WORK/xdg/err")" = "toposhimctl: alloc: $WORK/xdg/toposhim: no state directory: No such file or directory" ]
	run as_user "$TOPOSHIM" --root "$WORK/xdg/runc" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ]
	run as_user "$TOPOSHIMCTL" alloc list --json
	[ "$status" -eq 0 ] || { cat "$WORK/xdg/err"; false; }
	[ "$(cat "$WORK/xdg/out")" = "[]" ]
}

@test "rootless: in a user namespace, root's spec files (seen as the overflow uid) are trusted, writable ones not" {
	require_cmd unshare
	printf '{ "cdi": {"spec_dirs": ["%s/cdi"]} }\n' "$WORK" >"$WORK/cdi.json"
	# unshare -U without a mapping: we are the overflow uid there, and the
	# host's root-owned files appear owned by it
	run env TOPOSHIM_CONFIG="$WORK/cdi.json" unshare -U "$TOPOSHIMCTL" cdi list
	[ "$status" -eq 0 ]
	[ "$output" = "toposhim.test/dev=tun	$WORK/cdi/tun.yaml
toposhim.test/dev=tun-alias	$WORK/cdi/tun.yaml" ]
	chmod 0666 "$WORK/cdi/tun.yaml"
	run env TOPOSHIM_CONFIG="$WORK/cdi.json" unshare -U "$TOPOSHIMCTL" cdi list
	[ "$output" = "rejected	$WORK/cdi/tun.yaml: refusing spec file writable by non-root (mode 0666, gid 65534)" ]
}

# podman_user: a user of the test's own for rootless podman: lines for it
# appended to passwd, group, subuid and subgid (podman's newuidmap reads
# the last two), the files put back byte for byte in teardown, and every
# process of the user killed first (rootless podman leaves its pause
# process, catatonit, holding the user namespace).  Sets PUSER, PUID, PHOME.
podman_user() {
	local f
	PUSER=ts-rootless-$BATS_TEST_NUMBER
	PUID=$(awk -F: 'BEGIN {u = 4200} $3 >= u && $3 < u + 100 {u = $3 + 1} END {print u}' /etc/passwd)
	getent passwd "$PUID" >/dev/null && skip "no free uid near 4200"
	mkdir -p "$WORK/etc-saved"
	for f in passwd group subuid subgid; do
		touch "/etc/$f"
		cp -p "/etc/$f" "$WORK/etc-saved/$f"
	done
	PODMAN_USER_ADDED=1
	echo "$PUSER:x:$PUID:$PUID::$WORK/home:/bin/sh" >>/etc/passwd
	echo "$PUSER:x:$PUID:" >>/etc/group
	echo "$PUSER:$((PUID * 100000)):65536" >>/etc/subuid
	echo "$PUSER:$((PUID * 100000)):65536" >>/etc/subgid
	PHOME=$WORK/home
	mkdir -p "$PHOME/xdg"
	make_rootfs "$PHOME/rootfs"
	chmod 0700 "$PHOME/xdg"
	chown -R "$PUID:$PUID" "$PHOME"
}

podman_user_remove() {
	local f
	[ -n "${PODMAN_USER_ADDED:-}" ] || return 0
	pkill -KILL -u "$PUID" 2>/dev/null || true
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		pgrep -u "$PUID" >/dev/null || break
		sleep 0.2
	done
	for f in passwd group subuid subgid; do
		cat "$WORK/etc-saved/$f" >"/etc/$f"
	done
	PODMAN_USER_ADDED=
}

# as_podman_user ARGS...: podman as that user, with only the environment
# a login would give it; vfs storage and the cgroupfs manager (no systemd
# here), toposhim through a wrapper naming this test's config and runc.
as_podman_user() {
	setpriv --reuid="$PUID" --regid="$PUID" --clear-groups \
		env -i PATH=/usr/sbin:/usr/bin:/bin HOME="$PHOME" XDG_RUNTIME_DIR="$PHOME/xdg" \
		podman --storage-driver vfs --root "$PHOME/storage" --runroot "$PHOME/xdg/containers" \
		--cgroup-manager cgroupfs --events-backend file \
		--runtime "$WORK/bin/toposhim-podman" "$@"
}

@test "rootless podman: a user with /etc/subuid runs a container through toposhim: the device goes in, placement skipped" {
	require_cmd podman
	require_cmd newuidmap
	require_cmd pkill
	podman_user
	# podman gives its runtime HOME, PATH and XDG_RUNTIME_DIR only: the
	# wrapper names the config; podman runs it as root of the user's
	# namespace, where root's spec files appear owned by the overflow uid
	cat >"$WORK/bin/toposhim-podman" <<WRAP
#!/bin/sh
export TOPOSHIM_CONFIG=$WORK/toposhim.json TOPOSHIM_RUNTIME=$(command -v runc)
exec $TOPOSHIM "\$@" 2>>"$PHOME/runtime.err"
WRAP
	chmod 0755 "$WORK/bin/toposhim-podman"
	run --separate-stderr as_podman_user run --name "$ID" --network none \
		--annotation cdi.k8s.io/tun=toposhim.test/dev=tun \
		--annotation cdi.k8s.io/tun-alias=toposhim.test/dev=tun-alias --rootfs "$PHOME/rootfs" \
		sh -c 'grep Cpus_allowed_list /proc/self/status | cut -f2; stat -c "%F %t:%T" /dev/net/tun /dev/ts-tun; echo TUN=$TUN; id -u'
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[ "$output" = "0-$(($(nproc --all) - 1))
character special file a:c8
character special file a:c8
TUN=present
0" ] || fail "output: $output; stderr: $stderr"
	# config.json: the device and its env, no cpus or mems (the user has
	# no writable cpuset on cgroup v1)
	local cfg
	cfg=$(ls "$PHOME"/storage/vfs-containers/*/userdata/config.json)
	run jq -c '[.linux.resources.cpu.cpus, .linux.resources.cpu.mems,
		(.process.env | index("TUN=present") != null),
		([.linux.devices[]? | select(.path == "/dev/net/tun")] | length),
		[.linux.devices[]? | select(.path == "/dev/ts-tun")],
		[.mounts[] | select(.destination == "/dev/ts-tun")]]' "$cfg"
	assert_output '[null,null,true,1,[],[{"destination":"/dev/ts-tun","type":"bind","source":"/dev/net/tun","options":["bind"]}]]'
	# podman shows a runtime's stderr only when it fails: the wrapper kept
	# it.  One warning, naming what podman's runtime is (root of the
	# user's namespace, not "not root")
	run cat "$PHOME/runtime.err"
	assert_output "toposhim: warning: root of a user namespace and cgroup '/sys/fs/cgroup/cpuset' is not writable: cpus and mems are not placed, ignoring"
	# toposhim's state is the user's ($XDG_RUNTIME_DIR/toposhim), with no
	# allocation
	[ "$(stat -c '%u %a' "$PHOME/xdg/toposhim")" = "$PUID 700" ]
	run jq -c '.allocations' "$PHOME/xdg/toposhim/allocations.json"
	[ ! -e "$PHOME/xdg/toposhim/allocations.json" ] || assert_output '[]'
	# podman says nothing of it at a create that worked: creates.log in the
	# user's state dir keeps it, naming the container
	local cid
	cid=$(as_podman_user inspect --format '{{.Id}}' "$ID")
	run sed -E 's/^[0-9T:-]{19}Z pid [0-9]+: //' "$PHOME/xdg/toposhim/creates.log"
	assert_output "container '$cid': warning: root of a user namespace and cgroup '/sys/fs/cgroup/cpuset' is not writable: cpus and mems are not placed, ignoring"
	run as_podman_user rm "$ID"
	assert_success
}
