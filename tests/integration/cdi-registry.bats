#!/usr/bin/env bats
# cdi-registry.bats - the CDI spec dirs as operators meet them, through
# `toposhimctl cdi`: a broken file next to good ones, a conflict in one dir,
# an override across dirs, YAML octal fileMode, a world-writable spec.
# Spec files are the project's own (tests/fixtures/cdi), then the same cases
# with other projects' files from the shared corpus (corpus/cdi: skipped
# when it is absent).

bats_load_library bats-support
bats_load_library bats-assert
load corpus

TS_BUILDDIR=${TS_BUILDDIR:-$TS_SRCDIR}
C=cncf-tags_container-device-interface_

# toposhimctl once its command table has `cdi`, else the test build of ts_ctl_cdi.
ctl() {
	"${CTL[@]}" cdi "$@"
}

setup() {
	if "$TS_BUILDDIR/toposhimctl" help 2>/dev/null | grep -q '^  cdi '; then
		CTL=("$TS_BUILDDIR/toposhimctl")
	elif [ -x "$TS_BUILDDIR/tests/unit/cdi/toposhimctl-cdi" ]; then
		CTL=("$TS_BUILDDIR/tests/unit/cdi/toposhimctl-cdi")
	else
		fail "neither toposhimctl with cdi nor tests/unit/cdi/toposhimctl-cdi is built"
	fi
	ETC="$BATS_TEST_TMPDIR/etc"
	RUN="$BATS_TEST_TMPDIR/run"
	mkdir -p "$ETC" "$RUN"
	chmod 755 "$BATS_TEST_TMPDIR" "$ETC" "$RUN"
	ROOT_OWNED=false
	[ "$(id -u)" = 0 ] && ROOT_OWNED=true
	export TOPOSHIM_CONFIG="$BATS_TEST_TMPDIR/toposhim.json"
	printf '{"cdi":{"spec_dirs":["%s","%s"],"require_root_owned":%s,"index_path":null}}\n' \
		"$ETC" "$RUN" "$ROOT_OWNED" >"$TOPOSHIM_CONFIG"
}

spec() { # spec CORPUS-FILE DIR [NAME]
	require_corpus "cdi/$1"
	install -m 0644 "$CORPUS_PATH" "$2/${3:-$1}"
}

own_spec() { # own_spec FIXTURE DIR [NAME]: a spec of tests/fixtures/cdi
	install -m 0644 "$TS_FIXTURES/cdi/$1" "$2/${3:-$1}"
}

@test "cdi list, validate and resolve write no CDI index, not the default one in /run/toposhim either" {
	[ "$(id -u)" = 0 ] || skip "needs root: a private mount namespace hides the host's /run"
	[ "${CTL[0]}" = "$TS_BUILDDIR/toposhimctl" ] || skip "toposhimctl has no cdi command"
	own_spec net.yaml "$ETC"
	# no index_path: the default, which a create moves into its state dir
	printf '{"state_dir":"%s","cdi":{"spec_dirs":["%s"]}}\n' \
		"$BATS_TEST_TMPDIR/state" "$ETC" >"$TOPOSHIM_CONFIG"
	mkdir -m 0700 "$BATS_TEST_TMPDIR/state"
	# helper-11: `cdi list` wrote /run/toposhim/cdi-index, the host's
	run unshare -m --propagation private sh -c '
		mount -t tmpfs none /run && mkdir /run/toposhim &&
		"$@" cdi list >/dev/null && "$@" cdi --spec-dir "$0" list >/dev/null &&
		"$@" cdi validate >/dev/null &&
		"$@" cdi resolve net.toposhim.test/nic=eth9 >/dev/null && ls -A /run/toposhim' "$ETC" "${CTL[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "" ]
	[ "$(ls -A "$BATS_TEST_TMPDIR/state")" = "" ]
}

