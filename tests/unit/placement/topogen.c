/* topogen.c - generated hwloc topologies; see topogen.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topogen.h"

static void *xmalloc(size_t n)
{
	void *p = calloc(1, n ? n : 1);

	if (p == NULL)
		abort();
	return p;
}

static char *xstrdup(const char *s)
{
	char *p = s != NULL ? strdup(s) : NULL;

	if (s != NULL && p == NULL)
		abort();
	return p;
}

static void logf_(struct tg_topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct tg_topo *t, const char *fmt, ...)
{
	char *line = NULL, *all = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&line, fmt, ap) < 0)
		abort();
	va_end(ap);
	if (asprintf(&all, "%s%s\n", t->log != NULL ? t->log : "", line) < 0)
		abort();
	free(t->log);
	free(line);
	t->log = all;
}

/* ---- the tree ------------------------------------------------------- */

static struct tg_obj *obj_new(const char *type, long os)
{
	struct tg_obj *o = xmalloc(sizeof(*o));

	o->type = xstrdup(type);
	o->os = os;
	return o;
}

static void obj_free(struct tg_obj *o)
{
	if (o == NULL)
		return;
	for (size_t i = 0; i < o->nkids; i++)
		obj_free(o->kids[i]);
	for (size_t i = 0; i < o->nmem; i++)
		obj_free(o->mem[i]);
	free(o->kids);
	free(o->mem);
	free(o->type);
	free(o->subtype);
	free(o->attrs);
	free(o);
}

static void push(struct tg_obj ***v, size_t *n, struct tg_obj *o)
{
	*v = realloc(*v, (*n + 1) * sizeof(**v));
	if (*v == NULL)
		abort();
	(*v)[(*n)++] = o;
}

static void add_kid(struct tg_obj *parent, struct tg_obj *o, bool memory)
{
	o->parent = parent;
	if (memory)
		push(&parent->mem, &parent->nmem, o);
	else
		push(&parent->kids, &parent->nkids, o);
}

static bool is(const struct tg_obj *o, const char *type)
{
	return strcmp(o->type, type) == 0;
}

static struct tg_obj *obj_dup(const struct tg_obj *o, struct tg_obj *parent)
{
	struct tg_obj *c = obj_new(o->type, o->os);

	c->subtype = xstrdup(o->subtype);
	c->attrs = xstrdup(o->attrs);
	c->memory = o->memory;
	c->offline = o->offline;
	c->cpu_node = o->cpu_node;
	c->parent = parent;
	for (size_t i = 0; i < o->nkids; i++)
		push(&c->kids, &c->nkids, obj_dup(o->kids[i], c));
	for (size_t i = 0; i < o->nmem; i++)
		push(&c->mem, &c->nmem, obj_dup(o->mem[i], c));
	return c;
}

/* Visit every object, normal and memory children, depth first. */
static void walk(struct tg_obj *o, void (*fn)(struct tg_obj *, void *), void *arg)
{
	fn(o, arg);
	for (size_t i = 0; i < o->nmem; i++)
		walk(o->mem[i], fn, arg);
	for (size_t i = 0; i < o->nkids; i++)
		walk(o->kids[i], fn, arg);
}

struct find {
	const char *type;
	long os;
	struct tg_obj *found;
	struct tg_obj **all;
	size_t n;
};

static void find_fn(struct tg_obj *o, void *arg)
{
	struct find *f = arg;

	if (!is(o, f->type) || (f->os >= 0 && o->os != f->os))
		return;
	if (f->found == NULL)
		f->found = o;
	push(&f->all, &f->n, o);
}

/* Every object of a type (os < 0: any), in tree order; caller frees the array. */
static struct tg_obj **find_all(const struct tg_topo *t, const char *type, long os, size_t *n)
{
	struct find f = {.type = type, .os = os};

	walk(t->root, find_fn, &f);
	*n = f.n;
	return f.all;
}

struct tg_obj *tg_numa(const struct tg_topo *t, long os)
{
	size_t n = 0;
	struct tg_obj **all = find_all(t, "NUMANode", os, &n);
	struct tg_obj *o = n > 0 ? all[0] : NULL;

	free(all);
	return o;
}

static void set_fn(struct tg_obj *o, void *arg)
{
	void **a = arg;

	if (is(o, (const char *)a[0]) && (a[2] == NULL || !o->offline))
		hwloc_bitmap_set(a[1], (unsigned)o->os);
}

hwloc_bitmap_t tg_numa_set(const struct tg_topo *t)
{
	void *a[3] = {(void *)"NUMANode", hwloc_bitmap_alloc(), NULL};

	walk(t->root, set_fn, a);
	return a[1];
}

hwloc_bitmap_t tg_online(const struct tg_topo *t)
{
	void *a[3] = {(void *)"PU", hwloc_bitmap_alloc(), (void *)1};

	walk(t->root, set_fn, a);
	return a[1];
}

