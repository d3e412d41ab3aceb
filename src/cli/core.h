/*
 * core.h - where the front finds the core, and the core its front.
 *
 * toposhim is two programs (docs/design.md, "The front and the core"):
 *  - the front, `toposhim`: a static PIE with no dynamic loader that runs
 *    every passthrough command itself (state, kill, list, exec, start, ...)
 *    and execs the core for everything else;
 *  - the core, `toposhim-core`: the whole program, dynamically linked with
 *    the heavy libraries (hwloc, libyaml, libseccomp, libcap), for create,
 *    run, delete and `toposhim hook <stage>`.
 *
 * The core's path is a function of the front's own path (the link of
 * /proc/self/exe) alone, never of the environment or of anything the
 * caller chooses:
 *  - the installed front, TS_BINDIR/toposhim, uses the installed core,
 *    TS_LIBEXECDIR/toposhim/toposhim-core;
 *  - a front in a directory P/bin or P/sbin (a relocated install: the
 *    Kubernetes installer's $PREFIX, the qemu guest's /usr) uses
 *    P/libexec/toposhim/toposhim-core;
 *  - any other front (the build tree, a copy) uses the toposhim-core beside
 *    it, in the same directory.
 * The core is opened, checked (a regular file owned by root or by the
 * front's owner, writable by neither group nor others) and executed
 * through the same file descriptor, so the file checked is the file run.
 */
#ifndef TS_CLI_CORE_H
#define TS_CLI_CORE_H

#include <sys/stat.h>

#include "util/error.h"

/* File names of the two programs. */
#define TS_CLI_FRONT_NAME "toposhim"
#define TS_CLI_CORE_NAME "toposhim-core"

/**
 * The core a front uses (the rule above).
 * @param[in]  front  absolute path of the front (readlink of /proc/self/exe).
 * @param[out] ret    the core's absolute path; caller frees.
 * @param[out] err    set iff the return value is negative.
 * @return 0; -EINVAL when front is not an absolute path ("'<front>': not an
 *         absolute path"); -ENOMEM.
 */
int ts_cli_core_path(const char *front, char **ret, struct ts_error **err);

/**
 * The front of a core (the inverse rule): TS_BINDIR/toposhim for the
 * installed core, P/bin/toposhim for P/libexec/toposhim/toposhim-core,
 * else the toposhim beside it (a front in P/sbin, or named otherwise, is
 * caught by the depth counter alone).  The core's runtime lookup
 * skips this file too, as toposhim itself (runtime/runtime.h).
 * @param[in]  core  absolute path of the core (readlink of /proc/self/exe).
 * @param[out] ret   the front's absolute path; caller frees.
 * @param[out] err   set iff the return value is negative.
 * @return 0; -EINVAL when core is not an absolute path; -ENOMEM.
 */
int ts_cli_front_path(const char *core, char **ret, struct ts_error **err);

/**
 * Open the core for ts_cli_core_exec() and check it.
 * @param[in]  path      the core (ts_cli_core_path()).
 * @param[in]  front_st  stat of the front (its owner may own the core).
 * @param[out] ret_fd    O_RDONLY|O_CLOEXEC descriptor; caller closes.
 * @param[out] err       set iff the return value is negative.
 * @return 0; -errno of open() ("core '<path>': cannot open: <strerror>");
 *         -EACCES when it is not a regular file ("core '<path>': not a
 *         regular file"), is owned by neither root nor the front's owner
 *         ("core '<path>': owned by uid <u>, neither root nor the front's
 *         owner <f>") or is writable by group or others ("core '<path>':
 *         writable by group or others (mode <octal>)").
 */
int ts_cli_core_open(const char *path, const struct stat *front_st, int *ret_fd,
		     struct ts_error **err);

#endif
