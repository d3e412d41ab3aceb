/*
 * ctl-getopt.c - toposhimctl's option parsing (ts_ctl_getopt(),
 * ts_ctl_check_dir(), cli/ctl.h), in the library: the commands' files are
 * linked into their unit tests without ctl.c, whose main() they cannot take.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/ctl.h"

int ts_ctl_getopt(int argc, char **argv, const char *optstring, const struct option *longopts)
{
	char spec[64];
	int c;

	snprintf(spec, sizeof(spec), ":%s", optstring);
	opterr = 0;
	c = getopt_long(argc, argv, spec, longopts, NULL);
	if (c != '?' && c != ':')
		return c;
	/* a long option is the word getopt stopped at (an unknown one
	 * leaves optopt 0); a short one is in optopt, which a long one
	 * missing its argument sets too */
	if (strncmp(argv[optind - 1], "--", 2) == 0 && (c == ':' || optopt == 0))
		fprintf(stderr, "toposhimctl: %s: %s '%s'%s\n", argv[0],
			c == ':' ? "option" : "unrecognized option", argv[optind - 1],
			c == ':' ? " requires an argument" : "");
	else
		fprintf(stderr, "toposhimctl: %s: %s '-%c'%s\n", argv[0],
			c == ':' ? "option" : "unrecognized option", optopt,
			c == ':' ? " requires an argument" : "");
	return '?';
}

int ts_ctl_check_dir(const char *command, const char *option, const char *dir)
{
	struct stat st;
	int e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;

	if (e == 0)
		return 0;
	fprintf(stderr, "toposhimctl: %s: %s '%s': %s\n", command, option, dir, strerror(e));
	return 1;
}
