#!/bin/bash
# tests/vm/run.sh - boot a qemu guest with a chosen CPU/NUMA layout and run
# bats files inside it against real runc and crun (directly and through
# toposhim), on a pure cgroup v2 hierarchy.  Prints the guest's TAP on
# stdout so that automake's tap-driver counts every guest test.
#
# Usage: tests/vm/run.sh [--layout NAME] [--timeout SECONDS] [BATS_FILES...]
#   --layout NAME   tests/vm/layouts/NAME.conf (default: 2s)
#   --timeout SECS  kill the guest after this long (default: $TS_VM_TIMEOUT or 900)
#   BATS_FILES      names in tests/vm/guest/ (default: the files in
#                   tests/vm/guest/default.list)
#
# Environment: TS_SRCDIR, TS_BUILDDIR (set by make check; default: the repo
# root), TS_VM_WORKDIR (default: $TS_BUILDDIR/tests/vm/work), TS_VM_KERNEL
# (a vmlinuz; default: the newest /boot/vmlinuz-* with /lib/modules),
# TS_VM_QEMU (default: qemu-system-x86_64), TS_VM_ACCEL (default:
# tcg,thread=single: one host thread runs every vCPU; multi-threaded TCG
# used no more than one core here either and took 50 s of wall where this
# takes 41 (system.bats and topology.bats on 2s); the build machines'
# /dev/kvm is nested and far slower still), TS_VM_CPU (qemu -cpu model), TS_VM_TIMEOUT, TS_VM_DEBUG=1
# (kernel messages on the console), TS_VM_REQUIRE_TOPOSHIM=1 (guest: fail
# instead of skip when toposhim does not exec the runtime).  See README.
#
# Exit status: 0 when every guest test passed (or the whole run was skipped
# because qemu or a kernel is missing), 1 otherwise.
set -eu -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
srcdir=${TS_SRCDIR:-$(cd "$here/../.." && pwd)}
builddir=${TS_BUILDDIR:-$srcdir}
layout=2s
timeout_s=${TS_VM_TIMEOUT:-900}
qemu=${TS_VM_QEMU:-qemu-system-x86_64}

# Guest modules, in load order: each needs the ones before it.
vm_modules="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_blk"

begin_marker='=== TS-VM TAP BEGIN ==='
end_marker='=== TS-VM TAP END'

# A harness error: say it on stderr and, as "Bail out!", in the TAP stream
# so that the make check summary shows it too.
die()
{
	echo "run.sh: $*" >&2
	echo "Bail out! run.sh: $*"
	exit 1
}

# Print a TAP "skip everything" plan and leave successfully.
skip_all()
{
	echo "1..0 # SKIP $*"
	exit 0
}

# Print a command's output as TAP comments, so a failure shows it.
as_comments()
{
	sed -e 's/\r$//' -e 's/^/# /'
}

is_uint()
{
	case $1 in
	'' | *[!0-9]*) return 1 ;;
	*) return 0 ;;
	esac
}

parse_args()
{
	files=()
	while [ $# -gt 0 ]; do
		case $1 in
		--layout)
			[ $# -ge 2 ] || die "--layout needs a name"
			layout=$2
			shift 2
			;;
		--layout=*)
			layout=${1#--layout=}
			shift
			;;
		--timeout)
			[ $# -ge 2 ] || die "--timeout needs seconds"
			timeout_s=$2
			shift 2
			;;
		-h | --help)
			sed -n '2,/^set -eu/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
			exit 0
			;;
		-*) die "unknown option '$1'" ;;
		*)
			files+=("$1")
			shift
			;;
		esac
	done
	is_uint "$timeout_s" || die "--timeout: not a number of seconds '$timeout_s'"
	local f only
	if [ ${#files[@]} -eq 0 ]; then
		# "FILE" runs on every layout, "FILE LAYOUT..." only on those;
		# make check-long adds long.list's
		local lists=("$here/guest/default.list")
		[ "${TS_CHECK_LONG:-0}" != 1 ] || lists+=("$here/guest/long.list")
		while read -r f only; do
			case $f in '' | '#'*) continue ;; esac
			[ -z "$only" ] || case " $only " in *" $layout "*) ;; *) continue ;; esac
			files+=("$f")
		done < <(cat "${lists[@]}")
	fi
	for f in "${files[@]}"; do
		[ -f "$here/guest/${f##*/}" ] || die "no such guest test file 'tests/vm/guest/${f##*/}'"
	done
}

