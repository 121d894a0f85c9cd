//! The use cases called as a library, without a process: what the MCP server and the web view do. One test
//! per group (mail, state, series, weave); each checks the typed answer against what git or the CLI says
//! about the same repository afterwards, so the API and the commands cannot drift apart.

use std::sync::atomic::AtomicBool;

use git_jules::capabilities::mail::api::Mark;
use git_jules::capabilities::mail::api::{self, Attachment, Compose, ReplyInput, SendInput};
use git_jules::capabilities::mail::view::Filter;
use git_jules::{Error, NameProblem, Workspace};

use crate::harness::{open, Repo};

/// A workspace on `r`, read in this process: the identity the harness gives its processes (through a
/// `HOME` of its own) is set in the repository itself, so that a machine with no global `user.name` (a
/// fresh one) sees the same as the binary does.
fn workspace(r: &Repo) -> Workspace {
    r.git(["config", "user.name", "Test User"]);
    r.git(["config", "user.email", "test@example.com"]);
    Workspace::from_repo(r.path(), open(r.path()))
}

fn send(ws: &Workspace, from: &str, to: &[&str], subject: &str) -> api::Sent {
    api::send(
        ws,
        SendInput {
            from: from.into(),
            to: to.iter().map(|t| t.to_string()).collect(),
            subject: Some(subject.into()),
            compose: Compose {
                body: format!("about {subject}"),
                ..Compose::default()
            },
            ..SendInput::default()
        },
    )
    .unwrap()
}

#[test]
fn mail_use_cases_send_read_mark_reply_and_claim_as_the_cli_sees_them() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[groups]\nreviewers = [\"alice\", \"bob\"]\n",
    );
    let ws = workspace(&r);

    // A send with an attachment file and a link; the CLI shows the same message.
    r.write("notes.txt", "attached\n");
    let hello = api::send(
        &ws,
        SendInput {
            from: "carol".into(),
            to: vec!["alice".into()],
            subject: Some("hello".into()),
            thread: Some("standup".into()),
            compose: Compose {
                body: "b1".into(),
                priority: Some(git_jules::capabilities::mail::Priority::Urgent),
                attachments: vec![
                    Attachment::from_arg(r.path(), "notes.txt").unwrap(),
                    Attachment::from_arg(r.path(), "https://example.com/x").unwrap(),
                ],
                ..Compose::default()
            },
            ..SendInput::default()
        },
    )
    .unwrap();
    // The recipient is known (a member of a group); the sender is not, and the policy every frontend
    // applies says so, as data.
    assert_eq!(
        hello.warnings,
        [api::UnknownName {
            name: "carol".into(),
            suggestion: None
        }]
    );
    let shown: serde_json::Value = serde_json::from_str(&r.jules_ok([
        "--json",
        "mail",
        "show",
        &hello.id,
        "--persona",
        "alice",
    ]))
    .unwrap();
    assert_eq!(shown["message"]["subject"], "hello");
    assert_eq!(shown["message"]["priority"], "urgent");
    assert_eq!(shown["message"]["thread"], "standup");
    assert_eq!(
        shown["message"]["urls"],
        serde_json::json!(["https://example.com/x"])
    );
    assert_eq!(shown["message"]["files"][0]["name"], "notes.txt");

    // An unknown recipient is sent all the same, and comes back as data with the closest name.
    let typo = send(&ws, "carol", &["alicee"], "typo");
    assert_eq!(
        typo.warnings,
        [api::UnknownName {
            name: "alicee".into(),
            suggestion: Some("alice".into())
        }]
    );
    // A group where one persona is expected is refused with its members, as data.
    match api::inbox(&ws, "reviewers", &Filter::default()) {
        Err(Error::Persona {
            name,
            problem: NameProblem::Group { members },
        }) => assert_eq!(
            (name.as_str(), members),
            ("reviewers", vec!["alice".to_owned(), "bob".to_owned()])
        ),
        other => panic!("{other:?}"),
    }

    // The inbox is the CLI's document, value for value.
    let inbox = api::inbox(&ws, "alice", &Filter::default()).unwrap();
    let cli: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "inbox", "--persona", "alice"]))
            .unwrap();
    assert_eq!(serde_json::to_value(&inbox).unwrap(), cli);

    // Read marks it read; a second read changes nothing; archive moves it out of the inbox.
    let read = api::read(&ws, &hello.id[..8], "alice").unwrap();
    assert_eq!(read.message.body.as_deref(), Some("b1"));
    assert!(!read.message.state.as_ref().unwrap().unread);
    let again = api::mark(&ws, &hello.id, "alice", Mark::Read).unwrap();
    assert!(!again.changed);
    let archived = api::mark(&ws, &hello.id, "alice", Mark::Archive).unwrap();
    assert!(archived.changed);
    let unread: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "mail", "inbox", "--persona", "alice"]))
            .unwrap();
    assert!(unread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["id"] != hello.id.as_str()));

    // A reply goes to the sender, in the thread, "Re: …".
    let re = api::reply(
        &ws,
        ReplyInput {
            from: "alice".into(),
            id: hello.id[..10].into(),
            compose: Compose {
                body: "thanks".into(),
                ..Compose::default()
            },
            ..ReplyInput::default()
        },
    )
    .unwrap();
    let thread = api::thread(&ws, "standup", Some("alice")).unwrap();
    let ids: Vec<&str> = thread.list.messages.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, [hello.id.as_str(), re.id.as_str()]);
    assert_eq!(thread.list.messages[1].subject, "Re: hello");
    assert_eq!(thread.list.messages[1].to, ["carol"]);

    // A group claim: one winner, the loser is told who.
    let task = send(&ws, "carol", &["reviewers"], "review it");
    let won = api::claim(&ws, &task.id, "bob", false, None).unwrap();
    assert!(won.won());
    let lost = api::claim(&ws, &task.id, "alice", false, None).unwrap();
    assert!(!lost.won());
    assert_eq!(
        serde_json::to_value(&lost).unwrap()["winner"],
        serde_json::json!("bob")
    );
}

