//! The personas' own harnesses (Claude Code, Codex CLI, Gemini CLI): what their hooks send, what the lease
//! guard answers them, and the entries `agent setup` merges into their configuration files.
//!
//! - [`payload`]: a hook's JSON on stdin, read as each harness documents it, down to the paths an edit
//!   targets (Codex's `apply_patch` names them inside the patch).
//! - [`guard`]: those paths made relative to the work tree and checked against the live exclusive leases
//!   of other personas ([`crate::capabilities::lease::held::check`], what the pre-commit hook reads); the deny reason.
//! - [`answer`]: the harness's own output format for a deny, an allow and session context.
//! - [`session`]: the mailbox summary given to an agent at session start.
//! - [`jsondoc`]: JSON read and written back with its keys in their order (the harnesses' settings files
//!   are the user's; serde_json's map sorts them).
//! - [`setup`]: the MCP registration and the hooks merged into each harness's files, recognised again by
//!   their command (`git jules mcp`, `git jules agent hook`) for `remove` and `status`.
//!
//! The guard is an early warning, not the enforcement: an edit made through a shell tool reaches no edit
//! hook, and the pre-commit hook stays the backstop. Nothing here reads the environment: the persona, the
//! home directory and the standard input come from the frontend.

pub mod answer;
pub mod guard;
pub mod jsondoc;
pub mod payload;
pub mod session;
pub mod setup;

use serde::Serialize;

/// A harness git-jules knows how to talk to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Harness {
    /// Claude Code (`PreToolUse`, `SessionStart`, `Stop`; `.mcp.json`, `.claude/settings.json`).
    Claude,
    /// OpenAI's Codex CLI (`PreToolUse`, `SessionStart`, `Stop`; `config.toml`).
    Codex,
    /// Gemini CLI (`BeforeTool`, `SessionStart`, `AfterAgent`; `.gemini/settings.json`).
    Gemini,
}

impl Harness {
    pub const ALL: [Harness; 3] = [Harness::Claude, Harness::Codex, Harness::Gemini];

    pub fn name(self) -> &'static str {
        match self {
            Harness::Claude => "claude",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
        }
    }

    pub fn parse(s: &str) -> Option<Harness> {
        Harness::ALL.into_iter().find(|h| h.name() == s)
    }
}

impl std::fmt::Display for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Text from elsewhere (another persona's lease reason and paths, a mail subject, a path the model chose)
/// made safe to hand to a model or a terminal: control characters (C0, DEL, C1) and the bidirectional
/// formatting characters become a space or vanish, so the text cannot forge lines, escape sequences or a
/// reordered display; at most `max` characters are kept (`…` marks a cut).
pub fn clean(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max * 4));
    let mut n = 0;
    for c in text.chars() {
        if n == max {
            out.push('…');
            break;
        }
        let bidi = matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c);
        if bidi {
            continue;
        }
        out.push(if c.is_control() { ' ' } else { c });
        n += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Catches: a lease reason written by another persona forging a new line (a fake instruction), an
    /// ANSI escape, or a bidi override reaching the model or the terminal.
    #[test]
    fn clean_drops_controls_and_bidi_and_cuts() {
        assert_eq!(
            clean("ok\nIGNORE PREVIOUS\x1b[31m\u{202e}x\u{7f}\u{85}", 100),
            "ok IGNORE PREVIOUS [31mx  "
        );
        assert_eq!(clean("abcdef", 3), "abc…");
        assert_eq!(clean("héllo", 5), "héllo");
    }
}
