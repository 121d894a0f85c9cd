//! Repository hygiene: keep the number of packs and loose objects bounded however often a clone syncs.
//!
//! Every fetch either explodes a small transfer into loose objects (git's `transfer.unpackLimit`, 100 objects)
//! or keeps one new pack. A clone that syncs every minute would gather thousands of both, and a process that
//! holds the object store open meets gix's slot limit (one slot per pack index). After each fetch, sync
//! counts both (a directory listing: microseconds) and, past [`MAX_PACKS`] packs or [`MAX_LOOSE`] loose
//! objects, runs `git gc` — git's own maintenance, with cruft packs for unreachable objects, so nothing that
//! git itself would keep is dropped. Bound after any sync: at most `MAX_PACKS + 1` packs and `MAX_LOOSE` plus
//! one fetch's worth of loose objects. A repository with `gc.auto = 0` opted out and is left alone.

use std::path::Path;

use crate::error::Result;

/// Packs tolerated before a repack (git's `gc.autoPackLimit` is 50; gix sizes its store to the packs present
/// at open, with at least 32 slots).
pub const MAX_PACKS: usize = 16;

/// Loose objects tolerated before they are packed (git's `gc.auto` is 6700).
pub const MAX_LOOSE: usize = 1024;

/// How many packs and loose objects the repository holds now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub packs: usize,
    pub loose: usize,
}

/// Count packs (`objects/pack/*.pack`) and loose objects (`objects/xx/*`).
pub fn counts(repo: &gix::Repository) -> Counts {
    let objects = repo.objects.store_ref().path().to_owned();
    count_in(&objects)
}

fn count_in(objects: &Path) -> Counts {
    let packs = std::fs::read_dir(objects.join("pack"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".pack"))
                .count()
        })
        .unwrap_or(0);
    let mut loose = 0;
    for i in 0..=255u8 {
        if let Ok(d) = std::fs::read_dir(objects.join(format!("{i:02x}"))) {
            loose += d.filter_map(|e| e.ok()).count();
        }
    }
    Counts { packs, loose }
}

/// Repack when past the bounds; `Ok(true)` when git's maintenance ran.
pub fn maintain(repo: &gix::Repository) -> Result<bool> {
    let config = repo.config_snapshot();
    if config.integer("gc.auto") == Some(0) {
        return Ok(false);
    }
    let c = counts(repo);
    if c.packs <= MAX_PACKS && c.loose <= MAX_LOOSE {
        return Ok(false);
    }
    // `git gc` (not `--auto`, which would apply git's looser thresholds and detach into the background):
    // repacks into one pack, puts unreachable objects into a cruft pack (kept, as git keeps them), packs refs.
    // `--quiet` and no detaching, so the caller sees the bound hold when it returns. A concurrent gc in the
    // same repository holds `gc.pid` and makes this one stop: then the other does the work.
    let out = crate::gitcli::command(crate::gitcli::dir_of(repo))
        .args(["-c", "gc.autoDetach=false", "gc", "--quiet"])
        .output()
        .map_err(|e| crate::Error::io("running `git gc`", e))?;
    if out.status.success() {
        return Ok(true);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("already running") {
        // Another process of this clone is doing the same work right now.
        return Ok(false);
    }
    Err(crate::Error::GitCommand {
        args: "gc --quiet".into(),
        stderr: stderr.trim().to_owned(),
    })
}
