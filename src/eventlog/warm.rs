//! Projections kept in memory between the calls of a long-running process (`git jules mcp`), so that a
//! read does not decode its cache files again when the log has not moved.
//!
//! A projection is a function of the events reachable from the log's tips, so a view folded at tips `T`
//! answers for `T` and nothing else: an entry is handed out only when the tips it was stored under are
//! exactly the current ones (any append, sync or fetch moves them), and a view is stored only when the tips
//! did not move while it was read. An entry is taken out while in use, so concurrent calls never share one;
//! a call that finds none reads the cache as any command does. Off in one-shot commands (nothing would read
//! the entry again); a cache, like the files under `.git/jules/cache`: no answer depends on it.

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use gix::ObjectId;

static ENABLED: AtomicBool = AtomicBool::new(false);

type Entry = (Vec<ObjectId>, Box<dyn Any + Send>);

fn views() -> &'static Mutex<HashMap<PathBuf, Entry>> {
    static VIEWS: OnceLock<Mutex<HashMap<PathBuf, Entry>>> = OnceLock::new();
    VIEWS.get_or_init(Default::default)
}

/// Keep views warm in this process (the MCP server turns it on at start).
pub fn keep_warm(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
    if !on {
        if let Ok(mut v) = views().lock() {
            v.clear();
        }
    }
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The view kept for the cache directory `dir` if it was folded at exactly `tips`; it leaves the store.
pub fn take<P: Any + Send>(dir: &Path, tips: &[ObjectId]) -> Option<P> {
    if !enabled() {
        return None;
    }
    let (kept_tips, view) = views().lock().ok()?.remove(dir)?;
    if kept_tips != tips {
        return None;
    }
    view.downcast::<P>().ok().map(|b| *b)
}

/// Keep `view`, folded at `tips`, for the next call on `dir` (replacing what was kept).
pub fn put<P: Any + Send>(dir: PathBuf, tips: Vec<ObjectId>, view: P) {
    if !enabled() {
        return;
    }
    if let Ok(mut v) = views().lock() {
        v.insert(dir, (tips, Box::new(view)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_handed_out_only_for_the_tips_it_was_folded_at() {
        keep_warm(true);
        let dir = PathBuf::from("/nonexistent/warm-test");
        let (a, b) = (
            ObjectId::null(gix::hash::Kind::Sha1),
            ObjectId::empty_tree(gix::hash::Kind::Sha1),
        );
        put(dir.clone(), vec![a], String::from("at a"));
        assert_eq!(
            take::<String>(&dir, &[b]),
            None,
            "other tips: no view, and it is dropped"
        );
        assert_eq!(take::<String>(&dir, &[a]), None);
        put(dir.clone(), vec![a], String::from("at a"));
        assert_eq!(
            take::<u32>(&dir, &[a]),
            None,
            "another projection type never matches"
        );
        put(dir.clone(), vec![a], String::from("at a"));
        assert_eq!(take::<String>(&dir, &[a]).as_deref(), Some("at a"));
        assert_eq!(take::<String>(&dir, &[a]), None, "taken out while in use");
    }
}
