//! Engine-internal state values: protobuf messages, so fields can be added without a
//! migration (a new field gets a new number; removed numbers stay reserved).

use beeline_protocol::intent::ProcessInstanceIntent;

use super::Stored;
use beeline_protocol::value::{
    JobRecord, MessageStartEventSubscriptionRecord, MessageSubscriptionRecord,
    ProcessInstanceRecord, ProcessMessageSubscriptionRecord, UserTaskRecord,
    VariableDocumentRecord,
};

/// A running element instance (Zeebe's `ElementInstance`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ElementInstance {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(message, optional, tag = "2")]
    pub record: Option<ProcessInstanceRecord>,
    /// The `ProcessInstanceIntent` of its last lifecycle event (ELEMENT_ACTIVATING, ...).
    #[prost(uint32, tag = "3")]
    pub state: u32,
    /// Child element instances not completed or terminated yet.
    #[prost(int32, tag = "4")]
    pub active_children: i32,
    /// Sequence flows taken inside this scope whose target is not activated yet (in flight,
    /// or waiting at a joining gateway).
    #[prost(int32, tag = "5")]
    pub active_flows: i32,
    /// The job the element waits for, or 0.
    #[prost(int64, tag = "6")]
    pub job_key: i64,
    /// Variables the element completes with (a completed job's), applied by its completion.
    #[prost(bytes = "vec", optional, tag = "7")]
    pub completion_variables: Option<Vec<u8>>,
    /// A terminate end event ended the scope: what is still on its way in is dropped.
    #[prost(bool, tag = "8")]
    pub interrupted: bool,
    /// Multi-instance: on a body, how many inner instances it created; on an inner instance,
    /// which one it is (from 1: its `loopCounter`).
    #[prost(int32, tag = "9")]
    pub loop_counter: i32,
    /// Multi-instance bodies: the size of the input collection.
    #[prost(int32, tag = "10")]
    pub input_collection_size: i32,
    /// Multi-instance bodies: inner instances that completed.
    #[prost(int32, tag = "11")]
    pub completed_children: i32,
    /// Multi-instance bodies: inner instances that were terminated.
    #[prost(int32, tag = "12")]
    pub terminated_children: i32,
    /// Call activities: the process instance they called, or 0.
    #[prost(int64, tag = "13")]
    pub called_child_key: i64,
    /// Process instances: how many call activities deep (1 for an instance no call activity
    /// created).
    #[prost(int32, tag = "14")]
    pub process_depth: i32,
    /// Camunda user tasks: the user task, or 0.
    #[prost(int64, tag = "15")]
    pub user_task_key: i64,
    /// Execution listeners: how many listener jobs of the current phase (start listeners
    /// while ELEMENT_ACTIVATING, end listeners while ELEMENT_COMPLETING) were created.
    #[prost(int32, tag = "16")]
    pub execution_listener_index: i32,
    /// The variables the last completed execution listener job gave, merged when its
    /// completion is processed.
    #[prost(bytes = "vec", optional, tag = "17")]
    pub listener_variables: Option<Vec<u8>>,
    /// Camunda user tasks: how many task listener jobs of the transition under way were
    /// created.
    #[prost(int32, tag = "18")]
    pub task_listener_index: i32,
}

/// "has no record" when `record` is missing, else what `state` makes of the state.
fn damage<R>(record: &Option<R>, state: Option<String>) -> Option<String> {
    match record {
        None => Some("has no record".into()),
        Some(_) => state,
    }
}

impl Stored for ElementInstance {
    fn damage(&self) -> Option<String> {
        let state = ElementLifecycle::from_value(self.state).is_none().then(|| {
            format!(
                "has state {}, which is no element instance state",
                self.state
            )
        });
        damage(&self.record, state)
    }
}

impl Stored for Job {
    // An unknown state is reported by `lifecycle()`, with the job's type and instance.
    fn damage(&self) -> Option<String> {
        damage(&self.record, None)
    }
}

impl Stored for StoredUserTask {
    fn damage(&self) -> Option<String> {
        let state = UserTaskLifecycle::from_value(self.state)
            .is_none()
            .then(|| format!("has state {}, which is no user task state", self.state));
        damage(&self.record, state)
    }
}

impl Stored for StoredMessageSubscription {
    fn damage(&self) -> Option<String> {
        damage(&self.record, None)
    }
}

impl Stored for StoredProcessMessageSubscription {
    fn damage(&self) -> Option<String> {
        let state = SubscriptionLifecycle::from_value(self.state)
            .is_none()
            .then(|| format!("has state {}, which is no subscription state", self.state));
        damage(&self.record, state)
    }
}

