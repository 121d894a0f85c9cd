//! What personas do with leases: acquire (provisional, or final through the remote), renew, release
//! (forced too), check paths against others' exclusive leases, and the mails that keep a lease from lapsing
//! silently (reminders before expiry, takeovers of expired or superseded leases, forced releases).
//!
//! `acquire --sync` follows `mail::claim`: sync; if a lock lease of another persona conflicts, we lost and
//! nothing is written; otherwise write a `lock` acquire on top of the remote's tip without moving a local ref
//! and push it with a lease on that tip. The remote takes it only if nobody pushed in between, so it never
//! receives a lock acquire conflicting with an earlier one. A stale push drops the event and starts over.

use serde::Serialize;

use super::pattern::Pattern;
use super::{
    format_time, parse_patterns, view, Lease, State, View, ACQUIRE, RELEASE, REMIND, RENEW,
};
use crate::capabilities::mail::SendRequest;
use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::store::eventlog::{Event, EventId, Log, NewEvent};
use crate::{store::refs, store::sync};

const MAX_ROUNDS: u32 = 12;

/// What `acquire` is asked for.
#[derive(Debug, Clone)]
pub struct AcquireRequest {
    pub persona: String,
    pub paths: Vec<String>,
    pub exclusive: bool,
    /// Seconds from now.
    pub ttl: i64,
    pub reason: Option<String>,
    pub task: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct AcquireReport {
    /// `true`: the persona holds the lease (`lease`); `false`: `holders` hold the paths.
    pub held: bool,
    /// Decided through the remote lock (`--sync`): no later sync changes the answer.
    #[serde(rename = "final")]
    pub is_final: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease: Option<Lease>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holders: Vec<Lease>,
    /// Leases of others this one took paths from (expired, or provisional beaten by a lock); each holder
    /// was mailed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub took_over: Vec<Lease>,
    pub wrote: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote: Option<String>,
}

fn validate(persona: &str, reason: Option<&str>, task: Option<&str>) -> Result<()> {
    crate::capabilities::mail::message::validate_persona(persona)?;
    if let Some(t) = task {
        crate::kit::names::validate_name("task", t)?;
    }
    if reason.is_some_and(|r| r.len() > 1000) {
        return Err(Error::usage("the reason is over 1000 bytes"));
    }
    Ok(())
}

fn acquire_event(req: &AcquireRequest, now: i64, lock: bool) -> NewEvent {
    let mut d = serde_json::json!({
        "paths": req.paths,
        "exclusive": req.exclusive,
        "at": now,
        "expires": now.saturating_add(req.ttl),
        "lock": lock,
    });
    if let Some(r) = &req.reason {
        d["reason"] = r.clone().into();
    }
    if let Some(t) = &req.task {
        d["task"] = t.clone().into();
    }
    NewEvent::new(Event::new(ACQUIRE, &req.persona, d))
}

/// Acquire a lease at `now`. Without `remote` the answer is this replica's (provisional: a sync may show an
/// earlier conflicting acquire); with it, it is final.
pub fn acquire(
    log: &Log<'_>,
    now: i64,
    req: &AcquireRequest,
    remote: Option<&str>,
) -> Result<AcquireReport> {
    validate(&req.persona, req.reason.as_deref(), req.task.as_deref())?;
    let patterns = parse_patterns(&req.paths, true)?;
    if req.ttl <= 0 {
        return Err(Error::usage("the lease's time to live must be positive"));
    }
    let Some(remote) = remote else {
        let v = view(log)?;
        let holders = v.conflicts(&req.persona, &patterns, req.exclusive, now);
        if !holders.is_empty() {
            return Ok(denied(holders.into_iter().cloned().collect(), false, None));
        }
        let before = v;
        let id = log.append(acquire_event(req, now, false))?.id;
        return settle(log, &before, &id, false, None);
    };
    let repo = log.repo();
    for round in 1..=MAX_ROUNDS {
        sync::sync(repo, remote)?;
        let v = view(log)?;
        let holders: Vec<Lease> = v
            .conflicts(&req.persona, &patterns, req.exclusive, now)
            .into_iter()
            .filter(|l| l.lock)
            .cloned()
            .collect();
        if !holders.is_empty() {
            return Ok(denied(holders, true, Some(remote)));
        }
        let tracking = sync::tracking_name(remote, log.name());
        let remote_tip = refs::target(repo, &tracking)?;
        let parent = match remote_tip {
            Some(t) => Some(t),
            None => log.local_tip()?,
        };
        let written = log.write_detached(parent, vec![acquire_event(req, now, true)])?;
        let (id, commit) = (written[0].id, written[0].commit);
        if sync::push_leased(repo, remote, log.name(), commit, remote_tip)? {
            crate::capabilities::mail::claim::bring_local_along(log, commit, "jules: lease")?;
            return settle(log, &v, &id, true, Some(remote));
        }
        std::thread::sleep(backoff(round, std::process::id()));
    }
    Err(Error::Race {
        message: format!(
            "lease on {} through {remote} did not settle after {MAX_ROUNDS} rounds: others keep pushing",
            req.paths.join(" ")
        ),
    })
}

/// How long a round that lost the push race waits before the next: 15 ms more each round, plus 0 to 16 ms
/// that differ between processes (`pid`), so that racers who lost together do not retry in step.
fn backoff(round: u32, pid: u32) -> std::time::Duration {
    std::time::Duration::from_millis(15 * u64::from(round) + u64::from(pid % 17))
}

fn denied(holders: Vec<Lease>, is_final: bool, remote: Option<&str>) -> AcquireReport {
    AcquireReport {
        held: false,
        is_final,
        lease: None,
        holders,
        took_over: Vec::new(),
        wrote: false,
        remote: remote.map(str::to_owned),
    }
}

/// Read back the acquire `id` just written; mail the holders it took paths from.
fn settle(
    log: &Log<'_>,
    before: &View,
    id: &EventId,
    is_final: bool,
    remote: Option<&str>,
) -> Result<AcquireReport> {
    let v = view(log)?;
    let ours = v.get(&id.to_hex()).cloned().ok_or_else(|| {
        Error::Other("the lease was written but the view does not show it".into())
    })?;
    if ours.state != State::Held {
        let holder = ours.by.as_deref().and_then(|b| v.get(b)).cloned();
        let mut r = denied(holder.into_iter().collect(), is_final, remote);
        r.wrote = true;
        return Ok(r);
    }
    // Taken over: leases of others on these paths that had expired unreleased, or that this lock superseded.
    let took_over: Vec<Lease> = before
        .leases
        .iter()
        .filter(|l| {
            l.persona != ours.persona
                && l.state == State::Held
                && (l.exclusive || ours.exclusive)
                && super::pattern::any_overlap(&l.patterns, &ours.patterns)
                && (!l.live_at(ours.acquired)
                    || v.get(&l.id).is_some_and(|n| n.state == State::Superseded))
        })
        .cloned()
        .collect();
    for l in &took_over {
        let why = if l.live_at(ours.acquired) {
            "a lease acquired through the remote (final) took its paths from your provisional one"
                .to_owned()
        } else {
            format!("it expired at {}", format_time(l.expires))
        };
        notify(
            log.repo(),
            &ours.persona,
            &l.persona,
            format!("Lease {} on {} taken over by {}", l.short(), l.paths.join(" "), ours.persona),
            format!(
                "Your {} lease {} on {} ({}) is no longer yours: {why}.\n\n{} now holds {} until {} (lease {}{}).\n",
                l.mode(),
                l.short(),
                l.paths.join(" "),
                l.reason.as_deref().unwrap_or("no reason given"),
                ours.persona,
                ours.paths.join(" "),
                format_time(ours.expires),
                ours.short(),
                ours.reason.as_deref().map(|r| format!(": {r}")).unwrap_or_default(),
            ),
        )?;
    }
    Ok(AcquireReport {
        held: true,
        is_final,
        lease: Some(ours),
        holders: Vec::new(),
        took_over,
        wrote: true,
        remote: remote.map(str::to_owned),
    })
}

/// Mail `to` from `from` (type `alert`, tag `lease`).
fn notify(
    repo: &gix::Repository,
    from: &str,
    to: &str,
    subject: String,
    body: String,
) -> Result<()> {
    crate::capabilities::mail::api::notice_in(
        repo,
        SendRequest {
            from: from.to_owned(),
            to: vec![to.to_owned()],
            subject,
            body,
            msg_type: "alert".into(),
            tags: vec!["lease".into()],
            thread: None,
            ..SendRequest::default()
        },
    )?;
    Ok(())
}

/// Extend a live lease of `persona` to `now + ttl`; publish to `remote` when given.
pub fn renew(
    log: &Log<'_>,
    now: i64,
    persona: &str,
    prefix: &str,
    ttl: i64,
    remote: Option<&str>,
) -> Result<Lease> {
    crate::capabilities::mail::message::validate_persona(persona)?;
    if ttl <= 0 {
        return Err(Error::usage("the lease's time to live must be positive"));
    }
    if let Some(r) = remote {
        sync::sync(log.repo(), r)?;
    }
    let v = view(log)?;
    let l = v.find(prefix)?;
    if l.persona != persona {
        return Err(Error::Conflict(format!(
            "lease {} is {}'s, not {persona}'s: only the holder renews it",
            l.short(),
            l.persona
        )));
    }
    if !l.live_at(now) {
        let why = match l.state {
            State::Held => format!("it expired at {}", format_time(l.expires)),
            State::Denied => "it was denied".into(),
            State::Superseded => "a lease acquired through the remote took its paths".into(),
            State::Released => "it was released".into(),
        };
        return Err(Error::Conflict(format!(
            "lease {} cannot be renewed: {why}; acquire the paths again",
            l.short()
        )));
    }
    let id = l.id.clone();
    log.append(NewEvent::new(Event::new(
        RENEW,
        persona,
        serde_json::json!({"lease": id, "at": now, "expires": now.saturating_add(ttl)}),
    )))?;
    if let Some(r) = remote {
        sync::sync(log.repo(), r)?;
    }
    view(log)?
        .get(&id)
        .cloned()
        .ok_or_else(|| Error::Other("the renewed lease vanished from the view".into()))
}

/// End a lease. Someone other than the holder must `force` it and give a reason; the holder is mailed.
pub fn release(
    log: &Log<'_>,
    now: i64,
    persona: &str,
    prefix: &str,
    force: bool,
    reason: Option<&str>,
) -> Result<Lease> {
    crate::capabilities::mail::message::validate_persona(persona)?;
    let v = view(log)?;
    let l = v.find(prefix)?.clone();
    release_one(log, &l, now, persona, force, reason)?;
    view(log)?
        .get(&l.id)
        .cloned()
        .ok_or_else(|| Error::Other("the released lease vanished from the view".into()))
}

fn release_one(
    log: &Log<'_>,
    l: &Lease,
    now: i64,
    persona: &str,
    force: bool,
    reason: Option<&str>,
) -> Result<bool> {
    let forced = l.persona != persona;
    if forced && !force {
        return Err(Error::needs(
            ErrorKind::Conflict,
            format!(
                "lease {} on {} is held by {} until {}",
                l.short(),
                l.paths.join(" "),
                l.persona,
                format_time(l.expires)
            ),
            Remedy::ForceWithReason,
        ));
    }
    if forced && reason.is_none_or(|r| r.trim().is_empty()) {
        return Err(Error::needs(
            ErrorKind::Usage,
            "a forced release needs a reason",
            Remedy::Reason,
        ));
    }
    if l.state != State::Held {
        return Ok(false);
    }
    let mut d = serde_json::json!({"lease": l.id, "at": now, "forced": forced});
    if let Some(r) = reason {
        d["reason"] = r.into();
    }
    log.append(NewEvent::new(Event::new(RELEASE, persona, d)))?;
    if forced {
        notify(
            log.repo(),
            persona,
            &l.persona,
            format!("Lease {} on {} released by {persona}", l.short(), l.paths.join(" ")),
            format!(
                "{persona} released your {} lease {} on {} (it was to expire at {}).\n\nReason: {}\n",
                l.mode(),
                l.short(),
                l.paths.join(" "),
                format_time(l.expires),
                reason.unwrap_or_default()
            ),
        )?;
    }
    Ok(true)
}

/// Release every held lease of `persona`, or only those acquired for `task`; returns those released. Used
/// when a series is finalized or a task is done.
pub fn release_all(
    log: &Log<'_>,
    now: i64,
    persona: &str,
    task: Option<&str>,
    reason: Option<&str>,
) -> Result<Vec<Lease>> {
    release_where(log, now, persona, reason, |l| {
        task.is_none_or(|t| l.task.as_deref() == Some(t))
    })
}

/// Release `persona`'s held leases that `pick` selects; returns those released.
fn release_where(
    log: &Log<'_>,
    now: i64,
    persona: &str,
    reason: Option<&str>,
    pick: impl Fn(&Lease) -> bool,
) -> Result<Vec<Lease>> {
    crate::capabilities::mail::message::validate_persona(persona)?;
    let v = view(log)?;
    let mut done = Vec::new();
    for l in v
        .leases
        .iter()
        .filter(|l| l.persona == persona && l.state == State::Held && pick(l))
    {
        if release_one(log, l, now, persona, false, reason)? {
            done.push(l.clone());
        }
    }
    Ok(done)
}

/// Mail every holder whose live lease expires within `lead` seconds of `now` and was not reminded of that
/// expiry yet; record each reminder on the log so it is sent once (by any clone that synced the record).
/// Returns the leases reminded about. Cheap when nothing is due: the held leases come from their file
/// ([`super::held`]) and nothing is written.
pub fn remind(log: &Log<'_>, now: i64, lead: i64, from: &str) -> Result<Vec<Lease>> {
    crate::capabilities::mail::message::validate_persona(from)?;
    let held = super::held::held(log)?;
    let due: Vec<Lease> = held
        .heads()?
        .into_iter()
        .filter(|(h, _)| {
            h.live_at(now) && h.expires.saturating_sub(now) <= lead && h.reminded != Some(h.expires)
        })
        .map(|(_, raw)| super::held::Held::lease(raw))
        .collect::<Result<_>>()?;
    for l in &due {
        notify(
            log.repo(),
            from,
            &l.persona,
            format!("Lease {} on {} expires at {}", l.short(), l.paths.join(" "), format_time(l.expires)),
            format!(
                "Your {} lease {} on {} expires at {} (in {} min). Renew it with `git jules lease renew {}`, \
                 or release it when done.\n",
                l.mode(),
                l.short(),
                l.paths.join(" "),
                format_time(l.expires),
                l.expires.saturating_sub(now).saturating_add(59) / 60,
                l.short()
            ),
        )?;
        log.append(NewEvent::new(Event::new(
            REMIND,
            from,
            serde_json::json!({"lease": l.id, "expires": l.expires}),
        )))?;
    }
    Ok(due)
}

/// Release `persona`'s held leases that cover any of `files` (paths git named): what `series finalize` does
/// once the series has landed (`jules.lease.releaseOnFinalize`).
pub fn release_covering(
    log: &Log<'_>,
    now: i64,
    persona: &str,
    files: &[String],
    reason: &str,
) -> Result<Vec<Lease>> {
    let files: Vec<Pattern> = files.iter().map(|f| Pattern::literal(f, true)).collect();
    release_where(log, now, persona, Some(reason), |l| {
        super::pattern::any_overlap(&l.patterns, &files)
    })
}

/// Release `persona`'s held leases acquired for the task whose full id is `task_id` (a lease may name it by a
/// prefix of at least 4 characters): what `task done` does (`jules.lease.releaseOnDone`).
pub fn release_for_task(
    log: &Log<'_>,
    now: i64,
    persona: &str,
    task_id: &str,
    reason: &str,
) -> Result<Vec<Lease>> {
    release_where(log, now, persona, Some(reason), |l| {
        l.task
            .as_deref()
            .is_some_and(|t| t.len() >= 4 && task_id.starts_with(t))
    })
}

/// The use cases called directly on real repositories in a temporary directory (bare ones; a bare remote and
/// bare clones for `--sync`, synced through the `git` binary as in production), at fixed times: what each
/// writes to the lease log, what it answers and which mails it sends. tests/it/lease.rs runs the same
/// through the CLI; these are what mutation testing can afford (docs/testing.md, *Mutation testing*).
#[cfg(test)]
mod tests {
    use super::super::test_support::{bare, clone, lease_events, mails, req, Mail};
    use super::*;
    use crate::kit::error::ErrorKind;
    use serde_json::json;

