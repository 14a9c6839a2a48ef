//! What the read side can be asked: the searchable entities with their fields (Camunda 8.8's
//! names), filters with the API's operators, sorts, pages and cursors; and the seam a store
//! answers them through.

use std::future::Future;
use std::pin::Pin;

use crate::rows::Value;

/// How a field's value is compared, and how it is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An entity key: a string of digits in JSON, an integer in storage.
    Key,
    Str,
    Int,
    /// Epoch milliseconds in storage, RFC 3339 text in JSON.
    Date,
    Bool,
    /// One of the listed values.
    Enum(&'static [&'static str]),
    /// A JSON document stored as text, shown as it is.
    Json,
    /// A JSON array of strings stored as text, shown as an array; a filter matches when one of
    /// its strings does (`$neq`, `$notIn` and `$exists: false` when none does).
    StrList,
}

#[derive(Debug)]
pub struct Field {
    /// The API's name.
    pub name: &'static str,
    /// The SQL expression over the entity's table, aliased `t`.
    pub expr: &'static str,
    pub kind: Kind,
    pub filter: bool,
    pub sort: bool,
    /// Shown in results.
    pub item: bool,
}

#[derive(Debug)]
pub struct Entity {
    /// The API's name of the resource (`process-instances`).
    pub name: &'static str,
    pub table: &'static str,
    pub fields: &'static [Field],
    /// The field that identifies a row: the last sort key and the GET key.
    pub key: &'static str,
    /// The variable filters the entity takes: (the filter property, which variables it looks
    /// at: an SQL condition over the variable `v` and the entity's row `t`).
    pub variable_filters: &'static [(&'static str, &'static str)],
    /// Whether the filter takes `$or` (process instances).
    pub or: bool,
}

impl Entity {
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    pub fn key_field(&self) -> &'static Field {
        match self.field(self.key) {
            Some(field) => field,
            None => &self.fields[0],
        }
    }

    pub fn items(&self) -> impl Iterator<Item = &'static Field> {
        self.fields.iter().filter(|f| f.item)
    }
}

/// A filter operator with its operand(s), already checked against the field's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Eq(Value),
    Neq(Value),
    Exists(bool),
    In(Vec<Value>),
    NotIn(Vec<Value>),
    /// `*` any run of characters, `?` one, `\` escapes.
    Like(String),
    Gt(Value),
    Gte(Value),
    Lt(Value),
    Lte(Value),
}

