//! `git add -A` followed by `git write-tree`, in process, for the common working tree: what a fold snapshots.
//!
//! Why: the two git processes were two thirds of a fold's time (docs/benchmarks-reroll.md), most of it process
//! start, index reading and writing done twice, and preloading threads.
//!
//! How it stays what git does: gix's index-worktree status decides what changed with git's rules (stat data,
//! racily clean entries, `.gitignore`, `info/exclude` and `core.excludesFile`, the attribute-driven filter
//! pipeline that turns a file into its blob); a changed file's blob is the filtered content status already
//! read, a new file's goes through the same pipeline. Entries are updated, added or removed, every tree is
//! built from the sorted entries (index order is tree order) into the caller's object memory, and the index
//! is written with a complete cache-tree, as `git write-tree` leaves it.
//!
//! What it leaves to git ([`stage_all`] answers `None`, the caller then runs `git add -A` and `git
//! write-tree`): a split or sparse index, an index with an untracked cache, fsmonitor data or resolve-undo
//! records, entries that are skip-worktree, assume-unchanged, intent-to-add, unmerged or submodules, an
//! untracked nested repository or special file, an entry whose type changed, and `core.symlinks=false`. Those
//! are the cases where git's `add` has rules of its own that a status does not cover.

use std::path::Path;
use std::sync::{Arc, Mutex};

use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{Flags, Mode, Stat};
use gix::ObjectId;

use crate::kit::error::{Error, Result};

type Status = gix::status::plumbing::index_as_worktree::EntryStatus<ObjectId, ()>;
type Change = gix::status::plumbing::index_as_worktree::Change<ObjectId, ()>;

/// Blobs read while comparing: filtered content of changed files, by id.
type Blobs = Arc<Mutex<Vec<(ObjectId, Vec<u8>)>>>;

/// Compares a tracked file with its entry by hashing its filtered content, and keeps that content when it
/// differs: it is the blob `git add` would write.
#[derive(Clone)]
struct KeepChanged(Blobs);

impl gix::status::plumbing::index_as_worktree::traits::CompareBlobs for KeepChanged {
    type Output = ObjectId;

    fn compare_blobs<'a, 'b>(
        &mut self,
        entry: &gix::index::Entry,
        _worktree_blob_size: u64,
        data: impl gix::status::plumbing::index_as_worktree::traits::ReadData<'a>,
        buf: &mut Vec<u8>,
    ) -> gix::Result<Option<ObjectId>> {
        use std::io::Read as _;
        let mut stream = data.stream_worktree_file()?;
        let bytes: &[u8] = match stream.as_bytes() {
            Some(b) => b,
            None => {
                stream
                    .read_to_end(buf)
                    .map_err(gix::hash::io::from_std_io)?;
                buf
            }
        };
        let id = gix::objs::compute_hash(entry.id.kind(), gix::objs::Kind::Blob, bytes)?;
        if id == entry.id {
            return Ok(None);
        }
        self.0
            .lock()
            .expect("no thread panics while holding it")
            .push((id, bytes.to_vec()));
        Ok(Some(id))
    }
}

/// Submodules are left to git (see the module doc), so their status is never asked for.
#[derive(Clone)]
struct NoSubmodules;

impl gix::status::plumbing::index_as_worktree::traits::SubmoduleStatus for NoSubmodules {
    type Output = ();

    fn status(&mut self, _: &gix::index::Entry, _: &BStr) -> gix::Result<Option<()>> {
        Ok(None)
    }
}

