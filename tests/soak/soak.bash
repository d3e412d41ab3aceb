# shellcheck shell=bash
# soak.bash - churn the allocation store and check that it kept every live
# container (issue 17).  Loaded by tests/integration/soak.bats and
# tests/soak/soak-long.sh after helpers.bash; uses TOPOSHIM, TOPOSHIMCTL,
# TS_BUILDDIR and jq.
#
#   soak_prepare DIR RUNTIME   a work dir: a 384-PU topology made by hwloc
#                              (2 packages x 12 L3 x 8 cores x 2 PUs), a
#                              config with the state dir inside DIR, the
#                              runtime to use (the stand-in or runc)
#   soak_template_standin / soak_template_runc   the config.json template
#   soak_run SECONDS SEED [--start]   run the driver (8 workers)
#   soak_check                 the invariants; prints what is wrong, fails
#   soak_drain                 delete every container, gc, expect 0 records

SOAK_DRIVER=${SOAK_DRIVER:-$TS_BUILDDIR/tests/soak/soak-driver}
SOAK_WORKERS=${SOAK_WORKERS:-8}

soak_prepare() {
	SOAK=$1
	SOAK_RUNTIME=$2
	mkdir -p "$SOAK/work" "$SOAK/root" || return 1
	lstopo-no-graphics --input "pack:2 l3:12 core:8 pu:2" --of xml "$SOAK/topo.xml" 2>/dev/null ||
		return 1
	printf '{ "state_dir": "%s/state", %s }\n' "$SOAK" "$TS_TEST_POLICY" >"$SOAK/toposhim.json"
}

# An OCI config.json for the stand-in: nothing in it is run.
soak_template_standin() {
	printf '%s\n' '{"ociVersion": "1.0.2", "root": {"path": "rootfs"},' \
		'"process": {"args": ["true"], "cwd": "/"}, "linux": {},' \
		'"annotations": {@ANNOTATIONS@}}' >"$SOAK/template.json"
}

# A busybox `true` container for runc, sharing one read-only rootfs.
soak_template_runc() {
	local rootfs=$SOAK/rootfs
	mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/dev" "$rootfs/sys" "$SOAK/spec" || return 1
	cp /bin/busybox "$rootfs/bin/" && ln -sf busybox "$rootfs/bin/true" || return 1
	(cd "$SOAK/spec" && runc spec) || return 1
	jq --arg root "$rootfs" '.process.terminal = false | .process.args = ["true"]
		| .root = {path: $root, readonly: true} | .annotations = {"@": "@"}' \
		"$SOAK/spec/config.json" | sed 's/"@": "@"/@ANNOTATIONS@/' >"$SOAK/template.json"
}

soak_env() {
	local topo=""
	[ -f "$SOAK/topo.xml" ] && topo=$SOAK/topo.xml
	env TOPOSHIM_CONFIG="$SOAK/toposhim.json" ${topo:+TOPOSHIM_TOPOLOGY_XML="$topo"} \
		${SOAK_RUNTIME:+TOPOSHIM_RUNTIME="$SOAK_RUNTIME"} "$@"
}

soak_run() {
	local seconds=$1 seed=$2 tag
	shift 2
	# container ids unique to this soak: runc's cgroup is named after the
	# id, and two soaks at once (a check-long beside a CI run) otherwise
	# share cgroups ("container's cgroup is not empty")
	tag=$(basename "$SOAK" | tr -dc 'a-zA-Z0-9' | tail -c 8)
	soak_env "$SOAK_DRIVER" --toposhim "$TOPOSHIM" --root "$SOAK/root" --work "$SOAK/work" \
		--prefix "s$tag-" \
		--template "$SOAK/template.json" --workers "$SOAK_WORKERS" --seconds "$seconds" \
		--seed "$seed" --kill-one-in 10 "$@" >"$SOAK/driver.out" 2>&1 3>&-
	local rc=$?
	cat "$SOAK/driver.out"
	return $rc
}

# The containers that are alive: created or running (a stopped one has
# given nothing back yet, but has no process either).  The stand-in keeps
# ROOT/ID only; runc says.
soak_live() {
	if [ -z "$SOAK_RUNTIME" ] || [ "$(basename "$SOAK_RUNTIME")" = runc ]; then
		runc --root "$SOAK/root" list -f json 2>/dev/null |
			jq -r '.[]? | select(.status == "created" or .status == "running") | .id'
	else
		ls "$SOAK/root"
	fi
}

