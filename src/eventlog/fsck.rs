//! Strict validation of every commit on a log, for `git jules log fsck`.

use serde::Serialize;

use super::Log;
use crate::error::Result;

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
}

#[derive(Debug, Serialize)]
pub struct FsckProblem {
    pub commit: String,
    pub problem: String,
}

impl FsckReport {
    pub fn is_clean(&self) -> bool {
        self.invalid.is_empty()
    }
}

impl Log<'_> {
    /// Walk the local ref and check every commit strictly. Never fails on bad content, only on I/O.
    pub fn fsck(&self) -> Result<FsckReport> {
        let tip = self.local_tip()?;
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
        invalid.sort_by(|a, b| a.commit.cmp(&b.commit));
        Ok(FsckReport {
            log: self.name.clone(),
            tip: tip.map(|t| t.to_string()),
            commits,
            events: ordered.len(),
            merges,
            duplicates: total - ordered.len(),
            invalid,
        })
    }
}
