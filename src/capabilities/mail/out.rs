//! The JSON shapes of mail (docs/mail.md, version 1) and the typed reads that fill them from the view: a
//! mailbox listing, what a persona sent, one message, a thread. Private to mail: the use cases
//! (`super::api`) call these and re-export the shapes, so the CLI, the MCP server and the web view serialise
//! the same values from the same calls.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;

use super::ops::{self, Message};
use super::view::{Claim, Filter, Header, MailView, Marks};
use crate::kit::error::{Error, Result};
use crate::store::eventlog::{EventId, Log, PayloadRef};

/// The one version of every JSON document (defined once, in the crate root).
pub use crate::JSON_VERSION;

/// A persona's state of a message, in JSON.
#[derive(Debug, Clone, Serialize)]
pub struct StateOut {
    pub persona: String,
    pub unread: bool,
    pub read_at: Option<String>,
    pub tags: Vec<String>,
    pub trashed: bool,
    pub archived: bool,
}

impl StateOut {
    pub fn new(persona: &str, m: &Marks) -> Self {
        StateOut {
            persona: persona.to_owned(),
            unread: m.read.is_none(),
            read_at: m.read.clone(),
            tags: m.tags.iter().cloned().collect(),
            trashed: m.trashed,
            archived: m.archived.is_some(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct FileOut {
    pub name: String,
    pub size: u64,
}

/// A message in JSON: the same shape in every listing; `body` only where the body is shown.
#[derive(Debug, Clone, Serialize)]
pub struct MessageOut {
    pub id: String,
    pub short: String,
    pub from: String,
    pub to: Vec<String>,
    pub groups: BTreeMap<String, Vec<String>>,
    /// The group or `__broadcast` it reached the persona through (listings of a mailbox only).
    pub via: Option<String>,
    pub subject: String,
    #[serde(rename = "type")]
    pub msg_type: String,
    pub priority: String,
    pub time: String,
    pub tags: Vec<String>,
    pub needs_response: bool,
    pub in_reply_to: Option<String>,
    pub thread: String,
    pub expires: Option<String>,
    pub expired: bool,
    pub urls: Vec<String>,
    pub files: Vec<FileOut>,
    pub claim: Option<Claim>,
    pub state: Option<StateOut>,
    /// The send event's signature under the trust roots; `null` where nothing is verified (no trust file
    /// and no `jules.requireSigned`). Filled by the use cases (`sign_messages`).
    pub signature: Option<crate::store::sign::State>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
}

impl MessageOut {
    /// Whether `persona` received it (directly, through a group, or as a broadcast): what
    /// [`Header::reaches`] says, so a frontend offers marking only where marking is allowed.
    pub fn reaches(&self, persona: &str) -> bool {
        let broadcast = self.to.iter().any(|t| t == super::message::BROADCAST);
        (broadcast && self.from != persona)
            || super::recipients::personas(&self.to, &self.groups).contains(persona)
    }

    pub fn new(
        h: &Header,
        via: Option<String>,
        state: Option<StateOut>,
        body: Option<String>,
        abbrev: usize,
        now: DateTime<Utc>,
    ) -> Self {
        MessageOut {
            id: h.id.clone(),
            short: h.id[..abbrev.min(64)].to_owned(),
            from: h.from.clone(),
            to: h.to.clone(),
            groups: h.groups.clone(),
            via,
            subject: h.subject.clone(),
            msg_type: h.msg_type.clone(),
            priority: h.priority.to_string(),
            time: h.time.clone(),
            tags: h.tags.clone(),
            needs_response: h.needs_response,
            in_reply_to: h.in_reply_to.clone(),
            thread: h.thread().to_owned(),
            expires: h.expires.clone(),
            expired: h.is_expired(now),
            urls: h.urls.clone(),
            files: h.files.iter().map(file_out).collect(),
            claim: h.claim.clone(),
            state,
            signature: None,
            body,
        }
    }
}

fn file_out(p: &PayloadRef) -> FileOut {
    FileOut {
        name: p.name.clone(),
        size: p.size,
    }
}

/// Fill every message's `signature` (one verifier for the lot, cached by commit); nothing is read when the
/// repository has no trust roots and does not require signatures. Under `jules.requireSigned` a listing
/// drops what is not verified: such mail carries no authority, so it is not listed as from its sender
/// (`mail show` still shows it, marked).
pub fn sign_listing(
    repo: &gix::Repository,
    view: &mut MailView,
    messages: &mut Vec<MessageOut>,
) -> Result<()> {
    sign_messages(repo, view, messages)?;
    if crate::store::sign::verdict::require_signed(repo) {
        messages.retain(|m| m.signature.as_ref().is_some_and(|s| s.is_verified()));
    }
    Ok(())
}

/// Fill every message's `signature`, hiding nothing (one message shown by id, a thread).
pub fn sign_messages(
    repo: &gix::Repository,
    view: &mut MailView,
    messages: &mut [MessageOut],
) -> Result<()> {
    let ids: Vec<&str> = messages.iter().map(|m| m.id.as_str()).collect();
    if let Some(states) = signatures(repo, view, &ids)? {
        for (m, s) in messages.iter_mut().zip(states) {
            m.signature = s;
        }
    }
    Ok(())
}

/// The signature state of each message id (hex); `None` when the repository verifies nothing (no trust
/// file, no `jules.requireSigned`).
pub fn signatures(
    repo: &gix::Repository,
    view: &mut MailView,
    ids: &[&str],
) -> Result<Option<Vec<Option<crate::store::sign::State>>>> {
    if ids.is_empty() {
        return Ok(None);
    }
    let Some(mut verifier) = crate::store::eventlog::Verifier::open(repo)? else {
        return Ok(None);
    };
    // The states of messages listed under this very view and trust file: a warm listing reads them from
    // one small file and neither loads the view's id index nor the per-commit cache.
    let memo = match (view.stamp(), verifier.cache_dir()) {
        (Some(stamp), Some(dir)) => Some(ListedMemo::load(dir.join("listed"), stamp)),
        _ => None,
    };
    let mut out = Vec::with_capacity(ids.len());
    let mut learned = Vec::new();
    for id in ids {
        if let Some(s) = memo.as_ref().and_then(|m| m.get(id)) {
            out.push(s);
            continue;
        }
        let commit = EventId::from_hex(id)
            .map(|id| view.commit_of(&id))
            .transpose()?
            .flatten();
        let state = match commit {
            Some(c) => verifier.state(c)?,
            None => None,
        };
        learned.push((*id, state.clone()));
        out.push(state);
    }
    if let Some(m) = memo {
        m.save(&learned);
    }
    Ok(Some(out))
}

/// `.git/jules/signatures/<trust file blob>/listed`: the first line is the stamp of the mail view's tips,
/// then `<message id> <state | ->` per message a listing showed under that view (`-`: not a valid event).
/// Which commit carries a message first, and so its state, is fixed by the view's tips and the trust file;
/// a view at other tips starts the file again. Derived data: deleting it changes no answer.
struct ListedMemo {
    path: std::path::PathBuf,
    stamp: String,
    /// The file's text when its stamp is this view's (else empty, and the next save starts it again), and
    /// where each id's state is in it.
    text: String,
    /// (id, state) ranges of `text`, sorted by id: no allocation per line.
    index: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)>,
}

impl ListedMemo {
    fn load(path: std::path::PathBuf, stamp: String) -> Self {
        let mut memo = ListedMemo {
            path,
            stamp,
            text: String::new(),
            index: Vec::new(),
        };
        let Ok(text) = std::fs::read_to_string(&memo.path) else {
            return memo;
        };
        let Some((first, rest)) = text.split_once('\n') else {
            return memo;
        };
        if first != memo.stamp {
            return memo;
        }
        let mut at = first.len() + 1;
        for line in rest.split_inclusive('\n') {
            let start = at;
            at += line.len();
            // A torn last line is ignored.
            let Some(body) = line.strip_suffix('\n') else {
                continue;
            };
            if let Some((id, _)) = body.split_once(' ') {
                memo.index.push((
                    start..start + id.len(),
                    start + id.len() + 1..start + body.len(),
                ));
            }
        }
        // Two lines for one id (two writers at one view) hold the same state: either may be found.
        memo.index
            .sort_by(|a, b| text[a.0.clone()].cmp(&text[b.0.clone()]));
        memo.text = text;
        memo
    }

    /// `Some(state)` when the id is in the memo (`Some(None)`: not a valid event).
    fn get(&self, id: &str) -> Option<Option<crate::store::sign::State>> {
        let i = self
            .index
            .binary_search_by(|(k, _)| self.text[k.clone()].cmp(id))
            .ok()?;
        match &self.text[self.index[i].1.clone()] {
            "-" => Some(None),
            s => crate::store::sign::State::decode(s).map(Some),
        }
    }

    /// Add what was learned. The file is always replaced whole (never appended to): a reader at other
    /// tips may have started it again meanwhile, and lines of two views must never mix. Two writers at
    /// once may lose each other's lines, which only costs a lookup next time.
    fn save(self, learned: &[(&str, Option<crate::store::sign::State>)]) {
        use std::io::Write;
        if learned.is_empty() {
            return;
        }
        let mut text = if self.text.is_empty() {
            format!("{}\n", self.stamp)
        } else {
            self.text
        };
        for (id, state) in learned {
            let s = state
                .as_ref()
                .map_or_else(|| "-".to_owned(), |s| s.encode());
            text.push_str(&format!("{id} {s}\n"));
        }
        let Some(dir) = self.path.parent() else {
            return;
        };
        let _ = std::fs::create_dir_all(dir);
        if let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) {
            if tmp.write_all(text.as_bytes()).is_ok() {
                let _ = tmp.persist(&self.path);
            }
        }
    }
}

/// A listing document: `inbox`, `sent`, `thread`, `wait`.
#[derive(Debug, Clone, Serialize)]
pub struct ListOut {
    pub version: u32,
    pub persona: Option<String>,
    pub messages: Vec<MessageOut>,
}

/// A persona's mailbox as listed by `mail inbox`.
pub fn inbox(
    view: &mut MailView,
    persona: &str,
    filter: &Filter,
    now: DateTime<Utc>,
) -> Result<ListOut> {
    // Straight from the borrowed headers to the document: a long listing is not cloned twice.
    let abbrev = view.abbrev()?;
    let messages = view.inbox_map(persona, filter, now, |h, via, marks| {
        let state = Some(StateOut::new(persona, marks));
        MessageOut::new(h, via.cloned(), state, None, abbrev, now)
    })?;
    Ok(ListOut {
        version: JSON_VERSION,
        persona: Some(persona.to_owned()),
        messages,
    })
}

/// What `persona` sent, newest first, at most `limit`.
pub fn sent(
    view: &mut MailView,
    persona: &str,
    limit: Option<usize>,
    now: DateTime<Utc>,
) -> Result<ListOut> {
    let mut headers = view.sent(persona)?;
    if let Some(l) = limit {
        headers.truncate(l);
    }
    let abbrev = view.abbrev()?;
    Ok(ListOut {
        version: JSON_VERSION,
        persona: Some(persona.to_owned()),
        messages: headers
            .iter()
            .map(|h| MessageOut::new(h, None, None, None, abbrev, now))
            .collect(),
    })
}

/// One message with its body and, when `persona` received it, that persona's state of it.
pub fn detail(
    view: &mut MailView,
    msg: &Message,
    persona: Option<&str>,
    now: DateTime<Utc>,
) -> Result<MessageOut> {
    let h = msg.header(view)?;
    // Only a recipient has a state of the message (the sender of a direct message has none).
    let state = match persona {
        Some(p) if h.reaches(p) => Some(StateOut::new(p, &view.marks(p, &h.id)?)),
        _ => None,
    };
    let abbrev = view.abbrev()?;
    Ok(MessageOut::new(
        &h,
        None,
        state,
        Some(msg.data.body.clone()),
        abbrev,
        now,
    ))
}

/// The whole conversation `id` belongs to, in the log's order: `id` is a message id (or unique prefix) or
/// a thread name.
pub fn thread(
    log: &Log<'_>,
    view: &mut MailView,
    id: &str,
    persona: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Vec<MessageOut>> {
    // A message id (or prefix) names its thread; anything else, hex-looking names included, is a thread
    // name when such a thread exists.
    let key = match view.resolve(id) {
        Ok((eid, _)) => view.thread_of(&eid.to_hex())?,
        Err(e @ (Error::NotFound { .. } | Error::Usage(_))) => {
            if view.thread(id)?.is_empty() {
                return Err(e);
            }
            id.to_owned()
        }
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for m in view.thread(&key)? {
        let Some(commit) = EventId::from_hex(&m).and_then(|eid| view.commit_of(&eid).transpose())
        else {
            continue;
        };
        let msg = ops::load_message(log.repo(), commit?)?;
        out.push(detail(view, &msg, persona, now)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::ListedMemo;
    use crate::store::sign::State;

    #[test]
    fn the_listed_memo_holds_one_views_states_and_starts_again_for_another() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("listed");
        let verified = State::Verified {
            key: "SHA256:k".into(),
            persona: "alice".into(),
        };
        let memo = ListedMemo::load(path.clone(), "s1".into());
        assert_eq!(memo.get("a"), None);
        memo.save(&[("a", Some(verified.clone())), ("b", None)]);
        let memo = ListedMemo::load(path.clone(), "s1".into());
        assert_eq!(memo.get("a"), Some(Some(verified.clone())));
        assert_eq!(
            memo.get("b"),
            Some(None),
            "not a valid event is remembered too"
        );
        memo.save(&[("c", Some(State::Unsigned))]);
        let memo = ListedMemo::load(path.clone(), "s1".into());
        assert_eq!(memo.get("c"), Some(Some(State::Unsigned)));
        assert!(memo.get("a").is_some(), "lines are kept when adding");
        // Another view: nothing of the first counts, and saving starts the file again.
        let other = ListedMemo::load(path.clone(), "s2".into());
        assert_eq!(other.get("a"), None);
        other.save(&[("d", Some(State::BadSignature))]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, "s2\nd b\n");
        // A torn last line is ignored.
        std::fs::write(&path, "s2\nd b\ne u").unwrap();
        let memo = ListedMemo::load(path, "s2".into());
        assert_eq!(memo.get("d"), Some(Some(State::BadSignature)));
        assert_eq!(memo.get("e"), None);
    }
}
