//! The store conformance suite (exporter properties, searches) against a real PostgreSQL
//! server started for the test, and what this store adds: the schema met again at start,
//! retention, a server that goes away and comes back.

use std::sync::Arc;
use std::time::Duration;

use beeline_search::conformance::{self, TestStore};
use beeline_search::rows::TABLES;

use super::*;
use crate::testkit::Server;

/// A connection of the test's own.
async fn connect(url: &str) -> Result<Client, Error> {
    Database::new(url)?.connect().await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// Every row of every table, in key order, as text (as the embedded store's suite prints it).
async fn dump(url: &str) -> String {
    let client = connect(url).await.expect("connects");
    let mut out = String::new();
    for table in TABLES {
        let keys: Vec<&str> = table.columns[..table.key_columns]
            .iter()
            .map(|c| c.name)
            .collect();
        let rows = client
            .query(
                &format!("SELECT * FROM {} ORDER BY {}", table.name, keys.join(", ")),
                &[],
            )
            .await
            .expect("queries");
        for row in rows {
            let cells: Vec<String> = crate::value::cells(&row)
                .expect("cells")
                .iter()
                .map(|c| format!("{c:?}"))
                .collect();
            out.push_str(&format!("{} {}\n", table.name, cells.join(" ")));
        }
    }
    out
}

fn open_test_store(server: &Arc<Server>) -> TestStore<PostgresWriter> {
    let url = server.database().expect("a database");
    let runtime = Arc::new(runtime());
    let store = runtime
        .block_on(PostgresStore::open(PostgresConfig::new(url.clone())))
        .expect("opens");
    let writer = store.writer.clone();
    let search: Arc<dyn beeline_search::SearchStore> = store.search.clone();
    let keep = (server.clone(), runtime.clone(), store);
    TestStore {
        writer,
        search,
        contents: Box::new(move || {
            let _ = &keep;
            let (runtime, url) = (runtime.clone(), url.clone());
            // Off the caller's thread: it may be inside a runtime of its own.
            std::thread::spawn(move || runtime.block_on(dump(&url)))
                .join()
                .expect("dumped")
        }),
    }
}

#[test]
fn postgres_conforms() {
    let Some(server) = Server::start() else {
        return;
    };
    let server = Arc::new(server);
    conformance::run_all(|| open_test_store(&server));
}

#[test]
fn the_schema_is_met_again_at_start_and_a_newer_one_is_refused() {
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.database().expect("a database");
    let runtime = runtime();
    runtime.block_on(async {
        let store = PostgresStore::open(PostgresConfig::new(url.clone()))
            .await
            .expect("creates the schema");
        store.close().await;
        let store = PostgresStore::open(PostgresConfig::new(url.clone()))
            .await
            .expect("opens the schema it made");
        store.close().await;
        let client = connect(&url).await.expect("connects");
        client
            .execute("UPDATE schema_version SET version = 99", &[])
            .await
            .expect("updated");
        let error = PostgresStore::open(PostgresConfig::new(url.clone()))
            .await
            .err()
            .expect("refused")
            .to_string();
        assert!(
            error.contains("schema version 99, newer than this binary's"),
            "{error}"
        );
        assert!(
            error.contains(&format!("127.0.0.1:{}", server.port())),
            "{error}"
        );
    });
}

#[test]
fn retention_deletes_finished_instances_and_what_they_own() {
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.database().expect("a database");
    let runtime = runtime();
    runtime.block_on(async {
        let store = PostgresStore::open(PostgresConfig::new(url.clone()))
            .await
            .expect("opens");
        store.close().await;
        let mut client = connect(&url).await.expect("connects");
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
            client
                .execute(
                    "INSERT INTO process_instance (key, state, end_date, position) VALUES ($1, 'COMPLETED', $2, 1)",
                    &[&key, &end],
                )
                .await
                .expect("inserted");
            client
                .execute(
                    "INSERT INTO variable (key, name, value, scope_key, process_instance_key, position) VALUES ($1, 'x', '1', $2, $2, 1)",
                    &[&(key + 100), &key],
                )
                .await
                .expect("inserted");
        }
        let metrics = StoreMetrics::default();
        let (_stop, stopped) = tokio::sync::watch::channel(false);
        let retention = Retention {
            max_age: Some(Duration::from_secs(3600)),
            max_finished: Some(2),
            chunk: 2,
            ..Retention::default()
        };
        let deleted = retention::sweep(&mut client, &retention, &metrics, &stopped)
            .await
            .expect("sweeps");
        assert_eq!(deleted, 6, "five by age, one beyond the count");
        let left: Vec<i64> = client
            .query("SELECT key FROM process_instance ORDER BY key", &[])
            .await
            .expect("queries")
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert_eq!(left, vec![7, 8, 9], "the newest finished and the running one stay");
        let variables: i64 = client
            .query_one("SELECT COUNT(*) FROM variable", &[])
            .await
            .expect("counts")
            .get(0);
        assert_eq!(variables, 3, "their variables went with them");
    });
}

#[test]
fn a_password_stays_out_of_what_is_logged() {
    assert_eq!(
        redacted("postgresql://app:secret@db:5432/camunda"),
        "postgresql://app:***@db:5432/camunda"
    );
    assert_eq!(
        redacted("host=db user=app password=secret dbname=camunda"),
        "host=db user=app password=*** dbname=camunda"
    );
    assert_eq!(
        redacted("postgresql://app@db/camunda"),
        "postgresql://app@db/camunda"
    );
}

#[test]
fn a_server_away_at_start_or_going_away_holds_exporting_back_and_loses_nothing() {
    use beeline_search::query::{PROCESS_INSTANCES, Query};
    use beeline_search::{SearchError, SearchStore, Writer};
    let Some(server) = Server::start() else {
        return;
    };
    let url = server.database().expect("a database");
    server.stop().expect("the server stops");
    let runtime = runtime();
    runtime.block_on(async {
        let store = PostgresStore::open(PostgresConfig::new(url.clone()))
            .await
            .expect("opens without its server");
        assert!(store.metrics.failing.load(Ordering::Relaxed));
        let away = store.search.search(Query::new(&PROCESS_INSTANCES)).await;
        assert!(matches!(away, Err(SearchError::Unavailable(_))), "{away:?}");
        assert!(
            store.writer.position(1).await.is_err(),
            "the writer cannot answer"
        );
        server.restart().expect("the server starts again");
        assert_eq!(
            store.writer.position(1).await,
            Ok(None),
            "the schema is set up"
        );
        assert!(!store.metrics.failing.load(Ordering::Relaxed));
        let found = store
            .search
            .search(Query::new(&PROCESS_INSTANCES))
            .await
            .expect("searches answer");
        assert_eq!(found.total, 0);
        store.close().await;
    });
}
