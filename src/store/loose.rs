//! Writing small objects (event and merge commits, mostly) as loose objects without a compressor, and reading
//! many loose blobs with one inflater ([`LooseBlobs`]).
//!
//! Why not `Repository::write_object`: gix's loose writer starts a zlib stream with the default state for
//! every object, and zlib-rs zeroes about 430 KiB of it (window, hash table, pending buffer) before
//! compressing; even a minimal window leaves a fixed 128 KiB hash table cleared twice. For a 500-byte event
//! commit that was about 105 fresh pages faulted in and cleared per append, the largest single cost of a
//! `mail send` after process start (measured with `perf` and `gdb`; docs/benchmarks.md). Small objects are
//! written as git writes them with `core.looseCompression = 0`: stored deflate blocks, valid for every zlib
//! reader. The file is written the way git writes loose objects: a read-only temporary file `tmp_obj_…` in
//! the object's fan-out directory `xx/`, renamed to `xx/yyyy…`; readers see all or nothing, and a file left
//! by a killed process is one that git itself tolerates (`git fsck` skips `tmp_obj_*`) and removes (`git
//! prune`, run by `gc`). Objects over [`SMALL`] bytes go through gix (compressed) unchanged.
//!
//! Whether the object is already there is asked of the loose store only. A miss in gix's object store
//! re-reads the pack directory (it refreshes on a miss, in case another process just packed), which for a
//! new object is every time; an object that only a pack holds is written loose once more, as git would if
//! its pack were not yet visible, and the next `git gc` drops the copy.

use std::io::Write as _;

use gix::objs::WriteTo;
use gix::ObjectId;

use crate::kit::error::{Error, Result, ResultExt};

/// Objects up to this size (the encoded object, without its header) get a compressor sized to them.
pub const SMALL: u64 = 16 * 1024;

/// Write `object` into the repository's object store; its id either way.
pub fn write(repo: &gix::Repository, object: &impl WriteTo) -> Result<ObjectId> {
    let size = object.size();
    if size > SMALL {
        return Ok(repo.write_object(object)?.detach());
    }
    let mut data = Vec::with_capacity(size as usize);
    object
        .write_to(&mut data)
        .map_err(|e| Error::wrap(format!("encoding a {} object", object.kind()), e))?;
    let id = gix::objs::compute_hash(repo.object_hash(), object.kind(), &data)
        .map_err(|e| Error::wrap(format!("hashing a {} object", object.kind()), e))?;
    write_encoded(repo, object.kind(), &data, id)?;
    Ok(id)
}

/// Write the encoded object `data` of `kind`, whose id is `id` (the caller hashed it), as a loose object unless
/// the loose store has it: stored deflate blocks up to [`SMALL`] bytes, compressed by gix above.
pub fn write_encoded(
    repo: &gix::Repository,
    kind: gix::objs::Kind,
    data: &[u8],
    id: ObjectId,
) -> Result<()> {
    if data.len() as u64 > SMALL {
        use gix::objs::Write as _;
        repo.objects
            .write_buf(kind, data)
            .map_err(|e| Error::wrap(format!("writing a {kind} object"), e))?;
        return Ok(());
    }
    let path = loose_path(repo, id);
    let dir = path.parent().expect("a fan-out directory").to_owned();
    if std::fs::symlink_metadata(&path).is_ok() {
        return Ok(());
    }
    let mut raw = Vec::with_capacity(data.len() + 32);
    raw.extend_from_slice(&gix::objs::encode::loose_header(kind, data.len() as u64));
    raw.extend_from_slice(data);
    let compressed = deflate(&raw);

    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).context(|| format!("creating {}", dir.display())),
    }
    let mut builder = tempfile::Builder::new();
    builder.prefix("tmp_obj_");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Loose objects are read-only, as git and gix make them.
        builder.permissions(std::fs::Permissions::from_mode(0o444));
    }
    let mut file = builder
        .tempfile_in(&dir)
        .context(|| format!("creating a temporary object in {}", dir.display()))?;
    file.write_all(&compressed)
        .context(|| format!("writing a temporary object in {}", dir.display()))?;
    file.persist(&path)
        .map_err(|e| e.error)
        .context(|| format!("moving the object into place at {}", path.display()))?;
    Ok(())
}

