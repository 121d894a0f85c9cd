//! `git jules init`

use git_jules::init;

use crate::cli::context::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remotes to configure (default: every remote)
    #[arg(value_name = "REMOTE", conflicts_with = "remote")]
    pub remotes: Vec<String>,
    /// Keep the logs and notes on this remote instead of the code's: sets `jules.remote`, which sync, mail
    /// wait --fetch and claims use by default, and configures only it
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let mut repo = ctx.open()?;
    let reports = match &args.remote {
        Some(name) => init::init_coordination(&mut repo, name)?,
        None => init::init(&mut repo, &args.remotes)?,
    };
    if ctx.ui.json {
        ctx.ui.json(&reports);
    } else if reports.is_empty() {
        ctx.ui
            .status("no remote to configure: add one, then run `git jules init` again");
    } else {
        for r in &reports {
            if r.added.is_empty() {
                ctx.ui
                    .status(format!("remote {}: already configured", r.remote));
            } else {
                for line in &r.added {
                    ctx.ui.status(format!("remote {}: {line}", r.remote));
                }
            }
        }
    }
    Ok(0)
}
