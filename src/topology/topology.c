/* topology.c - hwloc loading, derived facts, cpu lists. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <unistd.h>

#include <hwloc.h>
#include <hwloc/export.h>

#include "topology/topology.h"
#include "util/cleanup.h"
#include "util/text.h"

static const char *const tier_names[_TS_MEMORY_TIER_MAX] = {
	[TS_MEMORY_TIER_DRAM] = "dram", [TS_MEMORY_TIER_HBM] = "hbm", [TS_MEMORY_TIER_CXL] = "cxl",
	[TS_MEMORY_TIER_PMEM] = "pmem", [TS_MEMORY_TIER_GPU] = "gpu",
};

const char *ts_memory_tier_to_string(enum ts_memory_tier tier)
{
	if ((int)tier < 0 || tier >= _TS_MEMORY_TIER_MAX)
		return NULL;
	return tier_names[tier];
}

enum ts_memory_tier ts_memory_tier_from_string(const char *s)
{
	for (int i = 0; s != NULL && i < _TS_MEMORY_TIER_MAX; i++)
		if (strcmp(s, tier_names[i]) == 0)
			return (enum ts_memory_tier)i;
	return TS_MEMORY_TIER_INVALID;
}

struct ts_topology *ts_topology_free(struct ts_topology *topo)
{
	if (topo == NULL)
		return NULL;
	for (size_t i = 0; i < topo->n_numa_nodes; i++) {
		hwloc_bitmap_free(topo->numa_nodes[i].cpus);
		hwloc_bitmap_free(topo->numa_nodes[i].local_cpus);
	}
	free(topo->numa_nodes);
	hwloc_bitmap_free(topo->online);
	hwloc_bitmap_free(topo->performance_cpus);
	hwloc_bitmap_free(topo->efficiency_cpus);
	if (topo->hwloc != NULL)
		hwloc_topology_destroy(topo->hwloc);
	free(topo->source);
	free(topo);
	return NULL;
}

/* Tier from hwloc's subtype, else from shape: a CPU-less node without any
 * local PU is device memory (POWER9 + V100 coherent memory); a CPU-less node
 * sharing its locality with a CPU node is on-package memory when smaller
 * than that node (KNL MCDRAM: 4 GiB next to 24 GiB) and persistent or
 * expander memory when larger (NVDIMM: 124 GiB next to 31 GiB). */
static enum ts_memory_tier tier_of(hwloc_obj_t node, bool memory_only, uint64_t cpu_node_bytes)
{
	const char *st = node->subtype;

	if (st != NULL) {
		if (strcasecmp(st, "HBM") == 0 || strcasecmp(st, "MCDRAM") == 0)
			return TS_MEMORY_TIER_HBM;
		if (strcasecmp(st, "NVM") == 0 || strcasecmp(st, "SPM") == 0)
			return TS_MEMORY_TIER_PMEM;
		if (strncasecmp(st, "CXL", 3) == 0)
			return TS_MEMORY_TIER_CXL;
		if (strcasecmp(st, "GPUMemory") == 0)
			return TS_MEMORY_TIER_GPU;
		return TS_MEMORY_TIER_DRAM;
	}
	if (!memory_only)
		return TS_MEMORY_TIER_DRAM;
	if (hwloc_bitmap_iszero(node->cpuset))
		return TS_MEMORY_TIER_GPU;
	if (node->attr->numanode.local_memory > cpu_node_bytes && cpu_node_bytes > 0)
		return TS_MEMORY_TIER_PMEM;
	return TS_MEMORY_TIER_HBM;
}

