//! The in-memory weaver: applies inputs one after another onto a tip, writing blobs, trees and commits
//! through whatever object store the repository handle has (object memory for weave: nothing reaches disk
//! until the caller flushes).
//!
//! Commits are picked like `git cherry-pick`: a 3-way tree merge of (parent, integration tip, commit).
//! Patches are applied with exact context and line offsets ([`super::apply`]); when that fails and every
//! preimage blob named by the patch's `index` lines exists in the repository, the patch is applied to those
//! blobs and the result merged 3-way into the tip, as `git am -3` does. Conflicts are explained hunk by hunk
//! against the [`Tracker`], which knows which earlier woven input changed which lines.

use std::collections::HashSet;
use std::ops::Range;

use gix::bstr::{BStr, BString};
use gix::merge::tree::TreatAsUnresolved;
use gix::objs::tree::EntryKind;
use gix::objs::Write as _;
use gix::ObjectId;

use super::apply;
use super::binary;
use super::footprint::{diff_lines, map_range, LineHunk, Tracker};
use super::input::{CommitItem, Input, Item};
use super::mbox::MailPatch;
use super::patch::{Binary, FilePatch};
use super::persona::{self, PersonaMap};
use super::report::{Counterpart, FileConflict, HunkConflict, WovenCommit};
use super::trailers;
use crate::error::{Error, Result};

/// An input woven earlier, as conflict reports name it.
#[derive(Debug, Clone)]
pub struct Owner {
    pub label: String,
    pub persona: Option<String>,
    pub commit: ObjectId,
}

#[derive(Debug, Clone)]
pub enum Failure {
    Conflict(Vec<FileConflict>),
    Error(String),
}

#[derive(Debug, Clone)]
pub struct Woven {
    pub commits: Vec<WovenCommit>,
    pub notes: Vec<String>,
    /// The tip before and after this input.
    pub before: ObjectId,
    pub after: ObjectId,
}

#[derive(Debug, Clone)]
pub enum Outcome {
    Woven(Woven),
    Already { notes: Vec<String> },
    Failed(Failure),
}

pub struct Engine<'r> {
    repo: &'r gix::Repository,
    pub tip: ObjectId,
    pub tree: ObjectId,
    committer: gix::actor::Signature,
    pub tracker: Tracker,
    pub owners: Vec<Owner>,
    /// `Woven-id`s already on the branch.
    pub keys: HashSet<String>,
    merge_options: gix::merge::tree::Options,
}

/// Blobs larger than this, or with a NUL byte, are tracked as one block rather than line by line.
const LINE_DIFF_LIMIT: usize = 1 << 20;

impl<'r> Engine<'r> {
    pub fn new(
        repo: &'r gix::Repository,
        start: ObjectId,
        committer: gix::actor::Signature,
    ) -> Result<Self> {
        let tree = repo.find_commit(start)?.tree_id()?.detach();
        Ok(Engine {
            repo,
            tip: start,
            tree,
            committer,
            tracker: Tracker::default(),
            owners: Vec::new(),
            keys: HashSet::new(),
            merge_options: repo.tree_merge_options()?,
        })
    }

    /// Learn what is on the branch already (`base..start`): the `Woven-id`s, and who changed which lines.
    pub fn learn_history(&mut self, base: ObjectId, map: Option<&PersonaMap>) -> Result<()> {
        if base == self.tip {
            return Ok(());
        }
        for id in super::input::first_parent_range(self.repo, self.tip, &[base])? {
            let c = self.repo.find_commit(id)?;
            let message = String::from_utf8_lossy(c.message_raw()?).into_owned();
            for k in trailers::values(&message, trailers::ID) {
                self.keys.insert(k.to_owned());
            }
            let label = trailers::values(&message, trailers::FROM)
                .first()
                .map(|s| s.to_string())
                .unwrap_or_else(|| {
                    format!(
                        "{} {}",
                        id.to_hex_with_len(7),
                        message.lines().next().unwrap_or_default()
                    )
                });
            let author = c.author()?;
            let (name, email) = (author.name.to_string(), author.email.to_string());
            let clues = persona::Clues {
                label: &label,
                branch: Some(&label),
                messages: vec![&message],
                author: Some((&name, &email)),
            };
            let persona = persona::resolve(map, &clues).map(|(p, _)| p);
            let parent_tree = match c.parent_ids().next() {
                Some(p) => self.repo.find_commit(p)?.tree_id()?.detach(),
                None => crate::repo::empty_tree(self.repo)?,
            };
            let tree = c.tree_id()?.detach();
            self.owners.push(Owner {
                label,
                persona,
                commit: id,
            });
            self.track(parent_tree, tree, self.owners.len() - 1)?;
        }
        Ok(())
    }

