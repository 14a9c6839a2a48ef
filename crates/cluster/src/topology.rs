//! What the brokers tell each other about themselves, and the cluster as one broker sees it:
//! every live broker with its partitions' roles, terms and health, and who leads what.
//!
//! A partition's leader is the live broker that reports leading it in the highest term, as
//! Zeebe's gateway decides (a report of an older term never replaces a newer one).

use crate::transport::proto;
use crate::types::NodeId;

/// A partition replica's role on its broker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Leader,
    Follower,
    /// Not taking part (not opened, or refused to open).
    Inactive,
}

/// A partition replica's health on its broker, as Zeebe's topology reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Health {
    Healthy,
    Unhealthy,
    Dead,
}

/// One partition replica as its broker reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionState {
    pub partition_id: u32,
    pub role: Role,
    /// The Raft term the role holds in (without replication: 1 while open).
    pub term: u64,
    pub health: Health,
}

impl PartitionState {
    /// What a replica open on this broker reports: its role and term from its role watch
    /// (a partition without replication leads term 1), its health from its status (unhealthy
    /// while the broker is short of disk).
    pub fn of(handle: &beeline_stream::PartitionHandle) -> Self {
        let state = handle.role();
        let role = match state.role {
            beeline_stream::Role::Leader => Role::Leader,
            beeline_stream::Role::Follower => Role::Follower,
            beeline_stream::Role::Inactive => Role::Inactive,
        };
        let health = match handle.status() {
            beeline_stream::PartitionStatus::Healthy if handle.short_of_disk() => Health::Unhealthy,
            beeline_stream::PartitionStatus::Healthy => Health::Healthy,
            beeline_stream::PartitionStatus::Failed(_)
            | beeline_stream::PartitionStatus::Stopped => Health::Dead,
        };
        Self {
            partition_id: u32::from(handle.partition_id()),
            role,
            term: state.term,
            health,
        }
    }
}

/// A broker as it describes itself to the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerInfo {
    pub node_id: NodeId,
    pub cluster_name: String,
    pub cluster_size: u32,
    pub partitions_count: u32,
    pub replication_factor: u32,
    pub version: String,
    /// The advertised host clients reach the broker's gateway at.
    pub host: String,
    pub grpc_port: u16,
    pub rest_port: u16,
    /// `host:port` of its internal API.
    pub internal_address: String,
    /// Its replicas, by partition id.
    pub partitions: Vec<PartitionState>,
}

impl BrokerInfo {
    pub fn partition(&self, partition_id: u32) -> Option<&PartitionState> {
        self.partitions
            .iter()
            .find(|p| p.partition_id == partition_id)
    }
}

/// The leader of a partition, as the topology knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leader {
    pub node: NodeId,
    pub term: u64,
    pub health: Health,
}

/// The cluster as one broker sees it: itself and every broker it hears from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterView {
    /// Live brokers, this one included, by node id.
    pub brokers: Vec<BrokerInfo>,
    pub cluster_size: u32,
    pub partitions_count: u32,
    pub replication_factor: u32,
}

impl ClusterView {
    /// The live broker that leads `partition_id` in the highest term.
    pub fn leader(&self, partition_id: u32) -> Option<Leader> {
        self.brokers
            .iter()
            .filter_map(|broker| {
                let p = broker.partition(partition_id)?;
                (p.role == Role::Leader).then_some(Leader {
                    node: broker.node_id,
                    term: p.term,
                    health: p.health,
                })
            })
            .max_by_key(|leader| leader.term)
    }

    pub fn broker(&self, node: NodeId) -> Option<&BrokerInfo> {
        self.brokers.iter().find(|b| b.node_id == node)
    }
}

/// A message that does not hold what it must.
#[derive(Debug, thiserror::Error)]
#[error("malformed broker info: {0}")]
pub struct MalformedInfo(String);

impl PartitionState {
    fn to_proto(self) -> proto::PartitionInfo {
        proto::PartitionInfo {
            partition_id: self.partition_id,
            role: match self.role {
                Role::Inactive => 0,
                Role::Leader => 1,
                Role::Follower => 2,
            },
            term: self.term,
            health: match self.health {
                Health::Healthy => 0,
                Health::Unhealthy => 1,
                Health::Dead => 2,
            },
        }
    }

