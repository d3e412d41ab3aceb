/*
 * internal.h - shared inside src/plugin (and its unit tests) only.
 */
#ifndef TS_PLUGIN_INTERNAL_H
#define TS_PLUGIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "plugin/plugin.h"

/* The calls the sandbox denies, by group; the table ends with {NULL, NULL}. */
struct ts_plugin_denied_call {
	const char *group;
	const char *name;
	/* Non-zero: the call is denied only when its flags argument (clone's
	 * or unshare's) holds one of these bits, e.g. CLONE_NEWUSER. */
	uint64_t flags;
	/* The errno of a denied call: EPERM, or ENOSYS for clone3, whose flags
	 * sit in memory the filter cannot read; libc and Go then fall back to
	 * clone, whose flags it can. */
	int errnum;
};
extern const struct ts_plugin_denied_call ts_plugin_denied_calls[];
/* Number of entries of ts_plugin_denied_calls (without the terminator). */
size_t ts_plugin_denied_calls_count(void);

struct ts_plugin_sandbox {
	uint64_t caps;	 /* bit n set: keep capability n */
	uint64_t allow;	 /* bit i set: ts_plugin_denied_calls[i] is allowed */
	int64_t uid;	 /* -1: not configured (see ts_plugin_sandbox_ids()) */
	int64_t gid;	 /* -1: not configured */
	char *user;	 /* "user": a passwd name; NULL: not configured */
	char **writable; /* NULL-terminated resolved paths the plugin may write; NULL: none */
	uint64_t memory_max_bytes;  /* > 0 */
	uint64_t pids_max;	    /* > 0 */
	unsigned adjust;	    /* sandbox.adjust: TS_PLUGIN_ADJUST_* the plugin may edit */
	char **annotation_prefixes; /* "annotations:<prefix>" entries; NULL: none */
};

struct ts_plugin {
	char *type;	      /* "confine" */
	char *path;	      /* resolved absolute path of the executable */
	struct ts_json *conf; /* owned; NULL: no "conf" in the request */
	unsigned timeout_ms;  /* > 0 */
	bool ignore_errors;   /* on_error "ignore" */
	unsigned stages;      /* bit (1u << stage) */
	struct ts_plugin_sandbox sandbox;
};

struct ts_plugin_chain {
	struct ts_plugin *plugins;
	size_t len;
};

/* What a finished plugin process left. */
struct ts_plugin_output {
	int wait_status; /* as waitpid() reports it; valid unless timed_out */
	bool timed_out;	 /* killed at its timeout */
	bool overflow;	 /* stdout exceeded TS_PLUGIN_STDOUT_MAX; killed */
	char *out;	 /* stdout, NUL-terminated */
	size_t out_len;
	char *errout; /* stderr (first TS_PLUGIN_STDERR_MAX bytes), NUL-terminated */
	size_t errout_len;
};

void ts_plugin_output_release(struct ts_plugin_output *o);

/* Release one plugin's members (the struct itself is not freed). */
void ts_plugin_release(struct ts_plugin *p);

/**
 * Read one plugin entry of a "plugins" list (or an NRI v0.1 entry when nri).
 * @param[in] what  "<file>: '/plugins/<i>'" for messages.
 * @param[in] dirs  NULL-terminated plugin directories for a lookup by type.
 */
int ts_plugin_parse(const struct ts_json *entry, const char *what, bool nri,
		    const char *const *dirs, struct ts_plugin *ret, struct ts_error **err);

/**
 * Read an NRI v0.1 conf file's text and append its plugins to chain.
 * @return 0; -EINVAL for malformed content, naming filename.
 */
int ts_plugin_nri_conf_parse(const char *text, size_t len, const char *filename,
			     const char *const *dirs, struct ts_plugin_chain *chain,
			     struct ts_error **err);

/** Build the request object for plugin p (results borrowed, may be NULL). */
int ts_plugin_request_build(const struct ts_plugin *p, enum ts_plugin_stage stage,
			    const struct ts_plugin_event *ev, const struct ts_json *results,
			    struct ts_json **ret, struct ts_error **err);

/**
 * Check a finished run: exit status, timeout, JSON, fields, "error", adjust.
 * @param[out] ret_result  the parsed result object (caller frees).
 * Messages are not yet prefixed with the plugin name.
 */
int ts_plugin_result_check(const struct ts_plugin *p, enum ts_plugin_stage stage,
			   const struct ts_plugin_output *o, struct ts_json **ret_result,
			   struct ts_error **err);

/**
 * Run "<path> invoke" sandboxed with request on stdin and collect its output.
 * @return 0 when the process ran (whatever its status; see ret); -errno when
 *         it could not be started or sandboxed ("cannot sandbox: <step>",
 *         "cannot execute").
 */
