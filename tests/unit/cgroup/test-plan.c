/* Unit tests of src/cgroup/plan.c: the order of direct cpuset writes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup/internal.h"
#include "util/cleanup.h"

struct tgt {
	const char *path, *old_cpus, *new_cpus, *old_mems, *new_mems; /* NULL new = unchanged */
};

struct row {
	const char *name;
	struct tgt t[4];
	const char *want; /* "path cpus=v; path mems=v" */
};

static const struct row rows[] = {
	{"shrink: children before parents",
	 {{"kubepods/pod1", "0-7", "0-3", "0", NULL},
	  {"kubepods/pod1/c1", "0-7", "0-3", "0", NULL},
	  {"kubepods/pod1/c2", "0-7", "0-3", "0", NULL}},
	 "kubepods/pod1/c1 cpus=0-3; kubepods/pod1/c2 cpus=0-3; kubepods/pod1 cpus=0-3"},
	{"grow: parents before children",
	 {{"kubepods/pod1/c1", "0-3", "0-7", "0", NULL},
	  {"kubepods/pod1/c2", "0-3", "0-7", "0", NULL},
	  {"kubepods/pod1", "0-3", "0-7", "0", NULL}},
	 "kubepods/pod1 cpus=0-7; kubepods/pod1/c1 cpus=0-7; kubepods/pod1/c2 cpus=0-7"},
	{"move: shrink to the overlap first, then grow",
	 {{"c", "0-3", "2-5", "0", "0-1"}},
	 "c cpus=2-3; c cpus=2-5; c mems=0-1"},
	{"disjoint: one write", {{"c", "0-1", "2-3", "0", NULL}}, "c cpus=2-3"},
	{"unchanged: no write", {{"c", "0-3", "0-3", "0-1", "0-1"}}, ""},
	{"mems shrink", {{"c", "0-3", NULL, "0-1", "1"}}, "c mems=1"},
	{"parent shrinks while the child grows into it",
	 {{"a/b", "0-1", "0-5", "0", NULL}, {"a", "0-7", "0-5", "0", NULL}},
	 "a cpus=0-5; a/b cpus=0-5"},
};

static void test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ts_cgroup_plan_input in[4] = {0};
		struct ts_cgroup_write *w = NULL;
		size_t n = 0, nw = 0;
		char got[512] = "";

		for (; n < 4 && rows[i].t[n].path != NULL; n++) {
			const struct tgt *t = &rows[i].t[n];
			in[n].cgroup_path = t->path;
			in[n].has_cpus = t->new_cpus != NULL;
			in[n].has_mems = t->new_mems != NULL;
			assert_int_equal(ts_cgroup_set_parse(t->old_cpus, &in[n].old_cpus), 0);
			assert_int_equal(ts_cgroup_set_parse(t->old_mems, &in[n].old_mems), 0);
			if (t->new_cpus)
				assert_int_equal(ts_cgroup_set_parse(t->new_cpus, &in[n].new_cpus),
						 0);
			if (t->new_mems)
				assert_int_equal(ts_cgroup_set_parse(t->new_mems, &in[n].new_mems),
						 0);
		}
		assert_int_equal(ts_cgroup_plan(in, n, &w, &nw), 0);
		for (size_t k = 0; k < nw; k++) {
			char item[128];
			snprintf(item, sizeof(item), "%s%s %s=%s", k ? "; " : "",
				 in[w[k].target].cgroup_path, w[k].mems ? "mems" : "cpus",
				 w[k].value);
			strcat(got, item);
		}
		ts_cgroup_writes_free(w, nw);
		if (strcmp(got, rows[i].want) != 0)
			fail_msg("%s:\n  got  %s\n  want %s", rows[i].name, got, rows[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
