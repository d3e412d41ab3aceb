#!/bin/sh
# install.sh - put toposhim on a Kubernetes node and take it off again; run
# by the DaemonSet of contrib/kubernetes/daemonset.yaml, with the node's
# root file system mounted at $HOST_ROOT.
#
#   install.sh install    copy the programs and /etc/toposhim/config.json
#                         onto the host, add the "toposhim" runtime handler
#                         to containerd's config, restart containerd only
#                         when that config changed, label the node
#                         toposhim.io/installed=true
#   install.sh uninstall  undo all of it: the label first (no new pods are
#                         sent here), containerd's config as it was (and a
#                         restart), the configuration, and the programs
#                         unless allocations are still live (running pods
#                         of the toposhim handler need them to be deleted)
#   install.sh nrt-loop   publish `toposhimctl nrt` with kubectl apply every
#                         $NRT_INTERVAL seconds, forever (the main container)
#   install.sh nrt-once   publish it once
#
# containerd's config (HOST_ROOT/etc/containerd/config.toml):
#   version 3 (containerd 2.x): the handler goes in conf.d/toposhim.toml
#     (contrib/containerd/conf.d/toposhim-v3.toml) and imports gains
#     "/etc/containerd/conf.d/*.toml" when it lacks it;
#   version 2, or no file (containerd 1.6, 1.7): the handler's tables are
#     added to config.toml between "# BEGIN toposhim" and "# END toposhim"
#     (from contrib/containerd/config-v2.toml), with the "runc" table when
#     the file has none (declaring one handler drops the default runc), and
#     SystemdCgroup = true when the runc handler has it (the kubelet's cgroup
#     driver).  A drop-in cannot be used there: before containerd 2.0 it
#     replaces the main config's whole CRI section.
# What install changed is recorded in HOST_ROOT/var/lib/toposhim-install,
# which uninstall reads; install twice changes nothing the second time.
#
# Environment (defaults in brackets):
#   HOST_ROOT     the host's root [/host]
#   SRC           the image's files: bin/, libexec/ (toposhim/toposhim-core and
#                 toposhim/plugins/), lib/toposhim/, containerd/ [/opt/toposhim]
#   CONFIG_SRC    the config.json to install (the ConfigMap) [/etc/toposhim-config/config.json]
#   PREFIX        where the programs go on the host [/usr/local]
#   NODE_NAME     this node (the DaemonSet sets it from spec.nodeName)
#   KUBECTL       kubectl [kubectl]
#   RESTART_CONTAINERD  the command that restarts the host's containerd
#                 [nsenter --target 1 --mount --uts --ipc --net --pid -- systemctl restart containerd]
#   NRT_INTERVAL  seconds between two publications [60]
set -eu

HOST_ROOT=${HOST_ROOT:-/host}
SRC=${SRC:-/opt/toposhim}
CONFIG_SRC=${CONFIG_SRC:-/etc/toposhim-config/config.json}
PREFIX=${PREFIX:-/usr/local}
KUBECTL=${KUBECTL:-kubectl}
RESTART_CONTAINERD=${RESTART_CONTAINERD:-nsenter --target 1 --mount --uts --ipc --net --pid -- systemctl restart containerd}
NRT_INTERVAL=${NRT_INTERVAL:-60}
LABEL=toposhim.io/installed

ctrd_dir=$HOST_ROOT/etc/containerd
ctrd_conf=$ctrd_dir/config.toml
dropin=$ctrd_dir/conf.d/toposhim.toml
state=$HOST_ROOT/var/lib/toposhim-install
binary=$PREFIX/bin/toposhim

log() { echo "toposhim-install: $*"; }
die() {
	echo "toposhim-install: $*" >&2
	exit 1
}

need_node() {
	[ -n "${NODE_NAME:-}" ] || die "NODE_NAME is not set (the DaemonSet sets it from spec.nodeName)"
}

# put SRC_FILE DEST MODE: copy atomically when DEST differs; record DEST.
put() {
	mkdir -p "$(dirname "$2")"
	if ! cmp -s "$1" "$2"; then
		cp "$1" "$2.toposhim-new"
		chmod "$3" "$2.toposhim-new"
		mv -f "$2.toposhim-new" "$2"
		log "installed ${2#"$HOST_ROOT"}"
	fi
	grep -qxF "$2" "$state/files" 2>/dev/null || echo "$2" >>"$state/files"
}

