//! Patch to tree: applying a mail's file diffs to a tree with exact context and offsets
//! ([`apply`](crate::capabilities::weave::apply)), and, when that fails and the patch's preimage blobs are known, 3-way
//! as `git am -3` does.

use gix::bstr::BString;
use gix::objs::tree::EntryKind;
use gix::ObjectId;

use super::rules::{mode_kind, safe_entry, safe_path};
use super::{components, one_based, summary_of, Engine, Failure};
use crate::capabilities::weave::apply;
use crate::capabilities::weave::binary;
use crate::capabilities::weave::mbox::MailPatch;
use crate::capabilities::weave::patch::{Binary, FilePatch};
use crate::capabilities::weave::report::{Counterpart, FileConflict, HunkConflict};
use crate::kit::error::{Error, Result};

impl<'r> Engine<'r> {
    /// Apply a patch to `ours`: directly, else 3-way when its preimage blobs are known.
    pub(super) fn apply_patch(
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

    /// The "fake ancestor" of `git am -3`: a tree holding only the files the patch changes, each at the blob
    /// its `index` line names; `None` unless all of them exist. Holding nothing else matters: merged with
    /// the integration tip, a file the tip renamed is then found by rename detection (the tip "deleted"
    /// the old name and "added" the new one), and the change follows the rename, as in git.
    pub(super) fn preimage_tree(&self, p: &MailPatch, ours: ObjectId) -> Result<Option<ObjectId>> {
        let empty = ObjectId::empty_tree(ours.kind());
        let mut ed = self.editor(empty)?;
        for f in &p.files {
            match (&f.old_path, &f.old_id) {
                (None, _) => {}
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
    pub(super) fn resolve_blob(&self, hex: &str) -> Result<Option<ObjectId>> {
        if hex.chars().all(|c| c == '0') {
            return Ok(None);
        }
        if hex.len() == self.repo.object_hash().len_in_hex() {
            let id = ObjectId::from_hex(hex.as_bytes())
                .map_err(|e| Error::wrap(format!("bad object id {hex}"), e))?;
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
    pub(super) fn apply_direct(
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
                    return Ok(Err(Failure::Error(format!(
                        "{}: {e}",
                        super::rules::show_path(f.path().as_ref())
                    ))))
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
                leases: Vec::new(),
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
        if let (Some(p), Some(k)) = (&f.new_path, new_kind) {
            if let Err(e) = safe_entry(p, k) {
                return Ok(FileResult::Error(e));
            }
        }
        let Some(old_path) = &f.old_path else {
            let path = f.new_path.as_ref().expect("a new file has a new path");
            if self.entry(ours, path.as_ref())?.is_some() {
                return Ok(conflict(
                    path,
                    "the input adds it, but it already exists in the integration branch",
                    self.counterparts(path.as_ref(), 0..u32::MAX),
                ));
            }
            let content: std::borrow::Cow<[u8]> = match &f.binary {
                Some(Binary::Literal(d)) => d.into(),
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
                    Ok(a) => a.data.into(),
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
            if f.maybe_new {
                // `git apply`: a traditional diff that only adds, to a file that is not there, creates it.
                if let Ok(a) = apply::apply(b"", &f.hunks) {
                    let id = self.write_blob(&a.data)?;
                    let path = f.new_path.clone().unwrap_or_else(|| old_path.clone());
                    return Ok(FileResult::Ok {
                        remove: None,
                        upsert: Some((path, new_kind.unwrap_or(EntryKind::Blob), id)),
                    });
                }
            }
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
                                    // One line more on each side: an insertion right next to
                                    // the hunk (two appends at the end of a file) is in its way.
                                    counterparts: self.counterparts(
                                        old_path.as_ref(),
                                        r.start.saturating_sub(1)..r.end.saturating_add(1),
                                    ),
                                }
                            })
                            .collect();
                        return Ok(FileResult::Conflict(FileConflict {
                            path: old_path.to_string(),
                            reason: "the context of the patch is not in the integration branch"
                                .into(),
                            hunks,
                            counterparts: Vec::new(),
                            leases: Vec::new(),
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

    pub(super) fn no_data_blob(
        &self,
        f: &FilePatch,
    ) -> Result<std::result::Result<ObjectId, String>> {
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
