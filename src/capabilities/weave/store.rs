//! Writing the objects a weave kept in memory: once, at the end.
//!
//! Few objects become loose objects, as git's `transfer.unpackLimit` would have it. Many become one pack:
//! creating a file costs far more than compressing a small object (on this project's ext4 machines, hundreds of
//! microseconds per file), so 300 patches' 1,600 blobs, trees and commits go into one pack, with its version 2
//! index written from the ids, offsets and CRC-32s known while packing (indexing it afterwards would inflate
//! and hash every object a second time).
//!
//! Compressing was most of a real-history weave (git.git's 300 patches rewrite 85 MB of blobs and trees), and
//! most of it was the same trees and files again: each patch rewrites the root tree, its directories' trees and
//! the files it touches, which an earlier patch of the run often wrote already. So the pack is written in the
//! order the commits were made, and an object whose previous version at the same path is in the pack too is
//! stored as a delta against it (`OFS_DELTA`): copies of the common start and end and of every line the two
//! share, and the bytes between ([`encode_delta`]), which for a tree with one entry changed, or a file
//! with a few hunks, is a few dozen bytes. Chains stop at [`MAX_DEPTH`], as `git pack-objects --depth` does;
//! `git gc` finds better deltas later. Entries are deltified and compressed on every core (each is
//! independent of where it lands) and laid out, hashed and written in order by one thread.

use std::collections::HashMap;

use gix::objs::Kind;

use crate::kit::error::{Error, Result};

/// Below this many objects, write loose objects.
pub const PACK_THRESHOLD: usize = 100;

/// Longest delta chain written (git's `pack.depth` default).
pub const MAX_DEPTH: u32 = 50;

/// Move every object kept in `mem`'s object memory into `disk`'s object database; returns how many.
pub fn flush(mem: &gix::Repository, disk: &gix::Repository) -> Result<usize> {
    use gix::objs::Write;
    let Some(storage) = mem.objects.reset_object_memory() else {
        return Ok(0);
    };
    let n = storage.len();
    if n < PACK_THRESHOLD {
        for (id, (kind, data)) in storage.iter() {
            disk.objects.write_buf_with_known_id(*kind, data, *id)?;
        }
        return Ok(n);
    }
    let objects: HashMap<gix::ObjectId, (Kind, &[u8])> = storage
        .iter()
        .map(|(id, (kind, data))| (*id, (*kind, data.as_slice())))
        .collect();
    let hash = disk.object_hash();
    let plan = plan(&objects, hash);
    let dir = disk.objects.store_ref().path().join("pack");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let temporary = || {
        tempfile::NamedTempFile::new_in(&dir)
            .map_err(|e| Error::io(format!("creating a temporary file in {}", dir.display()), e))
    };
    let mut pack = temporary()?;
    let (pack_sum, mut entries) = write_pack(hash, &objects, &plan, pack.as_file_mut())?;
    entries.sort_by_key(|(id, _)| *id);
    let ids: Vec<gix::ObjectId> = entries.iter().map(|(id, _)| *id).collect();
    let entries: Vec<Entry> = entries.into_iter().map(|(_, e)| e).collect();
    // The index is written from what we already know (ids, offsets, CRC-32s): indexing the stream with gix
    // would inflate and hash every object again, which was a tenth of a real-history weave.
    let index = index_v2(hash, &ids, &entries, pack_sum.as_bytes())?;
    let name = format!("pack-{}", pack_sum.to_hex());
    let persist = |tmp: tempfile::NamedTempFile, ext: &str| -> Result<()> {
        let path = dir.join(format!("{name}.{ext}"));
        tmp.persist(&path)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e.error))?;
        Ok(())
    };
    // The pack first, its index last: git and gix only see a pack once its index exists.
    persist(pack, "pack")?;
    let mut idx = temporary()?;
    std::io::Write::write_all(&mut idx, &index)
        .map_err(|e| Error::io("writing a pack index", e))?;
    persist(idx, "idx")?;
    Ok(n)
}

/// Where an object sits in a pack, and the CRC-32 of its packed bytes.
type Entry = (u64, u32);

