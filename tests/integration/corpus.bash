# shellcheck shell=bash disable=SC2034 # TS_FIXTURES and CORPUS_PATH are for the .bats files
# corpus.bash - test data for the bats files (helpers.bash and
# containers.bash load it; a file that loads neither can `load corpus`).
#
# Data a test needs comes from the project itself: hwloc synthetic
# topologies (ts_synthetic_xml), the files of tests/fixtures ($TS_FIXTURES).
# The team's shared corpus ($TS_SHARED_DIR/corpus: real machines'
# topologies and sysfs trees, other projects' CDI specs) is optional extra
# coverage: a test that reads it calls require_corpus first, which skips
# with one reason line when it is absent.  make check exports TS_SHARED_DIR
# (configure --with-shared-dir, default ../shared beside the source tree).

TS_SRCDIR=${TS_SRCDIR:-$(cd "$BATS_TEST_DIRNAME/../.." && pwd)}
TS_FIXTURES="$TS_SRCDIR/tests/fixtures"

# require_corpus REL: skip unless $TS_SHARED_DIR/corpus/REL (a file or a
# directory) exists; then CORPUS_PATH names it.
require_corpus() {
	local p
	p="${TS_SHARED_DIR:-$(cd "$TS_SRCDIR/.." && pwd)/shared}/corpus/$1"
	[ -e "$p" ] || skip "no shared corpus at $p (configure --with-shared-dir or set TS_SHARED_DIR)"
	CORPUS_PATH=$p
}

# ts_synthetic_xml DESCRIPTION FILE: an hwloc XML topology of the synthetic
# DESCRIPTION (e.g. "pack:2 numa:1 core:4 pu:2"), made by lstopo; skips
# when hwloc's lstopo is not installed.
ts_synthetic_xml() {
	local lstopo
	lstopo=$(command -v lstopo-no-graphics || command -v lstopo) ||
		skip "lstopo is not installed (apt-get install hwloc)"
	"$lstopo" --input "$1" --of xml "$2"
}

# The operator policy the tests run under (src/policy/policy.h): unscoped
# containers, and pods of every Kubernetes namespace (the CRI tests' pods
# are in "default"), may ask for everything.  Without a policy toposhim
# grants nothing privileged; the tests of the policy itself (security.bats,
# the CRI namespace test) write their own.
# shellcheck disable=SC2034 # used by the files that load this one
TS_TEST_POLICY='"policy": {"unscoped": {"classes": ["*"], "numa": ["*"], "memory_tiers": ["*"], "devices": ["*"]}, "namespaces": {"*": {"classes": ["*"], "numa": ["*"], "memory_tiers": ["*"], "devices": ["*"]}}}'
