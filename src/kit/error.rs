//! The library's error type.
//!
//! Errors are sorted by what the caller can do about them ([`ErrorKind`]); the CLI maps each kind to a
//! documented exit code (see `docs/cli.md`). Messages have no trailing period and name the offending input.

use std::path::PathBuf;

/// What kind of failure this is, which decides the process exit code at the CLI edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad input from the user: a name, an id, a flag combination (exit 2).
    Usage,
    /// Something named by the user does not exist (exit 2).
    NotFound,
    /// A check ran and failed, for example a verify command (exit 1).
    CheckFailed,
    /// A conflict stopped the operation; nothing was changed (exit 3).
    Conflict,
    /// The repository, the file system or git itself failed, or a bug (exit 4).
    Internal,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    /// No repository at or above the directory (git's own wording).
    #[error("not a git repository (or any of the parent directories): {}", path.display())]
    NotRepository { path: PathBuf },
    #[error("{what} not found: {name}")]
    NotFound { what: Thing, name: String },
    #[error("ambiguous {what} prefix {prefix}: it matches {}", candidates.join(", "))]
    Ambiguous {
        what: Thing,
        prefix: String,
        candidates: Vec<String>,
    },
    #[error("{0}")]
    CheckFailed(String),
    #[error("{0}")]
    Conflict(String),
    /// The remote or the environment refused, for a reason the user fixes: wrong credentials, an unreachable
    /// host, a stale lock file left by a killed process (exit 2, like bad input).
    #[error("{0}")]
    Refused(String),
    #[error("{message}")]
    Race { message: String },
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{context}")]
    Git {
        context: String,
        #[source]
        source: Box<gix::Error>,
    },
    #[error("`git {args}` failed: {stderr}")]
    GitCommand { args: String, stderr: String },
    #[error("{path}: {message}")]
    Corrupt { path: PathBuf, message: String },
    /// A name given where one persona is expected that is not one (a group, or nobody known); the
    /// problem says what is known instead, as data, for each frontend to word.
    #[error("{}", persona_message(name, problem))]
    Persona { name: String, problem: NameProblem },
    /// A configuration value of the wrong type or out of range, in git's words
    /// (`bad boolean config value 'maybe' for 'jules.requireSigned'`), and why when there is more to say.
    #[error("bad {expected} config value '{value}' for '{key}'{}", why.as_ref().map(|w| format!(": {w}")).unwrap_or_default())]
    Config {
        key: String,
        value: String,
        expected: &'static str,
        why: Option<String>,
    },
    /// A failure below us (gix, the file system, serde, tantivy, ssh-key, …) with what we were doing: the
    /// message is the context alone, and the failure below stays the `source()`, so every frontend can show
    /// the causes (the CLI's numbered `caused by:` lines) and nothing is flattened into text. `{:#}` writes the
    /// context and every cause on one line, for a message that must stay one string.
    #[error(transparent)]
    Source(Sourced),
    /// A refusal the caller fixes by giving more: the message says what is wrong in the library's words, and
    /// `remedy` says what would fix it, as data, which each frontend words in its own terms (the CLI as flags
    /// in `src/frontends/error.rs`, the MCP server as argument fields). The kind is the one the site always had.
    #[error("{message}")]
    Needs {
        kind: ErrorKind,
        message: String,
        remedy: Remedy,
    },
    /// A failure with no error below it to keep (a bug, an invariant that did not hold). An error from below
    /// is an [`Error::Source`] instead ([`Error::wrap`]).
    #[error("{0}")]
    Other(String),
}

/// What was being done, and the failure below it (see [`Error::Source`]).
#[derive(Debug)]
pub struct Sourced {
    pub context: String,
    pub source: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl std::fmt::Display for Sourced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.context)?;
        if f.alternate() {
            // One line for a frontend that has room for one string (a web page, a warning in data).
            let mut at: Option<&(dyn std::error::Error + 'static)> = Some(&*self.source);
            while let Some(c) = at {
                write!(f, ": {c}")?;
                at = c.source();
            }
        }
        Ok(())
    }
}

impl std::error::Error for Sourced {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

/// What would fix a refused operation, as data (see [`Error::Needs`]): each frontend words it, the CLI as
/// flags, the MCP server as the tool's argument fields, so no library message names either.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Remedy {
    /// Force it and say why (another persona's lease: the holder is mailed).
    ForceWithReason,
    /// A forced operation needs its reason.
    Reason,
    /// Replace what is there (a hook that is not ours, an earlier export).
    Replace,
    /// Name the base branch explicitly.
    Base,
    /// The series cannot fast-forward its base: land it by rebasing or by a merge.
    RebaseOrMerge,
    /// The series no longer applies on its base: land it by a merge (or reroll it first).
    Merge,
    /// Patch `patch` would become empty: drop it from the series.
    Drop { patch: String },
    /// Compare the versions as they are, without replaying the older onto the newer base.
    NoRebase,
    /// Say why the patch exists: give its rationale.
    Rationale,
    /// A whole new message replaces summary and rationale: give it alone.
    MessageAlone,
    /// Keep the `Rationale:` trailer in the new message, or change only the summary.
    KeepRationale,
    /// Nothing to fold: change files first, or reword patch `patch` (message, summary or rationale).
    Reword { patch: String },
    /// The key file exists: write the new key to another path.
    OtherPath,
    /// Name the persona (or role) it belongs to.
    Persona,
    /// Name the issue's label.
    Label,
    /// Name the issue the plan expands.
    Issue,
    /// `persona` has no signing key: make one and configure it.
    SigningKey { persona: String },
    /// A dry run cannot verify: verifying needs the woven commits on disk.
    CheckWithoutVerify,
    /// The integration branch is checked out here: pick another.
    Into,
    /// Nothing was named: give branches, ranges, patch files or a branch pattern.
    Inputs,
    /// No verify command: give one, or configure `jules.verify.cmd`.
    VerifyCommand,
}

