//! The in-memory replay engine behind `reroll`, `--drop`, `--move` and `finalize --rebase`.
//!
//! A rewrite is a list of [`Step`]s, each picking one original patch onto the result of the previous step
//! with a three-way tree merge (gix `merge_trees`: base = the patch's original parent tree, ours = the new
//! parent's tree, theirs = the patch's tree), optionally squashing a further change into it (the working tree
//! of a fold) and rewording it. No worktree, index or ref is touched: the caller runs this on a repository
//! with object memory enabled and writes the objects out only when the whole rewrite succeeded.
//!
//! A patch whose new parent is its old parent and which is neither reworded nor squashed keeps its commit
//! as is. Every other commit keeps its author (name, email and date), message (unless reworded) and encoding,
//! and gets the caller's committer (name, email, now), as `git rebase` does. Extra headers (signatures) are
//! dropped, since a rewritten commit's signature would no longer verify.

use gix::bstr::BString;
use gix::merge::tree::TreatAsUnresolved;
use gix::ObjectId;

use crate::kit::error::{Error, Result};

/// One original patch, as read before the rewrite.
#[derive(Debug, Clone)]
pub struct Original {
    /// 1-based position in the series.
    pub index: usize,
    pub commit: ObjectId,
    pub parent: ObjectId,
    pub tree: ObjectId,
    pub parent_tree: ObjectId,
    pub summary: String,
    pub commit_object: gix::objs::Commit,
}

/// "patch 2/3 (1a2b3c4 summary)": how messages name patch `i` (1-based) of `originals`.
pub fn describe(originals: &[Original], i: usize) -> String {
    let o = &originals[i - 1];
    format!(
        "patch {i}/{} ({} {})",
        originals.len(),
        o.commit.to_hex_with_len(7),
        o.summary
    )
}

impl Original {
    /// Read the patches of a linear series (each patch's parent is the previous one, the first one's the
    /// base). A merge commit inside the series is refused: replaying it would need its other parents.
    pub fn read_all(repo: &gix::Repository, patches: &[super::Patch]) -> Result<Vec<Original>> {
        let mut out: Vec<Original> = Vec::with_capacity(patches.len());
        for p in patches {
            let commit = repo.find_commit(p.commit)?;
            let decoded: gix::objs::Commit = commit.decode()?.try_into()?;
            if decoded.parents.len() != 1 {
                return Err(Error::usage(format!(
                    "patch {} ({}) is a merge commit or a root commit: only linear series can be rewritten",
                    p.index,
                    p.commit.to_hex_with_len(7)
                )));
            }
            let parent = decoded.parents[0];
            let parent_tree = match out.last() {
                Some(prev) if prev.commit == parent => prev.tree,
                _ => repo.find_commit(parent)?.tree_id()?.detach(),
            };
            out.push(Original {
                index: p.index,
                commit: p.commit,
                parent,
                tree: p.tree,
                parent_tree,
                summary: p.summary.clone(),
                commit_object: decoded,
            });
        }
        Ok(out)
    }
}

/// A change to squash into a step: the difference from `base` to `tree`.
#[derive(Debug, Clone, Copy)]
pub struct Squash {
    pub base: ObjectId,
    pub tree: ObjectId,
}

/// Pick original patch `index` (1-based), optionally with a new message and a change squashed in.
#[derive(Debug, Clone)]
pub struct Step {
    pub index: usize,
    pub message: Option<BString>,
    pub squash: Option<Squash>,
}

impl Step {
    pub fn pick(index: usize) -> Step {
        Step {
            index,
            message: None,
            squash: None,
        }
    }
}

/// One commit of the result.
#[derive(Debug, Clone)]
pub struct Picked {
    /// The original patch it comes from.
    pub from: usize,
    pub commit: ObjectId,
    pub tree: ObjectId,
    /// The original commit was kept as is.
    pub reused: bool,
    /// It makes exactly the change the original made (same files, same blobs before and after), known without
    /// comparing diffs.
    pub same_change: bool,
}

/// Why a rewrite stopped. Nothing was written anywhere but to the caller's object memory.
#[derive(Debug, Clone)]
pub enum Stop {
    /// Step `position` (0-based in the steps) could not pick patch `from`: the merge left these paths
    /// unresolved (or, for `squash`, squashing the extra change into it did).
    Conflict {
        position: usize,
        from: usize,
        squash: bool,
        paths: Vec<String>,
    },
    /// Patch `from`, which changes something, would change nothing after the rewrite: its changes are
    /// already there.
    Empty { position: usize, from: usize },
}

