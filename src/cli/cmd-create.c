/* cmd-create.c - placeholder on branch cli only: the lead's version replaces
 * this file at merge, so main's create path can be built and tested first. */
#include "cli/cmd-create.h"

int ts_cmd_create(const struct ts_cli_args *args, const struct ts_json *config,
		  struct ts_error **err)
{
	return 0;
}
