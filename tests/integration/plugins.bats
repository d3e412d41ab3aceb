#!/usr/bin/env bats
# The plugin chain with real runc through toposhim.  Needs the chain wired
# into create (pre-create) and into `toposhim hook create-runtime|poststop`
# (create, delete); until then this file is not in TESTS.

load containers

setup() {
	require_root
	require_cmd runc
	getent passwd toposhim-plugin >/dev/null ||
		skip "no user toposhim-plugin, which plugins run as (contrib/plugin-user.sh creates it)"
	containers_setup
	# Plugins run as toposhim-plugin: what they write goes here.
	install -d -m 0755 -o toposhim-plugin "$WORK/out"
	LOG="$WORK/out/events.jsonl"
	# toposhim runs only plugins that nobody but root can change: the
	# checkout and build tree may be another user's, so run copies.
	HOOKS="$WORK/plugins"
	install -d -m 0755 "$HOOKS"
	install -m 0755 "$TS_SRCDIR/tests/fixtures/plugins/scripted" \
		"$TS_BUILDDIR/tests/fixtures/plugins/probe" "$TS_BUILDDIR/hooks/log" \
		"$TS_BUILDDIR/hooks/example" "$TS_BUILDDIR/hooks/confine" \
		"$TS_BUILDDIR/hooks/clearcfs" "$HOOKS/"
	SCRIPTED="$HOOKS/scripted"
	PROBE="$HOOKS/probe"
}

teardown() {
	delete_test_containers
	containers_teardown
}

# plugins_config JSON_LIST: a toposhim config with that "plugins" list.
plugins_config() {
	write_config "\"plugins\": $1"
}

log_plugin() {
	echo "{\"type\": \"log\", \"path\": \"$HOOKS/log\", \"conf\": {\"path\": \"$LOG\"}, \"stages\": [\"create\", \"delete\"], \"sandbox\": {\"writable\": [\"$WORK/out\"]}}"
}

@test "a two-plugin chain: the second sees the first's result" {
	plugins_config "[{\"type\": \"first\", \"path\": \"$SCRIPTED\", \"conf\": {\"name\": \"first\"}}, $(log_plugin)]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run jq -c 'select(.state == "create") | [.id, .results]' "$LOG"
	[ "$output" = "[\"$ID\",[\"first\"]]" ]
}

@test "on_error fail: the create fails with the plugin named" {
	plugins_config "[{\"type\": \"example\", \"path\": \"$HOOKS/example\", \"conf\": {\"refuse\": \"$ID\"}}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"plugin 'example' ($HOOKS/example): exited with status 1: stderr: 'example: container '$ID' is not welcome"* ]] || { echo "$output"; false; }
}

@test "a hanging plugin is killed at its timeout" {
	plugins_config "[{\"type\": \"hang\", \"path\": \"$SCRIPTED\", \"timeout_ms\": 1000, \"conf\": {\"mode\": \"hang\"}}]"
	make_bundle "$WORK/b" '["true"]'
	SECONDS=0
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[ "$SECONDS" -lt 30 ]
	[[ "$output" =~ "plugin 'hang' ($SCRIPTED): timed out after 1000 ms: stderr: 'hang: pid "([0-9]+)"'" ]] || { echo "$output"; false; }
	pid=${BASH_REMATCH[1]}
	# (runc quotes the hook's stderr): the line ends with the plugin's
	# stderr, no errno text after it (helper-21 saw "...: Connection timed out")
	[[ "$output" == *"timed out after 1000 ms: stderr: 'hang: pid $pid'\\n\""* ]] || { echo "$output"; false; }
	[[ "$output" != *"Connection timed out"* ]] || { echo "$output"; false; }
	for _ in $(seq 100); do kill -0 -- "-$pid" 2>/dev/null || break; sleep 0.05; done
	! kill -0 -- "-$pid" 2>/dev/null
}

@test "on_error ignore: the chain goes on" {
	plugins_config "[{\"type\": \"bad\", \"path\": \"$SCRIPTED\", \"on_error\": \"ignore\", \"conf\": {\"mode\": \"invalid\"}}, $(log_plugin)]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run jq -c 'select(.state == "create") | .results' "$LOG"
	[ "$output" = "[]" ]
}