    /// Apply one input; on success the tip moves, otherwise nothing changes.
    pub fn weave(&mut self, input: &Input) -> Result<Outcome> {
        if let Some(e) = &input.error {
            return Ok(Outcome::Failed(Failure::Error(e.clone())));
        }
        if input.items.is_empty() {
            return Ok(Outcome::Already {
                notes: vec![
                    "no commits: it is contained in the base or the integration branch".into(),
                ],
            });
        }
        let persona = input.persona.as_ref().map(|(p, _)| p.as_str());
        let (mut tip, mut tree) = (self.tip, self.tree);
        let mut commits = Vec::new();
        let mut notes = Vec::new();
        let mut steps = Vec::new();
        for item in &input.items {
            let key = item.key();
            if self.keys.contains(&key) {
                notes.push(format!("{} is already woven", short_key(&key)));
                continue;
            }
            let result = match item {
                Item::Commit(c) => self.pick(c, tree, &input.label)?,
                Item::Patch(p) => self.apply_patch(p, tree, &input.label, &mut notes)?,
            };
            let new_tree = match result {
                Ok(t) => t,
                Err(f) => return Ok(Outcome::Failed(f)),
            };
            if new_tree == tree {
                notes.push(format!(
                    "{} changes nothing: it is already present",
                    short_key(&key)
                ));
                continue;
            }
            let (author, message) = match item {
                Item::Commit(c) => (c.author.clone(), c.message.clone()),
                Item::Patch(p) => (self.patch_author(p, persona), p.message.clone()),
            };
            let message = if message.trim().is_empty() {
                format!("weave: apply {}\n", input.label)
            } else {
                message
            };
            let message = trailers::add(
                &message,
                &[(trailers::FROM, &input.label), (trailers::ID, &key)],
            );
            let commit = self.repo.objects.write(&gix::objs::Commit {
                tree: new_tree,
                parents: [tip].into_iter().collect(),
                author,
                committer: self.committer.clone(),
                encoding: None,
                message: message.into(),
                extra_headers: Vec::new(),
            })?;
            steps.push((tree, new_tree));
            commits.push(WovenCommit {
                source: key,
                commit,
                summary: item.summary(),
            });
            tip = commit;
            tree = new_tree;
        }
        if commits.is_empty() {
            return Ok(Outcome::Already { notes });
        }
        let before = self.tip;
        for (i, (old, new)) in steps.into_iter().enumerate() {
            self.owners.push(Owner {
                label: input.label.clone(),
                persona: persona.map(str::to_owned),
                commit: commits[i].commit,
            });
            self.track(old, new, self.owners.len() - 1)?;
        }
        for c in &commits {
            self.keys.insert(c.source.clone());
        }
        self.tip = tip;
        self.tree = tree;
        Ok(Outcome::Woven(Woven {
            commits,
            notes,
            before,
            after: tip,
        }))
    }

    fn patch_author(&self, p: &MailPatch, persona: Option<&str>) -> gix::actor::Signature {
        let time = p.date.unwrap_or(self.committer.time);
        match (&p.author, persona) {
            (Some((name, email)), _) => gix::actor::Signature {
                name: name.as_str().into(),
                email: email.as_str().into(),
                time,
            },
            (None, Some(persona)) => crate::repo::persona_signature(persona, time),
            (None, None) => gix::actor::Signature {
                time,
                ..self.committer.clone()
            },
        }
    }

    /// Cherry-pick `c` onto `ours`: the new tree, or the conflicts.
    fn pick(
        &self,
        c: &CommitItem,
        ours: ObjectId,
        label: &str,
    ) -> Result<std::result::Result<ObjectId, Failure>> {
        if c.parent_tree == ours {
            return Ok(Ok(c.tree));
        }
        if c.tree == c.parent_tree {
            return Ok(Ok(ours));
        }
        self.merge(c.parent_tree, ours, c.tree, label)
    }