#[derive(Debug, Clone)]
pub enum Condition {
    Field(&'static Field, Op),
    /// A variable (of those the SQL condition picks, see [`Entity::variable_filters`]) with
    /// this name whose JSON text matches.
    Variable(&'static str, String, Op),
    /// Any of the groups, each all of its conditions.
    Or(Vec<Vec<Condition>>),
    /// Variables visible from this element instance: in its scope or one of its flow scopes,
    /// up to its process instance.
    VisibleFrom(i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Asc,
    Desc,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Page {
    Offset {
        from: u64,
        limit: u64,
    },
    /// Rows after the cursor's row, in the sort order.
    After {
        cursor: Vec<Value>,
        limit: u64,
    },
    /// Rows before the cursor's row.
    Before {
        cursor: Vec<Value>,
        limit: u64,
    },
}

impl Page {
    pub fn limit(&self) -> u64 {
        match self {
            Page::Offset { limit, .. } | Page::After { limit, .. } | Page::Before { limit, .. } => {
                *limit
            }
        }
    }
}

#[derive(Debug, Clone)]
pub struct Query {
    pub entity: &'static Entity,
    pub conditions: Vec<Condition>,
    /// The requested sort; the entity's key is always added last, so the order is total.
    pub sort: Vec<(&'static Field, Order)>,
    pub page: Page,
}

impl Query {
    pub fn new(entity: &'static Entity) -> Self {
        Self {
            entity,
            conditions: Vec::new(),
            sort: Vec::new(),
            page: Page::Offset {
                from: 0,
                limit: DEFAULT_LIMIT,
            },
        }
    }

    /// The query for one row by its key.
    pub fn by_key(entity: &'static Entity, key: Value) -> Self {
        let mut query = Self::new(entity);
        query
            .conditions
            .push(Condition::Field(entity.key_field(), Op::Eq(key)));
        query.page = Page::Offset { from: 0, limit: 1 };
        query
    }

    /// The sort as it is run: the requested fields, then the key.
    pub fn full_sort(&self) -> Vec<(&'static Field, Order)> {
        let key = self.entity.key_field();
        let mut sort = self.sort.clone();
        if !sort.iter().any(|(f, _)| std::ptr::eq(*f, key)) {
            sort.push((key, Order::Asc));
        }
        sort
    }
}

pub const DEFAULT_LIMIT: u64 = 100;
/// The most rows one page returns.
pub const MAX_LIMIT: u64 = 10_000;
/// `totalItems` counts no further; beyond, `hasMoreTotalItems` is true.
pub const MAX_TOTAL: u64 = 10_000;

/// One page of results.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results {
    /// Each row's cells, in the order of [`Entity::items`].
    pub rows: Vec<Vec<Value>>,
    /// Each row's sort values (for cursors), in the order of [`Query::full_sort`].
    pub sort_values: Vec<Vec<Value>>,
    pub total: u64,
    pub has_more_total: bool,
}

impl Results {
    /// A page from the rows a store read for [`crate::sql::select`] (item cells, then sort
    /// values; a `before` page in reverse order) and the count of [`crate::sql::count`].
    pub fn assemble(query: &Query, mut found: Vec<Vec<Value>>, count: u64) -> Self {
        if matches!(query.page, Page::Before { .. }) {
            found.reverse();
        }
        let items = query.entity.items().count();
        let mut results = Results::default();
        for mut row in found {
            results
                .sort_values
                .push(row.split_off(items.min(row.len())));
            results.rows.push(row);
        }
        results.has_more_total = count > MAX_TOTAL;
        results.total = count.min(MAX_TOTAL);
        results
    }
}

/// Per element of one process instance: what its element instances are doing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Statistic {
    pub element_id: String,
    pub active: u64,
    pub canceled: u64,
    pub incidents: u64,
    pub completed: u64,
}

impl Statistic {
    /// A row of [`crate::sql::element_statistics`].
    pub fn from_row(row: &[Value]) -> Self {
        let count = |i: usize| match row.get(i) {
            Some(Value::Int(n)) => (*n).max(0) as u64,
            _ => 0,
        };
        Statistic {
            element_id: match row.first() {
                Some(Value::Text(s)) => s.clone(),
                _ => String::new(),
            },
            active: count(1),
            canceled: count(2),
            incidents: count(3),
            completed: count(4),
        }
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum SearchError {
    /// The store cannot answer now (unreachable, overloaded).
    #[error("secondary storage is unavailable: {0}")]
    Unavailable(String),
    #[error("secondary storage failed: {0}")]
    Internal(String),
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The read side of secondary storage, as the gateway sees it (the node wires the store).
pub trait SearchStore: Send + Sync + 'static {
    fn search(&self, query: Query) -> BoxFuture<'_, Result<Results, SearchError>>;

    /// Per element, over the process instances a query of [`PROCESS_INSTANCES`] selects (its
    /// sort and page do not apply): active, canceled, incident and completed counts.
    fn element_statistics(
        &self,
        instances: Query,
    ) -> BoxFuture<'_, Result<Vec<Statistic>, SearchError>>;
}

macro_rules! field {
    ($name:literal, $expr:literal, $kind:expr) => {
        Field {
            name: $name,
            expr: $expr,
            kind: $kind,
            filter: true,
            sort: true,
            item: true,
        }
    };
    ($name:literal, $expr:literal, $kind:expr, filter_only) => {
        Field {
            name: $name,
            expr: $expr,
            kind: $kind,
            filter: true,
            sort: false,
            item: false,
        }
    };
    ($name:literal, $expr:literal, $kind:expr, item_only) => {
        Field {
            name: $name,
            expr: $expr,
            kind: $kind,
            filter: false,
            sort: false,
            item: true,
        }
    };
    ($name:literal, $expr:literal, $kind:expr, no_filter) => {
        Field {
            name: $name,
            expr: $expr,
            kind: $kind,
            filter: false,
            sort: true,
            item: true,
        }
    };
    ($name:literal, $expr:literal, $kind:expr, no_sort) => {
        Field {
            name: $name,
            expr: $expr,
            kind: $kind,
            filter: true,
            sort: false,
            item: true,
        }
    };
}

const INSTANCE_STATES: &[&str] = &["ACTIVE", "COMPLETED", "TERMINATED"];
const INCIDENT_STATES: &[&str] = &["ACTIVE", "MIGRATED", "RESOLVED", "PENDING"];
const JOB_STATES: &[&str] = &[
    "CREATED",
    "COMPLETED",
    "FAILED",
    "RETRIES_UPDATED",
    "TIMED_OUT",
    "CANCELED",
    "ERROR_THROWN",
    "MIGRATED",
];
const JOB_KINDS: &[&str] = &[
    "BPMN_ELEMENT",
    "EXECUTION_LISTENER",
    "TASK_LISTENER",
    "AD_HOC_SUB_PROCESS",
];
const USER_TASK_STATES: &[&str] = &[
    "CREATING",
    "CREATED",
    "ASSIGNING",
    "UPDATING",
    "COMPLETING",
    "COMPLETED",
    "CANCELING",
    "CANCELED",
    "FAILED",
];
const DECISION_STATES: &[&str] = &["EVALUATED", "FAILED", "UNSPECIFIED", "UNKNOWN"];

pub static PROCESS_INSTANCES: Entity = Entity {
    name: "process-instances",
    table: "process_instance",
    key: "processInstanceKey",
    variable_filters: &[("variables", "v.process_instance_key = t.key")],
    or: true,
    fields: &[
        field!("processInstanceKey", "t.key", Kind::Key),
        field!("processDefinitionId", "t.bpmn_process_id", Kind::Str),
        field!("processDefinitionName", "t.name", Kind::Str),
        field!("processDefinitionVersion", "t.version", Kind::Int),
        field!("processDefinitionVersionTag", "t.version_tag", Kind::Str),
        field!(
            "processDefinitionKey",
            "t.process_definition_key",
            Kind::Key
        ),
        field!(
            "parentProcessInstanceKey",
            "t.parent_process_instance_key",
            Kind::Key
        ),
        field!(
            "parentElementInstanceKey",
            "t.parent_element_instance_key",
            Kind::Key
        ),
        field!("startDate", "t.start_date", Kind::Date),
        field!("endDate", "t.end_date", Kind::Date),
        field!("state", "t.state", Kind::Enum(INSTANCE_STATES)),
        field!(
            "hasIncident",
            "(CASE WHEN EXISTS (SELECT 1 FROM incident i WHERE i.process_instance_key = t.key AND i.state = 'ACTIVE') THEN 1 ELSE 0 END)",
            Kind::Bool
        ),
        field!("tenantId", "t.tenant_id", Kind::Str),
        field!("tags", "t.tags", Kind::StrList, no_sort),
    ],
};

pub static ELEMENT_INSTANCES: Entity = Entity {
    name: "element-instances",
    table: "element_instance",
    key: "elementInstanceKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("elementInstanceKey", "t.key", Kind::Key),
        field!("processInstanceKey", "t.process_instance_key", Kind::Key),
        field!(
            "processDefinitionKey",
            "t.process_definition_key",
            Kind::Key
        ),
        field!("processDefinitionId", "t.bpmn_process_id", Kind::Str),
        field!("elementId", "t.element_id", Kind::Str),
        field!("elementName", "t.element_name", Kind::Str),
        field!("type", "t.type", Kind::Str),
        field!("state", "t.state", Kind::Enum(INSTANCE_STATES)),
        field!("startDate", "t.start_date", Kind::Date),
        field!("endDate", "t.end_date", Kind::Date),
        field!(
            "hasIncident",
            "(CASE WHEN EXISTS (SELECT 1 FROM incident i WHERE i.element_instance_key = t.key AND i.state = 'ACTIVE') THEN 1 ELSE 0 END)",
            Kind::Bool
        ),
        field!(
            "incidentKey",
            "(SELECT MAX(i.key) FROM incident i WHERE i.element_instance_key = t.key AND i.state = 'ACTIVE')",
            Kind::Key
        ),
        field!(
            "elementInstanceScopeKey",
            "t.flow_scope_key",
            Kind::Key,
            filter_only
        ),
        field!("tenantId", "t.tenant_id", Kind::Str),
    ],
};

pub static VARIABLES: Entity = Entity {
    name: "variables",
    table: "variable",
    key: "variableKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("variableKey", "t.key", Kind::Key),
        field!("name", "t.name", Kind::Str),
        field!("value", "t.value", Kind::Str),
        field!(
            "isTruncated",
            "(CASE WHEN length(t.value) > 8192 THEN 1 ELSE 0 END)",
            Kind::Bool,
            filter_only
        ),
        field!("scopeKey", "t.scope_key", Kind::Key),
        field!("processInstanceKey", "t.process_instance_key", Kind::Key),
        field!("tenantId", "t.tenant_id", Kind::Str),
    ],
};

/// The variables a user task sees (`POST /v2/user-tasks/{key}/variables/search`, with a
/// [`Condition::VisibleFrom`] its element instance): filtered by name only.
pub static USER_TASK_VARIABLES: Entity = Entity {
    name: "variables",
    table: "variable",
    key: "variableKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("variableKey", "t.key", Kind::Key, no_filter),
        field!("name", "t.name", Kind::Str),
        field!("value", "t.value", Kind::Str, no_filter),
        field!("scopeKey", "t.scope_key", Kind::Key, no_filter),
        field!(
            "processInstanceKey",
            "t.process_instance_key",
            Kind::Key,
            no_filter
        ),
        field!("tenantId", "t.tenant_id", Kind::Str, no_filter),
    ],
};

pub static INCIDENTS: Entity = Entity {
    name: "incidents",
    table: "incident",
    key: "incidentKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("incidentKey", "t.key", Kind::Key),
        field!(
            "processDefinitionKey",
            "t.process_definition_key",
            Kind::Key
        ),
        field!("processDefinitionId", "t.bpmn_process_id", Kind::Str),
        field!("processInstanceKey", "t.process_instance_key", Kind::Key),
        field!("errorType", "t.error_type", Kind::Str),
        field!("errorMessage", "t.error_message", Kind::Str),
        field!("elementId", "t.element_id", Kind::Str),
        field!("elementInstanceKey", "t.element_instance_key", Kind::Key),
        field!("creationTime", "t.creation_time", Kind::Date),
        field!("state", "t.state", Kind::Enum(INCIDENT_STATES)),
        field!("jobKey", "t.job_key", Kind::Key),
        field!("tenantId", "t.tenant_id", Kind::Str),
    ],
};

pub static JOBS: Entity = Entity {
    name: "jobs",
    table: "job",
    key: "jobKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("jobKey", "t.key", Kind::Key),
        field!("type", "t.type", Kind::Str),
        field!("worker", "t.worker", Kind::Str),
        field!("state", "t.state", Kind::Enum(JOB_STATES)),
        field!("kind", "t.kind", Kind::Enum(JOB_KINDS)),
        field!("listenerEventType", "t.listener_event_type", Kind::Str),
        field!("retries", "t.retries", Kind::Int),
        field!("errorMessage", "t.error_message", Kind::Str),
        field!("errorCode", "t.error_code", Kind::Str),
        field!("deadline", "t.deadline", Kind::Date),
        field!("endTime", "t.end_time", Kind::Date),
        field!("customHeaders", "t.custom_headers", Kind::Json, item_only),
        field!(
            "processDefinitionKey",
            "t.process_definition_key",
            Kind::Key
        ),
        field!("processDefinitionId", "t.bpmn_process_id", Kind::Str),
        field!("processInstanceKey", "t.process_instance_key", Kind::Key),
        field!("elementId", "t.element_id", Kind::Str),
        field!("elementInstanceKey", "t.element_instance_key", Kind::Key),
        field!("tenantId", "t.tenant_id", Kind::Str),
        field!(
            "hasFailedWithRetriesLeft",
            "COALESCE(t.has_failed_with_retries_left, 0)",
            Kind::Bool
        ),
    ],
};

