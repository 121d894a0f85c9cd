//! `series finalize` and `series abort`.

use std::io::{BufRead as _, IsTerminal as _, Write as _};

use anyhow::bail;
use git_jules::capabilities::series::finalize::{self, Mode, Outcome};
use git_jules::capabilities::verify::{self, CommitResult};
use git_jules::Error;

use super::super::verify as verify_cli;
use crate::frontends::context::{Context, EXIT_CHECK_FAILED};
use crate::frontends::interrupt;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Default (--rebase): fast-forward the base when it did not move, else replay the series onto it \
(in memory). --merge: a merge commit, even when a fast-forward is possible. --ff-only: refuse when the base moved.\n\
Verification uses jules.verify.cmd (or --cmd) and the verify cache; what lands is verified.\n\
Exit codes: 0 done, 1 a patch failed verification, 2 usage or error, 3 the series no longer applies on its base or \
a ref moved meanwhile (nothing was changed), 130 interrupted."
)]
pub struct FinalizeArgs {
    /// Fast-forward, else replay the patches onto the moved base (the default)
    #[arg(long, conflicts_with_all = ["merge", "ff_only"])]
    pub rebase: bool,
    /// Land with a merge commit
    #[arg(long, conflicts_with = "ff_only")]
    pub merge: bool,
    /// Only fast-forward
    #[arg(long)]
    pub ff_only: bool,
    /// Do not verify the patches first
    #[arg(long)]
    pub no_verify: bool,
    /// The verify command (default: jules.verify.cmd)
    #[arg(long, value_name = "CMD", conflicts_with = "no_verify")]
    pub cmd: Option<String>,
    /// How many commits to verify at once (default: jules.verify.jobs, else the number of cores)
    #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: Option<u32>,
    /// Land on this base instead of the configured one
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct AbortArgs {
    /// The series (default: the one HEAD is on)
    pub name: Option<String>,
    /// Do not ask for confirmation (required when stdin is not a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
}

pub fn finalize(ctx: &Context, a: FinalizeArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let mode = if a.merge {
        Mode::Merge
    } else if a.ff_only {
        Mode::FfOnly
    } else {
        Mode::Rebase
    };
    let verify = if a.no_verify {
        None
    } else {
        let settings = verify::Settings::from_config(
            &repo,
            &verify::Overrides {
                cmd: a.cmd.clone(),
                jobs: a.jobs,
                worktree_dir: None,
                temp_dir: std::env::temp_dir(),
            },
        )?;
        let Some(opts) = settings.options(false, false) else {
            bail!(Error::usage(
                "no verify command: set one with `git config jules.verify.cmd CMD`, pass --cmd CMD, or skip verification with --no-verify"
            ));
        };
        Some(opts)
    };
    let opts = finalize::Options {
        mode,
        verify,
        base: a.base.clone(),
    };
    let flag = interrupt::install();
    // `interactive` is off under `--json` (and `-q`): progress lines only for a person at a terminal.
    let progress = ctx.ui.interactive;
    let on_result = |r: &CommitResult| {
        if progress {
            ctx.ui
                .status(format!("  {}", verify_cli::line(&ctx.ui.style(), r)));
        }
    };
    match finalize::finalize(&repo, &opts, flag, &on_result)? {
        Outcome::VerifyFailed(report) => {
            ctx.ui.print(&verify_cli::Verified {
                report: &report,
                base: &report.base.name,
                rev: "HEAD",
                on_base: false,
                markdown: false,
            });
            if report.interrupted {
                ctx.ui.status("interrupted: nothing was changed");
                return Ok(interrupt::EXIT_INTERRUPTED);
            }
            ctx.ui
                .status("finalize refused: a patch fails verification; nothing was changed");
            Ok(EXIT_CHECK_FAILED)
        }
        Outcome::Done(done) => {
            // Leases on what landed end with it (jules.lease.releaseOnFinalize); the landing stands either way.
            if let Ok(persona) = std::env::var("JULES_PERSONA") {
                match git_jules::capabilities::lease::release_after_finalize(
                    &repo,
                    &persona,
                    done.old_base,
                    done.new_base,
                ) {
                    Ok(released) if !released.is_empty() => ctx.ui.status(format!(
                        "released {} lease(s) of {persona} on the landed paths",
                        released.len()
                    )),
                    Ok(_) => {}
                    Err(e) => ctx.ui.warn(format!("leases were not released: {e}")),
                }
            }
            ctx.ui.print(&done);
            Ok(0)
        }
    }
}

pub fn abort(ctx: &Context, a: AbortArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    if !a.yes {
        if !std::io::stdin().is_terminal() {
            bail!(Error::usage(
                "refusing to abort without --yes: stdin is not a terminal to ask for confirmation"
            ));
        }
        let what = a.name.clone().map_or_else(
            || "the current series".to_owned(),
            |n| format!("series {n}"),
        );
        eprint!("Abort {what}? Its branch and config are removed (the tip is kept under refs/jules/backup/). [y/N] ");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            ctx.ui.status("not aborted");
            return Ok(0);
        }
    }
    let done = finalize::abort(&repo, a.name.as_deref())?;
    ctx.ui.print(&done);
    Ok(0)
}

