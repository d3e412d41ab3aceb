/* scan.c - see scan.h for the grammar. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/scan.h"
#include "util/cleanup.h"

/* Where an option's value goes. */
enum ts_scan_field {
	TS_SCAN_NONE, /* accepted, value ignored */
	TS_SCAN_ROOT,
	TS_SCAN_LOG,
	TS_SCAN_LOG_FORMAT,
	TS_SCAN_LOG_LEVEL,
	TS_SCAN_DEBUG,
	TS_SCAN_SYSTEMD_CGROUP,
	TS_SCAN_STOP, /* help/version: the runtime prints and exits */
	TS_SCAN_BUNDLE,
	TS_SCAN_CONFIG,
	TS_SCAN_PID_FILE,
	TS_SCAN_CONSOLE_SOCKET,
	TS_SCAN_PRESERVE_FDS,
};

/* The commands whose arguments the scanner reads, as bits of a mask. */
#define TS_SCAN_CREATE (1u << 0)
#define TS_SCAN_RUN (1u << 1)
#define TS_SCAN_DELETE (1u << 2)
#define TS_SCAN_KILL (1u << 3)
#define TS_SCAN_EXEC (1u << 4)
#define TS_SCAN_UPDATE (1u << 5)
#define TS_SCAN_PS (1u << 6)
#define TS_SCAN_EVENTS (1u << 7)
#define TS_SCAN_STATE (1u << 8)
#define TS_SCAN_START (1u << 9)
#define TS_SCAN_PAUSE (1u << 10)
#define TS_SCAN_RESUME (1u << 11)
#define TS_SCAN_CHECKPOINT (1u << 12)
#define TS_SCAN_RESTORE (1u << 13)

struct ts_scan_option {
	const char *name; /* without dashes */
	bool has_value;
	enum ts_scan_field field;
	unsigned commands; /* for command options: which commands accept it */
};

static const struct ts_scan_option ts_scan_global_options[] = {
	{"root", true, TS_SCAN_ROOT, 0},
	{"log", true, TS_SCAN_LOG, 0},
	{"log-format", true, TS_SCAN_LOG_FORMAT, 0},
	{"log-level", true, TS_SCAN_LOG_LEVEL, 0},
	{"criu", true, TS_SCAN_NONE, 0},
	{"rootless", true, TS_SCAN_NONE, 0},
	{"cgroup-manager", true, TS_SCAN_NONE, 0},
	{"debug", false, TS_SCAN_DEBUG, 0},
	{"systemd-cgroup", false, TS_SCAN_SYSTEMD_CGROUP, 0},
	{"help", false, TS_SCAN_STOP, 0},
	{"h", false, TS_SCAN_STOP, 0},
	{"?", false, TS_SCAN_STOP, 0},
	{"usage", false, TS_SCAN_STOP, 0},
	{"version", false, TS_SCAN_STOP, 0},
	{"v", false, TS_SCAN_STOP, 0},
	{"V", false, TS_SCAN_STOP, 0},
	{NULL, false, TS_SCAN_NONE, 0},
};

#define TS_SCAN_BOTH (TS_SCAN_CREATE | TS_SCAN_RUN)
#define TS_SCAN_ALL                                                                     \
	(TS_SCAN_BOTH | TS_SCAN_DELETE | TS_SCAN_KILL | TS_SCAN_EXEC | TS_SCAN_UPDATE | \
	 TS_SCAN_PS | TS_SCAN_EVENTS | TS_SCAN_STATE | TS_SCAN_START | TS_SCAN_PAUSE |  \
	 TS_SCAN_RESUME | TS_SCAN_CRIU)
#define TS_SCAN_CRIU (TS_SCAN_CHECKPOINT | TS_SCAN_RESTORE)
/*
 * Each command's options, the union of runc 1.1-1.3 (`runc CMD --help`)
 * and crun 1.8-1.23 (`crun CMD --help`).  What matters is only which of
 * them take a value: the container id is the first word that is neither
 * an option nor an option's value.
 */
