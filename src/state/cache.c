/*
 * cache.c - allocations.cache: the records of allocations.json as this
 * host's toposhim decoded them, so that the next process reads them
 * without parsing the JSON again; see internal.h.
 *
 * Layout (native byte order and sizes: the file never leaves the host; a
 * build that lays it out otherwise fails the header check and parses):
 *   header   "toposhim-alloc-cache 2\n" (24 bytes with its NUL), then u64:
 *            TS_CACHE_ORDER, the JSON's length, ts_state_hash64() of the
 *            JSON, the number of records, the body's length and
 *            ts_state_hash64() of the body
 *   body     per record: u64 created_usec, pid_start_ticks, text_at,
 *            text_len, text_sum; i32 pid; u8 status, pinned, numa_exclusive, 0;
 *            eight strings (container_id, runtime_root, runtime_path,
 *            bundle, class_name, cpus_str, mems_str, cgroup_path), each
 *            u32 length (TS_CACHE_NULL for none) and its bytes; u32 count
 *            of devices, then each as a string.
 * Nothing in it is trusted unless the header names the exact JSON text
 * read (its length and hash) and the body hashes to what the header says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "state/internal.h"
#include "state/state.h"
#include "util/cleanup.h"

/* 2: with text_sum (2026-12-06) */
#define TS_CACHE_MAGIC "toposhim-alloc-cache 2\n"
#define TS_CACHE_ORDER 0x0102030405060708ull
#define TS_CACHE_NULL 0xffffffffu
#define TS_CACHE_STRINGS 8

struct cache_header {
	char magic[sizeof(TS_CACHE_MAGIC)];
	uint64_t order, json_len, json_hash, n, body_len, body_hash;
};

uint64_t ts_state_hash64(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	size_t i = 0;

	/* 8 bytes a step, each word mixed in by a multiply and a shift
	 * (FNV-1a's byte steps were 1 M instructions for 126 KB) */
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, p + i, len - i);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	h ^= h >> 29;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 32);
}

/* ---- writing ------------------------------------------------------------------------------ */