/// `series finalize`: how the base got the series; on stderr what was deleted and where HEAD is.
impl Print for finalize::Finalized {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        let done = self;
        let how = if done.fast_forward {
            "fast-forwarded to"
        } else if done.mode == Mode::Merge {
            "merged"
        } else {
            "got the rebased"
        };
        writeln!(
            out,
            "{}: {how} {} ({} -> {}, {} commit{})",
            done.base.name,
            done.branch,
            done.old_base.to_hex_with_len(7),
            done.new_base.to_hex_with_len(7),
            done.commits.len(),
            if done.commits.len() == 1 { "" } else { "s" }
        )
    }

    fn human_status_after(&self, _: &Style) -> Vec<String> {
        vec![format!(
            "deleted {} (tip kept as {}); HEAD is on {}",
            self.branch, self.backup.name, self.base.name
        )]
    }
}

/// `series abort`: the series gone and its tip kept; on stderr where HEAD is.
impl Print for finalize::Aborted {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        writeln!(
            out,
            "aborted series {}: deleted {} (tip kept as {})",
            self.series, self.branch, self.backup.name
        )
    }

    fn human_status_after(&self, _: &Style) -> Vec<String> {
        self.checked_out
            .iter()
            .map(|c| format!("HEAD is on {c}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::ui::{Buffer, Ui};

    /// `series abort` as a person reads it: what went on stdout, where HEAD is on stderr after it (and
    /// not at all with `-q`); in JSON the value alone, in its field order, no status. (Catches a printer
    /// that moves a line between the streams or drops the status from the human form.)
    #[test]
    fn an_abort_prints_the_series_gone_then_where_head_is() {
        let done = finalize::Aborted {
            series: "fix-parser".into(),
            branch: "series/fix-parser".into(),
            checked_out: Some("main".into()),
            backup: git_jules::store::backup::Backup {
                number: 3,
                name: "refs/jules/backup/fix-parser/3".into(),
                commit: gix::ObjectId::empty_tree(gix::hash::Kind::Sha1),
            },
        };
        let mut human = Vec::new();
        done.human(&mut human, &Style::default()).unwrap();
        assert_eq!(
            String::from_utf8(human).unwrap(),
            "aborted series fix-parser: deleted series/fix-parser (tip kept as refs/jules/backup/fix-parser/3)\n"
        );

        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(false, Box::new(out.clone()), Box::new(err.clone())).print(&done);
        assert_eq!(err.text(), "HEAD is on main\n");
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut ui = Ui::with_writers(false, Box::new(out.clone()), Box::new(err.clone()));
        ui.quiet = true;
        ui.print(&done);
        assert_eq!(err.text(), "");
        assert!(out.text().starts_with("aborted series fix-parser"));

        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(true, Box::new(out.clone()), Box::new(err.clone())).print(&done);
        assert_eq!(err.text(), "");
        assert_eq!(
            out.text(),
            "{\n  \"version\": 1,\n  \"series\": \"fix-parser\",\n  \"branch\": \"series/fix-parser\",\n  \
             \"checked_out\": \"main\",\n  \"backup\": {\n    \"number\": 3,\n    \"ref\": \
             \"refs/jules/backup/fix-parser/3\",\n    \"commit\": \"4b825dc642cb6eb9a060e54bf8d69288fbee4904\"\n  }\n}\n"
        );
    }
}
