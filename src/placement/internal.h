/*
 * internal.h - shared inside src/placement only.
 */
#ifndef TS_PLACEMENT_INTERNAL_H
#define TS_PLACEMENT_INTERNAL_H

#include <errno.h>
#include <stdlib.h>

#include "placement/placement.h"

/* A growable NULL-terminated vector of owned strings. */
struct ts_strv {
	char **v;
	size_t n;
};

/* Append s (taking ownership, also on failure). @return 0; -ENOMEM. */
static inline int ts_strv_push(struct ts_strv *sv, char *s)
{
	char **v;

	if (s == NULL)
		return -ENOMEM;
	v = realloc(sv->v, (sv->n + 2) * sizeof(*v));
	if (v == NULL) {
		free(s);
		return -ENOMEM;
	}
	v[sv->n++] = s;
	v[sv->n] = NULL;
	sv->v = v;
	return 0;
}

/* Hand the vector over (never NULL unless out of memory). */
static inline char **ts_strv_take(struct ts_strv *sv)
{
	char **v = sv->v;

	if (v == NULL)
		v = calloc(1, sizeof(*v));
	sv->v = NULL;
	sv->n = 0;
	return v;
}

static inline void ts_strv_release(struct ts_strv *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = 0;
}

/* Add or replace a class of cfg. @return 0; -ENOMEM. */
int ts_placement_config_add_class(struct ts_placement_config *cfg, const char *name,
				  enum ts_placement_pool pool, enum ts_placement_kind kind);

#endif
