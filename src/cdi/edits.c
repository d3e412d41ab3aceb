/*
 * edits.c - apply CDI container edits to an OCI config tree.
 *
 * Order and semantics follow the reference library at main (see cdi.h):
 * env, deviceNodes (+ cgroup allow rules), mounts (then a stable sort by
 * path depth), hooks, intelRdt, additionalGids, netDevices.  The OCI objects
 * are written with runtime-spec's member order and Go's omitempty rules, so
 * the result matches what containerd/CRI-O write after their own injection.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cdi/internal.h"
#include "util/cleanup.h"
#include "util/fileio.h"

struct actx {
	struct ts_json *config;
	const char *config_name;
	const char *spec_path;
	const char *edits_ptr;
	struct ts_error **err;
	/* the runtime bind-mounts device nodes from the host (binds()): -1
	 * not known yet, else 0 or 1 */
	int bind_devices;
};

static bool has_user_namespace(const struct ts_json *config);

/* runc's rule (libcontainer's createDevices: running in a user namespace,
 * or the config asks for one), crun's the same.  Asked only for a node
 * whose host path is not its path: the common create reads no
 * /proc/self/uid_map for it. */
static bool binds(struct actx *a)
{
	if (a->bind_devices < 0)
		a->bind_devices = has_user_namespace(a->config) || ts_in_user_namespace();
	return a->bind_devices != 0;
}

static int oom(struct actx *a)
{
	return ts_error_set(a->err, ENOMEM, "out of memory");
}

/* obj[key] with the given type, created when absent or null; path names it. */
static struct ts_json *ensure(struct actx *a, struct ts_json *obj, const char *key,
			      enum ts_json_type type, const char *path)
{
	struct ts_json *v = ts_json_get(obj, key);

	if (v != NULL && v->type == type)
		return v;
	if (v != NULL && v->type != TS_JSON_NULL) {
		ts_error_set(a->err, 0, "%s: '%s': expected %s, got %s", a->config_name, path,
			     ts_json_type_name(type), ts_json_type_name(v->type));
		return NULL;
	}
	v = type == TS_JSON_OBJECT ? ts_json_new_object() : ts_json_new_array();
	if (ts_json_object_set(obj, key, v, a->err) < 0)
		return NULL;
	return v;
}

/* Set obj[key] = v (v may be NULL after an allocation failure). */
static int set(struct actx *a, struct ts_json *obj, const char *key, struct ts_json *v)
{
	if (v == NULL)
		return oom(a);
	return ts_json_object_set(obj, key, v, a->err);
}

static int append(struct actx *a, struct ts_json *arr, struct ts_json *v)
{
	if (v == NULL)
		return oom(a);
	return ts_json_array_append(arr, v, a->err);
}

/* Copy an optional member of src to dst when it is a non-empty array/string/number. */
static int copy_member(struct actx *a, struct ts_json *dst, const char *dst_key,
		       const struct ts_json *src, const char *src_key)
{
	const struct ts_json *v = ts_json_get(src, src_key);

	if (v == NULL || v->type == TS_JSON_NULL)
		return 0;
	if (v->type == TS_JSON_ARRAY && v->u.array.len == 0)
		return 0;
	if (v->type == TS_JSON_STRING && v->u.string[0] == '\0')
		return 0;
	if (v->type == TS_JSON_BOOL && !v->u.boolean)
		return 0;
	return set(a, dst, dst_key, ts_json_dup(v));
}

static size_t env_key_len(const char *s)
{
	const char *eq = strchr(s, '=');

	return eq ? (size_t)(eq - s) : strlen(s);
}

static int apply_env(struct actx *a, const struct ts_json *env)
{
	struct ts_json *process, *arr, *item;
	size_t i;

	if (env == NULL || env->type != TS_JSON_ARRAY || env->u.array.len == 0)
		return 0;
	process = ensure(a, a->config, "process", TS_JSON_OBJECT, "/process");
	arr = process ? ensure(a, process, "env", TS_JSON_ARRAY, "/process/env") : NULL;
	if (arr == NULL)
		return ts_error_code(*a->err);
	ts_json_array_foreach (env, i, item) {
		size_t klen = env_key_len(item->u.string), found = SIZE_MAX;
		struct ts_json *old;
		size_t j;
		int r;

		/* main semantics: replace the last NAME= in place, else append */
		ts_json_array_foreach (arr, j, old) {
			if (old->type == TS_JSON_STRING && env_key_len(old->u.string) == klen &&
			    strncmp(old->u.string, item->u.string, klen) == 0)
				found = j;
		}
		if (found != SIZE_MAX)
			r = ts_json_array_replace(arr, found, ts_json_new_string(item->u.string),
						  a->err);
		else
			r = append(a, arr, ts_json_new_string(item->u.string));
		if (r < 0)
			return r;
	}
	return 0;
}

