//! The held leases, kept per log tip for what runs on every commit and every sync: `lease check` (the
//! pre-commit hook) and the reminders.
//!
//! The full view ([`super::view`]) carries every lease ever acquired, denied and released ones included; a
//! check needs only the held ones, and reads them from `.git/jules/cache/lease/held/held.json`, a sealed
//! file stamped with the log's tips (derived data: rebuilt from the view whenever the stamp does not match,
//! the seal fails or the file is gone; never needed for an answer). A check on a thousand changed files
//! then reads one small file, parses only the glob patterns, and looks each file up with its ancestor
//! directories among the literal patterns ([`check`]), instead of comparing every pair.

use std::collections::HashMap;

use serde::Serialize;

use super::pattern::{Index, Pattern};
use super::{view, Changes, Lease, State, Stored};
use crate::error::Result;
use crate::eventlog::cache::{full_replay, read_sealed_stamp, write_sealed, Stamp};
use crate::eventlog::Log;

const DIR: &str = "held";
const FILE: &str = "held.json";

/// The leases in state `held` (live or expired, shared or exclusive) at the log's current tips.
pub struct Held {
    pub(crate) leases: Vec<Stored>,
}

/// Read the held leases from their file when it matches the tips; else fold (through the view's cache) and
/// write it for the next reader. A failure to write costs only speed.
pub fn held(log: &Log<'_>) -> Result<Held> {
    let tips = log.tips()?;
    if tips.is_empty() {
        return Ok(Held { leases: Vec::new() });
    }
    let stamp = Stamp::of(&tips);
    let dir = log.cache_dir(DIR);
    if !full_replay() {
        if let Ok((bytes, s)) = read_sealed_stamp(&dir, FILE) {
            if s == stamp.as_str() {
                if let Ok(leases) = serde_json::from_slice(&bytes) {
                    return Ok(Held { leases });
                }
            }
        }
    }
    // If the tips move while the view is folded, the file holds newer leases under the older stamp: the
    // next reader sees other tips and rebuilds it.
    let leases: Vec<Stored> = view(log)?
        .leases
        .iter()
        .filter(|l| l.state == State::Held)
        .map(Stored::from)
        .collect();
    if !full_replay() && std::fs::create_dir_all(&dir).is_ok() {
        if let Ok(bytes) = serde_json::to_vec(&leases) {
            let _ = write_sealed(&dir, FILE, &bytes, &stamp);
        }
    }
    Ok(Held { leases })
}

/// A path (or pattern) under another persona's live exclusive lease.
#[derive(Debug, Clone, Serialize)]
pub struct Conflict {
    pub path: String,
    pub lease: Lease,
}

/// What `lease check` answers (`--json`: docs/json.md).
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// How many paths or patterns were checked.
    pub checked: usize,
    pub conflicts: Vec<Conflict>,
}

/// What a check looks at: files git named (changed paths, taken literally) or paths and globs.
#[derive(Debug, Clone)]
pub enum Targets {
    Files(Vec<String>),
    Patterns(Vec<Pattern>),
}

/// Check `paths` (patterns), or the files `changes` touches, against the live exclusive leases of everyone
/// but `persona` at `now`; naming neither is bad input. `ignore_case` as the repository's `core.ignoreCase`.
pub fn check_request(
    log: &Log<'_>,
    now: i64,
    persona: Option<&str>,
    paths: &[String],
    changes: Option<&Changes>,
    ignore_case: bool,
) -> Result<CheckReport> {
    let targets = match changes {
        Some(c) => Targets::Files(super::changed_paths(log.repo(), c)?),
        None if paths.is_empty() => {
            return Err(crate::Error::usage(
                "name paths to check, or the staged change or a diff range",
            ))
        }
        None => Targets::Patterns(
            paths
                .iter()
                .map(|p| Pattern::parse(p, ignore_case))
                .collect::<Result<_>>()?,
        ),
    };
    if let Some(p) = persona {
        crate::mail::message::validate_persona(p)?;
    }
    let held = held(log)?;
    check(&held, now, persona, &targets, ignore_case)
}

fn fold(s: &str, ignore_case: bool) -> String {
    if ignore_case {
        s.to_ascii_lowercase()
    } else {
        s.to_owned()
    }
}

/// A lease path without glob syntax, as the key a file's ancestors are looked up under (`./` and a trailing
/// `/` dropped, as [`Pattern::parse`] drops them); `None` for a glob.
fn literal_key(p: &str, ignore_case: bool) -> Option<String> {
    if p.contains(['*', '?', '[', '\\']) {
        return None;
    }
    let p = p.strip_prefix("./").unwrap_or(p);
    Some(fold(p.strip_suffix('/').unwrap_or(p), ignore_case))
}

