/*
 * cmd-create.c - the create/run rewrite, top to bottom:
 *
 *   open the bundle (oci) → inject the requested CDI devices (cdi) →
 *   save config.json atomically (oci) → return to main, which execs.
 *
 * Everything is decided on the in-memory tree first; config.json is
 * written once at the end, so any failure leaves it byte-identical.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cdi/cdi.h"
#include "cli/cmd-create.h"
#include "cli/log.h"
#include "oci/bundle.h"
#include "util/cleanup.h"

static void bundle_freep(struct ts_oci_bundle **b)
{
	*b = ts_oci_bundle_free(*b);
}
#define cleanup_bundle __attribute__((cleanup(bundle_freep)))

static void registry_freep(struct ts_cdi_registry **r)
{
	*r = ts_cdi_registry_free(*r);
}
#define cleanup_registry __attribute__((cleanup(registry_freep)))

static void injection_freep(struct ts_cdi_injection **i)
{
	*i = ts_cdi_injection_free(*i);
}
#define cleanup_injection __attribute__((cleanup(injection_freep)))

static const char *config_file_name(void)
{
	const char *p = secure_getenv("TOPOSHIM_CONFIG");

	return p != NULL && p[0] != '\0' ? p : "/etc/toposhim/config.json";
}

/* Resolve the requested CDI devices and apply their edits to the tree. */
static int inject_cdi(struct ts_oci_bundle *b, const struct ts_json *config,
		      struct ts_cdi_injection **ret, struct ts_error **err)
{
	struct ts_cdi_options opts = {0};
	cleanup_registry struct ts_cdi_registry *reg = NULL;
	cleanup_strv char **names = NULL;
	const char *const *problems = NULL;
	size_t n;
	int r;

	r = ts_cdi_options_from_config(config, config_file_name(), &opts, err);
	if (r < 0)
		return r;
	/* No request, no registry: a create without devices reads no spec file. */
	r = ts_cdi_requests_from_config(b->config, b->config_path, opts.env_requests, &names, err);
	if (r <= 0) {
		ts_cdi_options_release(&opts);
		return r;
	}
	r = ts_cdi_registry_load(&opts, &reg, err);
	if (r < 0)
		goto out;
	n = ts_cdi_registry_problems(reg, &problems);
	for (size_t i = 0; i < n; i++)
		ts_log(TS_LOG_WARNING, "CDI registry: %s, ignoring", problems[i]);
	r = ts_cdi_inject_requested(reg, b->config, b->config_path, opts.env_requests, ret, err);
	if (r >= 0 && *ret != NULL) {
		for (size_t i = 0; i < (*ret)->n_devices; i++) {
			const struct ts_cdi_injected_device *d = &(*ret)->devices[i];

			if (d->engine_injected)
				ts_log(TS_LOG_INFO,
				       "CDI device '%s' was injected by the engine already",
				       d->qualified_name);
			else
				ts_log(TS_LOG_DEBUG, "CDI device '%s' resolved by '%s'",
				       d->qualified_name, d->spec_path);
		}
		if ((*ret)->already_applied)
			ts_log(TS_LOG_INFO, "CDI devices already injected (retried create)");
	}
out:
	ts_cdi_options_release(&opts);
	return r;
}

int ts_cmd_create(const struct ts_cli_args *args, const struct ts_json *config,
		  struct ts_error **err)
{
	cleanup_bundle struct ts_oci_bundle *b = NULL;
	cleanup_injection struct ts_cdi_injection *injected = NULL;
	int r;

	r = ts_oci_bundle_open(args->bundle, args->config_file, &b, err);
	if (r < 0)
		return r;
	r = inject_cdi(b, config, &injected, err);
	if (r < 0)
		return r;
	r = ts_oci_bundle_save(b, err);
	if (r < 0)
		return r;
	return 0;
}
