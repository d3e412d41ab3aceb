#!/usr/bin/env bats
# CPU placement with real containers on this host (issue 4, "Real runs"):
# runc directly through toposhim, then crun, podman and containerd once each.
# The config reserves CPU 0, so on a 2-CPU host the only CPU that can be
# handed out exclusively is CPU 1.

load containers
bats_require_minimum_version 1.5.0

# What a container's init prints first, then it waits to be inspected.
SHOW='grep Cpus_allowed_list /proc/self/status | cut -f2; exec sleep 120'

# a containerd of this file's own unless one is running (containers.bash)
setup_file() {
	containerd_setup_file
}

teardown_file() {
	containerd_teardown_file
}

setup() {
	require_root
	require_cmd runc
	require_cmd jq
	[ "$(nproc --all)" -eq 2 ] || skip "these cases are written for a 2-CPU host ($(nproc --all) CPUs)"
	containers_setup
	write_config '"gc_grace_seconds": 1, "placement": {"reserved": {"cpus": "0"}}'
}

teardown() {
	delete_test_containers
	# the containers of the cases that use a runtime root of their own
	if [ -d "$WORK/runc-root" ]; then
		for c in $(runc --root "$WORK/runc-root" list -q 2>/dev/null); do
			runc --root "$WORK/runc-root" delete --force "$c" >/dev/null 2>&1 || true
		done
	fi
	containers_teardown
}

# bundle NAME CLASS [CPUS]: a bundle in $WORK/NAME running $SHOW, with the
# class (and exclusive CPU count) annotations when given.
bundle() {
	make_bundle "$WORK/$1" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	[ -z "$2" ] || set_annotation "$WORK/$1" toposhim.io/class "$2"
	[ -z "$3" ] || set_annotation "$WORK/$1" toposhim.io/cpus "$3"
}

# create_start NAME: toposhim create + start of bundle NAME as "$ID-NAME";
# the init's stdout goes to $WORK/NAME.out, which then holds what it saw.
create_start() {
	"$TOPOSHIM" create --bundle "$WORK/$1" "$ID-$1" </dev/null \
		>"$WORK/$1.out" 2>"$WORK/$1.err" || { cat "$WORK/$1.err"; return 1; }
	"$TOPOSHIM" start "$ID-$1"
	wait_for_file "$WORK/$1.out"
}

# create_start_own NAME / cpus_own NAME: create_start and cpus_allowed_in
# in a runc root of this test's own ($WORK/runc-root).  A rebuild after the
# loss of the whole store adopts every container toposhim placed in the
# roots it knows: in the shared default root that would be another test
# file's containers, running at the same time under make -j.
create_start_own() {
	"$TOPOSHIM" --root "$WORK/runc-root" create --bundle "$WORK/$1" "$ID-$1" </dev/null \
		>"$WORK/$1.out" 2>"$WORK/$1.err" || { cat "$WORK/$1.err"; return 1; }
	"$TOPOSHIM" --root "$WORK/runc-root" start "$ID-$1"
	wait_for_file "$WORK/$1.out"
}

cpus_own() {
	runc --root "$WORK/runc-root" exec "$ID-$1" grep Cpus_allowed_list /proc/self/status | cut -f2
}

# shared_and_critical [STD [CRIT]]: a standard container STD (std) on both
# cpus, then a critical one CRIT (crit) of 1 cpu, in this test's own runc
# root; x is CRIT's cpu, STD is left on the other.
shared_and_critical() {
	local std=${1:-std} crit=${2:-crit}
	bundle "$std" standard
	create_start_own "$std"
	[ "$(cpus_own "$std")" = 0-1 ]
	bundle "$crit" critical 1
	create_start_own "$crit"
	x=$(cat "$WORK/$crit.out")
	[ "$(cpus_own "$std")" = $((1 - x)) ]
}

cpus_of() {
	jq -c '.linux.resources.cpu | {cpus, mems}' "$WORK/$1/config.json"
}

@test "placement: a critical container with 1 CPU gets CPU 1, a standard one next gets CPU 0" {
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	[ "$(cpus_allowed_in "$ID-crit")" = 1 ]
	[ "$(cpus_of crit)" = '{"cpus":"1","mems":"0"}' ]

	bundle std standard
	create_start std
	[ "$(cat "$WORK/std.out")" = 0 ]
	[ "$(cpus_of std)" = '{"cpus":"0","mems":"0"}' ]

	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false},{"id":"'"$ID"'-std","state":"created","class":"standard","cpus":"0","mems":"0","pinned":false}]' ]
}

@test "placement: a count derived from the cpu quota names the quota, in stderr and the JSON log" {
	bundle crit critical 1
	create_start crit
	# Guaranteed, 1 CPU (kubelet: quota = period, shares 1024): critical, 1 cpu
	bundle g ""
	jq '.linux.resources.cpu = {quota: 100000, period: 100000, shares: 1024}' "$WORK/g/config.json" >"$WORK/g.json"
	mv "$WORK/g.json" "$WORK/g/config.json"
	cp "$WORK/g/config.json" "$WORK/g.orig"
	run "$TOPOSHIM" --log "$WORK/g.log" --log-format json create --bundle "$WORK/g" "$ID-g" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/g/config.json: '/linux/resources/cpu/quota': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ]
	run jq -r 'select(.level == "error") | .msg' "$WORK/g.log"
	[ "$output" = "toposhim: $WORK/g/config.json: '/linux/resources/cpu/quota': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ]
	cmp "$WORK/g.orig" "$WORK/g/config.json"
}

@test "placement: a second critical container fails clearly and config.json stays byte-identical" {
	bundle crit critical 1
	create_start crit
	bundle crit2 critical 1
	cp "$WORK/crit2/config.json" "$WORK/crit2.orig"
	run "$TOPOSHIM" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/crit2/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ]
	cmp "$WORK/crit2.orig" "$WORK/crit2/config.json"
	run runc state "$ID-crit2"
	[ "$status" -ne 0 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
}

