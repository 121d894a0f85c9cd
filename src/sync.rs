//! `git jules sync`: fetch the remote's logs and notes, take the union, publish it without fighting over a ref.
//!
//! The remote is the only server. Layout version 2 (see `docs/format.md`): every shared ref `R`
//! (`refs/jules/<log>`, `refs/notes/jules/<name>`) has, next to it, per-writer refs
//! `<prefix>writers/<name>/<writer-id>` that only one clone ever moves. The true content of `R` on the remote
//! is the union of `R` and its writer refs.
//!
//! One round: fetch everything (the `git` binary, so every transport and credential setting of the user
//! applies), join the local ref with the remote's `R` and every writer ref (union; merge commits only where
//! histories diverged), move the local ref, then publish:
//!
//! 1. *fold*: one atomic push moving `R` to the union under a lease on the fetched value and deleting, under
//!    leases, the writer refs the union contains. When it lands, the remote holds everything in `R` and no
//!    writer refs: the number of refs stays bounded however many sandboxes came and went.
//! 2. when the fold's lease was stale (somebody else folded first: harmless), push the union to this clone's
//!    own writer ref, which nobody else moves, so it cannot lose a race. Its events are on the remote, and
//!    the next fold (by anyone) takes them into `R` and deletes the writer ref.
//!
//! So a sync needs one round and at most two pushes, however many clones sync at once; further rounds happen
//! only when the writer ref itself was deleted in between (its content folded) or the local ref moved.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use gix::remote::Direction;
use gix::ObjectId;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::eventlog::{Log, MergeOutcome};
use crate::refs;

const MAX_ROUNDS: u32 = 20;

pub use crate::refs::{object_kind, WRITERS};

/// What happened to one ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    UpToDate,
    /// The remote had it and we did not.
    Created,
    /// The remote was ahead; we moved forward.
    FastForwarded,
    /// We were ahead; we pushed.
    Pushed,
    /// The remote had lost the log (deleted, replaced, or not a commit): our copy was pushed again.
    Republished,
    /// Both had news: joined (a merge commit) and pushed.
    Merged,
}

impl Action {
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::UpToDate => "up-to-date",
            Action::Created => "created",
            Action::FastForwarded => "fast-forwarded",
            Action::Pushed => "pushed",
            Action::Republished => "republished",
            Action::Merged => "merged",
        }
    }
}

/// Where a sync published a ref's union.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Published {
    /// Nothing needed publishing.
    Nothing,
    /// The shared ref itself (the fold landed).
    Shared,
    /// This clone's writer ref (somebody else folded first).
    Writer,
}

#[derive(Debug, Clone, Serialize)]
pub struct RefSync {
    pub name: String,
    pub action: Action,
    pub tip: String,
    pub published: Published,
}

/// A remote ref that was not used, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct SyncReport {
    /// Push attempts this sync made, refused ones included (what the push budget spends; not reported).
    #[serde(skip)]
    pub(crate) push_attempts: u64,
    pub remote: String,
    pub rounds: u32,
    pub refs: Vec<RefSync>,
    /// Writer refs deleted on the remote because the shared ref now holds their events.
    pub folded: usize,
    /// Remote refs under `refs/jules/*` or `refs/notes/jules/*` that do not point at a commit.
    pub skipped: Vec<Skipped>,
    /// Remote-tracking refs removed because the remote no longer has them.
    pub pruned: Vec<String>,
    /// Commits taken in from the remote that are not valid events (readers skip them; `log fsck` names them).
    pub invalid: Vec<Skipped>,
    /// Set when this clone had news but its push interval (`jules.sync.minPushInterval`) had not run out: the
    /// local refs hold the union, and the news waits for a later sync; seconds until a push is allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_deferred_secs: Option<u64>,
    /// Series version refs (`refs/jules/series/*`) pushed by this sync.
    pub series_pushed: Vec<String>,
    /// Series version refs the remote refused (a rewrite or a forged version the guard stops), with its reason:
    /// the sync failed for them (exit 2) and they stay unpublished.
    pub series_refused: Vec<crate::series_refs::Skipped>,
    /// Series version refs waiting for the push interval (`push_deferred_secs`): the next sync allowed to push
    /// carries them.
    pub series_deferred: Vec<String>,
    /// Events this sync did not publish because the remote refuses them (its guard requires signed events):
    /// everything else was published without them (`crate::heldback`); `log held-back drop|resign` settles
    /// them.
    pub held_back: Vec<crate::heldback::HeldBack>,
}

/// How a sync may push: the per-clone share of a fleet's push budget (issue 29). A forge recommends a few
/// pushes a minute per repository (GitHub: 6); a fleet of N clones stays within B pushes a minute when each
/// waits N/B minutes between its pushes, batching its events meanwhile (docs/cli.md, "Push budget").
#[derive(Debug, Clone, Default)]
pub struct PushPolicy {
    /// The least time between two pushes of this clone (`jules.sync.minPushInterval`); `None`: no limit.
    pub min_interval: Option<Duration>,
    /// Push whatever the interval (`git jules sync --now`).
    pub now: bool,
}

impl PushPolicy {
    /// `jules.sync.minPushInterval` (`90s`, `10m`, `1h`, or whole seconds), refused with the rule when it
    /// does not parse (`settings::duration`, the one reader of durations in the configuration).
    pub fn from_config(repo: &gix::Repository) -> Result<Self> {
        let secs = crate::settings::duration(repo, "jules.sync.minPushInterval")?.unwrap_or(0);
        Ok(PushPolicy {
            min_interval: (secs > 0).then(|| Duration::from_secs(secs as u64)),
            now: false,
        })
    }

    /// How long this clone must still wait before it may push, if at all.
    ///
    /// Every push spends one interval, a failed attempt too (the forge counted it: a fold that lost its
    /// lease is followed by a second push to the writer ref, and together they spend two). And a clone
    /// pushes on its own *phase*: at a time that is its phase (a share of one interval fixed by its writer
    /// id) past a multiple of the interval, the first such time once the interval has run out. So clones that
    /// pushed together (a fleet that started together, or a burst of urgent mail) spread out again at their
    /// next pushes instead of pushing together forever (measured: ten clones sharing six pushes a minute,
    /// all last pushed at one moment, pushed twelve times in one minute), and a clone that has not pushed yet
    /// waits for its first phase point. In steady state a clone pushes exactly one interval apart.
    fn wait(&self, repo: &gix::Repository) -> Option<Duration> {
        let interval = self.min_interval.filter(|_| !self.now)?.as_secs().max(1);
        let now = unix_now();
        let phase = writer_id(repo)
            .ok()
            .and_then(|w| u64::from_str_radix(w.get(..8)?, 16).ok())
            .unwrap_or_default()
            % interval;
        let earliest = match read_ledger(repo) {
            Some((last, pushes)) => last.saturating_add(interval.saturating_mul(pushes.max(1))),
            None => now,
        };
        let due = next_phase_point(earliest, phase, interval);
        (due > now).then(|| Duration::from_secs(due - now))
    }
}

