/*
 * fuzz-plugin-lib.c - the plugin author's library (hooks/lib/toposhim-plugin.c), which
 * plugins run on what toposhim (or a hostile config) sends: tsp_request_read() on the
 * request, tsp_cpulist_parse()/tsp_cpulist_format() on its cpus and mems, tsp_cgroup_dir()
 * on its cgroupPath, and tsp_result_write() with its conf as the metadata.
 *
 * Input: the request.  Checked: a cpu list that parses formats to one that parses to the
 * same set, and formatting is stable; a result we write reads back as JSON; failures carry
 * a message.  Links only the library (it carries its own json.c and error.c).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "oci/json.h"
#include "toposhim-plugin.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static void cpulist(const char *s)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *text2 = NULL;
	struct tsp_cpuset a, b;

	if (s == NULL)
		return;
	if (tsp_cpulist_parse(s, &a, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL, "cpulist: failure without a message");
		return;
	}
	text = tsp_cpulist_format(&a);
	fuzz_check(text != NULL, "cpulist: cannot format");
	fuzz_check(tsp_cpulist_parse(text, &b, &err) == 0, "cpulist: cannot parse our format");
	fuzz_check(memcmp(&a, &b, sizeof(a)) == 0, "cpulist: round trip changed the set");
	fuzz_check(tsp_cpuset_count(&a) == tsp_cpuset_count(&b), "cpulist: count differs");
	text2 = tsp_cpulist_format(&b);
	fuzz_check(text2 != NULL && strcmp(text, text2) == 0, "cpulist: format is not stable");
	tsp_cpuset_subtract(&a, &b);
	fuzz_check(tsp_cpuset_count(&a) == 0, "cpulist: a set minus itself is not empty");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_close int fd = -EBADF, out = -EBADF;
	cleanup_free char *dir = NULL, *text = NULL;
	cleanup_json struct ts_json *res = NULL;
	struct tsp_request req;
	size_t len = 0;

	fd = memfd_create("request", MFD_CLOEXEC);
	fuzz_check(fd >= 0, "memfd");
	fuzz_check(size == 0 || write(fd, data, size) == (ssize_t)size, "memfd write");
	fuzz_check(lseek(fd, 0, SEEK_SET) == 0, "memfd seek");
	if (tsp_request_read(fd, &req, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL, "request: failure without a message");
		return 0;
	}
	fuzz_check(req.state != NULL && req.container_id != NULL, "request: no state or id");
	cpulist(req.cpus_str);
	cpulist(req.mems_str);
	if (req.cgroup_path != NULL) {
		/* without a cgroupPath it reads /proc/<pid>/cgroup: not the fuzzer's to choose */
		if (tsp_cgroup_dir(&req, "/sys/fs/cgroup", "cpuset", &dir, &err) < 0)
			fuzz_check(err != NULL && err->msg != NULL,
				   "cgroup: failure without a message");
		else
			fuzz_check(dir != NULL, "cgroup: success without a dir");
		ts_error_clear(&err);
	}
	out = memfd_create("result", MFD_CLOEXEC);
	fuzz_check(out >= 0, "memfd");
	if (tsp_result_write(out, "fuzz", req.container_id,
			     req.conf != NULL && req.conf->type == TS_JSON_OBJECT ? req.conf : NULL,
			     &err) == 0) {
		fuzz_check(lseek(out, 0, SEEK_SET) == 0, "memfd seek");
		fuzz_check(ts_read_fd(out, "result", 0, &text, &len, &err) == 0, "read the result");
		fuzz_check(ts_json_parse(text, len, "result", &res, &err) == 0,
			   "our result is not JSON");
	} else {
		fuzz_check(err != NULL && err->msg != NULL, "result: failure without a message");
	}
	tsp_request_release(&req);
	return 0;
}
