//! Helpers the event log's unit tests share (built for tests only).

use gix::ObjectId;

use super::{Event, NewEvent};

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
