/*
 * Unit tests of src/cdi/registry.c: spec dirs, priorities, conflicts,
 * security checks, options, and all-or-nothing injection (E1-E6 of
 * ../shared/corpus/cdi/INDEX.md, asserted as serialized OCI JSON).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cdi/cdi.h"
#include "util/cleanup.h"
#include "select.h"
#include "util/fileio.h"

#define C "cncf-tags_container-device-interface_"

struct fixture {
	char root[64];
	char *dirs[3]; /* root/etc, root/run, NULL */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	strcpy(f->root, "/tmp/ts-cdi-reg-XXXXXX");
	if (mkdtemp(f->root) == NULL || asprintf(&f->dirs[0], "%s/etc", f->root) < 0 ||
	    asprintf(&f->dirs[1], "%s/run", f->root) < 0 || mkdir(f->dirs[0], 0755) < 0 ||
	    mkdir(f->dirs[1], 0755) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	cleanup_free char *cmd = NULL;

	if (asprintf(&cmd, "rm -rf '%s'", f->root) > 0)
		(void)!system(cmd);
	free(f->dirs[0]);
	free(f->dirs[1]);
	free(f);
	return 0;
}

static void write_file(const char *dir, const char *name, const char *text, mode_t mode)
{
	cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cleanup_error struct ts_error *err = NULL;

	assert_true(dfd >= 0);
	assert_int_equal(ts_write_file_atomic_at(dfd, name, text, strlen(text), mode, &err), 0);
}

/* The create path's unresolvable line for fixture f: head, then " (no spec
 * file in <etc>, <run> defines <it_them><tail>)"; a static buffer. */
static const char *msg_with_dirs(const struct fixture *f, const char *head, const char *it_them,
				 const char *tail)
{
	static char buf[2048];

	snprintf(buf, sizeof(buf), "%s (no spec file in %s, %s defines %s%s)", head, f->dirs[0],
		 f->dirs[1], it_them, tail);
	return buf;
}

/* Copy a corpus file into dir (under its own name, or as `as`). */
static void copy_corpus(const char *dir, const char *file, const char *as)
{
	const char *shared = getenv("TS_SHARED_DIR");
	cleanup_free char *path = NULL, *buf = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_non_null(shared); /* tests using the corpus run only when it is there */
	assert_true(asprintf(&path, "%s/corpus/cdi/%s", shared, file) > 0);
	assert_int_equal(ts_read_file_at(AT_FDCWD, path, 0, &buf, NULL, &err), 0);
	write_file(dir, as ? as : file, buf, 0644);
}

static struct ts_cdi_registry *load(struct fixture *f, bool require_root)
{
	struct ts_cdi_options opts = {.spec_dirs = f->dirs, .require_root_owned = require_root};
	struct ts_cdi_registry *reg = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_int_equal(ts_cdi_registry_load(&opts, &reg, &err), 0);
	return reg;
}

static struct ts_json *parse(const char *text)
{
	struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_json_parse(text, strlen(text), "config.json", &j, &err) < 0)
		fail_msg("%s: %s", text, err->msg);
	return j;
}

static char *ser(const struct ts_json *j)
{
	char *out = NULL;
	cleanup_error struct ts_error *err = NULL;

	assert_non_null(j);
	assert_int_equal(ts_json_serialize(j, false, &out, NULL, &err), 0);
	return out;
}

static void assert_json(const struct ts_json *j, const char *want)
{
	cleanup_free char *got = ser(j);

	if (strcmp(got, want) != 0)
		fail_msg("\nwant %s\ngot  %s", want, got);
}

/* "<dir>/<file>: <rest>" */
static void assert_problem(const struct ts_cdi_registry *reg, size_t i, const char *dir,
			   const char *file, const char *rest)
{
	const char *const *msgs;
	size_t n = ts_cdi_registry_problems(reg, &msgs);
	cleanup_free char *want = NULL;

	assert_true(i < n);
	if (file != NULL)
		assert_true(asprintf(&want, "%s/%s: %s", dir, file, rest) > 0);
	else
		assert_true(asprintf(&want, "%s: %s", dir, rest) > 0);
	assert_string_equal(msgs[i], want);
}

static size_t n_problems(const struct ts_cdi_registry *reg)
{
	const char *const *msgs;

	return ts_cdi_registry_problems(reg, &msgs);
}

static const char *resolved_by(const struct ts_cdi_registry *reg, const char *name)
{
	const struct ts_cdi_spec *spec = NULL;
	size_t index;

	if (!ts_cdi_registry_lookup(reg, name, &spec, &index))
		return NULL;
	return strrchr(ts_cdi_spec_path(spec), '/') + 1;
}

