//! Conflict explanation: why a path conflicts, hunk by hunk, and which earlier woven input (the
//! counterpart) changed the lines in the way, from the [`Tracker`](crate::capabilities::weave::footprint::Tracker).

use std::ops::Range;

use gix::bstr::BStr;
use gix::ObjectId;

use super::{fmt_range, one_based, Engine};
use crate::capabilities::weave::apply;
use crate::capabilities::weave::footprint::{diff_lines, map_range};
use crate::capabilities::weave::report::{Counterpart, FileConflict, HunkConflict};
use crate::kit::error::Result;

impl<'r> Engine<'r> {
    /// Why `path` conflicts in the merge of (base, ours, theirs), hunk by hunk where both sides changed
    /// the content.
    pub(super) fn explain(
        &self,
        path: &BStr,
        base: ObjectId,
        ours: ObjectId,
        theirs: ObjectId,
        detail: &str,
    ) -> Result<FileConflict> {
        let b = self.blob_at(base, path)?;
        let o = self.blob_at(ours, path)?;
        let t = self.blob_at(theirs, path)?;
        let mut fc = FileConflict {
            path: path.to_string(),
            reason: String::new(),
            hunks: Vec::new(),
            counterparts: Vec::new(),
            leases: Vec::new(),
        };
        match (b, o, t) {
            (Some(b), Some(o), Some(t)) => {
                fc.reason = "content conflict: both changed the same lines".into();
                let their = diff_lines(&b, &t);
                let our = diff_lines(&b, &o);
                let n_base = apply::lines(&b).len() as u32;
                for th in &their {
                    let touches = our.iter().any(|oh| {
                        th.before.start <= oh.before.end && oh.before.start <= th.before.end
                    });
                    if !touches {
                        continue;
                    }
                    let cs = th.before.start.saturating_sub(3);
                    let ce = (th.before.end + 3).min(n_base);
                    let a_start = th.after.start.saturating_sub(th.before.start - cs);
                    let a_end = th.after.end + (ce - th.before.end);
                    let header = format!(
                        "@@ -{} +{} @@",
                        fmt_range(cs, ce - cs),
                        fmt_range(a_start, a_end - a_start)
                    );
                    let mapped = map_range(&our, cs..ce);
                    fc.hunks.push(HunkConflict {
                        header,
                        lines: one_based(&mapped),
                        counterparts: self.counterparts(path, mapped),
                    });
                }
                if fc.hunks.is_empty() {
                    fc.counterparts = self.counterparts(path, 0..u32::MAX);
                }
            }
            (Some(_), None, Some(_)) => {
                fc.reason = "deleted in the integration branch, changed by the input".into();
                fc.counterparts = self.deleted_counterpart(path);
            }
            (Some(_), Some(_), None) => {
                fc.reason = "deleted by the input, changed in the integration branch".into();
                fc.counterparts = self.counterparts(path, 0..u32::MAX);
            }
            (None, Some(_), Some(_)) => {
                fc.reason = "added on both sides with different content".into();
                fc.counterparts = self.counterparts(path, 0..u32::MAX);
            }
            _ => {
                fc.reason = format!("tree conflict ({detail})");
                fc.counterparts = self.counterparts(path, 0..u32::MAX);
            }
        }
        Ok(fc)
    }

    /// Earlier inputs whose changed lines intersect `r` in `path`, one entry per woven commit.
    pub(super) fn counterparts(&self, path: &BStr, r: Range<u32>) -> Vec<Counterpart> {
        let mut out: Vec<Counterpart> = Vec::new();
        // A tracker that cannot be brought up to date (an object that cannot be read) names no one.
        let Ok(tracker) = self.tracker() else {
            return out;
        };
        for s in tracker.overlapping(path, r) {
            let o = &self.owners[s.owner];
            let commit = o.commit.to_hex_with_len(7).to_string();
            let lines = one_based(&s.lines);
            match out.iter_mut().find(|c| c.commit == commit) {
                Some(c) => {
                    c.lines = [c.lines[0].min(lines[0]), c.lines[1].max(lines[1])];
                }
                None => out.push(Counterpart {
                    input: o.label.clone(),
                    persona: o.persona.clone(),
                    commit,
                    path: path.to_string(),
                    lines,
                }),
            }
        }
        out
    }

    pub(super) fn deleted_counterpart(&self, path: &BStr) -> Vec<Counterpart> {
        let Ok(tracker) = self.tracker() else {
            return Vec::new();
        };
        tracker
            .deleted_by(path)
            .map(|i| {
                let o = &self.owners[i];
                Counterpart {
                    input: o.label.clone(),
                    persona: o.persona.clone(),
                    commit: o.commit.to_hex_with_len(7).to_string(),
                    path: path.to_string(),
                    lines: [0, 0],
                }
            })
            .into_iter()
            .collect()
    }
}
