//! `git jules sync [REMOTE]`

use git_jules::{lease, sync};

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
    /// The sender of due lease reminders (default: $JULES_PERSONA, else `scheduler`)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub remind_from: Option<String>,
}

/// The report, with the leases whose holders this sync reminded.
#[derive(serde::Serialize)]
struct Out {
    #[serde(flatten)]
    report: sync::SyncReport,
    reminded: Vec<lease::Lease>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let mut report = sync::sync_configured(&repo, args.remote.as_deref(), args.now)?;
    // After the fetch, so that a reminder another clone already sent (and recorded) is not sent again; a
    // failure here warns and leaves the sync done.
    let from = args.remind_from.unwrap_or_else(|| "scheduler".into());
    let reminded = match lease::remind_due(&repo, lease::now(&repo), &from) {
        Ok(r) => r,
        Err(e) => {
            ui::warn(format!("lease reminders not sent: {e}"));
            Vec::new()
        }
    };
    if !reminded.is_empty() {
        // Publish the reminders and their records now, not at the next sync.
        let again = sync::sync_configured(&repo, Some(&report.remote), args.now)?;
        report.rounds += again.rounds;
        report.folded += again.folded;
        report.push_deferred_secs = again.push_deferred_secs;
        for r in again.refs {
            match report.refs.iter_mut().find(|x| x.name == r.name) {
                Some(x) if r.action != sync::Action::UpToDate => *x = r,
                Some(_) => {}
                None => report.refs.push(r),
            }
        }
    }
    let remote = report.remote.clone();
    for s in &report.skipped {
        ui::warn(format!("skipped {}: {}", s.name, s.reason));
    }
    for i in &report.invalid {
        ui::warn(format!("skipped commit {} on {}", i.name, i.reason));
    }
    for r in &report.series_refused {
        ui::err(format!("error: {remote} refused {}: {}", r.name, r.reason));
    }
    if ctx.ui.json {
        ui::json(&Out { report, reminded });
        return Ok(0);
    }
    super::lease::say_reminded(&reminded);
    if !ctx.ui.quiet {
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
        for name in &report.series_pushed {
            ui::out(format!("{:<15} {name}", "pushed"));
        }
        for p in &report.pruned {
            ui::status(format!("pruned {p}: {remote} no longer has it"));
        }
        if let Some(secs) = report.push_deferred_secs {
            ui::status(format!(
                "push deferred: jules.sync.minPushInterval allows the next push in {secs} s; the news waits \
                 (`git jules sync --now` pushes now)"
            ));
            for name in &report.series_deferred {
                ui::status(format!("waiting to push {name}"));
            }
        } else if !report.changed()
            && report.series_pushed.is_empty()
            && report.series_refused.is_empty()
        {
            ui::status(format!("up to date with {remote}"));
        }
    }
    // A refused version ref is a push the remote refused, which sync reports as exit 2 for logs too; the
    // rest of the sync was done and is reported above.
    Ok(if report.series_refused.is_empty() {
        0
    } else {
        2
    })
}
