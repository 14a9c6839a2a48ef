//! Event appliers: one per event intent and record version, each in a file named after its
//! event. The only code that changes engine state. A changed applier gets a new record version
//! and the old one stays, so old logs replay the same.

mod clock;
mod decision;
mod distribution;
mod error;
mod form;
mod incident;
mod job;
mod job_batch;
mod message;
mod message_start_event_subscription;
mod message_subscription;
mod multi_instance;
mod process;
mod process_event;
mod process_instance;
mod process_message_subscription;
mod signal_subscription;
mod timer;
mod user_task;
mod variable;

use std::collections::HashMap;

use beeline_protocol::intent::{
    CommandDistributionIntent, DecisionEvaluationIntent, DeploymentIntent, EscalationIntent,
    JobIntent, MessageCorrelationIntent, ProcessInstanceBatchIntent, ProcessInstanceCreationIntent,
    ProcessInstanceIntent, ProcessInstanceModificationIntent, ResourceDeletionIntent, SignalIntent,
    VariableDocumentIntent,
};
#[cfg(test)]
use beeline_protocol::intent::{
    IncidentIntent, JobBatchIntent, MessageSubscriptionIntent, ProcessInstanceResultIntent,
    ProcessIntent, ProcessMessageSubscriptionIntent, SignalSubscriptionIntent, TimerIntent,
    UserTaskIntent, VariableIntent,
};
use beeline_protocol::{Intent, Record};

use crate::error::ProcessingError;
use crate::state::EngineState;

pub(crate) trait EventApplier: Send + Sync {
    fn apply(&self, event: &Record, state: &mut EngineState<'_>) -> Result<(), ProcessingError>;
}

/// Events that change no state: they only tell the log's readers what happened. Every event of
/// an implemented value type is either here, or has an applier, or is in `NOT_WRITTEN` (a test
/// checks it).
const NO_STATE_CHANGE: &[Intent] = &[
    Intent::Deployment(DeploymentIntent::Created),
    Intent::ProcessInstanceCreation(ProcessInstanceCreationIntent::Created),
    Intent::ProcessInstance(ProcessInstanceIntent::Canceling),
    Intent::CommandDistribution(CommandDistributionIntent::Started),
    Intent::CommandDistribution(CommandDistributionIntent::Finished),
    Intent::VariableDocument(VariableDocumentIntent::Updated),
    Intent::VariableDocument(VariableDocumentIntent::UpdateDenied),
    Intent::DecisionEvaluation(DecisionEvaluationIntent::Evaluated),
    Intent::DecisionEvaluation(DecisionEvaluationIntent::Failed),
    Intent::Escalation(EscalationIntent::Escalated),
    Intent::Escalation(EscalationIntent::NotEscalated),
    Intent::Signal(SignalIntent::Broadcasted),
    Intent::ProcessInstanceBatch(ProcessInstanceBatchIntent::Activated),
    Intent::ProcessInstanceBatch(ProcessInstanceBatchIntent::Terminated),
    Intent::ResourceDeletion(ResourceDeletionIntent::Deleting),
    Intent::ResourceDeletion(ResourceDeletionIntent::Deleted),
    // What it changed was written as the events of the elements it activated and terminated.
    Intent::ProcessInstanceModification(ProcessInstanceModificationIntent::Modified),
    // The changes were written as RETRIES_UPDATED and TIMEOUT_UPDATED before it.
    Intent::Job(JobIntent::Updated),
    // The answer to a correlate request: the message and what it reached are written by the
    // message's and the subscriptions' own events.
    Intent::MessageCorrelation(MessageCorrelationIntent::Correlated),
];

/// Events of implemented value types that this engine never writes (yet), because it lacks the
/// feature that would: a log that holds one cannot be replayed here.
#[cfg(test)]
const NOT_WRITTEN: &[Intent] = &[
    Intent::Job(JobIntent::Migrated),
    Intent::Deployment(DeploymentIntent::Distributed),
    Intent::Deployment(DeploymentIntent::FullyDistributed),
    Intent::Deployment(DeploymentIntent::Reconstructed),
    Intent::ProcessInstance(ProcessInstanceIntent::ElementMigrated),
    Intent::ProcessInstance(ProcessInstanceIntent::AncestorMigrated),
    Intent::ProcessInstance(ProcessInstanceIntent::SequenceFlowDeleted),
    Intent::ProcessInstance(ProcessInstanceIntent::Suspended),
    Intent::ProcessInstance(ProcessInstanceIntent::Resumed),
    Intent::ProcessInstance(ProcessInstanceIntent::Resuming),
    Intent::Incident(IncidentIntent::Migrated),
    Intent::JobBatch(JobBatchIntent::Acknowledged),
    Intent::JobBatch(JobBatchIntent::Rejected),
    Intent::Variable(VariableIntent::Migrated),
    Intent::Variable(VariableIntent::Creating),
    Intent::Variable(VariableIntent::Updating),
    Intent::ProcessInstanceResult(ProcessInstanceResultIntent::Completed),
    Intent::Process(ProcessIntent::Draining),
    Intent::Process(ProcessIntent::DeleteCompleted),
    Intent::Process(ProcessIntent::FullyDeleted),
    Intent::CommandDistribution(CommandDistributionIntent::Enqueued),
    Intent::CommandDistribution(CommandDistributionIntent::ContinuationRequested),
    Intent::CommandDistribution(CommandDistributionIntent::Continued),
    Intent::Timer(TimerIntent::Migrated),
    // A correlation nothing took is answered with a rejection (NOT_FOUND).
    Intent::MessageCorrelation(MessageCorrelationIntent::NotCorrelated),
    Intent::MessageSubscription(MessageSubscriptionIntent::Migrated),
    Intent::ProcessMessageSubscription(ProcessMessageSubscriptionIntent::Migrating),
    Intent::ProcessMessageSubscription(ProcessMessageSubscriptionIntent::Migrated),
    Intent::SignalSubscription(SignalSubscriptionIntent::Migrated),
    Intent::UserTask(UserTaskIntent::Migrated),
];

pub(crate) struct Appliers {
    by_version: HashMap<(Intent, u16), Box<dyn EventApplier>>,
    /// The newest version registered per event: what new events are written with.
    latest: HashMap<Intent, u16>,
}

impl Appliers {
    pub fn new() -> Self {
        let mut appliers = Self {
            by_version: HashMap::new(),
            latest: HashMap::new(),
        };
        message::register(&mut appliers);
        error::register(&mut appliers);
        process::register(&mut appliers);
        decision::register(&mut appliers);
        distribution::register(&mut appliers);
        process_instance::register(&mut appliers);
        process_event::register(&mut appliers);
        job::register(&mut appliers);
        job_batch::register(&mut appliers);
        variable::register(&mut appliers);
        incident::register(&mut appliers);
        timer::register(&mut appliers);
        message_subscription::register(&mut appliers);
        process_message_subscription::register(&mut appliers);
        message_start_event_subscription::register(&mut appliers);
        signal_subscription::register(&mut appliers);
        multi_instance::register(&mut appliers);
        clock::register(&mut appliers);
        form::register(&mut appliers);
        user_task::register(&mut appliers);
        appliers
    }

