//! `git jules tick`: the scheduler's decisions.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::Context as _;
use chrono::{DateTime, Utc};
use git_jules::capabilities::lease::{self, Lease};
use git_jules::capabilities::mail::{self, message::SendRequest};
use git_jules::capabilities::state::schedules::Schedules;
use git_jules::capabilities::state::tick::{self, Plan, TickInput};
use git_jules::capabilities::state::State;
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Args)]
pub struct TickArgs {
    /// Decide and print, record nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Run CMD (with `sh -c`) once per decision with JULES_PERSONA, JULES_SPRINT, JULES_TRACK, JULES_CONTEXT,
    /// JULES_REASON and JULES_RUN set; the first line it prints is recorded as the session id
    #[arg(long, value_name = "CMD")]
    pub launch: Option<String>,
    /// The schedules file (default: .jules/schedules.toml in the work tree)
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Decide as of this time (RFC 3339), for replays and tests (default: now)
    #[arg(long, value_name = "WHEN")]
    pub now: Option<String>,
    /// Mail relaunches per persona per sprint (default: git config jules.maxRetries, else 3)
    #[arg(long)]
    pub max_retries: Option<u32>,
    #[arg(long, default_value = "scheduler")]
    pub actor: String,
}

#[derive(Serialize)]
struct Launch {
    run: String,
    persona: String,
    track: String,
    reason: String,
    session_id: Option<String>,
    exit: Option<i32>,
}

#[derive(Serialize)]
struct TickReport<'a> {
    recorded: bool,
    #[serde(flatten)]
    plan: &'a Plan,
    runs: Vec<Launch>,
    /// Leases whose holders this tick mailed before expiry (`jules.lease.remindBefore`).
    reminded: Vec<Lease>,
}

fn load_schedules(repo: &gix::Repository, config: Option<PathBuf>) -> anyhow::Result<Schedules> {
    let given = config.is_some();
    let path = match config {
        Some(p) => p,
        None => {
            let wd = repo.workdir().ok_or_else(|| {
                crate::frontends::error::usage("a bare repository has no .jules/schedules.toml")
                    .hint("pass --config FILE")
            })?;
            Schedules::default_path(wd)
        }
    };
    if !path.exists() {
        let e = crate::frontends::error::usage(format!("no schedules at {}", path.display()))
            .hint("the format is in docs/cli.md (.jules/schedules.toml)");
        return Err(if given {
            e.into()
        } else {
            e.hint("or pass --config FILE").into()
        });
    }
    Ok(Schedules::load(&path)?)
}

/// Unread messages for each persona the schedules know, from the mail view.
fn unread_counts(
    ctx: &Context,
    repo: &gix::Repository,
    schedules: &Schedules,
    now: DateTime<Utc>,
) -> anyhow::Result<BTreeMap<String, usize>> {
    let mut personas = schedules.cycle_personas();
    personas.push(schedules.weaver.clone());
    personas.extend(schedules.schedules.values().map(|s| s.persona.clone()));
    personas.sort();
    personas.dedup();
    Ok(mail::api::unread_counts(
        &ctx.workspace_of(repo.clone()),
        &personas,
        now,
    )?)
}

