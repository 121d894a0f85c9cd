//! Path leases on the convergent log `refs/jules/lease`: a persona says which paths it is changing before
//! it changes them, for a time it chooses, and every replica agrees who holds what.
//!
//! Event kinds (data fields; times are Unix seconds, integers, chosen by the writer from its clock, which
//! `GIT_COMMITTER_DATE` pins as for commits):
//!
//! - `lease.acquire` {paths, exclusive, at, expires, lock, reason?, task?}: the lease's id is this event's id.
//! - `lease.renew` {lease, at, expires}: the holder moves the expiry; only while the lease is live.
//! - `lease.release` {lease, at, forced, reason?}: the holder, or (`forced`) anyone, ends it.
//! - `lease.remind` {lease, expires}: the holder was mailed that the lease is about to expire.
//!
//! The view ([`View`]) is a pure fold over the log's total order, so replicas that hold the same events
//! agree. The rule of an acquire made at time `at`: it *conflicts* with a held lease of another persona that
//! is still live at `at`, overlaps it ([`pattern`]) and is exclusive on either side. Without a conflict it
//! is held. With conflicts only against provisional leases (`lock: false`), a `lock` acquire is held and
//! those leases are `superseded`; otherwise it is `denied`, naming the holder. `acquire --sync` writes
//! `lock` acquires through the remote as `mail claim --sync` does ([`ops::acquire`]), so a lock acquire
//! exists on the remote only on top of a state where it conflicts with no lock lease: one winner.
//!
//! The fold decides overlap with case folded (conservative, and the same on every replica whatever its
//! `core.ignoreCase`); `check` folds case only where the repository says so.

pub mod api;
pub mod held;
mod keys;
pub mod ops;
pub mod pattern;
pub mod staged;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

use crate::kit::error::{Error, Result};
use crate::store::eventlog::cache::{load_json, save_json, Projection, Stamp};
use crate::store::eventlog::{EventId, Log, LoggedEvent};
use pattern::Pattern;

pub const LOG: &str = "refs/jules/lease";
pub const ACQUIRE: &str = "lease.acquire";
pub const RENEW: &str = "lease.renew";
pub const RELEASE: &str = "lease.release";
pub const REMIND: &str = "lease.remind";

/// Where a lease stands in the fold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// Granted and not released (it may have expired: see [`Lease::live_at`]).
    Held,
    /// Another persona's lease held the paths when it was acquired (`by` names that lease).
    Denied,
    /// A lock acquire took the paths from this provisional lease (`by` names it).
    Superseded,
    Released,
}

fn rfc3339<S: Serializer>(t: &i64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&format_time(*t))
}

/// A Unix time as RFC 3339 UTC. Times come from the log, which anyone with push access writes: one outside
/// the years RFC 3339 can write (0000 to 9999) is shown as the nearest it can, never as a bare number.
pub fn format_time(t: i64) -> String {
    // 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
    const FIRST: i64 = -62_167_219_200;
    const LAST: i64 = 253_402_300_799;
    chrono::DateTime::from_timestamp(t.clamp(FIRST, LAST), 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

#[derive(Debug, Clone, Serialize)]
pub struct Lease {
    /// The acquire event's id (hex).
    pub id: String,
    pub persona: String,
    pub paths: Vec<String>,
    pub exclusive: bool,
    #[serde(rename = "acquired_at", serialize_with = "rfc3339")]
    pub acquired: i64,
    #[serde(rename = "expires_at", serialize_with = "rfc3339")]
    pub expires: i64,
    /// Acquired through the remote lock (`--sync`): final.
    pub lock: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    pub state: State,
    /// Denied or superseded: the lease that holds the paths. Released: the persona who released it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// Released by someone other than the holder.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_reason: Option<String>,
    /// The expiry the holder was last reminded of.
    #[serde(skip)]
    pub reminded: Option<i64>,
    #[serde(skip)]
    pub(crate) patterns: Vec<Pattern>,
}

impl Lease {
    pub fn live_at(&self, t: i64) -> bool {
        self.state == State::Held && t < self.expires
    }

    pub fn mode(&self) -> &'static str {
        if self.exclusive {
            "exclusive"
        } else {
            "shared"
        }
    }

    /// Whether a lease of `persona` on `patterns` (`exclusive` or shared) would conflict with this one at `t`.
    pub fn blocks(&self, persona: &str, patterns: &[Pattern], exclusive: bool, t: i64) -> bool {
        self.persona != persona
            && self.live_at(t)
            && (self.exclusive || exclusive)
            && pattern::any_overlap(&self.patterns, patterns)
    }

    pub fn short(&self) -> &str {
        &self.id[..12.min(self.id.len())]
    }
}

/// The fold of the lease log.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Every acquire, in the log's total order.
    pub leases: Vec<Lease>,
    index: BTreeMap<String, usize>,
}

