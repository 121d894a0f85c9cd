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

use super::pattern::{Index, Pattern};
use super::{view, Changes, Lease, State, Stored};
use crate::error::Result;
use crate::eventlog::cache::{read_sealed_stamp, write_sealed, Stamp};
use crate::eventlog::Log;

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
            let json = |e: serde_json::Error| crate::Error::Other(format!("encoding a lease: {e}"));
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
            .map_err(|e| crate::Error::Other(format!("the held leases' file is damaged: {e}")))?
            .into_lease()
    }
}

impl Held {
    /// The keys file's content: one line per exclusive lease (a check counts no other),
    /// `EXPIRES<TAB>PERSONA<TAB>OFFSET<TAB>LENGTH<TAB>SUM<TAB>PATH…`, where OFFSET and LENGTH place the whole
    /// lease in `held.jsonl` and SUM is [`line_sum`] of those bytes. Plain text split on tabs: a check on
    /// 2,000 leases then reads a sixth of the bytes and parses no JSON. `None` when a persona or a path holds
    /// a tab or a newline (then checks read `held.jsonl`).
    fn keys(&self) -> Result<Option<Vec<u8>>> {
        use std::io::Write;
        let base = self.bytes.as_ptr() as usize;
        let mut out = Vec::new();
        for (h, raw) in self.heads()? {
            if !h.exclusive {
                continue;
            }
            if std::iter::once(&h.persona)
                .chain(&h.paths)
                .any(|s| s.contains(['\t', '\n']))
            {
                return Ok(None);
            }
            let offset = raw.as_ptr() as usize - base;
            let _ = write!(
                out,
                "{}\t{}\t{offset}\t{}\t{}",
                h.expires,
                h.persona,
                raw.len(),
                line_sum(raw)
            );
            for p in &h.paths {
                out.push(b'\t');
                out.extend_from_slice(p.as_bytes());
            }
            out.push(b'\n');
        }
        Ok(Some(out))
    }
}

/// What the keys file holds of a lease's line: enough to tell that `held.jsonl` was rewritten since (the
/// keys file is sealed whole; the big file is read only where a check names a lease).
fn line_sum(raw: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(raw)[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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
    if let Some(p) = persona {
        crate::mail::message::validate_persona(p)?;
    }
    if let Some(r) = check_keys(log, now, persona, &targets, ignore_case)? {
        return Ok(r);
    }
    let (held, stamp) = held_stamped(log)?;
    // The keys file was missing, older than the tips or than `held.jsonl`: write it for the next check.
    if let (Some(stamp), false) = (&stamp, log.full_replay()) {
        if let Ok(Some(keys)) = held.keys() {
            let _ = write_sealed(&log.cache_dir(DIR), KEYS, &keys, stamp);
        }
    }
    check(&held, now, persona, &targets, ignore_case)
}

/// A line of the keys file ([`Held::keys`]), its strings borrowed from the file: nothing is allocated or
/// parsed per lease beyond its expiry and holder, the pre-commit hook's cost on every commit.
struct KeyLine<'a> {
    /// `OFFSET<TAB>LENGTH<TAB>SUM`: where the whole lease is in `held.jsonl`, read only for a lease a check
    /// names.
    at: &'a str,
    /// The lease's paths, tab-separated (`None`: it has none).
    paths: Option<&'a str>,
}

impl<'a> KeyLine<'a> {
    fn paths(&self) -> impl Iterator<Item = &'a str> {
        self.paths.into_iter().flat_map(|p| p.split('\t'))
    }

    /// Offset, length and [`line_sum`] of the whole lease in `held.jsonl`; `None` when damaged.
    fn at(&self) -> Option<(u64, usize, &'a str)> {
        let mut f = self.at.split('\t');
        Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?, f.next()?))
    }
}

