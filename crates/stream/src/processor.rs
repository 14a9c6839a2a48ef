//! The stream processor: one task per partition that writes commands, processes them in log
//! order, stores the results, and answers once the results are committed.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use beeline_engine::{Engine, ProcessingResult, Push, Response};
use beeline_log::{CommitIndex, FlushWait, Flusher, Journal, JournalReader};
use beeline_protocol::codec::{self, encode_batch};
use beeline_protocol::{Record, RejectionType};
use beeline_state::Store;
use beeline_state::snapshot::{Snapshot, SnapshotStore};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::clock::Clock;
use crate::config::{FlushPolicy, PartitionConfig};
use crate::error::PartitionError;
use crate::exporters::ExporterPositions;
use crate::handback::{Undelivered, yield_command};
use crate::handle::{CommandRequest, Control, PartitionStatus};
use crate::metrics::PartitionMetrics;
use crate::reader::LogStreamReader;
use crate::router::CommandRouter;

type Responder = oneshot::Sender<Result<Record, PartitionError>>;

/// Work that may only happen once the journal entry `index` is committed.
struct AfterCommit {
    index: u64,
    effect: SideEffect,
}

enum SideEffect {
    Respond(Responder, Result<Record, PartitionError>),
    Send(u16, Record),
    JobsAvailable(String),
    Push(Box<Push>),
    /// A replica's `Sync`: everything written before it is committed.
    Synced(oneshot::Sender<Result<(), String>>),
}

/// How long a leading replica that stops cleanly waits for the commit of its yields.
const STOP_YIELD_WAIT: Duration = Duration::from_secs(2);

pub(crate) struct StreamProcessor<J: Journal> {
    config: PartitionConfig,
    journal: J,
    store: Arc<dyn Store>,
    engine: Engine,
    snapshots: SnapshotStore,
    clock: Arc<dyn Clock>,
    metrics: Arc<PartitionMetrics>,
    status: watch::Sender<PartitionStatus>,
    /// Position the next written record gets.
    next_position: i64,
    /// Commands written but not processed yet, in log order.
    queue: VecDeque<Record>,
    /// Who waits for the answer to the command at a position.
    waiting: HashMap<i64, Responder>,
    /// Requests a later batch answers (creations with result), by command position.
    awaiting: HashMap<i64, Responder>,
    router: Option<Arc<dyn CommandRouter>>,
    jobs_available: broadcast::Sender<String>,
    after_commit: VecDeque<AfterCommit>,
    /// Journal index of the newest entry written.
    last_written: u64,
    /// The flush under way: a sync on a blocking thread, or a replica's wait for its group's
    /// commit on this task.
    flushing: Option<FlushWait>,
    /// Deleting the log segments the last snapshot made obsolete, off the loop: freeing
    /// gigabytes of files can take the file system a second.
    compacting: Option<JoinHandle<()>>,
    next_flush_at: Option<tokio::time::Instant>,
    commit: Arc<CommitIndex>,
    encode_buffer: Vec<u8>,
    /// When the scheduler next has work (`None`: nothing scheduled). Lowered by events that add
    /// due work; recomputed from state only after the scheduler ran.
    next_due: Option<i64>,
    next_due_stale: bool,
    /// A request that did not fit the last command entry; it opens the next one.
    held_back: Option<CommandRequest>,
    /// Activated jobs their workers never got (a stream closed before the push, or handed
    /// back): they are yielded (see `crate::handback`).
    unpushed: Vec<Undelivered>,
    /// While set, side effects of entries committed past this index wait (`Control::
    /// HoldSideEffects`): a leader that does not learn of its commits.
    effects_held_at: Option<u64>,
    /// Due commands the scheduler wrote, by (key, intent), with when.
    recently_scheduled: HashMap<(i64, beeline_protocol::Intent), i64>,
    /// When everything due was written recently (and is waiting out its retry delay), the
    /// scheduler does not run again before this time (ms), instead of spinning.
    scheduler_not_before: i64,
    /// The instant the partition's clock is pinned at (`CLOCK PIN`), read from state at the
    /// start and again after each batch that changes it: the partition's time while set.
    pinned: Option<i64>,
    /// What the exporters acknowledged: persisted before each snapshot, and the log is
    /// compacted no further than the lowest.
    exporters: Arc<ExporterPositions>,
    /// Changes of the disk watermark (`crate::disk`): while the disk is short of space, new
    /// commands are refused and the scheduler waits.
    disk_changes: Option<watch::Receiver<bool>>,
    /// A replica of a replicated partition, leading one term: its journal proposes to the
    /// group, and when it stops, its inbox goes back to the replica (see `crate::replica`).
    replica: bool,
    /// A replica's snapshot waits until everything written is committed (its state must not
    /// be ahead of the group's log); meanwhile no new commands are written.
    snapshot_wanted: bool,
    /// Bytes of log entries past the latest snapshot (replayed at the start, then appended):
    /// at `PartitionConfig::snapshot_log_limit` the partition snapshots, whatever the period.
    log_since_snapshot: u64,
}

/// How often commands distributed to other partitions and not yet acknowledged are sent again.
const REDISTRIBUTION_PERIOD: Duration = Duration::from_secs(10);

/// How long the scheduler waits before writing the same due command again.
const SCHEDULER_RETRY_MS: i64 = 1_000;

