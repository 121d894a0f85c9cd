//! Versions of a series on refs: every `series format` (and `series version`) records an immutable version
//! commit on `refs/jules/series/<persona>/<name>`, so any clone that fetched the ref can list, show and compare
//! every version (`docs/format.md`, "Series versions").
//!
//! One persona writes one ref (no fold, no shared mutable ref): the ref only ever fast-forwards, each version
//! commit's first parent is the previous version and its last parent the series tip, so plain push, fetch and
//! gc keep every version and every patch of it alive. Readers take the local ref and every remote-tracking copy
//! (`refs/remotes/<remote>/jules/series/…`, which `git fetch` and `git jules sync` write) and use the longest
//! valid chain; a ref that does not point at a version commit is skipped and named, like a forged log ref.
//!
//! Each version commit is signed by its persona's key when one is configured (`crate::store::version_refs`, the
//! signed payload; docs/format.md). Where the repository has trust roots or `jules.requireSigned`, every
//! version read carries its signature state (`signature`), so reads mark what is not the persona's; under
//! `jules.requireSigned` a ref whose versions are not all verified is skipped and named, as a forged one is.

use std::collections::{BTreeMap, HashMap};

use gix::bstr::ByteSlice;
use gix::ObjectId;
use serde::Serialize;

use super::rangediff;
use crate::kit::error::{Error, ErrorKind, Remedy, Result};

pub use super::commit::{change_id_of, keep_change_id, new_change_id, with_trailer, CHANGE_ID};
pub use crate::store::version_refs::{
    publish, BaseRecord, Record, Skipped, VersionPatch, COVER_FILE, FORMAT, PREFIX, RECORD_FILE,
};

/// `refs/jules/series/<persona>/<name>`.
pub fn ref_name(persona: &str, name: &str) -> String {
    format!("{PREFIX}{persona}/{name}")
}

/// A series' identity across clones: `PERSONA/NAME`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesId {
    pub persona: String,
    pub name: String,
}

impl std::fmt::Display for SeriesId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.persona, self.name)
    }
}

/// `PERSONA/NAME[@vN]`, parsed.
pub fn parse_spec(spec: &str) -> Result<(SeriesId, Option<u32>)> {
    let (id, version) = match spec.rsplit_once('@') {
        Some((id, v)) => (id, Some(parse_version(v)?)),
        None => (spec, None),
    };
    let Some((persona, name)) = id.split_once('/') else {
        return Err(Error::usage(format!(
            "{spec:?} does not name a series version: write PERSONA/NAME or PERSONA/NAME@vN"
        )));
    };
    crate::kit::names::validate_name("persona", persona)?;
    crate::kit::names::validate_name("series", name)?;
    Ok((
        SeriesId {
            persona: persona.to_owned(),
            name: name.to_owned(),
        },
        version,
    ))
}

/// `vN` or `N`, N from 1.
pub fn parse_version(v: &str) -> Result<u32> {
    v.strip_prefix('v')
        .unwrap_or(v)
        .parse::<u32>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| Error::usage(format!("{v:?} is not a version: write vN (v1, v2, …)")))
}

/// A version as read from a ref: its record, cover letter and commit.
#[derive(Debug, Clone, Serialize)]
pub struct Version {
    #[serde(serialize_with = "crate::kit::id::ser_oid")]
    pub id: ObjectId,
    #[serde(flatten)]
    pub record: Record,
    pub cover: String,
    /// RFC 3339: when it was recorded.
    pub date: String,
    /// The signature under the trust roots (`crate::store::sign::State`); `null` where nothing is verified (no trust
    /// file and no `jules.requireSigned`).
    pub signature: Option<crate::store::sign::State>,
}

impl Version {
    /// Whether this version may be taken as its persona's: verified, or nothing is verified here.
    pub fn is_verified(&self) -> bool {
        self.signature.as_ref().is_none_or(|s| s.is_verified())
    }

    /// "NOT VERIFIED: …" for human output when the signature is not verified; `None` otherwise.
    pub fn mark(&self) -> Option<String> {
        self.signature
            .as_ref()
            .filter(|s| !s.is_verified())
            .map(|s| format!("NOT VERIFIED: {}", s.describe()))
    }
}

