/* ctl-help.c - `toposhimctl help`. */
#include <stdio.h>

#include "cli/ctl.h"

int ts_ctl_help(int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "toposhimctl: help: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	ts_ctl_usage(stdout);
	return 0;
}
