/* parent.c - the cpuset a container's cgroup parent allows (cgroup.h, part 4). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/text.h"

void ts_cgroup_parent_release(struct ts_cgroup_parent *p)
{
	free(p->path);
	free(p->existing);
	free(p->cpus_str);
	free(p->mems_str);
	*p = (struct ts_cgroup_parent){0};
}

/* systemd's slice "a-b-c.slice" as a path: "/a.slice/a-b.slice/a-b-c.slice";
 * "" and "-.slice" are the root slice. */
static char *slice_path(const char *slice, size_t len)
{
	const char *suffix = ".slice";
	size_t sl = strlen(suffix), cap;
	char *out, *o;

	if (len == 0 || (len == 7 && strncmp(slice, "-.slice", 7) == 0))
		return strdup("/");
	if (len <= sl || strncmp(slice + len - sl, suffix, sl) != 0 || memchr(slice, '/', len))
		return NULL;
	cap = 1;
	for (size_t i = 0; i < len - sl; i++)
		if (slice[i] == '-')
			cap += i + 1 + sl + 1;
	cap += len + 2;
	out = calloc(1, cap);
	if (out == NULL)
		return NULL;
	o = out;
	for (size_t i = 0; i < len - sl; i++)
		if (slice[i] == '-') {
			if (i == 0 || slice[i - 1] == '-') {
				free(out);
				return NULL;
			}
			o += sprintf(o, "/%.*s%s", (int)i, slice, suffix);
		}
	sprintf(o, "/%.*s", (int)len, slice);
	return out;
}

int ts_cgroup_parent_of(const char *cgroups_path, bool systemd, char **ret, struct ts_error **err)
{
	const char *path = cgroups_path != NULL ? cgroups_path : "";
	char *out;

	if (systemd) {
		const char *colon = strchr(path, ':');

		/* "slice:prefix:name"; the container is the scope <prefix>-<name>.scope
		 * in the slice (runc's default slice: system.slice) */
		if (path[0] == '\0')
			out = strdup("/system.slice");
		else if (colon == NULL || strchr(colon + 1, ':') == NULL ||
			 (out = slice_path(path, (size_t)(colon - path))) == NULL)
			return ts_error_set(err, 0,
					    "'/linux/cgroupsPath': not a systemd slice:prefix:name "
					    "'%s'",
					    path);
	} else {
		/* where the runtime puts it: the path cleaned as runc does
		 * (libcontainer/utils CleanPath(): "/../../x/c" is "/x/c"), a
		 * relative one rooted; its parent is the path less its last
		 * component */
		char *slash;

		out = ts_path_clean_absolute(path);
		if (out != NULL) {
			slash = strrchr(out, '/');
			if (slash == out)
				out[1] = '\0';
			else
				*slash = '\0';
		}
	}
	if (out == NULL)
		return ts_error_set(err, ENOMEM, "cgroup parent");
	*ret = out;
	return 0;
}

/* Read one cpuset file of dir (relative to the controller's root fd),
 * trimmed; 0 when absent. */
static int read_list(int root_fd, const char *dir, const char *file, char **ret,
		     struct ts_error **err)
{
	cleanup_free char *path = NULL, *buf = NULL;
	size_t len = 0;
	int r;

	if (asprintf(&path, "%s%s%s", dir[0] != '\0' ? dir : "", dir[0] != '\0' ? "/" : "", file) <
	    0)
		return ts_error_set(err, ENOMEM, "cgroup parent");
	r = ts_read_file_at(root_fd, path, 4096, &buf, &len, err);
	if (r == -ENOENT) {
		ts_error_clear(err);
		return 0;
	}
	if (r < 0)
		return r;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	if (len == 0)
		return 0; /* a v1 cpuset not set up yet: the runtime copies its parent's */
	if (!ts_cpulist_valid(buf))
		return ts_error_set(err, 0, "%s: invalid cpu list '%s'", path, buf);
	*ret = TAKE_PTR(buf);
	return 1;
}

