/* Unit tests of src/state/state.c and format.c: the file format, rebuilds, the lock. */
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
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "oci/json.h"
#include "state/internal.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "helpers.h"

struct fixture {
	char *top;     /* scratch directory */
	char *sdir;    /* <top>/state */
	char *proc;    /* <top>/proc: fake procfs */
	char *runtime; /* <top>/runc: fake runtime root */
	struct ts_state_options opts;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL || (f->top = th_tmpdir("store")) == NULL)
		return -1;
	if (asprintf(&f->sdir, "%s/state", f->top) < 0 ||
	    asprintf(&f->proc, "%s/proc", f->top) < 0 ||
	    asprintf(&f->runtime, "%s/runc", f->top) < 0)
		return -1;
	if (mkdir(f->proc, 0755) < 0 || mkdir(f->runtime, 0700) < 0)
		return -1;
	f->opts.state_dir = f->sdir;
	f->opts.proc_root = f->proc;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	th_rm_rf(f->top);
	free(f->top);
	free(f->sdir);
	free(f->proc);
	free(f->runtime);
	free(f);
	return 0;
}

static char *read_alloc_file(const struct fixture *f)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL;
	char *buf = NULL;

	assert_true(asprintf(&path, "%s/allocations.json", f->sdir) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err), 0);
	return buf;
}

static char *read_file_in(const char *dir, const char *name)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *path = NULL;
	char *buf = NULL;

	assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err), 0);
	return buf;
}

static void write_alloc_file(const struct fixture *f, const char *text)
{
	assert_int_equal(th_write(f->sdir, "allocations.json", text), 0);
}

/* The two records of the round-trip test. */
static void put_sample(struct ts_state *s, const char *runtime_root)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_alloc *a = ts_alloc_new("web-1", &err);
	struct ts_alloc *b = ts_alloc_new("batch \"2\"", &err);

	assert_non_null(a);
	assert_non_null(b);
	a->runtime_root = strdup(runtime_root);
	a->bundle = strdup("/run/containerd/io.containerd.runtime.v2.task/default/web-1");
	a->class_name = strdup("critical");
	a->cpus_str = strdup("2-3,10");
	a->mems_str = strdup("0");
	a->devices = calloc(3, sizeof(char *));
	assert_non_null(a->devices);
	a->devices[0] = strdup("nvidia.com/gpu=0");
	a->devices[1] = strdup("vendor.com/nic=eth1");
	a->pinned = false;
	a->numa_exclusive = true;
	a->status = TS_ALLOC_CREATED;
	a->created_usec = 1764466140123456ull;
	a->pid = 31337;
	a->pid_start_ticks = 18446744073709551615ull;
	a->cgroup_path = strdup("/default/web-1");
	b->runtime_root = strdup(runtime_root);
	b->bundle = strdup("/b");
	b->class_name = strdup("batch");
	b->pinned = true;
	b->created_usec = 1;
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_put(s, b, &err), 0);
}

/* A state dir others may write (or another user owns) is refused. */
static void test_insecure_state_dir(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *want = NULL;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	s = ts_state_close(s);
	assert_int_equal(chmod(f->sdir, 0777), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), -EPERM);
	assert_true(asprintf(&want, "%s: state directory writable by others (mode 0777)", f->sdir) >
		    0);
	assert_string_equal(err->msg, want);
	assert_null(s);
	ts_error_clear(&err);
	free(want);
	want = NULL;
	assert_int_equal(chmod(f->sdir, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(f->sdir, 65534, 65534), 0);
		assert_int_equal(ts_state_open(&f->opts, &s, &err), -EPERM);
		assert_true(asprintf(&want, "%s: state directory owned by uid 65534, not 0",
				     f->sdir) > 0);
		assert_string_equal(err->msg, want);
		assert_int_equal(chown(f->sdir, 0, 0), 0);
	}
}

static void test_missing_file_is_empty(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *warning = (char *)"unset";
	struct stat st;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(stat(f->sdir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 0);
	assert_null(ts_state_find(s, NULL, "x"));
	/* nothing changed: commit writes nothing */
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(th_exists(f->sdir, "allocations.json"), 0);
	assert_int_equal(th_exists(f->sdir, "lock"), 1);
}

/* allocations.json of put_sample(): compact, one line; the checksums were
 * cross-checked with an independent Python implementation of the canonical
 * stream (state.h): the sum of the records' hashes, and for the files of
 * before 2026-12-06 one hash over both ("fnv1a64:48a8a67fccce8c1d") */
#define SAMPLE_SUM "fnv1a64-sum:498502950d8de868"
#define SAMPLE_CHAINED "fnv1a64:48a8a67fccce8c1d"
static const char expected_file[] =
	"{\"version\":1,\"checksum\":\"" SAMPLE_SUM "\",\"allocations\":["
	"{\"container_id\":\"web-1\",\"runtime_root\":\"/run/containerd/runc/"
	"default\",\"bundle\":\"/run/containerd/io.containerd.runtime.v2.task/default/"
	"web-1\",\"class\":\"critical\",\"cpus\":\"2-3,10\",\"mems\":\"0\",\"devices\":[\"nvidia."
	"com/gpu=0\",\"vendor.com/"
	"nic=eth1\"],\"pinned\":false,\"numa_exclusive\":true,\"state\":\"created\",\"created_"
	"usec\":1764466140123456,\"pid\":31337,\"pid_start_ticks\":18446744073709551615,\"cgroup_"
	"path\":\"/default/web-1\"},"
	"{\"container_id\":\"batch "
	"\\\"2\\\"\",\"runtime_root\":\"/run/containerd/runc/default\",\"bundle\":\"/"
	"b\",\"class\":\"batch\",\"cpus\":\"\",\"mems\":\"\",\"devices\":[],\"pinned\":true,\"numa_"
	"exclusive\":false,\"state\":\"creating\",\"created_usec\":1}]}\n";
/* the same as toposhim wrote it before 2026-12-05 (indented, the chained
 * checksum), which it still reads */
static const char indented_file[] =
	"{\n"
	"    \"version\": 1,\n"
	"    \"checksum\": \"" SAMPLE_CHAINED "\",\n"
	"    \"allocations\": [\n"
	"        {\n"
	"            \"container_id\": \"web-1\",\n"
	"            \"runtime_root\": \"/run/containerd/runc/default\",\n"
	"            \"bundle\": \"/run/containerd/io.containerd.runtime.v2.task/default/web-1\",\n"
	"            \"class\": \"critical\",\n"
	"            \"cpus\": \"2-3,10\",\n"
	"            \"mems\": \"0\",\n"
	"            \"devices\": [\n"
	"                \"nvidia.com/gpu=0\",\n"
	"                \"vendor.com/nic=eth1\"\n"
	"            ],\n"
	"            \"pinned\": false,\n"
	"            \"numa_exclusive\": true,\n"
	"            \"state\": \"created\",\n"
	"            \"created_usec\": 1764466140123456,\n"
	"            \"pid\": 31337,\n"
	"            \"pid_start_ticks\": 18446744073709551615,\n"
	"            \"cgroup_path\": \"/default/web-1\"\n"
	"        },\n"
	"        {\n"
	"            \"container_id\": \"batch \\\"2\\\"\",\n"
	"            \"runtime_root\": \"/run/containerd/runc/default\",\n"
	"            \"bundle\": \"/b\",\n"
	"            \"class\": \"batch\",\n"
	"            \"cpus\": \"\",\n"
	"            \"mems\": \"\",\n"
	"            \"devices\": [],\n"
	"            \"pinned\": true,\n"
	"            \"numa_exclusive\": false,\n"
	"            \"state\": \"creating\",\n"
	"            \"created_usec\": 1\n"
	"        }\n"
	"    ]\n"
	"}\n";
/* The rebuild tests keep their records under a runtime root no user can
 * have (a record without a pid is dropped when its runtime dir is surely
 * absent: ENOENT; /run/containerd/runc is 0700, so a user other than root
 * would get EACCES there, "cannot tell", and keep it).  The checksums of
 * put_sample() with that root, cross-checked as above: */
#define NO_RUNTIME_ROOT "/nonexistent/runc/default"
#define NO_ROOT_SUM "fnv1a64-sum:c1d803439f8d5cce"
/* the same with "cpus": "0-3,10" in the first record */
#define NO_ROOT_TAMPERED_SUM "fnv1a64-sum:ca97d505d9006a48"
/* the same two in the chained form of before 2026-12-06 */
#define NO_ROOT_CHAINED "fnv1a64:11776206c6d60b05"
#define NO_ROOT_TAMPERED_CHAINED "fnv1a64:3bdc3628c1ab5593"

static void test_round_trip_exact(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	char *warning = NULL;
	const struct ts_alloc *a, *b;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	put_sample(s, "/run/containerd/runc/default");
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);

	text = read_alloc_file(f);
	assert_string_equal(text, expected_file);

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 2);
	a = ts_state_at(s, 0);
	b = ts_state_find(s, "/run/containerd/runc/default", "batch \"2\"");
	assert_ptr_equal(b, ts_state_at(s, 1));
	assert_string_equal(a->container_id, "web-1");
	assert_string_equal(a->runtime_root, "/run/containerd/runc/default");
	assert_string_equal(a->bundle,
			    "/run/containerd/io.containerd.runtime.v2.task/default/web-1");
	assert_string_equal(a->class_name, "critical");
	assert_string_equal(a->cpus_str, "2-3,10");
	assert_string_equal(a->mems_str, "0");
	assert_string_equal(a->devices[0], "nvidia.com/gpu=0");
	assert_string_equal(a->devices[1], "vendor.com/nic=eth1");
	assert_null(a->devices[2]);
	assert_false(a->pinned);
	assert_true(a->numa_exclusive);
	assert_int_equal(a->status, TS_ALLOC_CREATED);
	assert_true(a->created_usec == 1764466140123456ull);
	assert_int_equal(a->pid, 31337);
	assert_true(a->pid_start_ticks == 18446744073709551615ull);
	assert_string_equal(a->cgroup_path, "/default/web-1");
	assert_string_equal(b->cpus_str, "");
	assert_string_equal(b->mems_str, "");
	assert_non_null(b->devices);
	assert_null(b->devices[0]);
	assert_true(b->pinned);
	assert_int_equal(b->status, TS_ALLOC_CREATING);
	assert_int_equal(b->pid, 0);
	assert_null(b->cgroup_path);
}

/* The indented file of toposhim before 2026-12-05, with the chained
 * checksum of before 2026-12-06, loads as sound, and its next commit is
 * the compact text with the sum. */
static void test_indented_file_still_read(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	char *warning = NULL;

	write_alloc_file(f, indented_file);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 2);
	assert_string_equal(ts_state_at(s, 0)->cpus_str, "2-3,10");
	/* one change, one commit: the whole store in the compact form */
	assert_int_equal(ts_state_remove(s, "/run/containerd/runc/default", "batch \"2\"", NULL),
			 1);
	put_sample(s, "/run/containerd/runc/default");
	assert_int_equal(ts_state_commit(s, &err), 0);
	text = read_alloc_file(f);
	assert_string_equal(text, expected_file);
}

/* Load with a warning expected; returns it (caller frees). */
static char *load_warn(struct ts_state *s)
{
	cleanup_error struct ts_error *err = NULL;
	char *warning = NULL;

	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_non_null(warning);
	return warning;
}

static void test_checksum_mismatch_rebuilds(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *warning = NULL, *want = NULL, *tampered = NULL;
	char *p;

	/* a sound file with two records, then its cpus changed by hand */
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	put_sample(s, NO_RUNTIME_ROOT);
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);
	text = read_alloc_file(f);
	p = strstr(text, "2-3,10");
	assert_non_null(p);
	p[0] = '0';
	write_alloc_file(f, text);
	/* web-1 lives on (pid 31337 with the recorded start time); "batch \"2\""
	 * has no pid and no runtime dir: dropped */
	assert_int_equal(th_fake_proc(f->proc, 31337, "sh", 'S', 18446744073709551615ull), 0);

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	assert_true(asprintf(&want,
			     "%s/allocations.json: checksum mismatch (stored '%s', computed '%s'): "
			     "store rebuilt from live containers, kept 1 of 2 allocations",
			     f->sdir, NO_ROOT_SUM, NO_ROOT_TAMPERED_SUM) > 0);
	assert_string_equal(warning, want);
	assert_int_equal(ts_state_count(s), 1);
	assert_string_equal(ts_state_at(s, 0)->container_id, "web-1");
	assert_string_equal(ts_state_at(s, 0)->cpus_str, "0-3,10");
	/* the rebuilt store is written back, and then loads cleanly */
	assert_int_equal(ts_state_commit(s, &err), 0);
	free(TAKE_PTR(warning));
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 1);
}

static void test_truncated_file(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *warning = NULL, *want = NULL;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	put_sample(s, "/run/containerd/runc/default");
	assert_int_equal(ts_state_commit(s, &err), 0);
	text = read_alloc_file(f);
	text[100] = '\0';
	write_alloc_file(f, text);
	warning = load_warn(s);
	assert_true(asprintf(&want,
			     "%s/allocations.json: does not parse (line 1 column 101: parse error: "
			     "premature EOF): store rebuilt from live containers, kept 0 of 0 "
			     "allocations",
			     f->sdir) > 0);
	assert_string_equal(warning, want);
	assert_int_equal(ts_state_count(s), 0);
	/* an empty file is no better */
	write_alloc_file(f, "");
	free(TAKE_PTR(warning));
	free(TAKE_PTR(want));
	warning = load_warn(s);
	assert_true(asprintf(&want,
			     "%s/allocations.json: does not parse (empty document): store rebuilt "
			     "from live containers, kept 0 of 0 allocations",
			     f->sdir) > 0);
	assert_string_equal(warning, want);
}

