//! RocksDB behind the state store contract.
//!
//! - **Bounded memory**: every partition's database shares one LRU block cache and one write
//!   buffer manager that charges memtables to that cache, sized together from one budget
//!   ([`MemoryBudget`]); index and filter blocks live in the cache too, so the budget covers
//!   them (the unbounded table-reader memory that Zeebe and ksqlDB met in production).
//! - **No RocksDB WAL**: the partition log is the write-ahead log. A database is never reopened
//!   after a crash; it is rebuilt in a fresh runtime directory from the latest snapshot, and
//!   the log is replayed on top.
//! - **Queue scans** (`Store::scan_queue`) seek where the live entries of a prefix begin
//!   instead of stepping over the tombstones its consumed front left (`queue_hints.rs`).
//! - **Write-back**: a partition's store ([`PartitionStore`]) keeps committed writes in memory
//!   (`beeline_state::Overlay`) and writes them to RocksDB when they fill their share of the
//!   budget, so short-lived state (most of a running instance) never reaches RocksDB.
//! - **Snapshots** are RocksDB checkpoints (memtables flushed, SST files hard-linked).

mod budget;
mod queue_hints;
mod store;

pub use budget::MemoryBudget;
pub use store::{PartitionStore, RocksDbStore, RocksDbStoreConfig, open_partition_store};
