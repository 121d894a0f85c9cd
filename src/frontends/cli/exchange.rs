//! `git jules exchange …`: workstreams' hand-offs (seed 001) on `refs/jules/exchange`.

use std::io::Write;
use std::path::PathBuf;

use git_jules::capabilities::exchange::{self, AddRequest};
use git_jules::Error;
use serde::Serialize;

use crate::frontends::ui::{Print, SortedDoc, Style};

use crate::frontends::context::Context;

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum ExchangeCommand {
    /// Add an artifact (event, workstation, perspective, idea, comment, proposal), validated against its schema
    Add {
        #[arg(long)]
        workstream: String,
        /// event, workstation, perspective, idea, comment or proposal
        #[arg(long)]
        kind: String,
        /// The YAML artifact (`-` for stdin)
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        /// The innovator persona (or the workstation's role) it belongs to
        #[arg(long)]
        persona: Option<String>,
        #[arg(long, env = "JULES_PERSONA", default_value = "jules")]
        actor: String,
    },
    /// Deciders: emit an issue (its source_events move to decided)
    Decide {
        #[arg(long)]
        workstream: String,
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        /// The label (default: the issue's label field)
        #[arg(long)]
        label: Option<String>,
        #[arg(long, env = "JULES_PERSONA", default_value = "jules")]
        actor: String,
    },
    /// Planners: expand an issue marked requires_deep_analysis: true
    Expand {
        #[arg(long)]
        workstream: String,
        issue: String,
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        #[arg(long, env = "JULES_PERSONA", default_value = "jules")]
        actor: String,
    },
    /// Implementers: take an issue (one winner; --sync REMOTE makes it final across clones)
    Take {
        #[arg(long)]
        workstream: String,
        issue: String,
        #[arg(long, env = "JULES_PERSONA")]
        persona: String,
        #[arg(long, value_name = "REMOTE")]
        sync: Option<String>,
    },
    /// Implementers: close a taken issue with the commit or branch implementing it
    Close {
        #[arg(long)]
        workstream: String,
        issue: String,
        #[arg(long, env = "JULES_PERSONA")]
        persona: String,
        #[arg(long)]
        commit: String,
    },
    /// List artifacts (optionally of one workstream)
    List {
        #[arg(long)]
        workstream: Option<String>,
    },
    /// Write the seed-001 layout (the level under .jules/workstreams/) into DIR, byte-stable
    Export {
        #[arg(long = "dir", id = "exchange_dir", value_name = "DIR")]
        dir: PathBuf,
    },
    /// Read a seed-001 layout from DIR, idempotently
    Import {
        #[arg(long = "dir", id = "exchange_dir", value_name = "DIR")]
        dir: PathBuf,
        #[arg(long, env = "JULES_PERSONA", default_value = "jules")]
        actor: String,
    },
}

fn read(file: &PathBuf) -> anyhow::Result<String> {
    if file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        return Ok(s);
    }
    std::fs::read_to_string(file)
        .map_err(|e| Error::io(format!("reading {}", file.display()), e).into())
}

/// An artifact added: `ID KIND NAME STATE`.
impl Print for SortedDoc<exchange::Artifact> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let a = &self.0;
        writeln!(
            out,
            "{} {} {} {}",
            &a.id[..12],
            a.kind,
            a.name,
            a.state.as_deref().unwrap_or("")
        )
    }
}

/// `exchange take`: won or lost, and to whom.
struct Took {
    issue: String,
    result: SortedDoc<exchange::TakeReport>,
}

impl Serialize for Took {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.result.serialize(s)
    }
}

impl Print for Took {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let r = &self.result.0;
        if r.won {
            writeln!(out, "took {}", self.issue)
        } else {
            writeln!(out, "lost {}: taken by {}", self.issue, r.winner)
        }
    }
}

/// `exchange close`.
#[derive(Serialize)]
struct Closed {
    closed_with: String,
    issue: String,
    version: u32,
}

impl Print for Closed {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        writeln!(out, "closed {} with {}", self.issue, self.closed_with)
    }
}

/// `exchange list`: `{"artifacts", "version"}` in JSON, every key sorted (through a JSON map, as it always
/// was).
struct Listed<'a> {
    artifacts: Vec<&'a exchange::Artifact>,
    version: u32,
}

impl Serialize for Listed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::json!({"version": self.version, "artifacts": self.artifacts}).serialize(s)
    }
}

impl Print for Listed<'_> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        for a in &self.artifacts {
            writeln!(
                out,
                "{} {:<10} {:<11} {:<24} {}{}",
                &a.id[..12],
                a.workstream,
                a.kind,
                a.name,
                a.state.as_deref().unwrap_or(""),
                a.taken_by
                    .as_deref()
                    .map(|t| format!(" by {t}"))
                    .unwrap_or_default()
            )?;
        }
        Ok(())
    }
}

