#!/usr/bin/env bash
# Append latency per event, whole process, side by side in one run:
#   baseline: a shell loop of `git hash-object -w`, `git mktree`, `git commit-tree`, `git update-ref REF NEW OLD`
#   ours:     a shell loop of `git jules log append`
# Each loop appends N events; the per-event time is the loop's median time / N.
# Usage: bench/append.sh [N]
source "$(dirname "$0")/common.sh"
N=${1:-100}
REPO=$SCRATCH/repo
git init -q "$REPO"
cd "$REPO"

cat > "$SCRATCH/baseline.sh" <<SH
#!/usr/bin/env bash
set -e
old=\$(git rev-parse -q --verify refs/jules/baseline || true)
for i in \$(seq $N); do
  blob=\$(printf '{"actor":"bench","data":{"i":%d},"kind":"bench.append","v":1}' "\$i" | git hash-object -w --stdin)
  tree=\$(printf '100644 blob %s\tevent.json\n' "\$blob" | git mktree)
  commit=\$(git commit-tree "\$tree" \${old:+-p "\$old"} -m "bench event \$i")
  git update-ref refs/jules/baseline "\$commit" \$old
  old=\$commit
done
SH
cat > "$SCRATCH/ours.sh" <<SH
#!/usr/bin/env bash
set -e
for i in \$(seq $N); do
  "$JULES" log append bench --kind bench.append --actor bench --data "{\"i\":\$i}" >/dev/null
done
SH
chmod +x "$SCRATCH/baseline.sh" "$SCRATCH/ours.sh"

hyperfine -N --warmup 1 --runs 5 --export-json "$SCRATCH/append.json" \
  -n "plain git loop x$N" "$SCRATCH/baseline.sh" \
  -n "git jules log append x$N" "$SCRATCH/ours.sh" >&2

base=$(python3 -c "import sys; print($(median "$SCRATCH/append.json" 0)/$N)")
ours=$(python3 -c "import sys; print($(median "$SCRATCH/append.json" 1)/$N)")
echo "append one event, whole process (median of 5 loops of $N): plain git $(ms "$base"), git-jules $(ms "$ours"), ratio $(ratio "$ours" "$base")x (target <= 0.5x)"
"$JULES" log fsck bench >/dev/null
