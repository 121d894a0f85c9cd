//! The held leases, kept per log tip for what runs on every commit and every sync: `lease check` (the
//! pre-commit hook) and the reminders.
//!
//! The full view ([`super::view`]) carries every lease ever acquired, denied and released ones included; a
//! check needs only the held ones, and reads them from `.git/jules/cache/lease/held/held.jsonl`, a sealed
//! file stamped with the log's tips (derived data: rebuilt from the view whenever the stamp does not match,
//! the seal fails or the file is gone; never needed for an answer). A check on a thousand changed files
//! then reads one file, parses the heads of its lines and only the glob patterns, and looks each file up with its ancestor
//! directories among the literal patterns ([`check`]), instead of comparing every pair.

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::keys;
use super::pattern::{Index, Pattern};
use super::{view, Changes, Lease, State, Stored};
use crate::kit::error::Result;
use crate::store::eventlog::cache::{read_sealed_stamp, write_sealed, Stamp};
use crate::store::eventlog::Log;

const DIR: &str = "held";
const FILE: &str = "held.jsonl";
/// The keys of the exclusive held leases, what a check reads ([`Held::keys`]).
const KEYS: &str = "held.keys";

/// The leases in state `held` (live or expired, shared or exclusive) at the log's current tips, as the file
/// holds them: one line per lease, `HEAD<TAB>LEASE`, where `HEAD` is the JSON of what a check or a reminder
/// filters on ([`Head`]) and `LEASE` the whole lease. A check parses the heads only, borrowing their
/// strings from the bytes, and the whole lease of the few it names.
pub struct Held {
    bytes: Vec<u8>,
}

/// What a check and a reminder look at first.
#[derive(Serialize, Deserialize)]
pub(crate) struct Head<'a> {
    #[serde(borrow)]
    pub(crate) persona: Cow<'a, str>,
    #[serde(borrow)]
    pub(crate) paths: Vec<Cow<'a, str>>,
    pub(crate) exclusive: bool,
    pub(crate) expires: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) reminded: Option<i64>,
}

impl Head<'_> {
    pub(crate) fn live_at(&self, t: i64) -> bool {
        t < self.expires
    }
}

impl Held {
    /// Encode held leases (tab and newline never occur in serde_json's output: control characters are
    /// escaped).
    pub(crate) fn encode(leases: &[Stored]) -> Result<Held> {
        let mut bytes = Vec::new();
        for l in leases {
            let head = Head {
                persona: Cow::Borrowed(&l.persona),
                paths: l.paths.iter().map(|p| Cow::Borrowed(p.as_str())).collect(),
                exclusive: l.exclusive,
                expires: l.expires,
                reminded: l.reminded,
            };
            let json = |e: serde_json::Error| crate::Error::wrap("encoding a lease", e);
            serde_json::to_writer(&mut bytes, &head).map_err(json)?;
            bytes.push(b'\t');
            serde_json::to_writer(&mut bytes, l).map_err(json)?;
            bytes.push(b'\n');
        }
        Ok(Held { bytes })
    }

    /// Each lease's head and the bytes of the whole lease.
    pub(crate) fn heads(&self) -> Result<Vec<(Head<'_>, &[u8])>> {
        let bad = || crate::Error::Other("the held leases' file is damaged".into());
        self.bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|line| {
                let tab = line.iter().position(|&b| b == b'\t').ok_or_else(bad)?;
                let head = serde_json::from_slice(&line[..tab]).map_err(|_| bad())?;
                Ok((head, &line[tab + 1..]))
            })
            .collect()
    }

    /// The whole lease of a line [`Held::heads`] returned.
    pub(crate) fn lease(raw: &[u8]) -> Result<Lease> {
        serde_json::from_slice::<Stored>(raw)
            .map_err(|e| crate::Error::wrap("the held leases' file is damaged", e))?
            .into_lease()
    }
}

