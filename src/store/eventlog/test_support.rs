//! Helpers the event log's unit tests share (built for tests only).

use gix::ObjectId;

use super::{Event, EventId, NewEvent};

/// Event number `i` of kind `t.x` by `a`: distinct payloads, so distinct ids.
pub fn event(i: u64) -> NewEvent {
    NewEvent::new(Event::new("t.x", "a", serde_json::json!({ "i": i })))
}

/// A commit with `message` on `parents` and the empty tree, written as it is: an event commit when the
/// message is one, anything else otherwise (what a damaged or hostile log holds).
pub fn commit_on(repo: &gix::Repository, message: &[u8], parents: Vec<ObjectId>) -> ObjectId {
    let sig = crate::kit::repo::committer(repo);
    crate::store::loose::write(
        repo,
        &gix::objs::Commit {
            tree: crate::store::loose::empty_tree(repo).unwrap(),
            parents: parents.into_iter().collect(),
            author: sig.clone(),
            committer: sig,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        },
    )
    .unwrap()
}

/// The commit message of an event by `actor` (`t.x`, clock 1), signed with `key` in the events' namespace
/// over `signed` (the event's own JSON when `None`: a signature over other bytes is a bad one); with its id.
pub fn signed_event_message(
    actor: &str,
    key: Option<&ssh_key::PrivateKey>,
    signed: Option<&[u8]>,
) -> (EventId, Vec<u8>) {
    let e = Event::new("t.x", actor, serde_json::json!({ "n": 1 }));
    let canonical = e.canonical().unwrap();
    let id = EventId::of(&canonical);
    let sig = key.map(|k| {
        crate::store::sign::keys::sign_in(
            k,
            crate::store::sign::NAMESPACE,
            signed.unwrap_or(&canonical),
        )
        .unwrap()
    });
    let msg = super::event::event_message(&e.kind, &canonical, &id, 1, sig.as_deref());
    (id, msg)
}
