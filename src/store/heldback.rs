//! Events held back from a push: nothing the remote refuses wedges a clone (issue 40).
//!
//! A remote whose guard requires signed events (`git jules guard --require-signed`) refuses a whole push
//! when one event in it is not verified for its actor: a lease acquired as a mistyped persona, mail sent as a
//! persona with no key. Logs are append-only and the event sits below everything appended after it, so
//! without this module every later sync was refused, signed mail included. Now:
//!
//! - [`Gate`] decides which of a clone's unpushed events the remote would refuse: checked locally with the
//!   guard's rule ([`crate::store::eventlog::signed`] under the local trust roots) when `jules.requireSigned` is set
//!   or the remote refused unsigned events before (its stance, remembered), and learned from the remote's
//!   refusal otherwise ([`Gate::learn`] reads the guard's message, which names each refused commit);
//! - [`split`] builds what a sync publishes instead of the local tip: the clone's other unpushed events as new
//!   commits on top of the remote's tips (same event JSON and signature, so the same ids: the id is the hash
//!   of the event alone, Lamport clock and signature are outside it), and names the held-back events;
//! - [`settle`] drops or re-signs them in the local log (`git jules log held-back drop|resign`), keeping the
//!   old history under `refs/jules/backup/log/<log>/<n>`: afterwards the local log is the remote's union plus
//!   the clone's other unpushed events, and the next sync is clean.
//!
//! A sync never rewrites the local log: the held-back event stays in it (and in this clone's reads) until the
//! user decides. State lives in `.git/jules/held-back/` (derived data, like every file there): `refused`
//! (events a remote refused, by event id and signature, so a re-signed event is tried again), `signed-remotes`
//! (remotes known to refuse unverified events) and `last.json` (what the last sync held back, for
//! `log held-back`).

use std::collections::BTreeSet;

use gix::ObjectId;
use serde::{Deserialize, Serialize};
use sha2::Digest;

use crate::kit::error::{Error, ErrorKind, Remedy, Result};
use crate::store::eventlog::event::{decode_event, event_message, parse_message, Framed};
use crate::store::eventlog::{EventId, IdSet, Log, LoggedEvent};

/// One event a sync did not publish, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeldBack {
    /// The log's ref (`refs/jules/lease`).
    pub log: String,
    /// The event id (64 hex digits).
    pub id: String,
    pub actor: String,
    pub kind: String,
    /// Why the remote refuses it: the verification state (`unsigned`, `bad signature`, `key … not allowed
    /// for this actor`) and who said so.
    pub reason: String,
    /// The local commit that carries it.
    pub commit: String,
}

fn dir(repo: &gix::Repository) -> std::path::PathBuf {
    crate::kit::repo::jules_dir(repo).join("held-back")
}

