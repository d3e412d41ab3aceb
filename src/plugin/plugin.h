/*
 * plugin.h - the NRI-style plugin chain: configuration, invocation, sandbox.
 *
 * Operators extend toposhim with small executables run in a chain, like CNI
 * plugins.  The protocol is NRI v0.1's (containerd/nri v0.1.0, types/v1):
 * each plugin is run as "<plugin> invoke" with one request JSON object on
 * stdin and writes one result JSON object on stdout.
 *
 * Request (written by toposhim, keys in this order):
 *   {"version": "0.1", "state": "pre-create"|"create"|"delete", "id": ID,
 *    "sandboxID": S (only when an annotation gives it), "pid": N (absent when
 *    0), "spec": {"resources", "namespaces", "cgroupsPath", "annotations"}
 *    (copied from config.json when present; namespaces as v0.1's map
 *    {"<type>": "<path>" or ""} rather than the OCI list), "labels": {...} (only
 *    when an annotation gives them), "conf": the plugin's "conf",
 *    "results": [results of the plugins before it],
 *    "toposhim": {"class", "cpus", "mems", "devices", "cgroupPath"}}
 * Result (read from stdout): {"plugin", "version", "error", "metadata"} and,
 * at pre-create only, "adjust".  Beyond v0.1: a non-zero exit status is a
 * failure even with a valid result, invalid JSON is a failure naming the
 * plugin, and a plugin that outlives its timeout_ms is killed with its whole
 * process group and fails.  stdout is bounded by TS_PLUGIN_STDOUT_MAX,
 * stderr by TS_PLUGIN_STDERR_MAX (the rest is discarded).
 *
 * Sandbox (applied in the forked child between fork and exec, with only
 * async-signal-safe calls; everything is prepared before fork): a clean
 * environment (PATH only), working directory /, fds 0-2 only, its own
 * process group, setgroups/setgid/setuid to the user TS_PLUGIN_USER_DEFAULT
 * or the one sandbox.user or sandbox.uid names (root only when configured;
 * see ts_plugin_sandbox_ids() in internal.h), a mount namespace where all
 * is read-only but sandbox.writable, Landlock denying writes outside it
 * (fsview.c), a cgroup of its own with sandbox.memory_max_bytes and
 * sandbox.pids_max, killed as a whole when the plugin ends (cgroup.c),
 * PR_SET_PDEATHSIG, capabilities limited to sandbox.capabilities
 * (bounding, permitted, effective, inheritable and ambient sets),
 * no_new_privs, and a seccomp filter (native and compat architectures)
 * failing with EPERM the calls of the groups "module", "kexec", "reboot",
 * "ptrace", "bpf", "mount", "keyring", "namespaces" (unshare and clone with a
 * CLONE_NEW* flag, setns; clone3 fails with ENOSYS), "userfaultfd", "perf"
 * (perf_event_open), "io_uring" (setup, enter, register) unless
 * sandbox.allow names the group or the call.
 *
 * Config (the toposhim config file, root object):
 *   "plugins": [{"type": NAME, "path": ABS, "conf": {...}, "timeout_ms": 2000,
 *                "on_error": "fail"|"ignore", "stages": ["create","delete"],
 *                "sandbox": {"capabilities": ["CAP_CHOWN"], "allow": ["mount"],
 *                            "user": NAME | "uid": N, "gid": N,
 *                            "writable": [ABS, ...], "memory_max_bytes": N,
 *                            "pids_max": N, "adjust": ["devices", "unified",
 *                            "annotations", "annotations:PREFIX"]}}],
 *   "plugin_dirs": ["/usr/libexec/toposhim/plugins", "/opt/nri/bin"] (the
 *                  default, preceded by $(libexecdir)/toposhim/plugins),
 *   "nri_conf": "/etc/nri/conf.json" (or true for that path): NRI v0.1
 *               {"version", "plugins": [{"type", "conf"}]} appended to the chain
 *               with the defaults.
 *
 * Ownership: a chain owns copies of everything it needs from the config; the
 * config tree may be freed after ts_plugin_chain_load().
 */
#ifndef TS_PLUGIN_PLUGIN_H
#define TS_PLUGIN_PLUGIN_H

#include <errno.h>
#include <stdbool.h>
#include <sys/types.h>

