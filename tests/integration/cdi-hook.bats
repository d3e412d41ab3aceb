#!/usr/bin/env bats
# toposhim-cdi-hook referenced from a CDI spec's createContainer hooks, run
# by real runc through toposhim: it acts inside the container root and
# nowhere else.

load containers

CDI_HOOK="$TS_BUILDDIR/hooks/toposhim-cdi-hook"

setup() {
	require_root
	require_cmd runc
	containers_setup
	write_config
	mkdir -m 0755 "$WORK/cdi"
}

teardown() {
	containers_teardown
}

# hook_spec NAME ARGS_JSON: a CDI device toposhim.test/hook=NAME whose only
# edit is a createContainer hook running toposhim-cdi-hook with ARGS_JSON.
hook_spec() {
	jq -n --arg name "$1" --arg path "$CDI_HOOK" --argjson args "$2" '{
		cdiVersion: "0.6.0", kind: "toposhim.test/hook",
		devices: [{name: $name, containerEdits: {hooks: [{hookName: "createContainer",
			path: $path, args: (["toposhim-cdi-hook"] + $args)}]}}]}' \
		>"$WORK/cdi/hook-$1.json"
}

run_with_hook() {
	make_bundle "$WORK/b" "$(jq -cn --arg c "$2" '["sh","-c",$c]')"
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/hook=$1"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
}

@test "create-symlinks: the link is made inside the running container" {
	hook_spec link '["create-symlinks", "--link", "/bin/busybox::/usr/lib/ts-cdi/link"]'
	run_with_hook link 'readlink /usr/lib/ts-cdi/link'
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "/bin/busybox" ]
	[ -L "$WORK/b/rootfs/usr/lib/ts-cdi/link" ]
	[ ! -e /usr/lib/ts-cdi ]
}

@test "create-symlinks: a link path with .. is refused and the create fails" {
	hook_spec up "$(jq -cn --arg l "/../../../../..$WORK/escaped" '["create-symlinks", "--link", ("/x::" + $l)]')"
	run_with_hook up 'true'
	[ "$status" -ne 0 ]
	[[ "$output" == *"toposhim-cdi-hook: create-symlinks: --link: escapes the container root '/../../../../..$WORK/escaped'"* ]] || { echo "$output"; false; }
	[ ! -e "$WORK/escaped" ]
	[ ! -L "$WORK/escaped" ]
}

@test "create-symlinks: a symlink in the image cannot lead out of the root" {
	mkdir -p "$WORK/hostdir"
	hook_spec evil '["create-symlinks", "--link", "/x::/evil/link"]'
	make_bundle "$WORK/b" '["sh","-c","readlink /evil/link"]'
	# An absolute symlink to a host path: resolved inside the root instead,
	# where the same path exists too.
	ln -s "$WORK/hostdir" "$WORK/b/rootfs/evil"
	mkdir -p "$WORK/b/rootfs$WORK/hostdir"
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/hook=evil
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "/x" ]
	[ ! -e "$WORK/hostdir/link" ] && [ ! -L "$WORK/hostdir/link" ]
	[ -L "$WORK/b/rootfs$WORK/hostdir/link" ]
}

@test "chmod: the mode changes inside the container" {
	hook_spec mode '["chmod", "--mode", "0600", "--path", "/etc/ts-mode"]'
	make_bundle "$WORK/b" '["stat","-c","%a","/etc/ts-mode"]'
	install -m 0644 /dev/null "$WORK/b/rootfs/etc/ts-mode"
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/hook=mode
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "600" ]
}

@test "update-ldcache: the folder list is written inside the container" {
	hook_spec ld '["update-ldcache", "--folder", "/usr/lib/ts-vendor", "--folder", "/opt/lib"]'
	make_bundle "$WORK/b" '["cat","/etc/ld.so.conf.d/00-toposhim-cdi.conf"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/hook=ld
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$(printf '/usr/lib/ts-vendor\n/opt/lib')" ]
	[ ! -e /etc/ld.so.conf.d/00-toposhim-cdi.conf ]
	# ldconfig ran chrooted into the container root
	[ -f "$WORK/b/rootfs/etc/ld.so.cache" ]
}

@test "toposhim-cdi-hook: usage errors" {
	run "$CDI_HOOK"
	[ "$status" -eq 2 ]
	run "$CDI_HOOK" chmod --path /x </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim-cdi-hook: chmod: chmod: missing --mode" ]
	run "$CDI_HOOK" frob </dev/null
	[ "$output" = "toposhim-cdi-hook: frob: unknown command 'frob'" ]
}