void tg_free(struct tg_topo *t)
{
	if (t == NULL)
		return;
	obj_free(t->root);
	for (size_t i = 0; i < t->nkinds; i++)
		hwloc_bitmap_free(t->kinds[i].cpus);
	free(t->kinds);
	free(t->dist_os);
	free(t->dist);
	if (t->allowed != NULL)
		hwloc_bitmap_free(t->allowed);
	free(t->log);
	free(t);
}

struct tg_topo *tg_dup(const struct tg_topo *t)
{
	struct tg_topo *c = xmalloc(sizeof(*c));

	c->root = obj_dup(t->root, NULL);
	c->nkinds = t->nkinds;
	c->kinds = xmalloc((t->nkinds + 1) * sizeof(*c->kinds));
	for (size_t i = 0; i < t->nkinds; i++) {
		c->kinds[i] = t->kinds[i];
		c->kinds[i].cpus = hwloc_bitmap_dup(t->kinds[i].cpus);
	}
	c->ndist = t->ndist;
	c->dist_os = xmalloc((t->ndist + 1) * sizeof(*c->dist_os));
	c->dist = xmalloc((t->ndist * t->ndist + 1) * sizeof(*c->dist));
	/* a corpus machine without a distance matrix has none to copy (and
	 * memcpy from NULL is undefined even for 0 bytes) */
	if (t->ndist > 0) {
		memcpy(c->dist_os, t->dist_os, t->ndist * sizeof(*c->dist_os));
		memcpy(c->dist, t->dist, t->ndist * t->ndist * sizeof(*c->dist));
	}
	c->allowed = t->allowed != NULL ? hwloc_bitmap_dup(t->allowed) : NULL;
	c->log = xstrdup(t->log);
	return c;
}

/* ---- from hwloc ----------------------------------------------------- */

static char *attrs_of(hwloc_obj_t o)
{
	char *s = NULL;

	if (hwloc_obj_type_is_cache(o->type) || o->type == HWLOC_OBJ_MEMCACHE) {
		if (asprintf(&s,
			     " cache_size=\"%" PRIu64 "\" depth=\"%u\" cache_linesize=\"%u\" "
			     "cache_associativity=\"%d\" cache_type=\"%d\"",
			     (uint64_t)o->attr->cache.size, o->attr->cache.depth,
			     o->attr->cache.linesize, o->attr->cache.associativity,
			     (int)o->attr->cache.type) < 0)
			abort();
	} else if (o->type == HWLOC_OBJ_GROUP) {
		if (asprintf(&s, " kind=\"%u\" subkind=\"%u\" dont_merge=\"1\"",
			     o->attr->group.kind, o->attr->group.subkind) < 0)
			abort();
	}
	return s;
}

static struct tg_obj *import(hwloc_obj_t o)
{
	struct tg_obj *c = obj_new(hwloc_obj_type_string(o->type),
				   o->os_index == HWLOC_UNKNOWN_INDEX ? -1 : (long)o->os_index);
	hwloc_obj_t k;

	c->subtype = xstrdup(o->subtype);
	c->attrs = attrs_of(o);
	if (o->type == HWLOC_OBJ_NUMANODE) {
		c->memory = o->attr->numanode.local_memory;
		c->cpu_node = !hwloc_bitmap_iszero(o->cpuset);
	}
	for (k = o->memory_first_child; k != NULL; k = k->next_sibling)
		add_kid(c, import(k), true);
	for (k = o->first_child; k != NULL; k = k->next_sibling)
		add_kid(c, import(k), false);
	/* offline PUs exist only in the complete cpuset of their core */
	if (o->type == HWLOC_OBJ_CORE) {
		unsigned pu;
		hwloc_bitmap_foreach_begin(pu, o->complete_cpuset)
			{
				if (hwloc_bitmap_isset(o->cpuset, pu))
					continue;
				struct tg_obj *p = obj_new("PU", (long)pu);
				p->offline = true;
				add_kid(c, p, false);
			}
		hwloc_bitmap_foreach_end();
	}
	return c;
}

static uint64_t info_u64(const struct hwloc_info_s *infos, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(infos[i].name, name) == 0)
			return strtoull(infos[i].value, NULL, 10);
	return 0;
}

struct tg_topo *tg_from_hwloc(hwloc_topology_t h)
{
	struct tg_topo *t = xmalloc(sizeof(*t));
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1;
	int nk = hwloc_cpukinds_get_nr(h, 0);

