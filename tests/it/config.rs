//! Configuration (issue 40, findings 3 and 7): every `jules.*` key is read strictly (a bad value exits 2
//! naming the key and the value, as git does), `git -c` and `GIT_CONFIG_COUNT` reach every key, the trust
//! ref fails loudly and defaults to the base branch as the remote has it, and durations are bounded.

use std::path::{Path, PathBuf};

use crate::harness::{stderr, stdout, Repo};

/// `git jules keys new PERSONA --out DIR/PERSONA`: the key's path and its allowed_signers line.
fn new_key(r: &Repo, dir: &Path, persona: &str) -> (PathBuf, String) {
    let path = dir.join(persona);
    let line = r.jules_ok(["keys", "new", persona, "--out", path.to_str().unwrap()]);
    (path, line.trim().to_owned())
}

fn trust_on_main(r: &Repo, line: &str) {
    r.write(".jules/allowed_signers", &format!("{line}\n"));
    r.commit_all("trust roots");
}

/// `git ARGS` (so `git -c …` reaches the binary as git passes it: `GIT_CONFIG_PARAMETERS`).
fn git_jules(r: &Repo, args: &[&str]) -> std::process::Output {
    r.git_output(args)
}

fn json_of(o: &std::process::Output) -> serde_json::Value {
    assert!(
        o.status.success(),
        "exit {:?}: {}",
        o.status.code(),
        stderr(o)
    );
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn subjects(inbox: &serde_json::Value) -> Vec<String> {
    inbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["subject"].as_str().unwrap().to_owned())
        .collect()
}

/// Every boolean, duration, integer and path key of the table, with a value git's `--type` would refuse.
/// Bug: each was read leniently (a bad boolean as its default, a bad duration or path ignored), so
/// `jules.requireSigned=maybe` turned signature checks off without a word.
const BAD_VALUES: &[(&str, &str)] = &[
    ("jules.requireSigned", "maybe"),
    ("jules.strictPersonas", "perhaps"),
    ("jules.fullReplay", "sometimes"),
    ("jules.lease.remind", "often"),
    ("jules.lease.releaseOnFinalize", "2x"),
    ("jules.lease.releaseOnDone", "nope"),
    ("jules.lease.ttl", "2 hours"),
    ("jules.lease.remindBefore", "soon"),
    ("jules.lease.maxTtl", "forever"),
    ("jules.sync.minPushInterval", "10x"),
    ("jules.maxRetries", "three"),
    ("jules.verify.jobs", "many"),
    ("jules.verify.worktreeDir", "~nosuchuser-jules/wt"),
    ("jules.signingKey", "~nosuchuser-jules/key"),
    ("jules.sessionSigningKey", "~nosuchuser-jules/key"),
    ("jules.persona.alice.signingKey", "~nosuchuser-jules/key"),
    ("jules.lease.preCommit", "sometimes"),
];

fn assert_refused(o: &std::process::Output, key: &str, value: &str, how: &str) {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{key}={value} ({how}) must exit 2: {err}{}",
        stdout(o)
    );
    assert!(
        err.to_lowercase().contains(&key.to_lowercase()) && err.contains(value),
        "{key}={value} ({how}): the message names the key and the value: {err}"
    );
}

#[test]
fn a_bad_value_in_any_typed_key_exits_2_naming_the_key_and_the_value() {
    let r = Repo::new();
    for (key, value) in BAD_VALUES {
        // In the repository's configuration…
        r.git(["config", key, value]);
        let o = r.jules(["mail", "inbox", "--persona", "bob"]);
        assert_refused(&o, key, value, "git config");
        // …the MCP/web path opens the repository the same way: a use case over a workspace.
        r.git(["config", "--unset", key]);
        // …and given with `git -c`.
        let c = format!("{key}={value}");
        let o = git_jules(
            &r,
            &["-c", &c, "jules", "mail", "inbox", "--persona", "bob"],
        );
        assert_refused(&o, key, value, "git -c");
    }
    // Good values in every spelling git accepts still pass.
    for (key, value) in [
        ("jules.requireSigned", "off"),
        ("jules.lease.remind", "yes"),
        ("jules.lease.ttl", "3h"),
        ("jules.sync.minPushInterval", "90"),
        ("jules.maxRetries", "5"),
    ] {
        let c = format!("{key}={value}");
        let o = git_jules(
            &r,
            &["-c", &c, "jules", "mail", "inbox", "--persona", "bob"],
        );
        assert!(o.status.success(), "{c}: {}", stderr(&o));
    }
}

#[test]
fn library_open_refuses_a_bad_value_with_a_typed_error() {
    // What the MCP server and the web view get: the same typed error, from opening the workspace.
    let r = Repo::new();
    r.git(["config", "jules.requireSigned", "maybe"]);
    let err = match git_jules::Workspace::open(r.path()) {
        Ok(_) => panic!("a bad boolean must not open"),
        Err(e) => e,
    };
    assert_eq!(err.kind(), git_jules::kit::error::ErrorKind::Usage);
    let text = err.to_string();
    assert!(
        text.contains("jules.requireSigned") && text.contains("maybe"),
        "{text}"
    );
}

