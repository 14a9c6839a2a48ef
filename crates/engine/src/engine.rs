//! The engine's entry points: process a command as one batch, replay events, find due work.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::Arc;

use beeline_protocol::intent::{
    ErrorIntent, JobBatchIntent, JobIntent, MessageIntent, MessageSubscriptionIntent,
    ProcessInstanceIntent, ProcessMessageSubscriptionIntent, TimerIntent,
};
use beeline_protocol::value::{
    ErrorRecord, JobBatchRecord, JobRecord, MessageRecord, ProcessInstanceRecord, TimerRecord,
};
use beeline_protocol::{Intent, Record, RecordType, RejectionType};
use beeline_state::{Store, WriteBatch};

use crate::appliers::Appliers;
use crate::error::{FatalError, ProcessingError};
use crate::model::Caches;
use crate::partitions;
pub use crate::processing::Response;
use crate::processing::bpmn::behavior::subscriptions;
use crate::processing::message::correlate;
use crate::processing::{Output, ProcessingContext, Processors};
use crate::push::{JobPush, Push};
use crate::state::EngineState;
use crate::state::values::{JobLifecycle, SubscriptionLifecycle};
use crate::transient::Transient;

/// How long a command to another partition waits for its confirmation before it is sent
/// again (Zeebe's subscription commands wait as long).
pub const RESEND_AFTER_MS: i64 = 10_000;

#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub partition_id: u16,
    /// Partitions of the cluster (deployments are distributed to all). Default 1.
    pub partition_count: u16,
    /// Most records one batch may hold; follow-up commands beyond it are written unprocessed
    /// and run in later batches. Default 1000.
    pub max_batch_records: usize,
    /// Most bytes one batch may take in the log (as the stream processor's limit). Follow-up
    /// commands stop once a batch holds half of it, the other half being room for the one in
    /// progress, and the rest run in later batches. Default 4 MiB - 1 KiB.
    pub max_batch_bytes: usize,
    /// The largest message a client is handed (the gateway's maximum message size): a job
    /// whose activation would not fit one raises a `MESSAGE_SIZE_EXCEEDED` incident instead of
    /// being handed out. Default 4 MiB.
    pub max_message_size: usize,
    /// Open job streams new jobs are pushed to (see [`crate::push`]). Default none: every job
    /// waits to be activated.
    pub job_push: Option<Arc<dyn JobPush>>,
}

impl EngineConfig {
    /// The largest job (its record with its variables) that may be activated: it must fit one
    /// message to the client and one log entry, each with room for what goes around it.
    pub fn max_job_bytes(&self) -> usize {
        let within = |limit: usize| limit - limit / 16;
        within(self.max_message_size).min(within(self.max_batch_bytes))
    }

    pub fn new(partition_id: u16) -> Self {
        Self {
            partition_id,
            partition_count: 1,
            max_batch_records: 1000,
            max_batch_bytes: 4 * 1024 * 1024 - 1024,
            max_message_size: 4 * 1024 * 1024,
            job_push: None,
        }
    }
}

/// What processing one command produced. Nothing of it is durable yet: the caller appends
/// `records` to the log and only then writes `writes` to the store; answers and sends wait
/// for the commit.
#[derive(Debug, Default)]
pub struct ProcessingResult {
    /// Events, rejections and follow-up commands, in order, without positions yet.
    pub records: Vec<Record>,
    /// The answer for whoever sent the command.
    pub response: Option<Response>,
    /// Answers to requests earlier batches kept waiting: (position of their command, answer).
    pub answers: Vec<(i64, Record)>,
    /// Commands for other partitions: (partition, command).
    pub sends: Vec<(u16, Record)>,
    /// Jobs activated for job streams, to push once the batch is committed.
    pub pushes: Vec<Push>,
    /// The batch's state changes, including the last processed position and key generator.
    pub writes: WriteBatch,
}

/// The bytes a batch's records take in the log, counted only once the batch is long enough
/// for it to matter (most batches are a few dozen records, far below the limit).
#[derive(Default)]
struct BatchSize {
    counted: usize,
    bytes: usize,
}

impl BatchSize {
    /// Records a batch holds before their bytes are counted.
    const COUNTED_FROM: usize = 100;

    fn reached(&mut self, records: &[Record], limit: usize) -> bool {
        if records.len() < Self::COUNTED_FROM {
            return false;
        }
        self.bytes += records[self.counted..]
            .iter()
            .map(beeline_protocol::codec::encoded_len)
            .sum::<usize>();
        self.counted = records.len();
        self.bytes >= limit
    }
}

/// Bookkeeping across the replayed part of the log.
#[derive(Debug, Clone, Copy)]
pub struct ReplayProgress {
    /// The last processed position the restored state holds: results of commands up to it are
    /// already applied and are skipped.
    pub snapshot_position: i64,
    /// The last command with results seen so far.
    pub last_processed_position: i64,
}

pub struct Engine {
    config: EngineConfig,
    processors: Processors,
    appliers: Appliers,
    caches: Caches,
    transient: Transient,
    /// The command whose batch's changes to memory (the caches, the transient requests) are
    /// not settled yet. They are kept when the next batch begins, and taken back when that
    /// command is rejected instead (the stream processor refuses a result too large for the
    /// log), so memory never holds what a batch that was not written put there.
    open_batch: Cell<Option<i64>>,
}

impl Engine {
    pub fn new(config: EngineConfig) -> Self {
        Self {
            config,
            processors: Processors::new(),
            appliers: Appliers::new(),
            caches: Caches::default(),
            transient: Transient::default(),
            open_batch: Cell::new(None),
        }
    }

    /// Keeps the memory changes of the batch before.
    fn settle(&self) {
        self.transient.commit();
        self.caches.commit();
        self.open_batch.set(None);
    }

    /// Takes back the memory changes of the batch in progress, or of the one before when its
    /// command is refused after all.
    fn take_back(&self) {
        self.transient.rollback();
        self.caches.rollback();
        self.open_batch.set(None);
    }

