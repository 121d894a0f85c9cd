//! `series review`: the buffer with `### Patch [n/total] ###` headers, `R:` comments back, notes, mail.

use serde_json::Value;

use crate::harness::{stderr, stdout, Repo};
use crate::series::make_series;

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

fn three(r: &Repo) -> Vec<String> {
    make_series(
        r,
        "feat",
        &[
            ("a.txt", "alpha\n"),
            ("b.txt", "beta\n"),
            ("c.txt", "gamma\n"),
        ],
    )
}

/// Insert `comment` lines after the first line of `buffer` that starts with `after`.
fn insert_after(buffer: &str, after: &str, comment: &str) -> String {
    let mut out = String::new();
    let mut done = false;
    for line in buffer.lines() {
        out.push_str(line);
        out.push('\n');
        if !done && line.starts_with(after) {
            out.push_str(comment);
            done = true;
        }
    }
    assert!(done, "no line starts with {after:?}");
    out
}

fn comments(doc: &Value, patch: usize) -> Vec<String> {
    doc["patches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["index"] == patch)
        .map(|p| {
            p["comments"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["text"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn comments_under_patches_1_and_3_round_trip_through_a_file() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    let ids = three(&r);
    let buffer = r.jules_ok(["series", "review", "--print"]);
    for i in 1..=3 {
        assert!(
            buffer.contains(&format!("### Patch [{i}/3] ###\n")),
            "{buffer}"
        );
    }
    assert!(buffer.contains("> +alpha"), "{buffer}");
    // Comments: two lines under patch 1's header, one multi-line comment under the diff line of patch 3.
    let edited = insert_after(
        &buffer,
        "### Patch [1/3] ###",
        "R: The summary should say why, not what.\n   And mention the tokenizer.\n",
    );
    let edited = insert_after(
        &edited,
        "> +gamma",
        "R: gamma needs a test,\nespecially for empty input.\n\nSecond paragraph of the same comment.\n",
    );
    let file = side.path().join("review.txt");
    std::fs::write(&file, &edited).unwrap();
    let doc = json(&r.jules_ok([
        "--json",
        "series",
        "review",
        "--from-file",
        file.to_str().unwrap(),
    ]));
    assert_eq!(doc["total"], 3);
    assert_eq!(doc["patches"].as_array().unwrap().len(), 2);
    assert_eq!(
        comments(&doc, 1),
        ["The summary should say why, not what.\n   And mention the tokenizer."]
    );
    assert_eq!(
        comments(&doc, 3),
        ["gamma needs a test,\nespecially for empty input.\n\nSecond paragraph of the same comment."]
    );
    let c3 = &doc["patches"][1]["comments"][0];
    assert_eq!(c3["path"], "c.txt");
    assert_eq!(c3["line"], "+gamma");
    assert_eq!(doc["patches"][1]["commit"], ids[2].as_str());
    assert!(doc["mail"].is_null());

    // Stored as notes on the commits, appended on a second review.
    let note = r.git(["notes", "--ref=jules/review", "show", &ids[2]]);
    let line: Value = serde_json::from_str(&note).unwrap();
    assert_eq!(line["patch"], 3);
    assert_eq!(line["comments"][0]["path"], "c.txt");
    assert!(
        r.git_output(["notes", "--ref=jules/review", "show", &ids[1]])
            .status
            .code()
            != Some(0)
    );
    r.jules_ok(["series", "review", "--from-file", file.to_str().unwrap()]);
    let note = r.git(["notes", "--ref=jules/review", "show", &ids[2]]);
    assert_eq!(note.lines().count(), 2, "appended, not replaced: {note}");
}

#[test]
fn the_editor_is_chosen_like_git_and_sees_the_buffer() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    three(&r);
    // A scripted editor: it adds comments under patches 1 and 3 with awk, as a person would.
    let script = side.path().join("editor.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\n\
         awk '{print} /^### Patch \\[1\\/3\\] ###/{print \"R: first line\"; print \"  second line\"} \
         /^### Patch \\[3\\/3\\] ###/{print \"R: on three\"}' \"$1\" > \"$1.new\" && mv \"$1.new\" \"$1\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = r
        .jules_cmd(["--json", "series", "review"])
        .env("GIT_EDITOR", &script)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = json(&stdout(&out));
    assert_eq!(comments(&doc, 1), ["first line\n  second line"]);
    assert_eq!(comments(&doc, 3), ["on three"]);
    // The buffer stays in the git dir, as COMMIT_EDITMSG does.
    let kept = std::fs::read_to_string(r.path().join(".git/JULES_REVIEW_EDITMSG")).unwrap();
    assert!(kept.contains("R: on three"));

    // core.editor is used when GIT_EDITOR is not set; an editor that fails stores nothing.
    r.git(["config", "core.editor", "false"]);
    let out = r.jules(["series", "review"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("problem with the editor"),
        "{}",
        stderr(&out)
    );
    // `:` means "do not edit": the untouched buffer has no comment.
    let out = r
        .jules_cmd(["series", "review", "2"])
        .env("GIT_EDITOR", ":")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("no R: comments"), "{}", stderr(&out));
}

#[test]
fn malformed_buffers_are_usage_errors() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    three(&r);
    let bad = |text: &str, args: &[&str], needle: &str| {
        let file = side.path().join("bad.txt");
        std::fs::write(&file, text).unwrap();
        let mut all = vec!["series", "review"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--from-file", file.to_str().unwrap()]);
        let out = r.jules(&all);
        assert_eq!(out.status.code(), Some(2), "{text:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{text:?}: {}", stderr(&out));
    };
    bad(
        "R: before any header\n### Patch [1/3] ###\n",
        &[],
        "outside any patch",
    );
    bad(
        "### Patch [1/4] ###\nR: x\n",
        &[],
        "has 4 patches, but it has 3",
    );
    bad(
        "### Patch [2/3] ###\nR: x\n",
        &["1"],
        "not part of this review",
    );
    bad(
        "### Patch [1/3] ###\nfree text\n",
        &[],
        "outside an R: comment",
    );
    bad("### Patch [1 of 3] ###\nR: x\n", &[], "malformed");
    assert!(r.rev("refs/notes/jules/review").is_none(), "nothing stored");
}

#[test]
fn mail_to_sends_the_comments_as_a_task() {
    let r = Repo::new();
    let side = tempfile::tempdir().unwrap();
    three(&r);
    let buffer = r.jules_ok(["series", "review", "2", "--print"]);
    assert!(buffer.contains("### Patch [2/3] ###") && !buffer.contains("[1/3]"));
    let file = side.path().join("r.txt");
    std::fs::write(
        &file,
        insert_after(
            &buffer,
            "### Patch [2/3] ###",
            "R: beta is fine\n   but rename it\n",
        ),
    )
    .unwrap();
    // Without a sender, nothing happens at all.
    let out = r.jules([
        "series",
        "review",
        "2",
        "--from-file",
        file.to_str().unwrap(),
        "--mail-to",
        "bob",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(r.rev("refs/notes/jules/review").is_none());
    let doc = json(&r.jules_ok([
        "--json",
        "series",
        "review",
        "2",
        "--from-file",
        file.to_str().unwrap(),
        "--mail-to",
        "bob",
        "--from",
        "alice",
    ]));
    let id = doc["mail"].as_str().unwrap().to_owned();
    let msg = json(&r.jules_ok(["--json", "mail", "show", &id, "--persona", "bob"]));
    let m = &msg["message"];
    assert_eq!(m["from"], "alice");
    assert_eq!(m["type"], "task");
    assert!(m["subject"]
        .as_str()
        .unwrap()
        .contains("Review of series feat"));
    let body = m["body"].as_str().unwrap();
    assert!(body.contains("### Patch [2/3] ###"), "{body}");
    assert!(
        body.contains("R: beta is fine\n      but rename it"),
        "{body}"
    );
}
