//! `git jules sync [REMOTE]`

use git_jules::sync;

use super::ui;
use crate::cli::context::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote (default: the coordination remote `jules.remote`, else the current branch's push remote,
    /// else `origin`)
    pub remote: Option<String>,
    /// Push now, even if `jules.sync.minPushInterval` has not run out since this clone's last push
    #[arg(long)]
    pub now: bool,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let report = sync::sync_configured(&repo, args.remote.as_deref(), args.now)?;
    let remote = &report.remote;
    for s in &report.skipped {
        ui::warn(format!("skipped {}: {}", s.name, s.reason));
    }
    for i in &report.invalid {
        ui::warn(format!("skipped commit {} on {}", i.name, i.reason));
    }
    if ctx.ui.json {
        ui::json(&report);
    } else if !ctx.ui.quiet {
        // Like `git push -q` and `git fetch -q`: with -q a successful sync prints nothing (warnings stay).
        for r in &report.refs {
            if r.action != sync::Action::UpToDate {
                ui::out(format!(
                    "{:<15} {} {}",
                    r.action.as_str(),
                    &r.tip[..12],
                    r.name
                ));
            }
        }
        for p in &report.pruned {
            ui::status(format!("pruned {p}: {remote} no longer has it"));
        }
        if let Some(secs) = report.push_deferred_secs {
            ui::status(format!(
                "push deferred: jules.sync.minPushInterval allows the next push in {secs} s; the news waits \
                 (`git jules sync --now` pushes now)"
            ));
        } else if !report.changed() {
            ui::status(format!("up to date with {remote}"));
        }
    }
    Ok(0)
}
