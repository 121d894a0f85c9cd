#!/usr/bin/env bash
# bench/weave.sh [--runs N]
#
# `git jules weave` against git's own ways of applying patches, on the shared fixture
# (../shared/bench/make_fixture.sh) and its 300 small format-patch files (../shared/bench/make_patches.sh),
# all measured in one run, side by side, on the same file system:
#   1. weave the 300 patches onto main      `git jules weave --no-mail --into … PATCHES/*.patch`
#   2. the same with git am                 `git checkout -B … main && git am -q PATCHES/*.patch`
#   3. the same with a plumbing loop        `git apply --cached` + `write-tree` + `commit-tree` per patch
#   4. 23 persona branches (made here: 20 touch their own files, 3 collide with one of the first 20)
#      `git jules weave --branches 'jules/*'`, mails included
# Every run starts from the same object store: the prepare step deletes what the previous run wrote (refs,
# loose objects and packs newer than the copy), so no tool profits from objects left by a previous run.
# Afterwards each tool's result is checked against the expected tree (OUTDIR.tree of make_patches.sh).
#
# Env: GIT_JULES (a binary to use instead of building the release binary), CARGO_TARGET_DIR (honoured by
# the build), TMPDIR (where everything goes: ${TMPDIR:-/tmp}/jules-bench). Needs hyperfine.
set -euo pipefail

runs=5
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs=$2; shift ;;
        -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "weave.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
command -v hyperfine >/dev/null || { echo "weave.sh: hyperfine is needed (apt-get install -y hyperfine)" >&2; exit 2; }

here=$(cd "$(dirname "$0")/.." && pwd)
shared=${JULES_SHARED:-$here/../shared}
[ -d "$shared/bench" ] || shared=/work/shared
root=${TMPDIR:-/tmp}/jules-bench
fixture=$root/fixture
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC

# The binary: a private copy, so a concurrent build into a shared target dir cannot swap it mid-run.
bin=$root/bin-weave
mkdir -p "$bin"
if [ -n "${GIT_JULES:-}" ]; then
    cp "$GIT_JULES" "$bin/git-jules"
else
    (cd "$here" && cargo build --release --quiet)
    cp "${CARGO_TARGET_DIR:-$here/target}/release/git-jules" "$bin/git-jules"
fi
export PATH=$bin:$PATH
echo "git-jules: $(git jules --version) ($(command -v git-jules)); $(git --version); $(nproc) cores; $(df -T "$root" 2>/dev/null | awk 'NR==2 {print $2}') at $root" >&2

if [ ! -d "$fixture/.git" ]; then
    mkdir -p "$root"
    bash "$shared/bench/make_fixture.sh" "$fixture"
fi
patches=$root/patches
if [ ! -f "$patches.tree" ]; then
    rm -rf "$patches"
    bash "$shared/bench/make_patches.sh" "$fixture" "$patches" >&2
fi
expected=$(cat "$patches.tree")

# One working copy per tool; the marker separates the fixture's objects from what a run writes.
work=$root/weave-work
rm -rf "$work"
mkdir -p "$work"
for t in jules am apply personas; do
    cp -a "$fixture" "$work/$t"
    git -C "$work/$t" checkout -q -f main
    git -C "$work/$t" config user.name "Bench Weaver"
    git -C "$work/$t" config user.email weaver@example.com
    touch "$work/$t/.git/bench-marker"
done
sleep 1 # objects written later must be strictly newer than the marker

# clean DIR: drop what the previous run wrote (objects newer than the marker, bench refs, mail, caches).
cat >"$work/clean.sh" <<'SH'
#!/bin/sh
d=$1
cd "$d" || exit 1
git am --abort >/dev/null 2>&1
for r in $(git for-each-ref --format='%(refname)' refs/heads/jules/integration refs/heads/bench refs/jules); do
    git update-ref -d "$r"
done
find .git/objects -type f -newer .git/bench-marker -delete
rm -rf .git/jules .git/logs/refs/jules .git/logs/refs/heads/jules/integration .git/bench-index
git checkout -q -f main
SH
chmod +x "$work/clean.sh"

# The plumbing peer: what a careful script does without git am.
cat >"$work/apply-loop.sh" <<'SH'
#!/bin/sh
set -e
export GIT_INDEX_FILE=.git/bench-index
git read-tree main
parent=$(git rev-parse main)
for p in "$@"; do
    git apply --cached "$p"
    tree=$(git write-tree)
    parent=$(git commit-tree "$tree" -p "$parent" -m "$(basename "$p")")
done
git update-ref refs/heads/bench "$parent"
SH
chmod +x "$work/apply-loop.sh"

