#!/usr/bin/env bash
# bench/mail.sh [WORKDIR] -- the mail benchmarks of docs/benchmarks-mail.md, in one run.
#
#   1. a repository with 100,000 messages to 25 personas, with read and tag events mixed in
#      (a seed-000 events.jsonl generated here, brought in with `git jules mail import`);
#   2. `mail inbox --unread --persona X`, warm                      (target < 30 ms);
#   3. `mail send`, whole process, against the plain-git append loop
#      (hash-object -w, mktree, commit-tree, update-ref REF NEW OLD)  (target <= 0.5x);
#   4. `git jules sync` of 10,000 new events from a remote             (target < 2 s).
#
# Needs bash, git, python3 and hyperfine (`apt-get install -y hyperfine`). The binary is
# $GIT_JULES, else target/release/git-jules (built with `cargo build --release` if missing).
# WORKDIR (default ${TMPDIR:-/tmp}/jules-bench/mail) is wiped first.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-${TMPDIR:-/tmp}/jules-bench/mail}
RUNS=${RUNS:-20}
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
export PATH="$WORK/bin:$PATH"
echo "binary: $("$J" --version), git: $(git --version), hyperfine: $(hyperfine --version)"

# -------------------------------------------------------------------------------------------------
# 1. The repository.
python3 - "$WORK/events.jsonl" "$WORK/more.jsonl" <<'PY'
import json, sys
class Rng:                                    # xorshift64*, the same numbers everywhere
    def __init__(self, seed): self.s = seed
    def next(self):
        s = self.s
        s ^= s >> 12; s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF; s ^= s >> 27
        self.s = s
        return (s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF
    def below(self, n): return (self.next() >> 11) % n
R = Rng(0x4D41494C)
P = [f"persona-{i:02d}" for i in range(25)]
TYPES = ["status", "task", "question", "report", "alert"]
def ts(n): return f"2026-01-{1 + n // 86400:02d}T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
def write(path, first, count):
    ev = 0
    with open(path, "w") as f:
        for m in range(first, first + count):
            frm = P[R.below(25)]
            to = P[(P.index(frm) + 1 + R.below(24)) % 25]
            rec = {"event_id": f"e{ev}", "ts": ts(m), "event_type": "send", "message_id": m,
                   "actor": frm, "from_persona": frm, "to_persona": to,
                   "subject": f"message {m} about item {R.below(1000)}",
                   "body": "Lorem ipsum dolor sit amet. " * (1 + R.below(8)),
                   "attachments": [], "type": TYPES[R.below(5)],
                   "priority": "urgent" if R.below(20) == 0 else "normal"}
            f.write(json.dumps(rec) + "\n"); ev += 1
            if R.below(2) == 0:
                f.write(json.dumps({"event_id": f"e{ev}", "ts": ts(m), "event_type": "read",
                                    "message_id": m, "actor": to}) + "\n"); ev += 1
            if R.below(5) == 0:
                f.write(json.dumps({"event_id": f"e{ev}", "ts": ts(m), "event_type": "tag_add",
                                    "message_id": m, "actor": to, "tag": f"t{R.below(10)}"}) + "\n"); ev += 1
write(sys.argv[1], 0, 100_000)
write(sys.argv[2], 100_000, 6_000)            # about 10,000 events, for the sync benchmark
PY
echo "events: $(wc -l < "$WORK/events.jsonl") (100,000 messages), later: $(wc -l < "$WORK/more.jsonl")"

git init -q -b main "$WORK/repo"
git -C "$WORK/repo" commit -q --allow-empty -m init
git -C "$WORK/repo" config gc.auto 0
/usr/bin/time -f "import: %e s, %M KB max RSS" "$J" -C "$WORK/repo" mail import "$WORK/events.jsonl"
/usr/bin/time -f "repack: %e s" git -C "$WORK/repo" repack -adq
/usr/bin/time -f "first inbox (cache rebuilt from the log): %e s, %M KB max RSS" \
  "$J" -C "$WORK/repo" mail inbox --unread --persona persona-07 > /dev/null
echo "persona-07: $("$J" -C "$WORK/repo" mail inbox --unread --persona persona-07 | wc -l) unread of \
$("$J" -C "$WORK/repo" mail inbox --all --persona persona-07 | wc -l) received"

# -------------------------------------------------------------------------------------------------
# 2. Warm inbox.
hyperfine -N --warmup 3 --runs "$RUNS" --export-markdown "$WORK/inbox.md" \
  "$J -C $WORK/repo mail inbox --unread --persona persona-07" \
  "$J -C $WORK/repo --json mail inbox --unread --persona persona-07"

# -------------------------------------------------------------------------------------------------
# 3. Append one event: mail send against the plain-git loop, in the same repository.
cat > "$WORK/plain-append.sh" <<'SH'
#!/usr/bin/env bash
# One event the plain-git way: blob, tree, commit, compare-and-swap of the ref.
set -euo pipefail
cd "$1"
ref=refs/jules/plain
old=$(git rev-parse -q --verify "$ref" || true)
blob=$(printf '{"kind":"mail.send","actor":"persona-01","subject":"hello","body":"plain %s"}\n' "$RANDOM$RANDOM" | git hash-object -w --stdin)
tree=$(printf '100644 blob %s\tevent.json\n' "$blob" | git mktree)
if [ -n "$old" ]; then
  new=$(git commit-tree "$tree" -p "$old" -m "event")
  git update-ref "$ref" "$new" "$old"
else
  new=$(git commit-tree "$tree" -m "event")
  git update-ref "$ref" "$new" ""
fi
SH
chmod +x "$WORK/plain-append.sh"
# (The last command: without TZ, gix looks the local time zone up in /usr/share/zoneinfo for the
# committer's time, which costs a few milliseconds more.)
hyperfine -N --warmup 3 --runs "$RUNS" --export-markdown "$WORK/send.md" \
  "$J -C $WORK/repo mail send --from persona-01 --to persona-02 --subject hello --body hi" \
  "$WORK/plain-append.sh $WORK/repo" \
  "env -u TZ $J -C $WORK/repo mail send --from persona-01 --to persona-02 --subject hello --body hi"
N=200
start=$(date +%s%N)
for i in $(seq $N); do "$J" -C "$WORK/repo" mail send --from persona-01 --to persona-02 --subject "loop $i" --body hi > /dev/null; done
jules_ns=$(( $(date +%s%N) - start ))
start=$(date +%s%N)
for i in $(seq $N); do "$WORK/plain-append.sh" "$WORK/repo"; done
plain_ns=$(( $(date +%s%N) - start ))
python3 -c "j,p=$jules_ns/1e6/$N,$plain_ns/1e6/$N; print(f'loop of $N: mail send {j:.2f} ms/event, plain git {p:.2f} ms/event, ratio {j/p:.2f}')"

# -------------------------------------------------------------------------------------------------
# 4. Sync 10,000 new events from a remote.
git init -q --bare -b main "$WORK/remote.git"
git -C "$WORK/repo" remote add origin "$WORK/remote.git"
"$J" -C "$WORK/repo" init > /dev/null 2>&1
git -C "$WORK/repo" push -q origin HEAD:refs/heads/main
"$J" -C "$WORK/repo" sync > /dev/null
git clone -q --no-local "$WORK/remote.git" "$WORK/reader0"
git -C "$WORK/reader0" config gc.auto 0
"$J" -C "$WORK/reader0" init > /dev/null 2>&1
/usr/bin/time -f "first sync of the reader (whole log): %e s" "$J" -C "$WORK/reader0" sync > /dev/null
"$J" -C "$WORK/reader0" mail inbox --unread --persona persona-07 > /dev/null
"$J" -C "$WORK/repo" mail import "$WORK/more.jsonl"
git -C "$WORK/repo" repack -dq
"$J" -C "$WORK/repo" sync > /dev/null
echo "new events on the remote: $(git -C "$WORK/remote.git" rev-list --count refs/jules/mail ^"$(git -C "$WORK/reader0" rev-parse refs/jules/mail)")"
hyperfine -N --runs 10 --export-markdown "$WORK/sync.md" \
  --prepare "bash -c 'rm -rf $WORK/reader && cp -a $WORK/reader0 $WORK/reader'" \
  "$J -C $WORK/reader sync" \
  "bash -c '$J -C $WORK/reader sync > /dev/null && $J -C $WORK/reader mail inbox --unread --persona persona-07 > /dev/null'"
cat "$WORK/inbox.md" "$WORK/send.md" "$WORK/sync.md"
