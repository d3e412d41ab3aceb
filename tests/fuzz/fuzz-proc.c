/*
 * fuzz-proc.c - the small /proc, sysfs and cgroup files toposhim reads.
 *
 * First byte (low 3 bits) picks the file, the rest is its content:
 *   0  <proc>/<pid>/stat     ts_state_proc_start_ticks() (field 22 after the last ')')
 *   1  <proc>/<pid>/cgroup   ts_state_proc_cgroup() (cpuset or "0::" line)
 *   2  <cgroup root>/.toposhim-cgroup-mode   ts_cgroup_detect_mode()
 *   3  <sysfs>/devices/system/cpu/online, node/online and <proc>/sys/kernel/random/boot_id,
 *      split by FUZZ_SEP: ts_topology_host_key()
 *   4  a device's locality (src/topology/devloc.c, ts_device_locality_rdev()):
 *      "<nvidia information>" FUZZ_SEP "<numa_node>" FUZZ_SEP "<local_cpulist>" FUZZ_SEP
 *      "<local_cpus>" for the PCI device behind /sys/dev/char/226:0 and behind NVIDIA's
 *      /proc/driver/nvidia/gpus/<bus>/information (an empty part: no such file)
 *   5  /proc/self/mountinfo, as the plugin sandbox reads it
 *      (ts_plugin_fsview_parse_mounts(), src/plugin/fsview.c)
 * Failures must carry a message naming the file.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "fuzz.h"
#include "plugin/internal.h"
#include "state/state.h"
#include "topology/topology.h"
#include "util/cleanup.h"

/* part, or no file for an empty part */
static void put(const char *rel, const char *part)
{
	if (part[0] != '\0')
		fuzz_write(fuzz_path(rel), part, strlen(part));
}

static void devloc(const uint8_t *data, size_t size)
{
	static const char pci[] = "dsys/devices/pci0000:00/0000:00:02.0";
	struct ts_devloc_roots roots;
	char sys[4096], proc[4096], target[4096];
	char *parts[4];
	fuzz_split(data, size, parts, 4);
	snprintf(sys, sizeof(sys), "%s", fuzz_path("dsys"));
	snprintf(proc, sizeof(proc), "%s", fuzz_path("dproc"));
	fuzz_rmtree(sys);
	fuzz_rmtree(proc);
	fuzz_mkdir(fuzz_path(pci));
	fuzz_mkdir(fuzz_path("dsys/dev/char"));
	fuzz_mkdir(fuzz_path("dsys/bus/pci/devices"));
	fuzz_mkdir(fuzz_path("dproc/driver/nvidia/gpus/0000:00:02.0"));
	snprintf(target, sizeof(target), "%s", fuzz_path(pci));
	fuzz_check(symlink(target, fuzz_path("dsys/dev/char/226:0")) == 0, "symlink 226:0");
	fuzz_check(symlink(target, fuzz_path("dsys/bus/pci/devices/0000:00:02.0")) == 0,
		   "symlink pci");
	put("dproc/driver/nvidia/gpus/0000:00:02.0/information", parts[0]);
	put("dsys/devices/pci0000:00/0000:00:02.0/numa_node", parts[1]);
	put("dsys/devices/pci0000:00/0000:00:02.0/local_cpulist", parts[2]);
	put("dsys/devices/pci0000:00/0000:00:02.0/local_cpus", parts[3]);
	roots.sysfs_root = sys;
	roots.proc_root = proc;
	for (int i = 0; i < 2; i++) {
		cleanup_error struct ts_error *err = NULL;
		struct ts_device_locality loc;
		cleanup_free char *cpus = NULL;
		dev_t rdev = i == 0 ? makedev(226, 0) : makedev(195, 0);

		fuzz_check(ts_device_locality_rdev(&roots,
						   i == 0 ? "/dev/dri/card0" : "/dev/nvidia0",
						   false, rdev, &loc, &err) == 0,
			   "devloc: failed");
		fuzz_check(loc.numa_node >= -1 && loc.how != NULL, "devloc: numa node below -1");
		if (loc.local_cpus != NULL)
			fuzz_check(ts_cpulist_format(loc.local_cpus, &cpus, &err) == 0,
				   "devloc: local cpus do not format");
		ts_device_locality_release(&loc);
	}
	fuzz_parts_free(parts, 4);
}

