//! `git jules mail claim`.

use git_jules::mail::api;
use git_jules::mail::claim::Outcome;

use super::PersonaArg;
use crate::cli::context::Context;
use crate::cli::context::EXIT_CONFLICT;

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

pub fn run(ctx: &Context, repo: &gix::Repository, a: ClaimArgs) -> anyhow::Result<i32> {
    let persona = a.persona.required()?;
    let claimed = api::claim(
        &ctx.workspace_of(repo.clone()),
        &a.id,
        &persona,
        a.sync,
        a.remote.as_deref(),
    )?;
    super::warn_unknown(&ctx.ui, &claimed.warnings);
    if ctx.ui.json {
        ctx.ui.json(&claimed);
    }
    let report = &claimed.report;
    let short = &report.message[..12];
    Ok(match &report.outcome {
        Outcome::Won { lock } => {
            if !ctx.ui.json {
                let how = match (lock, &report.remote) {
                    (true, Some(r)) => format!(" (the lock on {r} is ours)"),
                    (true, None) => " (through the remote lock)".into(),
                    (false, _) => " (provisional: `claim --sync` makes it final)".into(),
                };
                ctx.ui.out(format!(
                    "{} {persona} holds {short}{how}",
                    ctx.ui.green("won:")
                ));
            }
            0
        }
        Outcome::Lost { winner, lock } => {
            if !ctx.ui.json {
                ctx.ui.out(format!(
                    "{} {winner} holds {short}{}",
                    ctx.ui.red("lost:"),
                    if *lock { "" } else { " (provisional)" }
                ));
            }
            EXIT_CONFLICT
        }
    })
}
