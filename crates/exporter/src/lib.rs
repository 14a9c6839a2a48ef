//! Exporters, as Zeebe defines them: each reads a partition's committed records in log order,
//! from the position after the last one it acknowledged, and acknowledges what it has stored.
//!
//! ```text
//! partition log (committed) ─▶ Director (a task per partition and exporter)
//!                                 open: resume after the exporter's own position (the
//!                                 partition's where it keeps none)
//!                                 export(record) … flush() at most once per interval, and on each tick
//!                                 an error: the same call again after a back-off, never a skip
//! exporter ─ Controller::acknowledge(position) ─▶ partition state (persisted with snapshots)
//!                                                   └─ log compaction waits for the slowest
//! ```
//!
//! - **At least once.** A record reaches an exporter at least once: after a crash the director
//!   resumes after the acknowledged position, which may be behind what the exporter stored.
//!   Exporters make re-delivery harmless (stores upsert by entity key).
//! - **Acknowledge what is stored.** An exporter may gather records and hand them to storage
//!   in the background; it acknowledges through its [`Controller`] once they are durable, from
//!   any thread.
//! - **Reading goes through the partition's committed-log reader**
//!   (`PartitionHandle::reader`): in a cluster, the Raft-committed log.
//! - [`conformance`]: the properties every exporter must keep, as library code.

pub mod conformance;
mod director;

use std::future::Future;

use beeline_protocol::Record;
use beeline_stream::ExporterPosition;

pub use director::{Director, DirectorConfig, ExporterMetrics, ExporterTask};

/// Why an exporter could not take a record or hand over what it gathered.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExportError {
    /// Worth trying again (the store is unreachable, full, busy): the director retries the
    /// same call after a back-off.
    #[error("{0}")]
    Retry(String),
    /// Cannot go on without an operator (a store that belongs to another log, a log compacted
    /// past what the store needs). The director stops this exporter and reports it; its
    /// position stays where it is.
    #[error("{0}")]
    Fatal(String),
}

/// What an exporter learns when it opens, and how it acknowledges.
#[derive(Debug, Clone)]
pub struct Controller {
    partition_id: u16,
    position: ExporterPosition,
}

impl Controller {
    pub fn new(partition_id: u16, position: ExporterPosition) -> Self {
        Self {
            partition_id,
            position,
        }
    }

    pub fn partition_id(&self) -> u16 {
        self.partition_id
    }

    /// Everything up to and including `position` is stored. Callable from any thread; a
    /// lower position than the last acknowledged one is ignored.
    pub fn acknowledge(&self, position: i64) {
        self.position.acknowledge(position);
    }

    /// Back to `position` when the exporter's target holds less than was acknowledged, so that
    /// compaction keeps what it must be given again.
    pub(crate) fn rewind(&self, position: i64) {
        self.position.rewind(position);
    }

    /// The last acknowledged position (`-1` when none).
    pub fn acknowledged(&self) -> i64 {
        self.position.get()
    }
}

/// An exporter of one partition's records. Calls come from one task, one at a time.
pub trait Exporter: Send + 'static {
    /// The id its position is kept under in the partition's state: stable across restarts.
    fn id(&self) -> &str;

    /// Opens the exporter for its partition. Returns the position its target already holds
    /// when it keeps one of its own (a store that writes its position with its rows), so the
    /// director resumes after what is really stored: it may be ahead of the partition's
    /// acknowledged position (acknowledged, but not yet in a snapshot), or behind it (a store
    /// deleted or restored from a backup, rebuilt from the log).
    fn open(
        &mut self,
        controller: Controller,
    ) -> impl Future<Output = Result<Option<i64>, ExportError>> + Send;

    /// Takes one committed record. Records come in log order, at least once; a record at or
    /// below the acknowledged position may come again after a restart.
    fn export(&mut self, record: &Record) -> impl Future<Output = Result<(), ExportError>> + Send;

    /// Hands what was gathered to storage. Called at most once per flush interval while
    /// records come (when the exporter has every committed record for now, or the interval
    /// passed), and on every tick of the director, so gathered records never wait long.
    fn flush(&mut self) -> impl Future<Output = Result<(), ExportError>> + Send;

    /// Called once when the node stops, after a last flush.
    fn close(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }
}

#[cfg(test)]
mod tests;
