//! The read side: a few read-only connections answering searches through `spawn_blocking`,
//! one query per connection at a time.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use beeline_search::query::{BoxFuture, MAX_TOTAL};
use beeline_search::sql::{self, Dialect, Statement};
use beeline_search::{Query, Results, SearchError, SearchStore, Statistic, Value};
use rusqlite::Connection;
use tokio::sync::Semaphore;

use crate::{from_sql, to_sql};

pub struct SqliteSearch {
    idle: Arc<Mutex<Vec<Connection>>>,
    /// One permit per connection: a search waits for a free one.
    free: Arc<Semaphore>,
    path: PathBuf,
}

impl SqliteSearch {
    pub(crate) fn new(connections: Vec<Connection>, path: PathBuf) -> Self {
        Self {
            free: Arc::new(Semaphore::new(connections.len())),
            idle: Arc::new(Mutex::new(connections)),
            path,
        }
    }

    /// Runs `work` on a free connection, off the async threads.
    async fn with_connection<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, SearchError> {
        let permit = self
            .free
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| SearchError::Unavailable("the store is closed".into()))?;
        let idle = self.idle.clone();
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let connection = idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
            let Some(connection) = connection else {
                return Err(SearchError::Internal("no free connection".into()));
            };
            let result = work(&connection);
            idle.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(connection);
            drop(permit);
            result.map_err(|e| SearchError::Internal(format!("{}: {e}", path.display())))
        })
        .await
        .map_err(|e| SearchError::Internal(e.to_string()))?
    }
}

fn rows(connection: &Connection, statement: &Statement) -> rusqlite::Result<Vec<Vec<Value>>> {
    let mut prepared = connection.prepare_cached(&statement.sql)?;
    let width = prepared.column_count();
    let mut rows = prepared.query(rusqlite::params_from_iter(
        statement.params.iter().map(to_sql),
    ))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let mut cells = Vec::with_capacity(width);
        for i in 0..width {
            cells.push(from_sql(row.get_ref(i)?));
        }
        out.push(cells);
    }
    Ok(out)
}

/// Runs a search: the page, then the capped total.
pub(crate) fn search(connection: &Connection, query: &Query) -> rusqlite::Result<Results> {
    let found = rows(connection, &sql::select(Dialect::Sqlite, query))?;
    let count = rows(connection, &sql::count(Dialect::Sqlite, query, MAX_TOTAL))?
        .first()
        .and_then(|r| r.first().cloned())
        .map_or(0, |v| match v {
            Value::Int(n) => n.max(0) as u64,
            _ => 0,
        });
    Ok(Results::assemble(query, found, count))
}

impl SearchStore for SqliteSearch {
    fn search(&self, query: Query) -> BoxFuture<'_, Result<Results, SearchError>> {
        Box::pin(self.with_connection(move |c| search(c, &query)))
    }

    fn element_statistics(
        &self,
        instances: Query,
    ) -> BoxFuture<'_, Result<Vec<Statistic>, SearchError>> {
        Box::pin(self.with_connection(move |connection| {
            let statement = sql::element_statistics(Dialect::Sqlite, &instances);
            Ok(rows(connection, &statement)?
                .iter()
                .map(|row| Statistic::from_row(row))
                .collect())
        }))
    }
}
