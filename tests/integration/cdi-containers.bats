#!/usr/bin/env bats
# Real containers with a CDI device injected by toposhim: runc, crun,
# containerd (ctr) and podman.

load containers

DEVCHECK='stat -c "%F %t:%T" /dev/xzero; head -c 5 /dev/xzero | wc -c; echo "XZERO=$XZERO"; cat /etc/mounted.txt'
EXPECTED_OUT='character special file 1:5
5
XZERO=present
toposhim test mount'

# a containerd of this file's own unless one is running (containers.bash)
setup_file() {
	containerd_setup_file
}

teardown_file() {
	containerd_teardown_file
}

setup() {
	require_root
	containers_setup
	write_demo_spec
	write_config
}

teardown() {
	containers_teardown
}

@test "runc run: the CDI device node, env and mount are in the container" {
	make_bundle "$WORK/b" "$(jq -cn --arg c "$DEVCHECK" '["sh","-c",$c]')"
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=zero
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$EXPECTED_OUT" ] || fail "output: $output"
	# config.json shows exactly the injected edits
	# (fileMode 438 = 0666, from the host node, as CDI fills a missing mode)
	run jq -cS '.linux.devices[] | select(.path == "/dev/xzero")' "$WORK/b/config.json"
	[ "$output" = '{"fileMode":438,"major":1,"minor":5,"path":"/dev/xzero","type":"c"}' ]
	run jq -cS '.linux.resources.devices[-1]' "$WORK/b/config.json"
	[ "$output" = '{"access":"rwm","allow":true,"major":1,"minor":5,"type":"c"}' ]
	# what toposhim injected is in its own file (the placement file), not in
	# config.json
	run jq -c '{version, id, devices}' "$WORK/b/toposhim-placement.json"
	[ "$output" = "{\"version\":1,\"id\":\"$ID\",\"devices\":[\"toposhim.test/dev=zero\"]}" ]
	[ ! -e "$WORK/b/toposhim-cdi.json" ]
	run jq -c '.annotations' "$WORK/b/config.json"
	[ "$output" = '{"cdi.k8s.io/test":"toposhim.test/dev=zero"}' ]
}

@test "runc create + start: the device is usable from runc exec" {
	make_bundle "$WORK/b" '["sleep","60"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=zero
	"$TOPOSHIM" create --bundle "$WORK/b" "$ID" </dev/null >"$WORK/create.out" 2>&1
	"$TOPOSHIM" start "$ID"
	run runc exec "$ID" sh -c "$DEVCHECK"
	[ "$status" -eq 0 ]
	[ "$output" = "$EXPECTED_OUT" ] || fail "output: $output"
	"$TOPOSHIM" kill "$ID" KILL
	"$TOPOSHIM" delete --force "$ID"
}

@test "runc: a retried create does not inject twice" {
	make_bundle "$WORK/b" '["true"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=zero
	"$TOPOSHIM" create --bundle "$WORK/b" "$ID" </dev/null >/dev/null 2>&1
	runc delete --force "$ID"
	cp "$WORK/b/config.json" "$WORK/first.json"
	"$TOPOSHIM" create --bundle "$WORK/b" "$ID" </dev/null >/dev/null 2>&1
	cmp "$WORK/first.json" "$WORK/b/config.json"
	run jq '[.linux.devices[] | select(.path == "/dev/xzero")] | length' "$WORK/b/config.json"
	[ "$output" = 1 ]
}

# helper-18: a node whose spec gives its numbers is made with them (CDI
# never stats its host path); a regular file at that path failed the
# create in the NUMA hint ("not a device node").
@test "runc: a node with numbers whose hostPath is no device node is made from the numbers" {
	cat >>"$WORK/cdi/test.yaml" <<SPEC
  - name: numbered
    containerEdits:
      deviceNodes:
        - path: /dev/xnull
          hostPath: $WORK/mounted.txt
          type: c
          major: 1
          minor: 3
SPEC
	make_bundle "$WORK/b" '["stat","-c","%F %t:%T","/dev/xnull"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=numbered
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "character special file 1:3" ]
}

