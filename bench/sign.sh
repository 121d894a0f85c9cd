#!/usr/bin/env bash
# Signed events (issue 28), side by side in one run:
#   send:   `git jules mail send` through git, signed (JULES_SIGNING_KEY) vs unsigned  (target <= 1.1x)
#   verify: cold full verification of M signed events (`log fsck` under jules.requireSigned, the signature
#           cache removed before each run) beside the same fsck with nothing to verify, and beside the raw
#           ed25519 verification rate of this machine (`openssl speed ed25519`, same cores, same run);
#           target: at least half the raw rate per signature
#   warm:   `mail inbox` with a trust file (every message's state from the cache) vs without (target <= 1.05x)
# Numbers measured while other builds run on the machine are noisy: say so where they are quoted.
# Usage: bench/sign.sh [N sends] [M events]
source "$(dirname "$0")/common.sh"
N=${1:-50}
M=${2:-100000}
REPO=$SCRATCH/repo
git init -q "$REPO"
cd "$REPO"
git commit -q --allow-empty -m init
KEY=$SCRATCH/keys/bench
"$JULES" keys new bench --out "$KEY" >/dev/null
line=$(cut -d' ' -f1,2 "$KEY.pub")
mkdir -p .jules
echo "bench $line" > .jules/allowed_signers
echo "curator $line" >> .jules/allowed_signers

cat > "$SCRATCH/send-unsigned.sh" <<SH
#!/usr/bin/env bash
set -e
for i in \$(seq $N); do
  git jules mail send --from bench --to curator --subject "bench \$i" --body "message \$i" >/dev/null
done
SH
cat > "$SCRATCH/send-signed.sh" <<SH
#!/usr/bin/env bash
set -e
export JULES_SIGNING_KEY=$KEY
for i in \$(seq $N); do
  git jules mail send --from bench --to curator --subject "bench \$i" --body "message \$i" >/dev/null
done
SH
chmod +x "$SCRATCH"/*.sh
hyperfine -N --warmup 1 --runs 5 --export-json "$SCRATCH/send.json" \
  -n "mail send unsigned x$N" "$SCRATCH/send-unsigned.sh" \
  -n "mail send signed x$N" "$SCRATCH/send-signed.sh" >&2
unsigned=$(median "$SCRATCH/send.json" 0); signed=$(median "$SCRATCH/send.json" 1)
echo "mail send through git, per message: unsigned $(ms "$(python3 -c "print($unsigned/$N)")"), signed $(ms "$(python3 -c "print($signed/$N)")"), ratio $(ratio "$signed" "$unsigned")x (target <= 1.1x)"

# M signed events in one batch (each signed on its own), then the trust file committed.
JULES_SIGNING_KEY=$KEY "$JULES" log append big --kind bench.sign --actor bench --data '{"n":1}' --repeat "$M" >/dev/null
git add .jules && git commit -q -m trust
cat > "$SCRATCH/fsck-cold.sh" <<SH
#!/usr/bin/env bash
rm -rf "$REPO/.git/jules/signatures"
"$JULES" -C "$REPO" log fsck big >/dev/null
SH
chmod +x "$SCRATCH"/*.sh
# Without requireSigned fsck verifies nothing; with it, every event (the cache removed before each run).
git config jules.requireSigned false
hyperfine -N --warmup 1 --runs 3 --export-json "$SCRATCH/plain.json" \
  -n "log fsck, $M events, nothing verified" "$SCRATCH/fsck-cold.sh" >&2
git config jules.requireSigned true
hyperfine -N --warmup 1 --runs 3 --export-json "$SCRATCH/verify.json" \
  -n "log fsck, $M signed events verified cold" "$SCRATCH/fsck-cold.sh" >&2
plain=$(median "$SCRATCH/plain.json" 0); cold=$(median "$SCRATCH/verify.json" 0)
raw=$(openssl speed -seconds 3 ed25519 2>/dev/null | awk '/Ed25519\)/ {print $NF}' | tail -1)
ours=$(python3 -c "print($M/($cold-$plain))")
echo "cold verification of $M signed events: fsck $(ms "$plain") unverified, $(ms "$cold") verified; the verification alone $(python3 -c "print(f'{$ours:.0f}')")/s; raw ed25519 verify (openssl speed, this machine, this run): ${raw}/s; ratio $(python3 -c "print(f'{$ours/float(\"$raw\"):.2f}')")x of raw (target >= 0.5x)"

# Warm inbox: the same inbox without trust roots (jules.trust.ref names nothing) and with them (every
# message's state from the warm caches). The binary is run directly (no shell around it), in two alternating
# rounds of each (on a shared machine the load drifts between runs); the lower median of each counts, and the
# CPU time (user + system) is reported beside the wall-clock ratio.
git config jules.requireSigned false
WARM_RUNS=${WARM_RUNS:-60}
for round in 1 2; do
  git config jules.trust.ref refs/heads/none
  hyperfine -N --warmup 5 --runs "$WARM_RUNS" --export-json "$SCRATCH/inbox-plain-$round.json" \
    -n "mail inbox, no trust roots" "$JULES -C $REPO mail inbox --persona curator --json" >&2
  git config --unset jules.trust.ref
  hyperfine -N --warmup 5 --runs "$WARM_RUNS" --export-json "$SCRATCH/inbox-trust-$round.json" \
    -n "mail inbox, trust roots, cache warm" "$JULES -C $REPO mail inbox --persona curator --json" >&2
done
lower() { python3 -c 'import sys; print(min(float(x) for x in sys.argv[1:]))' "$@"; }
a=$(lower "$(median "$SCRATCH/inbox-plain-1.json" 0)" "$(median "$SCRATCH/inbox-plain-2.json" 0)")
b=$(lower "$(median "$SCRATCH/inbox-trust-1.json" 0)" "$(median "$SCRATCH/inbox-trust-2.json" 0)")
ca=$(lower "$(cpu "$SCRATCH/inbox-plain-1.json" 0)" "$(cpu "$SCRATCH/inbox-plain-2.json" 0)")
cb=$(lower "$(cpu "$SCRATCH/inbox-trust-1.json" 0)" "$(cpu "$SCRATCH/inbox-trust-2.json" 0)")
echo "warm inbox (curator's, every message listed): without trust roots $(ms "$a"), with $(ms "$b"), ratio $(ratio "$b" "$a")x (target <= 1.05x); CPU $(ms "$ca") vs $(ms "$cb"), ratio $(ratio "$cb" "$ca")x"
