/*
 * hook-driver.c - a stand-in for the toposhim binary in the real-runtime hook
 * test, until main dispatches "hook" itself: it runs the same library calls.
 *   hook-driver hook <stage>              as `toposhim hook <stage>`
 *   hook-driver alloc ...                 as `toposhimctl alloc ...`
 *   hook-driver inject <config.json>      ts_hook_inject() with this binary's
 *                                         path and the env's state dir/config
 *   hook-driver put <id> <runtime root>   a "creating" allocation, as create
 *                                         writes before it execs the runtime
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd-hook.h"
#include "cli/ctl.h"
#include "oci/json.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static int fail(struct ts_error *err)
{
	cleanup_free char *msg = ts_error_format(err);

	fprintf(stderr, "hook-driver: error: %s\n", msg ? msg : "out of memory");
	ts_error_free(err);
	return 1;
}

static int inject(const char *path)
{
	struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_free char *buf = NULL, *exe = NULL, *out = NULL;
	size_t len = 0;

	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, &len, &err) < 0 ||
	    ts_json_parse(buf, len, "config.json", &config, &err) < 0 ||
	    ts_hook_self_exe(&exe, &err) < 0 ||
	    ts_hook_inject(config, exe,
			   &(struct ts_hook_env){.state_dir = getenv("TOPOSHIM_STATE_DIR"),
						 .config_path = getenv("TOPOSHIM_CONFIG"),
						 .runtime_root = getenv("TOPOSHIM_RUNTIME_ROOT")},
			   &err) < 0 ||
	    ts_json_serialize(config, true, &out, &len, &err) < 0 ||
	    ts_write_file_atomic_at(AT_FDCWD, path, out, len, 0644, &err) < 0)
		return fail(err);
	return 0;
}

static int put(const char *container_id, const char *runtime_root)
{
	struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_alloc *a = NULL;

	if (ts_state_open(NULL, &s, &err) < 0 || ts_state_load(s, NULL, &err) < 0 ||
	    (a = ts_alloc_new(container_id, &err)) == NULL)
		return fail(err);
	a->runtime_root = strdup(runtime_root);
	a->cpus_str = strdup("0");
	if (a->runtime_root == NULL || a->cpus_str == NULL) {
		ts_alloc_free(a);
		fprintf(stderr, "hook-driver: error: out of memory\n");
		return 1;
	}
	if (ts_state_put(s, a, &err) < 0 || ts_state_commit(s, &err) < 0)
		return fail(err);
	return 0;
}

int main(int argc, char **argv)
{
	struct ts_error *err = NULL;

	if (argc >= 2 && strcmp(argv[1], "hook") == 0)
		return ts_cmd_hook(argc - 1, argv + 1, &err) < 0 ? fail(err) : 0;
	if (argc >= 2 && strcmp(argv[1], "alloc") == 0)
		return ts_ctl_alloc(argc - 1, argv + 1);
	if (argc == 3 && strcmp(argv[1], "inject") == 0)
		return inject(argv[2]);
	if (argc == 4 && strcmp(argv[1], "put") == 0)
		return put(argv[2], argv[3]);
	fprintf(stderr, "usage: hook-driver hook|alloc|inject|put ...\n");
	return 2;
}
