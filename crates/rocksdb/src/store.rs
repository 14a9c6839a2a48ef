use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use beeline_state::{Error, Overlay, Result, ScanIter, Store, WriteBatch};
use rocksdb::checkpoint::Checkpoint;
use rocksdb::{
    BlockBasedOptions, DB, DBCompressionType, Direction, IteratorMode, Options, ReadOptions,
    WriteOptions,
};

use crate::budget::MemoryBudget;
use crate::queue_hints::QueueHints;

#[derive(Clone)]
pub struct RocksDbStoreConfig {
    /// Where the live database lives; replaced on every open.
    pub runtime_dir: PathBuf,
    pub budget: MemoryBudget,
}

/// A partition's state as the node keeps it: RocksDB under a write-back buffer, so state that
/// lives shorter than the buffer takes to fill never reaches RocksDB.
pub type PartitionStore = Overlay<RocksDbStore>;

/// Opens a partition's state (see [`RocksDbStore::open`]) with its share of the budget as the
/// write-back buffer.
pub fn open_partition_store(
    config: &RocksDbStoreConfig,
    checkpoint: Option<&Path>,
) -> Result<PartitionStore> {
    let overlay = Overlay::new(
        RocksDbStore::open(config, checkpoint)?,
        config.budget.write_back(),
    )?;
    Ok(overlay.counted_in(config.budget.buffered.clone()))
}

/// A partition's state in RocksDB.
pub struct RocksDbStore {
    db: DB,
    path: PathBuf,
    write_options: WriteOptions,
    queue_hints: Mutex<QueueHints>,
}

impl RocksDbStore {
    /// Opens a fresh database in the runtime directory: empty, or a copy of `checkpoint`.
    /// Whatever was in the runtime directory is discarded, since without a WAL it may hold
    /// state ahead of the last snapshot.
    pub fn open(config: &RocksDbStoreConfig, checkpoint: Option<&Path>) -> Result<Self> {
        let path = config.runtime_dir.clone();
        if path.exists() {
            std::fs::remove_dir_all(&path).map_err(|e| Error::io(&path, e))?;
        }
        match checkpoint {
            Some(checkpoint) => copy_checkpoint(checkpoint, &path)?,
            None => std::fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))?,
        }
        let db = DB::open(&options(&config.budget), &path).map_err(|e| store_error(&path, e))?;
        let mut write_options = WriteOptions::default();
        write_options.disable_wal(true);
        Ok(Self {
            db,
            path,
            write_options,
            queue_hints: Mutex::default(),
        })
    }

    /// Bytes of memtables this database holds.
    pub fn memtable_bytes(&self) -> u64 {
        self.db
            .property_int_value("rocksdb.cur-size-all-mem-tables")
            .ok()
            .flatten()
            .unwrap_or(0)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn hints(&self) -> std::sync::MutexGuard<'_, QueueHints> {
        self.queue_hints
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

fn options(budget: &MemoryBudget) -> Options {
    let mut table = BlockBasedOptions::default();
    table.set_block_cache(&budget.cache);
    // Index and filter blocks count against the cache, so the budget bounds them as well.
    table.set_cache_index_and_filter_blocks(true);
    table.set_pin_l0_filter_and_index_blocks_in_cache(true);
    table.set_bloom_filter(10.0, false);
    table.set_block_size(16 * 1024);

    let mut options = Options::default();
    options.create_if_missing(true);
    options.set_block_based_table_factory(&table);
    options.set_write_buffer_manager(&budget.write_buffers);
    options.set_write_buffer_size(budget.memtable_size);
    options.set_max_write_buffer_number(2);
    options.set_compression_type(DBCompressionType::Lz4);
    options.set_max_background_jobs(2);
    options.set_max_open_files(512);
    // Files written by flushes and compactions are handed to the disk a megabyte at a time
    // rather than at their end, so that no burst of a whole file lands on the disk at once
    // for the journal's syncs (the same disk's) to wait behind.
    options.set_bytes_per_sync(1 << 20);
    // Small logs, kept few: the info log is for operators, not for state.
    options.set_keep_log_file_num(2);
    options.set_max_log_file_size(4 * 1024 * 1024);
    options
}

fn store_error(path: &Path, e: rocksdb::Error) -> Error {
    Error::Store(format!("RocksDB at {}: {e}", path.display()))
}

/// Copies a checkpoint into a new runtime directory: SST files are immutable and hard-linked;
/// the rest (manifest, options, current) is copied, because RocksDB writes to it.
fn copy_checkpoint(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| Error::io(from, e))? {
        let entry = entry.map_err(|e| Error::io(from, e))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let is_sst = source.extension().is_some_and(|e| e == "sst");
        let linked = is_sst && std::fs::hard_link(&source, &target).is_ok();
        if !linked {
            std::fs::copy(&source, &target).map_err(|e| Error::io(&source, e))?;
        }
    }
    Ok(())
}

