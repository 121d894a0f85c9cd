//! `git jules log fsck` and `log checkpoint`.

use git_jules::eventlog::{self, Log};
use serde::Serialize;

use crate::cli::context::{Context, EXIT_CHECK_FAILED};

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
                report: git_jules::checkpoints::fsck(&log)?,
            });
        }
    }
    let clean = reports.iter().all(|r| r.is_clean())
        && checkpoints.iter().all(|c| c.report.problems.is_empty());
    if ctx.ui.json && a.checkpoints {
        ctx.ui
            .json(&serde_json::json!({"logs": reports, "checkpoints": checkpoints}));
    } else if ctx.ui.json {
        ctx.ui.json(&reports);
    } else {
        for r in &reports {
            ctx.ui.out(format!(
                "{}: {} commits, {} events, {} merges, {} duplicates, {} invalid",
                r.log,
                r.commits,
                r.events,
                r.merges,
                r.duplicates,
                r.invalid.len()
            ));
            for p in &r.invalid {
                ctx.ui.out(format!(
                    "  {} {}: {}",
                    ctx.ui.red("invalid"),
                    p.commit,
                    p.problem
                ));
            }
            for u in &r.unverified {
                ctx.ui.out(format!(
                    "  {} event {} by {} (commit {}): {}; it carries no authority (jules.requireSigned)",
                    ctx.ui.red("unverified"),
                    &u.event[..12],
                    u.actor,
                    u.commit,
                    u.signature.describe()
                ));
            }
        }
        for c in &checkpoints {
            ctx.ui.out(format!(
                "{}: {} checkpoints, {} problems",
                c.log,
                c.report.checked,
                c.report.problems.len()
            ));
            for p in &c.report.problems {
                ctx.ui.out(format!(
                    "  {} {}: {}",
                    ctx.ui.red("checkpoint"),
                    p.commit,
                    p.problem
                ));
            }
            for s in &c.report.signatures {
                let what = if s.signed { "signed" } else { "plain" };
                let usable = match (&s.reason, s.usable) {
                    (_, true) => "used under jules.requireSigned".to_owned(),
                    (Some(why), false) => format!("not used under jules.requireSigned: {why}"),
                    (None, false) => "not used under jules.requireSigned".to_owned(),
                };
                ctx.ui.out(format!(
                    "  {what} checkpoint {}: {}; {usable}",
                    s.commit,
                    describe_checkpoint_signature(&s.signature)
                ));
            }
        }
    }
    Ok(if clean { 0 } else { EXIT_CHECK_FAILED })
}

fn describe_checkpoint_signature(s: &git_jules::sign::State) -> String {
    match s {
        git_jules::sign::State::Verified { key, persona } => {
            format!("signed by {persona}'s key {key}, allowed for checkpoints")
        }
        git_jules::sign::State::KeyNotAllowed { key } => {
            format!("signed by key {key}, not allowed for checkpoints")
        }
        other => other.describe(),
    }
}

#[derive(Serialize)]
struct CheckpointFsck {
    log: String,
    #[serde(flatten)]
    report: git_jules::checkpoints::Report,
}

pub(super) fn checkpoint(
    ctx: &Context,
    repo: &gix::Repository,
    a: CheckpointArgs,
) -> anyhow::Result<i32> {
    let log = Log::open(repo, &a.log)?;
    let w = git_jules::checkpoints::write(&log, a.every)?;
    if let Some(s) = w.signed.as_ref().filter(|s| !s.allowed) {
        ctx.ui.warn(format!(
            "the trust roots do not allow key {} to sign checkpoints (its line needs namespaces=\"{}\"): readers under jules.requireSigned will pass this checkpoint over",
            s.key,
            git_jules::sign::CHECKPOINT_NAMESPACE
        ));
    }
    if ctx.ui.json {
        ctx.ui.json(&w);
    } else if w.skipped {
        ctx.ui.out(format!(
            "{}: {} commits since the last checkpoint, under {}: nothing written",
            log.name(),
            w.since_previous.unwrap_or(0),
            a.every.unwrap_or(0)
        ));
    } else {
        ctx.ui.out(format!(
            "{}: checkpoint of {} events at {} (manifest {})",
            log.name(),
            w.events,
            w.commit,
            w.manifest.as_deref().unwrap_or("-")
        ));
        if let Some(s) = &w.signed {
            ctx.ui.out(format!(
                "{}: signed checkpoint at {} for trust file {} by key {} (manifest {})",
                log.name(),
                w.commit,
                s.trust,
                s.key,
                s.manifest
            ));
        }
    }
    Ok(0)
}
