//! A write-back layer over a store: committed batches stay in memory, and reach the store
//! when they add up to a limit (an eighth of the limit at a time), or before a checkpoint. State that lives shorter
//! than that (an instance that starts and completes between two flushes) never reaches the
//! store, and reading it never leaves memory.
//!
//! This is safe because state is a projection of the log: a store is opened from the last
//! snapshot and the log is replayed over it, so whatever was in memory at a crash is rebuilt.
//! A checkpoint flushes first, so snapshots hold everything.
//!
//! What the store cannot hold: a key starts with its column family (2 bytes) and, in most
//! families, goes on with an entity key generated in increasing order (8 bytes), or with a
//! name and then such a key (a job type, then the job). The layer keeps, per family, the
//! greatest key it ever wrote to the store (read from the store when it opens): its high water.
//! A key, or a scan prefix, above the high water is not in the store, so looking up a new
//! entity, or scanning its scope, is answered from memory alone, and deleting such a key
//! leaves nothing to write. The test is sound for any key layout; it pays off for keys that
//! grow.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::Result;
use crate::cf::ColumnFamily;
use crate::merge::Merge;
use crate::store::{ScanIter, Store, WriteBatch};

/// Bytes of a key's column family.
const FAMILY: usize = 2;
/// What one buffered entry costs beyond its key and value (map node, vectors).
const ENTRY_OVERHEAD: usize = 64;
/// A full buffer is written in this many slices, one each time a write goes over the limit.
const FLUSH_SLICES: usize = 8;

pub struct Overlay<S: Store> {
    inner: S,
    limit: usize,
    state: Mutex<Buffered>,
}

/// The bytes buffered by every overlay counted in it (a node's partitions), for monitoring.
#[derive(Debug, Clone, Default)]
pub struct BufferedBytes(Arc<AtomicUsize>);

impl BufferedBytes {
    pub fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed)
    }

    fn add(&self, bytes: usize) {
        self.0.fetch_add(bytes, Ordering::Relaxed);
    }

    fn sub(&self, bytes: usize) {
        self.0.fetch_sub(bytes, Ordering::Relaxed);
    }
}

struct Buffered {
    /// Committed writes the store has not seen: a value, or `None` for a delete of a key the
    /// store may hold.
    entries: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// What `entries` costs, as counted against the limit.
    bytes: usize,
    /// Per column family, the greatest key the store holds (without the family); a family
    /// missing here has no key in the store.
    high_water: HashMap<[u8; FAMILY], Vec<u8>>,
    /// Where the last partial flush stopped; the next one goes on from there.
    flushed_up_to: Bound<Vec<u8>>,
    /// Where `bytes` is counted too, as of the end of the last write or flush (`published`):
    /// one update per batch, not one per key.
    gauge: BufferedBytes,
    published: usize,
}

impl Default for Buffered {
    fn default() -> Self {
        Self {
            entries: BTreeMap::new(),
            bytes: 0,
            high_water: HashMap::new(),
            flushed_up_to: Bound::Unbounded,
            gauge: BufferedBytes::default(),
            published: 0,
        }
    }
}

impl Drop for Buffered {
    fn drop(&mut self) {
        self.gauge.sub(self.published);
    }
}

/// A key or prefix without its family: the bytes the high water is compared with.
fn in_family(key: &[u8]) -> &[u8] {
    &key[FAMILY.min(key.len())..]
}

fn family(key: &[u8]) -> Option<[u8; FAMILY]> {
    key.get(..FAMILY)?.try_into().ok()
}

fn cost(key: &[u8], value: &Option<Vec<u8>>) -> usize {
    key.len() + value.as_ref().map_or(0, Vec::len) + ENTRY_OVERHEAD
}

impl Buffered {
    /// Whether the store may hold `key`, or a key starting with the prefix `key`. Every key
    /// the store holds is at most the family's high water, and a prefix above the high water
    /// (which then cannot be a prefix of it) has every key starting with it above it too.
    fn store_may_hold(&self, key: &[u8]) -> bool {
        let Some(family) = family(key) else {
            return true;
        };
        self.high_water
            .get(&family)
            .is_some_and(|high| in_family(key) <= high.as_slice())
    }

    /// Brings the gauge up to date with `bytes`.
    fn publish(&mut self) {
        if self.bytes > self.published {
            self.gauge.add(self.bytes - self.published);
        } else {
            self.gauge.sub(self.published - self.bytes);
        }
        self.published = self.bytes;
    }