# Read tests/vm/layouts/$layout.conf (key=value lines) into L_* variables and
# derive the CPU ranges of each NUMA node.
load_layout()
{
	local conf="$here/layouts/$layout.conf" key value
	L_sockets='' L_cores='' L_threads='' L_numa_nodes='' L_mem_per_node_mb='' L_disk_node=''
	[ -f "$conf" ] || die "no such layout '$layout' (expected $conf)"
	while IFS='=' read -r key value; do
		case $key in
		'' | '#'*) continue ;;
		sockets | cores | threads | numa_nodes | mem_per_node_mb | disk_node) ;;
		*) die "$conf: unknown key '$key'" ;;
		esac
		is_uint "$value" || die "$conf: '$key': not a number '$value'"
		printf -v "L_$key" '%s' "$value"
	done <"$conf"
	for key in sockets cores threads numa_nodes mem_per_node_mb disk_node; do
		value="L_$key"
		[ -n "${!value:-}" ] || die "$conf: missing key '$key'"
	done
	L_cpus=$((L_sockets * L_cores * L_threads))
	[ "$L_numa_nodes" -ge 1 ] || die "$conf: 'numa_nodes': must be at least 1"
	[ $((L_cpus % L_numa_nodes)) -eq 0 ] ||
		die "$conf: $L_cpus PUs do not split evenly over $L_numa_nodes NUMA nodes"
	[ "$L_disk_node" -lt "$L_numa_nodes" ] ||
		die "$conf: 'disk_node': no such NUMA node '$L_disk_node'"
	L_pus_per_node=$((L_cpus / L_numa_nodes))
}

# PU range of NUMA node $1, e.g. "4-7".
node_cpus()
{
	local first=$(($1 * L_pus_per_node))
	local last=$((first + L_pus_per_node - 1))
	if [ "$first" -eq "$last" ]; then
		echo "$first"
	else
		echo "$first-$last"
	fi
}

