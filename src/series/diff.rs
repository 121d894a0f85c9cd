//! Unified diffs of two trees, byte for byte as `git diff --full-index -M --histogram` prints them, plus the
//! `--stat`/`--shortstat`/`--summary` lines and a patch fingerprint for comparing patches across rewrites.
//!
//! gix finds the changed files and renames; the line diff is imara-diff's histogram with git's slider
//! heuristics; the rendering (file headers, hunk grouping with three lines of context, funcname after `@@`,
//! `\ No newline at end of file`, path quoting, `GIT binary patch` literals) is ours and follows git's
//! `diff.c`/`xemit.c`. With [`Options::binary`] binary files come out as `GIT binary patch` literals, which
//! `git apply`/`git am` can apply, as `git format-patch` does; otherwise as `Binary files … differ`.

use std::io::Write as _;

use gix::bstr::{BStr, BString, ByteSlice};
use gix::diff::blob::{Algorithm, Diff, InternedInput};
use gix::object::tree::diff::ChangeDetached;
use gix::objs::tree::EntryMode;
use gix::ObjectId;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// Lines of context around changes, as git's default.
const CONTEXT: u32 = 3;
/// git looks for a NUL in this many leading bytes to call a file binary.
const BINARY_PROBE: usize = 8000;

#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Binary files as `GIT binary patch` literals (applicable) instead of `Binary files … differ`.
    pub binary: bool,
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Added,
    Deleted,
    Modified,
    Renamed { similarity: u32 },
}

/// One file's part of a patch.
#[derive(Debug, Clone)]
pub struct FileDiff {
    pub status: Status,
    pub old_path: BString,
    pub new_path: BString,
    pub old_mode: Option<EntryMode>,
    pub new_mode: Option<EntryMode>,
    pub binary: bool,
    pub insertions: u32,
    pub deletions: u32,
    /// Sizes for the `Bin X -> Y bytes` stat of binary files.
    pub old_size: usize,
    pub new_size: usize,
    /// The whole block, from `diff --git` on.
    pub text: Vec<u8>,
}

/// A whole patch: every changed file, in git's order (by destination path).
#[derive(Debug, Clone, Default)]
pub struct PatchDiff {
    pub files: Vec<FileDiff>,
}

/// `N files changed, I insertions(+), D deletions(-)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ShortStat {
    pub files: usize,
    pub insertions: u64,
    pub deletions: u64,
}

impl ShortStat {
    /// git's wording, with the leading space: ` 2 files changed, 3 insertions(+), 1 deletion(-)`.
    pub fn text(&self) -> String {
        let mut s = format!(
            " {} file{} changed",
            self.files,
            if self.files == 1 { "" } else { "s" }
        );
        if self.files == 0 {
            return s;
        }
        if self.insertions > 0 || self.deletions == 0 {
            s.push_str(&format!(
                ", {} insertion{}(+)",
                self.insertions,
                if self.insertions == 1 { "" } else { "s" }
            ));
        }
        if self.deletions > 0 || self.insertions == 0 {
            s.push_str(&format!(
                ", {} deletion{}(-)",
                self.deletions,
                if self.deletions == 1 { "" } else { "s" }
            ));
        }
        s
    }

    pub fn add(&mut self, other: ShortStat) {
        self.files += other.files;
        self.insertions += other.insertions;
        self.deletions += other.deletions;
    }
}

