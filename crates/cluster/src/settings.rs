//! A broker's cluster settings, their Zeebe names, and the checks that refuse contradictory
//! ones with the setting named.

use std::fmt;

use crate::placement::{PartitionPlacement, round_robin};
use crate::types::NodeId;

/// The default port of the internal API (Raft and broker-to-broker traffic), as Zeebe's.
pub const DEFAULT_INTERNAL_PORT: u16 = 26502;

/// Zeebe's environment variables accepted for Beeline's cluster settings:
/// (Zeebe's name, Beeline's flag, Beeline's environment variable). Zeebe's Helm values and
/// compose files keep working.
pub const ZEEBE_ENVIRONMENT: &[(&str, &str, &str)] = &[
    ("ZEEBE_BROKER_CLUSTER_NODEID", "node-id", "BEELINE_NODE_ID"),
    (
        "ZEEBE_BROKER_CLUSTER_CLUSTERSIZE",
        "cluster-size",
        "BEELINE_CLUSTER_SIZE",
    ),
    (
        "ZEEBE_BROKER_CLUSTER_PARTITIONSCOUNT",
        "partitions",
        "BEELINE_PARTITIONS",
    ),
    (
        "ZEEBE_BROKER_CLUSTER_REPLICATIONFACTOR",
        "replication-factor",
        "BEELINE_REPLICATION_FACTOR",
    ),
    (
        "ZEEBE_BROKER_CLUSTER_INITIALCONTACTPOINTS",
        "contact-points",
        "BEELINE_CONTACT_POINTS",
    ),
    (
        "ZEEBE_BROKER_CLUSTER_RAFT_ENABLEPRIORITYELECTION",
        "priority-election",
        "BEELINE_PRIORITY_ELECTION",
    ),
    (
        "ZEEBE_BROKER_CLUSTER_CLUSTERNAME",
        "cluster-name",
        "BEELINE_CLUSTER_NAME",
    ),
    (
        "ZEEBE_BROKER_NETWORK_ADVERTISEDHOST",
        "advertised-host",
        "BEELINE_ADVERTISED_HOST",
    ),
    (
        "ZEEBE_BROKER_NETWORK_INTERNALAPI_PORT",
        "internal-port",
        "BEELINE_INTERNAL_PORT",
    ),
    (
        "ZEEBE_BROKER_CLUSTER_HEARTBEATINTERVAL",
        "heartbeat-interval",
        "BEELINE_HEARTBEAT_INTERVAL",
    ),
    (
        "ZEEBE_BROKER_CLUSTER_ELECTIONTIMEOUT",
        "election-timeout",
        "BEELINE_ELECTION_TIMEOUT",
    ),
];

/// A broker's place in the cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterSettings {
    /// This broker's id, 0 to `cluster_size - 1`.
    pub node_id: NodeId,
    /// The number of brokers.
    pub cluster_size: u32,
    /// The number of partitions of the whole cluster.
    pub partitions: u32,
    /// Replicas per partition, at most `cluster_size`.
    pub replication_factor: u32,
    /// Other brokers' internal addresses (`host:port`) to join through.
    pub contact_points: Vec<String>,
    /// Port of this broker's internal API.
    pub internal_port: u16,
    /// The cluster's name: brokers of differently named clusters do not join each other.
    pub cluster_name: String,
}

/// The default cluster name, as Zeebe's.
pub const DEFAULT_CLUSTER_NAME: &str = "zeebe-cluster";

impl Default for ClusterSettings {
    fn default() -> Self {
        Self {
            node_id: 0,
            cluster_size: 1,
            partitions: 1,
            replication_factor: 1,
            contact_points: Vec::new(),
            internal_port: DEFAULT_INTERNAL_PORT,
            cluster_name: DEFAULT_CLUSTER_NAME.into(),
        }
    }
}

/// A contradictory or unsupported setting, with the setting named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsError {
    /// The flag (without dashes) whose value is refused.
    pub setting: &'static str,
    pub reason: String,
}

