#!/bin/sh
# seeds.sh NAME OUTDIR: write the seeds of fuzz target NAME that come from
# outside tests/fuzz into OUTDIR (made afresh): the files of tests/fixtures,
# of the shared corpus ($TS_SHARED_DIR/corpus, when present: nothing of it is
# ever copied into the repository) and of this host's /proc and /sys, each
# with the selector byte its target expects in front (tests/fuzz/fuzz-*.c).
# The committed seeds (tests/fuzz/corpus-NAME) are not copied: run.sh and
# replay.sh name that directory themselves.
set -u
name=$1
out=$2
src=${TS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
fix=$src/tests/fixtures
shared=${TS_SHARED_DIR:-$src/../shared}/corpus
[ -d "$shared" ] || shared=
rm -rf "$out"
mkdir -p "$out"
n=0
sep='
%%
'

# put PREFIX FILE...: one seed per readable file, PREFIX (printf format) first
put() {
	prefix=$1
	shift
	for f in "$@"; do
		[ -f "$f" ] && [ -r "$f" ] || continue
		n=$((n + 1))
		{ printf "$prefix"; cat "$f"; } >"$out/seed-$n" 2>/dev/null || rm -f "$out/seed-$n"
	done
}
# text TEXT: one seed from a string (printf format)
text() {
	n=$((n + 1))
	printf "$1" >"$out/seed-$n"
}

case $name in
json | oci)
	put '' "$fix"/bundles/*.json "$fix"/nrt/*.json "$fix"/k8s/*.json
	[ -z "$shared" ] || put '' "$shared"/cdi/*.json
	;;
cdi-spec)
	for f in "$fix"/cdi/*.yaml ${shared:+"$shared"/cdi/*.yaml}; do
		put '\000' "$f"
		put '\001' "$f"
		put '\007' "$f"
	done
	for f in ${shared:+"$shared"/cdi/*.json}; do
		put '\002' "$f"
		put '\003' "$f"
	done
	;;
request | config)
	for f in "$fix"/bundles/*.json; do
		n=$((n + 1))
		if [ "$name" = request ]; then
			{ cat "$f"; printf '%s{"policy":{"namespaces":{"*":{"classes":["critical"]}}}}%svendor.com/gpu=0' "$sep" "$sep"; } >"$out/seed-$n"
		else
			{ printf '{"placement":{"reserved_cpus":"0"},"cgroup":{"classes":{"critical":{"cpu.weight":200}}}}%s%s' "$sep" "$sep"; cat "$f"; } >"$out/seed-$n"
		fi
	done
	;;
proc)
	put '\000' /proc/self/stat /proc/1/stat
	put '\001' /proc/self/cgroup /proc/1/cgroup
	put '\005' /proc/self/mountinfo
	n=$((n + 1))
	{ printf '\003'; cat /sys/devices/system/cpu/online; printf '%s' "$sep"; cat /sys/devices/system/node/online; printf '%s' "$sep"; cat /proc/sys/kernel/random/boot_id; } >"$out/seed-$n" 2>/dev/null
	;;
cpulist)
	put '' /sys/devices/system/cpu/online /sys/devices/system/cpu/possible \
		/sys/devices/system/cpu/present /sys/devices/system/node/online \
		/sys/fs/cgroup/cpuset.cpus.effective /sys/fs/cgroup/cpuset.mems.effective
	;;
hook)
	for f in "$fix"/bundles/*.json; do
		n=$((n + 1))
		{ printf 'chmod\000--mode\000644\000--path\000/etc/passwd%s' "$sep"; cat "$f"; } >"$out/seed-$n"
		n=$((n + 1))
		{ printf '\001'; printf 'chmod\000--mode\000644\000--path\000/etc/passwd%s' "$sep"; cat "$f"; } >"$out/seed-$n"
	done
	;;
esac
exit 0
