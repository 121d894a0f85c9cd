//! What every command of the CLI gets from the command line as a whole: the [`Context`] (output settings,
//! the `-C` directory, `--strict`), the exit codes, and the clap tree for the commands that describe the
//! CLI itself (man pages, completions).
//!
//! Commands import these from here and nothing from `cli/mod.rs` (which parses and dispatches): a rule
//! `tests/it/layering.rs` checks, so the dispatcher can change without touching every command.

use std::path::PathBuf;

use super::ui;

pub use super::error::{EXIT_CHECK_FAILED, EXIT_CONFLICT, EXIT_OK};
pub use super::{command, unbuilt_command};

/// `git -c` as git passes it to subcommands and hooks (`GIT_CONFIG_PARAMETERS`), for
/// [`git_jules::kit::repo::Overrides::git_c`]: read here because the library reads no environment.
pub fn git_c() -> Vec<String> {
    std::env::var("GIT_CONFIG_PARAMETERS")
        .map(|text| git_jules::kit::settings::git_c_overrides(&text))
        .unwrap_or_default()
}

pub struct Context {
    pub ui: ui::Ui,
    pub dir: PathBuf,
    /// `--strict`: unknown persona names are errors.
    pub strict: bool,
    /// `--full` and `JULES_SIGNING_KEY`: carried by every repository handle this command opens.
    pub overrides: git_jules::kit::repo::Overrides,
    /// The checkpoints this command's reads passed over (every workspace it makes records here), said
    /// once per log when it ends.
    pub passed_over: std::sync::Arc<git_jules::store::eventlog::checkpoint::PassedOver>,
}

impl Context {
    /// The repository, its settings checked (a bad one is an error); what the configuration gets wrong
    /// without stopping the command is said on stderr (the MCP server and the web view open through here
    /// too, so it lands in their log at start).
    pub fn open(&self) -> git_jules::Result<gix::Repository> {
        let repo = git_jules::kit::repo::open_with(&self.dir, &self.overrides)?;
        for w in git_jules::kit::settings::warnings(&repo) {
            self.ui.warn(w);
        }
        Ok(repo)
    }

    /// The repository for a frontend that acts as `persona` for its whole life (the MCP server): the
    /// persona's key, checked now, pinned on the handle, so every event it writes is signed with that key
    /// and no other.
    pub fn open_as(&self, persona: &str) -> git_jules::Result<gix::Repository> {
        let repo = self.open()?;
        match git_jules::store::sign::keys::pinned_key(&repo, persona)? {
            Some(key) => {
                let overrides = git_jules::kit::repo::Overrides {
                    signing_key: Some(key),
                    ..self.overrides.clone()
                };
                git_jules::kit::repo::open_with(&self.dir, &overrides)
            }
            None => Ok(repo),
        }
    }

    /// The use cases' view of this command: the repository and the caller's options.
    pub fn workspace(&self) -> git_jules::Result<git_jules::Workspace> {
        Ok(self.workspace_of(self.open()?))
    }

    /// [`Context::workspace`] over a repository already opened.
    pub fn workspace_of(&self, repo: gix::Repository) -> git_jules::Workspace {
        let mut ws = git_jules::Workspace::from_repo(&self.dir, repo);
        ws.strict_personas = self.strict;
        ws.temp_dir = Some(std::env::temp_dir());
        ws.share_passed_over(self.passed_over.clone());
        ws
    }
}
