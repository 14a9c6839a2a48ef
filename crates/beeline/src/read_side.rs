//! The node's read side: secondary storage, and one exporter director per partition feeding
//! it from the committed log.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use beeline_exporter::{Director, DirectorConfig, ExporterMetrics, ExporterTask};
use beeline_postgres::{PostgresConfig, PostgresStore};
use beeline_search::StoreMetrics;
use beeline_search::exporter::MAX_PENDING_ROWS;
use beeline_search::projection::Definitions;
use beeline_search::{EXPORTER_ID, Retention, SearchStore, StoreExporter};
use beeline_sqlite::{SqliteConfig, SqliteStore};
use beeline_stream::PartitionHandle;

use crate::config::{BrokerConfig, SecondaryStorage};

/// Secondary storage and its exporters.
pub struct ReadSide {
    store: Store,
    definitions: Definitions,
    exporters: Vec<ExporterTask>,
}

enum Store {
    Sqlite(SqliteStore),
    Postgres(PostgresStore),
}

/// What monitoring reports of the read side.
#[derive(Clone)]
pub struct ReadSideMetrics {
    store: Arc<StoreMetrics>,
    exporters: Vec<Arc<ExporterMetrics>>,
}

impl ReadSide {
    /// Ids of the exporters each partition keeps positions for.
    pub fn exporter_ids(config: &BrokerConfig) -> Vec<String> {
        match config.secondary_storage {
            SecondaryStorage::Embedded | SecondaryStorage::Postgres => {
                vec![EXPORTER_ID.to_owned()]
            }
            SecondaryStorage::None => Vec::new(),
        }
    }

    /// Opens the configured store (`None` for `--secondary-storage none`).
    pub async fn open(config: &BrokerConfig) -> Result<Option<Self>, String> {
        let retention = Retention {
            max_age: config.retention_age.0,
            max_finished: config.retention_max_instances.0,
            ..Retention::default()
        };
        let store = match config.secondary_storage {
            SecondaryStorage::None => return Ok(None),
            SecondaryStorage::Embedded => {
                let (dir, memory) = (config.data_dir.clone(), config.secondary_storage_memory());
                let store = tokio::task::spawn_blocking(move || {
                    SqliteStore::open(
                        &dir,
                        SqliteConfig {
                            memory,
                            readers: 2,
                            retention,
                        },
                    )
                })
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?;
                tracing::info!(path = %store.path.display(), "secondary storage open");
                Store::Sqlite(store)
            }
            SecondaryStorage::Postgres => {
                let Some(url) = config.secondary_storage_url.clone() else {
                    return Err("--secondary-storage postgres needs the database's URL in \
                         --secondary-storage-url / BEELINE_SECONDARY_STORAGE_URL \
                         (postgresql://user:password@host:5432/database)"
                        .into());
                };
                let mut postgres = PostgresConfig::new(url);
                postgres.retention = retention;
                // A server that does not answer yet does not stop the node (the store says so
                // and connects when it comes); a bad URL or a newer schema does.
                let store = PostgresStore::open(postgres)
                    .await
                    .map_err(|e| e.to_string())?;
                tracing::info!(url = %store.name, "secondary storage open");
                Store::Postgres(store)
            }
        };
        Ok(Some(Self {
            store,
            definitions: Definitions::default(),
            exporters: Vec::new(),
        }))
    }

    pub fn search(&self) -> Arc<dyn SearchStore> {
        match &self.store {
            Store::Sqlite(store) => store.search.clone(),
            Store::Postgres(store) => store.search.clone(),
        }
    }

    /// Starts exporting `partition` into the store.
    pub fn export(&mut self, partition: PartitionHandle) -> Result<(), String> {
        let definitions = self.definitions.clone();
        let task = match &self.store {
            Store::Sqlite(store) => Director::spawn(
                partition,
                StoreExporter::new(store.writer.clone(), definitions, MAX_PENDING_ROWS),
                DirectorConfig::default(),
            )?,
            Store::Postgres(store) => Director::spawn(
                partition,
                StoreExporter::new(store.writer.clone(), definitions, MAX_PENDING_ROWS),
                DirectorConfig::default(),
            )?,
        };
        self.exporters.push(task);
        Ok(())
    }

