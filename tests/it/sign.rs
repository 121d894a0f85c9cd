//! Signed events (issue 28): persona keys, the trust file on the base branch, verification states in
//! reads, `jules.requireSigned`, the guard refusing forgeries over smart HTTP, and interop with
//! `ssh-keygen -Y verify`, the reference reader of SSHSIG.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::Digest;

use crate::harness::{output_within, stderr, stdout, Repo};
use crate::remotes::{alice_auth, http_server, remote_in, Clone};

/// `git jules keys new PERSONA --out DIR/PERSONA` in `r`; the key's path and its allowed_signers line.
fn new_key(r: &Repo, dir: &Path, persona: &str) -> (PathBuf, String) {
    let path = dir.join(persona);
    let line = r.jules_ok(["keys", "new", persona, "--out", path.to_str().unwrap()]);
    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&path).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o600, "a private key is its persona's alone");
    (path, line.trim().to_owned())
}

/// Commit `.jules/allowed_signers` with `lines` on main.
fn trust(r: &Repo, lines: &[&str]) {
    r.write(".jules/allowed_signers", &(lines.join("\n") + "\n"));
    r.commit_all("trust roots");
}

/// The inbox of `persona` as JSON messages.
fn inbox(r: &Repo, persona: &str, envs: &[(&str, &str)]) -> Vec<serde_json::Value> {
    let out = r
        .jules_cmd(["mail", "inbox", "--persona", persona, "--json"])
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    doc["messages"].as_array().unwrap().clone()
}

fn by_subject<'a>(msgs: &'a [serde_json::Value], subject: &str) -> &'a serde_json::Value {
    msgs.iter()
        .find(|m| m["subject"] == subject)
        .unwrap_or_else(|| panic!("no message {subject:?} in {msgs:?}"))
}

fn send_with_key(r: &Repo, key: Option<&Path>, from: &str, to: &str, subject: &str) -> String {
    let out = send_cmd(r, key, from, to, subject).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim().to_owned()
}

fn send_cmd(r: &Repo, key: Option<&Path>, from: &str, to: &str, subject: &str) -> Command {
    let mut cmd = r.jules_cmd([
        "mail",
        "send",
        "--from",
        from,
        "--to",
        to,
        "--subject",
        subject,
        "--body",
        "do it",
    ]);
    if let Some(k) = key {
        cmd.env("JULES_SIGNING_KEY", k);
    }
    cmd
}

/// A copy of the event commit `commit` with its actor changed to `actor`: the id recomputed (so the
/// commit is a valid event), the signature trailer kept. What a forger with push access writes.
fn forge_actor(r: &Repo, commit: &str, actor: &str) -> String {
    let msg = r.git(["cat-file", "commit", commit]);
    let body = &msg[msg.find("\n\n").unwrap() + 2..];
    let mut lines: Vec<String> = body.lines().map(str::to_owned).collect();
    let json = lines[2].clone();
    let old_actor = serde_json::from_str::<serde_json::Value>(&json).unwrap()["actor"]
        .as_str()
        .unwrap()
        .to_owned();
    let forged = json.replace(
        &format!("\"actor\":\"{old_actor}\""),
        &format!("\"actor\":\"{actor}\""),
    );
    let id = hex(&sha2::Sha256::digest(forged.as_bytes()));
    let subject: Vec<&str> = lines[0].split(' ').collect();
    lines[0] = format!("{} {} {}", subject[0], subject[1], &id[..12]);
    lines[2] = forged;
    for l in &mut lines {
        if l.starts_with("Jules-Event-Id: ") {
            *l = format!("Jules-Event-Id: {id}");
        }
    }
    assert!(lines.iter().any(|l| l.starts_with("Jules-Signature: ")));
    let file = r.path().join(".git/forged-msg");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let tip = r.rev("refs/jules/mail").unwrap();
    let tree = r.git(["rev-parse", &format!("{commit}^{{tree}}")]);
    let new = r.git([
        "commit-tree",
        &tree,
        "-p",
        &tip,
        "-F",
        file.to_str().unwrap(),
    ]);
    r.git(["update-ref", "refs/jules/mail", &new, &tip]);
    id
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn commit_of_message(r: &Repo, id: &str) -> String {
    r.git([
        "log",
        "--format=%H",
        "--grep",
        &format!("Jules-Event-Id: {id}"),
        "refs/jules/mail",
    ])
    .lines()
    .next()
    .unwrap_or_else(|| panic!("no commit for {id}"))
    .to_owned()
}

#[test]
fn signed_mail_is_verified_in_the_other_clone_after_sync() {
    let origin = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&origin, keys.path(), "alice");
    let (bob_key, bob_line) = new_key(&origin, keys.path(), "bob");
    assert!(alice_line.starts_with("alice ssh-ed25519 "), "{alice_line}");
    trust(&origin, &[&alice_line, &bob_line]);
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let a = origin.clone_of(bare.path());
    let b = origin.clone_of(bare.path());
    a.git([
        "config",
        "jules.persona.alice.signingKey",
        alice_key.to_str().unwrap(),
    ]);
    b.git([
        "config",
        "jules.persona.bob.signingKey",
        bob_key.to_str().unwrap(),
    ]);
    a.jules_ok(["keys", "check", "alice"]);
    // bob's key is not configured in a: the check says so (exit 1).
    assert_eq!(a.jules(["keys", "check", "bob"]).status.code(), Some(1));

    a.send_mail("alice", "bob", "from alice", "x", &[]);
    b.send_mail("bob", "alice", "from bob", "y", &[]);
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    a.jules_ok(["sync"]);

    let fp = |r: &Repo, p: &str| {
        let o = r
            .jules_cmd(["keys", "check", p, "--json"])
            .output()
            .unwrap();
        serde_json::from_str::<serde_json::Value>(&stdout(&o)).unwrap()["fingerprint"].clone()
    };
    let in_b = inbox(&b, "bob", &[]);
    let m = by_subject(&in_b, "from alice");
    assert_eq!(m["signature"]["state"], "verified", "{m}");
    assert_eq!(m["signature"]["persona"], "alice");
    assert_eq!(m["signature"]["key"], fp(&a, "alice"));
    let in_a = inbox(&a, "alice", &[]);
    assert_eq!(
        by_subject(&in_a, "from bob")["signature"]["state"],
        "verified"
    );
    assert_eq!(by_subject(&in_a, "from bob")["signature"]["persona"], "bob");
    let shown = b.jules_ok(["mail", "show", m["id"].as_str().unwrap()]);
    assert!(shown.contains("verified: alice's key"), "{shown}");
    assert!(!shown.contains("NOT VERIFIED"), "{shown}");
}