    fn state<'s>(&'s self, store: &'s dyn Store) -> EngineState<'s> {
        EngineState::new(
            store,
            self.config.partition_id,
            &self.caches,
            &self.transient,
        )
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Processes `command` (read from the log, so positioned and timestamped) and every
    /// follow-up command it causes, up to the batch limit. An unexpected error rolls the whole
    /// batch back and turns into a rejection, banning the command's process instance.
    pub fn process(
        &self,
        store: &dyn Store,
        command: &Record,
    ) -> Result<ProcessingResult, FatalError> {
        self.settle();
        let mut state = self.state(store);
        if let Some(instance) = command.value.process_instance_key()
            && state.banned_instances().is_banned(instance)?
        {
            let reason = format!(
                "Expected to process command {} {} for process instance {instance}, but the \
                 instance is banned after an earlier processing error",
                command.value_type().name(),
                command.intent.name()
            );
            return self.reject(store, command, RejectionType::InvalidState, reason);
        }
        let mut records = Vec::new();
        let mut output = Output::default();
        match self.run_batch(&mut state, command, &mut records, &mut output) {
            Ok(()) => {
                self.open_batch.set(Some(command.position));
                state
                    .meta_mut()
                    .set_last_processed_position(command.position);
                Ok(ProcessingResult {
                    records,
                    response: output.response,
                    answers: output.answers,
                    sends: output.sends,
                    pushes: output.pushes,
                    writes: state.into_writes(),
                })
            }
            Err(ProcessingError::Rejected(rejection_type, reason)) => {
                drop(state);
                self.take_back();
                self.reject(store, command, rejection_type, reason)
            }
            Err(error) => {
                drop(state);
                self.take_back();
                tracing::warn!(
                    position = command.position,
                    intent = ?command.intent,
                    %error,
                    "unexpected error while processing a command; rolled back"
                );
                self.processing_error(store, command, &error)
            }
        }
    }

    fn run_batch(
        &self,
        state: &mut EngineState<'_>,
        command: &Record,
        records: &mut Vec<Record>,
        output: &mut Output,
    ) -> Result<(), ProcessingError> {
        let mut follow_ups: VecDeque<usize> = VecDeque::new();
        self.process_one(state, command, None, records, &mut follow_ups, output)?;
        let mut size = BatchSize::default();
        while records.len() < self.config.max_batch_records
            && !size.reached(records, self.config.max_batch_bytes / 2)
        {
            let Some(index) = follow_ups.pop_front() else {
                return Ok(());
            };
            // The follow-up is processed where it was written: taken out of `records` while
            // its processor appends after it, and put back, so no command is copied.
            let current = std::mem::replace(&mut records[index], taken_out());
            let processed = self.process_one(
                state,
                command,
                Some(&current),
                records,
                &mut follow_ups,
                output,
            );
            records[index] = current;
            processed?;
        }
        // The rest runs in later batches: mark what is still queued as unprocessed so the
        // stream processor picks it up from the log.
        for index in follow_ups {
            records[index].processed = false;
        }
        Ok(())
    }

    /// Runs the processor of the batch's `command`, or of one of its follow-ups.
    fn process_one(
        &self,
        state: &mut EngineState<'_>,
        command: &Record,
        follow_up: Option<&Record>,
        records: &mut Vec<Record>,
        follow_ups: &mut VecDeque<usize>,
        output: &mut Output,
    ) -> Result<(), ProcessingError> {
        let current = follow_up.unwrap_or(command);
        let mut ctx = ProcessingContext {
            follow_up: follow_up.is_some(),
            state,
            appliers: &self.appliers,
            source_position: command.position,
            timestamp: command.timestamp,
            partition_id: self.config.partition_id,
            partition_count: self.config.partition_count,
            records,
            follow_ups,
            output,
            job_push: self.config.job_push.as_deref(),
            max_job_bytes: self.config.max_job_bytes(),
        };
        match self.processors.get(current.intent) {
            Some(processor) => processor.process(current, &mut ctx),
            None => {
                ctx.reject(
                    current,
                    RejectionType::ProcessingError,
                    format!(
                        "Beeline does not process {} {} commands",
                        current.value_type().name(),
                        current.intent.name()
                    ),
                );
                Ok(())
            }
        }
    }

    /// A batch that only rejects `command`. When it replaces the results of `command` that
    /// were just processed, what that batch changed in memory is taken back.
    pub fn reject(
        &self,
        store: &dyn Store,
        command: &Record,
        rejection_type: RejectionType,
        reason: String,
    ) -> Result<ProcessingResult, FatalError> {
        if self.open_batch.get() == Some(command.position) {
            self.take_back();
        }
        let mut state = self.state(store);
        let mut rejection = Record::rejection(command, rejection_type, reason);
        rejection.source_record_position = command.position;
        state
            .meta_mut()
            .set_last_processed_position(command.position);
        Ok(ProcessingResult {
            records: vec![rejection],
            response: Some(Response::Written(0)),
            writes: state.into_writes(),
            ..ProcessingResult::default()
        })
    }

    fn processing_error(
        &self,
        store: &dyn Store,
        command: &Record,
        error: &ProcessingError,
    ) -> Result<ProcessingResult, FatalError> {
        let reason = format!(
            "Expected to process command {} {} at position {} without errors, but an unexpected \
             error occurred: {error}",
            command.value_type().name(),
            command.intent.name(),
            command.position
        );
        self.reject_and_ban(store, command, RejectionType::ProcessingError, reason)
    }

    /// A batch that rejects `command` and, when its intent bans on errors, bans its process
    /// instance with an `ERROR CREATED` event, so the instance stops visibly instead of waiting
    /// for a step that never comes.
    pub fn reject_and_ban(
        &self,
        store: &dyn Store,
        command: &Record,
        rejection_type: RejectionType,
        reason: String,
    ) -> Result<ProcessingResult, FatalError> {
        let mut result = self.reject(store, command, rejection_type, reason.clone())?;
        let instance = command.value.process_instance_key();
        if let Some(instance) = instance
            && command.intent.bans_instance_on_error()
        {
            let mut state = self.state(store);
            let mut event = Record::event(
                instance,
                ErrorIntent::Created,
                ErrorRecord {
                    exception_message: reason,
                    stacktrace: String::new(),
                    error_event_position: command.position,
                    process_instance_key: instance,
                },
            );
            event.source_record_position = command.position;
            event.timestamp = command.timestamp;
            event.partition_id = self.config.partition_id;
            event.record_version = self.appliers.latest_version(event.intent);
            self.appliers
                .apply(&event, &mut state)
                .map_err(|e| FatalError(format!("cannot ban instance {instance}: {e}")))?;
            state
                .meta_mut()
                .set_last_processed_position(command.position);
            tracing::error!(
                instance,
                position = command.position,
                "banned process instance"
            );
            result.records.push(event);
            result.writes = state.into_writes();
        }
        Ok(result)
    }

    /// The last processed position the store holds (-1 for a fresh store).
    pub fn last_processed_position(&self, store: &dyn Store) -> Result<i64, FatalError> {
        Ok(self.state(store).meta().last_processed_position()?)
    }

    /// The instant (ms since the epoch) the partition's clock is pinned at, if it is: the
    /// partition's time while pinned (`CLOCK PIN`), instead of the system clock's.
    pub fn pinned_clock(&self, store: &dyn Store) -> Result<Option<i64>, FatalError> {
        Ok(self.state(store).meta().pinned_clock()?)
    }

    /// The deadline of job `key` while it is activated (`None`: no such job, or not
    /// activated): which activation a worker holds, to tell whether one handed back is still
    /// the current one.
    pub fn activation_deadline(
        &self,
        store: &dyn Store,
        key: i64,
    ) -> Result<Option<i64>, FatalError> {
        let Some(job) = self.state(store).jobs().get(key)? else {
            return Ok(None);
        };
        Ok(
            (job.lifecycle()? == crate::state::values::JobLifecycle::Activated)
                .then(|| job.record().deadline),
        )
    }

    /// Whether `record` changes the partition's clock (the time source must be read again).
    pub fn changes_clock(record: &Record) -> bool {
        record.is_event() && record.value_type() == beeline_protocol::ValueType::Clock
    }

    /// Applies the events among `records` that the store does not hold yet (appliers only) and
    /// returns the writes. Commands and already-applied results are skipped: a command is
    /// processed once a result names it as its source.
    pub fn replay<'r>(
        &self,
        store: &dyn Store,
        records: impl IntoIterator<Item = &'r Record>,
        progress: &mut ReplayProgress,
    ) -> Result<WriteBatch, FatalError> {
        let mut state = self.state(store);
        let mut processed = progress.last_processed_position;
        // This partition's keys are never handed out again: the highest is what counts.
        let mut highest_key = -1;
        for record in records {
            if record.record_type == RecordType::Command
                || record.source_record_position <= progress.snapshot_position
            {
                continue;
            }
            if record.record_type == RecordType::Event {
                self.appliers.apply(record, &mut state).map_err(|e| {
                    FatalError(format!(
                        "replaying {:?} at position {} failed: {e}",
                        record.intent, record.position
                    ))
                })?;
                if beeline_protocol::key::partition_of(record.key) == Some(self.config.partition_id)
                {
                    highest_key = highest_key.max(record.key);
                }
            }
            processed = processed.max(record.source_record_position);
        }
        if highest_key >= 0 {
            state.meta_mut().observe_key(highest_key)?;
        }
        if processed > progress.last_processed_position {
            progress.last_processed_position = processed;
            state.meta_mut().set_last_processed_position(processed);
        }
        self.settle();
        Ok(state.into_writes())
    }

