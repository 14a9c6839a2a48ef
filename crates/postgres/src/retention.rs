//! The retention task: deletes finished instances past their age or beyond the count, a chunk
//! per transaction, on its own connection, off the writer's path.

use std::sync::Arc;

use beeline_search::retention as statements;
use beeline_search::sql::Dialect;
use beeline_search::{Retention, StoreMetrics};
use tokio::sync::watch;
use tokio_postgres::Client;

use crate::Database;

pub(crate) struct RetentionTask {
    stop: watch::Sender<bool>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl RetentionTask {
    pub fn start(
        database: Arc<Database>,
        retention: Retention,
        metrics: Arc<StoreMetrics>,
    ) -> Self {
        let (stop, stopped) = watch::channel(false);
        let task = (retention.max_age.is_some() || retention.max_finished.is_some())
            .then(|| tokio::spawn(run(database, retention, metrics, stopped)));
        Self { stop, task }
    }

    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

async fn run(
    database: Arc<Database>,
    retention: Retention,
    metrics: Arc<StoreMetrics>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut client: Option<Client> = None;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(retention.interval) => {}
            _ = stopped.changed() => return,
        }
        let client = match &mut client {
            Some(connected) if !connected.is_closed() => connected,
            _ => match database.connect().await {
                Ok(connected) => client.insert(connected),
                Err(error) => {
                    client = None;
                    // The writer says that the store cannot be reached; this is one line more.
                    tracing::debug!(%error, "secondary storage retention cannot connect; trying again later");
                    continue;
                }
            },
        };
        if let Err(error) = sweep(client, &retention, &metrics, &stopped).await {
            tracing::warn!(%error, "secondary storage retention failed; trying again later");
        }
    }
}

/// Deletes everything due now, a chunk per transaction.
pub(crate) async fn sweep(
    client: &mut Client,
    retention: &Retention,
    metrics: &StoreMetrics,
    stopped: &watch::Receiver<bool>,
) -> Result<u64, tokio_postgres::Error> {
    let mut deleted = 0;
    if let Some(max_age) = retention.max_age {
        let cutoff = now_ms() - max_age.as_millis() as i64;
        let expired = statements::expired(Dialect::Postgres, retention.chunk);
        loop {
            let keys: Vec<i64> = client
                .query(expired.as_str(), &[&cutoff])
                .await?
                .iter()
                .map(|row| row.get(0))
                .collect();
            if keys.is_empty() || *stopped.borrow() {
                break;
            }
            deleted += delete(client, &keys, metrics).await?;
        }
    }
    if let Some(max_finished) = retention.max_finished {
        let finished: i64 = client
            .query_one(statements::finished_count(), &[])
            .await?
            .get(0);
        let mut excess = (finished.max(0) as u64).saturating_sub(max_finished);
        while excess > 0 && !*stopped.borrow() {
            let chunk = excess.min(retention.chunk);
            let keys: Vec<i64> = client
                .query(statements::oldest_finished(chunk).as_str(), &[])
                .await?
                .iter()
                .map(|row| row.get(0))
                .collect();
            if keys.is_empty() {
                break;
            }
            excess -= keys.len() as u64;
            deleted += delete(client, &keys, metrics).await?;
        }
    }
    Ok(deleted)
}

async fn delete(
    client: &mut Client,
    keys: &[i64],
    metrics: &StoreMetrics,
) -> Result<u64, tokio_postgres::Error> {
    let tx = client.transaction().await?;
    for statement in statements::delete_instances(keys) {
        tx.execute(statement.as_str(), &[]).await?;
    }
    tx.commit().await?;
    StoreMetrics::add(&metrics.retention_deleted, keys.len() as u64);
    Ok(keys.len() as u64)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