/// The empty tree, written to the object database: git knows it without storing it, but `git fsck`
/// reports it missing when a commit refers to it and it was never written.
pub fn empty_tree(repo: &gix::Repository) -> Result<ObjectId> {
    // `Repository::has_object` pretends the empty tree exists; the loose writer looks at the disk (and finds
    // it there after the first event, without reading the pack directory).
    write(repo, &gix::objs::Tree::empty())
}

/// `raw` as a zlib stream of stored (uncompressed) deflate blocks, what git writes with
/// `core.looseCompression = 0`. A compressing encoder costs more than the whole rest of an append: zlib-rs
/// zeroes a 128 KiB hash table twice per stream whatever the window, for objects of a few hundred bytes that
/// compress by a third at best and are packed (and compressed) by the next `git gc` or push anyway.
fn deflate(raw: &[u8]) -> Vec<u8> {
    const MAX_STORED: usize = 65_535;
    let blocks = raw.len().div_ceil(MAX_STORED).max(1);
    let mut out = Vec::with_capacity(raw.len() + 5 * blocks + 6);
    // CMF: deflate with a 32 KiB window; FLG: no dictionary, "fastest" level, check bits making CMF·FLG % 31 == 0.
    out.extend_from_slice(&[0x78, 0x01]);
    let mut chunks = raw.chunks(MAX_STORED).peekable();
    if chunks.peek().is_none() {
        out.extend_from_slice(&[0x01, 0x00, 0x00, 0xff, 0xff]);
    }
    while let Some(chunk) = chunks.next() {
        let last = chunks.peek().is_none();
        let len = chunk.len() as u16;
        // BFINAL on the last block, BTYPE 00 (stored); LEN and its one's complement, little-endian.
        out.push(u8::from(last));
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out.extend_from_slice(&zlib_rs::adler32::adler32(1, raw).to_be_bytes());
    out
}

/// Where the loose object `id` lives: `objects/xx/yyyy…`.
fn loose_path(repo: &gix::Repository, id: ObjectId) -> std::path::PathBuf {
    let hex = id.to_hex().to_string();
    repo.objects
        .store_ref()
        .path()
        .join(&hex[..2])
        .join(&hex[2..])
}

/// Reads loose blobs with one inflater for many objects: gix's loose reader sets up a fresh zlib stream for
/// every object, which for a thousand small notes (`verify`'s cache of a long range) was most of the read's
/// system time (mmap and munmap of the stream state per object; docs/benchmarks-verify.md).
#[derive(Default)]
pub struct LooseBlobs {
    inflate: gix::zlib::Inflate,
}

impl std::fmt::Debug for LooseBlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LooseBlobs")
    }
}

