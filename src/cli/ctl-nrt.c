/*
 * ctl-nrt.c - `toposhimctl nrt`: the node as a NodeResourceTopology object
 * for the topology-aware scheduler (ts_placement_nrt(), placement.h).
 *
 *   toposhimctl nrt [--format json|yaml] [--name NODE]
 *
 * The object is built from what a create would see, read only: the
 * topology through the state dir's cache (never rebuilt here), the live
 * allocations of the state dir (a missing state dir: none, and it is not
 * created; the store is never written), the CDI devices of the configured
 * spec dirs (scanned without the index, which is the creates' to write)
 * with their NUMA node (sysfs).  The node name is --name, else
 * $NODE_NAME (what a DaemonSet gets from spec.nodeName), else the host
 * name.  Run periodically by the DaemonSet (contrib/kubernetes), never by
 * the create path.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cdi/cdi.h"
#include "cli/cmd-hook.h"
#include "cli/config.h"
#include "cli/ctl.h"
#include "cli/log.h"
#include "cli/pools.h"
#include "oci/json.h"
#include "oci/role.h"
#include "placement/placement.h"
#include "state/state.h"
#include "topology/topology.h"
#include "util/cleanup.h"

#define USAGE "usage: toposhimctl nrt [--format json|yaml] [--name NODE]"

struct nrt_ctx {
	const char *config_path;
	struct ts_json *config;
	struct ts_pools pools;
	struct ts_state *state;
	struct ts_allocation *allocs;
	hwloc_bitmap_t *bitmaps;
	size_t n_allocs;
	struct ts_placement_nrt_device *devices;
	char **kinds; /* owned strings the devices borrow */
	size_t n_devices;
	char *host_name;
};

