//! Predicting which inputs collide, and the `--order smart` ordering that lets the most of them apply.
//!
//! Each input's footprint is the set of (file, line range) it changes, in the coordinates of the version it
//! was made against: for commits the lines their diff replaces (widened by one line on each side, since git
//! also refuses changes that merely touch), for patches the lines their hunks cover, context included;
//! adding, deleting or renaming a file claims the whole file. Two inputs collide when they claim
//! intersecting ranges of the same file.
//!
//! Smart order is greedy: repeatedly take the input with the fewest collisions among those left (ties: the
//! order given), set aside everything it collides with; the taken inputs go first in the order given, then the
//! set-aside ones, fewest collisions first. Taken inputs are predicted to apply; set-aside ones to conflict
//! with the taken input they collide with. With the order as given, an input is predicted to conflict when
//! it collides with an earlier one predicted to apply.

use std::collections::HashMap;
use std::ops::Range;

use gix::bstr::BString;

use super::footprint::diff_lines;
use super::input::{Input, Item};
use super::report::{Overlap, Prediction};
use crate::kit::error::Result;

const WHOLE: Range<u32> = 0..u32::MAX;

pub type Footprint = Vec<(BString, Range<u32>)>;

pub fn footprint(repo: &gix::Repository, input: &Input) -> Result<Footprint> {
    use gix::object::tree::diff::ChangeDetached as C;
    let mut out = Vec::new();
    for item in &input.items {
        match item {
            Item::Skipped(_) => {}
            Item::Commit(c) => {
                let old = repo.find_tree(c.parent_tree)?;
                let new = repo.find_tree(c.tree)?;
                let opts = gix::diff::Options::default().with_rewrites(None);
                for ch in repo.diff_tree_to_tree(&old, &new, opts)? {
                    match ch {
                        C::Modification {
                            location,
                            previous_id,
                            id,
                            entry_mode,
                            ..
                        } if !entry_mode.is_tree() => {
                            let a = repo.find_object(previous_id)?.detach().data;
                            let b = repo.find_object(id)?.detach().data;
                            for h in diff_lines(&a, &b) {
                                out.push((
                                    location.clone(),
                                    h.before.start.saturating_sub(1)..h.before.end + 1,
                                ));
                            }
                        }
                        C::Addition {
                            location,
                            entry_mode,
                            ..
                        }
                        | C::Deletion {
                            location,
                            entry_mode,
                            ..
                        } if !entry_mode.is_tree() => out.push((location, WHOLE)),
                        _ => {}
                    }
                }
            }
            Item::Patch(p) => {
                for f in &p.files {
                    let whole = f.is_new() || f.is_delete() || f.rename || f.copy;
                    if whole || f.binary.is_some() {
                        for path in [&f.old_path, &f.new_path].into_iter().flatten() {
                            out.push((path.clone(), WHOLE));
                        }
                        continue;
                    }
                    for h in &f.hunks {
                        let s = u32::try_from(h.old_start.saturating_sub(1)).unwrap_or(u32::MAX);
                        let len = u32::try_from(h.old_len.max(1)).unwrap_or(u32::MAX);
                        out.push((f.path().clone(), s..s.saturating_add(len)));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// For every pair of inputs that collide, the first place they do.
fn collisions(footprints: &[Footprint]) -> Vec<Vec<(usize, BString, Range<u32>)>> {
    let mut by_path: HashMap<&BString, Vec<(usize, &Range<u32>)>> = HashMap::new();
    for (i, fp) in footprints.iter().enumerate() {
        for (p, r) in fp {
            by_path.entry(p).or_default().push((i, r));
        }
    }
    let mut out: Vec<Vec<(usize, BString, Range<u32>)>> = vec![Vec::new(); footprints.len()];
    let mut paths: Vec<_> = by_path.into_iter().collect();
    paths.sort_by(|a, b| a.0.cmp(b.0));
    for (path, claims) in paths {
        for (x, (i, ri)) in claims.iter().enumerate() {
            for (j, rj) in &claims[x + 1..] {
                if i == j || !(ri.start <= rj.end && rj.start <= ri.end) {
                    continue;
                }
                let shared = ri.start.max(rj.start)..ri.end.min(rj.end);
                if !out[*i].iter().any(|(k, _, _)| k == j) {
                    out[*i].push((*j, path.clone(), shared.clone()));
                }
                if !out[*j].iter().any(|(k, _, _)| k == i) {
                    out[*j].push((*i, path.clone(), shared));
                }
            }
        }
    }
    out
}

fn overlap(inputs: &[Input], (j, path, r): &(usize, BString, Range<u32>)) -> Overlap {
    let end = if r.end == u32::MAX { 0 } else { r.end };
    Overlap {
        input: inputs[*j].label.clone(),
        path: path.to_string(),
        lines: if r.end == u32::MAX && r.start == 0 {
            [0, 0]
        } else {
            [r.start + 1, end.max(r.start + 1)]
        },
    }
}

/// The order to try the inputs in (indices into `inputs`) and a prediction for each input (by index).
pub fn plan(
    inputs: &[Input],
    footprints: &[Footprint],
    smart: bool,
) -> (Vec<usize>, Vec<Prediction>) {
    let n = inputs.len();
    let edges = collisions(footprints);
    let usable: Vec<bool> = inputs.iter().map(|i| i.error.is_none()).collect();
    let mut applies = vec![false; n];
    let order: Vec<usize> = if smart {
        let mut remaining: Vec<usize> = (0..n).filter(|&i| usable[i]).collect();
        let mut taken = Vec::new();
        let mut aside = Vec::new();
        while !remaining.is_empty() {
            let degree = |i: usize| {
                edges[i]
                    .iter()
                    .filter(|(j, _, _)| remaining.contains(j))
                    .count()
            };
            let &pick = remaining
                .iter()
                .min_by_key(|&&i| (degree(i), i))
                .expect("not empty");
            taken.push(pick);
            let neighbours: Vec<usize> = edges[pick].iter().map(|(j, _, _)| *j).collect();
            remaining.retain(|&i| i != pick && !neighbours.contains(&i));
            for j in neighbours {
                if usable[j] && !aside.contains(&j) && !taken.contains(&j) {
                    aside.push(j);
                }
            }
        }
        taken.sort();
        aside.sort_by_key(|&i| (edges[i].len(), i));
        for &i in &taken {
            applies[i] = true;
        }
        let mut order = taken;
        order.extend(aside);
        order.extend((0..n).filter(|&i| !usable[i]));
        order
    } else {
        for i in (0..n).filter(|&i| usable[i]) {
            applies[i] = !edges[i].iter().any(|(j, _, _)| *j < i && applies[*j]);
        }
        (0..n).collect()
    };
    let predictions = (0..n)
        .map(|i| {
            let relevant: Vec<&(usize, BString, Range<u32>)> = if applies[i] {
                edges[i].iter().collect()
            } else {
                edges[i].iter().filter(|(j, _, _)| applies[*j]).collect()
            };
            Prediction {
                applies: applies[i],
                overlaps: relevant.into_iter().map(|e| overlap(inputs, e)).collect(),
            }
        })
        .collect();
    (order, predictions)
}

#[cfg(test)]
mod tests {
    use super::super::input::Kind;
    use super::*;

    fn input(label: &str) -> Input {
        Input {
            given: 0,
            label: label.into(),
            kind: Kind::Patch,
            items: Vec::new(),
            persona: None,
            error: None,
            path: None,
            range_from: None,
        }
    }

    #[test]
    fn smart_order_lets_the_most_apply() {
        // a collides with b and c; b and c are disjoint: given order applies only a, smart applies b and c.
        let inputs = vec![input("a"), input("b"), input("c")];
        let fp = vec![
            vec![("f".into(), 0..20)],
            vec![("f".into(), 2..4)],
            vec![("f".into(), 10..12)],
        ];
        let (order, pred) = plan(&inputs, &fp, false);
        assert_eq!(order, vec![0, 1, 2]);
        assert_eq!(
            pred.iter().map(|p| p.applies).collect::<Vec<_>>(),
            [true, false, false]
        );
        let (order, pred) = plan(&inputs, &fp, true);
        assert_eq!(order, vec![1, 2, 0]);
        assert_eq!(
            pred.iter().map(|p| p.applies).collect::<Vec<_>>(),
            [false, true, true]
        );
        assert_eq!(pred[0].overlaps.len(), 2);
        assert_eq!(pred[0].overlaps[0].lines, [3, 4]);
    }
}
