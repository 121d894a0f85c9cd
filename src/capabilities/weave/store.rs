//! Writing the objects a weave kept in memory: once, at the end.
//!
//! Few objects become loose objects, as git's `transfer.unpackLimit` would have it. Many become one pack:
//! creating a file costs far more than compressing a small object (on this project's ext4 machines, hundreds of
//! microseconds per file), so 300 patches' 1,600 blobs, trees and commits go into one undeltified pack, with
//! its version 2 index written from the ids, offsets and CRC-32s known while packing (indexing it afterwards
//! would inflate and hash every object a second time). `git gc` deltifies it later.

use gix::objs::Kind;

use crate::kit::error::{Error, Result};

/// Below this many objects, write loose objects.
pub const PACK_THRESHOLD: usize = 100;

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
    let mut objects: Vec<(&gix::ObjectId, &(Kind, Vec<u8>))> = storage.iter().collect();
    objects.sort_by_key(|(id, _)| **id);
    let hash = disk.object_hash();
    let (stream, entries) = pack_stream(hash, objects.iter().map(|(_, o)| *o))?;
    let pack_sum = &stream[stream.len() - hash.len_in_bytes()..];
    let ids: Vec<gix::ObjectId> = objects.iter().map(|(id, _)| **id).collect();
    let index = index_v2(hash, &ids, &entries, pack_sum)?;
    let dir = disk.objects.store_ref().path().join("pack");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    // The index is written from what we already know (ids, offsets, CRC-32s): indexing the stream with gix
    // would inflate and hash every object again, which was a tenth of a real-history weave.
    let name = format!(
        "pack-{}",
        gix::ObjectId::from_bytes_or_panic(pack_sum).to_hex()
    );
    let put = |ext: &str, bytes: &[u8]| -> Result<()> {
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)
            .map_err(|e| Error::io(format!("creating a temporary file in {}", dir.display()), e))?;
        std::io::Write::write_all(&mut tmp, bytes).map_err(|e| Error::io("writing a pack", e))?;
        let path = dir.join(format!("{name}.{ext}"));
        tmp.persist(&path)
            .map_err(|e| Error::io(format!("writing {}", path.display()), e.error))?;
        Ok(())
    };
    // The pack first, its index last: git and gix only see a pack once its index exists.
    put("pack", &stream)?;
    put("idx", &index)?;
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

/// A version 2 pack holding `objects` whole (no deltas), with its trailing checksum, and each object's
/// offset and the CRC-32 of its packed bytes (what the index records).
fn pack_stream<'a>(
    hash: gix::hash::Kind,
    objects: impl ExactSizeIterator<Item = &'a (Kind, Vec<u8>)>,
) -> Result<(Vec<u8>, Vec<Entry>)> {
    use std::io::Write;
    let mut entries = Vec::with_capacity(objects.len());
    let mut out = Vec::with_capacity(objects.len() * 256);
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    for (kind, data) in objects {
        let start = out.len();
        let t: u8 = match kind {
            Kind::Commit => 1,
            Kind::Tree => 2,
            Kind::Blob => 3,
            Kind::Tag => 4,
        };
        let mut size = data.len();
        let mut byte = (t << 4) | (size & 0x0f) as u8;
        size >>= 4;
        while size > 0 {
            out.push(byte | 0x80);
            byte = (size & 0x7f) as u8;
            size >>= 7;
        }
        out.push(byte);
        let mut z =
            gix::zlib::stream::deflate::Write::new(&mut out, gix::zlib::Compression::BEST_SPEED);
        z.write_all(data)
            .and_then(|_| z.flush())
            .map_err(|e| Error::io("compressing an object", e))?;
        drop(z);
        entries.push((start as u64, crc32fast::hash(&out[start..])));
    }
    let mut h = gix::hash::hasher(hash);
    h.update(&out);
    let sum = h
        .try_finalize()
        .map_err(|e| Error::wrap("hashing the pack", e))?;
    out.extend_from_slice(sum.as_bytes());
    Ok((out, entries))
}