pub static PROCESS_DEFINITIONS: Entity = Entity {
    name: "process-definitions",
    table: "process_definition",
    key: "processDefinitionKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("processDefinitionKey", "t.key", Kind::Key),
        field!("name", "t.name", Kind::Str),
        field!("resourceName", "t.resource_name", Kind::Str),
        field!("version", "t.version", Kind::Int),
        field!("versionTag", "t.version_tag", Kind::Str),
        field!("processDefinitionId", "t.bpmn_process_id", Kind::Str),
        field!("tenantId", "t.tenant_id", Kind::Str),
        field!(
            "hasStartForm",
            "(CASE WHEN t.start_form_id IS NULL THEN 0 ELSE 1 END)",
            Kind::Bool,
            no_sort
        ),
        field!(
            "isLatestVersion",
            "(CASE WHEN t.version = (SELECT MAX(d.version) FROM process_definition d WHERE d.bpmn_process_id = t.bpmn_process_id AND d.tenant_id = t.tenant_id) THEN 1 ELSE 0 END)",
            Kind::Bool,
            filter_only
        ),
    ],
};

/// The definition's XML, apart from the search fields.
pub static PROCESS_DEFINITION_XML: Entity = Entity {
    name: "process-definitions",
    table: "process_definition",
    key: "processDefinitionKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("processDefinitionKey", "t.key", Kind::Key),
        field!("xml", "t.xml", Kind::Str),
        field!("tenantId", "t.tenant_id", Kind::Str, filter_only),
    ],
};

