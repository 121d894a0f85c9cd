//! The command line: clap definitions, dispatch, and the mapping of errors to exit codes.
//!
//! Exit codes: 0 ok; 1 a check failed (verify, fsck found problems, wait timed out); 2 usage or error;
//! 3 a conflict stopped the operation and nothing was changed; 130 interrupted.

mod demo;
mod exchange;
mod hooks;
mod init;
mod interrupt;
mod log;
mod mail;
mod man;
mod prompt;
mod roles;
mod series;
mod state;
mod sync;
mod tick;
pub mod ui;
mod verify;
mod weave;

use std::path::PathBuf;

use clap::{CommandFactory, Parser, Subcommand};
use git_jules::{Error, ErrorKind};

pub const EXIT_OK: i32 = 0;
pub const EXIT_CHECK_FAILED: i32 = 1;
pub const EXIT_ERROR: i32 = 2;
pub const EXIT_CONFLICT: i32 = 3;

/// Many AI personas, one repository: mail, sprint state, patch series and weaving, coordinated through git.
#[derive(Debug, Parser)]
#[command(
    name = "git-jules",
    bin_name = "git jules",
    version,
    about,
    after_help = "Exit codes: 0 ok, 1 a check failed, 2 usage or error, 3 a conflict stopped the operation, 130 interrupted.\n\
                  `git jules --help` opens the man page git-jules(1); install it with `git jules install-man`."
)]
pub struct Cli {
    /// Run as if started in DIR (like `git -C`)
    #[arg(short = 'C', global = true, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Print machine-readable JSON on stdout (the shape is documented in docs/cli.md)
    #[arg(long, global = true)]
    pub json: bool,
    /// When to colour human output (NO_COLOR is honoured with `auto`)
    #[arg(long, global = true, value_enum, default_value_t = ui::ColorChoice::Auto)]
    pub color: ui::ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Configure remotes so that plain `git fetch`/`git push` carry refs/jules/* and refs/notes/jules/*
    Init(init::Args),
    /// Fetch, join and push every jules log and notes ref with a remote
    Sync(sync::Args),
    /// Inspect and append to the event logs on refs/jules/*
    #[command(subcommand)]
    Log(log::LogCommand),
    /// The scheduler's cycle history and tracks on refs/jules/state
    #[command(subcommand)]
    State(state::StateCommand),
    /// Sprints: start, status, close, plan/feedback notes, metrics
    #[command(subcommand)]
    Sprint(state::SprintCommand),
    /// Sprint tasks: todo, done, canceled
    #[command(subcommand)]
    Task(state::TaskCommand),
    /// The personas' mailboxes on refs/jules/mail
    #[command(subcommand)]
    Mail(mail::MailCommand),
    /// Decide what runs now (sequential cycle, parallel batch, cron, mailbox consolidation) and record it
    Tick(tick::TickArgs),
    /// Print a persona's prompt: the mailbox preamble, then its rendered template (.jules/personas or .jules/roles)
    Prompt(prompt::PromptArgs),
    /// List the .jules/ scaffold's layers, roles, personas and workstreams; --check validates it
    Roles(roles::RolesArgs),
    /// Workstreams' exchange (seed 001) on refs/jules/exchange: add, decide, expand, take, close, list, export, import
    #[command(subcommand)]
    Exchange(exchange::ExchangeCommand),
    /// Write the man pages (git-jules.1 and one per subcommand)
    InstallMan(man::Args),
    /// Run a self-contained demonstration in a temporary directory
    Demo(demo::Args),
    /// Patch series on staging branches jules/staging/NAME
    #[command(subcommand)]
    Series(series::SeriesCommand),
    /// Run a command on every commit of base..HEAD, in temporary worktrees, with a cache
    Verify(verify::Args),
    /// Install the git hooks git-jules ships (pre-push: verify pushed series)
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// Weave personas' branches, ranges and patch files onto the integration branch, in memory; mail
    /// the authors of what does not apply
    Weave(weave::Args),
}

pub struct Context {
    pub ui: ui::Ui,
    pub dir: PathBuf,
}

impl Context {
    pub fn open(&self) -> git_jules::Result<gix::Repository> {
        git_jules::repo::open(&self.dir)
    }
}

pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    let ctx = Context {
        ui: ui::Ui::new(cli.json, cli.color),
        dir: cli.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
    };
    let result = match cli.command {
        Command::Init(args) => init::run(&ctx, args),
        Command::Sync(args) => sync::run(&ctx, args),
        Command::Log(cmd) => log::run(&ctx, cmd),
        Command::State(cmd) => state::run_state(&ctx, cmd),
        Command::Sprint(cmd) => state::run_sprint(&ctx, cmd),
        Command::Task(cmd) => state::run_task(&ctx, cmd),
        Command::Mail(cmd) => mail::run(&ctx, cmd),
        Command::Tick(args) => tick::run_tick(&ctx, args),
        Command::Prompt(args) => prompt::run(&ctx, args),
        Command::Roles(args) => roles::run(&ctx, args),
        Command::Exchange(cmd) => exchange::run(&ctx, cmd),
        Command::InstallMan(args) => man::run(&ctx, args),
        Command::Demo(args) => demo::run(&ctx, args),
        Command::Series(cmd) => series::run(&ctx, cmd),
        Command::Verify(args) => verify::run(&ctx, args, cli.json),
        Command::Hooks(cmd) => hooks::run(&ctx, cmd),
        Command::Weave(args) => weave::run(&ctx, args, cli.json),
    };
    match result {
        Ok(code) => code,
        Err(e) => report(&ctx.ui, &e),
    }
}

/// Print an error the way jj does (error, numbered causes, hint) and choose the exit code.
pub fn report(ui: &ui::Ui, e: &anyhow::Error) -> i32 {
    eprintln!("{} {e}", ui.red("error:"));
    let mut causes = e.chain().skip(1).peekable();
    if causes.peek().is_some() {
        eprintln!("caused by:");
        for (i, c) in causes.enumerate() {
            eprintln!("  {}: {c}", i + 1);
        }
    }
    let kind = e.downcast_ref::<Error>().map(Error::kind);
    if let Some(Error::Race { .. }) = e.downcast_ref::<Error>() {
        eprintln!("hint: another writer kept the ref busy; run the command again");
    }
    match kind {
        Some(ErrorKind::CheckFailed) => EXIT_CHECK_FAILED,
        Some(ErrorKind::Conflict) => EXIT_CONFLICT,
        _ => EXIT_ERROR,
    }
}

/// The clap command tree, for man pages and the self-check test.
pub fn command() -> clap::Command {
    Cli::command()
}

#[cfg(test)]
mod tests {
    #[test]
    fn clap_definition_is_consistent() {
        super::command().debug_assert();
    }
}
