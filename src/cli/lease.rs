//! `git jules lease …`: path leases on refs/jules/lease (acquire, renew, release, list, check, remind).
//!
//! Exit codes: acquire 0 held, 3 someone else holds the paths; renew and release 3 when the lease is not
//! the persona's to renew or release; check 1 when a path is under another persona's exclusive lease.

use std::fmt::Write as _;

use git_jules::lease::{self, api, Changes, Filter, Lease};
use git_jules::{Error, Workspace};

use super::ui;
use crate::cli::context::{Context, EXIT_CHECK_FAILED, EXIT_CONFLICT};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum LeaseCommand {
    /// Lease paths or globs before changing them (exit 3 when someone else holds them)
    Acquire(AcquireArgs),
    /// Extend a live lease of yours to now + TTL
    Renew(RenewArgs),
    /// End leases: yours by id, --task or --all; another persona's with --force --reason (they are mailed)
    Release(ReleaseArgs),
    /// List live leases (with --all also expired, released, denied and superseded ones)
    List(ListArgs),
    /// Check paths, a diff or the index against others' exclusive leases (exit 1 on a conflict)
    Check(CheckArgs),
    /// Mail holders whose leases expire within the lead time (once per expiry); run it from a scheduler
    Remind(RemindArgs),
}

#[derive(Debug, clap::Args)]
pub struct AcquireArgs {
    /// Paths or globs (`src/lease/`, `src/**/*.rs`), relative to the top of the work tree
    #[arg(required = true, value_name = "PATHSPEC")]
    pub paths: Vec<String>,
    /// Nobody else may lease overlapping paths (the default)
    #[arg(long, conflicts_with = "shared")]
    pub exclusive: bool,
    /// Others may hold shared leases on the same paths, but nobody an exclusive one
    #[arg(long)]
    pub shared: bool,
    /// How long it holds: 90s, 30m, 2h, 1d (default: jules.lease.ttl, else 2h; at most jules.lease.maxTtl, else 7d)
    #[arg(long, value_name = "DURATION")]
    pub ttl: Option<String>,
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// The task the lease is for (`lease release --task` ends them together)
    #[arg(long, value_name = "ID")]
    pub task: Option<String>,
    /// Decide through the remote: the answer is final when the command returns
    #[arg(long)]
    pub sync: bool,
    /// The remote for --sync (default: the current branch's push remote, else `origin`)
    #[arg(long, value_name = "REMOTE", requires = "sync")]
    pub remote: Option<String>,
    /// The persona acquiring (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct RenewArgs {
    /// The lease id (or a unique prefix)
    pub id: String,
    /// The new time to live, from now (default: jules.lease.ttl, else 2h; at most jules.lease.maxTtl, else 7d)
    #[arg(long, value_name = "DURATION")]
    pub ttl: Option<String>,
    /// Sync with the remote before and after, so others see the new expiry
    #[arg(long)]
    pub sync: bool,
    #[arg(long, value_name = "REMOTE", requires = "sync")]
    pub remote: Option<String>,
    /// The holder renewing (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ReleaseArgs {
    /// Lease ids (or unique prefixes)
    #[arg(value_name = "ID", required_unless_present_any = ["all", "task"])]
    pub ids: Vec<String>,
    /// Every held lease of the persona
    #[arg(long, conflicts_with = "ids")]
    pub all: bool,
    /// The persona's held leases acquired for this task
    #[arg(long, value_name = "ID", conflicts_with = "ids")]
    pub task: Option<String>,
    /// Release another persona's lease (needs --reason; the holder is mailed)
    #[arg(long)]
    pub force: bool,
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,
    /// The persona releasing (default: $JULES_PERSONA)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only this persona's leases
    #[arg(long, value_name = "PERSONA")]
    pub persona: Option<String>,
    /// Only leases overlapping this path or glob
    #[arg(long, value_name = "PATHSPEC")]
    pub path: Option<String>,
    /// Also expired, released, denied and superseded leases
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Paths or globs to check
    #[arg(value_name = "PATHSPEC", conflicts_with_all = ["diff", "staged"])]
    pub paths: Vec<String>,
    /// Check the paths `git diff RANGE` touches
    #[arg(long, value_name = "RANGE", conflicts_with = "staged")]
    pub diff: Option<String>,
    /// Check the paths the index changes against HEAD (what the pre-commit hook runs)
    #[arg(long)]
    pub staged: bool,
    /// Run as the pre-commit hook: jules.lease.preCommit decides (refuse, warn, off); say so on stderr
    #[arg(long, hide = true, requires = "staged")]
    pub pre_commit: bool,
    /// Whose leases do not count (default: $JULES_PERSONA; without one every exclusive lease counts)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct RemindArgs {
    /// How long before expiry to mail (default: jules.lease.remindBefore, else 15m)
    #[arg(long, value_name = "DURATION")]
    pub lead: Option<String>,
    /// The sender of the reminders (default: $JULES_PERSONA, else `scheduler`)
    #[arg(long = "from", env = "JULES_PERSONA", value_name = "PERSONA")]
    pub from: Option<String>,
}