/* E1: several devices of one spec, spec-level env once, device hooks. */
static void test_e1_inject_several_devices(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	struct ts_cdi_injection *inj = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = parse(
		"{\"annotations\":{\"cdi.k8s.io/x\":\"vendor1.com/device=dev1,vendor1.com/"
		"device=dev2,vendor1.com/device=dev3\"},\"process\":{\"env\":[\"ORIG_VAR1=VAL1\","
		"\"ORIG_VAR2=VAL2\"]},\"linux\":{\"devices\":[{\"path\":\"/dev/null\"},{\"path\":"
		"\"/dev/zero\"}]}}");

	copy_corpus(f->dirs[0], C "cache_test-inject-several-hooks.yaml", NULL);
	reg = load(f, false);
	assert_int_equal(n_problems(reg), 0);
	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, &inj, &err), 1);
	assert_json(ts_json_get_path(config, "process", "env", NULL),
		    "[\"ORIG_VAR1=VAL1\",\"ORIG_VAR2=VAL2\",\"VENDOR1_SPEC_VAR1=VAL1\","
		    "\"VENDOR1_DEV1=VAL1\",\"VENDOR1_DEV2=VAL2\",\"VENDOR1_DEV3=VAL3\"]");
	assert_json(ts_json_get(config, "hooks"),
		    "{\"prestart\":[{\"path\":\"/usr/local/bin/prestart-vendor-hook\",\"args\":["
		    "\"--verbose\"],\"env\":[\"HOOK_ENV1=PRESTART_VAL1\"]}],\"createRuntime\":[{"
		    "\"path\":\"/usr/local/bin/cr-vendor-hook\",\"args\":[\"--debug\"],\"env\":["
		    "\"HOOK_ENV1=CREATE_RUNTIME_VAL1\"]}]}");
	assert_json(ts_json_get_path(config, "linux", "devices", NULL),
		    "[{\"path\":\"/dev/null\"},{\"path\":\"/dev/zero\"},{\"path\":\"/dev/"
		    "vendor1-dev1\",\"type\":\"b\",\"major\":10,\"minor\":1},{\"path\":\"/dev/"
		    "vendor1-dev2\",\"type\":\"b\",\"major\":10,\"minor\":2},{\"path\":\"/dev/"
		    "vendor1-dev3\",\"type\":\"b\",\"major\":10,\"minor\":3}]");
	assert_json(ts_json_get_path(config, "linux", "resources", "devices", NULL),
		    "[{\"allow\":true,\"type\":\"b\",\"major\":10,\"minor\":1,\"access\":\"rwm\"},{"
		    "\"allow\":true,\"type\":\"b\",\"major\":10,\"minor\":2,\"access\":\"rwm\"},{"
		    "\"allow\":true,\"type\":\"b\",\"major\":10,\"minor\":3,\"access\":\"rwm\"}]");
	/* nothing of toposhim's own in the config: the names are handed back */
	assert_json(ts_json_get(config, "annotations"),
		    "{\"cdi.k8s.io/x\":\"vendor1.com/device=dev1,vendor1.com/"
		    "device=dev2,vendor1.com/device=dev3\"}");
	assert_string_equal(
		inj->names,
		"vendor1.com/device=dev1,vendor1.com/device=dev2,vendor1.com/device=dev3");
	assert_int_equal(inj->n_devices, 3);
	assert_true(inj->applied);
	assert_false(ts_cdi_injection_retried(inj, inj->names));
	assert_string_equal(inj->devices[1].qualified_name, "vendor1.com/device=dev2");
	assert_int_equal(inj->devices[1].n_nodes, 1);
	assert_string_equal(inj->devices[1].nodes[0].host_path, "/dev/vendor1-dev2");
	assert_int_equal(inj->devices[1].nodes[0].type, 'b');
	assert_int_equal(inj->devices[1].nodes[0].major, 10);
	assert_int_equal(inj->devices[1].nodes[0].minor, 2);
	assert_non_null(strstr(inj->devices[1].spec_path, "/etc/" C));
	ts_cdi_injection_free(inj);
	ts_cdi_registry_free(reg);
}

/* E1 (error half), and a retried create: nothing injected twice. */
static void test_e1_unresolvable_and_retry(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_injection *inj = NULL;
	cleanup_free char *before = NULL, *after = NULL, *first = NULL, *second = NULL;
	cleanup_json struct ts_json *config = parse(
		"{\"annotations\":{\"cdi.k8s.io/x\":\"vendor1.com/device=dev2\"},\"process\":{"
		"\"env\":[\"ORIG_VAR1=VAL1\"]}}");

	write_file(f->dirs[0], "vendor1.yaml",
		   "cdiVersion: 0.3.0\nkind: vendor1.com/device\ndevices:\n- name: dev1\n"
		   "  containerEdits:\n    env: [VENDOR1_VAR1=VAL1]\n",
		   0644);
	reg = load(f, false);
	before = ser(config);
	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, &inj, &err),
			 -EINVAL);
	assert_string_equal(err->msg,
			    msg_with_dirs(f,
					  "config.json: '/annotations/cdi.k8s.io~1x': "
					  "unresolvable CDI devices vendor1.com/device=dev2",
					  "it", ""));
	assert_null(inj);
	after = ser(config);
	assert_string_equal(before, after);
	ts_error_clear(&err);

	/* every unresolved name is listed, invalid ones included */
	assert_int_equal(ts_cdi_inject(reg, config,
				       (const char *const[]){"vendor1.com/device=dev1", "foobar",
							     "vendor1.com/device=dev9"},
				       3, "config.json", NULL, &err),
			 -EINVAL);
	assert_string_equal(err->msg, "unresolvable CDI devices foobar, vendor1.com/device=dev9");
	ts_error_clear(&err);

	assert_int_equal(ts_cdi_inject(reg, config,
				       (const char *const[]){"vendor1.com/device=dev1"}, 1,
				       "config.json", NULL, &err),
			 1);
	first = ser(config);
	assert_int_equal(ts_cdi_inject(reg, config,
				       (const char *const[]){"vendor1.com/device=dev1"}, 1,
				       "config.json", &inj, &err),
			 0);
	assert_false(inj->applied);
	assert_string_equal(inj->names, "vendor1.com/device=dev1");
	assert_true(ts_cdi_injection_retried(inj, "vendor1.com/device=dev1"));
	assert_false(ts_cdi_injection_retried(inj, "vendor1.com/device=dev2"));
	assert_false(ts_cdi_injection_retried(inj, NULL));
	assert_int_equal(inj->n_devices, 1);
	second = ser(config);
	assert_string_equal(first, second);
	assert_string_equal(second,
			    "{\"annotations\":{\"cdi.k8s.io/x\":\"vendor1.com/device=dev2\"},"
			    "\"process\":{\"env\":[\"ORIG_VAR1=VAL1\",\"VENDOR1_VAR1=VAL1\"]}}");
	ts_cdi_injection_free(inj);
	ts_cdi_registry_free(reg);
}

