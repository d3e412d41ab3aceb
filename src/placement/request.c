/* request.c - a placement request: lifecycle and device locality. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "placement/internal.h"
#include "util/cleanup.h"

int ts_placement_request_init(struct ts_placement_request *req, const char *container_id,
			      struct ts_error **err)
{
	*req = (struct ts_placement_request){
		.numa = TS_PLACEMENT_NUMA_PREFER,
		.memory_tier = TS_MEMORY_TIER_DRAM,
		.config_name = "config.json",
	};
	req->container_id = strdup(container_id != NULL ? container_id : "");
	req->class_name = strdup("standard");
	req->device_numa = hwloc_bitmap_alloc();
	if (req->container_id == NULL || req->class_name == NULL || req->device_numa == NULL) {
		ts_placement_request_release(req);
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	return 0;
}

void ts_placement_request_release(struct ts_placement_request *req)
{
	free(req->container_id);
	free(req->class_name);
	free(req->container_name);
	free(req->class_field);
	free(req->cpus_field);
	free(req->numa_field);
	free(req->tier_field);
	free(req->parent_name);
	if (req->parent_cpus != NULL)
		hwloc_bitmap_free(req->parent_cpus);
	if (req->parent_mems != NULL)
		hwloc_bitmap_free(req->parent_mems);
	if (req->user_cpus != NULL)
		hwloc_bitmap_free(req->user_cpus);
	if (req->user_mems != NULL)
		hwloc_bitmap_free(req->user_mems);
	if (req->device_numa != NULL)
		hwloc_bitmap_free(req->device_numa);
	for (size_t i = 0; i < req->n_devices; i++)
		free(req->devices[i]);
	free(req->devices);
	free(req->device_nodes);
	free(req->seen);
	*req = (struct ts_placement_request){0};
}

/* Record one device's locality (known or not) in req, as path. */
static int add_locality(struct ts_placement_request *req, const char *path,
			struct ts_device_locality *loc, struct ts_error **err)
{
	if (loc->numa_node >= 0) {
		char **v = realloc(req->devices, (req->n_devices + 1) * sizeof(*v));
		int *nodes = v == NULL ? NULL
				       : realloc(req->device_nodes,
						 (req->n_devices + 1) * sizeof(*nodes));
		char *copy = strdup(path);

		if (v != NULL)
			req->devices = v;
		if (nodes != NULL)
			req->device_nodes = nodes;
		if (v == NULL || nodes == NULL || copy == NULL) {
			free(copy);
			ts_device_locality_release(loc);
			return ts_error_set(err, ENOMEM, "placement: out of memory");
		}
		req->device_nodes[req->n_devices] = loc->numa_node;
		req->devices[req->n_devices++] = copy;
		hwloc_bitmap_set(req->device_numa, (unsigned)loc->numa_node);
	}
	ts_device_locality_release(loc);
	return 0;
}

/* The locality of kernel device rdev, from req->seen or from sysfs (then
 * remembered).  path: for ts_device_locality_rdev()'s families and
 * messages.  @return 0; -ENOMEM. */
static int locality_of(struct ts_placement_request *req, const struct ts_devloc_roots *roots,
		       const char *path, bool block, dev_t rdev, struct ts_device_locality *loc,
		       struct ts_error **err)
{
	struct ts_placement_device_seen *v;
	int r;

	for (size_t i = 0; i < req->n_seen; i++)
		if (req->seen[i].rdev == rdev && req->seen[i].block == block) {
			*loc = (struct ts_device_locality){.numa_node = req->seen[i].numa_node};
			return 0;
		}
	r = ts_device_locality_rdev(roots, path, block, rdev, loc, err);
	if (r < 0)
		return r;
	v = realloc(req->seen, (req->n_seen + 1) * sizeof(*v));
	if (v == NULL) {
		ts_device_locality_release(loc);
		return ts_error_set(err, ENOMEM, "placement: out of memory");
	}
	req->seen = v;
	req->seen[req->n_seen++] = (struct ts_placement_device_seen){
		.rdev = rdev, .block = block, .numa_node = loc->numa_node};
	return 0;
}

int ts_placement_request_add_devices(struct ts_placement_request *req,
				     const struct ts_devloc_roots *roots, const char *const *paths,
				     size_t n, struct ts_error **err)
{
	for (size_t i = 0; i < n; i++) {
		struct ts_device_locality loc;
		struct stat st;
		int r;

		/* not a device node: ts_device_locality() says so, in its words */
		if (stat(paths[i], &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
			r = locality_of(req, roots, paths[i], S_ISBLK(st.st_mode), st.st_rdev, &loc,
					err);
		else
			r = ts_device_locality(roots, paths[i], &loc, err);
		if (r < 0)
			return r;
		r = add_locality(req, paths[i], &loc, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* A non-negative integer member of a linux.devices entry; -1 otherwise. */
static long long device_number(const struct ts_json *dev, const char *key)
{
	const struct ts_json *v = ts_json_get(dev, key);
	char *end;
	long long n;

	if (v == NULL || v->type != TS_JSON_NUMBER)
		return -1;
	errno = 0;
	n = strtoll(v->u.number, &end, 10);
	return errno != 0 || *end != '\0' || n < 0 || n > 0xffffffffLL ? -1 : n;
}

int ts_placement_request_add_config_devices(struct ts_placement_request *req,
					    const struct ts_devloc_roots *roots,
					    const struct ts_json *config, struct ts_error **err)
{
	const struct ts_json *devices = ts_json_get_path(config, "linux", "devices", NULL);
	const struct ts_json *bounding =
		ts_json_get_path(config, "process", "capabilities", "bounding", NULL);
	const struct ts_json *dev, *cap;
	size_t i;

	/* a privileged container: the engine lists every host device, which
	 * says nothing about what the container uses */
	ts_json_array_foreach (bounding, i, cap) {
		if (cap->type == TS_JSON_STRING && strcmp(cap->u.string, "CAP_SYS_ADMIN") == 0)
			return 0;
	}
	ts_json_array_foreach (devices, i, dev) {
		const char *type = ts_json_get_string(dev, "type");
		const char *path = ts_json_get_string(dev, "path");
		long long major = device_number(dev, "major"), minor = device_number(dev, "minor");
		struct ts_device_locality loc;
		bool block;
		int r;

		if (type == NULL || path == NULL || major < 0 || minor < 0 ||
		    (strcmp(type, "c") != 0 && strcmp(type, "u") != 0 && strcmp(type, "b") != 0))
			continue;
		block = strcmp(type, "b") == 0;
		r = locality_of(req, roots, path, block, makedev((unsigned)major, (unsigned)minor),
				&loc, err);
		if (r < 0)
			return r;
		r = add_locality(req, path, &loc, err);
		if (r < 0)
			return r;
	}
	return 0;
}
