//! A broker's part in a cluster of several, whatever the replication factor: the internal API's
//! one server (Raft, membership, forwarded commands, commands between partitions, job
//! streams), its membership (which brokers there are and what their replicas are: leader or
//! follower, in which term, healthy or not), commands between partitions on other brokers, and
//! the notices that keep waiting workers on every broker current.
//!
//! Replicas are placed round-robin (`ClusterSettings::placement`); this broker opens its own
//! (see `replication` for replicated ones) and reaches the partitions it does not lead through
//! their leaders. One connection per broker pair (`Peers`, fed by the membership with the
//! addresses the brokers give themselves) carries all of it.

use std::sync::Arc;

use beeline_cluster::transport::{Groups, InternalServer, Peers};
use beeline_cluster::{
    BrokerInfo, BrokerServices, ClusterRouter, ClusterSettings, Health, Membership,
    MembershipConfig, PartitionState, Role,
};
use beeline_stream::{JobStreams, LocalRouter};
use tokio::sync::Notify;

use crate::config::BrokerConfig;
use crate::node::{NodeError, NodeState, PartitionSlot};

/// How often this broker's partitions' states are looked at for changes to announce.
/// This broker in its cluster.
pub struct Broker {
    pub membership: Arc<Membership>,
    pub router: Arc<ClusterRouter>,
    pub services: Arc<BrokerServices>,
}

/// The host other brokers and clients reach this broker at.
pub fn advertised_host(config: &BrokerConfig) -> String {
    if let Some(host) = &config.advertised_host {
        return host.clone();
    }
    if config.host.is_unspecified() {
        return std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|name| name.trim().to_owned())
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "localhost".into());
    }
    config.host.to_string()
}

/// Serves the internal API (the Raft `groups` of this broker's replicas among the rest) and
/// joins the cluster: one round of gossip with the contact points before the partitions open,
/// so that a broker whose settings contradict the cluster's stops at once, naming the setting.
pub async fn join(
    config: &BrokerConfig,
    settings: &ClusterSettings,
    groups: Groups,
    local: Arc<LocalRouter>,
    job_streams: Arc<JobStreams>,
) -> Result<Broker, NodeError> {
    let host = advertised_host(config);
    let info = BrokerInfo {
        node_id: settings.node_id,
        cluster_name: settings.cluster_name.clone(),
        cluster_size: settings.cluster_size,
        partitions_count: settings.partitions,
        replication_factor: settings.replication_factor,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        host: host.clone(),
        grpc_port: config.grpc_port,
        rest_port: config.rest_port,
        internal_address: format!("{host}:{}", settings.internal_port),
        partitions: settings
            .local_partitions()
            .into_iter()
            .map(|partition_id| PartitionState {
                partition_id,
                role: beeline_cluster::Role::Inactive,
                term: 0,
                health: Health::Unhealthy,
            })
            .collect(),
    };
    let membership = Membership::new(
        info,
        settings.contact_points.clone(),
        Peers::new(settings.node_id),
        MembershipConfig::default(),
    );
    let router = ClusterRouter::new(local, membership.clone());
    let services = Arc::new(BrokerServices {
        membership: membership.clone(),
        router: router.clone(),
        job_streams,
        executor: std::sync::OnceLock::new(),
    });
    let address = std::net::SocketAddr::new(config.host, settings.internal_port);
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| NodeError::Listen {
            address: address.to_string(),
            setting: "--internal-port / BEELINE_INTERNAL_PORT",
            source,
        })?;
    let service = InternalServer::broker(groups, services.clone());
    let peers = membership.peers().clone();
    tokio::spawn(async move {
        let served =
            beeline_cluster::transport::serve(listener, service, peers, std::future::pending());
        if let Err(error) = served.await {
            tracing::error!(%error, "the internal API's server failed");
        }
    });
    tracing::info!(%address, "internal API listening");
    if settings.contact_points.is_empty() {
        tracing::warn!("no --contact-points: this broker waits for the others to find it");
    }
    membership.gossip_round().await;
    if let Some(error) = membership.refused().borrow().clone() {
        return Err(NodeError::Cluster(format!(
            "this broker does not join the cluster: {error}"
        )));
    }
    tokio::spawn(membership.clone().run());
    Ok(Broker {
        membership,
        router,
        services,
    })
}

