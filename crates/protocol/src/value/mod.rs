//! Record values: one struct per value type, named as in Zeebe (`MessageRecord`, ...).
//!
//! Each value is a protobuf message (field numbers are its stable binary form; a new field gets
//! a new number, a removed one stays reserved) and serializes to Zeebe's exported JSON shape.
//! To add a value type: write its struct in a file of its own here, then list it in
//! `record_values!` below.

mod clock;
mod command_distribution;
mod decision;
mod decision_evaluation;
mod deployment;
mod error;
mod incident;
mod job;
mod message;
mod message_subscription;
mod multi_instance;
mod process;
mod process_event;
mod process_instance;
mod process_instance_creation;
mod process_instance_modification;
mod resource_deletion;
mod signal;
mod timer;
mod user_task;
mod variable;

pub use clock::ClockRecord;
pub use command_distribution::CommandDistributionRecord;
pub use decision::{DecisionRecord, DecisionRequirementsRecord};
pub use decision_evaluation::{
    DecisionEvaluationRecord, EvaluatedDecision, EvaluatedInput, EvaluatedOutput, MatchedRule,
};
pub use deployment::{
    DecisionMetadata, DecisionRequirementsMetadata, DeploymentRecord, DeploymentResource,
    FormMetadata, ProcessMetadata,
};
pub use error::ErrorRecord;
pub use incident::IncidentRecord;
pub use job::{JobBatchRecord, JobRecord, JobResult, JobResultCorrections};
pub use message::{MessageCorrelationRecord, MessageRecord};
pub use message_subscription::{
    MessageStartEventSubscriptionRecord, MessageSubscriptionRecord,
    ProcessMessageSubscriptionRecord,
};
pub use multi_instance::{MultiInstanceRecord, ProcessInstanceBatchRecord};
pub use process::ProcessRecord;
pub use process_event::{EscalationRecord, ProcessEventRecord};
pub use process_instance::ProcessInstanceRecord;
pub use process_instance_creation::{
    ProcessInstanceCreationRecord, ProcessInstanceResultRecord, StartInstruction,
};
pub use process_instance_modification::{
    ActivateInstruction, ProcessInstanceModificationRecord, TerminateInstruction,
    VariableInstruction,
};
pub use resource_deletion::ResourceDeletionRecord;
pub use signal::{SignalRecord, SignalSubscriptionRecord};
pub use timer::TimerRecord;
pub use user_task::{FormRecord, UserTaskRecord};
pub use variable::{VariableDocumentRecord, VariableRecord};

use crate::intent::{self, Intent, ValueType};

/// A record value of a known type.
pub trait Value:
    Sized
    + Clone
    + Default
    + PartialEq
    + std::fmt::Debug
    + prost::Message
    + serde::Serialize
    + Into<RecordValue>
{
    const VALUE_TYPE: ValueType;
    type Intent: Copy + Into<Intent>;

    fn from_record_value(value: &RecordValue) -> Option<&Self>;

    /// The value itself, when `value` holds one of this type.
    fn from_record_value_owned(value: RecordValue) -> Option<Self>;

    /// The process instance this value belongs to, if any (the instance an unexpected
    /// processing error bans).
    fn process_instance_key(&self) -> Option<i64>;
}