static void nrt_ctx_release(struct nrt_ctx *c)
{
	ts_pools_views_free(c->allocs, c->bitmaps, c->n_allocs);
	ts_state_close(c->state);
	ts_pools_release(&c->pools);
	for (size_t i = 0; i < c->n_devices; i++)
		free(c->kinds[i]);
	free(c->kinds);
	free(c->devices);
	free(c->host_name);
	ts_json_free(c->config);
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("toposhimctl: nrt: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The live allocations (a state dir that does not exist: none). */
static int load_allocations(struct nrt_ctx *c, struct ts_error **err)
{
	struct ts_cli_state_config sc = {0};
	cleanup_free char *warning = NULL;
	const char *xml = ts_json_get_string(ts_json_get_object(c->config, "topology"), "xml");
	bool have_dir;
	int r;

	r = ts_cli_state_config_read(c->config, c->config_path, &sc, err);
	if (r < 0)
		return r;
	have_dir = access(ts_state_dir_resolve(sc.state_dir), F_OK) == 0;
	/* the topology a create would use, through its cache, read only */
	r = ts_topology_load_for_placement(xml,
					   have_dir ? ts_state_dir_resolve(sc.state_dir) : NULL,
					   false, &c->pools.topo, err);
	if (r < 0 || !have_dir)
		return r;
	r = ts_state_open(&(struct ts_state_options){.state_dir = sc.state_dir, .must_exist = true},
			  &c->state, err);
	if (r >= 0)
		r = ts_state_load(c->state, &warning, err);
	if (r < 0)
		return r;
	if (warning != NULL)
		warn("%s", warning);
	r = ts_pools_views(&c->pools, c->state, &c->allocs, &c->bitmaps, err);
	if (r < 0)
		return r;
	c->n_allocs = (size_t)r;
	return 0;
}

/* Whether a live allocation names the device. */
static bool device_held(const struct ts_state *s, const char *qualified_name)
{
	for (size_t i = 0; s != NULL && i < ts_state_count(s); i++) {
		const struct ts_alloc *a = ts_state_at(s, i);

		for (size_t j = 0; a->devices != NULL && a->devices[j] != NULL; j++)
			if (strcmp(a->devices[j], qualified_name) == 0)
				return true;
	}
	return false;
}

/* The NUMA node of one device node, as the create path takes it for its
 * placement hint (src/cli/cmd-create.c): the sysfs numa_node of the host
 * device node; -1 for a node that is not on the host or whose numa_node
 * is unknown (-1, as in many VMs). */
static int node_of(const struct ts_cdi_host_node *hn, struct ts_error **err)
{
	struct ts_devloc_roots roots = ts_devloc_roots_from_env();
	struct ts_device_locality loc = {.numa_node = -1};
	int r;

	if (access(hn->host_path, F_OK) < 0)
		return -1;
	r = ts_device_locality(&roots, hn->host_path, &loc, err);
	if (r < 0)
		return r;
	r = loc.numa_node;
	ts_device_locality_release(&loc);
	return r < 0 ? -1 : r;
}

/* One CDI device: its kind and NUMA node (from its own device nodes, which
 * the edits of an empty config list).  -1 with a warning when unknown or
 * when the device does not resolve on this host. */
static int locate_device(struct ts_cdi_registry *reg, const char *name, int *ret_node,
			 struct ts_error **err)
{
	cleanup_json struct ts_json *scratch = ts_json_new_object();
	struct ts_cdi_injection *inj = NULL;
	cleanup_error struct ts_error *why = NULL;
	int node = -1, r;

	if (scratch == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	r = ts_cdi_inject(reg, scratch, &name, 1, "nrt", &inj, &why);
	if (r == -ENOMEM)
		return ts_error_set(err, ENOMEM, "out of memory");
	if (r < 0) {
		warn("%s: %s, not listed", name, why->msg);
		*ret_node = -1;
		return 0;
	}
	for (size_t i = 0; inj != NULL && i < inj->n_devices; i++)
		for (size_t j = 0; j < inj->devices[i].n_nodes; j++) {
			int n = node_of(&inj->devices[i].nodes[j], err);

			if (n == -ENOMEM) {
				ts_cdi_injection_free(inj);
				return n;
			}
			if (n < -1) {
				/* cannot stat it, or not a device node: no hint */
				warn("%s: %s, ignoring", name, (*err)->msg);
				ts_error_clear(err);
				continue;
			}
			if (n >= 0 && node >= 0 && n != node)
				node = -2; /* nodes on two NUMA nodes: no single one */
			else if (n >= 0 && node != -2)
				node = n;
		}
	ts_cdi_injection_free(inj);
	if (node < 0)
		warn("%s: numa node unknown, not listed", name);
	*ret_node = node < 0 ? -1 : node;
	return 0;
}

static int load_devices(struct nrt_ctx *c, struct ts_error **err)
{
	struct ts_cdi_options opts = {0};
	struct ts_cdi_registry *reg = NULL;
	const char *const *names, *const *problems;
	size_t n, np;
	int r;

	r = ts_cdi_options_from_config(c->config, c->config_path, &opts, err);
	/* a reader: the scan must not rewrite the creates' index */
	free(opts.index_path);
	opts.index_path = NULL;
	if (r >= 0)
		r = ts_cdi_registry_load(&opts, &reg, err);
	ts_cdi_options_release(&opts);
	if (r < 0)
		return r;
	np = ts_cdi_registry_problems(reg, &problems);
	for (size_t i = 0; i < np; i++)
		warn("%s, ignoring", problems[i]);
	n = ts_cdi_registry_devices(reg, &names);
	c->devices = calloc(n + 1, sizeof(*c->devices));
	c->kinds = calloc(n + 1, sizeof(*c->kinds));
	if (c->devices == NULL || c->kinds == NULL) {
		ts_cdi_registry_free(reg);
		return ts_error_set(err, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		const struct ts_cdi_spec *spec = NULL;
		int node = -1;

		if (!ts_cdi_registry_lookup(reg, names[i], &spec, NULL))
			continue;
		r = locate_device(reg, names[i], &node, err);
		if (r < 0)
			break;
		c->kinds[c->n_devices] = strdup(ts_cdi_spec_kind(spec));
		if (c->kinds[c->n_devices] == NULL) {
			r = ts_error_set(err, ENOMEM, "out of memory");
			break;
		}
		c->devices[c->n_devices] = (struct ts_placement_nrt_device){
			.kind = c->kinds[c->n_devices],
			.numa_node = node,
			.held = device_held(c->state, names[i]),
		};
		c->n_devices++;
	}
	ts_cdi_registry_free(reg);
	return r < 0 ? r : 0;
}

static int node_name(const char *arg, struct nrt_ctx *c, const char **ret, struct ts_error **err)
{
	const char *env = getenv("NODE_NAME");
	char buf[256];

	if (arg != NULL) {
		*ret = arg;
		return 0;
	}
	if (env != NULL && env[0] != '\0') {
		*ret = env;
		return 0;
	}
	if (gethostname(buf, sizeof(buf)) < 0)
		return ts_error_set(err, errno, "cannot read the host name");
	buf[sizeof(buf) - 1] = '\0';
	/* the kubelet's default node name: the host name in lower case */
	for (char *p = buf; *p != '\0'; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	c->host_name = strdup(buf);
	if (c->host_name == NULL)
		return ts_error_set(err, ENOMEM, "out of memory");
	*ret = c->host_name;
	return 0;
}

/* Why name (from origin) cannot name the object, escaped for one line;
 * NULL when it can.  Caller frees. */
static char *name_problem(const char *name, const char *origin)
{
	cleanup_free char *safe = NULL;
	char *msg = NULL;

	/* the form of a node's name (helper-16: "UPPER_case" and a name with
	 * a newline were printed as the object's name) */
	if (ts_oci_dns_subdomain(name, strlen(name)))
		return NULL;
	if (ts_log_escape_controls(name, &safe) < 0 ||
	    asprintf(&msg,
		     "node name '%s' (%s) is not a Kubernetes object name: lower case letters, "
		     "digits, '-' and '.', at most 253, a letter or digit at each end",
		     safe, origin) < 0)
		return strdup("node name: out of memory");
	return msg;
}

/* node_name(), refused when it cannot name the object, naming where it
 * came from: --name, NODE_NAME or the host name. */
static int node_name_checked(const char *arg, struct nrt_ctx *c, const char **ret,
			     struct ts_error **err)
{
	const char *env = getenv("NODE_NAME");
	cleanup_free char *problem = NULL;
	int r = node_name(arg, c, ret, err);

	if (r < 0)
		return r;
	problem = name_problem(*ret, arg != NULL		     ? "--name"
				     : env != NULL && env[0] != '\0' ? "NODE_NAME"
								     : "the host name");
	return problem == NULL ? 0 : ts_error_set_plain(err, EINVAL, "%s", problem);
}

static int nrt(const char *name_arg, bool yaml, struct ts_error **err)
{
	struct nrt_ctx c = {0};
	cleanup_json struct ts_json *obj = NULL;
	cleanup_free char *text = NULL;
	struct ts_placement_nrt_input in = {0};
	int r;

	c.config_path = ts_cli_config_path();
	r = node_name_checked(name_arg, &c, &in.node_name, err);
	if (r >= 0)
		r = ts_cli_config_load(c.config_path, &c.config, err);
	if (r >= 0)
		r = ts_cli_config_check_keys(c.config, c.config_path, err);
	if (r >= 0)
		r = ts_pools_init(c.config, c.config_path, &c.pools, err);
	if (r >= 0)
		r = load_allocations(&c, err);
	if (r >= 0)
		r = load_devices(&c, err);
	if (r >= 0) {
		in.cfg = &c.pools.placement;
		in.topo = c.pools.topo;
		in.allocs = c.allocs;
		in.n_allocs = c.n_allocs;
		in.devices = c.devices;
		in.n_devices = c.n_devices;
		r = ts_placement_nrt(&in, &obj, err);
	}
	if (r >= 0)
		r = yaml ? ts_cdi_yaml_serialize(obj, &text, err)
			 : ts_json_serialize(obj, true, &text, NULL, err);
	if (r >= 0)
		fputs(text, stdout);
	nrt_ctx_release(&c);
	return r;
}

int ts_ctl_nrt(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"name", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	cleanup_error struct ts_error *err = NULL;
	const char *name = NULL;
	bool yaml = false;
	int c;

	optind = 0;
	while ((c = ts_ctl_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "yaml") != 0 && strcmp(optarg, "json") != 0) {
				fprintf(stderr,
					"toposhimctl: nrt: --format: unknown format '%s'\n%s\n",
					optarg, USAGE);
				return 2;
			}
			yaml = strcmp(optarg, "yaml") == 0;
			break;
		case 'n':
			if (optarg[0] == '\0') {
				fprintf(stderr, "toposhimctl: nrt: --name: empty node name\n%s\n",
					USAGE);
				return 2;
			}
			/* a bad value given is a usage error, as an empty one */
			{
				cleanup_free char *problem = name_problem(optarg, "--name");

				if (problem != NULL) {
					fprintf(stderr, "toposhimctl: nrt: %s\n", problem);
					return 2;
				}
			}
			name = optarg;
			break;
		case 'h':
			printf("%s\n", USAGE);
			return 0;
		default:
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "toposhimctl: nrt: unexpected argument '%s'\n%s\n", argv[optind],
			USAGE);
		return 2;
	}
	if (nrt(name, yaml, &err) < 0) {
		cleanup_free char *msg = ts_error_format(err);

		fprintf(stderr, "toposhimctl: nrt: %s\n", msg != NULL ? msg : "out of memory");
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