# Pick the kernel: TS_VM_KERNEL, else the newest /boot/vmlinuz-VER that has
# /lib/modules/VER.  Sets kernel and kver; returns 1 when there is none.
find_kernel()
{
	local k v
	if [ -n "${TS_VM_KERNEL:-}" ]; then
		kernel=$TS_VM_KERNEL
		kver=${kernel##*/vmlinuz-}
		[ -r "$kernel" ] && [ -d "/lib/modules/$kver" ]
		return
	fi
	kernel=
	for k in $(printf '%s\n' /boot/vmlinuz-* | sort -V); do
		v=${k##*/vmlinuz-}
		if [ -r "$k" ] && [ -d "/lib/modules/$v" ]; then
			kernel=$k
			kver=$v
		fi
	done
	[ -n "$kernel" ]
}

check_prerequisites()
{
	command -v "$qemu" >/dev/null ||
		skip_all "$qemu not found (apt-get install --no-install-recommends qemu-system-x86)"
	find_kernel ||
		skip_all "no readable /boot/vmlinuz-* with /lib/modules (apt-get install --no-install-recommends linux-image-amd64)"
	local p
	for p in busybox bash bats jq runc crun setpriv; do
		command -v "$p" >/dev/null || die "'$p' not found on the host: it goes into the guest"
	done
	busybox_bin=$(command -v busybox)
	file_is_static "$busybox_bin" || die "$busybox_bin is not static (apt-get install busybox-static)"
	if [ ! -d /usr/lib/bats/bats-support ] || [ ! -d /usr/lib/bats/bats-assert ]; then
		die "bats helpers missing (apt-get install bats-support bats-assert)"
	fi
}

file_is_static()
{
	! ldd "$1" >/dev/null 2>&1
}

# The toposhim binaries to ship.  Build toposhim when it is missing; a
# libtool wrapper script is replaced by the real program in .libs/.
find_toposhim()
{
	local p
	if [ ! -x "$builddir/toposhim" ] || [ ! -x "$builddir/toposhim-core" ]; then
		[ -f "$builddir/Makefile" ] || die "no $builddir/toposhim and no Makefile to build it (run ./configure)"
		make -C "$builddir" toposhim toposhim-core >&2 || die "building toposhim failed"
	fi
	ts_bins=()
	for p in toposhim toposhimctl; do
		if [ -x "$builddir/.libs/$p" ]; then
			ts_bins+=("$builddir/.libs/$p")
		elif [ -x "$builddir/$p" ]; then
			ts_bins+=("$builddir/$p")
		fi
	done
}

# Copy a host file to the same path under $root, following symlinks.
install_host_file()
{
	local src=$1 dst=$root${2:-$1}
	mkdir -p "$(dirname "$dst")"
	cp -L "$src" "$dst"
}

# Copy the shared libraries (and the loader) that $1 needs.
install_libs()
{
	local lib
	for lib in $(ldd "$1" 2>/dev/null | sed -n -e 's/.*=> \(\/[^ ]*\).*/\1/p' -e 's/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
		[ -e "$root$lib" ] || install_host_file "$lib"
	done
}

install_program()
{
	install_host_file "$1" "${2:-$1}"
	install_libs "$1"
}

# A merged-/usr skeleton: /bin, /sbin, /lib, /lib64 point into /usr as on
# the host, so ldd's paths and shebangs work unchanged.
make_skeleton()
{
	local d
	rm -rf "$root"
	mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,proc,sys,dev,run,tmp,root,etc}
	for d in bin sbin lib lib64; do
		ln -s "usr/$d" "$root/$d"
	done
	chmod 1777 "$root/tmp"
	echo 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	echo 'root:x:0:' >"$root/etc/group"
}

install_busybox()
{
	local applet
	install_host_file "$busybox_bin" /usr/bin/busybox
	# GNU date first: busybox's has no %N, and bats --timing needs it for
	# per-test times in ms rather than whole seconds.
	install_program "$(command -v date)" /usr/bin/date
	for applet in $("$busybox_bin" --list); do
		case $applet in
		busybox | bash) continue ;;
		esac
		[ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/usr/bin/$applet"
	done
}

install_bats()
{
	install_program "$(command -v bash)" /usr/bin/bash
	install_host_file "$(command -v bats)" /usr/bin/bats
	mkdir -p "$root/usr/lib" "$root/usr/libexec"
	cp -a /usr/lib/bats-core "$root/usr/lib/"
	cp -a /usr/libexec/bats-core "$root/usr/libexec/"
	mkdir -p "$root/usr/lib/bats"
	cp -a /usr/lib/bats/bats-support /usr/lib/bats/bats-assert "$root/usr/lib/bats/"
}

install_runtimes()
{
	local p
	install_program "$(command -v runc)" /usr/sbin/runc
	install_program "$(command -v crun)" /usr/bin/crun
	install_program "$(command -v jq)" /usr/bin/jq
	# util-linux's setpriv (busybox's cannot change uids), beside the
	# applets rather than over busybox's link: guest/rootless.bats
	install_program "$(command -v setpriv)" /usr/libexec/ts-vm/setpriv
	for p in "${ts_bins[@]}"; do
		install_program "$p" "/usr/bin/${p##*/}"
	done
	# the front (a static PIE: no libraries) in /usr/bin runs this core
	# (src/cli/core.h)
	install_program "$builddir/toposhim-core" /usr/libexec/toposhim/toposhim-core
}

# systemd and systemctl, when the host has them, for guest/systemd.bats
# (the runtimes' systemd cgroup driver against a real systemd, started there
# as PID 1 of its own pid namespace).  Its units are ours: ts-vm.target and
# the D-Bus ones (-.slice, system.slice and init.scope are built into
# systemd).
install_systemd()
{
	local sd=/lib/systemd/systemd
	[ -x "$sd" ] && command -v systemctl >/dev/null || return 0
	install_program "$sd" /usr/lib/systemd/systemd
	install_program "$(command -v systemctl)" /usr/bin/systemctl
	mkdir -p "$root/etc/systemd/system"
	printf '[Unit]\nDescription=toposhim test guest\n' >"$root/etc/systemd/system/ts-vm.target"
	install_dbus
}

# A D-Bus system bus under that systemd, for crun's systemd driver (sd-bus
# asks systemd over the bus; runc uses systemd's private socket): dbus-daemon
# started by systemd from units of ours, with a test-only policy that lets
# root do anything (the guest has no messagebus user).
install_dbus()
{
	local u=$root/etc/systemd/system
	command -v dbus-daemon >/dev/null || return 0
	install_program "$(command -v dbus-daemon)" /usr/bin/dbus-daemon
	cat >"$root/etc/ts-vm-dbus.conf" <<-'EOF'
		<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
		 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
		<busconfig>
		  <type>system</type>
		  <auth>EXTERNAL</auth>
		  <listen>unix:path=/run/dbus/system_bus_socket</listen>
		  <policy context="default">
		    <allow user="root"/>
		    <allow own="*"/>
		    <allow send_destination="*"/>
		    <allow receive_sender="*"/>
		  </policy>
		</busconfig>
	EOF
	printf '[Unit]\nDescription=D-Bus system bus socket\n[Socket]\nListenStream=/run/dbus/system_bus_socket\n' >"$u/dbus.socket"
	printf '[Unit]\nDescription=D-Bus system bus\nRequires=dbus.socket\n[Service]\nType=notify\nExecStart=/usr/bin/dbus-daemon --config-file=/etc/ts-vm-dbus.conf --address=systemd: --nofork --nopidfile --systemd-activation\n' >"$u/dbus.service"
	printf 'Wants=dbus.socket dbus.service\nAfter=dbus.service\n' >>"$u/ts-vm.target"
}

# Kernel modules for the virtio disk, in load order, as NN-name.ko so the
# guest's init loads them by glob order.  Built-in ones are skipped.
install_modules()
{
	local moddir=/lib/modules/$kver n=10 m path
	mkdir -p "$root/usr/lib/ts-vm/modules"
	for m in $vm_modules; do
		path=$(find "$moddir/kernel" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" | head -n 1)
		if [ -z "$path" ]; then
			grep -q "/$m.ko\$" "$moddir/modules.builtin" 2>/dev/null ||
				die "kernel $kver has no module '$m' (not built in either)"
			continue
		fi
		case $path in
		*.xz) xz -dc "$path" >"$root/usr/lib/ts-vm/modules/$n-$m.ko" ;;
		*.zst) zstd -qdc "$path" >"$root/usr/lib/ts-vm/modules/$n-$m.ko" ;;
		*) cp "$path" "$root/usr/lib/ts-vm/modules/$n-$m.ko" ;;
		esac
		n=$((n + 1))
	done
}

