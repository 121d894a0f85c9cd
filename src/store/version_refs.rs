//! The refs of series versions, `refs/jules/series/<persona>/<name>` (issue 26), below sync and guard: their
//! namespace, the record a version commit's tree holds (`series.json`, docs/format.md "Series versions"), and
//! publishing them to a remote. Reading, recording and comparing versions is `crate::capabilities::series::version`'s.
//!
//! A version commit is signed by its persona's key (issue 40): the trailer `Jules-Signature:` holds an
//! SSHSIG in [`crate::store::sign::SERIES_NAMESPACE`] over [`signed_payload`], which binds the record and cover
//! letter to the ref, persona, series, number, previous version and time, so a signature cannot be moved
//! onto another series or version. [`check_version`] judges one, for readers and the guard alike.

use serde::{Deserialize, Serialize};

use crate::kit::error::{Error, Result};

/// The ref namespace of versions.
pub const PREFIX: &str = "refs/jules/series/";
/// The format number in `series.json`.
pub const FORMAT: u32 = 1;
/// The file of a version commit's tree holding its record.
pub const RECORD_FILE: &str = "series.json";
/// The file holding its cover letter (Markdown).
pub const COVER_FILE: &str = "cover.md";

/// The version of [`signed_payload`]'s layout (its first line).
pub const SIGNATURE_FORMAT: u32 = 1;

/// What a version commit's signature covers (docs/format.md, "Series versions", signature format 1):
///
/// ```text
/// git-jules-series-signature 1
/// ref refs/jules/series/<persona>/<name>
/// persona <persona>
/// name <name>
/// version <number>
/// previous <the previous version commit's id, or none for v1>
/// time <the version commit's committer time, Unix seconds>
/// record <length in bytes>
/// <series.json, exactly as in the tree>
/// cover <length in bytes>
/// <cover.md, exactly as in the tree>
/// ```
///
/// `persona`, `name` and `version` are the record's own; readers also check the record against the ref it
/// was read from.
pub fn signed_payload(
    record: &Record,
    previous: Option<gix::ObjectId>,
    time: i64,
    record_bytes: &[u8],
    cover: &[u8],
) -> Vec<u8> {
    let mut out = format!(
        "git-jules-series-signature {SIGNATURE_FORMAT}\nref {PREFIX}{persona}/{name}\npersona {persona}\n\
         name {name}\nversion {number}\nprevious {previous}\ntime {time}\nrecord {len}\n",
        persona = record.persona,
        name = record.name,
        number = record.number,
        previous = previous.map_or_else(|| "none".to_owned(), |p| p.to_string()),
        len = record_bytes.len(),
    )
    .into_bytes();
    out.extend_from_slice(record_bytes);
    out.extend_from_slice(format!("\ncover {}\n", cover.len()).as_bytes());
    out.extend_from_slice(cover);
    out
}

/// A version commit as a verifier needs it, however it was read (gix in a clone, `git cat-file` in the
/// guard's quarantine).
pub struct VersionCommit<'a> {
    /// The commit message (its trailers hold the signature).
    pub message: &'a [u8],
    /// The first parent: the previous version, for a version after v1.
    pub first_parent: Option<gix::ObjectId>,
    /// The committer time, Unix seconds.
    pub time: i64,
    /// `series.json` and `cover.md` as in the tree (a missing cover is empty).
    pub record: &'a [u8],
    pub cover: &'a [u8],
}

/// The signature state of a version commit under `trust`, with its parsed record; an error says why the
/// record does not parse.
pub fn check_version(
    trust: Option<&crate::store::sign::AllowedSigners>,
    c: &VersionCommit<'_>,
) -> std::result::Result<(Record, crate::store::sign::State), String> {
    let record: Record = serde_json::from_slice(c.record)
        .map_err(|e| format!("{RECORD_FILE} is not a version record: {e}"))?;
    let previous = if record.number > 1 {
        c.first_parent
    } else {
        None
    };
    let at = chrono::DateTime::from_timestamp(c.time, 0);
    let signature = c
        .message
        .split(|b| *b == b'\n')
        .rev()
        .find_map(|l| l.strip_prefix(crate::store::sign::SIGNATURE_TRAILER.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).trim().to_owned());
    let state = match signature {
        None => crate::store::sign::verdict::unsigned(
            trust,
            &record.persona,
            crate::store::sign::SERIES_NAMESPACE,
            at,
        ),
        Some(sig) => {
            let payload = signed_payload(&record, previous, c.time, c.record, c.cover);
            crate::store::sign::verdict::check_in(
                trust,
                crate::store::sign::SERIES_NAMESPACE,
                &record.persona,
                at,
                &payload,
                &sig,
            )
        }
    };
    Ok((record, state))
}

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
        let r = r.map_err(|e| Error::wrap(format!("listing {PREFIX}"), e))?;
        let name = r.name().as_bstr().to_string();
        let Some(id) = r.target().try_id().map(|i| i.to_owned()) else {
            continue;
        };
        let tracking = name.replacen("refs/jules/", &format!("refs/remotes/{remote}/jules/"), 1);
        let seen = crate::store::refs::target(repo, &tracking)?;
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
    let out = crate::kit::gitcli::command(crate::kit::gitcli::dir_of(repo))
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
                let _ = crate::store::refs::cas(
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
