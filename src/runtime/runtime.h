/*
 * runtime.h - find the real OCI runtime and build what main execs.
 *
 * toposhim never runs a container itself: it execs runc or crun with the
 * caller's argv, only argv[0] replaced by the runtime's path.  This module
 * decides which binary that is and builds the argv/envp vectors; it never
 * execs (only src/cli/main.c does).
 *
 * Lookup order:
 *  1. the TOPOSHIM_RUNTIME environment variable (the override);
 *  2. the config's "runtime": {"path": ...};
 *  3. the first of "runtime": {"search": [...]} (default runc, crun) found
 *     in $PATH, then /usr/local/sbin, /usr/local/bin, /usr/sbin, /usr/bin,
 *     /sbin, /bin.
 * A value with a '/' is a path (relative ones to the working directory,
 * as execve() sees them); a bare name is looked up like a search name.
 *
 * Refusing to call ourselves: a candidate that is the same file as
 * /proc/self/exe (st_dev and st_ino, after following symlinks), or as the
 * lookup's front_exe (the core's front, src/cli/core.h), is skipped
 * by the search and is an error when given explicitly.  A wrapper script
 * that calls toposhim again has another inode, so every exec also carries
 * the depth counter TOPOSHIM_DEPTH=1 in its environment; toposhim refuses
 * to run when it finds the counter at 1 or more.  This is the one change
 * toposhim makes to the environment it passes on, on every path including
 * passthrough: without it a wrapper script would loop forever in one pid.
 *
 * Not in this module: reading the config file (src/cli does that and
 * passes plain strings, so that this layer does not depend on oci).
 */
#ifndef TS_RUNTIME_RUNTIME_H
#define TS_RUNTIME_RUNTIME_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"
#include "util/text.h"

/* Name of the depth counter in the environment. */
#define TS_RUNTIME_DEPTH_ENV "TOPOSHIM_DEPTH"

/* Where to look for the runtime.  Every pointer is borrowed; NULL members
 * take the defaults given. */
struct ts_runtime_lookup {
	const char *override;	  /* TOPOSHIM_RUNTIME; NULL or "" = unset */
	const char *path;	  /* config runtime.path; NULL = unset */
	const char *path_origin;  /* names path in messages; NULL = "runtime.path" */
	const char *const *names; /* NULL-terminated; NULL = {"runc", "crun"} */
	const char *path_env;	  /* value of $PATH; NULL = unset */
	const char *const *dirs;  /* NULL-terminated; NULL = the sbin/bin list above */
	const char *self_exe;	  /* NULL = "/proc/self/exe" */
	const char *front_exe;	  /* a second file that is toposhim (the core's
				   * front, cli/core.h); NULL = none */
};

/**
 * Find the runtime to exec.
 * @param[in]  lookup    where to look; borrowed.
 * @param[out] ret_path  path of the runtime (as found: "<dir>/<name>" or the
 *                       explicit value); caller frees.
 * @param[out] err       set iff the return value is negative.
 * @return 0;
 *         -errno of stat()/access() when the override or runtime.path is
 *         not an executable regular file ("runtime '<p>' (from
 *         TOPOSHIM_RUNTIME): not an executable file");
 *         -EINVAL when it is toposhim itself ("recursion: runtime '<p>'
 *         (from <origin>) is toposhim itself");
 *         -ENOENT when no search name is found ("no OCI runtime found: tried
 *         runc, crun in PATH (<$PATH>) and /usr/local/sbin:...:/bin", plus
 *         "; skipped '<p>' (toposhim itself)" for each candidate skipped);
 *         -ENOMEM.
 * @note When /proc/self/exe cannot be stat'ed (no /proc), the inode check is
 *       skipped and only the depth counter protects against recursion.
 */
int ts_runtime_find(const struct ts_runtime_lookup *lookup, char **ret_path, struct ts_error **err);

/**
 * Check the depth counter found in our environment.
 * @param[in]  value         getenv(TS_RUNTIME_DEPTH_ENV), may be NULL.
 * @param[in]  runtime_path  the runtime we were about to exec, for the message.
 * @param[out] err           set iff the return value is negative.
 * @return the depth (0: NULL, "" or "0");
 *         -EINVAL "recursion: toposhim called itself through '<runtime_path>'"
 *         when the depth is 1 or more;
 *         -EINVAL "environment: 'TOPOSHIM_DEPTH': invalid depth '<v>'" when
 *         value is not a decimal number.
 */
int ts_runtime_check_depth(const char *value, const char *runtime_path, struct ts_error **err);

