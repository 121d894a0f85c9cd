//! `git jules agent …`: the personas' harnesses (Claude Code, Codex CLI, Gemini CLI). `hook` is what the
//! harness runs (pre-edit lease guard, session-start mailbox, stop sync); `setup`, `remove` and `status`
//! manage the entries in the harness's own files (docs/agents.md).
//!
//! A hook never stops the agent by failing: whatever goes wrong, it exits 0 and prints the harness's answer
//! (allow, deny, or nothing), with what went wrong on stderr. Only `jules.agent.guard = closed` turns a
//! pre-edit hook that cannot decide into a deny.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git_jules::capabilities::agent::{answer, guard, payload, session, setup, Harness};
use git_jules::Error;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style, Ui};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum AgentCommand {
    /// Run as a harness's hook: reads its JSON on stdin, answers in its format, always exits 0
    Hook(HookArgs),
    /// Register `git jules mcp` and install the hooks in a harness's own settings files
    Setup(SetupArgs),
    /// Take out exactly what `agent setup` added
    Remove(RemoveArgs),
    /// Per harness and scope: absent, current, or stale (differs from what setup writes now)
    Status(StatusArgs),
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum HarnessArg {
    Claude,
    Codex,
    Gemini,
}

impl From<HarnessArg> for Harness {
    fn from(h: HarnessArg) -> Harness {
        match h {
            HarnessArg::Claude => Harness::Claude,
            HarnessArg::Codex => Harness::Codex,
            HarnessArg::Gemini => Harness::Gemini,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookEvent {
    /// Before an edit tool runs: deny it when a target is under another persona's exclusive lease
    PreEdit,
    /// At session start: the persona's mailbox as the agent's context
    SessionStart,
    /// When the agent stops: `git jules sync --now`, bounded in time
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    Project,
    User,
}

impl From<ScopeArg> for setup::Scope {
    fn from(s: ScopeArg) -> setup::Scope {
        match s {
            ScopeArg::Project => setup::Scope::Project,
            ScopeArg::User => setup::Scope::User,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct HookArgs {
    #[arg(value_enum)]
    pub event: HookEvent,
    /// The harness that runs the hook (its input and answer formats)
    #[arg(long, value_enum)]
    pub harness: HarnessArg,
    /// The persona the agent is (default: $JULES_PERSONA; never guessed)
    #[arg(long, env = "JULES_PERSONA", value_name = "PERSONA")]
    pub persona: Option<String>,
    /// stop: how long `sync --now` may take before it is stopped
    #[arg(long, value_name = "DURATION", default_value = "20s")]
    pub timeout: String,
}

#[derive(Debug, clap::Args)]
pub struct SetupArgs {
    #[arg(value_enum)]
    pub harness: HarnessArg,
    /// Written into the MCP registration and the hook commands (without it they read $JULES_PERSONA)
    #[arg(long, value_name = "PERSONA")]
    pub persona: Option<String>,
    /// The repository's files, or the user's (home directory)
    #[arg(long, value_enum, default_value = "project")]
    pub scope: ScopeArg,
    /// Print the change as a diff; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    #[arg(value_enum)]
    pub harness: HarnessArg,
    #[arg(long, value_enum, default_value = "project")]
    pub scope: ScopeArg,
    /// Print the change as a diff; write nothing
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// One harness (default: all three)
    #[arg(value_enum)]
    pub harness: Option<HarnessArg>,
    /// One scope (default: both)
    #[arg(long, value_enum)]
    pub scope: Option<ScopeArg>,
}

pub fn run(ctx: &Context, cmd: AgentCommand) -> anyhow::Result<i32> {
    if ctx.ui.json && !matches!(cmd, AgentCommand::Status(_)) {
        return Err(
            Error::usage("of the `agent` commands only `agent status` has JSON output").into(),
        );
    }
    match cmd {
        AgentCommand::Hook(a) => Ok(hook(ctx, a)),
        AgentCommand::Setup(a) => change(
            ctx,
            a.harness.into(),
            a.scope.into(),
            a.persona.as_deref(),
            setup::Action::Setup,
            a.dry_run,
        ),
        AgentCommand::Remove(a) => change(
            ctx,
            a.harness.into(),
            a.scope.into(),
            None,
            setup::Action::Remove,
            a.dry_run,
        ),
        AgentCommand::Status(a) => status(ctx, a),
    }
}

// ---------------------------------------------------------------------------------------------------------
// Hooks

/// A line on stderr: the harnesses show it in their logs or transcripts, never to the model.
fn note(ui: &Ui, line: impl AsRef<str>) {
    ui.err(format!("git-jules agent: {}", line.as_ref()));
}

fn read_stdin() -> std::io::Result<Vec<u8>> {
    // A Write of a large file carries it whole; 64 MiB is more than any harness sends.
    let mut buf = Vec::new();
    std::io::stdin().take(64 << 20).read_to_end(&mut buf)?;
    Ok(buf)
}

fn hook(ctx: &Context, a: HookArgs) -> i32 {
    let h: Harness = a.harness.into();
    let input = read_stdin().unwrap_or_else(|e| {
        note(&ctx.ui, format!("cannot read the hook's input: {e}"));
        Vec::new()
    });
    let persona = a.persona.filter(|p| !p.is_empty());
    let out = match a.event {
        HookEvent::PreEdit => pre_edit(ctx, h, persona.as_deref(), &input),
        HookEvent::SessionStart => session_start(ctx, h, persona.as_deref()),
        HookEvent::Stop => {
            stop(ctx, &a.timeout);
            answer::allow(h).to_owned()
        }
    };
    if !out.is_empty() {
        ctx.ui.out(out);
    }
    0
}

/// The directory the harness works in: its payload's `cwd` when that exists, else `-C` / the current one.
fn workdir_of(ctx: &Context, cwd: Option<&Path>) -> PathBuf {
    match cwd {
        Some(c) if c.is_dir() && ctx.dir == Path::new(".") => c.to_path_buf(),
        _ => ctx.dir.clone(),
    }
}

fn pre_edit(ctx: &Context, h: Harness, persona: Option<&str>, input: &[u8]) -> String {
    let p = match payload::parse(h, input) {
        Ok(p) => p,
        Err(e) => return undecided(ctx, h, None, &e.to_string()),
    };
    let paths = match &p.target {
        payload::Target::Paths(paths) => paths,
        payload::Target::Shell => {
            note(&ctx.ui, format!(
                "{}: a shell command; no edit hook sees its paths (the pre-commit hook checks the commit)",
                p.tool
            ));
            return answer::allow(h).to_owned();
        }
        payload::Target::Unknown => {
            note(
                &ctx.ui,
                format!(
                    "{}: not an edit tool the guard knows; allowed",
                    git_jules::capabilities::agent::clean(&p.tool, 64)
                ),
            );
            return answer::allow(h).to_owned();
        }
    };
    let dir = workdir_of(ctx, p.cwd.as_deref());
    let repo = match git_jules::kit::repo::open_with(&dir, &ctx.overrides) {
        Ok(r) => r,
        Err(e) => return undecided(ctx, h, None, &e.to_string()),
    };
    let cwd = p
        .cwd
        .clone()
        .filter(|c| c.is_dir())
        .unwrap_or_else(|| dir.clone());
    let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
    let d = match guard::decide(&repo, persona, &cwd, paths) {
        Ok(d) => d,
        Err(e) => return undecided(ctx, h, Some(&repo), &e.to_string()),
    };
    for o in &d.outside {
        note(
            &ctx.ui,
            format!(
                "{}: outside the work tree; allowed",
                git_jules::capabilities::agent::clean(o, 200)
            ),
        );
    }
    let out = if d.conflicts.is_empty() {
        answer::allow(h).to_owned()
    } else {
        answer::deny(h, &guard::deny_reason(&d, persona))
    };
    // The process ends here: freeing the repository's caches costs time for nothing (as the pre-commit hook).
    std::mem::forget(repo);
    out
}

/// The guard could not decide: `jules.agent.guard` says whether the edit goes ahead.
fn undecided(ctx: &Context, h: Harness, repo: Option<&gix::Repository>, why: &str) -> String {
    let mode = match repo {
        Some(r) => guard::Mode::from_config(Some(r)),
        None => mode_outside_repo(ctx),
    };
    let why = git_jules::capabilities::agent::clean(why, 300);
    match mode {
        guard::Mode::Open => {
            note(
                &ctx.ui,
                format!(
                    "the lease guard cannot decide ({why}); allowed (jules.agent.guard = open)"
                ),
            );
            answer::allow(h).to_owned()
        }
        guard::Mode::Closed => {
            note(
                &ctx.ui,
                format!(
                    "the lease guard cannot decide ({why}); refused (jules.agent.guard = closed)"
                ),
            );
            answer::deny(
                h,
                &format!(
                    "git-jules lease guard: edit refused because the guard cannot decide ({why}) and \
                     jules.agent.guard is closed. Tell the operator; do not retry the same edit."
                ),
            )
        }
    }
}

/// `jules.agent.guard` from git's global and system configuration, where there is no repository to read it
/// from (`git config` reads exactly what git would).
fn mode_outside_repo(ctx: &Context) -> guard::Mode {
    let dir = if ctx.dir.is_dir() {
        ctx.dir.clone()
    } else {
        std::env::temp_dir()
    };
    match git_jules::kit::gitcli::run(&dir, ["config", "--get", "jules.agent.guard"]) {
        Ok(out) if !out.stdout.is_empty() => {
            if String::from_utf8_lossy(&out.stdout)
                .trim()
                .eq_ignore_ascii_case("open")
            {
                guard::Mode::Open
            } else {
                guard::Mode::Closed
            }
        }
        _ => guard::Mode::Open,
    }
}

fn session_start(ctx: &Context, h: Harness, persona: Option<&str>) -> String {
    let Some(persona) = persona else {
        note(
            &ctx.ui,
            "no persona (--persona or JULES_PERSONA): no mailbox to show",
        );
        return answer::allow(h).to_owned();
    };
    let repo = match ctx.open() {
        Ok(r) => r,
        Err(e) => {
            note(&ctx.ui, format!("no mailbox to show: {e}"));
            return answer::allow(h).to_owned();
        }
    };
    match session::mailbox(&repo, persona, chrono::Utc::now()) {
        Ok(m) => answer::session_context(h, &session::context(&m)),
        Err(e) => {
            note(
                &ctx.ui,
                format!("cannot read the mailbox of {persona}: {e}"),
            );
            answer::allow(h).to_owned()
        }
    }
}

/// `git jules sync --now` in its own process group, stopped (the whole group) after `timeout`; a failure
/// is reported on stderr and never blocks the stop.
fn stop(ctx: &Context, timeout: &str) {
    let limit = match git_jules::capabilities::lease::parse_ttl(timeout) {
        Ok(s) => Duration::from_secs(s.unsigned_abs()),
        Err(e) => {
            note(&ctx.ui, format!("--timeout: {e}; using 20s"));
            Duration::from_secs(20)
        }
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            note(
                &ctx.ui,
                format!("cannot find the git-jules binary to sync: {e}"),
            );
            return;
        }
    };
    use std::os::fd::AsFd as _;
    use std::os::unix::process::CommandExt as _;
    let child = std::process::Command::new(exe)
        .arg("-C")
        .arg(&ctx.dir)
        .args(["-q", "sync", "--now"])
        .stdin(std::process::Stdio::null())
        // The hook's stdout is the harness's to parse: sync's output goes to stderr.
        .stdout(
            std::io::stderr()
                .as_fd()
                .try_clone_to_owned()
                .map(std::process::Stdio::from)
                .unwrap_or_else(|_| std::process::Stdio::null()),
        )
        .process_group(0)
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            note(&ctx.ui, format!("cannot start sync: {e}"));
            return;
        }
    };
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return,
            Ok(Some(status)) => {
                note(
                    &ctx.ui,
                    format!("sync --now failed ({status}); the stop goes on"),
                );
                return;
            }
            Ok(None) if start.elapsed() >= limit => {
                if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                    let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
                }
                let _ = child.wait();
                note(
                    &ctx.ui,
                    format!(
                    "sync --now took longer than {timeout}; stopped (run `git jules sync` later)"
                ),
                );
                return;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                note(&ctx.ui, format!("waiting for sync: {e}"));
                return;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------------------
// Setup, remove, status

fn places(ctx: &Context) -> setup::Places {
    let workdir = ctx
        .open()
        .ok()
        .and_then(|r| {
            r.workdir()
                .map(|w| std::path::absolute(w).unwrap_or(w.to_path_buf()))
        })
        .map(|w| git_jules::capabilities::agent::guard::lexical(&w));
    let env_dir = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    setup::Places {
        workdir,
        home: env_dir("HOME"),
        codex_home: env_dir("CODEX_HOME"),
    }
}

fn change(
    ctx: &Context,
    h: Harness,
    scope: setup::Scope,
    persona: Option<&str>,
    action: setup::Action,
    dry_run: bool,
) -> anyhow::Result<i32> {
    let places = places(ctx);
    let changes = setup::plan(h, scope, persona, &places, action)?;
    let verb = match action {
        setup::Action::Setup => "set up",
        setup::Action::Remove => "removed",
    };
    if changes.is_empty() {
        ctx.ui.status(match action {
            setup::Action::Setup => format!("{h}: already set up; nothing to change"),
            setup::Action::Remove => format!("{h}: nothing of git-jules to remove"),
        });
        return Ok(0);
    }
    if dry_run {
        let mut text = String::new();
        for c in &changes {
            text.push_str(&diff(c, places.workdir.as_deref()));
        }
        ctx.ui.out_raw(&text);
        return Ok(0);
    }
    setup::apply(&changes)?;
    for c in &changes {
        let what = match (&c.before, &c.after) {
            (None, _) => "created",
            (_, None) => "deleted",
            _ => "updated",
        };
        ctx.ui.out(format!("{what} {}", c.path.display()));
    }
    ctx.ui.status(format!("{h}: {verb}"));
    if action == setup::Action::Setup && h == Harness::Codex {
        ctx.ui.status(
            "codex: Codex runs new hooks only once they are trusted: review them in codex (/hooks) \
             before relying on the guard",
        );
    }
    Ok(0)
}

/// A unified diff of one file's change (git's format, `/dev/null` for a side that does not exist).
/// A path under the work tree is named from its top, as git names it; any other by its absolute path.
fn diff(c: &setup::FileChange, workdir: Option<&Path>) -> String {
    let (name, prefixed) = match workdir.and_then(|w| c.path.strip_prefix(w).ok()) {
        Some(rel) => (rel.display().to_string(), true),
        None => (c.path.display().to_string(), false),
    };
    let side = |p: &str| {
        if prefixed {
            format!("{p}/{name}")
        } else {
            name.clone()
        }
    };
    let (old, new) = (
        c.before.as_deref().unwrap_or(""),
        c.after.as_deref().unwrap_or(""),
    );
    let from = if c.before.is_some() {
        side("a")
    } else {
        "/dev/null".into()
    };
    let to = if c.after.is_some() {
        side("b")
    } else {
        "/dev/null".into()
    };
    let (hunks, _, _) =
        git_jules::capabilities::series::diff::hunks(old.as_bytes(), new.as_bytes());
    format!("--- {from}\n+++ {to}\n{}", String::from_utf8_lossy(&hunks))
}

/// `agent status`: one line a harness and scope; `{"harnesses"}` in JSON (through a sorted map, as it
/// always was).
struct Statuses(Vec<setup::Status>);

impl serde::Serialize for Statuses {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::json!({ "harnesses": self.0 }).serialize(s)
    }
}

impl Print for Statuses {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        let word = |v: serde_json::Result<serde_json::Value>| -> std::io::Result<String> {
            Ok(v.map_err(std::io::Error::other)?
                .as_str()
                .unwrap_or("")
                .to_owned())
        };
        for s in &self.0 {
            let mut line = format!(
                "{} {}: {}",
                s.harness,
                word(serde_json::to_value(s.scope))?,
                word(serde_json::to_value(s.state))?
            );
            if s.state != setup::State::Absent {
                line.push_str(&format!(
                    " (mcp: {}; hooks: {}; persona: {})",
                    if s.mcp { "yes" } else { "no" },
                    if s.hooks.is_empty() {
                        "none".to_owned()
                    } else {
                        s.hooks.join(", ")
                    },
                    s.persona.as_deref().unwrap_or("from JULES_PERSONA")
                ));
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    }
}

fn status(ctx: &Context, a: StatusArgs) -> anyhow::Result<i32> {
    let places = places(ctx);
    let harnesses: Vec<Harness> = match a.harness {
        Some(h) => vec![h.into()],
        None => Harness::ALL.to_vec(),
    };
    let scopes: Vec<setup::Scope> = match a.scope {
        Some(s) => vec![s.into()],
        None => vec![setup::Scope::Project, setup::Scope::User],
    };
    let mut all = Vec::new();
    for h in harnesses {
        for &s in &scopes {
            match setup::status(h, s, &places) {
                Ok(st) => all.push(st),
                // No work tree (project scope outside a repository) or no home: nothing to report there.
                Err(e) if e.kind() == git_jules::kit::error::ErrorKind::Usage => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    ctx.ui.print(&Statuses(all));
    Ok(0)
}
