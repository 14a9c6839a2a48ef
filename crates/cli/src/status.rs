//! `beeline status`: Topology, printed as zbctl prints it.

use std::time::Duration;

use beeline_gateway_protocol::proto::partition::{PartitionBrokerHealth, PartitionBrokerRole};
use beeline_gateway_protocol::proto::{Partition, TopologyRequest, TopologyResponse};
use serde_json::{Value, json};

use crate::connection::{Connection, Error};
use crate::output::Reply;

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub connection: Connection,
}

pub async fn run(args: StatusArgs) -> Result<Reply, Error> {
    let mut client = args.connection.connect().await?;
    let response = args
        .connection
        .call(TopologyRequest {}, Duration::ZERO, |r| client.topology(r))
        .await?;
    Ok(Reply {
        text: text(&response),
        json: to_json(&response),
    })
}

fn text(response: &TopologyResponse) -> String {
    let mut text = format!(
        "Cluster size: {}\nPartitions count: {}\nReplication factor: {}\nGateway version: {}\n\
         Brokers:\n",
        response.cluster_size,
        response.partitions_count,
        response.replication_factor,
        response.gateway_version
    );
    let mut brokers: Vec<_> = response.brokers.iter().collect();
    brokers.sort_by_key(|broker| broker.node_id);
    for broker in brokers {
        text.push_str(&format!(
            "  Broker {} - {}:{}\n    Version: {}\n",
            broker.node_id, broker.host, broker.port, broker.version
        ));
        let mut partitions: Vec<_> = broker.partitions.iter().collect();
        partitions.sort_by_key(|partition| partition.partition_id);
        for partition in partitions {
            let (role, health) = names(partition);
            text.push_str(&format!(
                "    Partition {} : {}, {}\n",
                partition.partition_id,
                capitalized(role),
                capitalized(health)
            ));
        }
    }
    text
}

/// The role's and the health's names as the proto spells them; a number the proto does not
/// know stays a number.
fn names(partition: &Partition) -> (Value, Value) {
    let role = PartitionBrokerRole::try_from(partition.role)
        .map(|role| Value::from(role.as_str_name()))
        .unwrap_or_else(|_| Value::from(partition.role));
    let health = PartitionBrokerHealth::try_from(partition.health)
        .map(|health| Value::from(health.as_str_name()))
        .unwrap_or_else(|_| Value::from(partition.health));
    (role, health)
}

/// `LEADER` as zbctl prints it: `Leader`.
fn capitalized(name: Value) -> String {
    let lower = match name {
        Value::String(name) => name.to_lowercase(),
        other => other.to_string(),
    };
    let mut chars = lower.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => lower,
    }
}

fn to_json(response: &TopologyResponse) -> Value {
    let brokers: Vec<Value> = response
        .brokers
        .iter()
        .map(|broker| {
            let partitions: Vec<Value> = broker
                .partitions
                .iter()
                .map(|partition| {
                    let (role, health) = names(partition);
                    json!({
                        "partitionId": partition.partition_id,
                        "role": role,
                        "health": health,
                    })
                })
                .collect();
            json!({
                "nodeId": broker.node_id,
                "host": broker.host,
                "port": broker.port,
                "partitions": partitions,
                "version": broker.version,
            })
        })
        .collect();
    json!({
        "brokers": brokers,
        "clusterSize": response.cluster_size,
        "partitionsCount": response.partitions_count,
        "replicationFactor": response.replication_factor,
        "gatewayVersion": response.gateway_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_gateway_protocol::proto::BrokerInfo;

    fn response() -> TopologyResponse {
        let partition = |id, role: PartitionBrokerRole| Partition {
            partition_id: id,
            role: role as i32,
            health: PartitionBrokerHealth::Healthy as i32,
        };
        TopologyResponse {
            brokers: vec![BrokerInfo {
                node_id: 0,
                host: "127.0.0.1".into(),
                port: 26501,
                partitions: vec![
                    partition(2, PartitionBrokerRole::Follower),
                    partition(1, PartitionBrokerRole::Leader),
                ],
                version: "8.8.0".into(),
            }],
            cluster_size: 1,
            partitions_count: 2,
            replication_factor: 1,
            gateway_version: "8.8.0".into(),
        }
    }

    #[test]
    fn a_person_reads_zbctls_layout() {
        assert_eq!(
            text(&response()),
            "Cluster size: 1\nPartitions count: 2\nReplication factor: 1\nGateway version: 8.8.0\n\
             Brokers:\n  Broker 0 - 127.0.0.1:26501\n    Version: 8.8.0\n\
             \x20   Partition 1 : Leader, Healthy\n    Partition 2 : Follower, Healthy\n"
        );
    }

    #[test]
    fn a_script_reads_enums_by_name() {
        let json = to_json(&response());
        assert_eq!(json["partitionsCount"], 2);
        assert_eq!(json["brokers"][0]["partitions"][1]["role"], "LEADER");
        assert_eq!(json["brokers"][0]["partitions"][1]["health"], "HEALTHY");
        let mut odd = response();
        odd.brokers[0].partitions[0].role = 7;
        assert_eq!(
            to_json(&odd)["brokers"][0]["partitions"][0]["role"],
            7,
            "an unknown role stays a number"
        );
    }
}
