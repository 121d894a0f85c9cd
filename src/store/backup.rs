//! Backups of rewritten branches, one namespace per owner, numbered from 1 and never reused:
//!
//! - a series: `refs/jules/backup/series/<name>/<n>` (reroll, drop, move, undo, finalize, abort);
//! - a weave integration branch: `refs/jules/backup/weave/<branch>/<n>` (a move that is not a fast-forward);
//! - any other branch rewritten with `series reroll --base B`: `refs/jules/backup/branch/<branch>/<n>`;
//! - an event log whose unpushed events were dropped or signed again (`log held-back`, see
//!   [`crate::store::heldback`]): `refs/jules/backup/log/<log>/<n>`.
//!
//! Every operation that moves a branch somewhere its old tip is not contained first keeps the old tip under
//! the next number, in the same ref transaction that moves the branch, so either both happen or neither
//! does. Each backup ref has a reflog entry saying which operation made it.
//!
//! The layout before the namespaces (`refs/jules/backup/<series>/<n>` and `refs/jules/backup/weave/<n>`) is
//! still read: its numbers count when the next number is taken, and `series undo` sees them. A series called
//! `weave` shared the old weave directory; there the reflog tells the two apart (weave wrote
//! `jules weave: backup of <ref>`), and a ref whose origin cannot be told is never taken as a series backup.

use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;
use gix::ObjectId;
use serde::Serialize;

use crate::kit::error::{Error, Result};
use crate::kit::id::ser_oid;

/// The directory of every backup ref, old layout and new.
pub const ROOT: &str = "refs/jules/backup/";

