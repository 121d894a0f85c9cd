//! The frontends: the command line (`cli`), the MCP server (`mcp`) and the web view (`web`), each
//! translating its input into the library's use cases and presenting their typed results, and what they
//! share: the `Context` of a run, the error model, the output, the interrupt flag. Nothing here is engine.
//!
//! This file is the process entry: clap definitions, dispatch, and the one place where a failure is
//! printed and becomes an exit code ([`error::CliError`]).
//!
//! Exit codes: 0 ok; 1 a check failed (verify, fsck found problems, wait timed out); 2 bad input;
//! 3 a conflict stopped the operation and nothing was changed; 4 internal (git, disk, a bug);
//! 130 interrupted. The table is in docs/cli.md.

pub mod cli;
pub mod context;
pub mod error;
mod interrupt;
pub mod mcp;
pub mod ui;
pub mod web;

use cli::{
    agent, completions, demo, exchange, guard, hooks, init, keys, lease, log, mail, man, prompt,
    roles, series, sprint, state, sync, task, tick, verify, weave,
};

use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use context::Context;
use error::{CliError, Kind, EXIT_OK, EXIT_USAGE};

/// The name of the root command.
const ROOT: &str = "git-jules";

/// Many AI personas, one repository: mail, sprint state, patch series and weaving, coordinated through git.
#[derive(Debug, Parser)]
#[command(
    name = ROOT,
    bin_name = "git jules",
    version,
    about,
    after_help = "Exit codes: 0 ok, 1 a check failed, 2 bad input, 3 a conflict stopped the operation, \
4 internal error, 130 interrupted.\n\
`git jules --help` opens the man page git-jules(1); install it with `git jules install-man`.\n\
JSON shapes: docs/json.md."
)]
#[group(skip)]
pub struct Cli {
    // `--json` and `-q` are global: they say how a command prints, and people write them after it. The other
    // options go before the command, as git's own do (`git -C DIR jules …`): clap copies a global option into
    // every subcommand of each command it builds on the way to the one that runs (20 top-level commands,
    // then the 19 of `mail` for a `mail send`), and those copies were the largest cost of a start left in
    // our code (docs/benchmarks.md, "Start-up").
    /// Run as if started in DIR (like `git -C`; before the command)
    #[arg(short = 'C', id = "chdir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print machine-readable JSON on stdout (the shapes are documented in docs/json.md)
    #[arg(long, global = true)]
    pub json: bool,
    /// Print no status lines on stderr (data, warnings and errors still print)
    #[arg(short = 'q', long, global = true)]
    pub quiet: bool,
    /// Unknown persona names are errors, not warnings (also: git config jules.strictPersonas true)
    #[arg(long)]
    pub strict: bool,
    /// When to colour human output (NO_COLOR is honoured with `auto`)
    #[arg(long, value_enum, default_value_t = ui::ColorChoice::Auto)]
    pub color: ui::ColorChoice,
    /// Reads replay the whole log: no cache and no checkpoint is used (same answers, the cold path)
    #[arg(long)]
    pub full: bool,
    #[command(subcommand)]
    pub command: Command,
}

// A command group (`mail`, `log`, …) as a struct of arguments rather than a `#[command(subcommand)]`
// variant: clap defers building the arguments of such variants until they run, but builds nested
// subcommand enums eagerly, which cost every run the whole tree of every group. (A plain comment: a doc
// comment here would become every group's about.)
#[derive(Debug, clap::Args)]
#[group(skip)]
pub struct Group<T: Subcommand> {
    #[command(subcommand)]
    pub cmd: T,
}

