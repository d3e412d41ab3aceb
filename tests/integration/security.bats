#!/usr/bin/env bats
# Issue 10, written as the attacks: the state lock is never held across
# something slow or external (finding 8), the same container id under two
# runtime roots is two containers (finding 5), and a plugin's cpus go
# through the allocator (finding 6).  A stand-in runtime keeps <root>/<id>
# like runc and can be made to hang in `update`; the topology is a
# synthetic 4-CPU machine.

load helpers

setup() {
	ts_setup_env
	command -v jq >/dev/null || skip "jq is not installed"
	WORK=$(mktemp -d "${BATS_TMPDIR:-/tmp}/toposhim-sec.XXXXXX")
	chmod 0755 "$WORK"
	ts_synthetic_xml "pack:1 core:4 pu:1" "$WORK/topo.xml"
	export TOPOSHIM_TOPOLOGY_XML="$WORK/topo.xml"
	export TOPOSHIM_CONFIG="$WORK/toposhim.json"
	export TOPOSHIM_RUNTIME="$WORK/runtime"
	cat >"$WORK/runtime" <<RUNTIME
#!/bin/sh
# --root ROOT COMMAND ... ID: keeps ROOT/ID; 'update' waits for $WORK/go
eval "id=\\\${\$#}"
echo "\$*" >>"$WORK/runtime.log"
case "\$3" in
create) mkdir -p "\$2/\$id" ;;
delete) rm -rf "\$2/\$id" ;;
update) while [ ! -e "$WORK/go" ]; do sleep 0.05; done ;;
esac
RUNTIME
	chmod 0755 "$WORK/runtime"
	write_sec_config ''
}