/* Filled-in view of one deviceNode. */
struct node_info {
	const char *path, *host_path, *permissions;
	char type[2];
	int64_t major, minor;
	int64_t file_mode, uid, gid; /* -1: absent */
};

int64_t ts_cdi_int_member(const struct ts_json *obj, const char *key, int64_t dflt)
{
	const struct ts_json *v = ts_json_get(obj, key);
	int64_t x;

	if (v == NULL || v->type != TS_JSON_NUMBER || ts_json_get_int64(v, &x) < 0)
		return dflt;
	return x;
}

char ts_cdi_node_type_of(mode_t st_mode)
{
	return S_ISCHR(st_mode) ? 'c' : S_ISBLK(st_mode) ? 'b' : S_ISFIFO(st_mode) ? 'p' : '\0';
}

static int fill_from_host(struct actx *a, struct node_info *n, size_t index, dev_t *ret_rdev)
{
	struct stat st;
	char t;

	/* stat, not lstat: a symlink such as /dev/dri/by-path/... names its target */
	if (stat(n->host_path, &st) < 0) {
		int e = errno;

		/* without strerror's "No such file or directory", which podman
		 * takes for a command not found in the container (exit 127,
		 * helper-24) */
		if (e == ENOENT)
			return ts_error_set_plain(
				a->err, ENOENT,
				"%s: '%s/deviceNodes/%zu': host device '%s' does not exist",
				a->spec_path, a->edits_ptr, index, n->host_path);
		return ts_error_set(a->err, e,
				    "%s: '%s/deviceNodes/%zu': cannot stat host device '%s'",
				    a->spec_path, a->edits_ptr, index, n->host_path);
	}
	t = ts_cdi_node_type_of(st.st_mode);
	if (t == '\0')
		return ts_error_set(a->err, 0,
				    "%s: '%s/deviceNodes/%zu': host path '%s' is not a device node",
				    a->spec_path, a->edits_ptr, index, n->host_path);
	if (n->type[0] == '\0')
		n->type[0] = t;
	else if (n->type[0] != t)
		return ts_error_set(a->err, 0,
				    "%s: '%s/deviceNodes/%zu/type': '%s' but host device '%s' has "
				    "type '%c'",
				    a->spec_path, a->edits_ptr, index, n->type, n->host_path, t);
	if (n->file_mode < 0)
		n->file_mode = st.st_mode & 0777;
	*ret_rdev = st.st_rdev;
	if (t != 'p' && n->major == 0) {
		n->major = major(st.st_rdev);
		n->minor = minor(st.st_rdev);
	}
	return 0;
}

static struct ts_json *oci_device(const struct node_info *n)
{
	cleanup_json struct ts_json *d = ts_json_new_object();

	if (d == NULL || ts_json_object_set(d, "path", ts_json_new_string(n->path), NULL) < 0 ||
	    ts_json_object_set(d, "type", ts_json_new_string(n->type), NULL) < 0 ||
	    ts_json_object_set(d, "major", ts_json_new_int(n->major), NULL) < 0 ||
	    ts_json_object_set(d, "minor", ts_json_new_int(n->minor), NULL) < 0)
		return NULL;
	if (n->file_mode >= 0 &&
	    ts_json_object_set(d, "fileMode", ts_json_new_int(n->file_mode), NULL) < 0)
		return NULL;
	if (n->uid >= 0 && ts_json_object_set(d, "uid", ts_json_new_int(n->uid), NULL) < 0)
		return NULL;
	if (n->gid >= 0 && ts_json_object_set(d, "gid", ts_json_new_int(n->gid), NULL) < 0)
		return NULL;
	return TAKE_PTR(d);
}

static struct ts_json *oci_device_rule(const struct node_info *n, const char *access)
{
	cleanup_json struct ts_json *r = ts_json_new_object();

