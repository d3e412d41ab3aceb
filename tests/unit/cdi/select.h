/*
 * select.h - run only the cmocka tests whose requirements are met.
 *
 * cmocka 1.1 reports skip() as "not ok ... # SKIP", which automake's TAP
 * driver counts as a failure; so tests that need the shared corpus or root
 * are left out of the run instead, with a "# skipped" diagnostic line.
 */
#ifndef TS_TESTS_CDI_SELECT_H
#define TS_TESTS_CDI_SELECT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum ts_test_needs {
	TS_NEEDS_NOTHING,
	TS_NEEDS_CORPUS, /* $TS_SHARED_DIR/corpus/cdi (absent in a tarball build) */
	TS_NEEDS_ROOT,
};

struct ts_test {
	struct CMUnitTest test;
	enum ts_test_needs needs;
};

static inline bool ts_corpus_present(void)
{
	const char *shared = getenv("TS_SHARED_DIR");
	char path[4096];

	if (shared == NULL)
		return false;
	snprintf(path, sizeof(path), "%s/corpus/cdi/INDEX.md", shared);
	return access(path, R_OK) == 0;
}

static inline int ts_run_selected(const char *name, const struct ts_test *tests, size_t n)
{
	struct CMUnitTest sel[64];
	size_t k = 0;

	for (size_t i = 0; i < n && k < 64; i++) {
		const char *why = NULL;

		if (tests[i].needs == TS_NEEDS_CORPUS && !ts_corpus_present())
			why = "no CDI corpus at $TS_SHARED_DIR/corpus/cdi";
		else if (tests[i].needs == TS_NEEDS_ROOT && geteuid() != 0)
			why = "needs root";
		if (why != NULL)
			printf("# skipped %s: %s\n", tests[i].test.name, why);
		else
			sel[k++] = tests[i].test;
	}
	return _cmocka_run_group_tests(name, sel, k, NULL, NULL);
}

#endif