    pub fn metrics(&self) -> ReadSideMetrics {
        ReadSideMetrics {
            store: match &self.store {
                Store::Sqlite(store) => store.metrics.clone(),
                Store::Postgres(store) => store.metrics.clone(),
            },
            exporters: self.exporters.iter().map(|t| t.metrics().clone()).collect(),
        }
    }

    /// Stops the exporters (each hands over what it gathered), then the store (which writes
    /// what it was handed).
    pub async fn stop(self) {
        for task in self.exporters {
            task.stop().await;
        }
        match self.store {
            Store::Sqlite(store) => {
                let _ = tokio::task::spawn_blocking(move || store.close()).await;
            }
            Store::Postgres(store) => store.close().await,
        }
    }
}

impl ReadSideMetrics {
    pub fn render(&self, out: &mut String) {
        let mut gauge =
            |name: &str, kind: &str, help: &str, value: &dyn Fn(&ExporterMetrics) -> i64| {
                let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
                for exporter in &self.exporters {
                    let _ = writeln!(
                        out,
                        "{name}{{partition=\"{}\",exporter=\"{}\"}} {}",
                        exporter.partition_id,
                        exporter.exporter,
                        value(exporter)
                    );
                }
            };
        gauge(
            "beeline_exporter_last_exported_position",
            "gauge",
            "The position of the last record the exporter acknowledged as stored.",
            &|e| e.position.get(),
        );
        gauge(
            "beeline_exporter_lag_records",
            "gauge",
            "Records written to the partition's log and not yet acknowledged by the exporter \
             (what compaction must keep for it).",
            &|e| e.lag(),
        );
        gauge(
            "beeline_exporter_exported_records_total",
            "counter",
            "Records handed to the exporter.",
            &|e| e.exported.load(Ordering::Relaxed) as i64,
        );
        gauge(
            "beeline_exporter_failures_total",
            "counter",
            "Exporter calls that failed and were retried.",
            &|e| e.failures.load(Ordering::Relaxed) as i64,
        );
        gauge(
            "beeline_exporter_stopped",
            "gauge",
            "Whether the exporter stopped on an error it cannot go on from (see the log).",
            &|e| i64::from(e.stopped.load(Ordering::Relaxed)),
        );
        let store = &self.store;
        let (buckets, sum_ms) = store.lag.buckets();
        let name = "beeline_secondary_storage_export_lag_seconds";
        let _ = writeln!(
            out,
            "# HELP {name} Per flush written, from its oldest record's timestamp to the commit \
             that made it searchable.\n# TYPE {name} histogram"
        );
        for (bound, count) in &buckets {
            let le = bound.map_or_else(|| "+Inf".to_owned(), |ms| format!("{}", ms as f64 / 1e3));
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {count}");
        }
        let count = buckets.last().map_or(0, |(_, count)| *count);
        let _ = writeln!(
            out,
            "{name}_sum {}\n{name}_count {count}",
            sum_ms as f64 / 1e3
        );
        for (name, kind, help, value) in [
            (
                "beeline_secondary_storage_flushes_total",
                "counter",
                "Write transactions of secondary storage.",
                store.flushes.load(Ordering::Relaxed),
            ),
            (
                "beeline_secondary_storage_rows_written_total",
                "counter",
                "Rows upserted into secondary storage.",
                store.rows.load(Ordering::Relaxed),
            ),
            (
                "beeline_secondary_storage_write_seconds_total",
                "counter",
                "Time spent in write transactions, in microseconds over 1e6.",
                store.write_micros.load(Ordering::Relaxed),
            ),
            (
                "beeline_secondary_storage_write_failures_total",
                "counter",
                "Write transactions that failed (each retried; exporting waits meanwhile).",
                store.write_failures.load(Ordering::Relaxed),
            ),
            (
                "beeline_secondary_storage_failing",
                "gauge",
                "Whether the last write failed and is being retried.",
                u64::from(store.failing.load(Ordering::Relaxed)),
            ),
            (
                "beeline_secondary_storage_retention_deleted_total",
                "counter",
                "Finished process instances deleted by retention.",
                store.retention_deleted.load(Ordering::Relaxed),
            ),
        ] {
            let value = if name.ends_with("write_seconds_total") {
                format!("{}", value as f64 / 1e6)
            } else {
                value.to_string()
            };
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
            );
        }
    }
}
