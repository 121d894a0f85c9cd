//! `git jules prompt PERSONA`: print a persona's prompt (mailbox preamble, then its rendered template).

use std::collections::BTreeMap;

use git_jules::capabilities::prompt::{self, Options};
use git_jules::Error;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, SortedDoc, Style};

#[derive(Debug, clap::Args)]
pub struct PromptArgs {
    pub persona: String,
    /// Seed-001 layer: render .jules/roles/LAYER/prompt_assembly.j2 (a launched layered run sets JULES_LAYER)
    #[arg(long, env = "JULES_LAYER")]
    pub layer: Option<String>,
    /// The `role` variable (default: the persona, when a role of that name exists)
    #[arg(long, env = "JULES_ROLE")]
    pub role: Option<String>,
    /// The `workstream` variable; the workstream must exist under .jules/workstreams/
    #[arg(long, env = "JULES_WORKSTREAM")]
    pub workstream: Option<String>,
    /// The `phase` variable (innovators: creation or refinement)
    #[arg(long, env = "JULES_PHASE")]
    pub phase: Option<String>,
    /// An extra template variable (repeatable)
    #[arg(long = "var", value_name = "KEY=VALUE")]
    pub vars: Vec<String>,
}

pub fn run(ctx: &Context, a: PromptArgs) -> anyhow::Result<i32> {
    let mut vars = BTreeMap::new();
    for kv in &a.vars {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(Error::usage(format!("--var {kv:?}: expected KEY=VALUE")).into());
        };
        if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(
                Error::usage(format!("--var {kv:?}: KEY must be letters, digits and '_'")).into(),
            );
        }
        vars.insert(k.to_string(), v.to_string());
    }
    let repo = ctx.open()?;
    let opts = Options {
        layer: a.layer.filter(|s| !s.is_empty()),
        role: a.role.filter(|s| !s.is_empty()),
        workstream: a.workstream.filter(|s| !s.is_empty()),
        phase: a.phase.filter(|s| !s.is_empty()),
        vars,
        now: None,
    };
    let r = prompt::render(&repo, &a.persona, &opts)?;
    ctx.ui.print(&SortedDoc(r));
    Ok(0)
}

/// `prompt`: the rendered text for a person; the rendering with `"version"` among its sorted keys in JSON.
impl Print for SortedDoc<prompt::Rendered> {
    fn human(&self, out: &mut dyn std::io::Write, _: &Style) -> std::io::Result<()> {
        writeln!(out, "{}", self.0.text)
    }
}
