# Shared set-up for the bats files that run real containers through toposhim.
# Each test gets a private work dir with: a busybox rootfs bundle, a CDI spec
# dir, a toposhim config pointing at both, and a state dir.

: "${TS_BUILDDIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
TOPOSHIM="$TS_BUILDDIR/toposhim"
TOPOSHIMCTL="$TS_BUILDDIR/toposhimctl"

require_root() {
	[ "$(id -u)" -eq 0 ] || skip "needs root to run real containers (uid $(id -u))"
}

require_cmd() {
	command -v "$1" >/dev/null || skip "$1 is not installed"
}

# make_rootfs DIR: a busybox root file system.
make_rootfs() {
	mkdir -p "$1/bin" "$1/etc" "$1/dev" "$1/proc" "$1/sys" "$1/tmp"
	cp /bin/busybox "$1/bin/"
	for c in sh ls cat grep stat head wc env sleep echo od id tr cut true; do
		ln -sf busybox "$1/bin/$c"
	done
}

# make_bundle DIR ARGS_JSON: runc's default spec with the given process args.
make_bundle() {
	local dir=$1 args=$2
	mkdir -p "$dir"
	make_rootfs "$dir/rootfs"
	(cd "$dir" && runc spec)
	jq --argjson args "$args" '.process.terminal = false | .process.args = $args' \
		"$dir/config.json" >"$dir/config.json.new"
	mv "$dir/config.json.new" "$dir/config.json"
}

# set_annotation DIR KEY VALUE
set_annotation() {
	jq --arg k "$2" --arg v "$3" '.annotations[$k] = $v' "$1/config.json" >"$1/config.json.new"
	mv "$1/config.json.new" "$1/config.json"
}

# A CDI spec exposing the host's /dev/zero as /dev/xzero, with an env
# variable and a read-only bind mount, in $WORK/cdi.
write_demo_spec() {
	mkdir -p -m 0755 "$WORK/cdi"
	echo "toposhim test mount" >"$WORK/mounted.txt"
	cat >"$WORK/cdi/test.yaml" <<SPEC
cdiVersion: "0.6.0"
kind: toposhim.test/dev
devices:
  - name: zero
    containerEdits:
      deviceNodes:
        - path: /dev/xzero
          hostPath: /dev/zero
      env:
        - XZERO=present
      mounts:
        - hostPath: $WORK/mounted.txt
          containerPath: /etc/mounted.txt
          options: [ro, bind]
SPEC
	chmod 0644 "$WORK/cdi/test.yaml"
}

write_config() {
	cat >"$WORK/toposhim.json" <<CONF
{
  "cdi": { "spec_dirs": ["$WORK/cdi"] },
  "state_dir": "$WORK/state"${1:+,
  $1}
}
CONF
	export TOPOSHIM_CONFIG="$WORK/toposhim.json"
}

# A runtime binary for engines that cannot pass environment variables
# (ctr --runc-binary, podman --runtime): toposhim with this test's config.
write_engine_wrapper() {
	cat >"$WORK/toposhim-wrapper" <<WRAP
#!/bin/sh
export TOPOSHIM_CONFIG="$WORK/toposhim.json"
${1:+export TOPOSHIM_RUNTIME="$1"}
exec "$TOPOSHIM" "\$@"
WRAP
	chmod 0755 "$WORK/toposhim-wrapper"
}

containers_setup() {
	WORK=$(mktemp -d "${BATS_TMPDIR:-/tmp}/toposhim-it.XXXXXX")
	chmod 0755 "$WORK"
	ID="ts-$(basename "$WORK" | tr -dc 'a-zA-Z0-9' | tr 'A-Z' 'a-z')-$BATS_TEST_NUMBER"
}

containers_teardown() {
	runc delete --force "$ID" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}

# delete_test_containers: force-delete every runc container (default root)
# whose id starts with this test's $ID, so that a failed test leaves none.
delete_test_containers() {
	local c
	for c in $(runc list -q 2>/dev/null); do
		case "$c" in
		"$ID"*) runc delete --force "$c" >/dev/null 2>&1 || true ;;
		esac
	done
}

# cpus_allowed_in ID: the Cpus_allowed_list of a process run inside the
# running container ID (runc exec, so it is read from inside the container).
cpus_allowed_in() {
	runc exec "$1" grep Cpus_allowed_list /proc/self/status | cut -f2
}

# wait_for_file FILE: wait up to 5 s until FILE is not empty.
wait_for_file() {
	local _
	for _ in $(seq 50); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# start_daemon LOG CMD...: start CMD in a new session, detached from this
# test: stdin from /dev/null, stdout and stderr to LOG, and every other fd
# closed.  A daemon that kept bats' fd 3 or the pipe make's test driver
# reads would hold the test open until it exits, which a daemon never does:
# the test file, make check and CI would hang.
start_daemon() {
	local log=$1 fd
	shift
	(
		for fd in /proc/self/fd/*; do
			fd=${fd##*/}
			[ "$fd" -gt 2 ] && eval "exec $fd>&-"
		done
		exec setsid -f "$@" </dev/null >"$log" 2>&1
	) &
	wait $!
}

# start_containerd: containerd listening on its default socket (started
# detached when it is not running); skips the test when it cannot be.
start_containerd() {
	require_cmd ctr
	require_cmd containerd
	if ! ctr version >/dev/null 2>&1; then
		start_daemon "${BATS_TMPDIR:-/tmp}/containerd.log" containerd
		for _ in $(seq 50); do ctr version >/dev/null 2>&1 && break; sleep 0.2; done
	fi
	ctr version >/dev/null 2>&1 || skip "containerd did not start (see containerd.log)"
}

# alloc_json: the live allocations of this test's state dir, as
# `toposhimctl alloc list --json` prints them, compacted to one line with
# only the fields a test compares: [{id, state, class, cpus, mems, pinned}].
alloc_json() {
	"$TOPOSHIMCTL" alloc list --json |
		jq -c '[.[] | {id: .container_id, state, class, cpus, mems, pinned}]'
}
