//! Helpers range-diff's unit tests share (built for tests only): a repository in a temporary directory where
//! series are built commit by commit with git, and git's own `range-diff` and `log -p` as the oracles.
//!
//! git runs in this process's environment, as the code under test does (`read_patches` starts git, gix reads
//! the same configuration files), so the two see the same settings; only the identity and the dates are fixed
//! here, so that a failure names the same commits on every run.

use std::path::Path;
use std::process::{Command, Output};

use gix::ObjectId;

use super::PatchText;

pub struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    /// An empty repository on `main`.
    pub fn new() -> Repo {
        let r = Repo {
            dir: tempfile::tempdir().unwrap(),
        };
        r.git(&["init", "-q", "-b", "main"]);
        r
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn git_output(&self, args: &[&str]) -> Output {
        Command::new("git")
            .current_dir(self.path())
            .args(args)
            .env("GIT_AUTHOR_NAME", "A U Thor")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "C O Mitter")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", "2020-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2020-01-01T00:00:00Z")
            .output()
            .unwrap()
    }

    /// git's stdout; a failed run fails the test.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Write `text` to `path` (directories made as needed); `None` removes the file.
    pub fn write(&self, path: &str, text: Option<&str>) {
        let p = self.path().join(path);
        match text {
            Some(t) => {
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, t).unwrap();
            }
            None => std::fs::remove_file(p).unwrap(),
        }
    }

    /// Commit everything in the work tree with `message` kept as it is; the new commit's id.
    pub fn commit(&self, message: &str) -> String {
        self.git(&["add", "-A"]);
        self.git(&[
            "commit",
            "-q",
            "--allow-empty",
            "--allow-empty-message",
            "--cleanup=verbatim",
            "-m",
            message,
        ]);
        self.head()
    }

    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_owned()
    }

    /// Check out a new branch `name` at `at` (the work tree follows).
    pub fn branch(&self, name: &str, at: &str) {
        self.git(&["checkout", "-q", "-B", name, at]);
    }

    pub fn oid(&self, rev: &str) -> ObjectId {
        ObjectId::from_hex(self.git(&["rev-parse", rev]).trim().as_bytes()).unwrap()
    }

    /// The patch texts of `base..tip` as parsed from `git log` (the path `series range-diff` takes when it
    /// cannot make them itself).
    pub fn logged(&self, base: &str, tip: &str) -> Vec<PatchText> {
        super::read_patches(self.path(), self.oid(base), self.oid(tip)).unwrap()
    }

    /// Write a commit object as it is (`text` from its `tree` header on), on no ref; its id.
    pub fn commit_object(&self, text: &str) -> String {
        self.write(".git/raw-commit", Some(text));
        let id = self.git(&["hash-object", "-t", "commit", "-w", ".git/raw-commit"]);
        self.write(".git/raw-commit", None);
        id.trim().to_owned()
    }

    pub fn open(&self) -> gix::Repository {
        gix::open(self.path()).unwrap()
    }
}
