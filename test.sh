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
exec cargo test --locked "$@"
