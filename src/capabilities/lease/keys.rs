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

#[cfg(test)]
mod tests {
    use super::*;

    /// Lease rows as `held.rs` makes them: (persona, paths, expires), each lease's bytes a line of its own.
    fn table(leases: &[(&str, &[&str], i64)]) -> (Vec<String>, Vec<u8>) {
        let lines: Vec<String> = leases
            .iter()
            .enumerate()
            .map(|(n, (p, paths, e))| {
                format!("{{\"n\":{n},\"persona\":\"{p}\",\"paths\":{paths:?},\"expires\":{e}}}\n")
            })
            .collect();
        let mut offset = 0;
        let rows: Vec<Row<'_>> = leases
            .iter()
            .zip(&lines)
            .map(|((persona, paths, expires), line)| {
                let row = Row {
                    persona,
                    paths: paths.to_vec(),
                    expires: *expires,
                    offset,
                    raw: line.as_bytes(),
                };
                offset += line.len();
                row
            })
            .collect();
        let bytes = encode(&rows).unwrap();
        (lines, bytes)
    }

    fn hits(
        bytes: &[u8],
        files: &[&str],
        now: i64,
        persona: Option<&str>,
        ignore_case: bool,
    ) -> Vec<(usize, usize)> {
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        Keys::parse(bytes)
            .unwrap()
            .file_hits(&files, now, persona, ignore_case)
            .unwrap()
            .unwrap()
    }

