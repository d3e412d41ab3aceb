/*
 * ctl-alloc.h - `toposhimctl alloc`: the operator's view of the allocation
 * store (src/state): `alloc list [--json]` and `alloc gc [--grace SECONDS]`.
 */
#ifndef TS_CLI_CTL_ALLOC_H
#define TS_CLI_CTL_ALLOC_H

/**
 * Run `toposhimctl alloc ...`.  Output goes to stdout; errors and warnings
 * to stderr as "toposhimctl: error: <message>" / "toposhimctl: warning: ...".
 *   list          one line per allocation under a header: CONTAINER ID,
 *                 STATE, CLASS, CPUS, MEMS, PID, DEVICES ("-" for none),
 *                 columns two spaces apart, in store order;
 *   list --json   the "allocations" array of allocations.json, pretty;
 *   gc            collect stale allocations (state.h ts_state_gc()), one
 *                 line "collected <container id>" per record;
 *   --grace S     grace period of records without a pid, seconds (default 60).
 * The state directory is $TOPOSHIM_STATE_DIR or /run/toposhim.
 * @param[in] argc, argv  argv[0] is "alloc".
 * @return the exit status: 0; 1 on an error; 2 on a usage error.
 */
int ts_ctl_alloc(int argc, char **argv);

#endif
