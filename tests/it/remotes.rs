//! Sync through real remotes: smart HTTP (`git http-backend` behind lighttpd, basic auth answered by a
//! credential helper), `git daemon`, ssh through a `GIT_SSH_COMMAND` that runs the command locally; 100 clones
//! syncing at once; hygiene over 300 syncs; the guard hook. Servers are started on 127.0.0.1 by the tests and
//! stopped by them.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::harness::{bin, json_items, stderr, stdout, Repo};

/// A server process killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited early: {status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
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
fn http_server(root: &Path) -> Server {
    let lighttpd = ["/usr/sbin/lighttpd", "/usr/bin/lighttpd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("lighttpd is required (CI installs it with .ci/setup.d/remotes.sh)");
    let backend = String::from_utf8(
        Command::new("git")
            .arg("--exec-path")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_owned()
        + "/git-http-backend";
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
    let mut child = Command::new(lighttpd)
        .args(["-D", "-f"])
        .arg(&conf_path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child, "lighttpd");
    Server { child, port }
}

fn git_daemon(root: &Path) -> Server {
    let port = free_port();
    let mut child = Command::new("git")
        .args([
            "daemon",
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
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child, "git daemon");
    Server { child, port }
}

/// A bare repository `root/remote.git` holding `main`, and a work repository to clone with.
fn remote_in(root: &Path) -> (Repo, PathBuf) {
    let origin = Repo::new();
    let bare = root.join("remote.git");
    origin.git(["init", "-q", "--bare", bare.to_str().unwrap()]);
    origin.git(["push", "-q", bare.to_str().unwrap(), "main"]);
    (origin, bare)
}

/// A clone of `url`, with `envs` applied to every command the test runs in it.
struct Clone {
    repo: Repo,
    envs: Vec<(String, String)>,
}

impl Clone {
    fn new(origin: &Repo, url: &str, envs: &[(&str, &str)]) -> Clone {
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

    fn cmd(&self, persona: &str, args: &[&str]) -> Command {
        let mut cmd = self.repo.jules_cmd(args);
        cmd.envs(self.envs.iter().map(|(k, v)| (k, v)))
            .env("JULES_PERSONA", persona);
        cmd
    }

    fn run(&self, persona: &str, args: &[&str]) -> Output {
        self.cmd(persona, args).output().unwrap()
    }

    fn ok(&self, persona: &str, args: &[&str]) -> String {
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

/// What every transport must carry: mail both ways through `sync`, and a group claim with one winner.
fn exchange_and_claim(a: &Clone, b: &Clone) {
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
        c.cmd(
            who,
            &["mail", "claim", &task[..12], "--persona", who, "--sync"],
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    };
    let (ca, cb) = (spawn(a, "w1"), spawn(b, "w2"));
    let (oa, ob) = (
        ca.wait_with_output().unwrap(),
        cb.wait_with_output().unwrap(),
    );
    let codes = [oa.status.code(), ob.status.code()];
    assert!(
        codes == [Some(0), Some(3)] || codes == [Some(3), Some(0)],
        "{codes:?}: {} / {}",
        stderr(&oa),
        stderr(&ob)
    );
}

fn refs_of(r: &Repo) -> String {
    r.git(["for-each-ref"])
}

#[test]
fn smart_http_with_basic_auth_through_a_credential_helper() {
    let root = tempfile::tempdir().unwrap();
    let (origin, _bare) = remote_in(root.path());
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let helper = "!f() { test \"$1\" = get && echo username=alice && echo password=secret; }; f";
    let good = [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "credential.helper"),
        ("GIT_CONFIG_VALUE_0", helper),
    ];
    let a = Clone::new(&origin, &url, &good);
    let b = Clone::new(&origin, &url, &good);
    exchange_and_claim(&a, &b);

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
    let (origin, _bare) = remote_in(root.path());
    let server = git_daemon(root.path());
    let url = format!("git://127.0.0.1:{}/remote.git", server.port);
    let a = Clone::new(&origin, &url, &[]);
    let b = Clone::new(&origin, &url, &[]);
    exchange_and_claim(&a, &b);
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
    exchange_and_claim(&a, &b);
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
    let started = Instant::now();
    let children: Vec<Child> = clones
        .iter()
        .map(|c| {
            c.jules_cmd(["--json", "sync"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut failed = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        if !out.status.success() {
            failed.push(stderr(&out));
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed: {:?}",
        failed.len(),
        failed.first()
    );
    assert!(started.elapsed() < Duration::from_secs(240));
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
    let log = git_jules::eventlog::Log::open(&wrepo, "mail").unwrap();
    for i in 0..300 {
        // The writer appends in-process and pushes with plain git: only the reader's 300 syncs are measured.
        log.append(git_jules::eventlog::NewEvent::new(
            git_jules::eventlog::Event::new(
                "t.tick",
                format!("w{}", i % 7),
                serde_json::json!({ "i": i }),
            ),
        ))
        .unwrap();
        writer.git(["push", "-q", "origin", "refs/jules/mail:refs/jules/mail"]);
        reader.jules_ok(["sync"]);
        let c = git_jules::hygiene::counts(&crate::harness::open(reader.path()));
        worst = (worst.0.max(c.packs), worst.1.max(c.loose));
    }
    assert!(worst.0 <= git_jules::hygiene::MAX_PACKS + 1, "{worst:?}");
    assert!(worst.1 <= git_jules::hygiene::MAX_LOOSE + 100, "{worst:?}");
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

/// Path leases (issue 25): two clones race `lease acquire --sync` for overlapping exclusive paths through
/// smart HTTP. Exactly one exits 0; the other exits 3 naming the holder; after sync both list that one holder.
#[test]
fn lease_acquire_sync_through_smart_http_has_one_winner() {
    let root = tempfile::tempdir().unwrap();
    let (origin, _bare) = remote_in(root.path());
    let server = http_server(root.path());
    let url = format!("http://127.0.0.1:{}/git/remote.git", server.port);
    let helper = "!f() { test \"$1\" = get && echo username=alice && echo password=secret; }; f";
    let good = [
        ("GIT_CONFIG_COUNT", "1"),
        ("GIT_CONFIG_KEY_0", "credential.helper"),
        ("GIT_CONFIG_VALUE_0", helper),
    ];
    let a = Clone::new(&origin, &url, &good);
    let b = Clone::new(&origin, &url, &good);
    let spawn = |c: &Clone, who: &str, path: &str| {
        c.cmd(who, &["lease", "acquire", path, "--sync", "--reason", who])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (ca, cb) = (spawn(&a, "w1", "src/"), spawn(&b, "w2", "src/**/*.rs"));
    let (oa, ob) = (
        ca.wait_with_output().unwrap(),
        cb.wait_with_output().unwrap(),
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
    assert!(loser_out.contains("held by: "), "{loser_out}");
    assert!(loser_out.contains(winner), "{loser_out}");
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
