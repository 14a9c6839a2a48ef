//! Value types and intents with Zeebe's fixed numbers.
//!
//! Numbers are part of the log format and of Zeebe's wire protocol: they never change and are
//! never reused. A retired intent stays listed, with a comment saying since when. Each intent is
//! declared an `event`, a `command`, or a `command_no_ban` (a client's command whose failure must
//! not ban the process instance, as in Zeebe), so adding one forces that decision.

macro_rules! intents {
    (@event event) => { true };
    (@event command) => { false };
    (@event command_no_ban) => { false };
    (@ban event) => { true };
    (@ban command) => { true };
    (@ban command_no_ban) => { false };
    ($(
        $(#[$meta:meta])*
        $name:ident {
            $( $variant:ident = $value:literal, $kind:ident, $text:literal; )*
        }
    )*) => { $(
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum $name { $( $variant = $value, )* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            pub const fn value(self) -> u8 {
                self as u8
            }

            pub const fn from_value(value: u8) -> Option<Self> {
                match value {
                    $( $value => Some(Self::$variant), )*
                    _ => None,
                }
            }

            pub const fn is_event(self) -> bool {
                match self {
                    $( Self::$variant => intents!(@event $kind), )*
                }
            }

            /// Whether an unexpected failure while processing this command bans the instance.
            pub const fn bans_instance_on_error(self) -> bool {
                match self {
                    $( Self::$variant => intents!(@ban $kind), )*
                }
            }

            /// The name Zeebe gives this intent in records and exports.
            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )*
                }
            }

            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $text => Some(Self::$variant), )*
                    _ => None,
                }
            }
        }
    )* };
}

macro_rules! value_types {
    ($( $variant:ident = $value:literal, $text:literal, $intent:ident; )*) => {
        /// The kind of value a record carries.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum ValueType { $( $variant = $value, )* }

        impl ValueType {
            pub const ALL: &'static [ValueType] = &[$(ValueType::$variant),*];

            pub const fn value(self) -> u8 {
                self as u8
            }

            pub const fn from_value(value: u8) -> Option<Self> {
                match value {
                    $( $value => Some(Self::$variant), )*
                    _ => None,
                }
            }

            pub const fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => $text, )*
                }
            }

            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( $text => Some(Self::$variant), )*
                    _ => None,
                }
            }
        }

        /// An intent together with its value type.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Intent { $( $variant($intent), )* }

        impl Intent {
            pub const fn value_type(self) -> ValueType {
                match self {
                    $( Intent::$variant(_) => ValueType::$variant, )*
                }
            }

            pub const fn value(self) -> u8 {
                match self {
                    $( Intent::$variant(i) => i.value(), )*
                }
            }

            pub const fn is_event(self) -> bool {
                match self {
                    $( Intent::$variant(i) => i.is_event(), )*
                }
            }

            pub const fn bans_instance_on_error(self) -> bool {
                match self {
                    $( Intent::$variant(i) => i.bans_instance_on_error(), )*
                }
            }

            pub const fn name(self) -> &'static str {
                match self {
                    $( Intent::$variant(i) => i.name(), )*
                }
            }

            /// The intent numbered `value` within `value_type`, if there is one.
            pub fn from_parts(value_type: ValueType, value: u8) -> Option<Self> {
                match value_type {
                    $( ValueType::$variant => $intent::from_value(value).map(Intent::$variant), )*
                }
            }

            pub fn from_name(value_type: ValueType, name: &str) -> Option<Self> {
                match value_type {
                    $( ValueType::$variant => $intent::from_name(name).map(Intent::$variant), )*
                }
            }
        }

        $(
            impl From<$intent> for Intent {
                fn from(intent: $intent) -> Self {
                    Intent::$variant(intent)
                }
            }
        )*
    };
}

