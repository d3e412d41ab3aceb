/* fixtures.c - hwloc XML built from the kubelet's CPU topology fixtures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fixtures.h"
#include "util/cleanup.h"

/* Shape of one fixture: core c has PUs pu(c, t) for t < smt, and sits in
 * package pkg(c), NUMA node numa(c) (-1: one node for the whole machine) and
 * L3 group l3(c) (-1: no L3 level). */
struct shape {
	unsigned ncores, smt, npkg, nnuma, nl3;
	unsigned (*pu)(unsigned c, unsigned t);
	int (*pkg)(unsigned c);
	int (*numa)(unsigned c);
	int (*l3)(unsigned c);
	unsigned (*core_id)(unsigned c); /* NULL: c */
};

static unsigned pu_plus4(unsigned c, unsigned t)
{
	return c + 4 * t;
}
static unsigned pu_plus6(unsigned c, unsigned t)
{
	return c + 6 * t;
}
static unsigned pu_pair(unsigned c, unsigned t)
{
	return 2 * c + t;
}
static unsigned pu_self(unsigned c, unsigned t)
{
	return c + t;
}
static unsigned pu_plus40(unsigned c, unsigned t)
{
	return c + 40 * t;
}
static unsigned pu_plus8(unsigned c, unsigned t)
{
	return c + 8 * t;
}
static unsigned pu_plus192(unsigned c, unsigned t)
{
	return c + 192 * t;
}
static int zero(unsigned c)
{
	return 0;
}
static int none(unsigned c)
{
	return -1;
}
static int mod2(unsigned c)
{
	return (int)(c % 2);
}
static int t3_pkg(unsigned c)
{
	return c < 3 ? 1 : c < 6 ? 0 : 2;
}
static int div4(unsigned c)
{
	return (int)(c / 4);
}
static int div8(unsigned c)
{
	return (int)(c / 8);
}
static int div10(unsigned c)
{
	return (int)(c / 10);
}
static int div20(unsigned c)
{
	return (int)(c / 20);
}
static int div96(unsigned c)
{
	return (int)(c / 96);
}

/* T6, the kubelet's KNL SNC4 fixture: 72 SMT4 cores with ids 0-15, 18-57,
 * 60-75 (no 16, 17, 58, 59).  Core k < 64 has PUs f, f+60, f+120, f+180
 * with f = 49 + k (minus 2 past each gap), except core 0 whose first PU is
 * 0 and core 63 whose PUs are 37, 108, 168, 228; core 64 + j has PUs
 * 1+j, 13+j, 25+j, 38+j.  Cores pair up on packages: package (k / 2) % 4
 * (k < 64), ((k - 64) / 2) % 4 (k >= 64); NUMA node = package. */
static unsigned t6_core(unsigned c)
{
	if (c >= 60)
		return 64 + (c - 60);
	if (c == 59)
		return 63;
	return c < 16 ? c : c < 56 ? c + 2 : c + 4;
}

static unsigned t6_pu(unsigned c, unsigned t)
{
	unsigned k = t6_core(c), f;

	if (k >= 64)
		return (k - 64) + (t == 0 ? 1 : t == 1 ? 13 : t == 2 ? 25 : 38);
	if (k == 63)
		return t == 0 ? 37 : 108 + 60 * (t - 1);
	f = 49 + k - (k >= 18 ? 2 : 0) - (k >= 60 ? 2 : 0);
	if (k == 0 && t == 0)
		return 0;
	return f + 60 * t;
}

static int t6_pkg(unsigned c)
{
	unsigned k = t6_core(c);

	return (int)((k >= 64 ? (k - 64) / 2 : k / 2) % 4);
}

static const struct shape shapes[_FIXTURE_MAX] = {
	[T1] = {4, 2, 1, 1, 0, pu_plus4, zero, zero, none},
	[T2] = {6, 2, 2, 2, 0, pu_plus6, mod2, mod2, none},
	[T3] = {9, 2, 3, 1, 0, pu_pair, t3_pkg, none, none},
	[T4] = {8, 1, 2, 2, 0, pu_self, div4, div4, none},
	[T5] = {40, 2, 2, 4, 0, pu_plus40, div20, div10, none},
	[T6] = {72, 4, 4, 4, 0, t6_pu, t6_pkg, t6_pkg, none, t6_core},
	[T8] = {16, 1, 1, 1, 4, pu_self, zero, zero, div4},
	[T9] = {16, 1, 2, 2, 4, pu_self, div8, div8, div4},
	[T10] = {16, 1, 1, 2, 4, pu_self, zero, div8, div4},
	[T11] = {8, 2, 1, 1, 2, pu_plus8, zero, zero, div4},
	[T12] = {192, 2, 2, 2, 24, pu_plus192, div96, div96, div8},
};

