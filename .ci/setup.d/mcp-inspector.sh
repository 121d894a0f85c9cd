#!/usr/bin/env bash
# The official MCP Inspector's CLI, for the check of `git jules mcp` by a client other than ours
# (tests/it/agent.rs, mcp_inspector_cli_lists_and_calls_tools), installed from npm under the target directory
# (target/mcp-inspector): nothing goes into the system's node, and the test finds it beside the binary it
# tests. 0.17.2 is pinned: the newest runs on node 22 and the machines have node 20; 0.17.2 declares
# node >= 22.7.5 too but its CLI runs on 20 (npm warns EBADENGINE), which is what the test checks.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target"
dir=$(cd "$target" && pwd)/mcp-inspector
version=0.17.2
bin="$dir/node_modules/.bin/mcp-inspector"
.ci/npm-pinned "$dir" "@modelcontextprotocol/inspector" "$version"
test -x "$bin"