    /// 3-way merge of trees; the conflicts explained against the tracker.
    fn merge(
        &self,
        base: ObjectId,
        ours: ObjectId,
        theirs: ObjectId,
        label: &str,
    ) -> Result<std::result::Result<ObjectId, Failure>> {
        let labels = gix::merge::blob::builtin_driver::text::Labels {
            ancestor: Some("base".into()),
            current: Some("integration".into()),
            other: Some(label.into()),
        };
        let mut out =
            self.repo
                .merge_trees(base, ours, theirs, labels, self.merge_options.clone())?;
        let how = TreatAsUnresolved::git();
        if !out.has_unresolved_conflicts(how) {
            return Ok(Ok(out.tree.write()?.detach()));
        }
        let mut paths: Vec<(BString, String)> = Vec::new();
        for c in out.conflicts.iter().filter(|c| c.is_unresolved(how)) {
            let (o, t) = c.changes_in_resolution();
            let detail = match &c.resolution {
                Ok(r) => format!("{r:?}"),
                Err(f) => format!("{f:?}"),
            };
            for p in [o.location(), t.location()] {
                if !paths.iter().any(|(q, _)| q == p) {
                    paths.push((p.to_owned(), detail.clone()));
                }
            }
        }
        paths.sort();
        let mut conflicts = Vec::new();
        for (p, detail) in paths {
            conflicts.push(self.explain(p.as_ref(), base, ours, theirs, &detail)?);
        }
        Ok(Err(Failure::Conflict(conflicts)))
    }

    /// Why `path` conflicts in the merge of (base, ours, theirs), hunk by hunk where both sides changed
    /// the content.
    fn explain(
        &self,
        path: &BStr,
        base: ObjectId,
        ours: ObjectId,
        theirs: ObjectId,
        detail: &str,
    ) -> Result<FileConflict> {
        let b = self.blob_at(base, path)?;
        let o = self.blob_at(ours, path)?;
        let t = self.blob_at(theirs, path)?;
        let mut fc = FileConflict {
            path: path.to_string(),
            reason: String::new(),
            hunks: Vec::new(),
            counterparts: Vec::new(),
        };
        match (b, o, t) {
            (Some(b), Some(o), Some(t)) => {
                fc.reason = "content conflict: both changed the same lines".into();
                let their = diff_lines(&b, &t);
                let our = diff_lines(&b, &o);
                let n_base = apply::lines(&b).len() as u32;
                for th in &their {
                    let touches = our.iter().any(|oh| {
                        th.before.start <= oh.before.end && oh.before.start <= th.before.end
                    });
                    if !touches {
                        continue;
                    }
                    let cs = th.before.start.saturating_sub(3);
                    let ce = (th.before.end + 3).min(n_base);
                    let a_start = th.after.start.saturating_sub(th.before.start - cs);
                    let a_end = th.after.end + (ce - th.before.end);
                    let header = format!(
                        "@@ -{} +{} @@",
                        fmt_range(cs, ce - cs),
                        fmt_range(a_start, a_end - a_start)
                    );
                    let mapped = map_range(&our, cs..ce);
                    fc.hunks.push(HunkConflict {
                        header,
                        lines: one_based(&mapped),
                        counterparts: self.counterparts(path, mapped),
                    });
                }
                if fc.hunks.is_empty() {
                    fc.counterparts = self.counterparts(path, 0..u32::MAX);
                }
            }
            (Some(_), None, Some(_)) => {
                fc.reason = "deleted in the integration branch, changed by the input".into();
                fc.counterparts = self.deleted_counterpart(path);
            }
            (Some(_), Some(_), None) => {
                fc.reason = "deleted by the input, changed in the integration branch".into();
                fc.counterparts = self.counterparts(path, 0..u32::MAX);
            }
            (None, Some(_), Some(_)) => {
                fc.reason = "added on both sides with different content".into();
                fc.counterparts = self.counterparts(path, 0..u32::MAX);
            }
            _ => {
                fc.reason = format!("tree conflict ({detail})");
                fc.counterparts = self.counterparts(path, 0..u32::MAX);
            }
        }
        Ok(fc)
    }

    /// Earlier inputs whose changed lines intersect `r` in `path`, one entry per woven commit.
    fn counterparts(&self, path: &BStr, r: Range<u32>) -> Vec<Counterpart> {
        let mut out: Vec<Counterpart> = Vec::new();
        for s in self.tracker.overlapping(path, r) {
            let o = &self.owners[s.owner];
            let commit = o.commit.to_hex_with_len(7).to_string();
            let lines = one_based(&s.lines);
            match out.iter_mut().find(|c| c.commit == commit) {
                Some(c) => {
                    c.lines = [c.lines[0].min(lines[0]), c.lines[1].max(lines[1])];
                }
                None => out.push(Counterpart {
                    input: o.label.clone(),
                    persona: o.persona.clone(),
                    commit,
                    path: path.to_string(),
                    lines,
                }),
            }
        }
        out
    }

