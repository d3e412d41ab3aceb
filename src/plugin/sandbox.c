/*
 * sandbox.c - what a plugin process may do: capabilities (libcap for names,
 * raw capset/prctl in the child), seccomp (libseccomp builds the filter
 * before fork, the child loads the exported BPF with prctl), ids.
 */
#include <errno.h>
#include <linux/filter.h>
#include <sched.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <grp.h>
#include <signal.h>
#include <pwd.h>

#include "plugin/internal.h"
#include "util/cleanup.h"

/* Namespace flags of clone(2) and unshare(2) (linux/sched.h).  A new user
 * namespace gives a process every capability inside it, and with them the
 * kernel's attack surface of mounts, netfilter and the like; the others
 * need CAP_SYS_ADMIN anyway unless combined with one.  CLONE_NEWTIME is
 * unshare-only: in clone's flags that bit belongs to the exit signal. */
#define NS_CLONE_FLAGS                                                                            \
	((uint64_t)(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
		    CLONE_NEWPID | CLONE_NEWNET))
#define NS_CLONE_NEWTIME 0x00000080ULL /* Linux 5.6; absent from older headers */
#define NS_UNSHARE_FLAGS (NS_CLONE_FLAGS | NS_CLONE_NEWTIME)

const struct ts_plugin_denied_call ts_plugin_denied_calls[] = {
	{"module", "init_module", 0, EPERM},
	{"module", "finit_module", 0, EPERM},
	{"module", "delete_module", 0, EPERM},
	{"kexec", "kexec_load", 0, EPERM},
	{"kexec", "kexec_file_load", 0, EPERM},
	{"reboot", "reboot", 0, EPERM},
	{"ptrace", "ptrace", 0, EPERM},
	{"bpf", "bpf", 0, EPERM},
	{"mount", "mount", 0, EPERM},
	{"mount", "umount", 0, EPERM},
	{"mount", "umount2", 0, EPERM},
	{"mount", "pivot_root", 0, EPERM},
	{"mount", "fsopen", 0, EPERM},
	{"mount", "fsconfig", 0, EPERM},
	{"mount", "fsmount", 0, EPERM},
	{"mount", "fspick", 0, EPERM},
	{"mount", "move_mount", 0, EPERM},
	{"mount", "open_tree", 0, EPERM},
	{"mount", "mount_setattr", 0, EPERM},
	{"keyring", "add_key", 0, EPERM},
	{"keyring", "request_key", 0, EPERM},
	{"keyring", "keyctl", 0, EPERM},
	{"namespaces", "unshare", NS_UNSHARE_FLAGS, EPERM},
	{"namespaces", "clone", NS_CLONE_FLAGS, EPERM},
	{"namespaces", "clone3", 0, ENOSYS},
	{"namespaces", "setns", 0, EPERM},
	{"userfaultfd", "userfaultfd", 0, EPERM},
	{"perf", "perf_event_open", 0, EPERM},
	{"io_uring", "io_uring_setup", 0, EPERM},
	{"io_uring", "io_uring_enter", 0, EPERM},
	{"io_uring", "io_uring_register", 0, EPERM},
	{NULL, NULL, 0, 0},
};
/* config.c keeps the allowed entries as bits of a uint64_t. */
_Static_assert(ARRAY_SIZE(ts_plugin_denied_calls) - 1 <= 64, "denied calls exceed 64");

size_t ts_plugin_denied_calls_count(void)
{
	return ARRAY_SIZE(ts_plugin_denied_calls) - 1;
}

static inline void seccomp_releasep(scmp_filter_ctx *ctx)
{
	if (*ctx != NULL)
		seccomp_release(*ctx);
}
#define cleanup_scmp_ctx __attribute__((cleanup(seccomp_releasep)))

static inline void cap_freep(cap_t *c)
{
	if (*c != NULL)
		(void)cap_free(*c);
}
#define cleanup_cap __attribute__((cleanup(cap_freep)))