@test "placement: delete releases the allocation and CPU 1 can be had again" {
	bundle crit critical 1
	create_start crit
	"$TOPOSHIM" delete --force "$ID-crit"
	run alloc_json
	[ "$output" = '[]' ]

	bundle again critical 1
	create_start again
	[ "$(cat "$WORK/again.out")" = 1 ]
	[ "$(cpus_of again)" = '{"cpus":"1","mems":"0"}' ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-again","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
}

@test "placement: a bundle created again under another id is placed again, not pinned to the cpus written for the first" {
	bundle crit critical 1
	create_start crit
	[ "$(jq -r .cpus "$WORK/crit/toposhim-placement.json")" = 1 ]
	"$TOPOSHIM" delete --force "$ID-crit"
	# config.json still holds the cpus written for $ID-crit
	[ "$(cpus_of crit)" = '{"cpus":"1","mems":"0"}' ]
	"$TOPOSHIM" create --bundle "$WORK/crit" "$ID-other" </dev/null
	# (created, not started: "creating" until a store session learns it)
	run alloc_json
	[ "$(jq -c 'map(del(.state))' <<<"$output")" = '[{"id":"'"$ID"'-other","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
	[ "$(jq -c '{id, pinned, cpus_written}' "$WORK/crit/toposhim-placement.json")" = '{"id":"'"$ID"'-other","pinned":false,"cpus_written":true}' ]
	"$TOPOSHIM" delete --force "$ID-other"
}

@test "placement: a bundle created again without its request runs where its record says, not on the cpus written for the first" {
	# no reserved cpus: a container without a request could stay plain
	write_config '"gc_grace_seconds": 1'
	bundle crit critical 1
	create_start crit
	written=$(jq -r .cpus "$WORK/crit/toposhim-placement.json")
	[ "$written" = 0 ] || [ "$written" = 1 ]
	"$TOPOSHIM" delete --force "$ID-crit"
	# the class annotations gone, config.json still holds the cpus written
	# for $ID-crit: no request, but the runtime would apply them (helper-9:
	# the create left them and recorded the container as plain, on 0-1)
	jq 'del(.annotations["toposhim.io/class", "toposhim.io/cpus"])' "$WORK/crit/config.json" >"$WORK/c.json"
	mv "$WORK/c.json" "$WORK/crit/config.json"
	[ "$(cpus_of crit)" = '{"cpus":"'"$written"'","mems":"0"}' ]
	"$TOPOSHIM" create --bundle "$WORK/crit" "$ID-other" </dev/null >"$WORK/crit.out" 2>"$WORK/crit.err" ||
		{ cat "$WORK/crit.err"; false; }
	"$TOPOSHIM" start "$ID-other"
	wait_for_file "$WORK/crit.out"
	run cat "$WORK/crit.out"
	[ "$output" = 0-1 ]
	run alloc_json
	[ "$(jq -c 'map(del(.state))' <<<"$output")" = '[{"id":"'"$ID"'-other","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
	[ "$(cpus_of crit)" = '{"cpus":"0-1","mems":"0"}' ]
	"$TOPOSHIM" delete --force "$ID-other"
}

@test "placement: a bundle created again under another class gets that class's cpu.shares, not the first one's" {
	[ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ] ||
		skip "pure cgroup v2 host: the classes write unified cpu.weight, not the v1 shares this case reads"
	make_bundle "$WORK/b" '["sh","-c","cat /sys/fs/cgroup/cpu/cpu.shares; exec sleep 120"]'
	set_annotation "$WORK/b" toposhim.io/class critical
	set_annotation "$WORK/b" toposhim.io/cpus 1
	create_start b
	[ "$(cat "$WORK/b.out")" = 10240 ]
	[ "$(jq -c .resources_written "$WORK/b/toposhim-placement.json")" = '[{"pointer":"/linux/resources/cpu/shares","after":10240}]' ]
	"$TOPOSHIM" delete --force "$ID-b"
	# a shell user makes it a standard container (helper-10: the earlier
	# create's shares 10240 stayed as "the engine's value", over
	# standard's 1024: a standard container weighing ten of them)
	jq '.annotations["toposhim.io/class"] = "standard" | del(.annotations["toposhim.io/cpus"])' \
		"$WORK/b/config.json" >"$WORK/c.json"
	mv "$WORK/c.json" "$WORK/b/config.json"
	"$TOPOSHIM" --debug --log "$WORK/b.log" create --bundle "$WORK/b" "$ID-again" \
		</dev/null >"$WORK/b.out" 2>"$WORK/b.err" || { cat "$WORK/b.err"; false; }
	"$TOPOSHIM" start "$ID-again"
	wait_for_file "$WORK/b.out"
	[ "$(cat "$WORK/b.out")" = 1024 ]
	[ "$(jq -c .linux.resources.cpu.shares "$WORK/b/config.json")" = 1024 ]
	grep -q "$WORK/b/config.json: '/linux/resources/cpu/shares': the value an earlier create wrote for class 'critical' is the engine's again" "$WORK/b.log"
	"$TOPOSHIM" delete --force "$ID-again"

	# a value the user set since is theirs: kept over the class's
	jq '.linux.resources.cpu.shares = 2048' "$WORK/b/config.json" >"$WORK/c.json"
	mv "$WORK/c.json" "$WORK/b/config.json"
	create_start b
	[ "$(cat "$WORK/b.out")" = 2048 ]
	[ "$(jq -c .resources_written "$WORK/b/toposhim-placement.json")" = null ]
}

@test "placement: the same on cgroup v2, in config.json: unified cpu.weight and shares go back too" {
	# any host: a cgroup root whose mode file says unified, and the fake
	# runtime, which only records the config.json it was given (runc would
	# refuse unified on a v1 host; the case above reads a real cgroup)
	write_config '"gc_grace_seconds": 1'
	mkdir -p "$WORK/cg"
	echo unified >"$WORK/cg/.toposhim-cgroup-mode"
	make_bundle "$WORK/b" '["true"]'
	set_annotation "$WORK/b" toposhim.io/class critical
	set_annotation "$WORK/b" toposhim.io/cpus 1
	export TOPOSHIM_CGROUP_ROOT="$WORK/cg" TS_FAKE_RECORD="$WORK/fake"
	export TOPOSHIM_RUNTIME="$TS_SRCDIR/tests/fixtures/fake-runtime"
	"$TOPOSHIM" --root "$WORK/fake-root" create --bundle "$WORK/b" c1 >/dev/null 2>&1
	[ "$(jq -c '.linux.resources | {shares: .cpu.shares, unified}' "$WORK/fake.config.json")" = '{"shares":10240,"unified":{"cpu.weight":"1000"}}' ]
	[ "$(jq -c .resources_written "$WORK/b/toposhim-placement.json")" = '[{"pointer":"/linux/resources/cpu/shares","after":10240},{"pointer":"/linux/resources/unified","after":{"cpu.weight":"1000"}}]' ]
	"$TOPOSHIM" --root "$WORK/fake-root" delete --force c1 >/dev/null 2>&1
	jq '.annotations["toposhim.io/class"] = "standard" | del(.annotations["toposhim.io/cpus"])' \
		"$WORK/b/config.json" >"$WORK/c.json"
	mv "$WORK/c.json" "$WORK/b/config.json"
	"$TOPOSHIM" --root "$WORK/fake-root" create --bundle "$WORK/b" c2 >/dev/null 2>&1
	[ "$(jq -c '.linux.resources | {shares: .cpu.shares, unified}' "$WORK/fake.config.json")" = '{"shares":1024,"unified":{"cpu.weight":"100"}}' ]
}

@test "placement: a cpuset an operator set with update stays, the container recorded as pinned there" {
	write_config '"gc_grace_seconds": 1'
	bundle std standard
	create_start std
	[ "$(cpus_allowed_in "$ID-std")" = 0-1 ]
	# what `docker update --cpuset-cpus` does through the runtime
	"$TOPOSHIM" update --cpuset-cpus 1 "$ID-std"
	# crit's create resizes the shared pool, to CPU 1: what std has, but
	# not what toposhim gave it (helper-12: taken for toposhim's own, and
	# undone at the next resize; helper-11: undone without a word)
	bundle crit critical 1
	"$TOPOSHIM" --debug --log "$WORK/crit.log" create --bundle "$WORK/crit" "$ID-crit" \
		</dev/null >"$WORK/crit.out" 2>"$WORK/crit.err" || { cat "$WORK/crit.err"; false; }
	"$TOPOSHIM" start "$ID-crit"
	wait_for_file "$WORK/crit.out"
	[ "$(cat "$WORK/crit.out")" = 0 ]
	[ "$(cpus_allowed_in "$ID-std")" = 1 ]
	grep -q "container '$ID-std': its cpuset was changed outside toposhim (cpus 1, recorded 0-1): now pinned there, the shared pool no longer resizes it" "$WORK/crit.log"
	# and in the store's resizes.log: crit's log goes with its bundle
	grep -Eq "^[0-9-]+T[0-9:]+Z pid [0-9]+: container '$ID-std': its cpuset was changed outside toposhim \(cpus 1, recorded 0-1\): now pinned there, the shared pool no longer resizes it\$" "$WORK/state/resizes.log"
	# the pool grows back to 0-1 when crit goes; std stays where it was put
	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(cpus_allowed_in "$ID-std")" = 1 ]
	run alloc_json
	[ "$(jq -c 'map(del(.state))' <<<"$output")" = '[{"id":"'"$ID"'-std","class":"standard","cpus":"1","mems":"0","pinned":true}]' ]
}

# helper-20: the create placed before it looked at cpusets changed from
# outside: with std updated onto CPU 0 (the CPU a critical create takes
# first), crit took CPU 0 and the settle after it moved std to 1.  Now an
# exclusive create pins such a container first and places around it.
@test "placement: an exclusive create places around a cpuset an operator just set, pinning it first" {
	write_config '"gc_grace_seconds": 1'
	bundle std standard
	create_start std
	[ "$(cpus_allowed_in "$ID-std")" = 0-1 ]
	"$TOPOSHIM" update --cpuset-cpus 0 "$ID-std"
	bundle crit critical 1
	"$TOPOSHIM" --log "$WORK/crit.log" create --bundle "$WORK/crit" "$ID-crit" \
		</dev/null >"$WORK/crit.out" 2>"$WORK/crit.err" || { cat "$WORK/crit.err"; false; }
	"$TOPOSHIM" start "$ID-crit"
	wait_for_file "$WORK/crit.out"
	[ "$(cat "$WORK/crit.out")" = 1 ]
	[ "$(cpus_allowed_in "$ID-std")" = 0 ]
	[ ! -s "$WORK/crit.err" ] || { cat "$WORK/crit.err"; false; }
	grep -Eq "^[0-9-]+T[0-9:]+Z pid [0-9]+: container '$ID-std': its cpuset was changed outside toposhim \(cpus 0, recorded 0-1\): now pinned there, the shared pool no longer resizes it\$" "$WORK/state/resizes.log" ||
		{ cat "$WORK/state/resizes.log"; false; }
	! grep -q "warning" "$WORK/state/resizes.log"
	run alloc_json
	[ "$(jq -c 'map(del(.state))' <<<"$output")" = '[{"id":"'"$ID"'-std","class":"standard","cpus":"0","mems":"0","pinned":true},{"id":"'"$ID"'-crit","class":"critical","cpus":"1","mems":"0","pinned":false}]' ] ||
		{ echo "$output"; false; }
	[ "$(jq -r .pinned_cpus "$WORK/std/toposhim-placement.json")" = 0 ]
	# pinned to every CPU from outside: no CPU is left to give exclusively
	"$TOPOSHIM" delete --force "$ID-crit"
	"$TOPOSHIM" update --cpuset-cpus 0-1 "$ID-std"
	cp "$WORK/crit/config.json" "$WORK/crit.before"
	! "$TOPOSHIM" create --bundle "$WORK/crit" "$ID-crit2" </dev/null >"$WORK/crit2.out" 2>&1
	[ "$(cat "$WORK/crit2.out")" = "toposhim: $WORK/crit/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 0-1 held by container '$ID-std'" ] ||
		{ cat "$WORK/crit2.out"; false; }
	grep -Eq "pid [0-9]+: container '$ID-std': its cpuset was changed outside toposhim \(cpus 0-1, recorded 0\): now pinned there" "$WORK/state/resizes.log"
	cmp "$WORK/crit/config.json" "$WORK/crit.before"
	[ "$(cpus_allowed_in "$ID-std")" = 0-1 ]
}

@test "placement: a cpuset an operator set onto a critical container's CPU is no pin, also when its delete finds it" {
	write_config '"gc_grace_seconds": 1'
	bundle crit critical 1
	create_start crit
	x=$(cat "$WORK/crit.out")
	bundle std standard
	create_start std
	[ "$(cpus_allowed_in "$ID-std")" = $((1 - x)) ]
	"$TOPOSHIM" update --cpuset-cpus 0-1 "$ID-std"
	# set while crit held CPU x: exclusive CPUs stay exclusive, as in a
	# resize while crit runs (helper-12 had it pinned at crit's delete,
	# and helper-16 then found crit's restart refused: no CPU left)
	"$TOPOSHIM" --log "$WORK/del.log" delete --force "$ID-crit"
	msg="container '$ID-std': its cpuset was changed outside toposhim to 0-1, which container '$ID-crit' held exclusively until it was deleted: resized to 0-1"
	grep -qF "$msg" "$WORK/del.log" || { cat "$WORK/del.log"; false; }
	grep -Eq "^[0-9-]+T[0-9:]+Z pid [0-9]+: warning: $msg\$" "$WORK/state/resizes.log"
	run alloc_json
	[ "$(jq -c 'map(del(.state))' <<<"$output")" = '[{"id":"'"$ID"'-std","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
	[ "$(cpus_allowed_in "$ID-std")" = 0-1 ]
	# the critical container comes back (a restart is a new create), and
	# std follows the pool
	create_start crit
	y=$(cat "$WORK/crit.out")
	[ "$y" = 0 ] || [ "$y" = 1 ]
	[ "$(cpus_allowed_in "$ID-std")" = $((1 - y)) ]
}

@test "placement: a cpuset set onto a critical container's CPU is no pin when another process's resize finds it" {
	write_config '"gc_grace_seconds": 1'
	bundle crit critical 1
	create_start crit
	x=$(cat "$WORK/crit.out")
	bundle std standard
	create_start std
	# pin2: pinned by its config.json, on the shared CPU
	bundle pin2
	jq --arg c $((1 - x)) '.linux.resources.cpu = {"cpus": $c}' "$WORK/pin2/config.json" >"$WORK/pin2.json"
	mv "$WORK/pin2.json" "$WORK/pin2/config.json"
	create_start pin2
	"$TOPOSHIM" update --cpuset-cpus 0-1 "$ID-std"
	# crit's delete finds the resize lock taken (a settle of another
	# create or delete, kubelet removing pods at once) and leaves the
	# resize to its holder: helper-17, the holder pinned std on 0-1
	exec 9>"$WORK/state/resize.lock"
	flock -x 9
	"$TOPOSHIM" delete --force "$ID-crit"
	exec 9>&-
	[ "$(cpus_allowed_in "$ID-std")" = 0-1 ]
	# the next settle, in another process: alloc unpin's
	run "$TOPOSHIMCTL" alloc unpin "$ID-pin2"
	[ "$status" -eq 0 ]
	grep -Eq "^[0-9-]+T[0-9:]+Z pid [0-9]+: warning: container '$ID-std': its cpuset was changed outside toposhim to 0-1, which container '$ID-crit' held exclusively until it was deleted: resized to 0-1\$" "$WORK/state/resizes.log"
	[ ! -e "$WORK/state/released" ]
	run alloc_json
	[ "$(jq -c --arg id "$ID-std" '.[] | select(.id == $id) | {cpus, pinned}' <<<"$output")" = '{"cpus":"0-1","pinned":false}' ]
	# the critical container comes back
	create_start crit
	y=$(cat "$WORK/crit.out")
	[ "$(cpus_allowed_in "$ID-std")" = $((1 - y)) ]
}

@test "placement: a cpuset an operator set survives the store's loss, pinned there" {
	write_config '"gc_grace_seconds": 1'
	bundle std standard
	create_start_own std
	[ "$(cpus_own std)" = 0-1 ]
	"$TOPOSHIM" --root "$WORK/runc-root" update --cpuset-cpus 1 "$ID-std"
	bundle crit critical 1
	create_start_own crit
	[ "$(cat "$WORK/crit.out")" = 0 ]
	"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-crit"
	[ "$(cpus_own std)" = 1 ]
	# the pin is in the placement file too; "cpus" stays what config.json got
	[ "$(jq -c '{cpus, pinned, pinned_cpus}' "$WORK/std/toposhim-placement.json")" = '{"cpus":"0-1","pinned":false,"pinned_cpus":"1"}' ]
	# the store is lost: the rebuild took std for a shared container on
	# its create-time cpus, and the settle after it put it back on 0-1
	rm "$WORK/state/allocations.json" "$WORK/state/allocations.json.prev"
	bundle std2 standard
	create_start_own std2
	grep -q 'allocations.json: missing: store rebuilt from live containers, kept 1 of 1 allocations (1 found in the runtime state)' \
		"$WORK/state/rebuilds.log"
	[ "$(cpus_own std)" = 1 ]
	run alloc_json
	[ "$(jq -c 'sort_by(.id) | map(del(.state))' <<<"$output")" = '[{"id":"'"$ID"'-std","class":"standard","cpus":"1","mems":"0","pinned":true},{"id":"'"$ID"'-std2","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
}

@test "placement: alloc unpin gives a pinned container the shared pool again" {
	write_config '"gc_grace_seconds": 1'
	bundle std standard
	create_start_own std
	[ "$(cpus_own std)" = 0-1 ]
	"$TOPOSHIM" --root "$WORK/runc-root" update --cpuset-cpus 1 "$ID-std"
	# crit takes CPU 0; the settle finds std changed from outside: pinned
	bundle crit critical 1
	create_start_own crit
	[ "$(cat "$WORK/crit.out")" = 0 ]
	run alloc_json
	[ "$(jq -c --arg id "$ID-std" '.[] | select(.id == $id) | {cpus, pinned}' <<<"$output")" = '{"cpus":"1","pinned":true}' ]
	[ "$(jq -c .pinned_cpus "$WORK/std/toposhim-placement.json")" = '"1"' ]

	run "$TOPOSHIMCTL" alloc unpin "$ID-std"
	[ "$status" -eq 0 ]
	[ "$output" = "unpinned $ID-std" ]
	run alloc_json
	[ "$(jq -c --arg id "$ID-std" '.[] | select(.id == $id) | {cpus, pinned}' <<<"$output")" = '{"cpus":"1","pinned":false}' ]
	[ "$(jq -c '{pinned, pinned_cpus}' "$WORK/std/toposhim-placement.json")" = '{"pinned":false,"pinned_cpus":null}' ]
	# it follows the pool again: crit goes, std grows back (pinned, it
	# stayed on 1: the tests above)
	"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-crit"
	[ "$(cpus_own std)" = 0-1 ]
	run "$TOPOSHIMCTL" alloc unpin --root "$WORK/runc-root" "$ID-std"
	[ "$status" -eq 0 ]
	[ "$output" = "$ID-std is not pinned" ]

	# bad input: one line, exit 1; usage: exit 2
	run "$TOPOSHIMCTL" alloc unpin "$ID-nope"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: alloc unpin: no allocation of container '$ID-nope'" ]
	run "$TOPOSHIMCTL" alloc unpin --root /nonexistent "$ID-std"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: alloc unpin: no allocation of container '$ID-std' under runtime root '/nonexistent'" ]
	run "$TOPOSHIMCTL" alloc unpin
	[ "$status" -eq 2 ]
	[ "${lines[0]}" = "toposhimctl: alloc unpin: missing container id" ]
}

@test "placement: a shim killed between allocation and runtime exec leaves nothing behind" {
	# The "runtime" is the shim's own process after the exec: killing it is
	# killing the shim after it committed the allocation.
	printf '#!/bin/sh\nkill -KILL $$\n' >"$WORK/die"
	chmod 0755 "$WORK/die"
	write_config '"gc_grace_seconds": 60, "placement": {"reserved": {"cpus": "0"}}'
	bundle dead critical 1
	run env TOPOSHIM_RUNTIME="$WORK/die" "$TOPOSHIM" create --bundle "$WORK/dead" "$ID-dead" </dev/null
	[ "$status" -eq 137 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-dead","state":"creating","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]

	# The record names the shim's pid (the runtime's, after the exec): that
	# process is gone and the runtime left no state dir, so the create
	# failed, and the next create collects the record at once, long before
	# the 60 s grace period.
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
}

@test "placement: a create the runtime rejects does not hold its CPUs" {
	write_config '"gc_grace_seconds": 60, "placement": {"reserved": {"cpus": "0"}}'
	bundle norootfs critical 1
	rm -rf "$WORK/norootfs/rootfs"
	run "$TOPOSHIM" create --bundle "$WORK/norootfs" "$ID-norootfs" </dev/null
	[ "$status" -ne 0 ]
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
}

# helper-17 D5: plan on a running container's own bundle read the cpus its
# create wrote as the user's pin, and found them overlapping that very
# container's exclusive ones.
@test "placement: toposhimctl plan on a running container's bundle finds its allocation; another id finds its cpus held" {
	write_config '"placement": {"reserved": {"cpus": "0"}}'
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	run "$TOPOSHIMCTL" plan --bundle "$WORK/crit"
	[ "$status" -eq 0 ] || { echo "plan: $status $output"; false; }
	[ "$output" = "bundle: $WORK/crit
topology: $(sed -n 's/^topology: //p' <<<"$output")
class: critical
pool: exclusive
cpus: 1
mems: 0
shared pool after: 0
why:
  - existing allocation of '$ID-crit' kept" ] || { echo "plan: $output"; false; }
	# its own id given, and the bundle through another path (/var/run is
	# /run on Debian): the same (helper-18)
	ln -s "$WORK/crit" "$WORK/crit-link"
	run "$TOPOSHIMCTL" plan --bundle "$WORK/crit-link" --id "$ID-crit"
	[ "$status" -eq 0 ] || { echo "plan --id own: $status $output"; false; }
	[ "${lines[8]}" = "  - existing allocation of '$ID-crit' kept" ] || { echo "plan --id own: $output"; false; }
	# a placement file toposhim did not write is said, not silently read
	# as none (helper-18)
	cp "$WORK/crit/toposhim-placement.json" "$WORK/placement.saved"
	echo garbage >"$WORK/crit/toposhim-placement.json"
	run --separate-stderr "$TOPOSHIMCTL" plan --bundle "$WORK/crit"
	[ "$stderr" = "toposhimctl: plan: warning: $WORK/crit/toposhim-placement.json: not a placement file toposhim wrote, ignoring" ] ||
		{ echo "stderr: $stderr"; false; }
	cp "$WORK/placement.saved" "$WORK/crit/toposhim-placement.json"
	run "$TOPOSHIMCTL" plan --bundle "$WORK/crit" --id second
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: plan: $WORK/crit/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ] || { echo "plan --id: $output"; false; }
}

@test "placement: an id the runtime would refuse is refused before any allocation" {
	write_config '"placement": {"reserved": {"cpus": "0"}}'
	bundle bad critical 1
	cp "$WORK/bad/config.json" "$WORK/bad.orig"
	run "$TOPOSHIM" create --bundle "$WORK/bad" "a/b" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: container id: invalid 'a/b'" ]
	cmp "$WORK/bad.orig" "$WORK/bad/config.json"
	# refused before the store was even opened
	[ ! -e "$WORK/state" ]
	run "$TOPOSHIMCTL" alloc list
	[ "$status" -eq 1 ]
	[ "$output" = "toposhimctl: alloc: $WORK/state: no state directory: No such file or directory" ]
}

@test "placement: a live container outlives the grace period, created or running" {
	bundle crit critical 1
	"$TOPOSHIM" create --bundle "$WORK/crit" "$ID-crit" </dev/null >"$WORK/crit.out" 2>/dev/null
	sleep 1.5
	# created, not started, older than gc_grace_seconds: its init is alive
	bundle other critical 1
	run "$TOPOSHIM" create --bundle "$WORK/other" "$ID-other" </dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == *"not enough cpus available to satisfy request: requested=1, available=0"* ]]
	"$TOPOSHIM" start "$ID-crit"
	wait_for_file "$WORK/crit.out"
	sleep 1.5
	run "$TOPOSHIM" create --bundle "$WORK/other" "$ID-other" </dev/null
	[ "$status" -eq 1 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
}

@test "placement: with strict reserved CPUs a critical request that empties the shared pool fails" {
	write_config '"placement": {"reserved": {"cpus": "0", "shared_may_use": false}}'
	bundle crit critical 1
	cp "$WORK/crit/config.json" "$WORK/crit.orig"
	run "$TOPOSHIM" create --bundle "$WORK/crit" "$ID-crit" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/crit/config.json: '/annotations/toposhim.io~1cpus': taking cpus 1 would leave the shared pool empty" ]
	cmp "$WORK/crit.orig" "$WORK/crit/config.json"
	# the shared pool is CPU 1 alone: reserved CPU 0 stays untouched
	bundle std standard
	create_start std
	[ "$(cat "$WORK/std.out")" = 1 ]
	[ "$(cpus_of std)" = '{"cpus":"1","mems":"0"}' ]
}

@test "placement: a create retried after the shim was killed is placed again, not pinned" {
	printf '#!/bin/sh\nkill -KILL $$\n' >"$WORK/die"
	chmod 0755 "$WORK/die"
	write_config '"gc_grace_seconds": 60, "placement": {"reserved": {"cpus": "0"}}'
	bundle crit critical 1
	run env TOPOSHIM_RUNTIME="$WORK/die" "$TOPOSHIM" create --bundle "$WORK/crit" "$ID-crit" </dev/null
	[ "$status" -eq 137 ]
	# the engine retries the same id: config.json already holds the cpus the
	# first attempt wrote (its placement file tells them from a user's)
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
	# no plugin needs them: no hook of toposhim's, neither from the first attempt
	run jq -c '.hooks' "$WORK/crit/config.json"
	[ "$output" = null ]
}

@test "placement: explicit cpus in config.json (podman --cpuset-cpus) are honoured as pinned" {
	bundle pin
	jq '.linux.resources.cpu = {"cpus": "1"}' "$WORK/pin/config.json" >"$WORK/pin.json"
	mv "$WORK/pin.json" "$WORK/pin/config.json"
	create_start pin
	[ "$(cat "$WORK/pin.out")" = 1 ]
	run jq -r '.linux.resources.cpu.cpus' "$WORK/pin/config.json"
	[ "$output" = 1 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-pin","state":"created","class":"standard","cpus":"1","mems":"","pinned":true}]' ]
	# a pinned CPU is never handed out as an exclusive one
	bundle crit critical 1
	run "$TOPOSHIM" create --bundle "$WORK/crit" "$ID-crit" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/crit/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-pin'" ]
}

@test "placement: explicit cpus on a critical container's CPU are honoured with a warning" {
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	bundle pin
	jq '.linux.resources.cpu = {"cpus": "1"}' "$WORK/pin/config.json" >"$WORK/pin.json"
	mv "$WORK/pin.json" "$WORK/pin/config.json"
	create_start pin
	[ "$(cat "$WORK/pin.out")" = 1 ]
	[ "$(cat "$WORK/pin.err")" = "toposhim: warning: $WORK/pin/config.json: '/linux/resources/cpu/cpus': pinned cpus 1 overlap the exclusive cpus of container '$ID-crit'" ]
}

@test "placement: explicit cpus with a critical class and a cpu count keep the cpus, pinned, with a warning" {
	# helper-16: podman --cpuset-cpus 0 with toposhim.io/cpus=1 ran on 0
	# as a pinned critical container without a word
	bundle crit critical 1
	jq '.linux.resources.cpu = {"cpus": "0"}' "$WORK/crit/config.json" >"$WORK/crit.json"
	mv "$WORK/crit.json" "$WORK/crit/config.json"
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 0 ]
	[ "$(cat "$WORK/crit.err")" = "toposhim: warning: $WORK/crit/config.json: '/annotations/toposhim.io~1cpus': 1 cpus ignored: the cpus 0 in '/linux/resources/cpu/cpus' are kept, pinned" ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"0","mems":"","pinned":true}]' ]
}

@test "placement: without annotations an integer CPU limit equal to the request is critical" {
	bundle quota
	jq '.linux.resources.cpu = {"shares": 1024, "quota": 100000, "period": 100000}' \
		"$WORK/quota/config.json" >"$WORK/quota.json"
	mv "$WORK/quota.json" "$WORK/quota/config.json"
	create_start quota
	[ "$(cat "$WORK/quota.out")" = 1 ]
	[ "$(cpus_of quota)" = '{"cpus":"1","mems":"0"}' ]

	# 1.5 CPUs is not an integer limit: standard, on what is left (CPU 0)
	bundle half
	jq '.linux.resources.cpu = {"shares": 1536, "quota": 150000, "period": 100000}' \
		"$WORK/half/config.json" >"$WORK/half.json"
	mv "$WORK/half.json" "$WORK/half/config.json"
	create_start half
	[ "$(cat "$WORK/half.out")" = 0 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-quota","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false},{"id":"'"$ID"'-half","state":"created","class":"standard","cpus":"0","mems":"0","pinned":false}]' ]
}

@test "placement: crun run through toposhim, a critical container sees CPU 1" {
	require_cmd crun
	make_bundle "$WORK/crun" '["sh","-c","grep Cpus_allowed_list /proc/self/status | cut -f2"]'
	set_annotation "$WORK/crun" toposhim.io/class critical
	set_annotation "$WORK/crun" toposhim.io/cpus 1
	# crun refuses hybrid cgroups: run it where the cgroup2 mount is hidden
	# (ENVIRONMENT.md); on a pure v1/v2 host this is a no-op.
	run unshare -m --propagation private sh -c \
		'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh \
		env TOPOSHIM_RUNTIME="$(command -v crun)" "$TOPOSHIM" run --bundle "$WORK/crun" "$ID-crun" </dev/null
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "${lines[-1]}" = 1 ]
	[ "$(cpus_of crun)" = '{"cpus":"1","mems":"0"}' ]
	# crun deleted it at the end of run: the next collection (any create's)
	# frees CPU 1
	run "$TOPOSHIMCTL" alloc gc
	[ "$output" = "collected $ID-crun" ]
	run alloc_json
	[ "$output" = '[]' ]
}

@test "placement: podman run --runtime toposhim, a critical container sees CPU 1" {
	require_cmd podman
	write_engine_wrapper
	make_rootfs "$WORK/rootfs"
	run podman --runtime "$WORK/toposhim-wrapper" run --rm --name "$ID" \
		--ulimit nofile=20000:20000 --ulimit nproc=1000:1000 \
		--annotation toposhim.io/class=critical --annotation toposhim.io/cpus=1 \
		--rootfs "$WORK/rootfs" sh -c 'grep Cpus_allowed_list /proc/self/status'
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"Cpus_allowed_list:	1" ]]
	# --rm deleted it: the poststop hook gave CPU 1 back
	run alloc_json
	[ "$output" = '[]' ]
}

