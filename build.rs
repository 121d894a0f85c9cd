//! Link the `git-jules` executable as a non-PIE binary on Linux.
//!
//! Personas call `git jules …` hundreds of times per sprint, so process start-up is part of every
//! command's cost (docs/benchmarks.md, "Start-up"). A position-independent executable of this size carries
//! about 24,600 relative relocations that the dynamic loader applies at every start, writing (and so
//! faulting in) 95 pages of `.data.rel.ro`; linked at a fixed address it needs none. Measured with
//! `perf stat`: `git-jules --version` 322 -> 240 page faults, 1.96 -> 1.84 ms CPU; `mail send` 489 -> 444
//! page faults, 6.2 -> 5.0 ms CPU. The cost is ASLR for the main binary (libraries are still randomized),
//! an acceptable trade for a local command-line tool. Only the binary is affected, not the library or tests.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
