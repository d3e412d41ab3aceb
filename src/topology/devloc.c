/* devloc.c - NUMA locality of device nodes from sysfs and /proc. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define NVIDIA_MAJOR 195

struct ts_devloc_roots ts_devloc_roots_from_env(void)
{
	struct ts_devloc_roots r = {
		.sysfs_root = secure_getenv("TOPOSHIM_SYSFS_ROOT"),
		.proc_root = secure_getenv("TOPOSHIM_PROC_ROOT"),
	};
	return r;
}

static const char *sysfs_of(const struct ts_devloc_roots *roots)
{
	return roots != NULL && roots->sysfs_root != NULL ? roots->sysfs_root : "/sys";
}

static const char *proc_of(const struct ts_devloc_roots *roots)
{
	return roots != NULL && roots->proc_root != NULL ? roots->proc_root : "/proc";
}

void ts_device_locality_release(struct ts_device_locality *loc)
{
	if (loc->local_cpus != NULL)
		hwloc_bitmap_free(loc->local_cpus);
	loc->local_cpus = NULL;
	free(loc->pci_address);
	loc->pci_address = NULL;
}

static char *read_small(const char *dir, const char *name)
{
	cleanup_free char *path = NULL;
	char *buf = NULL;
	size_t len = 0;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	if (ts_read_file_at(AT_FDCWD, path, 65536, &buf, &len, NULL) < 0)
		return NULL;
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	return buf;
}

/* Linux "local_cpus" mask: 32-bit hex words, most significant first. */
static hwloc_bitmap_t parse_mask(const char *s)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	size_t nwords = 1;

	if (b == NULL)
		return NULL;
	for (const char *p = s; *p; p++)
		nwords += *p == ',';
	for (size_t w = 0; w < nwords; w++) {
		char *end;
		unsigned long v = strtoul(s, &end, 16);
		unsigned base = (unsigned)(nwords - 1 - w) * 32;

		for (unsigned bit = 0; bit < 32; bit++)
			if (v & (1ul << bit))
				hwloc_bitmap_set(b, base + bit);
		s = *end == ',' ? end + 1 : end;
	}
	return b;
}

static bool is_pci_address(const char *s)
{
	unsigned dom, bus, dev, fn;
	char tail;

	return sscanf(s, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &tail) == 4 && strlen(s) == 12;
}

/* Fill loc from the device directory dir (a resolved sysfs path), walking up
 * until a directory with numa_node or local_cpulist/local_cpus appears. */
static int fill_from_dir(const char *sysfs, char *dir, const char *how,
			 struct ts_device_locality *loc)
{
	size_t rootlen = strlen(sysfs);

	while (strlen(dir) > rootlen) {
		cleanup_free char *numa = read_small(dir, "numa_node");
		cleanup_free char *list = read_small(dir, "local_cpulist");
		cleanup_free char *mask = NULL;
		const char *base = strrchr(dir, '/');

		if (list == NULL)
			mask = read_small(dir, "local_cpus");
		if (numa != NULL || list != NULL || mask != NULL) {
			loc->numa_node = numa != NULL ? atoi(numa) : -1;
			if (loc->numa_node < -1)
				loc->numa_node = -1;
			if (list != NULL) {
				cleanup_error struct ts_error *e = NULL;
				if (ts_cpulist_parse(list, &loc->local_cpus, &e) < 0)
					loc->local_cpus = NULL;
			} else if (mask != NULL) {
				loc->local_cpus = parse_mask(mask);
			}
			if (base != NULL && is_pci_address(base + 1))
				loc->pci_address = strdup(base + 1);
			loc->how = how;
			return 1;
		}
		*strrchr(dir, '/') = '\0';
	}
	return 0;
}

/* Resolve <sysfs>/<rel> and fill loc from there. */
static int from_sysfs_path(const char *sysfs, const char *rel, const char *how,
			   struct ts_device_locality *loc)
{
	cleanup_free char *path = NULL;
	char real[PATH_MAX];
	char rroot[PATH_MAX];

