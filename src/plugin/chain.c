/*
 * chain.c - run the plugins of one stage in order, passing results on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

void ts_plugin_report_release(struct ts_plugin_report *r)
{
	if (r == NULL)
		return;
	ts_json_free(r->results);
	ts_json_free(r->adjust);
	if (r->ignored != NULL)
		for (size_t i = 0; r->ignored[i] != NULL; i++)
			free(r->ignored[i]);
	free(r->ignored);
	free(r->cpus_from);
	free(r->mems_from);
	*r = (struct ts_plugin_report){0};
}

/* Run one plugin: build its request, execute it, check its result. */
static int invoke(const struct ts_plugin *p, enum ts_plugin_stage stage,
		  const struct ts_plugin_event *ev, const struct ts_json *results,
		  struct ts_json **ret_result, struct ts_error **err)
{
	cleanup_json struct ts_json *req = NULL;
	cleanup_free char *text = NULL;
	struct ts_plugin_output o = {0};
	size_t len;
	int r;

	r = ts_plugin_request_build(p, stage, ev, results, &req, err);
	if (r >= 0)
		r = ts_json_serialize(req, false, &text, &len, err);
	if (r >= 0)
		r = ts_plugin_exec(p, text, len, &o, err);
	if (r >= 0)
		r = ts_plugin_result_check(p, stage, &o, ret_result, err);
	ts_plugin_output_release(&o);
	if (r < 0)
		return ts_error_prefix(err, "plugin '%s' (%s)", p->type, p->path);
	return 0;
}

static int note_ignored(struct ts_plugin_report *rep, size_t *n, struct ts_error *e)
{
	char **v = reallocarray(rep->ignored, *n + 2, sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	rep->ignored = v;
	v[*n] = ts_error_format(e);
	if (v[*n] == NULL)
		return -ENOMEM;
	v[++*n] = NULL;
	return 0;
}

/* Remember which plugin set cpus or mems last: the create checks them
 * and names it when it refuses. */
static int note_placement(struct ts_plugin_report *rep, const struct ts_plugin *p, unsigned fields)
{
	char **slots[2] = {&rep->cpus_from, &rep->mems_from};
	unsigned bits[2] = {TS_PLUGIN_ADJUST_CPUS, TS_PLUGIN_ADJUST_MEMS};

	for (size_t i = 0; i < 2; i++) {
		char *from;

		if (!(fields & bits[i]))
			continue;
		if (asprintf(&from, "plugin '%s' (%s)", p->type, p->path) < 0)
			return -ENOMEM;
		free(*slots[i]);
		*slots[i] = from;
	}
	rep->adjust_fields = ts_plugin_adjust_fields(rep->adjust);
	return 0;
}

static int run(struct ts_plugin_chain *c, enum ts_plugin_stage stage,
	       const struct ts_plugin_event *ev, struct ts_plugin_report *rep,
	       struct ts_error **err)
{
	size_t n_ignored = 0;
	int r;

	for (size_t i = 0; i < c->len; i++) {
		const struct ts_plugin *p = &c->plugins[i];
		cleanup_json struct ts_json *result = NULL;
		cleanup_error struct ts_error *e = NULL;
		struct ts_json *adjust;

		if (!(p->stages & (1u << stage)))
			continue;
		r = invoke(p, stage, ev, rep->results, &result, &e);
		if (r < 0 && !p->ignore_errors) {
			*err = TAKE_PTR(e);
			return r;
		}
		if (r < 0) {
			if (note_ignored(rep, &n_ignored, e) < 0)
				return ts_error_set(err, ENOMEM, "plugin chain");
			continue;
		}
		adjust = ts_json_get(result, "adjust");
		if (stage == TS_PLUGIN_STAGE_PRE_CREATE && adjust != NULL &&
		    adjust->type != TS_JSON_NULL) {
			if (rep->adjust == NULL && (rep->adjust = ts_json_new_object()) == NULL)
				return ts_error_set(err, ENOMEM, "plugin chain");
			r = ts_plugin_adjust_merge(rep->adjust, adjust, err);
			if (r >= 0)
				r = note_placement(rep, p, ts_plugin_adjust_fields(adjust));
			if (r == -ENOMEM)
				return ts_error_set(err, ENOMEM, "plugin chain");
			if (r < 0)
				return ts_error_prefix(err, "plugin '%s' (%s)", p->type, p->path);
		}
		r = ts_json_array_append(rep->results, TAKE_PTR(result), err);
		if (r < 0)
			return r;
	}
	return 0;
}

int ts_plugin_chain_run(struct ts_plugin_chain *c, enum ts_plugin_stage stage,
			const struct ts_plugin_event *ev, struct ts_plugin_report *ret_report,
			struct ts_error **err)
{
	struct ts_plugin_report rep = {0};
	int r;

	if (ts_plugin_stage_to_string(stage) == NULL)
		return ts_error_set(err, EINVAL, "plugin chain: invalid stage %d", (int)stage);
	if (ev == NULL || ev->container_id == NULL)
		return ts_error_set(err, EINVAL, "plugin chain: no container id");
	rep.results = ts_json_new_array();
	if (rep.results == NULL)
		return ts_error_set(err, ENOMEM, "plugin chain");
	if (c != NULL) {
		r = run(c, stage, ev, &rep, err);
		if (r < 0) {
			ts_plugin_report_release(&rep);
			return r;
		}
	}
	if (ret_report != NULL)
		*ret_report = rep;
	else
		ts_plugin_report_release(&rep);
	return 0;
}
