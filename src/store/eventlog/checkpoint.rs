//! Checkpoints: a projection's state stored on the shared log, so that a fresh clone folds only the
//! events after it instead of the whole history.
//!
//! A checkpoint is anchored at one commit `C` of a log and covers exactly the events reachable from `C`.
//! It is the projection's sealed cache files (see [`super::cache`]) as a fresh fold of those events would
//! write them, every file re-stamped with `C`, so it is a deterministic function of the events: two replicas
//! that checkpoint the same commit write byte-identical blobs and the same manifest blob.
//!
//! On the log it is two kinds of notes, both under `refs/notes/jules/`, which `sync` already carries and
//! joins by union:
//!
//! - `refs/notes/jules/checkpoints`: on `C`, the *manifest* (text, format in `docs/format.md`): the log, `C`,
//!   and per projection its version, event count, largest (lamport, id) and files with their blob ids.
//! - `refs/notes/jules/checkpoint-data`: every file blob annotates itself (the note on blob `B` is `B`), which
//!   makes the blobs reachable, so push and fetch carry them.
//!
//! A reader without a cache finds the newest anchor reachable from its tips, checks the manifest (format,
//! log, anchor, projection version) and every file's seal, writes the files into its cache directory and
//! then refreshes incrementally from `C` to its tips. Anything missing, foreign or damaged makes it fall
//! back to a full replay; `git jules log fsck --checkpoints` recomputes every manifest from the log.
//!
//! Under `jules.requireSigned` a reader folds only verified events, so a plain checkpoint (a fold of every
//! event, signed by nobody) is not its fold. It reads *signed* checkpoints instead, in
//! `refs/notes/jules/checkpoints-signed`: manifests of format 2 whose sections are the fold of the events
//! verified under one trust file (named by its blob id), signed by a key that trust file allows for
//! checkpoints (`crate::store::sign::CHECKPOINT_NAMESPACE`). A reader uses one only when the signature verifies
//! under its own trust roots and the manifest was folded under that same trust file; otherwise it replays,
//! and says why: the checkpoint it passed over comes back with the projection ([`Ignored`] in
//! `Loaded::passed_over`), and into the caller's [`PassedOver`] when its log carries one.

use std::collections::HashMap;
use std::path::Path;

use gix::ObjectId;

use super::cache::{self, Meta, Projection, Stamp};
use super::event::EventId;
pub use super::passed_over::{Ignored, PassedOver};
use super::Log;
use crate::kit::error::{Error, Result};

/// Manifests, one per anchor commit.
pub const NOTES_REF: &str = "refs/notes/jules/checkpoints";
/// The file blobs, each the note on itself.
pub const DATA_REF: &str = "refs/notes/jules/checkpoint-data";
/// Signed manifests (format 2), one per anchor, apart from the plain ones: the two are different folds.
pub const SIGNED_REF: &str = "refs/notes/jules/checkpoints-signed";
/// The plain manifest format this build reads and writes.
pub const FORMAT: u32 = 1;
/// The signed manifest format: format 1 plus a `trust` line and a final `signature` line.
pub const FORMAT_SIGNED: u32 = 2;
const MAGIC: &str = "jules-checkpoint";
const SIGNATURE_LINE: &str = "signature ";

/// One projection's part of a checkpoint, with the files' contents.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub projection: String,
    pub version: u32,
    pub events: u64,
    pub max_key: Option<(u64, EventId)>,
    /// Paths relative to the projection's cache directory, sorted, with sealed contents.
    pub files: Vec<(String, Vec<u8>)>,
}

/// A section as a manifest names it: files by blob id.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionRef {
    pub projection: String,
    pub version: u32,
    pub events: u64,
    pub max_key: Option<(u64, EventId)>,
    pub files: Vec<(String, ObjectId)>,
}

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub log: String,
    pub commit: ObjectId,
    /// Signed manifests (format 2): the blob id of the allowed-signers file whose verified events the
    /// sections fold. `None`: a plain manifest (format 1), a fold of every event.
    pub trust: Option<ObjectId>,
    pub sections: Vec<SectionRef>,
}

/// A manifest's bytes split into what its signature covers (every line before the last) and the
/// signature (the last line's value, when it is a `signature` line).
pub fn split_signature(data: &[u8]) -> (&[u8], Option<&str>) {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let start = body.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    match std::str::from_utf8(&body[start..])
        .ok()
        .and_then(|l| l.strip_prefix(SIGNATURE_LINE))
    {
        Some(sig) => (&data[..start], Some(sig)),
        None => (data, None),
    }
}

impl Section {
    fn to_ref(&self) -> Result<SectionRef> {
        let mut files = Vec::with_capacity(self.files.len());
        for (path, bytes) in &self.files {
            files.push((path.clone(), blob_id(bytes)?));
        }
        Ok(SectionRef {
            projection: self.projection.clone(),
            version: self.version,
            events: self.events,
            max_key: self.max_key,
            files,
        })
    }
}

fn blob_id(bytes: &[u8]) -> Result<ObjectId> {
    gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, bytes)
        .map_err(|e| Error::wrap("hashing a checkpoint file", e))
}

impl Manifest {
    /// The manifest's text: line-based, sorted, the same bytes for the same checkpoint. For a signed
    /// manifest, the bytes its signature covers (the `signature` line is appended by [`write_signed`]).
    pub fn to_text(&self) -> String {
        let mut out = match &self.trust {
            None => format!(
                "{MAGIC} {FORMAT}\nlog {}\ncommit {}\n",
                self.log, self.commit
            ),
            Some(t) => format!(
                "{MAGIC} {FORMAT_SIGNED}\nlog {}\ncommit {}\ntrust {t}\n",
                self.log, self.commit
            ),
        };
        for s in &self.sections {
            out.push_str(&format!("projection {} {}\n", s.projection, s.version));
            out.push_str(&format!("events {}\n", s.events));
            match &s.max_key {
                Some((l, id)) => out.push_str(&format!("max-key {l} {}\n", id.to_hex())),
                None => out.push_str("max-key -\n"),
            }
            for (path, id) in &s.files {
                out.push_str(&format!("file {id} {path}\n"));
            }
        }
        out
    }

