//! Every persona's counts in one pass over the loaded mailboxes: what `mail stats` and the fleet page show.
//!
//! The listings ([`MailView::inbox`], [`MailView::sent`]) clone every header they return, so counting a
//! hundred mailboxes through them cloned each message several times (the fleet page took most of a second
//! at 100,000 messages). Here every partition is loaded once and then only borrowed: the counts are the
//! lengths of the listings they stand for, with the same filters ([`keep`]), and nothing is cloned but the
//! few ids and times the result names. `tests` checks them against the listings.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};

use super::super::message::BROADCAST;
use super::query::keep;
use super::{Filter, Folder, Header, Key, MailView, Mailbox, Marks};
use crate::kit::error::Result;

/// One persona's mailbox, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PersonaTally {
    /// What `inbox --folder all` lists: everything delivered, broadcasts included.
    pub received: u64,
    /// What `inbox --unread` lists.
    pub unread: u64,
    /// The unread messages of the inbox that ask for a response.
    pub needs_response: u64,
    /// What `sent` lists.
    pub sent: u64,
    /// The time of the newest message it sent.
    pub last_sent: Option<String>,
    /// The inbox's messages it holds the claim on, in the inbox's order (urgent first, then newest).
    pub open_claims: Vec<String>,
}

/// Every persona's counts, and the messages nobody answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// The number of messages ([`MailView::messages`]).
    pub messages: u64,
    /// Per persona with a mailbox ([`MailView::personas`]).
    pub personas: BTreeMap<String, PersonaTally>,
    /// Messages with `needs_response` that no message answers (`in_reply_to`), expired ones excluded.
    pub unanswered: u64,
    /// The oldest of them (by time, then the total order).
    pub oldest_unanswered: Option<Header>,
    /// The first time after the count at which a counted message expires: until then the counts hold for
    /// the same log (a frontend may keep them), from then on they must be made again.
    pub valid_until: Option<DateTime<Utc>>,
}

impl MailView {
    /// Count every persona's mailbox in one pass: every partition is read once, then only borrowed. The
    /// partitions read only for the count are let go again (unless changed), so that a view kept warm
    /// between requests holds what the listings asked for, not the whole log.
    pub fn tally(&mut self, now: DateTime<Utc>) -> Result<Tally> {
        let dir = self.dir.clone();
        let dir = dir.as_deref();
        let had_boxes: BTreeSet<String> = self.boxes.loaded.keys().cloned().collect();
        let had_sent: BTreeSet<String> = self.sent.loaded.keys().cloned().collect();
        for p in self.boxes.present.clone() {
            self.boxes.ensure(dir, &p)?;
        }
        for p in self.sent.present.clone() {
            self.sent.ensure(dir, &p)?;
        }
        let tally = self.count(now);
        if self.fresh || self.dir.is_none() {
            // Built in memory: what is loaded is all there is of it.
            return Ok(tally);
        }
        let (boxes, sent) = (&mut self.boxes, &mut self.sent);
        boxes
            .loaded
            .retain(|k, _| had_boxes.contains(k) || boxes.dirty.contains(k));
        sent.loaded
            .retain(|k, _| had_sent.contains(k) || sent.dirty.contains(k));
        Ok(tally)
    }