/// What was not found, or is ambiguous ([`Error::NotFound`], [`Error::Ambiguous`]): a kind of thing, as data,
/// so that a frontend can say where to look in its own terms (the CLI names a listing command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Thing {
    Attachment,
    Backup,
    Base,
    BaseBranch,
    Branch,
    Event,
    Issue,
    Layer,
    Lease,
    Log,
    Maildir,
    Message,
    Remote,
    Revision,
    RunOrSession,
    Schema,
    Series,
    SeriesVersion,
    SourceEvent,
    Sprint,
    Task,
    Template,
    Workstream,
}

impl Thing {
    /// The thing's name in messages (`message not found: 3f2a`).
    pub fn as_str(self) -> &'static str {
        match self {
            Thing::Attachment => "attachment",
            Thing::Backup => "backup",
            Thing::Base => "base",
            Thing::BaseBranch => "base branch",
            Thing::Branch => "branch",
            Thing::Event => "event",
            Thing::Issue => "issue",
            Thing::Layer => "layer",
            Thing::Lease => "lease",
            Thing::Log => "log",
            Thing::Maildir => "maildir",
            Thing::Message => "message",
            Thing::Remote => "remote",
            Thing::Revision => "revision",
            Thing::RunOrSession => "run or session",
            Thing::Schema => "schema",
            Thing::Series => "series",
            Thing::SeriesVersion => "series version",
            Thing::SourceEvent => "source event",
            Thing::Sprint => "sprint",
            Thing::Task => "task",
            Thing::Template => "template",
            Thing::Workstream => "workstream",
        }
    }
}

impl std::fmt::Display for Thing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a name is not a persona (see [`Error::Persona`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameProblem {
    /// A group: one of its members is meant.
    Group { members: Vec<String> },
    /// Nobody known (an error only when strict); the closest known persona, if one is close.
    Unknown {
        suggestion: Option<String>,
        strict: bool,
    },
}

fn persona_message(name: &str, problem: &NameProblem) -> String {
    match problem {
        NameProblem::Group { .. } => format!("{name} is a group, not a persona"),
        NameProblem::Unknown { .. } => format!("unknown persona {name}"),
    }
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Usage(_) | Error::Ambiguous { .. } | Error::NotRepository { .. } => {
                ErrorKind::Usage
            }
            Error::NotFound { .. } => ErrorKind::NotFound,
            Error::Refused(_) | Error::Persona { .. } | Error::Config { .. } => ErrorKind::Usage,
            Error::CheckFailed(_) => ErrorKind::CheckFailed,
            Error::Conflict(_) => ErrorKind::Conflict,
            Error::Race { .. }
            | Error::Io { .. }
            | Error::Git { .. }
            | Error::GitCommand { .. }
            | Error::Corrupt { .. }
            | Error::Source(_)
            | Error::Other(_) => ErrorKind::Internal,
            Error::Needs { kind, .. } => *kind,
        }
    }

    /// The error `source` with what we were doing when it happened (`reading commit 1234abc`): the message
    /// is `context`, and `source` stays the cause (see [`Error::Source`]).
    pub fn wrap(
        context: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        Error::Source(Sourced {
            context: context.into(),
            source: source.into(),
        })
    }

    /// A refusal of kind `kind` that `remedy` fixes (see [`Error::Needs`]).
    pub fn needs(kind: ErrorKind, message: impl Into<String>, remedy: Remedy) -> Self {
        Error::Needs {
            kind,
            message: message.into(),
            remedy,
        }
    }

    /// What would fix it, when the library knows.
    pub fn remedy(&self) -> Option<&Remedy> {
        match self {
            Error::Needs { remedy, .. } => Some(remedy),
            _ => None,
        }
    }

    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub fn not_found(what: Thing, name: impl Into<String>) -> Self {
        Error::NotFound {
            what,
            name: name.into(),
        }
    }

    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

impl From<gix::Error> for Error {
    fn from(source: gix::Error) -> Self {
        Error::Git {
            context: format!("{source:#}"),
            source: Box::new(source),
        }
    }
}

/// Attach a context line to gix and io results, in the manner of `anyhow::Context`.
pub trait ResultExt<T> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T>;
}

impl<T> ResultExt<T> for std::result::Result<T, gix::Error> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::Git {
            context: format!("{}: {source:#}", context()),
            source: Box::new(source),
        })
    }
}

impl<T> ResultExt<T> for std::result::Result<T, std::io::Error> {
    fn context(self, context: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| Error::io(context(), source))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Whether an `E` is among the causes of `e` (its `source()` chain), for tests that a site keeps its source.
#[cfg(test)]
pub(crate) fn caused_by<E: std::error::Error + 'static>(e: &Error) -> bool {
    let mut at = std::error::Error::source(e);
    while let Some(c) = at {
        if c.is::<E>() {
            return true;
        }
        at = c.source();
    }
    false
}
