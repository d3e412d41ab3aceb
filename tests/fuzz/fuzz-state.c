/*
 * fuzz-state.c - toposhim's state file, allocations.json (src/state/format.c and the
 * salvage of src/state/state.c).
 *
 * First byte, bits 0 and 2 as 0 and 1: the rest is the body of an allocations.cache (its
 * first byte the number of records, modulo 8) under a header that names it, which the
 * cache's reader must refuse or take without crashing, and what it takes must read back.
 * First byte, bit 0 clear: the rest is decoded with ts_state_format_decode(), which must
 * give what its tree path (ts_state_format_decode_tree()) gives: the same problem and
 * records that encode to the same bytes; the records it keeps must encode, the encoded text must
 * decode to as many records with no problem, and encoding that again must give the same bytes. Bit
 * 0 set: the rest (FUZZ_SEP, then allocations.json.prev) is put into a state dir and read with
 * ts_state_open() + ts_state_load(), the create path's reader, with an empty proc root (no
 * container is alive); then committed and loaded again, which must find the file sound.
 * Bits 0 and 1 set: the files of plain containers (src/state/plain.c): the rest (FUZZ_SEP,
 * then the journal) is the summary plain.json and the journal plain-containers; a summary
 * read must have every member, every journal entry a runc id and an absolute root, a take
 * and a compaction must keep only entries that read back, and the delete's question on the
 * summary's text as allocations.json must answer.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "state/internal.h"
#include "state/plain.h"
#include "state/state.h"
#include "util/cleanup.h"

/* The fast path of the decoder answers exactly as the tree path. */
static void same_as_tree(const char *buf, size_t len, struct ts_alloc *const *v, size_t n,
			 const char *problem)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *tproblem = NULL, *text = NULL, *ttext = NULL;
	struct ts_alloc **tv = NULL;
	size_t tn = 0, tlen = 0, ttlen = 0;
	int r, tr;

	fuzz_check(ts_state_format_decode_tree(buf, len, "allocations.json", &tv, &tn, &tproblem,
					       &err) == 0,
		   "tree decode failed");
	fuzz_check(tn == n, "fast and tree decode kept different numbers of records");
	fuzz_check((problem == NULL) == (tproblem == NULL) &&
			   (problem == NULL || strcmp(problem, tproblem) == 0),
		   "fast and tree decode found different problems");
	r = ts_state_format_encode(v, n, "x", &text, &tlen, &err);
	err = ts_error_free(err);
	tr = ts_state_format_encode(tv, tn, "x", &ttext, &ttlen, &err);
	fuzz_check(r == tr && (r < 0 || (tlen == ttlen && memcmp(text, ttext, tlen) == 0)),
		   "fast and tree decode gave different records");
	ts_alloc_array_free(tv, tn);
}

/* A commit copies the text of records read from a compact file
 * (ts_state_format_encode_from()): what it writes must decode to the
 * records the generated text holds, soundly. */
static void copied_same(const char *buf, size_t len, struct ts_alloc *const *v, size_t n,
			const char *text, size_t tlen)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *copied = NULL, *problem = NULL, *again = NULL;
	cleanup_free struct ts_state_span *spans = calloc(n + 1, sizeof(*spans));
	struct ts_alloc **cv = NULL;
	size_t clen = 0, cn = 0, alen = 0;

	fuzz_check(spans != NULL, "out of memory");
	fuzz_check(ts_state_format_encode_from(v, n, "x", buf, len, spans, 0, &copied, &clen,
					       &err) == 0,
		   "encode with copies failed where encode did not");
	for (size_t i = 0; i < n; i++) {
		fuzz_check(spans[i].at + spans[i].len <= clen && copied[spans[i].at] == '{' &&
				   copied[spans[i].at + spans[i].len - 1] == '}',
			   "encode with copies: a span is not the record's object");
		/* a copied record adds the hash the decode kept */
		fuzz_check(spans[i].sum == ts_state_record_hash(v[i]),
			   "encode with copies: a record's hash is not its own");
	}
	fuzz_check(ts_state_format_decode(copied, clen, "copied", &cv, &cn, &problem, &err) == 0,
		   "decode of the copied text failed");
	fuzz_check(problem == NULL && cn == n, "the copied text is not sound");
	fuzz_check(ts_state_format_encode(cv, cn, "x", &again, &alen, &err) == 0 && alen == tlen &&
			   memcmp(again, text, tlen) == 0,
		   "the copied text holds other records");
	ts_alloc_array_free(cv, cn);
}

/* allocations.cache of the records decoded from buf reads back to records
 * that generate the same text. */
