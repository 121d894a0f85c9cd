//! range-diff's patch texts made in this process, without `git log`: the two `git log -p` runs were most of
//! `series range-diff`'s time (docs/benchmarks-series.md).
//!
//! A text is what [`super::parse_log`] makes of `git log -p` with range-diff's options: the author and message
//! as `--pretty=medium` prints them, then each file's diff with munged headers (`## path ##`, `@@ path: func`).
//! The diff is [`crate::capabilities::series::diff`]'s (gix finds the changed files and renames, imara-diff's Myers with
//! git's slider heuristics is `git log -p`'s default line diff). What would make `git log` print something
//! else is not imitated: [`read`] answers `None` and the caller asks `git log` instead. That is a range that is
//! not a plain chain of commits, configuration that changes `git log -p` (another diff algorithm, context,
//! rename settings, mailmaps, notes, signatures, an external diff), attributes files (diff drivers change the
//! function names after `@@`), commits in another encoding, tabs after non-ASCII text in a message, and
//! paths git would quote. The library reads no environment variables, so what only the environment sets is not
//! seen here: `git -c` settings, `GIT_NOTES_REF`, `GIT_EXTERNAL_DIFF`, `GIT_DIFF_OPTS`, and the default global
//! attributes file (`$XDG_CONFIG_HOME/git/attributes`); `core.attributesFile` and `GIT_CONFIG_COUNT` settings
//! are (gix reads them).
//!
//! Renames are the one place where gix and git can disagree on the same commit: git's similarity estimate is
//! its own, so a commit where git could have paired an added and a deleted file differently (an inexact
//! rename, several renames, an added and a deleted file) takes its text from `git log --no-walk` for those
//! commits only, in one run.

use gix::bstr::ByteSlice;
use gix::diff::blob::Algorithm;
use gix::ObjectId;

use super::PatchText;
use crate::capabilities::series::diff::{self, FileDiff, Status};
use crate::kit::error::Result;

/// Commits beyond which a range is left to `git log` (a series is a few dozen patches).
const MAX_COMMITS: usize = 10_000;

/// Commits from which a first version is rendered on two threads.
const PARALLEL_FROM: usize = 8;

/// The settings `git log -p` would use, or `None` when it would print what this module does not make.
fn settings(repo: &gix::Repository) -> Option<diff::Options> {
    let config = repo.config_snapshot();
    let algorithm = match config.string("diff.algorithm").map(|v| v.to_string()) {
        None => Algorithm::Myers,
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "myers" | "default" => Algorithm::Myers,
            "minimal" => Algorithm::MyersMinimal,
            "histogram" => Algorithm::Histogram,
            _ => return None,
        },
    };
    let renames = match config.string("diff.renames").map(|v| v.to_string()) {
        None => true,
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" | "" => true,
            "false" | "no" | "off" | "0" => false,
            _ => return None,
        },
    };
    // Each of these changes what `git log -p` prints (context, hunk merging, blank context lines, file order,
    // the author line, notes, signatures, the text encoding, the diff program).
    const CHANGES_LOG: &[&str] = &[
        "diff.context",
        "diff.interHunkContext",
        "diff.indentHeuristic",
        "diff.suppressBlankEmpty",
        "diff.orderFile",
        "diff.renameLimit",
        "diff.external",
        "diff.relative",
        "diff.wsErrorHighlight",
        "mailmap.file",
        "mailmap.blob",
        "core.notesRef",
        "notes.displayRef",
        "log.showSignature",
        "log.showRoot",
        "i18n.logOutputEncoding",
        "i18n.commitEncoding",
        "core.attributesFile",
        "core.quotePath",
    ];
    if CHANGES_LOG.iter().any(|k| config.string(*k).is_some()) {
        return None;
    }
    // range-diff shows the default notes (`--show-notes-by-default`).
    if repo
        .try_find_reference("refs/notes/commits")
        .ok()
        .flatten()
        .is_some()
    {
        return None;
    }
    let common = repo.common_dir();
    if common.join("info/attributes").exists() {
        return None;
    }
    // `log.mailmap` is on by default: a `.mailmap` at the top of the work tree renames authors.
    if let Some(wt) = repo.workdir() {
        if wt.join(".mailmap").exists() {
            return None;
        }
    } else {
        // A bare repository reads HEAD's `.mailmap`.
        let head_has = repo
            .head_commit()
            .ok()
            .and_then(|c| c.tree().ok())
            .is_some_and(|t| t.find_entry(".mailmap").is_some());
        if head_has {
            return None;
        }
    }
    Some(diff::Options {
        binary: false,
        algorithm,
        renames,
    })
}