/// A version 2 pack index for `ids` (sorted) at `entries` (offset, CRC-32 of the packed bytes).
fn index_v2(
    hash: gix::hash::Kind,
    ids: &[gix::ObjectId],
    entries: &[Entry],
    pack_sum: &[u8],
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(8 + 1024 + ids.len() * (hash.len_in_bytes() + 12) + 64);
    out.extend_from_slice(b"\xfftOc");
    out.extend_from_slice(&2u32.to_be_bytes());
    let mut fanout = [0u32; 256];
    for id in ids {
        fanout[id.as_bytes()[0] as usize] += 1;
    }
    let mut total = 0u32;
    for f in fanout {
        total += f;
        out.extend_from_slice(&total.to_be_bytes());
    }
    for id in ids {
        out.extend_from_slice(id.as_bytes());
    }
    for (_, crc) in entries {
        out.extend_from_slice(&crc.to_be_bytes());
    }
    let mut large = Vec::new();
    for (offset, _) in entries {
        if *offset < 0x8000_0000 {
            out.extend_from_slice(&(*offset as u32).to_be_bytes());
        } else {
            out.extend_from_slice(&(0x8000_0000u32 | large.len() as u32).to_be_bytes());
            large.push(*offset);
        }
    }
    for o in large {
        out.extend_from_slice(&o.to_be_bytes());
    }
    out.extend_from_slice(pack_sum);
    let mut h = gix::hash::hasher(hash);
    h.update(&out);
    let sum = h
        .try_finalize()
        .map_err(|e| Error::wrap("hashing the pack index", e))?;
    out.extend_from_slice(sum.as_bytes());
    Ok(out)
}

/// The order objects go into the pack, each with the object it is stored as a delta against, if any.
type Plan = Vec<(gix::ObjectId, Option<gix::ObjectId>)>;

/// Commits in the order they were made (parents first), each followed by the objects its tree added, bases
/// before their deltas; then whatever no commit reaches (3-way preimage trees), by id. An object's delta base
/// is the object at the same path in the first parent's tree, when that is in the pack too.
fn plan(objects: &HashMap<gix::ObjectId, (Kind, &[u8])>, hash: gix::hash::Kind) -> Plan {
    let mut commits: Vec<(gix::ObjectId, gix::ObjectId, Option<gix::ObjectId>)> = Vec::new();
    for (id, (kind, data)) in objects {
        if *kind != Kind::Commit {
            continue;
        }
        let Ok(c) = gix::objs::CommitRef::from_bytes(data, hash) else {
            continue;
        };
        commits.push((*id, c.tree(), c.parents().next()));
    }
    // Parents first: a commit's depth is the length of its chain of parents held in memory.
    let parent: HashMap<gix::ObjectId, Option<gix::ObjectId>> =
        commits.iter().map(|(id, _, p)| (*id, *p)).collect();
    let depth = |mut id: gix::ObjectId| {
        let mut d = 0usize;
        while let Some(Some(p)) = parent.get(&id) {
            d += 1;
            id = *p;
            if d > parent.len() {
                break;
            }
        }
        d
    };
    commits.sort_by_cached_key(|(id, _, _)| (depth(*id), *id));
    let tree_of: HashMap<gix::ObjectId, gix::ObjectId> =
        commits.iter().map(|(id, tree, _)| (*id, *tree)).collect();

    let mut placer = Placer {
        objects,
        hash,
        placed: HashMap::with_capacity(objects.len()),
        plan: Vec::with_capacity(objects.len()),
    };
    for (id, tree, parent) in &commits {
        let old_root = parent.and_then(|p| tree_of.get(&p).copied());
        placer.tree(*tree, old_root);
        placer.place(*id, None);
    }
    let mut rest: Vec<gix::ObjectId> = objects
        .keys()
        .filter(|id| !placer.placed.contains_key(*id))
        .copied()
        .collect();
    rest.sort();
    for id in rest {
        placer.place(id, None);
    }
    placer.plan
}

struct Placer<'a, 'b> {
    objects: &'a HashMap<gix::ObjectId, (Kind, &'b [u8])>,
    hash: gix::hash::Kind,
    /// Placed objects and the length of their delta chain.
    placed: HashMap<gix::ObjectId, u32>,
    plan: Plan,
}

