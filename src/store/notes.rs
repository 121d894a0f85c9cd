//! Git notes under `refs/notes/jules/*`: reading, writing with compare-and-swap, and the union of two copies.
//!
//! Notes are caches and annotations (verify results, review comments). Divergent copies are joined by a
//! union in which our note wins where both annotate the same object; the result is a notes commit with both
//! parents, as `git notes merge -s ours` would make.

use gix::bstr::BString;
use gix::objs::FindExt;
use gix::ObjectId;

use crate::kit::error::{Error, Result};
use crate::store::refs::target as ref_target;

/// The text of the note on `object` in `notes_ref`, if any.
pub fn read(repo: &gix::Repository, notes_ref: &str, object: ObjectId) -> Result<Option<Vec<u8>>> {
    let Some(tip) = ref_target(repo, notes_ref)? else {
        return Ok(None);
    };
    read_at(repo, tip, object)
}

/// The note on `object` in the notes commit `notes_commit`.
pub fn read_at(
    repo: &gix::Repository,
    notes_commit: ObjectId,
    object: ObjectId,
) -> Result<Option<Vec<u8>>> {
    let tree = repo.find_commit(notes_commit)?.tree_id()?.detach();
    let mut state = gix::note::plumbing::State::new(tree, &repo.objects)
        .map_err(|e| Error::wrap(format!("reading notes tree {tree}"), e))?;
    let Some(blob) = state
        .get(&object, &repo.objects)
        .map_err(|e| Error::wrap("reading notes", e))?
    else {
        return Ok(None);
    };
    Ok(Some(repo.find_blob(blob)?.data.clone()))
}

/// Rewrite the notes on several objects in one notes commit: `update` gets each object's current note (read
/// again at every attempt, so a concurrent writer's note is never lost) and returns the new text. Retries when
/// a concurrent writer moved the ref.
pub fn update_many(
    repo: &gix::Repository,
    notes_ref: &str,
    objects: &[ObjectId],
    update: impl Fn(ObjectId, Option<&[u8]>) -> Vec<u8>,
    message: &str,
) -> Result<()> {
    if objects.is_empty() {
        return Ok(());
    }
    for attempt in 0..100u32 {
        let tip = ref_target(repo, notes_ref)?;
        let tree = match tip {
            Some(t) => repo.find_commit(t)?.tree_id()?.detach(),
            None => crate::store::loose::empty_tree(repo)?,
        };
        let mut state = gix::note::plumbing::State::new(tree, &repo.objects)
            .map_err(|e| Error::wrap("reading notes tree", e))?;
        for object in objects {
            let current = state
                .get(object, &repo.objects)
                .map_err(|e| Error::wrap("reading notes", e))?;
            let current = match current {
                Some(blob) => Some(repo.find_blob(blob)?.data.clone()),
                None => None,
            };
            let text = update(*object, current.as_deref());
            let blob = repo.write_blob(&text)?.detach();
            state
                .edit(*object, Some(blob), &repo.objects)
                .map_err(|e| Error::wrap("editing notes", e))?;
        }
        let new_tree = state
            .write(&repo.objects)
            .map_err(|e| Error::wrap("writing notes tree", e))?;
        let commit = notes_commit(repo, new_tree, tip.into_iter().collect(), message)?;
        match crate::store::refs::cas(repo, notes_ref, tip, commit, message) {
            Ok(true) => return Ok(()),
            Ok(false) => std::thread::sleep(std::time::Duration::from_millis(
                1 + u64::from(attempt % 10),
            )),
            Err(e) => return Err(e),
        }
    }
    Err(Error::Race {
        message: format!("gave up writing {notes_ref}: it keeps moving"),
    })
}

/// Join two notes commits: every note of both, ours where both annotate the same object.
pub fn union(repo: &gix::Repository, ours: ObjectId, theirs: ObjectId) -> Result<ObjectId> {
    let our_tree = repo.find_commit(ours)?.tree_id()?.detach();
    let their_tree = repo.find_commit(theirs)?.tree_id()?.detach();
    let mut state = gix::note::plumbing::State::new(our_tree, &repo.objects)
        .map_err(|e| Error::wrap("reading notes tree", e))?;
    let mut theirs_notes = Vec::new();
    collect_notes(repo, their_tree, String::new(), &mut theirs_notes)?;
    for (object, blob) in theirs_notes {
        let present = state
            .get(&object, &repo.objects)
            .map_err(|e| Error::wrap("reading notes", e))?;
        if present.is_none() {
            state
                .edit(object, Some(blob), &repo.objects)
                .map_err(|e| Error::wrap("editing notes", e))?;
        }
    }
    let tree = state
        .write(&repo.objects)
        .map_err(|e| Error::wrap("writing notes tree", e))?;
    let mut parents = vec![ours, theirs];
    parents.sort();
    notes_commit(repo, tree, parents, "jules: merge notes")
}

/// Every (annotated object, note blob) of the notes tree `tree`, through any fanout.
pub fn list(repo: &gix::Repository, tree: ObjectId) -> Result<Vec<(ObjectId, ObjectId)>> {
    let mut out = Vec::new();
    collect_notes(repo, tree, String::new(), &mut out)?;
    Ok(out)
}

/// Every (annotated object, note blob) of a notes tree, through any fanout.
fn collect_notes(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: String,
    out: &mut Vec<(ObjectId, ObjectId)>,
) -> Result<()> {
    let mut buf = Vec::new();
    let entries: Vec<(String, ObjectId, bool)> = repo
        .objects
        .find_tree(&tree, &mut buf)
        .map_err(|e| Error::wrap(format!("reading notes tree {tree}"), e))?
        .entries
        .iter()
        .map(|e| (e.filename.to_string(), e.oid.to_owned(), e.mode.is_tree()))
        .collect();
    for (name, oid, is_tree) in entries {
        let path = format!("{prefix}{name}");
        if is_tree {
            if name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit()) {
                collect_notes(repo, oid, path, out)?;
            }
        } else if let Ok(object) = ObjectId::from_hex(path.as_bytes()) {
            out.push((object, oid));
        }
    }
    Ok(())
}

fn notes_commit(
    repo: &gix::Repository,
    tree: ObjectId,
    parents: Vec<ObjectId>,
    message: &str,
) -> Result<ObjectId> {
    let sig = crate::kit::repo::committer(repo);
    let commit = gix::objs::Commit {
        tree,
        parents: parents.into_iter().collect(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: BString::from(format!("{message}\n")),
        extra_headers: Vec::new(),
    };
    Ok(repo.write_object(&commit)?.detach())
}