    fn deleted_counterpart(&self, path: &BStr) -> Vec<Counterpart> {
        self.tracker
            .deleted_by(path)
            .map(|i| {
                let o = &self.owners[i];
                Counterpart {
                    input: o.label.clone(),
                    persona: o.persona.clone(),
                    commit: o.commit.to_hex_with_len(7).to_string(),
                    path: path.to_string(),
                    lines: [0, 0],
                }
            })
            .into_iter()
            .collect()
    }

    fn entry(&self, tree: ObjectId, path: &BStr) -> Result<Option<(EntryKind, ObjectId)>> {
        let t = self.repo.find_tree(tree)?;
        let e = t.lookup_entry(path.split(|&b| b == b'/'))?;
        Ok(e.map(|e| (e.mode().kind(), e.object_id())))
    }

    fn blob_at(&self, tree: ObjectId, path: &BStr) -> Result<Option<Vec<u8>>> {
        match self.entry(tree, path)? {
            Some((kind, id)) if kind != EntryKind::Tree && kind != EntryKind::Commit => {
                Ok(Some(self.read_blob(id)?))
            }
            _ => Ok(None),
        }
    }

    // Objects go straight to the store: `Repository::write_object` first asks whether the object exists on
    // disk, and every miss makes the object database rescan its pack directory.
    fn write_blob(&self, data: &[u8]) -> Result<ObjectId> {
        Ok(self.repo.objects.write_buf(gix::objs::Kind::Blob, data)?)
    }