impl Placer<'_, '_> {
    fn place(&mut self, id: gix::ObjectId, base: Option<gix::ObjectId>) {
        if self.placed.contains_key(&id) || !self.objects.contains_key(&id) {
            return;
        }
        let base = base.filter(|b| *b != id).and_then(|b| {
            let d = *self.placed.get(&b)?;
            (d < MAX_DEPTH).then_some((b, d + 1))
        });
        self.placed.insert(id, base.map_or(0, |(_, d)| d));
        self.plan.push((id, base.map(|(b, _)| b)));
    }

    /// Place the tree `new` and what it holds that is not placed yet, against `old` (the tree at the same path in
    /// the parent commit) and its entries.
    fn tree(&mut self, new: gix::ObjectId, old: Option<gix::ObjectId>) {
        if self.placed.contains_key(&new) {
            return;
        }
        let Some((Kind::Tree, data)) = self.objects.get(&new).copied() else {
            return;
        };
        let old_entries: HashMap<&gix::bstr::BStr, gix::ObjectId> = old
            .and_then(|o| match self.objects.get(&o) {
                Some((Kind::Tree, d)) => Some(*d),
                _ => None,
            })
            .map(|d| {
                gix::objs::TreeRefIter::from_bytes(d, self.hash)
                    .filter_map(|e| e.ok())
                    .map(|e| (e.filename, e.oid.to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        for e in gix::objs::TreeRefIter::from_bytes(data, self.hash).filter_map(|e| e.ok()) {
            let id = e.oid.to_owned();
            if self.placed.contains_key(&id) || !self.objects.contains_key(&id) {
                continue;
            }
            let before = old_entries.get(e.filename).copied();
            if e.mode.is_tree() {
                self.tree(id, before);
            } else {
                self.place(id, before);
            }
        }
        self.place(new, old.filter(|o| self.placed.contains_key(o)));
    }
}

/// Each packed object's id with its offset and CRC-32, in pack order: what the pack index records.
type IndexEntries = Vec<(gix::ObjectId, Entry)>;

/// One entry of the pack before its place is known: its type, the size its header gives, the position in
/// the plan of its delta base, and its compressed bytes.
struct Packed {
    t: u8,
    size: usize,
    base: Option<usize>,
    zipped: Vec<u8>,
}

/// Write a version 2 pack holding `objects` in the order of `plan` to `out`; returns its trailing checksum
/// and each object's offset and the CRC-32 of its packed bytes (what the index records).
///
/// Deltas and compression are most of the work and each entry's are independent of where the entry lands
/// (an `OFS_DELTA` names its base by distance, written afterwards), so entries are deltified and compressed
/// on every core, then laid out in order, hashed and written by one thread.
fn write_pack(
    hash: gix::hash::Kind,
    objects: &HashMap<gix::ObjectId, (Kind, &[u8])>,
    plan: &Plan,
    out: &mut std::fs::File,
) -> Result<(gix::ObjectId, IndexEntries)> {
    let position: HashMap<gix::ObjectId, usize> = plan
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (*id, i))
        .collect();
    let packed = crate::kit::par::map_with(
        plan,
        || (Deflater::new(), Vec::new()),
        |(z, delta), i, (id, base)| -> Result<Packed> {
            let (kind, data) = objects[id];
            // A base must come earlier in the pack: an `OFS_DELTA` only points backwards.
            let base = base
                .and_then(|b| Some((*position.get(&b).filter(|&&p| p < i)?, objects.get(&b)?.1)));
            let as_delta = base.filter(|(_, base_data)| {
                delta.clear();
                encode_delta(base_data, data, (data.len() / 2).saturating_sub(1), delta)
            });
            let mut zipped = Vec::new();
            Ok(match as_delta {
                Some((base, _)) => {
                    z.deflate(delta, &mut zipped)?;
                    Packed {
                        t: 6,
                        size: delta.len(),
                        base: Some(base),
                        zipped,
                    }
                }
                None => {
                    z.deflate(data, &mut zipped)?;
                    let t = match kind {
                        Kind::Commit => 1,
                        Kind::Tree => 2,
                        Kind::Blob => 3,
                        Kind::Tag => 4,
                    };
                    Packed {
                        t,
                        size: data.len(),
                        base: None,
                        zipped,
                    }
                }
            })
        },
    );
    let mut w = HashingWriter {
        w: std::io::BufWriter::with_capacity(1 << 20, out),
        h: gix::hash::hasher(hash),
    };
    let mut head = Vec::with_capacity(12);
    head.extend_from_slice(b"PACK");
    head.extend_from_slice(&2u32.to_be_bytes());
    head.extend_from_slice(&(plan.len() as u32).to_be_bytes());
    w.put(&head)?;
    let mut offset = head.len() as u64;
    let mut offsets = Vec::with_capacity(plan.len());
    let mut entries: IndexEntries = Vec::with_capacity(plan.len());
    for ((id, _), p) in plan.iter().zip(packed) {
        let p = p?;
        head.clear();
        entry_header(&mut head, p.t, p.size);
        if let Some(b) = p.base {
            ofs_delta_offset(&mut head, offset - offsets[b]);
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&head);
        crc.update(&p.zipped);
        w.put(&head)?;
        w.put(&p.zipped)?;
        offsets.push(offset);
        entries.push((*id, (offset, crc.finalize())));
        offset += (head.len() + p.zipped.len()) as u64;
    }
    let HashingWriter { mut w, h } = w;
    let sum = h
        .try_finalize()
        .map_err(|e| Error::wrap("hashing the pack", e))?;
    std::io::Write::write_all(&mut w, sum.as_bytes())
        .and_then(|()| std::io::Write::flush(&mut w))
        .map_err(|e| Error::io("writing a pack", e))?;
    Ok((sum, entries))
}

/// Writes the pack and hashes what it writes, for the checksum that ends it.
struct HashingWriter<'a> {
    w: std::io::BufWriter<&'a mut std::fs::File>,
    h: gix::hash::Hasher,
}

impl HashingWriter<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.h.update(bytes);
        std::io::Write::write_all(&mut self.w, bytes).map_err(|e| Error::io("writing a pack", e))
    }
}

