/*
 * soak-driver.c - churn a node's allocation store the way a busy node does.
 *
 * N workers (processes) each loop for S seconds: make a bundle whose
 * config.json is the template with one request's annotations, run
 * `toposhim --root ROOT create --bundle B ID` (critical ones asking for 1 to
 * --max-cpus CPUs), SIGKILL one create in K at a
 * random moment, and delete about half of the containers created (through
 * `toposhim --root ROOT delete`, as an engine does).  What each create
 * printed on stderr is kept per worker, with its exit status, for the checks
 * that follow the run (tests/soak/soak.bash).
 *
 *   soak-driver --toposhim PATH --root DIR --work DIR --template FILE
 *               [--workers 8] [--seconds 30] [--seed 1] [--kill-one-in 10]
 *               [--max-cpus 4] [--start] [--prefix s]
 *
 * The template is an OCI config.json text holding the word @ANNOTATIONS@
 * where the members of an annotations object go.  Every container gets
 * WORK/<id>/config.json.  --start also starts every container it keeps
 * (real runc: a short busybox process that exits by itself).
 *
 * Printed at the end (one line each, for the test log):
 *   creates N ok N refused N killed N deletes N
 *   throughput F creates/s
 *   latency p50 F ms p99 F ms max F ms
 * Per worker, WORK/worker-<w>.log holds one line per create, "ID RC" (RC
 * "killed" for a SIGKILLed one), then the create's stderr lines prefixed
 * "  ".  Exit status 0 unless the driver itself failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct soak_options {
	char *toposhim; /* these point into argv */
	char *root;
	char *work;
	char *prefix;
	char *template_text;
	unsigned workers;
	unsigned seconds;
	unsigned seed;
	unsigned kill_one_in;
	unsigned max_cpus;
	bool start;
};

struct soak_stats {
	unsigned long creates, ok, refused, killed, deletes;
	unsigned long n_lat;
	double lat_ms[65536];
};

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* xorshift: reproducible per worker from the seed */
static uint32_t next_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return (uint32_t)(x >> 16);
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, len = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *n = realloc(buf, cap = cap * 2 + 8192);

			if (n == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = n;
		}
		size_t got = fread(buf + len, 1, 4096, f);

		len += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* WORK/ID/config.json: the template with the request's annotations. */
static int write_bundle(const struct soak_options *o, const char *id, const char *annotations)
{
	char dir[4096], path[4200];
	const char *mark = strstr(o->template_text, "@ANNOTATIONS@");
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%s", o->work, id);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/config.json", dir);
	f = fopen(path, "we");
	if (f == NULL || mark == NULL)
		return -1;
	fprintf(f, "%.*s%s%s", (int)(mark - o->template_text), o->template_text, annotations,
		mark + strlen("@ANNOTATIONS@"));
	return fclose(f) == 0 ? 0 : -1;
}

/* Run toposhim with argv; stderr to err_fd; SIGKILL it after kill_usec when
 * kill_usec > 0.  *ret_killed tells whether the kill landed before it ended.
 * @return the exit status, 128+signal, or -1 when it could not be run. */
