/*
 * test-property - seeded random request sequences through the real create
 * path, hooks and store, on generated topologies, with the placement
 * invariants checked after every step.
 *
 * Each seed makes a topology (topogen.h: a random synthetic machine, or a
 * corpus file transformed, when TS_SHARED_DIR has one), a placement config
 * (reserved CPUs, full cores, L3 alignment, ...), five CDI devices on
 * chosen NUMA nodes (some memory-only or absent) and a sequence of steps:
 * creates (classes, counts, numa modes, memory tiers, devices, pinned cpus,
 * explicit mems, quota-derived classes), deletes (the poststop hook) and
 * exits (the container dies; a later create collects it).  A create runs
 * ts_cmd_create() in-process (runtime /bin/true, never executed), then the
 * createRuntime hook with a live child process as the container's init and
 * a fake cgroup v2 tree, so that resizes of the shared pool happen for real.
 *
 * Checked after every step: no two exclusive sets overlap; none overlaps
 * reserved CPUs or pinned ones placed before it; every set is within the
 * online, allowed PUs; the count is what was asked; single NUMA domain when
 * asked (and for exclusive requests whenever one domain could hold them);
 * device-local when the device-local PUs could hold them; mems are nodes
 * with memory, hold the home mems of the cpus and a node of the asked tier;
 * the store equals what config.json (or, once resized, the cgroup) says; a
 * failed create says one line naming the file, leaves config.json and the
 * store byte-identical; after all deletes nothing is held.
 *
 * A failure prints the seed and the shortest step list found (steps are
 * removed while the failure persists) in the syntax of property-cases.txt,
 * whose cases run first on every run.
 *
 * TS_PROPERTY_SEEDS=N runs N seeds (default 40, 4 under valgrind or ASan;
 * TS_CHECK_LONG=1, as `make check-long` sets, runs 100 times as many), and
 * N / 20 + 1 per corpus file; TS_PROPERTY_SEED=S runs seed S only;
 * TS_PROPERTY_KEEP=1 keeps each run's directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "../require.h"
#include "cgroup/cgroup.h"
#include "cli/cmd-create.h"
#include "cli/cmd-hook.h"
#include "cli/pools.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "state/state.h"
#include "topogen.h"
#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define NDEV 5
#define MAX_LIVE 64

/* ---- scenarios -------------------------------------------------------- */

enum step_kind { STEP_CREATE, STEP_DELETE, STEP_EXIT };

struct step {
	enum step_kind kind;
	unsigned pick; /* delete/exit: index into the live containers, modulo */
	/* create */
	char cls[16];	 /* "", "critical", "standard", "batch", "held" */
	unsigned cpus;	 /* toposhim.io/cpus, 0: none */
	unsigned quota;	 /* cpu limit in cpus from quota/period, 0: none */
	bool guaranteed; /* shares == quota * 1024 */
	char numa[12];	 /* "", "prefer", "single", "exclusive" */
	char tier[8];	 /* "", "dram", "hbm", "pmem", "cxl", "gpu" */
	int device;	 /* -1, or 0..NDEV-1 */
	char pin[64];	 /* linux.resources.cpu.cpus, "" none */
	char mems[16];	 /* linux.resources.cpu.mems, "" none */
};

struct scenario {
	uint64_t seed;
	char base[96]; /* corpus file name, "" for generated */
	struct step *steps;
	size_t n;
};

/* What the seed makes besides the steps: topology, config and devices. */
struct world {
	struct tg_topo *gen;
	struct ts_topology *topo;
	char config_text[2048];
	long dev_node[NDEV]; /* sysfs numa_node of each device, -1: none */
	unsigned reserved_count;
	bool full_cores;
};

static const char *const dev_paths[NDEV] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random",
					    "/dev/urandom"};

static const char *corpus_dir(void)
{
	static char buf[512];
	const char *shared = getenv("TS_SHARED_DIR");

	if (shared == NULL || shared[0] == '\0')
		return NULL;
	snprintf(buf, sizeof(buf), "%s/corpus/topology", shared);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

static void pick_list(struct tg_rng *r, hwloc_const_bitmap_t from, unsigned n, char *out,
		      size_t len)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int w = hwloc_bitmap_weight(from);

	for (unsigned i = 0; w > 0 && i < n; i++) {
		int k = (int)tg_below(r, (unsigned)w), pu = hwloc_bitmap_first(from);
		while (k-- > 0)
			pu = hwloc_bitmap_next(from, pu);
		hwloc_bitmap_set(b, (unsigned)pu);
	}
	if (hwloc_bitmap_iszero(b))
		out[0] = '\0';
	else
		hwloc_bitmap_list_snprintf(out, len, b);
	hwloc_bitmap_free(b);
}

/* The steps of a seed, given its topology. */
static void make_steps(struct scenario *sc, const struct world *w, size_t nsteps)
{
	static const char *const classes[] = {"critical", "critical", "critical", "standard",
					      "batch",	  "",	      "held"};
	static const char *const numas[] = {"", "", "", "prefer", "single", "exclusive"};
	static const char *const tiers[] = {"", "", "", "", "dram", "hbm", "pmem", "cxl", "gpu"};
	struct tg_rng r = {sc->seed ^ 0x5eedULL};
	int online = hwloc_bitmap_weight(w->topo->online);
	hwloc_bitmap_t nodes = tg_numa_set(w->gen);

	sc->steps = calloc(nsteps + 1, sizeof(*sc->steps));
	sc->n = nsteps;
	for (size_t i = 0; i < nsteps; i++) {
		struct step *s = &sc->steps[i];
		unsigned roll = tg_below(&r, 10);

		s->device = -1;
		if (i > 2 && roll < 2) {
			s->kind = STEP_DELETE;
			s->pick = tg_below(&r, 1000);
			continue;
		}
		if (i > 2 && roll == 2) {
			s->kind = STEP_EXIT;
			s->pick = tg_below(&r, 1000);
			continue;
		}
		s->kind = STEP_CREATE;
		snprintf(s->cls, sizeof(s->cls), "%s", classes[tg_below(&r, 7)]);
		unsigned big = (unsigned)online / 3 + 1;
		unsigned n = tg_below(&r, 4) == 0 ? 1 + tg_below(&r, big) : 1 + tg_below(&r, 8);
		if (s->cls[0] == '\0' || tg_below(&r, 3) == 0) {
			s->quota = n;
			s->guaranteed = tg_below(&r, 4) != 0;
		} else {
			s->cpus = n;
		}
		snprintf(s->numa, sizeof(s->numa), "%s", numas[tg_below(&r, 6)]);
		snprintf(s->tier, sizeof(s->tier), "%s", tiers[tg_below(&r, 9)]);
		if (tg_below(&r, 3) == 0)
			s->device = (int)tg_below(&r, NDEV);
		if (tg_below(&r, 12) == 0)
			pick_list(&r, w->topo->online, 1 + tg_below(&r, 3), s->pin, sizeof(s->pin));
		if (tg_below(&r, 15) == 0)
			pick_list(&r, nodes, 1, s->mems, sizeof(s->mems));
	}
	hwloc_bitmap_free(nodes);
}

