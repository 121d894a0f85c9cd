//! `git jules series …`: start a staging branch, commit patches with a rationale, show series.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::series::{self, status::VerifyState, Base};

use super::{ui, Context};

#[derive(Debug, clap::Subcommand)]
pub enum SeriesCommand {
    /// Create jules/staging/NAME from the base (default: the current branch) and check it out
    Start(StartArgs),
    /// Stage every change (like `git add -A`) and commit it as the next patch, with a Rationale: trailer
    Commit(CommitArgs),
    /// Show a series (default: the current one): base, numbered patches, cached verify results
    Status(StatusArgs),
    /// List every series with its base and verify counts
    List(ListArgs),
}

#[derive(Debug, clap::Args)]
pub struct StartArgs {
    /// The series name (letters, digits, '-', '_' and '.')
    pub name: String,
    /// The branch (or any commit) to start from and to measure the series against
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct CommitArgs {
    /// The patch's one-line summary (the commit subject)
    #[arg(long, short = 's')]
    pub summary: String,
    /// Why the patch exists; may span lines
    #[arg(
        long,
        short = 'r',
        required_unless_present = "rationale_file",
        conflicts_with = "rationale_file"
    )]
    pub rationale: Option<String>,
    /// Read the rationale from FILE (`-` for stdin)
    #[arg(short = 'F', long = "rationale-file", value_name = "FILE")]
    pub rationale_file: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The series (default: the one HEAD is on)
    pub name: Option<String>,
    /// Measure against this base instead of the configured one
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Show cached results of this command (default: jules.verify.cmd)
    #[arg(long, value_name = "CMD")]
    pub cmd: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Show cached results of this command (default: jules.verify.cmd)
    #[arg(long, value_name = "CMD")]
    pub cmd: Option<String>,
}

pub fn run(ctx: &Context, cmd: SeriesCommand) -> anyhow::Result<i32> {
    match cmd {
        SeriesCommand::Start(a) => start(ctx, a),
        SeriesCommand::Commit(a) => commit(ctx, a),
        SeriesCommand::Status(a) => status(ctx, a),
        SeriesCommand::List(a) => list(ctx, a),
    }
}

/// "main (the current branch) at 1a2b3c4"
pub fn describe_base(base: &Base) -> String {
    format!(
        "{} ({}) at {}",
        base.name,
        base.source.describe(),
        base.commit.to_hex_with_len(7)
    )
}

fn start(ctx: &Context, a: StartArgs) -> anyhow::Result<i32> {
    let mut repo = ctx.open()?;
    let started = series::start::start(&mut repo, &a.name, a.base.as_deref())?;
    if ctx.ui.json {
        ui::json(&started);
    } else {
        ui::status(format!("base: {}", describe_base(&started.base)));
        ui::status(format!(
            "started series {}: HEAD is now on {}",
            started.series, started.branch
        ));
        ui::out(&started.branch);
    }
    Ok(0)
}

fn commit(ctx: &Context, a: CommitArgs) -> anyhow::Result<i32> {
    let rationale = match (&a.rationale, &a.rationale_file) {
        (Some(r), _) => r.clone(),
        (None, Some(path)) if path.as_os_str() == "-" => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("reading the rationale from stdin (it must be UTF-8)")?;
            text
        }
        (None, Some(path)) => std::fs::read_to_string(path)
            .with_context(|| format!("reading the rationale from {}", path.display()))?,
        (None, None) => String::new(),
    };
    let repo = ctx.open()?;
    let done = series::commit::commit(&repo, &a.summary, &rationale)?;
    if ctx.ui.json {
        ui::json(&done);
    } else {
        ui::out(format!(
            "[{} {}] {}",
            done.branch,
            git_jules::verify::short_id(&repo, done.commit),
            done.summary
        ));
    }
    Ok(0)
}

fn verify_command(repo: &gix::Repository, explicit: Option<String>) -> Option<String> {
    explicit.or_else(|| {
        repo.config_snapshot()
            .string("jules.verify.cmd")
            .map(|s| s.to_string())
            .filter(|s| !s.trim().is_empty())
    })
}

fn state_word(s: VerifyState) -> &'static str {
    match s {
        VerifyState::Pass => "pass",
        VerifyState::Fail => "FAIL",
        VerifyState::Unverified => "unverified",
        VerifyState::Unknown => "-",
    }
}

fn status(ctx: &Context, a: StatusArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let cmd = verify_command(&repo, a.cmd);
    let st = series::status::status(&repo, a.name.as_deref(), a.base.as_deref(), cmd.as_deref())?;
    if ctx.ui.json {
        ui::json(&st);
        return Ok(0);
    }
    ui::out(format!(
        "series {} ({}), base {}",
        ctx.ui.bold(&st.series),
        st.branch,
        describe_base(&st.base)
    ));
    if st.patches.is_empty() {
        ui::out(format!(
            "no patches: {}..{} is empty",
            st.base.name, st.branch
        ));
        return Ok(0);
    }
    let n = st.patches.len();
    for p in &st.patches {
        let word = state_word(p.verify);
        let word = match p.verify {
            VerifyState::Pass => ctx.ui.green(word),
            VerifyState::Fail => ctx.ui.red(word),
            _ => word.to_owned(),
        };
        ui::out(format!(
            "  {:>2}/{n} {} {:<10} {}",
            p.patch.index,
            ctx.ui.yellow(&p.short),
            word,
            p.patch.summary
        ));
    }
    if cmd.is_none() {
        ui::status(
            "hint: set `git config jules.verify.cmd CMD` (or pass --cmd) to see verify results",
        );
    }
    Ok(0)
}

fn list(ctx: &Context, a: ListArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let cmd = verify_command(&repo, a.cmd);
    let all = series::status::list(&repo, cmd.as_deref())?;
    if ctx.ui.json {
        ui::json(&all);
        return Ok(0);
    }
    if all.is_empty() {
        ui::status("no series: start one with `git jules series start NAME`");
    }
    for st in &all {
        let (pass, fail, unverified) = st.counts();
        let verify = if cmd.is_some() {
            format!("{pass} pass, {fail} fail, {unverified} unverified")
        } else {
            "verify: no jules.verify.cmd".to_owned()
        };
        ui::out(format!(
            "{} {:<20} {:>3} patches  base {:<16} {}",
            if st.current { "*" } else { " " },
            st.series,
            st.patches.len(),
            st.base.name,
            verify
        ));
    }
    Ok(0)
}
