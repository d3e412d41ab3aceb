/* Unit tests of src/cdi/index.c: the persistent index is used, invalidated and rebuilt. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "cdi/cdi.h"
#include "cdi/internal.h"
#include "util/cleanup.h"
#include "select.h"
#include "util/fileio.h"

struct fixture {
	char root[64];
	char etc[80], run[80], state[80], index[96];
	char *dirs[3];
};

static void write_file(const char *dir, const char *name, const char *text)
{
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_error struct ts_error *err = NULL;

	assert_true(dfd >= 0);
	assert_int_equal(ts_write_file_atomic_at(dfd, name, text, strlen(text), 0644, &err), 0);
}

/* Move a path's mtime 100 s into the past, out of the index's racy window. */
static void age(const char *dir, const char *name)
{
	struct timespec t[2];
	char path[256];

	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 100;
	t[1] = t[0];
	snprintf(path, sizeof(path), "%s%s%s", dir, name ? "/" : "", name ? name : "");
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
}

static const char spec_a[] = "cdiVersion: 0.3.0\nkind: v.com/c\ncontainerEdits: {env: [S=1]}\n"
			     "devices: [{name: a, containerEdits: {env: [A=1]}}]\n";
static const char spec_b[] = "cdiVersion: 0.3.0\nkind: v.com/c\n"
			     "devices: [{name: b, containerEdits: {env: [B=1]}}]\n";

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->root, "/tmp/ts-cdi-index-XXXXXX");
	if (mkdtemp(f->root) == NULL)
		return -1;
	snprintf(f->etc, sizeof(f->etc), "%s/etc", f->root);
	snprintf(f->run, sizeof(f->run), "%s/run", f->root);
	snprintf(f->state, sizeof(f->state), "%s/state", f->root);
	snprintf(f->index, sizeof(f->index), "%s/cdi-index", f->state);
	if (mkdir(f->etc, 0755) < 0 || mkdir(f->state, 0755) < 0)
		return -1;
	f->dirs[0] = f->etc;
	f->dirs[1] = f->run; /* missing at first */
	write_file(f->etc, "a.yaml", spec_a);
	write_file(f->etc, "bad.json", "{");
	age(f->etc, "a.yaml");
	age(f->etc, "bad.json");
	age(f->etc, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	(void)!system(cmd);
	free(f);
	return 0;
}

static struct ts_cdi_registry *load(struct fixture *f, bool root)
{
	struct ts_cdi_options opts = {
		.spec_dirs = f->dirs, .require_root_owned = root, .index_path = f->index};
	struct ts_cdi_registry *reg = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_cdi_registry_load(&opts, &reg, &err), 0);
	return reg;
}

static struct ts_cdi_registry *load_devices(struct fixture *f, const char *const *names, size_t n)
{
	struct ts_cdi_options opts = {.spec_dirs = f->dirs, .index_path = f->index};
	struct ts_cdi_registry *reg = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_cdi_registry_load_devices(&opts, names, n, &reg, &err), 0);
	return reg;
}

static const char *problem(const struct ts_cdi_registry *reg, size_t i)
{
	const char *const *msgs;
	size_t n = ts_cdi_registry_problems(reg, &msgs);

	return i < n ? msgs[i] : "(none)";
}

/* Add a marker problem to the index file: it shows up only when the index is used. */
static void mark_index(struct fixture *f)
{
	cleanup_free char *buf = NULL, *marked = NULL;
	cleanup_error struct ts_error *err = NULL;
	size_t len = 0;
	char *end;

	assert_int_equal(ts_read_file_at(AT_FDCWD, f->index, 0, &buf, &len, &err), 0);
	end = strstr(buf, "\nend\n");
	assert_non_null(end);
	*end = '\0';
	assert_true(asprintf(&marked, "%s\nproblem marker\nend\n", buf) > 0);
	write_file(f->state, "cdi-index", marked);
}