#include "oci/json.h"
#include "util/error.h"

#define TS_PLUGIN_PROTOCOL_VERSION "0.1" /* containerd/nri v0.1 client: nri.Version */
#define TS_PLUGIN_DEFAULT_TIMEOUT_MS 2000
#define TS_PLUGIN_STDOUT_MAX (1024 * 1024)
#define TS_PLUGIN_STDERR_MAX (64 * 1024)
#define TS_PLUGIN_NRI_CONF_DEFAULT "/etc/nri/conf.json"
/* The cgroup limits of a plugin run (sandbox.memory_max_bytes, pids_max). */
#define TS_PLUGIN_MEMORY_MAX_DEFAULT (256ULL * 1024 * 1024)
#define TS_PLUGIN_PIDS_MAX_DEFAULT 128
/* The system user plugins run as by default (contrib/plugin-user.sh, run by
 * `make install` and contrib/setup-debian.sh, creates it). */
#define TS_PLUGIN_USER_DEFAULT "toposhim-plugin"
/* Where sandbox users are looked up: the file only, never NSS (a static
 * toposhim-core cannot load NSS modules; see ts_plugin_sandbox_ids()). */
#define TS_PLUGIN_PASSWD_FILE "/etc/passwd"
/* The environment of every plugin: nothing of ours or the engine's leaks. */
#define TS_PLUGIN_ENV_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

enum ts_plugin_stage {
	TS_PLUGIN_STAGE_PRE_CREATE,
	TS_PLUGIN_STAGE_CREATE,
	TS_PLUGIN_STAGE_DELETE,
	_TS_PLUGIN_STAGE_MAX,
	TS_PLUGIN_STAGE_INVALID = -EINVAL,
};

/* What an adjust edits (see ts_plugin_adjust_fields()); also the bits of
 * sandbox.adjust, which names the privilege-widening ones a plugin may
 * edit: "devices", "unified", "annotations". */
enum ts_plugin_adjust_field {
	TS_PLUGIN_ADJUST_CPUS = 1u << 0,	/* /linux/resources/cpu/cpus */
	TS_PLUGIN_ADJUST_MEMS = 1u << 1,	/* /linux/resources/cpu/mems */
	TS_PLUGIN_ADJUST_DEVICES = 1u << 2,	/* /linux/resources/devices */
	TS_PLUGIN_ADJUST_UNIFIED = 1u << 3,	/* /linux/resources/unified */
	TS_PLUGIN_ADJUST_ANNOTATIONS = 1u << 4, /* /annotations */
	TS_PLUGIN_ADJUST_ENV = 1u << 5,		/* /process/env */
	TS_PLUGIN_ADJUST_LIMITS = 1u << 6,	/* any other /linux/resources member */
};

/** "pre-create", "create", "delete"; NULL for anything else. */
const char *ts_plugin_stage_to_string(enum ts_plugin_stage s);

/** The stage named s, or TS_PLUGIN_STAGE_INVALID. */
enum ts_plugin_stage ts_plugin_stage_from_string(const char *s);

/* One container event.  Every pointer is borrowed for the duration of the
 * call; NULL (or 0) fields are left out of the request. */
struct ts_plugin_event {
	const char *container_id;     /* required */
	pid_t pid;		      /* container init pid; 0 when gone or not yet known */
	const struct ts_json *config; /* the bundle's config.json root; NULL at a delete
				       * where the bundle is gone */
	const char *class_name;	      /* toposhim's placement class */
	const char *cpus_str;	      /* cpuset given, e.g. "2-3" */
	const char *mems_str;	      /* mems given, e.g. "0" */
	const char *const *devices;   /* NULL-terminated qualified device names */
	const char *cgroup_path;      /* the container's cgroup as /proc/<pid>/cgroup names it,
				       * relative to the hierarchy (the cpuset one on v1) */
};

/* What one run of the chain produced. */
struct ts_plugin_report {
	struct ts_json *results; /* array: the result object of each plugin run, in order */
	struct ts_json *adjust;	 /* pre-create: the merged, validated adjust; NULL if none */
	char **ignored;		 /* NULL-terminated messages of failures of on_error "ignore"
				  * plugins, for the caller to log as warnings; NULL if none */
	unsigned adjust_fields;	 /* ts_plugin_adjust_fields(adjust); 0 without adjust */
	char *cpus_from;	 /* "plugin '<type>' (<path>)" whose cpu.cpus the merged
				  * adjust holds (the last to set it); NULL if none */
	char *mems_from;	 /* the same for cpu.mems */
};

