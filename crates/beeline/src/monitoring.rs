//! Health, readiness, startup and Prometheus metrics on the monitoring port, at the paths Zeebe
//! serves them (`/ready`, `/startup`, `/health`, `/actuator/health/...`, `/actuator/prometheus`).

use std::fmt::Write;
use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use beeline_stream::{PartitionHandle, PartitionMetrics, PartitionStatus, Role};

use crate::node::{NodeState, PartitionSlot};

pub async fn serve(listener: tokio::net::TcpListener, state: Arc<NodeState>) {
    let app = Router::new()
        .route("/health", get(health))
        .route("/ready", get(ready))
        .route("/startup", get(startup))
        .route("/actuator/health", get(health_json))
        .route("/actuator/health/liveness", get(liveness_json))
        .route("/actuator/health/readiness", get(health_json))
        .route("/actuator/health/startup", get(startup_json))
        .route("/metrics", get(metrics))
        .route("/actuator/prometheus", get(metrics))
        .route("/actuator/rebalance", axum::routing::post(rebalance))
        .with_state(state);
    if let Err(e) = axum::serve(listener, app).await {
        tracing::error!(error = %e, "monitoring server stopped");
    }
}

/// Zeebe's rebalancing: every partition's leadership handed back to its primary, on every
/// broker (`beeline_cluster::rebalance`). As Zeebe's, it answers 200 with no body whatever it
/// could do (nothing on a broker without Raft groups); the hand-overs go on after the answer,
/// and the metrics (`beeline_partition_role`) show where the leaders are.
async fn rebalance(State(state): State<Arc<NodeState>>) -> StatusCode {
    if let (Some(groups), Some(membership)) = (state.raft_groups.get(), state.membership.get()) {
        let (groups, membership) = (groups.clone(), membership.clone());
        tokio::spawn(async move {
            beeline_cluster::rebalance::rebalance(&groups, &membership).await;
        });
    }
    StatusCode::OK
}

fn status(ok: bool) -> StatusCode {
    if ok {
        StatusCode::NO_CONTENT
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    }
}

fn json(ok: bool) -> Response {
    json_body(ok, serde_json::Map::new())
}

fn json_body(ok: bool, mut body: serde_json::Map<String, serde_json::Value>) -> Response {
    let code = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    body.insert("status".into(), (if ok { "UP" } else { "DOWN" }).into());
    let text = serde_json::Value::Object(body).to_string();
    (code, [(header::CONTENT_TYPE, "application/json")], text).into_response()
}

/// `{"partitions":{"1":{"status":"UP"},"2":{"status":"DOWN","reason":"..."}}}`, this
/// broker's own partitions; in a cluster also `"cluster"`: the brokers it hears from and each
/// partition's leader as it sees them.
fn partition_details(state: &NodeState) -> serde_json::Map<String, serde_json::Value> {
    let mut partitions = serde_json::Map::new();
    for (index, slot) in state.slots().iter().enumerate() {
        let (status, reason) = match slot {
            PartitionSlot::Elsewhere => continue,
            PartitionSlot::Opening => ("DOWN", Some("opening".to_string())),
            PartitionSlot::Failed(reason) => ("DOWN", Some(reason.clone())),
            PartitionSlot::Open(handle) => match handle.status() {
                PartitionStatus::Healthy => ("UP", None),
                PartitionStatus::Failed(reason) => ("DOWN", Some(reason)),
                PartitionStatus::Stopped => ("DOWN", Some("stopped".to_string())),
            },
        };
        let mut entry = serde_json::Map::new();
        entry.insert("status".into(), status.into());
        if let Some(reason) = reason {
            entry.insert("reason".into(), reason.into());
        }
        partitions.insert((index + 1).to_string(), entry.into());
    }
    let mut body = serde_json::Map::new();
    body.insert("partitions".into(), partitions.into());
    if let Some(membership) = state.membership.get() {
        body.insert("cluster".into(), cluster_details(&membership.view()));
    }
    body
}

/// `{"brokers":[0,1,2],"leaders":{"1":0,"2":null,...}}`
fn cluster_details(view: &beeline_cluster::ClusterView) -> serde_json::Value {
    let brokers: Vec<serde_json::Value> = view.brokers.iter().map(|b| b.node_id.into()).collect();
    let mut leaders = serde_json::Map::new();
    for partition in 1..=view.partitions_count {
        let leader = view
            .leader(partition)
            .map_or(serde_json::Value::Null, |l| l.node.into());
        leaders.insert(partition.to_string(), leader);
    }
    serde_json::json!({
        "brokers": brokers,
        "clusterSize": view.cluster_size,
        "leaders": leaders,
    })
}