/// How versions are judged in one read: the trust roots (loaded once) and `jules.requireSigned`.
pub struct Judge {
    /// Whether anything is verified at all (a trust file, or `requireSigned`).
    active: bool,
    trust: Option<crate::store::sign::AllowedSigners>,
    require: bool,
}

impl Judge {
    pub fn of(repo: &gix::Repository) -> Result<Judge> {
        let require = crate::store::sign::verdict::require_signed(repo);
        let trust = crate::store::sign::verdict::load_trust(repo)?.map(|(t, _)| t);
        Ok(Judge {
            active: require || trust.is_some(),
            trust,
            require,
        })
    }

    /// A judge that verifies nothing: for reads that only need a version's record (recording the next one
    /// must not fail on a trust file that does not parse; the reads that show versions report that).
    fn blind() -> Judge {
        Judge {
            active: false,
            trust: None,
            require: false,
        }
    }

    /// Why `v` carries no authority here (`jules.requireSigned` and not verified), `None` when it does.
    fn refuses(&self, v: &Version) -> Option<String> {
        match &v.signature {
            Some(s) if self.require && !s.is_verified() => Some(format!(
                "v{} is not verified for {} (jules.requireSigned): {}",
                v.record.number,
                v.record.persona,
                s.describe()
            )),
            _ => None,
        }
    }
}

impl Version {
    pub fn tip(&self) -> Result<ObjectId> {
        oid(&self.record.tip)
    }
    pub fn base(&self) -> Result<ObjectId> {
        oid(&self.record.base.commit)
    }
    pub fn series(&self) -> SeriesId {
        SeriesId {
            persona: self.record.persona.clone(),
            name: self.record.name.clone(),
        }
    }
}

fn oid(hex: &str) -> Result<ObjectId> {
    ObjectId::from_hex(hex.as_bytes()).map_err(|e| Error::wrap(format!("bad object id {hex:?}"), e))
}

/// The version in commit `id`, judged by `judge`; an error says why it is not a version commit.
fn read_version(
    repo: &gix::Repository,
    id: ObjectId,
    judge: &Judge,
) -> std::result::Result<Version, String> {
    let commit = repo
        .find_commit(id)
        .map_err(|_| format!("{id} is not a commit (or is missing)"))?;
    let tree = commit.tree().map_err(|e| format!("its tree: {e}"))?;
    let blob = |file: &str| -> std::result::Result<Vec<u8>, String> {
        let entry = tree
            .find_entry(file)
            .ok_or_else(|| format!("its tree has no {file}"))?;
        let obj = entry.object().map_err(|e| format!("{file}: {e}"))?;
        Ok(obj.data.clone())
    };
    let record_bytes = blob(RECORD_FILE)?;
    let cover_bytes = blob(COVER_FILE).unwrap_or_default();
    let parents: Vec<ObjectId> = commit.parent_ids().map(|p| p.detach()).collect();
    let time = commit.committer().map_or(0, |c| c.seconds());
    let message = commit.message_raw_sloppy();
    let (record, state) = crate::store::version_refs::check_version(
        judge.trust.as_ref(),
        &crate::store::version_refs::VersionCommit {
            message,
            first_parent: parents.first().copied(),
            time,
            record: &record_bytes,
            cover: &cover_bytes,
        },
    )?;
    if record.format != FORMAT {
        return Err(format!(
            "{RECORD_FILE} has format {}, not {FORMAT}",
            record.format
        ));
    }
    let cover = String::from_utf8_lossy(&cover_bytes).into_owned();
    if parents.last().map(|p| p.to_string()) != Some(record.tip.clone()) {
        return Err("its last parent is not the series tip its record names".into());
    }
    let expected_parents = if record.number == 1 { 1 } else { 2 };
    if parents.len() != expected_parents {
        return Err(format!(
            "version {} must have {expected_parents} parent(s), it has {}",
            record.number,
            parents.len()
        ));
    }
    let date = commit
        .time()
        .map(|t| t.format_or_unix(gix::date::time::format::ISO8601_STRICT))
        .unwrap_or_default();
    Ok(Version {
        id,
        record,
        cover,
        date,
        signature: judge.active.then_some(state),
    })
}

