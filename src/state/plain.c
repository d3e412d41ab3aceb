/* plain.c - the summary and the journal of plain containers; see plain.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/json.h"
#include "state/internal.h"
#include "state/plain.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"

#define PLAIN_VERSION 1
/* the summary is a few hundred bytes; anything much larger is not ours */
#define SUMMARY_MAX_BYTES (64u << 10)

/* ---- small helpers ---------------------------------------------------- */

/* A one-line kernel file (boot id, online cpus) without its newline. */
static int read_line(const char *path, char **ret, struct ts_error **err)
{
	char *buf = NULL;
	size_t len = 0;
	int r = ts_read_file_at(AT_FDCWD, path, 4096, &buf, &len, err);

	if (r < 0)
		return r;
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	*ret = buf;
	return 0;
}

static int64_t nsec_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static int set_str(struct ts_json *o, const char *key, const char *v, struct ts_error **err)
{
	return ts_json_object_set(o, key, ts_json_new_string(v != NULL ? v : ""), err);
}

static int set_int(struct ts_json *o, const char *key, int64_t v, struct ts_error **err)
{
	return ts_json_object_set(o, key, ts_json_new_int(v), err);
}

static int set_uint(struct ts_json *o, const char *key, uint64_t v, struct ts_error **err)
{
	return ts_json_object_set(o, key, ts_json_new_uint(v), err);
}

/* A string member, copied; NULL when absent or not a string. */
static char *get_str(const struct ts_json *o, const char *key)
{
	const char *s = ts_json_get_string(o, key);

	return s != NULL ? strdup(s) : NULL;
}

static bool get_u64(const struct ts_json *o, const char *key, uint64_t *ret)
{
	return ts_json_get_uint64(ts_json_get(o, key), ret) >= 0;
}

static bool get_i64(const struct ts_json *o, const char *key, int64_t *ret)
{
	return ts_json_get_int64(ts_json_get(o, key), ret) >= 0;
}

static bool get_bool(const struct ts_json *o, const char *key, bool *ret)
{
	const struct ts_json *v = ts_json_get(o, key);

	if (v == NULL || v->type != TS_JSON_BOOL)
		return false;
	*ret = v->u.boolean;
	return true;
}

/* Whether fd is a regular file of this euid that no one else may write. */
static bool owned_regular(int fd, struct stat *ret_st)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)))
		return false;
	if (ret_st != NULL)
		*ret_st = st;
	return true;
}

