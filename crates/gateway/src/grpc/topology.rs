//! `Topology`.

use crate::dispatch::Dispatcher;
use crate::operations::topology::{self, Health, PartitionInfo, Role};
use crate::proto::partition::{PartitionBrokerHealth, PartitionBrokerRole};
use crate::proto::{BrokerInfo, Partition, TopologyResponse};

fn partition(p: PartitionInfo) -> Partition {
    let role = match p.role {
        Role::Leader => PartitionBrokerRole::Leader,
        Role::Follower => PartitionBrokerRole::Follower,
        Role::Inactive => PartitionBrokerRole::Inactive,
    };
    let health = match p.health {
        Health::Healthy => PartitionBrokerHealth::Healthy,
        Health::Unhealthy => PartitionBrokerHealth::Unhealthy,
        Health::Dead => PartitionBrokerHealth::Dead,
    };
    Partition {
        partition_id: i32::from(p.partition_id),
        role: role.into(),
        health: health.into(),
    }
}

pub(super) fn handle(d: &Dispatcher) -> TopologyResponse {
    let topology = topology::run(d);
    TopologyResponse {
        brokers: topology
            .brokers
            .into_iter()
            .map(|broker| BrokerInfo {
                node_id: broker.node_id,
                host: broker.host,
                port: i32::from(broker.port),
                partitions: broker.partitions.into_iter().map(partition).collect(),
                version: broker.version,
            })
            .collect(),
        cluster_size: topology.cluster_size,
        partitions_count: topology.partitions_count,
        replication_factor: topology.replication_factor,
        gateway_version: topology.gateway_version,
    }
}