/// The previous version of `v` (its first parent), when it has one.
fn previous_id(repo: &gix::Repository, v: &Version) -> Result<Option<ObjectId>> {
    if v.record.number == 1 {
        return Ok(None);
    }
    Ok(repo
        .find_commit(v.id)?
        .parent_ids()
        .next()
        .map(|p| p.detach()))
}

/// Every version of the chain ending at `tip`, oldest first; an error naming the first bad link.
fn chain(
    repo: &gix::Repository,
    tip: ObjectId,
    judge: &Judge,
) -> std::result::Result<Vec<Version>, String> {
    let mut out = Vec::new();
    let mut next = Some(tip);
    while let Some(id) = next {
        let v = read_version(repo, id, judge)?;
        if let Some(why) = judge.refuses(&v) {
            return Err(why);
        }
        if let Some(later) = out.last() {
            let later: &Version = later;
            if v.record.number + 1 != later.record.number
                || v.record.persona != later.record.persona
                || v.record.name != later.record.name
            {
                return Err(format!(
                    "version {} does not follow version {} of the same series",
                    later.record.number, v.record.number
                ));
            }
        }
        next = previous_id(repo, &v).map_err(|e| format!("{e:#}"))?;
        out.push(v);
    }
    out.reverse();
    Ok(out)
}

/// Every ref holding versions of some series, local first then remote-tracking: (series, ref name, tip).
fn candidate_refs(repo: &gix::Repository) -> Result<Vec<(SeriesId, String, ObjectId)>> {
    let mut out = Vec::new();
    for r in repo.references()?.all()? {
        let r = r.map_err(|e| Error::wrap("listing refs", e))?;
        let name = r.name().as_bstr().to_string();
        let rest = if let Some(rest) = name.strip_prefix(PREFIX) {
            rest.to_owned()
        } else if let Some(after) = name.strip_prefix("refs/remotes/") {
            match after.split_once("/jules/series/") {
                Some((remote, rest)) if !remote.contains('/') => rest.to_owned(),
                _ => continue,
            }
        } else {
            continue;
        };
        let Some((persona, series)) = rest.split_once('/') else {
            continue;
        };
        let Some(id) = r.target().try_id().map(|i| i.to_owned()) else {
            continue;
        };
        out.push((
            SeriesId {
                persona: persona.to_owned(),
                name: series.to_owned(),
            },
            name,
            id,
        ));
    }
    out.sort_by_key(|(s, n, _)| (s.clone(), !n.starts_with(PREFIX), n.clone()));
    Ok(out)
}

/// Every series with versions, each with its latest version and the ref it was read from, and the refs
/// that were skipped.
#[derive(Debug, Default)]
pub struct Catalog {
    pub series: BTreeMap<SeriesId, (Version, String)>,
    pub skipped: Vec<Skipped>,
}

/// Read the latest version of every series from the local and remote-tracking refs. A series seen under
/// several refs takes the highest version (one writer's ref only fast-forwards, so that one holds the rest).
/// Only the tips are read: listing stays one object read per ref.
pub fn catalog(repo: &gix::Repository) -> Result<Catalog> {
    catalog_with(repo, &Judge::of(repo)?)
}

/// [`catalog`] with the trust roots already read. Under `jules.requireSigned` a ref whose latest version
/// is not verified is skipped and named (its earlier versions are reached through it only, and its writer
/// would have had to sign the latest too).
fn catalog_with(repo: &gix::Repository, judge: &Judge) -> Result<Catalog> {
    let mut cat = Catalog::default();
    for (series, name, tip) in candidate_refs(repo)? {
        match read_version(repo, tip, judge) {
            Ok(v) if judge.refuses(&v).is_some() => {
                let why = judge.refuses(&v).unwrap_or_default();
                cat.skipped.push(Skipped { name, reason: why });
            }
            Ok(v) if v.record.persona != series.persona || v.record.name != series.name => {
                cat.skipped.push(Skipped {
                    name,
                    reason: format!("it holds a version of {}, not of {series}", v.series()),
                });
            }
            Ok(v) => {
                let have = cat.series.get(&series).map_or(0, |(h, _)| h.record.number);
                if v.record.number > have {
                    cat.series.insert(series, (v, name));
                }
            }
            Err(reason) => cat.skipped.push(Skipped {
                name,
                reason: format!("not a series version: {reason}"),
            }),
        }
    }
    Ok(cat)
}

