/*
 * mode.c - which cgroup hierarchy the host runs, and where its root is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* linux/magic.h values, spelled out so the header is not needed. */
#define TS_CGROUP2_SUPER_MAGIC 0x63677270
#define TS_TMPFS_MAGIC 0x01021994

static const char *const mode_names[_TS_CGROUP_MODE_MAX] = {
	[TS_CGROUP_MODE_UNIFIED] = "unified",
	[TS_CGROUP_MODE_HYBRID] = "hybrid",
	[TS_CGROUP_MODE_LEGACY] = "legacy",
};

const char *ts_cgroup_mode_to_string(enum ts_cgroup_mode mode)
{
	if (mode < 0 || mode >= _TS_CGROUP_MODE_MAX)
		return NULL;
	return mode_names[mode];
}

enum ts_cgroup_mode ts_cgroup_mode_from_string(const char *s)
{
	if (s == NULL)
		return TS_CGROUP_MODE_INVALID;
	for (int i = 0; i < _TS_CGROUP_MODE_MAX; i++)
		if (strcmp(s, mode_names[i]) == 0)
			return (enum ts_cgroup_mode)i;
	return TS_CGROUP_MODE_INVALID;
}

enum ts_cgroup_mode ts_cgroup_mode_from_magic(int64_t root_magic, int64_t unified_magic)
{
	if (root_magic == TS_CGROUP2_SUPER_MAGIC)
		return TS_CGROUP_MODE_UNIFIED;
	if (root_magic == TS_TMPFS_MAGIC && unified_magic == TS_CGROUP2_SUPER_MAGIC)
		return TS_CGROUP_MODE_HYBRID;
	return TS_CGROUP_MODE_LEGACY;
}

const char *ts_cgroup_root(const char *config_root)
{
	const char *env = secure_getenv(TS_CGROUP_ROOT_ENV);

	if (env != NULL && env[0] != '\0')
		return env;
	if (config_root != NULL && config_root[0] != '\0')
		return config_root;
	return TS_CGROUP_ROOT_DEFAULT;
}

/* 1 and *ret_mode from the mode file; 0 when there is none. */
static int read_mode_file(const char *root, enum ts_cgroup_mode *ret_mode, struct ts_error **err)
{
	cleanup_free char *path = NULL;
	cleanup_free char *buf = NULL;

	if (asprintf(&path, "%s/%s", root, TS_CGROUP_MODE_FILE) < 0)
		return ts_error_set(err, ENOMEM, "%s: cannot detect cgroup mode", root);
	int r = ts_read_file_at(AT_FDCWD, path, 4096, &buf, NULL, err);
	if (r == -ENOENT) {
		ts_error_clear(err);
		return 0;
	}
	if (r < 0)
		return r;
	char *word = buf + strspn(buf, " \t\n");
	word[strcspn(word, " \t\n")] = '\0';
	enum ts_cgroup_mode mode = ts_cgroup_mode_from_string(word);
	if (mode == TS_CGROUP_MODE_INVALID)
		return ts_error_set(err, 0, "%s: invalid cgroup mode '%s'", path, word);
	*ret_mode = mode;
	return 1;
}

int ts_cgroup_detect_mode(const char *root, enum ts_cgroup_mode *ret_mode, struct ts_error **err)
{
	enum ts_cgroup_mode mode = TS_CGROUP_MODE_INVALID;
	struct statfs st_root, st_unified;
	cleanup_free char *unified = NULL;

	int r = read_mode_file(root, &mode, err);
	if (r < 0)
		return r;
	if (r > 0) {
		*ret_mode = mode;
		return 0;
	}
	if (statfs(root, &st_root) < 0)
		return ts_error_set(err, errno, "%s: cannot statfs", root);
	if (asprintf(&unified, "%s/unified", root) < 0)
		return ts_error_set(err, ENOMEM, "%s: cannot detect cgroup mode", root);
	int64_t unified_magic = 0;
	if (statfs(unified, &st_unified) == 0)
		unified_magic = (int64_t)st_unified.f_type;
	*ret_mode = ts_cgroup_mode_from_magic((int64_t)st_root.f_type, unified_magic);
	return 0;
}
