/* cmd-hook.c - `toposhim hook <stage>` and the injection of those hooks; see cmd-hook.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "cli/cmd-hook.h"
#include "cli/config.h"
#include "cli/log.h"
#include "cli/lifecycle.h"
#include "cli/pools.h"
#include "oci/json.h"
#include "state/state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/testpoint.h"

/* A state dir named by the operator (source: where, field: which value,
 * as "<source>: '<field>': ..." names them): absolute, and not something
 * other than a directory.  Checked here, before anything opens or creates
 * it, so that the message says whose value it is; the store only knows
 * the path. */
static int check_state_dir(const char *source, const char *field, const char *dir,
			   struct ts_error **err)
{
	struct stat st;

	if (dir[0] != '/')
		return ts_error_set(err, 0, "%s: '%s': not absolute '%s'", source, field, dir);
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode))
		return ts_error_set(err, 0, "%s: '%s': not a directory '%s'", source, field, dir);
	return 0;
}

int ts_cli_state_config_read(const struct ts_json *config, const char *config_path,
			     struct ts_cli_state_config *ret, struct ts_error **err)
{
	const struct ts_json *dir = ts_json_get(config, "state_dir");
	const struct ts_json *grace = ts_json_get(config, "gc_grace_seconds");
	const char *env = secure_getenv(TS_STATE_DIR_ENV);
	struct ts_cli_state_config sc = {.gc_grace_usec = TS_STATE_GC_GRACE_USEC_DEFAULT};
	uint64_t secs = 0;
	int r;

	if (dir != NULL && dir->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "%s: '/state_dir': expected string, got %s",
				    config_path, ts_json_type_name(dir->type));
	if (dir != NULL && dir->u.string[0] != '/')
		return ts_error_set(err, 0, "%s: '/state_dir': not absolute '%s'", config_path,
				    dir->u.string);
	/* set but empty counts as unset, as TOPOSHIM_CONFIG and
	 * TOPOSHIM_RUNTIME do (ts_state_dir_resolve() reads it so too) */
	if (env != NULL && env[0] != '\0')
		r = check_state_dir("environment", TS_STATE_DIR_ENV, env, err);
	else
		r = dir != NULL ? check_state_dir(config_path, "/state_dir", dir->u.string, err)
				: 0;
	if (r < 0)
		return r;
	if (grace != NULL && grace->type != TS_JSON_NUMBER)
		return ts_error_set(err, 0, "%s: '/gc_grace_seconds': expected number, got %s",
				    config_path, ts_json_type_name(grace->type));
	if (grace != NULL && (ts_json_get_uint64(grace, &secs) < 0 || secs > UINT64_MAX / 1000000u))
		return ts_error_set(err, 0, "%s: '/gc_grace_seconds': invalid seconds '%s'",
				    config_path, grace->u.number);
	if (dir != NULL)
		sc.state_dir = dir->u.string;
	if (grace != NULL)
		sc.gc_grace_usec = secs * 1000000u;
	*ret = sc;
	return 0;
}

void ts_hook_state_release(struct ts_hook_state *st)
{
	free(st->oci_version);
	free(st->container_id);
	free(st->status);
	free(st->bundle);
	*st = (struct ts_hook_state){0};
}

/* *dst = copy of root[key] when it is a string; absent is fine. */
static int opt_string(const struct ts_json *root, const char *key, char **dst,
		      struct ts_error **err)
{
	const struct ts_json *v = ts_json_get(root, key);

	if (v == NULL)
		return 0;
	if (v->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "stdin: '/%s': expected string, got %s", key,
				    ts_json_type_name(v->type));
	*dst = strdup(v->u.string);
	if (*dst == NULL)
		return ts_error_set(err, ENOMEM, "stdin: '/%s'", key);
	return 0;
}

int ts_hook_state_parse(const char *buf, size_t len, struct ts_hook_state *ret,
			struct ts_error **err)
{
	cleanup_json struct ts_json *root = NULL;
	struct ts_hook_state st = {0};
	const struct ts_json *pid;
	int64_t v = 0;
	int r;

