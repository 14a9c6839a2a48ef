//! Where a partition's replicas live: Zeebe's round-robin distribution with priorities.
//!
//! As Zeebe's `RoundRobinPartitionDistributor`: the brokers sorted by node id (`N` of them),
//! partition `p` (1-based) gets the `min(RF, N)` brokers starting at `(p - 1) mod N`; the first
//! is its primary (the preferred leader) with priority `RF`. The others get `RF - 1, RF - 2,
//! ...` in that order when `((p - 1) / N)` is even, and `1, 2, ...` when it is odd, so that when
//! a primary fails, leadership of its partitions spreads over different brokers.
//!
//! A pure function of the static settings: every broker computes the same placement without
//! talking to the others, and nodes of a partition start its Raft group with the same members.

use crate::types::NodeId;

/// One replica of a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replica {
    pub node: NodeId,
    /// Higher is more preferred as leader; the primary has the replication factor.
    pub priority: u32,
}

/// A partition and its replicas, primary first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionPlacement {
    pub partition_id: u32,
    pub replicas: Vec<Replica>,
}

impl PartitionPlacement {
    /// The preferred leader.
    pub fn primary(&self) -> Option<NodeId> {
        self.replicas.first().map(|r| r.node)
    }

    /// Whether `node` holds a replica.
    pub fn has_replica(&self, node: NodeId) -> bool {
        self.replicas.iter().any(|r| r.node == node)
    }
}

/// Places `partitions` partitions with `replication_factor` replicas each on `members`.
pub fn round_robin(
    members: &[NodeId],
    partitions: u32,
    replication_factor: u32,
) -> Vec<PartitionPlacement> {
    let mut sorted = members.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let n = sorted.len();
    if n == 0 {
        return Vec::new();
    }
    let count = (replication_factor as usize).min(n);
    (0..partitions)
        .map(|i| {
            let partition_id = i + 1;
            let descending = (i as usize / n).is_multiple_of(2);
            let replicas = (0..count)
                .map(|j| {
                    let node = sorted[(i as usize + j) % n];
                    let priority = if j == 0 {
                        replication_factor
                    } else if descending {
                        replication_factor - j as u32
                    } else {
                        j as u32
                    };
                    Replica { node, priority }
                })
                .collect();
            PartitionPlacement {
                partition_id,
                replicas,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The priority of each node per partition, as Zeebe's documentation tabulates it
    /// (0 = no replica).
    fn table(placement: &[PartitionPlacement], nodes: usize) -> Vec<Vec<u32>> {
        placement
            .iter()
            .map(|p| {
                (0..nodes as u64)
                    .map(|node| {
                        p.replicas
                            .iter()
                            .find(|r| r.node == node)
                            .map_or(0, |r| r.priority)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn four_brokers_five_partitions_replication_factor_three_as_zeebe_documents() {
        // RoundRobinPartitionDistributor's Javadoc example.
        let placement = round_robin(&[3, 1, 0, 2], 5, 3);
        assert_eq!(
            table(&placement, 4),
            vec![
                vec![3, 2, 1, 0],
                vec![0, 3, 2, 1],
                vec![1, 0, 3, 2],
                vec![2, 1, 0, 3],
                vec![3, 1, 2, 0],
            ]
        );
        assert_eq!(placement[2].primary(), Some(2));
        assert_eq!(
            placement[2]
                .replicas
                .iter()
                .map(|r| r.node)
                .collect::<Vec<_>>(),
            vec![2, 3, 0],
            "replicas in round-robin order from the primary"
        );
    }

    #[test]
    fn the_standard_benchmark_cluster_puts_every_partition_on_every_broker() {
        // 3 brokers, 3 partitions, replication factor 3: one primary per broker.
        let placement = round_robin(&[0, 1, 2], 3, 3);
        assert_eq!(
            table(&placement, 3),
            vec![vec![3, 2, 1], vec![1, 3, 2], vec![2, 1, 3]]
        );
    }

    #[test]
    fn one_broker_holds_every_partition_alone() {
        let placement = round_robin(&[0], 4, 1);
        assert_eq!(placement.len(), 4);
        assert!(placement.iter().all(|p| p.replicas
            == vec![Replica {
                node: 0,
                priority: 1
            }]));
    }

    #[test]
    fn each_broker_is_primary_for_its_share_and_holds_rf_shares() {
        let placement = round_robin(&[0, 1, 2, 3, 4, 5], 12, 3);
        for node in 0..6 {
            let primaries = placement
                .iter()
                .filter(|p| p.primary() == Some(node))
                .count();
            let replicas = placement.iter().filter(|p| p.has_replica(node)).count();
            assert_eq!((primaries, replicas), (2, 6), "node {node}");
        }
    }
}