static int cmp_numa(const void *a, const void *b)
{
	const struct ts_numa_node *x = a, *y = b;

	return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

/* Nodes are listed in memory-children order: the first node of a locality
 * owns the PUs, later ones with the same cpuset are CPU-less nodes attached
 * there.  @return the earlier node owning o's PUs, or NULL. */
static hwloc_obj_t cpu_node_of(const struct ts_topology *t, int i, hwloc_obj_t o)
{
	for (int j = 0; j < i; j++) {
		hwloc_obj_t p = hwloc_get_obj_by_type(t->hwloc, HWLOC_OBJ_NUMANODE, (unsigned)j);
		if (p != NULL && !hwloc_bitmap_iszero(p->cpuset) &&
		    hwloc_bitmap_isequal(p->cpuset, o->cpuset))
			return p;
	}
	return NULL;
}

static int build_numa_table(struct ts_topology *t)
{
	int n = hwloc_get_nbobjs_by_type(t->hwloc, HWLOC_OBJ_NUMANODE);

	if (n < 0)
		n = 0;
	t->numa_nodes = calloc((size_t)n + 1, sizeof(*t->numa_nodes));
	if (t->numa_nodes == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(t->hwloc, HWLOC_OBJ_NUMANODE, (unsigned)i);
		struct ts_numa_node *e = &t->numa_nodes[t->n_numa_nodes];
		uint64_t cpu_node_bytes;
		bool memory_only;

		if (o == NULL)
			continue;
		hwloc_obj_t owner = cpu_node_of(t, i, o);
		memory_only = hwloc_bitmap_iszero(o->cpuset) || owner != NULL;
		cpu_node_bytes = owner != NULL ? owner->attr->numanode.local_memory : 0;
		e->cpus = hwloc_bitmap_alloc();
		e->local_cpus = hwloc_bitmap_alloc();
		t->n_numa_nodes++;
		if (e->cpus == NULL || e->local_cpus == NULL)
			return -ENOMEM;
		hwloc_bitmap_and(e->local_cpus, o->cpuset, t->online);
		if (!memory_only)
			hwloc_bitmap_copy(e->cpus, e->local_cpus);
		e->os_index = o->os_index;
		e->memory_bytes = o->attr != NULL ? o->attr->numanode.local_memory : 0;
		e->memory_only = memory_only;
		e->tier = tier_of(o, memory_only, cpu_node_bytes);
	}
	bool sizes_known = false;
	for (size_t i = 0; i < t->n_numa_nodes; i++)
		sizes_known |= t->numa_nodes[i].memory_bytes > 0;
	for (size_t i = 0; i < t->n_numa_nodes; i++)
		t->numa_nodes[i].has_memory = !sizes_known || t->numa_nodes[i].memory_bytes > 0;
	qsort(t->numa_nodes, t->n_numa_nodes, sizeof(*t->numa_nodes), cmp_numa);
	return 0;
}

static void build_kinds(struct ts_topology *t)
{
	int nr = hwloc_cpukinds_get_nr(t->hwloc, 0);
	int best = -1, worst = -1;
	int best_eff = 0, worst_eff = 0;

	if (nr < 2)
		return;
	for (int i = 0; i < nr; i++) {
		int eff = -1;

		if (hwloc_cpukinds_get_info(t->hwloc, (unsigned)i, NULL, &eff, NULL, NULL, 0) < 0)
			continue;
		if (eff < 0)
			continue;
		if (best < 0 || eff > best_eff)
			best = i, best_eff = eff;
		if (worst < 0 || eff < worst_eff)
			worst = i, worst_eff = eff;
	}
	if (best < 0 || best == worst)
		return;
	(void)hwloc_cpukinds_get_info(t->hwloc, (unsigned)best, t->performance_cpus, NULL, NULL,
				      NULL, 0);
	(void)hwloc_cpukinds_get_info(t->hwloc, (unsigned)worst, t->efficiency_cpus, NULL, NULL,
				      NULL, 0);
	hwloc_bitmap_and(t->performance_cpus, t->performance_cpus, t->online);
	hwloc_bitmap_and(t->efficiency_cpus, t->efficiency_cpus, t->online);
}

/* Take a loaded hwloc topology and derive the tables. */
static int wrap(hwloc_topology_t h, const char *source, struct ts_topology **ret,
		struct ts_error **err)
{
	cleanup_topology struct ts_topology *t = calloc(1, sizeof(*t));

	if (t == NULL) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, ENOMEM, "%s: out of memory", source);
	}
	t->hwloc = h;
	t->online = hwloc_bitmap_alloc();
	t->performance_cpus = hwloc_bitmap_alloc();
	t->efficiency_cpus = hwloc_bitmap_alloc();
	t->source = strdup(source);
	if (t->online == NULL || t->performance_cpus == NULL || t->efficiency_cpus == NULL ||
	    t->source == NULL)
		return ts_error_set(err, ENOMEM, "%s: out of memory", source);
	hwloc_bitmap_and(t->online, hwloc_topology_get_topology_cpuset(h),
			 hwloc_topology_get_allowed_cpuset(h));
	t->smt_width = 1;
	hwloc_obj_t core = NULL;
	while ((core = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_CORE, core)) != NULL) {
		int w = hwloc_bitmap_weight(core->cpuset);
		if (w > (int)t->smt_width)
			t->smt_width = (unsigned)w;
	}
	if (build_numa_table(t) < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", source);
	build_kinds(t);
	*ret = TAKE_PTR(t);
	return 0;
}

