//! The partition as the rest of the node sees it: send commands, wait for answers.

use std::sync::Arc;

use beeline_protocol::Record;
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::error::PartitionError;
use crate::exporters::ExporterPositions;
use crate::handback::Undelivered;
use crate::metrics::PartitionMetrics;
use crate::reader::LogStreamReader;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionStatus {
    Healthy,
    /// Stopped by an error it cannot process past (a failed write, unreadable state).
    Failed(String),
    Stopped,
}

pub(crate) struct CommandRequest {
    pub command: Record,
    pub respond: oneshot::Sender<Result<Record, PartitionError>>,
}

pub(crate) enum Control {
    Snapshot(oneshot::Sender<Result<Option<i64>, String>>),
    RunScheduler(oneshot::Sender<()>),
    Sync(oneshot::Sender<Result<(), String>>),
    Reader(oneshot::Sender<LogStreamReader>),
    Shutdown(oneshot::Sender<()>),
    Halt(oneshot::Sender<()>),
    /// A replica's leadership ended: stop processing (see `crate::replica`).
    StepDown(String),
    /// Activated jobs their workers never got, to yield (see `crate::handback`).
    HandBack(Vec<Undelivered>),
    /// Side effects of what is committed from now on wait while true: a test's fault, as a
    /// leader whose quorum's acknowledgements are lost commits without learning it.
    HoldSideEffects(bool),
}

#[derive(Clone)]
pub struct PartitionHandle {
    pub(crate) partition_id: u16,
    pub(crate) commands: mpsc::Sender<CommandRequest>,
    pub(crate) control: mpsc::Sender<Control>,
    pub(crate) status: watch::Receiver<PartitionStatus>,
    pub(crate) metrics: Arc<PartitionMetrics>,
    pub(crate) jobs_available: broadcast::Sender<String>,
    pub(crate) exporters: Arc<ExporterPositions>,
    pub(crate) role: watch::Receiver<crate::role::RoleState>,
    /// A replica of a replicated partition (see `crate::replica`).
    pub(crate) replicated: bool,
    /// The node's processing watermark, when it watches its disk.
    pub(crate) disk: Option<Arc<crate::disk::DiskSpace>>,
}

impl PartitionHandle {
    /// Whether the node's free disk space is below the processing watermark: the partition
    /// refuses new commands, and reports itself unhealthy (as Zeebe's partitions do when out
    /// of disk space) until space is back.
    pub fn short_of_disk(&self) -> bool {
        self.disk.as_ref().is_some_and(|disk| disk.is_short())
    }

    /// Changes of [`short_of_disk`](Self::short_of_disk), when the node watches its disk.
    pub fn disk_changes(&self) -> Option<watch::Receiver<bool>> {
        self.disk.as_ref().map(|disk| disk.subscribe())
    }

    pub fn partition_id(&self) -> u16 {
        self.partition_id
    }

    pub fn status(&self) -> PartitionStatus {
        self.status.borrow().clone()
    }

    pub fn metrics(&self) -> &PartitionMetrics {
        &self.metrics
    }

    /// The partition's metrics, for whoever reports them beside its own.
    pub fn metrics_arc(&self) -> Arc<PartitionMetrics> {
        self.metrics.clone()
    }

    /// The acknowledged positions of the partition's configured exporters.
    pub fn exporter_positions(&self) -> &Arc<ExporterPositions> {
        &self.exporters
    }

    /// Job types that became activatable, announced once the event that made them so is
    /// committed. A hint for long-polling and streaming workers: a lagging receiver misses
    /// announcements (`RecvError::Lagged`) and should simply look again.
    pub fn job_notifications(&self) -> broadcast::Receiver<String> {
        self.jobs_available.subscribe()
    }

    fn unavailable(&self) -> PartitionError {
        let reason = match self.status() {
            PartitionStatus::Failed(reason) => reason,
            PartitionStatus::Stopped => "stopped".into(),
            PartitionStatus::Healthy => "not answering".into(),
        };
        PartitionError::Unavailable {
            partition: self.partition_id,
            reason,
        }
    }

