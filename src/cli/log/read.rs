//! `git jules log show`, `get` and `stats`.

use git_jules::abbrev;
use git_jules::eventlog::{cache::Refresh, stats::LogStats, Event, Log};

use serde::Serialize;

use super::super::ui;
use super::{signature_states, warn_invalid};
use crate::cli::context::Context;

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
    warn_invalid(&invalid);
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
    let signatures = signature_states(repo, &selected[skip..])?;
    if ctx.ui.json {
        #[derive(Serialize)]
        struct Row<'a> {
            id: String,
            lamport: u64,
            commit: String,
            event: &'a Event,
            signature: Option<git_jules::sign::State>,
        }
        let rows: Vec<Row> = selected[skip..]
            .iter()
            .zip(signatures)
            .map(|(e, signature)| Row {
                id: e.id.to_hex(),
                lamport: e.lamport,
                commit: e.commit.to_string(),
                event: &e.event,
                signature,
            })
            .collect();
        ui::json(&rows);
    } else {
        for (e, sig) in selected[skip..].iter().zip(signatures) {
            let mark = match sig {
                Some(s) if !s.is_verified() => format!("  (NOT VERIFIED: {})", s.describe()),
                _ => String::new(),
            };
            ui::out(format!(
                "{} {:>6} {} {:<14} {} {}{mark}",
                ctx.ui.yellow(&e.id.short(width)),
                e.lamport,
                e.event.time,
                e.event.kind,
                e.event.actor,
                e.event.data
            ));
        }
    }
    Ok(0)
}

pub(super) fn get(ctx: &Context, repo: &gix::Repository, a: GetArgs) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let (events, invalid) = log.read_all()?;
    warn_invalid(&invalid);
    let mut ids: Vec<String> = events.iter().map(|e| e.id.to_hex()).collect();
    ids.sort();
    let full = abbrev::resolve(git_jules::Thing::Event, &a.id, &ids)?;
    let e = events
        .iter()
        .find(|e| e.id.to_hex() == full)
        .expect("resolved ids come from these events");
    let signature = signature_states(repo, std::slice::from_ref(&e))?.remove(0);
    if ctx.ui.json {
        ui::json(&serde_json::json!({
            "id": full,
            "lamport": e.lamport,
            "commit": e.commit.to_string(),
            "event": e.event,
            "signature": signature,
        }));
    } else {
        ui::out(format!("event {}", ctx.ui.yellow(full)));
        ui::out(format!("commit {}", e.commit));
        if let Some(s) = &signature {
            ui::out(format!("signature {}", s.describe()));
        }
        ui::out(format!("lamport {}", e.lamport));
        ui::out(format!("kind {}", e.event.kind));
        ui::out(format!("actor {}", e.event.actor));
        ui::out(format!("time {}", e.event.time));
        for p in &e.event.payload {
            ui::out(format!("payload {} {} ({} bytes)", p.name, p.blob, p.size));
        }
        ui::out(serde_json::to_string_pretty(&e.event.data)?);
    }
    Ok(0)
}

pub(super) fn stats(ctx: &Context, repo: &gix::Repository, a: RefArg) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let loaded = log.project::<LogStats>()?;
    warn_invalid(&loaded.invalid);
    if ctx.ui.json {
        #[derive(Serialize)]
        struct Out<'a> {
            log: &'a str,
            refresh: Refresh,
            #[serde(flatten)]
            stats: &'a LogStats,
        }
        ui::json(&Out {
            log: log.name(),
            refresh: loaded.refresh,
            stats: &loaded.view,
        });
    } else {
        let s = &loaded.view;
        ui::out(format!(
            "{}: {} events, lamport {}",
            log.name(),
            s.events,
            s.max_lamport
        ));
        for (k, n) in &s.by_kind {
            ui::out(format!("  kind  {k:<20} {n}"));
        }
        for (k, n) in &s.by_actor {
            ui::out(format!("  actor {k:<20} {n}"));
        }
    }
    Ok(0)
}
