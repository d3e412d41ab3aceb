/* snapshot.c - the derived tables of a topology as text, loaded without hwloc. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology/topology.h"
#include "util/cleanup.h"

#define MAGIC "toposhim-topology-snapshot 1"

/* The static strings a snapshot may name (mems_how, the kinds' ranking). */
static const char *const names[] = {
	"local",    "distance", "Machine",    "Package",  "Die",       "Group",
	"NUMANode", "L3Cache",	"L2Cache",    "L1Cache",  "Core",      "MemCache",
	"PU",	    "Misc",	"efficiency", "capacity", "frequency", "rank",
};

static const char *intern(const char *s)
{
	if (strcmp(s, "-") == 0)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (strcmp(s, names[i]) == 0)
			return names[i];
	return "enclosing";
}

static void put_list(FILE *f, hwloc_const_bitmap_t b)
{
	if (b == NULL || hwloc_bitmap_iszero(b)) {
		fputs(" -", f);
		return;
	}
	fputc(' ', f);
	char *s = NULL;
	if (hwloc_bitmap_list_asprintf(&s, b) >= 0)
		fputs(s, f);
	free(s);
}

int ts_topology_snapshot_export(const struct ts_topology *t, char **ret, struct ts_error **err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		return ts_error_set(err, ENOMEM, "topology: out of memory");
	fprintf(f, MAGIC "\nonline");
	put_list(f, t->online);
	fprintf(f, "\nsmt %u\n", t->smt_width);
	for (size_t i = 0; i < t->n_numa_nodes; i++) {
		const struct ts_numa_node *n = &t->numa_nodes[i];

		fprintf(f, "node %u", n->os_index);
		put_list(f, n->cpus);
		put_list(f, n->local_cpus);
		fprintf(f, " %" PRIu64 " %s %d %d\n", n->memory_bytes,
			ts_memory_tier_to_string(n->tier), n->memory_only, n->has_memory);
	}
	for (int l = 0; l < _TS_CPU_LEVEL_MAX; l++)
		for (size_t i = 0; i < t->n_groups[l]; i++) {
			const struct ts_cpu_group *g = &t->groups[l][i];

			fprintf(f, "group %d %u %d %d", l, g->id, g->placeholder, g->numa_node);
			put_list(f, g->cpus);
			put_list(f, g->mems);
			fprintf(f, " %s\n", g->mems_how != NULL ? g->mems_how : "-");
		}
	for (size_t i = 0; i < t->n_cpu_kinds; i++) {
		const struct ts_cpu_kind *k = &t->cpu_kinds[i];

		fprintf(f, "kind");
		put_list(f, k->cpus);
		fprintf(f, " %d %" PRIu64 " %u %.17g\n", k->efficiency, k->capacity,
			k->frequency_mhz, k->score);
	}
	fprintf(f, "kinds %s %s\n", t->kinds_ranked_by ? t->kinds_ranked_by : "-",
		t->kinds_scored_by ? t->kinds_scored_by : "-");
	if (t->n_latency > 0) {
		fprintf(f, "latency %zu", t->n_latency);
		for (size_t i = 0; i < t->n_latency; i++)
			fprintf(f, " %u", t->latency_os[i]);
		for (size_t i = 0; i < t->n_latency * t->n_latency; i++)
			fprintf(f, " %" PRIu64, t->latency[i]);
		fputc('\n', f);
	}
	fprintf(f, "end\n");
	if (fclose(f) != 0 || buf == NULL) {
		free(buf);
		return ts_error_set(err, ENOMEM, "topology: out of memory");
	}
	*ret = buf;
	return 0;
}

/* ---- reading ---------------------------------------------------------- */

struct reader {
	char *save;
	bool bad;
};

static char *word(struct reader *r, char *line)
{
	char *w = strtok_r(line, " ", &r->save);

	if (w == NULL)
		r->bad = true;
	return w != NULL ? w : (char *)"";
}

static uint64_t number(struct reader *r, char *line)
{
	char *w = word(r, line), *end = NULL;
	uint64_t v;

	errno = 0;
	v = strtoull(w, &end, 10);
	if (errno != 0 || end == w || *end != '\0')
		r->bad = true;
	return v;
}

static long long signed_number(struct reader *r)
{
	char *w = word(r, NULL), *end = NULL;
	long long v;

	errno = 0;
	v = strtoll(w, &end, 10);
	if (errno != 0 || end == w || *end != '\0')
		r->bad = true;
	return v;
}