/* ---- step text (property-cases.txt) ----------------------------------- */

static void step_str(const struct step *s, char *buf, size_t len)
{
	if (s->kind != STEP_CREATE) {
		snprintf(buf, len, "%s%u", s->kind == STEP_DELETE ? "delete:" : "exit:", s->pick);
		return;
	}
	snprintf(buf, len, "create:%s:%u:%u%s:%s:%s:%d:%s:%s", s->cls[0] ? s->cls : "-", s->cpus,
		 s->quota, s->guaranteed ? "g" : "", s->numa[0] ? s->numa : "-",
		 s->tier[0] ? s->tier : "-", s->device, s->pin[0] ? s->pin : "-",
		 s->mems[0] ? s->mems : "-");
}

static int field(char **p, char *out, size_t len)
{
	char *end = strchr(*p, ':');
	size_t n = end != NULL ? (size_t)(end - *p) : strlen(*p);

	if (n >= len)
		return -1;
	memcpy(out, *p, n);
	out[n] = '\0';
	if (strcmp(out, "-") == 0)
		out[0] = '\0';
	*p += n + (end != NULL);
	return 0;
}

static int step_parse(const char *text, struct step *s)
{
	char buf[256], num[32], dev[8];
	char *p = buf;

	snprintf(buf, sizeof(buf), "%s", text);
	*s = (struct step){.device = -1};
	if (sscanf(text, "delete:%u", &s->pick) == 1) {
		s->kind = STEP_DELETE;
		return 0;
	}
	if (sscanf(text, "exit:%u", &s->pick) == 1) {
		s->kind = STEP_EXIT;
		return 0;
	}
	if (strncmp(p, "create:", 7) != 0)
		return -1;
	p += 7;
	s->kind = STEP_CREATE;
	if (field(&p, s->cls, sizeof(s->cls)) < 0 || field(&p, num, sizeof(num)) < 0)
		return -1;
	s->cpus = (unsigned)strtoul(num, NULL, 10);
	if (field(&p, num, sizeof(num)) < 0)
		return -1;
	s->quota = (unsigned)strtoul(num, NULL, 10);
	s->guaranteed = strchr(num, 'g') != NULL;
	if (field(&p, s->numa, sizeof(s->numa)) < 0 || field(&p, s->tier, sizeof(s->tier)) < 0 ||
	    field(&p, dev, sizeof(dev)) < 0 || field(&p, s->pin, sizeof(s->pin)) < 0 ||
	    field(&p, s->mems, sizeof(s->mems)) < 0)
		return -1;
	s->device = (int)strtol(dev, NULL, 10);
	return 0;
}

/* ---- the world of a seed ---------------------------------------------- */

static void world_free(struct world *w)
{
	tg_free(w->gen);
	ts_topology_free(w->topo);
	*w = (struct world){0};
}

static int make_world(const struct scenario *sc, struct world *w, const char *dir)
{
	struct tg_rng r = {sc->seed * 0x9e37ULL + 1};
	struct tg_topo *base = NULL;
	cleanup_free char *xml = NULL;
	cleanup_error struct ts_error *err = NULL;
	char path[600];

	*w = (struct world){0};
	if (sc->base[0] != '\0') {
		snprintf(path, sizeof(path), "%s/%s", corpus_dir(), sc->base);
		base = tg_from_xml_file(path);
		if (base == NULL)
			return -1;
	}
	w->gen = tg_random(sc->seed, base);
	tg_free(base);
	xml = tg_xml(w->gen);
	snprintf(path, sizeof(path), "%s/topology.xml", dir);
	if (ts_write_file_atomic_at(AT_FDCWD, path, xml, strlen(xml), 0644, &err) < 0 ||
	    ts_topology_load_xml_buffer(xml, "generated", &w->topo, &err) < 0) {
		fprintf(stderr, "seed %" PRIu64 ": %s\n", sc->seed, err->msg);
		return -1;
	}
	/* devices: on CPU nodes mostly, some on memory-only or absent ones */
	hwloc_bitmap_t nodes = tg_numa_set(w->gen);
	for (int i = 0; i < NDEV; i++) {
		unsigned k = tg_below(&r, 8);
		int idx = (int)tg_below(&r, (unsigned)hwloc_bitmap_weight(nodes)), node = -1;

		for (node = hwloc_bitmap_first(nodes); idx-- > 0;)
			node = hwloc_bitmap_next(nodes, node);
		w->dev_node[i] = k == 0 ? -1 : k == 1 ? 63 : node;
	}
	hwloc_bitmap_free(nodes);
	/* the placement config */
	int online = hwloc_bitmap_weight(w->topo->online);
	w->reserved_count = online > 4 && tg_below(&r, 2) ? 1 + tg_below(&r, 2) : 0;
	w->full_cores = tg_below(&r, 5) == 0;
	snprintf(w->config_text, sizeof(w->config_text),
		 "{\"state_dir\": \"%s/state\", \"gc_grace_seconds\": 3600,"
		 " \"cdi\": {\"spec_dirs\": [\"%s/cdi\"], \"require_root_owned\": false,"
		 " \"index_path\": null},"
		 " \"placement\": {\"reserved\": {\"count\": %u, \"shared_may_use\": %s},"
		 " \"full_cores_only\": %s, \"align_l3\": %s, \"distribute_across_numa\": %s,"
		 " \"distribute_across_cores\": %s, \"performance_threshold\": %s,"
		 " \"classes\": {\"held\": {\"pool\": \"reserved\"}}}}",
		 dir, dir, w->reserved_count, tg_below(&r, 3) ? "true" : "false",
		 w->full_cores ? "true" : "false", tg_below(&r, 4) ? "true" : "false",
		 tg_below(&r, 6) == 0 ? "true" : "false", tg_below(&r, 6) == 0 ? "true" : "false",
		 tg_below(&r, 2) ? "0.5" : "0.9");
	return 0;
}

/* ---- the host side: files, children, hooks ---------------------------- */

struct live {
	char id[32];
	pid_t child;
	unsigned want;	   /* exclusive: cpus asked */
	bool exited;	   /* the child is gone; the record waits for a gc */
	unsigned order;	   /* creation order */
	struct step step;  /* the request */
	char *config_json; /* config.json as written by the create */
};

struct run {
	const struct scenario *sc;
	struct world w;
	char dir[200];
	struct ts_json *config;
	char config_path[300];
	struct live live[MAX_LIVE];
	size_t nlive;
	unsigned next_id, order;
	char failure[4096];
	int err_fd, saved_stderr;
};

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

static void put_file(const char *dir, const char *name, const char *text)
{
	char path[600];
	cleanup_error struct ts_error *err = NULL;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (ts_write_file_atomic_at(AT_FDCWD, path, text, strlen(text), 0644, &err) < 0)
		fail_msg("%s", err->msg);
}

static char *get_file(const char *path)
{
	cleanup_error struct ts_error *err = NULL;
	char *buf = NULL;

	if (ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err) < 0)
		return NULL;
	return buf;
}

/* The host: a fake cgroup v2 tree, a fake sysfs for the devices' NUMA
 * nodes, a CDI spec with one device per device node. */
