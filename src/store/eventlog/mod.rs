//! The convergent, append-only event log stored as commits on a git ref.
//!
//! Every event is one commit on the log's ref (`refs/jules/mail`, `refs/jules/state`, …) whose message frames
//! the event's canonical JSON; merges of divergent copies are commits with two parents and no event.
//! The set of events is the set of event commits reachable from the ref (and, when the user fetched, from its
//! remote-tracking copies `refs/remotes/<remote>/jules/<name>`); their total order is (Lamport clock, id),
//! which respects the commit DAG and is the same on every replica. Nothing here prints: callers get warnings
//! (invalid commits) as data.
//!
//! - [`event`]: the event, its canonical form and id, the commit framing.
//! - `append`: compare-and-swap appends with bounded, jittered retries; batches.
//! - `read`: walking, decoding and ordering.
//! - [`cache`]: projections folded over the ordered events, cached under `.git/jules/cache/`.
//! - [`checkpoint`]: projection states stored on the log (notes), so a fresh clone replays only the tail.
//! - `merge`: joining two divergent tips.
//! - `fsck`: strict validation of every commit.
//! - [`signed`]: the verification state of event commits under the trust roots, cached per commit.
//! - [`stats`]: a small projection of any log.

mod append;
pub mod cache;
pub mod checkpoint;
pub mod event;
mod fsck;
mod merge;
mod packed;
pub mod passed_over;
mod project;
#[cfg(test)]
mod prop_tests;
mod read;
mod replay;
pub mod signed;
pub mod stats;
#[cfg(test)]
pub(crate) mod test_support;
mod walk;
pub mod warm;

pub use append::{Appended, NewEvent};
pub use event::{Event, EventId, PayloadRef, FORMAT_VERSION, MAX_EVENT_BYTES};
pub use fsck::FsckReport;
pub use merge::MergeOutcome;
pub use read::{order, IdSet, InvalidCommit, LoggedEvent, Scan};
pub use replay::{Replayed, SPILL_AT};
pub use signed::Verifier;

use gix::ObjectId;

use crate::kit::error::{Error, Result};

/// The namespace of all logs.
pub const LOG_REF_PREFIX: &str = "refs/jules/";

/// A log, named by its full ref name.
pub struct Log<'r> {
    pub(crate) repo: &'r gix::Repository,
    pub(crate) name: String,
    /// The views its frontend keeps warm between calls (none in one-shot commands).
    warm: Option<std::sync::Arc<warm::WarmViews>>,
    /// Where its caller records the checkpoints its reads pass over (see [`checkpoint::PassedOver`]).
    passed_over: Option<std::sync::Arc<checkpoint::PassedOver>>,
}

impl<'r> Log<'r> {
    /// This log with the views its frontend keeps warm (see [`warm::WarmViews`]).
    pub fn with_warm(mut self, warm: Option<std::sync::Arc<warm::WarmViews>>) -> Self {
        self.warm = warm;
        self
    }

    /// This log recording the checkpoints its reads pass over in its caller's `record`.
    pub fn with_passed_over(
        mut self,
        record: Option<std::sync::Arc<checkpoint::PassedOver>>,
    ) -> Self {
        self.passed_over = record;
        self
    }

    /// The warm views, when its frontend keeps any.
    pub fn warm(&self) -> Option<&warm::WarmViews> {
        self.warm.as_deref()
    }

