//! Sending a command to a partition: engine support, the in-flight limit, the answer and its
//! mapping to an event or a [`GatewayError`].

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use beeline_cluster::{Health, Membership, NodeId};
use beeline_engine::Engine;
use beeline_protocol::{Intent, Record, RecordType};
use beeline_stream::{JobStreams, PartitionError, PartitionHandle, PartitionStatus};
use tokio::sync::{broadcast, watch};
use tokio::time::Instant;
use tonic::transport::Channel;

use crate::backpressure::PartitionLimiter;
use crate::cluster::{Cluster, NodeInfo, PartitionSlot};
use crate::config::GatewayConfig;
use crate::error::GatewayError;
use crate::forwarding::ForwardingBudget;
use crate::metrics::RequestMetrics;
use crate::routing::RoundRobin;

pub(crate) struct Partition {
    pub slot: PartitionSlot,
    pub limiter: Arc<PartitionLimiter>,
}

/// Where a command for a partition goes now.
pub(crate) enum PartitionRoute<'a> {
    /// Led here.
    Local(&'a PartitionHandle),
    /// Led by another broker.
    Remote(NodeId, Channel),
    /// No leader is known (or it cannot take commands): why.
    NoLeader(GatewayError),
}

/// How long a request waits for news of a partition's leader before it looks again.
const LEADER_POLL: Duration = Duration::from_millis(100);

/// Everything an RPC needs: the partitions, their limiters, what the engine supports.
pub(crate) struct Dispatcher {
    pub node: NodeInfo,
    pub config: GatewayConfig,
    partitions: Vec<Partition>,
    supported: HashSet<Intent>,
    /// New process instances.
    pub new_instances: RoundRobin,
    /// Job activation.
    pub job_activation: RoundRobin,
    /// Job types with new activatable jobs (see `Gateway::jobs_available`).
    pub jobs_available: broadcast::Sender<String>,
    /// Where job streams register to have new jobs pushed to them.
    pub job_streams: Option<Arc<JobStreams>>,
    /// Becomes true when the gateway shuts down: waiting calls end.
    pub stopping: watch::Receiver<bool>,
    pub metrics: RequestMetrics,
    /// Secondary storage for the REST API's searches (`Cluster::search`).
    pub search: Option<Arc<dyn beeline_search::SearchStore>>,
    /// The other brokers, in a cluster (`Cluster::membership`).
    pub membership: Option<Arc<Membership>>,
    /// What the commands forwarded to them may hold.
    forwarding: ForwardingBudget,
    /// The calls that carry them.
    pipes: crate::remote::Pipes,
}

impl Dispatcher {
    pub fn new(
        cluster: Cluster,
        config: GatewayConfig,
        supported: HashSet<Intent>,
        stopping: watch::Receiver<bool>,
    ) -> Self {
        let partitions = cluster
            .partitions
            .into_iter()
            .enumerate()
            .map(|(index, slot)| Partition {
                limiter: Arc::new(PartitionLimiter::new(
                    index as u16 + 1,
                    &config.backpressure,
                )),
                slot,
            })
            .collect();
        Self {
            node: cluster.node,
            forwarding: ForwardingBudget::new(config.forwarding_memory),
            pipes: crate::remote::Pipes::default(),
            config,
            partitions,
            supported,
            new_instances: RoundRobin::default(),
            job_activation: RoundRobin::default(),
            jobs_available: broadcast::channel(1024).0,
            job_streams: cluster.job_streams,
            stopping,
            metrics: RequestMetrics::default(),
            search: cluster.search,
            membership: cluster.membership,
        }
    }

    /// What this build of the engine processes.
    pub fn engine_commands() -> HashSet<Intent> {
        Engine::supported_commands().into_iter().collect()
    }

    pub fn partition_count(&self) -> u16 {
        self.partitions.len() as u16
    }

    pub fn partitions(&self) -> impl Iterator<Item = (u16, &Partition)> {
        self.partitions
            .iter()
            .enumerate()
            .map(|(i, p)| (i as u16 + 1, p))
    }

    pub fn supports(&self, intent: impl Into<Intent>) -> bool {
        self.supported.contains(&intent.into())
    }

    /// UNIMPLEMENTED unless the engine processes `intent`; `what` completes "Beeline does not
    /// support ... yet".
    pub fn require(&self, intent: impl Into<Intent>, what: &str) -> Result<(), GatewayError> {
        let intent = intent.into();
        if self.supported.contains(&intent) {
            Ok(())
        } else {
            Err(GatewayError::unsupported(what, intent))
        }
    }

