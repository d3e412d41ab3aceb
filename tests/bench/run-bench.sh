#!/bin/sh
# Create-path benchmark: the time a create takes through toposhim against
# the runtime alone, runc and crun measured in the same run.  Prints one
# table (tests/bench/bench-create).  Run as root from a built tree:
#   tests/bench/run-bench.sh [ITERATIONS]
# Rows:
#   runc / crun                     the runtime alone (the baseline of the ratios)
#   toposhim -> runc/crun           a create with one CDI device and one
#                                   exclusive CPU (critical class)
#   toposhim rewrite only           the same rewrite with TOPOSHIM_RUNTIME=/bin/true:
#                                   toposhim's own cost (target <= 5 ms), on the
#                                   384-PU corpus topology (warm: through the
#                                   topology cache in the state dir, as on a
#                                   host), toposhim started directly
#   rewrite, 500 live allocations   the same with 500 standard containers
#                                   already recorded (their runtime state
#                                   dirs exist, so they stay live)
#   exec /bin/true                  the floor: fork, exec and wait of a
#                                   program that does nothing
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${TS_BUILDDIR:-$top}
iter=${1:-30}
bench=$build/tests/bench/bench-create
shim=$build/toposhim
shared=${TS_SHARED_DIR:-$top/../shared}
[ -x "$bench" ] && [ -x "$shim" ] || { echo "run-bench: build first (make check builds $bench)" >&2; exit 1; }

work=$(mktemp -d /tmp/toposhim-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
mkdir -m 0755 "$work/cdi"
cat >"$work/cdi/bench.yaml" <<'SPEC'
cdiVersion: "0.6.0"
kind: bench.toposhim/dev
devices:
  - name: zero
    containerEdits:
      deviceNodes:
        - path: /dev/xzero
          hostPath: /dev/zero
      env: [BENCH=1]
SPEC
chmod 0644 "$work/cdi/bench.yaml"
cat >"$work/config.json" <<CONF
{"cdi": {"spec_dirs": ["$work/cdi"]}, "state_dir": "$work/state"}
CONF
cat >"$work/config-big.json" <<CONF
{"cdi": {"spec_dirs": ["$work/cdi"]}, "state_dir": "$work/state-big"}
CONF
mkdir -p "$work/b/rootfs/bin"
cp /bin/busybox "$work/b/rootfs/bin/"
ln -s busybox "$work/b/rootfs/bin/sh"
(cd "$work/b" && runc spec)
jq '.process.terminal = false | .process.args = ["sh", "-c", "exit 0"]
  | .annotations = {"cdi.k8s.io/b": "bench.toposhim/dev=zero",
                    "toposhim.io/class": "critical", "toposhim.io/cpus": "1"}' \
	"$work/b/config.json" >"$work/b/config.json.orig"
cp "$work/b/config.json.orig" "$work/b/config.json"

cat >"$work/via-runc" <<W
#!/bin/sh
TOPOSHIM_CONFIG=$work/config.json TOPOSHIM_RUNTIME=$(command -v runc) exec $shim "\$@"
W
cat >"$work/via-crun" <<W
#!/bin/sh
TOPOSHIM_CONFIG=$work/config.json TOPOSHIM_RUNTIME=$(command -v crun) exec $shim "\$@"
W
# bench-create sets these in the child: no shell between it and toposhim
rewrite_only="TOPOSHIM_CONFIG=$work/config-big.json TOPOSHIM_RUNTIME=/bin/true"
rewrite_only="$rewrite_only TOPOSHIM_TOPOLOGY_XML=$shared/corpus/topology/13-hwloc-x86cpuid-zen4-2xepyc9654-384pu.xml"
rewrite_only="$rewrite_only $shim"
chmod 0755 "$work/via-runc" "$work/via-crun"

# 500 live standard allocations for the last rewrite row
xml=$shared/corpus/topology/13-hwloc-x86cpuid-zen4-2xepyc9654-384pu.xml
cat >"$work/config-500.json" <<CONF
{"cdi": {"spec_dirs": ["$work/cdi"]}, "state_dir": "$work/state-500"}
CONF
mkdir -p "$work/rt500" "$work/b500"
jq '.annotations = {"toposhim.io/class": "standard"}' "$work/b/config.json.orig" >"$work/std.json"
for i in $(seq 500); do
	mkdir "$work/rt500/s$i"
	cp "$work/std.json" "$work/b500/config.json"
	TOPOSHIM_CONFIG=$work/config-500.json TOPOSHIM_RUNTIME=/bin/true TOPOSHIM_TOPOLOGY_XML=$xml \
		"$shim" --root "$work/rt500" create --bundle "$work/b500" "s$i" 2>/dev/null
done
[ "$(jq '.allocations | length' "$work/state-500/allocations.json")" = 500 ] ||
	{ echo "run-bench: could not record 500 allocations" >&2; exit 1; }
rewrite_500="TOPOSHIM_CONFIG=$work/config-500.json TOPOSHIM_RUNTIME=/bin/true"
rewrite_500="$rewrite_500 TOPOSHIM_TOPOLOGY_XML=$xml $shim"

echo "toposhim create-path benchmark: $iter creates per row, $(nproc) CPUs, $(uname -r)"
# crun refuses hybrid cgroups: measure everything in a mount namespace where
# the cgroup2 mount is hidden, so that runc and crun see the same hierarchy.
unshare -m --propagation private sh -c '
	umount /sys/fs/cgroup/unified 2>/dev/null
	"$0" -n "$1" -b "$2" -r "$3" "runc=$3" "toposhim -> runc=$4" "toposhim rewrite only=$5" \
		"rewrite, 500 live allocs=$8" "exec /bin/true=/bin/true"
	"$0" -n "$1" -b "$2" -r "$6" "crun=$6" "toposhim -> crun=$7"
' "$bench" "$iter" "$work/b" "$(command -v runc)" "$work/via-runc" "$rewrite_only" \
	"$(command -v crun)" "$work/via-crun" "$rewrite_500"