static void host_setup(struct run *run)
{
	FILE *f;
	char path[600];

	sh("set -e; cd '%s'; mkdir -p cg/ts state rt b proc cdi sys/dev/char; echo unified > "
	   "cg/%s",
	   run->dir, TS_CGROUP_MODE_FILE);
	for (int i = 0; i < NDEV; i++) {
		struct stat st;

		assert_int_equal(stat(dev_paths[i], &st), 0);
		sh("set -e; cd '%s/sys'; mkdir -p devices/pci0000:00/0000:00:0%d.0; "
		   "ln -s ../../devices/pci0000:00/0000:00:0%d.0 dev/char/%u:%u",
		   run->dir, i, i, major(st.st_rdev), minor(st.st_rdev));
		if (run->w.dev_node[i] >= 0)
			sh("echo %ld > '%s/sys/devices/pci0000:00/0000:00:0%d.0/numa_node'",
			   run->w.dev_node[i], run->dir, i);
	}
	snprintf(path, sizeof(path), "%s/cdi/devices.yaml", run->dir);
	f = fopen(path, "we");
	assert_non_null(f);
	fprintf(f, "cdiVersion: \"0.6.0\"\nkind: property.toposhim/dev\ndevices:\n");
	for (int i = 0; i < NDEV; i++)
		fprintf(f,
			"  - name: d%d\n    containerEdits:\n      deviceNodes:\n        - path: "
			"/dev/xd%d\n          hostPath: %s\n",
			i, i, dev_paths[i]);
	fclose(f);
	put_file(run->dir, "toposhim.json", run->w.config_text);
	snprintf(run->config_path, sizeof(run->config_path), "%s/toposhim.json", run->dir);
	cleanup_error struct ts_error *err = NULL;
	if (ts_json_parse(run->w.config_text, strlen(run->w.config_text), run->config_path,
			  &run->config, &err) < 0)
		fail_msg("%s", err->msg);
	snprintf(path, sizeof(path), "%s/topology.xml", run->dir);
	setenv("TOPOSHIM_TOPOLOGY_XML", path, 1);
	snprintf(path, sizeof(path), "%s/cg", run->dir);
	setenv(TS_CGROUP_ROOT_ENV, path, 1);
	snprintf(path, sizeof(path), "%s/sys", run->dir);
	setenv("TOPOSHIM_SYSFS_ROOT", path, 1);
	/* what the hooks get in their environment (cmd-hook.h) */
	snprintf(path, sizeof(path), "%s/state", run->dir);
	setenv("TOPOSHIM_STATE_DIR", path, 1);
	unsetenv("TOPOSHIM_PROC_ROOT");
}

/* config.json of one create. */
static char *bundle_config(const struct step *s)
{
	char ann[512] = "", cpu[512] = "", *out = NULL;
	size_t n = 0;

	if (s->cls[0])
		n += (size_t)snprintf(ann + n, sizeof(ann) - n, "%s\"toposhim.io/class\":\"%s\"",
				      n ? "," : "", s->cls);
	if (s->cpus)
		n += (size_t)snprintf(ann + n, sizeof(ann) - n, "%s\"toposhim.io/cpus\":\"%u\"",
				      n ? "," : "", s->cpus);
	if (s->numa[0])
		n += (size_t)snprintf(ann + n, sizeof(ann) - n, "%s\"toposhim.io/numa\":\"%s\"",
				      n ? "," : "", s->numa);
	if (s->tier[0])
		n += (size_t)snprintf(ann + n, sizeof(ann) - n,
				      "%s\"toposhim.io/memory-tier\":\"%s\"", n ? "," : "",
				      s->tier);
	if (s->device >= 0)
		n += (size_t)snprintf(ann + n, sizeof(ann) - n,
				      "%s\"cdi.k8s.io/dev\":\"property.toposhim/dev=d%d\"",
				      n ? "," : "", s->device);
	n = 0;
	if (s->quota)
		n += (size_t)snprintf(cpu + n, sizeof(cpu) - n,
				      "\"quota\":%u,\"period\":100000,\"shares\":%u",
				      s->quota * 100000, s->guaranteed ? s->quota * 1024 : 2);
	if (s->pin[0])
		n += (size_t)snprintf(cpu + n, sizeof(cpu) - n, "%s\"cpus\":\"%s\"", n ? "," : "",
				      s->pin);
	if (s->mems[0])
		n += (size_t)snprintf(cpu + n, sizeof(cpu) - n, "%s\"mems\":\"%s\"", n ? "," : "",
				      s->mems);
	if (asprintf(&out,
		     "{\"ociVersion\":\"1.0.2\",\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
		     "\"root\":{\"path\":\"rootfs\"},\"annotations\":{%s},"
		     "\"linux\":{\"resources\":{\"cpu\":{%s}}}}",
		     ann, cpu) < 0)
		abort();
	return out;
}

/* A child standing in for the container's init: it waits to be killed. */
static pid_t spawn(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	(void)waitpid(pid, NULL, 0);
}

/* The runtime root of the run's containers (the create's --root). */
static const char *run_root(const struct run *run)
{
	static char rt[400];

	snprintf(rt, sizeof(rt), "%s/rt", run->dir);
	return rt;
}

/* The createRuntime hook, as `toposhim hook create-runtime` runs it, with a
 * proc tree whose <pid>/cgroup names the container's own fake cgroup. */
static int hook_created(struct run *run, struct live *l, struct ts_error **err)
{
	char proc[600], path[700];
	cleanup_free char *stat = NULL;
	struct ts_hook_state st = {
		.container_id = l->id, .pid = l->child, .runtime_root = run_root(run)};
	struct ts_pools pools = {0};
	int r;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)l->child);
	/* the child may not have run yet: its stat exists from fork on */
	stat = get_file(path);
	if (stat == NULL)
		return ts_error_set(err, ESRCH, "no stat for %d", (int)l->child);
	snprintf(proc, sizeof(proc), "%s/proc/%d", run->dir, (int)l->child);
	sh("mkdir -p '%s'", proc);
	put_file(proc, "stat", stat);
	snprintf(path, sizeof(path), "0::/ts/%s\n", l->id);
	put_file(proc, "cgroup", path);
	snprintf(proc, sizeof(proc), "%s/proc", run->dir);
	r = ts_pools_init(run->config, run->config_path, &pools, err);
	if (r >= 0)
		r = ts_hook_create_runtime_record(
			&st, &(struct ts_state_options){.state_dir = NULL, .proc_root = proc},
			&pools, NULL, NULL, err);
	ts_pools_release(&pools);
	return r;
}

/* ---- invariants -------------------------------------------------------- */