/// What a backup belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner<'a> {
    /// A series, by name (`jules/staging/<name>`).
    Series(&'a str),
    /// A weave integration branch, by its short name (`jules/integration/weave`).
    Weave(&'a str),
    /// Any other local branch rewritten by `series reroll --base B` without being a series, by short name.
    Branch(&'a str),
    /// An event log, by its name below `refs/jules/` (`mail`), rewritten by `log held-back drop|resign`.
    Log(&'a str),
}

/// The reflog message weave gave its backups in the old layout.
const LEGACY_WEAVE_LOG: &str = "jules weave: backup of ";

impl Owner<'_> {
    /// The directory of this owner's backups: `refs/jules/backup/series/<name>/` or
    /// `refs/jules/backup/weave/<branch>/`.
    pub fn prefix(&self) -> String {
        match self {
            Owner::Series(name) => format!("{ROOT}series/{name}/"),
            Owner::Weave(branch) => {
                let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
                format!("{ROOT}weave/{short}/")
            }
            Owner::Branch(branch) => {
                let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
                format!("{ROOT}branch/{short}/")
            }
            Owner::Log(log) => format!("{ROOT}log/{log}/"),
        }
    }

    /// The directory of the layout before namespaces (plain branches had none).
    fn legacy_prefix(&self) -> Option<String> {
        match self {
            Owner::Series(name) => Some(format!("{ROOT}{name}/")),
            Owner::Weave(_) => Some(format!("{ROOT}weave/")),
            Owner::Branch(_) | Owner::Log(_) => None,
        }
    }

    /// Whether a ref of the old layout (with its first reflog message, if any) is this owner's.
    fn owns_legacy(&self, first_log: Option<&str>) -> bool {
        let weave_of = first_log.and_then(|m| m.strip_prefix(LEGACY_WEAVE_LOG));
        match self {
            // Under `refs/jules/backup/weave/` a series backup is only one whose reflog says so.
            Owner::Series("weave") => first_log.is_some() && weave_of.is_none(),
            Owner::Series(_) => true,
            Owner::Weave(branch) => {
                let short = branch.strip_prefix("refs/heads/").unwrap_or(branch);
                weave_of.is_some_and(|r| r.strip_prefix("refs/heads/").unwrap_or(r) == short)
            }
            Owner::Branch(_) | Owner::Log(_) => false,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Backup {
    pub number: u64,
    #[serde(rename = "ref")]
    pub name: String,
    #[serde(serialize_with = "ser_oid")]
    pub commit: ObjectId,
}

/// The backups of `owner`, by number, old layout included. At equal numbers the new layout comes last.
pub fn list(repo: &gix::Repository, owner: Owner<'_>) -> Result<Vec<Backup>> {
    let mut out = match owner.legacy_prefix() {
        Some(legacy) => numbered(repo, &legacy, |r| {
            let first = first_log_message(r);
            owner.owns_legacy(first.as_deref())
        })?,
        None => Vec::new(),
    };
    out.extend(numbered(repo, &owner.prefix(), |_| true)?);
    out.sort_by_key(|b| b.number);
    Ok(out)
}

/// The refs `<prefix><n>` (a number directly under `prefix`) that `keep` accepts.
fn numbered(
    repo: &gix::Repository,
    prefix: &str,
    mut keep: impl FnMut(&mut gix::Reference<'_>) -> bool,
) -> Result<Vec<Backup>> {
    let mut out = Vec::new();
    for r in repo.references()?.prefixed(prefix)? {
        let mut r = r.map_err(|e| Error::wrap(format!("listing {prefix}*"), e))?;
        let name = r.name().as_bstr().to_string();
        let Some(number) = name
            .strip_prefix(prefix)
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        let Some(id) = r.target().try_id().map(|id| id.to_owned()) else {
            continue;
        };
        if keep(&mut r) {
            out.push(Backup {
                number,
                name,
                commit: id,
            });
        }
    }
    Ok(out)
}

fn first_log_message(r: &mut gix::Reference<'_>) -> Option<String> {
    let mut platform = r.log_iter();
    let mut iter = platform.all().ok()??;
    let line = iter.next()?.ok()?;
    Some(line.message.to_string())
}

/// A ref edit (with a reflog entry) for a transaction that also writes a backup.
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

/// Apply `edits` together with a new backup of `old_tip` for `owner`, all or nothing. The backup takes the
/// next free number (above every number of the old layout too); when another writer took that number
/// first, the next one is tried. `moved` is called after a lost race on anything but the backup ref and
/// builds the error to return (the branch moved). `message` is the backup's reflog message.
pub fn transaction(
    repo: &gix::Repository,
    owner: Owner<'_>,
    old_tip: ObjectId,
    edits: Vec<RefEdit>,
    message: &str,
    moved: impl Fn() -> Error,
) -> Result<Backup> {
    let committer = crate::kit::repo::committer(repo);
    for _ in 0..100 {
        let number = list(repo, owner)?.last().map_or(1, |b| b.number + 1);
        let name = format!("{}{number}", owner.prefix());
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
                if crate::store::refs::target(repo, &name)?.is_some() {
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
            owner.prefix()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_do_not_overlap() {
        assert_eq!(
            Owner::Series("weave").prefix(),
            "refs/jules/backup/series/weave/"
        );
        assert_eq!(
            Owner::Weave("refs/heads/jules/integration/weave").prefix(),
            "refs/jules/backup/weave/jules/integration/weave/"
        );
        assert_ne!(
            Owner::Series("weave").prefix(),
            Owner::Weave("weave").prefix()
        );
    }

    #[test]
    fn old_weave_backups_are_not_a_series_called_weave() {
        let weave_log = Some("jules weave: backup of refs/heads/jules/integration/weave");
        assert!(!Owner::Series("weave").owns_legacy(weave_log));
        assert!(!Owner::Series("weave").owns_legacy(None));
        assert!(Owner::Series("weave").owns_legacy(Some("jules series reroll: drop 1")));
        assert!(Owner::Weave("jules/integration/weave").owns_legacy(weave_log));
        assert!(!Owner::Weave("jules/integration/other").owns_legacy(weave_log));
    }
}
