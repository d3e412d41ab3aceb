#!/bin/sh
# make check: the guest tests on the default layout (2 packages x 2 cores x
# 2 threads, 2 NUMA nodes, disk on node 1).  TAP on stdout.
exec bash "$(dirname "$0")/run.sh" --layout 2s
