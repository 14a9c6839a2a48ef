//! The column families of partition state. Ids are part of the on-disk format: never change or
//! reuse one; a retired family stays listed with a comment saying since when.

macro_rules! column_families {
    ($( $(#[$meta:meta])* $variant:ident = $id:literal; )*) => {
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u16)]
        pub enum ColumnFamily { $( $(#[$meta])* $variant = $id, )* }

        impl ColumnFamily {
            pub const ALL: &'static [ColumnFamily] = &[$(ColumnFamily::$variant),*];

            pub const fn id(self) -> u16 {
                self as u16
            }

            pub const fn name(self) -> &'static str {
                match self {
                    $( ColumnFamily::$variant => stringify!($variant), )*
                }
            }

            pub fn from_id(id: u16) -> Option<Self> {
                match id {
                    $( $id => Some(ColumnFamily::$variant), )*
                    _ => None,
                }
            }

            /// The two-byte prefix of every key in this family.
            pub const fn prefix(self) -> [u8; 2] {
                (self as u16).to_be_bytes()
            }
        }
    };
}

/// The version of the layout the families below make together with their keys and values: raised
/// when one of them changes so that an older build would misread it (docs/architecture.md,
/// "Formats that must stay readable"). Version 1, never marked in the state, kept no tenants
/// in its keys (the families in [`RETIRED_FAMILY_IDS`]); version 2 added them.
pub const STATE_FORMAT_VERSION: u32 = 2;

/// Ids of retired families: never reused. A state of an older format version may still hold
/// them until it is converted at open.
pub const RETIRED_FAMILY_IDS: &[u16] = &[11, 13, 21, 22, 23, 51, 71, 73, 74, 108, 121, 122];

column_families! {
    /// Partition-wide values: last processed position, key generator, format version.
    Meta = 0;
    /// Process instances banned after an unexpected processing error: instance key -> ().
    BannedInstances = 1;
    /// Messages by key: message key -> MessageRecord.
    Messages = 10;
    /// Messages by tenant, name and correlation key: (tenant, name, correlation key, message
    /// key) -> ().
    MessagesByNameAndCorrelationKey = 16;
    /// Message expiry index: (deadline, message key) -> ().
    MessageDeadlines = 12;
    // 11 and 13 are reserved: the by-name and by-id families without the tenant.
    /// Message ids in use: (tenant, name, correlation key, message id) -> message key.
    MessageIds = 14;
    /// Deployed process definitions: definition key -> ProcessRecord.
    ProcessDefinitions = 20;
    // 21 and 22 are reserved: the two families below without the tenant.
    /// Versions of a process: (tenant, bpmn process id, version) -> definition key.
    ProcessVersions = 26;
    /// The latest version of a process: (tenant, bpmn process id) -> (version, definition key).
    LatestProcessVersions = 27;
    // 23 is reserved: a deployments family, never used.
    /// Distributions not yet acknowledged: (distribution key, partition) -> CommandDistributionRecord.
    PendingDistributions = 24;
    /// The highest version an id ever had, once its latest version was deleted (versions are
    /// never given twice): (latest-versions family id, id) -> version.
    DeletedLatestVersions = 25;
    /// Element instances: key -> ElementInstance.
    ElementInstances = 30;
    /// Element instances by flow scope: (flow scope key, child key) -> ().
    ElementInstanceChildren = 31;
    /// Tokens waiting at a joining gateway: (flow scope key, gateway id, flow id) -> count.
    TakenSequenceFlows = 32;
    /// The input collections of multi-instance bodies, evaluated when each was activated:
    /// (body key, index) -> the item as JSON text.
    MultiInstanceInputCollections = 33;
    /// Process instances that run, by their definition: (definition key, instance key) -> ().
    RunningInstancesByDefinition = 34;
    /// Variables: (scope key, name) -> Variable.
    Variables = 40;
    /// The parent of a variable scope: scope key -> parent scope key.
    VariableScopeParents = 41;
    /// Jobs: job key -> Job.
    Jobs = 50;
    // 51 is reserved: the family below without the tenant.
    /// Activatable jobs by type and tenant: (type, tenant, job key) -> ().
    ActivatableJobs = 54;
    /// Deadlines of activated jobs: (deadline, job key) -> ().
    JobDeadlines = 52;
    /// Failed jobs waiting out their retry back-off: (recurring time, job key) -> ().
    JobBackoffs = 53;
    /// Incidents: incident key -> IncidentRecord.
    Incidents = 60;
    /// The incident of an element instance: element instance key -> incident key.
    IncidentsByElementInstance = 61;
    /// The incident of a job: job key -> incident key.
    IncidentsByJob = 62;
    /// Deployed decision requirements graphs: key -> DecisionRequirementsRecord (with resource).
    DecisionRequirements = 70;
    // 71, 73 and 74 are reserved: the three version families below without the tenant.
    /// The latest version of a decision requirements graph: (tenant, its id) -> (version, key).
    LatestDecisionRequirementsVersions = 76;
    /// Deployed decisions: key -> DecisionRecord.
    Decisions = 72;
    /// Versions of a decision: (tenant, decision id, version) -> key.
    DecisionVersions = 77;
    /// The latest version of a decision: (tenant, decision id) -> (version, key).
    LatestDecisionVersions = 78;
    /// The decisions of a decision requirements graph: (graph key, decision id) -> decision key.
    DecisionsByRequirements = 75;
    /// Events waiting for the element instance that catches them: its key -> ProcessEventRecord.
    EventTriggers = 80;
    /// The same, by the instance whose event it is: (scope key, catching instance key) -> ().
    EventTriggersByScope = 81;
    /// Timers: key -> TimerRecord.
    Timers = 90;
    /// Timers by due date: (due date, key) -> ().
    TimerDueDates = 91;
    /// Timers by what they belong to (the element instance, or the process definition of a
    /// timer start event): (scope, key) -> ().
    TimersByScope = 92;
    /// Message subscriptions on the message's partition: (element instance key, message name)
    /// -> stored subscription.
    MessageSubscriptions = 100;
    /// The same by (message name, correlation key, element instance key) -> ().
    MessageSubscriptionsByNameAndCorrelationKey = 101;
    /// Subscriptions waiting for the instance's partition to confirm a correlation:
    /// (element instance key, message name) -> time of the last send.
    MessageSubscriptionsCorrelating = 102;
    /// Message subscriptions on the process instance's partition: (element instance key,
    /// message name) -> stored subscription.
    ProcessMessageSubscriptions = 103;
    /// Those waiting for the message's partition to confirm opening or closing:
    /// (element instance key, message name) -> time of the last send.
    ProcessMessageSubscriptionsPending = 104;
    /// Message start events of the latest process versions: (message name, process definition
    /// key) -> stored subscription.
    MessageStartEventSubscriptions = 105;
    /// The same by (process definition key, message name) -> ().
    MessageStartEventSubscriptionsByProcess = 106;
    /// Which process (by BPMN process id) a message was correlated to: (message key, BPMN
    /// process id) -> ().
    MessageCorrelations = 107;
    // 108 is reserved: the family below without the tenant.
    /// Instances started by a message with a correlation key, one at a time per key:
    /// (tenant, BPMN process id, correlation key) -> process instance key.
    ActiveInstancesByCorrelationKey = 112;
    /// The same, by instance: process instance key -> (tenant, BPMN process id, correlation
    /// key).
    CorrelationKeysByInstance = 109;
    /// Signal subscriptions: (signal name, key) -> SignalSubscriptionRecord.
    SignalSubscriptions = 110;
    /// The same by what they belong to (the element instance, or the process definition of a
    /// signal start event): (scope, key) -> signal name.
    SignalSubscriptionsByScope = 111;
    /// Deployed forms: form key -> FormRecord (with its resource).
    Forms = 120;
    // 121 and 122 are reserved: the two families below without the tenant.
    /// Versions of a form: (tenant, form id, version) -> form key.
    FormVersions = 123;
    /// The latest version of a form: (tenant, form id) -> (version, form key).
    LatestFormVersions = 124;
    /// Camunda user tasks: user task key -> stored user task (record and lifecycle state).
    UserTasks = 130;
    /// What each configured exporter acknowledged: exporter id -> last acknowledged record
    /// position (i64, big-endian). Not a projection of the log: the partition writes it before
    /// each snapshot, so it travels with the snapshot; the log is compacted no further than
    /// the lowest position here.
    Exporters = 140;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for &cf in ColumnFamily::ALL {
            assert!(seen.insert(cf.id()), "{cf:?} reuses id {}", cf.id());
            assert_eq!(ColumnFamily::from_id(cf.id()), Some(cf));
        }
        for &id in RETIRED_FAMILY_IDS {
            assert_eq!(ColumnFamily::from_id(id), None, "retired id {id} is in use");
        }
    }
}
