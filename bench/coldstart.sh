#!/usr/bin/env bash
# Cold start in a fresh clone (issue 16), in one run:
#   1. a bare "origin" with an N-event mail log (bench/gen_mail.py; default 1,000,000) and an N/10-event state
#      log (bench/gen_events.py), packed, with a commit-graph; `git jules log checkpoint` on both (timed once);
#   2. two fresh clones that fetched everything: one with the checkpoint notes, one without (today's path);
#   3. first `mail inbox --persona persona03` and first `state show` with no cache (`.git/jules` removed
#      before every run): from the checkpoint, against the full replay of the clone without checkpoints;
#   4. a full cold replay (`git jules --full log stats mail`, no cache and no checkpoint) against
#      `git log --format=%B` on the same log: wall time, rate and peak RSS (/usr/bin/time).
# Usage: bench/coldstart.sh [N]
source "$(dirname "$0")/common.sh"
N=${1:-1000000}
S=$((N / 10))
ORIGIN=$SCRATCH/origin.git
git init -q --bare "$ORIGIN"
echo "generating $N mail events and $S state events..." >&2
python3 "$ROOT/bench/gen_mail.py" "$N" refs/jules/mail | git -C "$ORIGIN" fast-import --quiet
python3 "$ROOT/bench/gen_events.py" "$S" refs/jules/state | git -C "$ORIGIN" fast-import --quiet
git -C "$ORIGIN" commit-graph write --reachable 2>/dev/null

start=$(date +%s.%N)
"$JULES" -C "$ORIGIN" log checkpoint mail >&2
mid=$(date +%s.%N)
"$JULES" -C "$ORIGIN" log checkpoint state >&2
end=$(date +%s.%N)

clone() { # DIR REFSPEC...
  git clone -q "$ORIGIN" "$1"
  git -C "$1" fetch -q origin "${@:2}"
  git -C "$1" commit-graph write --reachable 2>/dev/null
}
clone "$SCRATCH/fresh" '+refs/jules/*:refs/remotes/origin/jules/*' '+refs/notes/jules/*:refs/remotes/origin/notes/jules/*'
clone "$SCRATCH/plain" '+refs/jules/*:refs/remotes/origin/jules/*'
F=$SCRATCH/fresh P=$SCRATCH/plain

hyperfine -N --warmup 1 --runs 3 --export-json "$SCRATCH/first.json" \
  --prepare "rm -rf $F/.git/jules $P/.git/jules" \
  -n "first mail inbox, checkpoint" "$JULES -C $F mail inbox --persona persona03" \
  -n "first mail inbox, no checkpoint" "$JULES -C $P mail inbox --persona persona03" \
  -n "first state show, checkpoint" "$JULES -C $F state show" \
  -n "first state show, no checkpoint" "$JULES -C $P state show" >&2
inbox_cp=$(median "$SCRATCH/first.json" 0); inbox_full=$(median "$SCRATCH/first.json" 1)
state_cp=$(median "$SCRATCH/first.json" 2); state_full=$(median "$SCRATCH/first.json" 3)

hyperfine -N --warmup 0 --runs 2 --export-json "$SCRATCH/replay.json" \
  -n "full cold replay (log stats --full)" "$JULES -C $P --full log stats mail" \
  -n "git log --format=%B" "git -C $P log --format=%B refs/remotes/origin/jules/mail" >&2
replay=$(median "$SCRATCH/replay.json" 0); gitlog=$(median "$SCRATCH/replay.json" 1)
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }
rss_replay=$(rss "$JULES" -C "$P" --full log stats mail)
rss_gitlog=$(rss git -C "$P" log --format=%B refs/remotes/origin/jules/mail)
rss_inbox_full=$(rm -rf "$P/.git/jules"; rss "$JULES" -C "$P" mail inbox --persona persona03)

echo "checkpoint writes: mail $(python3 -c "print(f'{$mid-$start:.1f} s')"), state $(python3 -c "print(f'{$end-$mid:.1f} s')")"
echo "first mail inbox in a fresh clone: checkpoint $(ms "$inbox_cp"), no checkpoint $(ms "$inbox_full"), $(ratio "$inbox_full" "$inbox_cp")x faster (target < 300 ms and >= 10x)"
echo "first state show in a fresh clone: checkpoint $(ms "$state_cp"), no checkpoint $(ms "$state_full"), $(ratio "$state_full" "$state_cp")x faster (target < 300 ms and >= 10x)"
echo "full cold replay of $N events: $(ms "$replay") ($(python3 -c "print(f'{$N/$replay:,.0f}')") events/s, target >= 200,000), git log --format=%B $(ms "$gitlog"), ratio $(ratio "$replay" "$gitlog")x (target <= 1.0x)"
echo "peak RSS: full replay $((rss_replay / 1024)) MiB, git log --format=%B $((rss_gitlog / 1024)) MiB, ratio $(ratio "$rss_replay" "$rss_gitlog")x (target <= 1.0x); first inbox with no checkpoint (fold into the mail view) $((rss_inbox_full / 1024)) MiB"