    /// Parse a manifest (plain or signed; a signed one's `signature` line is not checked here, see
    /// [`split_signature`]); an error says why it is not one this build can use.
    pub fn parse(text: &[u8]) -> std::result::Result<Manifest, String> {
        let text = std::str::from_utf8(text).map_err(|_| "not UTF-8".to_owned())?;
        let mut lines = text.lines().peekable();
        let head = lines.next().unwrap_or_default();
        let version = head
            .strip_prefix(MAGIC)
            .and_then(|v| v.strip_prefix(' '))
            .ok_or_else(|| "not a checkpoint manifest".to_owned())?;
        let signed = match version {
            v if v == FORMAT.to_string() => false,
            v if v == FORMAT_SIGNED.to_string() => true,
            _ => return Err(format!("unknown checkpoint format {version:?}")),
        };
        let log = lines
            .next()
            .and_then(|l| l.strip_prefix("log "))
            .ok_or("missing log line")?
            .to_owned();
        let commit = lines
            .next()
            .and_then(|l| l.strip_prefix("commit "))
            .and_then(|c| ObjectId::from_hex(c.as_bytes()).ok())
            .ok_or("missing or bad commit line")?;
        let trust = match signed {
            false => None,
            true => Some(
                lines
                    .next()
                    .and_then(|l| l.strip_prefix("trust "))
                    .and_then(|c| ObjectId::from_hex(c.as_bytes()).ok())
                    .ok_or("missing or bad trust line")?,
            ),
        };
        let mut sections: Vec<SectionRef> = Vec::new();
        while let Some(line) = lines.next() {
            let (word, rest) = line.split_once(' ').ok_or(format!("bad line {line:?}"))?;
            match word {
                "signature" if signed && lines.peek().is_none() => {}
                "projection" => {
                    let (name, v) = rest.split_once(' ').ok_or("bad projection line")?;
                    sections.push(SectionRef {
                        projection: name.to_owned(),
                        version: v.parse().map_err(|_| "bad projection version")?,
                        events: 0,
                        max_key: None,
                        files: Vec::new(),
                    });
                }
                "events" => {
                    let s = sections.last_mut().ok_or("events before projection")?;
                    s.events = rest.parse().map_err(|_| "bad event count")?;
                }
                "max-key" => {
                    let s = sections.last_mut().ok_or("max-key before projection")?;
                    s.max_key = match rest.split_once(' ') {
                        None if rest == "-" => None,
                        Some((l, id)) => Some((
                            l.parse().map_err(|_| "bad max-key clock")?,
                            EventId::from_hex(id).ok_or("bad max-key id")?,
                        )),
                        None => return Err("bad max-key line".into()),
                    };
                }
                "file" => {
                    let s = sections.last_mut().ok_or("file before projection")?;
                    let (id, path) = rest.split_once(' ').ok_or("bad file line")?;
                    let id = ObjectId::from_hex(id.as_bytes()).map_err(|_| "bad file id")?;
                    if path.is_empty()
                        || path.starts_with('/')
                        || path
                            .split('/')
                            .any(|c| c.is_empty() || c == "." || c == "..")
                    {
                        return Err(format!("bad file path {path:?}"));
                    }
                    s.files.push((path.to_owned(), id));
                }
                _ => return Err(format!("unknown line {line:?}")),
            }
        }
        Ok(Manifest {
            log,
            commit,
            trust,
            sections,
        })
    }
}

/// The projection `P` of the events reachable from `at`, as checkpoint files: always a full fold of those
/// events (never seeded from another checkpoint), so what is written depends on the events alone. With
/// `authority`, only the events it verifies for their actor are applied (a signed checkpoint's fold; the
/// ids file still holds every event, as a reader's own fold under `jules.requireSigned` writes it).
pub fn build<P: Projection>(
    log: &Log<'_>,
    at: ObjectId,
    mut authority: Option<&mut super::Verifier<'_>>,
) -> Result<Section> {
    let scratch = crate::kit::repo::jules_dir(log.repo).join("tmp");
    std::fs::create_dir_all(&scratch)
        .map_err(|e| Error::wrap(format!("creating {}", scratch.display()), e))?;
    let tmp = tempfile::tempdir_in(&scratch)
        .map_err(|e| Error::wrap("creating a scratch directory", e))?;
    // The same last two components as the cache directory: files are sealed under `<log>/<projection>/`.
    let real = log.cache_dir(P::NAME);
    let dir = tmp
        .path()
        .join(
            real.parent()
                .and_then(|p| p.file_name())
                .unwrap_or_default(),
        )
        .join(P::NAME);
    let tips = [at];
    let mut view = P::empty();
    let r = log.replay(&tips, |e| {
        let allowed = match authority.as_deref_mut() {
            None => true,
            // A commit that cannot be read cannot be verified: no authority (as in a reader's fold).
            Some(v) => v.authorized(e.commit).unwrap_or(false),
        };
        if allowed {
            view.apply(e)
        }
    })?;
    let (max_key, events) = (r.max_key, r.ids.len() as u64);
    log.store(&dir, &view, &tips, max_key, Some(&r.ids), events)?;
    let stamp = Stamp::of(&tips);
    let mut files = Vec::new();
    collect_files(&dir, &dir, &mut files)?;
    files.retain(|(rel, _)| rel != cache::META);
    files.sort();
    let mut sealed = Vec::with_capacity(files.len());
    for (rel, bytes) in files {
        let key = cache::seal_key(&dir, &rel);
        let content = cache::unseal(&key, &bytes)
            .ok_or_else(|| {
                Error::Other(format!("{rel}: a cache file just written fails its seal"))
            })?
            .0;
        sealed.push((rel.clone(), cache::seal(&key, content, &stamp)));
    }
    Ok(Section {
        projection: P::NAME.to_owned(),
        version: P::VERSION,
        events,
        max_key,
        files: sealed,
    })
}

