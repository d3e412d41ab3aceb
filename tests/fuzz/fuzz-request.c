/*
 * fuzz-request.c - what a container asks for: qualified CDI device names, the cdi.k8s.io/
 * annotations (src/cdi/name.c), the toposhim.io/ placement annotations
 * (src/placement/request.c) and the operator policy judging them (src/policy, with the
 * create's translation of the request, ts_pools_policy_request_of()).
 *
 * Input: "<config.json>" FUZZ_SEP "<toposhim config with a policy>" FUZZ_SEP "<name>".
 * The first byte of the config part, when it is not '{', picks env_requests (bit 0).
 * Checked: every name collected from annotations parses as a qualified name; the parse of
 * the third part agrees with ts_cdi_qualified_name_is_valid() and its pieces pass the
 * vendor, class and device name checks; failures carry a message.
 */
#include <stdlib.h>
#include <string.h>

#include "cdi/cdi.h"
#include "cli/pools.h"
#include "fuzz.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "policy/policy.h"
#include "util/cleanup.h"

static void name(const char *q)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *vendor = NULL, *class = NULL, *dev = NULL;
	bool valid = ts_cdi_qualified_name_is_valid(q);

	if (ts_cdi_qualified_name_parse(q, &vendor, &class, &dev, &err) < 0) {
		fuzz_check(!valid, "name: is_valid but parse fails");
		fuzz_check(err != NULL && err->msg != NULL, "name: failure without a message");
		return;
	}
	fuzz_check(valid, "name: parses but not is_valid");
	fuzz_check(ts_cdi_vendor_validate(vendor, &err) == 0, "name: vendor of a valid name");
	fuzz_check(ts_cdi_class_validate(class, &err) == 0, "name: class of a valid name");
	fuzz_check(ts_cdi_device_name_validate(dev, &err) == 0, "name: device of a valid name");
}

static void policy(const struct ts_json *config, const char *policy_text,
		   const struct ts_placement_config *cfg, const struct ts_placement_request *req,
		   char **devices, size_t n_devices)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *tsconfig = NULL;
	struct ts_policy pol;
	struct ts_policy_request pr = {
		.config_name = "config.json",
		.devices = (const char *const *)devices,
		.n_devices = n_devices,
	};

	if (ts_policy_namespace(config, "config.json", &pr.namespace, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL,
			   "policy: namespace failure without a message");
		return;
	}
	if (ts_json_parse(policy_text, strlen(policy_text), "config", &tsconfig, &err) < 0)
		return;
	if (ts_policy_parse(tsconfig, "/etc/toposhim/config.json", &pol, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL, "policy: failure without a message");
		return;
	}
	/* the create's own translation (cli/pools.h) */
	if (req != NULL)
		ts_pools_policy_request_of(cfg, req, &pr);
	if (ts_policy_check(&pol, &pr, &err) < 0)
		fuzz_check(err != NULL && err->msg != NULL && strchr(err->msg, '\n') == NULL,
			   "policy: refusal is not one line");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_placement_config cfg;
	struct ts_placement_request req;
	char *parts[3];
	char **names = NULL;
	const char *text;
	bool env_requests = false, have_req = false;
	int n = 0;

	fuzz_split(data, size, parts, 3);
	name(parts[2]);
	text = parts[0];
	if (text[0] != '\0' && text[0] != '{') {
		env_requests = (text[0] & 1) != 0;
		text++;
	}
	if (ts_json_parse(text, strlen(text), "config.json", &config, &err) < 0)
		goto out;
	n = ts_cdi_requests_from_config(config, "config.json", env_requests, &names, &err);
	if (n < 0) {
		fuzz_check(err != NULL && err->msg != NULL, "requests: failure without a message");
		ts_error_clear(&err);
		n = 0;
	} else {
		for (int i = 0; i < n; i++) {
			fuzz_check(names[i] != NULL, "requests: fewer names than counted");
			fuzz_check(env_requests || ts_cdi_qualified_name_is_valid(names[i]),
				   "requests: an annotation's name is not a qualified name");
		}
		fuzz_check(names[n] == NULL, "requests: vector not NULL-terminated");
	}
	fuzz_check(ts_placement_config_init(&cfg, &err) == 0, "placement: defaults");
	if (ts_placement_request_from_config(config, "config.json", "fuzz", &cfg, &req, &err) == 0)
		have_req = true;
	else
		fuzz_check(err != NULL && err->msg != NULL, "placement: failure without a message");
	ts_error_clear(&err);
	policy(config, parts[1], &cfg, have_req ? &req : NULL, names, (size_t)n);
	if (have_req)
		ts_placement_request_release(&req);
	ts_placement_config_release(&cfg);
out:
	for (int i = 0; names != NULL && names[i] != NULL; i++)
		free(names[i]);
	free(names);
	fuzz_parts_free(parts, 3);
	return 0;
}
