//! `git jules roles [--check]`: list the `.jules/` scaffold's layers, roles and personas, or validate it.

use git_jules::roles;
use git_jules::Error;

use crate::cli::context::Context;

#[derive(Debug, clap::Args)]
pub struct RolesArgs {
    /// Validate the scaffold instead of listing it (exit 1 when a problem is found)
    #[arg(long)]
    pub check: bool,
}

pub fn run(ctx: &Context, a: RolesArgs) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    let wd = repo
        .workdir()
        .ok_or_else(|| Error::usage("a bare repository has no .jules/ scaffold"))?
        .to_path_buf();
    if a.check {
        let problems = roles::check(&wd);
        if ctx.ui.json {
            ctx.ui.json(
                &serde_json::json!({"version": 1, "ok": problems.is_empty(), "problems": problems}),
            );
        } else if problems.is_empty() {
            ctx.ui.out("scaffold ok");
        } else {
            for p in &problems {
                ctx.ui.out(format!("{}: {}", p.path, p.message));
            }
        }
        return Ok(if problems.is_empty() { 0 } else { 1 });
    }
    let s = roles::scan(&wd);
    if ctx.ui.json {
        let mut v = serde_json::to_value(&s)?;
        v["version"] = 1.into();
        ctx.ui.json(&v);
        return Ok(0);
    }
    for l in &s.layers {
        ctx.ui.out(format!(
            "layer {:<13} roles: {}",
            l.name,
            if l.roles.is_empty() {
                "-".to_string()
            } else {
                l.roles.join(", ")
            }
        ));
    }
    if !s.personas.is_empty() {
        ctx.ui.out(format!("personas: {}", s.personas.join(", ")));
    }
    if !s.workstreams.is_empty() {
        ctx.ui
            .out(format!("workstreams: {}", s.workstreams.join(", ")));
    }
    Ok(0)
}