fn persona(p: Option<String>) -> Result<String, Error> {
    let p = p.ok_or_else(|| Error::usage("no persona: pass --persona or set JULES_PERSONA"))?;
    git_jules::mail::message::validate_persona(&p)?;
    Ok(p)
}

fn left(secs: i64) -> String {
    let (sign, s) = if secs < 0 { ("-", -secs) } else { ("", secs) };
    if s >= 86_400 {
        format!("{sign}{}d{}h", s / 86_400, s % 86_400 / 3600)
    } else if s >= 3600 {
        format!("{sign}{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{sign}{}m", s / 60)
    } else {
        format!("{sign}{s}s")
    }
}

/// The status lines of the reminders `sync` and `tick` sent.
pub fn say_reminded(reminded: &[Lease]) {
    for l in reminded {
        ui::status(format!(
            "reminded {} that lease {} on {} expires at {}",
            ui::text(&l.persona),
            l.short(),
            ui::text(&l.paths.join(" ")),
            lease::format_time(l.expires)
        ));
    }
}

/// One line naming holder, paths, reason and expiry.
fn describe(l: &Lease, now: i64) -> String {
    format!(
        "{} {} {} on {} until {} ({}){}",
        l.short(),
        ui::text(&l.persona),
        l.mode(),
        ui::text(&l.paths.join(" ")),
        lease::format_time(l.expires),
        if l.expires > now {
            format!("{} left", left(l.expires.saturating_sub(now)))
        } else {
            "expired".into()
        },
        l.reason
            .as_deref()
            .map(|r| format!(": {}", ui::text(r)))
            .unwrap_or_default()
    )
}

pub fn run(ctx: &Context, cmd: LeaseCommand) -> anyhow::Result<i32> {
    let ws = ctx.workspace()?;
    let result = run_in(ctx, &ws, cmd);
    // The process ends with the command (the pre-commit hook runs here on every commit): freeing the
    // repository's caches one allocation at a time was about 2% of the hook's time, for nothing.
    std::mem::forget(ws);
    result
}

/// Translate the arguments, call the use case (`lease::api`), present its answer.
fn run_in(ctx: &Context, ws: &Workspace, cmd: LeaseCommand) -> anyhow::Result<i32> {
    match cmd {
        LeaseCommand::Acquire(a) => {
            let r = api::acquire(
                ws,
                &api::AcquireInput {
                    persona: persona(a.persona)?,
                    paths: a.paths,
                    shared: a.shared,
                    ttl: a.ttl,
                    reason: a.reason,
                    task: a.task,
                    sync: a.sync,
                    remote: a.remote,
                },
            )?;
            show_acquired(ctx, &r);
            Ok(if r.report.held { 0 } else { EXIT_CONFLICT })
        }
        LeaseCommand::Renew(a) => {
            let r = api::renew(
                ws,
                &api::RenewInput {
                    persona: persona(a.persona)?,
                    id: a.id,
                    ttl: a.ttl,
                    sync: a.sync,
                    remote: a.remote,
                },
            )?;
            if ctx.ui.json {
                ui::json(&r);
            } else {
                ui::out(format!("renewed: {}", describe(&r.lease, r.now)));
            }
            Ok(0)
        }
        LeaseCommand::Release(a) => {
            let r = api::release(
                ws,
                &api::ReleaseInput {
                    persona: persona(a.persona)?,
                    ids: a.ids,
                    all: a.all,
                    task: a.task,
                    force: a.force,
                    reason: a.reason,
                },
            )?;
            if ctx.ui.json {
                ui::json(&r);
            } else {
                for l in &r.released {
                    ui::out(format!("released: {}", describe(l, r.now)));
                }
            }
            Ok(0)
        }
        LeaseCommand::List(a) => {
            let r = api::list(
                ws,
                &Filter {
                    persona: a.persona,
                    path: a.path,
                    all: a.all,
                },
            )?;
            if ctx.ui.json {
                ui::json(&r);
            } else {
                show_listing(&r)?;
            }
            Ok(0)
        }
        LeaseCommand::Check(a) => check(ctx, ws, a),
        LeaseCommand::Remind(a) => {
            let r = api::remind(
                ws,
                &api::RemindInput {
                    from: a.from.unwrap_or_else(|| "scheduler".into()),
                    lead: a.lead,
                },
            )?;
            if ctx.ui.json {
                ui::json(&r);
            } else {
                for l in &r.reminded {
                    ui::out(format!("reminded {}: {}", l.persona, describe(l, r.now)));
                }
            }
            Ok(0)
        }
    }
}

