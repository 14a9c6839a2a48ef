//! Secondary storage, apart from any database: what the read side stores and how it is asked.
//!
//! ```text
//! partition log ─▶ Director ─▶ StoreExporter (per partition: records folded into rows,
//!                                 one pending row per entity)
//!                               ─ flush ─▶ Writer (the store's: one transaction per flush,
//!                                          rows upserted with the exporter's position)
//!                                          └─▶ Controller::acknowledge
//! REST search ─▶ SearchStore::search(Query) ─▶ SQL (sql.rs, one builder, two dialects)
//! ```
//!
//! - **Rows** (`rows.rs`): the tables, their columns and keys. Every row carries the position
//!   of the newest record folded into it; an upsert with an older position changes nothing,
//!   so re-delivered records are harmless whatever their order.
//! - **Folding** (`projection.rs`): records of one entity that arrive close together become
//!   one row write; an instance that starts and ends within one flush is written once.
//! - **Queries** (`query.rs`): the searchable entities with their fields, filters with the
//!   API's operators, sorts, pages and cursors, answered by any [`SearchStore`].

pub mod conformance;
pub mod cursor;
pub mod exporter;
pub mod metrics;
pub mod projection;
pub mod query;
pub mod retention;
pub mod rows;
pub mod sql;
pub mod time;

pub use exporter::{Flush, StoreExporter, Writer};
pub use metrics::StoreMetrics;
pub use query::{
    Condition, Entity, Field, Kind, Op, Order, Page, Query, Results, SearchError, SearchStore,
    Statistic,
};
pub use retention::Retention;
pub use rows::{Table, Value};

/// The id the store exporter's positions are kept under in each partition's state.
pub const EXPORTER_ID: &str = "secondary-storage";