/* E2: two files of one dir define dev1: it is unavailable, both files reported. */
static void test_e2_conflict_in_one_dir(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	const char *const *names;

	copy_corpus(f->dirs[1], C "cache_test-conflict-run-vendor1.yaml", "vendor1.yaml");
	copy_corpus(f->dirs[1], C "cache_test-conflict-run-vendor1-other.yaml",
		    "vendor1-other.yaml");
	reg = load(f, false);
	assert_null(resolved_by(reg, "vendor1.com/device=dev1"));
	assert_string_equal(resolved_by(reg, "vendor1.com/device=dev2"), "vendor1.yaml");
	assert_int_equal(n_problems(reg), 2);
	assert_problem(
		reg, 0, f->dirs[1], "vendor1-other.yaml",
		"conflicting device 'vendor1.com/device=dev1' (defined by 2 spec files of the "
		"same dir), device unavailable");
	assert_problem(
		reg, 1, f->dirs[1], "vendor1.yaml",
		"conflicting device 'vendor1.com/device=dev1' (defined by 2 spec files of the "
		"same dir), device unavailable");
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	assert_string_equal(names[0], "vendor1.com/device=dev2");
	ts_cdi_registry_free(reg);
}

/* E3: a later dir overrides an earlier one, no problems. */
static void test_e3_override_across_dirs(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;

	copy_corpus(f->dirs[0], C "cache_test-override-etc-vendor1.yaml", "vendor1.yaml");
	copy_corpus(f->dirs[1], C "cache_test-override-run-vendor1.yaml", "vendor1.yaml");
	reg = load(f, false);
	assert_int_equal(n_problems(reg), 0);
	assert_non_null(strstr(ts_cdi_spec_path(({
				       const struct ts_cdi_spec *s = NULL;
				       assert_true(ts_cdi_registry_lookup(
					       reg, "vendor1.com/device=dev1", &s, NULL));
				       s;
			       })),
			       "/run/vendor1.yaml"));
	assert_non_null(strstr(ts_cdi_spec_path(({
				       const struct ts_cdi_spec *s = NULL;
				       assert_true(ts_cdi_registry_lookup(
					       reg, "vendor1.com/device=dev2", &s, NULL));
				       s;
			       })),
			       "/etc/vendor1.yaml"));
	ts_cdi_registry_free(reg);
}

/* A same-dir conflict in a lower dir does not hide a device a later dir defines. */
static void test_conflict_overridden_by_later_dir(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;

	copy_corpus(f->dirs[0], C "cache_test-conflict-run-vendor1.yaml", "a.yaml");
	copy_corpus(f->dirs[0], C "cache_test-conflict-run-vendor1-other.yaml", "b.yaml");
	copy_corpus(f->dirs[1], C "cache_test-override-run-vendor1.yaml", "c.yaml");
	reg = load(f, false);
	assert_string_equal(resolved_by(reg, "vendor1.com/device=dev1"), "c.yaml");
	assert_string_equal(resolved_by(reg, "vendor1.com/device=dev2"), "a.yaml");
	assert_int_equal(n_problems(reg), 0);
	ts_cdi_registry_free(reg);
}

/* E4: two vendors through two annotations; invalid and unknown names fail. */
static void test_e4_two_vendors(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config =
		parse("{\"annotations\":{\"cdi.k8s.io/vendor1_devices\":\"vendor1.com/device=foo\","
		      "\"cdi.k8s.io/vendor2_devices\":\"vendor2.com/device=bar\"}}");
	cleanup_json struct ts_json *bad1 =
		parse("{\"annotations\":{\"cdi.k8s.io/devices\":\"foobar\"}}");
	cleanup_json struct ts_json *bad2 = parse(
		"{\"annotations\":{\"cdi.k8s.io/devices\":\"vendor1.com/device=no-such-dev\"}}");

	copy_corpus(f->dirs[0], C "regressions_test-vendor1.yaml", "vendor1.yaml");
	copy_corpus(f->dirs[0], C "regressions_test-vendor2.yaml", "vendor2.yaml");
	reg = load(f, false);
	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, NULL, &err), 1);
	assert_json(ts_json_get_path(config, "process", "env", NULL),
		    "[\"VENDOR1=present\",\"FOO=injected\",\"VENDOR2=present\",\"BAR=injected\"]");
	assert_json(ts_json_get_path(config, "linux", "devices", NULL),
		    "[{\"path\":\"/dev/loop8\",\"type\":\"b\",\"major\":7,\"minor\":8},{\"path\":"
		    "\"/dev/loop9\",\"type\":\"b\",\"major\":7,\"minor\":9}]");
	assert_int_equal(ts_cdi_inject_requested(reg, bad1, "config.json", false, NULL, &err),
			 -EINVAL);
	/* E4: "foobar" is refused as an invalid name, before any lookup */
	assert_string_equal(err->msg, "config.json: '/annotations/cdi.k8s.io~1devices': invalid "
				      "qualified device name 'foobar': missing '='");
	ts_error_clear(&err);
	assert_int_equal(ts_cdi_inject_requested(NULL, config, "config.json", false, NULL, &err),
			 -EINVAL);
	/* without a registry: nothing to look in */
	assert_string_equal(
		err->msg,
		"config.json: '/annotations/cdi.k8s.io~1vendor1_devices': unresolvable CDI "
		"devices vendor1.com/device=foo, vendor2.com/device=bar (no spec dir)");
	ts_error_clear(&err);
	assert_int_equal(ts_cdi_inject_requested(reg, bad2, "config.json", false, NULL, &err),
			 -EINVAL);
	assert_string_equal(err->msg,
			    msg_with_dirs(f,
					  "config.json: '/annotations/cdi.k8s.io~1devices': "
					  "unresolvable CDI devices vendor1.com/device=no-such-dev",
					  "it", ""));
	ts_error_clear(&err);
	{
		cleanup_json struct ts_json *none = parse("{\"annotations\":{\"other\":\"x\"}}");
		cleanup_free char *before = ser(none), *after = NULL;
		struct ts_cdi_injection *inj = NULL;

		assert_int_equal(
			ts_cdi_inject_requested(NULL, none, "config.json", false, &inj, &err), 0);
		assert_int_equal(inj->n_devices, 0);
		assert_null(inj->names);
		assert_false(inj->applied);
		after = ser(none);
		assert_string_equal(before, after);
		ts_cdi_injection_free(inj);
	}
	ts_cdi_registry_free(reg);
}

