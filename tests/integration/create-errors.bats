#!/usr/bin/env bats
# The create path with bad input, against a recording fake runtime: a clear
# one-line error, exit 1, config.json byte-identical, the runtime never run.

load containers

bats_require_minimum_version 1.5.0

setup() {
	containers_setup
	write_demo_spec
	write_config
	export TOPOSHIM_RUNTIME="$TS_SRCDIR/tests/fixtures/fake-runtime"
	export TS_FAKE_RECORD="$WORK/fake"
	mkdir -p "$WORK/b"
	cat >"$WORK/b/config.json" <<'JSON'
{"ociVersion": "1.0.2", "process": {"args": ["sh"], "env": ["PATH=/bin"]},
 "root": {"path": "rootfs"}, "x-unknown": {"keep": [1, 2.50, 1e3], "big": 18446744073709551615},
 "linux": {"resources": {"memory": {"limit": 1073741824, "swap": -1}}},
 "annotations": {"cdi.k8s.io/test": "toposhim.test/dev=zero"}}
JSON
	cp "$WORK/b/config.json" "$WORK/orig.json"
}

teardown() {
	[ ! -d "$WORK/b" ] || chattr -i "$WORK/b" 2>/dev/null || true
	rm -rf "$WORK"
}

@test "create: the edits are written, unknown keys and raw numbers kept byte-exact" {
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ]
	[ "$output" = $'fake-runtime stdout\nfake-runtime stderr' ]
	grep -q '"swap": -1' "$WORK/b/config.json"
	# (jq would normalise the numbers: compare the text with blanks removed)
	tr -d ' \n' <"$WORK/b/config.json" |
		grep -qF '"x-unknown":{"keep":[1,2.50,1e3],"big":18446744073709551615}'
	run jq -c '.process.env' "$WORK/b/config.json"
	[ "$output" = '["PATH=/bin","XZERO=present"]' ]
	# the runtime read the rewritten file
	cmp "$WORK/b/config.json" "$WORK/fake.config.json"
}

@test "create: no CDI request and placement off leave config.json byte-identical" {
	write_config '"placement": {"enabled": false}'
	jq 'del(.annotations)' "$WORK/orig.json" >"$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/noreq.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ]
	cmp "$WORK/noreq.json" "$WORK/b/config.json"
}

@test "create: malformed config.json names the file, line and column" {
	printf '{"ociVersion": "1.0.2",\n "process": {"args": ["sh",]}}\n' >"$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/bad.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == "toposhim: $WORK/b/config.json: line 2 column "*": "* ]]
	[ "${#lines[@]}" -eq 1 ]
	cmp "$WORK/bad.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: a missing bundle is a clear error" {
	run "$TOPOSHIM" create --bundle "$WORK/nope" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: bundle '$WORK/nope': cannot open: No such file or directory" ]
	[ ! -e "$WORK/fake.argv" ]
}

# helper-19: the placement file's error did not name the bundle
@test "create: a bundle where no file can be made is named, config.json untouched" {
	require_root
	chattr +i "$WORK/b" 2>/dev/null || skip "no chattr +i on $(stat -f -c %T "$WORK")"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	chattr -i "$WORK/b"
	[ "$status" -eq 1 ]
	[[ "$output" == "toposhim: $WORK/b: toposhim-placement.json: cannot create temporary file '.toposhim-placement.json.tmp."*"': Operation not permitted" ]] ||
		fail "output: $output"
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: an unknown device lists every unresolved name, config.json untouched" {
	set_annotation "$WORK/b" cdi.k8s.io/a "toposhim.test/dev=nope,toposhim.test/dev=zero"
	set_annotation "$WORK/b" cdi.k8s.io/b "other.vendor/x=y"
	cp "$WORK/b/config.json" "$WORK/before.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	# the first unresolved name's annotation, where toposhim looked
	[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1a': unresolvable CDI devices toposhim.test/dev=nope, other.vendor/x=y (no spec file in $WORK/cdi defines them)" ]
	cmp "$WORK/before.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

# helper-20: a device whose host node is missing failed every create with
# the spec's line alone, not saying which annotation asked for it.
@test "create: a device whose host node is missing names the annotation, the device and the spec's field" {
	printf 'cdiVersion: "0.6.0"\nkind: gone.test/dev\ndevices:\n  - name: gone\n    containerEdits:\n      deviceNodes:\n        - path: /dev/ts-gone\n          hostPath: /dev/ts-test-does-not-exist\n' \
		>"$WORK/cdi/gone.yaml"
	chmod 0644 "$WORK/cdi/gone.yaml"
	set_annotation "$WORK/b" cdi.k8s.io/g "gone.test/dev=gone"
	cp "$WORK/b/config.json" "$WORK/before.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1g': CDI device 'gone.test/dev=gone': $WORK/cdi/gone.yaml: '/devices/0/containerEdits/deviceNodes/0': host device '/dev/ts-test-does-not-exist' does not exist" ]
	cmp "$WORK/before.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: an invalid qualified name is refused" {
	set_annotation "$WORK/b" cdi.k8s.io/test "foobar"
	cp "$WORK/b/config.json" "$WORK/before.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1test': invalid qualified device name 'foobar': missing '='" ]
	cmp "$WORK/before.json" "$WORK/b/config.json"
	# an empty name between commas, and one with a space, are no better
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/dev=zero,,"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1test': empty device name at position 2 of the list (a ',' too many)" ]
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/dev=zero, toposhim.test/dev=zero"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1test': invalid qualified device name ' toposhim.test/dev=zero': invalid vendor ' toposhim.test': should start with a letter" ]
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: a broken spec file is reported and does not hide the good one" {
	printf 'cdiVersion: "0.6.0"\nkind: broken.test/dev\ndevices: "oops"\n' >"$WORK/cdi/broken.yaml"
	chmod 0644 "$WORK/cdi/broken.yaml"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "toposhim: warning: CDI registry: $WORK/cdi/broken.yaml: "*", ignoring" ]]
	run jq -c '.devices' "$WORK/b/toposhim-placement.json"
	[ "$output" = '["toposhim.test/dev=zero"]' ]
}