fn collect_files(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::wrap(format!("{}", dir.display()), e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::wrap(format!("{}", dir.display()), e))?;
        let path = entry.path();
        if path.is_dir() {
            collect_files(root, &path, out)?;
        } else {
            let rel = path
                .strip_prefix(root)
                .expect("below root")
                .to_string_lossy()
                .replace('\\', "/");
            let bytes =
                std::fs::read(&path).map_err(|e| Error::wrap(format!("{}", path.display()), e))?;
            out.push((rel, bytes));
        }
    }
    Ok(())
}

/// The manifest a set of sections makes at `at` (nothing is written); `trust` for a signed one.
pub fn manifest(
    log: &Log<'_>,
    at: ObjectId,
    sections: &[Section],
    trust: Option<ObjectId>,
) -> Result<Manifest> {
    let mut refs = Vec::with_capacity(sections.len());
    for s in sections {
        refs.push(s.to_ref()?);
    }
    refs.sort_by(|a, b| a.projection.cmp(&b.projection));
    Ok(Manifest {
        log: log.name().to_owned(),
        commit: at,
        trust,
        sections: refs,
    })
}

/// Write a checkpoint at `at`: the file blobs first (each noted on itself), then the manifest on `at`.
/// Returns the manifest's blob id.
pub fn write(log: &Log<'_>, at: ObjectId, sections: &[Section]) -> Result<ObjectId> {
    write_data(log, sections)?;
    let text = manifest(log, at, sections, None)?.to_text();
    write_manifest(log, NOTES_REF, at, text)
}

/// Write a signed checkpoint at `at` whose sections fold the events verified under the trust file `trust`:
/// the file blobs, then the manifest with the `signature` line `sign` makes over it, on `at` in
/// [`SIGNED_REF`]. Returns the manifest's blob id.
pub fn write_signed(
    log: &Log<'_>,
    at: ObjectId,
    sections: &[Section],
    trust: ObjectId,
    sign: impl FnOnce(&[u8]) -> Result<String>,
) -> Result<ObjectId> {
    write_data(log, sections)?;
    let mut text = manifest(log, at, sections, Some(trust))?.to_text();
    let signature = sign(text.as_bytes())?;
    text.push_str(&format!("{SIGNATURE_LINE}{signature}\n"));
    write_manifest(log, SIGNED_REF, at, text)
}

fn write_manifest(log: &Log<'_>, notes_ref: &str, at: ObjectId, text: String) -> Result<ObjectId> {
    let repo = log.repo;
    crate::store::notes::update_many(
        repo,
        notes_ref,
        &[at],
        |_, _| text.clone().into_bytes(),
        &format!("jules: checkpoint {} at {at}", log.short_name()),
    )?;
    Ok(repo.write_blob(text.as_bytes())?.detach())
}

fn write_data(log: &Log<'_>, sections: &[Section]) -> Result<()> {
    let repo = log.repo;
    let mut contents: HashMap<ObjectId, &[u8]> = HashMap::new();
    for s in sections {
        for (_, bytes) in &s.files {
            contents.insert(blob_id(bytes)?, bytes);
        }
    }
    let mut ids: Vec<ObjectId> = contents.keys().copied().collect();
    ids.sort();
    crate::store::notes::update_many(
        repo,
        DATA_REF,
        &ids,
        |id, _| contents[&id].to_vec(),
        "jules: checkpoint data",
    )?;
    Ok(())
}

/// Every plain manifest this replica holds, local and fetched (`refs/remotes/<r>/notes/jules/checkpoints`):
/// (anchor commit, manifest blob). Where two copies annotate the same commit, the local one wins.
pub fn list(repo: &gix::Repository) -> Result<Vec<(ObjectId, ObjectId)>> {
    list_ref(repo, NOTES_REF)
}

/// [`list`] for the manifests of `notes_ref` ([`NOTES_REF`] or [`SIGNED_REF`]).
pub fn list_ref(repo: &gix::Repository, notes_ref: &str) -> Result<Vec<(ObjectId, ObjectId)>> {
    let mut refs = Vec::new();
    if let Some(t) = crate::store::refs::target(repo, notes_ref)? {
        refs.push(t);
    }
    let suffix = notes_ref.trim_start_matches("refs/");
    for r in repo.references()?.prefixed("refs/remotes/")? {
        let r = r.map_err(|e| Error::wrap("listing remote refs", e))?;
        let name = r.name().as_bstr().to_string();
        if name.ends_with(&format!("/{suffix}")) {
            if let Some(id) = r.target().try_id() {
                refs.push(id.to_owned());
            }
        }
    }
    let mut out: HashMap<ObjectId, ObjectId> = HashMap::new();
    for notes_commit in refs {
        let Ok(commit) = repo.find_commit(notes_commit) else {
            continue;
        };
        let tree = commit.tree_id()?.detach();
        for (object, blob) in crate::store::notes::list(repo, tree)? {
            out.entry(object).or_insert(blob);
        }
    }
    let mut v: Vec<_> = out.into_iter().collect();
    v.sort();
    Ok(v)
}

