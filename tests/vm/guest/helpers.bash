# helpers.bash - shared by the guest bats files (tests/vm/guest/*.bats).
#
# These run inside the qemu guest built by tests/vm/run.sh, as root, on a
# pure cgroup v2 hierarchy.  The layout arrives as environment (see
# /etc/ts-vm-env): TS_VM_LAYOUT, TS_VM_SOCKETS, TS_VM_CORES, TS_VM_THREADS,
# TS_VM_CPUS, TS_VM_CPU_LIST, TS_VM_NUMA_NODES, TS_VM_NODE<n>_CPUS,
# TS_VM_DISK_NODE, TS_VM_DISK_CPUS.  Tests derive every expected value from
# these, so each layout runs the same files.
#
# A runtime "variant" names how a container is started: runc, crun (the
# runtime directly), toposhim-runc, toposhim-crun (toposhim with
# TOPOSHIM_RUNTIME pointing at the runtime).
#
# shellcheck disable=SC2016 # $names in single quotes are jq variables

load /usr/lib/bats/bats-support/load
load /usr/lib/bats/bats-assert/load

TS_TEMPLATE=/opt/ts-vm/bundle
TS_CGROUP_PARENT=/ts-vm
TS_STARTED=()

# Fail unless the layout variables this file relies on are set.
ts_require_layout()
{
	local v
	for v in TS_VM_LAYOUT TS_VM_CPUS TS_VM_CPU_LIST TS_VM_NUMA_NODES TS_VM_THREADS \
		TS_VM_SOCKETS TS_VM_DISK_NODE TS_VM_DISK_CPUS; do
		[ -n "${!v:-}" ] || fail "layout variable $v is not set (is this the ts-vm guest?)"
	done
}

# The real runtime behind a variant.
ts_runtime_path()
{
	case $1 in
	runc | toposhim-runc) echo /usr/sbin/runc ;;
	crun | toposhim-crun) echo /usr/bin/crun ;;
	*) fail "unknown runtime variant '$1'" ;;
	esac
}

# toposhim must pass a command it does not rewrite straight to the runtime,
# so "toposhim --version" prints exactly what the runtime prints.  The
# skeleton main of an unmerged branch prints nothing and exits 0: skip
# (with the reason) in that one case unless TS_VM_REQUIRE_TOPOSHIM=1; any
# other difference is a failure.
ts_require_toposhim()
{
	local runtime=$1 want got rc=0
	[ -x /usr/bin/toposhim ] || fail "toposhim is not in the guest"
	want=$("$runtime" --version)
	got=$(TOPOSHIM_RUNTIME=$runtime /usr/bin/toposhim --version 2>"$BATS_TEST_TMPDIR/toposhim.err") || rc=$?
	[ "$got" = "$want" ] && return 0
	if [ -z "$got" ] && [ "$rc" -eq 0 ] && [ ! -s "$BATS_TEST_TMPDIR/toposhim.err" ] &&
		[ "${TS_VM_REQUIRE_TOPOSHIM:-0}" != 1 ]; then
		skip "toposhim does not exec the runtime yet ('toposhim --version' printed nothing and exited 0)"
	fi
	echo "toposhim --version exited $rc, stdout:"
	echo "$got"
	echo "stderr:"
	cat "$BATS_TEST_TMPDIR/toposhim.err"
	echo "$runtime --version:"
	echo "$want"
	fail "toposhim does not pass '--version' through to $runtime"
}

# The operator policy the guest tests run under (src/policy/policy.h):
# unscoped containers may ask for everything, as the host's root may.
TS_TEST_POLICY='{"unscoped": {"classes": ["*"], "numa": ["*"], "memory_tiers": ["*"], "devices": ["*"]}}'

# Set RT to the command (array) that starts containers for variant $1.
# A toposhim variant reads the toposhim config TS_TOPOSHIM_CONFIG when that
# is set, else a config of nothing but the test policy (the guest has no
# /etc/toposhim/config.json: built-in defaults otherwise).
ts_runtime()
{
	local runtime
	runtime=$(ts_runtime_path "$1")
	case $1 in
	runc | crun) RT=("$runtime") ;;
	toposhim-*)
		ts_require_toposhim "$runtime"
		RT=(env "TOPOSHIM_RUNTIME=$runtime")
		if [ -z "${TS_TOPOSHIM_CONFIG:-}" ]; then
			echo "{\"policy\": $TS_TEST_POLICY}" >"$BATS_TEST_TMPDIR/policy.json"
			RT+=("TOPOSHIM_CONFIG=$BATS_TEST_TMPDIR/policy.json")
		else
			RT+=("TOPOSHIM_CONFIG=$TS_TOPOSHIM_CONFIG")
		fi
		RT+=(/usr/bin/toposhim)
		;;
	esac
}

