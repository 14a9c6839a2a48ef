use rocksdb::{Cache, WriteBufferManager};

/// The node's RocksDB memory: one cache for blocks, indexes, filters and (charged through the
/// write buffer manager) memtables, shared by every partition.
#[derive(Clone)]
pub struct MemoryBudget {
    pub(crate) cache: Cache,
    pub(crate) write_buffers: WriteBufferManager,
    pub(crate) memtable_size: usize,
    limit: usize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes shared by `partitions` databases. A quarter of it may hold
    /// memtables; each memtable is sized so every partition can keep two of them.
    pub fn new(limit: usize, partitions: usize) -> Self {
        let limit = limit.max(8 * 1024 * 1024);
        let cache = Cache::new_lru_cache(limit);
        let memtables = limit / 4;
        // Stalling writes when memtables exceed their share keeps the bound hard.
        let write_buffers =
            WriteBufferManager::new_write_buffer_manager_with_cache(memtables, true, cache.clone());
        let memtable_size =
            (memtables / partitions.max(1) / 2).clamp(1024 * 1024, 64 * 1024 * 1024);
        Self {
            cache,
            write_buffers,
            memtable_size,
            limit,
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes the cache holds now (blocks, indexes, filters and charged memtables).
    pub fn usage(&self) -> usize {
        self.cache.get_usage()
    }

    /// Bytes of memtables counted against the budget.
    pub fn memtable_usage(&self) -> usize {
        self.write_buffers.get_usage()
    }
}
