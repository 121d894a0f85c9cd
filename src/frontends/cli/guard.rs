//! `git jules guard [--install]`: the remote's pre-receive hook (see `git_jules::store::guard`).

use std::io::Read;

use git_jules::store::guard;

use crate::frontends::context::Context;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Install the hook (hooks/pre-receive) into this repository instead of acting as it
    #[arg(long)]
    pub install: bool,
    /// Also refuse events not verified for their actor under this repository's trust roots
    /// (.jules/allowed_signers at jules.trust.ref, default main); also: git config jules.requireSigned true
    #[arg(long)]
    pub require_signed: bool,
}

pub fn run(ctx: &Context, args: Args) -> anyhow::Result<i32> {
    let repo = ctx.open()?;
    if args.install {
        let path = guard::install(repo.git_dir())?;
        ctx.ui.status(format!("installed {}", path.display()));
        if args.require_signed {
            // The hook runs a plain `git jules guard`: the demand lives in the remote's config.
            git_jules::kit::gitcli::run(repo.git_dir(), ["config", "jules.requireSigned", "true"])?;
            ctx.ui.status("set jules.requireSigned = true");
        }
        return Ok(0);
    }
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input)?;
    let updates = guard::parse_updates(&input)?;
    let require_signed =
        args.require_signed || git_jules::store::sign::verdict::require_signed(&repo);
    let opts = guard::Options {
        require_signed,
        trust: if require_signed {
            guard::remote_trust(repo.git_dir())?
        } else {
            None
        },
    };
    let refusals = guard::check_with(repo.git_dir(), &updates, &opts)?;
    if refusals.is_empty() {
        return Ok(0);
    }
    for r in &refusals {
        ctx.ui.warn(format!("git-jules guard refused {r}"));
    }
    eprintln!(
        "error: push refused by git-jules guard ({} problem(s))",
        refusals.len()
    );
    Ok(1)
}
