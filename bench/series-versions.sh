#!/usr/bin/env bash
# bench/series-versions.sh [--runs N]
#
# Series versions (issue 26), whole process against whole process, in one run:
#   1. `git jules series range-diff -s P/rg v1 v2` against `git range-diff -s B..V1 B..V2` on the same commits:
#      two 50-patch versions of ripgrep (../shared/corpora/ripgrep.bundle: the last 50 commits, and the same
#      stretch replayed with two patches dropped, three reworded and one amended). Target: ratio <= 0.5.
#      Also without -s (with the diffs of changed pairs), for reference.
#   2. `git jules series list --all` over 100 personas x 5 series (500 version refs). Target: <= 50 ms.
# The outputs of 1. are compared with git's (with -s and without) before timing.
# Numbers taken while other builds run on the machine are noisy; say so when quoting them.
#
# The release binary is built as ./install.sh builds it (bench/common.sh).
set -euo pipefail
runs=10
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift ;;
        -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "series-versions.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
. "$(dirname "$0")/common.sh"
bundle=$SHARED/corpora/ripgrep.bundle
[ -f "$bundle" ] || bundle=/work/shared/corpora/ripgrep.bundle
[ -f "$bundle" ] || { echo "series-versions.sh: $bundle is missing" >&2; exit 2; }

# 1. Two 50-patch versions.
rg=$SCRATCH/rg
git clone -q "$bundle" "$rg" 2>/dev/null
cd "$rg"
base=$(git rev-parse HEAD~50)
v1=$(git rev-parse HEAD)
mapfile -t commits < <(git rev-list --reverse --no-merges "$base..$v1")
[ "${#commits[@]}" -eq 50 ] || { echo "expected 50 commits, got ${#commits[@]}" >&2; exit 2; }
git checkout -q --detach "$base"
for i in "${!commits[@]}"; do
    case $i in 24|36) continue ;; esac
    git cherry-pick --allow-empty --keep-redundant-commits "${commits[$i]}" >/dev/null
    case $i in 2|20|40) git commit -q --amend --allow-empty -m "Reworded patch $i" ;; esac
    if [ "$i" = 12 ]; then echo amended > EXTRA.md; git add EXTRA.md; git commit -q --amend --no-edit; fi
done
v2=$(git rev-parse HEAD)
git branch -f rgbase "$base"
git branch -f jules/staging/rg "$v1"
git config branch.jules/staging/rg.julesBase rgbase
git checkout -q rgbase
git jules series version rg --persona bench >/dev/null
git branch -f jules/staging/rg "$v2"
git jules series version rg --persona bench >/dev/null
ours=$(git jules series range-diff -s bench/rg v1 v2)
theirs=$(git range-diff --no-color -s "$base..$v1" "$base..$v2")
if [ "$ours" != "$theirs" ]; then
    echo "the pairings differ:"; diff <(echo "$ours") <(echo "$theirs") || true; exit 1
fi
echo "pairings identical ($(echo "$ours" | wc -l) lines: $(echo "$ours" | awk '{print $3}' | sort | uniq -c | tr '\n' ' '))"
if ! diff <(git jules series range-diff bench/rg v1 v2) <(git range-diff --no-color "$base..$v1" "$base..$v2") >/dev/null; then
    echo "the outputs with diffs differ from git's"; exit 1
fi
echo "the whole output (with the diffs of changed pairs) is git's"
hyperfine -N --warmup 2 --runs "$runs" --export-json "$SCRATCH/rd.json" \
    "git jules series range-diff -s bench/rg v1 v2" \
    "git range-diff --no-color -s $base..$v1 $base..$v2" \
    "git jules series range-diff bench/rg v1 v2" \
    "git range-diff --no-color $base..$v1 $base..$v2" >/dev/null
a=$(median "$SCRATCH/rd.json" 0); b=$(median "$SCRATCH/rd.json" 1)
c=$(median "$SCRATCH/rd.json" 2); d=$(median "$SCRATCH/rd.json" 3)
echo "range-diff -s, 50 patches: git-jules $(ms "$a"), git $(ms "$b"), ratio $(ratio "$a" "$b") (target <= 0.5)"
echo "range-diff with diffs:     git-jules $(ms "$c"), git $(ms "$d"), ratio $(ratio "$c" "$d")"

# 2. 100 personas x 5 series.
many=$SCRATCH/many
git init -q "$many"
cd "$many"
echo r > README; git add README; git commit -qm init
for s in 1 2 3 4 5; do
    git branch "jules/staging/s$s" main
    git config "branch.jules/staging/s$s.julesBase" main
    git checkout -q "jules/staging/s$s"
    for p in 1 2 3; do echo "$s $p" > "f$p"; git add "f$p"; git commit -qm "s$s patch $p"; done
done
git checkout -q main
for p in $(seq 1 100); do
    for s in 1 2 3 4 5; do git jules series version "s$s" --persona "p$p" >/dev/null; done
done
n=$(git jules --json series list --all | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["series"]))')
[ "$n" = 500 ] || { echo "expected 500 series, listed $n" >&2; exit 1; }
hyperfine -N --warmup 2 --runs "$runs" --export-json "$SCRATCH/list.json" "git jules series list --all" >/dev/null
l=$(median "$SCRATCH/list.json" 0)
echo "series list --all, 500 series: $(ms "$l") (target <= 50 ms)"
