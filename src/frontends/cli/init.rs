//! `git jules init`

use git_jules::store::init;
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

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
    ctx.ui.print(&Configured(reports));
    Ok(0)
}

/// What `init` configured, per remote: status lines for a person, the list in JSON.
#[derive(Serialize)]
#[serde(transparent)]
struct Configured(Vec<init::InitReport>);

impl Print for Configured {
    fn human_status(&self, _: &Style) -> Vec<String> {
        if self.0.is_empty() {
            return vec!["no remote to configure: add one, then run `git jules init` again".into()];
        }
        let mut lines = Vec::new();
        for r in &self.0 {
            if r.added.is_empty() {
                lines.push(format!("remote {}: already configured", r.remote));
            } else {
                for line in &r.added {
                    lines.push(format!("remote {}: {line}", r.remote));
                }
            }
        }
        lines
    }
}
