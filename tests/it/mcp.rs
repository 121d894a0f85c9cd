//! `git jules mcp` through real MCP clients: the official Rust SDK's client here, and the official Python
//! SDK in `tests/mcp_python/interop.py` (run by `python_sdk_interop`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ReadResourceRequestParams,
    ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{json, Value};

use crate::harness::{stdout, Repo};

/// A client that counts `notifications/resources/updated` for the inbox.
#[derive(Clone, Default)]
pub(crate) struct Client {
    updates: Arc<AtomicUsize>,
    wake: Arc<tokio::sync::Notify>,
}

impl ClientHandler for Client {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if params.uri == "jules://mail/inbox" {
            self.updates.fetch_add(1, Ordering::SeqCst);
            self.wake.notify_one();
        }
    }
}

pub(crate) async fn connect(
    r: &Repo,
    persona: &str,
) -> (RunningService<RoleClient, Client>, Client) {
    let (service, handler, _) = serve(r.jules_cmd(["mcp", "--persona", persona]), false).await;
    (service, handler)
}

/// The watcher's trace (`GIT_JULES_MCP_TRACE`, src/frontends/mcp/watch.rs): one stderr line per look at the inbox.
type Trace = tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStderr>>;

/// `connect`, with the watcher's trace on a pipe.
async fn connect_traced(
    r: &Repo,
    persona: &str,
) -> (RunningService<RoleClient, Client>, Client, Trace) {
    use tokio::io::AsyncBufReadExt;
    let mut cmd = r.jules_cmd(["mcp", "--persona", persona]);
    cmd.env("GIT_JULES_MCP_TRACE", "1");
    let (service, handler, stderr) = serve(cmd, true).await;
    let trace = tokio::io::BufReader::new(stderr.expect("a stderr pipe")).lines();
    (service, handler, trace)
}

/// Start the server `cmd` and shake hands; its stderr is piped and returned when `stderr`, else dropped.
async fn serve(
    cmd: std::process::Command,
    stderr: bool,
) -> (
    RunningService<RoleClient, Client>,
    Client,
    Option<tokio::process::ChildStderr>,
) {
    let pipe = match stderr {
        true => std::process::Stdio::piped(),
        false => std::process::Stdio::null(),
    };
    let (transport, stderr) = TokioChildProcess::builder(tokio::process::Command::from(cmd))
        .stderr(pipe)
        .spawn()
        .unwrap();
    let handler = Client::default();
    let service = handler
        .clone()
        .serve(transport)
        .await
        .expect("MCP handshake");
    (service, handler, stderr)
}

/// The watcher's line for its look at the inbox at mail tip `tip` (the bound only catches a hang).
async fn checked_at(trace: &mut Trace, tip: &str) -> String {
    let look = async {
        while let Some(line) = trace.next_line().await.unwrap() {
            if line.starts_with("git-jules mcp: inbox checked at ") && line.contains(tip) {
                return line;
            }
        }
        panic!("the server's stderr ended before it looked at {tip}");
    };
    tokio::time::timeout(Duration::from_secs(120), look)
        .await
        .unwrap_or_else(|_| panic!("the watcher never looked at {tip}"))
}

pub(crate) async fn call(
    service: &RunningService<RoleClient, Client>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    service
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"))
}

pub(crate) fn ok(result: &CallToolResult) -> Value {
    assert_ne!(result.is_error, Some(true), "tool failed: {result:?}");
    result
        .structured_content
        .clone()
        .expect("structured result")
}