# /opt/ts-vm/bundle: a busybox rootfs and a runc-generated config.json
# (no terminal) that tests copy and edit with jq.
install_bundle()
{
	local b=$root/opt/ts-vm/bundle applet
	mkdir -p "$b/rootfs/bin" "$b/rootfs/proc" "$b/rootfs/sys" "$b/rootfs/dev" "$b/rootfs/tmp"
	cp "$busybox_bin" "$b/rootfs/bin/busybox"
	for applet in sh cat grep sleep ls head tail echo true stat; do
		ln -s busybox "$b/rootfs/bin/$applet"
	done
	(cd "$b" && runc spec)
	jq '.process.terminal = false | .root.path = "/opt/ts-vm/bundle/rootfs"' \
		"$b/config.json" >"$b/config.json.new"
	mv "$b/config.json.new" "$b/config.json"
}

install_tests()
{
	local f t=$root/opt/ts-vm/tests
	mkdir -p "$t"
	cp "$here"/guest/*.bash "$here"/guest/*.bats "$t/"
	: >"$root/etc/ts-vm-tests"
	for f in "${files[@]}"; do
		echo "${f##*/}" >>"$root/etc/ts-vm-tests"
	done
}

# The layout as environment for the guest tests.
write_guest_env()
{
	local n env=$root/etc/ts-vm-env
	{
		echo "TS_VM_LAYOUT=$layout"
		echo "TS_VM_SOCKETS=$L_sockets"
		echo "TS_VM_CORES=$L_cores"
		echo "TS_VM_THREADS=$L_threads"
		echo "TS_VM_CPUS=$L_cpus"
		echo "TS_VM_CPU_LIST=0-$((L_cpus - 1))"
		echo "TS_VM_NUMA_NODES=$L_numa_nodes"
		echo "TS_VM_MEM_PER_NODE_MB=$L_mem_per_node_mb"
		for ((n = 0; n < L_numa_nodes; n++)); do
			echo "TS_VM_NODE${n}_CPUS=$(node_cpus "$n")"
		done
		echo "TS_VM_DISK_NODE=$L_disk_node"
		echo "TS_VM_DISK_CPUS=$(node_cpus "$L_disk_node")"
		echo "TS_VM_REQUIRE_TOPOSHIM=${TS_VM_REQUIRE_TOPOSHIM:-0}"
	} | sed 's/^/export /' >"$env"
}

build_initramfs()
{
	root=$work/root
	make_skeleton
	install_busybox
	install_bats
	install_runtimes
	install_systemd
	install_modules
	install_bundle
	install_tests
	write_guest_env
	install -m 0755 "$here/init" "$root/init"
	# Uncompressed: under TCG the kernel's gunzip costs more than reading
	# the larger image.
	(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | "$busybox_bin" cpio -o -H newc) \
		>"$work/initramfs.cpio" 2>/dev/null
}

