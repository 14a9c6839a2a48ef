//! Rebalancing, as Zeebe's `POST /actuator/rebalance`: each partition's leadership handed back
//! to its primary (the replica of highest priority in the placement), where another broker
//! leads it. Priority election puts leaders there when the cluster starts; after failovers
//! they stay wherever the elections put them until this is asked for.
//!
//! The hand-over is openraft's leader transfer: the leader sends every other replica a
//! `TransferLeader` naming the primary; the primary stands for election as soon as it holds
//! the leader's log, the others vote for it inside the leader's lease, and the old leader's
//! term ends as any term does (its processor steps down; commands it wrote and did not answer
//! get DEADLINE_EXCEEDED, those not written UNAVAILABLE). Best effort, as in Zeebe: a primary
//! that cannot lead (behind, or out of elections after losing its disk) leaves the partition
//! to an ordinary election after the lease.

use std::time::Duration;

use openraft::ServerState;
use openraft::type_config::async_runtime::watch::WatchReceiver;

use crate::membership::{HEARD_WITHIN, Membership};
use crate::transport::Groups;
use crate::transport::proto;
use crate::transport::proto::internal_client::InternalClient;

/// How long a broker asked to rebalance is waited for.
const ASK_WITHIN: Duration = Duration::from_secs(5);

/// Hands each partition this broker leads to its primary, where that is another broker heard
/// from lately (a transfer to a broker out of reach would leave the partition leaderless
/// until an election). Returns the partitions handed over.
pub async fn hand_to_primaries(groups: &Groups, membership: &Membership) -> Vec<u32> {
    let me = membership.local_id();
    let mut handed = Vec::new();
    for (partition, raft) in groups.all() {
        let Some(primary) = membership.primary(partition) else {
            continue;
        };
        if primary == me {
            continue;
        }
        let leads = {
            let metrics = raft.metrics();
            let metrics = metrics.borrow_watched();
            metrics.state == ServerState::Leader && metrics.current_leader == Some(me)
        };
        let in_reach = membership
            .peers()
            .silence(primary)
            .is_some_and(|silence| silence <= HEARD_WITHIN);
        if !leads || !in_reach {
            continue;
        }
        match raft.trigger().transfer_leader(primary).await {
            Ok(()) => {
                tracing::info!(
                    partition,
                    to = primary,
                    "rebalancing: leadership handed to the partition's primary"
                );
                handed.push(partition);
            }
            Err(error) => {
                tracing::warn!(partition, to = primary, %error, "rebalancing: the hand-over could not start");
            }
        }
    }
    handed
}

/// Rebalances the whole cluster: this broker's partitions, and every other live broker asked
/// to do the same with its own (each only knows what it leads). Returns the partitions this
/// broker handed over.
pub async fn rebalance(groups: &Groups, membership: &Membership) -> Vec<u32> {
    let asks = membership.alive_members().into_iter().filter_map(|node| {
        let channel = membership.channel(node)?;
        Some(async move {
            let mut client = InternalClient::new(channel);
            let mut request = tonic::Request::new(proto::Empty {});
            request.set_timeout(ASK_WITHIN);
            if let Err(status) = client.rebalance(request).await {
                tracing::info!(node, error = %status.message(), "rebalancing: a broker could not be asked");
            }
        })
    });
    let (handed, _) = tokio::join!(
        hand_to_primaries(groups, membership),
        futures_util::future::join_all(asks)
    );
    handed
}
