//! No push without news (issue 29): whether the local copy of a ref holds an event no ref of the remote
//! holds, answered from the join's own walk, the memo of the last answer for the same commits, or a walk;
//! and whether that news is urgent (it may not wait for the push budget).

use gix::ObjectId;

use super::view::{Ref, Seen};
use crate::kit::error::Result;
use crate::store::refs;

/// The last "no news" answer for one ref: a local tip and the remote commits that were found to hold every
/// event it holds, in `.git/jules/held/<ref>` (the tip, then the remote commits sorted, one id a line).
///
/// A cache in the brief's sense: the answer depends only on those commits, so when the local tip and the
/// remote commits are exactly the remembered ones the answer is the remembered one, and anything else asks the
/// graph again. Without it every idle sync of a clone whose local tip is its own join (never pushed: it holds
/// no news) walked the history below a hundred writer refs to prove the same thing again (issue 29).
pub(super) struct HeldMemo {
    path: std::path::PathBuf,
    /// The file's text, read once (a sync may ask, then remember).
    text: std::cell::OnceCell<Option<String>>,
}

impl HeldMemo {
    pub(super) fn of(repo: &gix::Repository, name: &str) -> Self {
        HeldMemo {
            path: crate::kit::repo::jules_dir(repo)
                .join("held")
                .join(name.trim_start_matches("refs/").replace('/', "%")),
            text: std::cell::OnceCell::new(),
        }
    }

    fn text(local: ObjectId, remotes: &[ObjectId]) -> String {
        let mut remotes = remotes.to_vec();
        remotes.sort();
        remotes.dedup();
        std::iter::once(local)
            .chain(remotes)
            .map(|id| format!("{id}\n"))
            .collect()
    }

    fn stored(&self) -> Option<&str> {
        self.text
            .get_or_init(|| std::fs::read_to_string(&self.path).ok())
            .as_deref()
    }

    pub(super) fn holds(&self, local: ObjectId, remotes: &[ObjectId]) -> bool {
        self.stored() == Some(Self::text(local, remotes).as_str())
    }

    pub(super) fn remember(&self, local: ObjectId, remotes: &[ObjectId]) {
        let text = Self::text(local, remotes);
        if self.stored() == Some(text.as_str()) {
            return;
        }
        // Only a hint: losing it costs one walk next time.
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir).and_then(|_| {
                crate::store::eventlog::cache::write_atomically(&self.path, text.as_bytes())
            });
        }
    }
}

/// An event that may not wait for the push interval: its data says `"priority": "urgent"` (urgent mail).
pub(super) fn is_urgent(e: &crate::store::eventlog::LoggedEvent) -> bool {
    e.event.data.get("priority").and_then(|p| p.as_str()) == Some("urgent")
}

/// Whether the local copy of `name` holds an event that no ref of the remote holds (or the shared ref is
/// missing there): only then does a sync publish. Folding other clones' writer refs into the shared ref is
/// cleanup that rides along with the next sync that has news, so a fleet that has converged, or that is only
/// catching up, pushes nothing. `local_held`: the join's own walk found the local tip inside a remote tip.
/// News that is urgent sets `urgent`; an answer of no news for the joined `tip` is remembered, so that idle
/// syncs answer from the memo, not a walk.
pub(super) fn has_news(
    ref_: Ref<'_, '_>,
    s: &Seen,
    tip: ObjectId,
    local_held: bool,
    remote_commits: &[ObjectId],
    urgent: &mut bool,
) -> Result<bool> {
    let Ref { repo, name, log } = ref_;
    let published = HeldMemo::of(repo, name);
    let news = match (s.local, log) {
        (None, _) => false,
        // The remote lacks the shared ref: news, and urgent if an event no writer ref holds says so (the
        // first urgent mail of a log must not wait for the push interval either).
        (Some(local), log) if s.main.is_none() => {
            if let Some(log) = log {
                let fresh = log.scan(&[local], remote_commits, false)?.events;
                *urgent |= fresh.iter().any(is_urgent);
            }
            true
        }
        (Some(local), _) if remote_commits.contains(&local) => false,
        // The join's own walk found the local tip inside a remote tip.
        _ if local_held => false,
        // The last sync found this local tip held by these very remote commits: the same question.
        (Some(local), _) if published.holds(local, remote_commits) => false,
        (Some(local), Some(log)) => {
            let fresh = log.scan(&[local], remote_commits, false)?.events;
            *urgent |= fresh.iter().any(is_urgent);
            !fresh.is_empty()
        }
        (Some(local), None) => {
            let mut all = vec![local];
            all.extend(remote_commits);
            refs::independent(repo, &all)?.contains(&local)
        }
    };
    if !news && s.local.is_some() && !remote_commits.contains(&tip) {
        // The joined tip adds to the local copy only the remote's own events: it holds nothing the
        // remote lacks either. Remembered so that idle syncs answer from the memo, not a walk.
        published.remember(tip, remote_commits);
    }
    Ok(news)
}