    /// Writes `command` to the log and waits for its answer: the event that resulted, or the
    /// rejection. The answer comes only once the result is committed.
    pub async fn execute(&self, command: Record) -> Result<Record, PartitionError> {
        let answer = self.submit(command)?;
        answer.await.unwrap_or_else(|_| Err(self.unavailable()))
    }

    /// Queues `command` now (commands submitted one after the other are written in that
    /// order) and returns where its answer will come; refused when the queue is full.
    pub fn submit(
        &self,
        command: Record,
    ) -> Result<oneshot::Receiver<Result<Record, PartitionError>>, PartitionError> {
        if self.replicated {
            let role = *self.role.borrow();
            if role.role != crate::role::Role::Leader {
                // Refused before anything is written: the gateway looks for the leader.
                return Err(PartitionError::NotLeader {
                    partition: self.partition_id,
                    leader: role.leader,
                });
            }
        }
        let (respond, answer) = oneshot::channel();
        match self.commands.try_send(CommandRequest { command, respond }) {
            Ok(()) => Ok(answer),
            Err(mpsc::error::TrySendError::Full(_)) => {
                PartitionMetrics::add(&self.metrics.rejected_overload, 1);
                Err(PartitionError::ResourceExhausted(self.partition_id))
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(self.unavailable()),
        }
    }

    async fn control<T>(
        &self,
        request: impl FnOnce(oneshot::Sender<T>) -> Control,
    ) -> Result<T, PartitionError> {
        let (tx, rx) = oneshot::channel();
        self.control
            .send(request(tx))
            .await
            .map_err(|_| self.unavailable())?;
        rx.await.map_err(|_| self.unavailable())
    }

    /// Takes a snapshot now; returns its position (`None` when nothing was processed yet).
    pub async fn snapshot(&self) -> Result<Option<i64>, PartitionError> {
        self.control(Control::Snapshot)
            .await?
            .map_err(|reason| PartitionError::Unavailable {
                partition: self.partition_id,
                reason,
            })
    }

    /// Runs the scheduler now, and sends again what other partitions did not confirm (tests
    /// with a controlled clock call this after moving it).
    pub async fn run_scheduler(&self) -> Result<(), PartitionError> {
        self.control(Control::RunScheduler).await
    }

    /// Waits until everything the partition has written so far is committed.
    pub async fn sync(&self) -> Result<(), PartitionError> {
        self.control(Control::Sync)
            .await?
            .map_err(|reason| PartitionError::Unavailable {
                partition: self.partition_id,
                reason,
            })
    }

    /// A reader over the committed records, from the oldest kept.
    pub async fn reader(&self) -> Result<LogStreamReader, PartitionError> {
        self.control(Control::Reader).await
    }

    /// Hands back jobs activated for a worker that never got them (a job stream that closed
    /// with them unread): the partition yields them, wherever it is led by then (see
    /// `crate::handback`).
    pub async fn hand_back(&self, jobs: Vec<Undelivered>) {
        if jobs.is_empty() {
            return;
        }
        if self.control.send(Control::HandBack(jobs)).await.is_err() {
            tracing::info!(
                partition = self.partition_id,
                "the partition is stopped; handed-back jobs wait for their time-out"
            );
        }
    }

    /// While `hold`, the answers, pushes and sends of batches committed from now on wait, as
    /// on a leader whose quorum's acknowledgements are lost (tests of what a leader that steps
    /// down leaves undone). Releasing runs them.
    pub async fn hold_side_effects(&self, hold: bool) {
        let _ = self.control.send(Control::HoldSideEffects(hold)).await;
    }

    /// Stops the partition after answering or failing what is in flight.
    pub async fn shutdown(&self) {
        let _ = self.control(Control::Shutdown).await;
    }

    /// Stops the partition as a crash would leave it: without the snapshot a clean stop
    /// takes, so the next open replays from the latest snapshot taken before (tests of
    /// recovery use it in place of killing the process).
    pub async fn halt(&self) {
        let _ = self.control(Control::Halt).await;
    }
}