/** Free what a report holds and zero it (NULL accepted). */
void ts_plugin_report_release(struct ts_plugin_report *r);

struct ts_plugin_chain;

/**
 * Read and validate the plugin chain of the toposhim config.
 * @param[in]  config       the config file's root object; borrowed (copied from).
 * @param[in]  config_path  its file name, for messages.
 * @param[out] ret          the chain (possibly empty); free with ts_plugin_chain_free().
 * @param[out] err          set iff the return value is negative.
 * @return 0; -EINVAL with "<file>: '<pointer>': <problem> '<value>'" for
 *         every malformed field, e.g. "<file>: '/plugins/0/on_error': invalid
 *         value 'maybe' (expected fail or ignore)", "<file>: '/plugins/1':
 *         unknown key 'timeout'", "<file>: '/plugins/0/sandbox/capabilities/0':
 *         unknown capability 'CAP_FOO'", "<file>: '/plugins/0/sandbox/allow/0':
 *         unknown call or group 'foo'", "<file>: '/plugins/0/path': not
 *         absolute 'x'", "<file>: '/plugins/0/type': invalid plugin name 'a/b'";
 *         -ENOENT "<file>: '/plugins/0/type': plugin 'x' not found in
 *         <dir>:<dir>"; the NRI conf's own errors ("/etc/nri/conf.json:
 *         '/plugins/0/type': ..."; an absent NRI conf is an empty chain);
 *         -ENOMEM.
 */
int ts_plugin_chain_load(const struct ts_json *config, const char *config_path,
			 struct ts_plugin_chain **ret, struct ts_error **err);

/** Free a chain (NULL accepted). @return NULL. */
struct ts_plugin_chain *ts_plugin_chain_free(struct ts_plugin_chain *c);

/**
 * Whether every plugin of the chain whose failure fails its stage
 * (on_error "fail") has a user to run as (the sandbox's user or uid in
 * /etc/passwd, as ts_plugin_chain_run() looks them up): checked at the
 * create, so that a plugin of the create or delete stage, which runs later
 * from a hook, does not fail only then (helper-12: a delete-only plugin
 * with a missing user failed every delete's poststop hook).
 * @return 0; -ENOENT "plugin '<type>' (<path>): cannot sandbox: user
 *         '<name>' does not exist (create it with useradd --system <name>,
 *         or set sandbox.uid)" or "...: uid N has no passwd entry: set
 *         sandbox.gid"; -errno when /etc/passwd cannot be read.
 */
int ts_plugin_chain_check_users(const struct ts_plugin_chain *c, struct ts_error **err);

/** Number of plugins in the chain that run at stage. */
size_t ts_plugin_chain_count(const struct ts_plugin_chain *c, enum ts_plugin_stage stage);

/**
 * Run every plugin of the chain that takes part in stage, in order, each with
 * the results of those before it.
 * @param[in]  c           the chain; borrowed.
 * @param[in]  stage       which stage.
 * @param[in]  ev          the event; borrowed.
 * @param[out] ret_report  results, adjust (pre-create) and ignored failures;
 *                         release with ts_plugin_report_release(); may be NULL.
 *                         Written only on success.
 * @param[out] err         set iff the return value is negative.
 * @return 0; the first failure of an on_error "fail" plugin, naming it:
 *         "plugin '<type>' (<path>): <problem>" where problem is "exited with
 *         status N" (plus ": message '<m>'" when stdout holds NRI v0.1's
 *         {"plugin", "message"} error), "killed by signal N" (-EINVAL),
 *         -ETIMEDOUT "timed out after N ms", -EINVAL "invalid
 *         result: <stdout>: line L column C: <reason>", "result: '<pointer>':
 *         ...", "reported error '<text>'", -EFBIG "output exceeds N bytes",
 *         "cannot sandbox: <step>" (errno kept), "cannot execute" (errno
 *         kept), "adjust: ..." (see ts_plugin_adjust_validate()), "adjust:
 *         '<pointer>': not allowed without \"<field>\" in sandbox.adjust
 *         '<value>'" for a privilege-widening edit the plugin may not make,
 *         "adjust: '/annotations/toposhim.io~1<k>': toposhim's own
 *         annotation, never from a plugin '<value>'", "unsafe path '<p>'
 *         (owner N, mode M): ..." (see the header's sandbox); the plugin's
 *         last stderr line is appended as ": stderr: '<line>'" when it wrote
 *         one.  -EINVAL when ev has no container_id or stage is invalid.
 */
