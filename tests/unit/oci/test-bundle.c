/* Unit tests of src/oci/bundle.c. */
#include <dirent.h>
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

#include "../require.h"
#include "oci/bundle.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static const char config_text[] =
	"{\n"
	"\t\"ociVersion\": \"1.0.2\",\n"
	"\t\"process\": {\"args\": [\"sh\"], \"rlimit\": 18446744073709551615},\n"
	"\t\"x-unknown\": [1e3, 0.50]\n"
	"}";

static char bundle[64];

static void write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	cleanup_free char *path = NULL;
	cleanup_close int fd = -EBADF;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	assert_true(fd >= 0);
	assert_int_equal(ts_write_all(fd, text, strlen(text)), 0);
	assert_int_equal(fchmod(fd, mode), 0);
}

static char *read_back(const char *dir, const char *name)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL;
	char *buf = NULL;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err) < 0)
		fail_msg("%s", err->msg);
	return buf;
}

static struct stat stat_of(const char *dir, const char *name)
{
	cleanup_free char *path = NULL;
	struct stat st;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	assert_int_equal(stat(path, &st), 0);
	return st;
}

/* Entries of dir, sorted, joined by ' '. */
static char *list_dir(const char *dir)
{
	struct dirent **names = NULL;
	char *out = calloc(1, 4096);
	int n = scandir(dir, &names, NULL, alphasort);

	assert_true(n >= 0);
	assert_non_null(out);
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' || strlen(names[i]->d_name) > 2) {
			if (out[0] != '\0')
				strcat(out, " ");
			strcat(out, names[i]->d_name);
		}
		free(names[i]);
	}
	free(names);
	return out;
}

static int setup(void **state)
{
	strcpy(bundle, "/tmp/ts-bundle-XXXXXX");
	assert_non_null(mkdtemp(bundle));
	write_file(bundle, "config.json", config_text, 0640);
	return 0;
}

static int teardown(void **state)
{
	cleanup_free char *cmd = NULL;

	assert_true(asprintf(&cmd, "rm -rf '%s'", bundle) > 0);
	assert_int_equal(system(cmd), 0);
	return 0;
}

