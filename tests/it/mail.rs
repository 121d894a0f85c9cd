//! `git jules mail`: every command through the real binary, two clones exchanging mail through a bare
//! remote, concurrent claims, the seed imports and the maildir export.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};

use serde::Deserialize;

use crate::harness::{stderr, stdout, with_stdin, Repo};

// ------------------------------------------------------------------------------------------------------
// The JSON contract: unknown fields are an error, so a change of shape fails here.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ListDoc {
    version: u32,
    persona: Option<String>,
    messages: Vec<Msg>,
    /// Unknown names (docs/json.md): the persona's, when it is not declared.
    #[serde(default)]
    #[allow(dead_code)]
    warnings: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct OneDoc {
    version: u32,
    message: Msg,
    #[serde(default)]
    #[allow(dead_code)]
    warnings: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Msg {
    id: String,
    short: String,
    from: String,
    to: Vec<String>,
    groups: BTreeMap<String, Vec<String>>,
    via: Option<String>,
    subject: String,
    #[serde(rename = "type")]
    msg_type: String,
    priority: String,
    time: String,
    tags: Vec<String>,
    needs_response: bool,
    in_reply_to: Option<String>,
    thread: String,
    expires: Option<String>,
    expired: bool,
    urls: Vec<String>,
    files: Vec<FileDoc>,
    claim: Option<ClaimDoc>,
    state: Option<StateDoc>,
    signature: Option<serde_json::Value>,
    #[serde(default)]
    body: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    name: String,
    size: u64,
}

#[derive(Debug, Deserialize, PartialEq, Clone)]
#[serde(deny_unknown_fields)]
struct ClaimDoc {
    persona: String,
    lock: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct StateDoc {
    persona: String,
    unread: bool,
    read_at: Option<String>,
    tags: Vec<String>,
    trashed: bool,
    archived: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ClaimOut {
    version: u32,
    message: String,
    persona: String,
    outcome: String,
    #[serde(default)]
    winner: Option<String>,
    lock: bool,
    wrote: bool,
    remote: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ImportOut {
    version: u32,
    format: String,
    records: usize,
    messages: usize,
    appended: usize,
    duplicates: usize,
    skipped: Vec<String>,
}

// ------------------------------------------------------------------------------------------------------
// Helpers

/// `git-jules ARGS` as `persona` ($JULES_PERSONA).
fn as_(r: &Repo, persona: &str, args: &[&str]) -> Output {
    r.jules_cmd(args)
        .env("JULES_PERSONA", persona)
        .output()
        .unwrap()
}

fn ok(r: &Repo, persona: &str, args: &[&str]) -> String {
    let out = as_(r, persona, args);
    assert!(
        out.status.success(),
        "{args:?} as {persona} exited {:?}\nstdout: {}\nstderr: {}",
        out.status.code(),
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// Send and return the new message's id.
fn send(r: &Repo, from: &str, to: &str, subject: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "mail",
        "send",
        "--to",
        to,
        "--subject",
        subject,
        "--body",
        "body of the message\n",
    ];
    args.extend_from_slice(extra);
    let id = ok(r, from, &args).trim().to_owned();
    assert_eq!(id.len(), 64, "{id}");
    id
}

fn inbox(r: &Repo, persona: &str, extra: &[&str]) -> Vec<Msg> {
    let mut args = vec!["--json", "mail", "inbox", "--persona", persona];
    args.extend_from_slice(extra);
    let doc: ListDoc = serde_json::from_str(&r.jules_ok(&args)).unwrap();
    assert_eq!(doc.version, 1);
    assert_eq!(doc.persona.as_deref(), Some(persona));
    doc.messages
}

fn subjects(msgs: &[Msg]) -> Vec<&str> {
    msgs.iter().map(|m| m.subject.as_str()).collect()
}

fn show(r: &Repo, id: &str, persona: &str) -> Msg {
    let doc: OneDoc =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "show", id, "--persona", persona]))
            .unwrap();
    assert_eq!(doc.version, 1);
    doc.message
}

fn mail_tip(r: &Repo) -> Option<String> {
    r.rev("refs/jules/mail")
}

fn fails_with(r: &Repo, persona: &str, args: &[&str], code: i32, needle: &str) {
    let before = mail_tip(r);
    let out = as_(r, persona, args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: stdout {} stderr {}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stderr(&out).contains(needle),
        "{args:?}: expected {needle:?} in {}",
        stderr(&out)
    );
    assert_eq!(mail_tip(r), before, "{args:?} wrote something");
}

/// A work repository and a second clone, both pushing to a bare remote after `git jules init`.
fn two_clones() -> (Repo, Repo, Repo) {
    let (a, bare, b) = Repo::with_clone();
    a.jules_ok(["init"]);
    b.jules_ok(["init"]);
    (a, b, bare)
}

fn write_file(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every file under `dir`, relative path to bytes.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

// ------------------------------------------------------------------------------------------------------
// One repository

#[test]
fn send_inbox_read_show_and_sent() {
    let r = Repo::new();
    let first = send(
        &r,
        "weaver",
        "curator",
        "first",
        &["--type", "task", "--priority", "low"],
    );
    let urgent = send(
        &r,
        "weaver",
        "curator",
        "Conflict in PR #102",
        &[
            "--priority",
            "urgent",
            "--type",
            "conflict",
            "--tag",
            "pr-102",
            "--needs-response",
            "--attach",
            "https://github.com/o/r/pull/102.patch",
        ],
    );
    let later = send(&r, "scheduler", "curator", "later", &[]);
    send(&r, "weaver", "refactor", "not for curator", &[]);

    // Urgent first, then newest; everything unread.
    let msgs = inbox(&r, "curator", &[]);
    assert_eq!(subjects(&msgs), ["Conflict in PR #102", "later", "first"]);
    assert!(msgs.iter().all(|m| m.state.as_ref().unwrap().unread));
    let m = &msgs[0];
    assert_eq!(
        (m.id.as_str(), m.from.as_str(), m.msg_type.as_str()),
        (urgent.as_str(), "weaver", "conflict")
    );
    assert_eq!(
        (m.priority.as_str(), m.needs_response, m.tags.clone()),
        ("urgent", true, vec!["pr-102".to_string()])
    );
    assert_eq!(m.urls, ["https://github.com/o/r/pull/102.patch"]);
    assert_eq!(m.thread, urgent);
    assert!(m.body.is_none());
    assert!(m.id.starts_with(&m.short) && m.short.len() >= 7);

    // The human listing marks unread mail with `*`, like the seed.
    let text = r.jules_ok(["mail", "inbox", "--persona", "curator"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[0].starts_with("* ")
            && lines[0].contains("urgent")
            && lines[0].contains("Conflict in PR #102")
    );

    // show does not mark; read does, by a unique prefix.
    let shown = show(&r, &urgent[..8], "curator");
    assert_eq!(shown.body.as_deref(), Some("body of the message\n"));
    assert!(shown.state.as_ref().unwrap().unread);
    let text = ok(&r, "curator", &["mail", "read", &urgent[..8]]);
    assert!(
        text.contains("Conflict in PR #102") && text.contains("body of the message"),
        "{text}"
    );
    let msgs = inbox(&r, "curator", &["--unread"]);
    assert_eq!(subjects(&msgs), ["later", "first"]);
    assert_eq!(
        subjects(&inbox(&r, "curator", &["--priority", "low"])),
        ["first"]
    );
    let text = r.jules_ok(["mail", "inbox", "--persona", "curator"]);
    assert!(text.lines().next().unwrap().starts_with("  "), "{text}");
    // Reading again writes nothing.
    let tip = mail_tip(&r);
    ok(&r, "curator", &["mail", "read", &urgent]);
    assert_eq!(mail_tip(&r), tip);

    // Filters.
    assert_eq!(
        subjects(&inbox(&r, "curator", &["--type", "task"])),
        ["first"]
    );
    assert_eq!(
        subjects(&inbox(&r, "curator", &["--tag", "pr-102"])),
        ["Conflict in PR #102"]
    );
    assert_eq!(
        subjects(&inbox(&r, "curator", &["--from", "scheduler"])),
        ["later"]
    );
    assert_eq!(inbox(&r, "curator", &["--limit", "1"]).len(), 1);
    assert_eq!(inbox(&r, "curator", &["--since", "1h"]).len(), 3);
    assert_eq!(inbox(&r, "curator", &["--since", "2099-01-01"]).len(), 0);

    // sent, newest first.
    let doc: ListDoc =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "sent", "--persona", "weaver"]))
            .unwrap();
    assert_eq!(
        subjects(&doc.messages),
        ["not for curator", "Conflict in PR #102", "first"]
    );
    let text = r.jules_ok(["mail", "sent", "--persona", "scheduler"]);
    assert!(
        text.contains(&later[..7]) && text.contains("to curator"),
        "{text}"
    );
    // The oldest sent message is the one `send` answered with.
    assert_eq!(doc.messages.last().unwrap().id, first);
}

#[test]
fn sender_and_persona_come_from_flags_or_the_environment() {
    let r = Repo::new();
    let out = r
        .jules_cmd(["mail", "send", "--to", "x", "--subject", "s", "--body", "b"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no sender"), "{}", stderr(&out));
    let id = r
        .jules_ok([
            "mail",
            "send",
            "--from",
            "weaver",
            "--to",
            "x",
            "--subject",
            "s",
            "--body",
            "b",
        ])
        .trim()
        .to_owned();
    // $JULES_PERSONA picks the mailbox.
    let listed = ok(&r, "x", &["mail", "inbox"]);
    assert!(listed.contains(&id[..7]), "{listed}");
    let out = r.jules(["mail", "inbox"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no persona"), "{}", stderr(&out));
    // The body can come from a file or stdin.
    let f = r.path().join("body.md");
    std::fs::write(&f, "from a file\n").unwrap();
    let id = ok(
        &r,
        "weaver",
        &[
            "mail",
            "send",
            "--to",
            "x",
            "--subject",
            "f",
            "--body-file",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(
        show(&r, id.trim(), "x").body.as_deref(),
        Some("from a file\n")
    );
    let out = with_stdin(
        r.jules_cmd(["mail", "send", "--to", "x", "--subject", "stdin"])
            .env("JULES_PERSONA", "weaver"),
        b"piped body",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        show(&r, stdout(&out).trim(), "x").body.as_deref(),
        Some("piped body")
    );
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let r = Repo::new();
    let id = send(&r, "weaver", "curator", "ok", &[]);
    let s = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "mail",
            "send",
            "--to",
            "curator",
            "--subject",
            "s",
            "--body",
            "b",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |args: Vec<String>, needle: &str| {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_with(&r, "weaver", &a, 2, needle);
    };
    run(
        vec![
            "mail".into(),
            "send".into(),
            "--to".into(),
            "curator".into(),
            "--subject".into(),
            " ".into(),
            "--body".into(),
            "b".into(),
        ],
        "subject is empty",
    );
    run(
        vec![
            "mail".into(),
            "send".into(),
            "--to".into(),
            "cu rator".into(),
            "--subject".into(),
            "s".into(),
            "--body".into(),
            "b".into(),
        ],
        "invalid recipient name",
    );
    run(s(&["--from", "wea/ver"]), "invalid persona name");
    run(s(&["--type", "memo"]), "unknown message type");
    run(s(&["--priority", "high"]), "invalid value");
    run(s(&["--expires", "2001-01-01"]), "not in the future");
    run(s(&["--attach", "no/such/file"]), "attachment no/such/file");
    run(s(&["--reply-to", "0000000"]), "message not found");
    // (Through a file: one argument of 128 KiB is over the kernel's limit.)
    let big = r.path().join("big.txt");
    std::fs::write(&big, "x".repeat(128 * 1024 + 1)).unwrap();
    run(
        vec![
            "mail".into(),
            "send".into(),
            "--to".into(),
            "curator".into(),
            "--subject".into(),
            "s".into(),
            "--body-file".into(),
            big.display().to_string(),
        ],
        "over the limit of 131072",
    );
    let bad = r.path().join("latin1.txt");
    std::fs::write(&bad, b"caf\xe9").unwrap();
    run(
        s(&["--body-file", bad.to_str().unwrap()])
            .into_iter()
            .filter(|a| a != "--body" && a != "b")
            .collect(),
        "not valid UTF-8",
    );
    fails_with(
        &r,
        "curator",
        &["mail", "read", "deadbeef"],
        2,
        "message not found: deadbeef",
    );
    fails_with(
        &r,
        "curator",
        &["mail", "read", "zz"],
        2,
        "is not hexadecimal",
    );
    fails_with(
        &r,
        "cur ator",
        &["mail", "read", &id],
        2,
        "invalid persona name",
    );
    fails_with(
        &r,
        "curator",
        &["mail", "tag", "add", &id, "two words"],
        2,
        "invalid tag name",
    );
    fails_with(
        &r,
        "curator",
        &["mail", "attachment", &id, "nothing.txt"],
        2,
        "attachment not found",
    );

    // An ambiguous prefix: append enough messages in one batch that two ids share four hex digits.
    let mut child = r
        .jules_cmd([
            "log",
            "append",
            "mail",
            "--kind",
            "mail.send",
            "--actor",
            "bulk",
            "--batch",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        for _ in 0..1500 {
            writeln!(
                stdin,
                r#"{{"to":["curator"],"subject":"bulk","body":"","type":"status","priority":"normal"}}"#
            )
            .unwrap();
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut ids: Vec<String> = stdout(&out).lines().map(|l| l[..4].to_owned()).collect();
    ids.sort();
    let dup = ids
        .windows(2)
        .find(|w| w[0] == w[1])
        .expect("a shared 4-digit prefix")
        .to_owned();
    fails_with(
        &r,
        "curator",
        &["mail", "show", &dup[0]],
        2,
        "ambiguous message prefix",
    );
}

#[test]
fn tags_trash_archive_and_unread() {
    let r = Repo::new();
    let a = send(&r, "weaver", "curator", "a", &["--tag", "from-sender"]);
    let b = send(&r, "weaver", "curator", "b", &[]);
    ok(
        &r,
        "curator",
        &["mail", "tag", "add", &a[..7], "needs-action"],
    );
    ok(&r, "curator", &["mail", "tag", "add", &a[..7], "later"]);
    ok(&r, "curator", &["mail", "tag", "rm", &a[..7], "later"]);
    let tags = ok(&r, "curator", &["mail", "tag", "ls", &a[..7]]);
    assert_eq!(tags, "needs-action\nfrom-sender (sender)\n");
    assert_eq!(
        subjects(&inbox(&r, "curator", &["--tag", "needs-action"])),
        ["a"]
    );
    // Tags are per persona: another persona sees only the sender's.
    let other = ok(&r, "refactor", &["mail", "tag", "ls", &a[..7]]);
    assert_eq!(other, "from-sender (sender)\n");

    let out = ok(&r, "curator", &["--json", "mail", "trash", &b]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["action"], "trash");
    assert_eq!(v["changed"], true);
    assert_eq!(subjects(&inbox(&r, "curator", &[])), ["a"]);
    assert_eq!(subjects(&inbox(&r, "curator", &["--trash"])), ["b"]);
    let out = ok(&r, "curator", &["--json", "mail", "trash", &b]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["changed"],
        false
    );
    ok(&r, "curator", &["mail", "untrash", &b]);
    ok(&r, "curator", &["mail", "archive", &a]);
    assert_eq!(subjects(&inbox(&r, "curator", &[])), ["b"]);
    assert_eq!(subjects(&inbox(&r, "curator", &["--archived"])), ["a"]);
    assert_eq!(inbox(&r, "curator", &["--all"]).len(), 2);
    ok(&r, "curator", &["mail", "unarchive", &a]);
    ok(&r, "curator", &["mail", "read", &a]);
    assert_eq!(subjects(&inbox(&r, "curator", &["--unread"])), ["b"]);
    ok(&r, "curator", &["mail", "unread", &a]);
    let m = show(&r, &a, "curator");
    let st = m.state.unwrap();
    assert!(st.unread && !st.archived && !st.trashed);
    assert_eq!(st.tags, ["needs-action"]);
}

#[test]
fn replies_threads_and_named_threads() {
    let r = Repo::new();
    let q = send(
        &r,
        "curator",
        "weaver",
        "Which base?",
        &["--type", "question", "--needs-response", "--to", "refactor"],
    );
    let a1 = ok(&r, "weaver", &["mail", "reply", &q[..8], "--body", "main"])
        .trim()
        .to_owned();
    let a2 = ok(
        &r,
        "refactor",
        &["mail", "reply", &a1[..8], "--all", "--body", "agreed"],
    )
    .trim()
    .to_owned();
    let m1 = show(&r, &a1, "curator");
    assert_eq!(m1.subject, "Re: Which base?");
    assert_eq!(m1.msg_type, "response");
    assert_eq!(m1.to, ["curator"]);
    assert_eq!(m1.in_reply_to.as_deref(), Some(q.as_str()));
    assert_eq!(m1.thread, q);
    let m2 = show(&r, &a2, "curator");
    assert_eq!(m2.subject, "Re: Which base?");
    assert_eq!(m2.to, ["weaver", "curator"]);
    assert_eq!(m2.thread, q);
    // send --reply-to is reply with explicit recipients.
    let a3 = send(&r, "curator", "weaver", "thanks", &["--reply-to", &a2[..8]]);
    let doc: ListDoc =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "thread", &a1[..8]])).unwrap();
    let ids: Vec<&str> = doc.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, [q.as_str(), a1.as_str(), a2.as_str(), a3.as_str()]);
    assert!(doc.messages.iter().all(|m| m.body.is_some()));
    let text = r.jules_ok(["mail", "thread", &q]);
    assert_eq!(text.matches("message ").count(), 4, "{text}");
    // A named thread, and joining a message's thread by its id.
    let n1 = send(&r, "weaver", "curator", "plan", &["--thread", "sprint-5"]);
    let n2 = send(&r, "weaver", "curator", "plan 2", &["--thread", &n1[..8]]);
    let doc: ListDoc =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "thread", &n2])).unwrap();
    assert_eq!(subjects(&doc.messages), ["plan", "plan 2"]);
    assert_eq!(doc.messages[0].thread, "sprint-5");
    // stats: the question was answered.
    let s: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "stats"])).unwrap();
    assert_eq!(s["unanswered"], 0);
}

