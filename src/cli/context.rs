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

pub struct Context {
    pub ui: ui::Ui,
    pub dir: PathBuf,
    /// `--strict`: unknown persona names are errors.
    pub strict: bool,
}

impl Context {
    pub fn open(&self) -> git_jules::Result<gix::Repository> {
        git_jules::repo::open(&self.dir)
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
        ws
    }
}