struct gen {
	const struct shape *s;
	FILE *f;
	unsigned gp;
};

/* PUs of the cores matching a predicate. */
static hwloc_bitmap_t cpus_where(const struct shape *s, int (*key)(unsigned), int want)
{
	hwloc_bitmap_t b = hwloc_bitmap_alloc();

	for (unsigned c = 0; c < s->ncores; c++)
		if (key == NULL || key(c) == want)
			for (unsigned t = 0; t < s->smt; t++)
				hwloc_bitmap_set(b, s->pu(c, t));
	return b;
}

static void open_obj(struct gen *g, const char *type, unsigned os, hwloc_const_bitmap_t cpus,
		     hwloc_const_bitmap_t nodes, const char *extra, bool leaf)
{
	cleanup_free char *cs = NULL, *ns = NULL;

	hwloc_bitmap_asprintf(&cs, cpus);
	hwloc_bitmap_asprintf(&ns, nodes);
	fprintf(g->f,
		"<object type=\"%s\" os_index=\"%u\" cpuset=\"%s\" complete_cpuset=\"%s\" "
		"nodeset=\"%s\" complete_nodeset=\"%s\" gp_index=\"%u\"%s%s>\n",
		type, os, cs, cs, ns, ns, ++g->gp, extra, leaf ? "/" : "");
}

static void numa_obj(struct gen *g, unsigned id, hwloc_const_bitmap_t cpus)
{
	hwloc_bitmap_t n = hwloc_bitmap_alloc();

	hwloc_bitmap_only(n, id);
	open_obj(g, "NUMANode", id, cpus, n, " local_memory=\"1073741824\"", true);
	hwloc_bitmap_free(n);
}

static hwloc_bitmap_t nodes_of(const struct shape *s, hwloc_const_bitmap_t cpus)
{
	hwloc_bitmap_t n = hwloc_bitmap_alloc();

	for (unsigned c = 0; c < s->ncores; c++)
		if (hwloc_bitmap_isset(cpus, s->pu(c, 0)))
			hwloc_bitmap_set(n, (unsigned)(s->numa(c) < 0 ? 0 : s->numa(c)));
	return n;
}

static void emit_cores(struct gen *g, int (*key)(unsigned), int want, int (*key2)(unsigned),
		       int want2)
{
	const struct shape *s = g->s;

	/* hwloc wants siblings in cpuset order: walk cores by lowest PU */
	for (unsigned done = 0, last_pu = 0; done < s->ncores; done++) {
		unsigned c = s->ncores, min_pu = 0;
		for (unsigned k = 0; k < s->ncores; k++) {
			unsigned lo = s->pu(k, 0);
			for (unsigned t = 1; t < s->smt; t++)
				lo = s->pu(k, t) < lo ? s->pu(k, t) : lo;
			if ((done == 0 || lo > last_pu) && (c == s->ncores || lo < min_pu))
				c = k, min_pu = lo;
		}
		if (c == s->ncores)
			break;
		last_pu = min_pu;
		if (key(c) != want || (key2 != NULL && key2(c) != want2))
			continue;
		hwloc_bitmap_t cc = hwloc_bitmap_alloc();
		for (unsigned t = 0; t < s->smt; t++)
			hwloc_bitmap_set(cc, s->pu(c, t));
		hwloc_bitmap_t n = nodes_of(s, cc);
		open_obj(g, "Core", s->core_id != NULL ? s->core_id(c) : c, cc, n, "", false);
		for (unsigned t = 0; t < s->smt; t++) {
			hwloc_bitmap_t p = hwloc_bitmap_alloc();
			hwloc_bitmap_only(p, s->pu(c, t));
			open_obj(g, "PU", s->pu(c, t), p, n, "", true);
			hwloc_bitmap_free(p);
		}
		fprintf(g->f, "</object>\n");
		hwloc_bitmap_free(cc);
		hwloc_bitmap_free(n);
	}
}

/* Inside one NUMA group (or package): L3 groups, then cores. */
static void emit_inner(struct gen *g, int (*key)(unsigned), int want)
{
	const struct shape *s = g->s;

	if (s->nl3 == 0) {
		emit_cores(g, key, want, NULL, 0);
		return;
	}
	for (unsigned l = 0; l < s->nl3; l++) {
		hwloc_bitmap_t lc = cpus_where(s, s->l3, (int)l);
		hwloc_bitmap_t mine = cpus_where(s, key, want);
		if (!hwloc_bitmap_isincluded(lc, mine)) {
			hwloc_bitmap_free(lc);
			hwloc_bitmap_free(mine);
			continue;
		}
		hwloc_bitmap_t n = nodes_of(s, lc);
		open_obj(g, "L3Cache", l, lc, n,
			 " cache_size=\"33554432\" depth=\"3\" cache_linesize=\"64\" "
			 "cache_associativity=\"0\" cache_type=\"0\"",
			 false);
		emit_cores(g, s->l3, (int)l, NULL, 0);
		fprintf(g->f, "</object>\n");
		hwloc_bitmap_free(lc);
		hwloc_bitmap_free(mine);
		hwloc_bitmap_free(n);
	}
}