	t->root = import(hwloc_get_root_obj(h));
	if (!hwloc_bitmap_isequal(hwloc_topology_get_allowed_cpuset(h),
				  hwloc_topology_get_topology_cpuset(h)))
		t->allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(h));
	for (int i = 0; i < nk; i++) {
		struct hwloc_info_s *infos = NULL;
		unsigned ninfos = 0;
		struct tg_kind k = {.cpus = hwloc_bitmap_alloc(), .efficiency = -1};

		if (hwloc_cpukinds_get_info(h, (unsigned)i, k.cpus, &k.efficiency, &ninfos, &infos,
					    0) < 0) {
			hwloc_bitmap_free(k.cpus);
			continue;
		}
		k.capacity = info_u64(infos, ninfos, "LinuxCapacity");
		k.frequency_mhz = (unsigned)info_u64(infos, ninfos, "FrequencyMaxMHz");
		t->kinds = realloc(t->kinds, (t->nkinds + 1) * sizeof(*t->kinds));
		if (t->kinds == NULL)
			abort();
		t->kinds[t->nkinds++] = k;
	}
	if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d,
					HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
	    nr >= 1) {
		t->ndist = d->nbobjs;
		t->dist_os = xmalloc(t->ndist * sizeof(*t->dist_os));
		t->dist = xmalloc(t->ndist * t->ndist * sizeof(*t->dist));
		for (size_t i = 0; i < t->ndist; i++)
			t->dist_os[i] = (long)d->objs[i]->os_index;
		for (size_t i = 0; i < t->ndist * t->ndist; i++)
			t->dist[i] = d->values[i];
		hwloc_distances_release(h, d);
	}
	return t;
}

static struct tg_topo *load_with(int (*set)(hwloc_topology_t, const char *), const char *arg,
				 const char *what)
{
	hwloc_topology_t h;
	struct tg_topo *t = NULL;

	if (hwloc_topology_init(&h) < 0)
		abort();
	(void)hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_NONE);
	if (set(h, arg) == 0 && hwloc_topology_load(h) == 0) {
		t = tg_from_hwloc(h);
		logf_(t, "%s %s", what, arg);
	}
	hwloc_topology_destroy(h);
	return t;
}

struct tg_topo *tg_synthetic(const char *desc)
{
	return load_with(hwloc_topology_set_synthetic, desc, "synthetic");
}

struct tg_topo *tg_from_xml_file(const char *path)
{
	return load_with(hwloc_topology_set_xml, path, "xml");
}

/* ---- to XML --------------------------------------------------------- */

struct emit {
	FILE *f;
	unsigned gp;
	const struct tg_topo *t;
};

/* Online and complete PUs of a subtree (normal children only). */
static void pus_of(const struct tg_obj *o, hwloc_bitmap_t online, hwloc_bitmap_t all)
{
	if (is(o, "PU")) {
		hwloc_bitmap_set(all, (unsigned)o->os);
		if (!o->offline)
			hwloc_bitmap_set(online, (unsigned)o->os);
	}
	for (size_t i = 0; i < o->nkids; i++)
		pus_of(o->kids[i], online, all);
}

/* NUMA nodes attached in a subtree (memory children, nested). */
static void nodes_below(const struct tg_obj *o, hwloc_bitmap_t out)
{
	if (is(o, "NUMANode"))
		hwloc_bitmap_set(out, (unsigned)o->os);
	for (size_t i = 0; i < o->nmem; i++)
		nodes_below(o->mem[i], out);
	for (size_t i = 0; i < o->nkids; i++)
		nodes_below(o->kids[i], out);
}

/* NUMA nodes attached to the strict ancestors (inherited locality). */
static void nodes_above(const struct tg_obj *o, hwloc_bitmap_t out)
{
	for (const struct tg_obj *a = o->parent; a != NULL; a = a->parent)
		for (size_t i = 0; i < a->nmem; i++)
			nodes_below(a->mem[i], out);
}

static bool has_numa(const struct tg_obj *o)
{
	hwloc_bitmap_t n = hwloc_bitmap_alloc();
	bool r;

	nodes_below(o, n);
	r = !hwloc_bitmap_iszero(n);
	hwloc_bitmap_free(n);
	return r;
}

static char *set_str(hwloc_const_bitmap_t b)
{
	char *s = NULL;

	if (hwloc_bitmap_asprintf(&s, b) < 0)
		abort();
	return s;
}

struct sorted {
	const struct tg_obj *o;
	int first;
	long os;
};

static int cmp_sorted(const void *a, const void *b)
{
	const struct sorted *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (x->os > y->os) - (x->os < y->os);
}

static void emit_obj(struct emit *e, const struct tg_obj *o, hwloc_const_bitmap_t attach_cpus,
		     hwloc_const_bitmap_t attach_all, int depth);

/* Children in the order hwloc wants: memory children by OS index, then the
 * normal ones by their first PU; subtrees without PU or node are left out. */
static void emit_kids(struct emit *e, const struct tg_obj *o, hwloc_const_bitmap_t cpus,
		      hwloc_const_bitmap_t all, int depth)
{
	struct sorted *v = xmalloc((o->nmem + o->nkids + 1) * sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < o->nmem; i++)
		v[n++] = (struct sorted){o->mem[i], -1, o->mem[i]->os};
	qsort(v, n, sizeof(*v), cmp_sorted);
	for (size_t i = 0; i < n; i++)
		emit_obj(e, v[i].o, cpus, all, depth);
	n = 0;
	for (size_t i = 0; i < o->nkids; i++) {
		hwloc_bitmap_t on = hwloc_bitmap_alloc(), al = hwloc_bitmap_alloc();

		pus_of(o->kids[i], on, al);
		if (!hwloc_bitmap_iszero(on) || has_numa(o->kids[i]))
			v[n++] = (struct sorted){o->kids[i],
						 hwloc_bitmap_iszero(al) ? 1 << 30
									 : hwloc_bitmap_first(al),
						 o->kids[i]->os};
		hwloc_bitmap_free(on);
		hwloc_bitmap_free(al);
	}
	qsort(v, n, sizeof(*v), cmp_sorted);
	for (size_t i = 0; i < n; i++)
		emit_obj(e, v[i].o, NULL, NULL, depth);
	free(v);
}

