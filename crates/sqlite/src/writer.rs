//! The writer thread: the one connection that writes, one transaction per round of flushes
//! (everything queued when it starts, from every partition), each partition's position in the
//! same transaction, acknowledgements after the commit.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use beeline_search::exporter::StoredDefinition;
use beeline_search::rows::{TABLE_COUNT, TABLES};
use beeline_search::sql::{self, Dialect};
use beeline_search::{EXPORTER_ID, Flush, Writer};
use rusqlite::Connection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use crate::{StoreMetrics, to_sql};

/// Flushes queued for the writer, from all partitions together.
const QUEUE: usize = 64;
/// Flushes written in one transaction at most.
const ROUND: usize = 64;

enum Job {
    /// A flush, with the room it takes in the queue (given back when the thread takes it).
    Flush(Flush, OwnedSemaphorePermit),
    Position(u16, oneshot::Sender<Result<Option<i64>, String>>),
    Definitions(oneshot::Sender<Result<Vec<StoredDefinition>, String>>),
    Stop,
}

pub struct SqliteWriter {
    jobs: std::sync::mpsc::Sender<Job>,
    /// Room in the queue for flushes: what the partitions hand over waits here when the
    /// writer is behind.
    room: Arc<Semaphore>,
    stopping: Arc<AtomicBool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl SqliteWriter {
    pub(crate) fn start(connection: Connection, path: PathBuf, metrics: Arc<StoreMetrics>) -> Self {
        let (jobs, queue) = std::sync::mpsc::channel();
        let stopping = Arc::new(AtomicBool::new(false));
        let thread = {
            let stopping = stopping.clone();
            std::thread::Builder::new()
                .name("secondary-writer".into())
                .spawn(move || run(connection, path, queue, metrics, &stopping))
        };
        let thread = match thread {
            Ok(thread) => Some(thread),
            Err(error) => {
                tracing::error!(%error, "cannot start the secondary storage writer");
                None
            }
        };
        Self {
            jobs,
            room: Arc::new(Semaphore::new(QUEUE)),
            stopping,
            thread: Mutex::new(thread),
        }
    }

    /// Writes what is queued, then stops the thread. Flushes handed over afterwards are
    /// refused.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.room.close();
        let _ = self.jobs.send(Job::Stop);
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }

    async fn ask<T>(
        &self,
        job: impl FnOnce(oneshot::Sender<Result<T, String>>) -> Job,
    ) -> Result<T, String> {
        let stopped = || "the secondary storage writer stopped".to_owned();
        let (tx, rx) = oneshot::channel();
        self.jobs.send(job(tx)).map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

impl Writer for SqliteWriter {
    async fn position(&self, partition: u16) -> Result<Option<i64>, String> {
        self.ask(|reply| Job::Position(partition, reply)).await
    }

    async fn definitions(&self) -> Result<Vec<StoredDefinition>, String> {
        self.ask(Job::Definitions).await
    }

    #[allow(
        clippy::unreachable,
        reason = "what a failed send gives back is the flush it took"
    )]
    fn try_write(&self, flush: Flush) -> Result<(), Flush> {
        let Ok(permit) = self.room.clone().try_acquire_owned() else {
            return Err(flush);
        };
        self.jobs
            .send(Job::Flush(flush, permit))
            .map_err(|e| match e.0 {
                Job::Flush(flush, _) => flush,
                _ => unreachable!("a flush was sent"),
            })
    }

    async fn write(&self, flush: Flush) -> Result<(), String> {
        let permit = self
            .room
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| "the secondary storage writer is stopping".to_owned())?;
        self.jobs
            .send(Job::Flush(flush, permit))
            .map_err(|_| "the secondary storage writer stopped".to_owned())
    }
}

