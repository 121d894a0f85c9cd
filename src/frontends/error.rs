//! The CLI's error model, in the manner of jj's `command_error.rs`: every failure becomes one
//! [`CliError`] — a kind, a message, the causes and a list of hints — in one place ([`CliError::from`]),
//! and the kind alone decides the exit code (the table in `docs/cli.md`).
//!
//! Commands return `anyhow::Result<i32>`; they raise either the library's typed [`git_jules::Error`] or, for
//! a problem only the CLI sees, a [`Fail`] built with [`usage`] and friends (`.hint(...)` adds a hint).
//! Hints for library errors are attached here, not at each call site.

use std::fmt;

use git_jules::{Error, ErrorKind, Remedy, Thing};

/// What went wrong, from the user's point of view; decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A check ran and failed (exit 1).
    CheckFailed,
    /// Bad input: a flag combination, a name, an id that does not exist or is ambiguous (exit 2).
    Usage,
    /// A conflict stopped the operation; nothing was changed (exit 3).
    Conflict,
    /// git, the disk or the repository failed, or a bug: not the user's input (exit 4).
    Internal,
    /// stdout was closed by its reader (`| head`): the command ends quietly (exit 0).
    BrokenPipe,
}

pub const EXIT_OK: i32 = 0;
pub const EXIT_CHECK_FAILED: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_CONFLICT: i32 = 3;
pub const EXIT_INTERNAL: i32 = 4;
/// Ctrl-C or a termination signal: commands return it as their code (see `interrupt`).
pub const EXIT_INTERRUPTED: i32 = 130;

impl Kind {
    pub fn exit_code(self) -> i32 {
        match self {
            Kind::CheckFailed => EXIT_CHECK_FAILED,
            Kind::Usage => EXIT_USAGE,
            Kind::Conflict => EXIT_CONFLICT,
            Kind::Internal => EXIT_INTERNAL,
            Kind::BrokenPipe => EXIT_OK,
        }
    }

    /// The name in the JSON error object.
    pub fn name(self) -> &'static str {
        match self {
            Kind::CheckFailed => "check-failed",
            Kind::Usage => "usage",
            Kind::Conflict => "conflict",
            Kind::Internal => "internal",
            Kind::BrokenPipe => "broken-pipe",
        }
    }
}

/// An error raised by the CLI itself (not the library): a kind, a message and hints.
#[derive(Debug)]
pub struct Fail {
    pub kind: Kind,
    pub message: String,
    pub hints: Vec<String>,
}

impl Fail {
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fail {}

/// Bad input the CLI noticed (exit 2).
pub fn usage(message: impl Into<String>) -> Fail {
    Fail {
        kind: Kind::Usage,
        message: message.into(),
        hints: Vec::new(),
    }
}

/// Every failure, ready to print.
#[derive(Debug, serde::Serialize)]
pub struct CliError {
    #[serde(serialize_with = "kind_name")]
    pub kind: Kind,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<String>,
    pub hints: Vec<String>,
}

fn kind_name<S: serde::Serializer>(k: &Kind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.name())
}