/* A commit over a sound file keeps it as allocations.json.prev; when the
 * current file is damaged beyond parsing, the live records of the previous
 * one come back.  web-1 (alive, pid 31337) is in both versions and is kept;
 * "batch \"2\"" (no pid, no runtime dir) is dropped as in any rebuild;
 * "late" (alive, pid 4242) was only in the damaged file and is lost: the
 * copy is one commit behind, never a replacement for the real file. */
static void test_previous_copy(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *v1 = NULL, *prev = NULL, *warning = NULL, *want = NULL;
	struct ts_alloc *late;

	assert_int_equal(th_fake_proc(f->proc, 31337, "sh", 'S', 18446744073709551615ull), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	put_sample(s, NO_RUNTIME_ROOT);
	assert_int_equal(ts_state_commit(s, &err), 0);
	/* the first file had nothing before it */
	assert_int_equal(th_exists(f->sdir, "allocations.json.prev"), 0);
	s = ts_state_close(s);
	v1 = read_alloc_file(f);

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	late = ts_alloc_new("late", &err);
	assert_non_null(late);
	late->class_name = strdup("critical");
	late->cpus_str = strdup("4");
	late->pid = 4242;
	late->pid_start_ticks = 7;
	late->status = TS_ALLOC_CREATED;
	assert_int_equal(ts_state_put(s, late, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	{
		cleanup_free char *path = NULL;
		assert_true(asprintf(&path, "%s/allocations.json.prev", f->sdir) > 0);
		assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &prev, NULL, &err), 0);
	}
	assert_string_equal(prev, v1);
	assert_int_equal(th_fake_proc(f->proc, 4242, "sh", 'S', 7), 0);

	write_alloc_file(f, "{\"version\": 1, \"allocati");
	warning = load_warn(s);
	assert_true(asprintf(&want,
			     "%s/allocations.json: does not parse (line 1 column 25: parse error: "
			     "premature EOF): store rebuilt from live containers and "
			     "allocations.json.prev, kept 1 of 2 allocations",
			     f->sdir) > 0);
	assert_string_equal(warning, want);
	assert_int_equal(ts_state_count(s), 1);
	assert_string_equal(ts_state_at(s, 0)->container_id, "web-1");
	assert_string_equal(ts_state_at(s, 0)->cpus_str, "2-3,10");
	/* the rebuilt store is written; the damaged file never becomes .prev */
	assert_int_equal(ts_state_commit(s, &err), 0);
	free(TAKE_PTR(prev));
	{
		cleanup_free char *path = NULL;
		assert_true(asprintf(&path, "%s/allocations.json.prev", f->sdir) > 0);
		assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &prev, NULL, &err), 0);
	}
	assert_string_equal(prev, v1);
}

/* The placement file keeps the CDI devices toposhim injected, read back
 * only for its container; a devices-only file (no placement) is never
 * read as a placement. */
static void test_placement_devices(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *names = NULL, *none = NULL, *dir = NULL;
	struct ts_state_placement p = {0}, got = {0};
	char id[] = "c1", cls[] = "critical", cpus[] = "2", mems[] = "0",
	     devs[] = "a.com/b=c,a.com/b=d";
	int fd;

	assert_true(asprintf(&dir, "%s/b", f->top) > 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	fd = open(dir, O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ts_state_placement_devices(fd, ".", "c1", &none), 0);
	p = (struct ts_state_placement){.container_id = id,
					.class_name = cls,
					.cpus_str = cpus,
					.mems_str = mems,
					.devices = devs,
					.cpus_written = true};
	assert_int_equal(ts_state_placement_write(fd, &p, &err), 0);
	text = read_file_in(dir, "toposhim-placement.json");
	assert_string_equal(text,
			    "{\"version\":1,\"id\":\"c1\",\"class\":\"critical\",\"cpus\":\"2\","
			    "\"mems\":\"0\",\"cpus_written\":true,\"pinned\":false,"
			    "\"numa_exclusive\":false,\"devices\":[\"a.com/b=c\",\"a.com/b=d\"]}");
	assert_int_equal(ts_state_placement_devices(AT_FDCWD, dir, "c1", &names), 1);
	assert_string_equal(names, "a.com/b=c,a.com/b=d");
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 1);
	assert_string_equal(got.devices, "a.com/b=c,a.com/b=d");
	ts_state_placement_release(&got);
	/* another container's file, or devices that are not names: none */
	assert_int_equal(ts_state_placement_devices(fd, ".", "c2", &none), 0);
	assert_int_equal(th_write(dir, "toposhim-placement.json",
				  "{\"version\":1,\"id\":\"c1\",\"devices\":[1]}"),
			 0);
	assert_int_equal(ts_state_placement_devices(fd, ".", "c1", &none), 0);
	/* devices only (placement off): the devices, never a placement */
	p = (struct ts_state_placement){.container_id = id, .devices = devs};
	assert_int_equal(ts_state_placement_write(fd, &p, &err), 0);
	free(TAKE_PTR(names));
	assert_int_equal(ts_state_placement_devices(fd, ".", "c1", &names), 1);
	assert_string_equal(names, "a.com/b=c,a.com/b=d");
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 0);
	assert_null(none);
	close(fd);
}

/* "resources_written" goes out and comes back as it was given; an empty
 * array is not written; one that is no array reads as none. */
static void test_placement_resources_written(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *dir = NULL, *back = NULL;
	cleanup_json struct ts_json *written = NULL;
	struct ts_state_placement p = {0}, got = {0};
	char id[] = "c1", cls[] = "critical", cpus[] = "1", mems[] = "0";
	const char *entries = "[{\"pointer\":\"/linux/resources/cpu/shares\",\"before\":2,"
			      "\"after\":10240}]";
	size_t len = 0;
	int fd;

	assert_true(asprintf(&dir, "%s/b", f->top) > 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	fd = open(dir, O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(ts_json_parse(entries, strlen(entries), "t", &written, &err), 0);
	p = (struct ts_state_placement){.container_id = id,
					.class_name = cls,
					.cpus_str = cpus,
					.mems_str = mems,
					.cpus_written = true,
					.resources_written = written};
	assert_int_equal(ts_state_placement_write(fd, &p, &err), 0);
	text = read_file_in(dir, "toposhim-placement.json");
	assert_string_equal(text,
			    "{\"version\":1,\"id\":\"c1\",\"class\":\"critical\",\"cpus\":\"1\","
			    "\"mems\":\"0\",\"cpus_written\":true,\"pinned\":false,"
			    "\"numa_exclusive\":false,\"resources_written\":[{\"pointer\":"
			    "\"/linux/resources/cpu/shares\",\"before\":2,\"after\":10240}]}");
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 1);
	assert_non_null(got.resources_written);
	assert_int_equal(ts_json_serialize(got.resources_written, false, &back, &len, &err), 0);
	assert_string_equal(back, entries);
	ts_state_placement_release(&got);
	/* nothing written: no member */
	p.resources_written = ts_json_new_array();
	assert_int_equal(ts_state_placement_write(fd, &p, &err), 0);
	ts_json_free(p.resources_written);
	free(TAKE_PTR(text));
	text = read_file_in(dir, "toposhim-placement.json");
	assert_null(strstr(text, "resources_written"));
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 1);
	assert_null(got.resources_written);
	ts_state_placement_release(&got);
	/* not an array: none, the rest of the file stands */
	assert_int_equal(
		th_write(dir, "toposhim-placement.json",
			 "{\"version\":1,\"id\":\"c1\",\"class\":\"critical\",\"cpus\":\"1\","
			 "\"mems\":\"0\",\"resources_written\":{}}"),
		0);
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 1);
	assert_null(got.resources_written);
	assert_string_equal(got.cpus_str, "1");
	ts_state_placement_release(&got);
	close(fd);
}

/* A pin from outside goes into "pinned_cpus" of the container's own file
 * only (id and store), the rest kept; an empty or invalid one reads as no
 * placement file. */
static void test_placement_pin(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *dir = NULL, *missing = NULL;
	struct ts_state_placement p = {0}, got = {0};
	char id[] = "c1", cls[] = "standard", cpus[] = "1", mems[] = "0", sd[] = "/run/s";
	const char *expected =
		"{\"version\":1,\"id\":\"c1\",\"class\":\"standard\",\"cpus\":\"1\","
		"\"mems\":\"0\",\"cpus_written\":true,\"pinned\":false,"
		"\"numa_exclusive\":false,\"state_dir\":\"/run/s\",\"pinned_cpus\":\"0\"}";
	int fd;

	assert_true(asprintf(&dir, "%s/b", f->top) > 0);
	assert_true(asprintf(&missing, "%s/none", f->top) > 0);
	assert_int_equal(mkdir(dir, 0755), 0);
	fd = open(dir, O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* no bundle, no file: nothing */
	assert_int_equal(ts_state_placement_pin(missing, "c1", sd, "0", &err), 0);
	assert_int_equal(ts_state_placement_pin(dir, "c1", sd, "0", &err), 0);
	p = (struct ts_state_placement){.container_id = id,
					.class_name = cls,
					.cpus_str = cpus,
					.mems_str = mems,
					.state_dir = sd,
					.cpus_written = true};
	assert_int_equal(ts_state_placement_write(fd, &p, &err), 0);
	/* another container's, another store's: left alone */
	assert_int_equal(ts_state_placement_pin(dir, "c2", sd, "0", &err), 0);
	assert_int_equal(ts_state_placement_pin(dir, "c1", "/run/other", "0", &err), 0);
	text = read_file_in(dir, "toposhim-placement.json");
	assert_null(strstr(text, "pinned_cpus"));
	assert_int_equal(ts_state_placement_pin(dir, "c1", sd, "0", &err), 1);
	free(TAKE_PTR(text));
	text = read_file_in(dir, "toposhim-placement.json");
	assert_string_equal(text, expected);
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 1);
	assert_string_equal(got.pinned_cpus, "0");
	assert_string_equal(got.cpus_str, "1");
	assert_false(got.pinned);
	ts_state_placement_release(&got);
	/* again, the same: 1, the file as it was */
	assert_int_equal(ts_state_placement_pin(dir, "c1", NULL, "0", &err), 1);
	free(TAKE_PTR(text));
	text = read_file_in(dir, "toposhim-placement.json");
	assert_string_equal(text, expected);
	/* unpinned (NULL): no "pinned_cpus", "pinned" false, the rest kept */
	p.pinned = true;
	assert_int_equal(ts_state_placement_write(fd, &p, &err), 0);
	assert_int_equal(ts_state_placement_pin(dir, "c1", sd, "0", &err), 1);
	assert_int_equal(ts_state_placement_pin(dir, "c1", sd, NULL, &err), 1);
	free(TAKE_PTR(text));
	text = read_file_in(dir, "toposhim-placement.json");
	assert_string_equal(text,
			    "{\"version\":1,\"id\":\"c1\",\"class\":\"standard\",\"cpus\":\"1\","
			    "\"mems\":\"0\",\"cpus_written\":true,\"pinned\":false,"
			    "\"numa_exclusive\":false,\"state_dir\":\"/run/s\"}");
	assert_int_equal(ts_state_placement_pin(dir, "c1", sd, NULL, &err), 1);
	assert_int_equal(ts_state_placement_pin(dir, "c1", sd, "0", &err), 1);
	/* empty or not a cpulist: not a sound file */
	assert_int_equal(
		th_write(dir, "toposhim-placement.json",
			 "{\"version\":1,\"id\":\"c1\",\"class\":\"standard\",\"cpus\":\"1\","
			 "\"mems\":\"0\",\"pinned_cpus\":\"\"}"),
		0);
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 0);
	assert_int_equal(
		th_write(dir, "toposhim-placement.json",
			 "{\"version\":1,\"id\":\"c1\",\"class\":\"standard\",\"cpus\":\"1\","
			 "\"mems\":\"0\",\"pinned_cpus\":\"0-x\"}"),
		0);
	assert_int_equal(ts_state_placement_read(fd, ".", &got), 0);
	assert_int_equal(ts_state_placement_pin(dir, "c1", sd, "0", &err), 0);
	close(fd);
}

/* Encode v (n records), the first known of them known unique: refused
 * with want, or (want NULL) written. */
static void encode_known(struct ts_alloc *const *v, size_t n, size_t known, const char *want)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r = ts_state_format_encode_from(v, n, "s/allocations.json", NULL, 0, NULL, known, &buf,
					    &len, &err);

	if (want == NULL) {
		assert_int_equal(r, 0);
		return;
	}
	assert_int_equal(r, -EINVAL);
	assert_string_equal(err->msg, want);
}

/* The encoder refuses empty and duplicate container ids, naming the later
 * record of a duplicate pair. */