teardown() {
	touch "$WORK/go"
	for p in $(cat "$WORK"/*.pid 2>/dev/null); do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$WORK"
}

# write_sec_config [MEMBERS]: the state dir, MEMBERS, and the test policy
# unless MEMBERS has a "policy".
write_sec_config() {
	local policy=", $TS_TEST_POLICY"
	case "${1:-}" in *'"policy"'*) policy="" ;; esac
	echo "{\"state_dir\": \"$WORK/state\"$policy${1:+, $1}}" >"$TOPOSHIM_CONFIG"
}

# bundle NAME CLASS [CPUS]: a config.json asking for CLASS (and CPUS).
bundle() {
	mkdir -p "$WORK/$1/rootfs"
	jq -n --arg c "$2" --arg n "${3:-}" '{ociVersion: "1.0.2", root: {path: "rootfs"},
		process: {args: ["true"], cwd: "/"}, linux: {},
		annotations: ({"toposhim.io/class": $c} + if $n != "" then {"toposhim.io/cpus": $n} else {} end)}' \
		>"$WORK/$1/config.json"
}

records() {
	jq -c '[.allocations[] | [.runtime_root, .container_id, .cpus]]' "$WORK/state/allocations.json"
}

@test "security: a slow pre-create plugin does not hold the state lock (finding 8)" {
	getent passwd toposhim-plugin >/dev/null ||
		skip "no user toposhim-plugin, which plugins run as (contrib/plugin-user.sh creates it)"
	install -d -m 0755 "$WORK/plugins"
	install -m 0755 "$TS_SRCDIR/tests/fixtures/plugins/scripted" "$WORK/plugins/"
	write_sec_config "\"plugins\": [{\"type\": \"slow\", \"path\": \"$WORK/plugins/scripted\",
		\"timeout_ms\": 60000, \"stages\": [\"pre-create\"], \"conf\": {\"mode\": \"wait\", \"only\": \"slow\", \"path\": \"$WORK/go\"}}]"
	bundle slow critical 1
	bundle quick critical 1
	"$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/slow" slow \
		</dev/null >"$WORK/slow.out" 2>&1 3>&- &
	echo $! >"$WORK/slow.pid"
	# the slow create has placed and recorded its container: its plugin runs
	for _ in $(seq 200); do
		[ -s "$WORK/state/allocations.json" ] && [ "$(records | jq length)" = 1 ] && break
		sleep 0.05
	done
	[ "$(records)" = "[[\"$WORK/root\",\"slow\",\"0\"]]" ]
	# an unrelated create goes through while that plugin still runs
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/quick" quick
	[ "$status" = 0 ] || fail "quick create: $output"
	kill -0 "$(cat "$WORK/slow.pid")" || fail "the slow create ended before the quick one: $(cat "$WORK/slow.out")"
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/quick/config.json")" = 1 ]
	touch "$WORK/go"
	wait "$(cat "$WORK/slow.pid")" || fail "slow create: $(cat "$WORK/slow.out")"
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/slow/config.json")" = 0 ]
}

@test "security: a hanging runtime update does not hold the state lock (finding 8)" {
	# a running shared container, recorded with its init by the createRuntime hook
	bundle web standard
	"$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/web" web
	sleep 1000 &
	echo $! >"$WORK/init.pid"
	printf '{"ociVersion":"1.0.2","id":"web","status":"creating","pid":%d,"bundle":"%s"}' \
		"$(cat "$WORK/init.pid")" "$WORK/web" |
		env TOPOSHIM_RUNTIME_ROOT="$WORK/root" "$TOPOSHIM" hook create-runtime
	[ "$(jq -r '.allocations[0].state' "$WORK/state/allocations.json")" = created ]
	# a critical create shrinks it: the update hangs until $WORK/go
	bundle crit critical 1
	"$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/crit" crit \
		</dev/null >"$WORK/crit.out" 2>&1 3>&- &
	echo $! >"$WORK/crit.pid"
	for _ in $(seq 200); do
		grep -q "update" "$WORK/runtime.log" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "^--root $WORK/root update --cpuset-cpus 1-3 --cpuset-mems 0 web$" "$WORK/runtime.log" ||
		fail "no update of web: $(cat "$WORK/runtime.log")"
	# meanwhile another create places and records its container
	bundle batch batch
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/batch" batch
	[ "$status" = 0 ] || fail "batch create: $output"
	kill -0 "$(cat "$WORK/crit.pid")" || fail "the critical create ended before the batch one"
	touch "$WORK/go"
	wait "$(cat "$WORK/crit.pid")" || fail "critical create: $(cat "$WORK/crit.out")"
	[ "$(jq -r '.allocations[] | select(.container_id == "web") | .cpus' "$WORK/state/allocations.json")" = 1-3 ]
}

@test "security: one container id under two runtime roots is two containers (finding 5)" {
	bundle a critical 1
	bundle b critical 1
	run "$TOPOSHIM" --root "$WORK/k8s.io" create --bundle "$WORK/a" same
	[ "$status" = 0 ] || fail "$output"
	run "$TOPOSHIM" --root "$WORK/default" create --bundle "$WORK/b" same
	[ "$status" = 0 ] || fail "$output"
	# the second got CPUs of its own, not the first's "existing" allocation
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/a/config.json")" = 0 ]
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/b/config.json")" = 1 ]
	[ "$(records)" = "[[\"$WORK/k8s.io\",\"same\",\"0\"],[\"$WORK/default\",\"same\",\"1\"]]" ]
	# the second's poststop releases the second only
	printf '{"ociVersion":"1.0.2","id":"same","status":"stopped","bundle":"%s"}' "$WORK/b" |
		env TOPOSHIM_RUNTIME_ROOT="$WORK/default" "$TOPOSHIM" hook poststop
	[ "$(records)" = "[[\"$WORK/k8s.io\",\"same\",\"0\"]]" ]
}

@test "security: a plugin's cpus go through the allocator (finding 6)" {
	getent passwd toposhim-plugin >/dev/null ||
		skip "no user toposhim-plugin, which plugins run as (contrib/plugin-user.sh creates it)"
	install -d -m 0755 "$WORK/plugins"
	install -m 0755 "$TS_SRCDIR/tests/fixtures/plugins/scripted" "$WORK/plugins/"
	bundle holder critical 1
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/holder" holder
	[ "$status" = 0 ] || fail "$output"
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/holder/config.json")" = 0 ]
	# a plugin moves the next container onto the holder's exclusive CPU 0
	write_sec_config "\"plugins\": [{\"type\": \"thief\", \"path\": \"$WORK/plugins/scripted\",
		\"stages\": [\"pre-create\"], \"conf\": {\"mode\": \"adjust\", \"name\": \"thief\",
		\"adjust\": {\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"0\"}}}}}}]"
	bundle web standard
	cp "$WORK/web/config.json" "$WORK/web.orig"
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/web" web
	[ "$status" = 1 ]
	[ "$output" = "toposhim: plugin 'thief' ($WORK/plugins/scripted): adjust: '/linux/resources/cpu/cpus': cpus '0' overlap the exclusive cpus 0 of container 'holder'" ]
	cmp "$WORK/web/config.json" "$WORK/web.orig"
	[ "$(records)" = "[[\"$WORK/root\",\"holder\",\"0\"]]" ]
	# cpus no one holds are taken, recorded, and pin the container
	write_sec_config "\"plugins\": [{\"type\": \"mover\", \"path\": \"$WORK/plugins/scripted\",
		\"stages\": [\"pre-create\"], \"conf\": {\"mode\": \"adjust\", \"name\": \"mover\",
		\"adjust\": {\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"3\"}}}}}}]"
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/web" web
	[ "$status" = 0 ] || fail "$output"
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/web/config.json")" = 3 ]
	[ "$(jq -c '.allocations[1] | [.container_id, .cpus, .pinned]' "$WORK/state/allocations.json")" = '["web","3",true]' ]
	# cpus the machine does not have online: named, with those it has
	write_sec_config "\"plugins\": [{\"type\": \"far\", \"path\": \"$WORK/plugins/scripted\",
		\"stages\": [\"pre-create\"], \"conf\": {\"mode\": \"adjust\", \"name\": \"far\",
		\"adjust\": {\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"2-5\"}}}}}}]"
	bundle far standard
	cp "$WORK/far/config.json" "$WORK/far.orig"
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/far" far
	[ "$status" = 1 ]
	[ "$output" = "toposhim: plugin 'far' ($WORK/plugins/scripted): adjust: '/linux/resources/cpu/cpus': '2-5' names cpus that are not online: 4-5 (online: 0-3)" ]
	cmp "$WORK/far/config.json" "$WORK/far.orig"
}

@test "security: the runtime a forged record names is never executed (finding 2)" {
	# a running shared container...
	bundle web standard
	"$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/web" web
	sleep 1000 &
	echo $! >"$WORK/init.pid"
	printf '{"ociVersion":"1.0.2","id":"web","status":"creating","pid":%d,"bundle":"%s"}' \
		"$(cat "$WORK/init.pid")" "$WORK/web" |
		env TOPOSHIM_RUNTIME_ROOT="$WORK/root" "$TOPOSHIM" hook create-runtime
	# ...whose record a hostile writer points at its own program (the
	# checksum no longer matches: the salvage keeps the live record)
	printf '#!/bin/sh\ntouch %s/pwned\n' "$WORK" >"$WORK/evil"
	chmod 0755 "$WORK/evil"
	jq --arg evil "$WORK/evil" '.allocations[0].runtime = $evil' "$WORK/state/allocations.json" \
		>"$WORK/forged" && mv "$WORK/forged" "$WORK/state/allocations.json"
	# a critical create shrinks it: the update goes to the configured runtime
	touch "$WORK/go"
	bundle crit critical 1
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/crit" crit
	[ "$status" = 0 ] || fail "$output"
	[[ "$output" == "toposhim: warning: $WORK/state/allocations.json: checksum mismatch"* ]] || fail "$output"
	[ ! -e "$WORK/pwned" ] || fail "the forged runtime ran"
	grep -q "^--root $WORK/root update --cpuset-cpus 1-3 --cpuset-mems 0 web$" "$WORK/runtime.log" ||
		fail "no update through the configured runtime: $(cat "$WORK/runtime.log")"
}

# pod_bundle NAME NAMESPACE ANNOTATIONS-JSON [CPU-JSON]: a container of a pod
# as containerd 1.6's CRI writes it: its own namespace annotation
# (io.kubernetes.cri.sandbox-namespace; kubelet's io.kubernetes.pod.namespace
# stays a containerd label) and the container's name beside the pod's own
# annotations, and the CPU resources kubelet derives.  NS_KEY overrides
# the namespace key (CRI-O: io.kubernetes.pod.namespace).
pod_bundle() {
	mkdir -p "$WORK/$1/rootfs"
	jq -n --arg ns "$2" --argjson a "$3" --argjson cpu "${4:-null}" \
		--arg key "${NS_KEY:-io.kubernetes.cri.sandbox-namespace}" '{ociVersion: "1.0.2",
		root: {path: "rootfs"}, process: {args: ["true"], cwd: "/"},
		linux: (if $cpu == null then {} else {resources: {cpu: $cpu}} end),
		annotations: ({($key): $ns, "io.kubernetes.cri.container-type": "container",
			"io.kubernetes.cri.container-name": "worker"} + $a)}' >"$WORK/$1/config.json"
	cp "$WORK/$1/config.json" "$WORK/$1.orig"
}

@test "security: a pod's annotations get nothing privileged without the policy (finding 4)" {
	write_sec_config '"policy": {}, "placement": {"classes": {"system": {"pool": "reserved"}}, "reserved": {"cpus": "0"}}'
	mkdir -p "$WORK/cdi"
	local rows=(
		'{"toposhim.io/class": "critical", "toposhim.io/cpus": "3"}|/annotations/toposhim.io~1class|class '\''critical'\'' (exclusive cpus) is not allowed for namespace '\''team-a'\'': it needs an integer cpu limit equal to its request (the kubelet'\''s rule), or the class in '\''/policy/namespaces/team-a/classes'\'''
		'{"toposhim.io/class": "system"}|/annotations/toposhim.io~1class|class '\''system'\'' (reserved cpus) is not allowed for namespace '\''team-a'\'': it needs the class in '\''/policy/namespaces/team-a/classes'\'''
		'{"toposhim.io/numa": "exclusive"}|/annotations/toposhim.io~1numa|numa '\''exclusive'\'' (a whole numa node) is not allowed for namespace '\''team-a'\'': it needs '\''exclusive'\'' in '\''/policy/namespaces/team-a/numa'\'''
		'{"toposhim.io/memory-tier": "hbm"}|/annotations/toposhim.io~1memory-tier|memory tier '\''hbm'\'' is not allowed for namespace '\''team-a'\'': it needs the tier in '\''/policy/namespaces/team-a/memory_tiers'\'''
		# a request scoped to the container is named by its own key
		'{"toposhim.io/class.worker": "critical", "toposhim.io/cpus.worker": "1"}|/annotations/toposhim.io~1class.worker|class '\''critical'\'' (exclusive cpus) is not allowed for namespace '\''team-a'\'': it needs an integer cpu limit equal to its request (the kubelet'\''s rule), or the class in '\''/policy/namespaces/team-a/classes'\'''
		'{"toposhim.io/numa.worker": "exclusive"}|/annotations/toposhim.io~1numa.worker|numa '\''exclusive'\'' (a whole numa node) is not allowed for namespace '\''team-a'\'': it needs '\''exclusive'\'' in '\''/policy/namespaces/team-a/numa'\'''
	)
	local i=0 row ann field msg
	for row in "${rows[@]}"; do
		IFS='|' read -r ann field msg <<<"$row"
		i=$((i + 1))
		pod_bundle "p$i" team-a "$ann"
		run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/p$i" "p$i"
		[ "$status" = 1 ] || fail "row $i: created: $output"
		[ "$output" = "toposhim: $WORK/p$i/config.json: '$field': $msg of $TOPOSHIM_CONFIG" ] ||
			fail "row $i: $output"
		cmp "$WORK/p$i/config.json" "$WORK/p$i.orig"
	done
	# nothing was recorded for any of them
	[ ! -e "$WORK/state/allocations.json" ] || [ "$(records)" = "[]" ]
}

@test "security: a pod's CDI device needs a pattern of its namespace (finding 4)" {
	mkdir -p "$WORK/cdi"
	printf '%s\n' 'cdiVersion: "0.6.0"' 'kind: vendor.com/gpu' 'devices:' \
		'  - name: "0"' '    containerEdits:' '      env: [GPU=0]' >"$WORK/cdi/gpu.yaml"
	local cdi="\"cdi\": {\"spec_dirs\": [\"$WORK/cdi\"]}"
	write_sec_config "$cdi, \"policy\": {\"namespaces\": {\"ml-*\": {\"devices\": [\"vendor.com/gpu=*\"]}}}"
	pod_bundle stolen team-a '{"cdi.k8s.io/gpu": "vendor.com/gpu=0"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/stolen" stolen
	[ "$status" = 1 ]
	[ "$output" = "toposhim: $WORK/stolen/config.json: '/annotations/cdi.k8s.io~1gpu': cdi device 'vendor.com/gpu=0' is not allowed for namespace 'team-a': it needs a pattern matching it in '/policy/namespaces/team-a/devices' of $TOPOSHIM_CONFIG" ]
	cmp "$WORK/stolen/config.json" "$WORK/stolen.orig"
	# asked for by the container's own annotation: that one is named
	pod_bundle scoped team-a '{"toposhim.io/cdi.worker": "vendor.com/gpu=0"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/scoped" scoped
	[ "$status" = 1 ]
	[ "$output" = "toposhim: $WORK/scoped/config.json: '/annotations/toposhim.io~1cdi.worker': cdi device 'vendor.com/gpu=0' is not allowed for namespace 'team-a': it needs a pattern matching it in '/policy/namespaces/team-a/devices' of $TOPOSHIM_CONFIG" ]
	cmp "$WORK/scoped/config.json" "$WORK/scoped.orig"
	# a pod annotation io.kubernetes.pod.namespace passed through beside
	# containerd's own key cannot take another namespace's grant
	pod_bundle forged team-a '{"cdi.k8s.io/gpu": "vendor.com/gpu=0", "io.kubernetes.pod.namespace": "ml-train"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/forged" forged
	[ "$status" = 1 ]
	[ "$output" = "toposhim: $WORK/forged/config.json: '/annotations/io.kubernetes.pod.namespace': 'ml-train' is not the pod's namespace 'team-a' (io.kubernetes.cri.sandbox-namespace, set by containerd's CRI)" ]
	cmp "$WORK/forged/config.json" "$WORK/forged.orig"
	# CRI-O's key alone is the namespace too
	NS_KEY=io.kubernetes.pod.namespace pod_bundle crio team-a '{"cdi.k8s.io/gpu": "vendor.com/gpu=0"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/crio" crio
	[ "$status" = 1 ]
	[[ "$output" == *"is not allowed for namespace 'team-a'"* ]] || fail "$output"
	pod_bundle granted ml-train '{"cdi.k8s.io/gpu": "vendor.com/gpu=0"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/granted" granted
	[ "$status" = 0 ] || fail "$output"
	[ "$(jq -c '.process.env' "$WORK/granted/config.json")" = '["GPU=0"]' ]
	# helper-24: a device the policy does not grant is refused as such
	# when resolving it fails too: not with what the resolution found
	# (spec files and their paths, host nodes)
	printf '%s\n' 'cdiVersion: "0.6.0"' 'kind: vendor.com/nic' 'devices:' '  - name: gone' \
		'    containerEdits:' '      deviceNodes:' '        - path: /dev/ts-sec-gone' >"$WORK/cdi/nic.yaml"
	local dev
	for dev in vendor.com/nic=gone vendor.com/gpu=nope; do
		pod_bundle hidden team-a "{\"cdi.k8s.io/x\": \"$dev\"}"
		run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/hidden" hidden
		[ "$status" = 1 ]
		[ "$output" = "toposhim: $WORK/hidden/config.json: '/annotations/cdi.k8s.io~1x': cdi device '$dev' is not allowed for namespace 'team-a': it needs a pattern matching it in '/policy/namespaces/team-a/devices' of $TOPOSHIM_CONFIG" ] ||
			fail "$dev: $output"
		cmp "$WORK/hidden/config.json" "$WORK/hidden.orig"
	done
	# toposhimctl plan says what the create says (helper-25: it told the
	# spec path and the host node)
	run "$TOPOSHIMCTL" plan --bundle "$WORK/hidden"
	[ "$status" = 1 ]
	[ "$output" = "toposhimctl: plan: $WORK/hidden/config.json: '/annotations/cdi.k8s.io~1x': cdi device 'vendor.com/gpu=nope' is not allowed for namespace 'team-a': it needs a pattern matching it in '/policy/namespaces/team-a/devices' of $TOPOSHIM_CONFIG" ] ||
		fail "plan: $output"
	# granted, the same device gets what its resolution found
	pod_bundle missing ml-train '{"cdi.k8s.io/gpu": "vendor.com/gpu=nope"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/missing" missing
	[ "$status" = 1 ]
	[ "$output" = "toposhim: $WORK/missing/config.json: '/annotations/cdi.k8s.io~1gpu': unresolvable CDI devices vendor.com/gpu=nope (no spec file in $WORK/cdi defines it)" ] ||
		fail "$output"
	cmp "$WORK/missing/config.json" "$WORK/missing.orig"
	# and beside a device the engine injected itself (its edits in
	# config.json already), which needs no grant: the resolution's line,
	# not a refusal of that device (helper-25)
	printf '%s\n' 'cdiVersion: "0.6.0"' 'kind: vendor.com/eng' 'devices:' '  - name: x' \
		'    containerEdits:' '      env: [ENG=1]' >"$WORK/cdi/eng.yaml"
	# injected_bundle ANNOTATIONS: ml-train's container "injected", its
	# env holding what the engine injected for vendor.com/eng=x
	injected_bundle() {
		pod_bundle injected ml-train "$1"
		jq '.process.env = ["ENG=1"]' "$WORK/injected.orig" >"$WORK/injected/config.json"
		cp "$WORK/injected/config.json" "$WORK/injected.orig"
	}
	injected_bundle '{"cdi.k8s.io/eng": "vendor.com/eng=x"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/injected" injected
	[ "$status" = 0 ] || fail "the engine's device alone: $output"
	injected_bundle '{"cdi.k8s.io/eng": "vendor.com/eng=x", "cdi.k8s.io/gpu": "vendor.com/gpu=nope"}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/injected" injected2
	[ "$status" = 1 ]
	[ "$output" = "toposhim: $WORK/injected/config.json: '/annotations/cdi.k8s.io~1gpu': unresolvable CDI devices vendor.com/gpu=nope (no spec file in $WORK/cdi defines it)" ] ||
		fail "$output"
	cmp "$WORK/injected/config.json" "$WORK/injected.orig"
	run "$TOPOSHIMCTL" plan --bundle "$WORK/injected"
	[ "$status" = 1 ]
	[ "$output" = "toposhimctl: plan: $WORK/injected/config.json: '/annotations/cdi.k8s.io~1gpu': unresolvable CDI devices vendor.com/gpu=nope (no spec file in $WORK/cdi defines it)" ] ||
		fail "plan: $output"
}

@test "security: a Guaranteed pod gets exclusive cpus by the kubelet's rule, capped at its limit (finding 4)" {
	write_sec_config '"policy": {}'
	# limit 2 = request 2 (shares 2048): two exclusive cpus, no grant
	pod_bundle g team-a '{"toposhim.io/class": "critical"}' '{"quota": 200000, "period": 100000, "shares": 2048}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/g" g
	[ "$status" = 0 ] || fail "$output"
	[ "$(jq -r .linux.resources.cpu.cpus "$WORK/g/config.json")" = 0-1 ]
	# asking for more than the limit is refused
	pod_bundle big team-a '{"toposhim.io/class": "critical", "toposhim.io/cpus": "3"}' '{"quota": 100000, "period": 100000, "shares": 1024}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/big" big
	[ "$status" = 1 ]
	[ "$output" = "toposhim: $WORK/big/config.json: '/annotations/toposhim.io~1cpus': 3 exclusive cpus are more than the container's cpu limit of 1" ]
	cmp "$WORK/big/config.json" "$WORK/big.orig"
	# a Burstable pod (request below the limit) gets none
	pod_bundle burst team-a '{"toposhim.io/class": "critical"}' '{"quota": 200000, "period": 100000, "shares": 1024}'
	run "$TOPOSHIM" --root "$WORK/root" create --bundle "$WORK/burst" burst
	[ "$status" = 1 ]
	[[ "$output" == *"class 'critical' (exclusive cpus) is not allowed for namespace 'team-a'"* ]] || fail "$output"
	[ "$(records)" = "[[\"$WORK/root\",\"g\",\"0-1\"]]" ]
}
