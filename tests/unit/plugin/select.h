/*
 * select.h - the cmocka tests of src/plugin with what each needs (root, the
 * plugin user, Landlock, cgroup controllers).
 *
 * A test whose requirement this machine does not meet runs as a skip with
 * the reason, "ok N # SKIP test_name: <why>" (../require.h), so that it is
 * counted as skipped, never as passed or failed.
 */
#ifndef TS_TESTS_PLUGIN_SELECT_H
#define TS_TESTS_PLUGIN_SELECT_H

#include <stdint.h>
#include <stdio.h>

#include "../require.h"

struct ts_plugin_test {
	struct CMUnitTest test;
	/* NULL when the test can run here, else why not; NULL: no requirement */
	const char *(*unmet)(void);
};

/* The stand-in of a test that cannot run here: its state is the reason. */
static inline void ts_plugin_skip_unmet(void **state)
{
	ts_test_skip("%s", (const char *)*state);
}

static inline int ts_plugin_run_selected(const char *name, const struct ts_plugin_test *tests,
					 size_t n, CMFixtureFunction setup,
					 CMFixtureFunction teardown)
{
	struct CMUnitTest sel[64];
	size_t k = 0;

	for (size_t i = 0; i < n && k < 64; i++) {
		const char *why = tests[i].unmet != NULL ? tests[i].unmet() : NULL;

		sel[k] = tests[i].test;
		if (why != NULL) {
			sel[k].test_func = ts_plugin_skip_unmet;
			sel[k].setup_func = NULL;
			sel[k].teardown_func = NULL;
			sel[k].initial_state = (void *)(uintptr_t)why;
		}
		k++;
	}
	return _cmocka_run_group_tests(name, sel, k, setup, teardown);
}

#endif