impl CliError {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        CliError {
            kind,
            message: message.into(),
            causes: Vec::new(),
            hints: Vec::new(),
        }
    }

    pub fn exit_code(&self) -> i32 {
        self.kind.exit_code()
    }

    /// The one place where a failure gets its kind and its hints, in the CLI's words (flags, commands).
    pub fn from(e: &anyhow::Error) -> Self {
        Self::with_hints(e, library_hints)
    }

    /// A failure with its kind and causes, and the hints `hints_of` gives for a library error: the CLI's
    /// ([`CliError::from`]) or another frontend's (the MCP server names its tools' fields, not flags).
    pub fn with_hints(e: &anyhow::Error, hints_of: fn(&Error) -> Vec<String>) -> Self {
        // The outermost message; the causes below it unless they repeat what is already said.
        let message = e.to_string();
        let mut causes: Vec<String> = Vec::new();
        let mut said = message.clone();
        for c in e.chain().skip(1) {
            let text = c.to_string();
            if said.contains(&text) {
                continue;
            }
            said.push('\n');
            said.push_str(&text);
            causes.push(text);
        }
        let mut hints = Vec::new();
        let kind = if let Some(f) = e.chain().find_map(|c| c.downcast_ref::<Fail>()) {
            hints.extend(f.hints.iter().cloned());
            f.kind
        } else if let Some(lib) = e.chain().find_map(|c| c.downcast_ref::<Error>()) {
            hints.extend(hints_of(lib));
            match lib.kind() {
                ErrorKind::Usage | ErrorKind::NotFound => Kind::Usage,
                ErrorKind::CheckFailed => Kind::CheckFailed,
                ErrorKind::Conflict => Kind::Conflict,
                ErrorKind::Internal => Kind::Internal,
            }
        } else if let Some(io) = e.chain().find_map(|c| c.downcast_ref::<std::io::Error>()) {
            use std::io::ErrorKind as Io;
            match io.kind() {
                Io::BrokenPipe => Kind::BrokenPipe,
                // A path the user named that is not there or not a file: bad input.
                Io::NotFound | Io::IsADirectory | Io::NotADirectory | Io::InvalidData => {
                    Kind::Usage
                }
                _ => Kind::Internal,
            }
        } else if e.chain().any(is_bad_input) {
            Kind::Usage
        } else {
            // Nobody classified it: not the user's fault until shown otherwise (a bug, or a failure
            // below us). Commands raise bad input as library errors or `usage(…)`.
            Kind::Internal
        };
        CliError {
            kind,
            message,
            causes,
            hints,
        }
    }
}