static void test_encode_refuses_bad_ids(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	struct ts_alloc *v[4];
	const char *ids[] = {"b", "a", "c", "a"};
	size_t len = 0;

	for (size_t i = 0; i < 4; i++) {
		v[i] = ts_alloc_new(ids[i], &err);
		assert_non_null(v[i]);
	}
	assert_int_equal(ts_state_format_encode(v, 3, "s/allocations.json", &buf, &len, &err), 0);
	free(TAKE_PTR(buf));
	assert_int_equal(ts_state_format_encode(v, 4, "s/allocations.json", &buf, &len, &err),
			 -EINVAL);
	assert_string_equal(err->msg, "s/allocations.json: '/allocations/3/container_id': "
				      "duplicate 'a'");
	ts_error_clear(&err);
	/* the same when the first 3 are known unique (a commit that appends
	 * compares the new records alone) */
	encode_known(v, 4, 3, "s/allocations.json: '/allocations/3/container_id': duplicate 'a'");
	/* under another runtime root the same id is another container */
	free(v[3]->runtime_root);
	v[3]->runtime_root = strdup("/run/crun");
	encode_known(v, 4, 3, NULL);
	/* two new records that are the same container */
	free(v[3]->container_id);
	v[3]->container_id = strdup("c");
	free(v[3]->runtime_root);
	v[3]->runtime_root = NULL;
	encode_known(v, 4, 3, "s/allocations.json: '/allocations/3/container_id': duplicate 'c'");
	/* v[2] and v[3] both new */
	encode_known(v, 4, 2, "s/allocations.json: '/allocations/3/container_id': duplicate 'c'");
	free(v[2]->container_id);
	v[2]->container_id = strdup("");
	assert_int_equal(ts_state_format_encode(v, 4, "s/allocations.json", &buf, &len, &err),
			 -EINVAL);
	assert_string_equal(err->msg, "s/allocations.json: '/allocations/2/container_id': empty");
	for (size_t i = 0; i < 4; i++)
		ts_alloc_free(v[i]);
}

/* A record with bad values (a cpu list that does not parse, a pid out of
 * range, an unknown state, devices that are not strings) makes the file
 * untrusted, but its container is alive (runtime dir): the record is kept
 * with the bad members left out, and the cpus, mems and class it lost come
 * back from its bundle's config.json.  Nothing is left that would fail the
 * next create. */
static void test_salvage_from_bundle(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *warning = NULL, *want = NULL, *bundle = NULL;
	const struct ts_alloc *a;

	assert_true(asprintf(&bundle, "%s/bundle", f->runtime) > 0);
	assert_int_equal(th_write(f->runtime, "bundle/config.json",
				  "{\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"1,17\", "
				  "\"mems\": \"0\"}}}, \"annotations\": {\"toposhim.io/class\": "
				  "\"critical\"}}"),
			 0);
	assert_int_equal(th_write(f->runtime, "keep2/state.json", "{}"), 0);
	assert_true(asprintf(&text,
			     "{\"version\": 1, \"checksum\": \"fnv1a64:0\", \"allocations\": "
			     "[{\"container_id\": \"keep2\", \"runtime_root\": \"%s\", "
			     "\"bundle\": \"%s\", \"class\": 7, \"cpus\": \"8-0\", \"mems\": "
			     "\"0-\", \"devices\": [1], \"pinned\": false, \"state\": \"zombie\", "
			     "\"created_usec\": 5, \"pid\": -1}]}",
			     f->runtime, bundle) > 0);
	write_alloc_file(f, text);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	assert_true(asprintf(&want,
			     "%s/allocations.json: '/allocations/0/class': expected string, got "
			     "number: store rebuilt from live containers, kept 1 of 1 allocations",
			     f->sdir) > 0);
	assert_string_equal(warning, want);
	a = ts_state_at(s, 0);
	assert_non_null(a);
	assert_string_equal(a->container_id, "keep2");
	assert_string_equal(a->cpus_str, "1,17");
	assert_string_equal(a->mems_str, "0");
	assert_string_equal(a->class_name, "critical");
	assert_int_equal(a->status, TS_ALLOC_CREATED);
	assert_int_equal(a->pid, 0);
	/* written back sound, and loads without a warning */
	assert_int_equal(ts_state_commit(s, &err), 0);
	free(TAKE_PTR(warning));
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_string_equal(ts_state_at(s, 0)->cpus_str, "1,17");
	/* with a placement file whose container was pinned from outside since
	 * its create: the pinned cpus, pinned, over its "cpus" */
	assert_int_equal(th_write(f->runtime, "bundle/toposhim-placement.json",
				  "{\"version\": 1, \"id\": \"keep2\", \"class\": \"standard\", "
				  "\"cpus\": \"1\", \"mems\": \"0\", \"pinned\": false, "
				  "\"pinned_cpus\": \"17\"}"),
			 0);
	write_alloc_file(f, text);
	free(TAKE_PTR(warning));
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_non_null(warning);
	a = ts_state_at(s, 0);
	assert_non_null(a);
	assert_string_equal(a->cpus_str, "17");
	assert_string_equal(a->class_name, "standard");
	assert_true(a->pinned);
}

/* A file damaged beyond parsing, no previous copy: the records come back
 * from the runtime's own state.  The root is the one the (salvageable)
 * record of "known" names; runc keeps "bundle=<dir>" in state.json labels,
 * crun "bundle" in status.  Only containers whose bundle holds a placement
 * file (toposhim-placement.json) for their id are adopted, with what it
 * says; config.json is not read (it carries no bookkeeping of toposhim's). */
static void test_adopt_from_runtime_state(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *warning = NULL, *lbl = NULL, *st = NULL, *lbl5 = NULL;
	const struct ts_alloc *a;

	/* runc-style, critical, numa exclusive */
	assert_true(asprintf(&lbl, "{\"config\": {\"labels\": [\"x=y\", \"bundle=%s/b1\"]}}",
			     f->top) > 0);
	assert_int_equal(th_write(f->runtime, "c1/state.json", lbl), 0);
	assert_int_equal(th_write(f->top, "b1/toposhim-placement.json",
				  "{\"version\": 1, \"id\": \"c1\", \"class\": \"critical\", "
				  "\"cpus\": \"0-7\", \"mems\": \"0\", \"cpus_written\": true, "
				  "\"pinned\": false, \"numa_exclusive\": true, \"devices\": "
				  "[\"vendor.com/gpu=0\", \"vendor.com/nic=eth1\"]}"),
			 0);
	/* crun-style, standard, pinned by the user */
	assert_true(asprintf(&st,
			     "{\"pid\": 300, \"process-start-time\": 5000, \"bundle\": "
			     "\"%s/b2\"}",
			     f->top) > 0);
	/* its init runs: the rebuild learns it and its cgroup */
	assert_int_equal(th_fake_proc(f->proc, 300, "sleep", 'S', 5000), 0);
	assert_int_equal(th_write(f->proc, "300/cgroup", "0::/kubepods/c2\n"), 0);
	assert_int_equal(th_write(f->runtime, "c2/status", st), 0);
	{
		cleanup_free char *b2 = NULL;

		/* naming this store: adopted */
		assert_true(asprintf(&b2,
				     "{\"version\": 1, \"id\": \"c2\", \"class\": \"standard\", "
				     "\"cpus\": \"9\", \"mems\": \"\", \"cpus_written\": false, "
				     "\"pinned\": true, \"numa_exclusive\": false, \"state_dir\": "
				     "\"%s\"}",
				     f->sdir) > 0);
		assert_int_equal(th_write(f->top, "b2/toposhim-placement.json", b2), 0);
	}
	/* naming another store (a node or test sharing the runtime root):
	 * not adopted */
	{
		cleanup_free char *lbl6 = NULL;

		assert_true(asprintf(&lbl6, "{\"config\": {\"labels\": [\"bundle=%s/b6\"]}}",
				     f->top) > 0);
		assert_int_equal(th_write(f->runtime, "c6/state.json", lbl6), 0);
		assert_int_equal(
			th_write(f->top, "b6/toposhim-placement.json",
				 "{\"version\": 1, \"id\": \"c6\", \"class\": "
				 "\"critical\", \"cpus\": \"3\", \"mems\": \"\", "
				 "\"cpus_written\": true, \"pinned\": false, "
				 "\"numa_exclusive\": false, \"state_dir\": \"/other/store\"}"),
			0);
	}
	/* the placement file of another container in a bundle: not adopted */
	assert_true(asprintf(&lbl5, "{\"config\": {\"labels\": [\"bundle=%s/b1\"]}}", f->top) > 0);
	assert_int_equal(th_write(f->runtime, "c5/state.json", lbl5), 0);
	/* a container toposhim did not place, and one without a bundle */
	assert_int_equal(th_write(f->runtime, "c3/state.json",
				  "{\"config\": {\"labels\": [\"bundle=/nonexistent\"]}}"),
			 0);
	assert_int_equal(th_write(f->runtime, "c4/state.json", "{}"), 0);
	assert_int_equal(th_write(f->runtime, "known/state.json", "{}"), 0);
	/* the file: one readable record naming the root, then garbage */
	assert_true(asprintf(&text,
			     "{\"version\": 1, \"checksum\": \"x\", \"allocations\": "
			     "[{\"container_id\": \"known\", \"runtime_root\": \"%s\", "
			     "\"state\": \"created\", \"created_usec\": 1, \"cpus\": \"8\"}]}",
			     f->runtime) > 0);
	write_alloc_file(f, text);

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	/* (the computed checksum is that of the one readable record) */
	assert_non_null(strstr(warning, "/allocations.json: checksum mismatch (stored 'x', "));
	assert_string_equal(strstr(warning, "): store"),
			    "): store rebuilt from live containers, kept 3 of 3 allocations (2 "
			    "found in the runtime state)");
	assert_int_equal(ts_state_count(s), 3);
	a = ts_state_find(s, f->runtime, "c1");
	assert_non_null(a);
	assert_string_equal(a->class_name, "critical");
	assert_string_equal(a->cpus_str, "0-7");
	assert_string_equal(a->mems_str, "0");
	assert_false(a->pinned);
	assert_true(a->numa_exclusive);
	assert_string_equal(a->runtime_root, f->runtime);
	assert_non_null(a->devices);
	assert_string_equal(a->devices[0], "vendor.com/gpu=0");
	assert_string_equal(a->devices[1], "vendor.com/nic=eth1");
	assert_null(a->devices[2]);
	assert_int_equal(a->pid, 0);
	a = ts_state_find(s, f->runtime, "c2");
	assert_non_null(a);
	assert_string_equal(a->class_name, "standard");
	assert_string_equal(a->cpus_str, "9");
	assert_true(a->pinned);
	assert_false(a->numa_exclusive);
	assert_null(a->devices);
	assert_int_equal(a->pid, 300);
	assert_int_equal(a->pid_start_ticks, 5000);
	assert_string_equal(a->cgroup_path, "/kubepods/c2");
	assert_null(ts_state_find(s, f->runtime, "c3"));
	assert_null(ts_state_find(s, f->runtime, "c4"));
	assert_null(ts_state_find(s, f->runtime, "c5"));
	assert_null(ts_state_find(s, f->runtime, "c6"));
}

/* helper-8: the whole state dir removed (nothing tells the lost store from
 * a new one): with the command's runtime root, a new store adopts the
 * containers toposhim placed there for this store, and says so; without
 * any, it is a new store, silently. */
static void test_new_store_adopts_from_runtime_root(void **state)
{
	struct fixture *f = *state;
	struct ts_state_options opts = f->opts;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *lbl = NULL, *placement = NULL, *warning = NULL, *want = NULL;

	/* a runtime root without toposhim's containers: a new store */
	opts.runtime_root = f->runtime;
	assert_int_equal(ts_state_open(&opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 0);
	s = ts_state_close(s);

	assert_true(asprintf(&lbl, "{\"config\": {\"labels\": [\"bundle=%s/b1\"]}}", f->top) > 0);
	assert_int_equal(th_write(f->runtime, "c1/state.json", lbl), 0);
	assert_true(asprintf(&placement,
			     "{\"version\": 1, \"id\": \"c1\", \"class\": \"critical\", "
			     "\"cpus\": \"1\", \"mems\": \"0\", \"cpus_written\": true, "
			     "\"pinned\": false, \"numa_exclusive\": false, \"state_dir\": \"%s\"}",
			     f->sdir) > 0);
	assert_int_equal(th_write(f->top, "b1/toposhim-placement.json", placement), 0);
	/* without the root (a reader, a delete): nothing looked at */
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 0);
	s = ts_state_close(s);
	/* with it: rebuilt */
	assert_int_equal(ts_state_open(&opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_true(asprintf(&want,
			     "%s/allocations.json: missing, as is everything else of the store: "
			     "store rebuilt from live containers, kept 1 of 1 allocations (1 found "
			     "in the runtime state)",
			     f->sdir) > 0);
	assert_non_null(warning);
	assert_string_equal(warning, want);
	assert_non_null(ts_state_find(s, f->runtime, "c1"));
	assert_string_equal(ts_state_find(s, f->runtime, "c1")->cpus_str, "1");
}

/* Nothing of the file survives and there is no previous copy: the runtime
 * roots file, kept at every commit, still says where to look. */
static void test_adopt_with_nothing_left(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *lbl = NULL, *roots = NULL, *path = NULL, *want = NULL, *warning = NULL;
	const struct ts_alloc *a;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	put_sample(s, f->runtime);
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_true(asprintf(&path, "%s/runtime-roots", f->sdir) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &roots, NULL, &err), 0);
	assert_true(asprintf(&want, "%s\n", f->runtime) > 0);
	assert_string_equal(roots, want);
	/* the same root again: the file is not rewritten with a duplicate */
	assert_int_equal(ts_state_remove(s, f->runtime, "web-1", NULL), 1);
	assert_int_equal(ts_state_commit(s, &err), 0);
	free(TAKE_PTR(roots));
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &roots, NULL, &err), 0);
	assert_string_equal(roots, want);
	s = ts_state_close(s);

	assert_true(asprintf(&lbl, "{\"config\": {\"labels\": [\"bundle=%s/b1\"]}}", f->top) > 0);
	assert_int_equal(th_write(f->runtime, "c1/state.json", lbl), 0);
	assert_int_equal(th_write(f->top, "b1/toposhim-placement.json",
				  "{\"version\": 1, \"id\": \"c1\", \"class\": \"critical\", "
				  "\"cpus\": \"3\", \"mems\": \"0\", \"cpus_written\": true, "
				  "\"pinned\": false, \"numa_exclusive\": false}"),
			 0);
	write_alloc_file(f, "x");
	{
		cleanup_free char *prev = NULL;
		assert_true(asprintf(&prev, "%s/allocations.json.prev", f->sdir) > 0);
		unlink(prev);
	}
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	assert_non_null(strstr(warning, "): store rebuilt from live containers, kept 1 of 1 "
					"allocations (1 found in the runtime state)"));
	a = ts_state_find(s, f->runtime, "c1");
	assert_non_null(a);
	assert_string_equal(a->cpus_str, "3");
	assert_string_equal(a->class_name, "critical");
	assert_false(a->pinned);
}