/* hwloc takes some choices only from the environment, read when its
 * components start.  An override is set around one load and restored, so
 * nothing leaks into the environment the runtime is executed with. */
struct env_override {
	const char *name;
	char *saved; /* previous value, NULL if unset */
};

static int env_push(struct env_override *o, const char *name, const char *value)
{
	const char *old = getenv(name);

	o->name = name;
	o->saved = NULL;
	if (old != NULL && (o->saved = strdup(old)) == NULL)
		return -ENOMEM;
	if (setenv(name, value, 1) < 0) {
		free(o->saved);
		return -errno;
	}
	return 0;
}

static void env_pop(struct env_override *o)
{
	if (o->saved != NULL)
		(void)setenv(o->name, o->saved, 1); /* restoring a value that fit before */
	else
		(void)unsetenv(o->name);
	free(o->saved);
	o->saved = NULL;
}

/* hwloc_topology_load() with hwloc's own stderr messages off ("hwloc:
 * Topology does not contain any NUMA node, aborting!"): toposhim reports
 * the failure in its one line, and engines read the runtime's stderr.
 * HWLOC_HIDE_ERRORS is honoured when the caller set it. */
static int quiet_load(hwloc_topology_t h)
{
	struct env_override o = {.name = NULL};
	bool pushed =
		getenv("HWLOC_HIDE_ERRORS") == NULL && env_push(&o, "HWLOC_HIDE_ERRORS", "2") == 0;
	int r = hwloc_topology_load(h);
	int e = errno;

	if (pushed)
		env_pop(&o);
	errno = e;
	return r;
}