/// Why the loop stopped.
pub(crate) enum Stop {
    Requested(oneshot::Sender<()>),
    /// As a crash: no closing snapshot.
    Halted(oneshot::Sender<()>),
    /// A replica's leadership ended (asked by the replica, or a write or commit refused).
    SteppedDown(String),
    Failed(String),
    HandlesGone,
}

/// What a stopped replica's processor hands back: its inbox, and why it stopped.
pub(crate) struct Finished {
    pub commands: mpsc::Receiver<CommandRequest>,
    pub control: mpsc::Receiver<Control>,
    pub stop: Stop,
    /// Jobs activated for a push that never happened, and those owed a yield: the replica
    /// hands them back to the partition's leader (see `crate::handback`).
    pub undelivered: Vec<Undelivered>,
}

/// What recovery hands over to the processing loop.
pub(crate) struct Recovered<J> {
    pub config: PartitionConfig,
    pub journal: J,
    pub store: Arc<dyn Store>,
    pub engine: Engine,
    pub snapshots: SnapshotStore,
    pub clock: Arc<dyn Clock>,
    pub metrics: Arc<PartitionMetrics>,
    pub status: watch::Sender<PartitionStatus>,
    pub next_position: i64,
    pub unprocessed: VecDeque<Record>,
    pub router: Option<Arc<dyn CommandRouter>>,
    pub jobs_available: broadcast::Sender<String>,
    pub exporters: Arc<ExporterPositions>,
    pub replica: bool,
    /// Bytes of log entries past the state's snapshot (see `Replayer::bytes`).
    pub log_since_snapshot: u64,
    /// Jobs to yield at once (a replica's, handed back while it followed).
    pub undelivered: Vec<Undelivered>,
}

