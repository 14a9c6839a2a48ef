//! Figures for secondary storage, printed, not asserted: how fast a store takes what the
//! exporter writes, what its writer costs, and how fast it answers a search by state and
//! process id once it holds many instances.
//!
//! `cargo bench -p beeline --bench read_side -- [--store embedded|postgres] [--instances N]
//!  [--searches N] [--flush N] [--dir PATH] [--url URL]`
//!
//! The rows are the exporter's own: a one-task instance (1 KiB of variables at the start and at
//! the job's completion, as `beeline bench --payload 1KiB` sends) runs once on an in-process
//! partition, and its records go through the store exporter's projection. That instance's rows,
//! completed and (for one instance in ten) still waiting at its job, are then written again and
//! again with their keys, positions and dates moved on and one of ten process ids, through the
//! store's own writer in flushes of `--flush` instances (default 1,000): the store takes the
//! very rows the exporter would write for so many instances, without the engine making them. Then it searches instances
//! by state and process id (`POST /v2/process-instances/search` with
//! `{"filter": {"state": "ACTIVE", "processDefinitionId": "..."}}`, the first page of 100 and its
//! total, answered by the store's search, without HTTP) and prints the latency percentiles.
//!
//! `--store postgres` starts a PostgreSQL server of its own (durability on), or writes to
//! `--url`. `--dir` keeps the SQLite file (default: a temporary directory, deleted after).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a benchmark: a failed unwrap is a failed run"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use beeline_exporter::Controller;
use beeline_protocol::Record;
use beeline_search::Writer;
use beeline_search::projection::{Definitions, Projection};
use beeline_search::query::{Condition, Op, PROCESS_INSTANCES, Query};
use beeline_search::rows::{Batch, TABLES, Type, Value, index};
use beeline_search::{Flush, SearchStore};
use beeline_stream::testkit::Harness;
use beeline_stream::testkit::bpmn::ProcessBuilder;
use beeline_stream::{ExporterPosition, NOTHING_ACKNOWLEDGED};

mod common;

use common::{arg, option, status_kib};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Process ids the instances are spread over.
const PROCESSES: u64 = 10;
/// One instance in this many is still waiting at its job.
const ACTIVE_EVERY: u64 = 10;
/// Keys and positions one template instance spans at most.
const STRIDE: i64 = 1_000;

fn main() {
    let store = option("--store").unwrap_or_else(|| "embedded".into());
    let instances = arg("--instances", 1_000_000);
    let searches = arg("--searches", 1_000);
    // Instances per flush: 1,000 fills the store fast; 30 is what a broker's exporter hands
    // over at 600 instances/s (a flush every 50 ms).
    let per_flush = arg("--flush", 1_000).max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let (completed, active) = templates();
    println!(
        "read_side: {} rows per completed instance, {} per waiting one; store {store}",
        rows(&completed),
        rows(&active)
    );
    match store.as_str() {
        "embedded" => {
            let temp = tempfile::tempdir().expect("a temporary directory");
            let dir = option("--dir").map_or_else(|| temp.path().to_owned(), Into::into);
            let opened = beeline_sqlite::SqliteStore::open(
                &dir,
                beeline_sqlite::SqliteConfig {
                    retention: no_retention(),
                    ..Default::default()
                },
            )
            .expect("the store opens");
            let writer = opened.writer.clone();
            let search: Arc<dyn SearchStore> = opened.search.clone();
            runtime.block_on(run(
                writer, search, &completed, &active, instances, searches, per_flush,
            ));
            let size = std::fs::metadata(&opened.path).map_or(0, |m| m.len());
            println!("store file {:.1} MiB", size as f64 / 1_048_576.0);
            opened.close();
        }
        "postgres" => {
            let server;
            let url = match option("--url") {
                Some(url) => url,
                None => {
                    server = beeline_postgres::testkit::Server::start_with(&[])
                        .expect("a PostgreSQL server (install postgresql)");
                    server.database().expect("a database")
                }
            };
            runtime.block_on(async {
                let mut config = beeline_postgres::PostgresConfig::new(url);
                config.retention = no_retention();
                let opened = beeline_postgres::PostgresStore::open(config)
                    .await
                    .expect("the store opens");
                let search: Arc<dyn SearchStore> = opened.search.clone();
                run(
                    opened.writer.clone(),
                    search,
                    &completed,
                    &active,
                    instances,
                    searches,
                    per_flush,
                )
                .await;
                opened.close().await;
            });
        }
        other => panic!("--store embedded|postgres, not {other}"),
    }
    println!("peak RSS {:.1} MiB", status_kib("VmHWM:") as f64 / 1024.0);
}

