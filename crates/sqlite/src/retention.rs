//! The retention thread: deletes finished instances past their age or beyond the count, a
//! chunk per transaction, on its own connection (SQLite lets one writer in at a time, so the
//! exporters' writer waits at most one chunk).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use beeline_search::Retention;
use beeline_search::retention as statements;
use beeline_search::sql::Dialect;
use rusqlite::Connection;

use crate::StoreMetrics;

pub(crate) struct RetentionTask {
    stop: Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RetentionTask {
    pub fn start(connection: Connection, retention: Retention, metrics: Arc<StoreMetrics>) -> Self {
        let stop = Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
        let thread = if retention.max_age.is_none() && retention.max_finished.is_none() {
            None
        } else {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("secondary-retention".into())
                .spawn(move || run(&connection, retention, &metrics, &stop))
                .ok()
        };
        Self { stop, thread }
    }

    pub fn stop(mut self) {
        let (stopped, wake) = &*self.stop;
        *stopped.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(
    connection: &Connection,
    retention: Retention,
    metrics: &StoreMetrics,
    stop: &(std::sync::Mutex<bool>, std::sync::Condvar),
) {
    let stopping = AtomicBool::new(false);
    loop {
        {
            let (stopped, wake) = stop;
            let guard = stopped.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = wake
                .wait_timeout_while(guard, retention.interval, |stopped| !*stopped)
                .unwrap_or_else(|e| e.into_inner());
            if *guard {
                return;
            }
        }
        if let Err(error) = sweep(connection, &retention, metrics, &stopping) {
            tracing::warn!(%error, "secondary storage retention failed; trying again later");
        }
    }
}

/// Deletes everything due now, a chunk per transaction.
pub(crate) fn sweep(
    connection: &Connection,
    retention: &Retention,
    metrics: &StoreMetrics,
    stopping: &AtomicBool,
) -> rusqlite::Result<u64> {
    let mut deleted = 0;
    if let Some(max_age) = retention.max_age {
        let cutoff = now_ms() - max_age.as_millis() as i64;
        loop {
            let keys = keys(
                connection,
                &statements::expired(Dialect::Sqlite, retention.chunk),
                Some(cutoff),
            )?;
            if keys.is_empty() || stopping.load(Ordering::Relaxed) {
                break;
            }
            deleted += delete(connection, &keys, metrics)?;
        }
    }
    if let Some(max_finished) = retention.max_finished {
        let finished: i64 = connection.query_row(statements::finished_count(), [], |r| r.get(0))?;
        let mut excess = (finished as u64).saturating_sub(max_finished);
        while excess > 0 && !stopping.load(Ordering::Relaxed) {
            let chunk = excess.min(retention.chunk);
            let keys = keys(connection, &statements::oldest_finished(chunk), None)?;
            if keys.is_empty() {
                break;
            }
            excess -= keys.len() as u64;
            deleted += delete(connection, &keys, metrics)?;
        }
    }
    Ok(deleted)
}

fn keys(connection: &Connection, sql: &str, cutoff: Option<i64>) -> rusqlite::Result<Vec<i64>> {
    let mut statement = connection.prepare_cached(sql)?;
    let params: Vec<i64> = cutoff.into_iter().collect();
    let rows = statement.query_map(rusqlite::params_from_iter(params), |r| r.get(0))?;
    rows.collect()
}

fn delete(connection: &Connection, keys: &[i64], metrics: &StoreMetrics) -> rusqlite::Result<u64> {
    connection.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        for statement in statements::delete_instances(keys) {
            connection.execute(&statement, [])?;
        }
        Ok::<_, rusqlite::Error>(())
    })();
    match result {
        Ok(()) => connection.execute_batch("COMMIT")?,
        Err(error) => {
            let _ = connection.execute_batch("ROLLBACK");
            return Err(error);
        }
    }
    StoreMetrics::add(&metrics.retention_deleted, keys.len() as u64);
    // Give the writer its turn between chunks.
    std::thread::sleep(Duration::from_millis(1));
    Ok(keys.len() as u64)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