static const struct ts_scan_option ts_scan_command_options[] = {
	{"bundle", true, TS_SCAN_BUNDLE, TS_SCAN_BOTH},
	{"b", true, TS_SCAN_BUNDLE, TS_SCAN_BOTH},
	{"config", true, TS_SCAN_CONFIG, TS_SCAN_BOTH},
	{"f", true, TS_SCAN_CONFIG, TS_SCAN_BOTH},
	{"pid-file", true, TS_SCAN_PID_FILE, TS_SCAN_BOTH},
	{"pid-file", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"console-socket", true, TS_SCAN_CONSOLE_SOCKET, TS_SCAN_BOTH},
	{"console-socket", true, TS_SCAN_NONE, TS_SCAN_EXEC | TS_SCAN_RESTORE},
	/* runc 1.2: the socket that receives the container's pidfd */
	{"pidfd-socket", true, TS_SCAN_NONE, TS_SCAN_BOTH | TS_SCAN_EXEC},
	{"preserve-fds", true, TS_SCAN_PRESERVE_FDS, TS_SCAN_BOTH},
	{"preserve-fds", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"no-pivot", false, TS_SCAN_NONE, TS_SCAN_BOTH},
	{"no-new-keyring", false, TS_SCAN_NONE, TS_SCAN_BOTH},
	{"no-subreaper", false, TS_SCAN_NONE, TS_SCAN_BOTH},
	{"detach", false, TS_SCAN_NONE, TS_SCAN_RUN | TS_SCAN_EXEC},
	{"d", false, TS_SCAN_NONE, TS_SCAN_RUN | TS_SCAN_EXEC},
	{"keep", false, TS_SCAN_NONE, TS_SCAN_RUN},
	/* delete, kill (-r: crun's regular expression) */
	{"force", false, TS_SCAN_NONE, TS_SCAN_DELETE},
	{"f", false, TS_SCAN_NONE, TS_SCAN_DELETE},
	{"all", false, TS_SCAN_NONE, TS_SCAN_KILL},
	{"a", false, TS_SCAN_NONE, TS_SCAN_KILL},
	{"regex", false, TS_SCAN_NONE, TS_SCAN_DELETE | TS_SCAN_KILL},
	{"r", false, TS_SCAN_NONE, TS_SCAN_DELETE | TS_SCAN_KILL},
	/* exec */
	{"cwd", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"env", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"e", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"tty", false, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"t", false, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"user", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"u", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"additional-gids", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"g", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"process", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"p", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"process-label", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"apparmor", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"no-new-privs", false, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"cap", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"c", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"cgroup", true, TS_SCAN_NONE, TS_SCAN_EXEC},
	{"ignore-paused", false, TS_SCAN_NONE, TS_SCAN_EXEC},
	/* update */
	{"resources", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"r", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"blkio-weight", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpu-period", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpu-quota", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpu-share", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpu-rt-period", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpu-rt-runtime", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpu-idle", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpuset-cpus", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"cpuset-mems", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"kernel-memory", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"kernel-memory-tcp", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"memory", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"memory-reservation", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"memory-swap", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"pids-limit", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"l3-cache-schema", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	{"mem-bw-schema", true, TS_SCAN_NONE, TS_SCAN_UPDATE},
	/* ps, events */
	{"format", true, TS_SCAN_NONE, TS_SCAN_PS},
	{"f", true, TS_SCAN_NONE, TS_SCAN_PS},
	{"interval", true, TS_SCAN_NONE, TS_SCAN_EVENTS},
	{"stats", false, TS_SCAN_NONE, TS_SCAN_EVENTS},
	/* checkpoint, restore (runc 1.1's; crun's are a subset) */
	{"image-path", true, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"work-path", true, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"manage-cgroups-mode", true, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"empty-ns", true, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"tcp-established", false, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"ext-unix-sk", false, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"shell-job", false, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"file-locks", false, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"auto-dedup", false, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"lazy-pages", false, TS_SCAN_NONE, TS_SCAN_CRIU},
	{"parent-path", true, TS_SCAN_NONE, TS_SCAN_CHECKPOINT},
	{"status-fd", true, TS_SCAN_NONE, TS_SCAN_CHECKPOINT},
	{"page-server", true, TS_SCAN_NONE, TS_SCAN_CHECKPOINT},
	{"leave-running", false, TS_SCAN_NONE, TS_SCAN_CHECKPOINT},
	{"pre-dump", false, TS_SCAN_NONE, TS_SCAN_CHECKPOINT},
	{"bundle", true, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"b", true, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"pid-file", true, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"lsm-profile", true, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"lsm-mount-context", true, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"detach", false, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"d", false, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"no-subreaper", false, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"no-pivot", false, TS_SCAN_NONE, TS_SCAN_RESTORE},
	{"help", false, TS_SCAN_STOP, TS_SCAN_ALL},
	{"h", false, TS_SCAN_STOP, TS_SCAN_ALL},
	{"?", false, TS_SCAN_STOP, TS_SCAN_ALL},
	{"usage", false, TS_SCAN_STOP, TS_SCAN_ALL},
	{NULL, false, TS_SCAN_NONE, 0},
};

/* The commands that name one container, and how their words after it read. */
static const struct {
	const char *name;
	unsigned mask;
} ts_scan_commands[] = {
	{"create", TS_SCAN_CREATE},
	{"run", TS_SCAN_RUN},
	{"delete", TS_SCAN_DELETE},
	{"kill", TS_SCAN_KILL},
	{"exec", TS_SCAN_EXEC},
	{"update", TS_SCAN_UPDATE},
	{"ps", TS_SCAN_PS},
	{"events", TS_SCAN_EVENTS},
	{"state", TS_SCAN_STATE},
	{"start", TS_SCAN_START},
	{"pause", TS_SCAN_PAUSE},
	{"resume", TS_SCAN_RESUME},
	{"checkpoint", TS_SCAN_CHECKPOINT},
	{"restore", TS_SCAN_RESTORE},
};

/* One scanning pass over argv. */
struct ts_scanner {
	int argc;
	char **argv;
	int i; /* index of the word being looked at */
	struct ts_cli_args *args;
};

/* Go's strconv.ParseBool: 1 true, 0 false, -1 not a boolean. */
static int ts_scan_parse_bool(const char *s)
{
	static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};

	for (size_t k = 0; k < ARRAY_SIZE(yes); k++) {
		if (strcmp(s, yes[k]) == 0)
			return 1;
		if (strcmp(s, no[k]) == 0)
			return 0;
	}
	return -1;
}

