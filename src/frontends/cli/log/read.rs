//! `git jules log show`, `get` and `stats`.

use std::io::Write;

use git_jules::kit::abbrev;
use git_jules::store::eventlog::{cache::Refresh, stats::LogStats, Event, Log};

use serde::Serialize;

use super::{signature_states, warn_invalid};
use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
pub struct RefArg {
    /// The log: `mail`, `state`, … or a full ref under refs/jules/
    pub log: String,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    pub log: String,
    /// Only the last N events
    #[arg(long)]
    pub limit: Option<usize>,
    /// Only events of this kind
    #[arg(long)]
    pub kind: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct GetArgs {
    pub log: String,
    /// The event id or a unique prefix of it (at least 4 hex digits)
    pub id: String,
}

pub(super) fn show(ctx: &Context, repo: &gix::Repository, a: ShowArgs) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let (events, invalid) = log.read_all()?;
    let mut ids: Vec<String> = events.iter().map(|e| e.id.to_hex()).collect();
    ids.sort();
    let width = abbrev::unique_len(&ids);
    let selected: Vec<_> = events
        .iter()
        .filter(|e| a.kind.as_ref().is_none_or(|k| &e.event.kind == k))
        .collect();
    let skip = a
        .limit
        .map(|l| selected.len().saturating_sub(l))
        .unwrap_or(0);
    let signatures = match signature_states(repo, &selected[skip..]) {
        Ok(s) => s,
        Err(e) => return Err(failing(ctx, &invalid, e)),
    };
    let rows = selected[skip..]
        .iter()
        .zip(signatures)
        .map(|(e, signature)| Row {
            id: e.id.to_hex(),
            lamport: e.lamport,
            commit: e.commit.to_string(),
            event: &e.event,
            signature,
            short: e.id.short(width),
        })
        .collect();
    ctx.ui.print(&Shown {
        rows,
        skipped: skipped(&invalid),
    });
    Ok(0)
}

/// `e`, after the invalid commits were said: a failure after the read still says what it skipped, as
/// before the output was one printed value.
fn failing(
    ctx: &Context,
    invalid: &[git_jules::store::eventlog::InvalidCommit],
    e: impl Into<anyhow::Error>,
) -> anyhow::Error {
    warn_invalid(&ctx.ui, invalid);
    e.into()
}

/// The invalid commits a read skipped, as the warnings every log command gives.
fn skipped(invalid: &[git_jules::store::eventlog::InvalidCommit]) -> Vec<String> {
    invalid
        .iter()
        .map(|i| format!("skipping commit {}: {}", i.commit, i.reason))
        .collect()
}

/// One event of `log show`.
#[derive(Serialize)]
struct Row<'a> {
    id: String,
    lamport: u64,
    commit: String,
    event: &'a Event,
    signature: Option<git_jules::store::sign::State>,
    /// The id as short as the log allows.
    #[serde(skip)]
    short: String,
}

/// `log show`: one line an event; the rows in JSON; the invalid commits skipped as warnings.
struct Shown<'a> {
    rows: Vec<Row<'a>>,
    skipped: Vec<String>,
}

impl Serialize for Shown<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.rows.serialize(s)
    }
}

impl Print for Shown<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for r in &self.rows {
            let mark = match &r.signature {
                Some(s) if !s.is_verified() => format!("  (NOT VERIFIED: {})", s.describe()),
                _ => String::new(),
            };
            writeln!(
                out,
                "{} {:>6} {} {:<14} {} {}{mark}",
                style.yellow(&r.short),
                r.lamport,
                r.event.time,
                r.event.kind,
                r.event.actor,
                r.event.data
            )?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.skipped.clone()
    }
}

pub(super) fn get(ctx: &Context, repo: &gix::Repository, a: GetArgs) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let (events, invalid) = log.read_all()?;
    let mut ids: Vec<String> = events.iter().map(|e| e.id.to_hex()).collect();
    ids.sort();
    let full = match abbrev::resolve(git_jules::Thing::Event, &a.id, &ids) {
        Ok(full) => full,
        Err(e) => return Err(failing(ctx, &invalid, e)),
    };
    let e = events
        .iter()
        .find(|e| e.id.to_hex() == full)
        .expect("resolved ids come from these events");
    let signature = match signature_states(repo, std::slice::from_ref(&e)) {
        Ok(mut s) => s.remove(0),
        Err(e) => return Err(failing(ctx, &invalid, e)),
    };
    ctx.ui.print(&Got {
        doc: serde_json::json!({
            "id": full,
            "lamport": e.lamport,
            "commit": e.commit.to_string(),
            "event": e.event,
            "signature": signature,
        }),
        event: e,
        signature,
        skipped: skipped(&invalid),
    });
    Ok(0)
}

/// `log get`: the event, one field a line and its data pretty; in JSON one object with its keys sorted,
/// as it always was.
struct Got<'a> {
    doc: serde_json::Value,
    event: &'a git_jules::store::eventlog::LoggedEvent,
    signature: Option<git_jules::store::sign::State>,
    skipped: Vec<String>,
}

impl Serialize for Got<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.doc.serialize(s)
    }
}

impl Print for Got<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let e = self.event;
        writeln!(out, "event {}", style.yellow(&e.id.to_hex()))?;
        writeln!(out, "commit {}", e.commit)?;
        if let Some(s) = &self.signature {
            writeln!(out, "signature {}", s.describe())?;
        }
        writeln!(out, "lamport {}", e.lamport)?;
        writeln!(out, "kind {}", e.event.kind)?;
        writeln!(out, "actor {}", e.event.actor)?;
        writeln!(out, "time {}", e.event.time)?;
        for p in &e.event.payload {
            writeln!(out, "payload {} {} ({} bytes)", p.name, p.blob, p.size)?;
        }
        let data = serde_json::to_string_pretty(&e.event.data).map_err(std::io::Error::other)?;
        writeln!(out, "{data}")
    }
    fn warnings(&self) -> Vec<String> {
        self.skipped.clone()
    }
}

pub(super) fn stats(ctx: &Context, repo: &gix::Repository, a: RefArg) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let loaded = log.project::<LogStats>()?;
    // What the read skipped, then the checkpoint it passed over: warnings returned by the read itself.
    let mut warnings = skipped(&loaded.invalid);
    warnings.extend(loaded.passed_over.iter().map(ToString::to_string));
    ctx.ui.print(&Stats {
        log: log.name(),
        refresh: loaded.refresh,
        stats: &loaded.view,
        warnings,
    });
    Ok(0)
}

/// `log stats`: the counts by kind and actor; in JSON with how the projection was refreshed.
#[derive(Serialize)]
struct Stats<'a> {
    log: &'a str,
    refresh: Refresh,
    #[serde(flatten)]
    stats: &'a LogStats,
    #[serde(skip)]
    warnings: Vec<String>,
}

impl Print for Stats<'_> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let s = self.stats;
        writeln!(
            out,
            "{}: {} events, lamport {}",
            self.log, s.events, s.max_lamport
        )?;
        for (k, n) in &s.by_kind {
            writeln!(out, "  kind  {k:<20} {n}")?;
        }
        for (k, n) in &s.by_actor {
            writeln!(out, "  actor {k:<20} {n}")?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
