#!/bin/sh
# Style checks as TAP: clang-format, module layering, shellcheck.
# Needs the git checkout (the list of files comes from git ls-files).
top=${TS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 1
# Only the checkout itself: a release tarball unpacked inside one (make
# distcheck) is not the tree git lists.
if [ "$(git rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ]; then
	echo "1..0 # SKIP not a git checkout (release tarball): nothing to lint"
	exit 0
fi
echo "1..3"
files=$(git ls-files '*.c' '*.h')
if ! command -v clang-format >/dev/null; then
	echo "ok 1 - clang-format # SKIP clang-format not installed"
elif out=$(echo "$files" | xargs clang-format --dry-run --Werror 2>&1); then
	echo "ok 1 - clang-format: every .c/.h is formatted"
else
	echo "not ok 1 - clang-format: run 'make format'"
	echo "$out" | head -40 | sed 's/^/# /'
fi
if out=$(sh contrib/check-layering.sh . 2>&1); then
	echo "ok 2 - layering: no module includes a higher one"
else
	echo "not ok 2 - layering"
	echo "$out" | sed 's/^/# /'
fi
scripts=$(git ls-files '*.sh' '*.bash' .ci/run hooks tests/fixtures | while read -r f; do
	[ -f "$f" ] && head -n1 "$f" | grep -q '^#!.*sh' && echo "$f"
done)
if ! command -v shellcheck >/dev/null; then
	echo "ok 3 - shellcheck # SKIP shellcheck not installed"
elif out=$(echo "$scripts" | xargs shellcheck -x -S warning 2>&1); then
	echo "ok 3 - shellcheck: $(echo "$scripts" | wc -l) scripts clean"
else
	echo "not ok 3 - shellcheck"
	echo "$out" | head -40 | sed 's/^/# /'
fi
