//! The partition: a journal, a state store, and the stream processor between them.
//!
//! ```text
//! requests ─▶ inbox (bounded) ─▶ append commands ─▶ process (engine) ─▶ append results
//!                                                     │                    │
//!                                   store.write(batch) ◀┘                    ▼
//!                         flusher (one fsync for everything appended) ─▶ commit index
//!                                                     ─▶ side effects: responses
//! ```
//! - One task per partition runs commands strictly in log order. Commands are processed as soon
//!   as they are written (the log is a prefix: results are never durable before their command),
//!   and answers wait until the result batch is committed.
//! - Group commit: at most one flush is in flight; everything appended meanwhile goes with the
//!   next one.
//! - Recovery: open the latest verified snapshot, replay the events after it (appliers only),
//!   then process the commands that have no results yet.
//! - The scheduler writes due commands (message expiry, later timers and job time-outs) into the
//!   log like any other command.

mod blocking;
mod clock;
mod config;
pub mod disk;
mod error;
mod exporters;
mod handback;
mod handle;
mod job_streams;
mod metrics;
mod processor;
mod reader;
mod recovery;
mod replica;
mod role;
mod router;
pub mod testkit;

pub use clock::{Clock, ControlledClock, SystemClock};
pub use config::{FlushPolicy, PartitionConfig};
pub use error::{OpenError, PartitionError};
pub use exporters::{ExporterPosition, ExporterPositions, NOTHING_ACKNOWLEDGED};
pub use handback::Undelivered;
pub use handle::{PartitionHandle, PartitionStatus};
pub use job_streams::{JobStream, JobStreamProperties, JobStreams, PushedJob};
pub use metrics::{HistogramSnapshot, LATENCY_BOUNDS, LatencyHistogram, PartitionMetrics};
pub use reader::LogStreamReader;
pub use recovery::{Partition, StoreOpener, rebuild_state};
pub use role::{ReplicatedLog, Role, RoleState};
pub use router::{CommandRouter, LocalRouter};