static bool failf(struct run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool failf(struct run *run, const char *fmt, ...)
{
	va_list ap;

	if (run->failure[0] != '\0')
		return false;
	va_start(ap, fmt);
	vsnprintf(run->failure, sizeof(run->failure), fmt, ap);
	va_end(ap);
	return false;
}

static hwloc_bitmap_t parse_list(const char *s)
{
	hwloc_bitmap_t b = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (s == NULL || ts_cpulist_parse(s, &b, &err) < 0)
		return hwloc_bitmap_alloc();
	return b;
}

static const char *str(hwloc_const_bitmap_t b)
{
	static char buf[8][2048];
	static int k;

	k = (k + 1) % 8;
	if (hwloc_bitmap_iszero(b))
		snprintf(buf[k], sizeof(buf[k]), "(none)");
	else
		hwloc_bitmap_list_snprintf(buf[k], sizeof(buf[k]), b);
	return buf[k];
}

static struct live *find_live(struct run *run, const char *id)
{
	for (size_t i = 0; i < run->nlive; i++)
		if (strcmp(run->live[i].id, id) == 0)
			return &run->live[i];
	return NULL;
}

static struct ts_state *open_store(struct run *run)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_state *s = NULL;
	char dir[400];

	snprintf(dir, sizeof(dir), "%s/state", run->dir);
	if (ts_state_open(&(struct ts_state_options){.state_dir = dir}, &s, &err) < 0 ||
	    ts_state_load(s, NULL, &err) < 0) {
		failf(run, "store: %s", err->msg);
		ts_state_close(s);
		return NULL;
	}
	return s;
}

/* The PUs free for exclusive use in a store (reserved, exclusive and pinned
 * PUs taken out), and with full_cores_only the whole free cores of them. */
static hwloc_bitmap_t free_pus(struct run *run, const struct ts_state *s, struct ts_pools *pools)
{
	const struct ts_topology *t = run->w.topo;
	hwloc_bitmap_t avail = hwloc_bitmap_dup(t->online), reserved = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_placement_reserved(&pools->placement, t, &reserved, &err) == 0) {
		hwloc_bitmap_andnot(avail, avail, reserved);
		hwloc_bitmap_free(reserved);
	}
	for (size_t i = 0; i < ts_state_count(s); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);
		enum ts_placement_pool pool = ts_pools_pool_of(pools, a);
		hwloc_bitmap_t c;

		if (pool == TS_PLACEMENT_POOL_SHARED || pool == TS_PLACEMENT_POOL_RESERVED)
			continue;
		c = parse_list(a->cpus_str);
		hwloc_bitmap_andnot(avail, avail, c);
		hwloc_bitmap_free(c);
	}
	if (run->w.full_cores) {
		hwloc_bitmap_t whole = hwloc_bitmap_alloc();
		for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_CORE]; i++)
			if (hwloc_bitmap_isincluded(t->groups[TS_CPU_LEVEL_CORE][i].cpus, avail))
				hwloc_bitmap_or(whole, whole, t->groups[TS_CPU_LEVEL_CORE][i].cpus);
		hwloc_bitmap_copy(avail, whole);
		hwloc_bitmap_free(whole);
	}
	return avail;
}

/* The NUMA domains (topology groups) that cpus touch. */
static unsigned domains_of(const struct ts_topology *t, hwloc_const_bitmap_t cpus)
{
	unsigned n = 0;

	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++)
		n += hwloc_bitmap_intersects(t->groups[TS_CPU_LEVEL_NUMA][i].cpus, cpus);
	return n;
}

/* The PUs a device's NUMA node points at (as the placement resolves it). */
static hwloc_bitmap_t device_cpus(const struct ts_topology *t, long node)
{
	hwloc_bitmap_t out = hwloc_bitmap_alloc();
	const struct ts_numa_node *n = node >= 0 ? ts_topology_numa_node(t, (unsigned)node) : NULL;

	if (n == NULL)
		return out;
	if (!n->memory_only) {
		hwloc_bitmap_copy(out, n->cpus);
		return out;
	}
	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++)
		if (hwloc_bitmap_intersects(t->groups[TS_CPU_LEVEL_NUMA][i].cpus, n->local_cpus))
			hwloc_bitmap_or(out, out, t->groups[TS_CPU_LEVEL_NUMA][i].cpus);
	return out;
}

/* mems of a record: nodes with memory, the home mems of its cpus, and a
 * node of the asked tier. */
static bool check_mems(struct run *run, const char *id, hwloc_const_bitmap_t cpus,
		       hwloc_const_bitmap_t mems, const struct step *req)
{
	const struct ts_topology *t = run->w.topo;
	hwloc_bitmap_t home = hwloc_bitmap_alloc();
	enum ts_memory_tier tier =
		req->tier[0] ? ts_memory_tier_from_string(req->tier) : TS_MEMORY_TIER_DRAM;
	bool ok = true, has_tier = false;
	unsigned n;

	if (hwloc_bitmap_iszero(mems))
		ok = failf(run, "'%s': empty mems", id);
	hwloc_bitmap_foreach_begin(n, mems)
		{
			const struct ts_numa_node *nd = ts_topology_numa_node(t, n);
			if (nd == NULL || !nd->has_memory)
				ok = failf(run, "'%s': mems %s: node %u %s", id, str(mems), n,
					   nd == NULL ? "does not exist" : "has no memory");
			else if (nd->tier == tier)
				has_tier = true;
		}
	hwloc_bitmap_foreach_end();
	if (req->mems[0] != '\0')
		goto out; /* explicit mems are honoured as given */
	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++)
		if (hwloc_bitmap_intersects(t->groups[TS_CPU_LEVEL_NUMA][i].cpus, cpus))
			hwloc_bitmap_or(home, home, t->groups[TS_CPU_LEVEL_NUMA][i].mems);
	if (ok && !hwloc_bitmap_isincluded(home, mems))
		ok = failf(run, "'%s': mems %s lack the home mems %s of cpus %s", id, str(mems),
			   str(home), str(cpus));
	if (ok && tier == TS_MEMORY_TIER_DRAM && !hwloc_bitmap_isequal(home, mems))
		ok = failf(run, "'%s': dram mems %s are not the home mems %s of cpus %s", id,
			   str(mems), str(home), str(cpus));
	/* DRAM: when the machine has DRAM with memory at all */
	bool has_dram = false;
	for (size_t i = 0; i < t->n_numa_nodes; i++)
		has_dram |=
			t->numa_nodes[i].has_memory && t->numa_nodes[i].tier == TS_MEMORY_TIER_DRAM;
	if (ok && !has_tier && (tier != TS_MEMORY_TIER_DRAM || has_dram))
		ok = failf(run, "'%s': mems %s hold no node of tier %s", id, str(mems),
			   ts_memory_tier_to_string(tier));
out:
	hwloc_bitmap_free(home);
	return ok;
}