static int new_hwloc(hwloc_topology_t *ret, const char *what, struct ts_error **err)
{
	hwloc_topology_t h;

	if (hwloc_topology_init(&h) < 0)
		return ts_error_set(err, errno ? errno : ENOMEM, "%s: hwloc init failed", what);
	(void)hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	/* placement never looks below L3 (see topology.h) */
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L1CACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L2CACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L1ICACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L2ICACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	(void)hwloc_topology_set_type_filter(h, HWLOC_OBJ_L3ICACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
	*ret = h;
	return 0;
}

static int finish_load(hwloc_topology_t h, const char *what, const char *msg,
		       struct ts_topology **ret, struct ts_error **err)
{
	if (quiet_load(h) < 0) {
		int e = errno ? errno : EINVAL;
		hwloc_topology_destroy(h);
		return ts_error_set(err, e == ENOSYS ? EINVAL : e, "%s: %s", what, msg);
	}
	return wrap(h, what, ret, err);
}

/* XML needs none of hwloc's plugins (GL, OpenCL, PCI, libxml2), and
 * loading them costs about 3 ms of CPU against 1.4 ms for the whole XML
 * load of the 384-PU corpus file (tests/bench/bench-placement): the 2 ms
 * warm-load target needs them off.  hwloc's built-in XML parser reads every
 * corpus file.  HWLOC_PLUGINS_PATH is read when hwloc's components start,
 * i.e. at the first topology of the process (toposhim holds one at a time). */
static int load_xml_file(const char *path, struct ts_topology **ret, struct ts_error **err);
static int load_xml_buffer(const char *buf, const char *name, struct ts_topology **ret,
			   struct ts_error **err);

int ts_topology_load_xml(const char *path, struct ts_topology **ret, struct ts_error **err)
{
	struct env_override o;
	int r;

	if (env_push(&o, "HWLOC_PLUGINS_PATH", "") < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", path);
	r = load_xml_file(path, ret, err);
	env_pop(&o);
	return r;
}

int ts_topology_load_xml_buffer(const char *buf, const char *name, struct ts_topology **ret,
				struct ts_error **err)
{
	struct env_override o;
	int r;

	if (env_push(&o, "HWLOC_PLUGINS_PATH", "") < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", name);
	r = load_xml_buffer(buf, name, ret, err);
	env_pop(&o);
	return r;
}

static int load_xml_file(const char *path, struct ts_topology **ret, struct ts_error **err)
{
	hwloc_topology_t h;
	int r;

	struct stat st;

	if (access(path, R_OK) < 0 || stat(path, &st) < 0)
		return ts_error_set(err, errno, "%s: cannot read topology", path);
	/* hwloc would read a FIFO or /dev/zero without end */
	if (!S_ISREG(st.st_mode))
		return ts_error_set(err, 0, "%s: not a regular file", path);
	if (st.st_size > (off_t)TS_TOPOLOGY_XML_MAX_BYTES)
		return ts_error_set(err, EFBIG, "%s: larger than %u bytes", path,
				    TS_TOPOLOGY_XML_MAX_BYTES);
	r = new_hwloc(&h, path, err);
	if (r < 0)
		return r;
	if (hwloc_topology_set_xml(h, path) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", path);
	}
	errno = 0;
	if (quiet_load(h) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", path);
	}
	return wrap(h, path, ret, err);
}

static int load_xml_buffer(const char *buf, const char *name, struct ts_topology **ret,
			   struct ts_error **err)
{
	hwloc_topology_t h;
	size_t len = strlen(buf);
	int r;

	r = new_hwloc(&h, name, err);
	if (r < 0)
		return r;
	if (len > INT32_MAX || hwloc_topology_set_xmlbuffer(h, buf, (int)len + 1) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", name);
	}
	if (quiet_load(h) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "%s: invalid hwloc xml topology", name);
	}
	return wrap(h, name, ret, err);
}

int ts_topology_load_synthetic(const char *desc, struct ts_topology **ret, struct ts_error **err)
{
	hwloc_topology_t h;
	int r;

	r = new_hwloc(&h, "synthetic topology", err);
	if (r < 0)
		return r;
	if (hwloc_topology_set_synthetic(h, desc) < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, 0, "synthetic topology: invalid description '%s'", desc);
	}
	return finish_load(h, "synthetic topology", "load failed", ret, err);
}

int ts_topology_load_sysfs(const char *root, struct ts_topology **ret, struct ts_error **err)
{
	cleanup_free char *probe = NULL;
	struct env_override o;
	hwloc_topology_t h;
	int r;

	if (asprintf(&probe, "%s/sys/devices/system/cpu", root) < 0)
		return ts_error_set(err, ENOMEM, "%s: out of memory", root);
	if (access(probe, R_OK) < 0)
		return ts_error_set(err, errno, "%s: no sysfs tree (sys/devices/system/cpu)", root);
	r = new_hwloc(&h, root, err);
	if (r < 0)
		return r;
	/* the x86 backend would read this machine's CPUID into the fake tree */
	(void)hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
	/* hwloc takes the tree's root only from HWLOC_FSROOT, read when the
	 * Linux backend starts */
	r = env_push(&o, "HWLOC_FSROOT", root);
	if (r < 0) {
		hwloc_topology_destroy(h);
		return ts_error_set(err, -r, "%s: cannot select the sysfs root", root);
	}
	r = finish_load(h, root, "cannot read the sysfs tree", ret, err);
	env_pop(&o);
	return r;
}

int ts_topology_load_host(struct ts_topology **ret, struct ts_error **err)
{
	hwloc_topology_t h;
	int r;

	r = new_hwloc(&h, "host topology", err);
	if (r < 0)
		return r;
	/* Displays (gl: probes X servers) and OpenCL devices (opencl: runs the
	 * ICD loader) give nothing placement uses, cost milliseconds, and both
	 * plugins leave memory behind after hwloc_topology_destroy() (seen with
	 * valgrind and LeakSanitizer, hwloc 2.9).  PCI and OS devices, which
	 * locality does use, come from the pci plugin and the Linux backend. */
	(void)hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
	(void)hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
	return finish_load(h, "host topology", "discovery failed", ret, err);
}

int ts_topology_export_xml(const struct ts_topology *topo, char **ret, struct ts_error **err)
{
	char *buf = NULL;
	int len = 0;
	char *copy;

	if (hwloc_topology_export_xmlbuffer(topo->hwloc, &buf, &len, 0) < 0)
		return ts_error_set(err, errno ? errno : EINVAL, "topology: xml export failed");
	copy = strdup(buf);
	hwloc_free_xmlbuffer(topo->hwloc, buf);
	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "topology: out of memory");
	*ret = copy;
	return 0;
}

