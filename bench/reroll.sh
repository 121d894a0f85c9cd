#!/usr/bin/env bash
# bench/reroll.sh [--runs N]
#
# `git jules series reroll 1` against its peers on the shared fixture (../shared/bench/make_fixture.sh: a
# 30-commit series on a ~3000-file repository), in one run, whole process against whole process:
#   1. git jules series reroll 1
#   2. git add -A && git commit --fixup P1 && GIT_SEQUENCE_EDITOR=true git rebase -i --autosquash main
#   3. git add -A && git commit --fixup P1 && git revise --autosquash main      (pip install git-revise)
# The change folded into patch 1 is one line appended to the first file patch 1 touches. Each approach works
# in its own copy of the fixture (on /dev/shm when there is one), reset before every run by hyperfine's
# --prepare. Afterwards every approach must have produced the same 30 trees (asserted).
#
# Env: FIXTURE (default ${TMPDIR:-/tmp}/jules-bench/fixture, built when missing), GIT_JULES (a binary to use
# instead of building the release binary), CARGO_TARGET_DIR (honoured by the build).
set -euo pipefail

runs=10
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift ;;
        -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "reroll.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

here=$(cd "$(dirname "$0")/.." && pwd)
shared=${JULES_SHARED:-$here/../shared}
[ -d "$shared/bench" ] || shared=/work/shared
root=${TMPDIR:-/tmp}/jules-bench
fixture=${FIXTURE:-$root/fixture}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC

command -v hyperfine >/dev/null || { echo "reroll.sh: hyperfine is needed (apt-get install -y hyperfine)" >&2; exit 2; }
command -v git-revise >/dev/null || { echo "reroll.sh: git-revise is needed (pip install git-revise)" >&2; exit 2; }

# The binary: a private copy, so a concurrent build into a shared target dir cannot swap it mid-run.
bin=$(mktemp -d "${TMPDIR:-/tmp}/jules-reroll-bin.XXXXXX")
if [ -n "${GIT_JULES:-}" ]; then
    cp "$GIT_JULES" "$bin/git-jules"
else
    (cd "$here" && cargo build --release --quiet)
    cp "${CARGO_TARGET_DIR:-$here/target}/release/git-jules" "$bin/git-jules"
fi
export PATH=$bin:$PATH
echo "git-jules: $(git jules --version); $(git --version); git-revise $(git revise --version); $(nproc) cores" >&2

if [ ! -d "$fixture/.git" ]; then
    mkdir -p "$(dirname "$fixture")"
    bash "$shared/bench/make_fixture.sh" "$fixture"
fi
tip=$(git -C "$fixture" rev-parse series)
p1=$(git -C "$fixture" rev-list --reverse main..series | head -1)
file=$(git -C "$fixture" diff-tree --no-commit-id --name-only -r "$p1" | head -1)

scratch_base=/dev/shm
[ -w "$scratch_base" ] || scratch_base=${TMPDIR:-/tmp}
work=$(mktemp -d "$scratch_base/jules-reroll.XXXXXX")
trap 'rm -rf "$work" "$bin"' EXIT
for d in jules rebase revise; do
    cp -a "$fixture" "$work/$d"
done
# git-jules works on a series branch with its base recorded.
git -C "$work/jules" branch -q -m series jules/staging/bench
git -C "$work/jules" config branch.jules/staging/bench.julesBase main

fix="printf '%s\\n' '// the fix for patch 1' >> '$file'"
prep_jules="cd $work/jules && git checkout -q -f jules/staging/bench && git reset -q --hard $tip \
  && git for-each-ref --format='delete %(refname)' refs/jules/backup | git update-ref --stdin && $fix"
prep_rebase="cd $work/rebase && { git rebase --abort >/dev/null 2>&1 || true; } && git checkout -q -f series \
  && git reset -q --hard $tip && $fix"
prep_revise="cd $work/revise && git checkout -q -f series && git reset -q --hard $tip && $fix"

cmd_jules="git -C $work/jules jules series reroll 1 >/dev/null 2>&1"
cmd_rebase="cd $work/rebase && git add -A && git commit -q --fixup $p1 \
  && GIT_SEQUENCE_EDITOR=true git rebase -q -i --autosquash main >/dev/null 2>&1"
cmd_revise="cd $work/revise && git add -A && git commit -q --fixup $p1 && git revise --autosquash main >/dev/null 2>&1"

results=$work/results.json
hyperfine --style basic --runs "$runs" --warmup 1 --export-json "$results" \
    --prepare "$prep_jules" -n "git jules series reroll 1" "$cmd_jules" \
    --prepare "$prep_rebase" -n "fixup + rebase -i --autosquash" "$cmd_rebase" \
    --prepare "$prep_revise" -n "fixup + git revise --autosquash" "$cmd_revise" >&2

# Same result everywhere: after the last run each copy holds the rewritten series; compare every tree.
trees() { git -C "$1" log --format=%T "main..HEAD"; }
[ "$(trees "$work/jules")" = "$(trees "$work/rebase")" ] || { echo "reroll.sh: git-jules and rebase differ" >&2; exit 1; }
[ "$(trees "$work/jules")" = "$(trees "$work/revise")" ] || { echo "reroll.sh: git-jules and git-revise differ" >&2; exit 1; }
[ "$(git -C "$work/jules" rev-list --count main..HEAD)" = 30 ] || { echo "reroll.sh: the series lost its length" >&2; exit 1; }
[ -z "$(git -C "$work/jules" status --porcelain)" ] || { echo "reroll.sh: git-jules left a dirty tree" >&2; exit 1; }
echo "check: all three produce the same 30 trees (tip tree $(git -C "$work/jules" rev-parse 'HEAD^{tree}'))" >&2

python3 - "$results" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
med = {x["command"]: x["median"] for x in r}
j = med["git jules series reroll 1"]
rb = med["fixup + rebase -i --autosquash"]
rv = med["fixup + git revise --autosquash"]
print("| approach | median | mean ± σ | min |")
print("|---|---:|---:|---:|")
for x in r:
    print("| %s | %.1f ms | %.1f ± %.1f ms | %.1f ms |" % (
        x["command"], x["median"] * 1000, x["mean"] * 1000, x["stddev"] * 1000, x["min"] * 1000))
print()
for x in r:
    print("%s: runs %s ms" % (x["command"], " ".join("%.0f" % (t * 1000) for t in x["times"])))
print()
print("git-jules is %.1fx faster than fixup + rebase (target 5x: %s) and %.1fx faster than fixup + git revise (target 3x: %s)" % (
    rb / j, "met" if rb / j >= 5 else "MISSED", rv / j, "met" if rv / j >= 3 else "MISSED"))
PY
