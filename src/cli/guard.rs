//! `git jules guard [--install]`: the remote's pre-receive hook (see `git_jules::guard`).

use std::io::Read;

use git_jules::guard;

use super::ui;
use crate::cli::context::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Install the hook (hooks/pre-receive) into this repository instead of acting as it
    #[arg(long)]
    pub install: bool,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    if args.install {
        let path = guard::install(repo.git_dir())?;
        ui::status(format!("installed {}", path.display()));
        return Ok(0);
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let updates = guard::parse_updates(&input)?;
    let refusals = guard::check(repo.git_dir(), &updates)?;
    if refusals.is_empty() {
        return Ok(0);
    }
    for r in &refusals {
        ui::warn(format!("git-jules guard refused {r}"));
    }
    eprintln!(
        "error: push refused by git-jules guard ({} problem(s))",
        refusals.len()
    );
    Ok(1)
}