static int run_toposhim(const struct soak_options *o, char *const argv[], int err_fd,
			uint64_t kill_usec, bool *ret_killed)
{
	int status = 0;
	pid_t pid = fork();

	*ret_killed = false;
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		dup2(null, 0);
		dup2(null, 1);
		dup2(err_fd, 2);
		execv(o->toposhim, argv);
		_exit(127);
	}
	if (kill_usec > 0) {
		uint64_t until = now_usec() + kill_usec;

		for (;;) {
			pid_t w = waitpid(pid, &status, WNOHANG);

			if (w == pid)
				goto done;
			if (now_usec() >= until)
				break;
			usleep(200);
		}
		kill(pid, SIGKILL);
		*ret_killed = true;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
done:
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Append the create's stderr (kept in tmp_fd) to the worker log. */
static void log_create(FILE *log, const char *id, const char *rc, int tmp_fd)
{
	char buf[8192];
	ssize_t n;
	bool bol = true;

	fprintf(log, "%s %s\n", id, rc);
	lseek(tmp_fd, 0, SEEK_SET);
	while ((n = read(tmp_fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++) {
			if (bol)
				fputs("  ", log);
			fputc(buf[i], log);
			bol = buf[i] == '\n';
		}
	if (!bol)
		fputc('\n', log);
	if (ftruncate(tmp_fd, 0) < 0 || lseek(tmp_fd, 0, SEEK_SET) < 0)
		perror("ftruncate");
	fflush(log);
}

static void worker(const struct soak_options *o, unsigned w, struct soak_stats *st)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)o->seed << 20) ^ (w + 1);
	uint64_t end = now_usec() + (uint64_t)o->seconds * 1000000u;
	char path[4200], tmp[4200];
	int tmp_fd;
	FILE *log;

	snprintf(path, sizeof(path), "%s/worker-%u.log", o->work, w);
	snprintf(tmp, sizeof(tmp), "%s/worker-%u.stderr", o->work, w);
	log = fopen(path, "we");
	tmp_fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log == NULL || tmp_fd < 0) {
		perror(path);
		_exit(2);
	}
	for (unsigned long n = 0; now_usec() < end; n++) {
		char id[128], ann[512];
		uint32_t kind = next_rand(&rng) % 10;
		uint64_t kill_usec = 0;
		bool killed;
		uint64_t t0;
		int rc;

		snprintf(id, sizeof(id), "%s%u-%lu", o->prefix, w, n);
		if (kind < 4)
			snprintf(
				ann, sizeof(ann),
				"\"toposhim.io/class\": \"critical\", \"toposhim.io/cpus\": \"%u\"",
				1 + next_rand(&rng) % o->max_cpus);
		else if (kind < 7)
			snprintf(ann, sizeof(ann), "\"toposhim.io/class\": \"standard\"");
		else
			snprintf(ann, sizeof(ann), "\"toposhim.io/class\": \"batch\"");
		if (write_bundle(o, id, ann) < 0) {
			perror(id);
			_exit(2);
		}
		if (o->kill_one_in > 0 && next_rand(&rng) % o->kill_one_in == 0)
			kill_usec = 1 + next_rand(&rng) % 12000;
		snprintf(path, sizeof(path), "%s/%s", o->work, id);
		char *create[] = {o->toposhim, "--root", o->root, "create",
				  "--bundle",  path,	 id,	  NULL};
		t0 = now_usec();
		rc = run_toposhim(o, create, tmp_fd, kill_usec, &killed);
		st->creates++;
		if (killed) {
			st->killed++;
			log_create(log, id, "killed", tmp_fd);
			continue;
		}
		if (st->n_lat < sizeof(st->lat_ms) / sizeof(st->lat_ms[0]))
			st->lat_ms[st->n_lat++] = (double)(now_usec() - t0) / 1000.0;
		snprintf(tmp, sizeof(tmp), "%d", rc);
		log_create(log, id, tmp, tmp_fd);
		if (rc != 0) {
			st->refused++;
			continue;
		}
		st->ok++;
		if (o->start && next_rand(&rng) % 2 == 0) {
			char *start[] = {o->toposhim, "--root", o->root, "start", id, NULL};

			rc = run_toposhim(o, start, tmp_fd, 0, &killed);
			snprintf(tmp, sizeof(tmp), "start %d", rc);
			log_create(log, id, tmp, tmp_fd);
		}
		if (next_rand(&rng) % 2 == 0) {
			char *del[] = {o->toposhim, "--root", o->root, "delete",
				       "--force",   id,	      NULL};

			rc = run_toposhim(o, del, tmp_fd, 0, &killed);
			snprintf(tmp, sizeof(tmp), "delete %d", rc);
			log_create(log, id, tmp, tmp_fd);
			st->deletes++;
		}
	}
	fclose(log);
	close(tmp_fd);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double percentile(const double *v, unsigned long n, double p)
{
	unsigned long i;

	if (n == 0)
		return 0;
	i = (unsigned long)(p * (double)(n - 1) + 0.5);
	return v[i];
}

