/*
 * request.c - the NRI v0.1 request toposhim writes and the result it reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

/* Annotations engines set that carry the pod sandbox id: containerd's CRI
 * plugin, CRI-O. */
static const char *const sandbox_id_keys[] = {"io.kubernetes.cri.sandbox-id",
					      "io.kubernetes.cri-o.SandboxID", NULL};
/* CRI-O writes the container's labels as one JSON object string. */
#define LABELS_KEY "io.kubernetes.cri-o.Labels"

static int set_str(struct ts_json *o, const char *key, const char *s, struct ts_error **err)
{
	return ts_json_object_set(o, key, ts_json_new_string(s), err);
}

static int set_dup(struct ts_json *o, const char *key, const struct ts_json *v,
		   struct ts_error **err)
{
	return ts_json_object_set(o, key, ts_json_dup(v), err);
}

/* NRI v0.1 has namespaces as a map of type to path ("" for a new one), not
 * the OCI list of {type, path}; v0.1 plugins written in Go fail to decode
 * anything else.  Entries without a string type are left out. */
static int build_namespaces(const struct ts_json *list, struct ts_json *spec, struct ts_error **err)
{
	struct ts_json *map = ts_json_new_object(), *ns;
	size_t i;
	int r;

	r = ts_json_object_set(spec, "namespaces", map, err);
	ts_json_array_foreach (list, i, ns) {
		const char *type = ts_json_get_string(ns, "type");
		const char *path = ts_json_get_string(ns, "path");

		if (r >= 0 && type != NULL)
			r = set_str(map, type, path != NULL ? path : "", err);
	}
	return r;
}

static int build_spec(const struct ts_json *config, struct ts_json *req, struct ts_error **err)
{
	struct ts_json *spec = ts_json_new_object(), *v;
	int r;

	r = ts_json_object_set(req, "spec", spec, err);
	if (r < 0 || config == NULL)
		return r;
	v = ts_json_get_path(config, "linux", "resources", NULL);
	if (v != NULL && v->type != TS_JSON_NULL && (r = set_dup(spec, "resources", v, err)) < 0)
		return r;
	v = ts_json_get_path(config, "linux", "namespaces", NULL);
	if (v != NULL && v->type == TS_JSON_ARRAY && (r = build_namespaces(v, spec, err)) < 0)
		return r;
	v = ts_json_get_path(config, "linux", "cgroupsPath", NULL);
	if (v != NULL && v->type != TS_JSON_NULL && (r = set_dup(spec, "cgroupsPath", v, err)) < 0)
		return r;
	v = ts_json_get(config, "annotations");
	if (v != NULL && v->type != TS_JSON_NULL && (r = set_dup(spec, "annotations", v, err)) < 0)
		return r;
	return 0;
}

/* labels: from CRI-O's annotation when it holds a JSON object of strings;
 * anything else is left out (the labels are informative, never required). */
static int build_labels(const struct ts_json *config, struct ts_json *req, struct ts_error **err)
{
	const char *text = ts_json_get_string(ts_json_get(config, "annotations"), LABELS_KEY);
	cleanup_json struct ts_json *labels = NULL;
	cleanup_error struct ts_error *ignored = NULL;
	struct ts_json *v;
	const char *key;
	size_t i;

	if (text == NULL || ts_json_parse(text, strlen(text), LABELS_KEY, &labels, &ignored) < 0 ||
	    labels->type != TS_JSON_OBJECT)
		return 0;
	ts_json_object_foreach (labels, i, key, v) {
		if (v->type != TS_JSON_STRING || key[0] == '\0')
			return 0;
	}
	return ts_json_object_set(req, "labels", TAKE_PTR(labels), err);
}

static int build_toposhim(const struct ts_plugin_event *ev, struct ts_json *req,
			  struct ts_error **err)
{
	struct ts_json *t = ts_json_new_object();
	int r;