value_types! {
    Job = 0, "JOB", JobIntent;
    // 1..=3 were used by Zeebe before 0.20 (RAFT, SUBSCRIBER, SUBSCRIPTION); never reuse them.
    Deployment = 4, "DEPLOYMENT", DeploymentIntent;
    ProcessInstance = 5, "PROCESS_INSTANCE", ProcessInstanceIntent;
    Incident = 6, "INCIDENT", IncidentIntent;
    // 7..=9 and 13 are retired Zeebe value types; never reuse them.
    Message = 10, "MESSAGE", MessageIntent;
    MessageSubscription = 11, "MESSAGE_SUBSCRIPTION", MessageSubscriptionIntent;
    ProcessMessageSubscription = 12, "PROCESS_MESSAGE_SUBSCRIPTION", ProcessMessageSubscriptionIntent;
    JobBatch = 14, "JOB_BATCH", JobBatchIntent;
    Timer = 15, "TIMER", TimerIntent;
    MessageStartEventSubscription = 16, "MESSAGE_START_EVENT_SUBSCRIPTION", MessageStartEventSubscriptionIntent;
    Variable = 17, "VARIABLE", VariableIntent;
    VariableDocument = 18, "VARIABLE_DOCUMENT", VariableDocumentIntent;
    ProcessInstanceCreation = 19, "PROCESS_INSTANCE_CREATION", ProcessInstanceCreationIntent;
    Error = 20, "ERROR", ErrorIntent;
    ProcessInstanceResult = 21, "PROCESS_INSTANCE_RESULT", ProcessInstanceResultIntent;
    Process = 22, "PROCESS", ProcessIntent;
    DeploymentDistribution = 23, "DEPLOYMENT_DISTRIBUTION", DeploymentDistributionIntent;
    ProcessEvent = 24, "PROCESS_EVENT", ProcessEventIntent;
    Decision = 25, "DECISION", DecisionIntent;
    DecisionRequirements = 26, "DECISION_REQUIREMENTS", DecisionRequirementsIntent;
    DecisionEvaluation = 27, "DECISION_EVALUATION", DecisionEvaluationIntent;
    ProcessInstanceModification = 28, "PROCESS_INSTANCE_MODIFICATION", ProcessInstanceModificationIntent;
    Escalation = 29, "ESCALATION", EscalationIntent;
    SignalSubscription = 30, "SIGNAL_SUBSCRIPTION", SignalSubscriptionIntent;
    Signal = 31, "SIGNAL", SignalIntent;
    ResourceDeletion = 32, "RESOURCE_DELETION", ResourceDeletionIntent;
    CommandDistribution = 33, "COMMAND_DISTRIBUTION", CommandDistributionIntent;
    ProcessInstanceBatch = 34, "PROCESS_INSTANCE_BATCH", ProcessInstanceBatchIntent;
    MessageBatch = 35, "MESSAGE_BATCH", MessageBatchIntent;
    Form = 36, "FORM", FormIntent;
    UserTask = 37, "USER_TASK", UserTaskIntent;
    ProcessInstanceMigration = 38, "PROCESS_INSTANCE_MIGRATION", ProcessInstanceMigrationIntent;
    CompensationSubscription = 39, "COMPENSATION_SUBSCRIPTION", CompensationSubscriptionIntent;
    MessageCorrelation = 40, "MESSAGE_CORRELATION", MessageCorrelationIntent;
    Clock = 42, "CLOCK", ClockIntent;
    Resource = 49, "RESOURCE", ResourceIntent;
    MultiInstance = 58, "MULTI_INSTANCE", MultiInstanceIntent;
}

