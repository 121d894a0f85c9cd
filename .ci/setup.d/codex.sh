#!/usr/bin/env bash
# Codex CLI from npm, for the end-to-end test of the pre-edit hook against a real harness driven offline by a
# scripted fake Responses API on 127.0.0.1 (tests/it/agent.rs, codex_end_to_end_apply_patch_denied), installed
# under the target directory (target/codex): nothing goes into the system, and the test finds it beside the
# binary it tests. The version is pinned: the test's fake server speaks what this version sends and expects,
# and tests/it/agent_payloads/ holds this version's hook payloads.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target"
dir=$(cd "$target" && pwd)/codex
version=0.171.0
bin="$dir/node_modules/.bin/codex"
.ci/npm-pinned "$dir" "@openai/codex" "$version"
"$bin" --version | grep -q "$version"