#[test]
fn state_use_cases_list_and_finish_tasks() {
    let r = Repo::new();
    r.jules_ok(["sprint", "start"]);
    let a = r.jules_ok(["task", "add", "write the parser", "--persona", "alice"]);
    r.jules_ok(["task", "add", "review", "--persona", "bob"]);
    let ws = workspace(&r);
    let alice = git_jules::capabilities::sprint_tasks::list(
        &ws,
        &git_jules::capabilities::sprint_tasks::TaskQuery {
            persona: Some("alice".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(alice.len(), 1);
    assert!(alice[0].id.starts_with(a.trim()));
    let done = git_jules::capabilities::sprint_tasks::done(&ws, "alice", a.trim()).unwrap();
    assert_eq!(
        (done.state, done.task.as_str()),
        ("done", alice[0].id.as_str())
    );
    // Finishing it twice is refused; the CLI sees it done.
    assert!(git_jules::capabilities::sprint_tasks::done(&ws, "alice", a.trim()).is_err());
    let cli: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "task", "ls", "--state", "done"])).unwrap();
    assert_eq!(cli["items"][0]["id"], alice[0].id.as_str());
}

#[test]
fn series_use_case_verifies_a_range_and_caches_what_git_notes_show() {
    let r = Repo::new();
    r.git(["checkout", "-qb", "topic"]);
    for (i, content) in ["ok\n", "ok\n", "bad\n"].iter().enumerate() {
        r.write(&format!("f{i}"), content);
        r.commit_all(&format!("patch {i}"));
    }
    let ws = workspace(&r);
    let input = git_jules::capabilities::series::api::VerifyInput {
        base: Some("main".into()),
        cmd: Some("! grep -q bad f*".into()),
        keep_going: true,
        ..Default::default()
    };
    let never = AtomicBool::new(false);
    let seen = std::sync::Mutex::new(0usize);
    let verified = git_jules::capabilities::series::api::verify(&ws, &input, &never, &|_| {
        *seen.lock().unwrap() += 1;
    })
    .unwrap();
    assert!(!verified.report.passed);
    assert_eq!(verified.base, "main");
    assert_eq!(*seen.lock().unwrap(), 3);
    let failed: Vec<String> = verified
        .report
        .commits
        .iter()
        .filter(|c| c.result == git_jules::capabilities::verify::Outcome::Fail)
        .map(|c| c.commit.to_string())
        .collect();
    assert_eq!(failed, [r.rev("topic").unwrap()]);
    // The results are cached where the CLI finds them: a second run through the binary runs nothing.
    let out = r.jules([
        "--json",
        "verify",
        "--base",
        "main",
        "--cmd",
        "! grep -q bad f*",
        "--keep-going",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["commits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["cached"] == true),
        "{report}"
    );
}

#[test]
fn weave_use_case_checks_inputs_without_writing_anything() {
    let r = Repo::new();
    r.write("shared", "base\n");
    r.commit_all("shared file");
    for (branch, content) in [("one", "one\n"), ("two", "two\n")] {
        r.git(["checkout", "-qb", branch, "main"]);
        r.write("shared", content);
        r.commit_all(branch);
    }
    r.git(["checkout", "-q", "main"]);
    let refs_before = r.git(["for-each-ref"]);
    let objects_before = r.git(["count-objects", "-v"]);
    let ws = workspace(&r);
    let opts = git_jules::capabilities::weave::Options::check_only(
        vec![
            git_jules::capabilities::weave::input::Spec::from_arg(ws.dir(), "one"),
            git_jules::capabilities::weave::input::Spec::from_arg(ws.dir(), "two"),
        ],
        Vec::new(),
        Some("main".into()),
        None,
    );
    let report =
        git_jules::capabilities::weave::weave(&ws.repo(), &opts, &AtomicBool::new(false)).unwrap();
    assert!(!report.clean());
    let doc = serde_json::to_value(&report).unwrap();
    assert_eq!(doc["check"], true);
    let names = |key: &str| -> Vec<String> {
        doc[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["input"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(names("applied"), ["one"], "{doc}");
    assert_eq!(names("conflicted"), ["two"], "{doc}");
    // Nothing written: the refs and the object store are as they were.
    assert_eq!(r.git(["for-each-ref"]), refs_before);
    assert_eq!(r.git(["count-objects", "-v"]), objects_before);
}

/// A workspace that keeps views warm hands the mail view of the current tips from one call to the next,
/// and never an answer for tips that moved; one that does not keeps nothing.
#[test]
fn a_warm_workspace_reuses_the_view_only_at_the_same_tips() {
    let r = Repo::new();
    let cold = workspace(&r);
    send(&cold, "bob", &["alice"], "one");
    api::inbox(&cold, "alice", &Filter::default()).unwrap();
    assert!(cold.warm().is_none());
    let mut ws = workspace(&r);
    ws.keep_warm();
    let warm = ws.warm().unwrap();
    assert!(warm.is_empty());
    let first = api::inbox(&ws, "alice", &Filter::default()).unwrap();
    assert_eq!(warm.len(), 1, "the view is kept after the call");
    assert_eq!(first.list.messages.len(), 1);
    // Another process appends: the kept view (older tips) is not used; the answer has the new mail.
    r.jules_ok([
        "mail",
        "send",
        "--from",
        "carol",
        "--to",
        "alice",
        "--subject",
        "two",
        "--body",
        "b",
    ]);
    let second = api::inbox(&ws, "alice", &Filter::default()).unwrap();
    assert_eq!(second.list.messages.len(), 2);
    assert_eq!(warm.len(), 1);
}

/// Pin the clock every lease use case reads (`lease::now`, the committer time) in the repository itself, so
/// the binary and this process answer for the same moment.
fn pin_clock(r: &Repo) {
    r.git([
        "config",
        "gitoxide.commit.committerDate",
        "2030-01-01T00:00:00Z",
    ]);
}

/// `value` as `--json` prints it: `"version"` added.
fn versioned(value: impl serde::Serialize) -> serde_json::Value {
    let mut v = serde_json::to_value(value).unwrap();
    v.as_object_mut()
        .unwrap()
        .insert("version".into(), 1.into());
    v
}

fn cli_json(r: &Repo, args: &[&str]) -> serde_json::Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    serde_json::from_str(&r.jules_ok(full)).unwrap()
}

/// The lease use cases (`lease::api`) are what the CLI shows: a lease acquired in this process is the one
/// `lease list --json` lists, the list and the check are the CLI's documents value for value, and a release
/// is seen by the binary. Catches a frontend that assembles a lease call of its own and drifts.
#[test]
fn lease_use_cases_acquire_list_check_release_as_the_cli_sees_them() {
    use git_jules::capabilities::lease::{api, Changes, Filter};
    let r = Repo::new();
    pin_clock(&r);
    let ws = workspace(&r);
    let got = api::acquire(
        &ws,
        &api::AcquireInput {
            persona: "alice".into(),
            paths: vec!["src/".into()],
            ttl: Some("1h".into()),
            reason: Some("mine".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(got.report.held);
    let id = got.report.lease.as_ref().unwrap().id.clone();
    // The document `acquire --json` prints has no `now`: the moment rides along unserialised.
    assert!(serde_json::to_value(&got).unwrap().get("now").is_none());

    let listed = api::list(&ws, &Filter::default()).unwrap();
    assert_eq!(listed.leases[0].lease.id, id);
    assert_eq!(versioned(&listed), cli_json(&r, &["lease", "list"]));
    // The bytes keep the order of the sorted map the CLI printed before the document was a struct.
    let text = r.jules_ok(["--json", "lease", "list"]);
    assert!(
        text.find("\n  \"leases\": ").unwrap() < text.find("\n  \"now\": ").unwrap(),
        "{text}"
    );

    // bob's acquire loses to alice's, as data; his check names her lease.
    let lost = api::acquire(
        &ws,
        &api::AcquireInput {
            persona: "bob".into(),
            paths: vec!["src/a.rs".into()],
            ..Default::default()
        },
    )
    .unwrap();
    assert!(!lost.report.held);
    assert_eq!(lost.report.holders[0].id, id);
    let checked = api::check(
        &ws,
        &api::CheckInput {
            persona: Some("bob".into()),
            paths: vec!["src/x.rs".into()],
            changes: None,
        },
    )
    .unwrap();
    assert!(!checked.clean());
    let out = r.jules(["--json", "lease", "check", "--persona", "bob", "src/x.rs"]);
    assert_eq!(out.status.code(), Some(1));
    let cli: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(versioned(&checked), cli);
    // Naming nothing to check is bad input, as for the CLI.
    let e = api::check(&ws, &api::CheckInput::default()).unwrap_err();
    assert_eq!(e.kind(), git_jules::ErrorKind::Usage);
    let staged = api::check(
        &ws,
        &api::CheckInput {
            persona: Some("bob".into()),
            changes: Some(Changes::Staged),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(staged.clean());

    // Renew and release as alice; the binary sees the lease gone.
    let renewed = api::renew(
        &ws,
        &api::RenewInput {
            persona: "alice".into(),
            id: id[..8].into(),
            ttl: Some("2h".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(renewed.lease.expires - renewed.now, 7200);
    let e = api::release(
        &ws,
        &api::ReleaseInput {
            persona: "alice".into(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.kind(), git_jules::ErrorKind::Usage, "naming no lease");
    let released = api::release(
        &ws,
        &api::ReleaseInput {
            persona: "alice".into(),
            all: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(released.released[0].id, id);
    assert!(cli_json(&r, &["lease", "list"])["leases"]
        .as_array()
        .unwrap()
        .is_empty());
    let reminded = api::remind(
        &ws,
        &api::RemindInput {
            from: "scheduler".into(),
            lead: None,
        },
    )
    .unwrap();
    assert!(reminded.reminded.is_empty());
}

/// The series status use case (`series::status::read`) is the document `series status --json` prints and
/// the MCP server's `series_status` answers, and `read_all` is `series list --json`.
#[tokio::test(flavor = "current_thread")]
async fn series_status_use_case_is_the_clis_and_the_mcp_tools_document() {
    use git_jules::capabilities::series::status::{self, StatusInput};
    let r = Repo::new();
    r.git(["config", "jules.verify.cmd", "true"]);
    r.git(["checkout", "-qb", "jules/staging/feat"]);
    r.write("f", "x\n");
    r.commit_all("feat: x\n\nRationale: a test needs one patch.");
    let ws = workspace(&r);
    let st = status::read(
        &ws,
        &StatusInput {
            name: Some("feat".into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(st.verify_command.as_deref(), Some("true"));
    let doc = versioned(&st);
    assert_eq!(doc, cli_json(&r, &["series", "status", "feat"]));
    let all = status::read_all(&ws, None).unwrap();
    assert_eq!(
        serde_json::json!({"version": 1, "items": serde_json::to_value(&all).unwrap()}),
        cli_json(&r, &["series", "list"])
    );
    let notes = status::patch_notes(&ws, &st.patches[0]).unwrap();
    assert_eq!(notes.rationale, ["a test needs one patch."]);

    let (mcp, _) = crate::mcp::connect(&r, "alice").await;
    let answered = crate::mcp::ok(
        &crate::mcp::call(&mcp, "series_status", serde_json::json!({"name": "feat"})).await,
    );
    assert_eq!(answered, doc);
    mcp.cancel().await.unwrap();
}

/// The lease tools of the MCP server answer with the use case's documents: `lease_list` is `lease::api::list`
/// for the same moment, and a lease a tool acquired is the one the use case lists.
#[tokio::test(flavor = "current_thread")]
async fn the_mcp_lease_tools_return_the_use_cases_documents() {
    use git_jules::capabilities::lease::{api, Filter};
    let r = Repo::new();
    pin_clock(&r);
    let ws = workspace(&r);
    let (mcp, _) = crate::mcp::connect(&r, "alice").await;
    let got = crate::mcp::ok(
        &crate::mcp::call(
            &mcp,
            "lease_acquire",
            serde_json::json!({"paths": ["docs/"], "shared": true}),
        )
        .await,
    );
    let listed = api::list(&ws, &Filter::default()).unwrap();
    assert_eq!(
        listed.leases[0].lease.id,
        got["lease"]["id"].as_str().unwrap()
    );
    assert_eq!(
        crate::mcp::ok(&crate::mcp::call(&mcp, "lease_list", serde_json::json!({})).await),
        versioned(&listed)
    );
    mcp.cancel().await.unwrap();
}

/// Finding: a blank `--cmd` was a command of its own for `series status` (`"verify_command": ""`, every
/// patch `unverified`), while a blank `jules.verify.cmd` is no command (`unknown`) for the MCP tool and the
/// web page. The use case resolves the command once: blank is none, whoever gives it.
#[test]
fn a_blank_verify_command_is_no_command_for_series_status() {
    let r = Repo::new();
    r.git(["checkout", "-qb", "jules/staging/feat"]);
    r.write("f", "x\n");
    r.commit_all("feat: x");
    let doc = cli_json(&r, &["series", "status", "feat", "--cmd", " "]);
    assert_eq!(doc["verify_command"], serde_json::Value::Null, "{doc}");
    assert_eq!(doc["patches"][0]["verify"], "unknown", "{doc}");
}

/// The weave reports as one read (`weave::recent::read`, what the web's weave page shows): the report a
/// weave through the binary recorded is the document its `--json` printed, and the integration branch lists
/// the woven inputs.
#[test]
fn weave_reports_use_case_reads_what_a_weave_recorded() {
    let r = crate::weave::project();
    crate::weave::appendix_a(&r);
    let out = r.jules([
        "--json",
        "weave",
        "jules/curator/tidy",
        "jules/refactor/rename",
    ]);
    assert_eq!(out.status.code(), Some(1), "one input conflicts");
    let mut printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ws = workspace(&r);
    let recent = git_jules::capabilities::weave::recent::read(&ws, chrono::Utc::now()).unwrap();
    assert_eq!(recent.reports.len(), 1);
    let mut recorded = recent.reports[0].report.clone().expect("the report blob");
    for doc in [&mut printed, &mut recorded] {
        doc.as_object_mut().unwrap().remove("version");
    }
    assert_eq!(recorded, printed);
    assert_eq!(recent.branches[0].woven[0].input, "jules/curator/tidy");
}

/// The series version use cases (`series::api`: record, versions, show, range-diff, interdiff, list of
/// every persona's series) answer with the documents the CLI prints for the same versions.
#[test]
fn series_version_use_cases_are_the_clis_documents() {
    use git_jules::capabilities::series::api;
    let r = Repo::new();
    r.git(["checkout", "-qb", "jules/staging/feat"]);
    r.write("a", "one\n");
    r.commit_all("feat: a\n\nRationale: the first patch.");
    let ws = workspace(&r);
    let v1 = api::record_version(&ws, "alice", Some("feat"), None).unwrap();
    assert!(v1.recorded);
    r.write("b", "two\n");
    r.commit_all("feat: b\n\nRationale: the second patch.");
    let v2 = api::record_version(&ws, "alice", Some("feat"), None).unwrap();
    assert_eq!(v2.version.record.number, 2);

    let all = api::versions(&ws, "alice/feat").unwrap();
    assert_eq!(
        serde_json::json!({"version": 1, "items": serde_json::to_value(&all).unwrap()}),
        cli_json(&r, &["series", "versions", "alice/feat"])
    );
    let e = api::versions(&ws, "alice/feat@v1").unwrap_err();
    assert_eq!(e.kind(), git_jules::ErrorKind::Usage);
    let shown = api::show(&ws, "alice/feat@v1").unwrap();
    assert_eq!(
        versioned(&shown),
        cli_json(&r, &["series", "show", "alice/feat@v1"])
    );
    let versions = api::Versions {
        series: "alice/feat".into(),
        old: "v1".into(),
        new: None,
    };
    let rd = api::range_diff(
        &ws,
        &api::RangeDiffInput {
            versions: versions.clone(),
            creation_factor: 60,
            with_diff: true,
            rebase: false,
        },
    )
    .unwrap();
    assert_eq!(
        versioned(&rd),
        cli_json(&r, &["series", "range-diff", "alice/feat", "v1"])
    );
    assert!(rd.warnings.is_empty(), "{:?}", rd.warnings);
    let bad = api::RangeDiffInput {
        versions: versions.clone(),
        creation_factor: 10_001,
        with_diff: false,
        rebase: false,
    };
    assert_eq!(
        api::range_diff(&ws, &bad).unwrap_err().kind(),
        git_jules::ErrorKind::Usage
    );
    let d = api::interdiff(&ws, &versions).unwrap();
    assert_eq!(
        versioned(&d),
        cli_json(&r, &["series", "interdiff", "alice/feat", "v1", "v2"])
    );
    let listed = api::list_versions(&ws, None).unwrap();
    assert_eq!(
        versioned(&listed),
        cli_json(&r, &["series", "list", "--all"])
    );
}

/// The web view's JSON page at `path` (a `GET /api/…` of the real server, admitted with its token's
/// cookie), as a value.
fn web_json(server: &crate::web::Server, path: &str) -> serde_json::Value {
    let answer = server.get(path);
    let body = answer.text();
    assert_eq!(answer.status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// Issue 42 (one way into mail): the web's mailbox, sent and thread pages are the documents of the
/// mail use cases the CLI and the MCP server call, for the same persona and filter, value for value (the
/// page adds only what it shows around them: the folder, the message selected). Catches a web read that
/// rebuilds a listing its own way (another filter, another persona check, signatures left out).
#[test]
fn the_web_mailbox_is_the_cli_inbox_for_the_same_persona_and_filter() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[groups]\nreviewers = [\"alice\", \"bob\"]\n",
    );
    let ws = workspace(&r);
    let a = send(&ws, "bob", &["alice"], "first");
    send(&ws, "carol", &["reviewers"], "to the group");
    let tagged = api::send(
        &ws,
        SendInput {
            from: "bob".into(),
            to: vec!["alice".into()],
            subject: Some("tagged".into()),
            thread: Some("standup".into()),
            compose: Compose {
                body: "b".into(),
                msg_type: Some("task".into()),
                priority: Some(git_jules::capabilities::mail::Priority::Urgent),
                tags: vec!["x".into()],
                ..Compose::default()
            },
            ..SendInput::default()
        },
    )
    .unwrap();
    api::mark(&ws, &a.id, "alice", Mark::Read).unwrap();
    api::mark(&ws, &a.id, "alice", Mark::Archive).unwrap();
    send(&ws, "alice", &["dave"], "to an unknown name");

    let probe = crate::web::Server::start(&r, &[]);
    let without = |mut page: serde_json::Value, keys: &[&str]| {
        for k in keys {
            page.as_object_mut().unwrap().remove(*k);
        }
        page
    };
    let cases: [(&str, Filter, &[&str]); 4] = [
        ("", Filter::default(), &[]),
        (
            "?unread=1&type=task&priority=urgent&tag=x&from=bob&limit=5",
            Filter {
                unread: true,
                msg_type: Some("task".into()),
                priority: Some(git_jules::capabilities::mail::Priority::Urgent),
                tag: Some("x".into()),
                from: Some("bob".into()),
                limit: Some(5),
                ..Filter::default()
            },
            &[
                "--unread",
                "--type",
                "task",
                "--priority",
                "urgent",
                "--tag",
                "x",
                "--from",
                "bob",
                "--limit",
                "5",
            ],
        ),
        (
            "?folder=archive",
            Filter {
                folder: git_jules::capabilities::mail::view::Folder::Archive,
                ..Filter::default()
            },
            &["--archived"],
        ),
        (
            "?folder=all",
            Filter {
                folder: git_jules::capabilities::mail::view::Folder::All,
                ..Filter::default()
            },
            &["--all"],
        ),
    ];
    for persona in ["alice", "bob", "dave"] {
        for (query, filter, flags) in &cases {
            let web = without(
                web_json(&probe, &format!("/api/mail/{persona}{query}")),
                &["folder"],
            );
            let lib = serde_json::to_value(api::inbox(&ws, persona, filter).unwrap()).unwrap();
            let mut args = vec!["--json", "mail", "inbox", "--persona", persona];
            args.extend_from_slice(flags);
            let cli: serde_json::Value = serde_json::from_str(&r.jules_ok(args)).unwrap();
            assert_eq!(web, lib, "web and library, {persona}{query}");
            assert_eq!(cli, lib, "CLI and library, {persona}{query}");
        }
        let web = without(
            web_json(&probe, &format!("/api/mail/{persona}?folder=sent")),
            &["folder"],
        );
        let lib = serde_json::to_value(api::sent(&ws, persona, None).unwrap()).unwrap();
        assert_eq!(web, lib, "sent of {persona}");
    }
    // The unknown name is warned about on every way in, as data.
    let dave = web_json(&probe, "/api/mail/dave");
    assert_eq!(dave["warnings"][0]["name"], "dave");

    // A thread, with and without a persona.
    for (query, persona) in [("", None), ("?persona=alice", Some("alice"))] {
        let web = without(
            web_json(&probe, &format!("/api/message/standup{query}")),
            &["selected"],
        );
        let lib = serde_json::to_value(api::thread(&ws, "standup", persona).unwrap()).unwrap();
        assert_eq!(web, lib, "thread{query}");
    }
    let web = without(
        web_json(&probe, &format!("/api/message/{}", &tagged.id[..10])),
        &["selected"],
    );
    let lib = serde_json::to_value(api::thread(&ws, &tagged.id[..10], None).unwrap()).unwrap();
    assert_eq!(web, lib, "thread of a message id");
}

/// The status the real web server answers `GET path` with (admitted with its token's cookie).
fn web_status(server: &crate::web::Server, path: &str) -> u16 {
    server.get(path).status
}

/// Issue 42 (one way into mail): a thread or a message the web cannot find is answered as the use case
/// (`mail thread`, `mail show`) answers it, whether or not any mail was ever sent. Before, the web's own
/// path answered 404 for anything while the repository had no mail log, and 400 (a thread name that names
/// no thread, an id that is not hexadecimal: usage errors, exit 2 in the CLI) once it had one.
#[test]
fn the_web_answers_a_missing_thread_alike_with_or_without_mail() {
    let r = Repo::new();
    let ws = workspace(&r);
    let probe = crate::web::Server::start(&r, &[]);
    let paths = [
        "/api/message/standup",
        "/api/message/zz/raw",
        "/api/message/abcdef12",
    ];
    let statuses = || paths.map(|p| web_status(&probe, p));
    let without_mail = statuses();
    send(&ws, "alice", &["bob"], "hello");
    let with_mail = statuses();
    assert_eq!(without_mail, with_mail);
    // The use case's error kind decides it: a usage error is 400, an unknown id 404.
    assert!(matches!(
        api::thread(&ws, "standup", None),
        Err(Error::Usage(_))
    ));
    assert_eq!(with_mail, [400, 400, 404]);
}
