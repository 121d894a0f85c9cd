//! `--verify CMD`: run the command on woven tips through the verify runner (temporary worktrees, results
//! cached as notes on the tree), and find the first woven input that breaks it by bisection.
//!
//! The boundaries are the tips right after each woven input, `b_1 … b_n`, and the starting point `b_0`.
//! Given that `b_n` fails, the culprit is the smallest `i` whose `b_i` fails, assuming failures persist
//! once introduced; about `log2(n)` runs find it, and every run is cached by tree, so re-weaving the rest
//! (which rebuilds the same trees before the culprit) costs nothing for them. When the culprit would be the
//! first input, `b_0` is checked too: if the starting point fails already, no input is blamed.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use gix::ObjectId;

use crate::capabilities::series::{Base, BaseSource};
use crate::capabilities::verify::{self, Outcome};
use crate::kit::error::Result;

#[derive(Debug, Clone)]
pub struct Options {
    pub command: String,
    /// Where the temporary worktrees go, best first.
    pub scratch_dirs: Vec<PathBuf>,
    /// Ignore cached results.
    pub force: bool,
}

/// The result of one commit.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub pass: bool,
    pub exit_code: Option<i32>,
    pub tail: Option<String>,
}

pub struct Verifier<'a> {
    pub repo: &'a gix::Repository,
    pub opts: &'a Options,
    pub interrupt: &'a AtomicBool,
    /// Commands run or answered from the cache.
    pub checks: usize,
}

impl Verifier<'_> {
    /// Verify one commit (its objects must be on disk). `None`: interrupted.
    pub fn check(&mut self, commit: ObjectId) -> Result<Option<Verdict>> {
        let Some(parent) = self
            .repo
            .find_commit(commit)?
            .parent_ids()
            .next()
            .map(|p| p.detach())
        else {
            // A root commit has no range to run in; it is where everything starts, so it counts as good.
            return Ok(Some(Verdict {
                pass: true,
                exit_code: None,
                tail: None,
            }));
        };
        self.checks += 1;
        let base = Base {
            name: "weave".into(),
            commit: parent,
            source: BaseSource::Explicit,
        };
        let opts = verify::Options {
            command: self.opts.command.clone(),
            jobs: 1,
            keep_going: false,
            force: self.opts.force,
            scratch_dirs: self.opts.scratch_dirs.clone(),
        };
        let report = verify::verify(self.repo, base, commit, &opts, self.interrupt, &|_| {})?;
        if report.interrupted {
            return Ok(None);
        }
        let r = report
            .commits
            .last()
            .expect("one commit between a commit and its parent");
        Ok(Some(Verdict {
            pass: r.result == Outcome::Pass,
            exit_code: r.exit_code,
            tail: r.tail.clone(),
        }))
    }

    /// Given `boundaries[0]` = the start and `boundaries[i]` the tip after the i-th woven input, with the last
    /// one failing as `last`: the 1-based culprit and its verdict, or `None` when the start fails too.
    /// `Err(None)`-like interruption is reported as `Ok(Err(()))`.
    pub fn culprit(
        &mut self,
        boundaries: &[ObjectId],
        last: Verdict,
    ) -> Result<std::result::Result<Option<(usize, Verdict)>, ()>> {
        let n = boundaries.len() - 1;
        let (mut lo, mut hi) = (0usize, n);
        let mut hi_verdict = last;
        while hi - lo > 1 {
            let mid = (lo + hi) / 2;
            let Some(v) = self.check(boundaries[mid])? else {
                return Ok(Err(()));
            };
            if v.pass {
                lo = mid;
            } else {
                hi = mid;
                hi_verdict = v;
            }
        }
        if hi == 1 && lo == 0 {
            let Some(v) = self.check(boundaries[0])? else {
                return Ok(Err(()));
            };
            if !v.pass {
                return Ok(Ok(None));
            }
        }
        Ok(Ok(Some((hi, hi_verdict))))
    }
}