/// The form a process definition's start event links, apart from the search fields.
pub static PROCESS_DEFINITION_START_FORM: Entity = Entity {
    name: "process-definitions",
    table: "process_definition",
    key: "processDefinitionKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("processDefinitionKey", "t.key", Kind::Key),
        field!("formId", "t.start_form_id", Kind::Str),
        field!("bindingType", "t.start_form_binding", Kind::Str),
        field!("versionTag", "t.start_form_version_tag", Kind::Str),
        field!("deploymentKey", "t.deployment_key", Kind::Key),
        field!("tenantId", "t.tenant_id", Kind::Str),
    ],
};

/// Deployed forms (the user task and start form endpoints read them; there is no form
/// search in the API).
pub static FORMS: Entity = Entity {
    name: "forms",
    table: "form",
    key: "formKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("formKey", "t.key", Kind::Key),
        field!("formId", "t.form_id", Kind::Str),
        field!("version", "t.version", Kind::Int),
        field!("schema", "t.schema", Kind::Json),
        field!("tenantId", "t.tenant_id", Kind::Str),
        field!("versionTag", "t.version_tag", Kind::Str, filter_only),
        field!("deploymentKey", "t.deployment_key", Kind::Key, filter_only),
        field!("deleted", "COALESCE(t.deleted, 0)", Kind::Bool, filter_only),
    ],
};

