//! `git jules mail claim`.

use git_jules::mail::claim::{self, Outcome};
use git_jules::mail::ops;
use serde::Serialize;

use super::{Context, PersonaArg, JSON_VERSION};
use crate::cli::{ui, EXIT_CONFLICT};

#[derive(Debug, clap::Args)]
pub struct ClaimArgs {
    /// The message (an id or unique prefix)
    pub id: String,
    #[command(flatten)]
    pub persona: PersonaArg,
    /// Take the remote ref as the lock: sync, push the claim, and report it won only once the remote
    /// accepted it
    #[arg(long)]
    pub sync: bool,
    /// The remote for --sync (default: the current branch's push remote, else `origin`)
    #[arg(long, value_name = "REMOTE", requires = "sync")]
    pub remote: Option<String>,
}

#[derive(Serialize)]
struct Out<'a> {
    version: u32,
    #[serde(flatten)]
    report: &'a claim::ClaimReport,
}

/// Exit 0 when the persona holds the claim, 3 when somebody else does.
pub fn run(ctx: &Context, repo: &gix::Repository, a: ClaimArgs) -> anyhow::Result<i32> {
    let persona = a.persona.checked(ctx, repo)?;
    let log = ops::log(repo)?;
    let report = if a.sync {
        let remote = match a.remote {
            Some(r) => r,
            None => git_jules::sync::default_remote(repo)?,
        };
        claim::claim_synced(&log, &remote, &persona, &a.id)?
    } else {
        claim::claim(&log, &persona, &a.id)?
    };
    if ctx.ui.json {
        ui::json(&Out {
            version: JSON_VERSION,
            report: &report,
        });
    }
    let short = &report.message[..12];
    Ok(match &report.outcome {
        Outcome::Won { lock } => {
            if !ctx.ui.json {
                let how = match (lock, &report.remote) {
                    (true, Some(r)) => format!(" (the lock on {r} is ours)"),
                    (true, None) => " (through the remote lock)".into(),
                    (false, _) => " (provisional: `claim --sync` makes it final)".into(),
                };
                ui::out(format!(
                    "{} {persona} holds {short}{how}",
                    ctx.ui.green("won:")
                ));
            }
            0
        }
        Outcome::Lost { winner, lock } => {
            if !ctx.ui.json {
                ui::out(format!(
                    "{} {winner} holds {short}{}",
                    ctx.ui.red("lost:"),
                    if *lock { "" } else { " (provisional)" }
                ));
            }
            EXIT_CONFLICT
        }
    })
}