/// The first time at or after `at` that is `phase` past a multiple of `interval`.
fn next_phase_point(at: u64, phase: u64, interval: u64) -> u64 {
    let r = at % interval;
    let base = at - r;
    if r <= phase {
        base + phase
    } else {
        base.saturating_add(interval) + phase
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// The push ledger: when this clone last pushed (unix seconds) and how many pushes that sync made. Derived
/// data: a missing file counts as a clone that has not pushed (it waits its phase), a damaged one only
/// allows a push. Older builds wrote the time alone (one push).
fn ledger_path(repo: &gix::Repository) -> std::path::PathBuf {
    crate::repo::jules_dir(repo).join("last-push")
}

fn read_ledger(repo: &gix::Repository) -> Option<(u64, u64)> {
    let text = match std::fs::read_to_string(ledger_path(repo)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(_) => return Some((0, 1)),
    };
    let mut words = text.split_whitespace();
    let last = words.next().and_then(|w| w.parse().ok());
    let pushes = words.next().map_or(Some(1), |w| w.parse().ok());
    Some(match (last, pushes) {
        (Some(last), Some(pushes)) => (last, pushes),
        _ => (0, 1),
    })
}

fn write_ledger(repo: &gix::Repository, last: u64, pushes: u64) {
    let _ = std::fs::create_dir_all(crate::repo::jules_dir(repo));
    let _ = std::fs::write(ledger_path(repo), format!("{last} {pushes}\n"));
}

/// Record that this sync made `pushes` push attempts (each one the forge counts).
fn remember_push(repo: &gix::Repository, pushes: u64) {
    if pushes > 0 {
        write_ledger(repo, unix_now(), pushes);
    }
}

/// An event that may not wait for the push interval: its data says `"priority": "urgent"` (urgent mail).
fn is_urgent(e: &crate::eventlog::LoggedEvent) -> bool {
    e.event.data.get("priority").and_then(|p| p.as_str()) == Some("urgent")
}

impl SyncReport {
    pub fn changed(&self) -> bool {
        self.refs.iter().any(|r| r.action != Action::UpToDate)
    }
}

/// The remote to use when none is named: the coordination remote (`jules.remote`, set by
/// `git jules init --remote NAME`) when there is one, else the current branch's remote, else `origin`, else
/// the only one.
pub fn default_remote(repo: &gix::Repository) -> Result<String> {
    if let Some(name) = repo.config_snapshot().string("jules.remote") {
        let name = name.to_string();
        if !repo.remote_names().iter().any(|n| *n == name) {
            return Err(Error::usage(format!(
                "jules.remote names {name:?}, which is not a configured remote (`git remote -v` lists them)"
            )));
        }
        return Ok(name);
    }
    if let Some(Ok(name)) = repo
        .head_name()
        .ok()
        .flatten()
        .and_then(|h| repo.branch_remote_name(h.shorten(), Direction::Push))
        .map(|n| n.as_symbol().map(str::to_owned).ok_or(()))
    {
        return Ok(name);
    }
    let names: Vec<String> = repo.remote_names().iter().map(|n| n.to_string()).collect();
    if names.iter().any(|n| n == "origin") {
        return Ok("origin".into());
    }
    match names.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::usage(
            "no remote configured: add one with `git remote add origin URL`",
        )),
        _ => Err(Error::usage(format!(
            "several remotes and none is `origin`: name one ({})",
            names.join(", ")
        ))),
    }
}

fn tracking_prefixes(remote: &str) -> [(String, &'static str); 2] {
    [
        (format!("refs/remotes/{remote}/jules/"), "refs/jules/"),
        (
            format!("refs/remotes/{remote}/notes/jules/"),
            "refs/notes/jules/",
        ),
    ]
}

/// This clone's writer id (16 hex digits), made once and kept in `.git/jules/writer-id`. Losing the file only
/// means a new writer ref next time; the old one is folded and deleted like any other.
pub fn writer_id(repo: &gix::Repository) -> Result<String> {
    let dir = crate::repo::jules_dir(repo);
    let path = dir.join("writer-id");
    let valid = |s: &str| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
    if let Ok(text) = std::fs::read_to_string(&path) {
        if valid(text.trim()) {
            return Ok(text.trim().to_owned());
        }
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let id: String = crate::eventlog::event::fresh_nonce()
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    let id = format!("{id:0>16}");
    // Write aside, then link into place: concurrent first syncs agree on whichever id landed first.
    let tmp = dir.join(format!("writer-id.{}.tmp", std::process::id()));
    std::fs::write(&tmp, format!("{id}\n")).map_err(|e| Error::io("writing the writer id", e))?;
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(id),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
            if valid(text.trim()) {
                Ok(text.trim().to_owned())
            } else {
                Err(Error::Other(format!(
                    "{} does not hold a writer id; remove it and sync again",
                    path.display()
                )))
            }
        }
        Err(e) => Err(Error::io(format!("creating {}", path.display()), e)),
    }
}

/// The writer ref of `shared` (`refs/jules/mail` or `refs/notes/jules/x`) for `writer`.
pub fn writer_ref(shared: &str, writer: &str) -> String {
    for prefix in ["refs/notes/jules/", "refs/jules/"] {
        if let Some(rest) = shared.strip_prefix(prefix) {
            return format!("{prefix}{WRITERS}{rest}/{writer}");
        }
    }
    format!("{shared}/{WRITERS}{writer}")
}

/// The shared ref and writer id of a writer ref name, `None` if `name` is not one.
pub fn shared_of_writer(name: &str) -> Option<(String, &str)> {
    for prefix in ["refs/notes/jules/", "refs/jules/"] {
        if let Some(rest) = name.strip_prefix(prefix) {
            let (log, writer) = rest.strip_prefix(WRITERS)?.rsplit_once('/')?;
            return (!log.is_empty() && !writer.is_empty())
                .then(|| (format!("{prefix}{log}"), writer));
        }
    }
    None
}