	r = ts_json_parse(buf, len, "stdin", &root, err);
	if (r < 0)
		return r;
	if (root->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "stdin: '/': expected object, got %s",
				    ts_json_type_name(root->type));
	if (ts_json_get(root, "id") == NULL)
		return ts_error_set(err, 0, "stdin: '/id': missing");
	r = opt_string(root, "id", &st.container_id, err);
	if (r >= 0 && st.container_id[0] == '\0')
		r = ts_error_set(err, 0, "stdin: '/id': empty");
	if (r >= 0)
		r = opt_string(root, "ociVersion", &st.oci_version, err);
	if (r >= 0)
		r = opt_string(root, "status", &st.status, err);
	if (r >= 0)
		r = opt_string(root, "bundle", &st.bundle, err);
	pid = ts_json_get(root, "pid");
	if (r >= 0 && pid != NULL) {
		if (pid->type != TS_JSON_NUMBER)
			r = ts_error_set(err, 0, "stdin: '/pid': expected number, got %s",
					 ts_json_type_name(pid->type));
		else if (ts_json_get_int64(pid, &v) < 0 || v < 0 || v > INT_MAX)
			r = ts_error_set(err, 0, "stdin: '/pid': invalid pid '%s'", pid->u.number);
		else
			st.pid = (pid_t)v;
	}
	if (r < 0) {
		ts_hook_state_release(&st);
		return r;
	}
	*ret = st;
	return 0;
}

/* The record of the hook's container (ts_state_lookup()). */
static const struct ts_alloc *find_record(const struct ts_state *s, const struct ts_hook_state *st)
{
	return ts_state_lookup(s, st->runtime_root, st->container_id, st->bundle);
}

int ts_hook_create_runtime(const struct ts_hook_state *st, const struct ts_state_options *opts,
			   char **ret_warning, struct ts_error **err)
{
	return ts_hook_create_runtime_record(st, opts, NULL, NULL, ret_warning, err);
}

int ts_hook_create_runtime_record(const struct ts_hook_state *st,
				  const struct ts_state_options *opts, struct ts_pools *pools,
				  struct ts_alloc **ret_record, char **ret_warning,
				  struct ts_error **err)
{
	cleanup_alloc struct ts_alloc *record = NULL;
	cleanup_state struct ts_state *s = NULL;
	cleanup_free char *cgroup = NULL;
	cleanup_free char *warning = NULL;
	cleanup_error struct ts_error *cg_err = NULL;
	const char *proc_root = opts && opts->proc_root ? opts->proc_root : "/proc";
	const struct ts_alloc *found;
	struct ts_alloc *a;
	uint64_t ticks = 0;
	bool settle = false;
	int r;

	if (st->pid <= 0)
		return ts_error_set(err, 0, "stdin: '/pid': missing");
	/* read the process before taking the lock: the lock is held briefly */
	r = ts_state_proc_start_ticks(proc_root, st->pid, &ticks, NULL, err);
	if (r < 0)
		return ts_error_prefix(err, "container '%s'", st->container_id);
	r = ts_state_proc_cgroup(proc_root, st->pid, &cgroup, &cg_err);
	/* a host without a cpuset or v2 hierarchy: nothing to resize later */
	if (r < 0 && r != -ENODATA) {
		ts_error_set(err, cg_err->errnum, "%s", cg_err->msg);
		return ts_error_prefix(err, "container '%s'", st->container_id);
	}
	r = ts_state_open(opts, &s, err);
	if (r < 0)
		return r;
	r = ts_state_load(s, &warning, err);
	if (r < 0)
		return r;
	/* a rebuilt store: its shared containers are resized after this
	 * (ts_pools_open_store(), helper-14) */
	if (warning != NULL && pools != NULL) {
		r = ts_pools_forget_shared_cpus(pools, s, err);
		if (r < 0)
			return r;
		settle = r > 0;
	}
	found = find_record(s, st);
	if (found != NULL) {
		cleanup_free char *record_root = NULL;

		a = ts_alloc_dup(found);
		if (a == NULL || (found->runtime_root != NULL &&
				  (record_root = strdup(found->runtime_root)) == NULL)) {
			ts_alloc_free(a);
			return ts_error_set(err, ENOMEM, "container '%s'", st->container_id);
		}
		a->pid = st->pid;
		a->pid_start_ticks = ticks;
		free(a->cgroup_path);
		a->cgroup_path = TAKE_PTR(cgroup);
		a->status = TS_ALLOC_CREATED;
		if (ret_record != NULL) {
			record = ts_alloc_dup(a);
			if (record == NULL) {
				ts_alloc_free(a);
				return ts_error_set(err, ENOMEM, "container '%s'",
						    st->container_id);
			}
		}
		r = ts_state_put(s, a, err);
		if (r < 0)
			return r;
		/* decided in the same store session: one load, one commit */
		settle = (pools != NULL &&
			  ts_pools_catch_up(pools, s, record_root, st->container_id)) ||
			 settle;
	}
	/* also without a record: a rebuilt store is worth writing */
	ts_test_point("hook-create-runtime-before-commit");
	r = ts_state_commit(s, err);
	if (r < 0)
		return r;
	s = ts_state_close(s);
	ts_test_point("hook-create-runtime-after-commit");
	if (settle)
		ts_pools_settle_or_warn(pools, opts, false);
	if (ret_warning != NULL)
		*ret_warning = TAKE_PTR(warning);
	if (ret_record != NULL)
		*ret_record = TAKE_PTR(record);
	return found != NULL ? 1 : 0;
}

