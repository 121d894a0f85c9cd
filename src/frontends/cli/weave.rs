//! `git jules weave`: integrate branches, ranges and patch files onto the integration branch in memory.

use std::io::Write;
use std::path::PathBuf;

use anyhow::bail;
use git_jules::capabilities::weave::{self, input::Spec, persona::PersonaMap, report, Report};
use git_jules::Error;

use crate::frontends::context::{Context, EXIT_CHECK_FAILED, EXIT_OK};
use crate::frontends::interrupt;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// As given on the command line
    Given,
    /// Inputs touching disjoint lines first, so that the most apply
    Smart,
}

/// `--empty`, as `git am --empty`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EmptyMode {
    /// Report mails without a diff (cover letters, empty patches) as skipped and go on
    Drop,
    /// Record them as empty commits with their message
    Keep,
    /// Fail the input that holds one
    Stop,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit codes: 0 every input applied (or was woven already), 1 an input was skipped \
(conflict, unusable patch) or dropped by --verify, 2 usage or error, 3 the integration branch moved meanwhile, \
130 interrupted.\nSee docs/weave.md for input formats, the persona map, the JSON report and the mails."
)]
pub struct Args {
    /// Branches or revisions (jules/<persona>/…), ranges A..B, patch files (format-patch, mbox, plain diff)
    /// or directories of them, in the order to weave them; a name that exists as a file is a patch file
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<String>,
    /// Also weave the local branches matching GLOB (`*` matches `/` too; integration and staging branches
    /// are left out), in name order (repeatable)
    #[arg(long = "branches", value_name = "GLOB")]
    pub branches: Vec<String>,
    /// The base to start from (default: the integration branch's julesBase, then main, master, origin/main,
    /// origin/master)
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// The integration branch (default: jules/integration/sprint-N for the current sprint, else
    /// jules/integration/weave)
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// Report what would apply and conflict; write nothing (no objects, refs or mail)
    #[arg(long)]
    pub check: bool,
    /// The order to weave in
    #[arg(long, value_enum, default_value_t = Order::Given)]
    pub order: Order,
    /// A file of `PATTERN = PERSONA` lines deciding who wrote which input (see docs/weave.md)
    #[arg(long, value_name = "FILE")]
    pub persona_map: Option<PathBuf>,
    /// Run CMD (with `sh -c`) on the woven tip; when it fails, drop the first input that breaks it and
    /// weave the rest again
    #[arg(long, value_name = "CMD")]
    pub verify: Option<String>,
    /// With --verify: ignore cached results
    #[arg(long, requires = "verify")]
    pub force: bool,
    /// With --verify: where to create the temporary worktrees (default: jules.verify.worktreeDir, else
    /// /dev/shm when it has 1 GiB free, else the temp directory)
    #[arg(long, value_name = "DIR", requires = "verify")]
    pub worktree_dir: Option<PathBuf>,
    /// The sender of conflict mails
    #[arg(
        long,
        env = "JULES_PERSONA",
        default_value = "weaver",
        value_name = "PERSONA"
    )]
    pub from: String,
    /// Do not mail the authors of skipped inputs
    #[arg(long)]
    pub no_mail: bool,
    /// Start from the base even when the integration branch already contains it (its old tip is kept
    /// under refs/jules/backup/weave/)
    #[arg(long)]
    pub fresh: bool,
    /// Remove N leading components from the paths of patch files' diffs, as `git apply -pN` (default: 1
    /// for git diffs, guessed for traditional ones)
    #[arg(short = 'p', value_name = "N")]
    pub strip: Option<usize>,
    /// What to do with mails that carry no diff (cover letters, empty patches)
    #[arg(long, value_enum, default_value_t = EmptyMode::Drop)]
    pub empty: EmptyMode,
    /// Print the report as Markdown
    #[arg(long)]
    pub markdown: bool,
}

