/* ctl.c - toposhimctl's main: dispatch to the command table (ctl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/ctl.h"
#include "util/cleanup.h"

static const struct ts_ctl_command ts_ctl_commands[] = {
	{"cdi", ts_ctl_cdi, "list, validate and resolve CDI devices"},
	{"topology", ts_ctl_topology, "show packages, NUMA nodes, cores, PUs and devices"},
	{"plan", ts_ctl_plan, "show the placement a create would make, writing nothing"},
	{"alloc", ts_ctl_alloc, "list, collect or unpin CPU/memory allocations"},
	{"nrt", ts_ctl_nrt, "print the node as a NodeResourceTopology object"},
	{"version", ts_ctl_version, "print the version"},
	{"help", ts_ctl_help, "show this help"},
};

void ts_ctl_usage(FILE *f)
{
	fprintf(f, "usage: toposhimctl COMMAND [ARG...]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(ts_ctl_commands); i++)
		fprintf(f, "  %-10s %s\n", ts_ctl_commands[i].name, ts_ctl_commands[i].summary);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : NULL;

	if (name == NULL) {
		ts_ctl_usage(stderr);
		return 2;
	}
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		name = "help";
	else if (strcmp(name, "--version") == 0)
		name = "version";
	for (size_t i = 0; i < ARRAY_SIZE(ts_ctl_commands); i++)
		if (strcmp(name, ts_ctl_commands[i].name) == 0)
			return ts_ctl_commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "toposhimctl: unknown command '%s' (see 'toposhimctl help')\n", name);
	return 2;
}
