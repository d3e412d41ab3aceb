#!/usr/bin/env bats
# contrib/docker/daemon.json and daemon-default-runtime.json with Debian's
# docker.io 20.10, started by this file: its own containerd (socket, root,
# state), dockerd on that containerd with its own socket, data root and
# exec root, no bridge, iptables or forwarding (nothing of the host's
# network is touched), env -i; stopped, and everything removed, at the end
# (by a watchdog if bats dies).  The daemon.json copies differ from the
# contrib files in the runtime path, a wrapper that records each call and
# carries this test's toposhim config (what /etc/toposhim/config.json is on
# a node), and in dockerd's trust key, kept out of /etc/docker.  The image is a busybox rootfs made with `docker import`.
#
# Docker 20.10 cannot pass annotations (docker run --annotation needs API
# 1.43), so the routes tested are the ones that work there: CDI devices
# through TOPOSHIM_CDI_DEVICES in the container's environment (config
# "cdi": {"env_requests": true}), and the critical class from an integer
# CPU limit equal to the request, `--cpus N --cpu-shares N*1024`.

load containers
bats_load_library bats-support
bats_load_library bats-assert

CONTRIB="${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}/contrib/docker"
IMAGE=toposhim-test/busybox:1

# start_dockerd NAME CONFIG: a dockerd with the daemon.json CONFIG (runtime
# path replaced, and the trust key that dockerd 20.10 writes, by default
# to /etc/docker/key.json, kept in $DOCK/NAME: the only option without a
# command-line flag) on this file's containerd, its state in $DOCK/NAME and
# its containers in containerd namespace NAME.  (/run/docker/plugins, the
# plugin socket dir, is fixed: dockerd makes it, empty.)
start_dockerd() {
	local name=$1 d=$DOCK/$1 _
	mkdir -p "$d"
	sed "s|\"/usr/bin/toposhim\"|\"$DOCK/toposhim-wrapper\"|" "$2" |
		jq --arg key "$d/key.json" '. + {"deprecated-key-path": $key}' >"$d/daemon.json"
	start_daemon "$d/dockerd.log" env -i PATH="$TS_DAEMON_PATH" dockerd \
		--config-file "$d/daemon.json" --data-root "$d/data" --exec-root "$d/exec" \
		--pidfile "$d/dockerd.pid" -H "unix://$d/docker.sock" \
		--containerd "$DOCK/containerd.sock" --containerd-namespace "$name" \
		--containerd-plugins-namespace "$name-plugins" --bridge none --iptables=false \
		--ip6tables=false --ip-masq=false --ip-forward=false --storage-driver vfs \
		--exec-opt native.cgroupdriver=cgroupfs
	for _ in $(seq 150); do
		docker -H "unix://$d/docker.sock" version >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "dockerd $name did not start: $(tail -n 3 "$d/dockerd.log" | tr '\n' ' ')"
	return 1
}

# stop_dockerd NAME: remove its containers, TERM it and wait (KILL after 15 s).
stop_dockerd() {
	local d=$DOCK/$1 pid i=0
	[ -f "$d/dockerd.pid" ] || return 0
	pid=$(cat "$d/dockerd.pid")
	docker -H "unix://$d/docker.sock" ps -aq 2>/dev/null |
		xargs -r docker -H "unix://$d/docker.sock" rm -f >/dev/null 2>&1
	kill -TERM "$pid" 2>/dev/null
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -KILL "$pid" 2>/dev/null || true
	rm -f "$d/dockerd.pid"
}