@test "placement: ctr run --runc-binary toposhim, a critical container sees CPU 1" {
	start_containerd
	write_engine_wrapper
	make_rootfs "$WORK/rootfs"
	run ctr run --rm --rootfs --runc-binary "$WORK/toposhim-wrapper" \
		--annotation toposhim.io/class=critical --annotation toposhim.io/cpus=1 \
		--env PATH=/bin "$WORK/rootfs" "$ID" /bin/sh -c 'grep Cpus_allowed_list /proc/self/status'
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"Cpus_allowed_list:	1" ]] || fail "ctr run printed: '$output'"
	run alloc_json
	[ "$output" = '[]' ]
}

@test "placement: a damaged allocations file is rebuilt from the runtime's state, CPUs stay taken" {
	local root="$WORK/runc-root"
	# a standard and a critical container, in a runtime root of this test's own
	bundle std standard
	"$TOPOSHIM" --root "$root" run -d --bundle "$WORK/std" "$ID-std" </dev/null >/dev/null 2>&1
	bundle crit critical 1
	"$TOPOSHIM" --root "$root" run -d --bundle "$WORK/crit" "$ID-crit" </dev/null >/dev/null 2>&1
	[ "$(runc --root "$root" state "$ID-crit" | jq -r .status)" = running ]
	# the bookkeeping is in the bundle's placement file, not in config.json
	[ "$(jq -r .class "$WORK/crit/toposhim-placement.json")" = critical ]
	run jq -c '[.annotations // {} | keys[] | select(startswith("toposhim.io/placed"))]' "$WORK/crit/config.json"
	[ "$output" = '[]' ]
	# the critical record is lost: damaged file (wrong checksum), no older copy
	jq --arg id "$ID-crit" '.allocations |= map(select(.container_id != $id)) | .checksum = "x"' \
		"$WORK/state/allocations.json" >"$WORK/damaged.json"
	cp "$WORK/damaged.json" "$WORK/state/allocations.json"
	rm -f "$WORK/state/allocations.json.prev"

	# the next critical create finds it in runc's state and cannot have CPU 1
	bundle crit2 critical 1
	run "$TOPOSHIM" --root "$root" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/crit2/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ]
	# (the rebuild's warning, held behind the refusal, is not on stderr)
	grep -q "/state/allocations.json: checksum mismatch (stored 'x', computed 'fnv1a64-sum:[0-9a-f]\{16\}'): store rebuilt from live containers, kept 2 of 2 allocations (1 found in the runtime state)$" \
		"$WORK/state/rebuilds.log"
	# the rebuilt store was written: it loads without a warning now
	run --separate-stderr "$TOPOSHIMCTL" alloc list --json
	[ -z "$stderr" ]
	[ "$(jq -c --arg id "$ID-crit" '[.[] | select(.container_id == $id) | {class, cpus, state}]' <<<"$output")" = '[{"class":"critical","cpus":"1","state":"created"}]' ]
	runc --root "$root" delete --force "$ID-crit" >/dev/null 2>&1
	runc --root "$root" delete --force "$ID-std" >/dev/null 2>&1
}

