#!/usr/bin/env bats
# contrib/podman/containers.conf, read by podman through CONTAINERS_CONF:
# a copy whose [engine.runtimes] toposhim paths name a wrapper that records
# each call (argv and the TOPOSHIM_* it was given) and carries this test's
# toposhim config, standing in for /etc/toposhim/config.json.

load containers
bats_load_library bats-support
bats_load_library bats-assert

CONF="${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}/contrib/podman/containers.conf"

setup() {
	require_root
	require_cmd podman
	containers_setup
	write_demo_spec
	write_config
	cat >"$WORK/toposhim-wrapper" <<WRAP
#!/bin/sh
echo "argv: \$*" >>"$WORK/calls"
echo "env: \$(env | grep '^TOPOSHIM_' | sort | tr '\n' ' ')" >>"$WORK/calls"
export TOPOSHIM_CONFIG="$WORK/toposhim.json"
exec "$TOPOSHIM" "\$@"
WRAP
	chmod 0755 "$WORK/toposhim-wrapper"
	sed "s|^toposhim = .*|toposhim = [\"/nonexistent/toposhim\", \"$WORK/toposhim-wrapper\"]|" \
		"$CONF" >"$WORK/containers.conf"
	make_rootfs "$WORK/rootfs"
}

teardown() {
	podman rm -f "$ID" >/dev/null 2>&1 || true
	containers_teardown
}

# podman_run [--OPTION=VALUE...] CMD...: run CMD in the busybox rootfs.
podman_run() {
	local opts=()
	while [[ "$1" == --* ]]; do
		opts+=("$1")
		shift
	done
	CONTAINERS_CONF="$WORK/containers.conf" podman --runtime toposhim run --rm --name "$ID" \
		--ulimit nofile=20000:20000 --ulimit nproc=1000:1000 "${opts[@]}" \
		--rootfs "$WORK/rootfs" "$@"
}

@test "podman: the copy differs from contrib/podman/containers.conf in the runtime path only" {
	run diff "$CONF" "$WORK/containers.conf"
	assert_output - <<OUT
29c29
< toposhim = ["/usr/bin/toposhim", "/usr/local/bin/toposhim"]
---
> toposhim = ["/nonexistent/toposhim", "$WORK/toposhim-wrapper"]
OUT
}

@test "podman --runtime toposhim: the device is injected, with --log-format json" {
	run podman_run --annotation=cdi.k8s.io/test=toposhim.test/dev=zero \
		sh -c 'stat -c "%F %t:%T" /dev/xzero; echo "XZERO=$XZERO"; cat /etc/mounted.txt'
	assert_success
	assert_output $'character special file 1:5\nXZERO=present\ntoposhim test mount'
	# runtime_supports_json: podman hands toposhim the JSON log
	run grep -c "^argv: --log-format=json --log [^ ]*/oci-log create --bundle " "$WORK/calls"
	assert_output 1
}

@test "podman: TOPOSHIM_* set in the shell never reach the runtime" {
	TOPOSHIM_CONFIG=/nonexistent/config.json TOPOSHIM_RUNTIME=/nonexistent/runc \
		run podman_run true
	assert_success
	run grep -c '^env: $' "$WORK/calls"
	[ "$output" -ge 1 ]
	run grep -c 'TOPOSHIM_' "$WORK/calls"
	assert_output 0
}

@test "podman: an unknown device fails the run with toposhim's message" {
	run podman_run --annotation=cdi.k8s.io/test=toposhim.test/dev=nope true
	assert_failure
	# podman puts the runtime's name (containers.conf) before the message of
	# its JSON log line, which starts with "toposhim:" as every log line does
	[[ "$output" == "Error: OCI runtime error: toposhim: toposhim: /"*"/userdata/config.json: '/annotations/cdi.k8s.io~1test': unresolvable CDI devices toposhim.test/dev=nope (no spec file in $WORK/cdi defines it)" ]] ||
		fail "output: $output"
}

# helper-7: run through a runtime path podman does not know to take a JSON
# log (its runtime_supports_json names), podman shows conmon's first bytes
# of the runtime's stderr; a CDI registry warning written before the
# refusal became the headline.  The same through the JSON log.
@test "podman: with a warning before it, the refusal is still the error podman shows (stderr and JSON log)" {
	local want
	printf 'cdiVersion: "0.6.0"\nkind: [\n' >"$WORK/cdi/garbled.yaml"
	chmod 0644 "$WORK/cdi/garbled.yaml"
	want="toposhim: /*/userdata/config.json: '/annotations/cdi.k8s.io~1test': unresolvable CDI devices toposhim.test/dev=nope (no spec file in $WORK/cdi defines it; ignored: $WORK/cdi/garbled.yaml: line 3 column 1: did not find expected node content while parsing a flow node)"
	run podman_run --annotation=cdi.k8s.io/test=toposhim.test/dev=nope true
	assert_failure
	# shellcheck disable=SC2053 # want is a pattern
	[[ "$output" == "Error: OCI runtime error: toposhim: "$want ]] || fail "output: $output"
	CONTAINERS_CONF="$WORK/containers.conf" run podman --runtime "$WORK/toposhim-wrapper" run \
		--rm --name "$ID" --ulimit nofile=20000:20000 --ulimit nproc=1000:1000 \
		--annotation=cdi.k8s.io/test=toposhim.test/dev=nope --rootfs "$WORK/rootfs" true
	rm -f "$WORK/cdi/garbled.yaml"
	assert_failure
	# shellcheck disable=SC2053
	[[ "${lines[0]}" == "Error: OCI runtime error: $WORK/toposhim-wrapper: "$want ]] ||
		fail "output: $output"
	# and nothing else: podman without a --log file shows every line of
	# the runtime's stderr (helper-24: the registry's warnings followed)
	[ "${#lines[@]}" -eq 1 ] || fail "output: $output"
}
