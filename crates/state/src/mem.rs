//! An in-memory store for tests and harnesses. Checkpoints are one file of length-prefixed
//! entries, so snapshots and restores work exactly as with RocksDB.

use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::{RwLock, RwLockReadGuard};

use crate::store::{ScanIter, Store, WriteBatch};
use crate::{Error, Result};

const CHECKPOINT_FILE: &str = "state.mem";

#[derive(Debug, Default)]
pub struct MemStore {
    entries: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl MemStore {
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads a store from a checkpoint directory written by [`Store::checkpoint`].
    pub fn open_checkpoint(dir: &Path) -> Result<Self> {
        let path = dir.join(CHECKPOINT_FILE);
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let mut entries = BTreeMap::new();
        let mut at = 0usize;
        let corrupt = |offset: usize, reason: &str| Error::CorruptSnapshot {
            path: path.clone(),
            offset: offset as u64,
            reason: reason.into(),
        };
        let take = |at: &mut usize| -> Result<Vec<u8>> {
            let len_bytes = bytes
                .get(*at..*at + 4)
                .ok_or_else(|| corrupt(*at, "truncated length"))?;
            let len = u32::from_le_bytes([len_bytes[0], len_bytes[1], len_bytes[2], len_bytes[3]])
                as usize;
            let data = bytes
                .get(*at + 4..*at + 4 + len)
                .ok_or_else(|| corrupt(*at, "truncated entry"))?
                .to_vec();
            *at += 4 + len;
            Ok(data)
        };
        while at < bytes.len() {
            let key = take(&mut at)?;
            let value = take(&mut at)?;
            entries.insert(key, value);
        }
        Ok(Self {
            entries: RwLock::new(entries),
        })
    }

    /// Every entry, in order (for comparing states in tests).
    pub fn dump(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    fn read(&self) -> RwLockReadGuard<'_, BTreeMap<Vec<u8>, Vec<u8>>> {
        // Writers apply a whole batch under the lock without panicking paths; a poisoned
        // lock therefore still guards a consistent map.
        self.entries.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Store for MemStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.read().get(key).cloned())
    }

    fn scan<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        // Copy the matching range out: the iterator must not hold the lock while the caller
        // works (and maybe writes).
        let prefix = prefix.to_vec();
        let items: Vec<_> = self
            .read()
            .range(start.to_vec()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| Ok((k.clone(), v.clone())))
            .collect();
        Box::new(items.into_iter())
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        for (key, value) in batch.writes {
            match value {
                Some(value) => entries.insert(key, value),
                None => entries.remove(&key),
            };
        }
        Ok(())
    }

    fn checkpoint(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir(dir).map_err(|e| Error::io(dir, e))?;
        let path = dir.join(CHECKPOINT_FILE);
        let file = std::fs::File::create(&path).map_err(|e| Error::io(&path, e))?;
        let mut out = BufWriter::new(file);
        let io = |e| Error::io(&path, e);
        for (key, value) in self.read().iter() {
            for part in [key, value] {
                out.write_all(&(part.len() as u32).to_le_bytes())
                    .map_err(io)?;
                out.write_all(part).map_err(io)?;
            }
        }
        out.into_inner()
            .map_err(|e| Error::io(&path, e.into_error()))?
            .sync_all()
            .map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mem_store_keeps_the_store_contract() {
        crate::conformance::run(MemStore::new, |dir| {
            MemStore::open_checkpoint(dir).expect("open checkpoint")
        });
    }
}
