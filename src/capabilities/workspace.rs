//! The value a frontend holds to call the use cases: which repository, and the options that belong to the
//! caller rather than to the process.
//!
//! The CLI makes one per command; the MCP server and the web view make one per session and share it
//! between calls. Everything a use case needs to know about its caller is here (or in its typed input), so
//! two concurrent calls with different options never see each other's: there is no process-wide switch.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::store::eventlog::checkpoint::PassedOver;
use crate::store::eventlog::warm::WarmViews;

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
    /// The views kept in memory between calls, for a frontend that makes many (`keep_warm`).
    warm: Option<Arc<WarmViews>>,
    /// The checkpoints this caller's reads passed over under `jules.requireSigned`, for its frontend to
    /// say (each log once); handed to the logs a use case opens (`Log::with_passed_over`).
    passed_over: Arc<PassedOver>,
}

impl Workspace {
    /// Open the repository that contains `dir` (as `git -C DIR` would find it).
    pub fn open(dir: &Path) -> Result<Self> {
        let repo = crate::kit::repo::open(dir)?;
        Ok(Self::from_repo(dir, repo))
    }

    /// A workspace over a repository the frontend already opened.
    pub fn from_repo(dir: &Path, repo: gix::Repository) -> Self {
        Workspace {
            dir: dir.to_owned(),
            repo: repo.into_sync(),
            strict_personas: false,
            temp_dir: None,
            warm: None,
            passed_over: Arc::default(),
        }
    }

    /// Keep the views of the logs' current tips in memory between this workspace's calls (the MCP server and
    /// the web view: many calls, one process). A one-shot command does not: nothing would read them again.
    pub fn keep_warm(&mut self) {
        self.warm = Some(Arc::new(WarmViews::new()));
    }

    /// Share views another owner keeps warm (a server that makes a workspace per request).
    pub fn share_warm(&mut self, warm: Arc<WarmViews>) {
        self.warm = Some(warm);
    }

    /// The warm views, when kept (hand them to the logs a use case opens: `Log::with_warm`).
    pub fn warm(&self) -> Option<Arc<WarmViews>> {
        self.warm.clone()
    }

    /// Record passed-over checkpoints in `record`, another owner's (the CLI's command makes several
    /// workspaces and says each log once).
    pub fn share_passed_over(&mut self, record: Arc<PassedOver>) {
        self.passed_over = record;
    }

    /// Where this workspace's reads record the checkpoints they pass over: a frontend takes them
    /// (`PassedOver::take`) after a call to say so.
    pub fn passed_over(&self) -> Arc<PassedOver> {
        self.passed_over.clone()
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
