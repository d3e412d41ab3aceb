/*
 * index.c - the persistent CDI index: what a scan of the spec dirs found,
 * so that a create neither reads the dirs nor parses a spec file again.
 *
 * One text file, one record per line, written atomically (temp + rename):
 *   toposhim-cdi-index 3 <require_root_owned 0|1> <number of dirs>
 *   dir <path>                                  the configured dirs, in order
 *   then for each dir and file the scan looked at, in scan order:
 *   stat <exists 0|1> <d|f|-> <digest> <path>   a dir, a file, or a missing
 *                                               dir; digest: ts_cdi_stat_digest(),
 *                                               16 hex digits (0 when missing)
 *   fproblem <message>                          what was wrong with it, if anything
 *   spec <priority> <kind>                      the spec it holds, if any,
 *   name <device name>                          with its device names in order
 *   then the result:
 *   dev <spec number> <device index> <qualified name>   resolvable devices, sorted
 *   problem <message>                                   every problem, in order
 *   end
 * When every recorded dir and file still has the same stat values (a dir's
 * mtime catches files added, removed or renamed; a file's size, mtime and
 * ctime catch edits, chmod, chown; the digest stands for them all, dev,
 * inode, mode, uid and gid too), the registry is built from the result
 * lines alone and a spec file is parsed only when one of its devices is
 * injected.  Otherwise the dirs are scanned again and only the files whose
 * stat changed are parsed; the others are taken from their records.
 * Nothing modified in the last 2 seconds is recorded (see racy()).  The
 * warm path parses one hex digest a file, not the eleven decimal numbers
 * of version 2 (2.4 M instructions of a create at 1000 files, half of them
 * in those numbers).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cdi/internal.h"
#include "util/cleanup.h"
#include "util/text.h"
#include "util/fileio.h"

#define INDEX_MAGIC "toposhim-cdi-index 3"
#define RACY_SEC 2

uint64_t ts_cdi_stat_digest(const struct stat *st)
{
	const uint64_t v[] = {
		(uint64_t)st->st_dev,	       (uint64_t)st->st_ino,
		(uint64_t)st->st_size,	       (uint64_t)st->st_mtim.tv_sec,
		(uint64_t)st->st_mtim.tv_nsec, (uint64_t)st->st_ctim.tv_sec,
		(uint64_t)st->st_ctim.tv_nsec, (uint64_t)st->st_mode,
		(uint64_t)st->st_uid,	       (uint64_t)st->st_gid,
	};
	uint64_t h = 0x9e3779b97f4a7c15ull;

	/* each value mixed in by a multiply and shifts (every input bit
	 * reaches every output bit before the next value comes in) */
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		h = (h ^ v[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 33;
		h *= 0xc4ceb9fe1a85ec53ull;
		h ^= h >> 29;
	}
	return h;
}

bool ts_cdi_scanned_matches(const struct ts_cdi_scanned *rec, const struct stat *st)
{
	return rec->exists && ts_cdi_stat_digest(st) == rec->digest;
}

/* Next whitespace-separated unsigned number of *p. */
static bool next_u64(char **p, unsigned long long *ret)
{
	/* what write_stat() writes: digits, "-" first for a time before 1970
	 * (wrapped, as strtoull does; the cast back restores it).  strtoull
	 * took a third of the fresh path's instructions at 1000 files; the
	 * loop checks nothing but the digit (19 digits cannot overflow, a
	 * 20th is checked after it). */
	char *s = *p, *start;
	unsigned long long v = 0;
	bool neg = *s == '-';
	unsigned d;

	s += neg;
	start = s;
	while ((d = (unsigned)(*s - '0')) < 10) {
		v = v * 10 + d;
		s++;
	}
	if (s == start || (*s != ' ' && *s != '\0'))
		return false;
	if (s - start >= 20) {
		unsigned long long w = 0;

		/* again, checked: more than 20 digits, or 20 above ULLONG_MAX */
		if (s - start > 20)
			return false;
		for (char *c = start; c < s; c++)
			if (__builtin_mul_overflow(w, 10ULL, &w) ||
			    __builtin_add_overflow(w, (unsigned long long)(*c - '0'), &w))
				return false;
	}
	*ret = neg ? -v : v;
	*p = *s == ' ' ? s + 1 : s;
	return true;
}

