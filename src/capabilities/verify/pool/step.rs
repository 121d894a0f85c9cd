//! Moving a verify worktree to the next commit in process, writing only what differs: what `git checkout -q
//! -f --detach <commit>` does there, without starting git (12-18 ms a commit on the benchmark's 3000 files;
//! this takes 6-10 ms, most of it the lstat of every entry, then writing the index).
//!
//! The move keeps `checkout -f`'s contract: every tracked file ends with the next commit's content, mode and
//! type, whatever the command did to it (edited, deleted, made executable, replaced by a symlink); untracked
//! files stay (build caches); the index is the next commit's tree with valid stat data; `HEAD` is detached at
//! the commit. What changed between the two commits comes from a gix tree diff; what the command changed comes
//! from an lstat of every index entry against the stat data stored for it, as git's refresh does: an entry
//! whose file's modification time is not older than the index file's is "racily clean" and its content is
//! compared instead (see [`older`]). Files are written through gix's filter pipeline (eol, `text`,
//! `ident`, `working-tree-encoding`) with attributes read from the index first, as git checks out. Files are
//! written with the current time, never backdated: a build tool comparing a source with what the previous
//! command built must see the source as new.
//!
//! Anything unusual gives up ([`GiveUp`]) and the caller runs `git checkout -f`, which stays the fallback
//! because git is the reference for the cases this does not reproduce: gitlinks (submodules), an untracked file
//! or directory in the way of a tracked path, a path git refuses (`..`, `.git`, NTFS and HFS tricks as
//! `core.protectNTFS`/`core.protectHFS` say), a directory of tracked files that the command turned into a file or a symlink, a sparse or split
//! index or one with extensions this would have to keep up to date, a change to a `.gitattributes`, driver
//! filters (`filter.<name>.smudge` or `.process`: user programs), `core.symlinks=false`, `core.fileMode=false`,
//! `core.ignoreCase`, and a command that changed the index's entries or moved `HEAD`. Giving up half way is
//! safe: `checkout -f` brings index and worktree to the commit from any mix of the two states.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, BString, ByteSlice};
use gix::index::entry::{stat, Flags, Mode, Stat};
use gix::ObjectId;

/// Why a move was left to git. Never shown as an error: `git checkout` does the move instead.
#[derive(Debug)]
pub struct GiveUp(pub String);

impl std::fmt::Display for GiveUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn give_up<T>(why: impl Into<String>) -> Result<T, GiveUp> {
    Err(GiveUp(why.into()))
}

/// What a move needs to know about a worktree: its index as last written or read (stat data for every entry)
/// and that file's own stat, to notice a command that rewrote the index.
pub struct Tracked {
    index: gix::index::File,
    index_stat: Stat,
}

/// Every stat field counts: a difference only costs a comparison or a rewrite of the file.
const STRICT: stat::Options = stat::Options {
    trust_ctime: true,
    check_stat: true,
    use_nsec: true,
    use_stdev: true,
};

/// Read the worktree's index for the next move, or `None` when this worktree or repository has something an
/// in-process move does not reproduce (see the module doc): every move then goes through git.
pub fn track(wt_repo: &gix::Repository) -> Option<Tracked> {
    if !supported_config(wt_repo) {
        return None;
    }
    let path = wt_repo.index_path();
    let index_stat = file_stat(&path)?;
    let index = read_index(wt_repo, &path)?;
    // Read after the stat: a write in between leaves a newer file than the stat says, which the next move
    // takes for a changed index and compares.
    Some(Tracked { index, index_stat })
}

fn read_index(wt_repo: &gix::Repository, path: &Path) -> Option<gix::index::File> {
    let index =
        gix::index::File::at(path, wt_repo.object_hash(), false, Default::default()).ok()?;
    crate::kit::repo::plain_index(&index).then_some(index)
}

fn supported_config(repo: &gix::Repository) -> bool {
    let config = repo.config_snapshot();
    let flag = |key: &str| config.boolean(key);
    if flag("core.symlinks") == Some(false)
        || flag("core.fileMode") == Some(false)
        || flag("core.ignoreCase") == Some(true)
        || flag("core.sparseCheckout") == Some(true)
        || flag("core.splitIndex") == Some(true)
    {
        return false;
    }
    // A driver filter is a user program: how git and gix run it (`%f`, `required`, the process protocol,
    // delayed output) is not ours to reconcile.
    let drivers = config.plumbing().sections_by_name("filter");
    !drivers.is_some_and(|mut sections| {
        sections.any(|s| s.value("smudge").is_some() || s.value("process").is_some())
    })
}

