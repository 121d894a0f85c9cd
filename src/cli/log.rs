//! `git jules log …`: the event logs themselves.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::abbrev;
use git_jules::eventlog::{self, cache::Refresh, stats::LogStats, Event, Log, NewEvent};
use serde::Serialize;

use super::ui;
use crate::cli::context::{Context, EXIT_CHECK_FAILED};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum LogCommand {
    /// Append one event (or, with --batch, every JSON line of stdin) to a log
    Append(AppendArgs),
    /// List a log's events in their total order
    Show(ShowArgs),
    /// Show one event, named by a unique prefix of its id
    Get(GetArgs),
    /// Count a log's events by kind and actor (from the projection cache)
    Stats(RefArg),
    /// Check every commit of a log (default: all logs) and report those that are not valid events
    Fsck(FsckArgs),
    /// List the logs in this repository
    List,
    /// Store the log's projections (stats, and mail or state) as a checkpoint on the log, at its local tip
    Checkpoint(CheckpointArgs),
}

#[derive(Debug, clap::Args)]
pub struct CheckpointArgs {
    /// The log: `mail`, `state`, … or a full ref under refs/jules/
    pub log: String,
    /// Only when at least N commits were added since the newest checkpoint (for a cron schedule)
    #[arg(long, value_name = "N")]
    pub every: Option<u64>,
}

#[derive(Debug, clap::Args)]
pub struct RefArg {
    /// The log: `mail`, `state`, … or a full ref under refs/jules/
    pub log: String,
}

#[derive(Debug, clap::Args)]
pub struct AppendArgs {
    /// The log: `mail`, `state`, … or a full ref under refs/jules/
    pub log: String,
    /// The event kind, e.g. `note.add`
    #[arg(long)]
    pub kind: String,
    /// Who acts (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA")]
    pub actor: String,
    /// The event data as JSON (default: {})
    #[arg(long, conflicts_with = "batch")]
    pub data: Option<String>,
    /// Attach a file as NAME=PATH (stored as a blob in the event commit)
    #[arg(long = "file", value_name = "NAME=PATH", conflicts_with = "batch")]
    pub files: Vec<String>,
    /// Read one JSON data object per stdin line and append them all with one ref update
    #[arg(long)]
    pub batch: bool,
    /// Append N events one at a time, each with its own ref update and `"seq": i` added to the data
    /// (a load generator for tests and benchmarks)
    #[arg(long, value_name = "N", conflicts_with_all = ["batch", "files"])]
    pub repeat: Option<u64>,
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

#[derive(Debug, clap::Args)]
pub struct FsckArgs {
    /// The log to check (default: every log under refs/jules/)
    pub log: Option<String>,
    /// Also recompute every checkpoint on the log from its events and compare
    #[arg(long)]
    pub checkpoints: bool,
}

pub fn run(ctx: &Context, cmd: LogCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    match cmd {
        LogCommand::Append(a) => append(ctx, &repo, a),
        LogCommand::Show(a) => show(ctx, &repo, a),
        LogCommand::Get(a) => get(ctx, &repo, a),
        LogCommand::Stats(a) => stats(ctx, &repo, a),
        LogCommand::Fsck(a) => fsck(ctx, &repo, a),
        LogCommand::Checkpoint(a) => checkpoint(ctx, &repo, a),
        LogCommand::List => {
            let logs = eventlog::list_logs(&repo)?;
            if ctx.ui.json {
                ui::json(&logs);
            } else {
                for l in logs {
                    ui::out(l);
                }
            }
            Ok(0)
        }
    }
}

fn parse_data(text: &str) -> anyhow::Result<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(text).context("--data is not valid JSON")?;
    Ok(v)
}

fn append(ctx: &Context, repo: &gix::Repository, a: AppendArgs) -> anyhow::Result<i32> {
    git_jules::names::validate_name("actor", &a.actor)?;
    let log = Log::open(repo, &a.log)?;
    let events = if a.batch {
        let mut input = String::new();
        std::io::stdin()
            .read_to_string(&mut input)
            .context("reading stdin (it must be UTF-8)")?;
        input
            .lines()
            .filter(|l| !l.trim().is_empty())
            .enumerate()
            .map(|(i, l)| {
                let data = serde_json::from_str(l)
                    .with_context(|| format!("stdin line {}: not JSON", i + 1))?;
                Ok(NewEvent::new(Event::new(&a.kind, &a.actor, data)))
            })
            .collect::<anyhow::Result<Vec<_>>>()?
    } else {
        let data = match &a.data {
            Some(d) => parse_data(d)?,
            None => serde_json::json!({}),
        };
        let mut ev = NewEvent::new(Event::new(&a.kind, &a.actor, data));
        for spec in &a.files {
            let Some((name, path)) = spec.split_once('=') else {
                return Err(crate::cli::error::usage(format!(
                    "--file wants NAME=PATH, got {spec:?}"
                ))
                .into());
            };
            let bytes =
                std::fs::read(PathBuf::from(path)).with_context(|| format!("reading {path}"))?;
            ev.files.push((name.to_owned(), bytes));
        }
        vec![ev]
    };
    let appended = match a.repeat {
        Some(n) => {
            let template = events.into_iter().next().expect("one event").event;
            let mut out = Vec::with_capacity(n as usize);
            for seq in 0..n {
                let mut data = template.data.clone();
                if let Some(map) = data.as_object_mut() {
                    map.insert("seq".into(), seq.into());
                }
                out.push(log.append(NewEvent::new(Event::new(&a.kind, &a.actor, data)))?);
            }
            out
        }
        None => log.append_batch(events)?,
    };
    if ctx.ui.json {
        #[derive(Serialize)]
        struct Row {
            id: String,
            commit: String,
            lamport: u64,
        }
        let rows: Vec<Row> = appended
            .iter()
            .map(|a| Row {
                id: a.id.to_hex(),
                commit: a.commit.to_string(),
                lamport: a.lamport,
            })
            .collect();
        ui::json(&rows);
    } else {
        for a in &appended {
            ui::out(a.id.short(abbrev::DEFAULT_ABBREV + 5));
        }
    }
    Ok(0)
}