	if (asprintf(&path, "%s/%s", sysfs, rel) < 0)
		return -ENOMEM;
	if (realpath(path, real) == NULL || realpath(sysfs, rroot) == NULL)
		return 0;
	return fill_from_dir(rroot, real, how, loc);
}

/* /proc/driver/nvidia/gpus/<bus>/information: "Device Minor: N". */
static int from_nvidia(const struct ts_devloc_roots *roots, unsigned minor,
		       struct ts_device_locality *loc)
{
	cleanup_free char *dir = NULL;
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;

	if (asprintf(&dir, "%s/driver/nvidia/gpus", proc_of(roots)) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		cleanup_free char *gdir = NULL, *info = NULL, *rel = NULL;
		const char *m;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&gdir, "%s/%s", dir, de->d_name) < 0)
			return -ENOMEM;
		info = read_small(gdir, "information");
		if (info == NULL || (m = strstr(info, "Device Minor:")) == NULL)
			continue;
		if (strtoul(m + strlen("Device Minor:"), NULL, 10) != minor)
			continue;
		if (asprintf(&rel, "bus/pci/devices/%s", de->d_name) < 0)
			return -ENOMEM;
		int r = from_sysfs_path(sysfs_of(roots), rel, "nvidia", loc);
		if (r != 0)
			return r;
		loc->pci_address = strdup(de->d_name);
		loc->how = "nvidia";
		return 1;
	}
	return 0;
}

/* /dev/vfio/N: the devices of IOMMU group N share one locality. */
static int from_vfio(const struct ts_devloc_roots *roots, const char *group,
		     struct ts_device_locality *loc)
{
	cleanup_free char *dir = NULL;
	cleanup_closedir DIR *d = NULL;
	struct dirent *de;

	if (asprintf(&dir, "%s/kernel/iommu_groups/%s/devices", sysfs_of(roots), group) < 0)
		return -ENOMEM;
	d = opendir(dir);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL) {
		cleanup_free char *rel = NULL;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&rel, "kernel/iommu_groups/%s/devices/%s", group, de->d_name) < 0)
			return -ENOMEM;
		return from_sysfs_path(sysfs_of(roots), rel, "vfio", loc);
	}
	return 0;
}

int ts_device_locality_rdev(const struct ts_devloc_roots *roots, const char *path, bool is_block,
			    dev_t rdev, struct ts_device_locality *ret, struct ts_error **err)
{
	struct ts_device_locality loc = {.numa_node = -1, .how = "unknown"};
	cleanup_free char *rel = NULL;
	const char *vfio = "/dev/vfio/";
	int r = 0;

	/* DRM (226), InfiniBand uverbs (231), accel (261) and block devices
	 * all have a /sys/dev link; NVIDIA's proprietary nodes and VFIO group
	 * nodes do not. */
	if (!is_block && major(rdev) == NVIDIA_MAJOR && minor(rdev) < 128)
		r = from_nvidia(roots, minor(rdev), &loc);
	else if (!is_block && strncmp(path, vfio, strlen(vfio)) == 0 &&
		 isdigit((unsigned char)path[strlen(vfio)]))
		r = from_vfio(roots, path + strlen(vfio), &loc);
	if (r == 0) {
		if (asprintf(&rel, "dev/%s/%u:%u", is_block ? "block" : "char", major(rdev),
			     minor(rdev)) < 0)
			r = -ENOMEM;
		else
			r = from_sysfs_path(sysfs_of(roots), rel, "sysfs", &loc);
	}
	if (r < 0) {
		ts_device_locality_release(&loc);
		return ts_error_set(err, ENOMEM, "%s: out of memory", path);
	}
	*ret = loc;
	return 0;
}

int ts_device_locality(const struct ts_devloc_roots *roots, const char *path,
		       struct ts_device_locality *ret, struct ts_error **err)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return ts_error_set(err, errno, "%s: cannot stat device", path);
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
		return ts_error_set(err, 0, "%s: not a device node", path);
	return ts_device_locality_rdev(roots, path, S_ISBLK(st.st_mode), st.st_rdev, ret, err);
}
