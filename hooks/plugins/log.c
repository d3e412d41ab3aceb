/*
 * log - append one JSON line per event to a file, for audits and tests.
 *
 * conf: {"path": "/var/log/toposhim/plugins.jsonl"} (required, absolute).
 * Each line: {"time": RFC 3339 UTC, "state", "id", "pid" (when known),
 * "class", "cpus", "mems", "cgroupPath" (when given), "results": the
 * plugins that ran before it}.  The file is opened O_APPEND and each line
 * written with one write(), so lines of concurrent events do not mix.
 * The plugin sandbox lets it write only its sandbox.writable paths, as the
 * user toposhim-plugin: give it a directory of that user's there, e.g.
 * "sandbox": {"writable": ["/var/log/toposhim"]}.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "toposhim-plugin.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static int add_str(struct ts_json *o, const char *key, const char *v, struct ts_error **err)
{
	if (v == NULL)
		return 0;
	return ts_json_object_set(o, key, ts_json_new_string(v), err);
}

static int build_line(const struct tsp_request *req, struct ts_json *line, struct ts_error **err)
{
	struct ts_json *results = ts_json_get_array(req->root, "results"), *res, *names;
	char now[32];
	time_t t = time(NULL);
	struct tm tm;
	size_t i;
	int r;

	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
	r = add_str(line, "time", now, err);
	if (r >= 0)
		r = add_str(line, "state", req->state, err);
	if (r >= 0)
		r = add_str(line, "id", req->container_id, err);
	if (r >= 0 && req->pid > 0)
		r = ts_json_object_set(line, "pid", ts_json_new_int(req->pid), err);
	if (r >= 0)
		r = add_str(line, "class", req->class_name, err);
	if (r >= 0)
		r = add_str(line, "cpus", req->cpus_str, err);
	if (r >= 0)
		r = add_str(line, "mems", req->mems_str, err);
	if (r >= 0)
		r = add_str(line, "cgroupPath", req->cgroup_path, err);
	if (r < 0)
		return r;
	names = ts_json_new_array();
	r = ts_json_object_set(line, "results", names, err);
	ts_json_array_foreach (results, i, res) {
		const char *name = ts_json_get_string(res, "plugin");

		if (r >= 0)
			r = ts_json_array_append(names, ts_json_new_string(name ? name : ""), err);
	}
	return r;
}

static int handler(const struct tsp_request *req, struct ts_json **ret_metadata,
		   struct ts_error **err)
{
	const char *path = ts_json_get_string(req->conf, "path");
	cleanup_json struct ts_json *line = ts_json_new_object();
	cleanup_free char *text = NULL;
	cleanup_close int fd = -EBADF;
	size_t len;
	int r;

	(void)ret_metadata;
	if (path == NULL || path[0] != '/')
		return ts_error_set(err, 0, "conf: '/path': not absolute '%s'", path ? path : "");
	if (line == NULL)
		return ts_error_set(err, ENOMEM, "log");
	r = build_line(req, line, err);
	if (r >= 0)
		r = ts_json_serialize(line, false, &text, &len, err);
	if (r < 0)
		return r;
	text[len++] = '\n';
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
	if (fd < 0)
		return ts_error_set(err, errno, "%s: cannot open", path);
	r = ts_write_all(fd, text, len);
	if (r < 0)
		return ts_error_set(err, -r, "%s: cannot write", path);
	return 0;
}

int main(int argc, char **argv)
{
	return tsp_main(argc, argv, "log", handler);
}