#[test]
fn forgeries_are_detected_with_the_right_state_with_and_without_require_signed() {
    let r = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&r, keys.path(), "alice");
    let (bob_key, bob_line) = new_key(&r, keys.path(), "bob");
    let (dave_key, dave_line) = new_key(&r, keys.path(), "dave");
    // Before any trust file: nothing is verified, and the JSON says so with null.
    let early = send_with_key(&r, None, "carol", "bob", "before trust");
    assert!(by_subject(&inbox(&r, "bob", &[]), "before trust")["signature"].is_null());
    // dave's key was revoked: valid only before 2020.
    let revoked = dave_line.replacen("dave ", "dave valid-before=\"20200101\" ", 1);
    trust(&r, &[&alice_line, &bob_line, &revoked]);

    let good = send_with_key(&r, Some(&alice_key), "alice", "bob", "signed");
    let unsigned = send_with_key(&r, None, "orchestrator", "bob", "unsigned");
    let other_key = send_with_key(&r, Some(&bob_key), "alice", "bob", "bob's key as alice");
    let by_revoked = send_with_key(&r, Some(&dave_key), "dave", "bob", "revoked key");
    let forged = forge_actor(&r, &commit_of_message(&r, &good), "orchestrator");

    let msgs = inbox(&r, "bob", &[]);
    let state = |s: &str| by_subject(&msgs, s)["signature"]["state"].clone();
    let by_id = |id: &str| msgs.iter().find(|m| m["id"] == id).unwrap().clone();
    // The forgery is a copy of "signed" with another actor: tell them apart by id.
    assert_eq!(by_id(&good)["signature"]["state"], "verified");
    assert_eq!(
        state("before trust"),
        "unsigned",
        "an old, unsigned log reads as unsigned"
    );
    assert_eq!(state("unsigned"), "unsigned");
    assert_eq!(state("bob's key as alice"), "key_not_allowed");
    assert_eq!(state("revoked key"), "key_not_allowed");
    let forged_msg = by_id(&forged);
    assert_eq!(forged_msg["from"], "orchestrator");
    assert_eq!(forged_msg["signature"]["state"], "bad_signature");
    // Human output marks what is not verified, and only that.
    let human = r.jules_ok(["mail", "inbox", "--persona", "bob"]);
    let marked = |s: &str| {
        human
            .lines()
            .find(|l| l.contains(s))
            .unwrap_or_else(|| panic!("{s} not in {human}"))
            .contains("NOT VERIFIED")
    };
    assert!(!marked(&good[..7]));
    assert!(marked(&forged[..7]));
    assert!(marked("revoked key") && marked("unsigned") && marked("bob's key as alice"));
    // Without requireSigned fsck is clean: signatures are information, not validity.
    r.jules_ok(["log", "fsck", "mail"]);
    // bob marks the signed message read, without a key: the mark counts, for now.
    r.jules_ok(["mail", "read", &good, "--persona", "bob"]);
    let read = inbox(&r, "bob", &[]);
    let good_of =
        |v: &[serde_json::Value]| v.iter().find(|m| m["id"] == good.as_str()).unwrap().clone();
    assert_eq!(good_of(&read)["state"]["unread"], false);

    r.git(["config", "jules.requireSigned", "true"]);
    let listed = inbox(&r, "bob", &[]);
    let subjects: Vec<&str> = listed
        .iter()
        .map(|m| m["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["signed"], "only verified mail carries authority");
    assert_eq!(listed[0]["id"], good.as_str());
    assert_eq!(
        listed[0]["state"]["unread"], true,
        "an unsigned mark counts for nothing under requireSigned"
    );
    let hidden = r.jules(["mail", "show", &unsigned]);
    assert_eq!(
        hidden.status.code(),
        Some(2),
        "not mail from its sender: {}",
        stderr(&hidden)
    );
    let fsck = r.jules(["log", "fsck", "mail"]);
    assert_eq!(fsck.status.code(), Some(1), "{}", stderr(&fsck));
    let text = stdout(&fsck);
    let mark = r.git([
        "log",
        "-1",
        "--format=%(trailers:key=Jules-Event-Id,valueonly)",
        "refs/jules/mail",
        "--grep",
        "jules-event mail.read",
    ]);
    for id in [&early, &unsigned, &other_key, &by_revoked, &forged, &mark] {
        assert!(text.contains(&id[..12]), "fsck names {id}: {text}");
    }
    assert!(!text.contains(&good[..12]), "{text}");
    assert!(text.contains("bad signature"), "{text}");
    // Lifting requireSigned gives the events their authority back (another cache, nothing lost).
    r.git(["config", "jules.requireSigned", "false"]);
    assert_eq!(inbox(&r, "bob", &[]).len(), 6);
}

#[test]
fn a_misconfigured_key_fails_the_write_instead_of_writing_unsigned() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let (key, _) = new_key(&r, dir.path(), "alice");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let out = send_cmd(&r, Some(&key), "alice", "bob", "s")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("readable by others"),
        "{}",
        stderr(&out)
    );
    assert!(r.rev("refs/jules/mail").is_none());
}