int ts_plugin_cap_from_name(const char *name)
{
	cap_value_t cap;
	const char *n = name;

	if (strncasecmp(n, "CAP_", 4) != 0) {
		/* libcap also takes bare names ("chown") and numbers; we want one spelling. */
		return -1;
	}
	if (cap_from_name(n, &cap) < 0 || cap < 0 || cap > 63)
		return -1;
	return cap;
}

/* Compat architectures of the native one: a 64-bit plugin can still enter
 * the kernel through the 32-bit tables. */
static int add_arches(scmp_filter_ctx ctx)
{
	uint32_t native = seccomp_arch_native();
	uint32_t extra[2] = {0, 0};
	int r;

	if (native == SCMP_ARCH_X86_64) {
		extra[0] = SCMP_ARCH_X86;
		extra[1] = SCMP_ARCH_X32;
	} else if (native == SCMP_ARCH_AARCH64) {
		extra[0] = SCMP_ARCH_ARM;
	}
	for (size_t i = 0; i < ARRAY_SIZE(extra); i++) {
		if (extra[i] == 0)
			continue;
		r = seccomp_arch_add(ctx, extra[i]);
		if (r < 0 && r != -EEXIST)
			return r;
	}
	return 0;
}

/* Where clone(2) takes its flags: the first argument, but the second on
 * s390 (its stack and flags are swapped).  unshare(2) has them first
 * everywhere. */
static unsigned flags_arg(const struct ts_plugin_denied_call *c)
{
	uint32_t native = seccomp_arch_native();

	if (strcmp(c->name, "clone") == 0 &&
	    (native == SCMP_ARCH_S390X || native == SCMP_ARCH_S390))
		return 1;
	return 0;
}

/* One denied call: always, or (flags != 0) once per flag bit, since a
 * seccomp comparison tests one masked value: "arg & bit == bit". */
static int add_rule(scmp_filter_ctx ctx, const struct ts_plugin_denied_call *c)
{
	int nr = seccomp_syscall_resolve_name(c->name);
	int r;

	if (nr == __NR_SCMP_ERROR)
		return 0; /* unknown to this libseccomp: no arch has it */
	if (c->flags == 0)
		return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(c->errnum), nr, 0);
	for (unsigned bit = 0; bit < 64; bit++) {
		uint64_t m = UINT64_C(1) << bit;

		if (!(c->flags & m))
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(c->errnum), nr, 1,
				     SCMP_CMP(flags_arg(c), SCMP_CMP_MASKED_EQ, m, m));
		if (r < 0)
			return r;
	}
	return 0;
}

static int build_filter(const struct ts_plugin_sandbox *s, struct ts_plugin_sandbox_prep *prep,
			struct ts_error **err)
{
	cleanup_scmp_ctx scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	cleanup_close int fd = -EBADF;
	struct stat st;
	int r;