/// Whether `a` is older than `b`, to the nanosecond. An entry whose file's time is older than the index file's
/// was recorded before the index was written, and so before any command ran: a later change of the file gets
/// a time at least the index's and shows. An entry as new as the index is "racily clean" (a change within the
/// same tick of the file system's clock keeps the time): its content is compared. git makes the same test at
/// whole seconds when built without `USE_NSEC`; the clock and the file system are the same here.
fn older(a: stat::Time, b: stat::Time) -> bool {
    (a.secs, a.nsecs) < (b.secs, b.nsecs)
}

fn file_stat(path: &Path) -> Option<Stat> {
    let meta = gix::index::fs::Metadata::from_path_no_follow(path).ok()?;
    Stat::from_fs(&meta).ok()
}

/// A blob-like side of a tree change: the index mode and blob id, or `None` for a tree or nothing.
type Side = Option<(Mode, ObjectId)>;

/// The tree entry `mode` as an index mode; `Err` for a gitlink.
fn side(mode: gix::objs::tree::EntryMode, id: ObjectId) -> Result<Side, GiveUp> {
    use gix::objs::tree::EntryKind;
    Ok(match mode.kind() {
        EntryKind::Tree => None,
        EntryKind::Blob => Some((Mode::FILE, id)),
        EntryKind::BlobExecutable => Some((Mode::FILE_EXECUTABLE, id)),
        EntryKind::Link => Some((Mode::SYMLINK, id)),
        EntryKind::Commit => return give_up("a gitlink (submodule) changes"),
    })
}

/// The file-level changes from tree `a` to tree `b`, sorted by path.
fn tree_changes(
    repo: &gix::Repository,
    a: ObjectId,
    b: ObjectId,
) -> Result<Vec<(BString, Side, Side)>, GiveUp> {
    use gix::diff::tree::recorder::Change as C;
    if a == b {
        return Ok(Vec::new());
    }
    let err = |e: &dyn std::fmt::Display| GiveUp(format!("diffing {a} and {b}: {e}"));
    let ta = repo.find_tree(a).map_err(|e| err(&e))?;
    let tb = repo.find_tree(b).map_err(|e| err(&e))?;
    let mut recorder = gix::diff::tree::Recorder::default();
    gix::diff::tree(
        gix::objs::TreeRefIter::from_bytes(&ta.data, a.kind()),
        gix::objs::TreeRefIter::from_bytes(&tb.data, b.kind()),
        gix::diff::tree::State::default(),
        &repo.objects,
        &mut recorder,
    )
    .map_err(|e| err(&e))?;
    let mut out = Vec::new();
    for ch in recorder.records {
        let (path, old, new) = match ch {
            C::Addition {
                path,
                entry_mode,
                oid,
                ..
            } => (path, None, side(entry_mode, oid)?),
            C::Deletion {
                path,
                entry_mode,
                oid,
                ..
            } => (path, side(entry_mode, oid)?, None),
            C::Modification {
                path,
                previous_entry_mode,
                previous_oid,
                entry_mode,
                oid,
            } => (
                path,
                side(previous_entry_mode, previous_oid)?,
                side(entry_mode, oid)?,
            ),
        };
        if old.is_some() || new.is_some() {
            out.push((path, old, new));
        }
    }
    out.sort_by(|x, y| x.0.cmp(&y.0));
    Ok(out)
}

fn rela(path: &BStr) -> Result<PathBuf, GiveUp> {
    gix::path::from_bstr(path)
        .map(|p| p.into_owned())
        .map_err(|_| GiveUp(format!("the path {path} is not a path here")))
}

fn is_attributes(path: &BStr) -> bool {
    path.rsplit_str("/").next() == Some(b".gitattributes".as_slice())
}

/// The filter pipeline for this move, made on first use (most moves compare or write a handful of files).
struct Filters<'repo> {
    repo: &'repo gix::Repository,
    pipeline: Option<gix::filter::Pipeline<'repo>>,
}

