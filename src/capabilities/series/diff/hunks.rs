//! The hunks of a text diff, git-exact: imara-diff's histogram with git's slider heuristics, three lines of
//! context, hunk grouping, the funcname after `@@` and `\\ No newline at end of file` (git's `xemit.c`).

use std::io::Write as _;

use gix::diff::blob::{Algorithm, Diff, InternedInput};

/// Lines of context around changes, as git's default.
const CONTEXT: u32 = 3;

/// The hunks of a text diff, git-exact with `--histogram`, and the insertion and deletion counts.
pub fn hunks(old: &[u8], new: &[u8]) -> (Vec<u8>, u32, u32) {
    hunks_with(old, new, Algorithm::Histogram)
}

/// [`hunks`] with another line-diff algorithm (`git log -p` and range-diff use git's default, Myers).
pub fn hunks_with(old: &[u8], new: &[u8], algorithm: Algorithm) -> (Vec<u8>, u32, u32) {
    hunks_full(old, new, algorithm, &default_funcname)
}

/// A function-name matcher: the text to show after `@@` when `line` (without its newline) is a function
/// line, as a diff driver's `xfuncname` gives it.
pub type Funcname = dyn Fn(&[u8]) -> Option<&[u8]>;

/// [`hunks_with`] with another function-name matcher.
pub fn hunks_full(
    old: &[u8],
    new: &[u8],
    algorithm: Algorithm,
    matcher: &Funcname,
) -> (Vec<u8>, u32, u32) {
    let input = InternedInput::new(
        gix::diff::blob::sources::byte_lines(old),
        gix::diff::blob::sources::byte_lines(new),
    );
    let mut diff = Diff::compute(algorithm, &input);
    diff.postprocess_lines(&input);
    let changes: Vec<(std::ops::Range<u32>, std::ops::Range<u32>)> =
        diff.hunks().map(|h| (h.before, h.after)).collect();
    let old_lines: Vec<&[u8]> = input.before.iter().map(|t| input.interner[*t]).collect();
    let new_lines: Vec<&[u8]> = input.after.iter().map(|t| input.interner[*t]).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < changes.len() {
        // Group changes whose gap is at most twice the context, as xdiff does.
        let mut j = i;
        while j + 1 < changes.len() && changes[j + 1].0.start - changes[j].0.end <= 2 * CONTEXT {
            j += 1;
        }
        let first = &changes[i];
        let last = &changes[j];
        let old_start = first.0.start.saturating_sub(CONTEXT);
        let lead = first.0.start - old_start;
        let new_start = first.1.start - lead;
        let old_end = (last.0.end + CONTEXT).min(old_lines.len() as u32);
        let trail = old_end - last.0.end;
        let new_end = last.1.end + trail;
        let old_len = old_end - old_start;
        let new_len = new_end - new_start;
        let range = |start: u32, len: u32| match len {
            0 => format!("{start},0"),
            1 => format!("{}", start + 1),
            _ => format!("{},{len}", start + 1),
        };
        let _ = write!(
            out,
            "@@ -{} +{} @@",
            range(old_start, old_len),
            range(new_start, new_len)
        );
        if let Some(func) = funcname(&old_lines, old_start, matcher) {
            out.push(b' ');
            out.extend_from_slice(func);
        }
        out.push(b'\n');
        let mut o = old_start;
        for (before, after) in &changes[i..=j] {
            for l in o..before.start {
                line(&mut out, b' ', old_lines[l as usize]);
            }
            for l in before.clone() {
                line(&mut out, b'-', old_lines[l as usize]);
            }
            for l in after.clone() {
                line(&mut out, b'+', new_lines[l as usize]);
            }
            o = before.end;
        }
        for l in o..old_end {
            line(&mut out, b' ', old_lines[l as usize]);
        }
        i = j + 1;
    }
    (out, diff.count_additions(), diff.count_removals())
}

fn line(out: &mut Vec<u8>, sign: u8, text: &[u8]) {
    out.push(sign);
    out.extend_from_slice(text);
    if !text.ends_with(b"\n") {
        out.extend_from_slice(b"\n\\ No newline at end of file\n");
    }
}

/// git's default funcname: a line that starts with a letter, `_` or `$` (`xemit.c`, `def_ff`).
fn default_funcname(rec: &[u8]) -> Option<&[u8]> {
    rec.first()
        .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'$')
        .then_some(rec)
}

/// The funcname of a hunk: the nearest line above it that `matcher` accepts, what it gives cut to 80 bytes,
/// trailing whitespace removed (`xemit.c`, `get_func_line`; `diff.c`, `ff_regexp`).
fn funcname<'a>(old_lines: &[&'a [u8]], hunk_start: u32, matcher: &Funcname) -> Option<&'a [u8]> {
    let mut l = hunk_start as usize;
    while l > 0 {
        l -= 1;
        let rec = old_lines[l];
        let line = rec.strip_suffix(b"\n").unwrap_or(rec);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(found) = matcher(line) {
            // `found` borrows `line`, which borrows `rec`: find it again in `rec` for the lifetime.
            let start = found.as_ptr() as usize - rec.as_ptr() as usize;
            let mut len = found.len().min(80);
            while len > 0 && rec[start + len - 1].is_ascii_whitespace() {
                len -= 1;
            }
            return Some(&rec[start..start + len]);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(old: &str, new: &str) -> String {
        String::from_utf8(hunks(old.as_bytes(), new.as_bytes()).0).unwrap()
    }

    #[test]
    fn hunk_headers_follow_git() {
        assert_eq!(h("", "a\n"), "@@ -0,0 +1 @@\n+a\n");
        assert_eq!(h("a\n", ""), "@@ -1 +0,0 @@\n-a\n");
        assert_eq!(h("a\nb\n", "a\nc\n"), "@@ -1,2 +1,2 @@\n a\n-b\n+c\n");
        assert_eq!(
            h("a", "b"),
            "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn funcname_is_the_nearest_identifier_line_above() {
        let old = "fn main() {\n    1\n    2\n    3\n    4\n    5\n}\n";
        let new = "fn main() {\n    1\n    2\n    3\n    4\n    five\n}\n";
        assert_eq!(
            h(old, new),
            "@@ -3,5 +3,5 @@ fn main() {\n     2\n     3\n     4\n-    5\n+    five\n }\n"
        );
    }

    #[test]
    fn close_changes_share_a_hunk_and_far_ones_do_not() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let near = old.replace("3\n", "x\n").replace("9\n", "y\n");
        assert_eq!(h(&old, &near).matches("@@ -").count(), 1);
        let far = old.replace("3\n", "x\n").replace("17\n", "y\n");
        assert_eq!(h(&old, &far).matches("@@ -").count(), 2);
    }
}