#[test]
fn groups_broadcast_and_claims_in_one_repository() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[groups]\nworkers = [\"w1\", \"w2\"]\n",
    );
    r.git(["config", "--add", "jules.group.reviewers.member", "rv1"]);
    r.git(["config", "--add", "jules.group.reviewers.member", "w2"]);
    let task = send(
        &r,
        "orchestrator",
        "workers",
        "task for a worker",
        &["--type", "task"],
    );
    let rev = send(&r, "orchestrator", "reviewers", "review this", &[]);
    let all = send(
        &r,
        "nexus",
        "__broadcast",
        "announcement",
        &["--type", "report"],
    );
    let w1 = inbox(&r, "w1", &[]);
    assert_eq!(subjects(&w1), ["announcement", "task for a worker"]);
    assert_eq!(w1[1].via.as_deref(), Some("workers"));
    assert_eq!(w1[1].groups["workers"], ["w1", "w2"]);
    assert_eq!(w1[0].via.as_deref(), Some("__broadcast"));
    assert_eq!(subjects(&inbox(&r, "w2", &[])).len(), 3);
    assert_eq!(
        subjects(&inbox(&r, "rv1", &[])),
        ["announcement", "review this"]
    );
    // Everyone gets a broadcast, except its sender.
    assert_eq!(subjects(&inbox(&r, "somebody-new", &[])), ["announcement"]);
    assert!(inbox(&r, "nexus", &[]).is_empty());

    // Claims: the first wins; the loser is told and exits 3; non-members cannot claim.
    let out = ok(&r, "w1", &["mail", "claim", &task[..8]]);
    assert!(out.starts_with("won: w1"), "{out}");
    let out = as_(&r, "w2", &["--json", "mail", "claim", &task[..8]]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let c: ClaimOut = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (c.outcome.as_str(), c.winner.as_deref(), c.wrote),
        ("lost", Some("w1"), false)
    );
    fails_with(
        &r,
        "rv1",
        &["mail", "claim", &task[..8]],
        2,
        "not a recipient",
    );
    // Claiming again is idempotent.
    let tip = mail_tip(&r);
    ok(&r, "w1", &["mail", "claim", &task]);
    assert_eq!(mail_tip(&r), tip);
    // A message claimed by somebody else leaves the inbox (it stays in --all).
    assert_eq!(
        subjects(&inbox(&r, "w2", &[])),
        ["announcement", "review this"]
    );
    let everything = inbox(&r, "w2", &["--all"]);
    let t = everything.iter().find(|m| m.id == task).unwrap();
    assert_eq!(
        t.claim,
        Some(ClaimDoc {
            persona: "w1".into(),
            lock: false
        })
    );
    assert_eq!(
        inbox(&r, "w1", &[]).iter().filter(|m| m.id == task).count(),
        1
    );
    // Broadcasts can be claimed by anyone but the sender.
    ok(&r, "rv1", &["mail", "claim", &all]);
    fails_with(&r, "nexus", &["mail", "claim", &all], 2, "not a recipient");
    // The message to the reviewers group reached its member under the id `send` answered with.
    let to_rv1 = inbox(&r, "rv1", &["--all"]);
    assert_eq!(
        to_rv1
            .iter()
            .find(|m| m.subject == "review this")
            .unwrap()
            .id,
        rev
    );
}