	r = ts_json_object_set(req, "toposhim", t, err);
	if (r >= 0 && ev->class_name != NULL)
		r = set_str(t, "class", ev->class_name, err);
	if (r >= 0 && ev->cpus_str != NULL)
		r = set_str(t, "cpus", ev->cpus_str, err);
	if (r >= 0 && ev->mems_str != NULL)
		r = set_str(t, "mems", ev->mems_str, err);
	if (r >= 0 && ev->devices != NULL) {
		struct ts_json *devs = ts_json_new_array();

		r = ts_json_object_set(t, "devices", devs, err);
		for (size_t i = 0; r >= 0 && ev->devices[i] != NULL; i++)
			r = ts_json_array_append(devs, ts_json_new_string(ev->devices[i]), err);
	}
	if (r >= 0 && ev->cgroup_path != NULL)
		r = set_str(t, "cgroupPath", ev->cgroup_path, err);
	return r;
}

int ts_plugin_request_build(const struct ts_plugin *p, enum ts_plugin_stage stage,
			    const struct ts_plugin_event *ev, const struct ts_json *results,
			    struct ts_json **ret, struct ts_error **err)
{
	cleanup_json struct ts_json *req = ts_json_new_object();
	const struct ts_json *annotations = ts_json_get(ev->config, "annotations");
	int r;

	if (ev->container_id == NULL || ts_plugin_stage_to_string(stage) == NULL)
		return ts_error_set(err, EINVAL, "plugin request: no container id or stage");
	if (req == NULL)
		return ts_error_set(err, ENOMEM, "plugin request");
	r = set_str(req, "version", TS_PLUGIN_PROTOCOL_VERSION, err);
	if (r >= 0)
		r = set_str(req, "state", ts_plugin_stage_to_string(stage), err);
	if (r >= 0)
		r = set_str(req, "id", ev->container_id, err);
	for (size_t i = 0; r >= 0 && sandbox_id_keys[i] != NULL; i++) {
		const char *sid = ts_json_get_string(annotations, sandbox_id_keys[i]);

		if (sid != NULL) {
			r = set_str(req, "sandboxID", sid, err);
			break;
		}
	}
	if (r >= 0 && ev->pid > 0)
		r = ts_json_object_set(req, "pid", ts_json_new_int(ev->pid), err);
	if (r >= 0)
		r = build_spec(ev->config, req, err);
	if (r >= 0)
		r = build_labels(ev->config, req, err);
	if (r >= 0 && p->conf != NULL)
		r = set_dup(req, "conf", p->conf, err);
	if (r >= 0)
		r = results != NULL ? set_dup(req, "results", results, err)
				    : ts_json_object_set(req, "results", ts_json_new_array(), err);
	if (r >= 0)
		r = build_toposhim(ev, req, err);
	if (r < 0)
		return ts_error_prefix(err, "plugin request");
	*ret = TAKE_PTR(req);
	return 0;
}

/* The last non-empty line of stderr, or NULL. */
static char *last_line(const char *s, size_t len)
{
	size_t end = len, start;

	while (end > 0 && (s[end - 1] == '\n' || s[end - 1] == '\r' || s[end - 1] == ' '))
		end--;
	if (end == 0)
		return NULL;
	start = end;
	while (start > 0 && s[start - 1] != '\n')
		start--;
	cleanup_free char *line = strndup(s + start, end - start);
	if (line == NULL)
		return NULL;
	return ts_json_utf8_sanitize(line);
}

/* Add the plugin's own words to a failure: ": stderr: '<line>'".  The
 * static out-of-memory error is left as it is. */
static void append_stderr(struct ts_error *e, const char *line)
{
	char *msg;

	if (e == NULL || e->errnum == ENOMEM ||
	    asprintf(&msg, "%s: stderr: '%s'", e->msg, line) < 0)
		return;
	free(e->msg);
	e->msg = msg;
}

static int check_fields(const struct ts_json *res, enum ts_plugin_stage stage,
			struct ts_error **err)
{
	const char *key;
	struct ts_json *v, *m;
	size_t i;