#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Configure remotes so that plain `git fetch`/`git push` carry refs/jules/* and refs/notes/jules/*
    Init(init::Args),
    /// Fetch, join and push every jules log and notes ref with a remote
    Sync(sync::Args),
    /// The remote's pre-receive hook: refuse pushes that rewrite or delete jules logs (`--install` sets it up)
    Guard(guard::Args),
    /// Inspect and append to the event logs on refs/jules/*
    Log(Group<log::LogCommand>),
    /// The scheduler's cycle history and tracks on refs/jules/state
    State(Group<state::StateCommand>),
    /// Sprints: start, status, close, plan/feedback notes, metrics
    Sprint(Group<sprint::SprintCommand>),
    /// Sprint tasks: todo, done, canceled
    Task(Group<task::TaskCommand>),
    /// The personas' mailboxes on refs/jules/mail
    Mail(Group<mail::MailCommand>),
    /// Decide what runs now (sequential cycle, parallel batch, cron, mailbox consolidation) and record it
    Tick(tick::TickArgs),
    /// Print a persona's prompt: the mailbox preamble, then its rendered template (.jules/personas or .jules/roles)
    Prompt(prompt::PromptArgs),
    /// List the .jules/ scaffold's layers, roles, personas and workstreams; --check validates it
    Roles(roles::RolesArgs),
    /// Workstreams' exchange (seed 001) on refs/jules/exchange: add, decide, expand, take, close, list, export, import
    Exchange(Group<exchange::ExchangeCommand>),
    /// Write the man pages (git-jules.1 and one per subcommand)
    InstallMan(man::Args),
    /// Run a self-contained demonstration in a temporary directory
    Demo(demo::Args),
    /// Patch series on staging branches jules/staging/NAME
    Series(Group<series::SeriesCommand>),
    /// Run a command on every commit of base..HEAD, in temporary worktrees, with a cache
    Verify(verify::Args),
    /// Persona signing keys: make one, check a setup (signed events: docs/format.md)
    Keys(Group<keys::KeysCommand>),
    /// Path leases on refs/jules/lease: say which files you are changing before you change them
    Lease(Group<lease::LeaseCommand>),
    /// Install the git hooks git-jules ships (pre-push: verify pushed series)
    Hooks(Group<hooks::HooksCommand>),
    /// Weave personas' branches, ranges and patch files onto the integration branch, in memory; mail
    /// the authors of what does not apply
    Weave(weave::Args),
    /// Print a shell completion script (bash also completes `git jules <TAB>`)
    Completions(completions::Args),
    /// Serve the persona's tools over the Model Context Protocol on stdio (see docs/mcp.md)
    Mcp(mcp::Args),
    /// The personas' harnesses (Claude Code, Codex, Gemini CLI): hooks, setup, remove, status (docs/agents.md)
    Agent(Group<agent::AgentCommand>),
    /// Serve the operator's web pages on the fleet, mail and series, live (see docs/web.md)
    Web(cli::web::Args),
}

impl Command {
    /// Commands whose output is not data (a script, a man page, a demonstration): `--json` is refused.
    fn without_json(&self) -> Option<&'static str> {
        match self {
            Command::InstallMan(_) => Some("install-man"),
            Command::Demo(_) => Some("demo"),
            Command::Completions(_) => Some("completions"),
            Command::Mcp(_) => Some("mcp"),
            Command::Web(_) => Some("web"),
            Command::Hooks(Group {
                cmd: hooks::HooksCommand::Show(_),
            }) => Some("hooks show"),
            Command::Mail(Group {
                cmd: mail::MailCommand::Attachment(a),
            }) if a.output.is_none() => Some("mail attachment (without -o)"),
            Command::Series(Group {
                cmd: series::SeriesCommand::Review(r),
            }) if r.print => Some("series review --print"),
            _ => None,
        }
    }
}

pub fn run() -> i32 {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // Installed as the hook itself (a symlink or copy named `pre-commit` in the hooks directory), git execs
    // the binary directly: no `/bin/sh`, no `command -v`. argv[0] is the hook's path, so its file name says
    // which hook runs; git already gives hooks /dev/null as stdin and stderr as stdout, as the shim did.
    // The shim's own command line is the same hook. Either way clap is skipped: building its command tree
    // was a tenth of the hook's time, and every commit pays the hook (docs/benchmarks.md, "Path leases").
    // The installed hook's `#!` line runs `git-jules --pre-commit-hook HOOK-PATH` (src/store/hooks.rs).
    let hook_args = ["lease", "check", "--staged", "--pre-commit"];
    if (args.len() <= 1 && is_hook_name(args.first(), "pre-commit"))
        || (args.len() == 3 && args[1] == git_jules::store::hooks::PRE_COMMIT_ARG)
        || (args.len() == 5 && args[1..].iter().zip(hook_args).all(|(a, h)| a == h))
    {
        return run_pre_commit_hook();
    }
    run_from(args)
}

/// Arm the library's test pause point from `JULES_TEST_PAUSE_*` (src/kit/testhook.rs), for tests that must
/// hold or kill a process at a known point; without `JULES_TEST_PAUSE_AT` nothing is armed.
fn arm_test_pause() {
    let Some(at) = std::env::var("JULES_TEST_PAUSE_AT").ok() else {
        return;
    };
    let Some(dir) = std::env::var_os("JULES_TEST_PAUSE_DIR") else {
        return;
    };
    let num = |k: &str, default: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    git_jules::kit::testhook::arm(git_jules::kit::testhook::Pause {
        at,
        hit: num("JULES_TEST_PAUSE_HIT", 1).max(1),
        dir: PathBuf::from(dir),
        until: usize::try_from(num("JULES_TEST_PAUSE_UNTIL", 0)).unwrap_or(usize::MAX),
    });
}

