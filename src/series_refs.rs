//! The refs of series versions, `refs/jules/series/<persona>/<name>` (issue 26), below sync and guard: their
//! namespace, the record a version commit's tree holds (`series.json`, docs/format.md "Series versions"), and
//! publishing them to a remote. Reading, recording and comparing versions is `crate::series::version`'s.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The ref namespace of versions.
pub const PREFIX: &str = "refs/jules/series/";
/// The format number in `series.json`.
pub const FORMAT: u32 = 1;
/// The file of a version commit's tree holding its record.
pub const RECORD_FILE: &str = "series.json";
/// The file holding its cover letter (Markdown).
pub const COVER_FILE: &str = "cover.md";

/// One patch of a version.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct VersionPatch {
    pub index: usize,
    pub commit: String,
    /// The `Change-Id:` trailer, else the id of the previous version's patch it was paired with, else
    /// `I` and the commit id (a patch first seen in this version).
    pub change_id: String,
    pub summary: String,
    /// Its patch in the previous version (1-based), `null` when new.
    pub previous: Option<usize>,
}

/// The record of one version (`series.json` in the version commit's tree).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Record {
    pub format: u32,
    pub persona: String,
    pub name: String,
    /// The version number: 1, 2, … (`vN`).
    pub number: u32,
    pub base: BaseRecord,
    pub tip: String,
    pub patches: Vec<VersionPatch>,
    /// Patches of the previous version with no partner here (1-based).
    pub dropped: Vec<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct BaseRecord {
    pub name: String,
    pub commit: String,
}

/// A ref that was not read, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

/// A local version ref the remote does not have yet (its remote-tracking copy differs).
#[derive(Debug, Clone)]
pub struct Pending {
    pub name: String,
    pub id: gix::ObjectId,
    tracking: String,
    seen: Option<gix::ObjectId>,
}

/// What [`publish`] did: the refs pushed, and those the remote refused, each with git's reason.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub pushed: Vec<String>,
    pub refused: Vec<Skipped>,
}

/// Every local version ref whose remote-tracking copy differs from it: what the next push to `remote` carries.
pub fn pending(repo: &gix::Repository, remote: &str) -> Result<Vec<Pending>> {
    let mut pending = Vec::new();
    for r in repo.references()?.prefixed(PREFIX)? {
        let r = r.map_err(|e| Error::Other(format!("listing {PREFIX}: {e}")))?;
        let name = r.name().as_bstr().to_string();
        let Some(id) = r.target().try_id().map(|i| i.to_owned()) else {
            continue;
        };
        let tracking = name.replacen("refs/jules/", &format!("refs/remotes/{remote}/jules/"), 1);
        let seen = crate::refs::target(repo, &tracking)?;
        if seen != Some(id) {
            pending.push(Pending {
                name,
                id,
                tracking,
                seen,
            });
        }
    }
    Ok(pending)
}

/// Push `pending` (from [`pending`]) to `remote` in one push, without force (one persona writes a ref, so the
/// local one is ahead) and not atomic (a ref the remote refuses, say a rewrite the guard stops, must not
/// hold back the others), then move the tracking refs of those pushed as a fetch would. Called by
/// `git jules sync` when its push budget allows a push; the log machinery skips these refs.
pub fn publish(repo: &gix::Repository, remote: &str, pending: &[Pending]) -> Result<Published> {
    let mut done = Published::default();
    if pending.is_empty() {
        return Ok(done);
    }
    let out = crate::gitcli::command(crate::gitcli::dir_of(repo))
        .args(["push", "--porcelain", "--no-verify", remote])
        .args(pending.iter().map(|p| format!("{}:{}", p.id, p.name)))
        .output()
        .map_err(|e| Error::io("running `git push`", e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let remote_said = String::from_utf8_lossy(&out.stderr);
    for p in pending {
        let line = text.lines().find(|l| l.contains(&format!(":{}\t", p.name)));
        match line {
            Some(l) if l.starts_with('!') => {
                // git's word (`[remote rejected] (pre-receive hook declined)`), and the remote's reason for
                // this ref when it gave one (the guard names the ref).
                let mut reason = l.rsplit('\t').next().unwrap_or("rejected").to_owned();
                let why = remote_said
                    .lines()
                    .filter_map(|l| l.strip_prefix("remote: "))
                    .map(str::trim)
                    .find(|l| l.contains(p.name.as_str()));
                if let Some(why) = why {
                    reason = format!("{reason}: {why}");
                }
                done.refused.push(Skipped {
                    name: p.name.clone(),
                    reason,
                });
            }
            Some(_) => {
                let _ = crate::refs::cas(
                    repo,
                    &p.tracking,
                    p.seen,
                    p.id,
                    "jules: sync series version",
                );
                done.pushed.push(p.name.clone());
            }
            None if !out.status.success() => {
                return Err(Error::Refused(format!(
                    "cannot push series versions to {remote}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )))
            }
            None => {}
        }
    }
    Ok(done)
}