/// A pack entry's type and size: 3 bits of type and the size in little-endian groups of 7 bits.
fn entry_header(out: &mut Vec<u8>, t: u8, mut size: usize) {
    let mut byte = (t << 4) | (size & 0x0f) as u8;
    size >>= 4;
    while size > 0 {
        out.push(byte | 0x80);
        byte = (size & 0x7f) as u8;
        size >>= 7;
    }
    out.push(byte);
}

/// How far back an `OFS_DELTA`'s base starts, in git's encoding (big-endian groups of 7 bits, each group but
/// the last biased by one).
fn ofs_delta_offset(out: &mut Vec<u8>, mut ofs: u64) {
    let mut buf = [0u8; 10];
    let mut pos = buf.len() - 1;
    buf[pos] = (ofs & 0x7f) as u8;
    ofs >>= 7;
    while ofs > 0 {
        ofs -= 1;
        pos -= 1;
        buf[pos] = 0x80 | (ofs & 0x7f) as u8;
        ofs >>= 7;
    }
    out.extend_from_slice(&buf[pos..]);
}

/// Lines shorter than this anchor no copy: `}` and blank lines recur everywhere and would match in the
/// wrong place; a copy found through a longer line runs on over them anyway.
const MIN_ANCHOR: usize = 8;

/// Fewer differing bytes than this between the common start and end are inserted as they are.
const SEARCH_ABOVE: usize = 256;

