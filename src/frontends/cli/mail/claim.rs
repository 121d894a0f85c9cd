//! `git jules mail claim`.

use std::io::Write;

use git_jules::capabilities::mail::api;
use git_jules::capabilities::mail::claim::Outcome;
use serde::Serialize;

use super::PersonaArg;
use crate::frontends::context::Context;
use crate::frontends::context::EXIT_CONFLICT;
use crate::frontends::ui::{Print, Style};

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
    ctx.ui.print(&Claim {
        claimed: &claimed,
        persona: &persona,
    });
    Ok(if claimed.won() { 0 } else { EXIT_CONFLICT })
}

/// A claim won or lost, and how final it is; the library's `Claimed` in JSON.
struct Claim<'a> {
    claimed: &'a api::Claimed,
    persona: &'a str,
}

impl Serialize for Claim<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.claimed.serialize(s)
    }
}

impl Print for Claim<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let report = &self.claimed.report;
        let short = &report.message[..12];
        match &report.outcome {
            Outcome::Won { lock } => {
                let how = match (lock, &report.remote) {
                    (true, Some(r)) => format!(" (the lock on {r} is ours)"),
                    (true, None) => " (through the remote lock)".into(),
                    (false, _) => " (provisional: `claim --sync` makes it final)".into(),
                };
                writeln!(
                    out,
                    "{} {} holds {short}{how}",
                    style.green("won:"),
                    self.persona
                )
            }
            Outcome::Lost { winner, lock } => writeln!(
                out,
                "{} {winner} holds {short}{}",
                style.red("lost:"),
                if *lock { "" } else { " (provisional)" }
            ),
        }
    }
    fn warnings(&self) -> Vec<String> {
        self.claimed
            .warnings
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}