/// Parse the patterns of a request or an event (the fold folds case: see the module doc).
pub fn parse_patterns(paths: &[String], ignore_case: bool) -> Result<Vec<Pattern>> {
    if paths.is_empty() {
        return Err(Error::usage("a lease needs at least one path or pattern"));
    }
    paths
        .iter()
        .map(|p| Pattern::parse(p, ignore_case))
        .collect()
}

fn int(d: &serde_json::Value, k: &str) -> Option<i64> {
    d.get(k).and_then(|x| x.as_i64())
}
fn text(d: &serde_json::Value, k: &str) -> Option<String> {
    d.get(k).and_then(|x| x.as_str()).map(str::to_owned)
}

impl View {
    pub fn get(&self, id: &str) -> Option<&Lease> {
        self.index.get(id).map(|&i| &self.leases[i])
    }

    /// The lease whose id is `prefix` or starts with it.
    pub fn find(&self, prefix: &str) -> Result<&Lease> {
        if prefix.len() < 4 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::usage(format!(
                "{prefix:?} is not a lease id (at least 4 hex digits)"
            )));
        }
        let hits: Vec<&Lease> = self
            .index
            .range(prefix.to_owned()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .map(|(_, &i)| &self.leases[i])
            .collect();
        match hits.as_slice() {
            [one] => Ok(one),
            [] => Err(Error::not_found(crate::kit::error::Thing::Lease, prefix)),
            many => Err(Error::Ambiguous {
                what: crate::kit::error::Thing::Lease,
                prefix: prefix.to_owned(),
                candidates: many.iter().map(|l| l.short().to_owned()).collect(),
            }),
        }
    }

    /// Held leases of others that a lease of `persona` on `patterns` would conflict with at `t`.
    pub fn conflicts(
        &self,
        persona: &str,
        patterns: &[Pattern],
        exclusive: bool,
        t: i64,
    ) -> Vec<&Lease> {
        self.leases
            .iter()
            .filter(|l| l.blocks(persona, patterns, exclusive, t))
            .collect()
    }

    /// Fold one event (the caller feeds them in the log's total order).
    pub fn apply(&mut self, id: &EventId, kind: &str, actor: &str, d: &serde_json::Value) {
        match kind {
            ACQUIRE => {
                let Some(paths) = d.get("paths").and_then(|p| p.as_array()) else {
                    return;
                };
                let paths: Vec<String> = paths
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_owned))
                    .collect();
                // A pattern this build cannot read makes the event unreadable, never loosely matched.
                let Ok(patterns) = parse_patterns(&paths, true) else {
                    return;
                };
                let (Some(at), Some(expires)) = (int(d, "at"), int(d, "expires")) else {
                    return;
                };
                let exclusive = d.get("exclusive").and_then(|x| x.as_bool()).unwrap_or(true);
                let lock = d.get("lock").and_then(|x| x.as_bool()).unwrap_or(false);
                let conflicts: Vec<usize> = (0..self.leases.len())
                    .filter(|&i| self.leases[i].blocks(actor, &patterns, exclusive, at))
                    .collect();
                let (state, by) = if conflicts.is_empty() {
                    (State::Held, None)
                } else if lock && conflicts.iter().all(|&i| !self.leases[i].lock) {
                    for &i in &conflicts {
                        self.leases[i].state = State::Superseded;
                        self.leases[i].by = Some(id.to_hex());
                    }
                    (State::Held, None)
                } else {
                    let holder = conflicts
                        .iter()
                        .copied()
                        .find(|&i| self.leases[i].lock)
                        .unwrap_or(conflicts[0]);
                    (State::Denied, Some(self.leases[holder].id.clone()))
                };
                self.index.insert(id.to_hex(), self.leases.len());
                self.leases.push(Lease {
                    id: id.to_hex(),
                    persona: actor.to_owned(),
                    paths,
                    exclusive,
                    acquired: at,
                    expires,
                    lock,
                    reason: text(d, "reason"),
                    task: text(d, "task"),
                    state,
                    by,
                    forced: false,
                    release_reason: None,
                    reminded: None,
                    patterns,
                });
            }
            RENEW | RELEASE | REMIND => {
                let Some(&i) = text(d, "lease").and_then(|l| self.index.get(&l)) else {
                    return;
                };
                let l = &mut self.leases[i];
                let at = int(d, "at").unwrap_or(i64::MIN);
                match kind {
                    RENEW => {
                        if l.persona == actor && l.live_at(at) {
                            if let Some(e) = int(d, "expires") {
                                l.expires = e;
                            }
                        }
                    }
                    RELEASE => {
                        if l.state == State::Held {
                            l.state = State::Released;
                            l.by = Some(actor.to_owned());
                            l.forced = d.get("forced").and_then(|x| x.as_bool()).unwrap_or(false)
                                || l.persona != actor;
                            l.release_reason = text(d, "reason");
                        }
                    }
                    _ => l.reminded = int(d, "expires"),
                }
            }
            _ => {}
        }
    }
}