/* E5: podman's device exposed as a bind mount. */
static void test_e5_podman_mount(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = parse(
		"{\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":"
		"\"proc\"},{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"},{"
		"\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\"}]}");

	copy_corpus(f->dirs[0], "containers_podman_device.json", "device.json");
	reg = load(f, false);
	assert_int_equal(ts_cdi_inject(reg, config,
				       (const char *const[]){"vendor.com/device=myKmsg"}, 1,
				       "config.json", NULL, &err),
			 1);
	assert_json(ts_json_get(config, "mounts"),
		    "[{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},{"
		    "\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"},{"
		    "\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\"},{"
		    "\"destination\":\"/dev/kmsg1\",\"source\":\"/dev/kmsg\",\"options\":[\"rw\","
		    "\"rprivate\",\"rbind\"]}]");
	ts_cdi_registry_free(reg);
}

/* E6: CDI env beats the container's, YAML octal fileMode, a broken file next door. */
static void test_e6_crio(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *before = NULL;
	cleanup_json struct ts_json *config =
		parse("{\"process\":{\"env\":[\"VENDOR0=unset\",\"LOOP8=unset\"]},\"annotations\":{"
		      "\"cdi.k8s.io/test\":\"vendor0.com/device=loop8,vendor0.com/"
		      "device=loop9,vendor0.com/"
		      "device=loop8\"}}");
	cleanup_json struct ts_json *bad =
		parse("{\"annotations\":{\"cdi.k8s.io/test\":\"vendor0.com/device=loop10\"}}");
	char ignored[512];

	copy_corpus(f->dirs[0], "cri-o_cri-o_vendor0.yaml", "vendor0.yaml");
	copy_corpus(f->dirs[0], "cri-o_cri-o_vendor1.yaml", "vendor1.yaml");
	reg = load(f, false);
	assert_int_equal(n_problems(reg), 1);
	assert_problem(reg, 0, f->dirs[0], "vendor1.yaml",
		       "'/devices': expected array, got string");
	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, NULL, &err), 1);
	assert_json(ts_json_get_path(config, "process", "env", NULL),
		    "[\"VENDOR0=injected\",\"LOOP8=present\",\"LOOP9=present\"]");
	assert_json(ts_json_get_path(config, "linux", "devices", NULL),
		    "[{\"path\":\"/dev/loop8\",\"type\":\"b\",\"major\":7,\"minor\":8,\"fileMode\":"
		    "416},{\"path\":\"/dev/loop9\",\"type\":\"b\",\"major\":7,\"minor\":9,"
		    "\"fileMode\":420}]");
	assert_null(
		ts_json_get_string(ts_json_get(config, "annotations"), "toposhim.io/cdi-injected"));
	before = ser(bad);
	assert_int_equal(ts_cdi_inject_requested(reg, bad, "config.json", false, NULL, &err),
			 -EINVAL);
	/* the spec file the registry ignored is named, with its cause */
	snprintf(ignored, sizeof(ignored),
		 "; ignored: %s/vendor1.yaml: '/devices': expected array, got string", f->dirs[0]);
	assert_string_equal(err->msg,
			    msg_with_dirs(f,
					  "config.json: '/annotations/cdi.k8s.io~1test': "
					  "unresolvable CDI devices vendor0.com/device=loop10",
					  "it", ignored));
	ts_cdi_registry_free(reg);
}

/* Injecting config's one request (annotation cdi.k8s.io/a) fails with the
 * unresolvable line for device, naming <dirs[0]>/<file_problem> among
 * four ignored files. */
static void assert_unresolvable_names(const struct fixture *f, struct ts_cdi_registry *reg,
				      struct ts_json *config, const char *device,
				      const char *file_problem)
{
	cleanup_error struct ts_error *err = NULL;
	char head[256], ignored[512];

	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, NULL, &err),
			 -EINVAL);
	snprintf(head, sizeof(head),
		 "config.json: '/annotations/cdi.k8s.io~1a': unresolvable CDI devices %s", device);
	snprintf(ignored, sizeof(ignored), "; ignored: %s/%s (and 3 more)", f->dirs[0],
		 file_problem);
	assert_string_equal(err->msg, msg_with_dirs(f, head, "it", ignored));
}

/* Of several ignored files, the line names the one whose kind was asked for
 * (here the second in scan order), else the first. */
static void test_unresolvable_names_the_kind_file(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_json struct ts_json *config =
		parse("{\"annotations\":{\"cdi.k8s.io/a\":\"v.com/c=x\"}}");
	cleanup_json struct ts_json *other =
		parse("{\"annotations\":{\"cdi.k8s.io/a\":\"w.com/c=x\"}}");
	cleanup_free char *fifo = NULL;

	write_file(f->dirs[0], "a.json", "{\"cdiVersion\": ", 0644);
	write_file(f->dirs[0], "b.yaml", "cdiVersion: 0.3.0\nkind: u.com/c\ndevices: 1\n", 0644);
	write_file(f->dirs[0], "c.yaml", "cdiVersion: 0.3.0\nkind: v.com/c\ndevices: {}\n", 0644);
	/* a FIFO is not read again (it would block) */
	assert_true(asprintf(&fifo, "%s/d.json", f->dirs[1]) > 0);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	reg = load(f, false);
	assert_int_equal(n_problems(reg), 4);
	assert_unresolvable_names(f, reg, config, "v.com/c=x",
				  "c.yaml: '/devices': expected array, got object");
	/* no ignored file says w.com/c: the first one is named */
	assert_unresolvable_names(f, reg, other, "w.com/c=x",
				  "a.json: line 1 column 16: parse error: premature EOF");
	ts_cdi_registry_free(reg);
}

/* The create's error reaches a pod's events: a problem of a spec file not
 * readable by all, which may quote it, names only the file there
 * (helper-19: a spec-dir symlink to a root-only file showed its first
 * key).  The registry itself keeps the whole problem. */
