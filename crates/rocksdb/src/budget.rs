use beeline_state::BufferedBytes;
use rocksdb::{Cache, WriteBufferManager};

/// The node's state memory: each partition's write-back buffer (committed writes not yet in
/// RocksDB, `beeline_state::Overlay`) and one RocksDB cache for blocks, indexes, filters and
/// (charged through the write buffer manager) memtables, shared by every partition.
#[derive(Clone)]
pub struct MemoryBudget {
    pub(crate) cache: Cache,
    pub(crate) write_buffers: WriteBufferManager,
    pub(crate) memtable_size: usize,
    pub(crate) write_back: usize,
    /// What the partitions' write-back buffers hold now.
    pub(crate) buffered: BufferedBytes,
    limit: usize,
}

impl MemoryBudget {
    /// A budget of `limit` bytes shared by `partitions` partitions. An eighth of it (256 KiB to
    /// 4 MiB a partition) buffers committed writes: enough for the instances in flight to end
    /// in memory (in a replicated partition an instance lives for several Raft rounds, and a
    /// follower replays its commits in chunks), small enough that long-lived state moves on to
    /// RocksDB soon and in short writes (see [`beeline_state::Overlay`]). Of the rest,
    /// RocksDB's cache, a quarter may hold memtables, each sized so every partition can keep
    /// two of them.
    pub fn new(limit: usize, partitions: usize) -> Self {
        let limit = limit.max(8 * 1024 * 1024);
        let partitions = partitions.max(1);
        let write_back = (limit / 8 / partitions).clamp(256 * 1024, 4 * 1024 * 1024);
        let cache_limit = limit
            .saturating_sub(write_back * partitions)
            .max(4 * 1024 * 1024);
        let cache = Cache::new_lru_cache(cache_limit);
        let memtables = cache_limit / 4;
        // Stalling writes when memtables exceed their share keeps the bound hard.
        let write_buffers =
            WriteBufferManager::new_write_buffer_manager_with_cache(memtables, true, cache.clone());
        let memtable_size = (memtables / partitions / 2).clamp(1024 * 1024, 64 * 1024 * 1024);
        Self {
            cache,
            write_buffers,
            memtable_size,
            write_back,
            buffered: BufferedBytes::default(),
            limit,
        }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes of committed writes each partition buffers before they go to RocksDB.
    pub fn write_back(&self) -> usize {
        self.write_back
    }

    /// Bytes of committed writes the partitions buffer now, not yet in RocksDB.
    pub fn write_back_usage(&self) -> usize {
        self.buffered.get()
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