pub static DECISION_DEFINITIONS: Entity = Entity {
    name: "decision-definitions",
    table: "decision_definition",
    key: "decisionDefinitionKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("decisionDefinitionKey", "t.key", Kind::Key),
        field!("decisionDefinitionId", "t.decision_id", Kind::Str),
        field!("name", "t.name", Kind::Str),
        field!("version", "t.version", Kind::Int),
        field!(
            "decisionRequirementsId",
            "t.decision_requirements_id",
            Kind::Str
        ),
        field!(
            "decisionRequirementsKey",
            "t.decision_requirements_key",
            Kind::Key
        ),
        field!("tenantId", "t.tenant_id", Kind::Str),
    ],
};

/// A decision's XML: that of its decision requirements graph.
pub static DECISION_DEFINITION_XML: Entity = Entity {
    name: "decision-definitions",
    table: "decision_definition",
    key: "decisionDefinitionKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("decisionDefinitionKey", "t.key", Kind::Key),
        field!(
            "xml",
            "(SELECT r.xml FROM decision_requirements r WHERE r.key = t.decision_requirements_key)",
            Kind::Str
        ),
        field!("tenantId", "t.tenant_id", Kind::Str, filter_only),
    ],
};

pub static DECISION_REQUIREMENTS: Entity = Entity {
    name: "decision-requirements",
    table: "decision_requirements",
    key: "decisionRequirementsKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("decisionRequirementsKey", "t.key", Kind::Key),
        field!(
            "decisionRequirementsId",
            "t.decision_requirements_id",
            Kind::Str
        ),
        field!("decisionRequirementsName", "t.name", Kind::Str),
        field!("version", "t.version", Kind::Int),
        field!("resourceName", "t.resource_name", Kind::Str),
        field!("tenantId", "t.tenant_id", Kind::Str),
    ],
};