pub(crate) fn error_text(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected a tool error: {result:?}"
    );
    serde_json::to_string(&result.content).unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn tools_send_list_read_claim_as_the_cli_does() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[groups]\nworkers = [\"alice\", \"bob\"]\n",
    );
    let (alice, _) = connect(&r, "alice").await;

    let names: Vec<String> = alice
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for want in [
        "mail_send",
        "mail_list",
        "mail_read",
        "mail_mark_read",
        "mail_archive",
        "mail_trash",
        "mail_tag",
        "mail_thread",
        "mail_claim",
        "mail_sync",
        "prompt",
        "sprint_status",
        "task_list",
        "task_done",
        "series_status",
        "verify",
        "weave_check",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "missing tool {want} in {names:?}"
        );
    }

    // bob writes to alice with the CLI; alice's server sees it.
    let sent = r.jules_ok([
        "mail",
        "send",
        "--from",
        "bob",
        "--to",
        "alice",
        "--subject",
        "hello",
        "--body",
        "b1",
    ]);
    let hello = sent.trim().to_owned();
    let urgent = call(
        &alice,
        "mail_send",
        json!({"to": ["alice"], "subject": "self note", "body": "x", "priority": "urgent"}),
    )
    .await;
    let urgent_id = ok(&urgent)["id"].as_str().unwrap().to_owned();

    // mail_list is `mail inbox --json`, byte for byte the same document; urgent first.
    let listed = ok(&call(&alice, "mail_list", json!({"unread": true})).await);
    let cli: Value = serde_json::from_str(&r.jules_ok([
        "--json",
        "mail",
        "inbox",
        "--persona",
        "alice",
        "--unread",
    ]))
    .unwrap();
    assert_eq!(listed, cli);
    let ids: Vec<&str> = listed["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [urgent_id.as_str(), hello.as_str()]);

    // mail_read shows the body and marks read, as the CLI would.
    let read = ok(&call(&alice, "mail_read", json!({"id": &hello[..8]})).await);
    assert_eq!(read["message"]["body"], "b1");
    let after: Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "show", &hello, "--persona", "alice"]))
            .unwrap();
    assert_eq!(after["message"]["state"]["unread"], false);

    // A group claim: alice wins, bob (through his own server) is refused.
    let task = r.jules_ok([
        "mail",
        "send",
        "--from",
        "boss",
        "--to",
        "workers",
        "--subject",
        "do it",
        "--body",
        "t",
    ]);
    let task = task.trim();
    ok(&call(&alice, "mail_claim", json!({"id": task})).await);
    let (bob, _) = connect(&r, "bob").await;
    let refused = call(&bob, "mail_claim", json!({"id": task})).await;
    assert!(
        error_text(&refused).contains("alice"),
        "the refusal names the winner"
    );

    // Tags, archive, trash and the thread go through the same commands.
    ok(&call(&alice, "mail_tag", json!({"id": hello, "tag": "later"})).await);
    ok(&call(&alice, "mail_archive", json!({"id": hello})).await);
    let thread = ok(&call(&alice, "mail_thread", json!({"id": hello})).await);
    assert_eq!(thread["messages"][0]["state"]["tags"], json!(["later"]));
    ok(&call(&alice, "mail_trash", json!({"id": urgent_id})).await);
    let inbox = ok(&call(&alice, "mail_list", json!({})).await);
    assert!(inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["id"] != hello.as_str() && m["id"] != urgent_id.as_str()));
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn bad_arguments_are_tool_errors_and_the_server_keeps_serving() {
    let r = Repo::new();
    let (s, _) = connect(&r, "alice").await;
    // Unknown id.
    let e = error_text(&call(&s, "mail_read", json!({"id": "abcdef12"})).await);
    assert!(e.contains("not found"), "{e}");
    // Missing field.
    let e = error_text(&call(&s, "mail_send", json!({"to": ["bob"], "subject": "s"})).await);
    assert!(e.contains("body"), "{e}");
    // Oversized body (the CLI's limit is 128 KiB).
    let big = "x".repeat(200 * 1024);
    let e = error_text(
        &call(
            &s,
            "mail_send",
            json!({"to": ["bob"], "subject": "s", "body": big}),
        )
        .await,
    );
    assert!(e.contains("error:"), "{e}");
    // A persona name with `..`, and an attempt to act as another persona.
    let e = error_text(
        &call(
            &s,
            "mail_send",
            json!({"to": ["../etc"], "subject": "s", "body": "b"}),
        )
        .await,
    );
    assert!(e.contains("error:"), "{e}");
    let e = error_text(&call(&s, "mail_list", json!({"persona": "bob"})).await);
    assert!(e.contains("persona"), "{e}");
    let e = error_text(&call(&s, "mail_read", json!({"id": "--persona=bob"})).await);
    assert!(e.contains("error:"), "{e}");
    // An unknown tool.
    let e = error_text(&call(&s, "no_such_tool", json!({})).await);
    assert!(e.contains("no tool"), "{e}");
    // Still serving.
    let sent = ok(&call(
        &s,
        "mail_send",
        json!({"to": ["alice"], "subject": "still here", "body": "b"}),
    )
    .await);
    assert!(sent["id"].as_str().is_some());
    s.cancel().await.unwrap();
}

