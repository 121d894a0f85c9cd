#!/usr/bin/env bash
# bench/weave-real.sh [--repo ripgrep|git|gitoxide|GIT_DIR] [--runs N] [--commits N] [--keep-history]
#
# `git jules weave` against `git am` on real history: the last 300 commits of a real repository as one
# `git format-patch --stdout` mbox, applied onto HEAD~300, both measured in one run, side by side, on the
# same file system (hyperfine, median). Every run starts from the same object store: the prepare step
# deletes what the previous run wrote (refs, and objects newer than the clone). Afterwards both results are
# checked: the same final tree as the original tip, and the same number of commits (git am --empty=drop
# drops empty commits; weave reports them as skipped).
# By default each working copy is cut back to the base (later refs deleted, their objects pruned), as a
# repository receiving these patches would be; --keep-history keeps the whole history, so the blobs and
# trees the patches produce already exist (git then only freshens them).
#
# --repo: ripgrep (the default: ../shared/corpora/ripgrep.bundle, whose last 300 commits are linear), git
# or gitoxide (the bare mirrors the search tool's `fetch` brings, /work/.mirror/git+git/repo and
# /work/.mirror/GitoxideLabs+gitoxide/repo; JULES_MIRROR overrides /work/.mirror), or any git directory.
# Those histories are merges of topic branches: their last 300 commits are taken along the first parents,
# each as the change it made to its first parent (a merge as its whole topic), rewritten as a linear series
# with the original authors, dates and messages, and that series is what format-patch writes.
#
# Env: GIT_JULES (a binary to use instead of building the release binary), GIT_JULES_BASELINE (another
# binary, say main's, timed in the same run as a third row, after the other two), CARGO_TARGET_DIR, TMPDIR
# (everything goes to ${TMPDIR:-/tmp}/jules-bench-real; the cut-back clones of mirrors are cached there).
# Needs hyperfine.
set -euo pipefail

runs=5
commits=300
prune=1
repo=ripgrep
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift ;;
        --commits) commits=$2; shift ;;
        --keep-history) prune=0 ;;
        --repo) repo=$2; shift ;;
        -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "weave-real.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
command -v hyperfine >/dev/null || { echo "weave-real.sh: hyperfine is needed (apt-get install -y hyperfine)" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
shared=${JULES_SHARED:-$here/../shared}
[ -d "$shared/corpora" ] || shared=/work/shared
mirrors=${JULES_MIRROR:-/work/.mirror}
case "$repo" in
    ripgrep) src=$shared/corpora/ripgrep.bundle; name=ripgrep ;;
    git) src=$mirrors/git+git/repo; name=git ;;
    gitoxide) src=$mirrors/GitoxideLabs+gitoxide/repo; name=gitoxide ;;
    *) src=$repo; name=$(basename "$(dirname "$src")")-$(basename "$src") ;;
esac
[ -e "$src" ] || { echo "weave-real.sh: $src is missing" >&2; exit 2; }
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
[ -z "${GIT_JULES_BASELINE:-}" ] || cp "$GIT_JULES_BASELINE" "$bin/git-jules-baseline"
export PATH=$bin:$PATH
echo "git-jules: $(git jules --version); $(git --version); $(nproc) cores; $(df -T "$root" 2>/dev/null | awk 'NR==2 {print $2}') at $root" >&2

work=$root/work
rm -rf "$work"
mkdir -p "$work"
if [ "$name" = ripgrep ]; then
    for t in weave am; do
        git clone -q "$src" "$work/$t" 2>/dev/null
    done
    tip=$(git -C "$work/am" rev-parse HEAD)
    base=$(git -C "$work/am" rev-parse "HEAD~$commits")
    git -C "$work/am" format-patch -q --stdout "$base..$tip" >"$root/series.mbox"
    want=$(git -C "$work/am" rev-parse "$tip^{tree}")
