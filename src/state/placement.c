/* placement.c - the placement file of a bundle; see state.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/json.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/text.h"

void ts_state_placement_release(struct ts_state_placement *p)
{
	free(p->container_id);
	free(p->class_name);
	free(p->cpus_str);
	free(p->mems_str);
	free(p->devices);
	free(p->state_dir);
	free(p->pinned_cpus);
	ts_json_free(p->resources_written);
	*p = (struct ts_state_placement){0};
}

static int set_str(struct ts_json *o, const char *key, const char *v, struct ts_error **err)
{
	return ts_json_object_set(o, key, ts_json_new_string(v != NULL ? v : ""), err);
}

/* "devices": the comma-joined names as an array. */
static int set_devices(struct ts_json *o, const char *names, struct ts_error **err)
{
	struct ts_json *arr = ts_json_new_array();
	cleanup_free char *copy = strdup(names);
	char *save = NULL;
	int r;

	if (arr == NULL || copy == NULL) {
		ts_json_free(arr);
		return ts_error_set(err, ENOMEM, "%s", TS_STATE_PLACEMENT_FILE);
	}
	r = ts_json_object_set(o, "devices", arr, err);
	for (char *n = strtok_r(copy, ",", &save); r >= 0 && n != NULL;
	     n = strtok_r(NULL, ",", &save))
		r = ts_json_array_append(arr, ts_json_new_string(n), err);
	return r;
}

int ts_state_placement_write(int bundle_fd, const struct ts_state_placement *p,
			     struct ts_error **err)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r;

	if (o == NULL)
		return ts_error_set(err, ENOMEM, "%s", TS_STATE_PLACEMENT_FILE);
	r = ts_json_object_set(o, "version", ts_json_new_int(TS_STATE_FORMAT_VERSION), err);
	if (r >= 0)
		r = set_str(o, "id", p->container_id, err);
	if (r >= 0)
		r = set_str(o, "class", p->class_name, err);
	if (r >= 0)
		r = set_str(o, "cpus", p->cpus_str, err);
	if (r >= 0)
		r = set_str(o, "mems", p->mems_str, err);
	if (r >= 0)
		r = ts_json_object_set(o, "cpus_written", ts_json_new_bool(p->cpus_written), err);
	if (r >= 0)
		r = ts_json_object_set(o, "pinned", ts_json_new_bool(p->pinned), err);
	if (r >= 0)
		r = ts_json_object_set(o, "numa_exclusive", ts_json_new_bool(p->numa_exclusive),
				       err);
	if (r >= 0 && p->state_dir != NULL)
		r = set_str(o, "state_dir", p->state_dir, err);
	if (r >= 0 && p->pinned_cpus != NULL)
		r = set_str(o, "pinned_cpus", p->pinned_cpus, err);
	if (r >= 0 && p->devices != NULL && p->devices[0] != '\0')
		r = set_devices(o, p->devices, err);
	if (r >= 0 && p->resources_written != NULL && p->resources_written->u.array.len > 0)
		r = ts_json_object_set(o, "resources_written", ts_json_dup(p->resources_written),
				       err);
	if (r >= 0)
		r = ts_json_serialize(o, false, &buf, &len, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", TS_STATE_PLACEMENT_FILE);
	return ts_write_file_replace_at(bundle_fd, TS_STATE_PLACEMENT_FILE, buf, len, 0644, err);
}

static char *dup_member(const struct ts_json *o, const char *key)
{
	const char *v = ts_json_get_string(o, key);

	return v != NULL ? strdup(v) : NULL;
}

static bool bool_member(const struct ts_json *o, const char *key)
{
	const struct ts_json *v = ts_json_get(o, key);

	return v != NULL && v->type == TS_JSON_BOOL && v->u.boolean;
}

/* The file of bundle, parsed, when it is a sound one of our version. */
static struct ts_json *read_file(int dirfd, const char *bundle)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *path = NULL, *text = NULL;
	struct ts_json *o = NULL;
	int64_t version = 0;
	size_t n = 0;

	if (bundle == NULL || asprintf(&path, "%s/%s", bundle, TS_STATE_PLACEMENT_FILE) < 0)
		return NULL;
	if (ts_read_file_at(dirfd, path, 1u << 16, &text, &n, &ignored) < 0 ||
	    ts_json_parse(text, n, path, &o, &ignored) < 0)
		return NULL;
	if (o->type != TS_JSON_OBJECT ||
	    ts_json_get_int64(ts_json_get(o, "version"), &version) < 0 ||
	    version != TS_STATE_FORMAT_VERSION)
		return ts_json_free(o);
	return o;
}

