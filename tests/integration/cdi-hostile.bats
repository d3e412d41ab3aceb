#!/usr/bin/env bats
# Hostile images and spec files against CDI (issue 10, findings 1, 3, 7),
# run as the attacks with real runc and crun: an image whose ENV sets
# LD_PRELOAD to a library it ships, device nodes and FIFOs planted where
# toposhim-cdi-hook update-ldcache and ldconfig write, a YAML alias bomb next
# to a good spec.  The evil library is built here; what it does when it
# loads is create $WORK/pwned on the host.

load containers

CDI_HOOK="$TS_BUILDDIR/hooks/toposhim-cdi-hook"
DEFAULT_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

setup() {
	require_root
	require_cmd runc
	containers_setup
	write_config
	mkdir -m 0755 "$WORK/cdi"
	LOOP=
}

teardown() {
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	containers_teardown
}

# build_evil: $WORK/evil.so, whose constructor appends its pid to $WORK/pwned.
build_evil() {
	require_cmd cc
	cat >"$WORK/evil.c" <<-EOF
		#include <fcntl.h>
		#include <stdio.h>
		#include <unistd.h>
		__attribute__((constructor)) static void evil(void)
		{
			char line[32];
			int fd = open("$WORK/pwned", O_WRONLY | O_CREAT | O_APPEND, 0644);
			int n = snprintf(line, sizeof(line), "%d\n", (int)getpid());

			if (fd >= 0 && write(fd, line, (size_t)n) == n)
				close(fd);
		}
	EOF
	cc -shared -fPIC -o "$WORK/evil.so" "$WORK/evil.c"
}

# evil_image DIR ARGS_JSON: a bundle whose image ships evil.so at / and sets
# LD_PRELOAD=/proc/self/cwd/evil.so (runc runs a createContainer hook with
# the rootfs as cwd), with a writable root (crun applies readonly before
# createContainer hooks).
evil_image() {
	make_bundle "$1" "$2"
	cp "$WORK/evil.so" "$1/rootfs/evil.so"
	jq '.process.env += ["LD_PRELOAD=/proc/self/cwd/evil.so"] | .root.readonly = false' \
		"$1/config.json" >"$1/config.json.new"
	mv "$1/config.json.new" "$1/config.json"
}

# run_crun ARG...: toposhim with crun as the runtime, where crun can run on
# this hybrid-cgroup host (a private mount namespace without the cgroup2
# mount, ENVIRONMENT.md); a no-op elsewhere.
run_crun() {
	run unshare -m --propagation private sh -c \
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh \
		env TOPOSHIM_RUNTIME="$(command -v crun)" "$TOPOSHIM" "$@"
}

@test "the attack is real: runc runs a hook without env with the image's LD_PRELOAD" {
	build_evil
	evil_image "$WORK/b" '["true"]'
	# what an engine's own CDI injection writes: a hook without env
	jq '.hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c", "true"]}]' \
		"$WORK/b/config.json" >"$WORK/b/config.json.new"
	mv "$WORK/b/config.json.new" "$WORK/b/config.json"
	run runc run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# evil.so ran as root on the host, in the hook (a dynamic /bin/sh)
	[ -s "$WORK/pwned" ]
}

@test "toposhim-cdi-hook is static: LD_PRELOAD and LD_AUDIT load nothing into it" {
	build_evil
	run readelf -lW "$CDI_HOOK"
	[ "$status" -eq 0 ]
	[[ "$output" != *INTERP* ]] || { echo "$output"; false; }
	for var in LD_PRELOAD LD_AUDIT; do
		run env "$var=$WORK/evil.so" "$CDI_HOOK" chmod --mode 0600 --path /x </dev/null
		[ "$status" -eq 1 ]
		[ "$output" = "toposhim-cdi-hook: chmod: state: empty document" ] ||
			{ echo "$output"; false; }
	done
	[ ! -e "$WORK/pwned" ]
	# the library does load into a dynamic program: the check above can fail
	env LD_PRELOAD="$WORK/evil.so" /bin/true
	[ -s "$WORK/pwned" ]
}