/// Stage the whole working tree into the index file at `index_path` (a copy the caller holds locked), as
/// `git add -A` does, and return the tree of the result, written to `repo`'s object database (the caller's
/// object memory, usually). `None` when this working tree needs git's own `add` (see the module doc); the
/// index file is then untouched.
pub fn stage_all(repo: &gix::Repository, index_path: &Path) -> Result<Option<ObjectId>> {
    let Some(workdir) = repo.workdir() else {
        return Ok(None);
    };
    // The index was copied from the one git wrote, just now, under our lock: its checksum is not verified
    // again (a fifth of the process when it was).
    let mut index = gix::index::File::at(
        index_path,
        repo.object_hash(),
        true,
        gix::index::decode::Options::default(),
    )
    .map_err(|e| Error::wrap(format!("reading {}", index_path.display()), e))?;
    let caps = repo.filesystem_options()?;
    if !crate::kit::repo::plain_index(&index) || !caps.symlink {
        return Ok(None);
    }
    let blobs: Blobs = Arc::default();
    let mut changes: Vec<(usize, Status)> = Vec::new();
    let mut untracked: Vec<BString> = Vec::new();
    {
        let mut recorder = gix::status::plumbing::index_as_worktree_with_renames::Recorder {
            records: Vec::new(),
        };
        let options = gix::status::index_worktree::Options {
            sorting: None,
            dirwalk_options: Some(
                repo.dirwalk_options()?
                    .emit_untracked(gix::dir::walk::EmissionMode::Matching)
                    .emit_collapsed(None)
                    .emit_ignored(None)
                    .emit_empty_directories(false),
            ),
            rewrites: None,
            thread_limit: None,
        };
        let interrupt = std::sync::atomic::AtomicBool::new(false);
        repo.index_worktree_status(
            &index,
            None::<BString>,
            &mut recorder,
            KeepChanged(blobs.clone()),
            NoSubmodules,
            &mut gix::progress::Discard,
            &interrupt,
            options,
        )
        .map_err(|e| Error::wrap("comparing the working tree with the index", e))?;
        use gix::status::plumbing::index_as_worktree_with_renames::Entry as E;
        for record in recorder.records {
            match record {
                E::Modification {
                    entry_index,
                    status,
                    ..
                } => changes.push((entry_index, status)),
                E::DirectoryContents { entry, .. } => {
                    if entry.status != gix::dir::entry::Status::Untracked {
                        continue;
                    }
                    match entry.disk_kind {
                        Some(gix::dir::entry::Kind::File | gix::dir::entry::Kind::Symlink) => {
                            untracked.push(entry.rela_path)
                        }
                        // An empty directory is not staged; anything else is git's to decide.
                        Some(gix::dir::entry::Kind::Directory)
                            if entry.property
                                == Some(gix::dir::entry::Property::EmptyDirectory) => {}
                        _ => return Ok(None),
                    }
                }
                E::Rewrite { .. } => return Ok(None),
            }
        }
    }
    let blobs = std::mem::take(&mut *blobs.lock().expect("the status threads are done"));
    let executable_bit = caps.executable_bit;

    // Update the entries that changed, and mark those that are gone.
    let mut removed = false;
    for (i, status) in changes {
        let path = index.entry(i).path(&index).to_owned();
        match status {
            Status::NeedsUpdate(stat) => index.entries_mut()[i].stat = stat,
            Status::Change(Change::Removed) => {
                index.entries_mut()[i].flags.insert(Flags::REMOVE);
                removed = true;
            }
            Status::Change(Change::Modification {
                executable_bit_changed,
                content_change,
                ..
            }) => {
                let meta = metadata(workdir, path.as_ref())?;
                let e = &mut index.entries_mut()[i];
                if let Some(id) = content_change {
                    e.id = id;
                }
                if executable_bit_changed && executable_bit {
                    e.mode = file_mode(&meta, true);
                }
                e.stat = stat(&meta, path.as_ref())?;
            }
            _ => return Ok(None),
        }
    }
    if removed {
        index.remove_entries(|_, _, e| e.flags.contains(Flags::REMOVE));
    }

    // New files: their blobs through the filter pipeline, as `git add` reads them.
    let mut new_blobs = Vec::new();
    if !untracked.is_empty() {
        let stack = repo
            .attributes_only(
                &index,
                gix::worktree::stack::state::attributes::Source::WorktreeThenIdMapping,
            )?
            .detach();
        let mut pipeline = gix::filter::Pipeline::new(repo, stack)?;
        for path in untracked {
            let meta = metadata(workdir, path.as_ref())?;
            let rela = rela_path(path.as_ref())?;
            let fs_path = workdir.join(&rela);
            let data = if meta.is_symlink() {
                let target = std::fs::read_link(&fs_path)
                    .map_err(|e| Error::io(format!("reading {}", fs_path.display()), e))?;
                gix::path::into_bstr(target)
                    .map_err(|e| Error::wrap(format!("the target of {path}"), e))?
                    .into_owned()
                    .into()
            } else {
                let file = std::fs::File::open(&fs_path)
                    .map_err(|e| Error::io(format!("reading {}", fs_path.display()), e))?;
                let mut out = pipeline
                    .convert_to_git(file, &rela, &index)
                    .map_err(|e| Error::wrap(format!("filtering {path}"), e))?;
                let mut data = Vec::new();
                std::io::Read::read_to_end(&mut out, &mut data)
                    .map_err(|e| Error::io(format!("reading {}", fs_path.display()), e))?;
                data
            };
            let id = gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, &data)
                .map_err(|e| Error::wrap(format!("hashing {path}"), e))?;
            let mode = if meta.is_symlink() {
                Mode::SYMLINK
            } else {
                file_mode(&meta, executable_bit)
            };
            let stat = stat(&meta, path.as_ref())?;
            new_blobs.push((id, data));
            index.dangerously_push_entry(stat, id, Flags::empty(), mode, path.as_bstr());
        }
        index.sort_entries();
    }

    use gix::objs::Write as _;
    for (id, data) in blobs.iter().chain(new_blobs.iter()) {
        let written = repo
            .objects
            .write_buf(gix::objs::Kind::Blob, data)
            .map_err(|e| Error::wrap("keeping a staged blob", e))?;
        debug_assert_eq!(written, *id);
    }
    let (tree, cache) = build_trees(repo, &index)?;
    // The cache-tree is replaced by a complete one (an index without the extension stays without it: gix has
    // no way to add one).
    if let Some(t) = index.tree_mut() {
        *t = cache;
    }
    // Written after every file was read: a file changed meanwhile has a modification time at or after the
    // index file's and counts as racy for the next reader, which compares its content.
    write_index(&index, index_path)?;
    Ok(Some(tree))
}

