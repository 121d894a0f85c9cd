//! `series start` and `series commit`.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::series;

use crate::cli::context::Context;

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

pub fn start(ctx: &Context, a: StartArgs) -> anyhow::Result<i32> {
    let mut repo = ctx.open()?;
    let started = series::start::start(&mut repo, &a.name, a.base.as_deref())?;
    if ctx.ui.json {
        ctx.ui.json(&started);
    } else {
        ctx.ui.status(format!("base: {}", started.base.describe()));
        ctx.ui.status(format!(
            "started series {}: HEAD is now on {}",
            started.series, started.branch
        ));
        ctx.ui.out(&started.branch);
    }
    Ok(0)
}

pub fn commit(ctx: &Context, a: CommitArgs) -> anyhow::Result<i32> {
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
        ctx.ui.json(&done);
    } else {
        ctx.ui.out(format!(
            "[{} {}] {}",
            done.branch,
            git_jules::verify::short_id(&repo, done.commit),
            done.summary
        ));
    }
    Ok(0)
}
