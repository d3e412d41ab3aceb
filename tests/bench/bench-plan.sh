#!/bin/sh
# Speed of `toposhimctl plan` against the process floor (issue 13): the
# whole command at most 2 times the floor measured in the same run, on the
# 384-PU corpus machine, through the topology cache a create leaves in the
# state dir.  Prints one table (tests/bench/bench-exec):
#   toposhimctl version         the floor: fork, exec and wait of the same
#                               binary doing nothing (its libraries loaded)
#   exec /bin/true              a program that does nothing, for scale
#   plan, 384 pus               plan of an 8-CPU critical container
#   plan, 108 live allocations  the same with 108 containers recorded
# Usage: tests/bench/bench-plan.sh [ITERATIONS]   (from a built tree)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${TS_BUILDDIR:-$top}
iter=${1:-50}
shared=${TS_SHARED_DIR:-$top/../shared}
xml=$shared/corpus/topology/13-hwloc-x86cpuid-zen4-2xepyc9654-384pu.xml
bench=$build/tests/bench/bench-exec
shim=$build/toposhim
ctl=$build/toposhimctl
if [ ! -x "$bench" ] || [ ! -x "$shim" ] || [ ! -x "$ctl" ]; then
	echo "bench-plan: build first (make check builds $bench)" >&2
	exit 1
fi
if [ ! -r "$xml" ]; then
	echo "bench-plan: skipped: no corpus topology $xml (TS_SHARED_DIR)"
	exit 0
fi

work=$(mktemp -d /tmp/toposhim-plan.XXXXXX)
trap '[ -n "${TS_BENCH_KEEP:-}" ] || rm -rf "$work"' EXIT
mkdir -p "$work/cdi" "$work/b" "$work/rt"
cat >"$work/b/config.json" <<'CONF'
{"ociVersion": "1.0.2", "process": {"args": ["sh"], "cwd": "/"}, "root": {"path": "rootfs"},
 "annotations": {"toposhim.io/class": "critical", "toposhim.io/cpus": "8"}, "linux": {}}
CONF
cp "$work/b/config.json" "$work/plan.json"
# the policy grants the unscoped critical class (plan checks it, as a create does)
for s in empty 108; do
	cat >"$work/config-$s.json" <<CONF
{"cdi": {"spec_dirs": ["$work/cdi"]}, "state_dir": "$work/state-$s",
 "policy": {"unscoped": {"classes": ["*"]}}}
CONF
done
# a create warms the topology cache, as on a host; 108 standard containers
jq '.annotations = {"toposhim.io/class": "standard"}' "$work/plan.json" >"$work/std.json"
for s in empty 108; do
	n=1
	[ "$s" = 108 ] && n=108
	for i in $(seq "$n"); do
		mkdir -p "$work/rt/$s-$i"
		cp "$work/std.json" "$work/b/config.json"
		TOPOSHIM_CONFIG=$work/config-$s.json TOPOSHIM_RUNTIME=/bin/true \
			TOPOSHIM_TOPOLOGY_XML=$xml "$shim" --root "$work/rt" create --bundle "$work/b" \
			"$s-$i" 2>/dev/null
	done
done
cp "$work/plan.json" "$work/b/config.json"
[ -s "$work/state-empty/topology.xml" ] ||
	{ echo "bench-plan: the create left no topology cache" >&2; exit 1; }

echo "toposhimctl plan against the process floor: $iter runs per row, $(nproc) CPUs, target <= 2.00"
# the floor is the same binary doing nothing: exec, dynamic linking of its
# libraries (hwloc, yajl, libyaml, ...) and exit; /bin/true is shown first
"$bench" -n "$iter" -t 2.0 "toposhimctl version=$ctl version" "exec /bin/true=/bin/true" \
	"plan, 384 pus=TOPOSHIM_CONFIG=$work/config-empty.json TOPOSHIM_TOPOLOGY_XML=$xml $ctl plan --bundle $work/b" \
	"plan, 108 live allocations=TOPOSHIM_CONFIG=$work/config-108.json TOPOSHIM_TOPOLOGY_XML=$xml $ctl plan --bundle $work/b"
