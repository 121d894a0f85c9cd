//! What a sync reports: per ref what happened and where the union was published, the remote refs it left
//! aside, and what it held back; and the tally its rounds keep to build that report.

use std::collections::BTreeMap;

use serde::Serialize;

/// What happened to one ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    UpToDate,
    /// The remote had it and we did not.
    Created,
    /// The remote was ahead; we moved forward.
    FastForwarded,
    /// We were ahead; we pushed.
    Pushed,
    /// The remote had lost the log (deleted, replaced, or not a commit): our copy was pushed again.
    Republished,
    /// Both had news: joined (a merge commit) and pushed.
    Merged,
}

impl Action {
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::UpToDate => "up-to-date",
            Action::Created => "created",
            Action::FastForwarded => "fast-forwarded",
            Action::Pushed => "pushed",
            Action::Republished => "republished",
            Action::Merged => "merged",
        }
    }
}

/// Where a sync published a ref's union.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Published {
    /// Nothing needed publishing.
    Nothing,
    /// The shared ref itself (the fold landed).
    Shared,
    /// This clone's writer ref (somebody else folded first).
    Writer,
}

#[derive(Debug, Clone, Serialize)]
pub struct RefSync {
    pub name: String,
    pub action: Action,
    pub tip: String,
    pub published: Published,
}

/// A remote ref that was not used, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    pub name: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct SyncReport {
    /// Push attempts this sync made, refused ones included (what the push budget spends; not reported).
    #[serde(skip)]
    pub(crate) push_attempts: u64,
    pub remote: String,
    pub rounds: u32,
    pub refs: Vec<RefSync>,
    /// Writer refs deleted on the remote because the shared ref now holds their events.
    pub folded: usize,
    /// Remote refs under `refs/jules/*` or `refs/notes/jules/*` that do not point at a commit.
    pub skipped: Vec<Skipped>,
    /// Remote-tracking refs removed because the remote no longer has them.
    pub pruned: Vec<String>,
    /// Commits taken in from the remote that are not valid events (readers skip them; `log fsck` names them).
    pub invalid: Vec<Skipped>,
    /// Set when this clone had news but its push interval (`jules.sync.minPushInterval`) had not run out: the
    /// local refs hold the union, and the news waits for a later sync; seconds until a push is allowed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub push_deferred_secs: Option<u64>,
    /// Series version refs (`refs/jules/series/*`) pushed by this sync.
    pub series_pushed: Vec<String>,
    /// Series version refs the remote refused (a rewrite or a forged version the guard stops), with its reason:
    /// the sync failed for them (exit 2) and they stay unpublished.
    pub series_refused: Vec<crate::store::version_refs::Skipped>,
    /// Series version refs waiting for the push interval (`push_deferred_secs`): the next sync allowed to push
    /// carries them.
    pub series_deferred: Vec<String>,
    /// Events this sync did not publish because the remote refuses them (its guard requires signed events):
    /// everything else was published without them (`crate::store::heldback`); `log held-back drop|resign` settles
    /// them.
    pub held_back: Vec<crate::store::heldback::HeldBack>,
}

impl SyncReport {
    pub fn changed(&self) -> bool {
        self.refs.iter().any(|r| r.action != Action::UpToDate)
    }
}

/// What the rounds of one sync gather for its report, carried from round to round.
pub(super) struct Tally {
    remote: String,
    /// The strongest action seen per ref across rounds.
    pub results: BTreeMap<String, RefSync>,
    pub pruned: Vec<String>,
    pub folded: usize,
    pub invalid: Vec<Skipped>,
    /// Push attempts, for the budget: a refused one was counted by the forge as well.
    pub attempts: u64,
}

impl Tally {
    pub fn new(remote: &str) -> Self {
        Tally {
            remote: remote.to_owned(),
            results: BTreeMap::new(),
            pruned: Vec::new(),
            folded: 0,
            invalid: Vec::new(),
            attempts: 0,
        }
    }

    /// Take in what one round decided. Keep the strongest action seen per ref across rounds: a ref merged in
    /// round 1 whose join was pushed in round 2 was merged, not pushed.
    pub fn take_round(&mut self, round: u32, round_results: Vec<RefSync>) {
        for r in round_results {
            // Round 0 only moved local refs; what it would publish is decided after a fetch.
            if round == 0
                && matches!(
                    r.action,
                    Action::UpToDate | Action::Pushed | Action::Republished
                )
            {
                continue;
            }
            match self.results.get_mut(&r.name) {
                Some(x) => {
                    x.tip = r.tip;
                    x.action = x.action.max(r.action);
                }
                None => {
                    self.results.insert(r.name.clone(), r);
                }
            }
        }
    }

    /// After a refused push: the refs this round said it pushed were not pushed (what the rounds before said
    /// stands).
    pub fn unsay_pushes(&mut self, before: &BTreeMap<String, RefSync>) {
        for (name, r) in self.results.iter_mut() {
            if matches!(r.action, Action::Pushed | Action::Republished) {
                r.action = before.get(name).map_or(Action::UpToDate, |b| b.action);
            }
        }
    }

    /// The report after `round`, with that round's skipped refs and held-back events; no push attempts
    /// (the caller that pushed says how many).
    pub fn report(
        &mut self,
        round: u32,
        skipped: Vec<Skipped>,
        held_back: Vec<crate::store::heldback::HeldBack>,
    ) -> SyncReport {
        SyncReport {
            push_attempts: 0,
            remote: self.remote.clone(),
            rounds: round,
            refs: std::mem::take(&mut self.results).into_values().collect(),
            folded: self.folded,
            skipped,
            pruned: self.pruned.clone(),
            invalid: self.invalid.clone(),
            push_deferred_secs: None,
            series_pushed: Vec::new(),
            series_refused: Vec::new(),
            series_deferred: Vec::new(),
            held_back,
        }
    }
}
