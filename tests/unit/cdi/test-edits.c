/*
 * Unit tests of src/cdi/edits.c: container edits applied to an OCI config,
 * including every case of E7 in ../shared/corpus/cdi/INDEX.md (the
 * reference's TestApplyContainerEdits, main semantics).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cdi/cdi.h"
#include "util/cleanup.h"

#define PATH_ENV TS_CDI_HOOK_DEFAULT_ENV

static const struct edit_row {
	const char *name;
	const char *config;
	const char *edits;
	const char *want; /* compact JSON of the config after, or the error message */
	int want_ret;
} rows[] = {
	/* E7: env */
	{"env into empty spec", "{}", "{\"env\":[\"BAR=BARVALUE1\"]}",
	 "{\"process\":{\"env\":[\"BAR=BARVALUE1\"]}}", 0},
	{"env replaces its own earlier entry", "{}", "{\"env\":[\"FOO=old\",\"FOO=new\"]}",
	 "{\"process\":{\"env\":[\"FOO=new\"]}}", 0},
	{"env replaces in place (main)", "{\"process\":{\"env\":[\"FOO=old\",\"BAR=old\"]}}",
	 "{\"env\":[\"FOO=new\"]}", "{\"process\":{\"env\":[\"FOO=new\",\"BAR=old\"]}}", 0},
	/* E7: device nodes */
	{"device filled from the host", "{}", "{\"deviceNodes\":[{\"path\":\"/dev/null\"}]}",
	 "{\"linux\":{\"devices\":[{\"path\":\"/dev/null\",\"type\":\"c\",\"major\":1,\"minor\":3,"
	 "\"fileMode\":438}],\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":"
	 "1,"
	 "\"minor\":3,\"access\":\"rwm\"}]}}}",
	 0},
	{"permissions none: node without allow rule", "{}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/nil\",\"type\":\"c\",\"major\":1,\"minor\":3,"
	 "\"permissions\":\"none\"}]}",
	 "{\"linux\":{\"devices\":[{\"path\":\"/dev/"
	 "nil\",\"type\":\"c\",\"major\":1,\"minor\":3}]}}",
	 0},
	{"permissions with a repeated letter: each once in the rule", "{}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/nil\",\"type\":\"c\",\"major\":1,\"minor\":3,"
	 "\"permissions\":\"wrw\"}]}",
	 "{\"linux\":{\"devices\":[{\"path\":\"/dev/nil\",\"type\":\"c\",\"major\":1,"
	 "\"minor\":3}],\"resources\":{\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":1,"
	 "\"minor\":3,\"access\":\"rw\"}]}}}",
	 0},
	{"process uid/gid own the node, permissions kept",
	 "{\"process\":{\"user\":{\"uid\":1000,\"gid\":0}}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/x\",\"type\":\"b\",\"major\":7,\"minor\":8,"
	 "\"fileMode\":416,\"permissions\":\"rw\"}]}",
	 "{\"process\":{\"user\":{\"uid\":1000,\"gid\":0}},\"linux\":{\"devices\":[{\"path\":\"/"
	 "dev/"
	 "x\",\"type\":\"b\",\"major\":7,\"minor\":8,\"fileMode\":416,\"uid\":1000}],\"resources\":"
	 "{"
	 "\"devices\":[{\"allow\":true,\"type\":\"b\",\"major\":7,\"minor\":8,\"access\":\"rw\"}]}}"
	 "}",
	 0},
	{"same path replaced: removed, then added last",
	 "{\"linux\":{\"devices\":[{\"path\":\"/dev/x\"},{\"path\":\"/dev/null\"}]}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/x\",\"type\":\"c\",\"major\":1,\"minor\":5,"
	 "\"uid\":0,\"gid\":5}]}",
	 "{\"linux\":{\"devices\":[{\"path\":\"/dev/null\"},{\"path\":\"/dev/x\",\"type\":\"c\","
	 "\"major\":1,\"minor\":5,\"uid\":0,\"gid\":5}],\"resources\":{\"devices\":[{\"allow\":"
	 "true,"
	 "\"type\":\"c\",\"major\":1,\"minor\":5,\"access\":\"rwm\"}]}}}",
	 0},
	{"fifo and unknown types get no rule", "{}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/p\",\"type\":\"p\"},{\"path\":\"/dev/"
	 "u\",\"type\":\"u\","
	 "\"major\":4,\"minor\":1}]}",
	 "{\"linux\":{\"devices\":[{\"path\":\"/dev/p\",\"type\":\"p\",\"major\":0,\"minor\":0},{"
	 "\"path\":\"/dev/u\",\"type\":\"u\",\"major\":4,\"minor\":1}]}}",
	 0},
	{"host type mismatch", "{}", "{\"deviceNodes\":[{\"path\":\"/dev/null\",\"type\":\"b\"}]}",
	 "s.yaml: '/devices/0/containerEdits/deviceNodes/0/type': 'b' but host device '/dev/null' "
	 "has type 'c'",
	 -EINVAL},
	{"host path not a device", "{}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/x\",\"hostPath\":\"/etc/passwd\"}]}",
	 "s.yaml: '/devices/0/containerEdits/deviceNodes/0': host path '/etc/passwd' is not a "
	 "device node",
	 -EINVAL},
	{"host path missing", "{}", "{\"deviceNodes\":[{\"path\":\"/dev/does-not-exist\"}]}",
	 "s.yaml: '/devices/0/containerEdits/deviceNodes/0': host device "
	 "'/dev/does-not-exist' does not exist",
	 -ENOENT},
	{"config member of the wrong type", "{\"process\":{\"env\":\"x\"}}", "{\"env\":[\"A=1\"]}",
	 "config.json: '/process/env': expected array, got string", -EINVAL},
	/* a user namespace: the runtime binds nodes from the host at their container path */
	{"user namespace, hostPath != path: a bind mount of hostPath, the old entries gone",
	 "{\"mounts\":[{\"destination\":\"/dev\",\"type\":\"tmpfs\"},{\"destination\":"
	 "\"/dev/xzero\",\"type\":\"bind\",\"source\":\"/tmp\"},{\"destination\":\"/sys\"}],"
	 "\"linux\":{\"namespaces\":[{\"type\":\"user\"}],\"devices\":[{\"path\":\"/dev/"
	 "xzero\"},{\"path\":\"/dev/null\"},{\"path\":\"/dev/xzero\"}]}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/xzero\",\"hostPath\":\"/dev/zero\",\"fileMode\":"
	 "384,\"uid\":7}]}",
	 "{\"mounts\":[{\"destination\":\"/dev\",\"type\":\"tmpfs\"},{\"destination\":\"/"
	 "sys\"},{\"destination\":\"/dev/xzero\",\"type\":\"bind\",\"source\":\"/dev/zero\","
	 "\"options\":[\"bind\"]}],\"linux\":{\"namespaces\":[{\"type\":\"user\"}],"
	 "\"devices\":[{\"path\":\"/dev/null\"}],\"resources\":{\"devices\":[{\"allow\":true,"
	 "\"type\":\"c\",\"major\":1,\"minor\":5,\"access\":\"rwm\"}]}}}",
	 0},
	{"user namespace, hostPath == path: a linux.devices entry, the runtime binds it",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/null\",\"hostPath\":\"/dev/null\","
	 "\"permissions\":\"none\"}]}",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"user\"}],\"devices\":[{\"path\":\"/dev/"
	 "null\",\"type\":\"c\",\"major\":1,\"minor\":3,\"fileMode\":438}]}}",
	 0},
	{"user namespace, hostPath missing though numbers are given: refused here, not in the "
	 "runtime",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/x\",\"hostPath\":\"/dev/does-not-exist\","
	 "\"type\":\"c\",\"major\":10,\"minor\":200}]}",
	 "s.yaml: '/devices/0/containerEdits/deviceNodes/0': host device "
	 "'/dev/does-not-exist' does not exist",
	 -ENOENT},
	{"user namespace, numbers that are not the host node's",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/x\",\"hostPath\":\"/dev/zero\",\"type\":\"c\","
	 "\"major\":1,\"minor\":3}]}",
	 "s.yaml: '/devices/0/containerEdits/deviceNodes/0': 1:3 but host device '/dev/zero' is "
	 "1:5, which a user namespace binds as it is",
	 -EINVAL},
	{"user namespace, a node the runtime makes itself: refused",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/null\",\"hostPath\":\"/dev/zero\"}]}",
	 "s.yaml: '/devices/0/containerEdits/deviceNodes/0/path': '/dev/null' is a node the "
	 "runtime makes itself: in a user namespace it binds the host's '/dev/null' over this one "
	 "from '/dev/zero'",
	 -EINVAL},
	{"user namespace, wrong /mounts type",
	 "{\"mounts\":{},\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}",
	 "{\"deviceNodes\":[{\"path\":\"/dev/xzero\",\"hostPath\":\"/dev/zero\"}]}",
	 "config.json: '/mounts': expected array, got object", -EINVAL},
	/* E7: mounts */
	{"mount into empty spec", "{}",
	 "{\"mounts\":[{\"hostPath\":\"/dev/host-vendorctl\",\"containerPath\":\"/dev/"
	 "cntr-vendorctl\"}]}",
	 "{\"mounts\":[{\"destination\":\"/dev/cntr-vendorctl\",\"type\":\"bind\",\"source\":\"/"
	 "dev/host-vendorctl\",\"options\":[\"rbind\"]}]}",
	 0},
	/* issue 14: no type and no bind option is a bind mount (the reference
	 * passes it on, and runc fails "no such device"); "ro" only when asked */
	{"mount without type: options kept after rbind", "{}",
	 "{\"mounts\":[{\"hostPath\":\"/h\",\"containerPath\":\"/c\",\"options\":[\"ro\","
	 "\"nosuid\"]}]}",
	 "{\"mounts\":[{\"destination\":\"/c\",\"type\":\"bind\",\"source\":\"/h\",\"options\":"
	 "[\"rbind\",\"ro\",\"nosuid\"]}]}",
	 0},
	{"mount without type but with bind: as it is", "{}",
	 "{\"mounts\":[{\"hostPath\":\"/h\",\"containerPath\":\"/c\",\"options\":[\"ro\","
	 "\"bind\"]}]}",
	 "{\"mounts\":[{\"destination\":\"/c\",\"source\":\"/h\",\"options\":[\"ro\",\"bind\"]"
	 "}]}",
	 0},
	{"mount with a type and no options: as it is", "{}",
	 "{\"mounts\":[{\"hostPath\":\"tmpfs\",\"containerPath\":\"/t\",\"type\":\"tmpfs\"}]}",
	 "{\"mounts\":[{\"destination\":\"/t\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"}]}", 0},
	{"mounts sorted by depth",
	 "{\"mounts\":[{\"destination\":\"/dest/path/b\"},{\"destination\":\"/dest/path/a\"}]}",
	 "{\"mounts\":[{\"hostPath\":\"/h\",\"containerPath\":\"/dest/edit\"}]}",
	 "{\"mounts\":[{\"destination\":\"/dest/edit\",\"type\":\"bind\",\"source\":\"/h\","
	 "\"options\":[\"rbind\"]},{\"destination\":\"/dest/path/b\"},{\"destination\":\"/dest/"
	 "path/a\"}]}",
	 0},
	{"mount sort is stable",
	 "{\"mounts\":[{\"destination\":\"/dest/path/c\"},{\"destination\":\"/dest/path/b\"}]}",
	 "{\"mounts\":[{\"hostPath\":\"/h\",\"containerPath\":\"/dest/path/a\"}]}",
	 "{\"mounts\":[{\"destination\":\"/dest/path/c\"},{\"destination\":\"/dest/path/b\"},{"
	 "\"destination\":\"/dest/path/a\",\"type\":\"bind\",\"source\":\"/h\",\"options\":["
	 "\"rbind\"]}]}",
	 0},
	{"same destination replaced, type and options kept",
	 "{\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\"},{\"destination\":\"/x/\"},{"
	 "\"destination\":\"/x\"}]}",
	 "{\"mounts\":[{\"hostPath\":\"tmpfs\",\"containerPath\":\"/x\",\"type\":\"tmpfs\","
	 "\"options\":[\"nosuid\"]}]}",
	 "{\"mounts\":[{\"destination\":\"/proc\",\"type\":\"proc\"},{\"destination\":\"/x/\"},{"
	 "\"destination\":\"/"
	 "x\",\"type\":\"tmpfs\",\"source\":\"tmpfs\",\"options\":[\"nosuid\"]}]}",
	 0},
	{"empty type and options: a bind mount", "{}",
	 "{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"/"
	 "b\",\"type\":\"\",\"options\":[]}]}",
	 "{\"mounts\":[{\"destination\":\"/b\",\"type\":\"bind\",\"source\":\"/a\",\"options\":["
	 "\"rbind\"]}]}",
	 0},
	{"user namespace: bind mounts id-mapped (main)",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"user\"}]}}",
	 "{\"mounts\":[{\"hostPath\":\"/a\",\"containerPath\":\"/"
	 "a\",\"type\":\"bind\"},{\"hostPath\":"
	 "\"/b\",\"containerPath\":\"/b\",\"type\":\"bind\",\"options\":[\"rbind\"]}]}",
	 "{\"linux\":{\"namespaces\":[{\"type\":\"user\"}]},\"mounts\":[{\"destination\":\"/a\","
	 "\"type\":\"bind\",\"source\":\"/a\",\"options\":[\"idmap\"]},{\"destination\":\"/b\","
	 "\"type\":\"bind\",\"source\":\"/b\",\"options\":[\"rbind\",\"ridmap\"]}]}",
	 0},
	/* E7: hooks, intelRdt, netDevices, additionalGids */
	{"hooks appended per hookName", "{\"hooks\":{\"prestart\":[{\"path\":\"/old\"}]}}",
	 "{\"hooks\":[{\"hookName\":\"prestart\",\"path\":\"/p\",\"args\":[\"p\",\"-v\"],\"env\":["
	 "\"A=1\"],\"timeout\":5},{\"hookName\":\"poststop\",\"path\":\"/s\"},{\"hookName\":"
	 "\"createRuntime\",\"path\":\"/c\"},{\"hookName\":\"prestart\",\"path\":\"/p2\"}]}",
	 "{\"hooks\":{\"prestart\":[{\"path\":\"/old\"},{\"path\":\"/p\",\"args\":[\"p\",\"-v\"],"
	 "\"env\":[\"A=1\"],\"timeout\":5},{\"path\":\"/p2\",\"env\":[\"" PATH_ENV "\"]}],"
	 "\"poststop\":[{\"path\":\"/s\",\"env\":[\"" PATH_ENV "\"]}],\"createRuntime\":[{"
	 "\"path\":\"/c\",\"env\":[\"" PATH_ENV "\"]}]}}",
	 0},
	/* runc 1.1 gives a hook without env the container's env (the image's LD_PRELOAD):
	 * absent, null and [] all become the default env */
	{"hook env absent, null or [] becomes the default", "{}",
	 "{\"hooks\":[{\"hookName\":\"createContainer\",\"path\":\"/a\"},{\"hookName\":"
	 "\"createContainer\",\"path\":\"/b\",\"env\":null},{\"hookName\":\"createContainer\","
	 "\"path\":\"/c\",\"env\":[]}]}",
	 "{\"hooks\":{\"createContainer\":[{\"path\":\"/a\",\"env\":[\"" PATH_ENV "\"]},{"
	 "\"path\":\"/b\",\"env\":[\"" PATH_ENV "\"]},{\"path\":\"/c\",\"env\":[\"" PATH_ENV
	 "\"]}]}}",
	 0},
	{"intelRdt replaced",
	 "{\"linux\":{\"intelRdt\":{\"closID\":\"clos-1\",\"l3CacheSchema\":\"L3:0=ff\","
	 "\"schemata\":[\"L2:0=f\"],\"enableMonitoring\":true}}}",
	 "{\"intelRdt\":{\"closID\":\"clos-2\",\"l3CacheSchema\":\"L3:0=f\"}}",
	 "{\"linux\":{\"intelRdt\":{\"closID\":\"clos-2\",\"l3CacheSchema\":\"L3:0=f\"}}}", 0},
	{"netDevices merged by host name",
	 "{\"linux\":{\"netDevices\":{\"eno1\":{\"name\":\"netdev1\"}}}}",
	 "{\"netDevices\":[{\"hostInterfaceName\":\"eno1\",\"name\":\"netdev2\"},{"
	 "\"hostInterfaceName\":\"eno2\",\"name\":\"netdev1\"}]}",
	 "{\"linux\":{\"netDevices\":{\"eno1\":{\"name\":\"netdev2\"},\"eno2\":{\"name\":"
	 "\"netdev1\"}}}}",
	 0},
	{"additionalGids", "{}", "{\"additionalGids\":[4,5,6]}",
	 "{\"process\":{\"user\":{\"additionalGids\":[4,5,6]}}}", 0},
	{"additionalGids dedup with existing", "{\"process\":{\"user\":{\"additionalGids\":[4]}}}",
	 "{\"additionalGids\":[4,5]}", "{\"process\":{\"user\":{\"additionalGids\":[4,5]}}}", 0},
	{"additionalGids dedup in edits", "{}", "{\"additionalGids\":[4,5,6,5,6,4]}",
	 "{\"process\":{\"user\":{\"additionalGids\":[4,5,6]}}}", 0},
	{"additionalGids 0 skipped, no process created", "{}", "{\"additionalGids\":[0]}", "{}", 0},
};

