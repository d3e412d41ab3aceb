#!/bin/bash
# Lifecycle and passthrough benchmark (issue 15): paired medians of full
# lifecycles (create, start, state until stopped, delete of a busybox `true`
# container) through toposhim against the runtime alone and against a
# static program that only execs the runtime (tests/bench/exec-floor, the
# floor of any wrapper), for runc and crun, in one run; the ratios of
# passthrough calls (state, kill, list, exec of a live container); the
# peak RSS of toposhim's own paths; callgrind instruction counts.
# Run as root from a built tree:
#   tests/bench/run-lifecycle.sh [ROUNDS [LIFECYCLES_PER_ROUND]]
# Rows per scenario: the runtime alone (ratio 1), the floor, toposhim.
#   plain         no request, default config (placement on, nothing reserved)
#   dev+excl      one CDI device and one exclusive CPU (critical class)
#   dev+excl big  the same with 1000 CDI spec files in the spec dir and 500
#                 live allocations in the store
# Then toposhim's own create (runtime /bin/true) against the exec floor:
# plain, dev+excl, big, the big row's halves apart (1000 spec files with an
# empty store; 500 records with one spec file), and the floor after a
# stat(2) of every spec file: what seeing each edit of a spec file costs
# a wrapper without a process watching the dirs.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${TS_BUILDDIR:-$top}
rounds=${1:-8}
k=${2:-10}
bench=$build/tests/bench/bench-lifecycle
creat=$build/tests/bench/bench-create
floor=$build/tests/bench/exec-floor
shim=$build/toposhim
for f in "$bench" "$creat" "$floor" "$shim"; do
	[ -x "$f" ] || { echo "run-lifecycle: build first (make check builds $f)" >&2; exit 1; }
done
runc=$(command -v runc)
crun=$(command -v crun || true)

work=$(mktemp -d /tmp/toposhim-lifecycle.XXXXXX)
cleanup() {
	"$runc" delete --force bench-live >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
chmod 0755 "$work"
policy='"policy": {"unscoped": {"classes": ["*"], "devices": ["*"], "numa": ["*"], "memory_tiers": ["*"]}}'
spec() { # spec FILE KIND
	cat >"$1" <<SPEC
cdiVersion: "0.6.0"
kind: $2
devices:
  - name: zero
    containerEdits:
      deviceNodes:
        - path: /dev/xzero
          hostPath: /dev/zero
      env: [BENCH=1]
SPEC
	chmod 0644 "$1"
}
mkdir -m 0755 "$work/cdi" "$work/cdi-big"
spec "$work/cdi/bench.yaml" bench.toposhim/dev
for i in $(seq 1000); do spec "$work/cdi-big/s$i.yaml" "bench$i.toposhim/dev"; done
spec "$work/cdi-big/bench.yaml" bench.toposhim/dev
echo "{\"cdi\": {\"spec_dirs\": [\"$work/cdi\"]}, \"state_dir\": \"$work/state\", $policy}" >"$work/small.json"
echo "{\"cdi\": {\"spec_dirs\": [\"$work/cdi-big\"]}, \"state_dir\": \"$work/state-big\", $policy}" >"$work/big.json"

mkbundle() { # mkbundle DIR ARGS_JSON ANNOTATIONS_JSON
	mkdir -p "$1/rootfs/bin"
	cp /bin/busybox "$1/rootfs/bin/"
	for c in sh true sleep; do ln -sf busybox "$1/rootfs/bin/$c"; done
	(cd "$1" && "$runc" spec)
	jq --argjson a "$2" --argjson n "$3" '.process.terminal = false | .process.args = $a
		| .annotations = $n' "$1/config.json" >"$1/config.json.orig"
	cp "$1/config.json.orig" "$1/config.json"
}
mkbundle "$work/plain" '["true"]' '{}'
mkbundle "$work/dev" '["true"]' '{"cdi.k8s.io/b": "bench.toposhim/dev=zero",
	"toposhim.io/class": "critical", "toposhim.io/cpus": "1"}'