# The toposhim tables of config-v2.toml, BinaryName the installed binary;
# SystemdCgroup when the runc handler of the host's config has it.
v2_block() {
	echo "# BEGIN toposhim (contrib/kubernetes/install.sh; removed by its uninstall)"
	if ! grep -q '^ *\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.runc\]' "$1" 2>/dev/null; then
		sed -n '/^ *\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.runc\]/,/^ *runtime_type/p' \
			"$SRC/containerd/config-v2.toml"
	fi
	sed -n '/^ *\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.toposhim\]/,$p' \
		"$SRC/containerd/config-v2.toml" | grep -v '^ *#' |
		sed "s|^\( *BinaryName = \).*|\1\"$binary\"|"
	if sed -n '/runtimes\.runc\.options\]/,/^ *\[/p' "$1" 2>/dev/null | grep -q '^ *SystemdCgroup *= *true'; then
		echo "      SystemdCgroup = true"
	fi
	echo "# END toposhim"
}

# The host's config with the handler: version 3 gets imports (the drop-in
# is written by configure_containerd), version 2 or none the block.
new_config() {
	if [ -f "$ctrd_conf" ] && grep -q '^ *version *= *3' "$ctrd_conf"; then
		if grep -q '^ *imports *=.*"/etc/containerd/conf\.d/\*\.toml"' "$ctrd_conf"; then
			cat "$ctrd_conf"
		elif grep -q '^ *imports *= *\[.*\]' "$ctrd_conf"; then
			sed 's|^\( *imports *= *\[\)\(.*\)\]|\1\2, "/etc/containerd/conf.d/*.toml"]|; s|\[, |[|' "$ctrd_conf"
		elif grep -q '^ *imports *=' "$ctrd_conf"; then
			die "${ctrd_conf#"$HOST_ROOT"}: 'imports' spans lines: add \"/etc/containerd/conf.d/*.toml\" to it by hand"
		else
			sed '/^ *version *= *3/a imports = ["/etc/containerd/conf.d/*.toml"]' "$ctrd_conf"
		fi
		return
	fi
	if [ -f "$ctrd_conf" ]; then
		# without an earlier install's block, which v2_block must not see
		sed '/^# BEGIN toposhim/,/^# END toposhim/d' "$ctrd_conf" >"$state/containerd.stripped"
		cat "$state/containerd.stripped"
		[ -z "$(tail -c 1 "$state/containerd.stripped")" ] || echo
	else
		echo "version = 2"
		: >"$state/containerd.stripped"
	fi
	v2_block "$state/containerd.stripped"
	rm -f "$state/containerd.stripped"
}

configure_containerd() {
	changed=0
	mkdir -p "$ctrd_dir"
	if [ ! -f "$state/containerd.orig" ] && [ ! -f "$state/containerd.absent" ]; then
		if [ -f "$ctrd_conf" ]; then
			cp -p "$ctrd_conf" "$state/containerd.orig"
		else
			: >"$state/containerd.absent"
		fi
	fi
	new_config >"$state/containerd.new"
	if ! cmp -s "$state/containerd.new" "$ctrd_conf"; then
		cp "$state/containerd.new" "$ctrd_conf.toposhim-new"
		mv -f "$ctrd_conf.toposhim-new" "$ctrd_conf"
		log "toposhim handler added to ${ctrd_conf#"$HOST_ROOT"}"
		changed=1
	fi
	cp "$ctrd_conf" "$state/containerd.installed"
	rm -f "$state/containerd.new"
	if grep -q '^ *version *= *3' "$ctrd_conf"; then
		mkdir -p "$(dirname "$dropin")"
		sed "s|^\( *BinaryName = \).*|\1'$binary'|" "$SRC/containerd/conf.d/toposhim-v3.toml" \
			>"$state/dropin.new"
		if ! cmp -s "$state/dropin.new" "$dropin"; then
			mv -f "$state/dropin.new" "$dropin"
			log "installed ${dropin#"$HOST_ROOT"}"
			changed=1
		fi
		rm -f "$state/dropin.new"
	fi
	if [ "$changed" = 1 ]; then
		log "restarting containerd: $RESTART_CONTAINERD"
		sh -c "$RESTART_CONTAINERD"
	else
		log "containerd's config is unchanged: no restart"
	fi
}

