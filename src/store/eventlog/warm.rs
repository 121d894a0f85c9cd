//! Projections kept in memory between the calls of a long-running frontend (`git jules mcp`, `web`), so that a
//! read does not decode its cache files again when the log has not moved.
//!
//! A projection is a function of the events reachable from the log's tips, so a view folded at tips `T`
//! answers for `T` and nothing else: an entry is handed out only when the tips it was stored under are
//! exactly the current ones (any append, sync or fetch moves them), and a view is stored only when the tips
//! did not move while it was read. An entry is taken out while in use, so concurrent calls never share one;
//! a call that finds none reads the cache as any command does. One-shot commands make none (nothing would
//! read the entry again); a cache, like the files under `.git/jules/cache`: no answer depends on it.

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use gix::ObjectId;

type Entry = (Vec<ObjectId>, Box<dyn Any + Send>);

/// The views a long-running frontend keeps between its calls, by cache directory. Owned by the frontend
/// (its `Workspace`), handed to the logs it opens ([`super::Log::with_warm`]); nothing in the process is
/// warm unless a frontend made one of these.
#[derive(Default)]
pub struct WarmViews {
    views: Mutex<HashMap<PathBuf, Entry>>,
}

impl WarmViews {
    pub fn new() -> Self {
        Self::default()
    }

    /// The view kept for the cache directory `dir` if it was folded at exactly `tips`; it leaves the store.
    pub fn take<P: Any + Send>(&self, dir: &Path, tips: &[ObjectId]) -> Option<P> {
        let (kept_tips, view) = self.views.lock().ok()?.remove(dir)?;
        if kept_tips != tips {
            return None;
        }
        view.downcast::<P>().ok().map(|b| *b)
    }

    /// How many views are kept.
    pub fn len(&self) -> usize {
        self.views.lock().map(|v| v.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keep `view`, folded at `tips`, for the next call on `dir` (replacing what was kept).
    pub fn put<P: Any + Send>(&self, dir: PathBuf, tips: Vec<ObjectId>, view: P) {
        if let Ok(mut v) = self.views.lock() {
            v.insert(dir, (tips, Box::new(view)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_is_handed_out_only_for_the_tips_it_was_folded_at() {
        let warm = WarmViews::new();
        let dir = PathBuf::from("/nonexistent/warm-test");
        let (a, b) = (
            ObjectId::null(gix::hash::Kind::Sha1),
            ObjectId::empty_tree(gix::hash::Kind::Sha1),
        );
        warm.put(dir.clone(), vec![a], String::from("at a"));
        assert_eq!(
            warm.take::<String>(&dir, &[b]),
            None,
            "other tips: no view, and it is dropped"
        );
        assert_eq!(warm.take::<String>(&dir, &[a]), None);
        warm.put(dir.clone(), vec![a], String::from("at a"));
        assert_eq!(
            warm.take::<u32>(&dir, &[a]),
            None,
            "another projection type never matches"
        );
        warm.put(dir.clone(), vec![a], String::from("at a"));
        assert_eq!(warm.take::<String>(&dir, &[a]).as_deref(), Some("at a"));
        assert_eq!(
            warm.take::<String>(&dir, &[a]),
            None,
            "taken out while in use"
        );
    }
}
