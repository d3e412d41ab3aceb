/*
 * clearcfs - remove the CFS bandwidth limit of exclusive-CPU containers: a
 * container pinned to CPUs of its own gains nothing from a quota but
 * throttling.
 *
 * conf: {"classes": ["critical"], "cgroup_root": "/sys/fs/cgroup"}
 * (classes default: ["critical"], the built-in exclusive class).  At create, for a container whose
 * toposhim class is listed: cgroup v2 cpu.max <- "max" (the period is
 * kept), cgroup v1 cpu.cfs_quota_us <- "-1".  metadata: {"cfs": "cleared"}
 * or {"cfs": "kept"}.  Like confine, its entry needs "sandbox": {"uid": 0,
 * "writable": ["/sys/fs/cgroup"]}: cgroup files are root's and read-only
 * in the plugin sandbox.
 */
#include <errno.h>
#include <string.h>

#include "toposhim-plugin.h"
#include "util/cleanup.h"

static bool class_listed(const struct tsp_request *req)
{
	struct ts_json *classes = ts_json_get_array(req->conf, "classes"), *c;
	size_t i;

	if (req->class_name == NULL)
		return false;
	if (classes == NULL)
		return strcmp(req->class_name, "critical") == 0;
	ts_json_array_foreach (classes, i, c) {
		if (c->type == TS_JSON_STRING && strcmp(c->u.string, req->class_name) == 0)
			return true;
	}
	return false;
}

static int handler(const struct tsp_request *req, struct ts_json **ret_metadata,
		   struct ts_error **err)
{
	const char *root = ts_json_get_string(req->conf, "cgroup_root");
	cleanup_free char *dir = NULL;
	const char *what = "kept";
	int r;

	if (strcmp(req->state, "create") != 0)
		return 0;
	if (class_listed(req)) {
		r = tsp_cgroup_dir(req, root ? root : "/sys/fs/cgroup", "cpu", &dir, err);
		if (r < 0)
			return r;
		if (tsp_cgroup_is_v2(dir))
			r = tsp_cgroup_write(dir, "cpu.max", "max", err);
		else
			r = tsp_cgroup_write(dir, "cpu.cfs_quota_us", "-1", err);
		if (r < 0)
			return r;
		what = "cleared";
	}
	*ret_metadata = ts_json_new_object();
	if (*ret_metadata == NULL)
		return ts_error_set(err, ENOMEM, "clearcfs");
	return ts_json_object_set(*ret_metadata, "cfs", ts_json_new_string(what), err);
}

int main(int argc, char **argv)
{
	return tsp_main(argc, argv, "clearcfs", handler);
}