    /// The due time an event adds to the scheduler's work, if any: the stream processor keeps
    /// its next wake-up from these instead of scanning the due-date indexes after every batch.
    pub fn due_time_added_by(&self, event: &Record) -> Option<i64> {
        if event.record_type != RecordType::Event {
            return None;
        }
        match event.intent {
            Intent::Message(MessageIntent::Published) => event
                .value_as::<MessageRecord>()
                .map(|message| message.deadline),
            Intent::JobBatch(JobBatchIntent::Activated) => event
                .value_as::<JobBatchRecord>()
                .and_then(|batch| batch.jobs.iter().map(|j| j.deadline).min()),
            Intent::Job(JobIntent::TimeoutUpdated) => {
                event.value_as::<JobRecord>().map(|j| j.deadline)
            }
            Intent::Job(JobIntent::Failed) => event
                .value_as::<JobRecord>()
                .map(|j| j.recurring_time)
                .filter(|t| *t > 0),
            // Catch, boundary, event sub-process and start timers, and each next cycle.
            Intent::Timer(TimerIntent::Created) => {
                event.value_as::<TimerRecord>().map(|t| t.due_date)
            }
            _ => None,
        }
    }

    /// The type of the job an event makes activatable, if any: workers waiting for jobs of
    /// that type should look again.
    pub fn activatable_job_type<'r>(&self, event: &'r Record) -> Option<&'r str> {
        if event.record_type != RecordType::Event {
            return None;
        }
        let job = event.value_as::<JobRecord>()?;
        let activatable = match event.intent {
            Intent::Job(
                JobIntent::Created
                | JobIntent::TimedOut
                | JobIntent::RecurredAfterBackoff
                | JobIntent::Yielded,
            ) => true,
            Intent::Job(JobIntent::Failed) => job.retries > 0 && job.recurring_time <= 0,
            _ => false,
        };
        activatable.then_some(job.r#type.as_str())
    }

    /// Commands to other partitions that were not confirmed for [`RESEND_AFTER_MS`] by `now`,
    /// to send again: distributed commands, message subscriptions opening or closing, and
    /// correlations. (partition, command).
    pub fn pending_sends(
        &self,
        store: &dyn Store,
        now: i64,
    ) -> Result<Vec<(u16, Record)>, FatalError> {
        let state = self.state(store);
        let mut sends = Vec::new();
        for (key, partition, distribution) in state.processes().all_pending()? {
            if let Some((intent, value)) = distribution.command() {
                let mut command = Record::new(RecordType::Command, key, intent, value);
                command.partition_id = partition;
                sends.push((partition, command));
            }
        }
        let before = now.saturating_sub(RESEND_AFTER_MS);
        for stored in state
            .process_message_subscriptions()
            .pending_since(before)?
        {
            let record = stored.record();
            let intent = match stored.lifecycle()? {
                SubscriptionLifecycle::Deleting => MessageSubscriptionIntent::Delete,
                _ => MessageSubscriptionIntent::Create,
            };
            let partition = match partitions::from_id(
                record.subscription_partition_id,
                "the message subscription's partition",
            ) {
                Ok(partition) => partition,
                Err(error) => {
                    // Nothing to send it to: processing it would fail the same way.
                    tracing::error!(subscription = stored.key, %error, "cannot send again");
                    continue;
                }
            };
            let command = Record::new(
                RecordType::Command,
                -1,
                intent.into(),
                subscriptions::message_subscription(&record).into(),
            );
            sends.push((partition, command));
        }
        for stored in state.message_subscriptions().correlating_since(before)? {
            let record = stored.record();
            let partition = match partitions::of_key(
                record.process_instance_key,
                "the message subscription's process instance key",
            ) {
                Ok(partition) => partition,
                Err(error) => {
                    tracing::error!(subscription = stored.key, %error, "cannot send again");
                    continue;
                }
            };
            let command = Record::new(
                RecordType::Command,
                -1,
                ProcessMessageSubscriptionIntent::Correlate.into(),
                correlate::correlation_command(state.partition_id(), &record).into(),
            );
            sends.push((partition, command));
        }
        Ok(sends)
    }

    /// The earliest time at which [`due_commands`](Engine::due_commands) has work.
    pub fn next_due_time(&self, store: &dyn Store) -> Result<Option<i64>, FatalError> {
        let state = self.state(store);
        Ok([
            state.messages().next_deadline()?,
            state.jobs().next_due_time()?,
            state.timers().next_due_date()?,
        ]
        .into_iter()
        .flatten()
        .min())
    }

    /// Commands that time has made due by `now` (message expiry, ...), at most `limit`.
    pub fn due_commands(
        &self,
        store: &dyn Store,
        now: i64,
        limit: usize,
    ) -> Result<Vec<Record>, FatalError> {
        let state = self.state(store);
        let mut commands = Vec::new();
        for (_, key) in state.messages().expired(now, limit)? {
            if let Some(message) = state.messages().get(key)? {
                commands.push(Record::command::<MessageRecord>(
                    key,
                    MessageIntent::Expire,
                    message,
                ));
            }
        }
        for (_, key) in state.jobs().timed_out(now, limit)? {
            if let Some(job) = state.jobs().get(key)?
                && job.lifecycle()? == JobLifecycle::Activated
            {
                commands.push(Record::command::<JobRecord>(
                    key,
                    JobIntent::TimeOut,
                    job.record(),
                ));
            }
        }
        for (_, key) in state.timers().due(now, limit)? {
            if let Some(timer) = state.timers().get(key)? {
                commands.push(Record::command::<TimerRecord>(
                    key,
                    TimerIntent::Trigger,
                    timer,
                ));
            }
        }
        for (_, key) in state.jobs().backoffs_over(now, limit)? {
            if let Some(job) = state.jobs().get(key)? {
                commands.push(Record::command::<JobRecord>(
                    key,
                    JobIntent::RecurAfterBackoff,
                    job.record(),
                ));
            }
        }
        Ok(commands)
    }

    #[cfg(test)]
    pub(crate) fn processors_mut(&mut self) -> &mut Processors {
        &mut self.processors
    }

    /// Whether records of this intent are handled by this engine (for gateways to answer
    /// "unimplemented" early).
    pub fn processes(&self, intent: Intent) -> bool {
        self.processors.get(intent).is_some()
    }

    /// Every command intent this version of the engine processes.
    pub fn supported_commands() -> Vec<Intent> {
        Processors::new().intents()
    }
}