int ts_hook_poststop(const struct ts_hook_state *st, const struct ts_state_options *opts,
		     struct ts_alloc **ret_removed, char **ret_warning, struct ts_error **err)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_free char *warning = NULL;
	cleanup_alloc struct ts_alloc *removed = NULL;
	const struct ts_alloc *a;
	int r, found;

	r = ts_state_open(opts, &s, err);
	if (r < 0)
		return r;
	r = ts_state_load(s, &warning, err);
	if (r < 0)
		return r;
	a = find_record(s, st);
	found = a != NULL ? ts_state_remove(s, a->runtime_root, a->container_id, &removed) : 0;
	r = ts_state_commit(s, err);
	if (r < 0)
		return r;
	if (ret_removed != NULL)
		*ret_removed = TAKE_PTR(removed);
	if (ret_warning != NULL)
		*ret_warning = TAKE_PTR(warning);
	return found;
}

/* Store options from the config file; config is kept for the borrowed strings. */
static const char *config_file(void)
{
	const char *path = secure_getenv("TOPOSHIM_CONFIG");

	return path != NULL && path[0] != '\0' ? path : TS_CLI_CONFIG_DEFAULT;
}

static int load_options(struct ts_json **config, struct ts_state_options *ret,
			struct ts_error **err)
{
	const char *path = config_file();
	struct ts_cli_state_config sc;
	int r;

	r = ts_cli_config_load(path, config, err);
	if (r < 0)
		return r;
	r = ts_cli_state_config_read(*config, path, &sc, err);
	if (r < 0)
		return r;
	*ret = (struct ts_state_options){.state_dir = sc.state_dir};
	return 0;
}

/* One stage: the store first (record the init process, or release the
 * allocation and grow the shared pool), then the plugin chain with the
 * container's record, so that plugins see what toposhim gave it. */
static int run_stage(const struct ts_hook_state *st, bool create, const struct ts_json *config,
		     const struct ts_state_options *opts, char **ret_warning, struct ts_error **err)
{
	cleanup_alloc struct ts_alloc *record = NULL;
	cleanup_json struct ts_json *oci = NULL;
	struct ts_plugin_chain *chain = NULL;
	struct ts_plugin_event ev;
	int r;

	if (create) {
		struct ts_pools pools = {0};

		r = ts_pools_init(config, config_file(), &pools, err);
		if (r >= 0)
			r = ts_hook_create_runtime_record(st, opts, &pools, &record, ret_warning,
							  err);
		ts_pools_release(&pools);
	} else
		r = ts_pools_release_container(config, config_file(), opts, st->runtime_root,
					       st->container_id, st->bundle, &record, err);
	if (r < 0)
		return r;
	r = ts_plugin_chain_load(config, config_file(), &chain, err);
	if (r < 0)
		return r;
	if (ts_plugin_chain_count(chain, create ? TS_PLUGIN_STAGE_CREATE : TS_PLUGIN_STAGE_DELETE) >
	    0) {
		oci = ts_lifecycle_read_config(st->bundle);
		ts_lifecycle_event_from_alloc(st->container_id, record, oci, &ev);
		ev.pid = st->pid;
		r = ts_lifecycle_run(chain,
				     create ? TS_PLUGIN_STAGE_CREATE : TS_PLUGIN_STAGE_DELETE, &ev,
				     NULL, err);
	}
	ts_plugin_chain_free(chain);
	return r;
}