macro_rules! record_values {
    ($( $variant:ident($ty:ident, $intent:ident $(, instance: $instance:ident)?); )*) => {
        /// The value of a record, one variant per value type Beeline implements. Each is boxed:
        /// the values differ tenfold in size (a clock's against a user task's), and a record
        /// moves through queues, batches and the replayer's chunks by value.
        #[derive(Debug, Clone, PartialEq)]
        pub enum RecordValue { $( $variant(Box<$ty>), )* }

        impl RecordValue {
            pub fn process_instance_key(&self) -> Option<i64> {
                match self {
                    $( RecordValue::$variant(v) => v.process_instance_key(), )*
                }
            }

            pub fn value_type(&self) -> ValueType {
                match self {
                    $( RecordValue::$variant(_) => ValueType::$variant, )*
                }
            }

            /// The value of the same type with every field at its default: what stands in a
            /// rejection for a command value too large to be written twice.
            pub fn emptied(&self) -> Self {
                match self {
                    $( RecordValue::$variant(_) => RecordValue::$variant(Box::default()), )*
                }
            }

            pub(crate) fn encoded_len(&self) -> usize {
                match self {
                    $( RecordValue::$variant(v) => prost::Message::encoded_len(v), )*
                }
            }

            pub(crate) fn encode(&self, out: &mut Vec<u8>) {
                match self {
                    $( RecordValue::$variant(v) => crate::protobuf::encode_into(v, out), )*
                }
            }

            pub(crate) fn decode(value_type: ValueType, bytes: &[u8]) -> Result<Self, DecodeValueError> {
                match value_type {
                    $( ValueType::$variant => <$ty as prost::Message>::decode(bytes)
                        .map(|value| RecordValue::$variant(Box::new(value)))
                        .map_err(|e| DecodeValueError::Malformed(value_type, e.to_string())), )*
                    #[allow(unreachable_patterns)]
                    other => Err(DecodeValueError::Unsupported(other)),
                }
            }
        }

        impl serde::Serialize for RecordValue {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( RecordValue::$variant(v) => v.serialize(serializer), )*
                }
            }
        }

        $(
            impl Value for $ty {
                const VALUE_TYPE: ValueType = ValueType::$variant;
                type Intent = intent::$intent;

                fn process_instance_key(&self) -> Option<i64> {
                    $( return (self.$instance > 0).then_some(self.$instance); )?
                    #[allow(unreachable_code)]
                    None
                }

                fn from_record_value(value: &RecordValue) -> Option<&Self> {
                    match value {
                        RecordValue::$variant(v) => Some(v.as_ref()),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }

                fn from_record_value_owned(value: RecordValue) -> Option<Self> {
                    match value {
                        RecordValue::$variant(v) => Some(*v),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }

            impl From<$ty> for RecordValue {
                fn from(value: $ty) -> Self {
                    RecordValue::$variant(Box::new(value))
                }
            }
        )*
    };
}

record_values! {
    Job(JobRecord, JobIntent, instance: process_instance_key);
    Deployment(DeploymentRecord, DeploymentIntent);
    ProcessInstance(ProcessInstanceRecord, ProcessInstanceIntent, instance: process_instance_key);
    Incident(IncidentRecord, IncidentIntent, instance: process_instance_key);
    Message(MessageRecord, MessageIntent);
    JobBatch(JobBatchRecord, JobBatchIntent);
    Variable(VariableRecord, VariableIntent, instance: process_instance_key);
    VariableDocument(VariableDocumentRecord, VariableDocumentIntent, instance: process_instance_key);
    ProcessInstanceCreation(ProcessInstanceCreationRecord, ProcessInstanceCreationIntent);
    Error(ErrorRecord, ErrorIntent, instance: process_instance_key);
    ProcessInstanceResult(ProcessInstanceResultRecord, ProcessInstanceResultIntent, instance: process_instance_key);
    Process(ProcessRecord, ProcessIntent);
    Decision(DecisionRecord, DecisionIntent);
    DecisionRequirements(DecisionRequirementsRecord, DecisionRequirementsIntent);
    DecisionEvaluation(DecisionEvaluationRecord, DecisionEvaluationIntent, instance: process_instance_key);
    CommandDistribution(CommandDistributionRecord, CommandDistributionIntent);
    ProcessEvent(ProcessEventRecord, ProcessEventIntent, instance: process_instance_key);
    Escalation(EscalationRecord, EscalationIntent, instance: process_instance_key);
    Timer(TimerRecord, TimerIntent, instance: process_instance_key);
    MessageSubscription(MessageSubscriptionRecord, MessageSubscriptionIntent, instance: process_instance_key);
    ProcessMessageSubscription(ProcessMessageSubscriptionRecord, ProcessMessageSubscriptionIntent, instance: process_instance_key);
    MessageStartEventSubscription(MessageStartEventSubscriptionRecord, MessageStartEventSubscriptionIntent);
    Signal(SignalRecord, SignalIntent);
    SignalSubscription(SignalSubscriptionRecord, SignalSubscriptionIntent);
    ProcessInstanceBatch(ProcessInstanceBatchRecord, ProcessInstanceBatchIntent, instance: process_instance_key);
    MultiInstance(MultiInstanceRecord, MultiInstanceIntent);
    UserTask(UserTaskRecord, UserTaskIntent, instance: process_instance_key);
    ProcessInstanceModification(ProcessInstanceModificationRecord, ProcessInstanceModificationIntent, instance: process_instance_key);
    ResourceDeletion(ResourceDeletionRecord, ResourceDeletionIntent);
    Form(FormRecord, FormIntent);
    MessageCorrelation(MessageCorrelationRecord, MessageCorrelationIntent, instance: process_instance_key);
    Clock(ClockRecord, ClockIntent);
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeValueError {
    #[error("value type {0:?} is not supported by this version of Beeline")]
    Unsupported(ValueType),
    #[error("malformed {0:?} value: {1}")]
    Malformed(ValueType, String),
}