    fn editor(&self, tree: ObjectId) -> Result<gix::objs::tree::Editor<'r>> {
        Ok(self.repo.edit_tree(tree)?.detach())
    }

    fn write_tree(&self, ed: &mut gix::objs::tree::Editor<'_>) -> Result<ObjectId> {
        Ok(ed.write(|t| self.repo.objects.write(t))?)
    }

    fn read_blob(&self, id: ObjectId) -> Result<Vec<u8>> {
        Ok(self.repo.find_object(id)?.detach().data)
    }

    /// Record who changed what between two trees (rename-aware).
    fn track(&mut self, old: ObjectId, new: ObjectId, owner: usize) -> Result<()> {
        use gix::object::tree::diff::ChangeDetached as C;
        let old_t = self.repo.find_tree(old)?;
        let new_t = self.repo.find_tree(new)?;
        let opts =
            gix::diff::Options::default().with_rewrites(Some(gix::diff::Rewrites::default()));
        let changes = self.repo.diff_tree_to_tree(&old_t, &new_t, opts)?;
        for ch in changes {
            match ch {
                C::Addition {
                    location,
                    entry_mode,
                    id,
                    ..
                } if !entry_mode.is_tree() => {
                    let new = self.read_blob(id)?;
                    self.track_change(location.as_ref(), b"", &new, owner);
                }
                C::Deletion {
                    location,
                    entry_mode,
                    ..
                } if !entry_mode.is_tree() => self.tracker.delete(location.as_ref(), owner),
                C::Modification {
                    location,
                    previous_id,
                    id,
                    entry_mode,
                    ..
                } if !entry_mode.is_tree() => {
                    let (a, b) = (self.read_blob(previous_id)?, self.read_blob(id)?);
                    self.track_change(location.as_ref(), &a, &b, owner);
                }
                C::Rewrite {
                    source_location,
                    source_id,
                    location,
                    id,
                    copy,
                    entry_mode,
                    ..
                } if !entry_mode.is_tree() => {
                    if !copy {
                        self.tracker
                            .rename(source_location.as_ref(), location.as_ref());
                    }
                    let (a, b) = (self.read_blob(source_id)?, self.read_blob(id)?);
                    self.track_change(location.as_ref(), &a, &b, owner);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn track_change(&mut self, path: &BStr, old: &[u8], new: &[u8], owner: usize) {
        let binaryish = |d: &[u8]| d.len() > LINE_DIFF_LIMIT || d.contains(&0);
        if binaryish(old) || binaryish(new) {
            let whole = LineHunk {
                before: 0..apply::lines(old).len() as u32,
                after: 0..apply::lines(new).len().max(1) as u32,
            };
            self.tracker.change_with(path, &[whole], owner);
        } else {
            self.tracker.change(path, old, new, owner);
        }
    }

    /// Apply a patch to `ours`: directly, else 3-way when its preimage blobs are known.
    fn apply_patch(
        &self,
        p: &MailPatch,
        ours: ObjectId,
        label: &str,
        notes: &mut Vec<String>,
    ) -> Result<std::result::Result<ObjectId, Failure>> {
        let mut local_notes = Vec::new();
        let direct = self.apply_direct(p, ours, &mut local_notes)?;
        let conflicts = match direct {
            Ok(tree) => {
                notes.extend(local_notes);
                return Ok(Ok(tree));
            }
            Err(Failure::Error(e)) => return Ok(Err(Failure::Error(e))),
            Err(Failure::Conflict(c)) => c,
        };
        // 3-way: rebuild the preimage from the blobs the patch names, apply there, merge into ours.
        let Some(base) = self.preimage_tree(p, ours)? else {
            return Ok(Err(Failure::Conflict(conflicts)));
        };
        let theirs = match self.apply_direct(p, base, &mut Vec::new())? {
            Ok(t) => t,
            Err(_) => return Ok(Err(Failure::Conflict(conflicts))),
        };
        match self.merge(base, ours, theirs, label)? {
            Ok(tree) => {
                notes.push(format!(
                    "{}: applied with a 3-way merge (its preimage blobs are in the repository)",
                    summary_of(p)
                ));
                Ok(Ok(tree))
            }
            Err(f) => Ok(Err(f)),
        }
    }

    /// `ours` with every file the patch changes set to the blob its `index` line names; `None` unless all
    /// of them exist.
    fn preimage_tree(&self, p: &MailPatch, ours: ObjectId) -> Result<Option<ObjectId>> {
        let mut ed = self.editor(ours)?;
        for f in &p.files {
            match (&f.old_path, &f.old_id) {
                (None, _) => {
                    let path = f.path();
                    if self.entry(ours, path.as_ref())?.is_some() {
                        ed.remove(components(path))?;
                    }
                }
                (Some(path), Some(id)) => {
                    let Some(blob) = self.resolve_blob(id)? else {
                        return Ok(None);
                    };
                    let kind = match f.old_mode {
                        Some(m) => match mode_kind(m) {
                            Ok(k) => k,
                            Err(_) => return Ok(None),
                        },
                        None => EntryKind::Blob,
                    };
                    ed.upsert(components(path), kind, blob)?;
                }
                (Some(_), None) => return Ok(None),
            }
        }
        Ok(Some(self.write_tree(&mut ed)?))
    }

    /// An abbreviated blob id from an `index` line, if it names exactly one object here.
    fn resolve_blob(&self, hex: &str) -> Result<Option<ObjectId>> {
        if hex.chars().all(|c| c == '0') {
            return Ok(None);
        }
        if hex.len() == self.repo.object_hash().len_in_hex() {
            let id = ObjectId::from_hex(hex.as_bytes())
                .map_err(|_| Error::Other(format!("bad object id {hex}")))?;
            return Ok(self.repo.has_object(id).then_some(id));
        }
        let Ok(prefix) = gix::hash::Prefix::from_hex(hex) else {
            return Ok(None);
        };
        match self.repo.objects.lookup_prefix(prefix, None) {
            Ok(Some(Ok(id))) => Ok(Some(id)),
            _ => Ok(None),
        }
    }

    /// Apply with exact context onto `ours` (no merge).
    fn apply_direct(
        &self,
        p: &MailPatch,
        ours: ObjectId,
        notes: &mut Vec<String>,
    ) -> Result<std::result::Result<ObjectId, Failure>> {
        enum Op {
            Upsert(BString, EntryKind, ObjectId),
            Remove(BString),
        }
        let mut ops = Vec::new();
        let mut conflicts = Vec::new();
        for f in &p.files {
            match self.file_direct(f, ours, notes)? {
                FileResult::Ok { remove, upsert } => {
                    if let Some(r) = remove {
                        ops.push(Op::Remove(r));
                    }
                    if let Some((path, kind, id)) = upsert {
                        ops.push(Op::Upsert(path, kind, id));
                    }
                }
                FileResult::Conflict(c) => conflicts.push(c),
                FileResult::Error(e) => {
                    return Ok(Err(Failure::Error(format!("{}: {e}", f.path()))))
                }
            }
        }
        if !conflicts.is_empty() {
            return Ok(Err(Failure::Conflict(conflicts)));
        }
        let mut ed = self.editor(ours)?;
        for op in ops {
            match op {
                Op::Upsert(path, kind, id) => {
                    ed.upsert(components(&path), kind, id)?;
                }
                Op::Remove(path) => {
                    ed.remove(components(&path))?;
                }
            }
        }
        Ok(Ok(self.write_tree(&mut ed)?))
    }

    fn file_direct(
        &self,
        f: &FilePatch,
        ours: ObjectId,
        notes: &mut Vec<String>,
    ) -> Result<FileResult> {
        let conflict = |path: &BString, reason: &str, counterparts: Vec<Counterpart>| {
            FileResult::Conflict(FileConflict {
                path: path.to_string(),
                reason: reason.to_owned(),
                hunks: Vec::new(),
                counterparts,
            })
        };
        for p in [&f.old_path, &f.new_path].into_iter().flatten() {
            if let Err(e) = safe_path(p) {
                return Ok(FileResult::Error(e));
            }
        }
        let new_kind = match f.new_mode.map(mode_kind).transpose() {
            Ok(k) => k,
            Err(e) => return Ok(FileResult::Error(e)),
        };
        let Some(old_path) = &f.old_path else {
            let path = f.new_path.as_ref().expect("a new file has a new path");
            if self.entry(ours, path.as_ref())?.is_some() {
                return Ok(conflict(
                    path,
                    "the input adds it, but it already exists in the integration branch",
                    self.counterparts(path.as_ref(), 0..u32::MAX),
                ));
            }
            let content = match &f.binary {
                Some(Binary::Literal(d)) => d.clone(),
                Some(Binary::Delta(_)) => {
                    return Ok(FileResult::Error("a binary delta for a new file".into()))
                }
                Some(Binary::NoData) => match self.no_data_blob(f)? {
                    Ok(id) => {
                        return Ok(FileResult::Ok {
                            remove: None,
                            upsert: Some((path.clone(), new_kind.unwrap_or(EntryKind::Blob), id)),
                        })
                    }
                    Err(e) => return Ok(FileResult::Error(e)),
                },
                None => match apply::apply(b"", &f.hunks) {
                    Ok(a) => a.data,
                    Err(_) => {
                        return Ok(FileResult::Error("malformed hunks for a new file".into()))
                    }
                },
            };
            let id = self.write_blob(&content)?;
            return Ok(FileResult::Ok {
                remove: None,
                upsert: Some((path.clone(), new_kind.unwrap_or(EntryKind::Blob), id)),
            });
        };
        let Some((cur_kind, cur_id)) = self.entry(ours, old_path.as_ref())? else {
            return Ok(conflict(
                old_path,
                "the input changes it, but it does not exist in the integration branch",
                self.deleted_counterpart(old_path.as_ref()),
            ));
        };
        if let Some(new_path) = &f.new_path {
            if new_path != old_path && self.entry(ours, new_path.as_ref())?.is_some() {
                return Ok(conflict(
                    new_path,
                    "the input renames or copies a file here, but it already exists in the integration branch",
                    self.counterparts(new_path.as_ref(), 0..u32::MAX),
                ));
            }
        }
        let preimage_matches = f.old_id.as_deref().is_none_or(|h| {
            h.chars().all(|c| c == '0') || cur_id.to_string().starts_with(&h.to_ascii_lowercase())
        });
        let new_id = match &f.binary {
            Some(bin) => {
                if !preimage_matches {
                    return Ok(conflict(
                        old_path,
                        "binary file: the integration branch has other content than the patch expects",
                        self.counterparts(old_path.as_ref(), 0..u32::MAX),
                    ));
                }
                match bin {
                    Binary::Literal(d) => self.write_blob(d)?,
                    Binary::Delta(d) => {
                        let src = self.read_blob(cur_id)?;
                        match binary::apply_delta(&src, d) {
                            Ok(out) => self.write_blob(&out)?,
                            Err(e) => return Ok(FileResult::Error(format!("binary delta: {e}"))),
                        }
                    }
                    Binary::NoData => match self.no_data_blob(f)? {
                        Ok(id) => id,
                        Err(e) => return Ok(FileResult::Error(e)),
                    },
                }
            }
            None if f.hunks.is_empty() => cur_id,
            None => {
                let data = self.read_blob(cur_id)?;
                match apply::apply(&data, &f.hunks) {
                    Ok(a) => {
                        for (k, pl) in a.placed.iter().enumerate() {
                            if pl.offset != 0 {
                                notes.push(format!(
                                    "{}: hunk {} applied at offset {:+} (line {})",
                                    old_path,
                                    k + 1,
                                    pl.offset,
                                    pl.at + 1
                                ));
                            }
                        }
                        if f.is_delete() && !a.data.is_empty() {
                            return Ok(conflict(
                                old_path,
                                "the input deletes it, but the integration branch has lines the patch does not remove",
                                self.counterparts(old_path.as_ref(), 0..u32::MAX),
                            ));
                        }
                        self.write_blob(&a.data)?
                    }
                    Err(failed) => {
                        let hunks = failed
                            .iter()
                            .map(|fl| {
                                let r =
                                    fl.expected_at as u32..(fl.expected_at + fl.len.max(1)) as u32;
                                HunkConflict {
                                    header: f.hunks[fl.hunk].header.clone(),
                                    lines: one_based(&r),
                                    counterparts: self.counterparts(old_path.as_ref(), r),
                                }
                            })
                            .collect();
                        return Ok(FileResult::Conflict(FileConflict {
                            path: old_path.to_string(),
                            reason: "the context of the patch is not in the integration branch"
                                .into(),
                            hunks,
                            counterparts: Vec::new(),
                        }));
                    }
                }
            }
        };
        let Some(new_path) = &f.new_path else {
            return Ok(FileResult::Ok {
                remove: Some(old_path.clone()),
                upsert: None,
            });
        };
        let kind = new_kind.unwrap_or(cur_kind);
        let remove = (f.rename && new_path != old_path).then(|| old_path.clone());
        Ok(FileResult::Ok {
            remove,
            upsert: Some((new_path.clone(), kind, new_id)),
        })
    }

    fn no_data_blob(&self, f: &FilePatch) -> Result<std::result::Result<ObjectId, String>> {
        if let Some(id) = f.new_id.as_deref() {
            if let Some(id) = self.resolve_blob(id)? {
                return Ok(Ok(id));
            }
        }
        Ok(Err("binary patch without data (\"Binary files … differ\") and the new blob is not in this repository: make the patch with `git format-patch --binary`".into()))
    }
}

enum FileResult {
    Ok {
        remove: Option<BString>,
        upsert: Option<(BString, EntryKind, ObjectId)>,
    },
    Conflict(FileConflict),
    Error(String),
}

fn components(path: &BString) -> impl Iterator<Item = &BStr> {
    path.split(|&b| b == b'/').map(BStr::new)
}

/// A path a patch may write: relative, no empty, `.` or `..` component, nothing inside `.git`.
fn safe_path(path: &BString) -> std::result::Result<(), String> {
    let bad = path.is_empty()
        || path.starts_with(b"/")
        || path
            .split(|&b| b == b'/')
            .any(|c| c.is_empty() || c == b"." || c == b".." || c.eq_ignore_ascii_case(b".git"));
    if bad {
        Err(format!("refusing the unsafe path {path:?}"))
    } else {
        Ok(())
    }
}

fn mode_kind(mode: u32) -> std::result::Result<EntryKind, String> {
    match mode {
        0o100644 | 0o100664 | 0o100600 => Ok(EntryKind::Blob),
        0o100755 => Ok(EntryKind::BlobExecutable),
        0o120000 => Ok(EntryKind::Link),
        0o160000 => Err("submodule changes are not supported".into()),
        m => Err(format!("unsupported file mode {m:o}")),
    }
}

fn short_key(key: &str) -> &str {
    &key[..key.len().min(12)]
}

fn summary_of(p: &MailPatch) -> String {
    p.message.lines().next().unwrap_or("the patch").to_owned()
}

/// `@@` range notation: `start,len` (1-based), `start` alone for one line, `start,0` when empty.
fn fmt_range(start0: u32, len: u32) -> String {
    match len {
        0 => format!("{start0},0"),
        1 => format!("{}", start0 + 1),
        n => format!("{},{n}", start0 + 1),
    }
}

fn one_based(r: &Range<u32>) -> [u32; 2] {
    [r.start + 1, r.end.max(r.start + 1)]
}