    fn raise_high_water(&mut self, key: &[u8]) {
        let Some(family) = family(key) else {
            return;
        };
        let part = in_family(key);
        match self.high_water.get_mut(&family) {
            Some(high) if part <= high.as_slice() => {}
            Some(high) => *high = part.to_vec(),
            None => {
                self.high_water.insert(family, part.to_vec());
            }
        }
    }

    fn apply(&mut self, key: Vec<u8>, value: Option<Vec<u8>>) {
        use std::collections::btree_map::Entry;
        let entry = match value {
            Some(value) => Some(value),
            None if self.store_may_hold(&key) => None,
            // A key the store never saw: forgetting it is the whole delete.
            None => {
                if let Some(old) = self.entries.remove(&key) {
                    self.bytes -= cost(&key, &old);
                }
                return;
            }
        };
        self.bytes += cost(&key, &entry);
        match self.entries.entry(key) {
            Entry::Vacant(vacant) => {
                vacant.insert(entry);
            }
            Entry::Occupied(mut occupied) => {
                let old = occupied.insert(entry);
                self.bytes -= cost(occupied.key(), &old);
            }
        }
    }
}

/// The buffered entries with a prefix, read a chunk at a time (the lock is held only while a
/// chunk is copied), since a scan is often stopped after a few entries of a long range (the
/// front of a queue). Deletes come as `None`. The processor does not write while it scans, so
/// the chunks are consistent.
struct BufferedRange<'a> {
    state: &'a Mutex<Buffered>,
    prefix: Vec<u8>,
    from: Bound<Vec<u8>>,
    chunk: std::vec::IntoIter<(Vec<u8>, Option<Vec<u8>>)>,
    chunk_size: usize,
    done: bool,
    /// Values are left empty (not copied): a scan of keys.
    keys_only: bool,
}

const FIRST_CHUNK: usize = 8;
const LARGEST_CHUNK: usize = 512;

impl Iterator for BufferedRange<'_> {
    type Item = (Vec<u8>, Option<Vec<u8>>);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(entry) = self.chunk.next() {
            return Some(entry);
        }
        if self.done {
            return None;
        }
        let chunk: Vec<_> = {
            let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state
                .entries
                .range((self.from.clone(), Bound::Unbounded))
                .take_while(|(k, _)| k.starts_with(&self.prefix))
                .take(self.chunk_size)
                .map(|(k, v)| match self.keys_only {
                    true => (k.clone(), v.as_ref().map(|_| Vec::new())),
                    false => (k.clone(), v.clone()),
                })
                .collect()
        };
        self.done = chunk.len() < self.chunk_size;
        self.chunk_size = (self.chunk_size * 2).min(LARGEST_CHUNK);
        if let Some((last, _)) = chunk.last() {
            self.from = Bound::Excluded(last.clone());
        }
        self.chunk = chunk.into_iter();
        self.chunk.next()
    }
}

impl<S: Store> Overlay<S> {
    /// Wraps `inner`, buffering up to `limit` bytes of committed writes.
    pub fn new(inner: S, limit: usize) -> Result<Self> {
        let mut buffered = Buffered::default();
        // Retired families too: a state of an older format keeps them until it is converted.
        let retired = crate::RETIRED_FAMILY_IDS.iter().map(|id| id.to_be_bytes());
        for prefix in ColumnFamily::ALL
            .iter()
            .map(|cf| cf.prefix())
            .chain(retired)
        {
            if let Some(last) = inner.last_key(&prefix)? {
                buffered.raise_high_water(&last);
            }
        }
        Ok(Self {
            inner,
            limit,
            state: Mutex::new(buffered),
        })
    }

    /// Counts this overlay's buffered bytes in `gauge` from now on (as long as it lives).
    pub fn counted_in(self, gauge: BufferedBytes) -> Self {
        {
            let mut state = self.lock();
            state.publish();
            state.gauge.sub(state.published);
            gauge.add(state.published);
            state.gauge = gauge;
        }
        self
    }

    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Bytes of committed writes held in memory now.
    pub fn buffered_bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> MutexGuard<'_, Buffered> {
        // Every change to `Buffered` completes without a panicking path in between.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes everything buffered to the store in one batch.
    fn flush_all(&self) -> Result<()> {
        let mut state = self.lock();
        let flushed = self.flush_some(&mut state, usize::MAX);
        state.publish();
        flushed
    }