int ts_plugin_exec(const struct ts_plugin *p, const char *request, size_t request_len,
		   struct ts_plugin_output *ret, struct ts_error **err);

/**
 * Refuse the privilege-widening edits of a validated adjust that the
 * plugin's sandbox.adjust does not allow: any /linux/resources/devices
 * (it replaces the whole list, deny-all and CDI rules included, and so can
 * allow every device), any key of /linux/resources/unified (arbitrary
 * cgroup files), any annotation (runtimes act on some, such as crun's
 * run.oci.seccomp.receiver) unless "annotations" or an "annotations:
 * <prefix>" entry allows its key; toposhim's own "toposhim.io/"
 * annotations always.
 * @return 0; -EINVAL "adjust: '<pointer>': not allowed without \"<name>\"
 *         in sandbox.adjust '<value>'" and "adjust: '<pointer>': toposhim's
 *         own annotation, never from a plugin '<value>'" (values bounded to
 *         200 bytes).
 */
int ts_plugin_adjust_check_privileges(const struct ts_json *adjust,
				      const struct ts_plugin_sandbox *sb, struct ts_error **err);

/* Merge one validated adjust into the chain's accumulated one (an object):
 * later plugins win member by member, env entries are collected in order. */
int ts_plugin_adjust_merge(struct ts_json *acc, const struct ts_json *adjust,
			   struct ts_error **err);

/* ---- trust.c ---- */

/**
 * Check that only root (or the user we run as) can change what path names:
 * walking it component by component, through every symbolic link, each
 * directory must be owned by root or our euid and not writable by group or
 * others, a sticky directory such as /tmp excepted; the final entry (the
 * file, or a plugin directory) has the same rule without the sticky
 * exception; a link must be owned by root or our euid.
 * @param[in] path  absolute.
 * @return 0; -EINVAL "unsafe path '<p>' (owner <uid>, mode <octal>): must be
 *         owned by root and not writable by group or others" naming the first
 *         offending component (" or uid N" when euid is not 0); -EINVAL "not
 *         absolute '<path>'"; -errno of lstat/readlink ("<p>: <strerror>"),
 *         -ELOOP beyond 40 links, -ENOTDIR, -ENAMETOOLONG.
 */
int ts_plugin_path_check(const char *path, struct ts_error **err);

/* ---- cgroup.c ---- */

#define TS_PLUGIN_CGROUP_DIRS_MAX 3

/* The cgroup directories of one plugin run (see cgroup.c for where). */
struct ts_plugin_cgroup {
	char *dirs[TS_PLUGIN_CGROUP_DIRS_MAX];
	int procs_fds[TS_PLUGIN_CGROUP_DIRS_MAX]; /* their cgroup.procs, for the child */
	size_t n;
	const char *track; /* one of dirs that holds every member: kill and wait there */
};

/**
 * Create the cgroup of one run with s's limits (before fork).  Run as
 * another user than root: nothing (n == 0).
 * @return 0; -errno "cannot sandbox: cgroup: cannot create <dir>", "...:
 *         <dir>/<file>: cannot write '<value>'", "...: cannot open <dir>/
 *         cgroup.procs", "...: no hierarchy under /sys/fs/cgroup".
 */
int ts_plugin_cgroup_create(const struct ts_plugin_sandbox *s, struct ts_plugin_cgroup *ret,
			    struct ts_error **err);

/** In the child: join every directory; async-signal-safe.  @return 0 or
 *  -errno with the directory in *ret_arg. */
int ts_plugin_cgroup_join(const struct ts_plugin_cgroup *cg, const char **ret_arg);

/** SIGKILL every member (cgroup.kill, or each pid of cgroup.procs). */
void ts_plugin_cgroup_kill(const struct ts_plugin_cgroup *cg);

/** Kill, wait (at most 2 s) until empty, remove and release (NULL accepted). */
void ts_plugin_cgroup_destroy(struct ts_plugin_cgroup *cg);

/* ---- fsview.c ---- */

/* The file system view of one plugin run, prepared before fork; the child
 * fills tree_fds and ruleset_fd in its own copy. */
struct ts_plugin_fsview {
	const char *const *writable; /* borrowed from the sandbox */
	size_t n_writable;
	bool mount_ns;	  /* run as root: a read-only mount namespace */
	int landlock_abi; /* 0: no Landlock */
	int *tree_fds;	  /* n_writable entries, malloc'd */
	/* Without mount_setattr (Linux < 5.12, or valgrind): the host's mount
	 * points from /proc/self/mountinfo, remounted one by one; else NULL. */
	char **mounts;
	int ruleset_fd;
};

/** The kernel's Landlock ABI version, 0 when it has none (or it is off). */
int ts_plugin_landlock_abi(void);

