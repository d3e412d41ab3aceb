/*
 * ctl-alloc.c - `toposhimctl alloc`: the operator's view of the allocation
 * store (src/state).
 *   alloc list          one line per allocation under a header: CONTAINER ID,
 *                       RECORD, CLASS, CPUS, MEMS, PID, DEVICES ("-" for none),
 *                       columns two spaces apart, in store order; RECORD is
 *                       the record's state (creating: reserved, the runtime
 *                       has not yet created the container; created: it
 *                       has; gone: its container is, and the next create
 *                       or alloc gc collects the record: ts_state_stale()),
 *                       not the container's (ask the runtime); then
 *                       the plain containers that may still exist (no
 *                       request, not recorded: the journal of state/plain.h)
 *                       with RECORD "plain" and PID "-"
 *   alloc list --json   the "allocations" array of allocations.json, pretty
 *                       (both list after learning, from the runtimes' state,
 *                       the init of every "creating" record: ts_state_learn_inits())
 *   alloc gc [--grace SECONDS]
 *                       collect stale allocations (ts_state_gc()), one line
 *                       "collected <container id>" each; the grace period
 *                       defaults to the config's "gc_grace_seconds" (60);
 *                       and drop the journal entries of plain containers
 *                       that are gone (ts_plain_journal_compact())
 *   alloc unpin [--root ROOT] ID
 *                       end the pin of a shared-pool container (its cpuset
 *                       changed from outside, or given in its config.json):
 *                       its record and its placement file say unpinned
 *                       (ts_state_placement_pin() with no cpus), and a
 *                       settle gives it the shared pool's cpus again;
 *                       "unpinned <container id>", or "<container id> is
 *                       not pinned" (exit 0 both)
 * The store is $TOPOSHIM_STATE_DIR, else the config's "state_dir", else
 * /run/toposhim.  Exit codes and message shapes follow ctl.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd-hook.h"
#include "cli/lifecycle.h"
#include "cli/pools.h"
#include "cli/config.h"
#include "cli/ctl.h"
#include "oci/json.h"
#include "state/plain.h"
#include "state/state.h"
#include "util/cleanup.h"

#define USAGE                                                                                \
	"usage: toposhimctl alloc list [--json] | toposhimctl alloc gc [--grace SECONDS] | " \
	"toposhimctl alloc unpin [--root ROOT] ID"

enum column {
	COL_ID,
	COL_STATE,
	COL_CLASS,
	COL_CPUS,
	COL_PINNED,
	COL_MEMS,
	COL_PID,
	COL_DEVICES,
	_COL_MAX
};

static const char *const headers[_COL_MAX] = {"CONTAINER ID", "RECORD", "CLASS", "CPUS",
					      "PINNED",	      "MEMS",	"PID",	 "DEVICES"};

static int print_error(struct ts_error *err)
{
	cleanup_free char *msg = ts_error_format(err);

	fprintf(stderr, "toposhimctl: alloc: %s\n", msg ? msg : "out of memory");
	return 1;
}

static int usage(const char *why)
{
	fprintf(stderr, "toposhimctl: alloc: %s\n%s\n", why, USAGE);
	return 2;
}

/* The cells of one row; cells[COL_DEVICES] and [COL_PID] are owned by *owned. */
static bool row_cells(const struct ts_alloc *a, const char *cells[_COL_MAX], char **owned_pid,
		      char **owned_devices)
{
	size_t len = 0;

	cells[COL_ID] = a->container_id;
	cells[COL_STATE] = ts_alloc_status_to_string(a->status);
	cells[COL_CLASS] = a->class_name && a->class_name[0] ? a->class_name : "-";
	cells[COL_CPUS] = a->cpus_str && a->cpus_str[0] ? a->cpus_str : "-";
	/* a cpuset of the user's: config.json's, or set from outside since */
	cells[COL_PINNED] = a->pinned ? "yes" : "no";
	cells[COL_MEMS] = a->mems_str && a->mems_str[0] ? a->mems_str : "-";
	cells[COL_PID] = "-";
	cells[COL_DEVICES] = "-";
	if (a->pid > 0) {
		if (asprintf(owned_pid, "%d", (int)a->pid) < 0)
			return false;
		cells[COL_PID] = *owned_pid;
	}
	for (size_t i = 0; a->devices != NULL && a->devices[i] != NULL; i++)
		len += strlen(a->devices[i]) + 1;
	if (len > 0) {
		char *p = malloc(len);

		if (p == NULL)
			return false;
		*owned_devices = p;
		for (size_t i = 0; a->devices[i] != NULL; i++)
			p += sprintf(p, "%s%s", i ? "," : "", a->devices[i]);
		cells[COL_DEVICES] = *owned_devices;
	}
	return true;
}

