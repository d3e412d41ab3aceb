/* Unit tests of src/state/plain.c: the summary, the journal and the delete's question. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "state/plain.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "helpers.h"

struct fixture {
	char *top;  /* scratch directory */
	char *sdir; /* <top>/state */
	char *proc; /* <top>/proc: fake procfs */
	char *root; /* <top>/runc: fake runtime root */
	char *conf; /* <top>/config.json */
	int dfd;    /* sdir */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->top = th_tmpdir("plain")) == NULL)
		return -1;
	if (asprintf(&f->sdir, "%s/state", f->top) < 0 ||
	    asprintf(&f->proc, "%s/proc", f->top) < 0 ||
	    asprintf(&f->root, "%s/runc", f->top) < 0 ||
	    asprintf(&f->conf, "%s/config.json", f->top) < 0)
		return -1;
	if (mkdir(f->sdir, 0700) < 0 || mkdir(f->proc, 0755) < 0 || mkdir(f->root, 0700) < 0 ||
	    th_write(f->top, "config.json", "{}\n") < 0)
		return -1;
	f->dfd = open(f->sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->dfd < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->dfd);
	th_rm_rf(f->top);
	free(f->top);
	free(f->sdir);
	free(f->proc);
	free(f->root);
	free(f->conf);
	free(f);
	return 0;
}

static char *read_file(const char *dir, const char *name)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL;
	char *buf = NULL;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err), 0);
	return buf;
}

static char s_standard[] = "standard", s_cpus[] = "0-7", s_cpus2[] = "0-3", s_mems[] = "0-1";
static char s_bundle[] = "/b", s_cpus01[] = "0-1", s_mems0[] = "0";

static struct ts_plain_summary sample_summary(void)
{
	return (struct ts_plain_summary){
		.class_name = s_standard,
		.cpus = s_cpus,
		.mems = s_mems,
		.unified = true,
	};
}

/* Written, read back with every member, and current for the same host. */
static void test_summary_round_trip(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_host host = {0};
	struct ts_plain_summary want = sample_summary(), got = {0};
	cleanup_free char *text = NULL;
	int fd = -1;

	assert_int_equal(ts_plain_host_read(f->conf, &host, &err), 0);
	assert_true(host.config_present);
	assert_non_null(host.boot_id);
	assert_non_null(host.online);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 0); /* none yet */
	assert_int_equal(ts_plain_summary_write(f->dfd, &host, &want, &err), 0);
	text = read_file(f->sdir, TS_PLAIN_SUMMARY_FILE);
	assert_memory_equal(text, "{\"valid\":1,\"version\":1,", 23);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, &fd), 1);
	assert_true(fd >= 0);
	assert_string_equal(got.config_path, f->conf);
	assert_string_equal(got.class_name, "standard");
	assert_string_equal(got.cpus, "0-7");
	assert_string_equal(got.mems, "0-1");
	assert_true(got.unified);
	assert_true(got.config_present);
	assert_true(ts_plain_summary_current(&got, &host));
	assert_true(ts_plain_summary_still_valid(f->dfd, fd));
	close(fd);
	ts_plain_summary_release(&got);
	ts_plain_host_release(&host);
}

/* Any edit of the config file, another boot or other online cpus make the
 * summary stale; an absent config matches only an absent config. */
static void test_summary_current(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_host host = {0}, now = {0};
	struct ts_plain_summary want = sample_summary(), got = {0};
	cleanup_free char *absent = NULL;

	assert_int_equal(ts_plain_host_read(f->conf, &host, &err), 0);
	assert_int_equal(ts_plain_summary_write(f->dfd, &host, &want, &err), 0);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 1);

	/* the same size, a new mtime */
	usleep(10000);
	assert_int_equal(th_write(f->top, "config.json", "[]\n"), 0);
	assert_int_equal(ts_plain_host_read(f->conf, &now, &err), 0);
	assert_false(ts_plain_summary_current(&got, &now));
	ts_plain_host_release(&now);

	assert_int_equal(ts_plain_host_read(f->conf, &now, &err), 0);
	free(got.online);
	got.online = strdup(now.online);
	got.config_st = now.config_st;
	assert_true(ts_plain_summary_current(&got, &now));
	free(now.boot_id);
	now.boot_id = strdup("another-boot");
	assert_false(ts_plain_summary_current(&got, &now));
	free(now.boot_id);
	now.boot_id = strdup(got.boot_id);
	free(now.online);
	now.online = strdup("0-3,9");
	assert_false(ts_plain_summary_current(&got, &now));
	ts_plain_host_release(&now);

	/* the summary of an absent config is not one of a present config */
	assert_true(asprintf(&absent, "%s/none.json", f->top) > 0);
	assert_int_equal(ts_plain_host_read(absent, &now, &err), 0);
	assert_false(now.config_present);
	assert_false(ts_plain_summary_current(&got, &now));
	ts_plain_summary_release(&got);
	assert_int_equal(ts_plain_summary_write(f->dfd, &now, &want, &err), 0);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 1);
	assert_false(got.config_present);
	assert_true(ts_plain_summary_current(&got, &now));
	assert_false(ts_plain_summary_current(&got, &host));
	ts_plain_summary_release(&got);
	ts_plain_host_release(&now);
	ts_plain_host_release(&host);
}

