#!/usr/bin/env bash
# bench/weave-real.sh [--runs N] [--commits N] [--keep-history]
#
# `git jules weave` against `git am` on real history: the last 300 commits of ripgrep
# (../shared/corpora/ripgrep.bundle) as one `git format-patch --stdout` mbox, applied onto HEAD~300, both
# measured in one run, side by side, on the same file system (hyperfine, median). Every run starts from the
# same object store: the prepare step deletes what the previous run wrote (refs, and objects newer than the
# clone). Afterwards both results are checked: the same final tree as the original tip, and the same
# number of commits (git am --empty=drop drops the two empty commits; weave reports them as skipped).
# By default each working copy is cut back to the base (later refs deleted, their objects pruned), as a
# repository receiving these patches would be; --keep-history keeps the clone whole, so the blobs and trees
# the patches produce already exist (git then only freshens them).
#
# Env: GIT_JULES (a binary to use instead of building the release binary), CARGO_TARGET_DIR, TMPDIR
# (everything goes to ${TMPDIR:-/tmp}/jules-bench-real). Needs hyperfine.
set -euo pipefail

runs=5
commits=300
prune=1
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift ;;
        --commits) commits=$2; shift ;;
        --keep-history) prune=0 ;;
        -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "weave-real.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
command -v hyperfine >/dev/null || { echo "weave-real.sh: hyperfine is needed (apt-get install -y hyperfine)" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
shared=${JULES_SHARED:-$here/../shared}
[ -d "$shared/corpora" ] || shared=/work/shared
bundle=$shared/corpora/ripgrep.bundle
[ -f "$bundle" ] || { echo "weave-real.sh: $bundle is missing" >&2; exit 2; }
root=${TMPDIR:-/tmp}/jules-bench-real
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC
export GIT_COMMITTER_NAME="Bench Weaver" GIT_COMMITTER_EMAIL=weaver@example.com

bin=$root/bin
mkdir -p "$bin"
if [ -n "${GIT_JULES:-}" ]; then
    cp "$GIT_JULES" "$bin/git-jules"
else
    (cd "$here" && cargo build --release --quiet)
    cp "${CARGO_TARGET_DIR:-$here/target}/release/git-jules" "$bin/git-jules"
fi
export PATH=$bin:$PATH
echo "git-jules: $(git jules --version); $(git --version); $(nproc) cores; $(df -T "$root" 2>/dev/null | awk 'NR==2 {print $2}') at $root" >&2

work=$root/work
rm -rf "$work"
mkdir -p "$work"
for t in weave am; do
    git clone -q "$bundle" "$work/$t" 2>/dev/null
    git -C "$work/$t" config user.name "Bench Weaver"
    git -C "$work/$t" config user.email weaver@example.com
done
tip=$(git -C "$work/am" rev-parse HEAD)
base=$(git -C "$work/am" rev-parse "HEAD~$commits")
git -C "$work/am" format-patch -q --stdout "$base..$tip" >"$root/series.mbox"
want=$(git -C "$work/am" rev-parse "$tip^{tree}")
# Each working copy holds only the history up to the base, as a repository that receives these patches
# would: every other ref goes and the objects only they reach are pruned, so both tools write real objects.
for t in weave am; do
    (
        cd "$work/$t"
        git checkout -q -f --detach "$base"
        git update-ref refs/heads/bench-base "$base"
        if [ "$prune" = 1 ]; then
            git symbolic-ref -d refs/remotes/origin/HEAD 2>/dev/null || true
            git for-each-ref --format='delete %(refname)' | grep -v ' refs/heads/bench-base$' | git update-ref --stdin
            git reflog expire --expire=now --all
            git gc -q --prune=now
        fi
        ls .git/objects/pack >.git/bench-keep
        touch .git/bench-marker
    )
done
sleep 1

cat >"$work/clean.sh" <<'SH'
#!/bin/sh
cd "$1" || exit 1
git am --abort >/dev/null 2>&1
for r in $(git for-each-ref --format='%(refname)' refs/heads/jules/integration refs/heads/bench refs/jules); do
    git update-ref -d "$r"
done
# Objects written by a run; the base's pack stays even when git freshened its time.
find .git/objects -type f -newer .git/bench-marker | grep -v -F -f .git/bench-keep | xargs -r rm -f
rm -rf .git/jules .git/logs/refs/jules
git checkout -q -f --detach bench-base
SH
chmod +x "$work/clean.sh"

results=$root/results
rm -rf "$results"
mkdir -p "$results"
weave="git jules weave --no-mail --base bench-base --into jules/integration/bench $root/series.mbox >/dev/null"
am="git checkout -q -f -B bench bench-base && git am -q --empty=drop $root/series.mbox"
(cd "$work/weave" && hyperfine --style basic --runs "$runs" --warmup 1 --prepare "$work/clean.sh $work/weave" \
    --export-json "$results/weave.json" -n weave "$weave" >&2)
(cd "$work/am" && hyperfine --style basic --runs "$runs" --warmup 1 --prepare "$work/clean.sh $work/am" \
    --export-json "$results/am.json" -n am "$am" >&2)

for t in weave am; do "$work/clean.sh" "$work/$t"; done
(cd "$work/weave" && sh -c "$weave")
(cd "$work/am" && sh -c "$am")
got_w=$(git -C "$work/weave" rev-parse "jules/integration/bench^{tree}")
got_a=$(git -C "$work/am" rev-parse "bench^{tree}")
n_w=$(git -C "$work/weave" rev-list --count "bench-base..jules/integration/bench")
n_a=$(git -C "$work/am" rev-list --count "bench-base..bench")
[ "$got_w" = "$want" ] && [ "$got_a" = "$want" ] || { echo "weave-real.sh: trees differ: weave $got_w, am $got_a, tip $want" >&2; exit 1; }
[ "$n_w" = "$n_a" ] || { echo "weave-real.sh: weave wrote $n_w commits, git am $n_a" >&2; exit 1; }
echo "check: both give the tip's tree $want; $n_w commits each" >&2

python3 - "$results" "$runs" "$commits" "$prune" <<'PY'
import json, sys
d, runs, n, prune = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
w = json.load(open(d + "/weave.json"))["results"][0]
a = json.load(open(d + "/am.json"))["results"][0]
print("| work (%s commits of ripgrep, one mbox; %s) | median | mean ± σ |" % (n,
      "history cut back to the base" if prune else "whole clone: the objects exist already"))
print("|---|---:|---:|")
print("| `git jules weave --no-mail` | %.3f s | %.3f ± %.3f s (user %.3f s, system %.3f s) |" % (
    w["median"], w["mean"], w["stddev"], w["user"], w["system"]))
print("| `git am -q --empty=drop` | %.3f s | %.3f ± %.3f s (user %.3f s, system %.3f s) |" % (
    a["median"], a["mean"], a["stddev"], a["user"], a["system"]))
r = w["median"] / a["median"]
print()
print("weave / git am = %.3f (%.1fx faster); target <= 0.2: %s" % (r, 1 / r, "met" if r <= 0.2 else "MISSED"))
PY