/// Announces this broker's replicas' roles, terms and health whenever one changes: a slot
/// opened or failed, or a replica's role or health moved (`changed`, notified by the node and
/// by [`watch_roles`]). Idle, it waits: no timer.
pub fn publish_partitions(
    membership: Arc<Membership>,
    state: Arc<NodeState>,
    changed: Arc<Notify>,
) {
    tokio::spawn(async move {
        loop {
            let partitions = state
                .slots()
                .iter()
                .enumerate()
                .filter_map(|(index, slot)| {
                    let partition_id = index as u32 + 1;
                    let (role, term, health) = match slot {
                        PartitionSlot::Elsewhere => return None,
                        PartitionSlot::Opening => (Role::Inactive, 0, Health::Unhealthy),
                        PartitionSlot::Failed(_) => (Role::Inactive, 0, Health::Dead),
                        PartitionSlot::Open(handle) => return Some(PartitionState::of(handle)),
                    };
                    Some(PartitionState {
                        partition_id,
                        role,
                        term,
                        health,
                    })
                })
                .collect();
            membership.set_partitions(partitions);
            changed.notified().await;
        }
    });
}

/// Notifies `changed` whenever the replica's role (an election, a step-down) or its health
/// (it failed or stopped, or the broker's disk went short or has space again) moves. It ends
/// when the partition does (its status is gone); a partition without replication has no role
/// that moves.
pub fn watch_roles(handle: &beeline_stream::PartitionHandle, changed: Arc<Notify>) {
    let mut roles = handle.roles();
    let mut statuses = handle.statuses();
    let mut disk = handle.disk_changes();
    tokio::spawn(async move {
        let mut roles_move = true;
        loop {
            tokio::select! {
                moved = roles.changed(), if roles_move => {
                    if moved.is_err() {
                        roles_move = false;
                        continue;
                    }
                }
                moved = statuses.changed() => {
                    if moved.is_err() {
                        // The partition is gone: its last state is announced.
                        changed.notify_one();
                        break;
                    }
                }
                Some(moved) = async {
                    match disk.as_mut() {
                        Some(disk) => Some(disk.changed().await),
                        None => None,
                    }
                } => {
                    if moved.is_err() {
                        disk = None;
                        continue;
                    }
                }
            }
            changed.notify_one();
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use beeline_cluster::{Health, PartitionState};
    use beeline_log::MemJournal;
    use beeline_state::snapshot::SnapshotStore;
    use beeline_state::{MemStore, Store};
    use beeline_stream::disk::DiskSpace;
    use beeline_stream::{Partition, PartitionConfig, SystemClock};
    use tokio::sync::Notify;

    #[tokio::test]
    async fn a_crossing_of_the_disk_watermark_republishes_the_partitions_health() {
        let dir = tempfile::tempdir().expect("tempdir");
        let disk = DiskSpace::new(1 << 20);
        disk.update(u64::MAX);
        let mut config = PartitionConfig::new(1);
        config.snapshot_period = None;
        config.disk = Some(disk.clone());
        let snapshots = SnapshotStore::open(dir.path().join("snapshots"), 2).expect("snapshots");
        let opener = |_: Option<&std::path::Path>| -> beeline_state::Result<Arc<dyn Store>> {
            Ok(Arc::new(MemStore::new()))
        };
        let handle = Partition::open(
            config,
            MemJournal::default(),
            snapshots,
            &opener,
            Arc::new(SystemClock),
            None,
        )
        .expect("the partition opens");
        assert_eq!(PartitionState::of(&handle).health, Health::Healthy);
        let changed = Arc::new(Notify::new());
        super::watch_roles(&handle, changed.clone());
        // Whatever moved while the partition opened is announced first.
        let _ = tokio::time::timeout(Duration::from_millis(100), changed.notified()).await;
        for (free, health) in [(1 << 10, Health::Unhealthy), (u64::MAX, Health::Healthy)] {
            disk.update(free);
            tokio::time::timeout(Duration::from_secs(5), changed.notified())
                .await
                .expect("the crossing is announced");
            assert_eq!(
                PartitionState::of(&handle).health,
                health,
                "{free} bytes free"
            );
        }
        handle.shutdown().await;
    }
}
