/* bundle.c - see bundle.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci/bundle.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/*
 * Make path absolute against the working directory and clean it lexically, as
 * runc does for --bundle (Go's filepath.Abs): no "//", no "." and ".."
 * resolved by dropping the previous component.  Symlinks are not resolved.
 * @return the new string (caller frees), or NULL with errno set.
 */
static char *path_absolute(const char *base, const char *path)
{
	cleanup_free char *cwd = NULL, *joined = NULL;
	char *out, *p, *tok, *save = NULL;
	size_t n = 0;

	if (path[0] != '/' && base == NULL) {
		cwd = getcwd(NULL, 0);
		if (cwd == NULL)
			return NULL;
		base = cwd;
	}
	if (asprintf(&joined, "%s/%s", path[0] == '/' ? "" : base, path) < 0)
		return NULL;
	out = malloc(strlen(joined) + 2);
	if (out == NULL)
		return NULL;
	for (tok = strtok_r(joined, "/", &save); tok != NULL; tok = strtok_r(NULL, "/", &save)) {
		if (strcmp(tok, ".") == 0)
			continue;
		if (strcmp(tok, "..") == 0) {
			p = n > 0 ? memrchr(out, '/', n) : NULL;
			n = p != NULL ? (size_t)(p - out) : 0;
			continue;
		}
		out[n++] = '/';
		memcpy(out + n, tok, strlen(tok));
		n += strlen(tok);
	}
	if (n == 0)
		out[n++] = '/';
	out[n] = '\0';
	return out;
}

