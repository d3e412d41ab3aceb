/* Unit tests of src/cdi/spec.c and src/cdi/yaml.c: the corpus verdicts and the validator's rules.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cdi/cdi.h"
#include "util/cleanup.h"
#include "select.h"

/*
 * Every file of ../shared/corpus/cdi with its verdict from INDEX.md: NULL =
 * valid, else the exact message after "<path>: ".  Deliberate difference: #28
 * (invalid annotation key) is accepted by the reference's cache but rejected
 * here, like the reference's cmd/validate and the Rust library do.
 */
static const struct corpus_row {
	const char *file;
	const char *want_msg;
} corpus[] = {
	{"ROCm_container-toolkit_amd.json", NULL},
	{"cncf-tags_container-device-interface_README-vendor-annotations.json",
	 "line 9 column 10: parse error: after key and value, inside map, I expect ',' or '}'"},
	{"cncf-tags_container-device-interface_README-vendor.json", NULL},
	{"cncf-tags_container-device-interface_empty.json", "empty document"},
	{"cncf-tags_container-device-interface_explicit-empty.json",
	 "'/cdiVersion': required field missing"},
	{"cncf-tags_container-device-interface_minimal.json", NULL},
	{"cncf-tags_container-device-interface_spec-example.json", NULL},
	{"containers_podman_device.json", NULL},
	{"NVIDIA_nvidia-container-toolkit_generate_test-default.yaml", NULL},
	{"NVIDIA_nvidia-container-toolkit_generate_test-disableHooksAll.yaml", NULL},
	{"NVIDIA_nvidia-container-toolkit_generate_test-enableChmodHook-management.yaml", NULL},
	{"cncf-tags_container-device-interface-rs_cdi-empty-devices.yaml",
	 "'/devices': invalid spec, no devices"},
	{"cncf-tags_container-device-interface-rs_cdi-invalid-annotation.yaml",
	 "'/annotations/inva$$lid_CDIKEY': invalid annotation key 'inva$$lid_CDIKEY'"},
	{"cncf-tags_container-device-interface-rs_cdi-unknown-field.yaml",
	 "'/unknownTopLevel': unknown key 'unknownTopLevel'"},
	{"cncf-tags_container-device-interface-rs_cdi-v1.0-enable-monitoring.yaml", NULL},
	{"cncf-tags_container-device-interface-rs_cdi-v1.0-legacy-intel-rdt.yaml",
	 "'/containerEdits/intelRdt/enableCMT': unknown key 'enableCMT'"},
	{"cncf-tags_container-device-interface-rs_cdi-v1.1-good.yaml", NULL},
	{"cncf-tags_container-device-interface-rs_cdi-v1.1-legacy-intel-rdt.yaml",
	 "'/containerEdits/intelRdt/enableCMT': unknown key 'enableCMT'"},
	{"cncf-tags_container-device-interface_TUTORIAL-tutorial.yaml", NULL},
	{"cncf-tags_container-device-interface_cache_test-conflict-run-vendor1-other.yaml", NULL},
	{"cncf-tags_container-device-interface_cache_test-conflict-run-vendor1.yaml", NULL},
	{"cncf-tags_container-device-interface_cache_test-inject-several-hooks.yaml", NULL},
	{"cncf-tags_container-device-interface_cache_test-invalid-kind-no-slash.yaml",
	 "'/kind': invalid kind 'vendor1.comdevice': missing '/' between vendor and class"},
	{"cncf-tags_container-device-interface_cache_test-no-devices.yaml",
	 "'/devices': required field missing"},
	{"cncf-tags_container-device-interface_cache_test-override-etc-vendor1.yaml", NULL},
	{"cncf-tags_container-device-interface_cache_test-override-run-vendor1.yaml", NULL},
	{"cncf-tags_container-device-interface_issue285-mount-no-type.yaml", NULL},
	{"cncf-tags_container-device-interface_regressions_test-vendor1.yaml", NULL},
	{"cncf-tags_container-device-interface_regressions_test-vendor2.yaml", NULL},
	{"cncf-tags_container-device-interface_spec_test-duplicate-device-name.yaml",
	 "'/devices/2/name': duplicate device name 'dev1' (also /devices/0)"},
	{"cncf-tags_container-device-interface_spec_test-empty-cdiVersion.yaml",
	 "'/cdiVersion': invalid version ''"},
	{"cncf-tags_container-device-interface_spec_test-invalid-class.yaml",
	 "'/kind': invalid kind 'vendor.com/device=': invalid class 'device=': should end with a "
	 "letter or digit"},
	{"cncf-tags_container-device-interface_spec_test-invalid-vendor.yaml",
	 "'/kind': invalid kind 'vendor.com-/device': invalid vendor 'vendor.com-': should end "
	 "with a letter or digit"},
	{"cncf-tags_container-device-interface_spec_test-invalid-version-0.0.0.yaml",
	 "'/cdiVersion': invalid version '0.0.0'"},
	{"cncf-tags_container-device-interface_spec_test-missing-cdiVersion.yaml",
	 "'/cdiVersion': required field missing"},
	{"cncf-tags_container-device-interface_spec_test-missing-device-edits.yaml",
	 "'/devices/0/containerEdits': required field missing"},
	{"cncf-tags_container-device-interface_spec_test-tmpfs-mount-v0.4.0.yaml", NULL},
	{"cncf-tags_container-device-interface_spec_test-unknown-field-garbled.yaml",
	 "'/xyzzy': unknown key 'xyzzy'"},
	{"cri-o_cri-o_vendor0-cdiVersion-0.2.0.yaml",
	 "'/cdiVersion': unsupported version '0.2.0': the spec version must be at least 0.3.0"},
	{"cri-o_cri-o_vendor0.yaml", NULL},
	{"cri-o_cri-o_vendor1.yaml", "'/devices': expected array, got string"},
	{"intel_intel-device-plugins-for-kubernetes_cdi-gpu0.yaml", NULL},
	{"moby_buildkit_client_cdi_test-vendor1-device-class.yaml", NULL},
	{"moby_moby_issue47633-test.yaml", "'/devices/0/containerEdits': required field missing"},
};