int ts_plugin_chain_run(struct ts_plugin_chain *c, enum ts_plugin_stage stage,
			const struct ts_plugin_event *ev, struct ts_plugin_report *ret_report,
			struct ts_error **err);

/**
 * Check a pre-create adjust object.  Allowed:
 *   {"linux": {"resources": {OCI config-linux.md resources: devices, memory,
 *    cpu (cpus and mems as cpu lists), blockIO, hugepageLimits, network,
 *    pids, rdma, unified}}, "process": {"env": ["NAME=VALUE", ...]},
 *    "annotations": {"key": "string", ...}}
 * This is the shape only: the chain also refuses, per plugin, the edits
 * that widen privileges (devices, unified, annotations) unless its
 * sandbox.adjust allows them (see ts_plugin_chain_run()).
 * @param[in] adjust  the object; borrowed.
 * @param[in] what    its location for messages, e.g. "plugin 'x' (/p/x): adjust".
 * @return 0; -EINVAL "<what>: '<pointer>': not allowed", "<what>: '<pointer>':
 *         expected <type>, got <type>", "<what>: '/process/env/<i>': invalid
 *         entry '<s>' (expected NAME=VALUE)", "<what>:
 *         '/linux/resources/cpu/cpus': invalid cpu list '<s>'".
 */
int ts_plugin_adjust_validate(const struct ts_json *adjust, const char *what,
			      struct ts_error **err);

/**
 * What a validated adjust edits.
 * @param[in] adjust  borrowed; NULL gives 0.
 * @return TS_PLUGIN_ADJUST_* bits: CPUS and MEMS when
 *         /linux/resources/cpu/cpus (mems) is present, DEVICES, UNIFIED,
 *         ANNOTATIONS, ENV for those members, LIMITS for any other member
 *         of /linux/resources or of /linux/resources/cpu.
 *
 * The placement interface.  cpus and mems from a plugin must pass the same
 * allocator checks as toposhim's own placement before config.json gets
 * them: the create path (src/cli/cmd-create.c) calls this on the merged
 * adjust of the pre-create stage, and when CPUS or MEMS is set, takes the
 * values (ts_plugin_adjust_cpus(), ts_plugin_adjust_mems()), checks them
 * against the allocation it made and the other containers' exclusive
 * CPUs, and records what it accepts; a refusal names the plugin, which
 * the chain's report gives (cpus_from, mems_from).  The chain itself
 * checks only that they are cpu lists.
 */
unsigned ts_plugin_adjust_fields(const struct ts_json *adjust);

/** /linux/resources/cpu/cpus of a validated adjust, e.g. "2-3"; NULL when
 *  absent.  Borrowed from adjust. */
const char *ts_plugin_adjust_cpus(const struct ts_json *adjust);

/** /linux/resources/cpu/mems of a validated adjust, e.g. "0"; NULL when
 *  absent.  Borrowed from adjust. */
const char *ts_plugin_adjust_mems(const struct ts_json *adjust);

/**
 * Validate adjust (as ts_plugin_adjust_validate()) and apply it to a
 * config.json tree: objects under /linux/resources and /annotations are
 * merged member by member (adjust wins), each /process/env entry replaces the
 * entry of the same name or is appended.
 * @param[in,out] config  the config.json root; modified only on success.
 * @param[in]     adjust  borrowed.
 * @param[in]     what    location of adjust for messages.
 * @return 0; -EINVAL from validation or from config.json members of the wrong
 *         type ("'/linux/resources': expected object, got array"); -ENOMEM.
 */
int ts_plugin_adjust_apply(struct ts_json *config, const struct ts_json *adjust, const char *what,
			   struct ts_error **err);

#endif