#[test]
fn a_persona_with_dots_is_refused_at_start() {
    let r = Repo::new();
    let out = r.jules(["mcp", "--persona", "../x"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn eof_on_stdin_ends_the_server_cleanly() {
    let r = Repo::new();
    let out = crate::harness::with_stdin(&mut r.jules_cmd(["mcp", "--persona", "alice"]), b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        crate::harness::stderr(&out)
    );
    assert!(stdout(&out).is_empty());
}

/// How long a test waits for a notification: a bound that only catches a hang. The latency target (a
/// notification within 1 s) is bench/latency.sh's (its "mcp notification" line).
const HANG: Duration = Duration::from_secs(120);

async fn wait_update(client: &Client, before: usize, within: Duration) -> Duration {
    let start = Instant::now();
    while client.updates.load(Ordering::SeqCst) == before {
        let left = within
            .checked_sub(start.elapsed())
            .unwrap_or_else(|| panic!("no resources/updated notification within {within:?}"));
        let _ = tokio::time::timeout(left, client.wake.notified()).await;
    }
    start.elapsed()
}

#[tokio::test(flavor = "current_thread")]
async fn new_mail_from_another_process_or_a_fetch_is_pushed() {
    let r = Repo::new();
    let bare = r.bare_sibling();
    r.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    r.jules_ok(["init"]);
    r.jules_ok(["sync"]);
    let (s, client, mut trace) = connect_traced(&r, "alice").await;
    // resources/subscribe: the mechanism of the protocol versions the server offers (see src/frontends/cli/mcp).
    #[allow(deprecated)]
    s.subscribe(SubscribeRequestParams::new("jules://mail/inbox"))
        .await
        .unwrap();

    // Another process sends in the same clone.
    let before = client.updates.load(Ordering::SeqCst);
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "bob",
        "--to",
        "alice",
        "--subject",
        "one",
        "--body",
        "b",
    ]);
    let latency = wait_update(&client, before, HANG).await;
    eprintln!("local send: notified after {latency:?}");

    // Mail for somebody else wakes the watcher but is not news for alice.
    let before = client.updates.load(Ordering::SeqCst);
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "bob",
        "--to",
        "carol",
        "--subject",
        "not yours",
        "--body",
        "b",
    ]);
    // Not "nothing came within a while": the watcher's own line says it looked at the log with carol's
    // mail in it, and it writes that line after any notification of that look; the call's answer comes
    // after the notification on the same stream.
    let tip = r.rev("refs/jules/mail").unwrap();
    let line = checked_at(&mut trace, &tip).await;
    assert!(line.ends_with(": 0 new"), "{line}");
    ok(&call(&s, "mail_list", json!({})).await);
    assert_eq!(
        client.updates.load(Ordering::SeqCst),
        before,
        "no notification for carol's mail"
    );

    // Another clone sends and syncs; here only a plain `git fetch` runs.
    let other = r.clone_of(bare.path());
    other.jules_ok(["init"]);
    other.jules_ok([
        "mail",
        "send",
        "--from",
        "dave",
        "--to",
        "alice",
        "--subject",
        "from afar",
        "--body",
        "b",
    ]);
    other.jules_ok(["sync"]);
    let before = client.updates.load(Ordering::SeqCst);
    r.git(["fetch", "-q", "origin"]);
    let latency = wait_update(&client, before, HANG).await;
    eprintln!("plain git fetch: notified after {latency:?}");
    let res = s
        .read_resource(ReadResourceRequestParams::new("jules://mail/inbox"))
        .await
        .unwrap();
    let text = serde_json::to_string(&res.contents).unwrap();
    assert!(text.contains("from afar"));
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "current_thread")]
async fn two_servers_in_two_clones_exchange_mail_through_mail_sync() {
    let seed = Repo::new();
    let bare = seed.bare_sibling();
    seed.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let a = seed.clone_of(bare.path());
    let b = seed.clone_of(bare.path());
    a.jules_ok(["init"]);
    b.jules_ok(["init"]);
    let (sa, _) = connect(&a, "alice").await;
    let (sb, _) = connect(&b, "bob").await;
    ok(&call(
        &sa,
        "mail_send",
        json!({"to": ["bob"], "subject": "across clones", "body": "hi bob"}),
    )
    .await);
    ok(&call(&sa, "mail_sync", json!({})).await);
    let before = ok(&call(&sb, "mail_list", json!({})).await);
    assert!(before["messages"].as_array().unwrap().is_empty());
    ok(&call(&sb, "mail_sync", json!({})).await);
    let after = ok(&call(&sb, "mail_list", json!({})).await);
    assert_eq!(after["messages"][0]["subject"], "across clones");
    sa.cancel().await.unwrap();
    sb.cancel().await.unwrap();
}

/// The Python of the virtual environment that `./test.sh` (.ci/setup.d/mcp.sh) makes under the target
/// directory, `test-venv` beside the binary under test's profile directory.
pub(crate) fn test_venv_python() -> std::path::PathBuf {
    let bin = crate::harness::bin();
    bin.ancestors()
        .map(|dir| dir.join("test-venv/bin/python3"))
        .find(|python| python.exists())
        .unwrap_or_else(|| {
            panic!(
                "no test-venv above {}: run ./test.sh, which installs the Python MCP SDK there",
                bin.display()
            )
        })
}

/// The official Python SDK (in target/test-venv, made by ./test.sh) drives the server: initialize, list
/// tools, send, list, read, claim, and the notification of a send by another process. A missing SDK fails
/// this test; the notification's latency is measured by bench/latency.sh ("mcp notification"), not here.
#[test]
fn python_sdk_interop() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[groups]\nworkers = [\"alice\", \"bob\"]\n",
    );
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/interop.py");
    let mut cmd = std::process::Command::new(test_venv_python());
    r.env.apply(&mut cmd);
    cmd.arg(script)
        .arg(crate::harness::bin())
        .arg(r.path())
        .current_dir(r.path());
    // A bound that only catches a hang (the client waiting forever on a server that never answers).
    let out = crate::harness::output_within(&mut cmd, Duration::from_secs(300));
    assert!(
        out.status.success(),
        "the Python MCP client failed:\n{}\n{}",
        stdout(&out),
        crate::harness::stderr(&out)
    );
    assert!(stdout(&out).contains("interop ok"), "{}", stdout(&out));
}