/**
 * Build the path, argv and envp to execve() the runtime with.
 * @param[in]  runtime_path  the runtime's path (absolute), what is executed.
 * @param[in]  argc, argv    as main got them; argv[1..argc-1] are copied
 *                           byte for byte.  argv[0] becomes the runtime's
 *                           name in the form the caller called toposhim
 *                           by: runtime_path when argv[0] holds a '/' (or
 *                           is missing), its last component when it does
 *                           not.  The runtime's usage errors name it
 *                           ("runc: \"state\" requires exactly 1
 *                           argument(s)"): they read as the runtime's own
 *                           called the same way.
 * @param[in]  envp          our environment (NULL-terminated), copied in
 *                           order; every TOPOSHIM_DEPTH entry is replaced
 *                           in place by TOPOSHIM_DEPTH=<depth + 1>, which is
 *                           appended when there was none.
 * @param[in]  depth         the value ts_runtime_check_depth() returned.
 * @param[out] ret_path      a copy of runtime_path, execve()'s first
 *                           argument; caller frees.
 * @param[out] ret_argv      NULL-terminated, every string and the vector
 *                           owned by the caller (free with cleanup_strv).
 * @param[out] ret_envp      likewise.
 * @return 0; -ENOMEM.
 */
int ts_runtime_build_exec(const char *runtime_path, int argc, char *const *argv, char *const *envp,
			  int depth, char **ret_path, char ***ret_argv, char ***ret_envp,
			  struct ts_error **err);

/* enum ts_runtime_family and ts_runtime_family_of_path() are in
 * util/text.h, for the state module's GC too */

/** "runc", "crun"; NULL for UNKNOWN or out of range. */
const char *ts_runtime_family_name(enum ts_runtime_family f);

/**
 * The family of the runtime that keeps the container (root, container_id):
 * <root>/<container_id>/state.json (runc) or .../status (crun), looked up
 * with lstat (no symlink followed).  The runtime's own state dir, owned by
 * root (0700 as runc and crun make it), is what names the runtime of a
 * container — never toposhim's records (state.h), which only repeat it.
 * @return the family; UNKNOWN when neither file exists (no such container,
 *         or another runtime) or container_id is not one path component.
 */
enum ts_runtime_family ts_runtime_family_of_container(const char *root, const char *container_id);

/* What decides a runtime's default --root (ts_runtime_family_default_root()). */
struct ts_runtime_caller {
	const char *xdg_runtime_dir; /* $XDG_RUNTIME_DIR, NULL when unset */
	uid_t euid;
	bool in_userns;	  /* /proc/self/uid_map is not the whole identity map */
	const char *user; /* $USER, NULL when unset */
};

/**
 * The --root a family's runtime uses when it is given none, as runc 1.1.5
 * and crun 1.8.1 choose it (measured with strace; runc's
 * shouldHonorXDGRuntimeDir()):
 *  - runc: "$XDG_RUNTIME_DIR/runc" when XDG_RUNTIME_DIR is set and not
 *    empty, and the effective uid is not 0, or is 0 inside a user
 *    namespace (rootless podman's) with $USER unset or not "root"; else
 *    "/run/runc";
 *  - crun: "$XDG_RUNTIME_DIR/crun" whenever XDG_RUNTIME_DIR is set and not
 *    empty (as root too), else "/run/crun".
 * @param[in]  caller  NULL: this process (its environment, geteuid(), and
 *                     /proc/self/uid_map read only when it matters).
 * @param[out] ret     a new string; caller frees.
 * @return 0; -EINVAL for UNKNOWN (*ret NULL); -ENOMEM.
 */
int ts_runtime_family_default_root(enum ts_runtime_family f, const struct ts_runtime_caller *caller,
				   char **ret);

/* Where the kernel lists the online CPUs. */
#define TS_RUNTIME_CPUS_ONLINE "/sys/devices/system/cpu/online"

/**
 * Widen the calling thread's CPU affinity to every online CPU before the
 * runtime is exec'd for create, run or exec.  A runtime started with a
 * narrowed mask (`taskset -c 0 toposhim run ...`, an engine pinned to one
 * CPU) hands that mask to the container's processes: runc 1.1 does not
 * reset it, and Linux >= 6.2 keeps a mask set with sched_setaffinity()
 * across the move into the container's cpuset (it intersects the two), so
 * a container whose cpuset is 0-1 would run on CPU 0 only.  With every
 * online CPU requested, the kernel's intersection with the container's
 * cpuset is the cpuset itself.
 * @param[in]  online_path  a file in the kernel's cpu list format ("0-3,8"),
 *                          NULL for TS_RUNTIME_CPUS_ONLINE.
 * @param[out] err          set iff the return value is negative.
 * @return 0; -errno of reading the file; -EINVAL "<path>: invalid cpu list
 *         '<text>'"; -errno of sched_setaffinity() ("cannot set the CPU
 *         affinity to '<list>'"); -ENOMEM.
 * @note Callers on the exec path ignore a failure: the runtime runs either way.
 */
int ts_runtime_reset_affinity(const char *online_path, struct ts_error **err);

#endif
