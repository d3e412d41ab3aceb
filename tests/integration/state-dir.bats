#!/usr/bin/env bats
# The state dir from TOPOSHIM_STATE_DIR or the config's "state_dir", against
# a recording fake runtime: a bad value is refused in one line that names
# where it came from, before anything is created; every command that uses
# the store (create, delete, the hooks, toposhimctl alloc) says the same.

load containers

setup() {
	containers_setup
	write_demo_spec
	write_config
	export TOPOSHIM_RUNTIME="$TS_SRCDIR/tests/fixtures/fake-runtime"
	export TS_FAKE_RECORD="$WORK/fake"
	mkdir -p "$WORK/b" "$WORK/p"
	cat >"$WORK/b/config.json" <<'JSON'
{"ociVersion": "1.0.2", "process": {"args": ["sh"], "env": ["PATH=/bin"]},
 "root": {"path": "rootfs"},
 "annotations": {"cdi.k8s.io/test": "toposhim.test/dev=zero"}}
JSON
	# no request at all: the front's plain path is tried first
	jq 'del(.annotations)' "$WORK/b/config.json" >"$WORK/p/config.json"
	cp "$WORK/b/config.json" "$WORK/b.orig"
	cp "$WORK/p/config.json" "$WORK/p.orig"
	: >"$WORK/file"
	# a relative value would be taken from here
	cd "$WORK" || return
}

teardown() {
	cd / || return
	! mountpoint -q "$WORK/full" 2>/dev/null || umount "$WORK/full"
	rm -rf "$WORK"
}

# hook STAGE: `toposhim hook STAGE` with a container's state on stdin.
hook() {
	printf '{"ociVersion":"1.0.2","id":"%s","status":"stopped","bundle":"%s"}' "$ID" "$WORK/b" |
		"$TOPOSHIM" hook "$1"
}

@test "state dir: a relative TOPOSHIM_STATE_DIR is refused by create, nothing made" {
	export TOPOSHIM_STATE_DIR=rel
	want="environment: 'TOPOSHIM_STATE_DIR': not absolute 'rel'"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $want" ]
	run "$TOPOSHIM" create --bundle "$WORK/p" "$ID-p"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $want" ]
	[ ! -e "$WORK/rel" ]
	[ ! -e "$WORK/state" ]
	cmp "$WORK/b.orig" "$WORK/b/config.json"
	cmp "$WORK/p.orig" "$WORK/p/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "state dir: a relative TOPOSHIM_STATE_DIR: delete warns and runs the runtime, the hooks and toposhimctl alloc refuse" {
	export TOPOSHIM_STATE_DIR=rel/dir
	want="environment: 'TOPOSHIM_STATE_DIR': not absolute 'rel/dir'"
	mkdir -p "$WORK/rel/dir"
	run "$TOPOSHIM" delete "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "toposhim: warning: delete '$ID': cannot release the allocation: $want, ignoring" ]
	[ -e "$WORK/fake.argv" ]
	run hook poststop
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: hook poststop: $want" ]
	run hook create-runtime
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: hook create-runtime: $want" ]
	run "$TOPOSHIMCTL" alloc list
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: alloc: $want" ]
	# nothing was written in the relative one
	[ -z "$(ls -A "$WORK/rel/dir")" ]
	[ ! -e "$WORK/state" ]
}

@test "state dir: a regular file named by TOPOSHIM_STATE_DIR is refused, naming the variable" {
	export TOPOSHIM_STATE_DIR="$WORK/file"
	want="environment: 'TOPOSHIM_STATE_DIR': not a directory '$WORK/file'"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $want" ]
	run "$TOPOSHIM" create --bundle "$WORK/p" "$ID-p"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $want" ]
	run "$TOPOSHIMCTL" alloc list
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: alloc: $want" ]
	run hook poststop
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: hook poststop: $want" ]
	[ ! -s "$WORK/file" ]
	[ ! -e "$WORK/state" ]
	cmp "$WORK/b.orig" "$WORK/b/config.json"
	cmp "$WORK/p.orig" "$WORK/p/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "state dir: a regular file named by the config's state_dir is refused, naming the field" {
	jq --arg f "$WORK/file" '.state_dir = $f' "$WORK/toposhim.json" >"$WORK/c.json"
	export TOPOSHIM_CONFIG="$WORK/c.json"
	want="$WORK/c.json: '/state_dir': not a directory '$WORK/file'"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $want" ]
	run "$TOPOSHIMCTL" alloc list
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: alloc: $want" ]
	[ ! -s "$WORK/file" ]
	cmp "$WORK/b.orig" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
	# a good TOPOSHIM_STATE_DIR wins over it
	TOPOSHIM_STATE_DIR="$WORK/env-state" run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ]
	[ -d "$WORK/env-state" ]
}

@test "state dir: an empty TOPOSHIM_STATE_DIR counts as unset: the config's state_dir" {
	export TOPOSHIM_STATE_DIR=
	jq '.annotations["toposhim.io/class"] = "standard"' "$WORK/b.orig" >"$WORK/b/config.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ]
	run jq -r --arg id "$ID" '.allocations[] | select(.container_id == $id) | .class' \
		"$WORK/state/allocations.json"
	[ "$output" = standard ]
	run "$TOPOSHIMCTL" alloc list --json
	[ "$status" -eq 0 ]
	[ "$(jq -r '.[0].container_id' <<<"$output")" = "$ID" ]
}

