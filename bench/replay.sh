#!/usr/bin/env bash
# Replay of a large log into a projection, against `git log --format=%B REF` on the same log, in one run.
# Builds an N-event log with git fast-import (packed) and a commit-graph, then measures:
#   cold: `git jules log stats` with no cache (a full walk, decode, order and fold)
#   baseline: `git log --format=%B REF >/dev/null`
#   warm: `git jules log stats` with the cache warm and the ref unchanged
#   incremental: after 1,000 new events, `log stats` reads only those
#   memory: peak RSS of `git jules --full log stats` (the bounded replay) against `git log --format=%B`
# Usage: bench/replay.sh [N]   (default 1000000)
source "$(dirname "$0")/common.sh"
N=${1:-1000000}
REPO=$SCRATCH/repo
git init -q "$REPO"
cd "$REPO"
echo "generating $N events..." >&2
python3 "$ROOT/bench/gen_events.py" "$N" refs/jules/bench | git fast-import --quiet
git commit-graph write --reachable 2>/dev/null
"$JULES" log stats bench --json >/dev/null   # also checks the generated framing is valid

hyperfine -N --warmup 1 --runs 5 --export-json "$SCRATCH/replay.json" \
  --prepare "rm -rf $REPO/.git/jules" \
  -n "git jules log stats (cold)" "$JULES log stats bench" \
  -n "git log --format=%B" "git log --format=%B refs/jules/bench" >&2
cold=$(median "$SCRATCH/replay.json" 0)
gitlog=$(median "$SCRATCH/replay.json" 1)

# Peak memory, three runs each, alternating: /usr/bin/time's maximum resident set size.
peak() { /usr/bin/time -f '%M %e %U' "$@" 2>&1 >/dev/null | tail -1; }
ours_kb=0; git_kb=0
for i in 1 2 3; do
  set -- $(peak "$JULES" --full log stats bench); [ "$1" -gt "$ours_kb" ] && ours_kb=$1; ours_t="$2 s wall, $3 s user"
  set -- $(peak git log --format=%B refs/jules/bench); [ "$1" -gt "$git_kb" ] && git_kb=$1; git_t="$2 s wall, $3 s user"
done

"$JULES" log stats bench >/dev/null
hyperfine -N --warmup 3 --runs 20 --export-json "$SCRATCH/warm.json" \
  -n "git jules log stats (warm)" "$JULES log stats bench" >&2
warm=$(median "$SCRATCH/warm.json" 0)

seq 1000 | sed 's/.*/{"i":&}/' | "$JULES" log append bench --kind bench.late --actor late --batch >/dev/null
refresh=$("$JULES" log stats bench --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["refresh"])')

rate=$(python3 -c "print(f'{$N/$cold:,.0f}')")
echo "replay of $N events: cold $(ms "$cold") ($rate events/s, target >= 200,000), git log --format=%B $(ms "$gitlog"), ratio $(ratio "$cold" "$gitlog")x (target <= 1.0x)"
echo "peak RSS of the full replay: $((ours_kb / 1024)) MB ($ours_t) against git log --format=%B $((git_kb / 1024)) MB ($git_t), ratio $(ratio "$ours_kb" "$git_kb")x (target <= 1.0x)"
echo "warm query, ref unchanged: $(ms "$warm") (target < 20 ms)"
echo "after 1,000 new events: refresh = $refresh (target: only the 1000 new commits read)"
