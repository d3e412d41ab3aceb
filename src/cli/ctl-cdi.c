/*
 * ctl-cdi.c - `toposhimctl cdi`: list, validate and resolve CDI devices.
 *
 *   toposhimctl cdi [--spec-dir DIR]... list [--json]
 *   toposhimctl cdi [--spec-dir DIR]... validate [FILE...]
 *   toposhimctl cdi [--spec-dir DIR]... resolve NAME... [--bundle DIR [--json]]
 *
 * resolve prints the edits applied to an empty config, or with --bundle a
 * line diff of that bundle's config.json (--json: the whole would-be
 * config.json); it never writes.
 *
 * Spec dirs come from the toposhim config file ($TOPOSHIM_CONFIG, else
 * /etc/toposhim/config.json, "cdi" object), unless --spec-dir is given.
 * Exit codes: 0 success, 1 failure (any problem for validate), 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cdi/cdi.h"
#include "cli/ctl.h"
#include "oci/json.h"
#include "util/cleanup.h"
#include "util/text.h"
#include "util/fileio.h"

#define DEFAULT_CONFIG "/etc/toposhim/config.json"

static int usage(void)
{
	fprintf(stderr, "usage: toposhimctl cdi [--spec-dir DIR]... list [--json]\n"
			"       toposhimctl cdi [--spec-dir DIR]... validate [FILE...]\n"
			"       toposhimctl cdi [--spec-dir DIR]... resolve NAME... [--bundle DIR "
			"[--json]]\n");
	return 2;
}

/* Print err (NULL: out of memory) as toposhimctl's one error line. @return 1. */
static int report(struct ts_error *err)
{
	cleanup_free char *msg = err ? ts_error_format(err) : NULL;

	fprintf(stderr, "toposhimctl: cdi: %s\n", msg ? msg : "out of memory");
	ts_error_free(err);
	return 1;
}

/* A copy of a NULL-terminated vector and of its strings; NULL on OOM. */
static char **strv_copy(char *const *v)
{
	size_t n = 0;
	char **c;

	while (v[n] != NULL)
		n++;
	c = calloc(n + 1, sizeof(*c));
	for (size_t i = 0; c != NULL && i < n; i++)
		if ((c[i] = strdup(v[i])) == NULL)
			ts_strv_freep(&c);
	return c;
}