/* Withdrawn in place (one byte, the same file), then restored in place by
 * a write of the same summary; a different summary replaces the file. */
static void test_summary_withdrawn(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_host host = {0};
	struct ts_plain_summary want = sample_summary(), got = {0};
	struct stat before, after;
	cleanup_free char *text = NULL;
	int fd = -1;

	assert_int_equal(ts_plain_summary_invalidate(f->dfd, &err), 0); /* none: fine */
	assert_int_equal(ts_plain_host_read(f->conf, &host, &err), 0);
	assert_int_equal(ts_plain_summary_write(f->dfd, &host, &want, &err), 0);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, &fd), 1);
	ts_plain_summary_release(&got);
	assert_int_equal(fstatat(f->dfd, TS_PLAIN_SUMMARY_FILE, &before, 0), 0);

	assert_int_equal(ts_plain_summary_invalidate(f->dfd, &err), 0);
	assert_false(ts_plain_summary_still_valid(f->dfd, fd));
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 0);
	text = read_file(f->sdir, TS_PLAIN_SUMMARY_FILE);
	assert_memory_equal(text, "{\"valid\":0,", 11);

	assert_int_equal(ts_plain_summary_write(f->dfd, &host, &want, &err), 0);
	assert_int_equal(fstatat(f->dfd, TS_PLAIN_SUMMARY_FILE, &after, 0), 0);
	assert_int_equal(before.st_ino, after.st_ino);
	assert_true(ts_plain_summary_still_valid(f->dfd, fd));

	/* other cpus: a new file; the one held is no longer the summary */
	want.cpus = s_cpus2;
	assert_int_equal(ts_plain_summary_write(f->dfd, &host, &want, &err), 0);
	assert_int_equal(fstatat(f->dfd, TS_PLAIN_SUMMARY_FILE, &after, 0), 0);
	assert_int_not_equal(before.st_ino, after.st_ino);
	assert_false(ts_plain_summary_still_valid(f->dfd, fd));
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 1);
	assert_string_equal(got.cpus, "0-3");
	ts_plain_summary_release(&got);
	close(fd);
	ts_plain_host_release(&host);
}

/* What is not a summary of ours is never read as one. */
static void test_summary_refused(void **state)
{
	struct fixture *f = *state;
	struct ts_plain_summary got = {0};
	static const char *const bad[] = {
		"",
		"{\"valid\":1}",
		"{\"valid\":1,\"version\":2,\"config_path\":\"/c\",\"config_present\":false,"
		"\"boot_id\":\"b\",\"online\":\"0\",\"unified\":false,\"class\":\"standard\","
		"\"cpus\":\"0\",\"mems\":\"0\"}",
		"{\"valid\":1,\"version\":1,\"config_path\":\"/c\",\"config_present\":false,"
		"\"boot_id\":\"b\",\"online\":\"0\",\"unified\":false,\"class\":\"standard\","
		"\"cpus\":\"0\"}",
		/* valid only when the text starts so */
		"{\"version\":1,\"valid\":1,\"config_path\":\"/c\",\"config_present\":false,"
		"\"boot_id\":\"b\",\"online\":\"0\",\"unified\":false,\"class\":\"standard\","
		"\"cpus\":\"0\",\"mems\":\"0\"}",
		"{\"valid\":1,\"version\":1,\"config_path\":\"/c\",\"config_present\":true,"
		"\"boot_id\":\"b\",\"online\":\"0\",\"unified\":false,\"class\":\"standard\","
		"\"cpus\":\"0\",\"mems\":\"0\"}",
	};
	const char *good = "{\"valid\":1,\"version\":1,\"config_path\":\"/c\",\"config_present\":"
			   "false,\"boot_id\":\"b\",\"online\":\"0\",\"unified\":false,\"class\":"
			   "\"standard\",\"cpus\":\"0\",\"mems\":\"0\"}";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(th_write(f->sdir, TS_PLAIN_SUMMARY_FILE, bad[i]), 0);
		assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 0);
	}
	assert_int_equal(th_write(f->sdir, TS_PLAIN_SUMMARY_FILE, good), 0);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 1);
	ts_plain_summary_release(&got);
	/* writable by others: not trusted */
	assert_int_equal(fchmodat(f->dfd, TS_PLAIN_SUMMARY_FILE, 0622, 0), 0);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 0);
	/* a symlink to a good one: not followed */
	assert_int_equal(fchmodat(f->dfd, TS_PLAIN_SUMMARY_FILE, 0600, 0), 0);
	assert_int_equal(renameat(f->dfd, TS_PLAIN_SUMMARY_FILE, f->dfd, "elsewhere"), 0);
	assert_int_equal(symlinkat("elsewhere", f->dfd, TS_PLAIN_SUMMARY_FILE), 0);
	assert_int_equal(ts_plain_summary_read(f->dfd, &got, NULL), 0);
}