static void emit_obj(struct emit *e, const struct tg_obj *o, hwloc_const_bitmap_t attach_cpus,
		     hwloc_const_bitmap_t attach_all, int depth)
{
	hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), all = hwloc_bitmap_alloc();
	hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
	char *cs, *as, *ns, *allowed = NULL;
	bool leaf;

	if (is(o, "PU") && o->offline)
		goto out;
	if (attach_cpus != NULL) { /* a memory child: its parent's locality */
		hwloc_bitmap_copy(cpus, attach_cpus);
		hwloc_bitmap_copy(all, attach_all);
	} else {
		pus_of(o, cpus, all);
	}
	nodes_below(o, nodes);
	nodes_above(o, nodes);
	if (is(o, "NUMANode"))
		hwloc_bitmap_only(nodes, (unsigned)o->os);
	cs = set_str(cpus);
	as = set_str(all);
	ns = set_str(nodes);
	if (o->parent == NULL) {
		hwloc_bitmap_t a = hwloc_bitmap_dup(cpus);
		char *x, *y;

		if (e->t->allowed != NULL)
			hwloc_bitmap_and(a, a, e->t->allowed);
		x = set_str(a);
		y = set_str(nodes);
		if (asprintf(&allowed, " allowed_cpuset=\"%s\" allowed_nodeset=\"%s\"", x, y) < 0)
			abort();
		free(x);
		free(y);
		hwloc_bitmap_free(a);
	}
	leaf = o->nkids == 0 && o->nmem == 0 && !is(o, "NUMANode");
	fprintf(e->f, "%*s<object type=\"%s\"", 2 * depth, "", o->type);
	if (o->os >= 0)
		fprintf(e->f, " os_index=\"%ld\"", o->os);
	fprintf(e->f,
		" cpuset=\"%s\" complete_cpuset=\"%s\" nodeset=\"%s\" complete_nodeset=\"%s\"%s",
		cs, as, ns, ns, allowed != NULL ? allowed : "");
	fprintf(e->f, " gp_index=\"%u\"", ++e->gp);
	if (o->subtype != NULL)
		fprintf(e->f, " subtype=\"%s\"", o->subtype);
	if (o->attrs != NULL)
		fputs(o->attrs, e->f);
	if (is(o, "NUMANode") && o->memory > 0)
		fprintf(e->f, " local_memory=\"%" PRIu64 "\"", o->memory);
	fprintf(e->f, "%s>\n", leaf ? "/" : "");
	if (!leaf) {
		emit_kids(e, o, cpus, all, depth + 1);
		fprintf(e->f, "%*s</object>\n", 2 * depth, "");
	}
	free(cs);
	free(as);
	free(ns);
	free(allowed);
out:
	hwloc_bitmap_free(cpus);
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(nodes);
}

static void emit_distances(struct emit *e)
{
	const struct tg_topo *t = e->t;
	char *idx = NULL, *vals = NULL;
	size_t ilen = 0, vlen = 0;
	FILE *fi, *fv;

	if (t->ndist < 2)
		return;
	for (size_t i = 0; i < t->ndist; i++)
		if (tg_numa(t, t->dist_os[i]) == NULL)
			return; /* a node was removed: its matrix with it */
	fi = open_memstream(&idx, &ilen);
	fv = open_memstream(&vals, &vlen);
	for (size_t i = 0; i < t->ndist; i++)
		fprintf(fi, "%ld ", t->dist_os[i]);
	for (size_t i = 0; i < t->ndist * t->ndist; i++)
		fprintf(fv, "%" PRIu64 " ", t->dist[i]);
	fclose(fi);
	fclose(fv);
	fprintf(e->f,
		"  <distances2 type=\"NUMANode\" nbobjs=\"%zu\" kind=\"5\" indexing=\"os\">\n"
		"    <indexes length=\"%zu\">%s</indexes>\n"
		"    <u64values length=\"%zu\">%s</u64values>\n"
		"  </distances2>\n",
		t->ndist, strlen(idx), idx, strlen(vals), vals);
	free(idx);
	free(vals);
}

static void emit_kinds(struct emit *e)
{
	const struct tg_topo *t = e->t;

	for (size_t i = 0; i < t->nkinds; i++) {
		const struct tg_kind *k = &t->kinds[i];
		char *cs = set_str(k->cpus);

		fprintf(e->f, "  <cpukind cpuset=\"%s\"", cs);
		if (k->efficiency >= 0)
			fprintf(e->f, " forced_efficiency=\"%d\"", k->efficiency);
		fprintf(e->f, ">\n");
		if (k->capacity > 0)
			fprintf(e->f, "    <info name=\"LinuxCapacity\" value=\"%" PRIu64 "\"/>\n",
				k->capacity);
		if (k->frequency_mhz > 0)
			fprintf(e->f, "    <info name=\"FrequencyMaxMHz\" value=\"%u\"/>\n",
				k->frequency_mhz);
		fprintf(e->f, "  </cpukind>\n");
		free(cs);
	}
}

