/*
 * fuzz-topology.c - the topology cache (src/topology): the snapshot that placement loads
 * without hwloc (ts_topology_snapshot_load()), and the hwloc XML of the cache and of the
 * config's "topology" (ts_topology_load_xml_buffer()).
 *
 * First byte, bit 0 clear: the rest is a snapshot; one that loads must export, and the
 * export must load and export to the same text.  Bit 0 set: the rest is hwloc XML; a
 * topology it gives must export a snapshot that loads.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "topology/topology.h"
#include "util/cleanup.h"

static void snapshot(const char *text)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *out = NULL, *out2 = NULL;
	struct ts_topology *t = NULL, *t2 = NULL;

	if (ts_topology_snapshot_load(text, "fuzz", &t, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL && t == NULL,
			   "snapshot: failure without a message");
		return;
	}
	fuzz_check(ts_topology_snapshot_export(t, &out, &err) == 0, "snapshot: cannot export");
	fuzz_check(ts_topology_snapshot_load(out, "again", &t2, &err) == 0,
		   "snapshot: cannot load our own export");
	fuzz_check(ts_topology_snapshot_export(t2, &out2, &err) == 0, "snapshot: second export");
	fuzz_check(strcmp(out, out2) == 0, "snapshot: export is not stable");
	ts_topology_free(t);
	ts_topology_free(t2);
}

static void xml(const char *text)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *out = NULL;
	struct ts_topology *t = NULL, *t2 = NULL;

	if (ts_topology_load_xml_buffer(text, "fuzz.xml", &t, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL && t == NULL,
			   "xml: failure without a message");
		return;
	}
	fuzz_check(ts_topology_snapshot_export(t, &out, &err) == 0, "xml: cannot export");
	fuzz_check(ts_topology_snapshot_load(out, "again", &t2, &err) == 0,
		   "xml: the snapshot of a loaded topology does not load");
	ts_topology_free(t);
	ts_topology_free(t2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_free char *text = NULL;

	if (size < 1)
		return 0;
	text = fuzz_strndup(data + 1, size - 1);
	if ((data[0] & 1) == 0)
		snapshot(text);
	else
		xml(text);
	return 0;
}
