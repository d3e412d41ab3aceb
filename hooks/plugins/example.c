/*
 * example - the smallest useful toposhim plugin, to copy from.
 *
 * It answers every event with metadata naming the container and the CPUs
 * toposhim gave it: {"greeting": "hello <id>", "cpus": "<cpus>"}.  With conf
 * {"refuse": "<id>"} it fails the create of that container, which shows how
 * an error reaches the engine.
 *
 * Outside this tree, against the installed library:
 *   cc -o example example.c $(pkg-config --cflags --libs toposhim-plugin)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* asprintf() */
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "toposhim-plugin.h"
#include "util/cleanup.h"

static int handler(const struct tsp_request *req, struct ts_json **ret_metadata,
		   struct ts_error **err)
{
	const char *refuse = ts_json_get_string(req->conf, "refuse");
	cleanup_free char *greeting = NULL;
	struct ts_json *m;
	int r;

	if (refuse != NULL && strcmp(refuse, req->container_id) == 0)
		return ts_error_set(err, EPERM, "container '%s' is not welcome", req->container_id);
	if (asprintf(&greeting, "hello %s", req->container_id) < 0)
		return ts_error_set(err, ENOMEM, "example");
	m = ts_json_new_object();
	if (m == NULL)
		return ts_error_set(err, ENOMEM, "example");
	*ret_metadata = m;
	r = ts_json_object_set(m, "greeting", ts_json_new_string(greeting), err);
	if (r >= 0 && req->cpus_str != NULL)
		r = ts_json_object_set(m, "cpus", ts_json_new_string(req->cpus_str), err);
	return r;
}

int main(int argc, char **argv)
{
	return tsp_main(argc, argv, "example", handler);
}
