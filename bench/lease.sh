#!/usr/bin/env bash
# Path leases at fleet scale, side by side in one run:
#   check:  `git jules lease check --staged` on a change of FILES files, with PERSONAS personas holding LEASES
#           exclusive leases each (a tenth of the changed files under someone's lease), against `git diff
#           --cached --name-only` (what git itself needs to list the same change) — target <= 20 ms;
#   commit: `git commit` of that change with the pre-commit hook installed against the same commit without it
#           (core.hooksPath pointing at an empty directory) — target ratio <= 1.5; then the same for the change
#           without its leased files (the common case: the hook finds nothing and the commit goes through).
# Wall times and CPU times (user + system, hyperfine's means) are both printed: on a loaded machine the wall
# times mostly measure queueing. GIT_JULES=PATH measures a prebuilt binary (bench/common.sh).
# Numbers measured while other builds run on the machine are noisy: rerun before quoting them.
# Usage: bench/lease.sh [PERSONAS] [LEASES] [FILES]
source "$(dirname "$0")/common.sh"
PERSONAS=${1:-100}
LEASES=${2:-20}
FILES=${3:-1000}
REPO=$SCRATCH/repo
git init -q "$REPO"
cd "$REPO"
git commit -q --allow-empty -m base

echo "writing $((PERSONAS * LEASES)) leases..." >&2
for p in $(seq "$PERSONAS"); do
  for l in $(seq "$LEASES"); do
    "$JULES" lease acquire --persona "p$p" --ttl 1w --reason bench "area$p/part$l/" >/dev/null
  done
done
# The change: FILES files, one in ten under a leased directory.
for i in $(seq "$FILES"); do
  if [ $((i % 10)) -eq 0 ]; then f=area$((i % PERSONAS + 1))/part1/f$i.txt; else f=free/d$((i % 50))/f$i.txt; fi
  mkdir -p "$(dirname "$f")"
  echo "$i" >"$f"
done
git add -A
conflicts=$(JULES_PERSONA=bench "$JULES" --json lease check --staged | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["conflicts"]))' || true)
echo "conflicts found by the check: $conflicts (expected $((FILES / 10)))" >&2

hyperfine -N --warmup 3 --min-runs 20 --export-json "$SCRATCH/check.json" \
  -n "git diff --cached --name-only" "git diff --cached --name-only -z" \
  -n "lease check --staged" "env JULES_PERSONA=bench $JULES lease check --staged" -i >&2

# Commits: everyone's leases would refuse this change, so the hooked run commits as warn mode (the whole check
# still runs and prints); the plain run has no hook at all.
mkdir -p "$SCRATCH/nohooks"
HOOKS=$SCRATCH/hooks
mkdir -p "$HOOKS"
# (`git -c core.hooksPath=…` does not reach the binary's config reading, so the hook is written out directly.)
"$JULES" hooks show --hook pre-commit >"$HOOKS/pre-commit"
chmod +x "$HOOKS/pre-commit"
git config jules.lease.preCommit warn
BASE=$(git rev-parse HEAD)
hyperfine --warmup 3 --min-runs 20 --export-json "$SCRATCH/commit.json" \
  --prepare "git update-ref HEAD $BASE" \
  -n "git commit (no hook)" "git -c core.hooksPath=$SCRATCH/nohooks commit -qm change" \
  -n "git commit (lease hook)" "git -c core.hooksPath=$HOOKS commit -qm change 2>/dev/null" >&2

# The change without the leased files: the hook checks 900 files against the 2,000 leases, finds nothing.
git rm -r -q --cached -- 'area*'
git config jules.lease.preCommit refuse
hyperfine --warmup 3 --min-runs 20 --export-json "$SCRATCH/clean.json" \
  --prepare "git update-ref HEAD $BASE" \
  -n "git commit, no lease touched (no hook)" "git -c core.hooksPath=$SCRATCH/nohooks commit -qm change" \
  -n "git commit, no lease touched (lease hook)" "git -c core.hooksPath=$HOOKS commit -qm change" >&2

diff=$(median "$SCRATCH/check.json" 0)
check=$(median "$SCRATCH/check.json" 1)
plain=$(median "$SCRATCH/commit.json" 0)
hooked=$(median "$SCRATCH/commit.json" 1)
echo "leases: $((PERSONAS * LEASES)) ($PERSONAS personas x $LEASES), change: $FILES files"
echo "lease check --staged: $(ms "$check") (git diff --cached alone: $(ms "$diff"); target <= 20 ms)"
echo "git commit: $(ms "$plain") without the hook, $(ms "$hooked") with it: ratio $(ratio "$hooked" "$plain") (target <= 1.5)"
echo "  CPU: check $(ms "$(cpu "$SCRATCH/check.json" 1)") (git diff --cached $(ms "$(cpu "$SCRATCH/check.json" 0)")); commit $(ms "$(cpu "$SCRATCH/commit.json" 0)") / $(ms "$(cpu "$SCRATCH/commit.json" 1)"): ratio $(ratio "$(cpu "$SCRATCH/commit.json" 1)" "$(cpu "$SCRATCH/commit.json" 0)")"
cplain=$(median "$SCRATCH/clean.json" 0)
chooked=$(median "$SCRATCH/clean.json" 1)
echo "git commit touching no lease ($((FILES - FILES / 10)) files): $(ms "$cplain") / $(ms "$chooked"): ratio $(ratio "$chooked" "$cplain"); CPU ratio $(ratio "$(cpu "$SCRATCH/clean.json" 1)" "$(cpu "$SCRATCH/clean.json" 0)")"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