	if (r == NULL || ts_json_object_set(r, "allow", ts_json_new_bool(true), NULL) < 0 ||
	    ts_json_object_set(r, "type", ts_json_new_string(n->type), NULL) < 0 ||
	    ts_json_object_set(r, "major", ts_json_new_int(n->major), NULL) < 0 ||
	    ts_json_object_set(r, "minor", ts_json_new_int(n->minor), NULL) < 0 ||
	    ts_json_object_set(r, "access", ts_json_new_string(access), NULL) < 0)
		return NULL;
	return TAKE_PTR(r);
}

/* Put dev into linux.devices: drop the first entry with its path, then replace-or-append. */
static int put_device(struct actx *a, struct ts_json *devices, struct ts_json *dev,
		      const char *path)
{
	struct ts_json *old;
	size_t i;
	bool removed = false;

	ts_json_array_foreach (devices, i, old) {
		const char *p = ts_json_get_string(old, "path");

		if (p != NULL && strcmp(p, path) == 0) {
			if (!removed) {
				ts_json_array_remove(devices, i);
				removed = true;
				i--;
				continue;
			}
			return ts_json_array_replace(devices, i, dev, a->err);
		}
	}
	return ts_json_array_append(devices, dev, a->err);
}

static void sort_mounts(struct ts_json *mounts);

/* Drop every entry of arr whose member key is the string value. */
static void remove_all(struct ts_json *arr, const char *key, const char *value)
{
	for (size_t i = 0; arr != NULL && arr->type == TS_JSON_ARRAY && i < arr->u.array.len;) {
		const char *p = ts_json_get_string(arr->u.array.items[i], key);

		if (p != NULL && strcmp(p, value) == 0)
			ts_json_array_remove(arr, i);
		else
			i++;
	}
}

/*
 * A node whose host path is not its container path, for a runtime that
 * bind-mounts device nodes (a user namespace: runc's and crun's rule).
 * Such a runtime mounts the host's file at the *container* path: given a
 * linux.devices entry for /dev/foo it binds the host's /dev/foo, absent or
 * another device, not hostPath.  So the node becomes a bind mount of
 * hostPath at path, and no linux.devices entry or mount for that path is
 * left to cover it; the cgroup rule (added by the caller) stays.
 */
static int put_device_mount(struct actx *a, const struct node_info *n)
{
	cleanup_json struct ts_json *m = ts_json_new_object();
	cleanup_json struct ts_json *opts = ts_json_new_array();
	struct ts_json *linux_obj = ts_json_get(a->config, "linux"), *mounts;

	if (m == NULL || opts == NULL ||
	    ts_json_array_append(opts, ts_json_new_string("bind"), NULL) < 0 ||
	    set(a, m, "destination", ts_json_new_string(n->path)) < 0 ||
	    set(a, m, "type", ts_json_new_string("bind")) < 0 ||
	    set(a, m, "source", ts_json_new_string(n->host_path)) < 0 ||
	    set(a, m, "options", TAKE_PTR(opts)) < 0)
		return *a->err ? ts_error_code(*a->err) : oom(a);
	remove_all(ts_json_get(linux_obj, "devices"), "path", n->path);
	mounts = ensure(a, a->config, "mounts", TS_JSON_ARRAY, "/mounts");
	if (mounts == NULL)
		return ts_error_code(*a->err);
	remove_all(mounts, "destination", n->path);
	if (ts_json_array_append(mounts, TAKE_PTR(m), a->err) < 0)
		return ts_error_code(*a->err);
	sort_mounts(mounts);
	return 0;
}

static int add_host_node(struct actx *a, const struct node_info *n, struct ts_cdi_host_node **nodes,
			 size_t *n_nodes)
{
	struct ts_cdi_host_node *v;

	if (nodes == NULL)
		return 0;
	v = realloc(*nodes, (*n_nodes + 1) * sizeof(*v));
	if (v == NULL)
		return oom(a);
	*nodes = v;
	v[*n_nodes].host_path = strdup(n->host_path);
	if (v[*n_nodes].host_path == NULL)
		return oom(a);
	v[*n_nodes].type = n->type[0];
	v[*n_nodes].major = n->major;
	v[*n_nodes].minor = n->minor;
	(*n_nodes)++;
	return 0;
}

/* The nodes runc and crun give every container (runc's specconv
 * AllowedDevices, crun's needed_devs): /dev/null, zero, full, tty,
 * random, urandom. */
static bool one_of_runtime_nodes(const char *path)
{
	static const char *const nodes[] = {"/dev/null", "/dev/zero",	"/dev/full",
					    "/dev/tty",	 "/dev/random", "/dev/urandom"};

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		if (strcmp(path, nodes[i]) == 0)
			return true;
	return false;
}