pub fn run_tick(ctx: &Context, a: TickArgs) -> anyhow::Result<i32> {
    git_jules::kit::names::validate_name("actor", &a.actor)?;
    let repo = ctx.open()?;
    let schedules = load_schedules(&repo, a.config)?;
    let now = match &a.now {
        Some(w) => DateTime::parse_from_rfc3339(w)
            .with_context(|| format!("--now {w:?} is not an RFC 3339 time"))?
            .with_timezone(&Utc),
        None => Utc::now(),
    };
    let max_retries = tick::max_retries(&repo, a.max_retries)?;
    let state = State::open(&repo)?.with_passed_over(Some(ctx.passed_over.clone()));
    // Plan, then record the plan only if the state is still the one it was made from; else plan again.
    let mut recorded = None;
    for _ in 0..50 {
        let tip = state.log.local_tip()?;
        let view = state.view()?.view;
        let unread = unread_counts(ctx, &repo, &schedules, now)?;
        let mut plan = tick::plan(&TickInput {
            schedules: &schedules,
            view: &view,
            unread: &unread,
            now,
            max_retries,
        });
        git_jules::capabilities::lease::hold_back(&repo, &view.tasks, &mut plan, now.timestamp())?;
        if a.dry_run {
            print_plan(ctx, &plan, false, Vec::new(), Vec::new());
            return Ok(0);
        }
        let events = tick::plan_events(&plan, &a.actor);
        if let Some(appended) = state.log.append_batch_if(tip, events)? {
            recorded = Some((plan, appended));
            break;
        }
    }
    let Some((plan, appended)) = recorded else {
        return Err(git_jules::Error::Race {
            message: "the state kept moving under this tick".into(),
        }
        .into());
    };
    for alert in &plan.alerts {
        match &schedules.alert_group {
            Some(group) => {
                mail::api::notice(
                    &ctx.workspace_of(repo.clone()),
                    SendRequest {
                        from: a.actor.clone(),
                        to: vec![group.clone()],
                        subject: format!("{} skipped: retries exhausted in sprint {}", alert.persona, alert.sprint),
                        body: format!(
                            "{} still has {} unread message(s) after {max_retries} mail relaunches in sprint {}.\n\
                             It will not be relaunched for mail again this sprint. Look at its mailbox:\n\n    \
                             git jules mail inbox --persona {}\n",
                            alert.persona, alert.unread, alert.sprint, alert.persona
                        ),
                        msg_type: "alert".into(),
                        priority: mail::message::Priority::Urgent,
                        ..Default::default()
                    },
                )?;
            }
            None => ctx.ui.warn(format!(
                "{} exhausted its retries; set [alerts] group in the schedules to be mailed about it",
                alert.persona
            )),
        }
    }
    // Before any launch, so that a persona launched now finds the reminder in its mail.
    let reminded = lease::remind_due(&repo, now.timestamp(), &a.actor)?;
    let mut runs = Vec::new();
    for (d, app) in plan.decisions.iter().zip(&appended) {
        let run = app.id.to_hex();
        let mut launch = Launch {
            run: run.clone(),
            persona: d.persona.clone(),
            track: d.track.clone(),
            reason: d.reason.clone(),
            session_id: None,
            exit: None,
        };
        if let Some(cmd) = &a.launch {
            let mut child = Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .current_dir(repo.workdir().unwrap_or(repo.git_dir()))
                .env("JULES_PERSONA", &d.persona)
                .env(
                    "JULES_SPRINT",
                    plan.sprint.map(|s| s.to_string()).unwrap_or_default(),
                )
                .env("JULES_TRACK", &d.track)
                .env("JULES_CONTEXT", &d.context)
                .env("JULES_REASON", &d.reason)
                .env("JULES_RUN", &run)
                .envs(layer_env(&schedules, d))
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .spawn()
                .with_context(|| format!("launching {cmd:?}"))?;
            let mut out = String::new();
            let _ = child.stdout.take().map(|mut o| o.read_to_string(&mut out));
            let status = child.wait()?;
            launch.exit = status.code();
            let session = out
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(str::to_owned);
            if !status.success() {
                state.done(&a.actor, &run, "failed", None)?;
                ctx.ui
                    .warn(format!("launching {} failed ({status})", d.persona));
            } else if let Some(s) = session {
                state.set_session(&a.actor, &run, &s)?;
                launch.session_id = Some(s);
            }
        }
        runs.push(launch);
    }
    print_plan(ctx, &plan, true, runs, reminded);
    Ok(0)
}

fn print_plan(ctx: &Context, plan: &Plan, recorded: bool, runs: Vec<Launch>, reminded: Vec<Lease>) {
    ctx.ui.print(&TickReport {
        recorded,
        plan,
        runs,
        reminded,
    });
}

/// A person reads the plan as one line a persona; the reminders and the tick itself on stderr.
impl Print for TickReport<'_> {
    fn human_status(&self, style: &Style) -> Vec<String> {
        let plan = self.plan;
        let mut lines = super::lease::reminded_lines(style, &self.reminded);
        let sprint = plan
            .sprint
            .map(|s| format!("sprint {s}"))
            .unwrap_or_else(|| "no sprint".into());
        lines.push(format!(
            "tick ({sprint}, {}){}",
            plan.mode,
            if self.recorded {
                ""
            } else {
                ", dry run: nothing recorded"
            }
        ));
        lines
    }
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        let plan = self.plan;
        for d in &plan.decisions {
            let run = self.runs.iter().find(|r| r.persona == d.persona);
            writeln!(
                out,
                "launch {:<12} {:<8} {:<8} {}{}",
                d.persona,
                d.track,
                d.reason,
                d.context,
                run.and_then(|r| r.session_id.as_ref())
                    .map(|s| format!(" [session {s}]"))
                    .unwrap_or_default()
            )?;
        }
        for w in &plan.waiting {
            writeln!(
                out,
                "wait   {:<12} {:<8} running {}",
                w.persona,
                w.track,
                w.session_id.as_deref().unwrap_or(&w.run[..12])
            )?;
        }
        for s in &plan.skipped {
            writeln!(out, "skip   {:<12} {}", s.persona, s.why)?;
        }
        if plan.complete {
            writeln!(
                out,
                "sprint complete: every persona woven, no unread mail left"
            )?;
        }
        Ok(())
    }
}

/// A layered run's prompt variables (JULES_LAYER, JULES_ROLE, JULES_WORKSTREAM), read by `git jules prompt`.
fn layer_env(s: &Schedules, d: &tick::Decision) -> Vec<(&'static str, String)> {
    if d.reason != tick::REASON_LAYER {
        return Vec::new();
    }
    let Some(l) = s.layers.iter().find(|l| l.name == d.track) else {
        return Vec::new();
    };
    let mut v = vec![
        ("JULES_LAYER", l.name.clone()),
        ("JULES_ROLE", d.persona.clone()),
    ];
    if let Some(w) = &l.workstream {
        v.push(("JULES_WORKSTREAM", w.clone()));
    }
    v
}
