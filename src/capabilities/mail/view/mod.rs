//! The mail projection: every persona's mailbox, folded over the log's total order.
//!
//! The fold is a pure function of the ordered events, so replicas holding the same events agree. Rules:
//!
//! - `mail.send` delivers the message to each direct recipient, to each member recorded for a group
//!   recipient, and, for `__broadcast`, to everyone but the sender. Its thread is `data.thread`, else the
//!   thread of the message it answers (`in_reply_to`), else its own id.
//! - The marks (`read`/`unread`, `tag`/`untag`, `trash`/`untrash`, `archive`/`unarchive`) are per persona:
//!   the actor's own state; the last one in the total order wins. Marks on messages the fold has not seen
//!   yet are kept and apply once the message arrives.
//! - `mail.claim` counts only when the message was sent earlier in the order and the actor is one of its
//!   recipients. The winner is the first `lock` claim if there is one, else the first claim.
//! - Events whose data does not decode, or that name a persona that is not a valid name, are skipped.
//!
//! The cache (`.git/jules/cache/mail/mail/`) is partitioned so that a warm `inbox` reads only what it shows:
//!
//! | file | holds |
//! |---|---|
//! | `summary.json` | counts and which partitions exist |
//! | `index.bin` | every message id (32 bytes) and its commit (20 bytes), sorted by id |
//! | `boxes/<persona>.json` | the headers of the messages the persona received, and its marks |
//! | `sent/<persona>.json` | the messages it sent, each with the mailbox that holds its header |
//! | `meta/<xx>.json` | per message (by the first byte of its id): inherited or named thread, claims |
//! | `threads/<xx>.json` | per thread (by the first byte of sha256 of its key): its messages in order |
//! | `tagged/<xx>.json` | per sender's tag (by the first byte of sha256 of the tag): its messages, each with its
//! lamport and the mailbox that holds its header |
//!
//! Partitions are loaded on first use; an incremental refresh rewrites only those it changed.

//!
//! The module is split along its seams: [`types`] (what the views hand out), `parts` (the partition store),
//! `fold` (applying events), `query` (the listings and look-ups) and `tally` (every persona's counts in one
//! pass).

mod fold;
mod parts;
mod query;
mod tally;
mod types;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gix::ObjectId;
use serde::{Deserialize, Serialize};

use crate::store::eventlog::cache::{load_json, save_json, write_sealed, Projection, Stamp};
use crate::store::eventlog::{EventId, LoggedEvent};

use parts::Parts;
use query::unique_len;
pub use tally::{PersonaTally, Tally};
pub use types::*;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Summary {
    messages: u64,
    skipped: u64,
    abbrev: usize,
    boxes: BTreeSet<String>,
    sent: BTreeSet<String>,
    meta: BTreeSet<u8>,
    threads: BTreeSet<u8>,
    #[serde(default)]
    tagged: BTreeSet<u8>,
}

const RECORD: usize = 52;

/// Where a tagged message is: its place in the order (to list the newest first without reading headers) and
/// the mailbox that holds its header.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct TaggedAt {
    lamport: u64,
    holder: String,
}

/// The mail projection. See the module documentation for the fold and the cache layout.
#[derive(Debug)]
pub struct MailView {
    /// The cache directory partitions load from; `None` for a view built in memory.
    dir: Option<PathBuf>,
    /// Built from nothing: saving replaces every partition.
    fresh: bool,
    /// A partition failed to load while folding: the view cannot be trusted or saved.
    broken: Option<String>,
    summary: Summary,
    boxes: Parts<String, Mailbox>,
    /// Per sender: each message it sent and the mailbox holding its header.
    sent: Parts<String, BTreeMap<Key, String>>,
    meta: Parts<u8, BTreeMap<Key, MessageMeta>>,
    threads: Parts<u8, BTreeMap<String, Vec<String>>>,
    /// Per sender's tag: its messages, so that the messages carrying one tag (weave's mails) are found
    /// without reading every header.
    tagged: Parts<u8, BTreeMap<String, BTreeMap<Key, TaggedAt>>>,
    index: Option<Vec<(EventId, ObjectId)>>,
    index_sorted: bool,
    index_dirty: bool,
}

