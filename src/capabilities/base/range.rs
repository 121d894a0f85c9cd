//! The commits of `base..tip`, oldest first, parents before children.
//!
//! The set comes from gix's `rev_walk` with `base` hidden (cheap without a commit-graph, unlike the topo
//! walker); the order from a depth-first walk over first parents first, so a linear series comes out exactly
//! as `git rev-list --reverse base..tip` and merges inside the range still follow their parents.

use std::collections::{HashMap, HashSet};

use gix::ObjectId;

use crate::kit::error::Result;

pub fn oldest_first(
    repo: &gix::Repository,
    base: ObjectId,
    tip: ObjectId,
) -> Result<Vec<ObjectId>> {
    let mut parents: HashMap<ObjectId, Vec<ObjectId>> = HashMap::new();
    for info in repo.rev_walk([tip]).with_hidden([base]).all()? {
        let info = info.map_err(gix::Error::from_error)?;
        parents.insert(info.id, info.parent_ids.iter().copied().collect());
    }
    if parents.is_empty() {
        return Ok(Vec::new());
    }
    // Iterative post-order from the tip: a commit is emitted once all its in-range parents are.
    let mut order = Vec::with_capacity(parents.len());
    let mut done: HashSet<ObjectId> = HashSet::new();
    let mut stack: Vec<(ObjectId, usize)> = vec![(tip, 0)];
    while let Some((id, next)) = stack.pop() {
        let ps = &parents[&id];
        match ps[next..]
            .iter()
            .position(|p| parents.contains_key(p) && !done.contains(p))
        {
            Some(offset) => {
                let p = ps[next + offset];
                stack.push((id, next + offset + 1));
                stack.push((p, 0));
            }
            None => {
                if done.insert(id) {
                    order.push(id);
                }
            }
        }
    }
    Ok(order)
}