static struct ts_plain_entry entry(char *root, char *id, int pid, uint64_t ticks)
{
	return (struct ts_plain_entry){
		.runtime_root = root,
		.container_id = id,
		.bundle = s_bundle,
		.class_name = s_standard,
		.cpus = s_cpus01,
		.mems = s_mems0,
		.pid = pid,
		.pid_start_ticks = ticks,
		.created_usec = 77,
	};
}

static char id_with_dir[] = "with-dir", id_creating[] = "creating", id_recycled[] = "recycled";
static char id_gone[] = "gone", id_zombie[] = "zombie", id_live[] = "live", id_later[] = "later";

/* Appended lines are taken back: alive ones (a runtime dir, or the create
 * still running with its start time), the last one of each container;
 * gone ones and lines that do not parse are dropped; a take that commits
 * empties the journal, one that does not leaves it. */
static void test_journal_take(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_entry *v = NULL, e;
	cleanup_free char *dir = NULL, *text = NULL;
	size_t n = 0;
	off_t size = 0;
	int fd = -1;

	/* nothing to take */
	assert_int_equal(ts_plain_journal_take(f->dfd, f->proc, &fd, &v, &n, &err), 0);
	assert_true(fd < 0);
	assert_int_equal(n, 0);

	e = entry(f->root, id_with_dir, 100, 1);
	assert_true(asprintf(&dir, "%s/with-dir", f->root) > 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, &size, &err), 0);
	assert_true(size > 0);
	e = entry(f->root, id_creating, 200, 5);
	assert_int_equal(th_fake_proc(f->proc, 200, "runc", 'S', 5), 0);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	e = entry(f->root, id_recycled, 300, 5);
	assert_int_equal(th_fake_proc(f->proc, 300, "sh", 'S', 6), 0);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	e = entry(f->root, id_gone, 400, 5);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	e = entry(f->root, id_zombie, 500, 5);
	assert_int_equal(th_fake_proc(f->proc, 500, "runc", 'Z', 5), 0);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	/* a later create of the same container wins */
	e = entry(f->root, id_creating, 200, 5);
	e.created_usec = 88;
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	/* an append cut short, and a line of something else */
	{
		int jfd = openat(f->dfd, TS_PLAIN_JOURNAL_FILE, O_WRONLY | O_APPEND | O_CLOEXEC);

		assert_true(jfd >= 0);
		assert_int_equal(ts_write_all(jfd, "[1]\n{\"version\":1,\"root\"", 24), 0);
		close(jfd);
	}

	assert_int_equal(ts_plain_journal_take(f->dfd, f->proc, &fd, &v, &n, &err), 0);
	assert_true(fd >= 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].container_id, "with-dir");
	assert_string_equal(v[0].runtime_root, f->root);
	assert_string_equal(v[0].bundle, "/b");
	assert_string_equal(v[0].class_name, "standard");
	assert_string_equal(v[0].cpus, "0-1");
	assert_string_equal(v[0].mems, "0");
	assert_int_equal(v[0].pid, 100);
	assert_string_equal(v[1].container_id, "creating");
	assert_int_equal(v[1].created_usec, 88);
	assert_int_equal(v[1].pid_start_ticks, 5);
	ts_plain_entries_free(v, n);
	/* not committed: the journal stays as it was */
	assert_int_equal(ts_plain_journal_take_done(fd, false, &err), 0);
	text = read_file(f->sdir, TS_PLAIN_JOURNAL_FILE);
	assert_non_null(strstr(text, "\"id\":\"gone\""));
	assert_int_equal(ts_plain_journal_take(f->dfd, f->proc, &fd, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	ts_plain_entries_free(v, n);
	assert_int_equal(ts_plain_journal_take_done(fd, true, &err), 0);
	free(text);
	text = read_file(f->sdir, TS_PLAIN_JOURNAL_FILE);
	assert_string_equal(text, "");
}

/* What others may have left in the journal's place: a line cut short (a
 * full disk) does not swallow the next append; a file of ours that others
 * may write is made 0600 again; a FIFO or a directory is refused at once,
 * never waited on. */
static void test_journal_damage(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_entry *v = NULL, e;
	cleanup_free char *dir = NULL;
	struct stat st;
	size_t n = 0;

	assert_true(asprintf(&dir, "%s/live", f->root) > 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(
		th_write(f->sdir, TS_PLAIN_JOURNAL_FILE, "{\"version\":1,\"root\":\"/r\",\"id"), 0);
	e = entry(f->root, id_live, 7, 1);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	assert_int_equal(ts_plain_journal_read(f->dfd, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].container_id, "live");
	ts_plain_entries_free(v, n);

	assert_int_equal(fchmodat(f->dfd, TS_PLAIN_JOURNAL_FILE, 0666, 0), 0);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	assert_int_equal(fstatat(f->dfd, TS_PLAIN_JOURNAL_FILE, &st, 0), 0);
	assert_int_equal(st.st_mode & 07777, 0600);

	assert_int_equal(unlinkat(f->dfd, TS_PLAIN_JOURNAL_FILE, 0), 0);
	assert_int_equal(mkfifoat(f->dfd, TS_PLAIN_JOURNAL_FILE, 0600), 0);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), -ENXIO);
	ts_error_clear(&err);
	assert_true(ts_plain_journal_read(f->dfd, &v, &n, &err) < 0);
	ts_error_clear(&err);
	assert_int_equal(unlinkat(f->dfd, TS_PLAIN_JOURNAL_FILE, 0), 0);
	assert_int_equal(mkdirat(f->dfd, TS_PLAIN_JOURNAL_FILE, 0700), 0);
	assert_true(ts_plain_journal_append(f->dfd, &e, NULL, &err) < 0);
	assert_non_null(strstr(err->msg, "plain-containers"));
}

