#!/bin/sh
# The Debian package, as TAP: `dpkg-buildpackage -us -uc -b` in a copy of
# the checkout (its tracked and new files, as they are now), lintian
# without errors, each .deb unpacked with dpkg -x into a scratch root and
# its file list compared with the one below, the programs of the unpacked
# package run, the maintainer scripts and the tmpfiles entry checked, and
# a plugin built against the unpacked toposhim-dev.
#
# Run by contrib/run-tests.sh (make check TESTS=tests/deb.sh), not by a
# plain make check: it builds the whole tree once more (about 30 s).
# DEB_BUILD_OPTIONS=nocheck: make check runs the same unit tests already.
top=${TS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
echo "1..8"
skip_all() {
	for i in 1 2 3 4 5 6 7 8; do echo "ok $i # SKIP $1"; done
	exit 0
}
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
	skip_all "not a git checkout (release tarball): no file list to copy"
fi
for c in dpkg-buildpackage dh lintian; do
	command -v "$c" >/dev/null || skip_all "$c is not installed (contrib/setup-debian.sh installs it)"
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/toposhim-deb.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/toposhim"
git ls-files -co --exclude-standard -z | tar --null -T - -c | tar -x -C "$scratch/toposhim"
version=$(sed -n '1s/^toposhim (\([^)]*\)).*/\1/p' debian/changelog)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

n=0
result() { # result OK DESCRIPTION [DETAILS FILE]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || sed 's/^/# /' "$3" | tail -n 40
	fi
}

t0=$(date +%s)
(cd "$scratch/toposhim" && DEB_BUILD_OPTIONS="nocheck parallel=${JOBS:-2}" \
	dpkg-buildpackage -us -uc -b) >"$scratch/build.log" 2>&1
rc=$?
deb=$scratch/toposhim_${version}_$arch.deb
dev=$scratch/toposhim-dev_${version}_$arch.deb
[ -f "$deb" ] && [ -f "$dev" ] || rc=1
result $rc "dpkg-buildpackage -us -uc -b builds toposhim_${version}_$arch.deb and toposhim-dev ($(($(date +%s) - t0)) s)" "$scratch/build.log"
[ $rc = 0 ] || {
	for i in 2 3 4 5 6 7 8; do echo "ok $i # SKIP the package did not build"; done
	exit 0
}

lintian --tag-display-limit 0 "$scratch/toposhim_${version}_$arch.changes" >"$scratch/lintian.log" 2>&1
grep -v '^running with root privileges' "$scratch/lintian.log" | sed 's/^/# lintian: /'
! grep -q '^E: ' "$scratch/lintian.log"
result $? "lintian: no errors" "$scratch/lintian.log"

# file_list DEB: the paths dpkg -x puts in a scratch root, sorted.
file_list() {
	rm -rf "$scratch/root" && mkdir "$scratch/root" && dpkg -x "$1" "$scratch/root" &&
		(cd "$scratch/root" && find . ! -type d | sed 's,^\.,,' | sort)
}
file_list "$deb" >"$scratch/got"
cat >"$scratch/want" <<LIST
/usr/bin/toposhim
/usr/bin/toposhim-cdi-hook
/usr/bin/toposhimctl
/usr/lib/tmpfiles.d/toposhim.conf
/usr/libexec/toposhim/plugins/clearcfs
/usr/libexec/toposhim/plugins/confine
/usr/libexec/toposhim/plugins/log
/usr/libexec/toposhim/toposhim-core
/usr/share/doc/toposhim/README.gz
/usr/share/doc/toposhim/changelog.gz
/usr/share/doc/toposhim/copyright
/usr/share/doc/toposhim/design.md.gz
/usr/share/doc/toposhim/examples/containerd/conf.d/toposhim-v2.toml
/usr/share/doc/toposhim/examples/containerd/conf.d/toposhim-v3.toml
/usr/share/doc/toposhim/examples/containerd/config-v2.toml
/usr/share/doc/toposhim/examples/containerd/config-v3.toml
/usr/share/doc/toposhim/examples/cri-o/50-toposhim.conf
/usr/share/doc/toposhim/examples/docker/daemon-default-runtime.json
/usr/share/doc/toposhim/examples/docker/daemon.json
/usr/share/doc/toposhim/examples/kubernetes/configmap.yaml
/usr/share/doc/toposhim/examples/kubernetes/daemonset.yaml
/usr/share/doc/toposhim/examples/kubernetes/example-pod.yaml
/usr/share/doc/toposhim/examples/kubernetes/install.sh
/usr/share/doc/toposhim/examples/kubernetes/runtimeclass.yaml
/usr/share/doc/toposhim/examples/podman/containers.conf
/usr/share/doc/toposhim/placement-cases.md.gz
/usr/share/doc/toposhim/security.md.gz
/usr/share/lintian/overrides/toposhim
/usr/share/man/man1/toposhim.1.gz
/usr/share/man/man1/toposhimctl.1.gz
/usr/share/man/man7/toposhim-plugin.7.gz
/usr/share/toposhim/plugin-user.sh
LIST
diff -u "$scratch/want" "$scratch/got" >"$scratch/diff"
result $? "toposhim_${version}_$arch.deb: the file list" "$scratch/diff"

# the unpacked programs run, and the man page is the tree's
"$scratch/root/usr/bin/toposhimctl" --version >"$scratch/version" 2>&1 &&
	[ "$(cat "$scratch/version")" = "toposhimctl $version" ] &&
	zcat "$scratch/root/usr/share/man/man1/toposhimctl.1.gz" | cmp -s - docs/toposhimctl.1 &&
	cmp -s "$scratch/root/usr/share/doc/toposhim/examples/docker/daemon.json" contrib/docker/daemon.json
result $? "the unpacked toposhimctl says its version; man page and examples are the tree's" "$scratch/version"

# maintainer scripts: the plugin user (contrib/plugin-user.sh), /run/toposhim
dpkg -e "$deb" "$scratch/control" &&
	grep -qx '	sh /usr/share/toposhim/plugin-user.sh toposhim-plugin' "$scratch/control/postinst" &&
	grep -q -- '--create toposhim.conf' "$scratch/control/postinst" &&
	cmp -s contrib/plugin-user.sh "$scratch/root/usr/share/toposhim/plugin-user.sh"
result $? "postinst creates the plugin user with contrib/plugin-user.sh and /run/toposhim" "$scratch/control/postinst"
grep -v '^#' "$scratch/root/usr/lib/tmpfiles.d/toposhim.conf" >"$scratch/tmpfiles"
[ "$(cat "$scratch/tmpfiles")" = "d /run/toposhim 0700 root root -" ]
result $? "tmpfiles.d: d /run/toposhim 0700 root root -" "$scratch/tmpfiles"

file_list "$dev" >"$scratch/got"
cat >"$scratch/want" <<LIST
/usr/include/toposhim/oci/json.h
/usr/include/toposhim/toposhim-plugin.h
/usr/include/toposhim/util/cleanup.h
/usr/include/toposhim/util/error.h
/usr/include/toposhim/util/fileio.h
/usr/lib/$multiarch/libtoposhim-plugin.a
/usr/lib/$multiarch/pkgconfig/toposhim-plugin.pc
/usr/share/doc/toposhim-dev/changelog.gz
/usr/share/doc/toposhim-dev/copyright
LIST
diff -u "$scratch/want" "$scratch/got" >"$scratch/diff"
result $? "toposhim-dev_${version}_$arch.deb: the file list" "$scratch/diff"

# shellcheck disable=SC2046 # the flags are meant to be split
PKG_CONFIG_PATH="$scratch/root/usr/lib/$multiarch/pkgconfig" cc -Wall -Wextra -Werror \
	-o "$scratch/example" hooks/plugins/example.c $(PKG_CONFIG_PATH="$scratch/root/usr/lib/$multiarch/pkgconfig" \
	pkg-config --define-variable=prefix="$scratch/root/usr" --define-variable=libdir="$scratch/root/usr/lib/$multiarch" \
	--cflags --libs toposhim-plugin) >"$scratch/cc.log" 2>&1 &&
	echo '{"state": "create", "id": "c1", "spec": {}}' | "$scratch/example" invoke >"$scratch/out" &&
	[ "$(cat "$scratch/out")" = '{"plugin":"example","version":"0.1","error":"","metadata":{"greeting":"hello c1"}}' ]
result $? "a plugin builds against the unpacked toposhim-dev and runs" "$scratch/cc.log"
