/*
 * fuzz-runtime-state.c - what toposhim reads of a runtime's own state: runc's
 * <root>/<id>/state.json and crun's <root>/<id>/status (ts_state_runtime_init(),
 * ts_runtime_family_of_container()), and toposhim's adoption of live containers from them
 * (ts_state_load() with a recorded runtime root: the bundle from runc's "bundle=" label or
 * crun's "bundle", then that bundle's config.json).
 *
 * First byte, bit 0: crun (status) instead of runc (state.json); bit 1: also load a state
 * store that remembers the root.  Then "<state text>" FUZZ_SEP "<bundle config.json>".
 * The bundle dir is <tmp>/bundle; the harness replaces "@B@" in the state text with it.
 * A pid the state gives must be positive.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/runtime.h"
#include "state/state.h"
#include "util/cleanup.h"

/* s with every "@B@" replaced by bundle; caller frees */
static char *expand(const char *s, const char *bundle)
{
	size_t blen = strlen(bundle), len = 0;
	char *out = malloc(strlen(s) * (blen + 1) + 1);

	fuzz_check(out != NULL, "out of memory");
	while (*s != '\0') {
		if (strncmp(s, "@B@", 3) == 0) {
			memcpy(out + len, bundle, blen);
			len += blen;
			s += 3;
		} else {
			out[len++] = *s++;
		}
	}
	out[len] = '\0';
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *cgroup = NULL, *warning = NULL;
	char root[4096], bundle[4096], statedir[4096];
	char *parts[2];
	bool crun;
	pid_t pid = 0;
	uint64_t ticks = 0;
	enum ts_runtime_family f;

	if (size < 1)
		return 0;
	crun = (data[0] & 1) != 0;
	fuzz_split(data + 1, size - 1, parts, 2);
	snprintf(root, sizeof(root), "%s", fuzz_path("root"));
	snprintf(bundle, sizeof(bundle), "%s", fuzz_path("bundle"));
	fuzz_rmtree(root);
	fuzz_mkdir(fuzz_path("root/c1"));
	fuzz_mkdir(bundle);
	text = expand(parts[0], bundle);
	fuzz_write(fuzz_path(crun ? "root/c1/status" : "root/c1/state.json"), text, strlen(text));
	fuzz_write(fuzz_path("bundle/config.json"), parts[1], strlen(parts[1]));
	f = ts_runtime_family_of_container(root, "c1");
	fuzz_check(f == (crun ? TS_RUNTIME_FAMILY_CRUN : TS_RUNTIME_FAMILY_RUNC),
		   "family does not follow the state file");
	if (ts_state_runtime_init(root, "c1", &pid, &ticks, &cgroup) == 1)
		fuzz_check(pid > 0, "a pid that is not positive");
	if (data[0] & 2) {
		/* a store whose record names the root: the load looks for live containers there */
		struct ts_state_options opts = {0};
		struct ts_state *s = NULL;
		char record[8192];

		snprintf(statedir, sizeof(statedir), "%s", fuzz_path("state"));
		fuzz_rmtree(statedir);
		fuzz_mkdir(fuzz_path("proc"));
		opts.state_dir = statedir;
		opts.proc_root = fuzz_path("proc");
		fuzz_check(ts_state_open(&opts, &s, &err) == 0, "state: open failed");
		snprintf(record, sizeof(record),
			 "{\"version\":1,\"allocations\":[{\"container_id\":\"c0\","
			 "\"runtime_root\":\"%s\",\"status\":\"created\",\"created_usec\":1}]}",
			 root);
		fuzz_write(fuzz_path("state/allocations.json"), record, strlen(record));
		fuzz_check(ts_state_load(s, &warning, &err) == 0, "state: load failed");
		ts_state_close(s);
	}
	fuzz_parts_free(parts, 2);
	return 0;
}