/// What stands in a batch's records for the follow-up command being processed: a record
/// that allocates nothing.
fn taken_out() -> Record {
    Record::event(
        0,
        ProcessInstanceIntent::ElementActivating,
        ProcessInstanceRecord::default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::processing::{CommandProcessor, value_of};
    use beeline_protocol::intent::{DeploymentIntent, ProcessInstanceIntent, ProcessIntent};
    use beeline_protocol::value::{DeploymentRecord, DeploymentResource, ProcessInstanceRecord};
    use beeline_state::MemStore;

    const NOW: i64 = 1_700_000_000_000;

    fn engine() -> Engine {
        Engine::new(EngineConfig::new(1))
    }

    fn publish(position: i64, name: &str, key: &str, ttl: i64, id: &str) -> Record {
        let mut command = Record::command(
            -1,
            MessageIntent::Publish,
            MessageRecord {
                name: name.into(),
                correlation_key: key.into(),
                time_to_live: ttl,
                message_id: id.into(),
                variables: b"{}".to_vec(),
                ..Default::default()
            },
        );
        command.position = position;
        command.timestamp = NOW;
        command
    }

    fn run(engine: &Engine, store: &MemStore, command: &Record) -> ProcessingResult {
        let mut result = engine.process(store, command).unwrap();
        store.write(std::mem::take(&mut result.writes)).unwrap();
        result
    }

    fn intents(result: &ProcessingResult) -> Vec<(RecordType, Intent)> {
        result
            .records
            .iter()
            .map(|r| (r.record_type, r.intent))
            .collect()
    }

    #[test]
    fn publishing_buffers_the_message_until_its_deadline() {
        let (engine, store) = (engine(), MemStore::new());
        let result = run(&engine, &store, &publish(1, "paid", "order-1", 5_000, ""));
        assert_eq!(
            intents(&result),
            vec![(RecordType::Event, MessageIntent::Published.into())]
        );
        let published = &result.records[0];
        assert_eq!(published.key, beeline_protocol::key::encode(1, 1));
        assert_eq!(published.source_record_position, 1);
        assert_eq!(
            published.value_as::<MessageRecord>().unwrap().deadline,
            NOW + 5_000
        );
        assert_eq!(result.response, Some(Response::Written(0)));
        assert_eq!(engine.last_processed_position(&store).unwrap(), 1);
        assert_eq!(engine.next_due_time(&store).unwrap(), Some(NOW + 5_000));
        assert!(
            engine
                .due_commands(&store, NOW + 4_999, 10)
                .unwrap()
                .is_empty()
        );
        let due = engine.due_commands(&store, NOW + 5_000, 10).unwrap();
        assert_eq!(due.len(), 1);
        assert_eq!(
            (due[0].intent, due[0].key),
            (MessageIntent::Expire.into(), published.key)
        );

        let mut expire = due[0].clone();
        expire.position = 3;
        expire.timestamp = NOW + 5_000;
        let result = run(&engine, &store, &expire);
        assert_eq!(
            intents(&result),
            vec![(RecordType::Event, MessageIntent::Expired.into())]
        );
        assert_eq!(engine.next_due_time(&store).unwrap(), None);
        let again = run(&engine, &store, &expire);
        assert_eq!(again.records[0].rejection_type, RejectionType::NotFound);
    }

    #[test]
    fn a_message_id_is_unique_while_the_message_is_buffered() {
        let (engine, store) = (engine(), MemStore::new());
        run(
            &engine,
            &store,
            &publish(1, "paid", "order-1", 60_000, "m-1"),
        );
        let duplicate = run(
            &engine,
            &store,
            &publish(2, "paid", "order-1", 60_000, "m-1"),
        );
        let rejection = &duplicate.records[0];
        assert_eq!(rejection.record_type, RecordType::CommandRejection);
        assert_eq!(rejection.rejection_type, RejectionType::AlreadyExists);
        assert!(
            rejection.rejection_reason.contains("'m-1'"),
            "{}",
            rejection.rejection_reason
        );
        // Another correlation key, or no id: fine.
        let other = run(
            &engine,
            &store,
            &publish(3, "paid", "order-2", 60_000, "m-1"),
        );
        assert_eq!(other.records[0].record_type, RecordType::Event);
    }

    #[test]
    fn a_message_without_time_to_live_expires_at_once() {
        let (engine, store) = (engine(), MemStore::new());
        let result = run(&engine, &store, &publish(1, "ping", "", 0, "id"));
        assert_eq!(
            intents(&result),
            vec![
                (RecordType::Event, MessageIntent::Published.into()),
                (RecordType::Event, MessageIntent::Expired.into())
            ]
        );
        assert_eq!(engine.next_due_time(&store).unwrap(), None);
        let again = run(&engine, &store, &publish(2, "ping", "", 0, "id"));
        assert_eq!(
            again.records[0].record_type,
            RecordType::Event,
            "the id is free again"
        );
    }

    /// Activates an element by publishing a message and then failing: the message must vanish
    /// with the rollback.
    struct FailingProcessor;

    impl CommandProcessor for FailingProcessor {
        fn process(
            &self,
            command: &Record,
            ctx: &mut ProcessingContext<'_, '_>,
        ) -> Result<(), ProcessingError> {
            value_of::<ProcessInstanceRecord>(command)?;
            let key = ctx.next_key()?;
            ctx.append_event(key, MessageIntent::Published, MessageRecord::default())?;
            Err(ProcessingError::Internal("boom".into()))
        }
    }

    fn activate(position: i64, instance: i64) -> Record {
        let mut command = Record::command(
            instance,
            ProcessInstanceIntent::ActivateElement,
            ProcessInstanceRecord {
                process_instance_key: instance,
                ..Default::default()
            },
        );
        command.position = position;
        command.timestamp = NOW;
        command
    }

    #[test]
    fn an_unexpected_error_rolls_back_rejects_and_bans_only_that_instance() {
        let mut engine = engine();
        engine
            .processors_mut()
            .register(ProcessInstanceIntent::ActivateElement, FailingProcessor);
        let store = MemStore::new();
        let before = store.dump();
        let result = run(&engine, &store, &activate(1, 77));
        assert_eq!(
            intents(&result),
            vec![
                (
                    RecordType::CommandRejection,
                    ProcessInstanceIntent::ActivateElement.into()
                ),
                (RecordType::Event, ErrorIntent::Created.into())
            ]
        );
        assert_eq!(
            result.records[0].rejection_type,
            RejectionType::ProcessingError
        );
        assert!(result.records[0].rejection_reason.contains("boom"));
        let state = engine.state(&store);
        assert!(state.banned_instances().is_banned(77).unwrap());
        assert!(
            state
                .messages()
                .get(beeline_protocol::key::encode(1, 1))
                .unwrap()
                .is_none()
        );
        assert_ne!(store.dump(), before, "the ban and the position are stored");
        assert_eq!(
            state.meta().next_key_counter().unwrap(),
            1,
            "the key taken was rolled back"
        );

        let banned = run(&engine, &store, &activate(2, 77));
        assert_eq!(
            banned.records[0].rejection_type,
            RejectionType::InvalidState
        );
        assert!(banned.records[0].rejection_reason.contains("banned"));
        // The partition goes on with everything else.
        let ok = run(&engine, &store, &publish(3, "paid", "order-1", 1000, ""));
        assert_eq!(ok.records[0].record_type, RecordType::Event);
    }

    fn deploy(position: i64, job_type: &str) -> Record {
        let bpmn = format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t"><bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t"/><bpmn:serviceTask id="t"><bpmn:extensionElements><zeebe:taskDefinition type="{job_type}"/></bpmn:extensionElements></bpmn:serviceTask></bpmn:process></bpmn:definitions>"#
        );
        let mut command = Record::command(
            -1,
            DeploymentIntent::Create,
            DeploymentRecord {
                resources: vec![DeploymentResource {
                    resource: bpmn.into_bytes(),
                    resource_name: "p.bpmn".into(),
                }],
                ..Default::default()
            },
        );
        command.position = position;
        command.timestamp = NOW;
        command
    }

    /// Reads a deployed process (filling the cache), then fails.
    struct ReadsProcessThenFails(i64);

    impl CommandProcessor for ReadsProcessThenFails {
        fn process(
            &self,
            _command: &Record,
            ctx: &mut ProcessingContext<'_, '_>,
        ) -> Result<(), ProcessingError> {
            assert!(ctx.state().processes().deployed(self.0)?.is_some());
            Err(ProcessingError::Internal("boom".into()))
        }
    }

    #[test]
    fn what_a_batch_caches_is_taken_out_when_the_batch_is_not_written() {
        let (engine, store) = (engine(), MemStore::new());
        // Refused after processing (the stream processor's answer to results too large for
        // the log): the definition its batch read goes.
        let refused = deploy(1, "refused");
        engine.process(&store, &refused).unwrap();
        assert_eq!(engine.caches.count(), 1, "the deployment read its process");
        let rejection = engine
            .reject(
                &store,
                &refused,
                RejectionType::ExceededBatchRecordSize,
                "too large".into(),
            )
            .unwrap();
        store.write(rejection.writes).unwrap();
        assert_eq!(engine.caches.count(), 0);

        // Written: kept, also when a later command is rejected.
        let written = run(&engine, &store, &deploy(2, "written"));
        assert_eq!(engine.caches.count(), 1);
        let process_key = written
            .records
            .iter()
            .find(|r| r.intent == ProcessIntent::Created.into())
            .unwrap()
            .key;
        run(&engine, &store, &publish(3, "m", "k", 0, ""));
        engine
            .reject(
                &store,
                &publish(4, "m", "k", 0, ""),
                RejectionType::InvalidArgument,
                "no".into(),
            )
            .unwrap();
        assert_eq!(engine.caches.count(), 1);
        let cached = engine.caches.processes.get(process_key).unwrap();
        assert_eq!(cached.key, process_key);

        // Failed: rolled back with its state.
        let mut engine = Engine::new(EngineConfig::new(1));
        engine.processors_mut().register(
            ProcessInstanceIntent::ActivateElement,
            ReadsProcessThenFails(process_key),
        );
        let result = run(&engine, &store, &activate(5, 77));
        assert_eq!(
            result.records[0].rejection_type,
            RejectionType::ProcessingError
        );
        assert_eq!(engine.caches.count(), 0);
    }

    #[test]
    fn a_job_stored_with_a_state_no_job_has_is_damage_not_an_activatable_job() {
        use crate::state::values::Job;
        use beeline_state::{ColumnFamily, KeyBuilder, WriteBatch};
        use prost::Message;

        let (engine, store) = (engine(), MemStore::new());
        let key = beeline_protocol::key::encode(1, 5);
        let damaged = Job {
            record: Some(JobRecord {
                r#type: "work".into(),
                process_instance_key: 77,
                retries: 3,
                ..Default::default()
            }),
            state: 9,
        };
        let mut batch = WriteBatch::default();
        batch.put(
            KeyBuilder::new(ColumnFamily::Jobs).i64(key).build(),
            damaged.encode_to_vec(),
        );
        store.write(batch).unwrap();

        let mut complete = Record::command(key, JobIntent::Complete, JobRecord::default());
        complete.position = 1;
        complete.timestamp = NOW;
        let result = run(&engine, &store, &complete);
        let rejection = &result.records[0];
        assert_eq!(rejection.rejection_type, RejectionType::ProcessingError);
        assert!(
            rejection
                .rejection_reason
                .contains("a job of type 'work' (instance 77) has state 9, which is no job state"),
            "{}",
            rejection.rejection_reason
        );
        assert!(
            rejection.rejection_reason.contains("Jobs"),
            "names the column family: {}",
            rejection.rejection_reason
        );

        // A job stored without its record is no job of type '' with 0 retries either.
        let mut batch = WriteBatch::default();
        batch.put(
            KeyBuilder::new(ColumnFamily::Jobs).i64(key).build(),
            Job {
                record: None,
                state: 0,
            }
            .encode_to_vec(),
        );
        store.write(batch).unwrap();
        complete.position = 2;
        let result = run(&engine, &store, &complete);
        assert_eq!(
            result.records[0].rejection_type,
            RejectionType::ProcessingError
        );
        assert!(
            result.records[0].rejection_reason.contains(&format!(
                "column family Jobs: the value stored for {key} has no record"
            )),
            "{}",
            result.records[0].rejection_reason
        );
    }

    /// Each kind of stored value about a record, damaged (no record, or a state no lifecycle
    /// has): the command that reads it fails with a decoding error naming the family and the
    /// entry, and nothing else in state changes.
    #[test]
    fn damaged_stored_values_are_decoding_errors_naming_family_and_key() {
        use crate::state::values::{
            ElementInstance, StoredMessageStartEventSubscription, StoredMessageSubscription,
            StoredProcessMessageSubscription, StoredUserTask,
        };
        use beeline_protocol::intent::{
            MessageSubscriptionIntent, ProcessMessageSubscriptionIntent, UserTaskIntent,
        };
        use beeline_protocol::value::{
            MessageSubscriptionRecord, ProcessMessageSubscriptionRecord, UserTaskRecord,
        };
        use beeline_state::{ColumnFamily, KeyBuilder, WriteBatch};
        use prost::Message;

        const K: i64 = 2251799813685249 + 40;
        let instance = |record: Option<ProcessInstanceRecord>, state: u32| {
            ElementInstance {
                key: K,
                record,
                state,
                ..Default::default()
            }
            .encode_to_vec()
        };
        let user_task = |record: Option<UserTaskRecord>, state: u32| {
            StoredUserTask {
                record,
                state,
                ..Default::default()
            }
            .encode_to_vec()
        };
        let process_subscription = |record: Option<ProcessMessageSubscriptionRecord>, state| {
            StoredProcessMessageSubscription {
                key: 9,
                record,
                state,
            }
            .encode_to_vec()
        };
        let subscription_request = ProcessMessageSubscriptionRecord {
            element_instance_key: K,
            message_name: "m".into(),
            ..Default::default()
        };
        let cancel = Record::command(
            K,
            ProcessInstanceIntent::Cancel,
            ProcessInstanceRecord {
                process_instance_key: K,
                ..Default::default()
            },
        );
        let complete_task = Record::command(K, UserTaskIntent::Complete, UserTaskRecord::default());
        let correlate = Record::command(
            -1,
            ProcessMessageSubscriptionIntent::Correlate,
            subscription_request.clone(),
        );
        /// Stored in, under, as, the command that reads it, what the error says.
        type Case = (ColumnFamily, Vec<u8>, Vec<u8>, Record, String);
        let cases: Vec<Case> = vec![
            (
                ColumnFamily::ElementInstances,
                KeyBuilder::new(ColumnFamily::ElementInstances)
                    .i64(K)
                    .build(),
                instance(None, 3),
                cancel.clone(),
                format!("ElementInstances: the value stored for {K} has no record"),
            ),
            (
                ColumnFamily::ElementInstances,
                KeyBuilder::new(ColumnFamily::ElementInstances)
                    .i64(K)
                    .build(),
                instance(
                    Some(ProcessInstanceRecord {
                        process_instance_key: K,
                        ..Default::default()
                    }),
                    99,
                ),
                cancel,
                format!(
                    "ElementInstances: the value stored for {K} has state 99, which is no \
                     element instance state"
                ),
            ),
            (
                ColumnFamily::UserTasks,
                KeyBuilder::new(ColumnFamily::UserTasks).i64(K).build(),
                user_task(None, 1),
                complete_task.clone(),
                format!("UserTasks: the value stored for {K} has no record"),
            ),
            (
                ColumnFamily::UserTasks,
                KeyBuilder::new(ColumnFamily::UserTasks).i64(K).build(),
                user_task(Some(UserTaskRecord::default()), 42),
                complete_task,
                format!(
                    "UserTasks: the value stored for {K} has state 42, which is no user task \
                     state"
                ),
            ),
            (
                ColumnFamily::ProcessMessageSubscriptions,
                KeyBuilder::new(ColumnFamily::ProcessMessageSubscriptions)
                    .i64(K)
                    .str("m")
                    .build(),
                process_subscription(None, 1),
                correlate.clone(),
                format!(
                    "ProcessMessageSubscriptions: the value stored for (element instance {K}, \
                     message 'm') has no record"
                ),
            ),
            (
                ColumnFamily::ProcessMessageSubscriptions,
                KeyBuilder::new(ColumnFamily::ProcessMessageSubscriptions)
                    .i64(K)
                    .str("m")
                    .build(),
                process_subscription(Some(subscription_request), 7),
                correlate,
                format!(
                    "ProcessMessageSubscriptions: the value stored for (element instance {K}, \
                     message 'm') has state 7, which is no subscription state"
                ),
            ),
            (
                ColumnFamily::MessageSubscriptions,
                KeyBuilder::new(ColumnFamily::MessageSubscriptions)
                    .i64(K)
                    .str("m")
                    .build(),
                StoredMessageSubscription {
                    key: 9,
                    record: None,
                    correlating: false,
                }
                .encode_to_vec(),
                Record::command(
                    -1,
                    MessageSubscriptionIntent::Delete,
                    MessageSubscriptionRecord {
                        element_instance_key: K,
                        message_name: "m".into(),
                        ..Default::default()
                    },
                ),
                format!(
                    "MessageSubscriptions: the value stored for (element instance {K}, \
                     message 'm') has no record"
                ),
            ),
            (
                ColumnFamily::MessageStartEventSubscriptions,
                KeyBuilder::new(ColumnFamily::MessageStartEventSubscriptions)
                    .str("m")
                    .i64(K)
                    .build(),
                StoredMessageStartEventSubscription {
                    key: 9,
                    record: None,
                }
                .encode_to_vec(),
                publish(0, "m", "c", 0, ""),
                format!(
                    "MessageStartEventSubscriptions: the value stored for (message 'm', process \
                     definition {K}) has no record"
                ),
            ),
        ];
        for (cf, key, value, mut command, reason) in cases {
            let (engine, store) = (engine(), MemStore::new());
            // Another instance's state, which the failure must leave alone.
            let mut batch = WriteBatch::default();
            batch.put(
                KeyBuilder::new(ColumnFamily::ElementInstances)
                    .i64(K + 1)
                    .build(),
                ElementInstance {
                    key: K + 1,
                    record: Some(ProcessInstanceRecord {
                        process_instance_key: K + 1,
                        ..Default::default()
                    }),
                    state: 3,
                    ..Default::default()
                }
                .encode_to_vec(),
            );
            batch.put(key, value);
            store.write(batch).unwrap();
            let untouched = |store: &MemStore| {
                let mut entries = store.dump();
                entries.retain(|(key, _)| {
                    ![ColumnFamily::Meta, ColumnFamily::BannedInstances]
                        .iter()
                        .any(|cf| key.starts_with(&cf.prefix()))
                });
                entries
            };
            let before = untouched(&store);
            command.position = 1;
            command.timestamp = NOW;
            let result = run(&engine, &store, &command);
            let rejection = result
                .records
                .iter()
                .find(|r| r.record_type == RecordType::CommandRejection)
                .unwrap_or_else(|| panic!("{cf:?}: no rejection in {:?}", result.records));
            assert_eq!(
                rejection.rejection_type,
                RejectionType::ProcessingError,
                "{cf:?}: {}",
                rejection.rejection_reason
            );
            assert!(
                rejection
                    .rejection_reason
                    .contains(&format!("column family {reason}")),
                "{cf:?}: expected '{reason}' in '{}'",
                rejection.rejection_reason
            );
            assert_eq!(untouched(&store), before, "{cf:?}: nothing else changed");
        }
    }

    #[test]
    fn replay_applies_each_event_with_the_applier_of_its_version() {
        use crate::state::values::JobLifecycle;
        use beeline_protocol::intent::IncidentIntent;
        use beeline_protocol::value::IncidentRecord;

        let job_key = beeline_protocol::key::encode(1, 3);
        let mut created = Record::event(
            job_key,
            JobIntent::Created,
            JobRecord {
                r#type: "work".into(),
                retries: 3,
                process_instance_key: 77,
                ..Default::default()
            },
        );
        (created.position, created.source_record_position) = (2, 1);
        let after_incident_of_version = |version: u16| {
            let (engine, store) = (engine(), MemStore::new());
            let mut incident = Record::event(
                beeline_protocol::key::encode(1, 4),
                IncidentIntent::Created,
                IncidentRecord {
                    job_key,
                    process_instance_key: 77,
                    error_type: "MESSAGE_SIZE_EXCEEDED".into(),
                    ..Default::default()
                },
            );
            (incident.position, incident.source_record_position) = (3, 1);
            incident.record_version = version;
            let mut progress = ReplayProgress {
                snapshot_position: -1,
                last_processed_position: -1,
            };
            let writes = engine
                .replay(&store, [&created, &incident], &mut progress)
                .unwrap();
            store.write(writes).unwrap();
            let job = engine.state(&store).jobs().get(job_key).unwrap().unwrap();
            job.lifecycle().unwrap()
        };
        assert_eq!(
            after_incident_of_version(1),
            JobLifecycle::Activatable,
            "a log written before version 2 replays as it was processed"
        );
        assert_eq!(
            after_incident_of_version(2),
            JobLifecycle::Failed,
            "version 2 takes the job out of activation"
        );
        let mut unknown = created.clone();
        unknown.record_version = 9;
        let error = engine()
            .replay(
                &MemStore::new(),
                [&unknown],
                &mut ReplayProgress {
                    snapshot_position: -1,
                    last_processed_position: -1,
                },
            )
            .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("no applier for Job(Created) version 9"),
            "{error}"
        );
    }

    #[test]
    fn commands_without_a_processor_are_rejected() {
        let (engine, store) = (engine(), MemStore::new());
        let mut suspend = activate(1, 5);
        suspend.intent = ProcessInstanceIntent::Suspend.into();
        let result = run(&engine, &store, &suspend);
        assert_eq!(
            result.records[0].rejection_type,
            RejectionType::ProcessingError
        );
        assert!(
            result.records[0]
                .rejection_reason
                .contains("does not process PROCESS_INSTANCE SUSPEND")
        );
        assert!(!engine.processes(ProcessInstanceIntent::Suspend.into()));
    }
    /// Activates `step-N` by writing an event and the follow-up that activates `step-N+1`,
    /// up to `step-5`.
    struct ChainProcessor;

    impl CommandProcessor for ChainProcessor {
        fn process(
            &self,
            command: &Record,
            ctx: &mut ProcessingContext<'_, '_>,
        ) -> Result<(), ProcessingError> {
            let record = value_of::<ProcessInstanceRecord>(command)?;
            let step: u32 = record.element_id["step-".len()..].parse().unwrap();
            ctx.append_event(
                command.key,
                ProcessInstanceIntent::ElementActivated,
                record.clone(),
            )?;
            if step < 5 {
                let next = ProcessInstanceRecord {
                    element_id: format!("step-{}", step + 1),
                    ..record.clone()
                };
                ctx.append_command(command.key, ProcessInstanceIntent::ActivateElement, next);
            }
            Ok(())
        }
    }

    fn chain_engine(max_batch_records: usize) -> Engine {
        let mut config = EngineConfig::new(1);
        config.max_batch_records = max_batch_records;
        let mut engine = Engine::new(config);
        engine
            .processors_mut()
            .register(ProcessInstanceIntent::ActivateElement, ChainProcessor);
        engine
    }

    fn step(position: i64, step: u32) -> Record {
        let mut command = activate(position, 9);
        command.value = ProcessInstanceRecord {
            element_id: format!("step-{step}"),
            ..Default::default()
        }
        .into();
        command
    }

    /// Each record's type, element and whether it was processed in its batch.
    fn steps(result: &ProcessingResult) -> Vec<(RecordType, String, bool)> {
        result
            .records
            .iter()
            .map(|r| {
                let id = &r.value_as::<ProcessInstanceRecord>().unwrap().element_id;
                (r.record_type, id.clone(), r.processed)
            })
            .collect()
    }

    #[test]
    fn follow_ups_are_processed_in_order_within_the_batch_and_written_as_they_were() {
        let (engine, store) = (chain_engine(1000), MemStore::new());
        let result = run(&engine, &store, &step(1, 1));
        let event = |n: u32| (RecordType::Event, format!("step-{n}"), false);
        let follow_up = |n: u32| (RecordType::Command, format!("step-{n}"), true);
        assert_eq!(
            steps(&result),
            vec![
                event(1),
                follow_up(2),
                event(2),
                follow_up(3),
                event(3),
                follow_up(4),
                event(4),
                follow_up(5),
                event(5),
            ]
        );
    }

    #[test]
    fn follow_ups_past_the_batch_limit_are_left_for_later_batches() {
        let (engine, store) = (chain_engine(4), MemStore::new());
        let result = run(&engine, &store, &step(1, 1));
        let event = |n: u32| (RecordType::Event, format!("step-{n}"), false);
        assert_eq!(
            steps(&result),
            vec![
                event(1),
                (RecordType::Command, "step-2".into(), true),
                event(2),
                (RecordType::Command, "step-3".into(), false),
            ],
            "the batch stops once it holds 4 records; step-3 waits in the log"
        );
        let rest = run(&engine, &store, &step(5, 3));
        assert_eq!(
            steps(&rest)[0],
            event(3),
            "the command left unprocessed runs as a batch of its own"
        );
    }
}