# ts_bundle_new VARIANT [NAME]: a fresh bundle in $BATS_TEST_TMPDIR/NAME
# (default "c"): a copy of the template's config.json whose root.path is the
# shared read-only busybox rootfs, and cgroupsPath /ts-vm/<container id>.
# Sets BUNDLE and CONTAINER_ID (unique per test, variant and name) and
# remembers the container for ts_cleanup_containers.
ts_bundle_new()
{
	local variant=$1 name=${2:-c}
	BUNDLE=$BATS_TEST_TMPDIR/$name
	CONTAINER_ID=ts-$BATS_TEST_NUMBER-$variant-$name
	mkdir -p "$BUNDLE"
	cp "$TS_TEMPLATE/config.json" "$BUNDLE/config.json"
	ts_config '.linux.cgroupsPath = $p' --arg p "$TS_CGROUP_PARENT/$CONTAINER_ID"
	TS_STARTED+=("$variant $CONTAINER_ID")
}

# ts_assert_numa_exclusive_refused VARIANT NAME: on a one-node layout a
# numa=exclusive container would take every PU and leave the shared pool
# empty.  The create must fail with exit 1 and toposhim's one-line message,
# config.json must stay byte-identical, and no allocation may be left.
ts_assert_numa_exclusive_refused()
{
	local variant=$1 name=$2 want
	ts_runtime "$variant"
	ts_bundle_new "$variant" "$name"
	ts_config '.annotations = ((.annotations // {}) + $a)' --argjson a \
		'{"toposhim.io/class": "critical", "toposhim.io/numa": "exclusive"}'
	cp "$BUNDLE/config.json" "$BUNDLE/config.json.before"
	run "${RT[@]}" run -d --bundle "$BUNDLE" "$CONTAINER_ID" </dev/null
	want="toposhim: $BUNDLE/config.json: '/annotations/toposhim.io~1cpus': taking cpus"
	want="$want $TS_VM_CPU_LIST would leave the shared pool empty"
	[ "$status" -eq 1 ] || fail "exit $status, want 1: $output"
	[ "$output" = "$want" ] || fail "got '$output', want '$want'"
	cmp "$BUNDLE/config.json.before" "$BUNDLE/config.json" || fail "config.json was changed"
	run /usr/bin/toposhimctl alloc list --json
	[ "$status" -eq 0 ] || fail "toposhimctl alloc list: $output"
	[ "$(jq --arg id "$CONTAINER_ID" '[.[] | select(.container_id == $id)] | length' <<<"$output")" = 0 ] ||
		fail "an allocation of $CONTAINER_ID was left: $output"
}

# ts_config FILTER [JQ_ARGS...]: edit $BUNDLE/config.json with jq.
ts_config()
{
	local filter=$1
	shift
	jq "$@" "$filter" "$BUNDLE/config.json" >"$BUNDLE/config.json.new" ||
		fail "jq '$filter' failed on $BUNDLE/config.json"
	mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
}

# ts_start_reporting VARIANT [SHELL]: start the container of $BUNDLE
# detached with VARIANT, running: report its Cpus/Mems_allowed_list from
# /proc/self/status, run SHELL (more lines to report), say "ready", sleep.
# Its stdout/stderr go to $BUNDLE/out and $BUNDLE/err (never to bats'
# pipes, which a detached container would hold open).
ts_start_reporting()
{
	local variant=$1 extra=${2:-} i rc=0
	ts_config '.process.args = ["sh", "-c", $script]' --arg script \
		"grep -E '^(Cpus|Mems)_allowed_list:' /proc/self/status; $extra${extra:+; }echo ready; exec sleep 600"
	ts_runtime "$variant"
	"${RT[@]}" run -d --bundle "$BUNDLE" "$CONTAINER_ID" \
		</dev/null >"$BUNDLE/out" 2>"$BUNDLE/err" || rc=$?
	if [ "$rc" -ne 0 ]; then
		cat "$BUNDLE/err"
		fail "$variant run -d exited $rc"
	fi
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready$' "$BUNDLE/out" && return 0
		sleep 0.1
	done
	cat "$BUNDLE/out" "$BUNDLE/err"
	fail "container $CONTAINER_ID did not report within 30s"
}