/// The repository-relative `path` as a path of this system.
fn rela_path(path: &BStr) -> Result<std::path::PathBuf> {
    gix::path::from_bstr(path)
        .map(|p| p.into_owned())
        .map_err(|e| Error::wrap(format!("the path {path}"), e))
}

fn metadata(workdir: &Path, path: &BStr) -> Result<gix::index::fs::Metadata> {
    let p = workdir.join(rela_path(path)?);
    gix::index::fs::Metadata::from_path_no_follow(&p)
        .map_err(|e| Error::io(format!("reading {}", p.display()), e))
}

fn stat(meta: &gix::index::fs::Metadata, path: &BStr) -> Result<Stat> {
    Stat::from_fs(meta).map_err(|e| Error::wrap(format!("the times of {path}"), e))
}

/// `100755` for a file with an executable bit (where the file system keeps it), else `100644`.
fn file_mode(meta: &gix::index::fs::Metadata, executable_bit: bool) -> Mode {
    if executable_bit && meta.is_executable() {
        Mode::FILE_EXECUTABLE
    } else {
        Mode::FILE
    }
}

/// Write `index` to `path` (replacing the copy there), with its checksum.
fn write_index(index: &gix::index::File, path: &Path) -> Result<()> {
    let file = std::fs::File::create(path)
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    let mut out = std::io::BufWriter::with_capacity(256 * 1024, file);
    index
        .write_to(&mut out, gix::index::write::Options::default())
        .map_err(|e| Error::wrap(format!("writing {}", path.display()), e))?;
    std::io::Write::flush(&mut out)
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok(())
}

/// Every tree of `index` (all stage-0 entries, sorted), written to `repo`; the root's id and a complete
/// cache-tree for the index.
fn build_trees(
    repo: &gix::Repository,
    index: &gix::index::State,
) -> Result<(ObjectId, gix::index::extension::Tree)> {
    let entries = index.entries();
    let mut pos = 0;
    let node = build_dir(repo, index, entries, &mut pos, b"")?;
    Ok((node.id, node))
}