static struct soak_stats *mmap_stats(unsigned n)
{
	void *p = mmap(NULL, n * sizeof(struct soak_stats), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: soak-driver --toposhim PATH --root DIR --work DIR --template FILE "
		"[--workers N] [--seconds S] [--seed N] [--kill-one-in K] [--max-cpus N] [--start] "
		"[--prefix P]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct soak_options o = {.workers = 8,
				 .seconds = 30,
				 .seed = 1,
				 .kill_one_in = 10,
				 .max_cpus = 4,
				 .prefix = NULL};
	static char default_prefix[] = "s";
	const char *template_path = NULL;
	struct soak_stats *all;
	unsigned long total_lat = 0;
	double *lat;
	uint64_t t0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--start") == 0) {
			o.start = true;
			continue;
		}
		if (v == NULL)
			return usage();
		i++;
		if (strcmp(a, "--toposhim") == 0)
			o.toposhim = v;
		else if (strcmp(a, "--root") == 0)
			o.root = v;
		else if (strcmp(a, "--work") == 0)
			o.work = v;
		else if (strcmp(a, "--template") == 0)
			template_path = v;
		else if (strcmp(a, "--prefix") == 0)
			o.prefix = v;
		else if (strcmp(a, "--workers") == 0)
			o.workers = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(a, "--seconds") == 0)
			o.seconds = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(a, "--seed") == 0)
			o.seed = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(a, "--max-cpus") == 0)
			o.max_cpus = (unsigned)strtoul(v, NULL, 10);
		else if (strcmp(a, "--kill-one-in") == 0)
			o.kill_one_in = (unsigned)strtoul(v, NULL, 10);
		else
			return usage();
	}
	if (o.prefix == NULL)
		o.prefix = default_prefix;
	if (o.toposhim == NULL || o.root == NULL || o.work == NULL || template_path == NULL ||
	    o.workers == 0 || o.workers > 64 || o.max_cpus == 0)
		return usage();
	o.template_text = read_text(template_path);
	if (o.template_text == NULL || strstr(o.template_text, "@ANNOTATIONS@") == NULL) {
		fprintf(stderr, "soak-driver: %s: unreadable or without @ANNOTATIONS@\n",
			template_path);
		return 2;
	}
	/* results come back through a shared anonymous mapping */
	all = mmap_stats(o.workers);
	if (all == NULL)
		return 2;
	t0 = now_usec();
	for (unsigned w = 0; w < o.workers; w++) {
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (pid == 0) {
			worker(&o, w, &all[w]);
			_exit(0);
		}
	}
	for (unsigned w = 0; w < o.workers; w++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "soak-driver: a worker failed\n");
			return 2;
		}
	}
	double secs = (double)(now_usec() - t0) / 1e6;
	struct soak_stats sum = {0};

	for (unsigned w = 0; w < o.workers; w++) {
		sum.creates += all[w].creates;
		sum.ok += all[w].ok;
		sum.refused += all[w].refused;
		sum.killed += all[w].killed;
		sum.deletes += all[w].deletes;
		total_lat += all[w].n_lat;
	}
	lat = calloc(total_lat + 1, sizeof(*lat));
	if (lat == NULL)
		return 2;
	total_lat = 0;
	for (unsigned w = 0; w < o.workers; w++)
		for (unsigned long i = 0; i < all[w].n_lat; i++)
			lat[total_lat++] = all[w].lat_ms[i];
	qsort(lat, total_lat, sizeof(*lat), cmp_double);
	printf("creates %lu ok %lu refused %lu killed %lu deletes %lu\n", sum.creates, sum.ok,
	       sum.refused, sum.killed, sum.deletes);
	printf("throughput %.1f creates/s\n", (double)sum.creates / secs);
	printf("latency p50 %.2f ms p99 %.2f ms max %.2f ms\n", percentile(lat, total_lat, 0.50),
	       percentile(lat, total_lat, 0.99), total_lat ? lat[total_lat - 1] : 0.0);
	free(lat);
	free(o.template_text);
	return 0;
}