@test "the delete stage runs after runc delete" {
	plugins_config "[$(log_plugin)]"
	make_bundle "$WORK/b" '["sleep","60"]'
	"$TOPOSHIM" create --bundle "$WORK/b" "$ID" </dev/null >/dev/null 2>&1
	"$TOPOSHIM" start "$ID"
	run jq -r .state "$LOG"
	[ "$output" = "create" ]
	"$TOPOSHIM" kill "$ID" KILL
	for _ in $(seq 50); do [ "$(runc state "$ID" | jq -r .status)" = stopped ] && break; sleep 0.1; done
	"$TOPOSHIM" delete "$ID"
	run jq -r .state "$LOG"
	[ "$output" = "$(printf 'create\ndelete')" ]
	run jq -r 'select(.state == "delete") | .id' "$LOG"
	[ "$output" = "$ID" ]
}

@test "plugins configured after a create: the engine's delete still releases that container" {
	[ "$(nproc --all)" -eq 2 ] || skip "written for a 2-CPU host ($(nproc --all) CPUs)"
	write_config '"gc_grace_seconds": 3600'
	make_bundle "$WORK/std" '["sleep","120"]'
	"$TOPOSHIM" create --bundle "$WORK/std" "$ID-std" </dev/null >/dev/null 2>&1
	"$TOPOSHIM" start "$ID-std"
	make_bundle "$WORK/crit" '["sleep","120"]'
	set_annotation "$WORK/crit" toposhim.io/class critical
	set_annotation "$WORK/crit" toposhim.io/cpus 1
	"$TOPOSHIM" create --bundle "$WORK/crit" "$ID-crit" </dev/null >/dev/null 2>&1
	"$TOPOSHIM" start "$ID-crit"
	crit=$(cpus_allowed_in "$ID-crit")
	[ "$crit" = 0 ] || [ "$crit" = 1 ]
	[ "$(cpus_allowed_in "$ID-std")" = $((1 - crit)) ]
	# now a plugin with a delete stage: its poststop hook releases the
	# containers created with it; $ID-crit has none (helper-11: its delete
	# left it recorded, and $ID-std on one cpu, until the next collection)
	write_config '"gc_grace_seconds": 3600, "plugins": ['"$(log_plugin)"']'
	"$TOPOSHIM" delete --force "$ID-crit"
	[ "$(alloc_json | jq -c 'map(.id)')" = '["'"$ID"'-std"]' ]
	[ "$(cpus_allowed_in "$ID-std")" = 0-1 ]
	# no delete stage for a container no plugin saw created
	[ ! -e "$LOG" ]
	"$TOPOSHIM" delete --force "$ID-std"
}

@test "confine keeps the reserved CPUs out of the container" {
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs"
	# confine writes the container's cgroup files, which are root's and
	# read-only for a plugin unless made writable.
	plugins_config "[{\"type\": \"confine\", \"path\": \"$HOOKS/confine\", \"conf\": {\"reserved\": \"0\"}, \"sandbox\": {\"uid\": 0, \"writable\": [\"/sys/fs/cgroup\"]}}]"
	make_bundle "$WORK/b" '["grep","Cpus_allowed_list","/proc/self/status"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "Cpus_allowed_list:	1-$(($(nproc) - 1))" ] || [ "$output" = "Cpus_allowed_list:	1" ]
}

@test "the sandbox: a plugin runs as toposhim-plugin without capabilities, with no_new_privs and seccomp" {
	cat >"$WORK/sandboxed" <<PLUGIN
#!/bin/sh
cat >/dev/null
grep -E '^(Uid|Gid|Groups|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/\$\$/status >"$WORK/out/sandbox.txt"
env >"$WORK/out/sandbox-env.txt"
echo '{"plugin": "sandboxed", "version": "0.1", "error": "", "metadata": {}}'
PLUGIN
	chmod 0755 "$WORK/sandboxed"
	plugins_config "[{\"type\": \"sandboxed\", \"path\": \"$WORK/sandboxed\", \"sandbox\": {\"writable\": [\"$WORK/out\"]}}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	uid=$(id -u toposhim-plugin) gid=$(id -g toposhim-plugin)
	[ "$(cat "$WORK/out/sandbox.txt")" = "$(printf 'Uid:\t%s\t%s\t%s\t%s\nGid:\t%s\t%s\t%s\t%s\nGroups:\t%s \nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2' "$uid" "$uid" "$uid" "$uid" "$gid" "$gid" "$gid" "$gid" "$gid")" ] || { cat "$WORK/out/sandbox.txt"; false; }
	run grep -c -v -E '^(PATH|PWD)=' "$WORK/out/sandbox-env.txt"
	[ "$output" = 0 ]
}