pub fn open(repo: &gix::Repository) -> Result<Log<'_>> {
    Log::open(repo, LOG)
}

/// The fold of the log, through the projection cache under `.git/jules/cache/` (kept per tips, extended
/// with new events when they sort after what was folded): a pre-commit hook then reads one file, not the log.
pub fn view(log: &Log<'_>) -> Result<View> {
    if log.tips()?.is_empty() {
        return Ok(View::default());
    }
    Ok(log.project::<View>()?.view)
}

/// A lease as the caches keep it (times as integers; patterns parsed again on load).
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Stored {
    pub(crate) id: String,
    pub(crate) persona: String,
    pub(crate) paths: Vec<String>,
    pub(crate) exclusive: bool,
    acquired: i64,
    pub(crate) expires: i64,
    lock: bool,
    // Left out when empty: a held lease has no `by`, `forced` or `release_reason`, and the held leases'
    // file is read on every commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    task: Option<String>,
    state: State,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    forced: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    release_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reminded: Option<i64>,
}

impl From<&Lease> for Stored {
    fn from(l: &Lease) -> Stored {
        Stored {
            id: l.id.clone(),
            persona: l.persona.clone(),
            paths: l.paths.clone(),
            exclusive: l.exclusive,
            acquired: l.acquired,
            expires: l.expires,
            lock: l.lock,
            reason: l.reason.clone(),
            task: l.task.clone(),
            state: l.state,
            by: l.by.clone(),
            forced: l.forced,
            release_reason: l.release_reason.clone(),
            reminded: l.reminded,
        }
    }
}

impl Stored {
    /// The lease, its patterns parsed as the fold parses them.
    pub(crate) fn into_lease(self) -> Result<Lease> {
        let patterns = parse_patterns(&self.paths, true)?;
        Ok(Lease {
            id: self.id,
            persona: self.persona,
            paths: self.paths,
            exclusive: self.exclusive,
            acquired: self.acquired,
            expires: self.expires,
            lock: self.lock,
            reason: self.reason,
            task: self.task,
            state: self.state,
            by: self.by,
            forced: self.forced,
            release_reason: self.release_reason,
            reminded: self.reminded,
            patterns,
        })
    }
}

impl Projection for View {
    const NAME: &'static str = "lease";
    const VERSION: u32 = 1;

    fn empty() -> Self {
        View::default()
    }

    fn apply(&mut self, e: &LoggedEvent) {
        View::apply(self, &e.id, &e.event.kind, &e.event.actor, &e.event.data);
    }

    fn save(&self, dir: &std::path::Path, stamp: &Stamp) -> std::io::Result<()> {
        let stored: Vec<Stored> = self.leases.iter().map(Stored::from).collect();
        save_json(dir, "leases.json", &stored, stamp)
    }