/* Record why the scan gives up; the runtime will judge the command line. */
static int ts_scan_give_up(struct ts_scanner *s, const char *what, const char *word, size_t len,
			   struct ts_error **err)
{
	s->args->rewrite = false;
	if (s->args->warning != NULL) /* the first reason is the one to tell */
		return 0;
	if (asprintf(&s->args->warning, "%s '%.*s', passing through unmodified", what, (int)len,
		     word) < 0) {
		s->args->warning = NULL;
		return ts_error_set(err, ENOMEM, "cannot scan the command line");
	}
	return 0;
}

static void ts_scan_store(struct ts_cli_args *args, enum ts_scan_field field, const char *value,
			  bool flag)
{
	switch (field) {
	case TS_SCAN_ROOT:
		args->root = value;
		break;
	case TS_SCAN_LOG:
		args->log = value;
		break;
	case TS_SCAN_LOG_FORMAT:
		args->log_format = value;
		break;
	case TS_SCAN_LOG_LEVEL:
		args->log_level = value;
		break;
	case TS_SCAN_DEBUG:
		args->debug = flag;
		break;
	case TS_SCAN_SYSTEMD_CGROUP:
		args->systemd_cgroup = flag;
		break;
	case TS_SCAN_BUNDLE:
		/* runc and crun treat an empty bundle as the current directory */
		args->bundle = value[0] == '\0' ? NULL : value;
		break;
	case TS_SCAN_CONFIG:
		args->config_file = value;
		break;
	case TS_SCAN_PID_FILE:
		args->pid_file = value;
		break;
	case TS_SCAN_CONSOLE_SOCKET:
		args->console_socket = value;
		break;
	case TS_SCAN_PRESERVE_FDS:
		args->preserve_fds = value;
		break;
	case TS_SCAN_NONE:
	case TS_SCAN_STOP:
		break;
	}
}