fn no_retention() -> beeline_search::Retention {
    beeline_search::Retention {
        max_age: None,
        max_finished: None,
        ..Default::default()
    }
}

fn rows(batch: &Batch) -> usize {
    batch.tables.iter().map(|t| t.len()).sum()
}

/// The rows of one one-task instance: completed, and waiting at its job.
fn templates() -> (Batch, Batch) {
    let harness = Harness::new(1);
    harness.deploy_process(
        &ProcessBuilder::new("read-side")
            .start_event("start")
            .service_task("task", "read-side-work")
            .end_event("end"),
    );
    let payload = beeline_bench::payload(1024);
    let start = harness.records().len();
    harness.create_instance(
        "read-side",
        &beeline_bench::with_fields(
            &[
                ("benchRun", "\"1764115200\"".into()),
                ("benchKey", "\"1764115200000-1\"".into()),
            ],
            &payload,
        ),
    );
    let jobs = harness.activate_jobs("read-side-work", 1);
    let waiting = harness.records().len();
    harness
        .complete_job(
            jobs[0].0,
            &beeline_bench::with_fields(&[("benchJobT", "1".into())], &payload),
        )
        .expect("the job completes");
    harness.settle();
    let records = harness.records().list().to_vec();
    // The deployment's records go first, so the instance's rows get the definition's names;
    // its rows are written once, not per instance (see `definitions`).
    let project = |instance: &[Record]| {
        let projection = Projection::new(Definitions::default());
        let mut batch = Batch::new();
        for record in records[..start].iter().chain(instance) {
            projection.fold(record, &mut batch);
        }
        batch
    };
    (
        project(&records[start..]),
        project(&records[start..waiting]),
    )
}

/// Whether a column holds a key of the instance's own (moved on per copy), as opposed to a
/// definition's.
fn instance_key(name: &str) -> bool {
    (name == "key" || name.ends_with("_key"))
        && !matches!(
            name,
            "process_definition_key"
                | "decision_definition_key"
                | "decision_requirements_key"
                | "root_decision_definition_key"
                | "form_key"
        )
}

fn date(name: &str) -> bool {
    name.ends_with("_date") || matches!(name, "deadline" | "end_time" | "creation_time")
}

/// Copy `n` of a template: keys and positions moved on by `n` strides, dates by `n` ms, the
/// process id one of [`PROCESSES`].
fn copy(template: &Batch, n: u64, into: &mut Batch) {
    let shift = (n as i64 + 1) * STRIDE;
    let process = n % PROCESSES;
    for (table, rows) in template.tables.iter().enumerate() {
        if table == index::PROCESS_DEFINITION {
            continue;
        }
        let columns = TABLES[table].columns;
        for row in rows.values() {
            let mut row = row.clone();
            for (cell, column) in row.iter_mut().zip(columns) {
                match (column.ty, &mut *cell) {
                    (Type::Int, Value::Int(v)) if instance_key(column.name) => *v += shift,
                    (Type::Int, Value::Int(v)) if column.name == "position" => *v += shift,
                    (Type::Int, Value::Int(v)) if date(column.name) => *v += n as i64,
                    (Type::Int, Value::Int(v)) if column.name == "process_definition_key" => {
                        *v += process as i64
                    }
                    (Type::Text, Value::Text(text)) if column.name == "bpmn_process_id" => {
                        *text = format!("read-side-{process}")
                    }
                    _ => {}
                }
            }
            into.fold(table, row);
        }
    }
    into.position = into.position.max(template.position + shift);
}

