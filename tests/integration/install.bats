#!/usr/bin/env bats
# make install into a staging directory (DESTDIR): the programs, the
# plugins, the man pages, and the plugin author's library with its headers
# and pkg-config file, with which a plugin builds outside this tree.

load helpers

setup() {
	[ -f "$TS_BUILDDIR/Makefile" ] || skip "no configured build tree in $TS_BUILDDIR"
	command -v pkg-config >/dev/null || skip "pkg-config is not installed"
	D=$BATS_TEST_TMPDIR/root
}

# dir VAR: an installation directory of the build tree's Makefile.
dir() {
	make -s -C "$TS_BUILDDIR" --no-print-directory --eval="print-dir: ; @echo \$($1)" print-dir
}

@test "make install DESTDIR: exactly the files of the package" {
	make -s -C "$TS_BUILDDIR" --no-print-directory install DESTDIR="$D" >"$BATS_TEST_TMPDIR/out" 2>&1 ||
		fail "make install: $(cat "$BATS_TEST_TMPDIR/out")"
	# a staged install leaves the plugin user to the package's scripts
	grep -qx "toposhim: staged install: create the plugin user with contrib/plugin-user.sh" \
		"$BATS_TEST_TMPDIR/out"
	local bin lib inc lx man
	bin=$(dir bindir) lib=$(dir libdir) inc=$(dir includedir) lx=$(dir libexecdir) man=$(dir mandir)
	run sh -c "cd '$D' && find . -type f | sed 's,^\./,/,' | sort"
	assert_output - <<OUT
$(sort <<LIST
$bin/toposhim
$bin/toposhim-cdi-hook
$bin/toposhimctl
$inc/toposhim/oci/json.h
$inc/toposhim/toposhim-plugin.h
$inc/toposhim/util/cleanup.h
$inc/toposhim/util/error.h
$inc/toposhim/util/fileio.h
$lib/libtoposhim-plugin.a
$lib/libtoposhim-plugin.la
$lib/pkgconfig/toposhim-plugin.pc
$lx/toposhim/plugins/clearcfs
$lx/toposhim/plugins/confine
$lx/toposhim/plugins/log
$lx/toposhim/toposhim-core
$man/man1/toposhim.1
$man/man1/toposhimctl.1
$man/man7/toposhim-plugin.7
LIST
)
OUT
	# the installed man pages are the tree's
	cmp "$TS_SRCDIR/docs/toposhimctl.1" "$D$man/man1/toposhimctl.1"
}

@test "a plugin builds against the installed library with pkg-config, and runs" {
	make -s -C "$TS_BUILDDIR" --no-print-directory install DESTDIR="$D" >/dev/null 2>&1
	local prefix flags
	prefix=$(dir prefix)
	flags=$(PKG_CONFIG_PATH="$D$(dir libdir)/pkgconfig" \
		pkg-config --define-variable=prefix="$D$prefix" --cflags --libs toposhim-plugin)
	[ "$(PKG_CONFIG_PATH="$D$(dir libdir)/pkgconfig" pkg-config --modversion toposhim-plugin)" = \
		"$(sed -n 's/^PACKAGE_VERSION = //p' "$TS_BUILDDIR/Makefile")" ]
	# with the build's hardening (and sanitizer) flags: an ASan build
	# installs an instrumented library
	# shellcheck disable=SC2086 # the flags are meant to be split
	cc -Wall -Wextra -Werror $(dir TS_HARDEN_CFLAGS) -o "$BATS_TEST_TMPDIR/example" \
		"$TS_SRCDIR/hooks/plugins/example.c" $flags $(dir TS_HARDEN_LDFLAGS)
	run "$BATS_TEST_TMPDIR/example" invoke <<<'{"state": "create", "id": "c1", "toposhim": {"cpus": "2-3"}, "spec": {}}'
	assert_success
	assert_output '{"plugin":"example","version":"0.1","error":"","metadata":{"greeting":"hello c1","cpus":"2-3"}}'
}
