/*
 * plan.c - the order of direct cpuset writes when several nested cgroups
 * change at once: shrink children before parents, grow parents before
 * children, so that no write ever asks a cgroup for cpus its parent has
 * not got (cgroup v1 refuses such writes with EINVAL/EBUSY, cgroup v2
 * silently narrows cpuset.cpus.effective).
 */
#include <errno.h>
#include <stdlib.h>

#include "cgroup/internal.h"

struct step {
	size_t depth, seq;
	struct ts_cgroup_write w;
};

static size_t path_depth(const char *p)
{
	size_t d = 1;

	for (; *p; p++)
		if (*p == '/')
			d++;
	return d;
}

static int cmp_deepest_first(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth > y->depth ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_shallowest_first(const void *a, const void *b)
{
	const struct step *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int add_step(struct step *steps, size_t *n, size_t target, size_t depth, bool mems,
		    const struct ts_cgroup_set *value)
{
	char *v = ts_cgroup_set_format(value);

	if (v == NULL)
		return -ENOMEM;
	steps[*n] = (struct step){
		.depth = depth, .seq = *n, .w = {.target = target, .mems = mems, .value = v}};
	(*n)++;
	return 0;
}

/* Phase 1 for one set: write old∩new when the set loses members. @return 1 written. */
static int shrink_step(struct step *steps, size_t *n, size_t target, size_t depth, bool mems,
		       const struct ts_cgroup_set *old, const struct ts_cgroup_set *new,
		       struct ts_cgroup_set *ret_now)
{
	struct ts_cgroup_set inter;

	*ret_now = *old;
	if (ts_cgroup_set_is_subset(old, new))
		return 0;
	ts_cgroup_set_and(&inter, old, new);
	if (ts_cgroup_set_is_empty(&inter))
		return 0;
	*ret_now = inter;
	return add_step(steps, n, target, depth, mems, &inter);
}

int ts_cgroup_plan(const struct ts_cgroup_plan_input *in, size_t n,
		   struct ts_cgroup_write **ret_writes, size_t *ret_n)
{
	struct step *steps = calloc(4 * n + 1, sizeof(*steps));
	struct ts_cgroup_set *now = calloc(2 * n + 1, sizeof(*now));
	size_t n1 = 0, n2 = 0;
	int r = 0;

	if (steps == NULL || now == NULL) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && r >= 0; i++) {
		size_t d = path_depth(in[i].cgroup_path);
		now[2 * i] = in[i].old_cpus;
		now[2 * i + 1] = in[i].old_mems;
		if (in[i].has_cpus)
			r = shrink_step(steps, &n1, i, d, false, &in[i].old_cpus, &in[i].new_cpus,
					&now[2 * i]);
		if (r >= 0 && in[i].has_mems)
			r = shrink_step(steps, &n1, i, d, true, &in[i].old_mems, &in[i].new_mems,
					&now[2 * i + 1]);
	}
	qsort(steps, n1, sizeof(*steps), cmp_deepest_first);
	n2 = n1;
	for (size_t i = 0; i < n && r >= 0; i++) {
		size_t d = path_depth(in[i].cgroup_path);
		if (in[i].has_cpus && !ts_cgroup_set_equal(&now[2 * i], &in[i].new_cpus))
			r = add_step(steps, &n2, i, d, false, &in[i].new_cpus);
		if (r >= 0 && in[i].has_mems &&
		    !ts_cgroup_set_equal(&now[2 * i + 1], &in[i].new_mems))
			r = add_step(steps, &n2, i, d, true, &in[i].new_mems);
	}
	qsort(steps + n1, n2 - n1, sizeof(*steps), cmp_shallowest_first);
	if (r >= 0) {
		struct ts_cgroup_write *w = calloc(n2 + 1, sizeof(*w));
		if (w == NULL) {
			r = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n2; i++) {
			w[i] = steps[i].w;
			steps[i].w.value = NULL;
		}
		*ret_writes = w;
		*ret_n = n2;
	}
out:
	for (size_t i = 0; steps != NULL && i < n2; i++)
		free(steps[i].w.value);
	free(steps);
	free(now);
	return r;
}

void ts_cgroup_writes_free(struct ts_cgroup_write *w, size_t n)
{
	for (size_t i = 0; w != NULL && i < n; i++)
		free(w[i].value);
	free(w);
}