    fn from_proto(p: &proto::PartitionInfo) -> Result<Self, MalformedInfo> {
        Ok(Self {
            partition_id: p.partition_id,
            role: match p.role {
                0 => Role::Inactive,
                1 => Role::Leader,
                2 => Role::Follower,
                other => return Err(MalformedInfo(format!("unknown role {other}"))),
            },
            term: p.term,
            health: match p.health {
                0 => Health::Healthy,
                1 => Health::Unhealthy,
                2 => Health::Dead,
                other => return Err(MalformedInfo(format!("unknown health {other}"))),
            },
        })
    }
}

impl BrokerInfo {
    pub(crate) fn to_proto(&self, incarnation: u64, revision: u64) -> proto::BrokerInfo {
        proto::BrokerInfo {
            node_id: self.node_id,
            cluster_name: self.cluster_name.clone(),
            cluster_size: self.cluster_size,
            partitions_count: self.partitions_count,
            replication_factor: self.replication_factor,
            version: self.version.clone(),
            host: self.host.clone(),
            grpc_port: u32::from(self.grpc_port),
            rest_port: u32::from(self.rest_port),
            internal_address: self.internal_address.clone(),
            partitions: self.partitions.iter().map(|p| p.to_proto()).collect(),
            incarnation,
            revision,
            known_brokers: Vec::new(),
        }
    }

    pub(crate) fn from_proto(info: &proto::BrokerInfo) -> Result<Self, MalformedInfo> {
        let port = |port: u32, what: &str| {
            u16::try_from(port).map_err(|_| MalformedInfo(format!("{what} {port} is not a port")))
        };
        Ok(Self {
            node_id: info.node_id,
            cluster_name: info.cluster_name.clone(),
            cluster_size: info.cluster_size,
            partitions_count: info.partitions_count,
            replication_factor: info.replication_factor,
            version: info.version.clone(),
            host: info.host.clone(),
            grpc_port: port(info.grpc_port, "gRPC port")?,
            rest_port: port(info.rest_port, "REST port")?,
            internal_address: info.internal_address.clone(),
            partitions: info
                .partitions
                .iter()
                .map(PartitionState::from_proto)
                .collect::<Result<_, _>>()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broker(node_id: NodeId, partitions: Vec<PartitionState>) -> BrokerInfo {
        BrokerInfo {
            node_id,
            cluster_name: "c".into(),
            cluster_size: 3,
            partitions_count: 3,
            replication_factor: 1,
            version: "v".into(),
            host: "h".into(),
            grpc_port: 26500,
            rest_port: 8080,
            internal_address: format!("h{node_id}:26502"),
            partitions,
        }
    }

    fn state(partition_id: u32, role: Role, term: u64) -> PartitionState {
        PartitionState {
            partition_id,
            role,
            term,
            health: Health::Healthy,
        }
    }

    #[test]
    fn the_leader_is_the_one_of_the_highest_term() {
        let view = ClusterView {
            brokers: vec![
                broker(
                    0,
                    vec![state(1, Role::Leader, 2), state(2, Role::Follower, 3)],
                ),
                broker(1, vec![state(1, Role::Leader, 3)]),
                broker(
                    2,
                    vec![state(1, Role::Follower, 3), state(3, Role::Inactive, 0)],
                ),
            ],
            cluster_size: 3,
            partitions_count: 3,
            replication_factor: 3,
        };
        assert_eq!(view.leader(1).map(|l| (l.node, l.term)), Some((1, 3)));
        assert_eq!(view.leader(2), None);
        assert_eq!(view.leader(3), None);
    }

    #[test]
    fn broker_info_round_trips() {
        let info = broker(
            2,
            vec![
                state(1, Role::Leader, 7),
                PartitionState {
                    partition_id: 2,
                    role: Role::Inactive,
                    term: 0,
                    health: Health::Dead,
                },
            ],
        );
        let wire = info.to_proto(9, 4);
        assert_eq!((wire.incarnation, wire.revision), (9, 4));
        assert_eq!(BrokerInfo::from_proto(&wire).unwrap(), info);
        let mut bad = wire;
        bad.partitions[0].role = 9;
        assert!(BrokerInfo::from_proto(&bad).is_err());
    }
}
