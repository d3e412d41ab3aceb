/* format.c - allocations.json <-> records; the format is described in state.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci/json.h"
#include <yajl/yajl_gen.h>

#include "state/internal.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/text.h"

/* the checksum's tag: the sum of the records' hashes (state.h) */
#define CHECKSUM_PREFIX "fnv1a64-sum:"
/* the tag of files written before 2026-12-06: one hash chained over all */
#define CHAINED_PREFIX "fnv1a64:"
#define FNV_BASIS 0xcbf29ce484222325ull

uint64_t ts_state_fnv1a64_update(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint64_t ts_state_fnv1a64(const void *buf, size_t len)
{
	return ts_state_fnv1a64_update(FNV_BASIS, buf, len);
}

/* obj[key] = s; a NULL s leaves the member out. */
static int put_string(struct ts_json *obj, const char *key, const char *s, struct ts_error **err)
{
	if (s == NULL)
		return 0;
	return ts_json_object_set(obj, key, ts_json_new_string(s), err);
}

static struct ts_json *encode_devices(char *const *devices, struct ts_error **err)
{
	cleanup_json struct ts_json *arr = ts_json_new_array();

	if (arr == NULL) {
		ts_error_set(err, ENOMEM, "devices");
		return NULL;
	}
	for (size_t i = 0; devices != NULL && devices[i] != NULL; i++)
		if (ts_json_array_append(arr, ts_json_new_string(devices[i]), err) < 0)
			return NULL;
	return TAKE_PTR(arr);
}

static struct ts_json *encode_one(const struct ts_alloc *a, struct ts_error **err)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	int r;

	if (o == NULL) {
		ts_error_set(err, ENOMEM, "allocation");
		return NULL;
	}
	r = put_string(o, "container_id", a->container_id, err);
	if (r >= 0)
		r = put_string(o, "runtime_root", a->runtime_root, err);
	if (r >= 0)
		r = put_string(o, "runtime", a->runtime_path, err);
	if (r >= 0)
		r = put_string(o, "bundle", a->bundle, err);
	if (r >= 0)
		r = put_string(o, "class", a->class_name, err);
	if (r >= 0)
		r = put_string(o, "cpus", a->cpus_str ? a->cpus_str : "", err);
	if (r >= 0)
		r = put_string(o, "mems", a->mems_str ? a->mems_str : "", err);
	if (r >= 0)
		r = ts_json_object_set(o, "devices", encode_devices(a->devices, err), err);
	if (r >= 0)
		r = ts_json_object_set(o, "pinned", ts_json_new_bool(a->pinned), err);
	if (r >= 0)
		r = ts_json_object_set(o, "numa_exclusive", ts_json_new_bool(a->numa_exclusive),
				       err);
	if (r >= 0)
		r = put_string(o, "state", ts_alloc_status_to_string(a->status), err);
	if (r >= 0)
		r = ts_json_object_set(o, "created_usec", ts_json_new_uint(a->created_usec), err);
	if (r >= 0 && a->pid > 0) {
		r = ts_json_object_set(o, "pid", ts_json_new_int(a->pid), err);
		if (r >= 0)
			r = ts_json_object_set(o, "pid_start_ticks",
					       ts_json_new_uint(a->pid_start_ticks), err);
		if (r >= 0)
			r = put_string(o, "cgroup_path", a->cgroup_path, err);
	}
	if (r < 0)
		return NULL;
	return TAKE_PTR(o);
}

int ts_state_to_json(const struct ts_state *s, struct ts_json **ret, struct ts_error **err)
{
	cleanup_json struct ts_json *arr = ts_json_new_array();

	if (arr == NULL)
		return ts_error_set(err, ENOMEM, "allocations");
	for (size_t i = 0; i < s->n_allocs; i++)
		if (ts_json_array_append(arr, encode_one(s->allocs[i], err), err) < 0)
			return ts_error_prefix(err, "allocations");
	*ret = TAKE_PTR(arr);
	return 0;
}

/* v in decimal, written backwards from end; returns where it starts.  (The
 * checksum runs twice per create over every record: snprintf was most of
 * its cost at 500 records.) */
static char *decimal(uint64_t v, char *end)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	return end;
}