@test "runc: an engine-written hook without env runs toposhim-cdi-hook, the image's LD_PRELOAD is not loaded" {
	build_evil
	evil_image "$WORK/b" '["sh", "-c", "readlink /ts-link"]'
	jq --arg hook "$CDI_HOOK" '.hooks.createContainer = [{path: $hook,
		args: ["toposhim-cdi-hook", "create-symlinks", "--link", "/bin/busybox::/ts-link"]}]' \
		"$WORK/b/config.json" >"$WORK/b/config.json.new"
	mv "$WORK/b/config.json.new" "$WORK/b/config.json"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "/bin/busybox" ]
	[ ! -e "$WORK/pwned" ]
}

# sh_hook_spec NAME ENV_JSON: a CDI device toposhim.test/hook=NAME whose
# createContainer hook is the dynamic /bin/sh writing $WORK/hook-NAME;
# ENV_JSON is the hook's "env" member, or "absent".
sh_hook_spec() {
	jq -n --arg name "$1" --arg out "$WORK/hook-$1" --argjson env "$2" '{
		cdiVersion: "0.6.0", kind: "toposhim.test/hook",
		devices: [{name: $name, containerEdits: {hooks: [{hookName: "createContainer",
			path: "/bin/sh", args: ["sh", "-c", ("echo ran >" + $out)]}
			+ (if $env == "absent" then {} else {env: $env} end)]}}]}' \
		>"$WORK/cdi/hook-$1.json"
}

@test "runc: a CDI hook with no env or env [] gets a minimal env, the image's LD_PRELOAD is not loaded" {
	build_evil
	sh_hook_spec noenv '"absent"'
	sh_hook_spec emptyenv '[]'
	evil_image "$WORK/b" '["true"]'
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/hook=noenv,toposhim.test/hook=emptyenv"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(cat "$WORK/hook-noenv")" = ran ]
	[ "$(cat "$WORK/hook-emptyenv")" = ran ]
	[ ! -e "$WORK/pwned" ]
	run jq -c '[.hooks.createContainer[] | .env]' "$WORK/b/config.json"
	[ "$output" = "[[\"$DEFAULT_ENV\"],[\"$DEFAULT_ENV\"]]" ]
}

@test "crun: a CDI hook without env runs with the minimal env" {
	require_cmd crun
	build_evil
	sh_hook_spec noenv '"absent"'
	evil_image "$WORK/b" '["true"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/hook=noenv
	run_crun run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(cat "$WORK/hook-noenv")" = ran ]
	[ ! -e "$WORK/pwned" ]
	run jq -c '.hooks.createContainer[0].env' "$WORK/b/config.json"
	[ "$output" = "[\"$DEFAULT_ENV\"]" ]
}

@test "a CDI hook's own env is kept as the spec gives it" {
	jq -n --arg out "$WORK/hook-own" '{cdiVersion: "0.6.0", kind: "toposhim.test/hook",
		devices: [{name: "own", containerEdits: {hooks: [{hookName: "createContainer",
			path: "/bin/sh", args: ["sh", "-c", ("echo \"$MARK\" >" + $out)],
			env: ["MARK=spec"]}]}}]}' >"$WORK/cdi/hook-own.json"
	make_bundle "$WORK/b" '["true"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/hook=own
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$(cat "$WORK/hook-own")" = spec ]
	run jq -c '.hooks.createContainer[0].env' "$WORK/b/config.json"
	[ "$output" = '["MARK=spec"]' ]
}

# plant_loop: a loop device over $WORK/disk.img (1 MiB of zeros): $LOOP,
# and its numbers $LOOP_MAJOR, $LOOP_MINOR for mknod.  A block node planted
# in an image is then one whose writes the test can see, no disk at risk.
plant_loop() {
	require_cmd losetup
	truncate -s 1M "$WORK/disk.img"
	LOOP=$(losetup -f --show "$WORK/disk.img") || skip "no free loop device"
	LOOP_MAJOR=$(stat -c %Hr "$LOOP")
	LOOP_MINOR=$(stat -c %Lr "$LOOP")
}

disk_untouched() {
	cmp -n 1048576 "$WORK/disk.img" /dev/zero
}

