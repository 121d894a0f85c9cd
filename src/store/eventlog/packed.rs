//! Where each commit of the commit-graph is in the repository's packs, found without one index lookup per
//! commit, and the commits read from there straight away.
//!
//! The commit-graph lists its commits sorted by id (per file of a split graph) and so does each pack's
//! `.idx`: one merge of the two sorted lists gives every graph position its pack and offset, reading both
//! files once, front to back. A replay then inflates each commit at its offset instead of asking the object
//! database, which binary-searches every pack index for every commit (about 9 % of a full replay's CPU,
//! most of it cache misses in `memcmp`, docs/benchmarks.md).
//!
//! This is only a shortcut: whatever it cannot answer exactly as the object database would is left to the
//! object database. A commit in no pack (loose, in an alternate, written since the graph), stored as a delta,
//! or whose entry does not inflate cleanly is read the ordinary way, which also gives the ordinary error.

use std::path::Path;

use gix::commitgraph::{Graph, Position};
use gix::odb::pack;

/// A graph position that no pack of this reading holds.
pub(super) const NOWHERE: u64 = u64::MAX;

/// Bits of a place that hold the offset in the pack; the pack's number is above them.
const OFFSET_BITS: u32 = 48;

/// At most this many packs are merged with the graph; commits in others are read the ordinary way.
const MAX_PACKS: usize = (1 << (64 - OFFSET_BITS)) - 1;

/// The pack and offset of every commit of a commit-graph that the repository's packs hold as a whole object
/// or a delta (deltas are recognised and handed back when read).
pub(super) struct PackedCommits {
    packs: Vec<pack::data::File>,
    /// Per graph position: the pack's number above [`OFFSET_BITS`], the entry's offset below; or
    /// [`NOWHERE`].
    places: Vec<u64>,
}

impl PackedCommits {
    /// Merge `graph` with every pack of `objects_dir` (its `pack/*.idx` with their `.pack`). `None` when no
    /// pack holds any of its commits (or there is no pack directory): the walk then reads as it always did.
    pub fn new(graph: &Graph, objects_dir: &Path, hash: gix::hash::Kind) -> Option<PackedCommits> {
        let mut indexes: Vec<_> = std::fs::read_dir(objects_dir.join("pack"))
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "idx") && p.with_extension("pack").is_file()
            })
            .collect();
        // The same order on every run (an object in two packs has the same bytes in both, so the choice
        // does not change a result, only which file is read).
        indexes.sort();
        let mut places = vec![NOWHERE; graph.num_commits() as usize];
        let mut packs = Vec::new();
        for idx_path in indexes {
            if packs.len() == MAX_PACKS {
                break;
            }
            let Ok(index) = pack::index::File::at(&idx_path, hash) else {
                continue;
            };
            let number = packs.len() as u64;
            if merge(graph, &index, number, &mut places) == 0 {
                continue;
            }
            // A pack that does not open is no answer for any of the places just given to it.
            match pack::data::File::at(idx_path.with_extension("pack"), hash) {
                Ok(data) if data.num_objects() == index.num_objects() => packs.push(data),
                _ => places
                    .iter_mut()
                    .filter(|p| **p != NOWHERE && **p >> OFFSET_BITS == number)
                    .for_each(|p| *p = NOWHERE),
            }
        }
        (!packs.is_empty()).then_some(PackedCommits { packs, places })
    }

    /// Where the commit at graph position `pos` is, for [`PackedCommits::message`]; [`NOWHERE`] if in no
    /// pack.
    pub fn place(&self, pos: Position) -> u64 {
        self.places.get(pos.0 as usize).copied().unwrap_or(NOWHERE)
    }

    /// Inflate the commit stored at `place` into `buf` (its whole object: headers and message); false when
    /// it must be read the ordinary way: in no pack, stored as a delta or as another kind of object, or not
    /// inflating to exactly the size its entry says.
    pub fn read(
        &self,
        place: u64,
        inflate: &mut libdeflater::Decompressor,
        buf: &mut Vec<u8>,
    ) -> bool {
        self.try_read(place, inflate, buf).is_some()
    }

    fn try_read(
        &self,
        place: u64,
        inflate: &mut libdeflater::Decompressor,
        buf: &mut Vec<u8>,
    ) -> Option<()> {
        if place == NOWHERE {
            return None;
        }
        let pack = self.packs.get((place >> OFFSET_BITS) as usize)?;
        let entry = pack.entry(place & ((1 << OFFSET_BITS) - 1)).ok()?;
        if entry.header != pack::data::entry::Header::Commit {
            return None;
        }
        // The size comes from the pack: believe no more than what the rest of the pack can inflate to
        // (deflate expands at most about 1032:1), so that a forged header costs no huge allocation.
        let size = usize::try_from(entry.decompressed_size).ok()?;
        let left = pack.pack_end().saturating_sub(entry.data_offset as usize);
        if size > left.saturating_mul(1032) {
            return None;
        }
        buf.clear();
        buf.resize(size, 0);
        let input = pack.entry_slice(entry.data_offset..pack.pack_end() as u64)?;
        // libdeflate fails on a stream that needs more than `size` bytes or whose Adler-32 does not match;
        // one that ends early is caught by the count. The bytes after the stream (the next entries) are
        // not read as part of it.
        match inflate.zlib_decompress(input, buf) {
            Ok(n) if n == size => {}
            _ => return None,
        }
        Some(())
    }
}

