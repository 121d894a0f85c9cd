//! `git jules lease …`: path leases on refs/jules/lease (acquire, renew, release, list, check, remind).
//!
//! Exit codes: acquire 0 held, 3 someone else holds the paths; renew and release 3 when the lease is not
//! the persona's to renew or release; check 1 when a path is under another persona's exclusive lease.

use std::fmt::Write as _;
use std::io::Write;

use git_jules::capabilities::lease::{self, api, Changes, Filter, Lease};
use git_jules::{Error, Workspace};

use crate::frontends::context::{Context, EXIT_CHECK_FAILED, EXIT_CONFLICT};
use crate::frontends::ui::{Print, Style};

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
    /// Paths or globs (`src/capabilities/lease/`, `src/**/*.rs`), relative to the top of the work tree
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
    git_jules::capabilities::mail::message::validate_persona(&p)?;
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

/// The status lines of the reminders `sync` and `tick` sent, for their printers.
pub fn reminded_lines(style: &Style, reminded: &[Lease]) -> Vec<String> {
    reminded
        .iter()
        .map(|l| {
            format!(
                "reminded {} that lease {} on {} expires at {}",
                style.text(&l.persona),
                l.short(),
                style.text(&l.paths.join(" ")),
                lease::format_time(l.expires)
            )
        })
        .collect()
}

/// One line naming holder, paths, reason and expiry.
fn describe(style: &Style, l: &Lease, now: i64) -> String {
    format!(
        "{} {} {} on {} until {} ({}){}",
        l.short(),
        style.text(&l.persona),
        l.mode(),
        style.text(&l.paths.join(" ")),
        lease::format_time(l.expires),
        if l.expires > now {
            format!("{} left", left(l.expires.saturating_sub(now)))
        } else {
            "expired".into()
        },
        l.reason
            .as_deref()
            .map(|r| format!(": {}", style.text(r)))
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
            ctx.ui.print(&r);
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
            ctx.ui.print(&r);
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
            ctx.ui.print(&r);
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
            ctx.ui.print(&r);
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
            ctx.ui.print(&r);
            Ok(0)
        }
    }
}

/// `lease acquire`: held (with the leases it took over, on stderr), or who holds the paths.
impl Print for api::Acquired {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        let r = &self.report;
        if let Some(l) = &r.lease {
            writeln!(
                out,
                "{} {}{}",
                style.green("held:"),
                describe(style, l, self.now),
                if r.is_final {
                    ""
                } else {
                    " (provisional: `--sync` makes it final)"
                }
            )?;
        } else {
            for h in &r.holders {
                writeln!(
                    out,
                    "{} {}",
                    style.red("held by:"),
                    describe(style, h, self.now)
                )?;
            }
        }
        Ok(())
    }

    fn human_status_after(&self, style: &Style) -> Vec<String> {
        if self.report.lease.is_none() {
            return Vec::new();
        }
        self.report
            .took_over
            .iter()
            .map(|t| {
                format!(
                    "took over {} (its holder was mailed)",
                    describe(style, t, self.now)
                )
            })
            .collect()
    }
}

/// `lease renew`: the lease as renewed.
impl Print for api::Renewed {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        writeln!(out, "renewed: {}", describe(style, &self.lease, self.now))
    }
}

/// `lease release`: one line per lease ended.
impl Print for api::Released {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for l in &self.released {
            writeln!(out, "released: {}", describe(style, l, self.now))?;
        }
        Ok(())
    }
}

/// `lease remind`: one line per holder mailed.
impl Print for api::Reminded {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for l in &self.reminded {
            writeln!(
                out,
                "reminded {}: {}",
                l.persona,
                describe(style, l, self.now)
            )?;
        }
        Ok(())
    }
}

/// `lease list`: one line per lease, its state when not simply held, and an unverified signature.
impl Print for api::Listing {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        for i in &self.leases {
            let mut state = match i.lease.state {
                lease::State::Held if i.live => String::new(),
                lease::State::Held => " [expired]".into(),
                s => format!(
                    " [{}]",
                    serde_json::to_value(s)
                        .map_err(std::io::Error::other)?
                        .as_str()
                        .unwrap_or("")
                ),
            };
            if let Some(s) = i.signature.as_ref().filter(|s| !s.is_verified()) {
                state.push_str(&format!(" (NOT VERIFIED: {})", s.describe()));
            }
            writeln!(out, "{}{state}", describe(style, &i.lease, self.now))?;
        }
        Ok(())
    }
}