@test "create: the error goes to --log as one JSON line" {
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/dev=nope"
	run "$TOPOSHIM" --log "$WORK/log.json" --log-format json create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$(wc -l <"$WORK/log.json")" -eq 1 ]
	run jq -r '.level + " " + .msg' "$WORK/log.json"
	[ "$output" = "error toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1test': unresolvable CDI devices toposhim.test/dev=nope (no spec file in $WORK/cdi defines it)" ]
	jq -e '.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$")' "$WORK/log.json"
}

@test "create: a world-writable spec file is refused with its path and mode" {
	[ "$(id -u)" -eq 0 ] || skip "needs root: only root-owned spec files are checked (uid $(id -u))"
	chmod 0666 "$WORK/cdi/test.yaml"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[[ "$output" == *"$WORK/cdi/test.yaml"*"0666"* ]]
	# one line tells why, the ignored file in it (helper-24: podman
	# without a --log file shows every stderr line; the registry's
	# warning about the file followed the refusal)
	[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1test': unresolvable CDI devices toposhim.test/dev=zero (no spec file in $WORK/cdi defines it; ignored: $WORK/cdi/test.yaml: refusing spec file writable by non-root (mode 0666, gid 0))" ]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
}

# helper-21: a create refused for its config's policy had made the state
# dir, its lock and the topology cache first (/run/toposhim, for a config
# without "state_dir"); with a CDI request, the dir for the CDI index too
@test "create: a config whose policy does not read is refused before the state dir is made" {
	cat >"$WORK/bad.json" <<CONF
{"cdi": {"spec_dirs": ["$WORK/cdi"]}, "state_dir": "$WORK/newstate",
 "policy": {"unscoped": {"classes": "critical"}}}
CONF
	run env TOPOSHIM_CONFIG="$WORK/bad.json" "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/bad.json: '/policy/unscoped/classes': expected array of strings, got string" ]
	[ ! -e "$WORK/newstate" ]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: a misspelt key in the toposhim config is refused" {
	cat >"$WORK/toposhim.json" <<CONF
{"cdi": {"spec_dirs": ["$WORK/cdi"]}, "state_dir": "$WORK/state", $TS_TEST_POLICY, "placment": {}}
CONF
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/toposhim.json: '/placment': unknown key" ]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
}

