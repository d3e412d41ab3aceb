/* cache.c - the host topology cached as XML in the state dir. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define KEY_FILE "topology.key"
#define XML_FILE "topology.xml"
#define SNAP_FILE "topology.snapshot"

/* How a loader may use the cache. */
enum {
	MAY_WRITE = 1u << 0, /* rebuild a missing or stale cache */
	SNAPSHOT = 1u << 1,  /* placement only: the snapshot will do */
};
#define MAX_XML_BYTES (64u << 20)

/* Read a small sysfs/procfs file and strip the trailing newline. */
static int read_line(const char *root, const char *rel, bool optional, const char *fallback,
		     char **ret, struct ts_error **err)
{
	cleanup_free char *path = NULL;
	char *buf = NULL;
	size_t len = 0;
	int r;

	if (asprintf(&path, "%s%s", root, rel) < 0)
		return ts_error_set(err, ENOMEM, "out of memory");
	r = ts_read_file_at(AT_FDCWD, path, 4096, &buf, &len, NULL);
	if (r < 0 && optional) {
		buf = strdup(fallback);
		if (buf == NULL)
			return ts_error_set(err, ENOMEM, "out of memory");
		len = strlen(buf);
	} else if (r < 0) {
		return ts_error_set(err, -r, "%s: cannot read", path);
	}
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	*ret = buf;
	return 0;
}

int ts_topology_host_key(const char *sysfs_root, const char *proc_root, char **ret,
			 struct ts_error **err)
{
	cleanup_free char *cpus = NULL, *nodes = NULL, *boot = NULL;
	char *key = NULL;
	int r;

	sysfs_root = sysfs_root != NULL ? sysfs_root : "/sys";
	proc_root = proc_root != NULL ? proc_root : "/proc";
	r = read_line(sysfs_root, "/devices/system/cpu/online", false, NULL, &cpus, err);
	if (r < 0)
		return r;
	r = read_line(sysfs_root, "/devices/system/node/online", true, "0", &nodes, err);
	if (r < 0)
		return r;
	r = read_line(proc_root, "/sys/kernel/random/boot_id", false, NULL, &boot, err);
	if (r < 0)
		return r;
	if (asprintf(&key, "online=%s\nnodes=%s\nboot_id=%s\n", cpus, nodes, boot) < 0)
		return ts_error_set(err, ENOMEM, "out of memory");
	*ret = key;
	return 0;
}

/* The snapshot, when it was made under the same key: it starts with the
 * key and a "--" line, so that it is never taken for another topology's. */
static int try_snapshot(int dfd, const char *key, const char *name, struct ts_topology **ret)
{
	cleanup_free char *text = NULL;
	cleanup_error struct ts_error *e = NULL;
	size_t klen = strlen(key);

	if (ts_read_file_at(dfd, SNAP_FILE, MAX_XML_BYTES, &text, NULL, &e) < 0)
		return 0;
	if (strncmp(text, key, klen) != 0 || strncmp(text + klen, "--\n", 3) != 0)
		return 0;
	return ts_topology_snapshot_load(text + klen + 3, name, ret, &e) == 0 ? 1 : 0;
}

/* Try the cache; 1 = loaded, 0 = missing or stale.  source: the
 * topology's source, or NULL for "cache:<state_dir>". */
static int try_cache(int dfd, const char *state_dir, const char *key, const char *source,
		     unsigned flags, struct ts_topology **ret)
{
	cleanup_free char *old_key = NULL, *xml = NULL, *name = NULL;
	cleanup_error struct ts_error *e = NULL;

	if (ts_read_file_at(dfd, KEY_FILE, 4096, &old_key, NULL, &e) < 0)
		return 0;
	if (strcmp(old_key, key) != 0)
		return 0;
	if (source != NULL)
		name = strdup(source);
	else if (asprintf(&name, "cache:%s", state_dir) < 0)
		name = NULL;
	if (name == NULL)
		return 0;
	if ((flags & SNAPSHOT) && try_snapshot(dfd, key, name, ret) == 1)
		return 1;
	if (ts_read_file_at(dfd, XML_FILE, MAX_XML_BYTES, &xml, NULL, &e) < 0)
		return 0;
	if (ts_topology_load_xml_buffer(xml, name, ret, &e) < 0)
		return 0;
	return 1;
}

/* Writing the cache is an optimisation: failures are ignored, the next call
 * simply loads again.  The key goes last: a crash in between leaves the old
 * key, which does not match the new XML's source, so it is never trusted;
 * the snapshot carries its key in itself. */
static void write_cache(int dfd, const char *key, const struct ts_topology *t)
{
	cleanup_free char *xml = NULL, *snap = NULL, *text = NULL;
	cleanup_error struct ts_error *ignored = NULL;

	if (dfd < 0)
		return;
	/* a stale key must not survive next to the new XML */
	(void)unlinkat(dfd, KEY_FILE, 0);
	if (ts_topology_snapshot_export(t, &snap, &ignored) == 0 &&
	    asprintf(&text, "%s--\n%s", key, snap) >= 0)
		(void)ts_write_file_atomic_at(dfd, SNAP_FILE, text, strlen(text), 0644, &ignored);
	if (ts_topology_export_xml(t, &xml, &ignored) == 0 &&
	    ts_write_file_atomic_at(dfd, XML_FILE, xml, strlen(xml), 0644, &ignored) == 0)
		(void)ts_write_file_atomic_at(dfd, KEY_FILE, key, strlen(key), 0644, &ignored);
}