# 23 persona branches from main, one commit each, made with plumbing (no checkout).
(
    cd "$work/personas"
    files=$(git ls-files -- '*.rs' '*.py' '*.md' | awk 'NR % 37 == 0' | head -40)
    set -- $files
    export GIT_INDEX_FILE=.git/persona-index
    main=$(git rev-parse main)
    for i in $(seq 1 23); do
        p=$(printf 'p%02d' "$i")
        git read-tree main
        if [ "$i" -le 20 ]; then
            targets="$(eval echo \${$((2 * i - 1))}) $(eval echo \${$((2 * i))})"
        else
            # Personas 21-23 change the same line as personas 1-3: a conflict each.
            targets=$(eval echo \${$((2 * (i - 20) - 1))})
        fi
        for f in $targets; do
            blob=$(git show "main:$f" | sed "3s/\$/ edited by $p/" | git hash-object -w --stdin)
            git update-index --cacheinfo "100644,$blob,$f"
        done
        tree=$(git write-tree)
        c=$(GIT_AUTHOR_NAME=$p GIT_AUTHOR_EMAIL=$p@jules.invalid git commit-tree "$tree" -p "$main" -m "$p: sprint work")
        git update-ref "refs/heads/jules/$p/sprint" "$c"
    done
    rm -f "$GIT_INDEX_FILE"
    touch .git/bench-marker
)
sleep 1

results=$root/weave-results
rm -rf "$results"
mkdir -p "$results"
into=jules/integration/bench
weave="git jules weave --no-mail --into $into $patches/*.patch"
am="git checkout -q -f -B bench main && git am -q $patches/*.patch"
loop="$work/apply-loop.sh $patches/*.patch"
personas="git jules weave --into jules/integration/sprint --branches 'jules/*'; test \$? = 1"

hf() { # NAME DIR PREPARE COMMAND
    (cd "$2" && hyperfine --style basic --runs "$runs" --warmup 1 --prepare "$3" \
        --export-json "$results/$1.json" -n "$1" "$4" >&2)
}
hf weave-300 "$work/jules" "$work/clean.sh $work/jules" "$weave"
hf am-300 "$work/am" "$work/clean.sh $work/am" "$am"
hf apply-loop-300 "$work/apply" "$work/clean.sh $work/apply" "$loop"
hf weave-23-personas "$work/personas" "$work/clean.sh $work/personas" "$personas"

# The results, checked: each tool's tree after one more run.
for t in jules am apply personas; do "$work/clean.sh" "$work/$t"; done
(cd "$work/jules" && sh -c "$weave" >/dev/null 2>&1)
(cd "$work/am" && sh -c "$am")
(cd "$work/apply" && sh -c "$loop")
(cd "$work/personas" && git jules --json weave --into jules/integration/sprint --branches 'jules/*' >"$results/personas.json" || true)
got_j=$(git -C "$work/jules" rev-parse "$into^{tree}")
got_a=$(git -C "$work/am" rev-parse "bench^{tree}")
got_l=$(git -C "$work/apply" rev-parse "bench^{tree}")
n_j=$(git -C "$work/jules" rev-list --count "main..$into")
for pair in "weave:$got_j" "git am:$got_a" "apply loop:$got_l"; do
    if [ "${pair#*:}" != "$expected" ]; then
        echo "weave.sh: ${pair%%:*} produced tree ${pair#*:}, expected $expected" >&2
        exit 1
    fi
done
echo "check: all three produce the expected tree $expected; weave wrote $n_j commits" >&2

python3 - "$results" "$runs" <<'PY'
import json, os, sys
d, runs = sys.argv[1], sys.argv[2]
t = {}
for f in os.listdir(d):
    if f.endswith(".json") and f != "personas.json":
        r = json.load(open(os.path.join(d, f)))["results"][0]
        t[f[:-5]] = r
p = json.load(open(os.path.join(d, "personas.json")))
print("| work | median | mean ± σ | vs weave |")
print("|---|---:|---:|---:|")
def row(label, name, base="weave-300"):
    r = t[name]
    print("| %s | %.3f s | %.3f ± %.3f s | %s |" % (label, r["median"], r["mean"], r["stddev"],
          "–" if name == base else "%.1fx slower" % (r["median"] / t[base]["median"])))
row("`git jules weave` 300 patches", "weave-300")
row("`git am` 300 patches", "am-300")
row("`git apply --cached` + `write-tree` + `commit-tree` loop, 300 patches", "apply-loop-300")
row("`git jules weave --branches 'jules/*'`, 23 persona branches (3 conflicts, mailed)", "weave-23-personas", "weave-23-personas")
print()
print("23 personas: %d applied, %d conflicted; %s runs each, median" % (len(p["applied"]), len(p["conflicted"]), runs))
speedup = t["am-300"]["median"] / t["weave-300"]["median"]
ok_am = speedup >= 10
ok_p = t["weave-23-personas"]["median"] < 1.0
print("targets: >= 10x faster than git am: %s (%.1fx); 23 personas under 1 s: %s (%.3f s)" % (
    "met" if ok_am else "MISSED", speedup, "met" if ok_p else "MISSED", t["weave-23-personas"]["median"]))
assert len(p["applied"]) == 20 and len(p["conflicted"]) == 3, (len(p["applied"]), len(p["conflicted"]))
PY
