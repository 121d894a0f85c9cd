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
            "--no-notes",
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
            } else if line.starts_with("    ") {
                buf.push_str(line.trim_end());
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

fn unquote(s: &str) -> String {
    let s = s.trim_end_matches('\t');
    match s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(q) => q.replace("\\\"", "\"").replace("\\\\", "\\"),
        None => s.to_owned(),
    }
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
                let end = quoted.find("\" ").map(|e| e + 2).unwrap_or(s.len());
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
    format!(
        "{} {} {} {summary}",
        side(e.old_index, e.old_commit),
        e.status.sign(),
        side(e.new_index, e.new_commit)
    )
}

/// git's patch-number width: the digits of one more than the longer side's count.
pub fn number_width(a: usize, b: usize) -> usize {
    (1 + a.max(b)).to_string().len()
}