/// The last "no news" answer for one ref: a local tip and the remote commits that were found to hold every
/// event it holds, in `.git/jules/held/<ref>` (the tip, then the remote commits sorted, one id a line).
///
/// A cache in the brief's sense: the answer depends only on those commits, so when the local tip and the
/// remote commits are exactly the remembered ones the answer is the remembered one, and anything else asks the
/// graph again. Without it every idle sync of a clone whose local tip is its own join (never pushed: it holds
/// no news) walked the history below a hundred writer refs to prove the same thing again (issue 29).
struct HeldMemo {
    path: std::path::PathBuf,
    /// The file's text, read once (a sync may ask, then remember).
    text: std::cell::OnceCell<Option<String>>,
}

impl HeldMemo {
    fn of(repo: &gix::Repository, name: &str) -> Self {
        HeldMemo {
            path: crate::repo::jules_dir(repo)
                .join("held")
                .join(name.trim_start_matches("refs/").replace('/', "%")),
            text: std::cell::OnceCell::new(),
        }
    }

    fn text(local: ObjectId, remotes: &[ObjectId]) -> String {
        let mut remotes = remotes.to_vec();
        remotes.sort();
        remotes.dedup();
        std::iter::once(local)
            .chain(remotes)
            .map(|id| format!("{id}\n"))
            .collect()
    }

    fn stored(&self) -> Option<&str> {
        self.text
            .get_or_init(|| std::fs::read_to_string(&self.path).ok())
            .as_deref()
    }

    fn holds(&self, local: ObjectId, remotes: &[ObjectId]) -> bool {
        self.stored() == Some(Self::text(local, remotes).as_str())
    }

    fn remember(&self, local: ObjectId, remotes: &[ObjectId]) {
        let text = Self::text(local, remotes);
        if self.stored() == Some(text.as_str()) {
            return;
        }
        // Only a hint: losing it costs one walk next time.
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir).and_then(|_| {
                crate::eventlog::cache::write_atomically(&self.path, text.as_bytes())
            });
        }
    }
}

/// Fetch the remote's jules refs into remote-tracking refs, pruning those the remote no longer has.
///
/// The `git` binary, not gix: it is the reference for every transport and every setting users rely on to
/// reach a remote (https with credential helpers, `http.extraHeader`, proxies, `url.*.insteadOf`, ssh with
/// `GIT_SSH_COMMAND`/`core.sshCommand`, `git://`, local paths); the gix build carries no http client, and
/// one process per fetch costs little next to the network round trip (see `docs/architecture.md`).
/// Afterwards [`crate::hygiene::maintain`] keeps packs and loose objects bounded, and
/// [`crate::hygiene::drop_log_reflogs`] removes the log reflogs older builds forced.
pub fn fetch(repo: &gix::Repository, remote: &str) -> Result<()> {
    repo.find_remote(remote)
        .map_err(|_| Error::not_found(crate::error::Thing::Remote, remote))?;
    let specs = [
        format!("+refs/jules/*:refs/remotes/{remote}/jules/*"),
        format!("+refs/notes/jules/*:refs/remotes/{remote}/notes/jules/*"),
    ];
    // Tell the remote what we have from the logs' own refs and HEAD only: by default git offers commits from
    // every ref, newest first, and in a clone full of recent branches the remote must read through them in
    // several stateless round trips (each a new upload-pack over http) before it finds the logs' common
    // history; `bench/sync.sh`'s second round paid that (issue 29). HEAD stays, so that series versions
    // (whose history is code) still meet what the clone has of the code.
    // Only tips that exist: git warns about a glob that matches nothing and fails on an unborn HEAD. With none
    // at all (a fresh clone with no commit), git offers what it has, as by default.
    let mut negotiation: Vec<String> = [
        "refs/jules/".to_owned(),
        "refs/notes/jules/".to_owned(),
        format!("refs/remotes/{remote}/jules/"),
        format!("refs/remotes/{remote}/notes/jules/"),
    ]
    .into_iter()
    .filter(|prefix| has_refs(repo, prefix))
    .map(|prefix| format!("--negotiation-tip={prefix}*"))
    .collect();
    if repo.head_id().is_ok() {
        negotiation.push("--negotiation-tip=HEAD".to_owned());
    }
    let out = crate::gitcli::command(crate::gitcli::dir_of(repo))
        .args([
            "fetch",
            "--quiet",
            "--prune",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            "--no-recurse-submodules",
        ])
        .args(&negotiation)
        .arg(remote)
        .args(&specs)
        .output()
        .map_err(|e| Error::io("running `git fetch` (is git on PATH?)", e))?;
    if !out.status.success() {
        return Err(remote_error(remote, "fetch from", &out.stderr));
    }
    crate::hygiene::maintain(repo)?;
    crate::hygiene::drop_log_reflogs(repo)?;
    Ok(())
}

/// Whether any ref is named under `prefix`.
fn has_refs(repo: &gix::Repository, prefix: &str) -> bool {
    repo.references()
        .ok()
        .and_then(|r| {
            r.prefixed(prefix)
                .ok()
                .map(|mut refs| refs.next().is_some())
        })
        .unwrap_or(false)
}

/// A failure to reach `remote`, named, with git's own reason (credentials, network, missing repository).
fn remote_error(remote: &str, what: &str, stderr: &[u8]) -> Error {
    let text = String::from_utf8_lossy(stderr);
    let reason: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("fatal: ").unwrap_or(l))
        .collect();
    if reason.is_empty() {
        // git failed for no reason it gave: not something the user can fix (exit 4).
        return Error::Other(format!(
            "cannot {what} remote {remote}: git failed without saying why"
        ));
    }
    // Credentials, an unreachable host, a missing repository: the user fixes those (exit 2).
    Error::Refused(format!(
        "cannot {what} remote {remote}: {}",
        reason.join("; ")
    ))
}

fn list(repo: &gix::Repository, prefix: &str) -> Result<Vec<(String, ObjectId)>> {
    let mut out = Vec::new();
    for r in repo.references()?.prefixed(prefix)? {
        let r = r.map_err(|e| Error::wrap(format!("listing {prefix}"), e))?;
        if let Some(id) = r.target().try_id() {
            out.push((r.name().as_bstr().to_string(), id.to_owned()));
        }
    }
    Ok(out)
}