fn run(
    mut connection: Connection,
    path: PathBuf,
    queue: std::sync::mpsc::Receiver<Job>,
    metrics: Arc<StoreMetrics>,
    stopping: &AtomicBool,
) {
    let mut round: Vec<Flush> = Vec::new();
    let mut stop = false;
    while !stop {
        let Ok(first) = queue.recv() else { return };
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Flush(flush, permit) => {
                    round.push(flush);
                    drop(permit);
                }
                Job::Position(partition, reply) => {
                    let _ = reply.send(position(&connection, partition).map_err(|e| e.to_string()));
                }
                Job::Definitions(reply) => {
                    let _ = reply.send(definitions(&connection).map_err(|e| e.to_string()));
                }
                Job::Stop => stop = true,
            }
            if round.len() < ROUND {
                next = queue.try_recv().ok();
            }
        }
        if !round.is_empty() {
            let written = write_round(&mut connection, &path, &round, &metrics, stopping);
            for flush in round.drain(..) {
                // Only what is written is acknowledged: the rest is exported again.
                if written {
                    flush.controller.acknowledge(flush.batch.position);
                    metrics.committed(flush.batch.oldest);
                }
            }
        }
    }
}

/// Writes the round, retrying with back-off until it succeeds; when the store is stopping,
/// tries once. Whether it was written.
fn write_round(
    connection: &mut Connection,
    path: &std::path::Path,
    round: &[Flush],
    metrics: &StoreMetrics,
    stopping: &AtomicBool,
) -> bool {
    let mut backoff = Duration::from_millis(100);
    let mut failures = 0u32;
    loop {
        let started = Instant::now();
        match write(connection, round) {
            Ok(rows) => {
                StoreMetrics::add(&metrics.flushes, 1);
                StoreMetrics::add(&metrics.rows, rows);
                StoreMetrics::add(&metrics.write_micros, started.elapsed().as_micros() as u64);
                if failures > 0 {
                    metrics.failing.store(false, Ordering::Relaxed);
                    tracing::info!(path = %path.display(), failures, "secondary storage writes again");
                }
                return true;
            }
            Err(error) => {
                failures += 1;
                StoreMetrics::add(&metrics.write_failures, 1);
                metrics.failing.store(true, Ordering::Relaxed);
                if failures == 1 || backoff >= Duration::from_secs(10) {
                    tracing::warn!(
                        path = %path.display(),
                        %error,
                        failures,
                        retry_in_ms = backoff.as_millis() as u64,
                        "cannot write to secondary storage; exporting waits and retries (nothing is lost: the log keeps what is not stored)"
                    );
                }
                if stopping.load(Ordering::Acquire) {
                    return false;
                }
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
}

fn write(connection: &mut Connection, round: &[Flush]) -> rusqlite::Result<u64> {
    let tx = connection.transaction()?;
    let mut rows = 0;
    for (table, spec) in TABLES.iter().enumerate().take(TABLE_COUNT) {
        if round.iter().all(|f| f.batch.tables[table].is_empty()) {
            continue;
        }
        let mut statement = tx.prepare_cached(&sql::upsert(Dialect::Sqlite, spec, 1))?;
        for flush in round {
            for row in flush.batch.tables[table].values() {
                statement.execute(rusqlite::params_from_iter(row.iter().map(to_sql)))?;
                rows += 1;
            }
        }
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let mut statement = tx.prepare_cached(&sql::upsert_position(Dialect::Sqlite))?;
    for flush in round {
        statement.execute(rusqlite::params![
            i64::from(flush.partition_id),
            EXPORTER_ID,
            flush.batch.position,
            now
        ])?;
    }
    drop(statement);
    tx.commit()?;
    Ok(rows)
}

fn position(connection: &Connection, partition: u16) -> rusqlite::Result<Option<i64>> {
    use rusqlite::OptionalExtension as _;
    connection
        .query_row(
            "SELECT position FROM exporter_position WHERE partition_id = ?1 AND exporter = ?2",
            rusqlite::params![i64::from(partition), EXPORTER_ID],
            |row| row.get(0),
        )
        .optional()
}

fn definitions(connection: &Connection) -> rusqlite::Result<Vec<StoredDefinition>> {
    let mut statement = connection.prepare(
        "SELECT key, bpmn_process_id, COALESCE(version_tag, ''), COALESCE(xml, '') FROM process_definition",
    )?;
    let rows = statement.query_map([], |row| {
        Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
    })?;
    rows.collect()
}