mkbundle "$work/live" '["sleep", "100000"]' '{}'
# the dev bundle's config.json as toposhim rewrites it (the same cpus and
# device as in its lifecycle rows), for the runtime alone: what the runtime
# itself spends on the device node and the cpuset
mkdir -p "$work/dev-rw/rootfs/bin" "$work/rt-rw"
cp -a "$work/dev/rootfs/." "$work/dev-rw/rootfs/"
cp "$work/dev/config.json.orig" "$work/dev-rw/config.json"
echo "{\"cdi\": {\"spec_dirs\": [\"$work/cdi\"]}, \"state_dir\": \"$work/state-rw\", $policy}" >"$work/rw.json"
TOPOSHIM_CONFIG=$work/rw.json TOPOSHIM_RUNTIME=/bin/true \
	"$shim" --root "$work/rt-rw" create --bundle "$work/dev-rw" rw
cp "$work/dev-rw/config.json" "$work/dev-rw/config.json.orig"
jq -e '.linux.resources.cpu.cpus != null and (.linux.devices | length) > 0' \
	"$work/dev-rw/config.json.orig" >/dev/null ||
	{ echo "run-lifecycle: toposhim did not rewrite the dev bundle" >&2; exit 1; }

# 500 live allocations: standard containers recorded under a runtime root
# of their own whose state dirs exist (no runtime state toposhim can read:
# they stay recorded, with no init to resize)
mkdir -p "$work/rt500" "$work/b500"
mkbundle "$work/b500" '["true"]' '{"toposhim.io/class": "standard"}'
for i in $(seq 500); do
	mkdir "$work/rt500/s$i"
	cp "$work/b500/config.json.orig" "$work/b500/config.json"
	TOPOSHIM_CONFIG=$work/big.json TOPOSHIM_RUNTIME=/bin/true \
		"$shim" --root "$work/rt500" create --bundle "$work/b500" "s$i" 2>/dev/null
done
[ "$(jq '.allocations | length' "$work/state-big/allocations.json")" = 500 ] ||
	{ echo "run-lifecycle: could not record 500 allocations" >&2; exit 1; }
# the two halves of the big rows apart, for the create rows below: the
# 1000 spec files with an empty store, the 500 records with one spec file
# (a copy of the big store without its CDI index)
echo "{\"cdi\": {\"spec_dirs\": [\"$work/cdi-big\"]}, \"state_dir\": \"$work/state-specs\", $policy}" >"$work/specs.json"
cp -a "$work/state-big" "$work/state-allocs"
rm -f "$work/state-allocs/cdi-index"
echo "{\"cdi\": {\"spec_dirs\": [\"$work/cdi\"]}, \"state_dir\": \"$work/state-allocs\", $policy}" >"$work/allocs.json"

echo "toposhim lifecycle benchmark, $(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r),"
echo "runc $("$runc" --version | sed -n 's/^runc version //p'), crun $("${crun:-true}" --version 2>/dev/null | sed -n 's/^crun version //p')"
echo "medians of $rounds rounds of $k, paired (each round runs every row, in rotated order);"
echo "ratio = median of the per-round ratios to the runtime alone"
# crun refuses hybrid cgroups: everything runs in a mount namespace where
# the cgroup2 mount is hidden, so runc and crun see the same hierarchy
export -f mkbundle 2>/dev/null || true
unshare -m --propagation private bash -s -- "$bench" "$rounds" "$k" "$work" "$shim" "$floor" \
	"$runc" "$crun" <<'INNER'
