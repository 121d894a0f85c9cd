//! Nothing wedges a clone (issue 40, finding 5): an event the remote refuses (its guard requires signed
//! events) is held back by `sync`, which publishes everything else and names it; `log held-back drop` and
//! `log held-back resign` then settle it, keeping a backup.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{stderr, stdout, Repo};

/// A guarded (`--require-signed`) bare remote whose `main` trusts alice, and a clone of it where alice's key
/// is configured (`jules.persona.alice.signingKey`): the typo persona `nobodyy` has no key.
struct Fleet {
    origin: Repo,
    bare: Repo,
    keys: tempfile::TempDir,
    alice_line: String,
}

impl Fleet {
    fn new() -> Fleet {
        let origin = Repo::new();
        let keys = tempfile::tempdir().unwrap();
        let alice_line = new_key(&origin, keys.path(), "alice");
        origin.write(".jules/allowed_signers", &format!("{alice_line}\n"));
        origin.commit_all("trust roots");
        let bare = origin.bare_sibling();
        origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
        let installed = bare.jules(["guard", "--install", "--require-signed"]);
        assert!(installed.status.success(), "{}", stderr(&installed));
        // The installed shim, wrapped so that every run of the guard and its verdict are on record.
        let log = bare.path().join("hook.log");
        std::fs::write(
            bare.path().join("hooks/pre-receive"),
            format!(
                "#!/bin/sh\ngit jules guard && echo passed >> '{0}' && exit 0\necho refused >> '{0}'\nexit 1\n",
                log.display()
            ),
        )
        .unwrap();
        Fleet {
            origin,
            bare,
            keys,
            alice_line,
        }
    }

    /// What the remote's guard decided, one word per push it saw.
    fn verdicts(&self) -> Vec<String> {
        std::fs::read_to_string(self.bare.path().join("hook.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn key(&self, persona: &str) -> PathBuf {
        self.keys.path().join(persona)
    }

    /// A clone with `persona`'s key configured for each of `personas`.
    fn clone(&self, personas: &[&str]) -> Repo {
        let c = self.origin.clone_of(self.bare.path());
        for p in personas {
            c.git([
                "config",
                &format!("jules.persona.{p}.signingKey"),
                self.key(p).to_str().unwrap(),
            ]);
        }
        c
    }

    /// The subjects of bob's inbox in a fresh clone of the remote, with each message's signature state.
    fn bobs_view(&self) -> Vec<(String, String)> {
        let b = self.origin.clone_of(self.bare.path());
        b.jules_ok(["sync"]);
        let doc: Value =
            serde_json::from_str(&b.jules_ok(["--json", "mail", "inbox", "--persona", "bob"]))
                .unwrap();
        let mut out: Vec<(String, String)> = doc["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| {
                (
                    m["subject"].as_str().unwrap().to_owned(),
                    m["signature"]["state"].as_str().unwrap_or("").to_owned(),
                )
            })
            .collect();
        out.sort();
        out
    }
}

/// `keys new PERSONA --out DIR/PERSONA`: its allowed_signers line.
fn new_key(r: &Repo, dir: &Path, persona: &str) -> String {
    let path = dir.join(persona);
    r.jules_ok(["keys", "new", persona, "--out", path.to_str().unwrap()])
        .trim()
        .to_owned()
}

fn send(r: &Repo, from: &str, subject: &str) {
    r.jules_ok([
        "mail",
        "send",
        "--from",
        from,
        "--to",
        "bob",
        "--subject",
        subject,
        "--body",
        "x",
    ]);
}

/// The id of the one event of `log` whose actor is `actor`.
fn event_of(r: &Repo, log: &str, actor: &str) -> String {
    let doc: Value = serde_json::from_str(&r.jules_ok(["--json", "log", "show", log])).unwrap();
    let ids: Vec<String> = doc["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"]["actor"] == actor)
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{doc}");
    ids[0].clone()
}