/// The targets that fall under a live exclusive lease of someone other than `persona` at `now`.
pub fn check(
    held: &Held,
    now: i64,
    persona: Option<&str>,
    targets: &Targets,
    ignore_case: bool,
) -> Result<CheckReport> {
    let counts = |l: &&Stored| l.exclusive && l.live_at(now) && persona != Some(l.persona.as_str());
    let mut hits: Vec<(String, usize)> = Vec::new();
    match targets {
        Targets::Files(files) => {
            // Literal lease paths by key; globs parsed and indexed by their first component.
            let mut literal: HashMap<String, Vec<usize>> = HashMap::new();
            let mut globs = Index::default();
            for (n, l) in held.leases.iter().enumerate().filter(|(_, l)| counts(l)) {
                for p in &l.paths {
                    match literal_key(p, ignore_case) {
                        Some(k) => literal.entry(k).or_default().push(n),
                        None => globs.insert(Pattern::parse(p, ignore_case)?, n),
                    }
                }
            }
            for f in files {
                let key = fold(f, ignore_case);
                // A literal lease covers the file when it names the file or a directory above it.
                let mut found: Vec<usize> = key
                    .match_indices('/')
                    .map(|(i, _)| &key[..i])
                    .chain([key.as_str()])
                    .filter_map(|k| literal.get(k))
                    .flatten()
                    .copied()
                    .collect();
                if !globs.is_empty() {
                    let file = Pattern::literal(f, ignore_case);
                    found.extend(globs.overlapping(&file).copied());
                }
                found.sort_unstable();
                found.dedup();
                hits.extend(found.into_iter().map(|n| (f.clone(), n)));
            }
        }
        Targets::Patterns(patterns) => {
            let mut idx = Index::default();
            for (n, l) in held.leases.iter().enumerate().filter(|(_, l)| counts(l)) {
                for p in &l.paths {
                    idx.insert(Pattern::parse(p, ignore_case)?, n);
                }
            }
            for p in patterns {
                let mut found: Vec<usize> = idx.overlapping(p).copied().collect();
                found.sort_unstable();
                found.dedup();
                hits.extend(found.into_iter().map(|n| (p.as_str().to_owned(), n)));
            }
        }
    }
    let checked = match targets {
        Targets::Files(f) => f.len(),
        Targets::Patterns(p) => p.len(),
    };
    // Only the leases named are turned back into full leases (their patterns parsed once more).
    let mut leases: HashMap<usize, Lease> = HashMap::new();
    let mut conflicts = Vec::with_capacity(hits.len());
    for (path, n) in hits {
        let lease = match leases.get(&n) {
            Some(l) => l.clone(),
            None => {
                let l = held.leases[n].clone().into_lease()?;
                leases.insert(n, l.clone());
                l
            }
        };
        conflicts.push(Conflict { path, lease });
    }
    Ok(CheckReport { checked, conflicts })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(paths: &[(&str, &str, bool)]) -> Held {
        let mut v = super::super::View::default();
        for (n, (persona, path, exclusive)) in paths.iter().enumerate() {
            let id =
                crate::eventlog::EventId::from_hex(&format!("{:02x}", n + 1).repeat(32)).unwrap();
            v.apply(
                &id,
                super::super::ACQUIRE,
                persona,
                &serde_json::json!({"paths": [path], "exclusive": exclusive, "at": 0, "expires": 100}),
            );
        }
        // Held all at once (the fold would deny the overlapping ones): the check must find each.
        Held {
            leases: v
                .leases
                .iter_mut()
                .map(|l| {
                    l.state = State::Held;
                    Stored::from(&*l)
                })
                .collect(),
        }
    }

    fn files_hit(h: &Held, files: &[&str], ignore_case: bool) -> Vec<(String, String)> {
        let t = Targets::Files(files.iter().map(|f| f.to_string()).collect());
        check(h, 10, Some("me"), &t, ignore_case)
            .unwrap()
            .conflicts
            .into_iter()
            .map(|c| (c.path, c.lease.paths[0].clone()))
            .collect()
    }

    #[test]
    fn files_meet_literal_directories_files_and_globs_as_the_overlap_rule_says() {
        let h = held(&[
            ("ann", "src/", true),
            ("bob", "./docs/a.md", true),
            ("cat", "**/*.toml", true),
            ("dan", "lib/[ab]*/x", true),
            ("eve", "share", false),
            ("me", "mine", true),
        ]);
        let hit = files_hit(
            &h,
            &[
                "src/a/b.rs",
                "srcx/a",
                "docs/a.md",
                "docs/a.md.bak",
                "Cargo.toml",
                "lib/b1/x",
                "lib/c1/x",
                "share/x",
                "mine/x",
            ],
            false,
        );
        let want = [
            ("src/a/b.rs", "src/"),
            ("docs/a.md", "./docs/a.md"),
            ("Cargo.toml", "**/*.toml"),
            ("lib/b1/x", "lib/[ab]*/x"),
        ];
        assert_eq!(
            hit,
            want.map(|(a, b)| (a.to_owned(), b.to_owned())).to_vec()
        );
        // The same answers as the pairwise rule, file by file.
        for f in ["src/a/b.rs", "srcx/a", "docs/a.md.bak", "lib/c1/x"] {
            let pairwise = h.leases.iter().any(|l| {
                l.exclusive
                    && l.persona != "me"
                    && l.paths.iter().any(|p| {
                        Pattern::parse(p, false)
                            .unwrap()
                            .overlaps(&Pattern::literal(f, false))
                    })
            });
            assert_eq!(pairwise, hit.iter().any(|(p, _)| p == f), "{f}");
        }
        // Case folds only when the repository says so.
        assert!(files_hit(&h, &["SRC/a"], false).is_empty());
        assert_eq!(files_hit(&h, &["SRC/a"], true).len(), 1);
    }
}
