#!/bin/sh
# Fail when a module includes a header of a module it may not use.
# Layers (docs/design.md): util <- {oci,cdi,topology,cgroup,state,runtime} <- plugin <- placement <- cli
# cdi and cgroup edit config.json trees, so they may use oci; policy reads
# the config and the container's annotations through oci.
top=${1:-.}
cd "$top" || exit 2
status=0
allowed() {
	case "$1" in
	util) echo "util" ;;
	oci | topology | runtime) echo "util $1" ;;
	cgroup) echo "util oci cgroup" ;;
	cdi) echo "util oci cdi" ;;
	policy) echo "util oci policy" ;;
	state) echo "util oci state" ;;
	plugin) echo "util oci cdi topology cgroup state runtime plugin" ;;
	placement) echo "util oci cdi topology cgroup state runtime plugin placement" ;;
	cli) echo "util oci cdi topology cgroup state runtime plugin placement policy cli" ;;
	esac
}
for dir in src/*/; do
	m=$(basename "$dir")
	ok=$(allowed "$m")
	for inc in $(grep -ho '#include "[a-z]*/' "$dir"*.[ch] 2>/dev/null | sed 's/#include "//; s,/,,' | sort -u); do
		case " $ok " in
		*" $inc "*) ;;
		*) echo "layering: src/$m includes $inc/" >&2; status=1 ;;
		esac
	done
done
exit $status