/// A decision requirements graph's XML, apart from the search fields.
pub static DECISION_REQUIREMENTS_XML: Entity = Entity {
    name: "decision-requirements",
    table: "decision_requirements",
    key: "decisionRequirementsKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("decisionRequirementsKey", "t.key", Kind::Key),
        field!("xml", "t.xml", Kind::Str),
        field!("tenantId", "t.tenant_id", Kind::Str, filter_only),
    ],
};

pub static DECISION_INSTANCES: Entity = Entity {
    name: "decision-instances",
    table: "decision_instance",
    key: "decisionEvaluationInstanceKey",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("decisionEvaluationInstanceKey", "t.id", Kind::Str),
        field!("decisionEvaluationKey", "t.key", Kind::Key),
        field!("state", "t.state", Kind::Enum(DECISION_STATES)),
        field!("evaluationDate", "t.evaluation_date", Kind::Date),
        field!("evaluationFailure", "t.evaluation_failure", Kind::Str),
        field!(
            "decisionDefinitionId",
            "t.decision_definition_id",
            Kind::Str
        ),
        field!(
            "decisionDefinitionKey",
            "t.decision_definition_key",
            Kind::Key
        ),
        field!(
            "decisionDefinitionName",
            "t.decision_definition_name",
            Kind::Str
        ),
        field!(
            "decisionDefinitionVersion",
            "t.decision_definition_version",
            Kind::Int
        ),
        field!(
            "decisionDefinitionType",
            "t.decision_definition_type",
            Kind::Str
        ),
        field!(
            "rootDecisionDefinitionKey",
            "t.root_decision_definition_key",
            Kind::Key
        ),
        field!("result", "t.result", Kind::Str, no_sort),
        field!(
            "processDefinitionKey",
            "t.process_definition_key",
            Kind::Key
        ),
        field!("processInstanceKey", "t.process_instance_key", Kind::Key),
        field!("elementInstanceKey", "t.element_instance_key", Kind::Key),
        field!("tenantId", "t.tenant_id", Kind::Str),
        field!(
            "evaluatedInputs",
            "t.evaluated_inputs",
            Kind::Json,
            item_only
        ),
        field!("matchedRules", "t.matched_rules", Kind::Json, item_only),
    ],
};

