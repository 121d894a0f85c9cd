//! The in-memory weaver: applies inputs one after another onto a tip, writing blobs, trees and commits
//! through whatever object store the repository handle has (object memory for weave: nothing reaches disk
//! until the caller flushes).
//!
//! Commits are picked like `git cherry-pick`: a 3-way tree merge of (parent, integration tip, commit).
//! Patches are applied with exact context and line offsets ([`super::apply`]); when that fails and every
//! preimage blob named by the patch's `index` lines exists in the repository, the patch is applied to those
//! blobs and the result merged 3-way into the tip, as `git am -3` does. Conflicts are explained hunk by hunk
//! against the [`Tracker`], which knows which earlier woven input changed which lines.
//!
//! Seams: [`pick`] (commits), [`patch_tree`] (patches to trees), [`explain`] (conflicts and their
//! counterparts), [`rules`] (what git and `git fsck --strict` accept). This module keeps the loop over an
//! input's items, the commits it writes and the history it learns.

mod explain;
mod patch_tree;
mod pick;
pub mod rules;

use std::collections::HashSet;
use std::ops::Range;

use gix::bstr::{BStr, BString};
use gix::objs::tree::EntryKind;
use gix::objs::Write as _;
use gix::ObjectId;

use super::apply;
use super::footprint::{LineHunk, Tracker};
use super::input::{Input, Item};
use super::mbox::{MailPatch, Skipped};
use super::persona::{self, PersonaMap};
use super::report::{FileConflict, WovenCommit};
use super::trailers;
use crate::kit::error::Result;