intents! {
    JobIntent {
        Created = 0, event, "CREATED";
        Complete = 1, command_no_ban, "COMPLETE";
        Completed = 2, event, "COMPLETED";
        TimeOut = 3, command, "TIME_OUT";
        TimedOut = 4, event, "TIMED_OUT";
        Fail = 5, command_no_ban, "FAIL";
        Failed = 6, event, "FAILED";
        UpdateRetries = 7, command_no_ban, "UPDATE_RETRIES";
        RetriesUpdated = 8, event, "RETRIES_UPDATED";
        // CANCEL (9) is deprecated since Zeebe 8.0.2; kept so old logs still decode.
        Cancel = 9, command, "CANCEL";
        Canceled = 10, event, "CANCELED";
        ThrowError = 11, command_no_ban, "THROW_ERROR";
        ErrorThrown = 12, event, "ERROR_THROWN";
        RecurAfterBackoff = 13, command, "RECUR_AFTER_BACKOFF";
        RecurredAfterBackoff = 14, event, "RECURRED_AFTER_BACKOFF";
        Yield = 15, command, "YIELD";
        Yielded = 16, event, "YIELDED";
        UpdateTimeout = 17, command, "UPDATE_TIMEOUT";
        TimeoutUpdated = 18, event, "TIMEOUT_UPDATED";
        Migrated = 19, event, "MIGRATED";
        Update = 20, command, "UPDATE";
        Updated = 21, event, "UPDATED";
    }

    DeploymentIntent {
        Create = 0, command, "CREATE";
        Created = 1, event, "CREATED";
        // 2..=4 (DISTRIBUTE, DISTRIBUTED, FULLY_DISTRIBUTED) are deprecated since Zeebe 8.3,
        // replaced by command distribution; kept so old logs still decode.
        Distribute = 2, command, "DISTRIBUTE";
        Distributed = 3, event, "DISTRIBUTED";
        FullyDistributed = 4, event, "FULLY_DISTRIBUTED";
        Reconstruct = 5, command, "RECONSTRUCT";
        Reconstructed = 6, event, "RECONSTRUCTED";
    }

    ProcessInstanceIntent {
        Cancel = 0, command_no_ban, "CANCEL";
        SequenceFlowTaken = 1, event, "SEQUENCE_FLOW_TAKEN";
        ElementActivating = 2, event, "ELEMENT_ACTIVATING";
        ElementActivated = 3, event, "ELEMENT_ACTIVATED";
        ElementCompleting = 4, event, "ELEMENT_COMPLETING";
        ElementCompleted = 5, event, "ELEMENT_COMPLETED";
        ElementTerminating = 6, event, "ELEMENT_TERMINATING";
        ElementTerminated = 7, event, "ELEMENT_TERMINATED";
        ActivateElement = 8, command, "ACTIVATE_ELEMENT";
        CompleteElement = 9, command, "COMPLETE_ELEMENT";
        TerminateElement = 10, command, "TERMINATE_ELEMENT";
        ElementMigrated = 11, event, "ELEMENT_MIGRATED";
        CompleteExecutionListener = 12, command, "COMPLETE_EXECUTION_LISTENER";
        AncestorMigrated = 13, event, "ANCESTOR_MIGRATED";
        ContinueTerminatingElement = 14, command, "CONTINUE_TERMINATING_ELEMENT";
        SequenceFlowDeleted = 15, event, "SEQUENCE_FLOW_DELETED";
        Canceling = 16, event, "CANCELING";
        Suspend = 17, command_no_ban, "SUSPEND";
        Suspended = 18, event, "SUSPENDED";
        Resume = 19, command_no_ban, "RESUME";
        Resumed = 20, event, "RESUMED";
        Resuming = 21, event, "RESUMING";
    }

    IncidentIntent {
        Created = 0, event, "CREATED";
        Resolve = 1, command_no_ban, "RESOLVE";
        Resolved = 2, event, "RESOLVED";
        Migrated = 3, event, "MIGRATED";
    }

    MessageIntent {
        Publish = 0, command, "PUBLISH";
        Published = 1, event, "PUBLISHED";
        Expire = 2, command, "EXPIRE";
        Expired = 3, event, "EXPIRED";
    }

    MessageSubscriptionIntent {
        Create = 0, command, "CREATE";
        Created = 1, event, "CREATED";
        Correlate = 2, command, "CORRELATE";
        Correlated = 3, event, "CORRELATED";
        Reject = 4, command, "REJECT";
        Rejected = 5, event, "REJECTED";
        Delete = 6, command, "DELETE";
        Deleted = 7, event, "DELETED";
        Correlating = 8, event, "CORRELATING";
        Migrate = 9, command, "MIGRATE";
        Migrated = 10, event, "MIGRATED";
    }

    ProcessMessageSubscriptionIntent {
        Creating = 0, event, "CREATING";
        Create = 1, command, "CREATE";
        Created = 2, event, "CREATED";
        Correlate = 3, command, "CORRELATE";
        Correlated = 4, event, "CORRELATED";
        Deleting = 5, event, "DELETING";
        Delete = 6, command, "DELETE";
        Deleted = 7, event, "DELETED";
        Migrating = 8, event, "MIGRATING";
        Migrate = 9, command, "MIGRATE";
        Migrated = 10, event, "MIGRATED";
    }

    JobBatchIntent {
        Activate = 0, command, "ACTIVATE";
        Activated = 1, event, "ACTIVATED";
        Acknowledge = 2, command, "ACKNOWLEDGE";
        Acknowledged = 3, event, "ACKNOWLEDGED";
        Reject = 4, command, "REJECT";
        Rejected = 5, event, "REJECTED";
    }

    TimerIntent {
        Created = 0, event, "CREATED";
        Trigger = 1, command, "TRIGGER";
        Triggered = 2, event, "TRIGGERED";
        // CANCEL (3) is deprecated in Zeebe; kept so old logs still decode.
        Cancel = 3, command, "CANCEL";
        Canceled = 4, event, "CANCELED";
        Migrated = 5, event, "MIGRATED";
    }

    MessageStartEventSubscriptionIntent {
        Created = 0, event, "CREATED";
        Correlated = 1, event, "CORRELATED";
        Deleted = 2, event, "DELETED";
    }

    VariableIntent {
        Created = 0, event, "CREATED";
        Updated = 1, event, "UPDATED";
        Migrated = 2, event, "MIGRATED";
        Creating = 3, event, "CREATING";
        Updating = 4, event, "UPDATING";
    }

    VariableDocumentIntent {
        Update = 0, command, "UPDATE";
        Updated = 1, event, "UPDATED";
        Updating = 2, event, "UPDATING";
        UpdateDenied = 3, event, "UPDATE_DENIED";
    }

    ProcessInstanceCreationIntent {
        Create = 0, command_no_ban, "CREATE";
        Created = 1, event, "CREATED";
        CreateWithAwaitingResult = 2, command_no_ban, "CREATE_WITH_AWAITING_RESULT";
    }

    ErrorIntent {
        Created = 0, event, "CREATED";
    }

    ProcessInstanceResultIntent {
        Completed = 0, event, "COMPLETED";
    }

    ProcessIntent {
        Created = 0, event, "CREATED";
        Deleting = 1, event, "DELETING";
        Deleted = 2, event, "DELETED";
        Draining = 3, event, "DRAINING";
        DeleteComplete = 4, command, "DELETE_COMPLETE";
        DeleteCompleted = 5, event, "DELETE_COMPLETED";
        FullyDeleted = 6, event, "FULLY_DELETED";
    }

    /// Deprecated as a whole since Zeebe 8.3 (replaced by command distribution).
    DeploymentDistributionIntent {
        Distributing = 0, event, "DISTRIBUTING";
        Complete = 1, command, "COMPLETE";
        Completed = 2, event, "COMPLETED";
    }

    ProcessEventIntent {
        Triggering = 0, event, "TRIGGERING";
        Triggered = 1, event, "TRIGGERED";
    }

    DecisionIntent {
        Created = 0, event, "CREATED";
        Deleted = 1, event, "DELETED";
    }

    DecisionRequirementsIntent {
        Created = 0, event, "CREATED";
        Deleted = 1, event, "DELETED";
    }

    DecisionEvaluationIntent {
        Evaluated = 0, event, "EVALUATED";
        Failed = 1, event, "FAILED";
        Evaluate = 2, command, "EVALUATE";
    }

    ProcessInstanceModificationIntent {
        Modify = 0, command, "MODIFY";
        Modified = 1, event, "MODIFIED";
    }

    EscalationIntent {
        Escalated = 0, event, "ESCALATED";
        NotEscalated = 1, event, "NOT_ESCALATED";
    }

    SignalSubscriptionIntent {
        Created = 0, event, "CREATED";
        Deleted = 1, event, "DELETED";
        Migrated = 2, event, "MIGRATED";
    }

    SignalIntent {
        Broadcast = 0, command, "BROADCAST";
        Broadcasted = 1, event, "BROADCASTED";
    }

    ResourceDeletionIntent {
        Delete = 0, command, "DELETE";
        Deleting = 1, event, "DELETING";
        Deleted = 2, event, "DELETED";
    }

    CommandDistributionIntent {
        Started = 0, event, "STARTED";
        Distributing = 1, event, "DISTRIBUTING";
        Acknowledge = 2, command, "ACKNOWLEDGE";
        Acknowledged = 3, event, "ACKNOWLEDGED";
        Finished = 4, event, "FINISHED";
        Enqueued = 5, event, "ENQUEUED";
        ContinuationRequested = 6, event, "CONTINUATION_REQUESTED";
        Continued = 7, event, "CONTINUED";
        Finish = 8, command, "FINISH";
        Continue = 9, command, "CONTINUE";
    }

    ProcessInstanceBatchIntent {
        Terminate = 0, command, "TERMINATE";
        Activate = 1, command, "ACTIVATE";
        Terminated = 2, event, "TERMINATED";
        Activated = 3, event, "ACTIVATED";
    }

    MultiInstanceIntent {
        InputCollectionEvaluated = 0, event, "INPUT_COLLECTION_EVALUATED";
    }

    MessageBatchIntent {
        Expire = 0, command, "EXPIRE";
    }

    FormIntent {
        Created = 0, event, "CREATED";
        Deleted = 1, event, "DELETED";
    }

    UserTaskIntent {
        Creating = 0, event, "CREATING";
        Created = 1, event, "CREATED";
        Complete = 2, command_no_ban, "COMPLETE";
        Completing = 3, event, "COMPLETING";
        Completed = 4, event, "COMPLETED";
        Canceling = 5, event, "CANCELING";
        Canceled = 6, event, "CANCELED";
        Assign = 7, command, "ASSIGN";
        Assigning = 8, event, "ASSIGNING";
        Assigned = 9, event, "ASSIGNED";
        Claim = 10, command, "CLAIM";
        Update = 11, command, "UPDATE";
        Updating = 12, event, "UPDATING";
        Updated = 13, event, "UPDATED";
        Migrated = 14, event, "MIGRATED";
        CompleteTaskListener = 15, command, "COMPLETE_TASK_LISTENER";
        DenyTaskListener = 16, command, "DENY_TASK_LISTENER";
        CompletionDenied = 17, event, "COMPLETION_DENIED";
        Corrected = 18, event, "CORRECTED";
        AssignmentDenied = 19, event, "ASSIGNMENT_DENIED";
        Claiming = 20, event, "CLAIMING";
        UpdateDenied = 21, event, "UPDATE_DENIED";
        Create = 22, command, "CREATE";
        Cancel = 23, command, "CANCEL";
    }

    ProcessInstanceMigrationIntent {
        Migrate = 0, command_no_ban, "MIGRATE";
        Migrated = 1, event, "MIGRATED";
    }

    CompensationSubscriptionIntent {
        Created = 0, event, "CREATED";
        Triggered = 1, event, "TRIGGERED";
        Completed = 2, event, "COMPLETED";
        Deleted = 3, event, "DELETED";
        Migrated = 4, event, "MIGRATED";
    }

    MessageCorrelationIntent {
        Correlate = 1, command, "CORRELATE";
        Correlated = 2, event, "CORRELATED";
        NotCorrelated = 3, event, "NOT_CORRELATED";
    }

    ClockIntent {
        Pin = 0, command, "PIN";
        Pinned = 1, event, "PINNED";
        Reset = 2, command, "RESET";
        Resetted = 3, event, "RESETTED";
    }

    ResourceIntent {
        Created = 0, event, "CREATED";
        Deleted = 1, event, "DELETED";
        Fetch = 2, command, "FETCH";
        Fetched = 3, event, "FETCHED";
        Reexported = 4, event, "REEXPORTED";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_intent_round_trips_through_its_number_and_name() {
        for &value_type in ValueType::ALL {
            assert_eq!(ValueType::from_value(value_type.value()), Some(value_type));
            assert_eq!(ValueType::from_name(value_type.name()), Some(value_type));
            let mut found = 0;
            for value in 0..=u8::MAX {
                if let Some(intent) = Intent::from_parts(value_type, value) {
                    found += 1;
                    assert_eq!(intent.value(), value);
                    assert_eq!(intent.value_type(), value_type);
                    assert_eq!(Intent::from_name(value_type, intent.name()), Some(intent));
                }
            }
            assert!(found > 0, "{value_type:?} has intents");
        }
    }

    #[test]
    fn numbers_match_zeebe() {
        assert_eq!(ValueType::ProcessInstance.value(), 5);
        assert_eq!(ValueType::Message.value(), 10);
        assert_eq!(ValueType::CommandDistribution.value(), 33);
        assert_eq!(JobIntent::Completed.value(), 2);
        assert_eq!(ProcessInstanceIntent::ActivateElement.value(), 8);
        assert!(ProcessInstanceIntent::ElementActivated.is_event());
        assert!(!ProcessInstanceIntent::ActivateElement.is_event());
        assert!(!JobIntent::Complete.bans_instance_on_error());
        assert!(ProcessInstanceIntent::ActivateElement.bans_instance_on_error());
        assert_eq!(Intent::from(MessageIntent::Expired).name(), "EXPIRED");
    }
}