pub fn run(ctx: &Context, a: Args, json: bool) -> anyhow::Result<i32> {
    if json && a.markdown {
        bail!(Error::usage("--json and --markdown exclude each other"));
    }
    let repo = ctx.open()?;
    let specs = a
        .inputs
        .iter()
        .map(|s| Spec::from_arg(&ctx.dir, s))
        .collect();
    let persona_map = match &a.persona_map {
        Some(p) => {
            let path = ctx.dir.join(p);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::io(format!("reading the persona map {}", p.display()), e))?;
            Some(PersonaMap::parse(&text, &p.display().to_string())?)
        }
        None => None,
    };
    let verify = match a.verify.clone() {
        Some(command) => Some(weave::bisect::Options {
            command,
            scratch_dirs: super::verify::worktree_dirs(&repo, a.worktree_dir.clone())?,
            force: a.force,
        }),
        None => None,
    };
    let opts = weave::Options {
        specs,
        branch_globs: a.branches.clone(),
        base: a.base.clone(),
        into: a.into.clone(),
        check: a.check,
        smart: a.order == Order::Smart,
        persona_map,
        verify,
        from: a.from.clone(),
        mail: !a.no_mail,
        fresh: a.fresh,
        strip: a.strip,
        empty: match a.empty {
            EmptyMode::Drop => weave::engine::Empty::Drop,
            EmptyMode::Keep => weave::engine::Empty::Keep,
            EmptyMode::Stop => weave::engine::Empty::Stop,
        },
    };
    let interrupt = interrupt::install();
    let report = match weave::weave(&repo, &opts, interrupt) {
        Ok(r) => r,
        Err(e) if interrupt.load(std::sync::atomic::Ordering::SeqCst) => {
            ctx.ui.status(format!("{e}"));
            return Ok(interrupt::EXIT_INTERRUPTED);
        }
        Err(e) => return Err(e.into()),
    };
    ctx.ui.print(&Woven {
        report: &report,
        markdown: a.markdown,
    });
    Ok(if report.clean() {
        EXIT_OK
    } else {
        EXIT_CHECK_FAILED
    })
}

/// The weave's report: its document in JSON, its table with `--markdown`; for a person one entry an input
/// with what came of it (conflicts, leases, counterparts, verify output, mail), and on stderr what the run
/// would write or did.
#[derive(serde::Serialize)]
#[serde(transparent)]
struct Woven<'a> {
    report: &'a Report,
    #[serde(skip)]
    markdown: bool,
}