@test "a spec dir named with --spec-dir that is missing or no directory is an error, not an empty list" {
	# helper-11: `cdi --spec-dir /nonexistent list` printed nothing, exit 0
	run ctl --spec-dir "$BATS_TEST_TMPDIR/none" list
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: cdi: --spec-dir '$BATS_TEST_TMPDIR/none': No such file or directory" ]
	touch "$BATS_TEST_TMPDIR/file"
	run ctl --spec-dir "$ETC" --spec-dir "$BATS_TEST_TMPDIR/file" validate
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: cdi: --spec-dir '$BATS_TEST_TMPDIR/file': Not a directory" ]
	# helper-22: a missing value read "unknown command '--spec-dir'"
	run ctl list --spec-dir
	[ "$status" -eq 2 ]
	run ctl --spec-dir
	[ "$status" -eq 2 ]
	[ "$output" = "toposhimctl: cdi: --spec-dir needs a directory" ]
	# configured dirs may be absent, as CDI's default ones often are
	printf '{"cdi":{"spec_dirs":["%s"],"index_path":null}}\n' "$BATS_TEST_TMPDIR/none" >"$TOPOSHIM_CONFIG"
	run ctl list
	[ "$status" -eq 0 ]
	[ "$output" = "" ]
}

@test "cdi list and resolve name a bad argument; resolve words a bad name as a create does" {
	# helper-16: the usage alone, and "unresolvable CDI devices dev"
	run ctl list --bogus
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "toposhimctl: cdi list: unexpected argument '--bogus'" ]
	[ "${lines[1]}" = "usage: toposhimctl cdi [--spec-dir DIR]... list [--json]" ]
	run ctl list --json extra
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "toposhimctl: cdi list: unexpected argument 'extra'" ]
	run ctl resolve net.toposhim.test/nic=eth0 --bogus
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "toposhimctl: cdi resolve: unexpected argument '--bogus'" ]
	run ctl resolve
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "toposhimctl: cdi resolve: missing device name" ]
	run ctl bogus
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "toposhimctl: cdi: unknown command 'bogus'" ]
	run ctl
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "toposhimctl: cdi: missing command" ]
	run ctl resolve dev
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: cdi: invalid qualified device name 'dev': missing '='" ]
	run ctl resolve net.toposhim.test/nic=no-such-device
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: cdi: unresolvable CDI devices net.toposhim.test/nic=no-such-device" ]
}

@test "own specs: a broken spec file is reported and does not hide good ones" {
	own_spec blk.yaml "$ETC"
	own_spec broken.yaml "$ETC"
	own_spec net.yaml "$RUN"
	run ctl list
	assert_success
	assert_output "blk.toposhim.test/disk=a	$ETC/blk.yaml
blk.toposhim.test/disk=b	$ETC/blk.yaml
net.toposhim.test/nic=eth9	$RUN/net.yaml
rejected	$ETC/broken.yaml: '/devices': expected array, got string"
	run ctl validate
	assert_failure 1
	assert_output "$ETC/broken.yaml: devices: expected array, got string"
	run ctl validate "$ETC/blk.yaml"
	assert_success
	assert_output ""
}

@test "own specs: two files of one dir defining a device make it unavailable" {
	own_spec conflict-a.yaml "$RUN"
	own_spec conflict-b.yaml "$RUN"
	run ctl list
	assert_success
	assert_output "dup.toposhim.test/dev=two	$RUN/conflict-a.yaml
rejected	$RUN/conflict-a.yaml: conflicting device 'dup.toposhim.test/dev=one' (defined by 2 spec files of the same dir), device unavailable
rejected	$RUN/conflict-b.yaml: conflicting device 'dup.toposhim.test/dev=one' (defined by 2 spec files of the same dir), device unavailable"
	run ctl resolve dup.toposhim.test/dev=one
	assert_failure 1
	assert_output "toposhimctl: cdi: unresolvable CDI devices dup.toposhim.test/dev=one"
}

@test "own specs: a later spec dir overrides an earlier one" {
	own_spec override-early.yaml "$ETC" layer.yaml
	own_spec override-late.yaml "$RUN" layer.yaml
	run ctl list --json
	assert_success
	run jq -c '.devices' <<<"$output"
	assert_output "[{\"name\":\"layer.toposhim.test/dev=p\",\"spec\":\"$RUN/layer.yaml\"},{\"name\":\"layer.toposhim.test/dev=q\",\"spec\":\"$ETC/layer.yaml\"}]"
	run ctl resolve layer.toposhim.test/dev=p
	assert_success
	run jq -c '.process.env' <<<"$output"
	assert_output '["TS_LAYER=late"]'
}

