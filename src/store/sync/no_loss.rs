//! The no-loss check: no push moves or deletes a remote log, notes or writer ref unless the new value keeps
//! every event of the value the lease expects (docs/format.md, "Sync never loses an event").

use std::collections::{BTreeMap, BTreeSet};

use gix::ObjectId;

use super::transport::Update;
use super::writer_refs::shared_of_writer;
use crate::kit::error::{Error, Result};
use crate::store::eventlog::Log;
use crate::store::refs::{self, object_kind};

/// The fold's guarantee, checked before every push that moves or deletes a remote log, notes or writer ref
/// (docs/format.md, "Sync never loses an event"): the value that replaces what the lease expects holds every
/// event reachable from it; for notes refs, the old value is in the new one's history. A writer ref that is
/// deleted is checked against its shared ref's new value in the same push, or the shared ref's fetched value
/// when the push leaves that alone. Whatever the remote holds, a push that would lose something is refused
/// before it is sent, naming the ref and the events.
pub(super) fn check_no_loss(
    repo: &gix::Repository,
    updates: &[Update],
    fetched_shared: &dyn Fn(&str) -> Option<ObjectId>,
) -> Result<()> {
    // What each update replaces and with what: (name, old, the log or notes ref, the value that must keep it).
    let mut checks = Vec::new();
    for (name, new, old) in updates {
        let Some(old) = *old else { continue };
        if object_kind(repo, old) != Some(gix::object::Kind::Commit) {
            // A blob or a tree (or nothing) holds no event: replacing it loses nothing.
            continue;
        }
        let shared = shared_of_writer(name).map(|(shared, _)| shared);
        let target = match (new, &shared) {
            (Some(new), _) => Some(*new),
            (None, Some(shared)) => updates
                .iter()
                .find(|(n, _, _)| n == shared)
                .and_then(|(_, new, _)| *new)
                .or_else(|| fetched_shared(shared)),
            (None, None) => None,
        };
        let log_name = shared.unwrap_or_else(|| name.clone());
        checks.push((name, old, log_name, target));
    }
    // A fold deletes up to one writer ref per clone, all kept by the same new value: one walk over all of
    // them answers the common case (nothing missing); only a group with something missing is looked at
    // ref by ref.
    let mut clean: BTreeSet<(String, ObjectId)> = BTreeSet::new();
    let mut groups: BTreeMap<(String, ObjectId), Vec<ObjectId>> = BTreeMap::new();
    for (_, old, log_name, target) in &checks {
        if let (Some(target), false) = (target, log_name.starts_with("refs/notes/jules/")) {
            groups
                .entry((log_name.clone(), *target))
                .or_default()
                .push(*old);
        }
    }
    for ((log_name, target), olds) in groups {
        let log = Log::open(repo, &log_name)?;
        if log.scan(&olds, &[target], false)?.events.is_empty() {
            clean.insert((log_name, target));
        }
    }
    for (name, old, log_name, target) in checks {
        if target.is_some_and(|t| clean.contains(&(log_name.clone(), t))) {
            continue;
        }
        let log_name = log_name.as_str();
        let refuse = |what: String| {
            Err(Error::Refused(format!(
                "refusing to push {name}: its value on the remote ({old}) holds {what}; nothing was pushed \
                 (keep this clone, run `git jules log fsck`, and report it: a sync must never lose an event)"
            )))
        };
        let Some(target) = target else {
            return refuse("history that no new value keeps".into());
        };
        if log_name.starts_with("refs/notes/jules/") {
            if !matches!(
                refs::relation(repo, old, target)?,
                refs::Relation::Same | refs::Relation::Behind
            ) {
                return refuse(format!("notes that {target} does not keep"));
            }
            continue;
        }
        let log = Log::open(repo, log_name)?;
        let missing = log.scan(&[old], &[target], false)?.events;
        if missing.is_empty() {
            continue;
        }
        // The same event may sit in two commits (appended twice): only an id the new value lacks is lost.
        let kept: crate::store::eventlog::IdSet = log
            .scan(&[target], &[], false)?
            .events
            .into_iter()
            .map(|e| e.id)
            .collect();
        let mut lost: Vec<String> = missing
            .iter()
            .filter(|e| !kept.contains(&e.id))
            .map(|e| e.id.to_string())
            .collect();
        lost.sort();
        lost.dedup();
        if !lost.is_empty() {
            let shown = lost.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
            let more = if lost.len() > 5 { ", …" } else { "" };
            return refuse(format!(
                "{} event(s) that {target} lacks ({shown}{more})",
                lost.len()
            ));
        }
    }
    Ok(())
}
