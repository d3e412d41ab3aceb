#!/usr/bin/env bats
# cdi-registry.bats - the CDI spec dirs as operators meet them, through
# `toposhimctl cdi`: a broken file next to good ones, a conflict in one dir,
# an override across dirs, YAML octal fileMode, a world-writable spec.
# Spec files come from ../shared/corpus/cdi (TS_SHARED_DIR).

bats_load_library bats-support
bats_load_library bats-assert

TS_SRCDIR=${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
TS_BUILDDIR=${TS_BUILDDIR:-$TS_SRCDIR}
CORPUS=${TS_SHARED_DIR:-$TS_SRCDIR/../shared}/corpus/cdi
C=cncf-tags_container-device-interface_

# toposhimctl once its command table has `cdi`, else the test build of ts_ctl_cdi.
ctl() {
	if "$TS_BUILDDIR/toposhimctl" cdi list >/dev/null 2>&1; then
		"$TS_BUILDDIR/toposhimctl" cdi "$@"
	else
		"$TS_BUILDDIR/tests/unit/cdi/toposhimctl-cdi" cdi "$@"
	fi
}

setup() {
	[ -d "$CORPUS" ] || skip "CDI corpus not found at $CORPUS"
	[ -x "$TS_BUILDDIR/tests/unit/cdi/toposhimctl-cdi" ] ||
		fail "not built: tests/unit/cdi/toposhimctl-cdi"
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
	install -m 0644 "$CORPUS/$1" "$2/${3:-$1}"
}

@test "a broken spec file is reported and does not hide good ones" {
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

@test "two files of one dir defining a device make it unavailable" {
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

@test "a later spec dir overrides an earlier one" {
	spec ${C}cache_test-override-etc-vendor1.yaml "$ETC" vendor1.yaml
	spec ${C}cache_test-override-run-vendor1.yaml "$RUN" vendor1.yaml
	run ctl list --json
	assert_success
	run jq -c '.devices' <<<"$output"
	assert_output "[{\"name\":\"vendor1.com/device=dev1\",\"spec\":\"$RUN/vendor1.yaml\"},{\"name\":\"vendor1.com/device=dev2\",\"spec\":\"$ETC/vendor1.yaml\"}]"
}

@test "YAML octal fileMode is injected as its value" {
	spec cri-o_cri-o_vendor0.yaml "$ETC" vendor0.yaml
	run ctl resolve vendor0.com/device=loop8 vendor0.com/device=loop9
	assert_success
	run jq -c '.linux.devices' <<<"$output"
	assert_output '[{"path":"/dev/loop8","type":"b","major":7,"minor":8,"fileMode":416},{"path":"/dev/loop9","type":"b","major":7,"minor":9,"fileMode":420}]'
}

@test "a world-writable spec file is refused" {
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