/// The lines of a keys file ([`Held::keys`]) of the leases that can count for `persona` at `now` (live and
/// someone else's; the file holds exclusive leases only); `None` when the file is damaged.
fn parse_keys<'a>(bytes: &'a [u8], now: i64, persona: Option<&str>) -> Option<Vec<KeyLine<'a>>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = Vec::new();
    for line in text.split('\n').filter(|l| !l.is_empty()) {
        let (expires, rest) = line.split_once('\t')?;
        let (who, rest) = rest.split_once('\t')?;
        let expires: i64 = expires.parse().ok()?;
        // The leases that cannot count are skipped before anything else is looked at.
        if now >= expires || persona == Some(who) {
            continue;
        }
        // OFFSET, LENGTH and SUM, then the paths.
        let third_tab = rest.match_indices('\t').nth(2).map(|(i, _)| i);
        let (at, paths) = match third_tab {
            Some(i) => (&rest[..i], Some(&rest[i + 1..])),
            None => (rest, None),
        };
        lines.push(KeyLine { at, paths });
    }
    Some(lines)
}

/// [`check`] from the keys file ([`Held::keys`]), the pre-commit hook's path: only the keys of the leases
/// that count are split, and only the leases the check names are read from `held.jsonl`. `None` when the
/// keys file is missing, damaged or not at the tips, or a line it points at changed since.
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
    let Some(lines) = parse_keys(&bytes, now, persona) else {
        return Ok(None);
    };
    let file = std::cell::RefCell::new(None);
    let stale = std::cell::Cell::new(false);
    let lease = |n: usize| -> Result<Lease> {
        let changed = || {
            stale.set(true);
            crate::Error::Other("the held leases' file changed".into())
        };
        let (offset, len, sum) = lines[n].at().ok_or_else(changed)?;
        let mut file = file.borrow_mut();
        if file.is_none() {
            *file = std::fs::File::open(dir.join(FILE)).ok();
        }
        let mut raw = vec![0; len];
        let read = file.as_mut().is_some_and(|f| {
            f.seek(SeekFrom::Start(offset)).is_ok() && f.read_exact(&mut raw).is_ok()
        });
        if !read || line_sum(&raw) != sum {
            return Err(changed());
        }
        Held::lease(&raw)
    };
    let counting = lines.iter().enumerate().map(|(n, l)| (n, l.paths()));
    match check_heads(counting, lease, targets, ignore_case) {
        Err(_) if stale.get() => Ok(None),
        r => r.map(Some),
    }
}

fn fold(s: &str, ignore_case: bool) -> Cow<'_, str> {
    if ignore_case {
        Cow::Owned(s.to_ascii_lowercase())
    } else {
        Cow::Borrowed(s)
    }
}

/// A lease path without glob syntax, as the key a file's ancestors are looked up under (`./` and a trailing
/// `/` dropped, as [`Pattern::parse`] drops them); `None` for a glob.
fn literal_key(p: &str, ignore_case: bool) -> Option<Cow<'_, str>> {
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
    let (heads, raws): (Vec<Head<'_>>, Vec<&[u8]>) = held.heads()?.into_iter().unzip();
    let counting = heads
        .iter()
        .enumerate()
        .filter(|(_, h)| h.exclusive && h.live_at(now) && persona != Some(&*h.persona))
        .map(|(n, h)| (n, h.paths.iter().map(|p| &**p)));
    check_heads(counting, |n| Held::lease(raws[n]), targets, ignore_case)
}

/// The counting leases' paths indexed for files git named: a literal path (a file, or a directory and what
/// is under it) by its key, so that a file is looked up with each of its ancestors; a glob by its first
/// component ([`Index`]).
#[derive(Default)]
struct FileIndex<'a> {
    /// A key's last entry in `chain`.
    literal: foldhash::HashMap<Cow<'a, str>, usize>,
    /// (lease, the key's entry before this one or `usize::MAX`): a key held by several leases without a
    /// list allocated per key.
    chain: Vec<(usize, usize)>,
    globs: Index<usize>,
}

impl<'a> FileIndex<'a> {
    fn add(&mut self, lease: usize, path: &'a str, ignore_case: bool) -> Result<()> {
        match literal_key(path, ignore_case) {
            Some(k) => {
                let entry = self.chain.len();
                let before = self.literal.insert(k, entry).unwrap_or(usize::MAX);
                self.chain.push((lease, before));
            }
            None => self.globs.insert(Pattern::parse(path, ignore_case)?, lease),
        }
        Ok(())
    }

