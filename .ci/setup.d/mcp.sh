#!/usr/bin/env bash
# The official Python MCP SDK, for the interop test of `git jules mcp` (tests/it/mcp.rs, python_sdk_interop).
set -euo pipefail
if ! python3 -c 'import mcp' 2>/dev/null; then
    python3 -m pip install --quiet --root-user-action=ignore 'mcp==2.3.0'
fi
python3 -c 'import mcp'