/// What to do with a mail that carries no diff (`git am --empty`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Empty {
    /// Report it as skipped and go on (the default).
    #[default]
    Drop,
    /// Record it as an empty commit with its message.
    Keep,
    /// The input fails.
    Stop,
}

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
    /// Who changed which lines; brought up to date from `pending` only when a conflict needs explaining
    /// (most weaves have none, and diffing every woven blob was most of the time on real history).
    tracker: std::cell::RefCell<Tracker>,
    pending: std::cell::RefCell<Vec<(ObjectId, ObjectId, usize)>>,
    pub owners: Vec<Owner>,
    /// `Woven-id`s already on the branch.
    pub keys: HashSet<String>,
    merge_options: gix::merge::tree::Options,
    pub empty: Empty,
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
            tracker: Default::default(),
            pending: Default::default(),
            owners: Vec::new(),
            keys: HashSet::new(),
            merge_options: repo.tree_merge_options()?,
            empty: Empty::Drop,
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
                None => crate::store::loose::empty_tree(self.repo)?,
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
            if let Item::Skipped(sk) = item {
                match self.empty {
                    Empty::Drop => continue,
                    Empty::Stop => {
                        return Ok(Outcome::Failed(Failure::Error(format!(
                            "{}: the mail is {} (--empty=stop)",
                            sk.name,
                            sk.reason.as_str()
                        ))))
                    }
                    Empty::Keep => {}
                }
            }
            if self.keys.contains(&key) {
                notes.push(format!("{} is already woven", short_key(&key)));
                continue;
            }
            let result = match item {
                Item::Commit(c) => self.pick(c, tree, &input.label)?,
                Item::Patch(p) => self.apply_patch(p, tree, &input.label, &mut notes)?,
                Item::Skipped(_) => Ok(tree),
            };
            let new_tree = match result {
                Ok(t) => t,
                Err(f) => return Ok(Outcome::Failed(f)),
            };
            let keep_empty = matches!(item, Item::Skipped(_));
            if new_tree == tree && !keep_empty {
                notes.push(format!(
                    "{} changes nothing: it is already present",
                    short_key(&key)
                ));
                continue;
            }
            let (author, message) = match item {
                Item::Commit(c) => (c.author.clone(), c.message.clone()),
                Item::Patch(p) => match self.patch_author(p, persona) {
                    Ok(a) => (a, p.message.clone()),
                    Err(e) => return Ok(Outcome::Failed(Failure::Error(e))),
                },
                Item::Skipped(sk) => match self.skipped_author(sk, persona) {
                    Ok(a) => (a, sk.message.clone()),
                    Err(e) => return Ok(Outcome::Failed(Failure::Error(e))),
                },
            };
            if let Err(e) = rules::check_message(&message) {
                return Ok(Outcome::Failed(Failure::Error(format!(
                    "{}: {e}",
                    item.summary()
                ))));
            }
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

    /// The author of a patch: its `From:` (checked against [`rules::check_ident`]), else the persona's,
    /// else the committer; the date from its `Date:` (an unreadable one fails, as `git am` fails).
    fn patch_author(
        &self,
        p: &MailPatch,
        persona: Option<&str>,
    ) -> std::result::Result<gix::actor::Signature, String> {
        if let (Some(raw), None) = (&p.date_raw, p.date) {
            return Err(format!(
                "{}: invalid date format: {raw} (git am refuses it too)",
                summary_of(p)
            ));
        }
        self.author_of(p.author.as_ref(), p.date, persona)
            .map_err(|e| format!("{}: {e}", summary_of(p)))
    }

    fn skipped_author(
        &self,
        s: &Skipped,
        persona: Option<&str>,
    ) -> std::result::Result<gix::actor::Signature, String> {
        self.author_of(s.author.as_ref(), s.date, persona)
            .map_err(|e| format!("{}: {e}", s.name))
    }

    fn author_of(
        &self,
        author: Option<&(String, String)>,
        date: Option<gix::date::Time>,
        persona: Option<&str>,
    ) -> std::result::Result<gix::actor::Signature, String> {
        let time = date.unwrap_or(self.committer.time);
        Ok(match (author, persona) {
            (Some((name, email)), _) => {
                rules::check_ident(name, email)?;
                gix::actor::Signature {
                    name: name.as_str().into(),
                    email: email.as_str().into(),
                    time,
                }
            }
            (None, Some(persona)) => crate::kit::repo::persona_signature(persona, time),
            (None, None) => gix::actor::Signature {
                time,
                ..self.committer.clone()
            },
        })
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

    /// Record that `owner` changed `old` into `new`; the line tracking happens when it is needed.
    fn track(&mut self, old: ObjectId, new: ObjectId, owner: usize) -> Result<()> {
        self.pending.get_mut().push((old, new, owner));
        Ok(())
    }

    /// The tracker with every recorded change applied, in order.
    fn tracker(&self) -> Result<std::cell::Ref<'_, Tracker>> {
        let steps = std::mem::take(&mut *self.pending.borrow_mut());
        for (old, new, owner) in steps {
            self.track_now(old, new, owner)?;
        }
        Ok(self.tracker.borrow())
    }

    /// Record who changed what between two trees (rename-aware).
    fn track_now(&self, old: ObjectId, new: ObjectId, owner: usize) -> Result<()> {
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
                } if !entry_mode.is_tree() => {
                    self.tracker.borrow_mut().delete(location.as_ref(), owner)
                }
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
                            .borrow_mut()
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

    fn track_change(&self, path: &BStr, old: &[u8], new: &[u8], owner: usize) {
        let mut tracker = self.tracker.borrow_mut();
        let binaryish = |d: &[u8]| d.len() > LINE_DIFF_LIMIT || d.contains(&0);
        if binaryish(old) || binaryish(new) {
            let whole = LineHunk {
                before: 0..apply::lines(old).len() as u32,
                after: 0..apply::lines(new).len().max(1) as u32,
            };
            tracker.change_with(path, &[whole], owner);
        } else {
            tracker.change(path, old, new, owner);
        }
    }
}

pub(super) fn components(path: &BString) -> impl Iterator<Item = &BStr> {
    path.split(|&b| b == b'/').map(BStr::new)
}

pub(super) fn short_key(key: &str) -> &str {
    &key[..key.len().min(12)]
}

pub(super) fn summary_of(p: &MailPatch) -> String {
    p.message.lines().next().unwrap_or("the patch").to_owned()
}

/// `@@` range notation: `start,len` (1-based), `start` alone for one line, `start,0` when empty.
pub(super) fn fmt_range(start0: u32, len: u32) -> String {
    match len {
        0 => format!("{start0},0"),
        1 => format!("{}", start0 + 1),
        n => format!("{},{n}", start0 + 1),
    }
}

pub(super) fn one_based(r: &Range<u32>) -> [u32; 2] {
    [r.start + 1, r.end.max(r.start + 1)]
}