impl<'repo> Filters<'repo> {
    /// The worktree form of blob `id` at `path`: the blob through the filters for a file, the raw target for
    /// a symlink.
    fn worktree_bytes(
        &mut self,
        index: &gix::index::State,
        path: &BStr,
        mode: Mode,
        id: ObjectId,
    ) -> Result<Vec<u8>, GiveUp> {
        let blob = self
            .repo
            .find_blob(id)
            .map_err(|e| GiveUp(format!("reading blob {id}: {e}")))?
            .take_data();
        if mode == Mode::SYMLINK {
            return Ok(blob);
        }
        if self.pipeline.is_none() {
            // Attributes from the index first, then the worktree, as git reads them when checking out.
            let stack = self
                .repo
                .attributes_only(
                    index,
                    gix::worktree::stack::state::attributes::Source::IdMappingThenWorktree,
                )
                .map_err(|e| GiveUp(format!("reading attributes: {e}")))?
                .detach();
            self.pipeline = Some(
                gix::filter::Pipeline::new(self.repo, stack)
                    .map_err(|e| GiveUp(format!("setting up filters: {e}")))?,
            );
        }
        let pipeline = self.pipeline.as_mut().expect("made above");
        use gix::filter::plumbing::pipeline::convert::ToWorktreeOutcome as Out;
        let options = gix::filter::plumbing::pipeline::convert::to_worktree::Options {
            can_delay: gix::filter::plumbing::driver::apply::Delay::Forbid,
            ..Default::default()
        };
        match pipeline
            .convert_to_worktree(&blob, path, options)
            .map_err(|e| GiveUp(format!("filtering {path}: {e}")))?
        {
            Out::Unchanged(_) => Ok(blob),
            Out::Buffer(b) => Ok(b.to_vec()),
            Out::Process(_) => give_up("a driver filter applies"),
        }
    }
}

/// Whether the file at `full` has the worktree content of `mode` and `id` (for a racily clean entry).
fn same_content(
    filters: &mut Filters<'_>,
    index: &gix::index::State,
    full: &Path,
    path: &BStr,
    mode: Mode,
    id: ObjectId,
) -> Result<bool, GiveUp> {
    let actual = if mode == Mode::SYMLINK {
        match std::fs::read_link(full) {
            Ok(t) => match gix::path::into_bstr(t) {
                Ok(t) => t.into_owned().into(),
                Err(_) => return Ok(false),
            },
            Err(_) => return Ok(false),
        }
    } else {
        match std::fs::read(full) {
            Ok(d) => d,
            Err(_) => return Ok(false),
        }
    };
    Ok(actual == filters.worktree_bytes(index, path, mode, id)?)
}