static void test_unresolvable_hides_unreadable(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *ignored = NULL, *path = NULL;
	cleanup_json struct ts_json *config =
		parse("{\"annotations\":{\"cdi.k8s.io/a\":\"v.com/c=x\"}}");

	write_file(f->dirs[0], "s.yaml", "cdiVersion: 0.3.0\nkind: v.com/c\ndb_password: hunter2\n",
		   0600);
	assert_true(asprintf(&path, "%s/s.yaml", f->dirs[0]) > 0);
	assert_int_equal(chmod(path, 0600), 0);
	reg = load(f, false);
	assert_int_equal(n_problems(reg), 1);
	{
		const char *const *msgs = NULL;

		assert_int_equal(ts_cdi_registry_problems(reg, &msgs), 1);
		assert_non_null(strstr(msgs[0], "unknown key 'db_password'"));
	}
	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, NULL, &err),
			 -EINVAL);
	assert_true(asprintf(&ignored,
			     "; ignored: %s: not shown (a file not readable by all, mode 0600: "
			     "`toposhimctl cdi list` shows why)",
			     path) > 0);
	assert_string_equal(err->msg,
			    msg_with_dirs(f,
					  "config.json: '/annotations/cdi.k8s.io~1a': unresolvable "
					  "CDI devices v.com/c=x",
					  "it", ignored));
	assert_null(strstr(err->msg, "db_password"));
	ts_error_clear(&err);
	ts_cdi_registry_free(reg);
	/* readable by all: nothing to hide */
	assert_int_equal(chmod(path, 0644), 0);
	reg = load(f, false);
	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, NULL, &err),
			 -EINVAL);
	assert_non_null(strstr(err->msg, "unknown key 'db_password'"));
	ts_cdi_registry_free(reg);
}

/* A device two files of one dir define is unresolvable for that reason,
 * named with the files (helper-9: "no spec file defines it", then the
 * problem of an unrelated broken file). */
static void test_unresolvable_conflict(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *want = NULL;
	cleanup_json struct ts_json *config =
		parse("{\"annotations\":{\"cdi.k8s.io/a\":\"v.com/c=dup,v.com/c=one\"}}");

	write_file(f->dirs[0], "a.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/c\ndevices:\n"
		   "- {name: dup, containerEdits: {env: [A=1]}}\n"
		   "- {name: one, containerEdits: {env: [ONE=1]}}\n",
		   0644);
	write_file(f->dirs[0], "b.json",
		   "{\"cdiVersion\": \"0.3.0\", \"kind\": \"v.com/c\", \"devices\": "
		   "[{\"name\": \"dup\", \"containerEdits\": {\"env\": [\"B=1\"]}}]}",
		   0644);
	write_file(f->dirs[0], "bad.yaml", "cdiVersion: 0.3.0\nkind: [\n", 0644);
	reg = load(f, false);
	assert_int_equal(ts_cdi_inject_requested(reg, config, "config.json", false, NULL, &err),
			 -EINVAL);
	assert_true(asprintf(&want,
			     "config.json: '/annotations/cdi.k8s.io~1a': unresolvable CDI devices "
			     "v.com/c=dup (v.com/c=dup is defined by 2 spec files of the same dir: "
			     "%s/a.yaml, %s/b.json)",
			     f->dirs[0], f->dirs[0]) > 0);
	assert_string_equal(err->msg, want);
	ts_cdi_registry_free(reg);
}

/* A failure half-way (second device's host node missing): ts_cdi_inject() leaves config
 * untouched; the create's ts_cdi_inject_requested() gives the same error. */
static void test_all_or_nothing(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *before = NULL, *after = NULL, *want = NULL;
	cleanup_json struct ts_json *config =
		parse("{\"annotations\":{\"cdi.k8s.io/a\":\"v.com/c=ok,v.com/c=gone\"}}");
	cleanup_json struct ts_json *scratch = ts_json_dup(config);

	write_file(f->dirs[0], "v.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/c\ncontainerEdits: {env: [SPEC=1]}\ndevices:\n"
		   "- {name: ok, containerEdits: {env: [OK=1]}}\n"
		   "- {name: gone, containerEdits: {deviceNodes: [{path: /dev/ts-cdi-gone}]}}\n",
		   0644);
	reg = load(f, false);
	before = ser(config);
	/* the create's call edits in place (its config is dropped on failure):
	 * the same error, after the annotation that asked (helper-20) */
	assert_int_equal(ts_cdi_inject_requested(reg, scratch, "config.json", false, NULL, &err),
			 -ENOENT);
	assert_true(asprintf(&want,
			     "%s/v.yaml: '/devices/1/containerEdits/deviceNodes/0': host device "
			     "'/dev/ts-cdi-gone' does not exist",
			     f->dirs[0]) > 0);
	{
		cleanup_free char *asked = NULL;

		assert_true(asprintf(&asked,
				     "config.json: '/annotations/cdi.k8s.io~1a': CDI device "
				     "'v.com/c=gone': %s",
				     want) > 0);
		assert_string_equal(err->msg, asked);
	}
	ts_error_clear(&err);
	/* ts_cdi_inject() applies to a copy: the config is untouched; it has
	 * no annotation to name */
	assert_int_equal(ts_cdi_inject(reg, config,
				       (const char *const[]){"v.com/c=ok", "v.com/c=gone"}, 2,
				       "config.json", NULL, &err),
			 -ENOENT);
	assert_string_equal(err->msg, want);
	after = ser(config);
	assert_string_equal(before, after);
	ts_cdi_registry_free(reg);
}

