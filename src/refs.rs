//! Reading refs and moving them with compare-and-swap: the one primitive every writer builds on.

use gix::refs::transaction::{LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;
use gix::ObjectId;

use crate::error::{Error, Result};

/// The object a direct ref points at, `None` when the ref does not exist.
pub fn target(repo: &gix::Repository, name: &str) -> Result<Option<ObjectId>> {
    match repo.try_find_reference(name)? {
        None => Ok(None),
        Some(r) => match r.target().try_id() {
            Some(id) => Ok(Some(id.to_owned())),
            None => Err(Error::Other(format!(
                "{name} is a symbolic ref; git-jules refs must point at commits"
            ))),
        },
    }
}

/// Move `name` from `expected` (`None`: must not exist) to `new`, with a reflog entry.
/// `Ok(false)` means the race was lost (the ref moved, or another writer holds its lock): re-read and retry.
pub fn cas(
    repo: &gix::Repository,
    name: &str,
    expected: Option<ObjectId>,
    new: ObjectId,
    message: &str,
) -> Result<bool> {
    let full: gix::refs::FullName = name
        .try_into()
        .map_err(|e| Error::usage(format!("bad ref name {name}: {e}")))?;
    let previous = match expected {
        Some(old) => PreviousValue::MustExistAndMatch(Target::Object(old)),
        None => PreviousValue::MustNotExist,
    };
    let committer = crate::repo::committer(repo);
    let mut buf = gix::date::parse::TimeBuf::default();
    let edit = RefEdit::update_with_log(
        full,
        new,
        previous,
        LogChange {
            mode: RefLog::AndReference,
            force_create_reflog: true,
            message: message.into(),
        },
    );
    match repo.edit_references_as(Some(edit), Some(committer.to_ref(&mut buf))) {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || e.is_retryable() => Ok(false),
        Err(e) => {
            // A lock held by a concurrent writer can surface as a plain io error ("File exists");
            // the caller's bounded retry decides whether it is stale.
            let text = format!("{e:#}");
            if text.contains(".lock") || text.contains("File exists") {
                Ok(false)
            } else {
                Err(e.into())
            }
        }
    }
}

/// Delete `name` if it still points at `expected`. `Ok(false)`: it moved meanwhile.
pub fn cas_delete(repo: &gix::Repository, name: &str, expected: ObjectId) -> Result<bool> {
    let full: gix::refs::FullName = name
        .try_into()
        .map_err(|e| Error::usage(format!("bad ref name {name}: {e}")))?;
    let edit = RefEdit::delete(
        full,
        PreviousValue::MustExistAndMatch(Target::Object(expected)),
    );
    match repo.edit_reference(edit) {
        Ok(_) => Ok(true),
        Err(e) if e.is_conflict() || e.is_retryable() => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// How two commits relate in history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    Same,
    /// The first contains the second.
    Ahead,
    /// The second contains the first.
    Behind,
    Diverged,
}

pub fn relation(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<Relation> {
    if a == b {
        return Ok(Relation::Same);
    }
    let base = match repo.merge_base(a, b) {
        Ok(base) => base.map(|b| b.detach()),
        Err(e) if e.is_not_found() => None,
        Err(e) => return Err(e.into()),
    };
    Ok(match base {
        Some(base) if base == b => Relation::Ahead,
        Some(base) if base == a => Relation::Behind,
        _ => Relation::Diverged,
    })
}

/// How old a ref's lock file must be before it is reported as left behind by a dead writer: ref
/// transactions hold their lock for microseconds to milliseconds.
pub const STALE_LOCK_AGE: std::time::Duration = std::time::Duration::from_secs(5);

/// The lock file of ref `name` if it exists and is older than [`STALE_LOCK_AGE`]: most likely left by a
/// process that was killed while updating the ref (git never removes such files by itself, and neither do we).
pub fn stale_lock(repo: &gix::Repository, name: &str) -> Option<std::path::PathBuf> {
    let path = repo.common_dir().join(format!("{name}.lock"));
    let modified = std::fs::metadata(&path).ok()?.modified().ok()?;
    (modified.elapsed().ok()? > STALE_LOCK_AGE).then_some(path)
}
