#!/bin/sh
# make check: the guest tests on one package (4 cores x SMT2, 1 NUMA node),
# to show that nothing assumes two packages.  TAP on stdout.
exec bash "$(dirname "$0")/run.sh" --layout 1s
