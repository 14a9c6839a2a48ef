//! The read side: a few connections taking searches in turn (each pipelines the queries sent
//! to it), with a bound on the searches in flight; a connection the server dropped is made
//! again on its next turn (or made first there, when the server did not answer at start).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use beeline_search::query::{BoxFuture, MAX_TOTAL};
use beeline_search::sql::{self, Dialect, Statement};
use beeline_search::{Query, Results, SearchError, SearchStore, Statistic, Value};
use tokio::sync::{RwLock, Semaphore};
use tokio_postgres::Client;
use tokio_postgres::types::ToSql;

use crate::Database;
use crate::value::{Param, cells};

pub struct PostgresSearch {
    /// The connections, each made on its first turn and again when the server dropped it.
    clients: Vec<RwLock<Option<Arc<Client>>>>,
    next: AtomicUsize,
    in_flight: Arc<Semaphore>,
    database: Arc<Database>,
}

impl PostgresSearch {
    pub(crate) fn new(database: Arc<Database>, readers: usize, max_searches: usize) -> Self {
        Self {
            clients: (0..readers.max(1)).map(|_| RwLock::new(None)).collect(),
            next: AtomicUsize::new(0),
            in_flight: Arc::new(Semaphore::new(max_searches.max(1))),
            database,
        }
    }

    /// The next connection in turn, made if there is none or the server dropped it.
    async fn client(&self) -> Result<Arc<Client>, SearchError> {
        let slot = &self.clients[self.next.fetch_add(1, Ordering::Relaxed) % self.clients.len()];
        if let Some(client) = slot.read().await.as_ref()
            && !client.is_closed()
        {
            return Ok(client.clone());
        }
        let mut slot = slot.write().await;
        match slot.as_ref() {
            Some(client) if !client.is_closed() => Ok(client.clone()),
            _ => {
                *slot = None;
                let client = Arc::new(
                    self.database
                        .connect()
                        .await
                        .map_err(|e| SearchError::Unavailable(e.to_string()))?,
                );
                *slot = Some(client.clone());
                Ok(client)
            }
        }
    }

    async fn rows(&self, statement: &Statement) -> Result<Vec<Vec<Value>>, SearchError> {
        let _permit = self
            .in_flight
            .acquire()
            .await
            .map_err(|_| SearchError::Unavailable("the store is closed".into()))?;
        let client = self.client().await?;
        let params: Vec<Param<'_>> = statement.params.iter().map(Param).collect();
        let refs: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let failed = |e: tokio_postgres::Error| {
            let text = format!("{}: {e}", self.database.name);
            if e.is_closed() {
                SearchError::Unavailable(text)
            } else {
                SearchError::Internal(text)
            }
        };
        let rows = client
            .query(statement.sql.as_str(), &refs)
            .await
            .map_err(failed)?;
        rows.iter().map(|row| cells(row).map_err(failed)).collect()
    }

    async fn search(&self, query: Query) -> Result<Results, SearchError> {
        let found = self.rows(&sql::select(Dialect::Postgres, &query)).await?;
        let count = self
            .rows(&sql::count(Dialect::Postgres, &query, MAX_TOTAL))
            .await?
            .first()
            .and_then(|r| r.first().cloned())
            .map_or(0, |v| match v {
                Value::Int(n) => n.max(0) as u64,
                _ => 0,
            });
        Ok(Results::assemble(&query, found, count))
    }
}

impl SearchStore for PostgresSearch {
    fn search(&self, query: Query) -> BoxFuture<'_, Result<Results, SearchError>> {
        Box::pin(PostgresSearch::search(self, query))
    }

    fn element_statistics(
        &self,
        instances: Query,
    ) -> BoxFuture<'_, Result<Vec<Statistic>, SearchError>> {
        Box::pin(async move {
            let statement = sql::element_statistics(Dialect::Postgres, &instances);
            Ok(self
                .rows(&statement)
                .await?
                .iter()
                .map(|row| Statistic::from_row(row))
                .collect())
        })
    }
}
