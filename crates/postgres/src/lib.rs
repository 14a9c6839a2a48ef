//! Secondary storage on PostgreSQL, for production: the tables of the embedded store
//! (`beeline_search::rows`) in a database of the user's, written and read with the SQL both
//! stores share (`beeline_search::sql`, PostgreSQL dialect).
//!
//! ```text
//! partitions' StoreExporters ─ bounded queue ─▶ writer task (one connection):
//!                                                 one transaction per round of flushes:
//!                                                 one UNNEST upsert per table + positions,
//!                                                 then acknowledge
//! REST searches ─▶ reader (a few connections, queries pipelined, a bound on those in flight)
//! retention task ─ small delete transactions on its own connection
//! ```
//!
//! - **Schema**: created at start where missing and upgraded from older versions, under an
//!   advisory lock so that nodes starting together do it once; a database of a newer schema
//!   is refused with both versions named.
//! - **Unreachable or failing**: a server that does not answer at start does not stop the
//!   node (the store connects, and sets the schema up, when it comes); a write that fails is
//!   retried with back-off (reconnecting when the connection is gone), counted
//!   (`beeline_secondary_storage_failing`, `..._write_failures_total`) and logged; exporting
//!   waits meanwhile, its lag grows and the log keeps what is not stored, until the disk
//!   watermark stops the engine. Searches answer 503 while the server cannot be reached.

mod reader;
mod retention;
pub mod testkit;
mod value;
mod writer;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use beeline_search::Retention;
use beeline_search::sql::{self, Dialect, SCHEMA_VERSION};
use tokio_postgres::{Client, NoTls};

pub use beeline_search::StoreMetrics;
pub use reader::PostgresSearch;
pub use writer::PostgresWriter;

#[derive(Debug, Clone)]
pub struct PostgresConfig {
    /// The server and database: `postgresql://user:password@host:port/database` or
    /// `host=... user=... dbname=...` (libpq's forms).
    pub url: String,
    /// Connections serving searches (each pipelines its queries). Default 2.
    pub readers: usize,
    /// Searches in flight at once, beyond which they wait. Default 16.
    pub max_searches: usize,
    pub retention: Retention,
}

impl PostgresConfig {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            readers: 2,
            max_searches: 16,
            retention: Retention::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("secondary storage {url}: {source}")]
    Postgres {
        url: String,
        #[source]
        source: tokio_postgres::Error,
    },
    #[error(
        "secondary storage {url} has schema version {found}, newer than this binary's {SCHEMA_VERSION}"
    )]
    NewerSchema { url: String, found: i64 },
    #[error("secondary storage URL {url}: {source}")]
    Url {
        url: String,
        #[source]
        source: tokio_postgres::Error,
    },
}

/// The opened store: its write side (for the exporters), its read side (for the gateway),
/// and its metrics.
pub struct PostgresStore {
    pub writer: Arc<PostgresWriter>,
    pub search: Arc<PostgresSearch>,
    pub metrics: Arc<StoreMetrics>,
    /// The URL without its password, for logs.
    pub name: String,
    retention: retention::RetentionTask,
}

impl PostgresStore {
    /// Starts the writer, readers and retention task (on the current tokio runtime), having
    /// created or upgraded the schema when the server answers. A server that does not answer
    /// does not stop the node: the store starts unconnected, each part connects (and the first
    /// to do so sets the schema up) when the server comes, exporting waits and retries with
    /// back-off meanwhile, and searches answer 503. A URL that cannot be parsed, or a database
    /// of a newer schema, is an error.
    pub async fn open(config: PostgresConfig) -> Result<Self, Error> {
        let database = Arc::new(Database::new(&config.url)?);
        let metrics = Arc::new(StoreMetrics::default());
        let first = match database.connect().await {
            Ok(client) => Some(client),
            Err(error @ (Error::NewerSchema { .. } | Error::Url { .. })) => return Err(error),
            Err(error) => {
                metrics.failing.store(true, Ordering::Relaxed);
                tracing::warn!(
                    %error,
                    "secondary storage does not answer; the node starts without it: exporting \
                     waits and retries with back-off (the log keeps what is not stored), \
                     searches answer 503 until it does"
                );
                None
            }
        };
        let name = database.name.clone();
        let writer = PostgresWriter::start(first, database.clone(), metrics.clone());
        let search = Arc::new(PostgresSearch::new(
            database.clone(),
            config.readers.max(1),
            config.max_searches,
        ));
        let retention =
            retention::RetentionTask::start(database, config.retention, metrics.clone());
        Ok(Self {
            writer: Arc::new(writer),
            search,
            metrics,
            name,
            retention,
        })
    }

