//! `git jules log held-back [drop|resign]`: the events the last sync held back, and settling them
//! (`git_jules::store::heldback`).

use std::io::Write;

use git_jules::store::heldback::{self, HeldBack, Settle, Which};
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
        ctx.ui.print(&Held(heldback::list(repo)?));
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
    ctx.ui
        .print(&Settled(heldback::settle(repo, &which, settle)?));
    Ok(0)
}

/// `log held-back`: one line an event held back, or a status line that there is none; the list in JSON.
#[derive(Serialize)]
#[serde(transparent)]
struct Held(Vec<HeldBack>);

impl Print for Held {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        for h in &self.0 {
            writeln!(
                out,
                "{} {} {} {}: {}",
                &h.id[..12],
                h.log,
                h.kind,
                h.actor,
                h.reason
            )?;
        }
        Ok(())
    }
    fn human_status(&self, _: &Style) -> Vec<String> {
        if self.0.is_empty() {
            vec!["nothing held back".into()]
        } else {
            Vec::new()
        }
    }
}

/// `log held-back drop|resign`: one line an event settled, with its backup; the list in JSON.
#[derive(Serialize)]
#[serde(transparent)]
struct Settled(Vec<heldback::Settled>);

impl Print for Settled {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        for s in &self.0 {
            let verb = match s.action {
                Settle::Drop => "dropped",
                Settle::Resign => "re-signed",
            };
            let state = s
                .signature
                .as_ref()
                .map(|st| format!(" ({})", st.describe()))
                .unwrap_or_default();
            writeln!(
                out,
                "{verb} {} ({} by {}) on {}{state}; backup: {}",
                &s.id[..12],
                s.kind,
                s.actor,
                s.log,
                s.backup
            )?;
        }
        Ok(())
    }
}
