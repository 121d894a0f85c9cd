#!/usr/bin/env bash
# bench/search.sh [RUNS] [WORKDIR] -- `git jules mail search` at 100,000 messages (docs/benchmarks-search.md).
# N=10000 bench/search.sh … runs the same steps on a smaller corpus (for a debug build or a busy machine).
#
#   1. the MCP benchmark's corpus (bench/mcp.sh: 100,000 messages to 25 personas, imported from a seed-000
#      events.jsonl), with each body lengthened by 8 to 40 words drawn from a fixed 2,000-word vocabulary
#      (the corpus of mcp.sh has four words per body, which no search is about); "flaky test" is in 1% of
#      the bodies, the word "quokka" in 0.5%;
#   2. the index built from the whole log: time (the first search) and size, against the log's packs;
#   3. warm queries, p50/p95 over RUNS whole processes: one word (`quokka`), a phrase (`"flaky test"`),
#      a word in every message (`message`), side by side with `git log --grep` over the log's commits
#      (the events' JSON holds the same text) and `git grep` over a tree holding the same subjects and
#      bodies (100 files of 1,000 messages), in the same run;
#   4. 1,000 new messages appended: the incremental update (the library's own timing, `index.millis`).
#
# Targets (issue 30): a query <= 50 ms p95 warm; the update of 1,000 messages <= 1 s; index <= 2x the
# log's packed objects. Needs bash, git, python3. The binary is $GIT_JULES, else target/release/git-jules
# (built with `cargo build --release` if missing). Numbers taken while other builds run are noisy.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-50}
N=${N:-100000}
WORK=${2:-${TMPDIR:-/tmp}/jules-bench/search}
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null LC_ALL=C TZ=UTC
export GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
unset JULES_PERSONA

if [ -z "${GIT_JULES:-}" ]; then
  target=${CARGO_TARGET_DIR:-$here/target}
  [ -x "$target/release/git-jules" ] || (cd "$here" && cargo build --release)
  GIT_JULES=$target/release/git-jules
fi
rm -rf "$WORK"
mkdir -p "$WORK/bin"
# A private copy: a concurrent build in a shared target directory cannot swap it mid-run.
cp "$GIT_JULES" "$WORK/bin/git-jules"
J=$WORK/bin/git-jules
echo "binary: $("$J" --version), git: $(git --version), runs: $RUNS, cores: $(nproc)"

