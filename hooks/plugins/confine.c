/*
 * confine - keep the system-reserved CPUs out of every container's cpuset.
 *
 * conf: {"reserved": "0-1", "cgroup_root": "/sys/fs/cgroup"}.  At create,
 * the container's cpuset (its cgroup's cpuset.cpus, or cpuset.cpus.effective
 * when that is empty on cgroup v2) minus the reserved CPUs is written to the
 * cgroup's cpuset.cpus.  A container left with no CPU fails the create.
 * Other stages do nothing.  metadata: {"cpus": the cpuset written}.
 * The cgroup files are root's and read-only in the plugin sandbox: its
 * entry needs "sandbox": {"uid": 0, "writable": ["/sys/fs/cgroup"]}.
 */
#include <errno.h>
#include <string.h>

#include "toposhim-plugin.h"
#include "util/cleanup.h"

static int current_cpus(const char *dir, char **ret, struct ts_error **err)
{
	int r = tsp_cgroup_read(dir, "cpuset.cpus", ret, err);

	if (r < 0 || (*ret)[0] != '\0' || !tsp_cgroup_is_v2(dir))
		return r;
	free(*ret);
	return tsp_cgroup_read(dir, "cpuset.cpus.effective", ret, err);
}

static int handler(const struct tsp_request *req, struct ts_json **ret_metadata,
		   struct ts_error **err)
{
	const char *reserved_str = ts_json_get_string(req->conf, "reserved");
	const char *root = ts_json_get_string(req->conf, "cgroup_root");
	cleanup_free char *dir = NULL, *cur = NULL, *out = NULL;
	struct tsp_cpuset cpus, reserved;
	int r;

	if (strcmp(req->state, "create") != 0)
		return 0;
	if (reserved_str == NULL)
		return ts_error_set(err, 0, "conf: missing 'reserved'");
	r = tsp_cpulist_parse(reserved_str, &reserved, err);
	if (r < 0)
		return ts_error_prefix(err, "conf: '/reserved'");
	r = tsp_cgroup_dir(req, root ? root : "/sys/fs/cgroup", "cpuset", &dir, err);
	if (r >= 0)
		r = current_cpus(dir, &cur, err);
	if (r >= 0)
		r = tsp_cpulist_parse(cur, &cpus, err);
	if (r < 0)
		return r;
	tsp_cpuset_subtract(&cpus, &reserved);
	out = tsp_cpulist_format(&cpus);
	if (out == NULL)
		return ts_error_set(err, ENOMEM, "confine");
	if (tsp_cpuset_count(&cpus) == 0)
		return ts_error_set(err, 0,
				    "container '%s': no cpu left in '%s' outside reserved '%s'",
				    req->container_id, cur, reserved_str);
	r = tsp_cgroup_write(dir, "cpuset.cpus", out, err);
	if (r < 0)
		return r;
	*ret_metadata = ts_json_new_object();
	if (*ret_metadata == NULL)
		return ts_error_set(err, ENOMEM, "confine");
	return ts_json_object_set(*ret_metadata, "cpus", ts_json_new_string(out), err);
}

int main(int argc, char **argv)
{
	return tsp_main(argc, argv, "confine", handler);
}
