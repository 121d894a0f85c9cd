//! Backups of rewritten series: `refs/jules/backup/<series>/<n>`, numbered from 1, never reused.
//!
//! Every operation that moves a series branch somewhere its old tip is not contained (reroll, drop, move,
//! undo, finalize, abort) first keeps the old tip under the next number, in the same ref transaction that
//! moves the branch, so either both happen or neither does. Each backup ref has a reflog entry saying which
//! operation made it. `git jules series undo` restores the highest number.

use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;
use gix::ObjectId;
use serde::Serialize;

use super::ser_id;
use crate::error::{Error, Result};

pub const PREFIX: &str = "refs/jules/backup/";

/// `refs/jules/backup/<series>/`.
pub fn prefix(series: &str) -> String {
    format!("{PREFIX}{series}/")
}

#[derive(Debug, Clone, Serialize)]
pub struct Backup {
    pub number: u64,
    #[serde(rename = "ref")]
    pub name: String,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
}

/// The backups of `series`, by number.
pub fn list(repo: &gix::Repository, series: &str) -> Result<Vec<Backup>> {
    let prefix = prefix(series);
    let mut out = Vec::new();
    for r in repo.references()?.prefixed(prefix.as_str())? {
        let r = r.map_err(|e| Error::Other(format!("listing {prefix}*: {e}")))?;
        let name = r.name().as_bstr().to_string();
        let Some(number) = name
            .strip_prefix(&prefix)
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        if let Some(id) = r.target().try_id() {
            out.push(Backup {
                number,
                name,
                commit: id.to_owned(),
            });
        }
    }
    out.sort_by_key(|b| b.number);
    Ok(out)
}

/// A ref edit of a transaction that also writes a backup.
pub fn update(
    name: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    deref: bool,
    message: &str,
) -> Result<RefEdit> {
    Ok(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: true,
                message: message.into(),
            },
            expected: match expected {
                Some(old) => PreviousValue::MustExistAndMatch(Target::Object(old)),
                None => PreviousValue::MustNotExist,
            },
            new: Target::Object(new),
        },
        name: name
            .try_into()
            .map_err(|e| Error::usage(format!("bad ref name {name}: {e}")))?,
        deref,
    })
}

/// Apply `edits` together with a new backup of `old_tip` for `series`, all or nothing. The backup takes the
/// next free number; when another writer took that number first, the next one is tried. `moved` is called
/// after a lost race on anything but the backup ref and builds the error to return (the branch moved).
pub fn transaction(
    repo: &gix::Repository,
    series: &str,
    old_tip: ObjectId,
    edits: Vec<RefEdit>,
    message: &str,
    moved: impl Fn() -> Error,
) -> Result<Backup> {
    let committer = crate::repo::committer(repo);
    for _ in 0..100 {
        let number = list(repo, series)?.last().map_or(1, |b| b.number + 1);
        let name = format!("{}{number}", prefix(series));
        let mut all = edits.clone();
        all.push(update(&name, None, old_tip, false, message)?);
        let mut buf = gix::date::parse::TimeBuf::default();
        match repo.edit_references_as(all, Some(committer.to_ref(&mut buf))) {
            Ok(_) => {
                return Ok(Backup {
                    number,
                    name,
                    commit: old_tip,
                })
            }
            Err(e) if e.is_conflict() || e.is_retryable() => {
                if crate::refs::target(repo, &name)?.is_some() {
                    continue;
                }
                return Err(moved());
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(Error::Race {
        message: format!(
            "gave up creating a backup under {}: it keeps moving",
            prefix(series)
        ),
    })
}