/// A short digest of an event's signature (`-` when unsigned): a refusal is remembered for this signature
/// only, so the same event signed again is tried again.
fn sig_digest(signature: Option<&str>) -> String {
    match signature {
        None => "-".to_owned(),
        Some(s) => sha2::Sha256::digest(s.as_bytes())[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect(),
    }
}

/// What an event commit carries: the event, its canonical JSON line as written, its signature.
struct EventCommit {
    id: EventId,
    event: crate::store::eventlog::Event,
    json: Vec<u8>,
    signature: Option<String>,
}

/// The event in `commit`; `None` when `commit` is not a valid event.
fn framed(repo: &gix::Repository, commit: ObjectId) -> Result<Option<EventCommit>> {
    let c = repo
        .find_commit(commit)
        .map_err(|e| Error::wrap(format!("reading commit {commit}"), e))?;
    let msg = c
        .message_raw()
        .map_err(|e| Error::wrap(format!("reading commit {commit}"), e))?;
    let Ok(Framed::Event {
        json,
        claimed_id,
        signature,
        ..
    }) = parse_message(msg)
    else {
        return Ok(None);
    };
    let Ok((id, event)) = decode_event(json, claimed_id, false) else {
        return Ok(None);
    };
    Ok(Some(EventCommit {
        id,
        event,
        json: json.to_vec(),
        signature: signature.map(str::to_owned),
    }))
}

/// A refusal remembered: (remote, event id, signature digest) and the remote's reason.
#[derive(Debug, Clone)]
struct Refusal {
    remote: String,
    id: String,
    sig: String,
    reason: String,
}

/// What a sync to one remote holds back: the rule it checks locally, and the refusals it learned.
pub struct Gate {
    remote: String,
    /// Check locally before pushing (`jules.requireSigned`, or the remote refused unverified events before).
    precheck: bool,
    refused: Vec<Refusal>,
}

impl Gate {
    /// The gate of a sync with `remote`.
    pub fn open(repo: &gix::Repository, remote: &str) -> Gate {
        let refused = std::fs::read_to_string(dir(repo).join("refused"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| {
                let mut f = l.splitn(4, ' ');
                Some(Refusal {
                    remote: f.next()?.to_owned(),
                    id: f.next()?.to_owned(),
                    sig: f.next()?.to_owned(),
                    reason: f.next()?.to_owned(),
                })
            })
            .filter(|r| r.remote == remote)
            .collect();
        let signed_remote = std::fs::read_to_string(dir(repo).join("signed-remotes"))
            .unwrap_or_default()
            .lines()
            .any(|l| l == remote);
        Gate {
            remote: remote.to_owned(),
            precheck: crate::store::sign::verdict::require_signed(repo) || signed_remote,
            refused,
        }
    }

    /// Whether this gate can hold anything back: otherwise a sync pays nothing for it.
    fn active(&self) -> bool {
        self.precheck || !self.refused.is_empty()
    }

    /// Why the event `e` would be refused, if it would. `verifier`: the local trust roots, when checking.
    fn why(
        &self,
        repo: &gix::Repository,
        verifier: Option<&mut crate::store::eventlog::Verifier<'_>>,
        e: &LoggedEvent,
    ) -> Result<Option<String>> {
        if !self.refused.is_empty() {
            let id = e.id.to_hex();
            let matching: Vec<&Refusal> = self.refused.iter().filter(|r| r.id == id).collect();
            if !matching.is_empty() {
                let signature = framed(repo, e.commit)?.and_then(|c| c.signature);
                let sig = sig_digest(signature.as_deref());
                if let Some(r) = matching.iter().find(|r| r.sig == sig) {
                    return Ok(Some(r.reason.clone()));
                }
            }
        }
        if let Some(verifier) = verifier {
            if let Some(state) = verifier.state(e.commit)? {
                if !state.is_verified() {
                    return Ok(Some(format!(
                        "{} (checked here: jules.requireSigned, or {} refused unverified events before)",
                        state.describe(),
                        self.remote
                    )));
                }
            }
        }
        Ok(None)
    }

    /// Read a push refusal: the guard names each commit it refused (`commit <id> holds event … not verified
    /// for <actor>: <state> …`). Each one that is an event of this clone is remembered as refused (for its
    /// signature), and the remote as one that refuses unverified events. `true` when something new was
    /// learned: the sync tries again without it; `false` leaves the refusal an error.
    pub fn learn(&mut self, repo: &gix::Repository, refusal: &str) -> Result<bool> {
        let mut learned = false;
        for line in refusal.lines() {
            let Some((commit, reason)) = parse_refusal(line) else {
                continue;
            };
            let Some(c) = framed(repo, commit)? else {
                continue;
            };
            let r = Refusal {
                remote: self.remote.clone(),
                id: c.id.to_hex(),
                sig: sig_digest(c.signature.as_deref()),
                reason: format!("{reason} (refused by {})", self.remote),
            };
            if self.refused.iter().any(|x| x.id == r.id && x.sig == r.sig) {
                continue;
            }
            append_line(
                repo,
                "refused",
                &format!("{} {} {} {}", r.remote, r.id, r.sig, r.reason),
            )?;
            self.refused.push(r);
            learned = true;
        }
        if learned && !self.precheck {
            append_line(repo, "signed-remotes", &self.remote)?;
            self.precheck = true;
        }
        Ok(learned)
    }
}

/// One line of the guard's refusal: the commit it names and the verification state it gives.
fn parse_refusal(line: &str) -> Option<(ObjectId, String)> {
    let at = line.find("commit ")?;
    let rest = &line[at + "commit ".len()..];
    let hex = rest.get(..40)?;
    let commit = ObjectId::from_hex(hex.as_bytes()).ok()?;
    let rest = &rest[40..];
    rest.starts_with(" holds event ").then_some(())?;
    let (_, after) = rest.split_once(", not verified for ")?;
    let (_, state) = after.split_once(": ")?;
    let state = state.split(" (").next().unwrap_or(state).trim();
    // The remote's words reach the user's terminal and a line of `refused`: printable, one line, bounded.
    let state: String = state
        .chars()
        .take(200)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    Some((commit, state))
}

fn append_line(repo: &gix::Repository, file: &str, line: &str) -> Result<()> {
    use std::io::Write;
    let dir = dir(repo);
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let path = dir.join(file);
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
    // One write per line: concurrent syncs append whole lines.
    f.write_all(format!("{line}\n").as_bytes())
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))
}