/// The versions of one series, oldest first; not-found names the series, a forged ref says what it is.
pub fn versions(repo: &gix::Repository, series: &SeriesId) -> Result<Vec<Version>> {
    let judge = Judge::of(repo)?;
    let mut cat = catalog_with(repo, &judge)?;
    if let Some((latest, name)) = cat.series.remove(series) {
        return chain(repo, latest.id, &judge)
            .map_err(|why| Error::usage(format!("{name}: {why}")));
    }
    let suffix = format!("/jules/series/{series}");
    let forged = cat
        .skipped
        .iter()
        .find(|s| s.name.ends_with(&suffix) || s.name == ref_name(&series.persona, &series.name));
    match forged {
        Some(s) => Err(Error::usage(format!("{}: {}", s.name, s.reason))),
        None => Err(Error::not_found(
            crate::kit::error::Thing::Series,
            format!(
                "{series} (no refs/jules/series/{series} here; `git jules sync` or `git fetch` brings other clones' series)"
            ),
        )),
    }
}

/// `series list --all`: every persona's series, latest version first read, with verify counts.
pub fn list_all(
    repo: &gix::Repository,
    command: Option<&str>,
) -> Result<(Vec<Listed>, Vec<Skipped>)> {
    let cat = catalog(repo)?;
    let key = command.map(crate::capabilities::verify::cache::command_key);
    let mut cache = crate::capabilities::verify::cache::Cache::open(repo)?;
    let mut out = Vec::new();
    for (id, (latest, name)) in cat.series {
        let verify = match &key {
            None => None,
            Some(k) => {
                let mut counts: BTreeMap<String, usize> = BTreeMap::new();
                for p in &latest.record.patches {
                    let word = match oid(&p.commit)
                        .ok()
                        .and_then(|c| repo.find_commit(c).ok())
                        .and_then(|c| c.tree_id().ok().map(|t| t.detach()))
                    {
                        None => "missing",
                        Some(tree) => match cache.get(repo, tree, k)?.map(|e| e.result) {
                            Some(crate::capabilities::verify::cache::Verdict::Pass) => "pass",
                            Some(crate::capabilities::verify::cache::Verdict::Fail) => "fail",
                            None => "unverified",
                        },
                    };
                    *counts.entry(word.to_owned()).or_default() += 1;
                }
                Some(counts)
            }
        };
        out.push(Listed {
            series: id.to_string(),
            persona: id.persona.clone(),
            name: id.name.clone(),
            versions: latest.record.number,
            latest,
            ref_name: name,
            verify,
        });
    }
    Ok((out, cat.skipped))
}

/// Version `n` (default: the latest) of a series.
pub fn find(repo: &gix::Repository, series: &SeriesId, n: Option<u32>) -> Result<Version> {
    let mut all = versions(repo, series)?;
    let latest = all.len() as u32;
    let n = n.unwrap_or(latest);
    if n == 0 || n > latest {
        return Err(Error::not_found(
            crate::kit::error::Thing::SeriesVersion,
            format!("{series}@v{n} (it has v1 to v{latest})"),
        ));
    }
    Ok(all.swap_remove(n as usize - 1))
}

/// Refuse a version whose patches are not in this clone, saying what to fetch.
pub fn require_objects(repo: &gix::Repository, v: &Version) -> Result<()> {
    for hex in [&v.record.tip, &v.record.base.commit] {
        let id = oid(hex)?;
        if !repo.has_object(id) {
            return Err(Error::usage(format!(
                "{}@v{}: commit {id} is missing here; fetch it (`git jules sync`, or `git fetch REMOTE {}`)",
                v.series(),
                v.record.number,
                ref_name(&v.record.persona, &v.record.name)
            )));
        }
    }
    Ok(())
}

/// The patches of a recorded version, formatted (for review), as series `NAME` on `PERSONA/NAME@vN`.
pub fn collect(
    repo: &gix::Repository,
    v: &Version,
    only: Option<usize>,
) -> Result<super::format::Formatted> {
    require_objects(repo, v)?;
    let base = super::Base {
        name: v.record.base.name.clone(),
        commit: v.base()?,
        source: super::BaseSource::Version,
    };
    super::format::collect_range(repo, v.record.name.clone(), label(v), base, v.tip()?, only)
}