    fn load(dir: &std::path::Path) -> Option<Self> {
        let stored: Vec<Stored> = load_json(dir, "leases.json")?;
        let mut v = View::default();
        for s in stored {
            let lease = s.into_lease().ok()?;
            v.index.insert(lease.id.clone(), v.leases.len());
            v.leases.push(lease);
        }
        Some(v)
    }
}

/// "Now" for leases: the committer time, which `GIT_COMMITTER_DATE` pins (tests, replays), else the clock.
pub fn now(repo: &gix::Repository) -> i64 {
    crate::kit::repo::committer(repo).time.seconds
}

/// Seconds from `DURATION` (`90s`, `30m`, `2h`, `1d`, `1w`), refused when zero or unreadable.
pub fn parse_ttl(s: &str) -> Result<i64> {
    match crate::kit::settings::parse_duration(s) {
        Ok(n) if n > 0 => Ok(n),
        Ok(_) => Err(Error::usage(format!(
            "cannot read the duration {}: it must be longer than nothing",
            crate::kit::text::excerpt(s)
        ))),
        Err(e) => Err(Error::usage(format!(
            "cannot read the duration {}: {e}",
            crate::kit::text::excerpt(s)
        ))),
    }
}

/// A lease as listed at a moment: whether it is live then and how many seconds are left (negative: past).
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub lease: Lease,
    pub live: bool,
    pub expires_in: i64,
    /// The acquire event's signature under the trust roots (`crate::store::sign::State`); `null` where nothing is
    /// verified (no trust file, no `jules.requireSigned`) or before [`sign_listed`] filled it.
    pub signature: Option<crate::store::sign::State>,
}

/// Fill every listed lease's `signature`, the state of its acquire event: a lease taken in a persona's
/// name without its key is marked (`lease list`, the fleet). Nothing is read when the repository verifies
/// nothing. The lease view keeps event ids, not commits, so this walks the lease log once (a log of
/// acquires and releases, small next to mail) to find the commits; the states are cached per commit.
/// Under `jules.requireSigned` the fold already left unverified acquires out.
pub fn sign_listed(log: &Log<'_>, items: &mut [Listed]) -> Result<()> {
    if items.is_empty() {
        return Ok(());
    }
    let Some(mut verifier) = crate::store::eventlog::Verifier::open(log.repo())? else {
        return Ok(());
    };
    let wanted: std::collections::HashSet<&str> =
        items.iter().map(|i| i.lease.id.as_str()).collect();
    let (events, _) = log.read_all()?;
    let commits: std::collections::HashMap<String, gix::ObjectId> = events
        .iter()
        .map(|e| (e.id.to_hex(), e.commit))
        .filter(|(id, _)| wanted.contains(id.as_str()))
        .collect();
    for i in items.iter_mut() {
        if let Some(c) = commits.get(&i.lease.id) {
            i.signature = verifier.state(*c)?;
        }
    }
    Ok(())
}

/// Which leases [`list`] returns.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub persona: Option<String>,
    /// Only leases overlapping this pattern.
    pub path: Option<String>,
    /// Also expired, released, denied and superseded leases.
    pub all: bool,
}

/// The leases `filter` selects, live ones only unless `filter.all`, in the log's order.
pub fn list(v: &View, now: i64, filter: &Filter) -> Result<Vec<Listed>> {
    let path = filter
        .path
        .as_deref()
        .map(|p| Pattern::parse(p, true))
        .transpose()?;
    Ok(v.leases
        .iter()
        .filter(|l| filter.all || l.live_at(now))
        .filter(|l| filter.persona.as_deref().is_none_or(|p| l.persona == p))
        .filter(|l| {
            path.as_ref()
                .is_none_or(|p| l.patterns.iter().any(|q| q.overlaps(p)))
        })
        .map(|l| Listed {
            lease: l.clone(),
            live: l.live_at(now),
            expires_in: l.expires.saturating_sub(now),
            signature: None,
        })
        .collect())
}