    /// [`MailView::tally`] over partitions already loaded.
    fn count(&self, now: DateTime<Utc>) -> Tally {
        let mut valid_until: Option<DateTime<Utc>> = None;
        let mut expiry = |h: &Header| {
            if let Some(t) = h
                .expires
                .as_deref()
                .and_then(super::super::when::parse_stored)
            {
                if t > now && valid_until.is_none_or(|v| t < v) {
                    valid_until = Some(t);
                }
            }
        };
        let empty = Mailbox::default();
        let boxes = &self.boxes.loaded;
        let broadcast = boxes.get(BROADCAST).unwrap_or(&empty);
        let inbox = Filter::default();
        let unread = Filter {
            unread: true,
            ..Filter::default()
        };
        let all = Filter {
            folder: Folder::All,
            ..Filter::default()
        };
        let no_marks = Marks::default();
        let mut personas = BTreeMap::new();
        for p in self.personas() {
            let own = boxes.get(&p).unwrap_or(&empty);
            let mut t = PersonaTally::default();
            let mut claims: Vec<&Header> = Vec::new();
            // The candidates of `inbox`: the persona's own box, then the broadcasts it did not send and
            // does not also hold directly.
            let candidates = own.received.iter().chain(
                broadcast
                    .received
                    .iter()
                    .filter(|(k, r)| r.h.from != p && !own.received.contains_key(k)),
            );
            for (k, r) in candidates {
                let (h, marks) = (&r.h, own.marks.get(k).unwrap_or(&no_marks));
                expiry(h);
                t.received += u64::from(keep(h, marks, &p, &all, now));
                t.unread += u64::from(keep(h, marks, &p, &unread, now));
                if keep(h, marks, &p, &inbox, now) {
                    t.needs_response += u64::from(h.needs_response && marks.read.is_none());
                    if h.claim.as_ref().is_some_and(|c| c.persona == p) {
                        claims.push(h);
                    }
                }
            }
            // The inbox's order (`MailView::inbox`): urgent first, then newest.
            claims.sort_unstable_by(|a, b| {
                (a.priority, &b.time, b.lamport, &a.id)
                    .cmp(&(b.priority, &a.time, a.lamport, &b.id))
            });
            t.open_claims = claims.into_iter().map(|h| h.id.clone()).collect();
            let mut newest: Option<&Header> = None;
            for h in self.sent_headers(&p) {
                t.sent += 1;
                if newest.is_none_or(|n| (&h.time, h.lamport) > (&n.time, n.lamport)) {
                    newest = Some(h);
                }
            }
            t.last_sent = newest.map(|h| h.time.clone());
            personas.insert(p, t);
        }
        // Every message once, from its sender's list (as `all_headers` reads them).
        let mut answered: BTreeSet<&str> = BTreeSet::new();
        let mut needing: Vec<&Header> = Vec::new();
        for p in &self.sent.present {
            for h in self.sent_headers(p) {
                expiry(h);
                if let Some(r) = h.in_reply_to.as_deref() {
                    answered.insert(r);
                }
                if h.needs_response && !h.is_expired(now) {
                    needing.push(h);
                }
            }
        }
        let mut unanswered = 0;
        let mut oldest: Option<&Header> = None;
        for h in needing
            .into_iter()
            .filter(|h| !answered.contains(h.id.as_str()))
        {
            unanswered += 1;
            let key = |h: &Header| (h.time.clone(), h.lamport, h.id.clone());
            if oldest.is_none_or(|o| key(h) < key(o)) {
                oldest = Some(h);
            }
        }
        Tally {
            messages: self.messages(),
            personas,
            unanswered,
            oldest_unanswered: oldest.cloned(),
            valid_until,
        }
    }

