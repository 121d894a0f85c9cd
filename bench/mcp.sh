#!/usr/bin/env bash
# bench/mcp.sh [RUNS] -- `git jules mcp` against the CLI process, in one run (docs/benchmarks-mcp.md).
#
# A repository with 100,000 messages to 25 personas (a seed-000 events.jsonl imported with
# `git jules mail import`), then, warm: `mail_list` (limit 20) and `mail_send` through the official Python
# MCP client (pip install mcp) against `mail inbox --limit 20` and `mail send` as whole processes.
# Targets: the server beats the process per call; mail_list p95 < 5 ms.
set -euo pipefail
RUNS=${1:-200}
source "$(dirname "$0")/common.sh"
python3 -c 'import mcp' 2>/dev/null || { echo "needs the Python MCP SDK: pip install mcp" >&2; exit 2; }
REPO=$SCRATCH/repo
git init -q "$REPO"
python3 "$ROOT/bench/gen_seed000.py" "$SCRATCH/events.jsonl" 100000 25
git -C "$REPO" config gc.auto 0
"$JULES" -C "$REPO" mail import "$SCRATCH/events.jsonl" >/dev/null
git -C "$REPO" repack -adq
echo "binary: $("$JULES" --version), runs: $RUNS"
python3 "$ROOT/bench/mcp_latency.py" "$JULES" "$REPO" persona-03 "$RUNS"