/// A fresh handle on the same repository: its object store sees the packs on disk now, so a long run of
/// fetches and repacks never exhausts the slots of a store sized when the process started.
pub fn reopen(repo: &gix::Repository) -> Result<gix::Repository> {
    let mut fresh = gix::open_opts(repo.path(), repo.open_options().clone())
        .map_err(|e| Error::wrap(format!("reopening {}", repo.path().display()), e))?;
    fresh.object_cache_size_if_unset(4 * 1024 * 1024);
    Ok(fresh)
}

/// One shared ref as this round sees it.
#[derive(Default)]
struct Seen {
    local: Option<ObjectId>,
    main: Option<ObjectId>,
    /// What the remote's shared ref holds when that is not a commit (the lease to replace it under).
    main_other: Option<ObjectId>,
    /// The remote's writer refs of this shared ref: (name on the remote, tip).
    writers: Vec<(String, ObjectId)>,
}

type Update = (String, Option<ObjectId>, Option<ObjectId>);

/// Synchronise every jules log and notes ref with `remote`: afterwards the remote holds every local event and
/// the local refs hold every event the remote had.
pub fn sync(repo: &gix::Repository, remote: &str) -> Result<SyncReport> {
    sync_with(repo, remote, &PushPolicy::default())
}

/// A sync as the repository configures it: with `remote`, else the coordination remote
/// ([`default_remote`]), under the configured push policy (`now`: push even if the interval has not run
/// out). What `git jules sync` and the MCP server's `mail_sync` do.
pub fn sync_configured(
    repo: &gix::Repository,
    remote: Option<&str>,
    now: bool,
) -> Result<SyncReport> {
    let remote = match remote {
        Some(r) => r.to_owned(),
        None => default_remote(repo)?,
    };
    let mut policy = PushPolicy::from_config(repo)?;
    policy.now = now;
    sync_with(repo, &remote, &policy)
}

/// [`sync`] under a push policy: with news and a push interval that has not run out (and nothing urgent in
/// the news), the sync fetches and joins but pushes nothing, and says when it may.
pub fn sync_with(repo: &gix::Repository, remote: &str, policy: &PushPolicy) -> Result<SyncReport> {
    // Before the name reaches a ref path (refs/remotes/<remote>/…), where gix refuses it as an internal error.
    if !repo.remote_names().iter().any(|n| *n == remote) {
        return Err(Error::not_found(crate::error::Thing::Remote, remote));
    }
    let mut report = sync_logs(repo, remote, policy)?;
    crate::heldback::remember(repo, &report.held_back);
    // Series versions (refs/jules/series/*, issue 26) are not logs: one persona writes each ref, so they are
    // pushed as they are (src/series_refs.rs), the fetch brought others', and the log machinery skipped them.
    // They spend the push budget like the logs: pushed when this sync pushed its logs (news, urgent or not,
    // or `--now`) or when the interval has run out, else left for the next sync allowed to push.
    let pending = crate::series_refs::pending(repo, remote)?;
    if pending.is_empty() {
        return Ok(report);
    }
    let logs_pushed = report
        .refs
        .iter()
        .any(|r| r.published != Published::Nothing);
    match policy.wait(repo).filter(|_| !logs_pushed) {
        Some(wait) => {
            report.push_deferred_secs = Some(
                report
                    .push_deferred_secs
                    .unwrap_or_else(|| wait.as_secs().max(1)),
            );
            report.series_deferred = pending.into_iter().map(|p| p.name).collect();
        }
        None => {
            let done = crate::series_refs::publish(repo, remote, &pending)?;
            if !done.pushed.is_empty() || !done.refused.is_empty() {
                // One more push on top of what the logs spent in this sync.
                remember_push(repo, report.push_attempts + 1);
            }
            report.series_pushed = done.pushed;
            report.series_refused = done.refused;
        }
    }
    Ok(report)
}

