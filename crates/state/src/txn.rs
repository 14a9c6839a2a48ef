//! A transaction: the writes of one processing batch, buffered over a store.

use std::collections::BTreeMap;

use crate::Result;
use crate::merge::Merge;
use crate::store::{ScanIter, Store, WriteBatch};

/// Reads see the transaction's own writes; nothing reaches the store until [`commit`].
/// Dropping the transaction rolls it back.
///
/// [`commit`]: Transaction::commit
pub struct Transaction<'s> {
    store: &'s dyn Store,
    writes: BTreeMap<Vec<u8>, Pending>,
}

/// A buffered write.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pending {
    Put(Vec<u8>),
    /// A key the store does not hold: deleting it again in the same transaction leaves no trace
    /// (no tombstone for the store to skip over later).
    Inserted(Vec<u8>),
    Deleted,
}

impl Pending {
    fn value(&self) -> Option<&Vec<u8>> {
        match self {
            Pending::Put(v) | Pending::Inserted(v) => Some(v),
            Pending::Deleted => None,
        }
    }
}

impl<'s> Transaction<'s> {
    pub fn new(store: &'s dyn Store) -> Self {
        Self {
            store,
            writes: BTreeMap::new(),
        }
    }

    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.writes.get(key) {
            Some(pending) => Ok(pending.value().cloned()),
            None => self.store.get(key),
        }
    }

    pub fn exists(&self, key: &[u8]) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    pub fn put(&mut self, key: Vec<u8>, value: Vec<u8>) {
        let pending = match self.writes.get(&key) {
            Some(Pending::Inserted(_)) => Pending::Inserted(value),
            _ => Pending::Put(value),
        };
        self.writes.insert(key, pending);
    }

    /// Writes a key the caller knows the store does not hold (it carries a key generated in
    /// this transaction). If the transaction deletes it again, the store never sees it.
    pub fn insert(&mut self, key: Vec<u8>, value: Vec<u8>) {
        // After a delete in this transaction the store may still hold the key: the write must
        // reach it (as a put), or a later delete would leave the stored value behind.
        let pending = match self.writes.get(&key) {
            Some(Pending::Deleted) | Some(Pending::Put(_)) => Pending::Put(value),
            _ => Pending::Inserted(value),
        };
        self.writes.insert(key, pending);
    }

    pub fn delete(&mut self, key: Vec<u8>) {
        if let Some(Pending::Inserted(_)) = self.writes.get(&key) {
            self.writes.remove(&key);
        } else {
            self.writes.insert(key, Pending::Deleted);
        }
    }

    /// Entries with `prefix`, in key order, as the store would hold them after a commit.
    pub fn scan<'a>(&'a self, prefix: &[u8]) -> ScanIter<'a> {
        self.scan_from(prefix, prefix)
    }

    /// Like [`scan`](Transaction::scan), from the first key `>= start`.
    pub fn scan_from<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        self.merged(self.store.scan(prefix, start), prefix, start)
    }

    /// The keys of [`scan`](Transaction::scan)'s entries, without reading or copying their
    /// values.
    pub fn scan_keys<'a>(&'a self, prefix: &[u8]) -> impl Iterator<Item = Result<Vec<u8>>> + 'a {
        let stored = self.store.scan_keys(prefix, prefix);
        let entries: ScanIter<'a> = if self.writes.is_empty() {
            stored
        } else {
            let prefix = prefix.to_vec();
            let pending = self
                .writes
                .range(prefix.clone()..)
                .take_while(move |(k, _)| k.starts_with(&prefix))
                .map(|(k, pending)| (k.as_slice(), pending.value().map(|_| &[][..])));
            Box::new(Merge::new(stored, pending))
        };
        entries.map(|entry| entry.map(|(key, _)| key))
    }

    /// [`scan`](Transaction::scan) of a prefix consumed from the front, like a queue or a
    /// due-date index ([`Store::scan_queue`]).
    pub fn scan_queue<'a>(&'a self, prefix: &[u8]) -> ScanIter<'a> {
        self.merged(self.store.scan_queue(prefix, prefix), prefix, prefix)
    }

    /// The store's entries from `start` with this transaction's writes over them.
    fn merged<'a>(&'a self, stored: ScanIter<'a>, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        if self.writes.is_empty() {
            return stored;
        }
        let prefix = prefix.to_vec();
        let pending = self
            .writes
            .range(start.to_vec()..)
            .take_while(move |(k, _)| k.starts_with(&prefix))
            .map(|(k, pending)| (k.as_slice(), pending.value().map(Vec::as_slice)));
        Box::new(Merge::new(stored, pending))
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// The buffered writes as one batch, leaving the transaction empty.
    pub fn take_batch(&mut self) -> WriteBatch {
        WriteBatch {
            writes: std::mem::take(&mut self.writes)
                .into_iter()
                .map(|(key, pending)| match pending {
                    Pending::Put(v) | Pending::Inserted(v) => (key, Some(v)),
                    Pending::Deleted => (key, None),
                })
                .collect(),
        }
    }

    /// Writes everything at once.
    pub fn commit(mut self) -> Result<()> {
        let batch = self.take_batch();
        if batch.is_empty() {
            return Ok(());
        }
        self.store.write(batch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemStore;
    use proptest::prelude::*;
    use std::collections::BTreeMap as Model;

    #[test]
    fn a_key_inserted_and_deleted_in_one_transaction_leaves_no_tombstone() {
        let store = MemStore::new();
        let mut txn = Transaction::new(&store);
        txn.insert(b"new".to_vec(), b"1".to_vec());
        txn.put(b"new".to_vec(), b"2".to_vec());
        assert_eq!(txn.get(b"new").unwrap(), Some(b"2".to_vec()));
        txn.delete(b"new".to_vec());
        txn.put(b"old".to_vec(), b"x".to_vec());
        txn.delete(b"old".to_vec());
        let batch = txn.take_batch();
        assert_eq!(
            batch.writes,
            vec![(b"old".to_vec(), None)],
            "only the plain put leaves a delete"
        );
    }

    #[test]
    fn an_insert_after_a_delete_still_overwrites_and_deletes_the_stored_key() {
        let store = MemStore::new();
        let mut seed = WriteBatch::default();
        seed.put(b"k".to_vec(), b"stored".to_vec());
        store.write(seed).unwrap();
        let mut txn = Transaction::new(&store);
        txn.delete(b"k".to_vec());
        txn.insert(b"k".to_vec(), b"again".to_vec());
        txn.delete(b"k".to_vec());
        txn.commit().unwrap();
        assert_eq!(store.get(b"k").unwrap(), None, "the stored key is gone");
    }

    #[test]
    fn reads_see_own_writes_and_rollback_discards_them() {
        let store = MemStore::new();
        let mut txn = Transaction::new(&store);
        txn.put(b"a1".to_vec(), b"x".to_vec());
        assert_eq!(txn.get(b"a1").unwrap(), Some(b"x".to_vec()));
        drop(txn);
        assert_eq!(store.get(b"a1").unwrap(), None);
    }

    proptest! {
        /// Whatever mix of stored entries and pending writes, a scan shows what the store
        /// would hold after a commit (a scan of keys its keys), and a commit makes the store
        /// hold exactly that.
        #[test]
        fn scans_merge_like_a_commit(
            stored in proptest::collection::btree_map("[ab][0-9]", "[a-z]", 0..12),
            ops in proptest::collection::vec(("[ab][0-9]", proptest::option::of("[a-z]")), 0..12),
        ) {
            let store = MemStore::new();
            let mut seed = WriteBatch::default();
            for (k, v) in &stored { seed.put(k.clone().into_bytes(), v.clone().into_bytes()); }
            store.write(seed).unwrap();
            let mut model: Model<Vec<u8>, Vec<u8>> = stored.iter()
                .map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes())).collect();
            let mut txn = Transaction::new(&store);
            for (k, v) in &ops {
                match v {
                    Some(v) => { txn.put(k.clone().into_bytes(), v.clone().into_bytes()); model.insert(k.clone().into_bytes(), v.clone().into_bytes()); }
                    None => { txn.delete(k.clone().into_bytes()); model.remove(k.as_bytes()); }
                }
            }
            let scanned: Vec<_> = txn.scan(b"a").map(|r| r.unwrap()).collect();
            let expected: Vec<_> = model.iter().filter(|(k, _)| k.starts_with(b"a"))
                .map(|(k, v)| (k.clone(), v.clone())).collect();
            prop_assert_eq!(&scanned, &expected);
            let keys: Vec<_> = txn.scan_keys(b"a").map(|r| r.unwrap()).collect();
            let expected_keys: Vec<_> = expected.into_iter().map(|(k, _)| k).collect();
            prop_assert_eq!(keys, expected_keys);
            txn.commit().unwrap();
            prop_assert_eq!(store.dump(), model.into_iter().collect::<Vec<_>>());
        }
    }
}
