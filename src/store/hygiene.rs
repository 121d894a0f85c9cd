//! Repository hygiene: keep the number of packs and loose objects bounded however often a clone syncs.
//!
//! Every fetch either explodes a small transfer into loose objects (git's `transfer.unpackLimit`, 100 objects)
//! or keeps one new pack. A clone that syncs every minute would gather thousands of both, and a process that
//! holds the object store open meets gix's slot limit (one slot per pack index). After each fetch, sync
//! counts both (a directory listing: microseconds) and, past [`MAX_PACKS`] packs or [`MAX_LOOSE`] loose
//! objects, runs `git gc` — git's own maintenance, with cruft packs for unreachable objects, so nothing that
//! git itself would keep is dropped. Bound after any sync: at most `MAX_PACKS + 1` packs and `MAX_LOOSE` plus
//! one fetch's worth of loose objects. A repository with `gc.auto = 0` opted out and is left alone.
//!
//! Sync also removes the reflogs of the event logs that builds before 2026-11-24 forced on every append
//! ([`drop_log_reflogs`]).

use std::path::Path;

use crate::kit::error::Result;

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
    let out = crate::kit::gitcli::command(crate::kit::gitcli::dir_of(repo))
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

/// Remove the reflogs of the event logs (`logs/refs/jules/<log>` and the writer refs under
/// `logs/refs/jules/writers/`) that git-jules builds before 2026-11-24 forced on every append: a line per
/// event, never pruned (about 200 MB per million events), and, since git and gix append to a reflog that
/// exists, an open and a write on every append for as long as the file is there. A log's history is its own
/// record. Git keeps reflogs for these refs only with `core.logAllRefUpdates = always`; then they are the
/// user's and stay. Backups' reflogs (`logs/refs/jules/backup/`) say which backups are series, and stay.
/// Returns how many were removed.
pub fn drop_log_reflogs(repo: &gix::Repository) -> Result<usize> {
    let always = repo
        .config_snapshot()
        .string("core.logAllRefUpdates")
        .is_some_and(|v| v.eq_ignore_ascii_case(b"always".as_slice()));
    if always {
        return Ok(0);
    }
    let dir = repo.common_dir().join("logs").join("refs").join("jules");
    let mut removed = 0;
    remove_reflogs_in(&dir, Some("backup"), &mut removed)?;
    Ok(removed)
}

/// Remove every reflog under `dir` except those in its subdirectory `keep`.
fn remove_reflogs_in(dir: &Path, keep: Option<&str>, removed: &mut usize) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(crate::Error::io(format!("reading {}", dir.display()), e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| crate::Error::io(format!("reading {}", dir.display()), e))?;
        let path = entry.path();
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir {
            if keep.is_some_and(|k| entry.file_name() == k) {
                continue;
            }
            remove_reflogs_in(&path, None, removed)?;
            // Empty now unless a ref was created meanwhile; either way git does not need the directory.
            let _ = std::fs::remove_dir(&path);
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => *removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(crate::Error::io(format!("removing {}", path.display()), e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "0000 1111 a <a@b> 0 +0000\tappend\n").unwrap();
    }

    #[test]
    fn forced_log_reflogs_go_and_backups_and_branches_keep_theirs() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init(dir.path()).unwrap();
        let logs = repo.common_dir().join("logs");
        let mail = logs.join("refs/jules/mail");
        let writer = logs.join("refs/jules/writers/mail/abc123");
        let backup = logs.join("refs/jules/backup/series/s/1");
        let branch = logs.join("refs/heads/main");
        for p in [&mail, &writer, &backup, &branch] {
            write(p);
        }
        assert_eq!(drop_log_reflogs(&repo).unwrap(), 2);
        assert!(!mail.exists() && !writer.exists());
        assert!(!logs.join("refs/jules/writers").exists());
        assert!(backup.exists() && branch.exists());
        assert_eq!(
            drop_log_reflogs(&repo).unwrap(),
            0,
            "nothing left to remove"
        );

        // With core.logAllRefUpdates=always the reflogs are the user's.
        write(&mail);
        let config = repo.common_dir().join("config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[core]\n\tlogAllRefUpdates = always\n");
        std::fs::write(&config, text).unwrap();
        let repo = gix::open(dir.path()).unwrap();
        assert_eq!(drop_log_reflogs(&repo).unwrap(), 0);
        assert!(mail.exists());
    }
}
