#!/usr/bin/env bats
# shellcheck disable=SC2154 # bats' run sets $output and $stderr
# passthrough.bats - toposhim is invisible on every command it does not
# rewrite: argv, environment (but TOPOSHIM_DEPTH) and fds reach the runtime
# unchanged, and runc's output and exit codes come back byte for byte.
# Also the errors toposhim reports itself before exec.

bats_require_minimum_version 1.5.0

load helpers

setup() {
	ts_setup_env
}

teardown() {
	ts_teardown_containers
	rt_teardown
	[ ! -f "$BATS_TEST_TMPDIR/default-root-container" ] ||
		"$RUNC" delete -f "$(cat "$BATS_TEST_TMPDIR/default-root-container")" >/dev/null 2>&1 ||
		true
	[ ! -f "$BATS_TEST_TMPDIR/default-root-crun-container" ] ||
		"${PFX[@]}" crun delete -f "$(cat "$BATS_TEST_TMPDIR/default-root-crun-container")" \
			>/dev/null 2>&1 || true
	[ ! -f "$BATS_TEST_TMPDIR/xdg-container" ] ||
		"${PFX[@]}" crun --root "$BATS_TEST_TMPDIR/xdg/crun" delete -f \
			"$(cat "$BATS_TEST_TMPDIR/xdg-container")" >/dev/null 2>&1 || true
}

# fake_run PREFIX PROGRAM ARG...: run PROGRAM (toposhim or the fake runtime
# itself) with TOPOSHIM_RUNTIME set to the fake runtime and fd 5 open on a
# file, stdout and stderr going to files; move the fake runtime's records
# and the output to PREFIX.{argv,env,fds,stdout,stderr,config.json}.  Both ways go
# through env(1) so that bash's $_ is the same, and use the same file names
# so that the environments and fds can be compared.
fake_run() {
	local prefix=$1 rec=$BATS_TEST_TMPDIR/rec rc=0 x
	shift
	env TS_FAKE_RECORD="$rec" TOPOSHIM_RUNTIME="$FAKE_RUNTIME" "$@" \
		5>"$BATS_TEST_TMPDIR/fd5" 3>&- >"$rec.stdout" 2>"$rec.stderr" || rc=$?
	for x in argv env fds stdout stderr config.json; do
		[ ! -e "$rec.$x" ] || mv "$rec.$x" "$prefix.$x"
	done
	return $rc
}

fake_call() {
	local prefix=$1
	shift
	fake_run "$prefix" "$TOPOSHIM" "$@"
}

fake_direct() {
	local prefix=$1
	shift
	fake_run "$prefix" "$FAKE_RUNTIME" "$@"
}

# check_same_call: argv and fds equal, env equal but TOPOSHIM_DEPTH=1 at
# the end.
check_same_call() {
	local t=$BATS_TEST_TMPDIR
	cmp "$t/via.argv" "$t/direct.argv" ||
		fail "argv differs: $(od -c "$t/via.argv") vs $(od -c "$t/direct.argv")"
	tr '\0' '\n' <"$t/via.env" >"$t/via.env.txt"
	tr '\0' '\n' <"$t/direct.env" >"$t/direct.env.txt"
	[ "$(tail -n 1 "$t/via.env.txt")" = "TOPOSHIM_DEPTH=1" ] ||
		fail "TOPOSHIM_DEPTH=1 is not the last variable: $(tail -n 3 "$t/via.env.txt")"
	head -n -1 "$t/via.env.txt" | cmp - "$t/direct.env.txt" ||
		fail "environment differs: $(head -n -1 "$t/via.env.txt" | diff - "$t/direct.env.txt")"
	# the fake runtime's own command substitution pipe has a new inode each time
	sed -i 's/^\([0-9]*\) pipe:\[[0-9]*\]$/\1 pipe/' "$t/via.fds" "$t/direct.fds"
	cmp "$t/via.fds" "$t/direct.fds" ||
		fail "fds differ: $(diff "$t/via.fds" "$t/direct.fds")"
	grep -qx "5 $t/fd5" "$t/via.fds" || fail "fd 5 did not arrive: $(cat "$t/via.fds")"
}

@test "passthrough: argv, env and fds reach the runtime unchanged" {
	local t=$BATS_TEST_TMPDIR
	local args=(--root "$t/r" --log-format=json -debug state 'id with space' '' $'new\nline' 'caf\xc3\xa9' -- create)

	fake_call "$t/via" "${args[@]}" || fail "exit status $?: $(cat "$t/via.stderr")"
	[ "$(cat "$t/via.stdout")" = "fake-runtime stdout" ] || fail "stdout: $(cat "$t/via.stdout")"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
	fake_direct "$t/direct" "${args[@]}"
	check_same_call
}

@test "passthrough: exit status and stdout of the runtime are kept" {
	local t=$BATS_TEST_TMPDIR

	TS_FAKE_EXIT=42 run fake_call "$t/via" kill x KILL
	assert_failure 42
	[ "$(cat "$t/via.stdout")" = "fake-runtime stdout" ] || fail "stdout: $(cat "$t/via.stdout")"
}

@test "passthrough: an unknown option adds nothing to stderr, argv unchanged" {
	local t=$BATS_TEST_TMPDIR

	fake_call "$t/via" --bogus create --bundle /b id1 || fail "exit status $?"
	[ "$(cat "$t/via.stdout")" = "fake-runtime stdout" ] || fail "stdout: $(cat "$t/via.stdout")"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
	fake_direct "$t/direct" --bogus create --bundle /b id1
	check_same_call

	fake_call "$t/via" --debug state --future-flag=1 id1 || fail "exit status $?"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
	fake_direct "$t/direct" --debug state --future-flag=1 id1
	check_same_call
}

@test "passthrough: the note on an unknown option is a debug line of create's --log only" {
	local t=$BATS_TEST_TMPDIR

	# state: not a word in the log, even at debug level
	fake_call "$t/via" --log "$t/state.json" --log-format json --debug --x state id ||
		fail "exit status $?"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
	[ ! -e "$t/state.json" ] || fail "log: $(cat "$t/state.json")"

	# create at the default level: nothing either
	fake_call "$t/via" --log "$t/info.json" --log-format json create --future-flag=1 id ||
		fail "exit status $?"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
	[ ! -e "$t/info.json" ] || fail "log: $(cat "$t/info.json")"

	# create with --debug: one debug line in the log file, none on stderr
	fake_call "$t/via" --log "$t/log.json" --log-format json --debug create --future-flag=1 id ||
		fail "exit status $?"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
	run jq -e -c '[.level, .msg]' "$t/log.json"
	assert_success
	assert_output '["debug","toposhim: unknown option '\''--future-flag'\'', passing through unmodified"]'

	# --debug without --log: stderr is the runtime's alone
	fake_call "$t/via" --debug run --future-flag=1 id || fail "exit status $?"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
}

