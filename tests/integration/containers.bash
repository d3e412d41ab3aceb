# Shared set-up for the bats files that run real containers through toposhim.
# Each test gets a private work dir with: a busybox rootfs bundle, a CDI spec
# dir, a toposhim config pointing at both, and a state dir.

: "${TS_BUILDDIR:=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}"
# shellcheck source=tests/integration/corpus.bash
source "${BASH_SOURCE[0]%/*}/corpus.bash"
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

# plain_entry ID: the class, cpus and mems of plain container ID (no
# request: config.json left as it is, no record) from the journal of plain
# containers (src/state/plain.h), the last entry of that id; nothing when
# the journal has none.
plain_entry() {
	[ -f "$WORK/state/plain-containers" ] || return 0
	jq -c --arg id "$1" 'select(.id == $id) | {class, cpus, mems}' \
		"$WORK/state/plain-containers" | tail -n 1
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

# cdi_config: the "cdi" member of a test's toposhim config: $WORK/cdi as
# the spec dir.  Run by a normal user (the fake-runtime tests), the spec
# files are that user's: require_root_owned is turned off then.
cdi_config() {
	local owned=""
	[ "$(id -u)" -eq 0 ] || owned=', "require_root_owned": false'
	echo "\"cdi\": { \"spec_dirs\": [\"$WORK/cdi\"]$owned }"
}

# write_config [MEMBERS]: $WORK/toposhim.json with the spec dir, the state
# dir, the test policy (helpers.bash; unless MEMBERS has a "policy") and
# MEMBERS.
write_config() {
	local policy=",
  $TS_TEST_POLICY"
	case "${1:-}" in *'"policy"'*) policy="" ;; esac
	cat >"$WORK/toposhim.json" <<CONF
{
  $(cdi_config),
  "state_dir": "$WORK/state"$policy${1:+,
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

# rm_test_cgroups: remove this test's top-level cgroups ($ID, $ID-*), in
# every hierarchy, with the cgroups under them (a runtime leaves a
# cgroupsPath's parents behind).  A runtime removes a container's cgroups at delete;
# one left here means a container of the test was not deleted (a crun
# container deleted by runc left its init running this way), or that its
# killed init has not left the cgroup yet: each is tried again for up to
# 5 s, then the test fails naming the dirs and the processes still in
# them.
rm_test_cgroups() {
	local d try left
	for try in $(seq 25); do
		left=""
		for d in /sys/fs/cgroup/*/"$ID" /sys/fs/cgroup/*/"$ID"-* /sys/fs/cgroup/"$ID" \
			/sys/fs/cgroup/"$ID"-*; do
			[ -d "$d" ] || continue
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			[ ! -d "$d" ] || left="$left $d"
		done
		[ -n "$left" ] || return 0
		sleep 0.2
	done
	for d in $left; do
		echo "teardown: cgroup $d still holds:" $(cat $(find "$d" -name cgroup.procs) 2>/dev/null) >&2
	done
	return 1
}

containers_teardown() {
	local rc=0
	delete_test_containers
	rm_test_cgroups || rc=1
	rm -rf "$WORK"
	return $rc
}

# delete_test_containers: force-delete every runc container (default root)
# whose id starts with this test's $ID, so that a failed test leaves none.
# runc's delete can fail while the killed init's cgroup is still busy
# (seen once under CI's load: three stopped containers stayed in
# /run/runc), so it is tried again for up to 5 s, and what stays is said.
delete_test_containers() {
	local c left try
	for try in $(seq 25); do
		left=""
		for c in $(runc list -q 2>/dev/null); do
			case "$c" in
			"$ID"*) runc delete --force "$c" >/dev/null 2>&1 || left="$left $c" ;;
			esac
		done
		[ -n "$left" ] || return 0
		sleep 0.2
	done
	echo "teardown: runc could not delete$left" >&2
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

# containerd for the tests that run `ctr`.  A file whose tests call
# start_containerd has
#	setup_file() { containerd_setup_file; }
#	teardown_file() { containerd_teardown_file; }
# (start_containerd fails, saying so, when setup_file did not run it).
#
# A containerd already answering on $TS_CONTAINERD_ADDRESS (default: the
# system socket /run/containerd/containerd.sock) is used as it is: never
# started, reconfigured or stopped by the tests.  Otherwise the file starts
# its own, with a clean environment (env -i, PATH only: a daemon that kept
# a test's TOPOSHIM_CONFIG or bats' variables would break every later
# container on the host), its own config, socket, root and state in one
# directory, /tmp/ts-containerd.XXXXXX.  It is stopped, with its containers
# and shims, and the directory removed, by containerd_teardown_file; when
# the file is interrupted (TERM, HUP; bats runs teardown_file on INT), by a
# trap; and if bats itself dies (KILL), by a watchdog that waits for the
# bats process and then does the same.

TS_DAEMON_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

containerd_setup_file() {
	local addr=${TS_CONTAINERD_ADDRESS:-/run/containerd/containerd.sock} d _
	TS_CONTAINERD_INFO="$BATS_FILE_TMPDIR/containerd.info"
	export TS_CONTAINERD_INFO
	if [ "$(id -u)" -ne 0 ]; then
		echo "skip needs root to run containerd (uid $(id -u))" >"$TS_CONTAINERD_INFO"
		return 0
	fi
	if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
		echo "skip containerd is not installed" >"$TS_CONTAINERD_INFO"
		return 0
	fi
	# (ctr waits 10 s for a socket that is not there)
	if [ -S "$addr" ] && ctr --address "$addr" version >/dev/null 2>&1; then
		echo "use $addr" >"$TS_CONTAINERD_INFO"
		return 0
	fi
	d=$(mktemp -d /tmp/ts-containerd.XXXXXX)
	cat >"$d/config.toml" <<CONF
version = 2
root = "$d/root"
state = "$d/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$d/containerd.sock"
[ttrpc]
  address = "$d/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
CONF
	write_containerd_stop "$d"
	echo "own $d/containerd.sock $d" >"$TS_CONTAINERD_INFO"
	trap 'containerd_teardown_file; exit 143' TERM
	trap 'containerd_teardown_file; exit 129' HUP
	start_daemon "$d/containerd.log" env -i PATH="$TS_DAEMON_PATH" \
		sh -c 'echo $$ >"$1/pid"; exec containerd --config "$1/config.toml"' sh "$d"
	# the watchdog: bats-exec-file ($$ here) gone, the daemon goes too
	start_daemon /dev/null env -i PATH="$TS_DAEMON_PATH" sh -c \
		'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
		[ ! -d "$2" ] || sh "$2/stop"' sh "$$" "$d"
	for _ in $(seq 100); do
		[ -S "$d/containerd.sock" ] &&
			ctr --address "$d/containerd.sock" version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "skip containerd did not start: $(tail -n 3 "$d/containerd.log" | tr '\n' ' ')" \
		>"$TS_CONTAINERD_INFO"
	sh "$d/stop"
}

# write_containerd_stop DIR: DIR/stop, which stops the containerd of DIR
# (its tasks killed and deleted, its containers deleted, then TERM, KILL
# after 10 s), kills the shims serving its socket, unmounts what is left
# under DIR and removes DIR.  Safe to run twice.
write_containerd_stop() {
	cat >"$1/stop" <<'STOP'
#!/bin/sh
d=$(dirname "$0")
addr=$d/containerd.sock
pid=$(cat "$d/pid" 2>/dev/null)
if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
	for ns in $(ctr -a "$addr" --timeout 10s namespaces ls -q 2>/dev/null); do
		for t in $(ctr -a "$addr" -n "$ns" --timeout 10s tasks ls -q 2>/dev/null); do
			ctr -a "$addr" -n "$ns" --timeout 10s tasks kill -s SIGKILL "$t" >/dev/null 2>&1
			ctr -a "$addr" -n "$ns" --timeout 10s tasks delete -f "$t" >/dev/null 2>&1
		done
		for c in $(ctr -a "$addr" -n "$ns" --timeout 10s containers ls -q 2>/dev/null); do
			ctr -a "$addr" -n "$ns" --timeout 10s containers delete "$c" >/dev/null 2>&1
		done
	done
	kill -TERM "$pid" 2>/dev/null
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	kill -KILL "$pid" 2>/dev/null
fi
for p in /proc/[0-9]*; do
	case "$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" in
	*containerd-shim*" $addr"*) kill -KILL "${p#/proc/}" 2>/dev/null ;;
	esac
done
awk -v d="$d/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
	while read -r m; do umount -l "$m" 2>/dev/null; done
rm -rf --one-file-system "$d"
STOP
}

containerd_teardown_file() {
	local info
	[ -n "${TS_CONTAINERD_INFO:-}" ] && [ -f "$TS_CONTAINERD_INFO" ] || return 0
	read -r -a info <"$TS_CONTAINERD_INFO"
	if [ "${info[0]}" = own ] && [ -d "${info[2]}" ]; then
		sh "${info[2]}/stop"
	fi
	rm -f "$TS_CONTAINERD_INFO"
}

# start_containerd: point ctr at this file's containerd (exports
# CONTAINERD_ADDRESS, which ctr reads), or skip saying why there is none.
start_containerd() {
	local info
	[ -n "${TS_CONTAINERD_INFO:-}" ] && [ -f "$TS_CONTAINERD_INFO" ] ||
		fail "containerd_setup_file did not run: add setup_file() { containerd_setup_file; } and teardown_file() { containerd_teardown_file; } to $(basename "$BATS_TEST_FILENAME")"
	read -r -a info <"$TS_CONTAINERD_INFO"
	case "${info[0]}" in
	skip) skip "${info[*]:1}" ;;
	use | own) export CONTAINERD_ADDRESS=${info[1]} ;;
	esac
	[ -S "$CONTAINERD_ADDRESS" ] && ctr version >/dev/null 2>&1 ||
		fail "containerd at $CONTAINERD_ADDRESS stopped answering"
}

# alloc_json: the live allocations of this test's state dir, as
# `toposhimctl alloc list --json` prints them, compacted to one line with
# only the fields a test compares: [{id, state, class, cpus, mems, pinned}].
alloc_json() {
	"$TOPOSHIMCTL" alloc list --json |
		jq -c '[.[] | {id: .container_id, state, class, cpus, mems, pinned}]'
}