/// Release `persona`'s leases after `series finalize` landed `old_base..new_base`, when configured; returns
/// those released. For the CLI of `series finalize` (a failure here must not undo the landing: it warns).
pub fn release_after_finalize(
    repo: &gix::Repository,
    persona: &str,
    old_base: gix::ObjectId,
    new_base: gix::ObjectId,
) -> Result<Vec<Lease>> {
    if !Settings::from_config(repo)?.release_on_finalize {
        return Ok(Vec::new());
    }
    let log = open(repo)?;
    if log.tips()?.is_empty() {
        return Ok(Vec::new());
    }
    let files = changed_paths(repo, &Changes::Range(format!("{old_base}..{new_base}")))?;
    ops::release_covering(&log, now(repo), persona, &files, "series finalized")
}

/// Release `persona`'s leases for task `task_id` after `task done`, when configured.
pub fn release_after_done(
    repo: &gix::Repository,
    persona: &str,
    task_id: &str,
) -> Result<Vec<Lease>> {
    if !Settings::from_config(repo)?.release_on_done {
        return Ok(Vec::new());
    }
    let log = open(repo)?;
    if log.tips()?.is_empty() {
        return Ok(Vec::new());
    }
    ops::release_for_task(&log, now(repo), persona, task_id, "task done")
}

/// A sync with the lease reminders it sent (`git jules sync --json`, the MCP server's `mail_sync`).
#[derive(Debug, serde::Serialize)]
pub struct SyncWithReminders {
    #[serde(flatten)]
    pub report: crate::store::sync::SyncReport,
    /// Leases whose holders this sync mailed before expiry.
    pub reminded: Vec<Lease>,
    /// Why no reminder was sent, when sending failed (the sync itself is done): a warning, carried as
    /// data so that every frontend shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remind_error: Option<String>,
}

/// Sync as configured ([`crate::store::sync::sync_configured`]), then mail the holders of leases about to
/// expire as `from` ([`remind_due`]; after the fetch, so that a reminder another clone already sent and
/// recorded is not sent again) and, when it sent any, sync again to publish them now rather than at the
/// next sync. A failure to remind leaves the sync done and says why.
pub fn sync_and_remind(
    repo: &gix::Repository,
    remote: Option<&str>,
    push_now: bool,
    from: &str,
) -> Result<SyncWithReminders> {
    use crate::store::sync;
    let mut report = sync::sync_configured(repo, remote, push_now)?;
    let (reminded, remind_error) = match remind_due(repo, now(repo), from) {
        Ok(r) => (r, None),
        // One string in the data: the message and its causes on one line.
        Err(e) => (Vec::new(), Some(format!("{e:#}"))),
    };
    if !reminded.is_empty() {
        let again = sync::sync_configured(repo, Some(&report.remote), push_now)?;
        report.rounds += again.rounds;
        report.folded += again.folded;
        report.push_deferred_secs = again.push_deferred_secs;
        // What is held back now: the second sync saw the first's and the reminders'.
        report.held_back = again.held_back;
        for r in again.refs {
            match report.refs.iter_mut().find(|x| x.name == r.name) {
                Some(x) if r.action != sync::Action::UpToDate => *x = r,
                Some(_) => {}
                None => report.refs.push(r),
            }
        }
    }
    Ok(SyncWithReminders {
        report,
        reminded,
        remind_error,
    })
}

/// Mail the holders of leases that expire within `jules.lease.remindBefore` of `now`, as `from`, once per
/// expiry ([`ops::remind`]): what `sync` and `tick` do on every run, so that no lease lapses unannounced
/// when nobody runs `lease remind`. `jules.lease.remind = false` turns it off there.
pub fn remind_due(repo: &gix::Repository, now: i64, from: &str) -> Result<Vec<Lease>> {
    let settings = Settings::from_config(repo)?;
    if !settings.remind {
        return Ok(Vec::new());
    }
    ops::remind(&open(repo)?, now, settings.remind_before, from)
}

/// The live exclusive leases at `now` that cover `file` (a path git named): whose work the file is. Weave
/// names them on its conflicting paths.
pub fn covering<'v>(v: &'v View, now: i64, file: &str) -> Vec<&'v Lease> {
    let file = [Pattern::literal(file, true)];
    v.leases
        .iter()
        .filter(|l| l.exclusive && l.live_at(now) && pattern::any_overlap(&l.patterns, &file))
        .collect()
}