/// This broker's partitions' roles and terms, and what it sees of the cluster.
fn cluster_metrics(out: &mut String, state: &NodeState) {
    let Some(membership) = state.membership.get() else {
        return;
    };
    let view = membership.view();
    let local = view.broker(membership.local_id());
    let _ = writeln!(
        out,
        "# HELP beeline_partition_role This broker's role for the partition (1 on the role it \
         has).\n# TYPE beeline_partition_role gauge"
    );
    for p in local.map(|b| b.partitions.as_slice()).unwrap_or_default() {
        for (name, role) in [
            ("leader", beeline_cluster::Role::Leader),
            ("follower", beeline_cluster::Role::Follower),
            ("inactive", beeline_cluster::Role::Inactive),
        ] {
            let _ = writeln!(
                out,
                "beeline_partition_role{{partition=\"{}\",role=\"{name}\"}} {}",
                p.partition_id,
                u8::from(p.role == role)
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP beeline_partition_term The Raft term of this broker's role for the partition.\n\
         # TYPE beeline_partition_term gauge"
    );
    for p in local.map(|b| b.partitions.as_slice()).unwrap_or_default() {
        let _ = writeln!(
            out,
            "beeline_partition_term{{partition=\"{}\"}} {}",
            p.partition_id, p.term
        );
    }
    let _ = writeln!(
        out,
        "# HELP beeline_cluster_brokers Brokers this one hears from, itself included.\n\
         # TYPE beeline_cluster_brokers gauge\nbeeline_cluster_brokers {}",
        view.brokers.len()
    );
    let without = (1..=view.partitions_count)
        .filter(|p| view.leader(*p).is_none())
        .count();
    let _ = writeln!(
        out,
        "# HELP beeline_cluster_partitions_without_leader Partitions of the cluster with no \
         known leader.\n# TYPE beeline_cluster_partitions_without_leader gauge\n\
         beeline_cluster_partitions_without_leader {without}"
    );
}

async fn health(State(state): State<Arc<NodeState>>) -> StatusCode {
    status(state.is_started() && state.is_healthy())
}

async fn ready(State(state): State<Arc<NodeState>>) -> StatusCode {
    status(state.is_started() && state.is_healthy())
}

async fn startup(State(state): State<Arc<NodeState>>) -> StatusCode {
    status(state.is_started())
}

async fn health_json(State(state): State<Arc<NodeState>>) -> Response {
    json_body(
        state.is_started() && state.is_healthy(),
        partition_details(&state),
    )
}

async fn liveness_json() -> Response {
    json(true)
}

async fn startup_json(State(state): State<Arc<NodeState>>) -> Response {
    json(state.is_started())
}

async fn metrics(State(state): State<Arc<NodeState>>) -> Response {
    let mut out = String::new();
    let slots = state.slots();
    let mut counter = |name: &str, help: &str, value: &dyn Fn(&PartitionMetrics) -> f64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        for (index, slot) in slots.iter().enumerate() {
            if let PartitionSlot::Open(handle) = slot {
                let _ = writeln!(
                    out,
                    "{name}{{partition=\"{}\"}} {}",
                    index + 1,
                    value(handle.metrics())
                );
            }
        }
    };
    counter(
        "beeline_stream_processor_commands_processed_total",
        "Commands processed.",
        &|m| PartitionMetrics::get(&m.commands_processed) as f64,
    );
    counter(
        "beeline_log_records_written_total",
        "Records written to the log.",
        &|m| PartitionMetrics::get(&m.records_written) as f64,
    );
    counter(
        "beeline_log_appends_total",
        "Log appends (one per batch).",
        &|m| PartitionMetrics::get(&m.appends) as f64,
    );
    counter("beeline_log_flushes_total", "Log syncs to disk.", &|m| {
        PartitionMetrics::get(&m.flushes) as f64
    });
    counter(
        "beeline_partition_overload_rejections_total",
        "Requests refused because the partition's inbox was full.",
        &|m| PartitionMetrics::get(&m.rejected_overload) as f64,
    );
    counter(
        "beeline_stream_processor_processing_seconds_total",
        "Time spent processing commands (from a command's turn to its results stored); \
         divided by commands processed, the mean processing latency.",
        &|m| PartitionMetrics::get(&m.processing_micros) as f64 / 1e6,
    );
    counter(
        "beeline_jobs_pushed_total",
        "Jobs handed to a job stream (StreamActivatedJobs) as they were created.",
        &|m| PartitionMetrics::get(&m.jobs_pushed) as f64,
    );
    counter("beeline_snapshots_total", "Snapshots taken.", &|m| {
        PartitionMetrics::get(&m.snapshots) as f64
    });
    counter(
        "beeline_partition_elections_total",
        "Times this broker became the partition's leader.",
        &|m| PartitionMetrics::get(&m.elections) as f64,
    );
    let mut gauge = |name: &str, help: &str, value: &dyn Fn(&PartitionHandle) -> u64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for (index, slot) in slots.iter().enumerate() {
            if let PartitionSlot::Open(handle) = slot {
                let _ = writeln!(
                    out,
                    "{name}{{partition=\"{}\"}} {}",
                    index + 1,
                    value(handle)
                );
            }
        }
    };
    gauge(
        "beeline_partition_role",
        "This broker's role in the partition: 1 leader, 2 follower, 0 inactive.",
        &|h| match h.role().role {
            Role::Leader => 1,
            Role::Follower => 2,
            Role::Inactive => 0,
        },
    );
    gauge(
        "beeline_partition_term",
        "The highest Raft term this broker knows of the partition (1 on a single node).",
        &|h| h.role().term,
    );
    let name = "beeline_log_flush_duration_seconds";
    let _ = writeln!(
        out,
        "# HELP {name} Time one sync of the log to disk took.\n# TYPE {name} histogram"
    );
    for (index, slot) in slots.iter().enumerate() {
        if let PartitionSlot::Open(handle) = slot {
            let labels = format!("partition=\"{}\"", index + 1);
            handle
                .metrics()
                .flush_latency
                .render(&mut out, name, &labels);
        }
    }
    let _ = writeln!(
        out,
        "# HELP beeline_partition_healthy Whether the partition serves (1) or not (0): failed, \
         stopped or short of disk."
    );
    let _ = writeln!(out, "# TYPE beeline_partition_healthy gauge");
    for (index, slot) in slots.iter().enumerate() {
        if matches!(slot, PartitionSlot::Elsewhere) {
            continue;
        }
        let healthy = matches!(
            slot,
            PartitionSlot::Open(h) if h.status() == PartitionStatus::Healthy && !h.short_of_disk()
        );
        let _ = writeln!(
            out,
            "beeline_partition_healthy{{partition=\"{}\"}} {}",
            index + 1,
            u8::from(healthy)
        );
    }
    cluster_metrics(&mut out, &state);
    if let Some(groups) = state.raft_groups.get() {
        beeline_cluster::metrics::render(&mut out, &groups.reports());
    }
    if let Some(flusher) = state.raft_flusher.get() {
        beeline_cluster::metrics::render_flusher(&mut out, &flusher.counts());
    }
    let allocator = allocator_stats();
    let gauges = [
        (
            "beeline_rocksdb_memory_limit_bytes",
            "The state's memory budget: half of --memory-limit.",
            state.budget.limit() as u64,
        ),
        (
            "beeline_rocksdb_cache_usage_bytes",
            "Bytes in the shared RocksDB cache (blocks, indexes, filters, memtables).",
            state.budget.usage() as u64,
        ),
        (
            "beeline_rocksdb_memtable_usage_bytes",
            "Bytes of memtables charged to the budget.",
            state.budget.memtable_usage() as u64,
        ),
        (
            "beeline_state_write_back_bytes",
            "Committed state changes the partitions hold in memory, not yet written to RocksDB \
             (part of the state's budget).",
            state.budget.write_back_usage() as u64,
        ),
        (
            "process_resident_memory_bytes",
            "Resident set size.",
            resident_bytes(),
        ),
        (
            "beeline_allocator_allocated_bytes",
            "Bytes the program holds from the allocator (jemalloc serves Rust and RocksDB alike).",
            allocator.allocated,
        ),
        (
            "beeline_allocator_resident_bytes",
            "Bytes of the allocator's pages resident in memory: what it holds, its metadata, and \
             freed pages not yet returned to the system.",
            allocator.resident,
        ),
    ];
    let disk = state.disk.as_ref().map(|disk| {
        [
            (
                "beeline_disk_free_bytes",
                "Bytes free on the data directory's file system at the last measurement.",
                disk.free(),
            ),
            (
                "beeline_disk_free_min_bytes",
                "The free space processing needs (--disk-free-min).",
                disk.min_free(),
            ),
            (
                "beeline_disk_full",
                "1 while free space is below the minimum and new commands are refused.",
                u64::from(disk.is_short()),
            ),
        ]
    });
    let replication_disk = state.replication_disk.as_ref().map(|disk| {
        [
            (
                "beeline_disk_free_replication_min_bytes",
                "The free space a broker of a cluster keeps for what it holds \
                 (--disk-free-replication-min).",
                disk.min_free(),
            ),
            (
                "beeline_disk_full_for_replication",
                "1 while free space is below the replication minimum and replicated entries and \
                 snapshots are refused.",
                u64::from(disk.is_short()),
            ),
        ]
    });
    for (name, help, value) in gauges
        .into_iter()
        .chain(disk.into_iter().flatten())
        .chain(replication_disk.into_iter().flatten())
    {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
        );
    }
    if let Some(gateway) = state.gateway.get() {
        gateway.render(&mut out);
    }
    if let Some(read_side) = state.read_side.get() {
        read_side.render(&mut out);
    }
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out).into_response()
}

struct AllocatorStats {
    allocated: u64,
    resident: u64,
}

/// jemalloc's own figures, refreshed now (zeros where unavailable).
fn allocator_stats() -> AllocatorStats {
    use tikv_jemalloc_ctl::{epoch, stats};
    // The statistics are a snapshot taken at the last epoch advance.
    if epoch::advance().is_err() {
        return AllocatorStats {
            allocated: 0,
            resident: 0,
        };
    }
    AllocatorStats {
        allocated: stats::allocated::read().unwrap_or(0) as u64,
        resident: stats::resident::read().unwrap_or(0) as u64,
    }
}

/// The process's resident set size, from /proc (0 where unavailable).
pub fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}