/* What config.json says, or once resized, the fake cgroup. */
static void check_recorded(struct run *run, const struct ts_alloc *a, struct live *l, bool shared)
{
	cleanup_json struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;
	const char *cpus = NULL, *mems = NULL;
	char path[700];

	if (l->config_json == NULL ||
	    ts_json_parse(l->config_json, strlen(l->config_json), "config.json", &j, &err) < 0) {
		failf(run, "'%s': no config.json", a->container_id);
		return;
	}
	cpus = ts_json_get_string(ts_json_get_path(j, "linux", "resources", "cpu", NULL), "cpus");
	mems = ts_json_get_string(ts_json_get_path(j, "linux", "resources", "cpu", NULL), "mems");
	if (shared && a->status == TS_ALLOC_CREATED) {
		cleanup_free char *c = NULL, *m = NULL;

		snprintf(path, sizeof(path), "%s/cg/ts/%s/cpuset.cpus", run->dir, a->container_id);
		c = get_file(path);
		snprintf(path, sizeof(path), "%s/cg/ts/%s/cpuset.mems", run->dir, a->container_id);
		m = get_file(path);
		if (c != NULL && (c[0] == '\0' || c[strlen(c) - 1] == '\n'))
			c[c[0] ? strlen(c) - 1 : 0] = '\0';
		if (m != NULL && (m[0] == '\0' || m[strlen(m) - 1] == '\n'))
			m[m[0] ? strlen(m) - 1 : 0] = '\0';
		if (c == NULL || strcmp(c, a->cpus_str) != 0 || m == NULL ||
		    strcmp(m, a->mems_str) != 0)
			failf(run, "'%s': store cpus %s mems %s, cgroup cpus %s mems %s",
			      a->container_id, a->cpus_str, a->mems_str, c ? c : "?", m ? m : "?");
		return;
	}
	if (cpus == NULL || strcmp(cpus, a->cpus_str) != 0)
		failf(run, "'%s': store cpus '%s', config.json '%s'", a->container_id, a->cpus_str,
		      cpus ? cpus : "(none)");
	if ((mems != NULL ? mems : "")[0] != '\0' && strcmp(mems, a->mems_str) != 0)
		failf(run, "'%s': store mems '%s', config.json '%s'", a->container_id, a->mems_str,
		      mems);
}

/* After every step: the store against the topology and the requests. */
static bool check_store(struct run *run)
{
	const struct ts_topology *t = run->w.topo;
	cleanup_error struct ts_error *err = NULL;
	struct ts_pools pools = {0};
	struct ts_state *s = open_store(run);
	hwloc_bitmap_t excl = hwloc_bitmap_alloc(), reserved = NULL, pool = NULL;
	bool ok = true;

	if (s == NULL)
		return false;
	if (ts_pools_init(run->config, run->config_path, &pools, &err) < 0 ||
	    ts_placement_reserved(&pools.placement, t, &reserved, &err) < 0) {
		ok = failf(run, "config: %s", err->msg);
		goto out;
	}
	/* the shared pool as the placement computes it */
	{
		struct ts_allocation *allocs = NULL;
		hwloc_bitmap_t *bitmaps = NULL;
		int n = ts_pools_views(&pools, s, &allocs, &bitmaps, &err);
		if (n < 0 || ts_placement_shared_pool(&pools.placement, t, allocs, (size_t)n, &pool,
						      &err) < 0)
			ok = failf(run, "views: %s", err->msg);
		ts_pools_views_free(allocs, bitmaps, n > 0 ? (size_t)n : 0);
	}
	for (size_t i = 0; ok && i < ts_state_count(s); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);
		struct live *l = find_live(run, a->container_id);
		enum ts_placement_pool p = ts_pools_pool_of(&pools, a);
		hwloc_bitmap_t cpus = parse_list(a->cpus_str), mems = parse_list(a->mems_str);

		if (l == NULL) {
			ok = failf(run, "'%s': recorded, but no create made it", a->container_id);
		} else if (hwloc_bitmap_iszero(cpus) || !hwloc_bitmap_isincluded(cpus, t->online)) {
			ok = failf(run, "'%s': cpus '%s' not within the online, allowed cpus %s",
				   a->container_id, a->cpus_str, str(t->online));
		} else if ((p == TS_PLACEMENT_POOL_EXCLUSIVE ||
			    p == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE) &&
			   hwloc_bitmap_intersects(cpus, excl)) {
			ok = failf(run, "'%s': exclusive cpus %s overlap another's",
				   a->container_id, a->cpus_str);
		} else if ((p == TS_PLACEMENT_POOL_EXCLUSIVE ||
			    p == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE) &&
			   hwloc_bitmap_intersects(cpus, reserved)) {
			ok = failf(run, "'%s': exclusive cpus %s overlap the reserved %s",
				   a->container_id, a->cpus_str, str(reserved));
		} else if (p == TS_PLACEMENT_POOL_EXCLUSIVE &&
			   (unsigned)hwloc_bitmap_weight(cpus) != l->want) {
			ok = failf(run, "'%s': %d cpus, asked %u", a->container_id,
				   hwloc_bitmap_weight(cpus), l->want);
		} else if (p == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE) {
			bool whole = false;
			for (size_t k = 0; k < t->n_groups[TS_CPU_LEVEL_NUMA]; k++)
				whole |= hwloc_bitmap_isequal(t->groups[TS_CPU_LEVEL_NUMA][k].cpus,
							      cpus);
			if (!whole)
				ok = failf(run,
					   "'%s': numa exclusive cpus %s are not one numa node",
					   a->container_id, a->cpus_str);
		} else if (p == TS_PLACEMENT_POOL_SHARED && a->status == TS_ALLOC_CREATED &&
			   !l->exited) {
			hwloc_bitmap_t want = NULL;
			if (ts_placement_pool_cpus(&pools.placement, t, pool, a->class_name, &want,
						   &err) < 0)
				ok = failf(run, "pool cpus: %s", err->msg);
			else if (!hwloc_bitmap_isequal(cpus, want))
				ok = failf(run, "'%s': shared cpus %s, pool %s gives class %s %s",
					   a->container_id, a->cpus_str, str(pool), a->class_name,
					   str(want));
			if (want != NULL)
				hwloc_bitmap_free(want);
		}
		if (ok &&
		    (p == TS_PLACEMENT_POOL_EXCLUSIVE || p == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE) &&
		    (strcmp(l->step.numa, "single") == 0 ||
		     strcmp(l->step.numa, "exclusive") == 0) &&
		    domains_of(t, cpus) != 1)
			ok = failf(run, "'%s': numa %s, cpus %s in %u numa nodes", a->container_id,
				   l->step.numa, a->cpus_str, domains_of(t, cpus));
		if (ok && p == TS_PLACEMENT_POOL_EXCLUSIVE) {
			/* pinned cpus placed before it */
			for (size_t k = 0; ok && k < ts_state_count(s); k++) {
				const struct ts_alloc *o = ts_state_at(s, k);
				struct live *ol = find_live(run, o->container_id);
				hwloc_bitmap_t oc;

				if (ts_pools_pool_of(&pools, o) != TS_PLACEMENT_POOL_PINNED ||
				    ol == NULL || ol->order > l->order)
					continue;
				oc = parse_list(o->cpus_str);
				if (hwloc_bitmap_intersects(oc, cpus))
					ok = failf(run,
						   "'%s': exclusive cpus %s overlap the pinned "
						   "cpus %s of '%s' placed before",
						   a->container_id, a->cpus_str, o->cpus_str,
						   o->container_id);
				hwloc_bitmap_free(oc);
			}
		}
		if (ok && p == TS_PLACEMENT_POOL_PINNED) {
			hwloc_bitmap_t want = parse_list(l->step.pin);
			if (!hwloc_bitmap_isequal(want, cpus))
				ok = failf(run, "'%s': pinned cpus %s, asked %s", a->container_id,
					   a->cpus_str, l->step.pin);
			hwloc_bitmap_free(want);
		}
		/* a pinned container's config.json is left as the user wrote it:
		 * without mems there, it has none recorded */
		if (ok && !(p == TS_PLACEMENT_POOL_PINNED && hwloc_bitmap_iszero(mems)))
			ok = check_mems(run, a->container_id, cpus, mems, &l->step);
		if (ok)
			check_recorded(run, a, l, p == TS_PLACEMENT_POOL_SHARED);
		ok = ok && run->failure[0] == '\0';
		if (p == TS_PLACEMENT_POOL_EXCLUSIVE || p == TS_PLACEMENT_POOL_NUMA_EXCLUSIVE)
			hwloc_bitmap_or(excl, excl, cpus);
		hwloc_bitmap_free(cpus);
		hwloc_bitmap_free(mems);
	}
	/* every live container is recorded (until an exit is collected) */
	for (size_t i = 0; ok && i < run->nlive; i++)
		if (!run->live[i].exited &&
		    ts_state_find(s, run_root(run), run->live[i].id) == NULL)
			ok = failf(run, "'%s': running, but not recorded", run->live[i].id);
