#!/bin/sh
# soak-long.sh - `make check-long` part of issue 17: the soak of
# tests/integration/soak.bats, RUNS times in a row (default 10) with longer
# runs (SOAK_SECONDS, default 60; SOAK_RUNC_SECONDS, default 30), each with
# its own seed; stops at the first failing run and says which seed it had.
set -u
runs=${SOAK_RUNS:-10}
export SOAK_SECONDS=${SOAK_SECONDS:-60} SOAK_RUNC_SECONDS=${SOAK_RUNC_SECONDS:-30}
i=1
while [ "$i" -le "$runs" ]; do
	SOAK_SEED=$(( (i * 7919) % 32768 ))
	export SOAK_SEED
	echo "soak run $i of $runs, seed $SOAK_SEED"
	bats --tap "$TS_SRCDIR/tests/integration/soak.bats" || {
		echo "soak run $i failed (seed $SOAK_SEED)"
		exit 1
	}
	i=$((i + 1))
done
echo "soak: $runs runs, no record lost"