setup_file() {
	DOCK=$(mktemp -d /tmp/ts-engine-docker.XXXXXX)
	export DOCK
	chmod 0755 "$DOCK"
	[ -e /run/docker ] || : >"$DOCK.made-run-docker"
	if [ "$(id -u)" -ne 0 ]; then
		echo "skip needs root to run dockerd (uid $(id -u))" >"$DOCK/info"
		return 0
	fi
	if ! command -v dockerd >/dev/null || ! command -v containerd >/dev/null; then
		echo "skip docker.io is not installed (contrib/setup-debian.sh installs it)" >"$DOCK/info"
		return 0
	fi
	cat >"$DOCK/config.toml" <<CONF
version = 2
root = "$DOCK/root"
state = "$DOCK/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$DOCK/containerd.sock"
[ttrpc]
  address = "$DOCK/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$DOCK/opt"
CONF
	write_containerd_stop "$DOCK"
	mv "$DOCK/stop" "$DOCK/stop-containerd"
	# dockerds first, then containerd (which unmounts and removes DOCK)
	cat >"$DOCK/stop" <<STOP
#!/bin/sh
for p in "$DOCK"/*/dockerd.pid; do
	[ -f "\$p" ] || continue
	d=\$(dirname "\$p")
	docker -H "unix://\$d/docker.sock" ps -aq 2>/dev/null | xargs -r docker -H "unix://\$d/docker.sock" rm -f >/dev/null 2>&1
	pid=\$(cat "\$p"); kill -TERM "\$pid" 2>/dev/null
	i=0; while kill -0 "\$pid" 2>/dev/null && [ \$i -lt 150 ]; do sleep 0.1; i=\$((i + 1)); done
	kill -KILL "\$pid" 2>/dev/null
done
exec sh "$DOCK/stop-containerd"
STOP
	trap 'sh "$DOCK/stop"; exit 143' TERM
	start_daemon "$DOCK/containerd.log" env -i PATH="$TS_DAEMON_PATH" \
		sh -c 'echo $$ >"$1/pid"; exec containerd --config "$1/config.toml"' sh "$DOCK"
	start_daemon /dev/null env -i PATH="$TS_DAEMON_PATH" sh -c \
		'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
		[ ! -d "$2" ] || sh "$2/stop"' sh "$$" "$DOCK"
	for _ in $(seq 100); do
		[ -S "$DOCK/containerd.sock" ] && ctr --address "$DOCK/containerd.sock" version >/dev/null 2>&1 && break
		sleep 0.1
	done
	cat >"$DOCK/toposhim-wrapper" <<WRAP
#!/bin/sh
echo "\$*" >>"$DOCK/calls"
export TOPOSHIM_CONFIG="$DOCK/toposhim.json"
exec "$TOPOSHIM" "\$@"
WRAP
	chmod 0755 "$DOCK/toposhim-wrapper"
	local why
	if ! why=$(start_dockerd runtimes "$CONTRIB/daemon.json"); then
		echo "skip $why" >"$DOCK/info"
		return 0
	fi
	make_rootfs "$DOCK/rootfs"
	tar -C "$DOCK/rootfs" -c . | docker -H "unix://$DOCK/runtimes/docker.sock" import - "$IMAGE" \
		>/dev/null
	echo ok >"$DOCK/info"
}

teardown_file() {
	[ -f "$DOCK/stop" ] && sh "$DOCK/stop"
	# dockerd's fixed plugin socket dir, when this file's dockerd made it
	if [ -f "$DOCK.made-run-docker" ]; then
		rmdir /run/docker/plugins /run/docker 2>/dev/null || true
		rm -f "$DOCK.made-run-docker"
	fi
	rm -rf "$DOCK"
}

# same_but_path CONTRIB COPY: COPY is the contrib file but for the runtime
# path (the wrapper) and the trust key's path (start_dockerd).
same_but_path() {
	run jq -r '.runtimes.toposhim.path, .["deprecated-key-path"]' "$2"
	assert_output "$DOCK/toposhim-wrapper"$'\n'"$(dirname "$2")/key.json"
	run diff <(jq -S . "$1") \
		<(jq -S '.runtimes.toposhim.path = "/usr/bin/toposhim" | del(.["deprecated-key-path"])' "$2")
	assert_success
	assert_output ""
}

setup() {
	local info
	info=$(cat "$DOCK/info")
	[ "${info%% *}" != skip ] || skip "${info#skip }"
	export DOCKER_HOST="unix://$DOCK/runtimes/docker.sock"
	containers_setup
	write_demo_spec
	# the one route for CDI devices on Docker 20.10: the container's env
	write_config '"placement": {}'
	jq '.cdi.env_requests = true' "$WORK/toposhim.json" >"$DOCK/toposhim.json"
	: >"$DOCK/calls"
}

teardown() {
	docker rm -f "$ID" >/dev/null 2>&1 || true
	containers_teardown
}

@test "docker: the daemon.json copy is contrib's but for the runtime and trust key paths" {
	same_but_path "$CONTRIB/daemon.json" "$DOCK/runtimes/daemon.json"
	run docker info --format '{{json .Runtimes.toposhim}} {{.DefaultRuntime}}'
	assert_output "{\"path\":\"$DOCK/toposhim-wrapper\"} runc"
}

@test "docker run --runtime toposhim -e TOPOSHIM_CDI_DEVICES: the device is injected" {
	run docker run --rm --name "$ID" --runtime toposhim --network none \
		-e TOPOSHIM_CDI_DEVICES=toposhim.test/dev=zero "$IMAGE" \
		sh -c 'stat -c "%F %t:%T" /dev/xzero; echo "XZERO=$XZERO"; cat /etc/mounted.txt'
	assert_success
	assert_output $'character special file 1:5\nXZERO=present\ntoposhim test mount'
	# through the runc v2 shim, with the JSON log
	run grep -c '^--root [^ ]*/exec/runtime-runc/runtimes --log [^ ]*/log.json --log-format json create --bundle ' "$DOCK/calls"
	assert_output 1
}