@test "own specs: YAML octal fileMode is injected as its value" {
	own_spec blk.yaml "$ETC"
	run ctl resolve blk.toposhim.test/disk=a blk.toposhim.test/disk=b
	assert_success
	run jq -c '.linux.devices' <<<"$output"
	assert_output '[{"path":"/dev/tsblk-a","type":"b","major":7,"minor":40,"fileMode":416},{"path":"/dev/tsblk-b","type":"b","major":7,"minor":41,"fileMode":388}]'
}

@test "own specs: a world-writable spec file is refused" {
	[ "$(id -u)" = 0 ] || skip "needs root: spec files must be root-owned (uid $(id -u))"
	own_spec blk.yaml "$ETC"
	own_spec net.yaml "$ETC"
	chmod 0666 "$ETC/net.yaml"
	run ctl list
	assert_success
	assert_output "blk.toposhim.test/disk=a	$ETC/blk.yaml
blk.toposhim.test/disk=b	$ETC/blk.yaml
rejected	$ETC/net.yaml: refusing spec file writable by non-root (mode 0666, gid 0)"
	run ctl resolve net.toposhim.test/nic=eth9
	assert_failure 1
	assert_output "toposhimctl: cdi: unresolvable CDI devices net.toposhim.test/nic=eth9"
}

@test "corpus specs: a broken spec file is reported and does not hide good ones" {
	spec cri-o_cri-o_vendor0.yaml "$ETC" vendor0.yaml
	spec cri-o_cri-o_vendor1.yaml "$ETC" vendor1.yaml
	spec ${C}regressions_test-vendor2.yaml "$RUN" vendor2.yaml
	run ctl list
	assert_success
	assert_output "vendor0.com/device=loop8	$ETC/vendor0.yaml
vendor0.com/device=loop9	$ETC/vendor0.yaml
vendor2.com/device=bar	$RUN/vendor2.yaml
rejected	$ETC/vendor1.yaml: '/devices': expected array, got string"
	run ctl validate
	assert_failure 1
	assert_output "$ETC/vendor1.yaml: devices: expected array, got string"
	run ctl validate "$ETC/vendor0.yaml"
	assert_success
	assert_output ""
}

@test "corpus specs: two files of one dir defining a device make it unavailable" {
	spec ${C}cache_test-conflict-run-vendor1.yaml "$RUN" vendor1.yaml
	spec ${C}cache_test-conflict-run-vendor1-other.yaml "$RUN" vendor1-other.yaml
	run ctl list
	assert_success
	assert_output "vendor1.com/device=dev2	$RUN/vendor1.yaml
rejected	$RUN/vendor1-other.yaml: conflicting device 'vendor1.com/device=dev1' (defined by 2 spec files of the same dir), device unavailable
rejected	$RUN/vendor1.yaml: conflicting device 'vendor1.com/device=dev1' (defined by 2 spec files of the same dir), device unavailable"
	run ctl resolve vendor1.com/device=dev1
	assert_failure 1
	assert_output "toposhimctl: cdi: unresolvable CDI devices vendor1.com/device=dev1"
}

@test "corpus specs: a later spec dir overrides an earlier one" {
	spec ${C}cache_test-override-etc-vendor1.yaml "$ETC" vendor1.yaml
	spec ${C}cache_test-override-run-vendor1.yaml "$RUN" vendor1.yaml
	run ctl list --json
	assert_success
	run jq -c '.devices' <<<"$output"
	assert_output "[{\"name\":\"vendor1.com/device=dev1\",\"spec\":\"$RUN/vendor1.yaml\"},{\"name\":\"vendor1.com/device=dev2\",\"spec\":\"$ETC/vendor1.yaml\"}]"
}

