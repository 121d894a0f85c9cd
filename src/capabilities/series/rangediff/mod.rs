//! `series range-diff`: pair the patches of two versions of a series as `git range-diff` does, and show it.
//!
//! The pairing follows git's `range-diff.c`: each patch becomes a text (its metadata and message, then its
//! diff with munged headers, as git makes it of `git log -p` with range-diff's options); patches whose diff
//! texts are equal pair first; the rest pair by a linear assignment ([`assignment`]) over the size of the
//! diff between their diff texts, against the cost of calling a patch new or dropped (its size times the
//! creation factor, 60% by default). The texts are made in this process ([`texts`]) when nothing in the
//! repository or its configuration would make `git log` print differently; otherwise they are read from
//! `git log` ([`read_patches`]). The pairing is ours.
//!
//! The pair headers are git's (`1:  abc1234 ! 1:  def5678 Summary`); the body under a changed pair is a
//! unified diff of the two patch texts with three lines of context, each line indented four spaces, as git's:
//! Myers, hunk headers without line counts, the section after `@@` found with range-diff's own patterns.

pub mod assignment;
#[cfg(test)]
mod test_support;
pub mod texts;

use std::path::Path;

use gix::diff::blob::{Algorithm, Diff, InternedInput};
use gix::ObjectId;
use serde::Serialize;

use crate::kit::error::{Error, Result};

/// git's default creation factor (`RANGE_DIFF_CREATION_FACTOR_DEFAULT`).
pub const CREATION_FACTOR: i32 = 60;
/// git's `COST_MAX`: the cost that forbids a pairing.
const COST_MAX: i32 = 1 << 16;

/// One patch as range-diff sees it.
#[derive(Debug, Clone)]
pub struct PatchText {
    pub commit: ObjectId,
    /// The whole text: metadata, message, munged diff.
    pub text: String,
    /// Where the diff part starts in `text` (0 when the patch has no diff).
    pub diff_offset: usize,
    /// Lines of the diff part (git's `diffsize`).
    pub diff_lines: i32,
}

impl PatchText {
    pub fn diff(&self) -> &str {
        &self.text[self.diff_offset..]
    }
}

/// The patch texts of `base..tip`, oldest first: made in this process when it can match `git log`
/// ([`texts`]), else read from `git log`.
pub fn patch_texts(
    repo: &gix::Repository,
    base: ObjectId,
    tip: ObjectId,
) -> Result<Vec<PatchText>> {
    match texts::read(repo, base, tip)? {
        Some(t) => Ok(t),
        None => read_patches(crate::kit::gitcli::dir_of(repo), base, tip),
    }
}

/// [`patch_texts`] of two ranges, one after the other, sharing rendered file diffs: the two versions of a
/// series mostly change the same blobs the same way, so the second costs little more than its tree diffs
/// (fewer cycles than two threads each doing everything, which counts on a machine busy with other work). The
/// first renders its two halves on two threads ([`texts::read_cached`]).
pub fn patch_texts_of_two(
    repo: &gix::Repository,
    a: (ObjectId, ObjectId),
    b: (ObjectId, ObjectId),
) -> Result<(Vec<PatchText>, Vec<PatchText>)> {
    let mut cache = crate::capabilities::series::diff::FileCache::default();
    let mut one = |(base, tip): (ObjectId, ObjectId)| -> Result<Vec<PatchText>> {
        match texts::read_cached(repo, base, tip, &mut cache)? {
            Some(t) => Ok(t),
            None => read_patches(crate::kit::gitcli::dir_of(repo), base, tip),
        }
    };
    let a = one(a)?;
    let b = one(b)?;
    Ok((a, b))
}

/// Read the patches of `base..tip`, oldest first, through `git log` with range-diff's options.
pub fn read_patches(git_dir: &Path, base: ObjectId, tip: ObjectId) -> Result<Vec<PatchText>> {
    log_patches(git_dir, &[format!("{base}..{tip}")])
}

/// The patch texts of the given commits (their diffs against their parents), in that order, through
/// `git log --no-walk=unsorted` with range-diff's options.
pub fn read_commits(git_dir: &Path, commits: &[ObjectId]) -> Result<Vec<PatchText>> {
    if commits.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec!["--no-walk=unsorted".to_owned()];
    // Newest first: range-diff's `--reverse` turns the list back into the order asked.
    args.extend(commits.iter().rev().map(|c| c.to_string()));
    log_patches(git_dir, &args)
}

/// `git log` with range-diff's options and `revs`, parsed.
fn log_patches(git_dir: &Path, revs: &[String]) -> Result<Vec<PatchText>> {
    let out = crate::kit::gitcli::run(
        git_dir,
        [
            "log",
            "--no-color",
            "-p",
            "--reverse",
            "--date-order",
            "--decorate=no",
            "--no-prefix",
            "--submodule=short",
            "--output-indicator-new=>",
            "--output-indicator-old=<",
            "--output-indicator-context=#",
            "--no-abbrev-commit",
            "--pretty=medium",
            // range-diff shows the default notes (git's `--show-notes-by-default`; `--notes` before 2.44).
            "--notes",
            "--no-merges",
        ]
        .into_iter()
        .chain(revs.iter().map(String::as_str)),
    )?;
    parse_log(&String::from_utf8_lossy(&out.stdout))
}

