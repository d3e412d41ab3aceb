/*
 * fuzz-cdi-index.c - the persistent CDI index (src/cdi/index.c): ts_cdi_index_read(),
 * ts_cdi_index_fresh(), ts_cdi_index_sort(), ts_cdi_index_lookup(), and ts_cdi_registry_load() with
 * the index, which fills the registry from its result lines and reads a spec file on lookup;
 * then ts_cdi_registry_load_devices() (a create's: only the named devices' lines) and an
 * injection of what it resolves.
 *
 * The input is the index text.  So that the fuzzer can write an index that is still valid
 * (a "stat" line must match the dir's and the file's real dev, inode and times), the
 * harness replaces "@DIR@" with the spec dir, "@D@" with the dir's type, stat digest and path and
 * "@F@" with those of the spec file in it (spec.json, one device vendor.com/gpu=gpu0),
 * exactly as the index writes them.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cdi/cdi.h"
#include "cdi/internal.h"
#include "fuzz.h"
#include "oci/json.h"
#include "util/cleanup.h"

static const char spec_text[] =
	"{\"cdiVersion\":\"0.6.0\",\"kind\":\"vendor.com/gpu\",\"devices\":[{\"name\":\"gpu0\","
	"\"containerEdits\":{\"env\":[\"GPU=0\"]}},{\"name\":\"gpu1\",\"containerEdits\":{\"env\":"
	"[\"GPU=1\"]}}],\"containerEdits\":{\"env\":[\"VENDOR=1\"]}}";
static char dir[2048], file[4096], index_path[4096], dstat[8192], fstat_text[8192];

static void stat_text(const char *path, char *buf, size_t size)
{
	struct stat st;

	fuzz_check(stat(path, &st) == 0, "stat of the spec dir");
	snprintf(buf, size, "1 %c %016" PRIx64 " %s", S_ISDIR(st.st_mode) ? 'd' : 'f',
		 ts_cdi_stat_digest(&st), path);
}

static void setup(void)
{
	if (dir[0] != '\0')
		return;
	snprintf(dir, sizeof(dir), "%s", fuzz_path("specs"));
	snprintf(file, sizeof(file), "%s/spec.json", dir);
	snprintf(index_path, sizeof(index_path), "%s", fuzz_path("cdi-index"));
	fuzz_mkdir(dir);
	fuzz_write(file, spec_text, strlen(spec_text));
	stat_text(dir, dstat, sizeof(dstat));
	stat_text(file, fstat_text, sizeof(fstat_text));
}

/* data with the placeholders replaced; caller frees */
static char *expand(const uint8_t *data, size_t size, size_t *ret_len)
{
	size_t cap = size * 4 + 1, len = 0;
	char *out = malloc(cap);

	fuzz_check(out != NULL, "out of memory");
	for (size_t i = 0; i < size;) {
		const char *with = NULL;
		size_t skip = 0;

		if (i + 5 <= size && memcmp(data + i, "@DIR@", 5) == 0)
			with = dir, skip = 5;
		else if (i + 3 <= size && memcmp(data + i, "@D@", 3) == 0)
			with = dstat, skip = 3;
		else if (i + 3 <= size && memcmp(data + i, "@F@", 3) == 0)
			with = fstat_text, skip = 3;
		if (with == NULL) {
			with = (const char *)data + i;
			skip = 1;
		}
		size_t wlen = with == (const char *)data + i ? 1 : strlen(with);

		if (len + wlen + 1 > cap) {
			cap = (len + wlen + 1) * 2;
			out = realloc(out, cap);
			fuzz_check(out != NULL, "out of memory");
		}
		memcpy(out + len, with, wlen);
		len += wlen;
		i += skip;
	}
	out[len] = '\0';
	*ret_len = len;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *text = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_cdi_options opts = {0};
	struct ts_cdi_index *idx = NULL;
	struct ts_cdi_registry *reg = NULL;
	struct ts_cdi_injection *inj = NULL;
	const char *const *names = NULL;
	const char *base = "{\"process\":{\"env\":[]}}";
	char *dirs[2];
	size_t len, n;
	int r;

	setup();
	text = expand(data, size, &len);
	fuzz_write(index_path, text, len);
	dirs[0] = dir;
	dirs[1] = NULL;
	opts.spec_dirs = dirs;
	opts.require_root_owned = false;
	r = ts_cdi_index_read(&opts, index_path, &idx);
	fuzz_check(r >= 0, "index: read failed (not a stale index)");
	if (r == 1) {
		(void)ts_cdi_index_fresh(idx);
		fuzz_check(ts_cdi_index_sort(idx) == 0, "index: sort failed");
		(void)ts_cdi_index_lookup(idx, file);
		(void)ts_cdi_index_lookup(idx, dir);
		ts_cdi_index_free(idx);
	}
	/* the registry built from the index, then rebuilt; written back only when not racy */
	fuzz_write(index_path, text, len);
	opts.index_path = index_path;
	fuzz_check(ts_cdi_registry_load(&opts, &reg, &err) == 0, "registry: load failed");
	n = ts_cdi_registry_devices(reg, &names);
	for (size_t i = 0; i < n; i++)
		(void)ts_cdi_registry_lookup(reg, names[i], NULL, NULL);
	fuzz_check(ts_json_parse(base, strlen(base), "config.json", &config, &err) == 0,
		   "base config");
	if (n > 0) {
		r = ts_cdi_inject(reg, config, names, n, "config.json", &inj, &err);
		fuzz_check(r >= 0 || (err != NULL && err->msg != NULL),
			   "inject: failure without a message");
		ts_cdi_injection_free(inj);
		inj = NULL;
	}

	/* a create's registry: the named devices only (repeated and unknown
	 * names too); whole stays for the comparison */
	{
		static const char *const asked[] = {"vendor.com/gpu=gpu1", "vendor.com/gpu=gpu0",
						    "vendor.com/gpu=gpu1", "vendor.com/gpu=nope"};
		cleanup_json struct ts_json *config2 = NULL;
		struct ts_cdi_registry *whole = reg;
		const char *const *all = names;
		size_t n_all = n;

		reg = NULL;
		fuzz_write(index_path, text, len);
		fuzz_check(ts_cdi_registry_load_devices(&opts, asked, 4, &reg, &err) == 0,
			   "registry: load of the named devices failed");
		n = ts_cdi_registry_devices(reg, &names);
		/* each a name asked for (the index was used) or one the whole
		 * registry lists too (both scanned; a scan takes every file) */
		for (size_t i = 0; i < n; i++) {
			bool known = false;

			for (size_t k = 0; k < 4 && !known; k++)
				known = strcmp(names[i], asked[k]) == 0;
			for (size_t k = 0; k < n_all && !known; k++)
				known = strcmp(names[i], all[k]) == 0;
			fuzz_check(known, "registry: a device neither asked for nor scanned");
		}
		ts_cdi_registry_free(whole);
		fuzz_check(ts_json_parse(base, strlen(base), "config.json", &config2, &err) == 0,
			   "base config");
		if (n > 0) {
			r = ts_cdi_inject(reg, config2, names, n, "config.json", &inj, &err);
			fuzz_check(r >= 0 || (err != NULL && err->msg != NULL),
				   "inject: failure without a message");
			ts_cdi_injection_free(inj);
		}
		ts_cdi_registry_free(reg);
	}
	return 0;
}