@test "pre-create: an adjust reaches config.json and the container" {
	plugins_config "[{\"type\": \"adj\", \"path\": \"$SCRIPTED\", \"stages\": [\"pre-create\"], \"sandbox\": {\"adjust\": [\"annotations:example.com/\"]}, \"conf\": {\"mode\": \"adjust\", \"adjust\": {\"process\": {\"env\": [\"FROM_PLUGIN=yes\"]}, \"annotations\": {\"example.com/adjusted\": \"1\"}}}}]"
	make_bundle "$WORK/b" '["sh","-c","echo $FROM_PLUGIN"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[ "$output" = "yes" ]
	run jq -r '.annotations["example.com/adjusted"]' "$WORK/b/config.json"
	[ "$output" = "1" ]
}

@test "pre-create: an adjust outside what is allowed fails the create" {
	plugins_config "[{\"type\": \"adj\", \"path\": \"$SCRIPTED\", \"stages\": [\"pre-create\"], \"conf\": {\"mode\": \"adjust\", \"adjust\": {\"process\": {\"args\": [\"/bin/sh\"]}}}}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"plugin 'adj' ($SCRIPTED): adjust: '/process/args': not allowed"* ]] || { echo "$output"; false; }
}

@test "the sandbox: a user or uid /etc/passwd lacks is refused by name, not a crash" {
	# the static toposhim-core cannot load NSS modules: getpwnam() of a name
	# the file lacks went on to libnss_systemd and crashed it (helper-11:
	# SIGSEGV, exit 139, no message); sandbox users come from the file
	! grep -q '^toposhim-no-such-user:' /etc/passwd
	! grep -q '^[^:]*:[^:]*:54321:' /etc/passwd
	make_bundle "$WORK/b" '["true"]'
	cp "$WORK/b/config.json" "$WORK/before.json"
	plugins_config "[{\"type\": \"x\", \"path\": \"$SCRIPTED\", \"stages\": [\"pre-create\"], \"sandbox\": {\"user\": \"toposhim-no-such-user\"}}]"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ] || { echo "$status $output"; false; }
	[ "$output" = "toposhim: plugin 'x' ($SCRIPTED): cannot sandbox: user 'toposhim-no-such-user' does not exist (create it with useradd --system toposhim-no-such-user, or set sandbox.uid)" ]
	plugins_config "[{\"type\": \"x\", \"path\": \"$SCRIPTED\", \"stages\": [\"pre-create\"], \"sandbox\": {\"uid\": 54321}}]"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ] || { echo "$status $output"; false; }
	[ "$output" = "toposhim: plugin 'x' ($SCRIPTED): cannot sandbox: uid 54321 has no passwd entry: set sandbox.gid" ]
	cmp "$WORK/b/config.json" "$WORK/before.json"
	# a delete-stage plugin runs from the poststop hook, at the delete:
	# its user is checked at the create all the same (helper-12: the
	# create ran, and every delete's hook failed)
	plugins_config "[{\"type\": \"x\", \"path\": \"$SCRIPTED\", \"stages\": [\"delete\"], \"sandbox\": {\"user\": \"toposhim-no-such-user\"}}]"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ] || { echo "$status $output"; false; }
	[ "$output" = "toposhim: plugin 'x' ($SCRIPTED): cannot sandbox: user 'toposhim-no-such-user' does not exist (create it with useradd --system toposhim-no-such-user, or set sandbox.uid)" ]
	cmp "$WORK/b/config.json" "$WORK/before.json"
	# on_error ignore: its failure would fail nothing, nor does its user
	plugins_config "[{\"type\": \"x\", \"path\": \"$SCRIPTED\", \"stages\": [\"delete\"], \"on_error\": \"ignore\", \"sandbox\": {\"user\": \"toposhim-no-such-user\"}}]"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$status $output"; false; }
}