/**
 * The mount points of /proc/self/mountinfo (unescaped), parents first.
 * @param[out] ret  NULL-terminated, malloc'd (free each and the vector).
 * @return 0; -errno of reading it ("cannot sandbox: ..."); -ENOMEM.
 */
int ts_plugin_fsview_read_mounts(char ***ret, struct ts_error **err);

/**
 * The parser of ts_plugin_fsview_read_mounts(), for its fuzz target
 * (tests/fuzz/fuzz-proc.c): the fifth field of every line of a mountinfo
 * text, its \ooo escapes undone.
 * @param[in,out] text  NUL-terminated; cut into lines in place.
 * @param[out]    ret   as ts_plugin_fsview_read_mounts().
 * @return 0; -ENOENT "cannot sandbox: no mount in /proc/self/mountinfo"
 *         when no line has five fields; -ENOMEM.
 */
int ts_plugin_fsview_parse_mounts(char *text, char ***ret, struct ts_error **err);

/** Prepare a view for s (reading the mount points when the kernel lacks
 *  mount_setattr).  @return 0; -ENOMEM; errors of the read. */
int ts_plugin_fsview_prepare(const struct ts_plugin_sandbox *s, struct ts_plugin_fsview *ret,
			     struct ts_error **err);
void ts_plugin_fsview_release(struct ts_plugin_fsview *v);

/* In the child, async-signal-safe; each returns 0 or -errno with the step
 * and the path it was at (or NULL). */
/** As root: own mount namespace, everything read-only but v->writable. */
int ts_plugin_fsview_mounts(struct ts_plugin_fsview *v, const char **ret_step,
			    const char **ret_arg);
/** Build the Landlock ruleset (before dropping root: it opens the paths). */
int ts_plugin_fsview_landlock(struct ts_plugin_fsview *v, const char **ret_step,
			      const char **ret_arg);
/** Enforce it (after no_new_privs). */
int ts_plugin_fsview_restrict(struct ts_plugin_fsview *v, const char **ret_step,
			      const char **ret_arg);

/* ---- sandbox.c ---- */

/* Everything the child needs, prepared before fork. */
struct ts_plugin_sandbox_prep {
	void *filter; /* struct sock_filter[], malloc'd */
	unsigned short filter_len;
	uint64_t caps;	  /* to keep */
	int cap_last;	  /* highest capability the kernel knows */
	bool can_setpcap; /* we hold CAP_SETPCAP: the bounding set can be cut */
	int64_t uid, gid;
	pid_t parent; /* toposhim: the plugin dies with it (PR_SET_PDEATHSIG) */
	struct ts_plugin_fsview fsview;
};

/**
 * The uid and gid a plugin runs as.  Run as root, toposhim never leaves a
 * plugin root by default: without "uid" and "user" the plugin runs as the
 * user TS_PLUGIN_USER_DEFAULT; "user" names another; "uid" gives a number
 * (0 only as an explicit opt-in).  Without "gid", the gid is the primary
 * group of the uid's passwd entry.  Run as another user (tests), toposhim
 * cannot change ids: unconfigured ids stay as they are (-1), configured
 * ones are tried and fail at setuid/setgid as the kernel says.
 * @param[out] ret_uid, ret_gid  -1: keep.
 * Users are looked up in TS_PLUGIN_PASSWD_FILE (/etc/passwd) only, not
 * through NSS: a user of LDAP or sssd needs sandbox.uid and sandbox.gid.
 * @return 0; -ENOENT "cannot sandbox: user '<name>' does not exist (create it
 *         with useradd --system <name>, or set sandbox.uid)"; -ENOENT
 *         "cannot sandbox: uid N has no passwd entry: set sandbox.gid";
 *         -errno of fopen(3) "cannot sandbox: user '<name>': /etc/passwd"
 *         (or "uid N: /etc/passwd").
 */
int ts_plugin_sandbox_ids(const struct ts_plugin_sandbox *s, int64_t *ret_uid, int64_t *ret_gid,
			  struct ts_error **err);

int ts_plugin_sandbox_prepare(const struct ts_plugin_sandbox *s, struct ts_plugin_sandbox_prep *ret,
			      struct ts_error **err);
void ts_plugin_sandbox_prep_release(struct ts_plugin_sandbox_prep *prep);

/**
 * Apply the sandbox in the forked child; async-signal-safe.
 * @param[out] ret_step  name of the failing step.
 * @param[out] ret_arg   the path it failed at, or NULL.
 * @return 0 or -errno.
 */
int ts_plugin_sandbox_apply(struct ts_plugin_sandbox_prep *prep, const char **ret_step,
			    const char **ret_arg);

/** Capability number of name ("CAP_CHOWN", "cap_chown", "chown"), or -1. */
int ts_plugin_cap_from_name(const char *name);

#endif
