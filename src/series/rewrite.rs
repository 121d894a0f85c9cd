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

use crate::error::{Error, Result};

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
pub fn replay(
    repo: &gix::Repository,
    onto: ObjectId,
    onto_tree: ObjectId,
    originals: &[Original],
    steps: &[Step],
    committer: &gix::actor::Signature,
) -> Result<std::result::Result<Vec<Picked>, Stop>> {
    let mut merger = Merger::new(repo)?;
    let (mut cur, mut cur_tree) = (onto, onto_tree);
    let mut out = Vec::with_capacity(steps.len());
    for (position, step) in steps.iter().enumerate() {
        let o = &originals[step.index - 1];
        let mut tree = if cur_tree == o.parent_tree {
            o.tree
        } else {
            match merger.merge(o.parent_tree, cur_tree, o.tree)? {
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
        };
        if let Some(sq) = step.squash {
            tree = if tree == sq.base {
                sq.tree
            } else {
                match merger.merge(sq.base, tree, sq.tree)? {
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
            repo.write_object(&new)?.detach()
        };
        out.push(Picked {
            from: o.index,
            commit,
            tree,
            reused: reuse,
        });
        cur = commit;
        cur_tree = tree;
    }
    Ok(Ok(out))
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
        .map_err(|e| Error::Other(format!("merging trees {base}, {ours} and {theirs}: {e:#}")))?;
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
        let tree = outcome
            .tree
            .write(|tree| repo.write_object(tree).map(|id| id.detach()))?;
        Ok(Ok(tree))
    }
}

/// Write every object kept in `mem`'s object memory to `disk`'s object database.
pub fn flush(mem: &mut gix::Repository, disk: &gix::Repository) -> Result<usize> {
    use gix::objs::Write as _;
    let Some(storage) = mem.objects.take_object_memory() else {
        return Ok(0);
    };
    let mut n = 0;
    for (_, (kind, data)) in storage.iter() {
        disk.objects
            .write_buf(*kind, data)
            .map_err(|e| Error::Other(format!("writing rewritten objects: {e}")))?;
        n += 1;
    }
    Ok(n)
}