static int load_cached(const char *state_dir, const char *sysfs_root, const char *proc_root,
		       unsigned flags, struct ts_topology **ret, bool *ret_from_cache,
		       struct ts_error **err)
{
	cleanup_free char *key = NULL;
	cleanup_close int dfd = -EBADF;
	struct ts_topology *t = NULL;
	int r;

	r = ts_topology_host_key(sysfs_root, proc_root, &key, err);
	if (r < 0)
		return r;
	dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0 && try_cache(dfd, state_dir, key, NULL, flags, &t) == 1) {
		if (ret_from_cache != NULL)
			*ret_from_cache = true;
		*ret = t;
		return 0;
	}
	r = ts_topology_load_host(&t, err);
	if (r < 0)
		return r;
	if (flags & MAY_WRITE)
		write_cache(dfd, key, t);
	if (ret_from_cache != NULL)
		*ret_from_cache = false;
	*ret = t;
	return 0;
}

int ts_topology_load_cached(const char *state_dir, const char *sysfs_root, const char *proc_root,
			    struct ts_topology **ret, bool *ret_from_cache, struct ts_error **err)
{
	return load_cached(state_dir, sysfs_root, proc_root, MAY_WRITE, ret, ret_from_cache, err);
}

static int load_xml_cached(const char *path, const char *state_dir, unsigned flags,
			   struct ts_topology **ret, bool *ret_from_cache, struct ts_error **err)
{
	cleanup_free char *key = NULL;
	cleanup_close int dfd = -EBADF;
	struct ts_topology *t = NULL;
	struct stat st;
	int r;

	/* an unreadable or odd file: ts_topology_load_xml() says why */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return ts_topology_load_xml(path, ret, err);
	if (asprintf(&key, "xml=%s\ndev=%ju\nino=%ju\nsize=%jd\nmtime=%jd.%09ld\n", path,
		     (uintmax_t)st.st_dev, (uintmax_t)st.st_ino, (intmax_t)st.st_size,
		     (intmax_t)st.st_mtim.tv_sec, st.st_mtim.tv_nsec) < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", path);
	dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0 && try_cache(dfd, state_dir, key, path, flags, &t) == 1) {
		if (ret_from_cache != NULL)
			*ret_from_cache = true;
		*ret = t;
		return 0;
	}
	r = ts_topology_load_xml(path, &t, err);
	if (r < 0)
		return r;
	if (flags & MAY_WRITE)
		write_cache(dfd, key, t);
	if (ret_from_cache != NULL)
		*ret_from_cache = false;
	*ret = t;
	return 0;
}

int ts_topology_load_xml_cached(const char *path, const char *state_dir, struct ts_topology **ret,
				bool *ret_from_cache, struct ts_error **err)
{
	return load_xml_cached(path, state_dir, MAY_WRITE, ret, ret_from_cache, err);
}

static int load_default(const char *config_xml, const char *state_dir, unsigned flags,
			struct ts_topology **ret, struct ts_error **err)
{
	const char *env = secure_getenv("TOPOSHIM_TOPOLOGY_XML");
	struct ts_devloc_roots roots = ts_devloc_roots_from_env();

	if (env != NULL && *env != '\0')
		config_xml = env;
	if (config_xml != NULL)
		return state_dir != NULL
			       ? load_xml_cached(config_xml, state_dir, flags, ret, NULL, err)
			       : ts_topology_load_xml(config_xml, ret, err);
	if (roots.sysfs_root != NULL && *roots.sysfs_root != '\0') {
		/* a recorded tree: its CPUs and NUMA nodes go with its devices */
		cleanup_free char *parent = strdup(roots.sysfs_root);
		char *slash = parent != NULL ? strrchr(parent, '/') : NULL;

		if (parent == NULL)
			return ts_error_set(err, ENOMEM, "out of memory");
		if (slash != NULL && strcmp(slash, "/sys") == 0) {
			*slash = '\0';
			return ts_topology_load_sysfs(*parent != '\0' ? parent : "/", ret, err);
		}
	}
	if (state_dir == NULL)
		return ts_topology_load_host(ret, err);
	return load_cached(state_dir, roots.sysfs_root, roots.proc_root, flags, ret, NULL, err);
}

int ts_topology_load_default(const char *config_xml, const char *state_dir,
			     struct ts_topology **ret, struct ts_error **err)
{
	return load_default(config_xml, state_dir, MAY_WRITE, ret, err);
}

int ts_topology_load_for_placement(const char *config_xml, const char *state_dir, bool may_write,
				   struct ts_topology **ret, struct ts_error **err)
{
	return load_default(config_xml, state_dir, SNAPSHOT | (may_write ? MAY_WRITE : 0), ret,
			    err);
}
