/* record.c - toposhim's record of the CDI devices it injected; see cdi.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi/cdi.h"
#include "oci/json.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define RECORD_VERSION 1

bool ts_cdi_injection_retried(const struct ts_cdi_injection *inj, const char *recorded)
{
	return inj != NULL && recorded != NULL && inj->names != NULL && !inj->applied &&
	       strcmp(inj->names, recorded) == 0;
}

int ts_cdi_record_write(int bundle_fd, const char *container_id, const struct ts_cdi_injection *inj,
			struct ts_error **err)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	struct ts_json *devices = ts_json_new_array();
	cleanup_free char *buf = NULL, *names = NULL;
	size_t len = 0;
	int r;

	if (o == NULL || devices == NULL ||
	    (names = strdup(inj->names != NULL ? inj->names : "")) == NULL) {
		ts_json_free(devices);
		return ts_error_set(err, ENOMEM, "%s", TS_CDI_RECORD_FILE);
	}
	r = ts_json_object_set(o, "version", ts_json_new_int(RECORD_VERSION), err);
	if (r >= 0)
		r = ts_json_object_set(o, "id", ts_json_new_string(container_id), err);
	if (r >= 0)
		r = ts_json_object_set(o, "devices", devices, err);
	else
		ts_json_free(devices);
	for (char *save = NULL, *n = strtok_r(names, ",", &save); r >= 0 && n != NULL;
	     n = strtok_r(NULL, ",", &save))
		r = ts_json_array_append(devices, ts_json_new_string(n), err);
	if (r >= 0)
		r = ts_json_serialize(o, false, &buf, &len, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", TS_CDI_RECORD_FILE);
	return ts_write_file_replace_at(bundle_fd, TS_CDI_RECORD_FILE, buf, len, 0644, err);
}

int ts_cdi_record_read(int dirfd, const char *bundle, const char *container_id, char **ret_names)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *path = NULL, *text = NULL;
	cleanup_json struct ts_json *o = NULL;
	const struct ts_json *devices, *item;
	const char *id;
	int64_t version = 0;
	size_t n = 0, len = 1, i;
	char *names;

	if (bundle == NULL || container_id == NULL)
		return 0;
	if (asprintf(&path, "%s/%s", bundle, TS_CDI_RECORD_FILE) < 0)
		return -ENOMEM;
	if (ts_read_file_at(dirfd, path, 1u << 20, &text, &n, &ignored) < 0 ||
	    ts_json_parse(text, n, path, &o, &ignored) < 0 || o->type != TS_JSON_OBJECT ||
	    ts_json_get_int64(ts_json_get(o, "version"), &version) < 0 || version != RECORD_VERSION)
		return 0;
	id = ts_json_get_string(o, "id");
	devices = ts_json_get(o, "devices");
	if (id == NULL || strcmp(id, container_id) != 0 || devices == NULL ||
	    devices->type != TS_JSON_ARRAY)
		return 0;
	ts_json_array_foreach (devices, i, item) {
		if (item->type != TS_JSON_STRING)
			return 0;
		len += strlen(item->u.string) + 1;
	}
	names = calloc(1, len);
	if (names == NULL)
		return -ENOMEM;
	ts_json_array_foreach (devices, i, item) {
		if (i > 0)
			strcat(names, ",");
		strcat(names, item->u.string);
	}
	*ret_names = names;
	return 1;
}
