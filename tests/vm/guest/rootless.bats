#!/usr/bin/env bats
# Rootless placement in a delegated cgroup v2 subtree (issue 11): a user
# that owns a cgroup (as systemd's Delegate=yes or an operator's chown give
# it) runs toposhim and `runc --rootless`; toposhim sees the parent's
# cpuset writable and places the container there, and runc applies it.
# The host (cgroup v1 for the user) only shows the other case: placement
# skipped with one warning (tests/integration/rootless.bats).
#
# The user is uid/gid 1000 (no passwd entry is needed: util-linux's
# setpriv, which run.sh puts in /usr/libexec/ts-vm, takes numbers).  Its
# processes live in the leaf <subtree>/session, its containers beside it,
# so that moving them needs write access to the subtree only (the cgroup
# v2 delegation rule: the common ancestor's cgroup.procs).

# shellcheck disable=SC2016 # $names in single quotes are jq variables
load helpers

RL_UID=1000
RL_CG=/sys/fs/cgroup/ts-rootless

setup()
{
	ts_require_layout
	ts_require_toposhim /usr/sbin/runc
	# bats' own temp dirs are root's alone (0700 parents): a dir of its own
	RL_HOME=$(mktemp -d /tmp/ts-rootless.XXXXXX)
	chmod 0755 "$RL_HOME"
	mkdir -p "$RL_HOME/xdg"
	chmod 0700 "$RL_HOME/xdg"
	echo "{\"policy\": $TS_TEST_POLICY}" >"$RL_HOME/toposhim.json"
	chmod 0644 "$RL_HOME/toposhim.json"
	chown -R "$RL_UID:$RL_UID" "$RL_HOME"
	# the delegated subtree: the cgroup and its interface files the user
	# needs are the user's; its children get cpuset, cpu, memory and pids
	mkdir -p "$RL_CG/session"
	echo "+cpuset +cpu +memory +pids" >"$RL_CG/cgroup.subtree_control"
	chown "$RL_UID:$RL_UID" "$RL_CG" "$RL_CG/cgroup.procs" "$RL_CG/cgroup.threads" \
		"$RL_CG/cgroup.subtree_control"
	chown -R "$RL_UID:$RL_UID" "$RL_CG/session"
}

teardown()
{
	as_user runc --root "$RL_HOME/xdg/runc" delete -f "$RL_ID" >/dev/null 2>&1 || true
	local d
	for d in "$RL_CG"/*/; do
		[ -d "$d" ] || continue
		[ "${d%/}" = "$RL_CG/session" ] || rmdir "$d" 2>/dev/null || true
	done
	# the session's processes (this test's shells) have ended by now
	rmdir "$RL_CG/session" "$RL_CG" 2>/dev/null || true
	rm -rf "$RL_HOME"
}

# as_user CMD...: CMD as the user, from inside its session cgroup, with a
# rootless runtime's environment.
as_user()
{
	sh -c 'echo $$ >"$0/session/cgroup.procs" && exec "$@"' "$RL_CG" \
		/usr/libexec/ts-vm/setpriv --reuid="$RL_UID" --regid="$RL_UID" --clear-groups \
		env -i PATH=/usr/sbin:/usr/bin:/bin HOME="$RL_HOME" XDG_RUNTIME_DIR="$RL_HOME/xdg" \
		TOPOSHIM_CONFIG="$RL_HOME/toposhim.json" TOPOSHIM_RUNTIME=/usr/sbin/runc "$@"
}

@test "rootless: in a delegated cgroup v2 subtree toposhim places a critical container and runc applies it" {
	RL_ID=ts-rootless-$BATS_TEST_NUMBER
	local b=$RL_HOME/b cpus want rc=0 i
	mkdir -p "$b"
	(cd "$b" && runc spec --rootless)
	jq --arg root "$TS_TEMPLATE/rootfs" --arg cg "/ts-rootless/$RL_ID" --argjson u "$RL_UID" '
		.root.path = $root | .process.terminal = false
		| .process.args = ["sh", "-c", "grep Cpus_allowed_list /proc/self/status | cut -f2; echo ready; exec sleep 600"]
		| .linux.uidMappings = [{containerID: 0, hostID: $u, size: 1}]
		| .linux.gidMappings = [{containerID: 0, hostID: $u, size: 1}]
		| .linux.cgroupsPath = $cg
		| .annotations = {"toposhim.io/class": "critical", "toposhim.io/cpus": "1"}' \
		"$b/config.json" >"$b/config.json.new"
	mv "$b/config.json.new" "$b/config.json"
	chown -R "$RL_UID:$RL_UID" "$b"
	# detached: its stdio on files, never on bats' pipes
	as_user toposhim --root "$RL_HOME/xdg/runc" run -d --bundle "$b" "$RL_ID" \
		</dev/null >"$RL_HOME/out" 2>"$RL_HOME/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "exit $rc: $(cat "$RL_HOME/err")"
	# the placement was applicable: no "not placed" warning
	! grep -F 'not placed' "$RL_HOME/err" || fail "placement skipped"
	# one PU, taken in the user's state ($XDG_RUNTIME_DIR/toposhim)
	cpus=$(jq -r .linux.resources.cpu.cpus "$b/config.json")
	[[ "$cpus" =~ ^[0-9]+$ ]] || fail "cpus '$cpus' in config.json"
	[ "$(stat -c %u "$RL_HOME/xdg/toposhim")" = "$RL_UID" ]
	run jq -r '[.allocations[] | .cpus] | join(",")' "$RL_HOME/xdg/toposhim/allocations.json"
	assert_output "$cpus"
	# the container runs on it, in the delegated subtree, whose cpuset says so
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready$' "$RL_HOME/out" 2>/dev/null && break
		sleep 0.1
	done
	want="$cpus
ready"
	[ "$(cat "$RL_HOME/out")" = "$want" ] || fail "container said: $(cat "$RL_HOME/out" "$RL_HOME/err")"
	[ "$(cat "$RL_CG/$RL_ID/cpuset.cpus")" = "$cpus" ]
	as_user runc --root "$RL_HOME/xdg/runc" delete -f "$RL_ID"
}
