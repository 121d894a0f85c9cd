//! The git hooks git-jules ships (`hooks/` in the source tree) and their installation.
//!
//! The hooks directory is git's: `core.hooksPath` when set (relative to the working tree root, as git reads
//! it), else `hooks/` in the common git dir. An existing hook with other content is never overwritten
//! silently: `force` replaces it and keeps the old one beside it; an older hook of ours is updated in place.
//!
//! The pre-push hook is a POSIX sh shim that calls the binary. The pre-commit hook runs on every commit, so
//! it is the binary itself: its first line, `#!/path/to/git-jules --pre-commit-hook`, makes the installing
//! binary the hook's interpreter, and git execs it with no shell in between (a shell and a second exec were
//! about a third of what the hook cost a commit; docs/benchmarks.md, "Path leases"). It fails closed: when
//! the binary is moved or deleted, git cannot exec the hook and refuses the commit ("cannot exec"), where a
//! symlink to the binary would be skipped silently (checked with git 2.47: the commit goes through, no
//! warning). A path a `#!` line cannot carry (whitespace, longer than the kernel reads) gets the sh shim,
//! which finds `git-jules` on PATH and refuses the commit when it is not there. The binary also runs the
//! hook when executed under the file name `pre-commit` (`cli::run` dispatches on argv[0]).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::kit::error::{Error, ErrorKind, Remedy, Result, ResultExt};

/// The pre-push hook: verify pushed series commits and refuse the push when one fails.
pub const PRE_PUSH: &str = include_str!("../../hooks/pre-push");

/// The pre-commit hook as a sh shim (for a binary whose path a `#!` line cannot carry): refuse a commit
/// touching paths under another persona's exclusive lease.
pub const PRE_COMMIT: &str = include_str!("../../hooks/pre-commit");

/// The argument of the `#!` line that makes the binary run as the pre-commit hook.
pub const PRE_COMMIT_ARG: &str = "--pre-commit-hook";

/// The line every pre-commit hook of ours carries second, by which install knows its own.
const PRE_COMMIT_MARK: &str = "# git-jules pre-commit hook:";

/// The pre-commit hook for the binary at `exe`: the binary as the hook's interpreter when its path fits a
/// `#!` line, else the sh shim ([`PRE_COMMIT`]).
pub fn pre_commit_hook(exe: &Path) -> String {
    let fits = exe.is_absolute()
        && exe.to_str().is_some_and(|p| {
            // Linux reads 255 bytes of a `#!` line and splits the interpreter from its one argument at
            // the first blank.
            !p.contains(|c: char| c.is_whitespace() || c.is_control())
                && p.len() + PRE_COMMIT_ARG.len() + 4 <= 255
        });
    if !fits {
        return PRE_COMMIT.to_owned();
    }
    let body = PRE_COMMIT
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    format!(
        "#!{} {PRE_COMMIT_ARG}\n{body}\n#\n\
         # This file is not a shell script: the line above makes git exec the git-jules binary with no shell,\n\
         # and git-jules runs `lease check --staged --pre-commit`. If the binary is moved or deleted, git cannot\n\
         # run the hook and refuses every commit; run `git jules hooks install --hook pre-commit` again.\n",
        exe.display()
    )
}

/// Whether `content` is a pre-commit hook of ours (the shim or the `#!` hook, for any binary).
fn is_our_pre_commit(content: &[u8]) -> bool {
    std::str::from_utf8(content)
        .ok()
        .and_then(|t| t.lines().nth(1))
        .is_some_and(|l| l.starts_with(PRE_COMMIT_MARK))
}

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
    /// An older hook of ours (another binary's path, or the shim) was replaced.
    Updated,
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

/// Install the pre-commit hook (path leases) for the binary at `exe` ([`pre_commit_hook`]).
pub fn install_pre_commit(repo: &gix::Repository, exe: &Path, force: bool) -> Result<Installed> {
    install(repo, "pre-commit", &pre_commit_hook(exe), force)
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
        // An older hook of ours (the shim, or another binary's path): updated in place.
        Ok(existing) if name == "pre-commit" && is_our_pre_commit(&existing) => Action::Updated,
        Ok(_) if !force => {
            return Err(Error::needs(
                ErrorKind::Conflict,
                format!(
                    "a different {name} hook exists at {} (replacing it keeps the old one as {name}{BACKUP_SUFFIX})",
                    path.display()
                ),
                Remedy::Replace,
            ))
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