struct out {
	char *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const void *p, size_t len)
{
	if (o->oom)
		return;
	if (o->cap - o->len < len) {
		size_t cap = o->cap ? o->cap : 4096;
		char *grown;

		while (cap - o->len < len)
			cap *= 2;
		grown = realloc(o->buf, cap);
		if (grown == NULL) {
			o->oom = true;
			return;
		}
		o->buf = grown;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

static void put_u64(struct out *o, uint64_t v)
{
	put(o, &v, sizeof(v));
}

static void put_u32(struct out *o, uint32_t v)
{
	put(o, &v, sizeof(v));
}

static void put_string(struct out *o, const char *s)
{
	size_t len = s != NULL ? strlen(s) : 0;

	if (s == NULL || len >= TS_CACHE_NULL) {
		put_u32(o, TS_CACHE_NULL);
		return;
	}
	put_u32(o, (uint32_t)len);
	put(o, s, len);
}

int ts_state_cache_encode(struct ts_alloc *const *v, size_t n, const char *json, size_t json_len,
			  char **ret_buf, size_t *ret_len)
{
	/* the image is smaller than the JSON text: one allocation */
	struct out o = {.cap = sizeof(struct cache_header) + json_len + 4096};
	struct cache_header h = {.magic = TS_CACHE_MAGIC,
				 .order = TS_CACHE_ORDER,
				 .json_len = json_len,
				 .json_hash = ts_state_hash64(json, json_len),
				 .n = n};

	o.buf = malloc(o.cap);
	if (o.buf == NULL)
		return -ENOMEM;
	put(&o, &h, sizeof(h)); /* completed below */
	for (size_t i = 0; i < n; i++) {
		const struct ts_alloc *a = v[i];
		/* as a parse of the JSON gives it (ts_state_format_normalize()) */
		bool with_pid = a->pid > 0;
		const char *strings[TS_CACHE_STRINGS] = {
			a->container_id,
			a->runtime_root,
			a->runtime_path,
			a->bundle,
			a->class_name,
			a->cpus_str ? a->cpus_str : "",
			a->mems_str ? a->mems_str : "",
			with_pid ? a->cgroup_path : NULL,
		};
		unsigned char flags[4] = {(unsigned char)a->status, a->pinned, a->numa_exclusive,
					  0};
		int32_t pid = with_pid ? (int32_t)a->pid : 0;
		uint32_t ndev = 0;

		put_u64(&o, a->created_usec);
		put_u64(&o, with_pid ? a->pid_start_ticks : 0);
		put_u64(&o, a->text_at);
		put_u64(&o, a->text_len);
		put_u64(&o, a->text_sum);
		put(&o, &pid, sizeof(pid));
		put(&o, flags, sizeof(flags));
		for (size_t k = 0; k < TS_CACHE_STRINGS; k++)
			put_string(&o, strings[k]);
		while (a->devices != NULL && a->devices[ndev] != NULL)
			ndev++;
		put_u32(&o, ndev);
		for (uint32_t k = 0; k < ndev; k++)
			put_string(&o, a->devices[k]);
	}
	if (o.oom) {
		free(o.buf);
		return -ENOMEM;
	}
	h.body_len = o.len - sizeof(h);
	h.body_hash = ts_state_hash64(o.buf + sizeof(h), h.body_len);
	memcpy(o.buf, &h, sizeof(h));
	*ret_buf = o.buf;
	*ret_len = o.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------------------------ */

struct in {
	const char *p, *end;
	bool bad;
};

static void get(struct in *c, void *dst, size_t len)
{
	if (c->bad || (size_t)(c->end - c->p) < len) {
		c->bad = true;
		memset(dst, 0, len);
		return;
	}
	memcpy(dst, c->p, len);
	c->p += len;
}

/* The next string, copied; NULL for none (or on a problem: c->bad). */
static char *get_string(struct in *c, bool *oom)
{
	uint32_t len;
	char *s;

	get(c, &len, sizeof(len));
	if (c->bad || len == TS_CACHE_NULL)
		return NULL;
	if ((size_t)(c->end - c->p) < len || memchr(c->p, '\0', len) != NULL) {
		c->bad = true;
		return NULL;
	}
	s = malloc((size_t)len + 1);
	if (s == NULL) {
		*oom = true;
		c->bad = true;
		return NULL;
	}
	memcpy(s, c->p, len);
	s[len] = '\0';
	c->p += len;
	return s;
}

static struct ts_alloc *get_record(struct in *c, bool *oom)
{
	cleanup_alloc struct ts_alloc *a = calloc(1, sizeof(*a));
	char **strings[TS_CACHE_STRINGS];
	unsigned char flags[4];
	int32_t pid;
	uint32_t ndev;

	if (a == NULL) {
		*oom = true;
		return NULL;
	}
	strings[0] = &a->container_id;
	strings[1] = &a->runtime_root;
	strings[2] = &a->runtime_path;
	strings[3] = &a->bundle;
	strings[4] = &a->class_name;
	strings[5] = &a->cpus_str;
	strings[6] = &a->mems_str;
	strings[7] = &a->cgroup_path;
	get(c, &a->created_usec, sizeof(a->created_usec));
	get(c, &a->pid_start_ticks, sizeof(a->pid_start_ticks));
	get(c, &a->text_at, sizeof(a->text_at));
	get(c, &a->text_len, sizeof(a->text_len));
	get(c, &a->text_sum, sizeof(a->text_sum));
	get(c, &pid, sizeof(pid));
	get(c, flags, sizeof(flags));
	for (size_t k = 0; k < TS_CACHE_STRINGS && !c->bad; k++)
		*strings[k] = get_string(c, oom);
	get(c, &ndev, sizeof(ndev));
	if (c->bad || ndev > (size_t)(c->end - c->p) / sizeof(uint32_t) || pid < 0 ||
	    flags[0] >= _TS_ALLOC_STATUS_MAX || flags[1] > 1 || flags[2] > 1 ||
	    a->container_id == NULL || a->cpus_str == NULL || a->mems_str == NULL) {
		c->bad = true;
		return NULL;
	}
	a->pid = pid;
	a->status = (enum ts_alloc_status)flags[0];
	a->pinned = flags[1];
	a->numa_exclusive = flags[2];
	a->devices = calloc((size_t)ndev + 1, sizeof(char *));
	if (a->devices == NULL) {
		*oom = true;
		return NULL;
	}
	for (uint32_t k = 0; k < ndev; k++) {
		a->devices[k] = get_string(c, oom);
		if (a->devices[k] == NULL) {
			c->bad = true;
			return NULL;
		}
	}
	return TAKE_PTR(a);
}

int ts_state_cache_decode(const char *cache, size_t cache_len, const char *json, size_t json_len,
			  struct ts_alloc ***ret_v, size_t *ret_n)
{
	struct cache_header h;
	struct in c = {.p = cache + sizeof(h), .end = cache + cache_len};
	struct ts_alloc **v;
	bool oom = false;
	size_t n = 0;

	if (cache_len < sizeof(h))
		return 0;
	memcpy(&h, cache, sizeof(h));
	if (memcmp(h.magic, TS_CACHE_MAGIC, sizeof(h.magic)) != 0 || h.order != TS_CACHE_ORDER ||
	    h.json_len != json_len || h.body_len != cache_len - sizeof(h) ||
	    h.n > h.body_len / 76 || /* a record is at least 76 bytes */
	    h.json_hash != ts_state_hash64(json, json_len) ||
	    h.body_hash != ts_state_hash64(cache + sizeof(h), h.body_len))
		return 0;
	v = calloc((size_t)h.n + 1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	for (; n < h.n && !c.bad; n++) {
		v[n] = get_record(&c, &oom);
		if (v[n] == NULL)
			break;
	}
	if (c.bad || n != h.n || c.p != c.end) {
		ts_alloc_array_free(v, n);
		return oom ? -ENOMEM : 0;
	}
	*ret_v = v;
	*ret_n = n;
	return 1;
}