/* Next word of *p (NUL-terminated in place). */
static char *next_word(char **p)
{
	char *w = *p, *sp = strchr(w, ' ');

	if (sp == NULL || sp == w)
		return NULL;
	*sp = '\0';
	*p = sp + 1;
	return w;
}

/* "<exists> <type> <digest> <path>" (after "stat "), as write_stat()
 * writes it and nothing else: "1 d ", "1 f " or "0 - ", then exactly 16
 * lowercase hex digits and a space. */
static bool parse_stat(char *p, struct ts_cdi_scanned *ret)
{
	uint64_t digest = 0;
	mode_t type;

	if (p[0] == '1' && p[1] == ' ' && (p[2] == 'd' || p[2] == 'f') && p[3] == ' ')
		type = p[2] == 'd' ? S_IFDIR : S_IFREG;
	else if (p[0] == '0' && p[1] == ' ' && p[2] == '-' && p[3] == ' ')
		type = 0;
	else
		return false;
	p += 4;
	for (size_t i = 0; i < 16; i++) {
		unsigned d;

		if (p[i] >= '0' && p[i] <= '9')
			d = (unsigned)(p[i] - '0');
		else if (p[i] >= 'a' && p[i] <= 'f')
			d = (unsigned)(p[i] - 'a' + 10);
		else
			return false;
		digest = digest << 4 | d;
	}
	if (p[16] != ' ' || p[17] == '\0' || (type == 0 && digest != 0))
		return false;
	*ret = (struct ts_cdi_scanned){.path = p + 17, .exists = type != 0, .digest = digest};
	ret->st.st_mode = type;
	return true;
}

/* Is the recorded state still the state on disk?  A file of the dir
 * *dir_fd is open on (dir_path, dir_len bytes, is its parent) is looked up
 * in it: one path component instead of every one of its path, the most
 * of what 1000 stat(2) calls cost.  A dir's record opens it for the files
 * after it (its fstat(2) is compared, so the fd is the dir recorded). */
static bool still_valid(const struct ts_cdi_scanned *rec, int *dir_fd, const char **dir_path,
			size_t *dir_len)
{
	const char *slash = strrchr(rec->path, '/');
	struct stat st;
	int fd;

	if (*dir_fd >= 0 && slash != NULL && (size_t)(slash - rec->path) == *dir_len &&
	    memcmp(rec->path, *dir_path, *dir_len) == 0 && slash[1] != '\0') {
		if (fstatat(*dir_fd, slash + 1, &st, 0) < 0)
			return !rec->exists && errno == ENOENT;
		return ts_cdi_scanned_matches(rec, &st);
	}
	if (!rec->exists || !S_ISDIR(rec->st.st_mode)) {
		if (stat(rec->path, &st) < 0)
			return !rec->exists && errno == ENOENT;
		return ts_cdi_scanned_matches(rec, &st);
	}
	fd = open(rec->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !ts_cdi_scanned_matches(rec, &st)) {
		close(fd);
		return false;
	}
	if (*dir_fd >= 0)
		close(*dir_fd);
	*dir_fd = fd;
	*dir_path = rec->path;
	*dir_len = strlen(rec->path);
	return true;
}

/* A "dev" line: a resolvable device of the last scan. */
struct ts_cdi_index_dev {
	const char *name;	  /* "<kind>=<device name>", in the line */
	unsigned long long spec;  /* the number of the spec that defines it, in scan order */
	unsigned long long index; /* in that spec's /devices */
};