/// The commits of `base..tip`, oldest first, when they are a chain of single-parent commits from `base`.
fn chain(repo: &gix::Repository, base: ObjectId, tip: ObjectId) -> Result<Option<Vec<ObjectId>>> {
    let mut out = Vec::new();
    let mut at = tip;
    while at != base {
        if out.len() > MAX_COMMITS {
            return Ok(None);
        }
        let c = repo.find_commit(at)?;
        let mut parents = c.parent_ids();
        let (Some(p), None) = (parents.next(), parents.next()) else {
            return Ok(None);
        };
        out.push(at);
        at = p.detach();
    }
    out.reverse();
    Ok(Some(out))
}

/// True when the tree holds a `.gitattributes` anywhere.
fn has_attributes(repo: &gix::Repository, tree: ObjectId) -> Result<bool> {
    let mut todo = vec![tree];
    while let Some(t) = todo.pop() {
        let tree = repo.find_tree(t)?;
        for e in tree.iter() {
            let e =
                e.map_err(|e| crate::kit::error::Error::wrap(format!("reading tree {t}"), e))?;
            if e.filename() == ".gitattributes" {
                return Ok(true);
            }
            if e.mode().is_tree() {
                todo.push(e.oid().to_owned());
            }
        }
    }
    Ok(false)
}

/// The patch texts of `base..tip`, oldest first, or `None` when `git log` must make them (see the module doc).
pub fn read(
    repo: &gix::Repository,
    base: ObjectId,
    tip: ObjectId,
) -> Result<Option<Vec<PatchText>>> {
    read_cached(repo, base, tip, &mut diff::FileCache::default())
}

/// [`read`] with the file diffs of an earlier call (the other version of the series) at hand.
pub fn read_cached(
    repo: &gix::Repository,
    base: ObjectId,
    tip: ObjectId,
    cache: &mut diff::FileCache,
) -> Result<Option<Vec<PatchText>>> {
    let Some(opts) = settings(repo) else {
        return Ok(None);
    };
    let Some(commits) = chain(repo, base, tip)? else {
        return Ok(None);
    };
    if has_attributes(repo, repo.find_commit(base)?.tree_id()?.detach())? {
        return Ok(None);
    }
    // Each commit with the tree it is diffed against.
    let mut pairs = Vec::with_capacity(commits.len());
    let mut parent_tree = repo.find_commit(base)?.tree_id()?.detach();
    for &id in &commits {
        let tree = repo.find_commit(id)?.tree_id()?.detach();
        pairs.push((parent_tree, id));
        parent_tree = tree;
    }
    // With nothing rendered yet (the first version of two), the two halves render on two threads, each with
    // its own file cache, merged afterwards: range-diff waits for this, and the second version then mostly
    // takes its file diffs from the cache.
    let out = if cache.is_empty() && pairs.len() >= PARALLEL_FROM {
        let (first, second) = pairs.split_at(pairs.len() / 2);
        let shared = repo.clone().into_sync();
        let (a, b) = std::thread::scope(|s| {
            let other = s.spawn(|| {
                let repo = shared.to_thread_local();
                let mut cache = diff::FileCache::default();
                render(&repo, second, opts, &mut cache).map(|r| (r, cache))
            });
            let a = render(repo, first, opts, cache);
            let b = other
                .join()
                .unwrap_or_else(|_| Err(crate::Error::Other("a diff thread panicked".into())));
            (a, b)
        });
        let (b, other_cache) = b?;
        cache.absorb(other_cache);
        match (a?, b) {
            (Some(mut a), Some(b)) => {
                a.extend(b);
                Some(a)
            }
            _ => None,
        }
    } else {
        render(repo, &pairs, opts, cache)?
    };
    let Some(out) = out else {
        return Ok(None);
    };
    // The commits whose renames git might see otherwise: one `git log` for all of them.
    let asked: Vec<ObjectId> = commits
        .iter()
        .zip(&out)
        .filter(|(_, p)| p.is_none())
        .map(|(c, _)| *c)
        .collect();
    let mut from_git = super::read_commits(crate::kit::gitcli::dir_of(repo), &asked)?.into_iter();
    let mut texts = Vec::with_capacity(out.len());
    for (c, p) in commits.iter().zip(out) {
        match p.or_else(|| from_git.next().filter(|p| p.commit == *c)) {
            Some(p) => texts.push(p),
            None => return Ok(None),
        }
    }
    Ok(Some(texts))
}

