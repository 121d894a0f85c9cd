//! `git jules log fsck` and `log checkpoint`.

use std::io::Write;

use git_jules::store::eventlog::{self, Log};
use serde::Serialize;

use crate::frontends::context::{Context, EXIT_CHECK_FAILED};
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
pub struct CheckpointArgs {
    /// The log: `mail`, `state`, … or a full ref under refs/jules/
    pub log: String,
    /// Only when at least N commits were added since the newest checkpoint (for a cron schedule)
    #[arg(long, value_name = "N")]
    pub every: Option<u64>,
}

#[derive(Debug, clap::Args)]
pub struct FsckArgs {
    /// The log to check (default: every log under refs/jules/)
    pub log: Option<String>,
    /// Also recompute every checkpoint on the log from its events and compare
    #[arg(long)]
    pub checkpoints: bool,
}

pub(super) fn fsck(ctx: &Context, repo: &gix::Repository, a: FsckArgs) -> anyhow::Result<i32> {
    let logs = match a.log {
        Some(l) => vec![Log::open(repo, &l)?.name().to_owned()],
        None => eventlog::list_logs(repo)?,
    };
    let mut reports = Vec::new();
    for name in &logs {
        reports.push(Log::open(repo, name)?.fsck()?);
    }
    let mut checkpoints = Vec::new();
    if a.checkpoints {
        for name in &logs {
            let log = Log::open(repo, name)?;
            checkpoints.push(CheckpointFsck {
                log: name.clone(),
                report: git_jules::capabilities::projections::fsck(&log)?,
            });
        }
    }
    let clean = reports.iter().all(|r| r.is_clean())
        && checkpoints.iter().all(|c| c.report.problems.is_empty());
    ctx.ui.print(&Fsck {
        reports,
        checkpoints,
        with_checkpoints: a.checkpoints,
    });
    Ok(if clean { 0 } else { EXIT_CHECK_FAILED })
}

/// `log fsck`: each log's counts and problems, and with `--checkpoints` each checkpoint's; in JSON the
/// reports, or with `--checkpoints` `{"checkpoints", "logs"}` (keys sorted, as it always was).
struct Fsck {
    reports: Vec<eventlog::FsckReport>,
    checkpoints: Vec<CheckpointFsck>,
    with_checkpoints: bool,
}

impl Serialize for Fsck {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.with_checkpoints {
            serde_json::json!({"logs": self.reports, "checkpoints": self.checkpoints}).serialize(s)
        } else {
            self.reports.serialize(s)
        }
    }
}

impl Print for Fsck {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for r in &self.reports {
            writeln!(
                out,
                "{}: {} commits, {} events, {} merges, {} duplicates, {} invalid",
                r.log,
                r.commits,
                r.events,
                r.merges,
                r.duplicates,
                r.invalid.len()
            )?;
            for p in &r.invalid {
                writeln!(
                    out,
                    "  {} {}: {}",
                    style.red("invalid"),
                    p.commit,
                    p.problem
                )?;
            }
            for u in &r.unverified {
                writeln!(
 out,
                    "  {} event {} by {} (commit {}): {}; it carries no authority (jules.requireSigned)",
                    style.red("unverified"),
                    &u.event[..12],
                    u.actor,
                    u.commit,
                    u.signature.describe()
                    )?;
            }
        }
        for c in &self.checkpoints {
            writeln!(
                out,
                "{}: {} checkpoints, {} problems",
                c.log,
                c.report.checked,
                c.report.problems.len()
            )?;
            for p in &c.report.problems {
                writeln!(
                    out,
                    "  {} {}: {}",
                    style.red("checkpoint"),
                    p.commit,
                    p.problem
                )?;
            }
            for s in &c.report.signatures {
                let what = if s.signed { "signed" } else { "plain" };
                let usable = match (&s.reason, s.usable) {
                    (_, true) => "used under jules.requireSigned".to_owned(),
                    (Some(why), false) => format!("not used under jules.requireSigned: {why}"),
                    (None, false) => "not used under jules.requireSigned".to_owned(),
                };
                writeln!(
                    out,
                    "  {what} checkpoint {}: {}; {usable}",
                    s.commit,
                    describe_checkpoint_signature(&s.signature)
                )?;
            }
        }
        Ok(())
    }
}

fn describe_checkpoint_signature(s: &git_jules::store::sign::State) -> String {
    match s {
        git_jules::store::sign::State::Verified { key, persona } => {
            format!("signed by {persona}'s key {key}, allowed for checkpoints")
        }
        git_jules::store::sign::State::KeyNotAllowed { key } => {
            format!("signed by key {key}, not allowed for checkpoints")
        }
        other => other.describe(),
    }
}

#[derive(Serialize)]
struct CheckpointFsck {
    log: String,
    #[serde(flatten)]
    report: git_jules::capabilities::projections::Report,
}

pub(super) fn checkpoint(
    ctx: &Context,
    repo: &gix::Repository,
    a: CheckpointArgs,
) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let written = git_jules::capabilities::projections::write(&log, a.every)?;
    ctx.ui.print(&Checkpointed {
        log: log.name(),
        every: a.every.unwrap_or(0),
        written,
    });
    Ok(0)
}

/// `log checkpoint`: what was written (or why nothing was), and a key the trust roots will not honour as a
/// warning; the library's report in JSON.
struct Checkpointed<'a> {
    log: &'a str,
    every: u64,
    written: git_jules::capabilities::projections::Written,
}

impl Serialize for Checkpointed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.written.serialize(s)
    }
}

impl Print for Checkpointed<'_> {
    fn human(&self, out: &mut dyn Write, _: &Style) -> std::io::Result<()> {
        let (w, log) = (&self.written, self.log);
        if w.skipped {
            return writeln!(
                out,
                "{log}: {} commits since the last checkpoint, under {}: nothing written",
                w.since_previous.unwrap_or(0),
                self.every
            );
        }
        writeln!(
            out,
            "{log}: checkpoint of {} events at {} (manifest {})",
            w.events,
            w.commit,
            w.manifest.as_deref().unwrap_or("-")
        )?;
        if let Some(s) = &w.signed {
            writeln!(
                out,
                "{log}: signed checkpoint at {} for trust file {} by key {} (manifest {})",
                w.commit, s.trust, s.key, s.manifest
            )?;
        }
        Ok(())
    }
    fn warnings(&self) -> Vec<String> {
        self.written
            .signed
            .iter()
            .filter(|s| !s.allowed)
            .map(|s| {
                format!(
                    "the trust roots do not allow key {} to sign checkpoints (its line needs namespaces=\"{}\"): readers under jules.requireSigned will pass this checkpoint over",
                    s.key,
                    git_jules::store::sign::CHECKPOINT_NAMESPACE
                )
            })
            .collect()
    }
}
