#!/usr/bin/env bash
# The official Python MCP SDK, for the interop test of `git jules mcp` (tests/it/mcp.rs, python_sdk_interop),
# in a virtual environment under the target directory (target/test-venv): nothing is installed into the
# system's Python, and the test finds the SDK there (it looks for test-venv beside the binary it tests).
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target"
venv=$(cd "$target" && pwd)/test-venv
if ! "$venv/bin/python3" -c 'import mcp' 2>/dev/null; then
    if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
        # Debian splits venv's pip bootstrap into its own package.
        py=$(python3 -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')
        .ci/apt-install "$py-venv"
    fi
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python3" -m pip install --quiet --disable-pip-version-check 'mcp==2.3.0'
fi
"$venv/bin/python3" -c 'import mcp'
