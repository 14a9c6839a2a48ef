//! What the partition's exporters acknowledged, and how that holds back log compaction.
//!
//! Each configured exporter has one position: the last record position it acknowledged
//! ("everything up to and including this is stored"). Its exporter advances it from any
//! thread; the stream processor writes every position into the partition's state before each
//! snapshot (column family `Exporters`), so positions travel with snapshots, and compacts the
//! log no further than the lowest of them. A position that is not acknowledged yet is `-1`:
//! a new exporter holds back compaction until it has stored what the log holds.
//!
//! At open, positions come from the restored snapshot; an exporter that is no longer
//! configured loses its position there, so it holds nothing back any more.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use beeline_state::{ColumnFamily, KeyBuilder, KeyReader, Store, WriteBatch};

/// No record acknowledged yet.
pub const NOTHING_ACKNOWLEDGED: i64 = -1;

/// The acknowledged position of one exporter on one partition, shared by the exporter (which
/// advances it) and the partition (which persists it and compacts below it).
#[derive(Debug, Clone)]
pub struct ExporterPosition(Arc<AtomicI64>);

impl ExporterPosition {
    /// A position of its own, kept by nobody else (a partition makes its exporters' positions
    /// itself; references and tests make their own).
    pub fn new(position: i64) -> Self {
        Self(Arc::new(AtomicI64::new(position)))
    }

    /// The last acknowledged position (`-1` when none).
    pub fn get(&self) -> i64 {
        self.0.load(Ordering::Acquire)
    }

    /// Records that everything up to and including `position` is stored. A position lower
    /// than the current one is ignored: acknowledgements never go back.
    pub fn acknowledge(&self, position: i64) {
        self.0.fetch_max(position, Ordering::AcqRel);
    }

    /// Moves the position back to what the exporter's target really holds, when that is less
    /// (a store that lost its newest commits, or was deleted or restored): compaction keeps
    /// the records it needs to be given again. The exporter's director calls it when it opens.
    pub fn rewind(&self, position: i64) {
        self.0.fetch_min(position, Ordering::AcqRel);
    }
}

/// The positions of a partition's configured exporters, by exporter id.
#[derive(Debug, Default)]
pub struct ExporterPositions {
    positions: BTreeMap<String, ExporterPosition>,
}

impl ExporterPositions {
    /// Positions of the `configured` exporters as `store` holds them (`-1` for one it does not
    /// know). Positions of exporters not configured are deleted from the store; the ids of
    /// those are returned with what they had acknowledged.
    pub(crate) fn load(
        store: &dyn Store,
        configured: &[String],
    ) -> beeline_state::Result<(Self, Vec<(String, i64)>)> {
        let prefix = ColumnFamily::Exporters.prefix();
        let mut stored = BTreeMap::new();
        for entry in store.scan(&prefix, &prefix) {
            let (key, value) = entry?;
            let id = KeyReader::new(ColumnFamily::Exporters, &key)?
                .str()?
                .to_owned();
            stored.insert(id, (key, decode_position(&value)?));
        }
        let mut positions = BTreeMap::new();
        for id in configured {
            let position = stored
                .remove(id)
                .map_or(NOTHING_ACKNOWLEDGED, |(_, position)| position);
            positions.insert(id.clone(), ExporterPosition::new(position));
        }
        let mut removed = Vec::new();
        if !stored.is_empty() {
            let mut batch = WriteBatch::default();
            for (id, (key, position)) in stored {
                batch.delete(key);
                removed.push((id, position));
            }
            store.write(batch)?;
        }
        Ok((Self { positions }, removed))
    }

    /// The position of exporter `id`, if it is configured.
    pub fn get(&self, id: &str) -> Option<ExporterPosition> {
        self.positions.get(id).cloned()
    }

    /// Every configured exporter with its acknowledged position.
    pub fn all(&self) -> Vec<(String, i64)> {
        self.positions
            .iter()
            .map(|(id, position)| (id.clone(), position.get()))
            .collect()
    }

    /// The lowest acknowledged position (`None` when no exporter is configured).
    pub fn slowest(&self) -> Option<i64> {
        self.positions.values().map(ExporterPosition::get).min()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Writes the positions as they are now into `store`; returns the lowest written (`None`
    /// when no exporter is configured).
    pub(crate) fn persist(&self, store: &dyn Store) -> beeline_state::Result<Option<i64>> {
        if self.positions.is_empty() {
            return Ok(None);
        }
        let mut batch = WriteBatch::default();
        let mut slowest = i64::MAX;
        for (id, position) in &self.positions {
            let position = position.get();
            slowest = slowest.min(position);
            batch.put(
                KeyBuilder::new(ColumnFamily::Exporters).str(id).build(),
                position.to_be_bytes().to_vec(),
            );
        }
        store.write(batch)?;
        Ok(Some(slowest))
    }
}

fn decode_position(value: &[u8]) -> beeline_state::Result<i64> {
    let bytes: [u8; 8] = value.try_into().map_err(|_| beeline_state::Error::Decode {
        cf: ColumnFamily::Exporters.name(),
        reason: format!("an exporter position of {} bytes, expected 8", value.len()),
    })?;
    Ok(i64::from_be_bytes(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_state::MemStore;

    #[test]
    fn positions_survive_in_the_store_and_removed_exporters_are_dropped() {
        let store = MemStore::new();
        let configured = vec!["a".to_owned(), "b".to_owned()];
        let (positions, removed) = ExporterPositions::load(&store, &configured).unwrap();
        assert!(removed.is_empty());
        assert_eq!(positions.slowest(), Some(NOTHING_ACKNOWLEDGED));
        positions.get("a").unwrap().acknowledge(10);
        positions.get("b").unwrap().acknowledge(7);
        positions.get("b").unwrap().acknowledge(3);
        assert_eq!(positions.persist(&store).unwrap(), Some(7));

        let (positions, removed) = ExporterPositions::load(&store, &["a".to_owned()]).unwrap();
        assert_eq!(removed, vec![("b".to_owned(), 7)]);
        assert_eq!(positions.all(), vec![("a".to_owned(), 10)]);
        assert_eq!(positions.slowest(), Some(10));
        let (positions, removed) = ExporterPositions::load(&store, &configured).unwrap();
        assert!(removed.is_empty());
        assert_eq!(positions.get("b").unwrap().get(), NOTHING_ACKNOWLEDGED);
    }

    #[test]
    fn no_exporter_holds_nothing_back() {
        let store = MemStore::new();
        let (positions, _) = ExporterPositions::load(&store, &[]).unwrap();
        assert_eq!(positions.slowest(), None);
        assert_eq!(positions.persist(&store).unwrap(), None);
    }
}