static void cached_same(const char *buf, size_t len, struct ts_alloc *const *v, size_t n,
			const char *text, size_t tlen)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *cache = NULL, *again = NULL;
	struct ts_alloc **cv = NULL;
	size_t clen = 0, cn = 0, alen = 0;

	fuzz_check(ts_state_cache_encode(v, n, buf, len, &cache, &clen) == 0,
		   "cache: encode failed");
	fuzz_check(ts_state_cache_decode(cache, clen, buf, len, &cv, &cn) == 1 && cn == n,
		   "cache: its own image is not taken");
	for (size_t i = 0; i < n; i++)
		fuzz_check(cv[i]->text_at == v[i]->text_at && cv[i]->text_len == v[i]->text_len &&
				   cv[i]->text_sum == v[i]->text_sum,
			   "cache: a record's text or hash changed");
	fuzz_check(ts_state_format_encode(cv, cn, "x", &again, &alen, &err) == 0 && alen == tlen &&
			   memcmp(again, text, tlen) == 0,
		   "cache: the cached records are not the decoded ones");
	ts_alloc_array_free(cv, cn);
	if (len > 0) {
		/* the image of another text is not taken */
		fuzz_check(ts_state_cache_decode(cache, clen, buf, len - 1, &cv, &cn) == 0,
			   "cache: taken for another text");
	}
}

/* Bytes as the body of allocations.cache, under a header that names the
 * text "{}" and the body's own hash: the record decoder must refuse or
 * take them, never crash, and what it takes must write and read back. */
static void cache_body(const uint8_t *data, size_t size)
{
	static const char json[] = "{}";
	cleanup_free char *cache = NULL, *again = NULL;
	struct ts_alloc **v = NULL, **v2 = NULL;
	size_t n = 0, n2 = 0, alen = 0, head;
	uint64_t count = size > 0 ? data[0] % 8 : 0, len, hash;

	/* a header as ts_state_cache_encode() writes it, for no record */
	fuzz_check(ts_state_cache_encode(NULL, 0, json, 2, &cache, &head) == 0, "cache: encode");
	cache = realloc(cache, head + size + 1);
	fuzz_check(cache != NULL, "out of memory");
	if (size > 0)
		memcpy(cache + head, data + 1, size - 1);
	len = size > 0 ? size - 1 : 0;
	hash = ts_state_hash64(cache + head, len);
	/* the header's last three u64: the count, the body's length and hash */
	memcpy(cache + head - 24, &count, 8);
	memcpy(cache + head - 16, &len, 8);
	memcpy(cache + head - 8, &hash, 8);
	if (ts_state_cache_decode(cache, head + len, json, 2, &v, &n) != 1)
		return;
	fuzz_check(n == count, "cache: taken with another number of records");
	for (size_t i = 0; i < n; i++)
		fuzz_check(v[i]->container_id != NULL && v[i]->cpus_str != NULL &&
				   v[i]->mems_str != NULL && v[i]->devices != NULL,
			   "cache: a record without a member every record has");
	fuzz_check(ts_state_cache_encode(v, n, json, 2, &again, &alen) == 0 &&
			   ts_state_cache_decode(again, alen, json, 2, &v2, &n2) == 1 && n2 == n,
		   "cache: what it took does not read back");
	ts_alloc_array_free(v, n);
	ts_alloc_array_free(v2, n2);
}

static void roundtrip(const char *buf, size_t len)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *problem = NULL, *text = NULL, *text2 = NULL, *problem2 = NULL;
	struct ts_alloc **v = NULL, **v2 = NULL;
	size_t n = 0, n2 = 0, tlen = 0, tlen2 = 0;

	fuzz_check(ts_state_format_decode(buf, len, "allocations.json", &v, &n, &problem, &err) ==
			   0,
		   "decode failed");
	same_as_tree(buf, len, v, n, problem);
	if (ts_state_format_encode(v, n, "allocations.json", &text, &tlen, &err) < 0) {
		fuzz_check(err != NULL && err->msg != NULL, "encode: failure without a message");
		goto out;
	}
	fuzz_check(ts_state_format_decode(text, tlen, "again", &v2, &n2, &problem2, &err) == 0,
		   "decode of our own text failed");
	fuzz_check(problem2 == NULL, "our own text is not sound");
	fuzz_check(n2 == n, "round trip changed the number of records");
	fuzz_check(ts_state_format_encode(v2, n2, "again", &text2, &tlen2, &err) == 0,
		   "encode of the decoded records failed");
	fuzz_check(tlen2 == tlen && memcmp(text, text2, tlen) == 0, "encoding is not stable");
	copied_same(buf, len, v, n, text, tlen);
	if (problem == NULL)
		cached_same(buf, len, v, n, text, tlen);
out:
	ts_alloc_array_free(v, n);
	ts_alloc_array_free(v2, n2);
}