/// The smallest key greater than every key that starts with `prefix` (none if all 0xFF).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

impl Store for RocksDbStore {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.db
            .get_pinned(key)
            .map(|value| value.map(|v| v.to_vec()))
            .map_err(|e| store_error(&self.path, e))
    }

    fn scan<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        let mut read = ReadOptions::default();
        if let Some(end) = prefix_end(prefix) {
            read.set_iterate_upper_bound(end);
        }
        let path = self.path.clone();
        let iter = self
            .db
            .iterator_opt(IteratorMode::From(start, Direction::Forward), read)
            .map(move |item| {
                item.map(|(k, v)| (k.into_vec(), v.into_vec()))
                    .map_err(|e| store_error(&path, e))
            });
        Box::new(iter)
    }

    fn scan_keys<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        let mut read = ReadOptions::default();
        if let Some(end) = prefix_end(prefix) {
            read.set_iterate_upper_bound(end);
        }
        let mut iter = self.db.raw_iterator_opt(read);
        iter.seek(start);
        let path = self.path.clone();
        let mut done = false;
        Box::new(std::iter::from_fn(move || {
            if done {
                return None;
            }
            match iter.key() {
                Some(key) => {
                    let key = key.to_vec();
                    iter.next();
                    Some(Ok((key, Vec::new())))
                }
                None => {
                    done = true;
                    iter.status().err().map(|e| Err(store_error(&path, e)))
                }
            }
        }))
    }

    /// Seeks where the prefix's live entries begin, as far as this store knows
    /// (`queue_hints.rs`), and learns that place from what it finds.
    fn scan_queue<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        let seek = self.hints().seek(prefix, start);
        let mut entries = self.scan(prefix, &seek.from);
        let (Some(generation), Some(end)) = (seek.learns, prefix_end(prefix)) else {
            return entries;
        };
        let first = entries.next();
        match &first {
            Some(Ok((key, _))) => self.hints().learned(prefix, generation, Some(key), &end),
            None => self.hints().learned(prefix, generation, None, &end),
            Some(Err(_)) => {}
        }
        Box::new(first.into_iter().chain(entries))
    }

    fn last_key(&self, prefix: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut read = ReadOptions::default();
        read.set_iterate_lower_bound(prefix.to_vec());
        if let Some(end) = prefix_end(prefix) {
            read.set_iterate_upper_bound(end);
        }
        match self.db.iterator_opt(IteratorMode::End, read).next() {
            Some(Ok((key, _))) => Ok(Some(key.into_vec())),
            Some(Err(e)) => Err(store_error(&self.path, e)),
            None => Ok(None),
        }
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let mut rocks = rocksdb::WriteBatch::default();
        for (key, value) in &batch.writes {
            match value {
                Some(value) => rocks.put(key, value),
                None => rocks.delete(key),
            }
        }
        let written = self
            .db
            .write_opt(rocks, &self.write_options)
            .map_err(|e| store_error(&self.path, e));
        // Even a failed write may have applied: the hints must not claim more than holds.
        self.hints().wrote(
            batch
                .writes
                .iter()
                .filter(|(_, value)| value.is_some())
                .map(|(key, _)| key.as_slice()),
        );
        written
    }

    fn checkpoint(&self, dir: &Path) -> Result<()> {
        // With the WAL off, the checkpoint must flush memtables to hold everything.
        Checkpoint::new(&self.db)
            .and_then(|checkpoint| checkpoint.create_checkpoint(dir))
            .map_err(|e| store_error(dir, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_is_the_next_key_after_the_prefix() {
        assert_eq!(prefix_end(&[0, 10]), Some(vec![0, 11]));
        assert_eq!(prefix_end(&[0, 255]), Some(vec![1]));
        assert_eq!(prefix_end(&[255, 255]), None);
    }
}
