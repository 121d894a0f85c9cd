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
git config jules.requireSigned true
cat > "$SCRATCH/fsck-cold.sh" <<SH
#!/usr/bin/env bash
rm -rf "$REPO/.git/jules/signatures"
"$JULES" -C "$REPO" log fsck big >/dev/null
SH
chmod +x "$SCRATCH"/*.sh
# The plain fsck must not verify: move the trust file out of reach for it.
cat > "$SCRATCH/fsck-plain.sh" <<SH
#!/usr/bin/env bash
GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=jules.requireSigned GIT_CONFIG_VALUE_0=false \
  GIT_CONFIG_KEY_1=jules.trust.ref GIT_CONFIG_VALUE_1=refs/heads/none \
  "$JULES" -C "$REPO" log fsck big >/dev/null
SH
hyperfine -N --warmup 1 --runs 3 --export-json "$SCRATCH/verify.json" \
  -n "log fsck, $M events, nothing verified" "$SCRATCH/fsck-plain.sh" \
  -n "log fsck, $M signed events verified cold" "$SCRATCH/fsck-cold.sh" >&2
plain=$(median "$SCRATCH/verify.json" 0); cold=$(median "$SCRATCH/verify.json" 1)
raw=$(openssl speed -seconds 3 ed25519 2>/dev/null | awk '/ed25519/ && $NF ~ /^[0-9.]+$/ {print $NF}' | tail -1)
ours=$(python3 -c "print($M/($cold-$plain))")
echo "cold verification of $M signed events: fsck $(ms "$plain") unverified, $(ms "$cold") verified; the verification alone $(python3 -c "print(f'{$ours:.0f}')")/s; raw ed25519 verify (openssl speed, this machine, this run): ${raw}/s; ratio $(python3 -c "print(f'{$ours/float(\"$raw\"):.2f}')")x of raw (target >= 0.5x)"

# Warm inbox: the same inbox with and without a trust file (the signature cache warm).
cat > "$SCRATCH/inbox-trust.sh" <<SH
#!/usr/bin/env bash
"$JULES" -C "$REPO" mail inbox --persona curator --json >/dev/null
SH
cat > "$SCRATCH/inbox-plain.sh" <<SH
#!/usr/bin/env bash
GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=jules.requireSigned GIT_CONFIG_VALUE_0=false \
  GIT_CONFIG_KEY_1=jules.trust.ref GIT_CONFIG_VALUE_1=refs/heads/none \
  "$JULES" -C "$REPO" mail inbox --persona curator --json >/dev/null
SH
chmod +x "$SCRATCH"/*.sh
git config jules.requireSigned false
"$SCRATCH/inbox-trust.sh"
hyperfine -N --warmup 3 --runs 30 --export-json "$SCRATCH/inbox.json" \
  -n "mail inbox, no trust file" "$SCRATCH/inbox-plain.sh" \
  -n "mail inbox, trust file, cache warm" "$SCRATCH/inbox-trust.sh" >&2
a=$(median "$SCRATCH/inbox.json" 0); b=$(median "$SCRATCH/inbox.json" 1)
echo "warm inbox ($((2 * N * 5 + 2 * N)) messages): without trust $(ms "$a"), with $(ms "$b"), ratio $(ratio "$b" "$a")x (target <= 1.05x)"