@test "placement: a rebuild takes class and cpus from the placement file; a removed allocations.json is rebuilt" {
	local root="$WORK/runc-root" want
	bundle std standard
	"$TOPOSHIM" --root "$root" run -d --bundle "$WORK/std" "$ID-std" </dev/null >/dev/null 2>&1
	bundle crit critical 1
	"$TOPOSHIM" --root "$root" run -d --bundle "$WORK/crit" "$ID-crit" </dev/null >/dev/null 2>&1
	[ "$(runc --root "$root" state "$ID-crit" | jq -r .status)" = running ]
	want='[{"class":"critical","cpus":"1","state":"created"}]'

	# an edited class (unknown: it held its cpu as exclusive and emptied
	# the shared pool) and cpus
	jq --arg id "$ID-crit" '(.allocations[] | select(.container_id == $id)) |= (.class = "bogus" | .cpus = "0-1") | .checksum = "x"' \
		"$WORK/state/allocations.json" >"$WORK/edited.json"
	cp "$WORK/edited.json" "$WORK/state/allocations.json"
	bundle crit2 critical 1
	run "$TOPOSHIM" --root "$root" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/crit2/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ]
	run --separate-stderr "$TOPOSHIMCTL" alloc list --json
	[ -z "$stderr" ]
	[ "$(jq -c --arg id "$ID-crit" '[.[] | select(.container_id == $id) | {class, cpus, state}]' <<<"$output")" = "$want" ]

	# allocations.json removed by hand: not a new store that forgets CPU 1
	rm "$WORK/state/allocations.json"
	run "$TOPOSHIM" --root "$root" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/crit2/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ]
	# both rebuilds are in the state dir for the operator, oldest first,
	# each followed by the commit that wrote the rebuilt store
	run sed 's/^[-0-9T:]*Z pid [0-9]*: //' "$WORK/state/rebuilds.log"
	[ "${#lines[@]}" -eq 4 ]
	[[ "${lines[0]}" == "$WORK/state/allocations.json: checksum mismatch (stored 'x', computed "*"): store rebuilt from live containers, kept 2 of 2 allocations" ]]
	[ "${lines[1]}" = "$WORK/state/allocations.json: rebuilt store written, 2 allocations" ]
	[[ "${lines[2]}" == "$WORK/state/allocations.json: missing: store rebuilt from live containers"*", kept 2 of "*" allocations"* ]]
	[ "${lines[3]}" = "$WORK/state/allocations.json: rebuilt store written, 2 allocations" ]
	run --separate-stderr "$TOPOSHIMCTL" alloc list --json
	[ -z "$stderr" ]
	[ "$(jq -c --arg id "$ID-crit" '[.[] | select(.container_id == $id) | {class, cpus, state}]' <<<"$output")" = "$want" ]

	# a directory in its place: refused, named, left alone
	rm "$WORK/state/allocations.json"
	mkdir "$WORK/state/allocations.json"
	cp "$WORK/crit2/config.json" "$WORK/crit2.before"
	run "$TOPOSHIM" --root "$root" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "toposhim: $WORK/state/allocations.json: a directory where the allocations file belongs: remove it or move it away" ]
	[ -d "$WORK/state/allocations.json" ]
	cmp "$WORK/crit2/config.json" "$WORK/crit2.before"
	rmdir "$WORK/state/allocations.json"
	runc --root "$root" delete --force "$ID-crit" >/dev/null 2>&1
	runc --root "$root" delete --force "$ID-std" >/dev/null 2>&1
}