@test "clearcfs removes the CFS quota of a critical container" {
	[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs for one exclusive CPU"
	plugins_config "[{\"type\": \"clearcfs\", \"path\": \"$HOOKS/clearcfs\", \"sandbox\": {\"uid\": 0, \"writable\": [\"/sys/fs/cgroup\"]}}], \"placement\": {\"reserved\": {\"cpus\": \"0\"}}"
	make_bundle "$WORK/b" '["sh","-c","cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us 2>/dev/null || cut -d\" \" -f1 /sys/fs/cgroup/cpu.max"]'
	jq '.linux.resources.cpu += {"quota": 100000, "period": 100000, "shares": 1024}' \
		"$WORK/b/config.json" >"$WORK/b.json" && mv "$WORK/b.json" "$WORK/b/config.json"
	set_annotation "$WORK/b" toposhim.io/class critical
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	[[ "$output" == *"-1" || "$output" == *"max" ]]
	# the config asked for a quota: without the plugin it would be in force
	run jq -r '.linux.resources.cpu.quota' "$WORK/b/config.json"
	[ "$output" = 100000 ]
}

@test "the sandbox: no new namespaces, userfaultfd, perf events or io_uring for a plugin" {
	plugins_config "[{\"type\": \"probe\", \"path\": \"$PROBE\", \"stages\": [\"pre-create\"], \"conf\": {\"probe-report\": \"stderr\"}}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"plugin 'probe' ($PROBE): exited with status 1: stderr: '"* ]] || { echo "$output"; false; }
	for want in unshare=EPERM unshare_net=EPERM unshare_mnt=EPERM clone=EPERM clone_pid=EPERM \
		"clone3=errno 38" setns=EPERM userfaultfd=EPERM perf_event_open=EPERM \
		io_uring_setup=EPERM io_uring_enter=EPERM io_uring_register=EPERM clone_plain=ok; do
		[[ "$output" == *" $want "* ]] || { echo "want $want in: $output"; false; }
	done
}

# An attacker's plugin: it leaves a mark that it ran.
write_evil() {
	cat >"$1" <<PLUGIN
#!/bin/sh
cat >/dev/null
echo ran >"$WORK/evil-ran"
echo '{"plugin": "evil", "version": "0.1", "error": "", "metadata": {}}'
PLUGIN
	chmod 0755 "$1"
}

@test "owner and mode: a world-writable plugin directory is refused" {
	install -d -m 0777 "$WORK/open"
	write_evil "$WORK/open/evil"
	write_config "\"plugin_dirs\": [\"$WORK/open\"], \"plugins\": [{\"type\": \"evil\", \"stages\": [\"pre-create\"]}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[ "$output" = "toposhim: $WORK/toposhim.json: '/plugins/0/type': plugin directory: unsafe path '$WORK/open' (owner 0, mode 0777): must be owned by root and not writable by group or others" ] || { echo "$output"; false; }
	[ ! -e "$WORK/evil-ran" ]
}

@test "owner and mode: a plugin binary of another user is refused" {
	write_evil "$HOOKS/evil"
	chown 1000 "$HOOKS/evil"
	plugins_config "[{\"type\": \"evil\", \"path\": \"$HOOKS/evil\", \"stages\": [\"pre-create\"]}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[ "$output" = "toposhim: plugin 'evil' ($HOOKS/evil): unsafe path '$HOOKS/evil' (owner 1000, mode 0755): must be owned by root and not writable by group or others" ] || { echo "$output"; false; }
	[ ! -e "$WORK/evil-ran" ]
}

# write_forger FILE: a plugin that replaces the state dir's allocations.json
# with a record whose runtime is itself (which a later rebalance would
# execute as root), and fails with the shell's message when it cannot.
write_forger() {
	cat >"$1" <<PLUGIN
#!/bin/sh
cat >/dev/null
printf '{"version": 1, "allocations": [{"container_id": "x", "runtime": "%s"}]}' "\$0" \
	>"$WORK/state/allocations.json" || exit 1
echo '{"plugin": "forger", "version": "0.1", "error": "", "metadata": {}}'
PLUGIN
	chmod 0755 "$1"
}

# state_with_one_container: a running container whose allocation is in
# $WORK/state, and a copy of the state file to compare with.
state_with_one_container() {
	write_config
	make_bundle "$WORK/a" '["sleep","60"]'
	# a request: a recorded container (a plain one is not)
	set_annotation "$WORK/a" toposhim.io/class standard
	"$TOPOSHIM" create --bundle "$WORK/a" "$ID-a" </dev/null >/dev/null 2>&1
	# the store learns the init from runc's state (no hook records it)
	"$TOPOSHIMCTL" alloc list >/dev/null
	cp "$WORK/state/allocations.json" "$WORK/allocations.before"
}

@test "a plugin cannot write the state dir (runs as toposhim-plugin)" {
	state_with_one_container
	write_forger "$HOOKS/forger"
	plugins_config "[{\"type\": \"forger\", \"path\": \"$HOOKS/forger\", \"stages\": [\"pre-create\"]}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"plugin 'forger' ($HOOKS/forger): exited with status 1: stderr: '$HOOKS/forger: 3: cannot create $WORK/state/allocations.json: Permission denied'" ]] || { echo "$output"; false; }
	cmp "$WORK/allocations.before" "$WORK/state/allocations.json"
}

@test "a root plugin cannot write the state dir either (read-only mount namespace)" {
	state_with_one_container
	write_forger "$HOOKS/forger"
	plugins_config "[{\"type\": \"forger\", \"path\": \"$HOOKS/forger\", \"stages\": [\"pre-create\"], \"sandbox\": {\"uid\": 0}}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == *"plugin 'forger' ($HOOKS/forger): exited with status 1: stderr: '$HOOKS/forger: 3: cannot create $WORK/state/allocations.json: Read-only file system'" ]] || { echo "$output"; false; }
	cmp "$WORK/allocations.before" "$WORK/state/allocations.json"
}

@test "the state dir cannot be made writable for a plugin" {
	write_forger "$HOOKS/forger"
	plugins_config "[{\"type\": \"forger\", \"path\": \"$HOOKS/forger\", \"stages\": [\"pre-create\"], \"sandbox\": {\"uid\": 0, \"writable\": [\"$WORK\"]}}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[ "$output" = "toposhim: $WORK/toposhim.json: '/plugins/0/sandbox/writable/0': overlaps the state dir $WORK/state '$WORK'" ] || { echo "$output"; false; }
}

# gone PID: the process is gone, or a zombie waiting for init.
gone() {
	[ ! -e "/proc/$1" ] || [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" = Z ]
}

@test "a plugin's setsid child does not outlive it (its cgroup is killed)" {
	cat >"$HOOKS/leaver" <<'PLUGIN'
#!/bin/sh
cat >/dev/null
setsid sleep 1000 </dev/null >/dev/null 2>&1 &
# exit only once the child is in a session of its own
for _ in $(seq 200); do
	[ "$(cut -d' ' -f6 "/proc/$!/stat")" = "$!" ] && break
	sleep 0.01
done
echo "left pid $!" >&2
exit 1
PLUGIN
	chmod 0755 "$HOOKS/leaver"
	plugins_config "[{\"type\": \"leaver\", \"path\": \"$HOOKS/leaver\", \"stages\": [\"pre-create\"]}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" =~ "plugin 'leaver' ($HOOKS/leaver): exited with status 1: stderr: 'left pid "([0-9]+)"'" ]] || { echo "$output"; false; }
	pid=${BASH_REMATCH[1]}
	for _ in $(seq 100); do gone "$pid" && break; sleep 0.05; done
	gone "$pid" || { kill -9 "$pid"; false; }
}