struct ts_cdi_index {
	char *buf;			 /* the file, split into lines in place */
	char **lines;			 /* the lines; the files' names[] point into it */
	struct ts_cdi_index_file *files; /* records, in scan order */
	size_t n_files;
	size_t *spec_file; /* spec number -> its file's record number */
	size_t n_specs;
	struct ts_cdi_index_file **by_path; /* the same, sorted by path */
	struct ts_cdi_index_dev *devs;	    /* the "dev" lines, strictly sorted by name */
	size_t n_devs;
	char **problems; /* the "problem" lines' messages, in order */
	size_t n_problems;
};

struct ts_cdi_index *ts_cdi_index_free(struct ts_cdi_index *idx)
{
	if (idx == NULL)
		return NULL;
	free(idx->files);
	free(idx->spec_file);
	free(idx->by_path);
	free(idx->devs);
	free(idx->problems);
	free(idx->lines);
	free(idx->buf);
	free(idx);
	return NULL;
}

static int cmp_file(const void *a, const void *b)
{
	const struct ts_cdi_index_file *x = *(const struct ts_cdi_index_file *const *)a;
	const struct ts_cdi_index_file *y = *(const struct ts_cdi_index_file *const *)b;

	return strcmp(x->rec.path, y->rec.path);
}

int ts_cdi_index_sort(struct ts_cdi_index *idx)
{
	if (idx->by_path != NULL)
		return 0;
	idx->by_path = calloc(idx->n_files + 1, sizeof(*idx->by_path));
	if (idx->by_path == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < idx->n_files; i++)
		idx->by_path[i] = &idx->files[i];
	if (idx->n_files > 0)
		qsort(idx->by_path, idx->n_files, sizeof(*idx->by_path), cmp_file);
	return 0;
}

