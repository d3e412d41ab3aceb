#!/usr/bin/env bats
# Live resizing of running shared-pool containers and the class limits on
# this host (issue 6, "bats on this machine (hybrid)").  On hybrid or v1
# cgroups toposhim resizes through `runc update` and writes class limits as
# the v1 values runc accepts (no "unified" key).  The config reserves CPU 0;
# shared-pool containers may use it (the default), so on a 2-CPU host the
# shared pool is 0-1, or 0 while a critical container holds CPU 1.

load containers

# Shared-pool containers: print what they see, then wait.
SHOW='grep Cpus_allowed_list /proc/self/status | cut -f2; exec sleep 120'

setup() {
	require_root
	require_cmd runc
	require_cmd jq
	[ "$(nproc --all)" -eq 2 ] || skip "these cases are written for a 2-CPU host ($(nproc --all) CPUs)"
	case "$(stat -fc %T /sys/fs/cgroup)" in
	cgroup2fs) skip "cgroup v2 host: these cases are for hybrid/v1 (tests/vm covers v2)" ;;
	esac
	containers_setup
	write_config '"placement": {"reserved": {"cpus": "0"}}'
}

teardown() {
	if command -v podman >/dev/null; then
		podman rm -f -t 0 "$ID-pod" >/dev/null 2>&1 || true
	fi
	delete_test_containers
	if [ -n "${RPFX[*]}" ]; then
		local c
		for c in $("${RPFX[@]}" crun list -q 2>/dev/null); do
			case "$c" in "$ID"*) "${RPFX[@]}" crun delete --force "$c" >/dev/null 2>&1 || true ;; esac
		done
	fi
	containers_teardown
}

# bundle NAME CLASS [CPUS] [ARGS_JSON]
bundle() {
	make_bundle "$WORK/$1" "${4:-$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')}"
	set_annotation "$WORK/$1" toposhim.io/class "$2"
	[ -z "$3" ] || set_annotation "$WORK/$1" toposhim.io/cpus "$3"
}

# create_start NAME: toposhim create + start as "$ID-NAME"; the init's
# stdout goes to $WORK/NAME.out.
# With use_crun, through crun in a mount namespace of its own ($RPFX).
create_start() {
	"${RPFX[@]}" "$TOPOSHIM" create --bundle "$WORK/$1" "$ID-$1" </dev/null \
		>"$WORK/$1.out" 2>"$WORK/$1.err" || { cat "$WORK/$1.err"; return 1; }
	"${RPFX[@]}" "$TOPOSHIM" start "$ID-$1"
	wait_for_file "$WORK/$1.out"
}

# use_crun: the config names crun, and every toposhim and crun call runs
# in a private mount namespace without this hybrid host's cgroup2 mount
# (crun refuses a controller on it): $RPFX is that prefix, $RT crun.
RPFX=()
RT=runc
use_crun() {
	require_cmd crun
	RT=crun
	RPFX=(unshare -m --propagation private sh -c
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh)
	write_config '"placement": {"reserved": {"cpus": "0"}}, "runtime": {"path": "'"$(command -v crun)"'"}'
}

# seen_by NAME: the cpus of the container's init (pid 1, started before any
# resize), of a new process in it, and of its cpuset cgroup, all read from
# inside the container, on one line.
seen_by() {
	"${RPFX[@]}" "$RT" exec "$ID-$1" sh -c 'for p in 1 self; do grep Cpus_allowed_list /proc/$p/status | cut -f2; done; cat /sys/fs/cgroup/cpuset/cpuset.cpus' | tr '\n' ' '
}

# host_cpuset NAME: cpuset.cpus of the container's v1 cgroup, read on the
# host at the cgroup path toposhim recorded (learned from runc's state).
host_cpuset() {
	local path
	path=$("$TOPOSHIMCTL" alloc list --json | jq -r --arg id "$ID-$1" '.[] | select(.container_id == $id) | .cgroup_path')
	cat "/sys/fs/cgroup/cpuset$path/cpuset.cpus"
}

