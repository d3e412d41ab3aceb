/*
 * index.c - the persistent CDI index: what a scan of the spec dirs found,
 * so that a create does not re-parse every spec file.
 *
 * One text file, one record per line, written atomically (temp + rename):
 *   toposhim-cdi-index 1 <require_root_owned 0|1> <number of dirs>
 *   dir <path>                                   the configured dirs, in order
 *   stat <exists> <dev> <ino> <size> <mtime s> <ns> <ctime s> <ns> <mode> <uid> <gid> <path>
 *   spec <priority> <kind> <path>
 *   dev <spec index> <device index> <qualified name>
 *   problem <message>
 *   end
 * The index is used only when the options match and every recorded dir and
 * file still has the same stat values; a dir's mtime catches files added,
 * removed or renamed, a file's mtime/ctime/size catch edits, chmod, chown.
 * Any difference rebuilds the whole index (NEEDSWORK: re-parse only the
 * changed files).  Nothing modified in the last 2 seconds is recorded
 * (see racy()).  A text format parsed with strtoull keeps the warm path
 * to a few hundred microseconds at 1000 files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cdi/internal.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define INDEX_MAGIC "toposhim-cdi-index 1"
#define RACY_SEC 2

static bool stat_equal(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec &&
	       a->st_mode == b->st_mode && a->st_uid == b->st_uid && a->st_gid == b->st_gid;
}

/* Next whitespace-separated unsigned number of *p. */
static bool next_u64(char **p, unsigned long long *ret)
{
	char *end;

	errno = 0;
	*ret = strtoull(*p, &end, 10);
	if (end == *p || errno != 0 || (*end != ' ' && *end != '\0'))
		return false;
	*p = *end == ' ' ? end + 1 : end;
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

static bool parse_stat(char *p, struct ts_cdi_scanned *ret)
{
	unsigned long long v[11];

	for (size_t i = 0; i < 11; i++)
		if (!next_u64(&p, &v[i]))
			return false;
	*ret = (struct ts_cdi_scanned){.path = p, .exists = v[0] != 0};
	ret->st.st_dev = (dev_t)v[1];
	ret->st.st_ino = (ino_t)v[2];
	ret->st.st_size = (off_t)v[3];
	ret->st.st_mtim.tv_sec = (time_t)v[4];
	ret->st.st_mtim.tv_nsec = (long)v[5];
	ret->st.st_ctim.tv_sec = (time_t)v[6];
	ret->st.st_ctim.tv_nsec = (long)v[7];
	ret->st.st_mode = (mode_t)v[8];
	ret->st.st_uid = (uid_t)v[9];
	ret->st.st_gid = (gid_t)v[10];
	return true;
}

/* Is the recorded state still the state on disk? */
static bool still_valid(const struct ts_cdi_scanned *rec)
{
	struct stat st;

	if (stat(rec->path, &st) < 0)
		return !rec->exists && errno == ENOENT;
	return rec->exists && stat_equal(&st, &rec->st);
}

static int fill(struct ts_cdi_registry *reg, char **lines, size_t n, size_t first)
{
	size_t cap = 0;

	for (size_t i = first; i < n; i++) {
		char *p = lines[i], *w = next_word(&p);
		unsigned long long a, b;

		if (w == NULL && strcmp(lines[i], "end") == 0)
			return 1;
		if (w == NULL)
			return 0;
		if (strcmp(w, "stat") == 0) {
			struct ts_cdi_scanned rec;

			if (!parse_stat(p, &rec))
				return 0;
			if (ts_cdi_registry_add_scanned(reg, rec.path,
							rec.exists ? &rec.st : NULL) < 0)
				return -ENOMEM;
		} else if (strcmp(w, "spec") == 0) {
			char *kind;
			struct ts_cdi_spec **v;

			if (!next_u64(&p, &a) || (kind = next_word(&p)) == NULL)
				return 0;
			v = realloc(reg->specs, (reg->n_specs + 1) * sizeof(*v));
			if (v == NULL)
				return -ENOMEM;
			reg->specs = v;
			v[reg->n_specs] = ts_cdi_spec_new_lazy(p, kind, (unsigned)a);
			if (v[reg->n_specs] == NULL)
				return -ENOMEM;
			reg->n_specs++;
		} else if (strcmp(w, "dev") == 0) {
			if (!next_u64(&p, &a) || !next_u64(&p, &b) || a >= reg->n_specs)
				return 0;
			if (reg->n_devices == cap) {
				size_t nc = cap ? cap * 2 : 64;
				struct ts_cdi_entry *v = realloc(reg->devices, nc * sizeof(*v));

				if (v == NULL)
					return -ENOMEM;
				reg->devices = v;
				cap = nc;
			}
			reg->devices[reg->n_devices] = (struct ts_cdi_entry){
				.qualified_name = strdup(p), .spec = reg->specs[a], .index = b};
			if (reg->devices[reg->n_devices].qualified_name == NULL)
				return -ENOMEM;
			/* lookups bisect: the names must stay sorted */
			if (reg->n_devices > 0 &&
			    strcmp(reg->devices[reg->n_devices - 1].qualified_name, p) >= 0) {
				free(reg->devices[reg->n_devices].qualified_name);
				return 0;
			}
			reg->n_devices++;
		} else if (strcmp(w, "problem") == 0) {
			if (ts_cdi_registry_add_problem(reg, "%s", p) < 0)
				return -ENOMEM;
		} else {
			return 0;
		}
	}
	return 0; /* no "end": truncated */
}

/* Split in place into lines; NULL on OOM. */
static char **split_lines(char *buf, size_t *ret_n)
{
	size_t n = 0, cap = 256;
	char **v = malloc(cap * sizeof(*v));

	for (char *p = buf; v != NULL && *p != '\0';) {
		char *nl = strchr(p, '\n');

		if (n == cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(*v));

			if (nv == NULL) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		v[n++] = p;
		if (nl == NULL)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	*ret_n = n;
	return v;
}

int ts_cdi_index_load(struct ts_cdi_registry *reg, const struct ts_cdi_options *opts,
		      const char *path)
{
	cleanup_free char *buf = NULL;
	cleanup_free char **lines = NULL;
	cleanup_close int fd = -EBADF;
	struct ts_cdi_registry *tmp;
	struct stat st;
	size_t len = 0;
	unsigned long long root, n_dirs;
	size_t n = 0, n_opt_dirs = 0, i;
	char *p;
	int r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	/* an index someone else could write would bypass require_root_owned */
	if (opts->require_root_owned && (st.st_uid != 0 || (st.st_mode & 022) != 0))
		return 0;
	r = ts_cdi_read_fd(fd, &buf, &len);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	lines = split_lines(buf, &n);
	if (lines == NULL)
		return -ENOMEM;
	if (n == 0 || strncmp(lines[0], INDEX_MAGIC " ", strlen(INDEX_MAGIC) + 1) != 0)
		return 0;
	p = lines[0] + strlen(INDEX_MAGIC) + 1;
	if (!next_u64(&p, &root) || !next_u64(&p, &n_dirs) || *p != '\0')
		return 0;
	while (opts->spec_dirs != NULL && opts->spec_dirs[n_opt_dirs] != NULL)
		n_opt_dirs++;
	if ((root != 0) != opts->require_root_owned || n_dirs != n_opt_dirs || n < n_dirs + 1)
		return 0;
	for (i = 0; i < n_dirs; i++)
		if (strncmp(lines[1 + i], "dir ", 4) != 0 ||
		    strcmp(lines[1 + i] + 4, opts->spec_dirs[i]) != 0)
			return 0;
	/* check every recorded stat before building anything */
	for (i = 1 + n_dirs; i < n && strncmp(lines[i], "stat ", 5) == 0; i++) {
		struct ts_cdi_scanned rec;
		char *copy = strdup(lines[i] + 5);
		bool ok;

		if (copy == NULL)
			return -ENOMEM;
		ok = parse_stat(copy, &rec) && still_valid(&rec);
		free(copy);
		if (!ok)
			return 0;
	}
	tmp = calloc(1, sizeof(*tmp));
	if (tmp == NULL)
		return -ENOMEM;
	r = fill(tmp, lines, n, 1 + n_dirs);
	if (r <= 0) {
		ts_cdi_registry_free(tmp);
		return r;
	}
	*reg = *tmp;
	free(tmp);
	return 1;
}

static void write_stat(FILE *f, const struct ts_cdi_scanned *s)
{
	fprintf(f, "stat %d %llu %llu %llu %lld %ld %lld %ld %u %u %u %s\n", s->exists ? 1 : 0,
		(unsigned long long)s->st.st_dev, (unsigned long long)s->st.st_ino,
		(unsigned long long)s->st.st_size, (long long)s->st.st_mtim.tv_sec,
		s->st.st_mtim.tv_nsec, (long long)s->st.st_ctim.tv_sec, s->st.st_ctim.tv_nsec,
		(unsigned)s->st.st_mode, (unsigned)s->st.st_uid, (unsigned)s->st.st_gid, s->path);
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
		if (has_newline(reg->scanned[i].path))
			goto fail;
		write_stat(f, &reg->scanned[i]);
	}
	for (size_t i = 0; i < reg->n_specs; i++)
		fprintf(f, "spec %u %s %s\n", reg->specs[i]->priority, reg->specs[i]->kind,
			reg->specs[i]->path);
	for (size_t i = 0; i < reg->n_devices; i++)
		fprintf(f, "dev %zu %zu %s\n", spec_number(reg, reg->devices[i].spec),
			reg->devices[i].index, reg->devices[i].qualified_name);
	for (size_t i = 0; i < reg->n_problems; i++) {
		fputs("problem ", f);
		for (const char *c = reg->problems[i]; *c != '\0'; c++)
			fputc(*c == '\n' ? ' ' : *c, f);
		fputc('\n', f);
	}
	fputs("end\n", f);
	if (fclose(f) != 0)
		return;
	/* best effort: a create works without an index, only slower */
	(void)ts_write_file_atomic_at(dfd, base + 1, buf, len, 0600, &err);
	return;
fail:
	fclose(f);
}