/// The tree of the directory `prefix` (empty for the root, else ending in `/`) from `entries[*pos..]`,
/// advancing `pos` past its entries.
fn build_dir(
    repo: &gix::Repository,
    index: &gix::index::State,
    entries: &[gix::index::Entry],
    pos: &mut usize,
    prefix: &[u8],
) -> Result<gix::index::extension::Tree> {
    use gix::objs::tree::{Entry as TreeEntry, EntryKind};
    let mut tree = gix::objs::Tree::empty();
    let mut children = Vec::new();
    let mut count = 0u32;
    while let Some(e) = entries.get(*pos) {
        let path = e.path(index);
        let Some(rest) = path.strip_prefix(prefix) else {
            break;
        };
        match rest.find_byte(b'/') {
            None => {
                let kind = match e.mode {
                    Mode::FILE_EXECUTABLE => EntryKind::BlobExecutable,
                    Mode::SYMLINK => EntryKind::Link,
                    Mode::COMMIT => EntryKind::Commit,
                    _ => EntryKind::Blob,
                };
                tree.entries.push(TreeEntry {
                    mode: kind.into(),
                    filename: rest.into(),
                    oid: e.id,
                });
                count += 1;
                *pos += 1;
            }
            Some(slash) => {
                let name = &rest[..slash];
                let mut sub_prefix = prefix.to_vec();
                sub_prefix.extend_from_slice(&rest[..=slash]);
                let mut child = build_dir(repo, index, entries, pos, &sub_prefix)?;
                child.name = name.into();
                tree.entries.push(TreeEntry {
                    mode: EntryKind::Tree.into(),
                    filename: name.into(),
                    oid: child.id,
                });
                count += child.num_entries.unwrap_or(0);
                children.push(child);
            }
        }
    }
    use gix::objs::Write as _;
    let id = repo
        .objects
        .write(&tree)
        .map_err(|e| Error::wrap(format!("writing the tree of {}", prefix.as_bstr()), e))?;
    Ok(gix::index::extension::Tree {
        name: Default::default(),
        id,
        num_entries: Some(count),
        children,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::process::Command;

    fn git(dir: &Path, index: Option<&Path>, args: &[&str]) -> String {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        if let Some(i) = index {
            cmd.env("GIT_INDEX_FILE", i);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    fn write(dir: &Path, path: &str, text: &str) {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    /// A committed repository: files at the top and in nested directories, a script, a symlink, ignore rules.
    fn repo() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        git(d, None, &["init", "-q", "-b", "main"]);
        git(d, None, &["config", "user.name", "T"]);
        git(d, None, &["config", "user.email", "t@example.com"]);
        write(d, "a.txt", "a\n");
        write(d, "gone.txt", "gone\n");
        write(d, "run.sh", "echo hi\n");
        write(d, "sub/b.txt", "b\n");
        write(d, "sub/deep/c.txt", "c\n");
        write(d, "sub.txt", "next to sub/\n");
        write(d, ".gitignore", "*.log\nbuild/\n");
        std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
        git(d, None, &["add", "-A"]);
        git(d, None, &["commit", "-q", "-m", "base"]);
        t
    }

    /// Copies of the index for the in-process staging and for git's.
    fn copies(d: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
        let (ours, theirs) = (d.join(".git/index.ours"), d.join(".git/index.git"));
        std::fs::copy(d.join(".git/index"), &ours).unwrap();
        std::fs::copy(d.join(".git/index"), &theirs).unwrap();
        (ours, theirs)
    }

    #[test]
    fn stages_the_tree_and_index_git_add_all_stages() {
        let t = repo();
        let d = t.path();
        write(d, "a.txt", "a, changed\n");
        std::fs::remove_file(d.join("gone.txt")).unwrap();
        std::fs::set_permissions(d.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        write(d, "sub/deep/c.txt", "C\n"); // same size
        write(d, "sub/new.txt", "new\n");
        write(d, "fresh/x/y.txt", "y\n");
        write(d, "debug.log", "ignored\n");
        write(d, "build/out.txt", "ignored too\n");
        std::fs::create_dir_all(d.join("empty/dir")).unwrap();
        std::os::unix::fs::symlink("sub/b.txt", d.join("newlink")).unwrap();
        let (ours, theirs) = copies(d);

        let mut mem = gix::open(d).unwrap().with_object_memory();
        let tree = stage_all(&mem, &ours).unwrap().expect("staged in process");
        git(d, Some(&theirs), &["add", "-A"]);
        let expected = git(d, Some(&theirs), &["write-tree"]);
        assert_eq!(tree.to_string(), expected.trim(), "the same tree as git's");
        assert_eq!(
            git(d, Some(&ours), &["ls-files", "-s"]),
            git(d, Some(&theirs), &["ls-files", "-s"]),
            "the same entries as git's"
        );
        // The objects exist once written out; the index then agrees with the working tree, and its cache-tree
        // (which `write-tree` trusts when its trees exist) names the same tree.
        let disk = gix::open(d).unwrap();
        super::super::rewrite::flush(&mut mem, &disk).unwrap();
        git(d, Some(&ours), &["diff-files", "--quiet"]);
        assert_eq!(git(d, Some(&ours), &["write-tree"]), expected);
        git(d, None, &["fsck", "--no-dangling"]);
    }

    #[test]
    fn a_clean_working_tree_stages_the_tree_of_head() {
        let t = repo();
        let d = t.path();
        let (ours, _) = copies(d);
        let mem = gix::open(d).unwrap().with_object_memory();
        let tree = stage_all(&mem, &ours).unwrap().expect("staged in process");
        assert_eq!(
            tree.to_string(),
            git(d, None, &["rev-parse", "HEAD^{tree}"]).trim()
        );
    }

    #[test]
    fn what_git_add_has_rules_of_its_own_for_is_left_to_git() {
        let t = repo();
        let d = t.path();
        write(d, "later.txt", "later\n");
        git(d, None, &["add", "--intent-to-add", "later.txt"]);
        let (ours, _) = copies(d);
        let before = std::fs::read(&ours).unwrap();
        let mem = gix::open(d).unwrap().with_object_memory();
        assert_eq!(stage_all(&mem, &ours).unwrap(), None, "intent-to-add");
        assert_eq!(
            std::fs::read(&ours).unwrap(),
            before,
            "the index is untouched"
        );

        // An untracked nested repository becomes a gitlink (with a warning) in git's hands.
        let t = repo();
        let d = t.path();
        git(&d.join("sub"), None, &["init", "-q", "inner"]);
        write(d, "sub/inner/file", "x\n");
        let (ours, _) = copies(d);
        let mem = gix::open(d).unwrap().with_object_memory();
        assert_eq!(stage_all(&mem, &ours).unwrap(), None, "nested repository");
    }
}
