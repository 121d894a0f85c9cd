//! Opening the repository the way git does, and the identities git-jules writes with.

use std::path::{Path, PathBuf};

use crate::error::{Result, ResultExt};

/// Open the repository containing `dir`, honouring `GIT_DIR`, `GIT_WORK_TREE` and friends like git does.
pub fn open(dir: &Path) -> Result<gix::Repository> {
    // gix's discovery error repeats its reason through three sources; when the reason is that there is
    // no repository, say it in git's one line. Any other failure (unreadable config, …) keeps its chain.
    let mut repo = match gix::discover_with_environment_overrides(dir) {
        Ok(repo) => repo,
        Err(e) if format!("{e:#}").contains("Could not find a git repository") => {
            return Err(crate::Error::NotRepository {
                path: dir.to_path_buf(),
            })
        }
        Err(e) => return Err(e).context(|| format!("opening the repository at {}", dir.display())),
    };
    repo.object_cache_size_if_unset(4 * 1024 * 1024);
    Ok(repo)
}

/// `.git/jules/` (in the common dir, so linked worktrees share it): derived data only.
pub fn jules_dir(repo: &gix::Repository) -> PathBuf {
    repo.common_dir().join("jules")
}

/// The configured committer, or a fixed fallback so that sandboxes without `user.name` still work.
///
/// Resolved from the configuration as gix's `Repository::committer()` does (`committer.*`, which
/// `GIT_COMMITTER_NAME`/`EMAIL` override, then `user.*`, then gitoxide's fallbacks), without calling it:
/// that also computes a commit time in the system time zone, and finding the zone's name makes jiff index
/// the whole tz database (about 45 directory reads) on every process start. The time is now (UTC), unless
/// the configuration pins it: `gitoxide.commit.committerDate`, which gix fills from `GIT_COMMITTER_DATE` as
/// git honours it (tests pin it to make commits reproducible); only then is a date parsed.
pub fn committer(repo: &gix::Repository) -> gix::actor::Signature {
    let c = repo.config_snapshot();
    let now = now_time();
    let time = match c.string("gitoxide.commit.committerDate") {
        Some(pinned) => {
            let pinned = pinned.to_string();
            gix::date::parse(&pinned, None).unwrap_or(now)
        }
        None => now,
    };
    let first = |keys: &[&str]| keys.iter().find_map(|k| c.string(*k)).map(|v| v.to_owned());
    let name = first(&[
        "committer.name",
        "user.name",
        "gitoxide.committer.nameFallback",
    ]);
    let email = first(&[
        "committer.email",
        "user.email",
        "gitoxide.user.emailFallback",
        "gitoxide.committer.emailFallback",
    ]);
    match (name, email) {
        (Some(name), Some(email)) => gix::actor::Signature { name, email, time },
        _ => gix::actor::Signature {
            name: "git-jules".into(),
            email: "git-jules@jules.invalid".into(),
            time,
        },
    }
}

/// The author line of an event commit: the persona that acted.
pub fn persona_signature(persona: &str, time: gix::date::Time) -> gix::actor::Signature {
    gix::actor::Signature {
        name: persona.into(),
        email: format!("{persona}@jules.invalid").into(),
        time,
    }
}

pub fn now_time() -> gix::date::Time {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default();
    gix::date::Time::new(secs, 0)
}