# -------------------------------------------------------------------------------------------------
# 1. The corpus: events.jsonl (N, default 100,000), more.jsonl (1,000 later ones), text/ (the same subjects and bodies).
python3 - "$WORK" "$N" <<'PY'
import json, os, sys
work, N = sys.argv[1], int(sys.argv[2])
class Rng:                                    # xorshift64*, the same numbers everywhere
    def __init__(self, seed): self.s = seed
    def next(self):
        s = self.s
        s ^= (s >> 12) & 0xFFFFFFFFFFFFFFFF; s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF; s ^= s >> 27
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF
rng = Rng(0x9E3779B97F4A7C15)
syll = ["ka", "lo", "mi", "ne", "su", "ta", "ro", "vi", "de", "pa", "gu", "zo", "be", "ri", "fo", "ha"]
vocab = sorted({syll[i % 16] + syll[(i // 16) % 16] + syll[(i // 256) % 16] + ("n" if i % 3 else "") for i in range(2000)})
P = [f"persona-{i:02d}" for i in range(25)]
os.makedirs(f"{work}/text", exist_ok=True)
def body(m):
    words = [vocab[rng.next() % len(vocab)] for _ in range(8 + rng.next() % 33)]
    if m % 100 == 7: words.insert(len(words) // 2, "flaky test")
    if m % 200 == 11: words.insert(1, "quokka")
    return f"body of message {m}: " + " ".join(words)
def write(path, start, n):
    with open(path, "w") as f:
        for m in range(start, start + n):
            frm, to = P[m % 25], P[(m * 7 + 3) % 25]
            if to == frm:
                to = P[(m + 1) % 25]
            ts = f"2026-01-{1 + m // 86400:02d}T{m // 3600 % 24:02d}:{m // 60 % 60:02d}:{m % 60:02d}Z"
            b = body(m)
            f.write(json.dumps({"event_id": f"e{m}", "ts": ts, "event_type": "send", "message_id": m,
                                "actor": frm, "from_persona": frm, "to_persona": to,
                                "subject": f"message {m}", "body": b, "attachments": [], "type": "status",
                                "priority": "urgent" if m % 50 == 0 else "normal"}) + "\n")
            if m < N:
                with open(f"{work}/text/part-{m // 1000:03d}.txt", "a") as t:
                    t.write(f"message {m}\n{b}\n")
write(f"{work}/events.jsonl", 0, N)
write(f"{work}/more.jsonl", N, 1_000)
PY
REPO=$WORK/repo
git init -q "$REPO"
git -C "$REPO" config gc.auto 0
"$J" -C "$REPO" mail import "$WORK/events.jsonl" >/dev/null
git -C "$REPO" repack -adq
# The same text in a tree, for git grep (a commit on its own ref; the log's packs are measured before).
pack_bytes=$(git -C "$REPO" count-objects -v | awk '/^size-pack:/ {print $2 * 1024}')
TEXT_TREE=$(cd "$WORK/text" && GIT_DIR=$REPO/.git GIT_INDEX_FILE=$WORK/text.index git add -A . >/dev/null \
  && GIT_DIR=$REPO/.git GIT_INDEX_FILE=$WORK/text.index git write-tree)

# -------------------------------------------------------------------------------------------------
# 2. The index of the whole log.
"$J" -C "$REPO" mail inbox --persona persona-03 --limit 1 >/dev/null  # the mail view, built once
start=$(date +%s.%N)
build=$("$J" -C "$REPO" --json mail search quokka --limit 1)
end=$(date +%s.%N)
idx_bytes=$(du -sb "$REPO/.git/jules/cache/mail/search" | cut -f1)
python3 - "$build" "$start" "$end" "$idx_bytes" "$pack_bytes" <<'PY'
import json, sys
doc = json.loads(sys.argv[1]); s, e = float(sys.argv[2]), float(sys.argv[3])
idx, pack = int(sys.argv[4]), int(sys.argv[5])
print(f"index build (whole log, {doc['index']['messages']} messages): {doc['index']['millis']} ms in the "
      f"library, {1000 * (e - s):.0f} ms for the first search")
print(f"index size: {idx / 1e6:.1f} MB; log packed objects: {pack / 1e6:.1f} MB; ratio {idx / pack:.2f}x (target <= 2x)")
PY

# -------------------------------------------------------------------------------------------------
# 3. Warm queries, whole processes, in one run.
python3 - "$RUNS" "$J" "$REPO" "$TEXT_TREE" <<'PY'
import subprocess, sys, time
runs, j, repo, tree = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
def bench(name, argv, check=None):
    out = subprocess.run(argv, capture_output=True, text=True)
    if check:
        check(out)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(1000 * (time.perf_counter() - t))
    times.sort()
    p50, p95 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.95))]
    print(f"{name:<44} p50 {p50:8.1f} ms   p95 {p95:8.1f} ms")
    return p95
def found(out):
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip(), "no result"
results = {}
for label, q, grep in [("one word", "quokka", "quokka"), ("phrase", '"flaky test"', "flaky test"),
                       ("a word in every message", "message", "message")]:
    print(f"-- {label}: {q}")
    results[label] = bench("git jules mail search", [j, "-C", repo, "mail", "search", q], found)
    bench("git jules mail search --persona persona-03", [j, "-C", repo, "mail", "search", q, "--persona", "persona-03"])
    bench("git log --grep (the log's commits)", ["git", "-C", repo, "log", "--format=%H", "-F", f"--grep={grep}", "refs/jules/mail"], found)
    bench("git grep (a tree of the same text)", ["git", "-C", repo, "grep", "-c", "-F", grep, tree], found)
worst = max(results["one word"], results["phrase"])
print(f"one word / phrase p95: {worst:.1f} ms (target <= 50 ms)")
PY

# -------------------------------------------------------------------------------------------------
# 4. 1,000 new messages.
"$J" -C "$REPO" mail import "$WORK/more.jsonl" >/dev/null
inc=$("$J" -C "$REPO" --json mail search quokka --limit 1)
python3 - "$inc" <<'PY'
import json, sys
i = json.loads(sys.argv[1])["index"]
assert not i["rebuilt"] and i["added"] == 1000, i
print(f"incremental update of {i['added']} messages: {i['millis']} ms (target <= 1000 ms)")
PY
idx2=$(du -sb "$REPO/.git/jules/cache/mail/search" | cut -f1)
echo "index size after: $((idx2 / 1000)) kB"