/// `ssh-keygen -Y verify` accepts the signature as written in the commit (armored again from the
/// trailer, as docs/format.md says), and refuses it over other bytes.
#[test]
fn ssh_keygen_verifies_event_signatures() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let (key, line) = new_key(&r, dir.path(), "alice");
    let id = send_with_key(&r, Some(&key), "alice", "bob", "interop");
    let msg = r.git(["cat-file", "commit", &commit_of_message(&r, &id)]);
    let body = &msg[msg.find("\n\n").unwrap() + 2..];
    let json = body.lines().nth(2).unwrap();
    let sig = body
        .lines()
        .find_map(|l| l.strip_prefix("Jules-Signature: "))
        .expect("a signature trailer");
    let verify = |payload: &str| {
        ssh_keygen_verify(dir.path(), "git-jules-event", "alice", &line, sig, payload)
    };
    let ok = verify(json);
    assert!(ok.status.success(), "{}{}", stdout(&ok), stderr(&ok));
    assert!(
        stdout(&ok).contains("Good \"git-jules-event\" signature for alice"),
        "{}",
        stdout(&ok)
    );
    let bad = verify(&json.replace("interop", "intercep"));
    assert!(!bad.status.success(), "{}", stdout(&bad));
}

/// `ssh-keygen -Y verify -n NAMESPACE -I PRINCIPAL` of `payload` (on stdin) against the compacted signature
/// `sig` (armored again with 70-column lines, as docs/format.md says) and the trust file `allowed_line`.
fn ssh_keygen_verify(
    dir: &Path,
    namespace: &str,
    principal: &str,
    allowed_line: &str,
    sig: &str,
    payload: &str,
) -> std::process::Output {
    let mut armored = String::from("-----BEGIN SSH SIGNATURE-----\n");
    for chunk in sig.as_bytes().chunks(70) {
        armored.push_str(std::str::from_utf8(chunk).unwrap());
        armored.push('\n');
    }
    armored.push_str("-----END SSH SIGNATURE-----\n");
    std::fs::write(dir.join("sig"), armored).unwrap();
    std::fs::write(dir.join("allowed"), format!("{allowed_line}\n")).unwrap();
    let mut child = Command::new("ssh-keygen")
        .args(["-Y", "verify", "-n", namespace, "-I", principal, "-f"])
        .arg(dir.join("allowed"))
        .arg("-s")
        .arg(dir.join("sig"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh-keygen is required (CI installs it with .ci/setup.d/ssh-keygen.sh)");
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `mail send` to bob with `subject` as `persona` in `c`, signed with `key` when given.
fn send_in(c: &Clone, persona: &str, subject: &str, key: Option<&str>) -> std::process::Output {
    let mut cmd = c.cmd(
        persona,
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            subject,
            "--body",
            "x",
        ],
    );
    if let Some(k) = key {
        cmd.env("JULES_SIGNING_KEY", k);
    }
    cmd.output().unwrap()
}

/// The remote's guard with `--require-signed` refuses a push adding an unsigned event or one signed by a
/// key its trust roots do not allow for the actor, naming the event; a signed sync passes.
#[test]
fn the_guard_refuses_forged_events_over_smart_http_and_passes_signed_syncs() {
    let root = tempfile::tempdir().unwrap();
    let (origin, bare) = remote_in(root.path());
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&origin, keys.path(), "alice");
    trust(&origin, &[&alice_line]);
    origin.git(["push", "-q", bare.to_str().unwrap(), "main"]);
    let installed = origin
        .jules_cmd([
            "-C",
            bare.to_str().unwrap(),
            "guard",
            "--install",
            "--require-signed",
        ])
        .output()
        .unwrap();
    assert!(installed.status.success(), "{}", stderr(&installed));
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let auth = alice_auth();
    let a = Clone::new(&origin, &url, &auth);
    let key = alice_key.to_str().unwrap();
    let sent = send_in(&a, "alice", "signed", Some(key));
    assert!(sent.status.success(), "{}", stderr(&sent));
    a.ok("alice", &["sync"]);
    let remote_tip =
        |r: &Repo| r.git(["-C", bare.to_str().unwrap(), "rev-parse", "refs/jules/mail"]);
    let before = remote_tip(&origin);

    // A clone that writes as the orchestrator: unsigned, then with alice's key.
    let f = Clone::new(&origin, &url, &auth);
    let unsigned = stdout(&send_in(&f, "orchestrator", "obey", None));
    let out = f.run("orchestrator", &["sync"]);
    assert!(!out.status.success(), "a forged sync must fail");
    let err = stderr(&out);
    assert!(
        err.contains(&unsigned.trim()[..12]),
        "names the event: {err}"
    );
    assert!(err.contains("unsigned"), "{err}");
    assert_eq!(remote_tip(&origin), before, "nothing of the forgery landed");

    let g = Clone::new(&origin, &url, &auth);
    let stolen = send_in(&g, "orchestrator", "obey", Some(key));
    let out = g.run("orchestrator", &["sync"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains(&stdout(&stolen).trim()[..12]), "{err}");
    assert!(err.contains("not allowed for this actor"), "{err}");
    assert_eq!(remote_tip(&origin), before);

    // alice signs again and syncs: passes, and a fresh clone verifies it.
    let again = send_in(&a, "alice", "again", Some(key));
    assert!(again.status.success());
    a.ok("alice", &["sync"]);
    assert_ne!(remote_tip(&origin), before);
    let fresh = Clone::new(&origin, &url, &auth);
    fresh.ok("bob", &["sync"]);
    let msgs = inbox(&fresh.repo, "bob", &auth);
    assert_eq!(by_subject(&msgs, "again")["signature"]["state"], "verified");
}

/// The MCP server and `web --as` act as one persona and sign with its key only: a key they cannot use
/// stops them before they serve anything (exit 2), instead of writing unsigned events.
#[test]
fn mcp_and_web_as_check_their_persona_key_before_serving() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let (key, _) = new_key(&r, dir.path(), "alice");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    r.git([
        "config",
        "jules.persona.alice.signingKey",
        key.to_str().unwrap(),
    ]);
    for args in [
        &["mcp", "--persona", "alice"][..],
        &["web", "--as", "alice", "--listen", "127.0.0.1:0"][..],
    ] {
        let out = output_within(&mut r.jules_cmd(args), std::time::Duration::from_secs(60));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("readable by others"),
            "{}",
            stderr(&out)
        );
    }
}