/*
 * Scan the option at s->i (a word starting with '-', not "-" or "--").
 * @param command_mask  0 for global options, else the command's TS_SCAN_* bit.
 * @return 1 to go on (s->i moved past the option and its value; also for
 *         an unknown `--name=value`, with the warning set); 0 to stop: the
 *         scan gave up (warning set) or met help/version; -ENOMEM.
 */
static int ts_scan_option(struct ts_scanner *s, const struct ts_scan_option *table,
			  unsigned command_mask, struct ts_error **err)
{
	const char *word = s->argv[s->i];
	const char *name = word + (word[1] == '-' ? 2 : 1);
	const char *eq = strchr(name, '=');
	size_t name_len = eq != NULL ? (size_t)(eq - name) : strlen(name);
	size_t word_len = (size_t)(name - word) + name_len;
	const struct ts_scan_option *opt = NULL;
	const char *value;
	int flag = 1, r;

	for (const struct ts_scan_option *o = table; o->name != NULL; o++) {
		if (strlen(o->name) == name_len && strncmp(o->name, name, name_len) == 0 &&
		    (command_mask == 0 || (o->commands & command_mask) != 0)) {
			opt = o;
			break;
		}
	}
	if (opt == NULL || name[0] == '-' || name_len == 0) {
		r = ts_scan_give_up(s, "unknown option", word, word_len, err);
		if (r < 0 || eq == NULL || name[0] == '-' || name_len == 0)
			return r;
		/* `--future-flag=1`: whatever it means, its value is in this
		 * word, so the words after it still read the same */
		s->i++;
		return 1;
	}
	if (!opt->has_value) {
		if (eq != NULL)
			flag = ts_scan_parse_bool(eq + 1);
		if (flag < 0)
			return ts_scan_give_up(s, "invalid boolean in option", word, strlen(word),
					       err);
		if (opt->field == TS_SCAN_STOP) {
			s->args->rewrite = false;
			return 0;
		}
		ts_scan_store(s->args, opt->field, NULL, flag);
		s->i++;
		return 1;
	}
	if (eq != NULL) {
		value = eq + 1;
		s->i++;
	} else {
		if (s->i + 1 >= s->argc)
			return ts_scan_give_up(s, "missing value for option", word, word_len, err);
		value = s->argv[s->i + 1];
		/* runc's argument reordering would not take a dash word as the
		 * value of a command option, crun would: ambiguous. */
		if (command_mask != 0 && value[0] == '-' && value[1] != '\0')
			return ts_scan_give_up(s, "ambiguous value for option", word, word_len,
					       err);
		s->i += 2;
	}
	ts_scan_store(s->args, opt->field, value, true);
	return 1;
}

/* Is argv word w an option (as opposed to an argument)? */
static bool ts_scan_is_option(const char *w)
{
	return w[0] == '-' && w[1] != '\0';
}

/* Scan create/run's options and arguments after the command word. */
static int ts_scan_create(struct ts_scanner *s, unsigned command_mask, struct ts_error **err)
{
	bool only_args = false;
	int nargs = 0;

	while (s->i < s->argc) {
		const char *w = s->argv[s->i];
		int r;

		if (!only_args && strcmp(w, "--") == 0) {
			only_args = true;
			s->i++;
			continue;
		}
		if (only_args || !ts_scan_is_option(w)) {
			if (nargs++ == 0)
				s->args->container_id = w;
			s->i++;
			continue;
		}
		r = ts_scan_option(s, ts_scan_command_options, command_mask, err);
		if (r <= 0)
			return r;
	}
	/* runc and crun take exactly one argument, the container id; anything
	 * else fails in the runtime, so there is nothing to rewrite. */
	s->args->rewrite = nargs == 1 && s->args->warning == NULL;
	return 0;
}