/* Options from the config file, or the --spec-dir list when given. */
static int load_options(char **spec_dirs, struct ts_cdi_options *ret, struct ts_error **err)
{
	const char *path = getenv("TOPOSHIM_CONFIG");
	cleanup_free char *buf = NULL;
	cleanup_json struct ts_json *config = NULL;
	size_t len = 0;
	int r;

	if (path == NULL || path[0] == '\0')
		path = DEFAULT_CONFIG;
	r = ts_read_file_at(AT_FDCWD, path, 0, &buf, &len, err);
	if (r == -ENOENT && strcmp(path, DEFAULT_CONFIG) == 0) {
		ts_error_clear(err);
	} else if (r < 0) {
		return r;
	} else {
		r = ts_json_parse(buf, len, path, &config, err);
		if (r < 0)
			return r;
	}
	r = ts_cdi_options_from_config(config, path, ret, err);
	/* a reader, like nrt and plan: the creates' index, which lives in
	 * their state dir (not this default path), is not ours to rewrite
	 * (helper-11: `cdi list` under a config with its own state dir wrote
	 * /run/toposhim/cdi-index) */
	free(ret->index_path);
	ret->index_path = NULL;
	if (r < 0 || spec_dirs == NULL)
		return r;
	/* copies: opts owns its strings, ts_cdi_options_release() frees them all */
	ts_strv_freep(&ret->spec_dirs);
	ret->spec_dirs = strv_copy(spec_dirs);
	if (ret->spec_dirs == NULL) {
		ts_cdi_options_release(ret);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	return 0;
}

/* "file: '/a/b~1c': msg" -> "file: a.b/c: msg"; other messages unchanged. */
static void print_problem(FILE *f, const char *msg)
{
	const char *start = strstr(msg, ": '/"), *end;

	if (start == NULL || (end = strstr(start + 3, "': ")) == NULL) {
		fprintf(f, "%s\n", msg);
		return;
	}
	fwrite(msg, 1, (size_t)(start - msg) + 2, f);
	if (end == start + 4)
		fputs("(root)", f);
	for (const char *p = start + 4; p < end; p++) {
		if (*p == '/')
			fputc('.', f);
		else if (*p == '~' && p + 1 < end && (p[1] == '0' || p[1] == '1'))
			fputc(*++p == '0' ? '~' : '/', f);
		else
			fputc(*p, f);
	}
	fprintf(f, ": %s\n", end + 3);
}

static int cmd_list(struct ts_cdi_registry *reg, int argc, char **argv)
{
	const char *const *names, *const *problems;
	size_t n = ts_cdi_registry_devices(reg, &names);
	size_t np = ts_cdi_registry_problems(reg, &problems);
	bool json = argc == 2 && strcmp(argv[1], "--json") == 0;
	cleanup_json struct ts_json *root = NULL;
	struct ts_json *devs, *probs;
	cleanup_free char *out = NULL;
	struct ts_error *err = NULL;

	if (argc > 2 || (argc == 2 && !json)) {
		/* the first word that is not the one --json */
		int bad = strcmp(argv[1], "--json") == 0 ? 2 : 1;

		fprintf(stderr, "toposhimctl: cdi list: unexpected argument '%s'\n", argv[bad]);
		return usage();
	}
	if (!json) {
		for (size_t i = 0; i < n; i++) {
			const struct ts_cdi_spec *spec = NULL;

			(void)ts_cdi_registry_lookup(reg, names[i], &spec, NULL);
			printf("%s\t%s\n", names[i], ts_cdi_spec_path(spec));
		}
		for (size_t i = 0; i < np; i++)
			printf("rejected\t%s\n", problems[i]);
		return 0;
	}
	root = ts_json_new_object();
	devs = ts_json_new_array();
	probs = ts_json_new_array();
	if (ts_json_object_set(root, "devices", devs, &err) < 0 ||
	    ts_json_object_set(root, "rejected", probs, &err) < 0)
		return report(err);
	for (size_t i = 0; i < n; i++) {
		const struct ts_cdi_spec *spec = NULL;
		struct ts_json *d = ts_json_new_object();

		(void)ts_cdi_registry_lookup(reg, names[i], &spec, NULL);
		if (ts_json_array_append(devs, d, &err) < 0 ||
		    ts_json_object_set(d, "name", ts_json_new_string(names[i]), &err) < 0 ||
		    ts_json_object_set(d, "spec", ts_json_new_string(ts_cdi_spec_path(spec)),
				       &err) < 0)
			return report(err);
	}
	for (size_t i = 0; i < np; i++)
		if (ts_json_array_append(probs, ts_json_new_string(problems[i]), &err) < 0)
			return report(err);
	if (ts_json_serialize(root, true, &out, NULL, &err) < 0)
		return report(err);
	fputs(out, stdout);
	return 0;
}

static int cmd_validate(const struct ts_cdi_options *opts, int argc, char **argv)
{
	struct ts_cdi_registry *reg = NULL;
	const char *const *problems;
	struct ts_error *err = NULL;
	size_t np;
	int ret = 0;

	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			struct ts_cdi_spec *spec = NULL;

			if (ts_cdi_spec_load(argv[i], 0, &spec, &err) < 0) {
				cleanup_free char *msg = ts_error_format(err);

				print_problem(stdout, msg ? msg : "out of memory");
				ts_error_clear(&err);
				ret = 1;
			}
			ts_cdi_spec_free(spec);
		}
		return ret;
	}
	if (ts_cdi_registry_load(opts, &reg, &err) < 0)
		return report(err);
	np = ts_cdi_registry_problems(reg, &problems);
	for (size_t i = 0; i < np; i++)
		print_problem(stdout, problems[i]);
	ts_cdi_registry_free(reg);
	return np > 0 ? 1 : 0;
}

/* Longest-common-subsequence line diff of a and b, "-"/"+" lines with context " ". */
static int print_diff(char **a, size_t na, char **b, size_t nb)
{
	cleanup_free unsigned *t = calloc((na + 1) * (nb + 1), sizeof(*t));
	size_t i = 0, j = 0;

	if (t == NULL)
		return -ENOMEM;
#define T(x, y) t[(x) * (nb + 1) + (y)]
	for (size_t x = na; x-- > 0;)
		for (size_t y = nb; y-- > 0;)
			T(x, y) = strcmp(a[x], b[y]) == 0      ? T(x + 1, y + 1) + 1
				  : T(x + 1, y) >= T(x, y + 1) ? T(x + 1, y)
							       : T(x, y + 1);
	while (i < na || j < nb) {
		if (i < na && j < nb && strcmp(a[i], b[j]) == 0) {
			printf(" %s\n", a[i]);
			i++;
			j++;
		} else if (i < na && (j == nb || T(i + 1, j) >= T(i, j + 1))) {
			printf("-%s\n", a[i++]); /* deletions first, as diff -u */
		} else {
			printf("+%s\n", b[j++]);
		}
	}
#undef T
	return 0;
}