/// `mail send` through the CLI: the message's id.
fn send(r: &Repo, from: &str, to: &str, subject: &str) -> String {
    r.send_mail(from, to, subject, "b", &[])
}

/// The server keeps the mail view of the current tips in memory between calls (`eventlog::warm`); it must
/// never answer from it once the log moved: another process's send, a read mark, a message sent through
/// the server itself.
#[tokio::test(flavor = "current_thread")]
async fn a_warm_server_answers_for_the_log_as_it_is_now() {
    let r = Repo::new();
    send(&r, "bob", "alice", "one");
    let (alice, _) = connect(&r, "alice").await;
    let subjects = |v: &Value| -> Vec<String> {
        v["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                format!(
                    "{}{}",
                    m["subject"].as_str().unwrap(),
                    if m["state"]["unread"] == true {
                        "*"
                    } else {
                        ""
                    }
                )
            })
            .collect()
    };
    let cli = || -> Value {
        serde_json::from_str(&r.jules_ok(["--json", "mail", "inbox", "--persona", "alice"]))
            .unwrap()
    };
    for _ in 0..3 {
        // Warm: the same answer as the CLI each time.
        assert_eq!(ok(&call(&alice, "mail_list", json!({})).await), cli());
    }
    let two = send(&r, "carol", "alice", "two");
    let listed = ok(&call(&alice, "mail_list", json!({})).await);
    assert_eq!(subjects(&listed), ["two*", "one*"]);
    assert_eq!(listed, cli());
    r.jules_ok(["mail", "read", &two, "--persona", "alice"]);
    let listed = ok(&call(&alice, "mail_list", json!({})).await);
    assert_eq!(subjects(&listed), ["two", "one*"]);
    assert_eq!(listed, cli());
    ok(&call(
        &alice,
        "mail_send",
        json!({"to": ["alice"], "subject": "three", "body": "3"}),
    )
    .await);
    let listed = ok(&call(&alice, "mail_list", json!({})).await);
    assert_eq!(subjects(&listed), ["three*", "two", "one*"]);
    assert_eq!(listed, cli());
    alice.cancel().await.unwrap();
}

/// Every line of the watcher's trace up to and including its look at mail tip `tip`.
async fn looks_until(trace: &mut Trace, tip: &str) -> Vec<String> {
    let look = async {
        let mut lines = Vec::new();
        while let Some(line) = trace.next_line().await.unwrap() {
            let done = line.starts_with("git-jules mcp: inbox checked at ") && line.contains(tip);
            lines.push(line);
            if done {
                return lines;
            }
        }
        panic!("the server's stderr ended before it looked at {tip}: {lines:?}");
    };
    tokio::time::timeout(HANG, look)
        .await
        .unwrap_or_else(|_| panic!("the watcher never looked at {tip}"))
}

/// The watcher wakes on a ref change and on nothing else. inotify also reports every open of a ref, and
/// the watcher once woke on each call's reads (and on its own looks), checking the inbox over and over:
/// half a core, idle, on a large log. Each of its looks writes a trace line naming the tip it read, and the
/// trace is one ordered stream: after calls that only read, a send is the one change, so every look up to
/// the one at the send's tip must be that look (a look woken by a read names the old tip, and comes first).
/// No clock: the send's look is the event that closes each window.
#[tokio::test(flavor = "current_thread")]
async fn the_watcher_wakes_on_a_ref_change_and_not_on_reads() {
    let r = Repo::new();
    send(&r, "bob", "alice", "one");
    let (alice, client, mut trace) = connect_traced(&r, "alice").await;
    // A subscriber, so the watcher runs (resources/subscribe, as in the notification test).
    #[allow(deprecated)]
    alice
        .subscribe(SubscribeRequestParams::new("jules://mail/inbox"))
        .await
        .unwrap();
    for round in 0..2 {
        for _ in 0..10 {
            ok(&call(&alice, "mail_list", json!({})).await);
            let _ = alice
                .read_resource(ReadResourceRequestParams::new("jules://mail/inbox"))
                .await
                .unwrap();
        }
        let before = client.updates.load(Ordering::SeqCst);
        send(&r, "carol", "alice", &format!("wake {round}"));
        let tip = r.rev("refs/jules/mail").unwrap();
        let looks = looks_until(&mut trace, &tip).await;
        // One look for the send. From the second round on, a second is allowed: the previous send's burst
        // of inotify events may outlast the settling wait (that look names the previous tip). In the first
        // round there was no earlier change while the watcher ran: any other look was woken by a read.
        assert!(
            looks.len() <= if round == 0 { 1 } else { 2 },
            "round {round}: the watcher looked at the inbox without a ref change: {looks:?}"
        );
        assert!(looks.last().unwrap().ends_with(": 1 new"), "{looks:?}");
        // The notification went out before the look's line was written, and a call's answer comes after it
        // on the same stream.
        ok(&call(&alice, "mail_list", json!({})).await);
        assert_eq!(client.updates.load(Ordering::SeqCst), before + 1);
    }
    alice.cancel().await.unwrap();
}