# Every live container has exactly one record, whose cpus, mems and class
# are what its config.json says (for runc: and what its cgroup has); no two
# live exclusive cpusets overlap; every config.json parses; stderr holds
# only capacity refusals and no lock timeout.  A few jq processes over all
# the files at once, not a few per container: with 800 live containers a
# jq per container took 134 s of the CI soak's 165 s.
soak_check() {
	local records=$SOAK/state/allocations.json bad=0 live live_json placed
	local kind id rec want got
	live=$(soak_live) || return 1
	jq -e '.allocations | type == "array"' "$records" >/dev/null ||
		{ echo "soak: $records does not parse"; return 1; }
	live_json=$(printf '%s\n' "$live" | jq -R 'select(length > 0)' | jq -s -c .)
	# what toposhim gave each container at create: its placement file,
	# next to its config.json (work/ID/), as {"ID": [cpus, mems, class]}
	placed=$(cd "$SOAK/work" && find . -mindepth 2 -maxdepth 2 -name toposhim-placement.json |
		sort | xargs -r jq -c '{(input_filename | ltrimstr("./") | split("/")[0]): [.cpus, .mems, .class]}' |
		jq -s -c 'add // {}') || { echo "soak: a placement file does not parse"; return 1; }
	# one line per live container whose records are wrong: "count ID N" or
	# "differs ID RECORD PLACED"
	while read -r kind id rec want; do
		[ -n "$kind" ] || continue
		if [ "$kind" = count ]; then
			echo "soak: live container '$id' has $rec records (config: $(jq -c '.linux.resources.cpu // {}' "$SOAK/work/$id/config.json"))"
			bad=$((bad + 1))
			continue
		fi
		# a running shared container follows the pool: its cgroup, not its
		# config.json, has what the record says
		if [ "$(jq -r '.[2]' <<<"$rec")" != critical ] && got=$(soak_cgroup_cpus "$id"); then
			want=$(jq -c --arg c "$got" '.[0] = $c' <<<"$want")
		fi
		if [ "$rec" != "$want" ]; then
			echo "soak: '$id': record $rec, container $want"
			bad=$((bad + 1))
		fi
	done < <(jq -r --arg root "$SOAK/root" --argjson live "$live_json" --argjson placed "$placed" '
		(reduce (.allocations[] | select(.runtime_root == $root)) as $r
			({}; .[$r.container_id] += [[$r.cpus, $r.mems, $r.class]])) as $by_id
		| $live[] as $id
		| ($by_id[$id] // []) as $mine
		| if ($mine | length) != 1 then "count \($id) \($mine | length)"
		  elif $mine[0] != ($placed[$id] // null) then
			"differs \($id) \($mine[0] | tojson) \($placed[$id] // null | tojson)"
		  else empty end' "$records")
	local overlap
	overlap=$(jq -r --argjson live "$live_json" '
		($live | map({(.): true}) | add // {}) as $is_live
		| .allocations[] | select(.class == "critical" and $is_live[.container_id]) | .cpus' \
		"$records" | tr ',' '\n' | awk -F- 'NF { hi = NF > 1 ? $2 : $1; for (i = $1; i <= hi; i++) print i }' |
		sort -n | uniq -d | paste -sd, -)
	[ -z "$overlap" ] || { echo "soak: PUs given to two live critical containers: $overlap"; bad=$((bad + 1)); }
	# every config.json parses: one jq over all; on a failure, name the file
	if ! find "$SOAK/work" -mindepth 2 -maxdepth 2 -name config.json -print0 |
		xargs -0 -r jq empty >/dev/null 2>&1; then
		for cfg in "$SOAK"/work/*/config.json; do
			jq -e . "$cfg" >/dev/null 2>&1 || { echo "soak: torn $cfg"; bad=$((bad + 1)); }
		done
	fi
	local other
	# what the creates printed (a create's header line is "ID RC"; start
	# and delete lines carry the runtime's own notes)
	other=$(cat "$SOAK"/work/worker-*.log |
		awk '/^[^ ]/ { create = NF == 2 } /^  / && create' |
		grep -av -e 'not enough cpus available to satisfy request' \
			-e 'would leave the shared pool empty' | sort | uniq -c | head -5)
	[ -z "$other" ] || { echo "soak: unexpected stderr:"; echo "$other"; bad=$((bad + 1)); }
	echo "soak: $(wc -w <<<"$live") live containers, $(jq '.allocations | length' "$records") records, $bad problems"
	[ "$bad" = 0 ]
}

# cpuset.cpus of a runc container's cgroup (v1 cpuset hierarchy or v2).
soak_cgroup_cpus() {
	local pid path
	pid=$(runc --root "$SOAK/root" state "$1" 2>/dev/null | jq -r '.pid') || return 1
	[ "$pid" -gt 0 ] 2>/dev/null || return 1
	path=$(awk -F: '$2 ~ /(^|,)cpuset(,|$)/ { print $3 }' "/proc/$pid/cgroup")
	cat "/sys/fs/cgroup/cpuset$path/cpuset.cpus" 2>/dev/null ||
		cat "/sys/fs/cgroup$(awk -F: '$1 == 0 { print $3 }' "/proc/$pid/cgroup")/cpuset.cpus.effective"
}

# Delete every container through toposhim, collect, and expect no record.
soak_drain() {
	local id
	for id in $(ls "$SOAK/root"); do
		soak_env "$TOPOSHIM" --root "$SOAK/root" delete --force "$id" >/dev/null 2>&1 3>&-
	done
	soak_env "$TOPOSHIMCTL" alloc gc --grace 0 >/dev/null 3>&- || return 1
	local left
	left=$(jq '.allocations | length' "$SOAK/state/allocations.json")
	[ "$left" = 0 ] || { echo "soak: $left records left after deleting everything"; return 1; }
}
