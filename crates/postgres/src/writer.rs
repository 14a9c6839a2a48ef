//! The writer task: one connection, one transaction per round of flushes (everything queued
//! when it starts, from every partition), one statement per table whatever the number of rows
//! (`UNNEST` of one array per column), each partition's position in the same transaction,
//! acknowledgements after the commit.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use beeline_search::exporter::StoredDefinition;
use beeline_search::rows::{TABLES, Type as ColumnType};
use beeline_search::sql;
use beeline_search::{EXPORTER_ID, Flush, StoreMetrics, Value, Writer};
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use crate::{Database, Error};

/// Flushes (and questions) queued for the writer, from all partitions together.
const QUEUE: usize = 64;
/// Flushes written in one transaction at most.
const ROUND: usize = 64;

enum Job {
    Flush(Flush),
    Position(u16, oneshot::Sender<Result<Option<i64>, String>>),
    Definitions(oneshot::Sender<Result<Vec<StoredDefinition>, String>>),
    Stop,
}

pub struct PostgresWriter {
    jobs: mpsc::Sender<Job>,
    stopping: Arc<AtomicBool>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl PostgresWriter {
    pub(crate) fn start(
        client: Option<Client>,
        database: Arc<Database>,
        metrics: Arc<StoreMetrics>,
    ) -> Self {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let stopping = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(run(
            Connection {
                client,
                database,
                prepared: Prepared::default(),
            },
            queue,
            metrics,
            stopping.clone(),
        ));
        Self {
            jobs,
            stopping,
            task: Mutex::new(Some(task)),
        }
    }

    /// Writes what is queued (trying once more if the server fails), then stops.
    pub async fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        let _ = self.jobs.send(Job::Stop).await;
        if let Some(task) = self.task.lock().await.take() {
            let _ = task.await;
        }
    }

    async fn ask<T>(
        &self,
        job: impl FnOnce(oneshot::Sender<Result<T, String>>) -> Job,
    ) -> Result<T, String> {
        let stopped = || "the secondary storage writer stopped".to_owned();
        let (tx, rx) = oneshot::channel();
        self.jobs.send(job(tx)).await.map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

impl Writer for PostgresWriter {
    async fn position(&self, partition: u16) -> Result<Option<i64>, String> {
        self.ask(|reply| Job::Position(partition, reply)).await
    }

    async fn definitions(&self) -> Result<Vec<StoredDefinition>, String> {
        self.ask(Job::Definitions).await
    }

    fn try_write(&self, flush: Flush) -> Result<(), Flush> {
        match self.jobs.try_reserve() {
            Ok(room) => {
                room.send(Job::Flush(flush));
                Ok(())
            }
            Err(_) => Err(flush),
        }
    }

    async fn write(&self, flush: Flush) -> Result<(), String> {
        if self.stopping.load(Ordering::Acquire) {
            return Err("the secondary storage writer is stopping".into());
        }
        self.jobs
            .send(Job::Flush(flush))
            .await
            .map_err(|_| "the secondary storage writer stopped".to_owned())
    }
}

/// The writer's connection (none while the server cannot be reached), made again when the
/// server dropped it, with the statements prepared on it.
struct Connection {
    client: Option<Client>,
    database: Arc<Database>,
    prepared: Prepared,
}

#[derive(Default)]
struct Prepared {
    upserts: BTreeMap<usize, Statement>,
    positions: Option<Statement>,
}

impl Connection {
    /// The connection, made first if there is none or the server dropped it, with the
    /// statements prepared on it.
    async fn ready(&mut self) -> Result<(&mut Client, &mut Prepared), Error> {
        let client = match self.client.take() {
            Some(client) if !client.is_closed() => client,
            _ => {
                self.prepared = Prepared::default();
                self.database.connect().await?
            }
        };
        Ok((self.client.insert(client), &mut self.prepared))
    }

    fn failed(&self, source: tokio_postgres::Error) -> Error {
        Error::Postgres {
            url: self.database.name.clone(),
            source,
        }
    }
}

async fn run(
    mut connection: Connection,
    mut queue: mpsc::Receiver<Job>,
    metrics: Arc<StoreMetrics>,
    stopping: Arc<AtomicBool>,
) {
    let mut round: Vec<Flush> = Vec::new();
    loop {
        let Some(first) = queue.recv().await else {
            return;
        };
        let mut stop = false;
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Flush(flush) => round.push(flush),
                Job::Position(partition, reply) => {
                    let answer = position(&mut connection, partition).await;
                    let _ = reply.send(noted(answer, &connection, &metrics));
                }
                Job::Definitions(reply) => {
                    let answer = definitions(&mut connection).await;
                    let _ = reply.send(noted(answer, &connection, &metrics));
                }
                Job::Stop => stop = true,
            }
            if round.len() < ROUND && !stop {
                next = queue.try_recv().ok();
            }
        }
        if !round.is_empty() {
            let written = write_round(&mut connection, &round, &metrics, &stopping).await;
            for flush in round.drain(..) {
                // Only what is written is acknowledged: the rest is exported again.
                if written {
                    flush.controller.acknowledge(flush.batch.position);
                    metrics.committed(flush.batch.oldest);
                }
            }
        }
        if stop {
            return;
        }
    }
}

