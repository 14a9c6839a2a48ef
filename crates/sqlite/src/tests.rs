//! The store conformance suite (exporter properties, searches) against SQLite, and what only
//! this store does: a damaged file moved aside, retention.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use beeline_search::conformance::{self, TestStore};
use rusqlite::Connection;

use super::*;

/// Every row of every table, in key order, as text.
fn dump(path: &Path) -> String {
    let connection = Connection::open(path).expect("opens");
    let mut out = String::new();
    for table in beeline_search::rows::TABLES {
        let keys: Vec<&str> = table.columns[..table.key_columns]
            .iter()
            .map(|c| c.name)
            .collect();
        let mut statement = connection
            .prepare(&format!(
                "SELECT * FROM {} ORDER BY {}",
                table.name,
                keys.join(", ")
            ))
            .expect("prepares");
        let width = statement.column_count();
        let mut rows = statement.query([]).expect("queries");
        while let Some(row) = rows.next().expect("reads") {
            let cells: Vec<String> = (0..width)
                .map(|i| format!("{:?}", from_sql(row.get_ref(i).expect("cell"))))
                .collect();
            out.push_str(&format!("{} {}\n", table.name, cells.join(" ")));
        }
    }
    out
}

fn open_test_store() -> TestStore<SqliteWriter> {
    let dir = tempfile::tempdir().expect("a directory");
    let store = SqliteStore::open(dir.path(), SqliteConfig::default()).expect("opens");
    let path = store.path.clone();
    let writer = store.writer.clone();
    let search: Arc<dyn beeline_search::SearchStore> = store.search.clone();
    // The directory and the store live as long as the test store's closures.
    let keep = Arc::new((dir, std::sync::Mutex::new(Some(store))));
    TestStore {
        writer,
        search,
        contents: Box::new(move || {
            let _ = &keep;
            dump(&path)
        }),
    }
}

#[test]
fn sqlite_conforms() {
    conformance::run_all(open_test_store);
}

#[test]
fn a_damaged_file_is_moved_aside_and_the_store_starts_empty() {
    let dir = tempfile::tempdir().expect("a directory");
    std::fs::write(
        dir.path().join(FILE_NAME),
        b"this is not a database, it is a text file long enough to fail the header check",
    )
    .expect("written");
    let store = SqliteStore::open(dir.path(), SqliteConfig::default()).expect("opens anew");
    let aside: Vec<String> = std::fs::read_dir(dir.path())
        .expect("lists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("damaged"))
        .collect();
    assert_eq!(aside.len(), 1, "the damaged file is kept aside: {aside:?}");
    store.close();
}

#[test]
fn a_store_of_a_newer_schema_is_refused_and_kept() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = SqliteStore::open(dir.path(), SqliteConfig::default()).expect("opens");
    let path = store.path.clone();
    store.close();
    Connection::open(&path)
        .expect("opens")
        .execute("UPDATE schema_version SET version = 99", [])
        .expect("updated");
    let error = SqliteStore::open(dir.path(), SqliteConfig::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        error.contains("schema version 99, newer than this binary's"),
        "{error}"
    );
    assert!(error.contains(&path.display().to_string()), "{error}");
    let found: i64 = Connection::open(&path)
        .expect("opens")
        .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
            row.get(0)
        })
        .expect("still there");
    assert_eq!(found, 99, "the newer store is left as it was");
}

#[test]
fn retention_deletes_finished_instances_and_what_they_own() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = SqliteStore::open(dir.path(), SqliteConfig::default()).expect("opens");
    let path = store.path.clone();
    store.close();
    let connection = Connection::open(&path).expect("opens");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_millis() as i64;
    // 1..=5 finished a day ago, 6..=8 a minute ago, 9 runs.
    for key in 1..=9i64 {
        let end = match key {
            1..=5 => Some(now - 86_400_000),
            6..=8 => Some(now - 60_000),
            _ => None,
        };
        connection
            .execute(
                "INSERT INTO process_instance (key, state, end_date, position) VALUES (?1, 'COMPLETED', ?2, 1)",
                rusqlite::params![key, end],
            )
            .expect("inserted");
        connection
            .execute(
                "INSERT INTO variable (key, name, value, scope_key, process_instance_key, position) VALUES (?1, 'x', '1', ?1, ?1, 1)",
                rusqlite::params![key + 100],
            )
            .expect("inserted");
        connection
            .execute(
                "UPDATE variable SET process_instance_key = ?1 WHERE key = ?2",
                rusqlite::params![key, key + 100],
            )
            .expect("updated");
    }
    let metrics = StoreMetrics::default();
    let stopping = AtomicBool::new(false);
    let retention = Retention {
        max_age: Some(std::time::Duration::from_secs(3600)),
        max_finished: Some(2),
        chunk: 2,
        ..Retention::default()
    };
    let deleted = retention::sweep(&connection, &retention, &metrics, &stopping).expect("sweeps");
    assert_eq!(deleted, 6, "five by age, one beyond the count");
    let left: Vec<i64> = connection
        .prepare("SELECT key FROM process_instance ORDER BY key")
        .expect("prepares")
        .query_map([], |r| r.get(0))
        .expect("queries")
        .collect::<Result<_, _>>()
        .expect("reads");
    assert_eq!(
        left,
        vec![7, 8, 9],
        "the newest finished and the running one stay"
    );
    let variables: i64 = connection
        .query_row("SELECT COUNT(*) FROM variable", [], |r| r.get(0))
        .expect("counts");
    assert_eq!(variables, 3, "their variables went with them");
}

#[test]
fn a_store_of_schema_version_3_is_upgraded_with_forms_and_start_forms() {
    let dir = tempfile::tempdir().expect("a directory");
    let store = SqliteStore::open(dir.path(), SqliteConfig::default()).expect("opens");
    let path = store.path.clone();
    store.close();
    // What version 3 had: no form table, no start form columns.
    {
        let connection = Connection::open(&path).expect("opens");
        connection
            .execute_batch(
                "DROP TABLE form; \
                 ALTER TABLE process_definition DROP COLUMN deployment_key; \
                 ALTER TABLE process_definition DROP COLUMN start_form_id; \
                 ALTER TABLE process_definition DROP COLUMN start_form_binding; \
                 ALTER TABLE process_definition DROP COLUMN start_form_version_tag; \
                 UPDATE schema_version SET version = 3;",
            )
            .expect("made version 3");
    }
    let store = SqliteStore::open(dir.path(), SqliteConfig::default()).expect("upgrades");
    store.close();
    let connection = Connection::open(&path).expect("opens");
    let version: i64 = connection
        .query_row("SELECT MAX(version) FROM schema_version", [], |row| {
            row.get(0)
        })
        .expect("a version");
    assert_eq!(version, sql::SCHEMA_VERSION);
    for table in beeline_search::rows::TABLES {
        let names: Vec<String> = connection
            .prepare(&format!(
                "SELECT name FROM pragma_table_info('{}')",
                table.name
            ))
            .expect("prepares")
            .query_map([], |row| row.get(0))
            .expect("queries")
            .collect::<Result<_, _>>()
            .expect("reads");
        for column in table.columns {
            assert!(
                names.iter().any(|n| n == column.name),
                "{}.{} after the upgrade: {names:?}",
                table.name,
                column.name
            );
        }
    }
}