else
    # A merge-heavy history: the first-parent chain base..tip rewritten as a linear series (same trees,
    # authors, dates and messages; signatures and merge tags dropped) in a scratch repository that borrows
    # the mirror's objects, and that series as the mbox. A mirror lacks the blobs of 4 MiB and more (the
    # gitoxide one: eight test-fixture archives); a tree naming one gets a one-line placeholder blob in its
    # place, and then the base becomes a root commit holding its (mended) tree, so the receiving repository
    # has the base's files but no history.
    tip=$(git --git-dir="$src" rev-parse HEAD)
    base=$(git --git-dir="$src" rev-parse "$tip~$commits")
    cache=$root/cache/$name
    mkdir -p "$cache"
    scratch=$cache/series.git
    [ -d "$scratch" ] || git init -q --bare "$scratch"
    echo "$(cd "$src" && pwd)/objects" >"$scratch/objects/info/alternates"
    read -r base linear want < <(python3 - "$scratch" "$base" "$tip" <<'PY'
import os, subprocess, sys
scratch, base, tip = sys.argv[1:]
def git(*args, data=None, env=None):
    return subprocess.run(["git", "--git-dir", scratch, *args], input=data, check=True, capture_output=True,
                          env=env).stdout
check = subprocess.Popen(["git", "--git-dir", scratch, "cat-file", "--batch-check"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
known = {}
def present(oid):
    if oid not in known:
        check.stdin.write(oid + b"\n"); check.stdin.flush()
        known[oid] = not check.stdout.readline().endswith(b" missing\n")
    return known[oid]
def mend(tree):
    """The tree with every missing blob replaced by a placeholder; the tree itself when none is missing."""
    lines = [l for l in git("ls-tree", "-r", "-z", tree).split(b"\0") if l]
    fixes = []
    for l in lines:
        meta, path = l.split(b"\t", 1)
        mode, kind, oid = meta.split(b" ")
        if kind == b"blob" and not present(oid):
            ph = git("hash-object", "-w", "--stdin", data=b"blob " + oid + b" is not in this mirror\n").strip()
            fixes.append(mode + b" " + ph + b"\t" + path + b"\0")
    if not fixes:
        return tree
    env = dict(os.environ, GIT_INDEX_FILE=scratch + "/mend.index")
    git("read-tree", tree, env=env)
    git("update-index", "-z", "--index-info", data=b"".join(fixes), env=env)
    return git("write-tree", env=env).decode().strip()
def rewrite(c, parent):
    raw = git("cat-file", "commit", c)
    head, _, msg = raw.partition(b"\n\n")
    keep, skipping = [], False
    for line in head.split(b"\n"):
        if line.startswith(b" "):
            if not skipping:
                keep.append(line)
            continue
        key = line.split(b" ", 1)[0]
        skipping = key not in (b"tree", b"author", b"committer", b"encoding")
        if key == b"tree":
            keep.append(b"tree " + mend(line.split(b" ")[1].decode()).encode())
            if parent:
                keep.append(b"parent " + parent.encode())
        elif not skipping:
            keep.append(line)
    return git("hash-object", "-t", "commit", "-w", "--stdin",
               data=b"\n".join(keep) + b"\n\n" + msg).decode().strip()
btree = git("rev-parse", base + "^{tree}").decode().strip()
prev = base if mend(btree) == btree else rewrite(base, None)
new_base = prev
for c in git("rev-list", "--first-parent", "--reverse", base + ".." + tip).decode().split():
    prev = rewrite(c, prev)
print(new_base, prev, git("rev-parse", prev + "^{tree}").decode().strip())
PY
)
    if [ "$base" = "$(git --git-dir="$src" rev-parse "$tip~$commits")" ]; then
        [ "$want" = "$(git --git-dir="$src" rev-parse "$tip^{tree}")" ]
        from=$src
    else
        echo "weave-real.sh: $name's mirror lacks blobs; placeholders stand for them, and the base is a root commit" >&2
        from=$scratch
    fi
    tip=$linear
    git --git-dir="$scratch" format-patch -q --stdout "$base..$linear" >"$root/series.mbox"
    # The receiving repository, once: only the base's history (or the whole history with --keep-history),
    # fetched from the mirror into one pack; each working copy is a local clone of it (hard links).
    store=$cache/$base-$prune.git
    if [ ! -d "$store" ]; then
        rm -rf "$store.tmp"
        git init -q --bare "$store.tmp"
        want_refs="$base:refs/heads/bench-base"
        [ "$prune" = 1 ] || want_refs="$want_refs $tip:refs/heads/bench-tip"
        # shellcheck disable=SC2086
        git --git-dir="$store.tmp" fetch -q --no-tags "file://$(cd "$from" && pwd)" $want_refs
        mv "$store.tmp" "$store"
    fi
    for t in weave am; do
        git clone -q --no-checkout "$store" "$work/$t" 2>/dev/null
        git -C "$work/$t" for-each-ref --format='delete %(refname)' | git -C "$work/$t" update-ref --stdin
    done
fi
for t in weave am; do
    git -C "$work/$t" config user.name "Bench Weaver"
    git -C "$work/$t" config user.email weaver@example.com
done
# Each working copy holds only the history up to the base, as a repository that receives these patches
# would: every other ref goes and the objects only they reach are pruned, so both tools write real objects.
for t in weave am; do
    (
        cd "$work/$t"
        git checkout -q -f --detach "$base"
        git update-ref refs/heads/bench-base "$base"
        if [ "$prune" = 1 ] && [ "$name" = ripgrep ]; then
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
if [ -n "${GIT_JULES_BASELINE:-}" ]; then
    (cd "$work/weave" && hyperfine --style basic --runs "$runs" --warmup 1 --prepare "$work/clean.sh $work/weave" \
        --export-json "$results/baseline.json" -n baseline "${weave/git jules/git-jules-baseline}" >&2)
fi

for t in weave am; do "$work/clean.sh" "$work/$t"; done
(cd "$work/weave" && sh -c "$weave")
(cd "$work/am" && sh -c "$am")
got_w=$(git -C "$work/weave" rev-parse "jules/integration/bench^{tree}")
got_a=$(git -C "$work/am" rev-parse "bench^{tree}")
n_w=$(git -C "$work/weave" rev-list --count "bench-base..jules/integration/bench")
n_a=$(git -C "$work/am" rev-list --count "bench-base..bench")
[ "$got_w" = "$got_a" ] || { echo "weave-real.sh: trees differ: weave $got_w, am $got_a, tip $want" >&2; exit 1; }
[ "$n_w" = "$n_a" ] || { echo "weave-real.sh: weave wrote $n_w commits, git am $n_a" >&2; exit 1; }
if [ "$got_w" = "$want" ]; then
    echo "check: both give the tip's tree $want; $n_w commits each" >&2
else
    # A mail cannot carry a CR at the end of a line: `git am` (without --keep-cr) drops it, and weave reads
    # mails as git am does. gitoxide's history adds two files with CRLF lines.
    echo "check: both give the same tree $got_w (not the tip's $want: the files below have CRLF lines, which mail loses); $n_w commits each" >&2
    GIT_ALTERNATE_OBJECT_DIRECTORIES=${scratch:+$scratch/objects} git -C "$work/am" diff --stat "$got_w" "$want" >&2 2>/dev/null || true
fi

# The floor: one pass writing the objects weave created (every blob, tree and commit reachable from its tip and
# not from the base), each hashed (SHA-1 of header and content) and compressed as git writes them (zlib level
# 1, undeltified), into one file; the contents are read beforehand and are not timed. Best of 5.
git -C "$work/weave" rev-list --objects "bench-base..jules/integration/bench" | cut -d' ' -f1 |
    git -C "$work/weave" cat-file --batch >"$root/created.batch"
python3 - "$root/created.batch" "$root/floor.out" >"$results/floor.txt" <<'PY'
import hashlib, sys, time, zlib
data = open(sys.argv[1], "rb").read()
objs, i = [], 0
while i < len(data):
    nl = data.index(b"\n", i)
    _, kind, size = data[i:nl].split(b" ")
    size = int(size)
    objs.append((kind, data[nl + 1:nl + 1 + size]))
    i = nl + 1 + size + 1
def one_pass(compress):
    t = time.perf_counter()
    with open(sys.argv[2], "wb") as out:
        for kind, body in objs:
            h = hashlib.sha1(b"%s %d\0" % (kind, len(body)))
            h.update(body)
            h.digest()
            if compress:
                out.write(zlib.compress(body, 1))
    return time.perf_counter() - t
hash_only = min(one_pass(False) for _ in range(5))
full = min(one_pass(True) for _ in range(5))
count = {}
for kind, body in objs:
    n, b = count.get(kind, (0, 0))
    count[kind] = (n + 1, b + len(body))
what = ", ".join("%d %ss (%.1f MB)" % (n, k.decode(), b / 1e6) for k, (n, b) in sorted(count.items()))
print("floor: %d objects created: %s; hashing them %.3f s; hashing, compressing (zlib 1) and writing them %.3f s"
      % (len(objs), what, hash_only, full))
PY
rm -f "$root/created.batch" "$root/floor.out"

python3 - "$results" "$runs" "$commits" "$prune" "$name" <<'PY'
import json, sys
d, runs, n, prune, name = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]
w = json.load(open(d + "/weave.json"))["results"][0]
a = json.load(open(d + "/am.json"))["results"][0]
print("| work (%s commits of %s, one mbox; %s) | median | mean ± σ |" % (n, name,
      "history cut back to the base" if prune else "whole clone: the objects exist already"))
print("|---|---:|---:|")
print("| `git jules weave --no-mail` | %.3f s | %.3f ± %.3f s (user %.3f s, system %.3f s) |" % (
    w["median"], w["mean"], w["stddev"], w["user"], w["system"]))
print("| `git am -q --empty=drop` | %.3f s | %.3f ± %.3f s (user %.3f s, system %.3f s) |" % (
    a["median"], a["mean"], a["stddev"], a["user"], a["system"]))
try:
    b = json.load(open(d + "/baseline.json"))["results"][0]
    print("| baseline `git-jules weave --no-mail` | %.3f s | %.3f ± %.3f s (user %.3f s, system %.3f s) |" % (
        b["median"], b["mean"], b["stddev"], b["user"], b["system"]))
    print()
    print("baseline / git am = %.3f" % (b["median"] / a["median"]))
except FileNotFoundError:
    pass
r = w["median"] / a["median"]
print()
print("weave / git am = %.3f (%.1fx faster); target <= 0.1 (issue 45): %s" % (r, 1 / r, "met" if r <= 0.1 else "MISSED"))
print(open(d + "/floor.txt").read().strip())
PY
