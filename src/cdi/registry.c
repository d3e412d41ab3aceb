/*
 * registry.c - spec dirs, device index, options, and all-or-nothing injection.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cdi/internal.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define SPEC_MAX_BYTES (16u << 20)

/* Append one formatted problem; @return its index, or -ENOMEM. */
__attribute__((format(printf, 2, 0))) static int add_problem_v(struct ts_cdi_registry *reg,
							       const char *fmt, va_list ap)
{
	char **v = realloc(reg->problems, (reg->n_problems + 1) * sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	reg->problems = v;
	if (vasprintf(&v[reg->n_problems], fmt, ap) < 0)
		return -ENOMEM;
	return (int)reg->n_problems++;
}

int ts_cdi_registry_add_problem(struct ts_cdi_registry *reg, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = add_problem_v(reg, fmt, ap);
	va_end(ap);
	return r < 0 ? r : 0;
}

/* A device several spec files of one dir define: one problem per file
 * (check_resolvable() finds them by this shape). */
#define CONFLICT_MID ": conflicting device '"
#define CONFLICT_FMT \
	"%s" CONFLICT_MID "%s' (defined by %zu spec files of the same dir), device unavailable"
static unsigned long overflow_id(const char *path)
{
	unsigned long v = 65534;
	FILE *f = fopen(path, "re");

	if (f != NULL) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 65534;
		fclose(f);
	}
	return v;
}

/* Rootless podman runs its runtime as root of the user's namespace (euid
 * 0 there, the user outside): the namespace is checked before the euid. */
bool ts_cdi_trusted_uid(uid_t uid)
{
	if (uid == 0)
		return true;
	if (ts_in_user_namespace())
		return uid == geteuid() || uid == overflow_id("/proc/sys/kernel/overflowuid");
	return geteuid() != 0 && uid == geteuid();
}

bool ts_cdi_trusted_gid(gid_t gid)
{
	if (gid == 0)
		return true;
	if (ts_in_user_namespace())
		return gid == getegid() || gid == overflow_id("/proc/sys/kernel/overflowgid");
	return geteuid() != 0 && gid == getegid();
}