/// The `lease_*` tools call the library with typed arguments, acting as the server's persona only.
#[tokio::test(flavor = "current_thread")]
async fn lease_tools_acquire_list_check_renew_release_as_the_servers_persona() {
    let r = Repo::new();
    let (alice, _) = connect(&r, "alice").await;
    let (bob, _) = connect(&r, "bob").await;
    let names: Vec<String> = alice
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    for want in [
        "lease_acquire",
        "lease_renew",
        "lease_release",
        "lease_list",
        "lease_check",
    ] {
        assert!(names.iter().any(|n| n == want), "missing {want}: {names:?}");
    }
    let got = ok(&call(
        &alice,
        "lease_acquire",
        json!({"paths": ["src/"], "reason": "mine", "ttl": "1h"}),
    )
    .await);
    assert_eq!(got["version"], 1);
    assert_eq!(got["held"], true);
    assert_eq!(got["lease"]["persona"], "alice");
    let id = got["lease"]["id"].as_str().unwrap().to_owned();

    // bob is refused, as data naming the holder; a persona argument is not accepted.
    let lost = call(&bob, "lease_acquire", json!({"paths": ["src/a.rs"]})).await;
    assert_eq!(lost.is_error, Some(true));
    let doc = lost.structured_content.clone().unwrap();
    assert_eq!(doc["holders"][0]["persona"], "alice");
    let bad = call(
        &bob,
        "lease_acquire",
        json!({"paths": ["x"], "persona": "alice"}),
    )
    .await;
    assert!(error_text(&bad).contains("unknown field"));
    let bad = call(&bob, "lease_acquire", json!({"paths": ["src/[x"]})).await;
    assert!(error_text(&bad).contains("malformed lease pattern"));

    let listed = ok(&call(&bob, "lease_list", json!({})).await);
    assert_eq!(listed["leases"][0]["id"], id.as_str());
    let checked = call(&bob, "lease_check", json!({"paths": ["src/x.rs", "docs"]})).await;
    assert_eq!(checked.is_error, Some(true));
    assert_eq!(
        checked.structured_content.clone().unwrap()["conflicts"][0]["path"],
        "src/x.rs"
    );
    assert!(
        ok(&call(&alice, "lease_check", json!({"paths": ["src/x.rs"]})).await)["conflicts"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Only alice renews; bob's release without force is a conflict (exit 3).
    assert!(
        error_text(&call(&bob, "lease_renew", json!({"id": &id[..8]})).await)
            .contains("only the holder")
    );
    let refused = call(&bob, "lease_release", json!({"ids": [&id[..8]]})).await;
    assert_eq!(refused.structured_content.clone().unwrap()["exit"], 3);
    ok(&call(&alice, "lease_renew", json!({"id": &id[..8], "ttl": "2h"})).await);
    let released = ok(&call(&alice, "lease_release", json!({"all": true})).await);
    assert_eq!(released["released"][0]["id"], id.as_str());
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
}

/// Every read tool answers with the document its command prints with `--json`, value for value (the tools
/// call the library's use cases; the CLI prints the same values).
#[tokio::test(flavor = "current_thread")]
async fn read_tools_answer_with_the_clis_documents() {
    let r = Repo::new();
    r.jules_ok(["sprint", "start"]);
    let task = r.jules_ok(["task", "add", "write it", "--persona", "alice"]);
    r.jules_ok(["task", "add", "review it", "--persona", "bob"]);
    r.git(["checkout", "-qb", "jules/staging/feat"]);
    r.write("f", "x\n");
    r.commit_all("feat: x\n\nRationale: a test needs one patch.");
    let (alice, _) = connect(&r, "alice").await;
    let cli = |args: &[&str]| -> Value {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        serde_json::from_str(&r.jules_ok(full)).unwrap()
    };
    assert_eq!(
        ok(&call(&alice, "task_list", json!({"persona": "alice"})).await),
        cli(&["task", "ls", "--persona", "alice"])
    );
    assert_eq!(
        ok(&call(&alice, "sprint_status", json!({})).await),
        cli(&["sprint", "status"])
    );
    assert_eq!(
        ok(&call(&alice, "series_status", json!({"name": "feat"})).await),
        cli(&["series", "status", "feat"])
    );
    assert_eq!(
        ok(&call(&alice, "prompt", json!({})).await),
        cli(&["prompt", "alice"])
    );
    // A write: task_done records the session's persona and answers as `task done --json`.
    let done = ok(&call(&alice, "task_done", json!({"id": task.trim()})).await);
    assert_eq!(done["state"], "done");
    assert_eq!(done["version"], 1);
    let done_cli = cli(&["task", "ls", "--state", "done"]);
    assert_eq!(done_cli["items"][0]["id"], done["task"]);
    alice.cancel().await.unwrap();
}

/// Every event of every log (`log list`, then `log show`), by id: the event and its signature.
fn all_events(r: &Repo) -> std::collections::BTreeMap<String, Value> {
    let logs: Value = serde_json::from_str(&r.jules_ok(["--json", "log", "list"])).unwrap();
    let mut all = std::collections::BTreeMap::new();
    for log in logs["items"].as_array().unwrap() {
        let shown: Value =
            serde_json::from_str(&r.jules_ok(["--json", "log", "show", log.as_str().unwrap()]))
                .unwrap();
        for item in shown["items"].as_array().unwrap() {
            all.insert(item["id"].as_str().unwrap().to_owned(), item.clone());
        }
    }
    all
}

/// The server acts as one persona and signs every event it writes with that persona's key, the one it was
/// started with (`JULES_SIGNING_KEY` here, so no configuration names it). Every tool the server lists as
/// writing is called, and every event that call added, in any log, must be verified as alice's: a tool
/// that wrote through a handle without the pinned key shows as `unsigned`. The list of writing tools is
/// taken from the server, so a new writing tool fails this test until it is covered here.
#[tokio::test(flavor = "current_thread")]
async fn every_tool_write_is_signed_with_the_servers_persona_key() {
    let r = Repo::new();
    let bare = r.bare_sibling();
    r.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    r.git(["push", "-q", "origin", "main"]);
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("alice");
    let line = r.jules_ok(["keys", "new", "alice", "--out", key.to_str().unwrap()]);
    let allowed = line
        .lines()
        .find(|l| l.starts_with("alice ssh-ed25519 "))
        .unwrap_or_else(|| panic!("no allowed-signers line in {line}"))
        .to_owned();
    r.write(".jules/allowed_signers", &format!("{allowed}\n"));
    r.commit_all("trust roots");
    // The trust roots count as the remote has them (the default trust ref is origin/main once it exists).
    r.git(["push", "-q", "origin", "main"]);
    r.jules_ok(["sprint", "start"]);
    let task = r
        .jules_ok(["task", "add", "write it", "--persona", "alice"])
        .trim()
        .to_owned();
    let mail: Vec<String> = (0..6)
        .map(|i| send(&r, "bob", "alice", &format!("for alice {i}")))
        .collect();
    r.git(["checkout", "-qb", "jules/staging/feat"]);
    r.write("f", "x\n");
    r.commit_all("feat: x\n\nRationale: a test needs one patch.");

    let mut cmd = r.jules_cmd(["mcp", "--persona", "alice"]);
    cmd.env("JULES_SIGNING_KEY", &key);
    let (alice, _, _) = serve(cmd, false).await;
    let writers: std::collections::BTreeSet<String> = alice
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .filter(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint) != Some(true))
        .map(|t| t.name.to_string())
        .collect();
    // Each writing tool with arguments that make it write; `true`: it must add at least one event here.
    // mail_sync and verify may write none (a sync with nothing to remind; verify's results are git notes),
    // but whatever they add must be signed too.
    let acquired = |v: &Value| v["lease"]["id"].as_str().unwrap().to_owned();
    let mut calls: Vec<(&str, Value, bool)> = vec![
        (
            "mail_send",
            json!({"to": ["bob"], "subject": "signed by the server", "body": "b"}),
            true,
        ),
        ("mail_read", json!({"id": mail[0]}), true),
        ("mail_mark_read", json!({"id": mail[1]}), true),
        ("mail_archive", json!({"id": mail[2]}), true),
        ("mail_trash", json!({"id": mail[3]}), true),
        ("mail_tag", json!({"id": mail[4], "tag": "later"}), true),
        ("mail_claim", json!({"id": mail[5]}), true),
        ("mail_sync", json!({"remote": "origin"}), false),
        ("task_done", json!({"id": task}), true),
        ("verify", json!({"base": "main", "cmd": "true"}), false),
        (
            "lease_acquire",
            json!({"paths": ["src/"], "ttl": "1h"}),
            true,
        ),
    ];
    let called: std::collections::BTreeSet<String> = calls
        .iter()
        .map(|c| c.0.to_owned())
        .chain(["lease_renew", "lease_release"].map(str::to_owned))
        .collect();
    assert_eq!(
        called, writers,
        "every writing tool the server lists is called here"
    );
    let mut lease = None;
    for (tool, args, must_write) in calls.drain(..) {
        let before = all_events(&r);
        let answer = ok(&call(&alice, tool, args).await);
        if tool == "lease_acquire" {
            lease = Some(acquired(&answer));
        }
        check_signed(&r, tool, &before, must_write);
    }
    let lease = lease.expect("lease_acquire answered");
    for (tool, args) in [
        ("lease_renew", json!({"id": lease, "ttl": "2h"})),
        ("lease_release", json!({"ids": [lease]})),
    ] {
        let before = all_events(&r);
        ok(&call(&alice, tool, args).await);
        check_signed(&r, tool, &before, true);
    }
    alice.cancel().await.unwrap();

    // Under requireSigned the server's mail carries alice's authority.
    r.git(["config", "jules.requireSigned", "true"]);
    let inbox: Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "inbox", "--persona", "bob"])).unwrap();
    let msg = &inbox["messages"][0];
    assert_eq!(msg["subject"], "signed by the server", "{inbox}");
    assert_eq!(msg["signature"]["state"], "verified", "{msg}");
    assert_eq!(msg["signature"]["persona"], "alice", "{msg}");
}