char *tg_xml(const struct tg_topo *t)
{
	char *buf = NULL;
	size_t len = 0;
	struct emit e = {.f = open_memstream(&buf, &len), .t = t};

	if (e.f == NULL)
		abort();
	fprintf(e.f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n<topology version=\"2.0\">\n");
	emit_obj(&e, t->root, NULL, NULL, 1);
	emit_distances(&e);
	emit_kinds(&e);
	fprintf(e.f, "</topology>\n");
	fclose(e.f);
	return buf;
}

/* ---- transformations ------------------------------------------------ */

static void detach(struct tg_obj *o)
{
	struct tg_obj *p = o->parent;
	struct tg_obj **v = p != NULL ? p->mem : NULL;
	size_t *n = p != NULL ? &p->nmem : NULL;

	for (int pass = 0; p != NULL && pass < 2; pass++) {
		for (size_t i = 0; i < *n; i++) {
			if (v[i] != o)
				continue;
			memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
			(*n)--;
			o->parent = NULL;
			return;
		}
		v = p->kids;
		n = &p->nkids;
	}
}

static void drop_dist(struct tg_topo *t, long os)
{
	size_t k = t->ndist;

	for (size_t i = 0; i < t->ndist; i++)
		if (t->dist_os[i] == os)
			k = i;
	if (k == t->ndist)
		return;
	size_t n = t->ndist, m = 0;
	uint64_t *nd = xmalloc(n * n * sizeof(*nd));
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (i != k && j != k)
				nd[m++] = t->dist[i * n + j];
	memmove(&t->dist_os[k], &t->dist_os[k + 1], (n - k - 1) * sizeof(*t->dist_os));
	free(t->dist);
	t->dist = nd;
	t->ndist = n - 1;
}

void tg_drop_memory(struct tg_topo *t, long numa_os, bool remove_node)
{
	struct tg_obj *n = tg_numa(t, numa_os);

	if (n == NULL)
		return;
	logf_(t, "%s numa node %ld", remove_node ? "remove (its cpus in no node)" : "no memory on",
	      numa_os);
	if (!remove_node) {
		n->memory = 0;
		return;
	}
	struct tg_obj *p = n->parent;
	detach(n);
	obj_free(n);
	/* a memory-side cache left without node goes with it */
	if (p != NULL && is(p, "MemCache") && p->nmem == 0) {
		detach(p);
		obj_free(p);
	}
	drop_dist(t, numa_os);
}

static void add_dist(struct tg_topo *t, long os)
{
	size_t n = t->ndist;

	if (n == 0)
		return;
	uint64_t *nd = xmalloc((n + 1) * (n + 1) * sizeof(*nd));
	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= n; j++)
			nd[i * (n + 1) + j] = i < n && j < n ? t->dist[i * n + j]
					      : i == j	     ? 10
							     : 40;
	t->dist_os = realloc(t->dist_os, (n + 1) * sizeof(*t->dist_os));
	if (t->dist_os == NULL)
		abort();
	t->dist_os[n] = os;
	free(t->dist);
	t->dist = nd;
	t->ndist = n + 1;
}

void tg_add_memory_only(struct tg_topo *t, struct tg_obj *near, long os, const char *subtype,
			uint64_t bytes)
{
	struct tg_obj *n = obj_new("NUMANode", os);

	n->subtype = xstrdup(subtype);
	n->memory = bytes;
	if (near != NULL) {
		add_kid(near, n, true);
		logf_(t, "memory-only numa node %ld (%s, %" PRIu64 " bytes) at %s %ld", os,
		      subtype != NULL ? subtype : "no subtype", bytes, near->type, near->os);
	} else {
		struct tg_obj *g = obj_new("Group", -1);

		g->attrs = xstrdup(" kind=\"1001\" subkind=\"0\" dont_merge=\"1\"");
		add_kid(t->root, g, false);
		add_kid(g, n, true);
		logf_(t, "memory-only numa node %ld (%s, %" PRIu64 " bytes) near no cpu", os,
		      subtype != NULL ? subtype : "no subtype", bytes);
	}
	add_dist(t, os);
}

void tg_offline(struct tg_topo *t, long pu_os)
{
	size_t n = 0;
	struct tg_obj **all = find_all(t, "PU", pu_os, &n);

	for (size_t i = 0; i < n; i++)
		all[i]->offline = true;
	if (n > 0)
		logf_(t, "pu %ld offline", pu_os);
	free(all);
}

void tg_set_allowed(struct tg_topo *t, hwloc_const_bitmap_t allowed)
{
	char *s = NULL;

	if (t->allowed != NULL)
		hwloc_bitmap_free(t->allowed);
	t->allowed = hwloc_bitmap_dup(allowed);
	if (hwloc_bitmap_list_asprintf(&s, allowed) < 0)
		abort();
	logf_(t, "allowed cpus (cgroup parent) %s", s);
	free(s);
}