out:
	if (reserved != NULL)
		hwloc_bitmap_free(reserved);
	if (pool != NULL)
		hwloc_bitmap_free(pool);
	hwloc_bitmap_free(excl);
	ts_pools_release(&pools);
	ts_state_close(s);
	return ok;
}

/* What a new exclusive placement must satisfy, judged on the store before
 * it: one NUMA domain when one could hold it, device-local PUs when they
 * could hold it. */
static void check_new(struct run *run, const struct live *l, hwloc_const_bitmap_t before_free,
		      hwloc_const_bitmap_t cpus)
{
	const struct ts_topology *t = run->w.topo;
	long node = l->step.device >= 0 ? run->w.dev_node[l->step.device] : -1;
	hwloc_bitmap_t dev = device_cpus(t, node), tmp = hwloc_bitmap_alloc();
	bool fits = false;

	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++) {
		hwloc_bitmap_and(tmp, t->groups[TS_CPU_LEVEL_NUMA][i].cpus, before_free);
		fits |= (unsigned)hwloc_bitmap_weight(tmp) >= l->want;
	}
	if (fits && domains_of(t, dev) <= 1 && domains_of(t, cpus) != 1)
		failf(run, "'%s': %u cpus fit in one numa node, got %s (%u nodes)", l->id, l->want,
		      str(cpus), domains_of(t, cpus));
	hwloc_bitmap_and(tmp, dev, before_free);
	if (!hwloc_bitmap_iszero(dev) && (unsigned)hwloc_bitmap_weight(tmp) >= l->want &&
	    !hwloc_bitmap_isincluded(cpus, dev))
		failf(run, "'%s': device on numa node %ld: %u device-local cpus free (%s), got %s",
		      l->id, node, hwloc_bitmap_weight(tmp), str(tmp), str(cpus));
	hwloc_bitmap_free(dev);
	hwloc_bitmap_free(tmp);
}

/* ---- steps -------------------------------------------------------------- */

static void remove_live(struct run *run, size_t i)
{
	free(run->live[i].config_json);
	memmove(&run->live[i], &run->live[i + 1], (run->nlive - i - 1) * sizeof(run->live[0]));
	run->nlive--;
}

static void do_create(struct run *run, const struct step *s)
{
	char bundle[400], rt[400], path[500];
	cleanup_free char *config = bundle_config(s), *before = NULL, *after = NULL,
			  *store_before = NULL, *store_after = NULL, *msg = NULL;
	cleanup_error struct ts_error *err = NULL;
	struct live l = {.step = *s};
	hwloc_bitmap_t before_free = NULL;
	struct ts_state *st;
	int r;

	if (run->nlive >= MAX_LIVE)
		return;
	snprintf(l.id, sizeof(l.id), "c%u", run->next_id++);
	snprintf(bundle, sizeof(bundle), "%s/b/%s", run->dir, l.id);
	snprintf(rt, sizeof(rt), "%s/rt", run->dir);
	sh("mkdir -p '%s'", bundle);
	put_file(bundle, "config.json", config);
	snprintf(path, sizeof(path), "%s/state/allocations.json", run->dir);
	store_before = get_file(path);
	st = open_store(run);
	if (st == NULL)
		return;
	{
		struct ts_pools pools = {0};
		if (ts_pools_init(run->config, run->config_path, &pools, &err) == 0)
			before_free = free_pus(run, st, &pools);
		ts_pools_release(&pools);
		ts_error_clear(&err);
	}
	ts_state_close(st);
	struct ts_cli_args args = {.root = rt,
				   .container_id = l.id,
				   .bundle = bundle,
				   .command = "create",
				   .rewrite = true};
	r = ts_cmd_create(&args, run->config, run->config_path, "/bin/true", &err);
	snprintf(path, sizeof(path), "%s/config.json", bundle);
	after = get_file(path);
	if (r < 0) {
		snprintf(path, sizeof(path), "%s/state/allocations.json", run->dir);
		store_after = get_file(path);
		msg = ts_error_format(err);
		if (msg == NULL || strchr(msg, '\n') != NULL ||
		    (strstr(msg, "config.json") == NULL && strstr(msg, "toposhim.json") == NULL))
			failf(run, "create %s: not one line naming the file: '%s'", l.id, msg);
		else if (strstr(msg, "walk found") != NULL ||
			 strstr(msg, "placement found") != NULL ||
			 strstr(msg, "no online cpu") != NULL ||
			 strstr(msg, "did not add up") != NULL)
			failf(run, "create %s: internal failure: %s", l.id, msg);
		else if (after == NULL || strcmp(after, config) != 0)
			failf(run, "create %s failed (%s) but changed config.json", l.id, msg);
		else if ((store_before != NULL) != (store_after != NULL) ||
			 (store_before != NULL && strcmp(store_before, store_after) != 0))
			failf(run, "create %s failed (%s) but changed the store", l.id, msg);
		hwloc_bitmap_free(before_free);
		return;
	}
	l.order = run->order++;
	l.config_json = TAKE_PTR(after);
	/* the count asked: toposhim.io/cpus, else the quota's */
	l.want = s->cpus ? s->cpus : s->quota;
	snprintf(path, sizeof(path), "%s/rt/%s", run->dir, l.id);
	sh("mkdir -p '%s' '%s/cg/ts/%s'", path, run->dir, l.id);
	{
		/* the container's cgroup starts with what config.json says */
		cleanup_json struct ts_json *j = NULL;
		const char *cpus = NULL, *mems = NULL;
		char cg[500];

		if (ts_json_parse(l.config_json, strlen(l.config_json), "config.json", &j, &err) ==
		    0) {
			const struct ts_json *c =
				ts_json_get_path(j, "linux", "resources", "cpu", NULL);
			cpus = ts_json_get_string(c, "cpus");
			mems = ts_json_get_string(c, "mems");
		}
		ts_error_clear(&err);
		cleanup_free char *c = NULL, *m = NULL;
		snprintf(cg, sizeof(cg), "%s/cg/ts/%s", run->dir, l.id);
		assert_true(asprintf(&c, "%s\n", cpus ? cpus : "") > 0);
		assert_true(asprintf(&m, "%s\n", mems ? mems : "") > 0);
		put_file(cg, "cpuset.cpus", c);
		put_file(cg, "cpuset.mems", m);
		sh("cd '%s' && ln -sf cpuset.cpus cpuset.cpus.effective && ln -sf cpuset.mems "
		   "cpuset.mems.effective",
		   cg);
	}
	l.child = spawn();
	run->live[run->nlive++] = l;
	if (hook_created(run, &run->live[run->nlive - 1], &err) < 0)
		failf(run, "create-runtime hook of %s: %s", l.id, err->msg);
	/* the new record against the store before it */
	st = open_store(run);
	if (st != NULL && before_free != NULL) {
		const struct ts_alloc *a = ts_state_find(st, run_root(run), l.id);
		struct ts_pools pools = {0};

		if (a != NULL && ts_pools_init(run->config, run->config_path, &pools, &err) == 0 &&
		    ts_pools_pool_of(&pools, a) == TS_PLACEMENT_POOL_EXCLUSIVE) {
			hwloc_bitmap_t cpus = parse_list(a->cpus_str);
			check_new(run, &run->live[run->nlive - 1], before_free, cpus);
			hwloc_bitmap_free(cpus);
		}
		ts_pools_release(&pools);
	}
	ts_state_close(st);
	hwloc_bitmap_free(before_free);
}