/* Reference FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3). */
static uint64_t fnv1a64(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* A copy of text with the first token replaced by value; caller frees. */
static char *subst(const char *text, const char *token, const char *value)
{
	const char *at = strstr(text, token);
	char *out = NULL;

	if (at == NULL)
		out = strdup(text);
	else
		assert_true(asprintf(&out, "%.*s%s%s", (int)(at - text), text, value,
				     at + strlen(token)) > 0);
	assert_non_null(out);
	return out;
}

static void test_bad_records_and_versions(void **state)
{
	static const struct {
		const char *text, *problem;
	} rows[] = {
		{"[]", "'/': expected object, got array"},
		{"{\"version\": 1, \"checksum\": \"x\"}",
		 "'/allocations': missing or not an array"},
		{"{\"version\": 2, \"checksum\": \"fnv1a64:09612b07b5ecb5a5\", \"allocations\": "
		 "[]}",
		 "'/version': unsupported version '2'"},
		{"{\"version\": \"1\", \"checksum\": \"fnv1a64:09612b07b5ecb5a5\", "
		 "\"allocations\": []}",
		 "'/version': missing or not an integer"},
		/* one record has a member not understood: the file is untrusted,
		 * both records are salvaged (their containers are alive) */
		{"{\"version\": 1, \"checksum\": \"fnv1a64:0\", \"allocations\": @A@}",
		 "'/allocations/0/color': unknown member"},
		/* "b" twice under one root: the first is kept, the second dropped */
		{"{\"version\": 1, \"checksum\": \"fnv1a64:0\", \"allocations\": @B@}",
		 "'/allocations/2/container_id': duplicate 'b'"},
	};
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *arr = NULL, *dup = NULL;

	assert_true(asprintf(&dup,
			     "[{\"container_id\":\"b\",\"runtime_root\":\"%s\",\"state\":"
			     "\"creating\",\"created_usec\":5},{\"container_id\":\"a\","
			     "\"runtime_root\":\"%s\",\"state\":\"creating\",\"created_usec\":5},"
			     "{\"container_id\":\"b\",\"runtime_root\":\"%s\",\"state\":"
			     "\"creating\",\"created_usec\":5}]",
			     f->runtime, f->runtime, f->runtime) > 0);
	assert_true(
		asprintf(&arr,
			 "[{\"container_id\":\"a\",\"runtime_root\":\"%s\",\"state\":\"created\","
			 "\"created_usec\":5,\"color\":\"red\"},{\"container_id\":\"b\","
			 "\"runtime_root\":\"%s\",\"state\":\"creating\",\"created_usec\":5}]",
			 f->runtime, f->runtime) > 0);
	/* "a" and "b" have runtime dirs: alive whenever their record is readable */
	assert_int_equal(th_write(f->runtime, "a/state.json", "{}"), 0);
	assert_int_equal(th_write(f->runtime, "b/state.json", "{}"), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_free char *text = NULL, *warning = NULL, *want = NULL;

		text = subst(rows[i].text, i == 5 ? "@B@" : "@A@", i == 5 ? dup : arr);
		write_alloc_file(f, text);
		warning = load_warn(s);
		assert_true(asprintf(&want,
				     "%s/allocations.json: %s: store rebuilt from live containers, "
				     "kept %d of %d allocations",
				     f->sdir, rows[i].problem, i >= 4 ? 2 : 0, i >= 4 ? 2 : 0) > 0);
		assert_string_equal(warning, want);
		if (i == 4) {
			/* "a" without its unknown member */
			assert_int_equal(ts_state_count(s), 2);
			assert_string_equal(ts_state_at(s, 0)->container_id, "a");
			assert_int_equal(ts_state_at(s, 0)->status, TS_ALLOC_CREATED);
			assert_string_equal(ts_state_at(s, 1)->container_id, "b");
		}
	}
	/* the first "b" (with its runtime dir) is the one kept */
	assert_int_equal(ts_state_count(s), 2);
	assert_string_equal(ts_state_at(s, 0)->container_id, "b");
	assert_string_equal(ts_state_at(s, 0)->runtime_root, f->runtime);
	assert_string_equal(ts_state_at(s, 1)->container_id, "a");
}

/* The text of a two-record allocations.json stating checksum, the records
 * a (no root, no pid) and b (a pid, devices, a multi-byte UTF-8 class),
 * in that order or (swap) the other; caller frees. */
static char *two_records(const char *runtime, const char *checksum, bool swap)
{
	cleanup_free char *ra = NULL, *rb = NULL;
	char *text = NULL;

	ra = strdup("{\"container_id\":\"a\",\"cpus\":\"\",\"mems\":\"\",\"devices\":[],"
		    "\"pinned\":false,\"numa_exclusive\":false,\"state\":\"creating\","
		    "\"created_usec\":5}");
	assert_true(
		asprintf(&rb,
			 "{\"container_id\":\"b\",\"runtime_root\":\"%s\",\"class\":\"\\u00e9\","
			 "\"cpus\":\"1-2\",\"mems\":\"0\",\"devices\":[\"v.c/x\",\"v.c/y=1\"],"
			 "\"pinned\":true,\"numa_exclusive\":false,\"state\":\"created\","
			 "\"created_usec\":17,\"pid\":42,\"pid_start_ticks\":900,"
			 "\"cgroup_path\":\"/ab\"}",
			 runtime) > 0);
	assert_non_null(ra);
	assert_true(asprintf(&text, "{\"version\":1,\"checksum\":\"%s\",\"allocations\":[%s,%s]}",
			     checksum, swap ? rb : ra, swap ? ra : rb) > 0);
	return text;
}

/* The checksum of state.h, from the canonical stream built here by hand:
 * the sum of each record's FNV-1a, whatever the records' order; the
 * chained hash of the files of before 2026-12-06 is still verified; a sum
 * that leaves a record out is a mismatch. */
static void test_checksum_definition(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *stream_a = NULL, *stream_b = NULL, *both = NULL;
	cleanup_free char *sum = NULL, *chained = NULL, *part = NULL, *want = NULL;
	char *warning = NULL;
	struct {
		const char *checksum;
		bool swap;
	} sound[3];

	stream_a = strdup("container_id:1:a;cpus:0:;mems:0:;devices:1:0;pinned:5:false;"
			  "numa_exclusive:5:false;state:8:creating;created_usec:1:5;\n");
	assert_non_null(stream_a);
	assert_true(asprintf(&stream_b,
			     "container_id:1:b;runtime_root:%zu:%s;class:2:\xc3\xa9;cpus:3:1-2;"
			     "mems:1:0;devices:1:2;device:5:v.c/x;device:7:v.c/y=1;pinned:4:true;"
			     "numa_exclusive:5:false;state:7:created;created_usec:2:17;pid:2:42;"
			     "pid_start_ticks:3:900;cgroup_path:3:/ab;\n",
			     strlen(f->runtime), f->runtime) > 0);
	assert_true(asprintf(&both, "%s%s", stream_a, stream_b) > 0);
	assert_true(asprintf(&sum, "fnv1a64-sum:%016llx",
			     (unsigned long long)(fnv1a64(stream_a) + fnv1a64(stream_b))) > 0);
	assert_true(asprintf(&chained, "fnv1a64:%016llx", (unsigned long long)fnv1a64(both)) > 0);
	assert_true(asprintf(&part, "fnv1a64-sum:%016llx", (unsigned long long)fnv1a64(stream_b)) >
		    0);
	sound[0].checksum = sum;
	sound[0].swap = false;
	sound[1].checksum = sum;
	sound[1].swap = true;
	sound[2].checksum = chained;
	sound[2].swap = false;
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	for (size_t i = 0; i < ARRAY_SIZE(sound); i++) {
		cleanup_free char *text = two_records(f->runtime, sound[i].checksum, sound[i].swap);

		write_alloc_file(f, text);
		assert_int_equal(ts_state_load(s, &warning, &err), 0);
		assert_null(warning);
		assert_int_equal(ts_state_count(s), 2);
		assert_string_equal(ts_state_find(s, f->runtime, "b")->class_name, "\xc3\xa9");
		assert_true(ts_state_checksum(s->allocs, 2) ==
			    fnv1a64(stream_a) + fnv1a64(stream_b));
	}
	{
		cleanup_free char *text = two_records(f->runtime, part, false);

		write_alloc_file(f, text);
		warning = load_warn(s);
		assert_true(
			asprintf(&want,
				 "%s/allocations.json: checksum mismatch (stored '%s', computed "
				 "'%s'): store rebuilt from live containers, kept 0 of 2 "
				 "allocations",
				 f->sdir, part, sum) > 0);
		assert_string_equal(warning, want);
		free(warning);
	}
}

/* The compact file of 2026-12-05 (the chained checksum) loads sound: its
 * records carry their texts and hashes, a commit copies them and states
 * their sum; a wrong chained checksum is named in its own form. */
static void test_chained_checksum_still_read(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *old = subst(expected_file, SAMPLE_SUM, SAMPLE_CHAINED);
	cleanup_free char *text = NULL, *tampered = NULL, *warning = NULL, *want = NULL;
	char *w = NULL;

	write_alloc_file(f, old);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &w, &err), 0);
	assert_null(w);
	assert_int_equal(ts_state_count(s), 2);
	for (size_t i = 0; i < 2; i++) {
		assert_true(ts_state_at(s, i)->text_len > 0);
		assert_true(ts_state_at(s, i)->text_sum == ts_state_record_hash(ts_state_at(s, i)));
	}
	/* a change that leaves both records as they were read */
	assert_int_equal(ts_state_put(s, ts_alloc_new("c", &err), &err), 0);
	assert_int_equal(ts_state_remove(s, NULL, "c", NULL), 1);
	assert_int_equal(ts_state_commit(s, &err), 0);
	text = read_alloc_file(f);
	assert_string_equal(text, expected_file);
	s = ts_state_close(s);

	/* the rebuild tests' root: "batch" is dropped, web-1's pid lives */
	free(old);
	old = NULL;
	{
		cleanup_free char *noroot = NULL;

		assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
		put_sample(s, NO_RUNTIME_ROOT);
		assert_int_equal(ts_state_commit(s, &err), 0);
		s = ts_state_close(s);
		noroot = read_alloc_file(f);
		old = subst(noroot, NO_ROOT_SUM, NO_ROOT_CHAINED);
	}
	tampered = subst(old, "2-3,10", "0-3,10");
	write_alloc_file(f, tampered);
	{
		cleanup_free char *prev = NULL;

		/* (the earlier commits' copy would add its records) */
		assert_true(asprintf(&prev, "%s/allocations.json.prev", f->sdir) > 0);
		assert_int_equal(unlink(prev), 0);
	}
	assert_int_equal(th_fake_proc(f->proc, 31337, "sh", 'S', 18446744073709551615ull), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	assert_true(asprintf(&want,
			     "%s/allocations.json: checksum mismatch (stored '%s', computed '%s'): "
			     "store rebuilt from live containers, kept 1 of 2 allocations",
			     f->sdir, NO_ROOT_CHAINED, NO_ROOT_TAMPERED_CHAINED) > 0);
	assert_string_equal(warning, want);
}