/// The newest checkpoint anchor reachable from `tips` (the first met walking back from them), with its
/// manifest blob.
pub fn newest(log: &Log<'_>, tips: &[ObjectId]) -> Result<Option<(ObjectId, ObjectId)>> {
    if tips.is_empty() {
        return Ok(None);
    }
    let all: HashMap<ObjectId, ObjectId> = list(log.repo)?.into_iter().collect();
    if all.is_empty() {
        return Ok(None);
    }
    for info in log.repo.rev_walk(tips.iter().copied()).all()? {
        let id = info?.id;
        if let Some(blob) = all.get(&id) {
            return Ok(Some((id, *blob)));
        }
    }
    Ok(None)
}

/// Read and check the manifest in `blob` as one anchored at `at` on `log`.
pub fn read_manifest(log: &Log<'_>, at: ObjectId, blob: ObjectId) -> Result<Manifest> {
    let data = log.repo.find_blob(blob)?.data.clone();
    let m = Manifest::parse(&data).map_err(Error::Other)?;
    if m.trust.is_some() {
        return Err(Error::Other(
            "a signed manifest among the plain ones".into(),
        ));
    }
    check_anchor(log, at, &m).map_err(Error::Other)?;
    Ok(m)
}

fn check_anchor(log: &Log<'_>, at: ObjectId, m: &Manifest) -> std::result::Result<(), String> {
    if m.log != log.name() {
        return Err(format!("a checkpoint of {}, not of {}", m.log, log.name()));
    }
    if m.commit != at {
        return Err(format!(
            "the manifest names {}, but annotates {at}",
            m.commit
        ));
    }
    Ok(())
}

/// The trust roots a signed manifest is judged against: the allowed-signers file and its blob id.
pub type Trust = (crate::store::sign::AllowedSigners, ObjectId);

/// Read the signed manifest in `blob`, anchored at `at` on `log`, and check it as a reader under
/// `jules.requireSigned` with trust roots `trust` must: format, log and anchor, a signature that verifies
/// by a key `trust` allows for checkpoints, and sections folded under that same trust file. Also the state
/// of the signature, when there is one to judge. An error says why the reader may not use it.
pub fn check_signed(
    log: &Log<'_>,
    at: ObjectId,
    blob: ObjectId,
    trust: Option<&Trust>,
) -> (
    std::result::Result<Manifest, String>,
    Option<crate::store::sign::State>,
) {
    let data = match log.repo.find_blob(blob) {
        Ok(b) => b.data.clone(),
        Err(e) => return (Err(format!("manifest {blob} unreadable: {e}")), None),
    };
    let m = match Manifest::parse(&data) {
        Ok(m) if m.trust.is_some() => m,
        Ok(_) => return (Err("a plain manifest among the signed ones".into()), None),
        Err(why) => return (Err(format!("manifest {blob}: {why}")), None),
    };
    if let Err(why) = check_anchor(log, at, &m) {
        return (Err(why), None);
    }
    let (body, Some(signature)) = split_signature(&data) else {
        return (
            Err("unsigned".into()),
            Some(crate::store::sign::State::Unsigned),
        );
    };
    let state =
        crate::store::sign::verdict::check_checkpoint(trust.map(|(t, _)| t), body, signature);
    let verdict = match (&state, trust) {
        (crate::store::sign::State::Verified { .. }, Some((_, id))) if m.trust == Some(*id) => Ok(m),
        (crate::store::sign::State::Verified { .. }, Some((_, id))) => Err(format!(
            "folded under trust file {}, but the trust roots are now {id}",
            m.trust.map(|t| t.to_string()).unwrap_or_default()
        )),
        (crate::store::sign::State::BadSignature, _) => {
            Err("bad signature (the manifest was changed after signing, or is not signed for checkpoints)".into())
        }
        (crate::store::sign::State::KeyNotAllowed { key }, Some(_)) => Err(format!(
            "signed by key {key}, which the trust roots do not allow to sign checkpoints (namespaces=\"{}\")",
            crate::store::sign::CHECKPOINT_NAMESPACE
        )),
        (_, None) => Err("no trust roots to check its signature against".into()),
        (crate::store::sign::State::Unsigned | crate::store::sign::State::UnsignedWithKey { .. }, _) => Err("unsigned".into()),
    };
    (verdict, Some(state))
}

/// What [`seed_cache`] found: the meta of the checkpoint it put in place, and the checkpoint it passed
/// over under `jules.requireSigned` (when it found none to use), for the caller to say.
#[derive(Default)]
pub(crate) struct Seed {
    pub(crate) meta: Option<Meta>,
    pub(crate) passed_over: Option<Ignored>,
}

/// Under `jules.requireSigned`: the newest signed checkpoint reachable from `tips` that this reader may use
/// (see [`check_signed`]), skipping those in `skip`. When there is none but some checkpoint is reachable,
/// the newest one passed over is put in `passed_over`.
fn newest_signed(
    log: &Log<'_>,
    tips: &[ObjectId],
    skip: &[ObjectId],
    passed_over: &mut Option<Ignored>,
) -> Result<Option<(ObjectId, Manifest)>> {
    if tips.is_empty() {
        return Ok(None);
    }
    let signed: HashMap<ObjectId, ObjectId> = list_ref(log.repo, SIGNED_REF)?.into_iter().collect();
    let plain: HashMap<ObjectId, ObjectId> = list(log.repo)?.into_iter().collect();
    if signed.is_empty() && plain.is_empty() {
        return Ok(None);
    }
    // An unusable trust file verifies nothing (the fold itself then fails, naming the line).
    let trust = crate::store::sign::verdict::load_trust(log.repo)
        .ok()
        .flatten();
    let mut passed: Option<(ObjectId, String)> = None;
    for info in log.repo.rev_walk(tips.iter().copied()).all()? {
        let id = info?.id;
        if skip.contains(&id) {
            continue;
        }
        if let Some(blob) = signed.get(&id) {
            match check_signed(log, id, *blob, trust.as_ref()).0 {
                Ok(m) => return Ok(Some((id, m))),
                Err(why) => {
                    passed.get_or_insert((id, why));
                }
            }
        } else if plain.contains_key(&id) {
            passed.get_or_insert((
                id,
                "unsigned (a plain checkpoint folds unverified events too)".into(),
            ));
        }
    }
    if let Some((at, reason)) = passed {
        *passed_over = Some(Ignored {
            log: log.name().to_owned(),
            commit: at.to_string(),
            reason,
        });
    }
    Ok(None)
}