/// Bug: `git -c jules.requireSigned=true jules mail inbox` ignored the `-c` (gix does not read git's
/// `GIT_CONFIG_PARAMETERS`), so unsigned mail kept its authority.
#[test]
fn git_c_and_config_count_reach_require_signed() {
    let r = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&r, keys.path(), "alice");
    trust_on_main(&r, &alice_line);
    r.send_mail("mallory", "bob", "unsigned", "b", &[]);
    let signed = r
        .jules_cmd([
            "mail",
            "send",
            "--from",
            "alice",
            "--to",
            "bob",
            "--subject",
            "signed",
            "--body",
            "b",
        ])
        .env("JULES_SIGNING_KEY", &alice_key)
        .output()
        .unwrap();
    assert!(signed.status.success(), "{}", stderr(&signed));
    let plain = json_of(&r.jules(["mail", "inbox", "--persona", "bob", "--json"]));
    assert_eq!(subjects(&plain).len(), 2);

    let with_c = json_of(&git_jules(
        &r,
        &[
            "-c",
            "jules.requireSigned=true",
            "jules",
            "mail",
            "inbox",
            "--persona",
            "bob",
            "--json",
        ],
    ));
    assert_eq!(subjects(&with_c), ["signed"], "git -c jules.requireSigned");
    let with_count = json_of(
        &r.jules_cmd(["mail", "inbox", "--persona", "bob", "--json"])
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", "jules.requireSigned")
            .env("GIT_CONFIG_VALUE_0", "true")
            .output()
            .unwrap(),
    );
    assert_eq!(subjects(&with_count), ["signed"], "GIT_CONFIG_COUNT");
}

/// Bug: `git -c jules.fullReplay=true jules --json log stats mail` answered from the cache.
#[test]
fn git_c_reaches_full_replay() {
    let r = Repo::new();
    r.send_mail("alice", "bob", "one", "b", &[]);
    r.jules_ok(["--json", "log", "stats", "mail"]);
    let warm = json_of(&r.jules(["--json", "log", "stats", "mail"]));
    assert_eq!(warm["refresh"], "warm");
    let full = json_of(&git_jules(
        &r,
        &[
            "-c",
            "jules.fullReplay=true",
            "jules",
            "--json",
            "log",
            "stats",
            "mail",
        ],
    ));
    assert_ne!(full["refresh"], "warm", "git -c jules.fullReplay: {full}");
    assert_eq!(full["events"], warm["events"]);
}