/// `lease check`: each conflicting path and the lease it falls under (nothing when clean).
impl Print for api::Checked {
    fn human(&self, out: &mut dyn Write, style: &Style) -> std::io::Result<()> {
        // One write for them all: the hook runs on every commit, and a write per line showed.
        // Many paths fall under one lease: describe each lease once.
        let mut text = String::new();
        let mut described: std::collections::HashMap<&str, String> = Default::default();
        for c in &self.report.conflicts {
            let lease = described
                .entry(c.lease.id.as_str())
                .or_insert_with(|| describe(style, &c.lease, self.now));
            let _ = writeln!(text, "{}: under lease {lease}", c.path);
        }
        out.write_all(text.as_bytes())
    }
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
            ctx.ui
                .status("pre-commit: could not check leases; commit refused");
            return Err(e.into());
        }
        r => r?,
    };
    ctx.ui.print(&r);
    if r.clean() {
        return Ok(0);
    }
    match pre_commit {
        Some(lease::PreCommit::Warn) => {
            ctx.ui.status(
                "pre-commit: warning: the commit touches paths under another persona's lease \
                 (jules.lease.preCommit=warn)",
            );
            return Ok(0);
        }
        Some(_) => ctx.ui.status(
            "pre-commit: commit refused: it touches paths under another persona's exclusive lease \
             (git commit --no-verify skips this)",
        ),
        None => {}
    }
    Ok(EXIT_CHECK_FAILED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontends::ui::{Buffer, Ui};

    /// A lease as `lease acquire` made it, in a fresh repository (real git, the library's use case).
    fn acquired(dir: &std::path::Path) -> api::Acquired {
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .args(args)
                .current_dir(dir)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("HOME", dir)
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q", "-b", "main"]);
        git(&["config", "user.name", "Alice"]);
        git(&["config", "user.email", "alice@example.com"]);
        git(&["commit", "-q", "--allow-empty", "-m", "root"]);
        let ws = Workspace::from_repo(dir, gix::open(dir).unwrap());
        api::acquire(
            &ws,
            &api::AcquireInput {
                persona: "alice".into(),
                paths: vec!["src/parser/".into()],
                shared: false,
                ttl: Some("2h".into()),
                reason: Some("rewrite \u{202e}it".into()),
                task: None,
                sync: false,
                remote: None,
            },
        )
        .unwrap()
    }

    /// `lease acquire` as a person reads it: `held:` and the one line naming the lease, its untrusted
    /// reason escaped on a terminal; in JSON the report alone, no status. (Catches a printer whose line
    /// drifts from what `lease acquire` printed, or that stops escaping a reason.)
    #[test]
    fn an_acquired_lease_prints_one_held_line() {
        let dir = tempfile::tempdir().unwrap();
        let r = acquired(dir.path());
        let l = r.report.lease.as_ref().unwrap();
        let until = lease::format_time(l.expires);
        let expected = |reason: &str| {
            format!(
                "held: {} alice exclusive on src/parser/ until {until} (2h00m left): {reason} (provisional: `--sync` makes it final)\n",
                l.short()
            )
        };
        let mut human = Vec::new();
        r.human(&mut human, &Style::default()).unwrap();
        assert_eq!(
            String::from_utf8(human).unwrap(),
            expected("rewrite \u{202e}it")
        );
        let mut human = Vec::new();
        let on_a_terminal = Style {
            color: false,
            escape: true,
        };
        r.human(&mut human, &on_a_terminal).unwrap();
        assert_eq!(
            String::from_utf8(human).unwrap(),
            expected("rewrite <U+202E>it")
        );

        let (out, err) = (Buffer::default(), Buffer::default());
        Ui::with_writers(true, Box::new(out.clone()), Box::new(err.clone())).print(&r);
        assert_eq!(err.text(), "");
        assert_eq!(
            out.text(),
            format!("{}\n", crate::frontends::ui::versioned(&r.report).unwrap())
        );
    }
}