@test "state dir: one that cannot be made gets no CDI index anywhere else (not /run/toposhim's)" {
	require_root
	require_cmd unshare
	# /run of a mount namespace of this test's own: what a create would
	# write into the default state dir shows there, and nowhere on the host
	export TOPOSHIM_STATE_DIR=$WORK/file/sub
	# an index is saved only of files older than 2 s (racily clean)
	touch -d '1 hour ago' "$WORK/cdi"/* "$WORK/cdi"
	run unshare -m --propagation private sh -c '
		mount -t tmpfs tmpfs /run && mkdir -m 0700 /run/toposhim || exit 99
		"$0" create --bundle "$1" "$2"; rc=$?
		ls -A /run/toposhim; exit $rc' "$TOPOSHIM" "$WORK/b" "$ID"
	[ "$status" -ne 99 ] || skip "cannot mount a tmpfs in a new mount namespace here"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "toposhim: $WORK/file/sub: cannot create state directory: Not a directory" ]
	# nothing was made in the default state dir: no cdi-index
	[ "${#lines[@]}" -eq 1 ]
	cmp "$WORK/b.orig" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "state dir: on a read-only filesystem alloc list reads the store" {
	require_root
	require_cmd unshare
	jq '.annotations["toposhim.io/class"] = "standard"' "$WORK/b.orig" >"$WORK/b/config.json"
	"$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	# helper-16: "cannot open lock file: Read-only file system"
	run unshare -m --propagation private sh -c '
		mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99
		"$0" alloc list --json' "$TOPOSHIMCTL" "$WORK/state"
	[ "$status" -ne 99 ] ||
		skip "this host lets no new mount namespace remount a bind mount read-only (CI runs this as root)"
	[ "$status" -eq 0 ]
	[ "$(jq -c 'map({container_id, class})' <<<"$output")" = '[{"container_id":"'"$ID"'","class":"standard"}]' ]
	# a read-only copy without the lock file (helper-17): read all the same
	rm "$WORK/state/lock"
	run unshare -m --propagation private sh -c '
		mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99
		"$0" alloc list --json' "$TOPOSHIMCTL" "$WORK/state"
	[ "$status" -ne 99 ] || fail "the read-only remount worked once, then not"
	[ "$status" -eq 0 ]
	[ "$(jq -c 'map({container_id, class})' <<<"$output")" = '[{"container_id":"'"$ID"'","class":"standard"}]' ]
}

# helper-22: the journal's bare file name, where every other line gives
# the whole path
@test "state dir: alloc gc on a read-only state dir names the directory" {
	require_root
	require_cmd unshare
	"$TOPOSHIM" create --bundle "$WORK/p" "$ID-plain"
	[ -s "$WORK/state/plain-containers" ]
	run unshare -m --propagation private sh -c '
		mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99
		"$0" alloc gc' "$TOPOSHIMCTL" "$WORK/state"
	[ "$status" -ne 99 ] ||
		skip "this host lets no new mount namespace remount a bind mount read-only (CI runs this as root)"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: alloc: $WORK/state: cannot compact the plain containers: plain-containers: cannot open: Read-only file system" ] ||
		{ echo "$output"; false; }
}

# helper-20: a create on a read-only state dir that had a plain-container
# summary to withdraw said "plain.json: cannot remove", the fallback's
# failure, not what failed first
@test "state dir: a create on a read-only state dir says the summary cannot be withdrawn" {
	require_root
	require_cmd unshare
	"$TOPOSHIM" create --bundle "$WORK/p" "$ID-plain"
	[ "$(jq -r .valid "$WORK/state/plain.json")" = 1 ]
	jq '.annotations["toposhim.io/class"] = "critical" | .annotations["toposhim.io/cpus"] = "1"' \
		"$WORK/b.orig" >"$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/crit.json"
	run unshare -m --propagation private sh -c '
		mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" || exit 99
		"$0" create --bundle "$2" "$3"' "$TOPOSHIM" "$WORK/state" "$WORK/b" "$ID"
	[ "$status" -ne 99 ] ||
		skip "this host lets no new mount namespace remount a bind mount read-only (CI runs this as root)"
	[ "$status" -eq 1 ]
	# (the plain containers' journal, which an exclusive create takes
	# first, cannot be opened either: a warning, held and dropped with the
	# refusal, which is the one line on stderr)
	[ "$output" = "toposhim: $WORK/state: plain.json: cannot withdraw: Read-only file system" ] ||
		{ echo "$output"; false; }
	cmp "$WORK/crit.json" "$WORK/b/config.json"
}

# helper-19: a delete on a full state dir said "cannot replace" and not why
@test "state dir: a delete that cannot write the store for a full file system says so" {
	require_root
	mkdir "$WORK/full"
	mount -t tmpfs -o size=256k tmpfs "$WORK/full" || skip "cannot mount a tmpfs here"
	export TOPOSHIM_STATE_DIR="$WORK/full/state"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "create: $output"; false; }
	dd if=/dev/zero of="$WORK/full/fill" bs=4k 2>/dev/null || true
	run "$TOPOSHIM" delete "$ID"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "toposhim: warning: delete '$ID': cannot release the allocation: $WORK/full/state: allocations.json: cannot replace: No space left on device, ignoring" ] ||
		{ echo "delete: $output"; false; }
}
