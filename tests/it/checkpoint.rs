//! Checkpoints on the log (issue 16): a fresh clone answers from the newest checkpoint plus the events after
//! it, damaged or foreign checkpoints are ignored by readers and reported by fsck, and two replicas write the
//! same checkpoint for the same events.

use crate::harness::{stderr, stdout, with_stdin, Repo};

const PERSONAS: [&str; 3] = ["curator", "weaver", "refactor"];

/// A work repository pushing to a bare remote, after `git jules init`.
fn origin() -> (Repo, Repo) {
    let a = Repo::new();
    let bare = a.bare_sibling();
    a.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    a.git(["push", "-q", "origin", "main"]);
    a.jules_ok(["init"]);
    (a, bare)
}

/// A fresh clone of `bare` that fetched the logs and notes (as a new sandbox does).
fn fresh_clone(a: &Repo, bare: &Repo) -> Repo {
    let b = a.clone_of(bare.path());
    b.jules_ok(["init"]);
    b.git(["fetch", "-q", "origin"]);
    b
}

/// Append `n` mail events as `from`: sends to the other personas, each later one a reply in a thread, and
/// read marks on some of them.
pub(crate) fn mail_batch(r: &Repo, from: &str, start: usize, n: usize) {
    let mut lines = String::new();
    for i in start..start + n {
        let to: Vec<&str> = PERSONAS.iter().copied().filter(|p| *p != from).collect();
        lines.push_str(
            &serde_json::json!({
                "to": [to[i % to.len()]],
                "subject": format!("message {i} from {from}"),
                "body": format!("body {i}\n"),
                "type": "task",
                "priority": if i % 7 == 0 { "urgent" } else { "normal" },
                "thread": format!("topic-{}", i % 3),
            })
            .to_string(),
        );
        lines.push('\n');
    }
    let out = with_stdin(
        &mut r.jules_cmd([
            "log",
            "append",
            "mail",
            "--kind",
            "mail.send",
            "--actor",
            from,
            "--batch",
        ]),
        lines.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

pub(crate) fn state_events(r: &Repo, sessions: std::ops::Range<usize>) {
    for s in sessions {
        let session = format!("s-{s}");
        r.jules_ok([
            "state",
            "record",
            "--persona",
            PERSONAS[s % 3],
            "--session",
            &session,
        ]);
    }
}

/// Every read the tests compare, as raw stdout: inboxes, sent lists, a thread, the state and the stats.
pub(crate) fn answers(r: &Repo, extra: &[&str]) -> Vec<String> {
    let mut cmds: Vec<Vec<String>> = Vec::new();
    for p in PERSONAS {
        cmds.push(vec![
            "mail".into(),
            "inbox".into(),
            "--persona".into(),
            p.into(),
            "--all".into(),
        ]);
        cmds.push(vec![
            "mail".into(),
            "sent".into(),
            "--persona".into(),
            p.into(),
        ]);
    }
    cmds.push(vec!["mail".into(), "thread".into(), "topic-1".into()]);
    cmds.push(vec!["state".into(), "show".into()]);
    let mut out = Vec::new();
    for c in cmds {
        let mut args: Vec<&str> = vec!["--json"];
        args.extend_from_slice(extra);
        args.extend(c.iter().map(|s| s.as_str()));
        out.push(r.jules_ok(&args));
    }
    out
}

fn stats(r: &Repo, log: &str) -> serde_json::Value {
    serde_json::from_str(&r.jules_ok(["--json", "log", "stats", log])).unwrap()
}

#[test]
fn a_fresh_clone_reads_the_checkpoint_and_only_the_events_after_it() {
    let (a, bare) = origin();
    mail_batch(&a, "curator", 0, 40);
    mail_batch(&a, "weaver", 40, 40);
    state_events(&a, 0..4);
    a.jules_ok(["log", "checkpoint", "mail"]);
    a.jules_ok(["log", "checkpoint", "state"]);
    // The tail: events after the checkpoint, some marks among them.
    mail_batch(&a, "refactor", 80, 5);
    state_events(&a, 4..6);
    a.jules_ok(["sync"]);

    let b = fresh_clone(&a, &bare);
    // The first read in the fresh clone starts from the checkpoint: it reads the tail's commits only
    // (5 mail events, 2 state events), never the 80 before.
    let s = stats(&b, "mail");
    assert_eq!(
        s["refresh"],
        serde_json::json!({"checkpoint": {"commits": 5}}),
        "{s}"
    );
    assert_eq!(s["events"], 85);
    let s = stats(&b, "state");
    assert_eq!(
        s["refresh"],
        serde_json::json!({"checkpoint": {"commits": 2}}),
        "{s}"
    );
    // The mail and state views come from the checkpoint too, and agree with a full replay and with the
    // replica that wrote everything.
    let from_checkpoint = answers(&b, &[]);
    for (name, l) in [("mail", "mail"), ("state", "state")] {
        let refresh = std::fs::read_dir(b.path().join(".git/jules/cache").join(l).join(name));
        assert!(refresh.is_ok(), "the {name} cache was seeded");
    }
    assert_eq!(from_checkpoint, answers(&b, &["--full"]));
    assert_eq!(from_checkpoint, answers(&a, &[]));
    // A clone that never sees the checkpoint notes (plain replay) gives the same answers.
    let c = a.clone_of(bare.path());
    c.jules_ok(["init"]);
    c.git([
        "fetch",
        "-q",
        "origin",
        "+refs/jules/*:refs/remotes/origin/jules/*",
    ]);
    assert!(c
        .rev("refs/remotes/origin/notes/jules/checkpoints")
        .is_none());
    let s = stats(&c, "mail");
    assert!(s["refresh"]["rebuilt"].is_object(), "{s}");
    assert_eq!(answers(&c, &[]), from_checkpoint);
    // fsck recomputes both checkpoints and finds them right.
    for log in ["mail", "state"] {
        let out = b.jules_ok(["--json", "log", "fsck", log, "--checkpoints"]);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(doc["checkpoints"][0]["checked"], 1, "{out}");
        assert_eq!(
            doc["checkpoints"][0]["problems"],
            serde_json::json!([]),
            "{out}"
        );
    }
}

/// The anchor commit and manifest text of the newest mail checkpoint.
fn manifest(r: &Repo) -> (String, String) {
    let at = r.rev("refs/jules/mail").unwrap();
    let text = r.git(["notes", "--ref", "jules/checkpoints", "show", &at]);
    (at, text)
}

fn replace_manifest(r: &Repo, at: &str, text: &str) {
    let path = r.path().join(".git/manifest.txt");
    std::fs::write(&path, text).unwrap();
    r.git([
        "notes",
        "--ref",
        "jules/checkpoints",
        "add",
        "-f",
        "-F",
        path.to_str().unwrap(),
        at,
    ]);
}

#[test]
fn damaged_and_foreign_checkpoints_are_ignored_by_readers_and_reported_by_fsck() {
    let (a, bare) = origin();
    mail_batch(&a, "curator", 0, 30);
    mail_batch(&a, "weaver", 30, 30);
    a.jules_ok(["log", "checkpoint", "mail"]);
    let (at, good) = manifest(&a);
    let expected = answers(&a, &["--full"]);
    let fsck = |r: &Repo| {
        let out = r.jules(["log", "fsck", "mail", "--checkpoints"]);
        (out.status.code(), stdout(&out))
    };
    assert_eq!(fsck(&a).0, Some(0), "{}", fsck(&a).1);

    // Each damage in turn: readers without a cache ignore the checkpoint (a full replay, same answers),
    // fsck exits 1 and names the problem.
    let boxes: Vec<&str> = good.lines().filter(|l| l.contains(" boxes/")).collect();
    assert!(boxes.len() >= 2, "{good}");
    let (id0, path0) = boxes[0]
        .trim_start_matches("file ")
        .split_once(' ')
        .unwrap();
    let (id1, path1) = boxes[1]
        .trim_start_matches("file ")
        .split_once(' ')
        .unwrap();
    let swapped = good
        .replace(&format!("{id0} {path0}"), &format!("{id1} {path0}"))
        .replace(&format!("{id1} {path1}"), &format!("{id0} {path1}"));
    let cases = [
        (
            "unknown version",
            good.replacen("jules-checkpoint 1", "jules-checkpoint 99", 1),
            "unknown checkpoint format",
            true,
        ),
        (
            "projections from the future",
            good.replacen("projection mail 4", "projection mail 99", 1)
                .replacen("projection stats 1", "projection stats 99", 1),
            "unknown here",
            true,
        ),
        ("two mailboxes swapped", swapped, "does not match", false),
        (
            "wrong event count",
            good.replace("events 60\n", "events 61\n"),
            "does not match",
            true,
        ),
    ];
    for (what, text, needle, stats_ignored) in cases {
        assert_ne!(text, good, "{what}: the damage changed nothing");
        replace_manifest(&a, &at, &text);
        let _ = std::fs::remove_dir_all(a.path().join(".git/jules"));
        if stats_ignored {
            let s = stats(&a, "mail");
            assert!(s["refresh"]["rebuilt"].is_object(), "{what}: {s}");
        }
        let _ = std::fs::remove_dir_all(a.path().join(".git/jules"));
        assert_eq!(answers(&a, &[]), expected, "{what}");
        let (code, out) = fsck(&a);
        assert_eq!(code, Some(1), "{what}: {out}");
        assert!(out.contains(needle), "{what}: {out}");
    }
    // Pushed to the remote, a damaged checkpoint does not mislead a fresh clone either.
    a.jules_ok(["sync"]);
    let b = fresh_clone(&a, &bare);
    assert!(stats(&b, "mail")["refresh"]["rebuilt"].is_object());
    assert_eq!(answers(&b, &[]), expected);
    // The good manifest back: used again.
    replace_manifest(&a, &at, &good);
    let _ = std::fs::remove_dir_all(a.path().join(".git/jules"));
    assert_eq!(
        stats(&a, "mail")["refresh"],
        serde_json::json!({"checkpoint": {"commits": 0}})
    );
    assert_eq!(answers(&a, &[]), expected);
}

#[test]
fn two_replicas_checkpoint_the_same_events_into_the_same_objects() {
    let (a, bare) = origin();
    mail_batch(&a, "curator", 0, 25);
    mail_batch(&a, "weaver", 25, 25);
    a.jules_ok(["sync"]);
    let b = fresh_clone(&a, &bare);
    b.jules_ok(["sync"]);
    assert_eq!(a.rev("refs/jules/mail"), b.rev("refs/jules/mail"));
    // b has read its inbox first (a warm cache), a has not: the checkpoint does not depend on it.
    b.jules_ok(["mail", "inbox", "--persona", "curator"]);
    let wa: serde_json::Value =
        serde_json::from_str(&a.jules_ok(["--json", "log", "checkpoint", "mail"])).unwrap();
    let wb: serde_json::Value =
        serde_json::from_str(&b.jules_ok(["--json", "log", "checkpoint", "mail"])).unwrap();
    assert_eq!(wa["manifest"], wb["manifest"]);
    assert!(wa["manifest"].is_string());
    let tree = |r: &Repo, n: &str| r.git(["rev-parse", &format!("refs/notes/jules/{n}^{{tree}}")]);
    assert_eq!(tree(&a, "checkpoints"), tree(&b, "checkpoints"));
    assert_eq!(tree(&a, "checkpoint-data"), tree(&b, "checkpoint-data"));
    // After syncing both ways nothing diverges: same log, same notes trees, and a second sync changes
    // nothing.
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    a.jules_ok(["sync"]);
    assert_eq!(a.rev("refs/jules/mail"), b.rev("refs/jules/mail"));
    assert_eq!(tree(&a, "checkpoints"), tree(&b, "checkpoints"));
    let before = a.rev("refs/notes/jules/checkpoints");
    a.jules_ok(["sync"]);
    assert_eq!(a.rev("refs/notes/jules/checkpoints"), before);
    // `--every N` writes only when N commits were added since.
    let w: serde_json::Value =
        serde_json::from_str(&a.jules_ok(["--json", "log", "checkpoint", "mail", "--every", "5"]))
            .unwrap();
    assert_eq!(w["skipped"], true);
    assert_eq!(w["since_previous"], 0);
    assert_eq!(answers(&a, &[]), answers(&b, &[]));
}

/// The bounded replay (JSON kept as bytes, parsed in chunks) folds exactly what the in-memory read orders:
/// same events in the same order, duplicates once, invalid commits (bad JSON with a right id, a wrong id,
/// not an event) skipped and named, on a log with a merge.
#[test]
fn the_bounded_replay_folds_what_the_full_read_orders() {
    use git_jules::store::eventlog::{Event, Log, NewEvent};
    let r = Repo::new();
    mail_batch(&r, "curator", 0, 30);
    let repo = crate::harness::open(r.path());
    let log = Log::open(&repo, "mail").unwrap();
    let mut twice = Event::new("t.import", "importer", serde_json::json!({"k": 1}));
    twice.nonce = None;
    log.append(NewEvent::new(twice.clone())).unwrap();
    log.append(NewEvent::new(twice)).unwrap();
    // Invalid commits on top: bad JSON whose id is right, a wrong id, and not an event at all.
    let tip = r.rev("refs/jules/mail").unwrap();
    let empty = r.git(["hash-object", "-t", "tree", "-w", "--stdin"]);
    let bad_json = b"{\"v\":1,\"kind\":";
    let id = {
        use sha2::Digest;
        let d = sha2::Sha256::digest(bad_json);
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    };
    let mut parent = tip;
    for msg in [
        format!(
            "jules-event t.bad {}\n\n{}\n\nJules-Lamport: 90\nJules-Event-Id: {id}\n",
            &id[..12],
            String::from_utf8_lossy(bad_json)
        ),
        format!(
            "jules-event t.bad 000000000000\n\n{{\"v\":1}}\n\nJules-Lamport: 91\nJules-Event-Id: {}\n",
            "0".repeat(64)
        ),
        "just a commit\n".to_owned(),
    ] {
        let out = with_stdin(
            &mut r.git_cmd(["commit-tree", &empty, "-p", &parent]),
            msg.as_bytes(),
        );
        parent = stdout(&out).trim().to_owned();
    }
    r.git(["update-ref", "refs/jules/mail", &parent]);
    r.jules_ok(["log", "append", "mail", "--kind", "t.after", "--actor", "a"]);
    let repo = crate::harness::open(r.path());
    let log = Log::open(&repo, "mail").unwrap();
    let (ordered, invalid) = log.read_all().unwrap();
    let mut folded = Vec::new();
    let replayed = log
        .replay(&log.tips().unwrap(), |e| folded.push(e.clone()))
        .unwrap();
    assert_eq!(folded, ordered);
    assert_eq!(folded.len(), 30 + 1 + 1);
    let commits = |v: &[git_jules::store::eventlog::InvalidCommit]| {
        v.iter()
            .map(|i| (i.commit, i.reason.to_string()))
            .collect::<Vec<_>>()
    };
    assert_eq!(commits(&replayed.invalid), commits(&invalid));
    assert_eq!(replayed.invalid.len(), 3);
    let mut ids: Vec<_> = ordered.iter().map(|e| e.id).collect();
    ids.sort();
    assert_eq!(replayed.ids, ids);
    assert_eq!(replayed.max_key, ordered.last().map(|e| e.key()));
}
