#!/bin/sh
# Install everything toposhim needs to build, run and test on Debian 12
# (run as root).  Safe to run again: only missing packages are installed.
set -eu
export DEBIAN_FRONTEND=noninteractive
apt_opts="-y -qq -o DPkg::Lock::Timeout=600"
base="build-essential autoconf automake libtool pkg-config git
	libyajl-dev libyaml-dev libhwloc-dev hwloc libseccomp-dev libcap-dev libcmocka-dev
	runc crun podman containerd busybox-static bats bats-assert bats-support jq
	clang-format valgrind shellcheck bzip2 cpio kmod python3 python3-yaml
	python3-grpcio python3-grpc-tools clang-14 libclang-rt-14-dev"
# (python3-grpcio, python3-grpc-tools: the CRI test client tests/cri/cri.py;
# clang-14, libclang-rt-14-dev: the libFuzzer targets of tests/fuzz)
# The qemu test guest (tests/vm): emulator and a Debian kernel with modules;
# systemd and dbus-daemon go into the guest for guest/systemd.bats (nothing
# starts them here).
vm="qemu-system-x86 linux-image-amd64 systemd dbus-daemon"
# Deployment (issue 12): Docker for tests/integration/engine-docker.bats,
# and what dpkg-buildpackage and lintian need for the package (debian/).
deploy="docker.io debhelper lintian dpkg-dev fakeroot"

missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || printf '%s ' "$p"
	done
}
# shellcheck disable=SC2086 # the package lists are meant to be split
need_base=$(missing $base)
# shellcheck disable=SC2086
need_vm=$(missing $vm)
# shellcheck disable=SC2086
need_deploy=$(missing $deploy)
if [ -n "$need_base$need_vm$need_deploy" ]; then
	apt-get update -qq -o DPkg::Lock::Timeout=600
fi
if [ -n "$need_base" ]; then
	# shellcheck disable=SC2086
	apt-get install $apt_opts $need_base
fi
if [ -n "$need_vm" ]; then
	# shellcheck disable=SC2086
	apt-get install $apt_opts --no-install-recommends $need_vm
fi
if [ -n "$need_deploy" ]; then
	# Without recommends (docker.io's pull in apparmor, git and more), and
	# without starting dockerd or containerd: the tests start their own,
	# and a system daemon left running would be taken for one the suite
	# leaked (.ci/run).  policy-rc.d exit 101 forbids starting services.
	policy=""
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 0755 "$policy"
	fi
	# shellcheck disable=SC2086
	apt-get install $apt_opts --no-install-recommends $need_deploy || {
		[ -z "$policy" ] || rm -f "$policy"
		exit 1
	}
	[ -z "$policy" ] || rm -f "$policy"
fi
# The unprivileged user toposhim runs plugins as (the tests need it too).
sh "$(dirname "$0")/plugin-user.sh"