/// The logs and notes part of [`sync_with`].
fn sync_logs(repo: &gix::Repository, remote: &str, policy: &PushPolicy) -> Result<SyncReport> {
    let me = writer_id(repo)?;
    let tracked_before: BTreeSet<String> = tracking_prefixes(remote)
        .iter()
        .map(|(p, _)| list(repo, p))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .map(|(n, _)| n)
        .collect();
    let mut results: BTreeMap<String, RefSync> = BTreeMap::new();
    let mut pruned = Vec::new();
    let mut folded = 0;
    let mut invalid: Vec<Skipped> = Vec::new();
    let mut urgent = false;
    // Push attempts, for the budget: a refused one was counted by the forge as well.
    let mut attempts: u64 = 0;
    // What the remote refuses (issue 40): learned from its refusals, kept across rounds.
    let mut gate = crate::heldback::Gate::open(repo, remote);
    // Round 0 fetches nothing: it takes what the remote-tracking refs already hold (a plain `git fetch`
    // wrote them) into the local refs, so that pruning them in round 1 can not drop an event from the view.
    for round in 0..=MAX_ROUNDS {
        if round > 0 {
            fetch(repo, remote)?;
        }
        let fresh = reopen(repo)?;
        let repo = &fresh;
        let mut skipped = Vec::new();
        let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
        for (tracking_prefix, local_prefix) in tracking_prefixes(remote) {
            let tracked = list(repo, &tracking_prefix)?;
            if round == 1 {
                pruned.extend(
                    tracked_before
                        .iter()
                        .filter(|n| n.starts_with(&tracking_prefix))
                        .filter(|n| !tracked.iter().any(|(t, _)| t == *n))
                        .cloned(),
                );
            }
            for (tracking, id) in tracked {
                let rest = &tracking[tracking_prefix.len()..];
                let remote_name = format!("{local_prefix}{rest}");
                if rest.starts_with("backup/") {
                    continue;
                }
                // Series versions: not logs (see the top of this function).
                if rest.starts_with("series/") {
                    continue;
                }
                match object_kind(repo, id) {
                    Some(gix::object::Kind::Commit) => {}
                    kind => {
                        if shared_of_writer(&remote_name).is_none() && !rest.starts_with(WRITERS) {
                            seen.entry(remote_name.clone()).or_default().main_other = Some(id);
                        }
                        skipped.push(Skipped {
                            reason: match kind {
                                Some(k) => format!("points at a {k} ({id}), not a commit"),
                                None => format!("points at {id}, which is missing"),
                            },
                            name: remote_name,
                        });
                        continue;
                    }
                }
                if local_prefix == "refs/jules/" && !crate::eventlog::holds_log_history(repo, id) {
                    // Not a log: no event and no join anywhere in its history (a branch named jules/..., or
                    // a remote that lost its log to an unrelated history). Never joined; a local log of that
                    // name is published again over it, which loses nothing: it holds no event.
                    if shared_of_writer(&remote_name).is_none() && !rest.starts_with(WRITERS) {
                        seen.entry(remote_name).or_default().main_other = Some(id);
                    }
                    continue;
                }
                match shared_of_writer(&remote_name) {
                    Some((shared, _)) => seen
                        .entry(shared)
                        .or_default()
                        .writers
                        .push((remote_name, id)),
                    None if rest.starts_with(WRITERS) => {}
                    None => seen.entry(remote_name).or_default().main = Some(id),
                }
            }
            for (name, id) in list(repo, local_prefix)? {
                let rest = &name[local_prefix.len()..];
                if rest.starts_with("backup/") || rest.starts_with(WRITERS) {
                    continue;
                }
                // Series versions: not logs (see the top of this function).
                if rest.starts_with("series/") {
                    continue;
                }
                if object_kind(repo, id) != Some(gix::object::Kind::Commit) {
                    skipped.push(Skipped {
                        name,
                        reason: format!("the local ref points at {id}, which is not a commit"),
                    });
                    continue;
                }
                seen.entry(name).or_default().local = Some(id);
            }
        }

        let mut fold: Vec<Update> = Vec::new();
        let mut round_held = Vec::new();
        let mut own: Vec<Update> = Vec::new();
        let mut round_results = Vec::new();
        let mut local_race = false;
        for (name, s) in &seen {
            let is_notes = name.starts_with("refs/notes/jules/");
            let log = if is_notes {
                None
            } else {
                Some(Log::open(repo, name)?)
            };
            let mut tip = s.local;
            let mut merged = false;
            // The writer refs, then the shared ref: last, so that join_all settles on the remote's shape.
            let remote_tips: Vec<ObjectId> =
                s.writers.iter().map(|(_, id)| *id).chain(s.main).collect();
            let absorbed = log.as_ref().map(|l| l.absorbed()).unwrap_or_default();
            // Whether the join found the local tip inside a remote tip: then the remote holds every local event.
            let mut local_held = false;
            match &log {
                // One join over the local copy, every writer ref and the shared ref (issue 29: pairwise joins
                // made a second round 3.5x the push+fetch floor at 100 clones). The shared ref goes last, so
                // that when ours holds no event theirs lacks (only joins shaped differently) theirs is taken
                // and replicas settle on one tip instead of merging merges.
                // Remote tips the local ref is remembered to hold (the last sync or append joined them, and
                // the local ref only moves forward) need no join: an idle round, and the round before the
                // fetch, cost a memo read instead of a walk over the log's recent history.
                Some(_)
                    if s.local.is_some() && remote_tips.iter().all(|t| absorbed.contains(t)) => {}
                Some(log) => {
                    let tips: Vec<ObjectId> = s
                        .local
                        .into_iter()
                        .chain(remote_tips.iter().copied())
                        .collect();
                    if let Some((outcome, first_adds_nothing)) = log.join_all(&tips)? {
                        merged = matches!(outcome, MergeOutcome::Merged(_));
                        tip = Some(outcome.tip());
                        local_held = s.local.is_some() && first_adds_nothing;
                    }
                }
                None => {
                    for r in s.main.iter().chain(s.writers.iter().map(|(_, id)| id)) {
                        tip = Some(match tip {
                            None => *r,
                            Some(t) => {
                                let outcome = join_notes(repo, t, *r)?;
                                if let MergeOutcome::Merged(_) = outcome {
                                    merged = true;
                                }
                                outcome.tip()
                            }
                        });
                    }
                }
            }
            let Some(tip) = tip else { continue };
            if let (Some(log), true) = (&log, Some(tip) != s.local) {
                let hidden: Vec<ObjectId> = s.local.into_iter().collect();
                for bad in log.scan(&[tip], &hidden, false)?.invalid {
                    if !invalid
                        .iter()
                        .any(|i| i.name.parse::<ObjectId>().ok() == Some(bad.commit))
                    {
                        invalid.push(Skipped {
                            name: bad.commit.to_string(),
                            reason: format!("{name}: {}", bad.reason),
                        });
                    }
                }
            }
            if Some(tip) != s.local && !refs::cas(repo, name, s.local, tip, "jules: sync")? {
                if let Some(err) = refs::stale_lock_error(repo, name) {
                    // A lock file left by a killed process: the user removes it (exit 2).
                    return Err(Error::Refused(err.to_string()));
                }
                local_race = true;
            } else if let Some(log) = &log {
                // The local ref holds every remote tip now: the next append and the next sync need not join
                // them again (an append after a sync would otherwise join each writer ref in turn).
                log.remember_absorbed(&remote_tips);
            }
            // No push without news (issue 29): publish only when the local copy holds an event that no ref of
            // the remote holds (or the shared ref is missing there). Folding other clones' writer refs into the
            // shared ref is cleanup that rides along with the next sync that has news, so a fleet that has
            // converged, or that is only catching up, pushes nothing.
            let remote_commits: Vec<ObjectId> = s
                .main
                .into_iter()
                .chain(s.writers.iter().map(|(_, id)| *id))
                .collect();
            let published = HeldMemo::of(repo, name);
            let news = match (s.local, &log) {
                (None, _) => false,
                (Some(_), _) if s.main.is_none() => true,
                (Some(local), _) if remote_commits.contains(&local) => false,
                // The join's own walk found the local tip inside a remote tip.
                _ if local_held => false,
                // The last sync found this local tip held by these very remote commits: the same question.
                (Some(local), _) if published.holds(local, &remote_commits) => false,
                (Some(local), Some(log)) => {
                    let fresh = log.scan(&[local], &remote_commits, false)?.events;
                    urgent |= fresh.iter().any(is_urgent);
                    !fresh.is_empty()
                }
                (Some(local), None) => {
                    let mut all = vec![local];
                    all.extend(&remote_commits);
                    refs::independent(repo, &all)?.contains(&local)
                }
            };
            if !news && s.local.is_some() && !remote_commits.contains(&tip) {
                // The joined tip adds to the local copy only the remote's own events: it holds nothing the
                // remote lacks either. Remembered so that idle syncs answer from the memo, not a walk.
                published.remember(tip, &remote_commits);
            }
            let mut publish = news && Some(tip) != s.main;
            // What is published: the joined tip, unless it carries events the remote refuses; then the
            // remote's union plus every other unpushed event, rebuilt (round 0 pushes nothing: not before).
            let mut published_tip = tip;
            if let (true, true, Some(log)) = (publish, round > 0, &log) {
                if let Some(split) = crate::heldback::split(log, &gate, tip, &remote_commits)? {
                    round_held.extend(split.held);
                    match split.publish {
                        Some(p) => published_tip = p,
                        None => publish = false,
                    }
                }
            }
            if publish {
                // The new shared value holds every writer ref: they go in the same atomic push.
                for (writer, id) in &s.writers {
                    fold.push((writer.clone(), None, Some(*id)));
                }
                fold.push((name.clone(), Some(published_tip), s.main.or(s.main_other)));
                let mine = writer_ref(name, &me);
                let current = s
                    .writers
                    .iter()
                    .find(|(n, _)| *n == mine)
                    .map(|(_, id)| *id);
                // Our own writer ref, for when the fold loses the race: the local copy has news, so no ref of
                // the remote contains it.
                own.push((mine, Some(published_tip), current));
            }
            let lost = s.main.is_none()
                && (tracked_before.contains(&tracking_name(remote, name))
                    || s.main_other.is_some());
            let action = if s.local.is_none() {
                Action::Created
            } else if merged && publish {
                Action::Merged
            } else if Some(tip) != s.local {
                Action::FastForwarded
            } else if publish && lost {
                Action::Republished
            } else if publish {
                Action::Pushed
            } else {
                Action::UpToDate
            };
            round_results.push(RefSync {
                name: name.clone(),
                action,
                tip: tip.to_string(),
                published: Published::Nothing,
            });
        }
        // What the rounds before this one did: a push the remote refuses for events it names is retried without
        // them, and what this round meant to push it did not.
        let before_round = results.clone();
        // Keep the strongest action seen per ref across rounds: a ref merged in round 1 whose join was pushed
        // in round 2 was merged, not pushed.
        for r in round_results {
            // Round 0 only moved local refs; what it would publish is decided after a fetch.
            if round == 0
                && matches!(
                    r.action,
                    Action::UpToDate | Action::Pushed | Action::Republished
                )
            {
                continue;
            }
            match results.get_mut(&r.name) {
                Some(x) => {
                    x.tip = r.tip;
                    x.action = x.action.max(r.action);
                }
                None => {
                    results.insert(r.name.clone(), r);
                }
            }
        }
        let report = |results: BTreeMap<String, RefSync>, folded, skipped| SyncReport {
            push_attempts: 0,
            remote: remote.to_owned(),
            rounds: round,
            refs: results.into_values().collect(),
            folded,
            skipped,
            pruned: pruned.clone(),
            invalid: invalid.clone(),
            push_deferred_secs: None,
            series_pushed: Vec::new(),
            series_refused: Vec::new(),
            series_deferred: Vec::new(),
            held_back: round_held.clone(),
        };
        if local_race || round == 0 {
            continue;
        }
        // No push without news (issue 29): deleting writer refs the shared ref already holds is only cleanup;
        // it rides along with the next sync that publishes something, so an idle fleet makes no pushes.
        if fold.iter().all(|(_, new, _)| new.is_none()) {
            return Ok(report(results, folded, skipped));
        }
        if let Some(wait) = policy.wait(repo).filter(|_| !urgent) {
            let mut results = results;
            for r in results.values_mut() {
                if matches!(r.action, Action::Pushed | Action::Republished) {
                    r.action = Action::UpToDate;
                }
            }
            let mut r = report(results, folded, skipped);
            r.push_deferred_secs = Some(wait.as_secs().max(1));
            return Ok(r);
        }
        let fetched_shared = |shared: &str| seen.get(shared).and_then(|s| s.main);
        check_no_loss(repo, &fold, &fetched_shared)?;
        attempts += 1;
        let Some(pushed) = push_gated(repo, remote, &fold, &mut gate)? else {
            unsay_pushes(&mut results, &before_round);
            continue;
        };
        if pushed {
            remember_push(repo, attempts);
            folded += fold.iter().filter(|(_, new, _)| new.is_none()).count();
            record(repo, remote, &fold);
            for (name, new, _) in &fold {
                if new.is_some() {
                    if let Some(r) = results.get_mut(name) {
                        r.published = Published::Shared;
                    }
                }
            }
            return Ok(SyncReport {
                push_attempts: attempts,
                ..report(results, folded, skipped)
            });
        }
        if own.is_empty() {
            // Only the clean-up of folded writer refs failed: nothing of ours is unpublished.
            remember_push(repo, attempts);
            return Ok(SyncReport {
                push_attempts: attempts,
                ..report(results, folded, skipped)
            });
        }
        check_no_loss(repo, &own, &fetched_shared)?;
        attempts += 1;
        let Some(pushed) = push_gated(repo, remote, &own, &mut gate)? else {
            unsay_pushes(&mut results, &before_round);
            continue;
        };
        if pushed {
            remember_push(repo, attempts);
            record(repo, remote, &own);
            for (name, _, _) in &own {
                if let Some((shared, _)) = shared_of_writer(name) {
                    if let Some(r) = results.get_mut(&shared) {
                        r.published = Published::Writer;
                    }
                }
            }
            return Ok(SyncReport {
                push_attempts: attempts,
                ..report(results, folded, skipped)
            });
        }
        std::thread::sleep(Duration::from_millis(
            5 * u64::from(round) + u64::from(std::process::id() % 11),
        ));
    }
    remember_push(repo, attempts);
    Err(Error::Race {
        message: format!(
            "sync with {remote} did not settle after {MAX_ROUNDS} rounds: the local refs or this clone's \
             writer refs kept moving"
        ),
    })
}