static int cmd_resolve(struct ts_cdi_registry *reg, int argc, char **argv)
{
	cleanup_free const char **names = calloc((size_t)argc + 1, sizeof(*names));
	cleanup_free char *bundle_config = NULL, *buf = NULL, *before = NULL, *after = NULL;
	cleanup_free char **la = NULL, **lb = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_error *err = NULL;
	const char *bundle = NULL;
	size_t n = 0, len = 0, na = 0, nb = 0;
	bool json = false;

	if (names == NULL)
		return report(NULL);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--bundle") == 0 && i + 1 < argc)
			bundle = argv[++i];
		else if (strncmp(argv[i], "--bundle=", 9) == 0)
			bundle = argv[i] + 9;
		else if (strcmp(argv[i], "--json") == 0)
			json = true;
		else if (argv[i][0] == '-') {
			fprintf(stderr, "toposhimctl: cdi resolve: unexpected argument '%s'\n",
				argv[i]);
			return usage();
		} else {
			/* what a create says of a name in an annotation */
			if (ts_cdi_qualified_name_parse(argv[i], NULL, NULL, NULL, &err) < 0)
				return report(err);
			names[n++] = argv[i];
		}
	}
	if (n == 0 || (json && bundle == NULL)) {
		fprintf(stderr, "toposhimctl: cdi resolve: %s\n",
			n == 0 ? "missing device name" : "--json needs --bundle");
		return usage();
	}
	if (bundle != NULL) {
		if (asprintf(&bundle_config, "%s/config.json", bundle) < 0)
			return report(NULL);
		if (ts_read_file_at(AT_FDCWD, bundle_config, 0, &buf, &len, &err) < 0 ||
		    ts_json_parse(buf, len, bundle_config, &config, &err) < 0 ||
		    ts_json_serialize(config, true, &before, NULL, &err) < 0)
			return report(err);
	} else {
		config = ts_json_new_object();
	}
	if (config == NULL)
		return report(NULL);
	if (ts_cdi_inject(reg, config, names, n, bundle_config ? bundle_config : "config.json",
			  NULL, &err) < 0 ||
	    ts_json_serialize(config, true, &after, NULL, &err) < 0)
		return report(err);
	if (bundle == NULL || json) {
		fputs(after, stdout);
		return 0;
	}
	la = ts_split_lines(before, &na);
	lb = ts_split_lines(after, &nb);
	if (la == NULL || lb == NULL)
		return report(NULL);
	printf("--- %s\n+++ %s (with CDI devices)\n", bundle_config, bundle_config);
	if (print_diff(la, na, lb, nb) < 0)
		return report(NULL);
	return 0;
}

int ts_ctl_cdi(int argc, char **argv)
{
	cleanup_free char **spec_dirs = calloc((size_t)argc + 1, sizeof(*spec_dirs));
	struct ts_cdi_options opts = {0};
	struct ts_cdi_registry *reg = NULL;
	struct ts_error *err = NULL;
	size_t n_dirs = 0;
	int i = 1, ret;

	if (spec_dirs == NULL)
		return report(NULL);
	while (i < argc && strcmp(argv[i], "--spec-dir") == 0) {
		if (i + 1 >= argc || argv[i + 1][0] == '\0') {
			fprintf(stderr, "toposhimctl: cdi: --spec-dir needs a directory\n");
			return 2;
		}
		spec_dirs[n_dirs++] = argv[i + 1];
		i += 2;
	}
	if (i >= argc) {
		fprintf(stderr, "toposhimctl: cdi: missing command\n");
		return usage();
	}
	/* a dir named on the command line is meant to be there: a typo must
	 * not read as "no devices" (helper-11: `--spec-dir /nonexistent list`
	 * printed nothing, exit 0); configured dirs may be absent (CDI) */
	for (size_t k = 0; k < n_dirs; k++)
		if (ts_ctl_check_dir("cdi", "--spec-dir", spec_dirs[k]) != 0)
			return 1;
	if (load_options(n_dirs > 0 ? spec_dirs : NULL, &opts, &err) < 0)
		return report(err);
	if (strcmp(argv[i], "validate") == 0) {
		ret = cmd_validate(&opts, argc - i, argv + i);
		goto out;
	}
	if (strcmp(argv[i], "list") != 0 && strcmp(argv[i], "resolve") != 0) {
		fprintf(stderr, "toposhimctl: cdi: unknown command '%s'\n", argv[i]);
		ret = usage();
		goto out;
	}
	if (ts_cdi_registry_load(&opts, &reg, &err) < 0) {
		ret = report(err);
		goto out;
	}
	if (strcmp(argv[i], "list") == 0)
		ret = cmd_list(reg, argc - i, argv + i);
	else
		ret = cmd_resolve(reg, argc - i, argv + i);
	ts_cdi_registry_free(reg);
out:
	ts_cdi_options_release(&opts);
	return ret;
}