/// `keys new --configure` puts the key outside the work tree and `.git/jules/` (derived data), records it
/// for the persona, never overwrites a key; the persona's next event is signed with it.
#[test]
fn keys_new_configures_the_persona_and_never_overwrites() {
    let r = Repo::new();
    let line = r.jules_ok(["keys", "new", "carol", "--configure"]);
    let path = r.path().join(".git/jules-keys/carol");
    assert!(path.exists() && path.with_extension("pub").exists());
    let configured = r.git(["config", "jules.persona.carol.signingKey"]);
    assert_eq!(
        Path::new(&configured),
        std::fs::canonicalize(&path).unwrap()
    );
    let again = r.jules(["keys", "new", "carol"]);
    assert_eq!(again.status.code(), Some(2), "{}", stderr(&again));
    assert!(
        stderr(&again).contains("not overwriting"),
        "{}",
        stderr(&again)
    );
    trust(&r, &[line.trim()]);
    r.jules_ok(["keys", "check", "carol"]);
    let id = r.send_mail("carol", "bob", "configured", "x", &[]);
    let msgs = inbox(&r, "bob", &[]);
    assert_eq!(
        by_subject(&msgs, "configured")["signature"]["persona"],
        "carol"
    );
    assert!(r
        .git(["cat-file", "commit", &commit_of_message(&r, &id)])
        .contains("\nJules-Signature: "));
}

/// Under requireSigned the search finds no unverified message, with or without a persona.
#[test]
fn search_under_require_signed_finds_only_verified_mail() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let (key, line) = new_key(&r, dir.path(), "alice");
    trust(&r, &[&line]);
    send_with_key(&r, Some(&key), "alice", "bob", "zebra signed");
    send_with_key(&r, None, "mallory", "bob", "zebra forged");
    let subjects = |args: &[&str]| {
        let out = r.jules_ok(args);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut s: Vec<String> = doc["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["subject"].as_str().unwrap().to_owned())
            .collect();
        s.sort();
        s
    };
    let all = ["mail", "search", "zebra", "--json"];
    let bob = ["mail", "search", "zebra", "--persona", "bob", "--json"];
    assert_eq!(subjects(&all).len(), 2);
    r.git(["config", "jules.requireSigned", "true"]);
    assert_eq!(subjects(&all), ["zebra signed"]);
    assert_eq!(subjects(&bob), ["zebra signed"]);
}

/// The raw text of the note on `commit` in `notes_ref` (a `refs/notes/...` name).
fn note_text(r: &Repo, notes_ref: &str, commit: &str) -> String {
    let blob = r.git(["notes", "--ref", notes_ref, "list", commit]);
    stdout(&r.git_output(["cat-file", "blob", &blob]))
}

/// A fresh clone of `bare` that fetched the logs and notes, with `jules.requireSigned` when `require`.
fn fresh(origin: &Repo, bare: &Repo, require: bool) -> Repo {
    let c = origin.clone_of(bare.path());
    c.jules_ok(["init"]);
    c.git(["fetch", "-q", "origin"]);
    if require {
        c.git(["config", "jules.requireSigned", "true"]);
    }
    c
}

/// `log stats mail --json` and its stderr.
fn stats_of(r: &Repo, full: bool) -> (serde_json::Value, String) {
    let mut args = vec!["--json", "log", "stats", "mail"];
    if full {
        args.insert(0, "--full");
    }
    let out = r.jules(args);
    assert!(out.status.success(), "{}", stderr(&out));
    (serde_json::from_str(&stdout(&out)).unwrap(), stderr(&out))
}

const PASSED_OVER: &str = "not used under jules.requireSigned";