@test "placement: after a rebuild the shared containers are resized, whatever their records said" {
	# std is created while CPU 1 is taken: its placement file says CPU 0
	bundle crit critical 1
	create_start_own crit
	bundle std standard
	create_start_own std
	[ "$(cat "$WORK/std.out")" = 0 ]
	# crit goes: std grows back to 0-1
	"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-crit"
	[ "$(cpus_own std)" = 0-1 ]
	# the store is lost; the rebuild adopts std from runc's state and its
	# placement file (CPU 0, the wrong value now) and learns its cgroup
	rm "$WORK/state/allocations.json" "$WORK/state/allocations.json.prev"
	bundle crit2 critical 1
	create_start_own crit2 2>"$WORK/crit2.stderr"
	[ "$(cat "$WORK/crit2.out")" = 1 ]
	grep -q 'allocations.json: missing: store rebuilt from live containers, kept 1 of 1 allocations (1 found in the runtime state)' \
		"$WORK/state/rebuilds.log"
	# std is off CPU 1 now: the settle after the rebuild resized it
	[ "$(cpus_own std)" = 0 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-std","state":"created","class":"standard","cpus":"0","mems":"0","pinned":false},{"id":"'"$ID"'-crit2","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
	[ "$("$TOPOSHIMCTL" alloc list --json | jq -r --arg id "$ID-std" '.[] | select(.container_id == $id) | .cgroup_path != null')" = true ]
}

# helper-14: with allocations.json lost (or cut short, not naming it), the
# front took the delete of a critical container for a plain one's, and the
# core for "nothing recorded": nothing was released, the shared containers
# stayed shrunk.
@test "placement: the store lost or cut short, a critical container's delete rebuilds it and grows the pool back" {
	write_config '"gc_grace_seconds": 1'
	for damage in lost cut; do
		std=std-$damage crit=crit-$damage
		shared_and_critical "$std" "$crit"
		if [ $damage = lost ]; then
			rm "$WORK/state/allocations.json" "$WORK/state/allocations.json.prev"
			rm -f "$WORK/state/allocations.cache"
			want='missing: store rebuilt from live containers, kept 2 of 2 allocations (2 found in the runtime state)'
		else
			printf '{"version":1,"checksum":"x","allocations":[' >"$WORK/state/allocations.json"
			want='store rebuilt from live containers and allocations.json.prev, kept 2 of 2 allocations'
		fi
		"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-$crit" 2>"$WORK/del.err"
		grep -q "$want" "$WORK/state/rebuilds.log" || { cat "$WORK/state/rebuilds.log"; false; }
		[ "$(cpus_own "$std")" = 0-1 ]
		run alloc_json
		[ "$output" = '[{"id":"'"$ID-$std"'","state":"created","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
		"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-$std"
	done
}

# helper-14: alloc gc wrote a rebuilt store with the cpus the placement
# files hold (what the shared containers got at their create); the next
# settle took the shrunk cpuset they run on for one set from outside, and
# pinned them there for good.
@test "placement: alloc gc after the store's loss: the shared containers follow the pool, none is pinned" {
	write_config '"gc_grace_seconds": 1'
	shared_and_critical
	rm "$WORK/state/allocations.json" "$WORK/state/allocations.json.prev"
	rm -f "$WORK/state/allocations.cache"
	# a reader does not write the rebuilt store
	"$TOPOSHIMCTL" alloc list >/dev/null 2>&1
	[ ! -e "$WORK/state/allocations.json" ]
	run "$TOPOSHIMCTL" alloc gc
	[ "$status" -eq 0 ]
	[ "$(jq -c --arg id "$ID-std" '.allocations[] | select(.container_id == $id) | {cpus, pinned}' "$WORK/state/allocations.json")" = '{"cpus":"'$((1 - x))'","pinned":false}' ]
	"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-crit"
	[ "$(cpus_own std)" = 0-1 ]
	bundle crit2 critical 1
	create_start_own crit2
	! grep -q "changed outside" "$WORK/crit2.err"
	[ "$(cpus_own std)" = $((1 - $(cat "$WORK/crit2.out"))) ]
	run alloc_json
	[ "$(jq -c --arg id "$ID-std" '.[] | select(.id == $id) | .pinned' <<<"$output")" = false ]
}

# helper-15: with the roots file lost too and an empty copy, alloc gc (no
# --root) rebuilt an empty store and wrote it; the next critical create
# trusted it and took the cpu a running critical container held.
@test "placement: alloc gc does not write a store it rebuilt with no runtime root to look in" {
	write_config '"gc_grace_seconds": 1'
	shared_and_critical
	rm "$WORK/state/allocations.json" "$WORK/state/runtime-roots"
	rm -f "$WORK/state/allocations.cache"
	echo '{"version":1,"checksum":"fnv1a64:cbf29ce484222325","allocations":[]}' >"$WORK/state/allocations.json.prev"
	run "$TOPOSHIMCTL" alloc gc
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "toposhimctl: alloc: $WORK/state/allocations.json: rebuilt with no runtime root to look in (no record, no root in runtime-roots, no --root names one): not written; the next create or delete, which names its runtime root, rebuilds it" ]
	[ ! -e "$WORK/state/allocations.json" ]
	# the next create names its root: both are found, crit keeps its cpu
	bundle crit2 critical 1
	run "$TOPOSHIM" --root "$WORK/runc-root" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == *"would leave the shared pool empty"* ]] || fail "$output"
	grep -q 'missing: store rebuilt from live containers, kept 2 of 2 allocations (2 found in the runtime state)' \
		"$WORK/state/rebuilds.log"
	run alloc_json
	[ "$(jq -c 'sort_by(.id) | map({id, cpus})' <<<"$output")" = '[{"id":"'"$ID"'-crit","cpus":"'"$x"'"},{"id":"'"$ID"'-std","cpus":"'$((1 - x))'"}]' ]
}

