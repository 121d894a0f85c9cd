//! The shared test harness: hermetic temporary repositories, real `git` and the real `git-jules` binary.
//!
//! Every process runs with a temporary HOME, no system or global git config but the harness's own (fixed
//! identity, `init.defaultBranch=main`), `TZ=UTC` and no colour, so results do not depend on the machine.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The path of the binary under test (built by cargo for integration tests).
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_git-jules"))
}

/// A directory put first on PATH with `git-jules` in it, so `git jules …` reaches the binary under test.
fn path_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("git-jules-test-bin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("git-jules");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(bin(), &link).unwrap();
        dir
    })
}

/// The hermetic environment shared by every process a test starts.
pub struct Env {
    pub home: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n\
             [advice]\n\tdetachedHead = false\n[protocol \"file\"]\n\tallow = always\n",
        )
        .unwrap();
        Env { home }
    }

    pub fn apply<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        let path = format!(
            "{}:{}",
            path_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.env("HOME", self.home.path())
            .env("GIT_CONFIG_GLOBAL", self.home.path().join(".gitconfig"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TZ", "UTC")
            .env("NO_COLOR", "1")
            .env("PATH", path)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("JULES_PERSONA")
            .env_remove("GIT_EDITOR")
            .env_remove("VISUAL")
            .env_remove("EDITOR")
            .stdin(Stdio::null())
    }
}

/// A repository in a temporary directory (work tree, or bare).
pub struct Repo {
    pub env: std::rc::Rc<Env>,
    pub dir: tempfile::TempDir,
}

impl Repo {
    /// A new non-bare repository on branch `main` with one commit (`README`).
    pub fn new() -> Repo {
        let r = Repo::empty();
        r.write("README", "hello\n");
        r.git(["add", "-A"]);
        r.git(["commit", "-qm", "initial"]);
        r
    }

    /// `git init` and nothing else.
    pub fn empty() -> Repo {
        let env = std::rc::Rc::new(Env::new());
        let dir = tempfile::tempdir().unwrap();
        let r = Repo { env, dir };
        r.git(["init", "-q"]);
        r
    }

    /// A repository, a bare remote `origin` it pushed `main` to, and a clone of that remote.
    pub fn with_clone() -> (Repo, Repo, Repo) {
        let a = Repo::new();
        let bare = a.bare_sibling();
        a.git(["remote", "add", "origin", bare.path().to_str().unwrap()]);
        a.git(["push", "-q", "origin", "main"]);
        let b = a.clone_of(bare.path());
        (a, bare, b)
    }

    /// A bare repository sharing this repository's environment.
    pub fn bare_sibling(&self) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let r = Repo {
            env: self.env.clone(),
            dir,
        };
        r.git(["init", "-q", "--bare"]);
        r
    }

    /// A clone of `url` sharing this repository's environment.
    pub fn clone_of(&self, url: &Path) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let r = Repo {
            env: self.env.clone(),
            dir,
        };
        let out = self.raw_git(
            [
                OsStr::new("clone"),
                OsStr::new("-q"),
                url.as_os_str(),
                r.path().as_os_str(),
            ],
            self.dir.path(),
        );
        assert!(out.status.success(), "clone failed: {}", stderr(&out));
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn write(&self, rel: &str, content: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }

    fn raw_git<I, S>(&self, args: I, dir: &Path) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        self.env.apply(&mut cmd);
        cmd.current_dir(dir).args(args).output().unwrap()
    }

    /// Run git in the repository; panic with its stderr unless it succeeds; return stdout trimmed.
    pub fn git<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let out = self.raw_git(&args, self.path());
        assert!(
            out.status.success(),
            "git {:?} failed: {}",
            args.iter()
                .map(|a| a.as_ref().to_owned())
                .collect::<Vec<_>>(),
            stderr(&out)
        );
        stdout(&out).trim_end().to_owned()
    }

    /// A `git` command in this repository with the harness environment, to be configured further and run.
    pub fn git_cmd<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new("git");
        self.env.apply(&mut cmd);
        cmd.current_dir(self.path()).args(args);
        cmd
    }

    /// Run git and return its output whatever the exit code.
    pub fn git_output<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.raw_git(args, self.path())
    }

    /// A `git-jules` command in this repository, to be configured further (env, stdin) and run.
    pub fn jules_cmd<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = Command::new(bin());
        self.env.apply(&mut cmd);
        cmd.current_dir(self.path()).args(args);
        cmd
    }

    /// Run `git-jules ARGS` with the commit time pinned to `date` (`GIT_COMMITTER_DATE` and
    /// `GIT_AUTHOR_DATE`, any form git accepts, e.g. `2030-01-01T00:00:00Z`): commits it writes are the same
    /// at every run, and two runs pinned to different dates never write the same commit.
    pub fn jules_at<I, S>(&self, date: &str, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.jules_cmd(args)
            .env("GIT_COMMITTER_DATE", date)
            .env("GIT_AUTHOR_DATE", date)
            .output()
            .unwrap()
    }

    /// Run `git-jules ARGS`, whatever the exit code.
    pub fn jules<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.jules_cmd(args).output().unwrap()
    }

    /// Run `git-jules ARGS`, panic unless it exits 0, return stdout.
    pub fn jules_ok<I, S>(&self, args: I) -> String
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let args: Vec<S> = args.into_iter().collect();
        let out = self.jules(&args);
        assert!(
            out.status.success(),
            "git-jules {:?} exited {:?}\nstdout: {}\nstderr: {}",
            args.iter()
                .map(|a| a.as_ref().to_owned())
                .collect::<Vec<_>>(),
            out.status.code(),
            stdout(&out),
            stderr(&out)
        );
        stdout(&out)
    }

    /// `mail send` from `from` to `to` (more options in `extra`); the new message's id.
    pub fn send_mail(
        &self,
        from: &str,
        to: &str,
        subject: &str,
        body: &str,
        extra: &[&str],
    ) -> String {
        let mut args = vec!["mail", "send", "--from", from, "--to", to];
        args.extend(["--subject", subject, "--body", body]);
        args.extend_from_slice(extra);
        self.jules_ok(args).trim().to_owned()
    }

    /// Commit everything in the work tree with `message`; return the new commit id.
    pub fn commit_all(&self, message: &str) -> String {
        self.git(["add", "-A"]);
        self.git(["commit", "-qm", message]);
        self.git(["rev-parse", "HEAD"])
    }

    /// The object id a ref points at, or None.
    pub fn rev(&self, rev: &str) -> Option<String> {
        let out = self.git_output(["rev-parse", "--verify", "-q", rev]);
        out.status.success().then(|| stdout(&out).trim().to_owned())
    }
}

