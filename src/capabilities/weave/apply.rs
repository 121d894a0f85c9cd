//! Applying hunks to file content with exact context, searching at growing line offsets as `git apply` does.
//!
//! Each hunk's preimage (context and removed lines, with their line terminators) must appear verbatim. The
//! search starts where the hunk says it belongs, shifted by how far the previous hunks moved, and tries
//! +1, −1, +2, −2, … lines until it runs off both ends of the file; hunks never go back before the end
//! of the previous one. A hunk that claims line 1 (or an empty file) must match at the start, one without
//! trailing context at the end (git's rules; hunks without any context are exempt). There is no fuzz:
//! a context line that differs is a failure. Every hunk is tried, so one failure does not hide the others.

use super::patch::Hunk;

/// Where a hunk landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// The 0-based line of the file (before this patch) where the preimage was found.
    pub at: usize,
    /// How far that is from where the hunk said (after the previous hunks' offsets).
    pub offset: isize,
}

/// A hunk whose preimage is not in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failed {
    /// Index of the hunk in the file patch.
    pub hunk: usize,
    /// The 0-based line where it was expected (after the previous hunks' offsets) and its preimage length.
    pub expected_at: usize,
    pub len: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    pub data: Vec<u8>,
    pub placed: Vec<Placed>,
}

/// Split content into lines that keep their terminators (memchr: real files are long, and this was a
/// twentieth of a weave of git.git's history byte by byte).
pub fn lines(data: &[u8]) -> Vec<&[u8]> {
    use gix::bstr::ByteSlice;
    let mut out = Vec::with_capacity(data.len() / 32 + 1);
    let mut rest = data;
    while let Some(i) = rest.find_byte(b'\n') {
        let (line, tail) = rest.split_at(i + 1);
        out.push(line);
        rest = tail;
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// The bytes of `data` that the lines `src[range]` (from [`lines`] of `data`) cover, in one piece.
fn span<'a>(data: &'a [u8], src: &[&[u8]], range: std::ops::Range<usize>) -> &'a [u8] {
    if range.is_empty() {
        return &[];
    }
    let start = src[range.start].as_ptr() as usize - data.as_ptr() as usize;
    let last = src[range.end - 1];
    let end = last.as_ptr() as usize - data.as_ptr() as usize + last.len();
    &data[start..end]
}

/// Apply `hunks` to `data`; on failure, every hunk that did not apply.
pub fn apply(data: &[u8], hunks: &[Hunk]) -> Result<Applied, Vec<Failed>> {
    let src = lines(data);
    let mut out = Vec::with_capacity(data.len() + 256);
    let mut cursor = 0usize;
    let mut offset = 0isize;
    let mut placed = Vec::with_capacity(hunks.len());
    let mut failed = Vec::new();
    for (k, h) in hunks.iter().enumerate() {
        let nominal = if h.old_len == 0 {
            h.old_start
        } else {
            h.old_start.saturating_sub(1)
        };
        // A saturated line number (an overflowing header) starts the search at the end, as in git.
        let nominal = isize::try_from(nominal).unwrap_or(isize::MAX);
        let expected = (nominal.saturating_add(offset).max(0) as usize).min(src.len());
        match find(&src, h, expected, cursor) {
            Some(at) => {
                out.extend_from_slice(span(data, &src, cursor..at));
                for l in &h.postimage {
                    out.extend_from_slice(l);
                }
                cursor = at + h.preimage.len();
                let off = at as isize - expected as isize;
                offset += off;
                placed.push(Placed { at, offset: off });
            }
            None => failed.push(Failed {
                hunk: k,
                expected_at: expected,
                len: h.preimage.len(),
            }),
        }
    }
    if !failed.is_empty() {
        return Err(failed);
    }
    out.extend_from_slice(span(data, &src, cursor..src.len()));
    Ok(Applied { data: out, placed })
}

fn matches_at(src: &[&[u8]], pre: &[Vec<u8>], at: usize) -> bool {
    at + pre.len() <= src.len() && pre.iter().zip(&src[at..]).all(|(p, s)| p.as_slice() == *s)
}