/* Read the whole config, refusing what is not a regular file before reading a byte of it. */
static int read_config(struct ts_oci_bundle *b, struct ts_error **err)
{
	cleanup_close int fd = -EBADF;
	cleanup_free char *buf = NULL;
	size_t len = 0;
	struct stat st;

	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	fd = openat(b->bundle_fd, b->config_name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return ts_error_set(err, errno, "%s: cannot open", b->config_path);
	if (fstat(fd, &st) < 0)
		return ts_error_set(err, errno, "%s: cannot stat", b->config_path);
	if (S_ISDIR(st.st_mode))
		return ts_error_set(err, EISDIR, "%s: cannot read", b->config_path);
	if (!S_ISREG(st.st_mode))
		return ts_error_set(err, 0, "%s: not a regular file", b->config_path);
	if (st.st_size > (off_t)TS_OCI_CONFIG_MAX_BYTES)
		return ts_error_set(err, EFBIG, "%s: larger than %u bytes", b->config_path,
				    TS_OCI_CONFIG_MAX_BYTES);
	buf = malloc((size_t)st.st_size + 1);
	if (buf == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot read", b->config_path);
	/* read up to one byte more than fstat said, to notice a file that grew meanwhile */
	while (len <= (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ts_error_set(err, errno, "%s: cannot read", b->config_path);
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > (size_t)st.st_size)
		return ts_error_set(err, EAGAIN, "%s: changed while being read", b->config_path);
	buf[len] = '\0';
	b->original = TAKE_PTR(buf);
	b->original_len = len;
	b->config_mode = st.st_mode;
	b->config_uid = st.st_uid;
	b->config_gid = st.st_gid;
	return 0;
}

static int parse_config(struct ts_oci_bundle *b, struct ts_error **err)
{
	int r;

	r = ts_json_parse(b->original, b->original_len, b->config_path, &b->config, err);
	if (r < 0)
		return r;
	if (b->config->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "%s: expected a JSON object, got %s", b->config_path,
				    ts_json_type_name(b->config->type));
	b->saved = ts_json_dup(b->config);
	if (b->saved == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot load", b->config_path);
	return 0;
}

int ts_oci_bundle_open(const char *bundle_dir, const char *config_name, struct ts_oci_bundle **ret,
		       struct ts_error **err)
{
	cleanup_oci_bundle struct ts_oci_bundle *b = NULL;
	int r;

	if (bundle_dir == NULL)
		bundle_dir = ".";
	if (config_name == NULL)
		config_name = "config.json";
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return ts_error_set(err, ENOMEM, "bundle '%s': cannot open", bundle_dir);
	b->bundle_fd = -EBADF;
	b->bundle_dir = path_absolute(NULL, bundle_dir);
	if (b->bundle_dir == NULL)
		return ts_error_set(err, errno, "bundle '%s': cannot open", bundle_dir);
	b->config_name = strdup(config_name);
	b->config_path = path_absolute(b->bundle_dir, config_name);
	if (b->config_name == NULL || b->config_path == NULL)
		return ts_error_set(err, ENOMEM, "bundle '%s': cannot open", b->bundle_dir);
	b->bundle_fd = open(b->bundle_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (b->bundle_fd < 0)
		return ts_error_set(err, errno, "bundle '%s': cannot open", b->bundle_dir);
	r = read_config(b, err);
	if (r < 0)
		return r;
	r = parse_config(b, err);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(b);
	return 0;
}

/* After a save, the file is what config serialized to then: compare the
 * bytes (a tree kept for it was a copy of the config per create).  *text:
 * config's serialization, when it was made.  @return whether it differs
 * (true when it cannot be serialized: the save then reports why). */
static bool differs(const struct ts_oci_bundle *b, char **text, size_t *len)
{
	cleanup_error struct ts_error *ignored = NULL;

	*text = NULL;
	*len = 0;
	if (b->saved != NULL)
		return !ts_json_equal(b->config, b->saved);
	if (ts_json_serialize(b->config, true, text, len, &ignored) < 0)
		return true;
	return *len != b->saved_text_len || memcmp(*text, b->saved_text, *len) != 0;
}

const struct ts_json *ts_oci_bundle_as_read(const struct ts_oci_bundle *b)
{
	return b->saved;
}

bool ts_oci_bundle_changed(const struct ts_oci_bundle *b)
{
	cleanup_free char *text = NULL;
	size_t len;

	return differs(b, &text, &len);
}

/* The writer names the file as we gave it (relative to bundle_fd); say where that is. */
static int replace_error(const struct ts_oci_bundle *b, struct ts_error *inner,
			 struct ts_error **err)
{
	int r;

	if (b->config_name[0] == '/' || ts_error_code(inner) == -ENOMEM) {
		*err = inner;
		return ts_error_code(inner);
	}
	r = ts_error_set(err, inner->errnum, "%s/%s", b->bundle_dir, inner->msg);
	ts_error_free(inner);
	return r;
}

int ts_oci_bundle_save(struct ts_oci_bundle *b, struct ts_error **err)
{
	cleanup_free char *text = NULL;
	struct ts_error *inner = NULL;
	size_t len = 0;
	int r;

	if (!differs(b, &text, &len))
		return 0;
	if (text == NULL) {
		r = ts_json_serialize(b->config, true, &text, &len, err);
		if (r < 0)
			return ts_error_prefix(err, "%s", b->config_path);
	}
	/* the owner is set on the new file before it replaces the old one: an
	 * engine running us for another user expects it kept, at every moment */
	r = ts_write_file_atomic_owned_at(
		b->bundle_fd, b->config_name, text, len, b->config_mode & 07777,
		b->config_uid == geteuid() ? (uid_t)-1 : b->config_uid,
		b->config_gid == getegid() ? (gid_t)-1 : b->config_gid, &inner);
	if (r < 0)
		return replace_error(b, inner, err);
	b->saved = ts_json_free(b->saved);
	free(b->saved_text);
	b->saved_text = TAKE_PTR(text);
	b->saved_text_len = len;
	return 1;
}

struct ts_oci_bundle *ts_oci_bundle_free(struct ts_oci_bundle *b)
{
	if (b == NULL)
		return NULL;
	ts_closep(&b->bundle_fd);
	free(b->bundle_dir);
	free(b->config_path);
	free(b->config_name);
	free(b->original);
	ts_json_free(b->config);
	ts_json_free(b->saved);
	free(b->saved_text);
	free(b);
	return NULL;
}