/// Check that every leading directory of `path` is a real directory inside `workdir` (never a symlink, which
/// would take a write outside the worktree), creating missing ones when `create`. `false`: one is missing and
/// `create` is off.
fn leading_dirs(
    workdir: &Path,
    path: &Path,
    create: bool,
    known: &mut HashSet<PathBuf>,
) -> Result<bool, GiveUp> {
    let mut dir = workdir.to_path_buf();
    let Some(parent) = path.parent() else {
        return Ok(true);
    };
    for part in parent.components() {
        dir.push(part);
        if known.contains(&dir) {
            continue;
        }
        match std::fs::symlink_metadata(&dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => return give_up(format!("{} is in the way", dir.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !create {
                    return Ok(false);
                }
                std::fs::create_dir(&dir)
                    .map_err(|e| GiveUp(format!("creating {}: {e}", dir.display())))?;
            }
            Err(e) => return give_up(format!("{}: {e}", dir.display())),
        }
        known.insert(dir.clone());
    }
    Ok(true)
}

/// What an lstat of a tracked path found: its stat data as the index stores it, and its type and executable
/// bit as an index mode (`None`: a directory or something else no entry can be).
type Seen = Option<(Stat, Option<Mode>)>;

/// lstat every entry of `index` under `workdir` (most of a move's time: 3000 entries take 7-8 ms on one
/// thread on the benchmark's VM, so they are spread over threads as git's preloaded refresh does).
///
/// An lstat follows symlinks among a path's leading directories: a tracked directory the command replaced by a
/// symlink (to the same files, moved) would look clean. Every directory holding tracked files is checked too
/// (144 on the benchmark's 3000 files); one that exists as anything but a directory is git's to sort out.
/// Items per thread when stat calls are spread over threads: one is ~2 µs, a thread costs more below this.
pub(super) const CHUNK: usize = 500;

fn lstat_all(workdir: &Path, index: &gix::index::File) -> Result<Vec<Seen>, GiveUp> {
    let root = open_dir(workdir)?;
    let mut seen_dirs: HashSet<&[u8]> = HashSet::new();
    let mut dirs: Vec<&[u8]> = Vec::new();
    for e in index.entries() {
        let mut dir: &[u8] = e.path(index);
        // Up from the entry's directory until one already listed (then so are its ancestors).
        while let Some(i) = dir.rfind_byte(b'/') {
            dir = &dir[..i];
            if !seen_dirs.insert(dir) {
                break;
            }
            dirs.push(dir);
        }
    }
    // A file or symlink where a directory was; a missing one merely leaves its files to be written.
    let not_dirs = crate::kit::par::map_in_chunks(&dirs, CHUNK, |d| {
        matches!(stat_at(&root, d.as_bstr()), Some((_, Some(_))))
    });
    if let Some(i) = not_dirs.iter().position(|&bad| bad) {
        return give_up(format!("{} is no longer a directory", dirs[i].as_bstr()));
    }
    Ok(crate::kit::par::map_in_chunks(
        index.entries(),
        CHUNK,
        |e| stat_at(&root, e.path(index)),
    ))
}

/// `dir`, opened for system calls on paths relative to it: the kernel then walks only a path's own
/// components, not the worktree's place in the scratch directory.
pub(super) fn open_dir(dir: &Path) -> Result<rustix::fd::OwnedFd, GiveUp> {
    use rustix::fs::OFlags;
    rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| GiveUp(format!("opening {}: {e}", dir.display())))
}

/// lstat of `path` relative to `root`, converted as `Stat::from_fs` does (the low 32 bits of each field, times
/// before 1970 as zero), with the file's type and executable bit as an index mode.
pub(super) fn stat_at(root: &rustix::fd::OwnedFd, path: &BStr) -> Seen {
    use rustix::fs::{AtFlags, FileType};
    let st = rustix::fs::statat(root, path.as_bytes(), AtFlags::SYMLINK_NOFOLLOW).ok()?;
    let time = |secs: i64, nsecs: i64| {
        if secs < 0 {
            stat::Time::default()
        } else {
            stat::Time {
                secs: secs as u32,
                nsecs: nsecs as u32,
            }
        }
    };
    let stat = Stat {
        mtime: time(st.st_mtime as i64, st.st_mtime_nsec as i64),
        ctime: time(st.st_ctime as i64, st.st_ctime_nsec as i64),
        dev: st.st_dev as u32,
        ino: st.st_ino as u32,
        uid: st.st_uid,
        gid: st.st_gid,
        size: st.st_size as u32,
    };
    let mode = match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile if st.st_mode & 0o100 != 0 => Some(Mode::FILE_EXECUTABLE),
        FileType::RegularFile => Some(Mode::FILE),
        FileType::Symlink => Some(Mode::SYMLINK),
        _ => None,
    };
    Some((stat, mode))
}