impl PatchDiff {
    /// The patch text: every file block in order.
    pub fn text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for f in &self.files {
            out.extend_from_slice(&f.text);
        }
        out
    }

    pub fn shortstat(&self) -> ShortStat {
        ShortStat {
            files: self.files.len(),
            insertions: self.files.iter().map(|f| u64::from(f.insertions)).sum(),
            deletions: self.files.iter().map(|f| u64::from(f.deletions)).sum(),
        }
    }

    /// The `--stat` block git puts between `---` and the diff of a mail: one line per file, the shortstat,
    /// and the `--summary` lines (created, deleted, renamed files and mode changes). The graph is scaled to
    /// `width` columns like git's, though not guaranteed to the column.
    pub fn stat(&self, width: usize) -> String {
        let names: Vec<String> = self.files.iter().map(stat_name).collect();
        let name_width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
        let max_change = self
            .files
            .iter()
            .filter(|f| !f.binary)
            .map(|f| f.insertions + f.deletions)
            .max()
            .unwrap_or(0);
        let count_width = self
            .files
            .iter()
            .map(|f| {
                if f.binary {
                    3
                } else {
                    (f.insertions + f.deletions).to_string().len()
                }
            })
            .max()
            .unwrap_or(1);
        // " name | count graph"
        let graph_width = width
            .saturating_sub(name_width + count_width + 4)
            .clamp(8, 40) as u32;
        let mut out = String::new();
        for (f, name) in self.files.iter().zip(&names) {
            if f.binary {
                out.push_str(&format!(
                    " {name:<name_width$} | Bin {} -> {} bytes\n",
                    f.old_size, f.new_size
                ));
                continue;
            }
            let total = f.insertions + f.deletions;
            let (plus, minus) = if max_change <= graph_width || max_change == 0 {
                (f.insertions, f.deletions)
            } else {
                let scale = |n: u32| -> u32 {
                    if n == 0 {
                        0
                    } else {
                        ((u64::from(n) * u64::from(graph_width)) / u64::from(max_change)).max(1)
                            as u32
                    }
                };
                (scale(f.insertions), scale(f.deletions))
            };
            let row = format!(
                " {name:<name_width$} | {total:>count_width$} {}{}",
                "+".repeat(plus as usize),
                "-".repeat(minus as usize)
            );
            out.push_str(row.trim_end());
            out.push('\n');
        }
        out.push_str(&self.shortstat().text());
        out.push('\n');
        for f in &self.files {
            let mode =
                |m: Option<EntryMode>| m.map(|m| format!("{:06o}", m.value())).unwrap_or_default();
            match f.status {
                Status::Added => out.push_str(&format!(
                    " create mode {} {}\n",
                    mode(f.new_mode),
                    f.new_path
                )),
                Status::Deleted => out.push_str(&format!(
                    " delete mode {} {}\n",
                    mode(f.old_mode),
                    f.old_path
                )),
                Status::Renamed { similarity } => {
                    out.push_str(&format!(
                        " rename {} ({similarity}%)\n",
                        rename_display(f.old_path.as_ref(), f.new_path.as_ref())
                    ));
                    if f.old_mode != f.new_mode {
                        out.push_str(&format!(
                            " mode change {} => {}\n",
                            mode(f.old_mode),
                            mode(f.new_mode)
                        ));
                    }
                }
                Status::Modified if f.old_mode != f.new_mode => out.push_str(&format!(
                    " mode change {} => {} {}\n",
                    mode(f.old_mode),
                    mode(f.new_mode),
                    f.new_path
                )),
                Status::Modified => {}
            }
        }
        out
    }

    /// A fingerprint of what the patch does, in the spirit of `git patch-id`: the changed paths and the
    /// added and removed lines, without line numbers, blob ids or context. Two patches with the same
    /// fingerprint make the same change, even on different bases.
    pub fn fingerprint(&self) -> String {
        let mut h = Sha256::new();
        for f in &self.files {
            h.update(b"\0file ");
            h.update(&f.old_path);
            h.update(b"\0");
            h.update(&f.new_path);
            h.update(format!(
                "\0{:?}{:?}{:?}",
                f.status,
                f.old_mode.map(|m| m.value()),
                f.new_mode.map(|m| m.value())
            ));
            if f.binary {
                // Binary blocks carry the blob ids, which is what identifies the change.
                h.update(&f.text);
                continue;
            }
            for line in f.text.lines_with_terminator() {
                if matches!(line.first(), Some(b'+' | b'-'))
                    && !line.starts_with(b"+++ ")
                    && !line.starts_with(b"--- ")
                {
                    h.update(line);
                }
            }
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// The stat column's name: the path, or `old => new` with common leading directories and trailing parts
/// folded as git does (`dir/{a => b}/f`).
fn stat_name(f: &FileDiff) -> String {
    match f.status {
        Status::Renamed { .. } => rename_display(f.old_path.as_ref(), f.new_path.as_ref()),
        Status::Deleted => f.old_path.to_string(),
        _ => f.new_path.to_string(),
    }
}

fn rename_display(old: &BStr, new: &BStr) -> String {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    // Common prefix up to and including a '/', common suffix from a '/'.
    let mut pfx = 0;
    for i in 0..a.len().min(b.len()) {
        if a[i] != b[i] {
            break;
        }
        if a[i] == b'/' {
            pfx = i + 1;
        }
    }
    let mut sfx = 0;
    let max_sfx = a.len().min(b.len()) - pfx;
    for i in 1..=max_sfx {
        if a[a.len() - i] != b[b.len() - i] {
            break;
        }
        if a[a.len() - i] == b'/' {
            sfx = i;
        }
    }
    if pfx == 0 && sfx == 0 {
        return format!("{old} => {new}");
    }
    let (ma, mb) = (&a[pfx..a.len() - sfx], &b[pfx..b.len() - sfx]);
    format!(
        "{}{{{} => {}}}{}",
        a[..pfx].as_bstr(),
        ma.as_bstr(),
        mb.as_bstr(),
        a[a.len() - sfx..].as_bstr()
    )
}

/// The diff from `old` to `new` (tree ids; `None` is the empty tree).
pub fn diff_trees(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    opts: Options,
) -> Result<PatchDiff> {
    let empty = ObjectId::empty_tree(repo.object_hash());
    let (old, new) = (old.unwrap_or(empty), new.unwrap_or(empty));
    if old == new {
        return Ok(PatchDiff::default());
    }
    let old_tree = repo.find_tree(old)?;
    let new_tree = repo.find_tree(new)?;
    let changes = repo.diff_tree_to_tree(
        &old_tree,
        &new_tree,
        gix::diff::Options::default().with_rewrites(Some(gix::diff::Rewrites::default())),
    )?;
    let mut files = Vec::new();
    for ch in changes {
        for part in split(ch) {
            files.push(render(repo, part, opts)?);
        }
    }
    files.sort_by(|a, b| {
        a.new_path
            .cmp(&b.new_path)
            .then(a.old_path.cmp(&b.old_path))
    });
    Ok(PatchDiff { files })
}

/// A file-level change, with trees left out and type changes (file to symlink, …) split into a deletion and
/// an addition as git shows them.
struct Part {
    status: Status,
    old: Option<(BString, EntryMode, ObjectId)>,
    new: Option<(BString, EntryMode, ObjectId)>,
}

fn same_type(a: EntryMode, b: EntryMode) -> bool {
    (a.is_blob() && b.is_blob()) || (a.is_link() && b.is_link()) || (a.is_commit() && b.is_commit())
}

fn split(ch: ChangeDetached) -> Vec<Part> {
    match ch {
        ChangeDetached::Addition {
            location,
            entry_mode,
            id,
            ..
        } if !entry_mode.is_tree() => vec![Part {
            status: Status::Added,
            old: None,
            new: Some((location, entry_mode, id)),
        }],
        ChangeDetached::Deletion {
            location,
            entry_mode,
            id,
            ..
        } if !entry_mode.is_tree() => vec![Part {
            status: Status::Deleted,
            old: Some((location, entry_mode, id)),
            new: None,
        }],
        ChangeDetached::Modification {
            location,
            previous_entry_mode,
            previous_id,
            entry_mode,
            id,
        } => {
            if previous_entry_mode.is_tree() && entry_mode.is_tree() {
                Vec::new()
            } else if previous_entry_mode.is_tree() {
                vec![Part {
                    status: Status::Added,
                    old: None,
                    new: Some((location, entry_mode, id)),
                }]
            } else if entry_mode.is_tree() {
                vec![Part {
                    status: Status::Deleted,
                    old: Some((location, previous_entry_mode, previous_id)),
                    new: None,
                }]
            } else if same_type(previous_entry_mode, entry_mode) {
                vec![Part {
                    status: Status::Modified,
                    old: Some((location.clone(), previous_entry_mode, previous_id)),
                    new: Some((location, entry_mode, id)),
                }]
            } else {
                vec![
                    Part {
                        status: Status::Deleted,
                        old: Some((location.clone(), previous_entry_mode, previous_id)),
                        new: None,
                    },
                    Part {
                        status: Status::Added,
                        old: None,
                        new: Some((location, entry_mode, id)),
                    },
                ]
            }
        }
        ChangeDetached::Rewrite {
            source_location,
            source_entry_mode,
            source_id,
            diff,
            entry_mode,
            id,
            location,
            copy,
            ..
        } => {
            if copy {
                // Copies are not detected with the options used here; show one as an addition.
                return vec![Part {
                    status: Status::Added,
                    old: None,
                    new: Some((location, entry_mode, id)),
                }];
            }
            let similarity = match diff {
                None => 100,
                Some(stats) => ((stats.similarity * 100.0).floor() as u32).min(99),
            };
            vec![Part {
                status: Status::Renamed { similarity },
                old: Some((source_location, source_entry_mode, source_id)),
                new: Some((location, entry_mode, id)),
            }]
        }
        _ => Vec::new(),
    }
}

fn mode_str(m: EntryMode) -> String {
    format!("{:06o}", m.value())
}

/// The content git diffs for an entry: blob data, a symlink's target, or `Subproject commit <id>` for a
/// submodule.
fn content(repo: &gix::Repository, mode: EntryMode, id: ObjectId) -> Result<Vec<u8>> {
    if mode.is_commit() {
        return Ok(format!("Subproject commit {id}\n").into_bytes());
    }
    Ok(repo.find_blob(id)?.data.clone())
}

fn is_binary(data: &[u8]) -> bool {
    data[..data.len().min(BINARY_PROBE)].contains(&0)
}

/// A path as git prints it in headers: C-quoted when it has special bytes (`core.quotePath` default), the
/// prefix (`a/`, `b/`) inside the quotes, as git does.
pub fn quote_path(prefix: &str, path: &BStr) -> String {
    let mut full = BString::from(prefix);
    full.extend_from_slice(path);
    gix::quote::ansi_c::quote(full.as_ref()).to_string()
}

fn render(repo: &gix::Repository, part: Part, opts: Options) -> Result<FileDiff> {
    let zero = ObjectId::null(repo.object_hash());
    let (old_path, old_mode, old_id) = match &part.old {
        Some((p, m, id)) => (p.clone(), Some(*m), *id),
        None => (part.new.as_ref().expect("a side").0.clone(), None, zero),
    };
    let (new_path, new_mode, new_id) = match &part.new {
        Some((p, m, id)) => (p.clone(), Some(*m), *id),
        None => (old_path.clone(), None, zero),
    };
    let old_data = match part.old {
        Some((_, m, id)) => content(repo, m, id)?,
        None => Vec::new(),
    };
    let new_data = match part.new {
        Some((_, m, id)) => content(repo, m, id)?,
        None => Vec::new(),
    };
    let a = quote_path("a/", old_path.as_ref());
    let b = quote_path("b/", new_path.as_ref());
    let mut out = Vec::new();
    let _ = writeln!(out, "diff --git {a} {b}");
    match part.status {
        Status::Added => {
            let _ = writeln!(
                out,
                "new file mode {}",
                mode_str(new_mode.expect("new side"))
            );
        }
        Status::Deleted => {
            let _ = writeln!(
                out,
                "deleted file mode {}",
                mode_str(old_mode.expect("old side"))
            );
        }
        Status::Modified | Status::Renamed { .. } => {
            if old_mode != new_mode {
                let _ = writeln!(out, "old mode {}", mode_str(old_mode.expect("old side")));
                let _ = writeln!(out, "new mode {}", mode_str(new_mode.expect("new side")));
            }
        }
    }
    if let Status::Renamed { similarity } = part.status {
        let _ = writeln!(out, "similarity index {similarity}%");
        let _ = writeln!(out, "rename from {}", quote_path("", old_path.as_ref()));
        let _ = writeln!(out, "rename to {}", quote_path("", new_path.as_ref()));
    }
    let binary = is_binary(&old_data) || is_binary(&new_data);
    let mut file = FileDiff {
        status: part.status,
        old_path,
        new_path,
        old_mode,
        new_mode,
        binary,
        insertions: 0,
        deletions: 0,
        old_size: old_data.len(),
        new_size: new_data.len(),
        text: Vec::new(),
    };
    if old_id != new_id {
        let _ = write!(out, "index {old_id}..{new_id}");
        if old_mode == new_mode {
            let _ = write!(out, " {}", mode_str(new_mode.expect("both sides")));
        }
        out.push(b'\n');
    } else {
        file.text = out;
        return Ok(file);
    }
    // git ends a `---`/`+++` label with a tab when the path has a space (so that `patch` can find its end).
    let tab = |p: &BString| if p.contains(&b' ') { "\t" } else { "" };
    let label_a = if file.status == Status::Added {
        "/dev/null".to_owned()
    } else {
        format!("{a}{}", tab(&file.old_path))
    };
    let label_b = if file.status == Status::Deleted {
        "/dev/null".to_owned()
    } else {
        format!("{b}{}", tab(&file.new_path))
    };
    if binary {
        if opts.binary {
            out.extend_from_slice(b"GIT binary patch\n");
            binary_literal(&mut out, &new_data)?;
            binary_literal(&mut out, &old_data)?;
        } else {
            let plain = |l: &str| l.trim_end_matches('\t').to_owned();
            let _ = writeln!(
                out,
                "Binary files {} and {} differ",
                plain(&label_a),
                plain(&label_b)
            );
        }
        file.text = out;
        return Ok(file);
    }
    let (hunks, ins, del) = hunks(&old_data, &new_data);
    file.insertions = ins;
    file.deletions = del;
    if !hunks.is_empty() {
        let _ = writeln!(out, "--- {label_a}");
        let _ = writeln!(out, "+++ {label_b}");
        out.extend_from_slice(&hunks);
    }
    file.text = out;
    Ok(file)
}

/// The hunks of a text diff, git-exact, and the insertion and deletion counts.
pub fn hunks(old: &[u8], new: &[u8]) -> (Vec<u8>, u32, u32) {
    let input = InternedInput::new(
        gix::diff::blob::sources::byte_lines(old),
        gix::diff::blob::sources::byte_lines(new),
    );
    let mut diff = Diff::compute(Algorithm::Histogram, &input);
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
        if let Some(func) = funcname(&old_lines, old_start) {
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

/// git's default funcname: the nearest line above the hunk that starts with a letter, `_` or `$`, cut to
/// 80 bytes, trailing whitespace removed (`xemit.c`, `def_ff`).
fn funcname<'a>(old_lines: &[&'a [u8]], hunk_start: u32) -> Option<&'a [u8]> {
    let mut l = hunk_start as usize;
    while l > 0 {
        l -= 1;
        let rec = old_lines[l];
        if rec
            .first()
            .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b'$')
        {
            let mut len = rec.len().min(80);
            while len > 0 && rec[len - 1].is_ascii_whitespace() {
                len -= 1;
            }
            return Some(&rec[..len]);
        }
    }
    None
}

