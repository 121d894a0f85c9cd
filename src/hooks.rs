//! The git hooks git-jules ships (`hooks/` in the source tree) and their installation.
//!
//! Hooks are thin POSIX sh shims that call the binary; the hooks directory is git's: `core.hooksPath` when set
//! (relative to the working tree root, as git reads it), else `hooks/` in the common git dir. An existing hook
//! with other content is never overwritten silently: `force` replaces it and keeps the old one beside it.
//!
//! The binary also runs as the pre-commit hook when executed under that file name (`cli::run` dispatches on
//! argv[0]), which saves the shell. Install writes the shim nonetheless: git silently skips a hook symlink
//! whose target is gone (checked with git 2.47: the commit goes through, no warning), so a moved or deleted
//! binary would let commits through unchecked; the shim fails closed instead.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result, ResultExt};

/// The pre-push hook: verify pushed series commits and refuse the push when one fails.
pub const PRE_PUSH: &str = include_str!("../hooks/pre-push");

/// The pre-commit hook: refuse a commit touching paths under another persona's exclusive lease.
pub const PRE_COMMIT: &str = include_str!("../hooks/pre-commit");

/// The suffix of the copy kept of a hook replaced with `force`.
pub const BACKUP_SUFFIX: &str = ".jules-backup";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Installed,
    /// The same hook was already there.
    Unchanged,
    /// A different hook was moved to `<name>.jules-backup` and ours installed.
    Replaced,
}

#[derive(Debug, Serialize)]
pub struct Installed {
    pub hook: &'static str,
    pub path: PathBuf,
    pub action: Action,
    pub backup: Option<PathBuf>,
}

/// The directory git runs hooks from.
pub fn hooks_dir(repo: &gix::Repository) -> Result<PathBuf> {
    let configured = repo.config_snapshot().trusted_path("core.hooksPath");
    match configured {
        Ok(Some(path)) if !path.as_os_str().is_empty() => {
            Ok(if path.is_absolute() {
                path
            } else {
                // git runs hooks from the top of the working tree (the git dir when bare).
                let top = repo.workdir().unwrap_or_else(|| repo.git_dir());
                std::path::absolute(top)
                    .context(|| format!("resolving {}", top.display()))?
                    .join(path)
            })
        }
        Err(e) => Err(Error::usage(format!(
            "core.hooksPath is not a usable path: {e}"
        ))),
        _ => std::path::absolute(repo.common_dir().join("hooks"))
            .context(|| "resolving the hooks directory".into()),
    }
}

/// Install the pre-push hook.
pub fn install_pre_push(repo: &gix::Repository, force: bool) -> Result<Installed> {
    install(repo, "pre-push", PRE_PUSH, force)
}

/// Install the pre-commit hook (path leases).
pub fn install_pre_commit(repo: &gix::Repository, force: bool) -> Result<Installed> {
    install(repo, "pre-commit", PRE_COMMIT, force)
}

fn install(
    repo: &gix::Repository,
    name: &'static str,
    content: &str,
    force: bool,
) -> Result<Installed> {
    let dir = hooks_dir(repo)?;
    let path = dir.join(name);
    let mut backup = None;
    let action = match std::fs::read(&path) {
        Ok(existing) if existing == content.as_bytes() => {
            make_executable(&path)?;
            return Ok(Installed {
                hook: name,
                path,
                action: Action::Unchanged,
                backup: None,
            });
        }
        Ok(_) if !force => {
            return Err(Error::Conflict(format!(
                "a different {name} hook exists at {}; pass --force to replace it (the old one is kept as {name}{BACKUP_SUFFIX})",
                path.display()
            )))
        }
        Ok(_) => {
            let to = dir.join(format!("{name}{BACKUP_SUFFIX}"));
            std::fs::rename(&path, &to)
                .context(|| format!("moving {} to {}", path.display(), to.display()))?;
            backup = Some(to);
            Action::Replaced
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Action::Installed,
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    std::fs::create_dir_all(&dir).context(|| format!("creating {}", dir.display()))?;
    let tmp = dir.join(format!(".{name}.jules-tmp"));
    std::fs::write(&tmp, content).context(|| format!("writing {}", tmp.display()))?;
    make_executable(&tmp)?;
    std::fs::rename(&tmp, &path).context(|| format!("installing {}", path.display()))?;
    Ok(Installed {
        hook: name,
        path,
        action,
        backup,
    })
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .context(|| format!("making {} executable", path.display()))
}
