#!/usr/bin/env bats
# Containers of a pod through toposhim and real runc (issue 11): config.json
# files as containerd's CRI writes them for a pod whose annotations ask for
# a CDI device and the critical class, copied into every container of the
# pod (containerd's pod_annotations).  The sandbox takes none of it; each
# app container takes the unscoped requests and its own scoped ones
# (docs/toposhim.1, "Pods: sandboxes and per-container requests").
# The config reserves CPU 0: on this 2-CPU host CPU 1 is the only one that
# can be handed out exclusively.

load containers

SHOW='grep Cpus_allowed_list /proc/self/status | cut -f2; ls /dev/xzero 2>&1; exec sleep 120'

setup() {
	require_root
	require_cmd runc
	require_cmd jq
	[ "$(nproc --all)" -eq 2 ] || skip "these cases are written for a 2-CPU host ($(nproc --all) CPUs)"
	containers_setup
	write_demo_spec
	write_config '"gc_grace_seconds": 1, "placement": {"reserved": {"cpus": "0"}}'
}

teardown() {
	delete_test_containers
	containers_teardown
}

# pod_bundle NAME TYPE [CONTAINER_NAME] [KEY=VALUE...]: a bundle running
# $SHOW with containerd's CRI annotations (TYPE sandbox or container) and
# the pod's annotations KEY=VALUE.
pod_bundle() {
	local dir=$WORK/$1 type=$2 name=${3:-} kv
	shift 3 || shift $#
	make_bundle "$dir" "$(jq -cn --arg c "$SHOW" '["sh","-c",$c]')"
	set_annotation "$dir" io.kubernetes.cri.container-type "$type"
	set_annotation "$dir" io.kubernetes.cri.sandbox-id "0123456789abcdef"
	[ -z "$name" ] || set_annotation "$dir" io.kubernetes.cri.container-name "$name"
	for kv in "$@"; do
		set_annotation "$dir" "${kv%%=*}" "${kv#*=}"
	done
}

create_start() {
	"$TOPOSHIM" create --bundle "$WORK/$1" "$ID-$1" </dev/null \
		>"$WORK/$1.out" 2>"$WORK/$1.err" || { cat "$WORK/$1.err"; return 1; }
	"$TOPOSHIM" start "$ID-$1"
	wait_for_file "$WORK/$1.out"
	sleep 0.2
}

placed() {
	jq -c '{cpus: .linux.resources.cpu.cpus, class: .annotations["toposhim.io/placed-class"],
		cdi: .annotations["toposhim.io/cdi-injected"]}' "$WORK/$1/config.json"
}

POD=(cdi.k8s.io/test=toposhim.test/dev=zero toposhim.io/class=critical)

@test "pods: the sandbox takes neither the pod's device nor its critical class" {
	pod_bundle sandbox sandbox "" "${POD[@]}"
	create_start sandbox
	# the shared pool: every CPU, as no container holds one exclusively
	[ "$(cat "$WORK/sandbox.out")" = "0-1
ls: /dev/xzero: No such file or directory" ]
	[ "$(placed sandbox)" = '{"cpus":"0-1","class":"standard","cdi":null}' ]
	[ ! -s "$WORK/sandbox.err" ]
}

@test "pods: a pod-level critical class without a cpu count fails no sandbox" {
	# what made RunPodSandbox fail: "class 'critical' needs a cpu count"
	pod_bundle sandbox sandbox "" toposhim.io/class=critical toposhim.io/numa=bogus \
		toposhim.io/cpus.Bad_Name=1
	create_start sandbox
	[ "$(placed sandbox)" = '{"cpus":"0-1","class":"standard","cdi":null}' ]
}

@test "pods: after the sandbox, the app container gets the device and CPU 1" {
	pod_bundle sandbox sandbox "" "${POD[@]}" toposhim.io/cpus=1
	create_start sandbox
	pod_bundle app container app "${POD[@]}" toposhim.io/cpus=1
	create_start app
	[ "$(cat "$WORK/app.out")" = "1
/dev/xzero" ]
	[ "$(placed app)" = '{"cpus":"1","class":"critical","cdi":"toposhim.test/dev=zero"}' ]
	[ "$(cpus_allowed_in "$ID-app")" = 1 ]
	# the running sandbox left the shared pool's CPU 1 to the app
	[ "$(cpus_allowed_in "$ID-sandbox")" = 0 ]
}

@test "pods: two containers with scoped requests: worker critical with the device, sidecar shared" {
	local pod=(toposhim.io/class.worker=critical toposhim.io/cpus.worker=1
		toposhim.io/cdi.worker=toposhim.test/dev=zero toposhim.io/class=standard)
	pod_bundle sandbox sandbox "" "${pod[@]}"
	create_start sandbox
	pod_bundle worker container worker "${pod[@]}"
	create_start worker
	pod_bundle sidecar container sidecar "${pod[@]}"
	create_start sidecar
	[ "$(placed worker)" = '{"cpus":"1","class":"critical","cdi":"toposhim.test/dev=zero"}' ]
	[ "$(cat "$WORK/worker.out")" = "1
/dev/xzero" ]
	[ "$(placed sidecar)" = '{"cpus":"0","class":"standard","cdi":null}' ]
	[ "$(cat "$WORK/sidecar.out")" = "0
ls: /dev/xzero: No such file or directory" ]
}

@test "pods: a scoped annotation naming another container is ignored, and said so at debug level" {
	pod_bundle app container app toposhim.io/class.wroker=critical toposhim.io/cpus.wroker=1
	"$TOPOSHIM" --debug create --bundle "$WORK/app" "$ID-app" </dev/null >"$WORK/app.out" 2>"$WORK/app.err"
	grep -Fx "toposhim: debug: container 'app' of a pod (io.kubernetes.cri.container-name)" "$WORK/app.err"
	grep -Fx "toposhim: debug: annotation 'toposhim.io/class.wroker' is another container's request, ignoring" "$WORK/app.err"
	grep -Fx "toposhim: debug: annotation 'toposhim.io/cpus.wroker' is another container's request, ignoring" "$WORK/app.err"
	[ "$(placed app)" = '{"cpus":"0-1","class":"standard","cdi":null}' ]
}

@test "pods: a scoped annotation that is no container name fails the app container, config.json byte-identical" {
	pod_bundle app container app toposhim.io/class.Web_1=critical
	cp "$WORK/app/config.json" "$WORK/app.orig"
	run "$TOPOSHIM" create --bundle "$WORK/app" "$ID-app" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/app/config.json: '/annotations/toposhim.io~1class.Web_1': invalid container name 'Web_1' (a DNS label: lowercase letters, digits and '-')" ]
	cmp "$WORK/app.orig" "$WORK/app/config.json"
}

@test "pods: a bad scoped value names the scoped annotation" {
	pod_bundle app container app toposhim.io/class.app=critical toposhim.io/cpus.app=x
	cp "$WORK/app/config.json" "$WORK/app.orig"
	run "$TOPOSHIM" create --bundle "$WORK/app" "$ID-app" </dev/null
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/app/config.json: '/annotations/toposhim.io~1cpus.app': invalid cpu count 'x'" ]
	cmp "$WORK/app.orig" "$WORK/app/config.json"
}
