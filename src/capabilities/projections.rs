//! Which projections each log checkpoints, writing a checkpoint, and the checks of
//! `git jules log fsck --checkpoints`. The mechanics (format, notes, seeding a cache) are in
//! [`crate::store::eventlog::checkpoint`]; this module only knows which views live on which log.
//!
//! Every log checkpoints its stats; `refs/jules/mail` also the mailboxes, `refs/jules/state` the sprint
//! state. The set depends on the log's name alone, so two replicas checkpointing the same commit write the
//! same manifest.
//!
//! With a checkpoint signing key (`JULES_SIGNING_KEY` or `jules.signingKey`) and trust roots, a writer also
//! writes the signed checkpoint that readers under `jules.requireSigned` use: the fold of the events
//! verified under the current trust file, its manifest signed (docs/format.md, "Checkpoints").

use gix::ObjectId;
use serde::Serialize;

use crate::kit::error::{Error, Result};
use crate::store::eventlog::checkpoint::{self, CheckpointProblem, Manifest, Section};
use crate::store::eventlog::stats::LogStats;
use crate::store::eventlog::{Log, Verifier};
use crate::store::sign::State;

/// Every projection of `log` at `at`, as checkpoint sections (full folds; with `authority`, folds of the
/// events it verifies).
pub fn sections(
    log: &Log<'_>,
    at: ObjectId,
    mut authority: Option<&mut Verifier<'_>>,
) -> Result<Vec<Section>> {
    let mut out = vec![checkpoint::build::<LogStats>(
        log,
        at,
        authority.as_deref_mut(),
    )?];
    match log.name() {
        n if n == format!("refs/jules/{}", crate::capabilities::mail::LOG) => {
            out.push(checkpoint::build::<
                crate::capabilities::mail::view::MailView,
            >(log, at, authority)?)
        }
        n if n == format!("refs/jules/{}", crate::capabilities::state::LOG) => {
            out.push(checkpoint::build::<
                crate::capabilities::state::view::StateView,
            >(log, at, authority)?)
        }
        _ => {}
    }
    Ok(out)
}

/// What `git jules log checkpoint` did.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    /// The anchor: the log's local tip.
    pub commit: String,
    /// The manifest's blob id (the same on every replica for the same events).
    pub manifest: Option<String>,
    pub events: u64,
    /// Events after the newest earlier checkpoint, when one is reachable.
    pub since_previous: Option<u64>,
    /// Nothing written: fewer than `every` events since the previous checkpoint.
    pub skipped: bool,
    /// The signed checkpoint written beside it (a signing key and trust roots are configured).
    pub signed: Option<SignedWritten>,
}

/// The signed checkpoint `log checkpoint` wrote.
#[derive(Debug, Clone, Serialize)]
pub struct SignedWritten {
    /// The signed manifest's blob id.
    pub manifest: String,
    /// The trust file (blob id) whose verified events it folds.
    pub trust: String,
    /// The signing key's `SHA256:` fingerprint.
    pub key: String,
    /// Whether these trust roots allow the key to sign checkpoints (if not, readers ignore it).
    pub allowed: bool,
}

/// Checkpoint `log` at its local tip, or (with `every`) only when at least that many commits were added
/// since the newest checkpoint reachable from it.
pub fn write(log: &Log<'_>, every: Option<u64>) -> Result<Written> {
    let at = log
        .local_tip()?
        .ok_or_else(|| Error::not_found(crate::kit::error::Thing::Log, log.name()))?;
    let previous = checkpoint::newest(log, &[at])?;
    let since_previous = match previous {
        Some((anchor, _)) => Some(
            log.repo()
                .rev_walk([at])
                .with_hidden([anchor])
                .all()?
                .count() as u64,
        ),
        None => None,
    };
    if let (Some(n), Some(since)) = (every, since_previous) {
        if since < n {
            return Ok(Written {
                commit: at.to_string(),
                manifest: None,
                events: 0,
                since_previous: Some(since),
                skipped: true,
                signed: None,
            });
        }
    }
    let sections = sections(log, at, None)?;
    let events = sections.first().map_or(0, |s| s.events);
    let manifest = checkpoint::write(log, at, &sections)?;
    Ok(Written {
        commit: at.to_string(),
        manifest: Some(manifest.to_string()),
        events,
        since_previous,
        skipped: false,
        signed: write_signed(log, at)?,
    })
}

