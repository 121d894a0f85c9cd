//! Picking commits: a 3-way tree merge of (parent, integration tip, commit), as `git cherry-pick` does.

use gix::bstr::BString;
use gix::merge::tree::TreatAsUnresolved;
use gix::ObjectId;

use super::{Engine, Failure};
use crate::capabilities::weave::input::CommitItem;
use crate::kit::error::Result;

impl<'r> Engine<'r> {
    /// Cherry-pick `c` onto `ours`: the new tree, or the conflicts.
    pub(super) fn pick(
        &self,
        c: &CommitItem,
        ours: ObjectId,
        label: &str,
    ) -> Result<std::result::Result<ObjectId, Failure>> {
        if c.parent_tree == ours {
            return Ok(Ok(c.tree));
        }
        if c.tree == c.parent_tree {
            return Ok(Ok(ours));
        }
        self.merge(c.parent_tree, ours, c.tree, label)
    }

    /// 3-way merge of trees; the conflicts explained against the tracker.
    pub(super) fn merge(
        &self,
        base: ObjectId,
        ours: ObjectId,
        theirs: ObjectId,
        label: &str,
    ) -> Result<std::result::Result<ObjectId, Failure>> {
        let labels = gix::merge::blob::builtin_driver::text::Labels {
            ancestor: Some("base".into()),
            current: Some("integration".into()),
            other: Some(label.into()),
        };
        let mut out =
            self.repo
                .merge_trees(base, ours, theirs, labels, self.merge_options.clone())?;
        let how = TreatAsUnresolved::git();
        if !out.has_unresolved_conflicts(how) {
            return Ok(Ok(out.tree.write()?.detach()));
        }
        let mut paths: Vec<(BString, String)> = Vec::new();
        for c in out.conflicts.iter().filter(|c| c.is_unresolved(how)) {
            let (o, t) = c.changes_in_resolution();
            let detail = match &c.resolution {
                Ok(r) => format!("{r:?}"),
                Err(f) => format!("{f:?}"),
            };
            for p in [o.location(), t.location()] {
                if !paths.iter().any(|(q, _)| q == p) {
                    paths.push((p.to_owned(), detail.clone()));
                }
            }
        }
        paths.sort();
        let mut conflicts = Vec::new();
        for (p, detail) in paths {
            conflicts.push(self.explain(p.as_ref(), base, ours, theirs, &detail)?);
        }
        Ok(Err(Failure::Conflict(conflicts)))
    }
}