/// Turn `git log` output (range-diff's options) into patch texts, as git's `read_patches` does.
pub fn parse_log(log: &str) -> Result<Vec<PatchText>> {
    let mut out: Vec<PatchText> = Vec::new();
    let mut cur: Option<PatchText> = None;
    let mut in_header = true;
    let mut current_file: Option<String> = None;
    let lines: Vec<&str> = log.split_inclusive('\n').collect();
    let mut k = 0;
    while k < lines.len() {
        let raw = lines[k];
        k += 1;
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        if let Some(id) = line.strip_prefix("commit ") {
            if let Some(p) = cur.take() {
                out.push(p);
            }
            let commit = ObjectId::from_hex(id.trim().as_bytes()).map_err(|e| {
                Error::wrap(format!("`git log` printed a bad commit line: {line}"), e)
            })?;
            cur = Some(PatchText {
                commit,
                text: String::new(),
                diff_offset: 0,
                diff_lines: 0,
            });
            in_header = true;
            continue;
        }
        let Some(p) = cur.as_mut() else {
            return Err(Error::Other(format!(
                "`git log` output did not start with `commit `: {line}"
            )));
        };
        let buf = &mut p.text;
        if let Some(names) = line.strip_prefix("diff --git ") {
            in_header = false;
            buf.push('\n');
            if p.diff_offset == 0 {
                p.diff_offset = buf.len();
            }
            let mut h = Header::default();
            while k < lines.len() && h.take(lines[k].strip_suffix('\n').unwrap_or(lines[k])) {
                k += 1;
            }
            let (old, new) = h.names(names);
            buf.push_str(" ## ");
            if h.is_new {
                buf.push_str(&format!("{new} (new)"));
            } else if h.is_delete {
                buf.push_str(&format!("{old} (deleted)"));
            } else if h.is_rename {
                buf.push_str(&format!("{old} => {new}"));
            } else {
                buf.push_str(&new);
            }
            current_file = Some(if h.is_delete { old } else { new });
            if let (Some(o), Some(n)) = (h.old_mode, h.new_mode) {
                if o != n {
                    buf.push_str(&format!(" (mode change {o:06o} => {n:06o})"));
                }
            }
            buf.push_str(" ##");
        } else if in_header {
            if line.starts_with("Author: ") {
                buf.push_str(" ## Metadata ##\n");
                buf.push_str(line);
                buf.push_str("\n\n ## Commit message ##\n");
            } else if line.starts_with("Notes") && line.ends_with(':') {
                // `Notes:` or `Notes (ref):`, without the colon.
                buf.push_str("\n\n ## ");
                buf.push_str(&line[..line.len() - 1]);
                buf.push_str(" ##\n");
            } else if line.starts_with("    ") {
                buf.push_str(line.trim_end_matches(is_git_space));
                buf.push('\n');
            }
            continue;
        } else if let Some(rest) = line.strip_prefix("@@ ") {
            buf.push_str("@@");
            if let Some(at) = rest.find("@@") {
                let after = &rest[at + 2..];
                if let (Some(f), false) = (&current_file, after.is_empty()) {
                    buf.push_str(&format!(" {f}:"));
                }
                buf.push_str(after);
            }
        } else if line.is_empty() {
            // The blank line between commits; never a diff line (context is " \n").
            continue;
        } else if let Some(r) = line.strip_prefix('>') {
            buf.push('+');
            buf.push_str(r);
        } else if let Some(r) = line.strip_prefix('<') {
            buf.push('-');
            buf.push_str(r);
        } else if let Some(r) = line.strip_prefix('#') {
            buf.push(' ');
            buf.push_str(r);
        } else {
            buf.push(' ');
            buf.push_str(line);
        }
        buf.push('\n');
        p.diff_lines += 1;
    }
    if let Some(p) = cur {
        out.push(p);
    }
    Ok(out)
}

/// The extended header lines of one `diff --git` (what git's `parse_git_diff_header` consumes).
#[derive(Default)]
struct Header {
    is_new: bool,
    is_delete: bool,
    is_rename: bool,
    old_mode: Option<u32>,
    new_mode: Option<u32>,
    old_name: Option<String>,
    new_name: Option<String>,
}

/// git's `isspace`: space, tab, newline and carriage return only. Rust's whitespace also takes a form feed, a
/// vertical tab and Unicode's spaces (a no-break space), which git keeps at the end of a message line.
pub(crate) fn is_git_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// A path from a diff header as git's header parser reads it: a quoted one unquoted as `unquote_c_style`
/// does (the named escapes, three octal digits for a byte: git quotes every byte above 0x7f that way), the tab
/// git puts after a name with a space dropped. A quoted name that is not well formed stays as it is (git's
/// `find_name` then reads it unquoted too).
fn unquote(s: &str) -> String {
    let s = s.trim_end_matches('\t');
    let Some(q) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) else {
        return s.to_owned();
    };
    let mut out = Vec::with_capacity(q.len());
    let mut bytes = q.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let byte = match bytes.next() {
            Some(c @ (b'"' | b'\\')) => c,
            Some(b'a') => 0x07,
            Some(b'b') => 0x08,
            Some(b'f') => 0x0c,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'v') => 0x0b,
            Some(d @ b'0'..=b'3') => {
                let octal =
                    |c: Option<u8>| c.filter(|c| (b'0'..=b'7').contains(c)).map(|c| c - b'0');
                match (octal(bytes.next()), octal(bytes.next())) {
                    (Some(x), Some(y)) => ((d - b'0') << 6) | (x << 3) | y,
                    _ => return s.to_owned(),
                }
            }
            _ => return s.to_owned(),
        };
        out.push(byte);
    }
    String::from_utf8_lossy(&out).into_owned()
}

impl Header {
    /// Take one header line; false when `line` is not one (the header ended).
    fn take(&mut self, line: &str) -> bool {
        let mode = |s: &str| u32::from_str_radix(s.trim(), 8).ok();
        if let Some(m) = line.strip_prefix("old mode ") {
            self.old_mode = mode(m);
        } else if let Some(m) = line.strip_prefix("new mode ") {
            self.new_mode = mode(m);
        } else if let Some(m) = line.strip_prefix("deleted file mode ") {
            self.is_delete = true;
            self.old_mode = mode(m);
        } else if let Some(m) = line.strip_prefix("new file mode ") {
            self.is_new = true;
            self.new_mode = mode(m);
        } else if let Some(n) = line
            .strip_prefix("rename from ")
            .or_else(|| line.strip_prefix("rename old "))
        {
            self.is_rename = true;
            self.old_name = Some(unquote(n));
        } else if let Some(n) = line
            .strip_prefix("rename to ")
            .or_else(|| line.strip_prefix("rename new "))
        {
            self.is_rename = true;
            self.new_name = Some(unquote(n));
        } else if let Some(n) = line.strip_prefix("copy from ") {
            self.old_name = Some(unquote(n));
        } else if let Some(n) = line.strip_prefix("copy to ") {
            self.new_name = Some(unquote(n));
        } else if let Some(n) = line.strip_prefix("--- ") {
            if n != "/dev/null" && self.old_name.is_none() {
                self.old_name = Some(unquote(n));
            }
        } else if let Some(n) = line.strip_prefix("+++ ") {
            if n != "/dev/null" && self.new_name.is_none() {
                self.new_name = Some(unquote(n));
            }
        } else if !(line.starts_with("index ")
            || line.starts_with("similarity index ")
            || line.starts_with("dissimilarity index "))
        {
            return false;
        }
        true
    }