impl<J: Journal> StreamProcessor<J>
where
    J::Reader: 'static,
{
    pub fn new(recovered: Recovered<J>) -> Self {
        let commit = recovered.journal.commit_index();
        recovered.metrics.last_position.store(
            recovered.next_position - 1,
            std::sync::atomic::Ordering::Relaxed,
        );
        let disk_changes = recovered.config.disk.as_ref().map(|disk| disk.subscribe());
        Self {
            last_written: recovered.journal.last_index(),
            config: recovered.config,
            journal: recovered.journal,
            store: recovered.store,
            engine: recovered.engine,
            snapshots: recovered.snapshots,
            clock: recovered.clock,
            metrics: recovered.metrics,
            status: recovered.status,
            next_position: recovered.next_position,
            queue: recovered.unprocessed,
            waiting: HashMap::new(),
            awaiting: HashMap::new(),
            router: recovered.router,
            jobs_available: recovered.jobs_available,
            after_commit: VecDeque::new(),
            flushing: None,
            compacting: None,
            next_flush_at: None,
            commit,
            encode_buffer: Vec::new(),
            held_back: None,
            unpushed: recovered.undelivered,
            effects_held_at: None,
            next_due: None,
            next_due_stale: true,
            recently_scheduled: HashMap::new(),
            scheduler_not_before: i64::MIN,
            pinned: None,
            exporters: recovered.exporters,
            disk_changes,
            replica: recovered.replica,
            snapshot_wanted: false,
            log_since_snapshot: recovered.log_since_snapshot,
        }
    }

    /// The disk's free space is below the watermark: no new commands.
    fn disk_short(&self) -> bool {
        self.config
            .disk
            .as_ref()
            .is_some_and(|disk| disk.is_short())
    }

    /// The refusal of a command while the disk is short of space.
    fn disk_full(&self) -> PartitionError {
        let (free, min_free) = self
            .config
            .disk
            .as_ref()
            .map_or((0, 0), |disk| (disk.free(), disk.min_free()));
        PartitionError::DiskFull {
            partition: self.config.partition_id,
            free,
            min_free,
        }
    }

    /// The partition's time (ms since the epoch): the pinned instant, or the system clock's.
    fn now(&self) -> i64 {
        self.pinned.unwrap_or_else(|| self.clock.now_ms())
    }

    /// Reads the pinned clock from state again; the scheduler looks at its due work again.
    fn refresh_clock(&mut self) -> Result<(), String> {
        self.pinned = self
            .engine
            .pinned_clock(self.store.as_ref())
            .map_err(|e| format!("cannot read the pinned clock: {e}"))?;
        self.next_due_stale = true;
        self.scheduler_not_before = i64::MIN;
        Ok(())
    }

    /// Runs until stopped. A replica's processor hands its inbox back (and leaves answering
    /// a stop request to the replica); otherwise the inbox is closed and what waits in it is
    /// refused.
    pub async fn run(
        mut self,
        mut commands: mpsc::Receiver<CommandRequest>,
        mut control: mpsc::Receiver<Control>,
    ) -> Option<Finished> {
        // A replica's write or commit refused because its term is over fails the loop too;
        // the replica tells that from a real failure by its role.
        let stop = self.run_loop(&mut commands, &mut control).await;
        let reason = match &stop {
            Stop::Failed(reason) | Stop::SteppedDown(reason) => reason.clone(),
            _ => "stopped".to_string(),
        };
        match &stop {
            Stop::Failed(reason) if !self.replica => {
                tracing::error!(partition = self.config.partition_id, %reason, "partition failed")
            }
            Stop::SteppedDown(reason) => {
                tracing::info!(partition = self.config.partition_id, %reason, "stepped down")
            }
            _ => {}
        }
        // Answer what can be answered: flush once more so committed results get out. A
        // replica does not wait for the group here: what it wrote may still be committed by
        // the next leader, and its followers keep their own snapshots.
        if !self.replica && !matches!(stop, Stop::Failed(_)) {
            if let Some(flush) = self.flushing.take() {
                let _ = flush.await;
            }
            if let Ok(durable) = self.journal.flusher().flush() {
                self.commit_up_to(durable);
            }
        }
        if matches!(stop, Stop::Requested(_)) && self.replica {
            self.yield_before_stopping().await;
        }
        // A clean stop leaves a snapshot of everything processed, so the next start replays
        // nothing instead of the whole log since the last periodic snapshot.
        if matches!(stop, Stop::Requested(_))
            && !self.replica
            && self.config.snapshot_period.is_some()
            && let Err(reason) = self.snapshot_if_behind()
        {
            tracing::warn!(partition = self.config.partition_id, %reason, "snapshot at shutdown failed");
        }
        let partition = self.config.partition_id;
        let unavailable = || PartitionError::Unavailable {
            partition,
            reason: reason.clone(),
        };
        // A replica's written commands are in the group's log: a new leader may still commit
        // and process them.
        let written = || {
            if self.replica {
                PartitionError::Interrupted {
                    partition,
                    reason: reason.clone(),
                }
            } else {
                unavailable()
            }
        };
        // Pushes not made: their activations may still be committed by the next leader.
        let mut undelivered = std::mem::take(&mut self.unpushed);
        for pending in self.after_commit.drain(..) {
            match pending.effect {
                SideEffect::Respond(responder, _) => {
                    let _ = responder.send(Err(written()));
                }
                SideEffect::Push(push) => undelivered.push(Undelivered {
                    key: push.key,
                    deadline: push.job.deadline,
                    after: pending.index,
                }),
                _ => {}
            }
        }
        for (_, responder) in self.waiting.drain().chain(self.awaiting.drain()) {
            let _ = responder.send(Err(written()));
        }
        if self.replica {
            if let Some(request) = self.held_back.take() {
                let _ = request.respond.send(Err(PartitionError::NotLeader {
                    partition,
                    leader: None,
                }));
            }
            if let Some(compacting) = self.compacting.take() {
                let _ = compacting.await;
            }
            drop(self);
            return Some(Finished {
                commands,
                control,
                stop,
                undelivered,
            });
        }
        commands.close();
        if let Some(request) = self.held_back.take() {
            let _ = request.respond.send(Err(unavailable()));
        }
        while let Ok(request) = commands.try_recv() {
            let _ = request.respond.send(Err(unavailable()));
        }
        let _ = self.status.send(match &stop {
            Stop::Failed(reason) => PartitionStatus::Failed(reason.clone()),
            _ => PartitionStatus::Stopped,
        });
        // Release the journal and the store before saying so: whoever asked may reopen them
        // (and find no segment files still being deleted).
        if let Some(compacting) = self.compacting.take() {
            let _ = compacting.await;
        }
        drop(self);
        if let Stop::Requested(done) | Stop::Halted(done) = stop {
            let _ = done.send(());
        }
        None
    }

    async fn run_loop(
        &mut self,
        commands: &mut mpsc::Receiver<CommandRequest>,
        control: &mut mpsc::Receiver<Control>,
    ) -> Stop {
        if let Err(reason) = self.refresh_clock() {
            return Stop::Failed(reason);
        }
        // What was on its way to other partitions when the partition stopped may be lost:
        // send everything unconfirmed again now, not only after the usual delay.
        if let Err(reason) = self.resend(i64::MAX) {
            return Stop::Failed(reason);
        }
        let mut redistribution_timer = {
            let period = REDISTRIBUTION_PERIOD;
            let mut interval =
                tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            Some(interval)
        };
        let mut snapshot_timer = self.config.snapshot_timer();
        loop {
            if let Some(request) = self.held_back.take()
                && let Err(reason) = self.write_commands(request, commands)
            {
                return Stop::Failed(reason);
            }
            if let Err(reason) = self.yield_unpushed() {
                return Stop::Failed(reason);
            }
            if let Err(reason) = self.process_queue() {
                return Stop::Failed(reason);
            }
            // The turn's batches go on together (one round of replication for a replica).
            if let Err(e) = self.journal.submit() {
                return Stop::Failed(format!("cannot append to the log: {e}"));
            }
            self.maybe_start_flush();
            // A snapshot waits for the commit of what was written (commands wait meanwhile):
            // taken once that is committed, by a flush of ours or by the group without one.
            // A failure is only reported; commands are not held for it.
            if self.snapshot_wanted
                && self.flushing.is_none()
                && self.last_written <= self.commit.get()
            {
                self.snapshot_wanted = false;
                if let Err(reason) = self.take_snapshot() {
                    tracing::warn!(partition = self.config.partition_id, %reason, "snapshot failed");
                }
            }
            self.snapshot_if_log_outgrew_it();
            let scheduler_due = match self.scheduler_sleep() {
                Ok(due) => due,
                Err(reason) => return Stop::Failed(reason),
            };
            tokio::select! {
                biased;
                flushed = wait_flush(&mut self.flushing) => {
                    self.flushing = None;
                    match flushed {
                        Ok(durable) => self.commit_up_to(durable),
                        Err(reason) => return Stop::Failed(reason),
                    }
                }
                request = control.recv() => match request {
                    Some(Control::Shutdown(done)) => return Stop::Requested(done),
                    Some(Control::Halt(done)) => return Stop::Halted(done),
                    Some(Control::StepDown(reason)) => return Stop::SteppedDown(reason),
                    Some(request) => {
                        if let Err(reason) = self.handle_control(request) {
                            return Stop::Failed(reason);
                        }
                    }
                    None => return Stop::HandlesGone,
                },
                () = sleep_until(self.next_flush_at), if self.flushing.is_none() && self.next_flush_at.is_some() => {
                    self.next_flush_at = None;
                    self.start_flush();
                }
                () = sleep_for(scheduler_due) => {
                    if let Err(reason) = self.run_scheduler() {
                        return Stop::Failed(reason);
                    }
                }
                _ = tick(&mut redistribution_timer) => {
                    if let Err(reason) = self.redistribute() {
                        return Stop::Failed(reason);
                    }
                }
                short = disk_change(&mut self.disk_changes) => {
                    // Short of space: a snapshot now lets the log be compacted below it.
                    if short && let Err(reason) = self.snapshot_if_behind() {
                        tracing::warn!(partition = self.config.partition_id, %reason, "snapshot failed");
                    }
                }
                _ = tick(&mut snapshot_timer) => {
                    if let Err(reason) = self.take_snapshot() {
                        tracing::warn!(partition = self.config.partition_id, %reason, "snapshot failed");
                    }
                }
                request = commands.recv(), if !self.snapshot_wanted => match request {
                    Some(first) => {
                        if let Err(reason) = self.write_commands(first, commands) {
                            return Stop::Failed(reason);
                        }
                    }
                    None => return Stop::HandlesGone,
                },
            }
        }
    }

    fn handle_control(&mut self, request: Control) -> Result<(), String> {
        match request {
            Control::Snapshot(respond) => {
                let result = self.take_snapshot();
                let failed = result.as_ref().err().cloned();
                let _ = respond.send(result);
                // A failed snapshot leaves the partition usable; only report it.
                if let Some(reason) = failed {
                    tracing::warn!(partition = self.config.partition_id, %reason, "snapshot failed");
                }
                Ok(())
            }
            Control::RunScheduler(respond) => {
                self.run_scheduler()?;
                self.redistribute()?;
                self.process_queue()?;
                let _ = respond.send(());
                Ok(())
            }
            Control::Sync(respond) if self.replica => {
                self.after(self.last_written, SideEffect::Synced(respond));
                Ok(())
            }
            Control::Sync(respond) => {
                let result = self.commit_everything();
                let failure = result.clone().err();
                let _ = respond.send(result);
                failure.map_or(Ok(()), Err)
            }
            Control::Reader(respond) => {
                let reader =
                    LogStreamReader::new(Box::new(self.journal.reader()), self.commit.subscribe());
                let _ = respond.send(reader);
                Ok(())
            }
            // The loop stops on a shutdown, halt or step-down before it gets here.
            Control::Shutdown(done) | Control::Halt(done) => {
                let _ = done.send(());
                Ok(())
            }
            Control::StepDown(_) => Ok(()),
            Control::HandBack(jobs) => {
                self.unpushed.extend(jobs);
                Ok(())
            }
            Control::HoldSideEffects(hold) => {
                if hold {
                    self.effects_held_at.get_or_insert(self.commit.get());
                } else {
                    self.effects_held_at = None;
                    self.commit_up_to(self.commit.get());
                }
                Ok(())
            }
        }
    }

    /// Writes the first request and whatever else is already waiting, as one journal entry
    /// of at most the batch limits.
    fn write_commands(
        &mut self,
        first: CommandRequest,
        commands: &mut mpsc::Receiver<CommandRequest>,
    ) -> Result<(), String> {
        if self.disk_short() {
            let _ = first.respond.send(Err(self.disk_full()));
            return Ok(());
        }
        let now = self.now();
        let max = self.config.max_batch_bytes;
        let mut batch = Vec::new();
        let mut bytes = codec::BATCH_HEADER_LEN;
        let mut next = Some(first);
        while let Some(request) = next.take() {
            let size = codec::encoded_len(&request.command);
            if size + codec::BATCH_HEADER_LEN > max {
                let _ = request
                    .respond
                    .send(Err(PartitionError::CommandTooLarge { size, max }));
            } else if bytes + size > max {
                // Full: this one opens the next entry.
                self.held_back = Some(request);
                break;
            } else {
                bytes += size;
                batch.push(request);
            }
            if batch.len() < self.config.max_batch_records {
                next = commands.try_recv().ok();
            }
        }
        if batch.is_empty() {
            return Ok(());
        }
        let mut records = Vec::with_capacity(batch.len());
        let mut responders = Vec::with_capacity(batch.len());
        for request in batch {
            let mut command = request.command;
            command.timestamp = now;
            command.partition_id = self.config.partition_id;
            command.source_record_position = -1;
            command.processed = false;
            records.push(command);
            responders.push(request.respond);
        }
        match self.append(&mut records) {
            Ok(()) => {
                for (command, responder) in records.into_iter().zip(responders) {
                    self.waiting.insert(command.position, responder);
                    self.queue.push_back(command);
                }
                Ok(())
            }
            Err(reason) => {
                for responder in responders {
                    let _ = responder.send(Err(PartitionError::Unavailable {
                        partition: self.config.partition_id,
                        reason: reason.clone(),
                    }));
                }
                Err(reason)
            }
        }
    }

    /// Positions `records` and appends them as one journal entry.
    fn append(&mut self, records: &mut [Record]) -> Result<(), String> {
        self.encode(records);
        self.append_encoded(records)
    }

    /// Encodes `records` as one batch into the encode buffer; its length in bytes.
    fn encode(&mut self, records: &[Record]) -> usize {
        self.encode_buffer.clear();
        encode_batch(records.iter(), &mut self.encode_buffer);
        self.encode_buffer.len()
    }

    /// Positions `records` and appends the encode buffer, which holds them, as one journal
    /// entry (positions are not part of the encoding: they follow from the entry's first).
    fn append_encoded(&mut self, records: &mut [Record]) -> Result<(), String> {
        let first = self.next_position;
        for (i, record) in records.iter_mut().enumerate() {
            record.position = first + i as i64;
        }
        let index = self
            .journal
            .append(first as u64, &self.encode_buffer)
            .map_err(|e| format!("cannot append to the log: {e}"))?;
        self.next_position = first + records.len() as i64;
        self.last_written = index;
        self.log_since_snapshot += self.encode_buffer.len() as u64;
        self.metrics
            .last_position
            .store(self.next_position - 1, std::sync::atomic::Ordering::Relaxed);
        PartitionMetrics::add(&self.metrics.appends, 1);
        PartitionMetrics::add(&self.metrics.records_written, records.len() as u64);
        Ok(())
    }

    /// A leading replica that stops cleanly (its broker shuts down) yields the pushes it has
    /// not made (activations whose commit it has not seen) and the jobs handed back to it,
    /// and waits a moment for the yields' commit: its broker goes away, so no replica there
    /// would yield them to the next leader, and they would wait for their time-out.
    async fn yield_before_stopping(&mut self) {
        let partition = self.config.partition_id;
        for pending in std::mem::take(&mut self.after_commit) {
            match pending.effect {
                SideEffect::Push(push) => self.unpushed.push(Undelivered {
                    key: push.key,
                    deadline: push.job.deadline,
                    after: 0,
                }),
                effect => self.after_commit.push_back(AfterCommit {
                    index: pending.index,
                    effect,
                }),
            }
        }
        if self.unpushed.is_empty() {
            return;
        }
        let jobs = self.unpushed.len();
        if let Err(reason) = self.yield_unpushed().and_then(|()| self.process_queue()) {
            tracing::warn!(partition, %reason, "cannot yield pushes not made before stopping");
            return;
        }
        let written = self.last_written;
        let deadline = tokio::time::Instant::now() + STOP_YIELD_WAIT;
        while self.commit.get() < written {
            if self.flushing.is_none() {
                self.start_flush();
            }
            match tokio::time::timeout_at(deadline, wait_flush(&mut self.flushing)).await {
                Ok(Ok(durable)) => {
                    self.flushing = None;
                    self.commit_up_to(durable);
                }
                Ok(Err(reason)) => {
                    self.flushing = None;
                    tracing::info!(partition, %reason, "the yields of pushes not made may not be committed");
                    return;
                }
                Err(_) => {
                    tracing::info!(
                        partition,
                        jobs,
                        "the yields of pushes not made are not committed yet; stopping anyway"
                    );
                    return;
                }
            }
        }
        tracing::info!(partition, jobs, "stopping: yielded the pushes not made");
    }

    /// Writes a `JOB YIELD` for each activated job its worker never got (a stream that closed
    /// before the push, or handed back), so that the job is activatable again at once.
    fn yield_unpushed(&mut self) -> Result<(), String> {
        if self.unpushed.is_empty() {
            return Ok(());
        }
        let now = self.now();
        let partition = self.config.partition_id;
        let mut commands: Vec<Record> = self
            .unpushed
            .drain(..)
            .map(|job| yield_command(partition, &job, now))
            .collect();
        self.append(&mut commands)?;
        self.queue.extend(commands);
        Ok(())
    }

    /// Processes every queued command, each as one batch.
    fn process_queue(&mut self) -> Result<(), String> {
        while let Some(command) = self.queue.pop_front() {
            let started = Instant::now();
            let mut result = self
                .engine
                .process(self.store.as_ref(), &command)
                .map_err(|e| e.to_string())?;
            let mut clock_changed = false;
            if !result.records.is_empty() {
                self.encode_within_limit(&mut result, &command)?;
                self.append_encoded(&mut result.records)?;
                for record in &result.records {
                    if record.is_command() && !record.processed {
                        self.queue.push_back(record.clone());
                    } else if let Some(due) = self.engine.due_time_added_by(record) {
                        self.next_due = Some(self.next_due.map_or(due, |next| next.min(due)));
                    }
                    clock_changed |= Engine::changes_clock(record);
                }
            }
            self.store.write(result.writes).map_err(|e| {
                format!(
                    "cannot store the results of position {}: {e}",
                    command.position
                )
            })?;
            if clock_changed {
                self.refresh_clock()?;
            }
            let index = self.last_written;
            // Everything a batch causes goes out once it is committed, its sends before its
            // answer: whoever waits for the answer then finds the consequences on their way
            // (the routed-commands count never drops to zero while a chain goes on).
            for (partition, command) in std::mem::take(&mut result.sends) {
                self.after(index, SideEffect::Send(partition, command));
            }
            // Jobs pushed to a stream are not available to anyone else: nobody is woken for them.
            let pushed: Vec<i64> = result.pushes.iter().map(|push| push.key).collect();
            for push in std::mem::take(&mut result.pushes) {
                self.after(index, SideEffect::Push(Box::new(push)));
            }
            if let Some(responder) = self.waiting.remove(&command.position) {
                match result.response {
                    Some(Response::Written(at)) if at < result.records.len() => {
                        let answer = result.records[at].clone();
                        self.after(index, SideEffect::Respond(responder, Ok(answer)));
                    }
                    Some(Response::Later) => {
                        self.awaiting.insert(command.position, responder);
                    }
                    _ => {
                        let no_answer = PartitionError::Unavailable {
                            partition: self.config.partition_id,
                            reason: format!(
                                "command at position {} produced no answer",
                                command.position
                            ),
                        };
                        self.after(index, SideEffect::Respond(responder, Err(no_answer)));
                    }
                }
            }
            for (request, answer) in std::mem::take(&mut result.answers) {
                if let Some(responder) = self.awaiting.remove(&request) {
                    self.after(index, SideEffect::Respond(responder, Ok(answer)));
                }
            }
            let mut job_types: Vec<&str> = result
                .records
                .iter()
                .filter(|r| !pushed.contains(&r.key))
                .filter_map(|r| self.engine.activatable_job_type(r))
                .collect();
            job_types.sort_unstable();
            job_types.dedup();
            let job_types: Vec<String> = job_types.into_iter().map(str::to_string).collect();
            for job_type in job_types {
                self.after(index, SideEffect::JobsAvailable(job_type));
            }
            PartitionMetrics::add(&self.metrics.commands_processed, 1);
            PartitionMetrics::add(
                &self.metrics.processing_micros,
                started.elapsed().as_micros() as u64,
            );
        }
        Ok(())
    }

    /// Encodes a result into the encode buffer, replacing one too large for one log entry by
    /// a rejection of its command.
    fn encode_within_limit(
        &mut self,
        result: &mut ProcessingResult,
        command: &Record,
    ) -> Result<(), String> {
        let bytes = self.encode(&result.records);
        if bytes <= self.config.max_batch_bytes {
            return Ok(());
        }
        let reason = format!(
            "Expected to process command {} {} but its results take {} bytes, more than the \
             maximum batch size of {} bytes",
            command.value_type().name(),
            command.intent.name(),
            bytes,
            self.config.max_batch_bytes
        );
        // A client's command is refused and the client told; a command from inside (a
        // follow-up, the scheduler's, another partition's) would leave its instance waiting
        // for a step that never comes, so the instance is banned, as Zeebe does.
        let store = self.store.as_ref();
        let exceeded = RejectionType::ExceededBatchRecordSize;
        *result = if self.waiting.contains_key(&command.position) {
            self.engine.reject(store, command, exceeded, reason)
        } else {
            self.engine.reject_and_ban(store, command, exceeded, reason)
        }
        .map_err(|e| e.to_string())?;
        if self.encode(&result.records) > self.config.max_batch_bytes {
            // The rejection carries the command's value back, and with its reason it can be
            // larger than the command, which only just fit: it goes without the value.
            for record in &mut result.records {
                if !record.is_event() {
                    record.value = record.value.emptied();
                }
            }
            self.encode(&result.records);
        }
        Ok(())
    }

    fn maybe_start_flush(&mut self) {
        if self.flushing.is_some() {
            return;
        }
        if self.last_written <= self.commit.get() {
            // A replica's commit index moves with its group, not only through this
            // processor's flushes: the group may have committed everything written while no
            // flush ran (after the last one returned short of the end). What waited for that
            // commit runs now; no flush would come to run it.
            self.commit_up_to(self.commit.get());
            return;
        }
        match self.config.flush {
            FlushPolicy::Immediate => self.start_flush(),
            FlushPolicy::Delayed(delay) => {
                if self.next_flush_at.is_none() {
                    self.next_flush_at = Some(tokio::time::Instant::now() + delay);
                }
            }
            FlushPolicy::None => self.commit_up_to(self.last_written),
        }
    }

    fn start_flush(&mut self) {
        let flusher = self.journal.flusher();
        let metrics = self.metrics.clone();
        PartitionMetrics::add(&self.metrics.flushes, 1);
        let started = Instant::now();
        let flush: FlushWait = match flusher.wait() {
            Some(wait) => wait,
            None => {
                let sync = tokio::task::spawn_blocking(move || flusher.flush());
                Box::pin(async move {
                    sync.await.unwrap_or_else(|e| {
                        Err(beeline_log::Error::Failed(format!(
                            "log sync task failed: {e}"
                        )))
                    })
                })
            }
        };
        self.flushing = Some(Box::pin(async move {
            let flushed = flush.await;
            metrics.flush_latency.observe(started.elapsed());
            flushed
        }));
    }

    /// Runs `effect` once the journal entry at `index` is committed (at once when it is:
    /// a batch that wrote nothing leaves `index` at an entry committed before).
    fn after(&mut self, index: u64, effect: SideEffect) {
        self.after_commit.push_back(AfterCommit { index, effect });
        if index <= self.commit.get() {
            self.commit_up_to(index);
        }
    }

    /// Advances the commit index and runs what waited for it.
    fn commit_up_to(&mut self, durable: u64) {
        self.commit.advance(durable);
        let committed = self
            .commit
            .get()
            .min(self.effects_held_at.unwrap_or(u64::MAX));
        while self
            .after_commit
            .front()
            .is_some_and(|pending| pending.index <= committed)
        {
            let Some(pending) = self.after_commit.pop_front() else {
                break;
            };
            match pending.effect {
                SideEffect::Respond(responder, answer) => {
                    let _ = responder.send(answer);
                }
                SideEffect::Send(partition, command) => self.route(partition, command),
                SideEffect::JobsAvailable(job_type) => {
                    // Nobody listening is fine: workers poll as well.
                    let _ = self.jobs_available.send(job_type);
                }
                SideEffect::Synced(respond) => {
                    let _ = respond.send(Ok(()));
                }
                SideEffect::Push(push) => {
                    let Push { slot, key, job } = *push;
                    let deadline = job.deadline;
                    if slot.push(key, job) {
                        PartitionMetrics::add(&self.metrics.jobs_pushed, 1);
                    } else {
                        self.unpushed.push(Undelivered {
                            key,
                            deadline,
                            after: 0,
                        });
                    }
                }
            }
        }
    }

    fn route(&self, partition: u16, command: Record) {
        match &self.router {
            Some(router) => router.route(partition, command),
            None => tracing::warn!(
                partition = self.config.partition_id,
                target = partition,
                "no router to other partitions; command dropped (sent again later)"
            ),
        }
    }

    /// Sends what other partitions did not confirm for a while once more.
    fn redistribute(&mut self) -> Result<(), String> {
        // Unconfirmed sends wait by the wall clock: a pinned clock must not hold them back.
        self.resend(self.clock.now_ms())
    }

    /// Sends what other partitions did not confirm by `now` (minus the engine's delay).
    fn resend(&mut self, now: i64) -> Result<(), String> {
        let pending = self
            .engine
            .pending_sends(self.store.as_ref(), now)
            .map_err(|e| e.to_string())?;
        for (partition, command) in pending {
            self.route(partition, command);
        }
        Ok(())
    }

    /// Syncs and commits everything written so far, right now.
    fn commit_everything(&mut self) -> Result<(), String> {
        if self.last_written > self.commit.get() {
            let durable = self
                .journal
                .flusher()
                .flush()
                .map_err(|e| format!("cannot sync the log: {e}"))?;
            self.commit_up_to(durable);
        }
        Ok(())
    }

    /// How long until the scheduler has work (`None`: nothing scheduled).
    fn scheduler_sleep(&mut self) -> Result<Option<Duration>, String> {
        // Due work waits for disk space; the watermark's change wakes the loop.
        if self.disk_short() {
            return Ok(None);
        }
        if self.next_due_stale {
            self.next_due = self
                .engine
                .next_due_time(self.store.as_ref())
                .map_err(|e| e.to_string())?;
            self.next_due_stale = false;
        }
        let now = self.now();
        Ok(self.next_due.and_then(|at| {
            let at = at.max(self.scheduler_not_before);
            // A pinned clock stands still: what is due later waits for the clock to move.
            if self.pinned.is_some() && at > now {
                return None;
            }
            Some(Duration::from_millis((at - now).max(0) as u64))
        }))
    }

    /// Writes the commands that are due now; they are processed with the queue.
    fn run_scheduler(&mut self) -> Result<(), String> {
        let now = self.now();
        // Once what is due now is processed, the next due time comes from state again.
        self.next_due_stale = true;
        // A due command written recently is not written again until the retry delay passed:
        // its processing may have failed (a timer whose element cannot take it yet), and the
        // scheduler must neither spin on it nor let it hide what is due after it.
        self.recently_scheduled
            .retain(|_, written_at| now - *written_at < SCHEDULER_RETRY_MS);
        let mut due = self
            .engine
            .due_commands(
                self.store.as_ref(),
                now,
                self.config.scheduler_batch + self.recently_scheduled.len(),
            )
            .map_err(|e| e.to_string())?;
        let found = due.len();
        due.retain(|command| {
            !self
                .recently_scheduled
                .contains_key(&(command.key, command.intent))
        });
        due.truncate(self.config.scheduler_batch);
        if due.is_empty() {
            if found > 0 {
                let first_retry = self.recently_scheduled.values().min().copied();
                self.scheduler_not_before =
                    first_retry.map_or(now, |written_at| written_at + SCHEDULER_RETRY_MS);
            }
            return Ok(());
        }
        self.scheduler_not_before = i64::MIN;
        for command in &mut due {
            command.timestamp = now;
            command.partition_id = self.config.partition_id;
        }
        self.append(&mut due)?;
        for command in &due {
            self.recently_scheduled
                .insert((command.key, command.intent), now);
        }
        self.queue.extend(due);
        Ok(())
    }

    /// A snapshot once the log written since the latest one reaches
    /// `PartitionConfig::snapshot_log_limit`, so that the log is compacted by its size, not
    /// only by the period. A failed one is tried again only after as much log again.
    fn snapshot_if_log_outgrew_it(&mut self) {
        let Some(limit) = self.config.snapshot_log_limit() else {
            return;
        };
        if self.log_since_snapshot < limit || self.snapshot_wanted {
            return;
        }
        tracing::debug!(
            partition = self.config.partition_id,
            bytes = self.log_since_snapshot,
            "the log since the latest snapshot reached its size limit"
        );
        self.log_since_snapshot = 0;
        if let Err(reason) = self.take_snapshot() {
            tracing::warn!(partition = self.config.partition_id, %reason, "snapshot failed");
        }
    }

    /// [`take_snapshot`](Self::take_snapshot), unless the latest snapshot already holds
    /// everything processed.
    fn snapshot_if_behind(&mut self) -> Result<Option<i64>, String> {
        let position = self
            .engine
            .last_processed_position(self.store.as_ref())
            .map_err(|e| e.to_string())?;
        let latest = self.snapshots.latest().map_err(|e| e.to_string())?;
        if latest.is_some_and(|s| s.position >= position) {
            return Ok(None);
        }
        self.take_snapshot()
    }

    /// Lets the log go below `index`; its files are deleted in the background, one compaction
    /// at a time (while one runs, the next snapshot compacts what this one would have).
    fn compact(&mut self, index: u64) -> Result<(), String> {
        if self.compacting.as_ref().is_some_and(|c| !c.is_finished()) {
            tracing::debug!(
                partition = self.config.partition_id,
                "the last log compaction still runs; compacting at the next snapshot"
            );
            return Ok(());
        }
        let compaction = self
            .journal
            .compact(index)
            .map_err(|e| format!("cannot compact the log: {e}"))?;
        if compaction.is_empty() {
            return Ok(());
        }
        let partition = self.config.partition_id;
        self.compacting = Some(tokio::task::spawn_blocking(move || {
            tracing::debug!(partition, "deleting compacted log segments");
            if let Err(error) = compaction.finish() {
                // The segments stay on disk, readable and only taking space, until the journal
                // is opened again: it finds them, and the next compaction deletes them.
                tracing::warn!(partition, %error, "cannot delete compacted log segments");
            }
        }));
        Ok(())
    }

    /// Snapshots the state once everything it reflects is committed; compacts the log below.
    fn take_snapshot(&mut self) -> Result<Option<i64>, String> {
        let position = self
            .engine
            .last_processed_position(self.store.as_ref())
            .map_err(|e| e.to_string())?;
        if position < 0 {
            return Ok(None);
        }
        let started = Instant::now();
        tracing::debug!(
            partition = self.config.partition_id,
            position,
            "taking a snapshot"
        );
        // The state may hold results not yet durable in the log: make them durable first, or a
        // crash could leave a snapshot ahead of the log. A replica's are committed by the
        // group: it waits for that commit before it takes the snapshot.
        if self.replica {
            self.snapshot_wanted = self.last_written > self.commit.get();
            if self.snapshot_wanted {
                return Ok(None);
            }
        }
        let (snapshot, slowest_exporter) = crate::blocking::off_worker(|| {
            self.commit_everything()?;
            checkpoint(
                &self.exporters,
                &self.snapshots,
                self.store.as_ref(),
                position,
            )
        })?;
        self.log_since_snapshot = 0;
        PartitionMetrics::add(&self.metrics.snapshots, 1);
        if let Some(index) = first_needed(self.journal.reader(), position, slowest_exporter)? {
            self.compact(index)?;
        }
        tracing::info!(
            partition = self.config.partition_id,
            position = snapshot.position,
            millis = started.elapsed().as_millis() as u64,
            "took snapshot"
        );
        Ok(Some(snapshot.position))
    }
}