static void load(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *warning = NULL, *warning2 = NULL;
	struct ts_state_options opts = {0};
	struct ts_state *s = NULL;
	char *parts[2];
	char dir[4096];
	size_t n;

	fuzz_split(data, size, parts, 2);
	snprintf(dir, sizeof(dir), "%s", fuzz_path("state"));
	fuzz_rmtree(dir);
	fuzz_mkdir(fuzz_path("proc"));
	opts.state_dir = dir;
	opts.proc_root = fuzz_path("proc");
	fuzz_check(ts_state_open(&opts, &s, &err) == 0, "state: open failed");
	fuzz_write(fuzz_path("state/allocations.json"), parts[0], strlen(parts[0]));
	if (parts[1][0] != '\0')
		fuzz_write(fuzz_path("state/allocations.json.prev"), parts[1], strlen(parts[1]));
	fuzz_check(ts_state_load(s, &warning, &err) == 0, "state: load failed");
	n = ts_state_count(s);
	if (ts_state_commit(s, &err) == 0) {
		fuzz_check(ts_state_load(s, &warning2, &err) == 0, "state: second load failed");
		fuzz_check(warning2 == NULL, "state: what we committed is not sound");
		fuzz_check(ts_state_count(s) == n, "state: commit changed the number of records");
	} else {
		fuzz_check(err != NULL && err->msg != NULL,
			   "state: commit failed without a message");
	}
	ts_state_close(s);
	fuzz_parts_free(parts, 2);
}

static void check_entries(const struct ts_plain_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fuzz_check(v[i].runtime_root != NULL && v[i].runtime_root[0] == '/' &&
				   ts_plain_container_id_valid(v[i].container_id) &&
				   v[i].bundle != NULL && v[i].class_name != NULL &&
				   v[i].cpus != NULL && v[i].mems != NULL && v[i].pid > 0,
			   "plain: an entry read that is not sound");
}

static void plain_files(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_summary sum = {0};
	struct ts_plain_entry *v = NULL;
	char *parts[2];
	char dir[4096];
	size_t n = 0, n2 = 0, kept = 0, dropped = 0;
	int dfd, fd = -1;

	fuzz_split(data, size, parts, 2);
	snprintf(dir, sizeof(dir), "%s", fuzz_path("state"));
	fuzz_rmtree(dir);
	fuzz_mkdir(dir);
	fuzz_mkdir(fuzz_path("proc"));
	fuzz_write(fuzz_path("state/" TS_PLAIN_SUMMARY_FILE), parts[0], strlen(parts[0]));
	fuzz_write(fuzz_path("state/" TS_PLAIN_JOURNAL_FILE), parts[1], strlen(parts[1]));
	fuzz_write(fuzz_path("state/allocations.json"), parts[0], strlen(parts[0]));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fuzz_check(dfd >= 0, "plain: cannot open the state dir");
	if (ts_plain_summary_read(dfd, &sum, &fd) == 1) {
		fuzz_check(sum.config_path != NULL && sum.boot_id != NULL && sum.online != NULL &&
				   sum.class_name != NULL && sum.cpus != NULL && sum.mems != NULL,
			   "plain: a summary read without a member");
		fuzz_check(ts_plain_summary_still_valid(dfd, fd),
			   "plain: a summary read is not valid");
		fuzz_check(ts_plain_summary_invalidate(dfd, &err) == 0, "plain: cannot withdraw");
		fuzz_check(!ts_plain_summary_still_valid(dfd, fd), "plain: withdrawn, still valid");
		close(fd);
		ts_plain_summary_release(&sum);
	}
	(void)ts_plain_maybe_recorded(dfd, "fuzz");
	(void)ts_plain_maybe_recorded(dfd, "a");
	fuzz_check(ts_plain_journal_read(dfd, &v, &n, &err) == 0, "plain: journal read failed");
	check_entries(v, n);
	ts_plain_entries_free(v, n);
	/* nothing is alive under the empty proc root but what names a runtime dir */
	fuzz_check(ts_plain_journal_compact(dfd, fuzz_path("proc"), &kept, &dropped, &err) == 0,
		   "plain: compaction failed");
	fuzz_check(ts_plain_journal_read(dfd, &v, &n2, &err) == 0 && n2 == kept,
		   "plain: the compacted journal does not read back");
	check_entries(v, n2);
	ts_plain_entries_free(v, n2);
	fuzz_check(ts_plain_journal_take(dfd, fuzz_path("proc"), &fd, &v, &n, &err) == 0 &&
			   n <= kept,
		   "plain: take failed");
	check_entries(v, n);
	ts_plain_entries_free(v, n);
	fuzz_check(ts_plain_journal_take_done(fd, true, &err) == 0, "plain: take not done");
	close(dfd);
	fuzz_parts_free(parts, 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_free char *buf = NULL;

	if (size < 1)
		return 0;
	if ((data[0] & 5) == 4) {
		cache_body(data + 1, size - 1);
	} else if ((data[0] & 1) == 0) {
		buf = fuzz_strndup(data + 1, size - 1);
		roundtrip(buf, size - 1);
	} else if ((data[0] & 2) == 0) {
		load(data + 1, size - 1);
	} else {
		plain_files(data + 1, size - 1);
	}
	return 0;
}