int ts_cmd_hook(int argc, char **argv, struct ts_error **err)
{
	cleanup_free char *buf = NULL;
	cleanup_free char *warning = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_state_options opts = {0};
	struct ts_hook_state st = {0};
	const char *stage = argc > 1 ? argv[1] : NULL;
	size_t len = 0;
	bool create;
	int r;

	if (stage == NULL)
		return ts_error_set(
			err, 0, "hook: missing stage (expected 'create-runtime' or 'poststop')");
	create = strcmp(stage, TS_HOOK_STAGE_CREATE_RUNTIME) == 0;
	if (!create && strcmp(stage, TS_HOOK_STAGE_POSTSTOP) != 0)
		return ts_error_set(err, 0,
				    "hook: unknown stage '%s' (expected 'create-runtime' or "
				    "'poststop')",
				    stage);
	if (argc > 2)
		return ts_error_set(err, 0, "hook: unexpected argument '%s'", argv[2]);
	r = ts_read_fd(STDIN_FILENO, "stdin", TS_HOOK_STDIN_MAX_BYTES, &buf, &len, err);
	if (r >= 0)
		r = ts_hook_state_parse(buf, len, &st, err);
	if (r >= 0)
		r = load_options(&config, &opts, err);
	/* given by the hook entry: a root ts_hook_inject() put there */
	st.runtime_root = secure_getenv(TS_HOOK_ROOT_ENV);
	if (st.runtime_root != NULL && st.runtime_root[0] != '/')
		st.runtime_root = NULL;
	if (r >= 0)
		r = run_stage(&st, create, config, &opts, &warning, err);
	ts_hook_state_release(&st);
	if (warning != NULL)
		ts_log(TS_LOG_WARNING, "%s", warning);
	if (r < 0)
		return ts_error_prefix(err, "hook %s", stage);
	return 0;
}

int ts_hook_self_exe(char **ret, struct ts_error **err)
{
	for (size_t size = 256; size <= 65536; size *= 2) {
		cleanup_free char *buf = malloc(size);
		ssize_t n;

		if (buf == NULL)
			return ts_error_set(err, ENOMEM, "/proc/self/exe: cannot read link");
		n = readlink("/proc/self/exe", buf, size);
		if (n < 0)
			return ts_error_set(err, errno, "/proc/self/exe: cannot read link");
		if ((size_t)n < size) {
			buf[n] = '\0';
			*ret = TAKE_PTR(buf);
			return 0;
		}
	}
	return ts_error_set(err, ENAMETOOLONG, "/proc/self/exe: cannot read link");
}

/* The code of the error a callee has just set (err may be NULL). */
static int code_of(struct ts_error **err)
{
	return err != NULL ? ts_error_code(*err) : -EINVAL;
}

static int append_string(struct ts_json *arr, const char *s, struct ts_error **err)
{
	return ts_json_array_append(arr, ts_json_new_string(s), err);
}

static int append_env(struct ts_json *env, const char *name, const char *value,
		      struct ts_error **err)
{
	cleanup_free char *kv = NULL;

	if (value == NULL || value[0] == '\0')
		return 0;
	if (asprintf(&kv, "%s=%s", name, value) < 0)
		return ts_error_set(err, ENOMEM, "hook: env");
	return append_string(env, kv, err);
}

/* The environment variables besides TOPOSHIM_CONFIG and TOPOSHIM_STATE_DIR
 * that change what toposhim does: a hook must see what the create saw, or
 * the resize at delete would run on another topology or cgroup tree. */
static const char *const config_env[] = {
	"TOPOSHIM_TOPOLOGY_XML",
	"TOPOSHIM_SYSFS_ROOT",
	"TOPOSHIM_PROC_ROOT",
	TS_CGROUP_ROOT_ENV,
};

#ifdef TS_TEST_POINTS
/* The test build's points (util/testpoint.h) reach into the hooks too. */
static const char *const test_env[] = {"TOPOSHIM_TEST_KILL_AT", "TOPOSHIM_TEST_SLEEP_AT"};
#endif

/* name=value of the create's environment, a relative path made absolute
 * (the runtime runs hooks from another directory); NULL value: unset. */
static int append_config_env(struct ts_json *env, const char *name, struct ts_error **err)
{
	const char *value = secure_getenv(name);
	cleanup_free char *cwd = NULL, *abs = NULL;

	if (value == NULL || value[0] == '\0' || value[0] == '/')
		return append_env(env, name, value, err);
	cwd = getcwd(NULL, 0);
	if (cwd == NULL)
		return ts_error_set(err, errno, "hook: env: %s: cannot resolve '%s'", name, value);
	if (asprintf(&abs, "%s/%s", cwd, value) < 0)
		return ts_error_set(err, ENOMEM, "hook: env");
	return append_env(env, name, abs, err);
}

