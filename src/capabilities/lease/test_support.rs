//! Helpers the lease use cases' unit tests share (built for tests only): real repositories in a temporary
//! directory (bare ones for the log, a bare remote with bare clones for `--sync`, a work tree for ranges
//! and the index), made through the `git` binary as production does, and what a use case left behind: the
//! events of the lease log and the mails it sent. Time is always an argument: no test reads the clock.

use std::path::{Path, PathBuf};

use super::ops::AcquireRequest;
use crate::store::eventlog::Log;

/// `git ARGS` in `dir`; its trimmed stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = crate::kit::gitcli::run(dir, args).unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A bare repository `name.git` under `dir`.
pub fn bare(dir: &Path, name: &str) -> gix::Repository {
    gix::init_bare(dir.join(format!("{name}.git"))).unwrap()
}

/// A bare repository `name.git` under `dir` with `config` set (`key`, `value`, through `git config`) before
/// it is opened.
pub fn bare_with(dir: &Path, name: &str, config: &[(&str, &str)]) -> gix::Repository {
    let path = dir.join(format!("{name}.git"));
    gix::init_bare(&path).unwrap();
    for (k, v) in config {
        git(&path, &["config", k, v]);
    }
    gix::open(&path).unwrap()
}

/// The moment [`PINNED`] pins, in Unix seconds.
pub const PINNED_AT: i64 = 1_893_456_000;

/// `gitoxide.commit.committerDate`, the clock every use case of [`super::api`] reads (`lease::now`), pinned
/// in the repository's own configuration to [`PINNED_AT`].
pub const PINNED: (&str, &str) = ("gitoxide.commit.committerDate", "2030-01-01T00:00:00Z");

/// The bare remote `remote.git` under `dir` (made once; every clone's `origin`).
pub fn remote(dir: &Path) -> PathBuf {
    let path = dir.join("remote.git");
    if !path.exists() {
        git(dir, &["init", "-q", "--bare", "remote.git"]);
    }
    path
}

/// A bare clone `name.git` under `dir` whose `origin` is [`remote`] (opened after the remote is
/// configured, as the sync's tests do).
pub fn clone(dir: &Path, name: &str) -> gix::Repository {
    let remote = remote(dir);
    let path = dir.join(format!("{name}.git"));
    gix::init_bare(&path).unwrap();
    git(
        &path,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    gix::open(&path).unwrap()
}

/// A repository with a work tree at `dir/name`, with a committer, and `config` set (`key`, `value`) before
/// it is opened; no commit yet.
pub fn worktree(dir: &Path, name: &str, config: &[(&str, &str)]) -> (PathBuf, gix::Repository) {
    let path = dir.join(name);
    git(dir, &["init", "-q", "-b", "main", name]);
    for (k, v) in [("user.name", "T"), ("user.email", "t@example.com")]
        .iter()
        .chain(config)
    {
        git(&path, &["config", k, v]);
    }
    let repo = gix::open(&path).unwrap();
    (path, repo)
}

/// Write `files` (path, text) into the work tree `dir`, stage everything and commit; the new commit.
pub fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> gix::ObjectId {
    for (f, text) in files {
        let p = dir.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
    git(dir, &["rev-parse", "HEAD"]).parse().unwrap()
}

/// A request of `persona` for `paths`, exclusive or shared, for `ttl` seconds, no reason or task.
pub fn req(persona: &str, paths: &[&str], exclusive: bool, ttl: i64) -> AcquireRequest {
    AcquireRequest {
        persona: persona.into(),
        paths: paths.iter().map(|p| p.to_string()).collect(),
        exclusive,
        ttl,
        reason: None,
        task: None,
    }
}

/// Every event of the log `name` in `repo`, in the log's total order: (kind, actor, data).
pub fn events_of(repo: &gix::Repository, name: &str) -> Vec<(String, String, serde_json::Value)> {
    let log = Log::open(repo, name).unwrap();
    if log.tips().unwrap().is_empty() {
        return Vec::new();
    }
    let (events, invalid) = log.read_all().unwrap();
    assert!(invalid.is_empty(), "{invalid:?}");
    events
        .into_iter()
        .map(|e| (e.event.kind, e.event.actor, e.event.data))
        .collect()
}

/// The lease log's events: (kind, actor, data).
pub fn lease_events(repo: &gix::Repository) -> Vec<(String, String, serde_json::Value)> {
    events_of(repo, super::LOG)
}

/// A mail as its send event says it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    pub subject: String,
    pub body: String,
    pub msg_type: String,
    pub tags: Vec<String>,
    pub thread: Option<String>,
}

/// Every mail sent in `repo`, in the log's order.
pub fn mails(repo: &gix::Repository) -> Vec<Mail> {
    events_of(repo, crate::capabilities::mail::LOG)
        .into_iter()
        .filter(|(kind, _, _)| kind == crate::capabilities::mail::kinds::SEND)
        .map(|(_, from, d)| {
            let d: crate::capabilities::mail::kinds::SendData = serde_json::from_value(d).unwrap();
            Mail {
                from,
                to: d.to,
                subject: d.subject,
                body: d.body,
                msg_type: d.msg_type,
                tags: d.tags,
                thread: d.thread,
            }
        })
        .collect()
}