fn warn_invalid(invalid: &[eventlog::InvalidCommit]) {
    for i in invalid {
        ui::warn(format!("skipping commit {}: {}", i.commit, i.reason));
    }
}

fn show(ctx: &Context, repo: &gix::Repository, a: ShowArgs) -> anyhow::Result<i32> {
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
    if ctx.ui.json {
        #[derive(Serialize)]
        struct Row<'a> {
            id: String,
            lamport: u64,
            commit: String,
            event: &'a Event,
        }
        let rows: Vec<Row> = selected[skip..]
            .iter()
            .map(|e| Row {
                id: e.id.to_hex(),
                lamport: e.lamport,
                commit: e.commit.to_string(),
                event: &e.event,
            })
            .collect();
        ui::json(&rows);
    } else {
        for e in &selected[skip..] {
            ui::out(format!(
                "{} {:>6} {} {:<14} {} {}",
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

fn get(ctx: &Context, repo: &gix::Repository, a: GetArgs) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let (events, invalid) = log.read_all()?;
    warn_invalid(&invalid);
    let mut ids: Vec<String> = events.iter().map(|e| e.id.to_hex()).collect();
    ids.sort();
    let full = abbrev::resolve("event", &a.id, &ids)?;
    let e = events
        .iter()
        .find(|e| e.id.to_hex() == full)
        .expect("resolved ids come from these events");
    if ctx.ui.json {
        ui::json(&serde_json::json!({
            "id": full,
            "lamport": e.lamport,
            "commit": e.commit.to_string(),
            "event": e.event,
        }));
    } else {
        ui::out(format!("event {}", ctx.ui.yellow(full)));
        ui::out(format!("commit {}", e.commit));
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

fn stats(ctx: &Context, repo: &gix::Repository, a: RefArg) -> anyhow::Result<i32> {
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

fn fsck(ctx: &Context, repo: &gix::Repository, a: FsckArgs) -> anyhow::Result<i32> {
    let logs = match a.log {
        Some(l) => vec![Log::open(repo, &l)?.name().to_owned()],
        None => eventlog::list_logs(repo)?,
    };
    let mut reports = Vec::new();
    for name in &logs {
        reports.push(Log::open(repo, name)?.fsck()?);
    }
    let mut checkpoints = Vec::new();
    if a.checkpoints {
        for name in &logs {
            let log = Log::open(repo, name)?;
            checkpoints.push(CheckpointFsck {
                log: name.clone(),
                report: git_jules::checkpoints::fsck(&log)?,
            });
        }
    }
    let clean = reports.iter().all(|r| r.is_clean())
        && checkpoints.iter().all(|c| c.report.problems.is_empty());
    if ctx.ui.json && a.checkpoints {
        ui::json(&serde_json::json!({"logs": reports, "checkpoints": checkpoints}));
    } else if ctx.ui.json {
        ui::json(&reports);
    } else {
        for r in &reports {
            ui::out(format!(
                "{}: {} commits, {} events, {} merges, {} duplicates, {} invalid",
                r.log,
                r.commits,
                r.events,
                r.merges,
                r.duplicates,
                r.invalid.len()
            ));
            for p in &r.invalid {
                ui::out(format!(
                    "  {} {}: {}",
                    ctx.ui.red("invalid"),
                    p.commit,
                    p.problem
                ));
            }
        }
        for c in &checkpoints {
            ui::out(format!(
                "{}: {} checkpoints, {} problems",
                c.log,
                c.report.checked,
                c.report.problems.len()
            ));
            for p in &c.report.problems {
                ui::out(format!(
                    "  {} {}: {}",
                    ctx.ui.red("checkpoint"),
                    p.commit,
                    p.problem
                ));
            }
        }
    }
    Ok(if clean { 0 } else { EXIT_CHECK_FAILED })
}

#[derive(Serialize)]
struct CheckpointFsck {
    log: String,
    #[serde(flatten)]
    report: git_jules::checkpoints::Report,
}

fn checkpoint(ctx: &Context, repo: &gix::Repository, a: CheckpointArgs) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let w = git_jules::checkpoints::write(&log, a.every)?;
    if ctx.ui.json {
        ui::json(&w);
    } else if w.skipped {
        ui::out(format!(
            "{}: {} commits since the last checkpoint, under {}: nothing written",
            log.name(),
            w.since_previous.unwrap_or(0),
            a.every.unwrap_or(0)
        ));
    } else {
        ui::out(format!(
            "{}: checkpoint of {} events at {} (manifest {})",
            log.name(),
            w.events,
            w.commit,
            w.manifest.as_deref().unwrap_or("-")
        ));
    }
    Ok(0)
}
