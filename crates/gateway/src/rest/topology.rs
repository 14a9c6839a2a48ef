//! `GET /v2/topology` and `GET /v2/status`.

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::json::to_vec;
use super::{Gateway, Reply, answer};
use crate::operations::status;
use crate::operations::topology::{self, Health, Role};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TopologyResponse {
    brokers: Vec<BrokerInfo>,
    cluster_size: i32,
    partitions_count: i32,
    replication_factor: i32,
    gateway_version: String,
    /// The last cluster change applied; this cluster has never changed.
    last_completed_change_id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct BrokerInfo {
    node_id: i32,
    host: String,
    port: u16,
    partitions: Vec<Partition>,
    version: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Partition {
    partition_id: u16,
    role: &'static str,
    health: &'static str,
}

fn role(role: Role) -> &'static str {
    match role {
        Role::Leader => "leader",
        Role::Follower => "follower",
        Role::Inactive => "inactive",
    }
}

fn health(health: Health) -> &'static str {
    match health {
        Health::Healthy => "healthy",
        Health::Unhealthy => "unhealthy",
        Health::Dead => "dead",
    }
}

pub(super) async fn topology(State(d): State<Gateway>, uri: Uri) -> Response {
    answer(&d, "Topology", uri.path(), async {
        let topology = topology::run(&d);
        Ok(Reply::Json(to_vec(&TopologyResponse {
            brokers: topology
                .brokers
                .into_iter()
                .map(|broker| BrokerInfo {
                    node_id: broker.node_id,
                    host: broker.host,
                    port: broker.port,
                    partitions: broker
                        .partitions
                        .into_iter()
                        .map(|p| Partition {
                            partition_id: p.partition_id,
                            role: role(p.role),
                            health: health(p.health),
                        })
                        .collect(),
                    version: broker.version,
                })
                .collect(),
            cluster_size: topology.cluster_size,
            partitions_count: topology.partitions_count,
            replication_factor: topology.replication_factor,
            gateway_version: topology.gateway_version,
            last_completed_change_id: "-1",
        })))
    })
    .await
}

/// 204 when at least one partition has a healthy leader, 503 otherwise.
pub(super) async fn status(State(d): State<Gateway>) -> Response {
    if status::run(&d) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        StatusCode::SERVICE_UNAVAILABLE.into_response()
    }
}