/// What a sync publishes for one log when something is held back.
pub struct Split {
    pub held: Vec<HeldBack>,
    /// The remote's union plus every other unpushed event, `None` when there is nothing else to publish.
    pub publish: Option<ObjectId>,
}

/// The clone's unpushed events of `log` at `tip` (which holds the `remote` commits): the events of commits
/// no remote commit reaches whose ids no remote commit holds (a held-back sync published the others as new
/// commits with the same ids), in the total order.
fn unpushed(log: &Log<'_>, tip: ObjectId, remote: &[ObjectId]) -> Result<Vec<LoggedEvent>> {
    let local_only = crate::store::eventlog::order(log.scan(&[tip], remote, false)?.events);
    if local_only.is_empty() || remote.is_empty() {
        return Ok(local_only);
    }
    // A full walk of the remote's copy, paid only while something is held back (and by `log held-back`): the
    // copies published by earlier syncs sit anywhere above the fork point, so no bound below it is safe.
    let on_remote: IdSet = log
        .scan(remote, &[], false)?
        .events
        .into_iter()
        .map(|e| e.id)
        .collect();
    Ok(local_only
        .into_iter()
        .filter(|e| !on_remote.contains(&e.id))
        .collect())
}

/// Split the news of `log` for a sync: `None` when nothing is held back (publish `tip` as always), else
/// the held-back events and what to publish instead.
pub fn split(
    log: &Log<'_>,
    gate: &Gate,
    tip: ObjectId,
    remote: &[ObjectId],
) -> Result<Option<Split>> {
    if !gate.active() {
        return Ok(None);
    }
    let repo = log.repo();
    let local_only = crate::store::eventlog::order(log.scan(&[tip], remote, false)?.events);
    if local_only.is_empty() {
        return Ok(None);
    }
    let trust = if gate.precheck {
        crate::store::sign::verdict::load_trust(repo)?
    } else {
        None
    };
    let mut verifier =
        trust.map(|(t, id)| crate::store::eventlog::Verifier::with_trust(repo, t, id));
    let mut suspects = Vec::new();
    for e in &local_only {
        if let Some(reason) = gate.why(repo, verifier.as_mut(), e)? {
            suspects.push((e.id, reason));
        }
    }
    if suspects.is_empty() {
        return Ok(None);
    }
    let events = unpushed(log, tip, remote)?;
    let mut held = Vec::new();
    let mut held_ids = BTreeSet::new();
    for e in &events {
        if let Some((_, reason)) = suspects.iter().find(|(id, _)| *id == e.id) {
            held_ids.insert(e.id);
            held.push(HeldBack {
                log: log.name().to_owned(),
                id: e.id.to_hex(),
                actor: e.event.actor.clone(),
                kind: e.event.kind.clone(),
                reason: reason.clone(),
                commit: e.commit.to_string(),
            });
        }
    }
    // `held` may be empty: every suspect's id is on the remote already (signed again elsewhere). The local tip
    // still carries the suspect commits, so what is published is rebuilt all the same.
    let rest: Vec<Rebuild> = events
        .iter()
        .filter(|e| !held_ids.contains(&e.id))
        .map(|e| Rebuild {
            commit: e.commit,
            signature: None,
        })
        .collect();
    let publish = if rest.is_empty() {
        None
    } else {
        let base = remote_union(log, remote)?;
        rebuild(log, base, &rest)?
    };
    Ok(Some(Split { held, publish }))
}