/// After a refused push: the refs this round said it pushed were not pushed (what the rounds before said stands).
fn unsay_pushes(results: &mut BTreeMap<String, RefSync>, before: &BTreeMap<String, RefSync>) {
    for (name, r) in results.iter_mut() {
        if matches!(r.action, Action::Pushed | Action::Republished) {
            r.action = before.get(name).map_or(Action::UpToDate, |b| b.action);
        }
    }
}

/// The fold's guarantee, checked before every push that moves or deletes a remote log, notes or writer ref
/// (docs/format.md, "Sync never loses an event"): the value that replaces what the lease expects holds every
/// event reachable from it; for notes refs, the old value is in the new one's history. A writer ref that is
/// deleted is checked against its shared ref's new value in the same push, or the shared ref's fetched value
/// when the push leaves that alone. Whatever the remote holds, a push that would lose something is refused
/// before it is sent, naming the ref and the events.
fn check_no_loss(
    repo: &gix::Repository,
    updates: &[Update],
    fetched_shared: &dyn Fn(&str) -> Option<ObjectId>,
) -> Result<()> {
    // What each update replaces and with what: (name, old, the log or notes ref, the value that must keep it).
    let mut checks = Vec::new();
    for (name, new, old) in updates {
        let Some(old) = *old else { continue };
        if object_kind(repo, old) != Some(gix::object::Kind::Commit) {
            // A blob or a tree (or nothing) holds no event: replacing it loses nothing.
            continue;
        }
        let shared = shared_of_writer(name).map(|(shared, _)| shared);
        let target = match (new, &shared) {
            (Some(new), _) => Some(*new),
            (None, Some(shared)) => updates
                .iter()
                .find(|(n, _, _)| n == shared)
                .and_then(|(_, new, _)| *new)
                .or_else(|| fetched_shared(shared)),
            (None, None) => None,
        };
        let log_name = shared.unwrap_or_else(|| name.clone());
        checks.push((name, old, log_name, target));
    }
    // A fold deletes up to one writer ref per clone, all kept by the same new value: one walk over all of
    // them answers the common case (nothing missing); only a group with something missing is looked at
    // ref by ref.
    let mut clean: BTreeSet<(String, ObjectId)> = BTreeSet::new();
    let mut groups: BTreeMap<(String, ObjectId), Vec<ObjectId>> = BTreeMap::new();
    for (_, old, log_name, target) in &checks {
        if let (Some(target), false) = (target, log_name.starts_with("refs/notes/jules/")) {
            groups
                .entry((log_name.clone(), *target))
                .or_default()
                .push(*old);
        }
    }
    for ((log_name, target), olds) in groups {
        let log = Log::open(repo, &log_name)?;
        if log.scan(&olds, &[target], false)?.events.is_empty() {
            clean.insert((log_name, target));
        }
    }
    for (name, old, log_name, target) in checks {
        if target.is_some_and(|t| clean.contains(&(log_name.clone(), t))) {
            continue;
        }
        let log_name = log_name.as_str();
        let refuse = |what: String| {
            Err(Error::Refused(format!(
                "refusing to push {name}: its value on the remote ({old}) holds {what}; nothing was pushed \
                 (keep this clone, run `git jules log fsck`, and report it: a sync must never lose an event)"
            )))
        };
        let Some(target) = target else {
            return refuse("history that no new value keeps".into());
        };
        if log_name.starts_with("refs/notes/jules/") {
            if !matches!(
                refs::relation(repo, old, target)?,
                refs::Relation::Same | refs::Relation::Behind
            ) {
                return refuse(format!("notes that {target} does not keep"));
            }
            continue;
        }
        let log = Log::open(repo, log_name)?;
        let missing = log.scan(&[old], &[target], false)?.events;
        if missing.is_empty() {
            continue;
        }
        // The same event may sit in two commits (appended twice): only an id the new value lacks is lost.
        let kept: crate::eventlog::IdSet = log
            .scan(&[target], &[], false)?
            .events
            .into_iter()
            .map(|e| e.id)
            .collect();
        let mut lost: Vec<String> = missing
            .iter()
            .filter(|e| !kept.contains(&e.id))
            .map(|e| e.id.to_string())
            .collect();
        lost.sort();
        lost.dedup();
        if !lost.is_empty() {
            let shown = lost.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            let more = if lost.len() > 5 { ", …" } else { "" };
            return refuse(format!(
                "{} event(s) that {target} lacks ({shown}{more})",
                lost.len()
            ));
        }
    }
    Ok(())
}

