//! The README's install step: `./install.sh` builds what it installs (on Linux with glibc a statically
//! linked binary at a fixed address, docs/benchmarks.md "Start-up"), and that binary does the main job.
//! The build is `install.sh --build`, the same code path as the install, in the dev profile to keep the
//! suite's time down (the release profile differs only in optimization).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::harness::{stderr, stdout, Repo};

/// Whether the ELF executable at `path` names a program interpreter (the dynamic loader).
fn has_interpreter(path: &Path) -> bool {
    let elf = std::fs::read(path).unwrap();
    assert_eq!(
        &elf[..4],
        b"\x7fELF",
        "{} is not an ELF file",
        path.display()
    );
    assert_eq!(elf[4], 2, "a 64-bit ELF file");
    let u16_at = |at: usize| u16::from_le_bytes([elf[at], elf[at + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    const PT_INTERP: u32 = 3;
    (0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) == PT_INTERP
    })
}

#[test]
fn the_installed_build_is_static_and_does_the_main_job() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Its own target directory: the one `cargo test` runs from is locked while tests run.
    let target_dir = root.join("target").join("install-test");
    let built = Command::new("sh")
        .arg(root.join("install.sh"))
        .args(["--build", "--profile", "dev", "--target-dir"])
        .arg(&target_dir)
        .current_dir(root)
        .env_remove("RUSTFLAGS")
        .env("CARGO_TERM_QUIET", "true")
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", stderr(&built));
    let bin = PathBuf::from(stdout(&built).trim());
    assert!(bin.is_absolute() && bin.is_file(), "{}", bin.display());
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        assert!(
            !has_interpreter(&bin),
            "{} needs a dynamic loader",
            bin.display()
        );
        // The flags reached the binary only: the host build of the test binary itself is dynamic.
        assert!(has_interpreter(Path::new(env!("CARGO_BIN_EXE_git-jules"))));
    }

    let r = Repo::new();
    let run = |args: &[&str]| {
        let mut cmd = Command::new(&bin);
        r.env.apply(&mut cmd);
        let out = cmd.current_dir(r.path()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    assert!(run(&["--version"]).starts_with("git-jules "));
    let demo = run(&["demo"]);
    assert!(demo.contains("finalize"), "{demo}");
    run(&[
        "mail",
        "send",
        "--from",
        "curator",
        "--to",
        "refactor",
        "--subject",
        "hello",
        "--body",
        "from the static build",
    ]);
    let inbox = run(&["--json", "mail", "inbox", "--persona", "refactor"]);
    assert!(inbox.contains("hello"), "{inbox}");
    run(&["log", "fsck", "mail"]);
    let fsck = r.git_output(["fsck", "--strict", "--no-dangling"]);
    assert!(fsck.status.success(), "{}", stderr(&fsck));
}