/// `git-jules lease check --staged --pre-commit`, as clap would parse it (`--persona` from
/// `$JULES_PERSONA`, every global option at its default).
fn run_pre_commit_hook() -> i32 {
    let dir = PathBuf::from(".");
    let ctx = Context {
        ui: ui::Ui::new(false, ui::ColorChoice::Auto, false, &dir),
        dir,
        strict: false,
        // git hands hooks its `-c` too: `git -c jules.lease.preCommit=warn commit` is honoured.
        overrides: git_jules::kit::repo::Overrides {
            git_c: context::git_c(),
            ..Default::default()
        },
        passed_over: Default::default(),
    };
    let check = lease::CheckArgs {
        paths: Vec::new(),
        diff: None,
        staged: true,
        pre_commit: true,
        // As clap's `env` reads it: an empty value is no value.
        persona: std::env::var("JULES_PERSONA")
            .ok()
            .filter(|p| !p.is_empty()),
    };
    let result = lease::run(&ctx, lease::LeaseCommand::Check(check));
    finish(&ctx, result)
}

/// Whether argv[0]'s file name is `hook` (the binary running as that git hook).
fn is_hook_name(arg0: Option<&std::ffi::OsString>, hook: &str) -> bool {
    arg0.and_then(|a| Path::new(a).file_name())
        .is_some_and(|n| n == hook)
}

/// Parse `args` (argv, the program name first) and run the command; returns the exit code.
pub fn run_from(args: Vec<std::ffi::OsString>) -> i32 {
    arm_test_pause();
    let args = mail::jules_mail_args(args);
    let wants_json = args.iter().skip(1).any(|a| a == "--json");
    let cli = match parse(&args) {
        Ok(cli) => cli,
        Err(e) => {
            let print = |e: &clap::Error| {
                let _ = e.print();
            };
            if !e.use_stderr() {
                print(&e);
                return EXIT_OK;
            }
            if wants_json {
                let text = e.kind().as_str().unwrap_or("invalid arguments").to_owned();
                // No `Context` yet: the error document goes to the process's stdout as it is.
                let ui = ui::Ui::with_writers(
                    true,
                    Box::new(std::io::stdout()),
                    Box::new(std::io::stderr()),
                );
                print_json_error(&ui, &CliError::new(Kind::Usage, text));
            }
            print(&e);
            return EXIT_USAGE;
        }
    };
    let dir = cli.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let overrides = git_jules::kit::repo::Overrides {
        full_replay: cli.full,
        // The one environment variable of signing, read here because the library reads none.
        signing_key: std::env::var_os("JULES_SIGNING_KEY")
            .filter(|k| !k.is_empty())
            .map(Into::into),
        git_c: context::git_c(),
    };
    let ctx = Context {
        ui: ui::Ui::new(cli.json, cli.color, cli.quiet, &dir),
        dir,
        strict: cli.strict,
        overrides,
        passed_over: Default::default(),
    };
    let result = dispatch(&ctx, cli);
    finish(&ctx, result)
}

/// A command's result as its exit code, with what every command reports on the way out.
fn finish(ctx: &Context, result: anyhow::Result<i32>) -> i32 {
    // Reads under jules.requireSigned that passed over a checkpoint say so, once per log.
    for ignored in ctx.passed_over.take() {
        ctx.ui.warn(ignored.to_string());
    }
    let failure = match result {
        Ok(code) if !ctx.ui.broken_pipe() => return code,
        Ok(_) => CliError::new(Kind::BrokenPipe, "stdout was closed"),
        Err(e) => CliError::from(&e),
    };
    report(&ctx.ui, &failure)
}

/// `Cli::try_parse_from(args)`, except that the process leaves clap's command tree and matches to its exit
/// rather than freeing them one allocation at a time (about 30,000 instructions of a `mail send`,
/// docs/benchmarks.md "Start-up").
fn parse(args: &[std::ffi::OsString]) -> Result<Cli, clap::Error> {
    let mut cmd = Cli::command();
    let parsed = cmd.try_get_matches_from_mut(args).and_then(|mut matches| {
        let parsed = Cli::from_arg_matches_mut(&mut matches).map_err(|e| e.format(&mut cmd));
        std::mem::forget(matches);
        parsed
    });
    std::mem::forget(cmd);
    parsed
}

