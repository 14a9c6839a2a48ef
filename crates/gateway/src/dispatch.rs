//! Sending a command to a partition: engine support, the in-flight limit, the answer and its
//! mapping to an event or a [`GatewayError`].

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use beeline_engine::Engine;
use beeline_protocol::{Intent, Record, RecordType};
use beeline_stream::{JobStreams, PartitionError, PartitionStatus};
use tokio::sync::{broadcast, watch};

use crate::backpressure::PartitionLimiter;
use crate::cluster::{Cluster, NodeInfo, PartitionSlot};
use crate::config::GatewayConfig;
use crate::error::GatewayError;
use crate::metrics::RequestMetrics;
use crate::routing::RoundRobin;

pub(crate) struct Partition {
    pub slot: PartitionSlot,
    pub limiter: Arc<PartitionLimiter>,
}

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

    pub async fn execute_within(
        &self,
        partition_id: u16,
        mut command: Record,
        timeout: Duration,
    ) -> Result<Record, GatewayError> {
        // With multi-tenancy on, the engine treats what belongs to a tenant the caller may not
        // act for as not there (a job, an instance, an incident named by its key).
        if let Some(caller) = crate::tenancy::Caller::current() {
            command.authorized_tenants = Some(caller.tenants);
        }
        let partition = self
            .partitions
            .get(usize::from(partition_id).wrapping_sub(1))
            .ok_or_else(|| {
                GatewayError::NotFound(format!(
                    "Expected to send a command to partition {partition_id}, but this cluster has {} partitions",
                    self.partitions.len()
                ))
            })?;
        let handle = match &partition.slot {
            PartitionSlot::Open(handle) => handle,
            PartitionSlot::Unavailable(reason) => {
                return Err(GatewayError::Refused(PartitionError::Unavailable {
                    partition: partition_id,
                    reason: reason.clone(),
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
            // The partition stopped with the command queued: it may have been written.
            Ok(Err(_)) => Err(PartitionError::Unavailable {
                partition: partition_id,
                reason: match handle.status() {
                    PartitionStatus::Failed(reason) => reason,
                    _ => "stopped before answering".into(),
                },
            }
            .into()),
            Ok(Ok(Err(error))) => Err(error.into()),
            Ok(Ok(Ok(record))) => {
                permit.success();
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
        }
    }

    /// Sends a command that any partition may take (a new instance, an evaluation): to the
    /// next partition in turn, and to the others while partitions shed it.
    pub async fn execute_anywhere(
        &self,
        order: &RoundRobin,
        command: Record,
        timeout: Duration,
    ) -> Result<Record, GatewayError> {
        let mut exhausted = false;
        let mut last_error = None;
        for partition in order.order(self.partition_count()) {
            let healthy = self
                .partitions
                .get(usize::from(partition) - 1)
                .is_some_and(|p| p.slot.is_healthy());
            if !healthy {
                continue;
            }
            match self
                .execute_within(partition, command.clone(), timeout)
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
                "No partition of this node is healthy; see the node's log and /health".into(),
            ),
        })
    }

    /// The partition's state for the topology.
    pub fn partition_status(&self, partition: &Partition) -> Option<PartitionStatus> {
        partition.slot.handle().map(|h| h.status())
    }
}

pub(crate) fn intent_name(intent: Intent) -> String {
    format!("{} {}", intent.value_type().name(), intent.name())
}
