//! Command processors: one per command intent, each in a file named after its command.

pub(crate) mod bpmn;
mod clock;
mod decision_evaluation;
pub(crate) mod deployment;
mod distribution;
mod incident;
mod job;
mod job_batch;
pub(crate) mod message;
pub(crate) mod message_correlation;
mod message_subscription;
pub(crate) mod process_instance;
mod process_instance_batch;
mod process_instance_modification;
mod process_message_subscription;
mod resource_deletion;
mod signal;
mod timer;
mod user_task;
mod variable_document;

use std::collections::{HashMap, VecDeque};

use beeline_protocol::{Intent, Record, RecordType, RejectionType, Value};

use crate::appliers::Appliers;
use crate::error::ProcessingError;
use crate::push::{JobPush, Push};
use crate::state::EngineState;

/// Decides what a command does: reads state, writes events (applied at once), follow-up
/// commands, a rejection, a response. Never changes state itself.
pub(crate) trait CommandProcessor: Send + Sync {
    fn process(
        &self,
        command: &Record,
        ctx: &mut ProcessingContext<'_, '_>,
    ) -> Result<(), ProcessingError>;
}

/// The processors, by command intent.
pub(crate) struct Processors(HashMap<Intent, Box<dyn CommandProcessor>>);

impl Processors {
    pub fn new() -> Self {
        let mut processors = Self(HashMap::new());
        message::register(&mut processors);
        message_correlation::register(&mut processors);
        deployment::register(&mut processors);
        decision_evaluation::register(&mut processors);
        distribution::register(&mut processors);
        process_instance::register(&mut processors);
        process_instance_batch::register(&mut processors);
        process_instance_modification::register(&mut processors);
        bpmn::register(&mut processors);
        job::register(&mut processors);
        job_batch::register(&mut processors);
        variable_document::register(&mut processors);
        incident::register(&mut processors);
        timer::register(&mut processors);
        message_subscription::register(&mut processors);
        process_message_subscription::register(&mut processors);
        resource_deletion::register(&mut processors);
        signal::register(&mut processors);
        clock::register(&mut processors);
        user_task::register(&mut processors);
        processors
    }

    pub fn register(
        &mut self,
        intent: impl Into<Intent>,
        processor: impl CommandProcessor + 'static,
    ) {
        let intent = intent.into();
        assert!(!intent.is_event(), "{intent:?} is an event, not a command");
        self.0.insert(intent, Box::new(processor));
    }

    pub fn get(&self, intent: Intent) -> Option<&dyn CommandProcessor> {
        self.0.get(&intent).map(|p| p.as_ref())
    }

    pub fn intents(&self) -> Vec<Intent> {
        self.0.keys().copied().collect()
    }
}

/// What a processor may do while processing one command of a batch.
pub struct ProcessingContext<'a, 's> {
    pub(crate) state: &'a mut EngineState<'s>,
    pub(crate) appliers: &'a Appliers,
    /// Position of the command read from the log: the source of every record of the batch.
    pub(crate) source_position: i64,
    pub(crate) timestamp: i64,
    pub(crate) partition_id: u16,
    pub(crate) partition_count: u16,
    pub(crate) records: &'a mut Vec<Record>,
    /// Follow-up commands waiting in this batch, with their index in `records`.
    pub(crate) follow_ups: &'a mut VecDeque<usize>,
    pub(crate) output: &'a mut Output,
    /// Whether the command being processed is a follow-up of the batch's command: only the
    /// batch's command answers the request that sent it.
    pub(crate) follow_up: bool,
    /// Open job streams new jobs may be pushed to.
    pub(crate) job_push: Option<&'a dyn JobPush>,
    /// The largest job that may be handed to a worker ([`crate::EngineConfig::max_job_bytes`]).
    pub(crate) max_job_bytes: usize,
}

/// What a batch produces besides its records.
#[derive(Debug, Default)]
pub(crate) struct Output {
    pub response: Option<Response>,
    /// Answers to requests of earlier batches: (position of their command, answer).
    pub answers: Vec<(i64, Record)>,
    /// Commands for other partitions: (partition, command).
    pub sends: Vec<(u16, Record)>,
    /// Jobs activated for job streams, pushed once the batch is committed.
    pub pushes: Vec<Push>,
}

