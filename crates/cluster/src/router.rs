//! Commands between partitions across brokers: the [`CommandRouter`] of a broker in a cluster.
//!
//! A command for a partition this broker leads goes to the [`LocalRouter`] as on a single
//! node. One for a partition led elsewhere goes, in the order sent, onto that broker's queue;
//! one task per broker drains its queue in batches (`Route` on the internal port) and the
//! receiving broker hands each command to its partition in that order. Nothing is
//! acknowledged by the transport: a command lost on the way (no known leader, a full queue, a
//! broken connection, a broker that restarts) is sent again by its sender until the receiver
//! confirms it in a command of its own, and the receiver makes repeats harmless
//! (`docs/architecture.md`, "Between partitions").
//!
//! Jobs-available notices travel the same way: a broker tells every other live broker which
//! job types became activatable on its partitions, so long polls and job streams waiting on
//! another broker look again at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use beeline_protocol::Record;
use beeline_stream::{CommandRouter, LocalRouter, PartitionHandle};
use tokio::sync::{broadcast, mpsc};

use crate::membership::Membership;
use crate::records;
use crate::transport::proto;
use crate::transport::proto::internal_client::InternalClient;
use crate::types::NodeId;

/// Commands and notices waiting to go to one broker, at most.
const QUEUE: usize = 4096;
/// Most items in one `Route` call.
const BATCH: usize = 512;
/// How long one `Route` call may take.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

enum Outgoing {
    Command(proto::RoutedCommand),
    JobsAvailable(String),
}

/// Routes commands to partitions wherever they are led.
pub struct ClusterRouter {
    local: Arc<LocalRouter>,
    membership: Arc<Membership>,
    queues: Mutex<HashMap<NodeId, mpsc::Sender<Outgoing>>>,
    /// Job types that became activatable on other brokers' partitions.
    jobs_available: broadcast::Sender<String>,
}

impl ClusterRouter {
    pub fn new(local: Arc<LocalRouter>, membership: Arc<Membership>) -> Arc<Self> {
        Arc::new(Self {
            local,
            membership,
            queues: Mutex::new(HashMap::new()),
            jobs_available: broadcast::channel(1024).0,
        })
    }

    pub fn local(&self) -> &Arc<LocalRouter> {
        &self.local
    }

    /// Job types that became activatable on other brokers (an empty type: any).
    pub fn remote_jobs_available(&self) -> broadcast::Receiver<String> {
        self.jobs_available.subscribe()
    }

    /// Tells every other live broker that jobs of `job_type` became activatable here.
    pub fn announce_jobs(&self, job_type: &str) {
        for node in self.membership.alive_members() {
            self.enqueue(node, Outgoing::JobsAvailable(job_type.to_owned()));
        }
    }

    /// Tells the other brokers which job types became activatable on `partitions` (this
    /// broker's), and hands the notices of the others to `waiting` (the gateway's).
    pub fn exchange_job_notices(
        self: &Arc<Self>,
        partitions: impl IntoIterator<Item = PartitionHandle>,
        waiting: broadcast::Sender<String>,
    ) {
        for handle in partitions {
            let mut notices = handle.job_notifications();
            let router = self.clone();
            tokio::spawn(async move {
                loop {
                    match notices.recv().await {
                        Ok(job_type) => router.announce_jobs(&job_type),
                        Err(broadcast::error::RecvError::Lagged(_)) => router.announce_jobs(""),
                        Err(broadcast::error::RecvError::Closed) => return,
                    }
                }
            });
        }
        let mut remote = self.remote_jobs_available();
        tokio::spawn(async move {
            loop {
                match remote.recv().await {
                    Ok(job_type) => {
                        let _ = waiting.send(job_type);
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let _ = waiting.send(String::new());
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
    }

    /// Whether the replica here leads `partition` now (its own role watch, which the
    /// topology learns from a moment later).
    fn leads_here(&self, partition: u16) -> bool {
        self.local
            .partition(partition)
            .is_some_and(|handle| handle.role().role == beeline_stream::Role::Leader)
    }

    fn enqueue(&self, node: NodeId, item: Outgoing) {
        let mut queues = self.queues.lock().unwrap_or_else(|e| e.into_inner());
        let queue = queues.entry(node).or_insert_with(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(send_loop(self.membership.clone(), node, rx));
            tx
        });
        if queue.try_send(item).is_err() {
            tracing::debug!(
                node,
                "the queue to a broker is full; dropped (sent again later)"
            );
        }
    }

    /// The `Route` RPC's server side: each command to its partition here, in order.
    pub fn receive(&self, request: proto::RouteRequest) {
        for routed in request.commands {
            let Ok(partition) = u16::try_from(routed.partition_id) else {
                continue;
            };
            match records::decode(&routed.command, -1) {
                Ok(command) => self.local.route(partition, command),
                Err(error) => tracing::warn!(partition, %error, "dropped a routed command"),
            }
        }
        for job_type in request.jobs_available {
            let _ = self.jobs_available.send(job_type);
        }
    }
}

impl CommandRouter for ClusterRouter {
    fn route(&self, partition: u16, command: Record) {
        if self.leads_here(partition) {
            return self.local.route(partition, command);
        }
        match self.membership.leader(u32::from(partition)) {
            Some(leader) if leader.node != self.membership.local_id() => {
                let routed = proto::RoutedCommand {
                    partition_id: u32::from(partition),
                    command: records::encode(&command),
                };
                self.enqueue(leader.node, Outgoing::Command(routed));
            }
            _ => tracing::debug!(
                partition,
                "no known leader for a routed command; dropped (sent again later)"
            ),
        }
    }
}

/// Drains one broker's queue in batches, in order.
async fn send_loop(membership: Arc<Membership>, node: NodeId, mut queue: mpsc::Receiver<Outgoing>) {
    let mut items = Vec::with_capacity(BATCH);
    while queue.recv_many(&mut items, BATCH).await > 0 {
        let mut request = proto::RouteRequest::default();
        for item in items.drain(..) {
            match item {
                Outgoing::Command(routed) => request.commands.push(routed),
                Outgoing::JobsAvailable(job_type) => {
                    if !request.jobs_available.contains(&job_type) {
                        request.jobs_available.push(job_type);
                    }
                }
            }
        }
        let Some(channel) = membership.channel(node) else {
            tracing::debug!(
                node,
                "broker gone; routed commands dropped (sent again later)"
            );
            continue;
        };
        let mut call = tonic::Request::new(request);
        call.set_timeout(SEND_TIMEOUT);
        if let Err(status) = InternalClient::new(channel).route(call).await {
            tracing::debug!(node, %status, "routed commands not delivered (sent again later)");
        }
    }
}