/// Checkpoints `store` as the snapshot at `position` with the exporters' positions in it (the
/// log below the lowest of them is kept, so an exporter restarted from the snapshot finds every
/// record it has not acknowledged); returns the snapshot and that lowest position. It blocks
/// its thread: callers run it in [`off_worker`](crate::blocking::off_worker).
pub(crate) fn checkpoint(
    exporters: &ExporterPositions,
    snapshots: &SnapshotStore,
    store: &dyn Store,
    position: i64,
) -> Result<(Snapshot, Option<i64>), String> {
    let slowest_exporter = exporters
        .persist(store)
        .map_err(|e| format!("cannot store the exporters' positions: {e}"))?;
    let snapshot = snapshots
        .take(position, store)
        .map_err(|e| format!("cannot take a snapshot: {e}"))?;
    Ok((snapshot, slowest_exporter))
}

/// The first log entry a partition still needs after a snapshot at `position`: the one that
/// holds `position + 1` (or the slowest exporter's next record), where replay starts.
pub(crate) fn first_needed<R: JournalReader>(
    mut reader: R,
    position: i64,
    slowest_exporter: Option<i64>,
) -> Result<Option<u64>, String> {
    let keep_from = slowest_exporter.map_or(position, |slowest| slowest.min(position)) + 1;
    reader
        .seek_to_asqn(keep_from.max(0) as u64)
        .map_err(|e| e.to_string())?;
    match reader.next_entry() {
        Some(Ok(entry)) => Ok(Some(entry.index)),
        Some(Err(e)) => Err(e.to_string()),
        None => Ok(None),
    }
}

async fn wait_flush(flushing: &mut Option<FlushWait>) -> Result<u64, String> {
    match flushing {
        Some(flush) => flush.await.map_err(|e| format!("cannot sync the log: {e}")),
        None => std::future::pending().await,
    }
}

/// The next change of the disk watermark: whether the disk is short now. Never, without one.
async fn disk_change(changes: &mut Option<watch::Receiver<bool>>) -> bool {
    match changes {
        Some(changes) => match changes.changed().await {
            Ok(()) => *changes.borrow_and_update(),
            Err(_) => std::future::pending().await,
        },
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

async fn sleep_for(duration: Option<Duration>) {
    match duration {
        Some(duration) => tokio::time::sleep(duration).await,
        None => std::future::pending().await,
    }
}

async fn tick(interval: &mut Option<tokio::time::Interval>) {
    match interval {
        Some(interval) => {
            interval.tick().await;
        }
        None => std::future::pending().await,
    }
}
