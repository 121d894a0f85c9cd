//! `git jules hooks …`: install the git hooks git-jules ships.

use git_jules::hooks::{self, Action};

use super::{ui, Context};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum HooksCommand {
    /// Install the pre-push hook (verifies pushed jules/staging/* commits) into the hooks directory,
    /// honouring core.hooksPath
    Install(InstallArgs),
    /// Print the pre-push hook script (to chain it from your own hook or a hook manager)
    Show,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Replace a different existing pre-push hook (it is kept as pre-push.jules-backup)
    #[arg(long)]
    pub force: bool,
}

pub fn run(ctx: &Context, cmd: HooksCommand) -> anyhow::Result<i32> {
    match cmd {
        HooksCommand::Show => {
            print!("{}", hooks::PRE_PUSH);
            Ok(0)
        }
        HooksCommand::Install(a) => {
            let repo = ctx.open()?;
            let done = hooks::install_pre_push(&repo, a.force)?;
            if ctx.ui.json {
                ui::json(&done);
            } else {
                let path = done.path.display();
                match done.action {
                    Action::Installed => ui::status(format!("installed {path}")),
                    Action::Unchanged => ui::status(format!("{path} is already installed")),
                    Action::Replaced => ui::status(format!(
                        "installed {path}; the previous hook is {}",
                        done.backup
                            .as_ref()
                            .map(|b| b.display().to_string())
                            .unwrap_or_default()
                    )),
                }
                if repo.config_snapshot().string("jules.verify.cmd").is_none() {
                    ui::hint("set the command the hook runs: `git config jules.verify.cmd CMD`");
                }
            }
            Ok(0)
        }
    }
}