@test "a plugin's cgroup limits its pids and memory" {
	[ -e /sys/fs/cgroup/pids/cgroup.procs ] || grep -qw pids /sys/fs/cgroup/cgroup.controllers ||
		skip "the host has no pids cgroup controller"
	[ -e /sys/fs/cgroup/memory/cgroup.procs ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers ||
		skip "the host has no memory cgroup controller"
	plugins_config "[{\"type\": \"forks\", \"path\": \"$SCRIPTED\", \"stages\": [\"pre-create\"], \"sandbox\": {\"pids_max\": 10}, \"conf\": {\"mode\": \"forks\", \"count\": 30}}]"
	make_bundle "$WORK/b" '["true"]'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == "toposhim: plugin 'forks' ($SCRIPTED): exited with status 2: stderr: '$SCRIPTED: "*": Cannot fork'" ]] || { echo "$output"; false; }
	plugins_config "[{\"type\": \"hog\", \"path\": \"$SCRIPTED\", \"stages\": [\"pre-create\"], \"timeout_ms\": 30000, \"sandbox\": {\"memory_max_bytes\": 16777216}, \"conf\": {\"mode\": \"hog\", \"bytes\": 67108864}}]"
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[[ "$output" == "toposhim: plugin 'hog' ($SCRIPTED): killed by signal 9"* ]] || { echo "$output"; false; }
}

