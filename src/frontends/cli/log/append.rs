//! `git jules log append`.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::kit::abbrev;
use git_jules::store::eventlog::{Event, Log, NewEvent};

use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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

fn parse_data(text: &str) -> anyhow::Result<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(text).context("--data is not valid JSON")?;
    Ok(v)
}

pub(super) fn append(ctx: &Context, repo: &gix::Repository, a: AppendArgs) -> anyhow::Result<i32> {
    git_jules::kit::names::validate_name("actor", &a.actor)?;
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
                return Err(crate::frontends::error::usage(format!(
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
    ctx.ui.print(&Appended(
        appended
            .iter()
            .map(|a| Row {
                id: a.id.to_hex(),
                commit: a.commit.to_string(),
                lamport: a.lamport,
            })
            .collect(),
    ));
    Ok(0)
}

/// One appended event.
#[derive(Serialize)]
struct Row {
    id: String,
    commit: String,
    lamport: u64,
}

/// `log append`: each event's id, abbreviated, one a line; the rows in JSON.
#[derive(Serialize)]
#[serde(transparent)]
struct Appended(Vec<Row>);

impl Print for Appended {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        for r in &self.0 {
            writeln!(out, "{}", &r.id[..abbrev::DEFAULT_ABBREV + 5])?;
        }
        Ok(())
    }
}