const struct ts_cdi_index_file *ts_cdi_index_lookup(const struct ts_cdi_index *idx,
						    const char *path)
{
	size_t lo = 0, hi = idx->n_files;

	if (idx->by_path == NULL)
		return NULL; /* not sorted: ts_cdi_index_sort() was not called */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, idx->by_path[mid]->rec.path);

		if (c == 0)
			return idx->by_path[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

bool ts_cdi_index_fresh(const struct ts_cdi_index *idx)
{
	const char *dir_path = NULL;
	size_t dir_len = 0;
	int dir_fd = -1;
	bool fresh = true;

	for (size_t i = 0; fresh && i < idx->n_files; i++)
		fresh = still_valid(&idx->files[i].rec, &dir_fd, &dir_path, &dir_len);
	if (dir_fd >= 0)
		close(dir_fd);
	return fresh;
}

static void *grow(void *v, size_t n, size_t *cap, size_t size)
{
	void *nv;

	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 64;
	nv = realloc(v, *cap * size);
	if (nv == NULL)
		free(v);
	return nv;
}

enum keyword { KW_NONE, KW_STAT, KW_FPROBLEM, KW_SPEC, KW_NAME, KW_DEV, KW_PROBLEM };

/* A line's first word: one string compare, where a chain of them was a
 * fifth of the read at 1000 files (5 compares for each "dev" line). */
static enum keyword keyword(const char *w)
{
	switch (w[0]) {
	case 's':
		return strcmp(w, "stat") == 0	? KW_STAT
		       : strcmp(w, "spec") == 0 ? KW_SPEC
						: KW_NONE;
	case 'f':
		return strcmp(w, "fproblem") == 0 ? KW_FPROBLEM : KW_NONE;
	case 'n':
		return strcmp(w, "name") == 0 ? KW_NAME : KW_NONE;
	case 'd':
		return strcmp(w, "dev") == 0 ? KW_DEV : KW_NONE;
	case 'p':
		return strcmp(w, "problem") == 0 ? KW_PROBLEM : KW_NONE;
	default:
		return KW_NONE;
	}
}

/* Parse the record and result lines (lines[i] of the index, i >= first).
 * A spec's "name" lines follow its "spec" line: its names[] is that run of
 * lines[], each moved past its keyword (no copy, no allocation).
 * @return 1, 0 when malformed, -ENOMEM. */
static int parse_records(struct ts_cdi_index *idx, size_t first, size_t n)
{
	size_t cap = 0, dcap = 0, pcap = 0, scap = 0;
	struct ts_cdi_index_file *cur = NULL;
	bool names_open = false; /* the previous line was cur's spec or a name of it */

	for (size_t i = first; i < n; i++) {
		char *line = idx->lines[i], *p = line, *w = next_word(&p);
		bool is_name = false;
		unsigned long long a;
		enum keyword kw;

		if (w == NULL)
			return strcmp(line, "end") == 0 && i + 1 == n ? 1 : 0;
		kw = keyword(w);
		if (kw == KW_STAT) {
			if (idx->n_devs > 0 || idx->n_problems > 0)
				return 0;
			idx->files = grow(idx->files, idx->n_files, &cap, sizeof(*idx->files));
			if (idx->files == NULL)
				return -ENOMEM;
			cur = &idx->files[idx->n_files];
			*cur = (struct ts_cdi_index_file){0};
			if (!parse_stat(p, &cur->rec))
				return 0;
			idx->n_files++;
		} else if (kw == KW_FPROBLEM && cur != NULL) {
			cur->rec.problem = p;
		} else if (kw == KW_SPEC && cur != NULL && cur->kind == NULL) {
			if (!next_u64(&p, &a) || *p == '\0')
				return 0;
			cur->priority = (unsigned)a;
			cur->kind = p;
			idx->spec_file =
				grow(idx->spec_file, idx->n_specs, &scap, sizeof(*idx->spec_file));
			if (idx->spec_file == NULL)
				return -ENOMEM;
			idx->spec_file[idx->n_specs++] = idx->n_files - 1;
			is_name = true; /* its names may follow */
		} else if (kw == KW_NAME && names_open) {
			if (cur->n_names == 0)
				cur->names = &idx->lines[i];
			idx->lines[i] = p;
			cur->n_names++;
			is_name = true;
		} else if (kw == KW_DEV) {
			struct ts_cdi_index_dev *d;

			if (idx->n_problems > 0)
				return 0;
			idx->devs = grow(idx->devs, idx->n_devs, &dcap, sizeof(*idx->devs));
			if (idx->devs == NULL)
				return -ENOMEM;
			d = &idx->devs[idx->n_devs];
			if (!next_u64(&p, &d->spec) || !next_u64(&p, &d->index) || *p == '\0')
				return 0;
			d->name = p;
			/* lookups bisect: the names must be sorted */
			if (idx->n_devs > 0 && strcmp(idx->devs[idx->n_devs - 1].name, p) >= 0)
				return 0;
			idx->n_devs++;
		} else if (kw == KW_PROBLEM) {
			idx->problems =
				grow(idx->problems, idx->n_problems, &pcap, sizeof(*idx->problems));
			if (idx->problems == NULL)
				return -ENOMEM;
			idx->problems[idx->n_problems++] = p;
		} else {
			return 0;
		}
		names_open = is_name;
	}
	return 0; /* no "end": truncated */
}

int ts_cdi_index_read(const struct ts_cdi_options *opts, const char *path,
		      struct ts_cdi_index **ret)
{
	cleanup_close int fd = -EBADF;
	struct ts_cdi_index *idx;
	char **lines;
	unsigned long long root, n_dirs;
	size_t n = 0, n_opt_dirs = 0, len = 0;
	struct stat st;
	char *p;
	int r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	/* an index someone else could write would bypass require_root_owned */
	if (opts->require_root_owned && (!ts_cdi_trusted_uid(st.st_uid) || (st.st_mode & 022) != 0))
		return 0;
	idx = calloc(1, sizeof(*idx));
	if (idx == NULL)
		return -ENOMEM;
	r = ts_cdi_read_fd(fd, &st, &idx->buf, &len);
	if (r < 0) {
		ts_cdi_index_free(idx);
		return r == -ENOMEM ? r : 0;
	}
	lines = idx->lines = ts_split_lines(idx->buf, &n);
	if (lines == NULL) {
		ts_cdi_index_free(idx);
		return -ENOMEM;
	}
	r = 0;
	if (n > 0 && strncmp(lines[0], INDEX_MAGIC " ", strlen(INDEX_MAGIC) + 1) == 0) {
		p = lines[0] + strlen(INDEX_MAGIC) + 1;
		while (opts->spec_dirs != NULL && opts->spec_dirs[n_opt_dirs] != NULL)
			n_opt_dirs++;
		if (next_u64(&p, &root) && next_u64(&p, &n_dirs) && *p == '\0' &&
		    (root != 0) == opts->require_root_owned && n_dirs == n_opt_dirs &&
		    n > n_dirs + 1) {
			r = 1;
			for (size_t i = 0; r == 1 && i < n_dirs; i++)
				if (strncmp(lines[1 + i], "dir ", 4) != 0 ||
				    strcmp(lines[1 + i] + 4, opts->spec_dirs[i]) != 0)
					r = 0;
		}
	}
	if (r == 1)
		r = parse_records(idx, 1 + n_dirs, n);
	if (r <= 0) {
		ts_cdi_index_free(idx);
		return r;
	}
	*ret = idx;
	return 1;
}

/* Is qualified_name "<kind>=<device name>" of spec's device i?  Not
 * validated again: a "dev" line is written only for a name the scan
 * validated, and the index is as trusted as the spec dirs (its owner and
 * mode are checked at read).  The check was a third of the fill at 1000
 * files. */
static bool names_device(const struct ts_cdi_spec *spec, size_t i, const char *qualified_name)
{
	size_t klen = strlen(spec->kind);

	return strncmp(qualified_name, spec->kind, klen) == 0 && qualified_name[klen] == '=' &&
	       strcmp(qualified_name + klen + 1, spec->device_names[i]) == 0;
}

/* Append the entry of idx's device line d to reg->devices, the spec made
 * for it being spec.  @return 0; -EINVAL when d does not name a device of
 * spec as its "<kind>=<name>"; -ENOMEM. */
static int add_device(struct ts_cdi_registry *reg, size_t *cap, const struct ts_cdi_index_dev *d,
		      struct ts_cdi_spec *spec)
{
	if (d->index >= spec->n_devices || !names_device(spec, d->index, d->name))
		return -EINVAL;
	reg->devices = grow(reg->devices, reg->n_devices, cap, sizeof(*reg->devices));
	if (reg->devices == NULL)
		return -ENOMEM;
	reg->devices[reg->n_devices] = (struct ts_cdi_entry){
		.qualified_name = strdup(d->name), .spec = spec, .index = d->index};
	if (reg->devices[reg->n_devices].qualified_name == NULL)
		return -ENOMEM;
	reg->n_devices++;
	return 0;
}

static struct ts_cdi_spec *new_lazy_spec(const struct ts_cdi_index_file *f)
{
	return ts_cdi_spec_new_lazy(f->rec.path, f->kind, f->priority, f->names, f->n_names);
}

static int cmp_dev_name(const void *key, const void *dev)
{
	return strcmp(key, ((const struct ts_cdi_index_dev *)dev)->name);
}

static const struct ts_cdi_index_dev *find_dev(const struct ts_cdi_index *idx, const char *name)
{
	return idx->n_devs > 0
		       ? bsearch(name, idx->devs, idx->n_devs, sizeof(*idx->devs), cmp_dev_name)
		       : NULL;
}

static int cmp_entry_name(const void *a, const void *b)
{
	return strcmp(((const struct ts_cdi_entry *)a)->qualified_name,
		      ((const struct ts_cdi_entry *)b)->qualified_name);
}

/* The named devices only: their specs, then the files with a problem. */
static int fill_wanted(const struct ts_cdi_index *idx, const char *const *wanted, size_t n_wanted,
		       struct ts_cdi_registry *reg)
{
	size_t cap = 0;
	int r;

	for (size_t i = 0; i < n_wanted; i++) {
		const struct ts_cdi_index_dev *d = find_dev(idx, wanted[i]);
		const struct ts_cdi_index_file *f;
		struct ts_cdi_spec *spec = NULL;
		bool dup = false;

		if (d == NULL)
			continue; /* not resolvable: the caller's message says so */
		if (d->spec >= idx->n_specs)
			return -EINVAL;
		f = &idx->files[idx->spec_file[d->spec]];
		for (size_t k = 0; k < reg->n_devices && !dup; k++)
			dup = strcmp(reg->devices[k].qualified_name, d->name) == 0;
		if (dup)
			continue; /* asked for twice */
		for (size_t k = 0; k < reg->n_specs && spec == NULL; k++)
			if (strcmp(reg->specs[k]->path, f->rec.path) == 0)
				spec = reg->specs[k];
		if (spec == NULL) {
			/* added while nothing is scanned: attached to no record */
			r = ts_cdi_registry_add_spec(reg, new_lazy_spec(f));
			if (r < 0)
				return r;
			spec = reg->specs[reg->n_specs - 1];
		}
		r = add_device(reg, &cap, d, spec);
		if (r < 0)
			return r;
	}
	/* lookups bisect */
	if (reg->n_devices > 1)
		qsort(reg->devices, reg->n_devices, sizeof(*reg->devices), cmp_entry_name);
	for (size_t i = 0; i < idx->n_files; i++) {
		const struct ts_cdi_index_file *f = &idx->files[i];
		struct ts_cdi_scanned *rec;

		if (f->rec.problem == NULL)
			continue;
		if (ts_cdi_registry_add_scanned(reg, f->rec.path,
						f->rec.exists ? &f->rec.st : NULL) < 0)
			return -ENOMEM;
		rec = &reg->scanned[reg->n_scanned - 1];
		if ((rec->problem = strdup(f->rec.problem)) == NULL)
			return -ENOMEM;
	}
	return 0;
}

int ts_cdi_index_fill(const struct ts_cdi_index *idx, const char *const *wanted, size_t n_wanted,
		      struct ts_cdi_registry *reg)
{
	size_t cap = 0;
	int r;

	for (size_t i = 0; i < idx->n_problems; i++)
		if (ts_cdi_registry_add_problem(reg, "%s", idx->problems[i]) < 0)
			return -ENOMEM;
	if (wanted != NULL)
		return fill_wanted(idx, wanted, n_wanted, reg);
	for (size_t i = 0; i < idx->n_files; i++) {
		const struct ts_cdi_index_file *f = &idx->files[i];
		struct ts_cdi_scanned *rec;

		if (ts_cdi_registry_add_scanned(reg, f->rec.path,
						f->rec.exists ? &f->rec.st : NULL) < 0)
			return -ENOMEM;
		rec = &reg->scanned[reg->n_scanned - 1];
		if (f->rec.problem != NULL && (rec->problem = strdup(f->rec.problem)) == NULL)
			return -ENOMEM;
		if (f->kind != NULL && ts_cdi_registry_add_spec(reg, new_lazy_spec(f)) < 0)
			return -ENOMEM;
	}
	for (size_t i = 0; i < idx->n_devs; i++) {
		const struct ts_cdi_index_dev *d = &idx->devs[i];

		if (d->spec >= reg->n_specs)
			return -EINVAL;
		r = add_device(reg, &cap, d, reg->specs[d->spec]);
		if (r < 0)
			return r;
	}
	return 0;
}

/* a scanned dir or file: what parse_stat() reads back */
static void write_stat(FILE *f, const struct ts_cdi_scanned *s)
{
	if (!s->exists)
		fprintf(f, "stat 0 - %016" PRIx64 " %s\n", (uint64_t)0, s->path);
	else
		fprintf(f, "stat 1 %c %016" PRIx64 " %s\n", S_ISDIR(s->st.st_mode) ? 'd' : 'f',
			ts_cdi_stat_digest(&s->st), s->path);
}

/* keyword + text on one line (newlines in the text become spaces) */
static void write_line(FILE *f, const char *keyword, const char *text)
{
	fputs(keyword, f);
	for (const char *c = text; *c != '\0'; c++)
		fputc(*c == '\n' ? ' ' : *c, f);
	fputc('\n', f);
}

static size_t spec_number(const struct ts_cdi_registry *reg, const struct ts_cdi_spec *spec)
{
	for (size_t i = 0; i < reg->n_specs; i++)
		if (reg->specs[i] == spec)
			return i;
	return SIZE_MAX;
}

static bool has_newline(const char *s)
{
	return strchr(s, '\n') != NULL;
}

/*
 * File times are coarse (one clock tick), so a change made in the same tick
 * as the scan keeps the recorded mtime.  Like git's "racily clean" entries,
 * refuse to record anything modified in the last RACY_SEC seconds: the next
 * load scans again and saves then.
 */
static bool racy(const struct ts_cdi_registry *reg)
{
	struct timespec now;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0)
		return true;
	for (size_t i = 0; i < reg->n_scanned; i++)
		if (reg->scanned[i].exists &&
		    reg->scanned[i].st.st_mtim.tv_sec + RACY_SEC >= now.tv_sec)
			return true;
	return false;
}