/// The texts of `(parent tree, commit)` pairs; a commit whose renames git might see otherwise is `None` in the
/// list (asked of `git log` afterwards); `None` altogether when `git log` must make every text.
fn render(
    repo: &gix::Repository,
    pairs: &[(ObjectId, ObjectId)],
    opts: diff::Options,
    cache: &mut diff::FileCache,
) -> Result<Option<Vec<Option<PatchText>>>> {
    let mut out = Vec::with_capacity(pairs.len());
    for &(parent_tree, id) in pairs {
        let commit = repo.find_commit(id)?;
        let tree = commit.tree_id()?.detach();
        let Some(mut p) = metadata(&commit)? else {
            return Ok(None);
        };
        let d = diff::diff_trees_cached(repo, Some(parent_tree), Some(tree), opts, cache)?;
        if opts.renames && !renames_certain(&d.files) {
            out.push(None);
            continue;
        }
        for f in &d.files {
            if !file_text(&mut p, f) {
                return Ok(None);
            }
        }
        out.push(Some(p));
    }
    Ok(Some(out))
}

/// True when git's rename detection cannot have decided otherwise than gix's for these files: no rename, and no
/// added and deleted file git could pair (git's `estimate_similarity` pairs only regular files whose sizes
/// are within a factor of two, at the default 50% threshold); or a single exact rename and nothing else added
/// or deleted.
fn renames_certain(files: &[FileDiff]) -> bool {
    let added_or_deleted = |f: &&FileDiff| matches!(f.status, Status::Added | Status::Deleted);
    let renamed: Vec<&Status> = files
        .iter()
        .map(|f| &f.status)
        .filter(|s| matches!(s, Status::Renamed { .. }))
        .collect();
    match renamed.as_slice() {
        [] => {}
        [Status::Renamed { similarity: 100 }] => {
            return !files.iter().any(|f| added_or_deleted(&f))
        }
        _ => return false,
    }
    let (mut deleted, mut added) = (Vec::new(), Vec::new());
    for f in files.iter().filter(added_or_deleted) {
        let (mode, size, side) = match f.status {
            Status::Deleted => (f.old_mode, f.old_size, &mut deleted),
            _ => (f.new_mode, f.new_size, &mut added),
        };
        // A symlink or submodule git could still pair as an exact rename: leave the commit to git.
        if !mode.is_some_and(|m| m.is_blob()) {
            side.push(None);
        } else {
            side.push(Some(size));
        }
    }
    !deleted.iter().any(|d| {
        added.iter().any(|a| match (a, d) {
            (Some(a), Some(d)) => 2 * a.min(d) >= *a.max(d),
            _ => true,
        })
    })
}