    /// A fixed moment (2027-01-15); every test counts from it.
    const T: i64 = 1_800_000_000;

    fn open(repo: &gix::Repository) -> Log<'_> {
        super::super::open(repo).unwrap()
    }

    /// The lease `req` acquired provisionally at `at`; it must be held.
    fn held(log: &Log<'_>, at: i64, req: &AcquireRequest) -> Lease {
        let r = acquire(log, at, req, None).unwrap();
        assert!(r.held, "{r:?}");
        r.lease.unwrap()
    }

    fn with(mut r: AcquireRequest, reason: Option<&str>, task: Option<&str>) -> AcquireRequest {
        r.reason = reason.map(str::to_owned);
        r.task = task.map(str::to_owned);
        r
    }

    fn ids(leases: &[Lease]) -> Vec<String> {
        leases.iter().map(|l| l.id.clone()).collect()
    }

    fn state(log: &Log<'_>, id: &str) -> State {
        view(log).unwrap().get(id).unwrap().state
    }

    /// What `validate` refuses, and where its bounds lie: nothing is written for a refused request. Catches
    /// `validate` → `Ok(())` (56) and the reason's bound (60: `>` as `==`, `<`, `>=`).
    #[test]
    fn an_acquire_refuses_bad_personas_task_names_long_reasons_and_no_time() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let refused = |r: AcquireRequest| {
            let e = acquire(&log, T, &r, None).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Usage, "{e:?}");
            e.to_string()
        };
        let a = req("ann", &["src/"], true, 60);
        assert_eq!(refused(req("bad persona", &["src/"], true, 60)), 
            "invalid persona name \"bad persona\": ' ' is not allowed (use letters, digits, '-', '_' and '.')"
        );
        assert_eq!(refused(with(a.clone(), None, Some("bad task"))), 
            "invalid task name \"bad task\": ' ' is not allowed (use letters, digits, '-', '_' and '.')"
        );
        assert_eq!(
            refused(with(a.clone(), Some(&"r".repeat(1001)), None)),
            "the reason is over 1000 bytes"
        );
        assert_eq!(
            refused(req("ann", &["src/"], true, 0)),
            "the lease's time to live must be positive"
        );
        assert_eq!(
            refused(req("ann", &[], true, 60)),
            "a lease needs at least one path or pattern"
        );
        assert!(lease_events(&repo).is_empty());
        // At the bounds: a reason of exactly 1000 bytes, a short one, a second to live.
        let long = "é".repeat(500);
        let l = held(&log, T, &with(a.clone(), Some(&long), Some("t-1")));
        assert_eq!(l.reason.as_deref(), Some(long.as_str()));
        held(&log, T, &with(req("ann", &["b"], true, 1), Some("r"), None));
        assert_eq!(lease_events(&repo).len(), 2);
    }

    /// A provisional acquire writes one event with every field, and reports the lease as the view holds it;
    /// another persona's overlapping request is denied, naming the holder, and writes nothing.
    #[test]
    fn a_provisional_acquire_writes_its_event_and_a_conflicting_one_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let r = acquire(
            &log,
            T,
            &with(
                req("ann", &["src/", "*.toml"], true, 600),
                Some("refactor"),
                Some("t-1"),
            ),
            None,
        )
        .unwrap();
        assert!(r.held && r.wrote && !r.is_final, "{r:?}");
        assert!(r.holders.is_empty() && r.took_over.is_empty() && r.remote.is_none());
        let l = r.lease.unwrap();
        assert_eq!(
            (
                l.persona.as_str(),
                l.paths.clone(),
                l.exclusive,
                l.acquired,
                l.expires,
                l.lock
            ),
            (
                "ann",
                vec!["src/".to_string(), "*.toml".into()],
                true,
                T,
                T + 600,
                false
            )
        );
        assert_eq!(
            (l.reason.as_deref(), l.task.as_deref(), l.state),
            (Some("refactor"), Some("t-1"), State::Held)
        );
        assert_eq!(
            lease_events(&repo),
            vec![(
                ACQUIRE.to_string(),
                "ann".to_string(),
                json!({"paths": ["src/", "*.toml"], "exclusive": true, "at": T, "expires": T + 600,
                       "lock": false, "reason": "refactor", "task": "t-1"})
            )]
        );
        for (paths, exclusive) in [
            (["src/a.rs"], true),
            (["src/a.rs"], false),
            (["x.toml"], false),
        ] {
            let d = acquire(&log, T + 10, &req("bob", &paths, exclusive, 60), None).unwrap();
            assert!(!d.held && !d.wrote && !d.is_final, "{d:?}");
            assert!(d.lease.is_none() && d.took_over.is_empty() && d.remote.is_none());
            assert_eq!(ids(&d.holders), [l.id.as_str()]);
        }
        // Elsewhere, and on ann's paths once her lease has run out (at its expiry exactly), bob holds.
        held(&log, T + 10, &req("bob", &["docs/"], true, 60));
        let shared = held(&log, T + 600, &req("bob", &["src/a.rs"], false, 60));
        assert!(!shared.exclusive);
        let events = lease_events(&repo);
        assert_eq!(events.len(), 3);
        assert_eq!(
            events[2].2,
            json!({"paths": ["src/a.rs"], "exclusive": false, "at": T + 600, "expires": T + 660, "lock": false})
        );
    }

    /// Which leases an acquire takes over (and mails): another persona's, held, unreleased, overlapping,
    /// exclusive on either side, and expired at the acquire. One case per part of the rule, each in a
    /// repository of its own; ann then acquires `src/` exclusive (or shared) at `T + 1000`. Catches the
    /// `settle` filter's mutants (178 to 183) and `notify` → `Ok(())`, and each field of the mail (232 to 240).
    #[test]
    fn an_acquire_takes_over_only_others_expired_overlapping_leases_and_mails_each_holder() {
        struct Case {
            name: &'static str,
            persona: &'static str,
            path: &'static str,
            exclusive: bool,
            /// Time to live from `T`.
            ttl: i64,
            release: bool,
            ann_exclusive: bool,
            taken: bool,
        }
        let case = |name, persona, path, exclusive, ttl, release, ann_exclusive, taken| Case {
            name,
            persona,
            path,
            exclusive,
            ttl,
            release,
            ann_exclusive,
            taken,
        };
        let cases = [
            case("expired", "bob", "src/a.rs", true, 100, false, true, true),
            case(
                "expired at the acquire",
                "bob",
                "src/a.rs",
                true,
                1000,
                false,
                true,
                true,
            ),
            case(
                "shared, expired, ann exclusive",
                "bob",
                "src/a.rs",
                false,
                100,
                false,
                true,
                true,
            ),
            case(
                "exclusive, expired, ann shared",
                "bob",
                "src/a.rs",
                true,
                100,
                false,
                false,
                true,
            ),
            case(
                "both shared",
                "bob",
                "src/a.rs",
                false,
                100,
                false,
                false,
                false,
            ),
            case("elsewhere", "bob", "docs/", true, 100, false, true, false),
            case("released", "bob", "src/a.rs", true, 100, true, true, false),
            case(
                "ann's own",
                "ann",
                "src/a.rs",
                true,
                100,
                false,
                true,
                false,
            ),
            case(
                "still live, shared with shared",
                "bob",
                "src/a.rs",
                false,
                5000,
                false,
                false,
                false,
            ),
        ];
        for c in cases {
            let dir = tempfile::tempdir().unwrap();
            let repo = bare(dir.path(), "r");
            let log = open(&repo);
            let theirs = held(
                &log,
                T,
                &with(
                    req(c.persona, &[c.path], c.exclusive, c.ttl),
                    Some("refactor"),
                    None,
                ),
            );
            if c.release {
                release(&log, T + 50, c.persona, &theirs.id, false, None).unwrap();
            }
            let r = acquire(
                &log,
                T + 1000,
                &with(
                    req("ann", &["src/"], c.ann_exclusive, 3600),
                    Some("tests"),
                    None,
                ),
                None,
            )
            .unwrap();
            assert!(r.held && r.wrote, "{}: {r:?}", c.name);
            let ours = r.lease.unwrap();
            let mail = mails(&repo);
            if !c.taken {
                assert!(r.took_over.is_empty(), "{}: {:?}", c.name, r.took_over);
                assert!(mail.is_empty(), "{}: {mail:?}", c.name);
                continue;
            }
            assert_eq!(ids(&r.took_over), [theirs.id.as_str()], "{}", c.name);
            let mode = if c.exclusive { "exclusive" } else { "shared" };
            assert_eq!(
                mail,
                [Mail {
                    from: "ann".into(),
                    to: vec!["bob".into()],
                    subject: format!("Lease {} on src/a.rs taken over by ann", theirs.short()),
                    body: format!(
                        "Your {mode} lease {} on src/a.rs (refactor) is no longer yours: it expired at {}.\n\n\
                         ann now holds src/ until {} (lease {}: tests).\n",
                        theirs.short(),
                        format_time(T + c.ttl),
                        format_time(T + 4600),
                        ours.short()
                    ),
                    msg_type: "alert".into(),
                    tags: vec!["lease".into()],
                    thread: None,
                }],
                "{}",
                c.name
            );
        }
    }

    /// `--sync`: the lock acquire goes through the remote and is final; a second persona's lock acquire on
    /// the same paths is denied, finally, naming the lock, and writes nothing; a provisional acquire after a
    /// sync sees the lock too. Catches `!holders.is_empty()` → `holders.is_empty()` (116).
    #[test]
    fn a_lock_acquire_through_the_remote_is_final_and_a_second_one_is_denied() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (clone(dir.path(), "a"), clone(dir.path(), "b"));
        let (log_a, log_b) = (open(&a), open(&b));
        let r = acquire(&log_a, T, &req("ann", &["src/"], true, 600), Some("origin")).unwrap();
        assert!(r.held && r.is_final && r.wrote, "{r:?}");
        assert_eq!(r.remote.as_deref(), Some("origin"));
        let ours = r.lease.unwrap();
        assert!(ours.lock);
        let want = vec![(
            ACQUIRE.to_string(),
            "ann".to_string(),
            json!({"paths": ["src/"], "exclusive": true, "at": T, "expires": T + 600, "lock": true}),
        )];
        assert_eq!(lease_events(&a), want, "the local log brought along");
        let remote = gix::open(dir.path().join("remote.git")).unwrap();
        assert_eq!(lease_events(&remote), want, "the remote has the lock");
        let d = acquire(
            &log_b,
            T + 10,
            &req("bob", &["src/a.rs"], false, 60),
            Some("origin"),
        )
        .unwrap();
        assert!(!d.held && d.is_final && !d.wrote, "{d:?}");
        assert_eq!(d.remote.as_deref(), Some("origin"));
        assert_eq!(ids(&d.holders), [ours.id.as_str()]);
        assert_eq!(
            lease_events(&b),
            want,
            "bob's clone synced and wrote nothing"
        );
        let p = acquire(&log_b, T + 20, &req("bob", &["src/b.rs"], true, 60), None).unwrap();
        assert!(!p.held && !p.is_final, "{p:?}");
        assert_eq!(lease_events(&remote), want);
    }

    /// A lock acquire through the remote supersedes another persona's live provisional lease it conflicts
    /// with, and mails its holder why. Catches `v.get(&l.id).is_some_and(|n| n.state == Superseded)` with
    /// `!=` (183:61).
    #[test]
    fn a_lock_acquire_supersedes_a_provisional_lease_and_mails_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (clone(dir.path(), "a"), clone(dir.path(), "b"));
        let (log_a, log_b) = (open(&a), open(&b));
        let theirs = held(&log_b, T, &req("bob", &["docs/"], true, 3600));
        sync::sync(&b, "origin").unwrap();
        let r = acquire(
            &log_a,
            T + 10,
            &req("ann", &["docs/guide.md"], true, 600),
            Some("origin"),
        )
        .unwrap();
        assert!(r.held && r.is_final, "{r:?}");
        let ours = r.lease.unwrap();
        assert_eq!(ids(&r.took_over), [theirs.id.as_str()]);
        let now = view(&log_a).unwrap();
        let bob = now.get(&theirs.id).unwrap();
        assert_eq!(
            (bob.state, bob.by.as_deref()),
            (State::Superseded, Some(ours.id.as_str()))
        );
        assert_eq!(
            mails(&a),
            [Mail {
                from: "ann".into(),
                to: vec!["bob".into()],
                subject: format!("Lease {} on docs/ taken over by ann", theirs.short()),
                body: format!(
                    "Your exclusive lease {} on docs/ (no reason given) is no longer yours: a lease acquired \
                     through the remote (final) took its paths from your provisional one.\n\n\
                     ann now holds docs/guide.md until {} (lease {}).\n",
                    theirs.short(),
                    format_time(T + 610),
                    ours.short()
                ),
                msg_type: "alert".into(),
                tags: vec!["lease".into()],
                thread: None,
            }]
        );
    }

    /// The wait between rounds of a lost push race grows 15 ms a round, plus a jitter below 17 ms by
    /// process. Catches every arithmetic mutant of the back-off (the wait is otherwise seen only in a race).
    #[test]
    fn the_back_off_grows_by_round_with_a_jitter_by_process() {
        let ms = |round, pid| backoff(round, pid).as_millis();
        assert_eq!(ms(1, 0), 15);
        assert_eq!(ms(2, 17), 30);
        assert_eq!(ms(3, 20), 48);
        assert_eq!(ms(12, 16), 196);
        assert_eq!(ms(1, u32::MAX), 15 + u128::from(u32::MAX % 17));
    }

    /// Only the holder renews, only a live lease, only for a positive time: the event written names the
    /// lease, the moment and the new expiry; each refusal says why. Catches 258 (`<=` → `>`), 266 (`!=` →
    /// `==`) and 273 (`!` deleted).
    #[test]
    fn renew_moves_the_expiry_of_a_live_lease_of_its_holder_only() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let l = held(&log, T, &req("ann", &["src/"], true, 100));
        let e = renew(&log, T + 10, "bob", &l.id, 300, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(
            e.to_string(),
            format!(
                "lease {} is ann's, not bob's: only the holder renews it",
                l.short()
            )
        );
        let e = renew(&log, T + 10, "ann", &l.id, 0, None).unwrap_err();
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            (
                ErrorKind::Usage,
                "the lease's time to live must be positive"
            )
        );
        let e = renew(&log, T + 10, "bad persona", &l.id, 10, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert_eq!(lease_events(&repo).len(), 1, "a refused renew wrote");
        // The last second of the lease, then the first after it.
        let r = renew(&log, T + 99, "ann", &l.id[..8], 1, None).unwrap();
        assert_eq!(
            (r.id.as_str(), r.expires, r.state),
            (l.id.as_str(), T + 100, State::Held)
        );
        assert_eq!(
            lease_events(&repo)[1],
            (
                RENEW.to_string(),
                "ann".to_string(),
                json!({"lease": l.id, "at": T + 99, "expires": T + 100})
            )
        );
        let e = renew(&log, T + 100, "ann", &l.id, 300, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(
            e.to_string(),
            format!(
                "lease {} cannot be renewed: it expired at {}; acquire the paths again",
                l.short(),
                format_time(T + 100)
            )
        );
        // Released, and denied (an acquire another replica wrote before it saw the holder's).
        let k = held(&log, T, &req("ann", &["k"], true, 100));
        release(&log, T + 1, "ann", &k.id, false, None).unwrap();
        log.append(NewEvent::new(Event::new(
            ACQUIRE,
            "bob",
            json!({"paths": ["src/x"], "exclusive": true, "at": T + 5, "expires": T + 900, "lock": false}),
        )))
        .unwrap();
        let v = view(&log).unwrap();
        let denied_id = v.leases.last().unwrap().id.clone();
        assert_eq!(state(&log, &denied_id), State::Denied);
        for (who, id, why) in [
            ("ann", &k.id, "it was released"),
            ("bob", &denied_id, "it was denied"),
        ] {
            let e = renew(&log, T + 2, who, id, 60, None).unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "lease {} cannot be renewed: {why}; acquire the paths again",
                    &id[..12]
                )
            );
        }
        assert_eq!(lease_events(&repo).len(), 5);
    }

    /// Renew with a remote syncs after writing: another clone sees the new expiry.
    #[test]
    fn renew_through_the_remote_publishes_the_new_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (clone(dir.path(), "a"), clone(dir.path(), "b"));
        let log_a = open(&a);
        let l = acquire(&log_a, T, &req("ann", &["src/"], true, 100), Some("origin"))
            .unwrap()
            .lease
            .unwrap();
        let r = renew(&log_a, T + 50, "ann", &l.id, 500, Some("origin")).unwrap();
        assert_eq!(r.expires, T + 550);
        sync::sync(&b, "origin").unwrap();
        assert_eq!(
            view(&open(&b)).unwrap().get(&l.id).unwrap().expires,
            T + 550
        );
    }

    /// Another persona releases a lease only with `force` and a reason, and the holder is mailed; refused,
    /// nothing is written. Catches 328 (`!` deleted: a forced release refused, an unforced one let through).
    #[test]
    fn release_by_another_needs_force_and_a_reason_and_mails_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let l = held(
            &log,
            T,
            &with(req("ann", &["src/"], true, 3600), Some("work"), None),
        );
        let e = release(&log, T + 10, "bob", &l.id, false, Some("stuck")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(
            e.to_string(),
            format!(
                "lease {} on src/ is held by ann until {}",
                l.short(),
                format_time(T + 3600)
            )
        );
        for reason in [None, Some(""), Some(" \t")] {
            let e = release(&log, T + 10, "bob", &l.id, true, reason).unwrap_err();
            assert_eq!(
                (e.kind(), e.to_string().as_str()),
                (ErrorKind::Usage, "a forced release needs a reason")
            );
        }
        assert_eq!(lease_events(&repo).len(), 1);
        assert!(mails(&repo).is_empty());
        let r = release(&log, T + 10, "bob", &l.id, true, Some("stuck")).unwrap();
        assert_eq!(
            (
                r.state,
                r.by.as_deref(),
                r.forced,
                r.release_reason.as_deref()
            ),
            (State::Released, Some("bob"), true, Some("stuck"))
        );
        assert_eq!(
            lease_events(&repo)[1],
            (
                RELEASE.to_string(),
                "bob".to_string(),
                json!({"lease": l.id, "at": T + 10, "forced": true, "reason": "stuck"})
            )
        );
        assert_eq!(
            mails(&repo),
            [Mail {
                from: "bob".into(),
                to: vec!["ann".into()],
                subject: format!("Lease {} on src/ released by bob", l.short()),
                body: format!(
                    "bob released your exclusive lease {} on src/ (it was to expire at {}).\n\nReason: stuck\n",
                    l.short(),
                    format_time(T + 3600)
                ),
                msg_type: "alert".into(),
                tags: vec!["lease".into()],
                thread: None,
            }]
        );
    }

    /// The holder releases without force or reason, once: a second release writes nothing; no mail.
    #[test]
    fn the_holder_releases_once_without_force_and_nobody_is_mailed() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let l = held(&log, T, &req("ann", &["src/"], false, 3600));
        let r = release(&log, T + 5, "ann", &l.id[..6], false, None).unwrap();
        assert_eq!(
            (
                r.state,
                r.by.as_deref(),
                r.forced,
                r.release_reason.as_deref()
            ),
            (State::Released, Some("ann"), false, None)
        );
        assert_eq!(
            lease_events(&repo)[1],
            (
                RELEASE.to_string(),
                "ann".to_string(),
                json!({"lease": l.id, "at": T + 5, "forced": false})
            )
        );
        let again = release(&log, T + 6, "ann", &l.id, false, Some("again")).unwrap();
        assert_eq!(again.state, State::Released);
        assert_eq!(lease_events(&repo).len(), 2);
        assert!(mails(&repo).is_empty());
        let e = release(&log, T, "bad persona", &l.id, false, None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
    }

    /// `release_all` releases the persona's held leases (for one task, or all), never another's nor one
    /// already ended, with the reason given. Catches 385 (`==` → `!=`) and both `&&` → `||` of 403.
    #[test]
    fn release_all_picks_the_personas_held_leases_for_the_task_or_all() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let t1 = held(
            &log,
            T,
            &with(req("ann", &["a"], true, 3600), None, Some("t1")),
        );
        let t2 = held(
            &log,
            T,
            &with(req("ann", &["b"], true, 3600), None, Some("t2")),
        );
        let none = held(&log, T, &req("ann", &["c"], true, 3600));
        let ended = held(
            &log,
            T,
            &with(req("ann", &["d"], true, 3600), None, Some("t1")),
        );
        release(&log, T + 1, "ann", &ended.id, false, None).unwrap();
        let bobs = held(
            &log,
            T,
            &with(req("bob", &["e"], true, 3600), None, Some("t1")),
        );
        let before = lease_events(&repo).len();
        let r = release_all(&log, T + 10, "ann", Some("t1"), Some("done")).unwrap();
        assert_eq!(ids(&r), [t1.id.as_str()]);
        let events = lease_events(&repo);
        assert_eq!(events.len(), before + 1);
        assert_eq!(
            events[before].2,
            json!({"lease": t1.id, "at": T + 10, "forced": false, "reason": "done"})
        );
        let r = release_all(&log, T + 20, "ann", None, None).unwrap();
        assert_eq!(ids(&r), [t2.id.clone(), none.id.clone()]);
        assert_eq!(state(&log, &bobs.id), State::Held);
        assert!(release_all(&log, T + 30, "ann", None, None)
            .unwrap()
            .is_empty());
        assert!(release_all(&log, T + 30, "bad persona", None, None).is_err());
        assert!(mails(&repo).is_empty());
    }

    /// `release_covering` (what `series finalize` does) releases the persona's leases over any of the files,
    /// with its reason. Catches 462 (→ `Ok(vec![])`).
    #[test]
    fn release_covering_picks_the_personas_leases_over_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let src = held(&log, T, &req("ann", &["src/"], true, 3600));
        let md = held(&log, T, &req("ann", &["docs/*.md"], true, 3600));
        let other = held(&log, T, &req("ann", &["other/"], true, 3600));
        let bobs = held(&log, T, &req("bob", &["lib/"], false, 3600));
        let files = ["src/a/b.rs", "docs/x.md", "lib/x", "README"].map(String::from);
        let r = release_covering(&log, T + 10, "ann", &files, "series finalized").unwrap();
        assert_eq!(ids(&r), [src.id.clone(), md.id.clone()]);
        assert_eq!(
            lease_events(&repo).last().unwrap().2,
            json!({"lease": md.id, "at": T + 10, "forced": false, "reason": "series finalized"})
        );
        assert_eq!(state(&log, &other.id), State::Held);
        assert_eq!(state(&log, &bobs.id), State::Held);
    }

    /// `release_for_task` (what `task done` does) releases the leases naming the task by its id or a prefix
    /// of at least 4 characters. Catches 477 (→ `Ok(vec![])`), 480 (`&&` → `||`, `>=` → `<`).
    #[test]
    fn release_for_task_takes_the_id_or_a_prefix_of_four_or_more() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let task = "abcdef0123456789";
        let lease = |path, t| held(&log, T, &with(req("ann", &[path], true, 3600), None, t));
        let three = lease("a", Some("abc"));
        let four = lease("b", Some("abcd"));
        let full = lease("c", Some(task));
        let other = lease("d", Some("abce"));
        let longer = lease("e", Some("abcdef0123456789x"));
        let none = lease("f", None);
        let r = release_for_task(&log, T + 10, "ann", task, "task done").unwrap();
        assert_eq!(ids(&r), [four.id.clone(), full.id.clone()]);
        assert_eq!(
            lease_events(&repo).last().unwrap().2,
            json!({"lease": full.id, "at": T + 10, "forced": false, "reason": "task done"})
        );
        for l in [three, other, longer, none] {
            assert_eq!(state(&log, &l.id), State::Held, "{:?}", l.task);
        }
    }

    /// `remind` mails each holder whose live lease expires within the lead time, once per expiry, and
    /// records it; due exactly when `expires - now == lead`, not a second before. Catches 417 (→
    /// `Ok(vec![])`), 423 (each `&&` → `||`, `<=` → `>`, `!=` → `==`).
    #[test]
    fn remind_mails_each_due_lease_once_from_the_lead_time_on() {
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let ann = held(&log, T, &req("ann", &["a"], true, 1000));
        held(&log, T, &req("bob", &["b"], false, 100));
        let cat = held(&log, T, &req("cat", &["c"], true, 1000));
        release(&log, T + 1, "cat", &cat.id, false, None).unwrap();
        let events = lease_events(&repo).len();
        assert!(remind(&log, T + 699, 300, "clerk").unwrap().is_empty());
        assert_eq!(
            lease_events(&repo).len(),
            events,
            "nothing due, nothing written"
        );
        assert!(mails(&repo).is_empty());
        // bob's lease expired at T + 100; cat's was released; ann's has exactly 300 s left.
        let r = remind(&log, T + 700, 300, "clerk").unwrap();
        assert_eq!(ids(&r), [ann.id.as_str()]);
        assert_eq!(
            mails(&repo),
            [Mail {
                from: "clerk".into(),
                to: vec!["ann".into()],
                subject: format!("Lease {} on a expires at {}", ann.short(), format_time(T + 1000)),
                body: format!(
                    "Your exclusive lease {0} on a expires at {1} (in 5 min). Renew it with `git jules lease \
                     renew {0}`, or release it when done.\n",
                    ann.short(),
                    format_time(T + 1000)
                ),
                msg_type: "alert".into(),
                tags: vec!["lease".into()],
                thread: None,
            }]
        );
        assert_eq!(
            lease_events(&repo).last().unwrap(),
            &(
                REMIND.to_string(),
                "clerk".to_string(),
                json!({"lease": ann.id, "expires": T + 1000})
            )
        );
        assert!(
            remind(&log, T + 800, 300, "clerk").unwrap().is_empty(),
            "reminded twice"
        );
        // A new expiry is reminded of again, and the minutes left round up.
        renew(&log, T + 800, "ann", &ann.id, 1000, None).unwrap();
        assert!(remind(&log, T + 1499, 300, "clerk").unwrap().is_empty());
        let r = remind(&log, T + 1500, 301, "clerk").unwrap();
        assert_eq!(ids(&r), [ann.id.as_str()]);
        assert!(mails(&repo)[1].body.contains("(in 5 min)"));
        assert!(remind(&log, T + 1500, 300, "bad persona").is_err());
        // A shared lease is reminded of too, up to its last second.
        let dir = tempfile::tempdir().unwrap();
        let repo = bare(dir.path(), "r");
        let log = open(&repo);
        let bob = held(&log, T, &req("bob", &["b"], false, 100));
        assert_eq!(
            ids(&remind(&log, T + 99, 300, "clerk").unwrap()),
            [bob.id.as_str()]
        );
        assert!(mails(&repo)[0].body.starts_with("Your shared lease"));
        let dir2 = tempfile::tempdir().unwrap();
        let repo2 = bare(dir2.path(), "r");
        let log2 = open(&repo2);
        held(&log2, T, &req("bob", &["b"], false, 100));
        assert!(
            remind(&log2, T + 100, 300, "clerk").unwrap().is_empty(),
            "expired"
        );
    }
}
