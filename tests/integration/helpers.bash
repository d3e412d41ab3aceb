# shellcheck shell=bash disable=SC2034 # variables are used by the .bats files
# helpers.bash - shared setup for toposhim's bats tests (load it with
# `load helpers`).  make check exports TS_BUILDDIR and TS_SRCDIR; run by
# hand, the paths default to this checkout.

bats_load_library bats-support
bats_load_library bats-assert
# shellcheck source=tests/integration/corpus.bash
source "${BASH_SOURCE[0]%/*}/corpus.bash"

TS_SRCDIR=${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
TS_BUILDDIR=${TS_BUILDDIR:-$TS_SRCDIR}
TOPOSHIM="$TS_BUILDDIR/toposhim"
TOPOSHIMCTL="$TS_BUILDDIR/toposhimctl"
FAKE_RUNTIME="$TS_SRCDIR/tests/fixtures/fake-runtime"
RUNC=$(command -v runc || true)

# Start every test from a clean toposhim environment: a config of nothing
# but the test policy and a state dir of the test's own (an operator's
# /etc/toposhim must not change the results, and the host's /run/toposhim
# must not get the tests' records) and no override.
ts_setup_env() {
	unset TOPOSHIM_RUNTIME TOPOSHIM_DEPTH TOPOSHIM_STATE_DIR
	export TOPOSHIM_CONFIG="$BATS_TEST_TMPDIR/empty-config.json"
	echo "{ \"state_dir\": \"$BATS_TEST_TMPDIR/state\", $TS_TEST_POLICY }" >"$TOPOSHIM_CONFIG"
	[ -x "$TOPOSHIM" ] || fail "toposhim not built: $TOPOSHIM"
}

# Skip (saying why) unless we are root: real containers need it.
require_root() {
	if [ "$(id -u)" != 0 ]; then
		skip "needs root to run real containers (uid $(id -u))"
	fi
}

# Skip unless make_bundle can work (runc for `runc spec`, busybox).
require_bundle_tools() {
	[ -n "$RUNC" ] || skip "runc is not installed"
	[ -x /bin/busybox ] || skip "busybox-static is not installed"
	command -v jq >/dev/null || skip "jq is not installed"
}

# Skip unless real runc containers can run here.
require_runc() {
	require_root
	require_bundle_tools
}

# A unique container id for this test.
new_container_id() {
	echo "ts-${BATS_TEST_NUMBER}-$$-${RANDOM}"
}

# make_bundle DIR [ARG...]: a busybox rootfs bundle whose process runs ARGs
# (default: sleep 1000), without a terminal, made with `runc spec`.
make_bundle() {
	local dir=$1 args
	shift
	[ $# -gt 0 ] || set -- sleep 1000
	args=$(printf '%s\n' "$@" | jq -R . | jq -sc .)
	mkdir -p "$dir/rootfs/bin" "$dir/rootfs/proc" "$dir/rootfs/dev" "$dir/rootfs/sys"
	cp /bin/busybox "$dir/rootfs/bin/"
	for c in sh ls cat grep sleep echo; do
		ln -sf busybox "$dir/rootfs/bin/$c"
	done
	(cd "$dir" && "$RUNC" spec) || return 1
	jq --argjson args "$args" '.process.terminal = false | .process.args = $args' \
		"$dir/config.json" >"$dir/config.json.new" &&
		mv "$dir/config.json.new" "$dir/config.json"
}

# annotate DIR KEY VALUE: set an annotation in DIR/config.json.
annotate() {
	jq --arg k "$2" --arg v "$3" '.annotations[$k] = $v' "$1/config.json" >"$1/config.json.new" &&
		mv "$1/config.json.new" "$1/config.json"
}

# The runc state root of this test; containers made here are listed in
# $BATS_TEST_TMPDIR/containers and deleted by ts_teardown_containers.
runc_root() {
	echo "$BATS_TEST_TMPDIR/runc-root"
}

track_container() {
	echo "$1" >>"$BATS_TEST_TMPDIR/containers"
}

ts_teardown_containers() {
	local id
	[ -f "$BATS_TEST_TMPDIR/containers" ] || return 0
	while read -r id; do
		"$RUNC" --root "$(runc_root)" delete -f "$id" >/dev/null 2>&1 || true
	done <"$BATS_TEST_TMPDIR/containers"
}

# create_container ID BUNDLE: `toposhim create` a container (not started).
# The container's stdio goes to files so that it never holds bats' pipes.
create_container() {
	track_container "$1"
	"$TOPOSHIM" --root "$(runc_root)" create --bundle "$2" "$1" \
		</dev/null >"$BATS_TEST_TMPDIR/$1.create.out" 2>&1 3>&-
}

# run_both ARG...: run `toposhim --root R ARG...` and `runc --root R ARG...`
# and fail unless their exit codes, stdout and stderr are equal (stderr
# with logrus' time="..." masked: two calls may straddle a second).
# BOTH_BY_NAME=1: both are called by name ("toposhim", "runc"), found in
# PATH, as a shell user types them; otherwise by their paths.
run_both() {
	local t=$BATS_TEST_TMPDIR ts_rc=0 runc_rc=0 ts=$TOPOSHIM rc=$RUNC
	[ -z "${BOTH_BY_NAME:-}" ] || ts=toposhim rc=runc
	PATH="$(dirname "$TOPOSHIM"):$PATH" "$ts" --root "$(runc_root)" "$@" >"$t/ts.out" 2>"$t/ts.err" 3>&- ||
		ts_rc=$?
	"$rc" --root "$(runc_root)" "$@" >"$t/runc.out" 2>"$t/runc.err" 3>&- || runc_rc=$?
	sed -i 's/time="[^"]*"/time="T"/' "$t/ts.err" "$t/runc.err"
	[ "$ts_rc" = "$runc_rc" ] || fail "$* exit code: toposhim $ts_rc, runc $runc_rc"
	cmp "$t/ts.out" "$t/runc.out" || fail "$* stdout differs: $(diff "$t/ts.out" "$t/runc.out")"
	cmp "$t/ts.err" "$t/runc.err" || fail "$* stderr differs: $(diff "$t/ts.err" "$t/runc.err")"
	BOTH_RC=$ts_rc
	BOTH_OUT=$(cat "$t/ts.out")
	BOTH_ERR=$(cat "$t/ts.err")
}

# wait_status ID STATUS: wait up to 5 s for runc to report STATUS.
wait_status() {
	local _i
	for _i in $(seq 50); do
		"$RUNC" --root "$(runc_root)" state "$1" 2>/dev/null |
			jq -e --arg s "$2" '.status == $s' >/dev/null && return 0
		sleep 0.1
	done
	fail "container $1 did not reach status $2"
}
