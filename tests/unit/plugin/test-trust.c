/* Unit tests of src/plugin/trust.c: which paths may hold a plugin.  Built on
 * a private tree under /tmp; the rows about other owners need root (chown)
 * and skip without it. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

static char base[64];

static void mk(const char *rel, mode_t mode, bool dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	if (dir) {
		assert_int_equal(mkdir(p, 0700), 0);
	} else {
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		assert_true(fd >= 0);
		close(fd);
	}
	assert_int_equal(chmod(p, mode), 0);
}

static void ln(const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(symlink(target, p), 0);
}

static void own(const char *rel, uid_t uid)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", base, rel);
	assert_int_equal(lchown(p, uid, (gid_t)-1), 0);
}

/* base/
 *   good/ 0755: plugin 0755, gw 0775, other (uid 1000 when root) 0755,
 *               link -> plugin, up -> ../good/plugin, loop -> loop,
 *               badlink -> ../wide/plugin, theirs -> plugin (link of uid 1000)
 *   wide/ 0777: plugin 0755
 *   sticky/ 1777: plugin 0755, inner/ 0755: plugin 0755
 *   open/ 0757: inner/ 0755: plugin 0755 */
static int setup(void **state)
{
	(void)state;
	snprintf(base, sizeof(base), "/tmp/ts-trust-XXXXXX");
	if (mkdtemp(base) == NULL || chmod(base, 0755) < 0)
		return -1;
	mk("good", 0755, true);
	mk("good/plugin", 0755, false);
	mk("good/gw", 0775, false);
	mk("good/other", 0755, false);
	ln("plugin", "good/link");
	ln("../good/plugin", "good/up");
	ln("loop", "good/loop");
	ln("../wide/plugin", "good/badlink");
	ln("plugin", "good/theirs");
	mk("wide", 0777, true);
	mk("wide/plugin", 0755, false);
	mk("sticky", 01777, true);
	mk("sticky/plugin", 0755, false);
	mk("sticky/inner", 0755, true);
	mk("sticky/inner/plugin", 0755, false);
	mk("open", 0757, true);
	mk("open/inner", 0755, true);
	mk("open/inner/plugin", 0755, false);
	if (geteuid() == 0) {
		own("good/other", 1000);
		own("good/theirs", 1000);
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	return system(cmd) == 0 ? 0 : -1;
}

static const struct trust_row {
	const char *name;
	const char *rel; /* under base */
	bool needs_root; /* the row's file has another owner */
	int want_ret;
	const char *bad_rel; /* the component named, under base; NULL: none */
	const char *owner;   /* in the message: "0", "1000" */
	const char *mode;
} rows[] = {
	{"root's file in root's dirs", "good/plugin", false, 0, NULL, NULL, NULL},
	{"a plugin directory", "good", false, 0, NULL, NULL, NULL},
	{"link in a trusted directory", "good/link", false, 0, NULL, NULL, NULL},
	{"relative link through ..", "good/up", false, 0, NULL, NULL, NULL},
	{"file under a sticky directory", "sticky/plugin", false, 0, NULL, NULL, NULL},
	{"deeper under a sticky directory", "sticky/inner/plugin", false, 0, NULL, NULL, NULL},
	{"group-writable file", "good/gw", false, -EINVAL, "good/gw", "0", "0775"},
	{"world-writable directory", "wide/plugin", false, -EINVAL, "wide", "0", "0777"},
	{"a sticky plugin directory", "sticky", false, -EINVAL, "sticky", "0", "1777"},
	{"world-writable ancestor", "open/inner/plugin", false, -EINVAL, "open", "0", "0757"},
	{"link into a world-writable directory", "good/badlink", false, -EINVAL, "wide", "0",
	 "0777"},
	{"file of another user", "good/other", true, -EINVAL, "good/other", "1000", "0755"},
	{"link of another user", "good/theirs", true, -EINVAL, "good/theirs", "1000", "0777"},
	{"link loop", "good/loop", false, -ELOOP, NULL, NULL, NULL},
	{"missing file", "good/none", false, -ENOENT, NULL, NULL, NULL},
};

static void test_trust_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct trust_row *row = &rows[i];
		cleanup_error struct ts_error *err = NULL;
		char path[256], want[512];
		int r;

		if (row->needs_root && geteuid() != 0) {
			print_message("# skip '%s': chown needs root\n", row->name);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", base, row->rel);
		r = ts_plugin_path_check(path, &err);
		if (r != row->want_ret)
			fail_msg("%s: got %d (%s)", row->name, r, err ? err->msg : "no error");
		if (row->bad_rel == NULL)
			continue;
		/* Run as another user, the files are that user's, and trusted. */
		char owner[32] = "", uid[32] = "";
		snprintf(owner, sizeof(owner), "%s", row->owner);
		if (geteuid() != 0) {
			snprintf(owner, sizeof(owner), "%u", (unsigned)geteuid());
			snprintf(uid, sizeof(uid), " or uid %u", (unsigned)geteuid());
		}
		snprintf(want, sizeof(want),
			 "unsafe path '%s/%s' (owner %s, mode %s): must be owned by root%s and "
			 "not writable by group or others",
			 base, row->bad_rel, owner, row->mode, uid);
		if (strcmp(err->msg, want) != 0)
			fail_msg("%s:\n got  %s\n want %s", row->name, err->msg, want);
	}
}

static void test_relative_refused(void **state)
{
	cleanup_error struct ts_error *err = NULL;

	(void)state;
	assert_int_equal(ts_plugin_path_check("bin/x", &err), -EINVAL);
	assert_string_equal(err->msg, "not absolute 'bin/x'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trust_rows),
		cmocka_unit_test(test_relative_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
