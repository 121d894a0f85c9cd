#!/usr/bin/env bash
# The cost of sealed cache files (issue 18, item 9): warm `mail inbox --persona X` on 20,000 messages
# (bench/gen_mail.py, 60,000 events: sends, reads and tags) with this build, against a build from before
# the seals (BASE_JULES, e.g. `git archive 1ccda88` built with `cargo build --release`), side by side in one
# run, each on its own copy of the same log. Target: at most 1.10x.
# Usage: BASE_JULES=/path/to/old/git-jules bench/cache_seal.sh [EVENTS]
source "$(dirname "$0")/common.sh"
BASE=${BASE_JULES:?set BASE_JULES to a git-jules built before sealed caches}
N=${1:-60000}
for r in sealed plain; do
  git init -q "$SCRATCH/$r"
  python3 "$ROOT/bench/gen_mail.py" "$N" refs/jules/mail | git -C "$SCRATCH/$r" fast-import --quiet
  git -C "$SCRATCH/$r" commit-graph write --reachable 2>/dev/null
done
"$JULES" -C "$SCRATCH/sealed" mail inbox --persona persona03 > "$SCRATCH/a.txt"
"$BASE" -C "$SCRATCH/plain" mail inbox --persona persona03 > "$SCRATCH/b.txt"
cmp -s "$SCRATCH/a.txt" "$SCRATCH/b.txt" || { echo "the two builds disagree" >&2; exit 1; }
echo "messages in persona03's inbox: $(wc -l < "$SCRATCH/a.txt"), cache: $(du -sh "$SCRATCH/sealed/.git/jules/cache/mail/mail" | cut -f1)" >&2
hyperfine -N --warmup 5 --runs 40 --export-json "$SCRATCH/seal.json" \
  -n "warm mail inbox, before seals" "$BASE -C $SCRATCH/plain mail inbox --persona persona03" \
  -n "warm mail inbox, sealed cache" "$JULES -C $SCRATCH/sealed mail inbox --persona persona03" >&2
before=$(median "$SCRATCH/seal.json" 0); after=$(median "$SCRATCH/seal.json" 1)
echo "warm mail inbox on $((N / 3)) messages: before $(ms "$before"), sealed $(ms "$after"), ratio $(ratio "$after" "$before")x (target <= 1.10x)"