@test "runc: --version, --help, features and unknown commands equal runc's" {
	[ -n "$RUNC" ] || skip "runc is not installed"

	run_both --version
	[ "$BOTH_RC" = 0 ] || fail "--version: rc $BOTH_RC"
	run_both --help
	run_both create --help
	run_both features
	run_both no-such-command
	[ "$BOTH_RC" != 0 ] || fail "no-such-command succeeded"
	run_both state
	[ "$BOTH_RC" = 1 ] || fail "state without id: rc $BOTH_RC"
	[[ "$BOTH_ERR" == *"msg=\"$RUNC: \\\"state\\\" requires exactly 1 argument(s)\""* ]] ||
		fail "state without id, by path: $BOTH_ERR"
	# runc names itself by its argv[0]: called by name, "runc", not its path
	BOTH_BY_NAME=1 run_both state
	[ "$BOTH_RC" = 1 ] || fail "state without id, by name: rc $BOTH_RC"
	[[ "$BOTH_ERR" == *'msg="runc: \"state\" requires exactly 1 argument(s)"'* ]] ||
		fail "state without id, by name: $BOTH_ERR"
	BOTH_BY_NAME=1 run_both --version
}

@test "create: argv, env and fds reach the runtime unchanged" {
	require_bundle_tools
	local t=$BATS_TEST_TMPDIR

	# the allocation goes to this test's own state dir, not the host's
	# /run/toposhim (which only root may write)
	echo "{\"state_dir\": \"$t/state\"}" >"$TOPOSHIM_CONFIG"
	make_bundle "$t/bundle"
	fake_call "$t/via" --root "$t/r" create --bundle "$t/bundle" --pid-file "$t/pid" ctr1 ||
		fail "exit status $?: $(cat "$t/via.stderr")"
	fake_direct "$t/direct" --root "$t/r" create --bundle "$t/bundle" --pid-file "$t/pid" ctr1
	check_same_call
	# the runtime read a config.json from the bundle toposhim was given
	run jq -c .process.args "$t/via.config.json"
	assert_success
	assert_output '["sleep","1000"]'

}

@test "runc: state, list, ps, kill, exec through toposhim equal runc's" {
	require_runc
	local t=$BATS_TEST_TMPDIR id

	id=$(new_container_id)
	make_bundle "$t/bundle"
	create_container "$id" "$t/bundle" || fail "create: $(cat "$t/$id.create.out")"
	run_both state "$id"
	[ "$(jq -r .status <<<"$BOTH_OUT")" = created ] || fail "state: $BOTH_OUT"

	run "$TOPOSHIM" --root "$(runc_root)" start "$id" 3>&-
	assert_success
	assert_output ""
	wait_status "$id" running

	run_both state "$id"
	[ "$(jq -r .id <<<"$BOTH_OUT")" = "$id" ] || fail "state: $BOTH_OUT"
	run_both list -f json
	[ "$(jq -r '.[0].id' <<<"$BOTH_OUT")" = "$id" ] || fail "list: $BOTH_OUT"
	run_both list
	# ps's default columns include %CPU (C), which moves between two calls:
	# the columns that are the same both ways, given as ps options
	run_both ps "$id" -o pid,ppid,user,args
	[ "$(wc -l <<<"$BOTH_OUT")" = 2 ] || fail "ps: $BOTH_OUT"
	run_both ps -f json "$id"
	[ "$(jq length <<<"$BOTH_OUT")" = 1 ] || fail "ps: $BOTH_OUT"
	run_both exec "$id" sh -c 'echo out; echo err >&2; exit 3'
	[ "$BOTH_RC" = 3 ] && [ "$BOTH_OUT" = out ] && [ "$BOTH_ERR" = err ] ||
		fail "exec: rc $BOTH_RC out '$BOTH_OUT' err '$BOTH_ERR'"
	run_both kill "$id" CONT
	[ "$BOTH_RC" = 0 ] || fail "kill: $BOTH_ERR"
	# a running container cannot be deleted: the same error both ways
	run_both delete "$id"
	[ "$BOTH_RC" = 1 ] || fail "delete of a running container: rc $BOTH_RC"
}

@test "runc: kill and delete through toposhim equal runc's" {
	require_runc
	local t=$BATS_TEST_TMPDIR a b

	a=$(new_container_id)
	b=$(new_container_id)
	make_bundle "$t/bundle"
	create_container "$a" "$t/bundle" || fail "create: $(cat "$t/$a.create.out")"
	create_container "$b" "$t/bundle" || fail "create: $(cat "$t/$b.create.out")"

	"$TOPOSHIM" --root "$(runc_root)" kill "$a" KILL >"$t/a.kill" 2>&1 || fail "kill $a: $(cat "$t/a.kill")"
	"$RUNC" --root "$(runc_root)" kill "$b" KILL >"$t/b.kill" 2>&1 || fail "kill $b: $(cat "$t/b.kill")"
	cmp "$t/a.kill" "$t/b.kill"
	wait_status "$a" stopped
	wait_status "$b" stopped

	"$TOPOSHIM" --root "$(runc_root)" delete "$a" >"$t/a.del" 2>&1 || fail "delete $a: $(cat "$t/a.del")"
	"$RUNC" --root "$(runc_root)" delete "$b" >"$t/b.del" 2>&1 || fail "delete $b: $(cat "$t/b.del")"
	cmp "$t/a.del" "$t/b.del"
	[ ! -s "$t/a.del" ] || fail "delete printed: $(cat "$t/a.del")"

	# both gone now: the same error and exit code either way
	run_both state "$a"
	[ "$BOTH_RC" = 1 ] || fail "state of a deleted container: rc $BOTH_RC"
	run_both delete "$a"
	run_both kill "$a" KILL
}

@test "runc: run through toposhim equals runc run" {
	require_runc
	local t=$BATS_TEST_TMPDIR a b ts_rc=0 runc_rc=0

	a=$(new_container_id)
	b=$(new_container_id)
	make_bundle "$t/bundle" sh -c 'echo hello; echo oops >&2; exit 7'
	track_container "$a"
	track_container "$b"
	"$TOPOSHIM" --root "$(runc_root)" run --bundle "$t/bundle" "$a" \
		</dev/null >"$t/a.out" 2>"$t/a.err" 3>&- || ts_rc=$?
	"$RUNC" --root "$(runc_root)" run --bundle "$t/bundle" "$b" \
		</dev/null >"$t/b.out" 2>"$t/b.err" 3>&- || runc_rc=$?
	[ "$ts_rc" = 7 ] && [ "$runc_rc" = 7 ] || fail "exit codes: toposhim $ts_rc, runc $runc_rc"
	[ "$(cat "$t/a.out")" = hello ] || fail "stdout: $(cat "$t/a.out")"
	cmp "$t/a.out" "$t/b.out"
	cmp "$t/a.err" "$t/b.err"
}

