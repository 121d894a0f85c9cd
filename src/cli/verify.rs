//! `git jules verify`: run a command on every commit of base..REV, in temporary worktrees, with a cache.

use std::path::PathBuf;

use anyhow::bail;
use git_jules::series::api;
use git_jules::verify::{self, report::format_ms, CommitResult, Outcome, Report};
use git_jules::Error;

use super::{interrupt, ui};
use crate::cli::context::{Context, EXIT_CHECK_FAILED};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 every commit passed, 1 a commit failed, 2 usage or error, 130 interrupted.\n\
Config: jules.verify.cmd (the command), jules.verify.jobs, jules.verify.worktreeDir, branch.<b>.julesBase (the base).\n\
Results are cached as notes on tree objects in refs/notes/jules/verify (see docs/series.md)."
)]
pub struct Args {
    /// The tip to verify (a branch's configured base applies when REV names a local branch)
    #[arg(value_name = "REV", default_value = "HEAD")]
    pub rev: String,
    /// The command, run with `sh -c` at the root of a checkout of each commit (default: jules.verify.cmd)
    #[arg(long, value_name = "CMD")]
    pub cmd: Option<String>,
    /// Verify the commits after this branch or commit (default: the branch's julesBase, then main, master,
    /// origin/main, origin/master)
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// How many commits to run at once (default: jules.verify.jobs, else the number of cores)
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
    /// Run every commit even after one failed
    #[arg(long)]
    pub keep_going: bool,
    /// Ignore cached results and run everything again
    #[arg(long)]
    pub force: bool,
    /// Print the report as a Markdown table on stdout
    #[arg(long)]
    pub markdown: bool,
    /// Where to create the temporary worktrees (default: jules.verify.worktreeDir, else /dev/shm when it has
    /// 1 GiB free, else the temp directory)
    #[arg(long, value_name = "DIR")]
    pub worktree_dir: Option<PathBuf>,
}

pub fn run(ctx: &Context, a: Args, json: bool) -> anyhow::Result<i32> {
    if json && a.markdown {
        bail!(Error::usage("--json and --markdown exclude each other"));
    }
    let ws = ctx.workspace()?;
    let input = api::VerifyInput {
        rev: Some(a.rev.clone()),
        base: a.base.clone(),
        cmd: a.cmd.clone(),
        jobs: a.jobs,
        keep_going: a.keep_going,
        force: a.force,
        worktree_dir: a.worktree_dir.clone(),
    };
    let plan = api::plan(&ws, &input)?;
    let quiet = json || a.markdown;
    if !quiet {
        ui::status(format!("base: {}", plan.base.describe()));
    }
    let jobs = plan.options.jobs;

    let interrupt = interrupt::install();
    // One live line on a terminal (`[12/30] verifying, 2 running`) that the final table replaces.
    let total = if ctx.ui.interactive && !quiet {
        api::count(&ws, &plan)?
    } else {
        0
    };
    let progress = std::sync::Mutex::new((ui::Progress::new(&ctx.ui), 0usize));
    let on_result = |_: &CommitResult| {
        if total == 0 {
            return;
        }
        if let Ok(mut p) = progress.lock() {
            p.1 += 1;
            let done = p.1;
            let running = jobs.min(total.saturating_sub(done));
            p.0.set(&format!("[{done}/{total}] verifying, {running} running"));
        }
    };
    let api::Verified {
        report,
        base: base_name,
        on_base,
    } = api::run(&ws, plan, interrupt, &on_result)?;
    if let Ok(mut p) = progress.lock() {
        p.0.clear();
    }

    if json {
        ui::json(&report);
    } else if a.markdown {
        ui::out(report.to_markdown());
    } else {
        human(ctx, &report, &base_name, &a.rev, on_base);
    }
    Ok(if report.interrupted {
        interrupt::EXIT_INTERRUPTED
    } else if report.passed {
        0
    } else {
        EXIT_CHECK_FAILED
    })
}

/// Where verify worktrees go (for commands that run verify without its other settings).
pub(super) fn worktree_dirs(
    repo: &gix::Repository,
    explicit: Option<PathBuf>,
) -> anyhow::Result<Vec<PathBuf>> {
    let overrides = verify::Overrides {
        worktree_dir: explicit,
        temp_dir: std::env::temp_dir(),
        ..Default::default()
    };
    Ok(verify::Settings::from_config(repo, &overrides)?.scratch_dirs)
}

pub(super) fn line(ctx: &Context, r: &CommitResult) -> String {
    let word = match r.result {
        Outcome::Pass => ctx.ui.green("pass"),
        Outcome::Fail => ctx.ui.red("FAIL"),
        Outcome::Skipped => ctx.ui.dim("skipped"),
    };
    format!(
        "{:>3} {} {:<7} {:>9}{} {}",
        r.index,
        ctx.ui.yellow(&r.short),
        word,
        r.duration_ms.map(format_ms).unwrap_or_default(),
        if r.cached { " (cached)" } else { "         " },
        r.summary
    )
}

pub(super) fn human(ctx: &Context, report: &Report, base: &str, rev: &str, on_base: bool) {
    let n = report.commits.len();
    if n == 0 {
        ui::status(format!("nothing to verify: {base}..{rev} is empty"));
        if on_base {
            ui::status(format!(
                "hint: {rev} is on the base {base} itself; start a series with `git jules series start NAME`"
            ));
        }
        return;
    }
    for r in &report.commits {
        ui::out(line(ctx, r));
    }
    match report.first_failure() {
        Some(f) => {
            ui::out(format!(
                "patch {}/{n} {} fails: {}",
                f.index, f.short, f.summary
            ));
            if let Some(tail) = f.tail.as_deref().filter(|t| !t.trim().is_empty()) {
                ui::out(format!("--- output of patch {} (last lines) ---", f.index));
                ui::out(tail);
            }
            if f.cached {
                ui::status("hint: this failure is cached; `--force` runs it again");
            }
        }
        None if report.interrupted => ui::status("interrupted: not every patch was verified"),
        None => ui::status(format!(
            "{} ({} ran, {} cached, {})",
            if n == 1 {
                "the patch passes".to_owned()
            } else {
                format!("all {n} patches pass")
            },
            report.ran,
            report.cached,
            format_ms(report.duration_ms)
        )),
    }
}