    /// FNV-1a's published test vectors (64-bit), with ASCII folded: the hash is part of the table's format,
    /// which a hook of one build reads after another build wrote it.
    #[test]
    fn keys_hash_as_fnv1a_of_the_ascii_lowercased_bytes() {
        assert_eq!(fnv(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(fnv(b"FooBar"), fnv(b"foobar"));
        assert_eq!(fnv_step(FNV_OFFSET, b'A'), fnv(b"a"));
        // The slot folds the high bits in: (h ^ h >> 29) masked to the table.
        let h = 0x8594_4171_f739_67e8u64;
        assert_eq!(slot_of(h, 1 << 20), ((h ^ (h >> 29)) & 0xf_ffff) as usize);
        assert_eq!(slot_of(h, 1 << 20), 0xb_6c67);
        assert_eq!(slot_of(u64::MAX, 8), 0);
        assert_eq!(slot_of(7, 8), 7);
        assert_eq!(slot_of(1 << 29, 8), 1);
        assert_eq!(slot_of(1 << 31, 8), 4);
    }

    /// The encoded table, byte for byte (docs: the layout in this module's doc): header counts, each
    /// lease's fields, slots at their hashes, entries and globs, then the strings, a persona once.
    #[test]
    fn the_table_is_laid_out_as_documented() {
        let (lines, bytes) = table(&[
            ("ann", &["./src/a.rs", "docs/"], 100),
            ("bob", &["*.md"], -5),
            ("ann", &["x"], 7),
        ]);
        let u32s = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        assert_eq!(&bytes[..8], MAGIC);
        let (n_leases, n_slots, n_entries, n_globs) = (u32s(8), u32s(12), u32s(16), u32s(20));
        assert_eq!((n_leases, n_slots, n_entries, n_globs), (3, 8, 3, 1));
        assert_eq!(HEADER, 24);
        // Leases: expires, offset, length, persona string, persona length, checksum of the line.
        let lease = |n: usize| &bytes[HEADER + LEASE * n..HEADER + LEASE * (n + 1)];
        let strings_at = HEADER + LEASE * 3 + 4 * 8 + ENTRY * 4;
        let strings = &bytes[strings_at..];
        assert_eq!(strings, b"annsrc/a.rsdocsbob*.mdx");
        for (n, (expires, persona_at)) in
            [(100i64, 0usize), (-5, 15), (7, 0)].into_iter().enumerate()
        {
            let l = lease(n);
            assert_eq!(i64::from_le_bytes(l[..8].try_into().unwrap()), expires);
            let offset: usize = lines[..n].iter().map(String::len).sum();
            assert_eq!(
                u32::from_le_bytes(l[8..12].try_into().unwrap()) as usize,
                offset
            );
            assert_eq!(
                u32::from_le_bytes(l[12..16].try_into().unwrap()) as usize,
                lines[n].len()
            );
            assert_eq!(
                u32::from_le_bytes(l[16..20].try_into().unwrap()) as usize,
                persona_at
            );
            assert_eq!(u32::from_le_bytes(l[20..24].try_into().unwrap()), 3);
            assert_eq!(l[24..32], Sha256::digest(lines[n].as_bytes())[..8]);
            assert_eq!(line_sum(lines[n].as_bytes()), l[24..32]);
        }
        // Entries: (key, length, lease) in order; globs likewise.
        let entries_at = HEADER + LEASE * 3 + 4 * 8;
        let entry = |i: usize| {
            let at = entries_at + ENTRY * i;
            (u32s(at), u32s(at + 4), u32s(at + 8))
        };
        assert_eq!(
            [entry(0), entry(1), entry(2)],
            [(3, 8, 0), (11, 4, 0), (22, 1, 2)]
        );
        assert_eq!(entry(3), (18, 4, 1), "the glob");
        // Slots: each entry (plus one) at its hash's slot, the next free one on a collision.
        let mut expect = [0usize; 8];
        for (e, key) in ["src/a.rs", "docs", "x"].iter().enumerate() {
            let mut s = slot_of(fnv(key.as_bytes()), 8);
            while expect[s] != 0 {
                s = (s + 1) % 8;
            }
            expect[s] = e + 1;
        }
        let slots: Vec<usize> = (0..8).map(|i| u32s(HEADER + LEASE * 3 + 4 * i)).collect();
        assert_eq!(slots, expect);
        assert_eq!(bytes.len(), strings_at + 23);
        let keys = Keys::parse(&bytes).unwrap();
        let at = keys.at(1).unwrap();
        assert_eq!(
            (at.offset as usize, at.len),
            (lines[0].len(), lines[1].len())
        );
        assert_eq!(at.sum, line_sum(lines[1].as_bytes()));
        assert!(keys.at(3).is_none());
    }

    /// No literal key: no slots at all, and a check still answers from the globs.
    #[test]
    fn a_table_of_globs_only_has_no_slots() {
        let (_, bytes) = table(&[("ann", &["src/**"], 100)]);
        assert_eq!(u32::from_le_bytes(bytes[12..16].try_into().unwrap()), 0);
        assert_eq!(hits(&bytes, &["src/a.rs", "b"], 0, None, false), [(0, 0)]);
        let (_, bytes) = table(&[]);
        assert_eq!(bytes.len(), HEADER);
        assert!(hits(&bytes, &["src/a.rs"], 0, None, false).is_empty());
    }

    /// A literal key covers the file it names and everything under that directory, nothing else; globs
    /// cover what they match; a lease counts while it lives and for others than its holder.
    #[test]
    fn a_check_finds_the_leases_that_cover_each_file() {
        let (_, bytes) = table(&[
            ("ann", &["./src/a.rs", "docs/"], 100),
            ("bob", &["*.md", "docs/guide"], 50),
            ("cyd", &["src"], 10),
        ]);
        let files = [
            "src/a.rs",
            "src/a.rsx",
            "src/ab",
            "docs/guide/intro.md",
            "docsx/y",
            "README.md",
            "other",
        ];
        assert_eq!(
            hits(&bytes, &files, 0, None, false),
            [(0, 0), (0, 2), (1, 2), (2, 2), (3, 0), (3, 1), (5, 1)]
        );
        // Expired at `now` (the expiry itself counts as gone).
        assert_eq!(
            hits(&bytes, &files, 10, None, false),
            [(0, 0), (3, 0), (3, 1), (5, 1)]
        );
        assert_eq!(hits(&bytes, &files, 50, None, false), [(0, 0), (3, 0)]);
        assert!(hits(&bytes, &files, 100, None, false).is_empty());
        // A persona's own leases do not count against it.
        assert_eq!(
            hits(&bytes, &files, 0, Some("ann"), false),
            [(0, 2), (1, 2), (2, 2), (3, 1), (5, 1)]
        );
        assert_eq!(
            hits(&bytes, &files, 0, Some("bob"), false),
            [(0, 0), (0, 2), (1, 2), (2, 2), (3, 0)]
        );
        assert_eq!(hits(&bytes, &files, 0, Some("an"), false).len(), 7);
        // Case: folded only under `core.ignoreCase`, for keys and globs alike.
        let upper = ["SRC/A.RS", "Docs/Guide/x", "readme.MD"];
        assert!(hits(&bytes, &upper, 0, None, false).is_empty());
        assert_eq!(
            hits(&bytes, &upper, 0, None, true),
            [(0, 0), (0, 2), (1, 0), (1, 1), (2, 1)]
        );
    }

    /// Many keys, colliding and wrapping around the slots: every one is found, and each (file, lease) pair
    /// once, however many of a lease's keys cover the file.
    #[test]
    fn every_key_of_a_full_table_is_found() {
        let names: Vec<String> = (0..300).map(|i| format!("d{}/f{i}", i % 7)).collect();
        let paths: Vec<&str> = names.iter().map(String::as_str).collect();
        let (_, bytes) = table(&[("ann", &paths[..150], 9), ("bob", &paths[150..], 9)]);
        let keys = Keys::parse(&bytes).unwrap();
        assert_eq!(keys.slots.len() / 4, 1024);
        for (i, f) in names.iter().enumerate() {
            assert_eq!(
                hits(&bytes, &[f], 0, None, false),
                [(0, usize::from(i >= 150))],
                "{f}"
            );
        }
        let (_, bytes) = table(&[("ann", &["a", "a/b", "a/b/c", "a/b/c"], 9)]);
        assert_eq!(hits(&bytes, &["a/b/c/d"], 0, None, false), [(0, 0)]);
    }

    #[test]
    fn paths_are_the_counting_leases_keys_and_globs_in_lease_order() {
        let (_, bytes) = table(&[
            ("ann", &["./src/", "*.rs"], 100),
            ("bob", &["docs"], 5),
            ("cyd", &["lib/**", "b"], 100),
        ]);
        let keys = Keys::parse(&bytes).unwrap();
        let show = |v: Vec<(usize, Cow<'_, str>)>| {
            v.into_iter()
                .map(|(n, p)| format!("{n}:{p}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            show(keys.paths(0, None).unwrap()),
            ["0:src", "0:*.rs", "1:docs", "2:b", "2:lib/**"]
        );
        assert_eq!(
            show(keys.paths(5, Some("cyd")).unwrap()),
            ["0:src", "0:*.rs"]
        );
        assert!(keys.paths(100, None).unwrap().is_empty());
    }

    #[test]
    fn literal_keys_drop_dot_slash_and_a_trailing_slash_and_globs_have_none() {
        assert_eq!(literal_key("./a/b/"), Some("a/b"));
        assert_eq!(literal_key("a/b"), Some("a/b"));
        assert_eq!(literal_key("./"), Some(""));
        for glob in ["*.rs", "a?", "[ab]", "a\\*"] {
            assert_eq!(literal_key(glob), None, "{glob}");
        }
    }

    /// A damaged table answers `None` (the caller reads `held.jsonl` instead), never a wrong answer or a panic.
    #[test]
    fn a_damaged_table_answers_none() {
        let (_, bytes) = table(&[("ann", &["a", "b", "*.md"], 100), ("bob", &["c"], 100)]);
        assert!(Keys::parse(&bytes).is_some());
        let set = |at: usize, v: u32| {
            let mut b = bytes.clone();
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            b
        };
        assert!(Keys::parse(b"jlkeys1\n").is_none());
        assert!(Keys::parse(&bytes[..HEADER - 1]).is_none());
        let mut wrong_magic = bytes.clone();
        wrong_magic[0] ^= 1;
        assert!(Keys::parse(&wrong_magic).is_none());
        // Slots not a power of two, or fewer than the entries.
        assert!(Keys::parse(&set(12, 6)).is_none());
        assert!(Keys::parse(&set(12, 2)).is_none());
        // Counts beyond the bytes.
        assert!(Keys::parse(&set(8, 1000)).is_none());
        assert!(Keys::parse(&set(20, 1000)).is_none());
        assert!(Keys::parse(&set(8, u32::MAX)).is_none());
        // An entry pointing past the strings, or at a lease that is not there: a check says "damaged".
        let entries_at = HEADER + LEASE * 2 + 4 * 8;
        let files = vec!["a".to_owned(), "c".to_owned(), "x.md".to_owned()];
        for (at, v) in [
            (entries_at, 10_000),
            (entries_at + 4, 10_000),
            (entries_at + 8, 7),
        ] {
            let b = set(at, v);
            let keys = Keys::parse(&b).unwrap();
            assert!(keys.file_hits(&files, 0, None, false).is_none(), "{at}");
            assert!(keys.paths(0, None).is_none(), "{at}");
        }
        let globs_at = entries_at + ENTRY * 3;
        let b = set(globs_at + 8, 9);
        assert!(Keys::parse(&b)
            .unwrap()
            .file_hits(&files, 0, None, false)
            .is_none());
        // A persona past the strings.
        let b = set(HEADER + 16, 10_000);
        assert!(Keys::parse(&b)
            .unwrap()
            .file_hits(&files, 0, None, false)
            .is_none());
        // A glob that does not parse is an error, as everywhere.
        let (_, bytes) = table(&[("ann", &["a[", "b"], 100)]);
        let keys = Keys::parse(&bytes).unwrap();
        assert!(keys.file_hits(&files, 0, None, false).unwrap().is_err());
        assert!(keys
            .file_hits(&files, 0, Some("ann"), false)
            .unwrap()
            .is_ok());
    }
}