impl LooseBlobs {
    /// The bytes of blob `id` when the loose store holds it as a blob; `None` otherwise (packed, missing, not a
    /// blob, unreadable), and the caller asks the object store.
    pub fn read(&mut self, repo: &gix::Repository, id: ObjectId) -> Option<Vec<u8>> {
        let raw = std::fs::read(loose_path(repo, id)).ok()?;
        // The header first (`blob <size>\0`), then the whole object into a buffer of exactly its size. The
        // size is the file's word: deflate expands at most about 1032:1, so a header claiming more than that
        // is forged, and gix's reader (which fails on it) answers instead of us allocating it.
        let mut head = [0u8; 32];
        self.inflate.reset();
        let (_, _, n) = self.inflate.once(&raw, &mut head).ok()?;
        let (kind, size, header) = gix::objs::decode::loose_header(&head[..n]).ok()?;
        if kind != gix::objs::Kind::Blob || size > (raw.len() as u64).saturating_mul(1032) {
            return None;
        }
        let mut out = vec![0; header + usize::try_from(size).ok()?];
        self.inflate.reset();
        let (status, _, written) = self.inflate.once(&raw, &mut out).ok()?;
        if written != out.len() || status != gix::zlib::Status::StreamEnd {
            return None;
        }
        out.drain(..header);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_written_here_read_back_through_gix_and_git() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let mut ids = Vec::new();
        for size in [
            0usize,
            1,
            511,
            512,
            513,
            4000,
            16 * 1024,
            16 * 1024 + 1,
            70_000,
        ] {
            let text: Vec<u8> = (0..size)
                .map(|i| b"abcdefgh\n"[(i * 7 + i / 13) % 9])
                .collect();
            let blob = gix::objs::Blob { data: text.clone() };
            let id = write(&repo, &blob).unwrap();
            assert_eq!(
                id,
                repo.write_blob(&text).unwrap().detach(),
                "same id as gix"
            );
            assert_eq!(
                repo.find_object(id).unwrap().data,
                text,
                "{size} bytes read back"
            );
            // Writing again finds the object and leaves it alone.
            assert_eq!(write(&repo, &blob).unwrap(), id);
            ids.push(id.to_string());
        }
        let fsck = std::process::Command::new("git")
            .args(["fsck", "--strict", "--no-dangling"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(
            fsck.status.success(),
            "{}",
            String::from_utf8_lossy(&fsck.stderr)
        );
        let sizes = std::process::Command::new("git")
            .args(["cat-file", "--batch-check"])
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(ids.join("\n").as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        let listed = String::from_utf8(sizes.stdout).unwrap();
        assert_eq!(listed.lines().count(), ids.len(), "{listed}");
        assert!(!listed.contains("missing"), "{listed}");
    }

    #[test]
    fn stored_streams_inflate_to_their_input() {
        for len in [0usize, 1, 500, 65_535, 65_536, 200_000] {
            let raw: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let z = deflate(&raw);
            assert_eq!(
                ((u16::from(z[0]) << 8) | u16::from(z[1])) % 31,
                0,
                "header check bits"
            );
            let mut inflate = zlib_rs::Inflate::new(true, 15);
            let mut out = vec![0u8; len + 1];
            let status = inflate
                .decompress(&z, &mut out, zlib_rs::InflateFlush::Finish)
                .unwrap();
            assert_eq!(status, zlib_rs::Status::StreamEnd, "{len} bytes");
            assert_eq!(
                &out[..inflate.total_out() as usize],
                &raw[..],
                "{len} bytes"
            );
        }
    }

    /// What git wrote loose (compressed at its default level) reads back whole; a packed blob, a tree and an
    /// id nobody wrote are left to the object store (`None`).
    #[test]
    fn loose_blobs_read_what_git_wrote_and_leave_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str], input: &[u8]| {
            use std::io::Write as _;
            let mut child = std::process::Command::new("git")
                .args(args)
                .current_dir(dir.path())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(input).unwrap();
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success());
            String::from_utf8(out.stdout).unwrap().trim().to_owned()
        };
        git(&["init", "-q", "--bare"], b"");
        let big: Vec<u8> = (0..50_000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        let loose: Vec<(ObjectId, Vec<u8>)> = [b"".to_vec(), b"{\"version\":1}".to_vec(), big]
            .into_iter()
            .map(|data| {
                let id = git(&["hash-object", "-w", "--stdin"], &data);
                (ObjectId::from_hex(id.as_bytes()).unwrap(), data)
            })
            .collect();
        let repo = gix::open(dir.path()).unwrap();
        let mut blobs = LooseBlobs::default();
        for (id, data) in &loose {
            assert_eq!(blobs.read(&repo, *id).as_deref(), Some(&data[..]));
        }
        let tree = git(&["mktree"], b"");
        assert_eq!(
            blobs.read(&repo, ObjectId::from_hex(tree.as_bytes()).unwrap()),
            None
        );
        let packed = git(&["hash-object", "-w", "--stdin"], b"packed\n");
        git(
            &["pack-objects", "-q", "objects/pack/pack"],
            format!("{packed}\n").as_bytes(),
        );
        git(&["prune-packed"], b"");
        let packed = ObjectId::from_hex(packed.as_bytes()).unwrap();
        assert_eq!(blobs.read(&repo, packed), None);
        assert!(
            repo.find_object(packed).is_ok(),
            "still in the store, packed"
        );
        assert_eq!(
            blobs.read(&repo, ObjectId::null(gix::hash::Kind::Sha1)),
            None
        );
        // A forged file whose header claims a terabyte is not believed (no allocation of it, no abort).
        let forged = ObjectId::from_hex(b"00000000000000000000000000000000000000aa").unwrap();
        let path = loose_path(&repo, forged);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, deflate(b"blob 1000000000000\0x")).unwrap();
        assert_eq!(blobs.read(&repo, forged), None);
    }
}
