#!/usr/bin/env bash
# Append latency per event, whole process, side by side in one run:
#   baseline: a shell loop of `git hash-object -w`, `git mktree`, `git commit-tree`, `git update-ref REF NEW OLD`
#   ours:     a shell loop of `git jules log append` (the binary called directly)
#   mail:     a shell loop of `git jules mail send`, called through git as personas call it
#   start-up: a loop of `git-jules --version` against a loop of /bin/true (a do-nothing binary)
# Each loop runs N times; the per-event time is the loop's median time / N.
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
cat > "$SCRATCH/mail.sh" <<SH
#!/usr/bin/env bash
set -e
for i in \$(seq $N); do
  git jules mail send --from bench --to curator --subject "bench \$i" --body "message \$i" >/dev/null
done
SH
cat > "$SCRATCH/version.sh" <<SH
#!/usr/bin/env bash
for i in \$(seq $N); do "$JULES" --version >/dev/null; done
SH
cat > "$SCRATCH/true.sh" <<SH
#!/usr/bin/env bash
for i in \$(seq $N); do /bin/true; done
SH
chmod +x "$SCRATCH"/*.sh

hyperfine -N --warmup 1 --runs 5 --export-json "$SCRATCH/append.json" \
  -n "plain git loop x$N" "$SCRATCH/baseline.sh" \
  -n "git jules log append x$N" "$SCRATCH/ours.sh" \
  -n "git jules mail send (through git) x$N" "$SCRATCH/mail.sh" \
  -n "git-jules --version x$N" "$SCRATCH/version.sh" \
  -n "/bin/true x$N" "$SCRATCH/true.sh" >&2

per() { python3 -c "print($(median "$SCRATCH/append.json" "$1")/$N)"; }
base=$(per 0); ours=$(per 1); mail=$(per 2); version=$(per 3); floor=$(per 4)
echo "append one event, whole process (median of 5 loops of $N): plain git $(ms "$base"), git-jules $(ms "$ours"), ratio $(ratio "$ours" "$base")x (target <= 0.5x)"
echo "mail send through git: $(ms "$mail"), ratio $(ratio "$mail" "$base")x of the plain-git append (target <= 0.5x)"
echo "start-up: git-jules --version $(ms "$version"), /bin/true $(ms "$floor")"
"$JULES" log fsck bench >/dev/null