static void test_index_used_when_valid(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg = load(f, false);
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_free char *out = NULL, *buf = NULL, *want_problem = NULL;
	const char *const *names;
	struct stat st;

	assert_int_equal(stat(f->index, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(asprintf(&want_problem,
			     "%s/bad.json: line 1 column 2: parse error: premature EOF",
			     f->etc) > 0);
	assert_string_equal(problem(reg, 0), want_problem);
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	ts_cdi_registry_free(reg);
	assert_int_equal(ts_read_file_at(AT_FDCWD, f->index, 0, &buf, NULL, &err), 0);
	assert_int_equal(strncmp(buf, "toposhim-cdi-index 3 0 2\ndir ", 29), 0);
	assert_non_null(strstr(buf, "/etc/a.yaml\nspec 0 v.com/c\nname a\n"));
	assert_non_null(strstr(buf, "/etc/bad.json\nfproblem "));
	assert_non_null(strstr(buf, "\ndev 0 0 v.com/c=a\nproblem "));
	assert_int_equal(strcmp(buf + strlen(buf) - 5, "\nend\n"), 0);

	mark_index(f);
	reg = load(f, false);
	assert_string_equal(problem(reg, 0), want_problem);
	assert_string_equal(problem(reg, 1), "marker");
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	assert_string_equal(names[0], "v.com/c=a");
	/* specs from the index are read on first use */
	config = ts_json_new_object();
	assert_int_equal(ts_cdi_inject(reg, config, (const char *const[]){"v.com/c=a"}, 1,
				       "config.json", NULL, &err),
			 1);
	assert_int_equal(ts_json_serialize(config, false, &out, NULL, &err), 0);
	assert_string_equal(out, "{\"process\":{\"env\":[\"S=1\",\"A=1\"]}}");
	ts_cdi_registry_free(reg);
}

/* A file dated before 1970 (a negative mtime in its stat line) still leaves
 * the index usable. */
static void test_index_used_with_time_before_1970(void **state)
{
	struct fixture *f = *state;
	struct timespec t[2] = {{.tv_sec = -86400, .tv_nsec = 5}, {.tv_sec = -86400, .tv_nsec = 5}};
	struct ts_cdi_registry *reg;
	cleanup_free char *path = NULL, *buf = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_true(asprintf(&path, "%s/a.yaml", f->etc) > 0);
	assert_int_equal(utimensat(AT_FDCWD, path, t, 0), 0);
	age(f->etc, NULL);
	ts_cdi_registry_free(load(f, false));
	assert_int_equal(ts_read_file_at(AT_FDCWD, f->index, 0, &buf, NULL, &err), 0);
	/* the file's line: its digest, which the time before 1970 is in */
	{
		const char *line = strstr(buf, "\nstat 1 f ");
		struct stat st;
		char want[64];

		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_mtim.tv_sec, -86400);
		snprintf(want, sizeof(want), "%016" PRIx64 " ", ts_cdi_stat_digest(&st));
		for (; line != NULL; line = strstr(line + 1, "\nstat 1 f "))
			if (strncmp(line + 10 + 17, path, strlen(path)) == 0)
				break;
		assert_non_null(line);
		assert_int_equal(strncmp(line + 10, want, 17), 0);
	}
	mark_index(f);
	reg = load(f, false);
	assert_string_equal(problem(reg, 1), "marker");
	ts_cdi_registry_free(reg);
}

/* The index's stat digest: the same stat, the same digest; each field
 * that ts_cdi_stat_digest() covers changed alone, another one, and the
 * lines write_stat() makes are what parse_stat() reads (the rows above). */
static void test_stat_digest(void **state)
{
	struct stat base = {.st_dev = 2049,
			    .st_ino = 1234,
			    .st_size = 187,
			    .st_mode = S_IFREG | 0644,
			    .st_uid = 0,
			    .st_gid = 0};
	uint64_t d0, seen[11];
	size_t n = 0;

	(void)state;
	base.st_mtim = (struct timespec){.tv_sec = 1796543281, .tv_nsec = 512242987};
	base.st_ctim = (struct timespec){.tv_sec = 1796543281, .tv_nsec = 513812759};
	d0 = ts_cdi_stat_digest(&base);
	/* what a read or a link changes is not in it */
	{
		struct stat read_again = base;

		read_again.st_atim.tv_sec += 60;
		read_again.st_nlink = 2;
		read_again.st_blocks = 8;
		assert_int_equal(ts_cdi_stat_digest(&read_again), d0);
	}
	seen[n++] = d0;
	for (int field = 0; field < 10; field++) {
		struct stat st = base;

		switch (field) {
		case 0:
			st.st_dev++;
			break;
		case 1:
			st.st_ino++;
			break;
		case 2:
			st.st_size++;
			break;
		case 3:
			st.st_mtim.tv_sec++;
			break;
		case 4:
			st.st_mtim.tv_nsec++;
			break;
		case 5:
			st.st_ctim.tv_sec++;
			break;
		case 6:
			st.st_ctim.tv_nsec++;
			break;
		case 7:
			st.st_mode ^= 0002;
			break;
		case 8:
			st.st_uid = 1000;
			break;
		default:
			st.st_gid = 1000;
			break;
		}
		print_message("field %d\n", field);
		seen[n] = ts_cdi_stat_digest(&st);
		for (size_t k = 0; k < n; k++)
			assert_true(seen[n] != seen[k]);
		n++;
	}
}

static void test_index_rebuilt_on_change(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg = load(f, false);
	const char *const *names;

	ts_cdi_registry_free(reg);
	/* a changed file */
	mark_index(f);
	write_file(f->etc, "a.yaml", spec_b);
	age(f->etc, "a.yaml");
	age(f->etc, NULL);
	reg = load(f, false);
	assert_string_not_equal(problem(reg, 1), "marker");
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	assert_string_equal(names[0], "v.com/c=b");
	ts_cdi_registry_free(reg);

	/* a dir that appears */
	mark_index(f);
	assert_int_equal(mkdir(f->run, 0755), 0);
	write_file(f->run, "x.yaml", spec_a);
	age(f->run, "x.yaml");
	age(f->run, NULL);
	reg = load(f, false);
	assert_string_not_equal(problem(reg, 1), "marker");
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 2);
	ts_cdi_registry_free(reg);

	/* a file added to a dir */
	mark_index(f);
	write_file(f->run, "y.yaml", spec_b);
	age(f->run, "y.yaml");
	reg = load(f, false);
	assert_string_not_equal(problem(reg, 1), "marker");
	ts_cdi_registry_free(reg);

	/* other options */
	reg = load(f, false);
	ts_cdi_registry_free(reg);
	mark_index(f);
	reg = load(f, true);
	assert_string_not_equal(problem(reg, 1), "marker");
	ts_cdi_registry_free(reg);
}

