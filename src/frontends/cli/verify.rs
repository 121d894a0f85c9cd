//! `git jules verify`: run a command on every commit of base..REV, in temporary worktrees, with a cache.

use std::io::Write;
use std::path::PathBuf;

use anyhow::bail;
use git_jules::capabilities::series::api;
use git_jules::capabilities::verify::{self, report::format_ms, CommitResult, Outcome, Report};
use git_jules::Error;

use crate::frontends::context::{Context, EXIT_CHECK_FAILED};
use crate::frontends::interrupt;
use crate::frontends::ui::{self, Print, Style};

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
    // Said before the run, for a person: the JSON document names the base, a Markdown table is for a file.
    if !a.markdown {
        ctx.ui
            .human_status(format!("base: {}", plan.base.describe()));
    }
    let jobs = plan.options.jobs;

    let interrupt = interrupt::install();
    // One live line on a terminal (`[12/30] verifying, 2 running`) that the final table replaces.
    // `interactive` is off under `--json` and `-q`.
    let total = if ctx.ui.interactive && !a.markdown {
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

    ctx.ui.print(&Verified {
        report: &report,
        base: &base_name,
        rev: &a.rev,
        on_base,
        markdown: a.markdown,
    });
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

pub(super) fn line(style: &Style, r: &CommitResult) -> String {
    let word = match r.result {
        Outcome::Pass => style.green("pass"),
        Outcome::Fail => style.red("FAIL"),
        Outcome::Skipped => style.dim("skipped"),
    };
    format!(
        "{:>3} {} {:<7} {:>9}{} {}",
        r.index,
        style.yellow(&r.short),
        word,
        r.duration_ms.map(format_ms).unwrap_or_default(),
        if r.cached { " (cached)" } else { "         " },
        r.summary
    )
}

/// A verify report as `verify` and a refused `series finalize` show it: one line a commit, the first
/// failure's output; on stderr how it ended. The JSON document is the report; `--markdown` its table.
#[derive(serde::Serialize)]
#[serde(transparent)]
pub(super) struct Verified<'a> {
    pub report: &'a Report,
    #[serde(skip)]
    pub base: &'a str,
    #[serde(skip)]
    pub rev: &'a str,
    /// REV is the base itself (a hint says how to start a series).
    #[serde(skip)]
    pub on_base: bool,
    #[serde(skip)]
    pub markdown: bool,
}

impl Print for Verified<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let report = self.report;
        if self.markdown {
            return writeln!(out, "{}", report.to_markdown());
        }
        let n = report.commits.len();
        for r in &report.commits {
            writeln!(out, "{}", line(style, r))?;
        }
        if let Some(f) = report.first_failure() {
            writeln!(
                out,
                "patch {}/{n} {} fails: {}",
                f.index, f.short, f.summary
            )?;
            if let Some(tail) = f.tail.as_deref().filter(|t| !t.trim().is_empty()) {
                writeln!(out, "--- output of patch {} (last lines) ---", f.index)?;
                writeln!(out, "{tail}")?;
            }
        }
        Ok(())
    }

    fn human_status_after(&self, _: &Style) -> Vec<String> {
        let (report, base, rev) = (self.report, self.base, self.rev);
        let n = report.commits.len();
        if self.markdown {
            return Vec::new();
        }
        if n == 0 {
            let mut lines = vec![format!("nothing to verify: {base}..{rev} is empty")];
            if self.on_base {
                lines.push(format!(
                    "hint: {rev} is on the base {base} itself; start a series with `git jules series start NAME`"
                ));
            }
            return lines;
        }
        match report.first_failure() {
            Some(f) if f.cached => {
                vec!["hint: this failure is cached; `--force` runs it again".into()]
            }
            Some(_) => Vec::new(),
            None if report.interrupted => vec!["interrupted: not every patch was verified".into()],
            None => vec![format!(
                "{} ({} ran, {} cached, {})",
                if n == 1 {
                    "the patch passes".to_owned()
                } else {
                    format!("all {n} patches pass")
                },
                report.ran,
                report.cached,
                format_ms(report.duration_ms)
            )],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::ui::{Buffer, Ui};
    use git_jules::capabilities::base::{Base, BaseSource};

    fn report(commits: Vec<CommitResult>, first_failure: Option<usize>) -> Report {
        Report {
            version: 1,
            command: "make test".into(),
            base: Base {
                name: "main".into(),
                commit: gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
                source: BaseSource::Explicit,
            },
            tip: gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
            passed: first_failure.is_none(),
            first_failure,
            interrupted: false,
            keep_going: false,
            jobs: 1,
            ran: 1,
            cached: 1,
            duration_ms: 1500,
            commits,
        }
    }

    fn commit(index: usize, result: Outcome, cached: bool, tail: Option<&str>) -> CommitResult {
        CommitResult {
            index,
            commit: gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
            short: format!("abc{index}def"),
            tree: gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
            summary: format!("patch {index}"),
            result,
            cached,
            duration_ms: Some(1200),
            exit_code: Some(if result == Outcome::Fail { 2 } else { 0 }),
            tail: tail.map(Into::into),
        }
    }

    /// A failing verify as a person reads it: one line a commit, the failure and its output on stdout, the
    /// cached-failure hint on stderr after them; the same value in JSON is the report alone, no status.
    /// (Catches a printer whose bytes drift from the table `verify` and a refused `finalize` printed.)
    #[test]
    fn a_failing_verify_prints_its_table_then_the_failure() {
        let r = report(
            vec![
                commit(1, Outcome::Pass, false, None),
                commit(2, Outcome::Fail, true, Some("assert failed\n")),
            ],
            Some(2),
        );
        let v = Verified {
            report: &r,
            base: "main",
            rev: "HEAD",
            on_base: false,
            markdown: false,
        };
        let mut human = Vec::new();
        v.human(&mut human, &Style::default()).unwrap();
        assert_eq!(
            String::from_utf8(human).unwrap(),
            "  1 abc1def pass       1.20 s          patch 1\n\
             \x20 2 abc2def FAIL       1.20 s (cached) patch 2\n\
             patch 2/2 abc2def fails: patch 2\n\
             --- output of patch 2 (last lines) ---\n\
             assert failed\n\n"
        );

        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(false, Box::new(out.clone()), Box::new(err.clone())).print(&v);
        assert!(out.text().starts_with("  1 abc1def pass"), "{}", out.text());
        assert_eq!(
            err.text(),
            "hint: this failure is cached; `--force` runs it again\n"
        );

        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(true, Box::new(out.clone()), Box::new(err.clone())).print(&v);
        assert_eq!(err.text(), "");
        assert_eq!(
            out.text(),
            format!("{}\n", ui::versioned(&r).unwrap()),
            "the document is the report, as `ui.json(&report)` printed it"
        );
    }
}
