/*
 * select.h - run only the cmocka tests of src/plugin whose requirements the
 * machine meets (root, the plugin user, Landlock, cgroup controllers).
 *
 * cmocka 1.1 reports skip() as "not ok ... # SKIP", which automake's TAP
 * driver counts as a failure (see tests/unit/cdi/select.h): a test whose
 * requirement is not met is left out of the run with a "# skipped <test>:
 * <why>" line instead.
 */
#ifndef TS_TESTS_PLUGIN_SELECT_H
#define TS_TESTS_PLUGIN_SELECT_H

#include <stdio.h>

struct ts_plugin_test {
	struct CMUnitTest test;
	/* NULL when the test can run here, else why not; NULL: no requirement */
	const char *(*unmet)(void);
};

static inline int ts_plugin_run_selected(const char *name, const struct ts_plugin_test *tests,
					 size_t n, CMFixtureFunction setup,
					 CMFixtureFunction teardown)
{
	struct CMUnitTest sel[64];
	size_t k = 0;

	for (size_t i = 0; i < n && k < 64; i++) {
		const char *why = tests[i].unmet != NULL ? tests[i].unmet() : NULL;

		if (why != NULL)
			printf("# skipped %s: %s\n", tests[i].test.name, why);
		else
			sel[k++] = tests[i].test;
	}
	fflush(stdout);
	return _cmocka_run_group_tests(name, sel, k, setup, teardown);
}

#endif
