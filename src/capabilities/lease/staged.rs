//! The paths a commit is about to change: the index against `HEAD`, as `git diff --cached --name-only
//! --no-renames` lists them, read with gix.
//!
//! This is the pre-commit hook's path: starting `git diff --cached` was most of what `lease check --staged`
//! cost a commit (docs/benchmarks.md, "Leases"). The index is the one git names for the hook
//! (`GIT_INDEX_FILE`, which gix honours when the repository is opened with git's environment: `git commit -a`
//! and `git commit PATH` commit a temporary index). Subtrees the index's cache-tree extension records with
//! the same id as `HEAD`'s are not read at all: in a large repository a small change reads a few trees.
//!
//! Like git: unmerged paths count as changed, intent-to-add entries (`git add -N`) do not, a rename is its
//! two paths. A sparse index's directory entries, which this does not expand, count as changed (more to
//! check, never less).

use gix::bstr::{BStr, BString, ByteSlice, ByteVec};
use gix::ObjectId;

use crate::kit::error::{Error, Result};

type Map = foldhash::HashMap<BString, (u32, ObjectId)>;
type Set = foldhash::HashSet<BString>;

/// The paths that differ between `HEAD`'s tree and the index, sorted, each once.
pub fn paths(repo: &gix::Repository) -> Result<Vec<String>> {
    // Read as git reads the index for a hook: its checksum is not verified (git checks it in fsck only; the
    // file is replaced whole under a lock, never written in place), and on one thread (no thread is worth
    // starting for a hook's index; gix still asks the system for its core count, about 0.1 ms here). The
    // index path is gix's, so `GIT_INDEX_FILE` still names it.
    let options = gix::index::decode::Options {
        thread_limit: Some(1),
        ..Default::default()
    };
    let index = match gix::index::File::at(repo.index_path(), repo.object_hash(), true, options) {
        Ok(i) => Some(i),
        Err(_) if !repo.index_path().exists() => None,
        Err(e) => return Err(Error::wrap("reading the index", e)),
    };
    let head_tree = head_tree(repo)?;
    let mut in_head = Map::default();
    let mut clean = Set::default();
    if let Some(tree) = head_tree {
        let cache = index.as_ref().and_then(|i| i.tree());
        walk(
            repo,
            tree,
            BString::default(),
            cache,
            &mut in_head,
            &mut clean,
        )?;
    }
    if clean.contains(BStr::new("")) {
        return Ok(Vec::new());
    }
    let mut out: Vec<String> = Vec::new();
    if let Some(index) = &index {
        for e in index.entries() {
            let path = e.path(index);
            if under_clean(path, &clean) {
                continue;
            }
            if e.flags.contains(gix::index::entry::Flags::INTENT_TO_ADD) {
                continue;
            }
            // A new file (the whole change when HEAD is empty) hashes nothing.
            let head = if in_head.is_empty() {
                None
            } else {
                in_head.remove(path)
            };
            let same = e.stage_raw() == 0
                && head.is_some_and(|(mode, id)| mode == e.mode.bits() && id == e.id);
            if !same {
                out.push(path.to_str_lossy().into_owned());
            }
        }
    }
    // The index is sorted by path (stages of a path adjacent): only files gone from it (or a path that is
    // not UTF-8, read lossily) need a sort.
    if !in_head.is_empty() || !out.is_sorted() {
        out.extend(in_head.into_keys().map(|p| p.to_str_lossy().into_owned()));
        out.sort_unstable();
    }
    out.dedup();
    Ok(out)
}

/// `HEAD`'s tree; `None` when HEAD is unborn or its tree is empty.
fn head_tree(repo: &gix::Repository) -> Result<Option<ObjectId>> {
    let mut head = repo.head().map_err(|e| Error::wrap("reading HEAD", e))?;
    if head.is_unborn() {
        return Ok(None);
    }
    let tree = head
        .peel_to_commit()
        .map_err(|e| Error::wrap("reading HEAD's commit", e))?
        .tree_id()
        .map_err(|e| Error::wrap("reading HEAD's tree", e))?
        .detach();
    Ok((tree != ObjectId::empty_tree(repo.object_hash())).then_some(tree))
}

/// The index mode of a tree entry (git's numbers, as `gix::index::entry::Mode` holds them).
fn mode_bits(kind: gix::objs::tree::EntryKind) -> u32 {
    use gix::objs::tree::EntryKind::*;
    match kind {
        Tree => 0o040000,
        Blob => 0o100644,
        BlobExecutable => 0o100755,
        Link => 0o120000,
        Commit => 0o160000,
    }
}

/// Record the files of `tree` (at `prefix`, `""` or ending in `/`) in `files`; a subtree whose cache-tree
/// node is valid and names the same tree is recorded in `clean` instead of read.
fn walk(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: BString,
    cache: Option<&gix::index::extension::Tree>,
    files: &mut Map,
    clean: &mut Set,
) -> Result<()> {
    if cache.is_some_and(|c| c.num_entries.is_some() && c.id == tree) {
        clean.insert(prefix);
        return Ok(());
    }
    let t = repo
        .find_tree(tree)
        .map_err(|e| Error::wrap(format!("reading tree {tree}"), e))?;
    let decoded = t
        .decode()
        .map_err(|e| Error::wrap(format!("decoding tree {tree}"), e))?;
    for e in &decoded.entries {
        let mut path = prefix.clone();
        path.push_str(e.filename);
        if e.mode.is_tree() {
            let child = cache.and_then(|c| {
                c.children
                    .iter()
                    .find(|k| k.name.as_slice() == e.filename.as_bytes())
            });
            path.push_byte(b'/');
            walk(repo, e.oid.to_owned(), path, child, files, clean)?;
        } else {
            files.insert(path, (mode_bits(e.mode.kind()), e.oid.to_owned()));
        }
    }
    Ok(())
}

/// Whether `path` lies in a directory recorded clean (keys end in `/`).
fn under_clean(path: &BStr, clean: &Set) -> bool {
    if clean.is_empty() {
        return false;
    }
    path.iter()
        .enumerate()
        .filter(|(_, &b)| b == b'/')
        .any(|(i, _)| clean.contains(BStr::new(&path[..=i])))
}