static void test_corpus_verdicts(void **state)
{
	const char *shared = getenv("TS_SHARED_DIR");

	assert_non_null(shared); /* selected only when the corpus is there */
	assert_int_equal(ARRAY_SIZE(corpus), 44);
	for (size_t i = 0; i < ARRAY_SIZE(corpus); i++) {
		cleanup_free char *path = NULL, *want = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_cdi_spec *spec = NULL;
		int r;

		assert_true(asprintf(&path, "%s/corpus/cdi/%s", shared, corpus[i].file) > 0);
		r = ts_cdi_spec_load(path, 0, &spec, &err);
		if (corpus[i].want_msg == NULL) {
			if (r != 0)
				fail_msg("%s: want valid, got %s", corpus[i].file, err->msg);
			assert_non_null(spec);
			ts_cdi_spec_free(spec);
			continue;
		}
		assert_true(asprintf(&want, "%s: %s", path, corpus[i].want_msg) > 0);
		if (r != -EINVAL || err == NULL || strcmp(err->msg, want) != 0)
			fail_msg("%s: want -EINVAL '%s', got %d '%s'", corpus[i].file, want, r,
				 err ? err->msg : "(none)");
		assert_null(spec);
	}
}

/* Inline documents: name, text (".yaml" in name picks YAML), want message after "<name>: ". */
static const struct doc_row {
	const char *name;
	const char *text;
	const char *want_msg;
} docs[] = {
	/* a UTF-8 byte order mark before a JSON spec is skipped, as the
	 * reference's YAML decoder skips it; anywhere else it is text */
	{"bom.json",
	 "\xef\xbb\xbf{\"cdiVersion\": \"0.6.0\", \"kind\": \"a.com/b\", \"devices\": "
	 "[{\"name\": \"x\", \"containerEdits\": {\"env\": [\"A=1\"]}}]}",
	 NULL},
	{"bom-twice.json", "\xef\xbb\xbf\xef\xbb\xbf{\"cdiVersion\": \"0.6.0\"}",
	 "line 1 column 1: lexical error: invalid char in json text"},
	{"v-prefix.yaml",
	 "cdiVersion: v1.1.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {env: [A=1]}}]\n",
	 NULL},
	{"hostpath-needs-050.yaml",
	 "cdiVersion: 0.4.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, hostPath: /dev/y}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/hostPath': deviceNodes hostPath requires "
	 "cdiVersion 0.5.0 or later, the spec declares '0.4.0'"},
	{"digit-name-needs-050.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: 0, containerEdits: {env: [A=1]}}]\n",
	 "'/devices/0/name': a device name starting with a digit requires cdiVersion 0.5.0 or "
	 "later, the spec declares '0.3.0'"},
	{"annotations-need-060.yaml",
	 "cdiVersion: 0.5.0\nkind: a.com/b\nannotations: {a.b/c: d}\ndevices: [{name: x, "
	 "containerEdits: {env: [A=1]}}]\n",
	 "'/annotations': annotations requires cdiVersion 0.6.0 or later, the spec declares "
	 "'0.5.0'"},
	{"class-dot-needs-060.yaml",
	 "cdiVersion: 0.5.0\nkind: a.com/b.c\ndevices: [{name: x, containerEdits: {env: [A=1]}}]\n",
	 "'/kind': a '.' in the class requires cdiVersion 0.6.0 or later, the spec declares "
	 "'0.5.0'"},
	{"rdt-needs-070.yaml",
	 "cdiVersion: 0.6.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {intelRdt: "
	 "{closID: c}}}]\n",
	 "'/devices/0/containerEdits/intelRdt': intelRdt requires cdiVersion 0.7.0 or later, the "
	 "spec declares '0.6.0'"},
	{"gids-need-070.yaml",
	 "cdiVersion: 0.6.0\nkind: a.com/b\ncontainerEdits: {additionalGids: [5]}\ndevices: "
	 "[{name: x, containerEdits: {env: [A=1]}}]\n",
	 "'/containerEdits/additionalGids': additionalGids requires cdiVersion 0.7.0 or later, the "
	 "spec declares '0.6.0'"},
	{"netdev-needs-110.yaml",
	 "cdiVersion: 1.0.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {netDevices: "
	 "[{hostInterfaceName: eth0, name: e0}]}}]\n",
	 "'/devices/0/containerEdits/netDevices': netDevices requires cdiVersion 1.1.0 or later, "
	 "the spec declares '1.0.0'"},
	{"schemata-needs-110.yaml",
	 "cdiVersion: 1.0.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {intelRdt: "
	 "{schemata: []}}}]\n",
	 "'/devices/0/containerEdits/intelRdt/schemata': intelRdt schemata requires cdiVersion "
	 "1.1.0 or later, the spec declares '1.0.0'"},
	{"monitoring-needs-110.yaml",
	 "cdiVersion: 1.0.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {intelRdt: "
	 "{enableMonitoring: true}}}]\n",
	 "'/devices/0/containerEdits/intelRdt/enableMonitoring': intelRdt enableMonitoring "
	 "requires cdiVersion 1.1.0 or later, the spec declares '1.0.0'"},
	{"mount-type-needs-040.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: x, containerEdits: {mounts: "
	 "[{hostPath: /a, containerPath: /b, type: bind}]}}]\n",
	 "'/devices/0/containerEdits/mounts/0/type': mount type requires cdiVersion 0.4.0 or "
	 "later, the spec declares '0.3.0'"},
	{"not-absolute.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {env: [A=1]}}, "
	 "{name: b, containerEdits: {env: [A=1]}}, {name: c, containerEdits: {deviceNodes: [{path: "
	 "dev/x0}]}}]\n",
	 "'/devices/2/containerEdits/deviceNodes/0/path': not absolute 'dev/x0'"},
	{"dotdot-node.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/../etc/passwd, hostPath: /dev/null}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/path': '..' in container path "
	 "'/dev/../etc/passwd'"},
	{"dotdot-mount.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {mounts: "
	 "[{hostPath: /a, containerPath: /x/..}]}}]\n",
	 "'/devices/0/containerEdits/mounts/0/containerPath': '..' in container path '/x/..'"},
	/* a name with dots in it is no ".." component */
	{"dots-in-names.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {mounts: "
	 "[{hostPath: /a, containerPath: /x/..y/z../..., options: [bind]}]}}]\n",
	 NULL},
	{"bad-perms.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, permissions: rwx}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/permissions': invalid permissions 'rwx' (want a "
	 "combination of r, w, m, or none)"},
	/* as the reference: "" is rwm, letters may repeat */
	{"perms-empty.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, permissions: \"\"}, {path: /dev/y, permissions: rrw}]}}]\n",
	 NULL},
	/* -1 would be a wildcard in the cgroup rule */
	{"major-negative.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, type: c, major: -1, minor: 1}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/major': expected an integer from 0 to "
	 "4095, got '-1'"},
	/* a Linux device number: 12-bit major, 20-bit minor; the largest pass */
	{"major-max.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, type: c, major: 4095, minor: 1048575}]}}]\n",
	 NULL},
	{"major-range.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, type: c, major: 4294967296, minor: 1}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/major': expected an integer from 0 to "
	 "4095, got '4294967296'"},
	{"minor-range.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, type: c, major: 1, minor: 1048576}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/minor': expected an integer from 0 to "
	 "1048575, got '1048576'"},
	/* beyond a double: a string, shown */
	{"minor-huge.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, type: c, major: 1, minor: 1e999}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/minor': expected integer, got string '1e999'"},
	{"closid-root.yaml",
	 "cdiVersion: 0.7.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {intelRdt: "
	 "{closID: /}}}]\n",
	 NULL},
	{"net-dup.yaml",
	 "cdiVersion: 1.1.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {netDevices: "
	 "[{hostInterfaceName: eth0, name: a}, {hostInterfaceName: eth0, name: b}]}}]\n",
	 "'/devices/0/containerEdits/netDevices/1/hostInterfaceName': duplicate hostInterfaceName "
	 "'eth0'"},
	{"net-dup-name.yaml",
	 "cdiVersion: 1.1.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {netDevices: "
	 "[{hostInterfaceName: eth0, name: b}, {hostInterfaceName: eth1, name: b}]}}]\n",
	 "'/devices/0/containerEdits/netDevices/1/name': duplicate name 'b'"},
	{"perms-none.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, permissions: none}]}}]\n",
	 NULL},
	{"bad-type.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, type: x}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/type': invalid device type 'x' (want b, c, u or "
	 "p)"},
	{"filemode-range.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {deviceNodes: "
	 "[{path: /dev/x, fileMode: 0o10000}]}}]\n",
	 "'/devices/0/containerEdits/deviceNodes/0/fileMode': expected an integer from 0 to 4095, "
	 "got '4096'"},
	{"major-string.json",
	 "{\"cdiVersion\":\"0.3.0\",\"kind\":\"a.com/"
	 "b\",\"devices\":[{\"name\":\"a\",\"containerEdits\":{\"deviceNodes\":[{\"path\":\"/dev/"
	 "x\",\"major\":\"1\"}]}}]}",
	 "'/devices/0/containerEdits/deviceNodes/0/major': expected integer, got string '1'"},
	{"bad-env.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {env: "
	 "[\"=x\"]}}]\n",
	 "'/devices/0/containerEdits/env/0': invalid environment variable '=x'"},
	{"bad-hook.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {hooks: "
	 "[{hookName: prestop, path: /bin/x}]}}]\n",
	 "'/devices/0/containerEdits/hooks/0/hookName': invalid hook name 'prestop'"},
	{"hook-timeout.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {hooks: "
	 "[{hookName: prestart, path: /bin/x, timeout: 0}]}}]\n",
	 "'/devices/0/containerEdits/hooks/0/timeout': expected an integer from 1 to 2147483647, "
	 "got '0'"},
	{"mount-no-host.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {mounts: "
	 "[{containerPath: /x}]}}]\n",
	 "'/devices/0/containerEdits/mounts/0/hostPath': required field missing"},
	{"closid.yaml",
	 "cdiVersion: 0.7.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {intelRdt: "
	 "{closID: a/b}}}]\n",
	 "'/devices/0/containerEdits/intelRdt/closID': invalid closID 'a/b'"},
	{"ifname.yaml",
	 "cdiVersion: 1.1.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {netDevices: "
	 "[{hostInterfaceName: averyveryverylongname, name: x}]}}]\n",
	 "'/devices/0/containerEdits/netDevices/0/hostInterfaceName': invalid network interface "
	 "name 'averyveryverylongname'"},
	{"bad-device-name.yaml",
	 "cdiVersion: 0.5.0\nkind: a.com/b\ndevices: [{name: a!b, containerEdits: {env: [A=1]}}]\n",
	 "'/devices/0/name': invalid device name 'a!b': invalid character '!'"},
	{"dup-key.yaml", "cdiVersion: 0.3.0\ncdiVersion: 0.3.0\n",
	 "line 2 column 1: duplicate key 'cdiVersion'"},
	{"dup-key.json", "{\"cdiVersion\":\"0.3.0\",\"kind\":\"a.com/b\",\"kind\":\"a.com/b\"}",
	 "'/kind': duplicate key 'kind'"},
	{"null-doc.yaml", "~\n", "empty document"},
	{"empty-doc.yaml", "# nothing\n", "empty document"},
	{"syntax.yaml", "a: [b\n",
	 "line 2 column 1: did not find expected ',' or ']' while parsing a flow sequence"},
	{"first-doc-only.yaml",
	 "cdiVersion: 0.3.0\nkind: a.com/b\ndevices: [{name: a, containerEdits: {env: "
	 "[A=1]}}]\n---\n: : bad [\n",
	 NULL},
	{"missing-version.json", "{\"kind\":\"a.com/b\"}", "'/cdiVersion': required field missing"},
	{"null-name.yaml",
	 "cdiVersion: 0.6.0\nkind: a.com/b\ndevices:\n- name: null\n  containerEdits: {env: "
	 "[A=1]}\n",
	 "'/devices/0/name': required field is null"},
	{"empty-version.json", "{\"cdiVersion\":\"\"}", "'/cdiVersion': invalid version ''"},
	{"not-object.yaml", "- a\n", "'/': expected object, got array"},
	/* aliases multiply a small text: 10^6 scalars are refused, not built */
	{"alias-bomb.yaml",
	 "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, "
	 "*c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, "
	 "*e, *e, *e, *e]\n",
	 "line 1 column 32: document too large or too deep"},
};