/*
 * After an unknown option without '=' at s->i, which may or may not take
 * the next word: the next two words that are not options (or the word
 * after `--`) are where the container id is.
 */
static void ts_scan_candidates(struct ts_scanner *s)
{
	size_t n = 0;

	for (int i = s->i + 1; i < s->argc && n < ARRAY_SIZE(s->args->container_id_candidates);
	     i++) {
		const char *w = s->argv[i];

		if (strcmp(w, "--") == 0) {
			if (i + 1 < s->argc)
				s->args->container_id_candidates[n] = s->argv[i + 1];
			return;
		}
		if (!ts_scan_is_option(w))
			s->args->container_id_candidates[n++] = w;
	}
}

/*
 * Find the container id of a command that does not rewrite: the first word
 * that is neither an option nor an option's value.  The scan stops there:
 * what follows is the signal (kill), the process (exec) or ps's options,
 * and options runc would reorder in front of the id change nothing
 * toposhim needs.
 */
static int ts_scan_container(struct ts_scanner *s, unsigned command_mask, struct ts_error **err)
{
	while (s->i < s->argc) {
		const char *w = s->argv[s->i];
		int r;

		if (strcmp(w, "--") == 0) {
			if (s->i + 1 < s->argc)
				s->args->container_id = s->argv[s->i + 1];
			return 0;
		}
		if (!ts_scan_is_option(w)) {
			s->args->container_id = w;
			return 0;
		}
		r = ts_scan_option(s, ts_scan_command_options, command_mask, err);
		if (r == 0 && s->args->warning != NULL)
			ts_scan_candidates(s);
		if (r <= 0)
			return r;
	}
	return 0;
}

int ts_cli_scan(int argc, char **argv, struct ts_cli_args *ret, struct ts_error **err)
{
	struct ts_cli_args args = {.command_index = -1};
	struct ts_scanner s = {.argc = argc, .argv = argv, .i = 1, .args = &args};
	int r;

	while (s.i < argc) {
		const char *w = argv[s.i];

		if (strcmp(w, "--") == 0) {
			s.i++;
			break;
		}
		if (!ts_scan_is_option(w))
			break;
		r = ts_scan_option(&s, ts_scan_global_options, 0, err);
		if (r < 0) {
			ts_cli_args_release(&args);
			return r;
		}
		if (r == 0)
			goto done;
	}
	if (s.i >= argc)
		goto done;
	args.command = argv[s.i];
	args.command_index = s.i;
	s.i++;
	r = 0;
	for (size_t k = 0; k < ARRAY_SIZE(ts_scan_commands); k++) {
		unsigned mask = ts_scan_commands[k].mask;

		if (strcmp(args.command, ts_scan_commands[k].name) != 0)
			continue;
		if ((mask & TS_SCAN_BOTH) != 0)
			r = ts_scan_create(&s, mask, err);
		else
			r = ts_scan_container(&s, mask, err);
		break;
	}
	if (r < 0) {
		ts_cli_args_release(&args);
		return r;
	}
done:
	*ret = args;
	return 0;
}

void ts_cli_args_release(struct ts_cli_args *args)
{
	if (args == NULL)
		return;
	free(args->warning);
	args->warning = NULL;
}

int ts_cli_scan_delete(int argc, char **argv, const struct ts_cli_args *args, const char **ret_id,
		       bool *ret_force)
{
	const char *id = NULL;
	bool force = false, only_args = false;

	for (int i = args->command_index + 1; i < argc; i++) {
		const char *w = argv[i];

		if (!only_args && strcmp(w, "--") == 0)
			only_args = true;
		else if (only_args || w[0] != '-' || w[1] == '\0') {
			if (id != NULL)
				return 0;
			id = w;
		} else if (strcmp(w, "-f") == 0 || strcmp(w, "--force") == 0 ||
			   strcmp(w, "--force=true") == 0)
			force = true;
		else if (strcmp(w, "--force=false") != 0)
			return 0;
	}
	if (id == NULL)
		return 0;
	*ret_id = id;
	*ret_force = force;
	return 1;
}
