//! Strict validation of every commit on a log, for `git jules log fsck`.

use serde::Serialize;

use super::Log;
use crate::kit::error::Result;

/// The result of checking a log.
#[derive(Debug, Serialize)]
pub struct FsckReport {
    pub log: String,
    pub tip: Option<String>,
    pub commits: usize,
    pub events: usize,
    pub merges: usize,
    /// Events appended more than once (same id in several commits): harmless, counted once by readers.
    pub duplicates: usize,
    pub invalid: Vec<FsckProblem>,
    /// Under `jules.requireSigned`: every event not verified for its actor, which therefore carries no
    /// authority (absent without `requireSigned`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unverified: Vec<FsckUnverified>,
}

/// An event that carries no authority under `jules.requireSigned`.
#[derive(Debug, Serialize)]
pub struct FsckUnverified {
    pub commit: String,
    pub event: String,
    pub actor: String,
    pub signature: crate::store::sign::State,
}

#[derive(Debug, Serialize)]
pub struct FsckProblem {
    pub commit: String,
    pub problem: String,
}

impl FsckReport {
    pub fn is_clean(&self) -> bool {
        self.invalid.is_empty() && self.unverified.is_empty()
    }
}

impl Log<'_> {
    /// Walk the local ref and check every commit strictly. Never fails on bad content, only on I/O.
    ///
    /// Also reported: a local or remote-tracking ref of the log that does not point at a commit, events whose
    /// clock is beyond the format's bound (see `event::MAX_LAMPORT`), and event trees holding anything but the
    /// `payload/` blobs the event declares.
    pub fn fsck(&self) -> Result<FsckReport> {
        let unusable = self.unusable_tips()?;
        let tip = self
            .local_tip()?
            .filter(|t| !unusable.iter().any(|(_, u)| u == t));
        let scan = self.scan(&tip.into_iter().collect::<Vec<_>>(), &[], true)?;
        let (commits, merges, total) = (scan.commits, scan.merges, scan.events.len());
        let (ordered, invalid) = scan.into_ordered();
        let mut invalid: Vec<FsckProblem> = invalid
            .into_iter()
            .map(|i| FsckProblem {
                commit: i.commit.to_string(),
                problem: i.reason.to_string(),
            })
            .collect();
        for e in &ordered {
            if let Some(problem) = self.undeclared_files(e)? {
                invalid.push(FsckProblem {
                    commit: e.commit.to_string(),
                    problem,
                });
            }
        }
        for (name, id) in unusable {
            let kind = crate::store::refs::object_kind(self.repo, id)
                .map(|k| k.to_string())
                .unwrap_or_else(|| "missing object".into());
            invalid.push(FsckProblem {
                commit: id.to_string(),
                problem: if name == self.name {
                    // Only this repository writes its own ref: damage, which every reader refuses.
                    format!("{name} points at a {kind}, not a commit: the log is damaged, readers refuse it")
                } else {
                    format!("{name} points at a {kind}, not a commit: readers skip it")
                },
            });
        }
        invalid.sort_by(|a, b| a.commit.cmp(&b.commit));
        let mut unverified = Vec::new();
        if let Some(mut verifier) = super::Verifier::open_log(self.repo)? {
            if verifier.require_signed() {
                for e in &ordered {
                    match verifier.state(e.commit)? {
                        Some(s) if s.is_verified() => {}
                        Some(signature) => unverified.push(FsckUnverified {
                            commit: e.commit.to_string(),
                            event: e.id.to_hex(),
                            actor: e.event.actor.clone(),
                            signature,
                        }),
                        None => {}
                    }
                }
            }
        }
        Ok(FsckReport {
            unverified,
            log: self.name.clone(),
            tip: tip.map(|t| t.to_string()),
            commits,
            events: ordered.len(),
            merges,
            duplicates: total - ordered.len(),
            invalid,
        })
    }

    /// Why the tree of `e`'s commit holds more (or other) than the event's declared payload, if it does.
    fn undeclared_files(&self, e: &super::LoggedEvent) -> Result<Option<String>> {
        let tree = self.repo.find_commit(e.commit)?.tree()?;
        let mut found: Vec<String> = Vec::new();
        for entry in tree.iter() {
            let entry = entry.map_err(|err| {
                crate::Error::wrap(format!("reading the tree of {}", e.commit), err)
            })?;
            let name = entry.filename().to_string();
            if name == "payload" && entry.mode().is_tree() {
                let sub = self.repo.find_tree(entry.oid())?;
                for inner in sub.iter() {
                    let inner = inner.map_err(|err| {
                        crate::Error::wrap(format!("reading the tree of {}", e.commit), err)
                    })?;
                    let file = inner.filename().to_string();
                    let declared = e.event.payload.iter().any(|p| {
                        p.name == file
                            && p.blob.parse::<gix::ObjectId>().ok() == Some(inner.oid().to_owned())
                            && inner.mode().is_blob()
                    });
                    if !declared {
                        found.push(format!("payload/{file}"));
                    }
                }
            } else {
                found.push(name);
            }
        }
        Ok((!found.is_empty()).then(|| {
            format!(
                "the event's tree holds files it does not declare: {}",
                found.join(", ")
            )
        }))
    }
}
