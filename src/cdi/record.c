/* record.c - whether a create is an earlier one of the bundle retried; see cdi.h. */
#include <string.h>

#include "cdi/cdi.h"

bool ts_cdi_injection_retried(const struct ts_cdi_injection *inj, const char *recorded)
{
	return inj != NULL && recorded != NULL && inj->names != NULL && !inj->applied &&
	       strcmp(inj->names, recorded) == 0;
}