/// The join of the remote's commits of a log (`None`: the remote has none).
fn remote_union(log: &Log<'_>, remote: &[ObjectId]) -> Result<Option<ObjectId>> {
    Ok(log.join_all(remote)?.map(|(outcome, _)| outcome.tip()))
}

/// One event to write again: the commit that carries it, and its new signature (`None`: keep its own).
struct Rebuild {
    commit: ObjectId,
    signature: Option<String>,
}

/// Write `events` again as a chain of new commits on top of `base`: the same event JSON (so the same ids),
/// the same tree (the attachments), the signature kept or replaced, new Lamport clocks above `base`.
fn rebuild(log: &Log<'_>, base: Option<ObjectId>, events: &[Rebuild]) -> Result<Option<ObjectId>> {
    let repo = log.repo();
    let committer = crate::kit::repo::committer(repo);
    let mut lamport = match base {
        Some(b) => log.lamport_at(b)?,
        None => 0,
    };
    let mut parent = base;
    for e in events {
        let c = repo
            .find_commit(e.commit)
            .map_err(|err| Error::wrap(format!("reading commit {}", e.commit), err))?;
        let tree = c
            .tree_id()
            .map_err(|err| Error::wrap(format!("reading commit {}", e.commit), err))?
            .detach();
        let Some(framed) = framed(repo, e.commit)? else {
            return Err(Error::Other(format!(
                "commit {} is not a valid event",
                e.commit
            )));
        };
        lamport += 1;
        let signature = e.signature.clone().or(framed.signature);
        let message = event_message(
            &framed.event.kind,
            &framed.json,
            &framed.id,
            lamport,
            signature.as_deref(),
        );
        let commit = gix::objs::Commit {
            tree,
            parents: parent.into_iter().collect(),
            author: crate::kit::repo::persona_signature(&framed.event.actor, committer.time),
            committer: committer.clone(),
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        parent = Some(crate::store::loose::write(repo, &commit)?);
    }
    Ok(parent)
}

/// Remember what a sync held back, for `log held-back` (best effort: derived data).
pub fn remember(repo: &gix::Repository, held: &[HeldBack]) {
    let path = dir(repo).join("last.json");
    if held.is_empty() {
        let _ = std::fs::remove_file(&path);
        return;
    }
    if let Ok(text) = serde_json::to_vec_pretty(held) {
        let _ = std::fs::create_dir_all(dir(repo));
        let _ = crate::store::eventlog::cache::write_atomically(&path, &text);
    }
}

/// The events the last sync held back that are still unpushed events of their logs here.
pub fn list(repo: &gix::Repository) -> Result<Vec<HeldBack>> {
    let remembered: Vec<HeldBack> = std::fs::read(dir(repo).join("last.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut out = Vec::new();
    let logs: BTreeSet<&str> = remembered.iter().map(|h| h.log.as_str()).collect();
    for name in logs {
        let log = Log::open(repo, name)?;
        let Some(tip) = log.local_tip()? else {
            continue;
        };
        let remote: Vec<ObjectId> = log.remote_tips()?.into_iter().map(|(_, id)| id).collect();
        let ids: BTreeSet<String> = unpushed(&log, tip, &remote)?
            .into_iter()
            .map(|e| e.id.to_hex())
            .collect();
        out.extend(
            remembered
                .iter()
                .filter(|h| h.log == name && ids.contains(&h.id))
                .cloned(),
        );
    }
    Ok(out)
}

/// What to do with held-back events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Settle {
    /// Leave them out of the local log (the backup keeps them).
    Drop,
    /// Sign them again with their actor's key as configured now.
    Resign,
}

/// Which events to settle.
#[derive(Debug, Clone)]
pub enum Which {
    /// What the last sync held back ([`list`]).
    HeldBack,
    /// These events (ids or unique prefixes of at least 4 hex digits): any unpushed event of a local log.
    Ids(Vec<String>),
}

/// One event settled.
#[derive(Debug, Clone, Serialize)]
pub struct Settled {
    pub log: String,
    pub id: String,
    pub actor: String,
    pub kind: String,
    pub action: Settle,
    /// After a re-signing, the new signature's state under the local trust roots (`None`: there are none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<crate::store::sign::State>,
    /// The backup ref that keeps the log as it was (`refs/jules/backup/log/<log>/<n>`).
    pub backup: String,
}

/// Drop or re-sign unpushed events in the local logs: each log whose events change is rebuilt as the union
/// of its remote-tracking copies plus its other unpushed events (same ids), in one ref transaction with a
/// backup of its old tip. Nothing is written when an id names no unpushed event, or a persona to re-sign
/// for has no key.
pub fn settle(repo: &gix::Repository, which: &Which, action: Settle) -> Result<Vec<Settled>> {
    // The targets: from the last sync's list, or every local log's unpushed events by prefix.
    let wanted: Vec<(Option<String>, String)> = match which {
        Which::HeldBack => {
            let held = list(repo)?;
            if held.is_empty() {
                return Err(Error::usage(
                    "nothing is held back (the last sync published every event)",
                ));
            }
            held.into_iter().map(|h| (Some(h.log), h.id)).collect()
        }
        Which::Ids(ids) => {
            for id in ids {
                if id.len() < 4 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(Error::usage(format!(
                        "{id:?} is not an event id (at least 4 hex digits)"
                    )));
                }
            }
            ids.iter().map(|i| (None, i.to_ascii_lowercase())).collect()
        }
    };
    // Every local log a wanted event may be in, with its unpushed events.
    let mut logs = Vec::new();
    for name in crate::store::eventlog::list_logs(repo)? {
        if wanted
            .iter()
            .all(|(l, _)| l.as_ref().is_some_and(|l| *l != name))
        {
            continue;
        }
        let log = Log::open(repo, &name)?;
        let Some(tip) = log.local_tip()? else {
            continue;
        };
        let remote: Vec<ObjectId> = log.remote_tips()?.into_iter().map(|(_, id)| id).collect();
        let events = unpushed(&log, tip, &remote)?;
        logs.push((name, tip, remote, events));
    }
    // Each wanted id names exactly one unpushed event.
    let mut targets: Vec<IdSet> = vec![IdSet::default(); logs.len()];
    for (want_log, want) in &wanted {
        let mut found: Vec<(usize, EventId)> = Vec::new();
        for (i, (name, _, _, events)) in logs.iter().enumerate() {
            if want_log.as_ref().is_some_and(|l| l != name) {
                continue;
            }
            found.extend(
                events
                    .iter()
                    .filter(|e| e.id.to_hex().starts_with(want.as_str()))
                    .map(|e| (i, e.id)),
            );
        }
        match found.as_slice() {
            [] => {
                return Err(Error::usage(format!(
                "{want} is not an unpushed event of this clone (no log here holds it, or a remote \
                     already does)"
            )))
            }
            [(i, id)] => {
                targets[*i].insert(*id);
            }
            many => {
                return Err(Error::Ambiguous {
                    what: crate::kit::error::Thing::Event,
                    prefix: want.clone(),
                    candidates: many.iter().map(|(_, id)| id.to_hex()).collect(),
                })
            }
        }
    }
    let plans: Vec<_> = logs
        .into_iter()
        .zip(targets)
        .filter(|(_, t)| !t.is_empty())
        .map(|((name, tip, remote, events), t)| (name, tip, remote, events, t))
        .collect();
    let mut out = Vec::new();
    for (name, tip, remote, events, targets) in plans {
        let log = Log::open(repo, &name)?;
        let mut chain = Vec::new();
        let mut done = Vec::new();
        for e in &events {
            if !targets.contains(&e.id) {
                chain.push(Rebuild {
                    commit: e.commit,
                    signature: None,
                });
                continue;
            }
            done.push(e);
            if action == Settle::Resign {
                let Some(c) = framed(repo, e.commit)? else {
                    return Err(Error::Other(format!(
                        "commit {} is not a valid event",
                        e.commit
                    )));
                };
                let signature = crate::store::sign::sign_event(repo, &e.event.actor, &c.json)?
                    .ok_or_else(|| {
                        Error::needs(
                            ErrorKind::Usage,
                            format!(
                                "{} has no signing key to sign event {} again",
                                e.event.actor,
                                e.id.short(12),
                            ),
                            Remedy::SigningKey {
                                persona: e.event.actor.clone(),
                            },
                        )
                    })?;
                chain.push(Rebuild {
                    commit: e.commit,
                    signature: Some(signature),
                });
            }
        }
        let base = remote_union(&log, &remote)?;
        let new_tip = rebuild(&log, base, &chain)?;
        let backup = rewrite(repo, &log, tip, new_tip, action)?;
        let trust = match action {
            Settle::Resign => crate::store::sign::verdict::load_trust(repo)?,
            Settle::Drop => None,
        };
        let mut verifier =
            trust.map(|(t, id)| crate::store::eventlog::Verifier::with_trust(repo, t, id));
        for e in done {
            let signature = match (&mut verifier, new_tip) {
                (Some(v), Some(t)) => state_in(&log, v, t, e.id)?,
                _ => None,
            };
            out.push(Settled {
                log: name.clone(),
                id: e.id.to_hex(),
                actor: e.event.actor.clone(),
                kind: e.event.kind.clone(),
                action,
                signature,
                backup: backup.clone(),
            });
        }
    }
    forget(repo, &out);
    Ok(out)
}

/// The signature state of event `id` in the chain at `tip` (the rebuilt commit).
fn state_in(
    log: &Log<'_>,
    verifier: &mut crate::store::eventlog::Verifier<'_>,
    tip: ObjectId,
    id: EventId,
) -> Result<Option<crate::store::sign::State>> {
    let mut at = Some(tip);
    while let Some(commit) = at {
        if let Some(c) = framed(log.repo(), commit)? {
            if c.id == id {
                return verifier.state(commit);
            }
        }
        let c = log
            .repo()
            .find_commit(commit)
            .map_err(|e| Error::wrap(format!("reading commit {commit}"), e))?;
        at = c.parent_ids().next().map(|p| p.detach());
    }
    Ok(None)
}

/// Move the local log from `old` to `new` (delete it when `None`) with a backup of `old`, in one ref
/// transaction; the backup ref's name.
fn rewrite(
    repo: &gix::Repository,
    log: &Log<'_>,
    old: ObjectId,
    new: Option<ObjectId>,
    action: Settle,
) -> Result<String> {
    use gix::refs::transaction::{Change, PreviousValue, RefEdit, RefLog};
    let verb = match action {
        Settle::Drop => "drop",
        Settle::Resign => "resign",
    };
    let message = format!("jules log held-back {verb}");
    let edit = match new {
        Some(new) => crate::store::backup::update(log.name(), Some(old), new, false, &message)?,
        None => RefEdit {
            change: Change::Delete {
                expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(old)),
                log: RefLog::AndReference,
            },
            name: log
                .name()
                .try_into()
                .map_err(|e| Error::usage(format!("bad ref name {}: {e}", log.name())))?,
            deref: false,
        },
    };
    let backup = crate::store::backup::transaction(
        repo,
        crate::store::backup::Owner::Log(log.short_name()),
        old,
        vec![edit],
        &format!("{message}: backup of {}", log.name()),
        || {
            Error::Conflict(format!(
                "{} moved meanwhile; nothing was changed: run it again",
                log.name()
            ))
        },
    )?;
    // The remote tips the old tip was remembered to hold are held by the new one too (it is built on their
    // union); the hint is dropped all the same: it was made for a history that is gone.
    log.forget_absorbed();
    Ok(backup.name)
}

