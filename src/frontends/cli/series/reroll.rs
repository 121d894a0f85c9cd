//! `series reroll` and `series undo`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context as _};
use git_jules::capabilities::series::journal;
use git_jules::capabilities::series::reroll::{self, Action, ChangeKind, MessageEdit, Rerolled};
use git_jules::Error;
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without --drop or --move, the working-tree changes (staged, unstaged and new files that are not \
ignored) are folded into patch N and the later patches are replayed on top, in memory; with --message, --summary or \
--rationale patch N is reworded too (or only reworded, when nothing changed). The old tip is kept under \
refs/jules/backup/series/NAME/K; `git jules series undo` restores it.\n\
Exit codes: 0 done, 2 usage or error, 3 a patch no longer applies (nothing was changed, the changes stay in the \
working tree)."
)]
pub struct RerollArgs {
    /// The patch to fold into, reword or drop (1-based, as `series status` numbers them); without N (and
    /// without --move) reroll only finishes an interrupted rewrite
    #[arg(value_name = "N")]
    pub patch: Option<usize>,
    /// Remove patch N from the series
    #[arg(long, requires = "patch", conflicts_with_all = ["move_", "message", "summary", "rationale", "rationale_file"])]
    pub drop: bool,
    /// Move patch FROM to position TO (`--move 3:1`)
    #[arg(long = "move", value_name = "FROM:TO", conflicts_with_all = ["patch", "message", "summary", "rationale", "rationale_file"])]
    pub move_: Option<String>,
    /// Patch N's new message, whole (keep its `Rationale:` trailer)
    #[arg(long, short = 'm', conflicts_with_all = ["summary", "rationale", "rationale_file"])]
    pub message: Option<String>,
    /// Patch N's new summary line (the rest of the message is kept)
    #[arg(long, short = 's')]
    pub summary: Option<String>,
    /// Patch N's new rationale
    #[arg(long, short = 'r', conflicts_with = "rationale_file")]
    pub rationale: Option<String>,
    /// Read patch N's new rationale from FILE (`-` for stdin)
    #[arg(short = 'F', long = "rationale-file", value_name = "FILE")]
    pub rationale_file: Option<PathBuf>,
    /// Measure the series against this base instead of the configured one
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// When PERSONA has recorded versions of this series, record the rerolled series as the next one
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

#[derive(Debug, clap::Args)]
#[command(
    after_help = "The current tip becomes a new backup itself, so `undo` twice returns to where it started. \
List the backups with `git for-each-ref refs/jules/backup/series/NAME/`."
)]
pub struct UndoArgs {
    /// The backup number to restore (default: the latest)
    #[arg(value_name = "BACKUP")]
    pub number: Option<u64>,
}

fn parse_move(text: &str) -> anyhow::Result<(usize, usize)> {
    let parsed = text
        .split_once(':')
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
    match parsed {
        Some(p) => Ok(p),
        None => bail!(Error::usage(format!(
            "--move takes FROM:TO (two patch numbers, like 3:1), not {text:?}"
        ))),
    }
}

pub fn reroll(ctx: &Context, a: RerollArgs) -> anyhow::Result<i32> {
    if a.patch.is_none() && a.move_.is_none() {
        // `git jules series reroll` alone: what the interrupted-operation hint names.
        let repo = ctx.open()?;
        return match journal::recover(&repo)? {
            Some(r) => {
                print_recovered(ctx, &r);
                Ok(0)
            }
            None => bail!(Error::usage(
                "nothing was interrupted; reroll takes the patch to change (`series reroll N`) or --move FROM:TO"
            )),
        };
    }
    let action = if let Some(m) = &a.move_ {
        let (from, to) = parse_move(m)?;
        Action::Move { from, to }
    } else {
        let patch = a.patch.expect("N or --move: checked above");
        if a.drop {
            Action::Drop { patch }
        } else {
            let rationale = match (&a.rationale, &a.rationale_file) {
                (Some(r), _) => Some(r.clone()),
                (None, Some(p)) if p.as_os_str() == "-" => {
                    let mut text = String::new();
                    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                        .context("reading the rationale from stdin (it must be UTF-8)")?;
                    Some(text)
                }
                (None, Some(p)) => Some(
                    std::fs::read_to_string(p)
                        .with_context(|| format!("reading the rationale from {}", p.display()))?,
                ),
                (None, None) => None,
            };
            Action::Fold {
                patch,
                message: MessageEdit {
                    message: a.message.clone(),
                    summary: a.summary.clone(),
                    rationale,
                },
            }
        }
    };
    let repo = ctx.open()?;
    // A rerun finishes an interrupted rewrite, and does only that: the arguments were for the state before it.
    if let Some(r) = journal::recover(&repo)? {
        print_recovered(ctx, &r);
        return Ok(0);
    }
    let done = reroll::reroll(&repo, action, a.base.as_deref(), &crash_hook)?;
    print(ctx, &done);
    // A reroll after a review of the latest recorded version answers it: the answer is the next version
    // (issue 26). Later rerolls wait for the next `series format` or `series version`.
    if let Some(persona) = &a.persona {
        if git_jules::capabilities::series::series_of_branch(&done.branch).is_some()
            && git_jules::capabilities::series::version::latest_was_reviewed(
                &repo,
                persona,
                &done.series,
            )?
        {
            let r = git_jules::capabilities::series::version::record(
                &repo,
                persona,
                Some(&done.series),
                a.base.as_deref(),
            )?;
            ctx.ui.status(format!(
                "{}@v{} recorded ({})",
                r.series, r.version.record.number, r.ref_name
            ));
        }
    }
    Ok(0)
}