	if (ctx == NULL)
		return ts_error_set(err, ENOMEM, "cannot sandbox: seccomp_init");
	r = add_arches(ctx);
	if (r < 0)
		return ts_error_set(err, -r, "cannot sandbox: seccomp_arch_add");
	for (size_t i = 0; ts_plugin_denied_calls[i].name != NULL; i++) {
		if (s->allow & (UINT64_C(1) << i))
			continue;
		r = add_rule(ctx, &ts_plugin_denied_calls[i]);
		if (r < 0)
			return ts_error_set(err, -r, "cannot sandbox: seccomp rule for '%s'",
					    ts_plugin_denied_calls[i].name);
	}
	fd = memfd_create("toposhim-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return ts_error_set(err, errno, "cannot sandbox: memfd_create");
	r = seccomp_export_bpf(ctx, fd);
	if (r < 0)
		return ts_error_set(err, -r, "cannot sandbox: seccomp_export_bpf");
	if (fstat(fd, &st) < 0)
		return ts_error_set(err, errno, "cannot sandbox: fstat");
	if (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0 ||
	    st.st_size / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return ts_error_set(err, EINVAL, "cannot sandbox: seccomp filter of %lld bytes",
				    (long long)st.st_size);
	prep->filter = malloc(st.st_size);
	if (prep->filter == NULL)
		return ts_error_set(err, ENOMEM, "cannot sandbox");
	if (pread(fd, prep->filter, st.st_size, 0) != st.st_size)
		return ts_error_set(err, errno != 0 ? errno : EIO, "cannot sandbox: read filter");
	prep->filter_len = (unsigned short)(st.st_size / sizeof(struct sock_filter));
	return 0;
}

/* The /etc/passwd entry of name (or, name NULL, of uid): 1 found, 0 none,
 * -errno when the file cannot be read.  fgetpwent(3) reads the file
 * itself: getpwnam(3) would go through NSS, whose modules (systemd, sss)
 * a static toposhim-core cannot load: a name not in the file crashed it. */
static int passwd_entry(const char *name, uid_t uid, uid_t *ret_uid, gid_t *ret_gid)
{
	cleanup_fclose FILE *f = fopen(TS_PLUGIN_PASSWD_FILE, "re");
	struct passwd *pw;

	if (f == NULL)
		return -errno;
	while ((pw = fgetpwent(f)) != NULL)
		if (name != NULL ? strcmp(pw->pw_name, name) == 0 : pw->pw_uid == uid) {
			*ret_uid = pw->pw_uid;
			*ret_gid = pw->pw_gid;
			return 1;
		}
	return 0;
}

int ts_plugin_sandbox_ids(const struct ts_plugin_sandbox *s, int64_t *ret_uid, int64_t *ret_gid,
			  struct ts_error **err)
{
	const char *name = s->user;
	int64_t uid = s->uid, gid = s->gid;
	uid_t pw_uid = 0;
	gid_t pw_gid = 0;
	int r;

	if (uid < 0 && name == NULL && geteuid() != 0) {
		/* Not root: the plugin has our rights, which we cannot change. */
		*ret_uid = -1;
		*ret_gid = gid;
		return 0;
	}
	if (uid < 0 && name == NULL)
		name = TS_PLUGIN_USER_DEFAULT;
	if (name != NULL) {
		r = passwd_entry(name, 0, &pw_uid, &pw_gid);
		if (r < 0)
			return ts_error_set(err, r, "cannot sandbox: user '%s': %s", name,
					    TS_PLUGIN_PASSWD_FILE);
		if (r == 0)
			return ts_error_set_plain(
				err, ENOENT,
				"cannot sandbox: user '%s' does not exist (create it "
				"with useradd --system %s, or set sandbox.uid)",
				name, name);
		uid = pw_uid;
	} else if (gid < 0) {
		r = passwd_entry(NULL, (uid_t)uid, &pw_uid, &pw_gid);
		if (r < 0)
			return ts_error_set(err, r, "cannot sandbox: uid %lld: %s", (long long)uid,
					    TS_PLUGIN_PASSWD_FILE);
		if (r == 0)
			return ts_error_set_plain(
				err, ENOENT,
				"cannot sandbox: uid %lld has no passwd entry: set "
				"sandbox.gid",
				(long long)uid);
	}
	*ret_uid = uid;
	*ret_gid = gid >= 0 ? gid : (int64_t)pw_gid;
	return 0;
}

int ts_plugin_sandbox_prepare(const struct ts_plugin_sandbox *s, struct ts_plugin_sandbox_prep *ret,
			      struct ts_error **err)
{
	struct ts_plugin_sandbox_prep prep = {
		.caps = s->caps,
		.cap_last = (int)cap_max_bits() - 1,
		.parent = getpid(),
	};
	cleanup_cap cap_t cur = cap_get_proc();
	cap_flag_value_t v = CAP_CLEAR;
	int r;

	r = ts_plugin_sandbox_ids(s, &prep.uid, &prep.gid, err);
	if (r < 0)
		return r;

	if (cur != NULL && cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &v) == 0)
		prep.can_setpcap = v == CAP_SET;
	else
		prep.can_setpcap = false;
	if (prep.cap_last > 63)
		prep.cap_last = 63;
	r = build_filter(s, &prep, err);
	if (r >= 0)
		r = ts_plugin_fsview_prepare(s, &prep.fsview, err);
	if (r < 0) {
		ts_plugin_sandbox_prep_release(&prep);
		return r;
	}
	*ret = prep;
	return 0;
}

void ts_plugin_sandbox_prep_release(struct ts_plugin_sandbox_prep *prep)
{
	if (prep == NULL)
		return;
	free(prep->filter);
	prep->filter = NULL;
	ts_plugin_fsview_release(&prep->fsview);
}

/* The kernel's capset ABI, version 3 (two 32-bit words per set). */
struct cap_header {
	uint32_t version;
	int pid;
};
struct cap_data {
	uint32_t effective, permitted, inheritable;
};
#define CAP_VERSION_3 0x20080522

#define STEP(name, expr)                    \
	do {                                \
		if ((expr) < 0) {           \
			*ret_step = (name); \
			return -errno;      \
		}                           \
	} while (0)

int ts_plugin_sandbox_apply(struct ts_plugin_sandbox_prep *prep, const char **ret_step,
			    const char **ret_arg)
{
	struct cap_header hdr = {CAP_VERSION_3, 0};
	struct cap_data data[2];
	struct sock_fprog prog = {prep->filter_len, prep->filter};
	uint32_t lo = (uint32_t)prep->caps, hi = (uint32_t)(prep->caps >> 32);
	int r;

	*ret_arg = NULL;
	/* Both need root: the mounts CAP_SYS_ADMIN, the ruleset opens the
	 * writable paths, which the plugin's user may not reach. */
	r = ts_plugin_fsview_mounts(&prep->fsview, ret_step, ret_arg);
	if (r >= 0)
		r = ts_plugin_fsview_landlock(&prep->fsview, ret_step, ret_arg);
	if (r < 0)
		return r;
	STEP("prctl(PR_SET_KEEPCAPS)", prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0));
	if (prep->can_setpcap) {
		for (int c = 0; c <= prep->cap_last; c++) {
			if (prep->caps & (UINT64_C(1) << c))
				continue;
			if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
				STEP("prctl(PR_CAPBSET_DROP)", prctl(PR_CAPBSET_DROP, c, 0, 0, 0));
		}
	}
	if (prep->gid >= 0) {
		gid_t g = (gid_t)prep->gid;

		STEP("setgroups", syscall(SYS_setgroups, 1, &g));
		STEP("setgid", syscall(SYS_setresgid, g, g, g));
	}
	if (prep->uid >= 0)
		STEP("setuid",
		     syscall(SYS_setresuid, (uid_t)prep->uid, (uid_t)prep->uid, (uid_t)prep->uid));
	/* After setuid, which clears it: if toposhim dies, so does the
	 * plugin (its children are killed with its cgroup by the next run). */
	STEP("prctl(PR_SET_PDEATHSIG)", prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0));
	if (getppid() != prep->parent) {
		*ret_step = "getppid";
		return -ESRCH;
	}
	data[0] = (struct cap_data){lo, lo, lo};
	data[1] = (struct cap_data){hi, hi, hi};
	STEP("capset", syscall(SYS_capset, &hdr, data));
	STEP("prctl(PR_CAP_AMBIENT_CLEAR_ALL)",
	     prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0));
	for (int c = 0; c <= prep->cap_last; c++)
		if (prep->caps & (UINT64_C(1) << c))
			STEP("prctl(PR_CAP_AMBIENT_RAISE)",
			     prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0));
	STEP("prctl(PR_SET_KEEPCAPS)", prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0));
	STEP("prctl(PR_SET_NO_NEW_PRIVS)", prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0));
	r = ts_plugin_fsview_restrict(&prep->fsview, ret_step, ret_arg);
	if (r < 0)
		return r;
	STEP("seccomp", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0));
	return 0;
}