/// Hold back the personas `plan` would launch whose open tasks declare paths under another persona's live
/// exclusive lease at `now`: their decisions move to `skipped`, saying which task, lease, holder and expiry.
pub fn hold_back(
    repo: &gix::Repository,
    tasks: &[crate::capabilities::state::view::Task],
    plan: &mut crate::capabilities::state::tick::Plan,
    now: i64,
) -> Result<()> {
    if !tasks.iter().any(|t| !t.paths.is_empty()) {
        return Ok(());
    }
    let log = open(repo)?;
    let v = view(&log)?;
    let mut held = Vec::new();
    plan.decisions.retain(|d| {
        for t in tasks.iter().filter(|t| {
            t.state == "todo"
                && t.persona.as_deref() == Some(d.persona.as_str())
                && !t.paths.is_empty()
        }) {
            let Ok(pats) = parse_patterns(&t.paths, true) else {
                continue;
            };
            if let Some(l) = v
                .conflicts(&d.persona, &pats, true, now)
                .into_iter()
                .find(|l| l.exclusive)
            {
                held.push(crate::capabilities::state::tick::Skipped {
                    persona: d.persona.clone(),
                    why: format!(
                        "held back: task {} declares {} under lease {} of {} until {}",
                        &t.id[..7.min(t.id.len())],
                        t.paths.join(" "),
                        l.short(),
                        l.persona,
                        format_time(l.expires)
                    ),
                });
                return false;
            }
        }
        true
    });
    plan.skipped.extend(held);
    Ok(())
}

/// Lease settings from git config.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `jules.lease.ttl`, default 2h: the time to live of an acquire that names none.
    pub ttl: i64,
    /// `jules.lease.remindBefore`, default 15m: how long before expiry the holder is mailed (`lease
    /// remind`, and `sync` and `tick` on every run).
    pub remind_before: i64,
    /// `jules.lease.remind`, default true: `sync` and `tick` send due reminders.
    pub remind: bool,
    /// `jules.lease.maxTtl`, default [`DEFAULT_MAX_TTL`]: the longest TTL an acquire or renew accepts.
    pub max_ttl: i64,
    /// `core.ignoreCase`: whether `check` folds case.
    pub ignore_case: bool,
    /// `jules.lease.releaseOnFinalize`, default true: `series finalize` releases the persona's leases on
    /// the paths it landed.
    pub release_on_finalize: bool,
    /// `jules.lease.releaseOnDone`, default true: `task done` releases the persona's leases for the task.
    pub release_on_done: bool,
    /// `jules.lease.preCommit`: what the pre-commit hook does with a conflict.
    pub pre_commit: PreCommit,
}

/// `jules.lease.preCommit`: `refuse` (the default), `warn`, or `off` (also `false`, `no`, `0`); any other
/// value is refused with the key's name (a typo must not quietly decide what the hook does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreCommit {
    Refuse,
    Warn,
    Off,
}

/// The longest lease unless `jules.lease.maxTtl` says otherwise: a week. A lease blocks other personas'
/// commits; one that outlives its holder's work by months is a lock nobody remembers.
pub const DEFAULT_MAX_TTL: i64 = 7 * 86_400;