static void test_put_replace_remove(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_alloc struct ts_alloc *removed = NULL;
	struct ts_alloc *a;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_put(s, ts_alloc_new("x", &err), &err), 0);
	assert_int_equal(ts_state_put(s, ts_alloc_new("y", &err), &err), 0);
	a = ts_alloc_new("x", &err);
	assert_non_null(a);
	a->cpus_str = strdup("5");
	assert_int_equal(ts_state_put(s, a, &err), 0);
	/* replaced in place: order kept */
	assert_int_equal(ts_state_count(s), 2);
	assert_ptr_equal(ts_state_at(s, 0), a);
	assert_string_equal(ts_state_find(s, NULL, "x")->cpus_str, "5");
	assert_int_equal(ts_state_remove(s, NULL, "x", &removed), 1);
	assert_ptr_equal(removed, a);
	assert_int_equal(ts_state_remove(s, NULL, "x", NULL), 0);
	assert_int_equal(ts_state_count(s), 1);
	assert_string_equal(ts_state_at(s, 0)->container_id, "y");
	assert_null(ts_state_at(s, 1));

	/* one id under two runtime roots is two containers (containerd's
	 * "k8s.io" and "default" namespaces): each found, replaced and
	 * removed on its own */
	for (int i = 0; i < 2; i++) {
		a = ts_alloc_new("same", &err);
		assert_non_null(a);
		a->runtime_root = strdup(i == 0 ? "/run/containerd/runc/k8s.io"
						: "/run/containerd/runc/default");
		a->cpus_str = strdup(i == 0 ? "1" : "2");
		assert_int_equal(ts_state_put(s, a, &err), 0);
	}
	assert_int_equal(ts_state_count(s), 3);
	assert_string_equal(ts_state_find(s, "/run/containerd/runc/k8s.io", "same")->cpus_str, "1");
	assert_string_equal(ts_state_find(s, "/run/containerd/runc/default", "same")->cpus_str,
			    "2");
	assert_null(ts_state_find(s, NULL, "same"));
	assert_int_equal(ts_state_remove(s, "/run/containerd/runc/k8s.io", "same", NULL), 1);
	assert_null(ts_state_find(s, "/run/containerd/runc/k8s.io", "same"));
	assert_string_equal(ts_state_find(s, "/run/containerd/runc/default", "same")->cpus_str,
			    "2");
	/* and both go through a commit and a load (no duplicate) */
	a = ts_alloc_new("same", &err);
	a->runtime_root = strdup("/run/containerd/runc/k8s.io");
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	{
		char *warning = NULL;

		assert_int_equal(ts_state_load(s, &warning, &err), 0);
		assert_null(warning);
		assert_int_equal(ts_state_count(s), 3);
	}
	assert_int_equal(ts_state_put(s, NULL, &err), -EINVAL);
	assert_string_equal(err->msg, "allocation: empty container id");
	ts_error_clear(&err);
	assert_null(ts_alloc_new("", &err));
	assert_string_equal(err->msg, "allocation: empty container id");
}

/* The settle's mark (state.h): equal while nothing is written, different
 * after a commit (even one writing the same bytes' length), a release and
 * a plain container's journal line; a missing file is marked missing. */
static void test_mark(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_state_mark m0, m1, m2;
	struct ts_alloc *a;
	char *warning = NULL;
	int fd;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	fd = ts_state_dir_fd(s);
	/* a new store: no file yet */
	assert_int_equal(ts_state_mark_at(fd, &m0), 0);
	assert_false(m0.files[0].exists);
	assert_false(m0.files[1].exists);
	assert_false(m0.files[2].exists);
	assert_int_equal(m0.head_len, 0);

	a = ts_alloc_new("x", &err);
	assert_non_null(a);
	a->cpus_str = strdup("1");
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(ts_state_mark_at(fd, &m1), 0);
	assert_true(m1.files[0].exists);
	assert_int_equal(m1.head_len, 64);
	assert_memory_equal(m1.head, "{\"version\":1,\"checksum\":\"fnv1a64-sum:", 37);
	assert_false(ts_state_mark_equal(&m0, &m1));
	assert_int_equal(ts_state_mark_at(fd, &m2), 0);
	assert_true(ts_state_mark_equal(&m1, &m2));

	/* another record of the same length: the checksum tells them apart
	 * even if the file's times did not move */
	a = ts_alloc_new("x", &err);
	assert_non_null(a);
	a->cpus_str = strdup("2");
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(ts_state_mark_at(fd, &m2), 0);
	assert_int_equal(m2.files[0].size, m1.files[0].size);
	assert_false(ts_state_mark_equal(&m1, &m2));
	m1.files[0] = m2.files[0];
	assert_false(ts_state_mark_equal(&m1, &m2)); /* the head alone */

	/* a release */
	assert_int_equal(ts_state_mark_at(fd, &m1), 0);
	ts_state_released_add(s, "x", "2");
	assert_int_equal(ts_state_mark_at(fd, &m2), 0);
	assert_true(m2.files[1].exists);
	assert_false(ts_state_mark_equal(&m1, &m2));

	/* a plain create's journal line (written by the front, no lock) */
	assert_int_equal(ts_state_mark_at(fd, &m1), 0);
	assert_int_equal(th_write(f->sdir, "plain-containers", "{}\n"), 0);
	assert_int_equal(ts_state_mark_at(fd, &m2), 0);
	assert_true(m2.files[2].exists);
	assert_false(ts_state_mark_equal(&m1, &m2));

	/* not a directory: the error */
	assert_int_equal(ts_state_mark_at(-1, &m2), -EBADF);
}

static void test_dir_resolve(void **state)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_state_options opts = {.state_dir = "relative/dir"};
	struct ts_state *s = NULL;

	assert_string_equal(ts_state_dir_resolve(NULL), "/run/toposhim");
	assert_string_equal(ts_state_dir_resolve(""), "/run/toposhim");
	assert_string_equal(ts_state_dir_resolve("/etc-said"), "/etc-said");
	assert_int_equal(setenv("TOPOSHIM_STATE_DIR", "/env-said", 1), 0);
	assert_string_equal(ts_state_dir_resolve("/etc-said"), "/env-said");
	assert_int_equal(setenv("TOPOSHIM_STATE_DIR", "", 1), 0);
	assert_string_equal(ts_state_dir_resolve("/etc-said"), "/etc-said");
	assert_int_equal(unsetenv("TOPOSHIM_STATE_DIR"), 0);
	assert_int_equal(ts_state_open(&opts, &s, &err), -EINVAL);
	assert_string_equal(err->msg, "state directory: not absolute 'relative/dir'");
	assert_null(s);
}

/* Child: try to take the lock; exit 0 when the outcome matches.  The child
 * first drops its inherited copy of the parent's lock fd: the flock belongs to
 * the open file description, which the copy would keep locked after the
 * parent closes its own fd. */
static void lock_child(struct ts_state *inherited, const struct ts_state_options *opts, int want_r,
		       uint64_t min_wait_usec, const char *want_msg)
{
	struct ts_error *err = NULL;
	struct ts_state *s = NULL;
	uint64_t t0, waited;
	int r;

	ts_state_close(inherited);
	t0 = ts_state_now_usec();
	r = ts_state_open(opts, &s, &err);
	waited = ts_state_now_usec() - t0;

	if (r != want_r || waited < min_wait_usec)
		_exit(1);
	if (want_msg != NULL && (err == NULL || strcmp(err->msg, want_msg) != 0))
		_exit(2);
	ts_state_close(s);
	ts_error_free(err);
	_exit(0);
}

static int wait_child(pid_t pid)
{
	int status = 0;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_lock_contention(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *msg = NULL;
	struct ts_state_options quick = f->opts, patient = f->opts;
	pid_t pid;

	quick.lock_timeout_usec = 200000;
	patient.lock_timeout_usec = 10000000;
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_true(asprintf(&msg, "%s/lock: still held by another process after 200 ms", f->sdir) >
		    0);
	/* the second process gives up after its timeout, with a clear message */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		lock_child(s, &quick, -ETIMEDOUT, 200000, msg);
	assert_int_equal(wait_child(pid), 0);
	/* a patient one waits until the holder lets go (here after 400 ms): it
	 * is still waiting when the holder closes (how long it waited is not
	 * checked: on a loaded machine it may start only after the close) */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		lock_child(s, &patient, 0, 0, NULL);
	usleep(400000);
	assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
	s = ts_state_close(s);
	assert_int_equal(wait_child(pid), 0);
}

/* create holds the lock until it execs the runtime: exec must release it */
static void test_exec_releases_lock(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct ts_state_options quick = f->opts;
	int ready[2];
	char c;
	pid_t pid;

	quick.lock_timeout_usec = 300000;
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* the exec'd shell says when it runs, then outlives the check */
		char fd_arg[16];

		snprintf(fd_arg, sizeof(fd_arg), "%d", ready[1]);
		if (fcntl(ready[1], F_SETFD, 0) < 0)
			_exit(3);
		execl("/bin/sh", "sh", "-c", "echo x >&$0; exec sleep 3", fd_arg, (char *)NULL);
		_exit(4);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	/* the parent lets go of its copy; the exec'd child must hold none */
	s = ts_state_close(s);
	assert_int_equal(ts_state_open(&quick, &s, &err), 0);
	assert_null(err);
	kill(pid, SIGKILL);
	assert_int_equal(wait_child(pid), 128 + SIGKILL);
}

#define N_WRITERS 50

static void test_parallel_writers_lose_nothing(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	char *warning = NULL;
	pid_t pids[N_WRITERS];

	for (int i = 0; i < N_WRITERS; i++) {
		pids[i] = fork();
		assert_true(pids[i] >= 0);
		if (pids[i] == 0) {
			struct ts_error *e = NULL;
			struct ts_state *cs = NULL;
			char id[32];
			int r;

			snprintf(id, sizeof(id), "ctr-%d", i);
			r = ts_state_open(&f->opts, &cs, &e);
			if (r == 0)
				r = ts_state_load(cs, NULL, &e);
			if (r == 0)
				r = ts_state_put(cs, ts_alloc_new(id, &e), &e);
			if (r == 0)
				r = ts_state_commit(cs, &e);
			ts_state_close(cs);
			_exit(r == 0 ? 0 : 1);
		}
	}
	for (int i = 0; i < N_WRITERS; i++)
		assert_int_equal(wait_child(pids[i]), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), N_WRITERS);
	for (int i = 0; i < N_WRITERS; i++) {
		char id[32];

		snprintf(id, sizeof(id), "ctr-%d", i);
		assert_non_null(ts_state_find(s, NULL, id));
	}
}

/* Loads in one process: a reload of unchanged bytes gives the records of
 * the file, also through the close-time cache, and a rewrite of the same
 * length is seen at once. */
