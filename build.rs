//! Link the `git-jules` executable for a fast start on Linux (glibc): at a fixed address, and with the
//! unwinder linked in.
//!
//! Personas call `git jules …` hundreds of times per sprint, so process start-up is part of every
//! command's cost (docs/benchmarks.md, "Start-up"). Only the binary is affected, not the library or tests.
//!
//! * **Non-PIE.** A position-independent executable of this size carries about 24,600 relative relocations
//!   that the dynamic loader applies at every start, writing (and so faulting in) 95 pages of
//!   `.data.rel.ro`; linked at a fixed address it needs none. Measured with `perf stat`:
//!   `git-jules --version` 322 -> 240 page faults, 1.96 -> 1.84 ms CPU; `mail send` 489 -> 444 page
//!   faults, 6.2 -> 5.0 ms CPU. The cost is ASLR for the main binary (libraries are still randomized), an
//!   acceptable trade for a local command-line tool.
//! * **The unwinder from `libgcc_eh.a`** (what `gcc -static-libgcc` does for C programs). Rust's standard
//!   library asks for `-lgcc_s` on glibc targets, which costs every start the loading of one more shared
//!   library and its constructor (a CPU feature probe through `cpuid`, slow under virtualization): about
//!   0.1 ms of a 0.9 ms hello-world start. A linker script named `libgcc_s.so` in a directory searched
//!   before the system's answers that `-lgcc_s` with `-lgcc_eh`, the static unwinder gcc ships for
//!   `-static` links; panics, `catch_unwind` and backtraces work the same. Where the compiler has no
//!   `libgcc_eh.a`, or in a cross build, `libgcc_s` stays.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-no-pie");
    if !static_unwinder_available() {
        return;
    }

    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("static-unwinder");
    std::fs::create_dir_all(&dir).expect("creating the linker-script directory in OUT_DIR");
    std::fs::write(dir.join("libgcc_s.so"), "INPUT(-lgcc_eh)\n")
        .expect("writing the libgcc_s.so linker script");
    // `-L` applies to every `-l` whatever its position, and a user's directories are searched before the
    // compiler's and the system's, so this one answers `-lgcc_s` (ld and lld alike).
    println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
}

/// Whether the C compiler rustc links with (`cc`) has gcc's static unwinder. Only asked for a native build:
/// a cross build's `cc` would answer for the wrong target, and then `libgcc_s` stays.
fn static_unwinder_available() -> bool {
    if std::env::var("TARGET").ok() != std::env::var("HOST").ok() {
        return false;
    }
    std::process::Command::new("cc")
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .ok()
        .filter(|out| out.status.success())
        .is_some_and(|out| String::from_utf8_lossy(&out.stdout).trim().contains('/'))
}