/* A device the engine injected already (podman --device) is not injected twice. */
static void test_engine_injected(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_injection *inj = NULL;
	cleanup_free char *before = NULL, *after = NULL;
	cleanup_json struct ts_json *config = parse(
		"{\"process\":{\"env\":[\"SPEC=1\",\"D=1\"]},\"linux\":{\"devices\":[{\"path\":"
		"\"/dev/d\",\"type\":\"c\",\"major\":1,\"minor\":1}]},\"hooks\":{\"prestart\":[{"
		"\"path\":\"/h\"}]}}");

	write_file(f->dirs[0], "v.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/c\ncontainerEdits: {env: [SPEC=1]}\ndevices:\n"
		   "- name: d\n  containerEdits:\n    env: [D=1]\n"
		   "    deviceNodes: [{path: /dev/d, type: c, major: 1, minor: 1}]\n"
		   "    hooks: [{hookName: prestart, path: /h}]\n"
		   "- {name: e, containerEdits: {env: [E=1], hooks: [{hookName: prestart, path: "
		   "/h}]}}\n",
		   0644);
	reg = load(f, false);
	before = ser(config);
	assert_int_equal(ts_cdi_inject(reg, config, (const char *const[]){"v.com/c=d"}, 1,
				       "config.json", &inj, &err),
			 0);
	after = ser(config);
	assert_string_equal(before, after);
	assert_true(inj->devices[0].engine_injected);
	assert_int_equal(inj->devices[0].n_nodes, 1);
	assert_string_equal(inj->devices[0].nodes[0].host_path, "/dev/d");
	inj = ts_cdi_injection_free(inj);

	assert_int_equal(ts_cdi_inject(reg, config, (const char *const[]){"v.com/c=d", "v.com/c=e"},
				       2, "config.json", &inj, &err),
			 1);
	assert_true(inj->devices[0].engine_injected);
	assert_false(inj->devices[1].engine_injected);
	assert_json(ts_json_get_path(config, "process", "env", NULL),
		    "[\"SPEC=1\",\"D=1\",\"E=1\"]");
	/* the engine's hook is left as it is; ours gets the default env */
	assert_json(ts_json_get(config, "hooks"),
		    "{\"prestart\":[{\"path\":\"/h\"},{\"path\":\"/"
		    "h\",\"env\":[\"" TS_CDI_HOOK_DEFAULT_ENV "\"]}]}");
	ts_cdi_injection_free(inj);
	ts_cdi_registry_free(reg);
}

/* What an engine's own CDI injection leaves: a later device's value for a
 * variable both set (IDX=b) and the first device's hook once.  Both devices
 * count as injected: nothing is applied again, no hook doubles.  And a
 * device whose only node the user added by hand (podman --device
 * /dev/full) is not injected while its spec-level edits are missing. */
static void test_engine_injected_more(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_injection *inj = NULL;
	cleanup_free char *before = NULL, *after = NULL;
	cleanup_json struct ts_json *config =
		parse("{\"process\":{\"env\":[\"IDX=b\"]},\"hooks\":{\"prestart\":[{\"path\":"
		      "\"/bin/hk-a\"}]}}");
	cleanup_json struct ts_json *by_hand =
		parse("{\"linux\":{\"devices\":[{\"path\":\"/dev/full\",\"type\":\"c\","
		      "\"major\":1,\"minor\":7}]}}");

	write_file(f->dirs[0], "ev.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/ev\ndevices:\n"
		   "- {name: a, containerEdits: {env: [IDX=a], hooks: [{hookName: prestart, path: "
		   "/bin/hk-a}]}}\n"
		   "- {name: b, containerEdits: {env: [IDX=b]}}\n",
		   0644);
	write_file(f->dirs[0], "g.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/g\ncontainerEdits: {env: [GPU_LIBS=1]}\n"
		   "devices:\n- {name: g0, containerEdits: {deviceNodes: [{path: /dev/full}]}}\n",
		   0644);
	reg = load(f, false);
	before = ser(config);
	assert_int_equal(ts_cdi_inject(reg, config,
				       (const char *const[]){"v.com/ev=a", "v.com/ev=b"}, 2,
				       "config.json", &inj, &err),
			 0);
	after = ser(config);
	assert_string_equal(before, after);
	assert_true(inj->devices[0].engine_injected);
	assert_true(inj->devices[1].engine_injected);
	inj = ts_cdi_injection_free(inj);

	assert_int_equal(ts_cdi_inject(reg, by_hand, (const char *const[]){"v.com/g=g0"}, 1,
				       "config.json", &inj, &err),
			 1);
	assert_false(inj->devices[0].engine_injected);
	assert_json(ts_json_get_path(by_hand, "process", "env", NULL), "[\"GPU_LIBS=1\"]");
	ts_cdi_injection_free(inj);
	ts_cdi_registry_free(reg);
}

/* helper-18: a node is the engine's only when it is what the injection
 * would leave.  An entry at its path from another host node (podman
 * --device /dev/full:/dev/x) does not hide it: it is replaced.  In a user
 * namespace the node is a bind mount of its host path, which a create of
 * the same bundle again finds: nothing doubles. */
static void test_engine_injected_node(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_injection *inj = NULL;
	cleanup_free char *once = NULL, *twice = NULL;
	cleanup_json struct ts_json *other = parse(
		"{\"process\":{\"env\":[\"Z=1\"]},\"linux\":{\"devices\":[{\"path\":\"/dev/"
		"xz\",\"type\":\"c\",\"major\":1,\"minor\":7}]},\"hooks\":{\"createContainer\":[{"
		"\"path\":\"/h\"}]}}");
	cleanup_json struct ts_json *userns =
		parse("{\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}");

	write_file(f->dirs[0], "z.yaml",
		   "cdiVersion: 0.6.0\nkind: v.com/z\ndevices:\n"
		   "- {name: z, containerEdits: {env: [Z=1], deviceNodes: [{path: /dev/xz, "
		   "hostPath: /dev/zero}], hooks: [{hookName: createContainer, path: /h}]}}\n",
		   0644);
	reg = load(f, false);
	assert_int_equal(ts_cdi_inject(reg, other, (const char *const[]){"v.com/z=z"}, 1,
				       "config.json", &inj, &err),
			 1);
	assert_false(inj->devices[0].engine_injected);
	assert_json(ts_json_get_path(other, "linux", "devices", NULL),
		    "[{\"path\":\"/dev/xz\",\"type\":\"c\",\"major\":1,\"minor\":5,"
		    "\"fileMode\":438}]");
	inj = ts_cdi_injection_free(inj);
	/* injected so, it is found the next time */
	assert_int_equal(ts_cdi_inject(reg, other, (const char *const[]){"v.com/z=z"}, 1,
				       "config.json", &inj, &err),
			 0);
	assert_true(inj->devices[0].engine_injected);
	inj = ts_cdi_injection_free(inj);

	assert_int_equal(ts_cdi_inject(reg, userns, (const char *const[]){"v.com/z=z"}, 1,
				       "config.json", &inj, &err),
			 1);
	inj = ts_cdi_injection_free(inj);
	once = ser(userns);
	assert_non_null(strstr(once, "{\"destination\":\"/dev/xz\",\"type\":\"bind\","
				     "\"source\":\"/dev/zero\",\"options\":[\"bind\"]}"));
	assert_int_equal(ts_cdi_inject(reg, userns, (const char *const[]){"v.com/z=z"}, 1,
				       "config.json", &inj, &err),
			 0);
	assert_true(inj->devices[0].engine_injected);
	twice = ser(userns);
	assert_string_equal(once, twice);
	ts_cdi_injection_free(inj);
	ts_cdi_registry_free(reg);
}