static int apply_device_node(struct actx *a, const struct ts_json *dn, size_t index,
			     struct ts_cdi_host_node **nodes, size_t *n_nodes)
{
	const struct ts_json *user = ts_json_get_path(a->config, "process", "user", NULL);
	struct node_info n = {
		.path = ts_json_get_string(dn, "path"),
		.host_path = ts_json_get_string(dn, "hostPath"),
		.permissions = ts_json_get_string(dn, "permissions"),
		.major = ts_cdi_int_member(dn, "major", 0),
		.minor = ts_cdi_int_member(dn, "minor", 0),
		.file_mode = ts_cdi_int_member(dn, "fileMode", -1),
		.uid = ts_cdi_int_member(dn, "uid", -1),
		.gid = ts_cdi_int_member(dn, "gid", -1),
	};
	const char *type = ts_json_get_string(dn, "type");
	struct ts_json *linux_obj, *devices, *resources, *rules;
	bool bound;
	int r;

	if (n.host_path == NULL || n.host_path[0] == '\0')
		n.host_path = n.path;
	if (type != NULL)
		n.type[0] = type[0];
	bound = strcmp(n.host_path, n.path) != 0 && binds(a);
	/* runc and crun make these nodes after the mounts, in a user
	 * namespace by binding the host's own over whatever is there
	 * (helper-18: /dev/null from /dev/zero came out 1:3) */
	if (bound && one_of_runtime_nodes(n.path))
		return ts_error_set(
			a->err, 0,
			"%s: '%s/deviceNodes/%zu/path': '%s' is a node the runtime makes "
			"itself: in a user namespace it binds the host's '%s' over this "
			"one from '%s'",
			a->spec_path, a->edits_ptr, index, n.path, n.path, n.host_path);
	/* bound, the host node itself is what the container gets: it must be
	 * there, and be what the spec says (helper-18: a missing one failed in
	 * the runtime; numbers of another gave a cgroup rule for another) */
	if (bound || n.type[0] == '\0' || (n.major == 0 && n.type[0] != 'p')) {
		dev_t rdev = 0;

		r = fill_from_host(a, &n, index, &rdev);
		if (r < 0)
			return r;
		if (bound && n.type[0] != 'p' &&
		    (n.major != (int64_t)major(rdev) || n.minor != (int64_t)minor(rdev)))
			return ts_error_set(a->err, 0,
					    "%s: '%s/deviceNodes/%zu': %" PRId64 ":%" PRId64
					    " but host device '%s' is %u:%u, which a user "
					    "namespace binds as it is",
					    a->spec_path, a->edits_ptr, index, n.major, n.minor,
					    n.host_path, major(rdev), minor(rdev));
	}
	/* the container's user owns the node unless the spec says otherwise */
	if (n.uid < 0 && ts_cdi_int_member(user, "uid", 0) > 0)
		n.uid = ts_cdi_int_member(user, "uid", 0);
	if (n.gid < 0 && ts_cdi_int_member(user, "gid", 0) > 0)
		n.gid = ts_cdi_int_member(user, "gid", 0);
	linux_obj = ensure(a, a->config, "linux", TS_JSON_OBJECT, "/linux");
	if (linux_obj == NULL)
		return ts_error_code(*a->err);
	if (bound) {
		r = put_device_mount(a, &n);
		if (r < 0)
			return r;
	} else {
		struct ts_json *dev;

		devices = ensure(a, linux_obj, "devices", TS_JSON_ARRAY, "/linux/devices");
		if (devices == NULL)
			return ts_error_code(*a->err);
		dev = oci_device(&n);
		if (dev == NULL)
			return oom(a);
		r = put_device(a, devices, dev, n.path);
		if (r < 0)
			return r;
	}
	if ((n.type[0] == 'b' || n.type[0] == 'c') &&
	    (n.permissions == NULL || strcmp(n.permissions, "none") != 0)) {
		/* "" is rwm; letters may repeat ("rrw"): the rule gets each once */
		char access[4] = "";
		size_t len = 0;

		for (const char *l = "rwm"; *l != '\0'; l++)
			if (n.permissions == NULL || n.permissions[0] == '\0' ||
			    strchr(n.permissions, *l) != NULL)
				access[len++] = *l;
		access[len] = '\0';

		resources = ensure(a, linux_obj, "resources", TS_JSON_OBJECT, "/linux/resources");
		rules = resources ? ensure(a, resources, "devices", TS_JSON_ARRAY,
					   "/linux/resources/devices")
				  : NULL;
		if (rules == NULL)
			return ts_error_code(*a->err);
		r = append(a, rules, oci_device_rule(&n, access));
		if (r < 0)
			return r;
	}
	return add_host_node(a, &n, nodes, n_nodes);
}