/// Input the user gave that does not parse: JSON, TOML, UTF-8, numbers, times.
fn is_bad_input(e: &(dyn std::error::Error + 'static)) -> bool {
    e.is::<serde_json::Error>()
        || e.is::<toml::de::Error>()
        || e.is::<std::string::FromUtf8Error>()
        || e.is::<std::str::Utf8Error>()
        || e.is::<std::num::ParseIntError>()
        || e.is::<chrono::ParseError>()
}

/// Hints for the library's errors, attached here rather than at each call site.
fn library_hints(e: &Error) -> Vec<String> {
    let hint = |s: &str| vec![s.to_owned()];
    match e {
        Error::Race { .. } => hint("another writer kept the ref busy; run the command again"),
        Error::Ambiguous { .. } => hint("give more hex digits of the id"),
        Error::NotRepository { .. } => {
            hint("run it inside a git repository, or name one with `git jules -C DIR ...`")
        }
        Error::NotFound { what, .. } => match what {
            Thing::Message => hint("list the ids with `git jules mail inbox --persona P`"),
            Thing::Series => hint("list the series with `git jules series list`"),
            Thing::Remote => hint("list the remotes with `git remote -v`"),
            Thing::Task => hint("list the tasks with `git jules task ls`"),
            Thing::BaseBranch => hint("name the base: pass --base BRANCH"),
            Thing::RunOrSession => hint("list the runs with `git jules state show`"),
            _ => Vec::new(),
        },
        Error::Persona { problem, .. } => persona_hints(problem),
        Error::Needs { remedy, .. } => vec![remedy_hint(remedy)],
        Error::GitCommand { .. } | Error::Git { .. } | Error::Io { .. } | Error::Corrupt { .. } => {
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// What fixes a refusal, in the CLI's flags: the one place a library [`Remedy`] becomes a flag (the MCP
/// server words the same remedies as its tools' fields, in `mcp::remedy_hint`).
pub fn remedy_hint(remedy: &Remedy) -> String {
    match remedy {
        Remedy::ForceWithReason => {
            "pass --force --reason TEXT to release it (the holder is mailed)".to_owned()
        }
        Remedy::Reason => "a forced release needs --reason TEXT".to_owned(),
        Remedy::Replace => "pass --force to replace it".to_owned(),
        Remedy::Base => "name the base: pass --base BRANCH".to_owned(),
        Remedy::RebaseOrMerge => "use --rebase or --merge".to_owned(),
        Remedy::Merge => "reroll the series onto the new base, or use --merge".to_owned(),
        Remedy::Drop { patch } => {
            format!("drop it with `git jules series reroll {patch} --drop`")
        }
        Remedy::NoRebase => "compare without --rebase".to_owned(),
        Remedy::Rationale => "say why: --rationale TEXT or -F FILE".to_owned(),
        Remedy::MessageAlone => {
            "--message replaces the whole message; use it without --summary and --rationale"
                .to_owned()
        }
        Remedy::KeepRationale => {
            "keep the trailer in --message, or change only the summary with --summary".to_owned()
        }
        Remedy::Reword { patch } => format!(
            "change files first, or reword patch {patch} with --message, --summary or --rationale"
        ),
        Remedy::OtherPath => "remove it, or give --out another path".to_owned(),
        Remedy::Persona => "pass --persona".to_owned(),
        Remedy::Label => "give its label (its label field or --label)".to_owned(),
        Remedy::Issue => "pass --issue".to_owned(),
        Remedy::SigningKey { persona } => {
            format!("make one: `git jules keys new {persona} --configure`")
        }
        Remedy::CheckWithoutVerify => "--check cannot be combined with --verify".to_owned(),
        Remedy::Into => "pick another --into".to_owned(),
        Remedy::Inputs => "give branches, ranges or patch files, or --branches GLOB".to_owned(),
        Remedy::VerifyCommand => {
            "pass --cmd CMD or set one with `git config jules.verify.cmd CMD`".to_owned()
        }
    }
}

/// What to do about a name that is not a persona (also the words of the warning when it is not an error).
pub fn persona_hints(problem: &git_jules::NameProblem) -> Vec<String> {
    match problem {
        git_jules::NameProblem::Group { members } => {
            vec![format!("name one of its members: {}", members.join(", "))]
        }
        git_jules::NameProblem::Unknown { suggestion, strict } => {
            let mut hints = vec![match suggestion {
                Some(s) => format!("did you mean {s}?"),
                None => "the personas are listed in .jules/schedules.toml".to_owned(),
            }];
            if *strict {
                hints.push(
                    "--strict (or jules.strictPersonas) makes unknown personas errors".to_owned(),
                );
            }
            hints
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_distinct_exit_codes() {
        let usage = CliError::from(&anyhow::Error::new(Error::usage("bad")));
        assert_eq!(usage.exit_code(), 2);
        let internal = CliError::from(&anyhow::Error::new(Error::io(
            "writing x",
            std::io::Error::other("disk full"),
        )));
        assert_eq!(internal.exit_code(), 4);
        let pipe = CliError::from(&anyhow::Error::new(std::io::Error::from(
            std::io::ErrorKind::BrokenPipe,
        )));
        assert_eq!(pipe.kind, Kind::BrokenPipe);
        assert_eq!(pipe.exit_code(), 0);
        let fail = CliError::from(&anyhow::Error::new(super::usage("no").hint("try this")));
        assert_eq!(fail.hints, vec!["try this".to_owned()]);
        // Nobody classified it: internal, never "bad input".
        let plain = CliError::from(&anyhow::anyhow!("something odd"));
        assert_eq!(plain.exit_code(), 4);
        // Input that does not parse is bad input, whatever wraps it.
        let json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let bad = CliError::from(&anyhow::Error::new(json).context("--data is not valid JSON"));
        assert_eq!(bad.exit_code(), 2);
    }

    /// A remedy becomes the CLI's flags here, with the kind (and exit code) the library gave; a wrapped
    /// error's source becomes a cause under the context, not part of the message.
    #[test]
    fn remedies_become_flag_hints_and_sources_become_causes() {
        let needs = CliError::from(&anyhow::Error::new(Error::needs(
            ErrorKind::Conflict,
            "lease 1234 on src/ is held by alice",
            Remedy::ForceWithReason,
        )));
        assert_eq!(needs.exit_code(), 3);
        assert_eq!(needs.message, "lease 1234 on src/ is held by alice");
        assert!(
            needs.hints[0].contains("--force --reason TEXT"),
            "{:?}",
            needs.hints
        );
        let json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let wrapped = CliError::from(&anyhow::Error::new(Error::wrap("reading x", json)));
        assert_eq!(wrapped.exit_code(), 4);
        assert_eq!(wrapped.message, "reading x");
        assert_eq!(wrapped.causes.len(), 1, "{:?}", wrapped.causes);
        let missing = CliError::from(&anyhow::Error::new(Error::not_found(Thing::Task, "ab12")));
        assert_eq!(missing.hints, ["list the tasks with `git jules task ls`"]);
    }

    #[test]
    fn causes_that_repeat_the_message_are_dropped() {
        let e = anyhow::Error::new(std::io::Error::other("Could not find it"))
            .context("not found: Could not find it");
        let c = CliError::from(&e);
        assert!(c.causes.is_empty(), "{:?}", c.causes);
    }
}