static void print_row(const char *const cells[_COL_MAX], const size_t width[_COL_MAX])
{
	for (int c = 0; c < _COL_MAX; c++)
		if (c == _COL_MAX - 1)
			printf("%s\n", cells[c]);
		else
			printf("%-*s  ", (int)width[c], cells[c]);
}

/* The cells of a plain container's row. */
static void plain_cells(const struct ts_plain_entry *e, const char *cells[_COL_MAX])
{
	cells[COL_ID] = e->container_id;
	cells[COL_STATE] = "plain";
	cells[COL_CLASS] = e->class_name[0] ? e->class_name : "-";
	cells[COL_CPUS] = e->cpus[0] ? e->cpus : "-";
	cells[COL_PINNED] = "no";
	cells[COL_MEMS] = e->mems[0] ? e->mems : "-";
	cells[COL_PID] = "-";
	cells[COL_DEVICES] = "-";
}

/* The journal's plain containers that may still exist and have no record,
 * the last entry of each; read without taking it. */
static int live_plain(const struct ts_state *s, struct ts_plain_entry **ret_v, size_t *ret_n)
{
	cleanup_error struct ts_error *err = NULL;
	struct ts_plain_entry *v = NULL;
	size_t n = 0, k = 0;

	if (ts_plain_journal_read(ts_state_dir_fd(s), &v, &n, &err) < 0) {
		fprintf(stderr, "toposhimctl: alloc: warning: %s: %s, ignoring\n", ts_state_dir(s),
			err->msg);
		n = 0;
	}
	n = ts_plain_entries_keep_live(ts_state_proc_root(s), v, n);
	for (size_t i = 0; i < n; i++) {
		if (ts_state_find(s, v[i].runtime_root, v[i].container_id) != NULL) {
			ts_plain_entry_release(&v[i]);
			continue;
		}
		v[k++] = v[i];
	}
	*ret_v = v;
	*ret_n = k;
	return 0;
}

static int list_text(const struct ts_state *s, uint64_t grace_usec)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free bool *gone = NULL;
	size_t n = ts_state_count(s), np = 0;
	struct ts_plain_entry *plain = NULL;
	size_t width[_COL_MAX];

	/* RECORD "gone": what the next create (or alloc gc) collects */
	if (ts_state_stale(s, ts_state_now_usec(), grace_usec, &gone, &err) < 0)
		return print_error(err);
	(void)live_plain(s, &plain, &np);
	for (int c = 0; c < _COL_MAX; c++)
		width[c] = strlen(headers[c]);
	/* two passes: widths, then rows */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			print_row(headers, width);
		for (size_t i = 0; i < n + np; i++) {
			cleanup_free char *pid = NULL, *devices = NULL;
			const char *cells[_COL_MAX];

			if (i >= n) {
				plain_cells(&plain[i - n], cells);
			} else if (!row_cells(ts_state_at(s, i), cells, &pid, &devices)) {
				fprintf(stderr, "toposhimctl: alloc: out of memory\n");
				ts_plain_entries_free(plain, np);
				return 1;
			} else if (gone != NULL && gone[i]) {
				cells[COL_STATE] = "gone";
			}
			for (int c = 0; pass == 0 && c < _COL_MAX; c++)
				if (strlen(cells[c]) > width[c])
					width[c] = strlen(cells[c]);
			if (pass == 1)
				print_row(cells, width);
		}
	}
	ts_plain_entries_free(plain, np);
	return 0;
}

static int list_json(const struct ts_state *s)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *arr = NULL;
	cleanup_free char *text = NULL;

	if (ts_state_to_json(s, &arr, &err) < 0 ||
	    ts_json_serialize(arr, true, &text, NULL, &err) < 0)
		return print_error(err);
	fputs(text, stdout);
	return 0;
}

