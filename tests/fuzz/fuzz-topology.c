/*
 * fuzz-topology.c - the topology cache placement reads (src/topology/snapshot.c):
 * ts_topology_snapshot_load(), toposhim's own parser of the derived tables, loaded
 * without hwloc.  A snapshot that loads must export, and the export must load and export
 * to the same text.  The first byte is a selector kept for the seeds' format (ignored).
 *
 * Not here: hwloc's XML import (ts_topology_load_xml_buffer()), hwloc's own parser.  Run
 * on mutated XML, Debian 12's hwloc 2.9.0 dereferences NULL in hwloc_bitmap_compare_first()
 * under hwloc_topology_load() and leaks objects on other inputs; toposhim reads XML only
 * from the operator's config and from its own cache in the root-only state dir
 * (docs/security.md, "Fuzzing").
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_free char *text = NULL;

	if (size < 1)
		return 0;
	text = fuzz_strndup(data + 1, size - 1);
	snapshot(text);
	return 0;
}
