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
        std::thread::sleep(std::time::Duration::from_millis(
            15 * u64::from(round) + u64::from(std::process::id() % 17),
        ));
    }
    Err(Error::Race {
        message: format!(
            "lease on {} through {remote} did not settle after {MAX_ROUNDS} rounds: others keep pushing",
            req.paths.join(" ")
        ),
    })
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