    pub fn register(
        &mut self,
        intent: impl Into<Intent>,
        version: u16,
        applier: impl EventApplier + 'static,
    ) {
        let intent = intent.into();
        assert!(intent.is_event(), "{intent:?} is a command, not an event");
        self.by_version.insert((intent, version), Box::new(applier));
        let latest = self.latest.entry(intent).or_insert(version);
        *latest = (*latest).max(version);
    }

    /// The record version a new `intent` event is written with: its newest applier's, so
    /// registering a version switches every writer at once (1 for events that change no state).
    pub fn latest_version(&self, intent: Intent) -> u16 {
        self.latest.get(&intent).copied().unwrap_or(1)
    }

    pub fn apply(
        &self,
        event: &Record,
        state: &mut EngineState<'_>,
    ) -> Result<(), ProcessingError> {
        match self.by_version.get(&(event.intent, event.record_version)) {
            Some(applier) => applier.apply(event, state),
            None if NO_STATE_CHANGE.contains(&event.intent) => Ok(()),
            None => Err(ProcessingError::Internal(format!(
                "no applier for {:?} version {}",
                event.intent, event.record_version
            ))),
        }
    }

    #[cfg(test)]
    pub fn handles(&self, intent: Intent) -> bool {
        NO_STATE_CHANGE.contains(&intent) || self.latest.contains_key(&intent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use beeline_protocol::ValueType;

    /// Value types whose events this engine writes: their event intents must all be accounted for.
    const IMPLEMENTED: &[ValueType] = &[
        ValueType::Message,
        ValueType::Error,
        ValueType::Deployment,
        ValueType::Process,
        ValueType::ProcessInstance,
        ValueType::ProcessInstanceCreation,
        ValueType::ProcessInstanceResult,
        ValueType::Job,
        ValueType::JobBatch,
        ValueType::Variable,
        ValueType::VariableDocument,
        ValueType::Incident,
        ValueType::CommandDistribution,
        ValueType::Decision,
        ValueType::DecisionRequirements,
        ValueType::DecisionEvaluation,
        ValueType::ProcessEvent,
        ValueType::Escalation,
        ValueType::Timer,
        ValueType::MessageSubscription,
        ValueType::ProcessMessageSubscription,
        ValueType::MessageStartEventSubscription,
        ValueType::Signal,
        ValueType::SignalSubscription,
        ValueType::ProcessInstanceBatch,
        ValueType::MultiInstance,
        ValueType::MessageCorrelation,
        ValueType::Clock,
        ValueType::UserTask,
        ValueType::ProcessInstanceModification,
        ValueType::ResourceDeletion,
        ValueType::Form,
    ];

    #[test]
    fn new_events_are_written_with_the_newest_applier_version() {
        let appliers = Appliers::new();
        assert_eq!(
            appliers.latest_version(IncidentIntent::Created.into()),
            2,
            "version 2 takes a job out of activation"
        );
        assert_eq!(appliers.latest_version(JobIntent::Created.into()), 1);
        assert_eq!(
            appliers.latest_version(DeploymentIntent::Created.into()),
            1,
            "an event that changes no state"
        );
    }

    #[test]
    fn every_event_of_an_implemented_value_type_is_accounted_for() {
        let appliers = Appliers::new();
        for &value_type in IMPLEMENTED {
            for value in 0..=u8::MAX {
                if let Some(intent) = Intent::from_parts(value_type, value)
                    && intent.is_event()
                {
                    assert!(
                        appliers.handles(intent) || NOT_WRITTEN.contains(&intent),
                        "{intent:?} has no applier and is declared neither as changing no state nor as not written"
                    );
                }
            }
        }
    }
}