impl MailView {
    fn with_summary(dir: Option<PathBuf>, summary: Summary) -> Self {
        MailView {
            dir,
            fresh: false,
            broken: None,
            boxes: Parts::new("boxes", summary.boxes.clone()),
            sent: Parts::new("sent", summary.sent.clone()),
            meta: Parts::new("meta", summary.meta.clone()),
            threads: Parts::new("threads", summary.threads.clone()),
            tagged: Parts::new("tagged", summary.tagged.clone()),
            summary,
            index: None,
            index_sorted: true,
            index_dirty: false,
        }
    }
}

impl Projection for MailView {
    const NAME: &'static str = "mail";
    // 4: the `tagged/` partitions.
    const VERSION: u32 = 4;

    fn empty() -> Self {
        let mut v = MailView::with_summary(None, Summary::default());
        v.fresh = true;
        v.index = Some(Vec::new());
        v
    }

    fn apply(&mut self, e: &LoggedEvent) {
        if self.broken.is_some() {
            return;
        }
        if let Err(err) = self.try_apply(e) {
            self.fail(err);
        }
    }

    fn save(&self, dir: &Path, stamp: &Stamp) -> std::io::Result<()> {
        if let Some(why) = &self.broken {
            return Err(std::io::Error::other(why.clone()));
        }
        let all = self.fresh;
        if all {
            for sub in ["boxes", "sent", "meta", "threads", "tagged"] {
                match std::fs::remove_dir_all(dir.join(sub)) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            }
        }
        self.boxes.save(dir, all, stamp)?;
        self.sent.save(dir, all, stamp)?;
        self.meta.save(dir, all, stamp)?;
        self.threads.save(dir, all, stamp)?;
        self.tagged.save(dir, all, stamp)?;
        let mut summary = self.summary.clone();
        if all || self.index_dirty {
            let mut index = self.index.clone().unwrap_or_default();
            index.sort_unstable_by_key(|(id, _)| *id);
            let mut raw = Vec::with_capacity(index.len() * RECORD);
            for (id, commit) in &index {
                raw.extend_from_slice(&id.0);
                raw.extend_from_slice(commit.as_bytes());
            }
            write_sealed(dir, "index.bin", &raw, stamp)?;
            summary.abbrev = unique_len(&index);
        }
        summary.boxes = self.boxes.present.clone();
        summary.sent = self.sent.present.clone();
        summary.meta = self.meta.present.clone();
        summary.threads = self.threads.present.clone();
        summary.tagged = self.tagged.present.clone();
        save_json(dir, "summary.json", &summary, stamp)
    }

    fn load(dir: &Path) -> Option<Self> {
        let summary: Summary = load_json(dir, "summary.json")?;
        Some(MailView::with_summary(Some(dir.to_owned()), summary))
    }
}

#[cfg(test)]
mod tests {
    use super::query::hex_bound;
    use super::*;
    use crate::capabilities::mail::kinds;
    use crate::kit::error::Error;
    use crate::store::eventlog::Event;
    use chrono::Utc;

    fn ev(lamport: u64, kind: &str, actor: &str, data: serde_json::Value) -> LoggedEvent {
        let mut event = Event::new(kind, actor, data);
        event.nonce = Some(format!("{lamport}"));
        event.time = format!("2026-01-28T15:{:02}:00.000Z", lamport % 60);
        LoggedEvent {
            id: event.id().unwrap(),
            lamport,
            commit: ObjectId::null(gix::hash::Kind::Sha1),
            event,
        }
    }