uint64_t tg_next(struct tg_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

unsigned tg_below(struct tg_rng *r, unsigned n)
{
	return n == 0 ? 0 : (unsigned)(tg_next(r) % n);
}

static void remap_set(hwloc_bitmap_t b, const long *map, size_t n)
{
	hwloc_bitmap_t c = hwloc_bitmap_alloc();
	unsigned i;

	hwloc_bitmap_foreach_begin(i, b)
		{
			hwloc_bitmap_set(c, i < n && map[i] >= 0 ? (unsigned)map[i] : i);
		}
	hwloc_bitmap_foreach_end();
	hwloc_bitmap_copy(b, c);
	hwloc_bitmap_free(c);
}

void tg_renumber(struct tg_topo *t, uint64_t seed)
{
	struct tg_rng rng = {seed};
	size_t ncores = 0, npus = 0, nnodes = 0;
	struct tg_obj **cores = find_all(t, "Core", -1, &ncores);
	struct tg_obj **pus = find_all(t, "PU", -1, &npus);
	struct tg_obj **nodes = find_all(t, "NUMANode", -1, &nnodes);
	long maxpu = 0, maxnode = 0;
	unsigned gap = 1 + tg_below(&rng, 3);

	for (size_t i = 0; i < npus; i++)
		maxpu = pus[i]->os > maxpu ? pus[i]->os : maxpu;
	for (size_t i = 0; i < nnodes; i++)
		maxnode = nodes[i]->os > maxnode ? nodes[i]->os : maxnode;
	long *pmap = xmalloc(((size_t)maxpu + 1) * sizeof(*pmap));
	long *nmap = xmalloc(((size_t)maxnode + 1) * sizeof(*nmap));
	for (long i = 0; i <= maxpu; i++)
		pmap[i] = -1;
	/* sibling k of core c: c + k * ncores (Intel's numbering), times a
	 * gap, plus a random hole from the middle on */
	for (size_t c = 0; c < ncores; c++)
		for (size_t k = 0; k < cores[c]->nkids; k++) {
			struct tg_obj *p = cores[c]->kids[k];
			long v = ((long)c + (long)k * (long)ncores) * gap;

			if (is(p, "PU") && p->os <= maxpu)
				pmap[p->os] = v;
		}
	long hole = (long)npus * gap / 2;
	for (long i = 0; i <= maxpu; i++)
		if (pmap[i] >= hole)
			pmap[i] += 7;
	/* PUs outside cores keep a fresh number past the others */
	long next = ((long)npus + 1) * gap * 2 + 16;
	for (size_t i = 0; i < npus; i++)
		if (pmap[pus[i]->os] < 0)
			pmap[pus[i]->os] = next++;
	/* NUMA nodes: reversed order, every other number skipped */
	for (long i = 0; i <= maxnode; i++)
		nmap[i] = -1;
	for (size_t i = 0; i < nnodes; i++)
		nmap[nodes[i]->os] = (long)(nnodes - 1 - i) * 2 + (long)(tg_below(&rng, 2));
	/* keep them distinct after the random bit */
	for (size_t i = 0; i < nnodes; i++)
		for (size_t j = 0; j < i; j++)
			if (nmap[nodes[i]->os] == nmap[nodes[j]->os])
				nmap[nodes[i]->os] += 2 * (long)nnodes;
	for (size_t i = 0; i < npus; i++)
		pus[i]->os = pmap[pus[i]->os];
	for (size_t i = 0; i < nnodes; i++)
		nodes[i]->os = nmap[nodes[i]->os];
	for (size_t i = 0; i < t->nkinds; i++)
		remap_set(t->kinds[i].cpus, pmap, (size_t)maxpu + 1);
	if (t->allowed != NULL)
		remap_set(t->allowed, pmap, (size_t)maxpu + 1);
	for (size_t i = 0; i < t->ndist; i++)
		if (t->dist_os[i] <= maxnode && nmap[t->dist_os[i]] >= 0)
			t->dist_os[i] = nmap[t->dist_os[i]];
	logf_(t,
	      "renumbered: pu = (core + sibling * %zu) * %u (+7 from %ld), numa nodes reversed "
	      "and sparse",
	      ncores, gap, hole);
	free(pmap);
	free(nmap);
	free(cores);
	free(pus);
	free(nodes);
}

void tg_set_kinds(struct tg_topo *t, unsigned n, bool efficiency_known, bool by_capacity,
		  uint64_t seed)
{
	struct tg_rng rng = {seed};
	size_t ncores = 0;
	struct tg_obj **cores = find_all(t, "Core", -1, &ncores);
	static const unsigned caps[] = {1024, 870, 760, 440, 230};
	static const unsigned freqs[] = {5000, 4400, 3900, 2800, 2000};

	for (size_t i = 0; i < t->nkinds; i++)
		hwloc_bitmap_free(t->kinds[i].cpus);
	free(t->kinds);
	t->kinds = NULL;
	t->nkinds = 0;
	if (n == 0 || ncores == 0) {
		free(cores);
		return;
	}
	if (n > 5)
		n = 5;
	if (n > ncores)
		n = (unsigned)ncores;
	t->kinds = xmalloc(n * sizeof(*t->kinds));
	/* kind of core c: consecutive runs of random lengths, fastest first */
	size_t *start = xmalloc((n + 1) * sizeof(*start));
	start[0] = 0;
	for (unsigned k = 1; k < n; k++) {
		size_t left = ncores - start[k - 1] - (n - k);
		start[k] = start[k - 1] + 1 + (left > 1 ? tg_below(&rng, (unsigned)left) : 0);
	}
	start[n] = ncores;
	for (unsigned k = 0; k < n; k++) {
		struct tg_kind *kd = &t->kinds[t->nkinds++];

		kd->cpus = hwloc_bitmap_alloc();
		/* hwloc: lower efficiency first; kind k = the (k+1)-th fastest */
		kd->efficiency = efficiency_known ? (int)(n - 1 - k) : -1;
		kd->capacity = by_capacity ? caps[k] : 0;
		kd->frequency_mhz = by_capacity ? 0 : freqs[k];
		for (size_t c = start[k]; c < start[k + 1]; c++)
			for (size_t i = 0; i < cores[c]->nkids; i++)
				if (is(cores[c]->kids[i], "PU"))
					hwloc_bitmap_set(kd->cpus, (unsigned)cores[c]->kids[i]->os);
	}
	logf_(t, "%u cpu kinds by %s, efficiency %s", n, by_capacity ? "capacity" : "frequency",
	      efficiency_known ? "given" : "unknown");
	free(start);
	free(cores);
}

static int depth_of(const struct tg_obj *o)
{
	int d = 0;

	for (; o->parent != NULL; o = o->parent)
		d++;
	return d;
}

/* Hops between the attach points of two nodes in the tree. */
static int hops(const struct tg_obj *a, const struct tg_obj *b)
{
	const struct tg_obj *x = a->parent, *y = b->parent;
	int h = 0;

	while (x != NULL && y != NULL && x != y) {
		if (depth_of(x) >= depth_of(y))
			x = x->parent;
		else
			y = y->parent;
		h++;
	}
	return h;
}

void tg_default_distances(struct tg_topo *t)
{
	size_t n = 0;
	struct tg_obj **nodes = find_all(t, "NUMANode", -1, &n);

	free(t->dist_os);
	free(t->dist);
	t->ndist = n;
	t->dist_os = xmalloc((n + 1) * sizeof(*t->dist_os));
	t->dist = xmalloc((n * n + 1) * sizeof(*t->dist));
	for (size_t i = 0; i < n; i++)
		t->dist_os[i] = nodes[i]->os;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++) {
			uint64_t v = 10 + 6 * (uint64_t)hops(nodes[i], nodes[j]);

			if (i != j && (!nodes[i]->cpu_node || !nodes[j]->cpu_node))
				v += 5; /* memory-only: a bit farther than a CPU node */
			t->dist[i * n + j] = i == j ? 10 : v;
		}
	logf_(t, "latency matrix from the tree (%zu nodes)", n);
	free(nodes);
}

