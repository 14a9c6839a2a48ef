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

    /// Where `node`'s election wait falls in the group's range: its rank among the replicas
    /// by priority, so that the primary stands first (Zeebe's priority election).
    pub fn election_band(&self, node: NodeId) -> ElectionBand {
        if !self.has_replica(node) {
            return ElectionBand::WHOLE;
        }
        ElectionBand {
            rank: self.ahead_of(node).len() as u32,
            of: self.replicas.len() as u32,
        }
    }

    /// The replicas of higher priority than `node`'s: those that stand for election before
    /// it (a new cluster's replica waits for them to be able to, [`crate::rejoin`]).
    pub fn ahead_of(&self, node: NodeId) -> Vec<NodeId> {
        let Some(own) = self.replicas.iter().find(|r| r.node == node) else {
            return Vec::new();
        };
        self.replicas
            .iter()
            .filter(|r| r.priority > own.priority)
            .map(|r| r.node)
            .collect()
    }
}

/// A replica's share of its group's election range (Zeebe's priority election, done with
/// timers): the range is cut into `of` equal bands, the replica of highest priority waits in
/// the first, the next in the second, and so on. Whoever's wait ends first stands first, so
/// with every replica up the primary leads its partition and leadership spreads over the
/// brokers as the placement does; when a leader goes, the remaining replica of highest
/// priority stands first. Nothing else changes: any replica with the log may still win.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElectionBand {
    /// 0 for the replica of highest priority.
    pub rank: u32,
    pub of: u32,
}

impl ElectionBand {
    /// The whole range, as every replica of a group without priorities waits.
    pub const WHOLE: ElectionBand = ElectionBand { rank: 0, of: 1 };

    /// This band of the range `[min, max)` (milliseconds), or the whole range where the bands
    /// would be narrower than a millisecond.
    pub fn within(self, min: u64, max: u64) -> (u64, u64) {
        let of = u64::from(self.of.max(1));
        let rank = u64::from(self.rank).min(of - 1);
        let width = max.saturating_sub(min) / of;
        if width == 0 {
            return (min, max);
        }
        let start = min + rank * width;
        let end = if rank + 1 == of { max } else { start + width };
        (start, end)
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

    #[test]
    fn the_primary_waits_in_the_first_band_and_the_bands_tile_the_range() {
        let placement = round_robin(&[0, 1, 2], 3, 3);
        // Partition 2: broker 1 is primary (3), broker 2 has 2, broker 0 has 1.
        let p = &placement[1];
        let bands: Vec<_> = [1, 2, 0]
            .iter()
            .map(|&node| p.election_band(node).within(500, 1000))
            .collect();
        assert_eq!(bands, vec![(500, 666), (666, 832), (832, 1000)]);
        // Not a replica, a group of one, or a range too narrow: the whole range.
        assert_eq!(p.election_band(7), ElectionBand::WHOLE);
        assert_eq!(ElectionBand::WHOLE.within(500, 1000), (500, 1000));
        assert_eq!(ElectionBand { rank: 1, of: 3 }.within(10, 12), (10, 12));
        // Every primary of a partition is first in its own band.
        for p in &placement {
            let primary = p.primary().unwrap();
            assert_eq!(p.election_band(primary).rank, 0);
        }
        // Who stands before each replica of partition 2: nobody before its primary.
        assert_eq!(p.ahead_of(1), Vec::<NodeId>::new());
        assert_eq!(p.ahead_of(2), vec![1]);
        assert_eq!(p.ahead_of(0), vec![1, 2]);
        assert_eq!(p.ahead_of(7), Vec::<NodeId>::new());
    }

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
