#!/usr/bin/env bash
# Claude Code from npm, for the end-to-end test of the pre-edit hook against a real harness driven offline by
# a scripted fake Messages API on 127.0.0.1 (tests/it/agent.rs, claude_code_end_to_end_edit_denied),
# installed under the target directory (target/claude-code): nothing goes into the system, and the test
# finds it beside the binary it tests. The version is pinned: the test's fake server speaks what this
# version sends and expects.
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${CARGO_TARGET_DIR:-target}
mkdir -p "$target"
dir=$(cd "$target" && pwd)/claude-code
version=2.1.197
bin="$dir/node_modules/.bin/claude"
.ci/npm-pinned "$dir" "@anthropic-ai/claude-code" "$version"
"$bin" --version | grep -q "^$version"
