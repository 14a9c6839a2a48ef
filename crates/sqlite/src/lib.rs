//! The embedded secondary storage: one SQLite file under the node's data directory.
//!
//! ```text
//! partitions' StoreExporters ─ bounded queue ─▶ writer thread (one connection, WAL):
//!                                                 one transaction per round of flushes,
//!                                                 rows + each partition's position, then ack
//! REST searches ─▶ reader pool (a few read-only connections, through spawn_blocking)
//! retention thread ─ small delete transactions ─▶ the same file
//! ```
//!
//! - **Memory**: every connection's page cache and SQLite's own heap limit come from one
//!   budget (`SqliteConfig::memory`), which the node takes out of `--memory-limit`; memory
//!   mapping is off.
//! - **Durability**: WAL with `synchronous=NORMAL`: a power loss may drop the last
//!   transactions, never corrupt the file; the log still holds what they had, past the
//!   stored position, and exports it again.
//! - **A damaged file** (it fails SQLite's quick check or is not a database) is moved aside
//!   with a warning naming it, and the store starts empty: the exporters rebuild it from the
//!   log as far as the log reaches back, and say so where it does not.

mod reader;
mod retention;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{Connection, OpenFlags};

use beeline_search::Retention;
pub use beeline_search::StoreMetrics;
use beeline_search::sql::{self, Dialect, SCHEMA_VERSION};

pub use reader::SqliteSearch;
pub use writer::SqliteWriter;

/// The store's file name under the data directory.
pub const FILE_NAME: &str = "secondary.sqlite";

#[derive(Debug, Clone)]
pub struct SqliteConfig {
    /// Bytes of memory the store may use (page caches and SQLite's heap). Default 32 MiB.
    pub memory: u64,
    /// Read-only connections serving searches. Default 2.
    pub readers: usize,
    pub retention: Retention,
}

impl Default for SqliteConfig {
    fn default() -> Self {
        Self {
            memory: 32 * 1024 * 1024,
            readers: 2,
            retention: Retention::default(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("secondary storage {path}: {source}")]
    Sqlite {
        path: PathBuf,
        #[source]
        source: rusqlite::Error,
    },
    #[error(
        "secondary storage {path} has schema version {found}, newer than this binary's {SCHEMA_VERSION}"
    )]
    NewerSchema { path: PathBuf, found: i64 },
    #[error("secondary storage {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The opened store: its write side (for the exporters), its read side (for the gateway),
/// and its metrics.
pub struct SqliteStore {
    pub writer: Arc<SqliteWriter>,
    pub search: Arc<SqliteSearch>,
    pub metrics: Arc<StoreMetrics>,
    pub path: PathBuf,
    retention: retention::RetentionTask,
}

impl SqliteStore {
    /// Opens (or creates) the store at `dir/secondary.sqlite` and starts its writer and
    /// retention threads.
    pub fn open(dir: &Path, config: SqliteConfig) -> Result<Self, Error> {
        let path = dir.join(FILE_NAME);
        std::fs::create_dir_all(dir).map_err(|source| Error::Io {
            path: dir.to_owned(),
            source,
        })?;
        let budget = Budget::new(&config);
        let connection = match open_checked(&path, &budget) {
            Ok(connection) => connection,
            Err(Damaged(reason)) => {
                let aside = path.with_extension(format!(
                    "sqlite.damaged-{}",
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs())
                ));
                tracing::warn!(
                    path = %path.display(),
                    moved_to = %aside.display(),
                    %reason,
                    "secondary storage is damaged; moving it aside and rebuilding it from the log"
                );
                for suffix in ["", "-wal", "-shm"] {
                    let from = PathBuf::from(format!("{}{suffix}", path.display()));
                    if from.exists() {
                        let to = PathBuf::from(format!("{}{suffix}", aside.display()));
                        std::fs::rename(&from, &to).map_err(|source| Error::Io {
                            path: from.clone(),
                            source,
                        })?;
                    }
                }
                open_checked(&path, &budget).map_err(|Damaged(reason)| Error::Io {
                    path: path.clone(),
                    source: std::io::Error::other(reason),
                })?
            }
        };
        migrate(&connection).map_err(|e| e.at(&path))?;
        let metrics = Arc::new(StoreMetrics::default());
        let writer = SqliteWriter::start(connection, path.clone(), metrics.clone());
        let mut readers = Vec::new();
        for _ in 0..config.readers.max(1) {
            readers.push(open_reader(&path, &budget).map_err(|e| Error::Sqlite {
                path: path.clone(),
                source: e,
            })?);
        }
        let search = Arc::new(SqliteSearch::new(readers, path.clone()));
        let retention = retention::RetentionTask::start(
            open_connection(&path, &budget, false).map_err(|e| Error::Sqlite {
                path: path.clone(),
                source: e,
            })?,
            config.retention,
            metrics.clone(),
        );
        Ok(Self {
            writer: Arc::new(writer),
            search,
            metrics,
            path,
            retention,
        })
    }