/// Forget the refusals and the listing of settled events.
fn forget(repo: &gix::Repository, settled: &[Settled]) {
    let ids: BTreeSet<&str> = settled.iter().map(|s| s.id.as_str()).collect();
    let path = dir(repo).join("refused");
    if let Ok(text) = std::fs::read_to_string(&path) {
        let kept: String = text
            .lines()
            .filter(|l| l.split(' ').nth(1).is_none_or(|id| !ids.contains(id)))
            .map(|l| format!("{l}\n"))
            .collect();
        let _ = crate::store::eventlog::cache::write_atomically(&path, kept.as_bytes());
    }
    let last = dir(repo).join("last.json");
    if let Some(held) = std::fs::read(&last)
        .ok()
        .and_then(|b| serde_json::from_slice::<Vec<HeldBack>>(&b).ok())
    {
        let kept: Vec<HeldBack> = held
            .into_iter()
            .filter(|h| !ids.contains(h.id.as_str()))
            .collect();
        remember(repo, &kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_guards_refusal_names_the_commit_and_the_state() {
        let line = "remote: warning: git-jules guard refused refs/jules/lease: commit \
                    d6fdcc131dabfc6055982a53acade1c0bef187ab holds event 3b524b83fd6d by nobodyy, not \
                    verified for nobodyy: unsigned (the remote requires signed events; trust roots: \
                    .jules/allowed_signers)";
        let (commit, state) = parse_refusal(line).unwrap();
        assert_eq!(
            commit.to_string(),
            "d6fdcc131dabfc6055982a53acade1c0bef187ab"
        );
        assert_eq!(state, "unsigned");
        let key =
            "refs/jules/mail: commit d6fdcc131dabfc6055982a53acade1c0bef187ab holds event 3b52 by \
                   x, not verified for x: key SHA256:abc not allowed for this actor (the remote …)";
        assert_eq!(
            parse_refusal(key).unwrap().1,
            "key SHA256:abc not allowed for this actor"
        );
        // Other refusals (a rewrite, an invalid commit) name no held-back event.
        assert_eq!(
            parse_refusal(
                "refs/jules/mail: commit d6fdcc131dabfc6055982a53acade1c0bef187ab is not a valid event: x"
            ),
            None
        );
        assert_eq!(parse_refusal("commit d6fd holds event"), None);
        // A hostile remote's control characters never reach the terminal or the memo's lines.
        let hostile = "commit d6fdcc131dabfc6055982a53acade1c0bef187ab holds event x by y, not verified for y: \
                       \x1b[2Jgone\rok";
        assert_eq!(parse_refusal(hostile).unwrap().1, "?[2Jgone?ok");
    }

    #[test]
    fn a_refusal_is_remembered_for_one_signature() {
        assert_eq!(sig_digest(None), "-");
        assert_ne!(sig_digest(Some("AAAA")), sig_digest(Some("AAAB")));
        assert_eq!(sig_digest(Some("AAAA")).len(), 16);
    }
}
