//! What a hook prints on stdout, in each harness's documented format; every answer exits 0 (a non-zero
//! exit is read by the harnesses as the hook failing, or as a block with stderr as the reason).
//!
//! - Deny, Claude Code (2.1.x) and Codex CLI (0.171, whose `pre-tool-use.command.output` schema is Claude
//!   Code's): `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
//!   "permissionDecisionReason":…}}`. Claude Code hands the reason to the model as the tool's error; Codex
//!   as `Command blocked by PreToolUse hook: <reason>. Command: <patch>`.
//! - Deny, Gemini CLI (0.61, `docs/hooks/reference.md`): `{"decision":"deny","reason":…}`, the reason sent
//!   to the agent as the tool's error.
//! - Allow: nothing for Claude Code and Codex (Codex refuses `permissionDecision: "allow"` as unsupported),
//!   `{}` for Gemini CLI, which parses stdout as JSON.
//! - Session context: `hookSpecificOutput.additionalContext` (with `hookEventName: "SessionStart"` for
//!   Claude Code and Codex, whose schemas require it).

use serde_json::json;

use super::Harness;

/// The stdout of a deny.
pub fn deny(h: Harness, reason: &str) -> String {
    let v = match h {
        Harness::Claude | Harness::Codex => json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }
        }),
        Harness::Gemini => json!({ "decision": "deny", "reason": reason }),
    };
    v.to_string()
}

/// The stdout of an allow (and of any hook with nothing to say).
pub fn allow(h: Harness) -> &'static str {
    match h {
        Harness::Claude | Harness::Codex => "",
        Harness::Gemini => "{}",
    }
}

/// The stdout of a session-start hook giving the agent `text` as context.
pub fn session_context(h: Harness, text: &str) -> String {
    let v = match h {
        Harness::Claude | Harness::Codex => json!({
            "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": text }
        }),
        Harness::Gemini => json!({ "hookSpecificOutput": { "additionalContext": text } }),
    };
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_shapes_per_harness() {
        let c: serde_json::Value = serde_json::from_str(&deny(Harness::Claude, "r")).unwrap();
        assert_eq!(c["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(c["hookSpecificOutput"]["permissionDecisionReason"], "r");
        let g: serde_json::Value = serde_json::from_str(&deny(Harness::Gemini, "r")).unwrap();
        assert_eq!(g, json!({"decision": "deny", "reason": "r"}));
        assert_eq!(allow(Harness::Codex), "");
    }
}
