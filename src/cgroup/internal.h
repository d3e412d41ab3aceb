/*
 * internal.h - shared inside src/cgroup only.
 *
 * A small fixed-size set of CPU (or NUMA node) OS indexes, for comparing
 * and intersecting cpuset list strings ("0-3,8") without hwloc: cgroup sits
 * beside topology in the layering and may not include it.
 */
#ifndef TS_CGROUP_INTERNAL_H
#define TS_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup.h"

/* Highest index + 1 a set holds; the kernel's NR_CPUS is at most 8192. */
#define TS_CGROUP_SET_BITS 8192

struct ts_cgroup_set {
	uint64_t words[TS_CGROUP_SET_BITS / 64];
};

/**
 * Parse a list string: comma-separated indexes and ranges "a-b"
 * (a <= b), surrounding whitespace and a trailing newline allowed, empty
 * string = empty set.
 * @return 0; -EINVAL for anything else or an index >= TS_CGROUP_SET_BITS.
 *         No error object: callers name file, field and value.
 */
int ts_cgroup_set_parse(const char *s, struct ts_cgroup_set *ret);

/**
 * Format a set as the kernel does ("0-3,8"; "" for the empty set).
 * @return a new string the caller frees, or NULL on OOM.
 */
char *ts_cgroup_set_format(const struct ts_cgroup_set *set);

bool ts_cgroup_set_equal(const struct ts_cgroup_set *a, const struct ts_cgroup_set *b);
bool ts_cgroup_set_is_subset(const struct ts_cgroup_set *sub, const struct ts_cgroup_set *super);
bool ts_cgroup_set_is_empty(const struct ts_cgroup_set *a);
void ts_cgroup_set_and(struct ts_cgroup_set *dst, const struct ts_cgroup_set *a,
		       const struct ts_cgroup_set *b);

/* One write of a resize plan. */
struct ts_cgroup_write {
	size_t target; /* index into the targets */
	bool mems;     /* false: cpuset.cpus, true: cpuset.mems */
	char *value;   /* list string to write; owned */
};

/* Current and wanted sets of one target, the input of the plan. */
struct ts_cgroup_plan_input {
	const char *cgroup_path; /* normalised: no leading/trailing '/', no "//" */
	bool has_cpus, has_mems;
	struct ts_cgroup_set old_cpus, new_cpus, old_mems, new_mems;
};

/**
 * Order the direct writes of a resize (see ts_cgroup_resize()): phase 1
 * writes old∩new for every set that loses members (when old∩new is not
 * empty), deepest path first; phase 2 writes every new value that differs
 * from what is then in the file, shallowest path first.  Ties keep target
 * order; within a target cpus come before mems.
 * @param[out] ret_writes  the writes; caller frees with ts_cgroup_writes_free().
 * @return 0, or -ENOMEM (no error object).
 */
int ts_cgroup_plan(const struct ts_cgroup_plan_input *in, size_t n,
		   struct ts_cgroup_write **ret_writes, size_t *ret_n);

void ts_cgroup_writes_free(struct ts_cgroup_write *w, size_t n);

#endif
