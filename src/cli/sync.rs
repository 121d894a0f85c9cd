//! `git jules sync [REMOTE]`

use git_jules::sync;

use super::{ui, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remote (default: the current branch's push remote, else `origin`)
    pub remote: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let remote = match args.remote {
        Some(r) => r,
        None => sync::default_remote(&repo)?,
    };
    let report = sync::sync(&repo, &remote)?;
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
        if !report.changed() {
            ui::status(format!("up to date with {remote}"));
        }
    }
    Ok(0)
}