/// The events added since `before` (at least one when `must_write`) are all verified as alice's.
fn check_signed(
    r: &Repo,
    tool: &str,
    before: &std::collections::BTreeMap<String, Value>,
    must_write: bool,
) {
    let after = all_events(r);
    let added: Vec<&Value> = after
        .iter()
        .filter(|(id, _)| !before.contains_key(*id))
        .map(|(_, e)| e)
        .collect();
    assert!(!must_write || !added.is_empty(), "{tool} wrote no event");
    for e in added {
        assert_eq!(
            (&e["signature"]["state"], &e["signature"]["persona"]),
            (&json!("verified"), &json!("alice")),
            "{tool} wrote an event not signed by the server's persona: {e}"
        );
    }
}

/// Issue 40, finding 8: the MCP server acted as a group and as a name nobody knows without a word, and
/// dropped the warnings the use cases return (`#[serde(skip)]`). One policy, the CLI's: a group is refused
/// at start (exit 2), an unknown name warned about (refused under --strict), and a tool's warnings are
/// data in its result and words in its text.
#[tokio::test(flavor = "current_thread")]
async fn the_session_persona_follows_the_clis_policy_and_results_carry_warnings() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"alice\", \"bob\"]\n[groups]\nreviewers = [\"alice\", \"bob\"]\n",
    );
    let group =
        crate::harness::with_stdin(&mut r.jules_cmd(["mcp", "--persona", "reviewers"]), b"");
    assert_eq!(group.status.code(), Some(2), "a group cannot act");
    assert!(
        crate::harness::stderr(&group).contains("reviewers is a group"),
        "{}",
        crate::harness::stderr(&group)
    );
    let strict = crate::harness::with_stdin(
        &mut r.jules_cmd(["--strict", "mcp", "--persona", "alicee"]),
        b"",
    );
    assert_eq!(
        strict.status.code(),
        Some(2),
        "--strict refuses an unknown name"
    );
    let unknown = crate::harness::with_stdin(&mut r.jules_cmd(["mcp", "--persona", "alicee"]), b"");
    assert_eq!(unknown.status.code(), Some(0));
    assert!(
        crate::harness::stderr(&unknown)
            .contains("warning: unknown persona alicee; did you mean alice?"),
        "{}",
        crate::harness::stderr(&unknown)
    );

    let (s, _) = connect(&r, "alice").await;
    let sent = call(
        &s,
        "mail_send",
        json!({"to": ["nobodyy"], "subject": "hi", "body": "x"}),
    )
    .await;
    let doc = ok(&sent);
    assert_eq!(
        doc["warnings"],
        json!([{"name": "nobodyy", "suggestion": null}]),
        "{doc}"
    );
    let text = serde_json::to_string(&sent.content).unwrap();
    assert!(
        text.contains("warning: unknown persona nobodyy"),
        "the text says it too: {text}"
    );
    s.cancel().await.unwrap();
}