/// A git delta turning `base` into `target`, in `out`; false (and `out` unfinished) once it would be longer
/// than `limit` bytes.
///
/// The common start and end are copies. Between them, a patch with several hunks far apart leaves most
/// lines as they were: each line of the target (of at least [`MIN_ANCHOR`] bytes) is looked up among the
/// base's, and a line found there starts a copy that runs on, backwards and forwards, as far as both agree;
/// what no copy covers is inserted. This is git's `diff-delta` with lines for its 16-byte windows: text
/// changed in many places (a changelog's release, a file's several hunks) becomes a few copies instead of
/// a whole object to compress. Content without lines in common is given up as soon as the inserts pass
/// `limit`.
fn encode_delta(base: &[u8], target: &[u8], limit: usize, out: &mut Vec<u8>) -> bool {
    fn varint(out: &mut Vec<u8>, mut n: usize) {
        while n >= 0x80 {
            out.push(0x80 | (n & 0x7f) as u8);
            n >>= 7;
        }
        out.push(n as u8);
    }
    fn copy(out: &mut Vec<u8>, mut offset: usize, mut len: usize) {
        while len > 0 {
            let n = len.min(0xffff);
            let mut cmd = 0x80u8;
            let at = out.len();
            out.push(0);
            for (i, b) in (offset as u32).to_le_bytes().into_iter().enumerate() {
                if b != 0 {
                    cmd |= 1 << i;
                    out.push(b);
                }
            }
            for (i, b) in (n as u16).to_le_bytes().into_iter().enumerate() {
                if b != 0 {
                    cmd |= 0x10 << i;
                    out.push(b);
                }
            }
            out[at] = cmd;
            offset += n;
            len -= n;
        }
    }
    fn insert(out: &mut Vec<u8>, data: &[u8]) {
        for chunk in data.chunks(0x7f) {
            out.push(chunk.len() as u8);
            out.extend_from_slice(chunk);
        }
    }
    use gix::bstr::ByteSlice;
    // Copies name their offset in 32 bits.
    if base.len() > u32::MAX as usize {
        return false;
    }
    varint(out, base.len());
    varint(out, target.len());
    let max = base.len().min(target.len());
    let prefix = common_prefix(base, target);
    let suffix = common_prefix_rev(&base[prefix..], &target[prefix..]).min(max - prefix);
    copy(out, 0, prefix);
    let end = target.len() - suffix;
    let base_middle = &base[prefix..base.len() - suffix];
    if end - prefix < SEARCH_ABOVE || base_middle.is_empty() {
        insert(out, &target[prefix..end]);
    } else {
        let mut lines: HashMap<&[u8], usize, foldhash::fast::RandomState> = HashMap::default();
        let mut at = prefix;
        for line in base_middle.split_inclusive(|&b| b == b'\n') {
            if line.len() >= MIN_ANCHOR {
                lines.entry(line).or_insert(at);
            }
            at += line.len();
        }
        // `target[pending..t]` is not written yet: it becomes an insert unless a copy reaches back over it.
        let (mut pending, mut t) = (prefix, prefix);
        while t < end {
            let line_end = target[t..end].find_byte(b'\n').map_or(end, |i| t + i + 1);
            let found = (line_end - t >= MIN_ANCHOR)
                .then(|| lines.get(&target[t..line_end]))
                .flatten();
            let Some(&b) = found else {
                t = line_end;
                if out.len() + (t - pending) > limit {
                    return false;
                }
                continue;
            };
            let (mut from, mut b) = (t, b);
            while from > pending && b > 0 && base[b - 1] == target[from - 1] {
                from -= 1;
                b -= 1;
            }
            let n = common_prefix(&base[b..], &target[from..end]);
            insert(out, &target[pending..from]);
            copy(out, b, n);
            t = from + n;
            pending = t;
            if out.len() > limit {
                return false;
            }
        }
        insert(out, &target[pending..end]);
    }
    copy(out, base.len() - suffix, suffix);
    out.len() <= limit
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut n = 0;
    for (x, y) in a.chunks(16).zip(b.chunks(16)) {
        if x == y {
            n += x.len();
        } else {
            return n + x.iter().zip(y).take_while(|(p, q)| p == q).count();
        }
    }
    n
}

fn common_prefix_rev(a: &[u8], b: &[u8]) -> usize {
    let mut n = 0;
    for (x, y) in a.rchunks(16).zip(b.rchunks(16)) {
        if x == y && x.len() == y.len() {
            n += x.len();
        } else {
            return n + x
                .iter()
                .rev()
                .zip(y.iter().rev())
                .take_while(|(p, q)| p == q)
                .count();
        }
    }
    n
}

/// One zlib compressor for every object of the pack: creating one allocates and clears its window and hash
/// tables, which cost more than compressing a small object.
struct Deflater {
    z: gix::zlib::stream::deflate::Compress,
    buf: Vec<u8>,
}

impl Deflater {
    fn new() -> Self {
        Deflater {
            z: gix::zlib::stream::deflate::Compress::new(gix::zlib::Compression::BEST_SPEED),
            buf: vec![0; 1 << 16],
        }
    }

