//! Retention: finished process instances, and everything they own, leave the store after an
//! age or beyond a count, in small chunks, away from the exporters' writes.

use std::time::Duration;

use crate::rows::OWNED_BY_INSTANCE;
use crate::sql::Dialect;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// Finished instances older than this (by end date) are deleted. Default 7 days.
    pub max_age: Option<Duration>,
    /// Beyond this many finished instances, the oldest are deleted. Default 1,000,000
    /// (about a gigabyte with a few small variables each).
    pub max_finished: Option<u64>,
    /// How often the store looks for what to delete. Default 10 s.
    pub interval: Duration,
    /// Instances deleted per transaction. Default 1,000.
    pub chunk: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            max_age: Some(Duration::from_secs(7 * 24 * 3600)),
            max_finished: Some(1_000_000),
            interval: Duration::from_secs(10),
            chunk: 1_000,
        }
    }
}

/// Selects up to `limit` finished instances that ended before `cutoff` (param 1, epoch ms).
pub fn expired(dialect: Dialect, limit: u64) -> String {
    format!(
        "SELECT key FROM process_instance WHERE end_date IS NOT NULL AND end_date < {} \
         ORDER BY end_date LIMIT {limit}",
        param(dialect, 1)
    )
}

/// Counts finished instances.
pub fn finished_count() -> &'static str {
    "SELECT COUNT(*) FROM process_instance WHERE end_date IS NOT NULL"
}

/// Selects the `limit` oldest finished instances.
pub fn oldest_finished(limit: u64) -> String {
    format!(
        "SELECT key FROM process_instance WHERE end_date IS NOT NULL ORDER BY end_date LIMIT {limit}"
    )
}

/// Deletes what the instances listed in `keys` (a comma-separated list of integers the store
/// read itself) own, then the instances.
pub fn delete_instances(keys: &[i64]) -> Vec<String> {
    let list: Vec<String> = keys.iter().map(i64::to_string).collect();
    let list = list.join(", ");
    let mut statements: Vec<String> = OWNED_BY_INSTANCE
        .iter()
        .map(|t| {
            format!(
                "DELETE FROM {} WHERE process_instance_key IN ({list})",
                t.name
            )
        })
        .collect();
    statements.push(format!(
        "DELETE FROM process_instance WHERE key IN ({list})"
    ));
    statements
}

fn param(dialect: Dialect, n: usize) -> String {
    match dialect {
        Dialect::Sqlite => format!("?{n}"),
        Dialect::Postgres => format!("${n}"),
    }
}