    /// (old, new) names; the `diff --git` line's (`A B`, equal halves without prefixes) when the header
    /// named neither, as for a mode change or a binary file.
    fn names(&self, git_line: &str) -> (String, String) {
        let fallback = || {
            let s = git_line.trim_end();
            if let Some(quoted) = s.strip_prefix('"') {
                // The first name ends at the first quote no backslash escapes.
                let mut escaped = false;
                let end = quoted
                    .char_indices()
                    .find(|&(_, c)| {
                        let close = c == '"' && !escaped;
                        escaped = c == '\\' && !escaped;
                        close
                    })
                    .map_or(s.len(), |(i, _)| i + 2);
                return unquote(&s[..end]);
            }
            let half = s.len().saturating_sub(1) / 2;
            s.get(..half).unwrap_or(s).to_owned()
        };
        let old = self.old_name.clone();
        let new = self.new_name.clone();
        match (old, new) {
            (Some(o), Some(n)) => (o, n),
            (Some(o), None) => (o.clone(), o),
            (None, Some(n)) => (n.clone(), n),
            (None, None) => {
                let f = fallback();
                (f.clone(), f)
            }
        }
    }
}

/// git's `diffsize`: the number of lines (hunk headers included) of a three-line-context diff of `a` and `b`.
pub fn diff_size(a: &str, b: &str) -> i32 {
    const CONTEXT: u32 = 3;
    let input = InternedInput::new(
        gix::diff::blob::sources::byte_lines(a.as_bytes()),
        gix::diff::blob::sources::byte_lines(b.as_bytes()),
    );
    // git's xdiff default is Myers (range-diff passes no algorithm flag).
    let mut diff = Diff::compute(Algorithm::Myers, &input);
    diff.postprocess_lines(&input);
    let changes: Vec<_> = diff.hunks().map(|h| (h.before, h.after)).collect();
    let old_len = input.before.len() as u32;
    let mut count = 0i32;
    let mut i = 0;
    while i < changes.len() {
        let mut j = i;
        while j + 1 < changes.len() && changes[j + 1].0.start - changes[j].0.end <= 2 * CONTEXT {
            j += 1;
        }
        let start = changes[i].0.start.saturating_sub(CONTEXT);
        let end = (changes[j].0.end + CONTEXT).min(old_len);
        let added: u32 = changes[i..=j].iter().map(|(_, a)| a.end - a.start).sum();
        count += 1 + (end - start + added) as i32;
        i = j + 1;
    }
    count
}

/// The pairing: for each patch of `a`, the index of its partner in `b`, and the other way round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    pub a_to_b: Vec<Option<usize>>,
    pub b_to_a: Vec<Option<usize>>,
}

/// Pair `a` (the older version) with `b`, as `git range-diff --creation-factor=FACTOR` does.
pub fn pair(a: &[PatchText], b: &[PatchText], creation_factor: i32) -> Pairing {
    let mut a_to_b: Vec<Option<usize>> = vec![None; a.len()];
    let mut b_to_a: Vec<Option<usize>> = vec![None; b.len()];
    // Exact matches of the diff parts. git's hashmap hands out the last-added of equal entries first.
    let mut by_diff: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, p) in a.iter().enumerate() {
        by_diff.entry(p.diff()).or_default().push(i);
    }
    for (j, p) in b.iter().enumerate() {
        if let Some(i) = by_diff.get_mut(p.diff()).and_then(|v| v.pop()) {
            a_to_b[i] = Some(j);
            b_to_a[j] = Some(i);
        }
    }
    let n = a.len() + b.len();
    if n == 0 {
        return Pairing { a_to_b, b_to_a };
    }
    let mut cost = vec![0i32; n * n];
    // The diffs between unpaired patches are the cost of this function: computed on two threads.
    let todo: Vec<(usize, usize)> = (0..a.len())
        .filter(|&i| a_to_b[i].is_none())
        .flat_map(|i| {
            let b_to_a = &b_to_a;
            (0..b.len())
                .filter(move |&j| b_to_a[j].is_none())
                .map(move |j| (i, j))
        })
        .collect();
    let sizes = |part: &[(usize, usize)]| -> Vec<i32> {
        part.iter()
            .map(|&(i, j)| diff_size(a[i].diff(), b[j].diff()))
            .collect()
    };
    let (first, second) = todo.split_at(todo.len() / 2);
    let computed: Vec<i32> = if todo.len() < 8 {
        sizes(&todo)
    } else {
        std::thread::scope(|s| {
            let h = s.spawn(|| sizes(second));
            let mut v = sizes(first);
            v.extend(h.join().unwrap_or_else(|_| sizes(second)));
            v
        })
    };
    for (i, pa) in a.iter().enumerate() {
        for j in 0..b.len() {
            cost[i + n * j] = if a_to_b[i] == Some(j) { 0 } else { COST_MAX };
        }
        let c = if a_to_b[i].is_none() {
            pa.diff_lines * creation_factor / 100
        } else {
            COST_MAX
        };
        for j in b.len()..n {
            cost[i + n * j] = c;
        }
    }
    for (&(i, j), c) in todo.iter().zip(computed) {
        cost[i + n * j] = c;
    }
    for (j, pb) in b.iter().enumerate() {
        let c = if b_to_a[j].is_none() {
            pb.diff_lines * creation_factor / 100
        } else {
            COST_MAX
        };
        for i in a.len()..n {
            cost[i + n * j] = c;
        }
    }
    let (a2b, _) = assignment::compute(n, &cost);
    for (i, &j) in a2b.iter().enumerate().take(a.len()) {
        if j >= 0 && (j as usize) < b.len() {
            a_to_b[i] = Some(j as usize);
            b_to_a[j as usize] = Some(i);
        }
    }
    Pairing { a_to_b, b_to_a }
}