@test "corpus specs: YAML octal fileMode is injected as its value" {
	spec cri-o_cri-o_vendor0.yaml "$ETC" vendor0.yaml
	run ctl resolve vendor0.com/device=loop8 vendor0.com/device=loop9
	assert_success
	run jq -c '.linux.devices' <<<"$output"
	assert_output '[{"path":"/dev/loop8","type":"b","major":7,"minor":8,"fileMode":416},{"path":"/dev/loop9","type":"b","major":7,"minor":9,"fileMode":420}]'
}

@test "corpus specs: a world-writable spec file is refused" {
	[ "$(id -u)" = 0 ] || skip "needs root: spec files must be root-owned (uid $(id -u))"
	spec cri-o_cri-o_vendor0.yaml "$ETC" vendor0.yaml
	spec ${C}regressions_test-vendor2.yaml "$ETC" vendor2.yaml
	chmod 0666 "$ETC/vendor2.yaml"
	run ctl list
	assert_success
	assert_output "vendor0.com/device=loop8	$ETC/vendor0.yaml
vendor0.com/device=loop9	$ETC/vendor0.yaml
rejected	$ETC/vendor2.yaml: refusing spec file writable by non-root (mode 0666, gid 0)"
	run ctl resolve vendor2.com/device=bar
	assert_failure 1
	assert_output "toposhimctl: cdi: unresolvable CDI devices vendor2.com/device=bar"
}

# Differential test against podman 4.3.1's own CDI support: the same spec
# injected by `podman run --device` and by toposhim through the annotation
# (into the config podman writes without the device).  A fake runtime records
# the config.json podman hands it.  podman 4.3 reads only /etc/cdi and
# /var/run/cdi, so the spec goes to /var/run/cdi under a unique name.  The
# spec declares 0.5.0 because it uses hostPath: podman 4.3 also accepts it
# declared as 0.3.0 (its CDI predates the minimum-version checks), toposhim
# rejects that, as CDI main does.
DIFF_SPEC='{"cdiVersion":"0.5.0","kind":"toposhim-difftest.example.com/dev",
 "containerEdits":{"env":["SPEC=1","TERM=cdi"]},
 "devices":[{"name":"a","containerEdits":{"env":["A=1"],
  "deviceNodes":[{"path":"/dev/xzero","hostPath":"/dev/zero"}],
  "mounts":[{"hostPath":"/etc/hostname","containerPath":"/etc/cdi-host","options":["ro","bind"]}],
  "hooks":[{"hookName":"prestart","path":"/bin/true","args":["true"]}]}}]}'

teardown() {
	[ -n "${DIFF_SPEC_FILE:-}" ] && rm -f "$DIFF_SPEC_FILE"
	[ -n "${DIFF_MADE_DIR:-}" ] && rmdir /var/run/cdi 2>/dev/null
	return 0
}

# podman_config OUT ARG...: run podman with the recording runtime, copy its config.json to OUT.
podman_config() {
	local out=$1
	shift
	rm -f "$BATS_TEST_TMPDIR/recorded.json"
	podman --runtime "$BATS_TEST_TMPDIR/record-runtime" run --rm \
		--ulimit nofile=20000:20000 --ulimit nproc=1000:1000 "$@" \
		--rootfs "$BATS_TEST_TMPDIR/rootfs" true >/dev/null 2>&1 || true
	[ -s "$BATS_TEST_TMPDIR/recorded.json" ] || fail "podman did not call the runtime: $*"
	cp "$BATS_TEST_TMPDIR/recorded.json" "$out"
}