/* Number of '/' in filepath.Clean(path): the depth the reference sorts mounts by. */
static size_t mount_depth(const char *path)
{
	size_t n = 0, depth = 0;
	bool abs = path[0] == '/';
	const char *p = path;

	while (*p != '\0') {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);

		if (len == 0 || (len == 1 && p[0] == '.')) {
			/* skip */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (depth > 0)
				depth--;
			else if (!abs)
				n++; /* leading ".." of a relative path stays */
		} else {
			depth++;
		}
		p = *end ? end + 1 : end;
	}
	n += depth;
	if (abs)
		return n == 0 ? 1 : n;
	return n == 0 ? 0 : n - 1;
}

static size_t mount_item_depth(const struct ts_json *m)
{
	const char *d = ts_json_get_string(m, "destination");

	return d ? mount_depth(d) : 0;
}

/* Stable insertion sort of the mounts by depth. */
static void sort_mounts(struct ts_json *mounts)
{
	struct ts_json **items = mounts->u.array.items;

	for (size_t i = 1; i < mounts->u.array.len; i++) {
		struct ts_json *cur = items[i];
		size_t d = mount_item_depth(cur), j = i;

		while (j > 0 && mount_item_depth(items[j - 1]) > d) {
			items[j] = items[j - 1];
			j--;
		}
		items[j] = cur;
	}
}

static bool has_user_namespace(const struct ts_json *config)
{
	const struct ts_json *ns = ts_json_get_path(config, "linux", "namespaces", NULL), *item;
	size_t i;

	ts_json_array_foreach (ns, i, item) {
		const char *t = ts_json_get_string(item, "type");

		if (t != NULL && strcmp(t, "user") == 0)
			return true;
	}
	return false;
}

static bool strv_contains(const struct ts_json *arr, const char *s)
{
	const struct ts_json *item;
	size_t i;

	ts_json_array_foreach (arr, i, item) {
		if (item->type == TS_JSON_STRING && strcmp(item->u.string, s) == 0)
			return true;
	}
	return false;
}

/*
 * A mount without a type whose options do not say bind: the reference
 * passes it on as it is, and runc then calls mount(2) with no file system
 * type ("no such device").  Such a spec means a bind mount.
 */
static bool needs_bind(const struct ts_json *m)
{
	const char *type = ts_json_get_string(m, "type");
	const struct ts_json *opts = ts_json_get(m, "options");

	return (type == NULL || type[0] == '\0') && !strv_contains(opts, "bind") &&
	       !strv_contains(opts, "rbind");
}

/* "rbind", then the spec's own options ("ro" only when it asks). */
static struct ts_json *bind_options(const struct ts_json *opts)
{
	cleanup_json struct ts_json *arr = ts_json_new_array();
	const struct ts_json *item;
	size_t i;

	if (arr == NULL || ts_json_array_append(arr, ts_json_new_string("rbind"), NULL) < 0)
		return NULL;
	ts_json_array_foreach (opts, i, item) {
		if (item->type == TS_JSON_STRING &&
		    ts_json_array_append(arr, ts_json_dup(item), NULL) < 0)
			return NULL;
	}
	return TAKE_PTR(arr);
}

static struct ts_json *oci_mount(struct actx *a, const struct ts_json *m, bool userns)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	bool as_bind = needs_bind(m);
	const char *type;
	const struct ts_json *opts;

	if (o == NULL || set(a, o, "destination",
			     ts_json_new_string(ts_json_get_string(m, "containerPath"))) < 0)
		return NULL;
	if ((as_bind ? set(a, o, "type", ts_json_new_string("bind"))
		     : copy_member(a, o, "type", m, "type")) < 0 ||
	    set(a, o, "source", ts_json_new_string(ts_json_get_string(m, "hostPath"))) < 0 ||
	    (as_bind ? set(a, o, "options", bind_options(ts_json_get(m, "options")))
		     : copy_member(a, o, "options", m, "options")) < 0)
		return NULL;
	type = ts_json_get_string(o, "type");
	opts = ts_json_get(o, "options");
	/* main: bind mounts into a user namespace are id-mapped */
	if (userns && type != NULL && strcmp(type, "bind") == 0 && !strv_contains(opts, "idmap") &&
	    !strv_contains(opts, "ridmap")) {
		struct ts_json *arr = ensure(a, o, "options", TS_JSON_ARRAY, "/mounts");

		if (arr == NULL ||
		    append(a, arr,
			   ts_json_new_string(strv_contains(opts, "rbind") ? "ridmap" : "idmap")) <
			    0)
			return NULL;
	}
	return TAKE_PTR(o);
}