static inline uint64_t fnv_bytes(uint64_t h, const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t fnv_byte(uint64_t h, char c)
{
	return (h ^ (unsigned char)c) * 0x100000001b3ull;
}

/* Hash "<key>:<length>:<bytes>;" into *h (klen: strlen(key)).  Inline with
 * the key's length known: the checksum runs over every record several
 * times per create. */
static inline void canon_bytes(uint64_t *h, const char *key, size_t klen, const char *val,
			       size_t len)
{
	char num[24];
	char *start = decimal(len, num + sizeof(num));
	uint64_t x = *h;

	x = fnv_bytes(x, key, klen);
	x = fnv_byte(x, ':');
	x = fnv_bytes(x, start, (size_t)(num + sizeof(num) - start));
	x = fnv_byte(x, ':');
	x = fnv_bytes(x, val, len);
	*h = fnv_byte(x, ';');
}

/* canon_str(&h, "key", val): a NULL value is left out. */
#define canon_str(h, key, val)                                                    \
	do {                                                                      \
		const char *v_ = (val);                                           \
		if (v_ != NULL)                                                   \
			canon_bytes((h), (key), sizeof(key) - 1, v_, strlen(v_)); \
	} while (0)

static inline void canon_uint_k(uint64_t *h, const char *key, size_t klen, uint64_t v)
{
	char num[24];
	char *start = decimal(v, num + sizeof(num));

	canon_bytes(h, key, klen, start, (size_t)(num + sizeof(num) - start));
}

#define canon_uint(h, key, v) canon_uint_k((h), (key), sizeof(key) - 1, (v))

/* h continued over the canonical stream of one record (state.h) */
static uint64_t record_stream(uint64_t h, const struct ts_alloc *a)
{
	size_t ndev = 0;

	while (a->devices != NULL && a->devices[ndev] != NULL)
		ndev++;
	/* the same members, values and order as encode_one() writes */
	canon_str(&h, "container_id", a->container_id);
	canon_str(&h, "runtime_root", a->runtime_root);
	canon_str(&h, "runtime", a->runtime_path);
	canon_str(&h, "bundle", a->bundle);
	canon_str(&h, "class", a->class_name);
	canon_str(&h, "cpus", a->cpus_str ? a->cpus_str : "");
	canon_str(&h, "mems", a->mems_str ? a->mems_str : "");
	canon_uint(&h, "devices", ndev);
	for (size_t k = 0; k < ndev; k++)
		canon_str(&h, "device", a->devices[k]);
	canon_str(&h, "pinned", a->pinned ? "true" : "false");
	canon_str(&h, "numa_exclusive", a->numa_exclusive ? "true" : "false");
	canon_str(&h, "state", ts_alloc_status_to_string(a->status));
	canon_uint(&h, "created_usec", a->created_usec);
	if (a->pid > 0) {
		canon_uint(&h, "pid", (uint64_t)a->pid);
		canon_uint(&h, "pid_start_ticks", a->pid_start_ticks);
		canon_str(&h, "cgroup_path", a->cgroup_path);
	}
	return fnv_byte(h, '\n');
}

uint64_t ts_state_record_hash(const struct ts_alloc *a)
{
	return record_stream(FNV_BASIS, a);
}

uint64_t ts_state_checksum(struct ts_alloc *const *v, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += ts_state_record_hash(v[i]);
	return sum;
}

uint64_t ts_state_checksum_chained(struct ts_alloc *const *v, size_t n)
{
	uint64_t h = FNV_BASIS;

	for (size_t i = 0; i < n; i++)
		h = record_stream(h, v[i]);
	return h;
}

struct id_ref {
	const char *root; /* "" for none */
	const char *id;
	size_t at;
};

static int cmp_id_ref(const void *x, const void *y)
{
	const struct id_ref *a = x, *b = y;
	int c = strcmp(a->id, b->id);

	if (c == 0)
		c = strcmp(a->root, b->root);
	return c != 0 ? c : (a->at > b->at) - (a->at < b->at);
}

/* Set dup[i] for every record whose container (runtime root and id) an
 * earlier record has: sorted by id, root, then position, neighbours
 * compared (n log n; the store holds hundreds of records).  @return 0;
 * -ENOMEM. */
static int mark_duplicates(struct ts_alloc *const *v, size_t n, bool *dup)
{
	cleanup_free struct id_ref *refs = NULL;

	if (n < 2)
		return 0;
	refs = malloc(n * sizeof(*refs));
	if (refs == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		refs[i] = (struct id_ref){.root = v[i]->runtime_root ? v[i]->runtime_root : "",
					  .id = v[i]->container_id,
					  .at = i};
	qsort(refs, n, sizeof(*refs), cmp_id_ref);
	for (size_t i = 1; i < n; i++)
		if (strcmp(refs[i - 1].id, refs[i].id) == 0 &&
		    strcmp(refs[i - 1].root, refs[i].root) == 0)
			dup[refs[i].at] = true;
	return 0;
}

static bool same_container(const struct ts_alloc *a, const struct ts_alloc *b)
{
	return strcmp(a->container_id, b->container_id) == 0 &&
	       strcmp(a->runtime_root ? a->runtime_root : "",
		      b->runtime_root ? b->runtime_root : "") == 0;
}

/* Every container id non-empty and unique; a duplicate is reported at the
 * first record that repeats an earlier one.  The first known records are
 * unique already (the file's, decoded or written with this check): only
 * the ones after them are compared, with every earlier record, when they
 * are few (a create appends one: sorting 500 ids was 0.26 M instructions
 * of its commit). */
static int check_ids(struct ts_alloc *const *v, size_t n, size_t known, const char *path,
		     struct ts_error **err)
{
	cleanup_free bool *dup = NULL;

	for (size_t i = 0; i < n; i++)
		if (v[i]->container_id == NULL || v[i]->container_id[0] == '\0')
			return ts_error_set(err, 0, "%s: '/allocations/%zu/container_id': empty",
					    path, i);
	if (known > n)
		known = 0;
	if (known > 0 && n - known <= 8) {
		for (size_t i = known; i < n; i++)
			for (size_t j = 0; j < i; j++)
				if (same_container(v[j], v[i]))
					return ts_error_set(err, 0,
							    "%s: '/allocations/%zu/container_id': "
							    "duplicate '%s'",
							    path, i, v[i]->container_id);
		return 0;
	}
	dup = calloc(n + 1, sizeof(*dup));
	if (dup == NULL || mark_duplicates(v, n, dup) < 0)
		return ts_error_set(err, ENOMEM, "%s: cannot write", path);
	for (size_t i = 0; i < n; i++)
		if (dup[i])
			return ts_error_set(err, 0,
					    "%s: '/allocations/%zu/container_id': duplicate '%s'",
					    path, i, v[i]->container_id);
	return 0;
}

/* ---- writing allocations.json straight through yajl_gen ----------------------------------- */

/* The file is written at every create and hook with every record in it: a
 * ts_json tree built and freed for hundreds of records cost more than the
 * generation itself.  The output is byte-identical to ts_json_serialize()
 * of encode_one()'s objects, compact. */
struct gen {
	yajl_gen g;
	const char *key; /* member being written, for the error */
	bool bad_utf8;
	bool failed;
};

static void gen_key_string(struct gen *w, const char *key, const char *s)
{
	if (s == NULL || w->failed)
		return;
	w->key = key;
	if (yajl_gen_string(w->g, (const unsigned char *)key, strlen(key)) != yajl_gen_status_ok)
		w->failed = true;
	else if (yajl_gen_string(w->g, (const unsigned char *)s, strlen(s)) != yajl_gen_status_ok)
		w->failed = w->bad_utf8 = true;
}

static void gen_key_raw(struct gen *w, const char *key, const char *raw, size_t len)
{
	if (w->failed)
		return;
	w->key = key;
	if (yajl_gen_string(w->g, (const unsigned char *)key, strlen(key)) != yajl_gen_status_ok ||
	    yajl_gen_number(w->g, raw, len) != yajl_gen_status_ok)
		w->failed = true;
}

static void gen_key_uint(struct gen *w, const char *key, uint64_t v)
{
	char num[24];
	char *start = decimal(v, num + sizeof(num));

	gen_key_raw(w, key, start, (size_t)(num + sizeof(num) - start));
}

static void gen_record(struct gen *w, const struct ts_alloc *a)
{
	size_t ndev = 0;

	while (a->devices != NULL && a->devices[ndev] != NULL)
		ndev++;
	if (yajl_gen_map_open(w->g) != yajl_gen_status_ok)
		w->failed = true;
	/* the members, values and order of encode_one() */
	gen_key_string(w, "container_id", a->container_id);
	gen_key_string(w, "runtime_root", a->runtime_root);
	gen_key_string(w, "runtime", a->runtime_path);
	gen_key_string(w, "bundle", a->bundle);
	gen_key_string(w, "class", a->class_name);
	gen_key_string(w, "cpus", a->cpus_str ? a->cpus_str : "");
	gen_key_string(w, "mems", a->mems_str ? a->mems_str : "");
	if (ndev == 0) {
		gen_key_raw(w, "devices", "[]", 2);
	} else if (!w->failed) {
		w->key = "devices";
		if (yajl_gen_string(w->g, (const unsigned char *)"devices", 7) !=
			    yajl_gen_status_ok ||
		    yajl_gen_array_open(w->g) != yajl_gen_status_ok)
			w->failed = true;
		for (size_t k = 0; k < ndev && !w->failed; k++)
			if (yajl_gen_string(w->g, (const unsigned char *)a->devices[k],
					    strlen(a->devices[k])) != yajl_gen_status_ok)
				w->failed = w->bad_utf8 = true;
		if (!w->failed && yajl_gen_array_close(w->g) != yajl_gen_status_ok)
			w->failed = true;
	}
	gen_key_raw(w, "pinned", a->pinned ? "true" : "false", a->pinned ? 4 : 5);
	gen_key_raw(w, "numa_exclusive", a->numa_exclusive ? "true" : "false",
		    a->numa_exclusive ? 4 : 5);
	gen_key_string(w, "state", ts_alloc_status_to_string(a->status));
	gen_key_uint(w, "created_usec", a->created_usec);
	if (a->pid > 0) {
		gen_key_uint(w, "pid", (uint64_t)a->pid);
		gen_key_uint(w, "pid_start_ticks", a->pid_start_ticks);
		gen_key_string(w, "cgroup_path", a->cgroup_path);
	}
	if (!w->failed && yajl_gen_map_close(w->g) != yajl_gen_status_ok)
		w->failed = true;
}

/* Record a's text in src, when it has one there: its span within bounds
 * and an object's braces at both ends. */
static const char *text_of(const struct ts_alloc *a, const char *src, size_t src_len)
{
	if (src == NULL || a->text_len < 2 || a->text_at >= src_len ||
	    a->text_len > src_len - a->text_at || src[a->text_at] != '{' ||
	    src[a->text_at + a->text_len - 1] != '}')
		return NULL;
	return src + a->text_at;
}

static int generate(struct ts_alloc *const *v, size_t n, const char *sum, const char *path,
		    const char *src, size_t src_len, struct ts_state_span *spans, char **ret_buf,
		    size_t *ret_len, struct ts_error **err)
{
	struct gen w = {.g = yajl_gen_alloc(NULL)};
	const unsigned char *out;
	size_t out_len, at = 0;
	char *copy;

	if (w.g == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot write", path);
	/* compact: yajl's indentation was a third of the bytes, and of the
	 * instructions, of a commit of 500 records (internal.h) */
	if (!yajl_gen_config(w.g, yajl_gen_validate_utf8, 1) ||
	    yajl_gen_map_open(w.g) != yajl_gen_status_ok)
		w.failed = true;
	gen_key_raw(&w, "version", "1", 1);
	gen_key_string(&w, "checksum", sum);
	if (!w.failed && n == 0) {
		gen_key_raw(&w, "allocations", "[]", 2);
	} else if (!w.failed) {
		if (yajl_gen_string(w.g, (const unsigned char *)"allocations", 11) !=
			    yajl_gen_status_ok ||
		    yajl_gen_array_open(w.g) != yajl_gen_status_ok)
			w.failed = true;
		for (at = 0; at < n && !w.failed; at++) {
			const char *text = text_of(v[at], src, src_len);
			size_t before = 0, after = 0;

			if (spans != NULL &&
			    yajl_gen_get_buf(w.g, &out, &before) != yajl_gen_status_ok)
				w.failed = true;
			/* A record unchanged since src was read or written is
			 * copied: generating 500 records was 6 M instructions of
			 * every commit.  yajl_gen_number() appends the text as it
			 * is, after the separator: a number's text is not checked. */
			if (text != NULL && !w.failed) {
				w.key = "";
				if (yajl_gen_number(w.g, text, v[at]->text_len) !=
				    yajl_gen_status_ok)
					w.failed = true;
			} else {
				gen_record(&w, v[at]);
			}
			if (spans == NULL || w.failed)
				continue;
			if (yajl_gen_get_buf(w.g, &out, &after) != yajl_gen_status_ok) {
				w.failed = true;
				continue;
			}
			/* compact: one ',' before every record but the first */
			spans[at].at = before + (at > 0);
			spans[at].len = after - spans[at].at;
		}
		if (!w.failed && yajl_gen_array_close(w.g) != yajl_gen_status_ok)
			w.failed = true;
	}
	if (!w.failed && yajl_gen_map_close(w.g) != yajl_gen_status_ok)
		w.failed = true;
	if (w.failed || yajl_gen_get_buf(w.g, &out, &out_len) != yajl_gen_status_ok) {
		yajl_gen_free(w.g);
		if (w.bad_utf8)
			return ts_error_set(err, 0,
					    "%s: '/allocations/%zu/%s': string is not valid UTF-8",
					    path, at > 0 ? at - 1 : 0, w.key);
		return ts_error_set(err, ENOMEM, "%s: cannot write", path);
	}
	copy = malloc(out_len + 2);
	if (copy != NULL) {
		memcpy(copy, out, out_len);
		copy[out_len] = '\n';
		copy[out_len + 1] = '\0';
	}
	yajl_gen_free(w.g);
	if (copy == NULL)
		return ts_error_set(err, ENOMEM, "%s: cannot write", path);
	*ret_buf = copy;
	*ret_len = out_len + 1;
	return 0;
}

int ts_state_format_encode_from(struct ts_alloc *const *v, size_t n, const char *path,
				const char *src, size_t src_len, struct ts_state_span *spans,
				size_t ids_checked, char **ret_buf, size_t *ret_len,
				struct ts_error **err)
{
	char sum[sizeof(CHECKSUM_PREFIX) + 16];
	uint64_t h = 0;
	int r;

	r = check_ids(v, n, ids_checked, path, err);
	if (r < 0)
		return r;
	/* a record copied from src adds the hash it was read or written
	 * with: a delete at 500 records hashed all of them (1.1 M
	 * instructions); only a generated one is hashed */
	for (size_t i = 0; i < n; i++) {
		uint64_t one = text_of(v[i], src, src_len) != NULL ? v[i]->text_sum
								   : ts_state_record_hash(v[i]);

		if (spans != NULL)
			spans[i].sum = one;
		h += one;
	}
	snprintf(sum, sizeof(sum), CHECKSUM_PREFIX "%016" PRIx64, h);
	return generate(v, n, sum, path, src, src_len, spans, ret_buf, ret_len, err);
}

int ts_state_format_encode(struct ts_alloc *const *v, size_t n, const char *path, char **ret_buf,
			   size_t *ret_len, struct ts_error **err)
{
	return ts_state_format_encode_from(v, n, path, NULL, 0, NULL, 0, ret_buf, ret_len, err);
}

int ts_state_format_normalize(struct ts_alloc *a)
{
	if (a->cpus_str == NULL && (a->cpus_str = strdup("")) == NULL)
		return -ENOMEM;
	if (a->mems_str == NULL && (a->mems_str = strdup("")) == NULL)
		return -ENOMEM;
	if (a->devices == NULL && (a->devices = calloc(1, sizeof(char *))) == NULL)
		return -ENOMEM;
	if (a->pid <= 0) {
		a->pid = 0;
		a->pid_start_ticks = 0;
		free(a->cgroup_path);
		a->cgroup_path = NULL;
	}
	return 0;
}

/* Why the record at /allocations/<i> is refused, or NULL (with *ret set)
 * when it is valid.  -ENOMEM is reported through *oom. */
struct decoder {
	char *problem; /* first problem seen, owned */
	bool oom;
	/* salvage: a member that cannot be taken is skipped, not fatal */
	bool lenient;
};

static bool note(struct decoder *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record a problem (the first one wins). @return false, for `return note(...)`. */
static bool note(struct decoder *d, const char *fmt, ...)
{
	va_list ap;

	if (d->problem != NULL || d->oom)
		return false;
	va_start(ap, fmt);
	if (vasprintf(&d->problem, fmt, ap) < 0) {
		d->problem = NULL;
		d->oom = true;
	}
	va_end(ap);
	return false;
}

static bool take_string(struct decoder *d, size_t i, const char *key, const struct ts_json *val,
			char **dst)
{
	if (val->type != TS_JSON_STRING)
		return note(d, "'/allocations/%zu/%s': expected string, got %s", i, key,
			    ts_json_type_name(val->type));
	free(*dst);
	*dst = strdup(val->u.string);
	if (*dst == NULL)
		d->oom = true;
	return *dst != NULL;
}

/* A cpu or node list in the cpuset syntax ("" for none): pools parse it at
 * every create, so a bad one must make the record invalid here, not fail
 * every later create. */
static bool take_list(struct decoder *d, size_t i, const char *key, const struct ts_json *val,
		      char **dst)
{
	if (!take_string(d, i, key, val, dst))
		return false;
	/* the syntax ts_cpulist_parse() takes when the pools are computed */
	if (ts_cpulist_valid(*dst))
		return true;
	note(d, "'/allocations/%zu/%s': invalid %s list '%s'", i, key,
	     strcmp(key, "cpus") == 0 ? "cpu" : "node", *dst);
	free(*dst);
	*dst = NULL;
	return false;
}

static bool take_bool(struct decoder *d, size_t i, const char *key, const struct ts_json *val,
		      bool *dst)
{
	if (val->type != TS_JSON_BOOL)
		return note(d, "'/allocations/%zu/%s': expected boolean, got %s", i, key,
			    ts_json_type_name(val->type));
	*dst = val->u.boolean;
	return true;
}

static bool take_uint(struct decoder *d, size_t i, const char *key, const struct ts_json *val,
		      uint64_t *dst)
{
	if (ts_json_get_uint64(val, dst) < 0)
		return note(d, "'/allocations/%zu/%s': expected unsigned integer, got '%s'", i, key,
			    val->type == TS_JSON_NUMBER ? val->u.number
							: ts_json_type_name(val->type));
	return true;
}

static bool take_devices(struct decoder *d, size_t i, const struct ts_json *val, char ***dst)
{
	const struct ts_json *item;
	size_t k;

	if (val->type != TS_JSON_ARRAY)
		return note(d, "'/allocations/%zu/devices': expected array, got %s", i,
			    ts_json_type_name(val->type));
	ts_strv_freep(dst);
	*dst = calloc(val->u.array.len + 1, sizeof(char *));
	if (*dst == NULL) {
		d->oom = true;
		return false;
	}
	ts_json_array_foreach (val, k, item) {
		if (item->type != TS_JSON_STRING)
			return note(d, "'/allocations/%zu/devices/%zu': expected string, got %s", i,
				    k, ts_json_type_name(item->type));
		(*dst)[k] = strdup(item->u.string);
		if ((*dst)[k] == NULL) {
			d->oom = true;
			return false;
		}
	}
	return true;
}

static bool take_member(struct decoder *d, size_t i, const char *key, const struct ts_json *val,
			struct ts_alloc *a)
{
	uint64_t u = 0;

	if (strcmp(key, "container_id") == 0)
		return take_string(d, i, key, val, &a->container_id);
	if (strcmp(key, "runtime_root") == 0)
		return take_string(d, i, key, val, &a->runtime_root);
	if (strcmp(key, "runtime") == 0)
		return take_string(d, i, key, val, &a->runtime_path);
	if (strcmp(key, "bundle") == 0)
		return take_string(d, i, key, val, &a->bundle);
	if (strcmp(key, "class") == 0)
		return take_string(d, i, key, val, &a->class_name);
	if (strcmp(key, "cpus") == 0)
		return take_list(d, i, key, val, &a->cpus_str);
	if (strcmp(key, "mems") == 0)
		return take_list(d, i, key, val, &a->mems_str);
	if (strcmp(key, "cgroup_path") == 0)
		return take_string(d, i, key, val, &a->cgroup_path);
	if (strcmp(key, "devices") == 0)
		return take_devices(d, i, val, &a->devices);
	if (strcmp(key, "pinned") == 0)
		return take_bool(d, i, key, val, &a->pinned);
	if (strcmp(key, "numa_exclusive") == 0)
		return take_bool(d, i, key, val, &a->numa_exclusive);
	if (strcmp(key, "created_usec") == 0)
		return take_uint(d, i, key, val, &a->created_usec);
	if (strcmp(key, "pid_start_ticks") == 0)
		return take_uint(d, i, key, val, &a->pid_start_ticks);
	if (strcmp(key, "pid") == 0) {
		if (!take_uint(d, i, key, val, &u))
			return false;
		if (u == 0 || u > INT_MAX)
			return note(d, "'/allocations/%zu/pid': out of range '%s'", i,
				    val->u.number);
		a->pid = (pid_t)u;
		return true;
	}
	if (strcmp(key, "state") == 0) {
		if (val->type != TS_JSON_STRING)
			return note(d, "'/allocations/%zu/state': expected string, got %s", i,
				    ts_json_type_name(val->type));
		a->status = ts_alloc_status_from_string(val->u.string);
		if (a->status == TS_ALLOC_STATUS_INVALID)
			return note(d, "'/allocations/%zu/state': unknown state '%s'", i,
				    val->u.string);
		return true;
	}
	return note(d, "'/allocations/%zu/%s': unknown member", i, key);
}

/* Decode one record; NULL when invalid (the problem is noted) or on OOM. */
static struct ts_alloc *decode_one(struct decoder *d, size_t i, const struct ts_json *o)
{
	cleanup_alloc struct ts_alloc *a = NULL;
	const struct ts_json *val;
	const char *key;
	bool has_state = false, has_time = false;
	size_t k;

	if (o->type != TS_JSON_OBJECT) {
		note(d, "'/allocations/%zu': expected object, got %s", i,
		     ts_json_type_name(o->type));
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		d->oom = true;
		return NULL;
	}
	ts_json_object_foreach (o, k, key, val) {
		if (!take_member(d, i, key, val, a)) {
			if (!d->lenient || d->oom)
				return NULL;
			continue; /* salvage: the member is left out */
		}
		has_state |= strcmp(key, "state") == 0;
		has_time |= strcmp(key, "created_usec") == 0;
	}
	if (d->lenient) {
		/* what a live container's record needs; the rest has defaults */
		if (a->container_id == NULL || a->container_id[0] == '\0')
			return NULL;
		if (a->pid == 0) {
			a->pid_start_ticks = 0;
			free(a->cgroup_path);
			a->cgroup_path = NULL;
		}
		if (a->status == TS_ALLOC_STATUS_INVALID)
			a->status = TS_ALLOC_CREATED;
		return TAKE_PTR(a);
	}
	if (a->container_id == NULL || a->container_id[0] == '\0')
		note(d, "'/allocations/%zu/container_id': missing or empty", i);
	else if (!has_state)
		note(d, "'/allocations/%zu/state': missing", i);
	else if (!has_time)
		note(d, "'/allocations/%zu/created_usec': missing", i);
	else if (a->pid == 0 && (a->pid_start_ticks != 0 || a->cgroup_path != NULL))
		note(d, "'/allocations/%zu/pid': missing", i);
	else
		return TAKE_PTR(a);
	return NULL;
}

/* Drop every record whose container id an earlier record has, noting the
 * first; pos[] holds each record's index in the file.  @return the new
 * count. */
static size_t drop_duplicates(struct decoder *d, struct ts_alloc **v, const size_t *pos, size_t n)
{
	cleanup_free bool *dup = calloc(n + 1, sizeof(*dup));
	size_t kept = 0;

	if (dup == NULL || mark_duplicates(v, n, dup) < 0) {
		d->oom = true;
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		if (!dup[i]) {
			v[kept++] = v[i];
			continue;
		}
		note(d, "'/allocations/%zu/container_id': duplicate '%s'", pos[i],
		     v[i]->container_id);
		ts_alloc_free(v[i]);
	}
	return kept;
}

/* Decode every record of arr into v (room for all), the first of each
 * container id kept; pos[] gets their indexes.  @return the count. */
static size_t decode_records(struct decoder *d, const struct ts_json *arr, struct ts_alloc **v,
			     size_t *pos)
{
	const struct ts_json *item;
	size_t n = 0, i;

	ts_json_array_foreach (arr, i, item) {
		struct ts_alloc *a;

		if (d->oom)
			break;
		a = decode_one(d, i, item);
		if (a != NULL) {
			pos[n] = i;
			v[n++] = a;
		}
	}
	return d->oom ? n : drop_duplicates(d, v, pos, n);
}

/* Check the version of a parsed root; notes the problem.  @return whether
 * it is the version this code reads. */
static bool check_version(struct decoder *d, const struct ts_json *root)
{
	const struct ts_json *version = ts_json_get(root, "version");
	int64_t v = 0;

	if (version == NULL || ts_json_get_int64(version, &v) < 0)
		return note(d, "'/version': missing or not an integer");
	if (v != TS_STATE_FORMAT_VERSION)
		return note(d, "'/version': unsupported version '%s'", version->u.number);
	return true;
}

/* Whether stored is the checksum of records v: in the form this code
 * writes, or a file's of before 2026-12-06 (CHAINED_PREFIX), verified as
 * it was computed.  *computed is what the records give in stored's form.
 * Every record's hash is kept in its text_sum. */
static bool checksum_matches(const char *stored, struct ts_alloc *const *v, size_t n,
			     char computed[static sizeof(CHECKSUM_PREFIX) + 16])
{
	const size_t size = sizeof(CHECKSUM_PREFIX) + 16;
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		v[i]->text_sum = ts_state_record_hash(v[i]);
		sum += v[i]->text_sum;
	}
	if (stored != NULL && strncmp(stored, CHAINED_PREFIX, sizeof(CHAINED_PREFIX) - 1) == 0)
		snprintf(computed, size, CHAINED_PREFIX "%016" PRIx64,
			 ts_state_checksum_chained(v, n));
	else
		snprintf(computed, size, CHECKSUM_PREFIX "%016" PRIx64, sum);
	return stored != NULL && strcmp(stored, computed) == 0;
}

/* Compare the stored checksum with the records'; notes a mismatch. */
static void check_checksum(struct decoder *d, const struct ts_json *root, struct ts_alloc *const *v,
			   size_t n)
{
	const char *stored = ts_json_get_string(root, "checksum");
	char computed[sizeof(CHECKSUM_PREFIX) + 16];

	if (!checksum_matches(stored, v, n, computed))
		note(d, "checksum mismatch (stored '%s', computed '%s')",
		     stored ? stored : "(none)", computed);
}

/* ---- the fast path: a sound file decoded straight from yajl's tokens ------------------------ */

/* Every create and delete reads the whole file; building a ts_json tree of
 * hundreds of records and freeing it was most of a create's instructions.
 * decode_fast() takes a file only when it is sound in the plainest way
 * (each member once, no unknown member, every value valid, no duplicate
 * container, the checksum right); anything else stops it, and the tree
 * path below decodes the file and says what is wrong.  What this returns
 * for a file is what the tree path returns for it. */
enum fast_where { FAST_TOP, FAST_ROOT, FAST_ALLOCS, FAST_RECORD, FAST_DEVICES, FAST_END };

/* in the order encode_one() and gen_record() write them */
enum fast_member {
	FM_CONTAINER_ID,
	FM_RUNTIME_ROOT,
	FM_RUNTIME,
	FM_BUNDLE,
	FM_CLASS,
	FM_CPUS,
	FM_MEMS,
	FM_DEVICES,
	FM_PINNED,
	FM_NUMA_EXCLUSIVE,
	FM_STATE,
	FM_CREATED_USEC,
	FM_PID,
	FM_PID_START_TICKS,
	FM_CGROUP_PATH,
	_FM_MAX,
};

static const char *const fast_member_names[_FM_MAX] = {
	[FM_CONTAINER_ID] = "container_id",
	[FM_RUNTIME_ROOT] = "runtime_root",
	[FM_RUNTIME] = "runtime",
	[FM_BUNDLE] = "bundle",
	[FM_CLASS] = "class",
	[FM_CPUS] = "cpus",
	[FM_MEMS] = "mems",
	[FM_DEVICES] = "devices",
	[FM_PINNED] = "pinned",
	[FM_NUMA_EXCLUSIVE] = "numa_exclusive",
	[FM_STATE] = "state",
	[FM_CREATED_USEC] = "created_usec",
	[FM_PID] = "pid",
	[FM_PID_START_TICKS] = "pid_start_ticks",
	[FM_CGROUP_PATH] = "cgroup_path",
};

enum fast_root_key { FR_VERSION, FR_CHECKSUM, FR_ALLOCATIONS, _FR_MAX };

struct fast {
	enum fast_where where;
	int key;	   /* the root key or record member whose value comes next */
	unsigned int seen; /* root keys or record members seen so far (bits) */
	unsigned int root_seen;
	char checksum[sizeof(CHECKSUM_PREFIX) + 16];
	struct ts_alloc **v;
	size_t n, cap;
	struct ts_alloc *cur; /* the record being read */
	size_t ndev, capdev;
	bool oom;
	/* where each record's text is (ts_alloc.text_at), for a file this
	 * code wrote: compact, so that a copy of it is what encode writes */
	const char *buf;
	bool spans;
	size_t offset; /* of the '{' or '}' just read */
	size_t rec_at; /* of the current record's '{' */
};

static bool fast_oom(struct fast *f)
{
	f->oom = true;
	return false;
}

/* A JSON integer in plain decimal, as the encoder writes it; anything
 * else (a sign, an exponent, too many digits) stops the fast path. */
static bool fast_uint(const char *raw, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len == 0 || len > 20 || (raw[0] == '0' && len > 1))
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned int d = (unsigned char)raw[i] - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*ret = v;
	return true;
}

static bool fast_start_map(void *c)
{
	struct fast *f = c;

	if (f->where == FAST_TOP) {
		f->where = FAST_ROOT;
		return true;
	}
	if (f->where != FAST_ALLOCS)
		return false;
	f->cur = calloc(1, sizeof(*f->cur));
	if (f->cur == NULL)
		return fast_oom(f);
	f->rec_at = f->offset;
	f->seen = 0;
	f->where = FAST_RECORD;
	return true;
}

static bool fast_key(void *c, const char *s, size_t len)
{
	static const char *const root_keys[_FR_MAX] = {"version", "checksum", "allocations"};
	struct fast *f = c;
	const char *const *names = f->where == FAST_ROOT ? root_keys : fast_member_names;
	unsigned int *seen = f->where == FAST_ROOT ? &f->root_seen : &f->seen;
	int count = f->where == FAST_ROOT ? _FR_MAX : _FM_MAX;

	int next = f->key + 1, k;

	if (f->where != FAST_ROOT && f->where != FAST_RECORD)
		return false;
	if (f->where == FAST_RECORD && f->seen == 0)
		next = 0;
	/* the member after the last one first: the encoder writes them in
	 * the order of the table (a search from the top for each of 7,000
	 * members was 1.3 M instructions at 500 records) */
	if (next >= 0 && next < count && strlen(names[next]) == len &&
	    memcmp(names[next], s, len) == 0) {
		k = next;
	} else {
		for (k = 0; k < count; k++)
			if (strlen(names[k]) == len && memcmp(names[k], s, len) == 0)
				break;
		if (k == count)
			return false;
	}
	if (*seen & (1u << k))
		return false; /* a member twice: the tree path says which wins */
	*seen |= 1u << k;
	f->key = k;
	return true;
}

static bool fast_string(void *c, const char *s, size_t len)
{
	struct fast *f = c;
	struct ts_alloc *a = f->cur;
	char **dst = NULL;

	if (f->where == FAST_ROOT) {
		if (f->key != FR_CHECKSUM || len >= sizeof(f->checksum))
			return false;
		memcpy(f->checksum, s, len);
		f->checksum[len] = '\0';
		return true;
	}
	if (f->where == FAST_DEVICES) {
		if (f->ndev + 1 >= f->capdev) {
			size_t cap = f->capdev ? f->capdev * 2 : 4;
			char **grown = reallocarray(a->devices, cap, sizeof(char *));

			if (grown == NULL)
				return fast_oom(f);
			a->devices = grown;
			f->capdev = cap;
		}
		a->devices[f->ndev] = strndup(s, len);
		if (a->devices[f->ndev] == NULL)
			return fast_oom(f);
		a->devices[++f->ndev] = NULL;
		return true;
	}
	if (f->where != FAST_RECORD)
		return false;
	switch (f->key) {
	case FM_CONTAINER_ID:
		dst = &a->container_id;
		break;
	case FM_RUNTIME_ROOT:
		dst = &a->runtime_root;
		break;
	case FM_RUNTIME:
		dst = &a->runtime_path;
		break;
	case FM_BUNDLE:
		dst = &a->bundle;
		break;
	case FM_CLASS:
		dst = &a->class_name;
		break;
	case FM_CPUS:
		dst = &a->cpus_str;
		break;
	case FM_MEMS:
		dst = &a->mems_str;
		break;
	case FM_CGROUP_PATH:
		dst = &a->cgroup_path;
		break;
	case FM_STATE: {
		char name[16];

		if (len >= sizeof(name))
			return false;
		memcpy(name, s, len);
		name[len] = '\0';
		a->status = ts_alloc_status_from_string(name);
		return a->status != TS_ALLOC_STATUS_INVALID;
	}
	default:
		return false;
	}
	*dst = strndup(s, len);
	if (*dst == NULL)
		return fast_oom(f);
	/* the lists must be what the pools can parse (take_list()) */
	return (f->key != FM_CPUS && f->key != FM_MEMS) || ts_cpulist_valid(*dst);
}

static bool fast_number(void *c, const char *raw, size_t len)
{
	struct fast *f = c;
	struct ts_alloc *a = f->cur;
	uint64_t u;

	if (f->where == FAST_ROOT)
		return f->key == FR_VERSION && len == 1 && raw[0] == '0' + TS_STATE_FORMAT_VERSION;
	if (f->where != FAST_RECORD || !fast_uint(raw, len, &u))
		return false;
	switch (f->key) {
	case FM_CREATED_USEC:
		a->created_usec = u;
		return true;
	case FM_PID_START_TICKS:
		a->pid_start_ticks = u;
		return true;
	case FM_PID:
		if (u == 0 || u > INT_MAX)
			return false;
		a->pid = (pid_t)u;
		return true;
	default:
		return false;
	}
}

static bool fast_boolean(void *c, bool v)
{
	struct fast *f = c;

	if (f->where != FAST_RECORD)
		return false;
	if (f->key == FM_PINNED)
		f->cur->pinned = v;
	else if (f->key == FM_NUMA_EXCLUSIVE)
		f->cur->numa_exclusive = v;
	else
		return false;
	return true;
}

static bool fast_start_array(void *c)
{
	struct fast *f = c;

	if (f->where == FAST_ROOT && f->key == FR_ALLOCATIONS) {
		f->where = FAST_ALLOCS;
		return true;
	}
	if (f->where != FAST_RECORD || f->key != FM_DEVICES)
		return false;
	f->cur->devices = calloc(4, sizeof(char *));
	if (f->cur->devices == NULL)
		return fast_oom(f);
	f->ndev = 0;
	f->capdev = 4;
	f->where = FAST_DEVICES;
	return true;
}

static bool fast_end_array(void *c)
{
	struct fast *f = c;

	if (f->where == FAST_DEVICES) {
		f->where = FAST_RECORD;
		return true;
	}
	if (f->where != FAST_ALLOCS)
		return false;
	f->where = FAST_ROOT;
	f->key = -1;
	return true;
}

static bool fast_end_map(void *c)
{
	struct fast *f = c;
	struct ts_alloc *a = f->cur;
	const unsigned int with_pid = 1u << FM_PID_START_TICKS | 1u << FM_CGROUP_PATH;

	if (f->where == FAST_ROOT) {
		f->where = FAST_END;
		return true;
	}
	if (f->where != FAST_RECORD)
		return false;
	/* what decode_one() requires of a record */
	if (a->container_id == NULL || a->container_id[0] == '\0' || !(f->seen & 1u << FM_STATE) ||
	    !(f->seen & 1u << FM_CREATED_USEC) ||
	    (!(f->seen & 1u << FM_PID) && (f->seen & with_pid) != 0))
		return false;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct ts_alloc **grown = reallocarray(f->v, cap + 1, sizeof(*grown));

		if (grown == NULL)
			return fast_oom(f);
		f->v = grown;
		f->cap = cap;
	}
	if (f->spans && f->buf[f->rec_at] == '{' && f->buf[f->offset] == '}') {
		a->text_at = f->rec_at;
		a->text_len = f->offset + 1 - f->rec_at;
	}
	f->v[f->n++] = TAKE_PTR(f->cur);
	f->where = FAST_ALLOCS;
	return true;
}

/* No member of the format is null. */
static bool fast_null(void *c)
{
	(void)c;
	return false;
}

static const struct ts_json_events fast_events = {
	.null = fast_null,
	.boolean = fast_boolean,
	.number = fast_number,
	.string = fast_string,
	.start_map = fast_start_map,
	.map_key = fast_key,
	.end_map = fast_end_map,
	.start_array = fast_start_array,
	.end_array = fast_end_array,
};

/* @return 1 with *ret_v, *ret_n for a plainly sound file; 0 when the tree
 * path must decode it; -ENOMEM. */
static int decode_fast(const char *buf, size_t len, struct ts_alloc ***ret_v, size_t *ret_n)
{
	static const char compact[] = "{\"version\":1,\"checksum\":\"";
	struct fast f = {.where = FAST_TOP, .key = -1, .buf = buf};
	struct ts_json_events events = fast_events;
	const unsigned int all_root = (1u << _FR_MAX) - 1;
	char computed[sizeof(CHECKSUM_PREFIX) + 16];
	cleanup_free bool *dup = NULL;
	int r;

	/* an indented file of before 2026-12-05 is written compact again */
	f.spans = len > sizeof(compact) && memcmp(buf, compact, sizeof(compact) - 1) == 0;
	events.offset = &f.offset;
	r = ts_json_parse_events(buf, len, &events, &f);
	ts_alloc_freep(&f.cur);
	if (r == 0 && (f.where != FAST_END || f.root_seen != all_root))
		r = -EINVAL;
	if (r == 0 && f.n > 0) {
		dup = calloc(f.n, sizeof(*dup));
		if (dup == NULL || mark_duplicates(f.v, f.n, dup) < 0)
			f.oom = true;
		for (size_t i = 0; !f.oom && i < f.n && r == 0; i++)
			if (dup[i])
				r = -EINVAL;
	}
	if (r == 0 && !f.oom && !checksum_matches(f.checksum, f.v, f.n, computed))
		r = -EINVAL;
	if (r < 0 || f.oom) {
		ts_alloc_array_free(f.v, f.n);
		return f.oom || r == -ENOMEM ? -ENOMEM : 0;
	}
	if (f.v == NULL && (f.v = calloc(1, sizeof(*f.v))) == NULL)
		return -ENOMEM;
	*ret_v = f.v;
	*ret_n = f.n;
	return 1;
}

int ts_state_format_decode(const char *buf, size_t len, const char *path, struct ts_alloc ***ret_v,
			   size_t *ret_n, char **ret_problem, struct ts_error **err)
{
	int r = decode_fast(buf, len, ret_v, ret_n);

	if (r == -ENOMEM)
		return ts_error_set(err, ENOMEM, "%s: cannot load", path);
	if (r == 1) {
		*ret_problem = NULL;
		return 0;
	}
	return ts_state_format_decode_tree(buf, len, path, ret_v, ret_n, ret_problem, err);
}

int ts_state_format_decode_tree(const char *buf, size_t len, const char *path,
				struct ts_alloc ***ret_v, size_t *ret_n, char **ret_problem,
				struct ts_error **err)
{
	cleanup_error struct ts_error *parse_err = NULL;
	cleanup_json struct ts_json *root = NULL;
	struct decoder d = {0};
	struct ts_alloc **v = NULL;
	const struct ts_json *arr;
	size_t n = 0;
	int r;

	r = ts_json_parse(buf, len, path, &root, &parse_err);
	if (r == -ENOMEM)
		return ts_error_set(err, ENOMEM, "%s: cannot load", path);
	if (r < 0) {
		/* the message starts with "<path>: "; the caller names the path */
		const char *why = parse_err->msg;
		size_t plen = strlen(path);

		if (strncmp(why, path, plen) == 0 && strncmp(why + plen, ": ", 2) == 0)
			why += plen + 2;
		note(&d, "does not parse (%s)", why);
	} else if (root->type != TS_JSON_OBJECT) {
		note(&d, "'/': expected object, got %s", ts_json_type_name(root->type));
	} else if ((arr = ts_json_get_array(root, "allocations")) == NULL) {
		note(&d, "'/allocations': missing or not an array");
	} else {
		cleanup_free size_t *pos = calloc(arr->u.array.len + 1, sizeof(*pos));
		bool version_1 = check_version(&d, root);

		v = calloc(arr->u.array.len + 1, sizeof(*v));
		if (v == NULL || pos == NULL)
			d.oom = true;
		n = decode_records(&d, arr, v, pos);
		/* only a file whose records all decode has a checksum to compare */
		if (!d.oom)
			check_checksum(&d, root, v, n);
		/* untrusted but version 1: take from each record what can be taken
		 * (the caller keeps only live containers' records) */
		if (!d.oom && d.problem != NULL && version_1) {
			struct decoder lenient = {.lenient = true};

			for (size_t k = 0; k < n; k++)
				ts_alloc_free(v[k]);
			n = decode_records(&lenient, arr, v, pos);
			d.oom = lenient.oom;
			free(lenient.problem);
		}
	}
	if (d.oom) {
		ts_alloc_array_free(v, n);
		free(d.problem);
		return ts_error_set(err, ENOMEM, "%s: cannot load", path);
	}
	*ret_v = v;
	*ret_n = n;
	*ret_problem = d.problem;
	return 0;
}