/* A journal larger than a take reads whole: its newest lines are read. */
static void test_journal_oversized(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_entry *v = NULL, e;
	cleanup_free char *dir = NULL, *line = NULL;
	size_t n = 0;
	off_t size = 0;
	int fd;

	assert_true(asprintf(&dir, "%s/live", f->root) > 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	e = entry(f->root, id_live, 7, 1);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	/* 17 MiB of junk lines after it, then a second live entry */
	fd = openat(f->dfd, TS_PLAIN_JOURNAL_FILE, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(fd >= 0);
	line = malloc(1024);
	assert_non_null(line);
	memset(line, 'x', 1023);
	line[1023] = '\n';
	for (int i = 0; i < 17 * 1024; i++)
		assert_int_equal(ts_write_all(fd, line, 1024), 0);
	close(fd);
	e = entry(f->root, id_later, 8, 1);
	{
		cleanup_free char *later = NULL;

		assert_true(asprintf(&later, "%s/later", f->root) > 0);
		assert_int_equal(mkdir(later, 0700), 0);
	}
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, &size, &err), 0);
	assert_true(size > (off_t)TS_PLAIN_JOURNAL_MAX_BYTES);
	assert_int_equal(ts_plain_journal_read(f->dfd, &v, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(v[0].container_id, "later");
	ts_plain_entries_free(v, n);
}

/* A compaction keeps the live entries, in a new file with the same lines;
 * an append after it goes to the new file. */
static void test_journal_compact(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_entry *v = NULL, e;
	cleanup_free char *dir = NULL;
	size_t n = 0, kept = 9, dropped = 9;

	assert_int_equal(ts_plain_journal_compact(f->dfd, f->proc, &kept, &dropped, &err), 0);
	assert_int_equal(kept, 0);
	assert_int_equal(dropped, 0);
	assert_true(asprintf(&dir, "%s/live", f->root) > 0);
	assert_int_equal(mkdir(dir, 0700), 0);
	for (int i = 0; i < 50; i++) {
		char id[16];

		snprintf(id, sizeof(id), "dead-%d", i);
		e = entry(f->root, id, 1000 + i, 1);
		assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	}
	e = entry(f->root, id_live, 7, 1);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	assert_int_equal(ts_plain_journal_compact(f->dfd, f->proc, &kept, &dropped, &err), 0);
	assert_int_equal(kept, 1);
	assert_int_equal(dropped, 50);
	e = entry(f->root, id_later, 8, 1);
	assert_int_equal(ts_plain_journal_append(f->dfd, &e, NULL, &err), 0);
	assert_int_equal(ts_plain_journal_read(f->dfd, &v, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0].container_id, "live");
	assert_string_equal(v[1].container_id, "later");
	ts_plain_entries_free(v, n);
}

/* The delete's question: a runc id named as a "container_id" value, however
 * the JSON is laid out; nothing else counts; what cannot be told is "yes". */
static void test_maybe_recorded(void **state)
{
	struct fixture *f = *state;

	assert_false(ts_plain_maybe_recorded(f->dfd, "web")); /* no file: a new store */
	/* a lost store (its copy, or its roots file, left): the core rebuilds */
	assert_int_equal(th_write(f->sdir, "allocations.json.prev", "{}"), 0);
	assert_true(ts_plain_maybe_recorded(f->dfd, "web"));
	assert_int_equal(unlinkat(f->dfd, "allocations.json.prev", 0), 0);
	assert_int_equal(th_write(f->sdir, "runtime-roots", "/run/runc\n"), 0);
	assert_true(ts_plain_maybe_recorded(f->dfd, "web"));
	/* cut short, not naming it: damaged, the core rebuilds */
	assert_int_equal(th_write(f->sdir, "allocations.json",
				  "{\"version\":1,\"checksum\":\"x\",\"allocations\":[{\"contai"),
			 0);
	assert_true(ts_plain_maybe_recorded(f->dfd, "web"));
	/* whole as a commit writes it, with odd spacing inside */
	assert_int_equal(
		th_write(
			f->sdir, "allocations.json",
			"{\"version\":1,\"allocations\": [{\"container_id\": \"web\", "
			"\"bundle\": \"/b/\\\"container_id\\\": \\\"db\\\"\", "
			"\"runtime_root\": \"/run/runc\"}, {\"container_id\"\n:\t\"batch.1\"}]}\n"),
		0);
	assert_true(ts_plain_maybe_recorded(f->dfd, "web"));
	assert_true(ts_plain_maybe_recorded(f->dfd, "batch.1"));
	assert_false(ts_plain_maybe_recorded(f->dfd, "we"));
	assert_false(ts_plain_maybe_recorded(f->dfd, "eb"));
	assert_false(ts_plain_maybe_recorded(f->dfd, "batch"));
	assert_false(ts_plain_maybe_recorded(f->dfd, "db")); /* inside a string */
	assert_false(ts_plain_maybe_recorded(f->dfd, "runc"));
	/* not a runc id: let the core look */
	assert_true(ts_plain_maybe_recorded(f->dfd, "a/b"));
	assert_true(ts_plain_maybe_recorded(f->dfd, ".."));
	assert_true(ts_plain_maybe_recorded(f->dfd, ""));
	/* unreadable (a directory): let the core look */
	assert_int_equal(unlinkat(f->dfd, "allocations.json", 0), 0);
	assert_int_equal(mkdirat(f->dfd, "allocations.json", 0700), 0);
	assert_true(ts_plain_maybe_recorded(f->dfd, "web"));
}

static void test_ids_and_dirs(void **state)
{
	struct fixture *f = *state;
	char longest[257];

	memset(longest, 'a', sizeof(longest));
	longest[256] = '\0';
	assert_false(ts_plain_container_id_valid(longest)); /* NAME_MAX + 1 */
	longest[255] = '\0';
	assert_true(ts_plain_container_id_valid("a"));
	assert_true(ts_plain_container_id_valid("k8s_POD.1+x-y_z"));
	assert_true(ts_plain_container_id_valid(longest));
	assert_false(ts_plain_container_id_valid(NULL));
	assert_false(ts_plain_container_id_valid(""));
	assert_false(ts_plain_container_id_valid("."));
	assert_false(ts_plain_container_id_valid(".."));
	assert_false(ts_plain_container_id_valid("a b"));
	assert_false(ts_plain_container_id_valid("a/b"));
	assert_false(ts_plain_container_id_valid("a\"b"));
	assert_true(ts_plain_state_dir_trusted(f->dfd));
	assert_int_equal(chmod(f->sdir, 0770), 0);
	assert_false(ts_plain_state_dir_trusted(f->dfd));
	assert_int_equal(chmod(f->sdir, 0700), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_summary_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_current, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_withdrawn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_take, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_compact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_damage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_journal_oversized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_maybe_recorded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ids_and_dirs, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