/// The signed checkpoint at `at`, when a checkpoint key and trust roots are configured.
fn write_signed(log: &Log<'_>, at: ObjectId) -> Result<Option<SignedWritten>> {
    let repo = log.repo();
    if crate::store::sign::keys::checkpoint_key(repo).is_none() {
        return Ok(None);
    }
    let Some((trust, trust_id)) = crate::store::sign::verdict::load_trust(repo)? else {
        return Ok(None);
    };
    let mut verifier = Verifier::with_trust(repo, trust.clone(), trust_id);
    let sections = sections(log, at, Some(&mut verifier))?;
    verifier.save();
    let mut key = None;
    let manifest = checkpoint::write_signed(log, at, &sections, trust_id, |body| {
        let (sig, k) = crate::store::sign::keys::sign_checkpoint(repo, body)?
            .ok_or_else(|| Error::Other("the checkpoint key went away".into()))?;
        key = Some(k);
        Ok(sig)
    })?;
    let key = key.ok_or_else(|| Error::Other("no signature was made".into()))?;
    Ok(Some(SignedWritten {
        manifest: manifest.to_string(),
        trust: trust_id.to_string(),
        key: key.fingerprint(ssh_key::HashAlg::Sha256).to_string(),
        allowed: trust.allows_checkpoints(&key, chrono::Utc::now()).is_ok(),
    }))
}

/// What `log fsck --checkpoints` found for one log.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub checked: usize,
    pub problems: Vec<CheckpointProblem>,
    /// The signature state of every checkpoint checked, plain ones as `unsigned`.
    pub signatures: Vec<SignatureReport>,
}

/// The signature of one checkpoint, judged as a reader under `jules.requireSigned` here would.
#[derive(Debug, Clone, Serialize)]
pub struct SignatureReport {
    /// The anchor commit.
    pub commit: String,
    /// A signed checkpoint (`refs/notes/jules/checkpoints-signed`) or a plain one.
    pub signed: bool,
    /// Verified: the key and the principals of the trust line that lets it sign checkpoints.
    pub signature: State,
    /// Whether a reader under `jules.requireSigned` with these trust roots uses it.
    pub usable: bool,
    /// Why not, when not.
    pub reason: Option<String>,
}

/// Recompute every checkpoint anchored on `log` from the log and compare; report unreadable, foreign,
/// unknown-version, incomplete and wrong ones, and the signature state of each (a signed manifest whose
/// signature does not verify, or whose key may not sign checkpoints, is a problem; an unsigned one is not).
pub fn fsck(log: &Log<'_>) -> Result<Report> {
    let mut report = fsck_plain(log)?;
    fsck_signed(log, &mut report)?;
    Ok(report)
}

fn fsck_signed(log: &Log<'_>, report: &mut Report) -> Result<()> {
    let repo = log.repo();
    let on_log = commits_on(log)?;
    let trust = crate::store::sign::verdict::load_trust(repo)?;
    for (commit, blob) in checkpoint::list_ref(repo, checkpoint::SIGNED_REF)? {
        if !on_log.contains(&commit) {
            continue;
        }
        report.checked += 1;
        let problem = |p: String| CheckpointProblem {
            commit: commit.to_string(),
            problem: p,
        };
        let (verdict, state) = checkpoint::check_signed(log, commit, blob, trust.as_ref());
        let Some(state) = state else {
            // Unreadable, foreign or unparsable: no signature to judge.
            report.problems.push(problem(format!(
                "signed checkpoint: {}",
                verdict.err().unwrap_or_default()
            )));
            continue;
        };
        if matches!(state, State::BadSignature | State::KeyNotAllowed { .. }) {
            report.problems.push(problem(format!(
                "signed checkpoint: {}",
                verdict.as_ref().err().cloned().unwrap_or_default()
            )));
        }
        report.signatures.push(SignatureReport {
            commit: commit.to_string(),
            signed: true,
            signature: state,
            usable: verdict.is_ok(),
            reason: verdict.as_ref().err().cloned(),
        });
        // The sections, against a fold of the events verified under the trust file they name.
        let data = repo.find_blob(blob)?.data.clone();
        let Ok(found) = Manifest::parse(&data) else {
            continue;
        };
        let Some(trust_id) = found.trust else {
            continue;
        };
        let allowed = match repo.find_blob(trust_id) {
            Ok(b) => std::str::from_utf8(&b.data)
                .map_err(|_| "not UTF-8".to_owned())
                .and_then(|t| {
                    crate::store::sign::AllowedSigners::parse(t, &trust_id.to_string())
                        .map_err(|e| e.to_string())
                }),
            Err(e) => Err(e.to_string()),
        };
        let allowed = match allowed {
            Ok(a) => a,
            Err(e) => {
                report.problems.push(problem(format!(
                    "signed checkpoint: its trust file {trust_id} is unusable here: {e}"
                )));
                continue;
            }
        };
        let mut verifier = Verifier::with_trust(repo, allowed, trust_id);
        let expected = checkpoint::manifest(
            log,
            commit,
            &sections(log, commit, Some(&mut verifier))?,
            Some(trust_id),
        )?;
        compare(repo, &found, &expected, &mut |p| {
            report
                .problems
                .push(problem(format!("signed checkpoint: {p}")))
        });
    }
    Ok(())
}