impl Stored for StoredMessageStartEventSubscription {
    fn damage(&self) -> Option<String> {
        damage(&self.record, None)
    }
}

impl ElementInstance {
    /// The record; a value read from state always has it (`Stored`), so the empty default
    /// stands in only for one built without.
    pub fn record(&self) -> ProcessInstanceRecord {
        self.record.clone().unwrap_or_default()
    }

    /// Whether its last lifecycle event put it in `lifecycle`.
    pub fn is(&self, lifecycle: ElementLifecycle) -> bool {
        self.state == lifecycle as u32
    }
}

/// Where an element instance is in its lifecycle: the `ProcessInstanceIntent` of its last
/// lifecycle event, as [`ElementInstance::state`] stores it. An instance is gone once it is
/// completed or terminated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum ElementLifecycle {
    Activating = ProcessInstanceIntent::ElementActivating as u32,
    Activated = ProcessInstanceIntent::ElementActivated as u32,
    Completing = ProcessInstanceIntent::ElementCompleting as u32,
    Terminating = ProcessInstanceIntent::ElementTerminating as u32,
}

impl ElementLifecycle {
    /// The lifecycle stored as `value`, or `None` for a number that is none.
    pub fn from_value(value: u32) -> Option<Self> {
        use ElementLifecycle::*;
        [Activating, Activated, Completing, Terminating]
            .into_iter()
            .find(|lifecycle| *lifecycle as u32 == value)
    }
}

/// Job states (Zeebe's `JobState.State`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum JobLifecycle {
    Activatable = 0,
    Activated = 1,
    /// Failed: waiting out a back-off, or out of retries (with an incident).
    Failed = 2,
    ErrorThrown = 3,
}

impl JobLifecycle {
    /// The state stored as `value`, or `None` for a number no state has.
    pub fn from_value(value: u32) -> Option<Self> {
        match value {
            0 => Some(Self::Activatable),
            1 => Some(Self::Activated),
            2 => Some(Self::Failed),
            3 => Some(Self::ErrorThrown),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Activatable => "ACTIVATABLE",
            Self::Activated => "ACTIVATED",
            Self::Failed => "FAILED",
            Self::ErrorThrown => "ERROR_THROWN",
        }
    }
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Job {
    #[prost(message, optional, tag = "1")]
    pub record: Option<JobRecord>,
    #[prost(uint32, tag = "2")]
    pub state: u32,
}

impl Job {
    /// The record; a value read from state always has it (`Stored`), so the empty default
    /// stands in only for one built without.
    pub fn record(&self) -> JobRecord {
        self.record.clone().unwrap_or_default()
    }

    /// Its state; a number no state has is damage, never read as some state.
    pub fn lifecycle(&self) -> Result<JobLifecycle, beeline_state::Error> {
        JobLifecycle::from_value(self.state).ok_or_else(|| beeline_state::Error::Decode {
            cf: beeline_state::ColumnFamily::Jobs.name(),
            reason: format!(
                "a job of type '{}' (instance {}) has state {}, which is no job state",
                self.record.as_ref().map_or("", |r| r.r#type.as_str()),
                self.record.as_ref().map_or(0, |r| r.process_instance_key),
                self.state
            ),
        })
    }
}

/// Where a user task is in its lifecycle (Zeebe's `UserTaskState.LifecycleState`): CREATED
/// between transitions, the transition's name while one is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum UserTaskLifecycle {
    Creating = 0,
    Created = 1,
    Assigning = 2,
    Claiming = 3,
    Updating = 4,
    Completing = 5,
    Canceling = 6,
}

impl UserTaskLifecycle {
    pub fn from_value(value: u32) -> Option<Self> {
        use UserTaskLifecycle::*;
        [
            Creating, Created, Assigning, Claiming, Updating, Completing, Canceling,
        ]
        .into_iter()
        .find(|state| *state as u32 == value)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Creating => "CREATING",
            Self::Created => "CREATED",
            Self::Assigning => "ASSIGNING",
            Self::Claiming => "CLAIMING",
            Self::Updating => "UPDATING",
            Self::Completing => "COMPLETING",
            Self::Canceling => "CANCELING",
        }
    }
}

