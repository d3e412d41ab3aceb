/*
 * apply-class - test driver for tests/integration/cgroup.bats: write a QoS
 * class's cgroup limits into a bundle's config.json the way the create path
 * will, so that a real runtime can be run on the result.
 *
 *   apply-class CONFIG_JSON TOPOSHIM_CONFIG CLASS MODE
 *
 * MODE is unified, hybrid, legacy, or detect (ts_cgroup_config_resolve(): the
 * config's "cgroup" mode, else detection on TOPOSHIM_CGROUP_ROOT / the
 * config's root / /sys/fs/cgroup).  Prints the
 * mode used on stdout and each message on stderr; exits 1 on error.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static struct ts_json *load(const char *path, struct ts_error **err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0;
	struct ts_json *j = NULL;

	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, &len, err) < 0 ||
	    ts_json_parse(buf, len, path, &j, err) < 0)
		return NULL;
	return j;
}

int main(int argc, char **argv)
{
	cleanup_error struct ts_error *e = NULL;
	cleanup_json struct ts_json *oci = NULL;
	cleanup_json struct ts_json *tcfg = NULL;
	cleanup_strv char **msgs = NULL;
	cleanup_free char *out = NULL;
	struct ts_cgroup_config cfg = {0};
	enum ts_cgroup_mode mode;
	const char *root = NULL;
	size_t len = 0;
	int r = -EINVAL;

	if (argc != 5) {
		fprintf(stderr, "usage: apply-class CONFIG_JSON TOPOSHIM_CONFIG CLASS MODE\n");
		return 2;
	}
	oci = load(argv[1], &e);
	if (oci != NULL)
		tcfg = load(argv[2], &e);
	if (tcfg != NULL)
		r = ts_cgroup_config_read(tcfg, argv[2], &cfg, &e);
	if (r >= 0 && strcmp(argv[4], "detect") == 0)
		r = ts_cgroup_config_resolve(&cfg, &root, &mode, &e);
	else if (r >= 0 && (mode = ts_cgroup_mode_from_string(argv[4])) < 0)
		r = ts_error_set(&e, 0, "invalid mode '%s'", argv[4]);
	if (r >= 0)
		r = ts_cgroup_apply_class(oci, argv[1], ts_cgroup_config_class(&cfg, argv[3]), mode,
					  &msgs, &e);
	if (r >= 0)
		r = ts_json_serialize(oci, true, &out, &len, &e);
	if (r >= 0)
		r = ts_write_file_atomic_at(AT_FDCWD, argv[1], out, len, 0644, &e);
	ts_cgroup_config_release(&cfg);
	if (r < 0) {
		fprintf(stderr, "apply-class: %s\n", e->msg);
		return 1;
	}
	printf("%s\n", ts_cgroup_mode_to_string(mode));
	(void)fflush(stdout); /* the mode line comes before the messages */
	for (size_t i = 0; msgs != NULL && msgs[i] != NULL; i++)
		fprintf(stderr, "%s\n", msgs[i]);
	return 0;
}
