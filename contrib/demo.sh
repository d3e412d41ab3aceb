#!/bin/sh
# The main job, end to end: a real busybox container created through
# toposhim and runc, with a CDI device injected and CPUs/memory nodes placed
# by toposhim.  Run as root from the top of a built tree.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
shim=${TOPOSHIM:-$top/toposhim}
[ -x "$shim" ] || shim=$top/build/toposhim
[ -x "$shim" ] || { echo "demo: build toposhim first (mkdir -p build && cd build && ../configure && make)" >&2; exit 1; }

work=$(mktemp -d /tmp/toposhim-demo.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"

# A CDI spec in a private spec dir: the host's /dev/zero appears in the
# container as /dev/xzero, with an env variable and a read-only bind mount.
mkdir -m 0755 "$work/cdi"
cat >"$work/cdi/demo.yaml" <<'SPEC'
cdiVersion: "0.6.0"
kind: toposhim.example/demo
devices:
  - name: zero
    containerEdits:
      deviceNodes:
        - path: /dev/xzero
          hostPath: /dev/zero
      env:
        - DEMO_DEVICE=zero
containerEdits:
  mounts:
    - hostPath: /etc/hostname
      containerPath: /etc/demo-hostname
      options: [ro, bind]
SPEC
chmod 0644 "$work/cdi/demo.yaml"

# toposhim's own config: that spec dir, CPU 0 reserved for the system, and
# the operator's policy: containers started from a shell ("unscoped") may
# ask for the demo's CDI devices.  The exclusive CPU needs no grant: the
# container's CPU limit equals its request (the kubelet's rule).
reserved='"reserved": {"cpus": "0"}'
[ "$(nproc)" -ge 2 ] || reserved='"reserved": {"count": 0}'
cat >"$work/toposhim.json" <<CONF
{
  "cdi": { "spec_dirs": ["$work/cdi"] },
  "placement": { $reserved },
  "policy": { "unscoped": { "devices": ["toposhim.example/*"], "classes": ["critical"] } },
  "state_dir": "$work/state"
}
CONF

# A busybox bundle asking for the device and one exclusive CPU by its
# annotations (the policy above grants them), with no cpu values of its
# own: the critical class writes its cpu.weight 1000 (shares 10240 on a v1
# host).  (An engine's own shares would be kept over the class's, with a
# warning; kubelet's rule, a limit equal to the request, also gives the
# critical class: see docs/toposhim.1, POLICY.)
mkdir -p "$work/bundle/rootfs/bin"
cp /bin/busybox "$work/bundle/rootfs/bin/"
for c in sh ls cat grep; do ln -s busybox "$work/bundle/rootfs/bin/$c"; done
(cd "$work/bundle" && runc spec)
jq '.process.terminal = false
  | .process.args = ["sh", "-c", "ls -l /dev/xzero; grep -E \"^(Cpus|Mems)_allowed_list\" /proc/self/status; echo DEMO_DEVICE=$DEMO_DEVICE; cat /etc/demo-hostname >/dev/null && echo mount /etc/demo-hostname present"]
  | .annotations = {"cdi.k8s.io/demo": "toposhim.example/demo=zero",
                    "toposhim.io/class": "critical", "toposhim.io/cpus": "1"}' \
	"$work/bundle/config.json" >"$work/config.json" && mv "$work/config.json" "$work/bundle/config.json"

id=toposhim-demo-$$
echo "### inside the container (created by runc through toposhim):"
TOPOSHIM_CONFIG=$work/toposhim.json "$shim" run --bundle "$work/bundle" "$id"
echo "### what toposhim wrote into config.json:"
jq -c '{devices: .linux.devices, cpus: .linux.resources.cpu.cpus, mems: .linux.resources.cpu.mems,
        env: [.process.env[] | select(startswith("DEMO"))]}' "$work/bundle/config.json"
echo "### and what toposhim recorded of it, next to config.json:"
jq -c . "$work/bundle/toposhim-placement.json"