/// Replay `steps` onto commit `onto` (whose tree is `onto_tree`). `originals` are all the series' patches,
/// indexed by `Step::index - 1`.
///
/// A pick whose patch touches none of the paths in which the new parent differs from the patch's old parent
/// (file by file, a directory counting as the files below it) is applied as a tree edit: the patch's tree
/// with those differences carried over. That is the result the three-way merge would compute, without its
/// rename tracking and caches; anything else goes through [`Merger::merge`]. A squashed change is applied the
/// same way when the picked tree leaves its paths as its base has them.
pub fn replay(
    repo: &gix::Repository,
    onto: ObjectId,
    onto_tree: ObjectId,
    originals: &[Original],
    steps: &[Step],
    committer: &gix::actor::Signature,
) -> Result<std::result::Result<Vec<Picked>, Stop>> {
    let mut merger: Option<Merger<'_>> = None;
    let (mut cur, mut cur_tree) = (onto, onto_tree);
    // The difference between the current tree and the original tree of the previous step's patch, when known.
    let mut carried: Option<(ObjectId, Vec<RawChange>)> = None;
    let mut out = Vec::with_capacity(steps.len());
    for (position, step) in steps.iter().enumerate() {
        let o = &originals[step.index - 1];
        let mut same_change = true;
        let mut tree = if cur_tree == o.parent_tree {
            o.tree
        } else {
            let delta = match carried.take() {
                Some((from, delta)) if from == o.parent_tree => delta,
                _ => raw_changes(repo, o.parent_tree, cur_tree)?,
            };
            if untouched(repo, o.parent_tree, o.tree, &delta)? {
                let t = apply(repo, o.tree, &delta)?;
                carried = Some((o.tree, delta));
                t
            } else {
                same_change = false;
                let m = match merger.as_mut() {
                    Some(m) => m,
                    None => merger.insert(Merger::new(repo)?),
                };
                match m.merge(o.parent_tree, cur_tree, o.tree)? {
                    Ok(t) => t,
                    Err(paths) => {
                        return Ok(Err(Stop::Conflict {
                            position,
                            from: o.index,
                            squash: false,
                            paths,
                        }))
                    }
                }
            }
        };
        if let Some(sq) = step.squash {
            same_change = false;
            carried = None;
            // The squashed change is usually small (a fix), and the picked tree leaves its paths as the squash's
            // base has them: then it is a tree edit, as for a pick, rather than a merge of the whole series'
            // difference between the picked patch and the base (the tip).
            tree = if tree == sq.base {
                sq.tree
            } else if let Some(t) = edit_if_untouched(repo, sq, tree)? {
                t
            } else {
                let m = match merger.as_mut() {
                    Some(m) => m,
                    None => merger.insert(Merger::new(repo)?),
                };
                match m.merge(sq.base, tree, sq.tree)? {
                    Ok(t) => t,
                    Err(paths) => {
                        return Ok(Err(Stop::Conflict {
                            position,
                            from: o.index,
                            squash: true,
                            paths,
                        }))
                    }
                }
            };
        }
        if tree == cur_tree && o.tree != o.parent_tree {
            return Ok(Err(Stop::Empty {
                position,
                from: o.index,
            }));
        }
        let reuse = cur == o.parent && step.message.is_none() && tree == o.tree;
        let commit = if reuse {
            o.commit
        } else {
            let src = &o.commit_object;
            let new = gix::objs::Commit {
                tree,
                parents: [cur].into_iter().collect(),
                author: src.author.clone(),
                committer: committer.clone(),
                encoding: src.encoding.clone(),
                message: step.message.clone().unwrap_or_else(|| src.message.clone()),
                extra_headers: Vec::new(),
            };
            write(repo, &new)?
        };
        out.push(Picked {
            from: o.index,
            commit,
            tree,
            reused: reuse,
            same_change,
        });
        cur = commit;
        cur_tree = tree;
    }
    Ok(Ok(out))
}

/// `tree` with the change `sq` written over it, when `tree` has every path that change touches as `sq.base`
/// has it (what the three-way merge would compute); `None` when it does not.
fn edit_if_untouched(
    repo: &gix::Repository,
    sq: Squash,
    tree: ObjectId,
) -> Result<Option<ObjectId>> {
    let delta = raw_changes(repo, sq.base, sq.tree)?;
    if untouched(repo, sq.base, tree, &delta)? {
        Ok(Some(apply(repo, tree, &delta)?))
    } else {
        Ok(None)
    }
}