/// With no usable cache in `dir`: put the newest checkpoint of `P` reachable from `tips` there and return
/// its meta, so that an incremental refresh takes it to `tips`. No meta (and an empty `dir`) when there is
/// none this build can use; under `jules.requireSigned`, the checkpoint passed over then.
pub(crate) fn seed_cache<P: Projection>(
    log: &Log<'_>,
    dir: &Path,
    tips: &[ObjectId],
) -> Result<Seed> {
    let mut passed_over = None;
    let found = if crate::store::sign::verdict::require_signed(log.repo) {
        newest_signed(log, tips, &distrusted(dir), &mut passed_over)?.map(|(at, m)| (at, Ok(m)))
    } else {
        match newest(log, tips)? {
            Some((at, _)) if distrusted(dir).contains(&at) => None,
            Some((at, blob)) => Some((at, read_manifest(log, at, blob))),
            None => None,
        }
    };
    let Some((at, manifest)) = found else {
        return Ok(Seed {
            meta: None,
            passed_over,
        });
    };
    let seeded = (|| -> Result<Option<Meta>> {
        let m = manifest?;
        let Some(section) = m
            .sections
            .iter()
            .find(|s| s.projection == P::NAME && s.version == P::VERSION)
        else {
            return Ok(None);
        };
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::wrap(format!("creating {}", dir.display()), e))?;
        let stamp = Stamp::of(&[at]);
        // The files are checked (present, sizes) but not inflated: each is read from its blob on first use
        // and its seal checked then, like any cache file's.
        for (rel, id) in &section.files {
            let header = log
                .repo
                .find_header(*id)
                .map_err(|e| Error::wrap(format!("checkpoint file {rel}"), e))?;
            // The ids file holds every folded id: its size must agree with the count.
            if rel == cache::IDS && header.size() != section.events * 32 + cache::SEAL_LEN as u64 {
                return Err(Error::Other(
                    "checkpoint ids do not match its event count".into(),
                ));
            }
        }
        cache::write_pending(dir, log.repo.git_dir(), &section.files)
            .map_err(|e| Error::wrap("writing the pending list", e))?;
        let meta = Meta {
            projection: P::NAME.into(),
            version: P::VERSION,
            tips: vec![at.to_string()],
            max_key: section.max_key.map(|(l, id)| (l, id.to_hex())),
            events: section.events,
        };
        cache::save_json(dir, cache::META, &meta, &stamp)
            .map_err(|e| Error::wrap("writing the cache meta", e))?;
        Ok(Some(meta))
    })();
    match seeded {
        Ok(Some(meta)) => Ok(Seed {
            meta: Some(meta),
            passed_over,
        }),
        _ => {
            let _ = std::fs::remove_dir_all(dir);
            Ok(Seed {
                meta: None,
                passed_over,
            })
        }
    }
}

/// What fsck found about one checkpoint.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CheckpointProblem {
    /// The anchor commit.
    pub commit: String,
    pub problem: String,
}

fn distrust_file(dir: &Path) -> Option<std::path::PathBuf> {
    Some(dir.parent()?.join(format!(
        "{}.distrusted-checkpoints",
        dir.file_name()?.to_string_lossy()
    )))
}

