/*
 * set.c - CPU/NUMA node index sets as cpuset list strings.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/internal.h"
#include "util/cleanup.h"

static void set_add(struct ts_cgroup_set *set, unsigned i)
{
	set->words[i / 64] |= UINT64_C(1) << (i % 64);
}

static bool set_has(const struct ts_cgroup_set *set, unsigned i)
{
	return (set->words[i / 64] >> (i % 64)) & 1;
}

static int parse_index(const char **p, unsigned *ret)
{
	const char *s = *p;
	unsigned long v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned long)(*s - '0');
		if (v >= TS_CGROUP_SET_BITS)
			return -EINVAL;
	}
	*p = s;
	*ret = (unsigned)v;
	return 0;
}

int ts_cgroup_set_parse(const char *s, struct ts_cgroup_set *ret)
{
	struct ts_cgroup_set set = {0};

	if (s == NULL)
		return -EINVAL;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t len = strlen(s);
	while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	const char *end = s + len;
	const char *p = s;
	while (p < end) {
		unsigned a, b;

		if (parse_index(&p, &a) < 0)
			return -EINVAL;
		b = a;
		if (p < end && *p == '-') {
			p++;
			if (parse_index(&p, &b) < 0 || b < a)
				return -EINVAL;
		}
		for (unsigned i = a; i <= b; i++)
			set_add(&set, i);
		if (p == end)
			break;
		if (*p != ',' || p + 1 == end)
			return -EINVAL;
		p++;
	}
	*ret = set;
	return 0;
}

char *ts_cgroup_set_format(const struct ts_cgroup_set *set)
{
	size_t cap = 64, len = 0;
	char *buf = malloc(cap);

	if (buf == NULL)
		return NULL;
	buf[0] = '\0';
	for (unsigned i = 0; i < TS_CGROUP_SET_BITS; i++) {
		if (!set_has(set, i))
			continue;
		unsigned j = i;
		while (j + 1 < TS_CGROUP_SET_BITS && set_has(set, j + 1))
			j++;
		char item[32];
		int n = j == i ? snprintf(item, sizeof(item), "%s%u", len ? "," : "", i)
			       : snprintf(item, sizeof(item), "%s%u-%u", len ? "," : "", i, j);
		if (len + (size_t)n + 1 > cap) {
			cap = (len + (size_t)n + 1) * 2;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				return NULL;
			}
			buf = nb;
		}
		memcpy(buf + len, item, (size_t)n + 1);
		len += (size_t)n;
		i = j;
	}
	return buf;
}

bool ts_cgroup_set_equal(const struct ts_cgroup_set *a, const struct ts_cgroup_set *b)
{
	return memcmp(a->words, b->words, sizeof(a->words)) == 0;
}

bool ts_cgroup_set_is_subset(const struct ts_cgroup_set *sub, const struct ts_cgroup_set *super)
{
	for (size_t i = 0; i < ARRAY_SIZE(sub->words); i++)
		if (sub->words[i] & ~super->words[i])
			return false;
	return true;
}

bool ts_cgroup_set_is_empty(const struct ts_cgroup_set *a)
{
	for (size_t i = 0; i < ARRAY_SIZE(a->words); i++)
		if (a->words[i])
			return false;
	return true;
}

void ts_cgroup_set_and(struct ts_cgroup_set *dst, const struct ts_cgroup_set *a,
		       const struct ts_cgroup_set *b)
{
	for (size_t i = 0; i < ARRAY_SIZE(dst->words); i++)
		dst->words[i] = a->words[i] & b->words[i];
}