static void failed(struct ts_error *err, const char *what)
{
	fuzz_check(err != NULL && err->msg != NULL, what);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL, *key = NULL;
	char proc[4096], cg[4096], sys[4096];
	uint64_t ticks = 0;
	bool alive = false;
	enum ts_cgroup_mode mode;
	char *parts[3];

	if (size < 1)
		return 0;
	snprintf(proc, sizeof(proc), "%s", fuzz_path("proc"));
	snprintf(cg, sizeof(cg), "%s", fuzz_path("cgroup"));
	snprintf(sys, sizeof(sys), "%s", fuzz_path("sys"));
	if ((data[0] & 7) == 5) {
		cleanup_free char *text = fuzz_strndup(data + 1, size - 1);
		char **mounts = NULL;
		size_t n = 0;

		if (ts_plugin_fsview_parse_mounts(text, &mounts, &err) < 0) {
			failed(err, "mountinfo: failure without a message");
			return 0;
		}
		for (; mounts[n] != NULL; n++)
			fuzz_check(strlen(mounts[n]) < size,
				   "mountinfo: a mount point longer than the text");
		fuzz_check(n > 0, "mountinfo: success without a mount");
		for (size_t i = 0; i < n; i++)
			free(mounts[i]);
		free(mounts);
		return 0;
	}
	if (data[0] & 4) {
		devloc(data + 1, size - 1);
		return 0;
	}
	switch (data[0] & 3) {
	case 0:
		fuzz_mkdir(fuzz_path("proc/7"));
		fuzz_write(fuzz_path("proc/7/stat"), data + 1, size - 1);
		if (ts_state_proc_start_ticks(proc, 7, &ticks, &alive, &err) < 0)
			failed(err, "stat: failure without a message");
		break;
	case 1:
		fuzz_mkdir(fuzz_path("proc/7"));
		fuzz_write(fuzz_path("proc/7/cgroup"), data + 1, size - 1);
		if (ts_state_proc_cgroup(proc, 7, &path, &err) < 0)
			failed(err, "cgroup: failure without a message");
		else
			fuzz_check(path != NULL, "cgroup: success without a path");
		break;
	case 2:
		fuzz_mkdir(cg);
		fuzz_write(fuzz_path("cgroup/" TS_CGROUP_MODE_FILE), data + 1, size - 1);
		if (ts_cgroup_detect_mode(cg, &mode, &err) < 0)
			failed(err, "mode: failure without a message");
		else
			fuzz_check(ts_cgroup_mode_to_string(mode) != NULL, "mode: no name");
		break;
	default:
		fuzz_split(data + 1, size - 1, parts, 3);
		fuzz_mkdir(fuzz_path("sys/devices/system/cpu"));
		fuzz_mkdir(fuzz_path("sys/devices/system/node"));
		fuzz_mkdir(fuzz_path("proc/sys/kernel/random"));
		fuzz_write(fuzz_path("sys/devices/system/cpu/online"), parts[0], strlen(parts[0]));
		fuzz_write(fuzz_path("sys/devices/system/node/online"), parts[1], strlen(parts[1]));
		fuzz_write(fuzz_path("proc/sys/kernel/random/boot_id"), parts[2], strlen(parts[2]));
		if (ts_topology_host_key(sys, proc, &key, &err) < 0)
			failed(err, "host key: failure without a message");
		else
			fuzz_check(strncmp(key, "online=", 7) == 0, "host key: no online=");
		fuzz_parts_free(parts, 3);
		break;
	}
	return 0;
}
