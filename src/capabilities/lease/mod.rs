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
#[cfg(test)]
mod test_support;

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

    // The use cases of this module on real repositories (bare ones for the log, a work tree for ranges, the
    // index and the trust file, a bare remote and clone for the sync), at fixed times.

    use super::test_support::{
        bare, bare_with, clone, commit, git, lease_events, mails, req, worktree, PINNED, PINNED_AT,
    };
    use crate::kit::error::ErrorKind;

    const T: i64 = 1_800_000_000;

    /// The lease `req` acquired provisionally at `at`; it must be held.
    fn held(log: &Log<'_>, at: i64, r: &ops::AcquireRequest) -> Lease {
        let r = ops::acquire(log, at, r, None).unwrap();
        assert!(r.held, "{r:?}");
        r.lease.unwrap()
    }

    fn ids<'a>(leases: impl IntoIterator<Item = &'a Lease>) -> Vec<String> {
        leases.into_iter().map(|l| l.id.clone()).collect()
    }

    /// The bounds RFC 3339 can write, and the epoch. Catches a sign of `FIRST` or `LAST` lost (the clamp
    /// then panics, or shows an early time as a late one).
    #[test]
    fn times_outside_rfc3339_show_as_its_first_and_last_second() {
        assert_eq!(format_time(i64::MIN), "0000-01-01T00:00:00Z");
        assert_eq!(format_time(-62_167_219_201), "0000-01-01T00:00:00Z");
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(T), "2027-01-15T08:00:00Z");
        assert_eq!(format_time(253_402_300_800), "9999-12-31T23:59:59Z");
    }

    /// A lease is live while held and before its expiry (not at it); its mode and short id; which requests
    /// it blocks: another persona's, while live, overlapping, exclusive on either side. Catches the
    /// mutants of `live_at` (108), `mode` (112), `blocks` (121 to 124) and `short` (128).
    #[test]
    fn a_lease_blocks_others_overlapping_requests_while_live_and_exclusive_on_either_side() {
        let mut v = View::default();
        v.apply(&id(1), ACQUIRE, "ann", &acquire(&["src/"], 100, 60, false));
        let l = v.leases[0].clone();
        assert!(l.live_at(100) && l.live_at(159) && !l.live_at(160));
        assert_eq!((l.mode(), l.short()), ("exclusive", "010101010101"));
        let pats = |p: &str| parse_patterns(&[p.to_owned()], true).unwrap();
        assert!(l.blocks("bob", &pats("src/a"), true, 159));
        assert!(l.blocks("bob", &pats("src/a"), false, 100));
        assert!(!l.blocks("bob", &pats("src/a"), true, 160), "expired");
        assert!(!l.blocks("ann", &pats("src/a"), true, 120), "its holder");
        assert!(!l.blocks("bob", &pats("docs"), true, 120), "elsewhere");
        assert_eq!(
            ids(v.conflicts("bob", &pats("src/a"), false, 120)),
            [l.id.as_str()]
        );
        assert!(v.conflicts("bob", &pats("docs"), true, 120).is_empty());
        v.apply(
            &id(2),
            ACQUIRE,
            "bob",
            &serde_json::json!({"paths": ["docs"], "exclusive": false, "at": 100, "expires": 200}),
        );
        let s = v.leases[1].clone();
        assert_eq!(s.mode(), "shared");
        assert!(s.blocks("cat", &pats("docs/x"), true, 150));
        assert!(
            !s.blocks("cat", &pats("docs/x"), false, 150),
            "shared with shared"
        );
        let mut released = l.clone();
        released.state = State::Released;
        assert!(!released.live_at(120));
        assert!(!released.blocks("bob", &pats("src/a"), true, 120));
        released.id = "abc".into();
        assert_eq!(released.short(), "abc");
    }

    /// A request names at least one path; each is parsed.
    #[test]
    fn patterns_need_one_path_at_least() {
        let e = parse_patterns(&[], true).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (
                ErrorKind::Usage,
                "a lease needs at least one path or pattern"
            )
        );
        let p = parse_patterns(&["a".into(), "b/*".into()], true).unwrap();
        assert_eq!(
            p.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            ["a", "b/*"]
        );
    }

    /// Every field of an acquire event reaches the lease (times, reason, task); a shared acquire without
    /// `lock`; an event without `exclusive` is exclusive. Catches `int` and `text` returning fixed values
    /// (151, 155) and `get` → `None` (160).
    #[test]
    fn the_fold_reads_every_field_of_an_acquire() {
        let mut v = View::default();
        v.apply(
            &id(1),
            ACQUIRE,
            "ann",
            &serde_json::json!({"paths": ["src/"], "at": 100, "expires": 250, "reason": "r", "task": "t"}),
        );
        let l = v.get(&id(1).to_hex()).unwrap();
        assert_eq!(
            (
                l.persona.as_str(),
                l.acquired,
                l.expires,
                l.exclusive,
                l.lock
            ),
            ("ann", 100, 250, true, false)
        );
        assert_eq!(
            (l.reason.as_deref(), l.task.as_deref()),
            (Some("r"), Some("t"))
        );
        assert_eq!(
            (l.state, l.by.as_deref(), l.forced),
            (State::Held, None, false)
        );
        assert!(v.get(&id(2).to_hex()).is_none());
        // Events the fold cannot read are left out: no paths, a pattern it cannot parse, no times.
        for d in [
            serde_json::json!({"at": 1, "expires": 2}),
            serde_json::json!({"paths": ["a["], "at": 1, "expires": 2}),
            serde_json::json!({"paths": ["b"], "expires": 2}),
        ] {
            v.apply(&id(3), ACQUIRE, "bob", &d);
        }
        assert_eq!(v.leases.len(), 1);
    }

    /// The lease a prefix names: at least 4 hex digits; none, one or several. Catches `find`'s mutants (165:
    /// `<` as `==`, `>`, `<=`; `||` as `&&`; the `!` deleted).
    #[test]
    fn find_takes_a_unique_prefix_of_four_hex_digits_or_more() {
        let mut v = View::default();
        let a = EventId::from_hex(&format!("abcd{}", "0".repeat(60))).unwrap();
        let b = EventId::from_hex(&format!("abce{}", "1".repeat(60))).unwrap();
        v.apply(&a, ACQUIRE, "ann", &acquire(&["a"], 100, 60, false));
        v.apply(&b, ACQUIRE, "ann", &acquire(&["b"], 100, 60, false));
        assert_eq!(v.find("abcd").unwrap().id, a.to_hex());
        assert_eq!(v.find(&b.to_hex()).unwrap().id, b.to_hex());
        for bad in ["abc", "", "abcz", "xyzw0"] {
            let e = v.find(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Usage, "{bad}");
            assert_eq!(
                e.to_string(),
                format!("{bad:?} is not a lease id (at least 4 hex digits)")
            );
        }
        let e = v.find("abc0").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound, "{e}");
        let e = v.find("abc").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert_eq!(v.find("ABCD").unwrap_err().kind(), ErrorKind::NotFound);
        let mut w = v.clone();
        let c = EventId::from_hex(&format!("abcd{}", "2".repeat(60))).unwrap();
        w.apply(&c, ACQUIRE, "ann", &acquire(&["c"], 100, 60, false));
        match w.find("abcd").unwrap_err() {
            crate::kit::error::Error::Ambiguous { candidates, .. } => {
                assert_eq!(candidates, ["abcd00000000", "abcd22222222"])
            }
            e => panic!("{e:?}"),
        }
    }

    /// A lock acquire supersedes every provisional lease it conflicts with (each names it); one that meets a
    /// lock too is denied, naming the lock (not the provisional lease met first); releases record who,
    /// whether forced (by another, even without the flag) and why; a reminder records the expiry; events
    /// naming no lease change nothing. Catches the fold's arms deleted and its guards (`lock && all(!lock)`,
    /// the release's `state == Held`, `forced || persona != actor`).
    #[test]
    fn the_fold_supersedes_denies_releases_and_records_reminders() {
        let mut v = View::default();
        v.apply(&id(1), ACQUIRE, "ann", &acquire(&["src/a"], 100, 60, false));
        v.apply(&id(2), ACQUIRE, "bob", &acquire(&["src/b"], 100, 60, false));
        v.apply(
            &id(3),
            ACQUIRE,
            "eve",
            &acquire(&["elsewhere"], 100, 60, false),
        );
        v.apply(&id(4), ACQUIRE, "cat", &acquire(&["src/"], 101, 60, true));
        let by4 = Some(id(4).to_hex());
        for i in 0..2 {
            assert_eq!(
                (v.leases[i].state, &v.leases[i].by),
                (State::Superseded, &by4)
            );
        }
        assert_eq!(
            (v.leases[2].state, v.leases[3].state),
            (State::Held, State::Held)
        );
        v.apply(&id(5), ACQUIRE, "dan", &acquire(&["src/c"], 102, 60, false));
        assert_eq!((v.leases[4].state, &v.leases[4].by), (State::Denied, &by4));
        v.apply(
            &id(6),
            ACQUIRE,
            "fay",
            &acquire(&["elsewhere", "src/c"], 103, 60, true),
        );
        assert_eq!((v.leases[5].state, &v.leases[5].by), (State::Denied, &by4));
        assert_eq!(
            v.leases[2].state,
            State::Held,
            "a denied lock supersedes nothing"
        );
        let rel = |v: &mut View, n, actor: &str, d: serde_json::Value| {
            v.apply(&id(n), RELEASE, actor, &d)
        };
        rel(
            &mut v,
            7,
            "eve",
            serde_json::json!({"lease": id(3).to_hex(), "at": 110}),
        );
        let l = &v.leases[2];
        assert_eq!(
            (
                l.state,
                l.by.as_deref(),
                l.forced,
                l.release_reason.as_deref()
            ),
            (State::Released, Some("eve"), false, None)
        );
        rel(
            &mut v,
            8,
            "zed",
            serde_json::json!({"lease": id(4).to_hex(), "at": 110, "reason": "gone"}),
        );
        let l = &v.leases[3];
        assert_eq!(
            (
                l.state,
                l.by.as_deref(),
                l.forced,
                l.release_reason.as_deref()
            ),
            (State::Released, Some("zed"), true, Some("gone"))
        );
        // A release of a lease that is not held changes nothing.
        rel(
            &mut v,
            9,
            "ann",
            serde_json::json!({"lease": id(1).to_hex(), "at": 110, "reason": "x"}),
        );
        let l = &v.leases[0];
        assert_eq!(
            (l.state, l.by.as_deref(), l.release_reason.as_deref()),
            (State::Superseded, by4.as_deref(), None)
        );
        v.apply(
            &id(10),
            REMIND,
            "clerk",
            &serde_json::json!({"lease": id(5).to_hex(), "expires": 162}),
        );
        assert_eq!(
            (v.leases[4].reminded, v.leases[4].expires),
            (Some(162), 162)
        );
        let a = id(1).to_hex();
        v.apply(
            &id(11),
            RENEW,
            "ann",
            &serde_json::json!({"lease": "nothing", "at": 1, "expires": 9}),
        );
        v.apply(
            &id(12),
            "lease.other",
            "ann",
            &serde_json::json!({"lease": a, "at": 1, "expires": 9}),
        );
        assert_eq!(v.leases[0].expires, 160);
        let reminded: Vec<usize> = (0..v.leases.len())
            .filter(|&i| v.leases[i].reminded.is_some())
            .collect();
        assert_eq!(reminded, [4]);
    }

    /// The projection keeps every field of every lease through its cache file, and reads the file back.
    /// Catches `save` → `Ok(())`, `load` → `None` (the reread is a fold of its own otherwise) and
    /// `Projection::apply` → `()`.
    #[test]
    fn the_projection_saves_and_loads_every_field() {
        use crate::store::eventlog::cache::{write_sealed, Projection, Stamp, META};
        let mut v = View::default();
        v.apply(
            &id(1),
            ACQUIRE,
            "ann",
            &serde_json::json!({"paths": ["src/", "b"], "exclusive": false, "at": 100, "expires": 160,
                                "lock": true, "reason": "r", "task": "t"}),
        );
        v.apply(&id(2), ACQUIRE, "bob", &acquire(&["c"], 100, 60, false));
        v.apply(
            &id(3),
            RELEASE,
            "cat",
            &serde_json::json!({"lease": id(2).to_hex(), "at": 101, "reason": "why"}),
        );
        v.apply(
            &id(4),
            REMIND,
            "clerk",
            &serde_json::json!({"lease": id(1).to_hex(), "expires": 160}),
        );
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&[]);
        Projection::save(&v, dir.path(), &stamp).unwrap();
        write_sealed(dir.path(), META, b"{}", &stamp).unwrap();
        let w = <View as Projection>::load(dir.path()).expect("the saved view");
        let fields = |v: &View| {
            v.leases
                .iter()
                .map(|l| serde_json::to_string(&Stored::from(l)).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(fields(&w), fields(&v));
        let l = w.get(&id(1).to_hex()).unwrap();
        assert_eq!((l.reminded, l.patterns.len()), (Some(160), 2));
        assert!(!l.exclusive && l.lock);
        let l = w.get(&id(2).to_hex()).unwrap();
        assert_eq!(
            (
                l.state,
                l.by.as_deref(),
                l.forced,
                l.release_reason.as_deref()
            ),
            (State::Released, Some("cat"), true, Some("why"))
        );
        // Through a real log: the fold of its events, saved and read back.
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo).unwrap();
        assert!(view(&log).unwrap().leases.is_empty());
        let a = held(&log, T, &req("ann", &["src/"], true, 60));
        for _ in 0..2 {
            let v = view(&log).unwrap();
            assert_eq!(ids(&v.leases), [a.id.as_str()]);
        }
    }

    /// "Now" is the committer time the repository pins (`gitoxide.commit.committerDate`).
    #[test]
    fn now_is_the_pinned_committer_time() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(now(&bare_with(dir.path(), "r", &[PINNED])), PINNED_AT);
    }

    /// Durations: positive ones in seconds, zero and unreadable ones refused with why. Catches the guard
    /// `n > 0` (409: `true`, `false`; `>` as `==`, `<`, `>=`).
    #[test]
    fn parse_ttl_takes_positive_durations_only() {
        assert_eq!(parse_ttl("1s").unwrap(), 1);
        assert_eq!(parse_ttl("2h").unwrap(), 7200);
        assert_eq!(parse_ttl("1w").unwrap(), 604_800);
        for (bad, why) in [
            ("0m", "cannot read the duration \"0m\": it must be longer than nothing"),
            (
                "soon",
                "cannot read the duration \"soon\": use a number and a unit, such as 90s, 30m, 2h, 1d, 1w",
            ),
        ] {
            let e = parse_ttl(bad).unwrap_err();
            assert_eq!((e.kind(), e.to_string().as_str()), (ErrorKind::Usage, why));
        }
    }

    /// `list`: live leases at `now` unless `all`; by persona; by path (overlap); each with whether it is
    /// live and the seconds left. Catches `filter.all || live` as `&&`, the persona test as `!=`, and the
    /// path filter's mutants.
    #[test]
    fn list_filters_live_leases_by_persona_and_path() {
        let mut v = View::default();
        v.apply(&id(1), ACQUIRE, "ann", &acquire(&["src/"], 100, 60, false));
        v.apply(
            &id(2),
            ACQUIRE,
            "bob",
            &acquire(&["docs/"], 100, 100, false),
        );
        v.apply(&id(3), ACQUIRE, "ann", &acquire(&["lib/"], 100, 100, false));
        v.apply(
            &id(4),
            RELEASE,
            "ann",
            &serde_json::json!({"lease": id(3).to_hex(), "at": 110}),
        );
        let names = |now, f: Filter| {
            list(&v, now, &f)
                .unwrap()
                .into_iter()
                .map(|l| (l.lease.paths[0].clone(), l.live, l.expires_in))
                .collect::<Vec<_>>()
        };
        let all = |persona: Option<&str>, path: Option<&str>, all| Filter {
            persona: persona.map(str::to_owned),
            path: path.map(str::to_owned),
            all,
        };
        let s = |p: &str, live, left| (p.to_owned(), live, left);
        assert_eq!(
            names(159, all(None, None, false)),
            [s("src/", true, 1), s("docs/", true, 41)]
        );
        assert_eq!(names(160, all(None, None, false)), [s("docs/", true, 40)]);
        assert_eq!(
            names(160, all(None, None, true)),
            [
                s("src/", false, 0),
                s("docs/", true, 40),
                s("lib/", false, 40)
            ]
        );
        assert_eq!(
            names(120, all(Some("ann"), None, false)),
            [s("src/", true, 40)]
        );
        assert_eq!(names(120, all(Some("ann"), None, true)).len(), 2);
        assert_eq!(
            names(120, all(None, Some("docs/x.md"), false)),
            [s("docs/", true, 80)]
        );
        assert_eq!(
            names(120, all(None, Some("lib"), true)),
            [s("lib/", false, 80)]
        );
        assert!(list(&v, 120, &all(None, Some("a["), false)).is_err());
    }

    /// `sign_listed` fills each listed lease's signature when the repository has a trust file, and leaves
    /// it `null` otherwise. Catches `sign_listed` → `Ok(())`.
    #[test]
    fn listed_leases_carry_their_signature_state_under_a_trust_file() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = worktree(dir.path(), "w", &[]);
        commit(&path, &[(".jules/allowed_signers", "")], "trust");
        let repo = gix::open(&path).unwrap();
        let log = open(&repo).unwrap();
        held(&log, T, &req("ann", &["src/"], true, 60));
        let mut items = list(&view(&log).unwrap(), T, &Filter::default()).unwrap();
        assert_eq!(items.len(), 1);
        assert!(items[0].signature.is_none());
        sign_listed(&log, &mut items).unwrap();
        assert_eq!(
            serde_json::to_value(&items[0].signature).unwrap(),
            serde_json::json!({"state": "unsigned"})
        );
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo).unwrap();
        held(&log, T, &req("ann", &["src/"], true, 60));
        let mut items = list(&view(&log).unwrap(), T, &Filter::default()).unwrap();
        sign_listed(&log, &mut items).unwrap();
        assert!(items[0].signature.is_none());
    }

    /// After `series finalize` landed `old..new`: the persona's leases over the files it changed are
    /// released (`series finalized`), unless `jules.lease.releaseOnFinalize` is false. Catches the `!`
    /// deleted and `release_after_finalize` → `Ok(vec![])`.
    #[test]
    fn release_after_finalize_releases_the_leases_over_the_landed_files() {
        for on in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let config: Vec<(&str, &str)> = if on {
                vec![PINNED]
            } else {
                vec![PINNED, ("jules.lease.releaseOnFinalize", "false")]
            };
            let (path, _) = worktree(dir.path(), "w", &config);
            let old = commit(&path, &[("src/a.rs", "1"), ("docs/x.md", "1")], "old");
            let new = commit(&path, &[("src/a.rs", "2")], "new");
            let repo = gix::open(&path).unwrap();
            assert!(release_after_finalize(&repo, "ann", old, new)
                .unwrap()
                .is_empty());
            let log = open(&repo).unwrap();
            let src = held(&log, PINNED_AT, &req("ann", &["src/"], true, 7200));
            let docs = held(&log, PINNED_AT, &req("ann", &["docs/"], true, 7200));
            let r = release_after_finalize(&repo, "ann", old, new).unwrap();
            if !on {
                assert!(r.is_empty());
                assert_eq!(lease_events(&repo).len(), 2);
                continue;
            }
            assert_eq!(ids(&r), [src.id.as_str()]);
            assert_eq!(
                lease_events(&repo).last().unwrap().2,
                serde_json::json!({"lease": src.id, "at": PINNED_AT, "forced": false, "reason": "series finalized"})
            );
            assert_eq!(
                view(&log).unwrap().get(&docs.id).unwrap().state,
                State::Held
            );
        }
    }

    /// After `task done`: the persona's leases for the task are released (`task done`), unless
    /// `jules.lease.releaseOnDone` is false.
    #[test]
    fn release_after_done_releases_the_leases_for_the_task() {
        for on in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let config: Vec<(&str, &str)> = if on {
                vec![PINNED]
            } else {
                vec![PINNED, ("jules.lease.releaseOnDone", "false")]
            };
            let repo = bare_with(dir.path(), "r", &config);
            assert!(release_after_done(&repo, "ann", "abcd1234")
                .unwrap()
                .is_empty());
            let log = open(&repo).unwrap();
            let mut r = req("ann", &["src/"], true, 7200);
            r.task = Some("abcd".into());
            let t = held(&log, PINNED_AT, &r);
            held(&log, PINNED_AT, &req("ann", &["docs/"], true, 7200));
            let out = release_after_done(&repo, "ann", "abcd1234").unwrap();
            if on {
                assert_eq!(ids(&out), [t.id.as_str()]);
                assert_eq!(
                    lease_events(&repo).last().unwrap().2,
                    serde_json::json!({"lease": t.id, "at": PINNED_AT, "forced": false, "reason": "task done"})
                );
            } else {
                assert!(out.is_empty());
                assert_eq!(lease_events(&repo).len(), 2);
            }
        }
    }

    /// `remind_due` reminds with `jules.lease.remindBefore`, and not at all under `jules.lease.remind =
    /// false`. Catches the `!` deleted and `remind_due` → `Ok(vec![])`.
    #[test]
    fn remind_due_follows_the_settings() {
        for (config, want) in [
            (vec![], 0),
            (vec![("jules.lease.remindBefore", "1h")], 1),
            (
                vec![
                    ("jules.lease.remindBefore", "1h"),
                    ("jules.lease.remind", "false"),
                ],
                0,
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let repo = bare_with(dir.path(), "r", &config);
            let log = open(&repo).unwrap();
            held(&log, T, &req("ann", &["src/"], true, 3600));
            let r = remind_due(&repo, T + 60, "clerk").unwrap();
            assert_eq!(r.len(), want, "{config:?}");
            assert_eq!(mails(&repo).len(), want);
        }
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo).unwrap();
        held(&log, T, &req("ann", &["src/"], true, 900));
        assert_eq!(
            remind_due(&repo, T, "clerk").unwrap().len(),
            1,
            "15 min by default"
        );
    }

    /// A sync that sends reminders syncs again to publish them, and its report adds both syncs' rounds and
    /// keeps each ref's latest change. Catches the `!` of `!reminded.is_empty()` deleted, `rounds +=` and
    /// `folded +=` as `-=` or `*=`, and the guard of the ref merge (`true`, `false`, `==`).
    #[test]
    fn a_sync_that_reminds_syncs_again_and_reports_both() {
        let pinned = |dir: &std::path::Path| {
            let repo = clone(dir, "a");
            git(repo.path(), &["config", PINNED.0, PINNED.1]);
            gix::open(repo.path()).unwrap()
        };
        // Nothing due: one sync, nothing reminded.
        let dir = tempfile::tempdir().unwrap();
        let repo = pinned(dir.path());
        held(
            &open(&repo).unwrap(),
            PINNED_AT,
            &req("ann", &["src/"], true, 3600),
        );
        let quiet = sync_and_remind(&repo, Some("origin"), true, "clerk").unwrap();
        assert!(quiet.reminded.is_empty() && quiet.remind_error.is_none());
        assert_eq!((quiet.report.rounds, quiet.report.folded), (1, 0));
        // A reminder that cannot be sent (a sender who is no persona) leaves the sync done and says why.
        let failed = sync_and_remind(&repo, Some("origin"), true, "bad persona").unwrap();
        assert!(failed.reminded.is_empty());
        assert_eq!(
            failed.remind_error.as_deref(),
            Some("invalid persona name \"bad persona\": ' ' is not allowed (use letters, digits, '-', '_' and '.')")
        );
        // Due: ann's lease expires 10 minutes after the pinned clock; another log has news too.
        let dir = tempfile::tempdir().unwrap();
        let repo = pinned(dir.path());
        let log = open(&repo).unwrap();
        let remote = gix::open(dir.path().join("remote.git")).unwrap();
        held(&log, PINNED_AT, &req("ann", &["src/"], true, 600));
        crate::store::eventlog::Log::open(&repo, "refs/jules/state")
            .unwrap()
            .append(crate::store::eventlog::test_support::event(1))
            .unwrap();
        let r = sync_and_remind(&repo, Some("origin"), true, "clerk").unwrap();
        assert_eq!(r.reminded.len(), 1);
        assert!(r.remind_error.is_none());
        assert_eq!(r.report.rounds, 2);
        // The first sync pushed this clone's writer refs beside the shared ones (it folds nothing: a first
        // sync, as `quiet` shows); the second one's fold takes its writer ref of the lease log in.
        assert_eq!(r.report.folded, 1);
        assert_eq!(mails(&remote).len(), 1, "the reminder published");
        let tip = |name: &str| git(repo.path(), &["rev-parse", name]);
        let action = |name: &str| {
            let x = r.report.refs.iter().find(|x| x.name == name).unwrap();
            (x.action, x.tip.clone())
        };
        assert_eq!(
            action("refs/jules/lease"),
            (crate::store::sync::Action::Pushed, tip("refs/jules/lease"))
        );
        assert_eq!(
            action("refs/jules/state"),
            (crate::store::sync::Action::Pushed, tip("refs/jules/state"))
        );
        assert_eq!(action("refs/jules/mail").1, tip("refs/jules/mail"));
    }

    /// `covering`: the live exclusive leases over a file. Catches both `&&` → `||` and `covering` → `vec![]`.
    #[test]
    fn covering_names_the_live_exclusive_leases_over_a_file() {
        let mut v = View::default();
        v.apply(&id(1), ACQUIRE, "ann", &acquire(&["src/"], 100, 60, false));
        v.apply(
            &id(2),
            ACQUIRE,
            "bob",
            &serde_json::json!({"paths": ["docs/"], "exclusive": false, "at": 100, "expires": 200}),
        );
        v.apply(&id(3), ACQUIRE, "cat", &acquire(&["lib/"], 100, 10, false));
        assert_eq!(ids(covering(&v, 120, "src/a.rs")), [id(1).to_hex()]);
        assert!(covering(&v, 160, "src/a.rs").is_empty(), "expired");
        assert!(covering(&v, 120, "docs/a.md").is_empty(), "shared");
        assert!(covering(&v, 120, "lib/x").is_empty(), "expired");
        assert!(covering(&v, 105, "other").is_empty());
        assert_eq!(ids(covering(&v, 105, "lib/x")), [id(3).to_hex()]);
    }

    fn task(
        id: &str,
        persona: &str,
        state: &str,
        paths: &[&str],
    ) -> crate::capabilities::state::view::Task {
        crate::capabilities::state::view::Task {
            id: id.into(),
            title: "t".into(),
            persona: Some(persona.into()),
            sprint: None,
            state: state.into(),
            created_at: String::new(),
            updated_at: String::new(),
            paths: paths.iter().map(|p| p.to_string()).collect(),
        }
    }

    fn plan(personas: &[&str]) -> crate::capabilities::state::tick::Plan {
        crate::capabilities::state::tick::Plan {
            sprint: None,
            mode: "sequential".into(),
            now: String::new(),
            decisions: personas
                .iter()
                .map(|p| crate::capabilities::state::tick::Decision {
                    persona: p.to_string(),
                    track: "t".into(),
                    reason: "r".into(),
                    context: String::new(),
                })
                .collect(),
            waiting: Vec::new(),
            skipped: Vec::new(),
            alerts: Vec::new(),
            complete: false,
        }
    }

    /// `hold_back`: a persona whose open task declares paths under another persona's live exclusive lease is
    /// not launched, and the plan says why; done tasks, others' tasks, shared or own leases hold nobody
    /// back. Catches `hold_back` → `Ok(())` and each test of its task filter.
    #[test]
    fn hold_back_skips_personas_whose_open_tasks_meet_an_exclusive_lease() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo).unwrap();
        let ann = held(&log, T, &req("ann", &["src/"], true, 600));
        held(&log, T, &req("gus", &["docs/"], false, 600));
        let tasks = [
            task("1111111111", "bob", "todo", &["src/a.rs"]),
            task("2222222222", "cat", "todo", &["docs/"]),
            task("3333333333", "dan", "done", &["src/"]),
            task("4444444444", "eve", "todo", &[]),
            task("5555555555", "ann", "todo", &["src/"]),
            task("6666666666", "fay", "todo", &["a["]),
        ];
        let skipped = |tasks: &[crate::capabilities::state::view::Task], now| {
            let mut p = plan(&["ann", "bob", "cat", "dan", "eve", "fay"]);
            hold_back(&repo, tasks, &mut p, now).unwrap();
            let launched: Vec<String> = p.decisions.iter().map(|d| d.persona.clone()).collect();
            let why: Vec<(String, String)> =
                p.skipped.into_iter().map(|s| (s.persona, s.why)).collect();
            (launched, why)
        };
        let (launched, why) = skipped(&tasks, T + 10);
        assert_eq!(launched, ["ann", "cat", "dan", "eve", "fay"]);
        assert_eq!(
            why,
            [(
                "bob".to_string(),
                format!(
                    "held back: task 1111111 declares src/a.rs under lease {} of ann until {}",
                    ann.short(),
                    format_time(T + 600)
                )
            )]
        );
        // Every task with paths (none without): the same.
        let (_, why) = skipped(&tasks[..1], T + 10);
        assert_eq!(why.len(), 1);
        // Once the lease has run out, nobody.
        assert!(skipped(&tasks, T + 600).1.is_empty());
        // No task declares paths: nothing to look at.
        assert!(skipped(&tasks[3..4], T + 10).1.is_empty());
    }

    /// The settings: defaults, each key read, bad values refused naming the key, `ttl` at most `maxTtl`.
    /// Catches the `Some(0)` arm, `ttl > max_ttl` (`==`, `<`, `>=`), the `preCommit` arms deleted.
    #[test]
    fn settings_read_every_key_and_refuse_bad_values() {
        let settings = |config: &[(&str, &str)]| {
            let dir = tempfile::tempdir().unwrap();
            Settings::from_config(&bare_with(dir.path(), "r", config))
        };
        let s = settings(&[]).unwrap();
        assert_eq!(
            (s.ttl, s.remind_before, s.remind, s.max_ttl, s.ignore_case),
            (7200, 900, true, DEFAULT_MAX_TTL, false)
        );
        assert!(s.release_on_finalize && s.release_on_done);
        assert_eq!(s.pre_commit, PreCommit::Refuse);
        let s = settings(&[
            ("jules.lease.ttl", "1h"),
            ("jules.lease.remindBefore", "5m"),
            ("jules.lease.remind", "false"),
            ("jules.lease.maxTtl", "1h"),
            ("core.ignoreCase", "true"),
            ("jules.lease.releaseOnFinalize", "false"),
            ("jules.lease.releaseOnDone", "no"),
            ("jules.lease.preCommit", "warn"),
        ])
        .unwrap();
        assert_eq!(
            (s.ttl, s.remind_before, s.remind, s.max_ttl, s.ignore_case),
            (3600, 300, false, 3600, true)
        );
        assert!(!s.release_on_finalize && !s.release_on_done);
        assert_eq!(s.pre_commit, PreCommit::Warn);
        for (word, want) in [
            ("refuse", PreCommit::Refuse),
            ("warn", PreCommit::Warn),
            ("off", PreCommit::Off),
            ("false", PreCommit::Off),
            ("no", PreCommit::Off),
            ("0", PreCommit::Off),
        ] {
            assert_eq!(
                settings(&[("jules.lease.preCommit", word)])
                    .unwrap()
                    .pre_commit,
                want
            );
        }
        assert_eq!(
            settings(&[("jules.lease.ttl", "7d")]).unwrap().ttl,
            DEFAULT_MAX_TTL
        );
        assert_eq!(
            settings(&[("jules.lease.ttl", "1w")]).unwrap().ttl,
            DEFAULT_MAX_TTL
        );
        for (config, why) in [
            (
                vec![("jules.lease.ttl", "8d")],
                "bad duration config value '8d' for 'jules.lease.ttl': leases last at most 7d (jules.lease.maxTtl)",
            ),
            (
                vec![("jules.lease.maxTtl", "1h"), ("jules.lease.ttl", "61m")],
                "bad duration config value '61m' for 'jules.lease.ttl': leases last at most 1h (jules.lease.maxTtl)",
            ),
            (
                vec![("jules.lease.ttl", "0s")],
                "bad duration config value '0' for 'jules.lease.ttl': it must be longer than nothing",
            ),
            (
                vec![("jules.lease.maxTtl", "0m")],
                "bad duration config value '0' for 'jules.lease.maxTtl': it must be longer than nothing",
            ),
            (
                vec![("jules.lease.remindBefore", "0h")],
                "bad duration config value '0' for 'jules.lease.remindBefore': it must be longer than nothing",
            ),
        ] {
            let e = settings(&config).unwrap_err();
            assert_eq!((e.kind(), e.to_string().as_str()), (ErrorKind::Usage, why));
        }
        for (k, v) in [
            ("jules.lease.ttl", "soon"),
            ("jules.lease.remind", "maybe"),
            ("jules.lease.releaseOnFinalize", "x2"),
            ("jules.lease.releaseOnDone", "x"),
            ("jules.lease.preCommit", "never"),
        ] {
            let e = settings(&[(k, v)]).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Usage, "{k}");
            assert!(e.to_string().contains(k), "{k}: {e}");
        }
    }

    /// The TTL of a request: the default, or the one given, at most `maxTtl` (which is allowed). Catches
    /// `ttl > self.max_ttl` (`==`, `<`, `>=`) and `too_long` → `""`, `"xyzzy"`.
    #[test]
    fn a_requested_ttl_is_at_most_the_max() {
        let dir = tempfile::tempdir().unwrap();
        let s = Settings::from_config(&bare_with(dir.path(), "r", &[("jules.lease.maxTtl", "2h")]))
            .unwrap();
        assert_eq!(s.ttl(None).unwrap(), 7200);
        assert_eq!(s.ttl(Some("2h")).unwrap(), 7200);
        assert_eq!(s.ttl(Some("1m")).unwrap(), 60);
        let e = s.ttl(Some("7201s")).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (
                ErrorKind::Usage,
                "the lease TTL 7201s is too long: leases last at most 2h (jules.lease.maxTtl)"
            )
        );
        assert!(s.ttl(Some("0s")).is_err());
    }

    /// The remote of `--sync`: none without it; the one named; else the default (`origin`).
    #[test]
    fn sync_remote_is_the_named_or_the_default_remote_and_only_with_sync() {
        let dir = tempfile::tempdir().unwrap();
        let repo = clone(dir.path(), "a");
        assert_eq!(sync_remote(&repo, false, Some("up".into())).unwrap(), None);
        assert_eq!(
            sync_remote(&repo, true, Some("up".into()))
                .unwrap()
                .as_deref(),
            Some("up")
        );
        assert_eq!(
            sync_remote(&repo, true, None).unwrap().as_deref(),
            Some("origin")
        );
        let lone = bare(dir.path(), "lone");
        assert_eq!(sync_remote(&lone, false, None).unwrap(), None);
        assert_eq!(
            sync_remote(&lone, true, None).unwrap_err().kind(),
            ErrorKind::Usage
        );
    }

    #[test]
    fn changes_come_from_a_diff_range_first_then_staged() {
        let c = |d: Option<&str>, s| match Changes::from_flags(d.map(str::to_owned), s) {
            None => "none".to_owned(),
            Some(Changes::Staged) => "staged".to_owned(),
            Some(Changes::Range(r)) => r,
        };
        assert_eq!(c(Some("a..b"), true), "a..b");
        assert_eq!(c(Some("a..b"), false), "a..b");
        assert_eq!(c(None, true), "staged");
        assert_eq!(c(None, false), "none");
    }

    /// The paths a range or the index changes: both sides of a rename, added and deleted files, as git
    /// names them; a range that is an option or names no commit is bad input.
    #[test]
    fn changed_paths_are_what_git_names_for_a_range_or_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = worktree(dir.path(), "w", &[]);
        let a = commit(
            &path,
            &[("a", "1"), ("c", "3"), ("d/old", "4\n5\n6\n")],
            "a",
        );
        git(&path, &["mv", "d/old", "d/new"]);
        git(&path, &["rm", "-q", "c"]);
        let b = commit(&path, &[("a", "2"), ("b b", "new")], "b");
        let repo = gix::open(&path).unwrap();
        let range = |r: String| changed_paths(&repo, &Changes::Range(r));
        assert_eq!(
            range(format!("{a}..{b}")).unwrap(),
            ["a", "b b", "c", "d/new", "d/old"]
        );
        assert_eq!(range(format!("{b}..{b}")).unwrap(), Vec::<String>::new());
        let e = range("-p".into()).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (ErrorKind::Usage, "\"-p\" is not a range")
        );
        let e = range("nothing..HEAD".into()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert!(
            e.to_string()
                .starts_with("cannot read the range \"nothing..HEAD\": "),
            "{e}"
        );
        std::fs::write(path.join("staged"), "s").unwrap();
        std::fs::write(path.join("a"), "3").unwrap();
        git(&path, &["add", "staged", "a"]);
        std::fs::write(path.join("unstaged"), "u").unwrap();
        let repo = gix::open(&path).unwrap();
        let mut staged = changed_paths(&repo, &Changes::Staged).unwrap();
        staged.sort();
        assert_eq!(staged, ["a", "staged"]);
    }
}