/// A user task with its lifecycle state.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoredUserTask {
    /// The task as its last transition left it (CREATED, ASSIGNED, UPDATED).
    #[prost(message, optional, tag = "1")]
    pub record: Option<UserTaskRecord>,
    #[prost(uint32, tag = "2")]
    pub state: u32,
    /// While a transition is under way: the task as it will be (the transition's record with
    /// its listeners' corrections), and what its listener jobs see.
    #[prost(message, optional, tag = "3")]
    pub intermediate: Option<UserTaskRecord>,
    /// The assignee the model gave the task when it was created (assigned after the
    /// creation); a `creating` listener may not correct it.
    #[prost(string, tag = "4")]
    pub initial_assignee: String,
    /// An update of the task's variables (`SetVariables` on its element instance) waiting
    /// for the `updating` listeners: its key and record.
    #[prost(int64, tag = "5")]
    pub variable_document_key: i64,
    #[prost(message, optional, tag = "6")]
    pub variable_document: Option<VariableDocumentRecord>,
}

impl StoredUserTask {
    /// The record; a value read from state always has it (`Stored`), so the empty default
    /// stands in only for one built without.
    pub fn record(&self) -> UserTaskRecord {
        self.record.clone().unwrap_or_default()
    }

    pub fn lifecycle(&self) -> Option<UserTaskLifecycle> {
        UserTaskLifecycle::from_value(self.state)
    }

    /// The task as the transition under way will leave it (as it is, between transitions).
    pub fn intermediate(&self) -> UserTaskRecord {
        self.intermediate.clone().unwrap_or_else(|| self.record())
    }
}

/// A variable's key and JSON text.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoredVariable {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// The latest version of a process.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LatestVersion {
    #[prost(int32, tag = "1")]
    pub version: i32,
    #[prost(int64, tag = "2")]
    pub key: i64,
}

/// The correlation key an instance started by a message holds.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CorrelationKeyLock {
    #[prost(string, tag = "1")]
    pub bpmn_process_id: String,
    #[prost(string, tag = "2")]
    pub correlation_key: String,
    #[prost(string, tag = "3")]
    pub tenant_id: String,
}

/// A message subscription with its key and whether it waits for a correlation to be
/// confirmed (on the message's partition).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoredMessageSubscription {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(message, optional, tag = "2")]
    pub record: Option<MessageSubscriptionRecord>,
    #[prost(bool, tag = "3")]
    pub correlating: bool,
}

impl StoredMessageSubscription {
    /// The record; a value read from state always has it (`Stored`), so the empty default
    /// stands in only for one built without.
    pub fn record(&self) -> MessageSubscriptionRecord {
        self.record.clone().unwrap_or_default()
    }
}

/// States of a message subscription on the process instance's partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SubscriptionLifecycle {
    /// Asked the message's partition to open it; not confirmed yet.
    Creating = 0,
    Created = 1,
    /// Asked the message's partition to close it; not confirmed yet.
    Deleting = 2,
}

impl SubscriptionLifecycle {
    /// The state stored as `value`, or `None` for a number no state has.
    pub fn from_value(value: u32) -> Option<Self> {
        match value {
            0 => Some(Self::Creating),
            1 => Some(Self::Created),
            2 => Some(Self::Deleting),
            _ => None,
        }
    }
}

/// A message subscription on the process instance's partition, with its key and state.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoredProcessMessageSubscription {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(message, optional, tag = "2")]
    pub record: Option<ProcessMessageSubscriptionRecord>,
    #[prost(uint32, tag = "3")]
    pub state: u32,
}

impl StoredProcessMessageSubscription {
    /// The record; a value read from state always has it (`Stored`), so the empty default
    /// stands in only for one built without.
    pub fn record(&self) -> ProcessMessageSubscriptionRecord {
        self.record.clone().unwrap_or_default()
    }

    /// Its state; a number no state has is damage, never read as some state.
    pub fn lifecycle(&self) -> Result<SubscriptionLifecycle, beeline_state::Error> {
        SubscriptionLifecycle::from_value(self.state).ok_or_else(|| beeline_state::Error::Decode {
            cf: beeline_state::ColumnFamily::ProcessMessageSubscriptions.name(),
            reason: format!(
                "process message subscription {} has state {}, which is no subscription state",
                self.key, self.state
            ),
        })
    }
}

/// A message start event subscription with its key.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StoredMessageStartEventSubscription {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(message, optional, tag = "2")]
    pub record: Option<MessageStartEventSubscriptionRecord>,
}

impl StoredMessageStartEventSubscription {
    /// The record; a value read from state always has it (`Stored`), so the empty default
    /// stands in only for one built without.
    pub fn record(&self) -> MessageStartEventSubscriptionRecord {
        self.record.clone().unwrap_or_default()
    }
}