/* Refuse what a non-root user could have written. @return true if safe. */
static bool check_secure(struct ts_cdi_registry *reg, const char *path, const struct stat *st,
			 const char *what, int *r)
{
	*r = 0;
	if (!ts_cdi_trusted_uid(st->st_uid))
		*r = ts_cdi_registry_scanned_problem(
			reg, "%s: refusing %s not owned by root (owner uid %u, mode %04o)", path,
			what, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
	else if ((st->st_mode & S_IWOTH) ||
		 ((st->st_mode & S_IWGRP) && !ts_cdi_trusted_gid(st->st_gid)))
		*r = ts_cdi_registry_scanned_problem(
			reg, "%s: refusing %s writable by non-root (mode %04o, gid %u)", path, what,
			(unsigned)(st->st_mode & 07777), (unsigned)st->st_gid);
	else
		return true;
	return false;
}

static bool has_spec_suffix(const char *name)
{
	size_t len = strlen(name);

	return len >= 5 &&
	       (strcmp(name + len - 5, ".json") == 0 || strcmp(name + len - 5, ".yaml") == 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int ts_cdi_read_fd(int fd, const struct stat *st, char **ret_buf, size_t *ret_len)
{
	cleanup_error struct ts_error *err = NULL; /* callers word their own message */

	return ts_read_fd_sized(fd, "spec", SPEC_MAX_BYTES, (size_t)st->st_size, ret_buf, ret_len,
				&err);
}

/* v with room for element n (n elements of size in it): grown to twice its
 * size when n reaches a power of two from 8 up, the capacity the array has
 * when it only ever grows through here.  A realloc per element copied the
 * whole array at each of the 1000 files of a large spec dir. */
static void *grow_for(void *v, size_t n, size_t size)
{
	size_t cap;

	if (n != 0 && (n < 8 || (n & (n - 1)) != 0))
		return v;
	cap = n == 0 ? 8 : 2 * n;
	return reallocarray(v, cap, size);
}

int ts_cdi_registry_add_spec(struct ts_cdi_registry *reg, struct ts_cdi_spec *spec)
{
	struct ts_cdi_spec **v;

	if (spec == NULL)
		return -ENOMEM;
	v = grow_for(reg->specs, reg->n_specs, sizeof(*v));
	if (v == NULL) {
		ts_cdi_spec_free(spec);
		return -ENOMEM;
	}
	reg->specs = v;
	v[reg->n_specs++] = spec;
	if (reg->n_scanned > 0)
		reg->scanned[reg->n_scanned - 1].spec = spec;
	return 0;
}

int ts_cdi_registry_scanned_problem(struct ts_cdi_registry *reg, const char *fmt, ...)
{
	struct ts_cdi_scanned *last = reg->n_scanned ? &reg->scanned[reg->n_scanned - 1] : NULL;
	va_list ap;
	int i;

	va_start(ap, fmt);
	i = add_problem_v(reg, fmt, ap);
	va_end(ap);
	if (i < 0)
		return i;
	/* the file just scanned keeps it too (for the index) */
	if (last != NULL && last->problem == NULL) {
		last->problem = strdup(reg->problems[i]);
		if (last->problem == NULL)
			return -ENOMEM;
	}
	return 0;
}

/* Load one file of a dir, reusing the index's record when its stat is unchanged; a
 * problem is recorded, never returned.  @return 0 or -ENOMEM. */
static int load_file(struct ts_cdi_registry *reg, int dfd, const char *dir, const char *name,
		     unsigned priority, bool require_root, const struct ts_cdi_index *idx)
{
	cleanup_free char *path = NULL, *buf = NULL;
	cleanup_close int fd = -EBADF;
	cleanup_error struct ts_error *err = NULL;
	const struct ts_cdi_index_file *prev;
	struct ts_cdi_spec *spec = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		reg->scan_incomplete = true; /* nothing to compare with next time */
		return ts_cdi_registry_add_problem(reg, "%s: cannot open: %s", path,
						   strerror(errno));
	}
	if (S_ISDIR(st.st_mode))
		return 0; /* non-recursive: a dir named x.json is not a spec */
	if (ts_cdi_registry_add_scanned(reg, path, &st) < 0)
		return -ENOMEM;
	if (!S_ISREG(st.st_mode))
		return ts_cdi_registry_scanned_problem(reg, "%s: not a regular file", path);
	if (require_root && !check_secure(reg, path, &st, "spec file", &r))
		return r;
	prev = idx ? ts_cdi_index_lookup(idx, path) : NULL;
	if (prev != NULL && ts_cdi_scanned_matches(&prev->rec, &st)) {
		/* unchanged since the index was written: no need to parse it again */
		if (prev->rec.problem != NULL)
			return ts_cdi_registry_scanned_problem(reg, "%s", prev->rec.problem);
		if (prev->kind != NULL)
			return ts_cdi_registry_add_spec(
				reg, ts_cdi_spec_new_lazy(path, prev->kind, priority, prev->names,
							  prev->n_names));
	}
	r = ts_cdi_read_fd(fd, &st, &buf, &len);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ts_cdi_registry_scanned_problem(reg, "%s: cannot read: %s", path,
						       strerror(-r));
	r = ts_cdi_spec_parse(buf, len, path, priority, &spec, &err);
	/* a file that exhausts memory is that file's problem: the registry and
	 * the other specs stay usable (if memory is really gone, recording the
	 * problem fails too, and that is the registry's -ENOMEM) */
	if (r == -ENOMEM) {
		reg->scan_incomplete = true; /* maybe transient: not recorded in the index */
		return ts_cdi_registry_scanned_problem(
			reg, "%s: out of memory while parsing, skipped", path);
	}
	if (r < 0)
		return ts_cdi_registry_scanned_problem(reg, "%s", err->msg);
	return ts_cdi_registry_add_spec(reg, spec);
}

static int load_dir(struct ts_cdi_registry *reg, const char *dir, unsigned priority,
		    bool require_root, const struct ts_cdi_index *idx)
{
	cleanup_closedir DIR *d = NULL;
	cleanup_free char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	struct stat st;
	int fd, r = 0;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return ts_cdi_registry_add_scanned(reg, dir, NULL);
	if (fd < 0)
		reg->scan_incomplete = true;
	if (fd < 0)
		return ts_cdi_registry_add_problem(reg, "%s: cannot open spec dir: %s", dir,
						   strerror(errno));
	if (fstat(fd, &st) < 0) {
		r = errno;
		close(fd);
		reg->scan_incomplete = true;
		return ts_cdi_registry_add_problem(reg, "%s: cannot stat spec dir: %s", dir,
						   strerror(r));
	}
	if (ts_cdi_registry_add_scanned(reg, dir, &st) < 0) {
		close(fd);
		return -ENOMEM;
	}
	if (require_root && !check_secure(reg, dir, &st, "spec dir", &r)) {
		close(fd);
		return r;
	}
	d = fdopendir(fd);
	if (d == NULL) {
		r = errno;
		close(fd);
		reg->scan_incomplete = true;
		return ts_cdi_registry_add_problem(reg, "%s: cannot read spec dir: %s", dir,
						   strerror(r));
	}
	errno = 0;
	while ((de = readdir(d)) != NULL) {
		if (!has_spec_suffix(de->d_name))
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 16;
			char **v = realloc(names, nc * sizeof(*v));

			if (v == NULL) {
				r = -ENOMEM;
				goto out;
			}
			names = v;
			cap = nc;
		}
		names[n] = strdup(de->d_name);
		if (names[n] == NULL) {
			r = -ENOMEM;
			goto out;
		}
		n++;
	}
	if (errno != 0) {
		reg->scan_incomplete = true;
		r = ts_cdi_registry_add_problem(reg, "%s: cannot read spec dir: %s", dir,
						strerror(errno));
	}
	if (n > 0)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; r >= 0 && i < n; i++)
		r = load_file(reg, dirfd(d), dir, names[i], priority, require_root, idx);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	return r;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct ts_cdi_entry *x = a, *y = b;
	int c = strcmp(x->qualified_name, y->qualified_name);

	if (c != 0)
		return c;
	if (x->spec->priority != y->spec->priority)
		return x->spec->priority < y->spec->priority ? -1 : 1;
	return strcmp(x->spec->path, y->spec->path);
}

/* Collect every (qualified name, spec, index), then keep the winners. */
static int index_devices(struct ts_cdi_registry *reg)
{
	struct ts_cdi_entry *all = NULL;
	size_t n = 0, cap = 0, out = 0;
	int r = 0;

	for (size_t s = 0; s < reg->n_specs; s++) {
		for (size_t i = 0; i < reg->specs[s]->n_devices; i++) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct ts_cdi_entry *v = realloc(all, nc * sizeof(*v));

				if (v == NULL)
					goto oom;
				all = v;
				cap = nc;
			}
			if (asprintf(&all[n].qualified_name, "%s=%s", reg->specs[s]->kind,
				     reg->specs[s]->device_names[i]) < 0)
				goto oom;
			all[n].spec = reg->specs[s];
			all[n].index = i;
			n++;
		}
	}
	if (n > 0)
		qsort(all, n, sizeof(*all), cmp_entry);
	for (size_t i = 0; i < n;) {
		size_t j = i, top;

		while (j < n && strcmp(all[j].qualified_name, all[i].qualified_name) == 0)
			j++;
		/* [i, j) share the name, sorted by priority: the last priority wins */
		top = j - 1;
		while (top > i && all[top - 1].spec->priority == all[j - 1].spec->priority)
			top--;
		if (j - top > 1) {
			for (size_t k = top; k < j && r == 0; k++)
				r = ts_cdi_registry_add_problem(reg, CONFLICT_FMT,
								all[k].spec->path,
								all[k].qualified_name, j - top);
			for (size_t k = i; k < j; k++)
				free(all[k].qualified_name);
		} else {
			struct ts_cdi_entry winner = all[j - 1];

			for (size_t k = i; k + 1 < j; k++)
				free(all[k].qualified_name);
			all[out++] = winner; /* out <= i: nothing unread is overwritten */
		}
		if (r < 0) {
			for (size_t k = j; k < n; k++)
				free(all[k].qualified_name);
			break;
		}
		i = j;
	}
	reg->devices = all;
	reg->n_devices = out;
	return r;