qemu_args()
{
	local n accel=${TS_VM_ACCEL:-tcg,thread=single}
	# qemu64 claims AMD, whose SMT topology needs topoext (which TCG lacks):
	# the guest would see no siblings.  With Intel's vendor string the
	# guest reads threads from CPUID leaf 0xB.
	local cpu_model=${TS_VM_CPU:-qemu64,vendor=GenuineIntel}
	args=(-nodefaults -no-user-config -display none -vga none -no-reboot
		-machine pc -accel "$accel" -cpu "$cpu_model"
		-m $((L_mem_per_node_mb * L_numa_nodes))M
		-smp "$L_cpus,sockets=$L_sockets,cores=$L_cores,threads=$L_threads")
	for ((n = 0; n < L_numa_nodes; n++)); do
		args+=(-object "memory-backend-ram,id=m$n,size=${L_mem_per_node_mb}M"
			-numa "node,nodeid=$n,cpus=$(node_cpus "$n"),memdev=m$n")
	done
	# The disk sits behind a PCI expander bridge bound to disk_node, so the
	# guest's sysfs reports that node as the device's numa_node.
	# shellcheck disable=SC2054 # commas separate qemu sub-options
	args+=(-device "pxb,id=bridge1,bus_nr=8,numa_node=$L_disk_node,bus=pci.0"
		-drive "if=none,id=d1,file=$work/disk.img,format=raw"
		-device virtio-blk-pci,drive=d1,bus=bridge1,addr=0x3
		-serial "file:$work/console.log"
		-kernel "$kernel" -initrd "$work/initramfs.cpio"
		-append "console=ttyS0 panic=-1 rdinit=/init $cmdline_extra")
}

# Print the guest's TAP and decide.  Returns 0 only when the end marker
# is there, bats said 0 and no test is "not ok".
report()
{
	local qemu_rc=$1 wall=$2 tap end_line bats_rc done_n
	tr -d '\r' <"$work/console.log" >"$work/console.txt"
	if ! grep -q -x -F "$begin_marker" "$work/console.txt"; then
		echo "# guest console (last 40 lines):"
		tail -n 40 "$work/console.txt" | as_comments
		as_comments <"$work/qemu.log"
		if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
			echo "Bail out! layout $layout: guest hung before the tests and was killed after ${timeout_s}s"
		else
			echo "Bail out! layout $layout: guest stopped before the tests (qemu exit $qemu_rc)"
		fi
		return 1
	fi
	echo "# layout $layout: initramfs built in ${build_s}s"
	grep '^ts-vm: ' "$work/console.txt" | as_comments || true
	tap=$(sed -n "/^$begin_marker\$/,/^$end_marker/p" "$work/console.txt" | sed -e '1d' -e "/^$end_marker/d")
	printf '%s\n' "$tap"
	end_line=$(grep -m 1 "^$end_marker" "$work/console.txt" || true)
	echo "# layout $layout: host wall time ${wall}s (boot, tests and power-off)"
	if [ -z "$end_line" ]; then
		if [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
			# bats prints a result when a test ends: the hung one is the next.
			done_n=$(printf '%s\n' "$tap" | grep -c -E '^(not )?ok ' || true)
			echo "Bail out! layout $layout: guest hung in test $((done_n + 1)) and was killed after ${timeout_s}s"
		else
			echo "Bail out! layout $layout: no end marker from the guest (qemu exit $qemu_rc)"
		fi
		return 1
	fi
	bats_rc=$(echo "$end_line" | sed -n 's/.* rc=\([0-9]*\) ===$/\1/p')
	if printf '%s\n' "$tap" | grep -q '^not ok'; then
		return 1
	fi
	if [ "$bats_rc" != 0 ]; then
		echo "Bail out! layout $layout: bats in the guest exited with '$bats_rc'"
		return 1
	fi
	return 0
}

main()
{
	local start qemu_rc=0 build_s
	parse_args "$@"
	load_layout
	check_prerequisites
	find_toposhim
	work=${TS_VM_WORKDIR:-$builddir/tests/vm/work}/$layout
	mkdir -p "$work"
	rm -f "$work/console.log" "$work/qemu.log"
	start=$(date +%s)
	build_initramfs
	build_s=$(($(date +%s) - start))
	rm -f "$work/disk.img"
	truncate -s 16M "$work/disk.img"
	cmdline_extra="quiet loglevel=1"
	if [ "${TS_VM_DEBUG:-0}" = 1 ]; then
		cmdline_extra="loglevel=7"
	fi
	qemu_args
	start=$(date +%s)
	timeout -k 10 "$timeout_s" "$qemu" "${args[@]}" </dev/null >"$work/qemu.log" 2>&1 || qemu_rc=$?
	touch "$work/console.log"
	report "$qemu_rc" $(($(date +%s) - start))
}

main "$@"