static hwloc_bitmap_t list(struct reader *r)
{
	cleanup_error struct ts_error *e = NULL;
	char *w = word(r, NULL);
	hwloc_bitmap_t b = NULL;

	if (strcmp(w, "-") == 0)
		b = hwloc_bitmap_alloc();
	else if (ts_cpulist_parse(w, &b, &e) < 0)
		b = NULL;
	if (b == NULL)
		r->bad = true;
	return b;
}

static bool grow(void **v, size_t n, size_t size)
{
	void *p = realloc(*v, (n + 1) * size);

	if (p == NULL)
		return false;
	*v = p;
	memset((char *)p + n * size, 0, size);
	return true;
}

static void read_node(struct ts_topology *t, struct reader *r)
{
	struct ts_numa_node *n;

	if (!grow((void **)&t->numa_nodes, t->n_numa_nodes, sizeof(*n))) {
		r->bad = true;
		return;
	}
	n = &t->numa_nodes[t->n_numa_nodes++];
	n->os_index = (unsigned)number(r, NULL);
	n->cpus = list(r);
	n->local_cpus = list(r);
	n->memory_bytes = number(r, NULL);
	n->tier = ts_memory_tier_from_string(word(r, NULL));
	n->memory_only = number(r, NULL) != 0;
	n->has_memory = number(r, NULL) != 0;
	if ((int)n->tier < 0)
		r->bad = true;
}

static void read_group(struct ts_topology *t, struct reader *r)
{
	uint64_t l = number(r, NULL);
	struct ts_cpu_group *g;

	if (r->bad || l >= _TS_CPU_LEVEL_MAX ||
	    !grow((void **)&t->groups[l], t->n_groups[l], sizeof(*g))) {
		r->bad = true;
		return;
	}
	g = &t->groups[l][t->n_groups[l]++];
	g->id = (unsigned)number(r, NULL);
	g->placeholder = number(r, NULL) != 0;
	g->numa_node = (int)signed_number(r);
	g->cpus = list(r);
	g->mems = list(r);
	g->mems_how = intern(word(r, NULL));
	if (l != TS_CPU_LEVEL_NUMA) {
		hwloc_bitmap_free(g->mems);
		g->mems = NULL;
	} else if (g->mems == NULL || hwloc_bitmap_iszero(g->mems) || g->mems_how == NULL) {
		r->bad = true;
	}
	if (g->cpus != NULL && hwloc_bitmap_iszero(g->cpus))
		r->bad = true;
}

static void read_kind(struct ts_topology *t, struct reader *r)
{
	struct ts_cpu_kind *k;
	char *w, *end = NULL;

	if (!grow((void **)&t->cpu_kinds, t->n_cpu_kinds, sizeof(*k))) {
		r->bad = true;
		return;
	}
	k = &t->cpu_kinds[t->n_cpu_kinds++];
	k->cpus = list(r);
	k->efficiency = (int)signed_number(r);
	k->capacity = number(r, NULL);
	k->frequency_mhz = (unsigned)number(r, NULL);
	w = word(r, NULL);
	k->score = strtod(w, &end);
	if (end == w || *end != '\0' || !(k->score >= 0.0 && k->score <= 1.0))
		r->bad = true;
}

static void read_latency(struct ts_topology *t, struct reader *r)
{
	uint64_t n = number(r, NULL);

	if (r->bad || n == 0 || n > 4096 || t->latency != NULL) {
		r->bad = true;
		return;
	}
	t->latency_os = calloc(n, sizeof(*t->latency_os));
	t->latency = calloc(n * n, sizeof(*t->latency));
	if (t->latency_os == NULL || t->latency == NULL) {
		r->bad = true;
		return;
	}
	t->n_latency = n;
	for (size_t i = 0; i < n; i++)
		t->latency_os[i] = (unsigned)number(r, NULL);
	for (size_t i = 0; i < n * n; i++)
		t->latency[i] = number(r, NULL);
}

/* What the tables must hold to be used: every level that has groups
 * partitions online, every NUMA group's PUs indexable. */
