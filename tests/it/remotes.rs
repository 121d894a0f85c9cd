//! Sync through real remotes: smart HTTP (`git http-backend` behind lighttpd, basic auth answered by a
//! credential helper), `git daemon`, ssh through a `GIT_SSH_COMMAND` that runs the command locally; 100 clones
//! syncing at once; hygiene over 300 syncs; the guard hook. Servers are started on 127.0.0.1 by the tests and
//! stopped by them.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{
    bin, hold_pushes_until, json_items, pushes_held, stderr, stdout, Guarded, Repo,
};

/// A git credential helper that answers alice:secret, the smart-HTTP server's one user.
pub(crate) const ALICE_HELPER: &str =
    "!f() { test \"$1\" = get && echo username=alice && echo password=secret; }; f";

/// The environment that gives every git in a clone [`ALICE_HELPER`].
pub(crate) fn alice_auth() -> [(&'static str, &'static str); 3] {
    [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "credential.helper"),
        ("GIT_CONFIG_VALUE_0", ALICE_HELPER),
    ]
}

/// A server: its process group is killed when dropped (`Guarded`), also when it never came up.
pub(crate) struct Server {
    _process: Guarded,
    pub(crate) port: u16,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Wait until `server` listens on `port`. The bound only catches a server that never comes up; the
/// `Guarded` is already armed, so a panic here still stops it.
fn listening(mut process: Guarded, port: u16, what: &str) -> Server {
    wait_for_port(port, &mut process, what);
    Server {
        _process: process,
        port,
    }
}

fn wait_for_port(port: u16, server: &mut Guarded, what: &str) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("{what} exited early: {status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what} did not listen"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// PATH for server-side processes: the binary under test first (the guard hook calls `git jules`).
fn server_path() -> String {
    format!(
        "{}:{}",
        bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// lighttpd serving `root/*.git` through `git http-backend` at `/git/`, basic auth alice:secret required.
fn git_exec_path() -> PathBuf {
    let out = Command::new("git").arg("--exec-path").output().unwrap();
    assert!(out.status.success(), "git --exec-path: {}", stderr(&out));
    PathBuf::from(stdout(&out).trim())
}

pub(crate) fn http_server(root: &Path) -> Server {
    let lighttpd = ["/usr/sbin/lighttpd", "/usr/bin/lighttpd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("lighttpd is required (CI installs it with .ci/setup.d/remotes.sh)");
    let backend = git_exec_path()
        .join("git-http-backend")
        .display()
        .to_string();
    let port = free_port();
    let dir = root.join("www");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("users"), "alice:secret\n").unwrap();
    let conf = format!(
        r#"server.document-root = "{dir}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{dir}/error.log"
server.modules = ("mod_alias", "mod_setenv", "mod_auth", "mod_authn_file", "mod_cgi")
alias.url = ("/git" => "{backend}")
cgi.assign = ("" => "")
setenv.add-environment = (
  "GIT_PROJECT_ROOT" => "{root}",
  "GIT_HTTP_EXPORT_ALL" => "1",
  "PATH" => "{path}",
  "HOME" => "{root}",
  "GIT_CONFIG_NOSYSTEM" => "1"
)
auth.backend = "plain"
auth.backend.plain.userfile = "{dir}/users"
auth.require = ("/git" => ("method" => "basic", "realm" => "git", "require" => "valid-user"))
"#,
        dir = dir.display(),
        root = root.display(),
        path = server_path(),
    );
    let conf_path = dir.join("lighttpd.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let process = Guarded::spawn(
        Command::new(lighttpd)
            .args(["-D", "-f"])
            .arg(&conf_path)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    listening(process, port, "lighttpd")
}

fn git_daemon(root: &Path) -> Server {
    let port = free_port();
    // `git-daemon` itself rather than `git daemon`: the `git` wrapper would fork it as a child of its own.
    let process = Guarded::spawn(
        Command::new(git_exec_path().join("git-daemon"))
            .args([
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
                "--listen=127.0.0.1",
            ])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", root.display()))
            .arg(root)
            .env("PATH", server_path())
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    listening(process, port, "git daemon")
}

/// A bare repository `root/remote.git` holding `main`, and a work repository to clone with.
pub(crate) fn remote_in(root: &Path) -> (Repo, PathBuf) {
    let origin = Repo::new();
    let bare = root.join("remote.git");
    origin.git(["init", "-q", "--bare", bare.to_str().unwrap()]);
    origin.git(["push", "-q", bare.to_str().unwrap(), "main"]);
    (origin, bare)
}

/// A clone of `url`, with `envs` applied to every command the test runs in it.
pub(crate) struct Clone {
    pub(crate) repo: Repo,
    envs: Vec<(String, String)>,
}

impl Clone {
    pub(crate) fn new(origin: &Repo, url: &str, envs: &[(&str, &str)]) -> Clone {
        let repo = Repo {
            env: origin.env.clone(),
            dir: tempfile::tempdir().unwrap(),
        };
        let envs: Vec<(String, String)> = envs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut cmd = origin.git_cmd(["clone", "-q", url, repo.path().to_str().unwrap()]);
        cmd.envs(envs.iter().map(|(k, v)| (k, v)));
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "clone {url}: {}", stderr(&out));
        Clone { repo, envs }
    }

    pub(crate) fn cmd(&self, persona: &str, args: &[&str]) -> Command {
        let mut cmd = self.repo.jules_cmd(args);
        cmd.envs(self.envs.iter().map(|(k, v)| (k, v)))
            .env("JULES_PERSONA", persona);
        cmd
    }

    pub(crate) fn run(&self, persona: &str, args: &[&str]) -> Output {
        self.cmd(persona, args).output().unwrap()
    }

    pub(crate) fn ok(&self, persona: &str, args: &[&str]) -> String {
        let out = self.run(persona, args);
        assert!(
            out.status.success(),
            "{args:?} exited {:?}: {}",
            out.status.code(),
            stderr(&out)
        );
        stdout(&out)
    }
}

/// What every transport must carry: mail both ways through `sync`, and a group claim with one winner,
/// raced through the remote at `bare`.
fn exchange_and_claim(a: &Clone, b: &Clone, bare: &Path) {
    for c in [a, b] {
        c.repo
            .git(["config", "--add", "jules.group.workers.member", "w1"]);
        c.repo
            .git(["config", "--add", "jules.group.workers.member", "w2"]);
    }
    a.ok(
        "alice",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "hello over the wire",
            "--body",
            "hi",
        ],
    );
    a.ok("alice", &["sync"]);
    b.ok("bob", &["sync"]);
    let inbox = b.ok("bob", &["mail", "inbox", "--persona", "bob"]);
    assert!(inbox.contains("hello over the wire"), "{inbox}");
    b.ok(
        "bob",
        &[
            "mail",
            "send",
            "--to",
            "alice",
            "--subject",
            "and back",
            "--body",
            "ho",
        ],
    );
    b.ok("bob", &["sync"]);
    a.ok("alice", &["sync"]);
    let inbox = a.ok("alice", &["mail", "inbox", "--persona", "alice"]);
    assert!(inbox.contains("and back"), "{inbox}");

    let task = a
        .ok(
            "boss",
            &[
                "mail",
                "send",
                "--to",
                "workers",
                "--subject",
                "one of you",
                "--body",
                "x",
                "--type",
                "task",
            ],
        )
        .trim()
        .to_owned();
    a.ok("boss", &["sync"]);
    b.ok("boss", &["sync"]);
    let spawn = |c: &Clone, who: &str| {
        Guarded::spawn(
            c.cmd(
                who,
                &["mail", "claim", &task[..12], "--persona", who, "--sync"],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        )
    };
    // The remote holds the first claim's push until the second's arrives: both are in flight together,
    // neither having seen the other's claim, so the refused-push path of the loser runs over each
    // transport (run one after the other, the loser would only fetch and see the winner).
    let held = hold_pushes_until(bare, 2);
    let (ca, cb) = (spawn(a, "w1"), spawn(b, "w2"));
    let hang = Duration::from_secs(300);
    let (oa, ob) = (ca.wait_output(hang), cb.wait_output(hang));
    release_pushes(bare);
    assert!(
        pushes_held(&held) >= 2,
        "the claims did not meet at the remote"
    );
    let codes = [oa.status.code(), ob.status.code()];
    assert!(
        codes == [Some(0), Some(3)] || codes == [Some(3), Some(0)],
        "{codes:?}: {} / {}",
        stderr(&oa),
        stderr(&ob)
    );
}

/// Remove the `hold_pushes_until` hook of `bare`, so that later pushes of the test are not marked.
fn release_pushes(bare: &Path) {
    std::fs::remove_file(bare.join("hooks/pre-receive")).unwrap();
}

fn refs_of(r: &Repo) -> String {
    r.git(["for-each-ref"])
}

#[test]
fn smart_http_with_basic_auth_through_a_credential_helper() {
    let root = tempfile::tempdir().unwrap();
    let (origin, bare) = remote_in(root.path());
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let good = alice_auth();
    let a = Clone::new(&origin, &url, &good);
    let b = Clone::new(&origin, &url, &good);
    exchange_and_claim(&a, &b, &bare);

    // Wrong credentials: a clear error naming the remote, exit 2, nothing local changed.
    let wrong_helper =
        "!f() { test \"$1\" = get && echo username=alice && echo password=wrong; }; f";
    let c = Clone::new(&origin, &url, &good);
    c.ok(
        "carol",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "unsent",
            "--body",
            "x",
        ],
    );
    c.repo.git(["config", "credential.helper", wrong_helper]);
    let bad = Clone {
        repo: c.repo,
        envs: vec![],
    };
    let before = refs_of(&bad.repo);
    for args in [
        &["sync"][..],
        &["mail", "claim", "ffff", "--persona", "w1", "--sync"][..],
    ] {
        let out = bad.run("carol", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("cannot fetch from remote origin")
                && err.contains("Authentication failed"),
            "{err}"
        );
        assert_eq!(refs_of(&bad.repo), before);
    }
    let inbox = bad.ok("carol", &["mail", "sent", "--persona", "carol"]);
    assert!(inbox.contains("unsent"), "{inbox}");

    // No credential helper: a token in `http.extraHeader`, and the URL spelled through `url.*.insteadOf`.
    bad.repo.git(["config", "--unset-all", "credential.helper"]);
    bad.repo.git([
        "config",
        "http.extraHeader",
        "Authorization: Basic YWxpY2U6c2VjcmV0",
    ]);
    bad.repo.git([
        "config",
        &format!("url.http://127.0.0.1:{}/git/.insteadOf", server.port),
        "jules-remote:",
    ]);
    bad.repo
        .git(["remote", "set-url", "origin", "jules-remote:remote.git"]);
    bad.ok("carol", &["sync"]);
    a.ok("alice", &["sync"]);
    let inbox = a.ok("bob", &["mail", "inbox", "--persona", "bob"]);
    assert!(inbox.contains("unsent"), "{inbox}");
}

#[test]
fn git_daemon_remote() {
    let root = tempfile::tempdir().unwrap();
    let (origin, bare) = remote_in(root.path());
    let server = git_daemon(root.path());
    let url = format!("git://127.0.0.1:{}/remote.git", server.port);
    let a = Clone::new(&origin, &url, &[]);
    let b = Clone::new(&origin, &url, &[]);
    exchange_and_claim(&a, &b, &bare);
}

#[test]
fn ssh_remote_through_git_ssh_command() {
    let root = tempfile::tempdir().unwrap();
    let (origin, bare) = remote_in(root.path());
    // As git's own test suite does: an "ssh" that runs the remote command locally.
    let fake = root.path().join("fake-ssh");
    std::fs::write(
        &fake,
        "#!/bin/sh\n# ssh.variant=simple: $1 is the host, $2 the command\nshift\nexec sh -c \"$1\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let envs = [
        ("GIT_SSH_COMMAND", fake.to_str().unwrap()),
        ("GIT_SSH_VARIANT", "simple"),
    ];
    let url = format!("ssh://sandbox.invalid{}", bare.display());
    let a = Clone::new(&origin, &url, &envs);
    let b = Clone::new(&origin, &url, &envs);
    exchange_and_claim(&a, &b, &bare);
    // An ssh that refuses the key: the clear error, exit 2.
    let refuse = root.path().join("refusing-ssh");
    std::fs::write(
        &refuse,
        "#!/bin/sh\necho 'Permission denied (publickey).' >&2\nexit 255\n",
    )
    .unwrap();
    std::fs::set_permissions(&refuse, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = a
        .cmd("alice", &["sync"])
        .env("GIT_SSH_COMMAND", &refuse)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot fetch from remote origin")
            && stderr(&out).contains("Permission denied"),
        "{}",
        stderr(&out)
    );
}

/// 100 clones with 5 new events each sync at the same moment: none fails; after one sequential pass every
/// clone holds the same log, a further sync changes nothing, and the remote keeps one ref per log.
#[test]
fn a_hundred_clones_sync_at_once() {
    const N: usize = 100;
    let origin = Repo::new();
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let clones: Vec<Repo> = (0..N).map(|_| origin.clone_of(bare.path())).collect();
    for (i, c) in clones.iter().enumerate() {
        c.jules_ok([
            "log",
            "append",
            "mail",
            "--kind",
            "t.crowd",
            "--actor",
            &format!("c{i}"),
            "--repeat",
            "5",
        ]);
    }
    // Started back to back, the first ten pushes held at the remote until all ten arrived: at least those
    // provably overlap, so nine of them meet a moved remote ref (holding all hundred would need a hundred
    // receive-packs at once on a 2-core runner). The merge checks below hold however the rest interleave.
    const MET: usize = 10;
    let held = crate::harness::hold_pushes_until(bare.path(), MET);
    let children: Vec<Guarded> = clones
        .iter()
        .map(|c| {
            Guarded::spawn(
                c.jules_cmd(["--json", "sync"])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped()),
            )
        })
        .collect();
    let mut failed = Vec::new();
    let mut contended = 0;
    for child in children {
        // No latency target here: the bound only catches a hang.
        let out = child.wait_output(Duration::from_secs(600));
        if !out.status.success() {
            failed.push(stderr(&out));
            continue;
        }
        let doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
        contended += usize::from(
            doc["rounds"].as_u64().unwrap() > 1
                || doc["refs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|r| r["published"] == "writer"),
        );
    }
    release_pushes(bare.path());
    assert!(
        crate::harness::pushes_held(&held) >= MET,
        "the syncs did not meet at the remote"
    );
    assert!(
        contended >= MET - 1,
        "only {contended} syncs met a moved remote ref"
    );
    assert!(
        failed.is_empty(),
        "{} failed: {:?}",
        failed.len(),
        failed.first()
    );
    for c in &clones {
        c.jules_ok(["sync"]);
    }
    let tip = clones[0].rev("refs/jules/mail").unwrap();
    for c in &clones {
        assert_eq!(c.rev("refs/jules/mail").unwrap(), tip);
        let doc: serde_json::Value = serde_json::from_str(&c.jules_ok(["--json", "sync"])).unwrap();
        assert!(
            doc["refs"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["action"] == "up-to-date"),
            "{doc}"
        );
    }
    let rows = json_items(&clones[N - 1].jules_ok(["log", "show", "mail", "--json"]));
    assert_eq!(rows.len(), 5 * N);
    assert_eq!(
        clones[0].jules_ok(["log", "show", "mail"]),
        clones[N - 1].jules_ok(["log", "show", "mail"])
    );
    // Writer refs of clones that lost a fold wait for news (no push without news); the next sync that
    // publishes something folds them all.
    let remote_refs = bare.git(["for-each-ref", "--format=%(refname)", "refs/jules/"]);
    assert!(remote_refs.lines().count() <= 1 + N, "{remote_refs}");
    clones[7].jules_ok([
        "log", "append", "mail", "--kind", "t.crowd", "--actor", "late",
    ]);
    clones[7].jules_ok(["sync"]);
    let remote_refs = bare.git(["for-each-ref", "--format=%(refname)", "refs/jules/"]);
    assert_eq!(remote_refs, "refs/jules/mail");
}

/// A clone that syncs 300 times, every fetch bringing new objects and keeping them as a pack
/// (`fetch.unpackLimit=1`, the worst case): packs and loose objects stay within the documented bound.
#[test]
fn three_hundred_syncs_keep_packs_and_loose_objects_bounded() {
    let origin = Repo::new();
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let writer = origin.clone_of(bare.path());
    let reader = origin.clone_of(bare.path());
    reader.git(["config", "fetch.unpackLimit", "1"]);
    let mut worst = (0, 0);
    let wrepo = crate::harness::open(writer.path());
    let log = git_jules::store::eventlog::Log::open(&wrepo, "mail").unwrap();
    for i in 0..300 {
        // The writer appends in-process and pushes with plain git: only the reader's 300 syncs are measured.
        log.append(git_jules::store::eventlog::NewEvent::new(
            git_jules::store::eventlog::Event::new(
                "t.tick",
                format!("w{}", i % 7),
                serde_json::json!({ "i": i }),
            ),
        ))
        .unwrap();
        writer.git(["push", "-q", "origin", "refs/jules/mail:refs/jules/mail"]);
        reader.jules_ok(["sync"]);
        let c = git_jules::store::hygiene::counts(&crate::harness::open(reader.path()));
        worst = (worst.0.max(c.packs), worst.1.max(c.loose));
    }
    assert!(
        worst.0 <= git_jules::store::hygiene::MAX_PACKS + 1,
        "{worst:?}"
    );
    assert!(
        worst.1 <= git_jules::store::hygiene::MAX_LOOSE + 100,
        "{worst:?}"
    );
    assert!(worst.0 > 2, "the test should have made packs: {worst:?}");
    let rows = json_items(&reader.jules_ok(["log", "show", "mail", "--json"]));
    assert_eq!(rows.len(), 300);
}

#[test]
fn the_guard_refuses_rewrites_deletions_and_garbage_and_passes_syncs() {
    let origin = Repo::new();
    let bare = origin.bare_sibling();
    origin.git(["push", "-q", bare.path().to_str().unwrap(), "main"]);
    let installed = bare.jules(["guard", "--install"]);
    assert!(installed.status.success(), "{}", stderr(&installed));
    assert!(bare.path().join("hooks/pre-receive").exists());
    let a = origin.clone_of(bare.path());
    let b = origin.clone_of(bare.path());
    let append = |r: &Repo, n: &str| {
        r.jules_ok([
            "log", "append", "mail", "--kind", "t.g", "--actor", "a", "--repeat", n,
        ]);
    };
    append(&a, "3");
    a.jules_ok(["sync"]);
    append(&b, "2");
    // A writer ref that a fold will delete: allowed, since the shared ref then contains it.
    let b_tip = b.rev("refs/jules/mail").unwrap();
    b.git([
        "push",
        "-q",
        "origin",
        &format!("{b_tip}:refs/jules/writers/mail/00000000000000bb"),
    ]);
    // b has news again: its sync folds the writer ref away.
    append(&b, "1");
    b.jules_ok(["sync"]);
    a.jules_ok(["sync"]);
    assert_eq!(
        bare.git(["for-each-ref", "--format=%(refname)", "refs/jules/"]),
        "refs/jules/mail"
    );
    let tip = bare.rev("refs/jules/mail").unwrap();

    // A force-push that shortens the log.
    let out = a.git_output(["push", "origin", &format!("+{tip}~1:refs/jules/mail")]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("does not contain"),
        "{}",
        stderr(&out)
    );
    // A garbage commit on top of it.
    let garbage = a.git([
        "commit-tree",
        &format!("{tip}^{{tree}}"),
        "-p",
        &tip,
        "-m",
        "garbage",
    ]);
    let out = a.git_output(["push", "origin", &format!("{garbage}:refs/jules/mail")]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is not a valid event"),
        "{}",
        stderr(&out)
    );
    // A deletion.
    let out = a.git_output(["push", "origin", ":refs/jules/mail"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("deleting a log"), "{}", stderr(&out));
    // A writer ref deleted before it was folded.
    let out = a.git_output([
        "push",
        "origin",
        &format!("{garbage}:refs/jules/writers/mail/00000000000000cc"),
    ]);
    assert!(!out.status.success(), "garbage on a writer ref");
    assert_eq!(bare.rev("refs/jules/mail").unwrap(), tip);
    // Ordinary branches pass, and so does the next sync.
    a.git(["push", "-q", "origin", "main:other"]);
    append(&a, "1");
    a.jules_ok(["sync"]);
    b.jules_ok(["sync"]);
    assert_eq!(a.rev("refs/jules/mail"), b.rev("refs/jules/mail"));
    let _ = stdout;
}

/// Issue 23 through the smart-HTTP remote: clone C's mail lives only on the remote when a commit that is not
/// an event lands on top of the remote's log; A's sync joins that history instead of replacing it, and C's
/// mail stays on the remote (read back by a fresh clone).
#[test]
fn smart_http_sync_keeps_the_events_under_garbage_on_the_remote_log() {
    let root = tempfile::tempdir().unwrap();
    let (origin, bare) = remote_in(root.path());
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let auth = alice_auth();
    let a = Clone::new(&origin, &url, &auth);
    a.ok(
        "alice",
        &[
            "mail",
            "send",
            "--to",
            "carol",
            "--subject",
            "from a",
            "--body",
            "x",
        ],
    );
    a.ok("alice", &["sync"]);
    {
        let c = Clone::new(&origin, &url, &auth);
        c.ok(
            "carol",
            &[
                "mail",
                "send",
                "--to",
                "alice",
                "--subject",
                "only on the remote",
                "--body",
                "x",
            ],
        );
        c.ok("carol", &["sync"]);
    }
    let bare = bare.to_str().unwrap();
    let tip = origin.git(["-C", bare, "rev-parse", "refs/jules/mail"]);
    let garbage = origin.git([
        "-C",
        bare,
        "commit-tree",
        &format!("{tip}^{{tree}}"),
        "-p",
        &tip,
        "-m",
        "hello world, not an event",
    ]);
    origin.git(["-C", bare, "update-ref", "refs/jules/mail", &garbage]);
    let out = a.run("alice", &["sync"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(&garbage), "{}", stderr(&out));
    let fresh = Clone::new(&origin, &url, &auth);
    fresh.ok("alice", &["sync"]);
    let inbox = fresh.ok("alice", &["mail", "inbox", "--persona", "alice"]);
    assert!(inbox.contains("only on the remote"), "{inbox}");
}

/// A simulated forge: a bare repository behind the smart-HTTP server whose pre-receive hook logs every push
/// (one line per push, with its time and refs) and refuses the namespaces a forge keeps for itself
/// (`refs/pull/*`), as GitHub does.
fn forge_in(root: &Path, name: &str) -> PathBuf {
    let bare = root.join(format!("{name}.git"));
    let out = Command::new("git")
        .args(["init", "-q", "--bare", "--initial-branch=main"])
        .arg(&bare)
        .output()
        .unwrap();
    assert!(out.status.success());
    let log = bare.join("pushes.log");
    std::fs::write(
        bare.join("hooks/pre-receive"),
        format!(
            "#!/bin/sh\nrefs=''\nwhile read old new ref; do\n  case \"$ref\" in refs/pull/*) echo \"$ref is read-only on this forge\" >&2; exit 1;; esac\n  refs=\"$refs $ref\"\ndone\necho \"$(date +%s)$refs\" >> {}\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        bare.join("hooks/pre-receive"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    bare
}

fn pushes_to(bare: &Path) -> Vec<String> {
    std::fs::read_to_string(bare.join("pushes.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Issue 29: a coordination remote of its own and a push budget, against a simulated forge over smart HTTP.
/// With `git jules init --remote coord`, the logs never touch the code's forge (no push of a jules ref lands
/// there, plain `git push` of the code carries none); with `jules.sync.minPushInterval`, a clone pushes at most
/// once per interval, batching its news meanwhile, except urgent mail and `sync --now`.
#[test]
fn a_coordination_remote_and_a_push_budget_on_a_simulated_forge() {
    let root = tempfile::tempdir().unwrap();
    let origin = Repo::new();
    let code = forge_in(root.path(), "code");
    let coord = forge_in(root.path(), "coord");
    origin.git(["push", "-q", code.to_str().unwrap(), "main"]);
    let pull = origin.git_output(["push", code.to_str().unwrap(), "main:refs/pull/1/head"]);
    assert!(!pull.status.success(), "the forge refuses refs/pull/*");
    let server = http_server(root.path());
    let url = |name: &str| format!("http://127.0.0.1:{}/git/{name}.git", server.port);
    let auth = alice_auth();
    let a = Clone::new(&origin, &url("code"), &auth);
    let b = Clone::new(&origin, &url("code"), &auth);
    for c in [&a, &b] {
        c.repo.git(["remote", "add", "coord", &url("coord")]);
        c.repo.git(["config", "credential.helper", ALICE_HELPER]);
        c.ok("x", &["init", "--remote", "coord"]);
        assert_eq!(c.repo.git(["config", "jules.remote"]), "coord");
        let origin_push = c
            .repo
            .git_output(["config", "--get-all", "remote.origin.push"]);
        assert!(
            origin_push.stdout.is_empty(),
            "the code's remote is left alone"
        );
    }
    let code_pushes = pushes_to(&code).len();
    a.ok(
        "alice",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "first",
            "--body",
            "x",
        ],
    );
    a.ok("alice", &["sync"]);
    // Plain pushes of the code carry no jules refs either.
    a.repo.write("work.txt", "w\n");
    a.repo.commit_all("work");
    a.repo.git(["push", "-q", "origin", "HEAD:main"]);
    b.ok("bob", &["sync"]);
    assert!(b
        .ok("bob", &["mail", "inbox", "--persona", "bob"])
        .contains("first"));
    let code_log = pushes_to(&code);
    assert_eq!(code_log.len(), code_pushes + 1, "{code_log:?}");
    assert!(
        code_log.iter().all(|l| !l.contains("refs/jules")),
        "{code_log:?}"
    );
    assert!(pushes_to(&coord).iter().all(|l| !l.contains("refs/heads")));

    // A budget: one push per hour for a. Its next news waits, batched, and says when it may go.
    a.repo.git(["config", "jules.sync.minPushInterval", "1h"]);
    let before = pushes_to(&coord).len();
    a.ok(
        "alice",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "second",
            "--body",
            "x",
        ],
    );
    a.ok(
        "alice",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "third",
            "--body",
            "x",
        ],
    );
    // The last push was just now (the first sync): the news waits at least the interval, then for the
    // clone's phase point (within one more interval).
    let doc: serde_json::Value = serde_json::from_str(&a.ok("alice", &["--json", "sync"])).unwrap();
    let wait = doc["push_deferred_secs"].as_u64().expect("deferred");
    assert!(wait > 3000 && wait < 7200, "{doc}");
    let out = a.run("alice", &["sync"]);
    assert!(stderr(&out).contains("push deferred"), "{}", stderr(&out));
    assert_eq!(
        pushes_to(&coord).len(),
        before,
        "no push inside the interval"
    );
    b.ok("bob", &["sync"]);
    assert!(!b
        .ok("bob", &["mail", "inbox", "--persona", "bob"])
        .contains("second"));
    // Urgent mail does not wait, and carries the batched news with it in one push.
    a.ok(
        "alice",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "fire",
            "--body",
            "x",
            "--priority",
            "urgent",
        ],
    );
    a.ok("alice", &["sync"]);
    assert_eq!(pushes_to(&coord).len(), before + 1);
    b.ok("bob", &["sync"]);
    let inbox = b.ok("bob", &["mail", "inbox", "--persona", "bob"]);
    assert!(
        inbox.contains("second") && inbox.contains("third") && inbox.contains("fire"),
        "{inbox}"
    );
    // `--now` pushes whatever the interval; a sync with nothing new pushes nothing at all.
    a.ok(
        "alice",
        &[
            "mail",
            "send",
            "--to",
            "bob",
            "--subject",
            "fourth",
            "--body",
            "x",
        ],
    );
    a.ok("alice", &["sync", "--now"]);
    assert_eq!(pushes_to(&coord).len(), before + 2);
    a.ok("alice", &["sync", "--now"]);
    b.ok("bob", &["sync"]);
    assert_eq!(pushes_to(&coord).len(), before + 2);
    // A malformed interval is bad input.
    a.repo.git(["config", "jules.sync.minPushInterval", "soon"]);
    let out = a.run("alice", &["sync"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("jules.sync.minPushInterval"),
        "{}",
        stderr(&out)
    );
}

/// Path leases (issue 25): two clones race `lease acquire --sync` for overlapping exclusive paths through
/// smart HTTP, held at the remote until both pushes arrive. Exactly one exits 0; the other's push is
/// refused, it looks again and exits 3 naming the holder; after sync both list that one holder.
#[test]
fn lease_acquire_sync_through_smart_http_has_one_winner() {
    let root = tempfile::tempdir().unwrap();
    let (origin, bare) = remote_in(root.path());
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let good = alice_auth();
    let a = Clone::new(&origin, &url, &good);
    let b = Clone::new(&origin, &url, &good);
    for c in [&a, &b] {
        c.ok("x", &["sync"]);
    }
    let spawn = |c: &Clone, who: &str, path: &str| {
        Guarded::spawn(
            c.cmd(
                who,
                &[
                    "--json", "lease", "acquire", path, "--sync", "--reason", who,
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        )
    };
    // Without the barrier the second racer often starts after the first has pushed: it then only fetches
    // and sees the holder, and the refused-push path (a round that repeats) is never run.
    let held = hold_pushes_until(&bare, 2);
    let (ca, cb) = (spawn(&a, "w1", "src/"), spawn(&b, "w2", "src/**/*.rs"));
    let hang = Duration::from_secs(300);
    let (oa, ob) = (ca.wait_output(hang), cb.wait_output(hang));
    release_pushes(&bare);
    assert!(
        pushes_held(&held) >= 2,
        "the acquires did not meet at the remote"
    );
    let codes = [oa.status.code(), ob.status.code()];
    assert!(
        codes == [Some(0), Some(3)] || codes == [Some(3), Some(0)],
        "{codes:?}: {} / {}",
        stderr(&oa),
        stderr(&ob)
    );
    let (winner, loser_out) = if codes[0] == Some(0) {
        ("w1", stdout(&ob))
    } else {
        ("w2", stdout(&oa))
    };
    let loser: serde_json::Value = serde_json::from_str(&loser_out).unwrap();
    assert_eq!(loser["held"], false, "{loser}");
    assert_eq!(loser["final"], true, "decided through the remote: {loser}");
    assert_eq!(loser["holders"][0]["persona"], winner, "{loser}");
    for c in [&a, &b] {
        c.ok("x", &["sync"]);
        let v: serde_json::Value =
            serde_json::from_str(&c.ok("x", &["--json", "lease", "list"])).unwrap();
        let holders: Vec<&str> = v["leases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["persona"].as_str().unwrap())
            .collect();
        assert_eq!(holders, [winner], "{v}");
        assert_eq!(v["leases"][0]["lock"], true);
    }
}