/// Record in the remote-tracking refs what a successful push did, as the next fetch would.
fn record(repo: &gix::Repository, remote: &str, updates: &[Update]) {
    for (name, new, _) in updates {
        let tracking = tracking_name(remote, name);
        let old = refs::target(repo, &tracking).ok().flatten();
        match (new, old) {
            (Some(new), old) => {
                let _ = refs::cas(repo, &tracking, old, *new, "jules: sync push");
            }
            (None, Some(old)) => {
                let _ = refs::cas_delete(repo, &tracking, old);
            }
            (None, None) => {}
        }
    }
}

/// Push `new` to the remote's `name` only if the remote still has `expected` there (`None`: absent), then
/// record it in the remote-tracking ref as a fetch would. `Ok(false)` when the lease was stale.
///
/// This is the compare-and-swap on the remote ref that protocols such as mail claims build on; unlike
/// [`sync`] it never joins, so the remote accepts exactly the commit it is given or nothing.
pub fn push_leased(
    repo: &gix::Repository,
    remote: &str,
    name: &str,
    new: ObjectId,
    expected: Option<ObjectId>,
) -> Result<bool> {
    let update = [(name.to_owned(), Some(new), expected)];
    check_no_loss(repo, &update, &|_| None)?;
    if !push(repo, remote, &update)? {
        return Ok(false);
    }
    record(repo, remote, &update);
    Ok(true)
}

/// The remote-tracking ref of a local jules log or notes ref.
pub fn tracking_name(remote: &str, name: &str) -> String {
    name.replacen("refs/jules/", &format!("refs/remotes/{remote}/jules/"), 1)
        .replacen(
            "refs/notes/jules/",
            &format!("refs/remotes/{remote}/notes/jules/"),
            1,
        )
}

fn join_notes(repo: &gix::Repository, ours: ObjectId, theirs: ObjectId) -> Result<MergeOutcome> {
    Ok(match refs::relation(repo, ours, theirs)? {
        refs::Relation::Same => MergeOutcome::Same(ours),
        refs::Relation::Ahead => MergeOutcome::FastForward(ours),
        refs::Relation::Behind => MergeOutcome::FastForward(theirs),
        refs::Relation::Diverged => MergeOutcome::Merged(crate::notes::union(repo, ours, theirs)?),
    })
}