/// `PERSONA/NAME@vN`.
pub fn label(v: &Version) -> String {
    format!("{}@v{}", v.series(), v.record.number)
}

/// The recorded version (of any persona) whose base and tip are these, for series `name`: what a review of
/// the local branch is about. The latest such version wins.
pub fn naming(
    repo: &gix::Repository,
    name: &str,
    base: ObjectId,
    tip: ObjectId,
) -> Result<Option<Version>> {
    let cat = catalog(repo)?;
    let (tip, base) = (tip.to_string(), base.to_string());
    for (id, (latest, _)) in cat.series.iter().filter(|(id, _)| id.name == name) {
        if latest.record.tip == tip && latest.record.base.commit == base {
            return Ok(Some(latest.clone()));
        }
        if let Ok(all) = versions(repo, id) {
            if let Some(v) = all
                .into_iter()
                .rev()
                .find(|v| v.record.tip == tip && v.record.base.commit == base)
            {
                return Ok(Some(v));
            }
        }
    }
    Ok(None)
}

/// The review comments on one patch of a version.
#[derive(Debug, Clone, Serialize)]
pub struct PatchReviews {
    pub patch: usize,
    pub notes: Vec<super::review::NoteLine>,
}

/// The review notes (`refs/notes/jules/review`, as synced) on the patches of `v`: each patch's commit's
/// notes, which name the version they were written about when the reviewer had it.
pub fn reviews(repo: &gix::Repository, v: &Version) -> Result<Vec<PatchReviews>> {
    let mut out = Vec::new();
    for p in &v.record.patches {
        let Ok(commit) = oid(&p.commit) else { continue };
        let notes = super::review::notes_of(repo, commit)?;
        if !notes.is_empty() {
            out.push(PatchReviews {
                patch: p.index,
                notes,
            });
        }
    }
    Ok(out)
}

/// Whether `persona`'s latest local version of series `name` has review comments about it (notes naming it,
/// or naming no version, on its patches): a reroll then records the next version.
pub fn latest_was_reviewed(repo: &gix::Repository, persona: &str, name: &str) -> Result<bool> {
    let Some(tip) = crate::store::refs::target(repo, &ref_name(persona, name))? else {
        return Ok(false);
    };
    let Ok(v) = read_version(repo, tip, &Judge::blind()) else {
        return Ok(false);
    };
    let me = label(&v);
    Ok(reviews(repo, &v)?.iter().any(|r| {
        r.notes
            .iter()
            .any(|n| n.series_version.as_deref().is_none_or(|s| s == me))
    }))
}

/// What `record` did.
#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    pub series: String,
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// False when the latest version already had this base, tip and cover: nothing was written.
    pub recorded: bool,
    #[serde(flatten)]
    pub version: Version,
}