@test "error: no runtime found" {
	local t=$BATS_TEST_TMPDIR

	echo '{"runtime": {"search": ["no-such-runtime"]}}' >"$t/config.json"
	TOPOSHIM_CONFIG=$t/config.json run --separate-stderr "$TOPOSHIM" create --bundle "$t" x
	assert_failure 1
	assert_output ""
	[ "$stderr" = "toposhim: no OCI runtime found: tried no-such-runtime in PATH ($PATH) and /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin: No such file or directory" ] ||
		fail "stderr: $stderr"
	# any other command goes on without the config's runtime (0863dc5):
	# the keeper, else runc by name, which knows no container x
	TOPOSHIM_CONFIG=$t/config.json run --separate-stderr "$TOPOSHIM" state x
	assert_failure 1
	assert_output ""
	[ "${stderr%%$'\n'*}" = "toposhim: warning: no OCI runtime found: tried no-such-runtime in PATH ($PATH) and /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin: No such file or directory; 'state' of container 'x' goes to the runtime keeping it, without the config" ] ||
		fail "stderr: $stderr"
	[[ "$stderr" == *'level=error msg="container does not exist"' ]] || fail "stderr: $stderr"

	TOPOSHIM_RUNTIME=$t/missing run --separate-stderr "$TOPOSHIM" state x
	assert_failure 1
	[ "$stderr" = "toposhim: runtime '$t/missing' (from TOPOSHIM_RUNTIME): not an executable file: No such file or directory" ] ||
		fail "stderr: $stderr"
}

@test "error: a runtime that cannot be exec'd" {
	local t=$BATS_TEST_TMPDIR

	printf '#!/nonexistent/interpreter\n' >"$t/broken"
	chmod +x "$t/broken"
	TOPOSHIM_RUNTIME=$t/broken run --separate-stderr "$TOPOSHIM" state x
	assert_failure 1
	assert_output ""
	[ "$stderr" = "toposhim: cannot exec runtime '$t/broken': No such file or directory" ] ||
		fail "stderr: $stderr"
}

@test "error: recursion through TOPOSHIM_RUNTIME pointing at toposhim" {
	TOPOSHIM_RUNTIME=$TOPOSHIM run --separate-stderr "$TOPOSHIM" state x
	assert_failure 1
	assert_output ""
	[ "$stderr" = "toposhim: recursion: runtime '$TOPOSHIM' (from TOPOSHIM_RUNTIME) is toposhim itself" ] ||
		fail "stderr: $stderr"
}

@test "error: recursion through a wrapper script that calls toposhim" {
	local t=$BATS_TEST_TMPDIR

	printf '#!/bin/sh\nexec "%s" "$@"\n' "$TOPOSHIM" >"$t/wrapper"
	chmod +x "$t/wrapper"
	TOPOSHIM_RUNTIME=$t/wrapper run --separate-stderr "$TOPOSHIM" state x
	assert_failure 1
	assert_output ""
	[ "$stderr" = "toposhim: recursion: toposhim called itself through '$t/wrapper'" ] ||
		fail "stderr: $stderr"

	# the depth counter alone is enough
	TOPOSHIM_DEPTH=1 TOPOSHIM_RUNTIME=$FAKE_RUNTIME run --separate-stderr "$TOPOSHIM" state x
	assert_failure 1
	[ "$stderr" = "toposhim: recursion: toposhim called itself through '$FAKE_RUNTIME'" ] ||
		fail "stderr: $stderr"
}

@test "error: malformed config names line and column" {
	local t=$BATS_TEST_TMPDIR

	printf '{\n  "runtime": {"path": }\n}\n' >"$t/config.json"
	TOPOSHIM_CONFIG=$t/config.json run --separate-stderr "$TOPOSHIM" create --bundle "$t" id1
	assert_failure 1
	assert_output ""
	[ "$stderr" = "toposhim: $t/config.json: line 2 column 23: parse error: unallowed token at this point in JSON text" ] ||
		fail "stderr: $stderr"
}