#[test]
fn file_attachments_are_blobs_and_come_back_out() {
    let r = Repo::new();
    let patch = r.path().join("fix.patch");
    let bytes: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
    std::fs::write(&patch, &bytes).unwrap();
    let id = send(
        &r,
        "weaver",
        "refactor",
        "see attached",
        &[
            "--attach",
            patch.to_str().unwrap(),
            "--attach",
            "https://example.com/pr/1.patch",
        ],
    );
    let m = show(&r, &id, "refactor");
    assert_eq!(
        m.files,
        [FileDoc {
            name: "fix.patch".into(),
            size: 5000
        }]
    );
    assert_eq!(m.urls, ["https://example.com/pr/1.patch"]);
    let out_file = r.path().join("out.patch");
    r.jules_ok([
        "mail",
        "attachment",
        &id[..8],
        "fix.patch",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read(&out_file).unwrap(), bytes);
    let out = r.jules(["mail", "attachment", &id, "fix.patch"]);
    assert_eq!(out.stdout, bytes);
    // The blob is in the event commit's tree.
    let commit = r.git(["rev-parse", "refs/jules/mail"]);
    assert_eq!(
        r.git(["cat-file", "-p", &format!("{commit}:payload/fix.patch")])
            .len(),
        String::from_utf8_lossy(&bytes).trim_end().len()
    );
}

#[test]
fn wait_returns_when_mail_arrives_and_times_out_otherwise() {
    let r = Repo::new();
    let out = r.jules(["mail", "wait", "--persona", "curator", "--timeout", "0.3"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no unread mail for curator"));
    // The waiter must be seen waiting before the mail is sent; a sleep would not prove it on a slow
    // machine (a waiter that started after the send returns at once). With --fetch every look starts
    // with a fetch, and the remote's upload-pack (a wrapper) counts them: after the second fetch began,
    // the first look (nothing unread) is over.
    let bare = r.bare_sibling();
    r.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    r.git(["push", "-q", "origin", "main"]);
    let marks = tempfile::tempdir().unwrap();
    let fetches = marks.path().join("fetches");
    let wrapper = marks.path().join("upload-pack");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho >> '{}'\nexec git-upload-pack \"$@\"\n",
            fetches.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    r.git([
        "config",
        "remote.origin.uploadpack",
        wrapper.to_str().unwrap(),
    ]);
    let child = crate::harness::Guarded::spawn(
        r.jules_cmd([
            "mail",
            "wait",
            "--persona",
            "curator",
            "--timeout",
            "300",
            "--interval",
            "50",
            "--fetch",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped()),
    );
    let looked = || {
        std::fs::read_to_string(&fetches)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while looked() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "mail wait never fetched twice"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let id = send(&r, "weaver", "curator", "wake up", &[]);
    let out = child.wait_output(std::time::Duration::from_secs(300));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(&id[..7]), "{}", stdout(&out));
    // With unread mail already there, it returns at once.
    let out = r.jules(["mail", "wait", "--persona", "curator", "--timeout", "0"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn stats_count_per_persona_and_find_the_oldest_unanswered() {
    let r = Repo::new();
    let q = send(
        &r,
        "curator",
        "weaver",
        "old question",
        &["--needs-response", "--type", "question"],
    );
    send(
        &r,
        "curator",
        "weaver",
        "newer question",
        &["--needs-response", "--type", "question"],
    );
    send(&r, "weaver", "curator", "status", &[]);
    let answered = send(
        &r,
        "refactor",
        "weaver",
        "answered one",
        &["--needs-response"],
    );
    ok(
        &r,
        "weaver",
        &["mail", "reply", &answered, "--body", "done"],
    );
    ok(&r, "weaver", &["mail", "read", &q]);
    let s: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "stats"])).unwrap();
    assert_eq!(s["version"], 1);
    assert_eq!(s["messages"], 5);
    assert_eq!(
        s["personas"]["weaver"],
        serde_json::json!({"received": 3, "unread": 2, "sent": 2})
    );
    assert_eq!(
        s["personas"]["curator"],
        serde_json::json!({"received": 1, "unread": 1, "sent": 2})
    );
    assert_eq!(s["unanswered"], 2);
    assert_eq!(s["oldest_unanswered"]["id"], q.as_str());
    let text = r.jules_ok(["mail", "stats"]);
    assert!(
        text.contains("2 unanswered; oldest") && text.contains("old question"),
        "{text}"
    );
}

// ------------------------------------------------------------------------------------------------------
// Two clones

#[test]
fn two_clones_exchange_mail_with_git_jules_sync() {
    let (a, b, _bare) = two_clones();
    let m1 = send(&a, "weaver", "curator", "from clone a", &[]);
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    assert_eq!(
        subjects(&inbox(&b, "curator", &["--unread"])),
        ["from clone a"]
    );
    ok(&b, "curator", &["mail", "read", &m1[..8]]);
    ok(
        &b,
        "curator",
        &["mail", "tag", "add", &m1[..8], "seen-in-b"],
    );
    let m2 = ok(
        &b,
        "curator",
        &["mail", "reply", &m1[..8], "--body", "on it"],
    )
    .trim()
    .to_owned();
    // Meanwhile a writes too: the logs diverge and sync joins them.
    let m3 = send(&a, "weaver", "curator", "second from a", &[]);
    b.jules_ok(["sync"]);
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    for r in [&a, &b] {
        let c = inbox(r, "curator", &[]);
        assert_eq!(subjects(&c), ["second from a", "from clone a"]);
        assert!(!c[1].state.as_ref().unwrap().unread);
        assert_eq!(c[1].state.as_ref().unwrap().tags, ["seen-in-b"]);
        assert!(c[0].state.as_ref().unwrap().unread);
        let w = inbox(r, "weaver", &["--unread"]);
        assert_eq!(subjects(&w), ["Re: from clone a"]);
        assert_eq!(w[0].id, m2);
    }
    assert_eq!(a.rev("refs/jules/mail"), b.rev("refs/jules/mail"));
    // The newest message in both clones is the one a sent while the logs diverged.
    for r in [&a, &b] {
        assert_eq!(inbox(r, "curator", &[])[0].id, m3);
    }
}

#[test]
fn two_clones_exchange_mail_with_plain_git_push_and_fetch() {
    let (a, b, _bare) = two_clones();
    let m1 = send(&a, "weaver", "curator", "pushed by plain git", &[]);
    a.git(["push", "-q"]);
    b.git(["fetch", "-q"]);
    assert!(b.rev("refs/remotes/origin/jules/mail").is_some());
    assert_eq!(
        subjects(&inbox(&b, "curator", &["--unread"])),
        ["pushed by plain git"]
    );
    ok(&b, "curator", &["mail", "read", &m1[..8]]);
    ok(&b, "curator", &["mail", "archive", &m1[..8]]);
    let m2 = ok(&b, "curator", &["mail", "reply", &m1, "--body", "thanks"])
        .trim()
        .to_owned();
    // b's writes built on what it fetched, so its plain push is a fast-forward.
    b.git(["push", "-q"]);
    a.git(["fetch", "-q"]);
    let st = show(&a, &m1, "curator").state.unwrap();
    assert!(!st.unread && st.archived);
    let w = inbox(&a, "weaver", &["--unread"]);
    assert_eq!(
        w.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(),
        [m2.as_str()]
    );
    // a reads; its own write builds on the fetched copy too, and plain git carries it back.
    ok(&a, "weaver", &["mail", "read", &m2]);
    a.git(["push", "-q"]);
    b.git(["fetch", "-q"]);
    assert!(inbox(&b, "weaver", &["--unread"]).is_empty());
    assert!(inbox(&b, "curator", &[]).is_empty());
    assert_eq!(
        subjects(&inbox(&b, "curator", &["--archived"])),
        ["pushed by plain git"]
    );
}

#[test]
fn concurrent_synced_claims_in_two_clones_have_one_winner() {
    let (a, b, bare) = two_clones();
    for r in [&a, &b] {
        r.git(["config", "--add", "jules.group.workers.member", "w1"]);
        r.git(["config", "--add", "jules.group.workers.member", "w2"]);
    }
    let task = send(
        &a,
        "orchestrator",
        "workers",
        "one of you, please",
        &["--type", "task"],
    );
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    // Both claim at once, each through the remote lock: the remote holds the first claim's push until the
    // second's arrives, so both are in flight together (neither saw the other's claim when it pushed).
    let held = crate::harness::hold_pushes_until(bare.path(), 2);
    let spawn = |r: &Repo, who: &str| {
        crate::harness::Guarded::spawn(
            r.jules_cmd([
                "--json",
                "mail",
                "claim",
                &task[..10],
                "--persona",
                who,
                "--sync",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        )
    };
    let (ca, cb) = (spawn(&a, "w1"), spawn(&b, "w2"));
    let hang = std::time::Duration::from_secs(300);
    let (oa, ob) = (ca.wait_output(hang), cb.wait_output(hang));
    assert!(
        crate::harness::pushes_held(&held) >= 2,
        "the claims did not meet at the remote"
    );
    let codes = [oa.status.code(), ob.status.code()];
    assert!(
        codes == [Some(0), Some(3)] || codes == [Some(3), Some(0)],
        "{codes:?}\na: {} {}\nb: {} {}",
        stdout(&oa),
        stderr(&oa),
        stdout(&ob),
        stderr(&ob)
    );
    let (ra, rb): (ClaimOut, ClaimOut) = (
        serde_json::from_str(&stdout(&oa)).unwrap(),
        serde_json::from_str(&stdout(&ob)).unwrap(),
    );
    let winner = if codes[0] == Some(0) { "w1" } else { "w2" };
    for rep in [&ra, &rb] {
        assert!(rep.lock);
        assert_eq!(rep.remote.as_deref(), Some("origin"));
        if rep.persona == winner {
            assert_eq!(rep.outcome, "won");
        } else {
            assert_eq!(
                (rep.outcome.as_str(), rep.winner.as_deref()),
                ("lost", Some(winner))
            );
        }
    }
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    for r in [&a, &b] {
        assert_eq!(
            show(r, &task, "w1").claim,
            Some(ClaimDoc {
                persona: winner.into(),
                lock: true
            })
        );
    }
    // Asking again, in either clone, gives the same answer.
    let loser = if winner == "w1" { "w2" } else { "w1" };
    for r in [&a, &b] {
        assert_eq!(
            as_(r, loser, &["mail", "claim", &task]).status.code(),
            Some(3)
        );
        assert_eq!(
            as_(r, winner, &["mail", "claim", &task]).status.code(),
            Some(0)
        );
    }
}

#[test]
fn provisional_claims_agree_after_sync_and_a_lock_beats_them() {
    let (a, b, _bare) = two_clones();
    for r in [&a, &b] {
        r.write(
            ".jules/schedules.toml",
            "[groups.workers]\nmembers = [\"w1\", \"w2\", \"w3\"]\n",
        );
    }
    let task = send(&a, "orchestrator", "workers", "task", &[]);
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    // Offline claims: each clone thinks it won.
    assert!(ok(&a, "w1", &["mail", "claim", &task]).contains("provisional"));
    assert!(ok(&b, "w2", &["mail", "claim", &task]).contains("provisional"));
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    a.jules_ok(["sync"]);
    let ca = show(&a, &task, "w1").claim.unwrap();
    let cb = show(&b, &task, "w1").claim.unwrap();
    assert_eq!(ca, cb);
    assert!(!ca.lock);
    let (winner, loser) = if ca.persona == "w1" {
        ("w1", "w2")
    } else {
        ("w2", "w1")
    };
    let (wr, lr) = if winner == "w1" { (&a, &b) } else { (&b, &a) };
    // The loser learns it after syncing; the winner makes it final through the lock.
    assert_eq!(
        as_(lr, loser, &["mail", "claim", &task]).status.code(),
        Some(3)
    );
    let out = ok(wr, winner, &["mail", "claim", &task, "--sync"]);
    assert!(out.contains("lock on origin"), "{out}");
    let out = as_(lr, "w3", &["mail", "claim", &task, "--sync"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    lr.jules_ok(["sync"]);
    assert_eq!(
        show(lr, &task, "w3").claim,
        Some(ClaimDoc {
            persona: winner.into(),
            lock: true
        })
    );
}

// ------------------------------------------------------------------------------------------------------
// Seed formats

const SEED_000: &str = r#"{"event_id":"e1","ts":"2026-01-28T15:30:00Z","event_type":"send","message_id":1,"actor":"weaver","from_persona":"weaver","to_persona":"refactor","subject":"Conflict in PR #102","body":"Your changes conflict with curator's PR #101.\n","attachments":["https://github.com/owner/repo/pull/102.patch"],"read_at":null,"tag":null}
{"event_id":"e2","ts":"2026-01-28T15:31:00Z","event_type":"send","message_id":2,"actor":"scheduler","from_persona":"scheduler","to_persona":["curator","refactor"],"subject":"Sprint 5 starts","body":"go","attachments":[],"read_at":null,"tag":null}
{"event_id":"e3","ts":"2026-01-28T15:40:00Z","event_type":"read","message_id":1,"actor":"refactor","read_at":"2026-01-28T15:40:00Z"}
{"event_id":"e4","ts":"2026-01-28T15:41:00Z","event_type":"tag_add","message_id":1,"actor":"refactor","tag":"needs-action"}
{"event_id":"e5","ts":"2026-01-28T15:42:00Z","event_type":"tag_add","message_id":2,"actor":"curator","tag":"later"}
{"event_id":"e6","ts":"2026-01-28T15:43:00Z","event_type":"tag_rm","message_id":2,"actor":"curator","tag":"later"}
{"event_id":"e7","ts":"2026-01-28T15:44:00Z","event_type":"trash","message_id":2,"actor":"refactor"}

{"event_id":"e8","ts":"2026-01-28T15:45:00Z","event_type":"read","message_id":99,"actor":"curator"}
{"event_id":"e9","ts":"2026-01-28T15:46:00Z","event_type":"bounce","message_id":1,"actor":"curator"}
"#;

fn import(r: &Repo, args: &[&str]) -> ImportOut {
    let mut a = vec!["--json", "mail", "import"];
    a.extend_from_slice(args);
    let out: ImportOut = serde_json::from_str(&r.jules_ok(&a)).unwrap();
    assert_eq!(out.version, 1);
    out
}

#[test]
fn import_seed_000_jsonl_twice_adds_nothing() {
    let r = Repo::new();
    let f = r.path().join("events.jsonl");
    std::fs::write(&f, SEED_000).unwrap();
    let rep = import(&r, &[f.to_str().unwrap()]);
    assert_eq!(
        (rep.format.as_str(), rep.records, rep.messages),
        ("jsonl", 9, 2)
    );
    assert_eq!((rep.appended, rep.duplicates, rep.skipped.len()), (7, 0, 2));
    assert!(
        rep.skipped[0].contains("line 9") && rep.skipped[1].contains("bounce"),
        "{:?}",
        rep.skipped
    );

    let refactor = inbox(&r, "refactor", &[]);
    assert_eq!(subjects(&refactor), ["Conflict in PR #102"]);
    let m = &refactor[0];
    assert_eq!(
        (m.msg_type.as_str(), m.from.as_str()),
        ("conflict", "weaver")
    );
    assert_eq!(m.time, "2026-01-28T15:30:00.000Z");
    assert_eq!(m.urls, ["https://github.com/owner/repo/pull/102.patch"]);
    let st = m.state.as_ref().unwrap();
    assert_eq!(
        (st.unread, st.read_at.as_deref()),
        (false, Some("2026-01-28T15:40:00.000Z"))
    );
    assert_eq!(st.tags, ["needs-action"]);
    assert_eq!(
        subjects(&inbox(&r, "refactor", &["--trash"])),
        ["Sprint 5 starts"]
    );
    let curator = inbox(&r, "curator", &[]);
    assert_eq!(subjects(&curator), ["Sprint 5 starts"]);
    assert!(curator[0].state.as_ref().unwrap().tags.is_empty());
    assert_eq!(curator[0].msg_type, "status");

    let tip = mail_tip(&r);
    let again = import(&r, &[f.to_str().unwrap()]);
    assert_eq!((again.appended, again.duplicates), (0, 7));
    assert_eq!(mail_tip(&r), tip);
    // A later file that only marks messages of the earlier one resolves them.
    let more = r.path().join("more.jsonl");
    std::fs::write(
        &more,
        r#"{"event_id":"e10","ts":"2026-01-29T09:00:00Z","event_type":"read","message_id":2,"actor":"curator"}"#,
    )
    .unwrap();
    assert_eq!(import(&r, &[more.to_str().unwrap()]).appended, 1);
    assert!(inbox(&r, "curator", &["--unread"]).is_empty());
    // A broken line: nothing is written.
    std::fs::write(&more, "{\"event_type\":\"send\"\nnot json\n").unwrap();
    let tip = mail_tip(&r);
    let out = r.jules(["mail", "import", more.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("line 1"), "{}", stderr(&out));
    assert_eq!(mail_tip(&r), tip);
}

/// A seed-003 maildir as the seed describes it: unread at the root, read/, archive/, a tag mailbox, a
/// broadcast, a reply by file name, an expired alert and a field mail does not know.
fn write_seed_003(dir: &Path) {
    let msg = |rel: &str, front: &str, body: &str| {
        write_file(&dir.join(rel), &format!("---\n{front}---\n\n{body}"));
    };
    msg(
        "orchestrator/20260128T153000Z_worker-bug-069_status.md",
        "from: worker-bug-069\nto: orchestrator\ntype: status\ntimestamp: 2026-01-28T15:30:00Z\nneeds_response: false\npriority: normal\ntags: [BUG-069, fugue]\n",
        "## Status Update\n\nBUG-069 investigation complete.\n",
    );
    msg(
        "orchestrator/read/20260128T150000Z_worker-feat-104_status.md",
        "from: worker-feat-104\nto: orchestrator\ntype: status\ntimestamp: 2026-01-28T15:00:00Z\nneeds_response: true\nread_at: 2026-01-28T15:10:00Z\n",
        "## Done\n\nFEAT-104 ready for review.\n",
    );
    msg(
        "orchestrator/20260101T000000Z_watchdog_alert.md",
        "from: watchdog\nto: orchestrator\ntype: alert\ntimestamp: 2026-01-01T00:00:00Z\npriority: urgent\nexpires: 2026-01-02T00:00:00Z\nx-custom: \"keep: me\"\n",
        "Disk almost full.\n",
    );
    msg(
        "worker-feat-104/20260128T154000Z_orchestrator_response.md",
        "from: orchestrator\nto: worker-feat-104\ntype: response\ntimestamp: 2026-01-28T15:40:00Z\nin_reply_to: 20260128T150000Z_worker-feat-104_status.md\n",
        "Merged, thanks.\n",
    );
    msg(
        "worker-feat-104/archive/20260128T120000Z_orchestrator_task.md",
        "from: orchestrator\nto: worker-feat-104\ntype: task\ntimestamp: 2026-01-28T12:00:00Z\nread_at: 2026-01-28T12:05:00Z\nthread_id: feat-104\n",
        "Implement FEAT-104.\n",
    );
    msg(
        "worker/20260128T153100Z_orch_task.md",
        "from: orch\nto: worker\ntype: task\ntimestamp: 2026-01-28T15:31:00Z\npriority: urgent\n",
        "Anyone: fix the flaky test.\n",
    );
    msg(
        "__broadcast/20260128T160000Z_nexus_report.md",
        "from: nexus\nto: __broadcast\ntype: report\ntimestamp: 2026-01-28T16:00:00Z\n",
        "Sprint summary.\n",
    );
}

#[test]
fn import_seed_003_maildir_twice_adds_nothing() {
    let r = Repo::new();
    r.git([
        "config",
        "--add",
        "jules.group.worker.member",
        "worker-feat-104",
    ]);
    r.git([
        "config",
        "--add",
        "jules.group.worker.member",
        "worker-bug-069",
    ]);
    let dir = r.path().join(".mail");
    write_seed_003(&dir);
    let rep = import(&r, &["--maildir", dir.to_str().unwrap()]);
    assert_eq!(
        (rep.format.as_str(), rep.records, rep.messages),
        ("maildir", 7, 7)
    );
    // 7 sends, 2 reads (read/ and archive/), 1 archive.
    assert_eq!((rep.appended, rep.duplicates), (10, 0));

    let orch = inbox(&r, "orchestrator", &[]);
    assert_eq!(
        subjects(&orch),
        ["Sprint summary.", "Status Update", "Done"]
    );
    assert!(orch[1].state.as_ref().unwrap().unread);
    assert_eq!(orch[1].tags, ["BUG-069", "fugue"]);
    assert_eq!(
        orch[2].state.as_ref().unwrap().read_at.as_deref(),
        Some("2026-01-28T15:10:00.000Z")
    );
    // The expired alert is out of the inbox, not out of history.
    let all = inbox(&r, "orchestrator", &["--all"]);
    let alert = all.iter().find(|m| m.msg_type == "alert").unwrap();
    assert!(alert.expired && alert.priority == "urgent");
    let shown = show(&r, &alert.id, "orchestrator");
    assert_eq!(shown.body.as_deref(), Some("Disk almost full.\n"));

    let w = inbox(&r, "worker-feat-104", &[]);
    assert_eq!(
        subjects(&w),
        [
            "Anyone: fix the flaky test.",
            "Sprint summary.",
            "Merged, thanks."
        ]
    );
    assert_eq!(w[0].via.as_deref(), Some("worker"));
    let reply = &w[2];
    let parent = orch[2].id.clone();
    assert_eq!(reply.in_reply_to.as_deref(), Some(parent.as_str()));
    assert_eq!(reply.thread, parent);
    let archived = inbox(&r, "worker-feat-104", &["--archived"]);
    assert_eq!(archived.len(), 1);
    assert_eq!(archived[0].thread, "feat-104");
    let doc: ListDoc =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "thread", &reply.id])).unwrap();
    assert_eq!(subjects(&doc.messages), ["Done", "Merged, thanks."]);
    assert_eq!(
        subjects(&inbox(&r, "worker-bug-069", &["--from", "orch"])),
        ["Anyone: fix the flaky test."]
    );

    let tip = mail_tip(&r);
    let again = import(&r, &["--maildir", dir.to_str().unwrap()]);
    assert_eq!((again.appended, again.duplicates), (0, 10));
    assert_eq!(mail_tip(&r), tip);
}

#[test]
fn export_is_stable_and_round_trips_through_import() {
    let r = Repo::new();
    let dir = r.path().join(".mail");
    write_seed_003(&dir);
    r.git([
        "config",
        "--add",
        "jules.group.worker.member",
        "worker-feat-104",
    ]);
    import(&r, &["--maildir", dir.to_str().unwrap()]);
    // Interactive mail on top: an attachment, a group, marks.
    let file = r.path().join("notes.txt");
    std::fs::write(&file, "attached notes\n").unwrap();
    let a = send(
        &r,
        "weaver",
        "orchestrator",
        "with a file: and quotes \"x\"",
        &[
            "--attach",
            file.to_str().unwrap(),
            "--attach",
            "https://e.com/x",
            "--tag",
            "t1",
        ],
    );
    let g = send(&r, "weaver", "worker", "group mail", &["--needs-response"]);
    ok(&r, "orchestrator", &["mail", "read", &a]);
    ok(&r, "worker-feat-104", &["mail", "archive", &g]);
    ok(&r, "orchestrator", &["mail", "reply", &a, "--body", "ok"]);

    let d1 = r.path().join("out1");
    let d2 = r.path().join("out2");
    let rep: serde_json::Value = serde_json::from_str(&r.jules_ok([
        "--json",
        "mail",
        "export",
        "--maildir",
        d1.to_str().unwrap(),
    ]))
    .unwrap();
    assert_eq!(rep["messages"], 10);
    r.jules_ok(["mail", "export", "--maildir", d2.to_str().unwrap()]);
    let t1 = tree(&d1);
    assert_eq!(t1, tree(&d2), "two exports differ");
    // Exporting into a non-empty directory needs --force, which replaces the earlier export.
    let out = r.jules(["mail", "export", "--maildir", d1.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    r.jules_ok([
        "mail",
        "export",
        "--maildir",
        d1.to_str().unwrap(),
        "--force",
    ]);
    assert_eq!(tree(&d1), t1);

    // The layout of seed 003.
    assert!(t1.contains_key("orchestrator/20260128T153000Z_worker-bug-069_status.md"));
    assert!(t1.contains_key("orchestrator/read/20260128T150000Z_worker-feat-104_status.md"));
    assert!(t1.contains_key("worker-feat-104/archive/20260128T120000Z_orchestrator_task.md"));
    assert!(t1.contains_key("__broadcast/20260128T160000Z_nexus_report.md"));
    let read_file = t1
        .keys()
        .find(|k| k.starts_with("orchestrator/read/") && k.ends_with("_weaver_status.md"))
        .expect("read message of weaver");
    assert!(t1.contains_key(&format!(
        "{}.files/notes.txt",
        read_file.trim_end_matches(".md")
    )));
    let text = String::from_utf8(t1[read_file].clone()).unwrap();
    assert!(
        text.starts_with("---\nfrom: weaver\nto: orchestrator\ntype: status\ntimestamp: "),
        "{text}"
    );
    assert!(
        text.contains("\nsubject: \"with a file: and quotes \\\"x\\\"\"\n"),
        "{text}"
    );
    assert!(
        text.contains("\nfiles: [notes.txt]\n")
            && text.contains("\nattachments: [https://e.com/x]\n"),
        "{text}"
    );
    let alert =
        String::from_utf8(t1["orchestrator/20260101T000000Z_watchdog_alert.md"].clone()).unwrap();
    assert!(
        alert.contains("\nexpires: 2026-01-02T00:00:00Z\n")
            && alert.contains("\nx-custom: \"keep: me\"\n"),
        "{alert}"
    );
    assert!(alert.ends_with("---\n\nDisk almost full.\n"), "{alert}");
    // Two messages of weaver's in one second: the second file name gets a suffix.
    assert!(t1
        .keys()
        .any(|k| k.starts_with("worker/") && k.contains("_weaver_status")));

    // Import into a fresh repository and export again: the same bytes.
    let fresh = Repo::new();
    let rep = import(&fresh, &["--maildir", d1.to_str().unwrap()]);
    assert_eq!(rep.messages, 10);
    let d3 = fresh.path().join("out3");
    fresh.jules_ok(["mail", "export", "--maildir", d3.to_str().unwrap()]);
    assert_eq!(tree(&d3), t1, "re-import and export changed the maildir");
    // The same message ids on both sides, attachments included.
    let ids = |r: &Repo| -> Vec<String> {
        let doc: ListDoc = serde_json::from_str(&r.jules_ok([
            "--json",
            "mail",
            "inbox",
            "--persona",
            "orchestrator",
            "--all",
        ]))
        .unwrap();
        let mut v: Vec<String> = doc.messages.into_iter().map(|m| m.id).collect();
        v.sort();
        v
    };
    assert_eq!(ids(&r), ids(&fresh));
    let got = fresh.jules_ok(["mail", "attachment", &a, "notes.txt"]);
    assert_eq!(got, "attached notes\n");
    // Importing the export into the original repository adds no message.
    let before: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "stats"])).unwrap();
    import(&r, &["--maildir", d1.to_str().unwrap()]);
    let after: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "stats"])).unwrap();
    assert_eq!(before["messages"], after["messages"]);
    assert_eq!(before["personas"], after["personas"]);
}

#[test]
fn concurrent_writers_and_readers_leave_a_cache_that_matches_a_rebuild() {
    let r = Repo::new();
    send(&r, "weaver", "curator", "seed", &[]);
    let mut children = Vec::new();
    for w in 0..3 {
        let mut cmd = r.jules_cmd([
            "mail",
            "send",
            "--from",
            "weaver",
            "--to",
            "curator",
            "--body",
            "x",
            "--subject",
        ]);
        cmd.arg(format!("writer {w}")).stdout(Stdio::null());
        for _ in 0..4 {
            children.push(cmd.spawn().unwrap());
        }
        let mut reader = r.jules_cmd(["mail", "inbox", "--persona", "curator"]);
        reader.stdout(Stdio::null());
        for _ in 0..4 {
            children.push(reader.spawn().unwrap());
        }
    }
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    let cached = r.jules_ok(["--json", "mail", "inbox", "--persona", "curator"]);
    std::fs::remove_dir_all(r.path().join(".git/jules")).unwrap();
    let rebuilt = r.jules_ok(["--json", "mail", "inbox", "--persona", "curator"]);
    assert_eq!(cached, rebuilt);
    let doc: ListDoc = serde_json::from_str(&rebuilt).unwrap();
    assert_eq!(doc.messages.len(), 13);
}

// ------------------------------------------------------------------------------------------------------
// The first hour: persona names checked, marks only by recipients, seed-000 drop-in

fn mail_events(r: &Repo) -> usize {
    r.git(["rev-list", "--count", "refs/jules/mail"])
        .parse()
        .unwrap()
}

#[test]
fn persona_typos_warn_with_a_suggestion_and_strict_refuses_them() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"refactor\", \"curator\"]\n[groups]\nreviewers = [\"curator\", \"refactor\"]\n",
    );
    let sent = r.jules([
        "mail",
        "send",
        "--from",
        "weaver",
        "--to",
        "refactr",
        "--subject",
        "s",
        "--body",
        "b",
    ]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    assert!(
        stderr(&sent).contains("warning: unknown persona refactr; did you mean refactor?"),
        "{}",
        stderr(&sent)
    );
    let before = mail_events(&r);
    for strict in [vec!["--strict"], vec![]] {
        if strict.is_empty() {
            r.git(["config", "jules.strictPersonas", "true"]);
        }
        let mut args = strict.clone();
        args.extend([
            "mail",
            "send",
            "--from",
            "weaver",
            "--to",
            "refactr",
            "--subject",
            "s",
            "--body",
            "b",
        ]);
        let out = r.jules(&args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("error: unknown persona refactr")
                && stderr(&out).contains("hint: did you mean refactor?"),
            "{}",
            stderr(&out)
        );
        assert_eq!(mail_events(&r), before, "a refused send writes nothing");
    }
    // A group is fine as a recipient, an error where one persona is expected.
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "weaver",
        "--to",
        "reviewers",
        "--subject",
        "s",
        "--body",
        "b",
    ]);
    let out = r.jules(["mail", "inbox", "--persona", "reviewers"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: reviewers is a group, not a persona")
            && stderr(&out).contains("hint: name one of its members: curator, refactor"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn only_recipients_mark_a_message_and_refusals_write_nothing() {
    let r = Repo::new();
    let id = r
        .jules_ok([
            "mail",
            "send",
            "--from",
            "alice",
            "--to",
            "bob",
            "--subject",
            "hi",
            "--body",
            "b",
        ])
        .trim()
        .to_owned();
    let before = mail_events(&r);
    for args in [
        vec!["mail", "read", &id, "--persona", "nobodyxyz"],
        vec!["mail", "trash", &id, "--persona", "stranger"],
        vec!["mail", "archive", &id, "--persona", "stranger"],
        vec!["mail", "tag", "add", &id, "x", "--persona", "stranger"],
        vec!["mail", "claim", &id, "--persona", "stranger"],
        vec!["mail", "read", &id, "--persona", "alice"],
    ] {
        let out = r.jules(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is not a recipient"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(mail_events(&r), before);
    // The sender has no mailbox state of a direct message.
    let shown: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "show", &id, "--persona", "alice"]))
            .unwrap();
    assert!(shown["message"]["state"].is_null(), "{shown}");
    // The recipient reads it; the state line has its space.
    let read = r.jules_ok(["mail", "read", &id, "--persona", "bob"]);
    assert!(
        read.lines()
            .any(|l| l.starts_with("State (bob): ") && l.ends_with(" read")),
        "{read}"
    );
    let again = r.jules(["mail", "unread", &id, "--persona", "bob"]);
    assert!(again.status.success());
    let noop = r.jules(["mail", "unread", &id, "--persona", "bob"]);
    assert!(
        stderr(&noop).contains("is already unread for bob; nothing changed"),
        "{}",
        stderr(&noop)
    );
}

#[test]
fn jules_mail_answers_as_seed_000_shows_with_integer_aliases() {
    let r = Repo::new();
    let f = r.path().join("events.jsonl");
    std::fs::write(&f, SEED_000).unwrap();
    r.jules_ok(["mail", "import", f.to_str().unwrap()]);
    // The binary under the name seed 000's prompts use.
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("jules-mail");
    std::os::unix::fs::symlink(crate::harness::bin(), &link).unwrap();
    let jm = |args: &[&str]| {
        let mut cmd = std::process::Command::new(&link);
        r.env.apply(&mut cmd);
        cmd.current_dir(r.path())
            .args(args)
            .env("JULES_PERSONA", "weaver");
        cmd.output().unwrap()
    };
    let sent = jm(&[
        "send",
        "--to",
        "curator",
        "--subject",
        "Question",
        "--body",
        "Can you review X?",
    ]);
    assert!(sent.status.success(), "{}", stderr(&sent));
    let inbox = jm(&["inbox", "--persona", "curator", "--unread", "--json"]);
    assert!(inbox.status.success(), "{}", stderr(&inbox));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&inbox)).unwrap();
    let subjects: Vec<&str> = doc["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["subject"].as_str().unwrap())
        .collect();
    assert!(
        subjects.contains(&"Question") && subjects.contains(&"Sprint 5 starts"),
        "{doc}"
    );
    // `read 2` and `#2`: the seed-000 message_id of "Sprint 5 starts".
    let read = jm(&["read", "2", "--persona", "curator"]);
    assert!(read.status.success(), "{}", stderr(&read));
    assert!(
        stdout(&read).contains("Sprint 5 starts"),
        "{}",
        stdout(&read)
    );
    let tag = jm(&["tag", "add", "#2", "needs-action", "--persona", "curator"]);
    assert!(tag.status.success(), "{}", stderr(&tag));
    let ls = jm(&["tag", "ls", "2", "--persona", "curator"]);
    assert!(stdout(&ls).contains("needs-action"), "{}", stdout(&ls));
    let missing = jm(&["read", "#77", "--persona", "curator"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("message not found: #77"),
        "{}",
        stderr(&missing)
    );
}