/* The config's state members; *config keeps the borrowed strings alive. */
static const char *config_path(void)
{
	const char *path = secure_getenv("TOPOSHIM_CONFIG");

	return path != NULL && path[0] != '\0' ? path : TS_CLI_CONFIG_DEFAULT;
}

static int read_config(struct ts_json **config, struct ts_cli_state_config *ret)
{
	cleanup_error struct ts_error *err = NULL;
	const char *path = config_path();
	if (ts_cli_config_load(path, config, &err) < 0 ||
	    ts_cli_state_config_read(*config, path, ret, &err) < 0)
		return print_error(err);
	return 0;
}

/* Open and load the store; prints errors and warnings.  *ret_rebuilt (may
 * be NULL): whether the load rebuilt it. */
static int open_store(const struct ts_cli_state_config *sc, struct ts_state **ret,
		      bool *ret_rebuilt)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_free char *warning = NULL;
	cleanup_state struct ts_state *s = NULL;
	/* a reader: a mistyped TOPOSHIM_STATE_DIR must not be created */
	struct ts_state_options opts = {.state_dir = sc->state_dir, .must_exist = true};

	if (ts_state_open(&opts, &s, &err) < 0 || ts_state_load(s, &warning, &err) < 0)
		return print_error(err);
	if (warning != NULL)
		fprintf(stderr, "toposhimctl: alloc: warning: %s\n", warning);
	if (ret_rebuilt != NULL)
		*ret_rebuilt = warning != NULL;
	*ret = TAKE_PTR(s);
	return 0;
}

/* A rebuilt store's shared-pool records lose their cpus before it is
 * written, and the caller settles after (ts_pools_open_store(): a rebuild
 * takes them from the placement files, what the containers got at their
 * create, which the next settle took for cpusets set from outside:
 * helper-14).  @return how many; -errno with *err. */
static int forget_if_rebuilt(const struct ts_pools *pools, struct ts_state *s, bool rebuilt,
			     struct ts_error **err)
{
	return rebuilt ? ts_pools_forget_shared_cpus(pools, s, err) : 0;
}

/* As a create does: collect, run the plugins' delete stage for what was
 * collected, and give the running shared-pool containers the grown pool. */
static int cmd_gc(const struct ts_json *config, const struct ts_cli_state_config *sc,
		  uint64_t grace_usec)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	struct ts_plugin_chain *chain = NULL;
	struct ts_alloc **collected = NULL;
	struct ts_pools pools = {0};
	const char *path = config_path();
	bool rebuilt = false;
	size_t n = 0;
	int forgot = 0;

	if (ts_pools_init(config, path, &pools, &err) < 0 ||
	    ts_plugin_chain_load(config, path, &chain, &err) < 0) {
		ts_pools_release(&pools);
		return print_error(err);
	}
	if (open_store(sc, &s, &rebuilt) != 0 ||
	    (forgot = forget_if_rebuilt(&pools, s, rebuilt, &err)) < 0 ||
	    ts_state_gc(s, ts_state_now_usec(), grace_usec, &collected, &n, &err) < 0) {
		ts_plugin_chain_free(chain);
		ts_pools_release(&pools);
		return err != NULL ? print_error(err) : 1;
	}
	/* their cpus count as held in the settle below (pools.h) */
	ts_pools_note_released(&pools, s, collected, n);
	if (ts_state_commit(s, &err) < 0 ||
	    (ts_plain_journal_compact(ts_state_dir_fd(s), ts_state_proc_root(s), NULL, NULL, &err) <
		     0 &&
	     ts_error_prefix(&err, "%s", ts_state_dir(s)) < 0)) {
		ts_alloc_array_free(collected, n);
		ts_plugin_chain_free(chain);
		ts_pools_release(&pools);
		return print_error(err);
	}
	s = ts_state_close(s);
	/* without the store's lock, as in a create */
	ts_lifecycle_delete_collected(chain, collected, n);
	ts_plugin_chain_free(chain);
	if ((n > 0 || forgot > 0) &&
	    ts_pools_settle(&pools, &(struct ts_state_options){.state_dir = sc->state_dir}, false,
			    &err) < 0) {
		fprintf(stderr,
			"toposhimctl: alloc gc: cannot resize the shared pool: %s, ignoring\n",
			err->msg);
		ts_error_clear(&err);
	}
	ts_pools_release(&pools);
	for (size_t i = 0; i < n; i++)
		printf("collected %s\n", collected[i]->container_id);
	ts_alloc_array_free(collected, n);
	return 0;
}

