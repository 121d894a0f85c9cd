//! Bisect-safe verification: run a command on every commit of `base..tip` without touching the user's
//! working tree, index or HEAD.
//!
//! Commits answered by the notes cache ([`cache`]) are not run. The others go to up to `jobs` workers in
//! series order; each worker owns one temporary worktree ([`pool`]) that it moves from commit to commit and
//! runs the command there ([`exec`]). Without `keep_going` the run stops at the first failure *in series
//! order*: commits after the earliest known failure are not started, and running ones are cancelled; commits
//! before it keep running, since one of them may fail too and would then be the first failure. New results
//! are written to the cache in one notes commit at the end, also when interrupted.

pub mod cache;
pub mod exec;
pub mod pool;
pub mod report;
pub mod settings;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use gix::ObjectId;

use crate::capabilities::base::{Base, Patch};
use crate::kit::abbrev::Abbreviator;
use crate::kit::error::{Error, Result};

pub use report::{CommitResult, Outcome, Report};
pub use settings::{Overrides, Settings};

/// Lines and bytes of output kept for a failure.
const TAIL_LINES: usize = 40;
const TAIL_BYTES: u64 = 8 * 1024;

#[derive(Debug, Clone)]
pub struct Options {
    /// Run with `sh -c` in the root of a checkout of each commit.
    pub command: String,
    /// Commits run at once (at least 1).
    pub jobs: usize,
    /// Run every commit even after a failure.
    pub keep_going: bool,
    /// Ignore cached results (new results are still recorded).
    pub force: bool,
    /// Where to put the temporary worktrees, best first; the first that accepts a new directory is used.
    pub scratch_dirs: Vec<PathBuf>,
}

/// Verify every commit of `base..tip`. `on_result` sees each result as soon as it is known (cached ones
/// first); `interrupt` stops the run: running commands are terminated, worktrees removed, and the report says
/// `interrupted`.
pub fn verify(
    repo: &gix::Repository,
    base: Base,
    tip: ObjectId,
    opts: &Options,
    interrupt: &AtomicBool,
    on_result: &(dyn Fn(&CommitResult) + Sync),
) -> Result<Report> {
    if opts.command.trim().is_empty() {
        return Err(Error::usage("the verify command is empty"));
    }
    let started = Instant::now();
    pool::remove_leftovers(repo);
    let patches = crate::capabilities::base::patches(repo, base.commit, tip)?;
    let key = cache::command_key(&opts.command);
    let mut results: Vec<Option<CommitResult>> = vec![None; patches.len()];
    let mut todo = Vec::new();
    let mut cached = 0;
    let mut cache = cache::Cache::open(repo)?;
    let abbrev = Abbreviator::new(repo);
    for (i, p) in patches.iter().enumerate() {
        let hit = if opts.force {
            None
        } else {
            cache.get(repo, p.tree, &key)?
        };
        match hit {
            Some(entry) => {
                let r = CommitResult {
                    index: p.index,
                    commit: p.commit,
                    short: abbrev.short(p.commit),
                    tree: p.tree,
                    summary: p.summary.clone(),
                    result: match entry.result {
                        cache::Verdict::Pass => Outcome::Pass,
                        cache::Verdict::Fail => Outcome::Fail,
                    },
                    cached: true,
                    duration_ms: Some(entry.duration_ms),
                    exit_code: entry.exit_code,
                    tail: entry.tail,
                };
                on_result(&r);
                results[i] = Some(r);
                cached += 1;
            }
            None => todo.push(i),
        }
    }
    let first_cached_failure = results
        .iter()
        .position(|r| r.as_ref().is_some_and(|r| r.result == Outcome::Fail));
    if !opts.keep_going {
        if let Some(f) = first_cached_failure {
            todo.retain(|&i| i < f);
        }
    }

    let jobs = opts.jobs.max(1).min(todo.len());
    let mut fresh = Vec::new();
    if jobs > 0 {
        let shared = Shared {
            patches: &patches,
            todo: &todo,
            next: AtomicUsize::new(0),
            stop_at: AtomicUsize::new(first_cached_failure.unwrap_or(usize::MAX)),
            abort: AtomicBool::new(false),
            error: Mutex::new(None),
            results: Mutex::new(Vec::new()),
            interrupt,
            opts,
            on_result,
            abbrev: &abbrev,
        };
        let pool = pool::Pool::new(repo, &opts.scratch_dirs)?;
        std::thread::scope(|s| {
            for n in 1..=jobs {
                let (shared, pool) = (&shared, &pool);
                s.spawn(move || shared.worker(n, pool));
            }
        });
        let closed = pool.close();
        for (i, r) in shared
            .results
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
        {
            fresh.push((patches[i].tree, entry_for(&opts.command, &r)));
            results[i] = Some(r);
        }
        if let Some(e) = shared.error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            // Keep what was measured before the failure; the error is what the user needs to see.
            let _ = cache::store(repo, &fresh);
            return Err(e);
        }
        closed?;
    }
    cache::store(repo, &fresh)?;

    let commits: Vec<CommitResult> = results
        .into_iter()
        .zip(&patches)
        .map(|(r, p)| {
            r.unwrap_or_else(|| CommitResult {
                index: p.index,
                commit: p.commit,
                short: abbrev.short(p.commit),
                tree: p.tree,
                summary: p.summary.clone(),
                result: Outcome::Skipped,
                cached: false,
                duration_ms: None,
                exit_code: None,
                tail: None,
            })
        })
        .collect();
    let interrupted = interrupt.load(Ordering::SeqCst);
    Ok(Report {
        version: report::REPORT_VERSION,
        command: opts.command.clone(),
        tip,
        passed: !interrupted && commits.iter().all(|c| c.result == Outcome::Pass),
        first_failure: commits
            .iter()
            .find(|c| c.result == Outcome::Fail)
            .map(|c| c.index),
        interrupted,
        keep_going: opts.keep_going,
        jobs,
        ran: fresh.len(),
        cached,
        duration_ms: started.elapsed().as_millis() as u64,
        commits,
        base,
    })
}