@test "create: a relative topology file in the toposhim config is refused" {
	cat >"$WORK/toposhim.json" <<CONF
{$(cdi_config), "state_dir": "$WORK/state", "topology": {"xml": "t.xml"}}
CONF
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/toposhim.json: '/topology/xml': not absolute 't.xml'" ]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: a topology file the config names that is missing is refused, naming the field" {
	cat >"$WORK/toposhim.json" <<CONF
{$(cdi_config), "state_dir": "$WORK/state", "topology": {"xml": "$WORK/none.xml"}}
CONF
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/toposhim.json: '/topology/xml': $WORK/none.xml: cannot read topology: No such file or directory" ]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: explicit mems naming a missing memory node are refused" {
	jq '.linux.resources.cpu = {"cpus": "0", "mems": "0,7"}' "$WORK/b/config.json" >"$WORK/b.json"
	mv "$WORK/b.json" "$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/before.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: '/linux/resources/cpu/mems': no memory node '7' on this machine" ]
	cmp "$WORK/before.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: a topology hwloc refuses is one line of ours, none of hwloc's" {
	# the project's 8-PU machine without its NUMA node element
	sed '/type="NUMANode"/,/<\/object>/d' "$TS_FIXTURES/topology/4c2t.xml" >"$WORK/no-numa.xml"
	[ "$(grep -c NUMANode "$WORK/no-numa.xml")" = 0 ]
	cp "$WORK/b/config.json" "$WORK/before.json"
	# hwloc 2.9 leaks the objects of a load it aborts (no NUMA node): in the
	# sanitizer build, LeakSanitizer would add its report to this output
	ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" TOPOSHIM_TOPOLOGY_XML="$WORK/no-numa.xml" \
		run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/no-numa.xml: invalid hwloc xml topology" ]
	cmp "$WORK/before.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}

@test "create: config.json restored after a failed commit keeps its owner and mode" {
	[ "$(id -u)" -eq 0 ] || skip "needs root to chown config.json and mount a tmpfs (uid $(id -u))"
	chown 1234:5678 "$WORK/b/config.json"
	chmod 0640 "$WORK/b/config.json"
	mkdir -p "$WORK/state"
	# the state store cannot be written: a full tmpfs, in a mount namespace of its own
	run unshare -m --propagation private sh -c '
		mount -t tmpfs -o size=64k,mode=0700 none "$1" &&
		dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null
		shift
		exec "$@"' sh "$WORK/state" "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/state: allocations.json: cannot replace: No space left on device" ] ||
		{ echo "$output"; false; }
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	[ "$(stat -c '%u:%g %a' "$WORK/b/config.json")" = "1234:5678 640" ]
	[ ! -e "$WORK/fake.config.json" ]
}

@test "create: text runc and crun would read differently is refused, config.json untouched" {
	# overlong '/' (C0 AF): yajl takes the bytes, runc reads U+FFFD
	printf '{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "x": "a\300\257b"}\n' \
		>"$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/orig.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: line 1 column 60: invalid UTF-8 byte 0xc0 (malformed, overlong or surrogate sequence)" ] ||
		{ echo "$output"; false; }
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.config.json" ]
	# a lone surrogate: yajl makes '?' of it, runc U+FFFD
	printf '{"ociVersion": "1.0.2", "root": {"path": "rootfs"}, "x": "a\\ud800b"}\n' \
		>"$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/orig.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: line 1 column 60: lone UTF-16 surrogate escape '\\ud800'" ] ||
		{ echo "$output"; false; }
	cmp "$WORK/orig.json" "$WORK/b/config.json"
}

@test "create: a 100,000-byte request value is quoted clipped, config.json untouched" {
	local long x64
	long=$(head -c 100000 /dev/zero | tr '\0' x)
	x64=$(head -c 64 /dev/zero | tr '\0' x)
	for key in cpus class numa memory-tier; do
		cp "$WORK/orig.json" "$WORK/b/config.json"
		set_annotation "$WORK/b" "toposhim.io/$key" "$long"
		cp "$WORK/b/config.json" "$WORK/before.json"
		run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
		[ "$status" -eq 1 ]
		case $key in
		cpus) want="invalid cpu count '$x64...'" ;;
		class) want="unknown class '$x64...'" ;;
		numa) want="invalid numa policy '$x64...' (prefer, single or exclusive)" ;;
		memory-tier) want="invalid memory tier '$x64...' (dram, hbm, cxl, pmem or gpu)" ;;
		esac
		[ "$output" = "toposhim: $WORK/b/config.json: '/annotations/toposhim.io~1$key': $want" ] ||
			{ echo "$key: ${output:0:300}"; false; }
		cmp "$WORK/before.json" "$WORK/b/config.json"
	done
}

