/*
 * Tests of the placement side of src/cli/pools.c and the hooks' environment
 * (src/cli/cmd-hook.c): the resize of the shared pool gives the cpus and
 * mems a create would, and every hook sees the create's configuration.  The
 * cgroup tree is a fake cgroup v2 directory (TOPOSHIM_CGROUP_ROOT with a
 * mode file); the topologies are generated.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroup/cgroup.h"
#include "cli/cmd-hook.h"
#include "cli/pools.h"
#include "oci/json.h"
#include "state/state.h"
#include "topogen.h"
#include "util/cleanup.h"
#include "util/fileio.h"

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	cleanup_free char *cmd = NULL;
	va_list ap;

	va_start(ap, fmt);
	assert_true(vasprintf(&cmd, fmt, ap) > 0);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("failed: %s", cmd);
}

static char *slurp(const char *path)
{
	cleanup_error struct ts_error *err = NULL;
	char *buf = NULL;

	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err) < 0)
		fail_msg("%s", err->msg);
	return buf;
}

/* The runtime root of the records: a resize acts only on a container
 * whose runtime keeps a state dir there that only root (or we) can change. */
static const char *rt_root(void)
{
	static char root[64];

	if (root[0] == '\0') {
		snprintf(root, sizeof(root), "/tmp/ts-pools-rt-%d", (int)getpid());
		sh("mkdir -p -m 0755 '%s'", root);
	}
	return root;
}

static void put_record(struct ts_state *s, const char *id, const char *cls, const char *cpus,
		       const char *mems, const char *cgroup)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_alloc *a = ts_alloc_new(id, &err);

	sh("mkdir -p -m 0755 '%s/%s'", rt_root(), id);
	assert_non_null(a);
	a->class_name = strdup(cls);
	a->cpus_str = strdup(cpus);
	a->mems_str = strdup(mems);
	a->runtime_root = strdup(rt_root());
	a->runtime_path = strdup("/bin/false");
	a->status = TS_ALLOC_CREATED;
	a->pid = getpid();
	assert_int_equal(ts_state_proc_start_ticks(NULL, a->pid, &a->pid_start_ticks, NULL, &err),
			 0);
	a->cgroup_path = cgroup != NULL ? strdup(cgroup) : NULL;
	assert_int_equal(ts_state_put(s, a, &err), 0);
}

/* A fake cgroup v2 tree with one container cgroup whose effective sets
 * follow what is written (links to the written files). */
static void fake_cgroup(const char *dir, const char *name)
{
	sh("set -e; cd '%s'; mkdir -p cg/ts/%s; echo unified > cg/%s; cd cg/ts/%s; "
	   "echo 0-15 > cpuset.cpus; echo 0 > cpuset.mems; ln -sf cpuset.cpus "
	   "cpuset.cpus.effective; ln -sf cpuset.mems cpuset.mems.effective",
	   dir, name, TS_CGROUP_MODE_FILE, name);
}

/* The shared pool of a machine whose second die has no memory: a critical
 * container on node 0 leaves the pool on that die.  Before: the resize
 * gave it `--cpuset-mems ''` (the NUMA nodes of its cpus: none), or, with
 * the node present without memory, that node; a create at the same moment
 * gave node 0.  Now both go through ts_placement_mems(). */