static void test_index_not_saved_when_racy_or_no_dir(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	struct stat st;

	write_file(f->etc, "new.yaml", spec_b); /* modified just now */
	reg = load(f, false);
	ts_cdi_registry_free(reg);
	assert_int_equal(stat(f->index, &st), -1);
	assert_int_equal(errno, ENOENT);
	age(f->etc, "new.yaml");
	age(f->etc, NULL);
	assert_int_equal(rmdir(f->state), 0);
	reg = load(f, false);
	ts_cdi_registry_free(reg);
	assert_int_equal(stat(f->index, &st), -1);
}

/* Replace text in the index file (keeping everything else). */
static void edit_index(struct fixture *f, const char *from, const char *to)
{
	cleanup_free char *buf = NULL, *out = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *at;

	assert_int_equal(ts_read_file_at(AT_FDCWD, f->index, 0, &buf, NULL, &err), 0);
	at = strstr(buf, from);
	assert_non_null(at);
	*at = '\0';
	assert_true(asprintf(&out, "%s%s%s", buf, to, at + strlen(from)) > 0);
	write_file(f->state, "cdi-index", out);
}

/* When one file changes, the others are taken from the index, not parsed again. */
static void test_index_reparses_only_changed_files(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	const char *const *names;

	write_file(f->etc, "b.yaml", spec_b);
	age(f->etc, "b.yaml");
	age(f->etc, NULL);
	reg = load(f, false);
	ts_cdi_registry_free(reg);
	/* a record saying a.yaml defines "zz": only visible if a.yaml is not parsed */
	edit_index(f, "spec 0 v.com/c\nname a\n", "spec 0 v.com/c\nname zz\n");
	write_file(f->etc, "b.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/c\n"
		   "devices: [{name: b2, containerEdits: {env: [B=2]}}]\n");
	age(f->etc, "b.yaml");
	age(f->etc, NULL);
	reg = load(f, false);
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 2);
	assert_string_equal(names[0], "v.com/c=b2");
	assert_string_equal(names[1], "v.com/c=zz");
	/* and using a device whose record does not match the file is refused */
	{
		cleanup_error struct ts_error *err = NULL;
		cleanup_json struct ts_json *config = ts_json_new_object();
		cleanup_free char *want = NULL;

		assert_int_equal(ts_cdi_inject(reg, config, (const char *const[]){"v.com/c=zz"}, 1,
					       "config.json", NULL, &err),
				 -ESTALE);
		assert_true(asprintf(&want, "%s/a.yaml: changed while being read", f->etc) > 0);
		assert_string_equal(err->msg, want);
	}
	ts_cdi_registry_free(reg);
}

