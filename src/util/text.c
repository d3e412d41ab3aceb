/* text.c - see text.h. */
#include <errno.h>
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

bool ts_cpulist_valid(const char *s)
{
	const char *p = s;

	if (*p == '\0')
		return true;
	for (;;) {
		unsigned long a, b;
		char *end;

		if (*p < '0' || *p > '9')
			return false;
		errno = 0;
		a = strtoul(p, &end, 10);
		if (errno != 0 || a >= 65536)
			return false;
		p = end;
		if (*p == '-') {
			p++;
			if (*p < '0' || *p > '9')
				return false;
			b = strtoul(p, &end, 10);
			if (errno != 0 || b >= 65536 || b < a)
				return false;
			p = end;
		}
		if (*p == '\0')
			return true;
		if (*p != ',')
			return false;
		p++;
	}
}