fn find(src: &[&[u8]], h: &Hunk, expected: usize, floor: usize) -> Option<usize> {
    let m = h.preimage.len();
    let has_context = h.leading + h.trailing > 0;
    let match_beginning = has_context && h.old_start <= 1 || h.old_start == 0;
    let match_end = has_context && h.trailing == 0;
    if m > src.len() {
        return None;
    }
    let last = src.len() - m;
    let ok = |at: usize| {
        at >= floor
            && (!match_beginning || at == 0)
            && (!match_end || at == last)
            && matches_at(src, &h.preimage, at)
    };
    if match_beginning {
        return ok(0).then_some(0);
    }
    if match_end {
        return ok(last).then_some(last);
    }
    let expected = expected.min(last);
    if ok(expected) {
        return Some(expected);
    }
    let mut d = 1usize;
    loop {
        let fwd = expected + d;
        let back = expected.checked_sub(d);
        let fwd_in = fwd <= last;
        let back_in = back.is_some_and(|b| b >= floor);
        if !fwd_in && !back_in {
            return None;
        }
        if fwd_in && ok(fwd) {
            return Some(fwd);
        }
        if let Some(b) = back.filter(|_| back_in) {
            if ok(b) {
                return Some(b);
            }
        }
        d += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::patch;
    use super::*;

    fn hunks(diff: &str) -> Vec<Hunk> {
        patch::parse(diff.as_bytes()).unwrap().remove(0).hunks
    }

    fn file(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    const INSERT_AFTER_5: &str = "--- a/f\n+++ b/f\n@@ -3,6 +3,7 @@\n line 3\n line 4\n line 5\n+new\n line 6\n line 7\n line 8\n";

    #[test]
    fn exact_position() {
        let out = apply(file(10).as_bytes(), &hunks(INSERT_AFTER_5)).unwrap();
        assert_eq!(out.placed[0], Placed { at: 2, offset: 0 });
        assert!(String::from_utf8(out.data)
            .unwrap()
            .contains("line 5\nnew\nline 6\n"));
    }

    #[test]
    fn moved_context_is_found_at_an_offset() {
        let moved = format!("a\nb\nc\n{}", file(10));
        let out = apply(moved.as_bytes(), &hunks(INSERT_AFTER_5)).unwrap();
        assert_eq!(out.placed[0].offset, 3);
        let shrunk: String = file(10).lines().skip(2).map(|l| format!("{l}\n")).collect();
        let out = apply(shrunk.as_bytes(), &hunks(INSERT_AFTER_5)).unwrap();
        assert_eq!(out.placed[0].offset, -2);
    }

    #[test]
    fn changed_context_fails_and_reports_every_hunk() {
        let two = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-line 1\n+one\n line 2\n@@ -8,3 +8,3 @@\n line 8\n-line 9\n+nine\n line 10\n";
        let changed = file(10).replace("line 9\n", "LINE 9\n");
        let err = apply(changed.as_bytes(), &hunks(two)).unwrap_err();
        assert_eq!(err.len(), 1);
        assert_eq!(err[0].hunk, 1);
        assert_eq!(err[0].expected_at, 7);
    }

    #[test]
    fn beginning_and_end_are_anchored() {
        // The first hunk claims line 1: it must not match further down.
        let at_start = "--- a/f\n+++ b/f\n@@ -1,2 +1,3 @@\n+top\n line 1\n line 2\n";
        let shifted = format!("x\n{}", file(3));
        assert!(apply(shifted.as_bytes(), &hunks(at_start)).is_err());
        // No trailing context: it must match at the end.
        let at_end = "--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n line 2\n line 3\n+end\n";
        assert!(apply(file(3).as_bytes(), &hunks(at_end)).is_ok());
        assert!(apply(file(4).as_bytes(), &hunks(at_end)).is_err());
    }

    #[test]
    fn missing_newline_at_end() {
        let d = "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n";
        let out = apply(b"a\nb", &hunks(d)).unwrap();
        assert_eq!(out.data, b"a\nc\n");
        assert!(apply(b"a\nb\n", &hunks(d)).is_err());
    }

    #[test]
    fn insertion_into_empty_file() {
        let d = "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n";
        assert_eq!(apply(b"", &hunks(d)).unwrap().data, b"a\nb\n");
    }

    /// How far one hunk moved carries to the next (git's `offset`): after the first hunk is found 3 lines
    /// down, the second is looked for 3 lines down and found there, at offset 0.
    #[test]
    fn an_offset_carries_to_the_next_hunk() {
        let two = "--- a/f\n+++ b/f\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+three\n line 4\n@@ -8,3 +8,3 @@\n line 8\n-line 9\n+nine\n line 10\n";
        let moved = format!("a\nb\nc\n{}", file(12));
        let out = apply(moved.as_bytes(), &hunks(two)).unwrap();
        assert_eq!(
            out.placed,
            vec![Placed { at: 4, offset: 3 }, Placed { at: 10, offset: 0 }]
        );
    }

    /// A hunk without context (`git diff -U0`) is anchored neither at the start nor at the end of the file.
    #[test]
    fn a_hunk_without_context_is_not_anchored() {
        let d = "--- a/f\n+++ b/f\n@@ -5,1 +5,1 @@\n-line 5\n+five\n";
        let out = apply(file(10).as_bytes(), &hunks(d)).unwrap();
        assert_eq!(out.placed, vec![Placed { at: 4, offset: 0 }]);
        assert_eq!(out.data, file(10).replace("line 5\n", "five\n").as_bytes());
    }
}