cmd_install() {
	need_node
	[ -x "$SRC/bin/toposhim" ] || die "$SRC/bin/toposhim: not found"
	[ -f "$CONFIG_SRC" ] || die "$CONFIG_SRC: not found (the ConfigMap toposhim-config)"
	mkdir -p "$state"
	for f in toposhim toposhimctl toposhim-cdi-hook; do
		put "$SRC/bin/$f" "$HOST_ROOT$PREFIX/bin/$f" 0755
	done
	# the core the front runs: PREFIX/bin/toposhim runs
	# PREFIX/libexec/toposhim/toposhim-core (src/cli/core.h)
	[ -x "$SRC/libexec/toposhim/toposhim-core" ] ||
		die "$SRC/libexec/toposhim/toposhim-core: not found"
	put "$SRC/libexec/toposhim/toposhim-core" "$HOST_ROOT$PREFIX/libexec/toposhim/toposhim-core" 0755
	for f in "$SRC"/libexec/toposhim/plugins/*; do
		[ -f "$f" ] || continue
		put "$f" "$HOST_ROOT$PREFIX/libexec/toposhim/plugins/${f##*/}" 0755
	done
	# the image's shared libraries the programs find through their RPATH
	# (contrib/Containerfile), for hosts that lack them
	for f in "$SRC"/lib/toposhim/*; do
		[ -f "$f" ] || continue
		put "$f" "$HOST_ROOT$PREFIX/lib/toposhim/${f##*/}" 0644
	done
	if [ -f "$HOST_ROOT/etc/toposhim/config.json" ] && [ ! -f "$state/config.orig" ] &&
		! grep -qxF "$HOST_ROOT/etc/toposhim/config.json" "$state/files" 2>/dev/null; then
		cp -p "$HOST_ROOT/etc/toposhim/config.json" "$state/config.orig"
	fi
	put "$CONFIG_SRC" "$HOST_ROOT/etc/toposhim/config.json" 0644
	configure_containerd
	"$KUBECTL" label node "$NODE_NAME" "$LABEL=true" --overwrite
	log "done: node $NODE_NAME runs the toposhim handler"
}

# Live allocations in the host's state dir (pods still using toposhim).
live_allocations() {
	list=$(TOPOSHIM_CONFIG="$HOST_ROOT/etc/toposhim/config.json" \
		TOPOSHIM_STATE_DIR="$HOST_ROOT/run/toposhim" \
		"$SRC/bin/toposhimctl" alloc list 2>/dev/null) || return 1
	[ "$(echo "$list" | wc -l)" -gt 1 ]
}

cmd_uninstall() {
	need_node
	[ -d "$state" ] || {
		log "nothing to undo: no ${state#"$HOST_ROOT"}"
		return 0
	}
	"$KUBECTL" label node "$NODE_NAME" "$LABEL-" || true
	changed=0
	if [ -f "$dropin" ]; then
		rm -f "$dropin"
		changed=1
	fi
	if [ -f "$state/containerd.installed" ] && cmp -s "$state/containerd.installed" "$ctrd_conf"; then
		if [ -f "$state/containerd.orig" ]; then
			cp -p "$state/containerd.orig" "$ctrd_conf"
		else
			rm -f "$ctrd_conf"
		fi
		changed=1
	elif [ -f "$ctrd_conf" ] && grep -q '^# BEGIN toposhim' "$ctrd_conf"; then
		# edited since: take out the block only
		sed '/^# BEGIN toposhim/,/^# END toposhim/d' "$ctrd_conf" >"$ctrd_conf.toposhim-new"
		mv -f "$ctrd_conf.toposhim-new" "$ctrd_conf"
		log "${ctrd_conf#"$HOST_ROOT"} changed since install: only the toposhim block removed"
		changed=1
	fi
	if [ "$changed" = 1 ]; then
		log "restarting containerd: $RESTART_CONTAINERD"
		sh -c "$RESTART_CONTAINERD"
	fi
	keep=0
	if live_allocations; then
		keep=1
		log "allocations are still live: the programs stay until their pods are gone"
	fi
	while read -r f; do
		case "$f" in
		*/etc/toposhim/config.json)
			if [ -f "$state/config.orig" ]; then
				cp -p "$state/config.orig" "$f"
			else
				rm -f "$f"
			fi
			;;
		*) [ "$keep" = 1 ] || rm -f "$f" ;;
		esac
	done <"$state/files"
	if [ "$keep" = 1 ]; then
		grep -v '/etc/toposhim/config.json$' "$state/files" >"$state/files.keep" || true
		mv "$state/files.keep" "$state/files"
		log "done: node $NODE_NAME is restored but for the programs"
		return 0
	fi
	rmdir "$HOST_ROOT/etc/toposhim" "$HOST_ROOT$PREFIX/libexec/toposhim/plugins" \
		"$HOST_ROOT$PREFIX/libexec/toposhim" "$HOST_ROOT$PREFIX/lib/toposhim" 2>/dev/null || true
	rm -rf "$state"
	log "done: node $NODE_NAME is restored"
}

cmd_nrt_once() {
	need_node
	"$SRC/bin/toposhimctl" nrt --name "$NODE_NAME" | "$KUBECTL" apply -f -
}

cmd_nrt_loop() {
	while :; do
		cmd_nrt_once || log "publishing the NodeResourceTopology failed, trying again in $NRT_INTERVAL s"
		sleep "$NRT_INTERVAL"
	done
}

case "${1:-}" in
install) cmd_install ;;
uninstall) cmd_uninstall ;;
nrt-once) cmd_nrt_once ;;
nrt-loop) cmd_nrt_loop ;;
*)
	echo "usage: install.sh install|uninstall|nrt-once|nrt-loop" >&2
	exit 2
	;;
esac
