/*
 * resize-one - test driver for tests/integration/cgroup.bats: resize one
 * running container with ts_cgroup_resize().
 *
 *   resize-one MODE RUNTIME RUNTIME_ROOT CONTAINER_ID CGROUP_PATH PID CPUS MEMS
 *
 * MODE is unified, hybrid or legacy; the cgroup root is ts_cgroup_root(NULL).
 * An empty MEMS leaves the mems alone.  Prints "<status> via <runtime|direct>"
 * and the message, if any; exits 0 when the status is ok, 1 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"

int main(int argc, char **argv)
{
	cleanup_error struct ts_error *e = NULL;
	struct ts_cgroup_resize_result *res = NULL;

	if (argc != 9) {
		fprintf(stderr,
			"usage: resize-one MODE RUNTIME RUNTIME_ROOT ID CGROUP_PATH PID CPUS "
			"MEMS\n");
		return 2;
	}
	const struct ts_cgroup_resize_target t = {
		.container_id = argv[4],
		.cgroup_path = argv[5],
		.pid = (pid_t)atoi(argv[6]),
		.cpus_str = argv[7],
		.mems_str = argv[8][0] ? argv[8] : NULL,
		.runtime_path = argv[2],
		.runtime_root = argv[3],
	};
	const struct ts_cgroup_resize_options opts = {
		.root = ts_cgroup_root(NULL),
		.mode = ts_cgroup_mode_from_string(argv[1]),
	};
	if (ts_cgroup_resize(&t, 1, &opts, &res, &e) < 0) {
		fprintf(stderr, "resize-one: %s\n", e->msg);
		return 1;
	}
	printf("%s via %s%s%s\n", ts_cgroup_resize_status_to_string(res[0].status),
	       res[0].via_runtime ? "runtime" : "direct", res[0].message ? ": " : "",
	       res[0].message ? res[0].message : "");
	int ok = res[0].status == TS_CGROUP_RESIZE_OK;
	ts_cgroup_resize_results_free(res, 1);
	return ok ? 0 : 1;
}