/* The one record of container id (under runtime root, when given); prints
 * why there is none.  @return it, borrowed; NULL. */
static const struct ts_alloc *find_one(const struct ts_state *s, const char *root, const char *id)
{
	const struct ts_alloc *found = NULL, *other = NULL;

	for (size_t i = 0; i < ts_state_count(s); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);

		if (strcmp(a->container_id, id) != 0 ||
		    (root != NULL &&
		     (a->runtime_root == NULL || strcmp(a->runtime_root, root) != 0)))
			continue;
		if (found != NULL)
			other = a;
		else
			found = a;
	}
	if (found == NULL) {
		fprintf(stderr, "toposhimctl: alloc unpin: no allocation of container '%s'%s%s%s\n",
			id, root != NULL ? " under runtime root '" : "", root != NULL ? root : "",
			root != NULL ? "'" : "");
		return NULL;
	}
	if (other != NULL) {
		fprintf(stderr,
			"toposhimctl: alloc unpin: container '%s' is recorded under several "
			"runtime roots ('%s', '%s'): name one with --root\n",
			id, found->runtime_root ? found->runtime_root : "",
			other->runtime_root ? other->runtime_root : "");
		return NULL;
	}
	return found;
}

/* Unpin the record of id, commit, and settle the shared pool. */
static int cmd_unpin(const struct ts_json *config, const struct ts_cli_state_config *sc,
		     const char *root, const char *id)
{
	cleanup_error struct ts_error *err = NULL;
	cleanup_state struct ts_state *s = NULL;
	cleanup_free char *rroot = NULL;
	struct ts_pools pools = {0};
	const struct ts_alloc *a;
	struct ts_alloc *copy;
	bool rebuilt = false;
	int r = 1;

	if (ts_pools_init(config, config_path(), &pools, &err) < 0)
		return print_error(err);
	if (open_store(sc, &s, &rebuilt) != 0)
		goto out;
	if (forget_if_rebuilt(&pools, s, rebuilt, &err) < 0) {
		r = print_error(err);
		goto out;
	}
	if ((a = find_one(s, root, id)) == NULL)
		goto out;
	copy = ts_alloc_dup(a);
	if (copy == NULL ||
	    (a->runtime_root != NULL && (rroot = strdup(a->runtime_root)) == NULL)) {
		ts_alloc_free(copy);
		ts_error_set(&err, ENOMEM, "unpin");
		r = print_error(err);
		goto out;
	}
	copy->pinned = false;
	/* whether pinned or not (helper-15: an exclusive one was "not pinned") */
	if (ts_pools_pool_of(&pools, copy) != TS_PLACEMENT_POOL_SHARED) {
		fprintf(stderr,
			"toposhimctl: alloc unpin: container '%s' (class '%s') does not take its "
			"cpus from the shared pool: its pin ends with its delete\n",
			id, copy->class_name ? copy->class_name : "");
		ts_alloc_free(copy);
		goto out;
	}
	if (!a->pinned) {
		ts_alloc_free(copy);
		printf("%s is not pinned\n", id);
		r = 0;
		goto out;
	}
	if (ts_state_put(s, copy, &err) < 0 || ts_state_commit(s, &err) < 0) {
		r = print_error(err);
		goto out;
	}
	/* in resizes.log, where the pin was noted (a later pin is a line of
	 * its own: helper-15 saw it taken for a repeat), and in its placement
	 * file, for a rebuild (under the store's lock) */
	{
		cleanup_free char *line = NULL;

		if (asprintf(&line,
			     "container '%s': unpinned (toposhimctl alloc unpin), the shared pool "
			     "resizes it again",
			     id) > 0)
			ts_state_note_resize(s, line);
	}
	a = ts_state_find(s, rroot, id);
	if (a != NULL &&
	    ts_state_placement_pin(a->bundle, a->container_id, ts_state_dir(s), NULL, &err) < 0) {
		cleanup_free char *why = ts_error_format(err);

		fprintf(stderr, "toposhimctl: alloc unpin: warning: %s\n",
			why != NULL ? why : "out of memory");
		ts_error_clear(&err);
	}
	s = ts_state_close(s);
	if (ts_pools_settle(&pools, &(struct ts_state_options){.state_dir = sc->state_dir}, false,
			    &err) < 0) {
		fprintf(stderr,
			"toposhimctl: alloc unpin: cannot resize the shared pool: %s, ignoring\n",
			err->msg);
		ts_error_clear(&err);
	}
	printf("unpinned %s\n", id);
	r = 0;
out:
	ts_pools_release(&pools);
	return r;
}

