//! `git jules log held-back [drop|resign]`: the events the last sync held back, and settling them
//! (`git_jules::heldback`).

use git_jules::heldback::{self, Settle, Which};

use crate::cli::context::Context;

#[derive(Debug, clap::Args)]
pub struct HeldBackArgs {
    #[command(subcommand)]
    pub action: Option<HeldBackAction>,
}

#[derive(Debug, clap::Subcommand)]
pub enum HeldBackAction {
    /// Leave the events out of the local log (a backup ref keeps the old log); the rest stays, same ids
    Drop(SettleArgs),
    /// Sign the events again with their persona's key as configured now (same ids); backup as for drop
    Resign(SettleArgs),
}

#[derive(Debug, clap::Args)]
pub struct SettleArgs {
    /// Event ids or unique prefixes (at least 4 hex digits): any event of this clone no remote holds yet
    #[arg(
        required_unless_present = "all",
        conflicts_with = "all",
        value_name = "ID"
    )]
    pub ids: Vec<String>,
    /// Every event the last sync held back
    #[arg(long)]
    pub all: bool,
}

pub(super) fn run(ctx: &Context, repo: &gix::Repository, a: HeldBackArgs) -> anyhow::Result<i32> {
    let Some(action) = a.action else {
        let held = heldback::list(repo)?;
        if ctx.ui.json {
            ctx.ui.json(&held);
        } else if held.is_empty() {
            ctx.ui.status("nothing held back");
        } else {
            for h in &held {
                ctx.ui.out(format!(
                    "{} {} {} {}: {}",
                    &h.id[..12],
                    h.log,
                    h.kind,
                    h.actor,
                    h.reason
                ));
            }
        }
        return Ok(0);
    };
    let (settle, args) = match action {
        HeldBackAction::Drop(s) => (Settle::Drop, s),
        HeldBackAction::Resign(s) => (Settle::Resign, s),
    };
    let which = if args.all {
        Which::HeldBack
    } else {
        Which::Ids(args.ids)
    };
    let settled = heldback::settle(repo, &which, settle)?;
    if ctx.ui.json {
        ctx.ui.json(&settled);
        return Ok(0);
    }
    for s in &settled {
        let verb = match s.action {
            Settle::Drop => "dropped",
            Settle::Resign => "re-signed",
        };
        let state = s
            .signature
            .as_ref()
            .map(|st| format!(" ({})", st.describe()))
            .unwrap_or_default();
        ctx.ui.out(format!(
            "{verb} {} ({} by {}) on {}{state}; backup: {}",
            &s.id[..12],
            s.kind,
            s.actor,
            s.log,
            s.backup
        ));
    }
    Ok(0)
}