/// The metadata and message part of a patch text, as range-diff makes it of `--pretty=medium`.
fn metadata(commit: &gix::Commit<'_>) -> Result<Option<PatchText>> {
    let c = commit.decode()?;
    if c.encoding
        .is_some_and(|e| !e.eq_ignore_ascii_case(b"utf-8"))
    {
        return Ok(None);
    }
    let author = c.author()?;
    let mut text = String::new();
    text.push_str(" ## Metadata ##\nAuthor: ");
    text.push_str(&author.name.to_str_lossy());
    text.push_str(" <");
    text.push_str(&author.email.to_str_lossy());
    text.push_str(">\n\n ## Commit message ##\n");
    // pretty.c: leading blank lines skipped, each line indented four spaces with tabs expanded to eight
    // columns, trailing blank lines dropped; range-diff then trims each line's end.
    let message = c.message.to_str_lossy();
    let lines: Vec<&str> = message.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    if let (Some(first), Some(last)) = (first, last) {
        for line in &lines[first..=last] {
            let line = line.trim_end();
            if line.is_empty() {
                text.push('\n');
                continue;
            }
            text.push_str("    ");
            if line.contains('\t') {
                if !line.is_ascii() {
                    // git expands by display width; not imitated.
                    return Ok(None);
                }
                let mut col = 0;
                for ch in line.chars() {
                    if ch == '\t' {
                        let n = 8 - col % 8;
                        text.extend(std::iter::repeat_n(' ', n));
                        col += n;
                    } else {
                        text.push(ch);
                        col += 1;
                    }
                }
                // A tab at the end expanded to spaces, which range-diff trims.
                let trimmed = text.trim_end_matches(' ').len();
                text.truncate(trimmed);
            } else {
                text.push_str(line);
            }
            text.push('\n');
        }
    }
    Ok(Some(PatchText {
        commit: commit.id,
        text,
        diff_offset: 0,
        diff_lines: 0,
    }))
}

/// Append one file's part (range-diff's munging of `git log -p --no-prefix` output); false when git would
/// print it differently from what is made here.
fn file_text(p: &mut PatchText, f: &FileDiff) -> bool {
    let old = f.old_path.to_str_lossy();
    let new = f.new_path.to_str_lossy();
    // Names git quotes in its headers, or that range-diff's header parser would read back differently.
    let plain = |s: &str| {
        s.bytes()
            .all(|b| (0x21..0x7f).contains(&b) && b != b'"' && b != b'\\')
    };
    if !plain(&old)
        || !plain(&new)
        || f.old_path.ends_with(b".gitattributes")
        || f.new_path.ends_with(b".gitattributes")
    {
        return false;
    }
    let buf = &mut p.text;
    buf.push('\n');
    if p.diff_offset == 0 {
        p.diff_offset = buf.len();
    }
    buf.push_str(" ## ");
    match f.status {
        Status::Added => {
            buf.push_str(&new);
            buf.push_str(" (new)");
        }
        Status::Deleted => {
            buf.push_str(&old);
            buf.push_str(" (deleted)");
        }
        Status::Renamed { .. } => {
            buf.push_str(&old);
            buf.push_str(" => ");
            buf.push_str(&new);
        }
        Status::Modified => buf.push_str(&new),
    }
    if let (Some(o), Some(n)) = (f.old_mode, f.new_mode) {
        if o != n {
            buf.push_str(&format!(
                " (mode change {:06o} => {:06o})",
                o.value(),
                n.value()
            ));
        }
    }
    buf.push_str(" ##\n");
    p.diff_lines += 1;
    let current = if f.status == Status::Deleted {
        &old
    } else {
        &new
    };
    let text = f.text.to_str_lossy();
    // Skip the extended header: everything up to the first hunk or binary line.
    let mut in_header = true;
    // Split at `\n` only: a `\r` before it is part of the line, as range-diff's parser keeps it.
    for line in text.split('\n') {
        if in_header {
            if line.starts_with("@@ ") {
                in_header = false;
            } else if line.starts_with("Binary files ") {
                let a = if f.status == Status::Added {
                    "/dev/null"
                } else {
                    &old
                };
                let b = if f.status == Status::Deleted {
                    "/dev/null"
                } else {
                    &new
                };
                buf.push_str(&format!(" Binary files {a} and {b} differ\n"));
                p.diff_lines += 1;
                continue;
            } else {
                continue;
            }
        }
        if let Some(rest) = line.strip_prefix("@@ ") {
            buf.push_str("@@");
            if let Some(at) = rest.find("@@") {
                let after = &rest[at + 2..];
                if !after.is_empty() {
                    buf.push(' ');
                    buf.push_str(current);
                    buf.push(':');
                }
                buf.push_str(after);
            }
        } else if line.starts_with(['+', '-', ' ']) {
            buf.push_str(line);
        } else if line.is_empty() {
            // Not made by the diff code (context lines start with a space); `git log` output would skip it.
            continue;
        } else {
            // `\ No newline at end of file`.
            buf.push(' ');
            buf.push_str(line);
        }
        buf.push('\n');
        p.diff_lines += 1;
    }
    true
}