/// Run `cmd` with `input` on its standard input; return its output (stdout and stderr captured).
pub fn with_stdin(cmd: &mut Command, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Open a repository with the library, for library-level assertions inside integration tests.
pub fn open(path: &Path) -> gix::Repository {
    gix::open(path).unwrap()
}

/// The list of a `--json` list document (`{"version": 1, "items": [...]}`, docs/json.md).
pub fn json_items(out: &str) -> Vec<serde_json::Value> {
    let doc: serde_json::Value =
        serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"));
    assert_eq!(doc["version"], 1, "{out}");
    doc["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {out}"))
        .clone()
}

/// A child process started in a process group of its own and killed with its whole group (SIGKILL) when
/// dropped, on every path, panics included. A group, because what a test starts often forks: `git daemon`
/// is the `git` wrapper running `git-daemon`, lighttpd runs `git http-backend`, `git jules` runs `git`.
pub struct Guarded {
    pub child: std::process::Child,
}

impl Guarded {
    /// Spawn `cmd` in a new process group, guarded from the moment it exists.
    pub fn spawn(cmd: &mut Command) -> Guarded {
        use std::os::unix::process::CommandExt;
        let child = cmd
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        Guarded { child }
    }

    /// Wait for the child and collect its output; after `limit` (a bound that only catches hangs, never a
    /// latency target) kill its group and panic.
    pub fn wait_output(mut self, limit: std::time::Duration) -> Output {
        // Both pipes are read on threads of their own, so a chatty child never blocks on a full pipe.
        fn drain(
            pipe: Option<impl std::io::Read + Send + 'static>,
        ) -> std::thread::JoinHandle<Vec<u8>> {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut buf);
                }
                buf
            })
        }
        let out_t = drain(self.child.stdout.take());
        let err_t = drain(self.child.stderr.take());
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                self.kill_group();
                panic!(
                    "{} did not finish within {limit:?} (a hang)",
                    self.child.id()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        // The child's own children may still hold the pipes: the group goes before the readers are joined.
        self.kill_group();
        Output {
            status,
            stdout: out_t.join().unwrap(),
            stderr: err_t.join().unwrap(),
        }
    }

    /// SIGKILL every process of the group (the child's pid is the group's id).
    pub fn kill_group(&mut self) {
        if let Some(group) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        self.kill_group();
    }
}