static bool parse_seconds(const char *s, uint64_t *ret_usec)
{
	char *end = NULL;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT64_MAX / 1000000u)
		return false;
	*ret_usec = v * 1000000u;
	return true;
}

int ts_ctl_alloc(int argc, char **argv)
{
	cleanup_state struct ts_state *s = NULL;
	cleanup_json struct ts_json *config = NULL;
	struct ts_cli_state_config sc;
	const char *sub = argc > 1 ? argv[1] : NULL;
	uint64_t grace = 0;
	bool json = false, has_grace = false, rebuilt = false;
	const char *root = NULL, *id = NULL;

	if (sub == NULL)
		return usage("missing command");
	if (strcmp(sub, "gc") != 0 && strcmp(sub, "list") != 0 && strcmp(sub, "unpin") != 0) {
		fprintf(stderr, "toposhimctl: alloc: unknown command '%s'\n%s\n", sub, USAGE);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(sub, "unpin") == 0 && strcmp(argv[i], "--root") == 0 && root == NULL) {
			if (i + 1 >= argc || argv[i + 1][0] == '\0') {
				fprintf(stderr,
					"toposhimctl: alloc unpin: --root needs a directory\n");
				return 2;
			}
			/* records name their runtime root absolute */
			if (argv[i + 1][0] != '/') {
				fprintf(stderr,
					"toposhimctl: alloc unpin: --root: not absolute '%s'\n",
					argv[i + 1]);
				return 2;
			}
			root = argv[++i];
		} else if (strcmp(sub, "unpin") == 0 && id == NULL && argv[i][0] == '\0') {
			fprintf(stderr, "toposhimctl: alloc unpin: empty container id\n");
			return 2;
		} else if (strcmp(sub, "unpin") == 0 && id == NULL && argv[i][0] != '-') {
			id = argv[i];
		} else if (strcmp(sub, "list") == 0 && strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(sub, "gc") == 0 && strcmp(argv[i], "--grace") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "toposhimctl: alloc gc: --grace needs a number of "
						"seconds\n");
				return 2;
			}
			if (!parse_seconds(argv[++i], &grace)) {
				fprintf(stderr,
					"toposhimctl: alloc gc: --grace: invalid seconds '%s'\n",
					argv[i]);
				return 2;
			}
			has_grace = true;
		} else {
			fprintf(stderr, "toposhimctl: alloc %s: unexpected argument '%s'\n%s\n",
				sub, argv[i], USAGE);
			return 2;
		}
	}
	if (strcmp(sub, "unpin") == 0 && id == NULL) {
		fprintf(stderr, "toposhimctl: alloc unpin: missing container id\n%s\n", USAGE);
		return 2;
	}
	if (read_config(&config, &sc) != 0)
		return 1;
	if (strcmp(sub, "unpin") == 0)
		return cmd_unpin(config, &sc, root, id);
	if (strcmp(sub, "gc") == 0)
		return cmd_gc(config, &sc, has_grace ? grace : sc.gc_grace_usec);
	if (open_store(&sc, &s, &rebuilt) != 0)
		return 1;
	/* what the runtimes started since the last store session (no hook
	 * records it): listed as it is, and kept; but a rebuilt store is not
	 * written by a reader: its shared records' cpus are the creates'
	 * (the next create, delete or alloc gc writes it, and settles) */
	if (ts_state_learn_inits(s) > 0 && !rebuilt) {
		cleanup_error struct ts_error *err = NULL;

		/* a reader lists what it found even where it cannot keep it
		 * (a read-only state dir) */
		if (ts_state_commit(s, &err) < 0) {
			cleanup_free char *why = ts_error_format(err);

			fprintf(stderr, "toposhimctl: alloc list: warning: %s, not kept\n",
				why != NULL ? why : "out of memory");
		}
	}
	return json ? list_json(s) : list_text(s, sc.gc_grace_usec);
}