/// Record the series `name` (default: the one HEAD is on) of `persona` as its next version, unless the
/// latest version already is this base, tip and cover letter.
pub fn record(
    repo: &gix::Repository,
    persona: &str,
    name: Option<&str>,
    explicit_base: Option<&str>,
) -> Result<Recorded> {
    crate::kit::names::validate_name("persona", persona)?;
    let f = super::format::collect(repo, name, explicit_base, None)?;
    let refname = ref_name(persona, &f.series);
    let series = SeriesId {
        persona: persona.to_owned(),
        name: f.series.clone(),
    };
    let cover = f.cover_markdown();
    let old_tip = crate::store::refs::target(repo, &refname)?;
    // The state of what is recorded is shown when the trust roots can be read; recording never depends on them.
    let judge = Judge::of(repo).unwrap_or_else(|_| Judge::blind());
    let previous = match old_tip {
        Some(t) => Some(read_version(repo, t, &judge).map_err(|why| {
            Error::usage(format!(
                "{refname} does not point at a series version ({why}); move it away before recording"
            ))
        })?),
        None => None,
    };
    if let Some(p) = &previous {
        if p.tip()? == f.tip && p.base()? == f.base.commit && p.cover == cover {
            return Ok(Recorded {
                series: series.to_string(),
                ref_name: refname,
                recorded: false,
                version: p.clone(),
            });
        }
    }
    let messages: Vec<&str> = f.patches.iter().map(|p| p.message.as_str()).collect();
    let ids: Vec<Option<String>> = messages.iter().map(|m| change_id_of(m)).collect();
    let (mapping, dropped) = match &previous {
        Some(p) => map_previous(repo, p, f.base.commit, f.tip, &ids)?,
        None => (vec![None; f.patches.len()], Vec::new()),
    };
    let patches: Vec<VersionPatch> = f
        .patches
        .iter()
        .zip(&ids)
        .zip(&mapping)
        .map(|((p, id), prev)| VersionPatch {
            index: p.index,
            commit: p.commit.to_string(),
            change_id: id
                .clone()
                .or_else(|| {
                    prev.and_then(|i| {
                        previous
                            .as_ref()
                            .map(|v| v.record.patches[i - 1].change_id.clone())
                    })
                })
                .unwrap_or_else(|| format!("I{}", p.commit)),
            summary: p.summary.clone(),
            previous: *prev,
        })
        .collect();
    let number = previous.as_ref().map_or(1, |p| p.record.number + 1);
    let rec = Record {
        format: FORMAT,
        persona: persona.to_owned(),
        name: f.series.clone(),
        number,
        base: BaseRecord {
            name: f.base.name.clone(),
            commit: f.base.commit.to_string(),
        },
        tip: f.tip.to_string(),
        patches,
        dropped,
    };
    let json = serde_json::to_string_pretty(&rec)
        .map_err(|e| Error::wrap(format!("encoding {RECORD_FILE}"), e))?;
    let rec_bytes = format!("{json}\n");
    let rec_blob = repo.write_blob(rec_bytes.as_bytes())?.detach();
    let cover_blob = repo.write_blob(cover.as_bytes())?.detach();
    let mut entries = vec![
        gix::objs::tree::Entry {
            mode: gix::objs::tree::EntryKind::Blob.into(),
            filename: COVER_FILE.into(),
            oid: cover_blob,
        },
        gix::objs::tree::Entry {
            mode: gix::objs::tree::EntryKind::Blob.into(),
            filename: RECORD_FILE.into(),
            oid: rec_blob,
        },
    ];
    entries.sort_by(|a, b| a.filename.cmp(&b.filename));
    let tree = repo.write_object(&gix::objs::Tree { entries })?.detach();
    let time = crate::kit::repo::now_time();
    let sig = crate::kit::repo::persona_signature(persona, time);
    let mut parents: Vec<ObjectId> = old_tip.into_iter().collect();
    parents.push(f.tip);
    // Signed by the persona's key when it has one (the payload binds the ref, number, previous version and
    // time, see `crate::store::version_refs::signed_payload`): without it, any clone could publish in its name.
    let payload = crate::store::version_refs::signed_payload(
        &rec,
        old_tip,
        time.seconds,
        rec_bytes.as_bytes(),
        cover.as_bytes(),
    );
    let signature = crate::store::sign::keys::sign_series(repo, persona, &payload)?
        .map(|s| format!("{}{s}\n", crate::store::sign::SIGNATURE_TRAILER))
        .unwrap_or_default();
    let commit = gix::objs::Commit {
        tree,
        parents: parents.into_iter().collect(),
        author: sig.clone(),
        committer: sig,
        encoding: None,
        message: format!(
            "series {series} v{number}\n\nJules-Series: {series}\nJules-Series-Version: {number}\n{signature}"
        )
        .into(),
        extra_headers: Vec::new(),
    };
    let id = repo.write_object(&commit)?.detach();
    if !crate::store::refs::cas(
        repo,
        &refname,
        old_tip,
        id,
        &format!("series: record {series} v{number}"),
    )? {
        return Err(Error::Conflict(format!(
            "{refname} moved while recording v{number}; nothing was recorded, try again"
        )));
    }
    let version = read_version(repo, id, &judge).map_err(Error::Other)?;
    Ok(Recorded {
        series: series.to_string(),
        ref_name: refname,
        recorded: true,
        version,
    })
}