/* The strict grammar (ts_cpulist_valid) first: hwloc's list parser accepts
 * things like "0-" (infinite) or "3-1" silently. */
int ts_cpulist_parse(const char *s, hwloc_bitmap_t *ret, struct ts_error **err)
{
	hwloc_bitmap_t b;

	if (s == NULL || !ts_cpulist_valid(s))
		return ts_error_set(err, 0, "invalid cpu list '%s'", s != NULL ? s : "(null)");
	b = hwloc_bitmap_alloc();
	if (b == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	if (*s != '\0' && hwloc_bitmap_list_sscanf(b, s) < 0) {
		hwloc_bitmap_free(b);
		return ts_error_set(err, 0, "invalid cpu list '%s'", s);
	}
	*ret = b;
	return 0;
}

int ts_cpulist_format(hwloc_const_bitmap_t set, char **ret, struct ts_error **err)
{
	char *s = NULL;

	if (hwloc_bitmap_weight(set) < 0)
		return ts_error_set(err, 0, "invalid cpu list: infinite set");
	if (hwloc_bitmap_iszero(set))
		s = strdup("");
	else if (hwloc_bitmap_list_asprintf(&s, set) < 0)
		s = NULL;
	if (s == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	*ret = s;
	return 0;
}

const struct ts_numa_node *ts_topology_numa_node(const struct ts_topology *topo, unsigned os_index)
{
	for (size_t i = 0; i < topo->n_numa_nodes; i++)
		if (topo->numa_nodes[i].os_index == os_index)
			return &topo->numa_nodes[i];
	return NULL;
}

void ts_topology_numa_of_cpus(const struct ts_topology *topo, hwloc_const_bitmap_t cpus,
			      hwloc_bitmap_t nodes)
{
	hwloc_bitmap_zero(nodes);
	for (size_t i = 0; i < topo->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &topo->numa_nodes[i];
		if (!n->memory_only && hwloc_bitmap_intersects(n->cpus, cpus))
			hwloc_bitmap_set(nodes, n->os_index);
	}
}

void ts_topology_cpus_of_numa(const struct ts_topology *topo, hwloc_const_bitmap_t nodes,
			      hwloc_bitmap_t cpus)
{
	hwloc_bitmap_zero(cpus);
	for (size_t i = 0; i < topo->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &topo->numa_nodes[i];
		if (hwloc_bitmap_isset(nodes, n->os_index))
			hwloc_bitmap_or(cpus, cpus, n->cpus);
	}
}
