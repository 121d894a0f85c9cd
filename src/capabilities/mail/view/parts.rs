//! The partition store: maps of partitions of the mail cache, loaded on first use, saved when changed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::kit::error::{Error, Result};
use crate::store::eventlog::cache::{read_sealed, write_sealed, Stamp};

pub(super) trait PartKey: Ord + Clone {
    fn file_name(&self) -> String;
}
impl PartKey for String {
    fn file_name(&self) -> String {
        format!("{self}.json")
    }
}
impl PartKey for u8 {
    fn file_name(&self) -> String {
        format!("{self:02x}.json")
    }
}

/// A map of partitions loaded on demand from `<cache>/<sub>/`.
#[derive(Debug)]
pub(super) struct Parts<K: PartKey, V> {
    pub(super) sub: &'static str,
    /// The partitions that exist (on disk or in memory).
    pub(super) present: BTreeSet<K>,
    pub(super) loaded: BTreeMap<K, V>,
    pub(super) dirty: BTreeSet<K>,
}

impl<K: PartKey, V: Default + Serialize + DeserializeOwned> Parts<K, V> {
    pub(super) fn new(sub: &'static str, present: BTreeSet<K>) -> Self {
        Parts {
            sub,
            present,
            loaded: BTreeMap::new(),
            dirty: BTreeSet::new(),
        }
    }

    pub(super) fn ensure(&mut self, dir: Option<&Path>, key: &K) -> Result<()> {
        if self.loaded.contains_key(key) {
            return Ok(());
        }
        let value = match (dir, self.present.contains(key)) {
            (Some(dir), true) => {
                let rel = format!("{}/{}", self.sub, key.file_name());
                let path = dir.join(&rel);
                let bytes = read_sealed(dir, &rel).map_err(|e| Error::Corrupt {
                    path: path.clone(),
                    message: format!("mail cache partition unreadable: {e}"),
                })?;
                serde_json::from_slice(&bytes).map_err(|e| Error::Corrupt {
                    path,
                    message: format!("mail cache partition does not decode: {e}"),
                })?
            }
            _ => V::default(),
        };
        self.loaded.insert(key.clone(), value);
        Ok(())
    }

    pub(super) fn get(&mut self, dir: Option<&Path>, key: &K) -> Result<Option<&V>> {
        if !self.present.contains(key) {
            return Ok(None);
        }
        self.ensure(dir, key)?;
        Ok(self.loaded.get(key))
    }

    pub(super) fn get_mut(&mut self, dir: Option<&Path>, key: &K) -> Result<&mut V> {
        self.ensure(dir, key)?;
        self.present.insert(key.clone());
        self.dirty.insert(key.clone());
        Ok(self.loaded.get_mut(key).expect("just ensured"))
    }

    pub(super) fn save(&self, dir: &Path, all: bool, stamp: &Stamp) -> std::io::Result<()> {
        std::fs::create_dir_all(dir.join(self.sub))?;
        for (k, v) in &self.loaded {
            if all || self.dirty.contains(k) {
                let rel = format!("{}/{}", self.sub, k.file_name());
                let bytes = serde_json::to_vec(v).map_err(std::io::Error::other)?;
                write_sealed(dir, &rel, &bytes, stamp)?;
            }
        }
        Ok(())
    }
}