    /// Writes buffered entries worth at least `bytes` (or all of them) to the store in one
    /// batch, going round the key space from where the last such write stopped: writing a
    /// full buffer at once would stall processing for as long.
    fn flush_some(&self, buffered: &mut Buffered, bytes: usize) -> Result<()> {
        let mut batch = WriteBatch::default();
        let mut taken = 0;
        let after = std::mem::replace(&mut buffered.flushed_up_to, Bound::Unbounded);
        let wrapped = buffered.entries.iter();
        for (key, value) in buffered
            .entries
            .range((after.clone(), Bound::Unbounded))
            .chain(wrapped)
        {
            if taken >= bytes || batch.writes.first().is_some_and(|(first, _)| first == key) {
                break;
            }
            taken += cost(key, value);
            batch.writes.push((key.clone(), value.clone()));
        }
        if batch.is_empty() {
            return Ok(());
        }
        // The store takes the batch; what the bookkeeping after it needs is kept aside.
        let flushed: Vec<(Vec<u8>, bool)> = batch
            .writes
            .iter()
            .map(|(key, value)| (key.clone(), value.is_some()))
            .collect();
        // On failure the entries stay buffered: nothing is lost, and a later flush retries.
        if let Err(e) = self.inner.write(batch) {
            buffered.flushed_up_to = after;
            return Err(e);
        }
        for (key, stored) in &flushed {
            if *stored {
                buffered.raise_high_water(key);
            }
            if let Some(old) = buffered.entries.remove(key) {
                buffered.bytes -= cost(key, &old);
            }
        }
        if let Some((last, _)) = flushed.into_iter().last() {
            buffered.flushed_up_to = Bound::Excluded(last);
        }
        Ok(())
    }

    fn merged<'a>(
        &'a self,
        prefix: &[u8],
        start: &[u8],
        keys_only: bool,
        stored: impl FnOnce(&'a S) -> ScanIter<'a>,
    ) -> ScanIter<'a> {
        let may_hold = self.lock().store_may_hold(prefix);
        let pending = BufferedRange {
            state: &self.state,
            prefix: prefix.to_vec(),
            from: Bound::Included(start.to_vec()),
            chunk: Vec::new().into_iter(),
            chunk_size: FIRST_CHUNK,
            done: false,
            keys_only,
        };
        if may_hold {
            Box::new(Merge::new(stored(&self.inner), pending))
        } else {
            Box::new(pending.filter_map(|(k, v)| Some(Ok((k, v?)))))
        }
    }
}