set -eu
bench=$1 rounds=$2 k=$3 work=$4 shim=$5 floor=$6 runc=$7 crun=$8
umount /sys/fs/cgroup/unified 2>/dev/null || true
for rt in "$runc" $crun; do
	name=$(basename "$rt")
	for sc in plain:small dev:small dev:big; do
		b=${sc%%:*} conf=${sc##*:}
		label="$b"
		[ "$b" = dev ] && label="dev+excl"
		[ "$conf" = big ] && label="dev+excl, 1000 specs, 500 allocs"
		# dev+excl: and the runtime alone with toposhim's config.json
		rw=()
		[ "$sc" = dev:small ] && rw=("$name, toposhim's config.json=BENCH_BUNDLE=$work/dev-rw $rt")
		echo "-- $label, $name"
		"$bench" -r "$rounds" -k "$k" -b "$work/$b" \
			"$name=$rt" \
			"exec floor -> $name=EXEC_FLOOR_RUNTIME=$rt $floor" \
			"toposhim -> $name=TOPOSHIM_CONFIG=$work/$conf.json TOPOSHIM_RUNTIME=$rt $shim" \
			"${rw[@]}"
	done
	# passthrough: a live container of this runtime
	cp "$work/live/config.json.orig" "$work/live/config.json"
	"$rt" run -d --bundle "$work/live" bench-live </dev/null >/dev/null 2>&1
	for op in state kill list exec; do
		echo "-- passthrough $op, $name"
		"$bench" -r "$rounds" -k $((k * 5)) -p "$op" -i bench-live \
			"$name=$rt" \
			"exec floor -> $name=EXEC_FLOOR_RUNTIME=$rt $floor" \
			"toposhim -> $name=TOPOSHIM_CONFIG=$work/small.json TOPOSHIM_RUNTIME=$rt $shim"
	done
	"$rt" delete --force bench-live >/dev/null 2>&1
done
INNER

# toposhim's own cost: the runtime is /bin/true, so the peak RSS is
# toposhim's (or true's, ~1 MiB, whichever is larger)
echo "-- peak RSS of toposhim's own paths (runtime /bin/true)"
"$bench" -r 1 -k 5 -p state -i none \
	"passthrough state=TOPOSHIM_CONFIG=$work/small.json TOPOSHIM_RUNTIME=/bin/true $shim" | tail -n +2
# (each create's ratio is to the first row, the floor's exec of /bin/true)
"$creat" -n 10 -b "$work/plain" -r /bin/true \
	"create, exec floor=EXEC_FLOOR_RUNTIME=/bin/true $floor" \
	"create plain=TOPOSHIM_CONFIG=$work/small.json TOPOSHIM_RUNTIME=/bin/true $shim" \
	| tail -n +2
"$creat" -n 10 -b "$work/dev" -r /bin/true \
	"create, exec floor=EXEC_FLOOR_RUNTIME=/bin/true $floor" \
	"create dev+excl=TOPOSHIM_CONFIG=$work/small.json TOPOSHIM_RUNTIME=/bin/true $shim" \
	"create dev+excl big=TOPOSHIM_CONFIG=$work/big.json TOPOSHIM_RUNTIME=/bin/true $shim" \
	"create big, 1000 specs only=TOPOSHIM_CONFIG=$work/specs.json TOPOSHIM_RUNTIME=/bin/true $shim" \
	"create big, 500 allocs only=TOPOSHIM_CONFIG=$work/allocs.json TOPOSHIM_RUNTIME=/bin/true $shim" \
	"floor, stat of 1001 specs=EXEC_FLOOR_STAT_DIR=$work/cdi-big EXEC_FLOOR_RUNTIME=/bin/true $floor" \
	| tail -n +2

# instruction counts: the runtime is a file exec cannot run, so toposhim's
# whole path is counted: the front and, for create, the core it execs
# (--trace-children; the sum of both)
if command -v valgrind >/dev/null; then
	printf '\x00garbage' >"$work/noexec"
	chmod 0755 "$work/noexec"
	echo "-- callgrind instructions (Ir) of toposhim up to its exec"
	count() { # count LABEL CONFIG BUNDLE ARGS...
		local label=$1 conf=$2 b=$3
		shift 3
		[ -z "$b" ] || cp "$work/$b/config.json.orig" "$work/$b/config.json"
		n=$(TOPOSHIM_CONFIG=$work/$conf.json TOPOSHIM_RUNTIME=$work/noexec \
			valgrind --tool=callgrind --trace-children=yes --callgrind-out-file=/dev/null \
			"$shim" "$@" 2>&1 | sed -n 's/.*Collected : //p' | awk '{ n += $1 } END { print n }')
		printf '%-34s %12s\n' "$label" "$n"
	}
	count "passthrough state" small "" state bench-x
	# a plain create in a state dir of its own: the first is the core's
	# (it writes the summary), the next ones the front's alone
	echo "{\"state_dir\": \"$work/state-cg\", $policy}" >"$work/cg.json"
	count "create plain, first (core)" cg plain create --bundle "$work/plain" cg-plain0
	count "create plain (front)" cg plain create --bundle "$work/plain" cg-plain
	count "create dev+excl" small dev create --bundle "$work/dev" cg-dev
	count "create dev+excl big" big dev create --bundle "$work/dev" cg-big
fi
