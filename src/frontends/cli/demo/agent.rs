//! The demo's last step: a persona's coding agent (Claude Code here) tries to edit a file another persona
//! leased, and the pre-edit hook `agent setup` installs denies it, with the reason the model reads.

use std::io::Write as _;
use std::process::{Command, Stdio};

use anyhow::{ensure, Context as _};

use super::{step, Demo};
use crate::frontends::context::Context;

pub(super) fn guard(ctx: &Context, demo: &Demo) -> anyhow::Result<()> {
    let project = demo.root.join("project");
    step(
        ctx,
        8,
        "an agent's edit of a file another persona leased is denied at the edit, not at the commit",
    );
    demo.jules(
        &project,
        "sage",
        &[
            "lease",
            "acquire",
            "src/config.txt",
            "--ttl",
            "1h",
            "--reason",
            "tuning the defaults",
        ],
    )?;
    // What Claude Code 2.1.197 sends its PreToolUse hook for an Edit (tests/it/agent_payloads/).
    let target = project.join("src/config.txt");
    let payload = serde_json::json!({
        "session_id": "demo",
        "cwd": project,
        "hook_event_name": "PreToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": target, "old_string": "a", "new_string": "b", "replace_all": false},
        "tool_use_id": "toolu_demo"
    });
    let file = demo.root.join("edit.json");
    std::fs::write(&file, payload.to_string())?;
    let args = ["agent", "hook", "pre-edit", "--harness", "claude"];
    ui_command(demo, "scout", &args, &file);
    let mut child = Command::new(&demo.exe)
        .args(args)
        .current_dir(&project)
        .env("JULES_PERSONA", "scout")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running git jules agent hook pre-edit")?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(payload.to_string().as_bytes())?;
    let out = child.wait_with_output()?;
    ensure!(
        out.status.success(),
        "the hook failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer: serde_json::Value =
        serde_json::from_slice(&out.stdout).context("parsing the hook's answer")?;
    let s = &answer["hookSpecificOutput"];
    ensure!(
        s["permissionDecision"] == "deny",
        "the guard let the edit through: {answer}"
    );
    demo.line(format!(
        "denied by the lease guard; what the model reads: {}",
        s["permissionDecisionReason"].as_str().unwrap_or("")
    ));
    Ok(())
}

/// Print the hook's command as the demo prints every command, with its input file.
fn ui_command(demo: &Demo, persona: &str, args: &[&str], input: &std::path::Path) {
    demo.ui.out(format!(
        "    $ {} < {}",
        super::quoted(persona, args),
        input.display()
    ));
}