/* ---- random --------------------------------------------------------- */

static const char *const subtypes[] = {"HBM", "NVM", "CXL-DRAM", "GPUMemory", NULL};

/* A random synthetic description within 1024 PUs and 64 NUMA nodes: the
 * NUMA nodes at the package, a group or the L3 level. */
static char *random_desc(struct tg_rng *r)
{
	static const unsigned smts[] = {1, 2, 2, 2, 4, 8};
	unsigned smt = smts[tg_below(r, 6)];
	unsigned pkg = 1 + tg_below(r, 4), numa = 1 + tg_below(r, 4);
	unsigned l3 = tg_below(r, 4); /* per NUMA node; 0: no L3 level */
	unsigned cores = 1 + tg_below(r, 12);
	unsigned where = numa == 1 ? 0 : 1 + tg_below(r, 2); /* package, group, l3 */
	char mem[64] = "", l3s[16] = "";
	char *d = NULL;
	int n;

	while (pkg * numa * (l3 ? l3 : 1) * cores * smt > 1024) {
		if (cores > 1)
			cores /= 2;
		else if (numa > 1)
			numa--;
		else
			pkg--;
	}
	if (numa == 1)
		where = 0;
	if (where == 2 && l3 == 0)
		l3 = 1;
	if (tg_below(r, 6) != 0)
		snprintf(mem, sizeof(mem), "(memory=%" PRIu64 ")",
			 (uint64_t)(1 + tg_below(r, 64)) << 28);
	if (l3 > 0 && where != 2)
		snprintf(l3s, sizeof(l3s), "l3:%u ", l3);
	if (where == 0)
		n = asprintf(&d, "pack:%u [numa%s] %score:%u pu:%u", pkg, mem, l3s, cores, smt);
	else if (where == 1)
		n = asprintf(&d, "pack:%u group:%u [numa%s] %score:%u pu:%u", pkg, numa, mem, l3s,
			     cores, smt);
	else
		n = asprintf(&d, "pack:%u l3:%u [numa%s] core:%u pu:%u", pkg, l3 * numa, mem, cores,
			     smt);
	if (n < 0)
		abort();
	return d;
}

