/*
 * toposhim-plugin.h - helpers for writing toposhim plugins in C (namespace tsp_).
 *
 * A plugin is an executable run as "<plugin> invoke" by toposhim's plugin
 * chain (see toposhim-plugin(7)): one request JSON object on stdin, one
 * result JSON object on stdout, exit status 0 on success.  The protocol is
 * NRI v0.1's (containerd/nri v0.1.0 pkg/types: Request, Result) plus a
 * "toposhim" member with toposhim's own view of the container.  This
 * library reads the request, writes the result, and offers the two things
 * most plugins need: cpu lists ("0-3,8", the cpuset list format of the
 * kernel's Documentation/admin-guide/cgroup-v2.rst) and cgroup files.
 *
 * A plugin runs sandboxed (toposhim-plugin(7), SANDBOX): as the user
 * toposhim-plugin unless its config says otherwise, with the host's file
 * systems read-only but its sandbox.writable paths, in a cgroup that is
 * killed when it exits (no child outlives it), without capabilities and
 * under seccomp.  tsp_cgroup_write() therefore needs "sandbox": {"uid": 0,
 * "writable": ["/sys/fs/cgroup"]}, as confine and clearcfs do.
 *
 * Every fallible function follows toposhim's convention: it returns 0 (or a
 * count) on success, a negative errno on failure, and then sets *err (a
 * struct ts_error, freed with ts_error_free()).  JSON values are the tree of
 * toposhim's oci/json.h.
 */
#ifndef TOPOSHIM_PLUGIN_H
#define TOPOSHIM_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oci/json.h"
#include "util/error.h"

/* Largest request read from stdin, in bytes. */
#define TSP_REQUEST_MAX (4 * 1024 * 1024)
/* CPUs a cpu list may name: PU OS indexes 0 .. TSP_CPUS_MAX - 1. */
#define TSP_CPUS_MAX 8192

/* A parsed request.  Strings are borrowed from root; NULL when absent. */
struct tsp_request {
	struct ts_json *root;	    /* the whole request; owned */
	const char *state;	    /* "pre-create", "create" or "delete" */
	const char *container_id;   /* "id" */
	pid_t pid;		    /* "pid", 0 when absent */
	const struct ts_json *conf; /* this plugin's "conf"; NULL when absent */
	const struct ts_json *spec; /* "spec" */
	const char *class_name;	    /* "toposhim"/"class" */
	const char *cpus_str;	    /* "toposhim"/"cpus" */
	const char *mems_str;	    /* "toposhim"/"mems" */
	const char *cgroup_path;    /* "toposhim"/"cgroupPath" */
};

/**
 * Read and check the request from fd (normally 0) until EOF.
 * @param[out] ret  filled; release with tsp_request_release().
 * @return 0; -EINVAL "request: line L column C: <reason>", "request: '':
 *         expected object, got <type>", "request: '/<key>': expected
 *         <type>, got <type>", "request: missing 'state'", "request: missing
 *         'id'", "request: '/pid': invalid pid '<raw>'"; -EFBIG beyond
 *         TSP_REQUEST_MAX; -errno of read().
 */
int tsp_request_read(int fd, struct tsp_request *ret, struct ts_error **err);

/** Free what a request holds and zero it. */
void tsp_request_release(struct tsp_request *req);

/**
 * Write a result object and a newline to fd (normally 1):
 * {"plugin": plugin, "version": "0.1", "error": error or "", "metadata": metadata or {}}.
 * @param[in] metadata  object of string values, borrowed; NULL for {}.
 * @return 0; -errno of write(); -EINVAL when metadata cannot be serialised.
 */
int tsp_result_write(int fd, const char *plugin, const char *error, const struct ts_json *metadata,
		     struct ts_error **err);

/* A set of PU OS indexes. */
struct tsp_cpuset {
	uint64_t bits[TSP_CPUS_MAX / 64];
};

/**
 * Parse a cpu list: comma-separated numbers and ascending ranges "a-b";
 * the empty string is the empty set; a trailing newline is accepted (as
 * cgroup files end).
 * @return 0; -EINVAL "invalid cpu list '<s>'"; -ERANGE "cpu list '<s>':
 *         cpu beyond <TSP_CPUS_MAX - 1>".
 */
int tsp_cpulist_parse(const char *s, struct tsp_cpuset *ret, struct ts_error **err);

/**
 * Format a set as the shortest cpu list ("0-3,8"; "" for the empty set).
 * @return a new string the caller frees, or NULL on OOM.
 */
char *tsp_cpulist_format(const struct tsp_cpuset *set);

/** a := a \ b. */
void tsp_cpuset_subtract(struct tsp_cpuset *a, const struct tsp_cpuset *b);

/** Number of CPUs in the set. */
unsigned tsp_cpuset_count(const struct tsp_cpuset *set);

/**
 * The container's cgroup directory for a controller: its cgroup path (the
 * request's toposhim.cgroupPath when given, relative to the hierarchy as
 * /proc/<pid>/cgroup names it, else that file's entry) under cgroup_root on
 * cgroup v2, or under the controller's hierarchy ("cpuset", "cpu") at
 * <cgroup_root>/<controller> on v1.  A cgroupPath that already starts with
 * cgroup_root is taken as it is.
 * @param[in] cgroup_root  normally "/sys/fs/cgroup".
 * @param[out] ret         a new string the caller frees.
 * @return 0; -ENOENT "no cgroup path in the request and no pid"; -errno of
 *         reading /proc/<pid>/cgroup; -ENOENT "/proc/<pid>/cgroup: no
 *         entry for '<controller>'".
 */
int tsp_cgroup_dir(const struct tsp_request *req, const char *cgroup_root, const char *controller,
		   char **ret, struct ts_error **err);

/** Whether dir is a cgroup v2 directory (it has cgroup.controllers). */
bool tsp_cgroup_is_v2(const char *dir);

/**
 * Read dir/file (a cgroup interface file) without its trailing newline.
 * The file is opened O_NOFOLLOW.
 * @return 0; -errno "<dir>/<file>: cannot open" / "cannot read".
 */
int tsp_cgroup_read(const char *dir, const char *file, char **ret, struct ts_error **err);

/**
 * Write value to dir/file in one write() (cgroup files take one value per
 * write).  The file is opened O_WRONLY|O_TRUNC|O_NOFOLLOW (as runc
 * does), never created.
 * @return 0; -errno "<dir>/<file>: cannot open" / "cannot write '<value>'".
 */
int tsp_cgroup_write(const char *dir, const char *file, const char *value, struct ts_error **err);

/**
 * The usual main of a plugin: check argv ("invoke"), read the request, call
 * handler, write the result with the handler's metadata or its error.
 * @param[in] name     the plugin's name, written as "plugin".
 * @param[in] handler  returns 0 and may set *ret_metadata (an object the
 *                     library frees), or a negative errno with *err set.
 * @return the process exit status: 0 on success, 1 when the handler or the
 *         request failed (the result carries the message), 2 on bad usage.
 */
int tsp_main(int argc, char **argv, const char *name,
	     int (*handler)(const struct tsp_request *req, struct ts_json **ret_metadata,
			    struct ts_error **err));

#endif