fn distrusted(dir: &Path) -> Vec<ObjectId> {
    distrust_file(dir)
        .and_then(|f| std::fs::read_to_string(f).ok())
        .map(|t| {
            t.lines()
                .filter_map(|l| ObjectId::from_hex(l.as_bytes()).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// A cache in `dir` failed while it was read: if it was seeded from a checkpoint, remember that
/// checkpoint's anchor so that this replica replays instead of seeding from it again (the file lives next
/// to the projection's directory, so clearing the cache keeps it; deleting `.git/jules/` forgets it).
pub fn distrust_seed(dir: &Path) {
    if !dir.join(cache::PENDING).exists() {
        return;
    }
    let Some(meta) = cache::load_json::<Meta>(dir, cache::META) else {
        return;
    };
    let (Some(anchor), Some(file)) = (meta.tips.first(), distrust_file(dir)) else {
        return;
    };
    let mut text = std::fs::read_to_string(&file).unwrap_or_default();
    text.push_str(anchor);
    text.push('\n');
    let _ = cache::write_atomically(&file, text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(trust: Option<ObjectId>) -> Manifest {
        Manifest {
            log: "refs/jules/mail".into(),
            commit: ObjectId::from_hex(&[b'c'; 40]).unwrap(),
            trust,
            sections: vec![SectionRef {
                projection: "stats".into(),
                version: 1,
                events: 3,
                max_key: None,
                files: vec![(
                    "stats.json".into(),
                    ObjectId::from_hex(&[b'f'; 40]).unwrap(),
                )],
            }],
        }
    }

    #[test]
    fn signed_manifests_round_trip_and_split_at_their_signature() {
        let plain = manifest(None);
        let text = plain.to_text();
        assert!(text.starts_with("jules-checkpoint 1\n"));
        assert_eq!(Manifest::parse(text.as_bytes()), Ok(plain));
        assert_eq!(split_signature(text.as_bytes()), (text.as_bytes(), None));
        // A plain manifest has no signature line.
        assert!(Manifest::parse(format!("{text}signature AAAA\n").as_bytes()).is_err());

        let signed = manifest(Some(ObjectId::from_hex(&[b'7'; 40]).unwrap()));
        let body = signed.to_text();
        assert!(body.starts_with("jules-checkpoint 2\n"));
        let text = format!("{body}signature AAAA\n");
        assert_eq!(Manifest::parse(text.as_bytes()), Ok(signed));
        assert_eq!(
            split_signature(text.as_bytes()),
            (body.as_bytes(), Some("AAAA"))
        );
        // The signature is the last line or nothing: a line after it makes the manifest unusable.
        let late = format!("{body}signature AAAA\nevents 4\n");
        assert!(Manifest::parse(late.as_bytes()).is_err());
        // Format 2 without its trust line is not one.
        let no_trust = body.replacen(&format!("trust {}\n", "7".repeat(40)), "", 1);
        assert!(Manifest::parse(no_trust.as_bytes()).is_err());
    }

    #[test]
    fn a_manifest_of_another_format_is_not_read() {
        // A later format (say, format 2's lines and more) is not read as one this build knows.
        let plain = manifest(None).to_text();
        let signed = manifest(Some(ObjectId::from_hex(&[b'7'; 40]).unwrap())).to_text();
        for (text, from) in [
            (&plain, "jules-checkpoint 1"),
            (&signed, "jules-checkpoint 2"),
        ] {
            for v in ["3", "0", "12", "02", ""] {
                let other = text.replacen(from, &format!("jules-checkpoint {v}"), 1);
                assert_eq!(
                    Manifest::parse(other.as_bytes()),
                    Err(format!("unknown checkpoint format {v:?}")),
                    "{from} as {v}"
                );
            }
        }
        let other = plain.replacen("jules-checkpoint 1", "jules-checkpoint", 1);
        assert_eq!(
            Manifest::parse(other.as_bytes()),
            Err("not a checkpoint manifest".to_owned())
        );
    }

    #[test]
    fn max_keys_round_trip_and_a_half_written_one_is_refused() {
        let mut m = manifest(None);
        m.sections[0].max_key = Some((42, EventId::from_hex(&"ab".repeat(32)).unwrap()));
        let text = m.to_text();
        assert!(text.contains(&format!("max-key 42 {}\n", "ab".repeat(32))));
        assert_eq!(Manifest::parse(text.as_bytes()), Ok(m));
        // `-` alone is "no key"; a clock without its id, or any other single word, is no max-key line.
        for bad in ["max-key 42", "max-key x", "max-key --"] {
            let t = text.replacen(&format!("max-key 42 {}", "ab".repeat(32)), bad, 1);
            assert!(Manifest::parse(t.as_bytes()).is_err(), "{bad}");
        }
    }

    /// A manifest's file paths are written below the projection's cache directory by a reader: one that
    /// reaches out of it (absolute, `..`), or names no file (empty, `.`, an empty component), is refused.
    #[test]
    fn file_paths_that_leave_the_cache_directory_are_refused() {
        let text = manifest(None).to_text();
        let with = |path: &str| text.replacen(" stats.json\n", &format!(" {path}\n"), 1);
        assert_eq!(
            Manifest::parse(with("held/keys.bin").as_bytes())
                .unwrap()
                .sections[0]
                .files[0]
                .0,
            "held/keys.bin"
        );
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/..",
            "./x",
            "a/./b",
            ".",
            "a//b",
            "a/",
        ] {
            let err = Manifest::parse(with(bad).as_bytes()).unwrap_err();
            assert_eq!(err, format!("bad file path {bad:?}"), "{bad}");
        }
    }

    use crate::store::eventlog::stats::LogStats;
    use crate::store::eventlog::{Event, NewEvent};

    fn bare() -> (tempfile::TempDir, gix::Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path().join("r.git")).unwrap();
        (dir, repo)
    }

    /// `n` more events by ann on `log`; its tip after them.
    fn append(log: &Log<'_>, n: u64) -> ObjectId {
        for i in 0..n {
            let ev = Event::new("t.x", "ann", serde_json::json!({ "i": i }));
            log.append(NewEvent::new(ev)).unwrap();
        }
        log.local_tip().unwrap().unwrap()
    }

    /// The notes of `notes_ref`: (annotated object, note blob).
    fn notes(repo: &gix::Repository, notes_ref: &str) -> Vec<(ObjectId, ObjectId)> {
        let Some(tip) = crate::store::refs::target(repo, notes_ref).unwrap() else {
            return Vec::new();
        };
        let tree = repo.find_commit(tip).unwrap().tree_id().unwrap().detach();
        crate::store::notes::list(repo, tree).unwrap()
    }

    /// A checkpoint's round trip on a real log: built at a commit (the sealed files, not the meta), written
    /// (every file blob noted on itself, the manifest on the anchor), listed, found from a later tip, read
    /// back as written, and seeded into an empty cache with the anchor's meta.
    #[test]
    fn a_checkpoint_is_written_found_read_back_and_seeded_as_built() {
        let (_d, repo) = bare();
        let log = Log::open(&repo, "t").unwrap();
        let at = append(&log, 3);
        let section = build::<LogStats>(&log, at, None).unwrap();
        let names: Vec<&str> = section.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(names, [cache::IDS, "stats.json"]);
        assert_eq!((section.projection.as_str(), section.events), ("stats", 3));
        // Sealed with the anchor's stamp, whatever tips the scratch fold was stored at.
        let stats = String::from_utf8_lossy(&section.files[1].1).into_owned();
        assert!(stats.contains("\"events\":3"), "{stats}");
        assert!(stats.contains(Stamp::of(&[at]).as_str()), "{stats}");

        let blob = write(&log, at, std::slice::from_ref(&section)).unwrap();
        let data = notes(&repo, DATA_REF);
        assert_eq!(data.len(), 2);
        for (path, bytes) in &section.files {
            let id = blob_id(bytes).unwrap();
            assert!(data.contains(&(id, id)), "{path} noted on itself");
            assert_eq!(&repo.find_blob(id).unwrap().data, bytes);
        }
        assert_eq!(notes(&repo, NOTES_REF), [(at, blob)]);
        assert_eq!(list(&repo).unwrap(), [(at, blob)]);
        assert_eq!(list_ref(&repo, SIGNED_REF).unwrap(), []);

        let tip = append(&log, 2);
        assert_eq!(newest(&log, &[tip]).unwrap(), Some((at, blob)));
        assert_eq!(newest(&log, &[]).unwrap(), None);
        let m = read_manifest(&log, at, blob).unwrap();
        assert_eq!(
            m,
            super::manifest(&log, at, std::slice::from_ref(&section), None).unwrap()
        );
        assert_eq!(m.log, log.name());
        // Anchored elsewhere, or on another log: not this checkpoint.
        assert!(read_manifest(&log, tip, blob).is_err());
        let other = Log::open(&repo, "u").unwrap();
        assert!(read_manifest(&other, at, blob).is_err());

        let dir = log.cache_dir(LogStats::NAME);
        let seed = seed_cache::<LogStats>(&log, &dir, &[tip]).unwrap();
        let meta = seed.meta.expect("seeded");
        assert_eq!(meta.tips, [at.to_string()]);
        assert_eq!((meta.events, meta.version), (3, LogStats::VERSION));
        assert_eq!(
            meta.max_key,
            section.max_key.map(|(l, id)| (l, id.to_hex()))
        );
        assert!(dir.join(cache::PENDING).exists());
        // And a fold from there reads what a full replay reads.
        let loaded = log.project::<LogStats>().unwrap();
        assert_eq!(loaded.view.events, 5);
    }

    /// A signed checkpoint (issue 40) is used only when its signature verifies by a key the reader's trust
    /// roots allow for checkpoints, and it was folded under that same trust file; each refusal says why.
    #[test]
    fn a_signed_checkpoint_is_used_only_under_its_own_trust_file_and_a_checkpoint_key() {
        use crate::store::sign::{self, AllowedSigners, State};
        use ssh_key::{rand_core::OsRng, Algorithm, PrivateKey};
        let (_d, repo) = bare();
        let log = Log::open(&repo, "t").unwrap();
        let at = append(&log, 2);
        let section = build::<LogStats>(&log, at, None).unwrap();
        let key = PrivateKey::random(&mut OsRng, Algorithm::Ed25519).unwrap();
        let public = key.public_key().to_openssh().unwrap();
        let trust_id = ObjectId::from_hex(&[b'7'; 40]).unwrap();
        let blob = write_signed(&log, at, std::slice::from_ref(&section), trust_id, |body| {
            sign::keys::sign_in(&key, sign::CHECKPOINT_NAMESPACE, body)
        })
        .unwrap();
        assert_eq!(list_ref(&repo, SIGNED_REF).unwrap(), [(at, blob)]);
        assert_eq!(list(&repo).unwrap(), []);
        let trust = |line: &str| AllowedSigners::parse(&format!("{line} {public}\n"), "t").unwrap();
        let ci = (trust("ci namespaces=\"git-jules-checkpoint\""), trust_id);

        let (verdict, state) = check_signed(&log, at, blob, Some(&ci));
        let m = verdict.unwrap();
        assert_eq!(m.trust, Some(trust_id));
        assert_eq!(
            m.sections,
            super::manifest(&log, at, std::slice::from_ref(&section), None)
                .unwrap()
                .sections
        );
        assert!(matches!(state, Some(State::Verified { ref persona, .. }) if persona == "ci"));

        let why = |t: Option<&Trust>, at: ObjectId| check_signed(&log, at, blob, t).0.unwrap_err();
        let other_file = (ci.0.clone(), ObjectId::from_hex(&[b'8'; 40]).unwrap());
        assert!(why(Some(&other_file), at).starts_with("folded under trust file 7777"));
        let events_only = (trust("ci namespaces=\"git-jules-event\""), trust_id);
        assert!(why(Some(&events_only), at).starts_with("signed by key SHA256:"));
        assert_eq!(
            why(None, at),
            "no trust roots to check its signature against"
        );
        let later = append(&log, 1);
        assert!(why(Some(&ci), later).starts_with("the manifest names"));

        // A manifest changed after signing, or not signed at all.
        let data = repo.find_blob(blob).unwrap().data.clone();
        let text = String::from_utf8(data).unwrap();
        let forged = repo
            .write_blob(text.replacen("events 2\n", "events 3\n", 1).as_bytes())
            .unwrap()
            .detach();
        let (v, state) = check_signed(&log, at, forged, Some(&ci));
        assert!(v.unwrap_err().starts_with("bad signature"));
        assert_eq!(state, Some(State::BadSignature));
        let (body, _) = split_signature(text.as_bytes());
        let unsigned = repo.write_blob(body).unwrap().detach();
        let (v, state) = check_signed(&log, at, unsigned, Some(&ci));
        assert_eq!(v.unwrap_err(), "unsigned");
        assert_eq!(state, Some(State::Unsigned));

        // Plain and signed manifests are not taken for one another.
        assert_eq!(
            read_manifest(&log, at, blob).unwrap_err().to_string(),
            "a signed manifest among the plain ones"
        );
        let plain = write(&log, at, &[section]).unwrap();
        assert_eq!(
            check_signed(&log, at, plain, Some(&ci)).0.unwrap_err(),
            "a plain manifest among the signed ones"
        );
    }

    /// A checkpoint whose seeded cache failed is remembered next to the cache and not seeded from again; a
    /// cache that was not seeded names no checkpoint. A checkpoint whose ids file disagrees with its event
    /// count, or of another projection version, seeds nothing and leaves no directory behind.
    #[test]
    fn a_distrusted_or_inconsistent_checkpoint_seeds_nothing() {
        let (_d, repo) = bare();
        let log = Log::open(&repo, "t").unwrap();
        let at = append(&log, 3);
        let section = build::<LogStats>(&log, at, None).unwrap();
        write(&log, at, std::slice::from_ref(&section)).unwrap();
        let tip = append(&log, 1);
        let dir = log.cache_dir(LogStats::NAME);
        let seed = || seed_cache::<LogStats>(&log, &dir, &[tip]).unwrap().meta;
        assert!(seed().is_some());
        // As `project_locked` does when the seeded cache fails.
        distrust_seed(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(distrusted(&dir), [at]);
        assert!(seed().is_none());
        assert!(!dir.exists());

        // A fold of its own (no pending list): nothing to distrust.
        let other = Log::open(&repo, "u").unwrap();
        append(&other, 1);
        other.project::<LogStats>().unwrap();
        let own = other.cache_dir(LogStats::NAME);
        assert!(own.join(cache::META).exists());
        distrust_seed(&own);
        assert!(distrusted(&own).is_empty());

        for (events, version) in [(4, LogStats::VERSION), (2, LogStats::VERSION), (3, 99)] {
            let (_d, repo) = bare();
            let log = Log::open(&repo, "t").unwrap();
            let at = append(&log, 3);
            let mut s = build::<LogStats>(&log, at, None).unwrap();
            (s.events, s.version) = (events, version);
            write(&log, at, &[s]).unwrap();
            let dir = log.cache_dir(LogStats::NAME);
            let seeded = seed_cache::<LogStats>(&log, &dir, &[at]).unwrap();
            assert!(seeded.meta.is_none(), "{events} events, version {version}");
            assert!(!dir.exists());
        }
    }

    /// Under `jules.requireSigned` a cache is seeded only from a signed checkpoint that passes
    /// [`check_signed`] under the trust file at `jules.trust.ref`: the newest usable one reachable from the
    /// tips, not a distrusted one; when none is usable, the newest one passed over comes back with why.
    #[test]
    fn under_require_signed_only_a_usable_signed_checkpoint_seeds() {
        use crate::store::sign::{self, verdict};
        use ssh_key::{rand_core::OsRng, Algorithm, PrivateKey};
        let (d, repo) = bare();
        let key = PrivateKey::random(&mut OsRng, Algorithm::Ed25519).unwrap();
        let line = format!(
            "ci namespaces=\"git-jules-checkpoint\" {}\n",
            key.public_key().to_openssh().unwrap()
        );
        // The trust file on `main`, then `jules.requireSigned = true`.
        let file = crate::store::sign::commit_trust_on_main(&repo, &line);
        let config = d.path().join("r.git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[jules]\n\trequireSigned = true\n");
        std::fs::write(&config, text).unwrap();
        let repo = gix::open(d.path().join("r.git")).unwrap();
        assert!(verdict::require_signed(&repo));
        let (_, trust_id) = verdict::load_trust(&repo).unwrap().unwrap();
        assert_eq!(trust_id, file);

        let log = Log::open(&repo, "t").unwrap();
        let dir = log.cache_dir(LogStats::NAME);
        let seed = |tips: &[ObjectId]| {
            let s = seed_cache::<LogStats>(&log, &dir, tips).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            (
                s.meta.map(|m| m.tips),
                s.passed_over.map(|i| (i.commit, i.reason)),
            )
        };
        let signed = |at: ObjectId, trust: ObjectId| {
            let s = build::<LogStats>(&log, at, None).unwrap();
            write_signed(&log, at, &[s], trust, |body| {
                sign::keys::sign_in(&key, sign::CHECKPOINT_NAMESPACE, body)
            })
            .unwrap();
        };
        let a = append(&log, 2);
        assert_eq!(seed(&[a]), (None, None), "no checkpoint at all");
        let s = build::<LogStats>(&log, a, None).unwrap();
        write(&log, a, &[s]).unwrap();
        let unsigned = "unsigned (a plain checkpoint folds unverified events too)".to_owned();
        assert_eq!(seed(&[a]), (None, Some((a.to_string(), unsigned.clone()))));
        assert_eq!(seed(&[]), (None, None));

        let b = append(&log, 1);
        signed(b, ObjectId::from_hex(&[b'8'; 40]).unwrap());
        let c = append(&log, 1);
        let (none, passed) = seed(&[c]);
        assert_eq!(none, None);
        let (at, why) = passed.unwrap();
        assert_eq!(at, b.to_string(), "the newest passed over");
        assert!(why.starts_with("folded under trust file 8888"), "{why}");

        signed(c, file);
        let tip = append(&log, 1);
        assert_eq!(seed(&[tip]), (Some(vec![c.to_string()]), None));
        // Seeded from and failed: the next newest is the one passed over.
        assert!(seed_cache::<LogStats>(&log, &dir, &[tip])
            .unwrap()
            .meta
            .is_some());
        distrust_seed(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        let (none, passed) = seed(&[tip]);
        assert_eq!(none, None);
        assert_eq!(passed.unwrap().0, b.to_string());
    }
}