/// One atomic push of `updates` (name, new value or `None` to delete, leased expected value); `Ok(false)` when
/// a lease was stale (somebody pushed in between) and nothing changed.
///
/// Shells out: gix 0.90 has no push (no send-pack client), and the git binary reaches every transport.
fn push(repo: &gix::Repository, remote: &str, updates: &[Update]) -> Result<bool> {
    push_or_refusal(repo, remote, updates)?
        .map_err(|text| remote_error(remote, "push to", text.as_bytes()))
}

/// [`push`], with a refusal given back as git's and the remote's words (the refused lines, then stderr), for
/// the caller to read before it becomes an error.
/// [`push_or_refusal`], with a refusal of events the remote names (its guard) learned by `gate`: `None`
/// when the round must be built again without them, held back; any other refusal is the sync's error.
fn push_gated(
    repo: &gix::Repository,
    remote: &str,
    updates: &[Update],
    gate: &mut crate::heldback::Gate,
) -> Result<Option<bool>> {
    match push_or_refusal(repo, remote, updates)? {
        Ok(pushed) => Ok(Some(pushed)),
        Err(text) if gate.learn(repo, &text)? => Ok(None),
        Err(text) => Err(remote_error(remote, "push to", text.as_bytes())),
    }
}

fn push_or_refusal(
    repo: &gix::Repository,
    remote: &str,
    updates: &[Update],
) -> Result<std::result::Result<bool, String>> {
    let mut args: Vec<String> = vec![
        "push".into(),
        "--porcelain".into(),
        "--atomic".into(),
        "--no-verify".into(),
    ];
    for (name, _, expected) in updates {
        args.push(format!(
            "--force-with-lease={name}:{}",
            expected.map(|e| e.to_string()).unwrap_or_default()
        ));
    }
    args.push(remote.into());
    for (name, new, _) in updates {
        match new {
            Some(new) => args.push(format!("{new}:{name}")),
            None => args.push(format!(":{name}")),
        }
    }
    let out = crate::gitcli::command(crate::gitcli::dir_of(repo))
        .args(&args)
        .output()
        .map_err(|e| Error::io("running `git push`", e))?;
    if out.status.success() {
        return Ok(Ok(true));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let raced = stdout.lines().any(|l| {
        l.starts_with('!')
            && (l.contains("stale info")
                || l.contains("fetch first")
                || l.contains("non-fast-forward")
                || l.contains("atomic")
                || l.contains("failed to lock")
                || l.contains("cannot lock ref"))
    }) || stderr.contains("stale info");
    if raced {
        return Ok(Ok(false));
    }
    let mut text = stdout
        .lines()
        .filter(|l| l.starts_with('!'))
        .map(|l| format!("{l}\n"))
        .collect::<String>();
    text.push_str(&stderr);
    Ok(Err(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(secs: u64) -> PushPolicy {
        PushPolicy {
            min_interval: Some(Duration::from_secs(secs)),
            now: false,
        }
    }

    fn repo() -> (tempfile::TempDir, gix::Repository) {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init(dir.path()).unwrap();
        (dir, repo)
    }

    /// A clone that has not pushed waits for its first phase point (its writer id's share of one interval),
    /// and says the same due time on the next sync: a fleet that starts together spreads its first pushes.
    #[test]
    fn a_clone_that_never_pushed_waits_for_its_phase_point() {
        let (_d, repo) = repo();
        let interval = 600;
        let phase = u64::from_str_radix(&writer_id(&repo).unwrap()[..8], 16).unwrap() % interval;
        let now = unix_now();
        let due = next_phase_point(now, phase, interval);
        let first = policy(interval).wait(&repo).map_or(0, |d| d.as_secs());
        assert!(
            first.abs_diff(due - now) <= 1,
            "waited {first}, due in {}",
            due - now
        );
        assert!(first < interval);
        let again = policy(interval).wait(&repo).map_or(0, |d| d.as_secs());
        assert!(again.abs_diff(first) <= 1, "{again} then {first}");
        // `--now`, and no interval at all, never wait.
        let now = PushPolicy {
            now: true,
            ..policy(interval)
        };
        assert_eq!(now.wait(&repo), None);
        assert_eq!(PushPolicy::default().wait(&repo), None);
    }

    #[test]
    fn phase_points_are_phase_past_a_multiple_of_the_interval() {
        assert_eq!(next_phase_point(1000, 30, 100), 1030);
        assert_eq!(next_phase_point(1030, 30, 100), 1030);
        assert_eq!(next_phase_point(1031, 30, 100), 1130);
        assert_eq!(next_phase_point(1099, 0, 100), 1100);
        assert_eq!(next_phase_point(1100, 0, 100), 1100);
    }

    /// Every push attempt of a sync spends one interval: two (a lost fold, then the writer ref) spend two;
    /// then the clone waits for its phase point. Clones that pushed at one moment come apart.
    #[test]
    fn each_push_attempt_spends_one_interval_then_the_phase_point() {
        let (_d, repo) = repo();
        let interval = 100;
        let phase = u64::from_str_radix(&writer_id(&repo).unwrap()[..8], 16).unwrap() % interval;
        let expect = |pushes: u64| {
            let now = unix_now();
            next_phase_point(now + pushes * interval, phase, interval) - now
        };
        remember_push(&repo, 1);
        let one = policy(interval).wait(&repo).unwrap().as_secs();
        assert!(one.abs_diff(expect(1)) <= 1 && one + 1 >= interval, "{one}");
        remember_push(&repo, 2);
        let two = policy(interval).wait(&repo).unwrap().as_secs();
        assert!(
            two.abs_diff(expect(2)) <= 1 && two + 1 >= 2 * interval,
            "{two}"
        );
        // What older builds wrote, the time alone, is one push; a damaged ledger allows a push at the next
        // phase point.
        std::fs::write(ledger_path(&repo), format!("{}\n", unix_now())).unwrap();
        assert!(policy(interval).wait(&repo).unwrap().as_secs() + 1 >= interval);
        std::fs::write(ledger_path(&repo), "garbage").unwrap();
        assert!(policy(interval).wait(&repo).map_or(0, |d| d.as_secs()) < interval);
    }
}
