//! Issue 23: a name-like argument that git would refuse is bad input (exit 2 with the rule it broke), never
//! an internal error (exit 4) and never a crash, whatever command it is given to.

use crate::harness::{stderr, Repo};

/// Names that break one of `git check-ref-format`'s rules, or ours, each once.
const HOSTILE: &[&str] = &[
    "a.",
    "a..b",
    ".a",
    "a.lock",
    "a/b",
    "a//b",
    "/a",
    "a/",
    "@",
    "@{u}",
    "a@{1}",
    "a b",
    "a~1",
    "a^",
    "a:b",
    "a?",
    "a*",
    "a[",
    "a\\b",
    "",
    "-x",
    "\u{7f}",
    "é",
    "HEAD",
    "refs/heads/x",
    "x\ny",
    "\u{202e}abc",
];

/// Commands with one name-like argument, `{}` where the name goes.
const COMMANDS: &[&[&str]] = &[
    &["series", "start", "{}"],
    &["series", "start", "ok-name", "--base", "{}"],
    &["series", "status", "--base", "{}"],
    &["series", "format", "--base", "{}"],
    &["series", "reroll", "1", "--base", "{}"],
    &["verify", "--base", "{}"],
    &[
        "mail",
        "send",
        "--from",
        "{}",
        "--to",
        "b",
        "--subject",
        "s",
        "--body",
        "b",
    ],
    &[
        "mail",
        "send",
        "--from",
        "a",
        "--to",
        "{}",
        "--subject",
        "s",
        "--body",
        "b",
    ],
    &[
        "mail",
        "send",
        "--from",
        "a",
        "--to",
        "b",
        "--subject",
        "s",
        "--body",
        "b",
        "--tag",
        "{}",
    ],
    &[
        "mail",
        "send",
        "--from",
        "a",
        "--to",
        "b",
        "--subject",
        "s",
        "--body",
        "b",
        "--thread",
        "{}",
    ],
    &["mail", "inbox", "--persona", "{}"],
    &["mail", "read", "1", "--persona", "{}"],
    &["mail", "claim", "ffff", "--persona", "{}"],
    &["log", "show", "{}"],
    &["log", "append", "{}", "--kind", "k", "--actor", "a"],
    &["log", "append", "mail", "--kind", "k", "--actor", "{}"],
    &["log", "fsck", "{}"],
    &["log", "checkpoint", "{}"],
    &["task", "add", "t", "--persona", "{}"],
    &["state", "record", "--persona", "{}"],
    &["weave", "--check", "--into", "{}"],
    &["weave", "--check", "{}"],
    &["sync", "{}"],
    &["prompt", "{}"],
    &["log", "get", "mail", "{}"],
    &["task", "done", "{}"],
    &["state", "done", "--session", "{}"],
    &["mail", "read", "{}", "--persona", "a"],
    &["mail", "thread", "{}", "--persona", "a"],
    &["mail", "inbox", "--persona", "a", "--from", "{}"],
    &["mail", "inbox", "--persona", "a", "--tag", "{}"],
    &["exchange", "list", "--workstream", "{}"],
    &["series", "undo", "{}"],
    &["series", "review", "{}", "--print"],
    &["weave", "--check", "--branches", "{}"],
    &["init", "{}"],
    &["mcp", "--persona", "{}"],
];

#[test]
fn name_like_arguments_that_git_refuses_exit_2_never_4() {
    let r = Repo::new();
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "a",
        "--to",
        "b",
        "--subject",
        "s",
        "--body",
        "b",
    ]);
    let mut internal = Vec::new();
    for cmd in COMMANDS {
        for name in HOSTILE {
            let args: Vec<&str> = cmd
                .iter()
                .map(|a| if *a == "{}" { *name } else { a })
                .collect();
            let out = r.jules(&args);
            match out.status.code() {
                Some(0..=3) => {}
                code => internal.push(format!("{args:?} exited {code:?}: {}", stderr(&out).trim())),
            }
        }
    }
    assert!(
        internal.is_empty(),
        "{} failures:\n{}",
        internal.len(),
        internal.join("\n")
    );
}

#[test]
fn a_series_name_ending_with_a_dot_is_refused_with_the_rule() {
    let r = Repo::new();
    let out = r.jules(["series", "start", "a."]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("may not end with '.'"),
        "{}",
        stderr(&out)
    );
}