/* "devices" comma-joined; NULL for none, one not a string, or OOM. */
static char *devices_member(const struct ts_json *o)
{
	const struct ts_json *arr = ts_json_get(o, "devices"), *item;
	size_t len = 1, i;
	char *names;

	if (arr == NULL || arr->type != TS_JSON_ARRAY || arr->u.array.len == 0)
		return NULL;
	ts_json_array_foreach (arr, i, item) {
		if (item->type != TS_JSON_STRING || item->u.string[0] == '\0' ||
		    strchr(item->u.string, ',') != NULL)
			return NULL;
		len += strlen(item->u.string) + 1;
	}
	names = calloc(1, len);
	if (names == NULL)
		return NULL;
	ts_json_array_foreach (arr, i, item) {
		if (i > 0)
			strcat(names, ",");
		strcat(names, item->u.string);
	}
	return names;
}

int ts_state_placement_devices(int dirfd, const char *bundle, const char *container_id,
			       char **ret_names)
{
	cleanup_json struct ts_json *o = read_file(dirfd, bundle);
	const char *id = ts_json_get_string(o, "id");
	char *names;

	if (o == NULL || id == NULL || container_id == NULL || strcmp(id, container_id) != 0 ||
	    (names = devices_member(o)) == NULL)
		return 0;
	*ret_names = names;
	return 1;
}

int ts_state_placement_read(int dirfd, const char *bundle, struct ts_state_placement *ret)
{
	cleanup_json struct ts_json *o = read_file(dirfd, bundle);
	struct ts_state_placement p = {0};

	if (o == NULL)
		return 0;
	p.container_id = dup_member(o, "id");
	p.class_name = dup_member(o, "class");
	p.cpus_str = dup_member(o, "cpus");
	p.mems_str = dup_member(o, "mems");
	p.cpus_written = bool_member(o, "cpus_written");
	p.pinned = bool_member(o, "pinned");
	p.numa_exclusive = bool_member(o, "numa_exclusive");
	p.devices = devices_member(o);
	p.state_dir = dup_member(o, "state_dir");
	p.pinned_cpus = dup_member(o, "pinned_cpus");
	/* entries ts_json_undo_entry() cannot use it skips */
	p.resources_written = ts_json_dup(ts_json_get_array(o, "resources_written"));
	if (p.container_id == NULL || p.class_name == NULL || p.class_name[0] == '\0' ||
	    p.cpus_str == NULL || p.mems_str == NULL || !ts_cpulist_valid(p.cpus_str) ||
	    !ts_cpulist_valid(p.mems_str) ||
	    (p.pinned_cpus != NULL &&
	     (p.pinned_cpus[0] == '\0' || !ts_cpulist_valid(p.pinned_cpus)))) {
		ts_state_placement_release(&p);
		return 0;
	}
	*ret = p;
	return 1;
}

int ts_state_placement_pin(const char *bundle, const char *container_id, const char *state_dir,
			   const char *cpus, struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	struct ts_state_placement p = {0};
	bool same;
	int r = 0;

	if (bundle == NULL || bundle[0] != '/' || (cpus != NULL && cpus[0] == '\0'))
		return 0;
	fd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR
			       ? 0
			       : ts_error_set(err, errno, "%s: cannot open", bundle);
	if (ts_state_placement_read(fd, ".", &p) != 1)
		return 0;
	if (strcmp(p.container_id, container_id) != 0 ||
	    (state_dir != NULL && p.state_dir != NULL && strcmp(p.state_dir, state_dir) != 0)) {
		ts_state_placement_release(&p);
		return 0;
	}
	same = cpus != NULL ? p.pinned_cpus != NULL && strcmp(p.pinned_cpus, cpus) == 0
			    : p.pinned_cpus == NULL && !p.pinned;
	if (!same) {
		free(p.pinned_cpus);
		p.pinned_cpus = NULL;
		if (cpus == NULL)
			p.pinned = false;
		else if ((p.pinned_cpus = strdup(cpus)) == NULL)
			r = ts_error_set(err, ENOMEM, "%s", TS_STATE_PLACEMENT_FILE);
		if (r >= 0)
			r = ts_state_placement_write(fd, &p, err);
	}
	ts_state_placement_release(&p);
	return r < 0 ? r : 1;
}
