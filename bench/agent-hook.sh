#!/usr/bin/env bash
# The edit-time lease guard against the check it stands for, side by side in one run (issue 43: p95 <= 10 ms
# with 2,000 live leases, within 1.2x of `lease check PATH`):
#   guard: `git jules agent hook pre-edit --harness claude` fed Claude Code 2.1.197's Edit payload
#          (tests/it/agent_payloads/) of a file under another persona's lease, which it denies;
#   check: `git jules lease check PATH` on the same file (exit 1: the same conflict found).
# Both are whole processes (start, repository, sealed held-leases file, answer), started alike and alternated
# run by run (below); median and p95 of each, and their ratio. GIT_JULES=PATH measures a prebuilt binary
# (bench/common.sh). Numbers measured while other builds run on the machine are noisy: rerun before quoting.
# Usage: bench/agent-hook.sh [PERSONAS] [LEASES]
source "$(dirname "$0")/common.sh"
PERSONAS=${1:-100}
LEASES=${2:-20}
REPO=$SCRATCH/repo
git init -q "$REPO"
cd "$REPO"
mkdir -p area1/part1
echo hello >area1/part1/leased.txt
git add -A
git commit -q -m base

echo "writing $((PERSONAS * LEASES)) leases..." >&2
for p in $(seq "$PERSONAS"); do
  for l in $(seq "$LEASES"); do
    "$JULES" lease acquire --persona "p$p" --ttl 1w --reason bench "area$p/part$l/" >/dev/null
  done
done
PAYLOAD=$SCRATCH/edit.json
sed "s|/home/agent/project|$REPO|g; s|leased.txt|area1/part1/leased.txt|" \
  "$ROOT/tests/it/agent_payloads/claude-code-2.1.197.pretooluse.edit.json" >"$PAYLOAD"
# Both answer once before the runs (the sealed files are written on the first read).
JULES_PERSONA=bench "$JULES" agent hook pre-edit --harness claude <"$PAYLOAD" | grep -q '"deny"' \
  || { echo "the guard did not deny the leased file" >&2; exit 1; }
JULES_PERSONA=bench "$JULES" lease check area1/part1/leased.txt >/dev/null && { echo "lease check found nothing" >&2; exit 1; }

export JULES_PERSONA=bench
# The two commands alternate run by run (guard, check, guard, check, …), so a change in the machine's load
# during the run falls on both alike; hyperfine runs all of one command before the other. Each run is one
# process started directly (no shell), its stdin the payload (the guard) or /dev/null (the check), stdout
# discarded; wall time by the monotonic clock, CPU (user + system) from the children's rusage.
RUNS=${RUNS:-200}
python3 - "$RUNS" "$JULES" "$PAYLOAD" <<'PY'
import os, resource, subprocess, sys, time
runs, jules, payload = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cmds = [("agent hook pre-edit (claude)", [jules, "agent", "hook", "pre-edit", "--harness", "claude"], payload),
        ("lease check PATH", [jules, "lease", "check", "area1/part1/leased.txt"], os.devnull)]
wall = [[], []]
cpu = [0.0, 0.0]
def once(i):
    name, argv, stdin = cmds[i]
    with open(stdin, "rb") as f:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(argv, stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        dt = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return dt, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
for _ in range(5):  # warm-up, not counted
    once(0); once(1)
for _ in range(runs):
    for i in (0, 1):
        dt, c = once(i)
        wall[i].append(dt)
        cpu[i] += c
def p(ts, q):
    t = sorted(ts)
    return t[min(len(t) - 1, int(q * len(t)))]
ms = lambda s: f"{s * 1000:.2f} ms"
g, c = wall
print(f"runs: {runs} each, alternating")
print(f"agent hook pre-edit: p95 {ms(p(g, .95))}, median {ms(p(g, .5))} (target p95 <= 10 ms)")
print(f"lease check PATH:    p95 {ms(p(c, .95))}, median {ms(p(c, .5))}")
print(f"ratio p95 {p(g, .95) / p(c, .95):.2f}, median {p(g, .5) / p(c, .5):.2f} (target <= 1.2)")
print(f"  CPU per run: guard {ms(cpu[0] / runs)}, check {ms(cpu[1] / runs)}: ratio {cpu[0] / cpu[1]:.2f}")
PY
echo "leases: $((PERSONAS * LEASES)) ($PERSONAS personas x $LEASES)"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
