//! `git jules sync [REMOTE]`

use git_jules::{capabilities::lease, store::sync};

use std::io::Write;

use crate::frontends::context::{Context, EXIT_CHECK_FAILED};
use crate::frontends::ui::{Print, Style};

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

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let from = args.remind_from.unwrap_or_else(|| "scheduler".into());
    let synced = lease::sync_and_remind(&repo, args.remote.as_deref(), args.now, &from)?;
    if let Some(e) = &synced.remind_error {
        ctx.ui.warn(format!("lease reminders not sent: {e}"));
    }
    let report = &synced.report;
    let remote = report.remote.clone();
    for s in &report.skipped {
        ctx.ui.warn(format!("skipped {}: {}", s.name, s.reason));
    }
    for i in &report.invalid {
        ctx.ui
            .warn(format!("skipped commit {} on {}", i.name, i.reason));
    }
    for r in &report.series_refused {
        ctx.ui
            .err(format!("error: {remote} refused {}: {}", r.name, r.reason));
    }
    for h in &report.held_back {
        ctx.ui.err(format!(
            "error: held back {} ({} by {}) on {}: {}",
            &h.id[..12],
            h.kind,
            h.actor,
            h.log,
            h.reason
        ));
    }
    if !report.held_back.is_empty() {
        ctx.ui.hint(
            "everything else was pushed; `git jules log held-back drop --all` leaves these out of the local \
             log, `git jules log held-back resign --all` signs them again with their persona's key (a backup \
             ref keeps the old log either way)",
        );
    }
    // A refused version ref is a push the remote refused, which sync reports as exit 2 for logs too; the
    // rest of the sync was done and is reported. Events held back (the remote refuses them, everything else
    // was published) exit 1, like a check that failed: the clone is not wedged, but it is not in step.
    let code = if !report.series_refused.is_empty() {
        2
    } else if !report.held_back.is_empty() {
        EXIT_CHECK_FAILED
    } else {
        0
    };
    ctx.ui.print(&synced);
    Ok(code)
}

/// `sync`: the refs that moved and the series pushed on stdout, which `-q` drops like `git push -q`
/// does; on stderr the reminders sent, what was pruned, a deferred push, or that all was in step.
impl Print for lease::SyncWithReminders {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let report = &self.report;
        for r in &report.refs {
            if r.action != sync::Action::UpToDate {
                writeln!(out, "{:<15} {} {}", r.action.as_str(), &r.tip[..12], r.name)?;
            }
        }
        for name in &report.series_pushed {
            writeln!(out, "{:<15} {name}", "pushed")?;
        }
        Ok(())
    }

    fn report_only(&self) -> bool {
        true
    }

    fn human_status(&self, style: &Style) -> Vec<String> {
        super::lease::reminded_lines(style, &self.reminded)
    }

    fn human_status_after(&self, _: &Style) -> Vec<String> {
        let report = &self.report;
        let remote = &report.remote;
        let mut lines: Vec<String> = report
            .pruned
            .iter()
            .map(|p| format!("pruned {p}: {remote} no longer has it"))
            .collect();
        if let Some(secs) = report.push_deferred_secs {
            lines.push(format!(
                "push deferred: jules.sync.minPushInterval allows the next push in {secs} s; the news waits \
                 (`git jules sync --now` pushes now)"
            ));
            for name in &report.series_deferred {
                lines.push(format!("waiting to push {name}"));
            }
        } else if !report.changed()
            && report.series_pushed.is_empty()
            && report.series_refused.is_empty()
            && report.held_back.is_empty()
        {
            lines.push(format!("up to date with {remote}"));
        }
        lines
    }
}
