//! `git jules hooks …`: install the git hooks git-jules ships.

use std::path::{Path, PathBuf};

use git_jules::store::hooks::{self, Action, Installed};
use serde::Serialize;

use crate::frontends::context::Context;
use crate::frontends::ui::{Print, Style};

#[derive(Debug, clap::Subcommand)]
#[command(defer = true)]
pub enum HooksCommand {
    /// Install the pre-push hook (verifies pushed jules/staging/* commits) into the hooks directory,
    /// honouring core.hooksPath
    Install(InstallArgs),
    /// Print the pre-push hook script (to chain it from your own hook or a hook manager)
    Show(ShowArgs),
}

/// Which hook: `pre-push` (verify pushed series) or `pre-commit` (refuse commits under others' leases).
#[derive(Debug, Clone, Copy, Default, clap::ValueEnum)]
pub enum Hook {
    #[default]
    PrePush,
    PreCommit,
}

#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The hook to print
    #[arg(long, value_enum, default_value_t)]
    pub hook: Hook,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Replace a different existing pre-push hook (it is kept as pre-push.jules-backup)
    #[arg(long)]
    pub force: bool,
    /// The hook to install
    #[arg(long, value_enum, default_value_t)]
    pub hook: Hook,
}

pub fn run(ctx: &Context, cmd: HooksCommand) -> anyhow::Result<i32> {
    match cmd {
        HooksCommand::Show(a) => {
            match a.hook {
                // Through the Ui like all data: a closed pipe is the broken-pipe exit, not a panic.
                Hook::PrePush => ctx.ui.out_raw(hooks::PRE_PUSH),
                Hook::PreCommit => ctx.ui.out_raw(&hooks::pre_commit_hook(&hook_binary()?)),
            }
            Ok(0)
        }
        HooksCommand::Install(a) => {
            let repo = ctx.open()?;
            let done = match a.hook {
                Hook::PrePush => hooks::install_pre_push(&repo, a.force)?,
                Hook::PreCommit => hooks::install_pre_commit(&repo, &hook_binary()?, a.force)?,
            };
            let hint = matches!(a.hook, Hook::PrePush)
                && repo.config_snapshot().string("jules.verify.cmd").is_none();
            ctx.ui.print(&Install { done, hint });
            Ok(0)
        }
    }
}

/// The binary to name in a hook: the `git-jules` on PATH when it is this binary (a path that survives an
/// upgrade that moves a symlink), else this binary's own path.
fn hook_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let same = |p: &Path| {
        std::fs::canonicalize(p)
            .ok()
            .zip(std::fs::canonicalize(&exe).ok())
            .is_some_and(|(a, b)| a == b)
    };
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|d| d.is_absolute())
        .map(|d| d.join("git-jules"))
        .find(|p| p.is_file());
    Ok(match on_path {
        Some(p) if same(&p) => p,
        _ => exe,
    })
}

/// `hooks install`: what happened to the hook, said on stderr; the library's `Installed` in JSON.
struct Install {
    done: Installed,
    /// The pre-push hook has no command to run yet.
    hint: bool,
}

impl Serialize for Install {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.done.serialize(s)
    }
}

impl Print for Install {
    fn human_status(&self, _: &Style) -> Vec<String> {
        let done = &self.done;
        let path = done.path.display();
        let mut lines = vec![match done.action {
            Action::Installed => format!("installed {path}"),
            Action::Unchanged => format!("{path} is already installed"),
            Action::Updated => format!("updated {path}"),
            Action::Replaced => format!(
                "installed {path}; the previous hook is {}",
                done.backup
                    .as_ref()
                    .map(|b| b.display().to_string())
                    .unwrap_or_default()
            ),
        }];
        if self.hint {
            lines.push(
                "hint: set the command the hook runs: `git config jules.verify.cmd CMD`".into(),
            );
        }
        lines
    }
}