/// The patch from `before` to `after` leaves every path of `changes` alone: the same entry (or none) at each,
/// and no file in the way of one (a file where the path needs a directory, or the other way round).
fn untouched(
    repo: &gix::Repository,
    before: ObjectId,
    after: ObjectId,
    changes: &[RawChange],
) -> Result<bool> {
    for (path, ..) in changes {
        if !same_at(repo, before, after, path)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Trees `a` and `b` hold the same entry at `path`, or neither holds one. Walks down only while the
/// subtrees differ.
fn same_at(repo: &gix::Repository, a: ObjectId, b: ObjectId, path: &BString) -> Result<bool> {
    let names: Vec<&[u8]> = path.split(|c| *c == b'/').collect();
    let (mut ta, mut tb) = (a, b);
    for (i, name) in names.iter().enumerate() {
        if ta == tb {
            return Ok(true);
        }
        match (entry(repo, ta, name)?, entry(repo, tb, name)?) {
            (None, None) => return Ok(true),
            (Some(x), Some(y)) if x == y => return Ok(true),
            (Some((ma, ia)), Some((mb, ib)))
                if ma.is_tree() && mb.is_tree() && i + 1 < names.len() =>
            {
                ta = ia;
                tb = ib;
            }
            _ => return Ok(false),
        }
    }
    Ok(false)
}

fn entry(
    repo: &gix::Repository,
    tree: ObjectId,
    name: &[u8],
) -> Result<Option<(gix::objs::tree::EntryMode, ObjectId)>> {
    let t = repo.find_tree(tree)?;
    let decoded = t.decode()?;
    Ok(decoded
        .entries
        .iter()
        .find(|e| e.filename == name)
        .map(|e| (e.mode, e.oid.to_owned())))
}

/// `tree` with the new side of `changes` written over it.
fn apply(repo: &gix::Repository, tree: ObjectId, changes: &[RawChange]) -> Result<ObjectId> {
    use gix::objs::tree::{EntryKind, EntryMode};
    let root = repo.find_tree(tree)?.decode()?.into();
    let mut editor = gix::objs::tree::Editor::new(root, &repo.objects, repo.object_hash());
    let components =
        |p: &BString| -> Vec<BString> { p.split(|b| *b == b'/').map(BString::from).collect() };
    // Removals first: a file that becomes a directory (or the other way round) is removed before its
    // replacement goes in.
    let ordered = changes
        .iter()
        .filter(|c| c.3 == 0)
        .chain(changes.iter().filter(|c| c.3 != 0));
    for (path, _, _, mode, id) in ordered {
        let edit = if *mode == 0 {
            editor.remove(components(path))
        } else {
            let kind: EntryKind = EntryMode::try_from(u32::from(*mode))
                .map_err(|m| Error::Other(format!("bad tree entry mode {m:o} at {path}")))?
                .kind();
            editor.upsert(components(path), kind, *id)
        };
        edit.map_err(|e| Error::wrap(format!("editing tree {tree} at {path}"), e))?;
    }
    editor
        .write(|t| write(repo, t))
        .map_err(|e| Error::wrap(format!("writing the edited tree {tree}"), e))
}

/// Three-way tree merges with the diff and blob-merge caches (and their attribute stacks) set up once for a
/// whole rewrite, rather than once per merge as `Repository::merge_trees` does. Merged trees are written
/// without gix's per-entry validation: every name in them comes from trees already in the repository.
pub struct Merger<'r> {
    repo: &'r gix::Repository,
    diff_state: gix::diff::tree::State,
    diff_cache: gix::diff::blob::Platform,
    blob_merge: gix::merge::blob::Platform,
    options: gix::merge::plumbing::tree::Options,
}

impl<'r> Merger<'r> {
    pub fn new(repo: &'r gix::Repository) -> Result<Self> {
        Ok(Merger {
            repo,
            diff_state: Default::default(),
            diff_cache: repo.diff_resource_cache_for_tree_diff()?,
            blob_merge: repo.merge_resource_cache(Default::default())?,
            options: repo.tree_merge_options()?.into(),
        })
    }

    /// Merge `theirs` into `ours` with `base` as their ancestor: the new tree, or the unresolved paths
    /// (sorted, deduplicated).
    pub fn merge(
        &mut self,
        base: ObjectId,
        ours: ObjectId,
        theirs: ObjectId,
    ) -> Result<std::result::Result<ObjectId, Vec<String>>> {
        if ours == base {
            return Ok(Ok(theirs));
        }
        if theirs == base || theirs == ours {
            return Ok(Ok(ours));
        }
        let labels = gix::merge::blob::builtin_driver::text::Labels {
            ancestor: None,
            current: None,
            other: None,
        };
        let repo = self.repo;
        let mut outcome = gix::merge::plumbing::tree(
            &base,
            &ours,
            &theirs,
            labels,
            repo,
            |buf| repo.write_blob(buf).map(|id| id.detach()),
            &mut self.diff_state,
            &mut self.diff_cache,
            &mut self.blob_merge,
            self.options.clone(),
        )
        .map_err(|e| Error::wrap(format!("merging trees {base}, {ours} and {theirs}"), e))?;
        let how = TreatAsUnresolved::git();
        if outcome.has_unresolved_conflicts(how) {
            let mut paths: Vec<String> = Vec::new();
            for c in outcome.conflicts.iter().filter(|c| c.is_unresolved(how)) {
                let (a, b) = c.changes_in_resolution();
                for p in [a.location(), b.location()] {
                    let p = p.to_string();
                    if !paths.contains(&p) {
                        paths.push(p);
                    }
                }
            }
            paths.sort();
            return Ok(Err(paths));
        }
        let tree = outcome.tree.write(|tree| write(repo, tree))?;
        Ok(Ok(tree))
    }
}

/// Write `object` through the repository's object database, which holds it in memory during a rewrite;
/// unlike `Repository::write_object` this does not first look the object up on disk (every lookup of a new
/// tree would stat a loose-object path), and an object that exists on disk is still kept in memory, where
/// the next steps read it cheaply.
fn write(repo: &gix::Repository, object: &dyn gix::objs::WriteTo) -> gix::Result<ObjectId> {
    use gix::objs::Write as _;
    repo.objects.write(object)
}

/// A file-level change: path, old mode and id, new mode and id (mode 0 and the null id for a side that does
/// not exist).
pub type RawChange = (BString, u16, ObjectId, u16, ObjectId);

/// The file-level changes between two trees, without rename detection or line diffs: cheap, and equal for
/// two patches that change the same files from the same blobs to the same blobs.
pub fn raw_changes(repo: &gix::Repository, a: ObjectId, b: ObjectId) -> Result<Vec<RawChange>> {
    use gix::diff::tree::recorder::Change as C;
    if a == b {
        return Ok(Vec::new());
    }
    let zero = ObjectId::null(repo.object_hash());
    let (ta, tb) = (repo.find_tree(a)?, repo.find_tree(b)?);
    let mut recorder = gix::diff::tree::Recorder::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&ta.data, a.kind()),
        gix::objs::TreeRefIter::from_bytes(&tb.data, b.kind()),
        gix::diff::tree::State::default(),
        &repo.objects,
        &mut recorder,
    )
    .map_err(|e| Error::wrap(format!("comparing trees {a} and {b}"), e))?;
    let mut out = Vec::new();
    for ch in recorder.records {
        match ch {
            C::Addition {
                path,
                entry_mode,
                oid,
                ..
            } if !entry_mode.is_tree() => out.push((path, 0, zero, entry_mode.value(), oid)),
            C::Deletion {
                path,
                entry_mode,
                oid,
                ..
            } if !entry_mode.is_tree() => out.push((path, entry_mode.value(), oid, 0, zero)),
            C::Modification {
                path,
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
            } if !(previous_entry_mode.is_tree() && entry_mode.is_tree()) => out.push((
                path,
                previous_entry_mode.value(),
                previous_oid,
                entry_mode.value(),
                oid,
            )),
            _ => {}
        }
    }
    out.sort();
    Ok(out)
}

/// Write every object kept in `mem`'s object memory to `disk`'s object database, as loose objects without a
/// compressor ([`crate::store::loose`]: starting a zlib stream per object cost more than a rewrite's whole
/// replay).
pub fn flush(mem: &mut gix::Repository, disk: &gix::Repository) -> Result<usize> {
    let Some(storage) = mem.objects.take_object_memory() else {
        return Ok(0);
    };
    let mut n = 0;
    for (id, (kind, data)) in storage.iter() {
        if disk.has_object(id) {
            continue;
        }
        crate::store::loose::write_encoded(disk, *kind, data, *id)?;
        n += 1;
    }
    Ok(n)
}
