/*
 * toposhim-plugin.c - the plugin author's library: request, result, cpu
 * lists, cgroup files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toposhim-plugin.h"
#include "util/cleanup.h"
#include "util/fileio.h"

/* Sanitizer builds (configure --enable-sanitizers): LeakSanitizer stops the
 * world with ptrace, which the plugin sandbox denies, and the sandbox clears
 * ASAN_OPTIONS; so leak checking is off inside plugins.  Unused otherwise. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static int read_all(int fd, char **ret, size_t *ret_len, struct ts_error **err)
{
	cleanup_free char *buf = NULL;
	size_t len = 0, cap = 0;

	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			nb = realloc(buf, cap);
			if (nb == NULL)
				return ts_error_set(err, ENOMEM, "request");
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ts_error_set(err, errno, "request: cannot read");
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > TSP_REQUEST_MAX)
			return ts_error_set(err, EFBIG, "request: larger than %d bytes",
					    TSP_REQUEST_MAX);
	}
	if (buf == NULL && (buf = malloc(1)) == NULL)
		return ts_error_set(err, ENOMEM, "request");
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

static int member_string(const struct ts_json *obj, const char *pointer, const char *key,
			 const char **ret, struct ts_error **err)
{
	struct ts_json *v = ts_json_get(obj, key);

	*ret = NULL;
	if (v == NULL || v->type == TS_JSON_NULL)
		return 0;
	if (v->type != TS_JSON_STRING)
		return ts_error_set(err, 0, "request: '%s/%s': expected string, got %s", pointer,
				    key, ts_json_type_name(v->type));
	*ret = v->u.string;
	return 0;
}

static int fill(struct tsp_request *req, struct ts_error **err)
{
	const struct ts_json *root = req->root, *t;
	struct ts_json *pid;
	int64_t v;
	int r;

	if (root->type != TS_JSON_OBJECT)
		return ts_error_set(err, 0, "request: '': expected object, got %s",
				    ts_json_type_name(root->type));
	r = member_string(root, "", "state", &req->state, err);
	if (r >= 0)
		r = member_string(root, "", "id", &req->container_id, err);
	if (r < 0)
		return r;
	if (req->state == NULL)
		return ts_error_set(err, 0, "request: missing 'state'");
	if (req->container_id == NULL)
		return ts_error_set(err, 0, "request: missing 'id'");
	pid = ts_json_get(root, "pid");
	if (pid != NULL && pid->type != TS_JSON_NULL) {
		if (pid->type != TS_JSON_NUMBER || ts_json_get_int64(pid, &v) < 0 || v < 0 ||
		    v > INT32_MAX)
			return ts_error_set(err, 0, "request: '/pid': invalid pid '%s'",
					    pid->type == TS_JSON_NUMBER
						    ? pid->u.number
						    : ts_json_type_name(pid->type));
		req->pid = (pid_t)v;
	}
	req->conf = ts_json_get(root, "conf");
	req->spec = ts_json_get(root, "spec");
	t = ts_json_get(root, "toposhim");
	if (t != NULL && t->type != TS_JSON_OBJECT && t->type != TS_JSON_NULL)
		return ts_error_set(err, 0, "request: '/toposhim': expected object, got %s",
				    ts_json_type_name(t->type));
	r = member_string(t, "/toposhim", "class", &req->class_name, err);
	if (r >= 0)
		r = member_string(t, "/toposhim", "cpus", &req->cpus_str, err);
	if (r >= 0)
		r = member_string(t, "/toposhim", "mems", &req->mems_str, err);
	if (r >= 0)
		r = member_string(t, "/toposhim", "cgroupPath", &req->cgroup_path, err);
	return r;
}

int tsp_request_read(int fd, struct tsp_request *ret, struct ts_error **err)
{
	struct tsp_request req = {0};
	cleanup_free char *text = NULL;
	size_t len = 0;
	int r;

	r = read_all(fd, &text, &len, err);
	if (r < 0)
		return r;
	r = ts_json_parse(text, len, "request", &req.root, err);
	if (r < 0)
		return r;
	r = fill(&req, err);
	if (r < 0) {
		tsp_request_release(&req);
		return r;
	}
	*ret = req;
	return 0;
}

void tsp_request_release(struct tsp_request *req)
{
	if (req == NULL)
		return;
	ts_json_free(req->root);
	*req = (struct tsp_request){0};
}

int tsp_result_write(int fd, const char *plugin, const char *error, const struct ts_json *metadata,
		     struct ts_error **err)
{
	cleanup_json struct ts_json *res = ts_json_new_object();
	cleanup_free char *text = NULL;
	size_t len;
	int r;

	if (res == NULL)
		return ts_error_set(err, ENOMEM, "result");
	r = ts_json_object_set(res, "plugin", ts_json_new_string(plugin), err);
	if (r >= 0)
		r = ts_json_object_set(res, "version", ts_json_new_string("0.1"), err);
	if (r >= 0)
		r = ts_json_object_set(res, "error", ts_json_new_string(error ? error : ""), err);
	if (r >= 0)
		r = ts_json_object_set(res, "metadata",
				       metadata ? ts_json_dup(metadata) : ts_json_new_object(),
				       err);
	if (r >= 0)
		r = ts_json_serialize(res, false, &text, &len, err);
	if (r < 0)
		return ts_error_prefix(err, "result");
	text[len] = '\n';
	r = ts_write_all(fd, text, len + 1);
	if (r < 0)
		return ts_error_set(err, -r, "result: cannot write");
	return 0;
}

/* ---- cpu lists ---- */