    /// Stops the writer (after what is queued) and the retention task.
    pub async fn close(self) {
        self.retention.stop().await;
        self.writer.stop().await;
    }
}

/// The database as every part of the store reaches it: its URL, and whether the schema was
/// set up (by whichever part connected first).
pub(crate) struct Database {
    config: tokio_postgres::Config,
    /// The URL without its password, for logs and errors.
    pub name: String,
    migrated: AtomicBool,
    migrating: tokio::sync::Mutex<()>,
}

/// How long a connection attempt waits for a server that does not answer, where the URL
/// does not say (`connect_timeout`).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

impl Database {
    fn new(url: &str) -> Result<Self, Error> {
        let name = redacted(url);
        let mut config: tokio_postgres::Config = url.parse().map_err(|source| Error::Url {
            url: name.clone(),
            source,
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        Ok(Self {
            config,
            name,
            migrated: AtomicBool::new(false),
            migrating: tokio::sync::Mutex::new(()),
        })
    }

    /// A new connection, its driving task spawned on the current runtime; the schema is set
    /// up first if nobody has yet.
    pub(crate) async fn connect(&self) -> Result<Client, Error> {
        let failed = |source| Error::Postgres {
            url: self.name.clone(),
            source,
        };
        let (mut client, connection) = self.config.connect(NoTls).await.map_err(failed)?;
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "secondary storage connection closed");
            }
        });
        if !self.migrated.load(Ordering::Acquire) {
            let _one = self.migrating.lock().await;
            if !self.migrated.load(Ordering::Acquire) {
                migrate(&mut client, &self.name).await?;
                self.migrated.store(true, Ordering::Release);
            }
        }
        Ok(client)
    }
}

/// The URL with its password left out.
fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let credentials = &url[scheme + 3..at];
            match credentials.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url
            .split_whitespace()
            .map(|part| {
                if part.starts_with("password=") {
                    "password=***"
                } else {
                    part
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Creates the schema where missing, or upgrades it, in one transaction under an advisory
/// lock.
async fn migrate(client: &mut Client, name: &str) -> Result<(), Error> {
    let failed = |source| Error::Postgres {
        url: name.to_owned(),
        source,
    };
    let tx = client.transaction().await.map_err(failed)?;
    // Any number: the schema's lock among the database's advisory locks.
    tx.execute("SELECT pg_advisory_xact_lock(4711020)", &[])
        .await
        .map_err(failed)?;
    for statement in sql::schema(Dialect::Postgres) {
        tx.execute(statement.as_str(), &[]).await.map_err(failed)?;
    }
    let found: Option<i64> = tx
        .query_one("SELECT MAX(version) FROM schema_version", &[])
        .await
        .map_err(failed)?
        .get(0);
    match found {
        None => {
            tx.execute(
                "INSERT INTO schema_version (version) VALUES ($1)",
                &[&SCHEMA_VERSION],
            )
            .await
            .map_err(failed)?;
        }
        Some(found) if found > SCHEMA_VERSION => {
            return Err(Error::NewerSchema {
                url: name.to_owned(),
                found,
            });
        }
        // Tables missing from an older version were created by the schema statements above;
        // its missing columns are added here.
        Some(found) if found < SCHEMA_VERSION => {
            for statement in sql::upgrade(Dialect::Postgres, found) {
                tx.execute(statement.as_str(), &[]).await.map_err(failed)?;
            }
            tx.execute("UPDATE schema_version SET version = $1", &[&SCHEMA_VERSION])
                .await
                .map_err(failed)?;
        }
        Some(_) => {}
    }
    tx.commit().await.map_err(failed)
}

#[cfg(test)]
mod tests;
