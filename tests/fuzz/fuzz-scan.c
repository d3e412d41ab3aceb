/*
 * fuzz-scan.c - the argv scanner (src/cli/scan.c): what toposhim reads of the runtime
 * command line an engine gives it (ts_cli_scan()).
 *
 * Input: argv[1..] separated by NUL bytes (argv[0] is "toposhim").  Checked: it never
 * fails except for memory; a command or a container id points into argv; a rewrite has a
 * command and a container id; a warning means no rewrite.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/scan.h"
#include "fuzz.h"
#include "util/cleanup.h"

static bool in_argv(const char *p, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		size_t len = strlen(argv[i]);

		if (p >= argv[i] && p <= argv[i] + len)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *buf = NULL;
	cleanup_free char **argv = NULL;
	struct ts_cli_args args;
	int argc = 1;

	if (size > 65536)
		return 0;
	buf = fuzz_strndup(data, size);
	for (size_t i = 0; i < size; i++)
		if (buf[i] == '\0')
			argc++;
	argc++;
	argv = calloc((size_t)argc + 1, sizeof(*argv));
	fuzz_check(argv != NULL, "out of memory");
	argv[0] = (char *)"toposhim";
	argc = 1;
	argv[argc++] = buf;
	for (size_t i = 0; i < size; i++)
		if (buf[i] == '\0')
			argv[argc++] = buf + i + 1;
	fuzz_check(ts_cli_scan(argc, argv, &args, &err) == 0, "scan failed");
	if (args.command != NULL) {
		fuzz_check(args.command_index > 0 && args.command_index < argc &&
				   argv[args.command_index] == args.command,
			   "command is not argv[command_index]");
	}
	if (args.container_id != NULL)
		fuzz_check(in_argv(args.container_id, argc, argv), "container id not from argv");
	if (args.bundle != NULL)
		fuzz_check(in_argv(args.bundle, argc, argv), "bundle not from argv");
	if (args.rewrite)
		fuzz_check(args.command != NULL && args.container_id != NULL,
			   "rewrite without a command or container id");
	if (args.warning != NULL)
		fuzz_check(!args.rewrite, "a warning with a rewrite");
	ts_cli_args_release(&args);
	return 0;
}
