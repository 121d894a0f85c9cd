//! What every tool of `git jules mcp` shares: the session (the workspace and the persona it acts as) and
//! the shape of an answer. Below the tool modules ([`super::tools`], the table, and the rows it takes from
//! [`super::lease_tools`] and [`super::search`]), so none of them imports another to get it.

use serde::Serialize;
use serde_json::Value;

use git_jules::Workspace;

/// What every call of a session shares: the repository with the caller's options, and the persona.
pub struct Session {
    pub ws: Workspace,
    pub persona: String,
}

/// A tool's answer: its document, and whether it is a success (a failed check, a lost claim or a
/// conflicting weave is a tool error that carries its document).
pub type Answer = (bool, Value);

/// A success with the document `--json` prints for `v` (see `ui::versioned_value`).
pub fn ok(v: impl Serialize) -> anyhow::Result<Answer> {
    Ok((true, doc(v)?))
}

/// The document `--json` prints for `v`.
pub fn doc(v: impl Serialize) -> anyhow::Result<Value> {
    Ok(super::super::ui::versioned_value(&v)?)
}