@test "injection matches podman 4.3's CDI support, differences explained" {
	[ "$(id -u)" = 0 ] || skip "needs root for podman and /var/run/cdi (uid $(id -u))"
	command -v podman >/dev/null || skip "podman is not installed"
	command -v jq >/dev/null || skip "jq is not installed"
	[ -x /bin/busybox ] || skip "busybox-static is not installed"
	mkdir -p "$BATS_TEST_TMPDIR/rootfs/bin" "$BATS_TEST_TMPDIR/bundle"
	cp /bin/busybox "$BATS_TEST_TMPDIR/rootfs/bin/"
	ln -s busybox "$BATS_TEST_TMPDIR/rootfs/bin/true"
	cat >"$BATS_TEST_TMPDIR/record-runtime" <<-SCRIPT
		#!/bin/sh
		prev=
		for a in "\$@"; do
			[ "\$prev" = --bundle ] && cp "\$a/config.json" "$BATS_TEST_TMPDIR/recorded.json"
			prev=\$a
		done
		echo "recording runtime: not running containers" >&2
		exit 1
	SCRIPT
	chmod +x "$BATS_TEST_TMPDIR/record-runtime"
	[ -d /var/run/cdi ] || { mkdir -m 0755 /var/run/cdi && DIFF_MADE_DIR=1; }
	DIFF_SPEC_FILE=/var/run/cdi/toposhim-difftest-$$.json
	printf '%s\n' "$DIFF_SPEC" >"$DIFF_SPEC_FILE"
	printf '{"cdi":{"spec_dirs":["/var/run/cdi"],"index_path":null}}\n' >"$TOPOSHIM_CONFIG"

	podman_config "$BATS_TEST_TMPDIR/podman.json" --device toposhim-difftest.example.com/dev=a
	podman_config "$BATS_TEST_TMPDIR/bundle/config.json" \
		--annotation cdi.k8s.io/difftest=toposhim-difftest.example.com/dev=a
	run ctl resolve toposhim-difftest.example.com/dev=a --bundle "$BATS_TEST_TMPDIR/bundle" --json
	assert_success
	printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/toposhim.json"
	P=$BATS_TEST_TMPDIR/podman.json
	T=$BATS_TEST_TMPDIR/toposhim.json

	# env: podman 4.3 vendors CDI v0.5, which appends "TERM=cdi" after the
	# image's TERM=xterm; CDI main (and toposhim) replaces TERM= in place.
	# (podman's own entries come in varying order, so compare by rule.)
	run jq -c '.process.env[-3:]' "$P"
	assert_output '["SPEC=1","TERM=cdi","A=1"]'
	run jq -c '[.process.env[] | select(startswith("TERM="))]' "$P"
	assert_output '["TERM=xterm","TERM=cdi"]'
	want=$(jq -c '[.process.env[] | if startswith("TERM=") then "TERM=cdi" else . end] + ["SPEC=1","A=1"]' \
		"$BATS_TEST_TMPDIR/bundle/config.json")
	run jq -c '.process.env' "$T"
	assert_output "$want"
	run jq -c '[.process.env[] | select(startswith("TERM="))]' "$T"
	assert_output '["TERM=cdi"]'

	# device node: CDI main fills fileMode from the host node (/dev/zero is
	# 0666 = 438); podman 4.3's CDI leaves it to the runtime.  Otherwise equal.
	run jq -c '.linux.devices' "$P"
	assert_output '[{"path":"/dev/xzero","type":"c","major":1,"minor":5}]'
	run jq -c '.linux.devices' "$T"
	assert_output '[{"path":"/dev/xzero","type":"c","major":1,"minor":5,"fileMode":438}]'

	# cgroup rule, mount: identical.
	for f in "$P" "$T"; do
		run jq -cS '[.linux.resources.devices[] | select(.allow)]' "$f"
		assert_output '[{"access":"rwm","allow":true,"major":1,"minor":5,"type":"c"}]'
		run jq -cS '[.mounts[] | select(.destination == "/etc/cdi-host")]' "$f"
		assert_output '[{"destination":"/etc/cdi-host","options":["ro","bind"],"source":"/etc/hostname"}]'
	done
	# hook: the spec gives it no env; podman leaves it absent (runc would
	# run a createContainer hook with the container's env), toposhim gives
	# it a minimal PATH (docs/security.md).
	run jq -c '.hooks' "$P"
	assert_output '{"prestart":[{"path":"/bin/true","args":["true"]}]}'
	run jq -c '.hooks' "$T"
	assert_output '{"prestart":[{"path":"/bin/true","args":["true"],"env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}]}'

	# toposhim adds no annotation of its own (create keeps its record in
	# toposhim-cdi.json), so the annotations are those of the bundle.
	run jq -c '.annotations' "$T"
	assert_output "$(jq -c '.annotations' "$BATS_TEST_TMPDIR/bundle/config.json")"
}