/// Pair the new patches with the previous version's: equal change ids first, then range-diff pairing of
/// what is left. Returns each new patch's previous index (1-based) and the previous patches left unpaired.
fn map_previous(
    repo: &gix::Repository,
    prev: &Version,
    base: ObjectId,
    tip: ObjectId,
    ids: &[Option<String>],
) -> Result<(Vec<Option<usize>>, Vec<usize>)> {
    let mut mapping: Vec<Option<usize>> = vec![None; ids.len()];
    let mut taken = vec![false; prev.record.patches.len()];
    let by_id: HashMap<&str, usize> = prev
        .record
        .patches
        .iter()
        .enumerate()
        .map(|(i, p)| (p.change_id.as_str(), i))
        .collect();
    for (j, id) in ids.iter().enumerate() {
        if let Some(&i) = id.as_deref().and_then(|id| by_id.get(id)) {
            if !taken[i] {
                taken[i] = true;
                mapping[j] = Some(i + 1);
            }
        }
    }
    let rest_new: Vec<usize> = (0..ids.len()).filter(|j| mapping[*j].is_none()).collect();
    let rest_old: Vec<usize> = (0..taken.len()).filter(|i| !taken[*i]).collect();
    if !rest_new.is_empty() && !rest_old.is_empty() && repo.has_object(prev.tip()?) {
        let (a, b) = rangediff::patch_texts_of_two(repo, (prev.base()?, prev.tip()?), (base, tip))?;
        if a.len() == prev.record.patches.len() && b.len() == ids.len() {
            let a_sub: Vec<_> = rest_old.iter().map(|&i| a[i].clone()).collect();
            let b_sub: Vec<_> = rest_new.iter().map(|&j| b[j].clone()).collect();
            let p = rangediff::pair(&a_sub, &b_sub, rangediff::CREATION_FACTOR);
            for (bj, ai) in p.b_to_a.iter().enumerate() {
                if let Some(ai) = ai {
                    let i = rest_old[*ai];
                    taken[i] = true;
                    mapping[rest_new[bj]] = Some(i + 1);
                }
            }
        }
    }
    let dropped = (0..taken.len())
        .filter(|i| !taken[*i])
        .map(|i| i + 1)
        .collect();
    Ok((mapping, dropped))
}

/// One line of `series list --all`.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub series: String,
    pub persona: String,
    pub name: String,
    pub versions: u32,
    pub latest: Version,
    /// The ref the versions were read from.
    #[serde(rename = "ref")]
    pub ref_name: String,
    /// Counts of the latest version's patches by cached verify result (`pass`, `fail`, `unverified`), or
    /// `null` without a verify command.
    pub verify: Option<BTreeMap<String, usize>>,
}

/// The range-diff of two versions.
#[derive(Debug, Clone, Serialize)]
pub struct RangeDiff {
    pub series: String,
    pub old_version: u32,
    pub new_version: u32,
    /// The older version was replayed onto the newer base first (`--rebase`, when the bases differ); its
    /// commits in `entries` are then the replayed ones.
    pub rebased: bool,
    pub creation_factor: i32,
    /// The two versions' signatures (`null` where nothing is verified), so a comparison of versions that
    /// are not their persona's says so.
    pub old_signature: Option<crate::store::sign::State>,
    pub new_signature: Option<crate::store::sign::State>,
    pub entries: Vec<rangediff::Entry>,
    /// Each entry's header line, as `git range-diff` prints it.
    #[serde(skip)]
    pub headers: Vec<String>,
}

/// `old`'s patches replayed onto `onto` (the newer version's base) with the rewrite engine, no ref moved:
/// the new tip. The replayed commits are written as unreferenced objects, for `git log` to read.
fn replay_onto(repo: &gix::Repository, old: &Version, onto: ObjectId) -> Result<ObjectId> {
    use super::rewrite::{replay, Original, Step, Stop};
    let patches = super::patches(repo, old.base()?, old.tip()?)?;
    let originals = Original::read_all(repo, &patches)?;
    let steps: Vec<Step> = (1..=originals.len()).map(Step::pick).collect();
    let onto_tree = repo.find_commit(onto)?.tree_id()?.detach();
    let committer = crate::kit::repo::committer(repo);
    match replay(repo, onto, onto_tree, &originals, &steps, &committer)? {
        Ok(picked) => Ok(picked.last().map_or(onto, |p| p.commit)),
        Err(Stop::Conflict { from, paths, .. }) => Err(Error::needs(
            ErrorKind::Conflict,
            format!(
                "{}@v{}: patch {from} conflicts when replayed onto the newer base ({})",
                old.series(),
                old.record.number,
                paths.join(", ")
            ),
            Remedy::NoRebase,
        )),
        Err(Stop::Empty { from, .. }) => Err(Error::needs(
            ErrorKind::Conflict,
            format!(
                "{}@v{}: patch {from} is already in the newer base",
                old.series(),
                old.record.number
            ),
            Remedy::NoRebase,
        )),
    }
}