/// The other keys a `git -c` must reach, each shown to take effect (not only to parse).
#[test]
fn git_c_reaches_the_other_keys() {
    let r = Repo::new();
    // jules.strictPersonas: an unknown persona becomes an error.
    r.write(".jules/personas/alice.md", "alice\n");
    r.commit_all("personas");
    let o = git_jules(
        &r,
        &[
            "-c",
            "jules.strictPersonas=true",
            "jules",
            "mail",
            "send",
            "--from",
            "alice",
            "--to",
            "nobody-at-all",
            "--subject",
            "s",
            "--body",
            "b",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "strictPersonas: {}", stderr(&o));

    // jules.lease.ttl: the default TTL of an acquire.
    let lease = json_of(&git_jules(
        &r,
        &[
            "-c",
            "jules.lease.ttl=5h",
            "jules",
            "--json",
            "lease",
            "acquire",
            "src/",
            "--persona",
            "alice",
        ],
    ));
    let l = &lease["lease"];
    let at = |k: &str| {
        chrono::DateTime::parse_from_rfc3339(l[k].as_str().unwrap())
            .unwrap_or_else(|e| panic!("{k} is not RFC 3339: {e}: {l}"))
    };
    assert_eq!((at("expires_at") - at("acquired_at")).num_hours(), 5, "{l}");

    // jules.lease.maxTtl: a longer --ttl is refused.
    let o = git_jules(
        &r,
        &[
            "-c",
            "jules.lease.maxTtl=1h",
            "jules",
            "lease",
            "acquire",
            "docs/",
            "--persona",
            "alice",
            "--ttl",
            "2h",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "maxTtl: {}", stderr(&o));
    assert!(stderr(&o).contains("1h"), "names the limit: {}", stderr(&o));

    // jules.remote: sync goes to the remote it names.
    let o = git_jules(&r, &["-c", "jules.remote=no-such-remote", "jules", "sync"]);
    assert_eq!(o.status.code(), Some(2), "remote: {}", stderr(&o));
    assert!(stderr(&o).contains("no-such-remote"), "{}", stderr(&o));

    // jules.signingKey and jules.persona.<name>.signingKey: the event is signed with that key.
    let keys = tempfile::tempdir().unwrap();
    let (alice_key, alice_line) = new_key(&r, keys.path(), "alice");
    trust_on_main(&r, &alice_line);
    for key in [
        "jules.signingKey",
        "jules.persona.alice.signingKey",
        "jules.sessionSigningKey",
    ] {
        let c = format!("{key}={}", alice_key.display());
        let subject = format!("signed by {key}");
        let o = git_jules(
            &r,
            &[
                "-c",
                &c,
                "jules",
                "mail",
                "send",
                "--from",
                "alice",
                "--to",
                "bob",
                "--subject",
                &subject,
                "--body",
                "b",
            ],
        );
        assert!(o.status.success(), "{key}: {}", stderr(&o));
        let inbox = json_of(&r.jules(["mail", "inbox", "--persona", "bob", "--json"]));
        let m = inbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["subject"] == subject.as_str())
            .unwrap()
            .clone();
        assert_eq!(m["signature"]["state"], "verified", "{key}: {m}");
    }

    // jules.lease.remindBefore: the lead of `lease remind` (the 5h lease above is due within 6h, not 15m).
    let remind = |extra: &[&str]| {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["jules", "--json", "lease", "remind"]);
        json_of(&git_jules(&r, &args))["reminded"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(remind(&[]), 0);
    assert_eq!(remind(&["-c", "jules.lease.remindBefore=6h"]), 1);

    // jules.group.<name>.member: a group defined for one command.
    let o = git_jules(
        &r,
        &[
            "-c",
            "jules.group.crew.member=alice",
            "jules",
            "mail",
            "send",
            "--from",
            "bob",
            "--to",
            "crew",
            "--subject",
            "to the crew",
            "--body",
            "b",
        ],
    );
    assert!(o.status.success(), "group: {}", stderr(&o));
    let inbox = json_of(&r.jules(["mail", "inbox", "--persona", "alice", "--json"]));
    assert!(
        subjects(&inbox).contains(&"to the crew".to_owned()),
        "{inbox}"
    );

    // jules.trust.ref: the trust roots are read where it says.
    r.git(["branch", "trusted"]);
    r.git(["rm", "-q", ".jules/allowed_signers"]);
    r.commit_all("no trust on main");
    r.send_mail("mallory", "bob", "unsigned", "b", &[]);
    let human = |extra: &[&str]| {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["jules", "mail", "inbox", "--persona", "bob"]);
        let o = git_jules(&r, &args);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    assert!(!human(&[]).contains("NOT VERIFIED"));
    assert!(human(&["-c", "jules.trust.ref=trusted"]).contains("NOT VERIFIED"));
}

/// Bug: a `jules.trust.ref` that names nothing silently removed every NOT VERIFIED mark.
#[test]
fn a_trust_ref_naming_nothing_warns_and_is_an_error_under_require_signed() {
    let r = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (_, alice_line) = new_key(&r, keys.path(), "alice");
    trust_on_main(&r, &alice_line);
    r.send_mail("mallory", "bob", "unsigned", "b", &[]);
    r.git(["config", "jules.trust.ref", "mian"]);
    let o = r.jules(["mail", "inbox", "--persona", "bob"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning") && err.contains("jules.trust.ref") && err.contains("mian"),
        "a warning names the key and its value: {err}"
    );
    r.git(["config", "jules.requireSigned", "true"]);
    let o = r.jules(["mail", "inbox", "--persona", "bob"]);
    assert_refused(&o, "jules.trust.ref", "mian", "under requireSigned");
    // A library caller gets the typed error.
    assert!(git_jules::Workspace::open(r.path()).is_err());
}

/// Bug: the default trust ref was the clone's local `main`: a clone that had fetched but not pulled the
/// trust file showed unsigned mail unmarked. Now the base branch as the remote has it counts, and the
/// memo of the trust file's blob follows it.
#[test]
fn the_default_trust_ref_is_the_remote_tracking_main() {
    let (a, _bare, b) = Repo::with_clone();
    b.send_mail("mallory", "bob", "unsigned", "b", &[]);
    // Warm the trust-blob memo on b's local main (no trust file yet).
    let before = b.jules_ok(["mail", "inbox", "--persona", "bob"]);
    assert!(!before.contains("NOT VERIFIED"), "{before}");
    let keys = tempfile::tempdir().unwrap();
    let (_, alice_line) = new_key(&a, keys.path(), "alice");
    trust_on_main(&a, &alice_line);
    a.git(["push", "-q", "origin", "main"]);
    b.git(["fetch", "-q", "origin"]);
    assert_ne!(b.rev("main"), b.rev("origin/main"), "b has not pulled");
    let after = b.jules_ok(["mail", "inbox", "--persona", "bob"]);
    assert!(
        after.contains("NOT VERIFIED"),
        "the remote's main holds the trust roots: {after}"
    );
}

/// Bug: `--ttl 106751991167d` was accepted (292 million years) and its `expires_at` was not RFC 3339.
#[test]
fn lease_ttls_are_bounded_by_max_ttl_and_times_are_rfc3339() {
    let r = Repo::new();
    for ttl in ["106751991167d", "99999999999999999w", "8d"] {
        let o = r.jules([
            "lease",
            "acquire",
            "src/",
            "--persona",
            "alice",
            "--ttl",
            ttl,
        ]);
        assert_eq!(o.status.code(), Some(2), "--ttl {ttl}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("7d") || stderr(&o).contains("too long"),
            "--ttl {ttl} names the limit: {}",
            stderr(&o)
        );
    }
    // The limit is a setting.
    r.git(["config", "jules.lease.maxTtl", "30d"]);
    let lease = json_of(&r.jules([
        "--json",
        "lease",
        "acquire",
        "src/",
        "--persona",
        "alice",
        "--ttl",
        "8d",
    ]));
    let expires = lease["lease"]["expires_at"].as_str().unwrap();
    chrono::DateTime::parse_from_rfc3339(expires).expect("RFC 3339");
    // A configured default above the limit is refused too, naming both.
    r.git(["config", "jules.lease.ttl", "40d"]);
    let o = r.jules(["lease", "acquire", "docs/", "--persona", "alice"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("jules.lease.maxTtl"), "{}", stderr(&o));
}

/// Bug: a duration that overflows a time (`mail send --expires`, `lease renew --ttl`, config durations)
/// panicked or produced a time that is not RFC 3339.
#[test]
fn every_duration_parser_rejects_overflow() {
    let r = Repo::new();
    let o = r.jules([
        "mail",
        "send",
        "--from",
        "alice",
        "--to",
        "bob",
        "--subject",
        "s",
        "--body",
        "b",
        "--expires",
        "106751991167d",
    ]);
    assert_eq!(o.status.code(), Some(2), "mail --expires: {}", stderr(&o));
    assert!(stderr(&o).contains("106751991167d"), "{}", stderr(&o));
    let o = r.jules(["lease", "remind", "--lead", "106751991167d"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "lease remind --lead: {}",
        stderr(&o)
    );
    for key in [
        "jules.lease.ttl",
        "jules.lease.remindBefore",
        "jules.sync.minPushInterval",
    ] {
        let c = format!("{key}=106751991167d");
        let o = git_jules(&r, &["-c", &c, "jules", "lease", "list"]);
        assert_refused(&o, key, "106751991167d", "overflow");
    }
    let o = r.jules([
        "mail",
        "inbox",
        "--persona",
        "bob",
        "--since",
        "106751991167d",
    ]);
    assert_eq!(o.status.code(), Some(2), "--since: {}", stderr(&o));
}

/// git hands its `-c` to hooks too: `git -c jules.lease.preCommit=warn commit` must let the commit through
/// the pre-commit hook (the binary as the hook's interpreter). Bug: the hook ignored it.
#[test]
fn git_c_reaches_the_pre_commit_hook() {
    let r = Repo::new();
    r.jules_ok(["hooks", "install", "--hook", "pre-commit"]);
    r.jules_ok(["lease", "acquire", "src/", "--persona", "ann"]);
    r.write("src/a.rs", "x\n");
    r.git(["add", "-A"]);
    let commit = |extra: &[&str]| {
        let mut args: Vec<&str> = extra.to_vec();
        args.extend(["commit", "-qm", "change"]);
        r.git_cmd(args)
            .env("JULES_PERSONA", "bob")
            .output()
            .unwrap()
    };
    let refused = commit(&[]);
    assert!(!refused.status.success(), "under ann's lease");
    let o = commit(&["-c", "jules.lease.preCommit=warn"]);
    assert!(
        o.status.success(),
        "git -c reaches the hook: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("ann"), "{}", stderr(&o));
}

/// The same warning on the operator's web pages (bug: only `git jules web`'s stderr said it, and an
/// operator reading the pages saw unmarked mail with nothing to say the marks were off).
#[test]
fn a_trust_ref_naming_nothing_is_shown_on_every_web_page() {
    let r = Repo::new();
    r.send_mail("mallory", "bob", "unsigned", "b", &[]);
    r.git(["config", "jules.trust.ref", "mian"]);
    let server = crate::web::Server::start(&r, &[]);
    for path in ["/", "/mail/bob"] {
        let page = server.get(path).text();
        assert!(
            page.contains("warning: jules.trust.ref is &#x27;mian&#x27;, which names no commit")
                || page.contains("warning: jules.trust.ref is 'mian', which names no commit"),
            "{path}: {page}"
        );
    }
}

// ---------------------------------------------------------------------------------------------------------
// One test per documented key that the tests above do not reach: each sets the value ONLY through `git -c`
// (git's `GIT_CONFIG_PARAMETERS`, the real path: `git -c K=V jules …`), or through `GIT_CONFIG_COUNT`, and
// compares with a run without it. Bug each catches: a reader of that key that looks only at the
// repository's files (or hard-codes its default), so the one-off override an operator or a harness gives is
// silently ignored.

/// `git -c PAIR ARGS…` in `r`, with `env` added.
fn git_c(
    r: &Repo,
    pair: Option<&str>,
    args: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut all: Vec<&str> = Vec::new();
    if let Some(p) = pair {
        all.extend(["-c", p]);
    }
    all.extend(args);
    let mut cmd = r.git_cmd(all);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The same command with `KEY=VALUE` given through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_0`/`GIT_CONFIG_VALUE_0`.
fn config_count(cmd: &mut std::process::Command, key: &str, value: &str) -> std::process::Output {
    cmd.env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", key)
        .env("GIT_CONFIG_VALUE_0", value)
        .output()
        .unwrap()
}

/// The first path of every live lease.
fn leased_paths(r: &Repo) -> Vec<String> {
    let mut v: Vec<String> = json_of(&r.jules(["--json", "lease", "list"]))["leases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["paths"][0].as_str().unwrap().to_owned())
        .collect();
    v.sort();
    v
}

fn lease_as(r: &Repo, persona: &str, args: &[&str]) {
    let mut all = vec!["lease", "acquire"];
    all.extend(args);
    all.extend(["--persona", persona]);
    r.jules_ok(all);
}

/// `jules.lease.remind=false`: `tick` sends no reminder of a lease about to expire. Catches: reminders
/// read from the files only (planted: `git config --file .git/config`; the test failed, 1 reminder).
#[test]
fn git_c_reaches_lease_remind() {
    let r = Repo::new();
    r.write(".jules/schedules.toml", "[cycle]\norder = [\"curator\"]\n");
    let acquired = r.jules_at(
        "2030-01-01T10:00:00Z",
        [
            "lease",
            "acquire",
            "src/",
            "--ttl",
            "1h",
            "--persona",
            "ann",
        ],
    );
    assert!(acquired.status.success(), "{}", stderr(&acquired));
    let tick = |pair: Option<&str>| {
        let doc = json_of(&git_c(
            &r,
            pair,
            &["jules", "tick", "--json", "--now", "2030-01-01T10:50:00Z"],
            &[],
        ));
        doc["reminded"].as_array().unwrap().len()
    };
    assert_eq!(
        tick(Some("jules.lease.remind=false")),
        0,
        "git -c turned reminders off"
    );
    assert_eq!(tick(None), 1, "without it the due lease is reminded");
}

/// `jules.lease.releaseOnDone=false`: `task done` keeps the task's leases. Catches: the setting read from
/// the files only (planted; failed at the `git -c` run).
#[test]
fn git_c_and_config_count_reach_lease_release_on_done() {
    let r = Repo::new();
    let done = |task: &str, how: Option<&str>| {
        let o = match how {
            Some("count") => config_count(
                r.jules_cmd(["task", "done", task])
                    .env("JULES_PERSONA", "ann"),
                "jules.lease.releaseOnDone",
                "false",
            ),
            pair => git_c(
                &r,
                pair,
                &["jules", "task", "done", task],
                &[("JULES_PERSONA", "ann")],
            ),
        };
        assert!(o.status.success(), "{}", stderr(&o));
    };
    let mut held = Vec::new();
    for (dir, how) in [
        ("a/", Some("jules.lease.releaseOnDone=false")),
        ("b/", Some("count")),
        ("c/", None),
    ] {
        let task = r
            .jules_ok(["task", "add", dir, "--persona", "ann"])
            .trim()
            .to_owned();
        lease_as(&r, "ann", &[dir, "--task", &task]);
        done(&task, how);
        if how.is_some() {
            held.push(dir.to_owned());
        }
        assert_eq!(leased_paths(&r), held, "after {how:?}");
    }
}

/// `jules.lease.releaseOnFinalize=false`: `series finalize` keeps the leases on what landed. Catches: the
/// default hard-coded (planted; failed).
#[test]
fn git_c_reaches_lease_release_on_finalize() {
    let r = Repo::new();
    lease_as(&r, "ann", &["a.txt"]);
    lease_as(&r, "ann", &["b.txt"]);
    let finalize = |pair: Option<&str>| {
        let o = git_c(
            &r,
            pair,
            &["jules", "series", "finalize", "--no-verify"],
            &[("JULES_PERSONA", "ann")],
        );
        assert!(o.status.success(), "{}", stderr(&o));
    };
    crate::series::make_series(&r, "one", &[("a.txt", "a\n")]);
    finalize(Some("jules.lease.releaseOnFinalize=false"));
    assert_eq!(
        leased_paths(&r),
        ["a.txt", "b.txt"],
        "git -c kept the lease"
    );
    r.git(["switch", "-q", "main"]);
    crate::series::make_series(&r, "two", &[("b.txt", "b\n")]);
    finalize(None);
    assert_eq!(leased_paths(&r), ["a.txt"], "without it the lease ends");
}

/// `jules.maxRetries=0`: a persona with unread mail is not relaunched but skipped. Catches: the default
/// hard-coded (planted; failed, scribe still relaunched).
#[test]
fn git_c_reaches_max_retries() {
    let r = Repo::new();
    r.write(
        ".jules/schedules.toml",
        "[cycle]\norder = [\"curator\"]\n[schedules.scribe]\ncron = \"0 0 1 1 *\"\n",
    );
    r.jules_ok(["sprint", "start"]);
    r.send_mail("weaver", "scribe", "conflict", "fix it", &[]);
    let plan = |pair: Option<&str>| {
        json_of(&git_c(
            &r,
            pair,
            &["jules", "tick", "--dry-run", "--json"],
            &[],
        ))
    };
    let relaunched = |doc: &serde_json::Value| {
        doc["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["persona"] == "scribe")
    };
    let plain = plan(None);
    assert!(relaunched(&plain), "{plain}");
    let capped = plan(Some("jules.maxRetries=0"));
    assert!(!relaunched(&capped), "{capped}");
    assert_eq!(capped["skipped"][0]["persona"], "scribe", "{capped}");
}

/// A series `v` of `patches` commits on `main`, one new file each.
fn series_for_verify(r: &Repo, patches: usize) {
    let files: Vec<(String, String)> = (0..patches)
        .map(|i| (format!("f{i}.txt"), format!("{i}\n")))
        .collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(f, c)| (f.as_str(), c.as_str()))
        .collect();
    crate::series::make_series(r, "v", &refs);
}

/// `jules.verify.cmd`: the command `verify` runs when none is given. Catches: the command read from the
/// files only (planted; failed with "no verify command").
#[test]
fn git_c_and_config_count_reach_verify_cmd() {
    let r = Repo::new();
    series_for_verify(&r, 1);
    let out = tempfile::tempdir().unwrap();
    let marker = out.path().join("ran");
    let cmd = format!("echo ran >> '{}'", marker.display());
    let o = git_c(&r, None, &["jules", "verify"], &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "no command without it: {}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("no verify command"), "{}", stderr(&o));
    let pair = format!("jules.verify.cmd={cmd}");
    let doc = json_of(&git_c(&r, Some(&pair), &["jules", "--json", "verify"], &[]));
    assert_eq!(
        (doc["passed"].as_bool(), doc["ran"].as_u64()),
        (Some(true), Some(1)),
        "{doc}"
    );
    let doc = json_of(&config_count(
        &mut r.jules_cmd(["--json", "verify", "--force"]),
        "jules.verify.cmd",
        &cmd,
    ));
    assert_eq!(doc["ran"], 1, "GIT_CONFIG_COUNT: {doc}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "ran\nran\n");
}

/// `jules.verify.jobs`: how many commits run at once (the report's `jobs`). Catches: the number of cores
/// used whatever the setting (planted; failed, 2 jobs for `jobs=1`).
#[test]
fn git_c_reaches_verify_jobs() {
    let r = Repo::new();
    series_for_verify(&r, 3);
    let jobs = |pair: Option<&str>| {
        let doc = json_of(&git_c(
            &r,
            pair,
            &["jules", "--json", "verify", "--cmd", "true", "--force"],
            &[],
        ));
        assert_eq!(doc["ran"], 3, "{doc}");
        doc["jobs"].as_u64().unwrap()
    };
    let cores = std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(1);
    assert_eq!(jobs(None), cores.min(3), "the default: the number of cores");
    assert_eq!(jobs(Some("jules.verify.jobs=1")), 1);
    assert_eq!(jobs(Some("jules.verify.jobs=3")), 3);
}

/// `jules.verify.worktreeDir`: where the temporary worktrees go. Catches: the setting ignored (planted;
/// failed, the worktree went to /dev/shm).
#[test]
fn git_c_reaches_verify_worktree_dir() {
    let r = Repo::new();
    series_for_verify(&r, 1);
    let scratch = tempfile::tempdir().unwrap();
    let scratch_path = scratch.path().canonicalize().unwrap();
    let out = tempfile::tempdir().unwrap();
    let log = out.path().join("where");
    let cmd = format!("pwd -P > '{}'", log.display());
    let ran_in = |pair: Option<&str>| {
        let o = git_c(
            &r,
            pair,
            &["jules", "verify", "--cmd", &cmd, "--force"],
            &[],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        PathBuf::from(std::fs::read_to_string(&log).unwrap().trim())
    };
    let default = ran_in(None);
    assert!(!default.starts_with(&scratch_path), "{}", default.display());
    let pair = format!("jules.verify.worktreeDir={}", scratch.path().display());
    let configured = ran_in(Some(&pair));
    assert!(
        configured.starts_with(&scratch_path),
        "git -c: ran in {}, not under {}",
        configured.display(),
        scratch_path.display()
    );
}

/// `jules.sync.minPushInterval`: a clone that pushed just now defers its next push. Catches: the interval
/// ignored (planted; failed, the push went out).
#[test]
fn git_c_reaches_sync_min_push_interval() {
    let (a, bare, _b) = Repo::with_clone();
    a.send_mail("alice", "bob", "first", "b", &[]);
    a.jules_ok(["sync"]);
    let pushed = bare.rev("refs/jules/mail");
    assert!(pushed.is_some());
    a.send_mail("alice", "bob", "second", "b", &[]);
    let o = git_c(
        &a,
        Some("jules.sync.minPushInterval=1h"),
        &["jules", "sync"],
        &[],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("push deferred"), "{}", stderr(&o));
    assert_eq!(
        bare.rev("refs/jules/mail"),
        pushed,
        "git -c deferred the push"
    );
    let o = git_c(&a, None, &["jules", "sync"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(
        bare.rev("refs/jules/mail"),
        pushed,
        "without it the news is pushed"
    );
}

/// A clone with the shipped hooks, a bare `origin`, and `jules/staging/x` one commit past `main` writing
/// `file` with `content`, its base configured.
fn staged_series(file: &str, content: &str) -> (Repo, Repo) {
    let r = Repo::new();
    let bare = r.bare_sibling();
    r.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
    r.git(["push", "-q", "origin", "main"]);
    r.jules_ok(["hooks", "install"]);
    r.git(["checkout", "-qb", "jules/staging/x"]);
    r.git(["config", "branch.jules/staging/x.julesBase", "main"]);
    r.write(file, content);
    r.commit_all("the series");
    (r, bare)
}

fn push_series(r: &Repo, pair: Option<&str>) -> std::process::Output {
    git_c(
        r,
        pair,
        &["push", "-q", "origin", "jules/staging/x"],
        &[("JULES_PERSONA", "bob")],
    )
}

/// `jules.verify.prePush=off`, read by the shell pre-push hook through `git config`: the push is not
/// verified.
/// Catches: the hook reading `.git/config` only (planted `git config --file`; failed, the push verified).
#[test]
fn git_c_reaches_verify_pre_push_in_the_hook() {
    let (r, bare) = staged_series("a.txt", "BROKEN\n");
    r.git([
        "config",
        "jules.verify.cmd",
        "! grep -rqx --exclude-dir=.git BROKEN .",
    ]);
    let o = push_series(&r, None);
    assert!(!o.status.success(), "a failing series is refused");
    assert!(stderr(&o).contains("fails verification"), "{}", stderr(&o));
    assert_eq!(bare.rev("refs/heads/jules/staging/x"), None);
    let o = push_series(&r, Some("jules.verify.prePush=off"));
    assert!(
        o.status.success(),
        "git -c turned verification off: {}",
        stderr(&o)
    );
    assert!(
        !stderr(&o).contains("pre-push: verifying"),
        "{}",
        stderr(&o)
    );
    assert!(bare.rev("refs/heads/jules/staging/x").is_some());
}

/// `jules.lease.prePush=off`, read by the shell pre-push hook: the lease check is skipped.
/// Catches: the hook reading `.git/config` only (planted `git config --file`; failed, the push refused).
#[test]
fn git_c_reaches_lease_pre_push_in_the_hook() {
    let (r, bare) = staged_series("src/a.rs", "x\n");
    r.git(["config", "jules.verify.prePush", "off"]);
    lease_as(&r, "ann", &["src/", "--reason", "mine"]);
    let o = push_series(&r, None);
    assert!(!o.status.success(), "under ann's lease");
    assert!(stderr(&o).contains("ann"), "{}", stderr(&o));
    assert_eq!(bare.rev("refs/heads/jules/staging/x"), None);
    let o = push_series(&r, Some("jules.lease.prePush=off"));
    assert!(
        o.status.success(),
        "git -c turned the lease check off: {}",
        stderr(&o)
    );
    assert!(bare.rev("refs/heads/jules/staging/x").is_some());
}

/// `jules.agent.guard=closed`: a pre-edit hook that cannot decide denies. Three readers of the key, each
/// covered: the repository's (`guard::Mode::from_config`, when the lease log is damaged), and git's own
/// (`git config`, when the payload cannot be read, in a repository and outside one).
/// Catches: `Mode::from_config` reading `.git/config` only (planted; failed at the damaged log).
#[test]
fn git_c_and_config_count_reach_agent_guard() {
    let damaged = Repo::new();
    let mut hash = damaged.git_cmd(["hash-object", "-w", "--stdin"]);
    let blob = crate::harness::with_stdin(&mut hash, b"not a log\n");
    damaged.git(["update-ref", "refs/jules/lease", stdout(&blob).trim()]);
    let write = serde_json::json!({"tool_name": "Write", "cwd": damaged.path(),
        "tool_input": {"file_path": damaged.path().join("x"), "content": "x"}})
    .to_string();
    let plain = Repo::new();
    let nowhere = tempfile::tempdir().unwrap();
    let hook = |r: &Repo, dir: &Path, input: &[u8], pair: Option<&str>, count: bool| {
        let mut args = Vec::new();
        if let Some(p) = pair {
            args.extend(["-c", p]);
        }
        args.extend(["jules", "agent", "hook", "pre-edit", "--harness", "claude"]);
        let mut cmd = r.git_cmd(args);
        cmd.current_dir(dir)
            .env("JULES_PERSONA", "bob")
            .env("GIT_CEILING_DIRECTORIES", nowhere.path().parent().unwrap());
        if count {
            cmd.env("GIT_CONFIG_COUNT", "1")
                .env("GIT_CONFIG_KEY_0", "jules.agent.guard")
                .env("GIT_CONFIG_VALUE_0", "closed");
        }
        let o = crate::harness::with_stdin(&mut cmd, input);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The look happened: the guard says it could not decide, whichever way it then answered.
        assert!(stderr(&o).contains("cannot decide"), "{}", stderr(&o));
        stdout(&o).contains("\"permissionDecision\":\"deny\"")
    };
    let garbage: &[u8] = b"this is not json";
    for (what, r, dir, input) in [
        (
            "damaged lease log",
            &damaged,
            damaged.path(),
            write.as_bytes(),
        ),
        ("unreadable payload", &plain, plain.path(), garbage),
        ("outside a repository", &plain, nowhere.path(), garbage),
    ] {
        assert!(!hook(r, dir, input, None, false), "{what}: open by default");
        let closed = Some("jules.agent.guard=closed");
        assert!(hook(r, dir, input, closed, false), "{what}: git -c");
        assert!(hook(r, dir, input, None, true), "{what}: GIT_CONFIG_COUNT");
    }
}

/// Every key of `settings::KEYS` whose `git -c` is shown to take effect by a test in this file. Adding a
/// key to the table without such a test (and its name here) fails
/// [`every_documented_key_has_an_effect_test`].
const KEYS_WITH_AN_EFFECT_TEST: &[(&str, &str)] = &[
    (
        "jules.requireSigned",
        "git_c_and_config_count_reach_require_signed",
    ),
    ("jules.strictPersonas", "git_c_reaches_the_other_keys"),
    ("jules.fullReplay", "git_c_reaches_full_replay"),
    ("jules.sessionSigningKey", "git_c_reaches_the_other_keys"),
    ("jules.signingKey", "git_c_reaches_the_other_keys"),
    ("jules.persona.*.signingKey", "git_c_reaches_the_other_keys"),
    ("jules.trust.ref", "git_c_reaches_the_other_keys"),
    ("jules.remote", "git_c_reaches_the_other_keys"),
    ("jules.group.*.member", "git_c_reaches_the_other_keys"),
    ("jules.maxRetries", "git_c_reaches_max_retries"),
    (
        "jules.sync.minPushInterval",
        "git_c_reaches_sync_min_push_interval",
    ),
    (
        "jules.verify.cmd",
        "git_c_and_config_count_reach_verify_cmd",
    ),
    ("jules.verify.jobs", "git_c_reaches_verify_jobs"),
    (
        "jules.verify.worktreeDir",
        "git_c_reaches_verify_worktree_dir",
    ),
    (
        "jules.verify.prePush",
        "git_c_reaches_verify_pre_push_in_the_hook",
    ),
    (
        "jules.lease.prePush",
        "git_c_reaches_lease_pre_push_in_the_hook",
    ),
    ("jules.lease.ttl", "git_c_reaches_the_other_keys"),
    ("jules.lease.maxTtl", "git_c_reaches_the_other_keys"),
    ("jules.lease.remindBefore", "git_c_reaches_the_other_keys"),
    ("jules.lease.remind", "git_c_reaches_lease_remind"),
    (
        "jules.lease.releaseOnFinalize",
        "git_c_reaches_lease_release_on_finalize",
    ),
    (
        "jules.lease.releaseOnDone",
        "git_c_and_config_count_reach_lease_release_on_done",
    ),
    ("jules.lease.preCommit", "git_c_reaches_the_pre_commit_hook"),
    (
        "jules.agent.guard",
        "git_c_and_config_count_reach_agent_guard",
    ),
];

/// Bug it catches: a key added to the table (a new documented setting) whose `git -c` nobody showed to take
/// effect, or a test named here that no longer exists.
#[test]
fn every_documented_key_has_an_effect_test() {
    let table: Vec<&str> = git_jules::kit::settings::KEYS
        .iter()
        .map(|k| k.name)
        .collect();
    let untested: Vec<&&str> = table
        .iter()
        .filter(|k| !KEYS_WITH_AN_EFFECT_TEST.iter().any(|(c, _)| c == *k))
        .collect();
    assert!(
        untested.is_empty(),
        "keys in settings::KEYS without a `git -c` effect test in tests/it/config.rs: {untested:?}"
    );
    let stale: Vec<&str> = KEYS_WITH_AN_EFFECT_TEST
        .iter()
        .map(|(k, _)| *k)
        .filter(|k| !table.contains(k))
        .collect();
    assert!(
        stale.is_empty(),
        "covered keys no longer in settings::KEYS: {stale:?}"
    );
    // The test named for each key is in this file.
    let source = include_str!("config.rs");
    for (key, test) in KEYS_WITH_AN_EFFECT_TEST {
        assert!(
            source.contains(&format!("fn {test}()")),
            "{key}: no test `{test}` in tests/it/config.rs"
        );
    }
}
