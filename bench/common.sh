# Shared by the bench scripts: build the release binary as ./install.sh installs it (statically linked on
# Linux with glibc) unless JULES_BIN names one, find hyperfine, make scratch space.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SHARED=${SHARED:-$ROOT/../shared}
# JULES_BIN or GIT_JULES: a binary built beforehand (on a shared machine, `flock /work/release.lock nice cargo
# build --release`); neither: build what install.sh installs.
JULES=${JULES_BIN:-${GIT_JULES:-}}
if [ -z "$JULES" ]; then
  JULES=$(cd "$ROOT" && CARGO_TERM_QUIET=true ./install.sh --build)
fi
case $JULES in /*) ;; *) JULES=$ROOT/$JULES ;; esac
export PATH="$(dirname "$JULES"):$PATH"
if ! command -v hyperfine >/dev/null; then
  echo "hyperfine is needed: apt-get install -y hyperfine" >&2
  exit 2
fi
# Scratch on tmpfs when there is one: file creation on this VM's ext4 dominates otherwise.
SCRATCH_BASE=/dev/shm
[ -w "$SCRATCH_BASE" ] || SCRATCH_BASE=${TMPDIR:-/tmp}
SCRATCH=$(mktemp -d "$SCRATCH_BASE/jules-bench.XXXXXX")
trap 'rm -rf "$SCRATCH"' EXIT
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL="$SCRATCH/gitconfig" TZ=UTC
git config --file "$GIT_CONFIG_GLOBAL" user.name bench
git config --file "$GIT_CONFIG_GLOBAL" user.email bench@example.com
git config --file "$GIT_CONFIG_GLOBAL" init.defaultBranch main

# median seconds of a hyperfine JSON export
median() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]["median"])' "$@"; }
ratio() { python3 -c 'import sys; print(f"{float(sys.argv[1])/float(sys.argv[2]):.2f}")' "$1" "$2"; }
ms() { python3 -c 'import sys; print(f"{float(sys.argv[1])*1000:.2f} ms")' "$1"; }
# mean CPU seconds (user + system) of a hyperfine JSON export
cpu() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]; print(r["user"]+r["system"])' "$@"; }
