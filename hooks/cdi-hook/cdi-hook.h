/*
 * cdi-hook.h - the parsers of toposhim-cdi-hook, for its main() and for the fuzz target
 * tests/fuzz/fuzz-hook.c (which compiles toposhim-cdi-hook.c with -DTS_FUZZ: no main(),
 * no open_container_root()).  Not installed; nothing else includes it.
 */
#ifndef TS_CDI_HOOK_H
#define TS_CDI_HOOK_H

#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

/* The command line: "<cmd> [--link|--folder|--path V]... [--mode M] [--timeout S]". */
struct ts_cdi_hook_args {
	const char *cmd;  /* "create-symlinks", "update-ldcache" or "chmod"; borrowed from argv */
	const char *mode; /* chmod's --mode (octal text, checked when applied); borrowed */
	char **values;	  /* the --link, --folder or --path values, borrowed; the vector owned */
	size_t n;	  /* number of values */
	unsigned timeout_sec; /* update-ldcache's --timeout, 1..3600; default 30 */
};

/**
 * Parse argv (argc >= 2; argv[1] is the command).
 * @param[out] ret  filled on success; release with ts_cdi_hook_args_release().
 * @return 0; -EINVAL "unknown command '<c>'", "<cmd>: option '<o>' needs a value",
 *         "<cmd>: unknown option '<o>'", "--timeout: expected seconds from 1 to 3600, got
 *         '<v>'", "chmod: missing --mode"; -ENOMEM.
 */
int ts_cdi_hook_parse_args(int argc, char **argv, struct ts_cdi_hook_args *ret,
			   struct ts_error **err);

/** Free the vector of a and zero it (idempotent). */
void ts_cdi_hook_args_release(struct ts_cdi_hook_args *a);

/**
 * Read the OCI state (runtime-spec runtime.md "State") from fd until EOF (at most 1 MiB):
 * "pid" (0..INT32_MAX; crun says 0 in createContainer), and the container root from the
 * bundle's config.json root.path (relative to the bundle, or absolute) when "bundle" is
 * absolute and its config.json reads.
 * @param[out] ret_pid     the pid.
 * @param[out] ret_rootfs  the root path (caller frees), or NULL when the bundle gives none.
 * @return 0; -EINVAL "state: '/pid': missing or invalid", "state: '/pid': 0 and no root.path
 *         in the bundle's config.json", the JSON parser's "state: line L column C: ...";
 *         -EFBIG; -errno of read(); -ENOMEM.
 */
int ts_cdi_hook_read_state(int fd, pid_t *ret_pid, char **ret_rootfs, struct ts_error **err);

/**
 * Do what a parsed command says inside the container root rootfd (an O_PATH directory
 * fd): every path is resolved in it (openat2 RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) and
 * one with a ".." component is refused.
 * @return 0; -EINVAL/-errno naming the option and value, e.g. "--link: expected
 *         TARGET::LINK '<v>'", "--path: escapes the container root '<v>'", "--mode:
 *         invalid mode '<v>'".
 */
int ts_cdi_hook_apply(int rootfd, const struct ts_cdi_hook_args *a, struct ts_error **err);

#endif