/* With require_root_owned, an index others could write is not trusted. */
static void test_index_must_be_root_owned(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;

	reg = load(f, true);
	ts_cdi_registry_free(reg);
	mark_index(f);
	reg = load(f, true);
	assert_string_equal(problem(reg, 1), "marker");
	ts_cdi_registry_free(reg);
	mark_index(f);
	assert_int_equal(chmod(f->index, 0666), 0);
	reg = load(f, true);
	assert_string_not_equal(problem(reg, 1), "marker");
	ts_cdi_registry_free(reg);
}

static void test_index_garbage_ignored(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	const char *const *names;

	write_file(f->state, "cdi-index", "toposhim-cdi-index 1 0 2\ndir /nope\n");
	reg = load(f, false);
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	ts_cdi_registry_free(reg);
	write_file(f->state, "cdi-index", "garbage");
	reg = load(f, false);
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	ts_cdi_registry_free(reg);
}

/* Index edits that leave every stat matching but the index inconsistent
 * (issue 10, finding 9), or not as the writer makes it: each makes the
 * index unusable, the dirs are scanned, a sound index is written again. */
static const struct {
	const char *name, *from, *to;
} inconsistent_rows[] = {
	{"spec number out of range", "\ndev 0 0 v.com/c=a\n", "\ndev 7 0 v.com/c=a\n"},
	{"device index out of range", "\ndev 0 0 v.com/c=a\n", "\ndev 0 3 v.com/c=a\n"},
	{"name not the device's", "\ndev 0 0 v.com/c=a\n", "\ndev 0 0 v.com/c=evil\n"},
	{"names out of order", "\ndev 0 0 v.com/c=a\n", "\ndev 0 0 v.com/c=a\ndev 0 0 v.com/c=a\n"},
	{"spec record edited under the dev line", "spec 0 v.com/c\nname a\n",
	 "spec 0 v.com/c\nname a b\n"},
	{"a name line away from its spec", "spec 0 v.com/c\nname a\n",
	 "spec 0 v.com/c\nfproblem x\nname a\n"},
	{"a digest of 17 hex digits", "stat 1 d ", "stat 1 d 0"},
	{"a digest with a digit that is not lowercase hex", "stat 1 d ", "stat 1 d A"},
	{"a type that is neither d nor f", "stat 1 d ", "stat 1 x "},
	{"a missing dir with a type", "stat 1 d ", "stat 0 d "},
};