static void test_open_fields(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL;
	struct stat st;

	assert_int_equal(ts_oci_bundle_open(bundle, NULL, &b, &err), 0);
	assert_null(err);
	assert_string_equal(b->bundle_dir, bundle);
	assert_true(asprintf(&path, "%s/config.json", bundle) > 0);
	assert_string_equal(b->config_path, path);
	assert_int_equal(b->original_len, strlen(config_text));
	assert_string_equal(b->original, config_text);
	assert_int_equal(b->config_mode & 07777, 0640);
	assert_true(S_ISREG(b->config_mode));
	assert_int_equal(fstat(b->bundle_fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_true((fcntl(b->bundle_fd, F_GETFD) & FD_CLOEXEC) != 0);
	assert_string_equal(ts_json_get_string(b->config, "ociVersion"), "1.0.2");
	assert_string_equal(ts_json_get_path(b->config, "process", "rlimit", NULL)->u.number,
			    "18446744073709551615");
	assert_false(ts_oci_bundle_changed(b));
}

/* Bundle paths are made absolute and cleaned; config names are relative to the bundle. */
static void test_open_paths(void **state)
{
	static const struct {
		const char *name, *dir, *config, *abs_dir, *config_path;
	} rows[] = {
		{"cwd", NULL, NULL, "", "/config.json"},
		{"dot", ".", NULL, "", "/config.json"},
		{"relative messy", "./sub/..//.", "config.json", "", "/config.json"},
		{"crun -f relative", NULL, "sub/cfg.json", "", "/sub/cfg.json"},
		{"crun -f dotdot", "sub", "../config.json", "/sub", "/config.json"},
	};
	cleanup_free char *cwd = getcwd(NULL, 0), *sub = NULL;

	assert_true(asprintf(&sub, "%s/sub", bundle) > 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(sub, "cfg.json", "{\"in\":\"sub\"}", 0600);
	assert_int_equal(chdir(bundle), 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *want_dir = NULL, *want_cfg = NULL;

		print_message("row %s\n", rows[i].name);
		if (ts_oci_bundle_open(rows[i].dir, rows[i].config, &b, &err) < 0)
			fail_msg("%s", err->msg);
		assert_true(asprintf(&want_dir, "%s%s", bundle, rows[i].abs_dir) > 0);
		assert_true(asprintf(&want_cfg, "%s%s", bundle, rows[i].config_path) > 0);
		assert_string_equal(b->bundle_dir, want_dir);
		assert_string_equal(b->config_path, want_cfg);
	}
	assert_int_equal(chdir(cwd), 0);
}

static void test_open_absolute_config(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	char other[] = "/tmp/ts-config-XXXXXX";
	cleanup_free char *cfg = NULL, *cmd = NULL, *text = NULL;

	assert_non_null(mkdtemp(other));
	write_file(other, "c.json", "{\"a\":1}", 0604);
	assert_true(asprintf(&cfg, "%s//c.json", other) > 0);
	assert_int_equal(ts_oci_bundle_open(bundle, cfg, &b, &err), 0);
	free(cfg);
	assert_true(asprintf(&cfg, "%s/c.json", other) > 0);
	assert_string_equal(b->config_path, cfg);
	assert_int_equal(ts_json_object_set(b->config, "b", ts_json_new_bool(false), &err), 0);
	assert_int_equal(ts_oci_bundle_save(b, &err), 1);
	text = read_back(other, "c.json");
	assert_string_equal(text, "{\n    \"a\": 1,\n    \"b\": false\n}\n");
	assert_int_equal(stat_of(other, "c.json").st_mode & 07777, 0604);
	assert_true(asprintf(&cmd, "rm -rf '%s'", other) > 0);
	assert_int_equal(system(cmd), 0);
}

static void test_open_errors(void **state)
{
	static const struct {
		const char *name, *file, *content; /* content NULL: no file of that name */
		int ret, errnum;
		const char *msg; /* after the bundle dir */
	} rows[] = {
		{"missing config", NULL, NULL, -ENOENT, ENOENT, "/config.json: cannot open"},
		{"malformed", "config.json", "{\n  \"a\": 1,\n    x\n}", -EINVAL, 0,
		 "/config.json: line 3 column 5: lexical error: invalid char in json text"},
		{"root array", "config.json", "[{}]", -EINVAL, 0,
		 "/config.json: expected a JSON object, got array"},
		{"root string", "config.json", "\"x\"", -EINVAL, 0,
		 "/config.json: expected a JSON object, got string"},
		{"empty file", "config.json", "", -EINVAL, 0, "/config.json: empty document"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *msg = NULL, *path = NULL;

		print_message("row %s\n", rows[i].name);
		assert_true(asprintf(&path, "%s/config.json", bundle) > 0);
		(void)unlink(path); /* each row builds its own config */
		if (rows[i].content != NULL)
			write_file(bundle, rows[i].file, rows[i].content, 0644);
		assert_int_equal(ts_oci_bundle_open(bundle, NULL, &b, &err), rows[i].ret);
		assert_null(b);
		assert_true(asprintf(&msg, "%s%s", bundle, rows[i].msg) > 0);
		assert_string_equal(err->msg, msg);
		assert_int_equal(err->errnum, rows[i].errnum);
	}
}

static void test_open_bundle_errors(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *file = NULL, *msg = NULL, *full = NULL;

	assert_int_equal(ts_oci_bundle_open("/nonexistent/x", NULL, &b, &err), -ENOENT);
	assert_string_equal(err->msg, "bundle '/nonexistent/x': cannot open");
	full = ts_error_format(err);
	assert_string_equal(full,
			    "bundle '/nonexistent/x': cannot open: No such file or directory");
	ts_error_clear(&err);
	assert_true(asprintf(&file, "%s/config.json", bundle) > 0);
	assert_int_equal(ts_oci_bundle_open(file, NULL, &b, &err), -ENOTDIR);
	assert_true(asprintf(&msg, "bundle '%s': cannot open", file) > 0);
	assert_string_equal(err->msg, msg);
	assert_null(b);
}

static void test_open_not_regular(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *fifo = NULL, *msg = NULL, *dir = NULL;

	assert_true(asprintf(&fifo, "%s/fifo.json", bundle) > 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* must fail at once, not wait for a writer */
	assert_int_equal(ts_oci_bundle_open(bundle, "fifo.json", &b, &err), -EINVAL);
	assert_true(asprintf(&msg, "%s: not a regular file", fifo) > 0);
	assert_string_equal(err->msg, msg);
	ts_error_clear(&err);
	free(msg);
	assert_true(asprintf(&dir, "%s/d.json", bundle) > 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(ts_oci_bundle_open(bundle, "d.json", &b, &err), -EISDIR);
	assert_true(asprintf(&msg, "%s: cannot read", dir) > 0);
	assert_string_equal(err->msg, msg);
}

static void test_open_too_large(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL, *msg = NULL;
	cleanup_close int fd = -EBADF;

	assert_true(asprintf(&path, "%s/big.json", bundle) > 0);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, TS_OCI_CONFIG_MAX_BYTES + 1), 0);
	assert_int_equal(ts_oci_bundle_open(bundle, "big.json", &b, &err), -EFBIG);
	assert_true(asprintf(&msg, "%s: larger than 16777216 bytes", path) > 0);
	assert_string_equal(err->msg, msg);
}

static void test_save_unchanged_writes_nothing(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	struct stat before = stat_of(bundle, "config.json");
	struct ts_json *args;

	assert_int_equal(ts_oci_bundle_open(bundle, NULL, &b, &err), 0);
	assert_int_equal(ts_oci_bundle_save(b, &err), 0);
	/* an edit undone is no change either */
	args = ts_json_get_path(b->config, "process", "args", NULL);
	assert_int_equal(ts_json_array_append(args, ts_json_new_string("-c"), &err), 0);
	assert_true(ts_oci_bundle_changed(b));
	ts_json_array_remove(args, 1);
	assert_false(ts_oci_bundle_changed(b));
	assert_int_equal(ts_oci_bundle_save(b, &err), 0);
	assert_null(err);
	assert_int_equal(stat_of(bundle, "config.json").st_ino, before.st_ino);
	text = read_back(bundle, "config.json");
	assert_string_equal(text, config_text);
}

static void test_save_changed(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *entries = NULL;
	struct stat before = stat_of(bundle, "config.json"), after;

	assert_int_equal(ts_oci_bundle_open(bundle, NULL, &b, &err), 0);
	assert_int_equal(
		ts_json_object_set(b->config, "ociVersion", ts_json_new_string("1.1.0"), &err), 0);
	/* the config as read stays what the file said until the save */
	assert_string_equal(ts_json_get_string(ts_oci_bundle_as_read(b), "ociVersion"), "1.0.2");
	assert_int_equal(ts_oci_bundle_save(b, &err), 1);
	assert_null(err);
	assert_null(ts_oci_bundle_as_read(b));
	text = read_back(bundle, "config.json");
	assert_string_equal(text, "{\n"
				  "    \"ociVersion\": \"1.1.0\",\n"
				  "    \"process\": {\n"
				  "        \"args\": [\n"
				  "            \"sh\"\n"
				  "        ],\n"
				  "        \"rlimit\": 18446744073709551615\n"
				  "    },\n"
				  "    \"x-unknown\": [\n"
				  "        1e3,\n"
				  "        0.50\n"
				  "    ]\n"
				  "}\n");
	after = stat_of(bundle, "config.json");
	assert_int_equal(after.st_mode & 07777, 0640);
	assert_int_not_equal(after.st_ino, before.st_ino); /* replaced, not rewritten in place */
	entries = list_dir(bundle);
	assert_string_equal(entries, "config.json"); /* no temporary file left */
	/* saved state follows the file: a second save writes nothing */
	assert_int_equal(ts_oci_bundle_save(b, &err), 0);
	assert_int_equal(stat_of(bundle, "config.json").st_ino, after.st_ino);
}

static void test_save_keeps_owner(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL;
	struct stat st;

	/* chown to another owner */
	ts_test_require_root();
	assert_true(asprintf(&path, "%s/config.json", bundle) > 0);
	assert_int_equal(chown(path, 1234, 5678), 0);
	assert_int_equal(ts_oci_bundle_open(bundle, NULL, &b, &err), 0);
	assert_int_equal(ts_json_object_remove(b->config, "x-unknown"), 1);
	assert_int_equal(ts_oci_bundle_save(b, &err), 1);
	st = stat_of(bundle, "config.json");
	assert_int_equal(st.st_uid, 1234);
	assert_int_equal(st.st_gid, 5678);
	assert_int_equal(st.st_mode & 07777, 0640);
}

static void test_save_config_in_subdir(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *sub = NULL, *text = NULL, *entries = NULL;

	assert_true(asprintf(&sub, "%s/sub", bundle) > 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(sub, "cfg.json", "{}", 0600);
	assert_int_equal(ts_oci_bundle_open(bundle, "sub/cfg.json", &b, &err), 0);
	assert_non_null(ts_json_object_ensure(b->config, "linux", TS_JSON_OBJECT, "", &err));
	assert_int_equal(ts_oci_bundle_save(b, &err), 1);
	text = read_back(sub, "cfg.json");
	assert_string_equal(text, "{\n    \"linux\": {}\n}\n");
	entries = list_dir(sub);
	assert_string_equal(entries, "cfg.json");
	free(text);
	text = read_back(bundle, "config.json");
	assert_string_equal(text, config_text);
}

static void test_save_errors_leave_file(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *msg = NULL, *text = NULL;

	assert_int_equal(ts_oci_bundle_open(bundle, NULL, &b, &err), 0);
	assert_int_equal(ts_json_object_set(b->config, "bad", ts_json_new_number_raw("0x1"), &err),
			 0);
	assert_int_equal(ts_oci_bundle_save(b, &err), -EINVAL);
	assert_true(asprintf(&msg,
			     "%s/config.json: cannot serialise JSON: '/bad': invalid number '0x1'",
			     bundle) > 0);
	assert_string_equal(err->msg, msg);
	text = read_back(bundle, "config.json");
	assert_string_equal(text, config_text);
}

static void test_save_replace_error(void **state)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *msg = NULL, *path = NULL;

	assert_int_equal(ts_oci_bundle_open(bundle, NULL, &b, &err), 0);
	assert_int_equal(ts_json_object_remove(b->config, "process"), 1);
	/* the bundle disappears between load and save */
	assert_true(asprintf(&path, "%s/config.json", bundle) > 0);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(bundle), 0);
	assert_int_equal(ts_oci_bundle_save(b, &err), -ENOENT);
	assert_true(asprintf(&msg,
			     "%s/config.json: cannot create temporary file '.config.json.tmp.%d'",
			     bundle, (int)getpid()) > 0);
	assert_string_equal(err->msg, msg);
	assert_int_equal(mkdir(bundle, 0700), 0); /* for teardown */
}

static void test_free_null(void **state)
{
	assert_null(ts_oci_bundle_free(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_fields, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_absolute_config, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_bundle_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_not_regular, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_too_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_unchanged_writes_nothing, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_save_changed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_keeps_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_config_in_subdir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_errors_leave_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_save_replace_error, setup, teardown),
		cmocka_unit_test(test_free_null),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
