#!/bin/sh
# Install git-jules (the README's first command), or only build it the same way (`--build`, used by the
# benchmarks and a test, so that what is measured and tested is what is installed).
#
#   ./install.sh [--root DIR]                 cargo install into ~/.cargo/bin (or DIR/bin)
#   ./install.sh --build [--target-dir DIR] [--profile P]
#                                             build only; prints the binary's path on stdout
#
# On Linux with glibc the binary is linked statically, at a fixed address: every `git jules …` is a new
# process, and the dynamic loader (mapping libc, libm and libgcc_s, resolving symbols) was 0.2 ms of a 2.1 ms
# `mail send`, and the relocations of a position-independent executable (about 24,600, 95 pages written at
# every start) 0.1 ms more: the levers that took `mail send` through git under half the plain-git append
# (docs/benchmarks.md, "Start-up"). Static glibc is fine here: git-jules resolves no host names (the `git`
# binary carries every transport) and loads no modules. Both are rustc's documented flags
# (`-C target-feature=+crt-static`, with which the standard library links gcc's static unwinder itself, and
# `-C relocation-model=static`). Cargo cannot build proc macros with them, so they go to an explicit
# `--target` (the host's own), where they reach only the binary's own compilation units and not build
# scripts or proc macros. Without a static libc the binary is still linked at a fixed address. Elsewhere,
# or with RUSTFLAGS set (which takes precedence), it is the plain `cargo install --locked --path .`.
set -eu
cd "$(dirname "$0")"

mode=install
while [ $# -gt 0 ]; do
    case $1 in
        --build) mode=build ;;
        --root | --target-dir | --profile)
            [ $# -ge 2 ] || { echo "install.sh: $1 needs a value" >&2; exit 2; }
            case $1 in
                --root) root=$2 ;;
                --target-dir) target_dir=$2 ;;
                --profile) profile=$2 ;;
            esac
            shift ;;
        -h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

host=$(rustc -vV | sed -n 's/^host: //p')
set --
case $host in
    *-linux-gnu)
        if [ -z "${RUSTFLAGS:-}" ]; then
            # glibc's static archive ships with Debian's libc6-dev, not everywhere (Fedora: glibc-static).
            libc_a=$(cc -print-file-name=libc.a 2>/dev/null || true)
            static="'-C', 'target-feature=+crt-static', "
            if [ "${libc_a#*/}" = "$libc_a" ]; then
                echo "install.sh: no static libc (libc.a) for this compiler; linking glibc dynamically" >&2
                static=
            fi
            set -- --target "$host" --config "target.$host.rustflags = [$static'-C', 'relocation-model=static']"
        fi ;;
esac

if [ "$mode" = install ]; then
    exec cargo install --locked --path . ${root:+--root "$root"} "$@"
fi

profile=${profile:-release}
target_dir=${target_dir:-${CARGO_TARGET_DIR:-target}}
cargo build --locked --profile "$profile" --target-dir "$target_dir" "$@" >&2
case $profile in dev) out=debug ;; *) out=$profile ;; esac
if [ $# -gt 0 ]; then
    echo "$target_dir/$host/$out/git-jules"
else
    echo "$target_dir/$out/git-jules"
fi