/// The answer to whoever sent the batch's command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Response {
    /// The record at this index of the batch.
    Written(usize),
    /// Not yet: a later batch answers (a creation with result).
    Later,
}

impl<'s> ProcessingContext<'_, 's> {
    /// The state as it is after every event written so far in this batch.
    pub fn state(&self) -> &EngineState<'s> {
        self.state
    }

    /// The processing time: the timestamp of the command read from the log.
    pub fn now(&self) -> i64 {
        self.timestamp
    }

    pub fn next_key(&mut self) -> Result<i64, ProcessingError> {
        Ok(self.state.meta_mut().next_key()?)
    }

    fn record(
        &self,
        record_type: RecordType,
        key: i64,
        intent: Intent,
        value: beeline_protocol::RecordValue,
    ) -> Record {
        let mut record = Record::new(record_type, key, intent, value);
        record.source_record_position = self.source_position;
        record.timestamp = self.timestamp;
        record.partition_id = self.partition_id;
        record
    }

    /// Writes an event and applies it to the state at once. Returns its index in the batch.
    pub fn append_event<V: Value>(
        &mut self,
        key: i64,
        intent: V::Intent,
        value: V,
    ) -> Result<usize, ProcessingError> {
        let intent = intent.into();
        let mut record = self.record(RecordType::Event, key, intent, value.into());
        record.record_version = self.appliers.latest_version(intent);
        self.appliers.apply(&record, self.state)?;
        self.records.push(record);
        Ok(self.records.len() - 1)
    }

    /// A record written earlier in this batch.
    pub fn written(&self, index: usize) -> Option<&Record> {
        self.records.get(index)
    }

    /// Writes a command to be processed later in this batch.
    pub fn append_command<V: Value>(&mut self, key: i64, intent: V::Intent, value: V) {
        let mut record = self.record(RecordType::Command, key, intent.into(), value.into());
        record.processed = true;
        self.follow_ups.push_back(self.records.len());
        self.records.push(record);
    }

    /// Rejects `command` and answers the request with the rejection.
    pub fn reject(
        &mut self,
        command: &Record,
        rejection_type: RejectionType,
        reason: impl Into<String>,
    ) {
        let mut rejection = Record::rejection(command, rejection_type, reason.into());
        rejection.source_record_position = self.source_position;
        rejection.timestamp = self.timestamp;
        rejection.partition_id = self.partition_id;
        self.records.push(rejection);
        if !self.follow_up {
            self.output.response = Some(Response::Written(self.records.len() - 1));
        }
    }

    /// Answers the request that sent the batch's command with the record at `index`.
    pub fn respond(&mut self, index: usize) {
        if !self.follow_up {
            self.output.response = Some(Response::Written(index));
        }
    }

    /// Keeps the request that sent the batch's command waiting for a later answer.
    pub fn respond_later(&mut self) {
        if !self.follow_up {
            self.output.response = Some(Response::Later);
        }
    }

    /// Answers a request that an earlier batch kept waiting.
    pub fn answer(&mut self, request: i64, mut answer: Record) {
        answer.source_record_position = self.source_position;
        answer.timestamp = self.timestamp;
        answer.partition_id = self.partition_id;
        self.output.answers.push((request, answer));
    }

    /// Sends a command to another partition once this batch is committed.
    pub fn send<V: Value>(&mut self, partition: u16, key: i64, intent: V::Intent, value: V) {
        let mut command = Record::new(RecordType::Command, key, intent.into(), value.into());
        command.timestamp = self.timestamp;
        self.output.sends.push((partition, command));
    }

    pub fn partition_id(&self) -> u16 {
        self.partition_id
    }

    pub fn partition_count(&self) -> u16 {
        self.partition_count
    }

    /// The position of the command that started the batch.
    pub fn source_position(&self) -> i64 {
        self.source_position
    }
}

/// The value of `command` as `V`; the codec guarantees intent and value agree, so a mismatch is
/// an internal error.
pub(crate) fn value_of<V: Value>(command: &Record) -> Result<&V, ProcessingError> {
    command.value_as::<V>().ok_or_else(|| {
        ProcessingError::Internal(format!(
            "expected a {:?} value for {:?}, got {:?}",
            V::VALUE_TYPE,
            command.intent,
            command.value.value_type()
        ))
    })
}
