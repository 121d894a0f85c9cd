//! `git jules init`

use git_jules::init;

use super::{ui, Context};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The remotes to configure (default: every remote)
    #[arg(value_name = "REMOTE")]
    pub remotes: Vec<String>,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let mut repo = ctx.open()?;
    let reports = init::init(&mut repo, &args.remotes)?;
    if ctx.ui.json {
        ui::json(&reports);
    } else if reports.is_empty() {
        ui::status("no remote to configure: add one, then run `git jules init` again");
    } else {
        for r in &reports {
            if r.added.is_empty() {
                ui::status(format!("remote {}: already configured", r.remote));
            } else {
                for line in &r.added {
                    ui::status(format!("remote {}: {line}", r.remote));
                }
            }
        }
    }
    Ok(0)
}