/// The bug: one unsigned event (a lease acquired as a mistyped persona, which has no key) made every later
/// `sync` to a signed-only remote fail, signed mail included, and the only way out lost the clone's events.
/// Now the sync pushes the signed mail before and after it, exits 1 and names the held-back event (human and
/// `--json`); `log held-back drop` removes it, keeping it under a backup ref, and the next sync is clean;
/// another clone sees every signed message.
#[test]
fn an_event_the_remote_refuses_is_held_back_and_drop_unwedges_the_clone() {
    let fleet = Fleet::new();
    let a = fleet.clone(&["alice"]);
    send(&a, "alice", "before");
    a.jules_ok(["lease", "acquire", "src/", "--persona", "nobodyy"]);
    send(&a, "alice", "after");
    let typo = event_of(&a, "lease", "nobodyy");

    let out = a.jules(["--json", "sync"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        stdout(&out),
        stderr(&out)
    );
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let held = report["held_back"].as_array().unwrap();
    assert_eq!(held.len(), 1, "{report}");
    assert_eq!(held[0]["log"], "refs/jules/lease");
    assert_eq!(held[0]["id"], typo.as_str());
    assert_eq!(held[0]["actor"], "nobodyy");
    assert_eq!(held[0]["kind"], "lease.acquire");
    assert!(
        held[0]["reason"].as_str().unwrap().contains("unsigned"),
        "{report}"
    );
    // The lease log held nothing else: it was not published, and the report does not say it was.
    let lease = report["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "refs/jules/lease")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(lease["published"], "nothing", "{report}");
    assert_eq!(lease["action"], "up-to-date", "{report}");
    // The remote refused the first push (nothing told the clone beforehand), then took the rest.
    assert_eq!(fleet.verdicts(), ["refused", "passed"]);
    // Everything else reached the remote, verified.
    assert_eq!(
        fleet.bobs_view(),
        [
            ("after".to_owned(), "verified".to_owned()),
            ("before".to_owned(), "verified".to_owned())
        ]
    );

    // The human report names it, and says how to settle it; a second sync still holds it back and fails.
    let out = a.jules(["sync"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&typo[..12]), "{err}");
    assert!(err.contains("nobodyy"), "{err}");
    assert!(err.contains("log held-back drop"), "{err}");
    let listed: Value = serde_json::from_str(&a.jules_ok(["--json", "log", "held-back"])).unwrap();
    assert_eq!(listed["items"][0]["id"], typo.as_str(), "{listed}");

    // New signed mail still leaves while the lease is held back.
    send(&a, "alice", "meanwhile");
    let out = a.jules(["sync"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(fleet
        .bobs_view()
        .iter()
        .any(|(s, state)| s == "meanwhile" && state == "verified"));

    // Drop it: a backup keeps it, the local log no longer has it, sync is clean.
    let dropped = a.jules_ok(["log", "held-back", "drop", "--all"]);
    let backup = dropped
        .split_whitespace()
        .find(|w| w.starts_with("refs/jules/backup/log/lease/"))
        .unwrap_or_else(|| panic!("no backup ref named: {dropped}"))
        .to_owned();
    let kept = a.git(["log", "--format=%B", &backup]);
    assert!(kept.contains(&format!("Jules-Event-Id: {typo}")), "{kept}");
    // It was the log's only event, and the remote has no lease log: the local log is gone with it.
    assert_eq!(a.rev("refs/jules/lease"), None);
    let out = a.jules(["sync"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("held back"), "{}", stderr(&out));
    send(&a, "alice", "later");
    a.jules_ok(["sync"]);
    assert_eq!(
        fleet.bobs_view(),
        [
            ("after".to_owned(), "verified".to_owned()),
            ("before".to_owned(), "verified".to_owned()),
            ("later".to_owned(), "verified".to_owned()),
            ("meanwhile".to_owned(), "verified".to_owned()),
        ]
    );
    // The dropped event never reached the remote.
    let remote_lease = fleet
        .bare
        .git_output(["log", "--format=%B", "refs/jules/lease"]);
    assert!(!stdout(&remote_lease).contains(&typo));
}

/// Under `jules.requireSigned` the clone checks its own events before pushing, with the rule the guard
/// applies: the mail sent as a persona with no key yet is held back without a refused push (the remote's
/// hook never sees it), and once the persona has a key the trust roots allow, `log held-back resign`
/// signs it again (same event id: the signature is outside the hashed event) and the next sync publishes it
/// verified.
#[test]
fn a_held_back_event_is_resigned_once_its_persona_has_a_key() {
    let fleet = Fleet::new();
    let a = fleet.clone(&["alice"]);
    a.git(["config", "jules.requireSigned", "true"]);
    send(&a, "alice", "first");
    send(&a, "carol", "from carol");
    send(&a, "alice", "second");
    let carols = event_of(&a, "mail", "carol");
    let out = a.jules(["--json", "sync"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["held_back"][0]["id"], carols.as_str(), "{report}");
    assert_eq!(report["held_back"][0]["actor"], "carol");
    // The clone checked before pushing: the guard saw one push, and passed it.
    assert_eq!(fleet.verdicts(), ["passed"]);
    assert_eq!(
        fleet.bobs_view(),
        [
            ("first".to_owned(), "verified".to_owned()),
            ("second".to_owned(), "verified".to_owned())
        ]
    );

    // Another clone publishes meanwhile, and this one writes more: its new mail is published on top of the
    // remote's union (which holds the copies of its first sync and the other clone's mail), carol's still not.
    let b = fleet.clone(&["alice"]);
    send(&b, "alice", "from b");
    b.jules_ok(["sync"]);
    send(&a, "alice", "third");
    let out = a.jules(["sync"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(&carols[..12]), "{}", stderr(&out));
    assert_eq!(
        fleet.bobs_view(),
        [
            ("first".to_owned(), "verified".to_owned()),
            ("from b".to_owned(), "verified".to_owned()),
            ("second".to_owned(), "verified".to_owned()),
            ("third".to_owned(), "verified".to_owned())
        ]
    );

    // Without a key for carol, re-signing refuses and changes nothing.
    let before = a.rev("refs/jules/mail");
    let out = a.jules(["log", "held-back", "resign", "--all"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("carol has no signing key"),
        "{}",
        stderr(&out)
    );
    assert_eq!(a.rev("refs/jules/mail"), before);

    // carol gets a key the trust roots allow (a reviewed commit on main), and re-signs.
    let carol_line = new_key(&fleet.origin, fleet.keys.path(), "carol");
    fleet.origin.write(
        ".jules/allowed_signers",
        &format!("{}\n{carol_line}\n", fleet.alice_line),
    );
    fleet.origin.commit_all("trust carol");
    fleet
        .origin
        .git(["push", "-q", fleet.bare.path().to_str().unwrap(), "main"]);
    a.git(["pull", "-q", "--ff-only", "origin", "main"]);
    a.git([
        "config",
        "jules.persona.carol.signingKey",
        fleet.key("carol").to_str().unwrap(),
    ]);
    let resigned = a.jules_ok(["log", "held-back", "resign", "--all"]);
    assert!(
        resigned.contains("refs/jules/backup/log/mail/"),
        "{resigned}"
    );
    assert_eq!(event_of(&a, "mail", "carol"), carols, "the id is unchanged");
    let out = a.jules(["sync"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        fleet.bobs_view(),
        [
            ("first".to_owned(), "verified".to_owned()),
            ("from b".to_owned(), "verified".to_owned()),
            ("from carol".to_owned(), "verified".to_owned()),
            ("second".to_owned(), "verified".to_owned()),
            ("third".to_owned(), "verified".to_owned())
        ]
    );
    // Each message once in this clone's own view too: the copies sync published carry the same ids.
    let doc: Value =
        serde_json::from_str(&a.jules_ok(["--json", "mail", "inbox", "--persona", "bob"])).unwrap();
    assert_eq!(doc["messages"].as_array().unwrap().len(), 5, "{doc}");
}