    /// Append `data` as one zlib stream to `out`.
    fn deflate(&mut self, data: &[u8], out: &mut Vec<u8>) -> Result<()> {
        use gix::zlib::stream::deflate::FlushCompress;
        use gix::zlib::Status;
        self.z.reset();
        let mut input = data;
        loop {
            let (before_in, before_out) = (self.z.total_in(), self.z.total_out());
            let status = self
                .z
                .compress(input, &mut self.buf, FlushCompress::Finish)
                .map_err(|e| Error::wrap("compressing an object", e))?;
            let written = (self.z.total_out() - before_out) as usize;
            out.extend_from_slice(&self.buf[..written]);
            input = &input[(self.z.total_in() - before_in) as usize..];
            match status {
                Status::StreamEnd => return Ok(()),
                Status::Ok | Status::BufError => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a git delta decoder makes of our deltas is the target, whatever the two share.
    #[test]
    fn deltas_rebuild_their_target() {
        let big: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let mut changed = big.clone();
        changed.splice(1000..1010, b"inserted text".iter().copied());
        // Hunks far apart, a moved block, lines that repeat, and a change inside a long line.
        let long: Vec<u8> = (0..100_000u32)
            .flat_map(|i| format!("    line {i} of a file of source code\n").into_bytes())
            .collect();
        let mut hunks = long.clone();
        hunks.splice(100_000..100_020, b"a hunk in the middle\n".iter().copied());
        hunks.splice(500..530, b"near the start".iter().copied());
        hunks.extend_from_slice(b"appended at the end\n");
        hunks.splice(1_200_000..1_200_000, long[40_000..60_000].iter().copied());
        let repeats: Vec<u8> = (0..2000)
            .flat_map(|i| format!("    the same long line again\n{}\n", i % 7).into_bytes())
            .collect();
        let mut repeats_changed = repeats.clone();
        repeats_changed[30_000] = b'X';
        repeats_changed.splice(10..10, b"    the same long line again\n".iter().copied());
        let cases: [(&[u8], &[u8]); 9] = [
            (b"", b"abc"),
            (b"abc", b""),
            (b"same", b"same"),
            (b"abcdef", b"abXYZef"),
            (b"aaaa", b"aaaaaa"),
            (&big, &changed),
            (&long, &hunks),
            (&hunks, &long),
            (&repeats, &repeats_changed),
        ];
        for (base, target) in cases {
            let mut d = Vec::new();
            assert!(encode_delta(base, target, usize::MAX, &mut d));
            let out = crate::capabilities::weave::binary::apply_delta(base, &d)
                .expect("a well-formed delta");
            assert_eq!(
                out,
                target,
                "{:?}",
                String::from_utf8_lossy(&target[..target.len().min(20)])
            );
        }
        let mut d = Vec::new();
        encode_delta(&big, &changed, usize::MAX, &mut d);
        assert!(
            d.len() < big.len() / 1000,
            "a small change makes a small delta: {}",
            d.len()
        );
        // Common start and end alone would insert everything from the first hunk to the last.
        d.clear();
        encode_delta(&long, &hunks, usize::MAX, &mut d);
        assert!(
            d.len() < 1000,
            "hunks far apart make a small delta: {}",
            d.len()
        );
        d.clear();
        encode_delta(&repeats, &repeats_changed, usize::MAX, &mut d);
        assert!(d.len() < 200, "repeated lines: {}", d.len());
    }

    /// A delta past its limit is given up, as soon as that is known.
    #[test]
    fn deltas_stop_at_their_limit() {
        let a: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("{i} a\n").into_bytes())
            .collect();
        let b: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("{i} b\n").into_bytes())
            .collect();
        let mut d = Vec::new();
        assert!(!encode_delta(&a, &b, b.len() / 2, &mut d));
        assert!(d.len() <= b.len() / 2 + 256, "stopped early: {}", d.len());
        d.clear();
        assert!(encode_delta(&a, &b, usize::MAX, &mut d));
        assert_eq!(
            crate::capabilities::weave::binary::apply_delta(&a, &d).unwrap(),
            b
        );
    }

    #[test]
    fn ofs_delta_offsets_are_gits() {
        for (ofs, want) in [
            (1u64, vec![0x01]),
            (127, vec![0x7f]),
            (128, vec![0x80, 0x00]),
            (16511, vec![0xff, 0x7f]),
            (16512, vec![0x80, 0x80, 0x00]),
        ] {
            let mut out = Vec::new();
            ofs_delta_offset(&mut out, ofs);
            assert_eq!(out, want, "{ofs}");
        }
    }
}
