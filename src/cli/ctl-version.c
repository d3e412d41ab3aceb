/* ctl-version.c - `toposhimctl version`. */
#include <stdio.h>

#include "cli/ctl.h"

int ts_ctl_version(int argc, char **argv)
{
	if (argc > 1) {
		fprintf(stderr, "toposhimctl: version: unexpected argument '%s'\n", argv[1]);
		return 2;
	}
	printf("toposhimctl %s\n", PACKAGE_VERSION);
	return 0;
}