/// Range-diff `old` and `new` (two versions of one series). With `rebase`, `old` is first replayed onto
/// `new`'s base, so that upstream changes between the two bases do not show as changes of the patches.
pub fn range_diff(
    repo: &gix::Repository,
    old: &Version,
    new: &Version,
    creation_factor: i32,
    with_diff: bool,
    rebase: bool,
) -> Result<RangeDiff> {
    require_objects(repo, old)?;
    require_objects(repo, new)?;
    let (mut ob, mut ot, nb, nt) = (old.base()?, old.tip()?, new.base()?, new.tip()?);
    let rebased = rebase && ob != nb;
    if rebased {
        ot = replay_onto(repo, old, nb)?;
        ob = nb;
    }
    let (a, b) = rangediff::patch_texts_of_two(repo, (ob, ot), (nb, nt))?;
    let pairing = rangediff::pair(&a, &b, creation_factor);
    let entries = rangediff::entries(&a, &b, &pairing, with_diff);
    let width = rangediff::number_width(a.len(), b.len());
    let short = |id: ObjectId| -> String {
        repo.find_object(id)
            .map(|o| o.id().shorten_or_id().to_string())
            .unwrap_or_else(|_| id.to_hex_with_len(7).to_string())
    };
    let mut headers = Vec::new();
    for e in &entries {
        let c = e.old_commit.or(e.new_commit).expect("one side");
        let summary = repo
            .find_commit(c)
            .ok()
            .and_then(|c| {
                c.message()
                    .ok()
                    .map(|m| m.summary().to_str_lossy().into_owned())
            })
            .unwrap_or_default();
        headers.push(rangediff::header_line(e, width, &short, &summary));
    }
    Ok(RangeDiff {
        series: new.series().to_string(),
        old_version: old.record.number,
        new_version: new.record.number,
        rebased,
        creation_factor,
        old_signature: old.signature.clone(),
        new_signature: new.signature.clone(),
        entries,
        headers,
    })
}

/// The interdiff of two versions: the diff from the older tip's tree to the newer one's.
#[derive(Debug, Clone, Serialize)]
pub struct Interdiff {
    pub series: String,
    pub old_version: u32,
    pub new_version: u32,
    /// True when the bases differ: the diff then shows upstream changes too.
    pub bases_differ: bool,
    /// The two versions' signatures, as in [`RangeDiff`].
    pub old_signature: Option<crate::store::sign::State>,
    pub new_signature: Option<crate::store::sign::State>,
    pub diff: String,
}

pub fn interdiff(repo: &gix::Repository, old: &Version, new: &Version) -> Result<Interdiff> {
    require_objects(repo, old)?;
    require_objects(repo, new)?;
    let t = |id: ObjectId| -> Result<ObjectId> { Ok(repo.find_commit(id)?.tree_id()?.detach()) };
    let d = super::diff::diff_trees(
        repo,
        Some(t(old.tip()?)?),
        Some(t(new.tip()?)?),
        super::diff::Options::default(),
    )?;
    Ok(Interdiff {
        series: new.series().to_string(),
        old_version: old.record.number,
        new_version: new.record.number,
        bases_differ: old.record.base.commit != new.record.base.commit,
        old_signature: old.signature.clone(),
        new_signature: new.signature.clone(),
        diff: String::from_utf8_lossy(&d.text()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        let (s, v) = parse_spec("alice/feat@v3").unwrap();
        assert_eq!(
            (s.persona.as_str(), s.name.as_str(), v),
            ("alice", "feat", Some(3))
        );
        assert_eq!(parse_spec("alice/feat").unwrap().1, None);
        assert!(parse_spec("feat").is_err());
        assert!(parse_spec("a/b@v0").is_err());
        assert!(parse_spec("a/b@x").is_err());
        assert!(parse_spec("a/../b").is_err());
    }
}
