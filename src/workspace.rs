//! The value a frontend holds to call the use cases: which repository, and the options that belong to the
//! caller rather than to the process.
//!
//! The CLI makes one per command; the MCP server and the web view make one per session and share it
//! between calls. Everything a use case needs to know about its caller is here (or in its typed input), so
//! two concurrent calls with different options never see each other's: there is no process-wide switch.

use std::path::{Path, PathBuf};

use crate::Result;

/// A repository opened for the use cases, with the caller's options.
pub struct Workspace {
    dir: PathBuf,
    repo: gix::ThreadSafeRepository,
    /// Unknown persona names are errors, not warnings (`--strict`; `jules.strictPersonas` also turns it
    /// on, whatever this says).
    pub strict_personas: bool,
    /// Where scratch files and verify's worktrees may go when nothing is configured (the frontend's
    /// temporary directory; the library reads no environment). Default: `.git/jules/tmp`.
    pub temp_dir: Option<PathBuf>,
}

impl Workspace {
    /// Open the repository that contains `dir` (as `git -C DIR` would find it).
    pub fn open(dir: &Path) -> Result<Self> {
        let repo = crate::repo::open(dir)?;
        Ok(Self::from_repo(dir, repo))
    }

    /// A workspace over a repository the frontend already opened.
    pub fn from_repo(dir: &Path, repo: gix::Repository) -> Self {
        Workspace {
            dir: dir.to_owned(),
            repo: repo.into_sync(),
            strict_personas: false,
            temp_dir: None,
        }
    }

    /// A handle on the repository for this thread (cheap: the object store and caches are shared).
    pub fn repo(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// The temporary directory (see [`Workspace::temp_dir`]).
    pub fn scratch_dir(&self) -> PathBuf {
        match &self.temp_dir {
            Some(t) => t.clone(),
            None => self.repo.to_thread_local().common_dir().join("jules/tmp"),
        }
    }

    /// The directory relative paths given by the caller are resolved against (the `-C` directory).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