/// One `literal N` section of a `GIT binary patch`: the data deflated, in base85 lines of up to 52 bytes.
fn binary_literal(out: &mut Vec<u8>, data: &[u8]) -> Result<()> {
    use gix::zlib::stream::deflate;
    let mut z = deflate::Write::new(Vec::new(), gix::zlib::Compression::BEST);
    z.write_all(data)
        .and_then(|()| z.flush())
        .map_err(|e| Error::io("compressing a binary file for its patch", e))?;
    let deflated = z.into_inner();
    let _ = writeln!(out, "literal {}", data.len());
    crate::base85::encode_lines(out, &deflated);
    out.push(b'\n');
    Ok(())
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

    #[test]
    fn shortstat_wording() {
        let s = |files, insertions, deletions| {
            ShortStat {
                files,
                insertions,
                deletions,
            }
            .text()
        };
        assert_eq!(s(1, 1, 0), " 1 file changed, 1 insertion(+)");
        assert_eq!(s(2, 0, 3), " 2 files changed, 3 deletions(-)");
        assert_eq!(
            s(1, 0, 0),
            " 1 file changed, 0 insertions(+), 0 deletions(-)"
        );
        assert_eq!(
            s(3, 2, 1),
            " 3 files changed, 2 insertions(+), 1 deletion(-)"
        );
    }

    #[test]
    fn renames_fold_common_parts() {
        assert_eq!(
            rename_display("a.txt".into(), "z.txt".into()),
            "a.txt => z.txt"
        );
        assert_eq!(
            rename_display("src/a/f.rs".into(), "src/b/f.rs".into()),
            "src/{a => b}/f.rs"
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(quote_path("a/", "x y".into()), "a/x y");
        assert_eq!(quote_path("a/", "t\"ab".into()), "\"a/t\\\"ab\"");
        assert_eq!(quote_path("a/", "é".into()), "\"a/\\303\\251\"");
    }
}