int ts_cgroup_parent_cpuset(const char *root, enum ts_cgroup_mode mode, const char *cgroups_path,
			    bool systemd, struct ts_cgroup_parent *ret, struct ts_error **err)
{
	cleanup_free char *controller = NULL, *parent = NULL, *dir = NULL;
	cleanup_close int fd = -EBADF;
	const char *cpus_file =
		mode == TS_CGROUP_MODE_UNIFIED ? "cpuset.cpus.effective" : "cpuset.effective_cpus";
	const char *mems_file =
		mode == TS_CGROUP_MODE_UNIFIED ? "cpuset.mems.effective" : "cpuset.effective_mems";
	struct ts_cgroup_parent p = {0};
	int r;

	r = ts_cgroup_parent_of(cgroups_path, systemd, &parent, err);
	if (r < 0)
		return r;
	if (asprintf(&controller, "%s%s", root, mode == TS_CGROUP_MODE_UNIFIED ? "" : "/cpuset") <
	    0)
		return ts_error_set(err, ENOMEM, "cgroup parent");
	fd = open(controller, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no cpuset controller: nothing narrows the container */
	/* the nearest existing ancestor whose cpuset is readable: the runtime
	 * creates the missing ones with their parent's cpuset (v1) or without
	 * the controller, which gives them the parent's effective one (v2) */
	dir = strdup(parent + 1);
	if (dir == NULL)
		return ts_error_set(err, ENOMEM, "cgroup parent");
	for (;;) {
		char *slash;

		r = read_list(fd, dir, cpus_file, &p.cpus_str, err);
		if (r > 0)
			r = read_list(fd, dir, mems_file, &p.mems_str, err);
		if (r < 0) {
			ts_cgroup_parent_release(&p);
			return ts_error_prefix(err, "%s", controller);
		}
		if (r > 0)
			break;
		free(p.cpus_str);
		p.cpus_str = NULL;
		if (dir[0] == '\0')
			return 0;
		slash = strrchr(dir, '/');
		if (slash != NULL)
			*slash = '\0';
		else
			dir[0] = '\0';
	}
	p.path = TAKE_PTR(parent);
	if (asprintf(&p.existing, "/%s", dir) < 0) {
		p.existing = NULL;
		ts_cgroup_parent_release(&p);
		return ts_error_set(err, ENOMEM, "cgroup parent");
	}
	*ret = p;
	return 1;
}

/* The cpuset hierarchy's directory (<root>/cpuset on v1, <root> on v2;
 * *ret_controller, without a trailing '/', the caller frees) and where a
 * running container's cgroup_path lies in it (*ret_rel, borrowed from
 * cgroup_path): /proc/<pid>/cgroup's form is that already, runc's state
 * names the directory in the mounted hierarchy.  @return 0; -ENOMEM. */
static int cpuset_hierarchy(const char *root, enum ts_cgroup_mode mode, const char *cgroup_path,
			    char **ret_controller, const char **ret_rel)
{
	char *controller = NULL;
	size_t n;

	if (asprintf(&controller, "%s%s", root, mode == TS_CGROUP_MODE_UNIFIED ? "" : "/cpuset") <
	    0)
		return -ENOMEM;
	n = strlen(controller);
	while (n > 0 && controller[n - 1] == '/')
		controller[--n] = '\0';
	*ret_rel = cgroup_path;
	if (n > 0 && strncmp(cgroup_path, controller, n) == 0 && cgroup_path[n] == '/')
		*ret_rel = cgroup_path + n;
	*ret_controller = controller;
	return 0;
}

int ts_cgroup_parent_of_running(const char *root, enum ts_cgroup_mode mode, const char *cgroup_path,
				struct ts_cgroup_parent *ret, struct ts_error **err)
{
	cleanup_free char *controller = NULL;
	const char *rel = NULL;

	if (cpuset_hierarchy(root, mode, cgroup_path, &controller, &rel) < 0)
		return ts_error_set(err, ENOMEM, "cgroup parent");
	return ts_cgroup_parent_cpuset(root, mode, rel, false, ret, err);
}

int ts_cgroup_read_cpus(const char *root, enum ts_cgroup_mode mode, const char *cgroup_path,
			char **ret)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *controller = NULL, *path = NULL, *text = NULL;
	const char *rel = NULL;
	size_t len = 0;

	if (root == NULL || cgroup_path == NULL || cgroup_path[0] != '/' ||
	    strstr(cgroup_path, "/../") != NULL ||
	    (strlen(cgroup_path) >= 3 && strcmp(cgroup_path + strlen(cgroup_path) - 3, "/..") == 0))
		return 0;
	if (cpuset_hierarchy(root, mode, cgroup_path, &controller, &rel) < 0)
		return -ENOMEM;
	if (asprintf(&path, "%s%s/cpuset.cpus", controller, rel) < 0) {
		path = NULL;
		return -ENOMEM;
	}
	if (ts_read_file_at(AT_FDCWD, path, 4096, &text, &len, &ignored) < 0)
		return ts_error_code(ignored) == -ENOMEM ? -ENOMEM : 0;
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
		text[--len] = '\0';
	if (len == 0 || !ts_cpulist_valid(text))
		return 0;
	*ret = TAKE_PTR(text);
	return 1;
}
