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

bool ts_text_differs(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") != 0;
}

const char *ts_cpulist_number(const char *p, unsigned *ret)
{
	unsigned v = 0;

	if (*p < '0' || *p > '9')
		return NULL;
	/* by hand: strtoul(3) was most of the cost of the lists of 500
	 * records, read several times per create */
	do {
		v = v * 10 + (unsigned)(*p++ - '0');
		if (v >= 65536)
			return NULL;
	} while (*p >= '0' && *p <= '9');
	*ret = v;
	return p;
}

bool ts_cpulist_valid(const char *s)
{
	const char *p = s;

	if (*p == '\0')
		return true;
	for (;;) {
		unsigned a, b;

		p = ts_cpulist_number(p, &a);
		if (p == NULL)
			return false;
		if (*p == '-') {
			p = ts_cpulist_number(p + 1, &b);
			if (p == NULL || b < a)
				return false;
		}
		if (*p == '\0')
			return true;
		if (*p != ',')
			return false;
		p++;
	}
}

char *ts_path_clean_absolute(const char *path)
{
	size_t len = strlen(path);
	char *out = malloc(len + 2), *o = out;

	if (out == NULL)
		return NULL;
	*o++ = '/';
	for (const char *p = path; *p != '\0';) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			/* back to the slash before the last component, never past the root */
			while (o > out + 1 && o[-1] != '/')
				o--;
			if (o > out + 1)
				o--;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			if (o > out + 1)
				*o++ = '/';
			memcpy(o, p, n);
			o += n;
		}
		p = *end == '/' ? end + 1 : end;
	}
	*o = '\0';
	return out;
}

enum ts_runtime_family ts_runtime_family_of_path(const char *path)
{
	const char *base = path != NULL ? strrchr(path, '/') : NULL;

	base = base != NULL ? base + 1 : path;
	if (base == NULL)
		return TS_RUNTIME_FAMILY_UNKNOWN;
	if (strncmp(base, "crun", 4) == 0)
		return TS_RUNTIME_FAMILY_CRUN;
	if (strncmp(base, "runc", 4) == 0)
		return TS_RUNTIME_FAMILY_RUNC;
	return TS_RUNTIME_FAMILY_UNKNOWN;
}

const char *ts_runtime_family_state_file(enum ts_runtime_family f)
{
	switch (f) {
	case TS_RUNTIME_FAMILY_RUNC:
		return "state.json";
	case TS_RUNTIME_FAMILY_CRUN:
		return "status";
	default:
		return NULL;
	}
}