# ldcache_spec HOOKNAME [ARG...]: toposhim.test/ld=cache runs
# toposhim-cdi-hook update-ldcache --folder /opt/ts-lib ARG... as HOOKNAME.
ldcache_spec() {
	local hook=$1
	shift
	jq -n --arg path "$CDI_HOOK" --arg hook "$hook" \
		--argjson extra "$(printf '%s\n' "$@" | jq -R . | jq -sc 'map(select(. != ""))')" '{
		cdiVersion: "0.6.0", kind: "toposhim.test/ld",
		devices: [{name: "cache", containerEdits: {hooks: [{hookName: $hook, path: $path,
			args: (["toposhim-cdi-hook", "update-ldcache", "--folder", "/opt/ts-lib"]
				+ $extra)}]}}]}' >"$WORK/cdi/ld.json"
}

# ldcache_bundle: $WORK/b prints the conf file and the type of ld.so.cache.
ldcache_bundle() {
	make_bundle "$WORK/b" '["sh", "-c", "cat /etc/ld.so.conf.d/00-toposhim-cdi.conf; stat -c %F /etc/ld.so.cache"]'
	jq '.root.readonly = false' "$WORK/b/config.json" >"$WORK/b/config.json.new"
	mv "$WORK/b/config.json.new" "$WORK/b/config.json"
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/ld=cache
	mkdir -p "$WORK/b/rootfs/etc/ld.so.conf.d" "$WORK/b/rootfs/var/cache/ldconfig"
}

LDCACHE_OUT='/opt/ts-lib
regular file'

@test "runc createContainer: block nodes at the conf path and ld.so.cache~ are not written, a FIFO at ld.so.cache does not hang" {
	plant_loop
	ldcache_spec createContainer
	ldcache_bundle
	mknod "$WORK/b/rootfs/etc/ld.so.conf.d/00-toposhim-cdi.conf" b "$LOOP_MAJOR" "$LOOP_MINOR"
	mknod "$WORK/b/rootfs/etc/ld.so.cache~" b "$LOOP_MAJOR" "$LOOP_MINOR"
	mkfifo "$WORK/b/rootfs/etc/ld.so.cache"
	run timeout -s KILL 60 "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$LDCACHE_OUT" ]
	disk_untouched
	# ldconfig wrote its cache elsewhere: the planted node is as it was
	[ -b "$WORK/b/rootfs/etc/ld.so.cache~" ]
	[ -z "$(find "$WORK/b/rootfs/etc" -name '.toposhim-ldcache.*')" ]
}

@test "runc createRuntime: a block node at the conf path is replaced, not written" {
	plant_loop
	ldcache_spec createRuntime
	ldcache_bundle
	mknod "$WORK/b/rootfs/etc/ld.so.conf.d/00-toposhim-cdi.conf" b "$LOOP_MAJOR" "$LOOP_MINOR"
	run timeout -s KILL 60 "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$LDCACHE_OUT" ]
	disk_untouched
}

@test "runc: FIFOs at the conf path and at ld.so.cache~ do not hang the create" {
	ldcache_spec createContainer
	ldcache_bundle
	mkfifo "$WORK/b/rootfs/etc/ld.so.conf.d/00-toposhim-cdi.conf" "$WORK/b/rootfs/etc/ld.so.cache~"
	SECONDS=0
	run timeout -s KILL 60 "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$LDCACHE_OUT" ]
	[ "$SECONDS" -lt 20 ]
	[ -p "$WORK/b/rootfs/etc/ld.so.cache~" ]
}

@test "runc: a node where ldconfig reads or keeps its aux cache refuses the create, nothing written" {
	plant_loop
	ldcache_spec createContainer
	ldcache_bundle
	mknod "$WORK/b/rootfs/var/cache/ldconfig/aux-cache~" b "$LOOP_MAJOR" "$LOOP_MINOR"
	run timeout -s KILL 60 "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"toposhim-cdi-hook: update-ldcache: '/var/cache/ldconfig/aux-cache~' in the container is not a regular file (mode 060644), refusing to run ldconfig"* ]] ||
		{ echo "$output"; false; }
	disk_untouched
	rm "$WORK/b/rootfs/var/cache/ldconfig/aux-cache~"
	mkfifo "$WORK/b/rootfs/etc/ld.so.conf"
	run timeout -s KILL 60 "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"toposhim-cdi-hook: update-ldcache: '/etc/ld.so.conf' in the container is not a regular file (mode 010644), refusing to run ldconfig"* ]] ||
		{ echo "$output"; false; }
}

