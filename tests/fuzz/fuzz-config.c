/*
 * fuzz-config.c - toposhim's own config.json and what each module reads of it: the keys
 * (ts_cli_config_check_keys()), runtime, state_dir, cdi options, placement, cgroup (and
 * its classes applied to a container's config.json on v1 and v2), policy, plugins and
 * the NRI conf (ts_plugin_chain_load()).
 *
 * Input: "<toposhim config>" FUZZ_SEP "<NRI conf>" FUZZ_SEP "<container config.json>".
 * A non-empty NRI conf is written to a file that the config's "nri_conf" is pointed at.
 * Every reader either succeeds or fails with a message naming the config file.
 */
#include <stdlib.h>
#include <string.h>

#include "cdi/cdi.h"
#include "cgroup/cgroup.h"
#include "cli/cmd-hook.h"
#include "cli/config.h"
#include "fuzz.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "plugin/plugin.h"
#include "policy/policy.h"
#include "util/cleanup.h"

#define PATH "/etc/toposhim/config.json"

static void failed(struct ts_error **err, const char *what)
{
	fuzz_check(*err != NULL && (*err)->msg != NULL, what);
	ts_error_clear(err);
}

static void cgroup(const struct ts_json *config, const char *container)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_cgroup_config c;
	static const enum ts_cgroup_mode modes[] = {TS_CGROUP_MODE_UNIFIED, TS_CGROUP_MODE_LEGACY};

	if (ts_cgroup_config_read(config, PATH, &c, &err) < 0) {
		failed(&err, "cgroup: failure without a message");
		return;
	}
	for (size_t i = 0; i < c.n_classes; i++)
		for (size_t m = 0; m < ARRAY_SIZE(modes); m++) {
			cleanup_json struct ts_json *oci = NULL;
			char **msgs = NULL;
			int r;

			if (ts_json_parse(container, strlen(container), "config.json", &oci, &err) <
				    0 ||
			    oci->type != TS_JSON_OBJECT) {
				ts_error_clear(&err);
				break;
			}
			r = ts_cgroup_apply_class(oci, "config.json", &c.classes[i], modes[m],
						  &msgs, &err);
			if (r < 0)
				failed(&err, "cgroup: apply failed without a message");
			for (size_t k = 0; r >= 0 && msgs != NULL && msgs[k] != NULL; k++)
				free(msgs[k]);
			free(msgs);
		}
	ts_cgroup_config_release(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_cli_runtime_config rc;
	struct ts_cli_state_config sc;
	struct ts_cdi_options co;
	struct ts_placement_config pc;
	struct ts_policy pol;
	struct ts_plugin_chain *chain = NULL;
	char *parts[3];

	fuzz_split(data, size, parts, 3);
	if (ts_json_parse(parts[0], strlen(parts[0]), PATH, &config, &err) < 0 ||
	    config->type != TS_JSON_OBJECT)
		goto out;
	if (ts_cli_config_check_keys(config, PATH, &err) < 0)
		failed(&err, "keys: failure without a message");
	if (ts_cli_runtime_config_read(config, PATH, &rc, &err) == 0)
		ts_cli_runtime_config_release(&rc);
	else
		failed(&err, "runtime: failure without a message");
	if (ts_cli_state_config_read(config, PATH, &sc, &err) < 0)
		failed(&err, "state: failure without a message");
	if (ts_cdi_options_from_config(config, PATH, &co, &err) == 0)
		ts_cdi_options_release(&co);
	else
		failed(&err, "cdi: failure without a message");
	if (ts_placement_config_parse(ts_json_get(config, "placement"), PATH, &pc, &err) == 0)
		ts_placement_config_release(&pc);
	else
		failed(&err, "placement: failure without a message");
	cgroup(config, parts[2]);
	if (ts_policy_parse(config, PATH, &pol, &err) < 0)
		failed(&err, "policy: failure without a message");
	if (parts[1][0] != '\0') {
		const char *nri = fuzz_path("nri-conf.json");

		fuzz_write(nri, parts[1], strlen(parts[1]));
		fuzz_check(ts_json_object_set(config, "nri_conf", ts_json_new_string(nri), &err) ==
				   0,
			   "cannot set nri_conf");
	}
	if (ts_plugin_chain_load(config, PATH, &chain, &err) == 0)
		ts_plugin_chain_free(chain);
	else
		failed(&err, "plugins: failure without a message");
out:
	fuzz_parts_free(parts, 3);
	return 0;
}