impl fmt::Display for SettingsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--{}: {}", self.setting, self.reason)
    }
}

impl std::error::Error for SettingsError {}

fn refuse(setting: &'static str, reason: String) -> Result<(), SettingsError> {
    Err(SettingsError { setting, reason })
}

impl ClusterSettings {
    /// Checks that the settings agree with one another.
    pub fn validate(&self) -> Result<(), SettingsError> {
        if self.cluster_size == 0 {
            return refuse("cluster-size", "must be at least 1".into());
        }
        if self.node_id >= u64::from(self.cluster_size) {
            return refuse(
                "node-id",
                format!(
                    "{} is not a broker of a cluster of {} (--cluster-size): node ids are 0 to {}",
                    self.node_id,
                    self.cluster_size,
                    self.cluster_size - 1
                ),
            );
        }
        if self.partitions == 0 {
            return refuse("partitions", "must be at least 1".into());
        }
        if self.replication_factor == 0 {
            return refuse("replication-factor", "must be at least 1".into());
        }
        if self.replication_factor > self.cluster_size {
            return refuse(
                "replication-factor",
                format!(
                    "{} replicas per partition need at least {} brokers, but --cluster-size is {}",
                    self.replication_factor, self.replication_factor, self.cluster_size
                ),
            );
        }
        for point in &self.contact_points {
            if let Err(reason) = parse_contact_point(point) {
                return refuse("contact-points", format!("'{point}': {reason}"));
            }
        }
        if self.internal_port == 0 {
            return refuse("internal-port", "must be a port from 1 to 65535".into());
        }
        if self.cluster_name.trim().is_empty() {
            return refuse("cluster-name", "must not be empty".into());
        }
        Ok(())
    }

    /// Every partition's replicas, as every broker of the cluster computes them.
    pub fn placement(&self) -> Vec<PartitionPlacement> {
        let members: Vec<NodeId> = (0..u64::from(self.cluster_size)).collect();
        round_robin(&members, self.partitions, self.replication_factor)
    }

    /// The partitions this broker holds a replica of.
    pub fn local_partitions(&self) -> Vec<u32> {
        self.placement()
            .into_iter()
            .filter(|p| p.has_replica(self.node_id))
            .map(|p| p.partition_id)
            .collect()
    }
}

/// Splits a `host:port` contact point.
pub fn parse_contact_point(point: &str) -> Result<(&str, u16), String> {
    let Some((host, port)) = point.trim().rsplit_once(':') else {
        return Err(format!(
            "expected host:port (the port is usually {DEFAULT_INTERNAL_PORT})"
        ));
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err("the host is empty".into());
    }
    match port.parse::<u16>() {
        Ok(port) if port > 0 => Ok((host, port)),
        _ => Err(format!("'{port}' is not a port from 1 to 65535")),
    }
}

