/* plain.c - the front's create and delete of plain containers; see plain.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/log.h"
#include "cli/passthrough.h"
#include "cli/plain.h"
#include "oci/bundle.h"
#include "state/plain.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* The kernel's range of cpu.shares (kubelet clamps to it too). */
#define SHARES_MIN 2
#define SHARES_MAX 262144

static bool no_duplicates(const struct ts_json *o)
{
	size_t i;

	return o == NULL || ts_json_object_find_duplicate(o, &i) == 0;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* An object member that is absent (NULL, *ret NULL) or an object without
 * duplicate keys (*ret); false for anything else. */
static bool object_or_absent(const struct ts_json *parent, const char *key,
			     const struct ts_json **ret)
{
	const struct ts_json *v = ts_json_get(parent, key);

	*ret = NULL;
	if (v == NULL)
		return true;
	if (v->type != TS_JSON_OBJECT || !no_duplicates(v))
		return false;
	*ret = v;
	return true;
}

static bool int_member(const struct ts_json *v, int64_t *ret)
{
	return v != NULL && v->type == TS_JSON_NUMBER && ts_json_get_int64(v, ret) >= 0;
}

/* linux.resources.cpu as plain: see plain.h. */
static bool plain_cpu(const struct ts_json *cpu, bool unified, const char **why)
{
	const char *key;
	struct ts_json *v;
	size_t i;

	ts_json_object_foreach (cpu, i, key, v) {
		int64_t n = 0;

		if (v->type == TS_JSON_NULL)
			continue;
		if (strcmp(key, "shares") == 0) {
			if (!int_member(v, &n) ||
			    (n != 0 && (unified || n < SHARES_MIN || n > SHARES_MAX))) {
				*why = "cpu shares the core translates";
				return false;
			}
		} else if (strcmp(key, "period") == 0) {
			if (!int_member(v, &n)) {
				*why = "cpu period not an integer";
				return false;
			}
		} else if (strcmp(key, "quota") == 0) {
			if (!int_member(v, &n) || n != 0) {
				*why = "a cpu quota";
				return false;
			}
		} else if (strcmp(key, "cpus") == 0 || strcmp(key, "mems") == 0) {
			if (v->type != TS_JSON_STRING || v->u.string[0] != '\0') {
				*why = "a cpuset of its own";
				return false;
			}
		} else {
			*why = "a cpu member toposhim does not judge here";
			return false;
		}
	}
	return true;
}

bool ts_cli_plain_config(const struct ts_json *oci, bool unified, const char **ret_why)
{
	const struct ts_json *annotations, *process, *linux_, *res, *cpu, *env, *item, *huge;
	const char *why = NULL, *key;
	struct ts_json *val;
	size_t i;

	if (ret_why == NULL)
		ret_why = &why;
	*ret_why = "not a JSON object without duplicate keys";
	if (oci == NULL || oci->type != TS_JSON_OBJECT || !no_duplicates(oci) ||
	    !object_or_absent(oci, "annotations", &annotations) ||
	    !object_or_absent(oci, "process", &process) ||
	    !object_or_absent(oci, "linux", &linux_) ||
	    !object_or_absent(linux_, "resources", &res) || !object_or_absent(res, "cpu", &cpu))
		return false;
	ts_json_object_foreach (annotations, i, key, val) {
		(void)val;
		if (starts_with(key, "cdi.k8s.io/") || starts_with(key, "toposhim.io/")) {
			*ret_why = key;
			return false;
		}
	}
	env = ts_json_get(process, "env");
	if (env != NULL && env->type != TS_JSON_ARRAY) {
		*ret_why = "process.env not an array";
		return false;
	}
	ts_json_array_foreach (env, i, item) {
		if (item->type != TS_JSON_STRING || starts_with(item->u.string, "TOPOSHIM_")) {
			*ret_why = "a TOPOSHIM_ variable in process.env";
			return false;
		}
	}
	if (ts_json_get(res, "unified") != NULL) {
		*ret_why = "linux.resources.unified";
		return false;
	}
	huge = ts_json_get(res, "hugepageLimits");
	if (huge != NULL && huge->type != TS_JSON_NULL &&
	    (huge->type != TS_JSON_ARRAY || huge->u.array.len > 0)) {
		*ret_why = "linux.resources.hugepageLimits";
		return false;
	}
	return plain_cpu(cpu, unified, ret_why);
}

/* plain.h: the tests' topologies, cgroup and proc trees, and test points. */
bool ts_cli_plain_overridden(void)
{
	static const char *const vars[] = {"TOPOSHIM_TOPOLOGY_XML", "TOPOSHIM_CGROUP_ROOT",
					   "TOPOSHIM_SYSFS_ROOT",   "TOPOSHIM_PROC_ROOT",
					   "TOPOSHIM_TEST_KILL_AT", "TOPOSHIM_TEST_SLEEP_AT"};

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
		if (getenv(vars[i]) != NULL)
			return true;
	return false;
}

/* The state dir the core would use, opened, when it can be trusted. */
static int open_state_dir(const struct ts_json *config)
{
	const struct ts_json *v = ts_json_get(config, "state_dir");
	const char *dir;
	int fd;

	/* a bad "state_dir" is the core's to report */
	if (v != NULL && (v->type != TS_JSON_STRING || v->u.string[0] != '/'))
		return -EINVAL;
	dir = ts_state_dir_resolve(v != NULL ? v->u.string : NULL);
	if (dir[0] != '/')
		return -EINVAL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!ts_plain_state_dir_trusted(fd)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* The bundle's config, parsed; NULL for anything the core should see,
 * and, before any parse, for a text that names a request prefix anywhere
 * (most creates that ask for something: no parse, no host read for them;
 * an escaped key still meets ts_cli_plain_config()). */
static struct ts_json *read_bundle_config(int bundle_fd, const char *name)
{
	cleanup_error struct ts_error *ignored = NULL;
	cleanup_free char *buf = NULL;
	struct ts_json *j = NULL;
	size_t len = 0;

	if (ts_read_file_at(bundle_fd, name, TS_OCI_CONFIG_MAX_BYTES, &buf, &len, &ignored) < 0 ||
	    memmem(buf, len, "toposhim.io/", 12) != NULL ||
	    memmem(buf, len, "cdi.k8s.io/", 11) != NULL ||
	    ts_json_parse(buf, len, name, &j, &ignored) < 0)
		return NULL;
	return j;
}

/* The bundle dir as the journal names it: absolute (not cleaned). */
static char *bundle_path(const char *bundle)
{
	cleanup_free char *cwd = NULL;
	char *out = NULL;

	if (bundle == NULL || bundle[0] == '\0')
		bundle = ".";
	if (bundle[0] == '/')
		return strdup(bundle);
	cwd = getcwd(NULL, 0);
	if (cwd == NULL || asprintf(&out, "%s/%s", cwd, bundle) < 0)
		return NULL;
	return out;
}

/* Append the journal entry of this create; true when it is there. */
static bool append_entry(int state_fd, const struct ts_cli_args *args, const char *runtime_path,
			 const struct ts_plain_summary *sum, off_t *ret_size)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_entry e = {
		.class_name = sum->class_name,
		.cpus = sum->cpus,
		.mems = sum->mems,
		.pid = getpid(),
		.created_usec = ts_state_now_usec(),
	};
	cleanup_free char *root = NULL, *bundle = NULL, *id = NULL;

	if (ts_cli_runtime_root(args, runtime_path, &root, &err) < 0 ||
	    (bundle = bundle_path(args->bundle)) == NULL ||
	    (id = strdup(args->container_id)) == NULL ||
	    ts_state_proc_start_ticks(NULL, e.pid, &e.pid_start_ticks, NULL, &err) < 0)
		return false;
	e.runtime_root = root;
	e.container_id = id;
	e.bundle = bundle;
	if (ts_plain_journal_append(state_fd, &e, ret_size, &err) < 0) {
		ts_log(TS_LOG_DEBUG, "create '%s': %s: the core decides", args->container_id,
		       err->msg);
		return false;
	}
	return true;
}

bool ts_cli_plain_create(const struct ts_cli_args *args, const struct ts_json *config,
			 const char *config_path, const char *runtime_path)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_close int state_fd = -EBADF, bundle_fd = -EBADF, sum_fd = -EBADF;
	cleanup_json struct ts_json *oci = NULL;
	struct ts_plain_summary sum = {0};
	struct ts_plain_host host = {0};
	const char *why = NULL;
	off_t size = 0;
	bool plain = false;

	if (!args->rewrite || ts_cli_plain_overridden() ||
	    !ts_plain_container_id_valid(args->container_id))
		return false;
	state_fd = open_state_dir(config);
	if (state_fd < 0 || ts_plain_summary_read(state_fd, &sum, &sum_fd) != 1)
		return false;
	bundle_fd = open(args->bundle != NULL && args->bundle[0] != '\0' ? args->bundle : ".",
			 O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bundle_fd < 0)
		goto out;
	oci = read_bundle_config(bundle_fd,
				 args->config_file != NULL ? args->config_file : "config.json");
	if (oci == NULL || ts_plain_host_read(config_path, &host, &err) < 0 ||
	    !ts_plain_summary_current(&sum, &host))
		goto out;
	if (!ts_cli_plain_config(oci, sum.unified, &why)) {
		ts_log(TS_LOG_DEBUG, "%s '%s': not plain (%s): the core decides", args->command,
		       args->container_id, why);
		goto out;
	}
	/* the entry first, the summary's presence second (state/plain.h) */
	if (!append_entry(state_fd, args, runtime_path, &sum, &size))
		goto out;
	if (!ts_plain_summary_still_valid(state_fd, sum_fd))
		goto out; /* an allocation came meanwhile: the core places it */
	/* a journal past what a take reads whole (never so by our creates):
	 * the core, whose take reads its newest lines, this one among them */
	if (size > (off_t)TS_PLAIN_JOURNAL_MAX_BYTES)
		goto out;
	/* an earlier create of this bundle's placement would be adopted with it */
	(void)unlinkat(bundle_fd, TS_STATE_PLACEMENT_FILE, 0);
	if (size > (off_t)TS_PLAIN_JOURNAL_COMPACT_BYTES &&
	    ts_plain_journal_compact(state_fd, NULL, NULL, NULL, &err) < 0)
		ts_log(TS_LOG_DEBUG, "%s, ignoring", err->msg);
	ts_log(TS_LOG_DEBUG,
	       "%s '%s': plain, config.json left as it is (runtime '%s', config '%s'%s, class "
	       "'%s', cpus %s)",
	       args->command, args->container_id, runtime_path, config_path,
	       host.config_present ? "" : " (absent: built-in defaults)", sum.class_name, sum.cpus);
	plain = true;
out:
	ts_plain_host_release(&host);
	ts_plain_summary_release(&sum);
	return plain;
}

bool ts_cli_plain_delete(int argc, char **argv, const struct ts_cli_args *args,
			 const struct ts_json *config)
{
	cleanup_close int state_fd = -EBADF;
	const char *id = NULL;
	bool force = false;
	const struct ts_json *v = ts_json_get(config, "state_dir");
	const char *dir;
	struct stat st;

	if (args->command_index < 0 || ts_cli_scan_delete(argc, argv, args, &id, &force) != 1 ||
	    !ts_plain_container_id_valid(id) || ts_cli_plain_overridden())
		return false;
	if (v != NULL && (v->type != TS_JSON_STRING || v->u.string[0] != '/'))
		return false;
	dir = ts_state_dir_resolve(v != NULL ? v->u.string : NULL);
	/* a relative $TOPOSHIM_STATE_DIR is the core's to report too: looked
	 * up from here, its absence would say nothing */
	if (dir[0] != '/')
		return false;
	/* no state dir: nothing was ever recorded on this node */
	if (stat(dir, &st) < 0 && errno == ENOENT)
		return true;
	state_fd = open_state_dir(config);
	if (state_fd < 0 || ts_plain_maybe_recorded(state_fd, id))
		return false;
	return true;
}