# The init pid of the running container, from the runtime's state.
ts_container_pid()
{
	local runtime
	runtime=$(ts_runtime_path "$1")
	"$runtime" state "$CONTAINER_ID" | jq -r .pid
}

# Print the cgroup v2 path (relative to /sys/fs/cgroup, with a leading /)
# of process $1.
ts_cgroup_of()
{
	sed -n 's/^0:://p' "/proc/$1/cgroup"
}

# Remove every container ts_bundle_new made in this test, with the runtime
# itself (not through toposhim, so a toposhim bug cannot leave containers
# behind).  For teardown.
ts_cleanup_containers()
{
	local entry runtime
	for entry in "${TS_STARTED[@]}"; do
		runtime=$(ts_runtime_path "${entry%% *}")
		"$runtime" delete -f "${entry#* }" >/dev/null 2>&1 || true
	done
	TS_STARTED=()
}

# ts_reported FIELD: the value the container of $BUNDLE reported for
# FIELD (Cpus_allowed_list, Mems_allowed_list, ...).
ts_reported()
{
	sed -n "s/^$1:[[:space:]]*//p" "$BUNDLE/out"
}

# Expand a cpu list ("0-2,5") into one number per line.
ts_list_expand()
{
	local part lo hi
	local IFS=,
	for part in $1; do
		lo=${part%-*}
		hi=${part#*-}
		seq "$lo" "$hi"
	done
}

# Print numbers (arguments) as a kernel-style cpu list ("0-3,6"), sorted.
ts_list_compress()
{
	local out='' lo='' hi='' n
	for n in $(printf '%s\n' "$@" | sort -n -u); do
		if [ -z "$lo" ]; then
			lo=$n
			hi=$n
		elif [ "$n" -eq $((hi + 1)) ]; then
			hi=$n
		else
			out+="${out:+,}$lo"
			[ "$hi" -eq "$lo" ] || out+="-$hi"
			lo=$n
			hi=$n
		fi
	done
	if [ -n "$lo" ]; then
		out+="${out:+,}$lo"
		[ "$hi" -eq "$lo" ] || out+="-$hi"
	fi
	echo "$out"
}

# ts_list_minus A B: the cpu list A without the PUs of B.
ts_list_minus()
{
	local pu keep=()
	local -A drop=()
	for pu in $(ts_list_expand "$2"); do
		drop[$pu]=1
	done
	for pu in $(ts_list_expand "$1"); do
		[ -n "${drop[$pu]:-}" ] || keep+=("$pu")
	done
	ts_list_compress "${keep[@]}"
}

# ts_nodes_of LIST: the NUMA nodes (as a list) holding any PU of LIST.
ts_nodes_of()
{
	local n var pu nodes=()
	local -A want=()
	for pu in $(ts_list_expand "$1"); do
		want[$pu]=1
	done
	for ((n = 0; n < TS_VM_NUMA_NODES; n++)); do
		var=TS_VM_NODE${n}_CPUS
		for pu in $(ts_list_expand "${!var}"); do
			if [ -n "${want[$pu]:-}" ]; then
				nodes+=("$n")
				break
			fi
		done
	done
	ts_list_compress "${nodes[@]}"
}

# CDI: a spec exposing the guest's virtio disk as $TS_CDI_DEVICE.  The spec
# dir /etc/cdi is root-owned and not writable by others, as toposhim requires.
TS_CDI_SPEC=/etc/cdi/ts-vm-disk.json
# shellcheck disable=SC2034 # used by the bats files
TS_CDI_DEVICE=vm.toposhim.io/disk=vda

ts_cdi_disk_install()
{
	mkdir -p /etc/cdi
	cat >"$TS_CDI_SPEC" <<-'EOF'
		{
		  "cdiVersion": "0.6.0",
		  "kind": "vm.toposhim.io/disk",
		  "devices": [
		    { "name": "vda", "containerEdits": { "deviceNodes": [ { "path": "/dev/vda" } ] } }
		  ]
		}
	EOF
}

ts_cdi_disk_remove()
{
	rm -f "$TS_CDI_SPEC"
}