oom:
	for (size_t k = 0; k < n; k++)
		free(all[k].qualified_name);
	free(all);
	return -ENOMEM;
}

int ts_cdi_registry_finish(struct ts_cdi_registry *reg)
{
	reg->names = calloc(reg->n_devices + 1, sizeof(*reg->names));
	if (reg->names == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < reg->n_devices; k++)
		reg->names[k] = reg->devices[k].qualified_name;
	return 0;
}

int ts_cdi_registry_add_scanned(struct ts_cdi_registry *reg, const char *path,
				const struct stat *st)
{
	struct ts_cdi_scanned *v = grow_for(reg->scanned, reg->n_scanned, sizeof(*v));

	if (v == NULL)
		return -ENOMEM;
	reg->scanned = v;
	v[reg->n_scanned] = (struct ts_cdi_scanned){.path = strdup(path), .exists = st != NULL};
	if (v[reg->n_scanned].path == NULL)
		return -ENOMEM;
	if (st != NULL)
		v[reg->n_scanned].st = *st;
	reg->n_scanned++;
	return 0;
}

/* Free what reg holds, leaving it empty. */
static void registry_clear(struct ts_cdi_registry *reg)
{
	for (size_t i = 0; i < reg->n_specs; i++)
		ts_cdi_spec_free(reg->specs[i]);
	free(reg->specs);
	for (size_t i = 0; i < reg->n_devices; i++)
		free(reg->devices[i].qualified_name);
	free(reg->devices);
	free(reg->names);
	for (size_t i = 0; i < reg->n_problems; i++)
		free(reg->problems[i]);
	free(reg->problems);
	for (size_t i = 0; i < reg->n_scanned; i++) {
		free(reg->scanned[i].path);
		free(reg->scanned[i].problem);
	}
	free(reg->scanned);
	*reg = (struct ts_cdi_registry){0};
}

struct ts_cdi_registry *ts_cdi_registry_free(struct ts_cdi_registry *reg)
{
	if (reg == NULL)
		return NULL;
	free(reg->spec_dirs);
	registry_clear(reg);
	free(reg);
	return NULL;
}

/* "a, b" of the spec dirs (for messages); NULL on ENOMEM. */
static char *join_dirs(char *const *dirs)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL)
		return NULL;
	for (size_t i = 0; dirs != NULL && dirs[i] != NULL; i++)
		fprintf(f, "%s%s", i > 0 ? ", " : "", dirs[i]);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static int load(const struct ts_cdi_options *opts, const char *const *wanted, size_t n_wanted,
		struct ts_cdi_registry **ret, struct ts_error **err)
{
	struct ts_cdi_registry *reg = calloc(1, sizeof(*reg));
	struct ts_cdi_index *idx = NULL;
	bool scan = true;
	int r = 0;

