//! Which woven input changed which lines: spans in the coordinates of the integration tip.
//!
//! Every commit weave writes is diffed (per changed file, line by line) against the tip before it; the
//! spans of earlier inputs are moved through that diff, and the changed lines become the new input's spans.
//! A hunk that fails later is mapped into the same coordinates and intersected with these spans: that names
//! the counterpart in a conflict mail ("conflicts with curator's change to src/x.rs:40-52").

use std::collections::HashMap;
use std::ops::Range;

use gix::bstr::{BStr, BString};
use gix::diff::blob::{sources::byte_lines, Algorithm, Diff, InternedInput};

/// A changed region between two versions of a file, in 0-based line numbers.
pub type LineHunk = gix::diff::blob::Hunk;

/// The line hunks turning `old` into `new` (histogram diff, git's slider heuristic).
pub fn diff_lines(old: &[u8], new: &[u8]) -> Vec<LineHunk> {
    let input = InternedInput::new(byte_lines(old), byte_lines(new));
    let mut d = Diff::compute(Algorithm::Histogram, &input);
    d.postprocess_lines(&input);
    d.hunks().collect()
}

/// Where line range `r` of the old version lies in the new one. A range end inside a changed region
/// stretches to cover what replaced it.
pub fn map_range(hunks: &[LineHunk], r: Range<u32>) -> Range<u32> {
    let map_start = |x: u32| {
        let mut delta: i64 = 0;
        for h in hunks {
            if x < h.before.start {
                break;
            }
            if x < h.before.end {
                return h.after.start;
            }
            delta = h.after.end as i64 - h.before.end as i64;
        }
        (x as i64 + delta).max(0) as u32
    };
    let map_end = |e: u32| {
        let mut delta: i64 = 0;
        for h in hunks {
            if e <= h.before.start {
                break;
            }
            if e <= h.before.end {
                return h.after.end;
            }
            delta = h.after.end as i64 - h.before.end as i64;
        }
        (e as i64 + delta).max(0) as u32
    };
    let s = map_start(r.start);
    let e = map_end(r.end).max(s);
    s..e
}

/// A run of lines some woven input changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub lines: Range<u32>,
    pub owner: usize,
}

#[derive(Debug, Default, Clone)]
pub struct Tracker {
    files: HashMap<BString, Vec<Span>>,
    /// Paths an input deleted, and which.
    deleted: HashMap<BString, usize>,
}

impl Tracker {
    /// `owner` changed `path` from `old` to `new` (either may be empty for an added or deleted file).
    pub fn change(&mut self, path: &BStr, old: &[u8], new: &[u8], owner: usize) {
        let hunks = diff_lines(old, new);
        self.change_with(path, &hunks, owner);
    }

    pub fn change_with(&mut self, path: &BStr, hunks: &[LineHunk], owner: usize) {
        let spans = self.files.entry(path.to_owned()).or_default();
        for s in spans.iter_mut() {
            s.lines = map_range(hunks, s.lines.clone());
        }
        spans.retain(|s| !s.lines.is_empty());
        for h in hunks {
            let lines = if h.after.is_empty() {
                // A deletion touches the lines on both sides of where it happened.
                h.after.start.saturating_sub(1)..h.after.start + 1
            } else {
                h.after.clone()
            };
            spans.push(Span { lines, owner });
        }
        self.deleted.remove(path);
    }

    pub fn rename(&mut self, from: &BStr, to: &BStr) {
        if let Some(spans) = self.files.remove(from) {
            self.files.insert(to.to_owned(), spans);
        }
    }

    pub fn delete(&mut self, path: &BStr, owner: usize) {
        self.files.remove(path);
        self.deleted.insert(path.to_owned(), owner);
    }

    pub fn deleted_by(&self, path: &BStr) -> Option<usize> {
        self.deleted.get(path).copied()
    }

    /// Spans of `path` that intersect `r`, the latest change first.
    pub fn overlapping(&self, path: &BStr, r: Range<u32>) -> Vec<Span> {
        let mut out: Vec<Span> = self
            .files
            .get(path)
            .map(|spans| {
                spans
                    .iter()
                    .filter(|s| s.lines.start < r.end.max(r.start + 1) && r.start < s.lines.end)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        out.reverse();
        out
    }

    /// Every span of `path`, the latest change first.
    pub fn spans(&self, path: &BStr) -> Vec<Span> {
        let mut out = self.files.get(path).cloned().unwrap_or_default();
        out.reverse();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(lines: &[&str]) -> Vec<u8> {
        lines
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn spans_move_with_later_changes() {
        let base = text(&["a", "b", "c", "d", "e", "f", "g", "h"]);
        let first = text(&["a", "b", "c", "d", "E", "f", "g", "h"]);
        let mut t = Tracker::default();
        t.change("x".into(), &base, &first, 0);
        assert_eq!(t.spans("x".into())[0].lines, 4..5);
        // Two lines inserted at the top push the span down.
        let second = text(&["0", "1", "a", "b", "c", "d", "E", "f", "g", "h"]);
        t.change("x".into(), &first, &second, 1);
        let spans = t.spans("x".into());
        assert_eq!(
            spans[0],
            Span {
                lines: 0..2,
                owner: 1
            }
        );
        assert_eq!(
            spans[1],
            Span {
                lines: 6..7,
                owner: 0
            }
        );
        assert_eq!(t.overlapping("x".into(), 5..8).len(), 1);
        assert!(t.overlapping("x".into(), 2..6).is_empty());
        t.rename("x".into(), "y".into());
        assert_eq!(t.spans("y".into()).len(), 2);
        t.delete("y".into(), 2);
        assert_eq!(t.deleted_by("y".into()), Some(2));
    }

    #[test]
    fn ranges_map_through_changes() {
        let hunks = diff_lines(
            &text(&["a", "b", "c", "d"]),
            &text(&["a", "X", "Y", "c", "d"]),
        );
        assert_eq!(map_range(&hunks, 2..4), 3..5);
        assert_eq!(map_range(&hunks, 1..2), 1..3);
        assert_eq!(map_range(&hunks, 0..1), 0..1);
    }
}
