#!/usr/bin/env bash
# The README's test command: provides what the tests need, then runs them.
#
#   ./test.sh [CARGO TEST ARGS…]      e.g. ./test.sh --test it remotes::
#
# Needs Debian (or apt), Rust, git and Python 3. Each script in .ci/setup.d/ provides one thing (lighttpd for
# the smart-HTTP remote, the Python MCP SDK in target/test-venv, …); they run in name order, are idempotent
# (a second run installs nothing) and fail loudly. A new need is a new script there.
set -euo pipefail
cd "$(dirname "$0")"
bash .ci/setup.sh
# A test that lacks what it needs is never passed silently: under CI=true it fails; elsewhere it appends
# "test<TAB>why" to this file (tests/it/harness.rs, skipped_for_want_of), summed up after the run.
export JULES_TEST_SKIPS="$PWD/target/test-skips.log"
mkdir -p target
: >"$JULES_TEST_SKIPS"
status=0
cargo test --locked "$@" || status=$?
skips=$(wc -l <"$JULES_TEST_SKIPS")
echo "== $skips test(s) skipped"
if [ "$skips" -gt 0 ]; then
    sort "$JULES_TEST_SKIPS" | sed 's/\t/: /; s/^/   /'
fi
exit "$status"