static void test_reload_same_and_rewritten(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	struct ts_state *s = NULL;
	const struct ts_alloc *found;
	struct ts_alloc *a;
	char *warning = NULL;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	put_sample(s, f->runtime);
	assert_int_equal(ts_state_commit(s, &err), 0);
	for (int round = 0; round < 3; round++) {
		if (round == 2) {
			/* closed unchanged: the next load takes the cached records */
			s = ts_state_close(s);
			assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
		}
		assert_int_equal(ts_state_load(s, &warning, &err), 0);
		assert_null(warning);
		assert_int_equal(ts_state_count(s), 2);
		found = ts_state_find(s, f->runtime, "web-1");
		assert_non_null(found);
		assert_string_equal(found->cpus_str, "2-3,10");
		assert_string_equal(found->devices[1], "vendor.com/nic=eth1");
		assert_null(found->devices[2]);
		assert_int_equal(found->pid, 31337);
		assert_true(found->pid_start_ticks == 18446744073709551615ull);
		assert_string_equal(found->cgroup_path, "/default/web-1");
	}
	/* the same length, other bytes: written by another session */
	a = ts_alloc_dup(ts_state_find(s, f->runtime, "web-1"));
	assert_non_null(a);
	free(a->cpus_str);
	a->cpus_str = strdup("2-3,11");
	a->pid = 31337;
	assert_int_equal(ts_state_put(s, a, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_string_equal(ts_state_find(s, f->runtime, "web-1")->cpus_str, "2-3,11");
	assert_string_equal(ts_state_find(s, f->runtime, "batch \"2\"")->class_name, "batch");
	s = ts_state_close(s);
}

/*
 * A commit copies the text of every record left as it was read (or last
 * written) and generates the others; the file is what generating every
 * record gives, byte for byte.  The records of a compact file know where
 * their object is; an indented file's do not (it is written compact).
 */
static void test_commit_copies_unchanged_records(void **state)
{
	static const char head[] =
		"{\"version\":1,\"checksum\":\"" SAMPLE_SUM "\",\"allocations\":[";
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *problem = NULL, *copied = NULL, *generated = NULL, *text = NULL;
	cleanup_free char *want = NULL;
	struct ts_state_span spans[2];
	struct ts_alloc **v = NULL, *c;
	struct ts_state *s = NULL;
	char *warning = NULL;
	size_t n = 0, clen = 0, glen = 0, wlen = 0;

	assert_int_equal(ts_state_format_decode(expected_file, strlen(expected_file), "x", &v, &n,
						&problem, &err),
			 0);
	assert_null(problem);
	assert_int_equal(n, 2);
	assert_int_equal(v[0]->text_at, strlen(head));
	assert_memory_equal(expected_file + v[0]->text_at, "{\"container_id\":\"web-1\"", 23);
	assert_int_equal(v[1]->text_at, v[0]->text_at + v[0]->text_len + 1);
	assert_int_equal(v[1]->text_at + v[1]->text_len, strlen(expected_file) - strlen("]}\n"));
	/* copied, not generated: a member changed behind the spans' back
	 * (what the state module never does) shows in the generated text
	 * only */
	free(v[1]->class_name);
	v[1]->class_name = strdup("other");
	assert_int_equal(ts_state_format_encode_from(v, n, "x", expected_file,
						     strlen(expected_file), spans, 0, &copied,
						     &clen, &err),
			 0);
	assert_non_null(strstr(copied, "\"class\":\"batch\""));
	assert_null(strstr(copied, "\"class\":\"other\""));
	assert_int_equal(spans[0].at, strlen(head));
	assert_int_equal(spans[1].at, spans[0].at + spans[0].len + 1);
	assert_int_equal(ts_state_format_encode(v, n, "x", &generated, &glen, &err), 0);
	assert_non_null(strstr(generated, "\"class\":\"other\""));
	/* a span that does not hold a braced object is not copied */
	v[1]->text_at += 1;
	free(copied);
	assert_int_equal(ts_state_format_encode_from(v, n, "x", expected_file,
						     strlen(expected_file), NULL, 0, &copied, &clen,
						     &err),
			 0);
	assert_int_equal(clen, glen);
	assert_memory_equal(copied, generated, glen);
	ts_alloc_array_free(v, n);
	free(problem);
	problem = NULL;
	assert_int_equal(ts_state_format_decode(indented_file, strlen(indented_file), "x", &v, &n,
						&problem, &err),
			 0);
	assert_null(problem);
	assert_int_equal(n, 2);
	assert_int_equal(v[0]->text_len, 0);
	assert_int_equal(v[1]->text_len, 0);
	ts_alloc_array_free(v, n);

	/* a store session: one record replaced, the other copied; the file
	 * is the generation of both, and loads sound */
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	put_sample(s, "/run/containerd/runc/default");
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_at(s, 0)->text_at, strlen(head));
	c = ts_alloc_dup(ts_state_at(s, 1));
	assert_non_null(c);
	assert_int_equal(c->text_len, 0);
	c->pinned = false;
	assert_int_equal(ts_state_put(s, c, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(ts_state_format_encode(s->allocs, s->n_allocs, "x", &want, &wlen, &err),
			 0);
	text = read_alloc_file(f);
	assert_string_equal(text, want);
	assert_non_null(strstr(text, "\"bundle\":\"/b\",\"class\":\"batch\",\"cpus\":\"\","
				     "\"mems\":\"\",\"devices\":[],\"pinned\":false"));
	for (size_t i = 0; i < 2; i++) {
		const struct ts_alloc *a = ts_state_at(s, i);

		assert_true(a->text_len > 0);
		assert_memory_equal(text + a->text_at, "{\"container_id\":", 16);
		assert_int_equal(text[a->text_at + a->text_len - 1], '}');
	}
	s = ts_state_close(s);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_false(ts_state_at(s, 1)->pinned);

	/* the records a commit need not compare: a loaded sound store's; an
	 * appended record keeps them, a removal counts one less; the file
	 * states the sum of every record's hash, hashing only the new ones */
	assert_int_equal(s->ids_checked, 2);
	c = ts_alloc_new("appended", &err);
	assert_non_null(c);
	assert_int_equal(ts_state_put(s, c, &err), 0);
	assert_int_equal(s->ids_checked, 2);
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(s->ids_checked, 3);
	for (size_t i = 0; i < 3; i++)
		assert_true(s->allocs[i]->text_sum == ts_state_record_hash(s->allocs[i]));
	assert_int_equal(ts_state_remove(s, "/run/containerd/runc/default", "web-1", NULL), 1);
	assert_int_equal(s->ids_checked, 2);
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(s->ids_checked, 2);
	free(text);
	text = read_alloc_file(f);
	{
		char stated[64];

		assert_true(snprintf(stated, sizeof(stated), "\"checksum\":\"fnv1a64-sum:%016llx\"",
				     (unsigned long long)(ts_state_record_hash(s->allocs[0]) +
							  ts_state_record_hash(s->allocs[1]))) > 0);
		assert_non_null(strstr(text, stated));
	}
	s = ts_state_close(s);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 2);
	s = ts_state_close(s);
}

/* Two records equal member by member (NULL equals NULL only). */
static void assert_alloc_equal(const struct ts_alloc *a, const struct ts_alloc *b)
{
	const char *const sa[] = {a->container_id, a->runtime_root, a->runtime_path,
				  a->bundle,	   a->class_name,   a->cpus_str,
				  a->mems_str,	   a->cgroup_path};
	const char *const sb[] = {b->container_id, b->runtime_root, b->runtime_path,
				  b->bundle,	   b->class_name,   b->cpus_str,
				  b->mems_str,	   b->cgroup_path};
	size_t k = 0;

	for (size_t i = 0; i < sizeof(sa) / sizeof(sa[0]); i++) {
		if (sa[i] == NULL || sb[i] == NULL)
			assert_ptr_equal(sa[i], sb[i]);
		else
			assert_string_equal(sa[i], sb[i]);
	}
	assert_true((a->devices == NULL) == (b->devices == NULL));
	for (; a->devices != NULL && a->devices[k] != NULL; k++)
		assert_string_equal(a->devices[k], b->devices[k]);
	assert_true(a->devices == NULL || b->devices[k] == NULL);
	assert_int_equal(a->pinned, b->pinned);
	assert_int_equal(a->numa_exclusive, b->numa_exclusive);
	assert_int_equal(a->status, b->status);
	assert_true(a->created_usec == b->created_usec);
	assert_int_equal(a->pid, b->pid);
	assert_true(a->pid_start_ticks == b->pid_start_ticks);
}

/* Load the store in a child with this process's cache of the records
 * closed unchanged emptied first (a load takes them out; a store closed
 * changed does not put them back): "<W or ->|<class of record 1 or
 * (none)>". */
static void load_in_child(const struct fixture *f, char *out, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_state *s = NULL;
	char *warning = NULL;
	int fds[2], status = 0;
	ssize_t n;
	pid_t pid;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	free(warning);
	assert_int_equal(ts_state_put(s, ts_alloc_new("not-committed", &err), &err), 0);
	s = ts_state_close(s);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ts_state *cs = NULL;
		char *cwarning = NULL, line[256];
		const struct ts_alloc *a;

		close(fds[0]);
		if (ts_state_open(&f->opts, &cs, &err) < 0 ||
		    ts_state_load(cs, &cwarning, &err) < 0)
			_exit(1);
		a = ts_state_at(cs, 1);
		snprintf(line, sizeof(line), "%s|%s", cwarning != NULL ? "W" : "-",
			 a != NULL && a->class_name != NULL ? a->class_name : "(none)");
		_exit(write(fds[1], line, strlen(line)) > 0 ? 0 : 1);
	}
	close(fds[1]);
	n = read(fds[0], out, size - 1);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(n > 0);
	out[n] = '\0';
}

static void write_cache(const struct fixture *f, const char *buf, size_t len)
{
	cleanup_free char *path = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_true(asprintf(&path, "%s/" TS_STATE_CACHE_FILE, f->sdir) > 0);
	(void)unlink(path);
	assert_int_equal(ts_write_file_replace_at(AT_FDCWD, path, buf, len, 0600, &err), 0);
}

/*
 * allocations.cache: a commit (and a load that had to parse) leaves the
 * records for the next process, which takes them only when the cache is
 * the image of the exact allocations.json it read; any other cache
 * (damaged, truncated, of another text, a FIFO) is passed over and the
 * JSON parsed, and a damaged allocations.json is found damaged whatever
 * the cache holds.
 */
static void test_disk_cache(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *json = NULL, *cache = NULL, *problem = NULL, *path = NULL;
	cleanup_free char *forged = NULL;
	struct ts_alloc **v = NULL, **cv = NULL;
	struct ts_state *s = NULL;
	size_t n = 0, cn = 0, len, cache_len = 0, forged_len = 0;
	char got[256];
	struct stat st;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	put_sample(s, f->runtime);
	assert_int_equal(ts_state_commit(s, &err), 0);
	/* a small store is parsed: no cache */
	assert_true(asprintf(&path, "%s/" TS_STATE_CACHE_FILE, f->sdir) > 0);
	assert_true(lstat(path, &st) < 0 && errno == ENOENT);
	/* from 16 KiB of JSON on (100 more records) */
	for (int i = 0; i < 100; i++) {
		struct ts_alloc *a;
		char id[32];

		snprintf(id, sizeof(id), "filler-%03d", i);
		a = ts_alloc_new(id, &err);
		assert_non_null(a);
		a->runtime_root = strdup(f->runtime);
		a->bundle = strdup("/run/containerd/io.containerd.runtime.v2.task/k8s.io/filler");
		a->class_name = strdup("standard");
		assert_int_equal(ts_state_put(s, a, &err), 0);
	}
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600);
	load_in_child(f, got, sizeof(got));
	assert_string_equal(got, "-|batch");

	/* what it holds is what the parse of the JSON gives */
	json = read_alloc_file(f);
	len = strlen(json);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &cache, &cache_len, &err), 0);
	assert_int_equal(ts_state_format_decode(json, len, "x", &v, &n, &problem, &err), 0);
	assert_null(problem);
	assert_int_equal(ts_state_cache_decode(cache, cache_len, json, len, &cv, &cn), 1);
	assert_int_equal(cn, n);
	for (size_t i = 0; i < n; i++) {
		assert_alloc_equal(cv[i], v[i]);
		assert_int_equal(cv[i]->text_at, v[i]->text_at);
		assert_int_equal(cv[i]->text_len, v[i]->text_len);
	}

	/* taken, not parsed: a cache naming this text with another class */
	free(cv[1]->class_name);
	cv[1]->class_name = strdup("cached");
	assert_int_equal(ts_state_cache_encode(cv, cn, json, len, &forged, &forged_len), 0);
	ts_alloc_array_free(cv, cn);
	assert_int_equal(ts_state_cache_decode(forged, forged_len, json, len, &cv, &cn), 1);
	write_cache(f, forged, forged_len);
	load_in_child(f, got, sizeof(got));
	assert_string_equal(got, "-|cached");
	/* one byte of its body changed: passed over, and written anew */
	forged[forged_len - 1] ^= 1;
	write_cache(f, forged, forged_len);
	load_in_child(f, got, sizeof(got));
	assert_string_equal(got, "-|batch");
	free(cache);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &cache, &cache_len, &err), 0);
	ts_alloc_array_free(cv, cn);
	assert_int_equal(ts_state_cache_decode(cache, cache_len, json, len, &cv, &cn), 1);
	assert_string_equal(cv[1]->class_name, "batch");
	ts_alloc_array_free(cv, cn);
	cv = NULL;
	/* truncated */
	forged[forged_len - 1] ^= 1;
	write_cache(f, forged, forged_len / 2);
	load_in_child(f, got, sizeof(got));
	assert_string_equal(got, "-|batch");
	/* the image of another text (one byte of the JSON other) */
	json[0] = ' ';
	free(forged);
	assert_int_equal(ts_state_cache_encode(v, n, json, len, &forged, &forged_len), 0);
	json[0] = '{';
	write_cache(f, forged, forged_len);
	assert_int_equal(ts_state_cache_decode(forged, forged_len, json, len, &cv, &cn), 0);
	load_in_child(f, got, sizeof(got));
	assert_string_equal(got, "-|batch");
	/* a FIFO: not waited on, not read, replaced */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	load_in_child(f, got, sizeof(got));
	assert_string_equal(got, "-|batch");
	assert_true(lstat(path, &st) < 0 || S_ISREG(st.st_mode));

	/* a hard link to a file elsewhere, mode 0666: the commit writes a
	 * file of its own, 0600, and leaves the other file as it was */
	{
		cleanup_free char *other = NULL, *kept = NULL;
		struct ts_alloc *a;

		assert_true(asprintf(&other, "%s/other", f->top) > 0);
		assert_int_equal(ts_write_file_replace_at(AT_FDCWD, other, "mine\n", 5, 0666, &err),
				 0);
		assert_true(unlink(path) == 0 || errno == ENOENT);
		assert_int_equal(link(other, path), 0);
		assert_int_equal(chmod(path, 0666), 0);
		assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
		assert_int_equal(ts_state_load(s, NULL, &err), 0);
		a = ts_alloc_new("linked", &err);
		assert_non_null(a);
		assert_int_equal(ts_state_put(s, a, &err), 0);
		assert_int_equal(ts_state_commit(s, &err), 0);
		assert_int_equal(ts_state_remove(s, NULL, "linked", NULL), 1);
		assert_int_equal(ts_state_commit(s, &err), 0);
		s = ts_state_close(s);
		kept = read_file_in(f->top, "other");
		assert_string_equal(kept, "mine\n");
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode) && st.st_nlink == 1 &&
			    (st.st_mode & 07777) == 0600);
		free(json);
		json = read_alloc_file(f);
		len = strlen(json);
	}

	/* a hand edit of the JSON is found whatever the cache says */
	free(forged);
	assert_int_equal(ts_state_cache_encode(v, n, json, len, &forged, &forged_len), 0);
	write_cache(f, forged, forged_len);
	{
		char *at = strstr(json, "\"class\":\"batch\"");
		cleanup_free char *jpath = NULL;

		assert_non_null(at);
		at[9] = 'o'; /* "botch": same length, checksum mismatch */
		assert_true(asprintf(&jpath, "%s/allocations.json", f->sdir) > 0);
		assert_int_equal(ts_write_file_replace_at(AT_FDCWD, jpath, json, len, 0600, &err),
				 0);
	}
	load_in_child(f, got, sizeof(got));
	assert_true(got[0] == 'W');
	ts_alloc_array_free(v, n);

	/* the store falls below the bound: its cache goes */
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	while (ts_state_count(s) > 2) {
		const struct ts_alloc *last = ts_state_at(s, ts_state_count(s) - 1);

		assert_int_equal(ts_state_remove(s, last->runtime_root, last->container_id, NULL),
				 1);
	}
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);
	assert_true(lstat(path, &st) < 0 && errno == ENOENT);
}

/* A store closed unchanged hands its records to the next load of the same
 * bytes instead of a parse: they must be exactly what the parse gives
 * (records put with no cpus, no devices, a pid-less start time), a record
 * changed in place without a put must not be handed on, and a file
 * another session rewrote since is parsed. */