/// How a line of the range-diff relates its two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// `=`: the same patch text.
    Same,
    /// `!`: paired, but changed.
    Changed,
    /// `<`: only in the older version (dropped).
    Dropped,
    /// `>`: only in the newer version (added).
    Added,
}

impl Status {
    pub fn sign(self) -> char {
        match self {
            Status::Same => '=',
            Status::Changed => '!',
            Status::Dropped => '<',
            Status::Added => '>',
        }
    }
}

/// One line of the range-diff, in git's output order.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    pub status: Status,
    /// 1-based position in the older version.
    pub old_index: Option<usize>,
    #[serde(serialize_with = "crate::capabilities::series::ser_opt_id")]
    pub old_commit: Option<ObjectId>,
    pub new_index: Option<usize>,
    #[serde(serialize_with = "crate::capabilities::series::ser_opt_id")]
    pub new_commit: Option<ObjectId>,
    /// The diff of the two patch texts (`!` only), lines unindented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
}

/// The entries in git's order: the newer side's order, each dropped patch placed once everything before it
/// in the older version has been shown.
pub fn entries(a: &[PatchText], b: &[PatchText], p: &Pairing, with_diff: bool) -> Vec<Entry> {
    let mut shown = vec![false; a.len()];
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        while i < a.len() && shown[i] {
            i += 1;
        }
        if i < a.len() && p.a_to_b[i].is_none() {
            out.push(Entry {
                status: Status::Dropped,
                old_index: Some(i + 1),
                old_commit: Some(a[i].commit),
                new_index: None,
                new_commit: None,
                diff: None,
            });
            i += 1;
            continue;
        }
        while j < b.len() && p.b_to_a[j].is_none() {
            out.push(Entry {
                status: Status::Added,
                old_index: None,
                old_commit: None,
                new_index: Some(j + 1),
                new_commit: Some(b[j].commit),
                diff: None,
            });
            j += 1;
        }
        if j < b.len() {
            let ai = p.b_to_a[j].expect("paired");
            let same = a[ai].text == b[j].text;
            out.push(Entry {
                status: if same { Status::Same } else { Status::Changed },
                old_index: Some(ai + 1),
                old_commit: Some(a[ai].commit),
                new_index: Some(j + 1),
                new_commit: Some(b[j].commit),
                diff: (!same && with_diff).then(|| text_diff(&a[ai].text, &b[j].text)),
            });
            shown[ai] = true;
            j += 1;
        }
    }
    out
}

/// A unified diff of two patch texts as range-diff shows it: git's default diff (Myers), hunk headers without
/// line counts, the section after `@@` found by range-diff's own function-name patterns (`^ ## (.*) ##$`, then
/// `^.?@@ (.*)$`: the file or metadata part, or the inner hunk header, the change is in).
fn text_diff(a: &str, b: &str) -> String {
    let (hunks, _, _) = crate::capabilities::series::diff::hunks::hunks_full(
        a.as_bytes(),
        b.as_bytes(),
        Algorithm::Myers,
        &section_header,
    );
    let text = String::from_utf8_lossy(&hunks);
    let mut out = String::new();
    for l in text.lines() {
        match l.strip_prefix("@@ ") {
            // `@@ -1,2 +1,3 @@ section` becomes `@@ section`.
            Some(rest) => {
                out.push_str("@@");
                if let Some(at) = rest.find("@@") {
                    out.push_str(&rest[at + 2..]);
                }
            }
            None => out.push_str(l),
        }
        out.push('\n');
    }
    out
}

/// range-diff's function-name patterns (`range-diff.c`, `section_headers`), the first group of the first that
/// matches.
fn section_header(line: &[u8]) -> Option<&[u8]> {
    if line.len() >= 7 && line.starts_with(b" ## ") && line.ends_with(b" ##") {
        return Some(&line[4..line.len() - 3]);
    }
    if let Some(rest) = line.strip_prefix(b"@@ ") {
        return Some(rest);
    }
    line.get(1..).and_then(|l| l.strip_prefix(b"@@ "))
}

/// git's header line for one entry: `1:  abc1234 ! 1:  def5678 Summary`. `short` abbreviates an id,
/// `summary` gives a commit's one-line subject, `width` is the patch-number width.
pub fn header_line(
    e: &Entry,
    width: usize,
    short: &dyn Fn(ObjectId) -> String,
    summary: &str,
) -> String {
    let any = e.old_commit.or(e.new_commit).expect("one side");
    let dashes = "-".repeat(short(any).len());
    let side = |idx: Option<usize>, c: Option<ObjectId>| match (idx, c) {
        (Some(i), Some(c)) => format!("{i:>width$}:  {}", short(c)),
        _ => format!("{:>width$}:  {dashes}", "-"),
    };
    let line = format!(
        "{} {} {} {summary}",
        side(e.old_index, e.old_commit),
        e.status.sign(),
        side(e.new_index, e.new_commit)
    );
    // git's pretty-printer trims the line's end: no space after the id when the summary is empty.
    line.trim_end_matches(is_git_space).to_owned()
}

/// git's patch-number width: the digits of one more than the longer side's count.
pub fn number_width(a: usize, b: usize) -> usize {
    (1 + a.max(b)).to_string().len()
}

#[cfg(test)]
mod tests {
    //! git is the oracle: each series is built with git in a temporary repository, and what `series
    //! range-diff` would print (the pairing, the header lines, the diffs under changed pairs) must be what
    //! `git range-diff --no-color` prints on the same ranges, byte for byte, in both directions and at several
    //! creation factors. The texts are read through `git log` here ([`read_patches`]); `texts`' tests check
    //! that the texts made in-process equal those.

    use std::os::unix::fs::PermissionsExt;

    use super::test_support::Repo;
    use super::*;