/// Run `cmd` (stdout and stderr captured) in its own process group; kill the group and panic after
/// `limit`, a bound that only catches hangs.
pub fn output_within(cmd: &mut Command, limit: std::time::Duration) -> Output {
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    Guarded::spawn(cmd).wait_output(limit)
}

/// Make the bare repository at `bare` hold every push in its pre-receive hook until `racers` pushes are
/// held at once (then all go on, and every later push passes). A race test installs it before starting
/// its racers: they then provably overlap at the remote, where a lone racer would otherwise often finish
/// before the other started. Returns the directory of marks, one file per push that reached the hook.
/// The wait gives up after about two minutes (a bound that only catches a racer that never pushes) and
/// refuses the push.
pub fn hold_pushes_until(bare: &Path, racers: usize) -> tempfile::TempDir {
    let marks = tempfile::tempdir().unwrap();
    let hook = bare.join("hooks/pre-receive");
    std::fs::create_dir_all(hook.parent().unwrap()).unwrap();
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ncat >/dev/null\nm='{}'\ntouch \"$m/$$\"\nn=0\n\
             while [ \"$(ls \"$m\" | wc -l)\" -lt {racers} ]; do\n\
             n=$((n + 1)); [ $n -gt 2400 ] && {{ echo 'the other racer never pushed' >&2; exit 1; }}\n\
             sleep 0.05\ndone\n",
            marks.path().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    marks
}

/// How many pushes reached a `hold_pushes_until` hook.
pub fn pushes_held(marks: &tempfile::TempDir) -> usize {
    std::fs::read_dir(marks.path()).unwrap().count()
}

/// The file each skipped test appends a line to (`test<TAB>why`): `JULES_TEST_SKIPS`, else
/// `target/test-skips.log` under the crate. `./test.sh` empties it before the run and sums it up after.
pub fn skips_file() -> PathBuf {
    std::env::var_os("JULES_TEST_SKIPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-skips.log"))
}

/// Whether CI runs the suite (`CI=true`, as GitHub Actions, GitLab and most runners set it).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether the running test must stop because `what` it needs is missing (`present` false). Never silent:
/// under CI, which provides every need (`.ci/setup.d/`), a missing one fails the test; elsewhere the skip
/// is appended to `skips_file()` (so `./test.sh` counts it and says why) and on stderr, and the caller
/// returns. Use as `if harness::skipped_for_want_of(path.exists(), "the ripgrep corpus") { return; }`.
pub fn skipped_for_want_of(present: bool, what: &str) -> bool {
    if present {
        return false;
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_owned();
    assert!(
        !in_ci(),
        "{test}: {what} is missing, and CI must provide it (see .ci/setup.d/)"
    );
    let file = skips_file();
    if let Some(dir) = file.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    use std::io::Write;
    let line = format!("{test}\t{what} is missing\n");
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .unwrap_or_else(|e| panic!("cannot record the skip in {}: {e}", file.display()));
    eprintln!("SKIPPED {test}: {what} is missing");
    true
}

/// Whether `tool` is an executable file on PATH.
pub fn on_path(tool: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(tool))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}
