#!/usr/bin/env bash
# bench/verify.sh [--with-branchless] [--runs N]
#
# `git jules verify` against its peers on the shared fixture (../shared/bench/make_fixture.sh: a 30-commit
# series on a ~3000-file repository; check-pass.sh passes everywhere in ~0.23 s, check.sh fails at commit 17).
# Everything is measured in one run, side by side, because the machine drifts between sessions (the cold and
# stop rows in turns with their rebase, median of N each):
#   1. cold  `git jules verify --jobs 2 --cmd ./check-pass.sh`   vs  `git rebase -x ./check-pass.sh main`
#   2. stop  `git jules verify --jobs 2 --cmd ./check.sh`        vs  `git rebase -x ./check.sh main`
#   3. warm  `git jules verify --jobs 2 --cmd ./check-pass.sh` (every result cached)
#   4. warm, 1,000 commits: `git jules verify --base main --cmd 'test -f README.md' long`, every result
#      cached, where `long` is 1,000 one-file commits on main (made here by fast-import, ids fixed), beside
#      its floor in plain git: `git log` of the same 1,000 commits and `git cat-file --batch` of their notes
#      (median of 4N runs, as these are quick).
#   5. with --with-branchless: git-branchless `git test run --jobs 2 --strategy worktree`, cold and warm
#      (installs it with `cargo install --locked git-branchless` if missing: about 15 minutes).
# "cold" deletes refs/notes/jules/verify before each run; rebase runs on its own copy of the fixture.
#
# Env: FIXTURE (default ${TMPDIR:-/tmp}/jules-bench/fixture, built when missing), GIT_JULES (a binary to use
# instead of building the release binary), CARGO_TARGET_DIR (honoured by the build).
# Uses hyperfine when installed (apt-get install -y hyperfine), else /usr/bin/time, median of N runs.
set -euo pipefail

runs=5
branchless=0
while [ $# -gt 0 ]; do
    case "$1" in
        --with-branchless) branchless=1 ;;
        --runs) runs=$2; shift ;;
        -h | --help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "verify.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

here=$(cd "$(dirname "$0")/.." && pwd)
shared=${JULES_SHARED:-$here/../shared}
[ -d "$shared/bench" ] || shared=/work/shared
root=${TMPDIR:-/tmp}/jules-bench
fixture=${FIXTURE:-$root/fixture}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC

# The binary: a private copy, so a concurrent build into a shared target dir cannot swap it mid-run.
bin=$root/bin
mkdir -p "$bin"
if [ -n "${GIT_JULES:-}" ]; then
    cp "$GIT_JULES" "$bin/git-jules"
else
    (cd "$here" && cargo build --release --quiet)
    cp "${CARGO_TARGET_DIR:-$here/target}/release/git-jules" "$bin/git-jules"
fi
export PATH=$bin:$PATH
echo "git-jules: $(git jules --version) ($(command -v git-jules)); $(git --version); $(nproc) cores"

if [ ! -d "$fixture/.git" ]; then
    mkdir -p "$(dirname "$fixture")"
    bash "$shared/bench/make_fixture.sh" "$fixture"
fi
tip=$(git -C "$fixture" rev-parse series)

# Working copies: one for git-jules, one for rebase (rebase rewrites HEAD and the working tree).
jules=$root/work-jules
rebase=$root/work-rebase
for d in "$jules" "$rebase"; do
    rm -rf "$d"
    cp -a "$fixture" "$d"
done
verify="git jules verify --jobs 2 --base main"
cold="git -C $jules update-ref -d refs/notes/jules/verify 2>/dev/null || true"
reset_rebase="git -C $rebase rebase --abort >/dev/null 2>&1 || true; git -C $rebase checkout -q -f series && git -C $rebase reset -q --hard $tip"

results=$root/results
rm -rf "$results"
mkdir -p "$results"