static void test_close_hands_records_to_next_load(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *problem = NULL;
	cleanup_free char *text = NULL;
	struct ts_alloc **parsed = NULL;
	struct ts_state *s = NULL;
	struct ts_alloc *c;
	char *warning = NULL;
	size_t n = 0;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	put_sample(s, f->runtime);
	c = ts_alloc_new("bare", &err);
	assert_non_null(c);
	c->pid_start_ticks = 77; /* not written without a pid */
	c->cgroup_path = strdup("/not/written");
	c->created_usec = 5;
	assert_int_equal(ts_state_put(s, c, &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);

	text = read_alloc_file(f);
	assert_int_equal(
		ts_state_format_decode(text, strlen(text), "x", &parsed, &n, &problem, &err), 0);
	assert_null(problem);
	assert_int_equal(n, 3);
	for (int round = 0; round < 2; round++) {
		assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
		assert_int_equal(ts_state_load(s, &warning, &err), 0);
		assert_null(warning);
		assert_int_equal(ts_state_count(s), n);
		for (size_t i = 0; i < n; i++)
			assert_alloc_equal(ts_state_at(s, i), parsed[i]);
		s = ts_state_close(s); /* unchanged: handed on again */
	}

	/* rewritten by another session (same length, one byte of a value
	 * changed and the checksum with it): parsed, not the records handed on */
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	s = ts_state_close(s);
	{
		struct ts_alloc **v = calloc(n, sizeof(*v));
		cleanup_free char *other = NULL;
		size_t len = 0;

		assert_non_null(v);
		for (size_t i = 0; i < n; i++)
			v[i] = parsed[i];
		free(v[0]->class_name);
		v[0]->class_name = strdup("criticaX");
		assert_int_equal(ts_state_format_encode(v, n, "x", &other, &len, &err), 0);
		assert_int_equal(len, strlen(text));
		write_alloc_file(f, other);
		free(v);
	}
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_string_equal(ts_state_find(s, f->runtime, "web-1")->class_name, "criticaX");
	s = ts_state_close(s);
	ts_alloc_array_free(parsed, n);
}

/* text with the first `from` replaced by `to`; caller frees. */
static char *replaced(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *out = NULL;

	assert_non_null(at);
	assert_true(asprintf(&out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) > 0);
	return out;
}

/* The decoder's token-by-token fast path answers as its tree path does
 * (the same problem, records that encode to the same bytes) for a sound
 * file and for each way a file can stop the fast path. */
static void test_fast_decode_matches_tree(void **state)
{
	struct fixture *f = *state;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *base = NULL, *indented = NULL;
	struct ts_state *s = NULL;
	const char *const edits[][2] = {
		{NULL, NULL}, /* the file as written */
		{"\"container_id\": \"web-1\",", "\"container_id\": \"web-1\",  "},
		/* members in another order: still sound */
		{"\"runtime_root\"", "\"created_usec\": 1764466140123456, \"runtime_root\""},
		{"\"version\": 1,", "\"version\": 1, \"extra\": [null],"},
		{"\"class\": \"batch\",", "\"class\": \"batch\", \"class\": \"batch\","},
		{"\"class\": \"batch\",", "\"class\": \"other\", \"class\": \"batch\","},
		{"\"created_usec\": 1\n", "\"created_usec\": 1e0\n"},
		{"\"created_usec\": 1\n", "\"created_usec\": 01\n"},
		{"\"created_usec\": 1\n", "\"created_usec\": -0\n"},
		{"\"pid\": 31337", "\"pid\": 0"},
		{"\"pid\": 31337", "\"pid\": 2147483648"},
		{"\"checksum\": \"fnv1a64-sum:", "\"checksum\": \"fnv1a64-sum:0"},
		/* the sum's digits under the chained form's tag */
		{"\"checksum\": \"fnv1a64-sum:", "\"checksum\": \"fnv1a64:"},
		{"\"container_id\": \"web-1\"", "\"container_id\": \"batch \\\"2\\\"\""},
		{"\"state\": \"created\"", "\"state\": \"bogus\""},
		{"\"class\": \"batch\"", "\"class\": {}"},
		{"\"version\": 1", "\"version\": 2"},
		{"\"version\": 1", "\"version\": 1.0"},
		{"\"nvidia.com/gpu=0\"", "7"},
		{"\"cpus\": \"2-3,10\"", "\"cpus\": \"3-2\""},
		{"\"cpus\": \"\"", "\"cpus\": null"},
		{"\"pinned\": true", "\"pinned\": \"true\""},
		{"\"allocations\": [", "\"allocations\": [7, "},
		{"\"version\": 1,", "\"version\": 1, \"allocations\": [],"},
		{"\"version\": 1,", ""},
		{"{", "["},
		{"\"web-1\"", "\"web-\\u0000\""},
	};

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	put_sample(s, f->runtime);
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);
	base = read_alloc_file(f);
	/* the edits are written against the indented layout of toposhim before
	 * 2026-12-05 (the decoders read both): edit 0 is the compact file as
	 * written, the others edit its indented form */
	{
		cleanup_json struct ts_json *tree = NULL;

		assert_int_equal(ts_json_parse(base, strlen(base), "a", &tree, &err), 0);
		assert_int_equal(ts_json_serialize(tree, true, &indented, NULL, &err), 0);
	}
	for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
		cleanup_free char *text = edits[i][0] == NULL
						  ? strdup(base)
						  : replaced(indented, edits[i][0], edits[i][1]);
		cleanup_free char *p1 = NULL, *p2 = NULL, *e1 = NULL, *e2 = NULL;
		struct ts_alloc **v1 = NULL, **v2 = NULL;
		size_t n1 = 0, n2 = 0, l1 = 0, l2 = 0;
		int r1, r2;

		assert_non_null(text);
		assert_int_equal(
			ts_state_format_decode(text, strlen(text), "a", &v1, &n1, &p1, &err), 0);
		assert_int_equal(
			ts_state_format_decode_tree(text, strlen(text), "a", &v2, &n2, &p2, &err),
			0);
		if (i < 3)
			assert_null(p1); /* sound */
		if (p1 == NULL || p2 == NULL) {
			if (p1 != p2)
				print_message("edit %zu: '%s' vs '%s'\n", i, p1 ? p1 : "(none)",
					      p2 ? p2 : "(none)");
			assert_ptr_equal(p1, p2);
		} else
			assert_string_equal(p1, p2);
		assert_int_equal(n1, n2);
		r1 = ts_state_format_encode(v1, n1, "x", &e1, &l1, &err);
		err = ts_error_free(err);
		r2 = ts_state_format_encode(v2, n2, "x", &e2, &l2, &err);
		err = ts_error_free(err);
		assert_int_equal(r1, r2);
		if (r1 == 0)
			assert_string_equal(e1, e2);
		ts_alloc_array_free(v1, n1);
		ts_alloc_array_free(v2, n2);
	}
}

/* A record of a running container (pid 300, start 5000 in the fake
 * procfs) and one whose init is gone (pid 301). */
static struct ts_alloc *rec(const struct fixture *f, const char *id, pid_t pid)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_alloc *a = ts_alloc_new(id, &err);

	assert_non_null(a);
	a->runtime_root = strdup(f->runtime);
	a->class_name = strdup("critical");
	a->cpus_str = strdup("1");
	a->mems_str = strdup("0");
	a->status = TS_ALLOC_CREATED;
	a->pid = pid;
	a->pid_start_ticks = 5000;
	a->created_usec = 1;
	return a;
}

/* allocations.json gone (removed by hand, a dangling symlink) while the
 * store was written before: rebuilt from the previous copy, not taken for
 * a new store that forgets what still holds cpus; a directory in its
 * place, which no commit can replace, refuses the load naming it. */