static struct ts_json *parse(const char *text)
{
	struct ts_json *j = NULL;
	cleanup_error struct ts_error *err = NULL;

	if (ts_json_parse(text, strlen(text), "config.json", &j, &err) < 0)
		fail_msg("%s: %s", text, err->msg);
	return j;
}

static void test_edits_table(void **state)
{
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		cleanup_json struct ts_json *config = parse(rows[i].config);
		cleanup_json struct ts_json *edits = parse(rows[i].edits);
		cleanup_error struct ts_error *err = NULL;
		cleanup_free char *out = NULL;
		int r = ts_cdi_edits_apply(config, edits, "config.json", "s.yaml",
					   "/devices/0/containerEdits", NULL, NULL, &err);

		if (r != rows[i].want_ret)
			fail_msg("%s: want %d, got %d (%s)", rows[i].name, rows[i].want_ret, r,
				 err ? err->msg : "");
		if (r < 0) {
			if (strcmp(err->msg, rows[i].want) != 0)
				fail_msg("%s: want '%s', got '%s'", rows[i].name, rows[i].want,
					 err->msg);
			continue;
		}
		assert_int_equal(ts_json_serialize(config, false, &out, NULL, &err), 0);
		if (strcmp(out, rows[i].want) != 0)
			fail_msg("%s:\nwant %s\ngot  %s", rows[i].name, rows[i].want, out);
	}
}