impl Held {
    /// The keys table of the exclusive leases ([`keys`]), what a check reads: the pre-commit hook's file.
    fn keys(&self) -> Result<Vec<u8>> {
        let base = self.bytes.as_ptr() as usize;
        let heads = self.heads()?;
        let rows: Vec<keys::Row<'_>> = heads
            .iter()
            .filter(|(h, _)| h.exclusive)
            .map(|(h, raw)| keys::Row {
                persona: &h.persona,
                paths: h.paths.iter().map(|p| &**p).collect(),
                expires: h.expires,
                offset: raw.as_ptr() as usize - base,
                raw,
            })
            .collect();
        keys::encode(&rows)
    }
}

/// Read the held leases from their file when it matches the tips; else fold (through the view's cache) and
/// write it for the next reader. A failure to write costs only speed.
pub fn held(log: &Log<'_>) -> Result<Held> {
    Ok(held_stamped(log)?.0)
}

/// [`held`], with the stamp of the tips it holds (`None` without a log).
fn held_stamped(log: &Log<'_>) -> Result<(Held, Option<Stamp>)> {
    let tips = log.tips()?;
    if tips.is_empty() {
        return Ok((Held { bytes: Vec::new() }, None));
    }
    let stamp = Stamp::of(&tips);
    let dir = log.cache_dir(DIR);
    if !log.full_replay() {
        if let Ok((bytes, s)) = read_sealed_stamp(&dir, FILE) {
            if s == stamp.as_str() {
                return Ok((Held { bytes }, Some(stamp)));
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
    let held = Held::encode(&leases)?;
    if !log.full_replay() && std::fs::create_dir_all(&dir).is_ok() {
        let _ = write_sealed(&dir, FILE, &held.bytes, &stamp);
    }
    Ok((held, Some(stamp)))
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
    check_targets(log, now, persona, targets, ignore_case)
}

/// The one check both ways in share: the persona checked; nothing to check is clean (nothing staged: a commit git will refuse as
/// empty, or `--allow-empty`); else the keys file when it is at the tips, else the held leases, writing the
/// keys file for the next check.
fn check_targets(
    log: &Log<'_>,
    now: i64,
    persona: Option<&str>,
    targets: Targets,
    ignore_case: bool,
) -> Result<CheckReport> {
    if let Some(p) = persona {
        crate::capabilities::mail::message::validate_persona(p)?;
    }
    if let Targets::Files(files) = &targets {
        if files.is_empty() {
            return Ok(CheckReport {
                checked: 0,
                conflicts: Vec::new(),
            });
        }
    }
    if let Some(r) = check_keys(log, now, persona, &targets, ignore_case)? {
        return Ok(r);
    }
    let (held, stamp) = held_stamped(log)?;
    let keys = held.keys()?;
    // The keys file was missing, older than the tips or than `held.jsonl`: write it for the next check.
    if let (Some(stamp), false) = (&stamp, log.full_replay()) {
        let _ = write_sealed(&log.cache_dir(DIR), KEYS, &keys, stamp);
    }
    check_held(&held, &keys, now, persona, &targets, ignore_case)
}

/// [`check_request`] for files named by their paths from the top of the work tree, taken literally as changed
/// paths are (a file covers itself only): the edit-time guard's check (`agent::guard`), read through the keys
/// file as the pre-commit hook reads it.
pub fn check_files(
    log: &Log<'_>,
    now: i64,
    persona: Option<&str>,
    files: Vec<String>,
    ignore_case: bool,
) -> Result<CheckReport> {
    check_targets(log, now, persona, Targets::Files(files), ignore_case)
}

/// [`check`] from the keys file ([`Held::keys`]), the pre-commit hook's path: the files are looked up in the
/// table as it lies in the file, and only the leases the check names are read from `held.jsonl`. `None`
/// when the keys file is missing, damaged or not at the tips, or a line it points at changed since.
fn check_keys(
    log: &Log<'_>,
    now: i64,
    persona: Option<&str>,
    targets: &Targets,
    ignore_case: bool,
) -> Result<Option<CheckReport>> {
    use std::io::{Read, Seek, SeekFrom};
    if log.full_replay() {
        return Ok(None);
    }
    let tips = log.tips()?;
    if tips.is_empty() {
        return Ok(None);
    }
    let dir = log.cache_dir(DIR);
    let Ok((bytes, stamp)) = read_sealed_stamp(&dir, KEYS) else {
        return Ok(None);
    };
    if stamp != Stamp::of(&tips).as_str() {
        return Ok(None);
    }
    let Some(table) = keys::Keys::parse(&bytes) else {
        return Ok(None);
    };
    let mut file = None;
    let lease = |n: usize| -> Option<Lease> {
        let at = table.at(n)?;
        if file.is_none() {
            file = std::fs::File::open(dir.join(FILE)).ok();
        }
        let f = file.as_mut()?;
        let mut raw = vec![0; at.len];
        f.seek(SeekFrom::Start(at.offset)).ok()?;
        f.read_exact(&mut raw).ok()?;
        // A line that changed since the table was built: the held leases are read again instead.
        if keys::line_sum(&raw) != at.sum {
            return None;
        }
        Held::lease(&raw).ok()
    };
    check_table(&table, lease, now, persona, targets, ignore_case)
}

/// The targets that fall under a live exclusive lease of someone other than `persona` at `now`.
pub fn check(
    held: &Held,
    now: i64,
    persona: Option<&str>,
    targets: &Targets,
    ignore_case: bool,
) -> Result<CheckReport> {
    check_held(held, &held.keys()?, now, persona, targets, ignore_case)
}

/// [`check`] with the keys table of `held` already built ([`Held::keys`]).
fn check_held(
    held: &Held,
    keys: &[u8],
    now: i64,
    persona: Option<&str>,
    targets: &Targets,
    ignore_case: bool,
) -> Result<CheckReport> {
    let damaged = || crate::Error::Other("the held leases' file is damaged".into());
    let table = keys::Keys::parse(keys).ok_or_else(damaged)?;
    let lease = |n: usize| {
        let at = table.at(n)?;
        let start = usize::try_from(at.offset).ok()?;
        Held::lease(held.bytes.get(start..start.checked_add(at.len)?)?).ok()
    };
    check_table(&table, lease, now, persona, targets, ignore_case)?.ok_or_else(damaged)
}

/// [`check`] through a keys table; `lease(n)` reads the whole lease `n`. `None` when the table or a lease
/// it points at cannot be read.
fn check_table(
    table: &keys::Keys<'_>,
    mut lease: impl FnMut(usize) -> Option<Lease>,
    now: i64,
    persona: Option<&str>,
    targets: &Targets,
    ignore_case: bool,
) -> Result<Option<CheckReport>> {
    let hits: Vec<(String, usize)> = match targets {
        Targets::Files(files) => match table.file_hits(files, now, persona, ignore_case) {
            None => return Ok(None),
            Some(hits) => hits?
                .into_iter()
                .map(|(f, n)| (files[f].clone(), n))
                .collect(),
        },
        Targets::Patterns(patterns) => {
            let Some(paths) = table.paths(now, persona) else {
                return Ok(None);
            };
            let mut idx = Index::default();
            for (n, p) in paths {
                idx.insert(Pattern::parse(&p, ignore_case)?, n);
            }
            let mut hits = Vec::new();
            for p in patterns {
                let mut found: Vec<usize> = idx.overlapping(p).copied().collect();
                found.sort_unstable();
                found.dedup();
                hits.extend(found.into_iter().map(|n| (p.as_str().to_owned(), n)));
            }
            hits
        }
    };
    let checked = match targets {
        Targets::Files(f) => f.len(),
        Targets::Patterns(p) => p.len(),
    };
    // Only the leases named are read whole (their patterns parsed once more).
    let mut leases: HashMap<usize, Lease> = HashMap::new();
    let mut conflicts = Vec::with_capacity(hits.len());
    for (path, n) in hits {
        let lease = match leases.get(&n) {
            Some(l) => l.clone(),
            None => {
                let Some(l) = lease(n) else {
                    return Ok(None);
                };
                leases.insert(n, l.clone());
                l
            }
        };
        conflicts.push(Conflict { path, lease });
    }
    Ok(Some(CheckReport { checked, conflicts }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A damaged lease line fails with serde_json's error as its cause, not flattened into the message.
    #[test]
    fn a_damaged_lease_keeps_the_parsers_error() {
        let e = Held::lease(b"{ not json").unwrap_err();
        assert!(
            crate::kit::error::caused_by::<serde_json::Error>(&e),
            "{e:?}"
        );
        assert_eq!(e.kind(), crate::ErrorKind::Internal);
    }

    /// A damaged index fails with gix's decode error as its cause (`lease check --staged`, the hook).
    #[test]
    fn a_damaged_index_keeps_gixs_error() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init(dir.path()).unwrap();
        std::fs::write(repo.index_path(), b"DIRCnot an index").unwrap();
        let e = crate::capabilities::lease::staged::paths(&repo).unwrap_err();
        assert_eq!(e.to_string(), "reading the index", "{e:?}");
        assert!(std::error::Error::source(&e).is_some(), "{e:?}");
        assert_eq!(e.kind(), crate::ErrorKind::Internal);
    }

    fn held(paths: &[(&str, &str, bool)]) -> Held {
        let mut v = super::super::View::default();
        for (n, (persona, path, exclusive)) in paths.iter().enumerate() {
            let id =
                crate::store::eventlog::EventId::from_hex(&format!("{:02x}", n + 1).repeat(32))
                    .unwrap();
            v.apply(
                &id,
                super::super::ACQUIRE,
                persona,
                &serde_json::json!({"paths": [path], "exclusive": exclusive, "at": 0, "expires": 100}),
            );
        }
        // Held all at once (the fold would deny the overlapping ones): the check must find each.
        let leases: Vec<Stored> = v
            .leases
            .iter_mut()
            .map(|l| {
                l.state = State::Held;
                Stored::from(&*l)
            })
            .collect();
        Held::encode(&leases).unwrap()
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
            let pairwise = h.heads().unwrap().iter().any(|(l, _)| {
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

    /// Every pair (file or pattern, lease) the overlap rule names, the slow way.
    fn pairwise(
        h: &Held,
        targets: &[Pattern],
        now: i64,
        me: Option<&str>,
    ) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for t in targets {
            for (l, raw) in h.heads().unwrap() {
                let counts = l.exclusive && l.live_at(now) && me != Some(&*l.persona);
                if counts
                    && l.paths
                        .iter()
                        .any(|p| Pattern::parse(p, false).unwrap().overlaps(t))
                {
                    out.push((t.as_str().to_owned(), Held::lease(raw).unwrap().id));
                }
            }
        }
        out
    }

    #[test]
    fn the_keys_table_answers_as_the_overlap_rule_does() {
        let h = held(&[
            ("ann", "src/", true),
            ("bob", "./docs/a.md", true),
            ("cat", "**/*.toml", true),
            ("dan", "src/lease/", true),
            ("eve", "share", false),
            ("me", "mine", true),
            ("fay", "a\tb/x\ny", true),
            ("gus", "deep/er/", true),
            ("gus", "deep/", true),
        ]);
        let files = [
            "src/a.rs",
            "src/lease/keys.rs",
            "docs/a.md",
            "docs/a.mdx",
            "Cargo.toml",
            "share/x",
            "mine/x",
            "free",
            "deep/er/x",
            "sr",
            "src",
            "a\tb/x\ny/z",
        ];
        let literal: Vec<Pattern> = files.iter().map(|f| Pattern::literal(f, false)).collect();
        let globs: Vec<Pattern> = ["src/**", "*.toml", "docs/*", "x/y", "deep"]
            .iter()
            .map(|g| Pattern::parse(g, false).unwrap())
            .collect();
        for (now, persona) in [(10, Some("me")), (10, None), (10, Some("ann")), (100, None)] {
            let names = |r: CheckReport| {
                r.conflicts
                    .into_iter()
                    .map(|c| (c.path, c.lease.id))
                    .collect::<Vec<_>>()
            };
            let t = Targets::Files(files.map(String::from).to_vec());
            let from_table = names(check(&h, now, persona, &t, false).unwrap());
            assert_eq!(
                from_table,
                pairwise(&h, &literal, now, persona),
                "{now} {persona:?}"
            );
            let t = Targets::Patterns(globs.clone());
            let from_table = names(check(&h, now, persona, &t, false).unwrap());
            assert_eq!(
                from_table,
                pairwise(&h, &globs, now, persona),
                "{now} {persona:?}"
            );
        }
    }

    #[test]
    fn a_damaged_keys_table_is_refused_and_a_good_one_read_where_it_lies() {
        let h = held(&[("ann", "src/", true), ("cat", "**/*.toml", true)]);
        let bytes = h.keys().unwrap();
        let table = keys::Keys::parse(&bytes).unwrap();
        let files = ["src/a".to_string(), "b/c.toml".into(), "free".into()];
        let hits = table.file_hits(&files, 10, None, false).unwrap().unwrap();
        assert_eq!(hits, vec![(0, 0), (1, 1)]);
        let at = table.at(1).unwrap();
        let raw = &h.bytes[at.offset as usize..at.offset as usize + at.len];
        assert_eq!(keys::line_sum(raw), at.sum);
        assert_eq!(
            Held::lease(raw).unwrap().paths,
            vec!["**/*.toml".to_string()]
        );
        // Truncated anywhere (the seal catches that first): no panic, and nothing but what the whole table
        // says.
        for cut in 0..bytes.len() {
            if let Some(Some(Ok(h))) =
                keys::Keys::parse(&bytes[..cut]).map(|t| t.file_hits(&files, 10, None, false))
            {
                assert!(h.iter().all(|p| hits.contains(p)), "{cut}");
            }
        }
        let mut other = bytes.clone();
        other[0] ^= 1;
        assert!(keys::Keys::parse(&other).is_none());
        // Case folds only when the repository says so, from the same table.
        let upper = ["SRC/a".to_string()];
        assert!(table
            .file_hits(&upper, 10, None, false)
            .unwrap()
            .unwrap()
            .is_empty());
        assert_eq!(
            table
                .file_hits(&upper, 10, None, true)
                .unwrap()
                .unwrap()
                .len(),
            1
        );
    }

    /// A bare repository whose lease log has ann's exclusive lease on `a.txt` (acquired at 1000 for an hour).
    fn leased(dir: &std::path::Path) -> gix::Repository {
        let repo = gix::init_bare(dir.join("r.git")).unwrap();
        let log = super::super::open(&repo).unwrap();
        let req = super::super::ops::AcquireRequest {
            persona: "ann".into(),
            paths: vec!["a.txt".into()],
            exclusive: true,
            ttl: 3600,
            reason: None,
            task: None,
        };
        assert!(
            super::super::ops::acquire(&log, 1000, &req, None)
                .unwrap()
                .held
        );
        repo
    }

    /// A second handle on `repo` under `--full` (`jules.fullReplay`, as the frontend sets it).
    fn full(repo: &gix::Repository) -> gix::Repository {
        let config = repo.path().join("config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[jules]\n\tfullReplay = true\n");
        std::fs::write(&config, text).unwrap();
        let full = gix::open(repo.path()).unwrap();
        assert!(super::super::open(&full).unwrap().full_replay());
        full
    }

    /// Who holds what bob's check of `a.txt` meets at 1010, through the keys file as the hook reads it.
    fn holders(log: &Log<'_>) -> Vec<String> {
        check_files(log, 1010, Some("bob"), vec!["a.txt".into()], false)
            .unwrap()
            .conflicts
            .into_iter()
            .map(|c| c.lease.persona)
            .collect()
    }

    /// `--full` neither reads nor writes `held.jsonl` (docs/cli.md: "no cache … is read or written"), and
    /// without it the file is written at the tips and read back when its stamp matches. The file is
    /// replaced by a sealed one under the right stamp that holds no lease: only a read of it can say so.
    /// Catches `!log.full_replay()` at the read as `log.full_replay()` (133: the normal read folds, `--full`
    /// trusts the file), and at the write as `log.full_replay()` (149:8) or `||` (149:27): `--full` writes.
    #[test]
    fn full_replay_neither_reads_nor_writes_the_held_file() {
        let dir = tempfile::tempdir().unwrap();
        let repo = leased(dir.path());
        let full = full(&repo);
        let (log, full_log) = (
            super::super::open(&repo).unwrap(),
            super::super::open(&full).unwrap(),
        );
        let cache = log.cache_dir(DIR);
        let _ = std::fs::remove_dir_all(&cache);
        let count = |l: &Log<'_>| super::held(l).unwrap().heads().unwrap().len();
        assert_eq!(count(&full_log), 1);
        assert!(!cache.join(FILE).exists(), "--full wrote {FILE}");
        assert_eq!(count(&log), 1);
        let stamp = Stamp::of(&log.tips().unwrap());
        let (_, s) = read_sealed_stamp(&cache, FILE).expect("the held file written at the tips");
        assert_eq!(s, stamp.as_str());
        write_sealed(&cache, FILE, b"", &stamp).unwrap();
        assert_eq!(count(&log), 0, "the held file at the tips is what is read");
        assert_eq!(count(&full_log), 1, "--full read the held file");
    }

    /// A check that names neither paths nor a change is bad input, not a clean check of nothing (`git jules
    /// lease check` with no argument reaches it: clap lets the paths be empty). Catches the guard
    /// `None if paths.is_empty()` as `false` (189).
    #[test]
    fn a_check_of_nothing_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let repo = leased(dir.path());
        let log = super::super::open(&repo).unwrap();
        let e = check_request(&log, 1010, Some("bob"), &[], None, false).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::Usage, "{e:?}");
        assert_eq!(holders(&log), ["ann"]);
    }

    /// The check reads the keys file when its stamp is the tips' (the pre-commit hook's path), and `--full`
    /// does not. The keys file is replaced by a table of no lease sealed under the tips' stamp: only a read
    /// of it answers clean. Catches `check_keys` answering `Ok(None)` (266: the fallback reads `held.jsonl`
    /// and finds ann) and the stamp comparison as `==` (278).
    #[test]
    fn a_keys_file_at_the_tips_is_what_a_check_reads() {
        let dir = tempfile::tempdir().unwrap();
        let repo = leased(dir.path());
        let full = full(&repo);
        let (log, full_log) = (
            super::super::open(&repo).unwrap(),
            super::super::open(&full).unwrap(),
        );
        assert_eq!(holders(&log), ["ann"]);
        let cache = log.cache_dir(DIR);
        let stamp = Stamp::of(&log.tips().unwrap());
        let (_, s) = read_sealed_stamp(&cache, KEYS).expect("the keys file written at the tips");
        assert_eq!(s, stamp.as_str());
        let none = Held::encode(&[]).unwrap().keys().unwrap();
        write_sealed(&cache, KEYS, &none, &stamp).unwrap();
        assert!(
            holders(&log).is_empty(),
            "the keys file at the tips was not read"
        );
        assert_eq!(holders(&full_log), ["ann"], "--full read the keys file");
    }

    /// A keys file from older tips is not used: ann releases her lease, and bob's next check is clean,
    /// though the keys file (and `held.jsonl`) still describe her lease. Catches the stamp comparison as
    /// `==` (278), which reads the stale table and the stale line it points at.
    #[test]
    fn a_keys_file_from_older_tips_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let repo = leased(dir.path());
        let log = super::super::open(&repo).unwrap();
        assert_eq!(holders(&log), ["ann"]);
        let released = super::super::ops::release_all(&log, 1005, "ann", None, None).unwrap();
        assert_eq!(released.len(), 1);
        assert!(holders(&log).is_empty(), "a released lease still conflicts");
    }

    /// A line of `held.jsonl` that changed since the keys table was built is not trusted: the held leases
    /// are read again. The lease's persona is edited in place, same length (`ann` to `anx`; the file's seal
    /// then fails, so the reread folds the log): the answer is still ann's. Catches the line-sum comparison
    /// as `==` (295), which reads the edited line as the lease.
    #[test]
    fn a_held_line_changed_since_the_keys_table_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let repo = leased(dir.path());
        let log = super::super::open(&repo).unwrap();
        assert_eq!(holders(&log), ["ann"]);
        let path = log.cache_dir(DIR).join(FILE);
        let mut bytes = std::fs::read(&path).unwrap();
        let tab = bytes.iter().position(|&b| b == b'\t').unwrap();
        let at = tab
            + bytes[tab..]
                .windows(5)
                .position(|w| w == b"\"ann\"")
                .expect("the lease names its persona");
        bytes[at + 3] = b'x';
        std::fs::write(&path, bytes).unwrap();
        assert_eq!(holders(&log), ["ann"]);
    }
}