	if (reg == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	if (opts->index_path != NULL)
		r = ts_cdi_index_read(opts, opts->index_path, &idx);
	if (r >= 0 && idx != NULL && ts_cdi_index_fresh(idx)) {
		/* nothing changed: no dir is read, no file parsed */
		scan = false;
		r = ts_cdi_index_fill(idx, wanted, n_wanted, reg);
		if (r == -EINVAL) {
			/* fresh-looking but inconsistent (damaged, or forged):
			 * forget it; the full scan writes a sound one */
			registry_clear(reg);
			idx = ts_cdi_index_free(idx);
			scan = true;
			r = 0;
		}
	}
	if (r >= 0 && scan && idx != NULL)
		r = ts_cdi_index_sort(idx);
	if (r >= 0 && scan) {
		for (unsigned i = 0;
		     r >= 0 && opts->spec_dirs != NULL && opts->spec_dirs[i] != NULL; i++)
			r = load_dir(reg, opts->spec_dirs[i], i, opts->require_root_owned, idx);
		if (r >= 0)
			r = index_devices(reg);
		if (r >= 0 && opts->index_path != NULL && !reg->scan_incomplete)
			ts_cdi_index_save(reg, opts, opts->index_path);
	}
	ts_cdi_index_free(idx);
	if (r >= 0)
		r = ts_cdi_registry_finish(reg);
	if (r >= 0 && (reg->spec_dirs = join_dirs(opts->spec_dirs)) == NULL)
		r = -ENOMEM;
	if (r < 0) {
		ts_cdi_registry_free(reg);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	*ret = reg;
	return 0;
}

int ts_cdi_registry_load(const struct ts_cdi_options *opts, struct ts_cdi_registry **ret,
			 struct ts_error **err)
{
	return load(opts, NULL, 0, ret, err);
}

int ts_cdi_registry_load_devices(const struct ts_cdi_options *opts, const char *const *names,
				 size_t n_names, struct ts_cdi_registry **ret,
				 struct ts_error **err)
{
	return load(opts, names, n_names, ret, err);
}

size_t ts_cdi_registry_problems(const struct ts_cdi_registry *reg, const char *const **ret_msgs)
{
	*ret_msgs = (const char *const *)reg->problems;
	return reg->n_problems;
}

size_t ts_cdi_registry_devices(const struct ts_cdi_registry *reg, const char *const **ret_names)
{
	*ret_names = reg->names;
	return reg->n_devices;
}

static const struct ts_cdi_entry *find(const struct ts_cdi_registry *reg,
				       const char *qualified_name)
{
	size_t lo = 0, hi = reg ? reg->n_devices : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(qualified_name, reg->devices[mid].qualified_name);

		if (c == 0)
			return &reg->devices[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

bool ts_cdi_registry_lookup(const struct ts_cdi_registry *reg, const char *qualified_name,
			    const struct ts_cdi_spec **ret_spec, size_t *ret_index)
{
	const struct ts_cdi_entry *e = find(reg, qualified_name);
	cleanup_error struct ts_error *err = NULL;

	if (e == NULL || ts_cdi_spec_ensure_loaded(e->spec, &err) < 0)
		return false;
	if (ret_spec != NULL)
		*ret_spec = e->spec;
	if (ret_index != NULL)
		*ret_index = e->index;
	return true;
}

/* --- injection --------------------------------------------------------------- */

struct ts_cdi_injection *ts_cdi_injection_free(struct ts_cdi_injection *inj)
{
	if (inj == NULL)
		return NULL;
	for (size_t i = 0; i < inj->n_devices; i++) {
		struct ts_cdi_injected_device *d = &inj->devices[i];

		free(d->qualified_name);
		free(d->spec_path);
		free(d->request_field);
		for (size_t k = 0; k < d->n_nodes; k++)
			free(d->nodes[k].host_path);
		free(d->nodes);
	}
	free(inj->devices);
	free(inj->names);
	free(inj);
	return NULL;
}

/* Unique names, in first-seen order. */
static int unique_names(const char *const *names, size_t n, const char ***ret, size_t *ret_n)
{
	const char **v = calloc(n + 1, sizeof(*v));
	size_t k = 0;

	if (v == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		bool dup = false;

		for (size_t j = 0; j < k && !dup; j++)
			dup = strcmp(v[j], names[i]) == 0;
		if (!dup)
			v[k++] = names[i];
	}
	*ret = v;
	*ret_n = k;
	return 0;
}

/* Names an "unresolvable CDI devices" message lists; the rest are counted. */
#define UNRESOLVED_SHOWN 16

/* "a, b" of the names that do not resolve (the first UNRESOLVED_SHOWN, then
 * " and N more"); NULL when all resolve. */
static char *unresolved_list(const struct ts_cdi_registry *reg, const char *const *names, size_t n,
			     bool *oom)
{
	char *list = NULL;
	size_t len = 0, shown = 0, more = 0;
	FILE *f = NULL;

	*oom = false;
	for (size_t i = 0; i < n; i++) {
		if (ts_cdi_qualified_name_is_valid(names[i]) && find(reg, names[i]) != NULL)
			continue;
		if (shown == UNRESOLVED_SHOWN) {
			more++;
			continue;
		}
		if (shown++ == 0) {
			f = open_memstream(&list, &len);
			if (f == NULL) {
				*oom = true;
				return NULL;
			}
		} else {
			fputs(", ", f);
		}
		fputs(names[i], f);
	}
	if (f == NULL)
		return NULL;
	if (more > 0)
		fprintf(f, " and %zu more", more);
	if (fclose(f) != 0) {
		free(list);
		*oom = true;
		return NULL;
	}
	return list;
}

/* Sorted, comma-joined names (ts_cdi_injection.names). */
static char *joined_sorted(const char **names, size_t n)
{
	cleanup_free const char **sorted = calloc(n + 1, sizeof(*sorted));
	size_t len = 1;
	char *s;

	if (sorted == NULL)
		return NULL;
	memcpy(sorted, names, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	for (size_t i = 0; i < n; i++)
		len += strlen(sorted[i]) + 1;
	s = calloc(1, len);
	if (s == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (i > 0)
			strcat(s, ",");
		strcat(s, sorted[i]);
	}
	return s;
}

static bool member_in(const struct ts_json *arr, const char *key, const char *val, const char *key2,
		      const char *val2)
{
	const struct ts_json *item;
	size_t i;

	ts_json_array_foreach (arr, i, item) {
		const char *v = ts_json_get_string(item, key);
		const char *v2 = key2 ? ts_json_get_string(item, key2) : NULL;

		if (v != NULL && strcmp(v, val) == 0 && (key2 == NULL || (v2 && !strcmp(v2, val2))))
			return true;
	}
	return false;
}

/* Whether env holds a variable of the name of entry ("NAME=value"). */
static bool env_name_in(const struct ts_json *env, const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq != NULL ? (size_t)(eq - entry) + 1 : strlen(entry);
	const struct ts_json *item;
	size_t i;

	ts_json_array_foreach (env, i, item) {
		if (item->type == TS_JSON_STRING && strncmp(item->u.string, entry, len) == 0)
			return true;
	}
	return false;
}

/*
 * Whether the device node dn (of a spec's deviceNodes) is in config as its
 * injection would leave it: a linux.devices entry at its path of its type
 * and numbers (the spec's, else its host node's), or, in a user namespace,
 * the bind mount of its host path there (ts_cdi_edits_apply()).  A device
 * the engine put at that path from another host node (podman --device
 * /dev/fuse:/dev/x) is not it (helper-18: it hid the CDI device).
 */
static bool node_in(const struct ts_json *config, const struct ts_json *dn)
{
	const char *path = ts_json_get_string(dn, "path");
	const char *host = ts_json_get_string(dn, "hostPath");
	const char *type = ts_json_get_string(dn, "type");
	const struct ts_json *devices = ts_json_get_path(config, "linux", "devices", NULL), *d;
	int64_t major = ts_cdi_int_member(dn, "major", 0),
		minor = ts_cdi_int_member(dn, "minor", 0);
	char t = type != NULL ? type[0] : '\0';
	size_t i;

	if (path == NULL)
		return false;
	if (host == NULL || host[0] == '\0')
		host = path;
	if (member_in(ts_json_get(config, "mounts"), "destination", path, "source", host))
		return true;
	ts_json_array_foreach (devices, i, d) {
		const char *p = ts_json_get_string(d, "path");
		const char *dt = ts_json_get_string(d, "type");

		if (p == NULL || strcmp(p, path) != 0)
			continue;
		if (t == '\0' || (major == 0 && t != 'p')) {
			struct stat st;

			/* as fill_from_host() fills it */
			if (stat(host, &st) < 0)
				return false;
			if (t == '\0')
				t = ts_cdi_node_type_of(st.st_mode);
			if (t != 'p' && major == 0) {
				major = major(st.st_rdev);
				minor = minor(st.st_rdev);
			}
		}
		return t != '\0' && dt != NULL && dt[0] == t &&
		       (t == 'p' || (ts_cdi_int_member(d, "major", -1) == major &&
				     ts_cdi_int_member(d, "minor", -1) == minor));
	}
	return false;
}

/* Every env name, device node, mount and hook of edits is in config;
 * *checked counts them.  Env is compared by name: a later device may have
 * overridden the value. */
static bool edits_in(const struct ts_json *config, const struct ts_json *edits, size_t *checked)
{
	const struct ts_json *env = ts_json_get_path(config, "process", "env", NULL);
	const struct ts_json *mounts = ts_json_get(config, "mounts"), *item;
	const struct ts_json *hooks = ts_json_get(config, "hooks");
	size_t i;

	ts_json_array_foreach (ts_json_get(edits, "env"), i, item) {
		if (item->type != TS_JSON_STRING || !env_name_in(env, item->u.string))
			return false;
		(*checked)++;
	}
	ts_json_array_foreach (ts_json_get(edits, "deviceNodes"), i, item) {
		if (!node_in(config, item))
			return false;
		(*checked)++;
	}
	ts_json_array_foreach (ts_json_get(edits, "mounts"), i, item) {
		if (!member_in(mounts, "destination", ts_json_get_string(item, "containerPath"),
			       "source", ts_json_get_string(item, "hostPath")))
			return false;
		(*checked)++;
	}
	ts_json_array_foreach (ts_json_get(edits, "hooks"), i, item) {
		const char *name = ts_json_get_string(item, "hookName");

		if (name == NULL || !member_in(ts_json_get(hooks, name), "path",
					       ts_json_get_string(item, "path"), NULL, NULL))
			return false;
		(*checked)++;
	}
	return true;
}

/*
 * Did the engine inject this device already (containerd enable_cdi, podman
 * --device)?  True when its own edits and its spec's spec-level edits hold
 * at least one env variable, device node, mount or hook, and every one of
 * them is already in the config: re-applying would then duplicate its hooks
 * and cgroup rules.  A device node the user added by hand (podman --device
 * /dev/x) is not enough when the spec's own edits are missing.
 */
static bool edits_present(const struct ts_json *config, const struct ts_json *spec_edits,
			  const struct ts_json *edits)
{
	size_t checked = 0;

	return edits_in(config, spec_edits, &checked) && edits_in(config, edits, &checked) &&
	       checked > 0;
}

static const struct ts_json *device_edits(const struct ts_cdi_entry *e)
{
	const struct ts_json *devs = ts_json_get(e->spec->doc, "devices");

	if (devs == NULL || devs->type != TS_JSON_ARRAY || e->index >= devs->u.array.len)
		return NULL;
	return ts_json_get(devs->u.array.items[e->index], "containerEdits");
}

/* The engine_injected rule, for a device whose spec is loaded (NULL: false). */
static bool entry_engine_injected(const struct ts_cdi_entry *e, const struct ts_json *config)
{
	return e != NULL &&
	       edits_present(config, ts_json_get(e->spec->doc, "containerEdits"), device_edits(e));
}

bool ts_cdi_engine_injected(const struct ts_cdi_registry *reg, const struct ts_json *config,
			    const char *qualified_name)
{
	cleanup_error struct ts_error *ignored = NULL;
	const struct ts_cdi_entry *e = find(reg, qualified_name);

	/* a registry from the index reads a spec file on first use */
	if (e == NULL || ts_cdi_spec_ensure_loaded(e->spec, &ignored) < 0)
		return false;
	return entry_engine_injected(e, config);
}

/*
 * Apply one device (and its spec's edits, once per spec) to work.  A device
 * the engine injected already is applied to a scratch config only, to learn
 * its host nodes.
 */
static int inject_one(struct ts_json *work, const struct ts_cdi_entry *e, const char *config_name,
		      const struct ts_cdi_spec **seen, size_t *n_seen,
		      struct ts_cdi_injected_device *out, struct ts_error **err)
{
	cleanup_json struct ts_json *scratch = NULL;
	char ptr[64];
	bool spec_done = false;
	int r;

	if (e == NULL) /* resolved before, cannot happen */
		return ts_error_set(err, ENOENT, "device vanished from the registry");
	out->qualified_name = strdup(e->qualified_name);
	out->spec_path = strdup(e->spec->path);
	if (out->qualified_name == NULL || out->spec_path == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	if (out->engine_injected) {
		scratch = ts_json_new_object();
		if (scratch == NULL)
			return ts_error_set(err, ENOMEM, "out of memory");
		work = scratch;
	}
	for (size_t i = 0; i < *n_seen; i++)
		spec_done = spec_done || seen[i] == e->spec;
	if (!spec_done && !out->engine_injected) {
		/* spec-level edits once per spec file, before its first device */
		seen[(*n_seen)++] = e->spec;
		r = ts_cdi_edits_apply(work, ts_json_get(e->spec->doc, "containerEdits"),
				       config_name, e->spec->path, "/containerEdits", NULL, NULL,
				       err);
		if (r < 0)
			return r;
	}
	snprintf(ptr, sizeof(ptr), "/devices/%zu/containerEdits", e->index);
	return ts_cdi_edits_apply(work, device_edits(e), config_name, e->spec->path, ptr,
				  &out->nodes, &out->n_nodes, err);
}

/* Swap the contents of two nodes, so that the caller's pointer keeps its identity. */
static void swap_json(struct ts_json *a, struct ts_json *b)
{
	struct ts_json tmp = *a;

	*a = *b;
	*b = tmp;
}

/* ts_cdi_inject(); in_place: the edits go straight into config, which a
 * failure may leave partly edited (for a caller that then drops it): no copy
 * of the whole config to apply them to first. */
/* The field of config_name that asked for device name (where[k] of the
 * names[k] equal to it), as "<config>: '<field>': CDI device '<name>'", in
 * front of *err: a spec's error about a device (a host node missing) then
 * names the annotation too (helper-20).  where NULL: err as it is.
 * @return ts_error_code(*err). */
static int name_request(const char *const *names, const char *const *where, size_t n_names,
			const char *config_name, const char *name, struct ts_error **err)
{
	for (size_t k = 0; where != NULL && k < n_names; k++)
		if (strcmp(names[k], name) == 0)
			return ts_error_prefix(err, "%s: '%s': CDI device '%s'", config_name,
					       where[k], name);
	return ts_error_code(*err);
}

static int inject(struct ts_cdi_registry *reg, struct ts_json *config, const char *const *names,
		  const char *const *where, size_t n_names, const char *config_name, bool in_place,
		  struct ts_cdi_injection **ret, struct ts_error **err)
{
	cleanup_free const char **uniq = NULL;
	cleanup_free const struct ts_cdi_spec **seen = NULL;
	cleanup_free char *unresolved = NULL, *joined = NULL;
	cleanup_json struct ts_json *work = NULL;
	struct ts_cdi_injection *inj = NULL;
	size_t n = 0;
	bool oom, applied_any = false;
	int r;

	if (n_names == 0) {
		if (ret != NULL && (*ret = calloc(1, sizeof(**ret))) == NULL)
			return ts_error_set(err, ENOMEM, "out of memory");
		return 0;
	}
	if (unique_names(names, n_names, &uniq, &n) < 0)
		return ts_error_set(err, ENOMEM, "out of memory");
	unresolved = unresolved_list(reg, uniq, n, &oom);
	if (oom)
		return ts_error_set(err, ENOMEM, "out of memory");
	if (unresolved != NULL)
		return ts_error_set(err, 0, "unresolvable CDI devices %s", unresolved);
	for (size_t i = 0; i < n; i++) {
		const struct ts_cdi_entry *e = find(reg, uniq[i]);

		/* a registry from the index reads its spec files on first use */
		r = e ? ts_cdi_spec_ensure_loaded(e->spec, err) : 0;
		if (r < 0)
			return r == -ENOMEM ? r
					    : name_request(names, where, n_names, config_name,
							   uniq[i], err);
	}
	inj = calloc(1, sizeof(*inj));
	seen = calloc(n + 1, sizeof(*seen));
	joined = joined_sorted(uniq, n);
	work = in_place ? NULL : ts_json_dup(config);
	if (inj == NULL || seen == NULL || joined == NULL || (!in_place && work == NULL) ||
	    (n > 0 && (inj->devices = calloc(n, sizeof(*inj->devices))) == NULL)) {
		ts_cdi_injection_free(inj);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		inj->devices[i].engine_injected = entry_engine_injected(find(reg, uniq[i]), config);
		applied_any = applied_any || !inj->devices[i].engine_injected;
	}
	for (size_t i = 0, n_seen = 0; i < n; i++) {
		r = inject_one(in_place ? config : work, find(reg, uniq[i]), config_name, seen,
			       &n_seen, &inj->devices[i], err);
		inj->n_devices = i + 1;
		if (r < 0) {
			ts_cdi_injection_free(inj);
			return r == -ENOMEM ? r
					    : name_request(names, where, n_names, config_name,
							   uniq[i], err);
		}
	}
	inj->names = TAKE_PTR(joined);
	r = 0;
	if (applied_any) {
		if (!in_place)
			swap_json(config, work);
		inj->applied = true;
		r = 1;
	}
	if (ret != NULL)
		*ret = inj;
	else
		ts_cdi_injection_free(inj);
	return r;
}

int ts_cdi_inject(struct ts_cdi_registry *reg, struct ts_json *config, const char *const *names,
		  size_t n_names, const char *config_name, struct ts_cdi_injection **ret,
		  struct ts_error **err)
{
	return inject(reg, config, names, NULL, n_names, config_name, false, ret, err);
}

/* The ignored file the "unresolvable" line names: the problem of the first
 * scanned file (path and problem side by side, cold scan or index alike)
 * whose "kind" is that of @qualified_name (it meant to define the device
 * asked for and was rejected for another field), else the first problem.
 * The files are read again, which only this error path pays.
 * @return the message, borrowed from reg; NULL on -ENOMEM. */
static const char *problem_to_name(const struct ts_cdi_registry *reg, const char *qualified_name)
{
	const char *eq = strchr(qualified_name, '=');
	size_t klen = eq != NULL ? (size_t)(eq - qualified_name) : strlen(qualified_name);

	for (size_t i = 0; i < reg->n_scanned; i++) {
		const struct ts_cdi_scanned *rec = &reg->scanned[i];
		cleanup_free char *buf = NULL, *kind = NULL;
		cleanup_close int fd = -EBADF;
		struct stat st;
		size_t len = 0;

		if (rec->problem == NULL || !rec->exists)
			continue;
		/* as load_file() opens it: a FIFO must not block this */
		fd = open(rec->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    ts_cdi_read_fd(fd, &st, &buf, &len) < 0)
			continue;
		if (ts_cdi_spec_peek_kind(buf, len, rec->path, &kind) < 0)
			return NULL;
		if (kind != NULL && strlen(kind) == klen &&
		    strncmp(kind, qualified_name, klen) == 0)
			return rec->problem;
	}
	return reg->problems[0];
}

/*
 * The create's error goes where the engine shows it: a Kubernetes pod's
 * events, which every user who may create pods there reads.  A problem
 * found in a spec file may quote it (a key, a value: helper-19 saw a
 * symlink in a spec dir to a root-only file give "unknown key
 * 'db_password'"), so for a file that is not readable by all the line
 * names only the file: *ret is that replacement, or NULL to show problem
 * as it is.  @return 0; -ENOMEM.
 */
static int hide_problem(const struct ts_cdi_registry *reg, const char *problem, char **ret)
{
	*ret = NULL;
	for (size_t i = 0; i < reg->n_scanned; i++) {
		const struct ts_cdi_scanned *rec = &reg->scanned[i];
		struct stat st;

		if (rec->problem == NULL || strcmp(rec->problem, problem) != 0)
			continue;
		if (stat(rec->path, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & S_IROTH))
			return 0;
		return asprintf(
			       ret,
			       "%s: not shown (a file not readable by all, mode %04o: `toposhimctl "
			       "cdi list` shows why)",
			       rec->path, (unsigned)(st.st_mode & 07777)) < 0
			       ? -ENOMEM
			       : 0;
	}
	return 0;
}

/* The spec files that define qualified_name in conflict (the problems of
 * CONFLICT_FMT that name it), comma-joined into *ret.  @return 0; -ENOMEM. */
static int conflict_files(const struct ts_cdi_registry *reg, const char *qualified_name, char **ret,
			  size_t *ret_n)
{
	cleanup_free char *needle = NULL;
	char *joined = NULL;
	size_t n = 0;

	*ret = NULL;
	*ret_n = 0;
	if (asprintf(&needle, CONFLICT_MID "%s' (", qualified_name) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < reg->n_problems; i++) {
		const char *at = strstr(reg->problems[i], needle);
		char *next = NULL;

		if (at == NULL)
			continue;
		if (asprintf(&next, "%s%s%.*s", joined != NULL ? joined : "", n > 0 ? ", " : "",
			     (int)(at - reg->problems[i]), reg->problems[i]) < 0) {
			free(joined);
			return -ENOMEM;
		}
		free(joined);
		joined = next;
		n++;
	}
	*ret = joined;
	*ret_n = n;
	return 0;
}

/* The create path's "unresolvable" line (cdi.h, ts_cdi_inject_requested()):
 * where the first unresolved name was asked for, where it was looked up and
 * what was ignored.  @return 0 when every name resolves; -EINVAL; -ENOMEM. */
static int check_resolvable(const struct ts_cdi_registry *reg, const char *const *names,
			    const char *const *where, size_t n, const char *config_name,
			    struct ts_error **err)
{
	cleanup_free char *unresolved = NULL, *ignored = NULL;
	size_t first = n, count = 0;
	bool oom;

	/* the common case, every name resolves, costs one lookup per name */
	unresolved = unresolved_list(reg, names, n, &oom);
	if (oom)
		return ts_error_set(err, ENOMEM, "out of memory");
	if (unresolved == NULL)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (ts_cdi_qualified_name_is_valid(names[i]) && find(reg, names[i]) != NULL)
			continue;
		if (first == n)
			first = i;
		count++;
	}
	if (reg != NULL) {
		cleanup_free char *paths = NULL;
		size_t n_files = 0;
		int r = conflict_files(reg, names[first], &paths, &n_files);

		if (r < 0)
			return ts_error_set(err, ENOMEM, "out of memory");
		/* not missing: defined more than once (helper-9: "no spec
		 * file defines it" hid the conflict) */
		if (n_files > 0)
			return ts_error_set(
				err, 0,
				"%s: '%s': unresolvable CDI devices %s (%s is defined by "
				"%zu spec files of the same dir: %s)",
				config_name, where[first], unresolved, names[first], n_files,
				paths);
	}
	if (reg != NULL && reg->n_problems > 0) {
		cleanup_free char *shown = NULL;
		const char *named = problem_to_name(reg, names[first]);
		int r;

		if (named != NULL && hide_problem(reg, named, &shown) < 0)
			return ts_error_set(err, ENOMEM, "out of memory");
		if (shown != NULL)
			named = shown;
		r = named == NULL	  ? -1
		    : reg->n_problems > 1 ? asprintf(&ignored, "; ignored: %s (and %zu more)",
						     named, reg->n_problems - 1)
					  : asprintf(&ignored, "; ignored: %s", named);

		if (r < 0)
			return ts_error_set(err, ENOMEM, "out of memory");
	}
	if (reg == NULL || reg->spec_dirs == NULL || reg->spec_dirs[0] == '\0')
		return ts_error_set(err, 0, "%s: '%s': unresolvable CDI devices %s (no spec dir)",
				    config_name, where[first], unresolved);
	return ts_error_set(
		err, 0, "%s: '%s': unresolvable CDI devices %s (no spec file in %s defines %s%s)",
		config_name, where[first], unresolved, reg->spec_dirs, count > 1 ? "them" : "it",
		ignored != NULL ? ignored : "");
}

int ts_cdi_inject_requested(struct ts_cdi_registry *reg, struct ts_json *config,
			    const char *config_name, bool env_requests,
			    struct ts_cdi_injection **ret, struct ts_error **err)
{
	cleanup_strv char **names = NULL, **where = NULL;
	struct ts_cdi_injection *inj = NULL;
	int n = ts_cdi_requests_collect(config, config_name, env_requests, &names, &where, err);
	int r;

	if (n < 0)
		return n;
	r = check_resolvable(reg, (const char *const *)names, (const char *const *)where, (size_t)n,
			     config_name, err);
	if (r < 0)
		return r;
	/* in place: the create drops a config whose injection failed (cdi.h) */
	r = inject(reg, config, (const char *const *)names, (const char *const *)where, (size_t)n,
		   config_name, true, &inj, err);
	if (r < 0)
		return r;
	/* names are unique: each device is one of them */
	for (size_t i = 0; i < inj->n_devices; i++) {
		struct ts_cdi_injected_device *d = &inj->devices[i];

		for (int k = 0; k < n && d->request_field == NULL; k++) {
			if (strcmp(names[k], d->qualified_name) != 0)
				continue;
			d->request_field = strdup(where[k]);
			if (d->request_field == NULL) {
				ts_cdi_injection_free(inj);
				return ts_error_set(err, ENOMEM, "out of memory");
			}
		}
	}
	if (ret != NULL)
		*ret = inj;
	else
		ts_cdi_injection_free(inj);
	return r;
}

/* --- options ----------------------------------------------------------------- */

void ts_cdi_options_release(struct ts_cdi_options *opts)
{
	ts_strv_freep(&opts->spec_dirs);
	free(opts->index_path);
	*opts = (struct ts_cdi_options){0};
}

int ts_cdi_options_init(struct ts_cdi_options *opts, struct ts_error **err)
{
	char **dirs = calloc(3, sizeof(*dirs));
	char *index_path = strdup(TS_CDI_DEFAULT_INDEX);

	if (dirs == NULL || index_path == NULL || (dirs[0] = strdup("/etc/cdi")) == NULL ||
	    (dirs[1] = strdup("/var/run/cdi")) == NULL) {
		ts_strv_freep(&dirs);
		free(index_path);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	*opts = (struct ts_cdi_options){.spec_dirs = dirs,
					.require_root_owned = true,
					.env_requests = false,
					.index_path = index_path};
	return 0;
}

static int bool_option(const struct ts_json *cdi, const char *key, const char *config_name,
		       bool *val, struct ts_error **err)
{
	const struct ts_json *v = ts_json_get(cdi, key);

	if (v == NULL)
		return 0;
	if (v->type != TS_JSON_BOOL)
		return ts_error_set(err, 0, "%s: '/cdi/%s': expected boolean, got %s", config_name,
				    key, ts_json_type_name(v->type));
	*val = v->u.boolean;
	return 0;
}

static int dirs_option(const struct ts_json *cdi, const char *config_name, char ***dirs,
		       struct ts_error **err)
{
	const struct ts_json *v = ts_json_get(cdi, "spec_dirs"), *item;
	char **nd;
	size_t i;

	if (v == NULL)
		return 0;
	if (v->type != TS_JSON_ARRAY)
		return ts_error_set(err, 0, "%s: '/cdi/spec_dirs': expected array, got %s",
				    config_name, ts_json_type_name(v->type));
	ts_json_array_foreach (v, i, item) {
		if (item->type != TS_JSON_STRING)
			return ts_error_set(err, 0,
					    "%s: '/cdi/spec_dirs/%zu': expected string, got %s",
					    config_name, i, ts_json_type_name(item->type));
		if (item->u.string[0] != '/')
			return ts_error_set(err, 0, "%s: '/cdi/spec_dirs/%zu': not absolute '%s'",
					    config_name, i, item->u.string);
	}
	nd = calloc(v->u.array.len + 1, sizeof(*nd));
	if (nd == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	ts_json_array_foreach (v, i, item) {
		nd[i] = strdup(item->u.string);
		if (nd[i] == NULL) {
			ts_strv_freep(&nd);
			return ts_error_set(err, ENOMEM, "out of memory");
		}
	}
	ts_strv_freep(dirs);
	*dirs = nd;
	return 0;
}

static int index_option(const struct ts_json *cdi, const char *config_name, char **path,
			struct ts_error **err)
{
	const struct ts_json *v = ts_json_get(cdi, "index_path");

	if (v == NULL)
		return 0;
	if (v->type == TS_JSON_NULL) {
		free(*path);
		*path = NULL;
		return 0;
	}
	if (v->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "%s: '/cdi/index_path': expected string, got %s",
				    config_name, ts_json_type_name(v->type));
	if (v->u.string[0] != '/')
		return ts_error_set(err, 0, "%s: '/cdi/index_path': not absolute '%s'", config_name,
				    v->u.string);
	free(*path);
	*path = strdup(v->u.string);
	if (*path == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	return 0;
}

int ts_cdi_options_from_config(const struct ts_json *toposhim_config, const char *config_name,
			       struct ts_cdi_options *ret, struct ts_error **err)
{
	struct ts_cdi_options o;
	const struct ts_json *cdi = ts_json_get(toposhim_config, "cdi");
	const char *key;
	struct ts_json *val;
	size_t i;
	int r;

	r = ts_cdi_options_init(&o, err);
	if (r < 0)
		return r;
	if (cdi != NULL && cdi->type != TS_JSON_OBJECT) {
		ts_cdi_options_release(&o);
		return ts_error_set(err, 0, "%s: '/cdi': expected object, got %s", config_name,
				    ts_json_type_name(cdi->type));
	}
	ts_json_object_foreach (cdi, i, key, val) {
		(void)val; /* keys only */
		if (strcmp(key, "spec_dirs") != 0 && strcmp(key, "require_root_owned") != 0 &&
		    strcmp(key, "env_requests") != 0 && strcmp(key, "index_path") != 0) {
			ts_cdi_options_release(&o);
			return ts_error_set(err, 0, "%s: '/cdi/%s': unknown key '%s'", config_name,
					    key, key);
		}
	}
	r = bool_option(cdi, "require_root_owned", config_name, &o.require_root_owned, err);
	if (r >= 0)
		r = bool_option(cdi, "env_requests", config_name, &o.env_requests, err);
	if (r >= 0)
		r = dirs_option(cdi, config_name, &o.spec_dirs, err);
	if (r >= 0)
		r = index_option(cdi, config_name, &o.index_path, err);
	if (r < 0) {
		ts_cdi_options_release(&o);
		return r;
	}
	*ret = o;
	return 0;
}