# helper-14: a delete that rebuilt a damaged store without its container
# (exited: not kept) released nothing itself, and left the shared
# containers' cpus forgotten and unsettled until the next exclusive change.
@test "placement: a damaged store, its critical container exited before the delete: the pool grows back" {
	write_config '"gc_grace_seconds": 1'
	shared_and_critical
	runc --root "$WORK/runc-root" kill "$ID-crit" KILL
	for _ in $(seq 50); do
		[ "$(runc --root "$WORK/runc-root" state "$ID-crit" | jq -r .status)" = stopped ] && break
		sleep 0.1
	done
	grep -q '^{"version":1,"checksum":"fnv1a64-sum:[0-9a-f]\{16\}",' "$WORK/state/allocations.json"
	sed -i 's/"checksum":"fnv1a64-sum:[0-9a-f]*"/"checksum":"fnv1a64-sum:0000000000000000"/' "$WORK/state/allocations.json"
	"$TOPOSHIM" --root "$WORK/runc-root" delete "$ID-crit" 2>"$WORK/del.err"
	grep -q "checksum mismatch (stored 'fnv1a64-sum:0000000000000000', computed 'fnv1a64-sum:[0-9a-f]\{16\}'): store rebuilt from live containers, kept 1 of 2 allocations" "$WORK/del.err"
	[ "$(cpus_own std)" = 0-1 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-std","state":"created","class":"standard","cpus":"0-1","mems":"0","pinned":false}]' ]
}

@test "placement: a plain container taken into the store survives the store's loss" {
	# plain: no request, recorded only in the journal
	make_bundle "$WORK/plain" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	create_start_own plain
	[ ! -e "$WORK/plain/toposhim-placement.json" ]
	# a critical container shrinks the shared pool: the plain one is
	# recorded, resized, and gets a placement file for a later rebuild
	bundle crit critical 1
	create_start_own crit
	[ "$(cpus_own plain)" = 0 ]
	[ "$(jq -c '{id, class, cpus, cpus_written}' "$WORK/plain/toposhim-placement.json")" = '{"id":"'"$ID"'-plain","class":"standard","cpus":"0-1","cpus_written":false}' ]
	rm "$WORK/state/allocations.json" "$WORK/state/allocations.json.prev"
	bundle crit2 critical 1
	run "$TOPOSHIM" --root "$WORK/runc-root" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null
	[ "$status" -eq 1 ]
	grep -q 'missing: store rebuilt from live containers, kept 2 of 2 allocations (2 found in the runtime state)' "$WORK/state/rebuilds.log"
	# (the failed create settled the rebuilt store: the shared record's
	# cpus, unknown after the rebuild, are the pool's again)
	run alloc_json
	[ "$(jq -c 'sort_by(.id) | map({id, class, cpus})' <<<"$output")" = '[{"id":"'"$ID"'-crit","class":"critical","cpus":"1"},{"id":"'"$ID"'-plain","class":"standard","cpus":"0"}]' ]
	# crit goes: the adopted plain container grows back
	"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-crit"
	[ "$(cpus_own plain)" = 0-1 ]
}

# helper-8: rm -rf of the state dir (nothing left to tell a lost store
# from a new one) let the next critical create take the cpu a running
# critical container held, without a word.
@test "placement: the whole state dir removed: the next create finds the containers in its runtime root" {
	bundle crit critical 1
	create_start_own crit
	[ "$(cpus_own crit)" = 1 ]
	rm -rf "$WORK/state"
	bundle crit2 critical 1
	cp "$WORK/crit2/config.json" "$WORK/crit2.orig"
	# (stdio on files: were it created, the container would hold them)
	local rc=0
	"$TOPOSHIM" --root "$WORK/runc-root" create --bundle "$WORK/crit2" "$ID-crit2" </dev/null \
		>"$WORK/crit2.out" 2>"$WORK/crit2.err" || rc=$?
	runc --root "$WORK/runc-root" delete -f "$ID-crit2" >/dev/null 2>&1 || true
	[ "$rc" -eq 1 ]
	run cat "$WORK/crit2.err"
	[ "${lines[0]}" = "toposhim: $WORK/crit2/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 held by container '$ID-crit'" ]
	# the refusal alone on stderr; the rebuild is told in rebuilds.log
	[ "${#lines[@]}" -eq 1 ]
	cmp "$WORK/crit2.orig" "$WORK/crit2/config.json"
	grep -q 'missing, as is everything else of the store: store rebuilt' "$WORK/state/rebuilds.log"
	run alloc_json
	[ "$(jq -c 'map({id, class, cpus})' <<<"$output")" = '[{"id":"'"$ID"'-crit","class":"critical","cpus":"1"}]' ]
	# a new state dir and a runtime root without toposhim's containers:
	# a new store, no warning
	# (stdio on files: a created container holds them)
	mkdir -p "$WORK/other-root"
	rc=0
	TOPOSHIM_STATE_DIR=$WORK/state2 "$TOPOSHIM" --root "$WORK/other-root" \
		create --bundle "$WORK/crit2" "$ID-crit3" </dev/null >"$WORK/crit3.out" \
		2>"$WORK/crit3.err" || rc=$?
	runc --root "$WORK/other-root" delete -f "$ID-crit3" >/dev/null 2>&1 || true
	[ "$rc" -eq 0 ] || fail "status $rc: $(cat "$WORK/crit3.err")"
	[ ! -s "$WORK/crit3.err" ]
	[ ! -e "$WORK/state2/rebuilds.log" ]
}

@test "placement: a resized container whose placement file is gone gets it back" {
	make_bundle "$WORK/plain" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	create_start_own plain
	bundle crit critical 1
	create_start_own crit
	[ "$(cpus_own plain)" = 0 ]
	# lost (or a plain container recorded before they were written)
	rm "$WORK/plain/toposhim-placement.json"
	# crit goes: the plain one is resized to 0-1 and its file written again
	"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-crit"
	[ "$(cpus_own plain)" = 0-1 ]
	[ "$(jq -c '{id, class, cpus, cpus_written}' "$WORK/plain/toposhim-placement.json")" = '{"id":"'"$ID"'-plain","class":"standard","cpus":"0-1","cpus_written":false}' ]
	# so a loss of the whole store still finds it, and it is resized
	rm "$WORK/state/allocations.json" "$WORK/state/allocations.json.prev"
	bundle crit2 critical 1
	create_start_own crit2
	[ "$(cpus_own plain)" = 0 ]
	grep -q 'missing: store rebuilt from live containers, kept 1 of 1 allocations (1 found in the runtime state)' "$WORK/state/rebuilds.log"
}

@test "placement: an exited critical container that is not deleted gives its CPU to the next critical create" {
	# kubelet keeps exited (init) containers without deleting them
	make_bundle "$WORK/done" '["true"]'
	set_annotation "$WORK/done" toposhim.io/class critical
	set_annotation "$WORK/done" toposhim.io/cpus 1
	"$TOPOSHIM" create --bundle "$WORK/done" "$ID-done" </dev/null >/dev/null
	"$TOPOSHIM" start "$ID-done"
	for _ in $(seq 50); do
		[ "$(runc state "$ID-done" | jq -r .status)" = stopped ] && break
		sleep 0.1
	done
	[ "$(runc state "$ID-done" | jq -r .status)" = stopped ]
	[ "$(cpus_of done)" = '{"cpus":"1","mems":"0"}' ]
	# no hook ran: nothing but the runtime's state says it exited
	run jq -c .hooks "$WORK/done/config.json"
	[ "$output" = null ]
	bundle crit critical 1
	create_start crit
	[ "$(cat "$WORK/crit.out")" = 1 ]
	run alloc_json
	[ "$output" = '[{"id":"'"$ID"'-crit","state":"created","class":"critical","cpus":"1","mems":"0","pinned":false}]' ]
	# still there for the engine to delete
	[ "$(runc state "$ID-done" | jq -r .status)" = stopped ]
	"$TOPOSHIM" delete "$ID-done"
	run runc state "$ID-done"
	[ "$status" -ne 0 ]
}

@test "placement: what runc reports carries nothing of toposhim's: no annotation, no hook" {
	bundle crit critical 1
	create_start crit
	run runc state "$ID-crit"
	[ "$status" -eq 0 ]
	[ "$(jq -c '.annotations' <<<"$output")" = '{"toposhim.io/class":"critical","toposhim.io/cpus":"1"}' ]
	run jq -c .hooks "$WORK/crit/config.json"
	[ "$output" = null ]
}

@test "placement: a runc create killed before runc wrote its state gives its exclusive CPU back" {
	# a runc that dies as a killed one does: its dir and exec.fifo made,
	# no state.json (helper-22: containerd restarted mid-create)
	mkdir -p "$WORK/bin" "$WORK/runc-root"
	cat >"$WORK/bin/runc" <<'SH'
#!/bin/sh
root=$2 id=$(eval echo "\${$#}")
mkdir -p "$root/$id" && mkfifo "$root/$id/exec.fifo"
kill -9 $$
SH
	chmod 0755 "$WORK/bin/runc"
	bundle crit critical 1
	run env TOPOSHIM_RUNTIME="$WORK/bin/runc" "$TOPOSHIM" --root "$WORK/runc-root" create \
		--bundle "$WORK/crit" "$ID-crit"
	[ "$status" -eq 137 ]
	[ -p "$WORK/runc-root/$ID-crit/exec.fifo" ]
	run runc --root "$WORK/runc-root" state "$ID-crit"
	[ "$status" -ne 0 ]
	# runc says it does not exist: the record goes, CPU 1 with it
	run "$TOPOSHIMCTL" alloc gc --grace 0
	[ "$status" -eq 0 ]
	[ "$output" = "collected $ID-crit" ]
	bundle crit2 critical 1
	create_start_own crit2
	[ "$(cat "$WORK/crit2.out")" = 1 ]
}

@test "placement: a create killed while its settle resized leaves no container pinned; the next settle records what it moved" {
	# the runtime: real runc, but the second `update` hangs while
	# $WORK/hang exists (helper-22: containerd killed a create there)
	mkdir -p "$WORK/bin"
	cat >"$WORK/bin/runc" <<SH
#!/bin/sh
case " \$* " in
*" update "*)
	n=\$((\$(cat "$WORK/updates" 2>/dev/null || echo 0) + 1))
	echo \$n >"$WORK/updates"
	if [ \$n = 2 ] && [ -e "$WORK/hang" ]; then
		echo \$\$ >"$WORK/hang.pid"
		exec sleep 1000
	fi ;;
esac
exec $(command -v runc) "\$@"
SH
	chmod 0755 "$WORK/bin/runc"
	export TOPOSHIM_RUNTIME="$WORK/bin/runc"
	local s
	for s in s1 s2 s3; do
		bundle "$s" standard
		create_start_own "$s"
		[ "$(cpus_own "$s")" = 0-1 ]
	done
	bundle crit critical 1
	touch "$WORK/hang"
	"$TOPOSHIM" --root "$WORK/runc-root" create --bundle "$WORK/crit" "$ID-crit" </dev/null \
		>"$WORK/crit.out" 2>&1 &
	local creator=$! i
	for i in $(seq 100); do
		[ -s "$WORK/hang.pid" ] && break
		sleep 0.1
	done
	[ -s "$WORK/hang.pid" ] || { cat "$WORK/crit.out"; false; }
	# killed mid-settle
	kill -9 "$creator"
	kill "$(cat "$WORK/hang.pid")"
	wait "$creator" || true
	rm "$WORK/hang"
	[ -e "$WORK/state/resizing" ]
	run jq -r '.[] | .cpus' "$WORK/state/resizing"
	[ "$output" = $'0\n0\n0' ]
	# (the updates run two at a time: which one hung, and whether its
	# cgroup was written first, is the race's) some moved, their records
	# still say 0-1
	local moved=""
	for s in s1 s2 s3; do
		case "$(cpus_own "$s")" in
		0) moved="$moved $s" ;;
		0-1) ;;
		*) false ;;
		esac
	done
	[ -n "$moved" ]
	[ "$(jq -r '[.allocations[] | select(.class == "standard") | .cpus] | unique | join(" ")' "$WORK/state/allocations.json")" = "0-1" ]
	# the next settle (the collection of crit's record by alloc gc)
	# records those moves as its own, then grows the pool back
	run "$TOPOSHIMCTL" alloc gc --grace 0
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "collected $ID-crit" ]
	[ "${#lines[@]}" -eq $(($(wc -w <<<"$moved") + 1)) ]
	for s in $moved; do
		[[ "$output" == *"toposhim: info: container '$ID-$s': a resize to cpus 0 was not recorded (its settle was stopped): recorded now"* ]]
		grep -q "container '$ID-$s': a resize to cpus 0 was not recorded (its settle was stopped): recorded now" \
			"$WORK/state/resizes.log"
	done
	! grep -q "container '$ID-s3': a resize" "$WORK/state/resizes.log"
	[ ! -e "$WORK/state/resizing" ]
	for s in s1 s2 s3; do [ "$(cpus_own "$s")" = 0-1 ]; done
	# a critical create and its delete move them all, none is pinned
	create_start_own crit
	x=$(cat "$WORK/crit.out")
	for s in s1 s2 s3; do [ "$(cpus_own "$s")" = $((1 - x)) ]; done
	run alloc_json
	[ "$(jq -c '[.[] | select(.pinned)] | length' <<<"$output")" = 0 ]
	! grep -q "changed outside toposhim" "$WORK/state/resizes.log"
	"$TOPOSHIM" --root "$WORK/runc-root" delete --force "$ID-crit"
	for s in s1 s2 s3; do [ "$(cpus_own "$s")" = 0-1 ]; done
}

@test "placement: a resizing file that cannot be written is warned about" {
	# helper-23: a directory there turned the record of resizes off unseen
	mkdir -p "$WORK/state/resizing/sub"
	shared_and_critical
	grep -q "warning: $WORK/state/resizing: not written (.*): a resize this settle does not finish may later be taken for one made outside toposhim" \
		"$WORK/state/resizes.log" || { cat "$WORK/state/resizes.log"; false; }
	grep -q "warning: $WORK/state/resizing: cannot remove: Is a directory" "$WORK/state/resizes.log"
	# the resize itself is made and recorded all the same
	run alloc_json
	[ "$(jq -r --arg id "$ID-std" '.[] | select(.id == $id) | .cpus' <<<"$output")" = $((1 - x)) ]
}
