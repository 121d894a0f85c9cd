//! The exclusive held leases as a constant hash table, what the pre-commit hook reads on every commit.
//!
//! A check on a thousand changed files against two thousand leases used to split the keys of every lease
//! and build a hash map of them in each hook process: more of the check than reading anything. The table
//! is built once per log tip instead (`held.keys`, derived data sealed like every cache file, or in memory
//! from `held.jsonl`), and a check only looks files up in it: each file and each of its ancestor
//! directories is hashed in one pass over the file's bytes and probed, as a `cdb` is. Nothing is allocated
//! per lease; only the leases a check names are read whole from `held.jsonl` (their place and a checksum of
//! their bytes are in the table, so a rewritten `held.jsonl` is noticed).
//!
//! Layout (little-endian; every offset is into the content, bounds-checked on read):
//!
//! ```text
//! MAGIC (8 bytes)  n_leases u32  n_slots u32  n_entries u32  n_globs u32
//! leases   n_leases × (expires i64, at u32, len u32, persona u32, persona_len u32, sum [u8; 8])
//! slots    n_slots × u32         entry + 1 of a literal key hashed there (0: empty); a power of two
//! entries  n_entries × (key u32, key_len u32, lease u32)
//! globs    n_globs × (pattern u32, pattern_len u32, lease u32)
//! strings  the bytes the offsets above point at
//! ```
//!
//! A literal key is a lease path without glob syntax, `./` and a trailing `/` dropped ([`literal_key`]); it
//! covers a file when it names the file or a directory above it. Keys are hashed ASCII-case-folded, so one
//! table answers for both values of `core.ignoreCase` (the comparison after the probe folds or not).

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use super::pattern::{Index, Pattern};
use crate::kit::error::{Error, Result};

const MAGIC: &[u8; 8] = b"jlkeys2\n";
const HEADER: usize = MAGIC.len() + 16;
const LEASE: usize = 32;
const ENTRY: usize = 12;

/// What the table keeps of a lease's bytes in `held.jsonl`: enough to tell that the file was rewritten.
pub(crate) fn line_sum(raw: &[u8]) -> [u8; 8] {
    let mut sum = [0; 8];
    sum.copy_from_slice(&Sha256::digest(raw)[..8]);
    sum
}

/// A lease path without glob syntax, as the key a file's ancestors are looked up under (`./` and a trailing
/// `/` dropped, as [`Pattern::parse`] drops them); `None` for a glob.
fn literal_key(p: &str) -> Option<&str> {
    if p.contains(['*', '?', '[', '\\']) {
        return None;
    }
    let p = p.strip_prefix("./").unwrap_or(p);
    Some(p.strip_suffix('/').unwrap_or(p))
}

/// FNV-1a over ASCII-lowercased bytes, one byte at a time so that a file's ancestors hash on the way.
const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
fn fnv_step(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b.to_ascii_lowercase())).wrapping_mul(0x0100_0000_01b3)
}
fn slot_of(h: u64, n_slots: usize) -> usize {
    ((h ^ (h >> 29)) as usize) & (n_slots - 1)
}
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |h, &b| fnv_step(h, b))
}

fn u32_of(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::Other("too many held leases for the keys table".into()))
}

/// One exclusive lease as the table keeps it: its holder, paths and expiry, and where its whole lease is in
/// `held.jsonl` (offset and bytes).
pub(crate) struct Row<'a> {
    pub(crate) persona: &'a str,
    pub(crate) paths: Vec<&'a str>,
    pub(crate) expires: i64,
    pub(crate) offset: usize,
    pub(crate) raw: &'a [u8],
}