static void do_delete(struct run *run, unsigned pick, bool exit_only)
{
	cleanup_error struct ts_error *err = NULL;
	size_t n = 0, idx[MAX_LIVE];

	for (size_t i = 0; i < run->nlive; i++)
		if (!run->live[i].exited)
			idx[n++] = i;
	if (n == 0)
		return;
	struct live *l = &run->live[idx[pick % n]];
	reap(l->child);
	sh("rm -rf '%s/rt/%s'", run->dir, l->id);
	if (exit_only) {
		l->exited = true;
		return;
	}
	/* the poststop hook, as `toposhim hook poststop` runs it */
	if (ts_pools_release_container(run->config, run->config_path, &(struct ts_state_options){0},
				       run_root(run), l->id, NULL, NULL, &err) < 0)
		failf(run, "poststop of %s: %s", l->id, err->msg);
	remove_live(run, idx[pick % n]);
}

/* Drop the exited containers a create collected from the live list. */
static void forget_collected(struct run *run)
{
	struct ts_state *s = open_store(run);

	for (size_t i = 0; s != NULL && i < run->nlive;) {
		if (run->live[i].exited && ts_state_find(s, run_root(run), run->live[i].id) == NULL)
			remove_live(run, i);
		else
			i++;
	}
	ts_state_close(s);
}

