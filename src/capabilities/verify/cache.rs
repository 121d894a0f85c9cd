//! The verify cache: results as git notes on tree objects under `refs/notes/jules/verify`.
//!
//! A result depends only on the files a command sees and on the command, so the note annotates the commit's
//! *tree* and holds a JSON document keyed by the SHA-256 of the command text: a patch whose tree is unchanged
//! after a reroll or rebase is not run again, and several commands share one note. Reading consults the local
//! ref first, then every remote-tracking copy (`refs/remotes/*/notes/jules/verify`, fetched after
//! `git jules init`), so results verified elsewhere count. Writing only touches the local ref.
//!
//! Note format (version 1):
//! ```json
//! {"version":1,"results":{"<sha256 of command>":{"command":"make test","result":"pass","exit_code":0,
//!   "duration_ms":230,"commit":"<commit id>","at":"2025-01-01T00:00:00Z"}}}
//! ```
//! `tail` (the end of the output) is present on failures. Unknown fields are ignored when reading.

use std::collections::BTreeMap;

use gix::ObjectId;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::kit::error::{Error, Result};

pub const NOTES_REF: &str = "refs/notes/jules/verify";
const REMOTE_SUFFIX: &str = "/notes/jules/verify";
pub const NOTE_VERSION: u32 = 1;

/// The cache key of a command: lowercase hex SHA-256 of its exact text.
pub fn command_key(command: &str) -> String {
    let digest = Sha256::digest(command.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Pass,
    Fail,
}

/// One cached result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    pub command: String,
    pub result: Verdict,
    #[serde(default)]
    pub exit_code: Option<i32>,
    #[serde(default)]
    pub duration_ms: u64,
    /// The commit the result was measured on (any commit with the same tree would give the same result).
    #[serde(default)]
    pub commit: String,
    #[serde(default)]
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct NoteDoc {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    results: BTreeMap<String, Entry>,
}

fn parse(bytes: &[u8]) -> Option<NoteDoc> {
    serde_json::from_slice::<NoteDoc>(bytes).ok()
}

/// The notes trees to read, local first, each opened once.
pub struct Cache {
    sources: Vec<(String, gix::note::plumbing::State)>,
    loose: crate::store::loose::LooseBlobs,
}

impl Cache {
    pub fn open(repo: &gix::Repository) -> Result<Cache> {
        let mut names = vec![NOTES_REF.to_owned()];
        let refs = repo.references()?;
        for r in refs.prefixed("refs/remotes/")? {
            let r = r.map_err(|e| Error::wrap("listing remote-tracking refs", e))?;
            let name = r.name().as_bstr().to_string();
            if name.ends_with(REMOTE_SUFFIX) {
                names.push(name);
            }
        }
        let mut sources = Vec::new();
        for name in names {
            let Some(tip) = crate::store::refs::target(repo, &name)? else {
                continue;
            };
            let Ok(commit) = repo.find_commit(tip) else {
                continue;
            };
            let tree = commit.tree_id()?.detach();
            let state = gix::note::plumbing::State::new(tree, &repo.objects)
                .map_err(|e| Error::wrap(format!("reading {name}"), e))?;
            sources.push((name, state));
        }
        Ok(Cache {
            sources,
            loose: Default::default(),
        })
    }

    /// The cached result for `tree` under the command with key `key`, from the first ref that has one.
    pub fn get(
        &mut self,
        repo: &gix::Repository,
        tree: ObjectId,
        key: &str,
    ) -> Result<Option<Entry>> {
        for (name, state) in &mut self.sources {
            let blob = state
                .get(&tree, &repo.objects)
                .map_err(|e| Error::wrap(format!("reading {name}"), e))?;
            let Some(blob) = blob else { continue };
            let data = match self.loose.read(repo, blob) {
                Some(data) => data,
                None => match repo.find_blob(blob) {
                    Ok(b) => b.data.clone(),
                    Err(_) => continue,
                },
            };
            if let Some(mut doc) = parse(&data) {
                if let Some(entry) = doc.results.remove(key) {
                    return Ok(Some(entry));
                }
            }
        }
        Ok(None)
    }
}

/// Record `entries` (tree, entry) in the local notes ref with one notes commit, keeping the results other
/// commands left on the same trees. Each note is merged with the note current at the attempt that wins the
/// compare-and-swap, so a concurrent run recording another command on the same tree loses nothing.
pub fn store(repo: &gix::Repository, entries: &[(ObjectId, Entry)]) -> Result<()> {
    let mut by_tree: BTreeMap<ObjectId, Vec<&Entry>> = BTreeMap::new();
    for (tree, entry) in entries {
        by_tree.entry(*tree).or_default().push(entry);
    }
    let trees: Vec<ObjectId> = by_tree.keys().copied().collect();
    crate::store::notes::update_many(
        repo,
        NOTES_REF,
        &trees,
        |tree, current| {
            let mut doc = current.and_then(parse).unwrap_or_default();
            doc.version = NOTE_VERSION;
            for entry in by_tree.get(&tree).into_iter().flatten() {
                doc.results
                    .insert(command_key(&entry.command), (*entry).clone());
            }
            let mut text = serde_json::to_vec(&doc).unwrap_or_default();
            text.push(b'\n');
            text
        },
        "jules: verify results",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_key_is_sha256_hex() {
        assert_eq!(
            command_key(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn notes_with_unknown_fields_still_parse() {
        let doc = parse(br#"{"version":2,"extra":1,"results":{"k":{"command":"c","result":"fail","new":true}}}"#).unwrap();
        assert_eq!(doc.results["k"].result, Verdict::Fail);
        assert!(parse(b"not json").is_none());
    }
}