static void test_lost_file_rebuilds(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *warning = NULL, *want = NULL, *path = NULL;
	struct stat st;

	assert_true(asprintf(&path, "%s/allocations.json", f->sdir) > 0);
	assert_int_equal(th_fake_proc(f->proc, 300, "sh", 'S', 5000), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_put(s, rec(f, "live", 300), &err), 0);
	assert_int_equal(ts_state_put(s, rec(f, "exited", 301), &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	/* a second commit: allocations.json.prev holds the first */
	assert_int_equal(ts_state_put(s, rec(f, "live", 300), &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	s = ts_state_close(s);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	assert_true(asprintf(&want,
			     "%s: missing: store rebuilt from live containers and "
			     "allocations.json.prev, kept 1 of 2 allocations",
			     path) > 0);
	assert_string_equal(warning, want);
	assert_int_equal(ts_state_count(s), 1);
	assert_string_equal(ts_state_at(s, 0)->container_id, "live");
	assert_int_equal(ts_state_commit(s, &err), 0);
	free(TAKE_PTR(warning));
	assert_int_equal(ts_state_load(s, &warning, &err), 0);
	assert_null(warning);
	assert_int_equal(ts_state_count(s), 1);
	s = ts_state_close(s);

	/* a dangling symlink: the same, and the commit writes a file */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink("/nonexistent/allocations.json", path), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	free(TAKE_PTR(want));
	assert_true(asprintf(&want,
			     "%s: a dangling symbolic link: store rebuilt from live containers "
			     "and allocations.json.prev, kept 1 of 2 allocations",
			     path) > 0);
	assert_string_equal(warning, want);
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	s = ts_state_close(s);

	/* each rebuild left a line for the operator (the warning itself goes
	 * to a log the engine may delete with the bundle), and so did the
	 * commit that wrote the rebuilt store */
	{
		cleanup_free char *log = read_file_in(f->sdir, "rebuilds.log");
		cleanup_free char *written = NULL;
		const char *want_lines[4];
		char *line = log;

		assert_true(asprintf(&written, "%s: rebuilt store written, 1 allocations", path) >
			    0);
		want_lines[0] = NULL; /* the first warning, checked below */
		want_lines[1] = written;
		want_lines[2] = want;
		want_lines[3] = written;
		for (int i = 0; i < 4; i++) {
			char *nl = strchr(line, '\n');
			int y, mo, d, h, mi, sec, pid, used = 0;

			assert_non_null(nl);
			*nl = '\0';
			assert_int_equal(sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2dZ pid %d: %n", &y,
						&mo, &d, &h, &mi, &sec, &pid, &used),
					 7);
			assert_int_equal(pid, (int)getpid());
			if (i == 0) {
				assert_int_equal(strncmp(line + used, path, strlen(path)), 0);
				assert_string_equal(
					line + used + strlen(path),
					": missing: store rebuilt from live containers and "
					"allocations.json.prev, kept 1 of 2 allocations");
			} else {
				assert_string_equal(line + used, want_lines[i]);
			}
			line = nl + 1;
		}
		assert_string_equal(line, "");
	}
	/* over 64 KiB it moves to rebuilds.log.1 */
	{
		cleanup_free char *big = malloc(65531), *old = NULL, *log = NULL;

		assert_non_null(big);
		memset(big, 'x', 65530);
		big[65530] = '\0';
		assert_int_equal(th_write(f->sdir, "rebuilds.log", big), 0);
		assert_int_equal(unlink(path), 0);
		assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
		free(TAKE_PTR(warning));
		warning = load_warn(s);
		assert_int_equal(ts_state_commit(s, &err), 0);
		s = ts_state_close(s);
		old = read_file_in(f->sdir, "rebuilds.log.1");
		assert_string_equal(old, big);
		log = read_file_in(f->sdir, "rebuilds.log");
		/* the rebuild's line, then its commit's */
		assert_non_null(strstr(log, ": missing: store rebuilt"));
		assert_non_null(strstr(strchr(log, '\n') + 1, ": rebuilt store written, 1 "
							      "allocations\n"));
		assert_int_equal(strchr(strchr(log, '\n') + 1, '\n') - log + 1,
				 (ptrdiff_t)strlen(log));
	}

	/* a directory: refused, named, left alone */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	free(TAKE_PTR(warning));
	assert_int_equal(ts_state_load(s, &warning, &err), -EISDIR);
	assert_null(warning);
	free(TAKE_PTR(want));
	assert_true(asprintf(&want,
			     "%s: a directory where the allocations file belongs: remove it or "
			     "move it away",
			     path) > 0);
	assert_string_equal(err->msg, want);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(rmdir(path), 0);
}

/* A rebuild does not keep what the damaged file says over what was
 * written for the container: class, cpus and mems come back from its
 * placement file, the init from the runtime's state (an edited class held
 * cpus as exclusive; an edited pid dropped a running container). */
static void test_rebuild_rederives_records(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *warning = NULL, *bundle = NULL;
	const struct ts_alloc *a;

	assert_true(asprintf(&bundle, "%s/bundle", f->top) > 0);
	assert_int_equal(th_write(f->top, "bundle/toposhim-placement.json",
				  "{\"version\": 1, \"id\": \"crit\", \"class\": \"standard\", "
				  "\"cpus\": \"1\", \"mems\": \"0\", \"cpus_written\": true, "
				  "\"pinned\": false, \"numa_exclusive\": false}"),
			 0);
	assert_int_equal(th_write(f->runtime, "crit/state.json",
				  "{\"init_process_pid\": 300, \"init_process_start\": 5000}"),
			 0);
	assert_int_equal(th_fake_proc(f->proc, 300, "sh", 'S', 5000), 0);
	/* pid 999 is not running; class and cpus edited */
	assert_true(asprintf(&text,
			     "{\"version\": 1, \"checksum\": \"x\", \"allocations\": "
			     "[{\"container_id\": \"crit\", \"runtime_root\": \"%s\", "
			     "\"bundle\": \"%s\", \"class\": \"bogus\", \"cpus\": \"0-1\", "
			     "\"mems\": \"0\", \"devices\": [], \"pinned\": true, "
			     "\"numa_exclusive\": true, \"state\": \"created\", "
			     "\"created_usec\": 5, \"pid\": 999, \"pid_start_ticks\": 7}]}",
			     f->runtime, bundle) > 0);
	write_alloc_file(f, text);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	assert_non_null(strstr(warning, "): store rebuilt from live containers, kept 1 of 1 "
					"allocations"));
	a = ts_state_at(s, 0);
	assert_non_null(a);
	assert_string_equal(a->class_name, "standard");
	assert_string_equal(a->cpus_str, "1");
	assert_string_equal(a->mems_str, "0");
	assert_false(a->pinned);
	assert_false(a->numa_exclusive);
	assert_int_equal(a->pid, 300);
	assert_int_equal(a->pid_start_ticks, 5000);
	assert_int_equal(a->status, TS_ALLOC_CREATED);
}

/* An empty directory planted as allocations.cache is removed and the
 * cache written (it stayed off for good). */
static void test_cache_dir_replaced(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *cache = NULL;
	struct stat st;

	assert_true(asprintf(&cache, "%s/allocations.cache", f->sdir) > 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(mkdir(cache, 0700), 0);
	/* 16 KiB of JSON and more: the cache is written */
	for (int i = 0; i < 100; i++) {
		char id[32];
		struct ts_alloc *a;

		snprintf(id, sizeof(id), "container-%03d", i);
		a = rec(f, id, 300);
		assert_int_equal(ts_state_put(s, a, &err), 0);
	}
	assert_int_equal(ts_state_commit(s, &err), 0);
	assert_int_equal(lstat(cache, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* A FIFO where allocations.json.prev belongs does not hang the commit
 * that holds the lock (it was opened for writing without O_NONBLOCK: the
 * create blocked, every other one timed out on the lock). */
static void test_fifo_prev(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *prev = NULL;
	struct stat st;

	assert_true(asprintf(&prev, "%s/allocations.json.prev", f->sdir) > 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_put(s, rec(f, "one", 300), &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	(void)unlink(prev);
	assert_int_equal(mkfifo(prev, 0600), 0);
	alarm(20); /* a regression hangs: end it */
	assert_int_equal(ts_state_put(s, rec(f, "two", 300), &err), 0);
	assert_int_equal(ts_state_commit(s, &err), 0);
	alarm(0);
	assert_int_equal(lstat(prev, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(ts_state_count(s), 2);
}

/* One store session over a damaged file: it must rebuild; with commit,
 * the rebuilt store is written. */
static void load_rebuilt(struct fixture *f, bool commit)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *warning = NULL;
	/* with a runtime root to look in, as a create's: written */
	struct ts_state_options opts = f->opts;

	opts.runtime_root = f->runtime;
	assert_int_equal(ts_state_open(&opts, &s, &err), 0);
	warning = load_warn(s);
	if (commit)
		assert_int_equal(ts_state_commit(s, &err), 0);
}

/* helper-15: a rebuild with no runtime root to look in (no record, no
 * roots file, none given: toposhimctl) found nothing because it could not
 * look; its empty store is not written, the damaged file stays for a
 * create or delete to rebuild. */
static void test_blind_rebuild_not_written(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *warning = NULL, *want = NULL, *text = NULL;
	const char damaged[] = "{\"version\": 1, \"checksum\": \"x\", \"allocations\": []}";

	write_alloc_file(f, damaged);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	warning = load_warn(s);
	assert_non_null(warning);
	assert_int_equal(ts_state_count(s), 0);
	assert_int_equal(ts_state_commit(s, &err), -ESRCH);
	assert_true(asprintf(&want,
			     "%s/allocations.json: rebuilt with no runtime root to look in (no "
			     "record, no root in runtime-roots, no --root names one): not written; "
			     "the next "
			     "create or delete, which names its runtime root, rebuilds it",
			     f->sdir) > 0);
	assert_string_equal(err->msg, want);
	text = read_file_in(f->sdir, "allocations.json");
	assert_string_equal(text, damaged);
	s = ts_state_close(s);
	ts_error_clear(&err);

	/* a roots file without a root in it (helper-22: "garbage"): the same */
	assert_int_equal(th_write(f->sdir, "runtime-roots", "garbage\n"), 0);
	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	free(load_warn(s));
	assert_int_equal(ts_state_commit(s, &err), -ESRCH);
	assert_string_equal(err->msg, want);
}

/* The same damage seen again (a create that fails before its commit,
 * toposhimctl alloc list) is one line in rebuilds.log, not one per load;
 * and a rebuilds.log.1 that cannot be replaced does not let the log grow
 * past its bound. */
static void test_rebuilds_log_bounds(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *log = NULL, *old = NULL, *big = malloc(70001);
	const char damaged[] = "{\"version\": 1, \"checksum\": \"x\", \"allocations\": []}";
	struct stat st;
	char *third;

	write_alloc_file(f, damaged);
	for (int i = 0; i < 3; i++)
		load_rebuilt(f, false);
	log = read_file_in(f->sdir, "rebuilds.log");
	assert_non_null(strstr(log, ": checksum mismatch (stored 'x', "));
	assert_int_equal(strchr(log, '\n') - log + 1, (ptrdiff_t)strlen(log));

	/* written, then damaged the same way again: a loss of its own, a
	 * line of its own (helper-6: it was taken for a repeat) */
	load_rebuilt(f, true);
	write_alloc_file(f, damaged);
	load_rebuilt(f, false);
	free(log);
	log = read_file_in(f->sdir, "rebuilds.log");
	third = strchr(strchr(log, '\n') + 1, '\n') + 1;
	assert_non_null(strstr(strchr(log, '\n') + 1, ": rebuilt store written, 0 allocations\n"));
	assert_non_null(strstr(third, ": checksum mismatch (stored 'x', "));
	assert_int_equal(strchr(third, '\n') - log + 1, (ptrdiff_t)strlen(log));

	/* over the bound, rebuilds.log.1 a directory: started over */
	assert_non_null(big);
	memset(big, 'y', 70000);
	big[69999] = '\n';
	big[70000] = '\0';
	assert_int_equal(th_write(f->sdir, "rebuilds.log", big), 0);
	assert_true(asprintf(&old, "%s/rebuilds.log.1", f->sdir) > 0);
	assert_int_equal(mkdir(old, 0700), 0);
	load_rebuilt(f, false);
	free(log);
	log = read_file_in(f->sdir, "rebuilds.log");
	assert_non_null(strstr(log, ": checksum mismatch (stored 'x', "));
	assert_int_equal(strchr(log, '\n') - log + 1, (ptrdiff_t)strlen(log));
	assert_int_equal(stat(old, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(rmdir(old), 0);
}

/* resizes.log: one line per note with time and pid, a repeat of the last
 * line not added, moved to resizes.log.1 over 64 KiB, never written
 * through a symbolic link. */
static void test_resizes_log(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *log = NULL, *old = NULL, *big = malloc(70001), *target = NULL,
			  *link = NULL;
	char *second;
	struct stat st;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	ts_state_note_resize(s, "container 'a': now pinned there");
	ts_state_note_resize(s, "container 'a': now pinned there");
	ts_state_note_resize(s, "warning: cannot resize container 'b': gone, ignoring");
	log = read_file_in(f->sdir, "resizes.log");
	/* "<YYYY-MM-DDTHH:MM:SSZ> pid <pid>: <msg>\n", twice */
	assert_int_equal(log[4], '-');
	assert_int_equal(log[19], 'Z');
	assert_int_equal(strncmp(log + 20, " pid ", 5), 0);
	second = strchr(log, '\n') + 1;
	assert_non_null(strstr(log, ": container 'a': now pinned there\n"));
	assert_true(strstr(log, ": container 'a': now pinned there\n") < second);
	assert_non_null(strstr(second, ": warning: cannot resize container 'b': gone, ignoring\n"));
	assert_int_equal(strchr(second, '\n') - log + 1, (ptrdiff_t)strlen(log));

	/* over the bound: moved to resizes.log.1, a new file */
	assert_non_null(big);
	memset(big, 'y', 70000);
	big[69999] = '\n';
	big[70000] = '\0';
	assert_int_equal(th_write(f->sdir, "resizes.log", big), 0);
	ts_state_note_resize(s, "container 'c': now pinned there");
	free(log);
	log = read_file_in(f->sdir, "resizes.log");
	assert_non_null(strstr(log, ": container 'c': now pinned there\n"));
	assert_int_equal(strchr(log, '\n') - log + 1, (ptrdiff_t)strlen(log));
	assert_true(asprintf(&old, "%s/resizes.log.1", f->sdir) > 0);
	assert_int_equal(stat(old, &st), 0);
	assert_int_equal(st.st_size, 70000);

	/* a symbolic link where the file belongs: nothing written through it */
	assert_true(asprintf(&target, "%s/elsewhere", f->top) > 0);
	assert_true(asprintf(&link, "%s/resizes.log", f->sdir) > 0);
	assert_int_equal(th_write(f->top, "elsewhere", "x\n"), 0);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(symlink(target, link), 0);
	ts_state_note_resize(s, "container 'd': now pinned there");
	free(log);
	log = read_file_in(f->top, "elsewhere");
	assert_string_equal(log, "x\n");
}

/* creates.log (ts_state_note_create()): the container named, "warning: "
 * before the message, the same rules as resizes.log. */
static void test_creates_log(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *log = NULL;
	char *second;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	ts_state_note_create(s, "a", "1 cpus ignored");
	ts_state_note_create(s, "a", "1 cpus ignored");
	ts_state_note_create(s, "b", "1 cpus ignored");
	ts_state_note_create(s, NULL, "x");
	log = read_file_in(f->sdir, "creates.log");
	assert_int_equal(log[19], 'Z');
	assert_int_equal(strncmp(log + 20, " pid ", 5), 0);
	second = strchr(log, '\n') + 1;
	assert_true(strstr(log, ": container 'a': warning: 1 cpus ignored\n") < second);
	assert_non_null(strstr(second, ": container 'b': warning: 1 cpus ignored\n"));
	assert_int_equal(strchr(second, '\n') - log + 1, (ptrdiff_t)strlen(log));

	/* a write cut short (the file system full; here the file size limit,
	 * whose signal is ignored): no half line is left (helper-18) */
	{
		struct rlimit saved, lim;
		struct sigaction ign = {.sa_handler = SIG_IGN}, old_sa;
		cleanup_free char *after = NULL;

		assert_int_equal(getrlimit(RLIMIT_FSIZE, &saved), 0);
		lim = saved;
		lim.rlim_cur = strlen(log) + 10;
		assert_int_equal(sigaction(SIGXFSZ, &ign, &old_sa), 0);
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
		ts_state_note_create(s, "c", "a warning longer than the ten bytes left");
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &saved), 0);
		assert_int_equal(sigaction(SIGXFSZ, &old_sa, NULL), 0);
		after = read_file_in(f->sdir, "creates.log");
		assert_string_equal(after, log);
	}
}

/* The released file (ts_state_released_add()): lines appended, read back
 * as records of id and cpus, bad lines skipped, removed on clear. */
static void test_released_file(void **state)
{
	struct fixture *f = *state;
	cleanup_state struct ts_state *s = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *path = NULL;
	struct ts_alloc **v = NULL;
	size_t n = 9;

	assert_int_equal(ts_state_open(&f->opts, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	/* none yet */
	assert_int_equal(ts_state_released_read(s, &v, &n), 0);
	assert_int_equal(n, 0);
	assert_null(v);
	ts_state_released_add(s, "crit-1", "0");
	ts_state_released_add(s, "crit-2", "2-3,6");
	/* not written: no cpus, a space or newline in a field */
	ts_state_released_add(s, "crit-3", "");
	ts_state_released_add(s, "a b", "1");
	ts_state_released_add(s, "c", "1\n2");
	text = read_file_in(f->sdir, "released");
	assert_string_equal(text, "0 crit-1\n2-3,6 crit-2\n");
	/* lines without an id or cpus are skipped */
	assert_int_equal(th_write(f->sdir, "released", "0 crit-1\nnoid\n 5\n7 \n1 crit-4\n"), 0);
	assert_int_equal(ts_state_released_read(s, &v, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(v[0]->container_id, "crit-1");
	assert_string_equal(v[0]->cpus_str, "0");
	assert_string_equal(v[1]->container_id, "crit-4");
	assert_string_equal(v[1]->cpus_str, "1");
	ts_alloc_array_free(v, n);
	ts_state_released_clear(s);
	assert_true(asprintf(&path, "%s/released", f->sdir) > 0);
	assert_int_equal(access(path, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_missing_file_is_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insecure_state_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_round_trip_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(test_indented_file_still_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chained_checksum_still_read, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reload_same_and_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(test_close_hands_records_to_next_load, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_commit_copies_unchanged_records, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_disk_cache, setup, teardown),
		cmocka_unit_test_setup_teardown(test_released_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fast_decode_matches_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checksum_mismatch_rebuilds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_previous_copy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_resources_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_pin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_resizes_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_creates_log, setup, teardown),
		cmocka_unit_test_setup_teardown(test_blind_rebuild_not_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_placement_devices, setup, teardown),
		cmocka_unit_test(test_encode_refuses_bad_ids),
		cmocka_unit_test_setup_teardown(test_salvage_from_bundle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_adopt_from_runtime_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_store_adopts_from_runtime_root, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_adopt_with_nothing_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records_and_versions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checksum_definition, setup, teardown),
		cmocka_unit_test_setup_teardown(test_put_replace_remove, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_file_rebuilds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebuild_rederives_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cache_dir_replaced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo_prev, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rebuilds_log_bounds, setup, teardown),
		cmocka_unit_test(test_dir_resolve),
		cmocka_unit_test_setup_teardown(test_lock_contention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exec_releases_lock, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parallel_writers_lose_nothing, setup,
						teardown),
	};

	/* the environment would win over the fixture's directory */
	unsetenv("TOPOSHIM_STATE_DIR");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