static void test_inline_documents(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(docs); i++) {
		cleanup_free char *want = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_cdi_spec *spec = NULL;
		int r = ts_cdi_spec_parse(docs[i].text, strlen(docs[i].text), docs[i].name, 0,
					  &spec, &err);

		if (docs[i].want_msg == NULL) {
			if (r != 0)
				fail_msg("%s: want valid, got %s", docs[i].name, err->msg);
			ts_cdi_spec_free(spec);
			continue;
		}
		assert_true(asprintf(&want, "%s: %s", docs[i].name, docs[i].want_msg) > 0);
		if (r != -EINVAL || err == NULL || strcmp(err->msg, want) != 0)
			fail_msg("%s: want -EINVAL '%s', got %d '%s'", docs[i].name, want, r,
				 err ? err->msg : "(none)");
	}
}

/* YAML 1.1 scalars: octal/hex numbers, booleans and numbers in string fields become text. */
static void test_yaml_scalar_rules(void **state)
{
	static const char text[] =
		"cdiVersion: \"0.6.0\"\n"
		"kind: a.com/b\n"
		"annotations: {a.b/yes: yes, a.b/num: 0x10, a.b/oct: 0640, a.b/f: 1.5, a.b/q: "
		"\"0640\"}\n"
		"devices:\n"
		"- name: x\n"
		"  containerEdits:\n"
		"    hooks: [{hookName: prestart, path: /bin/h, args: [--x, 12, off]}]\n"
		"    deviceNodes:\n"
		"    - {path: /dev/x, fileMode: 0640, major: 0x10, minor: 1_0, uid: +7}\n";
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *out = NULL;
	struct ts_cdi_spec *spec = NULL;
	int r = ts_cdi_spec_parse(text, strlen(text), "s.yaml", 0, &spec, &err);

	if (r != 0)
		fail_msg("%s", err->msg);
	assert_int_equal(ts_json_serialize(ts_cdi_spec_json(spec), false, &out, NULL, &err), 0);
	assert_string_equal(
		out, "{\"cdiVersion\":\"0.6.0\",\"kind\":\"a.com/b\",\"annotations\":{\"a.b/yes\":"
		     "\"true\",\"a.b/num\":\"16\",\"a.b/oct\":\"416\",\"a.b/f\":\"1.5\",\"a.b/q\":"
		     "\"0640\"},\"devices\":[{\"name\":\"x\",\"containerEdits\":{\"hooks\":[{"
		     "\"hookName\":"
		     "\"prestart\",\"path\":\"/bin/"
		     "h\",\"args\":[\"--x\",\"12\",\"false\"]}],\"deviceNodes\":[{\"path\":\"/dev/"
		     "x\",\"fileMode\":416,\"major\":16,"
		     "\"minor\":10,\"uid\":7}]}}]}");
	assert_string_equal(ts_cdi_spec_kind(spec), "a.com/b");
	assert_string_equal(ts_cdi_spec_path(spec), "s.yaml");
	ts_cdi_spec_free(spec);
}