impl Settings {
    /// The lease settings; every value is read strictly (`crate::kit::settings`): a bad one is an error naming
    /// the key. A `jules.lease.ttl` above `jules.lease.maxTtl` is refused too.
    pub fn from_config(repo: &gix::Repository) -> Result<Settings> {
        use crate::kit::settings::{boolean, duration, LEASE_MAX_TTL};
        let positive = |key: &str, default: i64| -> Result<i64> {
            match duration(repo, key)? {
                Some(0) => Err(crate::kit::settings::bad(
                    key,
                    "0",
                    "duration",
                    Some("it must be longer than nothing".into()),
                )),
                Some(n) => Ok(n),
                None => Ok(default),
            }
        };
        let max_ttl = positive(LEASE_MAX_TTL, DEFAULT_MAX_TTL)?;
        let ttl = positive("jules.lease.ttl", 2 * 3600)?;
        if ttl > max_ttl {
            return Err(crate::kit::settings::bad(
                "jules.lease.ttl",
                &crate::kit::settings::format_duration(ttl),
                "duration",
                Some(too_long(max_ttl)),
            ));
        }
        let pre_commit = crate::kit::settings::choice(
            repo,
            "jules.lease.preCommit",
            &["refuse", "warn", "off", "false", "no", "0"],
        )?;
        Ok(Settings {
            ttl,
            max_ttl,
            remind_before: positive("jules.lease.remindBefore", 15 * 60)?,
            remind: boolean(repo, "jules.lease.remind", true)?,
            ignore_case: repo
                .config_snapshot()
                .boolean("core.ignoreCase")
                .unwrap_or(false),
            release_on_finalize: boolean(repo, "jules.lease.releaseOnFinalize", true)?,
            release_on_done: boolean(repo, "jules.lease.releaseOnDone", true)?,
            pre_commit: match pre_commit.as_deref() {
                Some("off" | "false" | "no" | "0") => PreCommit::Off,
                Some("warn") => PreCommit::Warn,
                _ => PreCommit::Refuse,
            },
        })
    }

    /// The TTL of an acquire or renew: `given` (a duration such as `2h`) or the default `jules.lease.ttl`,
    /// at most `jules.lease.maxTtl`. What every frontend calls with its `--ttl`/`ttl` argument.
    pub fn ttl(&self, given: Option<&str>) -> Result<i64> {
        let Some(given) = given else {
            return Ok(self.ttl);
        };
        let ttl = parse_ttl(given)?;
        if ttl > self.max_ttl {
            return Err(Error::usage(format!(
                "the lease TTL {given} is too long: {}",
                too_long(self.max_ttl)
            )));
        }
        Ok(ttl)
    }
}

fn too_long(max_ttl: i64) -> String {
    format!(
        "leases last at most {} ({})",
        crate::kit::settings::format_duration(max_ttl),
        crate::kit::settings::LEASE_MAX_TTL
    )
}

/// The remote `--sync` goes through: the one named, else the default one; none without `sync`.
pub fn sync_remote(
    repo: &gix::Repository,
    sync: bool,
    remote: Option<String>,
) -> Result<Option<String>> {
    Ok(match (sync, remote) {
        (false, _) => None,
        (true, Some(r)) => Some(r),
        (true, None) => Some(crate::store::sync::default_remote(repo)?),
    })
}

/// What changed, for `check`.
#[derive(Debug, Clone)]
pub enum Changes {
    /// The index against HEAD (a commit about to be made).
    Staged,
    /// `git diff RANGE` (a range or a commit pair).
    Range(String),
}

impl Changes {
    /// From `--diff RANGE` (first) or `--staged`; `None` when neither is given.
    pub fn from_flags(diff: Option<String>, staged: bool) -> Option<Changes> {
        match (diff, staged) {
            (Some(r), _) => Some(Changes::Range(r)),
            (None, true) => Some(Changes::Staged),
            (None, false) => None,
        }
    }
}

