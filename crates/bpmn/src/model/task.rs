//! Kind-specific data of activities, from Zeebe's extension elements.

use super::event::{MessageRef, PublishMessage};
use super::expression::{ExprOrStatic, FeelSource};

/// `zeebe:header`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskHeader {
    pub key: String,
    pub value: String,
}

/// Everything needed to create a job (`zeebe:taskDefinition` and its companions), as in
/// Zeebe's `JobWorkerProperties`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobWorkerProperties {
    /// `type`.
    pub job_type: ExprOrStatic<String>,
    /// `retries` (Zeebe's default is `"3"`). A static value that is not a number is an
    /// incident at run time in Zeebe, not a deployment error, so it is kept as text.
    pub retries: ExprOrStatic<String>,
    pub task_headers: Vec<TaskHeader>,
    /// `zeebe:jobPriorityDefinition priority`.
    pub job_priority: Option<ExprOrStatic<i32>>,
    /// `zeebe:linkedResources`.
    pub linked_resources: Vec<LinkedResource>,
}

/// `bindingType` of called processes, decisions, forms and linked resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BindingType {
    #[default]
    Latest,
    Deployment,
    VersionTag,
}

impl BindingType {
    pub const NAMES: &'static [&'static str] = &["latest", "deployment", "versionTag"];

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "latest" => Some(BindingType::Latest),
            "deployment" => Some(BindingType::Deployment),
            "versionTag" => Some(BindingType::VersionTag),
            _ => None,
        }
    }
}

/// `zeebe:linkedResource`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedResource {
    pub resource_id: String,
    pub resource_type: String,
    pub link_name: Option<String>,
    pub binding_type: BindingType,
    pub version_tag: Option<String>,
}

/// `zeebe:agentDefinition agentType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentType {
    AiAgentSubProcess,
    AiAgentTask,
    External,
}

impl AgentType {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "aiAgentSubProcess" => Some(AgentType::AiAgentSubProcess),
            "aiAgentTask" => Some(AgentType::AiAgentTask),
            "external" => Some(AgentType::External),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceTask {
    pub job_worker: JobWorkerProperties,
    pub agent_type: Option<AgentType>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendTask {
    JobWorker(JobWorkerProperties),
    /// `zeebe:publishMessage` with the task's `messageRef`.
    PublishMessage {
        message: MessageRef,
        publish: PublishMessage,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiveTask {
    pub message: MessageRef,
}

/// `zeebe:script`: the task evaluates a FEEL expression into a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub expression: FeelSource,
    pub result_variable: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScriptTask {
    Script(Script),
    JobWorker(JobWorkerProperties),
}

/// `zeebe:calledDecision`: the task evaluates a DMN decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalledDecision {
    pub decision_id: ExprOrStatic<String>,
    pub result_variable: String,
    pub binding_type: BindingType,
    pub version_tag: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusinessRuleTask {
    CalledDecision(CalledDecision),
    JobWorker(JobWorkerProperties),
}

/// `zeebe:calledElement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallActivity {
    pub process_id: ExprOrStatic<String>,
    /// Default `true`.
    pub propagate_all_child_variables: bool,
    /// Default `true`.
    pub propagate_all_parent_variables: bool,
    pub binding_type: BindingType,
    pub version_tag: Option<String>,
    pub business_id: Option<ExprOrStatic<String>>,
}

/// `zeebe:formDefinition`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormDefinition {
    /// `formKey` (job-based user tasks, start events): e.g. `camunda-forms:bpmn:form-1`.
    pub form_key: Option<String>,
    /// `formId`: a form deployed separately.
    pub form_id: Option<String>,
    /// `externalReference` (Camunda user tasks).
    pub external_reference: Option<ExprOrStatic<String>>,
    pub binding_type: BindingType,
    pub version_tag: Option<String>,
}

/// `zeebe:assignmentDefinition`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssignmentDefinition {
    pub assignee: Option<ExprOrStatic<String>>,
    /// A static value is a comma-separated list.
    pub candidate_groups: Option<ExprOrStatic<Vec<String>>>,
    pub candidate_users: Option<ExprOrStatic<Vec<String>>>,
}

/// `zeebe:taskSchedule`. Static values are ISO 8601 date-times, checked by the engine.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TaskSchedule {
    pub due_date: Option<ExprOrStatic<String>>,
    pub follow_up_date: Option<ExprOrStatic<String>>,
}

/// `zeebe:taskListener eventType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskListenerEventType {
    Creating,
    Assigning,
    Updating,
    Completing,
    Canceling,
}

impl TaskListenerEventType {
    /// Accepts Zeebe's current names and the deprecated ones (`create`, `assignment`,
    /// `update`, `complete`, `cancel`).
    pub fn parse(value: &str) -> Option<Self> {
        use TaskListenerEventType::*;
        match value {
            "creating" | "create" => Some(Creating),
            "assigning" | "assignment" => Some(Assigning),
            "updating" | "update" => Some(Updating),
            "completing" | "complete" => Some(Completing),
            "canceling" | "cancel" => Some(Canceling),
            _ => None,
        }
    }
}

/// `zeebe:taskListener`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskListener {
    pub event_type: TaskListenerEventType,
    pub job_type: ExprOrStatic<String>,
    pub retries: ExprOrStatic<String>,
}

/// How a user task is executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserTaskImplementation {
    /// `zeebe:userTask` present: the engine manages the task (a "Camunda user task").
    CamundaUserTask,
    /// A job of type `io.camunda.zeebe:userTask` for an external task list.
    JobWorker,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserTask {
    pub implementation: UserTaskImplementation,
    pub form: Option<FormDefinition>,
    pub assignment: AssignmentDefinition,
    pub schedule: TaskSchedule,
    /// `zeebe:priorityDefinition priority`, 0..=100.
    pub priority: Option<ExprOrStatic<i32>>,
    pub task_headers: Vec<TaskHeader>,
    pub task_listeners: Vec<TaskListener>,
}

/// `zeebe:adHoc` and the ad-hoc sub-process's own attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdHocSubProcess {
    /// `activeElementsCollection`: the ids of the inner elements to activate.
    pub active_elements_collection: Option<FeelSource>,
    /// `bpmn:completionCondition`.
    pub completion_condition: Option<FeelSource>,
    /// `cancelRemainingInstances` (default `true`).
    pub cancel_remaining_instances: bool,
    pub output_collection: Option<String>,
    pub output_element: Option<FeelSource>,
    /// A `zeebe:taskDefinition` on the sub-process: a job worker decides what to activate.
    pub job_worker: Option<JobWorkerProperties>,
    pub agent_type: Option<AgentType>,
}

/// `bpmn:multiInstanceLoopCharacteristics` with `zeebe:loopCharacteristics`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiInstance {
    pub is_sequential: bool,
    /// Always an expression.
    pub input_collection: FeelSource,
    pub input_element: Option<String>,
    pub output_collection: Option<String>,
    pub output_element: Option<FeelSource>,
    pub completion_condition: Option<ExprOrStatic<String>>,
}
