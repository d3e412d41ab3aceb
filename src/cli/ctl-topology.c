/* ctl-topology.c - `toposhimctl topology`: what placement sees of the machine. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd-hook.h"
#include "cli/config.h"
#include "cli/ctl-placement.h"
#include "cli/ctl.h"
#include "oci/json.h"
#include "placement/placement.h"
#include "topology/topology.h"
#include "util/cleanup.h"

static const char *str(const struct ts_json *o, const char *key)
{
	const char *s = ts_json_get_string(o, key);

	return s != NULL ? s : "";
}

static uint64_t num(const struct ts_json *o, const char *key)
{
	uint64_t v = 0;

	(void)ts_json_get_uint64(ts_json_get(o, key), &v); /* built above: always a number */
	return v;
}

static void print_list(const struct ts_json *root, const char *key, const char *label,
		       const char *idx)
{
	struct ts_json *arr = ts_json_get_array(root, key), *e;
	size_t i;

	ts_json_array_foreach (arr, i, e) {
		printf("%s %" PRIu64 ": cpus %s\n", label, num(e, idx), str(e, "cpus"));
	}
}

/* The ranked kinds, slowest first, and the split. */
static void print_kinds(const struct ts_json *kinds)
{
	struct ts_json *arr = ts_json_get_array(kinds, "kinds"), *e;
	size_t i;

	if (arr == NULL || arr->u.array.len == 0)
		return;
	if (*str(kinds, "performance") != '\0')
		printf("cpu kinds: performance %s, efficiency %s (ranked by %s, scored by %s, "
		       "performance from %s)\n",
		       str(kinds, "performance"), str(kinds, "efficiency"), str(kinds, "ranked_by"),
		       str(kinds, "scored_by"), ts_json_get(kinds, "threshold")->u.number);
	else
		printf("cpu kinds: no preference (%s)\n", arr->u.array.len < 2 ? "one kind"
							  : ts_json_get_string(kinds, "ranked_by")
								  ? "no kind below the threshold"
								  : "hwloc cannot rank them");
	ts_json_array_foreach (arr, i, e) {
		const struct ts_json *score = ts_json_get(e, "score");
		int64_t eff = -1;

		(void)ts_json_get_int64(ts_json_get(e, "efficiency"), &eff); /* built: a number */
		printf("cpu kind %zu: cpus %s, efficiency %" PRId64 ", capacity %" PRIu64
		       ", %" PRIu64 " MHz, score %s: %s\n",
		       i, str(e, "cpus"), eff, num(e, "capacity"), num(e, "frequency_mhz"),
		       score->type == TS_JSON_NUMBER ? score->u.number : "-", str(e, "class"));
	}
}

static void print_text(const struct ts_json *root)
{
	struct ts_json *arr, *e;
	size_t i;

	printf("topology: %s\n", str(root, "source"));
	printf("online: %s (%" PRIu64 " pus, %" PRIu64 " cores, smt %" PRIu64 ")\n",
	       str(root, "online"), num(root, "pus"), num(root, "cores"), num(root, "smt_width"));
	print_list(root, "packages", "package", "os_index");
	arr = ts_json_get_array(root, "numa_nodes");
	ts_json_array_foreach (arr, i, e) {
		bool mo = ts_json_get(e, "memory_only")->u.boolean;
		printf("numa node %" PRIu64 ": %s%s, memory %" PRIu64 " MiB, tier %s\n",
		       num(e, "os_index"), mo ? "memory-only, near cpus " : "cpus ",
		       mo ? str(e, "local_cpus") : str(e, "cpus"), num(e, "memory_bytes") >> 20,
		       str(e, "tier"));
	}
	arr = ts_json_get_array(root, "numa_domains");
	ts_json_array_foreach (arr, i, e) {
		if (strcmp(str(e, "mems_from"), "local") == 0)
			continue;
		if (ts_json_get_string(e, "mems_from") != NULL &&
		    ts_json_get(e, "numa_node")->type == TS_JSON_NULL)
			printf("cpus %s: in no numa node, memory from numa node %s (%s)\n",
			       str(e, "cpus"), str(e, "mems"), str(e, "mems_from"));
		else
			printf("numa node %" PRIu64
			       ": no dram of its own, memory from numa node %s "
			       "(%s)\n",
			       num(e, "numa_node"), str(e, "mems"), str(e, "mems_from"));
	}
	print_list(root, "l3_groups", "l3 group", "logical_index");
	print_kinds(ts_json_get_object(root, "cpu_kinds"));
	arr = ts_json_get_array(root, "devices");
	ts_json_array_foreach (arr, i, e) {
		const char *pci = ts_json_get_string(e, "pci");
		printf("device %s%s%s: numa nodes %s\n", str(e, "name"), pci ? " pci " : "",
		       pci ? pci : "", str(e, "numa_nodes"));
	}
}

static void usage(void)
{
	fprintf(stderr,
		"usage: toposhimctl topology [--json] [--topology FILE] [--state-dir DIR]\n");
}

int ts_ctl_topology(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"topology", required_argument, NULL, 't'},
		{"state-dir", required_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *xml = NULL, *state_dir = NULL;
	cleanup_topology struct ts_topology *topo = NULL;
	cleanup_error struct ts_error *err = NULL;
	cleanup_json struct ts_json *report = NULL;
	bool json = false;
	int c, r;

	optind = 0;
	while ((c = ts_ctl_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 't':
			xml = optarg;
			break;
		case 's':
			state_dir = optarg;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "toposhimctl: topology: unexpected argument '%s'\n", argv[optind]);
		usage();
		return 2;
	}
	/* as TOPOSHIM_STATE_DIR is checked (helper-22: any value was taken,
	 * and the host's topology shown without a word) */
	if (state_dir != NULL) {
		if (state_dir[0] != '/') {
			fprintf(stderr, "toposhimctl: topology: --state-dir: not absolute '%s'\n",
				state_dir);
			return 2;
		}
		if (ts_ctl_check_dir("topology", "--state-dir", state_dir) != 0)
			return 1;
	}
	/* the config gives the kinds' threshold, and without --topology the
	 * topology a create would use: the config's file, through the cache in
	 * the configured state dir */
	const char *path = ts_cli_config_path();
	cleanup_json struct ts_json *config = NULL;
	struct ts_cli_state_config sc = {0};
	struct ts_placement_config pc = {0};

	r = ts_cli_config_load(path, &config, &err);
	if (r >= 0)
		r = ts_placement_config_parse(ts_json_get(config, "placement"), path, &pc, &err);
	if (r >= 0 && xml != NULL) {
		r = ts_topology_load_xml(xml, &topo, &err);
	} else if (r >= 0) {
		if (state_dir == NULL)
			r = ts_cli_state_config_read(config, path, &sc, &err);
		if (r >= 0)
			r = ts_topology_load_default(
				ts_json_get_string(ts_json_get_object(config, "topology"), "xml"),
				state_dir != NULL ? state_dir : sc.state_dir, &topo, &err);
	}
	if (r >= 0)
		r = ts_placement_describe_topology(topo, pc.performance_threshold, &report, &err);
	ts_placement_config_release(&pc);
	if (r < 0) {
		cleanup_free char *msg = ts_error_format(err);
		fprintf(stderr, "toposhimctl: %s\n", msg != NULL ? msg : "out of memory");
		return 1;
	}
	if (json) {
		cleanup_free char *text = NULL;
		if (ts_json_serialize(report, true, &text, NULL, &err) < 0) {
			fprintf(stderr, "toposhimctl: %s\n", err->msg);
			return 1;
		}
		fputs(text, stdout);
	} else {
		print_text(report);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
