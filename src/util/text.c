/* text.c - see text.h. */
#include <stdlib.h>
#include <string.h>

#include "util/text.h"

char **ts_split_lines(char *text, size_t *ret_n)
{
	size_t n = 0, cap = 64;
	char **v = malloc(cap * sizeof(*v));

	for (char *p = text; v != NULL && *p != '\0';) {
		char *nl = strchr(p, '\n');

		if (n == cap) {
			char **nv = realloc(v, (cap *= 2) * sizeof(*v));

			if (nv == NULL) {
				free(v);
				return NULL;
			}
			v = nv;
		}
		v[n++] = p;
		if (nl == NULL)
			break;
		*nl = '\0';
		p = nl + 1;
	}
	*ret_n = n;
	return v;
}
