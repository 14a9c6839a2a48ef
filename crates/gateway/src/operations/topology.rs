//! The cluster's topology: every broker with each partition's role and health. One node for
//! now, leading every partition of its own.

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
    #[expect(
        dead_code,
        reason = "a node has followers once partitions are replicated"
    )]
    Follower,
    Inactive,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Healthy,
    #[expect(
        dead_code,
        reason = "replicated partitions report a lagging replica so"
    )]
    Unhealthy,
    Dead,
}

/// A partition's role and health from its state: an open partition is led here (one replica);
/// one that refused to open is inactive and dead; a failed or stopped one is dead.
pub(crate) fn partition(partition_id: u16, status: Option<&PartitionStatus>) -> PartitionInfo {
    let (role, health) = match status {
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
    let partitions = d
        .partitions()
        .map(|(id, p)| partition(id, d.partition_status(p).as_ref()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_and_health_follow_the_partition_state() {
        let healthy = partition(1, Some(&PartitionStatus::Healthy));
        assert_eq!(healthy.partition_id, 1);
        assert_eq!(healthy.role, Role::Leader);
        assert_eq!(healthy.health, Health::Healthy);
        let failed = partition(2, Some(&PartitionStatus::Failed("disk".into())));
        assert_eq!(failed.health, Health::Dead);
        let refused = partition(3, None);
        assert_eq!(refused.role, Role::Inactive);
        assert_eq!(refused.health, Health::Dead);
    }
}