static void emit_package(struct gen *g, unsigned p)
{
	const struct shape *s = g->s;
	hwloc_bitmap_t pc = cpus_where(s, s->pkg, (int)p);
	hwloc_bitmap_t pn = nodes_of(s, pc);
	bool numa_here = s->numa(0) >= 0 && (unsigned)hwloc_bitmap_weight(pn) == 1;

	open_obj(g, "Package", p, pc, pn, "", false);
	if (numa_here)
		numa_obj(g, (unsigned)hwloc_bitmap_first(pn), pc);
	if (s->numa(0) < 0 || numa_here) {
		emit_inner(g, s->pkg, (int)p);
	} else {
		unsigned n;
		hwloc_bitmap_foreach_begin(n, pn)
			{
				hwloc_bitmap_t nc = cpus_where(s, s->numa, (int)n);
				hwloc_bitmap_t one = hwloc_bitmap_alloc();
				hwloc_bitmap_only(one, n);
				open_obj(g, "Group", n, nc, one, " kind=\"1000\" dont_merge=\"1\"",
					 false);
				numa_obj(g, n, nc);
				emit_inner(g, s->numa, (int)n);
				fprintf(g->f, "</object>\n");
				hwloc_bitmap_free(nc);
				hwloc_bitmap_free(one);
			}
		hwloc_bitmap_foreach_end();
	}
	fprintf(g->f, "</object>\n");
	hwloc_bitmap_free(pc);
	hwloc_bitmap_free(pn);
}

static char *build_xml(const struct shape *s)
{
	char *buf = NULL;
	size_t len = 0;
	struct gen g = {.s = s, .f = open_memstream(&buf, &len)};
	hwloc_bitmap_t all = cpus_where(s, NULL, 0);
	hwloc_bitmap_t nodes = nodes_of(s, all);

	fprintf(g.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n");
	open_obj(&g, "Machine", 0, all, nodes, "", false);
	if (s->numa(0) < 0)
		numa_obj(&g, 0, all);
	/* hwloc wants siblings in cpuset order (T3 numbers package 1 first) */
	for (int done = 0, last = -1; done < (int)s->npkg; done++) {
		int best = -1, best_first = 0;
		for (unsigned p = 0; p < s->npkg; p++) {
			hwloc_bitmap_t pc = cpus_where(s, s->pkg, (int)p);
			int first = hwloc_bitmap_first(pc);
			hwloc_bitmap_free(pc);
			if (first > last && (best < 0 || first < best_first))
				best = (int)p, best_first = first;
		}
		emit_package(&g, (unsigned)best);
		last = best_first;
	}
	fprintf(g.f, "</object>\n</topology>\n");
	fclose(g.f);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(nodes);
	return buf;
}

struct ts_topology *fixture_load(enum fixture_id id)
{
	cleanup_free char *xml = build_xml(&shapes[id]);
	cleanup_error struct ts_error *err = NULL;
	struct ts_topology *t = NULL;
	int r = ts_topology_load_xml_buffer(xml, "fixture", &t, &err);

	if (r < 0)
		fail_msg("fixture %d: %s\n%s", (int)id, err->msg, xml);
	assert_int_equal(hwloc_bitmap_weight(t->online), shapes[id].ncores * shapes[id].smt);
	return t;
}

hwloc_bitmap_t fixture_set(const char *list)
{
	cleanup_error struct ts_error *err = NULL;
	hwloc_bitmap_t b = NULL;

	if (ts_cpulist_parse(list, &b, &err) < 0)
		fail_msg("%s", err->msg);
	return b;
}

const char *fixture_str(hwloc_const_bitmap_t set)
{
	static char buf[4096];

	if (hwloc_bitmap_iszero(set))
		buf[0] = '\0';
	else
		hwloc_bitmap_list_snprintf(buf, sizeof(buf), set);
	return buf;
}

void fixture_assert_set(const char *name, hwloc_const_bitmap_t got, const char *want)
{
	hwloc_bitmap_t w = fixture_set(want);
	bool same = hwloc_bitmap_isequal(got, w);

	hwloc_bitmap_free(w);
	if (!same)
		fail_msg("%s: got '%s', want '%s'", name, fixture_str(got), want);
}