fn commits_on(log: &Log<'_>) -> Result<std::collections::HashSet<ObjectId>> {
    let tips = log.tips()?;
    let mut on_log = std::collections::HashSet::new();
    if !tips.is_empty() {
        for info in log.repo().rev_walk(tips.iter().copied()).all()? {
            on_log.insert(info?.id);
        }
    }
    Ok(on_log)
}

fn fsck_plain(log: &Log<'_>) -> Result<Report> {
    let repo = log.repo();
    let on_log = commits_on(log)?;
    let mut report = Report::default();
    for (commit, blob) in checkpoint::list(repo)? {
        if !on_log.contains(&commit) {
            continue;
        }
        report.checked += 1;
        let problem = |p: String| CheckpointProblem {
            commit: commit.to_string(),
            problem: p,
        };
        let found = match repo.find_blob(blob) {
            Ok(b) => b.data.clone(),
            Err(e) => {
                report
                    .problems
                    .push(problem(format!("manifest {blob} unreadable: {e}")));
                continue;
            }
        };
        let found = match Manifest::parse(&found) {
            Ok(m) => m,
            Err(why) => {
                report
                    .problems
                    .push(problem(format!("manifest {blob}: {why}")));
                continue;
            }
        };
        if found.log != log.name() || found.commit != commit {
            report.problems.push(problem(format!(
                "manifest {blob} is for {} at {}, but annotates {commit} on {}",
                found.log,
                found.commit,
                log.name()
            )));
            continue;
        }
        if found.trust.is_some() {
            report.problems.push(problem(format!(
                "manifest {blob} is a signed one among the plain checkpoints"
            )));
            continue;
        }
        report.signatures.push(SignatureReport {
            commit: commit.to_string(),
            signed: false,
            signature: State::Unsigned,
            usable: false,
            reason: Some("unsigned".into()),
        });
        let expected = checkpoint::manifest(log, commit, &sections(log, commit, None)?, None)?;
        compare(repo, &found, &expected, &mut |p| {
            report.problems.push(problem(p))
        });
    }
    Ok(report)
}

/// Each difference between the manifest `found` and the recomputed `expected`, and each missing file.
fn compare(
    repo: &gix::Repository,
    found: &Manifest,
    expected: &Manifest,
    problem: &mut dyn FnMut(String),
) {
    for s in &found.sections {
        let Some(ours) = expected
            .sections
            .iter()
            .find(|e| e.projection == s.projection)
        else {
            problem(format!(
                "projection {:?} is not one this log has",
                s.projection
            ));
            continue;
        };
        if ours.version != s.version {
            problem(format!(
                "projection {} version {} is unknown here (this build writes {})",
                s.projection, s.version, ours.version
            ));
        } else if ours != s {
            let differ: Vec<&str> = s
                .files
                .iter()
                .filter(|f| !ours.files.contains(f))
                .map(|(p, _)| p.as_str())
                .collect();
            problem(format!(
                "projection {} does not match the log's events ({} events recorded, {} on the log; files that differ: {})",
                s.projection,
                s.events,
                ours.events,
                if differ.is_empty() { "none, the list or keys differ".to_owned() } else { differ.join(", ") }
            ));
        }
        for (path, id) in &s.files {
            if !repo.has_object(id) {
                problem(format!("file {path} ({id}) is missing"));
            }
        }
    }
}