@test "error: --log x --log-format json gets one valid JSON error line" {
	local t=$BATS_TEST_TMPDIR

	printf '{"runtime": [' >"$t/config.json"
	TOPOSHIM_CONFIG=$t/config.json run --separate-stderr \
		"$TOPOSHIM" --log "$t/log.json" --log-format json create --bundle "$t" id1
	assert_failure 1
	assert_output ""
	[ "$(wc -l <"$t/log.json")" = 1 ] || fail "log: $(cat "$t/log.json")"
	run jq -e -r '(keys == ["level", "msg", "time"]) and .level == "error" and
		(.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$")) and
		(.msg | startswith("toposhim: '"$t"'/config.json: line 1 column "))' "$t/log.json"
	assert_success
	assert_output true
	# the error is also on stderr, as runc's fatal() does
	grep -q "^toposhim: $t/config.json: line 1 column " <<<"$stderr" || fail "stderr: $stderr"
}

@test "error: --log text format is logrus' line" {
	local t=$BATS_TEST_TMPDIR

	echo '{"runtime": {"path": 1}}' >"$t/config.json"
	TOPOSHIM_CONFIG=$t/config.json run "$TOPOSHIM" --log "$t/log.txt" create --bundle "$t" id1
	assert_failure 1
	run sed 's/^time="[^"]*" /time="T" /' "$t/log.txt"
	assert_output "time=\"T\" level=error msg=\"toposhim: $t/config.json: '/runtime/path': expected string, got number\""
}

# helper-7: a typo in the config made exec, kill and delete of the running
# containers fail; podman could neither stop nor remove them, and a
# container was left running with its exclusive cpu held.
# run_critical BUNDLE ID: a critical container on one exclusive cpu,
# created through toposhim and started (the broken-config cases below).
run_critical() {
	make_bundle "$1"
	annotate "$1" toposhim.io/class critical
	annotate "$1" toposhim.io/cpus 1
	create_container "$2" "$1" || fail "create: $(cat "$BATS_TEST_TMPDIR/$2.create.out")"
	"$TOPOSHIM" --root "$(runc_root)" start "$2"
}

# collected_after_fix GOOD_CONFIG BUNDLE ID2: with the config fixed, a
# create of ID2 collects the record the broken config kept: it is the one
# left in the store.
collected_after_fix() {
	export TOPOSHIM_CONFIG=$1
	create_container "$3" "$2" || fail "create: $(cat "$BATS_TEST_TMPDIR/$3.create.out")"
	[ "$(jq -r '.allocations | map(.container_id) | join(",")' "$BATS_TEST_TMPDIR/state/allocations.json")" = "$3" ]
}

@test "broken config: exec, state, kill and delete of a running container still reach runc; the next create after the fix collects its record" {
	require_runc
	local t=$BATS_TEST_TMPDIR id id2 good warn
	id=$(new_container_id)
	id2=$(new_container_id)
	good=$TOPOSHIM_CONFIG
	run_critical "$t/b" "$id"
	[ "$(jq -r '.allocations | map(.container_id) | join(",")' "$t/state/allocations.json")" = "$id" ]

	printf '{"state_dir": "%s",' "$t/state" >"$t/bad.json"
	export TOPOSHIM_CONFIG=$t/bad.json
	warn="toposhim: warning: $t/bad.json: line 1 column $(($(wc -c <"$t/bad.json") + 1)): parse error: premature EOF"
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" state "$id"
	assert_success
	[ "$(jq -r .status <<<"$output")" = running ] || fail "state: $output"
	[ "$stderr" = "$warn; 'state' of container '$id' goes to the runtime keeping it, without the config" ] ||
		fail "stderr: $stderr"
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" exec "$id" echo hi
	assert_success
	assert_output hi
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" kill "$id" KILL
	assert_success
	[ "$stderr" = "$warn; 'kill' of container '$id' goes to the runtime keeping it, without the config" ] ||
		fail "stderr: $stderr"
	wait_status "$id" stopped
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" delete "$id"
	assert_success
	[ "$stderr" = "$warn; 'delete' of container '$id' goes to the runtime keeping it, without the config
toposhim: warning: delete '$id': the allocation is not released now (the config is unusable)" ] ||
		fail "stderr: $stderr"
	run "$RUNC" --root "$(runc_root)" state "$id"
	assert_failure
	# a create is still refused, with the error
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" create --bundle "$t/b" "$id2"
	assert_failure 1
	[ "$stderr" = "toposhim: ${warn#toposhim: warning: }" ] || fail "stderr: $stderr"
	# the record stays until a create with the fixed config collects it:
	# the critical cpu is free for the next critical container
	[ "$(jq -r '.allocations | map(.container_id) | join(",")' "$t/state/allocations.json")" = "$id" ]
	collected_after_fix "$good" "$t/b" "$id2"
	[ "$(jq -r .linux.resources.cpu.cpus "$t/b/config.json")" = "$(jq -r '.allocations[0].cpus' "$t/state/allocations.json")" ]
}

@test "broken config: a runtime member of the wrong type, or a TOPOSHIM_CONFIG that is missing, leaves kill and state of a running container to runc" {
	require_runc
	local t=$BATS_TEST_TMPDIR id
	id=$(new_container_id)
	make_bundle "$t/b"
	create_container "$id" "$t/b" || fail "create: $(cat "$t/$id.create.out")"
	"$TOPOSHIM" --root "$(runc_root)" start "$id"

	echo '{"runtime": {"path": 5}}' >"$t/bad.json"
	TOPOSHIM_CONFIG=$t/bad.json run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" state "$id"
	assert_success
	[ "$(jq -r .status <<<"$output")" = running ] || fail "state: $output"
	[ "$stderr" = "toposhim: warning: $t/bad.json: '/runtime/path': expected string, got number; 'state' of container '$id' goes to the runtime keeping it, without the config" ] ||
		fail "stderr: $stderr"
	TOPOSHIM_CONFIG=$t/nope.json run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" kill "$id" KILL
	assert_success
	[ "$stderr" = "toposhim: warning: $t/nope.json: cannot open: No such file or directory; 'kill' of container '$id' goes to the runtime keeping it, without the config" ] ||
		fail "stderr: $stderr"
	wait_status "$id" stopped
	# a command on no container: runc, the same warning
	TOPOSHIM_CONFIG=$t/bad.json run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" list -q
	assert_success
	assert_output "$id"
	[ "$stderr" = "toposhim: warning: $t/bad.json: '/runtime/path': expected string, got number; 'list' goes to runc or crun, without the config" ] ||
		fail "stderr: $stderr"
	# no command at all (helper-9: "'' goes to runc or crun")
	TOPOSHIM_CONFIG=$t/bad.json run --separate-stderr "$TOPOSHIM" --version
	assert_success
	[ "$output" = "$("$RUNC" --version)" ] || fail "stdout: $output"
	[ "$stderr" = "toposhim: warning: $t/bad.json: '/runtime/path': expected string, got number; the call goes to runc or crun, without the config" ] ||
		fail "stderr: $stderr"
}

# helper-8: a runtime path of the right type that is not there (a typo, a
# moved binary) stranded the running containers as a bad type did; and a
# delete under a runtime the config cannot give released the cpu but could
# not resize the shared containers, which stayed shrunk.
@test "broken config: a runtime path that is not there leaves the running containers to runc; their delete releases nothing" {
	require_runc
	local t=$BATS_TEST_TMPDIR id id2 good warn
	id=$(new_container_id)
	id2=$(new_container_id)
	good=$TOPOSHIM_CONFIG
	run_critical "$t/b" "$id"

	jq '. + {runtime: {path: "/nonexistent/runc"}}' "$good" >"$t/bad.json"
	export TOPOSHIM_CONFIG=$t/bad.json
	warn="toposhim: warning: runtime '/nonexistent/runc' (from $t/bad.json: '/runtime/path'): not an executable file: No such file or directory"
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" exec "$id" echo hi
	assert_success
	assert_output hi
	[ "$stderr" = "$warn; 'exec' of container '$id' goes to the runtime keeping it, without the config" ] ||
		fail "stderr: $stderr"
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" delete --force "$id"
	assert_success
	[ "$stderr" = "$warn; 'delete' of container '$id' goes to the runtime keeping it, without the config
toposhim: warning: delete '$id': the allocation is not released now (the config is unusable)" ] ||
		fail "stderr: $stderr"
	run "$RUNC" --root "$(runc_root)" state "$id"
	assert_failure
	[ "$(jq -r '.allocations | map(.container_id) | join(",")' "$t/state/allocations.json")" = "$id" ]
	# a create still fails, on the runtime it cannot find
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" create --bundle "$t/b" "$id2"
	assert_failure 1
	# fixed: the next create collects the record, the cpu is free
	collected_after_fix "$good" "$t/b" "$id2"
}

# helper-9: a config that parses but that a create refuses (an unknown key,
# a member of the wrong type) went unnoticed by the delete, which released
# the cpus and wrote the plain summary for that config: the plain creates
# after it skipped the core and its check of the config.
@test "broken config: a config a create refuses (unknown key, wrong type) releases nothing at delete and lets no plain create through" {
	require_runc
	local t=$BATS_TEST_TMPDIR id id2 good
	id=$(new_container_id)
	id2=$(new_container_id)
	make_bundle "$t/plain"
	good=$TOPOSHIM_CONFIG
	run_critical "$t/b" "$id"

	jq '. + {bogus: 1}' "$good" >"$t/bad.json"
	export TOPOSHIM_CONFIG=$t/bad.json
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" delete --force "$id"
	assert_success
	[ "$stderr" = "toposhim: warning: $t/bad.json: '/bogus': unknown key; delete '$id': the allocation is not released now (the config is unusable)" ] ||
		fail "stderr: $stderr"
	run "$RUNC" --root "$(runc_root)" state "$id"
	assert_failure
	[ "$(jq -r '.allocations | map(.container_id) | join(",")' "$t/state/allocations.json")" = "$id" ]
	[ ! -e "$t/state/plain.json" ] || [ "$(jq -r .config_path "$t/state/plain.json")" != "$t/bad.json" ] ||
		fail "plain summary for the broken config: $(cat "$t/state/plain.json")"
	cp "$t/plain/config.json" "$t/plain.orig"
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" create --bundle "$t/plain" "$id2"
	assert_failure 1
	[ "$stderr" = "toposhim: $t/bad.json: '/bogus': unknown key" ] || fail "stderr: $stderr"
	cmp "$t/plain/config.json" "$t/plain.orig"

	# a member of the wrong type: the same
	jq '. + {cdi: {env_requests: "yes"}}' "$good" >"$t/bad.json"
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" create --bundle "$t/plain" "$id2"
	assert_failure 1
	[ "$stderr" = "toposhim: $t/bad.json: '/cdi/env_requests': expected boolean, got string" ] ||
		fail "stderr: $stderr"

	# fixed: the next create collects the record
	collected_after_fix "$good" "$t/b" "$id2"
}

@test "toposhimctl: version and help" {
	run "$TOPOSHIMCTL" version
	assert_success
	assert_output --regexp '^toposhimctl [0-9]+\.[0-9]+\.[0-9]+$'
	run "$TOPOSHIMCTL" help
	assert_success
	assert_line --index 0 "usage: toposhimctl COMMAND [ARG...]"
	run --separate-stderr "$TOPOSHIMCTL" no-such-command
	assert_failure 2
	assert_output ""
	[ "$stderr" = "toposhimctl: unknown command 'no-such-command' (see 'toposhimctl help')" ] ||
		fail "stderr: $stderr"
}

# --- fidelity with the real runtimes: everything the runtime alone gives ---

# rt_setup RUNTIME: $RT (runc or crun), its root for this test, a toposhim
# config naming it, and $PFX, what both ways run under: crun refuses this
# hybrid host's cgroup2 mount, so crun (alone or through toposhim) runs in a
# private mount namespace without it.
rt_setup() {
	local t=$BATS_TEST_TMPDIR
	RT=$(command -v "$1") || skip "$1 is not installed"
	RT_ROOT=$t/$1-root
	PFX=()
	if [ "$1" = crun ]; then
		PFX=(unshare -m --propagation private sh -c
			'umount /sys/fs/cgroup/unified 2>/dev/null; exec "$@"' sh)
	fi
	echo "{\"state_dir\": \"$t/state\", \"runtime\": {\"path\": \"$RT\"}, $TS_TEST_POLICY}" \
		>"$TOPOSHIM_CONFIG"
}

# rt_compare ARG...: `toposhim --root R --log L ARG...` and the same with
# the runtime alone; exit code, stdout, stderr and the --log file must be
# byte-identical (logrus' and crun's times masked: the two calls may
# straddle a second).  Sets CMP_RC and CMP_OUT.
rt_compare() {
	rt_compare_pair "" "" "$@"
}

# rt_compare_pair ID_TS ID_RT ARG...: the same for commands that change a
# container (start, pause, kill, delete): toposhim runs ARGs with @ID@ as
# ID_TS, the runtime alone with @ID@ as ID_RT, two containers made the same
# way; ID_RT in the runtime's output and log reads as ID_TS.
rt_compare_pair() {
	local t=$BATS_TEST_TMPDIR ts_rc=0 rt_rc=0 x a=$1 b=$2
	local -a ts_args=() rt_args=()
	shift 2
	for x in "$@"; do
		ts_args+=("${x//@ID@/$a}")
		rt_args+=("${x//@ID@/$b}")
	done
	rm -f "$t/ts.log" "$t/rt.log"
	"${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" --log "$t/ts.log" "${ts_args[@]}" \
		</dev/null >"$t/ts.out" 2>"$t/ts.err" 3>&- || ts_rc=$?
	"${PFX[@]}" "$RT" --root "$RT_ROOT" --log "$t/rt.log" "${rt_args[@]}" \
		</dev/null >"$t/rt.out" 2>"$t/rt.err" 3>&- || rt_rc=$?
	for x in ts.err rt.err ts.log rt.log; do
		[ ! -e "$t/$x" ] ||
			sed -i -e 's/time="[^"]*"/time="T"/g' \
				-e 's/"time":"[^"]*"/"time":"T"/g' \
				-e 's/^[0-9T:.+-]*Z\\{0,1\\}\\( *\\)\\(error\\|warning\\|debug\\|info\\)/T\\1\\2/' "$t/$x"
	done
	if [ -n "$b" ] && [ "$a" != "$b" ]; then
		for x in rt.out rt.err rt.log; do
			[ ! -e "$t/$x" ] || sed -i "s/$b/$a/g" "$t/$x"
		done
	fi
	[ "$ts_rc" = "$rt_rc" ] || fail "$*: exit code: toposhim $ts_rc, $RT $rt_rc ($(cat "$t/ts.err"))"
	cmp "$t/ts.out" "$t/rt.out" || fail "$*: stdout differs: $(diff "$t/ts.out" "$t/rt.out")"
	cmp "$t/ts.err" "$t/rt.err" || fail "$*: stderr differs: $(diff "$t/ts.err" "$t/rt.err")"
	if [ -e "$t/ts.log" ] || [ -e "$t/rt.log" ]; then
		cmp "$t/ts.log" "$t/rt.log" ||
			fail "$*: --log file differs: $(diff "$t/ts.log" "$t/rt.log" 2>&1)"
	fi
	CMP_RC=$ts_rc
	CMP_OUT=$(cat "$t/ts.out")
}

# rt_fidelity RUNTIME: a running container through toposhim, then every
# read-only command both ways, with and without an unknown option.
rt_fidelity() {
	local t=$BATS_TEST_TMPDIR id
	rt_setup "$1"
	require_runc
	id=$(new_container_id)
	make_bundle "$t/bundle"
	"${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" create --bundle "$t/bundle" "$id" \
		</dev/null >"$t/create.out" 2>&1 3>&- || fail "create: $(cat "$t/create.out")"
	echo "$id" >>"$t/rt-containers"
	"${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" start "$id" 3>&- || fail "start failed"

	rt_compare state "$id"
	[ "$(jq -r .status <<<"$CMP_OUT")" = running ] || fail "state: $CMP_OUT"
	rt_compare list
	rt_compare list -f json
	sleep 1 # ps's C column (CPU share over the process's life) is 0 from now on
	rt_compare ps "$id"
	rt_compare ps -f json "$id"
	rt_compare events --stats "$id"
	rt_compare features
	rt_compare exec "$id" sh -c 'echo out; echo err >&2; exit 3'
	[ "$CMP_RC" = 3 ] && [ "$CMP_OUT" = out ] || fail "exec: rc $CMP_RC, out '$CMP_OUT'"
	rt_compare --log-format json exec "$id" sh -c 'exit 0'
	# the runtime's own verdict on an option it does not know, alone
	rt_compare state --future-flag=1 "$id"
	[ "$CMP_RC" != 0 ] || fail "$1 accepted --future-flag=1"
	rt_compare --log-format json state --future-flag=1 "$id"
	rt_compare list --future-flag=1
	rt_compare ps --future-flag=1 "$id"
	rt_compare events --stats --future-flag=1 "$id"
	rt_compare features --future-flag=1
	rt_compare exec --future-flag=1 "$id" sh -c 'echo out'
	rt_compare --future-flag=1 state "$id"
	rt_compare state no-such-container
	rt_compare --debug state "$id"
	# the commands that change a container, refused for an unknown option:
	# nothing changes, so both ways run on the same container
	local cmd
	for cmd in start pause resume delete; do
		rt_compare "$cmd" --future-flag=1 "$id"
		[ "$CMP_RC" != 0 ] || fail "$1 $cmd accepted --future-flag=1"
	done
	rt_compare kill --future-flag=1 "$id" KILL
	rt_compare update --future-flag=1 --cpu-shares 512 "$id"
	rt_compare --log-format json kill --future-flag=1 "$id" KILL
	[ "$(jq -r .status <<<"$("${PFX[@]}" "$RT" --root "$RT_ROOT" state "$id")")" = running ] ||
		fail "an option refused changed the container"
}

# rt_lifecycle RUNTIME: two containers made the same way through toposhim;
# every command that changes one runs through toposhim on the first and on
# the runtime alone on the second, each with --log, and gives the same.
rt_lifecycle() {
	local t=$BATS_TEST_TMPDIR a b x
	rt_setup "$1"
	require_runc
	a=$(new_container_id)
	b=$(new_container_id)
	make_bundle "$t/bundle"
	for x in "$a" "$b"; do
		"${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" create --bundle "$t/bundle" "$x" \
			</dev/null >"$t/create.out" 2>&1 3>&- || fail "create $x: $(cat "$t/create.out")"
		echo "$x" >>"$t/rt-containers"
	done
	rt_compare_pair "$a" "$b" start @ID@
	rt_compare_pair "$a" "$b" update --cpu-shares 512 @ID@
	rt_compare_pair "$a" "$b" --debug update --pids-limit 100 @ID@
	rt_compare_pair "$a" "$b" pause @ID@
	rt_compare_pair "$a" "$b" pause @ID@ # runc refuses, crun says nothing
	rt_compare_pair "$a" "$b" resume @ID@
	rt_compare_pair "$a" "$b" delete @ID@
	[ "$CMP_RC" != 0 ] || fail "delete of a running container succeeded"
	rt_compare_pair "$a" "$b" kill @ID@ KILL
	for x in "$a" "$b"; do
		wait_for_status_rt "$x" stopped
	done
	rt_compare_pair "$a" "$b" kill @ID@ KILL
	rt_compare_pair "$a" "$b" --log-format json delete @ID@
	[ "$CMP_RC" = 0 ] || fail "delete failed: $(cat "$t/ts.err")"
	rt_compare_pair "$a" "$b" delete @ID@
	[ "$CMP_RC" != 0 ] || fail "a second delete succeeded"
	# delete -f of a running one
	for x in "$a" "$b"; do
		"${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" run -d --bundle "$t/bundle" "$x" \
			</dev/null >"$t/create.out" 2>&1 3>&- || fail "run $x: $(cat "$t/create.out")"
	done
	rt_compare_pair "$a" "$b" delete -f @ID@
	[ "$CMP_RC" = 0 ] || fail "delete -f failed: $(cat "$t/ts.err")"
	# plain containers: recorded neither way (no allocation to release);
	# the journal of plain containers names both until a take or a
	# compaction finds them gone
	[ ! -e "$t/state/allocations.json" ] ||
		[ "$(jq '.allocations | length' "$t/state/allocations.json")" = 0 ] ||
		fail "records: $(cat "$t/state/allocations.json")"
	[ "$(jq -r .id "$t/state/plain-containers" | sort -u | tr '\n' ' ')" = "$(printf '%s\n' "$a" "$b" | sort | tr '\n' ' ')" ] ||
		fail "journal: $(cat "$t/state/plain-containers")"
}

# wait_for_status_rt ID STATUS: the runtime alone reports STATUS within 10 s.
wait_for_status_rt() {
	local i
	for i in $(seq 100); do
		[ "$(jq -r .status <<<"$("${PFX[@]}" "$RT" --root "$RT_ROOT" state "$1" 2>/dev/null)")" = "$2" ] &&
			return 0
		python3 -c 'import time; time.sleep(0.1)'
	done
	fail "$1 is not $2"
}

rt_teardown() {
	local t=$BATS_TEST_TMPDIR id
	[ -f "$t/rt-containers" ] || return 0
	while read -r id; do
		"${PFX[@]}" "$RT" --root "$RT_ROOT" delete -f "$id" >/dev/null 2>&1 || true
	done <"$t/rt-containers"
}

@test "runc: state, list, ps, events, features, exec: output, stderr, rc and --log equal runc's" {
	rt_fidelity runc
}

@test "crun: state, list, ps, events, features, exec: output, stderr, rc and --log equal crun's" {
	rt_fidelity crun
}

@test "runc: start, update, pause, resume, kill, delete: output, stderr, rc and --log equal runc's" {
	rt_lifecycle runc
}

@test "crun: start, update, pause, resume, kill, delete: output, stderr, rc and --log equal crun's" {
	rt_lifecycle crun
}

# --- one runtime per container ---

# switch_config RUNTIME: the toposhim config now names RUNTIME (an upgrade
# that changes the runtime), with this test's state dir.
switch_config() {
	echo "{\"state_dir\": \"$BATS_TEST_TMPDIR/state\", \"runtime\": {\"path\": \"$(command -v "$1")\"}, $TS_TEST_POLICY}" \
		>"$TOPOSHIM_CONFIG"
}

@test "runtime switch: a container created with runc is served by runc after the config says crun" {
	require_runc
	command -v crun >/dev/null || skip "crun is not installed"
	local t=$BATS_TEST_TMPDIR id pid

	id=$(new_container_id)
	make_bundle "$t/bundle"
	# a request (the class named): a container with a record
	annotate "$t/bundle" toposhim.io/class standard
	switch_config runc
	create_container "$id" "$t/bundle" || fail "create: $(cat "$t/$id.create.out")"
	"$TOPOSHIM" --root "$(runc_root)" start "$id" 3>&- || fail "start failed"
	wait_status "$id" running
	pid=$("$RUNC" --root "$(runc_root)" state "$id" | jq -r .pid)
	run "$TOPOSHIMCTL" alloc list --json
	assert_success
	[ "$(jq -r '.[0].container_id' <<<"$output")" = "$id" ] || fail "alloc: $output"

	switch_config crun
	run_both state "$id"
	[ "$(jq -r .status <<<"$BOTH_OUT")" = running ] || fail "state: $BOTH_OUT"
	run_both exec "$id" sh -c 'echo in'
	[ "$BOTH_OUT" = in ] || fail "exec: $BOTH_OUT"
	# a running container cannot be deleted, and its state stays
	run_both delete "$id"
	[ "$BOTH_RC" = 1 ] || fail "delete of a running container: rc $BOTH_RC"
	[ -d "$(runc_root)/$id" ] || fail "runc's state dir is gone"
	kill -0 "$pid" || fail "the container's init died"

	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" kill "$id" KILL
	assert_success
	[ "$stderr" = "" ] || fail "kill: $stderr"
	wait_status "$id" stopped
	run --separate-stderr "$TOPOSHIM" --root "$(runc_root)" delete "$id"
	assert_success
	[ "$stderr" = "" ] || fail "delete: $stderr"
	[ ! -e "$(runc_root)/$id" ] || fail "runc's state dir stays"
	# runc ran the poststop hook: the allocation is released
	run "$TOPOSHIMCTL" alloc list --json
	assert_success
	[ "$(jq length <<<"$output")" = 0 ] || fail "allocation stays: $output"
}

@test "runtime switch: a runc container from before toposhim keeps working (default root)" {
	require_runc
	command -v crun >/dev/null || skip "crun is not installed"
	local t=$BATS_TEST_TMPDIR id

	id=$(new_container_id)
	make_bundle "$t/bundle"
	echo "$id" >"$t/default-root-container"
	# made by runc alone, in its default root /run/runc
	"$RUNC" create --bundle "$t/bundle" "$id" </dev/null >"$t/create.out" 2>&1 3>&- ||
		fail "runc create: $(cat "$t/create.out")"
	switch_config crun

	run --separate-stderr "$TOPOSHIM" state "$id"
	assert_success
	[ "$(jq -r .status <<<"$output")" = created ] || fail "state: $output"
	run --separate-stderr "$TOPOSHIM" start "$id"
	assert_success
	[ "$stderr" = "" ] || fail "start: $stderr"
	run --separate-stderr "$TOPOSHIM" kill "$id" KILL
	assert_success
	for _ in $(seq 50); do
		[ "$("$RUNC" state "$id" | jq -r .status)" = stopped ] && break
		sleep 0.1
	done
	run --separate-stderr "$TOPOSHIM" delete "$id"
	assert_success
	[ "$stderr" = "" ] || fail "delete: $stderr"
	[ ! -e "/run/runc/$id" ] || fail "runc's state dir stays"
	rm -f "$t/default-root-container"

	# a wrapper of the operator's (unknown family) still gets every command
	printf '#!/bin/sh\necho "wrapper $*"\n' >"$t/my-runtime"
	chmod +x "$t/my-runtime"
	echo "{\"runtime\": {\"path\": \"$t/my-runtime\"}, $TS_TEST_POLICY}" >"$TOPOSHIM_CONFIG"
	"$RUNC" --root "$(runc_root)" create --bundle "$t/bundle" "$id" </dev/null \
		>"$t/create2.out" 2>&1 3>&- || fail "runc create: $(cat "$t/create2.out")"
	track_container "$id"
	run "$TOPOSHIM" --root "$(runc_root)" state "$id"
	assert_success
	assert_output "wrapper --root $(runc_root) state $id"
}

@test "runtime switch: a crun container from before toposhim keeps working (default root)" {
	require_runc
	rt_setup crun
	local t=$BATS_TEST_TMPDIR id

	id=$(new_container_id)
	make_bundle "$t/bundle"
	echo "$id" >"$t/default-root-crun-container"
	# made by crun alone, in its default root /run/crun
	"${PFX[@]}" crun create --bundle "$t/bundle" "$id" </dev/null >"$t/create.out" 2>&1 3>&- ||
		fail "crun create: $(cat "$t/create.out")"
	switch_config runc

	run --separate-stderr "${PFX[@]}" "$TOPOSHIM" state "$id"
	assert_success
	[ "$(jq -r .status <<<"$output")" = created ] || fail "state: $output"
	run --separate-stderr "${PFX[@]}" "$TOPOSHIM" start "$id"
	assert_success
	[ "$stderr" = "" ] || fail "start: $stderr"
	[ "$("${PFX[@]}" crun state "$id" | jq -r .status)" = running ] || fail "crun: not running"
	run --separate-stderr "${PFX[@]}" "$TOPOSHIM" kill "$id" KILL
	assert_success
	for _ in $(seq 50); do
		[ "$("${PFX[@]}" crun state "$id" | jq -r .status)" = stopped ] && break
		sleep 0.1
	done
	run --separate-stderr "${PFX[@]}" "$TOPOSHIM" delete "$id"
	assert_success
	[ "$stderr" = "" ] || fail "delete: $stderr"
	[ ! -e "/run/crun/$id" ] || fail "crun's state dir stays"
	rm -f "$t/default-root-crun-container"
}

@test "create --debug names the effective configuration file" {
	require_bundle_tools
	local t=$BATS_TEST_TMPDIR

	echo "{\"state_dir\": \"$t/state\", $TS_TEST_POLICY}" >"$TOPOSHIM_CONFIG"
	make_bundle "$t/bundle"
	fake_call "$t/via" --log "$t/log.json" --log-format json --debug create --bundle "$t/bundle" c1 ||
		fail "exit status $?: $(cat "$t/via.stderr")"
	run jq -r 'select(.level == "debug") | .msg' "$t/log.json"
	assert_success
	assert_line "toposhim: create 'c1': rewriting, runtime '$FAKE_RUNTIME', config '$TOPOSHIM_CONFIG'"
	# nothing of it on stderr: the runtime's alone
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
}

@test "create --debug says the default configuration file is absent and the built-in defaults apply" {
	require_root
	require_bundle_tools
	local t=$BATS_TEST_TMPDIR

	make_bundle "$t/bundle"
	# no TOPOSHIM_CONFIG, and /etc/toposhim and /run (the default state
	# dir) are empty tmpfs in a mount namespace of the test's own: the
	# host's files are neither read nor written
	unset TOPOSHIM_CONFIG
	fake_run "$t/via" unshare -m --propagation private sh -c \
		'mount -t tmpfs tmpfs /run && mkdir -p /run/etc-toposhim &&
		 { [ ! -d /etc/toposhim ] || mount --bind /run/etc-toposhim /etc/toposhim; } && exec "$@"' sh \
		"$TOPOSHIM" --log "$t/log.json" --log-format json --debug create --bundle "$t/bundle" c1 ||
		fail "exit status $?: $(cat "$t/via.stderr")"
	run jq -r 'select(.level == "debug") | .msg' "$t/log.json"
	assert_success
	assert_line "toposhim: create 'c1': rewriting, runtime '$FAKE_RUNTIME', config '/etc/toposhim/config.json' (absent: built-in defaults)"
	[ "$(cat "$t/via.stderr")" = "fake-runtime stderr" ] || fail "stderr: $(cat "$t/via.stderr")"
}

@test "runtime switch: a container created with crun is served by crun after the config says runc" {
	require_runc
	local t=$BATS_TEST_TMPDIR id
	rt_setup crun
	id=$(new_container_id)
	make_bundle "$t/bundle"
	"${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" create --bundle "$t/bundle" "$id" \
		</dev/null >"$t/create.out" 2>&1 3>&- || fail "create: $(cat "$t/create.out")"
	echo "$id" >>"$t/rt-containers"
	[ -f "$RT_ROOT/$id/status" ] || fail "no crun state for $id"

	switch_config runc
	rt_compare state "$id"
	[ "$(jq -r .status <<<"$CMP_OUT")" = created ] || fail "state: $CMP_OUT"
	"${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" start "$id" 3>&- || fail "start failed"
	rt_compare state "$id"
	[ "$(jq -r .status <<<"$CMP_OUT")" = running ] || fail "state: $CMP_OUT"
	run --separate-stderr "${PFX[@]}" "$TOPOSHIM" --root "$RT_ROOT" delete -f "$id"
	assert_success
	[ "$stderr" = "" ] || fail "delete: $stderr"
	[ ! -e "$RT_ROOT/$id" ] || fail "crun's state dir stays"
	run "$TOPOSHIMCTL" alloc list --json
	assert_success
	[ "$(jq length <<<"$output")" = 0 ] || fail "allocation stays: $output"
}

@test "runtime root: with no --root the record names the root crun itself uses (\$XDG_RUNTIME_DIR), and gc keeps the container" {
	local t=$BATS_TEST_TMPDIR id

	rt_setup crun
	id=$(new_container_id)
	make_bundle "$t/bundle"
	annotate "$t/bundle" toposhim.io/class standard
	mkdir -m 0700 "$t/xdg"
	echo "$id" >"$t/xdg-container"
	# crun 1.8.1 keeps its state in $XDG_RUNTIME_DIR/crun whenever that is
	# set, as root too (a root login shell has /run/user/0)
	XDG_RUNTIME_DIR=$t/xdg "${PFX[@]}" "$TOPOSHIM" create --bundle "$t/bundle" "$id" \
		</dev/null >"$t/create.out" 2>&1 3>&- || fail "create: $(cat "$t/create.out")"
	[ -f "$t/xdg/crun/$id/status" ] || fail "crun's state is not in \$XDG_RUNTIME_DIR/crun"
	run "$TOPOSHIMCTL" alloc list --json
	assert_success
	[ "$(jq -r --arg id "$id" '.[] | select(.container_id == $id) | .runtime_root' <<<"$output")" = "$t/xdg/crun" ] ||
		fail "record: $output"
	# before: the record said /run/crun, so gc took the live container for gone
	run "$TOPOSHIMCTL" alloc gc --grace 0
	assert_success
	run "$TOPOSHIMCTL" alloc list --json
	assert_success
	[ "$(jq -r '.[].container_id' <<<"$output")" = "$id" ] || fail "gc dropped the record: $output"
	run --separate-stderr env XDG_RUNTIME_DIR="$t/xdg" "${PFX[@]}" "$TOPOSHIM" state "$id"
	assert_success
	[ "$(jq -r .status <<<"$output")" = created ] || fail "state: $output"
	run --separate-stderr env XDG_RUNTIME_DIR="$t/xdg" "${PFX[@]}" "$TOPOSHIM" delete -f "$id"
	assert_success
	[ "$stderr" = "" ] || fail "delete: $stderr"
	[ ! -e "$t/xdg/crun/$id" ] || fail "crun's state dir stays"
	rm -f "$t/xdg-container"
	run "$TOPOSHIMCTL" alloc list --json
	assert_success
	[ "$(jq length <<<"$output")" = 0 ] || fail "allocation stays: $output"
}

@test "front and core: the front has no dynamic loader; create, delete and hook go to the core beside it" {
	local t=$BATS_TEST_TMPDIR
	# a static PIE: no PT_INTERP, no DT_NEEDED (nothing for LD_PRELOAD)
	run readelf -lW "$TOPOSHIM"
	assert_success
	refute_output --partial "INTERP"
	run readelf -dW "$TOPOSHIM"
	refute_output --partial "(NEEDED)"
	# passthrough: the front alone, even with no core anywhere
	mkdir "$t/lone"
	cp "$TOPOSHIM" "$t/lone/toposhim"
	fake_run "$t/lone" "$t/lone/toposhim" state c1 || fail "state through a lone front failed"
	[ "$(tr '\0' ' ' <"$t/lone.argv")" = "$FAKE_RUNTIME state c1 " ] ||
		fail "argv: $(od -c "$t/lone.argv")"
	# delete of a container no allocation can be recorded for: the front
	# alone (cli/plain.h)
	echo "{\"state_dir\": \"$t/no-state\"}" >"$TOPOSHIM_CONFIG"
	fake_run "$t/lone-delete" "$t/lone/toposhim" delete c1 ||
		fail "delete through a lone front failed: $(cat "$t/lone-delete.stderr" 2>/dev/null)"
	[ "$(tr '\0' ' ' <"$t/lone-delete.argv")" = "$FAKE_RUNTIME delete c1 " ] ||
		fail "argv: $(od -c "$t/lone-delete.argv")"
	# create, hook, and a delete whose container may hold an allocation:
	# the core beside the front
	mkdir -m 0700 "$t/rec-state"
	echo '{"version": 1, "allocations": [{"container_id": "c1"}]}' >"$t/rec-state/allocations.json"
	echo "{\"state_dir\": \"$t/rec-state\"}" >"$TOPOSHIM_CONFIG"
	run --separate-stderr env TOPOSHIM_RUNTIME="$FAKE_RUNTIME" "$t/lone/toposhim" delete c1
	assert_failure 1
	[ "$stderr" = "toposhim: core '$t/lone/toposhim-core': cannot open: No such file or directory" ] ||
		fail "stderr: $stderr"
	run --separate-stderr "$t/lone/toposhim" hook poststop
	assert_failure 1
	[ "$stderr" = "toposhim: core '$t/lone/toposhim-core': cannot open: No such file or directory" ] ||
		fail "stderr: $stderr"
	# a core anyone of a group could have written is not run
	install -m 0775 "$TS_BUILDDIR/toposhim-core" "$t/lone/toposhim-core"
	run --separate-stderr env TOPOSHIM_RUNTIME="$FAKE_RUNTIME" "$t/lone/toposhim" create c1
	assert_failure 1
	[ "$stderr" = "toposhim: core '$t/lone/toposhim-core': writable by group or others (mode 0775)" ] ||
		fail "stderr: $stderr"
	# a sound core runs: it rewrites (its debug line), the runtime gets
	# argv unchanged
	chmod 0755 "$t/lone/toposhim-core"
	echo "{\"state_dir\": \"$t/state\"}" >"$TOPOSHIM_CONFIG"
	make_bundle "$t/bundle"
	fake_run "$t/via" "$t/lone/toposhim" --debug create --bundle "$t/bundle" c1 ||
		fail "create through the copied front failed: $(cat "$t/via.stderr" 2>/dev/null)"
	[ "$(tr '\0' ' ' <"$t/via.argv")" = "$FAKE_RUNTIME --debug create --bundle $t/bundle c1 " ] ||
		fail "argv: $(od -c "$t/via.argv")"
	run grep -c "^toposhim: debug: create 'c1': rewriting, runtime '$FAKE_RUNTIME', config '$TOPOSHIM_CONFIG'" \
		"$t/via.stderr"
	[ "$output" = 1 ] || fail "stderr: $(cat "$t/via.stderr")"
}