pub static SEQUENCE_FLOWS: Entity = Entity {
    name: "sequence-flows",
    table: "sequence_flow",
    key: "sequenceFlowId",
    variable_filters: &[],
    or: false,
    fields: &[
        field!("sequenceFlowId", "t.element_id", Kind::Str),
        field!("processInstanceKey", "t.process_instance_key", Kind::Key),
        field!(
            "processDefinitionKey",
            "t.process_definition_key",
            Kind::Key
        ),
        field!("processDefinitionId", "t.bpmn_process_id", Kind::Str),
        field!("elementId", "t.element_id", Kind::Str),
        field!("tenantId", "t.tenant_id", Kind::Str),
    ],
};

pub static USER_TASKS: Entity = Entity {
    name: "user-tasks",
    table: "user_task",
    key: "userTaskKey",
    variable_filters: &[
        (
            "processInstanceVariables",
            "v.scope_key = t.process_instance_key",
        ),
        ("localVariables", "v.scope_key = t.element_instance_key"),
    ],
    or: false,
    fields: &[
        field!("userTaskKey", "t.key", Kind::Key, no_sort),
        field!("name", "t.name", Kind::Str),
        field!("state", "t.state", Kind::Enum(USER_TASK_STATES), no_sort),
        field!("assignee", "NULLIF(t.assignee, '')", Kind::Str, no_sort),
        field!("elementId", "t.element_id", Kind::Str, no_sort),
        field!(
            "candidateGroup",
            "t.candidate_groups",
            Kind::StrList,
            filter_only
        ),
        field!(
            "candidateGroups",
            "t.candidate_groups",
            Kind::StrList,
            item_only
        ),
        field!(
            "candidateUser",
            "t.candidate_users",
            Kind::StrList,
            filter_only
        ),
        field!(
            "candidateUsers",
            "t.candidate_users",
            Kind::StrList,
            item_only
        ),
        field!(
            "processDefinitionId",
            "t.bpmn_process_id",
            Kind::Str,
            no_sort
        ),
        field!("creationDate", "t.creation_date", Kind::Date),
        field!("completionDate", "t.completion_date", Kind::Date),
        field!("followUpDate", "NULLIF(t.follow_up_date, -1)", Kind::Date),
        field!("dueDate", "NULLIF(t.due_date, -1)", Kind::Date),
        field!("priority", "t.priority", Kind::Int),
        field!("tenantId", "t.tenant_id", Kind::Str, no_sort),
        field!(
            "externalFormReference",
            "t.external_form_reference",
            Kind::Str,
            item_only
        ),
        field!(
            "processDefinitionVersion",
            "t.process_definition_version",
            Kind::Int,
            item_only
        ),
        field!("customHeaders", "t.custom_headers", Kind::Json, item_only),
        field!("processName", "t.process_name", Kind::Str, item_only),
        field!("formKey", "t.form_key", Kind::Key, item_only),
        field!(
            "processDefinitionKey",
            "t.process_definition_key",
            Kind::Key,
            no_sort
        ),
        field!(
            "processInstanceKey",
            "t.process_instance_key",
            Kind::Key,
            no_sort
        ),
        field!(
            "elementInstanceKey",
            "t.element_instance_key",
            Kind::Key,
            no_sort
        ),
    ],
};

/// The entities the REST API searches, by resource name.
pub static SEARCHABLE: &[&Entity] = &[
    &PROCESS_INSTANCES,
    &ELEMENT_INSTANCES,
    &VARIABLES,
    &INCIDENTS,
    &JOBS,
    &PROCESS_DEFINITIONS,
    &DECISION_DEFINITIONS,
    &DECISION_REQUIREMENTS,
    &DECISION_INSTANCES,
    &USER_TASKS,
];