bool ts_plain_state_dir_trusted(int state_dir_fd)
{
	struct stat st;

	return fstat(state_dir_fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

bool ts_plain_container_id_valid(const char *id)
{
	size_t n = id != NULL ? strlen(id) : 0;

	return n > 0 && n <= NAME_MAX && strcmp(id, ".") != 0 && strcmp(id, "..") != 0 &&
	       strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+-.") ==
		       n;
}

/* ---- the summary ------------------------------------------------------ */

void ts_plain_summary_release(struct ts_plain_summary *s)
{
	free(s->config_path);
	free(s->boot_id);
	free(s->online);
	free(s->class_name);
	free(s->cpus);
	free(s->mems);
	*s = (struct ts_plain_summary){0};
}

void ts_plain_host_release(struct ts_plain_host *h)
{
	free(h->boot_id);
	free(h->online);
	*h = (struct ts_plain_host){0};
}

int ts_plain_host_read(const char *config_path, struct ts_plain_host *ret, struct ts_error **err)
{
	struct ts_plain_host h = {.config_path = config_path};
	int r;

	if (stat(config_path, &h.config_st) == 0)
		h.config_present = true;
	else if (errno != ENOENT)
		return ts_error_set(err, errno, "%s: cannot stat", config_path);
	r = read_line(TS_PLAIN_BOOT_ID_FILE, &h.boot_id, err);
	if (r >= 0)
		r = read_line(TS_PLAIN_ONLINE_FILE, &h.online, err);
	if (r < 0) {
		ts_plain_host_release(&h);
		return r;
	}
	*ret = h;
	return 0;
}

static bool str_eq(const char *a, const char *b)
{
	return a != NULL && b != NULL && strcmp(a, b) == 0;
}

bool ts_plain_summary_current(const struct ts_plain_summary *s, const struct ts_plain_host *h)
{
	if (!str_eq(s->config_path, h->config_path) || s->config_present != h->config_present ||
	    !str_eq(s->boot_id, h->boot_id) || !str_eq(s->online, h->online))
		return false;
	if (!s->config_present)
		return true;
	return s->config_st.st_dev == h->config_st.st_dev &&
	       s->config_st.st_ino == h->config_st.st_ino &&
	       s->config_st.st_size == h->config_st.st_size &&
	       nsec_of(&s->config_st.st_mtim) == nsec_of(&h->config_st.st_mtim) &&
	       nsec_of(&s->config_st.st_ctim) == nsec_of(&h->config_st.st_ctim);
}

/* The summary's text starts with SUMMARY_VALID_PREFIX and its validity
 * digit, so that the core can withdraw and restore it in place (one byte,
 * no file created: ts_plain_summary_invalidate()). */
#define SUMMARY_VALID_PREFIX "{\"valid\":"
#define SUMMARY_VALID_AT (sizeof(SUMMARY_VALID_PREFIX) - 1)

/* Write the validity digit of the summary fd holds; false when fd is not
 * a summary of ours. */
static bool set_valid(int fd, char digit)
{
	char head[SUMMARY_VALID_AT + 1];

	if (!owned_regular(fd, NULL) || pread(fd, head, sizeof(head), 0) != (ssize_t)sizeof(head) ||
	    memcmp(head, SUMMARY_VALID_PREFIX, SUMMARY_VALID_AT) != 0 ||
	    (head[SUMMARY_VALID_AT] != '0' && head[SUMMARY_VALID_AT] != '1'))
		return false;
	return head[SUMMARY_VALID_AT] == digit ||
	       pwrite(fd, &digit, 1, (off_t)SUMMARY_VALID_AT) == 1;
}

int ts_plain_summary_write(int state_dir_fd, const struct ts_plain_host *h,
			   const struct ts_plain_summary *s, struct ts_error **err)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	cleanup_free char *buf = NULL, *text = NULL, *old = NULL;
	cleanup_close int fd = -EBADF;
	cleanup_error struct ts_error *ignored = NULL;
	size_t len = 0, old_len = 0;
	int r;

	if (o == NULL)
		return ts_error_set(err, ENOMEM, "%s", TS_PLAIN_SUMMARY_FILE);
	r = set_int(o, "version", PLAIN_VERSION, err);
	if (r >= 0)
		r = set_str(o, "config_path", h->config_path, err);
	if (r >= 0)
		r = ts_json_object_set(o, "config_present", ts_json_new_bool(h->config_present),
				       err);
	if (r >= 0 && h->config_present) {
		r = set_uint(o, "config_dev", (uint64_t)h->config_st.st_dev, err);
		if (r >= 0)
			r = set_uint(o, "config_ino", (uint64_t)h->config_st.st_ino, err);
		if (r >= 0)
			r = set_int(o, "config_size", (int64_t)h->config_st.st_size, err);
		if (r >= 0)
			r = set_int(o, "config_mtime_nsec", nsec_of(&h->config_st.st_mtim), err);
		if (r >= 0)
			r = set_int(o, "config_ctime_nsec", nsec_of(&h->config_st.st_ctim), err);
	}
	if (r >= 0)
		r = set_str(o, "boot_id", h->boot_id, err);
	if (r >= 0)
		r = set_str(o, "online", h->online, err);
	if (r >= 0)
		r = ts_json_object_set(o, "unified", ts_json_new_bool(s->unified), err);
	if (r >= 0)
		r = set_str(o, "class", s->class_name, err);
	if (r >= 0)
		r = set_str(o, "cpus", s->cpus, err);
	if (r >= 0)
		r = set_str(o, "mems", s->mems, err);
	if (r >= 0)
		r = ts_json_serialize(o, false, &buf, &len, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", TS_PLAIN_SUMMARY_FILE);
	/* {"valid":1,"version":1,...}: the members after the digit */
	if (asprintf(&text, SUMMARY_VALID_PREFIX "1,%s\n", buf + 1) < 0)
		return ts_error_set(err, ENOMEM, "%s", TS_PLAIN_SUMMARY_FILE);
	len = strlen(text);
	/* the same summary, withdrawn: restored in place */
	fd = openat(state_dir_fd, TS_PLAIN_SUMMARY_FILE,
		    O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd >= 0 && owned_regular(fd, NULL) &&
	    ts_read_fd(fd, TS_PLAIN_SUMMARY_FILE, SUMMARY_MAX_BYTES, &old, &old_len, &ignored) >=
		    0 &&
	    old_len == len && old_len > SUMMARY_VALID_AT) {
		old[SUMMARY_VALID_AT] = '1';
		if (memcmp(old, text, len) == 0 && set_valid(fd, '1'))
			return 0;
	}
	return ts_write_file_replace_at(state_dir_fd, TS_PLAIN_SUMMARY_FILE, text, len, 0600, err);
}

int ts_plain_summary_invalidate(int state_dir_fd, struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	struct stat st;

	/* what is not a regular file of ours, the front never reads as a
	 * summary (ts_plain_summary_read()): nothing to withdraw */
	if (fstatat(state_dir_fd, TS_PLAIN_SUMMARY_FILE, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return 0;
	fd = openat(state_dir_fd, TS_PLAIN_SUMMARY_FILE,
		    O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return 0;
	/* a read-only state dir: what failed is the withdrawal, not the
	 * removal tried next (helper-20 read "cannot remove") */
	if (fd < 0 && errno == EROFS)
		return ts_error_set(err, errno, "%s: cannot withdraw", TS_PLAIN_SUMMARY_FILE);
	if (fd >= 0 && set_valid(fd, '0'))
		return 0;
	/* not one we can withdraw in place: then it goes */
	if (unlinkat(state_dir_fd, TS_PLAIN_SUMMARY_FILE, 0) < 0 && errno != ENOENT)
		return ts_error_set(err, errno, "%s: cannot remove", TS_PLAIN_SUMMARY_FILE);
	return 0;
}

static void timespec_of(int64_t nsec, struct timespec *ret)
{
	ret->tv_sec = (time_t)(nsec / 1000000000);
	ret->tv_nsec = (long)(nsec % 1000000000);
}

/* The members of a parsed summary; false when one is missing or wrong. */
static bool summary_from_json(const struct ts_json *o, struct ts_plain_summary *s)
{
	int64_t valid = 0, version = 0, size = 0, mtime = 0, ctime = 0;
	uint64_t dev = 0, ino = 0;

	if (o == NULL || o->type != TS_JSON_OBJECT || !get_i64(o, "valid", &valid) || valid != 1 ||
	    !get_i64(o, "version", &version) || version != PLAIN_VERSION ||
	    !get_bool(o, "config_present", &s->config_present) ||
	    !get_bool(o, "unified", &s->unified))
		return false;
	if (s->config_present) {
		if (!get_u64(o, "config_dev", &dev) || !get_u64(o, "config_ino", &ino) ||
		    !get_i64(o, "config_size", &size) || !get_i64(o, "config_mtime_nsec", &mtime) ||
		    !get_i64(o, "config_ctime_nsec", &ctime))
			return false;
		s->config_st.st_dev = (dev_t)dev;
		s->config_st.st_ino = (ino_t)ino;
		s->config_st.st_size = (off_t)size;
		timespec_of(mtime, &s->config_st.st_mtim);
		timespec_of(ctime, &s->config_st.st_ctim);
	}
	s->config_path = get_str(o, "config_path");
	s->boot_id = get_str(o, "boot_id");
	s->online = get_str(o, "online");
	s->class_name = get_str(o, "class");
	s->cpus = get_str(o, "cpus");
	s->mems = get_str(o, "mems");
	return s->config_path != NULL && s->boot_id != NULL && s->online != NULL &&
	       s->class_name != NULL && s->cpus != NULL && s->mems != NULL;
}

int ts_plain_summary_read(int state_dir_fd, struct ts_plain_summary *ret, int *ret_fd)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_close int fd = -EBADF;
	cleanup_free char *buf = NULL;
	cleanup_json struct ts_json *o = NULL;
	struct ts_plain_summary s = {0};
	size_t len = 0;

	fd = openat(state_dir_fd, TS_PLAIN_SUMMARY_FILE,
		    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0 || !owned_regular(fd, NULL) ||
	    ts_read_fd(fd, TS_PLAIN_SUMMARY_FILE, SUMMARY_MAX_BYTES, &buf, &len, &ignored) < 0 ||
	    len <= SUMMARY_VALID_AT ||
	    memcmp(buf, SUMMARY_VALID_PREFIX "1", SUMMARY_VALID_AT + 1) != 0 ||
	    ts_json_parse(buf, len, TS_PLAIN_SUMMARY_FILE, &o, &ignored) < 0)
		return 0;
	if (!summary_from_json(o, &s)) {
		ts_plain_summary_release(&s);
		return 0;
	}
	*ret = s;
	if (ret_fd != NULL)
		*ret_fd = TAKE_FD(fd);
	return 1;
}

bool ts_plain_summary_still_valid(int state_dir_fd, int fd)
{
	struct stat now, held;
	char digit = 0;

	return fstatat(state_dir_fd, TS_PLAIN_SUMMARY_FILE, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
	       fstat(fd, &held) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino &&
	       pread(fd, &digit, 1, (off_t)SUMMARY_VALID_AT) == 1 && digit == '1';
}

/* ---- the journal ------------------------------------------------------ */

void ts_plain_entry_release(struct ts_plain_entry *e)
{
	free(e->runtime_root);
	free(e->container_id);
	free(e->bundle);
	free(e->class_name);
	free(e->cpus);
	free(e->mems);
	*e = (struct ts_plain_entry){0};
}

void ts_plain_entries_free(struct ts_plain_entry *v, size_t n)
{
	for (size_t i = 0; v != NULL && i < n; i++)
		ts_plain_entry_release(&v[i]);
	free(v);
}

/* The entry as one line of JSON, '\n' included. */
static int entry_line(const struct ts_plain_entry *e, char **ret, size_t *ret_len,
		      struct ts_error **err)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	char *buf = NULL, *line;
	size_t len = 0;
	int r;

	if (o == NULL)
		return ts_error_set(err, ENOMEM, "%s", TS_PLAIN_JOURNAL_FILE);
	r = set_int(o, "version", PLAIN_VERSION, err);
	if (r >= 0)
		r = set_str(o, "root", e->runtime_root, err);
	if (r >= 0)
		r = set_str(o, "id", e->container_id, err);
	if (r >= 0)
		r = set_str(o, "bundle", e->bundle, err);
	if (r >= 0)
		r = set_str(o, "class", e->class_name, err);
	if (r >= 0)
		r = set_str(o, "cpus", e->cpus, err);
	if (r >= 0)
		r = set_str(o, "mems", e->mems, err);
	if (r >= 0)
		r = set_int(o, "pid", e->pid, err);
	if (r >= 0)
		r = set_uint(o, "pid_start_ticks", e->pid_start_ticks, err);
	if (r >= 0)
		r = set_uint(o, "created_usec", e->created_usec, err);
	if (r >= 0)
		r = ts_json_serialize(o, false, &buf, &len, err);
	if (r < 0)
		return ts_error_prefix(err, "%s", TS_PLAIN_JOURNAL_FILE);
	/* "\n" first too: a line an earlier append left cut short (a full
	 * disk) ends there and is skipped, instead of swallowing this one */
	line = malloc(len + 3);
	if (line == NULL) {
		free(buf);
		return ts_error_set(err, ENOMEM, "%s", TS_PLAIN_JOURNAL_FILE);
	}
	line[0] = '\n';
	memcpy(line + 1, buf, len);
	free(buf);
	line[++len] = '\n';
	line[++len] = '\0';
	*ret = line;
	*ret_len = len;
	return 0;
}

/* One line parsed; false for anything but a sound entry. */
static bool entry_parse(const char *line, size_t len, struct ts_plain_entry *ret)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_json struct ts_json *o = NULL;
	struct ts_plain_entry e = {0};
	int64_t version = 0, pid = 0;

	if (ts_json_parse(line, len, TS_PLAIN_JOURNAL_FILE, &o, &ignored) < 0 ||
	    o->type != TS_JSON_OBJECT || !get_i64(o, "version", &version) ||
	    version != PLAIN_VERSION || !get_i64(o, "pid", &pid) || pid <= 0 || pid > INT32_MAX ||
	    !get_u64(o, "pid_start_ticks", &e.pid_start_ticks) ||
	    !get_u64(o, "created_usec", &e.created_usec))
		return false;
	e.pid = (pid_t)pid;
	e.runtime_root = get_str(o, "root");
	e.container_id = get_str(o, "id");
	e.bundle = get_str(o, "bundle");
	e.class_name = get_str(o, "class");
	e.cpus = get_str(o, "cpus");
	e.mems = get_str(o, "mems");
	if (e.runtime_root == NULL || e.runtime_root[0] != '/' || e.container_id == NULL ||
	    !ts_plain_container_id_valid(e.container_id) || e.bundle == NULL ||
	    e.class_name == NULL || e.cpus == NULL || e.mems == NULL) {
		ts_plain_entry_release(&e);
		return false;
	}
	*ret = e;
	return true;
}

/* Every sound line of buf (len bytes), in order. */
static int entries_parse(const char *buf, size_t len, struct ts_plain_entry **ret_v, size_t *ret_n,
			 struct ts_error **err)
{
	struct ts_plain_entry *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t at = 0; at < len;) {
		const char *nl = memchr(buf + at, '\n', len - at);
		size_t end = nl != NULL ? (size_t)(nl - buf) : len;
		struct ts_plain_entry e;

		/* a line without its newline is an append cut short: skipped */
		if (nl != NULL && end > at && entry_parse(buf + at, end - at, &e)) {
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 16;
				struct ts_plain_entry *nv = reallocarray(v, ncap, sizeof(*v));

				if (nv == NULL) {
					ts_plain_entry_release(&e);
					ts_plain_entries_free(v, n);
					return ts_error_set(err, ENOMEM, "%s",
							    TS_PLAIN_JOURNAL_FILE);
				}
				v = nv;
				cap = ncap;
			}
			v[n++] = e;
		}
		at = end + 1;
	}
	*ret_v = v;
	*ret_n = n;
	return 0;
}

/* Open the journal and take its flock (op), opening it again when a
 * compaction replaced it meanwhile (the file we hold has no name left).
 * O_NONBLOCK: a FIFO put there must not hold a create (ENXIO, or refused
 * below).  A file of ours that others may write (the state dir, 0700,
 * keeps them out anyway) is made 0600 again rather than refused. */
static int journal_open_locked(int state_dir_fd, int flags, int op, int *ret_fd,
			       struct ts_error **err)
{
	for (int tries = 0; tries < 8; tries++) {
		cleanup_close int fd =
			openat(state_dir_fd, TS_PLAIN_JOURNAL_FILE,
			       flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
		struct stat st;

		if (fd < 0)
			return ts_error_set(err, errno, "%s: cannot open", TS_PLAIN_JOURNAL_FILE);
		if (fstat(fd, &st) < 0)
			return ts_error_set(err, errno, "%s: cannot stat", TS_PLAIN_JOURNAL_FILE);
		if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
			return ts_error_set(err, EPERM, "%s: not a regular file of uid %u",
					    TS_PLAIN_JOURNAL_FILE, (unsigned)geteuid());
		if ((st.st_mode & (S_IWGRP | S_IWOTH)) && fchmod(fd, 0600) < 0)
			return ts_error_set(err, errno, "%s: writable by others (mode %04o)",
					    TS_PLAIN_JOURNAL_FILE, (unsigned)(st.st_mode & 07777));
		while (flock(fd, op) < 0)
			if (errno != EINTR)
				return ts_error_set(err, errno, "%s: cannot lock",
						    TS_PLAIN_JOURNAL_FILE);
		if (fstat(fd, &st) == 0 && st.st_nlink > 0) {
			*ret_fd = TAKE_FD(fd);
			return 0;
		}
	}
	return ts_error_set(err, EAGAIN, "%s: replaced again and again", TS_PLAIN_JOURNAL_FILE);
}

int ts_plain_journal_append(int state_dir_fd, const struct ts_plain_entry *e, off_t *ret_size,
			    struct ts_error **err)
{
	cleanup_free char *line = NULL;
	cleanup_close int fd = -EBADF;
	struct stat st;
	size_t len = 0;
	int r;

	if (e->runtime_root == NULL || e->container_id == NULL)
		return ts_error_set(err, EINVAL, "%s: entry without a root or id",
				    TS_PLAIN_JOURNAL_FILE);
	r = entry_line(e, &line, &len, err);
	if (r >= 0)
		r = journal_open_locked(state_dir_fd, O_WRONLY | O_APPEND | O_CREAT, LOCK_SH, &fd,
					err);
	if (r < 0)
		return r;
	/* one write of one line: O_APPEND places it whole at the end */
	r = ts_write_all(fd, line, len);
	if (r < 0)
		return ts_error_set(err, -r, "%s: cannot append", TS_PLAIN_JOURNAL_FILE);
	if (ret_size != NULL)
		*ret_size = fstat(fd, &st) == 0 ? st.st_size : 0;
	return 0;
}

bool ts_plain_entry_alive(const char *proc_root, const struct ts_plain_entry *e)
{
	/* the store's own test of a "creating" record (proc.c): the create
	 * process first, the runtime dir second; in doubt, alive */
	struct ts_alloc a = {
		.container_id = e->container_id,
		.runtime_root = e->runtime_root,
		.status = TS_ALLOC_CREATING,
		.created_usec = e->created_usec,
		.pid = e->pid,
		.pid_start_ticks = e->pid_start_ticks,
	};

	return !ts_state_alloc_is_stale(proc_root, &a, e->created_usec, UINT64_MAX);
}

size_t ts_plain_entries_keep_live(const char *proc_root, struct ts_plain_entry *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		bool later = false;

		for (size_t j = i + 1; j < n && !later; j++)
			later = strcmp(v[i].container_id, v[j].container_id) == 0 &&
				strcmp(v[i].runtime_root, v[j].runtime_root) == 0;
		if (later || !ts_plain_entry_alive(proc_root, &v[i])) {
			ts_plain_entry_release(&v[i]);
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

/* The journal's lines; of one larger than TS_PLAIN_JOURNAL_MAX_BYTES (no
 * create lets it grow so: ts_plain_journal_compact()) the last that many
 * bytes, from their first line on: the newest entries. */
static int read_locked(int fd, struct ts_plain_entry **ret_v, size_t *ret_n, struct ts_error **err)
{
	cleanup_free char *buf = NULL;
	struct stat st;
	off_t from = 0;
	size_t len = 0, skip = 0;
	int r;

	if (fstat(fd, &st) < 0)
		return ts_error_set(err, errno, "%s: cannot read", TS_PLAIN_JOURNAL_FILE);
	if (st.st_size > (off_t)TS_PLAIN_JOURNAL_MAX_BYTES)
		from = st.st_size - (off_t)TS_PLAIN_JOURNAL_MAX_BYTES;
	if (lseek(fd, from, SEEK_SET) < 0)
		return ts_error_set(err, errno, "%s: cannot read", TS_PLAIN_JOURNAL_FILE);
	r = ts_read_fd(fd, TS_PLAIN_JOURNAL_FILE, TS_PLAIN_JOURNAL_MAX_BYTES, &buf, &len, err);
	if (r == -EFBIG) {
		/* grew while read: what was there is read the next time */
		ts_error_clear(err);
		*ret_v = NULL;
		*ret_n = 0;
		return 0;
	}
	if (r < 0)
		return r;
	if (from > 0) {
		const char *nl = memchr(buf, '\n', len);

		skip = nl != NULL ? (size_t)(nl - buf) : len;
	}
	return entries_parse(buf + skip, len - skip, ret_v, ret_n, err);
}

int ts_plain_journal_take(int state_dir_fd, const char *proc_root, int *ret_fd,
			  struct ts_plain_entry **ret_v, size_t *ret_n, struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	struct ts_plain_entry *v = NULL;
	size_t n = 0;
	int r;

	*ret_fd = -EBADF;
	*ret_v = NULL;
	*ret_n = 0;
	if (faccessat(state_dir_fd, TS_PLAIN_JOURNAL_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
	    errno == ENOENT)
		return 0;
	r = journal_open_locked(state_dir_fd, O_RDWR, LOCK_EX, &fd, err);
	if (r == -ENOENT) {
		ts_error_clear(err);
		return 0;
	}
	if (r >= 0)
		r = read_locked(fd, &v, &n, err);
	if (r < 0)
		return ts_error_prefix(err, "cannot take the plain containers");
	n = ts_plain_entries_keep_live(proc_root, v, n);
	*ret_fd = TAKE_FD(fd);
	*ret_v = v;
	*ret_n = n;
	return 0;
}

int ts_plain_journal_take_done(int fd, bool commit, struct ts_error **err)
{
	int r = 0;

	if (fd < 0)
		return 0;
	if (commit && ftruncate(fd, 0) < 0)
		r = ts_error_set(err, errno, "%s: cannot empty", TS_PLAIN_JOURNAL_FILE);
	close(fd); /* releases the flock */
	return r;
}

int ts_plain_journal_compact(int state_dir_fd, const char *proc_root, size_t *ret_kept,
			     size_t *ret_dropped, struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	struct ts_plain_entry *v = NULL;
	char *text = NULL;
	size_t n = 0, all, len = 0;
	int r;

	r = journal_open_locked(state_dir_fd, O_RDWR, LOCK_EX, &fd, err);
	if (r == -ENOENT) {
		ts_error_clear(err);
		if (ret_kept != NULL)
			*ret_kept = 0;
		if (ret_dropped != NULL)
			*ret_dropped = 0;
		return 0;
	}
	if (r >= 0)
		r = read_locked(fd, &v, &n, err);
	if (r < 0)
		return ts_error_prefix(err, "cannot compact the plain containers");
	all = n;
	n = ts_plain_entries_keep_live(proc_root, v, n);
	for (size_t i = 0; r >= 0 && i < n; i++) {
		cleanup_free char *line = NULL;
		size_t k = 0;
		char *grown;

		r = entry_line(&v[i], &line, &k, err);
		if (r < 0)
			break;
		grown = realloc(text, len + k + 1);
		if (grown == NULL) {
			r = ts_error_set(err, ENOMEM, "%s", TS_PLAIN_JOURNAL_FILE);
			break;
		}
		text = grown;
		memcpy(text + len, line, k);
		len += k;
	}
	/* the renamed file has a name, the one fd holds none: appenders that
	 * waited for the lock open the new one (journal_open_locked()) */
	if (r >= 0)
		r = ts_write_file_replace_at(state_dir_fd, TS_PLAIN_JOURNAL_FILE,
					     text != NULL ? text : "", len, 0600, err);
	free(text);
	ts_plain_entries_free(v, n);
	if (r < 0)
		return r;
	if (ret_kept != NULL)
		*ret_kept = n;
	if (ret_dropped != NULL)
		*ret_dropped = all - n;
	return 0;
}

int ts_plain_journal_read(int state_dir_fd, struct ts_plain_entry **ret_v, size_t *ret_n,
			  struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	struct stat st;

	*ret_v = NULL;
	*ret_n = 0;
	fd = openat(state_dir_fd, TS_PLAIN_JOURNAL_FILE,
		    O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return ts_error_set(err, errno, "%s: cannot open", TS_PLAIN_JOURNAL_FILE);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return ts_error_set(err, EINVAL, "%s: not a regular file", TS_PLAIN_JOURNAL_FILE);
	return read_locked(fd, ret_v, ret_n, err);
}

/* ---- the delete's question ------------------------------------------- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Whether buf has "container_id" <ws> : <ws> "<id>" (JSON as any writer
 * lays it out; a runc id needs no escape, and a quote inside a string
 * value is always escaped, so the pattern cannot start inside one). */
static bool names_id(const char *buf, size_t len, const char *id)
{
	static const char key[] = "\"container_id\"";
	size_t k = strlen(id), klen = sizeof(key) - 1;

	for (const char *p = buf; (p = memmem(p, len - (size_t)(p - buf), id, k)) != NULL; p++) {
		const char *q = p - 1;

		if (p == buf || *q != '"' || (size_t)(p - buf) + k >= len || p[k] != '"')
			continue;
		while (--q >= buf && is_space(*q))
			;
		if (q < buf || *q != ':')
			continue;
		while (--q >= buf && is_space(*q))
			;
		if (q >= buf && (size_t)(q - buf) + 1 >= klen &&
		    memcmp(q + 1 - klen, key, klen) == 0)
			return true;
	}
	return false;
}

/* Whether buf looks like a whole allocations.json as a commit writes it:
 * compact, {"version":1,... first and ]} and a newline last. */
static bool written_whole(const char *buf, size_t len)
{
	static const char head[] = "{\"version\":1,", tail[] = "]}\n";

	return len >= sizeof(head) - 1 + sizeof(tail) - 1 &&
	       memcmp(buf, head, sizeof(head) - 1) == 0 &&
	       memcmp(buf + len - (sizeof(tail) - 1), tail, sizeof(tail) - 1) == 0;
}

bool ts_plain_maybe_recorded(int state_dir_fd, const char *container_id)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *buf = NULL;
	size_t len = 0;
	int r;

	if (!ts_plain_container_id_valid(container_id))
		return true;
	r = ts_read_file_at(state_dir_fd, TS_STATE_ALLOC_FILE, TS_STATE_ALLOC_FILE_MAX_BYTES, &buf,
			    &len, &ignored);
	/* missing: a new store, or a lost one (a commit leaves its copy or
	 * its roots file), whose rebuild may find the container in its
	 * runtime root (helper-14: its delete released nothing) */
	if (r == -ENOENT)
		return ts_state_dir_fd_written(state_dir_fd);
	if (r < 0 || names_id(buf, len, container_id))
		return true;
	/* not named, in a file this code did not write whole (cut short, or
	 * not the compact text a commit writes): a damaged store, rebuilt by
	 * the core, which may find the container in its runtime root */
	return !written_whole(buf, len);
}