static int apply_mounts(struct actx *a, const struct ts_json *mounts)
{
	bool userns = has_user_namespace(a->config);
	struct ts_json *arr, *m, *old;
	size_t i, j;

	if (mounts == NULL || mounts->type != TS_JSON_ARRAY || mounts->u.array.len == 0)
		return 0;
	arr = ensure(a, a->config, "mounts", TS_JSON_ARRAY, "/mounts");
	if (arr == NULL)
		return ts_error_code(*a->err);
	ts_json_array_foreach (mounts, i, m) {
		const char *dest = ts_json_get_string(m, "containerPath");
		struct ts_json *o;

		ts_json_array_foreach (arr, j, old) {
			const char *d = ts_json_get_string(old, "destination");

			if (d != NULL && strcmp(d, dest) == 0) {
				ts_json_array_remove(arr, j);
				break;
			}
		}
		o = oci_mount(a, m, userns);
		if (o == NULL)
			return *a->err ? ts_error_code(*a->err) : oom(a);
		if (ts_json_array_append(arr, o, a->err) < 0)
			return ts_error_code(*a->err);
	}
	sort_mounts(arr);
	return 0;
}

/*
 * The hook's env, never absent: runc 1.1 runs a createContainer or
 * startContainer hook without "env" in the *container's* environment (the
 * image's ENV, LD_PRELOAD included, cwd the rootfs), so a hook binary would
 * load what the image names.  An absent, null or empty env becomes
 * TS_CDI_HOOK_DEFAULT_ENV: an empty list is not kept as it is, because every
 * tool that reads and writes config.json with the runtime-spec Go types
 * (omitempty) turns it back into an absent one.
 */
static int hook_env(struct actx *a, struct ts_json *o, const struct ts_json *h)
{
	const struct ts_json *env = ts_json_get(h, "env");
	struct ts_json *def;

	if (env != NULL && env->type == TS_JSON_ARRAY && env->u.array.len > 0)
		return set(a, o, "env", ts_json_dup(env));
	def = ts_json_new_array();
	if (def == NULL ||
	    ts_json_array_append(def, ts_json_new_string(TS_CDI_HOOK_DEFAULT_ENV), NULL) < 0) {
		ts_json_free(def);
		return oom(a);
	}
	return set(a, o, "env", def);
}

static int apply_hooks(struct actx *a, const struct ts_json *hooks)
{
	const struct ts_json *h;
	size_t i;

	ts_json_array_foreach (hooks, i, h) {
		const char *name = ts_json_get_string(h, "hookName");
		char path[64];
		struct ts_json *obj, *list, *o;

		snprintf(path, sizeof(path), "/hooks/%s", name);
		obj = ensure(a, a->config, "hooks", TS_JSON_OBJECT, "/hooks");
		list = obj ? ensure(a, obj, name, TS_JSON_ARRAY, path) : NULL;
		if (list == NULL)
			return ts_error_code(*a->err);
		o = ts_json_new_object();
		if (o == NULL)
			return oom(a);
		if (set(a, o, "path", ts_json_new_string(ts_json_get_string(h, "path"))) < 0 ||
		    copy_member(a, o, "args", h, "args") < 0 || hook_env(a, o, h) < 0 ||
		    copy_member(a, o, "timeout", h, "timeout") < 0) {
			ts_json_free(o);
			return ts_error_code(*a->err);
		}
		if (ts_json_array_append(list, o, a->err) < 0)
			return ts_error_code(*a->err);
	}
	return 0;
}