fn show_acquired(ctx: &Context, r: &api::Acquired) {
    let now = r.now;
    let r = &r.report;
    if ctx.ui.json {
        ui::json(r);
    } else if let Some(l) = &r.lease {
        ui::out(format!(
            "{} {}{}",
            ctx.ui.green("held:"),
            describe(l, now),
            if r.is_final {
                ""
            } else {
                " (provisional: `--sync` makes it final)"
            }
        ));
        for t in &r.took_over {
            ui::status(format!(
                "took over {} (its holder was mailed)",
                describe(t, now)
            ));
        }
    } else {
        for h in &r.holders {
            ui::out(format!("{} {}", ctx.ui.red("held by:"), describe(h, now)));
        }
    }
}

fn show_listing(r: &api::Listing) -> anyhow::Result<()> {
    for i in &r.leases {
        let mut state = match i.lease.state {
            lease::State::Held if i.live => String::new(),
            lease::State::Held => " [expired]".into(),
            s => format!(" [{}]", serde_json::to_value(s)?.as_str().unwrap_or("")),
        };
        if let Some(s) = i.signature.as_ref().filter(|s| !s.is_verified()) {
            state.push_str(&format!(" (NOT VERIFIED: {})", s.describe()));
        }
        ui::out(format!("{}{state}", describe(&i.lease, r.now)));
    }
    Ok(())
}

/// `lease check`, also the pre-commit hook (`--pre-commit`), whose setting may turn it off or into a warning.
fn check(ctx: &Context, ws: &Workspace, a: CheckArgs) -> anyhow::Result<i32> {
    let pre_commit = if a.pre_commit {
        Some(api::pre_commit(ws)?)
    } else {
        None
    };
    if pre_commit == Some(lease::PreCommit::Off) {
        return Ok(0);
    }
    let r = api::check(
        ws,
        &api::CheckInput {
            persona: a.persona,
            paths: a.paths,
            changes: Changes::from_flags(a.diff, a.staged),
        },
    );
    let r = match r {
        Err(e) if a.pre_commit => {
            ui::status("pre-commit: could not check leases; commit refused");
            return Err(e.into());
        }
        r => r?,
    };
    if ctx.ui.json {
        ui::json(&r);
    } else if !r.clean() {
        // One write for them all: the hook runs on every commit, and a write per line showed.
        // Many paths fall under one lease: describe each lease once.
        let mut text = String::new();
        let mut described: std::collections::HashMap<&str, String> = Default::default();
        for c in &r.report.conflicts {
            let lease = described
                .entry(c.lease.id.as_str())
                .or_insert_with(|| describe(&c.lease, r.now));
            let _ = writeln!(text, "{}: under lease {lease}", c.path);
        }
        ui::out_raw(&text);
    }
    if r.clean() {
        return Ok(0);
    }
    match pre_commit {
        Some(lease::PreCommit::Warn) => {
            ui::status(
                "pre-commit: warning: the commit touches paths under another persona's lease \
                 (jules.lease.preCommit=warn)",
            );
            return Ok(0);
        }
        Some(_) => ui::status(
            "pre-commit: commit refused: it touches paths under another persona's exclusive lease \
             (git commit --no-verify skips this)",
        ),
        None => {}
    }
    Ok(EXIT_CHECK_FAILED)
}
