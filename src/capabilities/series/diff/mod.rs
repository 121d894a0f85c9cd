//! Unified diffs of two trees, byte for byte as `git diff --full-index -M --histogram` prints them, plus the
//! `--stat`/`--shortstat`/`--summary` lines ([`stat`]) and a patch fingerprint for comparing patches across
//! rewrites. The line diff and hunk layout are in [`hunks`].
//!
//! gix finds the changed files and renames; the line diff is imara-diff's histogram with git's slider
//! heuristics; the rendering (file headers, hunk grouping with three lines of context, funcname after `@@`,
//! `\ No newline at end of file`, path quoting, `GIT binary patch` literals) is ours and follows git's
//! `diff.c`/`xemit.c`. With [`Options::binary`] binary files come out as `GIT binary patch` literals, which
//! `git apply`/`git am` can apply, as `git format-patch` does; otherwise as `Binary files … differ`.

use std::io::Write as _;

use gix::bstr::{BStr, BString, ByteSlice};
use gix::object::tree::diff::ChangeDetached;
use gix::objs::tree::EntryMode;
use gix::ObjectId;
use sha2::{Digest, Sha256};

use crate::kit::error::{Error, Result};

pub mod hunks;
pub mod stat;

pub use hunks::hunks;
pub use stat::ShortStat;

/// git looks for a NUL in this many leading bytes to call a file binary.
const BINARY_PROBE: usize = 8000;

#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Binary files as `GIT binary patch` literals (applicable) instead of `Binary files … differ`.
    pub binary: bool,
    /// The line diff (`--histogram` for mails; git's default Myers for what must match `git log -p`).
    pub algorithm: gix::diff::blob::Algorithm,
    /// Rename detection, as `diff.renames` (on unless turned off).
    pub renames: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            binary: false,
            algorithm: gix::diff::blob::Algorithm::Histogram,
            renames: true,
        }
    }
}

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

impl PatchDiff {
    /// The patch text: every file block in order.
    pub fn text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for f in &self.files {
            out.extend_from_slice(&f.text);
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

/// The diff from `old` to `new` (tree ids; `None` is the empty tree).
pub fn diff_trees(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    opts: Options,
) -> Result<PatchDiff> {
    diff_trees_cached(repo, old, new, opts, &mut FileCache::default())
}

/// File diffs already rendered, by what they show (status, paths, modes, blobs): two versions of a series
/// mostly change the same blobs in the same way, and range-diff reads both.
///
/// It also keeps the one blob platform the tree diffs share: gix makes a new one per tree diff otherwise, and
/// each reads the index and every attributes file again.
#[derive(Default)]
pub struct FileCache {
    files: std::collections::HashMap<PartKey, FileDiff>,
    platform: Option<gix::diff::blob::Platform>,
}

impl FileCache {
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Take in what another cache rendered (with the same options).
    pub fn absorb(&mut self, other: FileCache) {
        self.files.extend(other.files);
    }
}

type Side = Option<(BString, EntryMode, ObjectId)>;
type PartKey = (Status, Side, Side);

/// [`diff_trees`], taking file diffs from `cache` and adding the new ones (with the same `opts` each time).
pub fn diff_trees_cached(
    repo: &gix::Repository,
    old: Option<ObjectId>,
    new: Option<ObjectId>,
    opts: Options,
    cache: &mut FileCache,
) -> Result<PatchDiff> {
    let empty = ObjectId::empty_tree(repo.object_hash());
    let (old, new) = (old.unwrap_or(empty), new.unwrap_or(empty));
    if old == new {
        return Ok(PatchDiff::default());
    }
    let old_tree = repo.find_tree(old)?;
    let new_tree = repo.find_tree(new)?;
    let platform = match &mut cache.platform {
        Some(p) => p,
        None => cache
            .platform
            .insert(repo.diff_resource_cache_for_tree_diff()?),
    };
    let mut changes: Vec<ChangeDetached> = Vec::new();
    gix::diff::tree_with_rewrites(
        gix::objs::TreeRefIter::from_bytes(&old_tree.data, repo.object_hash()),
        gix::objs::TreeRefIter::from_bytes(&new_tree.data, repo.object_hash()),
        platform,
        &mut Default::default(),
        &repo.objects,
        |change| -> gix::Result<_> {
            changes.push(change.into_owned());
            Ok(std::ops::ControlFlow::Continue(()))
        },
        gix::diff::Options::default()
            .with_rewrites(opts.renames.then(gix::diff::Rewrites::default))
            .into(),
    )
    .map_err(|e| Error::wrap(format!("diffing {old} and {new}"), e))?;
    // The blobs it kept for rename checks are not needed again.
    platform.clear_resource_cache_keep_allocation();
    let mut files = Vec::new();
    for ch in changes {
        for part in split(ch) {
            let key = (part.status, part.old.clone(), part.new.clone());
            if let Some(f) = cache.files.get(&key) {
                files.push(f.clone());
                continue;
            }
            let f = render(repo, part, opts)?;
            cache.files.insert(key, f.clone());
            files.push(f);
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
            if entry_mode.is_tree() || source_entry_mode.is_tree() {
                // A directory's rename: its files come as changes of their own.
                return Vec::new();
            }
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
    let (hunks, ins, del) = hunks::hunks_with(&old_data, &new_data, opts.algorithm);
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

/// One `literal N` section of a `GIT binary patch`: the data deflated, in base85 lines of up to 52 bytes.
fn binary_literal(out: &mut Vec<u8>, data: &[u8]) -> Result<()> {
    use gix::zlib::stream::deflate;
    let mut z = deflate::Write::new(Vec::new(), gix::zlib::Compression::BEST);
    z.write_all(data)
        .and_then(|()| z.flush())
        .map_err(|e| Error::io("compressing a binary file for its patch", e))?;
    let deflated = z.into_inner();
    let _ = writeln!(out, "literal {}", data.len());
    crate::kit::base85::encode_lines(out, &deflated);
    out.push(b'\n');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(quote_path("a/", "x y".into()), "a/x y");
        assert_eq!(quote_path("a/", "t\"ab".into()), "\"a/t\\\"ab\"");
        assert_eq!(quote_path("a/", "é".into()), "\"a/\\303\\251\"");
    }
}