    /// What `series range-diff` prints (`frontends/cli/series/version.rs`): each entry's header line, then a
    /// changed pair's diff indented four spaces; ids abbreviated and summaries taken as git takes them.
    fn render(r: &Repo, a: &[PatchText], b: &[PatchText], factor: i32) -> String {
        let p = pair(a, b, factor);
        // Each commit's abbreviated id and summary, from one `git show`.
        let mut args = vec!["show", "-s", "--format=%H %h %s"];
        let ids: Vec<String> = a.iter().chain(b).map(|p| p.commit.to_string()).collect();
        args.extend(ids.iter().map(String::as_str));
        let shown = if ids.is_empty() {
            String::new()
        } else {
            r.git(&args)
        };
        let names: std::collections::HashMap<ObjectId, (String, String)> = shown
            .lines()
            .map(|l| {
                let mut f = l.splitn(3, ' ');
                let id = ObjectId::from_hex(f.next().unwrap().as_bytes()).unwrap();
                let short = f.next().unwrap().to_owned();
                (id, (short, f.next().unwrap_or("").to_owned()))
            })
            .collect();
        let short = |id: ObjectId| names[&id].0.clone();
        let width = number_width(a.len(), b.len());
        let mut out = String::new();
        for e in entries(a, b, &p, true) {
            let c = e.old_commit.or(e.new_commit).unwrap();
            out.push_str(&header_line(&e, width, &short, &names[&c].1));
            out.push('\n');
            // A diff for a changed pair only.
            assert_eq!(e.diff.is_some(), e.status == Status::Changed, "{e:?}");
            for l in e.diff.iter().flat_map(|d| d.lines()) {
                out.push_str("    ");
                out.push_str(l);
                out.push('\n');
            }
        }
        out
    }

    fn git_range_diff(r: &Repo, base: &str, x: &str, y: &str, factor: i32) -> String {
        r.git(&[
            "range-diff",
            "--no-color",
            &format!("--creation-factor={factor}"),
            &format!("{base}..{x}"),
            &format!("{base}..{y}"),
        ])
    }

    /// Ours is git's on `base..x` against `base..y`, and the other way round, at each factor; git's output
    /// at the first factor, for the checks of the caller.
    fn assert_as_git(r: &Repo, base: &str, x: &str, y: &str, factors: &[i32]) -> String {
        let (a, b) = (r.logged(base, x), r.logged(base, y));
        let mut first = None;
        for &f in factors {
            for (p, q, pt, qt) in [(&a, &b, x, y), (&b, &a, y, x)] {
                let git = git_range_diff(r, base, pt, qt, f);
                assert_eq!(
                    render(r, p, q, f),
                    git,
                    "creation factor {f}, {pt} against {qt}"
                );
                first.get_or_insert(git);
            }
        }
        first.unwrap()
    }

    /// Each patch (`tip~1..tip`) against an empty commit, paired at a creation factor
    /// that pairs anything: the pair's diff is the whole text of the patch, so git's output shows every
    /// line of it (a kept patch shows none of its text, a changed one only around the change).
    fn assert_whole_texts_as_git(r: &Repo, base: &str, tips: &[String]) {
        r.branch("empty", base);
        let empty = r.commit("Nothing");
        let nothing = r.logged(base, &empty);
        for tip in tips {
            let patch = r.logged(&format!("{tip}~1"), tip);
            let git = r.git(&[
                "range-diff",
                "--no-color",
                "--creation-factor=100000",
                &format!("{base}..{empty}"),
                &format!("{tip}~1..{tip}"),
            ]);
            assert_eq!(render(r, &nothing, &patch, 100_000), git, "{tip}");
            assert!(git.starts_with("1:  ") && git.contains(" ! "), "{git}");
        }
    }

    fn numbered(n: usize, prefix: &str) -> String {
        (1..=n).map(|i| format!("{prefix}{i}\n")).collect()
    }

    const MAIN_RS: &str = "fn main() {\n    one();\n    two();\n}\n\nfn one() {}\n\nfn two() {}\n";

