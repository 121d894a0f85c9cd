//! Writing the objects a weave kept in memory: once, at the end.
//!
//! Few objects become loose objects, as git's `transfer.unpackLimit` would have it. Many become one pack:
//! creating a file costs far more than compressing a small object (on this project's ext4 machines, hundreds of
//! microseconds per file), so 300 patches' 1,600 blobs, trees and commits go into one undeltified pack stream
//! that gix indexes into `objects/pack/`, like a fetch would. `git gc` deltifies it later.

use std::sync::atomic::AtomicBool;

use gix::objs::Kind;

use crate::error::{Error, Result};

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
    let stream = pack_stream(disk.object_hash(), objects.into_iter().map(|(_, o)| o))?;
    let dir = disk.objects.store_ref().path().join("pack");
    std::fs::create_dir_all(&dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    let outcome = gix::odb::pack::Bundle::write_to_directory(
        &mut stream.as_slice(),
        Some(&dir),
        &mut gix::progress::Discard,
        &AtomicBool::new(false),
        None::<gix::odb::Handle>,
        disk.object_hash(),
        gix::odb::pack::bundle::write::Options::default(),
    )
    .map_err(|e| Error::Other(format!("writing a pack of {n} objects: {e:#}")))?;
    // The keep file guards a fresh pack against a concurrent gc until refs point into it; ours are written
    // right after, and a pack that nothing references is only garbage, never a loss.
    if let Some(keep) = outcome.keep_path {
        let _ = std::fs::remove_file(keep);
    }
    Ok(n)
}

/// A version 2 pack holding `objects` whole (no deltas), with its trailing checksum.
fn pack_stream<'a>(
    hash: gix::hash::Kind,
    objects: impl ExactSizeIterator<Item = &'a (Kind, Vec<u8>)>,
) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut out = Vec::with_capacity(objects.len() * 256);
    out.extend_from_slice(b"PACK");
    out.extend_from_slice(&2u32.to_be_bytes());
    out.extend_from_slice(&(objects.len() as u32).to_be_bytes());
    for (kind, data) in objects {
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
    }
    let mut h = gix::hash::hasher(hash);
    h.update(&out);
    let sum = h
        .try_finalize()
        .map_err(|e| Error::Other(format!("hashing the pack: {e}")))?;
    out.extend_from_slice(sum.as_bytes());
    Ok(out)
}