/// State shared by the workers of one run.
struct Shared<'a> {
    patches: &'a [Patch],
    /// Positions (0-based) of the commits to run, in series order.
    todo: &'a [usize],
    next: AtomicUsize,
    /// The position of the earliest failure seen so far (`usize::MAX`: none).
    stop_at: AtomicUsize,
    /// An infrastructure error happened: everyone stops.
    abort: AtomicBool,
    error: Mutex<Option<Error>>,
    results: Mutex<Vec<(usize, CommitResult)>>,
    interrupt: &'a AtomicBool,
    opts: &'a Options,
    on_result: &'a (dyn Fn(&CommitResult) + Sync),
    abbrev: &'a Abbreviator,
}

impl Shared<'_> {
    fn stopping(&self) -> bool {
        self.interrupt.load(Ordering::SeqCst) || self.abort.load(Ordering::SeqCst)
    }

    fn superseded(&self, i: usize) -> bool {
        !self.opts.keep_going && self.stop_at.load(Ordering::SeqCst) < i
    }

    fn worker(&self, n: usize, pool: &pool::Pool) {
        if let Err(e) = self.work(n, pool) {
            self.abort.store(true, Ordering::SeqCst);
            if !self.interrupt.load(Ordering::SeqCst) {
                let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
                slot.get_or_insert(e);
            }
        }
    }

    fn work(&self, n: usize, pool: &pool::Pool) -> Result<()> {
        let mut worktree: Option<pool::Worktree> = None;
        let result = self.run_commits(n, pool, &mut worktree);
        // This job takes no more commits: its worktree goes now, overlapping the other jobs' last
        // commands, rather than after all of them.
        if let Some(wt) = worktree {
            pool.release(wt);
        }
        result
    }

    fn run_commits(
        &self,
        n: usize,
        pool: &pool::Pool,
        worktree: &mut Option<pool::Worktree>,
    ) -> Result<()> {
        let log = pool.root().join(format!("job{n}.log"));
        loop {
            if self.stopping() {
                return Ok(());
            }
            let k = self.next.fetch_add(1, Ordering::SeqCst);
            let Some(&i) = self.todo.get(k) else {
                return Ok(());
            };
            if self.superseded(i) {
                // `todo` is in series order: every later position is superseded too.
                return Ok(());
            }
            let patch = &self.patches[i];
            match worktree.as_mut() {
                None => *worktree = Some(pool.add(n, patch.commit, self.interrupt)?),
                Some(wt) => pool.checkout(wt, patch.commit)?,
            }
            let wt = worktree.as_ref().expect("set above");
            let env = [
                ("JULES_VERIFY_COMMIT", patch.commit.to_string()),
                ("JULES_VERIFY_INDEX", patch.index.to_string()),
                ("JULES_VERIFY_JOB", n.to_string()),
            ];
            let cancel = || self.stopping() || self.superseded(i);
            let run = exec::run(&self.opts.command, &wt.path, &log, &env, &cancel)?;
            let exec::Ended::Exited {
                success, exit_code, ..
            } = run.ended
            else {
                continue;
            };
            let result = CommitResult {
                index: patch.index,
                commit: patch.commit,
                short: self.abbrev.short(patch.commit),
                tree: patch.tree,
                summary: patch.summary.clone(),
                result: if success {
                    Outcome::Pass
                } else {
                    Outcome::Fail
                },
                cached: false,
                duration_ms: Some(run.duration.as_millis() as u64),
                exit_code,
                tail: (!success).then(|| exec::tail(&log, TAIL_LINES, TAIL_BYTES)),
            };
            if !success {
                self.stop_at.fetch_min(i, Ordering::SeqCst);
            }
            (self.on_result)(&result);
            self.results
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push((i, result));
        }
    }
}

fn entry_for(command: &str, r: &CommitResult) -> cache::Entry {
    cache::Entry {
        command: command.to_owned(),
        result: if r.result == Outcome::Pass {
            cache::Verdict::Pass
        } else {
            cache::Verdict::Fail
        },
        exit_code: r.exit_code,
        duration_ms: r.duration_ms.unwrap_or_default(),
        commit: r.commit.to_string(),
        at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        tail: r.tail.clone(),
    }
}

/// The shortest unique abbreviation of `id` in `repo`, at least 7 digits (for many ids, [`Abbreviator`]).
pub fn short_id(repo: &gix::Repository, id: ObjectId) -> String {
    use gix::prelude::ObjectIdExt;
    id.attach(repo)
        .shorten()
        .map(|p| p.to_string())
        .unwrap_or_else(|_| id.to_hex_with_len(7).to_string())
}
