//! The cluster's topology: every broker with each partition's role and health. A single node
//! reports its own partitions; a broker of a cluster reports every live broker as they
//! describe themselves (`beeline_cluster::Membership`).

use beeline_cluster::ClusterView;
use beeline_stream::PartitionStatus;

use crate::dispatch::Dispatcher;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    pub brokers: Vec<Broker>,
    pub cluster_size: i32,
    pub partitions_count: i32,
    pub replication_factor: i32,
    pub gateway_version: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    pub node_id: i32,
    pub host: String,
    pub port: u16,
    pub version: String,
    pub partitions: Vec<PartitionInfo>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionInfo {
    pub partition_id: u16,
    pub role: Role,
    pub health: Health,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Leader,
    Follower,
    Inactive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Healthy,
    Unhealthy,
    Dead,
}

/// A partition's role and health from its state: an open partition is led here (one replica),
/// unhealthy while the node is short of disk; one that refused to open is inactive and dead; a
/// failed or stopped one is dead.
pub(crate) fn partition(
    partition_id: u16,
    status: Option<&PartitionStatus>,
    short_of_disk: bool,
) -> PartitionInfo {
    let (role, health) = match status {
        Some(PartitionStatus::Healthy) if short_of_disk => (Role::Leader, Health::Unhealthy),
        Some(PartitionStatus::Healthy) => (Role::Leader, Health::Healthy),
        Some(PartitionStatus::Failed(_)) | Some(PartitionStatus::Stopped) => {
            (Role::Leader, Health::Dead)
        }
        None => (Role::Inactive, Health::Dead),
    };
    PartitionInfo {
        partition_id,
        role,
        health,
    }
}

pub fn run(d: &Dispatcher) -> Topology {
    if let Some(membership) = &d.membership {
        return cluster(&membership.view(), &d.node.version);
    }
    let partitions = d
        .partitions()
        .map(|(id, p)| {
            let short_of_disk = p.slot.handle().is_some_and(|h| h.short_of_disk());
            partition(id, d.partition_status(p).as_ref(), short_of_disk)
        })
        .collect();
    Topology {
        brokers: vec![Broker {
            node_id: d.node.node_id,
            host: d.node.host.clone(),
            port: d.node.port,
            version: d.node.version.clone(),
            partitions,
        }],
        cluster_size: 1,
        partitions_count: i32::from(d.partition_count()),
        replication_factor: 1,
        gateway_version: d.node.version.clone(),
    }
}

/// The topology of a cluster, from what its live brokers say of themselves.
fn cluster(view: &ClusterView, gateway_version: &str) -> Topology {
    Topology {
        brokers: view
            .brokers
            .iter()
            .map(|broker| Broker {
                node_id: i32::try_from(broker.node_id).unwrap_or(i32::MAX),
                host: broker.host.clone(),
                port: broker.grpc_port,
                version: broker.version.clone(),
                partitions: broker
                    .partitions
                    .iter()
                    .map(|p| PartitionInfo {
                        partition_id: u16::try_from(p.partition_id).unwrap_or(u16::MAX),
                        role: match p.role {
                            beeline_cluster::Role::Leader => Role::Leader,
                            beeline_cluster::Role::Follower => Role::Follower,
                            beeline_cluster::Role::Inactive => Role::Inactive,
                        },
                        health: match p.health {
                            beeline_cluster::Health::Healthy => Health::Healthy,
                            beeline_cluster::Health::Unhealthy => Health::Unhealthy,
                            beeline_cluster::Health::Dead => Health::Dead,
                        },
                    })
                    .collect(),
            })
            .collect(),
        cluster_size: i32::try_from(view.cluster_size).unwrap_or(i32::MAX),
        partitions_count: i32::try_from(view.partitions_count).unwrap_or(i32::MAX),
        replication_factor: i32::try_from(view.replication_factor).unwrap_or(i32::MAX),
        gateway_version: gateway_version.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_and_health_follow_the_partition_state() {
        let healthy = partition(1, Some(&PartitionStatus::Healthy), false);
        assert_eq!(healthy.partition_id, 1);
        assert_eq!(healthy.role, Role::Leader);
        assert_eq!(healthy.health, Health::Healthy);
        let short = partition(1, Some(&PartitionStatus::Healthy), true);
        assert_eq!(
            (short.role, short.health),
            (Role::Leader, Health::Unhealthy)
        );
        let failed = partition(2, Some(&PartitionStatus::Failed("disk".into())), true);
        assert_eq!(failed.health, Health::Dead);
        let refused = partition(3, None, false);
        assert_eq!(refused.role, Role::Inactive);
        assert_eq!(refused.health, Health::Dead);
    }
}