fn dispatch(ctx: &Context, cli: Cli) -> anyhow::Result<i32> {
    if let Some(d) = &cli.dir {
        if !d.is_dir() {
            return Err(error::usage(format!(
                "cannot change to '{}': No such directory",
                d.display()
            ))
            .into());
        }
    }
    if cli.json {
        if let Some(name) = cli.command.without_json() {
            return Err(error::usage(format!("`{name}` has no JSON output"))
                .hint("drop --json; docs/json.md lists the commands that have it")
                .into());
        }
    }
    match cli.command {
        Command::Init(args) => init::run(ctx, args),
        Command::Sync(args) => sync::run(ctx, args),
        Command::Guard(args) => guard::run(ctx, args),
        Command::Mcp(args) => mcp::run(ctx, args),
        Command::Web(args) => cli::web::run(ctx, args),
        Command::Log(Group { cmd }) => log::run(ctx, cmd),
        Command::State(Group { cmd }) => state::run_state(ctx, cmd),
        Command::Sprint(Group { cmd }) => sprint::run_sprint(ctx, cmd),
        Command::Task(Group { cmd }) => task::run_task(ctx, cmd),
        Command::Mail(Group { cmd }) => mail::run(ctx, cmd),
        Command::Tick(args) => tick::run_tick(ctx, args),
        Command::Prompt(args) => prompt::run(ctx, args),
        Command::Roles(args) => roles::run(ctx, args),
        Command::Exchange(Group { cmd }) => exchange::run(ctx, cmd),
        Command::InstallMan(args) => man::run(ctx, args),
        Command::Demo(args) => demo::run(ctx, args),
        Command::Series(Group { cmd }) => series::run(ctx, cmd),
        Command::Verify(args) => verify::run(ctx, args, cli.json),
        Command::Hooks(Group { cmd }) => hooks::run(ctx, cmd),
        Command::Lease(Group { cmd }) => lease::run(ctx, cmd),
        Command::Keys(Group { cmd }) => keys::run(ctx, cmd),
        Command::Weave(args) => weave::run(ctx, args, cli.json),
        Command::Completions(args) => completions::run(ctx, args),
        Command::Agent(Group { cmd }) => agent::run(ctx, cmd),
    }
}

/// Print a failure: `error: ...`, the causes, `hint: ...` lines on stderr; with `--json` also
/// `{"version": 1, "error": {...}, "exit": N}` on stdout. Returns the exit code.
pub fn report(ui: &ui::Ui, e: &CliError) -> i32 {
    if e.kind == Kind::BrokenPipe {
        return e.exit_code();
    }
    if ui.json {
        print_json_error(ui, e);
    }
    ui.err(format!("{} {}", ui.err_label("31", "error:"), e.message));
    if !e.causes.is_empty() {
        ui.err("caused by:");
        for (i, c) in e.causes.iter().enumerate() {
            ui.err(format!("  {}: {c}", i + 1));
        }
    }
    for h in &e.hints {
        ui.err(format!("{} {h}", ui.err_label("33", "hint:")));
    }
    e.exit_code()
}

fn print_json_error(ui: &ui::Ui, e: &CliError) {
    let doc = serde_json::json!({ "version": ui::JSON_VERSION, "error": e, "exit": e.exit_code() });
    if let Ok(s) = serde_json::to_string_pretty(&doc) {
        ui.out(s);
    }
}

/// The clap command tree, for man pages and the self-check test.
pub fn command() -> clap::Command {
    // Subcommands are deferred (`#[command(defer = true)]`): a run builds only the arguments of the
    // command it runs. Man pages, completions and the checks need the whole tree, so build it.
    let mut cmd = unbuilt_command();
    cmd.build();
    cmd
}

/// The clap command tree before clap's build step, for callers that rename it first and then let clap build
/// it (completions: the subcommands' bin names derive from the root's at build time).
pub fn unbuilt_command() -> clap::Command {
    Cli::command()
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_definition_is_consistent() {
        super::command().debug_assert();
    }

    /// With deferred subcommands, a doc comment on a flattened argument struct becomes the about of every
    /// subcommand that flattens it (it once made ten `mail` commands describe themselves as "`--persona P`,
    /// else `$JULES_PERSONA`"). Siblings always say different things.
    #[test]
    fn sibling_subcommands_have_their_own_about() {
        fn walk(cmd: &clap::Command, path: &str) {
            let mut seen = std::collections::BTreeMap::new();
            for sub in cmd.get_subcommands() {
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                assert!(!about.is_empty(), "{path} {} has no about", sub.get_name());
                if let Some(other) = seen.insert(about.clone(), sub.get_name().to_owned()) {
                    panic!(
                        "{path} {other} and {} share the about {about:?}",
                        sub.get_name()
                    );
                }
                walk(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        walk(&super::command(), "git jules");
    }
}