static bool consistent(struct ts_topology *t)
{
	cleanup_hwloc_bitmap hwloc_bitmap_t all = NULL;
	int last;

	/* no "online" line: nothing to ask hwloc about (it would read NULL) */
	if (t->online == NULL)
		return false;
	all = hwloc_bitmap_alloc();
	last = hwloc_bitmap_last(t->online);
	if (all == NULL || hwloc_bitmap_iszero(t->online) || last > 65535 || t->smt_width == 0 ||
	    t->n_groups[TS_CPU_LEVEL_NUMA] == 0 || t->n_groups[TS_CPU_LEVEL_CORE] == 0)
		return false;
	for (int l = 0; l < _TS_CPU_LEVEL_MAX; l++) {
		hwloc_bitmap_zero(all);
		for (size_t i = 0; i < t->n_groups[l]; i++) {
			if (t->groups[l][i].cpus == NULL ||
			    hwloc_bitmap_intersects(all, t->groups[l][i].cpus))
				return false;
			hwloc_bitmap_or(all, all, t->groups[l][i].cpus);
		}
		if (t->n_groups[l] > 0 && !hwloc_bitmap_isequal(all, t->online))
			return false;
	}
	for (size_t i = 0; i < t->n_numa_nodes; i++)
		if (t->numa_nodes[i].cpus == NULL || t->numa_nodes[i].local_cpus == NULL)
			return false;
	for (size_t i = 0; i < t->n_cpu_kinds; i++)
		if (t->cpu_kinds[i].cpus == NULL)
			return false;
	t->n_pu_slots = (unsigned)last + 1;
	t->numa_group_of_pu = malloc((t->n_pu_slots + 1) * sizeof(*t->numa_group_of_pu));
	if (t->numa_group_of_pu == NULL)
		return false;
	for (unsigned i = 0; i < t->n_pu_slots; i++)
		t->numa_group_of_pu[i] = -1;
	for (size_t i = 0; i < t->n_groups[TS_CPU_LEVEL_NUMA]; i++) {
		unsigned pu;
		hwloc_bitmap_foreach_begin(pu, t->groups[TS_CPU_LEVEL_NUMA][i].cpus)
			{
				t->numa_group_of_pu[pu] = (int)i;
			}
		hwloc_bitmap_foreach_end();
	}
	return true;
}

int ts_topology_snapshot_load(const char *text, const char *source, struct ts_topology **ret,
			      struct ts_error **err)
{
	cleanup_topology struct ts_topology *t = calloc(1, sizeof(*t));
	cleanup_free char *copy = strdup(text);
	struct reader r = {0};
	char *line, *save = NULL;
	bool ended = false;

	if (t == NULL || copy == NULL || (t->performance_cpus = hwloc_bitmap_alloc()) == NULL ||
	    (t->efficiency_cpus = hwloc_bitmap_alloc()) == NULL ||
	    (t->source = strdup(source)) == NULL)
		return ts_error_set(err, ENOMEM, "%s: out of memory", source);
	line = strtok_r(copy, "\n", &save);
	if (line == NULL || strcmp(line, MAGIC) != 0)
		return ts_error_set(err, 0, "%s: not a topology snapshot", source);
	while (!r.bad && !ended && (line = strtok_r(NULL, "\n", &save)) != NULL) {
		char *kw = word(&r, line);

		if (strcmp(kw, "online") == 0 && t->online == NULL)
			t->online = list(&r);
		else if (strcmp(kw, "smt") == 0)
			t->smt_width = (unsigned)number(&r, NULL);
		else if (strcmp(kw, "node") == 0)
			read_node(t, &r);
		else if (strcmp(kw, "group") == 0)
			read_group(t, &r);
		else if (strcmp(kw, "kind") == 0)
			read_kind(t, &r);
		else if (strcmp(kw, "kinds") == 0) {
			t->kinds_ranked_by = intern(word(&r, NULL));
			t->kinds_scored_by = intern(word(&r, NULL));
		} else if (strcmp(kw, "latency") == 0)
			read_latency(t, &r);
		else if (strcmp(kw, "end") == 0)
			ended = true;
		else
			r.bad = true;
	}
	if (r.bad || !ended || !consistent(t))
		return ts_error_set(err, 0, "%s: invalid topology snapshot", source);
	(void)ts_topology_kinds_split(t, TS_TOPOLOGY_KIND_THRESHOLD_DEFAULT, t->performance_cpus,
				      t->efficiency_cpus);
	*ret = TAKE_PTR(t);
	return 0;
}
