/*
 * fuzz-cpulist.c - cpu and node lists: ts_cpulist_parse()/ts_cpulist_format() (topology),
 * ts_cpulist_valid() (util/text.c), the cgroup sets of a resize (ts_cgroup_set_parse(),
 * src/cgroup/set.c) and the resize plan built from them (ts_cgroup_plan()).
 *
 * Input: a list; FUZZ_SEP and three more lists make a plan of two nested cgroups
 * (old cpus, new cpus, old mems, new mems).  Checked: ts_cpulist_valid() agrees with
 * ts_cpulist_parse() (both implement the same strict syntax); format then parse gives the
 * same set and formatting is stable, for both parsers; when both accept a list they agree
 * on the set; a plan writes only lists that parse.
 */
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup.h"
#include "cgroup/internal.h"
#include "fuzz.h"
#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/text.h"

static char *hwloc_roundtrip(const char *s)
{
	cleanup_error struct ts_error *err = NULL;
	hwloc_bitmap_t b = NULL, b2 = NULL;
	char *text = NULL;
	cleanup_free char *text2 = NULL;
	bool valid = ts_cpulist_valid(s);

	if (ts_cpulist_parse(s, &b, &err) < 0) {
		fuzz_check(!valid, "cpulist: valid but does not parse");
		fuzz_check(err != NULL && err->msg != NULL, "cpulist: failure without a message");
		return NULL;
	}
	fuzz_check(valid, "cpulist: parses but not valid");
	fuzz_check(ts_cpulist_format(b, &text, &err) == 0, "cpulist: cannot format");
	fuzz_check(ts_cpulist_valid(text), "cpulist: our format is not valid");
	fuzz_check(ts_cpulist_parse(text, &b2, &err) == 0, "cpulist: cannot parse our format");
	fuzz_check(hwloc_bitmap_isequal(b, b2), "cpulist: round trip changed the set");
	fuzz_check(ts_cpulist_format(b2, &text2, &err) == 0 && strcmp(text, text2) == 0,
		   "cpulist: format is not stable");
	hwloc_bitmap_free(b);
	hwloc_bitmap_free(b2);
	return text;
}

static char *set_roundtrip(const char *s, struct ts_cgroup_set *set)
{
	struct ts_cgroup_set again;
	char *text;
	cleanup_free char *text2 = NULL;

	if (ts_cgroup_set_parse(s, set) < 0)
		return NULL;
	text = ts_cgroup_set_format(set);
	fuzz_check(text != NULL, "set: cannot format");
	fuzz_check(ts_cgroup_set_parse(text, &again) == 0, "set: cannot parse our format");
	fuzz_check(ts_cgroup_set_equal(set, &again), "set: round trip changed the set");
	text2 = ts_cgroup_set_format(&again);
	fuzz_check(text2 != NULL && strcmp(text, text2) == 0, "set: format is not stable");
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ts_cgroup_plan_input in[2] = {{.cgroup_path = "kubepods/pod1"},
					     {.cgroup_path = "kubepods/pod1/c1"}};
	struct ts_cgroup_set sets[4] = {{{0}}};
	struct ts_cgroup_write *w = NULL;
	char *parts[4];
	size_t n = fuzz_split(data, size, parts, 4), nw = 0;
	cleanup_free char *a = NULL, *b = NULL;
	bool ok[4];

	a = hwloc_roundtrip(parts[0]);
	b = set_roundtrip(parts[0], &sets[0]);
	if (a != NULL && b != NULL)
		fuzz_check(strcmp(a, b) == 0, "the two parsers disagree on a list");
	ok[0] = b != NULL;
	for (size_t i = 1; i < 4; i++) {
		free(set_roundtrip(parts[i], &sets[i]));
		ok[i] = ts_cgroup_set_parse(parts[i], &sets[i]) == 0;
	}
	if (n == 4 && ok[0] && ok[1] && ok[2] && ok[3]) {
		in[0].has_cpus = in[0].has_mems = in[1].has_cpus = true;
		in[0].old_cpus = sets[0];
		in[0].new_cpus = sets[1];
		in[0].old_mems = sets[2];
		in[0].new_mems = sets[3];
		in[1].old_cpus = sets[1];
		in[1].new_cpus = sets[0];
		fuzz_check(ts_cgroup_plan(in, 2, &w, &nw) == 0, "plan failed");
		for (size_t i = 0; i < nw; i++) {
			struct ts_cgroup_set s;

			fuzz_check(w[i].target < 2, "plan: write for no target");
			fuzz_check(ts_cgroup_set_parse(w[i].value, &s) == 0,
				   "plan: writes a list that does not parse");
		}
		ts_cgroup_writes_free(w, nw);
	}
	fuzz_parts_free(parts, 4);
	return 0;
}