/// The definitions' rows: one per process id.
fn definitions(template: &Batch) -> Batch {
    let mut batch = Batch::new();
    for row in template.tables[index::PROCESS_DEFINITION].values() {
        for process in 0..PROCESSES {
            let mut row = row.clone();
            row[0] = match row[0] {
                Value::Int(key) => Value::Int(key + process as i64),
                ref other => other.clone(),
            };
            row[1] = Value::Text(format!("read-side-{process}"));
            batch.fold(index::PROCESS_DEFINITION, row);
        }
    }
    batch.position = 1;
    batch
}

/// CPU time of this process's threads named `name` (as `/proc` shows it, at most 15
/// characters), in ms.
fn thread_cpu_ms(name: &str) -> u64 {
    let tick_ms = 10; // USER_HZ is 100 on Linux.
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .flatten()
        .filter(|t| {
            std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim_end() == name)
        })
        .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
        .map(|stat| {
            let fields: Vec<&str> = stat
                .rsplit_once(')')
                .map_or("", |(_, rest)| rest)
                .split_whitespace()
                .collect();
            let field = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok());
            // utime and stime are fields 14 and 15 of stat, 12 and 13 after the name.
            (field(11).unwrap_or(0) + field(12).unwrap_or(0)) * tick_ms
        })
        .sum()
}

async fn run<W: Writer>(
    writer: Arc<W>,
    search: Arc<dyn SearchStore>,
    completed: &Batch,
    active: &Batch,
    instances: u64,
    searches: u64,
    per_flush: u64,
) {
    let position = ExporterPosition::new(NOTHING_ACKNOWLEDGED);
    let controller = Controller::new(1, position.clone());
    let flush = |batch: Batch| Flush {
        partition_id: 1,
        batch,
        controller: controller.clone(),
    };
    writer
        .write(flush(definitions(completed)))
        .await
        .expect("the writer takes the definitions");
    let started = Instant::now();
    let cpu_before = thread_cpu_ms("secondary-write");
    let mut batch = Batch::new();
    let mut last = 0;
    for n in 0..instances {
        let template = if (n / PROCESSES) % ACTIVE_EVERY == ACTIVE_EVERY - 1 {
            active
        } else {
            completed
        };
        copy(template, n, &mut batch);
        if (n + 1) % per_flush == 0 || n + 1 == instances {
            last = batch.position;
            writer
                .write(flush(std::mem::take(&mut batch)))
                .await
                .expect("the writer takes the flush");
        }
        if (n + 1) % 100_000 == 0 {
            println!(
                "  {} instances in {:.1} s",
                n + 1,
                started.elapsed().as_secs_f64()
            );
        }
    }
    while position.get() < last {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = thread_cpu_ms("secondary-write").saturating_sub(cpu_before);
    println!(
        "loaded {instances} instances in {elapsed:.1} s: {:.0} instances/s, {:.0} rows/s; \
         the writer thread's CPU {:.1} µs per instance (embedded only)",
        instances as f64 / elapsed,
        (instances as f64 * rows(completed) as f64) / elapsed,
        cpu as f64 * 1000.0 / instances as f64
    );

    let state_field = PROCESS_INSTANCES.field("state").expect("a field");
    let process_field = PROCESS_INSTANCES
        .field("processDefinitionId")
        .expect("a field");
    for state in ["ACTIVE", "COMPLETED"] {
        let mut latencies = Vec::new();
        let mut found = 0;
        for n in 0..searches {
            let mut query = Query::new(&PROCESS_INSTANCES);
            query
                .conditions
                .push(Condition::Field(state_field, Op::Eq(Value::text(state))));
            query.conditions.push(Condition::Field(
                process_field,
                Op::Eq(Value::Text(format!("read-side-{}", n % PROCESSES))),
            ));
            let asked = Instant::now();
            let results = search.search(query).await.expect("the store answers");
            latencies.push(asked.elapsed());
            found += results.rows.len();
            assert!(!results.rows.is_empty(), "the search finds instances");
        }
        latencies.sort();
        let at = |q: f64| {
            latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)]
                .as_secs_f64()
                * 1000.0
        };
        println!(
            "search state={state} and processDefinitionId, first page of 100 and its total, \
             {searches} searches: p50 {:.2} ms p99 {:.2} ms max {:.2} ms ({} rows per page)",
            at(0.5),
            at(0.99),
            at(1.0),
            found / searches.max(1) as usize
        );
    }
}