impl Print for Woven<'_> {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let r = self.report;
        if self.markdown {
            return writeln!(out, "{}", r.to_markdown());
        }
        for i in r.inputs() {
            let (word, colored) = match i.status {
                report::Status::Applied => ("applied", style.green("applied")),
                report::Status::Already => ("already", style.dim("already")),
                report::Status::Conflict => ("conflict", style.red("conflict")),
                report::Status::Dropped => ("dropped", style.red("dropped")),
                report::Status::Error => ("error", style.red("error")),
                report::Status::Skipped => ("skipped", style.dim("skipped")),
            };
            let pad = " ".repeat(9usize.saturating_sub(word.len()));
            let commits = if i.status == report::Status::Applied {
                let ids: Vec<String> = i
                    .commits
                    .iter()
                    .map(|c| style.yellow(&c.commit.to_hex_with_len(7).to_string()))
                    .collect();
                format!("  {}", ids.join(" "))
            } else {
                String::new()
            };
            writeln!(
                out,
                "{colored}{pad}{} ({}){commits}",
                style.text(&i.input),
                style.text(i.persona.as_deref().unwrap_or("persona unknown"))
            )?;
            if let Some(p) = &i.prediction {
                let what = if p.applies {
                    "predicted to apply".to_owned()
                } else {
                    let with: Vec<String> = p
                        .overlaps
                        .iter()
                        .map(|o| {
                            if o.lines == [0, 0] {
                                format!("{} ({})", o.input, o.path)
                            } else {
                                format!("{} ({}:{}-{})", o.input, o.path, o.lines[0], o.lines[1])
                            }
                        })
                        .collect();
                    format!(
                        "predicted to conflict with {}",
                        style.text(&with.join(", "))
                    )
                };
                writeln!(out, "         {}", style.dim(&what))?;
            }
            for n in &i.notes {
                writeln!(out, "         {}", style.dim(&style.text(n)))?;
            }
            // Paths, reasons, lease holders and counterparts come from the woven inputs and the logs.
            for f in &i.conflicts {
                writeln!(
                    out,
                    "         {}: {}",
                    style.text(&f.path),
                    style.text(&f.reason)
                )?;
                for l in &f.leases {
                    writeln!(
                        out,
                        "           under lease {} of {} until {}{}",
                        &l.lease[..12],
                        style.text(&l.persona),
                        l.expires_at,
                        l.reason
                            .as_deref()
                            .map(|r| format!(": {}", style.text(r)))
                            .unwrap_or_default()
                    )?;
                }
                for h in &f.hunks {
                    writeln!(
                        out,
                        "           hunk {} (lines {}-{} of {})",
                        style.text(&h.header),
                        h.lines[0],
                        h.lines[1],
                        style.text(&r.into)
                    )?;
                    for c in &h.counterparts {
                        writeln!(
                            out,
                            "             {}",
                            style.text(&report::counterpart_line(c))
                        )?;
                    }
                }
                for c in &f.counterparts {
                    writeln!(
                        out,
                        "           {}",
                        style.text(&report::counterpart_line(c))
                    )?;
                }
            }
            for sk in &i.skipped {
                writeln!(
                    out,
                    "         {}",
                    style.dim(&format!(
                        "skipped: {}: {}",
                        sk.reason.as_str(),
                        style.text(&sk.name)
                    ))
                )?;
            }
            if let Some(e) = &i.error {
                writeln!(out, "         {}", style.text(&e.to_string()))?;
            }
            if let Some(v) = &i.verify {
                writeln!(
                    out,
                    "         `{}` fails on {} (exit {})",
                    v.command,
                    v.commit.to_hex_with_len(7),
                    v.exit_code.map_or("?".into(), |c| c.to_string())
                )?;
                if let Some(t) = v.tail.as_deref().filter(|t| !t.trim().is_empty()) {
                    for l in t.lines() {
                        writeln!(out, "           | {}", style.text(l))?;
                    }
                }
            }
            if let Some(m) = &i.mail {
                let what = match m.status.as_str() {
                    "sent" => format!("mailed {} ({})", m.to, m.msg_type),
                    "already-sent" => format!("{} was mailed about this before", m.to),
                    _ => format!("would mail {} ({})", m.to, m.msg_type),
                };
                writeln!(out, "         {}", style.dim(&what))?;
            }
        }
        Ok(())
    }

    fn human_status(&self, _: &Style) -> Vec<String> {
        let r = self.report;
        if self.markdown || !r.check {
            return Vec::new();
        }
        vec![format!(
            "check only: nothing is written (base {} at {}, onto {})",
            r.base.name,
            r.base.commit.to_hex_with_len(7),
            r.into
        )]
    }

    fn human_status_after(&self, _: &Style) -> Vec<String> {
        let r = self.report;
        if self.markdown {
            return Vec::new();
        }
        let mut lines = Vec::new();
        if let Some(v) = &r.verify {
            let line = if v.start_fails {
                format!(
                    "verify: `{}` fails before any input of this run; nothing could be blamed",
                    v.command
                )
            } else if v.passed {
                format!(
                    "verify: `{}` passes on the tip ({} checks)",
                    v.command, v.checks
                )
            } else {
                format!("verify: `{}` fails", v.command)
            };
            lines.push(line);
        }
        let from = r
            .previous
            .map(|p| p.to_hex_with_len(7).to_string())
            .unwrap_or_else(|| "(new)".into());
        lines.push(format!(
            "{}{}: {} -> {} ({} applied, {} already, {} conflicted, {} dropped, {} failed, {} skipped){}",
            if r.check { "would move " } else { "" },
            r.into,
            from,
            r.tip.to_hex_with_len(7),
            r.applied.len(),
            r.already.len(),
            r.conflicted.len(),
            r.dropped.len(),
            r.failed.len(),
            r.skipped.len(),
            r.backup
                .as_deref()
                .map(|b| format!("; old tip kept as {b}"))
                .unwrap_or_default()
        ));
        lines
    }
}