/*
 * A fresh-looking but inconsistent index (issue 10, finding 9): every
 * recorded stat still matches, but a "dev" line names a spec that is not
 * there, a device of another name, or breaks the sort.  Before: the first
 * made every load fail "out of memory", the second resolved v.com/c=evil
 * to a's edits.  Now the index is discarded, the dirs scanned, and a sound
 * index written again.
 */
static void test_index_inconsistent_rebuilt(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(inconsistent_rows); i++) {
		cleanup_free char *buf = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_cdi_registry *reg;
		const char *const *names;

		print_message("row %s\n", inconsistent_rows[i].name);
		reg = load(f, false);
		ts_cdi_registry_free(reg);
		mark_index(f);
		edit_index(f, inconsistent_rows[i].from, inconsistent_rows[i].to);
		reg = load(f, false);
		/* scanned, not filled: no marker problem, the one real device */
		assert_string_not_equal(problem(reg, 1), "marker");
		assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
		assert_string_equal(names[0], "v.com/c=a");
		ts_cdi_registry_free(reg);
		assert_int_equal(ts_read_file_at(AT_FDCWD, f->index, 0, &buf, NULL, &err), 0);
		assert_non_null(strstr(buf, "\ndev 0 0 v.com/c=a\nproblem "));
		assert_null(strstr(buf, "marker"));
	}
}

/* The create's registry: with a fresh index, only the devices asked for
 * (and every problem); what it resolves, injects and says about an
 * unresolvable name is what the whole registry does. */
static void test_index_load_devices(void **state)
{
	static const char spec_d[] = "cdiVersion: 0.3.0\nkind: v.com/d\n"
				     "devices: [{name: b, containerEdits: {env: [D=1]}}]\n";
	static const char *const asked[] = {"v.com/d=b", "v.com/c=a", "nope", "v.com/d=b",
					    "v.com/c=zz"};
	struct fixture *f = *state;
	struct ts_cdi_registry *reg, *whole;
	const char *const *names;

	write_file(f->etc, "d.yaml", spec_d);
	age(f->etc, "d.yaml");
	age(f->etc, NULL);
	ts_cdi_registry_free(load(f, false));
	mark_index(f);

	/* one device: one entry, from the index (the marker problem is there) */
	reg = load_devices(f, asked, 1);
	assert_string_equal(problem(reg, 1), "marker");
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	assert_string_equal(names[0], "v.com/d=b");
	assert_true(ts_cdi_registry_lookup(reg, "v.com/d=b", NULL, NULL));
	assert_false(ts_cdi_registry_lookup(reg, "v.com/c=a", NULL, NULL));
	ts_cdi_registry_free(reg);

	/* several, repeated, unknown and invalid names: the known ones, sorted */
	reg = load_devices(f, asked, ARRAY_SIZE(asked));
	assert_string_equal(problem(reg, 1), "marker");
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 2);
	assert_string_equal(names[0], "v.com/c=a");
	assert_string_equal(names[1], "v.com/d=b");
	whole = load(f, false);
	assert_string_equal(problem(whole, 1), "marker");
	assert_int_equal(ts_cdi_registry_devices(whole, &names), 2);

	/* the same injection, and the same "unresolvable" line, as the whole registry */
	for (int k = 0; k < 2; k++) {
		static const char *const requests[] = {"v.com/d=b,v.com/c=a",
						       "v.com/c=a,v.com/c=zz"};
		cleanup_free char *text = NULL, *out_part = NULL, *out_whole = NULL;
		cleanup_json struct ts_json *c1 = NULL, *c2 = NULL;
		cleanup_error struct ts_error *e1 = NULL, *e2 = NULL;
		int r1, r2;

		assert_true(asprintf(&text, "{\"annotations\": {\"cdi.k8s.io/x\": \"%s\"}}",
				     requests[k]) > 0);
		assert_int_equal(ts_json_parse(text, strlen(text), "config.json", &c1, &e1), 0);
		assert_int_equal(ts_json_parse(text, strlen(text), "config.json", &c2, &e2), 0);
		r1 = ts_cdi_inject_requested(reg, c1, "config.json", false, NULL, &e1);
		r2 = ts_cdi_inject_requested(whole, c2, "config.json", false, NULL, &e2);
		assert_int_equal(r1, r2);
		if (k == 0) {
			assert_int_equal(r1, 1); /* applied */
			assert_int_equal(ts_json_serialize(c1, false, &out_part, NULL, &e1), 0);
			assert_int_equal(ts_json_serialize(c2, false, &out_whole, NULL, &e2), 0);
			assert_string_equal(out_part, out_whole);
			assert_non_null(strstr(out_part, "\"env\":[\"D=1\",\"S=1\",\"A=1\"]"));
		} else {
			cleanup_free char *want = NULL;

			assert_int_equal(r1, -EINVAL);
			assert_true(
				asprintf(&want,
					 "config.json: '/annotations/cdi.k8s.io~1x': unresolvable "
					 "CDI devices v.com/c=zz (no spec file in %s, %s defines "
					 "it; ignored: %s/bad.json: line 1 column 2: parse error: "
					 "premature EOF (and 1 more))",
					 f->etc, f->run, f->etc) > 0);
			assert_string_equal(e1->msg, want);
			assert_string_equal(e2->msg, want);
		}
	}
	ts_cdi_registry_free(whole);
	ts_cdi_registry_free(reg);
}