/// Encode the table of `rows` (the exclusive held leases), in their order.
pub(crate) fn encode(rows: &[Row<'_>]) -> Result<Vec<u8>> {
    let mut leases = Vec::new();
    let mut strings: Vec<u8> = Vec::new();
    let mut personas: std::collections::HashMap<&str, u32> = Default::default();
    let mut entries: Vec<(u32, u32, u32, u64)> = Vec::new();
    let mut globs: Vec<(u32, u32, u32)> = Vec::new();
    let string = |strings: &mut Vec<u8>, s: &str| -> Result<(u32, u32)> {
        let at = u32_of(strings.len())?;
        strings.extend_from_slice(s.as_bytes());
        Ok((at, u32_of(s.len())?))
    };
    for (n, row) in rows.iter().enumerate() {
        let persona = match personas.get(row.persona) {
            Some(&at) => at,
            None => {
                let (at, _) = string(&mut strings, row.persona)?;
                personas.insert(row.persona, at);
                at
            }
        };
        leases.extend_from_slice(&row.expires.to_le_bytes());
        leases.extend_from_slice(&u32_of(row.offset)?.to_le_bytes());
        leases.extend_from_slice(&u32_of(row.raw.len())?.to_le_bytes());
        leases.extend_from_slice(&persona.to_le_bytes());
        leases.extend_from_slice(&u32_of(row.persona.len())?.to_le_bytes());
        leases.extend_from_slice(&line_sum(row.raw));
        let n = u32_of(n)?;
        for &p in &row.paths {
            match literal_key(p) {
                Some(k) => {
                    let (at, len) = string(&mut strings, k)?;
                    entries.push((at, len, n, fnv(k.as_bytes())));
                }
                None => {
                    let (at, len) = string(&mut strings, p)?;
                    globs.push((at, len, n));
                }
            }
        }
    }
    let n_slots = if entries.is_empty() {
        0
    } else {
        (entries.len() * 2).next_power_of_two()
    };
    let mut slots = vec![0u32; n_slots];
    for (e, &(_, _, _, h)) in entries.iter().enumerate() {
        let mut s = slot_of(h, n_slots);
        while slots[s] != 0 {
            s = (s + 1) & (n_slots - 1);
        }
        slots[s] = u32_of(e + 1)?;
    }
    let mut out = Vec::with_capacity(
        HEADER + leases.len() + 4 * n_slots + ENTRY * (entries.len() + globs.len()) + strings.len(),
    );
    out.extend_from_slice(MAGIC);
    for n in [rows.len(), n_slots, entries.len(), globs.len()] {
        out.extend_from_slice(&u32_of(n)?.to_le_bytes());
    }
    out.extend_from_slice(&leases);
    for s in slots {
        out.extend_from_slice(&s.to_le_bytes());
    }
    for (at, len, n, _) in entries {
        for v in [at, len, n] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    for (at, len, n) in globs {
        for v in [at, len, n] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out.extend_from_slice(&strings);
    Ok(out)
}

/// A table read from its bytes; every access is bounds-checked, and a damaged table answers `None`.
pub(crate) struct Keys<'a> {
    leases: &'a [u8],
    slots: &'a [u8],
    entries: &'a [u8],
    globs: &'a [u8],
    strings: &'a [u8],
}

fn u32_at(b: &[u8], at: usize) -> Option<usize> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
}

/// Where a lease's bytes are in `held.jsonl`, and their [`line_sum`].
pub(crate) struct At {
    pub(crate) offset: u64,
    pub(crate) len: usize,
    pub(crate) sum: [u8; 8],
}

impl<'a> Keys<'a> {
    pub(crate) fn parse(bytes: &'a [u8]) -> Option<Keys<'a>> {
        let rest = bytes.strip_prefix(MAGIC)?;
        let n = |i: usize| u32_at(rest, 4 * i);
        let (n_leases, n_slots, n_entries, n_globs) = (n(0)?, n(1)?, n(2)?, n(3)?);
        if n_slots != 0 && (!n_slots.is_power_of_two() || n_slots < n_entries) {
            return None;
        }
        let rest = &rest[16..];
        let (leases, rest) = rest.split_at_checked(n_leases.checked_mul(LEASE)?)?;
        let (slots, rest) = rest.split_at_checked(n_slots.checked_mul(4)?)?;
        let (entries, rest) = rest.split_at_checked(n_entries.checked_mul(ENTRY)?)?;
        let (globs, strings) = rest.split_at_checked(n_globs.checked_mul(ENTRY)?)?;
        Some(Keys {
            leases,
            slots,
            entries,
            globs,
            strings,
        })
    }

    fn leases(&self) -> usize {
        self.leases.len() / LEASE
    }

    fn string(&self, at: usize, len: usize) -> Option<&'a [u8]> {
        self.strings.get(at..at.checked_add(len)?)
    }

    /// Whether lease `n` can count for `persona` at `now`: live, and someone else's.
    fn counts(&self, n: usize, now: i64, persona: Option<&str>) -> Option<bool> {
        let l = self.leases.get(n * LEASE..(n + 1) * LEASE)?;
        let expires = i64::from_le_bytes(l[..8].try_into().ok()?);
        if now >= expires {
            return Some(false);
        }
        let who = self.string(u32_at(l, 16)?, u32_at(l, 20)?)?;
        Some(persona.map(str::as_bytes) != Some(who))
    }

    /// Where lease `n` is in `held.jsonl`.
    pub(crate) fn at(&self, n: usize) -> Option<At> {
        let l = self.leases.get(n * LEASE..(n + 1) * LEASE)?;
        Some(At {
            offset: u32_at(l, 8)? as u64,
            len: u32_at(l, 12)?,
            sum: l[24..32].try_into().ok()?,
        })
    }

    /// (key or pattern, lease) of an entry table's row `i`.
    fn row(&self, table: &'a [u8], i: usize) -> Option<(&'a [u8], usize)> {
        let r = table.get(i * ENTRY..(i + 1) * ENTRY)?;
        Some((self.string(u32_at(r, 0)?, u32_at(r, 4)?)?, u32_at(r, 8)?))
    }

    /// The glob patterns of the leases that count, parsed; a malformed one is an error, as everywhere.
    fn globs(
        &self,
        now: i64,
        persona: Option<&str>,
        ignore_case: bool,
    ) -> Option<Result<Index<usize>>> {
        let mut index = Index::default();
        for i in 0..self.globs.len() / ENTRY {
            let (pattern, n) = self.row(self.globs, i)?;
            if !self.counts(n, now, persona)? {
                continue;
            }
            let pattern = std::str::from_utf8(pattern).ok()?;
            match Pattern::parse(pattern, ignore_case) {
                Ok(p) => index.insert(p, n),
                Err(e) => return Some(Err(e)),
            }
        }
        Some(Ok(index))
    }

    /// The leases (counting for `persona` at `now`) whose literal key is `key`, pushed to `found`.
    fn probe(
        &self,
        key: &[u8],
        h: u64,
        ignore_case: bool,
        counts: &mut dyn FnMut(usize) -> Option<bool>,
        found: &mut Vec<usize>,
    ) -> Option<()> {
        let n_slots = self.slots.len() / 4;
        let mut s = slot_of(h, n_slots);
        for _ in 0..n_slots {
            let e = u32_at(self.slots, 4 * s)?;
            if e == 0 {
                return Some(());
            }
            let (k, n) = self.row(self.entries, e - 1)?;
            let same = if ignore_case {
                k.eq_ignore_ascii_case(key)
            } else {
                k == key
            };
            if same && counts(n)? {
                found.push(n);
            }
            s = (s + 1) & (n_slots - 1);
        }
        Some(())
    }

    /// (file, lease) for every lease counting for `persona` at `now` that covers one of `files`, in the
    /// files' order and each file's leases in table order, each pair once. `None`: the table is damaged.
    pub(crate) fn file_hits(
        &self,
        files: &[String],
        now: i64,
        persona: Option<&str>,
        ignore_case: bool,
    ) -> Option<Result<Vec<(usize, usize)>>> {
        let globs = match self.globs(now, persona, ignore_case)? {
            Ok(g) => g,
            Err(e) => return Some(Err(e)),
        };
        // Whether a lease counts is decided once, when a file first meets it.
        let mut verdicts: Vec<u8> = vec![0; self.leases()];
        let mut counts = |n: usize| -> Option<bool> {
            let v = verdicts.get_mut(n)?;
            if *v == 0 {
                *v = if self.counts(n, now, persona)? { 1 } else { 2 };
            }
            Some(*v == 1)
        };
        let mut hits = Vec::new();
        let mut found = Vec::new();
        for (i, f) in files.iter().enumerate() {
            found.clear();
            let bytes = f.as_bytes();
            if !self.slots.is_empty() {
                let mut h = FNV_OFFSET;
                for (j, &b) in bytes.iter().enumerate() {
                    if b == b'/' {
                        self.probe(&bytes[..j], h, ignore_case, &mut counts, &mut found)?;
                    }
                    h = fnv_step(h, b);
                }
                self.probe(bytes, h, ignore_case, &mut counts, &mut found)?;
            }
            if !globs.is_empty() {
                let file = Pattern::literal(f, ignore_case);
                found.extend(globs.overlapping(&file).copied());
            }
            found.sort_unstable();
            found.dedup();
            hits.extend(found.iter().map(|&n| (i, n)));
        }
        Some(Ok(hits))
    }

    /// Every path of the leases counting for `persona` at `now`, as (lease, path): literal keys as
    /// [`literal_key`] left them, which parse to the same pattern.
    pub(crate) fn paths(
        &self,
        now: i64,
        persona: Option<&str>,
    ) -> Option<Vec<(usize, Cow<'a, str>)>> {
        let mut out = Vec::new();
        for table in [self.entries, self.globs] {
            for i in 0..table.len() / ENTRY {
                let (p, n) = self.row(table, i)?;
                if self.counts(n, now, persona)? {
                    out.push((n, String::from_utf8_lossy(p)));
                }
            }
        }
        out.sort_by_key(|&(n, _)| n);
        Some(out)
    }
}