static void cpuset_set(struct tsp_cpuset *s, unsigned cpu)
{
	s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

static bool cpuset_isset(const struct tsp_cpuset *s, unsigned cpu)
{
	return (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

static int parse_number(const char **p, unsigned long *ret)
{
	char *end;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	errno = 0;
	*ret = strtoul(*p, &end, 10);
	if (errno != 0)
		return -ERANGE;
	*p = end;
	return 0;
}

int tsp_cpulist_parse(const char *s, struct tsp_cpuset *ret, struct ts_error **err)
{
	struct tsp_cpuset set = {{0}};
	const char *p = s;
	size_t len = strlen(s);

	if (len > 0 && s[len - 1] == '\n')
		len--;
	while ((size_t)(p - s) < len) {
		unsigned long a, b;
		int r = parse_number(&p, &a);

		b = a;
		if (r >= 0 && *p == '-') {
			p++;
			r = parse_number(&p, &b);
		}
		if (r == -ERANGE || (r >= 0 && b >= TSP_CPUS_MAX))
			return ts_error_set(err, ERANGE, "cpu list '%.*s': cpu beyond %d", (int)len,
					    s, TSP_CPUS_MAX - 1);
		if (r < 0 || b < a || ((size_t)(p - s) < len && *p != ',') ||
		    ((size_t)(p - s) + 1 == len && *p == ','))
			return ts_error_set(err, 0, "invalid cpu list '%.*s'", (int)len, s);
		for (unsigned long c = a; c <= b; c++)
			cpuset_set(&set, (unsigned)c);
		if ((size_t)(p - s) < len)
			p++;
	}
	*ret = set;
	return 0;
}

char *tsp_cpulist_format(const struct tsp_cpuset *set)
{
	char *buf = calloc(1, TSP_CPUS_MAX * 6);
	size_t o = 0;

	if (buf == NULL)
		return NULL;
	for (unsigned c = 0; c < TSP_CPUS_MAX; c++) {
		unsigned end = c;

		if (!cpuset_isset(set, c))
			continue;
		while (end + 1 < TSP_CPUS_MAX && cpuset_isset(set, end + 1))
			end++;
		o += (size_t)sprintf(buf + o, o ? ",%u" : "%u", c);
		if (end > c)
			o += (size_t)sprintf(buf + o, "-%u", end);
		c = end;
	}
	return buf;
}

void tsp_cpuset_subtract(struct tsp_cpuset *a, const struct tsp_cpuset *b)
{
	for (size_t i = 0; i < ARRAY_SIZE(a->bits); i++)
		a->bits[i] &= ~b->bits[i];
}

unsigned tsp_cpuset_count(const struct tsp_cpuset *set)
{
	unsigned n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(set->bits); i++)
		n += (unsigned)__builtin_popcountll(set->bits[i]);
	return n;
}

/* ---- cgroups ---- */

/* Find the path of a /proc/<pid>/cgroup line: "0::/p" (v2) when controller
 * is NULL, else "N:a,controller,b:/p". */
static const char *cgroup_line_path(char *line, const char *controller)
{
	char *c1 = strchr(line, ':'), *c2, *list;

	if (c1 == NULL || (c2 = strchr(c1 + 1, ':')) == NULL)
		return NULL;
	*c2 = '\0';
	list = c1 + 1;
	c2[1 + strcspn(c2 + 1, "\n")] = '\0';
	if (controller == NULL)
		return list[0] == '\0' ? c2 + 1 : NULL;
	for (char *tok = strtok(list, ","); tok != NULL; tok = strtok(NULL, ","))
		if (strcmp(tok, controller) == 0)
			return c2 + 1;
	return NULL;
}

bool tsp_cgroup_is_v2(const char *dir)
{
	cleanup_free char *p = NULL;

	if (asprintf(&p, "%s/cgroup.controllers", dir) < 0)
		return false;
	return access(p, F_OK) == 0;
}

int tsp_cgroup_dir(const struct tsp_request *req, const char *cgroup_root, const char *controller,
		   char **ret, struct ts_error **err)
{
	cleanup_free char *proc = NULL, *text = NULL;
	bool v2 = tsp_cgroup_is_v2(cgroup_root);
	char *save = NULL;
	int r;

	/* The container's cgroup as /proc/<pid>/cgroup names it, relative to
	 * the hierarchy: under the root on cgroup v2, under each controller's
	 * hierarchy on v1.  An absolute directory below the root is taken as is. */
	if (req->cgroup_path != NULL) {
		size_t n = strlen(cgroup_root);
		int w;

		if (strncmp(req->cgroup_path, cgroup_root, n) == 0 && req->cgroup_path[n] == '/')
			w = asprintf(ret, "%s", req->cgroup_path);
		else if (v2)
			w = asprintf(ret, "%s%s", cgroup_root, req->cgroup_path);
		else
			w = asprintf(ret, "%s/%s%s", cgroup_root, controller, req->cgroup_path);
		return w >= 0 ? 0 : ts_error_set(err, ENOMEM, "cgroup path");
	}
	if (req->pid <= 0)
		return ts_error_set(err, ENOENT, "no cgroup path in the request and no pid");
	if (asprintf(&proc, "/proc/%d/cgroup", (int)req->pid) < 0)
		return ts_error_set(err, ENOMEM, "cgroup path");
	r = ts_read_file_at(AT_FDCWD, proc, 1024 * 1024, &text, NULL, err);
	if (r < 0)
		return r;
	for (char *line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *path = cgroup_line_path(line, v2 ? NULL : controller);

		if (path == NULL)
			continue;
		if (v2 ? asprintf(ret, "%s%s", cgroup_root, path) < 0
		       : asprintf(ret, "%s/%s%s", cgroup_root, controller, path) < 0)
			return ts_error_set(err, ENOMEM, "cgroup path");
		return 0;
	}
	return ts_error_set(err, ENOENT, "%s: no entry for '%s'", proc, v2 ? "" : controller);
}

int tsp_cgroup_read(const char *dir, const char *file, char **ret, struct ts_error **err)
{
	cleanup_close int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int fd = -EBADF;
	char buf[65536];
	ssize_t n;

	if (dfd < 0)
		return ts_error_set(err, errno, "%s: cannot open", dir);
	fd = openat(dfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ts_error_set(err, errno, "%s/%s: cannot open", dir, file);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return ts_error_set(err, errno, "%s/%s: cannot read", dir, file);
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	*ret = strndup(buf, (size_t)n);
	return *ret ? 0 : ts_error_set(err, ENOMEM, "%s/%s", dir, file);
}

int tsp_cgroup_write(const char *dir, const char *file, const char *value, struct ts_error **err)
{
	cleanup_close int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_close int fd = -EBADF;
	size_t len = strlen(value);
	ssize_t n;

	if (dfd < 0)
		return ts_error_set(err, errno, "%s: cannot open", dir);
	fd = openat(dfd, file, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ts_error_set(err, errno, "%s/%s: cannot open", dir, file);
	n = write(fd, value, len);
	if (n < 0 || (size_t)n != len)
		return ts_error_set(err, n < 0 ? errno : EIO, "%s/%s: cannot write '%s'", dir, file,
				    value);
	return 0;
}

int tsp_main(int argc, char **argv, const char *name,
	     int (*handler)(const struct tsp_request *req, struct ts_json **ret_metadata,
			    struct ts_error **err))
{
	struct tsp_request req = {0};
	cleanup_json struct ts_json *metadata = NULL;
	cleanup_error struct ts_error *err = NULL, *werr = NULL;
	cleanup_free char *msg = NULL;
	int r;

	if (argc != 2 || strcmp(argv[1], "invoke") != 0) {
		fprintf(stderr, "usage: %s invoke < request.json\n", name);
		return 2;
	}
	r = tsp_request_read(0, &req, &err);
	if (r >= 0)
		r = handler(&req, &metadata, &err);
	tsp_request_release(&req);
	if (r < 0) {
		msg = ts_error_format(err);
		if (msg != NULL)
			fprintf(stderr, "%s: %s\n", name, msg);
	}
	if (tsp_result_write(1, name, msg, metadata, &werr) < 0) {
		fprintf(stderr, "%s: %s\n", name, werr->msg);
		return 1;
	}
	return r < 0 ? 1 : 0;
}