/* The inconsistent index of test_index_inconsistent_rebuilt(), read for a
 * create: a "dev" line it uses that does not hold is found too. */
static void test_index_load_devices_inconsistent(void **state)
{
	static const char *const asked[] = {"v.com/c=a", "v.com/c=evil"};
	struct fixture *f = *state;

	for (size_t i = 0; i < ARRAY_SIZE(inconsistent_rows); i++) {
		cleanup_free char *buf = NULL;
		cleanup_error struct ts_error *err = NULL;
		struct ts_cdi_registry *reg;
		const char *const *names;

		print_message("row %s\n", inconsistent_rows[i].name);
		ts_cdi_registry_free(load(f, false));
		mark_index(f);
		edit_index(f, inconsistent_rows[i].from, inconsistent_rows[i].to);
		reg = load_devices(f, asked, ARRAY_SIZE(asked));
		/* scanned, not filled: no marker problem, the one real device */
		assert_string_not_equal(problem(reg, 1), "marker");
		assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
		assert_string_equal(names[0], "v.com/c=a");
		ts_cdi_registry_free(reg);
		assert_int_equal(ts_read_file_at(AT_FDCWD, f->index, 0, &buf, NULL, &err), 0);
		assert_non_null(strstr(buf, "\ndev 0 0 v.com/c=a\nproblem "));
		assert_null(strstr(buf, "marker"));
	}
}

int main(void)
{
	const struct ts_test tests[] = {
		{cmocka_unit_test_setup_teardown(test_index_used_with_time_before_1970, setup,
						 teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_used_when_valid, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test(test_stat_digest), TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_rebuilt_on_change, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_not_saved_when_racy_or_no_dir, setup,
						 teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_reparses_only_changed_files, setup,
						 teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_must_be_root_owned, setup, teardown),
		 TS_NEEDS_ROOT},
		{cmocka_unit_test_setup_teardown(test_index_inconsistent_rebuilt, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_garbage_ignored, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_load_devices, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_index_load_devices_inconsistent, setup,
						 teardown),
		 TS_NEEDS_NOTHING},
	};
	return ts_run_selected("test-index", tests, ARRAY_SIZE(tests));
}