# measure NAME PREPARE COMMAND DIR [warmup]: median wall time in seconds into $results/NAME. COMMAND must
# exit 0 (a run that fails early would look fast): commands expected to fail say so themselves.
measure() {
    local name=$1 prepare=$2 cmd=$3 dir=$4 warmup=${5:-0}
    if command -v hyperfine >/dev/null; then
        (cd "$dir" && hyperfine --style basic --runs "$runs" --warmup "$warmup" \
            ${prepare:+--prepare "$prepare"} --export-json "$results/$name.json" -n "$name" "$cmd" >&2)
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' \
            "$results/$name.json" >"$results/$name"
    else
        local i t
        for i in $(seq "$warmup"); do (cd "$dir" && sh -c "$cmd" >/dev/null 2>&1); done
        for i in $(seq "$runs"); do
            if [ -n "$prepare" ]; then sh -c "$prepare"; fi
            t=$( { /usr/bin/time -f %e sh -c "cd $dir && $cmd" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
            case "$t" in
                *[!0-9.]* | "") echo "verify.sh: $name failed: $t" >&2; exit 1 ;;
            esac
            echo "$t"
        done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }' >"$results/$name"
        echo "$name: median $(cat "$results/$name") s of $runs" >&2
    fi
}

# measure_pair NAME_A PREPARE_A COMMAND_A DIR_A NAME_B PREPARE_B COMMAND_B DIR_B: the two commands run in turns
# (A, B, A, B, ...), N times each after one warm-up of each, and each one's median goes to $results/NAME. A cold
# row is a ratio of two medians taken seconds apart: in turns, a minute of a drifting machine weighs on both
# alike, where two blocks of N runs each would each see a different minute.
measure_pair() {
    python3 - "$runs" "$results" "$@" <<'PAIR'
import statistics, subprocess, sys, time
runs, results = int(sys.argv[1]), sys.argv[2]
pairs = [sys.argv[3:7], sys.argv[7:11]]
times = {name: [] for name, *_ in pairs}
for i in range(runs + 1):
    for name, prepare, cmd, cwd in pairs:
        if prepare:
            subprocess.run(prepare, shell=True, check=True)
        t = time.perf_counter()
        r = subprocess.run(cmd, shell=True, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - t
        if r.returncode != 0:
            sys.exit("verify.sh: %s failed (exit %d): %s" % (name, r.returncode, cmd))
        if i > 0:  # the first turn warms the page cache for both
            times[name].append(elapsed)
for name, ts in times.items():
    open("%s/%s" % (results, name), "w").write("%f\n" % statistics.median(ts))
    print("%s: median %.3f s of %d, in turns (%s)" % (
        name, statistics.median(ts), len(ts), " ".join("%.3f" % t for t in ts)), file=sys.stderr)
PAIR
}

measure_pair jules-cold "$cold" "$verify --cmd ./check-pass.sh" "$jules" \
    rebase-pass "$reset_rebase" "git rebase -x ./check-pass.sh main" "$rebase"
# verify exits 1 when a commit fails; rebase stops with a non-zero exit.
measure_pair jules-stop17 "$cold" "$verify --cmd ./check.sh; test \$? = 1" "$jules" \
    rebase-stop17 "$reset_rebase" "! git rebase -x ./check.sh main" "$rebase"
git -C "$jules" update-ref -d refs/notes/jules/verify 2>/dev/null || true
measure jules-warm "" "$verify --cmd ./check-pass.sh" "$jules" 1

# The 1,000-commit range: `long` on main, commit k adds long/kkkk.txt (fast-import: the same ids on every run).
long_commits() {
    python3 - 1000 <<'LONG' | git -C "$jules" fast-import --quiet
import sys
n, t0, out = int(sys.argv[1]), 1800000000, sys.stdout
out.write("reset refs/heads/long\nfrom refs/heads/main\n\n")
for k in range(1, n + 1):
    msg = "long %04d: add long/%04d.txt\n" % (k, k)
    body = "line %d of the long series\n" % k
    out.write("commit refs/heads/long\ncommitter Jules Dev <jules@example.com> %d +0000\n" % (t0 + 60 * k))
    out.write("data %d\n%s" % (len(msg), msg))
    out.write("M 100644 inline long/%04d.txt\ndata %d\n%s\n" % (k, len(body), body))
LONG
}
long_commits
long_cmd="git jules verify --base main --cmd 'test -f README.md' long"
# Fill the cache once (1,000 checkouts, ~30 s), then check that every commit is cached.
(cd "$jules" && git jules verify --jobs 2 --base main --cmd 'test -f README.md' long >/dev/null 2>&1)
n_cached=$(cd "$jules" && git jules --json verify --base main --cmd 'test -f README.md' long |
    python3 -c 'import json,sys; r = json.load(sys.stdin); print(r["cached"] if r["ran"] == 0 else -1)')
[ "$n_cached" = 1000 ] || { echo "verify.sh: the long range is not all cached ($n_cached)" >&2; exit 1; }
runs_saved=$runs
runs=$((runs * 4))
measure jules-warm1000 "" "$long_cmd >/dev/null 2>&1" "$jules" 2
measure git-read1000 "" "git log --format='%H %T %s' main..long >/dev/null &&
    git notes --ref=jules/verify list | git cat-file --batch >/dev/null" "$jules" 2
runs=$runs_saved

# Sanity: the stop case names commit 17, and the warm case ran nothing.
(cd "$jules" && git jules --json verify --jobs 2 --base main --cmd ./check.sh --force >"$results/stop17.json" || true)
python3 - "$results/stop17.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["first_failure"] == 17, r["first_failure"]
print("check: verify --cmd ./check.sh names commit %d of %d" % (r["first_failure"], len(r["commits"])), file=sys.stderr)
PY

if [ "$branchless" = 1 ]; then
    if ! command -v git-branchless >/dev/null; then
        echo "installing git-branchless (cargo install --locked git-branchless, ~15 min)" >&2
        cargo install --locked git-branchless >&2
    fi
    bl=$root/work-branchless
    rm -rf "$bl"
    cp -a "$fixture" "$bl"
    (cd "$bl" && git branchless init --main-branch main >/dev/null 2>&1)
    bl_cmd="git test run --exec ./check-pass.sh --jobs 2 --strategy worktree main..series"
    measure branchless-cold "cd $bl && git test clean main..series >/dev/null 2>&1 || true" "$bl_cmd" "$bl"
    measure branchless-warm "" "$bl_cmd" "$bl" 1
fi

python3 - "$results" "$branchless" <<'PY'
import os, sys
d, bl = sys.argv[1], sys.argv[2] == "1"
t = {n: float(open(os.path.join(d, n)).read()) for n in os.listdir(d) if "." not in n}
def row(label, name, peer=None):
    s = "| %-52s | %8.3f s |" % (label, t[name])
    if peer:
        s += " %5.2fx %s" % (t[name] / t[peer], "of " + peer)
    print(s)
print("| work | median |")
print("|---|---|")
row("git jules verify --jobs 2, 30 commits, cold", "jules-cold", "rebase-pass")
row("git rebase -x ./check-pass.sh main", "rebase-pass")
row("git jules verify --jobs 2, stops at 17, cold", "jules-stop17", "rebase-stop17")
row("git rebase -x ./check.sh main (stops at 17)", "rebase-stop17")
row("git jules verify --jobs 2, 30 commits, warm", "jules-warm")
row("git jules verify, 1,000 commits, warm", "jules-warm1000", "git-read1000")
row("floor: git log + cat-file of the notes, 1,000", "git-read1000")
if bl:
    row("git-branchless test run --jobs 2 --strategy worktree, cold", "branchless-cold")
    row("git-branchless test run, warm", "branchless-warm")
    print("cold: git-jules is %.1fx faster than git-branchless; warm: %.1fx" % (
        t["branchless-cold"] / t["jules-cold"], t["branchless-warm"] / t["jules-warm"]))
ok_cold = t["jules-cold"] <= 0.5 * t["rebase-pass"]
ok_warm = t["jules-warm"] < 0.050
ok_warm1000 = t["jules-warm1000"] < 0.050
print("targets: cold <= 0.5x rebase: %s (%.3fx); warm < 50 ms: %s (%.1f ms); warm 1,000 < 50 ms: %s (%.1f ms)" % (
    "met" if ok_cold else "MISSED", t["jules-cold"] / t["rebase-pass"],
    "met" if ok_warm else "MISSED", t["jules-warm"] * 1000,
    "met" if ok_warm1000 else "MISSED", t["jules-warm1000"] * 1000))
PY