/// A trust ref that names nothing turns every NOT VERIFIED mark off: the CLI warns on stderr, and an agent,
/// which reads no stderr, gets the same warning in every tool result (bug: only the server's stderr said it).
#[tokio::test(flavor = "current_thread")]
async fn a_trust_ref_naming_nothing_is_said_in_every_tool_result() {
    let r = Repo::new();
    r.git(["config", "jules.trust.ref", "mian"]);
    let (s, _) = connect(&r, "alice").await;
    for (tool, args) in [
        ("mail_list", json!({})),
        ("lease_list", json!({})),
        ("mail_search", json!({"query": "x"})),
    ] {
        let result = call(&s, tool, args).await;
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(
            text.contains("warning: jules.trust.ref is 'mian', which names no commit"),
            "{tool}: {text}"
        );
    }
    s.cancel().await.unwrap();
}

/// The error object docs/mcp.md promises for every failed call: `error: …` text, and `{"version", "error",
/// "exit"}` as structured content, bad input exiting 2.
fn usage_error(tool: &str, failed: &CallToolResult) -> Value {
    let text = error_text(failed);
    assert!(
        text.starts_with("[{") && text.contains("error: "),
        "{tool}: {text}"
    );
    let doc = failed
        .structured_content
        .clone()
        .unwrap_or_else(|| panic!("{tool}: no error object: {text}"));
    assert_eq!(doc["exit"], 2, "{tool}: {doc}");
    assert_eq!(doc["error"]["kind"], "usage", "{tool}: {doc}");
    assert_eq!(doc["version"], 1, "{tool}: {doc}");
    doc
}

