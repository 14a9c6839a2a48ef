//! Work that blocks its thread (a snapshot's checkpoint and syncs) run from a partition's task.
//!
//! Partitions run as tasks on the broker's few runtime workers (one per core), beside the
//! gateway, the Raft groups and every other partition. A snapshot holds its thread for tens to
//! hundreds of milliseconds (the state's write-back, a RocksDB checkpoint that flushes its
//! memtables, a manifest over the files, a sync of each); on a worker, that stalls every other
//! task queued there, and a few such snapshots at once would stall all the workers of a broker.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `work` on the calling task, first handing the worker's other tasks to another thread
/// (`block_in_place`) on a multi-thread runtime. On a current-thread runtime (tests) or
/// outside a runtime, it runs in place. The partition's task waits for it either way: its
/// state must not change while a snapshot of it is taken.
pub(crate) fn off_worker<T>(work: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}