# adjust_plugin ADJUST_JSON [SANDBOX_JSON]: a pre-create plugin returning it.
adjust_plugin() {
	plugins_config "[{\"type\": \"adj\", \"path\": \"$SCRIPTED\", \"stages\": [\"pre-create\"], \"sandbox\": ${2:-{\}}, \"conf\": {\"mode\": \"adjust\", \"adjust\": $1}}]"
}

@test "pre-create: a plugin cannot allow every device without the opt-in" {
	make_bundle "$WORK/b" '["true"]'
	cp "$WORK/b/config.json" "$WORK/config.before"
	adjust_plugin '{"linux": {"resources": {"devices": [{"allow": true, "access": "rwm"}]}}}'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[ "$output" = "toposhim: plugin 'adj' ($SCRIPTED): adjust: '/linux/resources/devices': not allowed without \"devices\" in sandbox.adjust '[{\"allow\":true,\"access\":\"rwm\"}]'" ] || { echo "$output"; false; }
	cmp "$WORK/config.before" "$WORK/b/config.json"
	# with the opt-in, the list is the plugin's
	adjust_plugin '{"linux": {"resources": {"devices": [{"allow": true, "access": "rwm"}]}}}' '{"adjust": ["devices"]}'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	run jq -c .linux.resources.devices "$WORK/b/config.json"
	[ "$output" = '[{"allow":true,"access":"rwm"}]' ]
}

@test "pre-create: a plugin cannot set unified cgroup keys without the opt-in" {
	make_bundle "$WORK/b" '["true"]'
	cp "$WORK/b/config.json" "$WORK/config.before"
	adjust_plugin '{"linux": {"resources": {"unified": {"memory.max": "max"}}}}'
	run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
	[ "$status" -ne 0 ]
	[ "$output" = "toposhim: plugin 'adj' ($SCRIPTED): adjust: '/linux/resources/unified/memory.max': not allowed without \"unified\" in sandbox.adjust 'max'" ] || { echo "$output"; false; }
	cmp "$WORK/config.before" "$WORK/b/config.json"
}

@test "pre-create: a plugin cannot set a seccomp receiver annotation without the opt-in" {
	make_bundle "$WORK/b" '["true"]'
	cp "$WORK/b/config.json" "$WORK/config.before"
	for sandbox in '{}' '{"adjust": ["annotations:example.com/"]}'; do
		adjust_plugin '{"annotations": {"run.oci.seccomp.receiver": "/run/evil.sock"}}' "$sandbox"
		run "$TOPOSHIM" run --bundle "$WORK/b" "$ID"
		[ "$status" -ne 0 ]
		[ "$output" = "toposhim: plugin 'adj' ($SCRIPTED): adjust: '/annotations/run.oci.seccomp.receiver': not allowed without \"annotations\" in sandbox.adjust '/run/evil.sock'" ] || { echo "$output"; false; }
		cmp "$WORK/config.before" "$WORK/b/config.json"
	done
}