impl<S: Store> Store for Overlay<S> {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        {
            let state = self.lock();
            if let Some(entry) = state.entries.get(key) {
                return Ok(entry.clone());
            }
            if !state.store_may_hold(key) {
                return Ok(None);
            }
        }
        self.inner.get(key)
    }

    fn scan<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        self.merged(prefix, start, false, |inner| inner.scan(prefix, start))
    }

    fn scan_keys<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        self.merged(prefix, start, true, |inner| inner.scan_keys(prefix, start))
    }

    fn scan_queue<'a>(&'a self, prefix: &[u8], start: &[u8]) -> ScanIter<'a> {
        self.merged(prefix, start, false, |inner| {
            inner.scan_queue(prefix, start)
        })
    }

    fn last_key(&self, prefix: &[u8]) -> Result<Option<Vec<u8>>> {
        self.flush_all()?;
        self.inner.last_key(prefix)
    }

    fn write(&self, batch: WriteBatch) -> Result<()> {
        let mut state = self.lock();
        for (key, value) in batch.writes {
            state.apply(key, value);
        }
        // A slice at a time, keeping each stall short, until back under the limit.
        let mut flushed = Ok(());
        while state.bytes > self.limit && flushed.is_ok() {
            flushed = self.flush_some(&mut state, (self.limit / FLUSH_SLICES).max(1));
        }
        state.publish();
        flushed
    }

    fn checkpoint(&self, dir: &Path) -> Result<()> {
        self.flush_all()?;
        self.inner.checkpoint(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KeyBuilder, MemStore};
    use proptest::prelude::*;

    fn key(cf: ColumnFamily, entity: i64, name: &str) -> Vec<u8> {
        KeyBuilder::new(cf).i64(entity).str(name).build()
    }

    fn put(store: &dyn Store, k: &[u8], v: &[u8]) {
        let mut batch = WriteBatch::default();
        batch.put(k.to_vec(), v.to_vec());
        store.write(batch).unwrap();
    }

    fn delete(store: &dyn Store, k: &[u8]) {
        let mut batch = WriteBatch::default();
        batch.delete(k.to_vec());
        store.write(batch).unwrap();
    }

    #[test]
    fn keeps_the_store_contract() {
        crate::conformance::run(
            || Overlay::new(MemStore::new(), 0).unwrap(),
            |dir| MemStore::open_checkpoint(dir).unwrap(),
        );
        crate::conformance::run(
            || Overlay::new(MemStore::new(), 1 << 20).unwrap(),
            |dir| MemStore::open_checkpoint(dir).unwrap(),
        );
    }

    // A state of an older format keeps retired families until it is converted at open; the
    // conversion reads and deletes them through this layer.
    #[test]
    fn retired_families_in_the_store_are_read_and_deleted() {
        let inner = MemStore::new();
        let retired = [0u8, 51, 0, 0, 0, 1, b'w', 0, 0, 0, 0, 0, 0, 0, 7];
        put(&inner, &retired, b"");
        let overlay = Overlay::new(inner, 1 << 20).unwrap();
        let found: Vec<_> = overlay.scan(&retired[..2], &retired[..2]).collect();
        assert_eq!(found.len(), 1);
        assert_eq!(overlay.get(&retired).unwrap(), Some(Vec::new()));
        delete(&overlay, &retired);
        overlay
            .checkpoint(&tempfile::tempdir().unwrap().path().join("c"))
            .unwrap();
        assert!(
            overlay.inner().dump().is_empty(),
            "the delete reached the store"
        );
    }

    #[test]
    fn short_lived_keys_never_reach_the_store() {
        let overlay = Overlay::new(MemStore::new(), 1 << 20).unwrap();
        let k = key(ColumnFamily::Variables, 7, "x");
        put(&overlay, &k, b"1");
        assert_eq!(overlay.get(&k).unwrap(), Some(b"1".to_vec()));
        delete(&overlay, &k);
        assert_eq!(overlay.buffered_bytes(), 0, "nothing left to write");
        overlay
            .checkpoint(&tempfile::tempdir().unwrap().path().join("c"))
            .unwrap();
        assert!(
            overlay.inner().dump().is_empty(),
            "not even a delete reached the store"
        );
    }

    #[test]
    fn a_delete_of_a_flushed_key_reaches_the_store() {
        let overlay = Overlay::new(MemStore::new(), 0).unwrap();
        let k = key(ColumnFamily::Variables, 7, "x");
        put(&overlay, &k, b"1");
        assert_eq!(
            overlay.inner().get(&k).unwrap(),
            Some(b"1".to_vec()),
            "flushed"
        );
        delete(&overlay, &k);
        assert_eq!(overlay.get(&k).unwrap(), None);
        assert_eq!(overlay.inner().get(&k).unwrap(), None);
    }

    #[test]
    fn a_shared_gauge_counts_what_every_overlay_buffers() {
        let gauge = BufferedBytes::default();
        let one = Overlay::new(MemStore::new(), 1 << 20)
            .unwrap()
            .counted_in(gauge.clone());
        let two = Overlay::new(MemStore::new(), 1 << 20)
            .unwrap()
            .counted_in(gauge.clone());
        put(&one, &key(ColumnFamily::Jobs, 1, "a"), b"value");
        put(&two, &key(ColumnFamily::Jobs, 1, "b"), b"value");
        put(&two, &key(ColumnFamily::Jobs, 2, "c"), b"value");
        assert!(one.buffered_bytes() > 0);
        assert_eq!(gauge.get(), one.buffered_bytes() + two.buffered_bytes());
        delete(&two, &key(ColumnFamily::Jobs, 2, "c"));
        assert_eq!(gauge.get(), one.buffered_bytes() + two.buffered_bytes());
        let dir = tempfile::tempdir().unwrap();
        one.checkpoint(&dir.path().join("checkpoint")).unwrap();
        assert_eq!(one.buffered_bytes(), 0);
        assert_eq!(gauge.get(), two.buffered_bytes());
        drop(two);
        assert_eq!(gauge.get(), 0, "a closed overlay holds nothing");
    }

    #[test]
    fn the_high_water_is_read_from_the_store_it_opens() {
        let store = MemStore::new();
        let old = key(ColumnFamily::Variables, 100, "x");
        put(&store, &old, b"old");
        let overlay = Overlay::new(store, 1 << 20).unwrap();
        let state = overlay.lock();
        assert!(state.store_may_hold(&old));
        assert!(state.store_may_hold(&key(ColumnFamily::Variables, 99, "y")));
        assert!(
            !state.store_may_hold(&key(ColumnFamily::Variables, 100, "y")),
            "the whole key counts, not only its entity"
        );
        assert!(state.store_may_hold(&KeyBuilder::new(ColumnFamily::Variables).i64(100).build()));
        assert!(!state.store_may_hold(&key(ColumnFamily::Variables, 101, "x")));
        assert!(!state.store_may_hold(&KeyBuilder::new(ColumnFamily::Variables).i64(101).build()));
        assert!(
            !state.store_may_hold(&key(ColumnFamily::Jobs, 1, "x")),
            "no job stored"
        );
        drop(state);
        assert_eq!(overlay.get(&old).unwrap(), Some(b"old".to_vec()));
    }

    #[test]
    fn a_long_buffered_range_scans_whole_and_in_order() {
        let model = MemStore::new();
        let overlay = Overlay::new(MemStore::new(), 0).unwrap();
        // Flushed: every third key, so the buffered range must merge with the store's.
        for i in (0..3000).step_by(3) {
            let k = key(ColumnFamily::Jobs, 1, &format!("{i:05}"));
            put(&overlay, &k, b"stored");
            put(&model, &k, b"stored");
        }
        let overlay = Overlay::new(overlay.inner, 1 << 30).unwrap();
        for i in 0..3000 {
            let k = key(ColumnFamily::Jobs, 1, &format!("{i:05}"));
            if i % 2 == 0 {
                delete(&overlay, &k);
                delete(&model, &k);
            } else {
                put(&overlay, &k, b"buffered");
                put(&model, &k, b"buffered");
            }
        }
        let prefix = KeyBuilder::new(ColumnFamily::Jobs).i64(1).build();
        let got: Vec<_> = overlay.scan(&prefix, &prefix).map(|r| r.unwrap()).collect();
        let want: Vec<_> = model.scan(&prefix, &prefix).map(|r| r.unwrap()).collect();
        assert_eq!(got.len(), 1500);
        assert_eq!(got, want);
        let first: Vec<_> = overlay
            .scan(&prefix, &prefix)
            .take(3)
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(first, want[..3].to_vec());
    }

    fn cf_of(i: u8) -> ColumnFamily {
        [
            ColumnFamily::Variables,
            ColumnFamily::Jobs,
            ColumnFamily::Meta,
        ][usize::from(i % 3)]
    }

    proptest! {
        /// Whatever the writes, the limit, the flushes and the reopenings, the layer reads
        /// (and scans keys) like a plain store given the same writes.
        #[test]
        fn reads_like_a_plain_store(
            ops in proptest::collection::vec(
                (0u8..3, 0i64..6, "[ab]", proptest::option::of("[a-z]{0,3}"), 0u8..10),
                1..60,
            ),
            limit in 0usize..600,
        ) {
            let model = MemStore::new();
            let mut overlay = Overlay::new(MemStore::new(), limit).unwrap();
            for (cf, entity, name, value, action) in &ops {
                let k = key(cf_of(*cf), *entity, name);
                match value {
                    Some(v) => { put(&overlay, &k, v.as_bytes()); put(&model, &k, v.as_bytes()); }
                    None => { delete(&overlay, &k); delete(&model, &k); }
                }
                if *action == 0 {
                    // Reopen over what the store holds after a checkpoint, as a restart does.
                    let dir = tempfile::tempdir().unwrap();
                    overlay.checkpoint(&dir.path().join("c")).unwrap();
                    let reopened = MemStore::open_checkpoint(&dir.path().join("c")).unwrap();
                    overlay = Overlay::new(reopened, limit).unwrap();
                }
                for probe in 0..6 {
                    for cf in 0..3 {
                        let prefix = KeyBuilder::new(cf_of(cf)).i64(probe).build();
                        let got: Vec<_> = overlay.scan(&prefix, &prefix).map(|r| r.unwrap()).collect();
                        let want: Vec<_> = model.scan(&prefix, &prefix).map(|r| r.unwrap()).collect();
                        let keys: Vec<_> = overlay.scan_keys(&prefix, &prefix).map(|r| r.unwrap()).collect();
                        let want_keys: Vec<_> = want.iter().map(|(k, _)| (k.clone(), Vec::new())).collect();
                        prop_assert_eq!(got, want);
                        prop_assert_eq!(keys, want_keys);
                        let k = key(cf_of(cf), probe, "a");
                        prop_assert_eq!(overlay.get(&k).unwrap(), model.get(&k).unwrap());
                    }
                }
            }
            let all: Vec<_> = overlay.scan(&[], &[]).map(|r| r.unwrap()).collect();
            prop_assert_eq!(all, model.dump());
        }
    }
}
