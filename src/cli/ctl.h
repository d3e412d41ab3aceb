/*
 * ctl.h - toposhimctl, the operator's tool: its command table.
 *
 * `toposhimctl COMMAND [ARG...]` runs the entry of that name with argc/argv
 * starting at COMMAND (argv[0] is the command name).  Each command is
 * `int ts_ctl_<name>(int argc, char **argv)` in src/cli/ctl-<name>.c and
 * returns the process exit code: 0 success, 1 failure, 2 usage error.
 * Primary output goes to stdout, errors to stderr as
 * "toposhimctl: <command>: <message>".
 */
#ifndef TS_CLI_CTL_H
#define TS_CLI_CTL_H

#include <stdio.h>

struct ts_ctl_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary; /* one line for `toposhimctl help` */
};

struct option;

/**
 * getopt_long(3) for a command's options, argv[0] being the command's name:
 * the same results, but getopt's own messages are replaced by one line in
 * the tool's form, "toposhimctl: <command>: unrecognized option '--x'" or
 * "toposhimctl: <command>: option '--x' requires an argument" (getopt
 * words them "<command>: ...", without the tool's name: helper-16).
 * The caller sets optind = 0 before the first call, as for getopt_long.
 * @param[in] optstring  as getopt_long's, without a leading ':'.
 * @return the option's value; -1 at the end; '?' after such a line.
 */
int ts_ctl_getopt(int argc, char **argv, const char *optstring, const struct option *longopts);

/**
 * Check a directory named on the command line, which is meant to be there
 * (a typo must not read as an empty one): stat(2) it, following links.
 * @param[in] command, option  for the message, e.g. "cdi", "--spec-dir".
 * @return 0 for a directory; 1 after printing
 *         "toposhimctl: <command>: <option> '<dir>': <strerror>" to stderr
 *         (ENOENT, ENOTDIR for another kind of file, EACCES, ...).
 */
int ts_ctl_check_dir(const char *command, const char *option, const char *dir);

/** Print the usage text with every command of the table to f. */
void ts_ctl_usage(FILE *f);

/** `toposhimctl version`: print "toposhimctl <version>". @return 0; 2 on extra arguments. */
int ts_ctl_version(int argc, char **argv);

/** `toposhimctl help`: print the usage on stdout. @return 0; 2 on extra arguments. */
int ts_ctl_help(int argc, char **argv);

/* Written in their own files and added to the table at merge: */
int ts_ctl_cdi(int argc, char **argv);
int ts_ctl_topology(int argc, char **argv);
int ts_ctl_alloc(int argc, char **argv);
int ts_ctl_plan(int argc, char **argv);

/**
 * `toposhimctl nrt [--format json|yaml] [--name NODE]`: the node as a
 * NodeResourceTopology object (ts_placement_nrt()) on stdout, from the
 * topology, the live allocations and the CDI devices a create would see,
 * writing nothing (src/cli/ctl-nrt.c).  Warnings (a device of unknown NUMA
 * node, a rejected spec file) go to stderr.
 * @return 0; 1 on failure (config, topology, store, out of memory); 2 for
 *         a usage error.
 */
int ts_ctl_nrt(int argc, char **argv);

#endif