/// `exchange export`.
#[derive(Serialize)]
struct Exported {
    files: Vec<String>,
    version: u32,
    #[serde(skip)]
    dir: PathBuf,
}

impl Print for Exported {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        writeln!(
            out,
            "exported {} file(s) to {}",
            self.files.len(),
            self.dir.display()
        )
    }
}

/// `exchange import`.
#[derive(Serialize)]
struct Imported {
    added: usize,
    version: u32,
}

impl Print for Imported {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        writeln!(out, "imported {} artifact(s)", self.added)
    }
}

/// The three ways of adding an artifact (add, decide, expand) differ only in the request: read the YAML
/// from `file`, add it as `actor`, print it.
fn add(
    ctx: &Context,
    (log, wd, actor, file): (
        &git_jules::store::eventlog::Log<'_>,
        &std::path::Path,
        &str,
        &PathBuf,
    ),
    mut req: AddRequest,
) -> anyhow::Result<()> {
    req.yaml = read(file)?;
    let a = exchange::add(log, wd, actor, req)?;
    ctx.ui.print(&SortedDoc(a));
    Ok(())
}

pub fn run(ctx: &Context, cmd: ExchangeCommand) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let wd = repo
        .workdir()
        .ok_or_else(|| Error::usage("the exchange needs a work tree with .jules/workstreams/"))?
        .to_path_buf();
    let log = exchange::open(&repo)?;
    match cmd {
        ExchangeCommand::Add {
            workstream,
            kind,
            file,
            persona,
            actor,
        } => {
            if kind == "issue" || kind == "plan" {
                return Err(Error::usage(format!(
                    "use `exchange {}` for a {kind}",
                    if kind == "issue" { "decide" } else { "expand" }
                ))
                .into());
            }
            add(
                ctx,
                (&log, &wd, &actor, &file),
                AddRequest {
                    workstream,
                    kind,
                    persona,
                    ..Default::default()
                },
            )?;
        }
        ExchangeCommand::Decide {
            workstream,
            file,
            label,
            actor,
        } => {
            add(
                ctx,
                (&log, &wd, &actor, &file),
                AddRequest {
                    workstream,
                    kind: "issue".into(),
                    label,
                    ..Default::default()
                },
            )?;
        }
        ExchangeCommand::Expand {
            workstream,
            issue,
            file,
            actor,
        } => {
            add(
                ctx,
                (&log, &wd, &actor, &file),
                AddRequest {
                    workstream,
                    kind: "plan".into(),
                    issue: Some(issue.clone()),
                    name: Some(format!("{issue}-plan")),
                    ..Default::default()
                },
            )?;
        }
        ExchangeCommand::Take {
            workstream,
            issue,
            persona,
            sync,
        } => {
            git_jules::capabilities::prompt::require_workstream(&wd, &workstream)?;
            let r = exchange::take(&log, &workstream, &issue, &persona, sync.as_deref())?;
            let won = r.won;
            ctx.ui.print(&Took {
                issue,
                result: SortedDoc(r),
            });
            return Ok(if won {
                0
            } else {
                crate::frontends::context::EXIT_CONFLICT
            });
        }
        ExchangeCommand::Close {
            workstream,
            issue,
            persona,
            commit,
        } => {
            exchange::close(&log, &workstream, &issue, &persona, &commit)?;
            ctx.ui.print(&Closed {
                closed_with: commit,
                issue,
                version: git_jules::JSON_VERSION,
            });
        }
        ExchangeCommand::List { workstream } => {
            if let Some(w) = &workstream {
                git_jules::capabilities::prompt::require_workstream(&wd, w)?;
            }
            let v = exchange::view(&log)?;
            let items: Vec<_> = v
                .artifacts
                .iter()
                .filter(|a| workstream.as_deref().is_none_or(|w| a.workstream == w))
                .collect();
            ctx.ui.print(&Listed {
                artifacts: items,
                version: git_jules::JSON_VERSION,
            });
        }
        ExchangeCommand::Export { dir } => {
            let files = exchange::export(&log, &dir)?;
            ctx.ui.print(&Exported {
                files,
                version: git_jules::JSON_VERSION,
                dir,
            });
        }
        ExchangeCommand::Import { dir, actor } => {
            let added = exchange::import(&log, &wd, &actor, &dir)?;
            ctx.ui.print(&Imported {
                added,
                version: git_jules::JSON_VERSION,
            });
        }
    }
    Ok(0)
}
