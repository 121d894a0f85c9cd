//! Weave reports kept on the log `refs/jules/weave`, so that every clone reads what the last weaves did
//! (applied, conflicted, with files, hunks and counterparts) after a sync, not only the clone that ran them.
//!
//! One `weave.report` event per run that wrote something (never with `--check`). The event's data is a small
//! summary (the branch, the tip, counts per status); the whole [`Report`], which can be large, rides as the
//! blob `payload/report.json` in the event commit's tree, so it stays reachable from the log and travels with
//! it. `docs/format.md` specifies the event; `docs/weave.md` the report's JSON.

use serde::Serialize;
use serde_json::json;

use super::report::Report;
use crate::kit::error::{Error, Result};
use crate::store::eventlog::{Appended, Event, Log, NewEvent};

/// The log's name below `refs/jules/`.
pub const LOG: &str = "weave";
/// The one event kind on it.
pub const KIND: &str = "weave.report";
/// The attachment holding the whole report.
pub const FILE: &str = "report.json";
/// Version of the event's `data`.
pub const DATA_VERSION: u64 = 1;
/// A stored report larger than this is not loaded for display (its summary still is): a hostile or runaway
/// report must not make every page view read megabytes.
pub const MAX_READ: u64 = 4 * 1024 * 1024;

pub fn open(repo: &gix::Repository) -> Result<Log<'_>> {
    Log::open(repo, LOG)
}

/// Record `report` as a `weave.report` event by `actor`.
pub fn record(repo: &gix::Repository, actor: &str, report: &Report) -> Result<Appended> {
    let bytes =
        serde_json::to_vec(report).map_err(|e| Error::wrap("serialising the weave report", e))?;
    let data = json!({
        "v": DATA_VERSION,
        "into": report.into,
        "tip": report.tip.to_string(),
        "base": report.base.name,
        "applied": report.applied.len(),
        "already": report.already.len(),
        "conflicted": report.conflicted.len(),
        "dropped": report.dropped.len(),
        "failed": report.failed.len(),
        "skipped": report.skipped.len(),
        "report_version": report.version,
    });
    let mut event = NewEvent::new(Event::new(KIND, actor, data));
    event.files.push((FILE.to_owned(), bytes));
    open(repo)?.append(event)
}

/// A recorded weave, as the web page and `/api/weave` show it.
#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    /// The event id.
    pub id: String,
    pub time: String,
    /// Who wove (`--from`).
    pub actor: String,
    /// The event's summary: `into`, `tip`, `base` and counts per status.
    pub summary: serde_json::Value,
    /// The whole report (docs/weave.md's JSON), `None` when its blob is missing, over [`MAX_READ`] or not
    /// JSON; `problem` says which.
    pub report: Option<serde_json::Value>,
    pub problem: Option<String>,
}

/// The last `n` recorded weaves, newest first (in the log's total order, the same on every replica).
pub fn last(repo: &gix::Repository, n: usize) -> Result<Vec<Recorded>> {
    let log = open(repo)?;
    if log.tips()?.is_empty() {
        return Ok(Vec::new());
    }
    let (events, _invalid) = log.read_all()?;
    let mut out = Vec::new();
    for e in events.iter().rev().filter(|e| e.event.kind == KIND).take(n) {
        let (report, problem) = match e.event.payload.iter().find(|p| p.name == FILE) {
            None => (None, Some(format!("no {FILE} on the event"))),
            Some(p) => match load(repo, &p.blob) {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(format!("{e:#}"))),
            },
        };
        out.push(Recorded {
            id: e.id.to_hex(),
            time: e.event.time.clone(),
            actor: e.event.actor.clone(),
            summary: e.event.data.clone(),
            report,
            problem,
        });
    }
    Ok(out)
}

/// The report blob, checked for its size (the object's own, not the one the event declares) before it is read.
fn load(repo: &gix::Repository, blob: &str) -> Result<serde_json::Value> {
    let id: gix::ObjectId = blob
        .parse()
        .map_err(|e| Error::wrap(format!("bad blob id {blob}"), e))?;
    let size = repo
        .find_header(id)
        .map_err(|e| Error::wrap(format!("reading the weave report {blob}"), e))?
        .size();
    if size > MAX_READ {
        return Err(Error::Other(format!(
            "the report is {size} bytes, over {MAX_READ}: read it with git cat-file blob {blob}"
        )));
    }
    let object = repo
        .find_object(id)
        .map_err(|e| Error::wrap(format!("reading the weave report {blob}"), e))?;
    serde_json::from_slice(&object.data)
        .map_err(|e| Error::wrap(format!("the weave report {blob} is not JSON"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored report that is not JSON fails with the parser's error as its cause, not as text.
    #[test]
    fn a_report_that_is_not_json_keeps_the_parsers_error() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let blob = repo
            .write_blob(b"{ not json")
            .unwrap()
            .detach()
            .to_hex()
            .to_string();
        let e = load(&repo, &blob).unwrap_err();
        assert!(
            crate::kit::error::caused_by::<serde_json::Error>(&e),
            "{e:?}"
        );
        assert_eq!(e.kind(), crate::ErrorKind::Internal);
        // A blob that is not there: gix's own error is the cause.
        let missing = "0123456789012345678901234567890123456789";
        let e = load(&repo, missing).unwrap_err();
        assert!(std::error::Error::source(&e).is_some(), "{e:?}");
    }
}