@test "runc: an unknown device fails the create and leaves config.json byte-identical" {
	make_bundle "$WORK/b" '["true"]'
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/dev=zero,toposhim.test/dev=nope"
	cp "$WORK/b/config.json" "$WORK/orig.json"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"unresolvable CDI devices toposhim.test/dev=nope"* ]]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	run runc state "$ID"
	[ "$status" -ne 0 ]
}

@test "crun run: the CDI device node, env and mount are in the container" {
	require_cmd crun
	make_bundle "$WORK/b" "$(jq -cn --arg c "$DEVCHECK" '["sh","-c",$c]')"
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=zero
	# crun refuses hybrid cgroups: run it where the cgroup2 mount is hidden
	# (ENVIRONMENT.md); on a pure v1/v2 host this is a no-op.
	run unshare -m --propagation private sh -c \
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh \
		env TOPOSHIM_RUNTIME="$(command -v crun)" "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$EXPECTED_OUT" ] || fail "output: $output"
}

# state_and_hooks RUNTIME STATUS: a CDI-device container through toposhim with
# RUNTIME; `state` and a poststart hook's stdin (the state every hook reads)
# must carry exactly the annotations the user set, nothing of toposhim's,
# and the device must work from exec.  STATUS: what the hook's state says.
state_and_hooks() {
	make_bundle "$WORK/b" '["sleep","60"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=zero
	set_annotation "$WORK/b" user.example/note "kept as is"
	jq --arg out "$WORK/hook.json" \
		'.hooks.poststart = [{path: "/bin/sh", args: ["sh", "-c", "cat >\"$0\"", $out]}]' \
		"$WORK/b/config.json" >"$WORK/b/config.json.new"
	mv "$WORK/b/config.json.new" "$WORK/b/config.json"
	cat >"$WORK/seq.sh" <<-SEQ
		set -e
		export TOPOSHIM_RUNTIME="$1"
		"$TOPOSHIM" create --bundle "$WORK/b" "$ID" </dev/null >/dev/null 2>"$WORK/create.err"
		"$TOPOSHIM" start "$ID"
		"$TOPOSHIM" exec "$ID" sh -c '$DEVCHECK' >"$WORK/exec.out"
		"$TOPOSHIM" state "$ID" >"$WORK/state.json"
		"$TOPOSHIM" kill "$ID" KILL
		# (a delete racing the init's exit leaves its cgroups behind)
		for _ in \$(seq 50); do
			"$TOPOSHIM" state "$ID" | grep -q '"status": *"stopped"' && break
			sleep 0.1
		done
		"$TOPOSHIM" delete --force "$ID"
	SEQ
	# crun refuses hybrid cgroups: run it where the cgroup2 mount is hidden
	# (ENVIRONMENT.md); on a pure v1/v2 host this is a no-op.
	run unshare -m --propagation private sh -c \
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec sh "$1"' sh "$WORK/seq.sh"
	[ "$status" -eq 0 ] || { echo "$output"; cat "$WORK/create.err"; false; }
	[ "$(cat "$WORK/exec.out")" = "$EXPECTED_OUT" ]
	want='{"cdi.k8s.io/test":"toposhim.test/dev=zero","user.example/note":"kept as is"}'
	run jq -cS '.annotations' "$WORK/state.json"
	[ "$output" = "$want" ]
	run jq -cS '.annotations' "$WORK/hook.json"
	[ "$output" = "$want" ]
	# (runc 1.1 hands poststart hooks the state of before start, crun after)
	run jq -r '.id + " " + .status' "$WORK/hook.json"
	[ "$output" = "$ID $2" ]
	# toposhim's record of the injection is its own file
	run jq -c '.devices' "$WORK/b/toposhim-placement.json"
	[ "$output" = '["toposhim.test/dev=zero"]' ]
}

@test "runc: state and the hooks' stdin carry only the user's annotations" {
	state_and_hooks "$(command -v runc)" created
}

@test "crun: state and the hooks' stdin carry only the user's annotations" {
	require_cmd crun
	state_and_hooks "$(command -v crun)" running
}

@test "containerd: ctr run with --runc-binary toposhim injects the device" {
	start_containerd
	write_engine_wrapper
	make_rootfs "$WORK/rootfs"
	run ctr run --rm --rootfs --runc-binary "$WORK/toposhim-wrapper" \
		--annotation cdi.k8s.io/test=toposhim.test/dev=zero --env PATH=/bin \
		"$WORK/rootfs" "$ID" /bin/sh -c "$DEVCHECK"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$EXPECTED_OUT" ] || fail "output: $output"
}