static int apply_intel_rdt(struct actx *a, const struct ts_json *rdt)
{
	static const char *const keys[] = {"closID", "l3CacheSchema", "memBwSchema", "schemata",
					   "enableMonitoring"};
	struct ts_json *linux_obj, *o;

	if (rdt == NULL || rdt->type != TS_JSON_OBJECT)
		return 0;
	linux_obj = ensure(a, a->config, "linux", TS_JSON_OBJECT, "/linux");
	if (linux_obj == NULL)
		return ts_error_code(*a->err);
	o = ts_json_new_object();
	if (o == NULL)
		return oom(a);
	for (size_t k = 0; k < ARRAY_SIZE(keys); k++) {
		if (copy_member(a, o, keys[k], rdt, keys[k]) < 0) {
			ts_json_free(o);
			return ts_error_code(*a->err);
		}
	}
	return ts_json_object_set(linux_obj, "intelRdt", o, a->err);
}

static int apply_gids(struct actx *a, const struct ts_json *gids)
{
	const struct ts_json *g, *old;
	size_t i, j;

	ts_json_array_foreach (gids, i, g) {
		uint64_t gid = 0, x;
		struct ts_json *process, *user, *arr;
		bool dup = false;

		(void)ts_json_get_uint64(g, &gid); /* validated */
		if (gid == 0)
			continue;
		process = ensure(a, a->config, "process", TS_JSON_OBJECT, "/process");
		user = process ? ensure(a, process, "user", TS_JSON_OBJECT, "/process/user") : NULL;
		arr = user ? ensure(a, user, "additionalGids", TS_JSON_ARRAY,
				    "/process/user/additionalGids")
			   : NULL;
		if (arr == NULL)
			return ts_error_code(*a->err);
		ts_json_array_foreach (arr, j, old) {
			if (ts_json_get_uint64(old, &x) == 0 && x == gid)
				dup = true;
		}
		if (!dup && append(a, arr, ts_json_new_uint(gid)) < 0)
			return ts_error_code(*a->err);
	}
	return 0;
}

static int apply_net_devices(struct actx *a, const struct ts_json *nds)
{
	const struct ts_json *nd;
	size_t i;

	ts_json_array_foreach (nds, i, nd) {
		struct ts_json *linux_obj, *map, *o;

		linux_obj = ensure(a, a->config, "linux", TS_JSON_OBJECT, "/linux");
		map = linux_obj ? ensure(a, linux_obj, "netDevices", TS_JSON_OBJECT,
					 "/linux/netDevices")
				: NULL;
		if (map == NULL)
			return ts_error_code(*a->err);
		o = ts_json_new_object();
		if (o == NULL ||
		    set(a, o, "name", ts_json_new_string(ts_json_get_string(nd, "name"))) < 0) {
			ts_json_free(o);
			return *a->err ? ts_error_code(*a->err) : oom(a);
		}
		if (ts_json_object_set(map, ts_json_get_string(nd, "hostInterfaceName"), o,
				       a->err) < 0)
			return ts_error_code(*a->err);
	}
	return 0;
}

int ts_cdi_edits_apply(struct ts_json *config, const struct ts_json *edits, const char *config_name,
		       const char *spec_path, const char *edits_ptr,
		       struct ts_cdi_host_node **ret_nodes, size_t *ret_n_nodes,
		       struct ts_error **err)
{
	struct actx a = {.config = config,
			 .config_name = config_name,
			 .spec_path = spec_path,
			 .edits_ptr = edits_ptr,
			 .err = err,
			 .bind_devices = -1};
	const struct ts_json *nodes, *dn;
	size_t i;
	int r;

	if (config == NULL || config->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: '/': expected object", config_name);
	if (edits == NULL || edits->type != TS_JSON_OBJECT)
		return 0;
	r = apply_env(&a, ts_json_get(edits, "env"));
	if (r < 0)
		return r;
	nodes = ts_json_get(edits, "deviceNodes");
	ts_json_array_foreach (nodes, i, dn) {
		r = apply_device_node(&a, dn, i, ret_nodes, ret_n_nodes);
		if (r < 0)
			return r;
	}
	r = apply_mounts(&a, ts_json_get(edits, "mounts"));
	if (r >= 0)
		r = apply_hooks(&a, ts_json_get(edits, "hooks"));
	if (r >= 0)
		r = apply_intel_rdt(&a, ts_json_get(edits, "intelRdt"));
	if (r >= 0)
		r = apply_gids(&a, ts_json_get(edits, "additionalGids"));
	if (r >= 0)
		r = apply_net_devices(&a, ts_json_get(edits, "netDevices"));
	return r < 0 ? r : 0;
}