/// Give each position of `graph` that `index` holds and that has no place yet its offset in pack `number`;
/// how many it gave. Both lists are sorted by id, so this is one merge: except that a split commit-graph
/// is a chain of files, each sorted on its own, so the merge starts again where the graph's order does.
fn merge(graph: &Graph, index: &pack::index::File, number: u64, places: &mut [u64]) -> usize {
    let (n, m) = (graph.num_commits(), index.num_objects());
    let mut given = 0;
    let mut j = 0;
    let mut previous: Option<&gix::hash::oid> = None;
    for i in 0..n {
        let id = graph.id_at(Position(i));
        if previous.is_some_and(|p| p >= id) {
            // The next file of a chain: find its first id in the index again.
            j = first_not_below(index, id);
        }
        previous = Some(id);
        while j < m && index.oid_at_index(j) < id {
            j += 1;
        }
        if j < m && index.oid_at_index(j) == id && places[i as usize] == NOWHERE {
            let offset = index.pack_offset_at_index(j);
            if offset >> OFFSET_BITS == 0 {
                places[i as usize] = (number << OFFSET_BITS) | offset;
                given += 1;
            }
        }
    }
    given
}

/// The first entry of `index` whose id is not below `id` (a binary search, once per file of a chain).
fn first_not_below(index: &pack::index::File, id: &gix::hash::oid) -> u32 {
    let (mut lo, mut hi) = (0, index.num_objects());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if index.oid_at_index(mid) < id {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::walk::PACK_SHORTCUT;
    use crate::store::eventlog::{Event, Log, NewEvent};

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    fn append(path: &Path, events: std::ops::Range<usize>) {
        let repo = gix::open(path).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        for i in events {
            let pad = "y".repeat(i * 37 % 300);
            let event = Event::new(
                "t.x",
                format!("a{}", i % 5),
                serde_json::json!({"i": i, "pad": pad}),
            );
            log.append(NewEvent::new(event)).unwrap();
        }
    }

    /// What a replay and a scan read, with the pack shortcut on or off.
    fn read(path: &Path, shortcut: bool) -> (Vec<String>, super::super::Replayed, String) {
        PACK_SHORTCUT.with(|on| on.set(shortcut));
        let repo = gix::open(path).unwrap();
        let log = Log::open(&repo, "t").unwrap();
        let tips = log.tips().unwrap();
        let mut folded = Vec::new();
        let replayed = log
            .replay_with(&tips, None, usize::MAX, |e| folded.push(format!("{e:?}")))
            .unwrap();
        let scan = log.scan(&tips, &[], true).unwrap();
        let (mut events, invalid) = scan.into_ordered();
        events.sort_by_key(|e| (e.lamport, e.id, e.commit));
        PACK_SHORTCUT.with(|on| on.set(true));
        (folded, replayed, format!("{events:?} {invalid:?}"))
    }

    /// On a real repository with commits in two packs (some stored as deltas), loose commits and a commit
    /// that is not an event, all in a commit-graph: the replay and the strict scan read through the packs
    /// exactly what they read through the object database, and the same without a commit-graph (where
    /// nothing is read through the packs).
    #[test]
    fn reading_commits_from_their_packs_changes_nothing_but_speed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r");
        git(dir.path(), &["init", "-q", "r"]);
        append(&path, 0..150);
        // One pack, commits deltified against each other where git finds it pays.
        git(
            &path,
            &["repack", "-adf", "--window=250", "--depth=50", "-q"],
        );
        append(&path, 150..300);
        git(&path, &["repack", "-d", "-q"]);
        append(&path, 300..360);
        // A commit on the log that is not an event.
        let tree = git(&path, &["mktree"]);
        let odd = git(
            &path,
            &[
                "commit-tree",
                &tree,
                "-p",
                "refs/jules/t",
                "-m",
                "not an event",
            ],
        );
        git(&path, &["update-ref", "refs/jules/t", &odd]);
        git(&path, &["commit-graph", "write", "--reachable"]);
        // The commits that git stored whole in a pack (`verify-pack -v` gives a delta's depth and base after
        // its offset).
        let indexes: Vec<_> = std::fs::read_dir(path.join(".git/objects/pack"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "idx"))
            .collect();
        let (mut whole, mut deltas) = (0, 0);
        for idx in &indexes {
            for line in git(&path, &["verify-pack", "-v", idx.to_str().unwrap()]).lines() {
                let fields: Vec<_> = line.split_whitespace().collect();
                if fields.get(1) == Some(&"commit") {
                    match fields.len() {
                        5 => whole += 1,
                        _ => deltas += 1,
                    }
                }
            }
        }
        let packs = indexes.len();
        assert_eq!(packs, 2);
        assert_eq!(whole + deltas, 300, "the first 300 commits are packed");
        assert!(deltas > 0, "git stored some commits as deltas");

        let (fast_folded, fast, fast_scan) = read(&path, true);
        let (slow_folded, slow, slow_scan) = read(&path, false);
        assert_eq!(fast_folded.len(), 360);
        assert_eq!(fast.invalid.len(), 1);
        assert_eq!(fast_folded, slow_folded);
        assert_eq!(fast_scan, slow_scan);
        assert_eq!(
            (fast.ids, fast.max_key, fast.commits, fast.merges),
            (slow.ids, slow.max_key, slow.commits, slow.merges)
        );
        assert_eq!(format!("{:?}", fast.invalid), format!("{:?}", slow.invalid));
        assert_eq!(slow.from_packs, 0);
        // Every commit stored whole in a pack came from it; the loose ones and the deltas did not.
        assert_eq!(fast.from_packs, whole);

        std::fs::remove_file(path.join(".git/objects/info/commit-graph")).unwrap();
        let (folded, replayed, scan) = read(&path, true);
        assert_eq!(replayed.from_packs, 0);
        assert_eq!(folded, slow_folded);
        assert_eq!(scan, slow_scan);
    }
}
