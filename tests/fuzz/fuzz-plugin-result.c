/*
 * fuzz-plugin-result.c - what a plugin prints (src/plugin): its result
 * (ts_plugin_result_check()) and the adjust of a pre-create result
 * (ts_plugin_adjust_validate(), ts_plugin_adjust_check_privileges(),
 * ts_plugin_adjust_merge(), ts_plugin_adjust_apply() onto a container's config.json).
 *
 * First byte: stage (mod 3: pre-create, create, delete); bits 2-4: the sandbox.adjust
 * grants (devices, unified, annotations); bit 7: the plugin exited 1.  The rest is the
 * plugin's stdout.  Checked: failures carry a message; an adjust the privilege check lets
 * through applies to the config or fails with a message; cpus and mems it reports are
 * the ones in the adjust.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "oci/json.h"
#include "plugin/internal.h"
#include "plugin/plugin.h"
#include "util/cleanup.h"

static const char base_config[] =
	"{\"ociVersion\":\"1.0.2\",\"process\":{\"env\":[\"PATH=/bin\",\"A=1\"]},"
	"\"annotations\":{\"example.com/x\":\"1\"},\"linux\":{\"resources\":{\"devices\":"
	"[{\"allow\":false,\"access\":\"rwm\"}],\"cpu\":{\"cpus\":\"0-1\",\"shares\":1024},"
	"\"memory\":{\"limit\":1073741824}}}}";

static void adjust(const struct ts_json *adj, const struct ts_plugin_sandbox *sb)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *acc = NULL, *config = NULL;
	unsigned fields;

	if (ts_plugin_adjust_validate(adj, "adjust", &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL, "adjust: failure without a message");
		return;
	}
	fields = ts_plugin_adjust_fields(adj);
	fuzz_check(((fields & TS_PLUGIN_ADJUST_CPUS) != 0) == (ts_plugin_adjust_cpus(adj) != NULL),
		   "adjust: CPUS bit and cpus disagree");
	fuzz_check(((fields & TS_PLUGIN_ADJUST_MEMS) != 0) == (ts_plugin_adjust_mems(adj) != NULL),
		   "adjust: MEMS bit and mems disagree");
	if (ts_plugin_adjust_check_privileges(adj, sb, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL,
			   "privileges: failure without a message");
		return;
	}
	acc = ts_json_new_object();
	fuzz_check(acc != NULL, "out of memory");
	fuzz_check(ts_plugin_adjust_merge(acc, adj, &err) == 0, "merge failed");
	fuzz_check(ts_plugin_adjust_merge(acc, adj, &err) == 0, "second merge failed");
	fuzz_check(ts_plugin_adjust_validate(acc, "merged", &err) == 0,
		   "the merge of valid adjusts is not valid");
	fuzz_check(ts_json_parse(base_config, strlen(base_config), "config.json", &config, &err) ==
			   0,
		   "base config");
	if (ts_plugin_adjust_apply(config, acc, "adjust", &err) < 0)
		fuzz_check(err != NULL && err->msg != NULL, "apply: failure without a message");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *result = NULL;
	cleanup_free char *out = NULL;
	char *prefixes[] = {(char *)"example.com/", NULL};
	struct ts_plugin p = {
		.type = (char *)"fuzz",
		.path = (char *)"/usr/libexec/toposhim/plugins/fuzz",
		.timeout_ms = 1000,
		.stages = 7,
		.sandbox = {.uid = -1,
			    .gid = -1,
			    .memory_max_bytes = 1 << 20,
			    .pids_max = 8,
			    .annotation_prefixes = prefixes},
	};
	struct ts_plugin_output o = {0};
	enum ts_plugin_stage stage;

	if (size < 1)
		return 0;
	stage = (enum ts_plugin_stage)(data[0] % 3);
	if (data[0] & 4)
		p.sandbox.adjust |= TS_PLUGIN_ADJUST_DEVICES;
	if (data[0] & 8)
		p.sandbox.adjust |= TS_PLUGIN_ADJUST_UNIFIED;
	if (data[0] & 16)
		p.sandbox.adjust |= TS_PLUGIN_ADJUST_ANNOTATIONS;
	out = fuzz_strndup(data + 1, size - 1);
	o.wait_status = (data[0] & 128) ? 1 << 8 : 0;
	o.out = out;
	o.out_len = size - 1;
	o.errout = (char *)"";
	if (ts_plugin_result_check(&p, stage, &o, &result, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL, "result: failure without a message");
		return 0;
	}
	fuzz_check(result != NULL, "result: success without a result");
	if (stage == TS_PLUGIN_STAGE_PRE_CREATE && ts_json_get(result, "adjust") != NULL &&
	    ts_json_get(result, "adjust")->type != TS_JSON_NULL)
		adjust(ts_json_get(result, "adjust"), &p.sandbox);
	return 0;
}