/* A host path that is a symlink names its target (stat, not lstat). */
static void test_symlink_host_path(void **state)
{
	char dir[] = "/tmp/ts-cdi-edits-XXXXXX";
	cleanup_free char *link = NULL, *edits_text = NULL, *out = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *config = NULL, *edits = NULL;
	struct ts_cdi_host_node *nodes = NULL;
	size_t n_nodes = 0;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&link, "%s/by-path-zero", dir) > 0);
	assert_int_equal(symlink("/dev/zero", link), 0);
	assert_true(asprintf(&edits_text,
			     "{\"deviceNodes\":[{\"path\":\"/dev/xzero\",\"hostPath\":\"%s\"}]}",
			     link) > 0);
	config = parse("{}");
	edits = parse(edits_text);
	assert_int_equal(ts_cdi_edits_apply(config, edits, "config.json", "s.yaml", "/x", &nodes,
					    &n_nodes, &err),
			 0);
	assert_int_equal(ts_json_serialize(config, false, &out, NULL, &err), 0);
	assert_string_equal(out, "{\"linux\":{\"devices\":[{\"path\":\"/dev/xzero\",\"type\":\"c\","
				 "\"major\":1,\"minor\":5,\"fileMode\":438}],\"resources\":{"
				 "\"devices\":[{\"allow\":true,\"type\":\"c\",\"major\":1,"
				 "\"minor\":5,\"access\":\"rwm\"}]}}}");
	assert_int_equal(n_nodes, 1);
	assert_string_equal(nodes[0].host_path, link);
	assert_int_equal(nodes[0].type, 'c');
	assert_int_equal(nodes[0].major, 1);
	assert_int_equal(nodes[0].minor, 5);
	free(nodes[0].host_path);
	free(nodes);
	assert_int_equal(unlink(link), 0);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edits_table),
		cmocka_unit_test(test_symlink_host_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
