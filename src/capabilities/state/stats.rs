//! Per-sprint metrics (seed 000's key metrics): ticks used, conflict rate, re-runs, throughput.

use std::collections::BTreeMap;

use serde::Serialize;

use super::tick::{REASON_MAIL, REASON_PARALLEL, REASON_WEAVE};
use super::view::StateView;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SprintStats {
    pub sprint: u64,
    /// Ticks that launched at least one session.
    pub ticks_used: usize,
    pub runs: usize,
    pub runs_ok: usize,
    pub runs_failed: usize,
    /// Relaunches for unread mail (conflict reports, feedback).
    pub reruns: usize,
    /// Re-runs per first-round parallel run: the share of personas that had to come back.
    pub conflict_rate: f64,
    pub weaves: usize,
    /// Finished runs per tick used.
    pub throughput: f64,
    pub closed: bool,
}

pub fn sprint_stats(view: &StateView) -> Vec<SprintStats> {
    let mut by: BTreeMap<u64, SprintStats> = BTreeMap::new();
    for (&n, info) in &view.sprints {
        by.insert(
            n,
            SprintStats {
                sprint: n,
                closed: info.closed_at.is_some(),
                ..Default::default()
            },
        );
    }
    for t in &view.ticks {
        if let (Some(s), false) = (t.sprint, t.launched.is_empty()) {
            by.entry(s).or_default().ticks_used += 1;
        }
    }
    let mut first_round: BTreeMap<u64, usize> = BTreeMap::new();
    for r in &view.runs {
        let Some(s) = r.sprint else { continue };
        let st = by.entry(s).or_default();
        st.sprint = s;
        st.runs += 1;
        match r.status.as_deref() {
            Some("ok") => st.runs_ok += 1,
            Some("failed") => st.runs_failed += 1,
            _ => {}
        }
        match r.reason.as_str() {
            REASON_MAIL => st.reruns += 1,
            REASON_WEAVE => st.weaves += 1,
            REASON_PARALLEL => *first_round.entry(s).or_default() += 1,
            _ => {}
        }
    }
    for st in by.values_mut() {
        let first = first_round.get(&st.sprint).copied().unwrap_or(0);
        st.conflict_rate = if first > 0 {
            st.reruns as f64 / first as f64
        } else {
            0.0
        };
        st.throughput = if st.ticks_used > 0 {
            (st.runs_ok + st.runs_failed) as f64 / st.ticks_used as f64
        } else {
            0.0
        };
    }
    by.into_values().collect()
}
