//! The contract a state backend keeps: an ordered key-value space with atomic batches and
//! consistent checkpoints.

use std::path::Path;

use crate::Result;

/// Entries `(key, value)` in key order.
pub type ScanIter<'a> = Box<dyn Iterator<Item = Result<(Vec<u8>, Vec<u8>)>> + 'a>;

/// An ordered key-value store.
pub trait Store: Send + Sync + 'static {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Entries whose key starts with `prefix`, in key order, from the first key `>= start`
    /// (`start` itself starts with `prefix`, or is `prefix`).
    fn scan<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a>;

    /// [`scan`](Store::scan) of a prefix used as a queue: entries are consumed from the front
    /// (deleted lowest key first), so deleted keys pile up there. A store whose deletes leave
    /// tombstones for iterators to step over may remember where the live entries begin.
    fn scan_queue<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        self.scan(prefix, start)
    }

    /// The keys [`scan`](Store::scan) would return, each with an empty value: a store need not
    /// read or copy the values (a scope's entries deleted by key, say).
    fn scan_keys<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        Box::new(
            self.scan(prefix, start)
                .map(|entry| entry.map(|(key, _)| (key, Vec::new()))),
        )
    }

    /// The greatest key starting with `prefix`.
    fn last_key(&self, prefix: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut last = None;
        for entry in self.scan(prefix, prefix) {
            last = Some(entry?.0);
        }
        Ok(last)
    }

    /// Applies every write of `batch` at once, or none of them. The batch is the store's: one
    /// that keeps keys and values in memory moves them rather than copying.
    fn write(&self, batch: WriteBatch) -> Result<()>;

    /// Writes a consistent copy of the committed state into `dir`, which must not exist yet.
    fn checkpoint(&self, dir: &Path) -> Result<()>;
}

/// Writes applied together; `None` deletes the key.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WriteBatch {
    pub writes: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl WriteBatch {
    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        self.writes.push((key, Some(value)));
    }

    pub fn delete(&mut self, key: Vec<u8>) {
        self.writes.push((key, None));
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }
}
