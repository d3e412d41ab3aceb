/*
 * ctl-placement.h - the toposhimctl commands of the placement work:
 * `toposhimctl topology` and `toposhimctl plan`.
 *
 * Each takes the arguments after the command word (argv[0] is the command
 * name, as getopt expects), writes its report to stdout and errors to
 * stderr, and returns the process exit status (0 ok, 1 failure, 2 usage).
 * Neither writes any file.
 */
#ifndef TS_CLI_CTL_PLACEMENT_H
#define TS_CLI_CTL_PLACEMENT_H

/**
 * toposhimctl topology [--json] [--topology FILE] [--state-dir DIR]
 * Packages, NUMA nodes (memory, tier, memory-only), NUMA domains whose
 * memory comes from elsewhere, L3 groups, cores, PUs, the ranked CPU kinds
 * (at the config's performance_threshold) and I/O devices with their NUMA
 * nodes.  The topology comes from
 * --topology, else TOPOSHIM_TOPOLOGY_XML, else the host (through the cache
 * in --state-dir when given).
 * @return exit status.
 */
int ts_ctl_topology(int argc, char **argv);

/**
 * toposhimctl plan --bundle DIR [--topology FILE] [--config FILE] [--id ID] [--json]
 * The placement toposhim would make for the bundle's config.json among the
 * live allocations of the state dir (none with --topology: another
 * machine), with the reasons.  The toposhim config is --config, else
 * TOPOSHIM_CONFIG, else /etc/toposhim/config.json when it exists; its
 * "placement" object and "topology": {"xml"} are used.  The topology comes
 * through the state dir's cache without writing it
 * (ts_topology_load_for_placement(), read only); the CDI registry is read only
 * when the bundle requests devices.
 * @return exit status.
 */
int ts_ctl_plan(int argc, char **argv);

#endif
