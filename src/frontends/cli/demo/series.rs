//! The demo's second act: a staging series verified, rerolled, verified again and finalized.

use anyhow::ensure;

use super::{commit_file, step, Demo};
use crate::frontends::context::Context;

/// The staging series: verify finds the broken patch, reroll fixes it, verify passes, finalize merges.
pub(super) fn series(ctx: &Context, demo: &Demo) -> anyhow::Result<()> {
    let project = demo.root.join("project");
    step(ctx, 7, "a 3-patch staging series; patch 2 breaks the check");
    demo.git(&project, &["checkout", "-q", "main"])?;
    let check = project.join("check.sh");
    std::fs::write(&check, "#!/bin/sh\n! grep -rq BROKEN src\n")?;
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&check, std::fs::Permissions::from_mode(0o755))?;
    }
    commit_file(
        demo,
        &project,
        "patcher",
        "check.sh",
        "#!/bin/sh\n! grep -rq BROKEN src\n",
        "add the check",
    )?;
    demo.jules(&project, "patcher", &["series", "start", "feature"])?;
    let patches = [
        (
            "src/feature.txt",
            "feature = on\n",
            "Add the feature flag",
            "The feature needs a switch.",
        ),
        (
            "src/helper.txt",
            "helper = BROKEN\n",
            "Add the helper",
            "The feature calls a helper.",
        ),
        (
            "docs/feature.md",
            "# Feature\n",
            "Document the feature",
            "Users need to know.",
        ),
    ];
    for (path, content, summary, rationale) in patches {
        let full = project.join(path);
        std::fs::create_dir_all(full.parent().expect("parent"))?;
        std::fs::write(full, content)?;
        demo.jules(
            &project,
            "patcher",
            &[
                "series",
                "commit",
                "--summary",
                summary,
                "--rationale",
                rationale,
            ],
        )?;
    }
    let (code, out, _) = demo.jules_status(
        &project,
        "patcher",
        &["verify", "--cmd", "./check.sh", "--json"],
    )?;
    ensure!(code == 1, "verify should fail on patch 2");
    let report: serde_json::Value = serde_json::from_str(&out)?;
    demo.line(format!("verify: {}", first_failure(&report)));

    step(
        ctx,
        8,
        "fix the working tree, reroll it into patch 2, verify again, finalize",
    );
    std::fs::write(project.join("src/helper.txt"), "helper = fixed\n")?;
    demo.jules(&project, "patcher", &["series", "reroll", "2"])?;
    let report = demo.json(&project, "patcher", &["verify", "--cmd", "./check.sh"])?;
    demo.line(format!(
        "verify after the reroll: {}",
        first_failure(&report)
    ));
    demo.jules(
        &project,
        "patcher",
        &["series", "finalize", "--cmd", "./check.sh"],
    )?;
    let log = demo.git(&project, &["log", "--format=%s", "-3", "main"])?;
    demo.line(format!(
        "main now ends with: {}",
        log.lines().collect::<Vec<_>>().join(" | ")
    ));
    Ok(())
}

fn first_failure(report: &serde_json::Value) -> String {
    let commits = report["commits"].as_array().cloned().unwrap_or_default();
    match commits.iter().find(|c| c["result"] == "fail") {
        Some(c) => format!(
            "patch {} ({}) fails",
            c["index"],
            c["summary"].as_str().unwrap_or("")
        ),
        None => format!("all {} patches pass", commits.len()),
    }
}