static void test_rebalance_mems(void **state)
{
	static const struct {
		const char *name;
		bool remove_node;
		const char *want_mems;
	} rows[] = {
		{"die without numa node", true, "0"},
		{"numa node without memory", false, "0"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char dir[] = "/tmp/ts-pools-XXXXXX";
		cleanup_free char *xml = NULL, *path = NULL, *sdir = NULL, *cg = NULL, *text = NULL,
				  *mems = NULL;
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_state struct ts_state *s = NULL;
		struct ts_pools p = {0};
		struct tg_topo *g =
			tg_synthetic("pack:2 [numa(memory=1073741824)] l3:1 core:4 pu:2");
		const struct ts_alloc *web;

		tg_drop_memory(g, 1, rows[i].remove_node);
		assert_non_null(mkdtemp(dir));
		xml = tg_xml(g);
		tg_free(g);
		assert_true(asprintf(&path, "%s/topology.xml", dir) > 0);
		assert_int_equal(
			ts_write_file_atomic_at(AT_FDCWD, path, xml, strlen(xml), 0644, &err), 0);
		fake_cgroup(dir, "web");
		assert_true(asprintf(&cg, "%s/cg", dir) > 0);
		assert_true(asprintf(&sdir, "%s/state", dir) > 0);
		assert_true(asprintf(&text, "{\"state_dir\": \"%s\"}", sdir) > 0);
		assert_int_equal(ts_json_parse(text, strlen(text), "t.json", &config, &err), 0);
		setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
		setenv(TS_CGROUP_ROOT_ENV, cg, 1);

		assert_int_equal(
			ts_state_open(&(struct ts_state_options){.state_dir = sdir}, &s, &err), 0);
		assert_int_equal(ts_state_load(s, NULL, &err), 0);
		put_record(s, "web", "standard", "0-15", "0", "/ts/web");
		put_record(s, "db", "critical", "0-7", "0", NULL);
		assert_int_equal(ts_pools_init(config, "t.json", &p, &err), 0);
		assert_int_equal(ts_pools_load_topology(&p, sdir, &err), 0);
		if (ts_pools_rebalance(&p, s, false, &err) != 1)
			fail_msg("%s: %s", rows[i].name,
				 err != NULL ? err->msg : "nothing resized");
		web = ts_state_find(s, rt_root(), "web");
		assert_string_equal(web->cpus_str, "8-15");
		if (strcmp(web->mems_str, rows[i].want_mems) != 0)
			fail_msg("%s: record mems '%s', want '%s'", rows[i].name, web->mems_str,
				 rows[i].want_mems);
		free(path);
		assert_true(asprintf(&path, "%s/ts/web/cpuset.mems", cg) > 0);
		mems = slurp(path);
		if (strcmp(mems, "0\n") != 0)
			fail_msg("%s: cpuset.mems '%s'", rows[i].name, mems);
		ts_pools_release(&p);
		s = ts_state_close(s);
		unsetenv("TOPOSHIM_TOPOLOGY_XML");
		unsetenv(TS_CGROUP_ROOT_ENV);
		sh("rm -rf '%s'", dir);
	}
}

/* One case of a rebalance of "web" (standard; its record's cpus and pin;
 * the cpuset.cpus of its fake v2 cgroup) beside "db" (critical on 0-7), on
 * two packages of 8 PUs: what is resized, what web's record and cgroup say
 * after. */
struct web_case {
	const char *name, *record_cpus;
	bool pinned;
	const char *cgroup_cpus;
	int want_resized;
	const char *want_cpus, *want_file;
	bool want_pinned;
};

static void rebalance_web(const struct web_case *c)
{
	char dir[] = "/tmp/ts-pools-XXXXXX";
	cleanup_free char *xml = NULL, *path = NULL, *sdir = NULL, *cg = NULL, *text = NULL,
			  *file = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_pools p = {0};
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] l3:1 core:4 pu:2");
	const struct ts_alloc *web;
	struct ts_alloc *copy;
	int n;

	assert_non_null(mkdtemp(dir));
	xml = tg_xml(g);
	tg_free(g);
	assert_true(asprintf(&path, "%s/topology.xml", dir) > 0);
	assert_int_equal(ts_write_file_atomic_at(AT_FDCWD, path, xml, strlen(xml), 0644, &err), 0);
	fake_cgroup(dir, "web");
	sh("echo '%s' > '%s/cg/ts/web/cpuset.cpus'", c->cgroup_cpus, dir);
	assert_true(asprintf(&cg, "%s/cg", dir) > 0);
	assert_true(asprintf(&sdir, "%s/state", dir) > 0);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s\"}", sdir) > 0);
	assert_int_equal(ts_json_parse(text, strlen(text), "t.json", &config, &err), 0);
	setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
	setenv(TS_CGROUP_ROOT_ENV, cg, 1);
	assert_int_equal(ts_state_open(&(struct ts_state_options){.state_dir = sdir}, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	put_record(s, "web", "standard", c->record_cpus, "0", "/ts/web");
	copy = ts_alloc_dup(ts_state_find(s, rt_root(), "web"));
	assert_non_null(copy);
	copy->pinned = c->pinned;
	assert_int_equal(ts_state_put(s, copy, &err), 0);
	put_record(s, "db", "critical", "0-7", "0", NULL);
	assert_int_equal(ts_pools_init(config, "t.json", &p, &err), 0);
	assert_int_equal(ts_pools_load_topology(&p, sdir, &err), 0);
	n = ts_pools_rebalance(&p, s, false, &err);
	if (n != c->want_resized)
		fail_msg("%s: resized %d, want %d (%s)", c->name, n, c->want_resized,
			 err != NULL ? err->msg : "");
	web = ts_state_find(s, rt_root(), "web");
	if (strcmp(web->cpus_str, c->want_cpus) != 0 || web->pinned != c->want_pinned)
		fail_msg("%s: record cpus '%s' pinned %d, want '%s' %d", c->name, web->cpus_str,
			 web->pinned, c->want_cpus, c->want_pinned);
	assert_true(asprintf(&file, "%s/ts/web/cpuset.cpus", cg) > 0);
	free(text);
	text = slurp(file);
	if (strcmp(text, c->want_file) != 0)
		fail_msg("%s: cpuset.cpus '%s', want '%s'", c->name, text, c->want_file);
	/* a pinned container is left alone from now on */
	if (c->want_pinned && ts_pools_rebalance(&p, s, false, &err) != 0)
		fail_msg("%s: resized again", c->name);
	ts_pools_release(&p);
	s = ts_state_close(s);
	unsetenv("TOPOSHIM_TOPOLOGY_XML");
	unsetenv(TS_CGROUP_ROOT_ENV);
	sh("rm -rf '%s'", dir);
}

/* A cpuset someone else wrote since toposhim recorded it (`docker update
 * --cpuset-cpus`) is kept, and the container recorded as pinned there,
 * unless it takes cpus a container holds exclusively (then the resize goes
 * on, with a warning); a cpuset that is what the record says is no change.
 * helper-11: the next resize undid an operator's update without a word. */
static void test_rebalance_changed_outside(void **state)
{
	static const struct web_case rows[] = {
		{"as recorded", "0-15", false, "0-15", 1, "8-15", "8-15\n", false},
		/* helper-12: someone's cpuset that happens to be what the pool
		 * gives now is still theirs (it was undone at the next growth) */
		{"changed, to what the pool gives", "0-15", false, "8-15", 0, "8-15", "8-15\n",
		 true},
		{"no cpuset (v2: the parent's)", "0-15", false, "", 1, "8-15", "8-15\n", false},
		{"changed, outside the exclusive cpus", "0-15", false, "12-13", 0, "12-13",
		 "12-13\n", true},
		{"changed, onto the exclusive cpus", "0-15", false, "2-3", 1, "8-15", "8-15\n",
		 false},
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		rebalance_web(&rows[i]);
}

/* A pinned container (here one a create pinned) whose cpuset is set again
 * from outside is pinned there, unless that takes a container's exclusive
 * cpus: then it is set back to its pinned cpus.  helper-12: pinned ones
 * were never looked at, so a second update onto exclusive cpus went
 * unseen. */
static void test_rebalance_pinned_changed_outside(void **state)
{
	static const struct web_case rows[] = {
		{"as pinned", "12-13", true, "12-13", 0, "12-13", "12-13\n", true},
		{"set again, outside the exclusive cpus", "12-13", true, "10-11", 0, "10-11",
		 "10-11\n", true},
		{"set again, onto the exclusive cpus", "12-13", true, "6-9", 1, "12-13", "12-13\n",
		 true},
	};
	(void)state;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		rebalance_web(&rows[i]);
}

/* A shared-pool container placed with memory-tier hbm keeps its tier when
 * the pool is resized. */
static void test_rebalance_keeps_tier(void **state)
{
	char dir[] = "/tmp/ts-tier-XXXXXX";
	cleanup_free char *xml = NULL, *path = NULL, *sdir = NULL, *cg = NULL, *text = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_pools p = {0};
	struct tg_topo *g = tg_synthetic("pack:2 [numa(memory=1073741824)] core:4 pu:1");

	tg_add_memory_only(g, g->root->kids[1], 2, "HBM", 1u << 30);
	assert_non_null(mkdtemp(dir));
	xml = tg_xml(g);
	tg_free(g);
	assert_true(asprintf(&path, "%s/topology.xml", dir) > 0);
	assert_int_equal(ts_write_file_atomic_at(AT_FDCWD, path, xml, strlen(xml), 0644, &err), 0);
	fake_cgroup(dir, "hbm");
	assert_true(asprintf(&cg, "%s/cg", dir) > 0);
	assert_true(asprintf(&sdir, "%s/state", dir) > 0);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s\"}", sdir) > 0);
	assert_int_equal(ts_json_parse(text, strlen(text), "t.json", &config, &err), 0);
	setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
	setenv(TS_CGROUP_ROOT_ENV, cg, 1);
	assert_int_equal(ts_state_open(&(struct ts_state_options){.state_dir = sdir}, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	put_record(s, "hbm", "standard", "0-7", "0-2", "/ts/hbm");
	put_record(s, "db", "critical", "0-1", "0", NULL);
	assert_int_equal(ts_pools_init(config, "t.json", &p, &err), 0);
	assert_int_equal(ts_pools_load_topology(&p, sdir, &err), 0);
	assert_int_equal(ts_pools_rebalance(&p, s, false, &err), 1);
	assert_string_equal(ts_state_find(s, rt_root(), "hbm")->cpus_str, "2-7");
	assert_string_equal(ts_state_find(s, rt_root(), "hbm")->mems_str, "0-2");
	ts_pools_release(&p);
	unsetenv("TOPOSHIM_TOPOLOGY_XML");
	unsetenv(TS_CGROUP_ROOT_ENV);
	sh("rm -rf '%s'", dir);
}

/* A batch container stays on the efficiency cores when the pool changes:
 * before, the resize gave every shared container the whole pool. */
static void test_rebalance_keeps_kind(void **state)
{
	char dir[] = "/tmp/ts-kind-XXXXXX";
	cleanup_free char *xml = NULL, *path = NULL, *sdir = NULL, *cg = NULL, *text = NULL;
	cleanup_json struct ts_json *config = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_pools p = {0};
	struct tg_topo *g = tg_synthetic("pack:1 [numa(memory=1073741824)] core:8 pu:1");

	g->kinds = calloc(2, sizeof(*g->kinds));
	g->nkinds = 2;
	g->kinds[0] = (struct tg_kind){.cpus = hwloc_bitmap_alloc(), .efficiency = 0};
	g->kinds[1] = (struct tg_kind){.cpus = hwloc_bitmap_alloc(), .efficiency = 1};
	hwloc_bitmap_set_range(g->kinds[0].cpus, 4, 7);
	hwloc_bitmap_set_range(g->kinds[1].cpus, 0, 3);
	assert_non_null(mkdtemp(dir));
	xml = tg_xml(g);
	tg_free(g);
	assert_true(asprintf(&path, "%s/topology.xml", dir) > 0);
	assert_int_equal(ts_write_file_atomic_at(AT_FDCWD, path, xml, strlen(xml), 0644, &err), 0);
	fake_cgroup(dir, "b");
	assert_true(asprintf(&cg, "%s/cg", dir) > 0);
	assert_true(asprintf(&sdir, "%s/state", dir) > 0);
	assert_true(asprintf(&text, "{\"state_dir\": \"%s\"}", sdir) > 0);
	assert_int_equal(ts_json_parse(text, strlen(text), "t.json", &config, &err), 0);
	setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
	setenv(TS_CGROUP_ROOT_ENV, cg, 1);
	assert_int_equal(ts_state_open(&(struct ts_state_options){.state_dir = sdir}, &s, &err), 0);
	assert_int_equal(ts_state_load(s, NULL, &err), 0);
	put_record(s, "b", "batch", "4-7", "0", "/ts/b");
	put_record(s, "db", "critical", "0,4", "0", NULL);
	assert_int_equal(ts_pools_init(config, "t.json", &p, &err), 0);
	assert_int_equal(ts_pools_load_topology(&p, sdir, &err), 0);
	assert_int_equal(ts_pools_rebalance(&p, s, false, &err), 1);
	assert_string_equal(ts_state_find(s, rt_root(), "b")->cpus_str, "5-7");
	ts_pools_release(&p);
	unsetenv("TOPOSHIM_TOPOLOGY_XML");
	unsetenv(TS_CGROUP_ROOT_ENV);
	sh("rm -rf '%s'", dir);
}

/* A shared container under a cgroup parent narrowed to cpus 0-1 (kubepods
 * with reserved cpus) is resized within it, its record in either form
 * (/proc/<pid>/cgroup's, relative; runc's, absolute): the pool clipped to
 * the parent, the parent's cpus when the pool has none of them.  Before:
 * the whole pool was written, outside the parent (a write the kernel
 * refuses on cgroup v1, one runc update fails on). */
static void test_rebalance_within_parent(void **state)
{
	static const struct {
		const char *name, *held, *want;
	} rows[] = {
		{"nothing held", NULL, "0-1"},
		{"cpu 0 held", "0", "1"},
		{"the parent's cpus held", "0-1", "0-1"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char dir[] = "/tmp/ts-parent-XXXXXX";
		cleanup_free char *xml = NULL, *path = NULL, *sdir = NULL, *cg = NULL, *text = NULL,
				  *written = NULL;
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_state struct ts_state *s = NULL;
		struct ts_pools p = {0};
		struct tg_topo *g = tg_synthetic("pack:1 [numa(memory=1073741824)] core:4 pu:1");
		const struct ts_alloc *web;
		int n;

		assert_non_null(mkdtemp(dir));
		xml = tg_xml(g);
		tg_free(g);
		assert_true(asprintf(&path, "%s/topology.xml", dir) > 0);
		assert_int_equal(
			ts_write_file_atomic_at(AT_FDCWD, path, xml, strlen(xml), 0644, &err), 0);
		sh("set -e; cd '%s'; mkdir -p cg/kp/web; echo unified > cg/%s; "
		   "echo 0-1 > cg/kp/cpuset.cpus.effective; echo 0 > cg/kp/cpuset.mems.effective; "
		   "cd cg/kp/web; echo 0-3 > cpuset.cpus; echo 0 > cpuset.mems; "
		   "ln -sf cpuset.cpus cpuset.cpus.effective; ln -sf cpuset.mems "
		   "cpuset.mems.effective",
		   dir, TS_CGROUP_MODE_FILE);
		assert_true(asprintf(&cg, "%s/cg", dir) > 0);
		assert_true(asprintf(&sdir, "%s/state", dir) > 0);
		assert_true(asprintf(&text, "{\"state_dir\": \"%s\"}", sdir) > 0);
		assert_int_equal(ts_json_parse(text, strlen(text), "t.json", &config, &err), 0);
		setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
		setenv(TS_CGROUP_ROOT_ENV, cg, 1);
		assert_int_equal(
			ts_state_open(&(struct ts_state_options){.state_dir = sdir}, &s, &err), 0);
		assert_int_equal(ts_state_load(s, NULL, &err), 0);
		put_record(s, "web", "standard", "0-3", "0", "/kp/web");
		if (rows[i].held != NULL)
			put_record(s, "db", "critical", rows[i].held, "0", NULL);
		assert_int_equal(ts_pools_init(config, "t.json", &p, &err), 0);
		assert_int_equal(ts_pools_load_topology(&p, sdir, &err), 0);
		n = ts_pools_rebalance(&p, s, false, &err);
		if (n != 1)
			fail_msg("%s: %d resized: %s", rows[i].name, n,
				 err != NULL ? err->msg : "");
		web = ts_state_find(s, rt_root(), "web");
		if (strcmp(web->cpus_str, rows[i].want) != 0 || strcmp(web->mems_str, "0") != 0)
			fail_msg("%s: record cpus '%s' mems '%s', want '%s' '0'", rows[i].name,
				 web->cpus_str, web->mems_str, rows[i].want);
		free(path);
		assert_true(asprintf(&path, "%s/kp/web/cpuset.cpus", cg) > 0);
		written = slurp(path);
		if (strncmp(written, rows[i].want, strlen(rows[i].want)) != 0 ||
		    strcmp(written + strlen(rows[i].want), "\n") != 0)
			fail_msg("%s: cpuset.cpus '%s', want '%s'", rows[i].name, written,
				 rows[i].want);
		ts_pools_release(&p);
		s = ts_state_close(s);
		unsetenv("TOPOSHIM_TOPOLOGY_XML");
		unsetenv(TS_CGROUP_ROOT_ENV);
		sh("rm -rf '%s'", dir);
	}
}

/* The hooks get every variable the create's configuration came from.
 * Before: only PATH, TOPOSHIM_STATE_DIR and TOPOSHIM_CONFIG, so with
 * TOPOSHIM_TOPOLOGY_XML at create the poststop resize used the host. */
static void test_hook_env(void **state)
{
	cleanup_json struct ts_json *config = ts_json_new_object();
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *cwd = getcwd(NULL, 0), *want = NULL;
	static const char *const stages[] = {"createRuntime", "poststop"};

	setenv("TOPOSHIM_TOPOLOGY_XML", "topo/machine.xml", 1);
	setenv("TOPOSHIM_SYSFS_ROOT", "/srv/fake/sys", 1);
	setenv(TS_CGROUP_ROOT_ENV, "/srv/cg", 1);
	unsetenv("TOPOSHIM_PROC_ROOT");
	assert_int_equal(ts_hook_inject(config, "/usr/bin/toposhim",
					&(struct ts_hook_env){.state_dir = "/run/ts",
							      .config_path = "/etc/t.json"},
					&err),
			 0);
	assert_true(asprintf(&want, "TOPOSHIM_TOPOLOGY_XML=%s/topo/machine.xml", cwd) > 0);
	for (size_t i = 0; i < ARRAY_SIZE(stages); i++) {
		const struct ts_json *hook =
			ts_json_get_array(ts_json_get_object(config, "hooks"), stages[i])
				->u.array.items[0];
		const struct ts_json *env = ts_json_get_array(hook, "env");
		static const char *const rest[] = {
			"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "TOPOSHIM_STATE_DIR=/run/ts",
			"TOPOSHIM_CONFIG=/etc/t.json",	      NULL,
			"TOPOSHIM_SYSFS_ROOT=/srv/fake/sys",  "TOPOSHIM_CGROUP_ROOT=/srv/cg"};

		assert_int_equal(env->u.array.len, ARRAY_SIZE(rest));
		for (size_t k = 0; k < ARRAY_SIZE(rest); k++)
			assert_string_equal(env->u.array.items[k]->u.string,
					    rest[k] != NULL ? rest[k] : want);
	}
	unsetenv("TOPOSHIM_TOPOLOGY_XML");
	unsetenv("TOPOSHIM_SYSFS_ROOT");
	unsetenv(TS_CGROUP_ROOT_ENV);
}

/* A record the runtime's own state contradicts is not acted on (issue 10:
 * the state file is trusted only as far as it can be re-derived): another
 * init pid, or another cgroup, than runc's state.json names. */
static void test_rebalance_refuses_unconfirmed(void **state)
{
	static const struct {
		const char *name;
		int init_pid; /* 0: ours, the record's */
		const char *cgroup, *want_cpus;
		int want_resized;
	} rows[] = {
		{"runc names this init and cgroup", 0, "/sys/fs/cgroup/cpuset/ts/web", "8-15", 1},
		{"runc names another init", 1, "/sys/fs/cgroup/cpuset/ts/web", "0-15", 0},
		{"runc names another cgroup", 0, "/sys/fs/cgroup/cpuset/system.slice", "0-15", 0},
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		char dir[] = "/tmp/ts-pools-XXXXXX";
		cleanup_free char *path = NULL, *sdir = NULL, *cg = NULL, *text = NULL, *sj = NULL;
		cleanup_json struct ts_json *config = NULL;
		cleanup_error struct ts_error *err = NULL;
		cleanup_state struct ts_state *s = NULL;
		struct ts_pools p = {0};
		uint64_t ticks = 0;
		const struct ts_alloc *web;

		assert_non_null(mkdtemp(dir));
		assert_true(asprintf(&path, "%s/topology.xml", dir) > 0);
		sh("lstopo-no-graphics --input 'pack:2 core:4 pu:2' --of xml '%s' 2>/dev/null",
		   path);
		fake_cgroup(dir, "web");
		assert_true(asprintf(&cg, "%s/cg", dir) > 0);
		assert_true(asprintf(&sdir, "%s/state", dir) > 0);
		assert_true(asprintf(&text, "{\"state_dir\": \"%s\"}", sdir) > 0);
		assert_int_equal(ts_json_parse(text, strlen(text), "t.json", &config, &err), 0);
		setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
		setenv(TS_CGROUP_ROOT_ENV, cg, 1);
		assert_int_equal(ts_state_proc_start_ticks(NULL, getpid(), &ticks, NULL, &err), 0);
		assert_true(asprintf(&sj,
				     "{\"init_process_pid\": %d, \"init_process_start\": %llu, "
				     "\"cgroup_paths\": {\"cpuset\": \"%s\"}}",
				     rows[i].init_pid ? rows[i].init_pid : (int)getpid(),
				     (unsigned long long)ticks, rows[i].cgroup) > 0);
		assert_int_equal(
			ts_state_open(&(struct ts_state_options){.state_dir = sdir}, &s, &err), 0);
		assert_int_equal(ts_state_load(s, NULL, &err), 0);
		put_record(s, "web", "standard", "0-15", "0", "/ts/web");
		put_record(s, "db", "critical", "0-7", "0", NULL);
		free(path);
		assert_true(asprintf(&path, "%s/web/state.json", rt_root()) > 0);
		assert_int_equal(
			ts_write_file_atomic_at(AT_FDCWD, path, sj, strlen(sj), 0600, &err), 0);
		assert_int_equal(ts_pools_init(config, "t.json", &p, &err), 0);
		assert_int_equal(ts_pools_load_topology(&p, sdir, &err), 0);
		assert_int_equal(ts_pools_rebalance(&p, s, false, &err), rows[i].want_resized);
		web = ts_state_find(s, rt_root(), "web");
		if (strcmp(web->cpus_str, rows[i].want_cpus) != 0)
			fail_msg("%s: cpus '%s'", rows[i].name, web->cpus_str);
		ts_pools_release(&p);
		s = ts_state_close(s);
		unlink(path);
		unsetenv("TOPOSHIM_TOPOLOGY_XML");
		unsetenv(TS_CGROUP_ROOT_ENV);
		sh("rm -rf '%s'", dir);
	}
}

static int cleanup_rt(void **state)
{
	(void)state;
	sh("rm -rf '%s'", rt_root());
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rebalance_mems),
		cmocka_unit_test(test_rebalance_refuses_unconfirmed),
		cmocka_unit_test(test_rebalance_keeps_tier),
		cmocka_unit_test(test_rebalance_keeps_kind),
		cmocka_unit_test(test_rebalance_within_parent),
		cmocka_unit_test(test_rebalance_changed_outside),
		cmocka_unit_test(test_rebalance_pinned_changed_outside),
		cmocka_unit_test(test_hook_env),
	};

	/* the resize logs what it does; the assertions read the records */
	return cmocka_run_group_tests(tests, NULL, cleanup_rt);
}