static struct ts_json *hook_entry(const char *self_exe, const char *stage_arg,
				  const struct ts_hook_env *he, struct ts_error **err)
{
	cleanup_json struct ts_json *o = ts_json_new_object();
	cleanup_json struct ts_json *args = ts_json_new_array();
	cleanup_json struct ts_json *env = ts_json_new_array();
	int r;

	if (o == NULL || args == NULL || env == NULL) {
		ts_error_set(err, ENOMEM, "hook: entry");
		return NULL;
	}
	r = append_string(args, "toposhim", err);
	if (r >= 0)
		r = append_string(args, "hook", err);
	if (r >= 0)
		r = append_string(args, stage_arg, err);
	if (r >= 0)
		r = append_string(env, TS_HOOK_PATH_ENV, err);
	if (r >= 0)
		r = append_env(env, TS_STATE_DIR_ENV, he->state_dir, err);
	if (r >= 0)
		r = append_env(env, "TOPOSHIM_CONFIG", he->config_path, err);
	if (r >= 0)
		r = append_env(env, TS_HOOK_ROOT_ENV, he->runtime_root, err);
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(config_env); i++)
		r = append_config_env(env, config_env[i], err);
#ifdef TS_TEST_POINTS
	for (size_t i = 0; r >= 0 && i < ARRAY_SIZE(test_env); i++)
		r = append_env(env, test_env[i], secure_getenv(test_env[i]), err);
#endif
	if (r >= 0)
		r = ts_json_object_set(o, "path", ts_json_new_string(self_exe), err);
	if (r >= 0)
		r = ts_json_object_set(o, "args", TAKE_PTR(args), err);
	if (r >= 0)
		r = ts_json_object_set(o, "env", TAKE_PTR(env), err);
	if (r < 0)
		return NULL;
	return TAKE_PTR(o);
}

/* Whether a hook entry is one of ours for stage_arg (args toposhim hook <stage>). */
static bool is_our_entry(const struct ts_json *entry, const char *stage_arg)
{
	const struct ts_json *args = ts_json_get_array(entry, "args");
	static const char *const want[] = {"toposhim", "hook", NULL};

	if (args == NULL || args->u.array.len != 3)
		return false;
	for (size_t i = 0; i < 3; i++) {
		const struct ts_json *a = args->u.array.items[i];
		const char *w = i < 2 ? want[i] : stage_arg;

		if (a->type != TS_JSON_STRING || strcmp(a->u.string, w) != 0)
			return false;
	}
	return true;
}

static int inject_one(struct ts_json *hooks, const char *key, const char *stage_arg,
		      const char *self_exe, const struct ts_hook_env *he, struct ts_error **err)
{
	struct ts_json *arr, *entry, *item;
	size_t i;

	arr = ts_json_object_ensure(hooks, key, TS_JSON_ARRAY, "config.json: '/hooks'", err);
	if (arr == NULL)
		return code_of(err);
	entry = hook_entry(self_exe, stage_arg, he, err);
	if (entry == NULL)
		return code_of(err);
	ts_json_array_foreach (arr, i, item) {
		if (is_our_entry(item, stage_arg))
			return ts_json_array_replace(arr, i, entry, err);
	}
	return ts_json_array_append(arr, entry, err);
}

bool ts_hook_poststop_injected(const struct ts_json *config)
{
	const struct ts_json *arr = ts_json_get_path(config, "hooks", "poststop", NULL), *item;
	size_t i;

	ts_json_array_foreach (arr, i, item) {
		if (is_our_entry(item, TS_HOOK_STAGE_POSTSTOP))
			return true;
	}
	return false;
}

int ts_hook_inject(struct ts_json *config, const char *self_exe, const struct ts_hook_env *he,
		   struct ts_error **err)
{
	struct ts_json *hooks;
	int r;

	if (self_exe == NULL || self_exe[0] != '/')
		return ts_error_set(err, 0, "hook: not an absolute path '%s'",
				    self_exe ? self_exe : "");
	hooks = ts_json_object_ensure(config, "hooks", TS_JSON_OBJECT, "config.json: ''", err);
	if (hooks == NULL)
		return code_of(err);
	r = inject_one(hooks, "createRuntime", TS_HOOK_STAGE_CREATE_RUNTIME, self_exe, he, err);
	if (r < 0)
		return r;
	return inject_one(hooks, "poststop", TS_HOOK_STAGE_POSTSTOP, self_exe, he, err);
}