/* Directory rules: non-recursive, exact suffixes, missing dir skipped, bad dir reported. */
static void test_dir_rules(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	const char *const *names;
	cleanup_free char *sub = NULL, *notdir = NULL;
	static const char spec[] = "cdiVersion: 0.3.0\nkind: v.com/c\n"
				   "devices: [{name: a, containerEdits: {env: [A=1]}}]\n";
	char *dirs[4] = {NULL};
	struct ts_cdi_options opts = {.spec_dirs = dirs};
	cleanup_error struct ts_error *err = NULL;

	assert_true(asprintf(&sub, "%s/sub.json", f->dirs[0]) > 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_file(sub, "deep.json", "{}", 0644);
	write_file(f->dirs[0], "x.yml", spec, 0644);
	write_file(f->dirs[0], "x.yaml~", spec, 0644);
	write_file(f->dirs[0], "x.JSON", spec, 0644);
	write_file(f->dirs[0], "x.yaml", spec, 0644);
	assert_true(asprintf(&notdir, "%s/x.yaml", f->dirs[0]) > 0);
	dirs[0] = f->dirs[0];
	dirs[1] = (char *)"/nonexistent/cdi";
	dirs[2] = notdir;
	assert_int_equal(ts_cdi_registry_load(&opts, &reg, &err), 0);
	assert_int_equal(ts_cdi_registry_devices(reg, &names), 1);
	assert_string_equal(names[0], "v.com/c=a");
	assert_int_equal(n_problems(reg), 1);
	assert_problem(reg, 0, notdir, NULL, "cannot open spec dir: Not a directory");
	ts_cdi_registry_free(reg);
}

/* 20 unknown names: the message lists 16 and counts the rest (a request of
 * 40,000 made a 1 MB line before the request bound existed). */
static void test_unresolvable_list_is_cut(void **state)
{
	struct fixture *f = *state;
	cleanup_json struct ts_json *config = parse("{}");
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_registry *reg = load(f, false);
	char bufs[20][32], want[1024] = "unresolvable CDI devices ";
	const char *names[20];

	for (int i = 0; i < 20; i++) {
		snprintf(bufs[i], sizeof(bufs[i]), "v.com/c=d%d", i);
		names[i] = bufs[i];
		if (i < 16)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s",
				 i ? ", " : "", bufs[i]);
	}
	strcat(want, " and 4 more");
	assert_int_equal(ts_cdi_inject(reg, config, names, 20, "config.json", NULL, &err), -EINVAL);
	assert_string_equal(err->msg, want);
	ts_cdi_registry_free(reg);
}

/*
 * A YAML alias bomb (a 64 KiB scalar aliased 200,000 times) next to a good
 * spec: a problem of its own file, the registry loads, the good device
 * injects.  Before: 34 s, 12.8 GB, and the whole load failed "out of memory".
 */
static void test_bomb_does_not_fail_the_registry(void **state)
{
	struct fixture *f = *state;
	cleanup_json struct ts_json *config = parse("{}");
	cleanup_error struct ts_error *err = NULL;
	struct ts_cdi_registry *reg;
	char *bomb, *p;

	bomb = malloc(65536 + 200000 * 3 + 128);
	assert_non_null(bomb);
	p = bomb + sprintf(bomb, "cdiVersion: \"0.6.0\"\nkind: evil.test/bomb\nx: &a \"");
	memset(p, 'A', 65536);
	p += 65536;
	p += sprintf(p, "\"\ndevices: [*a");
	for (int i = 1; i < 200000; i++)
		p += sprintf(p, ",*a");
	strcpy(p, "]\n");
	write_file(f->dirs[0], "bomb.yaml", bomb, 0644);
	free(bomb);
	write_file(f->dirs[0], "good.yaml",
		   "cdiVersion: 0.3.0\nkind: v.com/c\n"
		   "devices: [{name: a, containerEdits: {env: [A=1]}}]\n",
		   0644);
	reg = load(f, false);
	assert_string_equal(resolved_by(reg, "v.com/c=a"), "good.yaml");
	assert_int_equal(n_problems(reg), 1);
	assert_problem(reg, 0, f->dirs[0], "bomb.yaml",
		       "line 3 column 4: document expands to more than 16777216 bytes (aliases)");
	assert_int_equal(ts_cdi_inject(reg, config, (const char *const[]){"v.com/c=a"}, 1,
				       "config.json", NULL, &err),
			 1);
	assert_json(ts_json_get_path(config, "process", "env", NULL), "[\"A=1\"]");
	ts_cdi_registry_free(reg);
}

