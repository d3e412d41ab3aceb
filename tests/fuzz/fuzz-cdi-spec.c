/*
 * fuzz-cdi-spec.c - CDI spec files (src/cdi): YAML to JSON, validation, the registry and
 * the edits of the devices a spec defines.
 *
 * The first byte picks what the rest is (low 2 bits):
 *   0  YAML text: ts_cdi_yaml_parse(); a tree it gives must serialise with
 *      ts_cdi_yaml_serialize() and read back equal (what cdi.h promises).
 *   1  a spec file named .yaml, 2  one named .json: ts_cdi_spec_parse(); an accepted spec
 *      must have a kind "vendor/class" and a JSON tree that serialises.
 *   3  a spec file in a spec dir (bit 2: .yaml, else .json): ts_cdi_registry_load(), then
 *      every device it resolves injected into a small config.json with ts_cdi_inject().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi/cdi.h"
#include "cdi/internal.h"
#include "fuzz.h"
#include "oci/json.h"
#include "util/cleanup.h"

static const char base_config[] =
	"{\"ociVersion\":\"1.0.2\",\"process\":{\"env\":[\"PATH=/bin\"],\"args\":[\"sh\"]},"
	"\"root\":{\"path\":\"rootfs\"},\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\","
	"\"source\":\"proc\"}],\"hooks\":{},\"linux\":{\"devices\":[],\"resources\":{\"devices\":"
	"[{\"allow\":false,\"access\":\"rwm\"}]}}}";

static void yaml_roundtrip(const char *buf, size_t len)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL, *again = NULL;
	cleanup_free char *text = NULL;

	if (ts_cdi_yaml_parse(buf, len, "fuzz.yaml", &j, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL && j == NULL,
			   "yaml: failure without a message");
		return;
	}
	fuzz_check(j != NULL && err == NULL, "yaml: success without a tree");
	if (ts_cdi_yaml_serialize(j, &text, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL,
			   "yaml: serialise failed without a message");
		return;
	}
	fuzz_check(text != NULL && text[0] != '\0' && text[strlen(text) - 1] == '\n',
		   "yaml: serialised text does not end in a newline");
	fuzz_check(ts_cdi_yaml_parse(text, strlen(text), "again.yaml", &again, &err) == 0,
		   "yaml: cannot read our own YAML");
	fuzz_check(ts_json_equal(j, again), "yaml: round trip changed the tree");
}

static void spec_parse(const char *buf, size_t len, const char *name)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	struct ts_cdi_spec *spec = NULL;
	size_t tlen = 0;

	if (ts_cdi_spec_parse(buf, len, name, 0, &spec, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL && spec == NULL,
			   "spec: failure without a message");
		fuzz_check(strncmp(err->msg, name, strlen(name)) == 0,
			   "spec: message does not name the file");
		return;
	}
	fuzz_check(spec != NULL && err == NULL, "spec: success without a spec");
	fuzz_check(ts_cdi_spec_kind(spec) != NULL && strchr(ts_cdi_spec_kind(spec), '/') != NULL,
		   "spec: kind is not vendor/class");
	fuzz_check(ts_json_serialize(ts_cdi_spec_json(spec), false, &text, &tlen, &err) == 0,
		   "spec: tree does not serialise");
	ts_cdi_spec_free(spec);
}

static void registry(const char *buf, size_t len, bool yaml)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_cdi_registry *reg = NULL;
	struct ts_cdi_injection *inj = NULL;
	struct ts_cdi_options opts = {0};
	const char *const *names = NULL;
	const char *const *problems = NULL;
	char *dirs[2] = {NULL, NULL};
	char dir[4096];
	size_t n;

	snprintf(dir, sizeof(dir), "%s", fuzz_path("cdi"));
	fuzz_rmtree(dir);
	fuzz_mkdir(dir);
	fuzz_write(fuzz_path(yaml ? "cdi/spec.yaml" : "cdi/spec.json"), buf, len);
	dirs[0] = dir;
	opts.spec_dirs = dirs;
	opts.require_root_owned = false;
	fuzz_check(ts_cdi_registry_load(&opts, &reg, &err) == 0, "registry: load failed");
	(void)ts_cdi_registry_problems(reg, &problems);
	n = ts_cdi_registry_devices(reg, &names);
	fuzz_check(ts_json_parse(base_config, strlen(base_config), "config.json", &config, &err) ==
			   0,
		   "base config");
	for (size_t i = 0; i < n; i++)
		fuzz_check(ts_cdi_registry_lookup(reg, names[i], NULL, NULL),
			   "registry: a listed device does not resolve");
	if (n > 0) {
		int r = ts_cdi_inject(reg, config, names, n, "config.json", &inj, &err);

		fuzz_check(r >= 0 || (err != NULL && err->msg != NULL),
			   "inject: failure without a message");
		ts_cdi_injection_free(inj);
	}
	ts_cdi_registry_free(reg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_free char *buf = NULL;

	if (size < 1)
		return 0;
	buf = fuzz_strndup(data + 1, size - 1);
	switch (data[0] & 3) {
	case 0:
		yaml_roundtrip(buf, size - 1);
		break;
	case 1:
		spec_parse(buf, size - 1, "/etc/cdi/fuzz.yaml");
		break;
	case 2:
		spec_parse(buf, size - 1, "/etc/cdi/fuzz.json");
		break;
	default:
		registry(buf, size - 1, (data[0] & 4) != 0);
		break;
	}
	return 0;
}