	if (res->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "result: '': expected object, got %s",
				    ts_json_type_name(res->type));
	ts_json_object_foreach (res, i, key, v) {
		if (strcmp(key, "plugin") == 0 || strcmp(key, "version") == 0 ||
		    strcmp(key, "error") == 0) {
			if (v->type != TS_JSON_STRING && v->type != TS_JSON_NULL)
				return ts_error_set(err, 0,
						    "result: '/%s': expected string, got %s", key,
						    ts_json_type_name(v->type));
		} else if (strcmp(key, "metadata") == 0) {
			const char *mk;
			size_t k;

			if (v->type != TS_JSON_OBJECT && v->type != TS_JSON_NULL)
				return ts_error_set(err, 0,
						    "result: '/metadata': expected object, got %s",
						    ts_json_type_name(v->type));
			ts_json_object_foreach (v, k, mk, m) {
				if (m->type == TS_JSON_STRING)
					continue;
				cleanup_free char *esc = ts_json_pointer_escape(mk);
				return ts_error_set(
					err, 0, "result: '/metadata/%s': expected string, got %s",
					esc != NULL ? esc : "?", ts_json_type_name(m->type));
			}
		} else if (strcmp(key, "adjust") == 0) {
			if (stage != TS_PLUGIN_STAGE_PRE_CREATE && v->type != TS_JSON_NULL)
				return ts_error_set(
					err, 0, "result: '/adjust': only allowed at pre-create");
		}
		/* Other members are kept and passed on: later plugins may read them. */
	}
	return 0;
}

static int check_status(const struct ts_plugin *p, const struct ts_plugin_output *o,
			struct ts_error **err)
{
	/* the errno is for callers; its text would add nothing (helper-21:
	 * "timed out after 1000 ms: Connection timed out") */
	if (o->overflow)
		return ts_error_set_plain(err, EFBIG, "output exceeds %d bytes",
					  TS_PLUGIN_STDOUT_MAX);
	if (o->timed_out)
		return ts_error_set_plain(err, ETIMEDOUT, "timed out after %u ms", p->timeout_ms);
	if (WIFSIGNALED(o->wait_status))
		return ts_error_set(err, 0, "killed by signal %d", WTERMSIG(o->wait_status));
	if (!WIFEXITED(o->wait_status) || WEXITSTATUS(o->wait_status) != 0) {
		/* NRI v0.1 plugins report a failure as {"plugin", "message"} on stdout. */
		cleanup_json struct ts_json *pe = NULL;
		cleanup_error struct ts_error *ignored = NULL;
		const char *msg = NULL;

		if (ts_json_parse(o->out, o->out_len, "<stdout>", &pe, &ignored) >= 0)
			msg = ts_json_get_string(pe, "message");
		if (msg != NULL && msg[0] != '\0') {
			cleanup_free char *clean = ts_json_utf8_sanitize(msg);
			return ts_error_set(err, 0, "exited with status %d: message '%s'",
					    WEXITSTATUS(o->wait_status), clean ? clean : "?");
		}
		return ts_error_set(err, 0, "exited with status %d", WEXITSTATUS(o->wait_status));
	}
	return 0;
}

int ts_plugin_result_check(const struct ts_plugin *p, enum ts_plugin_stage stage,
			   const struct ts_plugin_output *o, struct ts_json **ret_result,
			   struct ts_error **err)
{
	cleanup_json struct ts_json *res = NULL;
	const char *error;
	int r;

	r = check_status(p, o, err);
	if (r >= 0) {
		r = ts_json_parse(o->out, o->out_len, "<stdout>", &res, err);
		if (r < 0)
			ts_error_prefix(err, "invalid result");
	}
	if (r >= 0)
		r = check_fields(res, stage, err);
	if (r >= 0 && (error = ts_json_get_string(res, "error")) != NULL && error[0] != '\0') {
		cleanup_free char *clean = ts_json_utf8_sanitize(error);
		r = ts_error_set(err, 0, "reported error '%s'", clean != NULL ? clean : "?");
	}
	if (r >= 0) {
		struct ts_json *adjust = ts_json_get(res, "adjust");

		if (adjust != NULL && adjust->type != TS_JSON_NULL)
			r = ts_plugin_adjust_validate(adjust, "adjust", err);
		if (r >= 0 && adjust != NULL && adjust->type != TS_JSON_NULL)
			r = ts_plugin_adjust_check_privileges(adjust, &p->sandbox, err);
	}
	if (r < 0) {
		cleanup_free char *line = last_line(o->errout, o->errout_len);

		if (line != NULL)
			append_stderr(*err, line);
		return r;
	}
	*ret_result = TAKE_PTR(res);
	return 0;
}
