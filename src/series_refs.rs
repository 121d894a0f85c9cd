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

/// Push every local version ref whose remote-tracking copy differs from it to `remote` (no force: one persona
/// writes a ref, so the local one is ahead), then move the tracking refs as a fetch would. Returns the refs the
/// remote refused, each with git's reason. Called by `git jules sync`, whose log machinery skips these refs.
pub fn publish(repo: &gix::Repository, remote: &str) -> Result<Vec<Skipped>> {
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
            pending.push((name, id, tracking, seen));
        }
    }
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    let out = crate::gitcli::command(crate::gitcli::dir_of(repo))
        .args(["push", "--porcelain", "--no-verify", remote])
        .args(pending.iter().map(|(n, id, _, _)| format!("{id}:{n}")))
        .output()
        .map_err(|e| Error::io("running `git push`", e))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut refused = Vec::new();
    for (name, id, tracking, seen) in &pending {
        let line = text.lines().find(|l| l.contains(&format!(":{name}\t")));
        match line {
            Some(l) if l.starts_with('!') => refused.push(Skipped {
                name: name.clone(),
                reason: l.rsplit('\t').next().unwrap_or("rejected").to_owned(),
            }),
            Some(_) => {
                let _ = crate::refs::cas(repo, tracking, *seen, *id, "jules: sync series version");
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
    Ok(refused)
}
