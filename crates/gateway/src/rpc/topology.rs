//! `Topology`: this node, leading every partition of its own, with each partition's health.

use beeline_stream::PartitionStatus;

use crate::dispatch::Dispatcher;
use crate::proto::partition::{PartitionBrokerHealth, PartitionBrokerRole};
use crate::proto::{BrokerInfo, Partition, TopologyResponse};

/// A partition's role and health from its state: an open partition is led here (one replica);
/// one that refused to open is inactive and dead; a failed or stopped one is dead.
pub(crate) fn partition(id: u16, status: Option<&PartitionStatus>) -> Partition {
    let (role, health) = match status {
        Some(PartitionStatus::Healthy) => {
            (PartitionBrokerRole::Leader, PartitionBrokerHealth::Healthy)
        }
        Some(PartitionStatus::Failed(_)) | Some(PartitionStatus::Stopped) => {
            (PartitionBrokerRole::Leader, PartitionBrokerHealth::Dead)
        }
        None => (PartitionBrokerRole::Inactive, PartitionBrokerHealth::Dead),
    };
    Partition {
        partition_id: i32::from(id),
        role: role.into(),
        health: health.into(),
    }
}

pub(crate) fn handle(d: &Dispatcher) -> TopologyResponse {
    let partitions = d
        .partitions()
        .map(|(id, p)| partition(id, d.partition_status(p).as_ref()))
        .collect();
    TopologyResponse {
        brokers: vec![BrokerInfo {
            node_id: d.node.node_id,
            host: d.node.host.clone(),
            port: i32::from(d.node.port),
            partitions,
            version: d.node.version.clone(),
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
        assert_eq!(healthy.role(), PartitionBrokerRole::Leader);
        assert_eq!(healthy.health(), PartitionBrokerHealth::Healthy);
        let failed = partition(2, Some(&PartitionStatus::Failed("disk".into())));
        assert_eq!(failed.health(), PartitionBrokerHealth::Dead);
        let refused = partition(3, None);
        assert_eq!(refused.role(), PartitionBrokerRole::Inactive);
        assert_eq!(refused.health(), PartitionBrokerHealth::Dead);
    }
}