@test "resize: a critical container shrinks the running shared ones, its delete grows them back" {
	bundle std standard
	create_start std
	bundle bat batch
	create_start bat
	[ "$(cat "$WORK/std.out")" = 0-1 ]
	[ "$(cat "$WORK/bat.out")" = 0-1 ]
	[ "$(seen_by std)" = "0-1 0-1 0-1 " ]

	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	# runc update has run before `create` returned: the running ones moved
	[ "$(seen_by std)" = "0 0 0 " ]
	[ "$(seen_by bat)" = "0 0 0 " ]
	[ "$(host_cpuset std)" = 0 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-std","state":"created","class":"standard","cpus":"0","mems":"0","pinned":false},{"id":"'"$ID"'-bat","state":"created","class":"batch","cpus":"0","mems":"0","pinned":false},{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]

	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(seen_by std)" = "0-1 0-1 0-1 " ]
	[ "$(seen_by bat)" = "0-1 0-1 0-1 " ]
	[ "$(host_cpuset bat)" = 0-1 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-std","state":"created","class":"standard","cpus":"0-1","mems":"0","pinned":false},{"id":"'"$ID"'-bat","state":"created","class":"batch","cpus":"0-1","mems":"0","pinned":false}]' ]

	# a shared container's delete gives no cpus back: the record goes,
	# the other shared one stays as it was
	"$TOPOSHIM" delete --force "$ID-bat"
	[ "$(seen_by std)" = "0-1 0-1 0-1 " ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-std","state":"created","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
}

@test "resize: a shared container created while CPU 1 is held starts on 0 and grows to 0-1" {
	bundle crit critical 1
	create_start crit
	bundle std standard
	create_start std
	[ "$(cat "$WORK/std.out")" = 0 ]
	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(seen_by std)" = "0-1 0-1 0-1 " ]
}

@test "resize: a batch container gets a config.json runc accepts, with the v1 values applied" {
	bundle bat batch '' '["sh","-c","cat /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/cpuset/cpuset.cpus"]'
	run "$TOPOSHIM" run --bundle "$WORK/bat" "$ID-bat" </dev/null
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# cpu.weight 1 -> cpu.shares round(1 * 1024 / 100) = 10; the built-in
	# cpu.idle has no v1 file and is left out without a warning
	[ "${lines[0]}" = 10 ]
	[ "${lines[1]}" = 0-1 ]
	[ "${#lines[@]}" -eq 2 ]
	run jq -c '.linux.resources | {cpu, unified}' "$WORK/bat/config.json"
	[ "$output" = '{"cpu":{"cpus":"0-1","mems":"0","shares":10},"unified":null}' ]
	# run deleted it: the next collection (any create's) leaves nothing
	run "$TOPOSHIMCTL" alloc gc
	[ "$output" = "collected $ID-bat" ]
	run alloc_json
	[ "$output" = '[]' ]
}

@test "resize: the critical class's v1 shares reach the container's cgroup" {
	bundle crit critical 1 '["sh","-c","cat /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/cpuset/cpuset.cpus /sys/fs/cgroup/cpuset/cpuset.mems"]'
	run "$TOPOSHIM" run --bundle "$WORK/crit" "$ID-crit" </dev/null
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	# the built-in memory.min has no v1 file (left out quietly);
	# cpu.weight 1000 -> cpu.shares 10240
	[ "${lines[0]}" = 10240 ]
	[ "${lines[1]}" = 1 ]
	[ "${lines[2]}" = 0 ]
	[ "${#lines[@]}" -eq 3 ]
	run jq -c '.linux.resources | {cpu, unified}' "$WORK/crit/config.json"
	[ "$output" = '{"cpu":{"cpus":"1","mems":"0","shares":10240},"unified":null}' ]
}

@test "resize: a standard container run by podman shrinks and grows back too" {
	require_cmd podman
	write_engine_wrapper
	make_rootfs "$WORK/rootfs"
	podman --runtime "$WORK/toposhim-wrapper" run -d --name "$ID-pod" \
		--ulimit nofile=20000:20000 --ulimit nproc=1000:1000 \
		--annotation toposhim.io/class=standard --rootfs "$WORK/rootfs" sleep 120 >/dev/null
	pod_cpus() {
		podman exec "$ID-pod" grep Cpus_allowed_list /proc/1/status | cut -f2
	}
	[ "$(pod_cpus)" = 0-1 ]
	bundle crit critical 1
	create_start crit
	[ "$(pod_cpus)" = 0 ]
	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(pod_cpus)" = 0-1 ]
	podman rm -f -t 0 "$ID-pod" >/dev/null
	run alloc_json
	[ "$output" = '[]' ]
}

@test "resize: a shared container whose create is in flight when CPU 1 is taken starts on 0" {
	# its runtime is slow to start: the critical create's settle waits for
	# runc's state to name its init (no hook records it), then resizes it
	printf '#!/bin/sh\ncase " $* " in *" create "*) sleep 2 ;; esac\nexec %s "$@"\n' \
		"$(command -v runc)" >"$WORK/slow"
	chmod 0755 "$WORK/slow"
	bundle std standard
	env TOPOSHIM_RUNTIME="$WORK/slow" "$TOPOSHIM" create --bundle "$WORK/std" "$ID-std" \
		</dev/null >"$WORK/std.out" 2>"$WORK/std.err" 3>&- &
	local bg=$! i
	for i in $(seq 50); do
		grep -q "\"$ID-std\"" "$WORK/state/allocations.json" 2>/dev/null && break
		sleep 0.1
	done
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	wait "$bg" || { cat "$WORK/std.err"; false; }
	# the standard one's config.json still says 0-1; its cgroup says 0
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/std/config.json")" = 0-1 ]
	"$TOPOSHIM" start "$ID-std"
	wait_for_file "$WORK/std.out"
	[ "$(cat "$WORK/std.out")" = 0 ]
	[ "$(host_cpuset std)" = 0 ]
}

@test "resize: a plain container keeps a byte-identical config.json, is shrunk and grown back" {
	plain_shrunk_and_grown
}

@test "resize: crun: a plain container keeps a byte-identical config.json, is shrunk and grown back" {
	use_crun
	plain_shrunk_and_grown
}

plain_shrunk_and_grown() {
	make_bundle "$WORK/plain" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	cp "$WORK/plain/config.json" "$WORK/plain.orig"
	create_start plain
	[ "$("${RPFX[@]}" "$RT" state "$ID-plain" | jq -r .status)" = running ] ||
		fail "$RT does not run $ID-plain"
	# no request, a shared pool of every CPU: nothing of toposhim's in it,
	# not recorded; the journal of plain containers names it
	cmp "$WORK/plain.orig" "$WORK/plain/config.json"
	[ ! -e "$WORK/plain/toposhim-placement.json" ]
	[ "$(cat "$WORK/plain.out")" = 0-1 ]
	run alloc_json
	[ "$output" = '[]' ]
	[ "$(plain_entry "$ID-plain")" = '{"class":"standard","cpus":"0-1","mems":"0"}' ]
	bundle crit critical 1
	create_start crit
	# the critical create took it into the store and shrank it
	[ "$(seen_by plain)" = "0 0 0 " ]
	[ "$(host_cpuset plain)" = 0 ]
	[ ! -s "$WORK/state/plain-containers" ]
	"${RPFX[@]}" "$TOPOSHIM" delete --force "$ID-crit"
	[ "$(seen_by plain)" = "0-1 0-1 0-1 " ]
	cmp "$WORK/plain.orig" "$WORK/plain/config.json"
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-plain","state":"created","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
	# its delete releases the record
	"${RPFX[@]}" "$TOPOSHIM" delete --force "$ID-plain"
	run alloc_json
	[ "$output" = '[]' ]
}

@test "resize: a plain container the journal cannot name is recorded, and still shrinks" {
	# a directory where the journal goes: one warning, the create goes
	# on, the container is recorded as any other
	mkdir -m 0700 -p "$WORK/state/plain-containers"
	make_bundle "$WORK/plain" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	cp "$WORK/plain/config.json" "$WORK/plain.orig"
	create_start plain
	[ "$(cat "$WORK/plain.err")" = "toposhim: warning: cannot name plain container '$ID-plain' in $WORK/state: plain-containers: cannot open: Is a directory; recorded instead" ] ||
		{ echo "stderr"; cat "$WORK/plain.err"; false; }
	cmp "$WORK/plain.orig" "$WORK/plain/config.json"
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-plain","state":"created","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
	# the settle cannot take the journal: said once, the recorded
	# containers are resized all the same
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.err")" = "toposhim: warning: $WORK/state: cannot take the plain containers: plain-containers: cannot open: Is a directory, ignoring" ] ||
		{ echo "stderr"; cat "$WORK/crit.err"; false; }
	[ "$(host_cpuset plain)" = 0 ]
	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(host_cpuset plain)" = 0-1 ]
}

@test "resize: a summary that cannot be written costs a warning, nothing else" {
	mkdir -m 0700 -p "$WORK/state/plain.json"
	make_bundle "$WORK/plain" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	create_start plain
	[ "$(cat "$WORK/plain.err")" = "toposhim: warning: $WORK/state: plain.json: cannot replace: Is a directory, ignoring" ] ||
		{ echo "stderr"; cat "$WORK/plain.err"; false; }
	[ "$(plain_entry "$ID-plain")" = '{"class":"standard","cpus":"0-1","mems":"0"}' ]
	# the front does not take a directory for a summary; the exclusive
	# create has nothing to withdraw, and shrinks the plain container
	bundle crit critical 1
	create_start crit
	[ ! -s "$WORK/crit.err" ] || { echo "stderr"; cat "$WORK/crit.err"; false; }
	[ "$(host_cpuset plain)" = 0 ]
	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(host_cpuset plain)" = 0-1 ]
}

@test "resize: a plain container whose create is in flight when CPU 1 is taken starts on 0" {
	# the front creates it (the summary says plain containers need nothing)
	# through a runtime slow to start; the critical create withdraws the
	# summary, takes the plain container's journal entry and waits for its
	# init before it resizes it: it never starts on CPU 1
	printf '#!/bin/sh\ncase " $* " in *" create "*) sleep 2 ;; esac\nexec %s "$@"\n' \
		"$(command -v runc)" >"$WORK/slow"
	chmod 0755 "$WORK/slow"
	make_bundle "$WORK/first" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	create_start first
	[ "$(jq -r .valid "$WORK/state/plain.json")" = 1 ] || { echo "no summary"; cat "$WORK/state/plain.json"; false; }
	make_bundle "$WORK/plain" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	cp "$WORK/plain/config.json" "$WORK/plain.orig"
	env TOPOSHIM_RUNTIME="$WORK/slow" "$TOPOSHIM" --debug create --bundle "$WORK/plain" "$ID-plain" \
		</dev/null >"$WORK/plain.out" 2>"$WORK/plain.err" 3>&- &
	local bg=$! i
	for i in $(seq 50); do
		[ -n "$(plain_entry "$ID-plain")" ] && break
		sleep 0.1
	done
	[ -n "$(plain_entry "$ID-plain")" ] || { echo "no journal entry"; false; }
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	[ "$(jq -r .valid "$WORK/state/plain.json")" = 0 ]
	wait "$bg" || { cat "$WORK/plain.err"; false; }
	grep -q "toposhim: debug: create '$ID-plain': plain, config.json left as it is" "$WORK/plain.err" ||
		{ echo "not the front's create"; cat "$WORK/plain.err"; false; }
	cmp "$WORK/plain.orig" "$WORK/plain/config.json"
	"$TOPOSHIM" start "$ID-plain"
	wait_for_file "$WORK/plain.out"
	[ "$(cat "$WORK/plain.out")" = 0 ]
	[ "$(host_cpuset plain)" = 0 ]
	[ "$(host_cpuset first)" = 0 ]
	# a plain create now, with CPU 1 held: the core writes the shared pool
	make_bundle "$WORK/late" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	create_start late
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/late/config.json")" = 0 ]
	[ "$(cat "$WORK/late.out")" = 0 ]
	# CPU 1 back: the summary is valid again, the next plain create skips the core
	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(jq -r .valid "$WORK/state/plain.json")" = 1 ]
	make_bundle "$WORK/again" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	cp "$WORK/again/config.json" "$WORK/again.orig"
	"$TOPOSHIM" --debug create --bundle "$WORK/again" "$ID-again" </dev/null >"$WORK/again.out" \
		2>"$WORK/again.err" 3>&-
	grep -q "toposhim: debug: create '$ID-again': plain, config.json left as it is" "$WORK/again.err" ||
		{ echo "not the front's create"; cat "$WORK/again.err"; false; }
	cmp "$WORK/again.orig" "$WORK/again/config.json"
}