/// Write `bytes` as a new file (or symlink) at `full`, replacing what is there.
fn write_entry(full: &Path, mode: Mode, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    match std::fs::remove_file(full) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if mode == Mode::SYMLINK {
        let target = gix::path::from_bstr(bytes.as_bstr())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
        return std::os::unix::fs::symlink(target, full);
    }
    // The modes git creates files with, less the umask.
    let perm = if mode == Mode::FILE_EXECUTABLE {
        0o777
    } else {
        0o666
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(perm)
        .open(full)?;
    file.write_all(bytes)
}

/// Move the worktree of `wt_repo` from commit `from` (what `tracked` describes) to commit `to`. On `Err` the
/// worktree may be half moved and `tracked` is stale: the caller runs `git checkout -f` and tracks again.
pub fn advance(
    wt_repo: &gix::Repository,
    tracked: &mut Tracked,
    from: ObjectId,
    to: ObjectId,
) -> Result<(), GiveUp> {
    let workdir = wt_repo
        .workdir()
        .ok_or_else(|| GiveUp("no worktree".into()))?
        .to_path_buf();
    let index_path = wt_repo.index_path();

    // What the command did to the index and HEAD. A refresh (`git status` stores new stat data) keeps the
    // entries: take git's stat data. Anything else (staged changes, a reset, a commit) is git's to undo.
    if file_stat(&index_path).is_none_or(|s| !s.matches(&tracked.index_stat, STRICT)) {
        let index_stat = file_stat(&index_path).ok_or_else(|| GiveUp("no index".into()))?;
        let index = read_index(wt_repo, &index_path)
            .ok_or_else(|| GiveUp("the index changed into one we do not keep".into()))?;
        let same = |a: &gix::index::File, b: &gix::index::File| {
            a.entries().len() == b.entries().len()
                && a.entries()
                    .iter()
                    .zip(b.entries())
                    .all(|(x, y)| x.id == y.id && x.mode == y.mode && x.path(a) == y.path(b))
        };
        if !same(&index, &tracked.index) {
            return give_up("the command changed the index");
        }
        *tracked = Tracked { index, index_stat };
    }
    let head = std::fs::read(wt_repo.git_dir().join("HEAD"))
        .map_err(|e| GiveUp(format!("reading HEAD: {e}")))?;
    if head.trim() != from.to_hex().to_string().as_bytes() {
        return give_up("the command moved HEAD");
    }

    let tree_of = |c: ObjectId| -> Result<ObjectId, GiveUp> {
        wt_repo
            .find_commit(c)
            .and_then(|c| c.tree_id().map(|t| t.detach()))
            .map_err(|e| GiveUp(format!("reading commit {c}: {e}")))
    };
    let changes = tree_changes(wt_repo, tree_of(from)?, tree_of(to)?)?;
    // A crafted tree can name `..`, `.git` or an absolute path; git refuses to check such a path out, and so
    // must we (it would write outside the worktree or into its repository). git then says why.
    let config = wt_repo.config_snapshot();
    let protect = gix::validate::path::component::Options {
        protect_windows: false,
        protect_hfs: config.boolean("core.protectHFS").unwrap_or(false),
        protect_ntfs: config.boolean("core.protectNTFS").unwrap_or(true),
    };
    for (path, _, new) in &changes {
        let link = matches!(new, Some((Mode::SYMLINK, _)));
        let mut parts = path.split_str("/").peekable();
        while let Some(part) = parts.next() {
            let last = parts.peek().is_none();
            let mode = (last && link).then_some(gix::validate::path::component::Mode::Symlink);
            if gix::validate::path::component(part.as_bstr(), mode, protect).is_err() {
                return give_up(format!("{path} is not a path git checks out"));
            }
        }
    }

    // What the command changed among the tracked files: git's refresh, strict (a false alarm costs a rewrite).
    let index_time = tracked.index_stat.mtime;
    let mut filters = Filters {
        repo: wt_repo,
        pipeline: None,
    };
    let mut dirty = Vec::new();
    {
        let index = &tracked.index;
        let seen = lstat_all(&workdir, index)?;
        for (i, (e, seen)) in index.entries().iter().zip(seen).enumerate() {
            let clean = match seen {
                None => false,
                Some((stat, mode)) => {
                    mode == Some(e.mode)
                        && stat.matches(&e.stat, STRICT)
                        && (older(e.stat.mtime, index_time) || {
                            let path = e.path(index);
                            let full = workdir.join(rela(path)?);
                            same_content(&mut filters, index, &full, path, e.mode, e.id)?
                        })
                }
            };
            if !clean {
                dirty.push(i);
            }
        }
    }
    // The plan: delete what the next tree lacks, write what it changes and what the command changed.
    let mut deletions: Vec<BString> = Vec::new();
    let mut writes: Vec<(BString, Mode, ObjectId)> = Vec::new();
    for (path, old, new) in &changes {
        match (old, new) {
            (Some(_), None) => deletions.push(path.clone()),
            (_, Some((mode, id))) => writes.push((path.clone(), *mode, *id)),
            (None, None) => {}
        }
    }
    for &i in &dirty {
        let e = &tracked.index.entries()[i];
        let path = e.path(&tracked.index);
        if changes
            .binary_search_by(|c| c.0.as_bstr().cmp(path))
            .is_err()
        {
            writes.push((path.to_owned(), e.mode, e.id));
        }
    }
    if deletions
        .iter()
        .chain(writes.iter().map(|w| &w.0))
        .any(|p| is_attributes(p.as_ref()))
    {
        return give_up("a .gitattributes changes");
    }

    // Deletions first (a file may become a directory), then directories they emptied (a directory may become
    // a file), then writes.
    let mut known = HashSet::new();
    let mut emptied = Vec::new();
    for path in &deletions {
        let rel = rela(path.as_ref())?;
        if !leading_dirs(&workdir, &rel, false, &mut known)? {
            continue;
        }
        let full = workdir.join(&rel);
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => return give_up(format!("{path} is a directory now")),
            Ok(_) => {
                std::fs::remove_file(&full).map_err(|e| GiveUp(format!("removing {path}: {e}")))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return give_up(format!("{path}: {e}")),
        }
        emptied.extend(
            rel.ancestors()
                .skip(1)
                .filter(|a| !a.as_os_str().is_empty())
                .map(Path::to_path_buf),
        );
    }
    if !emptied.is_empty() {
        // Deepest first; a directory that still holds anything (untracked files too) stays.
        emptied.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
        emptied.dedup();
        for dir in &emptied {
            let _ = std::fs::remove_dir(workdir.join(dir));
        }
        known.clear();
    }

    let mut written: Vec<(BString, Mode, ObjectId, Stat)> = Vec::with_capacity(writes.len());
    for (path, mode, id) in writes {
        let rel = rela(path.as_ref())?;
        leading_dirs(&workdir, &rel, true, &mut known)?;
        let full = workdir.join(&rel);
        match std::fs::symlink_metadata(&full) {
            Ok(m) if m.is_dir() => return give_up(format!("a directory is in the way of {path}")),
            Ok(_) if tracked.index.entry_index_by_path(path.as_ref()).is_err() => {
                return give_up(format!("an untracked file is in the way of {path}"))
            }
            _ => {}
        }
        let bytes = filters.worktree_bytes(&tracked.index, path.as_ref(), mode, id)?;
        write_entry(&full, mode, &bytes).map_err(|e| GiveUp(format!("writing {path}: {e}")))?;
        let stat = file_stat(&full).ok_or_else(|| GiveUp(format!("reading {path} back")))?;
        written.push((path, mode, id, stat));
    }
    drop(filters);

    // The next commit's index: entries of unchanged, clean paths keep their stat data.
    let index = &mut tracked.index;
    for path in &deletions {
        if let Ok(i) = index.entry_index_by_path(path.as_ref()) {
            index.entries_mut()[i].flags.insert(Flags::REMOVE);
        }
    }
    index.remove_entries(|_, _, e| e.flags.contains(Flags::REMOVE));
    // Existing entries first: a binary search needs the entries sorted, which pushing new ones undoes.
    let mut new_entries = Vec::new();
    for (path, mode, id, stat) in written {
        match index.entry_index_by_path(path.as_ref()) {
            Ok(i) => {
                let e = &mut index.entries_mut()[i];
                e.mode = mode;
                e.id = id;
                e.stat = stat;
            }
            Err(_) => new_entries.push((path, mode, id, stat)),
        }
    }
    if !new_entries.is_empty() {
        for (path, mode, id, stat) in new_entries {
            index.dangerously_push_entry(stat, id, Flags::empty(), mode, path.as_ref());
        }
        index.sort_entries();
    }
    // The cache-tree would be written back as it was, stale (gix writes it as is).
    index.remove_tree();
    index
        .write(Default::default())
        .map_err(|e| GiveUp(format!("writing the index: {e}")))?;
    tracked.index_stat = file_stat(&index_path).ok_or_else(|| GiveUp("no index".into()))?;

    // HEAD last, through a lock file renamed over it, as git writes refs (no reflog: a scratch worktree).
    let head = wt_repo.git_dir().join("HEAD");
    let lock = wt_repo.git_dir().join("HEAD.lock");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock)
        .map_err(|e| GiveUp(format!("locking HEAD: {e}")))?;
    std::io::Write::write_all(&mut file, format!("{to}\n").as_bytes())
        .and_then(|()| std::fs::rename(&lock, &head))
        .map_err(|e| {
            // Ours: git checkout, next, must be able to take the lock.
            let _ = std::fs::remove_file(&lock);
            GiveUp(format!("writing HEAD: {e}"))
        })?;
    Ok(())
}