    /// Stops the writer (after what is queued) and the retention thread.
    pub fn close(self) {
        self.retention.stop();
        self.writer.stop();
    }
}

/// How the memory budget is shared: a quarter each to the writer's cache and to SQLite's
/// heap headroom, half to the readers' caches.
struct Budget {
    writer_cache_kib: u64,
    reader_cache_kib: u64,
    heap_limit: u64,
}

impl Budget {
    fn new(config: &SqliteConfig) -> Self {
        let kib = (config.memory / 1024).max(1024);
        Self {
            writer_cache_kib: kib / 4,
            reader_cache_kib: (kib / 2) / config.readers.max(1) as u64,
            heap_limit: config.memory,
        }
    }
}

struct Damaged(String);

struct Migration(rusqlite::Error, Option<i64>);

impl Migration {
    fn at(self, path: &Path) -> Error {
        match self.1 {
            Some(found) => Error::NewerSchema {
                path: path.to_owned(),
                found,
            },
            None => Error::Sqlite {
                path: path.to_owned(),
                source: self.0,
            },
        }
    }
}

fn open_connection(
    path: &Path,
    budget: &Budget,
    writer: bool,
) -> Result<Connection, rusqlite::Error> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let cache = if writer {
        budget.writer_cache_kib
    } else {
        // The retention connection reads keys and deletes: a small cache does.
        1024
    };
    connection.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA mmap_size = 0; \
         PRAGMA cache_size = -{cache}; PRAGMA busy_timeout = 5000; \
         PRAGMA journal_size_limit = 67108864; PRAGMA soft_heap_limit = {};",
        budget.heap_limit
    ))?;
    Ok(connection)
}

fn open_reader(path: &Path, budget: &Budget) -> Result<Connection, rusqlite::Error> {
    let connection = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.execute_batch(&format!(
        "PRAGMA mmap_size = 0; PRAGMA cache_size = -{}; PRAGMA busy_timeout = 5000; \
         PRAGMA query_only = 1;",
        budget.reader_cache_kib
    ))?;
    Ok(connection)
}

/// Opens the writer's connection and checks the file is a sound database.
fn open_checked(path: &Path, budget: &Budget) -> Result<Connection, Damaged> {
    let connection = open_connection(path, budget, true).map_err(|e| Damaged(e.to_string()))?;
    let check: String = connection
        .query_row("PRAGMA quick_check", [], |row| row.get(0))
        .map_err(|e| Damaged(e.to_string()))?;
    if check != "ok" {
        return Err(Damaged(check));
    }
    Ok(connection)
}

/// Creates the schema, or checks it is one this binary knows.
fn migrate(connection: &Connection) -> Result<(), Migration> {
    let error = |e| Migration(e, None);
    for statement in sql::schema(Dialect::Sqlite) {
        connection.execute(&statement, []).map_err(error)?;
    }
    let found: Option<i64> = connection
        .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
            row.get(0)
        })
        .map_err(error)?;
    match found {
        None => {
            connection
                .execute(
                    "INSERT INTO schema_version (version) VALUES (?1)",
                    [SCHEMA_VERSION],
                )
                .map_err(error)?;
        }
        Some(found) if found > SCHEMA_VERSION => {
            return Err(Migration(rusqlite::Error::InvalidQuery, Some(found)));
        }
        // Tables missing from an older version were created by the schema statements above;
        // its missing columns are added here.
        Some(found) if found < SCHEMA_VERSION => {
            for statement in sql::upgrade(Dialect::Sqlite, found) {
                connection.execute(&statement, []).map_err(error)?;
            }
            connection
                .execute("UPDATE schema_version SET version = ?1", [SCHEMA_VERSION])
                .map_err(error)?;
        }
        Some(_) => {}
    }
    Ok(())
}

/// A value for a statement parameter.
fn to_sql(value: &beeline_search::Value) -> rusqlite::types::Value {
    match value {
        beeline_search::Value::Null => rusqlite::types::Value::Null,
        beeline_search::Value::Int(i) => rusqlite::types::Value::Integer(*i),
        beeline_search::Value::Text(s) => rusqlite::types::Value::Text(s.clone()),
    }
}

fn from_sql(value: rusqlite::types::ValueRef<'_>) -> beeline_search::Value {
    use rusqlite::types::ValueRef;
    match value {
        ValueRef::Null => beeline_search::Value::Null,
        ValueRef::Integer(i) => beeline_search::Value::Int(i),
        ValueRef::Real(f) => beeline_search::Value::Int(f as i64),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            beeline_search::Value::Text(String::from_utf8_lossy(t).into_owned())
        }
    }
}

#[cfg(test)]
mod tests;
