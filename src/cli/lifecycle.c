/* lifecycle.c - see lifecycle.h. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/lifecycle.h"
#include "cli/log.h"
#include "util/cleanup.h"
#include "util/fileio.h"

void ts_lifecycle_event_from_alloc(const char *container_id, const struct ts_alloc *a,
				   const struct ts_json *config, struct ts_plugin_event *ret)
{
	*ret = (struct ts_plugin_event){.container_id = container_id, .config = config};
	if (a == NULL)
		return;
	ret->class_name = a->class_name;
	ret->cpus_str = a->cpus_str;
	ret->mems_str = a->mems_str;
	ret->devices = (const char *const *)a->devices;
	ret->cgroup_path = a->cgroup_path;
	ret->pid = a->pid;
}

int ts_lifecycle_run_report(struct ts_plugin_chain *chain, enum ts_plugin_stage stage,
			    const struct ts_plugin_event *ev, struct ts_plugin_report *ret,
			    struct ts_error **err)
{
	struct ts_plugin_report rep = {0};
	int r;

	*ret = rep;
	if (chain == NULL || ts_plugin_chain_count(chain, stage) == 0)
		return 0;
	r = ts_plugin_chain_run(chain, stage, ev, &rep, err);
	if (r < 0)
		return r;
	for (char **m = rep.ignored; m != NULL && *m != NULL; m++)
		ts_log(TS_LOG_WARNING, "%s, ignoring", *m);
	*ret = rep;
	return 0;
}

int ts_lifecycle_run(struct ts_plugin_chain *chain, enum ts_plugin_stage stage,
		     const struct ts_plugin_event *ev, struct ts_json **ret_adjust,
		     struct ts_error **err)
{
	struct ts_plugin_report rep = {0};
	int r;

	if (ret_adjust != NULL)
		*ret_adjust = NULL;
	r = ts_lifecycle_run_report(chain, stage, ev, &rep, err);
	if (r < 0)
		return r;
	if (ret_adjust != NULL)
		*ret_adjust = TAKE_PTR(rep.adjust);
	ts_plugin_report_release(&rep);
	return 0;
}

struct ts_json *ts_lifecycle_read_config(const char *bundle_dir)
{
	cleanup_free char *path = NULL, *text = NULL;
	cleanup_error struct ts_error *ignored = NULL;
	struct ts_json *config = NULL;
	size_t n = 0;

	/* a state without a bundle is no bundle, not the root directory's */
	if (bundle_dir == NULL || bundle_dir[0] == '\0' ||
	    asprintf(&path, "%s/config.json", bundle_dir) < 0)
		return NULL;
	if (ts_read_file_at(AT_FDCWD, path, 0, &text, &n, &ignored) < 0 ||
	    ts_json_parse(text, n, path, &config, &ignored) < 0)
		return NULL;
	return config;
}

void ts_lifecycle_delete_collected(struct ts_plugin_chain *chain, struct ts_alloc *const *v,
				   size_t n)
{
	for (size_t i = 0; i < n; i++) {
		cleanup_error struct ts_error *err = NULL;
		struct ts_plugin_event ev;

		ts_lifecycle_event_from_alloc(v[i]->container_id, v[i], NULL, &ev);
		ev.pid = 0;	       /* gone */
		ev.cgroup_path = NULL; /* and its cgroup with it */
		if (ts_lifecycle_run(chain, TS_PLUGIN_STAGE_DELETE, &ev, NULL, &err) < 0)
			ts_log(TS_LOG_WARNING, "delete stage of '%s': %s, ignoring",
			       v[i]->container_id, err->msg);
	}
}