/// Checkpoints under `jules.requireSigned` (issue 28): a fresh clone uses a checkpoint only when its
/// manifest is signed by a key the trust roots allow for checkpoints and folds the events verified under
/// the same trust file; an unsigned checkpoint, one signed by a persona's key not allowed for checkpoints
/// and one edited after signing are passed over (the reader replays and says so once); without
/// `requireSigned` nothing changes; `ssh-keygen -Y verify -n git-jules-checkpoint` accepts the signature.
#[test]
fn signed_checkpoints_count_under_require_signed_and_nothing_else_does() {
    let origin = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&origin, keys.path(), "alice");
    let (sched_key, sched_line) = new_key(&origin, keys.path(), "scheduler");
    // The scheduler's key may sign checkpoints (and nothing else); alice's line names no namespace, which
    // ssh-keygen reads as "any", but git-jules does not for checkpoints.
    let sched_line = sched_line.replacen(
        "scheduler ",
        "scheduler namespaces=\"git-jules-checkpoint\" ",
        1,
    );
    trust(&origin, &[&alice_line, &sched_line]);
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let a = fresh(&origin, &bare, false);
    for i in 0..6 {
        send_with_key(&a, Some(&alice_key), "alice", "bob", &format!("signed {i}"));
    }
    // An unsigned message before the anchor: a plain checkpoint counts it, a signed one must not.
    send_with_key(&a, None, "orchestrator", "bob", "unsigned order");
    let anchor = a.rev("refs/jules/mail").unwrap();
    let checkpoint = |key: &Path| {
        let out = a
            .jules_cmd(["--json", "log", "checkpoint", "mail"])
            .env("JULES_SIGNING_KEY", key)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let w: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        (w, stderr(&out))
    };
    // Signed by alice first: a persona key the trust roots do not allow for checkpoints.
    let (w, err) = checkpoint(&alice_key);
    assert_eq!(w["signed"]["allowed"], false, "{w}");
    assert!(err.contains("not allow key"), "{err}");
    let by_alice = note_text(&a, "jules/checkpoints-signed", &anchor);
    // Then by the scheduler, over it: the one that is synced.
    let (w, err) = checkpoint(&sched_key);
    assert_eq!(w["signed"]["allowed"], true, "{w} {err}");
    assert_eq!(w["commit"], anchor.as_str());
    let good = note_text(&a, "jules/checkpoints-signed", &anchor);
    assert!(good.starts_with("jules-checkpoint 2\n"), "{good}");
    assert_ne!(good, by_alice);
    // The tail after the anchor.
    send_with_key(&a, Some(&alice_key), "alice", "bob", "after 1");
    send_with_key(&a, Some(&alice_key), "alice", "bob", "after 2");
    a.jules_ok(["sync"]);

    // A fresh clone under requireSigned reads the signed checkpoint and the two tail commits only.
    let b = fresh(&origin, &bare, true);
    let (s, err) = stats_of(&b, false);
    assert_eq!(
        s["refresh"],
        serde_json::json!({"checkpoint": {"commits": 2}}),
        "{s} {err}"
    );
    assert!(!err.contains(PASSED_OVER), "{err}");
    // The same answers as a full replay: the unsigned message is in no inbox.
    let (full, _) = stats_of(&b, true);
    assert_eq!(s["by_actor"], full["by_actor"]);
    assert!(full["by_actor"].get("orchestrator").is_none(), "{full}");
    let listed = inbox(&b, "bob", &[]);
    assert_eq!(listed.len(), 8, "{listed:?}");
    assert!(listed.iter().all(|m| m["from"] == "alice"));

    // Without requireSigned nothing changed: the plain checkpoint is read, the unsigned mail listed.
    let plain = fresh(&origin, &bare, false);
    let (s, err) = stats_of(&plain, false);
    assert_eq!(
        s["refresh"],
        serde_json::json!({"checkpoint": {"commits": 2}}),
        "{s}"
    );
    assert!(!err.contains(PASSED_OVER), "{err}");
    assert_eq!(s["by_actor"]["orchestrator"], 1, "{s}");

    // Each checkpoint a reader under requireSigned must pass over, in a fresh clone whose signed
    // checkpoint is replaced by it (None: there is only the plain one).
    let edited = good.replacen("\nevents 7\n", "\nevents 6\n", 1);
    assert_ne!(edited, good, "{good}");
    for (manifest, why) in [
        (None, "unsigned"),
        (Some(&by_alice), "do not allow to sign checkpoints"),
        (Some(&edited), "bad signature"),
    ] {
        let c = fresh(&origin, &bare, true);
        c.git([
            "update-ref",
            "-d",
            "refs/remotes/origin/notes/jules/checkpoints-signed",
        ]);
        if let Some(text) = manifest {
            let file = c.path().join(".git/manifest");
            std::fs::write(&file, text).unwrap();
            c.git([
                "notes",
                "--ref",
                "jules/checkpoints-signed",
                "add",
                "-f",
                "-F",
                file.to_str().unwrap(),
                &anchor,
            ]);
        }
        let out = c
            .jules_cmd(["mail", "inbox", "--persona", "bob", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.matches(PASSED_OVER).count(), 1, "said once: {err}");
        assert!(err.contains(why), "{why}: {err}");
        assert!(err.contains(&anchor[..12]), "{err}");
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        assert_eq!(doc["messages"].as_array().unwrap().len(), 8, "{doc}");
        // The replay is cached: the next read is warm and says nothing.
        let again = c
            .jules_cmd(["mail", "inbox", "--persona", "bob"])
            .output()
            .unwrap();
        assert!(!stderr(&again).contains(PASSED_OVER), "{}", stderr(&again));
        let (s, _) = stats_of(&c, false);
        assert!(s["refresh"].get("rebuilt").is_some(), "{why}: {s}");
        // fsck names a bad or foreign signature as a problem, and reports every signature state.
        let fsck = c.jules(["--json", "log", "fsck", "mail", "--checkpoints"]);
        let doc: serde_json::Value = serde_json::from_str(&stdout(&fsck)).unwrap();
        let report = &doc["checkpoints"][0];
        let states: Vec<&str> = report["signatures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["signature"]["state"].as_str().unwrap())
            .collect();
        match manifest {
            None => assert_eq!(states, ["unsigned"], "{doc}"),
            Some(_) => {
                assert!(report["problems"].to_string().contains(why), "{why}: {doc}");
                assert!(
                    states.contains(&"key_not_allowed") || states.contains(&"bad_signature"),
                    "{doc}"
                );
            }
        }
    }

    // fsck in the writer (no requireSigned): the signed checkpoint verifies, is usable, matches its fold.
    let fsck = a.jules_ok(["--json", "log", "fsck", "mail", "--checkpoints"]);
    let doc: serde_json::Value = serde_json::from_str(&fsck).unwrap();
    let report = &doc["checkpoints"][0];
    assert_eq!(report["problems"], serde_json::json!([]), "{doc}");
    let signed = report["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["signed"] == true)
        .unwrap_or_else(|| panic!("{doc}"));
    assert_eq!(signed["signature"]["state"], "verified", "{doc}");
    assert_eq!(signed["signature"]["persona"], "scheduler");
    assert_eq!(signed["usable"], true);

    // Interop: ssh-keygen verifies the manifest signature over every line before the signature line.
    let (body, sig_line) = good.trim_end_matches('\n').rsplit_once('\n').unwrap();
    let body = format!("{body}\n");
    let sig = sig_line.strip_prefix("signature ").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ok = ssh_keygen_verify(
        dir.path(),
        "git-jules-checkpoint",
        "scheduler",
        &sched_line,
        sig,
        &body,
    );
    assert!(ok.status.success(), "{}{}", stdout(&ok), stderr(&ok));
    assert!(
        stdout(&ok).contains("Good \"git-jules-checkpoint\" signature for scheduler"),
        "{}",
        stdout(&ok)
    );
    let bad = ssh_keygen_verify(
        dir.path(),
        "git-jules-checkpoint",
        "scheduler",
        &sched_line,
        sig,
        &body.replacen("events 7", "events 6", 1),
    );
    assert!(!bad.status.success(), "{}", stdout(&bad));
}

/// Warm reads remember the trust file's blob id per trust-ref commit and the states of listed messages per
/// mail view: a reviewed change of the trust file, or new mail, counts at the next read all the same.
#[test]
fn warm_listings_follow_the_trust_file_and_the_log() {
    let r = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&r, keys.path(), "alice");
    let (_, bob_line) = new_key(&r, keys.path(), "bob");
    trust(&r, &[&alice_line, &bob_line]);
    let first = send_with_key(&r, Some(&alice_key), "alice", "bob", "first");
    let state_of = |id: &str| {
        let msgs = inbox(&r, "bob", &[]);
        msgs.iter().find(|m| m["id"] == id).unwrap()["signature"]["state"].clone()
    };
    assert_eq!(state_of(&first), "verified");
    assert_eq!(state_of(&first), "verified", "warm");
    // alice's key removed on main: revoked at the next read.
    trust(&r, &[&bob_line]);
    assert_eq!(state_of(&first), "key_not_allowed");
    // New mail moves the view: both messages judged under the current file.
    let second = send_with_key(&r, Some(&alice_key), "alice", "bob", "second");
    assert_eq!(state_of(&second), "key_not_allowed");
    trust(&r, &[&alice_line, &bob_line]);
    assert_eq!(state_of(&first), "verified");
    assert_eq!(state_of(&second), "verified");
    // The trust ref moved without touching the file: the same blob, the same answers.
    r.write("other", "x");
    r.commit_all("unrelated");
    assert_eq!(state_of(&second), "verified");
}

/// Issue 40: an unsigned message from a persona the trust roots list a key for is named
/// `unsigned_with_key` ("likely forged") in every mail read (inbox, sent, thread; JSON and human), apart from
/// legacy unsigned mail written before the key's `valid-after`. Before, `mail sent`'s human listing marked
/// nothing at all, and such mail read as plain `unsigned`.
#[test]
fn unsigned_mail_from_a_persona_with_a_key_is_named_likely_forged_in_every_read() {
    let r = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&r, keys.path(), "alice");
    let (_, carol_line) = new_key(&r, keys.path(), "carol");
    // carol's key counts from 2099: her unsigned mail now is legacy.
    let carol_later = carol_line.replacen("carol ", "carol valid-after=\"20990101\" ", 1);
    trust(&r, &[&alice_line, &carol_later]);
    let good = send_with_key(&r, Some(&alice_key), "alice", "bob", "signed");
    let forged = send_with_key(&r, None, "alice", "bob", "forged");
    let legacy = send_with_key(&r, None, "carol", "bob", "legacy");
    let reply = r.jules_ok(["mail", "reply", &good, "--from", "alice", "--body", "again"]);
    let reply = reply.trim();

    let msgs = inbox(&r, "bob", &[]);
    assert_eq!(
        by_subject(&msgs, "signed")["signature"]["state"],
        "verified"
    );
    let f = by_subject(&msgs, "forged");
    assert_eq!(f["signature"]["state"], "unsigned_with_key", "{f}");
    assert_eq!(f["signature"]["persona"], "alice", "{f}");
    assert_eq!(
        by_subject(&msgs, "legacy")["signature"]["state"],
        "unsigned"
    );
    let human = r.jules_ok(["mail", "inbox", "--persona", "bob"]);
    let line = |text: &str, id: &str| -> String {
        text.lines()
            .find(|l| l.contains(&id[..7]))
            .unwrap_or_else(|| panic!("{id} not in {text}"))
            .to_owned()
    };
    assert!(line(&human, &forged).contains("likely forged"), "{human}");
    assert!(!line(&human, &legacy).contains("likely forged"), "{human}");
    assert!(
        line(&human, &legacy).contains("NOT VERIFIED: unsigned"),
        "{human}"
    );

    // sent: JSON and human.
    let out = r.jules_ok(["--json", "mail", "sent", "--persona", "alice"]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let sent = doc["messages"].as_array().unwrap();
    assert_eq!(
        by_subject(sent, "forged")["signature"]["state"],
        "unsigned_with_key"
    );
    let human = r.jules_ok(["mail", "sent", "--persona", "alice"]);
    assert!(line(&human, &forged).contains("NOT VERIFIED"), "{human}");
    assert!(line(&human, &forged).contains("likely forged"), "{human}");
    assert!(!line(&human, &good).contains("NOT VERIFIED"), "{human}");

    // thread: the unsigned reply (no key given) is marked, the signed start is not.
    let out = r.jules_ok(["--json", "mail", "thread", &good]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let states: Vec<&str> = doc["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["signature"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["verified", "unsigned_with_key"], "{doc}");
    let human = r.jules_ok(["mail", "thread", reply]);
    assert!(human.contains("likely forged"), "{human}");

    // Under requireSigned none of the unverified mail is listed, in either form.
    r.git(["config", "jules.requireSigned", "true"]);
    let human = r.jules_ok(["mail", "sent", "--persona", "alice"]);
    assert!(human.contains(&good[..7]), "{human}");
    assert!(!human.contains(&forged[..7]), "{human}");
    let out = r.jules_ok(["--json", "mail", "thread", &good]);
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["messages"].as_array().unwrap().len(), 1, "{doc}");
}

/// Issue 42 (one way into mail): `mail wait`, the watchdog's read of the unread mail, is `mail inbox
/// --unread` through the same use case, so forged mail is marked there too. Before, it read the view
/// its own way: its listing carried no signatures (`"signature": null` in `--json`, no `NOT VERIFIED`
/// mark on the line) where the inbox named the same message `unsigned_with_key` ("likely forged").
#[test]
fn mail_wait_marks_forged_mail_as_the_inbox_does() {
    let r = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&r, keys.path(), "alice");
    trust(&r, &[&alice_line]);
    let good = send_with_key(&r, Some(&alice_key), "alice", "bob", "signed");
    let forged = send_with_key(&r, None, "alice", "bob", "forged");

    let wait = |json: bool| {
        let mut args = vec!["mail", "wait", "--persona", "bob", "--timeout", "0"];
        if json {
            args.insert(0, "--json");
        }
        r.jules_ok(args)
    };
    let doc: serde_json::Value = serde_json::from_str(&wait(true)).unwrap();
    let waited = doc["messages"].as_array().unwrap().clone();
    assert_eq!(
        by_subject(&waited, "signed")["signature"]["state"],
        "verified"
    );
    assert_eq!(
        by_subject(&waited, "forged")["signature"]["state"],
        "unsigned_with_key",
        "{doc}"
    );
    // The same document as the inbox's unread listing.
    let inbox: serde_json::Value = serde_json::from_str(&r.jules_ok([
        "--json",
        "mail",
        "inbox",
        "--persona",
        "bob",
        "--unread",
    ]))
    .unwrap();
    assert_eq!(doc, inbox);

    let human = wait(false);
    let line = |id: &str| -> String {
        human
            .lines()
            .find(|l| l.contains(&id[..7]))
            .unwrap_or_else(|| panic!("{id} not in {human}"))
            .to_owned()
    };
    assert!(line(&forged).contains("likely forged"), "{human}");
    assert!(!line(&good).contains("NOT VERIFIED"), "{human}");
}

/// Issue 40: `guard --require-signed` refuses an unverified update in every namespace the project pushes:
/// each log (`mail`, `state`, `lease`, `exchange`, `weave`), a writer ref of the sync layout, and a series
/// version (`refs/jules/series/…`, refused on main, where the guard only parsed `series.json`). The same
/// pushes signed by the persona's key pass, so the refusal is the signature's.
#[test]
fn the_guard_refuses_an_unverified_update_in_every_pushed_namespace() {
    let origin = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (key, line) = new_key(&origin, keys.path(), "orchestrator");
    trust(&origin, &[&line]);
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let installed = bare.jules(["guard", "--install", "--require-signed"]);
    assert!(installed.status.success(), "{}", stderr(&installed));
    let c = origin.clone_of(bare.path());
    let append = |log: &str, signed: bool| {
        let mut cmd = c.jules_cmd([
            "log",
            "append",
            log,
            "--kind",
            "test.note",
            "--actor",
            "orchestrator",
        ]);
        if signed {
            cmd.env("JULES_SIGNING_KEY", &key);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let push =
        |local: &str, remote: &str| c.git_output(["push", "origin", &format!("{local}:{remote}")]);
    for log in ["mail", "state", "lease", "exchange", "weave"] {
        let name = format!("refs/jules/{log}");
        append(log, false);
        let out = push(&name, &name);
        assert!(!out.status.success(), "{log}: an unsigned event passed");
        let err = stderr(&out);
        assert!(
            err.contains(&name) && err.contains("not verified"),
            "{log}: {err}"
        );
        assert!(err.contains("likely forged"), "{log}: {err}");
        assert_eq!(bare.rev(&name), None, "{log}");
        // The writer ref of the sync layout is a log too.
        let writer = format!("refs/jules/writers/{log}/0123456789abcdef");
        let out = push(&name, &writer);
        assert!(!out.status.success(), "{writer}: an unsigned event passed");
        assert!(stderr(&out).contains("not verified"), "{}", stderr(&out));
        // Signed, on a fresh history: passes.
        c.git(["update-ref", "-d", &name]);
        append(log, true);
        let out = push(&name, &name);
        assert!(out.status.success(), "{log}: {}", stderr(&out));
    }
    // A series version: unsigned refused, signed passes.
    c.jules_ok(["series", "start", "feat"]);
    c.write("x", "x\n");
    c.jules_ok(["series", "commit", "--summary", "Add x", "--rationale", "r"]);
    c.jules_ok(["series", "version", "--persona", "orchestrator"]);
    let series = "refs/jules/series/orchestrator/feat";
    let out = push(series, series);
    assert!(!out.status.success(), "an unsigned version passed");
    assert!(stderr(&out).contains("not verified"), "{}", stderr(&out));
    assert_eq!(bare.rev(series), None);
    // A signed version on top of the unsigned one still carries it: refused; signed from scratch passes.
    c.git(["update-ref", "-d", series]);
    c.write("x", "x2\n");
    c.jules_ok(["series", "reroll", "1"]);
    let out = c
        .jules_cmd(["series", "version", "--persona", "orchestrator"])
        .env("JULES_SIGNING_KEY", &key)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = push(series, series);
    assert!(out.status.success(), "{}", stderr(&out));
    // A signed version of another series is no version of this ref.
    let out = push(series, "refs/jules/series/orchestrator/other");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("not of this ref's series"),
        "{}",
        stderr(&out)
    );
}

/// Issue 40: a lease acquired in a persona's name without its key is marked in `lease list` (JSON
/// `signature`, human "NOT VERIFIED … likely forged"), in the MCP-shared document and in the fleet
/// (`/api/fleet` and its page); a signed acquire is `verified`. Before, leases carried no signature at all.
#[test]
fn leases_acquired_without_the_personas_key_are_marked_in_lease_list_and_the_fleet() {
    let r = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&r, keys.path(), "alice");
    trust(&r, &[&alice_line]);
    let acquire = |path: &str, key: Option<&Path>| -> String {
        let mut cmd = r.jules_cmd(["--json", "lease", "acquire", "--persona", "alice", path]);
        if let Some(k) = key {
            cmd.env("JULES_SIGNING_KEY", k);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        v["lease"]["id"].as_str().unwrap().to_owned()
    };
    let signed = acquire("src/a/", Some(&alice_key));
    let forged = acquire("src/b/", None);
    let doc: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "lease", "list"])).unwrap();
    let state_of = |leases: &serde_json::Value, id: &str| {
        leases
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["id"] == id)
            .unwrap_or_else(|| panic!("{id} not in {leases}"))["signature"]["state"]
            .clone()
    };
    assert_eq!(state_of(&doc["leases"], &signed), "verified", "{doc}");
    assert_eq!(
        state_of(&doc["leases"], &forged),
        "unsigned_with_key",
        "{doc}"
    );
    let human = r.jules_ok(["lease", "list"]);
    let line = |p: &str| human.lines().find(|l| l.contains(p)).unwrap().to_owned();
    assert!(line("src/b/").contains("likely forged"), "{human}");
    assert!(!line("src/a/").contains("NOT VERIFIED"), "{human}");

    let server = crate::web::Server::start(&r, &[]);
    let fleet: serde_json::Value = serde_json::from_str(&server.get("/api/fleet").text()).unwrap();
    let alice = fleet["personas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["persona"] == "alice")
        .unwrap()
        .clone();
    assert_eq!(
        state_of(&alice["leases"], &forged),
        "unsigned_with_key",
        "{alice}"
    );
    assert_eq!(state_of(&alice["leases"], &signed), "verified", "{alice}");
    let page = server.get("/").text();
    assert!(page.contains("not verified"), "{page}");

    // Under requireSigned the forged acquire holds nothing: it is not listed.
    r.git(["config", "jules.requireSigned", "true"]);
    let doc: serde_json::Value =
        serde_json::from_str(&r.jules_ok(["--json", "lease", "list"])).unwrap();
    let ids: Vec<&str> = doc["leases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [signed.as_str()], "{doc}");
}

/// Issue 40: `guard --require-signed` refuses a push to `refs/notes/jules/checkpoints-signed` (or a writer
/// ref of it) whose tip brings a manifest not signed by a checkpoint key of the remote's trust roots (here a
/// persona's key, which may not sign checkpoints); one signed by the scheduler's checkpoint key passes, and
/// the earlier manifest it replaced in the notes history does not hold it back. Before, notes refs were
/// only kept append-only.
#[test]
fn the_guard_refuses_signed_checkpoints_no_checkpoint_key_signed() {
    let origin = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&origin, keys.path(), "alice");
    let (sched_key, sched_line) = new_key(&origin, keys.path(), "scheduler");
    let sched_line = sched_line.replacen(
        "scheduler ",
        "scheduler namespaces=\"git-jules-checkpoint\" ",
        1,
    );
    trust(&origin, &[&alice_line, &sched_line]);
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let installed = bare.jules(["guard", "--install", "--require-signed"]);
    assert!(installed.status.success(), "{}", stderr(&installed));
    let a = fresh(&origin, &bare, false);
    send_with_key(&a, Some(&alice_key), "alice", "bob", "signed");
    a.jules_ok(["sync"]);
    let checkpoint = |key: &Path| {
        let out = a
            .jules_cmd(["log", "checkpoint", "mail"])
            .env("JULES_SIGNING_KEY", key)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let name = "refs/notes/jules/checkpoints-signed";
    checkpoint(&alice_key);
    for target in [
        name,
        "refs/notes/jules/writers/checkpoints-signed/0123456789abcdef",
    ] {
        let out = a.git_output(["push", "origin", &format!("{name}:{target}")]);
        assert!(!out.status.success(), "{target}: alice's checkpoint passed");
        let err = stderr(&out);
        assert!(err.contains("signed checkpoint manifest"), "{err}");
        assert!(err.contains("not verified"), "{err}");
    }
    assert_eq!(bare.rev(name), None);
    checkpoint(&sched_key);
    let out = a.git_output(["push", "origin", &format!("{name}:{name}")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(bare.rev(name), a.rev(name));
}

/// docs/format.md, "Series versions", signature format 1: `ssh-keygen -Y verify -n git-jules-series` accepts
/// a version's signature over the payload rebuilt from the documented layout (ref, persona, name, number,
/// previous, committer time, series.json and cover.md bytes), and refuses it once the payload names another
/// series (no replay onto another ref) or another previous version.
#[test]
fn ssh_keygen_verifies_series_version_signatures_over_the_documented_payload() {
    let r = Repo::new();
    let dir = tempfile::tempdir().unwrap();
    let (key, line) = new_key(&r, dir.path(), "alice");
    r.jules_ok(["series", "start", "feat"]);
    r.write("x", "x\n");
    r.jules_ok(["series", "commit", "--summary", "Add x", "--rationale", "r"]);
    let out = r
        .jules_cmd(["series", "version", "--persona", "alice"])
        .env("JULES_SIGNING_KEY", &key)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let name = "refs/jules/series/alice/feat";
    let msg = r.git(["cat-file", "commit", name]);
    let sig = msg
        .lines()
        .find_map(|l| l.strip_prefix("Jules-Signature: "))
        .expect("a signature trailer")
        .to_owned();
    let record = stdout(&r.git_output(["cat-file", "blob", &format!("{name}:series.json")]));
    let cover = stdout(&r.git_output(["cat-file", "blob", &format!("{name}:cover.md")]));
    let time = r.git(["log", "-1", "--format=%ct", name]);
    let payload = |series_ref: &str, name: &str, previous: &str| {
        format!(
            "git-jules-series-signature 1\nref {series_ref}\npersona alice\nname {name}\nversion 1\n\
             previous {previous}\ntime {time}\nrecord {}\n{record}\ncover {}\n{cover}",
            record.len(),
            cover.len()
        )
    };
    let verify =
        |p: &str| ssh_keygen_verify(dir.path(), "git-jules-series", "alice", &line, &sig, p);
    let ok = verify(&payload(name, "feat", "none"));
    assert!(ok.status.success(), "{}{}", stdout(&ok), stderr(&ok));
    let other = verify(&payload("refs/jules/series/alice/other", "other", "none"));
    assert!(!other.status.success(), "replayed onto another series");
    let moved = verify(&payload(name, "feat", &"a".repeat(40)));
    assert!(!moved.status.success(), "replayed onto another chain");
}