pub fn undo(ctx: &Context, a: UndoArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    // Undo after an interrupted rewrite finishes it first, then restores the backup it made: it reverts it.
    if let Some(r) = journal::recover(&repo)? {
        ctx.ui
            .human_status(format!("finished the interrupted `{}` first", r.operation));
    }
    let done = reroll::undo(&repo, a.number, &crash_hook)?;
    print(ctx, &done);
    Ok(0)
}

/// Test-only: `JULES_TEST_CRASH_AT=<step>` (`locked`, `journaled`, `switched`, `moved`, `indexed`) aborts the
/// process at that step boundary of a rewrite, as a kill would: no destructor runs, locks stay behind.
fn crash_hook(step: journal::Step) {
    if std::env::var("JULES_TEST_CRASH_AT").is_ok_and(|s| s == step.name()) {
        std::process::abort();
    }
}

fn print_recovered(ctx: &Context, r: &journal::Recovered) {
    ctx.ui.print(&RecoveredDoc(r));
}

/// A rewrite finished after a crash: one line; `{"recovered", "version"}` in JSON, every key sorted (through
/// a JSON map, as it always was).
struct RecoveredDoc<'a>(&'a journal::Recovered);

impl Serialize for RecoveredDoc<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::json!({ "version": git_jules::JSON_VERSION, "recovered": self.0 }).serialize(s)
    }
}

impl Print for RecoveredDoc<'_> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let r = self.0;
        writeln!(
            out,
            "finished the interrupted `{}`: {} is at {} (was {}); run the command again if it was not this one, `git jules series undo` reverts it",
            r.operation,
            r.branch,
            r.new_tip.to_hex_with_len(7),
            r.old_tip.to_hex_with_len(7)
        )
    }
}

fn print(ctx: &Context, r: &Rerolled) {
    ctx.ui.print(&Rewritten(r));
}

fn short(id: gix::ObjectId) -> String {
    id.to_hex_with_len(7).to_string()
}

/// A range-diff-like summary: `old: id = new: id summary` (`=` same change, `!` changed, `<` dropped, `>` new),
/// between what was done and where the backup is; the library's `Rerolled` in JSON.
#[derive(Serialize)]
#[serde(transparent)]
struct Rewritten<'a>(&'a Rerolled);

impl Print for Rewritten<'_> {
    fn human_status(&self, _: &Style) -> Vec<String> {
        let r = self.0;
        vec![match (r.operation, &r.restored) {
            ("undo", Some(b)) => format!(
                "restored backup {} of {} ({})",
                b.number,
                r.branch,
                short(b.commit)
            ),
            _ => format!(
                "rewrote {} ({}): {} -> {}",
                r.branch,
                r.operation,
                short(r.old_tip),
                short(r.new_tip)
            ),
        }]
    }
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let r = self.0;
        let width = r
            .patches
            .iter()
            .map(|p| p.index)
            .chain(r.dropped.iter().map(|d| d.old_index))
            .max()
            .unwrap_or(1)
            .to_string()
            .len();
        for p in &r.patches {
            let (sym, note) = match p.change {
                ChangeKind::Unchanged => ("=", "unchanged".to_owned()),
                ChangeKind::Rebased => (
                    "=",
                    if p.same_tree {
                        "same diff, same tree".to_owned()
                    } else {
                        "same diff".to_owned()
                    },
                ),
                ChangeKind::Reworded => ("!", "reworded, same diff".to_owned()),
                ChangeKind::Changed => ("!", "diff changed".to_owned()),
                ChangeKind::New => (">", "new".to_owned()),
            };
            let moved = match p.old_index {
                Some(o) if o != p.index => format!(", moved from {o}"),
                _ => String::new(),
            };
            let old = match (p.old_index, p.old_commit) {
                (Some(i), Some(c)) => format!("{i:>width$}: {}", short(c)),
                _ => format!("{:>width$}  {}", "-", "-".repeat(7)),
            };
            let sym = match sym {
                "=" => style.green(sym),
                ">" => style.green(sym),
                _ => style.yellow(sym),
            };
            writeln!(
                out,
                "{old} {sym} {:>width$}: {} {} ({note}{moved})",
                p.index,
                short(p.commit),
                p.summary
            )?;
        }
        for d in &r.dropped {
            writeln!(
                out,
                "{:>width$}: {} {} {:>width$}  {} {} (dropped)",
                d.old_index,
                short(d.old_commit),
                style.red("<"),
                "-",
                "-".repeat(7),
                d.summary
            )?;
        }
        Ok(())
    }
    fn human_status_after(&self, _: &Style) -> Vec<String> {
        vec![format!(
            "backup: {} ({}); `git jules series undo` restores it",
            self.0.backup.name,
            short(self.0.backup.commit)
        )]
    }
}
