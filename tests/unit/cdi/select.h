/*
 * select.h - run the cmocka tests whose requirements are met; the others are
 * reported as TAP skips with the reason (../require.h makes cmocka 1.1's
 * skips count as skips).
 */
#ifndef TS_TESTS_CDI_SELECT_H
#define TS_TESTS_CDI_SELECT_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../require.h"

enum ts_test_needs {
	TS_NEEDS_NOTHING,
	TS_NEEDS_CORPUS, /* $TS_SHARED_DIR/corpus/cdi (optional: absent in a bare clone) */
	TS_NEEDS_ROOT,
};

struct ts_test {
	struct CMUnitTest test;
	enum ts_test_needs needs;
};

/* Stands in for a test whose needs are not met: *state is the reason. */
static inline void ts_selected_skip(void **state)
{
	ts_test_skip("%s", (const char *)*state);
}

static inline int ts_run_selected(const char *name, const struct ts_test *tests, size_t n)
{
	static char why_corpus[1024], why_root[64];
	struct CMUnitTest sel[64];
	size_t k = 0;

	for (size_t i = 0; i < n && k < 64; i++) {
		char *why = NULL;

		if (tests[i].needs == TS_NEEDS_CORPUS) {
			char *p = ts_test_corpus_try("cdi", "INDEX.md", why_corpus,
						     sizeof(why_corpus));
			why = p == NULL ? why_corpus : NULL;
			free(p);
		} else if (tests[i].needs == TS_NEEDS_ROOT && geteuid() != 0) {
			snprintf(why_root, sizeof(why_root), "needs root (uid %u)",
				 (unsigned)geteuid());
			why = why_root;
		}
		sel[k] = tests[i].test;
		if (why != NULL)
			sel[k] = (struct CMUnitTest){.name = tests[i].test.name,
						     .test_func = ts_selected_skip,
						     .initial_state = why};
		k++;
	}
	return _cmocka_run_group_tests(name, sel, k, NULL, NULL);
}

#endif
