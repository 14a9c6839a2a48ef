//! Partition state as a projection of the log.
//!
//! - **Column families** are logical: each has a fixed id that prefixes its keys in one ordered
//!   key space (as Zeebe does), so a backend needs one physical table and one memtable per
//!   partition, not one per kind of data.
//! - **Typed keys** are built with [`KeyBuilder`] and read back with [`KeyReader`]; encodings
//!   keep numeric order, so prefix and range scans work.
//! - A [`Transaction`] buffers the writes of one processing batch over a [`Store`]: reads see
//!   the batch's own writes at once, a rollback is dropping it, and a commit is one atomic
//!   write batch (together with the last processed position and the key generator).
//! - [`snapshot`]: checkpoints of a store at a log position, verified on restore, with
//!   retention.
//!
//! - [`Overlay`]: committed writes held in memory until they add up to a limit, so
//!   short-lived state never reaches the backend.
//!
//! The engine sees only these traits; RocksDB lives in `beeline-rocksdb`, and [`MemStore`]
//! serves tests and harnesses.

mod cf;
pub mod conformance;
mod error;
mod key;
mod mem;
mod merge;
mod overlay;
pub mod snapshot;
mod store;
mod txn;

pub use cf::{ColumnFamily, RETIRED_FAMILY_IDS, STATE_FORMAT_VERSION};
pub use error::{Error, Result};
pub use key::{KeyBuilder, KeyReader};
pub use mem::MemStore;
pub use overlay::{BufferedBytes, Overlay};
pub use store::{ScanIter, Store, WriteBatch};
pub use txn::Transaction;
