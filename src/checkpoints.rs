//! Which projections each log checkpoints, writing a checkpoint, and the checks of
//! `git jules log fsck --checkpoints`. The mechanics (format, notes, seeding a cache) are in
//! [`crate::eventlog::checkpoint`]; this module only knows which views live on which log.
//!
//! Every log checkpoints its stats; `refs/jules/mail` also the mailboxes, `refs/jules/state` the sprint
//! state. The set depends on the log's name alone, so two replicas checkpointing the same commit write the
//! same manifest.

use gix::ObjectId;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::eventlog::checkpoint::{self, CheckpointProblem, Manifest, Section};
use crate::eventlog::stats::LogStats;
use crate::eventlog::Log;

/// Every projection of `log` at `at`, as checkpoint sections (full folds).
pub fn sections(log: &Log<'_>, at: ObjectId) -> Result<Vec<Section>> {
    let mut out = vec![checkpoint::build::<LogStats>(log, at)?];
    match log.name() {
        n if n == format!("refs/jules/{}", crate::mail::LOG) => {
            out.push(checkpoint::build::<crate::mail::view::MailView>(log, at)?)
        }
        n if n == format!("refs/jules/{}", crate::state::LOG) => {
            out.push(checkpoint::build::<crate::state::view::StateView>(log, at)?)
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
}

/// Checkpoint `log` at its local tip, or (with `every`) only when at least that many commits were added
/// since the newest checkpoint reachable from it.
pub fn write(log: &Log<'_>, every: Option<u64>) -> Result<Written> {
    let at = log
        .local_tip()?
        .ok_or_else(|| Error::not_found("log", log.name()))?;
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
            });
        }
    }
    let sections = sections(log, at)?;
    let events = sections.first().map_or(0, |s| s.events);
    let manifest = checkpoint::write(log, at, &sections)?;
    Ok(Written {
        commit: at.to_string(),
        manifest: Some(manifest.to_string()),
        events,
        since_previous,
        skipped: false,
    })
}

/// What `log fsck --checkpoints` found for one log.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    pub checked: usize,
    pub problems: Vec<CheckpointProblem>,
}

/// Recompute every checkpoint anchored on `log` from the log and compare; report unreadable, foreign,
/// unknown-version, incomplete and wrong ones.
pub fn fsck(log: &Log<'_>) -> Result<Report> {
    let repo = log.repo();
    let tips = log.tips()?;
    let mut on_log = std::collections::HashSet::new();
    if !tips.is_empty() {
        for info in repo.rev_walk(tips.iter().copied()).all()? {
            on_log.insert(info?.id);
        }
    }
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
        let expected = checkpoint::manifest(log, commit, &sections(log, commit)?)?;
        for s in &found.sections {
            let Some(ours) = expected
                .sections
                .iter()
                .find(|e| e.projection == s.projection)
            else {
                report.problems.push(problem(format!(
                    "projection {:?} is not one this log has",
                    s.projection
                )));
                continue;
            };
            if ours.version != s.version {
                report.problems.push(problem(format!(
                    "projection {} version {} is unknown here (this build writes {})",
                    s.projection, s.version, ours.version
                )));
            } else if ours != s {
                let differ: Vec<&str> = s
                    .files
                    .iter()
                    .filter(|f| !ours.files.contains(f))
                    .map(|(p, _)| p.as_str())
                    .collect();
                report.problems.push(problem(format!(
                    "projection {} does not match the log's events ({} events recorded, {} on the log; files that differ: {})",
                    s.projection,
                    s.events,
                    ours.events,
                    if differ.is_empty() { "none, the list or keys differ".to_owned() } else { differ.join(", ") }
                )));
            }
            for (path, id) in &s.files {
                if !repo.has_object(id) {
                    report
                        .problems
                        .push(problem(format!("file {path} ({id}) is missing")));
                }
            }
        }
    }
    Ok(report)
}
