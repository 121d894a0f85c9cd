//! A harness's tool-hook JSON (stdin of `PreToolUse` / `BeforeTool`) read down to what the guard needs: the
//! tool, the working directory, and the paths an edit targets.
//!
//! What each harness sends (fixtures in `tests/it/agent_payloads/`, named by harness version):
//! - Claude Code: `Edit`, `Write`, `MultiEdit` carry `tool_input.file_path`; `NotebookEdit`
//!   `tool_input.notebook_path`.
//! - Codex CLI: `apply_patch` carries the whole patch in `tool_input.command`; its paths are on the
//!   `*** Update File:`, `*** Add File:`, `*** Delete File:` and `*** Move to:` lines. Its shell tool
//!   (`Bash`) carries a command line, which is not an edit the guard can see, unless it is an `apply_patch`
//!   heredoc, whose patch is read the same way.
//! - Gemini CLI: `write_file` and `replace` carry `tool_input.file_path`.
//!
//! Any other tool is [`Target::Unknown`]: the guard allows it (and the CLI says so on stderr).

use std::path::PathBuf;

use serde::Deserialize;

use super::Harness;
use crate::kit::error::{Error, Result};

/// What a hook payload names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payload {
    pub tool: String,
    /// The harness's working directory (`cwd`), against which relative paths are read.
    pub cwd: Option<PathBuf>,
    pub target: Target,
}

/// What a tool call would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An edit of these paths (as the model wrote them: absolute, or relative to `cwd`).
    Paths(Vec<String>),
    /// A shell command: no path the guard can know (the pre-commit hook is the backstop).
    Shell,
    /// A tool the guard does not know.
    Unknown,
}

#[derive(Deserialize)]
struct Raw {
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    tool_input: Option<serde_json::Value>,
}

fn malformed(why: impl std::fmt::Display) -> Error {
    Error::usage(format!("cannot read the hook's input: {why}"))
}

/// Read a tool hook's payload as `harness` sends it. A payload that is not JSON, names no tool, or names an
/// edit tool without its path is malformed (the guard then cannot decide).
pub fn parse(harness: Harness, bytes: &[u8]) -> Result<Payload> {
    let raw: Raw = serde_json::from_slice(bytes).map_err(malformed)?;
    let tool = raw.tool_name.ok_or_else(|| malformed("no tool_name"))?;
    let input = raw.tool_input.unwrap_or(serde_json::Value::Null);
    let field = |name: &str| -> Result<Vec<String>> {
        match input.get(name).and_then(|v| v.as_str()) {
            Some(p) if !p.is_empty() => Ok(vec![p.to_owned()]),
            _ => Err(malformed(format!("{tool} without tool_input.{name}"))),
        }
    };
    let command = || input.get("command").map(command_text).unwrap_or_default();
    let target = match (harness, tool.as_str()) {
        (Harness::Claude, "Edit" | "Write" | "MultiEdit") => Target::Paths(field("file_path")?),
        (Harness::Claude, "NotebookEdit") => Target::Paths(field("notebook_path")?),
        (Harness::Claude, "Bash") => Target::Shell,
        (Harness::Codex, "apply_patch") => {
            let paths = patch_paths(&command());
            if paths.is_empty() {
                return Err(malformed("apply_patch names no file"));
            }
            Target::Paths(paths)
        }
        (Harness::Codex, "Bash" | "shell" | "exec_command" | "local_shell") => {
            let paths = patch_paths(&command());
            if paths.is_empty() {
                Target::Shell
            } else {
                Target::Paths(paths)
            }
        }
        // Codex also sends Claude Code's names to hooks written for them.
        (Harness::Codex, "Edit" | "Write") => Target::Paths(field("file_path")?),
        (Harness::Gemini, "write_file" | "replace") => Target::Paths(field("file_path")?),
        (Harness::Gemini, "run_shell_command") => Target::Shell,
        _ => Target::Unknown,
    };
    Ok(Payload {
        tool,
        cwd: raw.cwd.filter(|c| !c.is_empty()).map(PathBuf::from),
        target,
    })
}

/// A command as text: a string, or an argv array joined with spaces (Codex's shell tool sends either).
fn command_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The paths of a Codex patch (`*** Begin Patch` … `*** End Patch`), in order, each once: what each
/// `*** Update File:`, `*** Add File:`, `*** Delete File:` and `*** Move to:` line names.
pub fn patch_paths(patch: &str) -> Vec<String> {
    const HEADS: [&str; 4] = [
        "*** Update File:",
        "*** Add File:",
        "*** Delete File:",
        "*** Move to:",
    ];
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_start();
        for head in HEADS {
            if let Some(rest) = line.strip_prefix(head) {
                let p = rest.trim();
                if !p.is_empty() && !out.iter().any(|o| o == p) {
                    out.push(p.to_owned());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a moved file's destination (`*** Move to:`) or a deleted one left unchecked, and a path
    /// counted twice.
    #[test]
    fn patch_paths_reads_every_file_line() {
        let p = "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** Move to: b/c.rs\n\
                 *** Add File: new.txt\n+hi\n*** Delete File: old.txt\n*** Update File: a.rs\n*** End Patch\n";
        assert_eq!(patch_paths(p), ["a.rs", "b/c.rs", "new.txt", "old.txt"]);
        // A `+` line that looks like a header is content, not a file.
        assert_eq!(patch_paths("*** Add File: x\n+*** Update File: y\n"), ["x"]);
    }

    #[test]
    fn unknown_tools_and_shells_are_no_paths_and_missing_paths_are_malformed() {
        let p = parse(Harness::Claude, br#"{"tool_name":"Read","tool_input":{}}"#).unwrap();
        assert_eq!(p.target, Target::Unknown);
        let p = parse(
            Harness::Codex,
            br#"{"tool_name":"Bash","tool_input":{"command":"ls"}}"#,
        )
        .unwrap();
        assert_eq!(p.target, Target::Shell);
        assert!(parse(Harness::Claude, br#"{"tool_name":"Edit","tool_input":{}}"#).is_err());
        assert!(parse(Harness::Gemini, b"not json").is_err());
        let p = parse(
            Harness::Codex,
            br#"{"tool_name":"exec_command","tool_input":{"command":["apply_patch","*** Begin Patch\n*** Add File: z\n+1\n*** End Patch"]}}"#,
        )
        .unwrap();
        assert_eq!(p.target, Target::Paths(vec!["z".into()]));
    }
}
