#!/usr/bin/env bash
# The README's install step, checked once per CI run (it builds the whole project again, so it is not part
# of `cargo test`): `./install.sh --build`, the code path of the install, in the dev profile (the release
# profile differs only in optimization), must give a binary that on Linux with glibc is static (it names no
# program interpreter, docs/benchmarks.md "Start-up") and that does the main job in a fresh repository.
set -euo pipefail
cd "$(dirname "$0")/.."
target_dir=${CARGO_TARGET_DIR:-$PWD/target}/install-check
# RUSTFLAGS is unset, not emptied: cargo takes an empty RUSTFLAGS over the config rustflags install.sh passes.
bin=$(env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS CARGO_TERM_QUIET=true sh ./install.sh --build --profile dev --target-dir "$target_dir")
[ -x "$bin" ] || { echo "static-install: install.sh printed $bin, not an executable" >&2; exit 1; }

# Whether the ELF executable names a program interpreter (PT_INTERP, the dynamic loader); Python reads the
# program headers so the check needs nothing beyond what the tests need.
interp() {
    python3 - "$1" <<'PY'
import struct, sys
elf = open(sys.argv[1], "rb").read()
assert elf[:4] == b"\x7fELF" and elf[4] == 2, "a 64-bit ELF file"
phoff, = struct.unpack_from("<Q", elf, 0x20)
phentsize, phnum = struct.unpack_from("<HH", elf, 0x36)
types = [struct.unpack_from("<I", elf, phoff + i * phentsize)[0] for i in range(phnum)]
print("yes" if 3 in types else "no")
PY
}
host=$(rustc -vV | sed -n 's/^host: //p')
case $host in
    *-linux-gnu)
        [ "$(interp "$bin")" = no ] || { echo "static-install: $bin needs a dynamic loader" >&2; exit 1; } ;;
esac

repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
export HOME=$repo/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$repo/home/.gitconfig TZ=UTC
mkdir -p "$HOME"
git config --global user.name 'Install Check'
git config --global user.email install@example.com
git init -q -b main "$repo/r"
cd "$repo/r"
echo hello > README
git add README
git commit -qm initial
"$bin" --version | grep -q '^git-jules '
"$bin" demo | grep -q finalize
"$bin" mail send --from curator --to refactor --subject hello --body 'from the static build' >/dev/null
"$bin" --json mail inbox --persona refactor | grep -q '"hello"'
"$bin" log fsck mail >/dev/null
git fsck --strict --no-dangling
echo "static-install: ok ($bin)"