    fn executable(r: &Repo, path: &str) {
        let p = r.path().join(path);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// Every kind of line: kept (`=`), reworded, amended, with another author (`!`), dropped (`<`), added
    /// (`>`), moved; a rename, a mode change, a deletion, hunks with a function name; and each patch against
    /// an empty commit (whose diff shows the whole patch text, so the texts are git's too).
    #[test]
    fn pairs_headers_and_diffs_are_git_range_diffs() {
        let r = Repo::new();
        r.write("nums.txt", Some(&numbered(30, "")));
        r.write("main.rs", Some(MAIN_RS));
        r.write("doc.md", Some("# Doc\n\nSome words\nabout things.\n"));
        r.write("old.txt", Some("old\n"));
        r.write("run.sh", Some("echo run\n"));
        let base = r.commit("Base");

        r.branch("v1", &base);
        r.write("a.txt", Some("alpha\n"));
        r.commit("Add a");
        r.write(
            "nums.txt",
            Some(&numbered(30, "").replace("\n5\n", "\nfive\n")),
        );
        r.commit("Five in words");
        r.write("main.rs", Some(&MAIN_RS.replace("two();", "two(2);")));
        r.commit("Two takes an argument");
        r.write("gone.txt", Some("gone\n"));
        r.commit("Add gone");
        r.git(&["mv", "doc.md", "guide.md"]);
        r.commit("Rename doc");
        executable(&r, "run.sh");
        r.commit("Make run.sh executable");
        r.write("old.txt", None);
        r.commit("Delete old\n\n\tWith a tab.\n");

        r.branch("v2", &base);
        r.write("a.txt", Some("alpha\n"));
        r.commit("Add a");
        r.write("main.rs", Some(&MAIN_RS.replace("two();", "two(2);")));
        r.commit("Two takes an argument\n\nWith a body.\n");
        let nums = numbered(30, "")
            .replace("\n5\n", "\nfive\n")
            .replace("\n25\n", "\ntwenty-five\n");
        r.write("nums.txt", Some(&nums));
        r.commit("Five in words");
        r.write("new.txt", Some("new\n"));
        r.commit("Add new");
        r.git(&["mv", "doc.md", "guide.md"]);
        r.git(&[
            "commit",
            "-q",
            "--author=Other <other@example.com>",
            "-m",
            "Rename doc",
        ]);
        executable(&r, "run.sh");
        r.commit("Make run.sh executable");
        r.write("old.txt", None);
        r.commit("Delete old\n\n\tWith a tab.\n");

        let git = assert_as_git(&r, &base, "v1", "v2", &[60, 0, 30, 100, 200]);
        // The cases are there: git's signs, in git's order.
        let signs: Vec<char> = git
            .lines()
            .filter(|l| !l.starts_with(' '))
            .map(|l| l.split_whitespace().nth(2).unwrap().chars().next().unwrap())
            .collect();
        assert_eq!(signs, ['=', '!', '!', '<', '>', '!', '=', '='], "{git}");
        assert!(git.contains("    @@ nums.txt\n"), "{git}");
        assert!(git.contains("    @@ Metadata\n"), "{git}");

        // No diffs asked, none made.
        let (a, b) = (r.logged(&base, "v1"), r.logged(&base, "v2"));
        assert!(entries(&a, &b, &pair(&a, &b, 60), false)
            .iter()
            .all(|e| e.diff.is_none()));

        // Every text whole.
        let tips: Vec<String> = (0..7)
            .flat_map(|k| [format!("v1~{k}"), format!("v2~{k}")])
            .collect();
        assert_whole_texts_as_git(&r, &base, &tips);

        // A commit with an empty message: git's header line ends at the id.
        r.branch("silent", &base);
        r.write("a.txt", Some("alpha\n"));
        let silent = r.commit("");
        assert_as_git(&r, &base, &silent, "v1", &[60]);
    }

    /// Nine patches each side, none equal: 81 diff sizes (computed on two threads), the pairing by the
    /// assignment, two-digit patch numbers.
    #[test]
    fn many_changed_patches_pair_as_git_does() {
        let r = Repo::new();
        for k in 1..=9 {
            r.write(&format!("f{k}.txt"), Some(&numbered(12, &format!("{k}."))));
        }
        let base = r.commit("Base");
        let change = |k: usize, lines: &[usize], how: &str| {
            let mut text = numbered(12, &format!("{k}."));
            for l in lines {
                text = text.replace(&format!("{k}.{l}\n"), &format!("{k}.{l} {how}\n"));
            }
            r.write(&format!("f{k}.txt"), Some(&text));
        };
        r.branch("v1", &base);
        for k in 1..=9 {
            change(k, &[5], "changed");
            r.commit(&format!("Change f{k}"));
        }
        r.branch("v2", &base);
        for k in [1, 2, 4, 3, 5, 6, 7, 8, 9] {
            change(k, &[5, 6], "changed again");
            r.commit(&format!("Change f{k}"));
        }
        r.write("ten.txt", Some("ten\n"));
        r.commit("Add ten");
        let git = assert_as_git(&r, &base, "v1", "v2", &[60, 0, 20, 200]);
        assert!(git.starts_with(" 1:  "), "{git}");
        assert_eq!(git.matches(" ! ").count(), 9, "{git}");
    }

    /// Patches whose diffs are equal pair first, the last of equal ones in the older version with the first in
    /// the newer, as git's hash map hands them out.
    #[test]
    fn equal_diffs_pair_as_gits_hash_map_hands_them_out() {
        let r = Repo::new();
        r.write("f.txt", Some("one\n"));
        let base = r.commit("Base");
        for (branch, suffix) in [("v1", ""), ("v2", ", again")] {
            r.branch(branch, &base);
            for (text, message) in [("two\n", "To two"), ("one\n", "Back"), ("two\n", "Two")] {
                r.write("f.txt", Some(text));
                r.commit(&format!("{message}{suffix}"));
            }
        }
        let git = assert_as_git(&r, &base, "v1", "v2", &[60, 0]);
        assert!(git.starts_with("3:  "), "{git}");
    }

    /// The creation factor's edge: a patch pairs with its rewrite when the size of the diff between their
    /// diffs (12 here) is at most the cost of calling one dropped and the other new (each side's 12 lines
    /// times the factor, over 100: 12 at 50, a tie git breaks by pairing), and an uneven pair (12 and 13
    /// lines, 14 apart). Both edges by hand, and against git at factors around them.
    #[test]
    fn creation_factor_edge_is_gits() {
        let r = Repo::new();
        r.write("keep.txt", Some("keep\n"));
        let base = r.commit("Base");
        let lines = |n: usize, changed: &[usize]| -> String {
            (1..=n)
                .map(|i| {
                    if changed.contains(&i) {
                        format!("LINE {i}\n")
                    } else {
                        format!("line {i}\n")
                    }
                })
                .collect()
        };
        r.branch("v1", &base);
        r.write("x.txt", Some(&lines(10, &[])));
        r.commit("Add x");
        r.branch("v2", &base);
        r.write("x.txt", Some(&lines(10, &[5, 9])));
        r.commit("Add x");
        r.branch("v3", &base);
        r.write("x.txt", Some(&lines(11, &[2])));
        r.commit("Add x");
        let (a, b, c) = (
            r.logged(&base, "v1"),
            r.logged(&base, "v2"),
            r.logged(&base, "v3"),
        );
        assert_eq!(
            (a[0].diff_lines, b[0].diff_lines, c[0].diff_lines),
            (12, 12, 13)
        );
        assert!(a[0].diff().starts_with(" ## x.txt (new) ##\n@@\n+line 1\n"));
        assert_eq!(diff_size(a[0].diff(), b[0].diff()), 12);
        let paired = |x: &[PatchText], y: &[PatchText], f: i32| pair(x, y, f).a_to_b[0].is_some();
        assert!(!paired(&a, &b, 49) && paired(&a, &b, 50));
        let d = diff_size(a[0].diff(), c[0].diff());
        // Two hunks: the changed second line with three lines after it, the added last line with three before.
        assert_eq!(d, 14);
        // 12 * f / 100 + 13 * f / 100 is 6 + 7 at 58, 7 + 7 at 59 (the tie again).
        assert!(!paired(&a, &c, 58) && paired(&a, &c, 59));
        for (x, y, tip) in [(&a, &b, "v2"), (&a, &c, "v3")] {
            // Around both edges, and a few factors away from them (each a run of git).
            for f in [0, 1, 20, 40, 48, 49, 50, 51, 57, 58, 59, 60, 61, 80, 100] {
                let git = r.git(&[
                    "range-diff",
                    "-s",
                    &format!("--creation-factor={f}"),
                    &format!("{base}..v1"),
                    &format!("{base}..{tip}"),
                ]);
                assert_eq!(
                    paired(x, y, f),
                    git.lines().count() == 1,
                    "creation factor {f} against {tip}: {git}"
                );
            }
        }
    }

    /// git's `diffsize` is the line count of `git diff -U3` without its file headers: hunk headers, context,
    /// removed and added lines.
    fn git_diff_size(r: &Repo, a: &str, b: &str) -> i32 {
        r.write("size.a", Some(a));
        r.write("size.b", Some(b));
        let out = r.git_output(&[
            "diff",
            "--no-index",
            "--no-color",
            "-U3",
            "size.a",
            "size.b",
        ]);
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .skip_while(|l| !l.starts_with("+++ "))
            .skip(1)
            .count() as i32
    }

    #[test]
    fn diff_size_is_gits_line_count() {
        let r = Repo::new();
        let n20 = numbered(20, "");
        let with = |changed: &[usize]| -> String {
            (1..=20)
                .map(|i| {
                    if changed.contains(&i) {
                        format!("x{i}\n")
                    } else {
                        format!("{i}\n")
                    }
                })
                .collect()
        };
        // By hand: equal texts differ by nothing; one line against none is a hunk header and a line;
        // a change in the middle has three lines of context each side; changes six unchanged lines apart
        // share a hunk, seven apart do not; a change at either end has no context beyond it.
        let cases: Vec<(String, String, i32)> = vec![
            (n20.clone(), n20.clone(), 0),
            (String::new(), "a\n".into(), 2),
            ("a\n".into(), String::new(), 2),
            (n20.clone(), with(&[10]), 1 + 7 + 1),
            (n20.clone(), with(&[5, 12]), 1 + 14 + 2),
            (n20.clone(), with(&[5, 13]), 2 * (1 + 7 + 1)),
            (n20.clone(), with(&[1]), 1 + 4 + 1),
            (n20.clone(), with(&[20]), 1 + 4 + 1),
            (n20.clone(), with(&[1, 20]), 2 * (1 + 4 + 1)),
            (n20.clone(), n20.replace("10\n", ""), 1 + 7),
            (
                n20.clone(),
                n20.replace("10\n", "10\nnew\nnew\n"),
                1 + 6 + 2,
            ),
        ];
        for (a, b, want) in cases {
            assert_eq!(diff_size(&a, &b), want, "{a:?} against {b:?}");
            assert_eq!(git_diff_size(&r, &a, &b), want, "git: {a:?} against {b:?}");
        }
    }

    #[test]
    fn number_width_is_the_digits_of_one_more_than_the_longer_side() {
        for (a, b, want) in [
            (0, 0, 1),
            (8, 3, 1),
            (3, 8, 1),
            (9, 0, 2),
            (0, 9, 2),
            (98, 12, 2),
            (99, 12, 3),
            (12, 99, 3),
            (999, 1, 4),
        ] {
            assert_eq!(number_width(a, b), want, "{a} and {b}");
        }
    }

    #[test]
    fn header_lines_have_gits_shape() {
        let id = |c: char| ObjectId::from_hex(c.to_string().repeat(40).as_bytes()).unwrap();
        let short = |i: ObjectId| i.to_hex_with_len(9).to_string();
        let entry = |status, old: Option<usize>, new: Option<usize>| Entry {
            status,
            old_index: old,
            old_commit: old.map(|_| id('a')),
            new_index: new,
            new_commit: new.map(|_| id('b')),
            diff: None,
        };
        let cases = [
            (
                entry(Status::Same, Some(1), Some(2)),
                1,
                "1:  aaaaaaaaa = 2:  bbbbbbbbb S",
            ),
            (
                entry(Status::Changed, Some(10), Some(3)),
                3,
                " 10:  aaaaaaaaa !   3:  bbbbbbbbb S",
            ),
            (
                entry(Status::Dropped, Some(4), None),
                2,
                " 4:  aaaaaaaaa <  -:  --------- S",
            ),
            (
                entry(Status::Added, None, Some(7)),
                1,
                "-:  --------- > 7:  bbbbbbbbb S",
            ),
        ];
        for (e, width, want) in cases {
            assert_eq!(header_line(&e, width, &short, "S"), want);
        }
        // No summary: git trims the line's end (pretty.c), so no space after the id.
        let e = entry(Status::Same, Some(1), Some(1));
        assert_eq!(
            header_line(&e, 1, &short, ""),
            "1:  aaaaaaaaa = 1:  bbbbbbbbb"
        );
    }

    #[test]
    fn section_headers_are_range_diffs_patterns() {
        let cases: [(&[u8], Option<&[u8]>); 9] = [
            (b" ## Metadata ##", Some(b"Metadata")),
            (b" ## a.txt (new) ##", Some(b"a.txt (new)")),
            (b" ##  ##", Some(b"")),
            (b" ## ##", None),
            (b" ## a.txt", None),
            (b"@@ f.rs: fn main", Some(b"f.rs: fn main")),
            (b"+@@ f.rs: fn main", Some(b"f.rs: fn main")),
            (b"++@@ f.rs", None),
            (b"@@", None),
        ];
        for (line, want) in cases {
            assert_eq!(
                section_header(line),
                want,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn parse_log_refuses_what_is_not_git_log() {
        assert!(parse_log("").unwrap().is_empty());
        assert!(parse_log("Author: x\n").is_err());
        assert!(parse_log("commit nothex\n").is_err());
    }

    /// git's C quoting (`unquote_c_style`): the named escapes, three octal digits for a byte, and the tab git
    /// puts after a name with a space.
    #[test]
    fn unquote_reads_gits_c_quoting() {
        for (quoted, want) in [
            ("plain.txt", "plain.txt"),
            ("with space.txt\t", "with space.txt"),
            ("\"qu\\\"ote\"", "qu\"ote"),
            ("\"back\\\\slash\"", "back\\slash"),
            ("\"ta\\tb\"", "ta\tb"),
            ("\"\\a\\b\\f\\n\\r\\v\"", "\x07\x08\x0c\n\r\x0b"),
            ("\"\\303\\251 t.txt\"\t", "\u{e9} t.txt"),
            ("\"\\101\\060\"", "A0"),
            ("\"unterminated", "\"unterminated"),
        ] {
            assert_eq!(unquote(quoted), want, "{quoted}");
        }
    }

    /// Paths git quotes (a double quote, a tab, a non-ASCII name, a space with its trailing tab) are shown
    /// unquoted, as git's header parser reads them.
    #[test]
    fn quoted_paths_are_unquoted_as_git_does() {
        let r = Repo::new();
        r.write("keep.txt", Some("keep\n"));
        let base = r.commit("Base");
        let names = [
            "qu\"ote.txt",
            "ta\tb.txt",
            "\u{e9} t.txt",
            "back\\slash.txt",
        ];
        for (branch, text) in [("v1", "one\n"), ("v2", "two\n")] {
            r.branch(branch, &base);
            for n in names {
                r.write(n, Some(text));
            }
            r.commit("Quoted names");
            r.git(&["mv", names[2], "renamed \u{e9}.txt"]);
            r.write("empty \u{e9}", Some(""));
            r.write("qu\" empty", Some(""));
            r.write("em\tpty", Some(""));
            r.commit("Rename");
        }
        let git = assert_as_git(&r, &base, "v1", "v2", &[1000]);
        assert!(git.contains("## ta\tb.txt (new) ##"), "{git}");
        assert!(git.contains("## \u{e9} t.txt (new) ##"), "{git}");
        // The renamed and the empty files' headers (an empty file's only from its `diff --git` line).
        let tips: Vec<String> = (0..2).map(|k| format!("v1~{k}")).collect();
        assert_whole_texts_as_git(&r, &base, &tips);
    }

    /// A message line may end in what Rust calls whitespace and git does not (a no-break space, a form feed,
    /// a vertical tab): git keeps it, and the two patches differ.
    #[test]
    fn message_lines_keep_what_git_does_not_call_whitespace() {
        let r = Repo::new();
        r.write("keep.txt", Some("keep\n"));
        let base = r.commit("Base");
        for (branch, end) in [("v1", "\u{a0}"), ("v2", ""), ("v3", "\x0c"), ("v4", "\x0b")] {
            r.branch(branch, &base);
            r.write("w.txt", Some("w\n"));
            r.commit(&format!("Subject\n\nends here{end}\nspaces   \n"));
        }
        for tip in ["v1", "v3", "v4"] {
            let git = assert_as_git(&r, &base, tip, "v2", &[60]);
            assert!(git.starts_with("1:  ") && git.contains(" ! "), "{git}");
        }
    }

    /// The default notes are part of a patch text, as `git range-diff` shows them.
    #[test]
    fn notes_are_shown_as_git_range_diff_shows_them() {
        let r = Repo::new();
        r.write("keep.txt", Some("keep\n"));
        let base = r.commit("Base");
        for branch in ["v1", "v2"] {
            r.branch(branch, &base);
            r.write("n.txt", Some("n\n"));
            // A message line that ends in a colon is not a notes header.
            r.commit(&format!("Noted in {branch}\n\nNotes, see:\n- this\n"));
        }
        r.git(&["notes", "add", "-m", "a note\n\nof two paragraphs", "v1"]);
        let git = assert_as_git(&r, &base, "v1", "v2", &[60]);
        assert!(git.contains("## Notes ##"), "{git}");
        // Notes from another ref shown by configuration: `Notes (review):`.
        r.git(&["config", "notes.displayRef", "refs/notes/review"]);
        r.git(&["notes", "--ref=review", "add", "-m", "reviewed", "v2"]);
        let git = assert_as_git(&r, &base, "v1", "v2", &[60]);
        assert!(git.contains("## Notes (review) ##"), "{git}");
    }

    /// `series range-diff`'s entry points: the texts made in-process where they can be, else read from
    /// `git log` (here because of `diff.algorithm = patience`); both versions at once, sharing a file cache.
    /// Either way they are `git log`'s.
    #[test]
    fn patch_texts_are_git_logs_either_way() {
        let r = Repo::new();
        r.write("f.txt", Some(&numbered(10, "")));
        let base = r.commit("Base");
        r.branch("v1", &base);
        r.write(
            "f.txt",
            Some(&numbered(10, "").replace("\n5\n", "\nfive\n")),
        );
        r.commit("Five");
        r.branch("v2", &base);
        r.write("f.txt", Some(&numbered(10, "").replace("\n6\n", "\nsix\n")));
        r.commit("Six");
        let fields = |p: &[PatchText]| -> Vec<(ObjectId, String, usize, i32)> {
            p.iter()
                .map(|p| (p.commit, p.text.clone(), p.diff_offset, p.diff_lines))
                .collect()
        };
        let (b, v1, v2) = (r.oid(&base), r.oid("v1"), r.oid("v2"));
        let want = (
            fields(&r.logged(&base, "v1")),
            fields(&r.logged(&base, "v2")),
        );
        assert_eq!((want.0.len(), want.1.len()), (1, 1));
        for algorithm in [None, Some("patience")] {
            if let Some(a) = algorithm {
                r.git(&["config", "diff.algorithm", a]);
            }
            let repo = r.open();
            let made_here = texts::read(&repo, b, v1).unwrap().is_some();
            assert_eq!(made_here, algorithm.is_none());
            assert_eq!(fields(&patch_texts(&repo, b, v1).unwrap()), want.0);
            let (x, y) = patch_texts_of_two(&repo, (b, v1), (b, v2)).unwrap();
            assert_eq!((fields(&x), fields(&y)), want);
        }
    }
}