/* Run steps[0..n) on a fresh host; returns the failure text or NULL. */
static const char *run_steps(struct run *run, const struct scenario *sc, const struct step *steps,
			     size_t n, size_t *ret_failed_at)
{
	char tmpl[400];
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	memset(run, 0, sizeof(*run));
	run->sc = sc;
	snprintf(tmpl, 200, "%.180s/ts-prop-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : tmp);
	assert_non_null(mkdtemp(tmpl));
	snprintf(run->dir, sizeof(run->dir), "%.190s", tmpl);
	if (make_world(sc, &run->w, run->dir) < 0) {
		snprintf(run->failure, sizeof(run->failure), "the generated topology did not load");
		*ret_failed_at = 0;
		return run->failure;
	}
	host_setup(run);
	/* stderr (toposhim's warnings) into a file: the report goes to stdout */
	snprintf(tmpl, sizeof(tmpl), "%s/stderr", run->dir);
	fflush(stderr);
	run->saved_stderr = dup(STDERR_FILENO);
	run->err_fd = open(tmpl, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	dup2(run->err_fd, STDERR_FILENO);
	size_t i;
	for (i = 0; i < n && run->failure[0] == '\0'; i++) {
		if (steps[i].kind == STEP_CREATE)
			do_create(run, &steps[i]);
		else
			do_delete(run, steps[i].pick, steps[i].kind == STEP_EXIT);
		forget_collected(run);
		if (run->failure[0] == '\0')
			check_store(run);
	}
	*ret_failed_at = i > 0 ? i - 1 : 0;
	/* the end: delete every container, collect the exited ones */
	while (run->failure[0] == '\0' && run->nlive > 0) {
		size_t k = 0;
		while (k < run->nlive && run->live[k].exited)
			k++;
		if (k == run->nlive)
			break;
		do_delete(run, (unsigned)k, false);
	}
	if (run->failure[0] == '\0') {
		struct ts_state *s = open_store(run);
		struct ts_alloc **gone = NULL;
		size_t ngone = 0;
		cleanup_error struct ts_error *err = NULL;

		if (s != NULL && ts_state_gc(s, ts_state_now_usec(), 0, &gone, &ngone, &err) >= 0 &&
		    ts_state_count(s) != 0)
			failf(run, "after every delete the store still holds '%s'",
			      ts_state_at(s, 0)->container_id);
		ts_alloc_array_free(gone, ngone);
		ts_state_close(s);
		*ret_failed_at = run->failure[0] != '\0' ? n : *ret_failed_at;
	}
	for (size_t k = 0; k < run->nlive; k++) {
		reap(run->live[k].child);
		free(run->live[k].config_json);
	}
	fflush(stderr);
	unsetenv("TOPOSHIM_STATE_DIR");
	dup2(run->saved_stderr, STDERR_FILENO);
	close(run->saved_stderr);
	close(run->err_fd);
	ts_json_free(run->config);
	world_free(&run->w);
	if (getenv("TS_PROPERTY_KEEP") != NULL)
		printf("# kept %s\n", run->dir);
	else
		sh("rm -rf '%s'", run->dir);
	return run->failure[0] != '\0' ? run->failure : NULL;
}

/* ---- shrinking and reporting ------------------------------------------ */

static struct run the_run;

/* Remove chunks of steps while the run still fails. */
static size_t shrink(const struct scenario *sc, struct step *steps, size_t n)
{
	struct step *trial = calloc(n + 1, sizeof(*trial));
	size_t at;

	for (size_t chunk = n / 2; chunk >= 1; chunk /= 2) {
		for (size_t start = 0; start + chunk <= n;) {
			size_t m = 0;
			for (size_t i = 0; i < n; i++)
				if (i < start || i >= start + chunk)
					trial[m++] = steps[i];
			if (m > 0 && run_steps(&the_run, sc, trial, m, &at) != NULL) {
				memcpy(steps, trial, m * sizeof(*steps));
				n = m;
			} else {
				start += chunk;
			}
		}
		if (chunk == 1)
			break;
	}
	free(trial);
	return n;
}

static void report(const struct scenario *sc, const char *failure, struct step *steps, size_t n)
{
	char buf[256];
	size_t at = 0;

	printf("# property failure, seed %" PRIu64 "%s%s: %s\n", sc->seed,
	       sc->base[0] ? " base " : "", sc->base, failure);
	n = shrink(sc, steps, n);
	const char *again = run_steps(&the_run, sc, steps, n, &at);
	printf("# shrunk to %zu steps: %s\n", n, again ? again : "(passes when shrunk?)");
	printf("# topology:\n");
	{
		struct world w;
		char dir[] = "/tmp/ts-prop-report-XXXXXX";
		if (mkdtemp(dir) != NULL && make_world(sc, &w, dir) == 0) {
			for (char *line = strtok(w.gen->log, "\n"); line; line = strtok(NULL, "\n"))
				printf("#   %s\n", line);
			printf("#   config %s\n", w.config_text);
			for (int i = 0; i < NDEV; i++)
				printf("#   device d%d (%s) on numa node %ld\n", i, dev_paths[i],
				       w.dev_node[i]);
			world_free(&w);
		}
		sh("rm -rf '%s'", dir);
	}
	printf("# add this line to tests/unit/placement/property-cases.txt:\n# %" PRIu64 " %s",
	       sc->seed, sc->base[0] ? sc->base : "-");
	for (size_t i = 0; i < n; i++) {
		step_str(&steps[i], buf, sizeof(buf));
		printf(" %s", buf);
	}
	printf("\n");
}

/* One scenario: run it, and on failure shrink and report. */
static bool run_scenario(const struct scenario *sc)
{
	size_t at = 0;
	const char *failure = run_steps(&the_run, sc, sc->steps, sc->n, &at);
	char copy[4096];

	if (failure == NULL)
		return true;
	snprintf(copy, sizeof(copy), "%s (step %zu)", failure, at);
	struct step *steps = calloc(sc->n + 1, sizeof(*steps));
	memcpy(steps, sc->steps, sc->n * sizeof(*steps));
	report(sc, copy, steps, at + 1 < sc->n ? at + 1 : sc->n);
	free(steps);
	return false;
}

static bool seed_scenario(uint64_t seed, const char *base, size_t nsteps, struct scenario *sc)
{
	char dir[] = "/tmp/ts-prop-gen-XXXXXX";
	struct world w;
	bool ok;

	*sc = (struct scenario){.seed = seed};
	snprintf(sc->base, sizeof(sc->base), "%s", base != NULL ? base : "");
	assert_non_null(mkdtemp(dir));
	ok = make_world(sc, &w, dir) == 0;
	if (ok)
		make_steps(sc, &w, nsteps);
	world_free(&w);
	sh("rm -rf '%s'", dir);
	return ok;
}

/* ---- tests --------------------------------------------------------------- */

/* The kept regression cases: "<seed> <base or -> <step>..." per line. */
static void test_regression_cases(void **state)
{
	char path[600];
	const char *src = getenv("TS_SRCDIR");
	FILE *f;
	char line[8192];
	unsigned failed = 0, ran = 0;

	snprintf(path, sizeof(path), "%s/tests/unit/placement/property-cases.txt",
		 src != NULL ? src : "..");
	f = fopen(path, "re");
	if (f == NULL)
		fail_msg("%s: cannot open", path);
	while (fgets(line, sizeof(line), f) != NULL) {
		struct scenario sc = {0};
		char *tok, *save = NULL;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		tok = strtok_r(line, " \n", &save);
		sc.seed = strtoull(tok, NULL, 10);
		tok = strtok_r(NULL, " \n", &save);
		if (tok == NULL)
			fail_msg("%s: no base in '%s'", path, line);
		if (strcmp(tok, "-") != 0) {
			if (corpus_dir() == NULL) {
				printf("# skip case seed %" PRIu64
				       " on %s: no corpus (TS_SHARED_DIR)\n",
				       sc.seed, tok);
				continue;
			}
			snprintf(sc.base, sizeof(sc.base), "%s", tok);
		}
		sc.steps = calloc(256, sizeof(*sc.steps));
		while ((tok = strtok_r(NULL, " \n", &save)) != NULL && sc.n < 256)
			if (step_parse(tok, &sc.steps[sc.n++]) < 0)
				fail_msg("%s: bad step '%s'", path, tok);
		ran++;
		failed += !run_scenario(&sc);
		free(sc.steps);
	}
	fclose(f);
	printf("# %u regression cases\n", ran);
	if (failed > 0)
		fail_msg("%u of %u regression cases fail", failed, ran);
}

static unsigned n_seeds(void)
{
	const char *n = getenv("TS_PROPERTY_SEEDS");
	const char *lng = getenv("TS_CHECK_LONG");
	unsigned v = n != NULL			 ? (unsigned)strtoul(n, NULL, 10)
		     : ts_test_reduced() != NULL ? 4
						 : 40;

	return lng != NULL && strcmp(lng, "1") == 0 ? v * 100 : v;
}

static void test_generated(void **state)
{
	const char *one = getenv("TS_PROPERTY_SEED");
	unsigned n = n_seeds(), failed = 0;
	uint64_t first = one != NULL ? strtoull(one, NULL, 10) : 1;
	time_t t0 = time(NULL);

	if (one != NULL && one[0] != '\0')
		n = 1;
	else
		first = 1;
	for (uint64_t seed = first; seed < first + n; seed++) {
		struct scenario sc;

		if (!seed_scenario(seed, NULL, 24 + seed % 24, &sc)) {
			printf("# seed %" PRIu64 ": the generated topology did not load\n", seed);
			failed++;
			continue;
		}
		failed += !run_scenario(&sc);
		free(sc.steps);
	}
	printf("# %u seeds on generated topologies in %ld s\n", n, (long)(time(NULL) - t0));
	if (failed > 0)
		fail_msg("%u of %u seeds fail", failed, n);
}

/* The same transformations from the corpus files, when there is one. */
static void test_corpus(void **state)
{
	const char *dir = corpus_dir();
	struct dirent **names = NULL;
	unsigned failed = 0, ran = 0, per = n_seeds() / 20 + 1;
	int nn;

	if (dir == NULL)
		ts_test_skip("no corpus of topologies (%s/corpus/topology)",
			     getenv("TS_SHARED_DIR") ? getenv("TS_SHARED_DIR")
						     : "TS_SHARED_DIR unset");
	nn = scandir(dir, &names, NULL, alphasort);
	for (int i = 0; i < nn; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name);

		if (len > 4 && strcmp(name + len - 4, ".xml") == 0)
			for (unsigned k = 0; k < per; k++) {
				struct scenario sc;

				if (!seed_scenario(1000u * (unsigned)i + k, name, 16, &sc)) {
					printf("# %s seed %u: did not load\n", name, k);
					failed++;
					continue;
				}
				ran++;
				failed += !run_scenario(&sc);
				free(sc.steps);
			}
		free(names[i]);
	}
	free(names);
	printf("# %u corpus scenarios\n", ran);
	if (failed > 0)
		fail_msg("%u of %u corpus scenarios fail", failed, ran);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regression_cases),
		cmocka_unit_test(test_generated),
		cmocka_unit_test(test_corpus),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