/// Finding: the `lease_*` tools mapped their errors with a `failure()` of their own that dropped the hints
/// from the text (docs/mcp.md: the text is `error:`/`hint:` lines). One mapping now, `tool_error`, whose
/// hints name the tool's argument fields.
#[tokio::test(flavor = "current_thread")]
async fn a_lease_tools_error_says_the_servers_hints() {
    let r = Repo::new();
    let (s, _) = connect(&r, "alice").await;
    // The library's error for a remote that is not there, with the server's hint.
    let failed = call(
        &s,
        "lease_acquire",
        json!({"paths": ["src/"], "sync": true, "remote": "nowhere"}),
    )
    .await;
    let doc = usage_error("lease_acquire", &failed);
    assert!(
        !doc["error"]["hints"].as_array().unwrap().is_empty(),
        "{doc}"
    );
    let text = error_text(&failed);
    assert!(
        text.contains("hint: name a configured remote in `remote`"),
        "{text}"
    );
    assert!(!text.contains("--"), "a CLI flag in an MCP answer: {text}");
    s.cancel().await.unwrap();
}

/// Finding: `mail_search`'s bad arguments were a bare text error, with no error object and no exit code,
/// unlike every tool of the table (here beside two of them). It is a row of the one table now.
#[tokio::test(flavor = "current_thread")]
async fn mail_search_bad_arguments_are_the_error_object_of_every_tool() {
    let r = Repo::new();
    let (s, _) = connect(&r, "alice").await;
    for (tool, args) in [
        ("lease_list", json!({"persona": 3})),
        ("mail_list", json!({"limit": "ten"})),
        ("mail_search", json!({})),
        ("mail_search", json!({"query": "x", "persona": "bob"})),
    ] {
        usage_error(tool, &call(&s, tool, args).await);
    }
    s.cancel().await.unwrap();
}

/// Finding: a call of a tool that does not exist was a bare text error, with no error object.
#[tokio::test(flavor = "current_thread")]
async fn an_unknown_tool_is_the_error_object_of_every_tool() {
    let r = Repo::new();
    let (s, _) = connect(&r, "alice").await;
    let doc = usage_error("no_such_tool", &call(&s, "no_such_tool", json!({})).await);
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no tool named no_such_tool"));
    s.cancel().await.unwrap();
}

/// A failure that needs more input names the tool's argument fields, never a CLI flag: bob releasing
/// alice's lease is told to set `force` and `reason` (and not "pass --force --reason TEXT"), and a forced
/// release without a reason is told to set `reason`. Catches library messages that name CLI flags, and the
/// lease tools' own error mapping that dropped the hints.
#[tokio::test(flavor = "current_thread")]
async fn a_needs_force_failure_names_the_tools_fields_not_cli_flags() {
    let r = Repo::new();
    let (alice, _) = connect(&r, "alice").await;
    let (bob, _) = connect(&r, "bob").await;
    let got = ok(&call(
        &alice,
        "lease_acquire",
        json!({"paths": ["src/"], "ttl": "1h"}),
    )
    .await);
    let id = got["lease"]["id"].as_str().unwrap().to_owned();

    let refused = call(&bob, "lease_release", json!({"ids": [&id[..8]]})).await;
    let text = error_text(&refused);
    let doc = refused.structured_content.clone().unwrap();
    assert_eq!(doc["exit"], 3, "{doc}");
    let hints = doc["error"]["hints"].to_string();
    for said in [&text, &hints] {
        assert!(
            said.contains("`force`") && said.contains("`reason`"),
            "{said}"
        );
        assert!(!said.contains("--"), "a CLI flag in an MCP answer: {said}");
    }

    let no_reason = call(
        &bob,
        "lease_release",
        json!({"ids": [&id[..8]], "force": true}),
    )
    .await;
    let text = error_text(&no_reason);
    assert_eq!(no_reason.structured_content.clone().unwrap()["exit"], 2);
    assert!(text.contains("`reason`"), "{text}");
    assert!(!text.contains("--"), "a CLI flag in an MCP answer: {text}");
    alice.cancel().await.unwrap();
    bob.cancel().await.unwrap();
}
