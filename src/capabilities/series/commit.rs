//! `series commit`: stage everything and record one patch whose message carries a `Rationale:` trailer.
//!
//! The message is the summary, a blank line, then the trailer. A rationale of several lines is folded the way
//! git folds trailers: continuation lines start with one space, so `git interpret-trailers --parse` and
//! `%(trailers)` read it back as one value. Blank lines cannot live inside a trailer, so they are dropped.

use std::path::Path;

use gix::bstr::ByteSlice;
use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
use gix::refs::Target;
use gix::ObjectId;
use serde::Serialize;

use super::{branch_name, ser_id};
use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::kit::gitcli;

/// The trailer key.
pub const RATIONALE: &str = "Rationale";

/// The commit message for `summary` and `rationale`; refuses an empty or multi-line summary and an empty
/// rationale.
pub fn message(summary: &str, rationale: &str) -> Result<String> {
    let summary = summary.trim();
    if summary.is_empty() {
        return Err(Error::usage("the summary is empty"));
    }
    if summary.contains('\n') {
        return Err(Error::usage(
            "the summary must be one line; put the details in the rationale",
        ));
    }
    let Some(trailer) = crate::kit::trailers::fold(RATIONALE, rationale) else {
        return Err(Error::needs(
            ErrorKind::Usage,
            "the rationale is empty: say why this patch exists",
            Remedy::Rationale,
        ));
    };
    let msg = format!("{summary}\n\n{trailer}");
    Ok(msg)
}

/// The rationale of a commit message (the trailer's value, unfolded with newlines), if it has one.
pub fn rationale_of(message: &str) -> Option<String> {
    crate::kit::trailers::first(message, RATIONALE).map(|t| t.lines)
}

/// The trailer that identifies a patch across versions of its series (`crate::capabilities::series::version`).
pub const CHANGE_ID: &str = "Change-Id";

/// A fresh change id: `I` and 40 hex digits, from the patch's content, the time and the process (Gerrit's
/// shape; unique enough that two patches never share one by accident).
pub fn new_change_id(seed: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let data = format!("{seed}\n{nanos}\n{}\n", std::process::id());
    let id = gix::objs::compute_hash(
        gix::hash::Kind::Sha1,
        gix::object::Kind::Blob,
        data.as_bytes(),
    )
    .expect("sha1 hashing does not fail");
    format!("I{id}")
}

/// The `Change-Id:` trailer of a message.
pub fn change_id_of(message: &str) -> Option<String> {
    crate::kit::trailers::first(message, CHANGE_ID).map(|t| t.value)
}

/// `new` with `old`'s `Change-Id:` trailer when `new` lost it (a reworded message): every rewrite keeps a
/// patch's identity.
pub fn keep_change_id(old: &str, new: String) -> String {
    let Some(id) = change_id_of(old) else {
        return new;
    };
    if change_id_of(&new).is_some() {
        return new;
    }
    with_trailer(new, &format!("{CHANGE_ID}: {id}"))
}

/// `message` with `line` added to its trailer block (a new block when its last paragraph is not one).
pub fn with_trailer(message: String, line: &str) -> String {
    let mut m = message.trim_end().to_owned();
    let has_block = !crate::kit::trailers::parse(&m).is_empty();
    m.push_str(if has_block { "\n" } else { "\n\n" });
    m.push_str(line);
    m.push('\n');
    m
}

#[derive(Debug, Serialize)]
pub struct Committed {
    pub series: String,
    pub branch: String,
    #[serde(serialize_with = "ser_id")]
    pub commit: ObjectId,
    #[serde(serialize_with = "ser_id")]
    pub parent: ObjectId,
    pub summary: String,
}

/// Stage all changes (`git add -A`: new, modified and deleted files, .gitignore respected) and commit them on
/// the current series branch. Refuses when HEAD is not on a series branch and when nothing changed.
pub fn commit(repo: &gix::Repository, summary: &str, rationale: &str) -> Result<Committed> {
    let msg = message(summary, rationale)?;
    // Every patch gets a change id that reroll, move, drop, undo and finalize keep, so versions of the series
    // can be matched patch by patch (src/capabilities/series/version.rs).
    let msg = with_trailer(
        msg,
        &format!(
            "{}: {}",
            CHANGE_ID,
            new_change_id(&format!("{summary}\n{rationale}"))
        ),
    );
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::usage("a series needs a working tree; this repository is bare"))?
        .to_owned();
    let series = super::current_series(repo, |on| {
        format!("HEAD is not on a series branch (jules/staging/NAME) but on {on}; start one with `git jules series start NAME`")
    })?;
    let parent = repo.head_id()?.detach();
    let parent_tree = repo.find_commit(parent)?.tree_id()?.detach();
    let tree = stage_all(&workdir)?;
    if tree == parent_tree {
        return Err(Error::usage(
            "nothing to commit: the working tree matches HEAD",
        ));
    }
    let fallback = crate::kit::repo::committer(repo);
    let author = match repo.author() {
        Some(Ok(sig)) => sig.to_owned()?,
        _ => fallback.clone(),
    };
    let committer = match repo.committer() {
        Some(Ok(sig)) => sig.to_owned()?,
        _ => fallback,
    };
    let commit = gix::objs::Commit {
        tree,
        parents: [parent].into_iter().collect(),
        author,
        committer,
        encoding: None,
        message: msg.into(),
        extra_headers: Vec::new(),
    };
    let id = repo.write_object(&commit)?.detach();
    let summary = summary.trim().to_owned();
    // Through HEAD with `deref`, so that both the branch and HEAD get a reflog entry, as `git commit` does.
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: format!("commit (jules series): {summary}").into(),
            },
            expected: PreviousValue::MustExistAndMatch(Target::Object(parent)),
            new: Target::Object(id),
        },
        name: "HEAD".try_into().map_err(gix::Error::from_error)?,
        deref: true,
    };
    repo.edit_reference(edit).map_err(|e| {
        if e.is_conflict() {
            Error::Conflict(format!(
                "{} moved while committing; nothing was committed",
                branch_name(&series)
            ))
        } else {
            e.into()
        }
    })?;
    Ok(Committed {
        branch: branch_name(&series),
        series,
        commit: id,
        parent,
        summary,
    })
}

/// Stage everything and return the index's tree.
///
/// Through `git add -A` and `git write-tree`: gix 0.90 can neither add paths to the index with all of git's
/// ignore and attribute rules nor write a tree from an index.
fn stage_all(workdir: &Path) -> Result<ObjectId> {
    gitcli::run(workdir, ["add", "-A"])?;
    let out = gitcli::run(workdir, ["write-tree"])?;
    let hex = out.stdout.trim();
    ObjectId::from_hex(hex)
        .map_err(|e| Error::wrap(format!("`git write-tree` printed {:?}", hex.as_bstr()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_rationale_is_folded_into_one_trailer() {
        let m = message("  Add thing ", "Because A.\n\nAnd B,\n  indented C.\n").unwrap();
        assert_eq!(
            m,
            "Add thing\n\nRationale: Because A.\n And B,\n   indented C.\n"
        );
        assert_eq!(
            rationale_of(&m).unwrap(),
            "Because A.\nAnd B,\n  indented C."
        );
    }

    #[test]
    fn empty_inputs_are_refused() {
        assert!(message("s", " \n\t\n").is_err());
        assert!(message("", "r").is_err());
        assert!(message("a\nb", "r").is_err());
    }
}