static void mark_cpu_nodes(struct tg_obj *o, void *arg)
{
	(void)arg;
	if (is(o, "NUMANode"))
		o->cpu_node = true;
}

struct tg_topo *tg_random(uint64_t seed, const struct tg_topo *base)
{
	struct tg_rng r = {seed};
	struct tg_topo *t = NULL;
	size_t n = 0;
	struct tg_obj **nodes;

	if (base != NULL) {
		t = tg_dup(base);
	} else {
		char *desc = random_desc(&r);

		t = tg_synthetic(desc);
		if (t == NULL) {
			fprintf(stderr, "topogen: hwloc refuses '%s'\n", desc);
			abort();
		}
		walk(t->root, mark_cpu_nodes, NULL);
		free(desc);
	}
	logf_(t, "seed %" PRIu64, seed);
	if (t->ndist == 0 && tg_below(&r, 4) != 0)
		tg_default_distances(t);
	nodes = find_all(t, "NUMANode", -1, &n);
	/* CPU nodes without memory: at most all but one */
	for (size_t i = 0; n > 1 && i < n - 1; i++)
		if (nodes[i]->cpu_node && tg_below(&r, 5) == 0)
			tg_drop_memory(t, nodes[i]->os, tg_below(&r, 2) == 0);
	free(nodes);
	/* memory-only nodes; with sizes only when the machine has them (hwloc
	 * gives all nodes a size or none) */
	hwloc_bitmap_t used = tg_numa_set(t);
	bool sized = false;
	nodes = find_all(t, "NUMANode", -1, &n);
	for (size_t i = 0; i < n; i++)
		sized |= nodes[i]->memory > 0;
	free(nodes);
	unsigned extra = tg_below(&r, 4) == 0 ? 1 + tg_below(&r, 3) : 0;
	for (unsigned i = 0; i < extra && hwloc_bitmap_weight(used) < 64; i++) {
		size_t np = 0;
		struct tg_obj **pk = find_all(t, tg_below(&r, 2) ? "Package" : "NUMANode", -1, &np);
		struct tg_obj *near = np > 0 ? pk[tg_below(&r, (unsigned)np)] : NULL;
		const char *st = subtypes[tg_below(&r, 5)];
		long os = hwloc_bitmap_last(used) + 1 + (long)tg_below(&r, 3);

		if (near != NULL && is(near, "NUMANode"))
			near = near->parent;
		if (st != NULL && strcmp(st, "GPUMemory") == 0)
			near = NULL;
		tg_add_memory_only(t, near, os, st,
				   sized ? (uint64_t)(1 + tg_below(&r, 16)) << 28 : 0);
		hwloc_bitmap_set(used, (unsigned)os);
		free(pk);
	}
	hwloc_bitmap_free(used);
	/* CPU kinds */
	if (tg_below(&r, 3) == 0)
		tg_set_kinds(t, 1 + tg_below(&r, 5), tg_below(&r, 2) == 0, tg_below(&r, 2) == 0,
			     tg_next(&r));
	/* sparse, non-contiguous OS indexes */
	if (tg_below(&r, 3) == 0)
		tg_renumber(t, tg_next(&r));
	/* offline PUs (never all) and a cgroup parent's cpuset */
	hwloc_bitmap_t on = tg_online(t);
	int w = hwloc_bitmap_weight(on);
	if (w > 2 && tg_below(&r, 4) == 0) {
		unsigned k = 1 + tg_below(&r, (unsigned)(w / 8 + 1));
		for (unsigned i = 0; i < k; i++) {
			hwloc_bitmap_t cur = tg_online(t);
			int idx = hwloc_bitmap_weight(cur) > 2
					  ? (int)tg_below(&r, (unsigned)hwloc_bitmap_weight(cur))
					  : -1;
			int pu = -1;
			for (int j = 0, p = hwloc_bitmap_first(cur); p >= 0 && idx >= 0;
			     j++, p = hwloc_bitmap_next(cur, p))
				if (j == idx)
					pu = p;
			if (pu >= 0)
				tg_offline(t, pu);
			hwloc_bitmap_free(cur);
		}
	}
	hwloc_bitmap_free(on);
	on = tg_online(t);
	w = hwloc_bitmap_weight(on);
	if (w > 4 && tg_below(&r, 5) == 0) {
		hwloc_bitmap_t a = hwloc_bitmap_dup(on);
		unsigned drop = 1 + tg_below(&r, (unsigned)(w / 4));
		for (unsigned i = 0; i < drop; i++)
			hwloc_bitmap_clr(a, (unsigned)hwloc_bitmap_last(a));
		tg_set_allowed(t, a);
		hwloc_bitmap_free(a);
	}
	hwloc_bitmap_free(on);
	return t;
}