    /// The headers of what `persona` sent, borrowed from the mailboxes that hold them; only after
    /// [`MailView::tally`] loaded every partition (one not loaded lists nothing).
    fn sent_headers<'a>(&'a self, persona: &str) -> impl Iterator<Item = &'a Header> + 'a {
        self.sent
            .loaded
            .get(persona)
            .into_iter()
            .flat_map(|s| s.iter())
            .filter_map(|(k, holder): (&Key, &String)| {
                self.boxes
                    .loaded
                    .get(holder)
                    .and_then(|b| b.received.get(k))
                    .map(|r| &r.h)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::mail::kinds;
    use crate::capabilities::mail::ops;
    use crate::store::eventlog::{Event, LoggedEvent};
    use gix::ObjectId;

    fn ev(lamport: u64, kind: &str, actor: &str, data: serde_json::Value) -> LoggedEvent {
        let mut event = Event::new(kind, actor, data);
        event.nonce = Some(format!("{lamport}"));
        event.time = format!(
            "2026-01-{:02}T15:{:02}:00.000Z",
            1 + lamport / 60 % 28,
            lamport % 60
        );
        LoggedEvent {
            id: event.id().unwrap(),
            lamport,
            commit: ObjectId::null(gix::hash::Kind::Sha1),
            event,
        }
    }

    /// A seeded log of sends (direct, to groups, broadcasts, urgent, asking for a response, expired, in
    /// reply), marks (read, archive, trash) and claims among the recipients, folded.
    fn seeded(seed: u64, n: u64) -> MailView {
        let mut rng = seed;
        let mut next = |m: u64| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (rng >> 33) % m
        };
        let who = |i: u64| format!("p{i}");
        let mut events = Vec::new();
        let mut ids: Vec<(String, Vec<String>)> = Vec::new();
        for l in 1..=n {
            let actor = who(next(6));
            let roll = next(10);
            if roll < 5 || ids.is_empty() {
                let to: Vec<String> = match next(6) {
                    0 => vec![BROADCAST.to_owned()],
                    1 => vec!["team".to_owned()],
                    _ => vec![who(next(6)), who(next(6))],
                };
                let mut data = serde_json::json!({
                    "to": to, "groups": {"team": ["p1", "p2", "p3"]}, "subject": format!("s{l}"),
                    "body": "", "type": "task",
                    "priority": if next(4) == 0 { "urgent" } else { "normal" },
                    "needs_response": next(2) == 0,
                });
                if next(5) == 0 {
                    data["expires"] = serde_json::json!("2026-01-10T00:00:00.000Z");
                }
                if !ids.is_empty() && next(3) == 0 {
                    let (answered, _) = &ids[next(ids.len() as u64) as usize];
                    data["in_reply_to"] = serde_json::json!(answered);
                }
                let e = ev(l, kinds::SEND, &actor, data);
                let reached = if to[0] == BROADCAST {
                    (0..6).map(who).filter(|p| *p != actor).collect()
                } else if to[0] == "team" {
                    vec!["p1".into(), "p2".into(), "p3".into()]
                } else {
                    to.clone()
                };
                ids.push((e.id.to_hex(), reached));
                events.push(e);
            } else {
                let (id, reached) = ids[next(ids.len() as u64) as usize].clone();
                let actor = reached
                    .get(next(reached.len() as u64 + 1) as usize)
                    .cloned()
                    .unwrap_or(actor);
                let kind = match next(6) {
                    0 | 1 => kinds::READ,
                    2 => kinds::ARCHIVE,
                    3 => kinds::TRASH,
                    4 => kinds::UNREAD,
                    _ => kinds::CLAIM,
                };
                events.push(ev(
                    l,
                    kind,
                    &actor,
                    serde_json::json!({"message": id, "lock": next(3) == 0}),
                ));
            }
        }
        use crate::store::eventlog::cache::Projection;
        let mut v = MailView::empty();
        for e in crate::store::eventlog::order(events) {
            v.apply(&e);
        }
        v
    }

    #[test]
    fn the_one_pass_counts_equal_the_listings() {
        let now = "2026-01-20T00:00:00Z".parse::<DateTime<Utc>>().unwrap();
        for seed in 0..8 {
            let mut v = seeded(seed, 400);
            let tally = v.tally(now).unwrap();
            assert_eq!(
                tally.personas.keys().cloned().collect::<BTreeSet<_>>(),
                v.personas()
            );
            let mut claims_seen = 0;
            for (p, t) in &tally.personas {
                let all = Filter {
                    folder: Folder::All,
                    ..Filter::default()
                };
                let inbox = v.inbox(p, &Filter::default(), now).unwrap();
                let sent = v.sent(p).unwrap();
                let want = PersonaTally {
                    received: v.inbox(p, &all, now).unwrap().len() as u64,
                    unread: ops::unread(&mut v, p, now).unwrap().len() as u64,
                    needs_response: inbox
                        .iter()
                        .filter(|i| i.header.needs_response && i.marks.read.is_none())
                        .count() as u64,
                    sent: sent.len() as u64,
                    last_sent: sent.first().map(|h| h.time.clone()),
                    open_claims: inbox
                        .iter()
                        .filter(|i| i.header.claim.as_ref().is_some_and(|c| &c.persona == p))
                        .map(|i| i.header.id.clone())
                        .collect(),
                };
                claims_seen += want.open_claims.len();
                assert_eq!(*t, want, "seed {seed}, persona {p}");
            }
            // Every seed, not only the first: a fold that dropped claims (or a generator that stopped making
            // them) would leave `open_claims` compared as empty against empty.
            assert!(claims_seen > 0, "seed {seed} exercises claims");
            // The log-wide counts, against the listing of every message.
            let headers = v.all_headers().unwrap();
            let answered: BTreeSet<&str> = headers
                .iter()
                .filter_map(|h| h.in_reply_to.as_deref())
                .collect();
            let open: Vec<&Header> = headers
                .iter()
                .filter(|h| {
                    h.needs_response && !answered.contains(h.id.as_str()) && !h.is_expired(now)
                })
                .collect();
            assert_eq!(tally.unanswered, open.len() as u64, "seed {seed}");
            assert!(
                tally.unanswered > 0 && !answered.is_empty(),
                "seed {seed} exercises answers"
            );
            let oldest = open
                .iter()
                .min_by(|a, b| (&a.time, a.lamport).cmp(&(&b.time, b.lamport)));
            assert_eq!(
                tally.oldest_unanswered.as_ref(),
                oldest.copied(),
                "seed {seed}"
            );
            assert!(
                tally.personas.values().any(|t| t.received > t.unread),
                "marks are exercised"
            );
            // Before the expiry the counts say until when they hold.
            let before = "2026-01-05T00:00:00Z".parse::<DateTime<Utc>>().unwrap();
            let until = "2026-01-10T00:00:00Z".parse::<DateTime<Utc>>().unwrap();
            assert_eq!(v.tally(before).unwrap().valid_until, Some(until));
            assert_eq!(tally.valid_until, None);
            // A view loaded from its cache counts the same and lets go of what it read only to count.
            let dir = tempfile::tempdir().unwrap();
            let stamp = crate::store::eventlog::cache::Stamp::of(&[]);
            use crate::store::eventlog::cache::Projection;
            v.save(dir.path(), &stamp).unwrap();
            crate::store::eventlog::cache::save_json(
                dir.path(),
                "meta.json",
                &serde_json::json!({}),
                &stamp,
            )
            .unwrap();
            let mut loaded = MailView::load(dir.path()).unwrap();
            loaded.inbox("p1", &Filter::default(), now).unwrap();
            let listed: Vec<String> = loaded.boxes.loaded.keys().cloned().collect();
            assert!(!listed.is_empty());
            assert_eq!(loaded.tally(now).unwrap(), tally, "seed {seed}");
            assert_eq!(
                loaded.boxes.loaded.keys().cloned().collect::<Vec<_>>(),
                listed,
                "only what the listing read stays loaded"
            );
            assert!(loaded.sent.loaded.is_empty());
        }
    }
}
