/*
 * fuzz-json.c - libFuzzer target for src/oci/json.c: parse -> serialise -> parse -> equal.
 *
 * For every input the parser accepts, both the pretty and the compact text must parse back to
 * an equal tree (raw numbers, key order and duplicates included), and serialising that tree
 * again must give the same bytes.  A deep copy must compare equal too.  Inputs the parser
 * refuses must come with an error message.  Any violation aborts, which libFuzzer reports.
 *
 * Built as tests/fuzz/fuzz-json and tests/fuzz/replay-json (tests/fuzz/Makefile.inc).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "oci/json.h"
#include "util/cleanup.h"

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz-json: %s\n", what);
		abort();
	}
}

/* Serialise j, parse the text again, and check the round trip. */
static void roundtrip(const struct ts_json *j, bool pretty)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL, *again_text = NULL;
	cleanup_json struct ts_json *again = NULL;
	size_t len = 0, again_len = 0;

	check(ts_json_serialize(j, pretty, &text, &len, &err) == 0,
	      "cannot serialise a parsed tree");
	check(strlen(text) == len, "length differs from the text");
	check(ts_json_parse(text, len, "again", &again, &err) == 0, "cannot parse our own output");
	check(ts_json_equal(j, again), "round trip changed the tree");
	check(ts_json_serialize(again, pretty, &again_text, &again_len, &err) == 0,
	      "cannot serialise the second tree");
	check(again_len == len && memcmp(text, again_text, len) == 0,
	      "serialisation is not stable");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *j = NULL, *copy = NULL;

	if (ts_json_parse((const char *)data, size, "fuzz.json", &j, &err) < 0) {
		check(err != NULL && err->msg != NULL && j == NULL, "failure without an error");
		return 0;
	}
	check(err == NULL && j != NULL, "success with an error or without a tree");
	roundtrip(j, true);
	roundtrip(j, false);
	copy = ts_json_dup(j);
	check(copy != NULL && ts_json_equal(j, copy), "copy differs");
	return 0;
}