    /// (file, lease) for every lease that covers a file, in the files' order, each pair once.
    fn hits(&self, files: &[String], ignore_case: bool) -> Vec<(String, usize)> {
        let mut hits = Vec::new();
        let mut found = Vec::new();
        for f in files {
            found.clear();
            let key = fold(f, ignore_case);
            // A literal lease covers the file when it names the file or a directory above it.
            let ancestors = key.match_indices('/').map(|(i, _)| &key[..i]);
            for k in ancestors.chain([&*key]) {
                let mut entry = self.literal.get(k).copied().unwrap_or(usize::MAX);
                while let Some(&(lease, before)) = self.chain.get(entry) {
                    found.push(lease);
                    entry = before;
                }
            }
            if !self.globs.is_empty() {
                let file = Pattern::literal(f, ignore_case);
                found.extend(self.globs.overlapping(&file).copied());
            }
            found.sort_unstable();
            found.dedup();
            hits.extend(found.iter().map(|&n| (f.clone(), n)));
        }
        hits
    }
}

/// [`check`] over the leases that count, from either file: (lease, its paths); `lease(n)` reads the whole
/// lease `n`.
fn check_heads<'a, P: Iterator<Item = &'a str>>(
    counting: impl Iterator<Item = (usize, P)>,
    lease: impl Fn(usize) -> Result<Lease>,
    targets: &Targets,
    ignore_case: bool,
) -> Result<CheckReport> {
    let hits: Vec<(String, usize)> = match targets {
        Targets::Files(files) => {
            let mut index = FileIndex::default();
            for (n, paths) in counting {
                for p in paths {
                    index.add(n, p, ignore_case)?;
                }
            }
            index.hits(files, ignore_case)
        }
        Targets::Patterns(patterns) => {
            let mut idx = Index::default();
            for (n, paths) in counting {
                for p in paths {
                    idx.insert(Pattern::parse(p, ignore_case)?, n);
                }
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
                let l = lease(n)?;
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

    #[test]
    fn the_keys_file_answers_as_the_held_file_does() {
        let h = held(&[
            ("ann", "src/", true),
            ("bob", "./docs/a.md", true),
            ("cat", "**/*.toml", true),
            ("eve", "share", false),
            ("me", "mine", true),
        ]);
        let keys = h.keys().unwrap().expect("no tab in the paths");
        let files = Targets::Files(
            [
                "src/a.rs",
                "docs/a.md",
                "Cargo.toml",
                "share/x",
                "mine/x",
                "free",
            ]
            .map(String::from)
            .to_vec(),
        );
        for (now, persona) in [(10, Some("me")), (10, None), (10, Some("ann")), (100, None)] {
            let lines = parse_keys(&keys, now, persona).unwrap();
            let from_keys = check_heads(
                lines.iter().enumerate().map(|(n, l)| (n, l.paths())),
                |n| {
                    let (offset, len, sum) = lines[n].at().unwrap();
                    let raw = &h.bytes[offset as usize..offset as usize + len];
                    assert_eq!(line_sum(raw), sum);
                    Held::lease(raw)
                },
                &files,
                false,
            )
            .unwrap();
            let from_held = check(&h, now, persona, &files, false).unwrap();
            let names = |r: &CheckReport| {
                r.conflicts
                    .iter()
                    .map(|c| (c.path.clone(), c.lease.id.clone()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(names(&from_keys), names(&from_held), "{now} {persona:?}");
            assert_eq!(from_keys.checked, from_held.checked);
        }
        // The shared lease is left out; a damaged line makes the whole file unreadable.
        assert_eq!(
            keys.split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .count(),
            4
        );
        assert!(parse_keys(b"x\tann\t0\t1\tsum\tsrc\n", 10, None).is_none());
        // A tab in a path: no keys file, checks read the held file.
        assert!(held(&[("ann", "a\tb", true)]).keys().unwrap().is_none());
    }
}