/// A question's answer, its failure counted and logged as a failed write is: the store is
/// unreachable or failing either way.
fn noted<T>(
    answer: Result<T, Error>,
    connection: &Connection,
    metrics: &StoreMetrics,
) -> Result<T, String> {
    match answer {
        Ok(value) => {
            if metrics.failing.swap(false, Ordering::Relaxed) {
                tracing::info!(url = %connection.database.name, "secondary storage answers again");
            }
            Ok(value)
        }
        Err(error) => {
            StoreMetrics::add(&metrics.write_failures, 1);
            if !metrics.failing.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    url = %connection.database.name,
                    %error,
                    "cannot reach secondary storage; exporting waits and retries (nothing is lost: the log keeps what is not stored)"
                );
            }
            Err(error.to_string())
        }
    }
}

/// Writes the round, retrying with back-off until it succeeds; when the store is stopping,
/// tries once more. Whether it was written.
async fn write_round(
    connection: &mut Connection,
    round: &[Flush],
    metrics: &StoreMetrics,
    stopping: &AtomicBool,
) -> bool {
    let mut backoff = Duration::from_millis(100);
    let mut failures = 0u32;
    loop {
        let started = Instant::now();
        match write(connection, round).await {
            Ok(rows) => {
                StoreMetrics::add(&metrics.flushes, 1);
                StoreMetrics::add(&metrics.rows, rows);
                StoreMetrics::add(&metrics.write_micros, started.elapsed().as_micros() as u64);
                if metrics.failing.swap(false, Ordering::Relaxed) {
                    tracing::info!(url = %connection.database.name, failures, "secondary storage writes again");
                }
                return true;
            }
            Err(error) => {
                failures += 1;
                StoreMetrics::add(&metrics.write_failures, 1);
                metrics.failing.store(true, Ordering::Relaxed);
                if failures == 1 || backoff >= Duration::from_secs(10) {
                    tracing::warn!(
                        url = %connection.database.name,
                        %error,
                        failures,
                        retry_in_ms = backoff.as_millis() as u64,
                        "cannot write to secondary storage; exporting waits and retries (nothing is lost: the log keeps what is not stored)"
                    );
                }
                if stopping.load(Ordering::Acquire) && failures > 1 {
                    return false;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
}

/// The cells of one column of many rows, as the array parameter of an UNNEST upsert.
enum Cells {
    Int(Vec<Option<i64>>),
    Text(Vec<Option<String>>),
}

impl Cells {
    fn parameter(&self) -> &(dyn ToSql + Sync) {
        match self {
            Cells::Int(cells) => cells,
            Cells::Text(cells) => cells,
        }
    }
}

/// The round's rows of one table with distinct keys: a key in several flushes is folded as
/// the exporters fold (a later non-NULL cell wins), since one statement may not touch a row
/// twice.
fn merged(round: &[Flush], table: usize) -> BTreeMap<Vec<Value>, Vec<Value>> {
    let mut rows: BTreeMap<Vec<Value>, Vec<Value>> = BTreeMap::new();
    for flush in round {
        for (key, row) in &flush.batch.tables[table] {
            match rows.get_mut(key) {
                Some(pending) => {
                    for (cell, new) in pending.iter_mut().zip(row) {
                        if !new.is_null() {
                            *cell = new.clone();
                        }
                    }
                }
                None => {
                    rows.insert(key.clone(), row.clone());
                }
            }
        }
    }
    rows
}

async fn write(connection: &mut Connection, round: &[Flush]) -> Result<u64, Error> {
    let (client, prepared) = connection.ready().await?;
    let result = write_on(client, prepared, round).await;
    result.map_err(|e| connection.failed(e))
}

async fn write_on(
    client: &mut Client,
    prepared: &mut Prepared,
    round: &[Flush],
) -> Result<u64, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    let mut written = 0;
    for (index, table) in TABLES.iter().enumerate() {
        if round.iter().all(|f| f.batch.tables[index].is_empty()) {
            continue;
        }
        let folded;
        let rows: Vec<&Vec<Value>> = if round.len() == 1 {
            round[0].batch.tables[index].values().collect()
        } else {
            folded = merged(round, index);
            folded.values().collect()
        };
        let columns: Vec<Cells> = table
            .columns
            .iter()
            .enumerate()
            .map(|(c, column)| match column.ty {
                ColumnType::Int => Cells::Int(
                    rows.iter()
                        .map(|row| match &row[c] {
                            Value::Int(i) => Some(*i),
                            Value::Text(t) => t.parse().ok(),
                            Value::Null => None,
                        })
                        .collect(),
                ),
                ColumnType::Text => Cells::Text(
                    rows.iter()
                        .map(|row| match &row[c] {
                            Value::Text(t) => Some(t.clone()),
                            Value::Int(i) => Some(i.to_string()),
                            Value::Null => None,
                        })
                        .collect(),
                ),
            })
            .collect();
        let statement = match prepared.upserts.get(&index) {
            Some(statement) => statement.clone(),
            None => {
                let statement = tx.prepare(&sql::upsert_arrays(table)).await?;
                prepared.upserts.insert(index, statement.clone());
                statement
            }
        };
        let parameters: Vec<&(dyn ToSql + Sync)> = columns.iter().map(Cells::parameter).collect();
        tx.execute(&statement, &parameters).await?;
        written += rows.len() as u64;
    }
    // Each partition's newest position in the round.
    let mut positions: BTreeMap<u16, i64> = BTreeMap::new();
    for flush in round {
        let position = positions.entry(flush.partition_id).or_insert(-1);
        *position = (*position).max(flush.batch.position);
    }
    let statement = match &prepared.positions {
        Some(statement) => statement.clone(),
        None => {
            let statement = tx
                .prepare(
                    "INSERT INTO exporter_position (partition_id, exporter, position, updated) \
                     SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[]) \
                     ON CONFLICT (partition_id, exporter) DO UPDATE SET \
                     position = excluded.position, updated = excluded.updated",
                )
                .await?;
            prepared.positions = Some(statement.clone());
            statement
        }
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let partitions: Vec<i64> = positions.keys().map(|p| i64::from(*p)).collect();
    let exporters: Vec<&str> = positions.keys().map(|_| EXPORTER_ID).collect();
    let values: Vec<i64> = positions.values().copied().collect();
    let updated: Vec<i64> = positions.keys().map(|_| now).collect();
    tx.execute(&statement, &[&partitions, &exporters, &values, &updated])
        .await?;
    tx.commit().await?;
    Ok(written)
}

async fn position(connection: &mut Connection, partition: u16) -> Result<Option<i64>, Error> {
    let (client, _) = connection.ready().await?;
    let row = client
        .query_opt(
            "SELECT position FROM exporter_position WHERE partition_id = $1 AND exporter = $2",
            &[&i64::from(partition), &EXPORTER_ID],
        )
        .await;
    let row = row.map_err(|e| connection.failed(e))?;
    Ok(row.map(|row| row.get(0)))
}

async fn definitions(connection: &mut Connection) -> Result<Vec<StoredDefinition>, Error> {
    let (client, _) = connection.ready().await?;
    let rows = client
        .query(
            "SELECT key, bpmn_process_id, COALESCE(version_tag, ''), COALESCE(xml, '') \
             FROM process_definition",
            &[],
        )
        .await;
    let rows = rows.map_err(|e| connection.failed(e))?;
    rows.iter()
        .map(|row| {
            Ok((
                row.try_get(0)?,
                row.try_get::<_, Option<String>>(1)?.unwrap_or_default(),
                row.try_get(2)?,
                row.try_get(3)?,
            ))
        })
        .collect::<Result<_, tokio_postgres::Error>>()
        .map_err(|e| connection.failed(e))
}