@test "create: cpu.shares kept over the class is an info line in the engine's log, not a warning on stderr" {
	# a critical container holds a CPU (its runtime dir stands for a live
	# container): the plain summary is withdrawn, a plain create goes to
	# the core, which applies the standard class
	mkdir -p "$WORK/rt/$ID-crit" "$WORK/c"
	jq '.annotations = {"toposhim.io/class": "critical", "toposhim.io/cpus": "1"}' \
		"$WORK/orig.json" >"$WORK/c/config.json"
	"$TOPOSHIM" --root "$WORK/rt" create --bundle "$WORK/c" "$ID-crit" >/dev/null 2>&1
	# kubelet gives every pod sandbox (pause) cpu.shares 2
	jq '.linux.resources.cpu = {"shares": 2} | del(.annotations)' "$WORK/orig.json" >"$WORK/b/config.json"
	run --separate-stderr "$TOPOSHIM" --root "$WORK/rt" --log "$WORK/log.json" --log-format json \
		create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 0 ]
	[ "$stderr" = "fake-runtime stderr" ]
	[ "$(jq -c '.linux.resources.cpu.shares' "$WORK/fake.config.json")" = 2 ]
	run jq -r 'select(.msg | test("engine value")) | "\(.level) \(.msg)"' "$WORK/log.json"
	[ "$output" = "info toposhim: $WORK/b/config.json: '/linux/resources/cpu/shares': engine value '2' kept over class 'standard' value '1024' (cpu.weight 100)" ]
}

# helper-9: a misspelt request key ran the container in the standard class
# without a word
@test "create: a toposhim.io/ annotation that is no request key is named in a warning, the create goes on" {
	set_annotation "$WORK/b" toposhim.io/clas critical
	"$TOPOSHIM" create --bundle "$WORK/b" "$ID" >"$WORK/out" 2>"$WORK/err"
	[ "$(cat "$WORK/out")" = "fake-runtime stdout" ]
	[ "$(cat "$WORK/err")" = "toposhim: warning: $WORK/b/config.json: '/annotations/toposhim.io~1clas': not a toposhim request (class, cpus, numa, memory-tier, cdi), ignoring
fake-runtime stderr" ] || fail "stderr: $(cat "$WORK/err")"
	[ -e "$WORK/fake.config.json" ]
	# and to the state dir's creates.log, which outlives the engine's log
	run sed -E 's/^[0-9T:-]{19}Z pid [0-9]+: //' "$WORK/state/creates.log"
	[ "$output" = "container '$ID': warning: $WORK/b/config.json: '/annotations/toposhim.io~1clas': not a toposhim request (class, cpus, numa, memory-tier, cdi), ignoring" ] ||
		fail "creates.log: $output"
}

# helper-24: podman without a --log file shows every line of the runtime's
# stderr: a warning held before the refusal followed it there
@test "create: refused, the warnings before it are not on stderr; a --log file has them after the error" {
	set_annotation "$WORK/b" toposhim.io/clas critical
	set_annotation "$WORK/b" cdi.k8s.io/test "toposhim.test/dev=nope"
	local want="toposhim: $WORK/b/config.json: '/annotations/cdi.k8s.io~1test': unresolvable CDI devices toposhim.test/dev=nope (no spec file in $WORK/cdi defines it)"
	local warn="toposhim: $WORK/b/config.json: '/annotations/toposhim.io~1clas': not a toposhim request (class, cpus, numa, memory-tier, cdi), ignoring"
	cp "$WORK/b/config.json" "$WORK/asked.json"
	run --separate-stderr "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$want" ] || fail "stderr: $stderr"
	[ -z "$output" ]
	run --separate-stderr "$TOPOSHIM" --log "$WORK/log.json" --log-format json create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$stderr" = "$want" ] || fail "stderr: $stderr"
	run jq -r '.level + " " + .msg' "$WORK/log.json"
	[ "$output" = "error $want
warning $warn" ] || fail "log: $output"
	cmp "$WORK/asked.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.config.json" ]
}

@test "create: cpus that are not online, in config.json or the reserved ones, are named with what is online" {
	local online
	online=$(cat /sys/devices/system/cpu/online)
	jq '.linux.resources.cpu = {"cpus": "0,4095"}' "$WORK/orig.json" >"$WORK/b/config.json"
	cp "$WORK/b/config.json" "$WORK/pinned.json"
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/b/config.json: '/linux/resources/cpu/cpus': '0,4095' names cpus that are not online: 4095 (online: $online)" ]
	cmp "$WORK/pinned.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]

	cp "$WORK/orig.json" "$WORK/b/config.json"
	write_config '"placement": {"reserved": {"cpus": "0,4094-4095"}}'
	run "$TOPOSHIM" create --bundle "$WORK/b" "$ID"
	[ "$status" -eq 1 ]
	[ "$output" = "toposhim: $WORK/toposhim.json: '/placement/reserved/cpus': '0,4094-4095' names cpus that are not online: 4094-4095 (online: $online)" ]
	cmp "$WORK/orig.json" "$WORK/b/config.json"
	[ ! -e "$WORK/fake.argv" ]
}
