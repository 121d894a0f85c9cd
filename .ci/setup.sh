#!/usr/bin/env bash
# Installs what the test suite needs beyond Rust and git (a web server for the smart-HTTP remote, the
# Python MCP SDK, …). Each piece lives in its own script under .ci/setup.d/, run in name order. Scripts must
# be idempotent and fail loudly: a test that needs a missing tool fails rather than passing silently.
set -euo pipefail
cd "$(dirname "$0")/.."
for script in .ci/setup.d/*.sh; do
    [ -e "$script" ] || continue
    echo "== setup: $script"
    bash "$script"
done
