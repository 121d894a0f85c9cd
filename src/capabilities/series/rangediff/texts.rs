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
    // A boolean as git reads one (an empty value is false, a key without one true); `copies` or anything
    // else that is not a boolean is left to git.
    let renames = match config.try_boolean("diff.renames") {
        Ok(None) => true,
        Ok(Some(on)) => on,
        Err(_) => return None,
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
    // columns, trailing blank lines dropped; range-diff then trims each line's end. Blank and trimmed are git's
    // (`isspace`), which keeps a no-break space, a form feed or a vertical tab.
    let message = c.message.to_str_lossy();
    let lines: Vec<&str> = message.lines().collect();
    let blank = |l: &&str| l.trim_matches(super::is_git_space).is_empty();
    let first = lines.iter().position(|l| !blank(l));
    let last = lines.iter().rposition(|l| !blank(l));
    if let (Some(first), Some(last)) = (first, last) {
        for line in &lines[first..=last] {
            let line = line.trim_end_matches(super::is_git_space);
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

#[cfg(test)]
mod tests {
    //! The oracle is `git log -p` with range-diff's options, as [`super::super::parse_log`] reads it: the
    //! texts made here must be those, field for field, or `read` must leave them to git (`None`).

    use std::os::unix::fs::PermissionsExt;

    use super::super::test_support::Repo;
    use super::*;

    /// The texts of `base..tip` are made in-process, and equal git's.
    fn assert_made_as_git_logs(r: &Repo, base: &str, tip: &str) {
        let ours = read(&r.open(), r.oid(base), r.oid(tip))
            .unwrap()
            .expect("made in-process");
        assert_same(&ours, &r.logged(base, tip));
    }

    fn assert_same(ours: &[PatchText], git: &[PatchText]) {
        assert_eq!(ours.len(), git.len());
        for (o, g) in ours.iter().zip(git) {
            assert_eq!(o.commit, g.commit);
            assert_eq!(o.text, g.text, "{}", o.commit);
            assert_eq!(
                (o.diff_offset, o.diff_lines),
                (g.diff_offset, g.diff_lines),
                "{}",
                o.commit
            );
        }
    }

    fn chmod(r: &Repo, path: &str, mode: u32) {
        let p = r.path().join(path);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    const MAIN_RS: &str = "use std::io;\n\nfn main() {\n    let a = 1;\n    let b = 2;\n    let c = 3;\n    let d = 4;\n    let e = 5;\n    println!(\"{a}{b}{c}{d}{e}\");\n}\n";

    /// A history with every kind of file change and message git prints in its own way, longer than the
    /// range rendered on two threads; then a second range with the file cache of the first.
    #[test]
    fn texts_are_git_logs() {
        let r = Repo::new();
        r.write("main.rs", Some(MAIN_RS));
        r.write("bin.dat", Some("\0binary\0"));
        r.write("open.txt", Some("no newline"));
        r.write("crlf.txt", Some("one\r\ntwo\r\n"));
        r.write("gone.rs", Some("fn gone() {\n    1\n}\n"));
        r.write("moved.txt", Some("moved\nas it is\n"));
        r.write("run.sh", Some("echo run\n"));
        r.write("big.txt", Some(&"a long line of text\n".repeat(20)));
        let base = r.commit("Base");
        r.write(
            "main.rs",
            Some(&MAIN_RS.replace("let e = 5;", "let e = 50;")),
        );
        r.write("bin.dat", Some("\0binary, changed\0"));
        r.write("new.dat", Some("\0new\0"));
        r.write("open.txt", Some("no newline, still"));
        r.commit("\n\nChange inside main\n\nWith a body.\n\n\n");
        r.write("gone.rs", None);
        r.write("bin.dat", None);
        r.commit("Delete\n\n\tone tab\n  \ttwo\ta tab\ncol\t8\tand 16\nends in a tab\t\n");
        r.git(&["mv", "moved.txt", "renamed.txt"]);
        r.commit("An exact rename");
        chmod(&r, "run.sh", 0o755);
        r.commit("A mode change");
        std::os::unix::fs::symlink("main.rs", r.path().join("link")).unwrap();
        r.commit("A symlink");
        r.write("crlf.txt", Some("one\r\ntwo, changed\r\n"));
        r.commit("CRLF \u{e9}t\u{e9}\n\nNon-ASCII without tabs.");
        r.commit("An empty commit");
        r.commit("Ends in a no-break space\u{a0}\n\n\x0c\nform feed\x0c\nvertical tab\x0b\n");
        r.write(
            "main.rs",
            Some(&MAIN_RS.replace("use std::io;", "use std::fmt;")),
        );
        r.git(&["mv", "main.rs", "lib.rs"]);
        r.commit("An inexact rename");
        r.write("big.txt", None);
        r.write("other.txt", Some(&"another long line\n".repeat(20)));
        r.commit("A deletion and an addition git might pair");
        r.write("lib.rs", Some(MAIN_RS));
        chmod(&r, "lib.rs", 0o755);
        r.commit("Content and mode");
        assert_made_as_git_logs(&r, &base, "HEAD");
        // Made here but for the two commits whose renames git might see otherwise.
        let repo = r.open();
        let pairs: Vec<(ObjectId, ObjectId)> = r
            .git(&["rev-list", "--reverse", &format!("{base}..HEAD")])
            .lines()
            .map(|c| (r.oid(&format!("{c}~1^{{tree}}")), r.oid(c)))
            .collect();
        let opts = settings(&repo).unwrap();
        let made = render(&repo, &pairs, opts, &mut diff::FileCache::default())
            .unwrap()
            .unwrap();
        let from_git: Vec<usize> = (0..made.len()).filter(|&i| made[i].is_none()).collect();
        assert_eq!(from_git, [8, 9]);
        assert_made_as_git_logs(&r, "HEAD~3", "HEAD");
        assert_made_as_git_logs(&r, "HEAD", "HEAD");

        // Two versions of a series, the second with the first's file diffs at hand.
        let mut cache = diff::FileCache::default();
        let repo = r.open();
        let first = read_cached(&repo, r.oid(&base), r.oid("HEAD"), &mut cache).unwrap();
        assert_same(&first.unwrap(), &r.logged(&base, "HEAD"));
        assert!(!cache.is_empty());
        let second = read_cached(&repo, r.oid("HEAD~9"), r.oid("HEAD~1"), &mut cache).unwrap();
        assert_same(&second.unwrap(), &r.logged("HEAD~9", "HEAD~1"));
    }

    /// A submodule's commit as `--submodule=short` prints it.
    #[test]
    fn submodule_texts_are_git_logs() {
        let r = Repo::new();
        r.write("a.txt", Some("a\n"));
        let base = r.commit("Base");
        let id = "1234567890123456789012345678901234567890";
        r.git(&[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{id},sub"),
        ]);
        r.git(&["commit", "-q", "-m", "A submodule"]);
        let id2 = "2234567890123456789012345678901234567890";
        r.git(&["update-index", "--cacheinfo", &format!("160000,{id2},sub")]);
        r.git(&["commit", "-q", "-m", "Its next commit"]);
        assert_made_as_git_logs(&r, &base, "HEAD");
    }

    /// The settings that change `git log -p` leave the texts to git; the diff algorithms and rename settings
    /// this module does make give git's texts.
    #[test]
    fn settings_that_change_git_log_leave_the_texts_to_git() {
        let r = Repo::new();
        r.write("f.txt", Some("a\nb\nc\nd\ne\nf\n"));
        r.write("moved.txt", Some("moved\nas it is\n"));
        let base = r.commit("Base");
        r.write("f.txt", Some("a\nc\nb\nd\nf\ne\n"));
        r.commit("Reorder");
        r.git(&["mv", "moved.txt", "renamed.txt"]);
        r.commit("Rename");
        assert!(settings(&r.open()).is_some());
        // Written out, not read from `CHANGES_LOG`: a key dropped from that list must fail here.
        for key in [
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
        ] {
            r.git(&["config", key, "1"]);
            assert!(settings(&r.open()).is_none(), "{key}");
            r.git(&["config", "--unset", key]);
        }
        for (value, algorithm) in [
            ("myers", Some(Algorithm::Myers)),
            ("Default", Some(Algorithm::Myers)),
            ("minimal", Some(Algorithm::MyersMinimal)),
            ("HISTOGRAM", Some(Algorithm::Histogram)),
            ("patience", None),
        ] {
            r.git(&["config", "diff.algorithm", value]);
            let s = settings(&r.open());
            assert_eq!(s.map(|s| s.algorithm), algorithm, "{value}");
            if s.is_some() {
                assert_made_as_git_logs(&r, &base, "HEAD");
            }
        }
        r.git(&["config", "--unset", "diff.algorithm"]);
        for (value, renames) in [
            ("true", Some(true)),
            ("yes", Some(true)),
            ("On", Some(true)),
            ("1", Some(true)),
            ("false", Some(false)),
            ("no", Some(false)),
            ("off", Some(false)),
            ("0", Some(false)),
            // git's booleans: an empty value is false.
            ("", Some(false)),
            ("copies", None),
        ] {
            r.git(&["config", "diff.renames", value]);
            let s = settings(&r.open());
            assert_eq!(s.map(|s| s.renames), renames, "{value}");
            if s.is_some() {
                assert_made_as_git_logs(&r, &base, "HEAD");
            }
        }
        // A key without a value is true.
        r.git(&["config", "--unset", "diff.renames"]);
        let config = r.path().join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[diff]\n\trenames\n");
        std::fs::write(&config, text).unwrap();
        assert_eq!(settings(&r.open()).map(|s| s.renames), Some(true));
        assert_made_as_git_logs(&r, &base, "HEAD");
    }

    /// What else makes `git log` print differently: the default notes, attributes (the repository's, or a
    /// `.gitattributes` anywhere in the base tree or in a patch), a `.mailmap`, another encoding, a tab after
    /// non-ASCII text, paths git quotes, and a range that is not a chain.
    #[test]
    fn what_git_log_prints_otherwise_is_left_to_git() {
        let r = Repo::new();
        r.write("a.txt", Some("a\n"));
        let base = r.commit("Base");
        r.write("b.txt", Some("b\n"));
        r.commit("Add b");
        let left =
            |base: &str, tip: &str| read(&r.open(), r.oid(base), r.oid(tip)).unwrap().is_none();
        assert!(!left(&base, "HEAD"));

        r.git(&["notes", "add", "-m", "a note", "HEAD"]);
        assert!(left(&base, "HEAD"));
        r.git(&["update-ref", "-d", "refs/notes/commits"]);
        assert!(!left(&base, "HEAD"));

        r.write(".git/info/attributes", Some("*.txt diff=x\n"));
        assert!(left(&base, "HEAD"));
        r.write(".git/info/attributes", None);

        r.write(
            ".mailmap",
            Some("Other <o@example.com> <author@example.com>\n"),
        );
        assert!(left(&base, "HEAD"));
        r.write(".mailmap", None);

        // A bare clone reads HEAD's `.mailmap`.
        let bare = tempfile::tempdir().unwrap();
        let bare_path = bare.path().join("b.git");
        r.git(&["clone", "-q", "--bare", ".", bare_path.to_str().unwrap()]);
        let in_bare = |tip: &str| {
            read(&gix::open(&bare_path).unwrap(), r.oid(&base), r.oid(tip))
                .unwrap()
                .is_none()
        };
        assert!(!in_bare("HEAD"));

        let chain = r.head();
        r.branch("side", &base);
        r.write("deep/er/.gitattributes", Some("*.txt -diff\n"));
        let attributed = r.commit("Attributes deep in the tree");
        r.write("c.txt", Some("c\n"));
        let after = r.commit("Add c");
        assert!(left(&base, &attributed));
        // In the base tree, deep down.
        assert!(left(&attributed, &after));
        r.write("deep/er/.gitattributes", None);
        assert!(left(&after, &r.commit("Attributes removed")));

        r.branch("mailmapped", &chain);
        r.write(
            ".mailmap",
            Some("Other <o@example.com> <author@example.com>\n"),
        );
        r.commit("A mailmap");
        r.git(&["push", "-q", bare_path.to_str().unwrap(), "mailmapped:main"]);
        assert!(in_bare("mailmapped"));
        r.write(".mailmap", None);

        r.branch("merged", &chain);
        r.git(&["merge", "-q", "--no-ff", "-m", "Merge", "side"]);
        assert!(left(&base, "merged"));
        assert!(!left("merged", "merged"));

        r.branch("encoded", &chain);
        r.write("d.txt", Some("d\n"));
        r.git(&["add", "-A"]);
        r.git(&[
            "-c",
            "i18n.commitEncoding=ISO-8859-1",
            "commit",
            "-q",
            "-m",
            "Latin",
        ]);
        assert!(left(&chain, "encoded"));
        // git writes no `encoding` header for UTF-8; one that names it anyway, in any case, is made here.
        let tree = r.git(&["rev-parse", "encoded^{tree}"]);
        let explicit = r.commit_object(&format!(
            "tree {}\nparent {}\nauthor A <a@example.com> 1577836800 +0000\ncommitter A <a@example.com> 1577836800 +0000\nencoding utf-8\n\nExplicit\n",
            tree.trim(),
            r.head()
        ));
        assert!(!left("encoded", &explicit));
        assert_same(
            &read(&r.open(), r.oid("encoded"), r.oid(&explicit))
                .unwrap()
                .unwrap(),
            &r.logged("encoded", &explicit),
        );

        r.commit("Tab after \u{e9}\n\n\u{e9}\tx\n");
        assert!(left("HEAD~1", "HEAD"));
        r.commit("Tab after ASCII\n\nx\tx\n");
        assert!(!left("HEAD~1", "HEAD"));

        for name in [
            "with space.txt",
            "qu\"ote.txt",
            "back\\slash.txt",
            "\u{e9}.txt",
            "x/.gitattributes",
        ] {
            r.write(name, Some("n\n"));
            r.commit("A path git quotes or reads differently");
            assert!(left("HEAD~1", "HEAD"), "{name}");
            r.write(name, None);
            r.commit("Gone again");
            assert!(left("HEAD~1", "HEAD"), "{name}");
        }
        // An exact rename (made here, when it is the commit's only change) with one such name on one side
        // only: either side is enough to leave the commit to git.
        for (from, to) in [
            ("plain.txt", "with space.txt"),
            ("with space.txt", "plain.txt"),
            ("plain.txt", "x/.gitattributes"),
            ("x/.gitattributes", "plain.txt"),
        ] {
            r.write(from, Some("renamed whole\n"));
            r.commit("Before the rename");
            r.git(&["mv", from, to]);
            r.commit("The rename");
            assert!(left("HEAD~1", "HEAD"), "{from} => {to}");
            r.write(to, None);
            r.commit("Gone again");
        }
        // The same rename between plain names is made here: the cases above are left to git for their
        // names alone.
        r.write("plain.txt", Some("renamed whole\n"));
        r.commit("Before the rename");
        r.git(&["mv", "plain.txt", "plain2.txt"]);
        r.commit("The rename");
        assert!(!left("HEAD~1", "HEAD"));
        assert_made_as_git_logs(&r, "HEAD~1", "HEAD");
    }

    fn file(status: Status, old: u32, new: u32, old_size: usize, new_size: usize) -> FileDiff {
        let mode = |m: u32| (m != 0).then(|| gix::objs::tree::EntryMode::try_from(m).unwrap());
        FileDiff {
            status,
            old_path: "o".into(),
            new_path: "n".into(),
            old_mode: mode(old),
            new_mode: mode(new),
            binary: false,
            insertions: 0,
            deletions: 0,
            old_size,
            new_size,
            text: Vec::new(),
        }
    }

    /// When git could have paired an added and a deleted file otherwise than gix did (by hand, from git's
    /// `estimate_similarity`: regular files whose sizes are within a factor of two).
    #[test]
    fn renames_are_certain_only_where_git_cannot_decide_otherwise() {
        let (blob, link) = (0o100644, 0o120000);
        let exact = || file(Status::Renamed { similarity: 100 }, blob, blob, 5, 5);
        let inexact = || file(Status::Renamed { similarity: 90 }, blob, blob, 5, 6);
        let added = |size| file(Status::Added, 0, blob, 0, size);
        let deleted = |size| file(Status::Deleted, blob, 0, size, 0);
        let modified = || file(Status::Modified, blob, blob, 5, 6);
        for (files, certain) in [
            (vec![], true),
            (vec![modified()], true),
            (vec![exact()], true),
            (vec![exact(), modified()], true),
            (vec![exact(), added(5)], false),
            (vec![exact(), deleted(5)], false),
            (vec![exact(), exact()], false),
            (vec![inexact()], false),
            (vec![added(10), added(10)], true),
            (vec![deleted(10), modified()], true),
            (vec![added(10), deleted(20)], false),
            (vec![added(20), deleted(10)], false),
            (vec![added(10), deleted(21)], true),
            (vec![added(21), deleted(10)], true),
            (vec![added(0), deleted(0)], false),
            (
                vec![file(Status::Added, 0, link, 0, 10), deleted(100)],
                false,
            ),
            (
                vec![added(100), file(Status::Deleted, link, 0, 10, 0)],
                false,
            ),
        ] {
            assert_eq!(renames_certain(&files), certain, "{files:?}");
        }
    }
}