    /// Open the log `name`: a full ref (`refs/jules/mail`) or a short one (`mail`).
    pub fn open(repo: &'r gix::Repository, name: &str) -> Result<Self> {
        let full = if name.starts_with("refs/") {
            name.to_owned()
        } else {
            format!("{LOG_REF_PREFIX}{name}")
        };
        let short = full.strip_prefix(LOG_REF_PREFIX).ok_or_else(|| {
            Error::usage(format!("log refs live under {LOG_REF_PREFIX}, not {full}"))
        })?;
        crate::kit::names::validate_ref_component(short)?;
        if short == "writers" || short.starts_with(crate::store::refs::WRITERS) {
            return Err(Error::usage(format!(
                "{full}: `writers/` holds the per-writer refs of the sync layout, not a log"
            )));
        }
        Ok(Log {
            repo,
            name: full,
            warm: None,
            passed_over: None,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name below `refs/jules/`, e.g. `mail`.
    pub fn short_name(&self) -> &str {
        self.name.strip_prefix(LOG_REF_PREFIX).unwrap_or(&self.name)
    }

    /// Whether reads of this log replay it whole: no cache, no checkpoint (`--full`; see
    /// [`cache::full_replay`]).
    pub fn full_replay(&self) -> bool {
        cache::full_replay(self.repo)
    }

    pub fn repo(&self) -> &'r gix::Repository {
        self.repo
    }

    /// The commit the local ref points at, if the log exists here.
    pub fn local_tip(&self) -> Result<Option<ObjectId>> {
        crate::store::refs::target(self.repo, &self.name)
    }

    /// The remote-tracking copies of this log that a fetch wrote (plain `git fetch` after `git jules init`, or
    /// sync): `refs/remotes/<remote>/jules/<log>` and the writer refs
    /// `refs/remotes/<remote>/jules/writers/<log>/<writer>` (layout 2, see `crate::store::sync`). Refs that do not
    /// point at a commit are left out (see [`Log::unusable_tips`]).
    pub fn remote_tips(&self) -> Result<Vec<(String, ObjectId)>> {
        Ok(self
            .remote_refs()?
            .into_iter()
            .filter(|(_, id)| {
                crate::store::refs::object_kind(self.repo, *id) == Some(gix::object::Kind::Commit)
                    // A branch named jules/<log> has its remote-tracking ref here too: not a copy of the log.
                    && holds_log_history(self.repo, *id)
            })
            .collect())
    }

    /// Remote-tracking refs of this log that do not point at a commit (a hostile or broken remote): readers
    /// skip them, sync and `log fsck` name them.
    pub fn unusable_tips(&self) -> Result<Vec<(String, ObjectId)>> {
        let mut out: Vec<(String, ObjectId)> = self
            .remote_refs()?
            .into_iter()
            .filter(|(_, id)| {
                crate::store::refs::object_kind(self.repo, *id) != Some(gix::object::Kind::Commit)
            })
            .collect();
        if let Some(id) = self.local_tip()? {
            if crate::store::refs::object_kind(self.repo, id) != Some(gix::object::Kind::Commit) {
                out.insert(0, (self.name.clone(), id));
            }
        }
        Ok(out)
    }

    fn remote_refs(&self) -> Result<Vec<(String, ObjectId)>> {
        let short = self.short_name();
        let main = format!("jules/{short}");
        let writers = format!("jules/{}{short}/", crate::store::refs::WRITERS);
        let mut out = Vec::new();
        let platform = self.repo.references()?;
        for r in platform.prefixed("refs/remotes/")? {
            let r = r.map_err(|e| Error::wrap("listing remote refs", e))?;
            let name = r.name().as_bstr().to_string();
            // refs/remotes/<remote>/jules/<log> or …/jules/writers/<log>/<writer>, with a remote name free of
            // '/' (so that refs/remotes/<remote>/notes/jules/<x> never counts as a log).
            let Some((remote, rest)) = name
                .strip_prefix("refs/remotes/")
                .and_then(|r| r.split_once('/'))
            else {
                continue;
            };
            let ours = !remote.is_empty()
                && (rest == main
                    || rest
                        .strip_prefix(writers.as_str())
                        .is_some_and(|w| !w.is_empty() && !w.contains('/')));
            if ours {
                if let Some(id) = r.target().try_id() {
                    out.push((name, id.to_owned()));
                }
            }
        }
        out.sort();
        Ok(out)
    }

    /// Every tip whose events make up this replica's view: the local ref and its remote-tracking copies
    /// (writer refs included). The one entry point readers union.
    ///
    /// A local ref that does not name a commit (a missing object, a blob) is an error, not a tip to skip:
    /// only this repository writes it, so it is damage, and a reader that went on without it would answer
    /// as if the log were empty (no lease held: the pre-commit hook let every commit through). Remote-tracking
    /// copies that do not name a commit come from the remote and are skipped ([`Log::unusable_tips`]).
    pub fn tips(&self) -> Result<Vec<ObjectId>> {
        let mut tips = Vec::new();
        if let Some(id) = self.local_tip()? {
            if crate::store::refs::object_kind(self.repo, id) != Some(gix::object::Kind::Commit) {
                return Err(Error::Corrupt {
                    path: self.repo.git_dir().join(&self.name),
                    message: format!(
                        "{} names {id}, which is not a commit in this repository (a missing object or \
                         another kind): the log is damaged; `git jules log fsck` names it, and \
                         `git update-ref {} <commit>` (a backup or the remote's copy) repairs it",
                        self.name, self.name
                    ),
                });
            }
            tips.push(id);
        }
        for (_, id) in self.remote_tips()? {
            if !tips.contains(&id) {
                tips.push(id);
            }
        }
        Ok(tips)
    }
}

/// All logs present locally (full ref names), backups and remote-tracking copies excluded.
pub fn list_logs(repo: &gix::Repository) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for r in repo.references()?.prefixed(LOG_REF_PREFIX)? {
        let r = r.map_err(|e| Error::wrap("listing logs", e))?;
        let name = r.name().as_bstr().to_string();
        if !name.starts_with("refs/jules/backup/") && !name.starts_with("refs/jules/writers/") {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// Whether `id` is a commit of a log: an event or a join, by its message (an event beyond the format's
/// bounds, or with a bad id or JSON, still counts: readers skip it, but it is on a log).
pub fn is_log_commit(repo: &gix::Repository, id: ObjectId) -> bool {
    let Ok(commit) = repo.find_commit(id) else {
        return false;
    };
    let Ok(message) = commit.message_raw() else {
        return false;
    };
    !matches!(
        event::parse_message(message),
        Err(event::Invalid::NotAnEvent(_))
    )
}

/// Whether the history of the commit `tip` holds a commit of a log ([`is_log_commit`]): the rule that tells a
/// copy of a log from a branch whose remote-tracking ref also lies under `refs/remotes/<remote>/jules/` (a
/// branch named `jules/x`: git's default refspec and `init`'s map both there). A log with commits that are not
/// events on top (garbage a hostile or broken remote added) still holds its events below them, so it is
/// still a log: its events are joined and kept, the garbage is skipped and named. Only a history with no
/// event and no join anywhere is a branch (docs/format.md, "Telling a log from a branch").
///
/// A log answers at its tip or a few commits below; a branch costs a walk of its whole history, so that
/// verdict is remembered per commit in `.git/jules/not-logs` (a commit's history never changes; the file is
/// only a hint and is rebuilt at will).
pub fn holds_log_history(repo: &gix::Repository, tip: ObjectId) -> bool {
    if is_log_commit(repo, tip) {
        return true;
    }
    let memo = crate::kit::repo::jules_dir(repo).join("not-logs");
    let known = std::fs::read_to_string(&memo).unwrap_or_default();
    let hex = tip.to_string();
    if known.lines().any(|l| l == hex) {
        return false;
    }
    let Ok(walk) = repo.rev_walk([tip]).all() else {
        return false;
    };
    let mut complete = true;
    for info in walk {
        let Ok(info) = info else {
            // A missing object: no verdict to remember.
            complete = false;
            break;
        };
        if info.id != tip && is_log_commit(repo, info.id) {
            return true;
        }
    }
    if complete {
        // Keep the memo small: a clone meets a handful of such branches.
        let mut lines: Vec<&str> = known.lines().rev().take(255).collect();
        lines.reverse();
        lines.push(&hex);
        let _ = std::fs::create_dir_all(crate::kit::repo::jules_dir(repo));
        let _ = std::fs::write(&memo, lines.join("\n") + "\n");
    }
    false
}