    fn send(lamport: u64, from: &str, to: &[&str], groups: serde_json::Value) -> LoggedEvent {
        ev(
            lamport,
            kinds::SEND,
            from,
            serde_json::json!({"to": to, "groups": groups, "subject": format!("s{lamport}"),
                               "body": "", "type": "task", "priority": "normal"}),
        )
    }

    fn fold(events: &[LoggedEvent]) -> MailView {
        let mut v = MailView::empty();
        for e in crate::store::eventlog::order(events.to_vec()) {
            v.apply(&e);
        }
        assert!(v.broken.is_none());
        v
    }

    #[test]
    fn claims_first_lock_wins_else_first_claim_and_only_recipients_count() {
        let m = send(
            1,
            "orch",
            &["workers"],
            serde_json::json!({"workers": ["w1", "w2"]}),
        );
        let id = m.id.to_hex();
        let claim = |l, who: &str, lock| {
            ev(
                l,
                kinds::CLAIM,
                who,
                serde_json::json!({"message": id, "lock": lock}),
            )
        };
        let now = Utc::now();
        // Provisional claims: the first in the order wins, whatever order they are folded in.
        let mut v = fold(&[claim(3, "w2", false), m.clone(), claim(2, "w1", false)]);
        assert_eq!(v.meta(&id).unwrap().winner().unwrap().persona, "w1");
        // A lock claim beats a provisional one that sorts before it; outsiders do not count.
        let mut v = fold(&[
            m.clone(),
            claim(2, "outsider", true),
            claim(3, "w1", false),
            claim(4, "w2", true),
        ]);
        assert_eq!(
            v.meta(&id).unwrap().winner(),
            Some(Claim {
                persona: "w2".into(),
                lock: true
            })
        );
        assert_eq!(v.skipped(), 1);
        // The loser's inbox no longer lists it; the winner's does.
        assert!(v.inbox("w1", &Filter::default(), now).unwrap().is_empty());
        assert_eq!(v.inbox("w2", &Filter::default(), now).unwrap().len(), 1);
        // A claim that comes before its message in the order does not count.
        let mut v = fold(&[
            ev(0, kinds::CLAIM, "w1", serde_json::json!({"message": id})),
            m,
        ]);
        assert_eq!(v.meta(&id).unwrap().winner(), None);
    }

    #[test]
    fn marks_are_per_persona_last_wins_and_threads_are_inherited() {
        let a = send(
            1,
            "weaver",
            &["curator", "__broadcast"],
            serde_json::json!({}),
        );
        let id = a.id.to_hex();
        let mark = |l, kind, who: &str| ev(l, kind, who, serde_json::json!({"message": id}));
        let reply = ev(
            5,
            kinds::SEND,
            "curator",
            serde_json::json!({"to": ["weaver"], "subject": "re", "body": "", "type": "response",
                               "priority": "normal", "in_reply_to": id}),
        );
        let mut v = fold(&[
            a,
            mark(2, kinds::READ, "curator"),
            mark(3, kinds::UNREAD, "curator"),
            mark(4, kinds::READ, "refactor"),
            reply.clone(),
            ev(
                6,
                kinds::READ,
                "x",
                serde_json::json!({"message": "not-an-id"}),
            ),
            ev(
                7,
                kinds::READ,
                "bad name",
                serde_json::json!({"message": id}),
            ),
        ]);
        let now = Utc::now();
        assert_eq!(v.marks("curator", &id).unwrap().read, None);
        assert!(v.marks("refactor", &id).unwrap().read.is_some());
        // The broadcast reaches everyone but its sender, and curator directly.
        let f = Filter {
            unread: true,
            ..Filter::default()
        };
        assert_eq!(v.inbox("curator", &f, now).unwrap().len(), 1);
        assert_eq!(v.inbox("curator", &f, now).unwrap()[0].via, None);
        assert!(v.inbox("refactor", &f, now).unwrap().is_empty());
        assert_eq!(v.inbox("anyone", &f, now).unwrap().len(), 1);
        assert_eq!(v.inbox("weaver", &f, now).unwrap().len(), 1);
        assert_eq!(v.thread_of(&reply.id.to_hex()).unwrap(), id);
        assert_eq!(v.thread(&id).unwrap(), vec![id.clone(), reply.id.to_hex()]);
        assert_eq!(v.skipped(), 2);
        assert_eq!(v.messages(), 2);
        assert_eq!(v.sent("curator").unwrap()[0].id, reply.id.to_hex());
    }