/* Spec files and dirs a non-root user could write are refused, with path and mode. */
static void test_security(void **state)
{
	struct fixture *f = *state;
	struct ts_cdi_registry *reg;
	cleanup_free char *path = NULL;
	static const char spec[] = "cdiVersion: 0.3.0\nkind: v.com/c\n"
				   "devices: [{name: %s, containerEdits: {env: [A=1]}}]\n";
	char text[256];

	snprintf(text, sizeof(text), spec, "good");
	write_file(f->dirs[0], "good.yaml", text, 0644);
	snprintf(text, sizeof(text), spec, "ww");
	write_file(f->dirs[0], "ww.yaml", text, 0666);
	snprintf(text, sizeof(text), spec, "user");
	write_file(f->dirs[0], "user.yaml", text, 0644);
	assert_true(asprintf(&path, "%s/user.yaml", f->dirs[0]) > 0);
	assert_int_equal(chown(path, 1000, 1000), 0);
	snprintf(text, sizeof(text), spec, "run");
	write_file(f->dirs[1], "run.yaml", text, 0644);
	assert_int_equal(chmod(f->dirs[1], 01777), 0);

	reg = load(f, true);
	assert_string_equal(resolved_by(reg, "v.com/c=good"), "good.yaml");
	assert_null(resolved_by(reg, "v.com/c=ww"));
	assert_null(resolved_by(reg, "v.com/c=user"));
	assert_null(resolved_by(reg, "v.com/c=run"));
	assert_int_equal(n_problems(reg), 3);
	assert_problem(reg, 0, f->dirs[0], "user.yaml",
		       "refusing spec file not owned by root (owner uid 1000, mode 0644)");
	assert_problem(reg, 1, f->dirs[0], "ww.yaml",
		       "refusing spec file writable by non-root (mode 0666, gid 0)");
	assert_problem(reg, 2, f->dirs[1], NULL,
		       "refusing spec dir writable by non-root (mode 1777, gid 0)");
	ts_cdi_registry_free(reg);

	reg = load(f, false);
	assert_int_equal(n_problems(reg), 0);
	assert_non_null(resolved_by(reg, "v.com/c=ww"));
	assert_non_null(resolved_by(reg, "v.com/c=user"));
	assert_non_null(resolved_by(reg, "v.com/c=run"));
	ts_cdi_registry_free(reg);
}

static const struct opt_row {
	const char *config;
	const char *want; /* "dirs|root|env" or the error */
} opts_rows[] = {
	{"{}", "/etc/cdi,/var/run/cdi|1|0|/run/toposhim/cdi-index"},
	{"{\"cdi\":{}}", "/etc/cdi,/var/run/cdi|1|0|/run/toposhim/cdi-index"},
	{"{\"cdi\":{\"index_path\":null}}", "/etc/cdi,/var/run/cdi|1|0|(null)"},
	{"{\"cdi\":{\"index_path\":\"/s/i\"}}", "/etc/cdi,/var/run/cdi|1|0|/s/i"},
	{"{\"cdi\":{\"index_path\":\"s\"}}", "t.json: '/cdi/index_path': not absolute 's'"},
	{"{\"cdi\":{\"spec_dirs\":[\"/a\",\"/b/c\"],\"require_root_owned\":false,"
	 "\"env_requests\":true}}",
	 "/a,/b/c|0|1|/run/toposhim/cdi-index"},
	{"{\"cdi\":{\"spec_dirs\":[]}}", "|1|0|/run/toposhim/cdi-index"},
	{"{\"cdi\":{\"spec_dirs\":[\"rel\"]}}", "t.json: '/cdi/spec_dirs/0': not absolute 'rel'"},
	{"{\"cdi\":{\"spec_dirs\":\"/a\"}}",
	 "t.json: '/cdi/spec_dirs': expected array, got string"},
	{"{\"cdi\":{\"require_root_owned\":1}}",
	 "t.json: '/cdi/require_root_owned': expected boolean, got number"},
	{"{\"cdi\":{\"spec_dir\":[]}}", "t.json: '/cdi/spec_dir': unknown key 'spec_dir'"},
	{"{\"cdi\":[]}", "t.json: '/cdi': expected object, got array"},
};

static void test_options_from_config(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(opts_rows); i++) {
		cleanup_json struct ts_json *config = parse(opts_rows[i].config);
		cleanup_error struct ts_error *err = NULL;
		struct ts_cdi_options o = {0};
		char got[256] = "";
		int r = ts_cdi_options_from_config(config, "t.json", &o, &err);

		if (r < 0) {
			if (strcmp(err->msg, opts_rows[i].want) != 0)
				fail_msg("%s: want '%s', got '%s'", opts_rows[i].config,
					 opts_rows[i].want, err->msg);
			continue;
		}
		for (char **d = o.spec_dirs; *d != NULL; d++) {
			if (d != o.spec_dirs)
				strcat(got, ",");
			strcat(got, *d);
		}
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "|%d|%d|%s",
			 o.require_root_owned, o.env_requests,
			 o.index_path ? o.index_path : "(null)");
		if (strcmp(got, opts_rows[i].want) != 0)
			fail_msg("%s: want '%s', got '%s'", opts_rows[i].config, opts_rows[i].want,
				 got);
		ts_cdi_options_release(&o);
	}
}

int main(void)
{
	const struct ts_test tests[] = {
		{cmocka_unit_test_setup_teardown(test_e1_inject_several_devices, setup, teardown),
		 TS_NEEDS_CORPUS},
		{cmocka_unit_test_setup_teardown(test_e1_unresolvable_and_retry, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_e2_conflict_in_one_dir, setup, teardown),
		 TS_NEEDS_CORPUS},
		{cmocka_unit_test_setup_teardown(test_e3_override_across_dirs, setup, teardown),
		 TS_NEEDS_CORPUS},
		{cmocka_unit_test_setup_teardown(test_conflict_overridden_by_later_dir, setup,
						 teardown),
		 TS_NEEDS_CORPUS},
		{cmocka_unit_test_setup_teardown(test_e4_two_vendors, setup, teardown),
		 TS_NEEDS_CORPUS},
		{cmocka_unit_test_setup_teardown(test_e5_podman_mount, setup, teardown),
		 TS_NEEDS_CORPUS},
		{cmocka_unit_test_setup_teardown(test_e6_crio, setup, teardown), TS_NEEDS_CORPUS},
		{cmocka_unit_test_setup_teardown(test_unresolvable_names_the_kind_file, setup,
						 teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_all_or_nothing, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_unresolvable_conflict, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_engine_injected, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_engine_injected_more, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_engine_injected_node, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_unresolvable_hides_unreadable, setup,
						 teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_dir_rules, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_security, setup, teardown), TS_NEEDS_ROOT},
		{cmocka_unit_test_setup_teardown(test_unresolvable_list_is_cut, setup, teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test_setup_teardown(test_bomb_does_not_fail_the_registry, setup,
						 teardown),
		 TS_NEEDS_NOTHING},
		{cmocka_unit_test(test_options_from_config), TS_NEEDS_NOTHING},
	};
	return ts_run_selected("test-registry", tests, ARRAY_SIZE(tests));
}