@test "runc: a FIFO ldconfig finds behind a library symlink: killed after --timeout" {
	ldcache_spec createContainer --timeout 2
	ldcache_bundle
	mkdir -p "$WORK/b/rootfs/lib"
	mkfifo "$WORK/b/rootfs/fifo"
	ln -s /fifo "$WORK/b/rootfs/lib/libfifo.so.1"
	SECONDS=0
	run timeout -s KILL 60 "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"toposhim-cdi-hook: update-ldcache: /sbin/ldconfig -r <container root> did not finish within 2 s (a FIFO in the image?), killed"* ]] ||
		{ echo "$output"; false; }
	[ "$SECONDS" -lt 20 ]
}

@test "crun createContainer (state pid 0): update-ldcache works, a block node at the conf path is not written" {
	require_cmd crun
	plant_loop
	ldcache_spec createContainer
	ldcache_bundle
	mknod "$WORK/b/rootfs/etc/ld.so.conf.d/00-toposhim-cdi.conf" b "$LOOP_MAJOR" "$LOOP_MINOR"
	run_crun run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "$LDCACHE_OUT" ]
	disk_untouched
}

# write_bomb FILE: one 64 KiB anchored scalar aliased 200,000 times (665 KB
# of YAML, 13 GB expanded).
write_bomb() {
	{
		printf 'cdiVersion: "0.6.0"\nkind: evil.test/bomb\nx: &a "'
		head -c 65536 /dev/zero | tr '\0' A
		printf '"\ndevices: ['
		yes '*a' | head -n 200000 | paste -sd, -
		printf ']\n'
	} >"$1"
}

@test "runc: a YAML alias bomb next to a good spec is one warning, the good device is injected" {
	write_demo_spec
	write_bomb "$WORK/cdi/bomb.yaml"
	# shellcheck disable=SC2016 # $XZERO is expanded in the container
	make_bundle "$WORK/b" '["sh", "-c", "echo $XZERO"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=zero
	SECONDS=0
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$SECONDS" -lt 20 ]
	[ "$output" = "toposhim: warning: CDI registry: $WORK/cdi/bomb.yaml: line 3 column 4: document expands to more than 16777216 bytes (aliases), ignoring
present" ]
}

@test "runc: 40,000 names in one annotation fail the create at once, one short line, config.json untouched" {
	write_demo_spec
	make_bundle "$WORK/b" '["true"]'
	# 1 MB: too long for one argument, so jq reads it from a file
	seq 0 39999 | sed 's|^|toposhim.test/dev=d|' | paste -sd, - | tr -d '\n' >"$WORK/names"
	jq --rawfile v "$WORK/names" '.annotations["cdi.k8s.io/test"] = $v' "$WORK/b/config.json" \
		>"$WORK/b/config.json.new"
	mv "$WORK/b/config.json.new" "$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/orig.json"
	SECONDS=0
	run "$TOPOSHIM" --log "$WORK/log.json" --log-format json run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$SECONDS" -lt 5 ]
	[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1test': more than 256 CDI device names requested" ] ||
		{ echo "${output:0:500}"; false; }
	[ "$(wc -l <"$WORK/log.json")" -eq 1 ]
	[ "$(wc -c <"$WORK/log.json")" -lt 512 ]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	run runc state "$ID"
	[ "$status" -ne 0 ]
}

@test "runc: a fresh-looking but forged CDI index is rebuilt, the create injects the device" {
	write_demo_spec
	# out of the index's 2 s racy window, so that the first create saves it
	touch -d '-100 seconds' "$WORK/cdi/test.yaml" "$WORK/cdi"
	make_bundle "$WORK/b" '["sh", "-c", "cat /etc/mounted.txt"]'
	set_annotation "$WORK/b" cdi.k8s.io/test toposhim.test/dev=zero
	cp "$WORK/b/config.json" "$WORK/orig.json"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	grep -q '^dev 0 0 toposhim.test/dev=zero$' "$WORK/state/cdi-index"
	# every stat still matches; the result line names a spec that is not there
	sed -i 's/^dev 0 0 toposhim.test\/dev=zero$/dev 7 0 toposhim.test\/dev=zero/' "$WORK/state/cdi-index"
	cp "$WORK/orig.json" "$WORK/b/config.json"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID-2"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "toposhim test mount" ]
	grep -q '^dev 0 0 toposhim.test/dev=zero$' "$WORK/state/cdi-index"
}
