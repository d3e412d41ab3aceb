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
	rm_parent
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

# placed NAME: the cpus and class toposhim gave container NAME and the CDI
# devices it injected (null: none), from its placement file; for a plain
# container (no placement file, no cpus in its config.json, not recorded)
# its journal entry, marked "plain".
placed() {
	local cdi=null
	[ ! -e "$WORK/$1/toposhim-cdi.json" ] || return 1 # the file of before
	if [ -e "$WORK/$1/toposhim-placement.json" ]; then
		jq -c '{cpus: .cpus, class: .class, cdi: (.devices // null | if . then join(",") else null end)}' \
			"$WORK/$1/toposhim-placement.json"
		return
	fi
	[ "$(jq -c '.linux.resources.cpu.cpus // null' "$WORK/$1/config.json")" = null ] || return 1
	[ "$(alloc_json | jq --arg id "$ID-$1" '[.[] | select(.id == $id)] | length')" = 0 ] || return 1
	plain_entry "$ID-$1" | jq -c --argjson cdi "$cdi" '{cpus, class, cdi: $cdi, plain: true}'
}

POD=(cdi.k8s.io/test=toposhim.test/dev=zero toposhim.io/class=critical)

@test "pods: the sandbox takes neither the pod's device nor its critical class" {
	pod_bundle sandbox sandbox "" "${POD[@]}"
	create_start sandbox
	# the shared pool: every CPU, as no container holds one exclusively
	[ "$(cat "$WORK/sandbox.out")" = "0-1
ls: /dev/xzero: No such file or directory" ]
	[ "$(placed sandbox)" = '{"cpus":"0-1","class":"standard","cdi":null,"plain":true}' ]
	[ ! -s "$WORK/sandbox.err" ]
}

@test "pods: a pod-level critical class without a cpu count fails no sandbox" {
	# what made RunPodSandbox fail: "class 'critical' needs a cpu count"
	pod_bundle sandbox sandbox "" toposhim.io/class=critical toposhim.io/numa=bogus \
		toposhim.io/cpus.Bad_Name=1
	create_start sandbox
	[ "$(placed sandbox)" = '{"cpus":"0-1","class":"standard","cdi":null,"plain":true}' ]
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
	[ "$(placed app)" = '{"cpus":"0-1","class":"standard","cdi":null,"plain":true}' ]
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

@test "pods: podman's pod infra container (no ContainerType, /catatonit -P) takes none of the requests" {
	# what podman 4.3.1 writes for a pod's infra container (measured):
	# io.container.manager=libpod, no io.kubernetes.cri-o.ContainerType
	make_bundle "$WORK/infra" '["/catatonit","-P"]'
	printf '#!/bin/sh\ngrep Cpus_allowed_list /proc/self/status | cut -f2\nls /dev/xzero 2>&1\nexec sleep 120\n' >"$WORK/infra/rootfs/catatonit"
	chmod 0755 "$WORK/infra/rootfs/catatonit"
	set_annotation "$WORK/infra" io.container.manager libpod
	set_annotation "$WORK/infra" cdi.k8s.io/test toposhim.test/dev=zero
	set_annotation "$WORK/infra" toposhim.io/class critical
	create_start infra
	[ "$(cat "$WORK/infra.out")" = "0-1
ls: /dev/xzero: No such file or directory" ]
	[ "$(placed infra)" = '{"cpus":"0-1","class":"standard","cdi":null,"plain":true}' ]
	# the same config with ContainerType "container" (podman's app
	# containers of a pod) is an app container: it takes them
	make_bundle "$WORK/app" '["/catatonit","-P"]'
	cp "$WORK/infra/rootfs/catatonit" "$WORK/app/rootfs/catatonit"
	set_annotation "$WORK/app" io.container.manager libpod
	set_annotation "$WORK/app" io.kubernetes.cri-o.ContainerType container
	set_annotation "$WORK/app" cdi.k8s.io/test toposhim.test/dev=zero
	set_annotation "$WORK/app" toposhim.io/class critical
	set_annotation "$WORK/app" toposhim.io/cpus 1
	create_start app
	[ "$(placed app)" = '{"cpus":"1","class":"critical","cdi":"toposhim.test/dev=zero"}' ]
	[ "$(cat "$WORK/app.out")" = "1
/dev/xzero" ]
}

# A kubepods-like cgroup parent narrowed to CPUS (what kubelet's reserved
# CPUs, a systemd slice or an operator do), in the v1 cpuset hierarchy of
# this hybrid host (ENVIRONMENT.md); PARENT names it, removed in teardown
# (rm_parent) with whatever runc created below it.
make_parent() {
	[ -d /sys/fs/cgroup/cpuset ] || skip "no cgroup v1 cpuset hierarchy at /sys/fs/cgroup/cpuset"
	PARENT=ts-kubepods-${ID##*-}-$$
	mkdir /sys/fs/cgroup/cpuset/$PARENT
	cat /sys/fs/cgroup/cpuset/cpuset.mems >/sys/fs/cgroup/cpuset/$PARENT/cpuset.mems
	echo "$1" >/sys/fs/cgroup/cpuset/$PARENT/cpuset.cpus
}

rm_parent() {
	local c
	[ -n "${PARENT:-}" ] || return 0
	for c in /sys/fs/cgroup/*/"$PARENT"; do
		[ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	return 0
}

parent_bundle() {
	pod_bundle "$1" container "$1" "${@:3}"
	jq --arg p "$2" '.linux.cgroupsPath = $p' "$WORK/$1/config.json" >"$WORK/$1.json"
	mv "$WORK/$1.json" "$WORK/$1/config.json"
}

@test "pods: a parent narrowed to CPU 1: a standard container runs there with real runc" {
	make_parent 1
	# the pod's cgroup does not exist yet: the nearest existing ancestor counts
	parent_bundle app "/$PARENT/burstable/pod1/$ID-app"
	create_start app || { rm_parent; false; }
	local out cfg
	out=$(cat "$WORK/app.out")
	cfg=$(placed app)
	delete_test_containers
	rm_parent
	[ "$out" = "1
ls: /dev/xzero: No such file or directory" ]
	# no request on a node that holds nothing: left as it is, it runs on
	# its parent's cpus as it would without toposhim
	[ "$cfg" = '{"cpus":"0-1","class":"standard","cdi":null,"plain":true}' ]
}

@test "pods: a parent narrowed to CPU 1: a class-annotated standard container gets cpus 1 written" {
	make_parent 1
	parent_bundle app "/$PARENT/burstable/pod1/$ID-app" toposhim.io/class=standard
	create_start app || { rm_parent; false; }
	local out cfg cpus
	out=$(cat "$WORK/app.out")
	cfg=$(placed app)
	cpus=$(jq -r .linux.resources.cpu.cpus "$WORK/app/config.json")
	delete_test_containers
	rm_parent
	[ "$out" = "1
ls: /dev/xzero: No such file or directory" ]
	[ "$cfg" = '{"cpus":"1","class":"standard","cdi":null}' ]
	[ "$cpus" = 1 ]
}

# helper-20: an exclusive container that takes the last CPU a parent
# gives its shared containers leaves them on it: the create says so for a
# shared container created there, the resize of the running ones said
# nothing.  Now its line is in the create's stderr and in resizes.log.
@test "pods: a critical container takes a narrowed parent's last CPU: the resize of its shared neighbour warns" {
	write_config '"gc_grace_seconds": 1'
	make_parent 1
	parent_bundle app "/$PARENT/pod1/$ID-app"
	create_start app || { delete_test_containers; rm_parent; false; }
	parent_bundle crit "/$PARENT/pod1/$ID-crit" toposhim.io/class=critical toposhim.io/cpus=1
	"$TOPOSHIM" create --bundle "$WORK/crit" "$ID-crit" </dev/null >"$WORK/crit.out" \
		2>"$WORK/crit.err" || { cat "$WORK/crit.err"; delete_test_containers; rm_parent; false; }
	local app_cpus log err
	app_cpus=$(cpus_allowed_in "$ID-app")
	log=$(cat "$WORK/state/resizes.log")
	err=$(cat "$WORK/crit.err")
	delete_test_containers
	rm_parent
	[ "$app_cpus" = 1 ]
	line="container '$ID-app': the shared pool (cpus 0) lies outside cgroup parent '/$PARENT/pod1' (cpuset 1): running on the parent's cpus"
	[ "$err" = "toposhim: warning: $line" ] || { echo "$err"; false; }
	[[ "$log" =~ ^[0-9-]+T[0-9:]+Z\ pid\ [0-9]+:\ warning:\ "$line"$ ]] || { echo "$log"; false; }
}

@test "pods: exclusive cpus outside the parent are refused in one line, config.json byte-identical" {
	# CPU 0 is reserved, so the parent narrowed to CPU 0 holds no exclusive CPU
	make_parent 0
	parent_bundle app "/$PARENT/pod1/$ID-app" toposhim.io/class=critical toposhim.io/cpus=1
	cp "$WORK/app/config.json" "$WORK/app.orig"
	run "$TOPOSHIM" create --bundle "$WORK/app" "$ID-app" </dev/null
	rm_parent
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/app/config.json: '/linux/cgroupsPath': cgroup parent '/$PARENT/pod1' (not there yet: '/$PARENT', cpuset 0) cannot hold 1 exclusive cpus (free in it: none)" ]
	cmp "$WORK/app.orig" "$WORK/app/config.json"
}

@test "pods: a parent whose exclusive cpu another container holds names that container, not the parent" {
	# the parent holds CPU 1 (CPU 0 is reserved); a critical container of
	# the pod takes it, the next one finds it held: the parent is not why
	make_parent 0-1
	parent_bundle app "/$PARENT/pod1/$ID-app" toposhim.io/class=critical toposhim.io/cpus=1
	create_start app || { delete_test_containers; rm_parent; false; }
	parent_bundle app2 "/$PARENT/pod1/$ID-app2" toposhim.io/class=critical toposhim.io/cpus=1
	cp "$WORK/app2/config.json" "$WORK/app2.orig"
	cp "$WORK/state/allocations.json" "$WORK/allocations.orig"
	run "$TOPOSHIM" create --bundle "$WORK/app2" "$ID-app2" </dev/null
	delete_test_containers
	rm_parent
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/app2/config.json: '/annotations/toposhim.io~1cpus': not enough cpus available to satisfy request: requested=1, available=0: cpus 1 of cgroup parent '/$PARENT/pod1' (cpuset 0-1) held by container '$ID-app'" ]
	cmp "$WORK/app2.orig" "$WORK/app2/config.json"
	cmp "$WORK/allocations.orig" "$WORK/state/allocations.json"
}

@test "pods: a systemd-form cgroupsPath names its slice as the parent" {
	make_parent 0
	local slice="${PARENT//-/_}"
	# "<slice>:prefix:name" with the slice at the top level: the parent is /<slice>
	mkdir "/sys/fs/cgroup/cpuset/$slice.slice"
	cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$slice.slice/cpuset.mems"
	echo 0 >"/sys/fs/cgroup/cpuset/$slice.slice/cpuset.cpus"
	parent_bundle app "$slice.slice:cri-containerd:$ID-app" toposhim.io/class=critical toposhim.io/cpus=1
	run "$TOPOSHIM" --systemd-cgroup create --bundle "$WORK/app" "$ID-app" </dev/null
	rmdir "/sys/fs/cgroup/cpuset/$slice.slice"
	rm_parent
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/app/config.json: '/linux/cgroupsPath': cgroup parent '/$slice.slice' (cpuset 0) cannot hold 1 exclusive cpus (free in it: none)" ]
}

@test "pods: a live resize keeps a shared container inside its narrowed parent (real runc)" {
	# kubepods narrowed to CPU 0; the shared pool is 0-1
	make_parent 0
	parent_bundle app "/$PARENT/pod1/$ID-app"
	create_start app || { rm_parent; false; }
	# a critical container outside the parent takes CPU 1 (the pool: 0),
	# then is deleted (the pool: 0-1 again): app must stay on CPU 0, the
	# parent's only cpu.  Before: the grow wrote 0-1 and runc update failed
	pod_bundle crit container crit toposhim.io/class=critical toposhim.io/cpus=1
	local grown rec cg out
	create_start crit || { delete_test_containers; rm_parent; false; }
	runc kill "$ID-crit" KILL
	grown=$("$TOPOSHIM" delete --force "$ID-crit" 2>&1)
	cg=$(cat "/sys/fs/cgroup/cpuset/$PARENT/pod1/$ID-app/cpuset.cpus")
	out=$(cpus_allowed_in "$ID-app")
	rec=$(jq -c '[.allocations[] | {id: .container_id, cpus: .cpus, class: .class}]' \
		"$WORK/state/allocations.json")
	delete_test_containers
	rm_parent
	[ "$grown" = "" ] || { echo "delete said: $grown" >&2; false; }
	[ "$cg" = "0" ] || { echo "app's cgroup: cpuset.cpus $cg" >&2; false; }
	[ "$out" = "0" ] || { echo "app's Cpus_allowed_list: $out" >&2; false; }
	[ "$rec" = "[{\"id\":\"$ID-app\",\"cpus\":\"0\",\"class\":\"standard\"}]" ] || { echo "allocations: $rec" >&2; false; }
}