/// The paths `changes` touches, both sides of a rename. The staged change is read with gix ([`staged`]): it
/// is the pre-commit hook's path, where a `git` process was most of the cost. A range goes through `git
/// diff`, after gix has checked that it names commits: a range that does not is bad input, not a failure.
pub fn changed_paths(repo: &gix::Repository, changes: &Changes) -> Result<Vec<String>> {
    let r = match changes {
        Changes::Staged => return staged::paths(repo),
        Changes::Range(r) => r,
    };
    if r.starts_with('-') {
        return Err(Error::usage(format!("{r:?} is not a range")));
    }
    if let Err(e) = repo.rev_parse(r.as_str()) {
        return Err(Error::usage(format!(
            "cannot read the range {r:?}: {e}; give a commit or A..B"
        )));
    }
    let args = [
        "diff",
        "--name-only",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        r.as_str(),
        "--",
    ];
    let out = crate::kit::gitcli::run(crate::kit::gitcli::dir_of(repo), args)?;
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bug: a lease with a far expiry (`--ttl 106751991167d`, or one written to the log by hand) showed
    /// `expires_at` as a bare number, not RFC 3339.
    #[test]
    fn every_lease_time_is_rfc3339() {
        for t in [
            i64::MIN,
            -1,
            0,
            1_800_000_000,
            9_223_373_832_678_560,
            i64::MAX,
        ] {
            let text = format_time(t);
            assert!(
                chrono::DateTime::parse_from_rfc3339(&text).is_ok(),
                "{t}: {text}"
            );
        }
        assert_eq!(format_time(i64::MAX), "9999-12-31T23:59:59Z");
    }

    fn id(n: u8) -> EventId {
        EventId::from_hex(&format!("{n:02x}").repeat(32)).unwrap()
    }

    fn acquire(paths: &[&str], at: i64, ttl: i64, lock: bool) -> serde_json::Value {
        serde_json::json!({"paths": paths, "exclusive": true, "at": at, "expires": at + ttl, "lock": lock})
    }

    #[test]
    fn the_first_in_the_total_order_holds_and_the_second_is_denied() {
        let mut v = View::default();
        v.apply(&id(1), ACQUIRE, "ann", &acquire(&["src/a"], 100, 60, false));
        v.apply(&id(2), ACQUIRE, "bob", &acquire(&["src/*"], 110, 60, false));
        assert_eq!(v.leases[0].state, State::Held);
        assert_eq!(v.leases[1].state, State::Denied);
        assert_eq!(v.leases[1].by.as_deref(), Some(id(1).to_hex().as_str()));
        // After expiry the paths are free again.
        v.apply(&id(3), ACQUIRE, "bob", &acquire(&["src/*"], 161, 60, false));
        assert_eq!(v.leases[2].state, State::Held);
    }

    #[test]
    fn a_lock_beats_provisional_leases_but_not_another_lock() {
        let mut v = View::default();
        v.apply(&id(1), ACQUIRE, "ann", &acquire(&["src"], 100, 60, false));
        v.apply(&id(2), ACQUIRE, "bob", &acquire(&["src/x"], 101, 60, true));
        assert_eq!(v.leases[0].state, State::Superseded);
        assert_eq!(v.leases[1].state, State::Held);
        v.apply(&id(3), ACQUIRE, "cat", &acquire(&["src/x"], 102, 60, true));
        assert_eq!(v.leases[2].state, State::Denied);
    }

    #[test]
    fn renew_extends_only_a_live_lease_of_its_holder_and_release_frees() {
        let mut v = View::default();
        let l = id(1).to_hex();
        v.apply(&id(1), ACQUIRE, "ann", &acquire(&["a"], 100, 60, false));
        v.apply(
            &id(2),
            RENEW,
            "bob",
            &serde_json::json!({"lease": l, "at": 120, "expires": 999}),
        );
        assert_eq!(v.leases[0].expires, 160);
        v.apply(
            &id(3),
            RENEW,
            "ann",
            &serde_json::json!({"lease": l, "at": 120, "expires": 400}),
        );
        assert_eq!(v.leases[0].expires, 400);
        v.apply(
            &id(4),
            RENEW,
            "ann",
            &serde_json::json!({"lease": l, "at": 500, "expires": 900}),
        );
        assert_eq!(v.leases[0].expires, 400);
        v.apply(
            &id(5),
            RELEASE,
            "bob",
            &serde_json::json!({"lease": l, "at": 130, "forced": true, "reason": "stuck"}),
        );
        assert_eq!(v.leases[0].state, State::Released);
        assert!(v.leases[0].forced);
    }

    #[test]
    fn shared_leases_coexist_and_an_exclusive_one_does_not_join_them() {
        let mut v = View::default();
        let shared = |at| serde_json::json!({"paths": ["docs"], "exclusive": false, "at": at, "expires": at + 60});
        v.apply(&id(1), ACQUIRE, "ann", &shared(100));
        v.apply(&id(2), ACQUIRE, "bob", &shared(101));
        v.apply(
            &id(3),
            ACQUIRE,
            "cat",
            &acquire(&["docs/x.md"], 102, 60, false),
        );
        let states: Vec<State> = v.leases.iter().map(|l| l.state).collect();
        assert_eq!(states, [State::Held, State::Held, State::Denied]);
    }
}