@test "containerd: an unknown device makes ctr run fail with toposhim's message" {
	start_containerd
	write_engine_wrapper
	make_rootfs "$WORK/rootfs"
	run ctr run --rm --rootfs --runc-binary "$WORK/toposhim-wrapper" \
		--annotation cdi.k8s.io/test=toposhim.test/dev=nope --env PATH=/bin \
		"$WORK/rootfs" "$ID" /bin/true
	[ "$status" -ne 0 ]
	[[ "$output" == *"unresolvable CDI devices toposhim.test/dev=nope"* ]]
	ctr containers delete "$ID" >/dev/null 2>&1 || true
}

podman_run() {
	podman --runtime "$WORK/toposhim-wrapper" run --rm --name "$ID" \
		--ulimit nofile=20000:20000 --ulimit nproc=1000:1000 "$@"
}

@test "podman: --runtime toposhim injects the device" {
	require_cmd podman
	write_engine_wrapper
	make_rootfs "$WORK/rootfs"
	run podman_run --annotation cdi.k8s.io/test=toposhim.test/dev=zero \
		--rootfs "$WORK/rootfs" sh -c "$DEVCHECK"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$EXPECTED_OUT" ] || fail "output: $output"
}

@test "podman: an unknown device makes podman run fail with toposhim's message" {
	require_cmd podman
	write_engine_wrapper
	make_rootfs "$WORK/rootfs"
	run podman_run --annotation cdi.k8s.io/test=toposhim.test/dev=nope \
		--rootfs "$WORK/rootfs" true
	[ "$status" -ne 0 ]
	[[ "$output" == *"unresolvable CDI devices toposhim.test/dev=nope"* ]]
}

# notype_spec: toposhim.test/notype=plain mounts $WORK/notype.txt with no
# type and no options, =ro with options [ro] only (issue 14).
notype_spec() {
	echo "bound" >"$WORK/notype.txt"
	cat >"$WORK/cdi/notype.yaml" <<SPEC
cdiVersion: "0.6.0"
kind: toposhim.test/notype
devices:
  - name: plain
    containerEdits:
      mounts:
        - {hostPath: $WORK/notype.txt, containerPath: /etc/notype.txt}
  - name: ro
    containerEdits:
      mounts:
        - {hostPath: $WORK/notype.txt, containerPath: /etc/notype-ro.txt, options: [ro]}
SPEC
	chmod 0644 "$WORK/cdi/notype.yaml"
}

NOTYPE_CHECK='cat /etc/notype.txt; echo more >>/etc/notype.txt && echo rw; { echo x >>/etc/notype-ro.txt; } 2>/dev/null || echo ro'

@test "runc: a CDI mount without type or options is a bind mount, ro only when asked" {
	notype_spec
	make_bundle "$WORK/b" "$(jq -cn --arg c "$NOTYPE_CHECK" '["sh","-c",$c]')"
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/notype=plain,toposhim.test/notype=ro"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = $'bound\nrw\nro' ] || { echo "$output"; false; }
	[ "$(cat "$WORK/notype.txt")" = $'bound\nmore' ]
	run jq -c '[.mounts[] | select(.destination | startswith("/etc/notype"))]' "$WORK/b/config.json"
	[ "$output" = "[{\"destination\":\"/etc/notype.txt\",\"type\":\"bind\",\"source\":\"$WORK/notype.txt\",\"options\":[\"rbind\"]},{\"destination\":\"/etc/notype-ro.txt\",\"type\":\"bind\",\"source\":\"$WORK/notype.txt\",\"options\":[\"rbind\",\"ro\"]}]" ]
}

@test "crun: a CDI mount without type or options is a bind mount, ro only when asked" {
	require_cmd crun
	notype_spec
	make_bundle "$WORK/b" "$(jq -cn --arg c "$NOTYPE_CHECK" '["sh","-c",$c]')"
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/notype=plain,toposhim.test/notype=ro"
	run unshare -m --propagation private sh -c \
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh \
		env TOPOSHIM_RUNTIME="$(command -v crun)" "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = $'bound\nrw\nro' ] || { echo "$output"; false; }
}