/// Splits a comma-separated list of contact points (Zeebe's format), dropping empty items.
pub fn split_contact_points(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn three() -> ClusterSettings {
        ClusterSettings {
            node_id: 1,
            cluster_size: 3,
            partitions: 3,
            replication_factor: 3,
            contact_points: split_contact_points("b0:26502, b1:26502,b2:26502"),
            internal_port: 26502,
            cluster_name: DEFAULT_CLUSTER_NAME.into(),
        }
    }

    #[test]
    fn the_defaults_are_a_single_broker() {
        let settings = ClusterSettings::default();
        assert_eq!(settings.validate(), Ok(()));
        assert_eq!(settings.local_partitions(), vec![1]);
        assert_eq!(settings.internal_port, 26502);
    }

    #[test]
    fn contradictions_name_the_setting() {
        let cases: Vec<(ClusterSettings, &str, &str)> = vec![
            (
                ClusterSettings {
                    node_id: 3,
                    ..three()
                },
                "node-id",
                "0 to 2",
            ),
            (
                ClusterSettings {
                    cluster_size: 0,
                    ..three()
                },
                "cluster-size",
                "at least 1",
            ),
            (
                ClusterSettings {
                    partitions: 0,
                    ..three()
                },
                "partitions",
                "at least 1",
            ),
            (
                ClusterSettings {
                    replication_factor: 0,
                    ..three()
                },
                "replication-factor",
                "at least 1",
            ),
            (
                ClusterSettings {
                    replication_factor: 4,
                    ..three()
                },
                "replication-factor",
                "--cluster-size is 3",
            ),
            (
                ClusterSettings {
                    contact_points: vec!["b0".into()],
                    ..three()
                },
                "contact-points",
                "host:port",
            ),
            (
                ClusterSettings {
                    contact_points: vec!["b0:x".into()],
                    ..three()
                },
                "contact-points",
                "not a port",
            ),
            (
                ClusterSettings {
                    internal_port: 0,
                    ..three()
                },
                "internal-port",
                "1 to 65535",
            ),
        ];
        for (settings, setting, reason) in cases {
            let error = settings.validate().expect_err(setting);
            assert_eq!(error.setting, setting, "{error}");
            assert!(error.to_string().contains(reason), "{error}");
            assert!(
                error.to_string().starts_with(&format!("--{setting}:")),
                "{error}"
            );
        }
    }

    #[test]
    fn any_replication_factor_up_to_the_cluster_size_runs() {
        // Zeebe refuses a factor above the cluster size only; the contact points need not
        // list every broker, nor in any order: the brokers learn each other's addresses.
        for replication_factor in 1..=3 {
            let settings = ClusterSettings {
                replication_factor,
                contact_points: split_contact_points("b2:26502"),
                ..three()
            };
            assert_eq!(settings.validate(), Ok(()), "factor {replication_factor}");
        }
        let lone = ClusterSettings {
            contact_points: Vec::new(),
            ..three()
        };
        assert_eq!(lone.validate(), Ok(()), "found by the others");
        assert_eq!(three().local_partitions(), vec![1, 2, 3]);
        // Round-robin: broker 1 of 3 holds partitions 2 and 5 of 6 without replication.
        let six = ClusterSettings {
            partitions: 6,
            replication_factor: 1,
            ..three()
        };
        assert_eq!(six.local_partitions(), vec![2, 5]);
    }

    #[test]
    fn five_brokers_with_three_replicas_each_place_as_zeebe_does() {
        // Partition p's replicas are brokers p - 1, p, p + 1 (mod 5), its first the primary.
        let settings = ClusterSettings {
            node_id: 0,
            cluster_size: 5,
            partitions: 5,
            replication_factor: 3,
            ..three()
        };
        let placement = settings.placement();
        let replicas: Vec<Vec<NodeId>> = placement
            .iter()
            .map(|p| p.replicas.iter().map(|r| r.node).collect())
            .collect();
        assert_eq!(
            replicas,
            vec![
                vec![0, 1, 2],
                vec![1, 2, 3],
                vec![2, 3, 4],
                vec![3, 4, 0],
                vec![4, 0, 1]
            ]
        );
        let held = |node| {
            ClusterSettings {
                node_id: node,
                ..settings.clone()
            }
            .local_partitions()
        };
        assert_eq!(held(0), vec![1, 4, 5]);
        assert_eq!(held(2), vec![1, 2, 3]);
        assert_eq!(held(4), vec![3, 4, 5]);
        // Every broker holds partitions × factor / brokers replicas.
        for node in 0..5 {
            assert_eq!(held(node).len(), 3, "broker {node}");
        }
    }

    #[test]
    fn contact_points_parse_like_zeebes() {
        assert_eq!(
            parse_contact_point("broker-0:26502"),
            Ok(("broker-0", 26502))
        );
        assert_eq!(parse_contact_point("[::1]:26502"), Ok(("::1", 26502)));
        assert!(parse_contact_point(":26502").is_err());
        assert!(parse_contact_point("host:0").is_err());
        assert_eq!(split_contact_points(" a:1,,b:2 "), vec!["a:1", "b:2"]);
    }
}
