//! Opening the repository the way git does, and the identities git-jules writes with.

use std::path::{Path, PathBuf};

use crate::kit::error::{Result, ResultExt};

/// Open the repository containing `dir`, honouring `GIT_DIR`, `GIT_WORK_TREE` and friends like git does.
pub fn open(dir: &Path) -> Result<gix::Repository> {
    open_with(dir, &Overrides::default())
}

/// What a frontend decides for every use case it calls on one repository, beyond what the configuration
/// says: carried by the repository handle itself as configuration overrides (as `git -c` would), so that
/// every call on that handle, every thread-local copy of it and every reopening (sync reopens after a
/// fetch; gix opens a new worktree with its parent's options) sees the same, and two handles in one
/// process (two MCP sessions, a web server and a CLI call in a test) never see each other's: no
/// process-wide switch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// Reads replay the whole log: no cache and no checkpoint (`--full`; the configuration variable
    /// [`FULL_REPLAY`]).
    pub full_replay: bool,
    /// Every event written through this handle is signed with this key, whatever the configuration says
    /// for its actor (`JULES_SIGNING_KEY`; the MCP server and `web --as` pin their persona's key): the
    /// configuration variable [`SESSION_SIGNING_KEY`].
    pub signing_key: Option<PathBuf>,
    /// `git -c` for this handle: `key=value` pairs (or `key` alone for true) from git's
    /// `GIT_CONFIG_PARAMETERS`, which the frontend reads and [`crate::kit::settings::git_c_overrides`] parses.
    /// They are command-line overrides: after the files and `GIT_CONFIG_COUNT`, and below the two fields
    /// above (`--full` wins over `-c jules.fullReplay=false`).
    pub git_c: Vec<String>,
}

/// `jules.fullReplay`: see [`Overrides::full_replay`] (`git -c jules.fullReplay=true jules …` is `--full`).
pub const FULL_REPLAY: &str = crate::kit::settings::FULL_REPLAY;
/// `jules.sessionSigningKey`: see [`Overrides::signing_key`].
pub const SESSION_SIGNING_KEY: &str = crate::kit::settings::SESSION_SIGNING_KEY;

impl Overrides {
    fn config(&self) -> Vec<String> {
        let mut values = Vec::new();
        if self.full_replay {
            values.push(format!("{FULL_REPLAY}=true"));
        }
        if let Some(key) = &self.signing_key {
            values.push(format!("{SESSION_SIGNING_KEY}={}", key.display()));
        }
        values
    }
}

/// [`open`] with a frontend's [`Overrides`].
///
/// Also honours `git -c` as the frontend passed it ([`Overrides::git_c`]; gix does not read
/// `GIT_CONFIG_PARAMETERS`) and checks every `jules.*` setting ([`crate::kit::settings::validate`]): a bad value
/// is an error here, for every frontend, before any use case reads it.
pub fn open_with(dir: &Path, overrides: &Overrides) -> Result<gix::Repository> {
    let values = overrides.config();
    let git_c = &overrides.git_c;
    let found = if values.is_empty() && git_c.is_empty() {
        gix::discover_with_environment_overrides(dir)
    } else {
        // `git -c` as gix's command-line overrides (after the files and GIT_CONFIG_COUNT, as git orders
        // them), the frontend's own decisions as API overrides, last: `--full` wins over `-c`.
        let mut trust: gix::sec::trust::Mapping<gix::open::Options> = Default::default();
        trust.full = trust
            .full
            .cli_overrides(git_c.clone())
            .config_overrides(values.clone());
        trust.reduced = trust
            .reduced
            .cli_overrides(git_c.clone())
            .config_overrides(values);
        gix::ThreadSafeRepository::discover_with_environment_overrides_opts(
            dir,
            Default::default(),
            trust,
        )
        .map(Into::into)
    };
    // gix's discovery error repeats its reason through three sources; when the reason is that there is
    // no repository, say it in git's one line. Any other failure (unreadable config, …) keeps its chain.
    let mut repo = match found {
        Ok(repo) => repo,
        Err(e) if format!("{e:#}").contains("Could not find a git repository") => {
            return Err(crate::Error::NotRepository {
                path: dir.to_path_buf(),
            })
        }
        Err(e) => return Err(e).context(|| format!("opening the repository at {}", dir.display())),
    };
    repo.object_cache_size_if_unset(4 * 1024 * 1024);
    crate::kit::settings::validate(&repo)?;
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

/// Whether an index is one that git-jules may rewrite in process (the series' staging, verify's worktree
/// moves) without losing what git keeps in it: no split, sparse, untracked-cache, fsmonitor or resolve-undo
/// extension, no conflicted stage, no skip-worktree, assume-valid or intent-to-add entry, no gitlink. Anything
/// else goes to `git`, which keeps all of those up to date.
pub fn plain_index(index: &gix::index::File) -> bool {
    use gix::index::entry::{Flags, Mode, Stage};
    if index.link().is_some()
        || index.is_sparse()
        || index.untracked().is_some()
        || index.fs_monitor().is_some()
        || index.resolve_undo().is_some()
    {
        return false;
    }
    let special = Flags::SKIP_WORKTREE | Flags::ASSUME_VALID | Flags::INTENT_TO_ADD;
    index.entries().iter().all(|e| {
        e.stage() == Stage::Unconflicted
            && !e.flags.intersects(special)
            && matches!(e.mode, Mode::FILE | Mode::FILE_EXECUTABLE | Mode::SYMLINK)
    })
}