    #[test]
    fn saved_partitions_load_lazily_and_fold_on() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&[]);
        let a = send(1, "weaver", &["curator"], serde_json::json!({}));
        let b = send(2, "weaver", &["refactor"], serde_json::json!({}));
        let v = fold(&[a.clone(), b.clone()]);
        v.save(dir.path(), &stamp).unwrap();
        // Whole-view files must carry the stamp of the cache's meta, which the cache writes after the view.
        save_json(dir.path(), "meta.json", &serde_json::json!({}), &stamp).unwrap();
        let mut loaded = MailView::load(dir.path()).unwrap();
        assert_eq!(loaded.messages(), 2);
        assert!(
            loaded.boxes.loaded.is_empty(),
            "nothing read before it is asked for"
        );
        let read = ev(
            3,
            kinds::READ,
            "curator",
            serde_json::json!({"message": a.id.to_hex()}),
        );
        loaded.apply(&read);
        assert_eq!(
            loaded.boxes.loaded.len(),
            1,
            "only curator's box was touched"
        );
        loaded.save(dir.path(), &stamp).unwrap();
        let mut again = MailView::load(dir.path()).unwrap();
        let now = Utc::now();
        assert!(again
            .marks("curator", &a.id.to_hex())
            .unwrap()
            .read
            .is_some());
        assert_eq!(
            again
                .inbox("refactor", &Filter::default(), now)
                .unwrap()
                .len(),
            1
        );
        assert_eq!(again.resolve(&b.id.to_hex()[..10]).unwrap().0, b.id);
        assert_eq!(again.sent("weaver").unwrap().len(), 2);
        // A damaged partition is an error the caller can rebuild from, not a wrong answer.
        std::fs::write(dir.path().join("boxes/curator.json"), b"{").unwrap();
        let mut broken = MailView::load(dir.path()).unwrap();
        assert!(matches!(
            broken.marks("curator", &a.id.to_hex()),
            Err(Error::Corrupt { .. })
        ));
    }

    /// Issue 44: the weave page read every header (100,000 at the bench) to find the mails tagged `weave`.
    /// The tagged look-up must give the same mails, in the same order, while reading only the mailboxes that
    /// hold them: no sent list, no other persona's box.
    #[test]
    fn tagged_mails_are_found_without_reading_every_header() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&[]);
        let mut events = Vec::new();
        for i in 0..600u64 {
            let from = format!("p{:02}", i % 30);
            let to = format!("p{:02}", (i + 1) % 30);
            let mut e = send(i + 1, &from, &[to.as_str()], serde_json::json!({}));
            // Every 37th message is weave's, to one of two authors; others carry other tags.
            let tags: Vec<&str> = if i % 37 == 0 {
                vec!["weave"]
            } else if i % 5 == 0 {
                vec!["review", "weave-ish"]
            } else {
                vec![]
            };
            let weave = i % 37 == 0;
            let to = if weave {
                if i % 2 == 0 { "curator" } else { "refactor" }.to_owned()
            } else {
                to
            };
            e.event.data = serde_json::json!({"to": [to], "groups": {}, "subject": format!("s{i}"),
                "body": "", "type": "task", "priority": "normal", "tags": tags});
            e.event.nonce = Some(format!("{i}"));
            e.id = e.event.id().unwrap();
            events.push(e);
        }
        let v = fold(&events);
        v.save(dir.path(), &stamp).unwrap();
        save_json(dir.path(), "meta.json", &serde_json::json!({}), &stamp).unwrap();

        let mut old = MailView::load(dir.path()).unwrap();
        let mut expected: Vec<Header> = old
            .all_headers()
            .unwrap()
            .into_iter()
            .filter(|h| h.tags.iter().any(|t| t == "weave"))
            .collect();
        expected.reverse();
        expected.truncate(10);
        assert_eq!(expected.len(), 10, "enough weave mails to cut at 10");

        let mut new = MailView::load(dir.path()).unwrap();
        let got = new.tagged("weave", 10).unwrap();
        assert_eq!(got, expected);
        assert!(new.sent.loaded.is_empty(), "no sent list read");
        let boxes: Vec<&String> = new.boxes.loaded.keys().collect();
        assert_eq!(
            boxes,
            ["curator", "refactor"],
            "only the holders' boxes read"
        );
        assert!(new.tagged("nothing", 10).unwrap().is_empty());
    }

    #[test]
    fn unique_len_counts_nibbles() {
        let c = ObjectId::null(gix::hash::Kind::Sha1);
        let mut a = [0u8; 32];
        let mut b = [0u8; 32];
        a[0] = 0xab;
        b[0] = 0xab;
        a[4] = 0x10;
        b[4] = 0x1f;
        assert_eq!(unique_len(&[(EventId(a), c), (EventId(b), c)]), 10);
        assert_eq!(unique_len(&[(EventId(a), c)]), 7);
        assert_eq!(hex_bound("ab1", b'0')[..2], [0xab, 0x10]);
    }

    /// Trash, archive and tags are marks of their own (mutation testing found no test of them): each kind
    /// sets or clears only its mark, `untag` removes only its tag, the time of the first `archive` is kept,
    /// and a tag that is not a valid name is skipped and counted.
    #[test]
    fn trash_archive_and_tags_set_and_clear_their_own_marks() {
        let a = send(1, "weaver", &["curator"], serde_json::json!({}));
        let id = a.id.to_hex();
        let mark = |l, kind, tag: Option<&str>| {
            let mut data = serde_json::json!({ "message": id });
            if let Some(t) = tag {
                data["tag"] = t.into();
            }
            ev(l, kind, "curator", data)
        };
        let set = [
            a.clone(),
            mark(2, kinds::TRASH, None),
            mark(3, kinds::ARCHIVE, None),
            mark(4, kinds::TAG, Some("urgent")),
            mark(5, kinds::TAG, Some("later")),
            mark(6, kinds::TAG, Some("bad name")),
            mark(7, kinds::ARCHIVE, None),
        ];
        let mut v = fold(&set);
        let m = v.marks("curator", &id).unwrap();
        assert!(m.trashed);
        assert_eq!(m.archived.as_deref(), Some("2026-01-28T15:03:00.000Z"));
        assert_eq!(m.tags, ["later", "urgent"].map(String::from).into());
        assert_eq!(v.skipped(), 1, "the tag `bad name` is skipped");

        let mut cleared = set.to_vec();
        cleared.extend([
            mark(8, kinds::UNTRASH, None),
            mark(9, kinds::UNARCHIVE, None),
            mark(10, kinds::UNTAG, Some("urgent")),
        ]);
        let mut v = fold(&cleared);
        let m = v.marks("curator", &id).unwrap();
        assert!(!m.trashed);
        assert_eq!(m.archived, None);
        assert_eq!(m.tags, ["later"].map(String::from).into());
    }

    /// What the fold skips, and counts: a send to a recipient that is not a valid name, a send or a claim
    /// whose data does not decode, a claim or mark naming no message id. A `mail.*` kind this build does not
    /// know is neither applied nor counted (a later build's event).
    #[test]
    fn undecodable_mail_events_are_skipped_and_counted_unknown_kinds_ignored() {
        let a = send(1, "weaver", &["curator"], serde_json::json!({}));
        let mut v = fold(&[
            a.clone(),
            send(2, "weaver", &["bad name"], serde_json::json!({})),
            send(
                3,
                "weaver",
                &["curator"],
                serde_json::json!({"devs": ["bad name"]}),
            ),
            ev(
                4,
                kinds::SEND,
                "weaver",
                serde_json::json!({"to": "curator"}),
            ),
            ev(
                5,
                kinds::CLAIM,
                "curator",
                serde_json::json!({"message": "not-an-id"}),
            ),
            ev(
                6,
                kinds::CLAIM,
                "curator",
                serde_json::json!({"lock": true}),
            ),
        ]);
        assert_eq!(v.messages(), 1);
        assert_eq!(v.skipped(), 5);
        assert_eq!(
            v.inbox("curator", &Filter::default(), Utc::now())
                .unwrap()
                .len(),
            1
        );
        let v = fold(&[
            a,
            ev(
                2,
                "mail.future",
                "curator",
                serde_json::json!({"anything": 1}),
            ),
        ]);
        assert_eq!(v.skipped(), 0);
    }

    /// A broadcast reaches everyone but its sender, so the sender's claim on it does not count and a
    /// reader's does.
    #[test]
    fn a_broadcast_is_claimed_by_its_readers_not_its_sender() {
        let m = send(1, "weaver", &["__broadcast"], serde_json::json!({}));
        let id = m.id.to_hex();
        let claim = |l, who: &str| {
            ev(
                l,
                kinds::CLAIM,
                who,
                serde_json::json!({"message": id, "lock": true}),
            )
        };
        let mut v = fold(&[m.clone(), claim(2, "weaver"), claim(3, "dev")]);
        assert_eq!(v.meta(&id).unwrap().winner().unwrap().persona, "dev");
        assert_eq!(v.skipped(), 1);
    }

    /// A thread lists each message once, in order, however many replies it has; a message naming a
    /// `thread` that is no message id joins that thread without a root in its list.
    #[test]
    fn a_thread_lists_each_of_its_messages_once() {
        let a = send(1, "weaver", &["curator"], serde_json::json!({}));
        let id = a.id.to_hex();
        let reply = |l| {
            ev(
                l,
                kinds::SEND,
                "curator",
                serde_json::json!({"to": ["weaver"], "subject": format!("re{l}"),
                "body": "", "type": "response", "priority": "normal", "in_reply_to": id}),
            )
        };
        let (r1, r2) = (reply(2), reply(3));
        let named = ev(
            4,
            kinds::SEND,
            "curator",
            serde_json::json!({"to": ["weaver"], "subject": "x",
            "body": "", "type": "task", "priority": "normal", "thread": "sprint-7"}),
        );
        let mut v = fold(&[a, r1.clone(), r2.clone(), named.clone()]);
        assert_eq!(
            v.thread(&id).unwrap(),
            vec![id.clone(), r1.id.to_hex(), r2.id.to_hex()]
        );
        assert_eq!(v.thread("sprint-7").unwrap(), vec![named.id.to_hex()]);
    }

    /// A partition that cannot be read while folding breaks the view: later events are not applied on a
    /// guess, and the view refuses to be saved (the cache is then rebuilt from the log).
    #[test]
    fn a_partition_that_fails_to_load_while_folding_breaks_the_view() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&[]);
        let a = send(1, "weaver", &["curator"], serde_json::json!({}));
        fold(std::slice::from_ref(&a))
            .save(dir.path(), &stamp)
            .unwrap();
        save_json(dir.path(), "meta.json", &serde_json::json!({}), &stamp).unwrap();
        std::fs::write(dir.path().join("boxes/curator.json"), b"{").unwrap();
        let mut v = MailView::load(dir.path()).unwrap();
        v.apply(&ev(
            2,
            kinds::READ,
            "curator",
            serde_json::json!({"message": a.id.to_hex()}),
        ));
        assert!(v.broken.as_deref().is_some_and(|why| !why.is_empty()));
        assert!(v.save(dir.path(), &stamp).is_err());
    }
}