    pub fn is_stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Sends `command` to `partition` and returns the event that answered it; a rejection
    /// becomes [`GatewayError::Rejected`].
    pub async fn execute(&self, partition: u16, command: Record) -> Result<Record, GatewayError> {
        self.execute_within(partition, command, self.config.request_timeout)
            .await
    }

    fn partition(&self, partition_id: u16) -> Result<&Partition, GatewayError> {
        self.partitions
            .get(usize::from(partition_id).wrapping_sub(1))
            .ok_or_else(|| {
                GatewayError::NotFound(format!(
                    "Expected to send a command to partition {partition_id}, but this cluster has {} partitions",
                    self.partitions.len()
                ))
            })
    }

    /// Where a command for `partition_id` goes now: here when this broker leads it, else to
    /// the broker the topology names its leader.
    pub(crate) fn route(&self, partition_id: u16) -> Result<PartitionRoute<'_>, GatewayError> {
        self.route_with_hint(partition_id, None)
    }

    /// As [`route`](Self::route), but to `hint` (the leader a replica here named when it
    /// answered that it does not lead) while the topology has not caught up.
    fn route_with_hint(
        &self,
        partition_id: u16,
        hint: Option<NodeId>,
    ) -> Result<PartitionRoute<'_>, GatewayError> {
        let partition = self.partition(partition_id)?;
        let local = || match &partition.slot {
            PartitionSlot::Open(handle) => PartitionRoute::Local(handle),
            PartitionSlot::Unavailable(reason) => {
                PartitionRoute::NoLeader(GatewayError::Refused(PartitionError::Unavailable {
                    partition: partition_id,
                    reason: reason.clone(),
                }))
            }
            PartitionSlot::Elsewhere => {
                PartitionRoute::NoLeader(GatewayError::Refused(PartitionError::Unavailable {
                    partition: partition_id,
                    reason: "no broker leading it is known".into(),
                }))
            }
        };
        let Some(membership) = &self.membership else {
            return Ok(local());
        };
        // A leader gone quiet (its connection open, nothing heard for a while: cut off, or
        // hung) takes nothing: a command sent there would wait out the request's time and
        // end "maybe written". Certainly not written, the request looks again instead.
        let remote = |node: NodeId, channel: Channel| match membership.quiet(node) {
            Some(silence) => {
                PartitionRoute::NoLeader(GatewayError::Refused(PartitionError::Unavailable {
                    partition: partition_id,
                    reason: format!(
                        "its leader, broker {node}, has not been heard from for {} ms",
                        silence.as_millis()
                    ),
                }))
            }
            None => PartitionRoute::Remote(node, channel),
        };
        if let Some(node) = hint.filter(|node| *node != membership.local_id())
            && let Some(channel) = membership.channel(node)
        {
            return Ok(remote(node, channel));
        }
        Ok(match membership.leader(u32::from(partition_id)) {
            Some(leader) if leader.node != membership.local_id() => {
                match membership.channel(leader.node) {
                    Some(channel) => remote(leader.node, channel),
                    None => local(),
                }
            }
            // Led here, or no leader known: a replica here answers (or says it does not
            // lead).
            _ => local(),
        })
    }

    /// Whether `partition_id` has a healthy leader to take commands.
    pub(crate) fn has_healthy_leader(&self, partition_id: u16) -> bool {
        match self.route(partition_id) {
            Ok(PartitionRoute::Local(handle)) => {
                handle.status() == PartitionStatus::Healthy
                    && handle.role().role == beeline_stream::Role::Leader
            }
            Ok(PartitionRoute::Remote(..)) => self.membership.as_ref().is_some_and(|m| {
                m.leader(u32::from(partition_id))
                    .is_some_and(|leader| leader.health == Health::Healthy)
            }),
            _ => false,
        }
    }

    /// Sends `command` to the leader of `partition_id`, wherever it is; when the leader is
    /// unknown or moved, looks again as the topology changes, until `timeout`.
    pub async fn execute_within(
        &self,
        partition_id: u16,
        command: Record,
        timeout: Duration,
    ) -> Result<Record, GatewayError> {
        let mut command = command;
        // With multi-tenancy on, the engine treats what belongs to a tenant the caller may not
        // act for as not there (a job, an instance, an incident named by its key).
        if let Some(caller) = crate::tenancy::Caller::current() {
            command.authorized_tenants = Some(caller.tenants);
        }
        let deadline = Instant::now() + timeout;
        let mut changes = self.membership.as_ref().map(|m| m.changes());
        let mut hint = None;
        // A hint is followed once between two looks at the topology, so that two replicas
        // naming each other cannot keep a request bouncing.
        let mut followed = false;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let result = match self
                .execute_once(partition_id, &command, remaining, hint.take())
                .await
            {
                // The request's own time-out, whatever was left of it on the last attempt.
                Err(GatewayError::Timeout { partition, .. }) => Err(GatewayError::Timeout {
                    partition,
                    after: timeout,
                }),
                other => other,
            };
            match (&result, &mut changes) {
                (Err(error), Some(changes)) if error.is_leader_unknown() => {
                    let remaining = deadline.saturating_duration_since(Instant::now());
                    if remaining.is_zero() || self.is_stopping() {
                        return result;
                    }
                    if let Some(cut_off) = self.cut_off(partition_id) {
                        return Err(cut_off);
                    }
                    tracing::debug!(partition = partition_id, %error, "leader unknown; looking again");
                    // A replica that does not lead names the leader it knows of: try it at
                    // once, before the topology says so.
                    if let Err(GatewayError::Refused(PartitionError::NotLeader {
                        leader: Some(leader),
                        ..
                    })) = &result
                        && !followed
                        && self
                            .membership
                            .as_ref()
                            .is_some_and(|m| m.local_id() != *leader)
                    {
                        hint = Some(*leader);
                        followed = true;
                        continue;
                    }
                    followed = false;
                    let _ =
                        tokio::time::timeout(remaining.min(LEADER_POLL), changes.changed()).await;
                }
                _ => return result,
            }
        }
    }

    /// Why this broker cannot find or reach a leader of `partition_id` however long it
    /// waits, when it heard lately from none of the partition's other replicas (it is cut off
    /// from them, or they are all down): the request ends at once as certainly not written
    /// (UNAVAILABLE), so the client tries another broker.
    fn cut_off(&self, partition_id: u16) -> Option<GatewayError> {
        let membership = self.membership.as_ref()?;
        let reach = membership.replicas_heard(u32::from(partition_id));
        (reach.others > 0 && reach.heard == 0).then(|| {
            GatewayError::Refused(PartitionError::Unavailable {
                partition: partition_id,
                reason: format!(
                    "broker {} has heard from none of the {} other brokers holding it for {} ms: \
                     it cannot reach a leader from here; another broker may",
                    membership.local_id(),
                    reach.others,
                    beeline_cluster::HEARD_WITHIN.as_millis()
                ),
            })
        })
    }

    /// One attempt: to the leader the topology names now (or to `hint`).
    async fn execute_once(
        &self,
        partition_id: u16,
        command: &Record,
        timeout: Duration,
        hint: Option<NodeId>,
    ) -> Result<Record, GatewayError> {
        match self.route_with_hint(partition_id, hint)? {
            PartitionRoute::Local(handle) => {
                // A leader here that hears from too few of its replicas to commit anything
                // takes nothing new: it will step down (check-quorum), and what it wrote by
                // then would end "maybe written". Certainly not written, refused now.
                if handle.role().role == beeline_stream::Role::Leader
                    && let Some(membership) = &self.membership
                    && !membership.replicas_heard(u32::from(partition_id)).quorum()
                {
                    return Err(GatewayError::Refused(PartitionError::Unavailable {
                        partition: partition_id,
                        reason: format!(
                            "broker {} leads it but has heard from too few of its replicas \
                             within {} ms to commit anything",
                            membership.local_id(),
                            beeline_cluster::HEARD_WITHIN.as_millis()
                        ),
                    }));
                }
                self.execute_here(partition_id, command.clone(), timeout)
                    .await
            }
            PartitionRoute::Remote(node, channel) => {
                tracing::debug!(partition = partition_id, node, intent = %intent_name(command.intent), "forwarding command");
                let record = crate::remote::forward(
                    &self.pipes,
                    node,
                    channel,
                    partition_id,
                    command,
                    timeout,
                    &self.forwarding,
                )
                .await?;
                // The leader's answer: an event, or the rejection it is.
                answered(partition_id, command.intent, record)
            }
            PartitionRoute::NoLeader(error) => Err(error),
        }
    }

    /// Runs `command` on the replica of `partition_id` on this broker, under this broker's
    /// in-flight limit for it (also for commands other brokers forward here).
    pub async fn execute_here(
        &self,
        partition_id: u16,
        command: Record,
        timeout: Duration,
    ) -> Result<Record, GatewayError> {
        let partition = self.partition(partition_id)?;
        let handle = match &partition.slot {
            PartitionSlot::Open(handle) => handle,
            PartitionSlot::Unavailable(reason) => {
                return Err(GatewayError::Refused(PartitionError::Unavailable {
                    partition: partition_id,
                    reason: reason.clone(),
                }));
            }
            PartitionSlot::Elsewhere => {
                return Err(GatewayError::Refused(PartitionError::NotLeader {
                    partition: partition_id,
                    leader: None,
                }));
            }
        };
        let intent = command.intent;
        let permit = partition
            .limiter
            .try_acquire(intent)
            .map_err(GatewayError::Backpressure)?;
        tracing::debug!(partition = partition_id, intent = %intent_name(intent), "sending command");
        let answer = match handle.submit(command) {
            Ok(answer) => answer,
            // Not queued, so certainly not written: another partition may take it.
            Err(error) => {
                if matches!(error, PartitionError::ResourceExhausted(_)) {
                    permit.dropped();
                }
                return Err(GatewayError::Refused(error));
            }
        };
        match tokio::time::timeout(timeout, answer).await {
            Err(_) => Err(GatewayError::Timeout {
                partition: partition_id,
                after: timeout,
            }),
            // The partition stopped with the command queued: it may have been written, so
            // the caller hears DEADLINE_EXCEEDED, not UNAVAILABLE (which clients retry as
            // certainly not written).
            Ok(Err(_)) => Err(PartitionError::Interrupted {
                partition: partition_id,
                reason: match handle.status() {
                    PartitionStatus::Failed(reason) => reason,
                    _ => "stopped before answering".into(),
                },
            }
            .into()),
            // Not written: the replica here does not lead (any more).
            Ok(Ok(Err(error @ PartitionError::NotLeader { .. }))) => {
                Err(GatewayError::Refused(error))
            }
            Ok(Ok(Err(error))) => Err(error.into()),
            Ok(Ok(Ok(record))) => {
                permit.success();
                answered(partition_id, intent, record)
            }
        }
    }

    /// Sends a command that any partition may take (a new instance, an evaluation): to the
    /// next partition in turn that has a leader, and to the others while partitions shed it
    /// or refuse it unwritten.
    pub async fn execute_anywhere(
        &self,
        order: &RoundRobin,
        command: Record,
        timeout: Duration,
    ) -> Result<Record, GatewayError> {
        let mut command = command;
        // With multi-tenancy on, the engine treats what belongs to a tenant the caller may not
        // act for as not there (a job, an instance, an incident named by its key).
        if let Some(caller) = crate::tenancy::Caller::current() {
            command.authorized_tenants = Some(caller.tenants);
        }
        let deadline = Instant::now() + timeout;
        let mut exhausted = false;
        let mut last_error = None;
        for partition in order.order(self.partition_count()) {
            if !self.has_healthy_leader(partition) {
                continue;
            }
            let remaining = deadline.saturating_duration_since(Instant::now());
            match self
                .execute_once(partition, &command, remaining, None)
                .await
            {
                Err(error) if error.is_retriable_elsewhere() => {
                    exhausted |= error.is_resource_exhausted();
                    last_error = Some(error);
                }
                other => return other,
            }
        }
        Err(match last_error {
            _ if exhausted => GatewayError::AllPartitionsExhausted,
            Some(error) => error,
            None => GatewayError::Unavailable(
                "No partition of the cluster has a healthy leader; see the brokers' logs and \
                 /health"
                    .into(),
            ),
        })
    }

    /// The partition's state for the topology.
    pub fn partition_status(&self, partition: &Partition) -> Option<PartitionStatus> {
        partition.slot.handle().map(|h| h.status())
    }
}

/// The answer to a command: its event, or the rejection as [`GatewayError::Rejected`].
pub(crate) fn answered(
    partition_id: u16,
    intent: Intent,
    record: Record,
) -> Result<Record, GatewayError> {
    match record.record_type {
        RecordType::Event => Ok(record),
        RecordType::CommandRejection => Err(GatewayError::Rejected {
            intent: record.intent,
            rejection: record.rejection_type,
            reason: record.rejection_reason,
        }),
        RecordType::Command => Err(GatewayError::Internal(format!(
            "partition {partition_id} answered {} with a command",
            intent_name(intent)
        ))),
    }
}

pub(crate) fn intent_name(intent: Intent) -> String {
    format!("{} {}", intent.value_type().name(), intent.name())
}
