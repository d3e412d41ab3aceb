/*
 * scan.h - read runc's command line without changing it.
 *
 * toposhim is called exactly as runc is (runc 1.1 / crun 1.8 CLI).  The
 * scanner finds the global options, the command, the container id of
 * create, run, delete, kill, exec, update, ps, events, state, start, pause,
 * resume, checkpoint and restore (main picks the runtime that keeps that
 * container), and for
 * `create`/`run` the bundle and crun's -f/--config.  It never reorders or
 * edits argv: main execs the real runtime with the same argv.
 *
 * When anything is ambiguous (an option the scanner does not know) the
 * result says "pass through" with a note (ret->warning), and no rewrite
 * happens: a wrong guess about where the bundle is would rewrite the wrong
 * file.  An unknown option written `--name=value` keeps its value to
 * itself, so the scan goes on past it (the container id is still found);
 * an unknown `--name` may or may not take the next word, so the scan stops
 * there (on a command that names a container, the next two words that are
 * not options are kept as candidates for its id).  The note is not a warning to the user: the
 * runtime judges its own command line, and main logs the note only to a --log file at debug level,
 * only for create/run.
 *
 * Grammar accepted (the union of runc 1.1.5's urfave/cli + Go flag parsing
 * and crun 1.8.1's argp):
 *   toposhim [GLOBAL-OPTION...] [--] COMMAND [OPTION | ARG]... [-- ARG...]
 *  - every option may be written with one or two leading dashes, and a
 *    value either as the next word or after '=' (`--root=/r`, `-b=/b`);
 *  - global options with a value: root, log, log-format, log-level, criu,
 *    rootless, cgroup-manager; without: debug, systemd-cgroup; help/h/?,
 *    usage and version/v/V end the scan (the runtime prints and exits);
 *  - `create`/`run` options with a value: bundle/b, console-socket,
 *    pid-file, pidfd-socket, preserve-fds, config/f (crun); without:
 *    no-pivot, no-new-keyring, no-subreaper, and for run detach/d, keep.
 *    Options may follow the container id (runc reorders them); after `--`
 *    every word is an argument;
 *  - the other commands' options with a value (runc 1.1-1.3, crun 1.8-1.23):
 *    exec console-socket, cwd, env/e, user/u, additional-gids/g,
 *    process/p, pid-file, process-label, apparmor, cap/c, preserve-fds,
 *    cgroup, pidfd-socket; update resources/r and each --cpu-*, --cpuset-*,
 *    --memory*, --kernel-memory*, --blkio-weight, --pids-limit,
 *    --l3-cache-schema, --mem-bw-schema; ps format/f; events interval;
 *    checkpoint and restore image-path, work-path, manage-cgroups-mode,
 *    empty-ns, checkpoint parent-path, status-fd, page-server, restore
 *    bundle/b, console-socket, pid-file, lsm-profile, lsm-mount-context.
 *    Without a value: delete force/f, regex/r; kill all/a, regex/r; exec
 *    tty/t, detach/d, no-new-privs, ignore-paused; events stats;
 *    checkpoint and restore tcp-established, ext-unix-sk, shell-job,
 *    file-locks, auto-dedup, lazy-pages, checkpoint leave-running,
 *    pre-dump, restore detach/d, no-subreaper, no-pivot.  For these
 *    commands the scan stops at the container id (the first word that is
 *    not an option or an option's value, or the word after `--`);
 *  - a boolean option may carry a Go boolean (`--debug=false`).
 * Only `create` and `run` with exactly one container id set rewrite
 * (`restore`, which also creates a container, passes through unmodified for
 * now: NEEDSWORK: rewrite its bundle too); a word
 * is a command only in command position, so `--root create`, `state
 * create`, `exec ID create` and `ps ID -- create` never rewrite.
 */
#ifndef TS_CLI_SCAN_H
#define TS_CLI_SCAN_H

#include <stdbool.h>

#include "util/error.h"

struct ts_cli_args {
	/* Global options (runc's names); NULL/false when absent.  Pointers
	 * borrow from argv. */
	const char *root;
	const char *log;
	const char *log_format; /* "text" or "json" */
	const char *log_level;
	bool debug;
	bool systemd_cgroup;

	const char *command; /* first non-option word, NULL if none */
	int command_index;   /* its index in argv, -1 if none */

	/* create, run and the commands that name one container (above): */
	const char *container_id; /* NULL if missing or not found */
	/* when container_id is NULL because an unknown option without '='
	 * stopped the scan: the two words after it that are not options (one
	 * of them is the id, told by the runtime state,
	 * ts_cli_container_known()); NULL when unused */
	const char *container_id_candidates[2];

	/* For create/run only: */
	const char *bundle;	    /* --bundle/-b value, last wins; NULL = "." (also for "") */
	const char *config_file;    /* crun's -f/--config; NULL = "config.json" */
	const char *pid_file;	    /* --pid-file */
	const char *console_socket; /* --console-socket */
	const char *preserve_fds;   /* --preserve-fds, as written */

	bool rewrite;  /* true: command is create or run, config.json is rewritten */
	char *warning; /* set (owned) when an unknown option forced a passthrough;
			* a note for the --log file, never for stderr */
};

/**
 * Scan argv.
 * @param[in]  argc, argv  as given to main; borrowed for the lifetime of ret.
 * @param[out] ret         filled (also when the result is "pass through");
 *                         release with ts_cli_args_release().
 * @param[out] err         set iff the return value is negative.
 * @return 0 (an unknown option, a missing option value or an invalid boolean
 *         is not an error: ret->rewrite is false and ret->warning says
 *         "unknown option '--x', passing through unmodified", the first
 *         such reason); -ENOMEM (nothing to release).
 */
int ts_cli_scan(int argc, char **argv, struct ts_cli_args *ret, struct ts_error **err);

/** Free what ts_cli_scan() allocated (the warning); argv stays untouched. */
void ts_cli_args_release(struct ts_cli_args *args);

/**
 * The container id and --force of `delete [-f|--force] ID` (runc's and
 * crun's options of delete, also written --force=true/false).
 * @param[in]  argc, argv  the command line ts_cli_scan() read; borrowed.
 * @param[in]  args        its scan; args->command is "delete".
 * @param[out] ret_id      the id, borrowed from argv; written on 1.
 * @param[out] ret_force   whether --force was given; written on 1.
 * @return 1; 0 when the words say anything else (another option, no id or
 *         more than one id): the runtime alone decides then.
 */
int ts_cli_scan_delete(int argc, char **argv, const struct ts_cli_args *args, const char **ret_id,
		       bool *ret_force);

#endif
