//! A small projection of any log: counts by kind and actor, the clock, the first and last event.
//! It backs `git jules log stats` and is the warm-cache query of the replay benchmark.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::cache::{load_json, save_json, Projection, Stamp};
use super::event::EventId;
use super::read::LoggedEvent;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LogStats {
    pub events: u64,
    pub max_lamport: u64,
    pub by_kind: BTreeMap<String, u64>,
    pub by_actor: BTreeMap<String, u64>,
    pub first: Option<EventId>,
    pub last: Option<EventId>,
}

impl Projection for LogStats {
    const NAME: &'static str = "stats";
    const VERSION: u32 = 1;

    fn empty() -> Self {
        LogStats::default()
    }

    fn apply(&mut self, e: &LoggedEvent) {
        self.events += 1;
        self.max_lamport = self.max_lamport.max(e.lamport);
        count(&mut self.by_kind, &e.event.kind);
        count(&mut self.by_actor, &e.event.actor);
        if self.first.is_none() {
            self.first = Some(e.id);
        }
        self.last = Some(e.id);
    }

    fn save(&self, dir: &Path, stamp: &Stamp) -> std::io::Result<()> {
        save_json(dir, "stats.json", self, stamp)
    }

    fn load(dir: &Path) -> Option<Self> {
        load_json(dir, "stats.json")
    }
}

/// One more for `key`; its name is copied only the first time it is seen (a replay folds millions of events
/// into a handful of kinds and actors).
fn count(map: &mut BTreeMap<String, u64>, key: &str) {
    match map.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            map.insert(key.to_owned(), 1);
        }
    }
}