static void test_env_entry_needs_equals(void **state)
{
	/* "12" became a string, and a string without '=' is not an env entry */
	static const char text[] = "cdiVersion: 0.3.0\nkind: a.com/b\n"
				   "devices: [{name: x, containerEdits: {env: [12]}}]\n";
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_spec *spec = NULL;

	assert_int_equal(ts_cdi_spec_parse(text, strlen(text), "e.yaml", 0, &spec, &err), -EINVAL);
	assert_string_equal(
		err->msg,
		"e.yaml: '/devices/0/containerEdits/env/0': invalid environment variable '12'");
}

static void test_load_missing_file(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_spec *spec = NULL;

	assert_int_equal(ts_cdi_spec_load("/nonexistent/x.yaml", 0, &spec, &err), -ENOENT);
	assert_string_equal(err->msg, "/nonexistent/x.yaml: cannot open");
}

int main(void)
{
	const struct ts_test tests[] = {
		{cmocka_unit_test(test_corpus_verdicts), TS_NEEDS_CORPUS},
		{cmocka_unit_test(test_inline_documents), TS_NEEDS_NOTHING},
		{cmocka_unit_test(test_yaml_scalar_rules), TS_NEEDS_NOTHING},
		{cmocka_unit_test(test_env_entry_needs_equals), TS_NEEDS_NOTHING},
		{cmocka_unit_test(test_load_missing_file), TS_NEEDS_NOTHING},
	};
	return ts_run_selected("test-spec", tests, ARRAY_SIZE(tests));
}
