//! `series start` and `series commit`.

use std::io::Read;
use std::path::PathBuf;

use anyhow::Context as _;
use git_jules::capabilities::series;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
    ctx.ui.print(&started);
    Ok(0)
}

/// `series start`: the base and the branch on stderr, the branch on stdout for scripts.
impl Print for series::start::Started {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        writeln!(out, "{}", self.branch)
    }
    fn human_status(&self, _: &Style) -> Vec<String> {
        vec![
            format!("base: {}", self.base.describe()),
            format!(
                "started series {}: HEAD is now on {}",
                self.series, self.branch
            ),
        ]
    }
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
    ctx.ui.print(&Committed {
        short: git_jules::capabilities::verify::short_id(&repo, done.commit),
        done,
    });
    Ok(0)
}

/// `series commit`: `[branch abc1234] summary`, as `git commit` says it; the library's report in JSON.
struct Committed {
    done: series::commit::Committed,
    short: String,
}

impl serde::Serialize for Committed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.done.serialize(s)
    }
}

impl Print for Committed {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        writeln!(
            out,
            "[{} {}] {}",
            self.done.branch, self.short, self.done.summary
        )
    }
}