@test "docker run --cpus 1 --cpu-shares 1024: critical, one exclusive CPU" {
	docker run -d --name "$ID" --runtime toposhim --network none --cpus 1 --cpu-shares 1024 \
		"$IMAGE" sleep 1000 >/dev/null
	local cid cpus
	cid=$(docker inspect --format '{{.Id}}' "$ID")
	# the store learns the init from runc's state (no hook records it)
	"$TOPOSHIMCTL" alloc list >/dev/null
	run jq -c --arg id "$cid" '[.allocations[] | select(.container_id == $id) |
		{class, cpus, state}]' "$WORK/state/allocations.json"
	assert_output --regexp '^\[\{"class":"critical","cpus":"[0-9]+","state":"created"\}\]$'
	cpus=$(jq -r --arg id "$cid" '.allocations[] | select(.container_id == $id) | .cpus' \
		"$WORK/state/allocations.json")
	# the container runs on that CPU, and a shared one on the others
	run docker exec "$ID" grep Cpus_allowed_list /proc/self/status
	assert_output "Cpus_allowed_list:	$cpus"
	run docker run --rm --runtime toposhim --network none "$IMAGE" \
		grep Cpus_allowed_list /proc/self/status
	assert_success
	refute_output --regexp "[^0-9]$cpus(\$|[^0-9])"
	docker rm -f "$ID" >/dev/null
	# the poststop hook gave the CPU back
	run jq -c '.allocations' "$WORK/state/allocations.json"
	assert_output '[]'
}

@test "docker run --cpus 1 without --cpu-shares 1024: standard, the shared pool" {
	docker run -d --name "$ID" --runtime toposhim --network none --cpus 1 "$IMAGE" sleep 1000 \
		>/dev/null
	run jq -r '.allocations[0].class' "$WORK/state/allocations.json"
	assert_output standard
}

@test "docker: an unknown device fails the run with toposhim's message" {
	run docker run --rm --name "$ID" --runtime toposhim --network none \
		-e TOPOSHIM_CDI_DEVICES=toposhim.test/dev=nope "$IMAGE" true
	[ "$status" -eq 125 ]
	[[ "${lines[0]}" == "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: toposhim: /"*"/config.json: '/process/env/"[0-9]"': unresolvable CDI devices toposhim.test/dev=nope (no spec file in $WORK/cdi defines it): unknown" ]] ||
		fail "output: $output"
}

@test "docker: daemon-default-runtime.json makes toposhim the default, no --runtime needed" {
	start_dockerd default "$CONTRIB/daemon-default-runtime.json"
	export DOCKER_HOST="unix://$DOCK/default/docker.sock"
	same_but_path "$CONTRIB/daemon-default-runtime.json" "$DOCK/default/daemon.json"
	run docker info --format '{{.DefaultRuntime}}'
	assert_output toposhim
	tar -C "$DOCK/rootfs" -c . | docker import - "$IMAGE" >/dev/null
	run docker run --rm --network none -e TOPOSHIM_CDI_DEVICES=toposhim.test/dev=zero "$IMAGE" \
		sh -c 'echo "XZERO=$XZERO"'
	assert_success
	assert_output "XZERO=present"
	stop_dockerd default
}