void ts_cdi_index_save(const struct ts_cdi_registry *reg, const struct ts_cdi_options *opts,
		       const char *path)
{
	cleanup_free char *buf = NULL, *dir = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_close int dfd = -EBADF;
	const char *base = strrchr(path, '/');
	size_t len = 0, n_dirs = 0;
	FILE *f;

	if (base == NULL || base[1] == '\0' || racy(reg))
		return;
	dir = base == path ? strdup("/") : strndup(path, (size_t)(base - path));
	if (dir == NULL)
		return;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return; /* no state dir: no index */
	while (opts->spec_dirs != NULL && opts->spec_dirs[n_dirs] != NULL) {
		if (has_newline(opts->spec_dirs[n_dirs]))
			return;
		n_dirs++;
	}
	f = open_memstream(&buf, &len);
	if (f == NULL)
		return;
	fprintf(f, INDEX_MAGIC " %d %zu\n", opts->require_root_owned ? 1 : 0, n_dirs);
	for (size_t i = 0; i < n_dirs; i++)
		fprintf(f, "dir %s\n", opts->spec_dirs[i]);
	for (size_t i = 0; i < reg->n_scanned; i++) {
		const struct ts_cdi_scanned *rec = &reg->scanned[i];

		if (has_newline(rec->path))
			goto fail;
		write_stat(f, rec);
		if (rec->problem != NULL)
			write_line(f, "fproblem ", rec->problem);
		if (rec->spec == NULL)
			continue;
		fprintf(f, "spec %u %s\n", rec->spec->priority, rec->spec->kind);
		for (size_t k = 0; k < rec->spec->n_devices; k++)
			fprintf(f, "name %s\n", rec->spec->device_names[k]);
	}
	for (size_t i = 0; i < reg->n_devices; i++)
		fprintf(f, "dev %zu %zu %s\n", spec_number(reg, reg->devices[i].spec),
			reg->devices[i].index, reg->devices[i].qualified_name);
	for (size_t i = 0; i < reg->n_problems; i++)
		write_line(f, "problem ", reg->problems[i]);
	fputs("end\n", f);
	if (fclose(f) != 0)
		return;
	/* best effort: a create works without an index, only slower */
	(void)ts_write_file_atomic_at(dfd, base + 1, buf, len, 0600, &err);
	return;
fail:
	fclose(f);
}
